/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The policer of a meter, as the Rx datapath runs it.
 *
 * Colour decisions are DPDK's rte_meter (srTCM RFC 2697, trTCM RFC 2698,
 * trTCM RFC 4115); packet mode feeds it one "byte" per frame, so its rates
 * and bursts count frames. A meter is shared by every rule and Rx queue that
 * names it, polled by any lcore, with no lock: its state (the rte_meter
 * buckets) lives in records, two per slot: one slot per EAL lcore index
 * (rte_lcore_index(), 0 to neal - 1, as EAL made them at init), one that
 * every other thread shares under a spinlock (a thread rte_thread_register()
 * made, or any thread of index neal or more), one for the control path
 * (under the port's flow_lock). The slots are fixed when the runtime is made
 * and stored in it, never recomputed. One word, cur, names the
 * record in use and a version. A caller copies that record into its own
 * record that is not in use, runs rte_meter on the copy and publishes it
 * with one compare-and-swap of cur; when the CAS fails (another lcore
 * published first) it starts over from the new record. A record in use is
 * never written, so a copy torn by a writer is always caught by the CAS
 * (the version moved) and thrown away. The colours are those of one
 * rte_meter fed the frames in the order of their CAS, each at its burst's
 * timestamp or the meter's last one if later (rte_meter needs time that
 * does not go back; lcores read the TSC at different moments).
 *
 * Most meters are run by one lcore (one Rx lcore, or a meter per rule):
 * the first EAL lcore to run a meter after its reset owns it and runs
 * its record in place, no copy, no CAS, cur left as it is, as long as it
 * is alone; another thread's run, or the control path, revokes the owner
 * (vbr_mtr_rt_revoke(): a CAS, membarrier(2), and a wait for the owner's
 * run under way, if one is), and from then on, until the next reset (a
 * profile set), every run takes the CAS. The colours stay those of one
 * rte_meter: the revocation changes no bucket and loses no update.
 *
 * Colour-aware meters take each frame's input colour from its headers
 * (vbr_mtr_in_colour(): the outer or inner VLAN's PCP and DEI, the outer
 * or inner IPv4 DSCP or IPv6 traffic class' DSCP, by the meter's protocol
 * priorities, else the default input colour) and run rte_meter's
 * colour-aware checks on the same copied record, in the same CAS.
 *
 * Everything here is pure (no port): the tests run it against rte_meter.
 */

#ifndef VBR_MTR_H
#define VBR_MTR_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/membarrier.h>

#include <rte_common.h>
#include <rte_lcore.h>
#include <rte_meter.h>
#include <rte_prefetch.h>
#include <rte_spinlock.h>
#include <rte_mtr.h>

/** Meters a port holds at most. */
#define VBR_MTR_MAX 65536u

/** A profile as rte_meter runs it. */
struct vbr_mtr_prm {
	enum rte_mtr_algorithm alg;	/**< srTCM, trTCM or RFC 4115 */
	unsigned int packet_mode:1;	/**< rates and bursts in frames */
	union {
		struct rte_meter_srtcm_profile sr;	/**< RFC 2697 */
		struct rte_meter_trtcm_profile tr;	/**< RFC 2698 */
		struct rte_meter_trtcm_rfc4115_profile t4; /**< RFC 4115 */
	} u;				/**< by alg */
};

/** One version of a meter's buckets. */
struct vbr_mtr_rec {
	union {
		struct rte_meter_srtcm sr;
		struct rte_meter_trtcm tr;
		struct rte_meter_trtcm_rfc4115 t4;
	} m;				/**< rte_meter's state */
	struct vbr_mtr_prm *p;		/**< profile (kept until close) */
	uint64_t last;			/**< latest time fed to rte_meter */
	/**
	 * Of a slot's rec[0] only, never copied with the record: 1 while
	 * the slot's lcore runs the meter as its owner (vbr_mtr_color_n()).
	 */
	uint32_t busy;
} __rte_cache_aligned;

/** What a policy does with the frames of one colour. */
enum vbr_mtr_fate {
	VBR_MTR_FATE_PASS,	/**< the rule's own fate: where it arrived */
	VBR_MTR_FATE_QUEUE,	/**< Rx queue queue */
	VBR_MTR_FATE_DROP,	/**< dropped, counted in the meter's stats */
};

