/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Tx queues: a RAW_PACKET QP (send side only) and its CQ each, and the slow
 * path of a send queue the device moved to ERR.
 *
 * A device fails a send WQE it cannot take (0 bytes, longer than it sends,
 * an SGE outside its MR) and moves the QP to ERR: the WQEs behind that one
 * are flushed unsent, and no later post is taken. The burst refuses what it
 * can see coming (vbr_tx_burst()); for the rest the queue is recovered as
 * the mlx5 PMD recovers its SQs: RESET -> INIT -> RTR -> RTS, then the WQEs
 * the device did not send, except the one it failed, are posted again.
 */

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "vbr.h"
#include "vbr_utils.h"

/**
 * Largest frame the port sends: the port's max_msg_sz (a RAW_PACKET send
 * is one frame), no more than max_rx_pktlen, the largest it receives.
 */
uint32_t
vbr_max_frame(struct vbr_priv *priv)
{
	struct ibv_port_attr pattr;

	memset(&pattr, 0, sizeof(pattr));
	if (priv->glue->query_port(priv->ctx, VBR_PORT_NUM, &pattr) == 0 &&
	    pattr.max_msg_sz != 0)
		return RTE_MIN(pattr.max_msg_sz, priv->max_rx_pktlen);
	return priv->max_rx_pktlen;
}

/* Read and forget every CQE of the queue. */
static void
vbr_txq_cq_discard(struct vbr_txq *txq)
{
	struct ibv_poll_cq_attr attr = { .comp_mask = 0 };

	if (ibv_start_poll(txq->cq, &attr) == 0) {
		while (ibv_next_poll(txq->cq) == 0)
			;
		ibv_end_poll(txq->cq);
	}
}

/* Free every mbuf still in the ring and forget all WQEs. */
static void
vbr_txq_flush(struct vbr_txq *txq)
{
	uint32_t i;

	vbr_txq_cq_discard(txq);
	for (i = 0; i <= txq->mask; i++) {
		if (txq->elts[i] != NULL) {
			rte_pktmbuf_free(txq->elts[i]);
			txq->elts[i] = NULL;
		}
	}
	txq->head = 0;
	txq->tail = 0;
	txq->since_signal = 0;
	txq->err_pending = 0;
}

static void
vbr_txq_free(struct vbr_txq *txq)
{
	const struct vbr_glue *glue = txq->priv->glue;
	int ret;

	if (txq->qp != NULL) {
		ret = glue->destroy_qp(txq->qp);
		if (ret != 0)
			VBR_LOG(ERR, "port %u txq %u: destroy_qp: %s",
				txq->port_id, txq->queue_id, strerror(ret));
	}
	if (txq->cq != NULL) {
		if (txq->elts != NULL)
			vbr_txq_flush(txq);
		ret = glue->destroy_cq(ibv_cq_ex_to_cq(txq->cq));
		if (ret != 0)
			VBR_LOG(ERR, "port %u txq %u: destroy_cq: %s",
				txq->port_id, txq->queue_id, strerror(ret));
	}
	rte_free(txq->elts);
	rte_free(txq->wrs);
	rte_free(txq->sges);
	rte_free(txq);
}

void
vbr_tx_queue_release(struct rte_eth_dev *dev, uint16_t idx)
{
	struct vbr_txq *txq = dev->data->tx_queues[idx];

	if (txq == NULL)
		return;
	vbr_txq_free(txq);
	dev->data->tx_queues[idx] = NULL;
}

/* Tx checksum offloads: IBV_SEND_IP_CSUM fills the three. */
#define VBR_TX_OFFLOAD_CSUM (RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | \
			     RTE_ETH_TX_OFFLOAD_UDP_CKSUM | \
			     RTE_ETH_TX_OFFLOAD_TCP_CKSUM)

/*
 * Tx offloads the device reports: multi-segment and fast free always
 * (the driver's own), the checksums with IBV_DEVICE_RAW_IP_CSUM (one send
 * flag, IBV_SEND_IP_CSUM, fills the IPv4 header's and TCP's or UDP's as
 * on mlx5). Standard verbs has no VLAN insert flag: never offered.
 */
