/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The one steering owner of a port: its rule list, and the sync that brings
 * the verbs flows in line with the port's state (mlx4's flow sync model, in
 * our own code).
 *
 * Rules. User rules (rte_flow) and internal rules (the port's addresses,
 * broadcast, multicast list, promiscuous, all-multicast, VLAN filter) are
 * entries of one list, priv->flows; internal ones are flagged by their tier
 * and never shown to rte_flow. A rule is translated once (vbr_flow.c) and
 * kept with its verbs attr; it becomes one verbs flow per packet type its
 * queue set hashes differently (vbr_flow_expand()). Rules are on the device
 * only while the port is started, so user rules survive stop/start and
 * queue reconfiguration (RTE_ETH_DEV_CAPA_FLOW_RULE_KEEP).
 *
 * Priorities. Verbs has no attribute for the number of flow priorities: at
 * probe, vbr_steer_probe() tries rules at priorities up to what vbr needs,
 * on a throw-away queue, and keeps the highest accepted (a ConnectX takes
 * 0-15, swverbs' full profile more); it also tries one rule per optional
 * match (IPv4 TTL, IPv6 hop limit, GRE C/K/S bits, ESP, MPLS, VXLAN) so that
 * the translation refuses what the device would, without creating anything.
 * Each rte_flow level takes three verbs priorities, one per layer of an
 * expanded rule (L4 flows first, then L3, then L2); below the user levels,
 * seven priorities hold the internal rules: promiscuous, all-multicast and
 * accepted VIDs (three, by layer), the VLAN filter's drops (one), then the
 * addresses (three). With 16 priorities that is 3 user levels.
 *
 * Companions. A rule whose meaning verbs cannot say (eth has_vlan 0, ipv6
 * has_frag_ext 0: vbr_flow.c) gets companion verbs flows that catch the
 * frames it must not take, at the first verbs priority of its level; its
 * own flows move one priority down (the L3 and L2 flows of an expansion
 * share the last one: they carry the same tag). The companions carry no
 * tag and no counter of the rule, so frames outside the meaning never
 * carry its mark, and they give those frames the fate they have without
 * the rule ("Companions' fate" below): the port's queue set, the VLAN
 * filter's drop, or an unmatched drop, computed from the port's state when
 * the rule goes on the device and again at each sync. They are verbs flows
 * of the rule (cf[]), so they go on and off the device with it: created
 * before the own flows, destroyed after them, so that no excluded frame
 * carries the mark meanwhile.
 *
 * VLAN filter. A ConnectX matches a VLAN mask only on tagged frames, and it
 * has no "untagged only" match. So with the filter on, per address: the
 * listed VIDs are accepted, frames whose VID has any bit set are dropped by
 * twelve rules (one per VID bit, each selecting tagged frames), and the
 * address alone accepts what is left: untagged and priority-tagged frames.
 * swverbs' profiles and a ConnectX see the same frames. The drop rules bind
 * one counters object, shown as the rx_vlan_filtered xstat.
 *
 * Sync. vbr_steer_sync() rebuilds the internal rules for the port's state
 * (promiscuous, all-multicast, MAC and multicast lists, VLAN filter, the
 * port's RSS queue set; isolated mode changes on a stopped port only, as
 * rte_flow_isolate() advises), make-before-break: the new
 * rules go on the device first, then the old ones are destroyed, so no
 * frame of an address finds no rule. A rule whose companions the new
 * state would make inexact makes the sync fail (the change is refused);
 * rules whose companions change move after the commit
 * (vbr_steer_cf_move()). When the port's RSS changes (reta,
 * key, hash types) the user DROP rules, which sit on the port's queue set,
 * are copied onto the new set the same way; a copy and its original bind
 * the same counters object, and a frame takes one of the two, so counts
 * stay exact. On failure nothing changed.
 *
 * Calls go down only: ethdev and the rte_flow ops call this file, which
 * calls vbr_flow.c (pure), vbr_rss.c (queue sets) and vbr_count.c; none of
 * them calls back. Everything runs under the port's flow_lock.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>

#include <rte_flow_driver.h>
#include <rte_malloc.h>

#include "vbr.h"
#include "vbr_steer.h"
#include "vbr_utils.h"

/** Room for the attr of one expanded verbs flow. */
#define VBR_STEER_ATTR_ROOM (VBR_FLOW_BUF_SIZE + 128)
/** VID bits: one drop rule each for "tagged with a non-zero VID". */
#define VBR_STEER_VID_BITS 12
/** Companions of a rule at most: 7 bases, a VID split with 12 per VID. */
#define VBR_STEER_CF_MAX (7 + 13 * (VBR_MAX_VLAN_IDS + 1))
/** A MAC no frame carries, for the probe rules. */
static const struct rte_ether_addr vbr_steer_probe_mac = {
	.addr_bytes = { 0x02, 0x76, 0x62, 0x72, 0x00, 0x01 },
};

/*
 * Probe.
 */

/* A throw-away queue: CQ, WQ, 1-entry table and hash QP, no hashing. */
struct vbr_steer_probe_q {
	struct ibv_cq_ex *cq;
	struct ibv_wq *wq;
	struct ibv_rwq_ind_table *ind;
	struct ibv_qp *qp;
};

static void
vbr_steer_probe_q_free(struct vbr_priv *priv, struct vbr_steer_probe_q *q)
{
	if (q->qp != NULL)
		priv->glue->destroy_qp(q->qp);
	if (q->ind != NULL)
		priv->glue->destroy_rwq_ind_table(q->ind);
	if (q->wq != NULL)
		priv->glue->destroy_wq(q->wq);
	if (q->cq != NULL)
		priv->glue->destroy_cq(ibv_cq_ex_to_cq(q->cq));
}

static int
vbr_steer_probe_q_make(struct vbr_priv *priv, struct vbr_steer_probe_q *q)
{
	struct ibv_cq_init_attr_ex cq_attr = {
		.cqe = 1,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN,
	};
	struct ibv_wq_init_attr wq_attr = {
		.wq_type = IBV_WQT_RQ,
		.max_wr = 1,
		.max_sge = 1,
		.pd = priv->pd,
	};
	struct ibv_rwq_ind_table_init_attr ind_attr = { 0 };
	struct ibv_qp_init_attr_ex qp_attr = { 0 };
	int err;

	memset(q, 0, sizeof(*q));
	q->cq = priv->glue->create_cq_ex(priv->ctx, &cq_attr);
	if (q->cq == NULL)
		goto error;
	wq_attr.cq = ibv_cq_ex_to_cq(q->cq);
	q->wq = priv->glue->create_wq(priv->ctx, &wq_attr);
	if (q->wq == NULL)
		goto error;
	ind_attr.log_ind_tbl_size = 0;
	ind_attr.ind_tbl = &q->wq;
	q->ind = priv->glue->create_rwq_ind_table(priv->ctx, &ind_attr);
	if (q->ind == NULL)
		goto error;
	qp_attr.qp_type = IBV_QPT_RAW_PACKET;
	qp_attr.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
			    IBV_QP_INIT_ATTR_RX_HASH;
	qp_attr.pd = priv->pd;
	qp_attr.rwq_ind_tbl = q->ind;
	qp_attr.rx_hash_conf.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
	qp_attr.rx_hash_conf.rx_hash_key_len = VBR_RSS_KEY_LEN;
	qp_attr.rx_hash_conf.rx_hash_key =
		(uint8_t *)(uintptr_t)vbr_rss_default_key_get();
	q->qp = priv->glue->create_qp_ex(priv->ctx, &qp_attr);
	if (q->qp == NULL)
		goto error;
	return 0;
error:
	err = errno != 0 ? errno : EIO;
	vbr_steer_probe_q_free(priv, q);
	return -err;
}

/*
 * Translate a probe rule (pattern, DROP) and try it at a verbs priority:
 * created, then destroyed at once. Return 0 if the device took it, else
 * the errno.
 */
static int
vbr_steer_try(struct vbr_priv *priv, struct ibv_qp *qp,
	      const struct rte_flow_item pattern[], uint16_t priority)
{
	static const struct rte_flow_attr attr = { .ingress = 1 };
	static const struct rte_flow_action drop[] = {
		{ .type = RTE_FLOW_ACTION_TYPE_DROP },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	static const struct vbr_flow_caps caps;
	struct rte_flow_error error;
	struct vbr_flow_desc *d;
	struct ibv_flow *flow;
	int err;

	d = malloc(sizeof(*d));
	if (d == NULL)
		return ENOMEM;
	if (vbr_flow_prepare(&caps, &attr, pattern, drop, d, &error) != 0) {
		free(d);
		return EINVAL;
	}
	d->u.attr.priority = priority;
	errno = 0;
	flow = priv->glue->create_flow(qp, &d->u.attr);
	err = flow == NULL ? (errno != 0 ? errno : EIO) : 0;
	if (flow != NULL)
		priv->glue->destroy_flow(flow);
	free(d);
	return err;
}

/**
 * Find what the device accepts (see the head of the file): the number of
 * verbs flow priorities, up to what vbr can use, and the optional matches.
 * Once per port; validate and create answer from it. Return 0 or a
 * negative errno (the device takes no rule at all).
 */
int
vbr_steer_probe(struct vbr_priv *priv)
{
	struct rte_flow_item_eth eth = { .dst = vbr_steer_probe_mac };
	struct rte_flow_item_ipv4 ip4 = { .hdr.time_to_live = 64 };
	struct rte_flow_item_ipv4 ip4m = { .hdr.time_to_live = 0xff };
	struct rte_flow_item_ipv6 ip6 = { .hdr.hop_limits = 64 };
	struct rte_flow_item_ipv6 ip6m = { .hdr.hop_limits = 0xff };
	struct rte_flow_item_gre gre = { .c_rsvd0_ver = RTE_BE16(0x2000) };
	struct rte_flow_item_gre grem = { .c_rsvd0_ver = RTE_BE16(0x2000) };
	struct rte_flow_item_esp esp = { .hdr.spi = RTE_BE32(1) };
	struct rte_flow_item_mpls mpls = { .label_tc_s = { 0, 0, 0x10 } };
	struct rte_flow_item_vxlan vxlan = { .vni = { 0, 0, 1 } };
	struct rte_flow_item_ipv4 ip4f = { .hdr.fragment_offset = 0 };
	struct rte_flow_item_ipv4 ip4fm = {
		.hdr.fragment_offset = RTE_BE16(0x3fff),
	};
#define IT(t, s, m) { .type = RTE_FLOW_ITEM_TYPE_##t, .spec = s, .mask = m }
#define ETH_IT IT(ETH, &eth, &rte_flow_item_eth_mask)
#define END_IT IT(END, NULL, NULL)
	const struct rte_flow_item p_eth[] = { ETH_IT, END_IT };
	const struct {
		uint32_t bit;
		struct rte_flow_item p[5];
	} opt[VBR_FLOW_F_NUM] = {
		{ VBR_FLOW_F_IPV4_TTL, { ETH_IT, IT(IPV4, &ip4, &ip4m),
					 END_IT } },
		{ VBR_FLOW_F_IPV6_HOP, { ETH_IT, IT(IPV6, &ip6, &ip6m),
					 END_IT } },
		{ VBR_FLOW_F_GRE_CKS, { ETH_IT, IT(IPV4, NULL, NULL),
					IT(GRE, &gre, &grem), END_IT } },
		{ VBR_FLOW_F_ESP, { ETH_IT, IT(IPV4, NULL, NULL),
				    IT(ESP, &esp, NULL), END_IT } },
		{ VBR_FLOW_F_MPLS, { ETH_IT, IT(IPV4, NULL, NULL),
				     IT(UDP, NULL, NULL), IT(MPLS, &mpls, NULL),
				     END_IT } },
		{ VBR_FLOW_F_VXLAN, { ETH_IT, IT(IPV4, NULL, NULL),
				      IT(UDP, NULL, NULL),
				      IT(VXLAN, &vxlan, NULL), END_IT } },
		{ VBR_FLOW_F_FRAG, { ETH_IT, IT(IPV4, &ip4f, &ip4fm),
				     END_IT } },
	};
#undef IT
#undef ETH_IT
#undef END_IT
	struct vbr_steer_caps *c = &priv->steer_caps;
	struct vbr_steer_probe_q q;
	unsigned int lo, hi, mid, i;
	int ret;

	if (c->probed)
		return 0;
	ret = vbr_steer_probe_q_make(priv, &q);
	if (ret != 0) {
		VBR_LOG(ERR, "port %u: probe queue: %s",
			priv->dev->data->port_id, strerror(-ret));
		return ret;
	}
	ret = vbr_steer_try(priv, q.qp, p_eth, 0);
	if (ret != 0) {
		VBR_LOG(ERR, "port %u: the device takes no flow rule "
			"(ibv_create_flow at priority 0: %s)",
			priv->dev->data->port_id, strerror(ret));
		vbr_steer_probe_q_free(priv, &q);
		return -ret;
	}
	/* Highest priority accepted, below VBR_FLOW_PRIOS_MAX. */
	lo = 0;
	hi = VBR_FLOW_PRIOS_MAX;
	if (vbr_steer_try(priv, q.qp, p_eth, hi - 1) == 0)
		lo = hi - 1;
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (vbr_steer_try(priv, q.qp, p_eth, mid) == 0)
			lo = mid;
		else
			hi = mid;
	}
	c->nb_prios = lo + 1;
	c->no_fields = 0;
	for (i = 0; i < RTE_DIM(opt); i++)
		if (vbr_steer_try(priv, q.qp, opt[i].p, 0) != 0)
			c->no_fields |= opt[i].bit;
	vbr_steer_probe_q_free(priv, &q);
	if (c->nb_prios < VBR_FLOW_PRIO_SUB + VBR_FLOW_PRIO_INTERNAL_SPAN) {
		VBR_LOG(ERR, "port %u: the device takes %u flow priorities: "
			"vbr needs at least %u", priv->dev->data->port_id,
			c->nb_prios,
			VBR_FLOW_PRIO_SUB + VBR_FLOW_PRIO_INTERNAL_SPAN);
		return -ENOTSUP;
	}
	c->levels = RTE_MIN(VBR_FLOW_PRIO_LEVELS,
			    (c->nb_prios - VBR_FLOW_PRIO_INTERNAL_SPAN) /
			    VBR_FLOW_PRIO_SUB);
	c->probed = 1;
	__atomic_store_n(&priv->steer_caps_ready, 1, __ATOMIC_RELEASE);
	VBR_LOG(INFO, "port %u: %u verbs flow priorities: %u rte_flow "
		"levels; optional matches refused: 0x%x",
		priv->dev->data->port_id, c->nb_prios, c->levels,
		c->no_fields);
	return 0;
}

