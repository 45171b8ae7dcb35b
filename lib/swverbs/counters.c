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
 * object is bound to a flow, the control path (attach, under swv_lock) while
 * it is not. Attach is refused while a flow binds the object. A destroyed
 * flow stops binding it at once, but the engine may count through it until
 * a grace period has passed (the object is "stale"): attach waits for one
 * (synchronize_rcu()) before writing, and destroy frees the object only
 * after one (swv_retire()). Readers take no lock: they retry while the
 * sequence is odd or moved under them, so one read sees every index over the
 * same set of frames, whole 64-bit values, never going back.
 *
 * The points live in an array that grows by replacement; replaced arrays
 * stay allocated until the object is destroyed, so a reader that raced with
 * an attach never reads freed memory (it retries, seeing the sequence move).
 */

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "swv_priv.h"

/* Points that come with a counters object: packets and bytes. */
#define SWV_CNT_INLINE 2

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
	/* 64 bytes: not cache-aligned, so that a counted rule costs
	 * little memory; one engine thread writes every object, so objects
	 * sharing a line do not bounce it.
	 */
	c = calloc(1, sizeof(*c) + sizeof(*c->inl) +
		   SWV_CNT_INLINE * sizeof(c->inl->pt[0]));
	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	/* Room for indexes 0 and 1 (packets, bytes) comes with the object,
	 * so the usual two attaches allocate nothing.
	 */
	c->inl = (struct swv_counter_points *)(c + 1);
	c->inl->cap = SWV_CNT_INLINE;
	c->ibv_counters.context = context;
	c->dev = swv_ctx_dev(context);
	pthread_mutex_lock(&swv_lock);
	to_swv_ctx(context)->objs++;
	pthread_mutex_unlock(&swv_lock);
	return &c->ibv_counters;
}

static void
cnt_free_points(struct swv_counters *c)
{
	struct swv_counter_points *p, *next;

	for (p = c->pts; p != NULL; p = next) {
		next = p->old;
		if (p != c->inl)
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
	if (c->bound > 0) {
		pthread_mutex_unlock(&swv_lock);
		return EBUSY;
	}
	to_swv_ctx(ibc->context)->objs--;
	if (c->stale) {
		/* The engine may still count into it: free it after a grace
		 * period. It never reads the points.
		 */
		cnt_free_points(c);
		swv_retire(c);
		pthread_mutex_unlock(&swv_lock);
		return 0;
	}
	pthread_mutex_unlock(&swv_lock);
	cnt_free_points(c);
	free(c);
	return 0;
}

/* Room for index idx: the current array, or a bigger copy (not published). */
static struct swv_counter_points *
cnt_points_for(struct swv_counters *c, uint32_t idx)
{
	struct swv_counter_points *p = c->pts, *n;
	uint32_t cap = 2;

	if (p != NULL && idx < p->cap)
		return p;
	if (p == NULL && idx < c->inl->cap)
		return c->inl;
	while (cap <= idx)
		cap *= 2;
	n = calloc(1, sizeof(*n) + cap * sizeof(n->pt[0]));
	if (n == NULL)
		return NULL;
	n->cap = cap;
	n->old = p;
	if (p != NULL)
		memcpy(n->pt, p->pt, p->cap * sizeof(p->pt[0]));
	return n;
}

int
swv_attach_counters_point_flow(struct ibv_counters *ibc,
			       struct ibv_counter_attach_attr *attr,
			       struct ibv_flow *flow)
{
	struct swv_counter_points *p;
	struct swv_counter_point *pt;
	struct swv_counters *c;
	uint64_t s, total;

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
	pthread_mutex_lock(&swv_lock);
	if (c->bound > 0) {
		pthread_mutex_unlock(&swv_lock);
		return EBUSY;
	}
	if (c->stale) {
		/* Let the engine finish with the flows that bound it. */
		synchronize_rcu();
		c->stale = false;
	}
	p = cnt_points_for(c, attr->index);
	if (p == NULL) {
		pthread_mutex_unlock(&swv_lock);
		return ENOMEM;
	}
	/* Unbound: this thread is the only writer now. */
	s = cnt_write_begin(c);
	if (p != c->pts)
		SWV_STORE_REL(&c->pts, p);
	pt = &p->pt[attr->index];
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
	pthread_mutex_unlock(&swv_lock);
	return 0;
}

int
swv_read_counters(struct ibv_counters *ibc, uint64_t *val, uint32_t n,
		  uint32_t flags)
{
	const struct swv_counter_points *p;
	struct swv_counters *c;
	uint64_t s, pk, by;
	uint32_t i, m;

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
		if (m > n)
			m = n;
		if (p == NULL)
			m = 0;
		else if (m > p->cap)
			m = p->cap;	/* raced with an attach: retried */
		for (i = 0; i < m; i++) {
			const struct swv_counter_point *pt = &p->pt[i];

			val[i] = SWV_LOAD(&pt->base) +
				 SWV_LOAD(&pt->npkt) * pk +
				 SWV_LOAD(&pt->nbyte) * by;
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (SWV_LOAD(&c->seq) == s)
			break;
	}
	for (i = m; i < n; i++)
		val[i] = 0;
	return 0;
}
