/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Stats and xstats: the queues' own counts, the device's port counters
 * (imissed, ierrors and the xstats below), all from the last reset.
 */

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ethdev_driver.h>
#include <rte_telemetry.h>

#include "vbr.h"
#include "vbr_utils.h"

/* Most QP counters of a port that xstats and telemetry show. */

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
	{ "tx_mtu_dropped",
	  offsetof(struct vbr_glue_port_counters, tx_mtu_dropped),
	  VBR_GLUE_CNT_TX_MTU_DROPPED },
	{ "wire_faults",
	  offsetof(struct vbr_glue_port_counters, wire_faults),
	  VBR_GLUE_CNT_WIRE_FAULTS },
	{ "rx_wire_dropped",
	  offsetof(struct vbr_glue_port_counters, wire_dropped),
	  VBR_GLUE_CNT_WIRE_DROPPED },
	{ "rx_wire_errors",
	  offsetof(struct vbr_glue_port_counters, wire_errors),
	  VBR_GLUE_CNT_WIRE_DROPPED },
	{ "rx_mtu_dropped",
	  offsetof(struct vbr_glue_port_counters, mtu_dropped),
	  VBR_GLUE_CNT_MTU_DROPPED },
	/* Not in rx_wire_frames: the eswitch kept them from the port. */
	{ "rx_vport_dropped",
	  offsetof(struct vbr_glue_port_counters, vport_dropped),
	  VBR_GLUE_CNT_VPORT_DROPPED },
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
	uint64_t u;
	int ret;

	ret = priv->glue->query_port_counters(priv->ctx, c);
	if (ret != 0) {
		memset(c, 0, sizeof(*c));
		return ret;
	}
	/* Companions drop as unmatched what no rule would take: no_match. */
	u = RTE_MIN(vbr_steer_comp_unmatched(priv), c->dropped);
	c->no_match += u;
	c->dropped -= u;
	return 0;
}

/* The uint64_t counter at offset in a struct of counters. */
static uint64_t
vbr_counter(const void *base, size_t offset)
{
	return *(const uint64_t *)((const char *)base + offset);
}

/* In vbr_priv.xstats_valid once a read worked, even of a device with none. */
#define VBR_XSTATS_VALID_KNOWN (1u << 31)

/*
 * Device counters shown as xstats: those the device says it counts (the
 * glue's valid bits; swverbs has them all, the ibverbs glue out_of_buffer
 * only), as the first read that worked said: a read that fails later
 * (a sysfs file that cannot be read) shows them as 0, at the same ids.
 * None while no read has worked.
 */
static unsigned int
vbr_xstats_dev_count(struct vbr_priv *priv, struct vbr_glue_port_counters *c)
{
	uint32_t valid = __atomic_load_n(&priv->xstats_valid,
					 __ATOMIC_RELAXED);
	unsigned int k, n = 0;

	if (vbr_dev_counters(priv, c) == 0 &&
	    (valid & VBR_XSTATS_VALID_KNOWN) == 0) {
		valid = c->valid | VBR_XSTATS_VALID_KNOWN;
		__atomic_store_n(&priv->xstats_valid, valid,
				 __ATOMIC_RELAXED);
	}
	c->valid = valid;
	for (k = 0; k < RTE_DIM(vbr_xstats); k++)
		n += (valid & vbr_xstats[k].bit) != 0;
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
	size_t base;		/* its base there */
};

