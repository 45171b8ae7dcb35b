/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * rte_mtr: meter profiles, policies and meters, policed in the Rx burst.
 *
 * Verbs has no meter object, so the device only steers and tags: a rule
 * with METER carries a TAG whose Rx action table entry (vbr_rxtx.h) names
 * the meter's slot, and the Rx burst colours each frame with DPDK's
 * rte_meter (vbr_mtr.h: lock-free, shared by every queue and lcore) and
 * does what the meter's policy says for that colour.
 *
 * - Metered length: the frame as received and as COUNT counts it, from the
 *   destination MAC to the end of the payload, no FCS; packet mode counts
 *   frames.
 * - Policies: per colour at most one of QUEUE, DROP, PASSTHRU (or nothing:
 *   passthru), and MARK or FLAG next to QUEUE or PASSTHRU. The device
 *   steers the rule's frames to the rule's own fate, or, when the rule has
 *   none (the usual "actions meter / end"), to the first QUEUE of the
 *   policy in green, yellow, red order: PASSTHRU means that queue. A colour
 *   whose QUEUE is another queue than the one a frame arrived on is handed
 *   to that queue through a multi-producer ring, which its Rx burst
 *   drains first (rule or no rule); a frame that finds the ring full, or
 *   its queue gone, is dropped and counted as dropped (only) in the
 *   meter's stats; dev_stop and the queue's release free what waits in
 *   it. RSS in a policy is refused, and so is a QUEUE the port lacks once
 *   dev_configure set its Rx queue count (flow create and dev_start check
 *   again: the port may be reconfigured with fewer queues since).
 * - Colour-aware: each meter has a table per input colour protocol of
 *   rte_mtr (outer and inner VLAN: 16 entries by PCP << 1 | DEI; outer
 *   and inner IP: 64 by DSCP, IPv4's or IPv6 traffic class'); create's
 *   dscp_table fills both IP tables, its vlan_table both VLAN ones, and
 *   enables outer_ip (priority 0) and outer_vlan (priority 1) when given;
 *   color_in_protocol_set enables a protocol at a priority (0 first; equal
 *   priorities go by the protocol's bit), the table updates replace one
 *   protocol's table. A frame takes the colour of the first protocol whose
 *   header it has, else default_input_color; no protocol enabled:
 *   colour-blind. use_prev_mtr_color (meter chaining) is refused.
 * - A disabled meter passes each frame in its input colour (green when
 *   colour-blind) and counts it.
 * - stats_mask: the eight RTE_MTR_STATS_* bits; others are ignored (the
 *   usual 0xffff means all).
 *
 * Everything here runs under the port's flow_lock, as the rules that name
 * the meters do.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mtr_driver.h>
#include <rte_ring.h>

#include "vbr.h"
#include "vbr_mtr.h"
#include "vbr_utils.h"

/** Every count a meter keeps; other stats_mask bits are ignored. */
#define VBR_MTR_STATS_ALL (RTE_MTR_STATS_N_PKTS_GREEN | \
	RTE_MTR_STATS_N_PKTS_YELLOW | RTE_MTR_STATS_N_PKTS_RED | \
	RTE_MTR_STATS_N_PKTS_DROPPED | RTE_MTR_STATS_N_BYTES_GREEN | \
	RTE_MTR_STATS_N_BYTES_YELLOW | RTE_MTR_STATS_N_BYTES_RED | \
	RTE_MTR_STATS_N_BYTES_DROPPED)

/** Frames a queue's hand-off ring holds. */
#define VBR_MTR_RING_SIZE 1024

/** What profiles, policies and meters have in common: a list, an id. */
struct vbr_mtr_obj {
	TAILQ_ENTRY(vbr_mtr_obj) next;	/**< in its list of the port */
	uint32_t id;			/**< rte_mtr id */
	uint32_t refs;			/**< users: meters, or rules */
};

TAILQ_HEAD(vbr_mtr_list, vbr_mtr_obj);

struct vbr_mtr_profile {
	struct vbr_mtr_obj obj;		/**< id; refs: meters using it */
	unsigned int used:1;		/**< ever used: kept until close */
	struct rte_mtr_meter_profile params;	/**< as added */
	struct vbr_mtr_prm prm;		/**< as rte_meter runs it */
};

struct vbr_mtr_policy {
	struct vbr_mtr_obj obj;		/**< id; refs: meters using it */
	struct vbr_mtr_pact act[RTE_COLORS];	/**< per colour */
};

struct vbr_mtr {
	struct vbr_mtr_obj obj;		/**< id; refs: rules naming it */
	uint32_t slot;			/**< in the Rx action table's mtr[] */
	uint64_t stats_mask;		/**< RTE_MTR_STATS_* reported */
	struct vbr_mtr_profile *profile; /**< its profile */
	struct vbr_mtr_policy *policy;	/**< its policy */
	struct vbr_mtr_rt *rt;		/**< what the datapath runs */
	struct vbr_mtr_cnt base;	/**< counts at the last clear */
	uint64_t in_mask;		/**< input colour protocols on */
	uint32_t in_prio[VBR_MTR_IN_PROTOS]; /**< their priorities */
	uint8_t in_default;		/**< default_input_color */
};

/** A kind of object: its list in the port, and how errors name it. */
enum vbr_mtr_kind {
	VBR_MTR_PROFILE,
	VBR_MTR_POLICY,
	VBR_MTR_METER,
	VBR_MTR_KINDS,
};

/**
 * The objects of one kind by id, for lookups: an rte_hash (extendable
 * buckets, so it takes cap entries whatever their hashes) made again four
 * times as large when full, so that n objects cost O(n) to add, not the
 * O(n^2) of a list walk per add.
 */
struct vbr_mtr_index {
	struct rte_hash *h;		/**< id -> object; NULL: none yet */
	uint32_t cap;			/**< entries h takes */
	uint32_t n;			/**< entries in h */
};

/** Entries of a kind's first index; each growth multiplies them by 4. */
#define VBR_MTR_INDEX_MIN 64u

/** A port's meters (vbr_priv.mtr). */
struct vbr_mtr_port {
	struct vbr_mtr_list objs[VBR_MTR_KINDS]; /**< by kind, add order */
	struct vbr_mtr_index index[VBR_MTR_KINDS]; /**< by kind, by id */
	int socket;			/**< NUMA node of the indexes */
	struct vbr_mtr_list retired;	/**< deleted profiles once used */
	uint32_t nb_free;		/**< entries of free_slots */
	uint32_t free_head;		/**< the one freed first */
	uint32_t next_slot;		/**< slots [0, next_slot) were used */
	uint32_t *free_slots;		/**< slots to reuse, a FIFO (runtime
					 * kept): idle the longest first */
	uint64_t handoff_freed;		/**< ring frames freed at release */
};

/* How an error names each kind. */
static const struct {
	enum rte_mtr_error_type type;	/**< the object */
	enum rte_mtr_error_type id_type; /**< its id */
	const char *exists;		/**< EEXIST */
	const char *none;		/**< ENOENT */
	const char *busy;		/**< EBUSY */
	const char *nomem;		/**< ENOMEM */
} vbr_mtr_kinds[VBR_MTR_KINDS] = {
	[VBR_MTR_PROFILE] = {
		RTE_MTR_ERROR_TYPE_METER_PROFILE,
		RTE_MTR_ERROR_TYPE_METER_PROFILE_ID,
		"vbr: meter profile id already in use",
		"vbr: no meter profile with this id",
		"vbr: meter profile in use by a meter",
		"vbr: no memory for the meter profile",
	},
	[VBR_MTR_POLICY] = {
		RTE_MTR_ERROR_TYPE_METER_POLICY,
		RTE_MTR_ERROR_TYPE_METER_POLICY_ID,
		"vbr: meter policy id already in use",
		"vbr: no meter policy with this id",
		"vbr: meter policy in use by a meter",
		"vbr: no memory for the meter policy",
	},
	[VBR_MTR_METER] = {
		RTE_MTR_ERROR_TYPE_MTR_PARAMS,
		RTE_MTR_ERROR_TYPE_MTR_ID,
		"vbr: meter id already in use",
		"vbr: no meter with this id",
		"vbr: meter in use by a flow rule",
		"vbr: no memory for the meter",
	},
};

