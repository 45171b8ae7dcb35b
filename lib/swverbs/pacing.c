/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Packet pacing: per-QP rate limits (ibv_modify_qp_rate_limit(),
 * ibv_modify_qp() with IBV_QP_RATE_LIMIT).
 *
 * Control path. The rules are mlx5's (rdma-core's mlx5 provider, the
 * kernel's raw packet QP path) where the man page is silent: the rate in
 * kbit/s within packet_pacing_caps, or 0 for no limit; max_burst_sz and
 * typical_pkt_sz only with a rate (0: the defaults); comp_mask 0; the QP a
 * RAW_PACKET QP with a send queue, in RTS. On the mlx5 profile a burst
 * or packet size needs the device's burst pacing (pace_burst; the
 * "mlx5-noburst" profile has none: EINVAL, as the mlx5 provider gives
 * without MLX5_IB_PP_SUPPORT_BURST and the kernel without the
 * packet_pacing_burst_bound / _typical_size caps), and each distinct
 * (rate, burst, size) takes an entry of the device's rate table, shared
 * by the QPs that set the same; a limit that needs a new entry when all
 * are taken gets ENOSPC (the kernel's mlx5_rl_add_rate()). A new limit
 * takes its entry before the old one is let go, as mlx5 does: a QP alone
 * on its entry cannot move to a new limit on a full table. A new limit
 * is published as an
 * immutable struct swv_pace_cfg (RCU pointer, the old one freed after
 * synchronize_rcu()) and announced by bumping the QP's pace_gen; the engine picks
 * it up at its next look at the QP, keeping the bucket's level, so a
 * change on a running QP loses and reorders nothing: frames wait in the
 * send queue, never dropped for pacing.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "swv_engine.h"

/* ns * kbit/s per byte: a byte takes 8e6 / rate ns at rate kbit/s. */
#define SWV_PACE_NS_KBPS 8000000ull
/* The default bucket: 1 ms at the rate, two typical frames at least. */
#define SWV_PACE_BURST_NS 1000000ull

int
swv_pace_check(const struct swv_qp *qp, uint32_t rate, uint32_t burst,
	       uint32_t typical)
{
	if (qp->is_hash)
		return EINVAL;	/* no send queue: nothing to pace */
	if (rate == 0)
		return burst != 0 || typical != 0 ? EINVAL : 0;
	if ((burst != 0 || typical != 0) && !qp->dev->pace_burst)
		return EINVAL;
	if (rate < SWV_PACE_RATE_MIN || rate > qp->dev->pace_max)
		return EINVAL;
	if (typical > SWV_MAX_FRAME)
		return EINVAL;
	return 0;
}

/* The wheel of dev, made with its first limit (swv_lock held). */
static int
pace_wheel(struct swv_device *dev)
{
	struct swv_wheel *w;
	unsigned int i;

	if (dev->wheel != NULL)
		return 0;
	w = swv_zalloc_aligned(sizeof(*w));
	if (w == NULL)
		return ENOMEM;
	pthread_spin_init(&w->lock, PTHREAD_PROCESS_PRIVATE);
	for (i = 0; i < SWV_WHEEL_SLOTS; i++)
		CDS_INIT_LIST_HEAD(&w->slot[i]);
	w->tick = swv_now_ns() >> SWV_WHEEL_SHIFT;
	rcu_assign_pointer(dev->wheel, w);
	return 0;
}

/*
 * The rate table entry (+ 1) for qp's new limit into *slot: qp's own when
 * equal, else one more user of an equal entry, else a free one; ENOSPC
 * when none is free. 0 with *slot 0 on a device without a table or for
 * no limit (swv_lock held).
 */
static int
rl_get(struct swv_qp *qp, uint32_t rate, uint32_t burst, uint32_t typical,
       uint32_t *slot)
{
	struct swv_device *dev = qp->dev;
	struct swv_rl_entry *e, *free_e = NULL;
	unsigned int i;

	*slot = 0;
	if (!dev->strict || rate == 0)
		return 0;
	for (i = 0; i < SWV_RL_TABLE_SIZE; i++) {
		e = &dev->rl[i];
		if (e->refs == 0) {
			if (free_e == NULL)
				free_e = e;
			continue;
		}
		if (e->rate == rate && e->burst == burst &&
		    e->typical == typical) {
			if (qp->rl_slot != i + 1)
				e->refs++;
			*slot = i + 1;
			return 0;
		}
	}
	if (free_e == NULL)
		return ENOSPC;
	free_e->rate = rate;
	free_e->burst = burst;
	free_e->typical = typical;
	free_e->refs = 1;
	*slot = (uint32_t)(free_e - dev->rl) + 1;
	return 0;
}

/* Let go of entry slot - 1 (0: none). */
static void
rl_put(struct swv_device *dev, uint32_t slot)
{
	if (slot != 0 && dev->rl[slot - 1].refs > 0)
		dev->rl[slot - 1].refs--;
}

int
swv_pace_set(struct swv_qp *qp, uint32_t rate, uint32_t burst,
	     uint32_t typical)
{
	struct swv_pace_cfg *cfg = NULL, *old;
	uint32_t frame, slot;
	uint64_t depth;
	int ret;

	ret = rl_get(qp, rate, burst, typical, &slot);
	if (ret != 0)
		return ret;
	if (rate != 0) {
		ret = pace_wheel(qp->dev);
		if (ret == 0) {
			cfg = calloc(1, sizeof(*cfg));
			if (cfg == NULL)
				ret = ENOMEM;
		}
		if (ret != 0) {
			if (slot != qp->rl_slot)
				rl_put(qp->dev, slot);
			return ret;
		}
		/*
		 * The default packet is the port MTU; the frame that carries
		 * it has an Ethernet header more: the default bucket takes two
		 * such frames (or two of the packet size given).
		 */
		frame = typical;
		if (typical == 0) {
			typical = swv_dev_mtu(qp->dev);
			frame = typical + SWV_ETH_HLEN;
		}
		if (burst == 0) {
			depth = (uint64_t)rate * SWV_PACE_BURST_NS /
				SWV_PACE_NS_KBPS;
			if (depth < 2ull * frame)
				depth = 2ull * frame;
			burst = depth > UINT32_MAX ? UINT32_MAX :
				(uint32_t)depth;
		}
		cfg->rate = rate;
		cfg->burst = burst;
		cfg->typical = typical;
	}
	/* The new limit holds its entry: the old one goes. */
	if (slot != qp->rl_slot)
		rl_put(qp->dev, qp->rl_slot);
	qp->rl_slot = slot;
	old = qp->pace_cfg;
	rcu_assign_pointer(qp->pace_cfg, cfg);
	SWV_STORE_REL(&qp->pace_gen, qp->pace_gen + 1);
	swv_qps_changed(qp->dev);	/* a waiting QP is visited again */
	/*
	 * The old limit goes after a grace period waited for here, not with
	 * call_rcu(): liburcu's call_rcu thread could run a callback after
	 * the PMD .so that carries swverbs is dlclosed. Every caller is on
	 * the control path with swv_lock held (rate_limit, modify_qp, the
	 * reset and destroy of a QP, which wait for grace periods already),
	 * never in a pass; and limits change rarely.
	 */
	if (old != NULL) {
		synchronize_rcu();
		free(old);
	}
	/* A sleeping engine thread looks now: a waiting QP may go. */
	swv_doorbell(qp->dev->eng);
	return 0;
}

void
swv_pace_fini(struct swv_device *dev)
{
	free(dev->run);
	dev->run = NULL;
	dev->nrun = 0;
	dev->run_cap = 0;
	if (dev->wheel == NULL)
		return;
	pthread_spin_destroy(&dev->wheel->lock);
	free(dev->wheel);
	dev->wheel = NULL;
}

int
swv_modify_qp_rate_limit(struct ibv_qp *ibqp,
			 struct ibv_qp_rate_limit_attr *attr)
{
	struct swv_qp *qp;
	int ret;

	if (ibqp == NULL || attr == NULL || attr->comp_mask != 0)
		return EINVAL;
	qp = to_swv_qp(ibqp);
	ret = swv_pace_check(qp, attr->rate_limit, attr->max_burst_sz,
			     attr->typical_pkt_sz);
	if (ret != 0)
		return ret;
	pthread_mutex_lock(&swv_lock);
	if (SWV_LOAD(&qp->state) != IBV_QPS_RTS)
		ret = EINVAL;
	else
		ret = swv_pace_set(qp, attr->rate_limit, attr->max_burst_sz,
				   attr->typical_pkt_sz);
	pthread_mutex_unlock(&swv_lock);
	return ret;
}

int
swv_qp_pace_stats(struct ibv_qp *ibqp, struct swv_qp_pace_stats *st)
{
	struct swv_pace_cfg *cfg;
	struct swv_qp *qp;

	if (ibqp == NULL || st == NULL)
		return EINVAL;
	qp = to_swv_qp(ibqp);
	if (qp->is_hash)
		return EINVAL;
	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&swv_lock);	/* the writers' lock */
	cfg = qp->pace_cfg;
	if (cfg != NULL) {
		st->rate_limit = cfg->rate;
		st->max_burst_sz = cfg->burst;
		st->typical_pkt_sz = cfg->typical;
	}
	pthread_mutex_unlock(&swv_lock);
	st->frames = SWV_LOAD(&qp->pace.frames);
	st->bytes = SWV_LOAD(&qp->pace.bytes);
	st->waits = SWV_LOAD(&qp->pace.waits);
	st->full_ns = SWV_LOAD(&qp->pace.full_ns);
	st->late_max_ns = SWV_LOAD(&qp->pace.late_max_ns);
	return 0;
}

