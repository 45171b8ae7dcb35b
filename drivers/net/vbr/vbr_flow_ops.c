/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * rte_flow operations and the port's rule list.
 *
 * A rule is translated once (vbr_flow.c) and kept with its verbs attr. It is
 * on the device only while the port is started: dev_start creates every
 * rule, dev_stop removes them, so rules survive stop/start and queue
 * reconfiguration (RTE_ETH_DEV_CAPA_FLOW_RULE_KEEP). A rule whose queue is
 * gone at start fails the start with a message naming it. QUEUE and RSS
 * rules point at the shared hash QPs of vbr_rss.c; DROP rules and the
 * internal default rules (MAC, broadcast, multicast, promiscuous,
 * allmulticast) at the port's hash QP. When RSS updates replace the port's
 * hash QP, vbr_flow_rebind() moves the user rules on it make-before-break.
 * All flow ops hold flow_lock.
 *
 * A rule with COUNT or AGE binds a counters object (vbr_count.c) through
 * the IBV_FLOW_SPEC_ACTION_COUNT spec of its attr: its own, made with the
 * rule, or an indirect action's. The object lives as long as the rule, so
 * the rule binds it again at each dev_start and its values carry on.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <rte_flow_driver.h>

#include "vbr.h"
#include "vbr_utils.h"

/** Tells a live rule of ours from anything else handed to destroy. */
#define VBR_FLOW_MAGIC 0x76627266u /* "vbrf" */

/**
 * A user rule: list linkage, its fate and the verbs attr and specs at their
 * real size (allocated behind the struct). QUEUE and RSS rules hold a
 * reference to the shared queue set of vbr_rss.c instead of a queue list.
 */
struct rte_flow {
	TAILQ_ENTRY(rte_flow) next;	/**< in vbr_priv.flows */
	const struct vbr_priv *owner;	/**< port, NULL once destroyed */
	uint32_t magic;			/**< VBR_FLOW_MAGIC while live */
	uint32_t id;			/**< vbr rule number, for messages */
	struct vbr_rss *rss;		/**< queue set of a QUEUE/RSS fate */
	struct ibv_flow *ibv_flow;	/**< on the device, when started */
	struct ibv_qp *qp;		/**< QP of ibv_flow */
	struct ibv_flow *rebind;	/**< copy on a new QP, in a rebind */
	uint32_t tag;			/**< verbs tag of MARK/FLAG, 0: none */
	uint8_t fate;			/**< enum vbr_flow_fate */
	uint8_t count;			/**< enum vbr_flow_count */
	struct vbr_count *cnt;		/**< counters bound, NULL: none */
	struct vbr_age *age;		/**< AGE state, NULL: none */
	struct ibv_flow_attr attr;	/**< followed by the specs */
};

static const char *
vbr_flow_fate_name(enum vbr_flow_fate fate)
{
	switch (fate) {
	case VBR_FLOW_FATE_QUEUE: return "queue";
	case VBR_FLOW_FATE_RSS: return "rss";
	case VBR_FLOW_FATE_DROP: return "drop";
	default: return "port";
	}
}

/* Translate a user rule for this port into d. What the translation checks
 * against is read without flow_lock: the queue count changes only in
 * dev_configure, which ethdev does not run next to flow ops.
 */
static int
vbr_flow_translate(const struct vbr_priv *priv,
		   const struct rte_flow_attr *attr,
		   const struct rte_flow_item pattern[],
		   const struct rte_flow_action actions[],
		   struct vbr_flow_desc *d, struct rte_flow_error *error)
{
	struct vbr_flow_caps caps;

	memset(&caps, 0, sizeof(caps));
	caps.nb_rx_queues = priv->dev->data->nb_rx_queues;
	return vbr_flow_prepare(&caps, attr, pattern, actions, d, error);
}

/* Remove a rule from the device (it stays in the list). */
static void
vbr_flow_off(struct vbr_priv *priv, struct rte_flow *flow)
{
	int ret;

	if (flow->ibv_flow == NULL)
		return;
	ret = priv->glue->destroy_flow(flow->ibv_flow);
	if (ret != 0)
		VBR_LOG(ERR, "port %u: rule %u: destroy_flow: %s",
			priv->dev->data->port_id, flow->id, strerror(ret));
	flow->ibv_flow = NULL;
	flow->qp = NULL;
}

