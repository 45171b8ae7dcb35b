/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The engine: the one thread per process that is the "NIC" of every swverbs
 * device. Each loop, for each device: wire Rx (steering, scatter into posted
 * receive WQEs, CQEs), send queue drain (gather, wire Tx, CQEs), wire Tx
 * flush, and every ~10 ms a link check that raises async events.
 *
 * It busy-polls while it finds work; after SWV_IDLE_SPINS empty loops it
 * sleeps in ppoll() on the wires' rx_fd()s with a timeout that doubles from
 * 20 us to 1 ms, so an idle process costs ~no CPU and a posted WQE waits at
 * most ~1 ms.
 *
 * The engine is the only RCU reader (QSBR): it reports a quiescent state
 * every loop and is offline while it sleeps. The control path publishes with
 * rcu_assign_pointer() / RCU lists and frees after synchronize_rcu().
 */

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "swv_priv.h"

#define SWV_RX_BUDGET 64
#define SWV_TX_BUDGET 64
#define SWV_IDLE_SPINS 256
#define SWV_SLEEP_MIN_NS 20000ull
#define SWV_SLEEP_MAX_NS 1000000ull
#define SWV_LINK_CHECK_NS 10000000ull
#define SWV_DEEP_SLEEP_NS 100000000ull	/* link checks while asleep */
#define SWV_MAX_FDS 64
/* Prefetch distances, in WQEs or CQEs ahead of the current one. */
#define SWV_PF_WQE 16
#define SWV_PF_BUF 4
#define SWV_PF_CQE 16

uint32_t swv_engine_asleep;
uint64_t swv_engine_bell_wakes;

static struct {
	pthread_t thread;
	int bell_fd;			/**< eventfd: doorbell while asleep */
	bool running;
	uint32_t stop;
	int cpu;			/**< -1: not pinned */
	unsigned int ndev;
	struct cds_list_head devs;	/**< swv_device.eng_node (RCU) */
} swv_engine = {
	.cpu = -1,
	.bell_fd = -1,
	.devs = CDS_LIST_HEAD_INIT(swv_engine.devs),
};

/*
 * Receive.
 */

/* Copy @len bytes of the frame, from byte @off, to @dst. */
static inline void
iov_copy(uint8_t *dst, const struct iovec *iov, int iovcnt, uint32_t off,
	 uint32_t len)
{
	int i;

	for (i = 0; i < iovcnt && len > 0; i++) {
		uint32_t l = (uint32_t)iov[i].iov_len;
		uint32_t n;

		if (off >= l) {
			off -= l;
			continue;
		}
		n = l - off < len ? l - off : len;
		memcpy(dst, (const uint8_t *)iov[i].iov_base + off, n);
		dst += n;
		len -= n;
		off = 0;
	}
}

static inline void
rq_complete(struct swv_rq *rq, uint64_t wr_id, enum ibv_wc_status status,
	    uint32_t len, uint32_t tag)
{
	struct swv_cq *cq = rq->cq;
	struct swv_cqe *c = swv_cq_slot(cq);

	c->wr_id = wr_id;
	c->ts = cq->want_ts ? swv_cq_ts() : 0;
	c->byte_len = len;
	c->qp_num = rq->num;
	c->flow_tag = tag;
	c->status = (uint8_t)status;
	c->opcode = IBV_WC_RECV;
	c->rsvd = 0;
	swv_cq_commit(cq);
}

/* Take the WQE at the ring's ctail. */
static inline void
rq_take(struct swv_rq *rq)
{
	rq->ring.ctail++;
	swv_ring_consumed(&rq->ring);
}

/*
 * Count a received frame and its outcome, before its CQE (if any) is
 * written: a publication never shows a completion without its count.
 * SNIFFER copies (count false) are not counted.
 */
static inline void
rx_count(struct swv_device *dev, uint32_t len, uint64_t *outcome, bool count)
{
	if (!count)
		return;
	dev->acc.rx_frames++;
	dev->acc.rx_bytes += len;
	(*outcome)++;
	swv_dev_dirty(dev);
}

/* Scatter a frame into the next WQE of qp's receive queue (or, for a hash
 * QP, of the WQ its RSS hash selects), and complete it with tag.
 */
