/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * WQE rings (the SPSC rings of struct swv_wq_ring, swv_priv.h): setup,
 * teardown, the receive post shared by QPs and WQs; and the cache-line
 * aligned allocator the objects holding a ring use.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "swv_ring.h"

int
swv_ring_init(struct swv_wq_ring *r, uint32_t max_wr, uint32_t max_sge)
{
	uint32_t size = 1;

	while (size < max_wr)
		size <<= 1;
	r->head = 0;
	r->ptail = 0;
	r->tail = 0;
	r->ctail = 0;
	r->chead = 0;
	r->dirty = false;
	r->done = 0;
	r->npub = 0;
	r->epub = 0;
	r->mask = size - 1;
	r->max_sge = max_sge;
	r->compact = max_sge <= 1;
	r->wrid = NULL;
	r->xlen = NULL;
	if (r->compact) {
		r->stride = sizeof(struct swv_wqe16);
		r->addr_off = offsetof(struct swv_wqe16, addr);
		r->wrid = calloc(size, sizeof(*r->wrid));
		r->xlen = calloc(size, sizeof(*r->xlen));
	} else {
		r->stride = sizeof(struct swv_wqe) +
			    max_sge * sizeof(struct ibv_sge);
		r->addr_off = offsetof(struct swv_wqe, sge[0].addr);
	}
	/* Line-aligned: see swv_wqe_new_line(). */
	r->slots = swv_zalloc_aligned((size_t)size * r->stride);
	if (r->slots == NULL ||
	    (r->compact && (r->wrid == NULL || r->xlen == NULL))) {
		swv_ring_fini(r);
		return ENOMEM;
	}
	return 0;
}

void
swv_ring_fini(struct swv_wq_ring *r)
{
	free(r->slots);
	free(r->wrid);
	free(r->xlen);
	r->slots = NULL;
	r->wrid = NULL;
	r->xlen = NULL;
}

void
swv_ring_discard(struct swv_wq_ring *r)
{
	uint32_t head = SWV_LOAD(&r->head);

	/* The engine published everything before its quiescent state. */
	SWV_STORE(&r->ctail, head);
	SWV_STORE(&r->chead, head);
	SWV_STORE_REL(&r->tail, head);
	SWV_STORE_REL(&r->done, head);
}

void *
swv_zalloc_aligned(size_t size)
{
	void *p;

	size = (size + SWV_CACHE_LINE - 1) & ~(size_t)(SWV_CACHE_LINE - 1);
	if (posix_memalign(&p, SWV_CACHE_LINE, size) != 0)
		return NULL;
	memset(p, 0, size);
	return p;
}

int
swv_ring_post_recv(struct swv_wq_ring *r, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr)
{
	uint32_t head = r->head;
	int ret = 0;

	for (; wr != NULL; wr = wr->next) {
		if (SWV_UNLIKELY(wr->num_sge < 0 ||
				 (uint32_t)wr->num_sge > r->max_sge)) {
			ret = EINVAL;
			break;
		}
		if (SWV_UNLIKELY(!swv_ring_has_room(r, head))) {
			ret = ENOMEM;
			break;
		}
		swv_ring_put(r, head, wr->wr_id, wr->sg_list, wr->num_sge, 0);
		head++;
	}
	SWV_STORE_REL(&r->head, head);
	r->npub++;
	if (ret != 0 && bad_wr != NULL)
		*bad_wr = wr;
	return ret;
}