#define VBR_TXQ_XSTAT(f) \
	{ #f, offsetof(struct vbr_txq, f), offsetof(struct vbr_txq, base.f) }
static const struct vbr_txq_xstat vbr_txq_xstats[] = {
	VBR_TXQ_XSTAT(bad_frames),
	VBR_TXQ_XSTAT(wqe_errors),
	VBR_TXQ_XSTAT(recoveries),
	VBR_TXQ_XSTAT(recoveries_deferred),
	VBR_TXQ_XSTAT(stale_completions),
};
#undef VBR_TXQ_XSTAT

/*
 * Pacing xstats, after the Tx queue ones, on a device whose pacer shows
 * its counts (glue qp_pace_stats; swverbs): tx_q<N>_pace_bytes, what the
 * queue's pacer let go, and tx_q<N>_pace_full_ns, the time its bucket sat
 * full (the rate unused: the queue empty, or the pacer late by more than
 * the bucket). Over [t0, t1] the bytes are within a bucket of rate * (t1 -
 * t0 - full_ns); the pacer adds a stretch full to full_ns at its next
 * departure.
 */
static const char *const vbr_pace_xstats[] = { "pace_bytes", "pace_full_ns" };

static unsigned int
vbr_pace_xstats_count(const struct rte_eth_dev *dev)
{
	const struct vbr_priv *priv = dev->data->dev_private;

	return priv->glue->qp_pace_stats == NULL ? 0 :
	       dev->data->nb_tx_queues * RTE_DIM(vbr_pace_xstats);
}

/* A Tx queue's pacer counts since the last reset (0 without a QP). */
static void
vbr_pace_read(const struct vbr_txq *txq, struct vbr_glue_qp_pace *st)
{
	memset(st, 0, sizeof(*st));
	if (txq == NULL || txq->qp == NULL ||
	    txq->priv->glue->qp_pace_stats(txq->qp, st) != 0)
		return;
	st->bytes -= RTE_MIN(st->bytes, txq->pace_base_bytes);
	st->full_ns -= RTE_MIN(st->full_ns, txq->pace_base_full_ns);
}

/*
 * Steering xstats, after the device ones: frames the VLAN filter dropped
 * (its drop rules bind one counters object, vbr_steer.c), and frames a
 * meter policy had handed to another Rx queue that were freed there
 * undelivered (the queue released, the port stopped: vbr_mtr.c); then
 * what steering holds (vbr_steer_flow_counts(): rules, verbs flows, the
 * port's own verbs flows), not counters.
 */
#define VBR_XSTATS_STEER 5

/*
 * QP counter xstats, last: qp_cnt<cntn>_<value> for each counter of the
 * port's device (rdma statistic qp, bound with the /vbr/ telemetry
 * commands), each value as the device names it; from the last reset of a
 * counter of that number that still counts at least as much (a counter
 * freed and made again under its number starts from 0).
 */
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

/* Counter c's value k since the last reset. Called under qp_cnt_lock. */
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

/*
 * Take the QP counters' values as the new base. The base is a fixed array in
 * vbr_priv under qp_cnt_lock: xstats are read and reset from the app, the
 * telemetry and the rte_mp threads at once.
 */
static void
vbr_qp_cnt_reset(struct vbr_priv *priv)
{
	struct vbr_glue_qp_counter *c;
	unsigned int n, i, k;

	c = vbr_qp_counters(priv, &n);
	rte_spinlock_lock(&priv->qp_cnt_lock);
	for (i = 0; c != NULL && i < n; i++) {
		struct vbr_qp_cnt_base *b = &priv->qp_cnt_base[i];

		b->cntn = c[i].cntn;
		b->nvals = RTE_MIN(c[i].nvals,
				   (uint32_t)VBR_GLUE_QP_CNT_MAX);
		for (k = 0; k < b->nvals; k++)
			b->val[k] = c[i].val[k].value;
	}
	priv->nb_qp_cnt_base = c != NULL ? n : 0;
	rte_spinlock_unlock(&priv->qp_cnt_lock);
	free(c);
}

void
vbr_stats_release(struct vbr_priv *priv)
{
	rte_spinlock_lock(&priv->qp_cnt_lock);
	priv->nb_qp_cnt_base = 0;
	rte_spinlock_unlock(&priv->qp_cnt_lock);
}

/*
 * Whether qpn is one of the port's QPs: a Tx queue's or a hash QP. Never
 * 0: a ConnectX numbers every hash QP 0, of every process (vbr_rss_qpns()
 * leaves them out), so 0 tells nothing about whose a QP is.
 */
static bool
vbr_xstats_own_qp(struct rte_eth_dev *dev, const uint32_t *hash,
		  unsigned int nhash, uint32_t qpn)
{
	unsigned int i;

	if (qpn == 0)
		return false;
	for (i = 0; i < dev->data->nb_tx_queues; i++) {
		const struct vbr_txq *txq = dev->data->tx_queues[i];

		if (txq != NULL && txq->qp != NULL && txq->qp->qp_num == qpn)
			return true;
	}
	for (i = 0; i < nhash; i++)
		if (hash[i] == qpn)
			return true;
	return false;
}

/*
 * The QP counters xstats show: the device's that count one of the port's
 * QPs at least. On a NIC the device's counters are every process's (rdma
 * statistic qp lists them all), which are not this port's to show.
 */
static struct vbr_glue_qp_counter *
vbr_xstats_qp_counters(struct rte_eth_dev *dev, unsigned int *n)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct vbr_glue_qp_counter *c;
	uint32_t hash[RTE_TEL_MAX_ARRAY_ENTRIES];
	unsigned int nhash = 0, i, k, m = 0;

	c = vbr_qp_counters(priv, n);
	if (c == NULL)
		return NULL;
	if (priv->flow_lock_init) {
		pthread_mutex_lock(&priv->flow_lock);
		nhash = vbr_rss_qpns(priv, hash, RTE_DIM(hash));
		pthread_mutex_unlock(&priv->flow_lock);
		nhash = RTE_MIN(nhash, (unsigned int)RTE_DIM(hash));
	}
	for (i = 0; i < *n; i++) {
		for (k = 0; k < RTE_MIN(c[i].nqps,
					(uint32_t)VBR_GLUE_QP_CNT_QPS); k++)
			if (vbr_xstats_own_qp(dev, hash, nhash, c[i].lqpn[k]))
				break;
		if (k < RTE_MIN(c[i].nqps, (uint32_t)VBR_GLUE_QP_CNT_QPS)) {
			if (m != i)
				c[m] = c[i];
			m++;
		}
	}
	*n = m;
	return c;
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
 * Number of xstats: device counters, steering, the Tx queue ones and their
 * pacer ones (the fixed xstats, *n_fixed: their ids change with
 * nb_tx_queues only), then
 * the QP counters' (*qc, *nqc: free *qc).
 */
static unsigned int
vbr_xstats_count(struct rte_eth_dev *dev, struct vbr_glue_port_counters *c,
		 unsigned int *n_dev, unsigned int *n_fixed,
		 struct vbr_glue_qp_counter **qc, unsigned int *nqc)
{
	*n_dev = vbr_xstats_dev_count(dev->data->dev_private, c);
	*n_fixed = *n_dev + VBR_XSTATS_STEER +
		   dev->data->nb_tx_queues * RTE_DIM(vbr_txq_xstats) +
		   vbr_pace_xstats_count(dev);
	*qc = vbr_xstats_qp_counters(dev, nqc);
	return *n_fixed + vbr_qp_cnt_nvals(*qc, *nqc);
}

/*
 * stats_get's counters; the per-queue ones into *qstats (NULL: none), which
 * is stats itself before 25.11 (vbr_compat.h).
 */
int
vbr_stats_fill(struct rte_eth_dev *dev, struct rte_eth_stats *stats,
	       struct vbr_eth_qstats *qstats)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct vbr_glue_port_counters c;
	uint64_t down, pk, by, er;
	uint16_t i;

	for (i = 0; i < dev->data->nb_rx_queues; i++) {
		const struct vbr_rxq *rxq = dev->data->rx_queues[i];

		if (rxq == NULL)
			continue;
		pk = vbr_qcount(&rxq->ipackets, &rxq->base.ipackets);
		by = vbr_qcount(&rxq->ibytes, &rxq->base.ibytes);
		er = vbr_qcount(&rxq->ierrors, &rxq->base.ierrors);
		stats->ipackets += pk;
		stats->ibytes += by;
		stats->ierrors += er;
		stats->rx_nombuf += vbr_qcount(&rxq->rx_nombuf,
					       &rxq->base.rx_nombuf);
		if (qstats != NULL && i < RTE_ETHDEV_QUEUE_STAT_CNTRS) {
			qstats->q_ipackets[i] = pk;
			qstats->q_ibytes[i] = by;
			qstats->q_errors[i] = er;
		}
	}
	for (i = 0; i < dev->data->nb_tx_queues; i++) {
		const struct vbr_txq *txq = dev->data->tx_queues[i];

		if (txq == NULL)
			continue;
		pk = vbr_qcount(&txq->opackets, &txq->base.opackets);
		by = vbr_qcount(&txq->obytes, &txq->base.obytes);
		stats->opackets += pk;
		stats->obytes += by;
		stats->oerrors += vbr_qcount(&txq->oerrors,
					     &txq->base.oerrors);
		if (qstats != NULL && i < RTE_ETHDEV_QUEUE_STAT_CNTRS) {
			qstats->q_opackets[i] = pk;
			qstats->q_obytes[i] = by;
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
	/* The same for frames longer than the link's MTU (a port drop). */
	down = c.tx_mtu_dropped - priv->cnt_base.tx_mtu_dropped;
	down = RTE_MIN(down, stats->opackets);
	stats->opackets -= down;
	stats->oerrors += down;
	down = c.tx_mtu_dropped_bytes - priv->cnt_base.tx_mtu_dropped_bytes;
	stats->obytes -= RTE_MIN(down, stats->obytes);
	return 0;
}

#if VBR_ETH_QSTATS
int
vbr_stats_get(struct rte_eth_dev *dev, struct rte_eth_stats *stats,
	      struct eth_queue_stats *qstats)
{
	return vbr_stats_fill(dev, stats, qstats);
}
#else
int
vbr_stats_get(struct rte_eth_dev *dev, struct rte_eth_stats *stats)
{
	return vbr_stats_fill(dev, stats, stats);
}
#endif

int
vbr_stats_reset(struct rte_eth_dev *dev)
{
	struct vbr_priv *priv = dev->data->dev_private;
	uint16_t i;

	/*
	 * The queues' counters are their lcores' alone: a reset takes their
	 * values as the base the reads subtract. Zeroing them from here could
	 * be undone by an add in flight on the lcore (its load before the
	 * zero, its store after).
	 */
#define VBR_TAKE(q, f) __atomic_store_n(&(q)->base.f, \
	__atomic_load_n(&(q)->f, __ATOMIC_RELAXED), __ATOMIC_RELAXED)
	for (i = 0; i < dev->data->nb_rx_queues; i++) {
		struct vbr_rxq *rxq = dev->data->rx_queues[i];

		if (rxq == NULL)
			continue;
		VBR_TAKE(rxq, ipackets);
		VBR_TAKE(rxq, ibytes);
		VBR_TAKE(rxq, ierrors);
		VBR_TAKE(rxq, rx_nombuf);
	}
	for (i = 0; i < dev->data->nb_tx_queues; i++) {
		struct vbr_txq *txq = dev->data->tx_queues[i];

		if (txq == NULL)
			continue;
		VBR_TAKE(txq, opackets);
		VBR_TAKE(txq, obytes);
		VBR_TAKE(txq, oerrors);
		VBR_TAKE(txq, bad_frames);
		VBR_TAKE(txq, wqe_errors);
		VBR_TAKE(txq, recoveries);
		VBR_TAKE(txq, recoveries_deferred);
		VBR_TAKE(txq, stale_completions);
		if (priv->glue->qp_pace_stats != NULL && txq->qp != NULL) {
			struct vbr_glue_qp_pace ps = { 0 };

			priv->glue->qp_pace_stats(txq->qp, &ps);
			txq->pace_base_bytes = ps.bytes;
			txq->pace_base_full_ns = ps.full_ns;
		}
	}
#undef VBR_TAKE
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
	unsigned int n_dev, n_fixed, nqc, n, n_txq, i, j, k;

	n = vbr_xstats_count(dev, &c, &n_dev, &n_fixed, &qc, &nqc);
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
	snprintf(names[++i].name, sizeof(names[i].name), "flow_rules");
	snprintf(names[++i].name, sizeof(names[i].name), "flow_verbs_flows");
	snprintf(names[++i].name, sizeof(names[i].name),
		 "flow_own_verbs_flows");
	n_txq = dev->data->nb_tx_queues * RTE_DIM(vbr_txq_xstats);
	for (i++; i < n_dev + VBR_XSTATS_STEER + n_txq; i++) {
		k = i - n_dev - VBR_XSTATS_STEER;
		snprintf(names[i].name, sizeof(names[i].name), "tx_q%u_%s",
			 k / (unsigned int)RTE_DIM(vbr_txq_xstats),
			 vbr_txq_xstats[k % RTE_DIM(vbr_txq_xstats)].name);
	}
	for (k = 0; k < vbr_pace_xstats_count(dev); k++, i++)
		snprintf(names[i].name, sizeof(names[i].name), "tx_q%u_%s",
			 k / (unsigned int)RTE_DIM(vbr_pace_xstats),
			 vbr_pace_xstats[k % RTE_DIM(vbr_pace_xstats)]);
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
	unsigned int n_dev, n_fixed, nqc, n, n_txq, i, j, k;
	struct vbr_glue_qp_pace ps = { 0 };
	uint64_t held[3];

	n = vbr_xstats_count(dev, &c, &n_dev, &n_fixed, &qc, &nqc);
	/*
	 * A caller sized the array from xstats_get_names: a QP counter
	 * bound since then must not make this get fail (ethdev would then
	 * fill nothing, rte_eth_xstats_get_by_id() read no value), so with
	 * room for the fixed xstats, the QP counters' fill what is left,
	 * at their ids in the names of now.
	 */
	if (xstats == NULL || size < n_fixed) {
		free(qc);
		return n;
	}
	n = RTE_MIN(n, size);
	for (i = 0; i < n_dev; i++) {
		size_t off = vbr_xstat_nth(&c, i)->offset;
		uint64_t v = vbr_counter(&c, off);
		uint64_t b = vbr_counter(&priv->cnt_base, off);

		xstats[i].id = i;
		/* 0 while the device cannot be read (vbr_dev_counters()) */
		xstats[i].value = v >= b ? v - b : 0;
	}
	xstats[i].id = i;
	xstats[i].value = vbr_steer_vlan_dropped(priv) - priv->vlan_drop_base;
	i++;
	xstats[i].id = i;
	xstats[i].value = vbr_mtr_handoff_freed(priv) -
			  priv->handoff_freed_base;
	vbr_steer_flow_counts(priv, held);
	for (k = 0; k < RTE_DIM(held); k++) {
		i++;
		xstats[i].id = i;
		xstats[i].value = held[k];
	}
	n_txq = dev->data->nb_tx_queues * RTE_DIM(vbr_txq_xstats);
	for (i++; i < n_dev + VBR_XSTATS_STEER + n_txq; i++) {
		const struct vbr_txq *txq;

		const struct vbr_txq_xstat *x;

		k = i - n_dev - VBR_XSTATS_STEER;
		txq = dev->data->tx_queues[k / RTE_DIM(vbr_txq_xstats)];
		x = &vbr_txq_xstats[k % RTE_DIM(vbr_txq_xstats)];
		xstats[i].id = i;
		xstats[i].value = txq == NULL ? 0 : vbr_qcount(
			(const uint64_t *)((const char *)txq + x->offset),
			(const uint64_t *)((const char *)txq + x->base));
	}
	for (k = 0; k < vbr_pace_xstats_count(dev); k++, i++) {
		if (k % RTE_DIM(vbr_pace_xstats) == 0)
			vbr_pace_read(dev->data->tx_queues[k /
				      RTE_DIM(vbr_pace_xstats)], &ps);
		xstats[i].id = i;
		xstats[i].value = k % RTE_DIM(vbr_pace_xstats) == 0 ?
				  ps.bytes : ps.full_ns;
	}
	rte_spinlock_lock(&priv->qp_cnt_lock);
	for (j = 0; j < nqc; j++)
		for (k = 0; k < qc[j].nvals && i < n; k++, i++) {
			xstats[i].id = i;
			xstats[i].value = vbr_qp_cnt_value(priv, &qc[j], k);
		}
	rte_spinlock_unlock(&priv->qp_cnt_lock);
	free(qc);
	return n;
}

/*
 * Telemetry under /vbr/, registered once per process (at load), for
 * dpdk-telemetry.py and a vbr-stat tool that speaks "rdma statistic":
 *
 *   /vbr/ports				{<port>: "<ifname>/<port>"} of the
 *					  vbr ports
 *   /vbr/port,<port>			{ifname, port, ethdev_port, name,
 *					  backend}
 *   /vbr/port_counters,<port>		{ifname, port, <counter>: value...}
 *   /vbr/qp_mode,<port>		{ifname, port, mode, criteria}
 *   /vbr/qp_counters,<port>		{ifname, port, mode, criteria,
 *					  cntn: [...]}
 *   /vbr/qp_counter,<port>,<cntn>	{ifname, port, cntn, mode, criteria,
 *					  qp_type, pid, comm, <value>: n...,
 *					  lqpn: [...]}
 *   /vbr/qps,<port>			{ifname, port, txq_lqpn: [by queue],
 *					  hash_lqpn: [...]}
 *   /vbr/mrs,<port>			{ifname, port, mrn: [...]}
 *   /vbr/mr,<port>,<mrn>		{ifname, port, mrn, <value>: n...}
 *   /vbr/qp_set_auto,<port>,<crit>	crit: off, type, pid, type,pid
 *   /vbr/qp_bind,<port>,<lqpn>[,<cntn>]	{ifname, port, cntn, lqpn}
 *   /vbr/qp_unbind,<port>,<cntn>[,<lqpn>]	all of cntn's QPs without lqpn
 *
 * <port> is the ethdev port id; ifname and port are the verbs device and
 * its port number, as rdma's "link DEV/PORT". A request that fails answers
 * {error: <errno name>, errno: <n>, message: <strerror>, what}, and
 * extack: the kernel's reason where the kernel gives one, for a tool's
 * error lines. Values are the device's, never reset.
 * (22.11's telemetry nests one level only: an array in a dict, no dict in
 * an array; hence one request per port and per counter.)
 *
 * The handlers, and the rte_mp action (vbr_mp.c), run on EAL's telemetry
 * and multi-process threads while the application closes, stops or
 * reconfigures a port. They reach a port only through vbr_tel_live[],
 * read under vbr_tel_lock's read side: probe publishes a port there once
 * it is whole and close takes it out first, both under the write side,
 * so that once close goes on to free the queues, QPs and dev_private no
 * handler holds the port. A handler reads the queue arrays only while the
 * port is started, and stop clears that under the write side: ethdev
 * reconfigures and sets up (frees) queues only on a stopped port.
 */

#define VBR_TEL_PREFIX "/vbr/"

/* Handlers in, close/stop/configure out (the comment above). */
static pthread_rwlock_t vbr_tel_lock = PTHREAD_RWLOCK_INITIALIZER;
/* The ports handlers may use, by ethdev port id: their dev_private. */
static struct vbr_priv *vbr_tel_live[RTE_MAX_ETHPORTS];

void
vbr_tel_write_lock(void)
{
	pthread_rwlock_wrlock(&vbr_tel_lock);
}

void
vbr_tel_write_unlock(void)
{
	pthread_rwlock_unlock(&vbr_tel_lock);
}

/** Probe: the port is whole; handlers may use it. */
void
vbr_tel_port_add(struct rte_eth_dev *dev)
{
	vbr_tel_write_lock();
	vbr_tel_live[dev->data->port_id] = dev->data->dev_private;
	vbr_tel_write_unlock();
}

/** Close, first: no handler uses the port any more once this returns. */
void
vbr_tel_port_del(struct rte_eth_dev *dev)
{
	vbr_tel_write_lock();
	vbr_tel_live[dev->data->port_id] = NULL;
	vbr_tel_write_unlock();
}

/*
 * A handler's hold on port_id: the port, read-locked (vbr_tel_put() it),
 * or NULL, nothing held, when it is not a live vbr port of this process.
 */
struct rte_eth_dev *
vbr_tel_get(uint16_t port_id)
{
	if (port_id >= RTE_MAX_ETHPORTS)
		return NULL;
	pthread_rwlock_rdlock(&vbr_tel_lock);
	if (vbr_tel_live[port_id] == NULL) {
		pthread_rwlock_unlock(&vbr_tel_lock);
		return NULL;
	}
	return &rte_eth_devices[port_id];
}

void
vbr_tel_put(void)
{
	pthread_rwlock_unlock(&vbr_tel_lock);
}

/*
 * Parameters are parsed strictly: each field a decimal number (digits
 * only, nothing after them) or a keyword, fields separated by single
 * commas, no empty field, nothing after the last one ("/vbr/port,0,"
 * and "/vbr/ports,5" are refused). *rest is left on the comma before the
 * next field, or on the terminating NUL: a handler takes the next field
 * with vbr_tel_u32() and checks that *rest is "" at the end. (DPDK's
 * telemetry drops a comma right after the command: "/vbr/ports," reaches
 * the handler as no parameters, as "/vbr/ports" does.)
 */

/* A decimal field at p, up to ',' or the end: 0 and *v, or -1. */
static int
vbr_tel_num(const char *p, unsigned long max, unsigned long *v,
	    const char **end)
{
	char *e;

	if (*p < '0' || *p > '9')
		return -1;
	errno = 0;
	*v = strtoul(p, &e, 10);
	if (errno != 0 || *v > max || (*e != '\0' && *e != ','))
		return -1;
	*end = e;
	return 0;
}

/* The vbr port named by the first field of params, or NULL. */
static struct rte_eth_dev *
vbr_tel_dev(const char *params, const char **rest)
{
	unsigned long v;

	if (params == NULL ||
	    vbr_tel_num(params, RTE_MAX_ETHPORTS - 1, &v, rest) != 0)
		return NULL;
	/* the handler holds the read side (vbr_tel_handler) */
	return vbr_tel_live[v] != NULL ? &rte_eth_devices[v] : NULL;
}

/* The next field of rest, a u32: 0 and *v, or -1. */
static int
vbr_tel_u32(const char **rest, uint32_t *v)
{
	unsigned long x;

	if (**rest != ',' || vbr_tel_num(*rest + 1, UINT32_MAX, &x, rest) != 0)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

/* An error reply: the errno's name and text, what failed. */
static int
vbr_tel_error(struct rte_tel_data *d, int err, const char *what)
{
	const char *name = strerrorname_np(err);

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "error", name != NULL ? name : "?");
	rte_tel_data_add_dict_int(d, "errno", err);
	rte_tel_data_add_dict_string(d, "message", strerror(err));
	rte_tel_data_add_dict_string(d, "what", what);
	return 0;
}

/*
 * An error reply of a change (set auto mode, bind, unbind), with a hint
 * where the errno is the kernel's way of saying a capability is missing:
 * RDMA netlink takes changes only from CAP_NET_ADMIN (EPERM), and binds a
 * raw packet QP (every QP of vbr's) only for CAP_NET_RAW, answering
 * ENOENT without it (core/counters.c), as for a QP it does not have.
 */
static int
vbr_tel_change_error(struct rte_tel_data *d, int err, const char *what)
{
	vbr_tel_error(d, err, what);
	if (err == EPERM)
		rte_tel_data_add_dict_string(d, "hint",
			"changing QP counters needs CAP_NET_ADMIN "
			"(the kernel's RDMA netlink)");
	else if (err == ENOENT && strcmp(what, "bind") == 0)
		rte_tel_data_add_dict_string(d, "hint",
			"no such QP on the port, or no CAP_NET_RAW: a raw "
			"packet QP binds only with it");
	return 0;
}

static const char *
vbr_tel_mode_name(uint32_t mode)
{
	switch (mode) {
	case VBR_GLUE_COUNTER_MODE_AUTO:
		return "auto";
	case VBR_GLUE_COUNTER_MODE_MANUAL:
		return "manual";
	default:
		return "none";
	}
}

/* rdma's criteria names: "type", "pid", "type,pid"; "" for none. */
static const char *
vbr_tel_crit_name(uint32_t mask)
{
	static const char *const names[] = { "", "type", "pid", "type,pid" };

	return names[mask & 3];
}

static const char *
vbr_tel_qp_type(uint32_t t)
{
	switch (t) {
	case IBV_QPT_RC:
		return "RC";
	case IBV_QPT_UC:
		return "UC";
	case IBV_QPT_UD:
		return "UD";
	case IBV_QPT_RAW_PACKET:
		return "RAW_PACKET";
	case IBV_QPT_XRC_SEND:
		return "XRC_INI";
	case IBV_QPT_XRC_RECV:
		return "XRC_TGT";
	default:
		return "UNKNOWN";
	}
}

/* Start a port's reply: the dict with ifname and port. */
static void
vbr_tel_head(struct rte_tel_data *d, const struct vbr_priv *priv)
{
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "ifname", priv->ibdev_name);
	rte_tel_data_add_dict_int(d, "port", 1);
}

