/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Counters objects: ibv_create_counters(3), ibv_attach_counters_point_flow(3)
 * (static attach), ibv_read_counters(3).
 *
 * Storage. The engine adds to two totals per object: packets and bytes of
 * the frames that the flows bound to it matched. The value of an index is
 * derived from them when read:
 *
 *     value[i] = base[i] + npkt[i] * packets + nbyte[i] * bytes   (mod 2^64)
 *
 * npkt[i] and nbyte[i] count the PACKETS and BYTES descriptions attached at
 * i; attaching one subtracts the current total from base[i], so a point
 * attached late starts from 0 and attaching never changes a value. Counting a
 * frame thus costs two additions, whatever the number of points.
 *
 * Consistency. The totals and the points are covered by a sequence counter
 * (a seqlock) that has exactly one writer at any time: the engine while the
 * object is bound to a flow, the control path (an attach) while it is not.
 * Which one is told by state, changed atomically: the number of flows that
 * bind the object, or SWV_CNT_ATTACHING while an attach writes. An attach
 * is refused (EBUSY) while a flow binds the object, and a flow waits for an
 * attach under way before it binds; neither takes swv_lock. A destroyed
 * flow stops binding the object at once, but the engine may count through
 * it until a grace period has passed (the object is "stale"): attach waits
 * for one (synchronize_rcu()) before writing, and destroy frees the object
 * only after one (swv_retire_counters()). Readers take no lock: they retry
 * while the sequence is odd or moved under them, so one read sees every
 * index over the same set of frames, whole 64-bit values, never going back.
 *
 * Memory. Objects come from the object pool of flow.c, pre-faulted, so a
 * counted rule faults no page in. The packets and bytes points (indexes 0
 * and 1) live in the object; beyond them the points are an array that grows
 * by replacement; replaced arrays stay allocated until the object is
 * destroyed, so a reader that raced with an attach never reads freed memory
 * (it retries, seeing the sequence move).
 */

#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "swv_priv.h"

/* What the engine writes per frame never straddles two cache lines. */
_Static_assert(offsetof(struct swv_counters, bytes) + sizeof(uint64_t) <=
	       SWV_COUNTERS_ALIGN, "counted fields in one aligned block");

/* Writer side of the seqlock (the one writer of the moment). */
static inline uint64_t
cnt_write_begin(struct swv_counters *c)
{
	uint64_t s = SWV_LOAD(&c->seq);

	SWV_STORE(&c->seq, s + 1);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	return s + 2;
}

static inline void
cnt_write_end(struct swv_counters *c, uint64_t s)
{
	SWV_STORE_REL(&c->seq, s);
}

struct ibv_counters *
swv_create_counters(struct ibv_context *context,
		    struct ibv_counters_init_attr *init_attr)
{
	struct swv_counters *c;

	if (context == NULL || init_attr == NULL ||
	    init_attr->comp_mask != 0) {
		errno = EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&swv_lock);
	c = swv_pool_alloc(SWV_POOL_COUNTERS);
	if (c != NULL)
		to_swv_ctx(context)->objs++;
	pthread_mutex_unlock(&swv_lock);
	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	memset(c, 0, sizeof(*c));
	c->ibv_counters.context = context;
	c->dev = swv_ctx_dev(context);
	return &c->ibv_counters;
}

static void
cnt_free_points(struct swv_counters *c)
{
	struct swv_counter_points *p, *next;

	for (p = c->pts; p != NULL; p = next) {
		next = p->old;
		free(p);
	}
	c->pts = NULL;
}

int
swv_destroy_counters(struct ibv_counters *ibc)
{
	struct swv_counters *c;

	if (ibc == NULL)
		return EINVAL;
	c = to_swv_counters(ibc);
	pthread_mutex_lock(&swv_lock);
	if (SWV_LOAD_ACQ(&c->state) != 0) {
		/* Bound to a flow (or an attach is under way). */
		pthread_mutex_unlock(&swv_lock);
		return EBUSY;
	}
	to_swv_ctx(ibc->context)->objs--;
	/* The engine never reads the points: they go now. */
	cnt_free_points(c);
	if (c->stale)
		/* The engine may still count into it. */
		swv_retire_counters(c);
	else
		swv_pool_free(c, SWV_POOL_COUNTERS);
	pthread_mutex_unlock(&swv_lock);
	return 0;
}

/* Wait while an attach writes c; return its state then. */
static uint32_t
cnt_state_settled(struct swv_counters *c)
{
	uint32_t s;

	while ((s = SWV_LOAD_ACQ(&c->state)) & SWV_CNT_ATTACHING)
		sched_yield();
	return s;
}

void
swv_counters_bind(struct swv_counters *c)
{
	uint32_t s = cnt_state_settled(c);

	while (!__atomic_compare_exchange_n(&c->state, &s, s + 1, false,
					    __ATOMIC_ACQUIRE,
					    __ATOMIC_RELAXED))
		if (s & SWV_CNT_ATTACHING)
			s = cnt_state_settled(c);
}