/*
 * Engine side. A paced QP's bucket is a virtual time v (GCRA, the token
 * bucket's exact twin): at time t it holds min(burst, rate * (t - v))
 * bytes. A frame of len bytes goes when the bucket holds min(len, burst)
 * (a frame larger than the bucket goes when it is full, and leaves it in
 * debt), and takes len bytes: v = max(v, t - burst / rate) + len / rate.
 * v counts ns plus a remainder in 1/rate ns, so no rounding adds up: over
 * any interval [t0, t1] the frames let go hold at most burst + rate *
 * (t1 - t0) bytes (one frame more when a frame is larger than the
 * bucket), and a QP with frames always posted gets exactly the rate but
 * for the time its bucket sat full (full_ns).
 *
 * A QP whose next frame does not conform waits on its device's timing
 * wheel until the bucket holds that frame or typical_pkt_sz, at most the
 * depth; on an engine thread, half the depth at least: one wake-up lets a
 * batch go at once (the thread sleeps between batches, not between
 * frames), and the other half of the bucket is the slack of the wake-up:
 * released late by less than that, the QP loses no rate (its bucket is
 * not full yet). Polled engines release at their callers' calls. A pass
 * leaves a waiting QP out of the QPs it visits (dev->run) until the
 * wheel's advance, at the start of every pass over the device, finds it
 * due. Work per frame: O(1); per pass: the QPs that may send, and the
 * slots the clock went past, each a bit test.
 */