static inline void
rx_deliver(struct swv_device *dev, struct swv_qp *qp,
	   const struct swv_pkt *pkt, const struct iovec *iov, int iovcnt,
	   uint32_t len, uint32_t tag, bool count)
{
	const struct swv_wqe *w;
	struct swv_rq *rq;
	uint32_t i, tail, left, off, total;
	uint64_t wr_id;

	if (qp->is_hash) {
		struct swv_ind_table *t = qp->ind;
		uint32_t h = t->mask == 0 ? 0 : swv_rss_hash(qp, pkt);

		rq = &t->wqs[h & t->mask]->rq;
	} else {
		rq = &qp->rq;
	}
	if (SWV_UNLIKELY(SWV_LOAD_ACQ(&rq->state) != SWV_RQ_READY ||
			 swv_ring_avail(&rq->ring) == 0 ||
			 swv_cq_room(rq->cq) <= rq->cq->reserved)) {
		rx_count(dev, len, &dev->acc.rx_out_of_buffer, count);
		return;
	}
	tail = rq->ring.ctail;
	w = swv_ring_slot(&rq->ring, tail);
	/*
	 * The next frames most likely land in the next WQEs, their buffers
	 * and the next CQEs: start fetching them (the slots were written by
	 * the application's core; none past the posted ones, which the
	 * application may be writing).
	 */
	if ((int32_t)(rq->ring.chead - (tail + SWV_PF_WQE)) > 0)
		__builtin_prefetch(swv_ring_slot(&rq->ring,
						 tail + SWV_PF_WQE));
	if ((int32_t)(rq->ring.chead - (tail + SWV_PF_BUF)) > 0)
		SWV_PREFETCH_W((const void *)(uintptr_t)
			       swv_ring_slot(&rq->ring, tail + SWV_PF_BUF)->
			       sge[0].addr);
	SWV_PREFETCH_W(&rq->cq->cqes[(rq->cq->ehead + SWV_PF_CQE) &
				     rq->cq->mask]);
	wr_id = w->wr_id;
	/* Check every SGE before writing a byte. */
	total = 0;
	for (i = 0; i < w->num_sge; i++) {
		if (SWV_UNLIKELY(swv_sge_check(&w->sge[i], rq->pd, true) ==
				 NULL)) {
			rx_count(dev, len, &dev->acc.rx_errors, count);
			rq_take(rq);
			rq_complete(rq, wr_id, IBV_WC_LOC_PROT_ERR, 0, 0);
			rq->to_err(rq);
			return;
		}
		total += w->sge[i].length;
	}
	if (SWV_UNLIKELY(total < len)) {
		rx_count(dev, len, &dev->acc.rx_errors, count);
		rq_take(rq);
		rq_complete(rq, wr_id, IBV_WC_LOC_LEN_ERR, 0, 0);
		return;
	}
	/* Scatter. */
	if (SWV_LIKELY(iovcnt == 1 && w->sge[0].length >= len)) {
		memcpy((uint8_t *)(uintptr_t)w->sge[0].addr, iov[0].iov_base,
		       len);
	} else {
		left = len;
		off = 0;
		for (i = 0; left > 0; i++) {
			uint32_t n = w->sge[i].length < left ?
				     w->sge[i].length : left;

			iov_copy((uint8_t *)(uintptr_t)w->sge[i].addr, iov,
				 iovcnt, off, n);
			off += n;
			left -= n;
		}
	}
	rx_count(dev, len, &dev->acc.rx_delivered, count);
	rq_take(rq);
	rq_complete(rq, wr_id, IBV_WC_SUCCESS, len, tag);
}

/* A copy of the frame for each SNIFFER rule's QP. */
static void
rx_sniff(struct swv_device *dev, const struct swv_sniff *sn,
	 const struct swv_pkt *pkt, const struct iovec *iov, int iovcnt,
	 uint32_t len)
{
	uint32_t i;

	for (i = 0; i < sn->n; i++)
		rx_deliver(dev, sn->qp[i], pkt, iov, iovcnt, len, 0, false);
}

/* Parse the first bytes of a frame. */
static inline void
rx_parse(struct swv_pkt *pkt, const struct iovec *iov, int iovcnt,
	 uint32_t len)
{
	uint8_t hbuf[SWV_HDR_COPY];
	const uint8_t *hdr;
	uint32_t hlen;

	hlen = len < SWV_HDR_COPY ? len : SWV_HDR_COPY;
	if (SWV_LIKELY(iovcnt >= 1 && iov[0].iov_len >= hlen)) {
		/* Parse in place: the frame outlives this call. */
		hdr = iov[0].iov_base;
	} else {
		iov_copy(hbuf, iov, iovcnt, 0, hlen);
		hdr = hbuf;
	}
	swv_parse(pkt, hdr, hlen);
}

