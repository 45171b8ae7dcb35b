/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * ethdev operations: configure, info, start/stop, link, MAC filters, VLAN
 * filter, MTU, promiscuous and allmulticast modes; stats are in
 * vbr_stats.c. The steering ops change the port's state and ask
 * vbr_steer.c to sync its rules; the port RSS ops (reta, key, hash types)
 * are in vbr_steer.c too.
 */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ethdev_driver.h>
#include <rte_ether.h>

#include "rte_pmd_vbr.h"
#include "vbr.h"
#include "vbr_utils.h"

/*
 * ethdev calls this only with the VLAN filter offload on, and updates its
 * own table (vlan_filter_conf) after success; the rules follow
 * priv->vlan_ids.
 */
static int
vbr_vlan_filter_set(struct rte_eth_dev *dev, uint16_t vid, int on)
{
	struct vbr_priv *priv = dev->data->dev_private;
	uint16_t saved[VBR_MAX_VLAN_IDS], nb_saved = priv->nb_vlan_ids, i;
	int ret;

	if (vid > RTE_ETHER_MAX_VLAN_ID)
		return -EINVAL;
	for (i = 0; i < priv->nb_vlan_ids; i++)
		if (priv->vlan_ids[i] == vid)
			break;
	if (!!on == (i < priv->nb_vlan_ids))
		return 0;
	if (on && priv->nb_vlan_ids == VBR_MAX_VLAN_IDS) {
		VBR_LOG(ERR, "port %u: VLAN filter table full (%u IDs)",
			dev->data->port_id, VBR_MAX_VLAN_IDS);
		return -ENOSPC;
	}
	memcpy(saved, priv->vlan_ids, sizeof(saved));
	if (on) {
		priv->vlan_ids[priv->nb_vlan_ids++] = vid;
	} else {
		memmove(&priv->vlan_ids[i], &priv->vlan_ids[i + 1],
			(priv->nb_vlan_ids - i - 1) * sizeof(uint16_t));
		priv->nb_vlan_ids--;
	}
	ret = vbr_steer_sync(priv);
	if (ret != 0) {
		memcpy(priv->vlan_ids, saved, sizeof(saved));
		priv->nb_vlan_ids = nb_saved;
	}
	return ret;
}

/* ethdev has already stored the new offloads; it restores them on error. */
static int
vbr_vlan_offload_set(struct rte_eth_dev *dev, int mask)
{
	struct vbr_priv *priv = dev->data->dev_private;
	int ret;

	if (mask & RTE_ETH_VLAN_STRIP_MASK) {
		ret = vbr_rxq_vlan_strip_set(dev);
		if (ret != 0)
			return ret;
	}
	if (!(mask & RTE_ETH_VLAN_FILTER_MASK))
		return 0;
	return vbr_steer_sync(priv);
}

static int
vbr_dev_configure(struct rte_eth_dev *dev)
{
	int ret;

	/* The configured MTU is the wire's, as mlx5 sets its netdev's. */
	ret = vbr_port_apply_mtu(dev->data->dev_private);
	if (ret != 0)
		return ret;
	vbr_tel_write_lock();
	ret = vbr_steer_rss_configure(dev->data->dev_private);
	vbr_tel_write_unlock();
	return ret;
}

/*
 * The port's rate in Mb/s from the extended port query, whatever the link
 * state: the device's own figure where it gives one (swverbs: the wire's;
 * ibverbs: the netdev's), else the IB width times lane speed of the
 * standard fields. *up: whether the link is up. Return 0 or a positive
 * errno.
 */
static int vbr_port_rate(struct vbr_priv *priv, uint32_t *speed, bool *up);

/*
 * One fixed speed, the wire's, with the link up or down (as mlx5 reports
 * its link modes whatever the state); none known (the query fails, or the
 * netdev gives no speed while its carrier is down): 0, "autonegotiated".
 */
static uint32_t
vbr_speed_capa(struct vbr_priv *priv)
{
	uint32_t speed = 0;
	uint32_t capa;
	bool up;

	if (vbr_port_rate(priv, &speed, &up) != 0 || speed == 0)
		return RTE_ETH_LINK_SPEED_AUTONEG;
	capa = rte_eth_speed_bitflag(speed, RTE_ETH_LINK_FULL_DUPLEX);
	/* A rate with no bit of its own (e.g. 3000): say only "fixed". */
	return RTE_ETH_LINK_SPEED_FIXED | capa;
}

