/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The send queue drain: the one path from a RAW_PACKET QP's send queue to
 * the wire. Per burst: gather up to SWV_TX_BURST WQEs (SGEs checked against
 * the PD's MRs), pass the gate (tx_gate(): where pacing and per-QP counters
 * hook in), hand the frames to the wire (tx_burst() when the wire has it,
 * tx() per frame otherwise), then write the CQEs. The frames stay in the
 * application's buffers until their CQEs are written, after the wire call.
 * A WQE in error ends a burst: the frames before it are sent, then it is
 * completed with its error and the QP moves to ERR. Engine thread only.
 */

#include <errno.h>
#include <string.h>

#include "swv_engine.h"

static inline void
sq_complete(struct swv_qp *qp, uint64_t wr_id, enum ibv_wc_status status,
	    uint32_t len)
{
	swv_cq_write(qp->dev->pend, qp->scq, wr_id, status, false, len,
		     qp->ibv_qp.qp_num, 0);
}

/*
 * Only from RTS, the state it sent in: a RESET or ERR the control path
 * stored meanwhile stands. The state first: swv_modify_qp() reads it after
 * its own stores. The full profile shows it in ibv_qp.state; the mlx5
 * profile does not: libibverbs changes a QP's state field only in
 * ibv_modify_qp() and ibv_query_qp(), never when the device moves it, so
 * a driver sees a ConnectX's ERR by its error completion alone.
 */
