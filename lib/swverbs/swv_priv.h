/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * swverbs internals: the objects behind the verbs structs, the rings shared
 * with the engine, the steering table. Private to lib/swverbs.
 *
 * Threads: the application threads run the control path (serialized by
 * swv_lock) and the datapath (lock-free, one producer and one consumer per
 * ring); an engine (engine.c: its thread, or a swv_engine_run_once() caller)
 * is the device. Everything the engine reads is published with RCU (liburcu
 * QSBR: only engines are readers) and freed after synchronize_rcu().
 */

#ifndef SWV_PRIV_H
#define SWV_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Inline RCU read side (rcu_dereference() is a call otherwise). */
#ifndef _LGPL_SOURCE
#define _LGPL_SOURCE
#endif
#include <urcu-qsbr.h>
#include <urcu/list.h>
#include <urcu/rculist.h>

#include "swverbs.h"
#include "swv_clock.h"
#include "swv_wire.h"

#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#endif

#define SWV_LIKELY(x) __builtin_expect(!!(x), 1)
#define SWV_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Device limits, reported by swv_query_device_ex() and enforced. */
#define SWV_MAX_QP 16384	/**< QPs (raw and hash) per device */
/* QP and WQ numbers, one space: 24 bits, from SWV_NUM_FIRST (the low ones
 * left out). */
#define SWV_NUM_FIRST 0x100u
#define SWV_NUM_LAST 0xffffffu
#define SWV_MAX_QP_WR 32768	/**< WQEs per send or receive queue */
#define SWV_MAX_SGE 32		/**< SGEs per WQE */
/*
 * The mlx5 profile's send queue, as a ConnectX sizes it (rdma-core's mlx5
 * provider, mlx5_calc_send_wqe() and mlx5_calc_sq_size()): a RAW_PACKET
 * send WQE is a 16-byte control segment, a 32-byte Ethernet segment and a
 * 16-byte data segment per SGE, rounded up to 64-byte basic blocks; the
 * largest WQE is the device's max_wqe_sz_sq (512 bytes here, so 29 SGEs);
 * the whole queue, max_send_wr WQEs rounded up to a power of two bytes,
 * holds at most 2^log_max_qp_sz basic blocks (32768, max_qp_wr). The
 * kernel reports max_sge as (max_wqe_sz_sq - 32) / 16, an RC WQE's room:
 * 30, one more than a RAW_PACKET WQE takes.
 */
#define SWV_MLX5_WQE_SZ_SQ 512	/**< max_wqe_sz_sq, bytes */
#define SWV_MLX5_WQE_BB 64	/**< a send WQE basic block, bytes */
#define SWV_MLX5_RAW_OVERHEAD 48 /**< control + Ethernet segments */
#define SWV_MLX5_DSEG 16	/**< a data segment (one SGE) */
#define SWV_MLX5_MAX_SGE ((SWV_MLX5_WQE_SZ_SQ - 32) / SWV_MLX5_DSEG)
/*
 * The Ethernet bytes the mlx5 profile's send WQE holds inline: a ConnectX
 * whose minimum inline mode is L2 (ConnectX-4, -4 Lx) needs the first 18
 * bytes of each frame in the WQE, and rdma-core's mlx5 provider refuses a
 * shorter frame at post time with EINVAL (providers/mlx5/qp.c,
 * copy_eth_inline_headers()).
 */
#define SWV_MLX5_INLINE_L2 18
#define SWV_MAX_CQ 16384	/**< CQs per device */
#define SWV_MAX_CQE 65536	/**< CQEs per CQ */
#define SWV_MAX_PD 16384	/**< PDs per device */
#define SWV_MR_BITS 16
#define SWV_MAX_MR ((1u << SWV_MR_BITS) - 1) /**< MRs per process */
#define SWV_MAX_WQ 16384	/**< WQs per device */
#define SWV_MAX_IND_TBL 1024	/**< indirection tables per device */
#define SWV_LOG_MAX_IND_TBL 9	/**< 512 entries */
#define SWV_MAX_FLOWS (1u << 22) /**< steering rules per device */
#define SWV_HASH_KEY_LEN 40	/**< Toeplitz key length */

#define SWV_HDR_COPY 192	/**< bytes of a frame the parser looks at */

/*
 * Prefetch a line the caller is about to write. Where the compiler would
 * turn a write hint into a plain read prefetch (x86-64 without -mprfchw),
 * issue PREFETCHW, which also takes the line from the other core in the
 * exclusive state (a hint: never faults, a no-op where unsupported).
 */
#if defined(__x86_64__) && !defined(__PRFCHW__)
#define SWV_PREFETCH_W(p) \
	__asm__ volatile("prefetchw %0" : : "m"(*(const char *)(p)))
#else
#define SWV_PREFETCH_W(p) __builtin_prefetch((p), 1)
#endif

/* Atomics (GCC builtins, also in clang). */
#define SWV_LOAD_ACQ(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define SWV_STORE_REL(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define SWV_LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define SWV_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)

/* The control-path lock (registry and every object create/destroy). */
extern pthread_mutex_t swv_lock;

/*
 * Work queue slots. A ring whose WQEs hold one SGE at most (max_sge 1, the
 * PMD's usual queues) has compact 16-byte slots: the SGE, with the WQE's
 * flags in the top bits of its length, and the wr_id in a side array that
 * the engine reads only when it writes a CQE (an unsignaled send never
 * loads it). Other rings have full slots: a header and max_sge SGEs.
 */
struct swv_wqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t flags;		/**< SWV_WQE_* */
	struct ibv_sge sge[];
};

#define SWV_WQE_SIGNALED 1u
#define SWV_WQE_IP_CSUM 2u	/**< IBV_SEND_IP_CSUM: fill the checksums */

/** A compact slot: struct ibv_sge's layout, flags in length's top bits. */
struct swv_wqe16 {
	uint64_t addr;
	uint32_t len;		/**< SWV_W16_* flags | length (< 2^28) */
	uint32_t lkey;
};

#define SWV_W16_SIG (1u << 31)	/**< signaled */
#define SWV_W16_XLEN (1u << 30)	/**< length >= 2^28: in the ring's xlen[] */
#define SWV_W16_NOSGE (1u << 29) /**< num_sge 0 */
#define SWV_W16_CSUM (1u << 28)	/**< SWV_WQE_IP_CSUM */
#define SWV_W16_LEN_MASK (SWV_W16_CSUM - 1)

_Static_assert(sizeof(struct swv_wqe16) == sizeof(struct ibv_sge) &&
	       offsetof(struct swv_wqe16, lkey) ==
	       offsetof(struct ibv_sge, lkey), "a compact slot is an SGE");

#define SWV_CACHE_LINE 64
#define SWV_ALIGNED __attribute__((aligned(SWV_CACHE_LINE)))

/**
 * A single-producer single-consumer ring of WQEs. The application thread
 * produces (head), the engine consumes (tail). Indexes run free; the slot is
 * index & mask.
 *
 * Each side writes only its own cache line and keeps a private copy of the
 * other side's index, which it re-reads only when that copy says the ring is
 * full (producer) or empty (engine). The producer publishes head once per
 * posted WR list; the engine works on ctail and publishes it as tail once
 * per loop (swv_publish()), so the shared lines move once per batch, not per
 * WQE. Objects holding a ring are allocated cache-line aligned.
 */
struct swv_wq_ring {
	/* application line */
	uint32_t head SWV_ALIGNED;	/**< next slot the poster fills */
	uint32_t ptail;			/**< producer's copy of tail */
	uint64_t npub;			/**< head publications (bench-lines) */
	/* engine line */
	uint32_t tail SWV_ALIGNED;	/**< published: slots given back */
	uint32_t ctail;			/**< next slot the engine takes */
	uint32_t chead;			/**< engine's copy of head */
	bool dirty;			/**< ctail not published yet */
	uint32_t done;			/**< published after the pass's CQEs:
					 *   slots whose completions are
					 *   visible (swv_qp_sq_held()) */
	uint64_t epub;			/**< tail publications (bench-lines) */
	/* read-mostly line */
	uint32_t mask SWV_ALIGNED;	/**< slots - 1 */
	uint32_t max_sge;
	uint32_t stride;	/**< bytes per slot */
	uint32_t addr_off;	/**< offset of the first SGE's addr in a slot */
	bool compact;		/**< struct swv_wqe16 slots */
	uint8_t *slots;
	uint64_t *wrid;		/**< compact: wr_id per slot */
	uint32_t *xlen;		/**< compact: lengths of SWV_W16_XLEN slots */
};

/** A full slot (rings that are not compact). */
static inline struct swv_wqe *
swv_ring_slot(const struct swv_wq_ring *r, uint32_t idx)
{
	return (struct swv_wqe *)(r->slots + (size_t)(idx & r->mask) *
				  r->stride);
}

/** A compact slot. */
static inline struct swv_wqe16 *
swv_ring_slot16(const struct swv_wq_ring *r, uint32_t idx)
{
	return &((struct swv_wqe16 *)r->slots)[idx & r->mask];
}

/** The wr_id of the WQE at idx (engine). */
static inline uint64_t
swv_wqe_wr_id(const struct swv_wq_ring *r, uint32_t idx)
{
	if (SWV_LIKELY(r->compact))
		return r->wrid[idx & r->mask];
	return swv_ring_slot(r, idx)->wr_id;
}

/** The first SGE's address of the WQE at idx (for a prefetch). */
static inline const void *
swv_wqe_addr(const struct swv_wq_ring *r, uint32_t idx)
{
	const uint8_t *s = r->slots + (size_t)(idx & r->mask) * r->stride;

	return (const void *)(uintptr_t)*(const uint64_t *)(s + r->addr_off);
}

/** The slot of the WQE at idx, for a prefetch. */
static inline const void *
swv_wqe_line(const struct swv_wq_ring *r, uint32_t idx)
{
	return r->slots + (size_t)(idx & r->mask) * r->stride;
}

/**
 * Whether the slot at idx begins a cache line: a compact ring's slots (4 a
 * line, the array line-aligned) are fetched ahead once a line; a full
 * ring's every slot.
 */
static inline bool
swv_wqe_new_line(const struct swv_wq_ring *r, uint32_t idx)
{
	return !r->compact ||
	       (idx & (SWV_CACHE_LINE / sizeof(struct swv_wqe16) - 1)) == 0;
}

/**
 * Read the WQE at idx (engine): its SGEs (*sge, num_sge of them; a compact
 * slot's is decoded into *one) and its SWV_WQE_* flags. Return: num_sge.
 */
