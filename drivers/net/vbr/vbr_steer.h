/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The port's rules as vbr_steer.c keeps them, for the rte_flow ops of
 * vbr_flow_ops.c (query, dump). Every field is read and written under the
 * port's flow_lock.
 */

#ifndef VBR_STEER_H
#define VBR_STEER_H

#include <stdint.h>
#include <sys/queue.h>

#include <infiniband/verbs.h>
#include <rte_flow.h>

#include "vbr_flow.h"

/** Tells a live rule of ours from anything else handed to destroy. */
#define VBR_FLOW_MAGIC 0x76627266u /* "vbrf" */

/** Tiers of the internal rules, in the order a frame meets them. */
enum vbr_steer_tier {
	VBR_STEER_TIER_USER,	/**< a user rule */
	VBR_STEER_TIER_ACCEPT,	/**< promiscuous, all-multicast, listed VIDs */
	VBR_STEER_TIER_VLAN_DROP, /**< tagged frames of no listed VID */
	VBR_STEER_TIER_ADDR,	/**< an address, any VLAN or none */
};

/** One verbs flow of a rule: the rule for one packet type. */
struct vbr_steer_vf {
	struct ibv_flow *flow;		/**< on the device, NULL: not */
	struct ibv_flow *copy;		/**< its copy in a move */
	uint8_t pt;			/**< enum vbr_flow_pt */
};

/** What a companion does with the frames it catches (vbr_steer.c). */
enum vbr_steer_cfate {
	VBR_STEER_CF_ACCEPT,	/**< the port's queue set, as its own rules */
	VBR_STEER_CF_FILTERED,	/**< dropped as the VLAN filter drops */
	VBR_STEER_CF_UNMATCHED,	/**< dropped as a frame no rule takes */
};

/**
 * One companion verbs flow: a part of the frames its rule's specs match
 * and its meaning excludes, with the fate they have without the rule.
 */
struct vbr_steer_cf {
	struct ibv_flow *flow;		/**< on the device, NULL: not */
	struct vbr_rss *set;		/**< queue set its QP is of */
	uint16_t vid;			/**< VLAN TCI under vmask */
	uint16_t vmask;			/**< 0: the base companion's match */
	uint8_t base;			/**< vbr_flow_comp_attr()'s i */
	uint8_t pt;			/**< packet type of its hash QP */
	uint8_t fate;			/**< enum vbr_steer_cfate */
};

/**
 * A rule, user or internal, in the port's one list. QUEUE and RSS rules
 * and internal rules hold a reference to a queue set of vbr_rss.c; user
 * DROP rules sit on the port's set and move with it.
 */
struct rte_flow {
	TAILQ_ENTRY(rte_flow) next;	/**< in vbr_priv.flows */
	const struct vbr_priv *owner;	/**< port, NULL once destroyed */
	uint32_t magic;			/**< VBR_FLOW_MAGIC while live */
	uint32_t id;			/**< rule number, for messages */
	struct vbr_rss *rss;		/**< its queue set, NULL: the port's */
	struct vbr_rss *on;		/**< set its flows are on, or NULL */
	uint32_t tag;			/**< Rx action table entry, 0: none */
	uint64_t rx_act;		/**< what the entry says */
	struct vbr_mtr *mtr;		/**< METER: its meter, or NULL */
	uint16_t level;			/**< rte_flow priority level */
	uint16_t items_end;		/**< end of the item specs in attr */
	uint8_t fate;			/**< enum vbr_flow_fate */
	uint8_t count;			/**< enum vbr_flow_count */
	uint8_t tier;			/**< enum vbr_steer_tier */
	uint8_t l3;			/**< vbr_flow_desc.l3 */
	uint8_t l4;			/**< vbr_flow_desc.l4 */
	uint8_t sub;			/**< vbr_flow_desc.sub */
	uint8_t comp;			/**< vbr_flow_desc.comp */
	uint8_t sw_frag;		/**< vbr_flow_desc.sw_frag */
	uint8_t nb_vf;			/**< entries of vf */
	uint16_t nb_cf;			/**< entries of cf */
	struct vbr_steer_cf *cf;	/**< companions while on, NULL: none */
	struct vbr_count *cnt;		/**< counters bound, NULL: none */
	struct vbr_age *age;		/**< AGE state, NULL: none */
	struct vbr_steer_vf *vf;	/**< its verbs flows */
	struct ibv_flow_attr *attr;	/**< as translated, then the specs */
};

struct vbr_priv;

/* vbr_flow_ops.c */
uint32_t vbr_flow_rule_number(const struct vbr_priv *priv);

/* vbr_steer.c */
void vbr_steer_flow_caps(struct vbr_priv *priv, struct vbr_flow_caps *caps);
struct rte_flow *vbr_steer_rule_create(struct vbr_priv *priv,
				       struct vbr_flow_desc *d,
				       struct rte_flow_error *error);
int vbr_steer_rule_validate(struct vbr_priv *priv,
			    const struct vbr_flow_desc *d,
			    struct rte_flow_error *error);
void vbr_steer_rule_free(struct vbr_priv *priv, struct rte_flow *flow);
struct rte_flow *vbr_steer_rule_check(const struct vbr_priv *priv,
				      struct rte_flow *flow);
unsigned int vbr_steer_nb_vf_on(const struct rte_flow *flow);
const char *vbr_steer_fate_name(enum vbr_flow_fate fate);
const char *vbr_steer_cfate_name(uint8_t fate);
int vbr_steer_isolate(struct vbr_priv *priv, int enable,
		      struct rte_flow_error *error);
uint16_t vbr_steer_prio(const struct vbr_priv *priv,
			const struct rte_flow *flow, unsigned int pt);

#endif /* VBR_STEER_H */