/* Messages with values: rte_mtr_error keeps the pointer, not a copy. */
static __thread char vbr_mtr_msg[160];

static const char *const vbr_mtr_colour[RTE_COLORS] = {
	"green", "yellow", "red",
};

/*
 * The EAL lcore indexes a meter has slots for: one above the largest
 * rte_lcore_index() of any lcore. EAL sets the indexes at init (sparse when
 * it auto-detects the cores of a taskset); a thread rte_thread_register()
 * adds has index -1 and uses the shared slot (vbr_mtr.h).
 */
static unsigned int
vbr_mtr_eal_slots(void)
{
	unsigned int i, n = 1;

	for (i = 0; i < RTE_MAX_LCORE; i++) {
		int idx = rte_lcore_index(i);

		if (idx >= 0 && (unsigned int)idx + 1 > n)
			n = (unsigned int)idx + 1;
	}
	return n;
}

static struct vbr_mtr_port *
vbr_mtr_port(struct vbr_priv *priv)
{
	struct vbr_mtr_port *mp = priv->mtr;

	if (mp != NULL)
		return mp;
	mp = calloc(1, sizeof(*mp));
	if (mp == NULL)
		return NULL;
	for (unsigned int k = 0; k < VBR_MTR_KINDS; k++)
		TAILQ_INIT(&mp->objs[k]);
	TAILQ_INIT(&mp->retired);
	mp->socket = priv->dev->device->numa_node;
	priv->mtr = mp;
	return mp;
}

/*
 * Make room in kind k's index for one more object: a first index, or one
 * four times as large with every object of the kind in it. 0 or -ENOMEM.
 */
static int
vbr_mtr_index_reserve(struct vbr_mtr_port *mp, enum vbr_mtr_kind k)
{
	static uint32_t made;	/* names are process-wide: unique ones */
	struct vbr_mtr_index *x = &mp->index[k];
	struct rte_hash_parameters hp = {
		.key_len = sizeof(uint32_t),
		.hash_func = rte_jhash,
		.socket_id = mp->socket,
		.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE,
	};
	char name[RTE_HASH_NAMESIZE];
	struct vbr_mtr_obj *o;
	struct rte_hash *h;

	if (x->h != NULL && x->n < x->cap)
		return 0;
	if (x->cap > UINT32_MAX / 4)
		return -ENOMEM;
	hp.entries = x->h != NULL ? 4 * x->cap : VBR_MTR_INDEX_MIN;
	snprintf(name, sizeof(name), "vbr_mtr_%d_%u", (int)getpid(),
		 __atomic_fetch_add(&made, 1, __ATOMIC_RELAXED));
	hp.name = name;
	h = rte_hash_create(&hp);
	if (h == NULL)
		return -ENOMEM;
	TAILQ_FOREACH(o, &mp->objs[k], next) {
		if (rte_hash_add_key_data(h, &o->id, o) != 0) {
			rte_hash_free(h);
			return -ENOMEM;
		}
	}
	rte_hash_free(x->h);
	x->h = h;
	x->cap = hp.entries;
	return 0;
}

/* The object of kind k with this id, or NULL. */
static struct vbr_mtr_obj *
vbr_mtr_obj_find(struct vbr_mtr_port *mp, enum vbr_mtr_kind k, uint32_t id)
{
	void *o;

	if (mp == NULL || mp->index[k].h == NULL ||
	    rte_hash_lookup_data(mp->index[k].h, &id, &o) < 0)
		return NULL;
	return o;
}

/*
 * Put o, new, in its list and index (room reserved by vbr_mtr_obj_new()).
 * Holds flow_lock.
 */
static void
vbr_mtr_obj_link(struct vbr_mtr_port *mp, enum vbr_mtr_kind k,
		 struct vbr_mtr_obj *o)
{
	struct vbr_mtr_index *x = &mp->index[k];

	/* Cannot fail: fewer entries than cap, extendable buckets. */
	if (rte_hash_add_key_data(x->h, &o->id, o) == 0)
		x->n++;
	else
		VBR_LOG(ERR, "rte_mtr object %u of kind %d: not indexed",
			o->id, (int)k);
	TAILQ_INSERT_TAIL(&mp->objs[k], o, next);
}

static struct vbr_mtr_profile *
vbr_mtr_profile_find(struct vbr_mtr_port *mp, uint32_t id)
{
	struct vbr_mtr_obj *o = vbr_mtr_obj_find(mp, VBR_MTR_PROFILE, id);

	return o != NULL ? container_of(o, struct vbr_mtr_profile, obj) : NULL;
}

static struct vbr_mtr_policy *
vbr_mtr_policy_find(struct vbr_mtr_port *mp, uint32_t id)
{
	struct vbr_mtr_obj *o = vbr_mtr_obj_find(mp, VBR_MTR_POLICY, id);

	return o != NULL ? container_of(o, struct vbr_mtr_policy, obj) : NULL;
}

static struct vbr_mtr *
vbr_mtr_find(struct vbr_mtr_port *mp, uint32_t id)
{
	struct vbr_mtr_obj *o = vbr_mtr_obj_find(mp, VBR_MTR_METER, id);

	return o != NULL ? container_of(o, struct vbr_mtr, obj) : NULL;
}

/*
 * A new zeroed object of kind k, size bytes, with this id, not yet in its
 * list. Holds flow_lock. NULL with *error set (EEXIST, ENOMEM).
 */
static struct vbr_mtr_obj *
vbr_mtr_obj_new(struct vbr_priv *priv, enum vbr_mtr_kind k, uint32_t id,
		size_t size, struct rte_mtr_error *error)
{
	struct vbr_mtr_port *mp = vbr_mtr_port(priv);
	struct vbr_mtr_obj *o;

	if (mp == NULL) {
		rte_mtr_error_set(error, ENOMEM, RTE_MTR_ERROR_TYPE_UNSPECIFIED,
				  NULL, "vbr: no memory for meters");
		return NULL;
	}
	if (vbr_mtr_obj_find(mp, k, id) != NULL) {
		rte_mtr_error_set(error, EEXIST, vbr_mtr_kinds[k].id_type,
				  NULL, vbr_mtr_kinds[k].exists);
		return NULL;
	}
	o = vbr_mtr_index_reserve(mp, k) == 0 ? calloc(1, size) : NULL;
	if (o == NULL) {
		rte_mtr_error_set(error, ENOMEM, vbr_mtr_kinds[k].type, NULL,
				  vbr_mtr_kinds[k].nomem);
		return NULL;
	}
	o->id = id;
	return o;
}

/*
 * Take the object of kind k with this id out of its list, unless in use.
 * Holds flow_lock. NULL with *error set (ENOENT, EBUSY).
 */
static struct vbr_mtr_obj *
vbr_mtr_obj_take(struct vbr_priv *priv, enum vbr_mtr_kind k, uint32_t id,
		 struct rte_mtr_error *error)
{
	struct vbr_mtr_obj *o = vbr_mtr_obj_find(priv->mtr, k, id);

	if (o == NULL) {
		rte_mtr_error_set(error, ENOENT, vbr_mtr_kinds[k].id_type,
				  NULL, vbr_mtr_kinds[k].none);
		return NULL;
	}
	if (o->refs != 0) {
		rte_mtr_error_set(error, EBUSY, vbr_mtr_kinds[k].id_type,
				  NULL, vbr_mtr_kinds[k].busy);
		return NULL;
	}
	TAILQ_REMOVE(&priv->mtr->objs[k], o, next);
	if (rte_hash_del_key(priv->mtr->index[k].h, &o->id) >= 0)
		priv->mtr->index[k].n--;
	return o;
}