uint64_t
vbr_tx_offload_capa(const struct vbr_priv *priv)
{
	uint64_t capa = RTE_ETH_TX_OFFLOAD_MULTI_SEGS |
			RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;

	if (priv->attr.device_cap_flags_ex & IBV_DEVICE_RAW_IP_CSUM)
		capa |= VBR_TX_OFFLOAD_CSUM;
	return capa;
}

/* Whether the device takes a send queue of wr WRs of sge SGEs. */
static bool
vbr_txq_fits(struct vbr_priv *priv, struct ibv_cq_ex *cq, uint32_t wr,
	     uint32_t sge, int *err)
{
	struct ibv_qp_init_attr_ex qp_attr = { 0 };
	struct ibv_qp *qp;

	qp_attr.qp_type = IBV_QPT_RAW_PACKET;
	qp_attr.send_cq = ibv_cq_ex_to_cq(cq);
	qp_attr.recv_cq = ibv_cq_ex_to_cq(cq);
	qp_attr.cap.max_send_wr = wr;
	qp_attr.cap.max_send_sge = sge;
	qp_attr.comp_mask = IBV_QP_INIT_ATTR_PD;
	qp_attr.pd = priv->pd;
	qp = priv->glue->create_qp_ex(priv->ctx, &qp_attr);
	if (qp == NULL) {
		*err = errno;
		return false;
	}
	priv->glue->destroy_qp(qp);
	return true;
}

