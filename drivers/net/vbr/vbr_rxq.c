/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Rx queues: a WQ and its extended CQ each. Where received traffic goes
 * (the port's hash QP over an indirection table of these WQs) is port RSS,
 * in vbr_rss.c.
 */

#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include "vbr.h"
#include "vbr_utils.h"

static void
vbr_rxq_free(struct vbr_rxq *rxq)
{
	const struct vbr_glue *glue = rxq->priv->glue;
	unsigned int i;
	int ret;

	if (rxq->wq != NULL) {
		ret = glue->destroy_wq(rxq->wq);
		if (ret != 0)
			VBR_LOG(ERR, "port %u rxq %u: destroy_wq: %s",
				rxq->port_id, rxq->queue_id, strerror(ret));
	}
	/* Events read are acknowledged: the CQ can go. */
	if (rxq->channel != NULL)
		vbr_rxq_intr_ack(rxq);
	if (rxq->cq != NULL) {
		ret = glue->destroy_cq(ibv_cq_ex_to_cq(rxq->cq));
		if (ret != 0)
			VBR_LOG(ERR, "port %u rxq %u: destroy_cq: %s",
				rxq->port_id, rxq->queue_id, strerror(ret));
	}
	if (rxq->channel != NULL) {
		ret = glue->destroy_comp_channel(rxq->channel);
		if (ret != 0)
			VBR_LOG(ERR, "port %u rxq %u: destroy_comp_channel: %s",
				rxq->port_id, rxq->queue_id, strerror(ret));
	}
	if (rxq->elts != NULL)
		for (i = 0; i < (unsigned int)rxq->desc * rxq->segs; i++)
			if (rxq->elts[i] != NULL)
				rte_pktmbuf_free_seg(rxq->elts[i]);
	for (i = 0; i < rxq->nstash; i++)
		rte_pktmbuf_free_seg(rxq->stash[i]);
	rte_free(rxq->elts);
	rte_free(rxq->wrs);
	rte_free(rxq->sges);
	rte_free(rxq);
}

void
vbr_rx_queue_release(struct rte_eth_dev *dev, uint16_t idx)
{
	struct vbr_rxq *rxq = dev->data->rx_queues[idx];

	/* Frames handed to the queue go with it: their pool may go next. */
	vbr_mtr_handoff_drain(dev->data->dev_private, idx);
	if (rxq == NULL)
		return;
	vbr_rxq_free(rxq);
	dev->data->rx_queues[idx] = NULL;
}

/*
 * The rearm_data word of a mbuf the queue hands out: data_off at the
 * headroom, refcnt 1, one segment, this port.
 */
static uint64_t
vbr_rxq_mbuf_init(uint16_t port_id)
{
	struct rte_mbuf mb = { .data_off = RTE_PKTMBUF_HEADROOM, .nb_segs = 1,
			       .port = port_id };
	uint64_t word;

	rte_mbuf_refcnt_set(&mb, 1);
	memcpy(&word, &mb.rearm_data, sizeof(word));
	return word;
}

/* Allocate buffers for every slot and post them. */
static int
vbr_rxq_post_all(struct vbr_rxq *rxq)
{
	struct ibv_recv_wr *bad;
	uint32_t n = (uint32_t)rxq->desc * rxq->segs;
	uint32_t slot, i;
	int ret;

	if (rte_pktmbuf_alloc_bulk(rxq->mp, rxq->elts, n) != 0) {
		VBR_LOG(ERR, "port %u rxq %u: cannot allocate %u mbufs from %s",
			rxq->port_id, rxq->queue_id, n, rxq->mp->name);
		return -ENOMEM;
	}
	for (slot = 0; slot < rxq->desc; slot++) {
		struct ibv_recv_wr *wr = &rxq->wrs[slot];
		struct ibv_sge *sge = &rxq->sges[slot * rxq->segs];

		for (i = 0; i < rxq->segs; i++) {
			struct rte_mbuf *m = rxq->elts[slot * rxq->segs + i];

			sge[i].addr = rte_pktmbuf_mtod(m, uintptr_t);
			sge[i].length = rte_pktmbuf_tailroom(m);
			/* A pool laid out otherwise: read buf_addr. */
			if (sge[i].addr != (uintptr_t)m + rxq->buf_off)
				rxq->buf_off = 0;
			if (vbr_mr_find(rxq->priv, &rxq->mr_cache,
					sge[i].addr, sge[i].length,
					&sge[i].lkey) != 0) {
				VBR_LOG(ERR, "port %u rxq %u: mbuf outside "
					"the registered memory of %s",
					rxq->port_id, rxq->queue_id,
					rxq->mp->name);
				return -EFAULT;
			}
		}
		wr->wr_id = slot;
		wr->sg_list = sge;
		wr->num_sge = rxq->segs;
		wr->next = slot + 1 < rxq->desc ? &rxq->wrs[slot + 1] : NULL;
	}
	ret = ibv_post_wq_recv(rxq->wq, &rxq->wrs[0], &bad);
	if (ret != 0) {
		VBR_LOG(ERR, "port %u rxq %u: post_wq_recv: %s",
			rxq->port_id, rxq->queue_id, strerror(ret));
		return -ret;
	}
	return 0;
}

/** Buffers a slot needs for the port's largest frame, or 0 if too many. */
static unsigned int
vbr_rxq_segs(struct rte_eth_dev *dev, struct rte_mempool *mp,
	     uint64_t offloads, unsigned int max_sge)
{
	uint32_t frame = dev->data->mtu + VBR_ETH_OVERHEAD;
	uint32_t room = rte_pktmbuf_data_room_size(mp) - RTE_PKTMBUF_HEADROOM;
	unsigned int segs;

	if (room == 0 || rte_pktmbuf_data_room_size(mp) <= RTE_PKTMBUF_HEADROOM)
		return 0;
	segs = (frame + room - 1) / room;
	if (segs > 1 && !(offloads & RTE_ETH_RX_OFFLOAD_SCATTER)) {
		VBR_LOG(ERR, "port %u: %u-byte frames (MTU %u) do not fit "
			"the %u-byte buffers of %s: enable "
			"RTE_ETH_RX_OFFLOAD_SCATTER or use larger mbufs",
			dev->data->port_id, frame, dev->data->mtu, room,
			mp->name);
		return 0;
	}
	if (segs > max_sge) {
		VBR_LOG(ERR, "port %u: %u-byte frames need %u buffers of %u "
			"bytes: more than the device's %u SGEs",
			dev->data->port_id, frame, segs, room, max_sge);
		return 0;
	}
	return segs;
}

/**
 * At dev_start: set up again the queues whose slots are too small for the
 * current MTU (it may have changed since their setup).
 */
int
vbr_rxq_adjust_mtu(struct rte_eth_dev *dev)
{
	uint16_t i;
	int ret;

	for (i = 0; i < dev->data->nb_rx_queues; i++) {
		struct vbr_rxq *rxq = dev->data->rx_queues[i];
		struct rte_eth_rxconf conf = { 0 };
		uint32_t room;

		if (rxq == NULL)
			continue;
		room = rte_pktmbuf_data_room_size(rxq->mp) -
		       RTE_PKTMBUF_HEADROOM;
		if ((uint32_t)dev->data->mtu + VBR_ETH_OVERHEAD <=
		    room * rxq->segs)
			continue;
		conf.offloads = rxq->offloads;
		conf.rx_deferred_start = rxq->deferred;
		ret = vbr_rx_queue_setup(dev, i, rxq->desc, rxq->socket,
					 &conf, rxq->mp);
		if (ret != 0)
			return ret;
	}
	return 0;
}

/** Check that the queues' buffers hold frames of a new MTU. */
int
vbr_rxq_check_mtu(struct rte_eth_dev *dev, uint16_t mtu)
{
	uint16_t i;

	for (i = 0; i < dev->data->nb_rx_queues; i++) {
		struct vbr_rxq *rxq = dev->data->rx_queues[i];
		uint32_t room;

		if (rxq == NULL)
			continue;
		room = rte_pktmbuf_data_room_size(rxq->mp) -
		       RTE_PKTMBUF_HEADROOM;
		if ((uint32_t)mtu + VBR_ETH_OVERHEAD > room * rxq->segs) {
			VBR_LOG(ERR, "port %u: MTU %u needs more than the %u "
				"buffers of %u bytes of rxq %u (with scatter: "
				"stop the port to resize; without: enable "
				"scatter or use larger mbufs)",
				dev->data->port_id, mtu, rxq->segs, room, i);
			return -EINVAL;
		}
	}
	return 0;
}

/* Rx checksum offloads: the three, checked in software. */
#define VBR_RX_OL_CSUM (RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | \
			RTE_ETH_RX_OFFLOAD_UDP_CKSUM | \
			RTE_ETH_RX_OFFLOAD_TCP_CKSUM)