static inline uint32_t
swv_wqe_read(const struct swv_wq_ring *r, uint32_t idx, struct ibv_sge *one,
	     const struct ibv_sge **sge, uint32_t *flags)
{
	const struct swv_wqe *w;

	if (SWV_LIKELY(r->compact)) {
		const struct swv_wqe16 *c = swv_ring_slot16(r, idx);
		uint32_t len = c->len;

		*flags = ((len & SWV_W16_SIG) ? SWV_WQE_SIGNALED : 0) |
			 ((len & SWV_W16_CSUM) ? SWV_WQE_IP_CSUM : 0);
		*sge = one;
		one->addr = c->addr;
		one->lkey = c->lkey;
		one->length = len & SWV_W16_LEN_MASK;
		if (SWV_UNLIKELY(len & (SWV_W16_XLEN | SWV_W16_NOSGE))) {
			if (len & SWV_W16_NOSGE)
				return 0;
			one->length = r->xlen[idx & r->mask];
		}
		return 1;
	}
	w = swv_ring_slot(r, idx);
	*flags = w->flags;
	*sge = w->sge;
	return w->num_sge;
}

/* Rings and aligned memory (ring.c). */
int swv_ring_init(struct swv_wq_ring *r, uint32_t max_wr, uint32_t max_sge);
void swv_ring_fini(struct swv_wq_ring *r);
/** Empty a ring the engine does not use now (control path, after a grace
 * period with the queue out of the ready state).
 */
void swv_ring_discard(struct swv_wq_ring *r);
/** Zeroed memory aligned to a cache line (free() it), or NULL. */
void *swv_zalloc_aligned(size_t size);
/** Copy a receive WR list into the ring (lock-free producer side). */
int swv_ring_post_recv(struct swv_wq_ring *r, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr);

/*
 * Completion queue. A CQ that asked for completion timestamps has full
 * 32-byte CQEs; any other has compact 16-byte ones: the wr_id and one word
 * that packs everything else (SWV_CQI_*): QP number (24 bits), the frame
 * length (15 bits, SWV_MAX_FRAME fits), receive or send, and one 24-bit
 * field that holds the flow tag of a receive with bytes (a successful one:
 * every frame has at least the wire's min_frame bytes) or the status of
 * any other completion (a send's tag is 0, a failed receive has 0 bytes
 * and tag 0). Two CQEs per cache line become four.
 */
struct swv_cqe {
	uint64_t wr_id;
	uint64_t ts;		/**< ns, CLOCK_MONOTONIC */
	uint16_t byte_len;	/**< at most SWV_MAX_FRAME */
	uint16_t cvlan;		/**< stripped C-VLAN TCI, host order */
	uint32_t qp_num;
	uint32_t flow_tag;
	uint8_t status;		/**< enum ibv_wc_status */
	uint8_t opcode;		/**< enum ibv_wc_opcode */
	uint8_t wc_flags;	/**< enum ibv_wc_flags (IBV_WC_IP_CSUM_OK) */
	uint8_t rsvd;
};

struct swv_cqe16 {
	uint64_t wr_id;
	uint64_t info;		/**< SWV_CQI_* */
};

#define SWV_CQI_QPN_MASK 0xffffffu
#define SWV_CQI_VAL_SHIFT 24	/**< flow tag or status */
#define SWV_CQI_VAL_MASK 0xffffffu
#define SWV_CQI_LEN_SHIFT 48
#define SWV_CQI_LEN_MASK 0x7fffu
#define SWV_CQI_RECV (1ull << 63)

_Static_assert(SWV_MAX_FRAME <= SWV_CQI_LEN_MASK &&
	       SWV_MAX_FRAME <= UINT16_MAX,
	       "a frame length must fit a compact and a full CQE");
_Static_assert(sizeof(struct swv_cqe) == 32 && sizeof(struct swv_cqe16) == 16,
	       "cq_alloc() sizes CQEs by a shift");

/*
 * Pack a completion into a compact CQE's info word. A failed completion
 * carries no length (byte_len means nothing then), so that the reader's
 * test "a receive with bytes is a success with a tag" holds whatever an
 * error path passes; a successful receive has bytes (a wire's min_frame).
 */
static inline uint64_t
swv_cqi_pack(uint8_t status, bool recv, uint32_t len, uint32_t qpn,
	     uint32_t tag)
{
	uint32_t val = recv && status == IBV_WC_SUCCESS ? tag : status;

	if (status != IBV_WC_SUCCESS)
		len = 0;

	return (uint64_t)(qpn & SWV_CQI_QPN_MASK) |
	       (uint64_t)(val & SWV_CQI_VAL_MASK) << SWV_CQI_VAL_SHIFT |
	       (uint64_t)(len & SWV_CQI_LEN_MASK) << SWV_CQI_LEN_SHIFT |
	       (recv ? SWV_CQI_RECV : 0);
}

static inline uint32_t
swv_cqi_len(uint64_t info)
{
	return (uint32_t)(info >> SWV_CQI_LEN_SHIFT) & SWV_CQI_LEN_MASK;
}

/* A receive with bytes: the 24-bit field is its flow tag, status 0. */
static inline bool
swv_cqi_tagged(uint64_t info)
{
	return (info & SWV_CQI_RECV) && swv_cqi_len(info) != 0;
}

static inline uint8_t
swv_cqi_status(uint64_t info)
{
	if (swv_cqi_tagged(info))
		return IBV_WC_SUCCESS;
	return (uint8_t)(info >> SWV_CQI_VAL_SHIFT);
}

static inline uint32_t
swv_cqi_tag(uint64_t info)
{
	if (!swv_cqi_tagged(info))
		return 0;
	return (uint32_t)(info >> SWV_CQI_VAL_SHIFT) & SWV_CQI_VAL_MASK;
}

static inline uint8_t
swv_cqi_opcode(uint64_t info)
{
	return (info & SWV_CQI_RECV) ? IBV_WC_RECV : IBV_WC_SEND;
}

struct swv_cq {
	/* application lines: the ibv_cq_ex fields start/next_poll write */
	struct ibv_cq_ex ibv_cq;	/**< handed to the application */
	uint32_t tail;		/**< next CQE the application reads */
	uint32_t cur;		/**< CQE under an ibv_start_poll() batch */
	uint32_t ahead;		/**< application's copy of head */
	uint64_t npub;		/**< tail publications (bench-lines) */
	/* engine line */
	uint32_t head SWV_ALIGNED;	/**< published: CQEs written */
	uint32_t ehead;		/**< next CQE the engine writes */
	uint32_t etail;		/**< engine's copy of tail */
	/**
	 * CQEs a send promised itself while its frames go out: a frame a
	 * loop wire brings straight back must not take them when the QP's
	 * receive side completes on the same CQ.
	 */
	uint32_t reserved;
	bool dirty;		/**< ehead not published yet */
	uint64_t epub;		/**< head publications (bench-lines) */
	/* read-mostly line */
	uint32_t mask SWV_ALIGNED;
	uint32_t shift;		/**< log2 of the CQE size */
	bool compact;		/**< struct swv_cqe16 entries */
	uint64_t wc_flags;	/**< IBV_WC_EX_WITH_* asked for */
	bool want_ts;
	/**
	 * Receives on this CQ get their checksums checked (IBV_WC_IP_CSUM_OK)
	 * and a stripped C-VLAN TCI: full CQEs only, the compact ones have
	 * no room for them.
	 */
	bool want_ol;
	uint8_t *cqes;		/**< struct swv_cqe or swv_cqe16 */
	unsigned int refs;	/**< QPs and WQs using it (swv_lock) */
	struct swv_device *idev;	/**< inline device, or NULL */
	/* completion events (channel.c) */
	struct swv_comp_channel *channel;	/**< or NULL: no events */
	uint32_t armed;		/**< SWV_ARM_*, atomic */
	uint32_t ev_queued;	/**< events not read yet (channel lock) */
	uint32_t ev_got;	/**< events read (channel lock) */
	struct cds_list_head ev_node;	/**< in channel->fired (its lock) */
	/** Provider door: the stand-in channel is the CQ's own (kfd). */
	struct swv_comp_channel *kch;
};

/* Arm states of a CQ (ibv_req_notify_cq()). */
#define SWV_ARM_NONE	0u
#define SWV_ARM_SOL	1u	/**< next error completion */
#define SWV_ARM_NEXT	2u	/**< next completion */

/*
 * Completion channel: an eventfd in semaphore mode, one count per event,
 * and the CQs whose events wait to be read, in order.
 */
struct swv_comp_channel {
	struct ibv_comp_channel ibv_ch;	/**< handed to the application */
	pthread_spinlock_t lock;	/**< fired, the CQs' ev_* */
	struct cds_list_head fired;	/**< CQs with ev_queued > 0 */
	/**
	 * -1, or the fd of libibverbs' channel (provider door): the CQ's
	 * own stand-in channel then takes no event, each event is the CQ's
	 * address sent to kfd, as the kernel writes it
	 * (ib_uverbs_comp_event_desc), for ibv_get_cq_event() to read.
	 */
	int kfd;
};

/**
 * The provider door's cq_event op: ibv_get_cq_event() read an event of
 * @cq (counted for swv_destroy_cq()'s check).
 */
void swv_cq_event_read(struct ibv_cq *cq);

static inline struct swv_cq *
to_swv_cq(struct ibv_cq *cq)
{
	return container_of((struct ibv_cq_ex *)cq, struct swv_cq, ibv_cq);
}

static inline struct swv_cq *
to_swv_cq_ex(struct ibv_cq_ex *cq)
{
	return container_of(cq, struct swv_cq, ibv_cq);
}

/*
 * What the engine has done but not yet made visible: CQ heads, ring tails,
 * port counters. It is published once per device pass by swv_publish()
 * (counters first, then the CQ heads with release ordering), and always
 * before the engine reports a quiescent state or sleeps. Each engine has
 * its own (struct swv_engine.pend; a device's is dev->pend), used only by
 * the thread running that engine's pass.
 */
#define SWV_PENDING_MAX 64

struct swv_pending {
	unsigned int ncq;
	unsigned int nring;
	unsigned int ndev;
	uint64_t ts;		/**< completion timestamp of this pass, or 0 */
	struct swv_cq *cq[SWV_PENDING_MAX];
	struct swv_wq_ring *ring[SWV_PENDING_MAX];
	struct swv_device *dev[SWV_PENDING_MAX];
};

