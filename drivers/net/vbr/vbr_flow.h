/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * rte_flow on verbs flow steering.
 *
 * vbr_flow.c translates an rte_flow rule (attributes, pattern, actions) into
 * an ibv_flow_attr followed by its ibv_flow_spec_* and a fate (queue, RSS or
 * drop). The translation is a pure function: no device, no port, so it is
 * tested table-driven. vbr_flow_expand() then splits a rule into one verbs
 * flow per packet type its RSS hashes differently (a ConnectX hash QP hashes
 * one L3 family and at most one L4 protocol). vbr_steer.c keeps the port's
 * rules and creates them on the device, vbr_flow_ops.c holds the rte_flow
 * ops, vbr_rss.c the queue sets and hash QPs the rules point at.
 */

#ifndef VBR_FLOW_H
#define VBR_FLOW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <infiniband/verbs.h>
#include <rte_ethdev.h>
#include <rte_flow.h>

/** Most rte_flow priority levels of user rules: 0 (first) to 15. */
#define VBR_FLOW_PRIO_LEVELS 16
/** Level of the internal rules in a translation: below every user rule. */
#define VBR_FLOW_PRIO_INTERNAL VBR_FLOW_PRIO_LEVELS
/** Verbs priorities of one rte_flow level: L4, L3, L2 sub-levels. */
#define VBR_FLOW_PRIO_SUB 3
/** Verbs priorities of the internal rules (vbr_steer.c: 3 + 1 + 3). */
#define VBR_FLOW_PRIO_INTERNAL_SPAN 7
/** Verbs priorities used at most: every level and the internal ones. */
#define VBR_FLOW_PRIOS_MAX (VBR_FLOW_PRIO_LEVELS * VBR_FLOW_PRIO_SUB + \
			    VBR_FLOW_PRIO_INTERNAL_SPAN)

/* Optional matches a device may refuse (found by trying, at probe). */
#define VBR_FLOW_F_IPV4_TTL (1u << 0)	/**< ipv4 ttl */
#define VBR_FLOW_F_IPV6_HOP (1u << 1)	/**< ipv6 hop limit */
#define VBR_FLOW_F_GRE_CKS (1u << 2)	/**< gre C, K, S bits */
#define VBR_FLOW_F_ESP (1u << 3)	/**< esp item */
#define VBR_FLOW_F_MPLS (1u << 4)	/**< mpls item */
#define VBR_FLOW_F_VXLAN (1u << 5)	/**< vxlan item */
#define VBR_FLOW_F_FRAG (1u << 6)	/**< ipv4/ipv6 fragment matches */
#define VBR_FLOW_F_NUM 7		/**< number of them */

/*
 * Companion rules: frames a rule must not take although its verbs specs
 * match them (verbs cannot say the condition), caught at a better verbs
 * priority and delivered on the rule's queue set, unmarked, uncounted.
 */
#define VBR_FLOW_COMP_TAGGED (1u << 0)	/**< has_vlan 0: C-tagged frames */
#define VBR_FLOW_COMP_V6_EXT (1u << 1)	/**< has_frag_ext 0: IPv6 ext hdrs */
/** Verbs flows of the companions of a rule, per bit: 2 and 5. */
#define VBR_FLOW_COMP_MAX 7

