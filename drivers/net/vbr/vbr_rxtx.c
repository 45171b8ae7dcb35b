/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Datapath: Rx and Tx bursts. No lock, no system call, no logging: the verbs
 * calls here are the verbs.h inline functions, which reach the provider
 * through the objects' own function pointers.
 */

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rte_branch_prediction.h>
#include <rte_errno.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_mempool.h>
#include <rte_net.h>
#include <rte_prefetch.h>

#include "vbr.h"
#include "vbr_flow.h"
#include "vbr_mtr.h"
#include "vbr_rxtx.h"

/*
 * The lkey covering [addr, addr + len): the queue's cache of recent ranges
 * here, inline (a mempool is one or a few ranges, so this hits), the table
 * in vbr_mr_find() on a miss.
 */
static __rte_always_inline int
vbr_mr_lookup(struct vbr_priv *priv, struct vbr_mr_cache *cache,
	      uintptr_t addr, uint32_t len, uint32_t *lkey)
{
	uintptr_t end = addr + len;
	unsigned int i;

	if (likely(cache->gen ==
		   __atomic_load_n(&priv->mr_gen, __ATOMIC_ACQUIRE))) {
		for (i = 0; i < VBR_MR_CACHE_SIZE; i++) {
			if (addr >= cache->e[i].start &&
			    end <= cache->e[i].end) {
				*lkey = cache->e[i].lkey;
				return 0;
			}
		}
	}
	return vbr_mr_find(priv, cache, addr, len, lkey);
}

/*
 * Where a posted buffer's data starts: the headroom past buf_addr. Buffers
 * taken from the stash are not reset (see vbr_rxq_take()), so their data_off
 * says nothing yet; vbr_rx_rearm() sets it when the frame is handed out.
 */
static inline uintptr_t
vbr_rx_buf_addr(const struct rte_mbuf *m)
{
	return (uintptr_t)m->buf_addr + RTE_PKTMBUF_HEADROOM;
}

/*
 * The same without reading the mbuf: a pool of the mbufs' own buffers has
 * each buffer right behind its mbuf and private area (rte_pktmbuf_init(),
 * and what detaching an external buffer restores), so a fresh mbuf's line
 * stays where it is until its frame is handed out. Pools of pinned
 * external buffers: buf_off 0, buf_addr read.
 */
static inline uintptr_t
vbr_rxq_buf_addr(const struct vbr_rxq *rxq, const struct rte_mbuf *m)
{
	if (likely(rxq->buf_off != 0))
		return (uintptr_t)m + rxq->buf_off;
	return vbr_rx_buf_addr(m);
}

/* A 64-bit store that may alias the mbuf fields it covers. */
typedef uint64_t __attribute__((__may_alias__)) vbr_rearm_word;

/*
 * Make a received buffer a fresh one-segment mbuf of the port: data_off,
 * refcnt, nb_segs and port in one store, as set up in rxq->mbuf_init, and
 * no flags. The fields that only flags make valid (vlan_tci, hash, ...)
 * keep what the mbuf's last user left, as DPDK's vector PMDs leave them;
 * so does tx_offload, in the second cache line, which a sender sets.
 */
static inline void
vbr_rx_rearm(const struct vbr_rxq *rxq, struct rte_mbuf *m)
{
	uintptr_t word = (uintptr_t)&m->rearm_data;

	*(vbr_rearm_word *)word = rxq->mbuf_init;
	m->ol_flags = 0;
	m->packet_type = 0;
}

/* Point the slot's SGEs at its buffers. */
static inline int
vbr_rxq_fill_slot(struct vbr_rxq *rxq, uint32_t slot)
{
	struct rte_mbuf **bufs = &rxq->elts[slot * rxq->segs];
	struct ibv_sge *sge = &rxq->sges[slot * rxq->segs];
	uint16_t i;

	for (i = 0; i < rxq->segs; i++) {
		sge[i].addr = vbr_rx_buf_addr(bufs[i]);
		sge[i].length = rxq->room;
		if (unlikely(vbr_mr_lookup(rxq->priv, &rxq->mr_cache,
					   sge[i].addr, sge[i].length,
					   &sge[i].lkey) != 0))
			return -1;
	}
	return 0;
}

/*
 * Take n fresh mbufs from the queue's stash, refilling it with one bulk get
 * when it runs short. 0 or -1 (pool empty). The mbufs come straight from the
 * mempool, not reset: a pool's mbufs have next NULL, nb_segs 1 and refcnt 1
 * already (the free path guarantees it); vbr_rx_rearm() writes the rest of
 * what the application reads, once, when a frame is handed out.
 */
static inline int
vbr_rxq_take(struct vbr_rxq *rxq, struct rte_mbuf **out, uint16_t n)
{
	uint16_t i;

	if (unlikely(rxq->nstash < n)) {
		uint16_t want = VBR_RX_STASH - rxq->nstash;

		if (rte_mempool_get_bulk(rxq->mp,
					 (void **)&rxq->stash[rxq->nstash],
					 want) == 0) {
			rxq->nstash += want;
		} else {
			want = n - rxq->nstash;
			if (rte_mempool_get_bulk(rxq->mp,
						 (void **)&rxq->stash[
							rxq->nstash],
						 want) != 0)
				return -1;
			rxq->nstash += want;
		}
	}
	for (i = 0; i < n; i++)
		out[i] = rxq->stash[--rxq->nstash];
	return 0;
}

/*
 * Hand out the frame of len bytes in one-buffer slot @slot and put @fresh
 * in its place. 0, or -2: handed out, but fresh has no lkey (an
 * unregistered mempool: cannot happen after setup), so the slot cannot be
 * reposted.
 */
static inline int
vbr_rx_swap(struct vbr_rxq *rxq, uint32_t slot, uint32_t len,
	    struct rte_mbuf *fresh, struct rte_mbuf **out)
{
	struct ibv_sge *sge = &rxq->sges[slot];
	struct rte_mbuf *m = rxq->elts[slot];

	vbr_rx_rearm(rxq, m);
	m->pkt_len = len;
	m->data_len = (uint16_t)len;
	*out = m;
	rxq->elts[slot] = fresh;
	sge->addr = vbr_rxq_buf_addr(rxq, fresh);
	sge->length = rxq->room;
	if (unlikely(vbr_mr_lookup(rxq->priv, &rxq->mr_cache, sge->addr,
				   sge->length, &sge->lkey) != 0)) {
		rxq->ierrors++;
		return -2;
	}
	return 0;
}