/** Make everything pending visible (the engine's pass). */
void swv_publish(struct swv_pending *p);

/** Free CQE slots, as seen by the engine. */
static inline uint32_t
swv_cq_room(struct swv_cq *cq)
{
	uint32_t room = cq->mask + 1 - (cq->ehead - cq->etail);

	if (SWV_UNLIKELY(room == 0)) {
		cq->etail = SWV_LOAD_ACQ(&cq->tail);
		room = cq->mask + 1 - (cq->ehead - cq->etail);
	}
	return room;
}

/** The address of CQE idx, for a prefetch. */
static inline const void *
swv_cq_line(const struct swv_cq *cq, uint32_t idx)
{
	return cq->cqes + ((size_t)(idx & cq->mask) << cq->shift);
}

/** Whether CQE idx begins a cache line (see swv_wqe_new_line()). */
static inline bool
swv_cq_new_line(const struct swv_cq *cq, uint32_t idx)
{
	return !cq->compact ||
	       (idx & (SWV_CACHE_LINE / sizeof(struct swv_cqe16) - 1)) == 0;
}

/** Account the CQE written at ehead (published later). */
static inline void
swv_cq_commit(struct swv_pending *p, struct swv_cq *cq)
{
	cq->ehead++;
	if (SWV_UNLIKELY(!cq->dirty)) {
		if (SWV_UNLIKELY(p->ncq == SWV_PENDING_MAX))
			swv_publish(p);
		cq->dirty = true;
		p->cq[p->ncq++] = cq;
	}
}

/** Completion timestamp: one clock read per engine pass. */
static inline uint64_t
swv_cq_ts(struct swv_pending *p)
{
	if (p->ts == 0)
		p->ts = swv_now_ns();
	return p->ts;
}

/** What a full CQE of a receive says beyond the compact one's fields. */
struct swv_cqe_ol {
	uint16_t cvlan;		/**< stripped TCI, host order */
	uint8_t wc_flags;	/**< IBV_WC_IP_CSUM_OK */
};

/**
 * Write one CQE in the CQ's format (engine only; the caller checked
 * swv_cq_room()). A receive (@recv) has a flow tag; a send's is 0. @ol:
 * a receive's checksum status and stripped VLAN (NULL: none), written
 * only to full CQEs (cq->want_ol).
 */
static inline void
swv_cq_write_ol(struct swv_pending *p, struct swv_cq *cq, uint64_t wr_id,
		enum ibv_wc_status status, bool recv, uint32_t len,
		uint32_t qpn, uint32_t tag, const struct swv_cqe_ol *ol)
{
	uint32_t i = cq->ehead & cq->mask;

	if (SWV_LIKELY(cq->compact)) {
		struct swv_cqe16 *c = &((struct swv_cqe16 *)cq->cqes)[i];

		c->wr_id = wr_id;
		c->info = swv_cqi_pack((uint8_t)status, recv, len, qpn, tag);
	} else {
		struct swv_cqe *c = &((struct swv_cqe *)cq->cqes)[i];

		c->wr_id = wr_id;
		c->ts = cq->want_ts ? swv_cq_ts(p) : 0;
		c->byte_len = (uint16_t)len;
		c->cvlan = ol != NULL ? ol->cvlan : 0;
		c->qp_num = qpn;
		c->flow_tag = tag;
		c->status = (uint8_t)status;
		c->opcode = recv ? IBV_WC_RECV : IBV_WC_SEND;
		c->wc_flags = ol != NULL ? ol->wc_flags : 0;
		c->rsvd = 0;
	}
	swv_cq_commit(p, cq);
}

/** swv_cq_write_ol() with nothing beyond the compact fields. */
static inline void
swv_cq_write(struct swv_pending *p, struct swv_cq *cq, uint64_t wr_id,
	     enum ibv_wc_status status, bool recv, uint32_t len, uint32_t qpn,
	     uint32_t tag)
{
	swv_cq_write_ol(p, cq, wr_id, status, recv, len, qpn, tag, NULL);
}

/** WQEs the engine may take from a ring. */
static inline uint32_t
swv_ring_avail(struct swv_wq_ring *r)
{
	uint32_t n = r->chead - r->ctail;

	if (n == 0) {
		r->chead = SWV_LOAD_ACQ(&r->head);
		n = r->chead - r->ctail;
	}
	return n;
}

/** The engine took WQEs up to ctail: publish later. */
static inline void
swv_ring_consumed(struct swv_pending *p, struct swv_wq_ring *r)
{
	if (SWV_UNLIKELY(!r->dirty)) {
		if (SWV_UNLIKELY(p->nring == SWV_PENDING_MAX))
			swv_publish(p);
		r->dirty = true;
		p->ring[p->nring++] = r;
	}
}

/*
 * Receive queue: of a WQ, or the receive side of a RAW_PACKET QP.
 */
enum swv_rq_state {
	SWV_RQ_OFF,		/**< not receiving (RESET, INIT) */
	SWV_RQ_READY,		/**< RDY, or QP in RTR/RTS */
	SWV_RQ_ERR,		/**< error: posted WQEs are flushed */
};

struct swv_rq {
	struct swv_wq_ring ring;
	struct swv_cq *cq;
	struct ibv_pd *pd;
	uint32_t num;		/**< qp_num or wq_num, for CQEs */
	uint32_t state;		/**< enum swv_rq_state, atomic */
	/** IBV_WQ_FLAGS_CVLAN_STRIPPING (a WQ's; atomic, engine reads). */
	uint32_t strip;
	/**
	 * Its completions may carry IBV_WC_IP_CSUM_OK: a QP's receive queue;
	 * a WQ on the full profile only (mlx5's provider reports the
	 * checksum status for QPs alone, never for a WQ's CQE).
	 */
	bool csum;
	/** Called by the engine on an SGE protection error. */
	void (*to_err)(struct swv_rq *rq);
};

/*
 * rdma-core's struct verbs_mr and struct verbs_qp (its private driver.h,
 * provider ABI 34), which libibverbs reads beyond the ibv_mr and ibv_qp a
 * provider hands out: ibv_dereg_mr() reads mr_type and access,
 * ibv_qp_to_qp_ex() reads comp_mask. swverbs' MRs and QPs begin with them,
 * so that the provider door (provider.c) hands libibverbs what it reads.
 * driver.h is not installed (Debian's libibverbs-dev has no such header):
 * the direct build mirrors the layout here, and the provider build, which
 * has driver.h, checks the mirror against it (static_assert in
 * provider.c).
 */
struct swv_verbs_mr {
	struct ibv_mr ibv_mr;
	int mr_type;		/**< enum ibv_mr_type: 0 (IBV_MR_TYPE_MR) */
	int access;		/**< the access flags it was registered with */
};

struct swv_verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;	/**< 0: no ibv_qp_ex (VERBS_QP_EX unset) */
	void *xrcd;		/**< struct verbs_xrcd *: none, NULL */
};

/*
 * Memory regions: a process-wide table indexed by the low bits of the lkey.
 */
struct swv_mr {
	union {
		struct swv_verbs_mr vmr;	/**< what libibverbs reads */
		struct ibv_mr ibv_mr;		/**< its first member */
	};
	uintptr_t start;
	uintptr_t end;		/**< one past the last byte */
	int access;
	uint64_t access_errors;	/**< SGEs with its lkey refused (engine) */
};

static inline struct swv_mr *
to_swv_mr(struct ibv_mr *mr)
{
	return container_of(mr, struct swv_mr, ibv_mr);
}

extern struct swv_mr *swv_mr_table[1u << SWV_MR_BITS];

/**
 * The MR an SGE may use, or NULL when the lkey names no live MR of @pd or
 * the range is outside it, or (@write) the MR lacks IBV_ACCESS_LOCAL_WRITE.
 */
static inline const struct swv_mr *
swv_sge_check(const struct ibv_sge *sge, const struct ibv_pd *pd, bool write)
{
	const struct swv_mr *mr;
	uintptr_t a = (uintptr_t)sge->addr;

	mr = rcu_dereference(swv_mr_table[sge->lkey &
					   ((1u << SWV_MR_BITS) - 1)]);
	if (SWV_UNLIKELY(mr == NULL || mr->ibv_mr.lkey != sge->lkey ||
			 mr->ibv_mr.pd != pd))
		return NULL;
	if (SWV_UNLIKELY(a < mr->start || a > mr->end ||
			 sge->length > mr->end - a))
		return NULL;
	if (write && SWV_UNLIKELY(!(mr->access & IBV_ACCESS_LOCAL_WRITE)))
		return NULL;
	return mr;
}

/*
 * Protection domain.
 */
struct swv_pd {
	struct ibv_pd ibv_pd;
	unsigned int refs;	/**< MRs, QPs, WQs (swv_lock) */
};

static inline struct swv_pd *
to_swv_pd(struct ibv_pd *pd)
{
	return container_of(pd, struct swv_pd, ibv_pd);
}

/*
 * Work queue and indirection table.
 */
struct swv_wq {
	struct ibv_wq ibv_wq;
	struct swv_rq rq;
	struct swv_device *dev;
	struct cds_list_head node;	/**< in dev->wqs (RCU) */
	unsigned int refs;		/**< indirection table entries */
};

static inline struct swv_wq *
to_swv_wq(struct ibv_wq *wq)
{
	return container_of(wq, struct swv_wq, ibv_wq);
}

struct swv_ind_table {
	struct ibv_rwq_ind_table ibv_tbl;
	uint32_t mask;			/**< entries - 1 */
	unsigned int refs;		/**< hash QPs using it */
	struct swv_wq **wqs;
};

static inline struct swv_ind_table *
to_swv_ind_table(struct ibv_rwq_ind_table *t)
{
	return container_of(t, struct swv_ind_table, ibv_tbl);
}

/*
 * Queue pair: RAW_PACKET (send queue and optional receive queue) or hash.
 */
/*
 * Pacing (pacing.c). A paced QP's limit as set: immutable once published
 * (RCU pointer in swv_qp, freed after synchronize_rcu()).
 */
struct swv_pace_cfg {
	uint32_t rate;		/**< kbit/s, > 0 */
	uint32_t burst;		/**< bucket depth, bytes (resolved) */
	uint32_t typical;	/**< typical frame, bytes (resolved) */
};

