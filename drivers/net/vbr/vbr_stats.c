/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Stats and xstats: the queues' own counts, the device's port counters
 * (imissed, ierrors and the xstats below), all from the last reset.
 */

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ethdev_driver.h>

#include "vbr.h"
#include "vbr_utils.h"

/* Most QP counters of a port that xstats and telemetry show. */
#define VBR_STATS_QP_CNT_MAX 32

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
	/*
	 * The identity's totals: rx_wire_frames = rx_delivered +
	 * rx_out_of_buffer + rx_no_match + rx_error_completions +
	 * rx_flow_dropped (runts and rx_mtu_dropped are in the errors).
	 */
	{ "rx_wire_frames",
	  offsetof(struct vbr_glue_port_counters, rx_frames),
	  VBR_GLUE_CNT_WIRE_TOTALS },
	{ "rx_wire_bytes",
	  offsetof(struct vbr_glue_port_counters, rx_bytes),
	  VBR_GLUE_CNT_WIRE_TOTALS },
	{ "rx_delivered",
	  offsetof(struct vbr_glue_port_counters, rx_delivered),
	  VBR_GLUE_CNT_WIRE_TOTALS },
	{ "tx_wire_frames",
	  offsetof(struct vbr_glue_port_counters, tx_frames),
	  VBR_GLUE_CNT_WIRE_TOTALS },
	{ "tx_wire_bytes",
	  offsetof(struct vbr_glue_port_counters, tx_bytes),
	  VBR_GLUE_CNT_WIRE_TOTALS },
	{ "tx_error_completions",
	  offsetof(struct vbr_glue_port_counters, tx_errors),
	  VBR_GLUE_CNT_WIRE_TOTALS },
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

/*
 * QP counter xstats, last: qp_cnt<cntn>_<value> for each counter of the
 * port's device (rdma statistic qp, bound with the /vbr/ telemetry
 * commands), each value as the device names it; from the last reset of a
 * counter of that number that still counts at least as much (a counter
 * freed and made again under its number starts from 0).
 */
struct vbr_qp_cnt_base {
	uint32_t cntn;
	uint32_t nvals;
	uint64_t val[VBR_GLUE_QP_CNT_MAX];
};

/** The port's QP counters (free() them), *n of them; NULL when none. */
static struct vbr_glue_qp_counter *
vbr_qp_counters(struct vbr_priv *priv, unsigned int *n)
{
	struct vbr_glue_qp_counter *c;

	*n = 0;
	c = calloc(VBR_STATS_QP_CNT_MAX, sizeof(*c));
	if (c == NULL)
		return NULL;
	if (priv->glue->counter_list(priv->ctx, 1, c, VBR_STATS_QP_CNT_MAX,
				     n) != 0 || *n == 0) {
		free(c);
		*n = 0;
		return NULL;
	}
	*n = RTE_MIN(*n, (unsigned int)VBR_STATS_QP_CNT_MAX);
	return c;
}

/* Counter c's value k since the last reset. */
static uint64_t
vbr_qp_cnt_value(const struct vbr_priv *priv,
		 const struct vbr_glue_qp_counter *c, unsigned int k)
{
	uint64_t v = c->val[k].value;
	unsigned int i;

	for (i = 0; i < priv->nb_qp_cnt_base; i++) {
		const struct vbr_qp_cnt_base *b = &priv->qp_cnt_base[i];

		if (b->cntn == c->cntn && k < b->nvals && v >= b->val[k])
			return v - b->val[k];
	}
	return v;
}

/* Take the QP counters' values as the new base. */
static void
vbr_qp_cnt_reset(struct vbr_priv *priv)
{
	struct vbr_glue_qp_counter *c;
	struct vbr_qp_cnt_base *b = NULL;
	unsigned int n, i, k;

	c = vbr_qp_counters(priv, &n);
	if (n > 0)
		b = calloc(n, sizeof(*b));
	for (i = 0; b != NULL && i < n; i++) {
		b[i].cntn = c[i].cntn;
		b[i].nvals = c[i].nvals;
		for (k = 0; k < c[i].nvals; k++)
			b[i].val[k] = c[i].val[k].value;
	}
	free(priv->qp_cnt_base);
	priv->qp_cnt_base = b;
	priv->nb_qp_cnt_base = b != NULL ? n : 0;
	free(c);
}