static int
vbr_tel_ports(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char key[8], link[80];
	uint16_t id;

	RTE_SET_USED(cmd);
	if (params != NULL && *params != '\0')
		return vbr_tel_error(d, EINVAL, "usage: no parameters");
	rte_tel_data_start_dict(d);
	for (id = 0; id < RTE_MAX_ETHPORTS; id++) {
		const struct vbr_priv *priv = vbr_tel_live[id];

		if (priv == NULL)
			continue;
		snprintf(key, sizeof(key), "%u", id);
		snprintf(link, sizeof(link), "%s/1", priv->ibdev_name);
		rte_tel_data_add_dict_string(d, key, link);
	}
	return 0;
}

static int
vbr_tel_port(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct rte_eth_dev *dev;
	struct vbr_priv *priv;
	const char *rest;

	RTE_SET_USED(cmd);
	dev = vbr_tel_dev(params, &rest);
	if (dev == NULL || *rest != '\0')
		return vbr_tel_error(d, EINVAL, "usage: <port>");
	priv = dev->data->dev_private;
	vbr_tel_head(d, priv);
	rte_tel_data_add_dict_int(d, "ethdev_port", dev->data->port_id);
	rte_tel_data_add_dict_string(d, "name", dev->data->name);
	rte_tel_data_add_dict_string(d, "backend", priv->glue->name);
	return 0;
}