/* Virtual time t - bytes / rate, into (*ns, *frac). */
static inline void
vt_before(int64_t t, uint64_t bytes, uint32_t rate, int64_t *ns,
	  uint64_t *frac)
{
	uint64_t num = bytes * SWV_PACE_NS_KBPS;
	uint64_t q = num / rate, rem = num % rate;

	if (rem == 0) {
		*ns = t - (int64_t)q;
		*frac = 0;
	} else {
		*ns = t - (int64_t)q - 1;
		*frac = rate - rem;
	}
}

/* (*ns, *frac) += bytes / rate. */
static inline void
vt_add(int64_t *ns, uint64_t *frac, uint64_t bytes, uint32_t rate)
{
	uint64_t num = bytes * SWV_PACE_NS_KBPS;

	*ns += (int64_t)(num / rate);
	*frac += num % rate;
	if (*frac >= rate) {
		*frac -= rate;
		(*ns)++;
	}
}

/* v -= bytes / rate. */
static inline void
vt_sub(struct swv_pace *p, uint64_t bytes, uint32_t rate)
{
	uint64_t num = bytes * SWV_PACE_NS_KBPS;
	uint64_t rem = num % rate;

	p->v_ns -= (int64_t)(num / rate);
	if (p->v_frac >= rem) {
		p->v_frac -= rem;
	} else {
		p->v_frac += rate - rem;
		p->v_ns--;
	}
}

