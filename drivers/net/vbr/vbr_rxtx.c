/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Datapath: Rx and Tx bursts. No lock, no system call, no logging: the verbs
 * calls here are the verbs.h inline functions, which reach the provider
 * through the objects' own function pointers.
 */

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rte_branch_prediction.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_prefetch.h>

#include "vbr.h"
#include "vbr_flow.h"
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

/* One frame of one buffer: the common case, no chain. */
static inline int
vbr_rx_one(struct vbr_rxq *rxq, uint32_t slot, uint32_t len,
	   struct rte_mbuf **out)
{
	struct rte_mbuf **bufs = &rxq->elts[slot];
	struct ibv_sge *sge = &rxq->sges[slot];
	struct rte_mbuf *m = bufs[0], *fresh;

	if (unlikely(len > rxq->room)) {
		rxq->ierrors++;
		return -1;
	}
	if (unlikely(vbr_rxq_take(rxq, &fresh, 1) != 0)) {
		rxq->rx_nombuf++;
		return -1;
	}
	vbr_rx_rearm(rxq, m);
	m->pkt_len = len;
	m->data_len = (uint16_t)len;
	*out = m;
	bufs[0] = fresh;
	sge->addr = vbr_rx_buf_addr(fresh);
	sge->length = rxq->room;
	if (unlikely(vbr_mr_lookup(rxq->priv, &rxq->mr_cache, sge->addr,
				   sge->length, &sge->lkey) != 0)) {
		/* Unregistered mempool: cannot happen after setup. */
		rxq->ierrors++;
		return -2;
	}
	return 0;
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

/*
 * A completion's flow tag: MARK id + 1 sets RTE_MBUF_F_RX_FDIR_ID with the id
 * in hash.fdir.hi, VBR_FLOW_TAG_FLAG sets RTE_MBUF_F_RX_FDIR alone, 0 is no
 * rule tag.
 */
static inline void
vbr_rx_tag(uint32_t tag, struct rte_mbuf *m)
{
	if (tag == 0)
		return;
	if (tag == VBR_FLOW_TAG_FLAG) {
		m->ol_flags |= RTE_MBUF_F_RX_FDIR;
		return;
	}
	m->ol_flags |= RTE_MBUF_F_RX_FDIR | RTE_MBUF_F_RX_FDIR_ID;
	m->hash.fdir.hi = tag - 1;
}

/** Completions the Rx burst reads before it builds their mbufs. */
#define VBR_RX_CHUNK 32

/* What the Rx burst keeps of a completion. */
struct vbr_rx_cqe {
	uint32_t slot;		/**< the WQE: index into elts, wrs, sges */
	uint32_t len;		/**< byte_len; 0 for an error completion */
	uint32_t tag;		/**< flow tag, when read */
	uint32_t ok;		/**< IBV_WC_SUCCESS */
};

/*
 * Hand out the frames of c[0..k) into pkts; link each slot's WR for the
 * repost (*link), but a slot whose new buffer has no lkey (cannot happen
 * after setup). One-buffer slots, all fresh buffers in one take: the
 * common case. Return: the frames handed out; their bytes go to *bytes.
 */
static inline uint16_t
vbr_rx_chunk(struct vbr_rxq *rxq, const struct vbr_rx_cqe *c, unsigned int k,
	     struct rte_mbuf **pkts, struct ibv_recv_wr ***link,
	     uint64_t *bytes)
{
	struct rte_mbuf *fresh[VBR_RX_CHUNK];
	unsigned int i, j, want = 0;
	uint16_t n = 0;
	int ret;

	for (i = 0; i < k; i++)
		want += c[i].ok && c[i].len <= rxq->room;
	if (likely(rxq->segs == 1) &&
	    likely(vbr_rxq_take(rxq, fresh, want) == 0)) {
		for (i = 0, j = 0; i < k; i++) {
			uint32_t slot = c[i].slot;
			struct ibv_sge *sge = &rxq->sges[slot];
			struct rte_mbuf *m, *f;

			if (unlikely(!c[i].ok || c[i].len > rxq->room)) {
				rxq->ierrors++;
				goto link;
			}
			m = rxq->elts[slot];
			vbr_rx_rearm(rxq, m);
			m->pkt_len = c[i].len;
			m->data_len = (uint16_t)c[i].len;
			vbr_rx_tag(c[i].tag, m);
			pkts[n++] = m;
			*bytes += c[i].len;
			f = fresh[j++];
			rxq->elts[slot] = f;
			sge->addr = vbr_rx_buf_addr(f);
			sge->length = rxq->room;
			if (unlikely(vbr_mr_lookup(rxq->priv, &rxq->mr_cache,
						   sge->addr, sge->length,
						   &sge->lkey) != 0)) {
				rxq->ierrors++;
				continue;	/* not reposted */
			}
link:
			**link = &rxq->wrs[slot];
			*link = &rxq->wrs[slot].next;
		}
		return n;
	}
	/* Chains, or short of mbufs: one frame at a time. */
	for (i = 0; i < k; i++) {
		uint32_t slot = c[i].slot;

		if (unlikely(!c[i].ok)) {
			rxq->ierrors++;
			goto repost;
		}
		if (rxq->segs == 1)
			ret = vbr_rx_one(rxq, slot, c[i].len, &pkts[n]);
		else
			ret = vbr_rx_chain(rxq, slot, c[i].len, &pkts[n]);
		if (ret == 0 || ret == -2) {
			vbr_rx_tag(c[i].tag, pkts[n]);
			*bytes += c[i].len;
			n++;
			if (ret == -2)
				continue;	/* not reposted */
		}
repost:
		**link = &rxq->wrs[slot];
		*link = &rxq->wrs[slot].next;
	}
	return n;
}

/*
 * Read completions a chunk at a time (their mbuf headers prefetched as they
 * are read), build the chunk's mbufs, repost every slot in one post at the
 * end. Error completions do not count against nb_pkts.
 */
uint16_t
vbr_rx_burst(void *q, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	struct vbr_rxq *rxq = q;
	struct ibv_cq_ex *cq = rxq->cq;
	struct ibv_poll_cq_attr attr = { .comp_mask = 0 };
	struct ibv_recv_wr *head = NULL, **link = &head, *bad;
	struct vbr_rx_cqe c[VBR_RX_CHUNK];
	uint64_t bytes = 0;
	uint16_t n = 0;
	bool tags, more = true;

	if (nb_pkts == 0)
		return 0;
	/* Read the flow tag only while MARK or FLAG rules exist. */
	tags = __atomic_load_n(&rxq->priv->flow_tag_rules,
			       __ATOMIC_ACQUIRE) != 0;
	if (ibv_start_poll(cq, &attr) != 0)
		return 0;
	while (more) {
		unsigned int k = 0, want = RTE_MIN(VBR_RX_CHUNK, nb_pkts - n);

		for (;;) {
			struct vbr_rx_cqe *e = &c[k++];

			e->slot = (uint32_t)cq->wr_id;
			rte_prefetch0_write(rxq->elts[e->slot * rxq->segs]);
			e->ok = cq->status == IBV_WC_SUCCESS;
			e->len = e->ok ? ibv_wc_read_byte_len(cq) : 0;
			e->tag = unlikely(tags) && e->ok ?
				 ibv_wc_read_flow_tag(cq) : 0;
			if (k == want)
				break;
			if (ibv_next_poll(cq) != 0) {
				more = false;
				break;
			}
		}
		n += vbr_rx_chunk(rxq, c, k, pkts + n, &link, &bytes);
		if (more && (n >= nb_pkts || ibv_next_poll(cq) != 0))
			more = false;
	}
	ibv_end_poll(cq);
	*link = NULL;
	if (head != NULL)
		ibv_post_wq_recv(rxq->wq, head, &bad);
	rxq->ipackets += n;
	rxq->ibytes += bytes;
	return n;
}

/*
 * Free what the device has sent. A CQE in error ends the poll: the device
 * moved the send queue to ERR, the WQEs before that one were sent, it and
 * the ones behind it were not; vbr_txq_recover() takes it from there.
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

		if (unlikely(txq->cq->status != IBV_WC_SUCCESS)) {
			if (!txq->err_pending) {
				txq->err_pending = 1;
				txq->err_status = txq->cq->status;
				txq->err_wr_id = last;
				vbr_txq_free_upto(txq, last - 1);
			}
			break;
		}
		vbr_txq_free_upto(txq, last);
	} while (ibv_next_poll(txq->cq) == 0);
	ibv_end_poll(txq->cq);
}

/* Whether the device has moved the send queue to ERR. */
static inline bool
vbr_txq_in_error(const struct vbr_txq *txq)
{
	return __atomic_load_n(&txq->qp->state, __ATOMIC_RELAXED) ==
	       IBV_QPS_ERR;
}

/* Flags that only describe the packet; any other asks for an offload. */
#define VBR_TX_OL_INFO (RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IPV6 | \
			RTE_MBUF_F_TX_OUTER_IPV4 | RTE_MBUF_F_TX_OUTER_IPV6)