void
swv_counters_unbind(struct swv_counters *c, bool seen)
{
	/* Before the count drops: the next attach sees it. */
	if (seen)
		c->stale = true;
	__atomic_fetch_sub(&c->state, 1, __ATOMIC_RELEASE);
}

/*
 * Room for index idx: the points array to write (inline, current, or a
 * bigger copy), and in *grown the copy to publish, if one was made.
 */
static struct swv_counter_point *
cnt_points_for(struct swv_counters *c, uint32_t idx,
	       struct swv_counter_points **grown)
{
	struct swv_counter_points *p = c->pts, *n;
	uint32_t cap = 2 * SWV_CNT_INLINE;

	*grown = NULL;
	if (p == NULL && idx < SWV_CNT_INLINE)
		return c->inl;
	if (p != NULL && idx < p->cap)
		return p->pt;
	while (cap <= idx)
		cap *= 2;
	n = calloc(1, sizeof(*n) + cap * sizeof(n->pt[0]));
	if (n == NULL)
		return NULL;
	n->cap = cap;
	n->old = p;
	if (p != NULL)
		memcpy(n->pt, p->pt, p->cap * sizeof(p->pt[0]));
	else
		memcpy(n->pt, c->inl, sizeof(c->inl));
	*grown = n;
	return n->pt;
}

int
swv_attach_counters_point_flow(struct ibv_counters *ibc,
			       struct ibv_counter_attach_attr *attr,
			       struct ibv_flow *flow)
{
	struct swv_counter_points *grown;
	struct swv_counter_point *pt;
	struct swv_counters *c;
	uint64_t s, total;
	uint32_t st;

	if (ibc == NULL || attr == NULL)
		return EINVAL;
	if (flow != NULL)
		return ENOTSUP;		/* static attach only */
	if (attr->comp_mask != 0)
		return EINVAL;
	if (attr->counter_desc != IBV_COUNTER_PACKETS &&
	    attr->counter_desc != IBV_COUNTER_BYTES)
		return ENOTSUP;
	if (attr->index >= SWV_MAX_COUNTERS)
		return EINVAL;
	c = to_swv_counters(ibc);
	/* Become the writer: unbound, and no other attach under way. */
	st = cnt_state_settled(c);
	do {
		if (st & SWV_CNT_ATTACHING)
			st = cnt_state_settled(c);
		if (st != 0)
			return EBUSY;
	} while (!__atomic_compare_exchange_n(&c->state, &st,
					      SWV_CNT_ATTACHING, false,
					      __ATOMIC_ACQUIRE,
					      __ATOMIC_RELAXED));
	if (c->stale) {
		/* Let the engine finish with the flows that bound it. */
		synchronize_rcu();
		c->stale = false;
	}
	pt = cnt_points_for(c, attr->index, &grown);
	if (pt == NULL) {
		SWV_STORE_REL(&c->state, 0);
		return ENOMEM;
	}
	s = cnt_write_begin(c);
	if (grown != NULL)
		SWV_STORE_REL(&c->pts, grown);
	pt += attr->index;
	if (attr->counter_desc == IBV_COUNTER_PACKETS) {
		total = c->packets;
		SWV_STORE(&pt->npkt, pt->npkt + 1);
	} else {
		total = c->bytes;
		SWV_STORE(&pt->nbyte, pt->nbyte + 1);
	}
	SWV_STORE(&pt->base, pt->base - total);
	if (attr->index >= c->nidx)
		SWV_STORE(&c->nidx, attr->index + 1);
	cnt_write_end(c, s);
	SWV_STORE_REL(&c->state, 0);
	return 0;
}

int
swv_read_counters(struct ibv_counters *ibc, uint64_t *val, uint32_t n,
		  uint32_t flags)
{
	const struct swv_counter_points *p;
	const struct swv_counter_point *pt;
	struct swv_counters *c;
	uint64_t s, pk, by;
	uint32_t i, m, cap;

	if (ibc == NULL ||
	    (flags & ~(uint32_t)IBV_READ_COUNTERS_ATTR_PREFER_CACHED) != 0 ||
	    (val == NULL && n > 0))
		return EINVAL;
	c = to_swv_counters(ibc);
	for (;;) {
		s = SWV_LOAD_ACQ(&c->seq);
		if (SWV_UNLIKELY(s & 1)) {
			/* A writer is between two stores: let it run. */
			sched_yield();
			continue;
		}
		pk = SWV_LOAD(&c->packets);
		by = SWV_LOAD(&c->bytes);
		m = SWV_LOAD(&c->nidx);
		p = SWV_LOAD_ACQ(&c->pts);
		if (p == NULL) {
			pt = c->inl;
			cap = SWV_CNT_INLINE;
		} else {
			pt = p->pt;
			cap = p->cap;
		}
		if (m > n)
			m = n;
		if (m > cap)
			m = cap;	/* raced with an attach: retried */
		for (i = 0; i < m; i++)
			val[i] = SWV_LOAD(&pt[i].base) +
				 SWV_LOAD(&pt[i].npkt) * pk +
				 SWV_LOAD(&pt[i].nbyte) * by;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (SWV_LOAD(&c->seq) == s)
			break;
	}
	for (i = m; i < n; i++)
		val[i] = 0;
	return 0;
}