static int
vbr_mtr_capabilities_get(struct rte_eth_dev *dev,
			 struct rte_mtr_capabilities *cap,
			 struct rte_mtr_error *error)
{
	RTE_SET_USED(dev);
	RTE_SET_USED(error);
	memset(cap, 0, sizeof(*cap));
	cap->n_max = VBR_MTR_MAX;
	cap->n_shared_max = VBR_MTR_MAX;
	cap->identical = 1;
	cap->shared_identical = 1;
	cap->shared_n_flows_per_mtr_max = UINT32_MAX;
	cap->chaining_n_mtrs_per_flow_max = 1;
	cap->meter_srtcm_rfc2697_n_max = VBR_MTR_MAX;
	cap->meter_trtcm_rfc2698_n_max = VBR_MTR_MAX;
	cap->meter_trtcm_rfc4115_n_max = VBR_MTR_MAX;
	cap->meter_rate_max = UINT64_MAX;
	cap->meter_policy_n_max = VBR_MTR_MAX;
	cap->color_aware_srtcm_rfc2697_supported = 1;
	cap->color_aware_trtcm_rfc2698_supported = 1;
	cap->color_aware_trtcm_rfc4115_supported = 1;
	cap->input_color_proto_mask = RTE_MTR_COLOR_IN_PROTO_OUTER_VLAN |
		RTE_MTR_COLOR_IN_PROTO_INNER_VLAN |
		RTE_MTR_COLOR_IN_PROTO_OUTER_IP |
		RTE_MTR_COLOR_IN_PROTO_INNER_IP;
	cap->separate_input_color_table_per_port = 1;	/* per meter */
	cap->srtcm_rfc2697_byte_mode_supported = 1;
	cap->srtcm_rfc2697_packet_mode_supported = 1;
	cap->trtcm_rfc2698_byte_mode_supported = 1;
	cap->trtcm_rfc2698_packet_mode_supported = 1;
	cap->trtcm_rfc4115_byte_mode_supported = 1;
	cap->trtcm_rfc4115_packet_mode_supported = 1;
	cap->stats_mask = VBR_MTR_STATS_ALL;
	return 0;
}

/* Check a profile; fill prm. 0 or a negative errno with *error set. */
static int
vbr_mtr_profile_check(const struct rte_mtr_meter_profile *params,
		      struct vbr_mtr_prm *prm, struct rte_mtr_error *error)
{
	const char *what;
	int ret;

	if (params == NULL)
		return -rte_mtr_error_set(error, EINVAL,
			RTE_MTR_ERROR_TYPE_METER_PROFILE, NULL,
			"vbr: meter profile: no parameters");
	switch (params->alg) {
	case RTE_MTR_SRTCM_RFC2697:
		what = "srtcm_rfc2697: cir and cbs or ebs must be non-zero";
		break;
	case RTE_MTR_TRTCM_RFC2698:
		what = "trtcm_rfc2698: cir, pir, cbs and pbs must be non-zero "
		       "and cir at most pir";
		break;
	case RTE_MTR_TRTCM_RFC4115:
		what = "trtcm_rfc4115: cir or eir and cbs or ebs must be "
		       "non-zero";
		break;
	default:
		return -rte_mtr_error_set(error, ENOTSUP,
			RTE_MTR_ERROR_TYPE_METER_PROFILE, NULL,
			"vbr: meter profile: algorithm not supported (srTCM "
			"RFC 2697, trTCM RFC 2698 and RFC 4115 are)");
	}
	ret = vbr_mtr_prm_config(prm, params);
	if (ret != 0)
		return -rte_mtr_error_set(error, -ret,
			RTE_MTR_ERROR_TYPE_METER_PROFILE, NULL, what);
	return 0;
}

static int
vbr_mtr_profile_add(struct rte_eth_dev *dev, uint32_t id,
		    struct rte_mtr_meter_profile *params,
		    struct rte_mtr_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct vbr_mtr_profile *p;
	struct vbr_mtr_obj *o;
	struct vbr_mtr_prm prm;
	int ret;

	ret = vbr_mtr_profile_check(params, &prm, error);
	if (ret != 0)
		return ret;
	pthread_mutex_lock(&priv->flow_lock);
	o = vbr_mtr_obj_new(priv, VBR_MTR_PROFILE, id, sizeof(*p), error);
	if (o != NULL) {
		p = container_of(o, struct vbr_mtr_profile, obj);
		p->params = *params;
		p->prm = prm;
		vbr_mtr_obj_link(priv->mtr, VBR_MTR_PROFILE, o);
	}
	pthread_mutex_unlock(&priv->flow_lock);
	return o != NULL ? 0 : -rte_errno;
}

static int
vbr_mtr_profile_delete(struct rte_eth_dev *dev, uint32_t id,
		       struct rte_mtr_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct vbr_mtr_obj *o;

	pthread_mutex_lock(&priv->flow_lock);
	o = vbr_mtr_obj_take(priv, VBR_MTR_PROFILE, id, error);
	/* A lcore may still read a profile once used through an old record. */
	if (o != NULL && container_of(o, struct vbr_mtr_profile, obj)->used)
		TAILQ_INSERT_TAIL(&priv->mtr->retired, o, next);
	else
		free(o);
	pthread_mutex_unlock(&priv->flow_lock);
	return o != NULL ? 0 : -rte_errno;
}

/*
 * One colour's actions of a policy; nb_rxq is the port's Rx queue count, or
 * -1 before dev_configure (then QUEUE is checked at flow create and
 * dev_start only). 0 or a negative errno, *error set.
 */
static int
vbr_mtr_policy_colour(const struct rte_flow_action *a, unsigned int colour,
		      int nb_rxq, struct vbr_mtr_pact *pa,
		      struct rte_mtr_error *error)
{
	const char *name = vbr_mtr_colour[colour];
	bool fate = false;
	char *msg = vbr_mtr_msg;
	int err = ENOTSUP;

	memset(pa, 0, sizeof(*pa));
	pa->fate = VBR_MTR_FATE_PASS;
	for (; a != NULL && a->type != RTE_FLOW_ACTION_TYPE_END; a++) {
		switch (a->type) {
		case RTE_FLOW_ACTION_TYPE_VOID:
			continue;
		case RTE_FLOW_ACTION_TYPE_MARK:
		case RTE_FLOW_ACTION_TYPE_FLAG:
			if (pa->mark != 0) {
				snprintf(msg, sizeof(vbr_mtr_msg), "vbr: meter policy: "
					 "%s actions: one mark or flag", name);
				goto refuse;
			}
			if (a->type == RTE_FLOW_ACTION_TYPE_FLAG) {
				pa->mark = 2;
				continue;
			}
			if (a->conf == NULL ||
			    ((const struct rte_flow_action_mark *)
			     a->conf)->id > VBR_FLOW_MARK_MAX) {
				snprintf(msg, sizeof(vbr_mtr_msg), "vbr: meter policy: "
					 "%s actions: mark id missing or above "
					 "%u", name, VBR_FLOW_MARK_MAX);
				goto refuse;
			}
			pa->mark = 1;
			pa->mark_id = ((const struct rte_flow_action_mark *)
				       a->conf)->id;
			continue;
		case RTE_FLOW_ACTION_TYPE_PASSTHRU:
		case RTE_FLOW_ACTION_TYPE_QUEUE:
		case RTE_FLOW_ACTION_TYPE_DROP:
			if (fate) {
				snprintf(msg, sizeof(vbr_mtr_msg), "vbr: meter policy: "
					 "%s actions: more than one fate "
					 "(queue, drop or passthru)", name);
				goto refuse;
			}
			fate = true;
			if (a->type == RTE_FLOW_ACTION_TYPE_DROP) {
				pa->fate = VBR_MTR_FATE_DROP;
			} else if (a->type == RTE_FLOW_ACTION_TYPE_QUEUE) {
				if (a->conf == NULL) {
					snprintf(msg, sizeof(vbr_mtr_msg), "vbr: meter "
						 "policy: %s actions: queue "
						 "with no index", name);
					goto refuse;
				}
				pa->fate = VBR_MTR_FATE_QUEUE;
				pa->queue = ((const struct rte_flow_action_queue
					      *)a->conf)->index;
				if (nb_rxq >= 0 && pa->queue >= nb_rxq) {
					snprintf(msg, sizeof(vbr_mtr_msg),
						 "vbr: meter policy: %s "
						 "actions: queue %u, the port "
						 "has %d Rx queue%s", name,
						 pa->queue, nb_rxq,
						 nb_rxq == 1 ? "" : "s");
					err = EINVAL;
					goto refuse;
				}
			}
			continue;
		case RTE_FLOW_ACTION_TYPE_RSS:
			snprintf(msg, sizeof(vbr_mtr_msg), "vbr: meter policy: %s "
				 "actions: rss is not supported (the policer "
				 "runs after the device hashed): use queue",
				 name);
			goto refuse;
		default:
			snprintf(msg, sizeof(vbr_mtr_msg), "vbr: meter policy: %s "
				 "actions: action type %d is not supported "
				 "(queue, drop, passthru, mark, flag are)",
				 name, (int)a->type);
			goto refuse;
		}
	}
	if (pa->fate == VBR_MTR_FATE_DROP && pa->mark != 0) {
		snprintf(msg, sizeof(vbr_mtr_msg), "vbr: meter policy: %s actions: "
			 "mark or flag with drop: nothing to mark", name);
		goto refuse;
	}
	return 0;
refuse:
	/* The colour's field: POLICER_ACTION_GREEN, _YELLOW, _RED. */
	return -rte_mtr_error_set(error, err,
		RTE_MTR_ERROR_TYPE_POLICER_ACTION_GREEN + colour, a, msg);
}

