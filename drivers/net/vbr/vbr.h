/* SPDX-License-Identifier: BSD-3-Clause */

#ifndef VBR_H
#define VBR_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <infiniband/verbs.h>
#include <ethdev_driver.h>
#include <rte_ether.h>
#include <rte_interrupts.h>
#include <rte_spinlock.h>

struct rte_vdev_device;

#include "vbr_compat.h"
#include "vbr_flow.h"
#include "vbr_glue.h"
#include "vbr_rxtx.h"

/** Verbs port number of the (only) port. */
#define VBR_PORT_NUM 1
/** Unicast MAC addresses a port accepts. */
#define VBR_MAX_MAC_ADDRS 16
/** Multicast addresses set_mc_addr_list accepts. */
#define VBR_MAX_MC_ADDRS 32
/** VLAN IDs the VLAN filter table holds. */
#define VBR_MAX_VLAN_IDS 64
/** Toeplitz key length. */
#define VBR_RSS_KEY_LEN 40
/**
 * Frame overhead above the MTU: Ethernet header and one VLAN tag, no FCS,
 * the longest frame a ConnectX (and swverbs) receives at an MTU.
 */
#define VBR_ETH_OVERHEAD (RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN)
/** Descriptor limits advertised to applications. */
#define VBR_MIN_DESC 64
/** Descriptors per queue an application takes by default (dev_info). */
#define VBR_DEFAULT_DESC 256
/** RSS hash types the hash QP can use (mapped by vbr_flow_rss_fields()). */
#define VBR_RSS_OFFLOADS (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | \
			  RTE_ETH_RSS_UDP | RTE_ETH_RSS_L3_SRC_ONLY | \
			  RTE_ETH_RSS_L3_DST_ONLY | RTE_ETH_RSS_L4_SRC_ONLY | \
			  RTE_ETH_RSS_L4_DST_ONLY)
/** Largest port redirection table (the device may allow fewer entries). */
#define VBR_RSS_RETA_MAX 512

/** A memory region registered for one mempool memory chunk. */
struct vbr_mr {
	TAILQ_ENTRY(vbr_mr) next;	/**< in vbr_priv.mrs */
	const struct rte_mempool *mp;	/**< mempool it belongs to */
	struct ibv_mr *ibv_mr;		/**< verbs MR */
};

/** A replaced MR table, kept until close (readers may hold it). */
struct vbr_mr_retired {
	SLIST_ENTRY(vbr_mr_retired) next; /**< in vbr_priv.mr_retired */
	struct vbr_mr_table *table;	/**< the old table */
};

struct vbr_rss_table;	/* vbr_rss.c */
struct vbr_count_port;	/* vbr_count.c */
struct vbr_mtr_port;	/* vbr_mtr.c */
struct vbr_mtr;		/* vbr_mtr.c */
struct vbr_tags;	/* vbr_steer.c */
struct vbr_tm;		/* vbr_tm.c */

/** Most QP counters of a port that xstats show (vbr_stats.c). */
#define VBR_STATS_QP_CNT_MAX 32

/** A QP counter's values at the last xstats reset (vbr_stats.c). */
struct vbr_qp_cnt_base {
	uint32_t cntn;			/**< counter number */
	uint32_t nvals;			/**< entries of val */
	uint64_t val[VBR_GLUE_QP_CNT_MAX]; /**< values then */
};

/**
 * What the device accepts, found by trying at probe (vbr_steer_probe()):
 * verbs has no attribute for the number of flow priorities nor for the
 * optional match fields.
 */
struct vbr_steer_caps {
	uint16_t nb_prios;		/**< verbs flow priorities accepted */
	uint16_t levels;		/**< rte_flow levels of user rules */
	uint32_t no_fields;		/**< VBR_FLOW_F_* the device refuses */
	unsigned int probed:1;		/**< the fields above are known */
};