/* One frame of one buffer, its fresh buffer taken alone. */
static inline int
vbr_rx_one(struct vbr_rxq *rxq, uint32_t slot, uint32_t len,
	   struct rte_mbuf **out)
{
	struct rte_mbuf *fresh;

	if (unlikely(len > rxq->room)) {
		rxq->ierrors++;
		return -1;
	}
	if (unlikely(vbr_rxq_take(rxq, &fresh, 1) != 0)) {
		rxq->rx_nombuf++;
		return -1;
	}
	return vbr_rx_swap(rxq, slot, len, fresh, out);
}

/* A frame over one or more buffers, handed out as a chain. */
static inline int
vbr_rx_chain(struct vbr_rxq *rxq, uint32_t slot, uint32_t len,
	     struct rte_mbuf **out)
{
	struct rte_mbuf **bufs = &rxq->elts[slot * rxq->segs];
	struct rte_mbuf *fresh[rxq->segs];
	struct rte_mbuf *m, *prev;
	uint32_t left;
	uint16_t used, i;

	/* Buffers the frame occupies. */
	left = len;
	used = 0;
	do {
		left -= RTE_MIN(left, rxq->room);
		used++;
	} while (left > 0 && used < rxq->segs);
	if (unlikely(left > 0)) {
		rxq->ierrors++;
		return -1;
	}
	if (unlikely(vbr_rxq_take(rxq, fresh, used) != 0)) {
		rxq->rx_nombuf++;
		return -1;
	}
	/* Hand out the used buffers as a chain; keep the rest. */
	m = bufs[0];
	left = len;
	prev = NULL;
	for (i = 0; i < used; i++) {
		struct rte_mbuf *seg = bufs[i];

		vbr_rx_rearm(rxq, seg);
		seg->data_len = RTE_MIN(left, rxq->room);
		left -= seg->data_len;
		if (prev != NULL)
			prev->next = seg;
		prev = seg;
		bufs[i] = fresh[i];
	}
	prev->next = NULL;
	m->pkt_len = len;
	m->nb_segs = used;
	*out = m;
	if (unlikely(vbr_rxq_fill_slot(rxq, slot) != 0)) {
		/* Unregistered mempool: cannot happen after setup. */
		rxq->ierrors++;
		return -2;
	}
	return 0;
}

/** Completions the Rx burst reads before it builds their mbufs. */
#define VBR_RX_CHUNK 32

/* The Rx action table entry of a tag (vbr_rxtx.h), 0: none. */
static inline uint64_t
vbr_rx_act_entry(const struct vbr_rx_act_table *t, uint32_t tag)
{
	const uint64_t *page;

	if (unlikely(tag > VBR_RX_TAG_MAX))
		return 0;
	page = __atomic_load_n(&t->page[tag / VBR_RX_ACT_PAGE],
			       __ATOMIC_ACQUIRE);
	if (page == NULL)
		return 0;
	return __atomic_load_n(&page[tag % VBR_RX_ACT_PAGE],
			       __ATOMIC_ACQUIRE);
}

static inline void
vbr_rx_mark(struct rte_mbuf *m, unsigned int how, uint32_t id)
{
	if (how == 2) {
		m->ol_flags |= RTE_MBUF_F_RX_FDIR;
		return;
	}
	m->ol_flags |= RTE_MBUF_F_RX_FDIR | RTE_MBUF_F_RX_FDIR_ID;
	m->hash.fdir.hi = id;
}

/** IPv6 extension headers the condition walks past (and OVS does). */
#define VBR_RX_V6_EXT_MAX 8

/*
 * Whether frame m meets the fragment condition cond of its rule's entry
 * (VBR_RX_FRAG_* of vbr_rxtx.h), read from its outer headers: Ethernet, up
 * to two VLAN tags left in the frame, IPv4 or IPv6. IPv6: the chain of
 * hop-by-hop, routing, destination options and AH headers is walked for a
 * fragment header. A frame whose headers cannot be read in its first
 * segment does not meet it: unmarked, software classifies it.
 */
static bool
vbr_rx_frag_ok(const struct rte_mbuf *m, unsigned int cond)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m), off = 12;
	unsigned int i, bits;
	uint16_t type;
	size_t hl;
	uint8_t nh;
	int next;

	if (unlikely(len < 14))
		return false;
	type = (uint16_t)(p[12] << 8 | p[13]);
	for (i = 0; i < 2 && (type == RTE_ETHER_TYPE_VLAN ||
			      type == RTE_ETHER_TYPE_QINQ); i++) {
		off += 4;
		if (unlikely(len < off + 2))
			return false;
		type = (uint16_t)(p[off] << 8 | p[off + 1]);
	}
	off += 2;
	if (cond & VBR_RX_FRAG_V4) {
		if (type != RTE_ETHER_TYPE_IPV4 || len < off + 20 ||
		    (p[off] >> 4) != 4)
			return false;
		bits = (p[off + 6] & 0x40 ? VBR_RX_FRAG_DF : 0) |
		       (p[off + 6] & 0x20 ? VBR_RX_FRAG_MF : 0) |
		       ((p[off + 6] & 0x1f) | p[off + 7] ? VBR_RX_FRAG_OFF : 0);
		return (bits & cond & 0x7) ==
		       ((cond >> VBR_RX_FRAG_VAL_SHIFT) & 0x7);
	}
	if (type != RTE_ETHER_TYPE_IPV6 || len < off + 40 ||
	    (p[off] >> 4) != 6)
		return false;
	nh = p[off + 6];
	off += 40;
	for (i = 0; i < VBR_RX_V6_EXT_MAX; i++) {
		if (nh == IPPROTO_FRAGMENT)
			return false;
		if (nh != IPPROTO_HOPOPTS && nh != IPPROTO_ROUTING &&
		    nh != IPPROTO_DSTOPTS && nh != IPPROTO_AH)
			return true;
		if (len < off + 2)
			return false;
		/* DPDK's step over one extension header (AH's unit too) */
		next = rte_ipv6_get_next_ext(p + off, nh, &hl);
		if (next < 0)
			return false;
		nh = (uint8_t)next;
		off += (uint32_t)hl;
	}
	return false;
}

/*
 * A metered frame of colour c (len bytes), counted in the meter's slot,
 * and its policy's action for it. Return true when the frame stays in
 * this burst.
 */