static int
vbr_tel_port_counters(const char *cmd, const char *params,
		      struct rte_tel_data *d)
{
	struct vbr_glue_port_counters c;
	struct rte_eth_dev *dev;
	struct vbr_priv *priv;
	const char *rest;
	unsigned int k;
	int ret;

	RTE_SET_USED(cmd);
	dev = vbr_tel_dev(params, &rest);
	if (dev == NULL || *rest != '\0')
		return vbr_tel_error(d, EINVAL, "usage: <port>");
	priv = dev->data->dev_private;
	ret = priv->glue->query_port_counters(priv->ctx, &c);
	if (ret != 0)
		return vbr_tel_error(d, ret, "query_port_counters");
	vbr_tel_head(d, priv);
	for (k = 0; k < RTE_DIM(vbr_xstats); k++)
		if ((c.valid & vbr_xstats[k].bit) != 0)
			rte_tel_data_add_dict_uint(d, vbr_xstats[k].name,
				vbr_counter(&c, vbr_xstats[k].offset));
	return 0;
}

/* The reply's head and mode; else an error reply and its errno (> 0). */
static int
vbr_tel_mode_head(struct rte_tel_data *d, struct vbr_priv *priv)
{
	uint32_t mode, mask;
	int ret;

	ret = priv->glue->counter_get_mode(priv->ctx, 1, &mode, &mask);
	if (ret != 0) {
		vbr_tel_error(d, ret, "get counter mode");
		return ret;
	}
	vbr_tel_head(d, priv);
	rte_tel_data_add_dict_string(d, "mode", vbr_tel_mode_name(mode));
	rte_tel_data_add_dict_string(d, "criteria", vbr_tel_crit_name(mask));
	return 0;
}

