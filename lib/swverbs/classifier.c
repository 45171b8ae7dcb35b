/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The classifier (tuple space search): a rule is a mask and a masked value
 * over the key, and a rank (class, priority, creation sequence; the mlx5
 * profile puts its flow group first in the sequence: flow.c), lower
 * wins; NORMAL rules come before MC_DEFAULT, MC_DEFAULT before ALL_DEFAULT.
 * Rules are grouped by mask into subtables; a subtable keeps only the key
 * words its mask touches and an open-addressing hash (linear probing) of
 * the masked values. Rules with the same mask and value form a list sorted
 * by rank whose head sits in the hash. The published array of subtables
 * (struct swv_steer) is sorted by a lower bound of the ranks each holds
 * (struct swv_subtable lb: its best class and priority, and the creation
 * of its first rule there); a lookup walks it and stops at the first
 * subtable that cannot beat the match it has, so its cost grows with the
 * number of distinct masks, not of rules. That order probes exactly the
 * subtables that may hold a better rule than the answer: none is probed
 * after the one holding the answer unless it may beat it.
 *
 * Updates are incremental and lock-free for the engine (the only reader):
 * slots are written with single pointer stores (a new head, or a
 * tombstone), a grown or cleaned hash and a changed subtable array are
 * built aside and published with rcu_assign_pointer(). What the engine may
 * still see (removed rules, old hashes and arrays) goes to a retire list
 * that is freed in batches after one synchronize_rcu(), never one grace
 * period per update.
 */

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "swv_priv.h"

/*
 * Lookup.
 */
#define SWV_HASH_MUL 0x9e3779b97f4a7c15ull

static inline uint32_t
hash_fin(uint64_t h)
{
	h ^= h >> 29;
	h *= SWV_HASH_MUL;
	return (uint32_t)(h >> 32);
}

uint32_t
swv_key_hash(const uint64_t *w, unsigned int n)
{
	uint64_t h = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		h = (h ^ w[i]) * SWV_HASH_MUL;
	return hash_fin(h);
}