static bool
vbr_rx_police(struct vbr_rxq *rxq, const struct vbr_rx_act_table *t,
	      struct vbr_mtr_rt *rt, unsigned int slot, struct rte_mbuf *m,
	      enum rte_color c, uint32_t len)
{
	const struct vbr_mtr_pact *a = &rt->act[c];
	struct rte_ring *r;

	if (a->fate == VBR_MTR_FATE_DROP)
		goto drop;
	if (a->mark != 0)
		vbr_rx_mark(m, a->mark, a->mark_id);
	if (a->fate == VBR_MTR_FATE_PASS || a->queue == rxq->queue_id) {
		vbr_mtr_count(rt, slot, c, len, false);
		return true;
	}
	/* A queue gone since (fewer Rx queues configured): nobody polls it. */
	r = likely(a->queue < rxq->priv->dev->data->nb_rx_queues) ?
	    __atomic_load_n(&t->handoff[a->queue], __ATOMIC_ACQUIRE) : NULL;
	if (likely(r != NULL) && rte_ring_mp_enqueue(r, m) == 0) {
		vbr_mtr_count(rt, slot, c, len, false);
		return false;
	}
drop:
	/*
	 * Dropped by the policy, or its queue's hand-off ring is full or
	 * gone: counted as dropped only.
	 */
	vbr_mtr_count(rt, slot, c, len, true);
	rte_pktmbuf_free(m);
	return false;
}

/*
 * Whether the n frames of a run, colours col[0, n), are all of one colour
 * whose policy action keeps them in this burst unmarked (its own fate, or
 * this queue): then vbr_rx_police() would only count each.
 */
static inline bool
vbr_rx_run_kept(const struct vbr_rxq *rxq, const struct vbr_mtr_rt *rt,
		const uint8_t *col, unsigned int n)
{
	const struct vbr_mtr_pact *a = &rt->act[col[0]];
	unsigned int q;

	if (a->mark != 0 || a->fate == VBR_MTR_FATE_DROP ||
	    (a->fate != VBR_MTR_FATE_PASS && a->queue != rxq->queue_id))
		return false;
	for (q = 1; q < n; q++)
		if (col[q] != col[0])
			return false;
	return true;
}

/*
 * Frames other queues' meter policies sent to this queue, first: they
 * waited already. Return how many went to pkts; their bytes to *bytes.
 */
static uint16_t
vbr_rx_handed(struct vbr_rxq *rxq, struct rte_mbuf **pkts, uint16_t nb_pkts,
	      uint64_t *bytes)
{
	const struct vbr_rx_act_table *t =
		__atomic_load_n(&rxq->priv->rx_act, __ATOMIC_ACQUIRE);
	struct rte_ring *r;
	unsigned int i, n;

	if (t == NULL)
		return 0;
	r = __atomic_load_n(&t->handoff[rxq->queue_id], __ATOMIC_ACQUIRE);
	if (r == NULL)
		return 0;
	n = rte_ring_sc_dequeue_burst(r, (void **)pkts, nb_pkts, NULL);
	for (i = 0; i < n; i++)
		*bytes += pkts[i]->pkt_len;
	return n;
}

/** Frames ahead whose meter the metered loop asks for. */
#define VBR_RX_MTR_AHEAD 4

/* Ask for the meter lines of frame f of e[0, n), if metered. */
static inline void
vbr_rx_mtr_prefetch(const struct vbr_rx_act_table *t, const uint64_t *e,
		    unsigned int f, unsigned int n, int idx)
{
	struct vbr_mtr_rt *rt;

	if (f >= n || !(e[f] & VBR_RX_ACT_METER))
		return;
	rt = __atomic_load_n(&t->mtr[e[f] >> VBR_RX_ACT_MTR_SHIFT],
			     __ATOMIC_RELAXED);
	if (rt != NULL)
		vbr_mtr_rt_prefetch(rt, idx);
}

/*
 * The lcore index whose meter slots this thread's Rx bursts use, -1: the
 * shared slot. A secondary process' lcores have the primary's indexes:
 * they take the shared slot (vbr_mtr.h). The process type is read once
 * per process (a static, not in the Rx queue, which a secondary process
 * shares), not per burst.
 */
static inline int
vbr_rx_mtr_idx(void)
{
	static int primary = -1;	/* 1 or 0 once read */
	int p = __atomic_load_n(&primary, __ATOMIC_RELAXED);

	if (unlikely(p < 0)) {
		p = rte_eal_process_type() == RTE_PROC_PRIMARY;
		__atomic_store_n(&primary, p, __ATOMIC_RELAXED);
	}
	return likely(p) ? rte_lcore_index(-1) : -1;
}

/*
 * What the rules' tags say for frames pkts[0, n) (tags tg[]): mark, flag,
 * meter and policy. Frames a policy drops or hands to another queue leave
 * the burst; return the frames kept (packed in order), their bytes taken
 * off *bytes for the others.
 */