/*
 * A policy's actions, its queues checked against the Rx queues the port is
 * configured with (mlx5 checks priv->rxqs_n the same way). A port not yet
 * configured has no queue count: its policies' queues are checked at flow
 * create and at dev_start, which also catch a port reconfigured with fewer
 * queues after the policy was added.
 */
static int
vbr_mtr_policy_parse(const struct rte_eth_dev *dev,
		     struct rte_mtr_meter_policy_params *policy,
		     struct vbr_mtr_pact *act, struct rte_mtr_error *error)
{
	int nb_rxq = dev->data->dev_configured ?
		     (int)dev->data->nb_rx_queues : -1;
	unsigned int c;
	int ret;

	if (policy == NULL)
		return -rte_mtr_error_set(error, EINVAL,
			RTE_MTR_ERROR_TYPE_METER_POLICY, NULL,
			"vbr: meter policy: no parameters");
	for (c = 0; c < RTE_COLORS; c++) {
		ret = vbr_mtr_policy_colour(policy->actions[c], c, nb_rxq,
					    &act[c], error);
		if (ret != 0)
			return ret;
	}
	return 0;
}

static int
vbr_mtr_policy_validate(struct rte_eth_dev *dev,
			struct rte_mtr_meter_policy_params *policy,
			struct rte_mtr_error *error)
{
	struct vbr_mtr_pact act[RTE_COLORS];

	return vbr_mtr_policy_parse(dev, policy, act, error);
}

static int
vbr_mtr_policy_add(struct rte_eth_dev *dev, uint32_t id,
		   struct rte_mtr_meter_policy_params *policy,
		   struct rte_mtr_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct vbr_mtr_pact act[RTE_COLORS];
	struct vbr_mtr_obj *o;
	int ret;

	ret = vbr_mtr_policy_parse(dev, policy, act, error);
	if (ret != 0)
		return ret;
	pthread_mutex_lock(&priv->flow_lock);
	o = vbr_mtr_obj_new(priv, VBR_MTR_POLICY, id,
			    sizeof(struct vbr_mtr_policy), error);
	if (o != NULL) {
		memcpy(container_of(o, struct vbr_mtr_policy, obj)->act, act,
		       sizeof(act));
		vbr_mtr_obj_link(priv->mtr, VBR_MTR_POLICY, o);
	}
	pthread_mutex_unlock(&priv->flow_lock);
	return o != NULL ? 0 : -rte_errno;
}

static int
vbr_mtr_policy_delete(struct rte_eth_dev *dev, uint32_t id,
		      struct rte_mtr_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct vbr_mtr_obj *o;

	pthread_mutex_lock(&priv->flow_lock);
	o = vbr_mtr_obj_take(priv, VBR_MTR_POLICY, id, error);
	free(o);
	pthread_mutex_unlock(&priv->flow_lock);
	return o != NULL ? 0 : -rte_errno;
}

/* The Rx action table, made on first use. Holds flow_lock. */
static struct vbr_rx_act_table *
vbr_mtr_table(struct vbr_priv *priv)
{
	struct vbr_rx_act_table *t = vbr_rx_act_table_get(priv);

	if (t == NULL)
		return NULL;
	if (t->mtr == NULL) {
		t->mtr = rte_zmalloc_socket("vbr_mtr_slots",
			VBR_MTR_MAX * sizeof(t->mtr[0]), 0,
			priv->dev->device->numa_node);
	}
	return t->mtr != NULL ? t : NULL;
}

/* The sum of the slots' counts. */
static void
vbr_mtr_sum(const struct vbr_mtr_rt *rt, struct vbr_mtr_cnt *s)
{
	unsigned int i, c;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < rt->nslots; i++) {
		const struct vbr_mtr_cnt *k = &rt->slot[i].cnt;

		for (c = 0; c < RTE_COLORS; c++) {
			s->pkts[c] += __atomic_load_n(&k->pkts[c],
						      __ATOMIC_RELAXED);
			s->bytes[c] += __atomic_load_n(&k->bytes[c],
						       __ATOMIC_RELAXED);
		}
		s->dpkts += __atomic_load_n(&k->dpkts, __ATOMIC_RELAXED);
		s->dbytes += __atomic_load_n(&k->dbytes, __ATOMIC_RELAXED);
	}
}

/*
 * Whether meters may be owned by an lcore (vbr_mtr.h): the process is
 * registered for membarrier(2), once; a kernel that cannot leaves every
 * run on the CAS.
 */
static bool
vbr_mtr_own_ok(void)
{
	static int ok = -1;	/* under flow_lock; ports alike */

	if (ok < 0) {
		/* A secondary's lcores never own (vbr_mtr.h). */
		ok = rte_eal_process_type() == RTE_PROC_PRIMARY &&
		     vbr_mtr_own_setup();
		if (!ok)
			VBR_LOG(INFO, "no membarrier(2): every meter run "
				"publishes with a CAS");
	}
	return ok;
}

/* A meter's runtime: a slot freed before (its memory kept), or a new one. */
static int
vbr_mtr_rt_get(struct vbr_priv *priv, struct vbr_mtr_port *mp,
	       struct vbr_mtr *m)
{
	struct vbr_rx_act_table *t = vbr_mtr_table(priv);
	unsigned int neal = vbr_mtr_eal_slots();
	struct vbr_mtr_rt *rt;

	if (t == NULL)
		return -ENOMEM;
	if (mp->nb_free > 0) {
		/*
		 * The slot idle the longest. A frame of a rule gone may still
		 * be coloured and counted here: the records keep a valid
		 * profile (vbr_mtr_use_profile() then publishes the new one),
		 * and the counts are never written from here: the new meter
		 * counts from a snapshot of them.
		 */
		m->slot = mp->free_slots[mp->free_head];
		mp->free_head = (mp->free_head + 1) % VBR_MTR_MAX;
		mp->nb_free--;
		rt = t->mtr[m->slot];
		vbr_mtr_sum(rt, &m->base);
		m->rt = rt;
		return 0;
	}
	if (mp->next_slot >= VBR_MTR_MAX)
		return -ENOSPC;
	rt = rte_zmalloc_socket("vbr_mtr",
				vbr_mtr_rt_size(vbr_mtr_rt_nslots(neal)),
				RTE_CACHE_LINE_SIZE,
				priv->dev->device->numa_node);
	if (rt == NULL)
		return -ENOMEM;
	vbr_mtr_rt_init(rt, neal, vbr_mtr_own_ok());
	m->slot = mp->next_slot++;
	__atomic_store_n(&t->mtr[m->slot], rt, __ATOMIC_RELEASE);
	m->rt = rt;
	return 0;
}