static int
vbr_tel_qp_mode(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct rte_eth_dev *dev;
	const char *rest;

	RTE_SET_USED(cmd);
	dev = vbr_tel_dev(params, &rest);
	if (dev == NULL || *rest != '\0')
		return vbr_tel_error(d, EINVAL, "usage: <port>");
	vbr_tel_mode_head(d, dev->data->dev_private);
	return 0;
}

static int
vbr_tel_qp_counters(const char *cmd, const char *params,
		    struct rte_tel_data *d)
{
	struct vbr_glue_qp_counter *qc;
	struct rte_eth_dev *dev;
	struct rte_tel_data *a;
	const char *rest;
	unsigned int n, i;

	RTE_SET_USED(cmd);
	dev = vbr_tel_dev(params, &rest);
	if (dev == NULL || *rest != '\0')
		return vbr_tel_error(d, EINVAL, "usage: <port>");
	if (vbr_tel_mode_head(d, dev->data->dev_private) != 0)
		return 0;	/* the error reply, nothing added to it */
	a = rte_tel_data_alloc();
	if (a == NULL)
		return -ENOMEM;
	rte_tel_data_start_array(a, RTE_TEL_UINT_VAL);
	qc = vbr_qp_counters(dev->data->dev_private, &n);
	for (i = 0; i < n; i++)
		rte_tel_data_add_array_uint(a, qc[i].cntn);
	free(qc);
	rte_tel_data_add_dict_container(d, "cntn", a, 0);
	return 0;
}

