/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Stats and xstats: the queues' own counts, the device's port counters
 * (imissed, ierrors and the xstats below), all from the last reset.
 */

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <ethdev_driver.h>

#include "vbr.h"
#include "vbr_utils.h"

/*
 * Device port counters, the drops that no queue sees. imissed is
 * out_of_buffer; the xstats below show each of them. All count from the
 * last stats or xstats reset (cnt_base).
 */
struct vbr_xstat {
	const char *name;	/* xstat name */
	size_t offset;		/* in struct vbr_glue_port_counters */
	uint32_t bit;		/* VBR_GLUE_CNT_*: the device counts it */
};

static const struct vbr_xstat vbr_xstats[] = {
	{ "rx_out_of_buffer",
	  offsetof(struct vbr_glue_port_counters, out_of_buffer),
	  VBR_GLUE_CNT_OUT_OF_BUFFER },
	{ "rx_no_match",
	  offsetof(struct vbr_glue_port_counters, no_match),
	  VBR_GLUE_CNT_NO_MATCH },
	{ "rx_error_completions",
	  offsetof(struct vbr_glue_port_counters, rx_errors),
	  VBR_GLUE_CNT_RX_ERRORS },
	{ "rx_flow_dropped",
	  offsetof(struct vbr_glue_port_counters, dropped),
	  VBR_GLUE_CNT_DROPPED },
	{ "rx_runt_frames",
	  offsetof(struct vbr_glue_port_counters, runts),
	  VBR_GLUE_CNT_RUNTS },
	{ "tx_link_down_drops",
	  offsetof(struct vbr_glue_port_counters, tx_link_down),
	  VBR_GLUE_CNT_TX_LINK_DOWN },
	{ "rx_wire_dropped",
	  offsetof(struct vbr_glue_port_counters, wire_dropped),
	  VBR_GLUE_CNT_WIRE_DROPPED },
	{ "rx_wire_errors",
	  offsetof(struct vbr_glue_port_counters, wire_errors),
	  VBR_GLUE_CNT_WIRE_DROPPED },
	{ "rx_mtu_dropped",
	  offsetof(struct vbr_glue_port_counters, mtu_dropped),
	  VBR_GLUE_CNT_MTU_DROPPED },
};

/* Read the device counters; all zero when the device has none. */
static int
vbr_dev_counters(struct vbr_priv *priv, struct vbr_glue_port_counters *c)
{
	int ret;

	ret = priv->glue->query_port_counters(priv->ctx, c);
	if (ret != 0)
		memset(c, 0, sizeof(*c));
	return ret;
}

/* The uint64_t counter at offset in a struct of counters. */
static uint64_t
vbr_counter(const void *base, size_t offset)
{
	return *(const uint64_t *)((const char *)base + offset);
}

/*
 * Device counters shown as xstats: those the device says it counts (the
 * glue's valid bits; swverbs has them all, the ibverbs glue out_of_buffer
 * only); none when the device has no counters.
 */
static unsigned int
vbr_xstats_dev_count(struct vbr_priv *priv, struct vbr_glue_port_counters *c)
{
	unsigned int k, n = 0;

	if (vbr_dev_counters(priv, c) != 0)
		return 0;
	for (k = 0; k < RTE_DIM(vbr_xstats); k++)
		n += (c->valid & vbr_xstats[k].bit) != 0;
	return n;
}

/* The i-th device xstat among those the device counts. */
static const struct vbr_xstat *
vbr_xstat_nth(const struct vbr_glue_port_counters *c, unsigned int i)
{
	unsigned int k;

	for (k = 0; k < RTE_DIM(vbr_xstats); k++)
		if ((c->valid & vbr_xstats[k].bit) != 0 && i-- == 0)
			break;
	RTE_VERIFY(k < RTE_DIM(vbr_xstats));
	return &vbr_xstats[k];
}

/*
 * Per Tx queue xstats, after the device ones: tx_q<N>_<name>, counted by
 * the queue since the last stats or xstats reset.
 */
struct vbr_txq_xstat {
	const char *name;	/* after "tx_q<N>_" */
	size_t offset;		/* in struct vbr_txq */
};

static const struct vbr_txq_xstat vbr_txq_xstats[] = {
	{ "bad_frames", offsetof(struct vbr_txq, bad_frames) },
	{ "wqe_errors", offsetof(struct vbr_txq, wqe_errors) },
	{ "recoveries", offsetof(struct vbr_txq, recoveries) },
};

/*
 * Steering xstats, after the device ones: frames the VLAN filter dropped
 * (its drop rules bind one counters object, vbr_steer.c), and frames a
 * meter policy had handed to another Rx queue that were freed there
 * undelivered (the queue released, the port stopped: vbr_mtr.c).
 */
#define VBR_XSTATS_STEER 2

/* Number of xstats: device counters, steering, then the Tx queue ones. */
static unsigned int
vbr_xstats_count(struct rte_eth_dev *dev, struct vbr_glue_port_counters *c,
		 unsigned int *n_dev)
{
	*n_dev = vbr_xstats_dev_count(dev->data->dev_private, c);
	return *n_dev + VBR_XSTATS_STEER +
	       dev->data->nb_tx_queues * RTE_DIM(vbr_txq_xstats);
}

