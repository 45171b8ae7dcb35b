/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Wire Rx, the device side of a wire: a frame from the wire is checked
 * (runts, frames above the MTU), parsed once, looked up in the steering table, then its rule's
 * actions apply (sniffer copies, COUNT, DROP) and it is scattered into the
 * next posted receive WQE of the rule's QP (or the WQ its RSS hash picks)
 * and completed with a CQE. Bursts are parsed, then looked up together,
 * then delivered in arrival order. Engine thread only.
 */

#include <arpa/inet.h>
#include <string.h>

#include "swv_engine.h"

/*
 * swv_iov_copy() of the frame as a VLAN-stripping WQ writes it: @skip (0, or
 * the 4 bytes of a tag) bytes at offset 12 left out.
 */
static inline void
iov_copy_strip(uint8_t *dst, const struct iovec *iov, int iovcnt,
	       uint32_t off, uint32_t len, uint32_t skip)
{
	if (skip != 0 && off < 12) {
		uint32_t k = 12 - off < len ? 12 - off : len;

		swv_iov_copy(dst, iov, iovcnt, off, k);
		dst += k;
		off += k;
		len -= k;
	}
	if (len > 0)
		swv_iov_copy(dst, iov, iovcnt, off + skip, len);
}

/*
 * The receive offloads of a frame for a CQ of full CQEs: the checksum
 * status (on a receive queue that reports it, rq->csum: never a WQ of the
 * mlx5 profile), and the C-VLAN tag a stripping WQ takes off (its 4 bytes
 * go to *skip): only an 802.1Q tag first, an 802.1ad S-tag (0x88a8) first
 * is left in the frame. Steering has matched the tag already.
 */
static void
rx_offloads(const struct swv_rq *rq, const struct swv_pkt *pkt,
	    const struct iovec *iov, int iovcnt, uint32_t len,
	    struct swv_cqe_ol *ol, uint32_t *skip)
{
	const struct swv_hdr_key *o = &pkt->key.k.outer;

	ol->wc_flags = rq->csum && swv_rx_csum_ok(pkt, iov, iovcnt, len) ?
		       IBV_WC_IP_CSUM_OK : 0;
	ol->cvlan = 0;
	*skip = 0;
	if (SWV_LOAD(&rq->strip) && (o->cvlan & SWV_TAG_C) && len >= 18) {
		ol->cvlan = ntohs(o->vlan_tag);
		*skip = 4;
	}
}

static inline void
rq_complete(struct swv_pending *p, struct swv_rq *rq, uint64_t wr_id,
	    enum ibv_wc_status status, uint32_t len, uint32_t tag)
{
	swv_cq_write(p, rq->cq, wr_id, status, true, len, rq->num, tag);
}

/* Take the WQE at the ring's ctail. */
static inline void
rq_take(struct swv_pending *p, struct swv_rq *rq)
{
	rq->ring.ctail++;
	swv_ring_consumed(p, &rq->ring);
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
 * QP, of the WQ its RSS hash selects), and complete it with tag. Inlined
 * into its callers, as rx_steered() is (GCC keeps both out of line
 * otherwise): 6 % fewer instructions per frame (cachegrind,
 * bench_swverbs_lines inline).
 */