static int
vbr_tel_qp_counter(const char *cmd, const char *params,
		   struct rte_tel_data *d)
{
	const struct vbr_glue_qp_counter *c = NULL;
	struct vbr_glue_qp_counter *qc;
	struct rte_eth_dev *dev;
	struct rte_tel_data *a;
	const char *rest;
	unsigned int n, i;
	uint32_t cntn;

	RTE_SET_USED(cmd);
	dev = vbr_tel_dev(params, &rest);
	if (dev == NULL || vbr_tel_u32(&rest, &cntn) != 0 || *rest != '\0')
		return vbr_tel_error(d, EINVAL, "usage: <port>,<cntn>");
	qc = vbr_qp_counters(dev->data->dev_private, &n);
	for (i = 0; i < n; i++)
		if (qc[i].cntn == cntn)
			c = &qc[i];
	if (c == NULL) {
		free(qc);
		return vbr_tel_error(d, ENOENT, "no such counter");
	}
	a = rte_tel_data_alloc();
	if (a == NULL) {
		free(qc);
		return -ENOMEM;
	}
	vbr_tel_head(d, dev->data->dev_private);
	rte_tel_data_add_dict_uint(d, "cntn", c->cntn);
	rte_tel_data_add_dict_string(d, "mode", vbr_tel_mode_name(c->mode));
	rte_tel_data_add_dict_string(d, "criteria",
				     vbr_tel_crit_name(c->mask));
	rte_tel_data_add_dict_string(d, "qp_type", vbr_tel_qp_type(c->qp_type));
	rte_tel_data_add_dict_int(d, "pid", c->pid);
	rte_tel_data_add_dict_string(d, "comm", c->comm);
	for (i = 0; i < c->nvals; i++)
		rte_tel_data_add_dict_uint(d, c->val[i].name, c->val[i].value);
	rte_tel_data_start_array(a, RTE_TEL_UINT_VAL);
	for (i = 0; i < RTE_MIN(c->nqps, (uint32_t)VBR_GLUE_QP_CNT_QPS); i++)
		rte_tel_data_add_array_uint(a, c->lqpn[i]);
	rte_tel_data_add_dict_container(d, "lqpn", a, 0);
	free(qc);
	return 0;
}

static int
vbr_tel_qps(const char *cmd, const char *params, struct rte_tel_data *d)
{
	uint32_t qpn[RTE_TEL_MAX_ARRAY_ENTRIES];
	struct rte_tel_data *tx, *hash;
	struct rte_eth_dev *dev;
	struct vbr_priv *priv;
	const char *rest;
	unsigned int n, i, nqps;

	RTE_SET_USED(cmd);
	dev = vbr_tel_dev(params, &rest);
	if (dev == NULL || *rest != '\0')
		return vbr_tel_error(d, EINVAL, "usage: <port>");
	priv = dev->data->dev_private;
	tx = rte_tel_data_alloc();
	hash = rte_tel_data_alloc();
	if (tx == NULL || hash == NULL) {
		rte_tel_data_free(tx);
		rte_tel_data_free(hash);
		return -ENOMEM;
	}
	vbr_tel_head(d, priv);
	rte_tel_data_start_array(tx, RTE_TEL_UINT_VAL);
	/* stopped: ethdev may be releasing the queues (the comment above) */
	for (i = 0; priv->started && i < dev->data->nb_tx_queues; i++) {
		const struct vbr_txq *txq = dev->data->tx_queues[i];

		rte_tel_data_add_array_uint(tx, txq != NULL &&
					    txq->qp != NULL ?
					    txq->qp->qp_num : 0);
	}
	rte_tel_data_start_array(hash, RTE_TEL_UINT_VAL);
	n = 0;
	if (priv->flow_lock_init) {
		pthread_mutex_lock(&priv->flow_lock);
		n = vbr_rss_qpns(priv, qpn, RTE_DIM(qpn));
		pthread_mutex_unlock(&priv->flow_lock);
	}
	for (i = 0; i < RTE_MIN(n, (unsigned int)RTE_DIM(qpn)); i++)
		rte_tel_data_add_array_uint(hash, qpn[i]);
	rte_tel_data_add_dict_container(d, "txq_lqpn", tx, 0);
	rte_tel_data_add_dict_container(d, "hash_lqpn", hash, 0);
	/* all of them, numbered or not (a ConnectX's are all 0) */
	nqps = 0;
	if (priv->flow_lock_init) {
		pthread_mutex_lock(&priv->flow_lock);
		(void)vbr_rss_nb_sets(priv, &nqps);
		pthread_mutex_unlock(&priv->flow_lock);
	}
	rte_tel_data_add_dict_uint(d, "hash_qps", nqps);
	return 0;
}

#define VBR_TEL_EBUSY_AUTO \
	"Modifying auto mode is not allowed when there is a bound QP"

static int
vbr_tel_qp_set_auto(const char *cmd, const char *params,
		    struct rte_tel_data *d)
{
	static const char *const crit[] = { "off", "type", "pid", "type,pid" };
	struct rte_eth_dev *dev;
	struct vbr_priv *priv;
	const char *rest;
	uint32_t mask;
	int ret;

