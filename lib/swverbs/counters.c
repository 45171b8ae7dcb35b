/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Counters objects: ibv_create_counters(3), ibv_attach_counters_point_flow(3)
 * (static attach), ibv_read_counters(3).
 *
 * Counting. A rule that binds an object (IBV_FLOW_SPEC_ACTION_COUNT) counts
 * the frames it wins into a tally of its own, packets and bytes, kept
 * behind its key: the lines the lookup has just read, so counting a frame
 * touches no other line, and the engine never writes the object. The
 * object lists its flows; a read sums their tallies with what flows gone
 * for good left behind (folded into the object), and derives the value of
 * each index from the two totals:
 *
 *     value[i] = base[i] + npkt[i] * packets + nbyte[i] * bytes   (mod 2^64)
 *
 * npkt[i] and nbyte[i] count the PACKETS and BYTES descriptions attached at
 * i; attaching one subtracts the current total from base[i], so a point
 * attached late starts from 0 and attaching never changes a value.
 *
 * Lifetimes. A destroyed flow stops binding the object at once, but the
 * engine may count through it until a grace period has passed: it stays on
 * the object's list, "dying", and is summed by reads until it is released
 * after the grace period (classifier.c), when its tally folds into the
 * object. So totals never go back and no frame is lost. Destroying the
 * object while a flow binds it fails with EBUSY; destroyed while flows are
 * dying, it is freed by the release of the last one.
 *
 * Consistency. The engine is the one writer of a tally: a seqlock lets a
 * reader take packets and bytes over the same frames. The object's fields
 * and its list are under its own lock, taken by attach, bind, unbind,
 * release, read and destroy: no global lock on the read path, and one
 * read computes every index from the same totals. An attach racing a bind
 * from another thread is ordered by the lock: it lands before the bind or
 * fails with EBUSY. Reads cost one pass over the object's flows.
 */

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "swv_priv.h"

/*
 * The object's lock: one atomic exchange to take, one store to give back.
 * Every holder runs a few dozen instructions, so a waiter spins, and
 * yields in case the holder was preempted.
 */
static inline void
cnt_lock(struct swv_counters *c)
{
	while (__atomic_exchange_n(&c->lock, 1, __ATOMIC_ACQUIRE) != 0)
		while (SWV_LOAD(&c->lock) != 0)
			sched_yield();
}