static uint16_t
vbr_rx_actions(struct vbr_rxq *rxq, struct rte_mbuf **pkts,
	       const uint32_t *tg, uint16_t n, uint64_t *bytes)
{
	const struct vbr_rx_act_table *t =
		__atomic_load_n(&rxq->priv->rx_act, __ATOMIC_ACQUIRE);
	uint64_t e[VBR_RX_CHUNK];
	uint32_t len[VBR_RX_CHUNK];
	uint8_t col[VBR_RX_CHUNK], inc[VBR_RX_CHUNK];
	const uint8_t *ic;
	unsigned int slot, ahead = 0;
	uint32_t order, last_tag = 0;	/* tag 0: no entry */
	uint64_t last = 0;
	uint64_t tsc;
	uint16_t i, j, q, k = 0;
	bool locked;
	int idx = -1;

	if (t == NULL)
		return n;
	for (i = 0; i < n; i++) {
		/* Frames of one rule come in runs: one lookup per run. */
		if (tg[i] != last_tag) {
			last_tag = tg[i];
			last = last_tag != 0 ? vbr_rx_act_entry(t, last_tag) : 0;
		}
		e[i] = last;
		/* A condition kept in software: met, or no rule took it. */
		if (unlikely(e[i] & VBR_RX_ACT_FRAG) &&
		    !vbr_rx_frag_ok(pkts[i], (e[i] >> VBR_RX_ACT_FRAG_SHIFT) &
					     0xff))
			e[i] = 0;
		if (e[i] & VBR_RX_ACT_MARK)
			vbr_rx_mark(pkts[i], 1,
				    (uint32_t)e[i] & VBR_RX_ACT_ID_MASK);
		else if (e[i] & VBR_RX_ACT_FLAG)
			vbr_rx_mark(pkts[i], 2, 0);
		if ((e[i] & VBR_RX_ACT_METER) && ahead < VBR_RX_MTR_AHEAD) {
			/*
			 * The first metered frames' meter lines are asked
			 * for now: on their way while the rest of the chunk
			 * is looked up.
			 */
			if (ahead++ == 0)
				idx = vbr_rx_mtr_idx();
			vbr_rx_mtr_prefetch(t, e, i, n, idx);
		}
	}
	if (ahead == 0)
		return n;	/* no meter: the frames stay as they are */
	tsc = rte_rdtsc();
	for (i = 0; i < n; i = j) {
		uint64_t mtr = e[i] >> VBR_RX_ACT_MTR_SHIFT;
		struct vbr_mtr_rt *rt;

		if (!(e[i] & VBR_RX_ACT_METER)) {
			pkts[k++] = pkts[i];
			j = i + 1;
			continue;
		}
		/*
		 * The meter lines of the frame VBR_RX_MTR_AHEAD on are asked
		 * for now, to be at hand when its run comes (a meter per rule
		 * over many rules: each frame a run of its own, its meter not
		 * in the cache); a few ahead, not the whole chunk, which
		 * would fill the line fill buffers and stall.
		 */
		vbr_rx_mtr_prefetch(t, e, i + VBR_RX_MTR_AHEAD, n, idx);
		/*
		 * A run of frames of one meter goes in at once. Metered: the
		 * frame as it came, as COUNT counts it: a stripped tag's 4
		 * bytes too.
		 */
		for (j = i; j < n && (e[j] & VBR_RX_ACT_METER) &&
		     e[j] >> VBR_RX_ACT_MTR_SHIFT == mtr; j++)
			len[j - i] = pkts[j]->pkt_len +
				     (pkts[j]->ol_flags &
				      RTE_MBUF_F_RX_VLAN_STRIPPED ?
				      RTE_VLAN_HLEN : 0);
		rt = __atomic_load_n(&t->mtr[mtr], __ATOMIC_ACQUIRE);
		if (unlikely(rt == NULL)) {
			for (q = i; q < j; q++)
				pkts[k++] = pkts[q];
			continue;
		}
		/*
		 * Colour-aware: each frame's input colour, from its headers,
		 * a stripped tag's from vlan_tci (the outer one).
		 */
		order = __atomic_load_n(&rt->in.order, __ATOMIC_ACQUIRE);
		ic = NULL;
		if (unlikely(order & VBR_MTR_IN_ORDER_MASK)) {
			for (q = i; q < j; q++)
				inc[q - i] = vbr_mtr_in_colour_vlan(&rt->in,
					order,
					rte_pktmbuf_mtod(pkts[q], const uint8_t *),
					rte_pktmbuf_data_len(pkts[q]),
					pkts[q]->ol_flags &
					RTE_MBUF_F_RX_VLAN_STRIPPED ?
					(int32_t)pkts[q]->vlan_tci : -1);
			ic = inc;
		}
		/* This lcore's slot in the meter, or the shared one. */
		slot = vbr_mtr_rt_slot(rt, idx, &locked);
		if (likely(__atomic_load_n(&rt->enabled, __ATOMIC_RELAXED)))
			vbr_mtr_color_n(rt, slot, tsc, len, j - i, ic, col);
		else if (ic != NULL)	/* pass-through: the input colour */
			memcpy(col, ic, j - i);
		else
			memset(col, RTE_COLOR_GREEN, j - i);
		if (j - i > 1 && vbr_rx_run_kept(rxq, rt, col, j - i)) {
			/* One colour the policy keeps here, unmarked. */
			uint64_t sum = 0;

			for (q = i; q < j; q++) {
				sum += len[q - i];
				pkts[k++] = pkts[q];
			}
			vbr_mtr_count_n(rt, slot, (enum rte_color)col[0],
					j - i, sum);
		} else {
			for (q = i; q < j; q++) {
				if (vbr_rx_police(rxq, t, rt, slot, pkts[q],
						  col[q - i], len[q - i]))
					pkts[k++] = pkts[q];
				else
					*bytes -= pkts[q]->pkt_len;
			}
		}
		vbr_mtr_rt_slot_put(rt, locked);
	}
	return k;
}


/* A chunk of completions, as the glue's poll_cq_burst() wrote them. */
struct vbr_rx_cqes {
	uint64_t wr_id[VBR_RX_CHUNK];	/**< the WQE: slot, index into elts */
	uint32_t len[VBR_RX_CHUNK];	/**< byte_len */
	uint32_t tag[VBR_RX_CHUNK];	/**< flow tag, when read */
	uint8_t status[VBR_RX_CHUNK];	/**< enum ibv_wc_status */
};

/*
 * What poll_cq_burst_ol() adds, for a queue with offloads (not wc_flags:
 * the checksums are software's, see vbr_rx_offload_capa()).
 */
struct vbr_rx_ol {
	uint64_t ts[VBR_RX_CHUNK];	/**< completion timestamp */
	uint16_t cvlan[VBR_RX_CHUNK];	/**< stripped TCI */
};

/* What the software checksum check parses: outer headers, no tunnel. */
#define VBR_RX_CSUM_LAYERS (RTE_PTYPE_L2_MASK | RTE_PTYPE_L3_MASK | \
			    RTE_PTYPE_L4_MASK)

/* A DPDK verify answer (0: right) as an L4 flag. */
static inline uint64_t
vbr_rx_l4_flag(int verify)
{
	return verify == 0 ? RTE_MBUF_F_RX_L4_CKSUM_GOOD :
			     RTE_MBUF_F_RX_L4_CKSUM_BAD;
}

/*
 * The L4 flag of a TCP or UDP datagram over IPv4 at l4 bytes into m (ip:
 * its contiguous header, at l2). An IP length that claims more than the
 * frame holds, or less than the header: not checked (UNKNOWN); a UDP
 * checksum of 0 is "none" (RFC 768): NONE, as net_tap says.
 */