/*
 * Keep the bucket's bytes (or its debt) across a rate change, remainder
 * and all: the level (t - v) x rate, in ns x kbit/s (bytes x 8e6), is
 * the same at the new rate. |t - v| is at most a bucket's or a frame's
 * time, so the product fits.
 */
static inline void
vt_rescale(struct swv_pace *p, int64_t now, uint32_t old, uint32_t rate)
{
	int64_t l = (now - p->v_ns) * (int64_t)old - (int64_t)p->v_frac;
	uint64_t m, q, r;

	if (l >= 0) {
		m = (uint64_t)l;
		q = m / rate;
		r = m % rate;
		p->v_ns = now - (int64_t)q - (r != 0);
		p->v_frac = r != 0 ? rate - r : 0;
	} else {
		m = (uint64_t)-l;
		p->v_ns = now + (int64_t)(m / rate);
		p->v_frac = m % rate;
	}
}

/* Whether v is after (ns, frac). */
static inline bool
vt_after(const struct swv_pace *p, int64_t ns, uint64_t frac)
{
	return p->v_ns > ns || (p->v_ns == ns && p->v_frac > frac);
}

/*
 * (*ns, *frac) = v + len / rate, the time v gets to with a frame of len
 * bytes: the last length's byte time is kept, so a run of frames of one
 * length costs one division, not one each.
 */
static inline void
vt_next(struct swv_pace *p, uint32_t len, uint32_t rate, int64_t *ns,
	uint64_t *frac)
{
	uint64_t num;

	if (SWV_UNLIKELY(len != p->len_c)) {
		num = (uint64_t)len * SWV_PACE_NS_KBPS;
		p->len_q = num / rate;
		p->len_r = num % rate;
		p->len_c = len;
	}
	*ns = p->v_ns + (int64_t)p->len_q;
	*frac = p->v_frac + p->len_r;
	if (*frac >= rate) {
		*frac -= rate;
		(*ns)++;
	}
}

/* Whether (ns, frac) is at or before now (a time with no remainder). */
static inline bool
vt_due(int64_t ns, uint64_t frac, int64_t now)
{
	return ns < now || (ns == now && frac == 0);
}

/*
 * Take a parked QP off its wheel (the wheel lock held). A slot left empty
 * loses its bit, or swv_pace_next() would wake the engine for it.
 */
static inline void
wheel_del(struct swv_wheel *w, struct swv_qp *qp)
{
	struct cds_list_head *prev = qp->pace.wnode.prev;
	uint64_t s;

	cds_list_del(&qp->pace.wnode);
	qp->pace_parked = false;
	SWV_STORE(&w->n, w->n - 1);
	if (cds_list_empty(prev)) {
		/* prev is then the slot's head (the list's only node) */
		s = (uint64_t)(prev - w->slot);
		w->bits[s / 64] &= ~(1ull << (s % 64));
	}
}