/*
 * Whether the kernel netdev in front of an mlx5-profile af_packet port
 * keeps the frame before leftovers rules see it: its own MAC, broadcast.
 */
static inline bool
rx_netdev_takes(const struct swv_device *dev, const struct swv_pkt *pkt)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	const uint8_t *d = pkt->key.k.outer.dmac;

	return memcmp(d, dev->netdev_mac, 6) == 0 || memcmp(d, bcast, 6) == 0;
}

/* Sniffer copies, then what rule f (or no rule) says. */
static inline void
rx_steered(struct swv_device *dev, const struct swv_sniff *sn,
	   const struct swv_flow *f, const struct swv_pkt *pkt,
	   const struct iovec *iov, int iovcnt, uint32_t len)
{
	if (SWV_UNLIKELY(sn != NULL))
		rx_sniff(dev, sn, pkt, iov, iovcnt, len);
	if (SWV_UNLIKELY(f != NULL && f->rank >= SWV_RANK_LEFTOVERS) &&
	    dev->netdev && rx_netdev_takes(dev, pkt))
		f = NULL;	/* the kernel's, not the port's */
	if (SWV_UNLIKELY(f == NULL)) {
		rx_count(dev, len, &dev->acc.rx_no_match, true);
		return;
	}
	/* COUNT: every frame the rule wins, whatever happens next. */
	if (f->cnt != NULL)
		swv_tally_add(swv_flow_tally(f), len);
	if (SWV_UNLIKELY(f->actions & SWV_ACT_DROP)) {
		rx_count(dev, len, &dev->acc.rx_dropped, true);
		return;
	}
	rx_deliver(dev, f->qp, pkt, iov, iovcnt, len, f->tag, true);
}

/*
 * A frame shorter than the wire's minimum (a runt) is dropped before it is
 * parsed, counted as an Rx error, as a NIC's MAC drops it.
 */
static inline bool
rx_runt(struct swv_device *dev, uint32_t len)
{
	if (SWV_LIKELY(len >= dev->wire->min_frame))
		return false;
	dev->acc.rx_runts++;
	rx_count(dev, len, &dev->acc.rx_errors, true);
	return true;
}

void
swv_device_rx(struct swv_device *dev, const struct iovec *iov, int iovcnt,
	      uint32_t len)
{
	const struct swv_flow *f;
	struct swv_pkt pkt;

	if (SWV_UNLIKELY(rx_runt(dev, len)))
		return;
	rx_parse(&pkt, iov, iovcnt, len);
	f = swv_classify(dev, &pkt);
	rx_steered(dev, rcu_dereference(dev->sniff), f, &pkt, iov, iovcnt,
		   len);
}

/* Frames ahead whose first line the parse loop fetches. */
#define SWV_PF_PARSE 4

void
swv_device_rx_burst(struct swv_device *dev, const struct swv_frame *fr,
		    unsigned int n)
{
	const struct swv_sniff *sn = rcu_dereference(dev->sniff);
	const struct swv_flow *f[SWV_RX_BURST];
	struct swv_pkt pkt[SWV_RX_BURST];
	unsigned int i, k, m;

	for (i = 0; i < n; i += m) {
		m = n - i < SWV_RX_BURST ? n - i : SWV_RX_BURST;
		for (k = 0; k < m; k++)
			if (SWV_UNLIKELY(fr[i + k].len < dev->wire->min_frame))
				break;
		if (SWV_UNLIKELY(k < m)) {
			/* A runt among them: this slice frame by frame. */
			for (k = 0; k < m; k++)
				swv_device_rx(dev, fr[i + k].iov,
					      fr[i + k].iovcnt, fr[i + k].len);
			continue;
		}
		for (k = 0; k < m && k < SWV_PF_PARSE; k++)
			__builtin_prefetch(fr[i + k].iov[0].iov_base);
		for (k = 0; k < m; k++) {
			if (k + SWV_PF_PARSE < m)
				__builtin_prefetch(fr[i + k + SWV_PF_PARSE].
						   iov[0].iov_base);
			rx_parse(&pkt[k], fr[i + k].iov, fr[i + k].iovcnt,
				 fr[i + k].len);
		}
		swv_classify_burst(dev, pkt, f, m);
		/* In arrival order: per-flow FIFO as with single frames. */
		for (k = 0; k < m; k++)
			rx_steered(dev, sn, f[k], &pkt[k], fr[i + k].iov,
				   fr[i + k].iovcnt, fr[i + k].len);
	}
}