/*
 * The mlx5 profile's packet pacing rate table: 128 entries, the first the
 * "no limit" one, as a ConnectX-5, -6 Dx or -7 reports
 * packet_pacing_rate_table_size (the kernel logs "Rate limit: 127 rates
 * are supported"). An entry holds one limit as the QP gave it (0 burst or
 * size included), for every QP with an equal one (the kernel's rl.c).
 */
#define SWV_RL_TABLE_SIZE 127

/** An entry of the rate table. */
struct swv_rl_entry {
	uint32_t rate;		/**< kbit/s */
	uint32_t burst;		/**< max_burst_sz as given */
	uint32_t typical;	/**< typical_pkt_sz as given */
	uint32_t refs;		/**< QPs that hold it; 0: free */
};

/*
 * A paced QP's token bucket, as a virtual time (GCRA): the bucket holds
 * min(burst, rate * (now - v)) bytes, v = v_ns + v_frac / rate ns, exact.
 * Engine-private but the statistics (engine-written, relaxed) and what the
 * control path resets under the wheel lock once the engine is out.
 */
struct swv_pace {
	uint32_t burst;		/**< copies of the applied cfg */
	uint32_t typical;
	int64_t v_ns;
	uint64_t v_frac;	/**< < rate */
	/* byte times at the rate in force, as (ns, remainder): no division a frame */
	uint64_t burst_q, burst_r;	/**< of burst bytes */
	uint32_t len_c;		/**< the frame length last timed (0: none) */
	uint64_t len_q, len_r;	/**< of len_c bytes */
	uint64_t due;		/**< parked until (ns) */
	struct cds_list_head wnode;	/**< wheel slot (wheel lock) */
	bool fresh;		/**< bucket full, v not set yet */
	/* statistics (swv_qp_pace_stats) */
	uint64_t frames;
	uint64_t bytes;
	uint64_t waits;
	uint64_t full_ns;
	uint64_t late_max_ns;
};

/*
 * The device's timing wheel of parked QPs (Carousel): SWV_WHEEL_SLOTS
 * slots of 2^SWV_WHEEL_SHIFT ns, a QP in the slot of its due time; a QP
 * due beyond one turn stays in its slot for the turns between. A bitmap
 * of non-empty slots finds the next departure. Taken by the engine (park,
 * advance) and by the control path (QP reset, destroy).
 */
#define SWV_WHEEL_SHIFT 11
#define SWV_WHEEL_SLOTS 2048
struct swv_wheel {
	pthread_spinlock_t lock;
	uint32_t n;		/**< QPs parked */
	uint64_t tick;		/**< first slot not advanced past */
	uint64_t bits[SWV_WHEEL_SLOTS / 64];
	struct cds_list_head slot[SWV_WHEEL_SLOTS];
};

struct swv_qp {
	union {
		struct swv_verbs_qp vqp;	/**< what libibverbs reads */
		struct ibv_qp ibv_qp;		/**< its first member */
	};
	struct swv_device *dev;
	struct cds_list_head node;	/**< in dev->qps (RCU) or dev->hqps */
	bool is_hash;
	bool has_rq;
	bool sig_all;
	uint32_t state;			/**< enum ibv_qp_state, atomic */
	/*
	 * Pacing (pacing.c), read by the drain with the state: pace_gen is
	 * bumped (release) by the control path after each change of
	 * pace_cfg; pace_seen and pace_rate are the engine's copies (0:
	 * unpaced), so an unpaced QP whose limit did not change costs one
	 * branch.
	 */
	uint32_t pace_gen;
	uint32_t pace_seen;
	uint32_t pace_rate;
	bool pace_parked;		/**< on the wheel (wheel lock) */
	bool in_run;			/**< on dev->run (its worker) */
	bool pace_dead;			/**< being destroyed (wheel lock) */
	/**
	 * The QP's own counts since creation (stat.c): engine-written
	 * (relaxed). The Tx counts share the line of the pacing fields the
	 * drain reads, added once per drained burst; Rx adds to them per
	 * frame (cheaper than a tally: cachegrind, bench_swverbs_lines),
	 * and the Rx path of a hash QP reads no other line of the QP but
	 * ind's (rx.c), as many lines as before the counts were kept.
	 */
	struct swv_qp_stats hw;
	struct ibv_qp_cap cap;
	/* raw */
	struct swv_wq_ring sq;
	struct swv_cq *scq;
	struct swv_rq rq;
	/* hash */
	struct swv_ind_table *ind;
	uint64_t hash_fields;
	uint8_t hash_key[SWV_HASH_KEY_LEN];
	unsigned int flows;		/**< flows attached (swv_lock) */
	struct swv_pace_cfg *pace_cfg;	/**< RCU pointer, NULL: no limit */
	/** Its entry of dev->rl, + 1; 0: none (swv_lock). */
	uint32_t rl_slot;
	struct swv_pace pace;		/**< the bucket (engine) */
	/* QP counters (stat.c, swv_lock) */
	struct swv_counter *counter;	/**< bound to, or NULL */
	struct swv_qp_stats cnt_base;	/**< hw at the bind */
	int pid;			/**< creating thread's id */
	char comm[16];			/**< its name */
};

static inline struct swv_qp *
to_swv_qp(struct ibv_qp *qp)
{
	return container_of(qp, struct swv_qp, ibv_qp);
}

/*
 * Steering. A parsed frame is a key (struct swv_flow_key); a rule is a mask
 * and a masked value over it. Rules are grouped by mask into subtables
 * (tuple space search), each a lock-free open-addressing hash of the masked
 * values; see classifier.c.
 */

/** One level of headers: the outer ones, or those after a tunnel. */
struct swv_hdr_key {
	/* word 0 */
	uint8_t dmac[6];
	uint16_t vlan_tag;	/**< first TCI, network order; 0 untagged */
	/* word 1 */
	uint8_t smac[6];
	uint16_t ether_type;	/**< after the VLAN tags, network order */
	/* word 2: presence and small IP fields */
	uint8_t l3;		/**< 4, 6, or 0: the fields below are junk */
	uint8_t proto;		/**< IPv4 protocol, IPv6 next header */
	uint8_t tos;		/**< IPv4 TOS, IPv6 traffic class */
	uint8_t ttl;		/**< IPv4 TTL, IPv6 hop limit */
	uint8_t ipflags;	/**< IPv4: 1 reserved, 2 DF, 4 MF, 8 offset */
	uint8_t l4;		/**< TCP or UDP when its ports are parsed */
	uint8_t eth;		/**< 1: an Ethernet header was parsed */
	uint8_t cvlan;		/**< SWV_TAG_* of the first tag, 0: none */
	/* word 3 */
	uint16_t sport;		/**< network order */
	uint16_t dport;
	uint32_t flow_label;	/**< IPv6, network order, 20 low bits */
	/* words 4-7: IPv4 addresses in the first 4 bytes */
	uint8_t src[16];
	uint8_t dst[16];
};

/* cvlan bits: a tag (0x8100 or 0x88a8); the first one 802.1Q (0x8100). */
#define SWV_TAG_C 1u
#define SWV_TAG_ANY 2u

/* tun bits */
#define SWV_TUN_VXLAN 1u
#define SWV_TUN_GRE 2u
#define SWV_TUN_MPLS 4u
#define SWV_TUN_ESP 8u

struct swv_flow_key {
	struct swv_hdr_key outer;	/**< words 0-7 */
	/* word 8 */
	uint8_t tun;		/**< SWV_TUN_*; 0: the fields below are junk */
	uint8_t rsvd[3];
	uint32_t tunnel_id;	/**< VXLAN: 0, VNI[3] as on the wire */
	/* word 9 */
	uint16_t gre_flags;	/**< c_ks_res0_ver, network order */
	uint16_t gre_proto;
	uint32_t gre_key;
	/* word 10 */
	uint32_t mpls;		/**< top label entry as on the wire */
	uint32_t esp_spi;
	/* word 11 */
	uint32_t esp_seq;
	uint32_t rsvd2;
	struct swv_hdr_key inner;	/**< words 12-19 */
};

#define SWV_KEY_WORDS (sizeof(struct swv_flow_key) / sizeof(uint64_t))
#define SWV_KW_OUTER_L3 2	/**< word of outer.l3 */
#define SWV_KW_TUN 8		/**< word of tun */
#define SWV_KW_INNER_L3 14	/**< word of inner.l3 and inner.eth */

union swv_key {
	struct swv_flow_key k;
	uint64_t w[SWV_KEY_WORDS];
};

/**
 * Call fn(arg, p, n) on the pieces of bytes [off, off + len) of a frame
 * held in iov, in order (the bytes exist: the caller checked the length).
 */
static inline __attribute__((always_inline)) void
swv_iov_each(const struct iovec *iov, int iovcnt, uint32_t off, uint32_t len,
	     void (*fn)(void *arg, const uint8_t *p, uint32_t n), void *arg)
{
	int i;

	for (i = 0; i < iovcnt && len > 0; i++) {
		uint32_t l = (uint32_t)iov[i].iov_len, k;

		if (off >= l) {
			off -= l;
			continue;
		}
		k = l - off < len ? l - off : len;
		fn(arg, (const uint8_t *)iov[i].iov_base + off, k);
		len -= k;
		off = 0;
	}
}

static inline __attribute__((always_inline)) void
swv_iov_copy_piece(void *arg, const uint8_t *p, uint32_t n)
{
	uint8_t **dst = arg;

	memcpy(*dst, p, n);
	*dst += n;
}

/** Copy bytes [off, off + len) of the frame in iov to dst. */
static inline void
swv_iov_copy(uint8_t *dst, const struct iovec *iov, int iovcnt, uint32_t off,
	     uint32_t len)
{
	swv_iov_each(iov, iovcnt, off, len, swv_iov_copy_piece, &dst);
}

/** What the parser learns from the first bytes of a frame. */
struct swv_pkt {
	union swv_key key;
	/**
	 * Offsets of the outer L3 and L4 headers (0: none), for the
	 * checksum check of a CQ that asks for it (swv_rx_csum_ok()): the
	 * one parse finds them, the sums are taken only where wanted.
	 */
	uint16_t l3off;
	uint16_t l4off;
};

/** Parse a frame's first bytes into its key (parse.c). */
void swv_parse(struct swv_pkt *pkt, const uint8_t *buf, uint32_t len);
/**
 * Whether a parsed frame (the frame's bytes in iov) is an IPv4 frame whose
 * header checksum and TCP or UDP checksum are right, what a ConnectX
 * reports as IBV_WC_IP_CSUM_OK (parse.c). IPv6, other protocols and
 * fragments are not checked: false.
 */