/* The largest n in [lo, hi] for which fits(n), given fits(lo). */
static uint32_t
vbr_txq_largest(struct vbr_priv *priv, struct ibv_cq_ex *cq, uint32_t lo,
		uint32_t hi, bool by_wr, uint32_t other)
{
	uint32_t mid;
	int err;

	while (lo < hi) {
		mid = lo + (hi - lo + 1) / 2;
		if (by_wr ? vbr_txq_fits(priv, cq, mid, other, &err) :
			    vbr_txq_fits(priv, cq, other, mid, &err))
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/*
 * What a Tx queue may be, tried on the device at probe: verbs reports
 * max_qp_wr and max_sge, but a send WQE of many SGEs is bigger and a
 * queue has room for fewer of them (a ConnectX: max_sge 30, yet 29 SGEs
 * fill its 512-byte RAW_PACKET WQE, and 2^15 64-byte blocks hold 4096
 * of those: rdma-core's mlx5_calc_send_wqe() and mlx5_calc_sq_size()).
 * dev_info promises only these, so whatever it promises works. A device
 * that takes no QP here (EPERM without CAP_NET_RAW) keeps its reported
 * caps: its Tx queues fail at setup anyway, saying why.
 */
void
vbr_txq_probe_limits(struct vbr_priv *priv)
{
	const struct ibv_device_attr_ex *attr = &priv->attr;
	struct ibv_cq_init_attr_ex cq_attr = { .cqe = 1 };
	uint32_t max_desc, segs;
	struct ibv_cq_ex *cq;
	int err = 0;

	max_desc = RTE_MIN((uint32_t)attr->orig_attr.max_qp_wr, 32768u);
	max_desc = RTE_MIN(max_desc, (uint32_t)attr->orig_attr.max_cqe);
	segs = RTE_MIN((uint32_t)attr->orig_attr.max_sge,
		       (uint32_t)VBR_TX_MAX_SEGS);
	segs = RTE_MAX(segs, 1u);
	priv->tx_max_segs = segs;
	priv->tx_max_desc = max_desc;
	priv->tx_max_desc_segs = max_desc;
	if (max_desc < VBR_MIN_DESC)
		return;
	cq = priv->glue->create_cq_ex(priv->ctx, &cq_attr);
	if (cq == NULL) {
		err = errno;
		goto untried;
	}
	if (!vbr_txq_fits(priv, cq, VBR_MIN_DESC, 1, &err))
		goto untried_cq;
	if (!vbr_txq_fits(priv, cq, VBR_MIN_DESC, segs, &err))
		segs = vbr_txq_largest(priv, cq, 1, segs, false,
				       VBR_MIN_DESC);
	priv->tx_max_segs = segs;
	if (!vbr_txq_fits(priv, cq, max_desc, 1, &err))
		priv->tx_max_desc = vbr_txq_largest(priv, cq, VBR_MIN_DESC,
						    max_desc, true, 1);
	if (!vbr_txq_fits(priv, cq, priv->tx_max_desc, segs, &err))
		priv->tx_max_desc_segs =
			vbr_txq_largest(priv, cq, VBR_MIN_DESC,
					priv->tx_max_desc, true, segs);
	else
		priv->tx_max_desc_segs = priv->tx_max_desc;
	priv->glue->destroy_cq(ibv_cq_ex_to_cq(cq));
	VBR_LOG(DEBUG, "%s: Tx queues: up to %u descriptors, %u with "
		"%u segments a packet", priv->ibdev_name, priv->tx_max_desc,
		priv->tx_max_desc_segs, priv->tx_max_segs);
	return;
untried_cq:
	priv->glue->destroy_cq(ibv_cq_ex_to_cq(cq));
untried:
	VBR_LOG(DEBUG, "%s: Tx queue limits not tried (%s): the device's "
		"caps", priv->ibdev_name, strerror(err));
}

/* The deepest Tx ring with these offloads (multi-segment or not). */
uint16_t
vbr_tx_desc_max(const struct vbr_priv *priv, uint64_t offloads)
{
	return (offloads & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) ?
	       priv->tx_max_desc_segs : priv->tx_max_desc;
}

int
vbr_tx_queue_setup(struct rte_eth_dev *dev, uint16_t idx, uint16_t desc,
		   unsigned int socket, const struct rte_eth_txconf *conf)
{
	struct vbr_priv *priv = dev->data->dev_private;
	uint64_t offloads = conf->offloads | dev->data->dev_conf.txmode.offloads;
	struct ibv_cq_init_attr_ex cq_attr = { .cqe = desc };
	struct ibv_qp_init_attr_ex qp_attr = { 0 };
	struct vbr_txq *txq;
	int ret;

	if (priv->started) {
		VBR_LOG(ERR, "port %u: stop the port to set txq %u up",
			dev->data->port_id, idx);
		return -EBUSY;
	}
	if (desc > vbr_tx_desc_max(priv, offloads)) {
		VBR_LOG(ERR, "port %u txq %u: %u descriptors: the device "
			"takes at most %u%s (%u with one segment a packet)",
			dev->data->port_id, idx, desc,
			vbr_tx_desc_max(priv, offloads),
			(offloads & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) ?
			" with multi-segment Tx" : "", priv->tx_max_desc);
		return -EINVAL;
	}
	vbr_tx_queue_release(dev, idx);
	txq = rte_zmalloc_socket("vbr_txq", sizeof(*txq), RTE_CACHE_LINE_SIZE,
				 socket);
	if (txq == NULL)
		return -ENOMEM;
	txq->priv = priv;
	txq->post_send = priv->glue->post_send_burst;
	txq->desc = desc;
	/* Slots by index & mask; at most desc of them in use. */
	txq->mask = rte_align32pow2(desc) - 1;
	txq->max_sge = 1;
	if (offloads & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)
		txq->max_sge = priv->tx_max_segs;
	txq->max_frame = vbr_max_frame(priv);
	txq->fast_free = !!(offloads & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE);
	txq->csum = !!(offloads & VBR_TX_OFFLOAD_CSUM);
	txq->offloads = offloads;
	txq->deferred = !!conf->tx_deferred_start;
	txq->stopped = 1;
	txq->signal_interval = RTE_MIN(VBR_TX_SIGNAL_INTERVAL,
				       RTE_MAX(desc / 4, 1));
	txq->port_id = dev->data->port_id;
	txq->queue_id = idx;
	txq->elts = rte_calloc_socket("vbr_txq_elts", txq->mask + 1,
				      sizeof(*txq->elts), 0, socket);
	txq->wrs = rte_calloc_socket("vbr_txq_wrs", txq->mask + 1,
				     sizeof(*txq->wrs), 0, socket);
	txq->sges = rte_calloc_socket("vbr_txq_sges",
				      (size_t)(txq->mask + 1) * txq->max_sge,
				      sizeof(*txq->sges), 0, socket);
	if (txq->elts == NULL || txq->wrs == NULL || txq->sges == NULL) {
		ret = -ENOMEM;
		goto error;
	}
	txq->cq = priv->glue->create_cq_ex(priv->ctx, &cq_attr);
	if (txq->cq == NULL) {
		ret = -errno;
		VBR_LOG(ERR, "port %u txq %u: create_cq_ex: %s",
			txq->port_id, idx, strerror(errno));
		goto error;
	}
	qp_attr.qp_type = IBV_QPT_RAW_PACKET;
	qp_attr.send_cq = ibv_cq_ex_to_cq(txq->cq);
	qp_attr.recv_cq = ibv_cq_ex_to_cq(txq->cq);
	qp_attr.cap.max_send_wr = desc;
	qp_attr.cap.max_send_sge = txq->max_sge;
	qp_attr.sq_sig_all = 0;
	qp_attr.comp_mask = IBV_QP_INIT_ATTR_PD;
	qp_attr.pd = priv->pd;
	txq->qp = priv->glue->create_qp_ex(priv->ctx, &qp_attr);
	if (txq->qp == NULL) {
		ret = -errno;
		VBR_LOG(ERR, "port %u txq %u: create RAW_PACKET QP (%u WRs, "
			"%u SGEs): %s%s", txq->port_id, idx, desc,
			txq->max_sge, strerror(-ret), vbr_raw_qp_hint(-ret));
		goto error;
	}
	dev->data->tx_queues[idx] = txq;
	VBR_LOG(DEBUG, "port %u txq %u: %u descriptors x %u segments, "
		"socket %d: qp %u, cq handle %u (%d cqes)", txq->port_id, idx,
		desc, txq->max_sge, (int)socket, txq->qp->qp_num, txq->cq->handle,
		txq->cq->cqe);
	return 0;
error:
	vbr_txq_free(txq);
	return ret;
}

/*
 * RESET -> INIT -> RTR -> RTS, with the queue's rate limit: 0 or a
 * positive errno (logged).
 */
static int
vbr_txq_ready(struct vbr_txq *txq)
{
	const struct vbr_glue *glue = txq->priv->glue;
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT,
				    .port_num = VBR_PORT_NUM };
	int ret;

	ret = glue->modify_qp(txq->qp, &attr, IBV_QP_STATE | IBV_QP_PORT);
	if (ret == 0) {
		attr = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
		ret = glue->modify_qp(txq->qp, &attr, IBV_QP_STATE);
	}
	if (ret == 0) {
		attr = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS };
		ret = glue->modify_qp(txq->qp, &attr, IBV_QP_STATE);
	}
	if (ret != 0) {
		VBR_LOG(ERR, "port %u txq %u: modify_qp to RTS: %s",
			txq->port_id, txq->queue_id, strerror(ret));
		return ret;
	}
	/*
	 * A QP in RESET lost its rate limit: set it before any send. A limit
	 * the device refuses now (logged) leaves the queue unpaced rather
	 * than dead: its frames still go.
	 */
	(void)vbr_tm_txq_ready(txq);
	return 0;
}