/*
 * Rx offloads: the checksums on every device, VLAN strip
 * (IBV_RAW_PACKET_CAP_CVLAN_STRIPPING) and timestamps (a device clock,
 * hca_core_clock, with completion timestamps and ibv_query_rt_values_ex)
 * where the device reports them (query_device_ex).
 * The checksums are verified in software (vbr_rx_csum_sw()), on every
 * device: vbr receives through WQs, and no verbs capability says whether
 * a WQ's completions carry IBV_WC_IP_CSUM_OK. IBV_RAW_PACKET_CAP_IP_CSUM
 * does not: mlx5 advertises it and sets the flag for a QP's receive
 * queue only, never for a WQ (rdma-core providers/mlx5/cq.c). The flag
 * could only say GOOD anyway, never BAD (it is absent from a bad frame
 * and an unchecked one alike), and a device that set it would give other
 * answers than software for the same frame (GOOD for a UDP checksum of
 * 0, which software, as net_tap, says is NONE): so it is not read.
 */
uint64_t
vbr_rx_offload_capa(const struct vbr_priv *priv)
{
	const struct ibv_device_attr_ex *a = &priv->attr;
	uint64_t capa = VBR_RX_OL_CSUM;

	if (a->raw_packet_caps & IBV_RAW_PACKET_CAP_CVLAN_STRIPPING)
		capa |= RTE_ETH_RX_OFFLOAD_VLAN_STRIP;
	if (a->hca_core_clock != 0 && a->completion_timestamp_mask != 0 &&
	    priv->glue->query_rt_values_ex != NULL)
		capa |= RTE_ETH_RX_OFFLOAD_TIMESTAMP;
	return capa;
}