static uint64_t
vbr_rx_csum_l4_v4(const struct rte_mbuf *m, const struct rte_ipv4_hdr *ip,
		  uint32_t l2, uint32_t l4, bool udp)
{
	uint32_t tot = rte_be_to_cpu_16(ip->total_length);
	const rte_be16_t *sum;
	rte_be16_t copy;

	if (l2 + tot > m->pkt_len || l2 + tot < l4 + (udp ? 8u : 20u))
		return RTE_MBUF_F_RX_L4_CKSUM_UNKNOWN;
	if (udp) {
		sum = rte_pktmbuf_read(m, l4 + 6, sizeof(copy), &copy);
		if (*sum == 0)
			return RTE_MBUF_F_RX_L4_CKSUM_NONE;
	}
	return vbr_rx_l4_flag(rte_ipv4_udptcp_cksum_mbuf_verify(m, ip, l4));
}

/* The same over IPv6 with no extension header (payload_len is L4's). */
static uint64_t
vbr_rx_csum_l4_v6(const struct rte_mbuf *m, const struct rte_ipv6_hdr *ip,
		  uint32_t l4, bool udp)
{
	uint32_t plen = rte_be_to_cpu_16(ip->payload_len);

	if (l4 + plen > m->pkt_len || plen < (udp ? 8u : 20u))
		return RTE_MBUF_F_RX_L4_CKSUM_UNKNOWN;
	return vbr_rx_l4_flag(rte_ipv6_udptcp_cksum_mbuf_verify(m, ip, l4));
}

/*
 * Verify a received frame's checksums in software, for a queue with the
 * checksum offloads (a WQ's completions do not carry the status on mlx5:
 * see vbr_rx_offload_capa()): as net_tap does, with DPDK's own helpers.
 * IPv4: the header's flag GOOD or BAD; TCP and UDP over IPv4 or IPv6
 * (no extension header): the L4 flag GOOD or BAD, NONE for a UDP/IPv4
 * checksum of 0. Not checked, flags left UNKNOWN: non-IP frames, other
 * L4 protocols, fragments (L4), IPv6 extension headers, headers not
 * contiguous in the first segment, lengths that do not fit the frame.
 */
static void
vbr_rx_csum_sw(struct rte_mbuf *m)
{
	struct rte_net_hdr_lens hl = { 0 };
	uint32_t pt = rte_net_get_ptype(m, &hl, VBR_RX_CSUM_LAYERS);
	uint32_t l3 = pt & RTE_PTYPE_L3_MASK, l4 = pt & RTE_PTYPE_L4_MASK;
	uint32_t off = hl.l2_len + hl.l3_len;
	bool tcp_udp = l4 == RTE_PTYPE_L4_TCP || l4 == RTE_PTYPE_L4_UDP;
	const void *ip = rte_pktmbuf_mtod_offset(m, const void *, hl.l2_len);

	if (off > rte_pktmbuf_data_len(m))
		return;
	if (l3 == RTE_PTYPE_L3_IPV4 || l3 == RTE_PTYPE_L3_IPV4_EXT) {
		m->ol_flags |= rte_ipv4_cksum(ip) == 0 ?
			       RTE_MBUF_F_RX_IP_CKSUM_GOOD :
			       RTE_MBUF_F_RX_IP_CKSUM_BAD;
		if (tcp_udp)
			m->ol_flags |= vbr_rx_csum_l4_v4(m, ip, hl.l2_len, off,
							 l4 == RTE_PTYPE_L4_UDP);
	} else if (l3 == RTE_PTYPE_L3_IPV6 && tcp_udp) {
		m->ol_flags |= vbr_rx_csum_l4_v6(m, ip, off,
						 l4 == RTE_PTYPE_L4_UDP);
	}
}

/* The checksum flags of n received frames (vbr_rx_csum_sw()). */
static void
vbr_rx_csum_burst(struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t i;

	for (i = 0; i < n; i++)
		vbr_rx_csum_sw(pkts[i]);
}

/*
 * The offload results of completion i for its mbuf. The checksums are not
 * the completion's (IBV_WC_IP_CSUM_OK, where a device sets it, is not
 * read: see vbr_rx_offload_capa()), vbr_rx_csum_burst() sets them. A TCI
 * of 0 is "nothing stripped" (verbs has no flag).
 */
static __rte_always_inline void
vbr_rx_ol_apply(const struct vbr_rxq *rxq, const struct vbr_rx_ol *ol,
		unsigned int i, struct rte_mbuf *m)
{
	if (rxq->ol_cvlan && ol->cvlan[i] != 0) {
		m->ol_flags |= RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_VLAN_STRIPPED;
		m->vlan_tci = ol->cvlan[i];
	}
	if (rxq->ol_ts) {
		*RTE_MBUF_DYNFIELD(m, rxq->ts_off, rte_mbuf_timestamp_t *) =
			vbr_ticks_to_ns(ol->ts[i], rxq->ts_khz);
		m->ol_flags |= rxq->ts_flag;
	}
}

/*
 * Hand out the frames of completions [0, k) of c into pkts (tg not NULL:
 * c->tag was read, and each frame's tag goes to tg[] next to it); put the
 * slots to repost in rep[], but a slot whose new buffer has no lkey
 * (cannot happen after setup). One-buffer slots, all fresh buffers in one
 * take: the common case. Return: the frames handed out;
 * their bytes go to *bytes, the slots to repost to *nrep.
 */
static __rte_always_inline uint16_t
vbr_rx_chunk(struct vbr_rxq *rxq, const struct vbr_rx_cqes *c, unsigned int k,
	     uint32_t *tg, struct rte_mbuf **pkts, uint32_t *rep,
	     unsigned int *nrep, uint64_t *bytes, const struct vbr_rx_ol *ol)
{
	struct rte_mbuf *fresh[VBR_RX_CHUNK];
	unsigned int i, j, want = 0, r = 0;
	uint16_t n = 0;
	int ret;

	for (i = 0; i < k; i++)
		want += c->status[i] == IBV_WC_SUCCESS &&
			c->len[i] <= rxq->room;
	if (likely(rxq->segs == 1) &&
	    likely(vbr_rxq_take(rxq, fresh, want) == 0)) {
		for (i = 0, j = 0; i < k; i++) {
			uint32_t slot = (uint32_t)c->wr_id[i];
			uint32_t len = c->len[i];

			if (unlikely(c->status[i] != IBV_WC_SUCCESS ||
				     len > rxq->room)) {
				rxq->ierrors++;
				goto repost;
			}
			ret = vbr_rx_swap(rxq, slot, len, fresh[j++], &pkts[n]);
			if (ol != NULL)
				vbr_rx_ol_apply(rxq, ol, i, pkts[n]);
			if (unlikely(tg != NULL))
				tg[n] = c->tag[i];
			n++;
			*bytes += len;
			if (unlikely(ret != 0))
				continue;	/* not reposted */
repost:
			rep[r++] = slot;
		}
		*nrep = r;
		return n;
	}
	/* Chains, or short of mbufs: one frame at a time. */
	for (i = 0; i < k; i++) {
		uint32_t slot = (uint32_t)c->wr_id[i];

		if (unlikely(c->status[i] != IBV_WC_SUCCESS)) {
			rxq->ierrors++;
			goto repost_one;
		}
		if (rxq->segs == 1)
			ret = vbr_rx_one(rxq, slot, c->len[i], &pkts[n]);
		else
			ret = vbr_rx_chain(rxq, slot, c->len[i], &pkts[n]);
		if (ret == 0 || ret == -2) {
			if (ol != NULL)
				vbr_rx_ol_apply(rxq, ol, i, pkts[n]);
			if (unlikely(tg != NULL))
				tg[n] = c->tag[i];
			*bytes += c->len[i];
			n++;
			if (ret == -2)
				continue;	/* not reposted */
		}
repost_one:
		rep[r++] = slot;
	}
	*nrep = r;
	return n;
}