/* Create a rule on the device. Caller holds flow_lock. */
static int
vbr_flow_on(struct vbr_priv *priv, struct rte_flow *flow,
	    struct rte_flow_error *error)
{
	struct rte_eth_dev_data *data = priv->dev->data;
	struct ibv_qp *qp = priv->hash_qp;
	int err, q;

	if (flow->rss != NULL) {
		q = vbr_rss_missing_queue(priv, flow->rss);
		if (q >= 0) {
			VBR_LOG(ERR, "port %u: rule %u (%s fate) targets Rx "
				"queue %d, which is not configured (%u Rx "
				"queues): destroy the rule or configure the "
				"queue", data->port_id, flow->id,
				vbr_flow_fate_name(flow->fate), q,
				data->nb_rx_queues);
			return rte_flow_error_set(error, EINVAL,
				RTE_FLOW_ERROR_TYPE_ACTION_CONF, NULL,
				"vbr: the rule targets an Rx queue that is "
				"not configured");
		}
		qp = vbr_rss_qp(priv, flow->rss);
		if (qp == NULL) {
			err = errno;
			return rte_flow_error_set(error, err,
				RTE_FLOW_ERROR_TYPE_HANDLE, NULL,
				"vbr: cannot create the hash QP of the rule's "
				"queues (see the log)");
		}
	}
	if (qp == NULL)
		return rte_flow_error_set(error, EIO,
			RTE_FLOW_ERROR_TYPE_HANDLE, NULL,
			"vbr: the port has no hash QP");
	errno = 0;
	flow->ibv_flow = priv->glue->create_flow(qp, &flow->attr);
	if (flow->ibv_flow == NULL) {
		err = errno != 0 ? errno : EIO;
		VBR_LOG(DEBUG, "port %u: rule %u: ibv_create_flow: %s",
			data->port_id, flow->id, strerror(err));
		return vbr_flow_error(error, err, RTE_FLOW_ERROR_TYPE_HANDLE,
			NULL, "vbr: ibv_create_flow: %s (errno %d%s)",
			strerror(err), err, err == ENOTSUP ? ": the device "
			"does not support a spec or action of the rule" : "");
	}
	flow->qp = qp;
	return 0;
}

static void
vbr_flow_tag_count(struct vbr_priv *priv, const struct rte_flow *flow,
		   int delta)
{
	if (flow->tag != 0)
		__atomic_store_n(&priv->flow_tag_rules,
				 priv->flow_tag_rules + delta,
				 __ATOMIC_RELEASE);
}

/* Let go of the rule's counters and ageing; it is off the device. */
static void
vbr_flow_count_put(struct vbr_priv *priv, struct rte_flow *flow)
{
	vbr_age_del(priv, flow->age);
	flow->age = NULL;
	if (flow->cnt == NULL)
		return;
	if (flow->count == VBR_FLOW_COUNT_INDIRECT) {
		vbr_count_handle_put(priv, flow->cnt);
	} else {
		/* Its own: in the rule's allocation. */
		vbr_count_fini(priv, flow->cnt);
	}
	flow->cnt = NULL;
}

/*
 * The rule's counters (its own, at own, or an indirect action's) into the
 * COUNT spec of its attr, and its ageing. Holds flow_lock.
 */
static int
vbr_flow_count_get(struct vbr_priv *priv, struct rte_flow *flow,
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
	vbr_flow_spec_set_counters((uint8_t *)&flow->attr + d->count_off,
				   flow->cnt->obj);
	if (d->age) {
		flow->age = vbr_age_add(priv, flow->cnt, d->age_timeout,
					d->age_context != NULL ?
					d->age_context : flow, error);
		if (flow->age == NULL) {
			vbr_flow_count_put(priv, flow);
			return -rte_errno;
		}
	}
	return 0;
}