/** Packet types of the RSS expansion, parents before children. */
enum vbr_flow_pt {
	VBR_FLOW_PT_L2,		/**< any frame */
	VBR_FLOW_PT_IPV4,	/**< IPv4 */
	VBR_FLOW_PT_IPV4_TCP,	/**< TCP over IPv4 */
	VBR_FLOW_PT_IPV4_UDP,	/**< UDP over IPv4 */
	VBR_FLOW_PT_IPV6,	/**< IPv6 */
	VBR_FLOW_PT_IPV6_TCP,	/**< TCP over IPv6 */
	VBR_FLOW_PT_IPV6_UDP,	/**< UDP over IPv6 */
	VBR_FLOW_PT_MAX,
};
/** VLAN argument of vbr_flow_internal_mac(): match any VLAN or none. */
#define VBR_FLOW_VLAN_ANY 0xffffu
/** Largest MARK id (as a ConnectX in Verbs mode). */
#define VBR_FLOW_MARK_MAX 0xfffffdu
/** Room for the verbs attr and all specs of one rule. */
#define VBR_FLOW_BUF_SIZE 1024
/** Specs in one verbs flow at most (uverbs: IB_FLOW_SPEC_SUPPORT_LAYERS). */
#define VBR_FLOW_MAX_SPECS 10
/** Toeplitz key length of an RSS action. */
#define VBR_FLOW_RSS_KEY_LEN 40
/** Queues an RSS action may list. */
#define VBR_FLOW_MAX_QUEUES RTE_MAX_QUEUES_PER_PORT

/** Where matching packets go. */
enum vbr_flow_fate {
	VBR_FLOW_FATE_NONE,	/**< internal rule: the port's hash QP */
	VBR_FLOW_FATE_QUEUE,	/**< one Rx queue */
	VBR_FLOW_FATE_RSS,	/**< spread over queues[] */
	VBR_FLOW_FATE_DROP,	/**< dropped (IBV_FLOW_SPEC_ACTION_DROP) */
};

/** The counters a rule binds (IBV_FLOW_SPEC_ACTION_COUNT). */
enum vbr_flow_count {
	VBR_FLOW_COUNT_NONE,	/**< no counters */
	VBR_FLOW_COUNT_RULE,	/**< COUNT: the rule's own counters */
	VBR_FLOW_COUNT_HIDDEN,	/**< AGE without COUNT: own, not queryable */
	VBR_FLOW_COUNT_INDIRECT, /**< INDIRECT: an indirect COUNT handle */
};

/** Largest AGE timeout, seconds (the 24-bit field of rte_flow). */
#define VBR_FLOW_AGE_MAX 0xffffffu

/** What the translation may assume of the port. */
struct vbr_flow_caps {
	uint16_t nb_rx_queues;	/**< queues must be below it; 0: no check */
	uint16_t prio_levels;	/**< user levels; 0: VBR_FLOW_PRIO_LEVELS */
	uint16_t nb_prios;	/**< verbs priorities of the device, or 0 */
	uint32_t no_fields;	/**< VBR_FLOW_F_* the device refuses */
	unsigned int internal:1; /**< internal default rule: no fate wanted */
	/** A verbs VLAN match takes any TPID, not C-tags only. */
	unsigned int vlan_any_tpid:1;
	unsigned int internal_count:1; /**< ... that may count */
};

/** A translated rule. */
struct vbr_flow_desc {
	enum vbr_flow_fate fate;	/**< where packets go */
	/**
	 * What the rule's tag means (VBR_RX_ACT_* of vbr_rxtx.h: MARK, FLAG,
	 * METER), 0: no tag. The TAG spec at tag_off gets the index of the
	 * port's Rx action table entry at creation.
	 */
	uint64_t rx_act;
	uint32_t meter_id;		/**< METER: the rte_mtr meter id */
	/** METER: the action, for errors while the caller's actions live. */
	const struct rte_flow_action *meter_act;
	uint16_t tag_off;		/**< TAG spec offset in u.buf */
	uint64_t hash_fields;		/**< IBV_RX_HASH_* of an RSS fate */
	uint8_t rss_key[VBR_FLOW_RSS_KEY_LEN]; /**< key, if has_key */
	unsigned int has_key:1;		/**< else the port's key */
	uint16_t nb_queues;		/**< entries of queues */
	uint16_t queues[VBR_FLOW_MAX_QUEUES]; /**< QUEUE/RSS target queues */
	uint8_t count;			/**< enum vbr_flow_count */
	unsigned int age:1;		/**< AGE action */
	uint32_t age_timeout;		/**< its timeout, seconds */
	void *age_context;		/**< its context, NULL: the rule */
	const struct rte_flow_action_handle *indirect; /**< INDIRECT conf */
	uint16_t count_off;		/**< COUNT spec offset in u.buf */
	uint16_t items_end;		/**< end of the item specs in u.buf */
	uint16_t attr_size;		/**< bytes of attr and specs */
	uint64_t rss_types;		/**< RSS types of an RSS fate */
	uint8_t l3;			/**< outer L3: 0 any, 4, 6, 0xff other */
	uint8_t l4;			/**< outer L4: 0 any, 6, 17, 0xff other */
	uint8_t sub;			/**< deepest layer: 0 L4, 1 L3, 2 L2 */
	uint8_t comp;			/**< VBR_FLOW_COMP_* it needs */
	/**
	 * The fragment condition kept in software (VBR_RX_FRAG_* of
	 * vbr_rxtx.h), 0: none; with a mark or flag also in rx_act.
	 */
	uint8_t sw_frag;
	union {
		struct ibv_flow_attr attr;	/**< followed by the specs */
		uint8_t buf[VBR_FLOW_BUF_SIZE];	/**< room for both */
	} u;				/**< what ibv_create_flow gets */
};

