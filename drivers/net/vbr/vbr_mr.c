/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Memory registration. Each mempool's memory chunks are registered once; the
 * ranges go into a sorted table that the datapath reads without locks: an
 * update builds a new table and swaps the pointer, and old tables are freed at
 * close.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mempool.h>

#include "vbr.h"
#include "vbr_utils.h"

static int
vbr_mr_range_cmp(const void *a, const void *b)
{
	const struct vbr_mr_range *ra = a, *rb = b;

	if (ra->start < rb->start)
		return -1;
	return ra->start > rb->start;
}

/* Build and publish the table from priv->mrs. Called under mr_lock. */
static int
vbr_mr_publish(struct vbr_priv *priv)
{
	struct vbr_mr_table *table, *old;
	struct vbr_mr_retired *retired = NULL;
	struct vbr_mr *mr;
	uint32_t n = 0;

	TAILQ_FOREACH(mr, &priv->mrs, next)
		n++;
	table = rte_zmalloc("vbr_mr_table", sizeof(*table) +
			    n * sizeof(table->r[0]), 0);
	if (table == NULL)
		return -ENOMEM;
	old = priv->mr_table;
	if (old != NULL) {
		retired = rte_zmalloc("vbr_mr_retired", sizeof(*retired), 0);
		if (retired == NULL) {
			rte_free(table);
			return -ENOMEM;
		}
	}
	TAILQ_FOREACH(mr, &priv->mrs, next) {
		table->r[table->n].start = (uintptr_t)mr->ibv_mr->addr;
		table->r[table->n].end = (uintptr_t)mr->ibv_mr->addr +
					 mr->ibv_mr->length;
		table->r[table->n].lkey = mr->ibv_mr->lkey;
		table->n++;
	}
	qsort(table->r, table->n, sizeof(table->r[0]), vbr_mr_range_cmp);
	__atomic_store_n(&priv->mr_table, table, __ATOMIC_RELEASE);
	if (retired != NULL) {
		retired->table = old;
		SLIST_INSERT_HEAD(&priv->mr_retired, retired, next);
	}
	return 0;
}

struct vbr_mr_chunk_ctx {
	struct vbr_priv *priv;
	int err;
};

static void
vbr_mr_chunk_cb(struct rte_mempool *mp, void *opaque,
		struct rte_mempool_memhdr *memhdr, unsigned int idx)
{
	struct vbr_mr_chunk_ctx *c = opaque;
	struct vbr_priv *priv = c->priv;
	struct vbr_mr *mr;

	RTE_SET_USED(idx);
	if (c->err != 0)
		return;
	mr = rte_zmalloc("vbr_mr", sizeof(*mr), 0);
	if (mr == NULL) {
		c->err = ENOMEM;
		return;
	}
	mr->mp = mp;
	mr->ibv_mr = priv->glue->reg_mr(priv->pd, memhdr->addr, memhdr->len,
					IBV_ACCESS_LOCAL_WRITE);
	if (mr->ibv_mr == NULL) {
		c->err = errno;
		rte_free(mr);
		return;
	}
	TAILQ_INSERT_TAIL(&priv->mrs, mr, next);
	VBR_LOG(DEBUG, "port %u: mempool %s: registered addr %p length %zu: "
		"lkey 0x%x", priv->dev->data->port_id, mp->name, memhdr->addr,
		memhdr->len, mr->ibv_mr->lkey);
}

/* Deregister every MR of mp. Called under mr_lock. */
static void
vbr_mr_drop_mempool(struct vbr_priv *priv, const struct rte_mempool *mp)
{
	struct vbr_mr *mr, *tmp;

	for (mr = TAILQ_FIRST(&priv->mrs); mr != NULL; mr = tmp) {
		tmp = TAILQ_NEXT(mr, next);
		if (mp != NULL && mr->mp != mp)
			continue;
		TAILQ_REMOVE(&priv->mrs, mr, next);
		VBR_LOG(DEBUG, "port %u: mempool %s: deregistered addr %p "
			"length %zu: lkey 0x%x", priv->dev->data->port_id,
			mr->mp->name, mr->ibv_mr->addr, mr->ibv_mr->length,
			mr->ibv_mr->lkey);
		priv->glue->dereg_mr(mr->ibv_mr);
		rte_free(mr);
	}
}

static bool
vbr_mr_has_mempool(struct vbr_priv *priv, const struct rte_mempool *mp)
{
	struct vbr_mr *mr;

	TAILQ_FOREACH(mr, &priv->mrs, next)
		if (mr->mp == mp)
			return true;
	return false;
}

static int
vbr_mr_register_locked(struct vbr_priv *priv, struct rte_mempool *mp)
{
	struct vbr_mr_chunk_ctx c = { .priv = priv, .err = 0 };
	int ret;

	if (vbr_mr_has_mempool(priv, mp) || mp->nb_mem_chunks == 0)
		return 0;
	rte_mempool_mem_iter(mp, vbr_mr_chunk_cb, &c);
	if (c.err != 0) {
		VBR_LOG(ERR, "port %u: cannot register mempool %s: %s",
			priv->dev->data->port_id, mp->name, strerror(c.err));
		vbr_mr_drop_mempool(priv, mp);
		return -c.err;
	}
	ret = vbr_mr_publish(priv);
	if (ret != 0) {
		vbr_mr_drop_mempool(priv, mp);
		return ret;
	}
	return 0;
}