unsigned int
swv_rq_flush(struct swv_rq *rq)
{
	unsigned int n = 0;

	while (swv_ring_avail(&rq->ring) > 0 && swv_cq_room(rq->cq) > 0) {
		rq_complete(rq, swv_ring_slot(&rq->ring,
					      rq->ring.ctail)->wr_id,
			    IBV_WC_WR_FLUSH_ERR, 0, 0);
		rq_take(rq);
		n++;
	}
	return n;
}

/*
 * Send.
 */
static inline void
sq_complete(struct swv_qp *qp, uint64_t wr_id, enum ibv_wc_status status,
	    uint32_t len)
{
	struct swv_cq *cq = qp->scq;
	struct swv_cqe *c = swv_cq_slot(cq);

	c->wr_id = wr_id;
	c->ts = cq->want_ts ? swv_cq_ts() : 0;
	c->byte_len = len;
	c->qp_num = qp->ibv_qp.qp_num;
	c->flow_tag = 0;
	c->status = (uint8_t)status;
	c->opcode = IBV_WC_SEND;
	c->rsvd = 0;
	swv_cq_commit(cq);
}

static void
qp_to_err(struct swv_qp *qp)
{
	SWV_STORE(&qp->state, IBV_QPS_ERR);
	SWV_STORE(&qp->ibv_qp.state, IBV_QPS_ERR);
	if (qp->has_rq)
		SWV_STORE(&qp->rq.state, SWV_RQ_ERR);
}

static unsigned int
sq_flush(struct swv_qp *qp)
{
	struct swv_wq_ring *r = &qp->sq;
	unsigned int n = 0;

	while (swv_ring_avail(r) > 0 && swv_cq_room(qp->scq) > 0) {
		sq_complete(qp, swv_ring_slot(r, r->ctail)->wr_id,
			    IBV_WC_WR_FLUSH_ERR, 0);
		r->ctail++;
		swv_ring_consumed(r);
		n++;
	}
	return n;
}

/* Frames and their iovecs gathered per tx_burst() call, at most. */
#define SWV_TX_BURST SWV_RX_BURST
#define SWV_TX_BURST_IOV (2 * SWV_TX_BURST + SWV_MAX_SGE)

/*
 * Drain up to avail send WQEs (RTS) to a wire with tx_burst(): gather a
 * burst of frames, hand it to the wire in one call (for a pair wire, the
 * peer steers it as a burst), then complete the WQEs. The frames stay in
 * the application's buffers until their CQEs are written, after the call.
 * A WQE in error ends a burst: the frames before it are sent, then it is
 * completed with its error and the QP moves to ERR, as frame by frame.
 */
/*
 * Check a send WQE's SGEs and gather them into iov. *lenp gets the frame
 * length, kept at most SWV_MAX_FRAME while adding (no wrap).
 */
static inline enum ibv_wc_status
sq_gather(const struct swv_wqe *w, struct ibv_pd *pd, struct iovec *iov,
	  uint32_t *lenp)
{
	uint32_t i, len = 0;

	for (i = 0; i < w->num_sge; i++) {
		if (SWV_UNLIKELY(swv_sge_check(&w->sge[i], pd, false) ==
				 NULL))
			return IBV_WC_LOC_PROT_ERR;
		if (SWV_UNLIKELY(w->sge[i].length > SWV_MAX_FRAME - len))
			return IBV_WC_LOC_LEN_ERR;
		iov[i].iov_base = (void *)(uintptr_t)w->sge[i].addr;
		iov[i].iov_len = w->sge[i].length;
		len += w->sge[i].length;
	}
	*lenp = len;
	return len == 0 ? IBV_WC_LOC_LEN_ERR : IBV_WC_SUCCESS;
}

/* The WQEs come from the application's core: fetch the first ones. */
static inline void
sq_prefetch(struct swv_qp *qp, uint32_t tail, uint32_t avail)
{
	const struct swv_wq_ring *r = &qp->sq;
	uint32_t i;

	SWV_PREFETCH_W(&qp->scq->cqes[(qp->scq->ehead + SWV_PF_CQE) &
				      qp->scq->mask]);
	for (i = 0; i < SWV_PF_WQE && i < avail; i++)
		__builtin_prefetch(swv_ring_slot(r, tail + i));
	for (i = 0; i < SWV_PF_BUF && i < avail; i++)
		__builtin_prefetch((const void *)(uintptr_t)
				   swv_ring_slot(r, tail + i)->sge[0].addr);
}