static inline void
cnt_unlock(struct swv_counters *c)
{
	SWV_STORE_REL(&c->lock, 0);
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
	/* From the device's engine's pool (see swv_device_set_engine()). */
	c = swv_pool_alloc(&swv_ctx_dev(context)->eng->pool,
			   SWV_POOL_COUNTERS);
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

/* Free an object: no flow on its list, swv_lock held. */
static void
cnt_free(struct swv_counters *c)
{
	free(c->pts);
	swv_pool_free(&c->dev->eng->pool, c, SWV_POOL_COUNTERS);
}

int
swv_destroy_counters(struct ibv_counters *ibc)
{
	struct swv_counters *c;
	bool now;

	if (ibc == NULL)
		return EINVAL;
	c = to_swv_counters(ibc);
	pthread_mutex_lock(&swv_lock);
	cnt_lock(c);
	if (c->bound > 0) {
		cnt_unlock(c);
		pthread_mutex_unlock(&swv_lock);
		return EBUSY;
	}
	to_swv_ctx(ibc->context)->objs--;
	c->destroyed = true;
	/* Dying flows may still count: the last one's release frees it. */
	now = c->dying == 0;
	cnt_unlock(c);
	if (now)
		cnt_free(c);
	pthread_mutex_unlock(&swv_lock);
	return 0;
}

void
swv_counters_bind(struct swv_counters *c, struct swv_flow *f)
{
	struct swv_flow_tally *t = swv_flow_tally(f);

	t->seq = 0;
	t->packets = 0;
	t->bytes = 0;
	cnt_lock(c);
	t->pprev = &c->flows;
	t->next = c->flows;
	if (t->next != NULL)
		swv_flow_tally(t->next)->pprev = &t->next;
	c->flows = f;
	c->bound++;
	cnt_unlock(c);
}

/* Take f off c's list, its tally folded in. c->lock held. */
static void
cnt_unlink(struct swv_counters *c, struct swv_flow *f)
{
	struct swv_flow_tally *t = swv_flow_tally(f);

	c->packets += SWV_LOAD(&t->packets);
	c->bytes += SWV_LOAD(&t->bytes);
	*t->pprev = t->next;
	if (t->next != NULL)
		swv_flow_tally(t->next)->pprev = t->pprev;
}

void
swv_counters_unbind(struct swv_counters *c, struct swv_flow *f, bool seen)
{
	cnt_lock(c);
	c->bound--;
	if (seen)
		c->dying++;	/* summed until its release */
	else
		cnt_unlink(c, f);	/* never counted */
	cnt_unlock(c);
}

void
swv_counters_release(struct swv_counters *c, struct swv_flow *f)
{
	bool last;

	/* The engine is done with f: its tally is final. */
	cnt_lock(c);
	cnt_unlink(c, f);
	c->dying--;
	last = c->destroyed && c->dying == 0;
	cnt_unlock(c);
	if (last)
		cnt_free(c);
}

/* Packets and bytes counted through c so far. c->lock held. */
static void
cnt_totals(const struct swv_counters *c, uint64_t *pk, uint64_t *by)
{
	const struct swv_flow_tally *t;
	const struct swv_flow *f;
	uint64_t s, p, b;

	*pk = c->packets;
	*by = c->bytes;
	for (f = c->flows; f != NULL; f = t->next) {
		t = swv_flow_tally(f);
		for (;;) {
			s = SWV_LOAD_ACQ(&t->seq);
			if (SWV_UNLIKELY(s & 1)) {
				/* The engine is between two stores. */
				sched_yield();
				continue;
			}
			p = SWV_LOAD(&t->packets);
			b = SWV_LOAD(&t->bytes);
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			if (SWV_LOAD(&t->seq) == s)
				break;
		}
		*pk += p;
		*by += b;
	}
}

/* The points array with room for index idx (grown if need be), or NULL. */
static struct swv_counter_point *
cnt_points_for(struct swv_counters *c, uint32_t idx)
{
	struct swv_counter_points *p = c->pts, *n;
	uint32_t cap = 2 * SWV_CNT_INLINE;

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
	if (p != NULL)
		memcpy(n->pt, p->pt, p->cap * sizeof(p->pt[0]));
	else
		memcpy(n->pt, c->inl, sizeof(c->inl));
	free(p);
	c->pts = n;
	return n->pt;
}

int
swv_attach_counters_point_flow(struct ibv_counters *ibc,
			       struct ibv_counter_attach_attr *attr,
			       struct ibv_flow *flow)
{
	struct swv_counter_point *pt;
	struct swv_counters *c;
	uint64_t pk, by;
	int ret = 0;

	if (ibc == NULL || attr == NULL)
		return EINVAL;
	if (flow != NULL)
		return ENOTSUP;		/* static attach only */
	if (attr->comp_mask != 0)
		return to_swv_counters(ibc)->dev->strict ? EOPNOTSUPP : EINVAL;
	if (attr->counter_desc != IBV_COUNTER_PACKETS &&
	    attr->counter_desc != IBV_COUNTER_BYTES)
		return ENOTSUP;
	if (attr->index >= SWV_MAX_COUNTERS)
		return EINVAL;
	c = to_swv_counters(ibc);
	cnt_lock(c);
	if (c->bound > 0) {
		ret = EBUSY;
		goto out;
	}
	pt = cnt_points_for(c, attr->index);
	if (pt == NULL) {
		ret = ENOMEM;
		goto out;
	}
	pt += attr->index;
	/* Dying flows may still add: the point starts from what is now. */
	cnt_totals(c, &pk, &by);
	if (attr->counter_desc == IBV_COUNTER_PACKETS) {
		pt->npkt++;
		pt->base -= pk;
	} else {
		pt->nbyte++;
		pt->base -= by;
	}
	if (attr->index >= c->nidx)
		c->nidx = attr->index + 1;
out:
	cnt_unlock(c);
	return ret;
}

int
swv_read_counters(struct ibv_counters *ibc, uint64_t *val, uint32_t n,
		  uint32_t flags)
{
	const struct swv_counter_point *pt;
	struct swv_counters *c;
	uint64_t pk, by;
	uint32_t i, m;

	if (ibc == NULL ||
	    (flags & ~(uint32_t)IBV_READ_COUNTERS_ATTR_PREFER_CACHED) != 0 ||
	    (val == NULL && n > 0))
		return EINVAL;
	c = to_swv_counters(ibc);
	cnt_lock(c);
	/*
	 * mlx5: no flow holds the object (uverbs usecnt 0), or the array
	 * is shorter than the highest attached index + 1 (mlx5 counters.c
	 * mlx5_ib_read_counters): EINVAL.
	 */
	if (c->dev->strict && (c->bound == 0 || n < c->nidx)) {
		cnt_unlock(c);
		return EINVAL;
	}
	cnt_totals(c, &pk, &by);
	pt = c->pts != NULL ? c->pts->pt : c->inl;
	m = c->nidx < n ? c->nidx : n;
	for (i = 0; i < m; i++)
		val[i] = pt[i].base + pt[i].npkt * pk + pt[i].nbyte * by;
	cnt_unlock(c);
	for (i = m; i < n; i++)
		val[i] = 0;
	return 0;
}