static void
vbr_mtr_rt_put(struct vbr_mtr_port *mp, struct vbr_mtr *m)
{
	/* Kept for reuse: a frame in flight may still name the slot. */
	mp->free_slots[(mp->free_head + mp->nb_free++) % VBR_MTR_MAX] =
		m->slot;
	m->rt = NULL;
}

static void
vbr_mtr_use_profile(struct vbr_mtr *m, struct vbr_mtr_profile *p)
{
	p->obj.refs++;
	p->used = 1;
	m->profile = p;
	vbr_mtr_rt_reset(m->rt, vbr_mtr_rt_ctrl(m->rt), &p->prm, rte_rdtsc());
}

static const char *const vbr_mtr_in_name[VBR_MTR_IN_PROTOS] = {
	"outer_vlan", "inner_vlan", "outer_ip", "inner_ip",
};

/* Publish m's input colour protocols, by priority, and default colour. */
static void
vbr_mtr_in_publish(struct vbr_mtr *m)
{
	uint32_t order = (uint32_t)m->in_default << VBR_MTR_IN_DEFAULT_SHIFT;
	bool done[VBR_MTR_IN_PROTOS] = { false };
	unsigned int p, n;

	for (n = 0; n < VBR_MTR_IN_PROTOS; n++) {
		int best = -1;

		for (p = 0; p < VBR_MTR_IN_PROTOS; p++) {
			if (!(m->in_mask & RTE_BIT64(p)) || done[p])
				continue;
			if (best < 0 || m->in_prio[p] < m->in_prio[best])
				best = (int)p;
		}
		if (best < 0)
			break;
		done[best] = true;
		order |= (uint32_t)(best + 1) << (4 * n);
	}
	__atomic_store_n(&m->rt->in.order, order, __ATOMIC_RELEASE);
}

/*
 * Check a table of n input colours (NULL: all green). 0 or a negative
 * errno with *error set naming what.
 */
static int
vbr_mtr_in_table_check(const enum rte_color *tab, unsigned int n,
		       const char *what, struct rte_mtr_error *error)
{
	unsigned int i;

	for (i = 0; tab != NULL && i < n; i++) {
		if ((unsigned int)tab[i] < RTE_COLORS)
			continue;
		snprintf(vbr_mtr_msg, sizeof(vbr_mtr_msg), "vbr: meter: %s "
			 "entry %u: colour %d is not green, yellow or red",
			 what, i, (int)tab[i]);
		return -rte_mtr_error_set(error, EINVAL,
			RTE_MTR_ERROR_TYPE_MTR_PARAMS, NULL, vbr_mtr_msg);
	}
	return 0;
}

/* Write protocol p's table of n entries (NULL: all green). */
static void
vbr_mtr_in_table_set(struct vbr_mtr_rt *rt, unsigned int p,
		     const enum rte_color *tab, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		__atomic_store_n(&rt->in.tab[p][i], tab != NULL ?
				 (uint8_t)tab[i] : RTE_COLOR_GREEN,
				 __ATOMIC_RELAXED);
}

/*
 * The protocol index of proto, one of kinds (a mask of protocols), or -1
 * with *error set naming what wants it.
 */
static int
vbr_mtr_in_proto(enum rte_mtr_color_in_protocol proto, uint64_t kinds,
		 const char *what, struct rte_mtr_error *error)
{
	unsigned int p;

	for (p = 0; p < VBR_MTR_IN_PROTOS; p++)
		if ((uint64_t)proto == RTE_BIT64(p) && (kinds & proto))
			return (int)p;
	snprintf(vbr_mtr_msg, sizeof(vbr_mtr_msg), "vbr: meter: %s: protocol "
		 "%#" PRIx64 " is not %s", what, (uint64_t)proto,
		 kinds == (RTE_MTR_COLOR_IN_PROTO_OUTER_IP |
			   RTE_MTR_COLOR_IN_PROTO_INNER_IP) ?
		 "outer_ip or inner_ip" :
		 kinds == (RTE_MTR_COLOR_IN_PROTO_OUTER_VLAN |
			   RTE_MTR_COLOR_IN_PROTO_INNER_VLAN) ?
		 "outer_vlan or inner_vlan" :
		 "one of outer_vlan, inner_vlan, outer_ip, inner_ip");
	rte_mtr_error_set(error, EINVAL, RTE_MTR_ERROR_TYPE_MTR_PARAMS, NULL,
			  vbr_mtr_msg);
	return -1;
}

/* A new meter's input colours, from its params (checked). */
static void
vbr_mtr_in_init(struct vbr_mtr *m, const struct rte_mtr_params *params)
{
	unsigned int p;

	for (p = 0; p < VBR_MTR_IN_PROTOS; p++)
		vbr_mtr_in_table_set(m->rt, p, p < 2 ? params->vlan_table :
				     params->dscp_table,
				     p < 2 ? VBR_MTR_IN_VLAN : VBR_MTR_IN_DSCP);
	m->in_mask = 0;
	memset(m->in_prio, 0, sizeof(m->in_prio));
	if (params->dscp_table != NULL)
		m->in_mask |= RTE_MTR_COLOR_IN_PROTO_OUTER_IP;
	if (params->vlan_table != NULL) {
		m->in_mask |= RTE_MTR_COLOR_IN_PROTO_OUTER_VLAN;
		m->in_prio[0] = 1;
	}
	m->in_default = (uint8_t)params->default_input_color;
	vbr_mtr_in_publish(m);
}