static int
vbr_dev_infos_get(struct rte_eth_dev *dev, struct rte_eth_dev_info *info)
{
	struct vbr_priv *priv = dev->data->dev_private;
	const struct ibv_device_attr_ex *attr = &priv->attr;
	uint32_t max_rxq, max_txq, max_desc, max_frame;

	max_rxq = attr->max_wq_type_rq != 0 ? attr->max_wq_type_rq :
		  (uint32_t)attr->orig_attr.max_qp;
	if (attr->rss_caps.max_rwq_indirection_table_size != 0)
		max_rxq = RTE_MIN(max_rxq,
				  attr->rss_caps.max_rwq_indirection_table_size);
	max_rxq = RTE_MIN(max_rxq, (uint32_t)RTE_MAX_QUEUES_PER_PORT);
	max_txq = RTE_MIN((uint32_t)attr->orig_attr.max_qp,
			  (uint32_t)RTE_MAX_QUEUES_PER_PORT);
	max_desc = RTE_MIN((uint32_t)attr->orig_attr.max_qp_wr, 32768u);
	max_desc = RTE_MIN(max_desc, (uint32_t)attr->orig_attr.max_cqe);
	info->max_rx_queues = max_rxq;
	info->max_tx_queues = max_txq;
	info->rx_desc_lim.nb_max = max_desc;
	info->rx_desc_lim.nb_min = VBR_MIN_DESC;
	info->rx_desc_lim.nb_align = 1;
	info->tx_desc_lim = info->rx_desc_lim;
	/*
	 * What the device's create_qp takes (vbr_txq_probe_limits()): a
	 * shallower ring once multi-segment Tx is configured, for its WQEs
	 * are bigger; ethdev refuses a queue setup beyond it.
	 */
	info->tx_desc_lim.nb_max =
		vbr_tx_desc_max(priv, dev->data->dev_conf.txmode.offloads);
	info->tx_desc_lim.nb_seg_max = priv->tx_max_segs;
	info->tx_desc_lim.nb_mtu_seg_max = priv->tx_max_segs;
	/* The largest frame, both ways: what the Tx burst lets through. */
	max_frame = vbr_max_frame(priv);
	info->max_rx_pktlen = max_frame;
	info->min_rx_bufsize = RTE_ETHER_MIN_LEN;
	info->min_mtu = RTE_ETHER_MIN_MTU;
	info->max_mtu = max_frame - VBR_ETH_OVERHEAD;
	info->max_mac_addrs = VBR_MAX_MAC_ADDRS;
	info->rx_offload_capa = RTE_ETH_RX_OFFLOAD_SCATTER |
				RTE_ETH_RX_OFFLOAD_VLAN_FILTER;
	info->rx_offload_capa |= vbr_rx_offload_capa(priv);
	info->rx_queue_offload_capa = vbr_rx_queue_offload_capa(priv);
	info->tx_offload_capa = vbr_tx_offload_capa(priv);
	info->flow_type_rss_offloads = VBR_RSS_OFFLOADS;
	info->hash_key_size = VBR_RSS_KEY_LEN;
	info->reta_size = vbr_rss_reta_size(priv);
	info->speed_capa = vbr_speed_capa(priv);
	info->dev_capa = RTE_ETH_DEV_CAPA_FLOW_RULE_KEEP;
	/*
	 * 256 descriptors, as the mlx5 PMD suggests for up to two queues
	 * ("minimum CPU utilization"): every posted Rx buffer and its mbuf
	 * header go cold while they wait their turn in the ring, and the
	 * deeper the ring the farther they fall (cache levels, the TLB): 5-7 %
	 * less CPU a frame than 1024 in the inline pair io-fwd case
	 * (performance.rst, Forwarding).
	 */
	info->default_rxportconf.ring_size = VBR_DEFAULT_DESC;
	info->default_txportconf.ring_size = VBR_DEFAULT_DESC;
	info->default_rxportconf.nb_queues = 1;
	info->default_txportconf.nb_queues = 1;
	return 0;
}

/* Lane rate in Mb/s of an IBV speed code; 10G for codes we do not know. */
static uint32_t
vbr_lane_speed(uint8_t active_speed)
{
	switch (active_speed) {
	case 1: return 2500;	/* SDR */
	case 2: return 5000;	/* DDR */
	case 4: return 10000;	/* QDR */
	case 8: return 10000;	/* FDR10 */
	case 16: return 14000;	/* FDR */
	case 32: return 25000;	/* EDR */
	case 64: return 50000;	/* HDR */
	case 128: return 100000; /* NDR */
	default: return 10000;
	}
}

static uint32_t
vbr_lanes(uint8_t active_width)
{
	switch (active_width) {
	case 1: return 1;
	case 2: return 4;
	case 4: return 8;
	case 8: return 12;
	case 16: return 2;
	default: return 1;
	}
}

static int
vbr_port_rate(struct vbr_priv *priv, uint32_t *speed, bool *up)
{
	struct vbr_glue_port_attr_ex pa;
	int ret;

	memset(&pa, 0, sizeof(pa));
	pa.comp_mask = VBR_GLUE_PORT_EX_STATE | VBR_GLUE_PORT_EX_ACTIVE_WIDTH |
		       VBR_GLUE_PORT_EX_ACTIVE_SPEED |
		       VBR_GLUE_PORT_EX_SPEED_MBPS;
	ret = priv->glue->query_port_ex(priv->ctx, VBR_PORT_NUM, &pa);
	if (ret == ENOSYS) {
		/* The device does not give its rate: the standard fields. */
		pa.comp_mask &= ~VBR_GLUE_PORT_EX_SPEED_MBPS;
		ret = priv->glue->query_port_ex(priv->ctx, VBR_PORT_NUM, &pa);
		pa.speed_mbps = vbr_lane_speed(pa.std.active_speed) *
				vbr_lanes(pa.std.active_width);
	}
	if (ret != 0)
		return ret;
	*speed = pa.speed_mbps;
	*up = pa.std.state == IBV_PORT_ACTIVE;
	return 0;
}

