/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef VBR_RXTX_H
#define VBR_RXTX_H

#include <stdint.h>

#include <infiniband/verbs.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

struct vbr_priv;
struct vbr_mtr_rt;

/*
 * The Rx action table. A rule with MARK, FLAG or METER carries a verbs TAG
 * (IBV_FLOW_SPEC_ACTION_TAG): an index into its port's table, 0 is "no
 * rule tag". An entry is one 64-bit word the Rx burst reads with one atomic
 * load: the mark id in bits 0-31, what the rule does in the flag bits, the
 * meter's slot above VBR_RX_ACT_MTR_SHIFT. The table grows by pages that
 * stay until the port closes, so a reader never meets freed memory; an
 * entry is set before its first rule is on the device, shared by the rules
 * that say the same (vbr_steer.c), and kept when its last rule goes, so a
 * frame still in a queue meets what its rule said; only a tag idle longer
 * than any other is given new words, once the table has many idle tags.
 */
/** The rule marks: RTE_MBUF_F_RX_FDIR_ID with the id in bits 0-31. */
#define VBR_RX_ACT_MARK (UINT64_C(1) << 32)
/** The rule flags: RTE_MBUF_F_RX_FDIR. */
#define VBR_RX_ACT_FLAG (UINT64_C(1) << 33)
/** The rule meters: the meter's slot above VBR_RX_ACT_MTR_SHIFT. */
#define VBR_RX_ACT_METER (UINT64_C(1) << 34)
/**
 * The rule's fragment condition is kept here, not on the device (which
 * cannot match fragments): a frame is marked or flagged only when it meets
 * the condition byte at VBR_RX_ACT_FRAG_SHIFT (VBR_RX_FRAG_*), else it is
 * delivered as if no rule had taken it (vbr_flow.c, "fragments in
 * software"). Marks have 24 bits: the byte sits above them.
 */
#define VBR_RX_ACT_FRAG (UINT64_C(1) << 35)
/** Where the fragment condition byte starts in an entry. */
#define VBR_RX_ACT_FRAG_SHIFT 24
/** The mark id of an entry. */
#define VBR_RX_ACT_ID_MASK 0xffffffu
/*
 * The condition byte. IPv4: the frame's DF, MF and "offset not 0" bits
 * (VBR_RX_FRAG_DF, _MF, _OFF) under the mask in bits 0-2 equal the value
 * in bits 3-5. VBR_RX_FRAG_V6: the IPv6 frame has no fragment header in
 * its extension header chain.
 */
#define VBR_RX_FRAG_DF 0x1
#define VBR_RX_FRAG_MF 0x2
#define VBR_RX_FRAG_OFF 0x4
#define VBR_RX_FRAG_VAL_SHIFT 3
#define VBR_RX_FRAG_V4 0x40
#define VBR_RX_FRAG_V6 0x80
/** Where the meter's slot starts in an entry. */
#define VBR_RX_ACT_MTR_SHIFT 40
/** Largest tag: a ConnectX flow tag has 24 bits. */
#define VBR_RX_TAG_MAX 0xffffffu
/** Entries of a page of the table (a power of 2). */
#define VBR_RX_ACT_PAGE 4096u
/** Pages of the table. */
#define VBR_RX_ACT_PAGES ((VBR_RX_TAG_MAX + 1) / VBR_RX_ACT_PAGE)

/** A port's Rx action table, with the meters its entries name. */
struct vbr_rx_act_table {
	uint64_t *page[VBR_RX_ACT_PAGES];	/**< NULL: none yet */
	struct vbr_mtr_rt **mtr;	/**< meters by slot (vbr_mtr.c) */
	/** Per Rx queue: frames other queues hand to it (MP/SC), or NULL. */
	struct rte_ring *handoff[RTE_MAX_QUEUES_PER_PORT];
};

/** Entries of the per-queue cache of recent MR lookups. */
#define VBR_MR_CACHE_SIZE 4
/** Fresh mbufs an Rx queue keeps at hand, allocated in one bulk call. */
#define VBR_RX_STASH 64
/** A Tx WQE asks for a completion at least once every this many WQEs. */
#define VBR_TX_SIGNAL_INTERVAL 32
/** Most segments a multi-segment Tx packet may have (and nb_seg_max). */
#define VBR_TX_MAX_SEGS 32