/** A policy's actions for one colour. */
struct vbr_mtr_pact {
	uint8_t fate;			/**< enum vbr_mtr_fate */
	uint8_t mark;			/**< 1: MARK mark_id, 2: FLAG */
	uint16_t queue;			/**< queue of VBR_MTR_FATE_QUEUE */
	uint32_t mark_id;		/**< MARK id */
};

/** Counts of one slot: only its lcore writes them. */
struct vbr_mtr_cnt {
	uint64_t pkts[RTE_COLORS];	/**< frames per colour */
	uint64_t bytes[RTE_COLORS];	/**< their bytes */
	uint64_t dpkts;			/**< frames dropped */
	uint64_t dbytes;		/**< their bytes */
} __rte_cache_aligned;

/** Input colour protocols: the bits of enum rte_mtr_color_in_protocol. */
#define VBR_MTR_IN_PROTOS 4
/** Entries of a DSCP table; a VLAN table uses the first 16. */
#define VBR_MTR_IN_DSCP 64
#define VBR_MTR_IN_VLAN 16
/** The protocols' priority order in vbr_mtr_in.order: 0xffff bits. */
#define VBR_MTR_IN_ORDER_MASK 0xffffu
/** Where the default input colour sits in vbr_mtr_in.order. */
#define VBR_MTR_IN_DEFAULT_SHIFT 16

/**
 * A meter's input colours. order is one word, read once per run: nibble k
 * (bits 4k to 4k + 3) is 1 + the protocol (bit index of
 * rte_mtr_color_in_protocol) of priority rank k, 0 ends the list; bits 16
 * and 17 the default input colour. No protocol: colour-blind. The control
 * path writes the tables entry by entry (a frame sees each entry old or
 * new) and order with one store.
 */
struct vbr_mtr_in {
	uint32_t order;				/**< see above */
	uint8_t tab[VBR_MTR_IN_PROTOS][VBR_MTR_IN_DSCP]; /**< by protocol */
};

/**
 * A slot: its two records and its counts, side by side, so that a run
 * touches the lines of one slot (vbr_mtr_rt_prefetch()).
 */
struct vbr_mtr_slot {
	struct vbr_mtr_rec rec[2];	/**< records 2 * slot, 2 * slot + 1 */
	struct vbr_mtr_cnt cnt;		/**< the slot's counts */
} __rte_cache_aligned;

/**
 * A meter as the datapath sees it. What a run reads (cur, enabled, neal,
 * act, in.order) is in the first cache line; the input colour tables
 * follow.
 */
struct vbr_mtr_rt {
	/** version << 32 | VBR_MTR_CUR_* flags | record in use */
	uint64_t cur;
	uint32_t enabled;		/**< 0: every frame green */
	uint16_t nslots;		/**< slots (two records each): neal + 2 */
	uint16_t neal;			/**< slots of EAL lcore indexes */
	rte_spinlock_t shared;		/**< of slot neal: other threads */
	struct vbr_mtr_pact act[RTE_COLORS]; /**< the policy, per colour */
	uint32_t own;			/**< 1: an lcore may own the meter */
	struct vbr_mtr_in in;		/**< input colours (colour-aware) */
	struct vbr_mtr_slot slot[];	/**< nslots slots */
};

/** cur: the record in use. */
#define VBR_MTR_CUR_REC 0x3fffffffu
/** cur: the record's slot's lcore owns the meter (no CAS). */
#define VBR_MTR_CUR_OWNED (1u << 30)
/** cur: an owner was revoked: no lcore takes it again until a reset. */
#define VBR_MTR_CUR_SHARED (1u << 31)

/**
 * Make this process' threads owners a thread of any process can revoke
 * (membarrier(2), global expedited: a secondary process' thread may run a
 * meter too). true: done (once per process is enough), meters may be
 * owned by this process' lcores; false: the kernel cannot, every run
 * takes the CAS. Only the primary process' lcores own meters: a secondary
 * process' lcores have the same lcore indexes, so they use the shared
 * slot (the Rx burst passes them no index).
 */
static inline bool
vbr_mtr_own_setup(void)
{
	long q = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0);

	return q > 0 && (q & MEMBARRIER_CMD_GLOBAL_EXPEDITED) &&
	       syscall(__NR_membarrier,
		       MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0) == 0;
}

/** Record i (2 * slot + 0 or 1) of a runtime. */
static inline struct vbr_mtr_rec *
vbr_mtr_rt_rec(struct vbr_mtr_rt *rt, uint32_t i)
{
	return &rt->slot[i / 2].rec[i % 2];
}