bool swv_rx_csum_ok(const struct swv_pkt *pkt, const struct iovec *iov,
		    int iovcnt, uint32_t len);
/**
 * IBV_SEND_IP_CSUM on a frame of len bytes in iov (parse.c): the IPv4
 * header checksum and the TCP or UDP checksum (IPv4 or IPv6) computed,
 * written into a copy of the headers in hdr[SWV_CSUM_HDR_MAX]; *out
 * (room for iovcnt + 1 entries) gets the frame with the copy in front.
 * Return: the entries of *out, or 0 when the frame has no header it
 * can fill (short, not IP, a fragment, another protocol): it is sent as
 * it is.
 */
#define SWV_CSUM_HDR_MAX 160
int swv_tx_csum_fill(const struct iovec *iov, int iovcnt, uint32_t len,
		     uint8_t *hdr, struct iovec *out);

/*
 * Counters objects (counters.c). A counted rule adds each frame it wins to
 * a tally of its own, behind its key, in the cache lines the lookup just
 * read; the engine never touches the counters object. The object lists
 * the flows that bind it, and the flows destroyed that the engine may still
 * count through until a grace period has passed ("dying"); a read sums
 * their tallies and what the flows gone for good left (folded), under the
 * object's lock, and computes each index from the two totals.
 */

/** Descriptions attached at one index. */
struct swv_counter_point {
	uint64_t base;		/**< makes late points start from 0 */
	uint32_t npkt;		/**< IBV_COUNTER_PACKETS attached */
	uint32_t nbyte;		/**< IBV_COUNTER_BYTES attached */
};

/** Points beyond the inline ones: an array that grows by replacement. */
struct swv_counter_points {
	uint32_t cap;			/**< entries of pt[] */
	struct swv_counter_point pt[];
};

/** Points that come with a counters object: packets and bytes. */
#define SWV_CNT_INLINE 2

struct swv_counters {
	struct ibv_counters ibv_counters;
	struct swv_device *dev;
	/**
	 * Covers everything below, and the list links of the tallies: a
	 * spinlock (held for a few loads and stores; never by the engine).
	 */
	uint32_t lock;
	uint64_t packets;		/**< folded: of flows gone for good */
	uint64_t bytes;
	struct swv_flow *flows;		/**< binding and dying flows */
	uint32_t bound;			/**< flows binding the object */
	uint32_t dying;			/**< destroyed, engine may count */
	bool destroyed;	/**< swv_destroy_counters() done: the last dying
			 * flow frees the object
			 */
	uint32_t nidx;			/**< highest attached index + 1 */
	struct swv_counter_points *pts;	/**< NULL: the points are inl */
	/** Indexes 0 and 1 while pts is NULL. */
	struct swv_counter_point inl[SWV_CNT_INLINE];
};

static inline struct swv_counters *
to_swv_counters(struct ibv_counters *c)
{
	return container_of(c, struct swv_counters, ibv_counters);
}

/** Ranks from here on are leftovers rules (MC_DEFAULT, ALL_DEFAULT). */
#define SWV_RANK_LEFTOVERS (1ull << 62)

/* Rule classes, the top bits of a rank. */
#define SWV_CLASS_NORMAL 0ull
#define SWV_CLASS_MC 1ull
#define SWV_CLASS_ALL 2ull
#define SWV_RANK_CLASS_SHIFT 62
#define SWV_RANK_PRIO_SHIFT 46
#define SWV_RANK_SEQ_MASK ((1ull << SWV_RANK_PRIO_SHIFT) - 1)
/*
 * The mlx5 profile's NORMAL rules: the seq is (flow group start, creation),
 * so that a level orders its rules by flow group, as mlx5 does (flow.c).
 */
#define SWV_RANK_GROUP_SHIFT 24
#define SWV_RANK_CREATED_MASK ((1ull << SWV_RANK_GROUP_SHIFT) - 1)
_Static_assert((SWV_CLASS_MC << SWV_RANK_CLASS_SHIFT) == SWV_RANK_LEFTOVERS,
	       "leftovers rank");

/** Rule action flags. */
#define SWV_ACT_DROP 1u

/**
 * A rule. Rules with the same mask and masked value form a list sorted by
 * rank, whose head is the one in the subtable's hash; the engine only ever
 * reads heads. Actions are fields here (COUNT: the counters object).
 */
struct swv_flow {
	/* control path */
	struct ibv_flow ibv_flow;
	struct swv_subtable *sub;	/**< NULL: SNIFFER */
	struct swv_flow *same;		/**< worse-ranked, same key; retire */
	uint32_t hash;			/**< of key[] */
	/*
	 * What the engine reads, from here to the end of key[]: the pool
	 * puts rank at the start of a cache line, so that a rule of up to
	 * SWV_FLOW_LINE_WORDS key words costs a lookup one line.
	 */
	uint64_t rank;			/**< (class, priority, seq): lower wins */
	struct swv_qp *qp;		/**< target (raw or hash QP) */
	struct swv_counters *cnt;	/**< ACTION_COUNT, NULL if none */
	uint32_t tag;			/**< ACTION_TAG, 0 if none */
	uint8_t actions;		/**< SWV_ACT_* */
	uint8_t nw;			/**< words in key[] */
	uint64_t key[];			/**< masked value: the subtable's words */
	/* then, for a rule with ACTION_COUNT, its struct swv_flow_tally */
};

/* Where the engine's line of a rule starts; key words that fit in it. */
#define SWV_FLOW_HOT offsetof(struct swv_flow, rank)
#define SWV_FLOW_LINE_WORDS \
	((SWV_CACHE_LINE - (sizeof(struct swv_flow) - SWV_FLOW_HOT)) / \
	 sizeof(uint64_t))
_Static_assert(SWV_FLOW_LINE_WORDS == 4, "a rule's line: 4 key words");

/**
 * What the frames a counted rule won add up to: written by the engine
 * alone, a seqlock for readers (packets and bytes over the same frames).
 */
struct swv_flow_tally {
	uint64_t seq;			/**< odd while the engine writes */
	uint64_t packets;
	uint64_t bytes;
	/* the counters object's list (its lock) */
	struct swv_flow *next;
	struct swv_flow **pprev;
};

/** The tally of a rule with ACTION_COUNT. */
static inline struct swv_flow_tally *
swv_flow_tally(const struct swv_flow *f)
{
	return (struct swv_flow_tally *)(uintptr_t)&f->key[f->nw];
}

/** Count one frame of len bytes (engine thread). */
static inline void
swv_tally_add(struct swv_flow_tally *t, uint32_t len)
{
	uint64_t s = SWV_LOAD(&t->seq);

	SWV_STORE(&t->seq, s + 1);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	SWV_STORE(&t->packets, SWV_LOAD(&t->packets) + 1);
	SWV_STORE(&t->bytes, SWV_LOAD(&t->bytes) + len);
	SWV_STORE_REL(&t->seq, s + 2);
}

/*
 * The object pool (pool.c): rules, in a class per number of key words and
 * tally or not, and counters objects. swv_lock held.
 */
#define SWV_POOL_RULE(nw, counted) \
	((nw) + ((counted) ? SWV_KEY_WORDS + 1 : 0))
#define SWV_POOL_COUNTERS (2 * (SWV_KEY_WORDS + 1))
#define SWV_POOL_CLASSES (SWV_POOL_COUNTERS + 1)
struct swv_pool_chunk;
/** An engine's pool (struct swv_engine pool); all zero: empty. */
struct swv_pool {
	void *free[SWV_POOL_CLASSES];	/**< free objects by class */
	struct swv_pool_chunk *chunks;	/**< newest first */
	uint8_t *cur;			/**< bump pointer in the newest */
	uint8_t *end;
	size_t live;			/**< objects allocated, not freed */
	size_t mapped;			/**< bytes of chunks mapped */
};
/** Uninitialized memory for an object of class cls, or NULL. */
void *swv_pool_alloc(struct swv_pool *pool, unsigned int cls);
/** Give an object back (no reader can see it any more). */
void swv_pool_free(struct swv_pool *pool, void *p, unsigned int cls);
/** Unmap every chunk of an empty pool. Return: 0, EBUSY (objects live). */
int swv_pool_release(struct swv_pool *pool);

/*
 * A counted rule and its counters object (counters.c; swv_lock held).
 * bind: before the engine can see the rule (its tally zeroed); unbind: the
 * rule is destroyed (seen: the engine may have seen it, so it stays in the
 * object's sums, dying, until release); release: after the grace period,
 * its tally folds into the object, which it frees if it was destroyed and
 * this was its last flow.
 */
void swv_counters_bind(struct swv_counters *c, struct swv_flow *f);
void swv_counters_unbind(struct swv_counters *c, struct swv_flow *f,
			 bool seen);
void swv_counters_release(struct swv_counters *c, struct swv_flow *f);

/** Hash slots: NULL (end of probe), SWV_SLOT_TOMB, or a list head. */
#define SWV_SLOT_TOMB ((struct swv_flow *)(uintptr_t)1)

/**
 * One slot: the head and its key's hash, so that a probe compares hashes
 * in the slot array and reaches a rule only on a (likely) match: a miss or
 * an insert walks one or two cache lines, not one rule per probed slot.
 * The hash is written before the head is published (release); a reader
 * that pairs a stale hash with a new head only fails the hash or key
 * compare, and the key compare decides.
 */
struct swv_slot {
	struct swv_flow *f;		/**< RCU pointer */
	uint32_t hash;			/**< of f's key, when f is a head */
	uint32_t rsvd;
};

struct swv_slots {
	uint32_t mask;			/**< slots - 1 */
	uint32_t used;			/**< live + tombstones (control) */
	struct swv_slot slot[];
};

struct swv_prio_count {
	uint64_t base;			/**< rank without the seq */
	uint32_t n;
};

struct swv_subtable {
	/* read by the engine */
	struct swv_slots *slots;	/**< RCU pointer */
	uint32_t nw;
	uint8_t idx[SWV_KEY_WORDS];	/**< key words of the mask */
	uint64_t mask[SWV_KEY_WORDS];	/**< their masks */
	/* control path (swv_lock) */
	/**
	 * No rule in it ranks before this (a rank, seq included): the rank
	 * of the first rule made at its best base, kept when that rule goes
	 * (a bound may be low, never high), the base itself once it worsens.
	 */
	uint64_t lb;
	uint32_t nkeys;			/**< live slots */
	uint32_t nprio;
	struct swv_prio_count *prio;	/**< by base, ascending */
};