/** One registered range, as published to the datapath. */
struct vbr_mr_range {
	uintptr_t start;	/**< first byte */
	uintptr_t end;		/**< one past the last byte */
	uint32_t lkey;		/**< lkey of the MR that covers it */
};

/** Sorted, immutable table of registered ranges (copy on write). */
struct vbr_mr_table {
	uint32_t n;			/**< number of ranges */
	struct vbr_mr_range r[];	/**< ranges sorted by start */
};

/** Per-queue cache of the last MR lookups. */
struct vbr_mr_cache {
	uint64_t gen;			/**< priv->mr_gen it was filled under */
	unsigned int next;		/**< next entry to replace */
	struct vbr_mr_range e[VBR_MR_CACHE_SIZE]; /**< cached ranges */
};

/** Receive queue: a WQ and its extended CQ. */
struct vbr_rxq {
	struct vbr_priv *priv;		/**< port private data */
	struct ibv_wq *wq;		/**< receive work queue */
	struct ibv_cq_ex *cq;		/**< completion queue */
	struct rte_mempool *mp;		/**< buffers */
	struct rte_mbuf **elts;		/**< desc * segs buffers, by slot */
	/** The glue's poll_cq_burst and post_wq_recv_burst. */
	unsigned int (*poll)(struct ibv_cq_ex *cq, unsigned int n,
			     uint64_t *wr_id, uint32_t *byte_len,
			     uint8_t *status, uint32_t *flow_tag);
	unsigned int (*post_recv)(struct ibv_wq *wq, unsigned int n,
				  const uint64_t *wr_id,
				  const struct ibv_sge *sge);
	struct ibv_recv_wr *wrs;	/**< one prepared WR per slot */
	struct ibv_sge *sges;		/**< desc * segs SGEs */
	uint16_t desc;			/**< number of slots (WQEs) */
	uint16_t segs;			/**< buffers per slot */
	uint16_t port_id;		/**< ethdev port */
	uint16_t queue_id;		/**< queue index */
	unsigned int socket;		/**< NUMA socket of the setup */
	uint64_t offloads;		/**< offloads of the setup */
	struct vbr_mr_cache mr_cache;	/**< recent lkey lookups */
	uint32_t room;			/**< data room of one fresh buffer */
	uint32_t buf_off;		/**< mbuf to its data; 0: buf_addr */
	uint64_t mbuf_init;		/**< rearm_data of a received mbuf */
	uint16_t nstash;		/**< mbufs in stash */
	struct rte_mbuf *stash[VBR_RX_STASH]; /**< fresh, for refills */
	/*
	 * Counters, only ever added to by the queue's lcore; a stats reset
	 * takes them into base (vbr_stats.c), so that it cannot be lost
	 * under an add in flight.
	 */
	uint64_t ipackets;		/**< packets received */
	uint64_t ibytes;		/**< bytes received */
	uint64_t ierrors;		/**< error completions */
	uint64_t rx_nombuf;		/**< replenish failures */
	/* Offloads (vbr_rxq.c); ol 0: the burst polls none of this. */
	uint8_t ol;			/**< ol_cvlan or ol_ts */
	/** IPV4/UDP/TCP_CKSUM: checked in software (vbr_rx_csum_burst()) */
	uint8_t ol_csum;
	uint8_t ol_cvlan;		/**< its CQ gives the stripped VLAN */
	uint8_t ol_ts;			/**< TIMESTAMP */
	int ts_off;			/**< timestamp dynamic field */
	uint64_t ts_flag;		/**< its ol_flags bit */
	uint32_t ts_khz;		/**< device clock (hca_core_clock) */
	/** The glue's poll_cq_burst_ol. */
	unsigned int (*poll_ol)(struct ibv_cq_ex *cq, unsigned int n,
				uint64_t *wr_id, uint32_t *byte_len,
				uint8_t *status, uint32_t *flow_tag,
				uint8_t *wc_flags, uint16_t *cvlan,
				uint64_t *ts);
	/* Queue operations and Rx interrupts (vbr_rxq.c, vbr_intr.c). */
	struct ibv_comp_channel *channel; /**< intr_conf.rxq, or NULL */
	unsigned int stopped:1;		/**< WQ in RESET, no buffers posted */
	unsigned int deferred:1;	/**< rx_deferred_start */
	/* The counters at the last stats reset (vbr_stats.c). */
	struct {
		uint64_t ipackets, ibytes, ierrors, rx_nombuf;
	} base;
};