/* Per queue: VLAN strip is a WQ's flag. */
uint64_t
vbr_rx_queue_offload_capa(const struct vbr_priv *priv)
{
	return vbr_rx_offload_capa(priv) & RTE_ETH_RX_OFFLOAD_VLAN_STRIP;
}

/*
 * VLAN strip on or off on Rx queues [0, n): by IBV_WQ_ATTR_FLAGS on the WQ,
 * or, for a queue whose CQ was made without the VLAN (set up with strip
 * off; only while the port is stopped), by setting it up again with its
 * setup's other settings. 0 or a negative errno; *done: the queues done.
 */
static int
vbr_rxq_vlan_strip_apply(struct rte_eth_dev *dev, bool on, uint16_t n,
			 uint16_t *done)
{
	struct vbr_priv *priv = dev->data->dev_private;
	uint16_t i;
	int ret;

	for (i = 0; i < n; i++) {
		struct vbr_rxq *rxq = dev->data->rx_queues[i];
		struct ibv_wq_attr mod = {
			.attr_mask = IBV_WQ_ATTR_FLAGS,
			.flags = on ? IBV_WQ_FLAGS_CVLAN_STRIPPING : 0,
			.flags_mask = IBV_WQ_FLAGS_CVLAN_STRIPPING,
		};
		struct rte_eth_rxconf conf = { 0 };

		*done = i;
		if (rxq == NULL)
			continue;
		if (!on && !(rxq->offloads & RTE_ETH_RX_OFFLOAD_VLAN_STRIP))
			continue;
		if (on && !rxq->ol_cvlan) {
			conf.offloads = rxq->offloads |
					RTE_ETH_RX_OFFLOAD_VLAN_STRIP;
			conf.rx_deferred_start = rxq->deferred;
			ret = vbr_rx_queue_setup(dev, i, rxq->desc,
						 rxq->socket, &conf, rxq->mp);
			if (ret != 0)
				return ret;
			continue;
		}
		ret = priv->glue->modify_wq(rxq->wq, &mod);
		if (ret != 0) {
			VBR_LOG(ERR, "port %u rxq %u: modify_wq (VLAN strip "
				"%s): %s", dev->data->port_id, i,
				on ? "on" : "off", strerror(ret));
			return -ret;
		}
		if (on)
			rxq->offloads |= RTE_ETH_RX_OFFLOAD_VLAN_STRIP;
		else
			rxq->offloads &= ~RTE_ETH_RX_OFFLOAD_VLAN_STRIP;
	}
	*done = n;
	return 0;
}