/*
 * Post the receive WQEs of slots rep[0, r) again: one burst of one-SGE
 * entries through the glue, or a WR list for slots of several buffers.
 * A slot the WQ refuses (cannot happen: each one reposted was completed)
 * keeps its buffers and stays out of the ring.
 */
static inline void
vbr_rx_repost(struct vbr_rxq *rxq, const uint32_t *rep, unsigned int r)
{
	unsigned int i;

	if (r == 0)
		return;
	if (likely(rxq->segs == 1)) {
		uint64_t wr_id[VBR_RX_CHUNK];
		struct ibv_sge sge[VBR_RX_CHUNK];

		for (i = 0; i < r; i++) {
			wr_id[i] = rep[i];
			sge[i] = rxq->sges[rep[i]];
		}
		rxq->post_recv(rxq->wq, r, wr_id, sge);
	} else {
		struct ibv_recv_wr *bad;

		for (i = 0; i < r; i++)
			rxq->wrs[rep[i]].next = i + 1 < r ?
						&rxq->wrs[rep[i + 1]] : NULL;
		ibv_post_wq_recv(rxq->wq, &rxq->wrs[rep[0]], &bad);
	}
}

/*
 * Poll completions a chunk at a time through the glue (their mbuf headers
 * prefetched once read), build the chunk's mbufs, repost the chunk's slots
 * in one post. Error completions do not count against nb_pkts.
 */
uint16_t
vbr_rx_burst(void *q, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	struct vbr_rxq *rxq = q;
	struct vbr_rx_cqes c;
	struct vbr_rx_ol ol;
	uint32_t rep[VBR_RX_CHUNK];
	uint32_t tg[VBR_RX_CHUNK];
	uint64_t bytes = 0;
	uint16_t n = 0;
	bool tags;

	if (nb_pkts == 0)
		return 0;
	/* Read the flow tag only while rules with a tag exist. */
	tags = __atomic_load_n(&rxq->priv->flow_tag_rules,
			       __ATOMIC_ACQUIRE) != 0;
	/*
	 * Frames handed to this queue wait in its ring until polled, whether
	 * or not their rule is still there: one load of the action table
	 * while no rule ever had a tag.
	 */
	n = vbr_rx_handed(rxq, pkts, nb_pkts, &bytes);
	while (n < nb_pkts) {
		unsigned int want = RTE_MIN(VBR_RX_CHUNK, nb_pkts - n);
		unsigned int k, i, r;
		uint16_t got;

		if (unlikely(rxq->ol))
			k = rxq->poll_ol(rxq->cq, want, c.wr_id, c.len,
					 c.status, unlikely(tags) ? c.tag : NULL,
					 NULL,
					 rxq->ol_cvlan ? ol.cvlan : NULL,
					 rxq->ol_ts ? ol.ts : NULL);
		else
			k = rxq->poll(rxq->cq, want, c.wr_id, c.len, c.status,
				      unlikely(tags) ? c.tag : NULL);
		if (k == 0)
			break;
		for (i = 0; i < k; i++)
			rte_prefetch0_write(rxq->elts[(uint32_t)c.wr_id[i] *
						      rxq->segs]);
		if (unlikely(rxq->ol))
			got = vbr_rx_chunk(rxq, &c, k,
					   unlikely(tags) ? tg : NULL,
					   pkts + n, rep, &r, &bytes, &ol);
		else
			got = vbr_rx_chunk(rxq, &c, k,
					   unlikely(tags) ? tg : NULL,
					   pkts + n, rep, &r, &bytes, NULL);
		vbr_rx_repost(rxq, rep, r);
		if (unlikely(rxq->ol_csum))
			vbr_rx_csum_burst(pkts + n, got);
		if (unlikely(tags))
			got = vbr_rx_actions(rxq, pkts + n, tg, got, &bytes);
		n += got;
		if (k < want)
			break;
	}
	rxq->ipackets += n;
	rxq->ibytes += bytes;
	return n;
}

/*
 * Free what the device has sent. A CQE in error ends the poll: the device
 * moved the send queue to ERR, the WQEs before that one were sent, it and
 * the ones behind it were not. The WQE the device failed is dropped and
 * counted at once (vbr_txq_lose()), one it only flushed is kept;
 * vbr_txq_recover() takes it from there. A CQE whose WQE is not in
 * flight, [tail, head), is not the queue's to act on (one the device
 * wrote for a WQE of the ring before a flush): it is skipped and counted
 * (stale_completions), so that the tail never passes the head.
 */
void
vbr_txq_complete(struct vbr_txq *txq)
{
	struct ibv_poll_cq_attr attr = { .comp_mask = 0 };

	if (txq->tail == txq->head)
		return;
	if (ibv_start_poll(txq->cq, &attr) != 0)
		return;
	do {
		/* wr_id: the free-running index of the WQE. */
		uint32_t last = (uint32_t)txq->cq->wr_id;

		if (unlikely(last - txq->tail >= txq->head - txq->tail)) {
			txq->stale_completions++;
			continue;
		}
		if (unlikely(txq->cq->status != IBV_WC_SUCCESS)) {
			if (!txq->err_pending) {
				txq->err_pending = 1;
				txq->err_status = txq->cq->status;
				txq->err_wr_id = last;
				vbr_txq_free_upto(txq, last - 1);
				if (txq->err_status != IBV_WC_WR_FLUSH_ERR)
					vbr_txq_lose(txq);
			}
			break;
		}
		vbr_txq_free_upto(txq, last);
	} while (ibv_next_poll(txq->cq) == 0);
	ibv_end_poll(txq->cq);
}

