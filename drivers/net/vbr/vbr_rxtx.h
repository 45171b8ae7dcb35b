/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef VBR_RXTX_H
#define VBR_RXTX_H

#include <stdint.h>

#include <infiniband/verbs.h>
#include <rte_mbuf.h>

struct vbr_priv;

/** Entries of the per-queue cache of recent MR lookups. */
#define VBR_MR_CACHE_SIZE 4
/** Fresh mbufs an Rx queue keeps at hand, allocated in one bulk call. */
#define VBR_RX_STASH 64
/** Rx slots ahead of the current one whose mbuf header is prefetched. */
#define VBR_RX_PREFETCH 8
/** A Tx WQE asks for a completion at least once every this many WQEs. */
#define VBR_TX_SIGNAL_INTERVAL 32

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
	uint16_t nstash;		/**< mbufs in stash */
	struct rte_mbuf *stash[VBR_RX_STASH]; /**< fresh, for refills */
	uint64_t ipackets;		/**< packets received */
	uint64_t ibytes;		/**< bytes received */
	uint64_t ierrors;		/**< error completions */
	uint64_t rx_nombuf;		/**< replenish failures */
};

/** Transmit queue: a RAW_PACKET QP and its CQ. */
struct vbr_txq {
	struct vbr_priv *priv;		/**< port private data */
	struct ibv_qp *qp;		/**< send queue */
	struct ibv_cq_ex *cq;		/**< completion queue */
	struct rte_mbuf **elts;		/**< mbufs in flight, by index & mask */
	struct ibv_send_wr *wrs;	/**< one WR per ring slot */
	struct ibv_sge *sges;		/**< (mask + 1) * max_sge SGEs */
	uint32_t head;			/**< next ring index to fill (free run) */
	uint32_t tail;			/**< oldest index not completed */
	uint32_t mask;			/**< ring slots (power of 2) - 1 */
	uint16_t desc;			/**< WQEs in flight at most */
	uint16_t max_sge;		/**< segments per packet */
	uint16_t signal_interval;	/**< signal at least every so many */
	uint16_t since_signal;		/**< WQEs posted since last signal */
	uint16_t port_id;		/**< ethdev port */
	uint16_t queue_id;		/**< queue index */
	struct vbr_mr_cache mr_cache;	/**< recent lkey lookups */
	uint64_t opackets;		/**< packets posted */
	uint64_t obytes;		/**< bytes posted */
	uint64_t oerrors;		/**< dropped or failed packets */
};

uint16_t vbr_rx_burst(void *rxq, struct rte_mbuf **pkts, uint16_t nb_pkts);
uint16_t vbr_tx_burst(void *txq, struct rte_mbuf **pkts, uint16_t nb_pkts);
int vbr_mr_lookup(struct vbr_priv *priv, struct vbr_mr_cache *cache,
		  uintptr_t addr, uint32_t len, uint32_t *lkey);
void vbr_txq_complete(struct vbr_txq *txq);

#endif /* VBR_RXTX_H */