/** Bytes of a meter runtime with nslots slots. */
static inline size_t
vbr_mtr_rt_size(unsigned int nslots)
{
	return sizeof(struct vbr_mtr_rt) +
	       nslots * sizeof(struct vbr_mtr_slot);
}

/** Slots of a runtime for neal EAL lcore indexes. */
static inline unsigned int
vbr_mtr_rt_nslots(unsigned int neal)
{
	return neal + 2;
}

/**
 * Lay out a zeroed runtime of vbr_mtr_rt_size(vbr_mtr_rt_nslots(neal));
 * own: vbr_mtr_own_setup() said yes.
 */
static inline void
vbr_mtr_rt_init(struct vbr_mtr_rt *rt, unsigned int neal, bool own)
{
	rt->neal = neal;
	rt->nslots = vbr_mtr_rt_nslots(neal);
	rt->own = own;
	rte_spinlock_init(&rt->shared);
}

/** Lines vbr_mtr_rt_lines() names. */
#define VBR_MTR_RT_LINES 3

/**
 * The lines a run of rt from the slot of lcore index idx touches, into
 * l[0, VBR_MTR_RT_LINES): the first line of rt, the slot's rec[0] (its
 * busy flag, and the record an owner runs in place) and its counts; not
 * rec[1], which only runs that take the CAS (a meter several threads
 * share: it is in the cache) or an owner that took the meter while rec[0]
 * was in use write. Addresses only, nothing read from rt, so the Rx burst
 * asks for the next runs' meters before it runs this one. idx -1 (a
 * thread with no EAL index): the first line only (return 1); an index of
 * neal or more (its thread runs the shared slot) names lines past the
 * slots, which a prefetch never reads. Return the lines named.
 */
static inline unsigned int
vbr_mtr_rt_lines(const struct vbr_mtr_rt *rt, int idx, uintptr_t *l)
{
	uintptr_t s = (uintptr_t)rt + offsetof(struct vbr_mtr_rt, slot) +
		      (uintptr_t)idx * sizeof(struct vbr_mtr_slot);

	l[0] = (uintptr_t)rt;
	if (idx < 0)
		return 1;
	l[1] = s + offsetof(struct vbr_mtr_slot, rec);
	l[2] = s + offsetof(struct vbr_mtr_slot, cnt);
	return 3;
}

/** Ask for the lines of vbr_mtr_rt_lines(), no loop: one to three. */
static __rte_always_inline void
vbr_mtr_rt_prefetch(const struct vbr_mtr_rt *rt, int idx)
{
	uintptr_t l[VBR_MTR_RT_LINES];

	rte_prefetch0(rt);
	if (vbr_mtr_rt_lines(rt, idx, l) == VBR_MTR_RT_LINES) {
		rte_prefetch0((const void *)l[1]);
		rte_prefetch0((const void *)l[2]);
	}
}

/** The slot of the control path (under the port's flow_lock). */
static inline unsigned int
vbr_mtr_rt_ctrl(const struct vbr_mtr_rt *rt)
{
	return rt->nslots - 1u;
}

/**
 * The slot of a thread of lcore index idx (rte_lcore_index(-1)): its own
 * for an EAL lcore index below neal; else the shared one, its lock taken
 * (*locked set): vbr_mtr_rt_slot_put() gives it back.
 */
static inline unsigned int
vbr_mtr_rt_slot(struct vbr_mtr_rt *rt, int idx, bool *locked)
{
	if (likely(idx >= 0 && (unsigned int)idx < rt->neal)) {
		*locked = false;
		return (unsigned int)idx;
	}
	rte_spinlock_lock(&rt->shared);
	*locked = true;
	return rt->neal;
}

/** Done with a slot of vbr_mtr_rt_slot(). */
static inline void
vbr_mtr_rt_slot_put(struct vbr_mtr_rt *rt, bool locked)
{
	if (locked)
		rte_spinlock_unlock(&rt->shared);
}

/**
 * A profile of rte_mtr (rates in bytes or frames per second, bursts in
 * bytes or frames) for rte_meter. 0, or rte_meter's negative errno.
 */