/**
 * Transmit queue: a RAW_PACKET QP and its CQ. Ring slots [tail, head) hold
 * the WQEs posted and not yet completed, by free-running index & mask.
 */
struct vbr_txq {
	struct vbr_priv *priv;		/**< port private data */
	struct ibv_qp *qp;		/**< send queue */
	struct ibv_cq_ex *cq;		/**< completion queue */
	struct rte_mbuf **elts;		/**< mbufs in flight, by index & mask */
	/** The glue's post_send_burst. */
	unsigned int (*post_send)(struct ibv_qp *qp, unsigned int n,
				  const uint64_t *wr_id,
				  const struct ibv_sge *sge,
				  const uint8_t *signaled);
	struct ibv_send_wr *wrs;	/**< one WR per ring slot */
	struct ibv_sge *sges;		/**< (mask + 1) * max_sge SGEs */
	uint32_t head;			/**< next ring index to fill (free run) */
	uint32_t tail;			/**< oldest index not completed */
	uint32_t mask;			/**< ring slots (power of 2) - 1 */
	uint16_t desc;			/**< WQEs in flight at most */
	uint16_t max_sge;		/**< segments per packet */
	uint32_t max_frame;		/**< largest frame the device sends */
	uint16_t signal_interval;	/**< signal at least every so many */
	uint16_t since_signal;		/**< WQEs posted since last signal */
	uint8_t fast_free;		/**< MBUF_FAST_FREE: refcnt 1, direct */
	uint16_t port_id;		/**< ethdev port */
	uint16_t queue_id;		/**< queue index */
	struct vbr_mr_cache mr_cache;	/**< recent lkey lookups */
	/* Counters of the queue's lcore, reset into base (as the Rx's). */
	uint64_t opackets;		/**< packets posted */
	uint64_t obytes;		/**< bytes posted */
	uint64_t oerrors;		/**< dropped or failed packets */
	uint64_t bad_frames;		/**< refused before posting */
	uint64_t wqe_errors;		/**< WQEs the device failed */
	uint64_t recoveries;		/**< ERR -> RESET -> ... -> RTS */
	uint64_t pace_base_bytes;	/**< the pacer's counts at the last */
	uint64_t pace_base_full_ns;	/**< stats reset (vbr_stats.c) */
	uint64_t recoveries_deferred;	/**< bursts that left it in ERR */
	uint64_t stale_completions;	/**< CQEs of no WQE in flight */
	/* The counters above at the last stats reset (vbr_stats.c). */
	struct {
		uint64_t opackets, obytes, oerrors, bad_frames, wqe_errors;
		uint64_t recoveries, recoveries_deferred, stale_completions;
	} base;
	/* Send queue in error: set by vbr_txq_complete(), slow path. */
	unsigned int err_pending:1;	/**< an error CQE was polled */
	enum ibv_wc_status err_status;	/**< its status */
	uint32_t err_wr_id;		/**< its WQE (ring index) */
	uint64_t log_tsc;		/**< last recovery message */
	uint32_t log_quiet;		/**< recoveries not logged since */
	/* Recovery backoff and a removed device (vbr_txq_recover()). */
	unsigned int recover_wait:1;	/**< a recovery waits: post none */
	unsigned int gone:1;		/**< device removed: send none */
	uint32_t recover_unposted;	/**< its unposted (recover_wait) */
	uint64_t recover_tsc;		/**< the last recovery */
	uint64_t recover_at;		/**< none before (timer cycles) */
	uint64_t recover_backoff;	/**< current wait (timer cycles) */
	uint8_t csum;			/**< IPV4/UDP/TCP_CKSUM offloads */
	/* Queue operations (vbr_txq.c). */
	unsigned int deferred:1;	/**< tx_deferred_start */
	uint8_t stopped;		/**< not started: the burst sends none */
	uint64_t offloads;		/**< offloads of the setup */
};

/** Tx mbuf flags that ask for IBV_SEND_IP_CSUM. */
#define VBR_TX_OL_CSUM (RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_L4_MASK)

/**
 * A queue counter since the last stats reset: what it holds less its base,
 * 0 if a frame counted before the reset was taken off since (a Tx error).
 */