/* vbr_flow.c */
int vbr_flow_prepare(const struct vbr_flow_caps *caps,
		     const struct rte_flow_attr *attr,
		     const struct rte_flow_item pattern[],
		     const struct rte_flow_action actions[],
		     struct vbr_flow_desc *out, struct rte_flow_error *error);
uint64_t vbr_flow_rss_fields(uint64_t types);
uint64_t vbr_flow_pt_fields(uint64_t types, unsigned int pt);

/** The verbs flows of a rule: one per packet type, parents first. */
struct vbr_flow_exp {
	uint8_t nb;				/**< entries of pt */
	uint8_t pt[VBR_FLOW_PT_MAX];		/**< enum vbr_flow_pt */
};
void vbr_flow_expand(const struct vbr_flow_desc *d, uint64_t types,
		     struct vbr_flow_exp *e);
uint8_t vbr_flow_pt_sub(const struct vbr_flow_desc *d, unsigned int pt);
size_t vbr_flow_expand_attr(const struct ibv_flow_attr *attr,
			    uint16_t items_end, uint8_t l3, uint8_t l4,
			    unsigned int pt, uint16_t priority, uint8_t *buf,
			    size_t room);
const char *vbr_flow_pt_name(unsigned int pt);
unsigned int vbr_flow_nb_comp(uint8_t comp);
size_t vbr_flow_comp_attr(const struct ibv_flow_attr *attr,
			  uint16_t items_end, uint8_t comp, unsigned int i,
			  uint16_t priority, uint8_t *buf, size_t room);
uint8_t vbr_flow_comp_bit(uint8_t comp, unsigned int i);
size_t vbr_flow_comp_fate(uint8_t *buf, size_t room, uint16_t vid,
			  uint16_t vmask, bool drop,
			  struct ibv_counters *counters);
bool vbr_flow_attr_intersect(const struct ibv_flow_attr *a, uint16_t a_end,
			     const struct ibv_flow_attr *b, uint16_t b_end);
const char *vbr_flow_f_name(uint32_t bit);
int vbr_flow_error(struct rte_flow_error *error, int code,
		   enum rte_flow_error_type type, const void *cause,
		   const char *fmt, ...) __rte_format_printf(5, 6);
void vbr_flow_dump_attr(FILE *file, const struct ibv_flow_attr *attr);
bool vbr_flow_attr_keep_prio(uint8_t *buf, size_t room);
void vbr_flow_spec_set_counters(uint8_t *pos, struct ibv_counters *counters);
void vbr_flow_spec_set_tag(uint8_t *pos, uint32_t tag);

/* vbr_flow_ops.c */
struct vbr_priv;
extern const struct rte_flow_ops vbr_flow_ops;
int vbr_flow_ops_get(struct rte_eth_dev *dev, const struct rte_flow_ops **ops);
void vbr_flow_release(struct vbr_priv *priv);