/** Port private data (dev_private). */
struct vbr_priv {
	struct rte_eth_dev *dev;	/**< ethdev */
	const struct vbr_glue *glue;	/**< verbs call table */
	char ibdev_name[64];		/**< verbs device name */
	struct ibv_context *ctx;	/**< verbs context */
	struct ibv_pd *pd;		/**< protection domain */
	struct ibv_device_attr_ex attr;	/**< device capabilities */
	uint32_t max_rx_pktlen;		/**< largest frame received */
	bool vlan_any_tpid;		/**< vbr_glue_port's */
	/*
	 * The Tx queues the device takes, found by trying at probe
	 * (vbr_txq_probe_limits()): create_qp refuses send queues past
	 * them (a ConnectX: a 512-byte WQE, 2^15 64-byte blocks a queue).
	 */
	uint16_t tx_max_segs;		/**< SGEs of a send WQE */
	uint16_t tx_max_desc;		/**< WRs of a queue, 1 SGE each */
	uint16_t tx_max_desc_segs;	/**< WRs of tx_max_segs SGEs */
	unsigned int started:1;		/**< between dev_start and dev_stop */
	unsigned int mr_cb:1;		/**< mempool event callback set */
	unsigned int intr_cb:1;		/**< async fd handler registered */
	unsigned int mp_user:1;		/**< counted in vbr_mp.c's users */
	/**
	 * The device raised IBV_EVENT_DEVICE_FATAL (vbr_intr.c), until a
	 * start binds the port again (vbr_port_rebind()): its send queues
	 * are not recovered meanwhile (atomic).
	 */
	uint8_t removed;
	/**
	 * Held by vbr_link_update() from its port query to its store: the
	 * interrupt thread and the application's (dev_start, link_get) both
	 * update the link, and an older reading must not land last.
	 */
	rte_spinlock_t link_lock;
	struct rte_intr_handle *intr;	/**< async event fd */
	/* Steering (vbr_steer.c). */
	struct vbr_steer_caps steer_caps; /**< what the device accepts */
	uint8_t steer_caps_ready;	/**< steer_caps probed (atomic) */
	unsigned int promisc:1;		/**< promiscuous rule wanted */
	unsigned int allmulti:1;	/**< all-multicast rule wanted */
	unsigned int vlan_drop_cnt:1;	/**< vlan_drop has an object */
	struct vbr_count vlan_drop;	/**< frames the VLAN filter drops */
	uint64_t vlan_drop_base;	/**< vlan_drop at the last reset */
	unsigned int comp_drop_cnt:1;	/**< comp_drop has an object */
	struct vbr_count comp_drop;	/**< companions' unmatched drops */
	uint64_t handoff_freed_base;	/**< vbr_mtr_handoff_freed() then */
	struct rte_ether_addr mc_addrs[VBR_MAX_MC_ADDRS]; /**< mc list */
	uint32_t nb_mc_addrs;		/**< entries of mc_addrs */
	/*
	 * A VF's or SF's netdev, told the addresses and modes too (the
	 * glue's port_vport(); vbr_ethdev.c), and put back at close.
	 */
	unsigned int vport:1;		/**< the port has one to tell */
	int vport_flags0;		/**< its VBR_GLUE_VPORT_F_* at probe */
	int vport_flags_set;		/**< the flags the port changed */
	uint8_t vport_mac0[6];		/**< its own MAC (always registered) */
	uint32_t vport_mac_own;		/**< bit i: mac_addrs[i] put there */
	uint32_t vport_mc_own;		/**< bit i: mc_addrs[i] put there */
	uint16_t vlan_ids[VBR_MAX_VLAN_IDS]; /**< VLAN filter table */
	uint16_t nb_vlan_ids;		/**< entries of vlan_ids */
	uint8_t rss_key[VBR_RSS_KEY_LEN]; /**< the port's Toeplitz key */
	uint64_t rss_hf;		/**< RTE_ETH_RSS_* hashed, 0: none */
	uint16_t reta_size;		/**< entries of reta */
	uint16_t reta[VBR_RSS_RETA_MAX]; /**< redirection table: Rx queues */
	struct vbr_rss *rss_port;	/**< queue set of reta, while started */
	/* rte_flow. */
	pthread_mutex_t flow_lock;	/**< serialises the flow ops */
	TAILQ_HEAD(, rte_flow) flows;	/**< user and internal rules */
	uint32_t nb_user_flows;		/**< user rules in flows */
	uint32_t nb_comp_flows;		/**< of them, with companions */
	uint32_t nb_sw_frag_flows;	/**< of them, a condition in software */
	void *rule_tree;		/**< user rules by match (tsearch) */
	LIST_HEAD(, vbr_rss) rss_objs;	/**< hash QPs shared by rules */
	struct vbr_rss_table *rss_table; /**< rss_objs by hash (vbr_rss.c) */
	struct vbr_count_port *count_port; /**< indirect COUNTs and AGE */
	uint32_t flow_tag_rules;	/**< rules with a tag (Rx reads) */
	struct vbr_rx_act_table *rx_act; /**< what tags mean (vbr_rxtx.h) */
	struct vbr_tags *tags;		/**< who uses which tag (vbr_steer.c) */
	struct vbr_mtr_port *mtr;	/**< rte_mtr objects (vbr_mtr.c) */
	unsigned int isolated:1;	/**< rte_flow_isolate(): no defaults */
	unsigned int flow_lock_init:1;	/**< flow_lock initialised */
	unsigned int flows_on:1;	/**< rules go on the device (flow_lock) */
	/* Memory registration. */
	rte_spinlock_t mr_lock;		/**< serialises MR updates */
	TAILQ_HEAD(, vbr_mr) mrs;	/**< registered MRs */
	struct vbr_mr_table *mr_table;	/**< published lookup table */
	uint64_t mr_gen;		/**< bumped when an MR goes away */
	SLIST_HEAD(, vbr_mr_retired) mr_retired; /**< old tables */
	/* Stats. */
	struct vbr_glue_port_counters cnt_base; /**< at the last reset */
	rte_spinlock_t qp_cnt_lock;	/**< guards qp_cnt_base */
	/** QP counters at the last reset (a fixed array, never freed). */
	struct vbr_qp_cnt_base qp_cnt_base[VBR_STATS_QP_CNT_MAX];
	unsigned int nb_qp_cnt_base;	/**< entries of qp_cnt_base */
	/**
	 * VBR_GLUE_CNT_* the device xstats show, from the first read that
	 * worked (atomic; 0: none yet): a failed read later does not move
	 * the xstats after them.
	 */
	uint32_t xstats_valid;
	/* Tx rate limits and rte_tm (vbr_tm.c). */
	struct vbr_tm *tm;		/**< made on first use (atomic) */
};