static inline int
vbr_mtr_prm_config(struct vbr_mtr_prm *p,
		   const struct rte_mtr_meter_profile *mp)
{
	p->alg = mp->alg;
	p->packet_mode = mp->packet_mode != 0;
	switch (mp->alg) {
	case RTE_MTR_SRTCM_RFC2697: {
		struct rte_meter_srtcm_params a = {
			.cir = mp->srtcm_rfc2697.cir,
			.cbs = mp->srtcm_rfc2697.cbs,
			.ebs = mp->srtcm_rfc2697.ebs,
		};

		return rte_meter_srtcm_profile_config(&p->u.sr, &a);
	}
	case RTE_MTR_TRTCM_RFC2698: {
		struct rte_meter_trtcm_params a = {
			.cir = mp->trtcm_rfc2698.cir,
			.pir = mp->trtcm_rfc2698.pir,
			.cbs = mp->trtcm_rfc2698.cbs,
			.pbs = mp->trtcm_rfc2698.pbs,
		};

		return rte_meter_trtcm_profile_config(&p->u.tr, &a);
	}
	case RTE_MTR_TRTCM_RFC4115: {
		struct rte_meter_trtcm_rfc4115_params a = {
			.cir = mp->trtcm_rfc4115.cir,
			.eir = mp->trtcm_rfc4115.eir,
			.cbs = mp->trtcm_rfc4115.cbs,
			.ebs = mp->trtcm_rfc4115.ebs,
		};

		return rte_meter_trtcm_rfc4115_profile_config(&p->u.t4, &a);
	}
	default:
		return -ENOTSUP;
	}
}

/* rte_meter's state for p with full buckets at time now. */
static inline void
vbr_mtr_rec_reset(struct vbr_mtr_rec *r, struct vbr_mtr_prm *p,
		  uint64_t now)
{
	switch (p->alg) {
	case RTE_MTR_SRTCM_RFC2697:
		rte_meter_srtcm_config(&r->m.sr, &p->u.sr);
		r->m.sr.time = now;
		break;
	case RTE_MTR_TRTCM_RFC2698:
		rte_meter_trtcm_config(&r->m.tr, &p->u.tr);
		r->m.tr.time_tc = now;
		r->m.tr.time_tp = now;
		break;
	default:
		rte_meter_trtcm_rfc4115_config(&r->m.t4, &p->u.t4);
		r->m.t4.time_tc = now;
		r->m.t4.time_te = now;
		break;
	}
	r->p = p;
	r->last = now;
}

/*
 * The meter's owner (cur has VBR_MTR_CUR_OWNED) is revoked: cur gets
 * VBR_MTR_CUR_SHARED instead, the same record, a new version. Every thread
 * then runs the meter with the CAS. The owner runs its record in place and
 * never writes cur, so the revocation goes in two steps: first cur gets
 * both flags (revoking: the owner no longer takes the meter, and every
 * other thread waits here); then membarrier(2) makes every running thread
 * of the processes registered (the owner's) pass a full barrier, after
 * which the owner's busy flag says whether a run that began before the
 * revocation is under way (a run sets busy before it reads cur: a run that
 * began after the barrier sees the revocation); it is waited for (a few
 * frames' work), and its record is then whole. Last, cur drops
 * VBR_MTR_CUR_OWNED: nobody else writes cur while both flags are set. No
 * update is lost: the revocation changes no bucket. *cur: cur as read
 * last; on return it has no owner.
 */