/*
 * Whether ibv_qp.state reads ERR. libibverbs sets that field in
 * ibv_modify_qp() (and ibv_query_qp()), so an ERR set through verbs, by
 * the application or by a recovery that failed, shows there at once; an
 * ERR the device moves the queue to shows there on swverbs' full profile
 * alone: a ConnectX keeps RTS in it, and its error completion tells.
 */
static inline bool
vbr_txq_in_error(const struct vbr_txq *txq)
{
	return __atomic_load_n(&txq->qp->state, __ATOMIC_RELAXED) ==
	       IBV_QPS_ERR;
}

/* Flags that only describe the packet; any other asks for an offload. */
#define VBR_TX_OL_INFO (RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IPV6 | \
			RTE_MBUF_F_TX_OUTER_IPV4 | RTE_MBUF_F_TX_OUTER_IPV6)

/* What a queue with the checksum offloads takes on top (no SCTP). */
#define VBR_TX_OL_CSUM_OK (RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_TCP_CKSUM | \
			   RTE_MBUF_F_TX_UDP_CKSUM)

/*
 * tx_pkt_prepare: the leading packets vbr_tx_burst() would post, the others
 * refused with rte_errno EINVAL (empty, longer than max_frame, more
 * segments than the queue takes) or ENOTSUP (an offload it does not do:
 * any but the checksums of a queue with them, SCTP's never). The device
 * finds the headers itself: l2_len and l3_len are not needed.
 */
uint16_t
vbr_tx_prepare(void *q, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	const struct vbr_txq *txq = q;
	uint64_t ok = VBR_TX_OL_INFO | (txq->csum ? VBR_TX_OL_CSUM_OK : 0);
	uint16_t n;

	for (n = 0; n < nb_pkts; n++) {
		const struct rte_mbuf *m = pkts[n];

		if (m->nb_segs > txq->max_sge || m->pkt_len == 0 ||
		    m->pkt_len > txq->max_frame) {
			rte_errno = EINVAL;
			break;
		}
		if ((m->ol_flags & RTE_MBUF_F_TX_OFFLOAD_MASK & ~ok) ||
		    (m->ol_flags & RTE_MBUF_F_TX_L4_MASK) ==
		    RTE_MBUF_F_TX_SCTP_CKSUM) {
			rte_errno = ENOTSUP;
			break;
		}
	}
	return n;
}

/** Packets the Tx burst prepares before it posts them. */
#define VBR_TX_CHUNK 32

/* A chunk of sends: one-SGE entries for the glue's post_send_burst(). */
struct vbr_tx_ents {
	uint64_t wr_id[VBR_TX_CHUNK];	/**< free-running ring index */
	struct ibv_sge sge[VBR_TX_CHUNK]; /**< one-segment packets' SGE */
	uint8_t sig[VBR_TX_CHUNK];	/**< VBR_GLUE_SEND_* */
	uint8_t multi[VBR_TX_CHUNK];	/**< a chain: txq->wrs[idx] */
};

/*
 * Post entries [j, k) of e in order: runs of one-segment packets through
 * the glue's burst, runs of chains as WR lists. Return: the first entry
 * not posted (k: all were).
 */
static inline unsigned int
vbr_tx_post(struct vbr_txq *txq, const struct vbr_tx_ents *e, unsigned int j,
	    unsigned int k)
{
	unsigned int r, done;

	while (j < k) {
		r = j;
		if (likely(!e->multi[j])) {
			while (r < k && !e->multi[r])
				r++;
			done = txq->post_send(txq->qp, r - j, &e->wr_id[j],
					      &e->sge[j], &e->sig[j]);
			if (unlikely(done < r - j))
				return j + done;
		} else {
			struct ibv_send_wr *head, *bad, *wr;

			head = &txq->wrs[e->wr_id[j] & txq->mask];
			while (r < k && e->multi[r]) {
				wr = &txq->wrs[e->wr_id[r] & txq->mask];
				wr->send_flags =
					((e->sig[r] & VBR_GLUE_SEND_SIGNALED) ?
					 IBV_SEND_SIGNALED : 0) |
					((e->sig[r] & VBR_GLUE_SEND_IP_CSUM) ?
					 IBV_SEND_IP_CSUM : 0);
				wr->next = r + 1 < k && e->multi[r + 1] ?
					   &txq->wrs[e->wr_id[r + 1] &
						     txq->mask] : NULL;
				r++;
			}
			if (unlikely(ibv_post_send(txq->qp, head, &bad) != 0))
				return j + (unsigned int)((uint32_t)bad->wr_id -
							  (uint32_t)e->wr_id[j]);
		}
		j = r;
	}
	return k;
}

/*
 * The device refused entry at of e[0, k) at its post, not being in ERR (a
 * ConnectX that needs the first 18 bytes of a frame inline refuses a
 * shorter one with EINVAL): its packet alone is dropped and counted
 * (oerrors, bad_frames), and the entries behind it, not posted, move one
 * ring slot down so that the ring stays contiguous; a completion it asked
 * for goes to the next one, or to the next packet posted. Return: the
 * dropped packet's length.
 */
static uint32_t
vbr_tx_refused(struct vbr_txq *txq, struct vbr_tx_ents *e, unsigned int at,
	       unsigned int k)
{
	uint32_t idx = (uint32_t)e->wr_id[at] & txq->mask;
	struct rte_mbuf *m = txq->elts[idx];
	uint32_t len = m->pkt_len;
	unsigned int i;

	txq->oerrors++;
	txq->bad_frames++;
	rte_pktmbuf_free(m);
	if (e->sig[at] & VBR_GLUE_SEND_SIGNALED) {
		if (at + 1 < k)
			e->sig[at + 1] |= VBR_GLUE_SEND_SIGNALED;
		else
			txq->since_signal = txq->signal_interval;
	}
	for (i = at; i + 1 < k; i++) {
		uint32_t to = (uint32_t)e->wr_id[i] & txq->mask;
		uint32_t from = (uint32_t)e->wr_id[i + 1] & txq->mask;

		txq->elts[to] = txq->elts[from];
		e->sge[i] = e->sge[i + 1];
		e->sig[i] = e->sig[i + 1];
		e->multi[i] = e->multi[i + 1];
		if (e->multi[i]) {
			struct ibv_send_wr *wr = &txq->wrs[to];
			struct ibv_sge *sge = &txq->sges[to * txq->max_sge];

			*wr = txq->wrs[from];
			memcpy(sge, wr->sg_list,
			       sizeof(*sge) * (uint32_t)wr->num_sge);
			wr->sg_list = sge;
			wr->wr_id = e->wr_id[i];
		}
	}
	txq->elts[(uint32_t)e->wr_id[k - 1] & txq->mask] = NULL;
	txq->head--;
	return len;
}