static int
vbr_mtr_create(struct rte_eth_dev *dev, uint32_t id,
	       struct rte_mtr_params *params, int shared,
	       struct rte_mtr_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct vbr_mtr_profile *prof;
	struct vbr_mtr_policy *pol;
	struct vbr_mtr_port *mp;
	struct vbr_mtr_obj *o;
	struct vbr_mtr *m;
	int ret;

	RTE_SET_USED(shared);	/* every meter may be shared */
	if (params == NULL)
		return -rte_mtr_error_set(error, EINVAL,
			RTE_MTR_ERROR_TYPE_MTR_PARAMS, NULL,
			"vbr: meter: no parameters");
	if (params->use_prev_mtr_color)
		return -rte_mtr_error_set(error, ENOTSUP,
			RTE_MTR_ERROR_TYPE_MTR_PARAMS, NULL,
			"vbr: meter: use_prev_mtr_color: no meter chaining "
			"(input colours come from the dscp and vlan tables)");
	ret = vbr_mtr_in_table_check(params->dscp_table, VBR_MTR_IN_DSCP,
				     "dscp_table", error);
	if (ret == 0)
		ret = vbr_mtr_in_table_check(params->vlan_table,
					     VBR_MTR_IN_VLAN, "vlan_table",
					     error);
	if (ret != 0)
		return ret;
	/* Used once a protocol is enabled, tables given or not. */
	if ((unsigned int)params->default_input_color >= RTE_COLORS)
		return -rte_mtr_error_set(error, EINVAL,
			RTE_MTR_ERROR_TYPE_MTR_PARAMS, NULL,
			"vbr: meter: default_input_color is not green, yellow "
			"or red");
	pthread_mutex_lock(&priv->flow_lock);
	mp = priv->mtr;
	prof = vbr_mtr_profile_find(mp, params->meter_profile_id);
	if (prof == NULL) {
		ret = -rte_mtr_error_set(error, ENOENT,
			RTE_MTR_ERROR_TYPE_METER_PROFILE_ID, NULL,
			"vbr: meter: no meter profile with this id");
		goto out;
	}
	pol = vbr_mtr_policy_find(mp, params->meter_policy_id);
	if (pol == NULL) {
		ret = -rte_mtr_error_set(error, ENOENT,
			RTE_MTR_ERROR_TYPE_METER_POLICY_ID, NULL,
			"vbr: meter: no meter policy with this id");
		goto out;
	}
	o = vbr_mtr_obj_new(priv, VBR_MTR_METER, id, sizeof(*m), error);
	if (o == NULL) {
		ret = -rte_errno;
		goto out;
	}
	m = container_of(o, struct vbr_mtr, obj);
	if (mp->free_slots == NULL) {
		mp->free_slots = calloc(VBR_MTR_MAX,
					sizeof(mp->free_slots[0]));
		if (mp->free_slots == NULL) {
			free(m);
			goto nomem;
		}
	}
	ret = vbr_mtr_rt_get(priv, mp, m);
	if (ret != 0) {
		free(m);
		if (ret == -ENOMEM)
			goto nomem;
		ret = -rte_mtr_error_set(error, ENOSPC,
			RTE_MTR_ERROR_TYPE_MTR_ID, NULL,
			"vbr: meter: the port holds 65536 meters at most");
		goto out;
	}
	m->stats_mask = params->stats_mask & VBR_MTR_STATS_ALL;
	m->policy = pol;
	pol->obj.refs++;
	memcpy(m->rt->act, pol->act, sizeof(pol->act));
	vbr_mtr_in_init(m, params);
	vbr_mtr_use_profile(m, prof);
	__atomic_store_n(&m->rt->enabled, params->meter_enable != 0,
			 __ATOMIC_RELEASE);
	vbr_mtr_obj_link(mp, VBR_MTR_METER, o);
	ret = 0;
	goto out;
nomem:
	ret = -rte_mtr_error_set(error, ENOMEM,
		RTE_MTR_ERROR_TYPE_UNSPECIFIED, NULL,
		"vbr: no memory for the meter");
out:
	pthread_mutex_unlock(&priv->flow_lock);
	return ret;
}

static int
vbr_mtr_destroy(struct rte_eth_dev *dev, uint32_t id,
		struct rte_mtr_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct vbr_mtr_obj *o;
	struct vbr_mtr *m;

	pthread_mutex_lock(&priv->flow_lock);
	o = vbr_mtr_obj_take(priv, VBR_MTR_METER, id, error);
	if (o != NULL) {
		m = container_of(o, struct vbr_mtr, obj);
		m->profile->obj.refs--;
		m->policy->obj.refs--;
		vbr_mtr_rt_put(priv->mtr, m);
		free(m);
	}
	pthread_mutex_unlock(&priv->flow_lock);
	return o != NULL ? 0 : -rte_errno;
}

/* The meter id, flow_lock taken; NULL with *error set and the lock off. */
static struct vbr_mtr *
vbr_mtr_lock_find(struct vbr_priv *priv, uint32_t id,
		  struct rte_mtr_error *error)
{
	struct vbr_mtr *m;

	pthread_mutex_lock(&priv->flow_lock);
	m = vbr_mtr_find(priv->mtr, id);
	if (m == NULL) {
		pthread_mutex_unlock(&priv->flow_lock);
		rte_mtr_error_set(error, ENOENT, RTE_MTR_ERROR_TYPE_MTR_ID,
				  NULL, "vbr: no meter with this id");
	}
	return m;
}

static int
vbr_mtr_set_enable(struct rte_eth_dev *dev, uint32_t id, uint32_t on,
		   struct rte_mtr_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct vbr_mtr *m = vbr_mtr_lock_find(priv, id, error);

	if (m == NULL)
		return -ENOENT;
	__atomic_store_n(&m->rt->enabled, on, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&priv->flow_lock);
	return 0;
}

static int
vbr_mtr_enable(struct rte_eth_dev *dev, uint32_t id,
	       struct rte_mtr_error *error)
{
	return vbr_mtr_set_enable(dev, id, 1, error);
}

static int
vbr_mtr_disable(struct rte_eth_dev *dev, uint32_t id,
		struct rte_mtr_error *error)
{
	return vbr_mtr_set_enable(dev, id, 0, error);
}

/* A new profile: the buckets start full under it. */
static int
vbr_mtr_profile_update(struct rte_eth_dev *dev, uint32_t id,
		       uint32_t profile_id, struct rte_mtr_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct vbr_mtr_profile *p;
	struct vbr_mtr *m = vbr_mtr_lock_find(priv, id, error);

	if (m == NULL)
		return -ENOENT;
	p = vbr_mtr_profile_find(priv->mtr, profile_id);
	if (p == NULL) {
		pthread_mutex_unlock(&priv->flow_lock);
		return -rte_mtr_error_set(error, ENOENT,
			RTE_MTR_ERROR_TYPE_METER_PROFILE_ID, NULL,
			"vbr: no meter profile with this id");
	}
	m->profile->obj.refs--;
	vbr_mtr_use_profile(m, p);
	pthread_mutex_unlock(&priv->flow_lock);
	return 0;
}

/* Another policy, while no rule names the meter (rules steer by it). */
static int
vbr_mtr_policy_update(struct rte_eth_dev *dev, uint32_t id,
		      uint32_t policy_id, struct rte_mtr_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct vbr_mtr_policy *p;
	struct vbr_mtr *m = vbr_mtr_lock_find(priv, id, error);
	int ret = 0;

	if (m == NULL)
		return -ENOENT;
	p = vbr_mtr_policy_find(priv->mtr, policy_id);
	if (p == NULL) {
		ret = -rte_mtr_error_set(error, ENOENT,
			RTE_MTR_ERROR_TYPE_METER_POLICY_ID, NULL,
			"vbr: no meter policy with this id");
	} else if (m->obj.refs != 0 && p != m->policy) {
		ret = -rte_mtr_error_set(error, EBUSY,
			RTE_MTR_ERROR_TYPE_MTR_ID, NULL,
			"vbr: meter in use by a flow rule: its policy decides "
			"where the device steers the rule; destroy the rules "
			"first");
	} else {
		m->policy->obj.refs--;
		p->obj.refs++;
		m->policy = p;
		memcpy(m->rt->act, p->act, sizeof(p->act));
	}
	pthread_mutex_unlock(&priv->flow_lock);
	return ret;
}

static int
vbr_mtr_stats_update(struct rte_eth_dev *dev, uint32_t id,
		     uint64_t stats_mask, struct rte_mtr_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct vbr_mtr *m;

	m = vbr_mtr_lock_find(priv, id, error);
	if (m == NULL)
		return -ENOENT;
	m->stats_mask = stats_mask & VBR_MTR_STATS_ALL;
	pthread_mutex_unlock(&priv->flow_lock);
	return 0;
}

static int
vbr_mtr_stats_read(struct rte_eth_dev *dev, uint32_t id,
		   struct rte_mtr_stats *stats, uint64_t *stats_mask,
		   int clear, struct rte_mtr_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct vbr_mtr_cnt s;
	struct vbr_mtr *m;
	unsigned int c;
	uint64_t mask;

	m = vbr_mtr_lock_find(priv, id, error);
	if (m == NULL)
		return -ENOENT;
	vbr_mtr_sum(m->rt, &s);
	mask = m->stats_mask;
	if (stats != NULL) {
		memset(stats, 0, sizeof(*stats));
		for (c = 0; c < RTE_COLORS; c++) {
			if (mask & (RTE_MTR_STATS_N_PKTS_GREEN << c))
				stats->n_pkts[c] = s.pkts[c] - m->base.pkts[c];
			if (mask & (RTE_MTR_STATS_N_BYTES_GREEN << c))
				stats->n_bytes[c] = s.bytes[c] -
						    m->base.bytes[c];
		}
		if (mask & RTE_MTR_STATS_N_PKTS_DROPPED)
			stats->n_pkts_dropped = s.dpkts - m->base.dpkts;
		if (mask & RTE_MTR_STATS_N_BYTES_DROPPED)
			stats->n_bytes_dropped = s.dbytes - m->base.dbytes;
	}
	if (stats_mask != NULL)
		*stats_mask = mask;
	if (clear)
		m->base = s;
	pthread_mutex_unlock(&priv->flow_lock);
	return 0;
}