static unsigned int
sq_process_burst(struct swv_qp *qp, uint32_t avail)
{
	struct swv_device *dev = qp->dev;
	struct swv_wire *wire = dev->wire;
	struct swv_wq_ring *r = &qp->sq;
	struct ibv_pd *pd = qp->ibv_qp.pd;
	struct swv_frame fr[SWV_TX_BURST];
	struct iovec iov[SWV_TX_BURST_IOV];
	const struct swv_wqe *w;
	enum ibv_wc_status st = IBV_WC_SUCCESS;
	uint32_t tail = r->ctail, room, nb, niov, len, k, ncqe;
	uint64_t bytes;
	unsigned int n = 0;

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
		bytes = 0;
		while (n + nb < avail && nb < SWV_TX_BURST && ncqe < room &&
		       niov + SWV_MAX_SGE <= SWV_TX_BURST_IOV) {
			w = swv_ring_slot(r, tail + nb);
			if (n + nb + SWV_PF_WQE < avail)
				__builtin_prefetch(swv_ring_slot(r, tail + nb +
								 SWV_PF_WQE));
			if (SWV_LIKELY(n + nb + SWV_PF_BUF < avail))
				__builtin_prefetch((const void *)(uintptr_t)
					swv_ring_slot(r, tail + nb +
						      SWV_PF_BUF)->sge[0].addr);
			st = sq_gather(w, pd, &iov[niov], &len);
			if (SWV_UNLIKELY(st != IBV_WC_SUCCESS))
				break;
			fr[nb].iov = &iov[niov];
			fr[nb].iovcnt = (int)w->num_sge;
			fr[nb].len = len;
			niov += w->num_sge;
			bytes += len;
			ncqe += (w->flags & SWV_WQE_SIGNALED) ? 1 : 0;
			nb++;
		}
		if (nb > 0) {
			qp->scq->reserved = ncqe +
				(st != IBV_WC_SUCCESS ? 1 : 0);
			wire->ops->tx_burst(wire, fr, nb);
			qp->scq->reserved = 0;
			dev->acc.tx_frames += nb;
			dev->acc.tx_bytes += bytes;
			swv_dev_dirty(dev);
			for (k = 0; k < nb; k++) {
				w = swv_ring_slot(r, tail + k);
				if (w->flags & SWV_WQE_SIGNALED)
					sq_complete(qp, w->wr_id,
						    IBV_WC_SUCCESS, fr[k].len);
			}
			tail += nb;
			n += nb;
		}
		if (SWV_UNLIKELY(st != IBV_WC_SUCCESS)) {
			/* A local error moves the QP to ERR. */
			w = swv_ring_slot(r, tail);
			dev->acc.tx_errors++;
			swv_dev_dirty(dev);
			sq_complete(qp, w->wr_id, st, 0);
			qp_to_err(qp);
			tail++;
			n++;
		}
	}
	if (n > 0) {
		r->ctail = tail;
		swv_ring_consumed(r);
	}
	return n;
}

unsigned int
swv_qp_process(struct swv_qp *qp, unsigned int budget)
{
	struct swv_device *dev = qp->dev;
	struct swv_wire *wire = dev->wire;
	int (*tx)(struct swv_wire *, const struct iovec *, int, uint32_t) =
		wire->ops->tx;
	struct swv_wq_ring *r = &qp->sq;
	struct ibv_pd *pd = qp->ibv_qp.pd;
	struct iovec iov[SWV_MAX_SGE];
	const struct swv_wqe *w;
	uint32_t tail, avail, len;
	unsigned int n = 0;
	uint32_t state = SWV_LOAD_ACQ(&qp->state);
	enum ibv_wc_status st;
	uint64_t wr_id;
	uint32_t flags;
	int ret;

	if (state == IBV_QPS_ERR) {
		n = sq_flush(qp);
		if (qp->has_rq)
			n += swv_rq_flush(&qp->rq);
		return n;
	}
	if (state != IBV_QPS_RTS)
		return 0;
	avail = swv_ring_avail(r);
	if (avail == 0)
		return 0;
	if (avail > budget)
		avail = budget;
	if (wire->ops->tx_burst != NULL)
		return sq_process_burst(qp, avail);
	tail = r->ctail;
	sq_prefetch(qp, tail, avail);
	/* Each frame goes out with room for its CQE (checked below) kept. */
	qp->scq->reserved = 1;
	while (n < avail) {
		w = swv_ring_slot(r, tail);
		/* WQE slots ahead, and the frame data of nearer ones. */
		if (n + SWV_PF_WQE < avail)
			__builtin_prefetch(swv_ring_slot(r, tail + SWV_PF_WQE));
		if (SWV_LIKELY(n + SWV_PF_BUF < avail))
			__builtin_prefetch((const void *)(uintptr_t)
					   swv_ring_slot(r, tail + SWV_PF_BUF)->
					   sge[0].addr);
		/* Keep room for the CQE this WQE may need. */
		if (swv_cq_room(qp->scq) == 0)
			break;
		wr_id = w->wr_id;
		flags = w->flags;
		st = sq_gather(w, pd, iov, &len);
		if (SWV_LIKELY(st == IBV_WC_SUCCESS)) {
			ret = tx(wire, iov, (int)w->num_sge, len);
			if (ret == EAGAIN)
				break;	/* retried on a later loop */
			if (SWV_LIKELY(ret == 0)) {
				dev->acc.tx_frames++;
				dev->acc.tx_bytes += len;
				swv_dev_dirty(dev);
			} else {
				st = IBV_WC_GENERAL_ERR;
			}
		}
		tail++;
		n++;
		if (SWV_UNLIKELY(st != IBV_WC_SUCCESS)) {
			dev->acc.tx_errors++;
			swv_dev_dirty(dev);
			sq_complete(qp, wr_id, st, 0);
			if (st == IBV_WC_LOC_PROT_ERR ||
			    st == IBV_WC_LOC_LEN_ERR) {
				/* A local error moves the QP to ERR. */
				qp_to_err(qp);
				break;
			}
		} else if (flags & SWV_WQE_SIGNALED) {
			sq_complete(qp, wr_id, IBV_WC_SUCCESS, len);
		}
	}
	qp->scq->reserved = 0;
	if (n > 0) {
		r->ctail = tail;
		swv_ring_consumed(r);
	}
	return n;
}