/* vbr_count.c */
/** A counters object: packets at index 0, bytes at index 1. */
struct vbr_count {
	struct ibv_counters *obj;	/**< the verbs object */
	uint64_t base[2];		/**< values at the last reset */
	uint64_t last[2];		/**< last values read, unbound: kept */
	uint32_t bound;			/**< verbs flows binding obj */
};
struct vbr_age;
int vbr_count_init(struct vbr_priv *priv, struct vbr_count *cnt,
		   struct rte_flow_error *error);
void vbr_count_fini(struct vbr_priv *priv, struct vbr_count *cnt);
void vbr_count_bind(struct vbr_count *cnt);
void vbr_count_unbind(struct vbr_priv *priv, struct vbr_count *cnt);
int vbr_count_query(struct vbr_priv *priv, struct vbr_count *cnt,
		    struct rte_flow_query_count *q,
		    struct rte_flow_error *error);
struct vbr_count *vbr_count_handle_get(struct vbr_priv *priv,
			const struct rte_flow_action_handle *handle,
			struct rte_flow_error *error);
void vbr_count_handle_put(struct vbr_priv *priv, struct vbr_count *cnt);
struct rte_flow_action_handle *
vbr_count_handle_create(struct rte_eth_dev *dev,
			const struct rte_flow_indir_action_conf *conf,
			const struct rte_flow_action *action,
			struct rte_flow_error *error);
int vbr_count_handle_destroy(struct rte_eth_dev *dev,
			     struct rte_flow_action_handle *handle,
			     struct rte_flow_error *error);
int vbr_count_handle_update(struct rte_eth_dev *dev,
			    struct rte_flow_action_handle *handle,
			    const void *update, struct rte_flow_error *error);
int vbr_count_handle_query(struct rte_eth_dev *dev,
			   const struct rte_flow_action_handle *handle,
			   void *data, struct rte_flow_error *error);
struct vbr_age *vbr_age_add(struct vbr_priv *priv, struct vbr_count *cnt,
			    uint32_t timeout, void *context,
			    struct rte_flow_error *error);
void vbr_age_del(struct vbr_priv *priv, struct vbr_age *age);
void vbr_age_query(struct vbr_priv *priv, struct vbr_age *age,
		   struct rte_flow_query_age *q);
int vbr_age_get_aged(struct rte_eth_dev *dev, void **contexts,
		     uint32_t nb_contexts, struct rte_flow_error *error);
void vbr_count_release(struct vbr_priv *priv);

/* vbr_rss.c */
struct vbr_rss;
const uint8_t *vbr_rss_default_key_get(void);
struct vbr_rss *vbr_rss_get(struct vbr_priv *priv, const uint16_t *queues,
			    uint16_t nb_queues, const uint8_t *key,
			    uint64_t types);
void vbr_rss_put(struct vbr_priv *priv, struct vbr_rss *rss);
void vbr_rss_ref(struct vbr_rss *rss);
uint64_t vbr_rss_types(const struct vbr_rss *rss);
bool vbr_rss_same_place(const struct vbr_priv *priv, const struct vbr_rss *a,
			const struct vbr_rss *b);
struct ibv_qp *vbr_rss_qp(struct vbr_priv *priv, struct vbr_rss *rss,
			  unsigned int pt);
int vbr_rss_missing_queue(const struct vbr_priv *priv,
			  const struct vbr_rss *rss);
void vbr_rss_stop(struct vbr_priv *priv);
void vbr_rss_release(struct vbr_priv *priv);
void vbr_rss_dump(FILE *file, const struct vbr_rss *rss);
void vbr_rss_dump_verbs(FILE *file, const struct vbr_priv *priv);
void vbr_rss_dump_queues(FILE *file, const uint16_t *q, unsigned int n);
unsigned int vbr_rss_nb_sets(const struct vbr_priv *priv, unsigned int *qps);
unsigned int vbr_rss_qpns(const struct vbr_priv *priv, uint32_t *qpn,
			  unsigned int max);

#endif /* VBR_FLOW_H */