static inline uint64_t
vbr_qcount(const uint64_t *cnt, const uint64_t *base)
{
	uint64_t c = __atomic_load_n(cnt, __ATOMIC_RELAXED);
	uint64_t b = __atomic_load_n(base, __ATOMIC_RELAXED);

	return c > b ? c - b : 0;
}

/** A device timestamp of the clock of khz kHz in nanoseconds. */
static inline uint64_t
vbr_ticks_to_ns(uint64_t ticks, uint32_t khz)
{
	if (likely(khz == 1000000) || khz == 0)
		return ticks;
	return ticks / khz * 1000000 + ticks % khz * 1000000 / khz;
}

/** The word of the entry of tag (the tag was made: its page exists). */
static inline uint64_t
vbr_rx_act_word(const struct vbr_rx_act_table *t, uint32_t tag)
{
	return __atomic_load_n(&t->page[tag / VBR_RX_ACT_PAGE]
			       [tag % VBR_RX_ACT_PAGE], __ATOMIC_ACQUIRE);
}

uint16_t vbr_rx_burst(void *rxq, struct rte_mbuf **pkts, uint16_t nb_pkts);
uint16_t vbr_tx_burst(void *txq, struct rte_mbuf **pkts, uint16_t nb_pkts);
uint16_t vbr_tx_prepare(void *txq, struct rte_mbuf **pkts, uint16_t nb_pkts);
/* vbr_mr.c: the lkey of a range, cache then table (the datapath inlines
 * the cache probe). 0 or -1.
 */
int vbr_mr_find(struct vbr_priv *priv, struct vbr_mr_cache *cache,
		uintptr_t addr, uint32_t len, uint32_t *lkey);
void vbr_txq_complete(struct vbr_txq *txq);
/* vbr_txq.c: the slow path of a send queue in error. */
void vbr_txq_recover(struct vbr_txq *txq, uint32_t unposted);
void vbr_txq_lose(struct vbr_txq *txq);
/** Whether the queue can post now (no recovery waits, device there). */
static inline bool
vbr_txq_can_post(const struct vbr_txq *txq)
{
	return !txq->err_pending && !txq->recover_wait && !txq->gone;
}

/*
 * Give back a batch of sent mbufs. With MBUF_FAST_FREE the application
 * promised direct mbufs with refcnt 1, so a one-segment mbuf goes straight
 * back to its pool: nothing in its second cache line (next) is read, as a
 * one-segment mbuf's next is NULL. Chains and other pools take the full path.
 */
static inline void
vbr_txq_free_batch(const struct vbr_txq *txq, struct rte_mbuf **batch,
		   unsigned int nb)
{
	struct rte_mempool *mp;
	unsigned int i, first;

	if (!txq->fast_free) {
		rte_pktmbuf_free_bulk(batch, nb);
		return;
	}
	first = 0;
	mp = batch[0]->pool;
	for (i = 0; i < nb; i++) {
		struct rte_mbuf *m = batch[i];

		if (likely(m->nb_segs == 1 && m->pool == mp))
			continue;
		if (i > first)
			rte_mempool_put_bulk(mp, (void **)&batch[first],
					     i - first);
		first = i + 1;
		mp = i + 1 < nb ? batch[i + 1]->pool : NULL;
		rte_pktmbuf_free(m);
	}
	if (nb > first)
		rte_mempool_put_bulk(mp, (void **)&batch[first], nb - first);
}

/** Free the mbufs of every WQE up to and including ring index last. */
static inline void
vbr_txq_free_upto(struct vbr_txq *txq, uint32_t last)
{
	struct rte_mbuf *batch[VBR_TX_SIGNAL_INTERVAL * 2];
	uint32_t mask = txq->mask;
	unsigned int nb = 0;

	while (txq->tail != last + 1 && txq->tail != txq->head) {
		uint32_t idx = txq->tail & mask;
		struct rte_mbuf *m = txq->elts[idx];

		if (m != NULL) {
			batch[nb++] = m;
			txq->elts[idx] = NULL;
			if (nb == RTE_DIM(batch)) {
				vbr_txq_free_batch(txq, batch, nb);
				nb = 0;
			}
		}
		txq->tail++;
	}
	if (nb > 0)
		vbr_txq_free_batch(txq, batch, nb);
}

#endif /* VBR_RXTX_H */