void (*vbr_link_update_hook)(struct rte_eth_dev *dev);

int
vbr_link_update(struct rte_eth_dev *dev, int wait_to_complete)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct rte_eth_link link = {
		.link_duplex = RTE_ETH_LINK_FULL_DUPLEX,
		.link_autoneg = RTE_ETH_LINK_AUTONEG,
	};
	uint32_t speed = 0;
	bool up = false;
	int ret;

	RTE_SET_USED(wait_to_complete);
	/*
	 * One update at a time, from the query to the store: else the
	 * interrupt thread's (after a port event) could land before that of
	 * a dev_start which read the port before the event, and the link
	 * would show the state before the event until the next one.
	 */
	rte_spinlock_lock(&priv->link_lock);
	ret = vbr_port_rate(priv, &speed, &up);
	if (ret != 0 && (ret == EIO || ret == ENODEV ||
			 __atomic_load_n(&priv->removed, __ATOMIC_ACQUIRE))) {
		/*
		 * The device is gone (a kernel answers EIO after a removal):
		 * its link is down, whatever was read before.
		 */
		VBR_LOG(DEBUG, "port %u: query_port_ex: %s: link down",
			dev->data->port_id, strerror(ret));
		up = false;
		speed = 0;
	} else if (ret != 0) {
		rte_spinlock_unlock(&priv->link_lock);
		VBR_LOG(ERR, "port %u: query_port_ex: %s", dev->data->port_id,
			strerror(ret));
		return -ret;
	}
	if (unlikely(vbr_link_update_hook != NULL))
		vbr_link_update_hook(dev);
	if (up && speed != 0) {
		link.link_status = RTE_ETH_LINK_UP;
		/*
		 * The wire's, as the mlx5 PMD reports its netdev's: never the
		 * pacing maximum (a device cap, above a slower link), so
		 * that ethdev refuses a queue rate the link cannot carry.
		 */
		link.link_speed = speed;
	} else {
		link.link_status = RTE_ETH_LINK_DOWN;
		link.link_speed = RTE_ETH_SPEED_NUM_NONE;
	}
	ret = rte_eth_linkstatus_set(dev, &link);
	rte_spinlock_unlock(&priv->link_lock);
	return ret;
}

/*
 * Link up/down: the device's (swverbs: the wire's) administrative state.
 * The LSC event follows from the device's port event, as for a cable.
 */
static int
vbr_dev_set_link_up(struct rte_eth_dev *dev)
{
	return vbr_port_set_link(dev->data->dev_private, true);
}

static int
vbr_dev_set_link_down(struct rte_eth_dev *dev)
{
	return vbr_port_set_link(dev->data->dev_private, false);
}

static int
vbr_dev_start(struct rte_eth_dev *dev)
{
	struct vbr_priv *priv = dev->data->dev_private;
	uint16_t i, started_tx = 0;
	int ret;

	/* A failed queue setup leaves no queue: the Rx burst would crash. */
	for (i = 0; i < dev->data->nb_rx_queues; i++) {
		if (dev->data->rx_queues[i] == NULL) {
			VBR_LOG(ERR, "port %u: rxq %u is not set up",
				dev->data->port_id, i);
			return -EINVAL;
		}
	}
	/* A deleted and re-created interface: bind the new one. */
	ret = vbr_port_rebind(priv);
	if (ret != 0)
		return ret;
	ret = vbr_port_sync_mtu(priv);
	if (ret != 0)
		return ret;
	ret = vbr_rxq_adjust_mtu(dev);
	if (ret != 0)
		return ret;
	ret = vbr_mr_start(priv);
	if (ret != 0)
		return ret;
	for (i = 0; i < dev->data->nb_tx_queues; i++) {
		if (dev->data->tx_queues[i] == NULL) {
			VBR_LOG(ERR, "port %u: txq %u is not set up",
				dev->data->port_id, i);
			ret = -EINVAL;
			goto error;
		}
		ret = vbr_txq_start(dev->data->tx_queues[i]);
		if (ret != 0)
			goto error;
		started_tx++;
	}
	ret = vbr_steer_start(priv);
	if (ret != 0)
		goto error;
	/* Queues with deferred start wait for their queue start. */
	ret = vbr_rxq_start_all(dev);
	if (ret == 0)
		ret = vbr_rx_intr_start(dev);
	if (ret != 0) {
		vbr_steer_stop(priv);
		goto error;
	}
	vbr_tel_write_lock();
	priv->started = 1;
	vbr_tel_write_unlock();
	/* ethdev copies the burst functions once this op returns. */
	dev->tx_pkt_prepare = vbr_tx_prepare;
	for (i = 0; i < dev->data->nb_tx_queues; i++)
		dev->data->tx_queue_state[i] = RTE_ETH_QUEUE_STATE_STARTED;
	for (i = 0; i < dev->data->nb_tx_queues; i++)
		if (((struct vbr_txq *)dev->data->tx_queues[i])->deferred)
			vbr_tx_queue_stop(dev, i);
	vbr_link_update(dev, 0);
	return 0;
error:
	while (started_tx > 0)
		vbr_txq_stop(dev->data->tx_queues[--started_tx]);
	return ret;
}

