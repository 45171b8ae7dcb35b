/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Flow counters and flow ageing.
 *
 * A counters object is one ibv_counters with the packets of the flows bound
 * to it at index 0 and their bytes at index 1, both points attached
 * statically (flow NULL) when the object is made, before any flow binds it:
 * verbs refuses a static attach once the object is bound. A rule binds it
 * with an IBV_FLOW_SPEC_ACTION_COUNT spec. The object lives as long as its
 * owner (the rule, or the indirect action handle), so it is bound again when
 * the rule goes back on the device at dev_start and its values carry on.
 * The device never clears a counter: a query with reset keeps the values it
 * returned as a baseline, later queries return what came since.
 *
 * A ConnectX refuses to read a counters object no flow binds (EINVAL): an
 * AGE rule not yet on the device, any rule of a stopped port, an indirect
 * COUNT no rule uses. So the object is read only while bound: the steering
 * layer counts the verbs flows that bind it (vbr_count_bind() and
 * vbr_count_unbind(), several flows of an expanded rule bind the same
 * object), the last unbind reads it one final time, and while unbound every
 * query answers from those last values. The device keeps its totals across
 * an unbind (the object lives on), so a rebound object carries on from
 * them.
 *
 * Indirect COUNT: rte_flow_action_handle_create() makes a counters object
 * that any number of rules bind (INDIRECT action); they add to it together.
 * Destroying the handle while a rule uses it fails with EBUSY.
 *
 * AGE: the rule's counters (a hidden object when the rule has no COUNT) are
 * read by an EAL alarm once a second while the port has a rule with AGE,
 * started or not. A rule whose packet count has not moved for its timeout is
 * aged: it is reported by rte_flow_get_aged_flows() until it is destroyed,
 * and RTE_ETH_EVENT_FLOW_AGED is raised once for the rules that aged since
 * the last rte_flow_get_aged_flows() call.
 *
 * This state hangs off vbr_priv (count_port), made on the first handle or
 * AGE rule of a port and freed at close. Every function here runs under the
 * port's flow_lock (the rte_flow ops take it), the alarm included.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <rte_alarm.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_flow_driver.h>

#include "vbr.h"
#include "vbr_utils.h"

/** Tells a live indirect COUNT handle of ours from anything else. */
#define VBR_COUNT_MAGIC 0x76626369u /* "vbci" */
/** How often the counters of AGE rules are read, microseconds. */
#define VBR_AGE_PERIOD_US 1000000

/** An indirect COUNT action: a counters object rules share. */
struct rte_flow_action_handle {
	LIST_ENTRY(rte_flow_action_handle) next; /**< in vbr_count_port */
	const struct vbr_priv *owner;	/**< port, NULL once destroyed */
	uint32_t magic;			/**< VBR_COUNT_MAGIC while live */
	uint32_t id;			/**< handle number, for messages */
	uint32_t refs;			/**< rules that bind it */
	struct vbr_count cnt;		/**< the shared counters */
};

/** The ageing state of one rule with AGE. */
struct vbr_age {
	TAILQ_ENTRY(vbr_age) next;	/**< in vbr_count_port.ages */
	struct vbr_count *cnt;		/**< counters it watches */
	void *context;			/**< reported when aged */
	uint64_t last_pkts;		/**< packets at the last change */
	uint64_t last_hit;		/**< timer cycles of that change */
	uint32_t timeout;		/**< seconds */
	unsigned int aged:1;		/**< timed out, until destroyed */
};

/** The counters state of a port (see the head of the file). */
struct vbr_count_port {
	struct vbr_priv *priv;		/**< the port */
	LIST_HEAD(, rte_flow_action_handle) handles; /**< indirect COUNTs */
	TAILQ_HEAD(, vbr_age) ages;	/**< rules with AGE */
	uint32_t nb_ages;		/**< entries of ages */
	uint32_t nb_aged;		/**< of them aged */
	uint32_t handle_seq;		/**< number of the next handle */
	unsigned int alarm:1;		/**< the age alarm is set */
	unsigned int event_armed:1;	/**< next newly aged rule: event */
};

static struct vbr_count_port *
vbr_count_port(struct vbr_priv *priv, bool create)
{
	struct vbr_count_port *ps = priv->count_port;

	if (ps != NULL || !create)
		return ps;
	ps = calloc(1, sizeof(*ps));
	if (ps == NULL)
		return NULL;
	ps->priv = priv;
	LIST_INIT(&ps->handles);
	TAILQ_INIT(&ps->ages);
	ps->event_armed = 1;
	priv->count_port = ps;
	return ps;
}