/*
 * The port's VLAN strip setting (vlan_offload_set) onto each queue's WQ
 * (IBV_WQ_ATTR_FLAGS, at once, started or not). A queue whose CQ was made
 * without the VLAN (set up with strip off) is set up again while the port
 * is stopped; started, that is refused, before any queue changes: stop the
 * port first. On a failure the queues done are turned back (ethdev reverts
 * rxmode), so the port's queues agree with it.
 */
int
vbr_rxq_vlan_strip_set(struct rte_eth_dev *dev)
{
	struct vbr_priv *priv = dev->data->dev_private;
	bool on = (dev->data->dev_conf.rxmode.offloads &
		   RTE_ETH_RX_OFFLOAD_VLAN_STRIP) != 0;
	uint16_t i, done, undone;
	int ret;

	if (on && !(vbr_rx_offload_capa(priv) & RTE_ETH_RX_OFFLOAD_VLAN_STRIP))
		return -ENOTSUP;
	for (i = 0; on && priv->started && i < dev->data->nb_rx_queues; i++) {
		struct vbr_rxq *rxq = dev->data->rx_queues[i];

		if (rxq != NULL && !rxq->ol_cvlan) {
			VBR_LOG(ERR, "port %u rxq %u: set up without VLAN "
				"strip: stop the port to turn it on",
				dev->data->port_id, i);
			return -EBUSY;
		}
	}
	ret = vbr_rxq_vlan_strip_apply(dev, on, dev->data->nb_rx_queues,
				       &done);
	if (ret != 0)
		vbr_rxq_vlan_strip_apply(dev, !on, done, &undone);
	return ret;
}

/*
 * read_clock: the device clock now (ibv_query_rt_values_ex), in the
 * nanoseconds of the timestamp dynamic field the Rx burst fills.
 */
int
vbr_read_clock(struct rte_eth_dev *dev, uint64_t *clock)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	int ret;

	if (!(vbr_rx_offload_capa(priv) & RTE_ETH_RX_OFFLOAD_TIMESTAMP))
		return -ENOTSUP;
	ret = priv->glue->query_rt_values_ex(priv->ctx, &v);
	if (ret != 0)
		return -ret;
	*clock = vbr_ticks_to_ns((uint64_t)v.raw_clock.tv_sec * 1000000000u +
				 (uint64_t)v.raw_clock.tv_nsec,
				 (uint32_t)priv->attr.hca_core_clock);
	return 0;
}

/*
 * The queue's offloads: the CQ's completion fields and the WQ's flag they
 * need, and what the burst reads (rxq->ol). 0 or a negative errno.
 */
static int
vbr_rxq_offloads(struct vbr_rxq *rxq, uint64_t offloads,
		 struct ibv_cq_init_attr_ex *cq_attr,
		 struct ibv_wq_init_attr *wq_attr)
{
	struct vbr_priv *priv = rxq->priv;

	/* The checksums: the burst's, nothing of the CQ's. */
	if (offloads & VBR_RX_OL_CSUM)
		rxq->ol_csum = 1;
	if (offloads & RTE_ETH_RX_OFFLOAD_VLAN_STRIP) {
		rxq->ol_cvlan = 1;
		cq_attr->wc_flags |= IBV_WC_EX_WITH_CVLAN;
		wq_attr->comp_mask |= IBV_WQ_INIT_ATTR_FLAGS;
		wq_attr->create_flags |= IBV_WQ_FLAGS_CVLAN_STRIPPING;
	}
	if (offloads & RTE_ETH_RX_OFFLOAD_TIMESTAMP) {
		int ret = rte_mbuf_dyn_rx_timestamp_register(&rxq->ts_off,
							     &rxq->ts_flag);

		if (ret != 0) {
			VBR_LOG(ERR, "port %u rxq %u: timestamp dynamic "
				"field: %s", rxq->port_id, rxq->queue_id,
				rte_strerror(rte_errno));
			return -rte_errno;
		}
		rxq->ol_ts = 1;
		rxq->ts_khz = (uint32_t)priv->attr.hca_core_clock;
		cq_attr->wc_flags |= IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	}
	/* The CQ asked for the VLAN: it gives it, stripped or not. */
	rxq->ol_cvlan = (cq_attr->wc_flags & IBV_WC_EX_WITH_CVLAN) != 0;
	rxq->ol = rxq->ol_cvlan | rxq->ol_ts;
	rxq->poll_ol = priv->glue->poll_cq_burst_ol;
	return 0;
}