struct swv_steer_ent {
	uint64_t base;			/**< the subtable's lb when published */
	struct swv_subtable *sub;
};

/*
 * The flow caches in front of the subtables (classifier.c): an exact-match
 * cache (EMC, direct-mapped, small) and a signature-match cache (SMC,
 * buckets of SWV_SMC_WAYS 16-bit signatures over their entries, sized to
 * the table). Both are keyed by the frame's key under the union of the
 * subtables' masks (the bits no rule looks at cannot change the answer)
 * and hold the rule the walk found, or "no match". An entry counts only
 * when its gen is the device's cls_gen, which every rule change bumps.
 * Written and read by the device's Rx context alone (one thread at a
 * time); the control path only allocates a cache, empty, and retires it.
 */
#define SWV_EMC_ENTRIES 2048u
#define SWV_SMC_WAYS 8u
#define SWV_SMC_MIN_BUCKETS 512u
#define SWV_SMC_MAX_BUCKETS 32768u

struct swv_cls_ent {
	uint64_t gen;			/**< the cls_gen it was made at; 0 empty */
	const struct swv_flow *f;	/**< the best rule, NULL: none */
	uint64_t key[];			/**< the frame's words under the mask */
};

struct swv_cls_cache {
	/* set by the control path before publication */
	size_t size;			/**< bytes mapped, header included */
	uint32_t nw;			/**< key words the caches look at */
	uint32_t stride;		/**< bytes per entry */
	uint32_t emc_mask;		/**< EMC entries - 1 */
	uint32_t smc_mask;		/**< SMC buckets - 1 */
	uint32_t cap;			/**< SMC entries */
	bool full;			/**< cap is as large as it gets */
	uint8_t idx[SWV_KEY_WORDS];	/**< the words, ascending */
	uint64_t mask[SWV_KEY_WORDS];	/**< the union of the masks */
	uint8_t *emc;			/**< EMC entries */
	uint16_t *sig;			/**< SMC signatures, 0: empty */
	uint8_t *smc;			/**< SMC entries, by bucket and way */
	/* the Rx context's */
	uint32_t ins;			/**< answers the EMC lacked, to pace it */
	uint32_t evict;			/**< SMC evictions, to pick a way */
	uint32_t win_n;			/**< lookups in this EMC window */
	uint32_t win_emc;		/**< EMC hits in this window */
	uint32_t emc_skip;		/**< windows left with the EMC off */
	uint32_t emc_pace;		/**< 0: every answer enters, else INV-1 */
};

/*
 * The EMC's policy (classifier.c): once it has shown it helps, one in
 * SWV_EMC_INSERT_INV answers it lacked enters it; a window of SWV_EMC_WIN
 * lookups where it answered fewer than one in SWV_EMC_MIN_SHARE turns it
 * off (no probe, no insert) for SWV_EMC_SKIP_WINDOWS windows, then a trial
 * window takes every answer in again. SWV_EMC_INSERT_INV: a power of 2.
 */
#define SWV_EMC_INSERT_INV 8u
#define SWV_EMC_WIN 1024u
#define SWV_EMC_MIN_SHARE 16u
#define SWV_EMC_SKIP_WINDOWS 7u

/** Published array of subtables, by base ascending; replaced whole. */
struct swv_steer {
	uint32_t nsub;
	struct swv_cls_cache *cls;	/**< NULL: no caches */
	struct swv_steer_ent sub[];
};

/** Published array of SNIFFER rules' QPs; replaced whole. */
struct swv_sniff {
	uint32_t n;
	struct swv_qp *qp[];
};

/** The best rule matching a frame, or NULL. */
const struct swv_flow *swv_steer_lookup(const struct swv_steer *st,
					const struct swv_pkt *pkt);

/** Frames looked up together by swv_steer_lookup_burst(), at most. */
#define SWV_RX_BURST 32

/**
 * swv_steer_lookup() for @n (<= SWV_RX_BURST) frames at once: out[i] is the
 * best rule for pkt[i]. The hash slots, then the rules, of all the frames
 * are fetched together, so that their cache misses overlap.
 */
void swv_steer_lookup_burst(const struct swv_steer *st,
			    const struct swv_pkt *pkt,
			    const struct swv_flow **out, unsigned int n);
/**
 * The best rule matching a frame of dev (its Rx context), through the flow
 * caches, or NULL.
 */
const struct swv_flow *swv_classify(struct swv_device *dev,
				    const struct swv_pkt *pkt);
/**
 * Start fetching what swv_classify_burst() will first read for @pkt: the
 * SMC's signatures while the EMC is off (frames spread over many flows),
 * or the first subtable's slot when it is large and there are no caches.
 * Called as each frame of a burst is parsed, so that those misses overlap
 * with the parsing of the frames after it.
 */
void swv_classify_prefetch(const struct swv_device *dev,
			   const struct swv_pkt *pkt);
/** swv_classify() for @n (<= SWV_RX_BURST) frames. */
void swv_classify_burst(struct swv_device *dev, const struct swv_pkt *pkt,
			const struct swv_flow **out, unsigned int n);
/**
 * Free a device's table at its destruction (swv_lock, no reader), after
 * what its engine eng retired.
 */
void swv_steer_free(struct swv_engine *eng, struct swv_steer *st);
/** Free what is left of a device's flow groups at its destruction. */
void swv_fgroups_free(struct swv_device *dev);

/* classifier.c: updates (swv_lock held) */
/** The hash of a rule's key words (struct swv_flow hash). */
uint32_t swv_key_hash(const uint64_t *w, unsigned int n);
/**
 * Add rule f (key, hash and rank set) under the mask of nw words idx/mask
 * to dev's table. 0 or ENOMEM.
 */
int swv_steer_add(struct swv_device *dev, struct swv_flow *f, uint32_t nw,
		  const uint8_t *idx, const uint64_t *mask);
/** Remove f from dev's table; the caller retires f. */
void swv_steer_del(struct swv_device *dev, struct swv_flow *f);
/** The mlx5 profile's EEXIST: an equal match, same priority, other action. */
int swv_steer_conflict(const struct swv_device *dev, const struct swv_flow *f,
		       uint32_t nw, const uint8_t *idx, const uint64_t *mask);

/*
 * The retire list (classifier.c, swv_lock held): objects the engine may
 * still see, freed after a grace period. Each engine has one (struct
 * swv_engine retire); a device's objects are retired to its engine's.
 */
#define SWV_RETIRE_BATCH 4096	/**< retired before a batched flush */
#define SWV_RETIRE_PER_OP 8	/**< retired by one update at most */
struct swv_retire_list {
	size_t n;			/**< objects in obj[] */
	bool big;			/**< a huge slot array waits in it */
	void *obj[SWV_RETIRE_BATCH + SWV_RETIRE_PER_OP];
};
/** Free p (malloc()ed) once the engine cannot see it any more. */
void swv_retire(struct swv_engine *eng, void *p);
/** Return a rule to eng's pool once the engine cannot see it any more. */
void swv_retire_rule(struct swv_engine *eng, struct swv_flow *f);
/** The end of an update: flush when the batch is full. */
void swv_retire_done(struct swv_engine *eng);
/** Free everything eng retired now (one grace period). */
void swv_retire_flush(struct swv_engine *eng);

/** Toeplitz hash of @len bytes with a @key of at least len + 4 bytes. */
uint32_t swv_toeplitz(const uint8_t *key, const uint8_t *data,
		      unsigned int len);
/** The RSS hash of a parsed frame for a hash QP. */
uint32_t swv_rss_hash(const struct swv_qp *qp, const struct swv_pkt *pkt);

/*
 * Device and context.
 */
struct swv_context {
	struct verbs_context vctx;	/**< ends with the ibv_context */
	struct swv_device *dev;
	struct cds_list_head node;	/**< in dev->ctxs (RCU) */
	int event_wr;			/**< write end of the async pipe */
	unsigned int objs;		/**< objects created on it (swv_lock) */
	/**
	 * Opened through libibverbs (provider.c): its completion channels
	 * are libibverbs' (an event is the CQ's address written to the
	 * channel's fd), and libibverbs closes its async_fd.
	 */
	bool provider;
};

/**
 * Make @ctx, zeroed or set up by libibverbs, a context of @device (a
 * swverbs device's ibv_device): its async event pipe, whose read end goes
 * to async_fd, and its place among the device's contexts. Return 0, or
 * ENODEV (no such device any more) or the errno of the pipe.
 */
int swv_ctx_init(struct swv_context *ctx, struct ibv_device *device);

/**
 * Undo swv_ctx_init(): EBUSY while objects made on @ctx remain. The read
 * end of the pipe (async_fd) stays open: its owner closes it.
 */
int swv_ctx_fini(struct swv_context *ctx);

/**
 * An async event as the kernel's uverbs writes it to async_fd (struct
 * ib_uverbs_async_event_desc), which libibverbs' ibv_get_async_event()
 * reads: element is the port number for port and device events.
 */
struct swv_async_desc {
	uint64_t element;
	uint32_t event_type;
	uint32_t reserved;
};

static inline struct swv_context *
to_swv_ctx(struct ibv_context *ctx)
{
	return container_of(ctx, struct swv_context, vctx.context);
}

/**
 * Fill a context's verbs_context: verbs.h's inline calls reach swverbs
 * (verbs_ctx.c).
 */
void swv_vctx_init(struct verbs_context *vctx);

/**
 * verbs_context.query_device_ex: swv_query_device_ex() into the first
 * attr_size bytes of @attr (the provider door's op too).
 */
int swv_vctx_query_device_ex(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr,
			     size_t attr_size);

#define SWV_ETH_HLEN 14		/**< an Ethernet header, no tag */

/*
 * A frame's bytes above the MTU: an Ethernet header and one VLAN tag, no
 * FCS (a ConnectX's port MTU is the MTU + 22 with the FCS). Rx drops what
 * is longer; the wires' largest MTU leaves this much to their largest
 * frame, so that at the largest MTU that frame still comes in.
 */
#define SWV_MTU_OVERHEAD (SWV_ETH_HLEN + 4)