static int
vbr_dev_stop(struct rte_eth_dev *dev)
{
	struct vbr_priv *priv = dev->data->dev_private;
	uint16_t i;

	if (!priv->started)
		return 0;
	vbr_tel_write_lock();
	priv->started = 0;
	vbr_tel_write_unlock();
	vbr_rx_intr_stop(dev);
	vbr_steer_stop(priv);
	for (i = 0; i < dev->data->nb_tx_queues; i++) {
		if (dev->data->tx_queues[i] != NULL)
			vbr_tx_queue_stop(dev, i);
		dev->data->tx_queue_state[i] = RTE_ETH_QUEUE_STATE_STOPPED;
	}
	for (i = 0; i < dev->data->nb_rx_queues; i++)
		dev->data->rx_queue_state[i] = RTE_ETH_QUEUE_STATE_STOPPED;
	/* Frames handed between Rx queues are not delivered after a start. */
	for (i = 0; i < RTE_MAX_QUEUES_PER_PORT; i++)
		vbr_mtr_handoff_drain(priv, i);
	return 0;
}

/** Release every queue; used by close. */
void
vbr_dev_release_queues(struct rte_eth_dev *dev)
{
	uint16_t i;

	vbr_dev_stop(dev);
	for (i = 0; i < dev->data->nb_rx_queues; i++)
		vbr_rx_queue_release(dev, i);
	for (i = 0; i < dev->data->nb_tx_queues; i++)
		vbr_tx_queue_release(dev, i);
}

static int
vbr_mtu_set(struct rte_eth_dev *dev, uint16_t mtu)
{
	struct vbr_priv *priv = dev->data->dev_private;
	uint32_t max_frame = vbr_max_frame(priv);
	uint16_t i;

	if ((uint32_t)mtu + VBR_ETH_OVERHEAD > max_frame) {
		VBR_LOG(ERR, "port %u: MTU %u above the maximum %u",
			dev->data->port_id, mtu,
			max_frame - VBR_ETH_OVERHEAD);
		return -EINVAL;
	}
	/*
	 * Stopped: the queues may be set up again; dev_start checks. The
	 * wire (an af_packet interface) takes the MTU, or refuses it.
	 */
	if (!priv->started || vbr_rxq_check_mtu(dev, mtu) == 0)
		return vbr_port_set_mtu(priv, mtu);
	/*
	 * A WQE's buffers are fixed while it is posted, and the queues cannot
	 * be set up again under a running datapath. With scattered Rx the
	 * MTU fits once the port is stopped (start sets the queues up again
	 * with more buffers per slot): busy. Without it, no restart helps.
	 */
	for (i = 0; i < dev->data->nb_rx_queues; i++) {
		const struct vbr_rxq *rxq = dev->data->rx_queues[i];

		if (rxq != NULL &&
		    (rxq->offloads & RTE_ETH_RX_OFFLOAD_SCATTER))
			return -EBUSY;
	}
	return -EINVAL;
}

/*
 * A VF's or SF's netdev (the glue's port_vport()). The eswitch forwards to
 * the function only what its netdev registered, so on such a port every
 * address and mode the rules take is told to the netdev too, as the mlx5
 * PMD does on a VF or SF (and only there): addresses onto its list
 * (`bridge fdb add ... self`), promisc and allmulti as its IFF_ flags. The
 * port remembers what it put there and takes it off at close.
 */

#define VBR_VPORT_WHY 256

int
vbr_vport_init(struct vbr_priv *priv)
{
	struct rte_eth_dev *dev = priv->dev;
	char why[VBR_VPORT_WHY];
	uint8_t mac[6];
	int on = 0, ret;

	ret = priv->glue->port_vport(priv->ctx, VBR_GLUE_VPORT_QUERY, mac,
				     &on, why, sizeof(why));
	if (ret == ENOTSUP)
		return 0;	/* no eswitch in front: the rules do it all */
	if (ret != 0) {
		VBR_LOG(ERR, "%s: a VF or SF: %s", priv->ibdev_name, why);
		return -ret;
	}
	priv->vport = 1;
	priv->vport_flags0 = on;
	memcpy(priv->vport_mac0, mac, 6);
	VBR_LOG(INFO, "%s: a VF or SF: its addresses and modes go to its "
		"netdev too (needs CAP_NET_ADMIN)", priv->ibdev_name);
	/* mac= other than the netdev's: the vport must take it too. */
	if (memcmp(dev->data->mac_addrs[0].addr_bytes, mac, 6) != 0) {
		ret = priv->glue->port_vport(priv->ctx,
					     VBR_GLUE_VPORT_MAC_ADD,
					     dev->data->mac_addrs[0].addr_bytes,
					     &on, why, sizeof(why));
		if (ret == 0)
			priv->vport_mac_own |= 1u;
		else if (ret != EEXIST)
			VBR_LOG(ERR, "%s: %s", priv->ibdev_name, why);
	}
	return 0;
}

/*
 * Put @mac on the VF's netdev (unless the netdev has it already: its own
 * MAC, or listed by someone else) and set @bit of *own when the port did.
 * 0 or a negative errno, logged.
 */