/**
 * Make a counters object: packets at index 0, bytes at index 1, attached
 * before any flow binds it. Return 0 or a negative errno with *error set.
 */
int
vbr_count_init(struct vbr_priv *priv, struct vbr_count *cnt,
	       struct rte_flow_error *error)
{
	struct ibv_counters_init_attr init = { .comp_mask = 0 };
	struct ibv_counter_attach_attr at = { .comp_mask = 0 };
	int err;

	memset(cnt, 0, sizeof(*cnt));
	if (priv->glue->create_counters == NULL)
		return rte_flow_error_set(error, ENOTSUP,
			RTE_FLOW_ERROR_TYPE_ACTION, NULL,
			"vbr: the verbs library has no flow counters");
	errno = 0;
	cnt->obj = priv->glue->create_counters(priv->ctx, &init);
	if (cnt->obj == NULL) {
		err = errno != 0 ? errno : EIO;
		return vbr_flow_error(error, err, RTE_FLOW_ERROR_TYPE_ACTION,
			NULL, "vbr: ibv_create_counters: %s (errno %d%s)",
			strerror(err), err, err == ENOTSUP || err == EOPNOTSUPP ?
			": the device has no flow counters" : "");
	}
	at.counter_desc = IBV_COUNTER_PACKETS;
	at.index = 0;
	err = priv->glue->attach_counters_point_flow(cnt->obj, &at, NULL);
	if (err == 0) {
		at.counter_desc = IBV_COUNTER_BYTES;
		at.index = 1;
		err = priv->glue->attach_counters_point_flow(cnt->obj, &at,
							     NULL);
	}
	if (err != 0) {
		priv->glue->destroy_counters(cnt->obj);
		cnt->obj = NULL;
		return vbr_flow_error(error, err, RTE_FLOW_ERROR_TYPE_ACTION,
			NULL, "vbr: ibv_attach_counters_point_flow (%s): %s "
			"(errno %d)", at.index == 0 ? "packets" : "bytes",
			strerror(err), err);
	}
	return 0;
}

/** Destroy a counters object no flow binds any more. */
void
vbr_count_fini(struct vbr_priv *priv, struct vbr_count *cnt)
{
	int ret;

	if (cnt->obj == NULL)
		return;
	ret = priv->glue->destroy_counters(cnt->obj);
	if (ret != 0)
		VBR_LOG(ERR, "port %u: ibv_destroy_counters: %s",
			priv->dev->data->port_id, strerror(ret));
	cnt->obj = NULL;
}

/*
 * The values: v[0] packets, v[1] bytes, from the device while a flow binds
 * the object, else the last ones read. Return 0 or an errno.
 */
static int
vbr_count_read(struct vbr_priv *priv, struct vbr_count *cnt, uint64_t v[2])
{
	int ret;

	if (cnt->bound == 0) {
		v[0] = cnt->last[0];
		v[1] = cnt->last[1];
		return 0;
	}
	ret = priv->glue->read_counters(cnt->obj, v, 2, 0);
	if (ret == 0) {
		cnt->last[0] = v[0];
		cnt->last[1] = v[1];
	}
	return ret;
}

/** A verbs flow binding cnt is on the device. */
void
vbr_count_bind(struct vbr_count *cnt)
{
	cnt->bound++;
}

/**
 * A verbs flow binding cnt is about to be destroyed: the last one reads
 * the object first, while it is still bound, and keeps the values.
 */
void
vbr_count_unbind(struct vbr_priv *priv, struct vbr_count *cnt)
{
	uint64_t v[2];
	int ret;

	if (cnt->bound == 0)
		return;
	if (cnt->bound == 1) {
		ret = vbr_count_read(priv, cnt, v);
		if (ret != 0)
			VBR_LOG(ERR, "port %u: ibv_read_counters before the "
				"last flow goes: %s; the counts since the "
				"last read are lost", priv->dev->data->port_id,
				strerror(ret));
	}
	cnt->bound--;
}

/**
 * COUNT query: the values since the last reset; with q->reset, restart
 * from the values returned.
 */
int
vbr_count_query(struct vbr_priv *priv, struct vbr_count *cnt,
		struct rte_flow_query_count *q, struct rte_flow_error *error)
{
	uint64_t v[2];
	int err;

	err = vbr_count_read(priv, cnt, v);
	if (err != 0)
		return vbr_flow_error(error, err, RTE_FLOW_ERROR_TYPE_ACTION,
			NULL, "vbr: ibv_read_counters: %s (errno %d)",
			strerror(err), err);
	q->hits = v[0] - cnt->base[0];
	q->bytes = v[1] - cnt->base[1];
	q->hits_set = 1;
	q->bytes_set = 1;
	if (q->reset) {
		cnt->base[0] = v[0];
		cnt->base[1] = v[1];
	}
	return 0;
}