/*
 * Publication.
 */
struct swv_pending swv_pend;

/* Add a device's pending counts to its published counters. */
static void
publish_counters(struct swv_device *dev)
{
	struct swv_port_counters *c = &dev->cnt, *a = &dev->acc;

	/*
	 * Totals before their parts: a reader that loads the parts, then
	 * (acquire) the totals, sees rx_frames >= the sum of the parts.
	 */
	SWV_STORE(&c->rx_frames, c->rx_frames + a->rx_frames);
	SWV_STORE(&c->rx_bytes, c->rx_bytes + a->rx_bytes);
	SWV_STORE(&c->tx_frames, c->tx_frames + a->tx_frames);
	SWV_STORE(&c->tx_bytes, c->tx_bytes + a->tx_bytes);
	SWV_STORE(&c->tx_errors, c->tx_errors + a->tx_errors);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	SWV_STORE(&c->rx_delivered, c->rx_delivered + a->rx_delivered);
	SWV_STORE(&c->rx_out_of_buffer,
		  c->rx_out_of_buffer + a->rx_out_of_buffer);
	SWV_STORE(&c->rx_no_match, c->rx_no_match + a->rx_no_match);
	SWV_STORE(&c->rx_errors, c->rx_errors + a->rx_errors);
	SWV_STORE(&c->rx_dropped, c->rx_dropped + a->rx_dropped);
	SWV_STORE(&c->rx_runts, c->rx_runts + a->rx_runts);
	memset(a, 0, sizeof(*a));
	dev->acc_dirty = false;
}

void
swv_publish(void)
{
	unsigned int i;

	for (i = 0; i < swv_pend.ndev; i++)
		publish_counters(swv_pend.dev[i]);
	/* Counters are visible before the completions that follow them. */
	for (i = 0; i < swv_pend.nring; i++) {
		struct swv_wq_ring *r = swv_pend.ring[i];

		SWV_STORE_REL(&r->tail, r->ctail);
		r->dirty = false;
	}
	for (i = 0; i < swv_pend.ncq; i++) {
		struct swv_cq *cq = swv_pend.cq[i];

		SWV_STORE_REL(&cq->head, cq->ehead);
		cq->dirty = false;
	}
	swv_pend.ndev = 0;
	swv_pend.nring = 0;
	swv_pend.ncq = 0;
	swv_pend.ts = 0;
}

/*
 * The loop.
 */
static inline uint64_t
engine_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Link state and speed; a wire gone for good (its interface deleted) makes
 * the link go down and raises IBV_EVENT_DEVICE_FATAL once, as a NIC that
 * is unplugged does.
 */