/** RESET -> INIT -> RTR -> RTS. */
int
vbr_txq_start(struct vbr_txq *txq)
{
	int ret;

	ret = vbr_txq_ready(txq);
	if (ret != 0) {
		vbr_txq_stop(txq);
		return -ret;
	}
	/* A new start: no recovery owed, no backoff, the device is there. */
	txq->recover_wait = 0;
	txq->gone = 0;
	txq->recover_tsc = 0;
	txq->recover_at = 0;
	txq->recover_backoff = 0;
	txq->stopped = 0;
	return 0;
}

/*
 * Take a frame counted as sent off the counts (it was not sent), down to
 * the base of the last stats reset at most: a frame posted before a reset
 * is not in the counts since.
 */
static void
vbr_txq_uncount(struct vbr_txq *txq, uint32_t len)
{
	txq->opackets -= vbr_qcount(&txq->opackets, &txq->base.opackets) > 0;
	txq->obytes -= RTE_MIN(vbr_qcount(&txq->obytes, &txq->base.obytes),
			       (uint64_t)len);
}

/*
 * The WQE at tail did not go out: free its mbuf, count it as failed rather
 * than sent (it was counted as sent when posted, unless a stats reset came
 * between). Nothing with no WQE in flight.
 */
void
vbr_txq_lose(struct vbr_txq *txq)
{
	uint32_t idx = txq->tail & txq->mask;
	struct rte_mbuf *m;

	if (txq->tail == txq->head)
		return;
	m = txq->elts[idx];

	if (m != NULL) {
		vbr_txq_uncount(txq, m->pkt_len);
		rte_pktmbuf_free(m);
		txq->elts[idx] = NULL;
	}
	txq->oerrors++;
	txq->wqe_errors++;
	txq->tail++;
}