/* vbr.c */
int vbr_dev_close(struct rte_eth_dev *dev);
int vbr_port_rebind(struct vbr_priv *priv);
int vbr_port_set_mtu(struct vbr_priv *priv, uint16_t mtu);
int vbr_port_set_link(struct vbr_priv *priv, bool up);
int vbr_port_sync_mtu(struct vbr_priv *priv);
int vbr_port_apply_mtu(struct vbr_priv *priv);

/* vbr_ethdev.c */
extern const struct eth_dev_ops vbr_dev_ops;
void vbr_dev_release_queues(struct rte_eth_dev *dev);
int vbr_link_update(struct rte_eth_dev *dev, int wait_to_complete);
/** Find a VF's netdev and tell it mac_addrs[0] (probe). */
int vbr_vport_init(struct vbr_priv *priv);
/** Take off the VF's netdev what the port put there (close). */
void vbr_vport_restore(struct vbr_priv *priv);
/*
 * Test hook: called by vbr_link_update() between its port query and its
 * store of the link (NULL: none).
 */
extern void (*vbr_link_update_hook)(struct rte_eth_dev *dev);

/* vbr_stats.c */
int vbr_stats_fill(struct rte_eth_dev *dev, struct rte_eth_stats *stats,
		   struct vbr_eth_qstats *qstats);
#if VBR_ETH_QSTATS
int vbr_stats_get(struct rte_eth_dev *dev, struct rte_eth_stats *stats,
		  struct eth_queue_stats *qstats);