/* Take a rule off the device and the list and free it. Holds flow_lock. */
static void
vbr_flow_free(struct vbr_priv *priv, struct rte_flow *flow)
{
	vbr_flow_off(priv, flow);
	TAILQ_REMOVE(&priv->flows, flow, next);
	vbr_flow_tag_count(priv, flow, -1);
	vbr_flow_count_put(priv, flow);
	vbr_rss_put(priv, flow->rss);
	/* Volatile: a store just before free() is otherwise dropped, and a
	 * second destroy of the handle would pass the check.
	 */
	*(volatile uint32_t *)&flow->magic = 0;
	*(const struct vbr_priv *volatile *)&flow->owner = NULL;
	free(flow);
}

static int
vbr_flow_validate(struct rte_eth_dev *dev, const struct rte_flow_attr *attr,
		  const struct rte_flow_item pattern[],
		  const struct rte_flow_action actions[],
		  struct rte_flow_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct vbr_flow_desc d;
	struct vbr_count *cnt;
	int ret;

	ret = vbr_flow_translate(priv, attr, pattern, actions, &d, error);
	if (ret == 0 && d.count == VBR_FLOW_COUNT_INDIRECT) {
		/* The handle must be one of this port's. */
		pthread_mutex_lock(&priv->flow_lock);
		cnt = vbr_count_handle_get(priv, d.indirect, error);
		if (cnt == NULL)
			ret = -rte_errno;
		else
			vbr_count_handle_put(priv, cnt);
		pthread_mutex_unlock(&priv->flow_lock);
	}
	return ret;
}

/*
 * Translate outside the lock into a scratch description, allocate the rule
 * at its real size, then, under the lock: find or make the queue set, put
 * the rule on the device if the port is started, link it.
 */
static struct rte_flow *
vbr_flow_create(struct rte_eth_dev *dev, const struct rte_flow_attr *attr,
		const struct rte_flow_item pattern[],
		const struct rte_flow_action actions[],
		struct rte_flow_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	size_t size, own_off = 0;
	struct vbr_flow_desc d;
	struct rte_flow *flow;
	int ret;

	ret = vbr_flow_translate(priv, attr, pattern, actions, &d, error);
	if (ret != 0)
		return NULL;
	size = offsetof(struct rte_flow, attr) + d.attr_size;
	if (d.count == VBR_FLOW_COUNT_RULE || d.count == VBR_FLOW_COUNT_HIDDEN) {
		/* Its own counters go behind the specs: one allocation. */
		own_off = RTE_ALIGN_CEIL(size, alignof(struct vbr_count));
		size = own_off + sizeof(struct vbr_count);
	}
	flow = malloc(size);
	if (flow == NULL) {
		rte_flow_error_set(error, ENOMEM, RTE_FLOW_ERROR_TYPE_HANDLE,
				   NULL, "vbr: no memory for the rule");
		return NULL;
	}
	flow->owner = priv;
	flow->magic = VBR_FLOW_MAGIC;
	flow->rss = NULL;
	flow->ibv_flow = NULL;
	flow->qp = NULL;
	flow->rebind = NULL;
	flow->tag = d.tag;
	flow->fate = d.fate;
	flow->count = d.count;
	flow->cnt = NULL;
	flow->age = NULL;
	memcpy(&flow->attr, d.u.buf, d.attr_size);
	pthread_mutex_lock(&priv->flow_lock);
	if (d.fate == VBR_FLOW_FATE_QUEUE || d.fate == VBR_FLOW_FATE_RSS) {
		flow->rss = vbr_rss_get(priv, d.queues, d.nb_queues,
					d.has_key ? d.rss_key : NULL,
					d.hash_fields);
		if (flow->rss == NULL) {
			rte_flow_error_set(error, errno,
				RTE_FLOW_ERROR_TYPE_HANDLE, NULL,
				"vbr: no memory for the rule's queue set");
			goto error;
		}
	}
	if (vbr_flow_count_get(priv, flow, &d, own_off != 0 ?
			       RTE_PTR_ADD(flow, own_off) : NULL, error) != 0)
		goto error;
	flow->id = priv->flow_seq++;
	if (priv->flows_on) {
		ret = vbr_flow_on(priv, flow, error);
		if (ret != 0)
			goto error;
	}
	TAILQ_INSERT_TAIL(&priv->flows, flow, next);
	vbr_flow_tag_count(priv, flow, 1);
	pthread_mutex_unlock(&priv->flow_lock);
	return flow;
error:
	vbr_flow_count_put(priv, flow);
	vbr_rss_put(priv, flow->rss);
	pthread_mutex_unlock(&priv->flow_lock);
	free(flow);
	return NULL;
}