/* Replace the table of protocol proto, of kinds, n entries. */
static int
vbr_mtr_table_update(struct rte_eth_dev *dev, uint32_t id,
		     enum rte_mtr_color_in_protocol proto, uint64_t kinds,
		     const enum rte_color *tab, unsigned int n,
		     const char *what, struct rte_mtr_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct vbr_mtr *m;
	int p, ret;

	p = vbr_mtr_in_proto(proto, kinds, what, error);
	if (p < 0)
		return -EINVAL;
	ret = vbr_mtr_in_table_check(tab, n, what, error);
	if (ret != 0)
		return ret;
	m = vbr_mtr_lock_find(priv, id, error);
	if (m == NULL)
		return -ENOENT;
	vbr_mtr_in_table_set(m->rt, (unsigned int)p, tab, n);
	pthread_mutex_unlock(&priv->flow_lock);
	return 0;
}

static int
vbr_mtr_dscp_table_update(struct rte_eth_dev *dev, uint32_t id,
			  enum rte_mtr_color_in_protocol proto,
			  enum rte_color *dscp_table,
			  struct rte_mtr_error *error)
{
	return vbr_mtr_table_update(dev, id, proto,
		RTE_MTR_COLOR_IN_PROTO_OUTER_IP |
		RTE_MTR_COLOR_IN_PROTO_INNER_IP, dscp_table,
		VBR_MTR_IN_DSCP, "dscp table", error);
}

static int
vbr_mtr_vlan_table_update(struct rte_eth_dev *dev, uint32_t id,
			  enum rte_mtr_color_in_protocol proto,
			  enum rte_color *vlan_table,
			  struct rte_mtr_error *error)
{
	return vbr_mtr_table_update(dev, id, proto,
		RTE_MTR_COLOR_IN_PROTO_OUTER_VLAN |
		RTE_MTR_COLOR_IN_PROTO_INNER_VLAN, vlan_table,
		VBR_MTR_IN_VLAN, "vlan table", error);
}

#define VBR_MTR_IN_ALL (RTE_MTR_COLOR_IN_PROTO_OUTER_VLAN | \
	RTE_MTR_COLOR_IN_PROTO_INNER_VLAN | RTE_MTR_COLOR_IN_PROTO_OUTER_IP | \
	RTE_MTR_COLOR_IN_PROTO_INNER_IP)

/* Enable an input colour protocol at a priority (0: first). */
static int
vbr_mtr_in_proto_set(struct rte_eth_dev *dev, uint32_t id,
		     enum rte_mtr_color_in_protocol proto, uint32_t priority,
		     struct rte_mtr_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct vbr_mtr *m;
	int p;

	p = vbr_mtr_in_proto(proto, VBR_MTR_IN_ALL, "input colour protocol",
			     error);
	if (p < 0)
		return -EINVAL;
	m = vbr_mtr_lock_find(priv, id, error);
	if (m == NULL)
		return -ENOENT;
	m->in_mask |= proto;
	m->in_prio[p] = priority;
	vbr_mtr_in_publish(m);
	pthread_mutex_unlock(&priv->flow_lock);
	return 0;
}

static int
vbr_mtr_in_proto_get(struct rte_eth_dev *dev, uint32_t id,
		     uint64_t *proto_mask, struct rte_mtr_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct vbr_mtr *m = vbr_mtr_lock_find(priv, id, error);

	if (m == NULL)
		return -ENOENT;
	*proto_mask = m->in_mask;
	pthread_mutex_unlock(&priv->flow_lock);
	return 0;
}

static int
vbr_mtr_in_proto_prio_get(struct rte_eth_dev *dev, uint32_t id,
			  enum rte_mtr_color_in_protocol proto,
			  uint32_t *priority, struct rte_mtr_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct vbr_mtr *m;
	int p, ret = 0;

	p = vbr_mtr_in_proto(proto, VBR_MTR_IN_ALL, "input colour protocol",
			     error);
	if (p < 0)
		return -EINVAL;
	m = vbr_mtr_lock_find(priv, id, error);
	if (m == NULL)
		return -ENOENT;
	if (!(m->in_mask & proto)) {
		snprintf(vbr_mtr_msg, sizeof(vbr_mtr_msg), "vbr: meter %u: "
			 "input colour protocol %s is not enabled", id,
			 vbr_mtr_in_name[p]);
		ret = -rte_mtr_error_set(error, EINVAL,
			RTE_MTR_ERROR_TYPE_MTR_PARAMS, NULL, vbr_mtr_msg);
	} else {
		*priority = m->in_prio[p];
	}
	pthread_mutex_unlock(&priv->flow_lock);
	return ret;
}

static const struct rte_mtr_ops vbr_mtr_ops = {
	.capabilities_get = vbr_mtr_capabilities_get,
	.meter_profile_add = vbr_mtr_profile_add,
	.meter_profile_delete = vbr_mtr_profile_delete,
	.meter_policy_validate = vbr_mtr_policy_validate,
	.meter_policy_add = vbr_mtr_policy_add,
	.meter_policy_delete = vbr_mtr_policy_delete,
	.create = vbr_mtr_create,
	.destroy = vbr_mtr_destroy,
	.meter_enable = vbr_mtr_enable,
	.meter_disable = vbr_mtr_disable,
	.meter_profile_update = vbr_mtr_profile_update,
	.meter_policy_update = vbr_mtr_policy_update,
	.stats_update = vbr_mtr_stats_update,
	.stats_read = vbr_mtr_stats_read,
	.meter_dscp_table_update = vbr_mtr_dscp_table_update,
	.meter_vlan_table_update = vbr_mtr_vlan_table_update,
	.in_proto_set = vbr_mtr_in_proto_set,
	.in_proto_get = vbr_mtr_in_proto_get,
	.in_proto_prio_get = vbr_mtr_in_proto_prio_get,
};

/** The mtr_ops_get op. */
int
vbr_mtr_ops_get(struct rte_eth_dev *dev, void *arg)
{
	RTE_SET_USED(dev);
	*(const struct rte_mtr_ops **)arg = &vbr_mtr_ops;
	return 0;
}

/* The hand-off ring of Rx queue q, made on first use. */
static int
vbr_mtr_ring(struct vbr_priv *priv, struct vbr_rx_act_table *t, uint16_t q)
{
	char name[RTE_RING_NAMESIZE];
	struct rte_ring *r;

	if (t->handoff[q] != NULL)
		return 0;
	snprintf(name, sizeof(name), "vbr_mtr_%u_%u",
		 priv->dev->data->port_id, q);
	r = rte_ring_create(name, VBR_MTR_RING_SIZE,
			    priv->dev->device->numa_node, RING_F_SC_DEQ);
	if (r == NULL)
		return -rte_errno;
	__atomic_store_n(&t->handoff[q], r, __ATOMIC_RELEASE);
	return 0;
}

/**
 * The first queue >= nb_rxq a policy's colour is sent to, or -1.
 */
static int
vbr_mtr_policy_missing_queue(const struct vbr_mtr_policy *pol,
			     uint16_t nb_rxq, unsigned int *colour)
{
	unsigned int c;

	for (c = 0; c < RTE_COLORS; c++) {
		const struct vbr_mtr_pact *a = &pol->act[c];

		if (a->fate == VBR_MTR_FATE_QUEUE && a->queue >= nb_rxq) {
			*colour = c;
			return a->queue;
		}
	}
	return -1;
}