int
vbr_rx_queue_setup(struct rte_eth_dev *dev, uint16_t idx, uint16_t desc,
		   unsigned int socket, const struct rte_eth_rxconf *conf,
		   struct rte_mempool *mp)
{
	struct vbr_priv *priv = dev->data->dev_private;
	uint64_t offloads = conf->offloads | dev->data->dev_conf.rxmode.offloads;
	struct ibv_cq_init_attr_ex cq_attr = {
		.cqe = desc,
		/* More with offloads: vbr_rxq_offloads(). */
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_FLOW_TAG,
	};
	struct ibv_wq_init_attr wq_attr = { .wq_type = IBV_WQT_RQ };
	struct ibv_wq_attr wq_mod = {
		.attr_mask = IBV_WQ_ATTR_STATE,
		.wq_state = IBV_WQS_RDY,
	};
	struct vbr_rxq *rxq;
	unsigned int segs;
	int ret;

	if (priv->started) {
		VBR_LOG(ERR, "port %u: stop the port to set rxq %u up",
			dev->data->port_id, idx);
		return -EBUSY;
	}
	segs = vbr_rxq_segs(dev, mp, offloads, priv->attr.orig_attr.max_sge);
	if (segs == 0)
		return -EINVAL;
	vbr_rx_queue_release(dev, idx);
	ret = vbr_mr_register_mempool(priv, mp);
	if (ret != 0)
		return ret;
	rxq = rte_zmalloc_socket("vbr_rxq", sizeof(*rxq), RTE_CACHE_LINE_SIZE,
				 socket);
	if (rxq == NULL)
		return -ENOMEM;
	rxq->priv = priv;
	rxq->poll = priv->glue->poll_cq_burst;
	rxq->post_recv = priv->glue->post_wq_recv_burst;
	rxq->mp = mp;
	rxq->desc = desc;
	rxq->segs = segs;
	rxq->room = rte_pktmbuf_data_room_size(mp) - RTE_PKTMBUF_HEADROOM;
	if (!(rte_pktmbuf_priv_flags(mp) & RTE_PKTMBUF_POOL_F_PINNED_EXT_BUF))
		rxq->buf_off = sizeof(struct rte_mbuf) +
			       rte_pktmbuf_priv_size(mp) + RTE_PKTMBUF_HEADROOM;
	rxq->port_id = dev->data->port_id;
	rxq->mbuf_init = vbr_rxq_mbuf_init(rxq->port_id);
	rxq->queue_id = idx;
	rxq->socket = socket;
	rxq->offloads = offloads;
	rxq->deferred = !!conf->rx_deferred_start;
	rxq->elts = rte_calloc_socket("vbr_rxq_elts", (size_t)desc * segs,
				      sizeof(*rxq->elts), 0, socket);
	rxq->wrs = rte_calloc_socket("vbr_rxq_wrs", desc, sizeof(*rxq->wrs),
				     0, socket);
	rxq->sges = rte_calloc_socket("vbr_rxq_sges", (size_t)desc * segs,
				      sizeof(*rxq->sges), 0, socket);
	if (rxq->elts == NULL || rxq->wrs == NULL || rxq->sges == NULL) {
		ret = -ENOMEM;
		goto error;
	}
	ret = vbr_rxq_offloads(rxq, offloads, &cq_attr, &wq_attr);
	if (ret != 0)
		goto error;
	if (dev->data->dev_conf.intr_conf.rxq) {
		ret = vbr_rxq_intr_channel(rxq);
		if (ret != 0)
			goto error;
		cq_attr.channel = rxq->channel;
	}
	rxq->cq = priv->glue->create_cq_ex(priv->ctx, &cq_attr);
	if (rxq->cq == NULL) {
		ret = -errno;
		VBR_LOG(ERR, "port %u rxq %u: create_cq_ex%s: %s%s",
			rxq->port_id, idx,
			rxq->channel != NULL ? " with a completion channel" :
			"", strerror(errno),
			rxq->channel != NULL && errno == EOPNOTSUPP ?
			" (Rx interrupts need a device that runs by itself: "
			"on swverbs, progress=thread or service)" : "");
		goto error;
	}
	wq_attr.max_wr = desc;
	wq_attr.max_sge = segs;
	wq_attr.pd = priv->pd;
	wq_attr.cq = ibv_cq_ex_to_cq(rxq->cq);
	rxq->wq = priv->glue->create_wq(priv->ctx, &wq_attr);
	if (rxq->wq == NULL) {
		ret = -errno;
		VBR_LOG(ERR, "port %u rxq %u: create_wq (%u WRs, %u SGEs): %s",
			rxq->port_id, idx, desc, segs, strerror(errno));
		goto error;
	}
	ret = priv->glue->modify_wq(rxq->wq, &wq_mod);
	if (ret != 0) {
		VBR_LOG(ERR, "port %u rxq %u: modify_wq to RDY: %s",
			rxq->port_id, idx, strerror(ret));
		ret = -ret;
		goto error;
	}
	ret = vbr_rxq_post_all(rxq);
	if (ret != 0)
		goto error;
	dev->data->rx_queues[idx] = rxq;
	VBR_LOG(DEBUG, "port %u rxq %u: %u descriptors x %u segments, "
		"socket %d, mempool %s: wq %u, cq handle %u (%d cqes)",
		rxq->port_id, idx, desc, segs, (int)socket, mp->name,
		rxq->wq->wq_num, rxq->cq->handle, rxq->cq->cqe);
	return 0;
error:
	vbr_rxq_free(rxq);
	return ret;
}