static void
link_check(struct swv_device *dev, uint64_t now)
{
	struct swv_wire *wire = dev->wire;
	bool gone;
	uint32_t up;

	dev->next_link_check = now + SWV_LINK_CHECK_NS;
	up = wire->ops->link_up(wire) ? 1 : 0;
	gone = wire->ops->gone != NULL && wire->ops->gone(wire);
	if (gone)
		up = 0;
	else
		SWV_STORE(&dev->speed, wire->ops->speed_mbps(wire));
	if (up != SWV_LOAD(&dev->link)) {
		SWV_STORE(&dev->link, up);
		swv_device_event(dev, up ? IBV_EVENT_PORT_ACTIVE :
				 IBV_EVENT_PORT_ERR);
	}
	if (SWV_UNLIKELY(gone && !SWV_LOAD(&dev->removed))) {
		SWV_STORE(&dev->removed, 1);
		swv_device_event(dev, IBV_EVENT_DEVICE_FATAL);
	}
}

static unsigned int
device_work(struct swv_device *dev, uint64_t now)
{
	struct swv_wire *wire = dev->wire;
	struct cds_list_head *node;
	struct swv_wq *wq;
	unsigned int n;

	/*
	 * Node by node, cds_list_entry() on real nodes only: the _entry
	 * iterators take the container of the head, which is no such struct
	 * (UBSan: misaligned member access).
	 */
	n = wire->ops->rx_burst(wire, SWV_RX_BUDGET);
	cds_list_for_each_rcu(node, &dev->qps)
		n += swv_qp_process(cds_list_entry(node, struct swv_qp, node),
				    SWV_TX_BUDGET);
	cds_list_for_each_rcu(node, &dev->wqs) {
		wq = cds_list_entry(node, struct swv_wq, node);
		if (SWV_UNLIKELY(SWV_LOAD(&wq->rq.state) == SWV_RQ_ERR))
			n += swv_rq_flush(&wq->rq);
	}
	wire->ops->tx_flush(wire);
	swv_publish();
	if (now >= dev->next_link_check)
		link_check(dev, now);
	return n;
}

static void
engine_sleep(uint64_t ns, bool bell)
{
	struct pollfd fds[SWV_MAX_FDS + 1];
	struct cds_list_head *node;
	struct swv_device *dev;
	struct timespec ts;
	uint64_t rings;
	nfds_t n = 0;
	int fd;

	cds_list_for_each_rcu(node, &swv_engine.devs) {
		dev = cds_list_entry(node, struct swv_device, eng_node);
		fd = dev->wire->ops->rx_fd(dev->wire);
		if (fd >= 0 && n < SWV_MAX_FDS) {
			fds[n].fd = fd;
			fds[n].events = POLLIN;
			fds[n].revents = 0;
			n++;
		}
	}
	if (bell) {
		fds[n].fd = swv_engine.bell_fd;
		fds[n].events = POLLIN;
		fds[n].revents = 0;
		n++;
	}
	ts.tv_sec = (time_t)(ns / 1000000000ull);
	ts.tv_nsec = (long)(ns % 1000000000ull);
	rcu_thread_offline();
	ppoll(fds, n, &ts, NULL);
	rcu_thread_online();
	if (bell) {
		if (fds[n - 1].revents & POLLIN)
			SWV_STORE(&swv_engine_bell_wakes,
				  swv_engine_bell_wakes + 1);
		SWV_STORE(&swv_engine_asleep, 0);
		if (read(swv_engine.bell_fd, &rings, sizeof(rings)) < 0)
			rings = 0;	/* nothing rang: EAGAIN */
	}
}

void
swv_engine_wake(void)
{
	uint64_t one = 1;

	if (__atomic_exchange_n(&swv_engine_asleep, 0, __ATOMIC_ACQ_REL) != 0 &&
	    write(swv_engine.bell_fd, &one, sizeof(one)) < 0)
		return;	/* the counter is full: the engine is woken anyway */
}

static unsigned int
engine_work(uint64_t now)
{
	struct cds_list_head *node;
	unsigned int work = 0;

	cds_list_for_each_rcu(node, &swv_engine.devs)
		work += device_work(cds_list_entry(node, struct swv_device,
						   eng_node), now);
	return work;
}