/*
 * The WR of ring slot i, rebuilt from its mbuf: the burst posted
 * one-segment packets from arrays of its own, so only the mbuf says what
 * the WQE was.
 */
static void
vbr_txq_rebuild_wr(struct vbr_txq *txq, uint32_t i)
{
	uint32_t idx = i & txq->mask;
	struct ibv_send_wr *wr = &txq->wrs[idx];
	struct ibv_sge *sge = &txq->sges[idx * txq->max_sge];
	struct rte_mbuf *seg;
	int s = 0;

	for (seg = txq->elts[idx]; seg != NULL && s < txq->max_sge;
	     seg = seg->next, s++) {
		sge[s].addr = rte_pktmbuf_mtod(seg, uintptr_t);
		sge[s].length = seg->data_len;
		/* Found when it was posted; the mempool stays registered. */
		if (vbr_mr_find(txq->priv, &txq->mr_cache, sge[s].addr,
				sge[s].length, &sge[s].lkey) != 0)
			sge[s].lkey = 0;
	}
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = i;
	wr->sg_list = sge;
	wr->num_sge = s;
	wr->opcode = IBV_WR_SEND;
	if (txq->csum && (txq->elts[idx]->ol_flags & VBR_TX_OL_CSUM))
		wr->send_flags = IBV_SEND_IP_CSUM;
}

/* Post the WQEs of ring slots [tail, head) again, in order. */
static void
vbr_txq_repost(struct vbr_txq *txq)
{
	struct ibv_send_wr *first = NULL, *last = NULL, *bad, *wr;
	uint32_t i;

	txq->since_signal = 0;
	for (i = txq->tail; i != txq->head; i++) {
		vbr_txq_rebuild_wr(txq, i);
		wr = &txq->wrs[i & txq->mask];
		wr->next = NULL;
		if (last != NULL)
			last->next = wr;
		else
			first = wr;
		last = wr;
	}
	if (last == NULL)
		return;
	/* Their mbufs come back with this CQE at the latest. */
	last->send_flags |= IBV_SEND_SIGNALED;
	if (ibv_post_send(txq->qp, first, &bad) == 0)
		return;
	VBR_LOG(ERR, "port %u txq %u: %u WQEs refused again after recovery",
		txq->port_id, txq->queue_id, txq->head - (uint32_t)bad->wr_id);
	/* Drop what the device refused, from the end of the ring. */
	for (wr = bad; wr != NULL; wr = wr->next) {
		uint32_t idx = (uint32_t)wr->wr_id & txq->mask;
		struct rte_mbuf *m = txq->elts[idx];

		vbr_txq_uncount(txq, m->pkt_len);
		txq->oerrors++;
		txq->wqe_errors++;
		rte_pktmbuf_free(m);
		txq->elts[idx] = NULL;
	}
	txq->head = (uint32_t)bad->wr_id;
}

/* One line per recovery, at most one a second (the others are counted). */
static void
vbr_txq_log_recovery(struct vbr_txq *txq, int failed, uint32_t wqe,
		     enum ibv_wc_status status)
{
	uint64_t now = rte_get_timer_cycles();

	if (txq->log_tsc != 0 && now - txq->log_tsc < rte_get_timer_hz()) {
		txq->log_quiet++;
		return;
	}
	if (failed)
		VBR_LOG(WARNING, "port %u txq %u: the device failed WQE %u "
			"(completion status %d) and moved the send queue to "
			"ERR; queue reset, WQE dropped, %u behind it posted "
			"again (recovery %" PRIu64 "; %u more not logged "
			"since the last line)", txq->port_id, txq->queue_id,
			wqe, status, txq->head - txq->tail, txq->recoveries,
			txq->log_quiet);
	else
		VBR_LOG(WARNING, "port %u txq %u: send queue in ERR; queue "
			"reset, %u WQEs posted again (recovery %" PRIu64 "; "
			"%u more not logged since the last line)", txq->port_id,
			txq->queue_id, txq->head - txq->tail,
			txq->recoveries, txq->log_quiet);
	txq->log_tsc = now;
	txq->log_quiet = 0;
}