/** What the translation of a user rule may assume of this port. */
void
vbr_steer_flow_caps(struct vbr_priv *priv, struct vbr_flow_caps *caps)
{
	bool probed = __atomic_load_n(&priv->steer_caps_ready,
				      __ATOMIC_ACQUIRE);

	memset(caps, 0, sizeof(*caps));
	caps->nb_rx_queues = priv->dev->data->nb_rx_queues;
	caps->vlan_any_tpid = priv->vlan_any_tpid;
	/* Probed once and never changed: no lock on the rule path. */
	if (!probed)
		pthread_mutex_lock(&priv->flow_lock);
	if (!priv->steer_caps.probed)
		vbr_steer_probe(priv);
	if (priv->steer_caps.probed) {
		caps->prio_levels = priv->steer_caps.levels;
		caps->nb_prios = priv->steer_caps.nb_prios;
		caps->no_fields = priv->steer_caps.no_fields;
	}
	if (!probed)
		pthread_mutex_unlock(&priv->flow_lock);
}

/*
 * Rules.
 */

static struct vbr_rss *vbr_steer_port_set(struct vbr_priv *priv);

/** Verbs priority of the flow of type pt of a rule. */
uint16_t
vbr_steer_prio(const struct vbr_priv *priv, const struct rte_flow *flow,
	       unsigned int pt)
{
	unsigned int levels = priv->steer_caps.probed ?
			      priv->steer_caps.levels : VBR_FLOW_PRIO_LEVELS;
	unsigned int base = levels * VBR_FLOW_PRIO_SUB;
	struct vbr_flow_desc d;

	d.sub = flow->sub;
	if (flow->tier == VBR_STEER_TIER_USER && flow->comp != 0)
		return flow->level * VBR_FLOW_PRIO_SUB + 1 +
		       RTE_MIN(vbr_flow_pt_sub(&d, pt), 1);
	switch (flow->tier) {
	case VBR_STEER_TIER_ACCEPT:
		return base + vbr_flow_pt_sub(&d, pt);
	case VBR_STEER_TIER_VLAN_DROP:
		return base + VBR_FLOW_PRIO_SUB;
	case VBR_STEER_TIER_ADDR:
		return base + VBR_FLOW_PRIO_SUB + 1 + vbr_flow_pt_sub(&d, pt);
	default:
		return flow->level * VBR_FLOW_PRIO_SUB +
		       vbr_flow_pt_sub(&d, pt);
	}
}

/* The queue set a rule's flows go on. */
static struct vbr_rss *
vbr_steer_set(struct vbr_priv *priv, const struct rte_flow *flow)
{
	return flow->rss != NULL ? flow->rss : priv->rss_port;
}

/*
 * Companions' fate. A companion catches frames its rule's verbs specs
 * match and its meaning excludes (vbr_flow_comp_attr()); they must go
 * where they would go without the rule. Below the rule that is either a
 * user rule at its level or a worse one, or the internal rules. A user
 * rule that may match such frames is a conflict, refused when the second
 * of the two is created (vbr_steer_cf_overlap()): giving the companions
 * that rule's fate would mean copies of its mark, counters and meter on
 * more verbs flows. Otherwise the port's state decides, and so does the
 * companion: isolated, the frames are dropped as unmatched (no internal
 * rule); promiscuous, or all-multicast for a multicast dst, they are
 * accepted on the port's queue set; an exact dst the port lists (an
 * address, the multicast list, broadcast) is accepted too, or with the
 * VLAN filter on split by VID: the accepted VIDs and VID 0 (one flow
 * each, the full VID) are accepted, the rest (the complement in disjoint
 * prefixes of the VID, at most 12 per accepted VID) dropped and counted
 * with the filter's own drops (rx_vlan_filtered); a dst the port does not
 * take is dropped and counted as unmatched (rx_no_match, through the
 * comp_drop counters object). The accepted ones are hashed by the port's
 * queue set as the internal rules would hash them, which needs one
 * packet type: a port RSS that would tell the frames apart by L4 is
 * refused (the companions have one verbs priority, the expansion needs
 * one per layer). Every companion of one rule sits at one verbs priority
 * and no two overlap, so the device needs no order among them.
 */

/* What the port does with the frames before its VLAN filter. */
enum vbr_steer_pfate {
	VBR_STEER_PF_ACCEPT,	/**< taken, whatever the tag */
	VBR_STEER_PF_VID,	/**< taken by address: the VLAN filter decides */
	VBR_STEER_PF_UNMATCHED,	/**< no internal rule takes them */
};

/* The excluded frames of a VBR_FLOW_COMP_* bit, for messages. */
static const char *
vbr_steer_comp_what(uint8_t bit)
{
	if (bit == 0)
		return "fragments (kept in software)";
	return bit == VBR_FLOW_COMP_TAGGED ?
	       "802.1Q-tagged frames (eth has_vlan 0)" :
	       "IPv6 frames with an extension header (ipv6 has_frag_ext 0)";
}

/* The rule's outer eth spec (its first), false: none. */
static bool
vbr_steer_eth_spec(const struct rte_flow *flow, struct ibv_flow_spec_eth *e)
{
	if (flow->items_end < sizeof(*flow->attr) + sizeof(*e))
		return false;
	memcpy(e, (const uint8_t *)flow->attr + sizeof(*flow->attr),
	       sizeof(*e));
	return e->type == IBV_FLOW_SPEC_ETH;
}

/* Whether the port's own rules take dst: an address, listed, broadcast. */
static bool
vbr_steer_addr_listed(const struct vbr_priv *priv,
		      const struct rte_ether_addr *dst)
{
	const struct rte_ether_addr *macs = priv->dev->data->mac_addrs;
	unsigned int i;

	if (rte_is_broadcast_ether_addr(dst))
		return true;
	for (i = 0; i < VBR_MAX_MAC_ADDRS; i++)
		if (!rte_is_zero_ether_addr(&macs[i]) &&
		    rte_is_same_ether_addr(&macs[i], dst))
			return true;
	for (i = 0; i < priv->nb_mc_addrs; i++)
		if (rte_is_same_ether_addr(&priv->mc_addrs[i], dst))
			return true;
	return false;
}

/* What the port does with the excluded frames of bit of a rule. */
static int
vbr_steer_port_fate(const struct vbr_priv *priv, const struct rte_flow *flow,
		    uint8_t bit, enum vbr_steer_pfate *pf,
		    struct rte_flow_error *error)
{
	struct ibv_flow_spec_eth e;
	struct rte_ether_addr dst;

	if (priv->isolated || priv->promisc) {
		*pf = priv->isolated ? VBR_STEER_PF_UNMATCHED :
				       VBR_STEER_PF_ACCEPT;
		return 0;
	}
	if (!vbr_steer_eth_spec(flow, &e) ||
	    !rte_is_broadcast_ether_addr((const struct rte_ether_addr *)
					 e.mask.dst_mac))
		return vbr_flow_error(error, ENOTSUP, RTE_FLOW_ERROR_TYPE_ITEM,
			NULL, "vbr: the %s this rule excludes must take the "
			"fate the port's MAC filter gives them, which vbr "
			"follows for one eth dst only: give the dst "
			"under a full mask, or make the port promiscuous",
			vbr_steer_comp_what(bit));
	memcpy(&dst, e.val.dst_mac, sizeof(dst));
	if (priv->allmulti && rte_is_multicast_ether_addr(&dst))
		*pf = VBR_STEER_PF_ACCEPT;
	else if (vbr_steer_addr_listed(priv, &dst))
		*pf = priv->dev->data->dev_conf.rxmode.offloads &
		      RTE_ETH_RX_OFFLOAD_VLAN_FILTER ?
		      VBR_STEER_PF_VID : VBR_STEER_PF_ACCEPT;
	else
		*pf = VBR_STEER_PF_UNMATCHED;
	return 0;
}

static int
vbr_steer_vid_cmp(const void *a, const void *b)
{
	return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}

/* The VIDs the VLAN filter takes, 0 (untagged, priority tag) included. */
static unsigned int
vbr_steer_vids(const struct vbr_priv *priv, uint16_t *out)
{
	unsigned int i, n = 0, k;

	out[n++] = 0;
	for (i = 0; i < priv->nb_vlan_ids; i++)
		out[n++] = priv->vlan_ids[i] & RTE_ETHER_MAX_VLAN_ID;
	qsort(out, n, sizeof(out[0]), vbr_steer_vid_cmp);
	for (i = 1, k = 1; i < n; i++)
		if (out[i] != out[k - 1])
			out[k++] = out[i];
	return k;
}

/* Whether vid is in the sorted v[0, n). */
static bool
vbr_steer_vid_in(const uint16_t *v, unsigned int n, uint16_t vid)
{
	return bsearch(&vid, v, n, sizeof(v[0]), vbr_steer_vid_cmp) != NULL;
}

/*
 * The VIDs under prefix (its top depth bits) that are not in the sorted
 * v[lo, hi), as disjoint prefixes: appended to cf as filtered companions
 * of base 0.
 */
static void
vbr_steer_vid_rest(const uint16_t *v, unsigned int lo, unsigned int hi,
		   uint16_t prefix, unsigned int depth,
		   struct vbr_steer_cf *cf, unsigned int *n)
{
	uint16_t half;
	unsigned int mid;

	if (lo == hi) {
		cf[(*n)++] = (struct vbr_steer_cf){
			.vid = prefix,
			.vmask = (RTE_ETHER_MAX_VLAN_ID << (12 - depth)) &
				 RTE_ETHER_MAX_VLAN_ID,
			.fate = VBR_STEER_CF_FILTERED,
		};
		return;
	}
	if (depth == 12)
		return;
	half = prefix | (1u << (11 - depth));
	for (mid = lo; mid < hi && v[mid] < half; mid++)
		;
	vbr_steer_vid_rest(v, lo, mid, prefix, depth + 1, cf, n);
	vbr_steer_vid_rest(v, mid, hi, half, depth + 1, cf, n);
}

/* Append one companion to cf. */
static void
vbr_steer_cf_add(struct vbr_steer_cf *cf, unsigned int *n, unsigned int base,
		 uint16_t vid, uint16_t vmask, enum vbr_steer_cfate fate)
{
	cf[(*n)++] = (struct vbr_steer_cf){
		.base = base, .vid = vid, .vmask = vmask, .fate = fate,
	};
}

/*
 * The companions of a rule for the port's state (see above): into cf
 * (VBR_STEER_CF_MAX entries), their number in *nb; port is the port's set
 * (NULL while stopped), types its RSS types. Return 0, or a negative errno
 * with *error saying why the rule cannot be exact on the port as it is.
 */
static int
vbr_steer_cf_plan(struct vbr_priv *priv, const struct rte_flow *flow,
		  struct vbr_rss *port, uint64_t types,
		  struct vbr_steer_cf *cf, unsigned int *nb,
		  struct rte_flow_error *error)
{
	unsigned int nb_base = vbr_flow_nb_comp(flow->comp), i, n = 0, nv = 0;
	uint16_t vids[VBR_MAX_VLAN_IDS + 1];
	struct ibv_flow_spec_eth e;
	enum vbr_steer_pfate pf = VBR_STEER_PF_ACCEPT;
	struct vbr_flow_desc *d;
	struct vbr_flow_exp x;
	int ret;