/** Register the memory of mp (once). Return 0 or -errno. */
int
vbr_mr_register_mempool(struct vbr_priv *priv, struct rte_mempool *mp)
{
	int ret;

	rte_spinlock_lock(&priv->mr_lock);
	ret = vbr_mr_register_locked(priv, mp);
	rte_spinlock_unlock(&priv->mr_lock);
	return ret;
}

static void
vbr_mr_walk_cb(struct rte_mempool *mp, void *arg)
{
	struct vbr_priv *priv = arg;

	if (mp->flags & RTE_MEMPOOL_F_NON_IO)
		return;
	/* Failure only costs Tx drops from that mempool; logged. */
	vbr_mr_register_locked(priv, mp);
}

static void
vbr_mr_event_cb(enum rte_mempool_event event, struct rte_mempool *mp,
		void *arg)
{
	struct vbr_priv *priv = arg;

	rte_spinlock_lock(&priv->mr_lock);
	if (event == RTE_MEMPOOL_EVENT_READY) {
		if (!(mp->flags & RTE_MEMPOOL_F_NON_IO))
			vbr_mr_register_locked(priv, mp);
	} else if (event == RTE_MEMPOOL_EVENT_DESTROY &&
		   vbr_mr_has_mempool(priv, mp)) {
		vbr_mr_drop_mempool(priv, mp);
		if (vbr_mr_publish(priv) != 0)
			VBR_LOG(ERR, "port %u: cannot update MR table",
				priv->dev->data->port_id);
		__atomic_fetch_add(&priv->mr_gen, 1, __ATOMIC_RELEASE);
	}
	rte_spinlock_unlock(&priv->mr_lock);
}

/**
 * At dev_start: register every existing mempool, and follow the ones created
 * or destroyed later.
 */
int
vbr_mr_start(struct vbr_priv *priv)
{
	if (!priv->mr_cb) {
		if (rte_mempool_event_callback_register(vbr_mr_event_cb,
							priv) != 0) {
			VBR_LOG(ERR, "port %u: mempool event callback: %s",
				priv->dev->data->port_id,
				rte_strerror(rte_errno));
			return -rte_errno;
		}
		priv->mr_cb = 1;
	}
	rte_spinlock_lock(&priv->mr_lock);
	rte_mempool_walk(vbr_mr_walk_cb, priv);
	rte_spinlock_unlock(&priv->mr_lock);
	return 0;
}

/** At close: deregister everything, free all tables. */
void
vbr_mr_release(struct vbr_priv *priv)
{
	struct vbr_mr_retired *r;

	if (priv->mr_cb) {
		rte_mempool_event_callback_unregister(vbr_mr_event_cb, priv);
		priv->mr_cb = 0;
	}
	rte_spinlock_lock(&priv->mr_lock);
	vbr_mr_drop_mempool(priv, NULL);
	rte_free(priv->mr_table);
	priv->mr_table = NULL;
	while ((r = SLIST_FIRST(&priv->mr_retired)) != NULL) {
		SLIST_REMOVE_HEAD(&priv->mr_retired, next);
		rte_free(r->table);
		rte_free(r);
	}
	rte_spinlock_unlock(&priv->mr_lock);
}

/*
 * The lkey covering [addr, addr + len): the cache (reset when an MR went
 * away), then the table, whose hit goes into the cache. 0 or -1.
 */
int
vbr_mr_find(struct vbr_priv *priv, struct vbr_mr_cache *cache,
	    uintptr_t addr, uint32_t len, uint32_t *lkey)
{
	const struct vbr_mr_table *t;
	uint64_t gen = __atomic_load_n(&priv->mr_gen, __ATOMIC_ACQUIRE);
	uintptr_t end = addr + len;
	uint32_t lo, hi;
	unsigned int i;

	if (unlikely(cache->gen != gen)) {
		memset(cache->e, 0, sizeof(cache->e));
		cache->gen = gen;
	}
	for (i = 0; i < VBR_MR_CACHE_SIZE; i++) {
		if (addr >= cache->e[i].start && end <= cache->e[i].end) {
			*lkey = cache->e[i].lkey;
			return 0;
		}
	}
	t = __atomic_load_n(&priv->mr_table, __ATOMIC_ACQUIRE);
	if (t == NULL)
		return -1;
	lo = 0;
	hi = t->n;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (addr < t->r[mid].start)
			hi = mid;
		else if (addr >= t->r[mid].end)
			lo = mid + 1;
		else {
			if (end > t->r[mid].end)
				return -1;
			cache->e[cache->next] = t->r[mid];
			cache->next = (cache->next + 1) % VBR_MR_CACHE_SIZE;
			*lkey = t->r[mid].lkey;
			return 0;
		}
	}
	return -1;
}