struct swv_device {
	struct ibv_device ibv_dev;
	char name[SWV_NAME_MAX];
	uint8_t mac[6];
	struct swv_wire *wire;		/**< replaced by rebind (swv_lock) */
	/**
	 * Taken to swap or close the wire, and by the port counters' read of
	 * its drops (any thread, never with swv_lock wanted inside).
	 */
	pthread_mutex_t wire_lock;
	uint64_t wire_full_closed;	/**< rx_drops of closed wires (wire_lock) */
	uint64_t wire_bad_closed;
	char *wire_spec;		/**< the wire string it was made with */
	unsigned int flags;		/**< SWV_DEVICE_* */
	bool strict;			/**< SWV_DEVICE_PROFILE_MLX5 */
	/**
	 * The mlx5 profile on an af_packet wire: the interface plays the
	 * kernel netdev in front of the port, which takes frames to its own
	 * MAC and broadcast before leftovers rules see them.
	 */
	bool netdev;
	uint8_t netdev_mac[6];		/**< the interface's MAC */
	/**
	 * The mlx5-vf profile (SWV_DEVICE_PROFILE_VF): what the vport behind
	 * the interface registered (vport.c; engine only), or NULL.
	 */
	struct swv_vport *vport;
	uint32_t mtu;			/**< port MTU (in-memory wires) */
	/**
	 * The MTU Rx drops above, set by swv_set_port_rx_mtu(); 0: the
	 * wire's MTU (swv_lock held to write).
	 */
	uint32_t rx_mtu;
	/**
	 * Longest frame Rx takes: rx_mtu or the MTU, an Ethernet header and
	 * one VLAN tag, SWV_MTU_OVERHEAD (set with them; engine-read); longer
	 * ones are counted in rx_mtu_dropped.
	 */
	uint32_t rx_max_frame;
	/**
	 * Held to compute and store rx_max_frame: the engine's link check
	 * reads the wire's MTU while the control path may set rx_mtu, and
	 * an older result must not land after a newer one.
	 */
	pthread_mutex_t mtu_lock;
	/**
	 * Rx reads the wire's MTU again for a frame above rx_max_frame
	 * (rx_mtu_doubt(); engine only): the millisecond's start (ns) and
	 * the reads in it.
	 */
	uint64_t mtu_doubt_ns;
	uint32_t mtu_doubts;
	uint32_t removed;		/**< wire gone, DEVICE_FATAL raised */
	struct cds_list_head reg_node;	/**< registry (swv_lock) */
	struct cds_list_head eng_node;	/**< engine list (RCU) */
	struct swv_engine *eng;		/**< the engine serving it (swv_lock) */
	struct swv_pending *pend;	/**< &eng->pend */
	struct cds_list_head ctxs;	/**< swv_context (RCU) */
	struct cds_list_head qps;	/**< raw swv_qp (RCU) */
	struct cds_list_head hqps;	/**< hash swv_qp (swv_lock) */
	struct cds_list_head wqs;	/**< swv_wq (RCU) */
	struct swv_steer *steer;	/**< RCU pointer */
	/** The mlx5 profile's flow groups (flow.c, swv_lock), by table. */
	struct swv_fgroup *fgroups;
	/** Classifier generation: bumped (release) after every rule change. */
	uint64_t cls_gen;
	/** Lookups answered by the EMC, the SMC, the walk (Rx context). */
	uint64_t cls_hits[3];
	struct swv_sniff *sniff;	/**< RCU pointer, NULL: none */
	uint32_t link;			/**< port up, engine-written */
	uint32_t speed;			/**< Mbit/s */
	/** qp_rate_limit_max, kbit/s: a device constant, not the wire's. */
	uint32_t pace_max;
	/** The device takes max_burst_sz and typical_pkt_sz (pacing.c). */
	bool pace_burst;
	/**
	 * The mlx5 profile's rate table (pacing.c, swv_lock): one entry per
	 * distinct limit the QPs have, shared; all in use: ENOSPC.
	 */
	struct swv_rl_entry rl[SWV_RL_TABLE_SIZE];
	uint64_t next_link_check;	/**< ns (engine) */
	/**
	 * QPs and WQs take their numbers from one space (swv_num_next(),
	 * swv_lock): a completion's qp_num names one queue, so a CQ clean
	 * (swv_cq_clean()) by number never drops another queue's.
	 */
	uint32_t next_num;
	bool num_wrapped;		/**< numbers were all handed out */
	uint64_t flow_seq;
	unsigned int nctx;
	unsigned int nqp, ncq, npd, nwq, nind, nflows;
	/** Published counters: engine-written (relaxed), any reader. */
	struct swv_port_counters cnt SWV_ALIGNED;
	/** Engine-private increments not yet published. */
	struct swv_port_counters acc SWV_ALIGNED;
	bool acc_dirty;
	/*
	 * progress=inline (progress.c): who does the device's work now. The
	 * line is written by the calls that try to own the device.
	 */
	uint32_t inl_own SWV_ALIGNED;	/**< 1: a call owns the device */
	uint32_t inl_want;		/**< work asked of the owner (count) */
	uint32_t inl_backlog;		/**< sends left posted: look again */
	uint32_t inl_live;		/**< on the inline engine (its wire) */
	bool inl_pull;			/**< the wire has frames to pull */
	struct swv_device *inl_peer;	/**< pair peer (RCU pointer) or NULL */
	struct swv_wheel *wheel;	/**< pacing.c: made with the first limit */
	/*
	 * The raw QPs a pass visits (pacing.c): dev->qps but the QPs that
	 * wait on the wheel, an array the device's worker (its engine's
	 * pass, or the inline call that holds it) keeps; built again from
	 * dev->qps when qps_gen, bumped by every change of the list or of a
	 * QP's state or limit, moves past run_gen.
	 */
	struct swv_qp **run;
	uint32_t nrun, run_cap, run_gen;
	bool run_stale;			/**< build again at the next pass */
	uint32_t qps_gen;		/**< atomic */
	/* QP counters (stat.c, swv_lock): zero is mode none, no counter. */
	struct swv_counter *counters;	/**< by ascending cntn */
	uint32_t cnt_mode;		/**< SWV_COUNTER_MODE_* */
	uint32_t cnt_mask;		/**< auto criteria */
};

/*
 * A number for a new QP or WQ of dev (swv_lock held, device.c): unique
 * among the device's live QPs and WQs together. Numbers are handed out in
 * order; once all 2^24 - SWV_NUM_FIRST have been, those a live QP or WQ
 * still holds are skipped. The caller puts its object on its list before
 * it lets go of swv_lock.
 */
uint32_t swv_num_next(struct swv_device *dev);

/** Note that dev->acc changed (engine thread). */
static inline void
swv_dev_dirty(struct swv_device *dev)
{
	struct swv_pending *p = dev->pend;

	if (SWV_UNLIKELY(!dev->acc_dirty)) {
		if (SWV_UNLIKELY(p->ndev == SWV_PENDING_MAX))
			swv_publish(p);
		dev->acc_dirty = true;
		p->dev[p->ndev++] = dev;
	}
}

/* device.c */
struct swv_device *swv_ctx_dev(struct ibv_context *ctx);
/**
 * Set dev->rx_max_frame from rx_mtu or the wire's MTU now (control path).
 */
void swv_dev_mtu_sync(struct swv_device *dev);
/**
 * The same from the engine's link check (an MTU set on the interface from
 * outside); skipped while the control path is at it, which syncs itself.
 */
void swv_dev_mtu_sync_try(struct swv_device *dev);
/** The port MTU (bytes above the Ethernet header). */
uint32_t swv_dev_mtu(struct swv_device *dev);
/* vport.c: the mlx5-vf profile's filter (engine or inline owner only). */
struct swv_vport;
/** Start reading dev's interface (dev->vport set). 0 or an errno. */
int swv_vport_open(struct swv_device *dev);
void swv_vport_close(struct swv_device *dev);
/** Read the interface's MAC, flags and address lists again. */
void swv_vport_refresh(struct swv_device *dev);
/** Whether the vport registered @dmac (dev->vport not NULL). */
bool swv_vport_takes(const struct swv_device *dev, const uint8_t *dmac);

/** active_mtu for a port MTU, as mlx5 derives it from its netdev's. */
enum ibv_mtu swv_active_mtu(uint32_t mtu);
/** Queue an async event on every context of dev (engine thread). */
void swv_device_event(struct swv_device *dev, enum ibv_event_type type);

/*
 * engine.c: the engine object (public handle: struct swv_engine in
 * swverbs.h). One thread at a time runs an engine's passes: its own thread,
 * or the caller of swv_engine_run_once() (in_pass says which holds it).
 */
struct swv_engine {
	/* posters' line: loaded by every post_send */
	uint32_t asleep SWV_ALIGNED;	/**< thread sleeps, wants a doorbell */
	int bell_fd;			/**< eventfd: doorbell while asleep */
	/* the pass's lines: written by whoever runs the engine */
	struct swv_pending pend SWV_ALIGNED;
	uint64_t passes;		/**< passes run (relaxed, any reader) */
	uint64_t work_passes;		/**< of which found work */
	uint64_t bell_wakes;		/**< deep sleeps the doorbell ended */
	uint64_t deep_sleeps;		/**< sleeps until a doorbell */
	uint64_t fd_wakes;		/**< deep sleeps a wire's fd ended */
	uint64_t pace_sleeps;		/**< sleeps until a paced departure */
	uint64_t pace_late_ns;		/**< late's estimate, published */
	struct swv_late late;		/**< how late its paced sleeps end */
	struct swv_late rq;		/**< its thread's run-queue waits */
	uint64_t rq_last;		/**< its schedstat run_delay, read */
	uint64_t rq_look;		/**< when, by a look between sleeps */
	/* control line */
	uint32_t in_pass SWV_ALIGNED;	/**< a thread drives the engine */
	uint32_t stop;			/**< the thread must end */
	bool running;			/**< the thread exists (swv_lock) */
	bool autothread;		/**< default: thread while it has devices */
	bool inl;			/**< the inline engine (progress.c) */
	int cpu;			/**< thread's CPU, -1: not pinned */
	pthread_t thread;
	unsigned int ndev;		/**< devices assigned (swv_lock) */
	struct cds_list_head devs;	/**< swv_device.eng_node (RCU) */
	/* its devices' rules and counters objects (swv_lock) */
	struct swv_pool pool;		/**< where they come from */
	struct swv_retire_list retire;	/**< waiting for a grace period */
};

/** Serve dev with eng (swv_lock held). */
int swv_engine_add(struct swv_engine *eng, struct swv_device *dev);
/** Stop serving dev; returns once its engine let go (swv_lock held). */
void swv_engine_del(struct swv_device *dev);
/** Wake the engine's thread if it sleeps (one eventfd write). */
void swv_engine_wake(struct swv_engine *eng);