static inline void
vbr_mtr_rt_revoke(struct vbr_mtr_rt *rt, uint64_t *cur)
{
	const uint32_t both = VBR_MTR_CUR_OWNED | VBR_MTR_CUR_SHARED;
	uint64_t c = *cur;

	while ((uint32_t)c & VBR_MTR_CUR_OWNED) {
		uint32_t rec = (uint32_t)c & VBR_MTR_CUR_REC;
		uint64_t nw = (((c >> 32) + 1) << 32) | rec | both;
		const uint32_t *busy = &rt->slot[rec / 2].rec[0].busy;

		if (((uint32_t)c & both) == both) {
			/* Another thread revokes: wait for it. */
			rte_pause();
			c = __atomic_load_n(&rt->cur, __ATOMIC_ACQUIRE);
			continue;
		}
		if (!__atomic_compare_exchange_n(&rt->cur, &c, nw, false,
						 __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			continue;
		/* Cannot fail: own is set only when the owners' process
		 * registered.
		 */
		(void)syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED,
			      0);
		while (__atomic_load_n(busy, __ATOMIC_ACQUIRE) != 0)
			rte_pause();
		c = nw & ~(uint64_t)VBR_MTR_CUR_OWNED;
		__atomic_store_n(&rt->cur, c, __ATOMIC_RELEASE);
	}
	*cur = c;
}

/*
 * Publish profile p with full buckets from slot (the caller's, not shared
 * with another thread at the time), as the meter's state from now on; an
 * owner is revoked first, and the new state has none (the next lcore to
 * run the meter takes it).
 */
static inline void
vbr_mtr_rt_reset(struct vbr_mtr_rt *rt, unsigned int slot,
		 struct vbr_mtr_prm *p, uint64_t now)
{
	uint64_t cur = __atomic_load_n(&rt->cur, __ATOMIC_ACQUIRE);
	uint32_t mine;

	do {
		vbr_mtr_rt_revoke(rt, &cur);
		mine = 2 * slot + (((uint32_t)cur & VBR_MTR_CUR_REC) ==
				   2 * slot);
		vbr_mtr_rec_reset(vbr_mtr_rt_rec(rt, mine), p, now);
	} while (!__atomic_compare_exchange_n(&rt->cur, &cur,
			(((cur >> 32) + 1) << 32) | mine, false,
			__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
}

/* rte_meter on record r, colour-blind. */
static inline enum rte_color
vbr_mtr_run(struct vbr_mtr_rec *r, struct vbr_mtr_prm *p, uint64_t t,
	    uint32_t len)
{
	switch (p->alg) {
	case RTE_MTR_SRTCM_RFC2697:
		return rte_meter_srtcm_color_blind_check(&r->m.sr, &p->u.sr,
							 t, len);
	case RTE_MTR_TRTCM_RFC2698:
		return rte_meter_trtcm_color_blind_check(&r->m.tr, &p->u.tr,
							 t, len);
	default:
		return rte_meter_trtcm_rfc4115_color_blind_check(&r->m.t4,
							&p->u.t4, t, len);
	}
}

/* rte_meter on record r, colour-aware: input colour in. */
static inline enum rte_color
vbr_mtr_run_aware(struct vbr_mtr_rec *r, struct vbr_mtr_prm *p, uint64_t t,
		  uint32_t len, enum rte_color in)
{
	switch (p->alg) {
	case RTE_MTR_SRTCM_RFC2697:
		return rte_meter_srtcm_color_aware_check(&r->m.sr, &p->u.sr,
							 t, len, in);
	case RTE_MTR_TRTCM_RFC2698:
		return rte_meter_trtcm_color_aware_check(&r->m.tr, &p->u.tr,
							 t, len, in);
	default:
		return rte_meter_trtcm_rfc4115_color_aware_check(&r->m.t4,
							&p->u.t4, t, len, in);
	}
}

/*
 * Frames 1 to n - 1 of a run at one time, after frame 0 went through
 * rte_meter at that time: rte_meter would find no period elapsed (frame 0
 * moved the buckets' times to within a period of it) and add no tokens,
 * so only its colour logic is left, done here without rte_meter's two
 * divisions per frame. The logic is rte_meter's colour-aware one (its
 * colour-blind checks are the colour-aware ones for green input); the
 * trace tests hold it to rte_meter frame for frame. Not inlined: a run of
 * one frame (one meter per rule) never calls it, and vbr_mtr_run_in(),
 * its caller, is then small enough to inline.
 */
static __rte_noinline void
vbr_mtr_run_rest(struct vbr_mtr_rec *r, const struct vbr_mtr_prm *p,
		 const uint32_t *len, unsigned int n, const uint8_t *inc,
		 uint8_t *c)
{
	const bool pm = p->packet_mode;
	uint64_t a, b;		/* tc and te (srTCM, RFC 4115) or tp */
	unsigned int i;

	switch (p->alg) {
	case RTE_MTR_TRTCM_RFC2698:
		a = r->m.tr.tc;
		b = r->m.tr.tp;
		for (i = 1; i < n; i++) {
			uint32_t l = pm ? 1 : len[i];
			uint8_t in = inc != NULL ? inc[i] : RTE_COLOR_GREEN;

			if (in == RTE_COLOR_RED || b < l) {
				c[i] = RTE_COLOR_RED;
			} else if (in == RTE_COLOR_YELLOW || a < l) {
				b -= l;
				c[i] = RTE_COLOR_YELLOW;
			} else {
				a -= l;
				b -= l;
				c[i] = RTE_COLOR_GREEN;
			}
		}
		r->m.tr.tc = a;
		r->m.tr.tp = b;
		return;
	case RTE_MTR_SRTCM_RFC2697:
		a = r->m.sr.tc;
		b = r->m.sr.te;
		break;
	default:
		a = r->m.t4.tc;
		b = r->m.t4.te;
		break;
	}
	/* srTCM and RFC 4115 colour alike once the buckets are filled. */
	for (i = 1; i < n; i++) {
		uint32_t l = pm ? 1 : len[i];
		uint8_t in = inc != NULL ? inc[i] : RTE_COLOR_GREEN;

		if (in == RTE_COLOR_GREEN && a >= l) {
			a -= l;
			c[i] = RTE_COLOR_GREEN;
		} else if (in != RTE_COLOR_RED && b >= l) {
			b -= l;
			c[i] = RTE_COLOR_YELLOW;
		} else {
			c[i] = RTE_COLOR_RED;
		}
	}
	if (p->alg == RTE_MTR_SRTCM_RFC2697) {
		r->m.sr.tc = a;
		r->m.sr.te = b;
	} else {
		r->m.t4.tc = a;
		r->m.t4.te = b;
	}
}

/*
 * The run of vbr_mtr_color_n() on record r itself: colours c[0, n). The
 * caller's alone while it runs (its copy, or the record of the meter it
 * owns).
 */
static __rte_always_inline void
vbr_mtr_run_in(struct vbr_mtr_rec *r, uint64_t tsc, const uint32_t *len,
	       unsigned int n, const uint8_t *inc, uint8_t *c)
{
	struct vbr_mtr_prm *p = r->p;
	uint64_t t = RTE_MAX(tsc, r->last);
	uint32_t l = p->packet_mode ? 1 : len[0];

	r->last = t;
	c[0] = inc == NULL ? vbr_mtr_run(r, p, t, l) :
	       vbr_mtr_run_aware(r, p, t, l, (enum rte_color)inc[0]);
	if (n > 1)
		vbr_mtr_run_rest(r, p, len, n, inc, c);
}

/*
 * The run of vbr_mtr_color_n() on record r, a copy of from (its fields,
 * not busy): colours c[0, n).
 */
static inline void
vbr_mtr_run_n(struct vbr_mtr_rec *r, const struct vbr_mtr_rec *from,
	      uint64_t tsc, const uint32_t *len, unsigned int n,
	      const uint8_t *inc, uint8_t *c)
{
	/*
	 * A copy torn by another lcore fails the caller's CAS; the profile
	 * is read once, whole, before the copy is used.
	 */
	r->m = from->m;
	r->last = from->last;
	r->p = __atomic_load_n(&from->p, __ATOMIC_RELAXED);
	vbr_mtr_run_in(r, tsc, len, n, inc, c);
}

/**
 * The colours c[0, n) of n frames of len[0, n) bytes, one after the other
 * at time tsc (TSC cycles), from slot: the caller's lcore's, used by no
 * other thread at the same time; inc[0, n) their input colours (NULL:
 * colour-blind). The n frames go into the meter at once: one copy and one
 * publication for them all.
 *
 * Publication: a compare-and-swap of cur, or none when the slot's lcore
 * owns the meter: it runs the record in use in place. The first EAL lcore
 * (slot below neal) to run a meter after its reset takes it (in the same
 * CAS, its record then rec[0] of its slot, next to busy, unless that one
 * was in use); while it is the only one, its runs take no locked
 * instruction and read and write one record line (when every frame is a
 * run of its own, one meter per rule over many rules, the CAS and the
 * copy's second record line were most of a run's cost).
 * Any other thread, or the control path, revokes it first
 * (vbr_mtr_rt_revoke()); from then on every run takes the CAS, until the
 * next reset.
 */
static inline void
vbr_mtr_color_n(struct vbr_mtr_rt *rt, unsigned int slot, uint64_t tsc,
		const uint32_t *len, unsigned int n, const uint8_t *inc,
		uint8_t *c)
{
	bool own = rt->own && slot < rt->neal;
	uint64_t cur;

	if (own) {
		uint32_t *busy = &rt->slot[slot].rec[0].busy;
		uint32_t in;

		/* busy before cur is read: the revoker's barrier sees it. */
		__atomic_store_n(busy, 1, __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		cur = __atomic_load_n(&rt->cur, __ATOMIC_ACQUIRE);
		in = (uint32_t)cur & VBR_MTR_CUR_REC;
		/* Owned by this slot, and not being revoked. */
		if (((uint32_t)cur & (VBR_MTR_CUR_OWNED |
				      VBR_MTR_CUR_SHARED)) ==
		    VBR_MTR_CUR_OWNED && in / 2 == slot) {
			/*
			 * In place: nobody else reads the record while the
			 * meter is owned (a revoker waits for busy first), so
			 * no copy, and cur is left as it is.
			 */
			vbr_mtr_run_in(vbr_mtr_rt_rec(rt, in), tsc, len, n,
				       inc, c);
			__atomic_store_n(busy, 0, __ATOMIC_RELEASE);
			return;
		}
		__atomic_store_n(busy, 0, __ATOMIC_RELEASE);
	} else {
		cur = __atomic_load_n(&rt->cur, __ATOMIC_ACQUIRE);
	}
	for (;;) {
		uint32_t in, mine, flags;

		vbr_mtr_rt_revoke(rt, &cur);
		in = (uint32_t)cur & VBR_MTR_CUR_REC;
		mine = 2 * slot + (in == 2 * slot);
		/* Never owned since the reset: this lcore takes it. */
		flags = (uint32_t)cur & VBR_MTR_CUR_SHARED;
		if (own && flags == 0)
			flags = VBR_MTR_CUR_OWNED;
		vbr_mtr_run_n(vbr_mtr_rt_rec(rt, mine), vbr_mtr_rt_rec(rt, in),
			      tsc, len, n, inc, c);
		if (__atomic_compare_exchange_n(&rt->cur, &cur,
				(((cur >> 32) + 1) << 32) | flags | mine,
				false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return;
	}
}

/** The colour of one frame of len bytes: vbr_mtr_color_n() for one. */
static inline enum rte_color
vbr_mtr_color(struct vbr_mtr_rt *rt, unsigned int slot, uint64_t tsc,
	      uint32_t len)
{
	uint8_t c;

	vbr_mtr_color_n(rt, slot, tsc, &len, 1, NULL, &c);
	return (enum rte_color)c;
}

/** The colour of one frame of len bytes, input colour in. */
static inline enum rte_color
vbr_mtr_color_aware(struct vbr_mtr_rt *rt, unsigned int slot, uint64_t tsc,
		    uint32_t len, enum rte_color in)
{
	uint8_t c, i = (uint8_t)in;

	vbr_mtr_color_n(rt, slot, tsc, &len, 1, &i, &c);
	return (enum rte_color)c;
}

/** The headers input colours come from: each value, or -1 when absent. */
struct vbr_mtr_hdrs {
	int16_t v[VBR_MTR_IN_PROTOS];	/**< by protocol: table index */
};

/* The big-endian 16 bits at f[off]. */
static inline uint32_t
vbr_mtr_be16(const uint8_t *f, uint32_t off)
{
	return (uint32_t)f[off] << 8 | f[off + 1];
}

/*
 * Read the headers of a frame (f, len bytes at hand) from an Ethernet
 * header at off: VLAN tags (0x8100, 0x88a8, 0x9100; the first is the outer,
 * the last the inner), then IPv4 or IPv6, then what it carries for the
 * inner IP: IPv4 or IPv6 in IP (protocol 4 or 41), or VXLAN (UDP port
 * 4789) and its Ethernet frame. depth: tunnels still followed.
 */
static inline void
vbr_mtr_hdrs_eth(const uint8_t *f, uint32_t len, uint32_t off,
		 struct vbr_mtr_hdrs *h, bool outer, unsigned int depth)
{
	uint32_t type, proto, ihl;
	unsigned int tags = 0;

	if (off + 14 > len)
		return;
	off += 12;
	type = vbr_mtr_be16(f, off);
	while ((type == 0x8100 || type == 0x88a8 || type == 0x9100) &&
	       off + 6 <= len && tags < 8) {
		int16_t pd = (int16_t)(f[off + 2] >> 4);	/* PCP, DEI */

		/* A tag the device stripped (vbr_mtr_in_colour_vlan()) is
		 * the outer one: the first in the data is then inner.
		 */
		if (outer && tags == 0 && h->v[0] < 0)
			h->v[0] = pd;
		h->v[1] = pd;
		tags++;
		off += 4;
		type = vbr_mtr_be16(f, off);
	}
	off += 2;
	for (;;) {
		int16_t dscp;

		if (type == 0x0800 && off + 20 <= len) {
			dscp = (int16_t)(f[off + 1] >> 2);
			proto = f[off + 9];
			ihl = (uint32_t)(f[off] & 0xf) * 4;
			if (ihl < 20)
				return;
		} else if (type == 0x86dd && off + 40 <= len) {
			dscp = (int16_t)(((f[off] & 0xf) << 2) |
					 (f[off + 1] >> 6));
			proto = f[off + 6];
			ihl = 40;
		} else {
			return;
		}
		if (outer && h->v[2] < 0)
			h->v[2] = dscp;
		h->v[3] = dscp;
		off += ihl;
		if (proto == 4 || proto == 41) {
			if (depth-- == 0)
				return;
			type = proto == 4 ? 0x0800 : 0x86dd;
			continue;
		}
		if (proto == 17 && depth > 0 && off + 16 <= len &&
		    vbr_mtr_be16(f, off + 2) == 4789) {
			vbr_mtr_hdrs_eth(f, len, off + 16, h, false,
					 depth - 1);
		}
		return;
	}
}

/**
 * The input colour of a frame (f, len bytes at hand) for a meter whose
 * input colours are in and order (in->order, read once by the caller):
 * the first protocol in priority order whose header the frame has, else
 * the default. stripped: the TCI of the outer VLAN tag the device took
 * off the frame (RTE_MBUF_F_RX_VLAN_STRIPPED), or -1: its PCP and DEI are
 * the outer VLAN's (and the inner's if the data has no tag left); a tag
 * still in the data is then the inner one.
 */
static inline uint8_t
vbr_mtr_in_colour_vlan(const struct vbr_mtr_in *in, uint32_t order,
		       const uint8_t *f, uint32_t len, int32_t stripped)
{
	struct vbr_mtr_hdrs h = { { -1, -1, -1, -1 } };
	unsigned int k;

	if (stripped >= 0) {
		h.v[0] = (int16_t)((stripped >> 12) & 0xf);
		h.v[1] = h.v[0];
	}
	vbr_mtr_hdrs_eth(f, len, 0, &h, true, 2);
	for (k = 0; k < VBR_MTR_IN_PROTOS; k++) {
		unsigned int p = (order >> (4 * k)) & 0xf;

		if (p == 0)
			break;
		if (h.v[p - 1] >= 0)
			return __atomic_load_n(&in->tab[p - 1][h.v[p - 1]],
					       __ATOMIC_RELAXED);
	}
	return (order >> VBR_MTR_IN_DEFAULT_SHIFT) & 3;
}

/** vbr_mtr_in_colour_vlan() of a frame the device stripped no tag of. */
static inline uint8_t
vbr_mtr_in_colour(const struct vbr_mtr_in *in, uint32_t order,
		  const uint8_t *f, uint32_t len)
{
	return vbr_mtr_in_colour_vlan(in, order, f, len, -1);
}

/**
 * Count n frames of colour c (bytes in all) passed, in slot's counts, as
 * vbr_mtr_count() does one: a run of frames of one colour at once.
 */
static inline void
vbr_mtr_count_n(struct vbr_mtr_rt *rt, unsigned int slot, enum rte_color c,
		uint32_t n, uint64_t bytes)
{
	struct vbr_mtr_cnt *k = &rt->slot[slot].cnt;

	__atomic_store_n(&k->pkts[c], k->pkts[c] + n, __ATOMIC_RELAXED);
	__atomic_store_n(&k->bytes[c], k->bytes[c] + bytes, __ATOMIC_RELAXED);
}

/**
 * Count a frame of colour c (len bytes) in slot's counts (only its lcore
 * writes them; the shared slot's under its lock): as passed in colour c,
 * or, dropped (by the policy or a full hand-off ring), only as dropped, as
 * rte_mtr_stats defines n_pkts[] (packets passed) and n_pkts_dropped.
 */
static inline void
vbr_mtr_count(struct vbr_mtr_rt *rt, unsigned int slot, enum rte_color c,
	      uint32_t len, bool dropped)
{
	struct vbr_mtr_cnt *k = &rt->slot[slot].cnt;

	if (likely(!dropped)) {
		__atomic_store_n(&k->pkts[c], k->pkts[c] + 1,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&k->bytes[c], k->bytes[c] + len,
				 __ATOMIC_RELAXED);
	} else {
		__atomic_store_n(&k->dpkts, k->dpkts + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&k->dbytes, k->dbytes + len,
				 __ATOMIC_RELAXED);
	}
}

#endif /* VBR_MTR_H */