static int
vbr_vport_mac_add(struct vbr_priv *priv, const struct rte_ether_addr *mac,
		  uint32_t *own, unsigned int bit)
{
	char why[VBR_VPORT_WHY];
	uint8_t m[6];
	int on = 0, ret;

	if (!priv->vport || rte_is_zero_ether_addr(mac) ||
	    memcmp(mac->addr_bytes, priv->vport_mac0, 6) == 0)
		return 0;
	memcpy(m, mac->addr_bytes, 6);
	ret = priv->glue->port_vport(priv->ctx, VBR_GLUE_VPORT_MAC_ADD, m, &on,
				     why, sizeof(why));
	if (ret == EEXIST)
		return 0;	/* someone else's: left to them */
	if (ret != 0) {
		VBR_LOG(ERR, "port %u: %s", priv->dev->data->port_id, why);
		return -ret;
	}
	*own |= 1u << bit;
	return 0;
}

/* Take @mac off the VF's netdev if the port put it there (@bit of *own). */
static void
vbr_vport_mac_del(struct vbr_priv *priv, const struct rte_ether_addr *mac,
		  uint32_t *own, unsigned int bit)
{
	char why[VBR_VPORT_WHY];
	uint8_t m[6];
	int on = 0, ret;

	if (!(*own & (1u << bit)))
		return;
	*own &= ~(1u << bit);
	memcpy(m, mac->addr_bytes, 6);
	ret = priv->glue->port_vport(priv->ctx, VBR_GLUE_VPORT_MAC_DEL, m, &on,
				     why, sizeof(why));
	if (ret != 0 && ret != ENOENT)
		VBR_LOG(ERR, "port %u: %s", priv->dev->data->port_id, why);
}

/* Set the VF's netdev's promisc or allmulti flag. 0 or -errno, logged. */
static int
vbr_vport_mode(struct vbr_priv *priv, bool promisc, int on)
{
	int op = promisc ? VBR_GLUE_VPORT_PROMISC : VBR_GLUE_VPORT_ALLMULTI;
	int f = promisc ? VBR_GLUE_VPORT_F_PROMISC : VBR_GLUE_VPORT_F_ALLMULTI;
	char why[VBR_VPORT_WHY];
	uint8_t m[6] = { 0 };
	int ret;

	if (!priv->vport)
		return 0;
	ret = priv->glue->port_vport(priv->ctx, op, m, &on, why, sizeof(why));
	if (ret != 0) {
		VBR_LOG(ERR, "port %u: %s", priv->dev->data->port_id, why);
		return -ret;
	}
	priv->vport_flags_set |= f;
	return 0;
}

void
vbr_vport_restore(struct vbr_priv *priv)
{
	struct rte_ether_addr *macs = priv->dev->data->mac_addrs;
	char why[VBR_VPORT_WHY];
	uint8_t m[6] = { 0 };
	unsigned int i;
	int on, ret;

	if (!priv->vport)
		return;
	for (i = 0; macs != NULL && i < VBR_MAX_MAC_ADDRS; i++)
		vbr_vport_mac_del(priv, &macs[i], &priv->vport_mac_own, i);
	for (i = 0; i < priv->nb_mc_addrs; i++)
		vbr_vport_mac_del(priv, &priv->mc_addrs[i],
				  &priv->vport_mc_own, i);
	if (priv->vport_flags_set & VBR_GLUE_VPORT_F_PROMISC) {
		on = !!(priv->vport_flags0 & VBR_GLUE_VPORT_F_PROMISC);
		ret = priv->glue->port_vport(priv->ctx, VBR_GLUE_VPORT_PROMISC,
					     m, &on, why, sizeof(why));
		if (ret != 0)
			VBR_LOG(ERR, "%s: %s", priv->ibdev_name, why);
	}
	if (priv->vport_flags_set & VBR_GLUE_VPORT_F_ALLMULTI) {
		on = !!(priv->vport_flags0 & VBR_GLUE_VPORT_F_ALLMULTI);
		ret = priv->glue->port_vport(priv->ctx,
					     VBR_GLUE_VPORT_ALLMULTI, m, &on,
					     why, sizeof(why));
		if (ret != 0)
			VBR_LOG(ERR, "%s: %s", priv->ibdev_name, why);
	}
	priv->vport_flags_set = 0;
}

/*
 * Set a wanted mode bit, sync, and put it back on failure. On a VF the
 * netdev's flag first: the ethdev call fails when the netdev refuses (as
 * the mlx5 PMD's does).
 */
static int
vbr_mode_set(struct vbr_priv *priv, bool promisc, int on)
{
	unsigned int old = promisc ? priv->promisc : priv->allmulti;
	int ret;

	ret = vbr_vport_mode(priv, promisc, on);
	if (ret != 0)
		return ret;
	if (promisc)
		priv->promisc = !!on;
	else
		priv->allmulti = !!on;
	ret = vbr_steer_sync(priv);
	if (ret != 0) {
		if (promisc)
			priv->promisc = old;
		else
			priv->allmulti = old;
		if (vbr_vport_mode(priv, promisc, old) != 0)
			VBR_LOG(ERR, "port %u: the netdev's flag stays %s",
				priv->dev->data->port_id, on ? "on" : "off");
	}
	return ret;
}

static int
vbr_promiscuous_enable(struct rte_eth_dev *dev)
{
	return vbr_mode_set(dev->data->dev_private, true, 1);
}