int
vbr_stats_get(struct rte_eth_dev *dev, struct rte_eth_stats *stats)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct vbr_glue_port_counters c;
	uint64_t down;
	uint16_t i;

	for (i = 0; i < dev->data->nb_rx_queues; i++) {
		const struct vbr_rxq *rxq = dev->data->rx_queues[i];

		if (rxq == NULL)
			continue;
		stats->ipackets += rxq->ipackets;
		stats->ibytes += rxq->ibytes;
		stats->ierrors += rxq->ierrors;
		stats->rx_nombuf += rxq->rx_nombuf;
		if (i < RTE_ETHDEV_QUEUE_STAT_CNTRS) {
			stats->q_ipackets[i] = rxq->ipackets;
			stats->q_ibytes[i] = rxq->ibytes;
			stats->q_errors[i] = rxq->ierrors;
		}
	}
	for (i = 0; i < dev->data->nb_tx_queues; i++) {
		const struct vbr_txq *txq = dev->data->tx_queues[i];

		if (txq == NULL)
			continue;
		stats->opackets += txq->opackets;
		stats->obytes += txq->obytes;
		stats->oerrors += txq->oerrors;
		if (i < RTE_ETHDEV_QUEUE_STAT_CNTRS) {
			stats->q_opackets[i] = txq->opackets;
			stats->q_obytes[i] = txq->obytes;
		}
	}
	vbr_dev_counters(priv, &c);
	/*
	 * Missed: no buffer posted, or (kernel wires) the kernel's ring full
	 * before the device took the frame.
	 */
	stats->imissed = c.out_of_buffer - priv->cnt_base.out_of_buffer +
			 c.wire_dropped - priv->cnt_base.wire_dropped;
	/*
	 * Runts, frames above the MTU, and frames the wire could not hand
	 * over: errors of the port's MAC (a frame's length), before any
	 * queue; imissed is for frames lost for want of room.
	 */
	stats->ierrors += c.runts - priv->cnt_base.runts +
			  c.mtu_dropped - priv->cnt_base.mtu_dropped +
			  c.wire_errors - priv->cnt_base.wire_errors;
	/*
	 * Frames the queues sent into a link that was down: dropped by the
	 * device, not sent (the per-queue figures cannot tell them apart).
	 */
	down = c.tx_link_down - priv->cnt_base.tx_link_down;
	down = RTE_MIN(down, stats->opackets);
	stats->opackets -= down;
	stats->oerrors += down;
	down = c.tx_link_down_bytes - priv->cnt_base.tx_link_down_bytes;
	stats->obytes -= RTE_MIN(down, stats->obytes);
	return 0;
}

int
vbr_stats_reset(struct rte_eth_dev *dev)
{
	struct vbr_priv *priv = dev->data->dev_private;
	uint16_t i;

	for (i = 0; i < dev->data->nb_rx_queues; i++) {
		struct vbr_rxq *rxq = dev->data->rx_queues[i];

		if (rxq == NULL)
			continue;
		rxq->ipackets = 0;
		rxq->ibytes = 0;
		rxq->ierrors = 0;
		rxq->rx_nombuf = 0;
	}
	for (i = 0; i < dev->data->nb_tx_queues; i++) {
		struct vbr_txq *txq = dev->data->tx_queues[i];

		if (txq == NULL)
			continue;
		txq->opackets = 0;
		txq->obytes = 0;
		txq->oerrors = 0;
		txq->bad_frames = 0;
		txq->wqe_errors = 0;
		txq->recoveries = 0;
	}
	vbr_dev_counters(priv, &priv->cnt_base);
	priv->vlan_drop_base = vbr_steer_vlan_dropped(priv);
	priv->handoff_freed_base = vbr_mtr_handoff_freed(priv);
	return 0;
}

int
vbr_xstats_get_names(struct rte_eth_dev *dev,
		     struct rte_eth_xstat_name *names, unsigned int size)
{
	struct vbr_glue_port_counters c;
	unsigned int n_dev, n = vbr_xstats_count(dev, &c, &n_dev), i;

	if (names == NULL || size < n)
		return n;
	for (i = 0; i < n_dev; i++)
		snprintf(names[i].name, sizeof(names[i].name), "%s",
			 vbr_xstat_nth(&c, i)->name);
	snprintf(names[i].name, sizeof(names[i].name), "rx_vlan_filtered");
	i++;
	snprintf(names[i].name, sizeof(names[i].name), "rx_mtr_handoff_freed");
	for (i++; i < n; i++) {
		unsigned int k = i - n_dev - VBR_XSTATS_STEER;

		snprintf(names[i].name, sizeof(names[i].name), "tx_q%u_%s",
			 k / (unsigned int)RTE_DIM(vbr_txq_xstats),
			 vbr_txq_xstats[k % RTE_DIM(vbr_txq_xstats)].name);
	}
	return n;
}

int
vbr_xstats_get(struct rte_eth_dev *dev, struct rte_eth_xstat *xstats,
	       unsigned int size)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct vbr_glue_port_counters c;
	unsigned int n_dev, n = vbr_xstats_count(dev, &c, &n_dev), i;

	if (xstats == NULL || size < n)
		return n;
	for (i = 0; i < n_dev; i++) {
		size_t off = vbr_xstat_nth(&c, i)->offset;

		xstats[i].id = i;
		xstats[i].value = vbr_counter(&c, off) -
				  vbr_counter(&priv->cnt_base, off);
	}
	xstats[i].id = i;
	xstats[i].value = vbr_steer_vlan_dropped(priv) - priv->vlan_drop_base;
	i++;
	xstats[i].id = i;
	xstats[i].value = vbr_mtr_handoff_freed(priv) -
			  priv->handoff_freed_base;
	for (i++; i < n; i++) {
		unsigned int k = i - n_dev - VBR_XSTATS_STEER;
		const struct vbr_txq *txq =
			dev->data->tx_queues[k / RTE_DIM(vbr_txq_xstats)];

		xstats[i].id = i;
		xstats[i].value = txq == NULL ? 0 : vbr_counter(txq,
			vbr_txq_xstats[k % RTE_DIM(vbr_txq_xstats)].offset);
	}
	return n;
}