/**
 * Ring the engine's doorbell after publishing work it must pick up (a send
 * queue head). Under load the engine never sleeps and this is one fence and
 * one load of a line that stays shared; only the first post after the engine
 * fell asleep (idle for over a millisecond) makes a system call. The fence
 * pairs with the one in engine_main(): either the engine sees the new head,
 * or this sees its flag. An engine without a thread never sleeps.
 */
static inline void
swv_doorbell(struct swv_engine *eng)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (SWV_UNLIKELY(__atomic_load_n(&eng->asleep, __ATOMIC_RELAXED) != 0))
		swv_engine_wake(eng);
}

/*
 * The RCU read side of a thread that drives devices from its own calls
 * (swv_engine_run_once(), inline calls): registered with liburcu-qsbr on
 * its first call (unregistered when it exits), online only inside a call.
 * A thread already online (it uses liburcu-qsbr itself) stays online.
 */
/** Register the calling thread, offline (progress.c). */
void swv_reader_register(void);

/** Go online for a call. Return: whether the call must go offline after. */
static inline bool
swv_reader_enter(void)
{
	if (SWV_UNLIKELY(!URCU_TLS(urcu_qsbr_reader).registered))
		swv_reader_register();
	if (rcu_read_ongoing())
		return false;
	rcu_thread_online();
	return true;
}

/** The end of a call: offline (a quiescent state) when enter went online. */
static inline void
swv_reader_leave(bool leave)
{
	if (leave)
		rcu_thread_offline();
}

/** Link state and speed, async events (engine.c; the device's runner). */
void swv_link_check(struct swv_device *dev, uint64_t now);

/*
 * progress.c: the inline model. A device on the inline engine has no
 * thread: the verbs calls on it do its work (see progress.c).
 */
/** Whether dev is served inline. */
static inline bool
swv_dev_inline(const struct swv_device *dev)
{
	return dev->eng->inl;
}
/** The device joins / leaves the inline engine (swv_lock held). */
void swv_inline_add(struct swv_device *dev, struct swv_device *peer);
void swv_inline_del(struct swv_device *dev);
/** Sends were posted on dev: drain them (ibv_post_send). */
void swv_inline_tx(struct swv_device *dev);
/** A CQ of dev is empty: pull from the wire, drain pending sends. */
void swv_inline_poll(struct swv_device *dev);
/** A link check of dev now (ibv_query_port). */
void swv_inline_link(struct swv_device *dev);
/** A link check of dev now, from the control path (swv_lock held). */
void swv_inline_link_sync(struct swv_device *dev);

/* tx.c, rx.c: the queues' device side */
/** Drain up to budget send WQEs of an RTS QP; flush an ERR QP (tx.c). */
unsigned int swv_qp_process(struct swv_qp *qp, unsigned int budget);
/** Flush an RQ in error with IBV_WC_WR_FLUSH_ERR (rx.c). */
unsigned int swv_rq_flush(struct swv_pending *p, struct swv_rq *rq);

/* pacing.c */
/*
 * The device's pacing range (packet_pacing_caps), kbit/s: a 100 Gbit/s
 * ConnectX-5's (ibv_devinfo -v: 1 to 100000000 kbit/s), on any wire: a
 * device constant, as mlx5 reports QoS caps, not the link's speed.
 */
#define SWV_PACE_RATE_MIN 1u
#define SWV_PACE_RATE_MAX 100000000u	/* 100 Gbit/s */

/**
 * A test hook (engine.c), NULL outside tests: the engine thread calls it
 * just before it sets asleep, for a deep sleep (paced false) or a sleep
 * until a paced departure (paced true).
 */
extern void (*swv_engine_sleep_hook)(struct swv_engine *eng, bool paced);
/**
 * A test hook (qp.c), NULL outside tests: swv_modify_qp() calls it with
 * swv_lock held, after it read the QP's state and before it moves it.
 */
extern void (*swv_modify_qp_hook)(struct ibv_qp *qp);
/**
 * Test hooks, NULL but in tests. pace_late: called by the engine thread
 * when a sleep until a paced departure due at @due, planned to end at
 * @wake (@late, the engine's estimate of its oversleep, before due), ended
 * by its timeout; it may sleep on, to stand for a host that wakes the
 * thread late. run_delay: the thread's run-queue wait so far (ns), in place
 * of its schedstat's, to stand for a CPU others want, or nobody does.
 */
extern void (*swv_engine_pace_late_hook)(struct swv_engine *eng,
					 uint64_t wake, uint64_t due,
					 uint64_t late);
extern uint64_t (*swv_engine_run_delay_hook)(struct swv_engine *eng);
/**
 * Check a limit for qp (rate 0: none; burst, typical 0: the defaults).
 * Return: 0 or EINVAL (also burst or typical on a device without burst
 * pacing).
 */
int swv_pace_check(const struct swv_qp *qp, uint32_t rate, uint32_t burst,
		   uint32_t typical);
/**
 * Set qp's checked limit (swv_lock held). Return: 0, ENOMEM or ENOSPC
 * (the mlx5 profile's rate table is full).
 */
int swv_pace_set(struct swv_qp *qp, uint32_t rate, uint32_t burst,
		 uint32_t typical);
/**
 * A QP reset or destroyed, out of the engine's passes (swv_lock held,
 * after a grace period): drop its limit, take it off the wheel.
 */
void swv_pace_reset(struct swv_qp *qp);
/**
 * A QP being destroyed, off dev->qps, before the grace period: off the
 * wheel, and it waits on it no more (a pass after the grace period finds
 * it neither on dev->qps nor on the wheel).
 */
void swv_pace_unpark(struct swv_qp *qp);
/** Free a device's wheel (the device is off its engine). */
void swv_pace_fini(struct swv_device *dev);
/*
 * Engine side. swv_pace_visit(): a paced QP whose limit changed, at the
 * drain: apply the change; return whether the QP may be drained now
 * (false: it waits on the wheel). swv_pace_gate(): how many of n
 * gathered frames conform now, in order (the others stay posted, the QP
 * waits on the wheel). swv_pace_refund(): n frames the gate let go that
 * the wire did not take. swv_pace_advance(): release the QPs due (a pass
 * over a device with a wheel, first). swv_pace_next(): the earliest
 * departure on the device's wheel in ns, UINT64_MAX: none waits.
 */
bool swv_pace_visit(struct swv_qp *qp);
/*
 * The QPs a pass visits (struct swv_device's run). swv_qps_changed(): the
 * list, a QP's state or its limit changed (any thread). swv_run_sync():
 * at the start of a pass, before the wheel's advance; false: no array
 * (out of memory), walk dev->qps. swv_run_keep(): after a visit of
 * dev->run[i]; false: the QP went to wait on the wheel and left the
 * array (run[i] is another QP now), the wheel's advance puts it back.
 */
static inline void
swv_qps_changed(struct swv_device *dev)
{
	__atomic_fetch_add(&dev->qps_gen, 1, __ATOMIC_RELEASE);
}

bool swv_run_sync(struct swv_device *dev);

static inline bool
swv_run_keep(struct swv_device *dev, uint32_t i)
{
	struct swv_qp *qp = dev->run[i];

	if (SWV_LIKELY(!qp->pace_parked) ||
	    SWV_LOAD(&qp->state) != IBV_QPS_RTS)
		return true;
	qp->in_run = false;
	dev->run[i] = dev->run[--dev->nrun];
	return false;
}

unsigned int swv_pace_gate(struct swv_qp *qp, const struct swv_frame *fr,
			   unsigned int n);
void swv_pace_refund(struct swv_qp *qp, const struct swv_frame *fr,
		     unsigned int n);
void swv_pace_advance(struct swv_device *dev);
uint64_t swv_pace_next(struct swv_device *dev);
/* swv_pace_next(), and *latest: the earliest full bucket of a waiting QP. */
uint64_t swv_pace_window(struct swv_device *dev, uint64_t *latest);
/*
 * When a parked QP's bucket is full (ns): a visit later loses rate. Under
 * the wheel lock, or with the engine out (its bucket does not move while
 * it waits).
 */
uint64_t swv_pace_full_at(const struct swv_qp *qp);

/* Add n to one of a QP's own counts (engine; read by stat.c, relaxed). */
static inline void
swv_qp_count(uint64_t *count, uint64_t n)
{
	SWV_STORE(count, *count + n);
}

/* stat.c (swv_lock held) */
/** Note a new QP's creator (its pid and comm). */
void swv_stat_qp_created(struct swv_qp *qp);
/** A QP moved RESET -> INIT with a port: in auto mode, bind it if unbound. */
void swv_stat_qp_init(struct swv_qp *qp);
/** Unbind a QP that goes (any mode), freeing its counter if last. */
void swv_stat_qp_destroyed(struct swv_qp *qp);
/**
 * Count a refused SGE on the live MR its lkey names, if any (engine,
 * error path: out of the MR, or no local write).
 */
void swv_mr_access_error(const struct ibv_sge *sge);

/* qp.c */
int swv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		  struct ibv_send_wr **bad_wr);
int swv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		  struct ibv_recv_wr **bad_wr);

/* cq.c */
int swv_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
/**
 * Drop the CQEs of queue number num from cq (recv_only: its receive
 * CQEs), as mlx5's provider cleans CQs: a QP's receive and send CQs of all
 * its CQEs when it goes to RESET, a WQ's CQ of its receives when it goes
 * from RESET to RDY. What a queue completed or flushed and nobody polled
 * does not come back after the restart. The queue is out of the engine (no
 * CQE of it can come); other queues' CQEs may come meanwhile, and only the
 * published ones are looked at: those kept stay in order, moved up over
 * the freed slots, and the tail advances past them. The caller is the CQ's
 * one reader (no poll beside it). QPs and WQs share one number space
 * (swv_num_next()), so no other queue's CQE is dropped. Return: the CQEs
 * dropped.
 */
unsigned int swv_cq_clean(struct swv_cq *cq, uint32_t num, bool recv_only);
/* channel.c */
/** Raise the armed CQ's event if the CQEs [from, head) qualify. */
void swv_cq_notify(struct swv_cq *cq, uint32_t from);
/** A CQ with a channel is created (0 or ENOMEM) / destroyed. */
int swv_cq_channel_attach(struct swv_cq *cq,
			  struct ibv_comp_channel *channel);
/** Return: 0, or EBUSY (events read and not acknowledged). */
int swv_cq_channel_detach(struct swv_cq *cq);

#endif /* SWV_PRIV_H */