/*
 * A rule handle of this port, or NULL. The handle is checked by its owner
 * and magic, not by walking the list: destroy stays O(1) with a million
 * rules, and catches a handle of another port or one that is not a rule.
 * A handle already destroyed is freed memory: using it is undefined, as
 * with every rte_flow driver (the magic is cleared at destroy, so it is
 * caught unless the memory was reused).
 */
static struct rte_flow *
vbr_flow_check(const struct vbr_priv *priv, struct rte_flow *flow)
{
	if (flow == NULL || flow->magic != VBR_FLOW_MAGIC ||
	    flow->owner != priv)
		return NULL;
	return flow;
}

static int
vbr_flow_destroy(struct rte_eth_dev *dev, struct rte_flow *flow,
		 struct rte_flow_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct rte_flow *f;

	pthread_mutex_lock(&priv->flow_lock);
	f = vbr_flow_check(priv, flow);
	if (f == NULL) {
		pthread_mutex_unlock(&priv->flow_lock);
		return rte_flow_error_set(error, EINVAL,
			RTE_FLOW_ERROR_TYPE_HANDLE, flow,
			"vbr: no such rule on this port");
	}
	vbr_flow_free(priv, f);
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
	f = vbr_flow_check(priv, flow);
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
	while (!TAILQ_EMPTY(&priv->flows))
		vbr_flow_free(priv, TAILQ_FIRST(&priv->flows));
	pthread_mutex_unlock(&priv->flow_lock);
	return 0;
}

/*
 * Isolated mode: only the user rules receive traffic. The default rules are
 * made at start, so the mode can change only while the port is stopped.
 */