/*
 * Prepare up to want packets into ring slots and post them. Return: the
 * packets taken (posted, or dropped and counted); *stop set when the
 * ring is full or the queue is in ERR. csum: the queue has the checksum
 * offloads (a constant of each call: the burst without them does not
 * look at the flags).
 */
static __rte_always_inline uint16_t
vbr_tx_chunk(struct vbr_txq *txq, struct rte_mbuf **pkts, uint16_t want,
	     bool *stop, const bool csum)
{
	struct vbr_tx_ents e;
	uint64_t bytes = 0;
	unsigned int k = 0, posted;
	uint16_t n;

	for (n = 0; n < want; n++) {
		struct rte_mbuf *m = pkts[n], *seg;
		uint32_t len = 0;
		uint32_t free_slots = txq->desc - (txq->head - txq->tail);
		uint32_t idx = txq->head & txq->mask;
		struct ibv_sge *sge;
		uint16_t s;

		if (free_slots == 0) {
			*stop = true;
			break;
		}
		/*
		 * What the device would fail, moving the queue to ERR, is
		 * refused here: more segments than a WQE holds, data outside
		 * the registered memory, 0 bytes or more than max_frame.
		 * One segment: its next (second cache line) is not read.
		 */
		if (likely(m->nb_segs == 1)) {
			sge = &e.sge[k];
			sge->addr = rte_pktmbuf_mtod(m, uintptr_t);
			sge->length = m->data_len;
			len = m->data_len;
			e.multi[k] = 0;
			if (unlikely(vbr_mr_lookup(txq->priv, &txq->mr_cache,
						   sge->addr, len,
						   &sge->lkey) != 0))
				goto drop;
			goto checked;
		}
		sge = &txq->sges[idx * txq->max_sge];
		for (seg = m, s = 0; seg != NULL; seg = seg->next, s++) {
			if (unlikely(s == txq->max_sge))
				goto drop;
			sge[s].addr = rte_pktmbuf_mtod(seg, uintptr_t);
			sge[s].length = seg->data_len;
			len += seg->data_len;
			if (unlikely(vbr_mr_lookup(txq->priv, &txq->mr_cache,
						   sge[s].addr, seg->data_len,
						   &sge[s].lkey) != 0))
				goto drop;
		}
		{
			struct ibv_send_wr *wr = &txq->wrs[idx];

			wr->wr_id = txq->head;
			wr->sg_list = sge;
			wr->num_sge = s;
			wr->opcode = IBV_WR_SEND;
		}
		e.multi[k] = 1;
checked:
		if (unlikely(len - 1 >= txq->max_frame))
			goto drop;
		e.wr_id[k] = txq->head;
		e.sig[k] = 0;
		if (csum && (m->ol_flags & VBR_TX_OL_CSUM))
			e.sig[k] = VBR_GLUE_SEND_IP_CSUM;
		if (++txq->since_signal >= txq->signal_interval) {
			e.sig[k] |= VBR_GLUE_SEND_SIGNALED;
			txq->since_signal = 0;
		}
		txq->elts[idx] = m;
		txq->head++;
		k++;
		bytes += m->pkt_len;
		continue;
drop:
		txq->oerrors++;
		txq->bad_frames++;
		rte_pktmbuf_free(m);
	}
	if (k == 0)
		return n;
	/* A nearly full ring must be able to drain: signal its last WQE. */
	if (txq->desc - (txq->head - txq->tail) < txq->signal_interval &&
	    !(e.sig[k - 1] & VBR_GLUE_SEND_SIGNALED)) {
		e.sig[k - 1] |= VBR_GLUE_SEND_SIGNALED;
		txq->since_signal = 0;
	}
	posted = vbr_tx_post(txq, &e, 0, k);
	while (unlikely(posted < k)) {
		/* WQEs from posted on were not posted. */
		if (vbr_txq_in_error(txq)) {
			/* The recovery posts them again. */
			*stop = true;
			txq->opackets += k;
			txq->obytes += bytes;
			vbr_txq_recover(txq, (uint32_t)e.wr_id[posted]);
			return n;
		}
		/* Refused for another reason: that one alone is dropped. */
		bytes -= vbr_tx_refused(txq, &e, posted, k);
		k--;
		posted = vbr_tx_post(txq, &e, posted, k);
	}
	txq->opackets += k;
	txq->obytes += bytes;
	return n;
}

uint16_t
vbr_tx_burst(void *q, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	struct vbr_txq *txq = q;
	bool stop = false;
	uint16_t n = 0;

	/* Stopped: the caller keeps its mbufs (mlx5 would post in RESET). */
	if (unlikely(txq->stopped))
		return 0;
	vbr_txq_complete(txq);
	/*
	 * In ERR (an error completion read, a recovery waiting, or ERR in
	 * ibv_qp.state): recover now, or (backoff, removed) send none. The
	 * state is read before posting: a device that takes posts in ERR
	 * (mlx5) only flushes them, with completions that come when it gets
	 * to them (swverbs' engine: when its thread or service lcore runs),
	 * and until then each burst would fill the ring with WQEs to be
	 * flushed and posted again at once by the recovery.
	 */
	if (unlikely(!vbr_txq_can_post(txq) || vbr_txq_in_error(txq))) {
		if (!txq->gone)
			vbr_txq_recover(txq, txq->recover_wait ?
					txq->recover_unposted : txq->head);
		if (!vbr_txq_can_post(txq) || vbr_txq_in_error(txq))
			return 0;
	}
	if (unlikely(txq->csum)) {
		while (n < nb_pkts && !stop)
			n += vbr_tx_chunk(txq, pkts + n,
					  RTE_MIN(nb_pkts - n, VBR_TX_CHUNK),
					  &stop, true);
		return n;
	}
	while (n < nb_pkts && !stop)
		n += vbr_tx_chunk(txq, pkts + n,
				  RTE_MIN(nb_pkts - n, VBR_TX_CHUNK), &stop,
				  false);
	return n;
}