/*
 * Indirect COUNT handles.
 */

/* A handle of this port, or NULL with *error set. */
static struct rte_flow_action_handle *
vbr_count_handle_check(const struct vbr_priv *priv,
		       const struct rte_flow_action_handle *handle,
		       struct rte_flow_error *error)
{
	if (handle == NULL || handle->magic != VBR_COUNT_MAGIC) {
		rte_flow_error_set(error, EINVAL, RTE_FLOW_ERROR_TYPE_HANDLE,
				   handle, "vbr: no such indirect action");
		return NULL;
	}
	if (handle->owner != priv) {
		rte_flow_error_set(error, EINVAL, RTE_FLOW_ERROR_TYPE_HANDLE,
				   handle, "vbr: the indirect action belongs "
				   "to another port (counters count on the "
				   "port that made them)");
		return NULL;
	}
	return (struct rte_flow_action_handle *)(uintptr_t)handle;
}

/** A rule binds an indirect COUNT: its counters, or NULL with *error set. */
struct vbr_count *
vbr_count_handle_get(struct vbr_priv *priv,
		     const struct rte_flow_action_handle *handle,
		     struct rte_flow_error *error)
{
	struct rte_flow_action_handle *h;

	h = vbr_count_handle_check(priv, handle, error);
	if (h == NULL)
		return NULL;
	h->refs++;
	return &h->cnt;
}

/** The rule that bound cnt (vbr_count_handle_get()) is gone. */
void
vbr_count_handle_put(struct vbr_priv *priv, struct vbr_count *cnt)
{
	struct rte_flow_action_handle *h =
		container_of(cnt, struct rte_flow_action_handle, cnt);

	RTE_SET_USED(priv);
	h->refs--;
}