#else
int vbr_stats_get(struct rte_eth_dev *dev, struct rte_eth_stats *stats);
#endif
int vbr_stats_reset(struct rte_eth_dev *dev);
int vbr_xstats_get_names(struct rte_eth_dev *dev,
			 struct rte_eth_xstat_name *names, unsigned int size);
int vbr_xstats_get(struct rte_eth_dev *dev, struct rte_eth_xstat *xstats,
		   unsigned int size);
void vbr_stats_release(struct vbr_priv *priv);
void vbr_tel_write_lock(void);
void vbr_tel_write_unlock(void);
void vbr_tel_port_add(struct rte_eth_dev *dev);
void vbr_tel_port_del(struct rte_eth_dev *dev);
struct rte_eth_dev *vbr_tel_get(uint16_t port_id);
void vbr_tel_put(void);

/* vbr_steer.c (rules: vbr_steer.h) */
int vbr_steer_probe(struct vbr_priv *priv);
int vbr_steer_start(struct vbr_priv *priv);
void vbr_steer_stop(struct vbr_priv *priv);
int vbr_steer_sync(struct vbr_priv *priv);
void vbr_steer_flush(struct vbr_priv *priv, bool internal);
void vbr_steer_release(struct vbr_priv *priv);
uint64_t vbr_steer_vlan_dropped(struct vbr_priv *priv);
uint64_t vbr_steer_comp_unmatched(struct vbr_priv *priv);
void vbr_steer_flow_counts(struct vbr_priv *priv, uint64_t out[3]);
int vbr_steer_rss_configure(struct vbr_priv *priv);
int vbr_steer_reta_update(struct rte_eth_dev *dev,
			  struct rte_eth_rss_reta_entry64 *reta_conf,
			  uint16_t reta_size);
int vbr_steer_reta_query(struct rte_eth_dev *dev,
			 struct rte_eth_rss_reta_entry64 *reta_conf,
			 uint16_t reta_size);
int vbr_steer_rss_hash_update(struct rte_eth_dev *dev,
			      struct rte_eth_rss_conf *rss_conf);
int vbr_steer_rss_hash_conf_get(struct rte_eth_dev *dev,
				struct rte_eth_rss_conf *rss_conf);

struct vbr_rx_act_table *vbr_rx_act_table_get(struct vbr_priv *priv);

/* vbr_mtr.c */
int vbr_mtr_ops_get(struct rte_eth_dev *dev, void *arg);
struct vbr_mtr *vbr_mtr_rule_get(struct vbr_priv *priv,
				 struct vbr_flow_desc *d,
				 struct rte_flow_error *error);
struct vbr_mtr *vbr_mtr_rule_check(struct vbr_priv *priv,
				   struct vbr_flow_desc *d,
				   struct rte_flow_error *error);
int vbr_mtr_missing_queue(const struct vbr_mtr *m, uint16_t nb_rxq);
void vbr_mtr_rule_put(struct vbr_mtr *m);
unsigned int vbr_mtr_handoff_drain(struct vbr_priv *priv, uint16_t q);
uint64_t vbr_mtr_handoff_freed(const struct vbr_priv *priv);
void vbr_mtr_release(struct vbr_priv *priv);

/* vbr_rxq.c */
int vbr_rx_queue_setup(struct rte_eth_dev *dev, uint16_t idx, uint16_t desc,
		       unsigned int socket,
		       const struct rte_eth_rxconf *conf,
		       struct rte_mempool *mp);
void vbr_rx_queue_release(struct rte_eth_dev *dev, uint16_t idx);
int vbr_rxq_check_mtu(struct rte_eth_dev *dev, uint16_t mtu);
int vbr_rxq_adjust_mtu(struct rte_eth_dev *dev);
/* Rx offloads: what the device reports, VLAN strip, the device clock. */
uint64_t vbr_rx_offload_capa(const struct vbr_priv *priv);
uint64_t vbr_rx_queue_offload_capa(const struct vbr_priv *priv);
int vbr_rxq_vlan_strip_set(struct rte_eth_dev *dev);
int vbr_read_clock(struct rte_eth_dev *dev, uint64_t *clock);
int vbr_rx_queue_start(struct rte_eth_dev *dev, uint16_t idx);
int vbr_rx_queue_stop(struct rte_eth_dev *dev, uint16_t idx);
int vbr_rxq_start_all(struct rte_eth_dev *dev);
void vbr_rxq_info_get(struct rte_eth_dev *dev, uint16_t idx,
		      struct rte_eth_rxq_info *qinfo);