	RTE_SET_USED(cmd);
	dev = vbr_tel_dev(params, &rest);
	if (dev == NULL || *rest != ',')
		return vbr_tel_error(d, EINVAL,
				     "usage: <port>,{off|type|pid|type,pid}");
	rest++;		/* the criteria: the whole rest */
	if (strcmp(rest, "pid,type") == 0)
		rest = "type,pid";
	for (mask = 0; mask < RTE_DIM(crit); mask++)
		if (strcmp(rest, crit[mask]) == 0)
			break;
	if (mask == RTE_DIM(crit))
		return vbr_tel_error(d, EINVAL,
				     "usage: <port>,{off|type|pid|type,pid}");
	priv = dev->data->dev_private;
	ret = priv->glue->counter_set_auto_mode(priv->ctx, 1, mask);
	if (ret == EBUSY) {
		/* the kernel's extack, which rdma prints as "Error: ..." */
		vbr_tel_error(d, ret, VBR_TEL_EBUSY_AUTO);
		rte_tel_data_add_dict_string(d, "extack", VBR_TEL_EBUSY_AUTO);
		return 0;
	}
	if (ret != 0)
		return vbr_tel_change_error(d, ret, "set auto mode");
	vbr_tel_mode_head(d, priv);
	return 0;
}

#define VBR_TEL_HINT_QPN0 \
	"no QP is numbered 0: a ConnectX gives every hash QP the number " \
	"0, so hash QPs cannot be bound"

/*
 * A bind refused with EINVAL, said once in the reply, with why where it is
 * one of the documented reasons (design.rst "On a ConnectX"): auto mode on;
 * one of the port's Tx QPs while its queue runs (a ConnectX binds a QP in
 * RESET only: the queue or the port stopped, its QP is).
 */
static int
vbr_tel_bind_einval(struct rte_tel_data *d, struct rte_eth_dev *dev,
		    uint32_t lqpn)
{
	struct vbr_priv *priv = dev->data->dev_private;
	uint32_t mode = 0, mask = 0;
	char hint[RTE_TEL_MAX_STRING_LEN];
	unsigned int i;

	vbr_tel_error(d, EINVAL, "bind");
	if (priv->glue->counter_get_mode(priv->ctx, 1, &mode, &mask) == 0 &&
	    mode == VBR_GLUE_COUNTER_MODE_AUTO) {
		rte_tel_data_add_dict_string(d, "hint",
			"auto mode binds QPs itself: turn it off first "
			"(/vbr/qp_set_auto,<port>,off)");
		return 0;
	}
	for (i = 0; priv->started && i < dev->data->nb_tx_queues; i++) {
		const struct vbr_txq *txq = dev->data->tx_queues[i];

		if (txq == NULL || txq->qp == NULL || txq->qp->qp_num != lqpn)
			continue;
		if (dev->data->tx_queue_state[i] !=
		    RTE_ETH_QUEUE_STATE_STARTED)
			break;
		snprintf(hint, sizeof(hint), "txq %u runs: a ConnectX "
			 "binds a QP only in RESET: stop the queue or the "
			 "port, bind, then start it", i);
		rte_tel_data_add_dict_string(d, "hint", hint);
		return 0;
	}
	return 0;
}

static int
vbr_tel_qp_bind(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct rte_eth_dev *dev;
	struct vbr_priv *priv;
	const char *rest;
	uint32_t lqpn, cntn = 0;
	int ret;

	RTE_SET_USED(cmd);
	dev = vbr_tel_dev(params, &rest);
	if (dev == NULL || vbr_tel_u32(&rest, &lqpn) != 0 ||
	    (*rest != '\0' && (vbr_tel_u32(&rest, &cntn) != 0 ||
			       *rest != '\0' || cntn == 0)))
		return vbr_tel_error(d, EINVAL, "usage: <port>,<lqpn>[,<cntn>]");
	priv = dev->data->dev_private;
	if (lqpn == 0) {
		vbr_tel_error(d, ENOENT, "bind");
		rte_tel_data_add_dict_string(d, "hint", VBR_TEL_HINT_QPN0);
		return 0;
	}
	ret = priv->glue->counter_bind_qp(priv->ctx, 1, lqpn, &cntn);
	if (ret == EINVAL)
		return vbr_tel_bind_einval(d, dev, lqpn);
	if (ret != 0)
		return vbr_tel_change_error(d, ret, "bind");
	vbr_tel_head(d, priv);
	rte_tel_data_add_dict_uint(d, "cntn", cntn);
	rte_tel_data_add_dict_uint(d, "lqpn", lqpn);
	return 0;
}

/* Listings a qp_unbind of a whole counter goes through at most. */
#define VBR_TEL_UNBIND_ROUNDS 1024

static int
vbr_tel_qp_unbind(const char *cmd, const char *params,
		  struct rte_tel_data *d)
{
	struct vbr_glue_qp_counter *qc;
	struct rte_eth_dev *dev;
	struct vbr_priv *priv;
	struct rte_tel_data *a;
	const char *rest;
	uint32_t cntn, lqpn, todo[VBR_GLUE_QP_CNT_QPS];
	unsigned int n, i, nt, done = 0, rounds = 0;
	bool one = false;
	int ret = 0;

	RTE_SET_USED(cmd);
	dev = vbr_tel_dev(params, &rest);
	if (dev == NULL || vbr_tel_u32(&rest, &cntn) != 0)
		return vbr_tel_error(d, EINVAL,
				     "usage: <port>,<cntn>[,<lqpn>]");
	if (*rest != '\0') {
		if (vbr_tel_u32(&rest, &lqpn) != 0 || *rest != '\0')
			return vbr_tel_error(d, EINVAL,
					     "usage: <port>,<cntn>[,<lqpn>]");
		one = true;
	}
	priv = dev->data->dev_private;
	a = rte_tel_data_alloc();
	if (a == NULL)
		return -ENOMEM;
	rte_tel_data_start_array(a, RTE_TEL_UINT_VAL);
	/*
	 * All QPs of the counter, as rdma does without lqpn: a listing shows
	 * at most VBR_GLUE_QP_CNT_QPS of them, so again until it is gone
	 * (bounded, were QPs bound to it as fast as they go).
	 */
	do {
		nt = 0;
		if (one) {
			todo[nt++] = lqpn;
		} else {
			qc = vbr_qp_counters(priv, &n);
			for (i = 0; i < n; i++)
				if (qc[i].cntn == cntn)
					for (nt = 0; nt < RTE_MIN(qc[i].nqps,
						(uint32_t)VBR_GLUE_QP_CNT_QPS);
					     nt++)
						todo[nt] = qc[i].lqpn[nt];
			free(qc);
		}
		for (i = 0; i < nt && ret == 0; i++) {
			ret = priv->glue->counter_unbind_qp(priv->ctx, 1,
							    todo[i], cntn);
			if (ret == 0) {
				rte_tel_data_add_array_uint(a, todo[i]);
				done++;
			}
		}
	} while (!one && ret == 0 && nt == VBR_GLUE_QP_CNT_QPS &&
		 ++rounds < VBR_TEL_UNBIND_ROUNDS);
	if (ret == 0 && done == 0)
		ret = ENOENT;
	if (ret != 0) {
		rte_tel_data_free(a);
		return vbr_tel_change_error(d, ret, ret == ENOENT && !one ?
					    "no such counter" : "unbind");
	}
	vbr_tel_head(d, priv);
	rte_tel_data_add_dict_uint(d, "cntn", cntn);
	rte_tel_data_add_dict_container(d, "lqpn", a, 0);
	return 0;
}