/*
 * Recoveries back off: one that comes within a second of the last one
 * waits until VBR_TXQ_BACKOFF_MIN_MS, then twice the previous wait, up to
 * VBR_TXQ_BACKOFF_MAX_MS; a second without a recovery starts again from
 * none. A device that fails every send (a wire gone that the device has
 * not reported yet) so costs a few recoveries a second, not one a burst.
 */
#define VBR_TXQ_BACKOFF_MIN_MS 1
#define VBR_TXQ_BACKOFF_MAX_MS 250

/*
 * A recovery that found the queue in ERR by its state or a refused post,
 * with no completion in error read, waits up to this long for the device
 * to flush what it still holds (vbr_txq_await_flush()); up to the second
 * figure on a device that shows what it holds (glue sq_held: swverbs),
 * which ends the wait as soon as it holds nothing.
 */
#define VBR_TXQ_FLUSH_WAIT_MS 50
#define VBR_TXQ_FLUSH_WAIT_HELD_MS 2000

/* Whether a verbs call's errno says the device is gone (uverbs: EIO). */
static inline bool
vbr_txq_errno_gone(int err)
{
	return err == EIO || err == ENODEV;
}

/*
 * The device is gone (its removal event came, or it answers EIO): the
 * queue stops sending until the port is started again. What the ring
 * holds is dropped and counted (oerrors, wqe_errors); the QP is left in
 * ERR, bursts return 0 and leave their packets to the caller.
 */
static void
vbr_txq_retire(struct vbr_txq *txq)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };

	(void)txq->priv->glue->modify_qp(txq->qp, &attr, IBV_QP_STATE);
	vbr_txq_cq_discard(txq);
	txq->err_pending = 0;
	txq->recover_wait = 0;
	txq->gone = 1;
	VBR_LOG(WARNING, "port %u txq %u: device removed: send queue not "
		"recovered, %u WQEs dropped; no sending until the port starts "
		"again", txq->port_id, txq->queue_id, txq->head - txq->tail);
	while (txq->tail != txq->head)
		vbr_txq_lose(txq);
}

/*
 * Whether a recovery may run now; if not, the queue waits in ERR with
 * the ring kept (recover_wait, its unposted), counted once per burst in
 * recoveries_deferred.
 */
static bool
vbr_txq_recover_due(struct vbr_txq *txq, uint32_t unposted)
{
	uint64_t now = rte_get_timer_cycles();

	if (txq->recover_at == 0 || (int64_t)(now - txq->recover_at) >= 0)
		return true;
	if (!txq->recover_wait && !txq->err_pending)
		txq->recover_unposted = unposted;
	txq->recover_wait = !txq->err_pending;
	txq->recoveries_deferred++;
	return false;
}

/*
 * The queue is in ERR and no completion in error was read: the device may
 * still hold WQEs posted before it moved to ERR, which it completes on its
 * own time as flushed (IBV_WC_WR_FLUSH_ERR, signaled or not; swverbs'
 * engine, as a NIC, runs apart from the caller). A RESET now would drop
 * them with no completion, and the recovery would free them as sent: lost.
 * So the completions are polled first, until one in error comes
 * (err_pending: the recovery keeps and posts again what it flushed), every
 * WQE before unposted has its completion, or VBR_TXQ_FLUSH_WAIT_MS have
 * passed: a device in ERR flushes at once, so WQEs with no completion by
 * then were sent (unsignaled ones report nothing). A device that tells
 * what it holds (swverbs, whose engine may be descheduled for longer)
 * ends the wait when it holds none, their completions then in the CQ,
 * read here: a RESET drops the CQEs of the QP still in the CQ (mlx5, and
 * swverbs as it); VBR_TXQ_FLUSH_WAIT_HELD_MS bounds a dead one.
 */
static void
vbr_txq_await_flush(struct vbr_txq *txq, uint32_t unposted)
{
	int (*sq_held)(struct ibv_qp *qp, uint32_t *held) =
		txq->priv->glue->sq_held;
	uint64_t end = rte_get_timer_cycles() + rte_get_timer_hz() *
		       (sq_held != NULL ? VBR_TXQ_FLUSH_WAIT_HELD_MS :
			VBR_TXQ_FLUSH_WAIT_MS) / 1000;
	uint32_t held;

	for (;;) {
		vbr_txq_complete(txq);
		if (txq->err_pending || txq->tail == unposted ||
		    __atomic_load_n(&txq->priv->removed, __ATOMIC_ACQUIRE) ||
		    (int64_t)(rte_get_timer_cycles() - end) >= 0)
			return;
		if (sq_held != NULL && sq_held(txq->qp, &held) == 0 &&
		    held == 0) {
			/* Their CQEs are in the CQ: read before the RESET. */
			vbr_txq_complete(txq);
			return;
		}
		/* The flushing thread may share this CPU. */
		sched_yield();
	}
}