/*
 * tx_pkt_prepare: the leading packets vbr_tx_burst() would post, the others
 * refused with rte_errno EINVAL (empty, longer than max_frame, more
 * segments than the queue takes) or ENOTSUP (an offload it does not do).
 */
uint16_t
vbr_tx_prepare(void *q, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	const struct vbr_txq *txq = q;
	uint16_t n;

	for (n = 0; n < nb_pkts; n++) {
		const struct rte_mbuf *m = pkts[n];

		if (m->nb_segs > txq->max_sge || m->pkt_len == 0 ||
		    m->pkt_len > txq->max_frame) {
			rte_errno = EINVAL;
			break;
		}
		if (m->ol_flags & (RTE_MBUF_F_TX_OFFLOAD_MASK &
				   ~VBR_TX_OL_INFO)) {
			rte_errno = ENOTSUP;
			break;
		}
	}
	return n;
}

uint16_t
vbr_tx_burst(void *q, struct rte_mbuf **pkts, uint16_t nb_pkts)
{
	struct vbr_txq *txq = q;
	struct ibv_send_wr *head = NULL, *last = NULL, *bad;
	uint64_t bytes = 0;
	uint32_t posted = 0;
	uint16_t n;

	vbr_txq_complete(txq);
	if (unlikely(txq->err_pending))
		vbr_txq_recover(txq, txq->head);
	for (n = 0; n < nb_pkts; n++) {
		struct rte_mbuf *m = pkts[n], *seg;
		uint32_t len = 0;
		uint32_t free_slots = txq->desc - (txq->head - txq->tail);
		uint32_t idx = txq->head & txq->mask;
		struct ibv_send_wr *wr = &txq->wrs[idx];
		struct ibv_sge *sge = &txq->sges[idx * txq->max_sge];
		uint16_t i;

		if (free_slots == 0)
			break;
		/*
		 * What the device would fail, moving the queue to ERR, is
		 * refused here: more segments than a WQE holds, data outside
		 * the registered memory, 0 bytes or more than max_frame.
		 * One segment: its next (second cache line) is not read.
		 */
		if (likely(m->nb_segs == 1)) {
			sge[0].addr = rte_pktmbuf_mtod(m, uintptr_t);
			sge[0].length = m->data_len;
			len = m->data_len;
			i = 1;
			if (unlikely(vbr_mr_lookup(txq->priv, &txq->mr_cache,
						   sge[0].addr, len,
						   &sge[0].lkey) != 0))
				goto drop;
			goto checked;
		}
		for (seg = m, i = 0; seg != NULL; seg = seg->next, i++) {
			if (unlikely(i == txq->max_sge))
				goto drop;
			sge[i].addr = rte_pktmbuf_mtod(seg, uintptr_t);
			sge[i].length = seg->data_len;
			len += seg->data_len;
			if (unlikely(vbr_mr_lookup(txq->priv, &txq->mr_cache,
						   sge[i].addr, seg->data_len,
						   &sge[i].lkey) != 0))
				goto drop;
		}
checked:
		if (unlikely(len - 1 >= txq->max_frame))
			goto drop;
		wr->wr_id = txq->head;
		wr->next = NULL;
		wr->sg_list = sge;
		wr->num_sge = i;
		wr->opcode = IBV_WR_SEND;
		wr->send_flags = 0;
		if (++txq->since_signal >= txq->signal_interval) {
			wr->send_flags = IBV_SEND_SIGNALED;
			txq->since_signal = 0;
		}
		txq->elts[idx] = m;
		txq->head++;
		if (last != NULL)
			last->next = wr;
		else
			head = wr;
		last = wr;
		posted++;
		bytes += m->pkt_len;
		continue;
drop:
		txq->oerrors++;
		txq->bad_frames++;
		rte_pktmbuf_free(m);
	}
	if (last == NULL)
		return n;
	/* A nearly full ring must be able to drain: signal its last WQE. */
	if (txq->desc - (txq->head - txq->tail) < txq->signal_interval &&
	    !(last->send_flags & IBV_SEND_SIGNALED)) {
		last->send_flags |= IBV_SEND_SIGNALED;
		txq->since_signal = 0;
	}
	if (unlikely(ibv_post_send(txq->qp, head, &bad) != 0)) {
		/* WQEs from bad on were not posted. */
		struct ibv_send_wr *wr;

		if (vbr_txq_in_error(txq)) {
			/* The recovery posts them again. */
			txq->opackets += posted;
			txq->obytes += bytes;
			vbr_txq_recover(txq, (uint32_t)bad->wr_id);
			return n;
		}
		/* Refused for another reason: drop them. */
		txq->head = (uint32_t)bad->wr_id;

		for (wr = bad; wr != NULL; wr = wr->next) {
			uint32_t idx = (uint32_t)wr->wr_id & txq->mask;
			struct rte_mbuf *m = txq->elts[idx];

			bytes -= m->pkt_len;
			posted--;
			txq->oerrors++;
			rte_pktmbuf_free(m);
			txq->elts[idx] = NULL;
		}
	}
	txq->opackets += posted;
	txq->obytes += bytes;
	return n;
}