/* Most MRs /vbr/mrs lists. */
#define VBR_STATS_MR_MAX 256

/* The port's device's MRs (free() them), *n of them. */
static struct vbr_glue_mr *
vbr_tel_mrs_get(struct vbr_priv *priv, unsigned int *n, int *err)
{
	struct vbr_glue_mr *m;

	*n = 0;
	m = calloc(VBR_STATS_MR_MAX, sizeof(*m));
	if (m == NULL) {
		*err = ENOMEM;
		return NULL;
	}
	*err = priv->glue->mr_list(priv->ctx, m, VBR_STATS_MR_MAX, n);
	*n = RTE_MIN(*n, (unsigned int)VBR_STATS_MR_MAX);
	return m;
}

static int
vbr_tel_mrs(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct rte_eth_dev *dev;
	struct rte_tel_data *a;
	struct vbr_glue_mr *m;
	const char *rest;
	unsigned int n, i;
	int err;

	RTE_SET_USED(cmd);
	dev = vbr_tel_dev(params, &rest);
	if (dev == NULL || *rest != '\0')
		return vbr_tel_error(d, EINVAL, "usage: <port>");
	m = vbr_tel_mrs_get(dev->data->dev_private, &n, &err);
	if (err != 0) {
		free(m);
		return vbr_tel_error(d, err, "list MRs");
	}
	a = rte_tel_data_alloc();
	if (a == NULL) {
		free(m);
		return -ENOMEM;
	}
	vbr_tel_head(d, dev->data->dev_private);
	rte_tel_data_start_array(a, RTE_TEL_UINT_VAL);
	for (i = 0; i < n; i++)
		rte_tel_data_add_array_uint(a, m[i].mrn);
	rte_tel_data_add_dict_container(d, "mrn", a, 0);
	free(m);
	return 0;
}

static int
vbr_tel_mr(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct rte_eth_dev *dev;
	struct vbr_glue_mr *m;
	const char *rest;
	unsigned int n, i, k;
	uint32_t mrn;
	int err;

	RTE_SET_USED(cmd);
	dev = vbr_tel_dev(params, &rest);
	if (dev == NULL || vbr_tel_u32(&rest, &mrn) != 0 || *rest != '\0')
		return vbr_tel_error(d, EINVAL, "usage: <port>,<mrn>");
	m = vbr_tel_mrs_get(dev->data->dev_private, &n, &err);
	if (err != 0) {
		free(m);
		return vbr_tel_error(d, err, "list MRs");
	}
	for (i = 0; i < n && m[i].mrn != mrn; i++)
		;
	if (i == n) {
		free(m);
		return vbr_tel_error(d, ENOENT, "no such MR");
	}
	vbr_tel_head(d, dev->data->dev_private);
	rte_tel_data_add_dict_uint(d, "mrn", mrn);
	for (k = 0; k < m[i].nvals; k++)
		rte_tel_data_add_dict_uint(d, m[i].val[k].name,
					   m[i].val[k].value);
	free(m);
	return 0;
}

/* The endpoints: name, handler, help. */
static const struct {
	const char *name;
	telemetry_cb fn;
	const char *help;
} vbr_tel_cmds[] = {
	{ VBR_TEL_PREFIX "ports", vbr_tel_ports,
	  "The vbr ports: ethdev port id to verbs DEV/PORT. No parameters" },
	{ VBR_TEL_PREFIX "port", vbr_tel_port,
	  "A vbr port: verbs device, ethdev name, backend. "
	  "Parameters: int port_id" },
	{ VBR_TEL_PREFIX "port_counters", vbr_tel_port_counters,
	  "A port's device counters. Parameters: int port_id" },
	{ VBR_TEL_PREFIX "qp_mode", vbr_tel_qp_mode,
	  "A port's QP counter mode. Parameters: int port_id" },
	{ VBR_TEL_PREFIX "qp_counters", vbr_tel_qp_counters,
	  "A port's QP counter mode and counters. Parameters: int port_id" },
	{ VBR_TEL_PREFIX "qp_counter", vbr_tel_qp_counter,
	  "A QP counter. Parameters: int port_id, int cntn" },
	{ VBR_TEL_PREFIX "qps", vbr_tel_qps,
	  "A port's QP numbers (Tx queues, hash QPs). "
	  "Parameters: int port_id" },
	{ VBR_TEL_PREFIX "mrs", vbr_tel_mrs,
	  "A port's device's MR numbers. Parameters: int port_id" },
	{ VBR_TEL_PREFIX "mr", vbr_tel_mr,
	  "An MR's counters. Parameters: int port_id, int mrn" },
	{ VBR_TEL_PREFIX "qp_set_auto", vbr_tel_qp_set_auto,
	  "Set QP counter auto mode. "
	  "Parameters: int port_id, off|type|pid|type,pid" },
	{ VBR_TEL_PREFIX "qp_bind", vbr_tel_qp_bind,
	  "Bind a QP to a new or given counter. "
	  "Parameters: int port_id, int lqpn[, int cntn]" },
	{ VBR_TEL_PREFIX "qp_unbind", vbr_tel_qp_unbind,
	  "Unbind one or all QPs of a counter. "
	  "Parameters: int port_id, int cntn[, int lqpn]" },
};

/* Every endpoint: its handler under the read side of vbr_tel_lock. */
static int
vbr_tel_handler(const char *cmd, const char *params, struct rte_tel_data *d)
{
	unsigned int i;
	int ret = -EINVAL;

	for (i = 0; i < RTE_DIM(vbr_tel_cmds); i++)
		if (strcmp(cmd, vbr_tel_cmds[i].name) == 0)
			break;
	if (i == RTE_DIM(vbr_tel_cmds))
		return ret;
	pthread_rwlock_rdlock(&vbr_tel_lock);
	ret = vbr_tel_cmds[i].fn(cmd, params, d);
	pthread_rwlock_unlock(&vbr_tel_lock);
	return ret;
}

RTE_INIT(vbr_telemetry_init)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(vbr_tel_cmds); i++)
		rte_telemetry_register_cmd(vbr_tel_cmds[i].name,
					   vbr_tel_handler,
					   vbr_tel_cmds[i].help);
}