static inline __attribute__((always_inline)) void
rx_deliver(struct swv_device *dev, struct swv_qp *qp,
	   const struct swv_pkt *pkt, const struct iovec *iov, int iovcnt,
	   uint32_t len, uint32_t tag, bool count)
{
	struct swv_pending *p = dev->pend;
	const struct ibv_sge *sge;
	struct ibv_sge one;
	struct swv_rq *rq;
	uint32_t i, tail, left, off, total, nsge, flags, skip = 0;
	struct swv_cqe_ol ol = { 0, 0 };
	uint64_t wr_id;

	/*
	 * A hash QP is the one with an indirection table: its line is read
	 * anyway, so the Rx path of a hash QP reads and writes two lines of
	 * the QP, that one and its counts' (is_hash's line stays cold).
	 */
	if (qp->ind != NULL) {
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
		swv_qp_count(&qp->hw.rx_out_of_buffer, 1);
		return;
	}
	tail = rq->ring.ctail;
	/*
	 * The next frames most likely land in the next WQEs, their buffers
	 * and the next CQEs: start fetching them (the slots were written by
	 * the application's core; none past the posted ones, which the
	 * application may be writing).
	 */
	if (swv_cq_new_line(rq->cq, rq->cq->ehead + SWV_PF_CQE))
		SWV_PREFETCH_W(swv_cq_line(rq->cq,
					   rq->cq->ehead + SWV_PF_CQE));
	if ((int32_t)(rq->ring.chead - (tail + SWV_PF_WQE)) > 0 &&
	    swv_wqe_new_line(&rq->ring, tail + SWV_PF_WQE))
		__builtin_prefetch(swv_wqe_line(&rq->ring, tail + SWV_PF_WQE));
	if ((int32_t)(rq->ring.chead - (tail + SWV_PF_BUF)) > 0)
		SWV_PREFETCH_W(swv_wqe_addr(&rq->ring, tail + SWV_PF_BUF));
	nsge = swv_wqe_read(&rq->ring, tail, &one, &sge, &flags);
	/* Check every SGE before writing a byte. */
	total = 0;
	for (i = 0; i < nsge; i++) {
		if (SWV_UNLIKELY(swv_sge_check(&sge[i], rq->pd, true) ==
				 NULL)) {
			wr_id = swv_wqe_wr_id(&rq->ring, tail);
			rx_count(dev, len, &dev->acc.rx_errors, count);
			swv_qp_count(&qp->hw.rx_errors, 1);
			swv_mr_access_error(&sge[i]);
			rq_take(p, rq);
			rq_complete(p, rq, wr_id, IBV_WC_LOC_PROT_ERR, 0, 0);
			rq->to_err(rq);
			return;
		}
		total += sge[i].length;
	}
	wr_id = swv_wqe_wr_id(&rq->ring, tail);
	if (SWV_UNLIKELY(rq->cq->want_ol))
		rx_offloads(rq, pkt, iov, iovcnt, len, &ol, &skip);
	if (SWV_UNLIKELY(total < len - skip)) {
		rx_count(dev, len, &dev->acc.rx_errors, count);
		swv_qp_count(&qp->hw.rx_errors, 1);
		rq_take(p, rq);
		rq_complete(p, rq, wr_id, IBV_WC_LOC_LEN_ERR, 0, 0);
		return;
	}
	/* Scatter. */
	if (SWV_LIKELY(iovcnt == 1 && sge[0].length >= len && skip == 0)) {
		memcpy((uint8_t *)(uintptr_t)sge[0].addr, iov[0].iov_base,
		       len);
	} else {
		left = len - skip;
		off = 0;
		for (i = 0; left > 0; i++) {
			uint32_t n = sge[i].length < left ?
				     sge[i].length : left;

			iov_copy_strip((uint8_t *)(uintptr_t)sge[i].addr, iov,
				       iovcnt, off, n, skip);
			off += n;
			left -= n;
		}
	}
	rx_count(dev, len, &dev->acc.rx_delivered, count);
	swv_qp_count(&qp->hw.rx_frames, 1);
	swv_qp_count(&qp->hw.rx_bytes, len);
	rq_take(p, rq);
	swv_cq_write_ol(p, rq->cq, wr_id, IBV_WC_SUCCESS, true, len - skip,
			rq->num, tag, rq->cq->want_ol ? &ol : NULL);
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
		swv_iov_copy(hbuf, iov, iovcnt, 0, hlen);
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
static inline __attribute__((always_inline)) void
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

/* Whether a frame of len bytes is one the port takes, by its length. */
static inline bool
rx_len_ok(const struct swv_device *dev, uint32_t len)
{
	return len >= dev->wire->min_frame &&
	       len <= SWV_LOAD(&dev->rx_max_frame);
}

/*
 * The Rx MTU follows the wire's (no rx_mtu set), and a frame came above
 * it: the MTU may have been raised from outside since the link check read
 * it (every SWV_LINK_CHECK_NS of the engine's coarse clock), where a NIC's
 * port takes a new MTU at once (a driver's ioctl on its netdev, then a
 * frame of the new size). Read it again now: SWV_MTU_DOUBTS times a
 * millisecond at most (the precise clock: the coarse one may not have
 * moved since the last time, a driver's MTU changes come in quick
 * succession), so that a flood of oversize frames costs a few system
 * calls, not one a frame. Whether the frame fits then.
 */
#define SWV_MTU_DOUBTS 4

static bool
rx_mtu_doubt(struct swv_device *dev, uint32_t len)
{
	uint64_t now;

	if (SWV_LOAD(&dev->rx_mtu) != 0)
		return false;
	now = swv_now_ns();
	if (now - dev->mtu_doubt_ns >= 1000 * 1000) {
		dev->mtu_doubt_ns = now;
		dev->mtu_doubts = 0;
	}
	if (dev->mtu_doubts >= SWV_MTU_DOUBTS)
		return false;
	dev->mtu_doubts++;
	swv_dev_mtu_sync_try(dev);
	return rx_len_ok(dev, len);
}

/*
 * A frame shorter than the wire's minimum (a runt), or longer than the MTU
 * allows (MTU + an Ethernet header + one VLAN tag, as a ConnectX's port MTU
 * bounds it), is dropped before it is parsed, counted as an Rx error, as a
 * NIC's MAC drops it.
 */
static inline bool
rx_runt(struct swv_device *dev, uint32_t len)
{
	if (SWV_LIKELY(rx_len_ok(dev, len)))
		return false;
	if (len < dev->wire->min_frame)
		dev->acc.rx_runts++;
	else if (rx_mtu_doubt(dev, len))
		return false;
	else
		dev->acc.rx_mtu_dropped++;
	rx_count(dev, len, &dev->acc.rx_errors, true);
	return true;
}

/*
 * The mlx5-vf profile: whether the eswitch forwards the frame to the
 * vport (vport.c); a frame it does not is counted, the port never sees it.
 */
static bool
rx_vport_drops(struct swv_device *dev, const struct iovec *iov, int iovcnt,
	       uint32_t len)
{
	uint8_t dmac[6];

	if (len < 6)
		return false;	/* a runt: the port's MAC drops it */
	swv_iov_copy(dmac, iov, iovcnt, 0, 6);
	if (swv_vport_takes(dev, dmac))
		return false;
	dev->acc.rx_vport_dropped++;
	swv_dev_dirty(dev);
	return true;
}

void
swv_device_rx(struct swv_device *dev, const struct iovec *iov, int iovcnt,
	      uint32_t len)
{
	const struct swv_flow *f;
	struct swv_pkt pkt;

	if (SWV_UNLIKELY(dev->vport != NULL) &&
	    rx_vport_drops(dev, iov, iovcnt, len))
		return;
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

	if (SWV_UNLIKELY(dev->vport != NULL)) {
		/* A VF: the vport's filter first, frame by frame. */
		for (i = 0; i < n; i++)
			swv_device_rx(dev, fr[i].iov, fr[i].iovcnt,
				      fr[i].len);
		return;
	}
	for (i = 0; i < n; i += m) {
		m = n - i < SWV_RX_BURST ? n - i : SWV_RX_BURST;
		for (k = 0; k < m; k++)
			if (SWV_UNLIKELY(!rx_len_ok(dev, fr[i + k].len)))
				break;
		if (SWV_UNLIKELY(k < m)) {
			/* A runt or giant: this slice frame by frame. */
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
			swv_classify_prefetch(dev, &pkt[k]);
		}
		swv_classify_burst(dev, pkt, f, m);
		/*
		 * A counted rule's tally lies past the line the lookup read
		 * (the line after it with 4 key words): fetch it for writing
		 * while the frames before are delivered.
		 */
		for (k = 0; k < m; k++)
			if (f[k] != NULL && f[k]->cnt != NULL)
				SWV_PREFETCH_W(swv_flow_tally(f[k]));
		/* In arrival order: per-flow FIFO as with single frames. */
		for (k = 0; k < m; k++)
			rx_steered(dev, sn, f[k], &pkt[k], fr[i + k].iov,
				   fr[i + k].iovcnt, fr[i + k].len);
	}
}

unsigned int
swv_rq_flush(struct swv_pending *p, struct swv_rq *rq)
{
	unsigned int n = 0;

	while (swv_ring_avail(&rq->ring) > 0 && swv_cq_room(rq->cq) > 0) {
		rq_complete(p, rq, swv_wqe_wr_id(&rq->ring, rq->ring.ctail),
			    IBV_WC_WR_FLUSH_ERR, 0, 0);
		rq_take(p, rq);
		n++;
	}
	return n;
}