	for (i = 0; i < nb_base; i++) {
		uint8_t bit = vbr_flow_comp_bit(flow->comp, i);
		unsigned int j;
		uint16_t vid;

		ret = vbr_steer_port_fate(priv, flow, bit, &pf, error);
		if (ret != 0)
			return ret;
		if (pf != VBR_STEER_PF_VID) {
			vbr_steer_cf_add(cf, &n, i, 0, 0,
					 pf == VBR_STEER_PF_ACCEPT ?
					 VBR_STEER_CF_ACCEPT :
					 VBR_STEER_CF_UNMATCHED);
			continue;
		}
		if (nv == 0)
			nv = vbr_steer_vids(priv, vids);
		if (bit == VBR_FLOW_COMP_TAGGED) {
			/* Base 0 split by VID covers every tagged frame. */
			if (i != 0)
				continue;
			for (j = 0; j < nv; j++)
				vbr_steer_cf_add(cf, &n, 0, vids[j],
						 RTE_ETHER_MAX_VLAN_ID,
						 VBR_STEER_CF_ACCEPT);
			vbr_steer_vid_rest(vids, 0, nv, 0, 0, cf, &n);
			continue;
		}
		if (!vbr_steer_eth_spec(flow, &e) ||
		    (rte_be_to_cpu_16(e.mask.vlan_tag) &
		     RTE_ETHER_MAX_VLAN_ID) != RTE_ETHER_MAX_VLAN_ID)
			return vbr_flow_error(error, ENOTSUP,
				RTE_FLOW_ERROR_TYPE_ITEM, NULL,
				"vbr: ipv6 item: has_frag_ext 0 on a port "
				"whose VLAN filter is on: the frames its "
				"companions catch are taken or dropped by "
				"VID, and verbs cannot tell untagged ones "
				"apart: give a vlan item with the full VID, "
				"make the port promiscuous, or turn the "
				"filter off");
		vid = rte_be_to_cpu_16(e.val.vlan_tag) & RTE_ETHER_MAX_VLAN_ID;
		vbr_steer_cf_add(cf, &n, i, 0, 0,
				 vbr_steer_vid_in(vids, nv, vid) ?
				 VBR_STEER_CF_ACCEPT : VBR_STEER_CF_FILTERED);
	}
	*nb = n;
	/* Accepted frames are hashed as the port's own rules hash them. */
	d = malloc(sizeof(*d));
	if (d == NULL)
		return rte_flow_error_set(error, ENOMEM,
			RTE_FLOW_ERROR_TYPE_HANDLE, NULL,
			"vbr: no memory for the rule's companions");
	d->l3 = flow->l3;
	d->l4 = flow->l4;
	d->sub = flow->sub;
	vbr_flow_expand(d, types, &x);
	free(d);
	for (i = 0; i < n; i++) {
		bool acc = cf[i].fate == VBR_STEER_CF_ACCEPT;

		if (acc && x.nb > 1)
			break;
		cf[i].set = acc ? port : vbr_steer_set(priv, flow);
		cf[i].pt = acc ? x.pt[0] : VBR_FLOW_PT_L2;
	}
	if (i < n)
		return vbr_flow_error(error, ENOTSUP, RTE_FLOW_ERROR_TYPE_ITEM,
			NULL, "vbr: the port's RSS would hash the frames this "
			"rule's companions give back to it by %u packet types "
			"(as %s and below), which verbs orders by priority, "
			"and a rule's companions have one: fix the L4 "
			"protocol in the pattern, or give the port fewer RSS "
			"types", x.nb, vbr_flow_pt_name(x.pt[0]));
	return 0;
}

/* The counters object a companion's drops go to, NULL: none. */
static struct vbr_count *
vbr_steer_cf_cnt(struct vbr_priv *priv, const struct vbr_steer_cf *cf)
{
	if (cf->fate == VBR_STEER_CF_FILTERED && priv->vlan_drop_cnt)
		return &priv->vlan_drop;
	if (cf->fate == VBR_STEER_CF_UNMATCHED && priv->comp_drop_cnt)
		return &priv->comp_drop;
	return NULL;
}

/*
 * ibv_create_flow() of the verbs attr in buf (VBR_STEER_ATTR_ROOM bytes)
 * on qp, for a flow of type pt of rule flow (what: which one, for the
 * message). A multicast flow keeps its priority on a ConnectX
 * (vbr_flow_attr_keep_prio()). NULL with *err and *error set.
 */
static struct ibv_flow *
vbr_steer_flow_make(struct vbr_priv *priv, const struct rte_flow *flow,
		    struct ibv_qp *qp, uint8_t *buf, unsigned int pt,
		    const char *what, int *err, struct rte_flow_error *error)
{
	struct ibv_flow *f;

	if (!vbr_flow_attr_keep_prio(buf, VBR_STEER_ATTR_ROOM))
		VBR_LOG(INFO, "port %u: rule %u (%s)%s: a multicast flow with "
			"%u specs: on a ConnectX it goes to the multicast "
			"table, behind every priority",
			priv->dev->data->port_id, flow->id,
			vbr_flow_pt_name(pt), what,
			((struct ibv_flow_attr *)buf)->num_of_specs);
	errno = 0;
	f = priv->glue->create_flow(qp, (struct ibv_flow_attr *)buf);
	if (f != NULL)
		return f;
	*err = errno != 0 ? errno : EIO;
	VBR_LOG(DEBUG, "port %u: rule %u (%s): ibv_create_flow%s: %s",
		priv->dev->data->port_id, flow->id, vbr_flow_pt_name(pt),
		what, strerror(*err));
	vbr_flow_error(error, *err, RTE_FLOW_ERROR_TYPE_HANDLE, NULL,
		       "vbr: ibv_create_flow%s: %s (errno %d%s)", what,
		       strerror(*err), *err, *err == ENOTSUP ?
		       ": the device does not support a spec or action of "
		       "the rule" : "");
	return NULL;
}

/* Destroy a rule's companions, last first, and forget them. */
static void
vbr_steer_cf_off(struct vbr_priv *priv, struct rte_flow *flow)
{
	struct vbr_count *cnt;
	unsigned int i;
	int ret;

	for (i = flow->nb_cf; i-- > 0;) {
		struct vbr_steer_cf *cf = &flow->cf[i];

		if (cf->flow == NULL)
			continue;
		cnt = vbr_steer_cf_cnt(priv, cf);
		if (cnt != NULL)
			vbr_count_unbind(priv, cnt);
		ret = priv->glue->destroy_flow(cf->flow);
		if (ret != 0)
			VBR_LOG(ERR, "port %u: rule %u: companion: "
				"destroy_flow: %s", priv->dev->data->port_id,
				flow->id, strerror(ret));
		cf->flow = NULL;
	}
	free(flow->cf);
	flow->cf = NULL;
	flow->nb_cf = 0;
}

/*
 * The RSS types the port's queue set tells frames apart by: its hash
 * types, none if its reta names one queue only (every hash picks it).
 */
static uint64_t
vbr_steer_port_types(const struct vbr_priv *priv)
{
	unsigned int i;

	if ((priv->dev->data->dev_conf.rxmode.mq_mode &
	     RTE_ETH_MQ_RX_RSS_FLAG) == 0)
		return 0;
	for (i = 1; i < priv->reta_size; i++)
		if (priv->reta[i] != priv->reta[0])
			return priv->rss_hf;
	return 0;
}

/*
 * The companions of a rule for the port's state now, in a fresh array
 * (*nb entries; NULL and 0 with none). Return 0 or a negative errno with
 * *error set.
 */
static int
vbr_steer_cf_make(struct vbr_priv *priv, const struct rte_flow *flow,
		  struct vbr_steer_cf **out, unsigned int *nb,
		  struct rte_flow_error *error)
{
	struct vbr_steer_cf *cf;
	unsigned int n = 0;
	int ret;

	*out = NULL;
	*nb = 0;
	if (flow->comp == 0 || flow->tier != VBR_STEER_TIER_USER)
		return 0;
	cf = calloc(VBR_STEER_CF_MAX, sizeof(*cf));
	if (cf == NULL)
		return rte_flow_error_set(error, ENOMEM,
			RTE_FLOW_ERROR_TYPE_HANDLE, NULL,
			"vbr: no memory for the rule's companions");
	ret = vbr_steer_cf_plan(priv, flow, priv->rss_port,
				vbr_steer_port_types(priv), cf, &n, error);
	if (ret != 0 || n == 0) {
		/* none in this state: no array (realloc to 0 would free it) */
		free(cf);
		return ret;
	}
	*out = realloc(cf, n * sizeof(*cf));
	if (*out == NULL)
		*out = cf;
	*nb = n;
	return 0;
}

/* Whether the companions in cf[0, n) are the rule's now. */
static bool
vbr_steer_cf_same(const struct rte_flow *flow, const struct vbr_steer_cf *cf,
		  unsigned int n)
{
	unsigned int i;

	if (n != flow->nb_cf)
		return false;
	for (i = 0; i < n; i++) {
		const struct vbr_steer_cf *a = &cf[i], *b = &flow->cf[i];

		if (a->set != b->set || a->vid != b->vid ||
		    a->vmask != b->vmask || a->base != b->base ||
		    a->pt != b->pt || a->fate != b->fate)
			return false;
	}
	return true;
}

/*
 * Create the companions of a rule for the port's state, at the first
 * verbs priority of its level. Return 0 or a negative errno with *error
 * set and none of them left.
 */
static int
vbr_steer_cf_on(struct vbr_priv *priv, struct rte_flow *flow,
		struct rte_flow_error *error)
{
	uint8_t buf[VBR_STEER_ATTR_ROOM] __rte_aligned(8);
	struct vbr_count *cnt;
	struct ibv_flow *f;
	unsigned int i, n;
	struct ibv_qp *qp;
	int ret, err;

	ret = vbr_steer_cf_make(priv, flow, &flow->cf, &n, error);
	if (ret != 0)
		return ret;
	flow->nb_cf = n;
	for (i = 0; i < n; i++) {
		struct vbr_steer_cf *cf = &flow->cf[i];

		cnt = vbr_steer_cf_cnt(priv, cf);
		qp = cf->set != NULL ? vbr_rss_qp(priv, cf->set, cf->pt) : NULL;
		if (qp == NULL) {
			err = errno != 0 ? errno : EIO;
			vbr_flow_error(error, err, RTE_FLOW_ERROR_TYPE_HANDLE,
				NULL, "vbr: cannot create the %s hash QP of "
				"the rule's companions: %s",
				vbr_flow_pt_name(cf->pt), strerror(err));
			goto error;
		}
		if (vbr_flow_comp_attr(flow->attr, flow->items_end,
				       flow->comp, cf->base,
				       flow->level * VBR_FLOW_PRIO_SUB, buf,
				       sizeof(buf)) == 0 ||
		    vbr_flow_comp_fate(buf, sizeof(buf), cf->vid, cf->vmask,
				       cf->fate != VBR_STEER_CF_ACCEPT,
				       cnt != NULL ? cnt->obj : NULL) == 0) {
			err = E2BIG;
			rte_flow_error_set(error, err,
				RTE_FLOW_ERROR_TYPE_HANDLE, NULL,
				"vbr: the rule is too large for its "
				"companions");
			goto error;
		}
		f = vbr_steer_flow_make(priv, flow, qp, buf, cf->pt,
					" of a companion", &err, error);
		if (f == NULL)
			goto error;
		cf->flow = f;
		if (cnt != NULL)
			vbr_count_bind(cnt);
	}
	return 0;
error:
	vbr_steer_cf_off(priv, flow);
	return -err;
}

/*
 * Whether rule o may match frames that the companions of rule c catch:
 * then they would take them from it. The bit of those frames, or 0.
 */
static uint8_t
vbr_steer_cf_takes(const struct rte_flow *c, const struct rte_flow *o)
{
	uint8_t buf[VBR_STEER_ATTR_ROOM] __rte_aligned(8);
	unsigned int i, nb = vbr_flow_nb_comp(c->comp);

	for (i = 0; i < nb; i++) {
		uint8_t bit = vbr_flow_comp_bit(c->comp, i);

		/* o excludes them too: they are not its frames. */
		if (o->comp & bit)
			continue;
		if (vbr_flow_comp_attr(c->attr, c->items_end, c->comp, i, 0,
				       buf, sizeof(buf)) == 0 ||
		    vbr_flow_attr_intersect((struct ibv_flow_attr *)buf,
					    c->items_end, o->attr,
					    o->items_end))
			return bit;
	}
	return 0;
}

/*
 * Refuse a new rule n that a rule's companions would take frames from,
 * or whose companions would take frames of a rule at its level or worse
 * (see "Companions' fate"). Return 0 or a negative errno, *error set.
 */
static int
vbr_steer_cf_overlap(const struct vbr_priv *priv, const struct rte_flow *n,
		     struct rte_flow_error *error)
{
	const struct rte_flow *o;
	uint8_t bit;

	/* No companions on either side: nothing to check (and no walk of
	 * a million rules per create).
	 */
	if (n->comp == 0 && priv->nb_comp_flows == 0)
		return 0;
	TAILQ_FOREACH(o, &priv->flows, next) {
		if (o->tier != VBR_STEER_TIER_USER || o == n)
			continue;
		if (n->comp != 0 && o->level >= n->level) {
			bit = vbr_steer_cf_takes(n, o);
			if (bit != 0)
				return vbr_flow_error(error, ENOTSUP,
					RTE_FLOW_ERROR_TYPE_HANDLE, NULL,
					"vbr: rule %u (priority %u) may match "
					"%s that this rule excludes: its "
					"companions, which send them where "
					"they would go without it, would "
					"take them from rule %u: make the "
					"patterns disjoint, or give rule %u "
					"a better priority", o->id, o->level,
					vbr_steer_comp_what(bit), o->id,
					o->id);
		}
		if (o->comp != 0 && n->level >= o->level) {
			bit = vbr_steer_cf_takes(o, n);
			if (bit != 0)
				return vbr_flow_error(error, ENOTSUP,
					RTE_FLOW_ERROR_TYPE_HANDLE, NULL,
					"vbr: the rule may match %s that rule "
					"%u (priority %u) excludes: that "
					"rule's companions catch them first "
					"and would take them from this one: "
					"make the patterns disjoint, or give "
					"this rule a better priority than %u",
					vbr_steer_comp_what(bit), o->id,
					o->level, o->level);
		}
	}
	return 0;
}

/*
 * Identical rules. Two verbs flows with the same specs at one verbs
 * priority are one flow table entry to a ConnectX: the kernel adds the
 * second one's destination to the first's when their actions agree (each
 * frame then goes to both: duplicated), and refuses it with EEXIST when
 * they differ (Linux mlx5 fs_core.c, add_rule_fg()). So a user rule whose
 * level, companions and item specs are another's is refused before the
 * device is asked, naming that rule. The user rules are kept in a tree by
 * that match (tsearch()): the check costs log n, not a walk of the list.
 */