static void *
engine_main(void *arg)
{
	unsigned int work, idle = 0;
	uint64_t sleep_ns = SWV_SLEEP_MIN_NS, now;

	(void)arg;
	/* Short sleeps must stay short. */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	rcu_register_thread();
	while (!SWV_LOAD_ACQ(&swv_engine.stop)) {
		/*
		 * The clock only paces link checks: a coarse one (vDSO, a few
		 * ns, a tick's resolution) read every loop, so that under any
		 * load a link or MTU change is seen within SWV_LINK_CHECK_NS
		 * and a tick, plus one loop.
		 */
		now = engine_now();
		work = engine_work(now);
		rcu_quiescent_state();
		if (work > 0) {
			idle = 0;
			sleep_ns = SWV_SLEEP_MIN_NS;
			continue;
		}
		if (++idle < SWV_IDLE_SPINS)
			continue;
		if (sleep_ns < SWV_SLEEP_MAX_NS) {
			engine_sleep(sleep_ns, false);
			sleep_ns *= 2;
			if (sleep_ns > SWV_SLEEP_MAX_NS)
				sleep_ns = SWV_SLEEP_MAX_NS;
			continue;
		}
		/*
		 * Idle for over a millisecond: ask posters for a doorbell,
		 * look once more (a post may have raced with the flag), then
		 * sleep until the doorbell, a wire's fd or the next link check.
		 */
		SWV_STORE(&swv_engine_asleep, 1);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (SWV_LOAD_ACQ(&swv_engine.stop))
			break;
		now = engine_now();
		work = engine_work(now);
		if (work > 0) {
			SWV_STORE(&swv_engine_asleep, 0);
			idle = 0;
			sleep_ns = SWV_SLEEP_MIN_NS;
			continue;
		}
		rcu_quiescent_state();
		engine_sleep(SWV_DEEP_SLEEP_NS, true);
	}
	rcu_unregister_thread();
	return NULL;
}

/*
 * The engine's CPU set: the one CPU it is pinned to, or every CPU. Never the
 * creating thread's set: that is often an application thread pinned to its
 * own core (a DPDK lcore), which the engine would then share with it.
 */
static void
engine_cpuset(int cpu, cpu_set_t *set)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	long i;

	CPU_ZERO(set);
	if (cpu >= 0) {
		CPU_SET(cpu, set);
		return;
	}
	for (i = 0; i < ncpu && i < CPU_SETSIZE; i++)
		CPU_SET(i, set);
}

static int
engine_start(void)
{
	pthread_attr_t attr;
	cpu_set_t set;
	int ret;

	swv_engine.bell_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (swv_engine.bell_fd < 0)
		return errno;
	pthread_attr_init(&attr);
	engine_cpuset(swv_engine.cpu, &set);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	SWV_STORE(&swv_engine.stop, 0);
	ret = pthread_create(&swv_engine.thread, &attr, engine_main, NULL);
	pthread_attr_destroy(&attr);
	if (ret != 0) {
		close(swv_engine.bell_fd);
		swv_engine.bell_fd = -1;
		return ret;
	}
	pthread_setname_np(swv_engine.thread, "swv-engine");
	swv_engine.running = true;
	return 0;
}

int
swv_engine_add(struct swv_device *dev)
{
	int ret;

	if (swv_engine.ndev == 0 && !swv_engine.running) {
		ret = engine_start();
		if (ret != 0)
			return ret;
	}
	swv_engine.ndev++;
	dev->next_link_check = 0;
	cds_list_add_tail_rcu(&dev->eng_node, &swv_engine.devs);
	/* A new wire fd to sleep on, a pair peer's link to raise. */
	swv_engine_wake();
	return 0;
}

void
swv_engine_del(struct swv_device *dev)
{
	cds_list_del_rcu(&dev->eng_node);
	swv_engine_wake();
	synchronize_rcu();
	swv_engine.ndev--;
	if (swv_engine.ndev == 0 && swv_engine.running) {
		SWV_STORE_REL(&swv_engine.stop, 1);
		swv_engine_wake();
		pthread_join(swv_engine.thread, NULL);
		swv_engine.running = false;
		close(swv_engine.bell_fd);
		swv_engine.bell_fd = -1;
	}
}

int
swv_set_engine_cpu(int cpu)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	cpu_set_t set;
	int ret = 0;

	/*
	 * Not checked against the calling thread's affinity: that is often an
	 * application thread pinned to its own core, and the engine belongs
	 * on another one. A CPU the process may not use fails the engine's
	 * start, or here when it runs.
	 */
	if (cpu < -1 || (cpu >= 0 && (cpu >= CPU_SETSIZE || cpu >= ncpu)))
		return EINVAL;
	pthread_mutex_lock(&swv_lock);
	if (swv_engine.running) {
		engine_cpuset(cpu, &set);
		ret = pthread_setaffinity_np(swv_engine.thread, sizeof(set),
					     &set);
	}
	if (ret == 0)
		swv_engine.cpu = cpu;
	pthread_mutex_unlock(&swv_lock);
	return ret;
}