/*
 * Queue start and stop. A stopped queue's WQ is in RESET with no buffer
 * posted: what it had completed and not handed out is dropped with its
 * buffers, every mbuf goes back to its pool, and the frames steered to it
 * meanwhile are dropped by the device (swverbs counts them in
 * out_of_buffer, imissed: a queue with no receive WQE). Start posts fresh
 * buffers and moves the WQ to RDY. Neither may run beside a burst on the
 * same queue (the ethdev rule for queue start and stop).
 */
static int
vbr_rxq_reset(struct vbr_rxq *rxq)
{
	struct ibv_wq_attr mod = {
		.attr_mask = IBV_WQ_ATTR_STATE,
		.wq_state = IBV_WQS_RESET,
	};
	uint64_t wr_id[32];
	uint32_t len[32];
	uint8_t status[32];
	unsigned int i;
	int ret;

	ret = rxq->priv->glue->modify_wq(rxq->wq, &mod);
	if (ret != 0) {
		VBR_LOG(ERR, "port %u rxq %u: modify_wq to RESET: %s",
			rxq->port_id, rxq->queue_id, strerror(ret));
		return -ret;
	}
	/* The device is out of the WQ: its completions are all in the CQ. */
	while (rxq->poll(rxq->cq, RTE_DIM(wr_id), wr_id, len, status,
			 NULL) > 0)
		;
	for (i = 0; i < (unsigned int)rxq->desc * rxq->segs; i++) {
		if (rxq->elts[i] != NULL)
			rte_pktmbuf_free_seg(rxq->elts[i]);
		rxq->elts[i] = NULL;
	}
	if (rxq->channel != NULL)
		vbr_rxq_intr_ack(rxq);
	rxq->stopped = 1;
	return 0;
}

static int
vbr_rxq_restart(struct vbr_rxq *rxq)
{
	struct ibv_wq_attr mod = {
		.attr_mask = IBV_WQ_ATTR_STATE,
		.wq_state = IBV_WQS_RDY,
	};
	int ret;

	ret = rxq->priv->glue->modify_wq(rxq->wq, &mod);
	if (ret != 0) {
		VBR_LOG(ERR, "port %u rxq %u: modify_wq to RDY: %s",
			rxq->port_id, rxq->queue_id, strerror(ret));
		return -ret;
	}
	ret = vbr_rxq_post_all(rxq);
	if (ret != 0) {
		/* Back to RESET, buffers freed: the queue stays stopped. */
		vbr_rxq_reset(rxq);
		return ret;
	}
	rxq->stopped = 0;
	return 0;
}