static int
vbr_steer_match_cmp(const void *a, const void *b)
{
	const struct rte_flow *x = a, *y = b;

	if (x->level != y->level)
		return x->level < y->level ? -1 : 1;
	if (x->comp != y->comp)
		return x->comp < y->comp ? -1 : 1;
	if (x->items_end != y->items_end)
		return x->items_end < y->items_end ? -1 : 1;
	return memcmp(x->attr + 1, y->attr + 1,
		      x->items_end - sizeof(*x->attr));
}

/* Refuse n if a user rule has its match. 0 or -EEXIST, *error set. */
static int
vbr_steer_same_match(const struct vbr_priv *priv, const struct rte_flow *n,
		     struct rte_flow_error *error)
{
	struct rte_flow *const *found;
	const struct rte_flow *o;

	found = tfind(n, &priv->rule_tree, vbr_steer_match_cmp);
	if (found == NULL || *found == n)
		return 0;
	o = *found;
	return vbr_flow_error(error, EEXIST, RTE_FLOW_ERROR_TYPE_HANDLE, NULL,
		"vbr: rule %u (priority %u) has this rule's pattern as the "
		"device matches it%s: a ConnectX would merge the two (frames "
		"delivered twice) or refuse this one: destroy rule %u first, "
		"or give another priority", o->id, o->level,
		(n->sw_frag | o->sw_frag) != 0 ? " (fragment conditions are "
		"kept in software)" : "", o->id);
}

/* Put a user rule in the match tree. 0 or -ENOMEM. */
static int
vbr_steer_match_add(struct vbr_priv *priv, struct rte_flow *flow)
{
	return tsearch(flow, &priv->rule_tree, vbr_steer_match_cmp) != NULL ?
	       0 : -ENOMEM;
}

/* Take a user rule out of the match tree, if it is there. */
static void
vbr_steer_match_del(struct vbr_priv *priv, struct rte_flow *flow)
{
	struct rte_flow *const *found;

	found = tfind(flow, &priv->rule_tree, vbr_steer_match_cmp);
	if (found != NULL && *found == flow)
		tdelete(flow, &priv->rule_tree, vbr_steer_match_cmp);
}

/*
 * Fragments in software. On a device that cannot match fragments (a
 * ConnectX through verbs), a rule's fragment condition (ipv4
 * fragment_offset, ipv6 has_frag_ext) is left out of its verbs flow and
 * kept in its Rx action table entry: the Rx burst takes the mark off the
 * frames outside it (vbr_flow.c, vbr_rxtx.c). Those frames were steered
 * by the rule, so this is exact only where the rule puts them where they
 * go without it: the port takes them (as for companions: promiscuous, or
 * a dst the port lists, with the VLAN filter the frames' VID), and the
 * rule's queue set places every frame as the port's own set does
 * (vbr_rss_same_place()). And no other rule may lose them: a rule at the
 * same level or worse that may match them is refused, in both orders,
 * unless it excludes them too (vbr_steer_frag_within()).
 */

/* The item and field of a rule's software condition, for messages. */
static const char *
vbr_steer_frag_field(uint8_t sw_frag)
{
	return sw_frag & VBR_RX_FRAG_V6 ? "ipv6 item: has_frag_ext" :
	       "ipv4 item: fragment_offset";
}

/*
 * Whether the frames condition n excludes are all excluded by condition o
 * too (o's accepted frames are among n's), 0: no condition.
 */
static bool
vbr_steer_frag_within(uint8_t o, uint8_t n)
{
	unsigned int mo = o & 0x7, vo = (o >> VBR_RX_FRAG_VAL_SHIFT) & 0x7;
	unsigned int mn = n & 0x7, vn = (n >> VBR_RX_FRAG_VAL_SHIFT) & 0x7;

	if (o == 0 || n == 0 ||
	    ((o ^ n) & (VBR_RX_FRAG_V4 | VBR_RX_FRAG_V6)) != 0)
		return false;
	if (n & VBR_RX_FRAG_V6)
		return true;
	return (mn & ~mo) == 0 && (vo & mn) == vn;
}

/*
 * Whether the frames a software condition of flow excludes are taken by
 * the port as its own rules would take them, on port (its queue set).
 * Return 0 or a negative errno, *error set.
 */
static int
vbr_steer_sw_exact(struct vbr_priv *priv, const struct rte_flow *flow,
		   const struct vbr_rss *set, const struct vbr_rss *port,
		   struct rte_flow_error *error)
{
	enum vbr_steer_pfate pf;
	struct ibv_flow_spec_eth e;
	uint16_t vids[VBR_MAX_VLAN_IDS + 1];
	int ret;

	if (flow->sw_frag == 0)
		return 0;
	ret = vbr_steer_port_fate(priv, flow, 0, &pf, error);
	if (ret != 0)
		return ret;
	if (pf == VBR_STEER_PF_VID) {
		/* Untagged only: VID 0, which the filter always takes. */
		if (flow->comp & VBR_FLOW_COMP_TAGGED)
			pf = VBR_STEER_PF_ACCEPT;
		else if (vbr_steer_eth_spec(flow, &e) &&
			 (rte_be_to_cpu_16(e.mask.vlan_tag) &
			  RTE_ETHER_MAX_VLAN_ID) == RTE_ETHER_MAX_VLAN_ID &&
			 vbr_steer_vid_in(vids, vbr_steer_vids(priv, vids),
					  rte_be_to_cpu_16(e.val.vlan_tag) &
					  RTE_ETHER_MAX_VLAN_ID))
			pf = VBR_STEER_PF_ACCEPT;
	}
	if (pf != VBR_STEER_PF_ACCEPT)
		return vbr_flow_error(error, ENOTSUP, RTE_FLOW_ERROR_TYPE_ITEM,
			NULL, "vbr: %s: the device cannot match fragments, and "
			"the port would %s the frames this rule excludes, "
			"which its verbs flow takes: make the port "
			"promiscuous, or give the port's own address as the "
			"eth dst", vbr_steer_frag_field(flow->sw_frag),
			pf == VBR_STEER_PF_VID ? "filter by VID" : "not take");
	if (set == NULL || port == NULL || !vbr_rss_same_place(priv, set, port))
		return vbr_flow_error(error, ENOTSUP, RTE_FLOW_ERROR_TYPE_ITEM,
			NULL, "vbr: %s: the device cannot match fragments; only "
			"a mark with the port's own RSS can be kept exact in "
			"software: give rss over the port's queues as its "
			"redirection table has them, its hash types and key "
			"(or none)",
			vbr_steer_frag_field(flow->sw_frag));
	return 0;
}

/*
 * vbr_steer_sw_exact() for the state the rule goes on the device with:
 * the running one, or while stopped the one it will start with; set is
 * its queue set (NULL: none).
 */
static int
vbr_steer_sw_check(struct vbr_priv *priv, const struct rte_flow *flow,
		   const struct vbr_rss *set, struct rte_flow_error *error)
{
	bool promisc = priv->promisc, allmulti = priv->allmulti;
	struct vbr_rss *port;
	int ret;

	if (flow->sw_frag == 0)
		return 0;
	if (priv->flows_on)
		return vbr_steer_sw_exact(priv, flow, set, priv->rss_port,
					  error);
	port = vbr_steer_port_set(priv);
	if (port == NULL)
		return rte_flow_error_set(error, ENOMEM,
			RTE_FLOW_ERROR_TYPE_HANDLE, NULL,
			"vbr: no memory for the port's queue set");
	priv->promisc = priv->dev->data->promiscuous;
	priv->allmulti = priv->dev->data->all_multicast;
	ret = vbr_steer_sw_exact(priv, flow, set, port, error);
	priv->promisc = promisc;
	priv->allmulti = allmulti;
	vbr_rss_put(priv, port);
	return ret;
}

/*
 * Refuse a new rule n whose verbs flow would take frames its software
 * condition excludes from a rule at its level or worse, or that may
 * match frames such a rule's flow takes first. 0 or a negative errno.
 */
static int
vbr_steer_sw_overlap(const struct vbr_priv *priv, const struct rte_flow *n,
		     struct rte_flow_error *error)
{
	const struct rte_flow *o;

	if (n->sw_frag == 0 && priv->nb_sw_frag_flows == 0)
		return 0;
	TAILQ_FOREACH(o, &priv->flows, next) {
		if (o->tier != VBR_STEER_TIER_USER || o == n)
			continue;
		if (n->sw_frag != 0 && o->level >= n->level &&
		    !vbr_steer_frag_within(o->sw_frag, n->sw_frag) &&
		    vbr_flow_attr_intersect(n->attr, n->items_end, o->attr,
					    o->items_end))
			return vbr_flow_error(error, ENOTSUP,
				RTE_FLOW_ERROR_TYPE_HANDLE, NULL,
				"vbr: rule %u (priority %u) may match "
				"frames this rule's %s excludes (kept in "
				"software: no fragment match on the "
				"device); its verbs flow would take them: "
				"make the patterns disjoint, or give rule %u "
				"a better priority", o->id, o->level,
				vbr_steer_frag_field(n->sw_frag), o->id);
		if (o->sw_frag != 0 && n->level >= o->level &&
		    !vbr_steer_frag_within(n->sw_frag, o->sw_frag) &&
		    vbr_flow_attr_intersect(o->attr, o->items_end, n->attr,
					    n->items_end))
			return vbr_flow_error(error, ENOTSUP,
				RTE_FLOW_ERROR_TYPE_HANDLE, NULL,
				"vbr: the rule may match frames that rule %u "
				"(priority %u) excludes by its %s (kept in "
				"software: no fragment match on the device), "
				"whose verbs flow takes them first: make the "
				"patterns disjoint, or give this rule a "
				"better priority than %u",
				o->id, o->level,
				vbr_steer_frag_field(o->sw_frag), o->level);
	}
	return 0;
}

/*
 * Destroy the verbs flows in vf[] (flows or copies), last first: the own
 * flows go before their companions (vbr_steer_rule_alloc()).
 */
static void
vbr_steer_vf_off(struct vbr_priv *priv, struct rte_flow *flow, bool copies)
{
	unsigned int i;
	int ret;

	for (i = flow->nb_vf; i-- > 0;) {
		struct ibv_flow **f = copies ? &flow->vf[i].copy :
					       &flow->vf[i].flow;

		if (*f == NULL)
			continue;
		if (flow->cnt != NULL)
			vbr_count_unbind(priv, flow->cnt);
		ret = priv->glue->destroy_flow(*f);
		if (ret != 0)
			VBR_LOG(ERR, "port %u: rule %u: destroy_flow: %s",
				priv->dev->data->port_id, flow->id,
				strerror(ret));
		*f = NULL;
	}
	if (!copies) {
		vbr_steer_cf_off(priv, flow);
		flow->on = NULL;
	}
}

/** Name of a companion's fate in dumps. */
const char *
vbr_steer_cfate_name(uint8_t fate)
{
	switch (fate) {
	case VBR_STEER_CF_ACCEPT: return "accept";
	case VBR_STEER_CF_FILTERED: return "vlan-filtered";
	default: return "unmatched";
	}
}

/** Name of a fate in messages and dumps. */
const char *
vbr_steer_fate_name(enum vbr_flow_fate fate)
{
	switch (fate) {
	case VBR_FLOW_FATE_QUEUE: return "queue";
	case VBR_FLOW_FATE_RSS: return "rss";
	case VBR_FLOW_FATE_DROP: return "drop";
	default: return "port";
	}
}

/*
 * Create the verbs flows of a rule on queue set rss, into vf[].flow, or
 * vf[].copy with copies, in vf[] order (companions first). Return 0, or a
 * negative errno with *error set and nothing of it left. Holds flow_lock.
 */
static int
vbr_steer_vf_on(struct vbr_priv *priv, struct rte_flow *flow,
		struct vbr_rss *rss, bool copies, struct rte_flow_error *error)
{
	struct rte_eth_dev_data *data = priv->dev->data;
	uint8_t buf[VBR_STEER_ATTR_ROOM] __rte_aligned(8);
	struct ibv_flow *f;
	struct ibv_qp *qp;
	unsigned int i;
	int err, q;

	if (rss == NULL)
		return rte_flow_error_set(error, EIO,
			RTE_FLOW_ERROR_TYPE_HANDLE, NULL,
			"vbr: the port has no queue set");
	q = vbr_rss_missing_queue(priv, rss);
	if (q >= 0) {
		VBR_LOG(ERR, "port %u: rule %u (%s fate) targets Rx queue %d, "
			"which is not configured (%u Rx queues): destroy the "
			"rule or configure the queue", data->port_id, flow->id,
			vbr_steer_fate_name(flow->fate), q, data->nb_rx_queues);
		return rte_flow_error_set(error, EINVAL,
			RTE_FLOW_ERROR_TYPE_ACTION_CONF, NULL,
			"vbr: the rule targets an Rx queue that is not "
			"configured");
	}
	q = vbr_mtr_missing_queue(flow->mtr, data->nb_rx_queues);
	if (q >= 0) {
		VBR_LOG(ERR, "port %u: rule %u: its meter's policy sends "
			"frames to Rx queue %d, which is not configured (%u "
			"Rx queues): destroy the rule or configure the queue",
			data->port_id, flow->id, q, data->nb_rx_queues);
		return rte_flow_error_set(error, EINVAL,
			RTE_FLOW_ERROR_TYPE_ACTION_CONF, NULL,
			"vbr: the rule's meter policy targets an Rx queue "
			"that is not configured");
	}
	/* Companions first: on whenever an own flow is. */
	if (!copies && flow->comp != 0 && flow->tier == VBR_STEER_TIER_USER) {
		err = -vbr_steer_cf_on(priv, flow, error);
		if (err != 0)
			return -err;
	}
	for (i = 0; i < flow->nb_vf; i++) {
		unsigned int pt = flow->vf[i].pt;

		/* A drop rule delivers nothing: any QP of the set. */
		qp = vbr_rss_qp(priv, rss, flow->fate == VBR_FLOW_FATE_DROP ?
				VBR_FLOW_PT_L2 : pt);
		if (qp == NULL) {
			err = errno;
			vbr_flow_error(error, err, RTE_FLOW_ERROR_TYPE_HANDLE,
				NULL, "vbr: cannot create the %s hash QP of "
				"the rule's queues: %s (see the log)",
				vbr_flow_pt_name(pt), strerror(err));
			goto error;
		}
		if (vbr_flow_expand_attr(flow->attr, flow->items_end,
					 flow->l3, flow->l4, pt,
					 vbr_steer_prio(priv, flow, pt), buf,
					 sizeof(buf)) == 0) {
			err = E2BIG;
			rte_flow_error_set(error, err,
				RTE_FLOW_ERROR_TYPE_HANDLE, NULL,
				"vbr: the rule is too large to expand");
			goto error;
		}
		f = vbr_steer_flow_make(priv, flow, qp, buf, pt, "", &err,
					error);
		if (f == NULL)
			goto error;
		if (copies)
			flow->vf[i].copy = f;
		else
			flow->vf[i].flow = f;
		if (flow->cnt != NULL)
			vbr_count_bind(flow->cnt);
	}
	if (!copies)
		flow->on = rss;
	return 0;
error:
	vbr_steer_vf_off(priv, flow, copies);
	return -err;
}