void
vbr_stats_release(struct vbr_priv *priv)
{
	free(priv->qp_cnt_base);
	priv->qp_cnt_base = NULL;
	priv->nb_qp_cnt_base = 0;
}

/* Values of the QP counters c[0 .. n - 1]. */
static unsigned int
vbr_qp_cnt_nvals(const struct vbr_glue_qp_counter *c, unsigned int n)
{
	unsigned int i, v = 0;

	for (i = 0; i < n; i++)
		v += c[i].nvals;
	return v;
}

/*
 * Number of xstats: device counters, steering, the Tx queue ones, then
 * the QP counters' (*qc, *nqc: free *qc).
 */
static unsigned int
vbr_xstats_count(struct rte_eth_dev *dev, struct vbr_glue_port_counters *c,
		 unsigned int *n_dev, struct vbr_glue_qp_counter **qc,
		 unsigned int *nqc)
{
	*n_dev = vbr_xstats_dev_count(dev->data->dev_private, c);
	*qc = vbr_qp_counters(dev->data->dev_private, nqc);
	return *n_dev + VBR_XSTATS_STEER +
	       dev->data->nb_tx_queues * RTE_DIM(vbr_txq_xstats) +
	       vbr_qp_cnt_nvals(*qc, *nqc);
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
	vbr_qp_cnt_reset(priv);
	priv->vlan_drop_base = vbr_steer_vlan_dropped(priv);
	priv->handoff_freed_base = vbr_mtr_handoff_freed(priv);
	return 0;
}

int
vbr_xstats_get_names(struct rte_eth_dev *dev,
		     struct rte_eth_xstat_name *names, unsigned int size)
{
	struct vbr_glue_port_counters c;
	struct vbr_glue_qp_counter *qc;
	unsigned int n_dev, nqc, n, n_txq, i, j, k;

	n = vbr_xstats_count(dev, &c, &n_dev, &qc, &nqc);
	if (names == NULL || size < n) {
		free(qc);
		return n;
	}
	for (i = 0; i < n_dev; i++)
		snprintf(names[i].name, sizeof(names[i].name), "%s",
			 vbr_xstat_nth(&c, i)->name);
	snprintf(names[i].name, sizeof(names[i].name), "rx_vlan_filtered");
	i++;
	snprintf(names[i].name, sizeof(names[i].name), "rx_mtr_handoff_freed");
	n_txq = dev->data->nb_tx_queues * RTE_DIM(vbr_txq_xstats);
	for (i++; i < n_dev + VBR_XSTATS_STEER + n_txq; i++) {
		k = i - n_dev - VBR_XSTATS_STEER;
		snprintf(names[i].name, sizeof(names[i].name), "tx_q%u_%s",
			 k / (unsigned int)RTE_DIM(vbr_txq_xstats),
			 vbr_txq_xstats[k % RTE_DIM(vbr_txq_xstats)].name);
	}
	for (j = 0; j < nqc; j++)
		for (k = 0; k < qc[j].nvals; k++, i++)
			snprintf(names[i].name, sizeof(names[i].name),
				 "qp_cnt%u_%s", qc[j].cntn, qc[j].val[k].name);
	free(qc);
	return n;
}

int
vbr_xstats_get(struct rte_eth_dev *dev, struct rte_eth_xstat *xstats,
	       unsigned int size)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct vbr_glue_port_counters c;
	struct vbr_glue_qp_counter *qc;
	unsigned int n_dev, nqc, n, n_txq, i, j, k;

	n = vbr_xstats_count(dev, &c, &n_dev, &qc, &nqc);
	if (xstats == NULL || size < n) {
		free(qc);
		return n;
	}
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
	n_txq = dev->data->nb_tx_queues * RTE_DIM(vbr_txq_xstats);
	for (i++; i < n_dev + VBR_XSTATS_STEER + n_txq; i++) {
		const struct vbr_txq *txq;

		k = i - n_dev - VBR_XSTATS_STEER;
		txq = dev->data->tx_queues[k / RTE_DIM(vbr_txq_xstats)];
		xstats[i].id = i;
		xstats[i].value = txq == NULL ? 0 : vbr_counter(txq,
			vbr_txq_xstats[k % RTE_DIM(vbr_txq_xstats)].offset);
	}
	for (j = 0; j < nqc; j++)
		for (k = 0; k < qc[j].nvals; k++, i++) {
			xstats[i].id = i;
			xstats[i].value = vbr_qp_cnt_value(priv, &qc[j], k);
		}
	free(qc);
	return n;
}