void
swv_pace_reset(struct swv_qp *qp)
{
	struct swv_wheel *w = qp->dev->wheel;

	if (qp->pace_cfg == NULL && qp->pace_rate == 0)
		return;
	(void)swv_pace_set(qp, 0, 0, 0);	/* a removal: no allocation */
	if (w != NULL) {
		pthread_spin_lock(&w->lock);
		if (qp->pace_parked)
			wheel_del(w, qp);
		pthread_spin_unlock(&w->lock);
	}
	qp->pace_rate = 0;
	qp->pace_seen = qp->pace_gen;
	swv_qps_changed(qp->dev);	/* off the wheel: visited again */
}

void
swv_pace_unpark(struct swv_qp *qp)
{
	struct swv_wheel *w = qp->dev->wheel;

	if (w == NULL)
		return;	/* no limit was ever set on the device */
	pthread_spin_lock(&w->lock);
	qp->pace_dead = true;
	if (qp->pace_parked)
		wheel_del(w, qp);
	pthread_spin_unlock(&w->lock);
}

/*
 * The QPs a pass visits. dev->qps but the QPs that wait on the wheel (in
 * RTS, with no new limit to apply): a pass costs the QPs that may send,
 * not the thousand that wait; the wheel's advance puts back those due.
 */
bool
swv_run_sync(struct swv_device *dev)
{
	uint32_t gen = __atomic_load_n(&dev->qps_gen, __ATOMIC_ACQUIRE);
	struct cds_list_head *node;
	struct swv_qp *qp, **a;
	uint32_t n = 0, cap;
	bool stale = false;

	if (SWV_LIKELY(gen == dev->run_gen && !dev->run_stale &&
		       dev->run != NULL))
		return true;
	cds_list_for_each_rcu(node, &dev->qps)
		n++;
	if (dev->run == NULL || n > dev->run_cap) {
		cap = n < 16 ? 16 : n + n / 2;
		a = realloc(dev->run, (size_t)cap * sizeof(*a));
		if (a == NULL) {
			dev->run_stale = true;	/* the list this pass */
			return false;
		}
		dev->run = a;
		dev->run_cap = cap;
	}
	dev->nrun = 0;
	cds_list_for_each_rcu(node, &dev->qps) {
		qp = cds_list_entry(node, struct swv_qp, node);
		qp->in_run = false;
		if (qp->pace_parked && SWV_LOAD(&qp->state) == IBV_QPS_RTS &&
		    SWV_LOAD(&qp->pace_gen) == qp->pace_seen)
			continue;	/* the wheel's advance puts it back */
		if (dev->nrun == dev->run_cap) {
			stale = true;	/* the list grew: again next pass */
			continue;
		}
		qp->in_run = true;
		dev->run[dev->nrun++] = qp;
	}
	dev->run_gen = gen;
	dev->run_stale = stale;
	return true;
}

/* A QP the wheel let go: visited again from this pass on. */
static inline void
run_add(struct swv_device *dev, struct swv_qp *qp)
{
	if (qp->in_run || dev->run == NULL)
		return;
	if (dev->nrun == dev->run_cap) {
		dev->run_stale = true;
		return;
	}
	qp->in_run = true;
	dev->run[dev->nrun++] = qp;
}

/* The slot a QP due at @due goes to (the wheel lock held). */
static inline uint64_t
wheel_slot(const struct swv_wheel *w, uint64_t due)
{
	uint64_t t = due >> SWV_WHEEL_SHIFT;

	if (t < w->tick)
		t = w->tick;	/* due already: the next advance */
	return t & (SWV_WHEEL_SLOTS - 1);
}