/* The copies take over: destroy the originals. */
static void
vbr_steer_vf_commit(struct vbr_priv *priv, struct rte_flow *flow,
		    struct vbr_rss *rss)
{
	unsigned int i;

	vbr_steer_vf_off(priv, flow, false);
	for (i = 0; i < flow->nb_vf; i++) {
		flow->vf[i].flow = flow->vf[i].copy;
		flow->vf[i].copy = NULL;
	}
	flow->on = rss;
}

static void
vbr_steer_tag_count(struct vbr_priv *priv, const struct rte_flow *flow,
		    int delta)
{
	if (flow->tag != 0)
		__atomic_store_n(&priv->flow_tag_rules,
				 priv->flow_tag_rules + delta,
				 __ATOMIC_RELEASE);
}

/** The port's Rx action table (vbr_rxtx.h), made on first use. */
struct vbr_rx_act_table *
vbr_rx_act_table_get(struct vbr_priv *priv)
{
	struct vbr_rx_act_table *t = priv->rx_act;

	if (t != NULL)
		return t;
	t = calloc(1, sizeof(*t));
	if (t != NULL)
		__atomic_store_n(&priv->rx_act, t, __ATOMIC_RELEASE);
	return t;
}

/*
 * Tags of the Rx action table, on the control side. Rules whose entries
 * say the same thing share one tag: the device merges equal rules at one
 * priority only when their tags agree (as a ConnectX does), and a frame
 * still in a queue when its rule goes meets the entry it was steered with.
 * So an entry no rule uses keeps its word and its place in the map, on a
 * FIFO of idle tags; a new word takes a fresh tag while fewer than half of
 * the tags made are in use (or 4,096), else the tag idle the longest.
 */
struct vbr_tag_ctl {
	uint32_t refs;			/**< rules using the tag */
	uint32_t gen;			/**< bumped each time it goes idle */
};

struct vbr_tag_idle {
	uint32_t tag;			/**< an idle tag */
	uint32_t gen;			/**< its gen when it went idle */
};

/** A word of the map: what an entry says, and its tag. */
struct vbr_tag_word {
	uint64_t word;			/**< the entry */
	uint32_t tag;			/**< its tag */
};

struct vbr_tags {
	void *map;			/**< tsearch() tree of vbr_tag_word */
	struct vbr_tag_ctl *ctl;	/**< by tag; [0] unused */
	uint32_t ctl_size;		/**< entries of ctl */
	uint32_t next;			/**< tags [1, next) were made */
	uint32_t in_use;		/**< tags with refs > 0 */
	struct vbr_tag_idle *idle;	/**< FIFO, idle_mask + 1 entries */
	uint32_t idle_mask;		/**< its size - 1 (power of 2) */
	uint32_t idle_head;		/**< next to take (free-running) */
	uint32_t idle_tail;		/**< next to fill (free-running) */
};

static int
vbr_tag_word_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct vbr_tag_word *)a)->word;
	uint64_t y = ((const struct vbr_tag_word *)b)->word;

	return x < y ? -1 : x > y;
}

/* The tag of word in the map, or 0. */
static uint32_t
vbr_tags_find(const struct vbr_tags *t, uint64_t word)
{
	const struct vbr_tag_word key = { .word = word };
	struct vbr_tag_word *const *n = tfind(&key, &t->map,
					      vbr_tag_word_cmp);

	return n != NULL ? (*n)->tag : 0;
}

/* Forget word (its tag gets another). */
static void
vbr_tags_forget(struct vbr_tags *t, uint64_t word)
{
	const struct vbr_tag_word key = { .word = word };
	struct vbr_tag_word *const *n = tfind(&key, &t->map,
					      vbr_tag_word_cmp);
	struct vbr_tag_word *w;

	if (n == NULL)
		return;
	w = *n;
	tdelete(&key, &t->map, vbr_tag_word_cmp);
	free(w);
}

/* Map word to tag. 0 or -ENOMEM. */
static int
vbr_tags_add(struct vbr_tags *t, uint64_t word, uint32_t tag)
{
	struct vbr_tag_word *w = malloc(sizeof(*w));

	if (w == NULL)
		return -ENOMEM;
	w->word = word;
	w->tag = tag;
	if (tsearch(w, &t->map, vbr_tag_word_cmp) == NULL) {
		free(w);
		return -ENOMEM;
	}
	return 0;
}

static struct vbr_tags *
vbr_tags_get(struct vbr_priv *priv)
{
	struct vbr_tags *t = priv->tags;

	if (t != NULL)
		return t;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->next = 1;	/* 0 is "no tag" */
	priv->tags = t;
	return t;
}

/* Queue an idle tag; the FIFO doubles when full. 0 or -ENOMEM. */
static int
vbr_tags_idle_push(struct vbr_tags *t, uint32_t tag)
{
	if (t->idle == NULL || t->idle_tail - t->idle_head > t->idle_mask) {
		uint32_t size = t->idle == NULL ? 64 : (t->idle_mask + 1) * 2;
		struct vbr_tag_idle *n = malloc(size * sizeof(*n));
		uint32_t i, k = 0;

		if (n == NULL)
			return -ENOMEM;
		/* Keep only what is still idle under the same gen. */
		for (i = t->idle_head; i != t->idle_tail; i++) {
			struct vbr_tag_idle e = t->idle[i & t->idle_mask];

			if (t->ctl[e.tag].refs == 0 &&
			    t->ctl[e.tag].gen == e.gen)
				n[k++] = e;
		}
		free(t->idle);
		t->idle = n;
		t->idle_mask = size - 1;
		t->idle_head = 0;
		t->idle_tail = k;
	}
	t->idle[t->idle_tail++ & t->idle_mask] = (struct vbr_tag_idle){
		.tag = tag, .gen = t->ctl[tag].gen,
	};
	return 0;
}

/* The tag idle the longest, out of the map; 0: none. */
static uint32_t
vbr_tags_idle_take(struct vbr_priv *priv, struct vbr_tags *t)
{
	while (t->idle_head != t->idle_tail) {
		struct vbr_tag_idle e = t->idle[t->idle_head++ & t->idle_mask];
		uint64_t old;

		if (t->ctl[e.tag].refs != 0 || t->ctl[e.tag].gen != e.gen)
			continue;	/* in use again, or queued again */
		old = vbr_rx_act_word(priv->rx_act, e.tag);
		vbr_tags_forget(t, old);
		return e.tag;
	}
	return 0;
}

/*
 * The tag of an Rx action table entry saying act: the one that says it
 * already, an idle or a fresh one. 0 and *tag, or a negative errno.
 */
static int
vbr_steer_tag_get(struct vbr_priv *priv, uint64_t act, uint32_t *tag)
{
	struct vbr_rx_act_table *rt = vbr_rx_act_table_get(priv);
	struct vbr_tags *t = vbr_tags_get(priv);
	uint64_t **page;
	uint32_t n;
	int ret;

	if (rt == NULL || t == NULL)
		return -ENOMEM;
	n = vbr_tags_find(t, act);
	if (n != 0) {
		if (t->ctl[n].refs++ == 0)
			t->in_use++;
		*tag = n;
		return 0;
	}
	if (t->next > VBR_RX_TAG_MAX ||
	    (t->next > 4096 && t->in_use < (t->next - 1) / 2))
		n = vbr_tags_idle_take(priv, t);
	if (n == 0) {
		if (t->next > VBR_RX_TAG_MAX)
			return -ENOSPC;
		if (t->next >= t->ctl_size) {
			uint32_t size = RTE_MAX(t->ctl_size * 2, 1024u);
			struct vbr_tag_ctl *c = realloc(t->ctl,
							size * sizeof(*c));

			if (c == NULL)
				return -ENOMEM;
			memset(c + t->ctl_size, 0,
			       (size - t->ctl_size) * sizeof(*c));
			t->ctl = c;
			t->ctl_size = size;
		}
		page = &rt->page[t->next / VBR_RX_ACT_PAGE];
		if (*page == NULL) {
			uint64_t *p = calloc(VBR_RX_ACT_PAGE,
					     sizeof(uint64_t));

			if (p == NULL)
				return -ENOMEM;
			__atomic_store_n(page, p, __ATOMIC_RELEASE);
		}
		n = t->next++;
	}
	ret = vbr_tags_add(t, act, n);
	if (ret != 0) {
		vbr_tags_idle_push(t, n);
		return ret;
	}
	__atomic_store_n(&rt->page[n / VBR_RX_ACT_PAGE][n % VBR_RX_ACT_PAGE],
			 act, __ATOMIC_RELEASE);
	t->ctl[n].refs = 1;
	t->in_use++;
	*tag = n;
	return 0;
}

/* A rule off the device lets go of its tag; the last one makes it idle. */
static void
vbr_steer_tag_put(struct vbr_priv *priv, uint32_t tag)
{
	struct vbr_tags *t = priv->tags;

	if (tag == 0 || --t->ctl[tag].refs != 0)
		return;
	t->in_use--;
	t->ctl[tag].gen++;
	if (vbr_tags_idle_push(t, tag) != 0) {
		/* Not reusable: let its word go, keep the entry as it is. */
		vbr_tags_forget(t, vbr_rx_act_word(priv->rx_act, tag));
	}
}

/* At close: the table, its pages, the tags. */
static void
vbr_steer_tags_release(struct vbr_priv *priv)
{
	struct vbr_rx_act_table *rt = priv->rx_act;
	struct vbr_tags *t = priv->tags;
	unsigned int i;

	if (rt != NULL)
		for (i = 0; i < VBR_RX_ACT_PAGES; i++)
			free(rt->page[i]);
	free(rt);
	priv->rx_act = NULL;
	if (t == NULL)
		return;
	tdestroy(t->map, free);
	free(t->ctl);
	free(t->idle);
	free(t);
	priv->tags = NULL;
}

/* Let go of the rule's counters and ageing; it is off the device. */
static void
vbr_steer_count_put(struct vbr_priv *priv, struct rte_flow *flow)
{
	vbr_age_del(priv, flow->age);
	flow->age = NULL;
	if (flow->cnt == NULL || flow->tier != VBR_STEER_TIER_USER) {
		flow->cnt = NULL;
		return;
	}
	if (flow->count == VBR_FLOW_COUNT_INDIRECT)
		vbr_count_handle_put(priv, flow->cnt);
	else
		vbr_count_fini(priv, flow->cnt);
	flow->cnt = NULL;
}

/* The rule's counters (its own at own, or an indirect action's), ageing. */
static int
vbr_steer_count_get(struct vbr_priv *priv, struct rte_flow *flow,
		    const struct vbr_flow_desc *d, struct vbr_count *own,
		    struct rte_flow_error *error)
{
	switch (d->count) {
	case VBR_FLOW_COUNT_NONE:
		return 0;
	case VBR_FLOW_COUNT_INDIRECT:
		flow->cnt = vbr_count_handle_get(priv, d->indirect, error);
		if (flow->cnt == NULL)
			return -rte_errno;
		break;
	default:
		if (vbr_count_init(priv, own, error) != 0)
			return -rte_errno;
		flow->cnt = own;
		break;
	}
	vbr_flow_spec_set_counters((uint8_t *)flow->attr + d->count_off,
				   flow->cnt->obj);
	if (d->age) {
		flow->age = vbr_age_add(priv, flow->cnt, d->age_timeout,
					d->age_context != NULL ?
					d->age_context : flow, error);
		if (flow->age == NULL) {
			vbr_steer_count_put(priv, flow);
			return -rte_errno;
		}
	}
	return 0;
}

/*
 * A rule for d, not in the list, not on the device, with a reference to
 * its queue set (rss NULL: the port's). With own counters (COUNT, AGE),
 * they go behind the attr: one allocation.
 */
