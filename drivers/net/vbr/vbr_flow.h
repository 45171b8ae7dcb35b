/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * rte_flow on verbs flow steering.
 *
 * vbr_flow.c translates an rte_flow rule (attributes, pattern, actions) into
 * an ibv_flow_attr followed by its ibv_flow_spec_* and a fate (queue, RSS or
 * drop). The translation is a pure function: no device, no port, so it is
 * tested table-driven. vbr_flow_ops.c keeps the port's rules and creates them
 * on the device; vbr_rss.c holds the hash QPs the rules point at.
 */

#ifndef VBR_FLOW_H
#define VBR_FLOW_H

#include <stdint.h>
#include <stdio.h>

#include <infiniband/verbs.h>
#include <rte_ethdev.h>
#include <rte_flow.h>

/** rte_flow priority levels of user rules: 0 (first) to 15. */
#define VBR_FLOW_PRIO_LEVELS 16
/** Verbs priority of the internal default rules: below every user rule. */
#define VBR_FLOW_PRIO_INTERNAL VBR_FLOW_PRIO_LEVELS
/** VLAN argument of vbr_flow_internal_mac(): match any VLAN or none. */
#define VBR_FLOW_VLAN_ANY 0xffffu
/** Largest MARK id: tag = id + 1, 0 is "no tag", VBR_FLOW_TAG_FLAG is FLAG. */
#define VBR_FLOW_MARK_MAX 0xfffffdu
/** Verbs tag of a FLAG action. */
#define VBR_FLOW_TAG_FLAG 0xffffffu
/** Room for the verbs attr and all specs of one rule. */
#define VBR_FLOW_BUF_SIZE 1024
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
	unsigned int internal:1; /**< internal default rule: no fate wanted */
};

/** A translated rule. */
struct vbr_flow_desc {
	enum vbr_flow_fate fate;	/**< where packets go */
	uint32_t tag;			/**< verbs tag of MARK/FLAG, 0: none */
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
	uint16_t attr_size;		/**< bytes of attr and specs */
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
int vbr_flow_error(struct rte_flow_error *error, int code,
		   enum rte_flow_error_type type, const void *cause,
		   const char *fmt, ...) __rte_format_printf(5, 6);
void vbr_flow_dump_attr(FILE *file, const struct ibv_flow_attr *attr);
void vbr_flow_spec_set_counters(uint8_t *pos, struct ibv_counters *counters);

/* vbr_flow_ops.c */
struct vbr_priv;
extern const struct rte_flow_ops vbr_flow_ops;
int vbr_flow_ops_get(struct rte_eth_dev *dev, const struct rte_flow_ops **ops);
int vbr_flow_start(struct vbr_priv *priv);
void vbr_flow_stop(struct vbr_priv *priv);
void vbr_flow_release(struct vbr_priv *priv);
struct ibv_flow *vbr_flow_internal_mac(struct vbr_priv *priv,
				       const struct rte_ether_addr *mac,
				       uint16_t vid);
struct ibv_flow *vbr_flow_internal_default(struct vbr_priv *priv,
					   enum ibv_flow_attr_type type);
int vbr_flow_rebind(struct vbr_priv *priv, struct ibv_qp *old_qp,
		    struct ibv_qp *new_qp);
void vbr_flow_rebind_commit(struct vbr_priv *priv, struct ibv_qp *new_qp);
void vbr_flow_rebind_abort(struct vbr_priv *priv);

/* vbr_count.c */
/** A counters object: packets at index 0, bytes at index 1. */
struct vbr_count {
	struct ibv_counters *obj;	/**< the verbs object */
	uint64_t base[2];		/**< values at the last reset */
};
struct vbr_age;
int vbr_count_init(struct vbr_priv *priv, struct vbr_count *cnt,
		   struct rte_flow_error *error);
void vbr_count_fini(struct vbr_priv *priv, struct vbr_count *cnt);
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
struct vbr_rss *vbr_rss_get(struct vbr_priv *priv, const uint16_t *queues,
			    uint16_t nb_queues, const uint8_t *key,
			    uint64_t fields);
void vbr_rss_put(struct vbr_priv *priv, struct vbr_rss *rss);
struct ibv_qp *vbr_rss_qp(struct vbr_priv *priv, struct vbr_rss *rss);
int vbr_rss_missing_queue(const struct vbr_priv *priv,
			  const struct vbr_rss *rss);
void vbr_rss_stop(struct vbr_priv *priv);
void vbr_rss_release(struct vbr_priv *priv);
void vbr_rss_dump(FILE *file, const struct vbr_rss *rss);
unsigned int vbr_rss_nb_qps(const struct vbr_priv *priv);

#endif /* VBR_FLOW_H */