static void
wheel_park(struct swv_device *dev, struct swv_qp *qp, uint64_t now,
	   uint64_t due)
{
	struct swv_wheel *w = dev->wheel;
	uint64_t s;

	pthread_spin_lock(&w->lock);
	if (SWV_UNLIKELY(qp->pace_dead)) {
		pthread_spin_unlock(&w->lock);
		return;	/* being destroyed: on no list the passes walk */
	}
	if (w->n == 0)
		w->tick = now >> SWV_WHEEL_SHIFT;	/* empty: from now on */
	s = wheel_slot(w, due);
	qp->pace.due = due;
	qp->pace_parked = true;
	cds_list_add_tail(&qp->pace.wnode, &w->slot[s]);
	w->bits[s / 64] |= 1ull << (s % 64);
	SWV_STORE(&w->n, w->n + 1);
	pthread_spin_unlock(&w->lock);
	SWV_STORE(&qp->pace.waits, qp->pace.waits + 1);
}

/* Release what is due in slot s at now (the wheel lock held). */
static void
wheel_slot_run(struct swv_device *dev, struct swv_wheel *w, uint64_t s,
	       uint64_t now)
{
	struct cds_list_head *node, *next;
	struct swv_qp *qp;
	uint64_t late;

	cds_list_for_each_safe(node, next, &w->slot[s]) {
		qp = cds_list_entry(node, struct swv_qp, pace.wnode);
		if (qp->pace.due > now)
			continue;	/* later in this tick, or turns away */
		late = now - qp->pace.due;
		if (late > qp->pace.late_max_ns)
			SWV_STORE(&qp->pace.late_max_ns, late);
		wheel_del(w, qp);
		run_add(dev, qp);
	}
	if (cds_list_empty(&w->slot[s]))
		w->bits[s / 64] &= ~(1ull << (s % 64));
}

void
swv_pace_advance(struct swv_device *dev)
{
	struct swv_wheel *w = dev->wheel;
	uint64_t now, end, t, s;

	if (SWV_LOAD(&w->n) == 0)
		return;
	now = swv_now_ns();
	end = now >> SWV_WHEEL_SHIFT;
	pthread_spin_lock(&w->lock);
	t = w->tick;
	if (end < t)
		end = t;	/* another thread's clock read, a bit later */
	if (end - t >= SWV_WHEEL_SLOTS)
		t = end - SWV_WHEEL_SLOTS + 1;	/* one whole turn */
	for (; t <= end && w->n > 0; t++) {
		s = t & (SWV_WHEEL_SLOTS - 1);
		if (w->bits[s / 64] & (1ull << (s % 64)))
			wheel_slot_run(dev, w, s, now);
	}
	/* The current tick again next pass: what is due later in it. */
	w->tick = end;
	pthread_spin_unlock(&w->lock);
}

/*
 * The earliest due time on the wheel: the slots from the current tick on,
 * in order; the first one holding a QP due in this turn of the wheel has
 * the earliest (no QP of a later slot, nor of a later turn, is due before
 * it). A QP due a turn or more away (2^SWV_WHEEL_SHIFT x SWV_WHEEL_SLOTS
 * ns, about 4 ms: a slow rate's wait) sits in the slot of its due time
 * modulo the turn; the scan goes on past it, keeping its due, so that a
 * sleeper learns the real departure and not the slot's time in this turn
 * (a sleeper that spins for its wake-up lateness would otherwise spin
 * through a wait longer than a turn). O(slots) bit tests, plus the QPs of
 * the slots it reads: all of them only when every QP is a turn away.
 *
 * With @latest, also the earliest time a waiting QP's bucket is full
 * (swv_pace_full_at(), at or after its due): the scan goes on past the
 * first departure until a slot begins after the earliest full bucket
 * found, as no QP of that slot or a later one (due there or a turn later)
 * can be full before it.
 */