int
vbr_rx_queue_start(struct rte_eth_dev *dev, uint16_t idx)
{
	struct vbr_rxq *rxq = dev->data->rx_queues[idx];
	int ret;

	if (rxq->stopped) {
		ret = vbr_rxq_restart(rxq);
		if (ret != 0)
			return ret;
	}
	dev->data->rx_queue_state[idx] = RTE_ETH_QUEUE_STATE_STARTED;
	return 0;
}

int
vbr_rx_queue_stop(struct rte_eth_dev *dev, uint16_t idx)
{
	struct vbr_rxq *rxq = dev->data->rx_queues[idx];
	int ret;

	/* Frames a meter handed to this queue go too. */
	vbr_mtr_handoff_drain(dev->data->dev_private, idx);
	if (!rxq->stopped) {
		ret = vbr_rxq_reset(rxq);
		if (ret != 0)
			return ret;
	}
	dev->data->rx_queue_state[idx] = RTE_ETH_QUEUE_STATE_STOPPED;
	return 0;
}

/**
 * dev_start: every queue receives but those set up with
 * rx_deferred_start, which wait for rte_eth_dev_rx_queue_start().
 */
int
vbr_rxq_start_all(struct rte_eth_dev *dev)
{
	uint16_t i;
	int ret;

	for (i = 0; i < dev->data->nb_rx_queues; i++) {
		struct vbr_rxq *rxq = dev->data->rx_queues[i];

		if (rxq == NULL)
			continue;
		ret = rxq->deferred ? vbr_rx_queue_stop(dev, i) :
		      vbr_rx_queue_start(dev, i);
		if (ret != 0)
			return ret;
	}
	return 0;
}

void
vbr_rxq_info_get(struct rte_eth_dev *dev, uint16_t idx,
		 struct rte_eth_rxq_info *qinfo)
{
	struct vbr_rxq *rxq = dev->data->rx_queues[idx];

	qinfo->mp = rxq->mp;
	qinfo->scattered_rx = rxq->segs > 1;
	qinfo->nb_desc = rxq->desc;
	qinfo->rx_buf_size = rxq->room;
	qinfo->queue_state = dev->data->rx_queue_state[idx];
	qinfo->conf.offloads = rxq->offloads;
	qinfo->conf.rx_deferred_start = rxq->deferred;
	/* No free slot waits for a threshold: each burst reposts its own. */
	qinfo->conf.rx_free_thresh = 1;
	/* A frame with no buffer posted is dropped (imissed). */
	qinfo->conf.rx_drop_en = 1;
}

int
vbr_rx_burst_mode_get(struct rte_eth_dev *dev, uint16_t idx,
		      struct rte_eth_burst_mode *mode)
{
	struct vbr_rxq *rxq = dev->data->rx_queues[idx];

	mode->flags = 0;
	snprintf(mode->info, sizeof(mode->info), "Scalar, %s CQ poll%s",
		 rxq->priv->glue->name, rxq->segs > 1 ? ", scattered" : "");
	return 0;
}

/* The CQEs of the queue not polled yet, or a negative errno. */
static int
vbr_rxq_pending(struct vbr_rxq *rxq)
{
	struct vbr_glue_cq_peek peek;
	int ret;

	ret = rxq->priv->glue->cq_peek(rxq->cq, &peek);
	if (ret != 0)
		return -ret;
	return (int)RTE_MIN(peek.pending, (uint32_t)rxq->desc);
}

vbr_rx_queue_count_t
vbr_rx_queue_count(void *q)
{
	int n = vbr_rxq_pending(q);

#if VBR_ETH_QSTATS
	/* 25.11: the negative errno itself */
	return n;
#else
	if (n < 0) {
		rte_errno = -n;
		return 0;
	}
	return (uint32_t)n;
#endif
}

/*
 * A slot is DONE when a frame filled it (its CQE waits to be polled),
 * AVAIL while it is posted. A stopped queue posts none.
 */
int
vbr_rx_descriptor_status(void *q, uint16_t offset)
{
	struct vbr_rxq *rxq = q;
	int n;

	if (offset >= rxq->desc)
		return -EINVAL;
	n = vbr_rxq_pending(rxq);
	if (n < 0)
		return n;
	if (offset < n)
		return RTE_ETH_RX_DESC_DONE;
	return rxq->stopped ? RTE_ETH_RX_DESC_UNAVAIL : RTE_ETH_RX_DESC_AVAIL;
}