/**
 * At dev_start: a queue >= nb_rxq that meter m's policy sends a colour to
 * (the port was configured with fewer Rx queues since the rule was made),
 * or -1. Holds flow_lock.
 */
int
vbr_mtr_missing_queue(const struct vbr_mtr *m, uint16_t nb_rxq)
{
	unsigned int c;

	return m != NULL ?
	       vbr_mtr_policy_missing_queue(m->policy, nb_rxq, &c) : -1;
}

/**
 * A rule names meter id (d->meter_id): check the meter and its policy
 * against the rule and the port, and give the rule its device fate when it
 * has none (the policy's first queue). Nothing is taken: flow validate runs
 * it as create does. Return the meter, or NULL with *error set. Holds
 * flow_lock.
 */
struct vbr_mtr *
vbr_mtr_rule_check(struct vbr_priv *priv, struct vbr_flow_desc *d,
		   struct rte_flow_error *error)
{
	uint16_t nb_rxq = priv->dev->data->nb_rx_queues;
	struct vbr_mtr *m;
	unsigned int c;
	bool pass = false;
	int q;

	m = vbr_mtr_find(priv->mtr, d->meter_id);
	if (m == NULL) {
		vbr_flow_error(error, ENOENT, RTE_FLOW_ERROR_TYPE_ACTION_CONF,
			       d->meter_act, "vbr: meter action: no meter %u",
			       d->meter_id);
		return NULL;
	}
	q = vbr_mtr_policy_missing_queue(m->policy, nb_rxq, &c);
	if (q >= 0) {
		vbr_flow_error(error, EINVAL, RTE_FLOW_ERROR_TYPE_ACTION_CONF,
			       d->meter_act, "vbr: meter action: policy %u sends %s "
			       "frames to queue %d, the port has %u",
			       m->policy->obj.id, vbr_mtr_colour[c], q, nb_rxq);
		return NULL;
	}
	for (c = 0; c < RTE_COLORS; c++) {
		const struct vbr_mtr_pact *a = &m->policy->act[c];

		if (a->fate == VBR_MTR_FATE_PASS)
			pass = true;
		if (a->fate == VBR_MTR_FATE_QUEUE &&
		    d->fate == VBR_FLOW_FATE_NONE) {
			d->fate = VBR_FLOW_FATE_QUEUE;
			d->queues[0] = a->queue;
			d->nb_queues = 1;
		}
	}
	if (d->fate == VBR_FLOW_FATE_NONE) {
		vbr_flow_error(error, EINVAL, RTE_FLOW_ERROR_TYPE_ACTION,
			       d->meter_act,
			       "vbr: meter action: the rule has no fate and "
			       "policy %u sends no colour to a queue%s",
			       m->policy->obj.id, pass ? " (passthru needs one)" :
			       "");
		return NULL;
	}
	if (d->fate == VBR_FLOW_FATE_DROP) {
		vbr_flow_error(error, ENOTSUP, RTE_FLOW_ERROR_TYPE_ACTION,
			       d->meter_act, "vbr: meter action on a drop rule: "
			       "nothing to meter");
		return NULL;
	}
	return m;
}

/**
 * A rule names meter id (d->meter_id): vbr_mtr_rule_check(), then make the
 * hand-off rings of the policy's queues, put the meter's slot in
 * d->rx_act and take a reference. Return the meter, or NULL with *error
 * set. Holds flow_lock.
 */
struct vbr_mtr *
vbr_mtr_rule_get(struct vbr_priv *priv, struct vbr_flow_desc *d,
		 struct rte_flow_error *error)
{
	struct vbr_rx_act_table *t;
	struct vbr_mtr *m;
	unsigned int c;
	int ret;

	m = vbr_mtr_rule_check(priv, d, error);
	if (m == NULL)
		return NULL;
	t = vbr_mtr_table(priv);
	if (t == NULL) {
		rte_flow_error_set(error, ENOMEM, RTE_FLOW_ERROR_TYPE_HANDLE,
				   NULL, "vbr: no memory for the meter table");
		return NULL;
	}
	for (c = 0; c < RTE_COLORS; c++) {
		const struct vbr_mtr_pact *a = &m->policy->act[c];

		if (a->fate != VBR_MTR_FATE_QUEUE)
			continue;
		ret = vbr_mtr_ring(priv, t, a->queue);
		if (ret != 0) {
			rte_flow_error_set(error, -ret,
				RTE_FLOW_ERROR_TYPE_HANDLE, NULL,
				"vbr: no memory for a meter hand-off ring");
			return NULL;
		}
	}
	d->rx_act |= (uint64_t)m->slot << VBR_RX_ACT_MTR_SHIFT;
	m->obj.refs++;
	return m;
}

/**
 * Free the frames waiting in the hand-off ring of Rx queue q (at its
 * release, at dev_stop): their pool may go, and frames from before a stop
 * are not delivered after the start. Return how many; they add to the
 * port's handoff_freed count. The queue is not polled meanwhile.
 */
unsigned int
vbr_mtr_handoff_drain(struct vbr_priv *priv, uint16_t q)
{
	struct vbr_rx_act_table *t = priv->rx_act;
	struct rte_mbuf *mb[32];
	unsigned int i, k, n = 0;

	if (t == NULL || q >= RTE_DIM(t->handoff) || t->handoff[q] == NULL)
		return 0;
	while ((k = rte_ring_sc_dequeue_burst(t->handoff[q], (void **)mb,
					      RTE_DIM(mb), NULL)) != 0) {
		for (i = 0; i < k; i++)
			rte_pktmbuf_free(mb[i]);
		n += k;
	}
	if (n != 0) {
		if (priv->mtr != NULL)
			__atomic_fetch_add(&priv->mtr->handoff_freed, n,
					   __ATOMIC_RELAXED);
		VBR_LOG(INFO, "port %u: Rx queue %u: freed %u frames meter "
			"policies had handed to it", priv->dev->data->port_id,
			q, n);
	}
	return n;
}

/** Frames vbr_mtr_handoff_drain() freed since the port was made. */
uint64_t
vbr_mtr_handoff_freed(const struct vbr_priv *priv)
{
	return priv->mtr != NULL ?
	       __atomic_load_n(&priv->mtr->handoff_freed, __ATOMIC_RELAXED) :
	       0;
}

/** A rule that named m is gone. Holds flow_lock. */
void
vbr_mtr_rule_put(struct vbr_mtr *m)
{
	if (m != NULL)
		m->obj.refs--;
}

/** At close: every meter, policy, profile, and the hand-off rings. */
void
vbr_mtr_release(struct vbr_priv *priv)
{
	struct vbr_mtr_port *mp = priv->mtr;
	struct vbr_rx_act_table *t = priv->rx_act;
	struct vbr_mtr_obj *o;
	unsigned int i, k;

	if (t != NULL) {
		for (i = 0; i < RTE_DIM(t->handoff); i++) {
			if (t->handoff[i] == NULL)
				continue;
			vbr_mtr_handoff_drain(priv, i);
			rte_ring_free(t->handoff[i]);
			t->handoff[i] = NULL;
		}
		if (t->mtr != NULL && mp != NULL)
			for (i = 0; i < mp->next_slot; i++)
				rte_free(t->mtr[i]);
		rte_free(t->mtr);
		t->mtr = NULL;
	}
	if (mp == NULL)
		return;
	for (k = 0; k < VBR_MTR_KINDS; k++) {
		while ((o = TAILQ_FIRST(&mp->objs[k])) != NULL) {
			TAILQ_REMOVE(&mp->objs[k], o, next);
			free(o);
		}
		rte_hash_free(mp->index[k].h);
	}
	while ((o = TAILQ_FIRST(&mp->retired)) != NULL) {
		TAILQ_REMOVE(&mp->retired, o, next);
		free(o);
	}
	free(mp->free_slots);
	free(mp);
	priv->mtr = NULL;
}