uint64_t
swv_pace_window(struct swv_device *dev, uint64_t *latest)
{
	struct swv_wheel *w = dev->wheel;
	struct cds_list_head *node;
	uint64_t i, s, t, word, next = UINT64_MAX, far = UINT64_MAX, due;
	uint64_t full = UINT64_MAX, f;
	struct swv_qp *qp;

	if (latest != NULL)
		*latest = UINT64_MAX;
	if (w == NULL || SWV_LOAD(&w->n) == 0)
		return UINT64_MAX;
	pthread_spin_lock(&w->lock);
	for (i = 0; i < SWV_WHEEL_SLOTS &&
		    (next == UINT64_MAX || latest != NULL); ) {
		t = w->tick + i;
		s = t & (SWV_WHEEL_SLOTS - 1);
		word = w->bits[s / 64] >> (s % 64);
		if (word == 0) {
			i += 64 - s % 64;	/* to the next word */
			continue;
		}
		i += (uint64_t)__builtin_ctzll(word);
		if (i >= SWV_WHEEL_SLOTS)
			break;	/* a bit of the word at the turn's end */
		t = w->tick + i;
		s = t & (SWV_WHEEL_SLOTS - 1);
		if (next != UINT64_MAX && (t << SWV_WHEEL_SHIFT) >= full)
			break;	/* @latest: none fuller from here on */
		/* Due in this turn: the earliest; else later turns'. */
		cds_list_for_each(node, &w->slot[s]) {
			qp = cds_list_entry(node, struct swv_qp, pace.wnode);
			due = qp->pace.due;
			if ((due >> SWV_WHEEL_SHIFT) <= t) {
				if (due < next)
					next = due;
			} else if (due < far) {
				far = due;
			}
			if (latest != NULL) {
				f = swv_pace_full_at(qp);
				if (f < full)
					full = f;
			}
		}
		i++;
	}
	pthread_spin_unlock(&w->lock);
	if (latest != NULL)
		*latest = full;
	return next != UINT64_MAX ? next : far;
}

uint64_t
swv_pace_next(struct swv_device *dev)
{
	return swv_pace_window(dev, NULL);
}

uint64_t
swv_pace_full_at(const struct swv_qp *qp)
{
	int64_t ns = qp->pace.v_ns;
	uint64_t frac = qp->pace.v_frac;

	vt_add(&ns, &frac, qp->pace.burst, qp->pace_rate);
	return (uint64_t)ns + (frac != 0);
}

/* A new limit (or none) from the control path: the bucket follows it. */
static void
pace_apply(struct swv_qp *qp, uint32_t gen)
{
	struct swv_pace *p = &qp->pace;
	struct swv_pace_cfg *cfg = rcu_dereference(qp->pace_cfg);
	uint32_t old = qp->pace_rate;
	int64_t now, lo_ns;
	uint64_t lo_frac;

	qp->pace_seen = gen;
	if (qp->pace_parked) {
		pthread_spin_lock(&qp->dev->wheel->lock);
		wheel_del(qp->dev->wheel, qp);
		pthread_spin_unlock(&qp->dev->wheel->lock);
	}
	if (cfg == NULL) {
		qp->pace_rate = 0;
		return;
	}
	if (old == 0 || p->fresh) {
		p->fresh = true;	/* a full bucket at the first frame */
	} else {
		/*
		 * The bucket keeps its bytes (or its debt) across the change:
		 * t - v scales by old / new, within the new depth.
		 */
		now = (int64_t)swv_now_ns();
		vt_before(now, p->burst, old, &lo_ns, &lo_frac);
		if (!vt_after(p, lo_ns, lo_frac)) {
			p->v_ns = lo_ns;
			p->v_frac = lo_frac;
		}
		vt_rescale(p, now, old, cfg->rate);
		vt_before(now, cfg->burst, cfg->rate, &lo_ns, &lo_frac);
		if (!vt_after(p, lo_ns, lo_frac)) {
			p->v_ns = lo_ns;
			p->v_frac = lo_frac;
		}
	}
	p->burst = cfg->burst;
	p->typical = cfg->typical;
	p->burst_q = (uint64_t)cfg->burst * SWV_PACE_NS_KBPS / cfg->rate;
	p->burst_r = (uint64_t)cfg->burst * SWV_PACE_NS_KBPS % cfg->rate;
	p->len_c = 0;
	qp->pace_rate = cfg->rate;
}