static void
qp_to_err(struct swv_qp *qp)
{
	uint32_t st = IBV_QPS_RTS;

	if (!__atomic_compare_exchange_n(&qp->state, &st, IBV_QPS_ERR, false,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	if (!qp->dev->strict)
		SWV_STORE_REL(&qp->ibv_qp.state, IBV_QPS_ERR);
	if (qp->has_rq)
		SWV_STORE_REL(&qp->rq.state, SWV_RQ_ERR);
}

static unsigned int
sq_flush(struct swv_qp *qp)
{
	struct swv_wq_ring *r = &qp->sq;
	unsigned int n = 0;

	while (swv_ring_avail(r) > 0 && swv_cq_room(qp->scq) > 0) {
		sq_complete(qp, swv_wqe_wr_id(r, r->ctail),
			    IBV_WC_WR_FLUSH_ERR, 0);
		r->ctail++;
		swv_ring_consumed(qp->dev->pend, r);
		n++;
	}
	return n;
}

int
swv_qp_sq_held(struct ibv_qp *ibqp, uint32_t *held)
{
	struct swv_qp *qp;

	if (ibqp == NULL || held == NULL)
		return EINVAL;
	qp = to_swv_qp(ibqp);
	if (qp->is_hash)
		return EINVAL;
	/* done is published after the pass's CQEs: those are in the CQ. */
	*held = qp->sq.head - SWV_LOAD_ACQ(&qp->sq.done);
	return 0;
}

/* Frames and their iovecs gathered per burst, at most. */
#define SWV_TX_BURST SWV_RX_BURST
#define SWV_TX_BURST_IOV (2 * SWV_TX_BURST + SWV_MAX_SGE)

/*
 * Check a send WQE's SGEs and gather them into iov. *lenp gets the frame
 * length, kept at most SWV_MAX_FRAME while adding (no wrap).
 */
static inline enum ibv_wc_status
sq_gather(const struct ibv_sge *sge, uint32_t nsge, struct ibv_pd *pd,
	  struct iovec *iov, uint32_t *lenp)
{
	uint32_t i, len = 0;

	for (i = 0; i < nsge; i++) {
		if (SWV_UNLIKELY(swv_sge_check(&sge[i], pd, false) == NULL)) {
			swv_mr_access_error(&sge[i]);
			return IBV_WC_LOC_PROT_ERR;
		}
		if (SWV_UNLIKELY(sge[i].length > SWV_MAX_FRAME - len))
			return IBV_WC_LOC_LEN_ERR;
		iov[i].iov_base = (void *)(uintptr_t)sge[i].addr;
		iov[i].iov_len = sge[i].length;
		len += sge[i].length;
	}
	*lenp = len;
	return len == 0 ? IBV_WC_LOC_LEN_ERR : IBV_WC_SUCCESS;
}

/*
 * IBV_SEND_IP_CSUM: the frame's iovecs (n at iov) become its headers with
 * their checksums filled, in @hdr, then the rest of the frame; the
 * application's buffer is not written, as a NIC computes on its copy. A
 * frame with nothing to fill (not IP, short, a bad header) goes as it is.
 * Return: the iovecs the frame has now.
 */
static uint32_t
sq_csum(struct iovec *iov, uint32_t n, uint32_t len, uint8_t *hdr)
{
	struct iovec out[SWV_MAX_SGE + 1];
	int k;

	k = swv_tx_csum_fill(iov, (int)n, len, hdr, out);
	if (k <= 0)
		return n;
	memcpy(iov, out, sizeof(out[0]) * (uint32_t)k);
	return (uint32_t)k;
}

/* The WQEs come from the application's core: fetch the first ones. */
static inline void
sq_prefetch(struct swv_qp *qp, uint32_t tail, uint32_t avail)
{
	const struct swv_wq_ring *r = &qp->sq;
	uint32_t i;

	SWV_PREFETCH_W(swv_cq_line(qp->scq, qp->scq->ehead + SWV_PF_CQE));
	for (i = 0; i < SWV_PF_WQE && i < avail; i++)
		if (i == 0 || swv_wqe_new_line(r, tail + i))
			__builtin_prefetch(swv_wqe_line(r, tail + i));
	for (i = 0; i < SWV_PF_BUF && i < avail; i++)
		__builtin_prefetch(swv_wqe_addr(r, tail + i));
}

/*
 * The gate between gathering and the wire: how many of the @n gathered
 * frames may go out now, in order; the others stay posted (their WQEs are
 * not taken) and are gathered again on a later pass.
 *
 * Per-QP rate limiting (pacing.c) and per-QP counters go here, and only
 * here: every frame any QP sends passes this call once. An unpaced QP
 * costs one branch.
 */
static inline unsigned int
tx_gate(struct swv_qp *qp, const struct swv_frame *fr, unsigned int n)
{
	if (SWV_LIKELY(qp->pace_rate == 0))
		return n;
	return swv_pace_gate(qp, fr, n);
}

/*
 * Hand @n frames to the wire. A wire with tx_burst() takes all of them;
 * with tx() alone each frame is a call, and the wire may stop the burst
 * (EAGAIN: no room now, the rest is retried later), drop a frame longer
 * than its link's MTU (EMSGSIZE: the port drops it and counts it in
 * tx_mtu_dropped; its WQE completes as sent, as on a ConnectX), or
 * refuse a frame for good (any other error): that frame's bad[] is set,
 * *nbad is 1 and the burst ends with it: its WQE completes with
 * IBV_WC_GENERAL_ERR and the QP moves to ERR, the frames behind it are
 * flushed.
 * Return: the frames the wire took or refused, from the first.
 */
static inline unsigned int
tx_wire(struct swv_wire *wire, const struct swv_frame *fr, unsigned int n,
	uint8_t *bad, unsigned int *nbad)
{
	unsigned int k;
	int ret;

	if (SWV_LIKELY(wire->ops->tx_burst != NULL)) {
		wire->ops->tx_burst(wire, fr, n);
		return n;
	}
	for (k = 0; k < n; k++) {
		ret = wire->ops->tx(wire, fr[k].iov, fr[k].iovcnt, fr[k].len);
		bad[k] = 0;
		if (SWV_LIKELY(ret == 0))
			continue;
		if (ret == EAGAIN)
			break;
		if (ret == EMSGSIZE) {
			wire->dev->acc.tx_mtu_dropped++;
			wire->dev->acc.tx_mtu_dropped_bytes += fr[k].len;
			continue;
		}
		bad[k] = 1;
		*nbad = 1;
		return k + 1;
	}
	return k;
}

/*
 * Drain up to @avail WQEs of an RTS QP's send queue.
 * Return: the WQEs taken.
 */
static unsigned int
sq_drain(struct swv_qp *qp, uint32_t avail)
{
	struct swv_device *dev = qp->dev;
	struct swv_wire *wire = dev->wire;
	struct swv_wq_ring *r = &qp->sq;
	struct ibv_pd *pd = qp->ibv_qp.pd;
	/* tx() may fail any frame: each one needs room for a CQE then */
	bool per_frame = wire->ops->tx_burst == NULL;
	struct swv_frame fr[SWV_TX_BURST];
	struct iovec iov[SWV_TX_BURST_IOV];
	uint8_t bad[SWV_TX_BURST];
	uint8_t sigk[SWV_TX_BURST];	/* the signaled frames, ascending */
	/* headers of IBV_SEND_IP_CSUM frames, checksums filled */
	uint8_t csum_hdr[SWV_TX_BURST][SWV_CSUM_HDR_MAX];
	const struct ibv_sge *sge;
	struct ibv_sge one;
	uint32_t nsge, flags;
	enum ibv_wc_status st = IBV_WC_SUCCESS;
	uint32_t tail = r->ctail, room, nb, niov, len, k, ncqe, nsig, s;
	unsigned int n = 0, go, sent, nbad;
	uint64_t bytes, gbytes;

	sq_prefetch(qp, tail, avail);
	while (n < avail && st == IBV_WC_SUCCESS) {
		/*
		 * Room for the CQEs of the burst: one per signaled WQE or
		 * WQE in error (a fresh look at the CQ when low). A WQE is
		 * taken only while one is left for it.
		 */
		room = swv_cq_room(qp->scq);
		if (room < SWV_TX_BURST + 1) {
			qp->scq->etail = SWV_LOAD_ACQ(&qp->scq->tail);
			room = swv_cq_room(qp->scq);
		}
		if (room == 0)
			break;
		ncqe = 0;
		nb = 0;
		niov = 0;
		nsig = 0;
		gbytes = 0;
		while (n + nb < avail && nb < SWV_TX_BURST && ncqe < room &&
		       niov + SWV_MAX_SGE + 1 <= SWV_TX_BURST_IOV) {
			if (n + nb + SWV_PF_WQE < avail &&
			    swv_wqe_new_line(r, tail + nb + SWV_PF_WQE))
				__builtin_prefetch(swv_wqe_line(r, tail + nb +
								SWV_PF_WQE));
			if (SWV_LIKELY(n + nb + SWV_PF_BUF < avail))
				__builtin_prefetch(swv_wqe_addr(r, tail + nb +
								SWV_PF_BUF));
			nsge = swv_wqe_read(r, tail + nb, &one, &sge, &flags);
			st = sq_gather(sge, nsge, pd, &iov[niov], &len);
			if (SWV_UNLIKELY(st != IBV_WC_SUCCESS))
				break;
			if (SWV_UNLIKELY(flags & SWV_WQE_IP_CSUM))
				nsge = sq_csum(&iov[niov], nsge, len,
					       csum_hdr[nb]);
			fr[nb].iov = &iov[niov];
			fr[nb].iovcnt = (int)nsge;
			fr[nb].len = len;
			niov += nsge;
			gbytes += len;
			if (flags & SWV_WQE_SIGNALED)
				sigk[nsig++] = (uint8_t)nb;
			ncqe += (per_frame || (flags & SWV_WQE_SIGNALED)) ?
				1 : 0;
			nb++;
		}
		go = nb > 0 ? tx_gate(qp, fr, nb) : 0;
		sent = 0;
		nbad = 0;
		if (go > 0) {
			/*
			 * Keep the burst's CQE slots from frames that the wire
			 * brings straight back (loop, pair) into an RQ on the
			 * same CQ.
			 */
			qp->scq->reserved = ncqe +
				(st != IBV_WC_SUCCESS ? 1 : 0);
			sent = tx_wire(wire, fr, go, bad, &nbad);
			qp->scq->reserved = 0;
			if (SWV_UNLIKELY(sent < go && qp->pace_rate != 0))
				swv_pace_refund(qp, &fr[sent], go - sent);
		}
		if (SWV_LIKELY(sent == nb && nbad == 0)) {
			/* All out: CQEs for the signaled ones only. */
			for (s = 0; s < nsig; s++)
				sq_complete(qp, swv_wqe_wr_id(r, tail + sigk[s]),
					    IBV_WC_SUCCESS, fr[sigk[s]].len);
			bytes = gbytes;
		} else {
			bytes = 0;
			for (k = 0, s = 0; k < sent; k++) {
				bool sig = s < nsig && sigk[s] == k;

				s += sig;
				if (SWV_UNLIKELY(nbad > 0 && bad[k])) {
					dev->acc.tx_errors++;
					swv_qp_count(&qp->hw.tx_errors, 1);
					sq_complete(qp,
						    swv_wqe_wr_id(r, tail + k),
						    IBV_WC_GENERAL_ERR, 0);
					continue;
				}
				bytes += fr[k].len;
				if (sig)
					sq_complete(qp,
						    swv_wqe_wr_id(r, tail + k),
						    IBV_WC_SUCCESS, fr[k].len);
			}
		}
		if (sent > 0) {
			dev->acc.tx_frames += sent - nbad;
			dev->acc.tx_bytes += bytes;
			swv_qp_count(&qp->hw.tx_frames, sent - nbad);
			swv_qp_count(&qp->hw.tx_bytes, bytes);
			swv_dev_dirty(dev);
			tail += sent;
			n += sent;
		}
		if (SWV_UNLIKELY(nbad > 0)) {
			/*
			 * The wire refused a frame for good: it was the
			 * burst's last, and the QP goes to ERR (the WQEs behind
			 * it are flushed on the next pass).
			 */
			qp_to_err(qp);
			break;
		}
		if (sent < nb)
			break;	/* gate or wire: the rest on a later pass */
		if (SWV_UNLIKELY(st != IBV_WC_SUCCESS)) {
			/* A local error moves the QP to ERR. */
			dev->acc.tx_errors++;
			swv_qp_count(&qp->hw.tx_errors, 1);
			swv_dev_dirty(dev);
			sq_complete(qp, swv_wqe_wr_id(r, tail), st, 0);
			qp_to_err(qp);
			tail++;
			n++;
		}
	}
	if (n > 0) {
		r->ctail = tail;
		swv_ring_consumed(qp->dev->pend, r);
	}
	return n;
}

unsigned int
swv_qp_process(struct swv_qp *qp, unsigned int budget)
{
	uint32_t state = SWV_LOAD_ACQ(&qp->state);
	uint32_t avail;
	unsigned int n;

	if (state == IBV_QPS_ERR) {
		n = sq_flush(qp);
		if (qp->has_rq)
			n += swv_rq_flush(qp->dev->pend, &qp->rq);
		return n;
	}
	if (state != IBV_QPS_RTS)
		return 0;
	/*
	 * Paced, or its limit changed (pacing.c): a QP that waits on the
	 * wheel is passed over with this look at its own line.
	 */
	if (SWV_UNLIKELY(((SWV_LOAD(&qp->pace_gen) ^ qp->pace_seen) |
			  qp->pace_rate) != 0)) {
		if (SWV_LOAD(&qp->pace_gen) != qp->pace_seen) {
			if (!swv_pace_visit(qp))
				return 0;
		} else if (qp->pace_parked) {
			return 0;
		}
	}
	avail = swv_ring_avail(&qp->sq);
	if (avail == 0)
		return 0;
	return sq_drain(qp, avail > budget ? budget : avail);
}

/*
 * A frame a wire dropped with its link down (swv_wire.h): counted on the
 * device's port, as the send drain counts what it sends.
 */
void
swv_wire_tx_link_down(struct swv_wire *wire, uint32_t len)
{
	wire->dev->acc.tx_link_down++;
	wire->dev->acc.tx_link_down_bytes += len;
	swv_dev_dirty(wire->dev);
}