static struct rte_flow *
vbr_steer_rule_alloc(struct vbr_priv *priv, const struct vbr_flow_desc *d,
		     uint64_t types, size_t *own_off)
{
	struct vbr_flow_exp e;
	struct rte_flow *flow;
	size_t size, vf_off, attr_off;

	vbr_flow_expand(d, types, &e);
	vf_off = RTE_ALIGN_CEIL(sizeof(*flow), alignof(struct vbr_steer_vf));
	attr_off = RTE_ALIGN_CEIL(vf_off + e.nb *
				  sizeof(struct vbr_steer_vf),
				  alignof(struct ibv_flow_attr));
	size = attr_off + d->attr_size;
	*own_off = 0;
	if (d->count == VBR_FLOW_COUNT_RULE ||
	    d->count == VBR_FLOW_COUNT_HIDDEN) {
		*own_off = RTE_ALIGN_CEIL(size, alignof(struct vbr_count));
		size = *own_off + sizeof(struct vbr_count);
	}
	flow = malloc(size);
	if (flow == NULL)
		return NULL;
	memset(flow, 0, attr_off);
	flow->owner = priv;
	flow->magic = VBR_FLOW_MAGIC;
	flow->rx_act = d->rx_act;
	flow->fate = d->fate;
	flow->count = d->count;
	flow->level = d->u.attr.priority;
	flow->items_end = d->items_end;
	flow->l3 = d->l3;
	flow->l4 = d->l4;
	flow->sub = d->sub;
	flow->comp = d->comp;
	flow->sw_frag = d->sw_frag;
	flow->nb_vf = e.nb;
	flow->vf = RTE_PTR_ADD(flow, vf_off);
	/*
	 * The companions (vbr_steer_cf_on()) are made when the rule goes on
	 * the device, from the port's state at that time: vbr_steer_vf_on()
	 * creates them before vf[] and vbr_steer_vf_off() destroys them
	 * after it, so they are on the device whenever an own flow is, and
	 * no excluded frame matches an own flow while the rule goes on or
	 * off (create, queue set move, dev_start). This order is part of
	 * the contract.
	 */
	for (size_t i = 0; i < e.nb; i++)
		flow->vf[i].pt = e.pt[i];
	flow->attr = RTE_PTR_ADD(flow, attr_off);
	memcpy(flow->attr, d->u.buf, d->attr_size);
	return flow;
}

/* Off the device and the list, and freed. Holds flow_lock. */
static void
vbr_steer_free(struct vbr_priv *priv, struct rte_flow *flow)
{
	vbr_steer_vf_off(priv, flow, true);
	vbr_steer_vf_off(priv, flow, false);
	TAILQ_REMOVE(&priv->flows, flow, next);
	if (flow->tier == VBR_STEER_TIER_USER) {
		priv->nb_user_flows--;
		priv->nb_comp_flows -= flow->comp != 0;
		priv->nb_sw_frag_flows -= flow->sw_frag != 0;
		vbr_steer_match_del(priv, flow);
		vbr_steer_tag_count(priv, flow, -1);
	}
	vbr_steer_tag_put(priv, flow->tag);
	vbr_mtr_rule_put(flow->mtr);
	vbr_steer_count_put(priv, flow);
	vbr_rss_put(priv, flow->rss);
	/* Volatile: a store just before free() is otherwise dropped, and a
	 * second destroy of the handle would pass the check.
	 */
	*(volatile uint32_t *)&flow->magic = 0;
	*(const struct vbr_priv *volatile *)&flow->owner = NULL;
	free(flow);
}

/**
 * A user rule from its translation: its queue set, its counters, on the
 * device at once if the port is started, last in the list. Return it, or
 * NULL with *error set.
 */
struct rte_flow *
vbr_steer_rule_create(struct vbr_priv *priv, struct vbr_flow_desc *d,
		      struct rte_flow_error *error)
{
	struct vbr_rss *rss = NULL;
	struct vbr_mtr *mtr = NULL;
	struct rte_flow *flow;
	uint64_t types = 0;
	size_t own_off;
	int ret;

	pthread_mutex_lock(&priv->flow_lock);
	/* A metered rule with no fate of its own takes its policy's. */
	if ((d->rx_act & VBR_RX_ACT_METER) != 0) {
		mtr = vbr_mtr_rule_get(priv, d, error);
		if (mtr == NULL)
			goto error;
	}
	if (d->fate == VBR_FLOW_FATE_QUEUE || d->fate == VBR_FLOW_FATE_RSS) {
		rss = vbr_rss_get(priv, d->queues, d->nb_queues,
				  d->has_key ? d->rss_key : NULL,
				  d->fate == VBR_FLOW_FATE_RSS ?
				  d->rss_types : 0);
		if (rss == NULL) {
			rte_flow_error_set(error, errno,
				RTE_FLOW_ERROR_TYPE_HANDLE, NULL,
				"vbr: no memory for the rule's queue set");
			goto error;
		}
		types = vbr_rss_types(rss);
	}
	flow = vbr_steer_rule_alloc(priv, d, types, &own_off);
	if (flow == NULL) {
		rte_flow_error_set(error, ENOMEM, RTE_FLOW_ERROR_TYPE_HANDLE,
				   NULL, "vbr: no memory for the rule");
		vbr_rss_put(priv, rss);
		goto error;
	}
	flow->rss = rss;
	flow->tier = VBR_STEER_TIER_USER;
	flow->mtr = mtr;
	mtr = NULL;
	if (d->rx_act != 0) {
		ret = vbr_steer_tag_get(priv, d->rx_act, &flow->tag);
		if (ret != 0) {
			rte_flow_error_set(error, -ret,
				RTE_FLOW_ERROR_TYPE_HANDLE, NULL,
				ret == -ENOSPC ? "vbr: no free flow tag "
				"(16777215 rules with mark, flag or meter)" :
				"vbr: no memory for the Rx action table");
			goto error_free;
		}
		vbr_flow_spec_set_tag((uint8_t *)flow->attr + d->tag_off,
				      flow->tag);
	}
	if (vbr_steer_count_get(priv, flow, d, own_off != 0 ?
				RTE_PTR_ADD(flow, own_off) : NULL,
				error) != 0)
		goto error_free;
	flow->id = vbr_flow_rule_number(priv);
	if (vbr_steer_same_match(priv, flow, error) != 0 ||
	    vbr_steer_cf_overlap(priv, flow, error) != 0 ||
	    vbr_steer_sw_overlap(priv, flow, error) != 0 ||
	    vbr_steer_sw_check(priv, flow, rss, error) != 0)
		goto error_free;
	if (!priv->flows_on && flow->comp != 0) {
		struct vbr_steer_cf *cf;
		unsigned int n;

		/* Stopped: the state it will start with, checked now. */
		priv->promisc = priv->dev->data->promiscuous;
		priv->allmulti = priv->dev->data->all_multicast;
		if (vbr_steer_cf_make(priv, flow, &cf, &n, error) != 0)
			goto error_free;
		free(cf);
	}
	if (vbr_steer_match_add(priv, flow) != 0) {
		rte_flow_error_set(error, ENOMEM, RTE_FLOW_ERROR_TYPE_HANDLE,
				   NULL, "vbr: no memory for the rule");
		goto error_free;
	}
	/* Before the device has it: its first frames read their tag. */
	vbr_steer_tag_count(priv, flow, 1);
	if (priv->flows_on &&
	    vbr_steer_vf_on(priv, flow, vbr_steer_set(priv, flow), false,
			    error) != 0) {
		vbr_steer_tag_count(priv, flow, -1);
		vbr_steer_match_del(priv, flow);
		goto error_free;
	}
	TAILQ_INSERT_TAIL(&priv->flows, flow, next);
	priv->nb_user_flows++;
	priv->nb_comp_flows += flow->comp != 0;
	priv->nb_sw_frag_flows += flow->sw_frag != 0;
	pthread_mutex_unlock(&priv->flow_lock);
	return flow;
error_free:
	vbr_steer_count_put(priv, flow);
	vbr_steer_tag_put(priv, flow->tag);
	vbr_mtr_rule_put(flow->mtr);
	vbr_rss_put(priv, flow->rss);
	free(flow);
error:
	vbr_mtr_rule_put(mtr);
	pthread_mutex_unlock(&priv->flow_lock);
	return NULL;
}

/**
 * What rte_flow_validate() adds to the translation: the checks of
 * vbr_steer_rule_create() that need the port's rules and state, with
 * nothing made, so that validate refuses what create would: a conflict
 * with another rule's companions (vbr_steer_cf_overlap()), and
 * companions whose fate the port cannot give (vbr_steer_cf_make(), for
 * the state the rule would go on the device with: the running one, or
 * while stopped the one it will start with). What only the device can
 * refuse (a verbs flow, a queue set's QPs) is found by create alone.
 * Caller holds flow_lock. Return 0 or a negative errno, *error set.
 */
int
vbr_steer_rule_validate(struct vbr_priv *priv, const struct vbr_flow_desc *d,
			struct rte_flow_error *error)
{
	uint64_t types = 0;
	struct vbr_steer_cf *cf;
	struct rte_flow *flow;
	unsigned int n;
	size_t own_off;
	bool promisc = priv->promisc, allmulti = priv->allmulti;
	int ret;

	/* As vbr_rss_types() of the queue set create would get. */
	if (d->fate == VBR_FLOW_FATE_RSS && d->nb_queues > 1)
		types = d->rss_types;
	flow = vbr_steer_rule_alloc(priv, d, types, &own_off);
	if (flow == NULL)
		return rte_flow_error_set(error, ENOMEM,
			RTE_FLOW_ERROR_TYPE_HANDLE, NULL,
			"vbr: no memory to validate the rule");
	flow->tier = VBR_STEER_TIER_USER;
	ret = vbr_steer_same_match(priv, flow, error);
	if (ret == 0)
		ret = vbr_steer_cf_overlap(priv, flow, error);
	if (ret == 0)
		ret = vbr_steer_sw_overlap(priv, flow, error);
	if (ret == 0 && flow->sw_frag != 0) {
		struct vbr_rss *set = NULL;

		if (d->fate == VBR_FLOW_FATE_QUEUE ||
		    d->fate == VBR_FLOW_FATE_RSS)
			set = vbr_rss_get(priv, d->queues, d->nb_queues,
					  d->has_key ? d->rss_key : NULL,
					  d->fate == VBR_FLOW_FATE_RSS ?
					  d->rss_types : 0);
		ret = vbr_steer_sw_check(priv, flow, set, error);
		vbr_rss_put(priv, set);
	}
	if (ret == 0 && flow->comp != 0) {
		if (!priv->flows_on) {
			priv->promisc = priv->dev->data->promiscuous;
			priv->allmulti = priv->dev->data->all_multicast;
		}
		ret = vbr_steer_cf_make(priv, flow, &cf, &n, error);
		if (ret == 0)
			free(cf);
		priv->promisc = promisc;
		priv->allmulti = allmulti;
	}
	free(flow);
	return ret;
}

/** Destroy a user rule. Caller holds flow_lock. */
void
vbr_steer_rule_free(struct vbr_priv *priv, struct rte_flow *flow)
{
	vbr_steer_free(priv, flow);
}

/*
 * A rule handle of this port, or NULL. The handle is checked by its owner
 * and magic, not by walking the list: destroy stays O(1) with a million
 * rules, and catches a handle of another port or one that is not a rule.
 * A handle already destroyed is freed memory: using it is undefined, as
 * with every rte_flow driver (the magic is cleared at destroy, so it is
 * caught unless the memory was reused). Internal rules are not handles.
 */
struct rte_flow *
vbr_steer_rule_check(const struct vbr_priv *priv, struct rte_flow *flow)
{
	if (flow == NULL || flow->magic != VBR_FLOW_MAGIC ||
	    flow->owner != priv || flow->tier != VBR_STEER_TIER_USER)
		return NULL;
	return flow;
}

/** Verbs flows of a rule on the device. */
unsigned int
vbr_steer_nb_vf_on(const struct rte_flow *flow)
{
	unsigned int i, n = 0;

	for (i = 0; i < flow->nb_vf; i++)
		if (flow->vf[i].flow != NULL)
			n++;
	for (i = 0; i < flow->nb_cf; i++)
		if (flow->cf[i].flow != NULL)
			n++;
	return n;
}

/** Free the user rules (flush), or the internal ones. Holds flow_lock. */
void
vbr_steer_flush(struct vbr_priv *priv, bool internal)
{
	struct rte_flow *flow, *tmp;

	for (flow = TAILQ_FIRST(&priv->flows); flow != NULL; flow = tmp) {
		tmp = TAILQ_NEXT(flow, next);
		if ((flow->tier != VBR_STEER_TIER_USER) == internal)
			vbr_steer_free(priv, flow);
	}
}

/*
 * Internal rules.
 */

/* The internal rules being built, before they go into the list. */
TAILQ_HEAD(vbr_steer_list, rte_flow);

/*
 * One internal rule: destination MAC dst under dmask (NULL: any frame),
 * VLAN TCI tci under tmask (0: any), dropped (counted) or to the port's
 * queue set. Appended to list. Return 0 or a negative errno.
 */