bool
swv_pace_visit(struct swv_qp *qp)
{
	pace_apply(qp, SWV_LOAD_ACQ(&qp->pace_gen));
	return qp->pace_rate == 0 || !qp->pace_parked;
}

unsigned int
swv_pace_gate(struct swv_qp *qp, const struct swv_frame *fr, unsigned int n)
{
	struct swv_pace *p = &qp->pace;
	uint32_t rate = qp->pace_rate, burst = p->burst, len, x;
	int64_t now = (int64_t)swv_now_ns(), lo_ns, thr_ns, nx_ns;
	uint64_t lo_frac, thr_frac, nx_frac, bytes = 0;
	unsigned int k;

	/* The bucket holds burst bytes at most: v >= now - burst / rate. */
	lo_ns = now - (int64_t)p->burst_q - (p->burst_r != 0);
	lo_frac = p->burst_r != 0 ? rate - p->burst_r : 0;
	if (p->fresh) {
		p->fresh = false;
		p->v_ns = lo_ns;
		p->v_frac = lo_frac;
	} else if (!vt_after(p, lo_ns, lo_frac)) {
		SWV_STORE(&p->full_ns, p->full_ns + (uint64_t)(lo_ns - p->v_ns));
		p->v_ns = lo_ns;
		p->v_frac = lo_frac;
	}
	/*
	 * A frame goes when the bucket holds min(len, burst): v + x / rate
	 * <= now. With len < burst that end is the frame's own, v's next.
	 */
	for (k = 0; k < n; k++) {
		len = fr[k].len;
		vt_next(p, len, rate, &nx_ns, &nx_frac);
		if (SWV_LIKELY(len < burst)) {
			if (!vt_due(nx_ns, nx_frac, now))
				break;
		} else {
			thr_ns = p->v_ns + (int64_t)p->burst_q;
			thr_frac = p->v_frac + p->burst_r;
			if (thr_frac >= rate) {
				thr_frac -= rate;
				thr_ns++;
			}
			if (!vt_due(thr_ns, thr_frac, now))
				break;
		}
		p->v_ns = nx_ns;
		p->v_frac = nx_frac;
		bytes += len;
	}
	if (k < n) {
		/*
		 * Wait for the frame (or typical_pkt_sz, when larger), within
		 * the depth; on an engine thread, which sleeps until then, for
		 * half the bucket at least: one wake-up lets a batch go, and a
		 * wake-up late by up to the other half loses no rate. Polled
		 * engines (service, inline) release at their callers' calls
		 * whatever conforms by then: a batch would only take slack.
		 */
		thr_ns = p->v_ns;
		thr_frac = p->v_frac;
		x = fr[k].len > p->typical ? fr[k].len : p->typical;
		if (x < burst / 2 && SWV_LOAD(&qp->dev->eng->running))
			x = burst / 2;
		vt_add(&thr_ns, &thr_frac, x < burst ? x : burst, rate);
		wheel_park(qp->dev, qp, (uint64_t)now,
			   (uint64_t)thr_ns + (thr_frac != 0));
	}
	if (k > 0) {
		SWV_STORE(&p->frames, p->frames + k);
		SWV_STORE(&p->bytes, p->bytes + bytes);
		/* The completions of what goes now carry the pacer's time. */
		qp->dev->pend->ts = (uint64_t)now;
	}
	return k;
}

void
swv_pace_refund(struct swv_qp *qp, const struct swv_frame *fr, unsigned int n)
{
	struct swv_pace *p = &qp->pace;
	uint64_t bytes = 0;
	unsigned int k;

	for (k = 0; k < n; k++) {
		vt_sub(p, fr[k].len, qp->pace_rate);
		bytes += fr[k].len;
	}
	SWV_STORE(&p->frames, p->frames - n);
	SWV_STORE(&p->bytes, p->bytes - bytes);
}