static int
vbr_promiscuous_disable(struct rte_eth_dev *dev)
{
	return vbr_mode_set(dev->data->dev_private, true, 0);
}

static int
vbr_allmulticast_enable(struct rte_eth_dev *dev)
{
	return vbr_mode_set(dev->data->dev_private, false, 1);
}

static int
vbr_allmulticast_disable(struct rte_eth_dev *dev)
{
	return vbr_mode_set(dev->data->dev_private, false, 0);
}

/*
 * ethdev stores a new address in mac_addrs only after the op succeeds: the
 * ops store it first so that the rules follow the table. On a VF the
 * netdev gets the new address first and loses the old one last.
 */
static int
vbr_mac_addr_add(struct rte_eth_dev *dev, struct rte_ether_addr *mac,
		 uint32_t index, uint32_t vmdq)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct rte_ether_addr old = dev->data->mac_addrs[index];
	uint32_t bit = 1u << index;
	uint32_t old_own = priv->vport_mac_own & bit;
	bool same = rte_is_same_ether_addr(&old, mac);
	int ret;

	RTE_SET_USED(vmdq);
	if (!same) {
		priv->vport_mac_own &= ~bit;
		ret = vbr_vport_mac_add(priv, mac, &priv->vport_mac_own,
					index);
		if (ret != 0) {
			priv->vport_mac_own |= old_own;
			return ret;
		}
	}
	dev->data->mac_addrs[index] = *mac;
	ret = vbr_steer_sync(priv);
	if (ret != 0) {
		dev->data->mac_addrs[index] = old;
		if (!same) {
			vbr_vport_mac_del(priv, mac, &priv->vport_mac_own,
					  index);
			priv->vport_mac_own |= old_own;
		}
		return ret;
	}
	if (!same && old_own != 0)
		vbr_vport_mac_del(priv, &old, &old_own, index);
	return 0;
}

static void
vbr_mac_addr_remove(struct rte_eth_dev *dev, uint32_t index)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct rte_ether_addr old = dev->data->mac_addrs[index];

	memset(&dev->data->mac_addrs[index], 0, sizeof(struct rte_ether_addr));
	if (vbr_steer_sync(priv) != 0) {
		/* The old rules stay: so does the address. */
		dev->data->mac_addrs[index] = old;
		VBR_LOG(ERR, "port %u: MAC address " RTE_ETHER_ADDR_PRT_FMT
			" kept: its rules could not be updated",
			dev->data->port_id, RTE_ETHER_ADDR_BYTES(&old));
		return;
	}
	vbr_vport_mac_del(priv, &old, &priv->vport_mac_own, index);
}

static int
vbr_mac_addr_set(struct rte_eth_dev *dev, struct rte_ether_addr *mac)
{
	return vbr_mac_addr_add(dev, mac, 0, 0);
}

/* Index of @mac in list[0 .. n), or -1. */
static int
vbr_mc_find(const struct rte_ether_addr *list, uint32_t n,
	    const struct rte_ether_addr *mac)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (rte_is_same_ether_addr(&list[i], mac))
			return (int)i;
	return -1;
}

static int
vbr_set_mc_addr_list(struct rte_eth_dev *dev, struct rte_ether_addr *list,
		     uint32_t nb)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct rte_ether_addr old[VBR_MAX_MC_ADDRS];
	uint32_t i, nb_old = priv->nb_mc_addrs;
	uint32_t own_old = priv->vport_mc_own, own = 0;
	int ret = 0, at;

	if (nb > VBR_MAX_MC_ADDRS) {
		VBR_LOG(ERR, "port %u: %u multicast addresses, at most %u",
			dev->data->port_id, nb, VBR_MAX_MC_ADDRS);
		return -ENOSPC;
	}
	for (i = 0; i < nb; i++) {
		if (!rte_is_multicast_ether_addr(&list[i])) {
			VBR_LOG(ERR, "port %u: " RTE_ETHER_ADDR_PRT_FMT
				" is not a multicast address",
				dev->data->port_id,
				RTE_ETHER_ADDR_BYTES(&list[i]));
			return -EINVAL;
		}
	}
	memcpy(old, priv->mc_addrs, sizeof(old));
	/* The VF's netdev: the new groups on (the kept ones stay). */
	for (i = 0; i < nb && ret == 0; i++) {
		at = vbr_mc_find(old, nb_old, &list[i]);
		if (at >= 0)
			own |= (own_old >> at & 1u) << i;
		else if (vbr_mc_find(list, i, &list[i]) < 0)
			ret = vbr_vport_mac_add(priv, &list[i], &own, i);
	}
	if (ret == 0) {
		for (i = 0; i < nb; i++)
			priv->mc_addrs[i] = list[i];
		priv->nb_mc_addrs = nb;
		ret = vbr_steer_sync(priv);
	}
	if (ret != 0) {
		/* Off again what this call put on; the old list stays. */
		for (i = 0; i < nb; i++)
			if (vbr_mc_find(old, nb_old, &list[i]) < 0)
				vbr_vport_mac_del(priv, &list[i], &own, i);
		memcpy(priv->mc_addrs, old, sizeof(old));
		priv->nb_mc_addrs = nb_old;
		return ret;
	}
	/* The groups left: off the netdev if the port put them there. */
	for (i = 0; i < nb_old; i++)
		if (vbr_mc_find(list, nb, &old[i]) < 0)
			vbr_vport_mac_del(priv, &old[i], &own_old, i);
	priv->vport_mc_own = own;
	return 0;
}