static inline bool
words_eq(const uint64_t *a, const uint64_t *b, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

const struct swv_flow *
swv_steer_lookup(const struct swv_steer *st, const struct swv_pkt *pkt)
{
	const struct swv_flow *best = NULL, *f;
	const struct swv_subtable *sub;
	const struct swv_slots *sl;
	uint64_t best_rank = UINT64_MAX, mk[SWV_KEY_WORDS], h;
	uint32_t i, j, nw, h32;

	if (st == NULL)
		return NULL;
	for (i = 0; i < st->nsub; i++) {
		if (st->sub[i].base > best_rank)
			break;
		sub = st->sub[i].sub;
		nw = sub->nw;
		h = 0;
		for (j = 0; j < nw; j++) {
			mk[j] = pkt->key.w[sub->idx[j]] & sub->mask[j];
			h = (h ^ mk[j]) * SWV_HASH_MUL;
		}
		h32 = hash_fin(h);
		sl = rcu_dereference(sub->slots);
		for (j = h32;; j++) {
			const struct swv_slot *s = &sl->slot[j & sl->mask];

			f = rcu_dereference(s->f);
			if (f == NULL)
				break;
			if (SWV_LOAD(&s->hash) != h32 || f == SWV_SLOT_TOMB ||
			    !words_eq(f->key, mk, nw))
				continue;
			if (f->rank < best_rank) {
				best_rank = f->rank;
				best = f;
			}
			break;
		}
	}
	return best;
}

/* The hash of pkt's words under sub's mask. */
static inline uint32_t
sub_hash(const struct swv_subtable *sub, const struct swv_pkt *pkt)
{
	uint64_t h = 0;
	uint32_t j;

	for (j = 0; j < sub->nw; j++)
		h = (h ^ (pkt->key.w[sub->idx[j]] & sub->mask[j])) *
		    SWV_HASH_MUL;
	return hash_fin(h);
}

/* Whether pkt's words under sub's mask are f's key. */
static inline bool
sub_key_eq(const struct swv_subtable *sub, const struct swv_flow *f,
	   const struct swv_pkt *pkt)
{
	uint32_t j;

	for (j = 0; j < sub->nw; j++)
		if (f->key[j] != (pkt->key.w[sub->idx[j]] & sub->mask[j]))
			return false;
	return true;
}

/* The head for pkt (hash h32) in sl, probing from slot j on, or NULL. */
static const struct swv_flow *
sub_probe(const struct swv_subtable *sub, const struct swv_slots *sl,
	  const struct swv_pkt *pkt, uint32_t h32, uint32_t j)
{
	const struct swv_flow *f;

	for (;; j++) {
		const struct swv_slot *s = &sl->slot[j & sl->mask];

		f = rcu_dereference(s->f);
		if (f == NULL)
			return NULL;
		if (SWV_LOAD(&s->hash) == h32 && f != SWV_SLOT_TOMB &&
		    sub_key_eq(sub, f, pkt))
			return f;
	}
}

/*
 * Batched lookup: the same walk as swv_steer_lookup() for every frame, one
 * subtable at a time for all the frames still looking, in three passes so
 * that the cache misses of different frames overlap instead of following
 * each other: hash each frame and prefetch its first slot; find each
 * frame's first slot with its hash and prefetch that rule (the lines from
 * rank to the end of the key); compare the keys (a mismatch, a hash
 * collision, probes on). A frame stops at the first subtable that cannot
 * beat its best match, as in the single lookup. A small subtable (its
 * slots likely in cache) is probed frame by frame, without the passes, and
 * when all are small the frames go through swv_steer_lookup() one by one.
 * It walks for the frames pkt[act[0..na)] (na > 0, st not NULL) and sets
 * out[x] for each of them; act is scratch.
 */
#define SWV_BURST_MIN_SLOTS 1024u
static void
steer_walk_burst(const struct swv_steer *st, const struct swv_pkt *pkt,
		 const struct swv_flow **out, uint8_t *act, unsigned int na)
{
	const struct swv_flow *cand[SWV_RX_BURST], *f;
	uint64_t rank[SWV_RX_BURST], base;
	uint32_t h[SWV_RX_BURST], at[SWV_RX_BURST], i, j, nw;
	const struct swv_subtable *sub;
	const struct swv_slots *sl;
	unsigned int k, m, x;

	/* One frame, or only small subtables: frame by frame. */
	for (i = 0; i < st->nsub && na > 1; i++)
		if (rcu_dereference(st->sub[i].sub->slots)->mask >=
		    SWV_BURST_MIN_SLOTS)
			break;
	if (i == st->nsub || na <= 1) {
		for (k = 0; k < na; k++)
			out[act[k]] = swv_steer_lookup(st, &pkt[act[k]]);
		return;
	}
	for (k = 0; k < na; k++) {
		out[act[k]] = NULL;
		rank[act[k]] = UINT64_MAX;
	}
	for (i = 0; i < st->nsub && na > 0; i++) {
		base = st->sub[i].base;
		sub = st->sub[i].sub;
		nw = sub->nw;
		sl = rcu_dereference(sub->slots);
		m = 0;
		if (sl->mask < SWV_BURST_MIN_SLOTS) {
			/* Small: in cache, probed at once. */
			for (k = 0; k < na; k++) {
				x = act[k];
				if (base > rank[x])
					continue;
				act[m++] = (uint8_t)x;
				j = sub_hash(sub, &pkt[x]);
				f = sub_probe(sub, sl, &pkt[x], j, j);
				if (f != NULL && f->rank < rank[x]) {
					rank[x] = f->rank;
					out[x] = f;
				}
			}
			na = m;
			continue;
		}
		for (k = 0; k < na; k++) {
			x = act[k];
			if (base > rank[x])
				continue;	/* sorted: done for good */
			h[x] = sub_hash(sub, &pkt[x]);
			__builtin_prefetch(&sl->slot[h[x] & sl->mask]);
			act[m++] = (uint8_t)x;
		}
		na = m;
		for (k = 0; k < na; k++) {
			x = act[k];
			for (j = h[x];; j++) {
				const struct swv_slot *s =
					&sl->slot[j & sl->mask];

				f = rcu_dereference(s->f);
				if (f == NULL)
					break;
				if (f != SWV_SLOT_TOMB &&
				    SWV_LOAD(&s->hash) == h[x]) {
					__builtin_prefetch(&f->rank);
					__builtin_prefetch(&f->key[nw] - 1);
					break;
				}
			}
			cand[x] = f;
			at[x] = j;
		}
		for (k = 0; k < na; k++) {
			x = act[k];
			f = cand[x];
			if (f == NULL)
				continue;
			if (SWV_UNLIKELY(!sub_key_eq(sub, f, &pkt[x])))
				f = sub_probe(sub, sl, &pkt[x], h[x], at[x] + 1);
			if (f != NULL && f->rank < rank[x]) {
				rank[x] = f->rank;
				out[x] = f;
			}
		}
	}
}

void
swv_steer_lookup_burst(const struct swv_steer *st, const struct swv_pkt *pkt,
		       const struct swv_flow **out, unsigned int n)
{
	uint8_t act[SWV_RX_BURST];
	unsigned int k;

	for (k = 0; k < n; k++) {
		out[k] = NULL;
		act[k] = (uint8_t)k;
	}
	if (st != NULL && n > 0)
		steer_walk_burst(st, pkt, out, act, n);
}

/*
 * Flow caches (the Rx context of a device, one thread at a time).
 *
 * Tuple space search pays one probe per subtable that may hold a better
 * rule, and with rules of equal priority over many masks that is every
 * subtable. The caches remember the walk's answer per flow, as Open
 * vSwitch's userspace datapath does in front of its classifier: first an
 * exact-match cache (EMC: direct-mapped, small, for the flows that come
 * back at once), then a signature-match cache (SMC: a bucket of 16-bit
 * signatures, one line, over entries, sized to the table, for many flows),
 * then the walk. OVS can trust a signature hit once the rule matches, as
 * its megaflows never overlap; rules here overlap and rank, so an SMC
 * entry keeps the frame's key like an EMC one, and the signatures only
 * spare a miss from reading entries.
 *
 * The key is the frame's words under the union of the subtables' masks
 * (c->idx/mask): the walk never looks at other bits, so frames equal under
 * it get the same answer, whatever their TTL or payload. An entry holds the
 * answer and the device's generation it was found at. Every rule change
 * bumps dev->cls_gen (release) after its last publication; a lookup reads
 * the generation (acquire) before the table, so an entry it trusts was
 * found with every change up to that generation in place, and a rule is
 * never used from a cache after the change that removed or outranked it:
 * the entry's generation is old. A stale entry may still point at a rule
 * that has been freed: it is never read unless the generations agree, and
 * a rule destroyed after a lookup began is freed only after that reader's
 * quiescent state.
 */
static inline uint64_t
cls_mix(uint64_t h)
{
	h ^= h >> 32;
	h *= SWV_HASH_MUL;
	return h ^ (h >> 29);
}

/* The frame's words under the caches' mask into k; their hash. */
static inline uint64_t
cls_key(const struct swv_cls_cache *c, const struct swv_pkt *pkt,
	uint64_t *k)
{
	uint64_t h = 0;
	uint32_t j;

	for (j = 0; j < c->nw; j++) {
		k[j] = pkt->key.w[c->idx[j]] & c->mask[j];
		h = (h ^ k[j]) * SWV_HASH_MUL;
	}
	return cls_mix(h);
}

static inline struct swv_cls_ent *
cls_emc(const struct swv_cls_cache *c, uint64_t h)
{
	return (struct swv_cls_ent *)(c->emc + (size_t)(h & c->emc_mask) *
				      c->stride);
}

static inline uint32_t
cls_bucket(const struct swv_cls_cache *c, uint64_t h)
{
	return (uint32_t)(h >> 20) & c->smc_mask;
}

static inline uint16_t
cls_sig(uint64_t h)
{
	uint16_t sig = (uint16_t)(h >> 48);

	return sig != 0 ? sig : 1;
}

static inline struct swv_cls_ent *
cls_smc(const struct swv_cls_cache *c, uint32_t bucket, uint32_t way)
{
	return (struct swv_cls_ent *)(c->smc +
		(size_t)(bucket * SWV_SMC_WAYS + way) * c->stride);
}

static inline bool
cls_ent_eq(const struct swv_cls_ent *e, uint64_t gen, const uint64_t *k,
	   uint32_t nw)
{
	return e->gen == gen && words_eq(e->key, k, nw);
}

static inline void
cls_ent_set(struct swv_cls_ent *e, uint64_t gen, const struct swv_flow *f,
	    const uint64_t *k, uint32_t nw)
{
	e->gen = gen;
	e->f = f;
	memcpy(e->key, k, nw * sizeof(k[0]));
}

/* The first way from w on in bucket b with signature sig, or WAYS. */
static inline uint32_t
cls_sig_way(const struct swv_cls_cache *c, uint32_t b, uint16_t sig,
	    uint32_t w)
{
	const uint16_t *sg = &c->sig[b * SWV_SMC_WAYS];

	while (w < SWV_SMC_WAYS && sg[w] != sig)
		w++;
	return w;
}

/* The SMC entry for k in bucket b, from way w on, or NULL. */
static inline const struct swv_cls_ent *
cls_smc_find(const struct swv_cls_cache *c, uint32_t b, uint16_t sig,
	     uint64_t gen, const uint64_t *k, uint32_t w)
{
	const struct swv_cls_ent *e;

	for (w = cls_sig_way(c, b, sig, w); w < SWV_SMC_WAYS;
	     w = cls_sig_way(c, b, sig, w + 1)) {
		e = cls_smc(c, b, w);
		if (cls_ent_eq(e, gen, k, c->nw))
			return e;
	}
	return NULL;
}

/*
 * Remember f for k in the SMC: an empty way, else one picked by the hash
 * and a running count (two flows of one bucket do not always evict the
 * same way).
 */
static void
cls_smc_put(struct swv_cls_cache *c, uint64_t h, uint64_t gen,
	    const struct swv_flow *f, const uint64_t *k)
{
	uint32_t b = cls_bucket(c, h), w;
	uint16_t *sg = &c->sig[b * SWV_SMC_WAYS];

	for (w = 0; w < SWV_SMC_WAYS && sg[w] != 0; w++)
		;
	if (w == SWV_SMC_WAYS)
		w = (uint32_t)((h >> 40) + c->evict++) % SWV_SMC_WAYS;
	sg[w] = cls_sig(h);
	cls_ent_set(cls_smc(c, b, w), gen, f, k, c->nw);
}

/*
 * The EMC's policy. Once the EMC has shown it helps, an answer it lacked
 * (an SMC hit or a walk) enters it one time in SWV_EMC_INSERT_INV, as Open
 * vSwitch's emc-insert-inv-prob does: a steady flow is in it after a few
 * frames, while flows it cannot hold do not evict each other on every
 * frame. When over a window of SWV_EMC_WIN lookups it answered fewer than
 * one in SWV_EMC_MIN_SHARE (frames spread over many more flows than it
 * holds), it is off for the next SWV_EMC_SKIP_WINDOWS windows: no line
 * fetched, no compare, no insert; the SMC answers first. Then a trial
 * window (as is a new cache's first) takes every answer in, so that a set
 * of flows it can hold shows within that window; the window's share
 * decides again. Entries stay checked by generation and key, so one made
 * before a rule change is never used after it, whether the EMC was off in
 * between or not.
 */
static inline void
cls_emc_learn(struct swv_cls_cache *c, uint64_t h, uint64_t gen,
	      const struct swv_flow *f, const uint64_t *k)
{
	if (c->emc_skip == 0 && (++c->ins & c->emc_pace) == 0)
		cls_ent_set(cls_emc(c, h), gen, f, k, c->nw);
}

/* Account n lookups, emc of them EMC hits; end a window when it is full. */
static inline void
cls_emc_window(struct swv_cls_cache *c, unsigned int n, unsigned int emc)
{
	c->win_n += n;
	c->win_emc += emc;
	if (c->win_n < SWV_EMC_WIN)
		return;
	if (c->emc_skip > 0) {
		if (--c->emc_skip == 0)
			c->emc_pace = 0;	/* the trial window */
	} else if ((uint64_t)c->win_emc * SWV_EMC_MIN_SHARE < c->win_n) {
		c->emc_skip = SWV_EMC_SKIP_WINDOWS;
	} else {
		c->emc_pace = SWV_EMC_INSERT_INV - 1;
	}
	c->win_n = 0;
	c->win_emc = 0;
}

void
swv_classify_prefetch(const struct swv_device *dev, const struct swv_pkt *pkt)
{
	const struct swv_steer *st = rcu_dereference(dev->steer);
	const struct swv_cls_cache *c;
	const struct swv_subtable *sub;
	const struct swv_slots *sl;
	uint64_t k[SWV_KEY_WORDS], h;

	if (st == NULL)
		return;
	c = st->cls;
	if (c != NULL) {
		/* With the EMC on, its lines are likely in cache already. */
		if (c->emc_skip > 0) {
			h = cls_key(c, pkt, k);
			__builtin_prefetch(&c->sig[cls_bucket(c, h) *
						   SWV_SMC_WAYS]);
		}
		return;
	}
	sub = st->sub[0].sub;
	sl = rcu_dereference(sub->slots);
	if (sl->mask >= SWV_BURST_MIN_SLOTS)
		__builtin_prefetch(&sl->slot[sub_hash(sub, pkt) & sl->mask]);
}

void
swv_classify_burst(struct swv_device *dev, const struct swv_pkt *pkt,
		   const struct swv_flow **out, unsigned int n)
{
	uint64_t gen = SWV_LOAD_ACQ(&dev->cls_gen), h[SWV_RX_BURST];
	uint64_t key[SWV_RX_BURST][SWV_KEY_WORDS];
	const struct swv_steer *st = rcu_dereference(dev->steer);
	const struct swv_cls_ent *e;
	struct swv_cls_cache *c;
	uint8_t act[SWV_RX_BURST], wk[SWV_RX_BURST], at[SWV_RX_BURST];
	unsigned int k, na = 0, nb = 0;
	uint32_t b;
	bool emc;

	if (st == NULL || n == 0) {
		for (k = 0; k < n; k++)
			out[k] = NULL;
		return;
	}
	c = st->cls;
	if (c == NULL || gen == 0) {
		swv_steer_lookup_burst(st, pkt, out, n);
		SWV_STORE(&dev->cls_hits[2], dev->cls_hits[2] + n);
		return;
	}
	emc = c->emc_skip == 0;
	/* The caches' lines for every frame, their misses overlapping. */
	for (k = 0; k < n; k++) {
		h[k] = cls_key(c, &pkt[k], key[k]);
		if (emc)
			__builtin_prefetch(cls_emc(c, h[k]));
		__builtin_prefetch(&c->sig[cls_bucket(c, h[k]) *
					   SWV_SMC_WAYS]);
	}
	/* EMC; the misses fetch the SMC entry their signature names. */
	for (k = 0; k < n; k++) {
		e = cls_emc(c, h[k]);
		if (emc && SWV_LIKELY(cls_ent_eq(e, gen, key[k], c->nw))) {
			out[k] = e->f;
			if (e->f != NULL)
				__builtin_prefetch(&e->f->rank);
			continue;
		}
		b = cls_bucket(c, h[k]);
		at[k] = cls_sig_way(c, b, cls_sig(h[k]), 0);
		if (at[k] < SWV_SMC_WAYS)
			__builtin_prefetch(cls_smc(c, b, at[k]));
		act[na++] = (uint8_t)k;
	}
	for (k = 0; k < na; k++) {
		unsigned int x = act[k];

		b = cls_bucket(c, h[x]);
		e = cls_smc_find(c, b, cls_sig(h[x]), gen, key[x], at[x]);
		if (e == NULL) {
			act[nb++] = (uint8_t)x;
			continue;
		}
		out[x] = e->f;
		if (e->f != NULL)
			__builtin_prefetch(&e->f->rank);
		cls_emc_learn(c, h[x], gen, e->f, key[x]);
	}
	cls_emc_window(c, n, n - na);
	/* One store each a burst: the Rx context is their only writer. */
	SWV_STORE(&dev->cls_hits[0], dev->cls_hits[0] + (n - na));
	if (na != nb)
		SWV_STORE(&dev->cls_hits[1], dev->cls_hits[1] + (na - nb));
	if (nb == 0)
		return;
	SWV_STORE(&dev->cls_hits[2], dev->cls_hits[2] + nb);
	/* The walk; the SMC learns its answers, the EMC some of them. */
	memcpy(wk, act, nb);
	steer_walk_burst(st, pkt, out, wk, nb);
	for (k = 0; k < nb; k++) {
		unsigned int x = act[k];

		cls_smc_put(c, h[x], gen, out[x], key[x]);
		cls_emc_learn(c, h[x], gen, out[x], key[x]);
	}
}

int
swv_query_cls_stats(struct ibv_context *context, struct swv_cls_stats *st)
{
	const struct swv_device *dev;

	if (context == NULL || st == NULL)
		return EINVAL;
	dev = swv_ctx_dev(context);
	st->emc_hits = SWV_LOAD(&dev->cls_hits[0]);
	st->smc_hits = SWV_LOAD(&dev->cls_hits[1]);
	st->walks = SWV_LOAD(&dev->cls_hits[2]);
	return 0;
}

const struct swv_flow *
swv_classify(struct swv_device *dev, const struct swv_pkt *pkt)
{
	const struct swv_flow *f;

	swv_classify_burst(dev, pkt, &f, 1);
	return f;
}

/*
 * Control path (swv_lock): the caches a table needs. Their mask must cover
 * every subtable's, and the SMC grows with the table, so a new cache is
 * made when a subtable adds bits the cache does not look at or the rules
 * outgrow its SMC. A cache made for more bits than the table has still
 * answers right (it only tells apart frames the walk would not).
 * SWV_CLASSIFIER_NOCACHE set in the environment (not "0") turns them off,
 * for a peer in benchmarks.
 */
static int cls_off = -1;

/*
 * Below this many subtables the walk is as cheap as the caches (one or two
 * probes of lines a cache lookup would fetch as well): no caches.
 */
#define SWV_CLS_MIN_SUBTABLES 3u

static bool
cls_disabled(void)
{
	const char *v;

	if (cls_off < 0) {
		v = getenv("SWV_CLASSIFIER_NOCACHE");
		cls_off = v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
	}
	return cls_off != 0;
}

/* Whether cache c looks at every bit of sub's mask. */
static bool
cls_covers(const struct swv_cls_cache *c, const struct swv_subtable *sub)
{
	uint32_t i, j = 0;

	for (i = 0; i < sub->nw; i++) {
		while (j < c->nw && c->idx[j] < sub->idx[i])
			j++;
		if (j == c->nw || c->idx[j] != sub->idx[i] ||
		    (sub->mask[i] & ~c->mask[j]) != 0)
			return false;
	}
	return true;
}

/* The most an SMC's entries take (a mask over many words has fewer). */
#define SWV_SMC_MAX_BYTES (8u << 20)

/*
 * SMC buckets for a table of n rules and entries of stride bytes: room for
 * twice as many flows, within SWV_SMC_MAX_BUCKETS and SWV_SMC_MAX_BYTES.
 */
static uint32_t
cls_buckets(uint32_t n, uint32_t stride)
{
	uint32_t b = SWV_SMC_MIN_BUCKETS;

	while (b < SWV_SMC_MAX_BUCKETS && b * SWV_SMC_WAYS < 2ull * n &&
	       2ull * b * SWV_SMC_WAYS * stride <= SWV_SMC_MAX_BYTES)
		b <<= 1;
	return b;
}

/*
 * A cache is mapped, not allocated: its pages are zero and faulted in when
 * the Rx context first writes an entry there, so a table that sees few
 * flows (or none: rules made with the port idle) does not pay resident
 * memory for all its SMC. Transparent huge pages where the kernel allows
 * (madvise mode) from 2 MiB on: a random entry then costs no TLB miss.
 */
#define SWV_CLS_HUGE_SIZE (2u << 20)

/* Unmap a cache (no reader can see it). */
static void
cls_free(struct swv_cls_cache *c)
{
	if (c != NULL)
		munmap(c, c->size);
}

/* A new, empty cache for the subtables of st and n rules, or NULL. */
static struct swv_cls_cache *
cls_new(const struct swv_steer *st, uint32_t n)
{
	uint64_t um[SWV_KEY_WORDS] = { 0 };
	struct swv_cls_cache *c;
	size_t hsz, esz, ssz, size;
	uint32_t i, j, nw = 0, nb, stride;
	uint8_t *p;

	for (i = 0; i < st->nsub; i++) {
		const struct swv_subtable *s = st->sub[i].sub;

		for (j = 0; j < s->nw; j++)
			um[s->idx[j]] |= s->mask[j];
	}
	for (i = 0; i < SWV_KEY_WORDS; i++)
		nw += um[i] != 0;
	stride = sizeof(struct swv_cls_ent) + nw * sizeof(uint64_t);
	nb = cls_buckets(n, stride);
	hsz = (sizeof(*c) + SWV_CACHE_LINE - 1) & ~(size_t)(SWV_CACHE_LINE - 1);
	esz = (size_t)SWV_EMC_ENTRIES * stride;
	ssz = (size_t)nb * SWV_SMC_WAYS * sizeof(uint16_t);
	size = hsz + esz + ssz + (size_t)nb * SWV_SMC_WAYS * stride;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (size >= SWV_CLS_HUGE_SIZE)
		madvise(p, size, MADV_HUGEPAGE);	/* a hint */
	c = (struct swv_cls_cache *)p;
	c->size = size;
	c->nw = nw;
	c->stride = stride;
	c->emc_mask = SWV_EMC_ENTRIES - 1;
	c->smc_mask = nb - 1;
	c->cap = nb * SWV_SMC_WAYS;
	c->full = cls_buckets(UINT32_MAX, stride) == nb;
	for (i = 0, j = 0; i < SWV_KEY_WORDS; i++) {
		if (um[i] == 0)
			continue;
		c->idx[j] = (uint8_t)i;
		c->mask[j] = um[i];
		j++;
	}
	c->emc = p + hsz;
	c->sig = (uint16_t *)(p + hsz + esz);
	c->smc = p + hsz + esz + ssz;
	return c;
}

/*
 * The cache for st (n rules), given the one in use: kept when it covers
 * every subtable and its SMC is not outgrown, else a new one (old is then
 * the caller's to retire). NULL: none (off, or no memory: the walk alone
 * answers, which is slower, not wrong).
 */
static struct swv_cls_cache *
cls_fit(const struct swv_steer *st, struct swv_cls_cache *old, uint32_t n)
{
	uint32_t i;

	if (cls_disabled() || st->nsub < SWV_CLS_MIN_SUBTABLES)
		return NULL;
	if (old != NULL && (old->cap >= 2ull * n || old->full)) {
		for (i = 0; i < st->nsub; i++)
			if (!cls_covers(old, st->sub[i].sub))
				break;
		if (i == st->nsub)
			return old;
	}
	return cls_new(st, n);
}

/* Whether dev's caches are outgrown by n rules. */
static bool
cls_outgrown(const struct swv_device *dev, uint32_t n)
{
	const struct swv_cls_cache *c = dev->steer == NULL ? NULL :
					dev->steer->cls;

	return c != NULL && c->cap < 2ull * n && !c->full;
}

/* After a rule change: the caches' entries are stale from now on. */
static inline void
cls_bump(struct swv_device *dev)
{
	SWV_STORE_REL(&dev->cls_gen, dev->cls_gen + 1);
}

/*
 * Retired objects, freed after the next grace period (swv_lock). A rule is
 * entered with its low bit set (objects are 8-byte aligned) and goes back
 * to the pool, its tally folded into its counters object first; a flow
 * cache with bit 1 set, and is unmapped; anything else was malloc()ed.
 *
 * swv_retire() only enters an object: it never frees, so the update that
 * retires an object may go on reading it (sub_rehash() reads the old array
 * it has just retired). Objects are freed only by swv_retire_flush(), which
 * runs at the end of an update (swv_retire_done()) or when nothing is in use
 * (a device's steering freed): never while an update holds pointers into
 * what it retired. The list is a fixed array: an update retires at most
 * SWV_RETIRE_PER_OP objects, and the list is flushed at the end of any
 * update that leaves SWV_RETIRE_BATCH or more, so entering one can neither
 * fail nor need memory.
 *
 * Each engine has its list (struct swv_engine retire), and a rule on it
 * goes back to that engine's pool: the one it came from, since a device
 * moves to another engine only with no context open (so no rule nor
 * counters object live) and after its old engine's list is flushed
 * (swv_device_set_engine()). One swv_lock covers every engine's pool and
 * list: updates are control path, and one lock keeps a counters object's
 * release (which may free it) ordered with its destroy.
 *
 * The grace period. synchronize_rcu() waits for every liburcu-qsbr reader
 * of the process, not only eng's: engine threads, service lcores and
 * inline callers of every engine. That is more than a flush needs, never
 * less: whatever thread drives a device, it reads the device's tables as
 * a registered reader, online only inside a pass. So a flush stays right
 * with any number of engines; it costs one pass of the slowest engine
 * that is in one (engines with no thread, and idle ones, are offline and
 * do not hold it up).
 */
#define SWV_RETIRED_RULE ((uintptr_t)1)
#define SWV_RETIRED_CACHE ((uintptr_t)2)

static void
retire_release(struct swv_engine *eng, void *p)
{
	struct swv_flow *f;

	if (((uintptr_t)p & SWV_RETIRED_CACHE) != 0) {
		cls_free((struct swv_cls_cache *)((uintptr_t)p &
						  ~SWV_RETIRED_CACHE));
		return;
	}
	if (!((uintptr_t)p & SWV_RETIRED_RULE)) {
		free(p);
		return;
	}
	f = (struct swv_flow *)((uintptr_t)p & ~SWV_RETIRED_RULE);
	if (f->cnt != NULL)
		swv_counters_release(f->cnt, f);
	swv_pool_free(&eng->pool, f, SWV_POOL_RULE(f->nw, f->cnt != NULL));
}

/* Free everything retired: only where no update holds any of it. */
void
swv_retire_flush(struct swv_engine *eng)
{
	struct swv_retire_list *rl = &eng->retire;
	size_t i;

	rl->big = false;
	if (rl->n == 0)
		return;
	synchronize_rcu();
	for (i = 0; i < rl->n; i++)
		retire_release(eng, rl->obj[i]);
	SWV_STORE(&rl->n, 0);
}

/* Free p once the engine cannot see it any more; p stays valid until the
 * update that retires it ends.
 */
void
swv_retire(struct swv_engine *eng, void *p)
{
	struct swv_retire_list *rl = &eng->retire;

	if (p == NULL)
		return;
	assert(rl->n < sizeof(rl->obj) / sizeof(rl->obj[0]));
	rl->obj[rl->n] = p;
	SWV_STORE(&rl->n, rl->n + 1);
}

/*
 * The end of an update (swv_lock): what it retired is no longer in use.
 * One grace period for a batch, or now for a huge array: that is worth a
 * grace period rather than staying mapped until the next batch (the engine
 * does not wait for it, and rehashes double: a handful per million
 * inserts).
 */
void
swv_retire_done(struct swv_engine *eng)
{
	if (eng->retire.n >= SWV_RETIRE_BATCH || eng->retire.big)
		swv_retire_flush(eng);
}

/* Return a rule to the pool once the engine cannot see it any more. */
void
swv_retire_rule(struct swv_engine *eng, struct swv_flow *f)
{
	swv_retire(eng, (void *)((uintptr_t)f | SWV_RETIRED_RULE));
}

/*
 * Slot arrays of 2 MB and more sit on transparent huge pages where the
 * kernel allows it (madvise mode): a lookup or insert at a random slot of a
 * 1M-rule table then costs a cache miss, not also a page walk that misses,
 * and the array faults in 512 times fewer pages. Freed with free().
 */
#define SWV_HUGE_SIZE (2u << 20)

/* Zeroed memory for free(), on huge pages from SWV_HUGE_SIZE on, or NULL. */
static void *
big_zalloc(size_t size)
{
	void *p;

	if (size < SWV_HUGE_SIZE)
		return calloc(1, size);
	size = (size + SWV_HUGE_SIZE - 1) & ~(size_t)(SWV_HUGE_SIZE - 1);
	if (posix_memalign(&p, SWV_HUGE_SIZE, size) != 0)
		return NULL;
	madvise(p, size, MADV_HUGEPAGE);	/* a hint */
	memset(p, 0, size);
	return p;
}

static struct swv_slots *
slots_alloc(uint32_t n)
{
	struct swv_slots *sl;

	sl = big_zalloc(sizeof(struct swv_slots) +
			(size_t)n * sizeof(struct swv_slot));
	if (sl != NULL)
		sl->mask = n - 1;
	return sl;
}

/* Put a head in a table with no tombstone and no equal key. */
static void
slots_put(struct swv_slots *sl, struct swv_flow *f)
{
	uint32_t j;

	for (j = f->hash; sl->slot[j & sl->mask].f != NULL; j++)
		;
	sl->slot[j & sl->mask].hash = f->hash;
	sl->slot[j & sl->mask].f = f;
	sl->used++;
}

/* Put head f in slot at of a published table: hash first, then f. */
static inline void
slot_publish(struct swv_slot *s, struct swv_flow *f)
{
	SWV_STORE(&s->hash, f->hash);
	rcu_assign_pointer(s->f, f);
}

/* Rebuild the hash with room for @want keys; publish it. 0 or ENOMEM. */
static int
sub_rehash(struct swv_engine *eng, struct swv_subtable *sub, uint32_t want)
{
	struct swv_slots *old = sub->slots, *sl;
	uint32_t n = 8, j;

	while (n < want * 2)
		n <<= 1;
	sl = slots_alloc(n);
	if (sl == NULL)
		return ENOMEM;
	for (j = 0; j <= old->mask; j++)
		if (old->slot[j].f != NULL && old->slot[j].f != SWV_SLOT_TOMB)
			slots_put(sl, old->slot[j].f);
	rcu_assign_pointer(sub->slots, sl);
	if ((size_t)(old->mask + 1) * sizeof(old->slot[0]) >= SWV_HUGE_SIZE)
		eng->retire.big = true;
	swv_retire(eng, old);
	return 0;
}

/* The slot index holding f's key, or -1. */
static int64_t
sub_find(const struct swv_subtable *sub, const struct swv_flow *f,
	 int64_t *tomb)
{
	const struct swv_slots *sl = sub->slots;
	struct swv_flow *s;
	uint32_t j;

	if (tomb != NULL)
		*tomb = -1;
	for (j = f->hash;; j++) {
		s = sl->slot[j & sl->mask].f;
		if (s == NULL)
			return -1;
		if (s == SWV_SLOT_TOMB) {
			if (tomb != NULL && *tomb < 0)
				*tomb = j & sl->mask;
			continue;
		}
		if (sl->slot[j & sl->mask].hash == f->hash &&
		    words_eq(s->key, f->key, sub->nw))
			return j & sl->mask;
	}
}

/* Insert f (sub, key, hash, rank set). 0 or ENOMEM. */
static int
sub_insert(struct swv_engine *eng, struct swv_subtable *sub,
	   struct swv_flow *f)
{
	struct swv_slots *sl;
	struct swv_flow *h, **pp;
	int64_t at, tomb;
	uint32_t j;

	at = sub_find(sub, f, &tomb);
	if (at >= 0) {
		sl = sub->slots;
		h = sl->slot[at].f;
		if (f->rank < h->rank) {
			f->same = h;
			rcu_assign_pointer(sl->slot[at].f, f);
			return 0;
		}
		/* Not the head: the engine never sees it until it is. */
		for (pp = &h->same; *pp != NULL && (*pp)->rank < f->rank;
		     pp = &(*pp)->same)
			;
		f->same = *pp;
		*pp = f;
		return 0;
	}
	sl = sub->slots;
	if (tomb < 0 && (sl->used + 1) * 4 > (sl->mask + 1) * 3) {
		if (sub_rehash(eng, sub, sub->nkeys + 1) != 0)
			return ENOMEM;
		sl = sub->slots;
		for (j = f->hash; sl->slot[j & sl->mask].f != NULL; j++)
			;
		tomb = -1;
		at = j & sl->mask;
	} else if (tomb < 0) {
		for (j = f->hash; sl->slot[j & sl->mask].f != NULL; j++)
			;
		at = j & sl->mask;
	}
	f->same = NULL;
	if (tomb >= 0) {
		slot_publish(&sl->slot[tomb], f);
	} else {
		slot_publish(&sl->slot[at], f);
		sl->used++;
	}
	sub->nkeys++;
	return 0;
}

/* Remove f from its subtable; f itself is retired by the caller. */
static void
sub_remove(struct swv_engine *eng, struct swv_subtable *sub,
	   struct swv_flow *f)
{
	struct swv_slots *sl = sub->slots;
	struct swv_flow *h, **pp;
	int64_t at;

	at = sub_find(sub, f, NULL);
	if (at < 0)
		return;		/* cannot happen */
	h = sl->slot[at].f;
	if (h == f) {
		if (f->same != NULL) {
			rcu_assign_pointer(sl->slot[at].f, f->same);
			return;
		}
		rcu_assign_pointer(sl->slot[at].f, SWV_SLOT_TOMB);
		sub->nkeys--;
		/* Too many tombstones make misses long: clean up. */
		if (sl->used > 16 && sl->used > sub->nkeys * 2 +
		    (sl->mask + 1) / 8)
			sub_rehash(eng, sub, sub->nkeys);
		return;
	}
	for (pp = &h->same; *pp != NULL && *pp != f; pp = &(*pp)->same)
		;
	if (*pp == f)
		*pp = f->same;
}

/* Count a rule's priority in its subtable; return the best base. */
static int
sub_prio_add(struct swv_subtable *sub, uint64_t base)
{
	struct swv_prio_count *p;
	uint32_t i;

	for (i = 0; i < sub->nprio && sub->prio[i].base < base; i++)
		;
	if (i < sub->nprio && sub->prio[i].base == base) {
		sub->prio[i].n++;
		return 0;
	}
	p = realloc(sub->prio, (sub->nprio + 1) * sizeof(*p));
	if (p == NULL)
		return ENOMEM;
	sub->prio = p;
	memmove(&p[i + 1], &p[i], (sub->nprio - i) * sizeof(*p));
	p[i].base = base;
	p[i].n = 1;
	sub->nprio++;
	return 0;
}

static void
sub_prio_del(struct swv_subtable *sub, uint64_t base)
{
	uint32_t i;

	for (i = 0; i < sub->nprio && sub->prio[i].base != base; i++)
		;
	if (i == sub->nprio)
		return;
	if (--sub->prio[i].n == 0) {
		memmove(&sub->prio[i], &sub->prio[i + 1],
			(sub->nprio - i - 1) * sizeof(sub->prio[0]));
		sub->nprio--;
	}
}

static void
sub_free(struct swv_subtable *sub)
{
	free(sub->slots);
	free(sub->prio);
	free(sub);
}

void
swv_steer_free(struct swv_engine *eng, struct swv_steer *st)
{
	uint32_t i;

	swv_retire_flush(eng);
	if (st == NULL)
		return;
	for (i = 0; i < st->nsub; i++)
		sub_free(st->sub[i].sub);
	cls_free(st->cls);
	free(st);
}

static int
ent_cmp(const void *a, const void *b)
{
	const struct swv_steer_ent *x = a, *y = b;

	return x->base < y->base ? -1 : x->base > y->base ? 1 : 0;
}

/*
 * Publish dev's subtable array with: sub's base refreshed (or sub added when
 * absent), and drop (when not NULL) left out. 0 or ENOMEM.
 */
static int
steer_publish(struct swv_device *dev, struct swv_subtable *sub,
	      struct swv_subtable *drop)
{
	struct swv_steer *old = dev->steer, *st;
	uint32_t i, n = 0, nold = old == NULL ? 0 : old->nsub;
	bool found = false;

	st = malloc(sizeof(*st) + (nold + 1) * sizeof(st->sub[0]));
	if (st == NULL)
		return ENOMEM;
	for (i = 0; i < nold; i++) {
		struct swv_subtable *s = old->sub[i].sub;

		if (s == drop)
			continue;
		st->sub[n].sub = s;
		st->sub[n].base = s->lb;
		found |= s == sub;
		n++;
	}
	if (sub != NULL && !found) {
		st->sub[n].sub = sub;
		st->sub[n].base = sub->lb;
		n++;
	}
	st->nsub = n;
	qsort(st->sub, n, sizeof(st->sub[0]), ent_cmp);
	st->cls = NULL;
	if (n == 0) {
		free(st);
		st = NULL;
	} else {
		st->cls = cls_fit(st, old == NULL ? NULL : old->cls,
				  dev->nflows + 1);
	}
	rcu_assign_pointer(dev->steer, st);
	if (old != NULL && old->cls != NULL &&
	    (st == NULL || st->cls != old->cls)) {
		if (old->cls->size >= SWV_HUGE_SIZE)
			dev->eng->retire.big = true;
		swv_retire(dev->eng,
			   (void *)((uintptr_t)old->cls | SWV_RETIRED_CACHE));
	}
	swv_retire(dev->eng, old);
	return 0;
}

/* The subtable of a mask, or NULL. */
static struct swv_subtable *
steer_find_sub(const struct swv_device *dev, uint32_t nw, const uint8_t *idx,
	       const uint64_t *mask)
{
	const struct swv_steer *st = dev->steer;
	uint32_t i;

	if (st == NULL)
		return NULL;
	for (i = 0; i < st->nsub; i++) {
		struct swv_subtable *s = st->sub[i].sub;

		if (s->nw == nw && memcmp(s->idx, idx, nw) == 0 &&
		    words_eq(s->mask, mask, nw))
			return s;
	}
	return NULL;
}

/* Add f (key and hash set) to dev's table (swv_lock). 0 or ENOMEM. */
static int
steer_add(struct swv_device *dev, struct swv_flow *f, uint32_t nw,
	  const uint8_t *idx, const uint64_t *mask)
{
	struct swv_subtable *sub;
	uint64_t base = f->rank & ~SWV_RANK_SEQ_MASK, best, lb;
	bool fresh = false;
	int ret;

	sub = steer_find_sub(dev, nw, idx, mask);
	if (sub == NULL) {
		sub = calloc(1, sizeof(*sub));
		if (sub == NULL)
			return ENOMEM;
		sub->slots = slots_alloc(8);
		if (sub->slots == NULL) {
			free(sub);
			return ENOMEM;
		}
		sub->nw = nw;
		memcpy(sub->idx, idx, nw);
		memcpy(sub->mask, mask, nw * sizeof(mask[0]));
		fresh = true;
	}
	best = sub->nprio > 0 ? sub->prio[0].base : UINT64_MAX;
	lb = sub->lb;
	ret = sub_prio_add(sub, base);
	if (ret != 0)
		goto err;
	f->sub = sub;
	/*
	 * The first rule of a better base is the best the subtable holds; at
	 * the best base, a rule may rank before the bound when its seq is not
	 * its creation (the mlx5 profile's flow groups, flow.c).
	 */
	if (fresh || base < best || f->rank < lb)
		sub->lb = f->rank;
	/*
	 * A better best first: the engine must not stop before sub. A new
	 * array also brings caches that cover sub's mask and the rules.
	 */
	if (fresh || base < best || f->rank < lb ||
	    cls_outgrown(dev, dev->nflows + 1)) {
		ret = steer_publish(dev, sub, NULL);
		if (ret != 0) {
			sub_prio_del(sub, base);
			goto err;
		}
	}
	ret = sub_insert(dev->eng, sub, f);
	if (ret != 0) {
		sub_prio_del(sub, base);
		sub->lb = lb;
		if (fresh) {
			/*
			 * Published above: out of the array again, then gone
			 * after a grace period. Without the memory for the
			 * array, keep it there, empty, as steer_del() does.
			 */
			if (steer_publish(dev, NULL, sub) != 0)
				return ret;
			swv_retire(dev->eng, sub->slots);
			free(sub->prio);
			swv_retire(dev->eng, sub);
		} else if (base < best || f->rank < lb) {
			steer_publish(dev, sub, NULL);
		}
		return ret;
	}
	return 0;
err:
	if (fresh)
		sub_free(sub);
	return ret;
}

/* Remove f from dev's table (swv_lock); f is retired by the caller. */
static void
steer_del(struct swv_device *dev, struct swv_flow *f)
{
	struct swv_subtable *sub = f->sub;
	uint64_t base = f->rank & ~SWV_RANK_SEQ_MASK, best;

	sub_remove(dev->eng, sub, f);
	best = sub->prio[0].base;
	sub_prio_del(sub, base);
	if (sub->nprio == 0) {
		/* Empty: out of the array, then gone after a grace period. */
		if (steer_publish(dev, NULL, sub) != 0) {
			/* Keep it (empty) rather than fail a destroy. */
			return;
		}
		swv_retire(dev->eng, sub->slots);
		free(sub->prio);
		swv_retire(dev->eng, sub);
	} else if (sub->prio[0].base != best) {
		/*
		 * A worse best: every rule left ranks at or after its base.
		 * Harmless if this fails (the walk goes on).
		 */
		sub->lb = sub->prio[0].base;
		steer_publish(dev, sub, NULL);
	}
}

/*
 * The rule changes: whatever they did (also when an add fails half-way,
 * having published and taken back), the caches' entries are stale after.
 */
int
swv_steer_add(struct swv_device *dev, struct swv_flow *f, uint32_t nw,
	      const uint8_t *idx, const uint64_t *mask)
{
	int ret = steer_add(dev, f, nw, idx, mask);

	cls_bump(dev);
	return ret;
}

void
swv_steer_del(struct swv_device *dev, struct swv_flow *f)
{
	steer_del(dev, f);
	cls_bump(dev);
}

/*
 * mlx5 merges a rule with an equal match at the same priority into one
 * entry, and refuses (EEXIST, fs_core.c check_conflicting_ftes) one whose
 * action disagrees: drop against forward, or another tag. Counting is not
 * an action that conflicts. swv_lock held.
 */
int
swv_steer_conflict(const struct swv_device *dev, const struct swv_flow *f,
		   uint32_t nw, const uint8_t *idx, const uint64_t *mask)
{
	const struct swv_subtable *sub = steer_find_sub(dev, nw, idx, mask);
	uint64_t base = f->rank & ~SWV_RANK_SEQ_MASK;
	const struct swv_flow *o;
	int64_t at;

	if (sub == NULL)
		return 0;
	at = sub_find(sub, f, NULL);
	if (at < 0)
		return 0;
	for (o = sub->slots->slot[at].f; o != NULL; o = o->same) {
		if ((o->rank & ~SWV_RANK_SEQ_MASK) != base)
			continue;
		if (((o->actions ^ f->actions) & SWV_ACT_DROP) != 0 ||
		    o->tag != f->tag)
			return EEXIST;
	}
	return 0;
}