struct rte_flow_action_handle *
vbr_count_handle_create(struct rte_eth_dev *dev,
			const struct rte_flow_indir_action_conf *conf,
			const struct rte_flow_action *action,
			struct rte_flow_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct rte_flow_action_handle *h;
	struct vbr_count_port *ps;

	if (conf == NULL || action == NULL) {
		rte_flow_error_set(error, EINVAL, RTE_FLOW_ERROR_TYPE_ACTION,
				   NULL, "vbr: indirect action: no "
				   "configuration or no action");
		return NULL;
	}
	if (conf->egress || conf->transfer) {
		rte_flow_error_set(error, ENOTSUP, RTE_FLOW_ERROR_TYPE_ACTION,
				   action, "vbr: indirect action: ingress "
				   "only (no egress, no transfer)");
		return NULL;
	}
	if (!conf->ingress) {
		rte_flow_error_set(error, EINVAL, RTE_FLOW_ERROR_TYPE_ACTION,
				   action, "vbr: indirect action: must be "
				   "ingress");
		return NULL;
	}
	if (action->type != RTE_FLOW_ACTION_TYPE_COUNT) {
		vbr_flow_error(error, ENOTSUP, RTE_FLOW_ERROR_TYPE_ACTION,
			       action, "vbr: indirect action: only count can "
			       "be indirect (action type %d)",
			       (int)action->type);
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (h == NULL) {
		rte_flow_error_set(error, ENOMEM, RTE_FLOW_ERROR_TYPE_ACTION,
				   action, "vbr: no memory for the indirect "
				   "action");
		return NULL;
	}
	pthread_mutex_lock(&priv->flow_lock);
	ps = vbr_count_port(priv, true);
	if (ps == NULL) {
		rte_flow_error_set(error, ENOMEM, RTE_FLOW_ERROR_TYPE_ACTION,
				   action, "vbr: no memory for the indirect "
				   "action");
		goto error;
	}
	if (vbr_count_init(priv, &h->cnt, error) != 0)
		goto error;
	h->owner = priv;
	h->magic = VBR_COUNT_MAGIC;
	h->id = ps->handle_seq++;
	LIST_INSERT_HEAD(&ps->handles, h, next);
	pthread_mutex_unlock(&priv->flow_lock);
	return h;
error:
	pthread_mutex_unlock(&priv->flow_lock);
	free(h);
	return NULL;
}

static void
vbr_count_handle_free(struct vbr_priv *priv, struct rte_flow_action_handle *h)
{
	LIST_REMOVE(h, next);
	vbr_count_fini(priv, &h->cnt);
	/* Volatile: see vbr_steer_free(). */
	*(volatile uint32_t *)&h->magic = 0;
	*(const struct vbr_priv *volatile *)&h->owner = NULL;
	free(h);
}

int
vbr_count_handle_destroy(struct rte_eth_dev *dev,
			 struct rte_flow_action_handle *handle,
			 struct rte_flow_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct rte_flow_action_handle *h;
	int ret = 0;

	pthread_mutex_lock(&priv->flow_lock);
	h = vbr_count_handle_check(priv, handle, error);
	if (h == NULL)
		ret = -rte_errno;
	else if (h->refs > 0)
		ret = vbr_flow_error(error, EBUSY, RTE_FLOW_ERROR_TYPE_HANDLE,
			handle, "vbr: indirect count %u is used by %u rule%s: "
			"destroy them first", h->id, h->refs,
			h->refs > 1 ? "s" : "");
	else
		vbr_count_handle_free(priv, h);
	pthread_mutex_unlock(&priv->flow_lock);
	return ret;
}

int
vbr_count_handle_update(struct rte_eth_dev *dev,
			struct rte_flow_action_handle *handle,
			const void *update, struct rte_flow_error *error)
{
	RTE_SET_USED(dev);
	RTE_SET_USED(update);
	return rte_flow_error_set(error, ENOTSUP, RTE_FLOW_ERROR_TYPE_HANDLE,
				  handle, "vbr: an indirect count has nothing "
				  "to update (query with reset restarts it)");
}

/** Indirect COUNT query: data is a struct rte_flow_query_count. */
int
vbr_count_handle_query(struct rte_eth_dev *dev,
		       const struct rte_flow_action_handle *handle,
		       void *data, struct rte_flow_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct rte_flow_action_handle *h;
	int ret;

	if (data == NULL)
		return rte_flow_error_set(error, EINVAL,
			RTE_FLOW_ERROR_TYPE_UNSPECIFIED, NULL,
			"vbr: indirect count query: no data");
	pthread_mutex_lock(&priv->flow_lock);
	h = vbr_count_handle_check(priv, handle, error);
	if (h == NULL)
		ret = -rte_errno;
	else
		ret = vbr_count_query(priv, &h->cnt, data, error);
	pthread_mutex_unlock(&priv->flow_lock);
	return ret;
}

/*
 * Ageing.
 */

static void vbr_age_alarm(void *arg);

/* Caller holds flow_lock. */
static int
vbr_age_arm(struct vbr_count_port *ps)
{
	int ret;

	if (ps->alarm)
		return 0;
	ret = rte_eal_alarm_set(VBR_AGE_PERIOD_US, vbr_age_alarm, ps);
	if (ret == 0)
		ps->alarm = 1;
	return ret;
}

/*
 * Once a second while the port has AGE rules: a rule whose counter moved
 * is hit now; one that did not for its timeout is aged.
 */
static void
vbr_age_alarm(void *arg)
{
	struct vbr_count_port *ps = arg;
	struct vbr_priv *priv = ps->priv;
	uint64_t hz = rte_get_timer_hz(), now, v[2];
	struct vbr_age *a;
	bool event = false;
	uint32_t newly = 0;
	int ret;

	pthread_mutex_lock(&priv->flow_lock);
	ps->alarm = 0;
	now = rte_get_timer_cycles();
	TAILQ_FOREACH(a, &ps->ages, next) {
		if (vbr_count_read(priv, a->cnt, v) != 0)
			continue;
		if (v[0] != a->last_pkts) {
			a->last_pkts = v[0];
			a->last_hit = now;
			continue;
		}
		if (!a->aged && now - a->last_hit >= a->timeout * hz) {
			a->aged = 1;
			ps->nb_aged++;
			newly++;
		}
	}
	if (newly > 0 && ps->event_armed) {
		ps->event_armed = 0;
		event = true;
	}
	if (ps->nb_ages > 0) {
		ret = vbr_age_arm(ps);
		if (ret != 0)
			VBR_LOG(ERR, "port %u: age alarm: %s; rules stop "
				"ageing until one is created",
				priv->dev->data->port_id, strerror(-ret));
	}
	pthread_mutex_unlock(&priv->flow_lock);
	if (event)
		rte_eth_dev_callback_process(priv->dev,
					     RTE_ETH_EVENT_FLOW_AGED, NULL);
}

/**
 * A rule with AGE: watch cnt. Return its state, or NULL with *error set.
 * Caller holds flow_lock.
 */
struct vbr_age *
vbr_age_add(struct vbr_priv *priv, struct vbr_count *cnt, uint32_t timeout,
	    void *context, struct rte_flow_error *error)
{
	struct vbr_count_port *ps;
	struct vbr_age *a;
	uint64_t v[2];
	int ret;

	ps = vbr_count_port(priv, true);
	a = calloc(1, sizeof(*a));
	if (ps == NULL || a == NULL) {
		free(a);
		rte_flow_error_set(error, ENOMEM, RTE_FLOW_ERROR_TYPE_ACTION,
				   NULL, "vbr: no memory for the age action");
		return NULL;
	}
	ret = vbr_count_read(priv, cnt, v);
	if (ret != 0) {
		free(a);
		vbr_flow_error(error, ret, RTE_FLOW_ERROR_TYPE_ACTION, NULL,
			       "vbr: age action: ibv_read_counters: %s",
			       strerror(ret));
		return NULL;
	}
	a->cnt = cnt;
	a->context = context;
	a->timeout = timeout;
	a->last_pkts = v[0];
	a->last_hit = rte_get_timer_cycles();
	ret = vbr_age_arm(ps);
	if (ret != 0) {
		free(a);
		vbr_flow_error(error, -ret, RTE_FLOW_ERROR_TYPE_ACTION, NULL,
			       "vbr: age action: rte_eal_alarm_set: %s",
			       strerror(-ret));
		return NULL;
	}
	TAILQ_INSERT_TAIL(&ps->ages, a, next);
	ps->nb_ages++;
	return a;
}

/** The rule of age is destroyed. Caller holds flow_lock. */
void
vbr_age_del(struct vbr_priv *priv, struct vbr_age *age)
{
	struct vbr_count_port *ps = vbr_count_port(priv, false);

	if (age == NULL || ps == NULL)
		return;
	TAILQ_REMOVE(&ps->ages, age, next);
	ps->nb_ages--;
	if (age->aged)
		ps->nb_aged--;
	free(age);
	/* The alarm stops by itself once no rule ages. */
}

/** AGE query. Caller holds flow_lock. */
void
vbr_age_query(struct vbr_priv *priv, struct vbr_age *age,
	      struct rte_flow_query_age *q)
{
	uint64_t hz = rte_get_timer_hz(), now = rte_get_timer_cycles(), v[2];
	uint64_t sec;

	if (vbr_count_read(priv, age->cnt, v) == 0 && v[0] != age->last_pkts) {
		age->last_pkts = v[0];
		age->last_hit = now;
	}
	sec = (now - age->last_hit) / hz;
	memset(q, 0, sizeof(*q));
	q->aged = age->aged;
	q->sec_since_last_hit_valid = 1;
	q->sec_since_last_hit = RTE_MIN(sec, (uint64_t)VBR_FLOW_AGE_MAX);
}

/** rte_flow_get_aged_flows(): the contexts of the aged rules. */
int
vbr_age_get_aged(struct rte_eth_dev *dev, void **contexts,
		 uint32_t nb_contexts, struct rte_flow_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct vbr_count_port *ps;
	struct vbr_age *a;
	uint32_t n = 0;

	if (nb_contexts > 0 && contexts == NULL)
		return rte_flow_error_set(error, EINVAL,
			RTE_FLOW_ERROR_TYPE_UNSPECIFIED, NULL,
			"vbr: get aged flows: no array for the contexts");
	pthread_mutex_lock(&priv->flow_lock);
	ps = vbr_count_port(priv, false);
	if (ps != NULL) {
		/* Rules that age from now on raise the event again. */
		ps->event_armed = 1;
		if (nb_contexts == 0) {
			n = ps->nb_aged;
		} else {
			TAILQ_FOREACH(a, &ps->ages, next) {
				if (n == nb_contexts)
					break;
				if (a->aged)
					contexts[n++] = a->context;
			}
		}
	}
	pthread_mutex_unlock(&priv->flow_lock);
	return n;
}

/**
 * At close, once every rule is gone: free the indirect handles left, stop
 * the age alarm, free the port's state. Without flow_lock (the alarm takes
 * it).
 */
void
vbr_count_release(struct vbr_priv *priv)
{
	struct vbr_count_port *ps;

	pthread_mutex_lock(&priv->flow_lock);
	ps = vbr_count_port(priv, false);
	if (ps != NULL) {
		while (!LIST_EMPTY(&ps->handles))
			vbr_count_handle_free(priv, LIST_FIRST(&ps->handles));
	}
	pthread_mutex_unlock(&priv->flow_lock);
	if (ps == NULL)
		return;
	/* Waits for a callback under way, and removes one it set again. */
	rte_eal_alarm_cancel(vbr_age_alarm, ps);
	priv->count_port = NULL;
	free(ps);
}