int vbr_rx_burst_mode_get(struct rte_eth_dev *dev, uint16_t idx,
			  struct rte_eth_burst_mode *mode);
vbr_rx_queue_count_t vbr_rx_queue_count(void *rxq);
int vbr_rx_descriptor_status(void *rxq, uint16_t offset);

/* vbr_rss.c (the queue sets are declared in vbr_flow.h) */
uint16_t vbr_rss_reta_size(const struct vbr_priv *priv);

/* vbr_txq.c */
int vbr_tx_queue_setup(struct rte_eth_dev *dev, uint16_t idx, uint16_t desc,
		       unsigned int socket,
		       const struct rte_eth_txconf *conf);
void vbr_tx_queue_release(struct rte_eth_dev *dev, uint16_t idx);
int vbr_tx_queue_start(struct rte_eth_dev *dev, uint16_t idx);
int vbr_tx_queue_stop(struct rte_eth_dev *dev, uint16_t idx);
void vbr_txq_info_get(struct rte_eth_dev *dev, uint16_t idx,
		      struct rte_eth_txq_info *qinfo);
int vbr_tx_burst_mode_get(struct rte_eth_dev *dev, uint16_t idx,
			  struct rte_eth_burst_mode *mode);
int vbr_tx_descriptor_status(void *txq, uint16_t offset);
int vbr_txq_start(struct vbr_txq *txq);
void vbr_txq_stop(struct vbr_txq *txq);
uint32_t vbr_max_frame(struct vbr_priv *priv);
/* Tx offloads the device reports. */
uint64_t vbr_tx_offload_capa(const struct vbr_priv *priv);
void vbr_txq_probe_limits(struct vbr_priv *priv);
uint16_t vbr_tx_desc_max(const struct vbr_priv *priv, uint64_t offloads);

/* vbr_tm.c */
int vbr_set_queue_rate_limit(struct rte_eth_dev *dev, uint16_t queue_idx,
			     uint32_t tx_rate);
int vbr_tm_ops_get(struct rte_eth_dev *dev, void *arg);
int vbr_tm_txq_ready(struct vbr_txq *txq);
/*
 * Test hook: called by vbr_tm_txq_ready() between reading the queue's
 * wanted limit and putting it on the QP (NULL: none).
 */
extern void (*vbr_tm_ready_hook)(struct vbr_txq *txq);
void vbr_tm_release(struct vbr_priv *priv);

/* vbr_mr.c */
int vbr_mr_register_mempool(struct vbr_priv *priv, struct rte_mempool *mp);
int vbr_mr_start(struct vbr_priv *priv);
void vbr_mr_release(struct vbr_priv *priv);

/* vbr_mp.c */
extern const struct eth_dev_ops vbr_sec_dev_ops;
int vbr_mp_init(struct vbr_priv *priv);
void vbr_mp_uninit(struct vbr_priv *priv);
int vbr_mp_probe_secondary(struct rte_vdev_device *vdev);

/* vbr_intr.c */
int vbr_intr_install(struct vbr_priv *priv);
void vbr_intr_uninstall(struct vbr_priv *priv);
int vbr_rxq_intr_channel(struct vbr_rxq *rxq);
void vbr_rxq_intr_ack(struct vbr_rxq *rxq);
int vbr_rx_intr_start(struct rte_eth_dev *dev);
void vbr_rx_intr_stop(struct rte_eth_dev *dev);
int vbr_rx_queue_intr_enable(struct rte_eth_dev *dev, uint16_t idx);
int vbr_rx_queue_intr_disable(struct rte_eth_dev *dev, uint16_t idx);
int vbr_get_monitor_addr(void *rxq, struct rte_power_monitor_cond *pmc);

#endif /* VBR_H */
