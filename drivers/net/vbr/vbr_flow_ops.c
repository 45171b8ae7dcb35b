/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The rte_flow operations: validate, create, destroy, flush, query,
 * isolate, dump, aged flows, indirect actions.
 *
 * A rule is translated here (vbr_flow.c) against what the device accepts,
 * as found at probe (vbr_steer_flow_caps()): validate is the translation
 * and the checks create makes against the port's rules and state
 * (vbr_steer_rule_validate()), and creates nothing. The port's rule list, its verbs flows and when
 * they are on the device belong to vbr_steer.c; a rule with COUNT or AGE
 * binds a counters object of vbr_count.c (its own, or an indirect
 * action's). All ops on the list hold flow_lock.
 */

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <rte_flow_driver.h>

#include "vbr.h"
#include "vbr_steer.h"
#include "vbr_utils.h"

static int
vbr_flow_translate(struct vbr_priv *priv, const struct rte_flow_attr *attr,
		   const struct rte_flow_item pattern[],
		   const struct rte_flow_action actions[],
		   struct vbr_flow_desc *d, struct rte_flow_error *error)
{
	struct vbr_flow_caps caps;

	/* The queue count changes only in dev_configure, which ethdev does
	 * not run next to flow ops.
	 */
	vbr_steer_flow_caps(priv, &caps);
	return vbr_flow_prepare(&caps, attr, pattern, actions, d, error);
}

static int
vbr_flow_validate(struct rte_eth_dev *dev, const struct rte_flow_attr *attr,
		  const struct rte_flow_item pattern[],
		  const struct rte_flow_action actions[],
		  struct rte_flow_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct vbr_flow_desc *d;
	struct vbr_count *cnt;
	int ret;

	d = malloc(sizeof(*d));
	if (d == NULL)
		return rte_flow_error_set(error, ENOMEM,
			RTE_FLOW_ERROR_TYPE_HANDLE, NULL,
			"vbr: no memory to validate the rule");
	ret = vbr_flow_translate(priv, attr, pattern, actions, d, error);
	if (ret == 0 && d->count == VBR_FLOW_COUNT_INDIRECT) {
		/* The handle must be one of this port's. */
		pthread_mutex_lock(&priv->flow_lock);
		cnt = vbr_count_handle_get(priv, d->indirect, error);
		if (cnt == NULL)
			ret = -rte_errno;
		else
			vbr_count_handle_put(priv, cnt);
		pthread_mutex_unlock(&priv->flow_lock);
	}
	if (ret == 0 && (d->rx_act & VBR_RX_ACT_METER) != 0) {
		/* The meter and its policy, as create checks them. */
		pthread_mutex_lock(&priv->flow_lock);
		if (vbr_mtr_rule_check(priv, d, error) == NULL)
			ret = -rte_errno;
		pthread_mutex_unlock(&priv->flow_lock);
	}
	if (ret == 0) {
		/* Against the port's rules and state, as create checks it. */
		pthread_mutex_lock(&priv->flow_lock);
		ret = vbr_steer_rule_validate(priv, d, error);
		pthread_mutex_unlock(&priv->flow_lock);
	}
	free(d);
	return ret;
}

/*
 * The debug line of a rule made or gone: its number, its verbs flows and
 * how many of them are companions, on the device or not. Caller holds
 * flow_lock.
 */
static void
vbr_flow_log(const struct vbr_priv *priv, const struct rte_flow *flow,
	     const char *what)
{
	VBR_LOG(DEBUG, "port %u: rule %u %s: %u verbs flows (%u companions), "
		"%u on the device", priv->dev->data->port_id, flow->id, what,
		flow->nb_vf + flow->nb_cf, flow->nb_cf,
		vbr_steer_nb_vf_on(flow));
}

static struct rte_flow *
vbr_flow_create(struct rte_eth_dev *dev, const struct rte_flow_attr *attr,
		const struct rte_flow_item pattern[],
		const struct rte_flow_action actions[],
		struct rte_flow_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct vbr_flow_desc d;

	struct rte_flow *flow;

	if (vbr_flow_translate(priv, attr, pattern, actions, &d, error) != 0)
		return NULL;
	flow = vbr_steer_rule_create(priv, &d, error);
	if (flow != NULL && rte_log_can_log(vbr_logtype, RTE_LOG_DEBUG)) {
		pthread_mutex_lock(&priv->flow_lock);
		if (vbr_steer_rule_check(priv, flow) != NULL)
			vbr_flow_log(priv, flow, "created");
		pthread_mutex_unlock(&priv->flow_lock);
	}
	return flow;
}

static int
vbr_flow_destroy(struct rte_eth_dev *dev, struct rte_flow *flow,
		 struct rte_flow_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct rte_flow *f;

	pthread_mutex_lock(&priv->flow_lock);
	f = vbr_steer_rule_check(priv, flow);
	if (f == NULL) {
		pthread_mutex_unlock(&priv->flow_lock);
		return rte_flow_error_set(error, EINVAL,
			RTE_FLOW_ERROR_TYPE_HANDLE, flow,
			"vbr: no such rule on this port");
	}
	vbr_flow_log(priv, f, "destroyed");
	vbr_steer_rule_free(priv, f);
	pthread_mutex_unlock(&priv->flow_lock);
	return 0;
}

/* COUNT and AGE queries. */
static int
vbr_flow_query(struct rte_eth_dev *dev, struct rte_flow *flow,
	       const struct rte_flow_action *action, void *data,
	       struct rte_flow_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct rte_flow *f;
	int ret = 0;

	if (action == NULL || data == NULL)
		return rte_flow_error_set(error, EINVAL,
			RTE_FLOW_ERROR_TYPE_ACTION, action,
			"vbr: query: no action or no data");
	if (action->type != RTE_FLOW_ACTION_TYPE_COUNT &&
	    action->type != RTE_FLOW_ACTION_TYPE_AGE)
		return vbr_flow_error(error, ENOTSUP,
			RTE_FLOW_ERROR_TYPE_ACTION, action,
			"vbr: query: only count and age can be queried "
			"(action type %d)", (int)action->type);
	pthread_mutex_lock(&priv->flow_lock);
	f = vbr_steer_rule_check(priv, flow);
	if (f == NULL) {
		ret = rte_flow_error_set(error, EINVAL,
			RTE_FLOW_ERROR_TYPE_HANDLE, flow,
			"vbr: no such rule on this port");
	} else if (action->type == RTE_FLOW_ACTION_TYPE_COUNT) {
		if (f->count == VBR_FLOW_COUNT_RULE ||
		    f->count == VBR_FLOW_COUNT_INDIRECT)
			ret = vbr_count_query(priv, f->cnt, data, error);
		else
			ret = vbr_flow_error(error, EINVAL,
				RTE_FLOW_ERROR_TYPE_ACTION, action,
				"vbr: count query: rule %u has no count "
				"action", f->id);
	} else {
		if (f->age != NULL)
			vbr_age_query(priv, f->age, data);
		else
			ret = vbr_flow_error(error, EINVAL,
				RTE_FLOW_ERROR_TYPE_ACTION, action,
				"vbr: age query: rule %u has no age action",
				f->id);
	}
	pthread_mutex_unlock(&priv->flow_lock);
	return ret;
}

static int
vbr_flow_flush(struct rte_eth_dev *dev, struct rte_flow_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;

	RTE_SET_USED(error);
	pthread_mutex_lock(&priv->flow_lock);
	vbr_steer_flush(priv, false);
	pthread_mutex_unlock(&priv->flow_lock);
	return 0;
}

static int
vbr_flow_isolate(struct rte_eth_dev *dev, int enable,
		 struct rte_flow_error *error)
{
	return vbr_steer_isolate(dev->data->dev_private, enable, error);
}

/* The port's rules in creation order, as vbr_priv.flows holds them. */
TAILQ_HEAD(vbr_flow_rules, rte_flow);

/*
 * A new user rule's number, the one testpmd gives it: one more than the
 * newest live user rule's, 0 when there is none (testpmd 22.11's
 * port_flow_create numbers from the head of its own list, newest first).
 * With the rules made from testpmd alone, its "flow list" and vbr's "flow
 * dump" show the same numbers. Internal rules sit after the user ones
 * (vbr_steer_sync()), so the walk from the tail is short. Caller holds
 * flow_lock.
 */
uint32_t
vbr_flow_rule_number(const struct vbr_priv *priv)
{
	const struct rte_flow *f;

	for (f = TAILQ_LAST(&priv->flows, vbr_flow_rules); f != NULL;
	     f = TAILQ_PREV(f, vbr_flow_rules, next))
		if (f->tier == VBR_STEER_TIER_USER)
			return f->id + 1;
	return 0;
}

static void
vbr_flow_dump_one(struct vbr_priv *priv, const struct rte_flow *flow,
		  FILE *file)
{
	unsigned int i;

	fprintf(file, "port %u vbr rule %u: handle %p, %s",
		priv->dev->data->port_id, flow->id, (const void *)flow,
		vbr_steer_fate_name(flow->fate));
	if (flow->rss != NULL)
		vbr_rss_dump(file, flow->rss);
	if (flow->rx_act & VBR_RX_ACT_FLAG)
		fprintf(file, ", flag");
	if (flow->rx_act & VBR_RX_ACT_MARK)
		fprintf(file, ", mark %u",
			(uint32_t)flow->rx_act & VBR_RX_ACT_ID_MASK);
	if (flow->sw_frag & VBR_RX_FRAG_V6)
		fprintf(file, ", no IPv6 fragment header (in software)");
	else if (flow->sw_frag != 0)
		fprintf(file, ", IPv4 DF/MF/offset %#x under %#x (in software)",
			(flow->sw_frag >> VBR_RX_FRAG_VAL_SHIFT) & 0x7,
			flow->sw_frag & 0x7);
	if (flow->rx_act & VBR_RX_ACT_METER)
		fprintf(file, ", meter slot %u",
			(uint32_t)(flow->rx_act >> VBR_RX_ACT_MTR_SHIFT));
	if (flow->tag != 0)
		fprintf(file, ", tag %u", flow->tag);
	if (flow->count == VBR_FLOW_COUNT_RULE)
		fprintf(file, ", count");
	else if (flow->count == VBR_FLOW_COUNT_INDIRECT)
		fprintf(file, ", indirect count");
	if (flow->age != NULL)
		fprintf(file, ", age");
	fprintf(file, ", %u verbs flow%s (", flow->nb_cf + flow->nb_vf,
		flow->nb_cf + flow->nb_vf > 1 ? "s" : "");
	for (i = 0; i < flow->nb_cf; i++)
		fprintf(file, "%scompanion %s %s at %u", i > 0 ? ", " : "",
			vbr_steer_cfate_name(flow->cf[i].fate),
			vbr_flow_pt_name(flow->cf[i].pt),
			flow->level * VBR_FLOW_PRIO_SUB);
	for (i = 0; i < flow->nb_vf; i++)
		fprintf(file, "%s%s at %u", i + flow->nb_cf > 0 ? ", " : "",
			vbr_flow_pt_name(flow->vf[i].pt),
			vbr_steer_prio(priv, flow, flow->vf[i].pt));
	fprintf(file, "), %s\n", vbr_steer_nb_vf_on(flow) > 0 ?
		"on the device" : "not on the device (port stopped)");
	vbr_flow_dump_attr(file, flow->attr);
}

static int
vbr_flow_dev_dump(struct rte_eth_dev *dev, struct rte_flow *flow, FILE *file,
		  struct rte_flow_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct rte_flow *f;
	unsigned int sets, qps;
	int ret = 0;

	if (file == NULL)
		file = stdout;
	pthread_mutex_lock(&priv->flow_lock);
	if (flow != NULL) {
		f = vbr_steer_rule_check(priv, flow);
		if (f == NULL)
			ret = rte_flow_error_set(error, EINVAL,
				RTE_FLOW_ERROR_TYPE_HANDLE, flow,
				"vbr: no such rule on this port");
		else
			vbr_flow_dump_one(priv, f, file);
	} else {
		sets = vbr_rss_nb_sets(priv, &qps);
		/*
		 * The rules in creation order, numbered as testpmd numbers
		 * them (vbr_flow_rule_number()).
		 */
		fprintf(file, "port %u: %s, %u vbr rules, %u queue sets on "
			"the device (%u hash QPs), %u verbs flow priorities, "
			"levels 0 to %u; rules oldest first, numbered as "
			"testpmd numbers them\n", dev->data->port_id,
			priv->isolated ? "isolated" : "not isolated",
			priv->nb_user_flows, sets, qps,
			priv->steer_caps.nb_prios,
			priv->steer_caps.levels > 0 ?
			priv->steer_caps.levels - 1 : 0);
		TAILQ_FOREACH(f, &priv->flows, next)
			if (f->tier == VBR_STEER_TIER_USER)
				vbr_flow_dump_one(priv, f, file);
	}
	pthread_mutex_unlock(&priv->flow_lock);
	fflush(file);
	return ret;
}

const struct rte_flow_ops vbr_flow_ops = {
	.validate = vbr_flow_validate,
	.create = vbr_flow_create,
	.destroy = vbr_flow_destroy,
	.flush = vbr_flow_flush,
	.query = vbr_flow_query,
	.isolate = vbr_flow_isolate,
	.dev_dump = vbr_flow_dev_dump,
	.get_aged_flows = vbr_age_get_aged,
	.action_handle_create = vbr_count_handle_create,
	.action_handle_destroy = vbr_count_handle_destroy,
	.action_handle_update = vbr_count_handle_update,
	.action_handle_query = vbr_count_handle_query,
};

int
vbr_flow_ops_get(struct rte_eth_dev *dev, const struct rte_flow_ops **ops)
{
	RTE_SET_USED(dev);
	*ops = &vbr_flow_ops;
	return 0;
}

/** At close (vbr.c): the steering layer frees every rule. */
void
vbr_flow_release(struct vbr_priv *priv)
{
	vbr_steer_release(priv);
}
