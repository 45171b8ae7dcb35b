/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The rte_flow operations: validate, create, destroy, flush, query,
 * isolate, dump, aged flows, indirect actions.
 *
 * A rule is translated here (vbr_flow.c) against what the device accepts,
 * as found at probe (vbr_steer_flow_caps()): validate is the translation
 * alone and creates nothing. The port's rule list, its verbs flows and when
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
	free(d);
	return ret;
}

static struct rte_flow *
vbr_flow_create(struct rte_eth_dev *dev, const struct rte_flow_attr *attr,
		const struct rte_flow_item pattern[],
		const struct rte_flow_action actions[],
		struct rte_flow_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct vbr_flow_desc d;

	if (vbr_flow_translate(priv, attr, pattern, actions, &d, error) != 0)
		return NULL;
	return vbr_steer_rule_create(priv, &d, error);
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

static void
vbr_flow_dump_one(struct vbr_priv *priv, const struct rte_flow *flow,
		  FILE *file)
{
	unsigned int i;

	fprintf(file, "port %u vbr rule %u: %s", priv->dev->data->port_id,
		flow->id, vbr_steer_fate_name(flow->fate));
	if (flow->rss != NULL)
		vbr_rss_dump(file, flow->rss);
	if (flow->rx_act & VBR_RX_ACT_FLAG)
		fprintf(file, ", flag");
	if (flow->rx_act & VBR_RX_ACT_MARK)
		fprintf(file, ", mark %u", (uint32_t)flow->rx_act);
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
	fprintf(file, ", %u verbs flow%s (", flow->nb_vf,
		flow->nb_vf > 1 ? "s" : "");
	for (i = 0; i < flow->nb_vf; i++)
		fprintf(file, "%s%s%s at %u", i > 0 ? ", " : "",
			flow->vf[i].comp != 0 ? "companion " : "",
			vbr_flow_pt_name(flow->vf[i].pt),
			flow->vf[i].comp != 0 ?
			flow->level * VBR_FLOW_PRIO_SUB :
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
		/* the rules there are, not flow_seq (the next rule id) */
		fprintf(file, "port %u: %s, %u vbr rules, %u queue sets on "
			"the device (%u hash QPs), %u verbs flow priorities, "
			"levels 0 to %u\n", dev->data->port_id,
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