/* A recovery is done: when the next one may come. */
static void
vbr_txq_backoff(struct vbr_txq *txq)
{
	uint64_t now = rte_get_timer_cycles(), hz = rte_get_timer_hz();
	uint64_t min = hz * VBR_TXQ_BACKOFF_MIN_MS / 1000;
	uint64_t max = hz * VBR_TXQ_BACKOFF_MAX_MS / 1000;

	if (txq->recover_tsc == 0 || now - txq->recover_tsc > hz)
		txq->recover_backoff = 0;
	else if (txq->recover_backoff == 0)
		txq->recover_backoff = min;
	else
		txq->recover_backoff = RTE_MIN(2 * txq->recover_backoff, max);
	txq->recover_tsc = now;
	txq->recover_at = txq->recover_backoff == 0 ? 0 :
			  now + txq->recover_backoff;
}

/**
 * Slow path of a send queue in ERR, seen as an error CQE (err_pending),
 * as ERR in ibv_qp.state before a post (an ERR set through ibv_modify_qp())
 * or as a post refused in ERR; slots [unposted, head) are WQEs the device
 * refused. A device removed is not recovered (vbr_txq_retire()); a
 * recovery too soon after the last one waits (vbr_txq_backoff()). The QP
 * goes to RESET, so the device no longer touches the ring; the CQEs
 * read before it show which WQEs were sent, and those are freed (a
 * RESET drops the QP's CQEs still in the CQ, as on mlx5). The
 * WQE the device failed is dropped and counted (oerrors, wqe_errors); one
 * completed with IBV_WC_WR_FLUSH_ERR was only flushed (the QP was moved to
 * ERR from outside) and is kept. With no CQE in error read, the device's
 * flush is waited for first (vbr_txq_await_flush()); WQEs with no CQE
 * before unposted after that were sent: the device reports nothing else
 * for them. Then
 * INIT -> RTR -> RTS and the kept WQEs are posted again. If the QP cannot be
 * made ready, the ring is emptied and the QP left in ERR: the next burst
 * tries again.
 */
void
vbr_txq_recover(struct vbr_txq *txq, uint32_t unposted)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RESET };
	enum ibv_wc_status status;
	uint32_t wqe;
	int failed = 0, ret;

	if (__atomic_load_n(&txq->priv->removed, __ATOMIC_ACQUIRE)) {
		vbr_txq_retire(txq);
		return;
	}
	if (!vbr_txq_recover_due(txq, unposted))
		return;
	if (txq->recover_wait) {
		unposted = txq->recover_unposted;
		txq->recover_wait = 0;
	}
	if (!txq->err_pending)
		vbr_txq_await_flush(txq, unposted);
	/*
	 * What the device refused is in flight: an unposted the ring has
	 * moved past frees nothing below as sent (the rest is posted again).
	 */
	if (unposted - txq->tail > txq->head - txq->tail)
		unposted = txq->tail;
	vbr_txq_backoff(txq);
	ret = txq->priv->glue->modify_qp(txq->qp, &attr, IBV_QP_STATE);
	if (vbr_txq_errno_gone(ret)) {
		vbr_txq_retire(txq);
		return;
	}
	if (ret != 0) {
		VBR_LOG(ERR, "port %u txq %u: modify_qp to RESET: %s",
			txq->port_id, txq->queue_id, strerror(ret));
		goto fail;
	}
	vbr_txq_complete(txq);
	vbr_txq_cq_discard(txq);	/* flushed behind the error */
	if (txq->err_pending) {
		/*
		 * vbr_txq_complete() freed up to it and dropped it (a
		 * flushed one is kept: tail is the WQE).
		 */
		status = txq->err_status;
		wqe = txq->err_wr_id;
		failed = status != IBV_WC_WR_FLUSH_ERR;
		txq->err_pending = 0;
	} else {
		status = IBV_WC_SUCCESS;
		wqe = unposted;
		vbr_txq_free_upto(txq, unposted - 1);
	}
	ret = vbr_txq_ready(txq);
	if (vbr_txq_errno_gone(ret)) {
		vbr_txq_retire(txq);
		return;
	}
	if (ret != 0)
		goto fail;
	txq->recoveries++;
	vbr_txq_repost(txq);
	vbr_txq_log_recovery(txq, failed, wqe, status);
	return;