/* The device's firmware version, as query_device gave it at probe. */
static int
vbr_fw_version_get(struct rte_eth_dev *dev, char *fw_version, size_t size)
{
	struct vbr_priv *priv = dev->data->dev_private;
	int len;

	len = snprintf(fw_version, size, "%s", priv->attr.orig_attr.fw_ver);
	return (size_t)len + 1 > size ? len + 1 : 0;
}

static const char *
vbr_qp_state_name(enum ibv_qp_state s)
{
	static const char *const names[] = {
		[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT",
		[IBV_QPS_RTR] = "RTR", [IBV_QPS_RTS] = "RTS",
		[IBV_QPS_SQD] = "SQD", [IBV_QPS_SQE] = "SQE",
		[IBV_QPS_ERR] = "ERR",
	};

	return (unsigned int)s < RTE_DIM(names) && names[s] != NULL ?
	       names[s] : "UNKNOWN";
}

static const char *
vbr_wq_state_name(enum ibv_wq_state s)
{
	static const char *const names[] = {
		[IBV_WQS_RESET] = "RESET", [IBV_WQS_RDY] = "RDY",
		[IBV_WQS_ERR] = "ERR",
	};

	return (unsigned int)s < RTE_DIM(names) && names[s] != NULL ?
	       names[s] : "UNKNOWN";
}

/* dump_priv's QP counters: each counter of the device and its QPs. */
static void
vbr_dump_counters(FILE *f, struct vbr_priv *priv)
{
	struct vbr_glue_qp_counter *c;
	unsigned int n = 0, i, k;
	uint32_t mode = 0, mask = 0;

	c = calloc(VBR_STATS_QP_CNT_MAX, sizeof(*c));
	if (c == NULL ||
	    priv->glue->counter_get_mode(priv->ctx, VBR_PORT_NUM, &mode,
					 &mask) != 0 ||
	    priv->glue->counter_list(priv->ctx, VBR_PORT_NUM, c,
				     VBR_STATS_QP_CNT_MAX, &n) != 0) {
		fprintf(f, "  qp counters: none (the device has none)\n");
		free(c);
		return;
	}
	fprintf(f, "  qp counters: %u bound, mode %s%s%s%s\n", n,
		mode == VBR_GLUE_COUNTER_MODE_AUTO ? "auto" :
		mode == VBR_GLUE_COUNTER_MODE_MANUAL ? "manual" : "none",
		(mask & VBR_GLUE_COUNTER_MASK_QP_TYPE) != 0 ? " type" : "",
		(mask & VBR_GLUE_COUNTER_MASK_PID) != 0 ? " pid" : "",
		n > VBR_STATS_QP_CNT_MAX ? " (the first ones below)" : "");
	for (i = 0; i < RTE_MIN(n, (unsigned int)VBR_STATS_QP_CNT_MAX); i++) {
		fprintf(f, "    cntn %u: lqpn", c[i].cntn);
		for (k = 0; k < RTE_MIN(c[i].nqps,
					(uint32_t)VBR_GLUE_QP_CNT_QPS); k++)
			fprintf(f, " %u", c[i].lqpn[k]);
		fprintf(f, "\n");
	}
	free(c);
}

/*
 * ethdev's eth_dev_priv_dump (rte_eth_dev_priv_dump(), telemetry's
 * /ethdev/dump_priv,<port>): the port's verbs objects, one per line. The
 * telemetry reply holds 8 KB: lines stay short.
 */
static int
vbr_dev_priv_dump(struct rte_eth_dev *dev, FILE *f)
{
	struct vbr_priv *priv = dev->data->dev_private;
	const struct rte_devargs *da = dev->device->devargs;
	const struct vbr_mr *mr;
	uint64_t held[3], mr_bytes = 0;
	unsigned int nb_mr = 0, i;

	fprintf(f, "vbr port %u (%s): device %s port %u, backend %s",
		dev->data->port_id, dev->data->name, priv->ibdev_name,
		VBR_PORT_NUM, priv->glue->name);
	if (strcmp(priv->glue->name, "swverbs") == 0)
		fprintf(f, ", progress %s",
			vbr_glue_sw_progress_name(da != NULL ? da->args :
						  NULL));
	fprintf(f, "\n  pd handle %u, %s, %s\n",
		priv->pd != NULL ? priv->pd->handle : 0,
		priv->started ? "started" : "stopped",
		priv->isolated ? "isolated" : "not isolated");
	for (i = 0; i < dev->data->nb_rx_queues; i++) {
		const struct vbr_rxq *q = dev->data->rx_queues[i];

		if (q == NULL || q->wq == NULL) {
			fprintf(f, "  rxq %u: not set up\n", i);
			continue;
		}
		fprintf(f, "  rxq %u: wq %u (%s), cq handle %u (%d cqes), "
			"%u descriptors x %u segments, socket %d, mempool %s\n",
			i, q->wq->wq_num, vbr_wq_state_name(q->wq->state),
			q->cq->handle, q->cq->cqe, q->desc, q->segs,
			(int)q->socket,
			q->mp != NULL ? q->mp->name : "none");
	}
	fprintf(f, "  rss: hash types 0x%" PRIx64 ", reta %u entries:",
		priv->rss_hf, priv->reta_size);
	vbr_rss_dump_queues(f, priv->reta, priv->reta_size);
	fprintf(f, "\n");
	if (priv->flow_lock_init) {
		pthread_mutex_lock(&priv->flow_lock);
		vbr_rss_dump_verbs(f, priv);
		pthread_mutex_unlock(&priv->flow_lock);
	}
	for (i = 0; i < dev->data->nb_tx_queues; i++) {
		const struct vbr_txq *q = dev->data->tx_queues[i];
		uint32_t kbps = 0, burst = 0;
		uint16_t pkt = 0;

		if (q == NULL || q->qp == NULL) {
			fprintf(f, "  txq %u: not set up\n", i);
			continue;
		}
		rte_pmd_vbr_get_queue_rate_limit(dev->data->port_id, i,
						 &kbps, &burst, &pkt);
		fprintf(f, "  txq %u: qp %u (%s), cq handle %u (%d cqes), "
			"%u descriptors, rate limit %u kbit/s burst %u "
			"typical %u\n", i, q->qp->qp_num,
			vbr_qp_state_name(q->qp->state), q->cq->handle,
			q->cq->cqe, q->desc, kbps, burst, pkt);
	}
	rte_spinlock_lock(&priv->mr_lock);
	TAILQ_FOREACH(mr, &priv->mrs, next) {
		nb_mr++;
		mr_bytes += mr->ibv_mr->length;
	}
	rte_spinlock_unlock(&priv->mr_lock);
	fprintf(f, "  mrs: %u, %" PRIu64 " bytes\n", nb_mr, mr_bytes);
	vbr_steer_flow_counts(priv, held);
	fprintf(f, "  flows: %" PRIu64 " rules, %" PRIu64 " verbs flows: %"
		PRIu64 " user, %" PRIu64 " own\n", held[0],
		held[1] + held[2], held[1], held[2]);
	vbr_dump_counters(f, priv);
	return 0;
}

const struct eth_dev_ops vbr_dev_ops = {
	.dev_configure = vbr_dev_configure,
	.dev_start = vbr_dev_start,
	.dev_stop = vbr_dev_stop,
	.dev_close = vbr_dev_close,
	.dev_infos_get = vbr_dev_infos_get,
	.link_update = vbr_link_update,
	.dev_set_link_up = vbr_dev_set_link_up,
	.dev_set_link_down = vbr_dev_set_link_down,
	.promiscuous_enable = vbr_promiscuous_enable,
	.promiscuous_disable = vbr_promiscuous_disable,
	.allmulticast_enable = vbr_allmulticast_enable,
	.allmulticast_disable = vbr_allmulticast_disable,
	.mac_addr_add = vbr_mac_addr_add,
	.mac_addr_remove = vbr_mac_addr_remove,
	.mac_addr_set = vbr_mac_addr_set,
	.set_mc_addr_list = vbr_set_mc_addr_list,
	.mtu_set = vbr_mtu_set,
	.vlan_filter_set = vbr_vlan_filter_set,
	.vlan_offload_set = vbr_vlan_offload_set,
	.stats_get = vbr_stats_get,
	.stats_reset = vbr_stats_reset,
	.xstats_get = vbr_xstats_get,
	.xstats_get_names = vbr_xstats_get_names,
	.xstats_reset = vbr_stats_reset,
	.rx_queue_setup = vbr_rx_queue_setup,
	.rx_queue_release = vbr_rx_queue_release,
	.tx_queue_setup = vbr_tx_queue_setup,
	.tx_queue_release = vbr_tx_queue_release,
	.flow_ops_get = vbr_flow_ops_get,
	.mtr_ops_get = vbr_mtr_ops_get,
	.reta_update = vbr_steer_reta_update,
	.reta_query = vbr_steer_reta_query,
	.rss_hash_update = vbr_steer_rss_hash_update,
	.rss_hash_conf_get = vbr_steer_rss_hash_conf_get,
	.set_queue_rate_limit = vbr_set_queue_rate_limit,
	.tm_ops_get = vbr_tm_ops_get,
	.read_clock = vbr_read_clock,
	.fw_version_get = vbr_fw_version_get,
	.rx_queue_start = vbr_rx_queue_start,
	.rx_queue_stop = vbr_rx_queue_stop,
	.tx_queue_start = vbr_tx_queue_start,
	.tx_queue_stop = vbr_tx_queue_stop,
	.rxq_info_get = vbr_rxq_info_get,
	.txq_info_get = vbr_txq_info_get,
	.rx_burst_mode_get = vbr_rx_burst_mode_get,
	.tx_burst_mode_get = vbr_tx_burst_mode_get,
	.rx_queue_intr_enable = vbr_rx_queue_intr_enable,
	.rx_queue_intr_disable = vbr_rx_queue_intr_disable,
	.get_monitor_addr = vbr_get_monitor_addr,
	.eth_dev_priv_dump = vbr_dev_priv_dump,
};