static int
vbr_flow_isolate(struct rte_eth_dev *dev, int enable,
		 struct rte_flow_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
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

static void
vbr_flow_dump_one(struct vbr_priv *priv, const struct rte_flow *flow,
		  FILE *file)
{
	fprintf(file, "port %u vbr rule %u: %s", priv->dev->data->port_id,
		flow->id, vbr_flow_fate_name(flow->fate));
	if (flow->rss != NULL)
		vbr_rss_dump(file, flow->rss);
	if (flow->tag == VBR_FLOW_TAG_FLAG)
		fprintf(file, ", flag");
	else if (flow->tag != 0)
		fprintf(file, ", mark %u", flow->tag - 1);
	if (flow->count == VBR_FLOW_COUNT_RULE)
		fprintf(file, ", count");
	else if (flow->count == VBR_FLOW_COUNT_INDIRECT)
		fprintf(file, ", indirect count");
	if (flow->age != NULL)
		fprintf(file, ", age");
	fprintf(file, ", %zu bytes, %s\n",
		offsetof(struct rte_flow, attr) + flow->attr.size,
		flow->ibv_flow != NULL ? "on the device" :
		"not on the device (port stopped)");
	vbr_flow_dump_attr(file, &flow->attr);
}

static int
vbr_flow_dev_dump(struct rte_eth_dev *dev, struct rte_flow *flow, FILE *file,
		  struct rte_flow_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct rte_flow *f;
	int ret = 0;

	if (file == NULL)
		file = stdout;
	pthread_mutex_lock(&priv->flow_lock);
	if (flow != NULL) {
		f = vbr_flow_check(priv, flow);
		if (f == NULL)
			ret = rte_flow_error_set(error, EINVAL,
				RTE_FLOW_ERROR_TYPE_HANDLE, flow,
				"vbr: no such rule on this port");
		else
			vbr_flow_dump_one(priv, f, file);
	} else {
		unsigned int n = 0;

		/* the rules there are, not flow_seq (the next rule id) */
		TAILQ_FOREACH(f, &priv->flows, next)
			n++;
		fprintf(file, "port %u: %s, %u vbr rules, %u hash QPs\n",
			dev->data->port_id, priv->isolated ? "isolated" :
			"not isolated", n, vbr_rss_nb_qps(priv));
		TAILQ_FOREACH(f, &priv->flows, next)
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

/** At dev_start, after the port's hash QP: put every rule on the device. */
int
vbr_flow_start(struct vbr_priv *priv)
{
	struct rte_flow_error error;
	struct rte_flow *flow;
	int ret = 0;

	pthread_mutex_lock(&priv->flow_lock);
	TAILQ_FOREACH(flow, &priv->flows, next) {
		ret = vbr_flow_on(priv, flow, &error);
		if (ret != 0) {
			VBR_LOG(ERR, "port %u: cannot start with rule %u: %s",
				priv->dev->data->port_id, flow->id,
				error.message != NULL ? error.message : "?");
			break;
		}
	}
	if (ret != 0) {
		TAILQ_FOREACH(flow, &priv->flows, next)
			vbr_flow_off(priv, flow);
		vbr_rss_stop(priv);
	} else {
		/* From now on, rules created go on the device at once. */
		priv->flows_on = 1;
	}
	pthread_mutex_unlock(&priv->flow_lock);
	return ret;
}

/** At dev_stop: take every rule off the device; the list stays. */
void
vbr_flow_stop(struct vbr_priv *priv)
{
	struct rte_flow *flow;

	pthread_mutex_lock(&priv->flow_lock);
	priv->flows_on = 0;
	TAILQ_FOREACH(flow, &priv->flows, next)
		vbr_flow_off(priv, flow);
	vbr_rss_stop(priv);
	pthread_mutex_unlock(&priv->flow_lock);
}

/**
 * The port's hash QP is replaced (RSS update while started): put a copy of
 * every rule that targets the port's hash QP (drop rules) and sits on
 * old_qp on new_qp, in rule order. The originals stay until
 * vbr_flow_rebind_commit(); a frame matches one of the two (same priority,
 * the older wins), so the rule's counters count it once. The counters
 * object is bound by both: verbs lets several flows share one. Return 0, or
 * a negative errno with no copy left. Caller holds flow_lock.
 */
int
vbr_flow_rebind(struct vbr_priv *priv, struct ibv_qp *old_qp,
		struct ibv_qp *new_qp)
{
	struct rte_flow *flow;
	int err;

	TAILQ_FOREACH(flow, &priv->flows, next) {
		/* A QUEUE/RSS rule keeps its own set, even the port's. */
		if (flow->ibv_flow == NULL || flow->qp != old_qp ||
		    flow->rss != NULL)
			continue;
		errno = 0;
		flow->rebind = priv->glue->create_flow(new_qp, &flow->attr);
		if (flow->rebind == NULL) {
			err = errno != 0 ? errno : EIO;
			VBR_LOG(ERR, "port %u: rule %u: cannot move it to the "
				"new hash QP: ibv_create_flow: %s",
				priv->dev->data->port_id, flow->id,
				strerror(err));
			vbr_flow_rebind_abort(priv);
			return -err;
		}
	}
	return 0;
}

/** After vbr_flow_rebind(): destroy the originals, the copies take over. */
void
vbr_flow_rebind_commit(struct vbr_priv *priv, struct ibv_qp *new_qp)
{
	struct rte_flow *flow;

	TAILQ_FOREACH(flow, &priv->flows, next) {
		if (flow->rebind == NULL)
			continue;
		vbr_flow_off(priv, flow);
		flow->ibv_flow = flow->rebind;
		flow->qp = new_qp;
		flow->rebind = NULL;
	}
}

/** After vbr_flow_rebind(): destroy the copies, the originals stay. */
void
vbr_flow_rebind_abort(struct vbr_priv *priv)
{
	struct rte_flow *flow;
	int ret;

	TAILQ_FOREACH(flow, &priv->flows, next) {
		if (flow->rebind == NULL)
			continue;
		ret = priv->glue->destroy_flow(flow->rebind);
		if (ret != 0)
			VBR_LOG(ERR, "port %u: rule %u: destroy_flow: %s",
				priv->dev->data->port_id, flow->id,
				strerror(ret));
		flow->rebind = NULL;
	}
}

/** At close: free every rule. */
void
vbr_flow_release(struct vbr_priv *priv)
{
	if (!priv->flow_lock_init)
		return;
	vbr_flow_flush(priv->dev, NULL);
	vbr_count_release(priv);
	vbr_rss_release(priv);
	pthread_mutex_destroy(&priv->flow_lock);
	priv->flow_lock_init = 0;
}

/**
 * Internal rule: frames to one destination MAC go to the port's hash QP, at
 * the lowest priority. vid is VBR_FLOW_VLAN_ANY (tagged or not), 0 (untagged:
 * the VID bits of the first tag are 0, so priority-tagged frames match too)
 * or a VLAN ID. Return NULL with errno set on failure.
 */
struct ibv_flow *
vbr_flow_internal_mac(struct vbr_priv *priv, const struct rte_ether_addr *mac,
		      uint16_t vid)
{
	static const struct rte_flow_attr attr = { .ingress = 1 };
	struct rte_flow_item_eth spec = { .dst = *mac };
	struct rte_flow_item_eth mask = {
		.dst.addr_bytes = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
	};
	const struct rte_flow_item pattern[] = {
		{ .type = RTE_FLOW_ITEM_TYPE_ETH, .spec = &spec, .mask = &mask },
		{ .type = RTE_FLOW_ITEM_TYPE_END },
	};
	static const struct rte_flow_action actions[] = {
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	static const struct vbr_flow_caps caps = { .internal = 1 };
	struct rte_flow_error error;
	struct vbr_flow_desc *d;
	struct ibv_flow *flow = NULL;
	int err;

	d = malloc(sizeof(*d));
	if (d == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (vbr_flow_prepare(&caps, &attr, pattern, actions, d, &error) != 0) {
		err = rte_errno;
		VBR_LOG(ERR, "port %u: internal rule: %s",
			priv->dev->data->port_id, error.message);
		goto out;
	}
	if (vid != VBR_FLOW_VLAN_ANY) {
		/*
		 * The VLAN item refuses VID 0 (no tag): set the eth spec,
		 * the only spec of the rule, directly.
		 */
		struct ibv_flow_spec_eth *eth =
			(struct ibv_flow_spec_eth *)(&d->u.attr + 1);

		if (d->u.attr.num_of_specs != 1 ||
		    eth->type != IBV_FLOW_SPEC_ETH) {
			err = EINVAL;
			goto out;
		}
		eth->val.vlan_tag = rte_cpu_to_be_16(vid & 0x0fff);
		eth->mask.vlan_tag = RTE_BE16(0x0fff);
	}
	flow = priv->glue->create_flow(priv->hash_qp, &d->u.attr);
	err = errno;
	if (flow == NULL)
		VBR_LOG(ERR, "port %u: rule for " RTE_ETHER_ADDR_PRT_FMT
			" VLAN %d: %s", priv->dev->data->port_id,
			RTE_ETHER_ADDR_BYTES(mac),
			vid == VBR_FLOW_VLAN_ANY ? -1 : (int)vid,
			strerror(err));
out:
	free(d);
	errno = err;
	return flow;
}

/** Internal ALL_DEFAULT (promiscuous) or MC_DEFAULT (allmulticast) rule. */
struct ibv_flow *
vbr_flow_internal_default(struct vbr_priv *priv, enum ibv_flow_attr_type type)
{
	struct ibv_flow_attr attr = {
		.type = type,
		.size = sizeof(attr),
		.priority = VBR_FLOW_PRIO_INTERNAL,
		.port = VBR_PORT_NUM,
	};
	struct ibv_flow *flow;
	int err;

	flow = priv->glue->create_flow(priv->hash_qp, &attr);
	err = errno;
	if (flow == NULL)
		VBR_LOG(ERR, "port %u: %s rule: %s", priv->dev->data->port_id,
			type == IBV_FLOW_ATTR_ALL_DEFAULT ? "promiscuous" :
			"allmulticast", strerror(err));
	errno = err;
	return flow;
}