fail:
	attr.qp_state = IBV_QPS_ERR;
	txq->priv->glue->modify_qp(txq->qp, &attr, IBV_QP_STATE);
	vbr_txq_cq_discard(txq);
	txq->err_pending = 0;
	while (txq->tail != txq->head)
		vbr_txq_lose(txq);
}

/** Back to RESET; the ring's mbufs are freed. */
void
vbr_txq_stop(struct vbr_txq *txq)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RESET };
	int ret;

	txq->stopped = 1;
	vbr_txq_complete(txq);
	ret = txq->priv->glue->modify_qp(txq->qp, &attr, IBV_QP_STATE);
	if (ret != 0)
		VBR_LOG(ERR, "port %u txq %u: modify_qp to RESET: %s",
			txq->port_id, txq->queue_id, strerror(ret));
	vbr_txq_flush(txq);
}

/*
 * Queue start and stop: the QP to RTS, or back to RESET with what it held
 * freed (vbr_txq_stop()). A burst on a stopped queue returns 0 at once and
 * takes no mbuf: a device such as mlx5 posts in RESET and sends after the
 * next start.
 */
int
vbr_tx_queue_start(struct rte_eth_dev *dev, uint16_t idx)
{
	int ret;

	if (dev->data->tx_queue_state[idx] == RTE_ETH_QUEUE_STATE_STARTED)
		return 0;
	ret = vbr_txq_start(dev->data->tx_queues[idx]);
	if (ret != 0)
		return ret;
	dev->data->tx_queue_state[idx] = RTE_ETH_QUEUE_STATE_STARTED;
	return 0;
}

int
vbr_tx_queue_stop(struct rte_eth_dev *dev, uint16_t idx)
{
	if (dev->data->tx_queue_state[idx] == RTE_ETH_QUEUE_STATE_STARTED)
		vbr_txq_stop(dev->data->tx_queues[idx]);
	dev->data->tx_queue_state[idx] = RTE_ETH_QUEUE_STATE_STOPPED;
	return 0;
}

void
vbr_txq_info_get(struct rte_eth_dev *dev, uint16_t idx,
		 struct rte_eth_txq_info *qinfo)
{
	struct vbr_txq *txq = dev->data->tx_queues[idx];

	qinfo->nb_desc = txq->desc;
	qinfo->queue_state = dev->data->tx_queue_state[idx];
	qinfo->conf.offloads = txq->offloads;
	qinfo->conf.tx_deferred_start = txq->deferred;
	/* A completion is asked for every signal_interval sends. */
	qinfo->conf.tx_rs_thresh = txq->signal_interval;
	qinfo->conf.tx_free_thresh = txq->signal_interval;
}

int
vbr_tx_burst_mode_get(struct rte_eth_dev *dev, uint16_t idx,
		      struct rte_eth_burst_mode *mode)
{
	struct vbr_txq *txq = dev->data->tx_queues[idx];

	mode->flags = 0;
	snprintf(mode->info, sizeof(mode->info), "Scalar, %s post_send%s",
		 txq->priv->glue->name, txq->max_sge > 1 ? ", multi-seg" : "");
	return 0;
}

/*
 * Offset 0 is the next slot the burst fills. The free slots come first
 * (DONE: sent and completed, or never used), then the ones in flight
 * (FULL), oldest first. The completions the device made are reaped first,
 * as a burst would (same thread as the bursts, by the ethdev rule).
 */
int
vbr_tx_descriptor_status(void *q, uint16_t offset)
{
	struct vbr_txq *txq = q;

	if (offset >= txq->desc)
		return -EINVAL;
	vbr_txq_complete(txq);
	if (offset < txq->desc - (txq->head - txq->tail))
		return RTE_ETH_TX_DESC_DONE;
	return RTE_ETH_TX_DESC_FULL;
}