static int
vbr_steer_internal(struct vbr_priv *priv, struct vbr_steer_list *list,
		   struct vbr_rss *port, enum vbr_steer_tier tier,
		   const struct rte_ether_addr *dst,
		   const struct rte_ether_addr *dmask, uint16_t tci,
		   uint16_t tmask)
{
	static const struct rte_flow_attr attr = { .ingress = 1 };
	struct rte_flow_item_eth spec = { .type = 0 };
	struct rte_flow_item_eth mask = { .type = 0 };
	struct rte_flow_item_vlan vspec = { .tci = rte_cpu_to_be_16(tci) };
	struct rte_flow_item_vlan vmask = { .tci = rte_cpu_to_be_16(tmask) };
	struct rte_flow_item pattern[] = {
		{ .type = RTE_FLOW_ITEM_TYPE_ETH, .spec = &spec, .mask = &mask },
		{ .type = RTE_FLOW_ITEM_TYPE_VLAN, .spec = &vspec,
		  .mask = &vmask },
		{ .type = RTE_FLOW_ITEM_TYPE_END },
	};
	const struct rte_flow_action accept[] = {
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	const struct rte_flow_action drop[] = {
		{ .type = RTE_FLOW_ACTION_TYPE_COUNT },
		{ .type = RTE_FLOW_ACTION_TYPE_DROP },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	bool is_drop = tier == VBR_STEER_TIER_VLAN_DROP;
	struct vbr_flow_caps caps = {
		.internal = 1,
		.internal_count = is_drop && priv->vlan_drop_cnt,
	};
	struct rte_flow_error error;
	struct vbr_flow_desc *d;
	struct rte_flow *flow;
	size_t own_off;
	int ret;

	if (dst != NULL) {
		spec.dst = *dst;
		mask.dst = *dmask;
	}
	if (tmask == 0)
		pattern[1].type = RTE_FLOW_ITEM_TYPE_END;
	d = malloc(sizeof(*d));
	if (d == NULL)
		return -ENOMEM;
	ret = vbr_flow_prepare(&caps, &attr, pattern,
			       is_drop ? drop + !priv->vlan_drop_cnt : accept,
			       d, &error);
	if (ret != 0) {
		VBR_LOG(ERR, "port %u: internal rule: %s",
			priv->dev->data->port_id, error.message);
		free(d);
		return ret;
	}
	flow = vbr_steer_rule_alloc(priv, d, is_drop ? 0 : vbr_rss_types(port),
				    &own_off);
	if (flow == NULL) {
		free(d);
		return -ENOMEM;
	}
	flow->tier = tier;
	flow->count = VBR_FLOW_COUNT_NONE;
	if (caps.internal_count) {
		flow->cnt = &priv->vlan_drop;
		vbr_flow_spec_set_counters((uint8_t *)flow->attr +
					   d->count_off, flow->cnt->obj);
	}
	free(d);
	vbr_rss_ref(port);
	flow->rss = port;
	TAILQ_INSERT_TAIL(list, flow, next);
	return 0;
}

/* Free the rules of a list that is not the port's. */
static void
vbr_steer_list_free(struct vbr_priv *priv, struct vbr_steer_list *list)
{
	struct rte_flow *flow;

	while ((flow = TAILQ_FIRST(list)) != NULL) {
		TAILQ_REMOVE(list, flow, next);
		vbr_steer_vf_off(priv, flow, false);
		vbr_rss_put(priv, flow->rss);
		free(flow);
	}
}

static bool
vbr_steer_vlan_filter_on(const struct vbr_priv *priv)
{
	return !!(priv->dev->data->dev_conf.rxmode.offloads &
		  RTE_ETH_RX_OFFLOAD_VLAN_FILTER);
}

/*
 * The rules of one destination address: with the VLAN filter off, the
 * address; with it on, the address for each listed VID, a drop per VID bit
 * (tagged with another VID), and the address (untagged, VID 0).
 */
static int
vbr_steer_internal_addr(struct vbr_priv *priv, struct vbr_steer_list *list,
			struct vbr_rss *port, const struct rte_ether_addr *mac)
{
	static const struct rte_ether_addr full = {
		.addr_bytes = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
	};
	unsigned int i;
	int ret;

	if (vbr_steer_vlan_filter_on(priv)) {
		for (i = 0; i < priv->nb_vlan_ids; i++) {
			/* VID 0 (priority tag) is taken by the address. */
			if (priv->vlan_ids[i] == 0)
				continue;
			ret = vbr_steer_internal(priv, list, port,
				VBR_STEER_TIER_ACCEPT, mac, &full,
				priv->vlan_ids[i], RTE_ETHER_MAX_VLAN_ID);
			if (ret != 0)
				return ret;
		}
		for (i = 0; i < VBR_STEER_VID_BITS; i++) {
			ret = vbr_steer_internal(priv, list, port,
				VBR_STEER_TIER_VLAN_DROP, mac, &full,
				1u << i, 1u << i);
			if (ret != 0)
				return ret;
		}
	}
	return vbr_steer_internal(priv, list, port, VBR_STEER_TIER_ADDR, mac,
				  &full, 0, 0);
}

/* Every internal rule the port's state asks for, on queue set port. */
static int
vbr_steer_internal_build(struct vbr_priv *priv, struct vbr_steer_list *list,
			 struct vbr_rss *port)
{
	static const struct rte_ether_addr group = {
		.addr_bytes = { 0x01, 0, 0, 0, 0, 0 },
	};
	const struct rte_ether_addr *macs = priv->dev->data->mac_addrs;
	struct rte_ether_addr bcast;
	unsigned int i, j;
	int ret = 0;

	if (priv->isolated)
		return 0;
	/* Match-all and group-bit NORMAL rules (not ALL/MC_DEFAULT). */
	if (priv->promisc)
		ret = vbr_steer_internal(priv, list, port,
					 VBR_STEER_TIER_ACCEPT, NULL, NULL,
					 0, 0);
	if (ret == 0 && priv->allmulti)
		ret = vbr_steer_internal(priv, list, port,
					 VBR_STEER_TIER_ACCEPT, &group, &group,
					 0, 0);
	for (i = 0; ret == 0 && i < VBR_MAX_MAC_ADDRS; i++) {
		if (rte_is_zero_ether_addr(&macs[i]))
			continue;
		for (j = 0; j < i; j++)
			if (rte_is_same_ether_addr(&macs[i], &macs[j]))
				break;
		if (j == i)
			ret = vbr_steer_internal_addr(priv, list, port,
						      &macs[i]);
	}
	for (i = 0; ret == 0 && i < priv->nb_mc_addrs; i++)
		ret = vbr_steer_internal_addr(priv, list, port,
					      &priv->mc_addrs[i]);
	if (ret == 0) {
		memset(&bcast, 0xff, sizeof(bcast));
		ret = vbr_steer_internal_addr(priv, list, port, &bcast);
	}
	return ret;
}

/* Whether the port spreads over its reta (mq_mode RSS) or uses queue 0. */
static bool
vbr_steer_mq(const struct vbr_priv *priv)
{
	return (priv->dev->data->dev_conf.rxmode.mq_mode &
		RTE_ETH_MQ_RX_RSS_FLAG) != 0;
}

/* The port's queue set for its reta, key and hash types (a reference). */
static struct vbr_rss *
vbr_steer_port_set(struct vbr_priv *priv)
{
	static const uint16_t queue0;
	bool mq = vbr_steer_mq(priv);

	return vbr_rss_get(priv, mq ? priv->reta : &queue0,
			   mq ? priv->reta_size : 1, priv->rss_key,
			   mq ? priv->rss_hf : 0);
}

/*
 * The rules with companions whose companions change with the port's
 * state: off the device and on again. Their own flows go off first and
 * come back last, so no excluded frame ever meets them; meanwhile their
 * frames take the port's fate, unmarked (a companion and the flow it
 * replaces may have the same match and another action, which a ConnectX
 * refuses at one priority, so they cannot be made before the old go).
 * Checked before (vbr_steer_sync_locked()): only a device error can fail
 * here, and leaves the rule off the device, with the error in the log.
 */
static void
vbr_steer_cf_move(struct vbr_priv *priv)
{
	struct rte_flow_error error;
	struct vbr_steer_cf *cf;
	struct rte_flow *flow;
	unsigned int n;
	bool same;

	TAILQ_FOREACH(flow, &priv->flows, next) {
		if (flow->comp == 0 || flow->on == NULL)
			continue;
		if (vbr_steer_cf_make(priv, flow, &cf, &n, &error) != 0)
			same = false;
		else
			same = vbr_steer_cf_same(flow, cf, n);
		free(cf);
		if (same && flow->on == vbr_steer_set(priv, flow))
			continue;
		vbr_steer_vf_off(priv, flow, false);
		if (vbr_steer_vf_on(priv, flow, vbr_steer_set(priv, flow),
				    false, &error) != 0)
			VBR_LOG(ERR, "port %u: rule %u is off the device: its "
				"companions could not follow the port's "
				"state: %s", priv->dev->data->port_id,
				flow->id, error.message);
	}
}

/*
 * Bring the verbs flows in line with the port's state, make-before-break
 * (see the head of the file). Caller holds flow_lock; the port is started.
 */
static int
vbr_steer_sync_locked(struct vbr_priv *priv)
{
	struct rte_eth_dev_data *data = priv->dev->data;
	struct vbr_steer_list list = TAILQ_HEAD_INITIALIZER(list);
	struct vbr_rss *old = priv->rss_port, *port;
	struct rte_flow_error error;
	struct rte_flow *flow;
	int ret = 0;

	port = vbr_steer_port_set(priv);
	if (port == NULL)
		return -errno;
	priv->rss_port = port;
	ret = vbr_steer_internal_build(priv, &list, port);
	TAILQ_FOREACH(flow, &list, next) {
		if (ret != 0)
			break;
		ret = vbr_steer_vf_on(priv, flow, port, false, &error);
		if (ret != 0)
			VBR_LOG(ERR, "port %u: internal rule: %s",
				data->port_id, error.message);
	}
	/* Rules with companions: exact in the new state, or it is refused. */
	TAILQ_FOREACH(flow, &priv->flows, next) {
		struct vbr_steer_cf *cf;
		unsigned int n;

		if (ret != 0)
			break;
		if (flow->comp == 0 || flow->on == NULL)
			continue;
		ret = vbr_steer_cf_make(priv, flow, &cf, &n, &error);
		free(cf);
		if (ret != 0)
			VBR_LOG(ERR, "port %u: the change is refused: rule %u "
				"would not be exact: %s", data->port_id,
				flow->id, error.message);
	}
	/* Conditions kept in software: exact in the new state, or refused. */
	TAILQ_FOREACH(flow, &priv->flows, next) {
		if (ret != 0)
			break;
		if (flow->tier != VBR_STEER_TIER_USER || flow->sw_frag == 0)
			continue;
		ret = vbr_steer_sw_exact(priv, flow, flow->rss, port, &error);
		if (ret != 0)
			VBR_LOG(ERR, "port %u: the change is refused: rule %u "
				"would not be exact: %s", data->port_id,
				flow->id, error.message);
	}
	/* User DROP rules live on the port's set: copies on the new one. */
	TAILQ_FOREACH(flow, &priv->flows, next) {
		if (ret != 0 || port == old)
			break;
		if (flow->rss != NULL || flow->on == NULL || flow->comp != 0)
			continue;
		ret = vbr_steer_vf_on(priv, flow, port, true, &error);
		if (ret != 0)
			VBR_LOG(ERR, "port %u: rule %u: cannot move it to the "
				"port's new queue set: %s", data->port_id,
				flow->id, error.message);
	}
	if (ret != 0) {
		TAILQ_FOREACH(flow, &priv->flows, next)
			vbr_steer_vf_off(priv, flow, true);
		vbr_steer_list_free(priv, &list);
		priv->rss_port = old;
		vbr_rss_put(priv, port);
		return ret;
	}
	/* Commit: the new flows are there, the old ones go. */
	vbr_steer_flush(priv, true);
	if (port != old)
		TAILQ_FOREACH(flow, &priv->flows, next)
			if (flow->rss == NULL && flow->on != NULL &&
			    flow->comp == 0)
				vbr_steer_vf_commit(priv, flow, port);
	TAILQ_CONCAT(&priv->flows, &list, next);
	vbr_steer_cf_move(priv);
	vbr_rss_put(priv, old);
	return 0;
}

/** Bring the verbs flows in line with the port's state; 0 if stopped. */
int
vbr_steer_sync(struct vbr_priv *priv)
{
	int ret = 0;

	pthread_mutex_lock(&priv->flow_lock);
	if (priv->flows_on)
		ret = vbr_steer_sync_locked(priv);
	pthread_mutex_unlock(&priv->flow_lock);
	return ret;
}

/* The counters objects of the VLAN filter's and the companions' drops. */
static void
vbr_steer_vlan_count_init(struct vbr_priv *priv)
{
	struct rte_flow_error error;

	if (priv->glue->create_counters == NULL)
		return;
	if (!priv->vlan_drop_cnt) {
		if (vbr_count_init(priv, &priv->vlan_drop, &error) == 0)
			priv->vlan_drop_cnt = 1;
		else
			VBR_LOG(INFO, "port %u: VLAN filter drops not "
				"counted: %s", priv->dev->data->port_id,
				error.message);
	}
	if (priv->comp_drop_cnt)
		return;
	if (vbr_count_init(priv, &priv->comp_drop, &error) == 0)
		priv->comp_drop_cnt = 1;
	else
		VBR_LOG(INFO, "port %u: companions' unmatched drops counted "
			"as rule drops: %s", priv->dev->data->port_id,
			error.message);
}

/**
 * At dev_start: the port's queue set, the internal rules, every user rule
 * on the device. On failure nothing is left on the device.
 */
int
vbr_steer_start(struct vbr_priv *priv)
{
	struct rte_eth_dev_data *data = priv->dev->data;
	struct rte_flow_error error;
	struct rte_flow *flow;
	int ret;

	if (data->nb_rx_queues == 0) {
		VBR_LOG(ERR, "port %u: no Rx queue", data->port_id);
		return -EINVAL;
	}
	pthread_mutex_lock(&priv->flow_lock);
	ret = vbr_steer_probe(priv);
	if (ret != 0)
		goto out;
	vbr_steer_vlan_count_init(priv);
	priv->promisc = data->promiscuous;
	priv->allmulti = data->all_multicast;
	priv->rss_port = NULL;
	ret = vbr_steer_sync_locked(priv);
	if (ret != 0)
		goto out;
	TAILQ_FOREACH(flow, &priv->flows, next) {
		if (flow->tier != VBR_STEER_TIER_USER)
			continue;
		ret = vbr_steer_vf_on(priv, flow, vbr_steer_set(priv, flow),
				      false, &error);
		if (ret != 0) {
			VBR_LOG(ERR, "port %u: cannot start with rule %u: %s",
				data->port_id, flow->id,
				error.message != NULL ? error.message : "?");
			break;
		}
	}
	if (ret != 0) {
		TAILQ_FOREACH(flow, &priv->flows, next)
			vbr_steer_vf_off(priv, flow, false);
		vbr_steer_flush(priv, true);
		vbr_rss_put(priv, priv->rss_port);
		priv->rss_port = NULL;
		vbr_rss_stop(priv);
	} else {
		/* From now on, rules created go on the device at once. */
		priv->flows_on = 1;
	}
out:
	pthread_mutex_unlock(&priv->flow_lock);
	return ret;
}

/** At dev_stop: every rule off the device; the user rules stay. */
void
vbr_steer_stop(struct vbr_priv *priv)
{
	struct rte_flow *flow;

	pthread_mutex_lock(&priv->flow_lock);
	priv->flows_on = 0;
	TAILQ_FOREACH(flow, &priv->flows, next)
		vbr_steer_vf_off(priv, flow, false);
	vbr_steer_flush(priv, true);
	vbr_rss_put(priv, priv->rss_port);
	priv->rss_port = NULL;
	vbr_rss_stop(priv);
	pthread_mutex_unlock(&priv->flow_lock);
}

/**
 * Isolated mode: only the user rules receive traffic. The internal rules
 * are made at start, so the mode can change only while the port is
 * stopped.
 */
int
vbr_steer_isolate(struct vbr_priv *priv, int enable,
		  struct rte_flow_error *error)
{
	int ret = 0;

	pthread_mutex_lock(&priv->flow_lock);
	if (priv->flows_on && !!enable != priv->isolated)
		ret = rte_flow_error_set(error, EBUSY,
			RTE_FLOW_ERROR_TYPE_UNSPECIFIED, NULL,
			"vbr: stop the port to change isolated mode");
	else
		priv->isolated = !!enable;
	pthread_mutex_unlock(&priv->flow_lock);
	return ret;
}

/** Frames the VLAN filter dropped, since the port was made. */
uint64_t
vbr_steer_vlan_dropped(struct vbr_priv *priv)
{
	struct rte_flow_query_count q = { .reset = 0 };
	struct rte_flow_error error;

	if (!priv->vlan_drop_cnt)
		return 0;
	pthread_mutex_lock(&priv->flow_lock);
	if (vbr_count_query(priv, &priv->vlan_drop, &q, &error) != 0)
		q.hits = 0;
	pthread_mutex_unlock(&priv->flow_lock);
	return q.hits;
}

/** Frames companions dropped as unmatched (vbr_stats.c: rx_no_match). */
uint64_t
vbr_steer_comp_unmatched(struct vbr_priv *priv)
{
	struct rte_flow_query_count q = { .reset = 0 };
	struct rte_flow_error error;

	if (!priv->comp_drop_cnt || !priv->flow_lock_init)
		return 0;
	pthread_mutex_lock(&priv->flow_lock);
	if (vbr_count_query(priv, &priv->comp_drop, &q, &error) != 0)
		q.hits = 0;
	pthread_mutex_unlock(&priv->flow_lock);
	return q.hits;
}

/**
 * What the port holds, for xstats: out[0] user rules (rte_flow), out[1]
 * the verbs flows of user rules on the device (companions included),
 * out[2] those of the internal rules. A walk of the list, under the lock.
 */
void
vbr_steer_flow_counts(struct vbr_priv *priv, uint64_t out[3])
{
	struct rte_flow *flow;

	out[0] = out[1] = out[2] = 0;
	if (!priv->flow_lock_init)
		return;
	pthread_mutex_lock(&priv->flow_lock);
	out[0] = priv->nb_user_flows;
	TAILQ_FOREACH(flow, &priv->flows, next)
		out[flow->tier == VBR_STEER_TIER_USER ? 1 : 2] +=
			vbr_steer_nb_vf_on(flow);
	pthread_mutex_unlock(&priv->flow_lock);
}

/** At close: free every rule and what they used. */
void
vbr_steer_release(struct vbr_priv *priv)
{
	if (!priv->flow_lock_init)
		return;
	pthread_mutex_lock(&priv->flow_lock);
	vbr_steer_flush(priv, false);
	vbr_steer_flush(priv, true);
	/* Every user rule left it: the tree is empty. */
	priv->rule_tree = NULL;
	pthread_mutex_unlock(&priv->flow_lock);
	vbr_count_release(priv);
	pthread_mutex_lock(&priv->flow_lock);
	if (priv->vlan_drop_cnt)
		vbr_count_fini(priv, &priv->vlan_drop);
	priv->vlan_drop_cnt = 0;
	if (priv->comp_drop_cnt)
		vbr_count_fini(priv, &priv->comp_drop);
	priv->comp_drop_cnt = 0;
	vbr_rss_release(priv);
	vbr_mtr_release(priv);
	vbr_steer_tags_release(priv);
	pthread_mutex_unlock(&priv->flow_lock);
	pthread_mutex_destroy(&priv->flow_lock);
	priv->flow_lock_init = 0;
}

/*
 * Port RSS: the redirection table, key and hash types of the port. The
 * port's queue set is made of them while the port is started; a change
 * on a started port is a sync (make-before-break).
 */

/* RSS types the port cannot hash. */
#define VBR_STEER_RSS_CHECK(hf) ((hf) & ~(uint64_t)VBR_RSS_OFFLOADS)

/**
 * At dev_configure: the device probe (once), the key given (or the
 * default one), the hash types of mq_mode RSS (none otherwise) and a
 * round-robin reta over the Rx queues (all queue 0 without RSS). What
 * reta_update and rss_hash_update set lasts until the next configure.
 */
int
vbr_steer_rss_configure(struct vbr_priv *priv)
{
	struct rte_eth_dev_data *data = priv->dev->data;
	const struct rte_eth_rss_conf *conf =
		&data->dev_conf.rx_adv_conf.rss_conf;
	enum rte_eth_rx_mq_mode mode = data->dev_conf.rxmode.mq_mode;
	bool mq = vbr_steer_mq(priv);
	uint16_t i;
	int ret;

	if (mode != RTE_ETH_MQ_RX_NONE && mode != RTE_ETH_MQ_RX_RSS) {
		VBR_LOG(ERR, "port %u: Rx mq_mode %d: only none and RSS",
			data->port_id, (int)mode);
		return -ENOTSUP;
	}
	if (conf->rss_key != NULL && conf->rss_key_len != VBR_RSS_KEY_LEN) {
		VBR_LOG(ERR, "port %u: RSS key of %u bytes: must be %u",
			data->port_id, conf->rss_key_len, VBR_RSS_KEY_LEN);
		return -EINVAL;
	}
	if (mq && VBR_STEER_RSS_CHECK(conf->rss_hf) != 0) {
		VBR_LOG(ERR, "port %u: RSS types 0x%" PRIx64 " cannot be "
			"hashed (supported: 0x%" PRIx64 ")", data->port_id,
			VBR_STEER_RSS_CHECK(conf->rss_hf),
			(uint64_t)VBR_RSS_OFFLOADS);
		return -EINVAL;
	}
	pthread_mutex_lock(&priv->flow_lock);
	ret = vbr_steer_probe(priv);
	memcpy(priv->rss_key, conf->rss_key != NULL ? conf->rss_key :
	       vbr_rss_default_key_get(), VBR_RSS_KEY_LEN);
	priv->rss_hf = mq ? conf->rss_hf : 0;
	priv->reta_size = vbr_rss_reta_size(priv);
	for (i = 0; i < priv->reta_size; i++)
		priv->reta[i] = mq && data->nb_rx_queues > 0 ?
				i % data->nb_rx_queues : 0;
	pthread_mutex_unlock(&priv->flow_lock);
	return ret;
}

int
vbr_steer_reta_update(struct rte_eth_dev *dev,
		      struct rte_eth_rss_reta_entry64 *reta_conf,
		      uint16_t reta_size)
{
	struct vbr_priv *priv = dev->data->dev_private;
	uint16_t old[VBR_RSS_RETA_MAX];
	unsigned int i, idx, shift;
	int ret = 0;

	if (reta_size != priv->reta_size) {
		VBR_LOG(ERR, "port %u: reta of %u entries: the port's has %u",
			dev->data->port_id, reta_size, priv->reta_size);
		return -EINVAL;
	}
	if (!vbr_steer_mq(priv)) {
		VBR_LOG(ERR, "port %u: reta update needs mq_mode RSS",
			dev->data->port_id);
		return -ENOTSUP;
	}
	for (i = 0; i < reta_size; i++) {
		idx = i / RTE_ETH_RETA_GROUP_SIZE;
		shift = i % RTE_ETH_RETA_GROUP_SIZE;
		if ((reta_conf[idx].mask & RTE_BIT64(shift)) &&
		    reta_conf[idx].reta[shift] >= dev->data->nb_rx_queues) {
			VBR_LOG(ERR, "port %u: reta entry %u: queue %u is not "
				"below the %u Rx queues", dev->data->port_id,
				i, reta_conf[idx].reta[shift],
				dev->data->nb_rx_queues);
			return -EINVAL;
		}
	}
	pthread_mutex_lock(&priv->flow_lock);
	memcpy(old, priv->reta, reta_size * sizeof(old[0]));
	for (i = 0; i < reta_size; i++) {
		idx = i / RTE_ETH_RETA_GROUP_SIZE;
		shift = i % RTE_ETH_RETA_GROUP_SIZE;
		if (reta_conf[idx].mask & RTE_BIT64(shift))
			priv->reta[i] = reta_conf[idx].reta[shift];
	}
	if (priv->flows_on)
		ret = vbr_steer_sync_locked(priv);
	if (ret != 0)
		memcpy(priv->reta, old, reta_size * sizeof(old[0]));
	pthread_mutex_unlock(&priv->flow_lock);
	return ret;
}

int
vbr_steer_reta_query(struct rte_eth_dev *dev,
		     struct rte_eth_rss_reta_entry64 *reta_conf,
		     uint16_t reta_size)
{
	struct vbr_priv *priv = dev->data->dev_private;
	unsigned int i, idx, shift;

	if (reta_size != priv->reta_size) {
		VBR_LOG(ERR, "port %u: reta of %u entries: the port's has %u",
			dev->data->port_id, reta_size, priv->reta_size);
		return -EINVAL;
	}
	pthread_mutex_lock(&priv->flow_lock);
	for (i = 0; i < reta_size; i++) {
		idx = i / RTE_ETH_RETA_GROUP_SIZE;
		shift = i % RTE_ETH_RETA_GROUP_SIZE;
		if (reta_conf[idx].mask & RTE_BIT64(shift))
			reta_conf[idx].reta[shift] = priv->reta[i];
	}
	pthread_mutex_unlock(&priv->flow_lock);
	return 0;
}

int
vbr_steer_rss_hash_update(struct rte_eth_dev *dev,
			  struct rte_eth_rss_conf *rss_conf)
{
	struct vbr_priv *priv = dev->data->dev_private;
	uint8_t key[VBR_RSS_KEY_LEN];
	uint64_t hf = rss_conf->rss_hf, old_hf;
	int ret = 0;

	if (rss_conf->rss_key != NULL &&
	    rss_conf->rss_key_len != VBR_RSS_KEY_LEN) {
		VBR_LOG(ERR, "port %u: RSS key of %u bytes: must be %u",
			dev->data->port_id, rss_conf->rss_key_len,
			VBR_RSS_KEY_LEN);
		return -EINVAL;
	}
	if (VBR_STEER_RSS_CHECK(hf) != 0) {
		VBR_LOG(ERR, "port %u: RSS types 0x%" PRIx64 " cannot be "
			"hashed (supported: 0x%" PRIx64 ")", dev->data->port_id,
			VBR_STEER_RSS_CHECK(hf),
			(uint64_t)VBR_RSS_OFFLOADS);
		return -EINVAL;
	}
	if (!vbr_steer_mq(priv)) {
		VBR_LOG(ERR, "port %u: RSS hash update needs mq_mode RSS",
			dev->data->port_id);
		return -ENOTSUP;
	}
	pthread_mutex_lock(&priv->flow_lock);
	memcpy(key, priv->rss_key, VBR_RSS_KEY_LEN);
	old_hf = priv->rss_hf;
	if (rss_conf->rss_key != NULL)
		memcpy(priv->rss_key, rss_conf->rss_key, VBR_RSS_KEY_LEN);
	priv->rss_hf = hf;
	if (priv->flows_on)
		ret = vbr_steer_sync_locked(priv);
	if (ret != 0) {
		memcpy(priv->rss_key, key, VBR_RSS_KEY_LEN);
		priv->rss_hf = old_hf;
	}
	pthread_mutex_unlock(&priv->flow_lock);
	return ret;
}

int
vbr_steer_rss_hash_conf_get(struct rte_eth_dev *dev,
			    struct rte_eth_rss_conf *rss_conf)
{
	struct vbr_priv *priv = dev->data->dev_private;

	if (rss_conf->rss_key != NULL && rss_conf->rss_key_len != 0 &&
	    rss_conf->rss_key_len < VBR_RSS_KEY_LEN) {
		VBR_LOG(ERR, "port %u: %u bytes for the %u-byte RSS key",
			dev->data->port_id, rss_conf->rss_key_len,
			VBR_RSS_KEY_LEN);
		return -EINVAL;
	}
	pthread_mutex_lock(&priv->flow_lock);
	if (rss_conf->rss_key != NULL)
		memcpy(rss_conf->rss_key, priv->rss_key, VBR_RSS_KEY_LEN);
	rss_conf->rss_key_len = VBR_RSS_KEY_LEN;
	rss_conf->rss_hf = priv->rss_hf;
	pthread_mutex_unlock(&priv->flow_lock);
	return 0;
}
