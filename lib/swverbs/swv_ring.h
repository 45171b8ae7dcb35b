/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The producer side of a WQE ring, inline for the post calls (qp.c, ring.c).
 * Private to lib/swverbs.
 */

#ifndef SWV_RING_H
#define SWV_RING_H

#include <string.h>

#include "swv_priv.h"

/* WQE slots ahead of the one being written that a post prefetches. */
#define SWV_POST_PREFETCH 8

_Static_assert(SWV_SEND_BURST_SIGNALED == SWV_WQE_SIGNALED &&
	       SWV_SEND_BURST_IP_CSUM == SWV_WQE_IP_CSUM,
	       "a burst's flags are WQE flags");

/** Room for one more WQE, re-reading the engine's tail only when full. */
static inline bool
swv_ring_has_room(struct swv_wq_ring *r, uint32_t head)
{
	if (SWV_LIKELY(head - r->ptail <= r->mask))
		return true;
	r->ptail = SWV_LOAD_ACQ(&r->tail);
	return head - r->ptail <= r->mask;
}

/** Copy one WR into the ring slot at head (room checked by the caller). */
static inline void
swv_ring_put(struct swv_wq_ring *r, uint32_t head, uint64_t wr_id,
	     const struct ibv_sge *sg_list, int num_sge, uint32_t flags)
{
	struct swv_wqe *w;

	if (swv_wqe_new_line(r, head + SWV_POST_PREFETCH))
		SWV_PREFETCH_W(swv_wqe_line(r, head + SWV_POST_PREFETCH));
	if (SWV_LIKELY(r->compact)) {
		struct swv_wqe16 *c = swv_ring_slot16(r, head);
		uint32_t len = ((flags & SWV_WQE_SIGNALED) ? SWV_W16_SIG : 0) |
			       ((flags & SWV_WQE_IP_CSUM) ? SWV_W16_CSUM : 0);

		r->wrid[head & r->mask] = wr_id;
		if (SWV_UNLIKELY(num_sge == 0)) {
			c->len = len | SWV_W16_NOSGE;
			return;
		}
		c->addr = sg_list[0].addr;
		c->lkey = sg_list[0].lkey;
		if (SWV_UNLIKELY(sg_list[0].length > SWV_W16_LEN_MASK)) {
			r->xlen[head & r->mask] = sg_list[0].length;
			len |= SWV_W16_XLEN;
		} else {
			len |= sg_list[0].length;
		}
		c->len = len;
		return;
	}
	w = swv_ring_slot(r, head);
	w->wr_id = wr_id;
	w->num_sge = (uint32_t)num_sge;
	w->flags = flags;
	if (SWV_LIKELY(num_sge == 1))
		w->sge[0] = sg_list[0];
	else
		memcpy(w->sge, sg_list, sizeof(w->sge[0]) * num_sge);
}

/**
 * Copy n one-SGE WQEs into the ring from head on, as far as it has room;
 * publish the new head once. Return: the WQEs copied.
 */
static inline unsigned int
swv_ring_put_burst(struct swv_wq_ring *r, unsigned int n,
		   const uint64_t *wr_id, const struct ibv_sge *sge,
		   const uint8_t *signaled, uint32_t sig_all)
{
	uint32_t head = r->head;
	unsigned int i;

	for (i = 0; i < n; i++) {
		uint32_t flags = sig_all;

		if (SWV_UNLIKELY(!swv_ring_has_room(r, head)))
			break;
		/* SWV_SEND_BURST_*: the same bits as SWV_WQE_*. */
		if (signaled != NULL)
			flags |= signaled[i] & (SWV_WQE_SIGNALED |
						SWV_WQE_IP_CSUM);
		swv_ring_put(r, head, wr_id[i], &sge[i], 1, flags);
		head++;
	}
	SWV_STORE_REL(&r->head, head);
	r->npub++;
	return i;
}

#endif /* SWV_RING_H */
