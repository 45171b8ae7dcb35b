/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Tx rate limits onto QP packet pacing: ethdev's set_queue_rate_limit, the
 * PMD's rte_pmd_vbr_set_queue_rate_limit() and rte_tm.
 *
 * A Tx queue is one RAW_PACKET QP, and the device paces a QP on its own
 * (ibv_modify_qp_rate_limit(3): a rate in kbit/s, a burst size and a
 * typical packet size). So each queue has one wanted limit here, whoever
 * set it last; it goes on the QP when the QP reaches RTS (port start, and
 * the recovery of a send queue in ERR: a QP moved to RESET loses its limit
 * on mlx5) and at once on a started queue. A limit can be set before the
 * queue exists; it waits here.
 *
 * rte_tm is the hierarchy QP pacing can do: a root (one non-leaf level,
 * no shaper of its own: the device has no port shaper) and one leaf per Tx
 * queue, leaf id = queue id, as DPDK's drivers number them. A leaf's
 * private shaper profile is a single-rate token bucket: peak rate (bytes/s)
 * and peak size (bytes) give rate_limit = rate * 8 / 1000 kbit/s, rounded
 * down (the queue never goes faster than the profile says), and
 * max_burst_sz = size. What pacing cannot do is refused with the field
 * named: committed rates, shaping on the root, shared shapers, WRED,
 * packet mode (pacing counts bytes), a length adjustment (the device counts
 * the frame bytes the peer receives), priorities other than 0, weights
 * other than 1 (the device serves its queues in turn, with equal weights),
 * rates outside packet_pacing_caps. The hierarchy's leaves go on the
 * queues at commit; queues without a leaf keep the limit they have. After
 * the commit, leaves may be added and deleted and their profile changed:
 * each change goes on the queue at once, as pacing can change a running
 * QP's rate. Suspend/resume is refused: pacing cannot hold a queue.
 *
 * Two refusals verbs cannot announce. Burst pacing: a ConnectX takes
 * max_burst_sz and typical_pkt_sz only with its burst caps, which only
 * mlx5's vendor query shows (the provider gives EINVAL without them). A
 * leaf's peak size is therefore tried, and when a QP in RTS refuses it
 * with EINVAL the rate goes on alone and the port drops peak sizes from
 * then on, with a warning: the queue keeps the rate the profile asks for
 * and the device's own bucket. A size given
 * through rte_pmd_vbr_set_queue_rate_limit() is the caller's explicit
 * wish: refused, not dropped. The rate table: a ConnectX keeps one entry
 * per distinct (rate, burst, size), shared by equal limits, and refuses a
 * new one when full with ENOSPC: said as such, with the way out.
 *
 * The wanted limit of a queue is read by the datapath's recovery (the slow
 * path of a burst) while the control path may write it: a seqlock, so the
 * datapath never waits. The control calls of one port come from one thread
 * at a time, as ethdev's do.
 */

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_seqlock.h>
#include <rte_tm_driver.h>

#include "rte_pmd_vbr.h"
#include "vbr.h"
#include "vbr_utils.h"

/** Node levels: the port root, then the queues. */
#define VBR_TM_LEVEL_ROOT 0
#define VBR_TM_LEVEL_LEAF 1
#define VBR_TM_STATS (RTE_TM_STATS_N_PKTS | RTE_TM_STATS_N_BYTES)

/** A queue's limit as the device takes it. */
struct vbr_tm_rate {
	uint32_t rate_kbps;		/**< kbit/s; 0: no limit */
	uint32_t max_burst_sz;		/**< bytes; 0: device default */
	uint16_t typical_pkt_sz;	/**< bytes; 0: device default */
	/** an rte_tm peak size: dropped on a device without burst pacing */
	bool soft_burst;
};

/** A private shaper profile. */
struct vbr_tm_profile {
	TAILQ_ENTRY(vbr_tm_profile) next; /**< in vbr_tm.profiles */
	uint32_t id;			/**< profile id */
	uint32_t users;			/**< leaves that use it */
	struct vbr_tm_rate rate;	/**< what it sets on a queue */
};

/** One Tx queue: its wanted limit and its leaf. */
struct vbr_tm_queue {
	rte_seqlock_t lock;		/**< guards want */
	struct vbr_tm_rate want;	/**< the limit the queue should have */
	unsigned int leaf:1;		/**< the leaf node of the queue exists */
	struct vbr_tm_profile *profile;	/**< leaf's shaper, NULL: none */
	uint64_t stats_mask;		/**< leaf's RTE_TM_STATS_* */
	uint64_t pkts_base;		/**< opackets at the last stats clear,
					   less what port resets took */
	uint64_t bytes_base;		/**< obytes at the last stats clear */
};

/** A port's rate limits and rte_tm hierarchy. */
struct vbr_tm {
	TAILQ_HEAD(, vbr_tm_profile) profiles; /**< shaper profiles */
	uint32_t root_id;		/**< root node id */
	unsigned int root:1;		/**< the root exists */
	unsigned int committed:1;	/**< hierarchy committed */
	uint32_t nb_leaves;		/**< leaves */
	uint16_t nb_queues;		/**< entries of q: max_tx_queues */
	/**
	 * A QP in RTS refused a burst that it took without: the device has
	 * no burst pacing, rte_tm peak sizes are dropped (atomic: the
	 * datapath's recovery may find out).
	 */
	bool no_burst;
	struct vbr_tm_queue q[];	/**< by Tx queue id */
};

/** max_tx_queues, as vbr_dev_infos_get() reports it. */
static uint16_t
vbr_tm_max_queues(const struct vbr_priv *priv)
{
	return RTE_MIN((uint32_t)priv->attr.orig_attr.max_qp,
		       (uint32_t)RTE_MAX_QUEUES_PER_PORT);
}

/** The device paces RAW_PACKET QPs. */
static bool
vbr_tm_paces(const struct vbr_priv *priv)
{
	const struct ibv_packet_pacing_caps *c =
		&priv->attr.packet_pacing_caps;

	return (c->supported_qpts & (1u << IBV_QPT_RAW_PACKET)) != 0 &&
	       c->qp_rate_limit_max != 0;
}

/** The port's state, made on first use; NULL when out of memory. */
static struct vbr_tm *
vbr_tm_get(struct vbr_priv *priv)
{
	struct vbr_tm *tm = __atomic_load_n(&priv->tm, __ATOMIC_ACQUIRE);
	uint16_t n = vbr_tm_max_queues(priv), i;

	if (tm != NULL)
		return tm;
	tm = rte_zmalloc("vbr_tm", sizeof(*tm) + n * sizeof(tm->q[0]), 0);
	if (tm == NULL)
		return NULL;
	TAILQ_INIT(&tm->profiles);
	tm->nb_queues = n;
	for (i = 0; i < n; i++)
		rte_seqlock_init(&tm->q[i].lock);
	__atomic_store_n(&priv->tm, tm, __ATOMIC_RELEASE);
	return tm;
}

void
vbr_tm_release(struct vbr_priv *priv)
{
	struct vbr_tm *tm = priv->tm;
	struct vbr_tm_profile *p;

	if (tm == NULL)
		return;
	while ((p = TAILQ_FIRST(&tm->profiles)) != NULL) {
		TAILQ_REMOVE(&tm->profiles, p, next);
		rte_free(p);
	}
	priv->tm = NULL;
	rte_free(tm);
}

/* The wanted limit, and in *snp the sequence it was read at. */
static struct vbr_tm_rate
vbr_tm_want_sn(struct vbr_tm_queue *q, uint32_t *snp)
{
	struct vbr_tm_rate r;
	uint32_t sn;

	do {
		sn = rte_seqlock_read_begin(&q->lock);
		r = q->want;
	} while (rte_seqlock_read_retry(&q->lock, sn));
	*snp = sn;
	return r;
}

static struct vbr_tm_rate
vbr_tm_want(struct vbr_tm_queue *q)
{
	uint32_t sn;

	return vbr_tm_want_sn(q, &sn);
}

static void
vbr_tm_set_want(struct vbr_tm_queue *q, const struct vbr_tm_rate *r)
{
	rte_seqlock_write_lock(&q->lock);
	q->want = *r;
	rte_seqlock_write_unlock(&q->lock);
}

/* Why the device may have refused a with err, for the log. */
static const char *
vbr_tm_hint(int err, const struct ibv_qp_rate_limit_attr *a)
{
	if (err == ENOSPC)
		return ": the device's rate table is full (a ConnectX keeps one "
		       "entry per distinct rate, burst and packet size, 127 on "
		       "a ConnectX-5, shared by equal limits): give this queue "
		       "a limit another queue has, or remove one";
	if (err == EINVAL && (a->max_burst_sz != 0 || a->typical_pkt_sz != 0))
		return " (a device without burst pacing refuses a burst or "
		       "packet size: give 0 for both)";
	return "";
}

/*
 * Put r on the queue's QP: 0 or -errno (logged). An rte_tm peak size goes
 * on the QP until the device is found to have no burst pacing: a QP in
 * RTS that refuses it with EINVAL and takes the rate alone.
 */
static int
vbr_tm_qp_set(struct vbr_txq *txq, const struct vbr_tm_rate *r)
{
	struct vbr_tm *tm = __atomic_load_n(&txq->priv->tm, __ATOMIC_ACQUIRE);
	struct ibv_qp_rate_limit_attr attr = {
		.rate_limit = r->rate_kbps,
		.max_burst_sz = r->max_burst_sz,
		.typical_pkt_sz = r->typical_pkt_sz,
	};
	bool sized = r->max_burst_sz != 0 || r->typical_pkt_sz != 0;
	bool drop = r->soft_burst && sized && tm != NULL &&
		    __atomic_load_n(&tm->no_burst, __ATOMIC_RELAXED);
	int ret;

	if (drop) {
		attr.max_burst_sz = 0;
		attr.typical_pkt_sz = 0;
	}
	ret = txq->priv->glue->modify_qp_rate_limit(txq->qp, &attr);
	if (ret == EINVAL && r->soft_burst && sized && !drop && tm != NULL) {
		attr.max_burst_sz = 0;
		attr.typical_pkt_sz = 0;
		ret = txq->priv->glue->modify_qp_rate_limit(txq->qp, &attr);
		if (ret == 0) {
			__atomic_store_n(&tm->no_burst, true,
					 __ATOMIC_RELAXED);
			VBR_LOG(WARNING, "port %u txq %u: the device refused "
				"peak size %" PRIu32 " (max_burst_sz) and took "
				"%" PRIu32 " kbit/s alone: it has no burst "
				"pacing; the port's rte_tm peak sizes are not "
				"applied, the device's own bucket bounds "
				"bursts", txq->port_id, txq->queue_id,
				r->max_burst_sz, r->rate_kbps);
			return 0;
		}
	}
	if (ret != 0)
		VBR_LOG(ERR, "port %u txq %u: modify_qp_rate_limit(%" PRIu32
			" kbit/s, burst %" PRIu32 ", packet %u): %s%s",
			txq->port_id, txq->queue_id, r->rate_kbps,
			attr.max_burst_sz, attr.typical_pkt_sz, strerror(ret),
			vbr_tm_hint(ret, &attr));
	return -ret;
}

/**
 * The queue's QP has just reached RTS (start, recovery): give it the
 * wanted limit. On a device that paces, "no limit" is set too: a limit
 * removed while the queue was stopped must not stay on the QP. Return 0 or
 * -errno.
 */
void (*vbr_tm_ready_hook)(struct vbr_txq *txq);

int
vbr_tm_txq_ready(struct vbr_txq *txq)
{
	struct vbr_priv *priv = txq->priv;
	struct vbr_tm *tm = __atomic_load_n(&priv->tm, __ATOMIC_ACQUIRE);
	struct vbr_tm_queue *q;
	struct vbr_tm_rate r;
	uint32_t sn;
	int ret;

	if (tm == NULL || txq->queue_id >= tm->nb_queues ||
	    !vbr_tm_paces(priv))
		return 0;
	q = &tm->q[txq->queue_id];
	/*
	 * A recovery runs on the datapath while the control path may set a
	 * new limit: one set between the read and the QP call below reaches
	 * the QP first (it is in RTS already), then this call would put the
	 * older limit over it. Read again after the call: a newer wanted
	 * limit goes on the QP too, so the last one wins.
	 */
	do {
		r = vbr_tm_want_sn(q, &sn);
		if (unlikely(vbr_tm_ready_hook != NULL))
			vbr_tm_ready_hook(txq);
		ret = vbr_tm_qp_set(txq, &r);
	} while (rte_seqlock_read_retry(&q->lock, sn));
	return ret;
}

/*
 * Whether the queue's QP is out of RTS (ibv_query_qp()'s qp_state): a send
 * queue in error, or in the datapath's recovery (RESET, INIT, RTR). A QP
 * whose state cannot be read counts as in RTS: its refusal stands.
 */
static bool
vbr_tm_qp_out_of_rts(struct vbr_txq *txq)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	int ret;

	memset(&attr, 0, sizeof(attr));
	ret = txq->priv->glue->query_qp(txq->qp, &attr, IBV_QP_STATE, &init);
	if (ret != 0) {
		VBR_LOG(ERR, "port %u txq %u: query_qp: %s", txq->port_id,
			txq->queue_id, strerror(ret));
		return false;
	}
	return attr.qp_state != IBV_QPS_RTS;
}

/*
 * Make r the wanted limit of queue qid, on its QP at once when started.
 * The callers checked r against the device's caps. The device takes a
 * limit in RTS only: an EINVAL from a QP out of RTS (a send queue in
 * error, before the datapath's recovery brings it back) keeps the limit
 * wanted, and the recovery puts it on the QP (vbr_tm_txq_ready()); any
 * other refusal, an EINVAL from a QP in RTS included, is the caller's
 * error and the wanted limit stays what it was. Return 0 or -errno.
 */
static int
vbr_tm_queue_set(struct vbr_priv *priv, struct vbr_tm *tm, uint16_t qid,
		 const struct vbr_tm_rate *r)
{
	struct vbr_tm_queue *q = &tm->q[qid];
	struct rte_eth_dev *dev = priv->dev;
	struct vbr_tm_rate old = vbr_tm_want(q);
	struct vbr_txq *txq = NULL;
	int ret;

	vbr_tm_set_want(q, r);
	if (qid < dev->data->nb_tx_queues)
		txq = dev->data->tx_queues[qid];
	/*
	 * All queues start and stop with the port: in RTS while started. A
	 * device that does not pace has no limit to remove.
	 */
	if (txq == NULL || !priv->started || !vbr_tm_paces(priv))
		return 0;
	ret = vbr_tm_qp_set(txq, r);
	if (ret == -EINVAL && vbr_tm_qp_out_of_rts(txq)) {
		VBR_LOG(NOTICE, "port %u txq %u: the limit goes on the QP when "
			"the queue is back in RTS", txq->port_id, qid);
		return 0;
	}
	if (ret != 0)
		vbr_tm_set_want(q, &old);
	return ret;
}

/*
 * Check a limit against the device: NULL when it can take it, else the
 * reason (with *err the errno).
 */
static const char *
vbr_tm_check_rate(struct vbr_priv *priv, uint64_t kbps, int *err)
{
	const struct ibv_packet_pacing_caps *c =
		&priv->attr.packet_pacing_caps;

	*err = EINVAL;
	if (kbps == 0)
		return NULL;
	if (!vbr_tm_paces(priv)) {
		*err = ENOTSUP;
		return "the device does not pace RAW_PACKET QPs "
		       "(packet_pacing_caps)";
	}
	if (kbps < c->qp_rate_limit_min || kbps > c->qp_rate_limit_max)
		return "rate outside the device's range (packet_pacing_caps)";
	return NULL;
}

/* Log a refused rate with the device's range. */
static void
vbr_tm_log_refused(struct vbr_priv *priv, uint64_t kbps, const char *why)
{
	VBR_LOG(ERR, "port %u: %" PRIu64 " kbit/s: %s: [%" PRIu32 ", %"
		PRIu32 "] kbit/s", priv->dev->data->port_id, kbps, why,
		priv->attr.packet_pacing_caps.qp_rate_limit_min,
		priv->attr.packet_pacing_caps.qp_rate_limit_max);
}

/*
 * The port's private data into *priv, when port_id is a vbr port of this
 * (primary) process: 0; -ENODEV: not a vbr port; -ENOTSUP: a vbr port
 * seen from a secondary process, whose queues and device the primary
 * holds (their state is in the primary's heap).
 */
static int
vbr_tm_port(uint16_t port_id, struct vbr_priv **priv)
{
	struct rte_eth_dev *dev;

	if (!rte_eth_dev_is_valid_port(port_id))
		return -ENODEV;
	dev = &rte_eth_devices[port_id];
	if (dev->dev_ops == &vbr_sec_dev_ops)
		return -ENOTSUP;
	if (dev->dev_ops != &vbr_dev_ops)
		return -ENODEV;
	*priv = dev->data->dev_private;
	return 0;
}

/* Both entry points: a full limit on queue qid; 0 or -errno (logged). */
static int
vbr_tm_limit(struct vbr_priv *priv, uint16_t qid, uint64_t kbps,
	     uint32_t burst, uint16_t pkt_sz)
{
	uint16_t port = priv->dev->data->port_id;
	struct vbr_tm_rate r;
	struct vbr_tm *tm;
	const char *why;
	int err;

	if (qid >= vbr_tm_max_queues(priv)) {
		VBR_LOG(ERR, "port %u: txq %u: the port has at most %u Tx "
			"queues", port, qid, vbr_tm_max_queues(priv));
		return -EINVAL;
	}
	why = vbr_tm_check_rate(priv, kbps, &err);
	if (why != NULL) {
		vbr_tm_log_refused(priv, kbps, why);
		return -err;
	}
	if (kbps == 0 && (burst != 0 || pkt_sz != 0)) {
		VBR_LOG(ERR, "port %u txq %u: rate 0 removes the limit: give "
			"max_burst_sz and typical_pkt_sz 0", port, qid);
		return -EINVAL;
	}
	if (pkt_sz > vbr_max_frame(priv)) {
		VBR_LOG(ERR, "port %u txq %u: typical_pkt_sz %u above the "
			"largest frame (%" PRIu32 " bytes)", port, qid, pkt_sz,
			vbr_max_frame(priv));
		return -EINVAL;
	}
	tm = vbr_tm_get(priv);
	if (tm == NULL)
		return -ENOMEM;
	r = (struct vbr_tm_rate){ .rate_kbps = (uint32_t)kbps,
				  .max_burst_sz = burst,
				  .typical_pkt_sz = pkt_sz };
	return vbr_tm_queue_set(priv, tm, qid, &r);
}

/** ethdev set_queue_rate_limit: Mbit/s, device defaults for the rest. */
int
vbr_set_queue_rate_limit(struct rte_eth_dev *dev, uint16_t queue_idx,
			 uint32_t tx_rate)
{
	return vbr_tm_limit(dev->data->dev_private, queue_idx,
			    (uint64_t)tx_rate * 1000, 0, 0);
}

int
rte_pmd_vbr_set_queue_rate_limit(uint16_t port_id, uint16_t queue_id,
				 uint32_t rate_kbps, uint32_t max_burst_sz,
				 uint16_t typical_pkt_sz)
{
	struct vbr_priv *priv = NULL;
	int ret = vbr_tm_port(port_id, &priv);

	if (ret != 0)
		return ret;
	return vbr_tm_limit(priv, queue_id, rate_kbps, max_burst_sz,
			    typical_pkt_sz);
}

int
rte_pmd_vbr_get_queue_rate_limit(uint16_t port_id, uint16_t queue_id,
				 uint32_t *rate_kbps, uint32_t *max_burst_sz,
				 uint16_t *typical_pkt_sz)
{
	struct vbr_tm_rate r = { 0 };
	struct vbr_priv *priv = NULL;
	struct vbr_tm *tm;
	int ret = vbr_tm_port(port_id, &priv);

	if (ret != 0)
		return ret;
	if (queue_id >= vbr_tm_max_queues(priv) || rate_kbps == NULL ||
	    max_burst_sz == NULL || typical_pkt_sz == NULL)
		return -EINVAL;
	tm = __atomic_load_n(&priv->tm, __ATOMIC_ACQUIRE);
	if (tm != NULL)
		r = vbr_tm_want(&tm->q[queue_id]);
	*rate_kbps = r.rate_kbps;
	*max_burst_sz = r.max_burst_sz;
	*typical_pkt_sz = r.typical_pkt_sz;
	return 0;
}

int
rte_pmd_vbr_pace_window(uint16_t port_id, uint64_t *due_ns,
			uint64_t *latest_ns)
{
	struct vbr_priv *priv = NULL;
	int ret = vbr_tm_port(port_id, &priv);

	if (ret != 0)
		return ret;
	if (due_ns == NULL || latest_ns == NULL)
		return -EINVAL;
	*due_ns = UINT64_MAX;
	*latest_ns = UINT64_MAX;
	if (priv->ctx == NULL || priv->glue->pace_window == NULL)
		return 0;
	ret = priv->glue->pace_window(priv->ctx, due_ns, latest_ns);
	return -ret;
}

/* rte_tm. */

static int
vbr_tm_err(struct rte_tm_error *error, int code, enum rte_tm_error_type type,
	   const char *msg)
{
	return -rte_tm_error_set(error, code, type, NULL, msg);
}

/* The message of a device's refusal (code) of a leaf's rate. */
static const char *
vbr_tm_refused_msg(int code)
{
	if (code == ENOSPC)
		return "vbr: the NIC's rate table is full (one entry per "
		       "distinct rate, burst and packet size, shared by "
		       "equal limits): reuse another leaf's profile or "
		       "remove a limit (log: the queue and rate)";
	return "vbr: the device refused the profile's rate on the queue "
	       "(log: why)";
}

/* The port's hierarchy, or -ENOMEM through error. */
#define VBR_TM_GET(priv, tm, error) do { \
	(tm) = vbr_tm_get(priv); \
	if ((tm) == NULL) \
		return vbr_tm_err(error, ENOMEM, \
				  RTE_TM_ERROR_TYPE_UNSPECIFIED, \
				  "vbr: out of memory"); \
} while (0)

static bool
vbr_tm_is_leaf(const struct vbr_tm *tm, uint32_t node_id)
{
	return node_id < tm->nb_queues && tm->q[node_id].leaf;
}

static bool
vbr_tm_is_root(const struct vbr_tm *tm, uint32_t node_id)
{
	return tm->root && tm->root_id == node_id;
}

static struct vbr_tm_profile *
vbr_tm_profile_find(struct vbr_tm *tm, uint32_t id)
{
	struct vbr_tm_profile *p;

	TAILQ_FOREACH(p, &tm->profiles, next)
		if (p->id == id)
			return p;
	return NULL;
}

static int
vbr_tm_node_type_get(struct rte_eth_dev *dev, uint32_t node_id, int *is_leaf,
		     struct rte_tm_error *error)
{
	struct vbr_tm *tm;

	VBR_TM_GET(dev->data->dev_private, tm, error);
	if (is_leaf == NULL)
		return vbr_tm_err(error, EINVAL, RTE_TM_ERROR_TYPE_UNSPECIFIED,
				  "vbr: is_leaf is NULL");
	if (vbr_tm_is_root(tm, node_id))
		*is_leaf = 0;
	else if (vbr_tm_is_leaf(tm, node_id))
		*is_leaf = 1;
	else
		return vbr_tm_err(error, EINVAL, RTE_TM_ERROR_TYPE_NODE_ID,
				  "vbr: no node with this id");
	return 0;
}

/*
 * The root's scheduling, in any of the three caps structs (their fields
 * have the same names): n queues served in turn, one priority, weight 1.
 */
#define VBR_TM_SCHED_CAPS(c, n) do { \
	(c).sched_n_children_max = (n); \
	(c).sched_sp_n_priorities_max = 1; \
	(c).sched_wfq_n_children_per_group_max = (n); \
	(c).sched_wfq_n_groups_max = 1; \
	(c).sched_wfq_weight_max = 1; \
} while (0)

/* The shaper rates, bytes/s, from packet_pacing_caps (kbit/s). */
static void
vbr_tm_rate_caps(const struct vbr_priv *priv, uint64_t *min, uint64_t *max)
{
	const struct ibv_packet_pacing_caps *c =
		&priv->attr.packet_pacing_caps;

	*min = 0;
	*max = 0;
	if (!vbr_tm_paces(priv))
		return;
	/* 1 kbit/s = 125 bytes/s; every rate in between rounds down. */
	*min = RTE_MAX((uint64_t)c->qp_rate_limit_min, (uint64_t)1) * 125;
	*max = (uint64_t)c->qp_rate_limit_max * 125 + 124;
}

static int
vbr_tm_capabilities_get(struct rte_eth_dev *dev,
			struct rte_tm_capabilities *cap,
			struct rte_tm_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	uint16_t n = vbr_tm_max_queues(priv);
	bool paces = vbr_tm_paces(priv);

	if (cap == NULL)
		return vbr_tm_err(error, EINVAL, RTE_TM_ERROR_TYPE_CAPABILITIES,
				  "vbr: cap is NULL");
	memset(cap, 0, sizeof(*cap));
	cap->n_nodes_max = n + 1u;
	cap->n_levels_max = 2;
	cap->non_leaf_nodes_identical = 1;
	cap->leaf_nodes_identical = 1;
	cap->shaper_n_max = paces ? n : 0;
	cap->shaper_private_n_max = paces ? n : 0;
	vbr_tm_rate_caps(priv, &cap->shaper_private_rate_min,
			 &cap->shaper_private_rate_max);
	cap->shaper_private_byte_mode_supported = paces;
	VBR_TM_SCHED_CAPS(*cap, n);
	cap->dynamic_update_mask = RTE_TM_UPDATE_NODE_ADD_DELETE;
	cap->stats_mask = VBR_TM_STATS;
	return 0;
}

static int
vbr_tm_level_capabilities_get(struct rte_eth_dev *dev, uint32_t level_id,
			      struct rte_tm_level_capabilities *cap,
			      struct rte_tm_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	uint16_t n = vbr_tm_max_queues(priv);
	bool paces = vbr_tm_paces(priv);

	if (cap == NULL)
		return vbr_tm_err(error, EINVAL, RTE_TM_ERROR_TYPE_CAPABILITIES,
				  "vbr: cap is NULL");
	memset(cap, 0, sizeof(*cap));
	cap->non_leaf_nodes_identical = 1;
	cap->leaf_nodes_identical = 1;
	if (level_id == VBR_TM_LEVEL_ROOT) {
		cap->n_nodes_max = 1;
		cap->n_nodes_nonleaf_max = 1;
		VBR_TM_SCHED_CAPS(cap->nonleaf, n);
	} else if (level_id == VBR_TM_LEVEL_LEAF) {
		cap->n_nodes_max = n;
		cap->n_nodes_leaf_max = n;
		cap->leaf.shaper_private_supported = paces;
		vbr_tm_rate_caps(priv, &cap->leaf.shaper_private_rate_min,
				 &cap->leaf.shaper_private_rate_max);
		cap->leaf.shaper_private_byte_mode_supported = paces;
		cap->leaf.stats_mask = VBR_TM_STATS;
	} else {
		return vbr_tm_err(error, EINVAL, RTE_TM_ERROR_TYPE_LEVEL_ID,
				  "vbr: levels are 0 (port root) and 1 (Tx "
				  "queues)");
	}
	return 0;
}

static int
vbr_tm_node_capabilities_get(struct rte_eth_dev *dev, uint32_t node_id,
			     struct rte_tm_node_capabilities *cap,
			     struct rte_tm_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	uint16_t n = vbr_tm_max_queues(priv);
	struct vbr_tm *tm;

	VBR_TM_GET(priv, tm, error);
	if (cap == NULL)
		return vbr_tm_err(error, EINVAL, RTE_TM_ERROR_TYPE_CAPABILITIES,
				  "vbr: cap is NULL");
	memset(cap, 0, sizeof(*cap));
	if (vbr_tm_is_root(tm, node_id)) {
		VBR_TM_SCHED_CAPS(cap->nonleaf, n);
	} else if (vbr_tm_is_leaf(tm, node_id)) {
		cap->shaper_private_supported = vbr_tm_paces(priv);
		vbr_tm_rate_caps(priv, &cap->shaper_private_rate_min,
				 &cap->shaper_private_rate_max);
		cap->shaper_private_byte_mode_supported = vbr_tm_paces(priv);
		cap->stats_mask = VBR_TM_STATS;
	} else {
		return vbr_tm_err(error, EINVAL, RTE_TM_ERROR_TYPE_NODE_ID,
				  "vbr: no node with this id");
	}
	return 0;
}

static int
vbr_tm_wred_profile_add(struct rte_eth_dev *dev, uint32_t wred_profile_id,
			VBR_TM_CONST struct rte_tm_wred_params *profile,
			struct rte_tm_error *error)
{
	RTE_SET_USED(dev);
	RTE_SET_USED(wred_profile_id);
	RTE_SET_USED(profile);
	return vbr_tm_err(error, ENOTSUP, RTE_TM_ERROR_TYPE_WRED_PROFILE_ID,
			  "vbr: no WRED: a paced queue drops nothing, a frame "
			  "waits in the send queue until it conforms");
}

static int
vbr_tm_shared_shaper_add_update(struct rte_eth_dev *dev,
				uint32_t shared_shaper_id,
				uint32_t shaper_profile_id,
				struct rte_tm_error *error)
{
	RTE_SET_USED(dev);
	RTE_SET_USED(shared_shaper_id);
	RTE_SET_USED(shaper_profile_id);
	return vbr_tm_err(error, ENOTSUP, RTE_TM_ERROR_TYPE_SHARED_SHAPER_ID,
			  "vbr: no shared shapers: QP pacing shapes each Tx "
			  "queue on its own");
}

static int
vbr_tm_shaper_profile_add(struct rte_eth_dev *dev, uint32_t id,
			  VBR_TM_CONST struct rte_tm_shaper_params *sp,
			  struct rte_tm_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct vbr_tm_profile *p;
	struct vbr_tm *tm;
	uint64_t kbps;
	int err;

	VBR_TM_GET(priv, tm, error);
	if (id == RTE_TM_SHAPER_PROFILE_ID_NONE)
		return vbr_tm_err(error, EINVAL,
				  RTE_TM_ERROR_TYPE_SHAPER_PROFILE_ID,
				  "vbr: shaper profile id UINT32_MAX means "
				  "none");
	if (vbr_tm_profile_find(tm, id) != NULL)
		return vbr_tm_err(error, EEXIST,
				  RTE_TM_ERROR_TYPE_SHAPER_PROFILE_ID,
				  "vbr: shaper profile id in use");
	if (sp == NULL)
		return vbr_tm_err(error, EINVAL,
				  RTE_TM_ERROR_TYPE_SHAPER_PROFILE,
				  "vbr: shaper profile is NULL");
	if (sp->committed.rate != 0)
		return vbr_tm_err(error, EINVAL,
				  RTE_TM_ERROR_TYPE_SHAPER_PROFILE_COMMITTED_RATE,
				  "vbr: no committed rate: QP pacing is one "
				  "rate, give it as the peak rate");
	if (sp->committed.size != 0)
		return vbr_tm_err(error, EINVAL,
				  RTE_TM_ERROR_TYPE_SHAPER_PROFILE_COMMITTED_SIZE,
				  "vbr: no committed size: QP pacing has one "
				  "bucket, give it as the peak size");
	if (sp->packet_mode != 0)
		return vbr_tm_err(error, EINVAL,
				  RTE_TM_ERROR_TYPE_SHAPER_PROFILE_PACKET_MODE,
				  "vbr: no packet mode: QP pacing counts "
				  "bytes");
	if (sp->pkt_length_adjust != 0)
		return vbr_tm_err(error, EINVAL,
				  RTE_TM_ERROR_TYPE_SHAPER_PROFILE_PKT_ADJUST_LEN,
				  "vbr: packet length adjust must be 0: the "
				  "device counts each frame's bytes from the "
				  "L2 header to the end of the payload");
	if (!vbr_tm_paces(priv))
		return vbr_tm_err(error, ENOTSUP,
				  RTE_TM_ERROR_TYPE_SHAPER_PROFILE_PEAK_RATE,
				  "vbr: the device does not pace RAW_PACKET QPs "
				  "(packet_pacing_caps)");
	/* bytes/s to kbit/s, rounded down: never faster than asked. */
	kbps = sp->peak.rate / 125;
	if (kbps == 0 || vbr_tm_check_rate(priv, kbps, &err) != NULL) {
		vbr_tm_log_refused(priv, kbps, "shaper profile peak rate outside "
				   "the device's range (packet_pacing_caps)");
		return vbr_tm_err(error, EINVAL,
				  RTE_TM_ERROR_TYPE_SHAPER_PROFILE_PEAK_RATE,
				  "vbr: peak rate outside shaper_private_rate_min"
				  "..max (the device's packet_pacing_caps)");
	}
	if (sp->peak.size > UINT32_MAX)
		return vbr_tm_err(error, EINVAL,
				  RTE_TM_ERROR_TYPE_SHAPER_PROFILE_PEAK_SIZE,
				  "vbr: peak size above 4 GiB (max_burst_sz "
				  "is 32 bits); 0: the device's default");
	p = rte_zmalloc("vbr_tm_profile", sizeof(*p), 0);
	if (p == NULL)
		return vbr_tm_err(error, ENOMEM, RTE_TM_ERROR_TYPE_UNSPECIFIED,
				  "vbr: out of memory");
	p->id = id;
	p->rate.rate_kbps = (uint32_t)kbps;
	p->rate.max_burst_sz = (uint32_t)sp->peak.size;
	p->rate.soft_burst = true;
	TAILQ_INSERT_TAIL(&tm->profiles, p, next);
	return 0;
}

static int
vbr_tm_shaper_profile_delete(struct rte_eth_dev *dev, uint32_t id,
			     struct rte_tm_error *error)
{
	struct vbr_tm_profile *p;
	struct vbr_tm *tm;

	VBR_TM_GET(dev->data->dev_private, tm, error);
	p = vbr_tm_profile_find(tm, id);
	if (p == NULL)
		return vbr_tm_err(error, EINVAL,
				  RTE_TM_ERROR_TYPE_SHAPER_PROFILE_ID,
				  "vbr: no shaper profile with this id");
	if (p->users != 0)
		return vbr_tm_err(error, EBUSY,
				  RTE_TM_ERROR_TYPE_SHAPER_PROFILE_ID,
				  "vbr: shaper profile used by a leaf");
	TAILQ_REMOVE(&tm->profiles, p, next);
	rte_free(p);
	return 0;
}

/* The limit a leaf puts on its queue. */
static struct vbr_tm_rate
vbr_tm_leaf_rate(const struct vbr_tm_queue *q)
{
	static const struct vbr_tm_rate none;

	return q->profile != NULL ? q->profile->rate : none;
}

/* Checks common to both node kinds. */
static int
vbr_tm_node_check(uint32_t priority, uint32_t weight,
		  const struct rte_tm_node_params *params,
		  struct rte_tm_error *error)
{
	if (params == NULL)
		return vbr_tm_err(error, EINVAL, RTE_TM_ERROR_TYPE_NODE_PARAMS,
				  "vbr: node params are NULL");
	if (priority != 0)
		return vbr_tm_err(error, EINVAL, RTE_TM_ERROR_TYPE_NODE_PRIORITY,
				  "vbr: priority must be 0: the device has no "
				  "strict priority between Tx queues");
	if (weight != 1)
		return vbr_tm_err(error, EINVAL, RTE_TM_ERROR_TYPE_NODE_WEIGHT,
				  "vbr: weight must be 1: the device serves "
				  "its Tx queues in turn, with equal weights");
	if (params->n_shared_shapers != 0)
		return vbr_tm_err(error, EINVAL,
				  RTE_TM_ERROR_TYPE_NODE_PARAMS_N_SHARED_SHAPERS,
				  "vbr: no shared shapers: QP pacing shapes "
				  "each Tx queue on its own");
	return 0;
}

static int
vbr_tm_root_add(struct vbr_tm *tm, uint16_t nb_txq, uint32_t node_id,
		uint32_t level_id, const struct rte_tm_node_params *params,
		struct rte_tm_error *error)
{
	if (tm->root)
		return vbr_tm_err(error, EEXIST,
				  RTE_TM_ERROR_TYPE_NODE_PARENT_NODE_ID,
				  "vbr: the port has a root node already");
	if (node_id < nb_txq)
		return vbr_tm_err(error, EINVAL, RTE_TM_ERROR_TYPE_NODE_ID,
				  "vbr: ids below the number of Tx queues are "
				  "the queues' leaves: give the root another");
	if (level_id != VBR_TM_LEVEL_ROOT &&
	    level_id != RTE_TM_NODE_LEVEL_ID_ANY)
		return vbr_tm_err(error, EINVAL, RTE_TM_ERROR_TYPE_LEVEL_ID,
				  "vbr: the root is at level 0");
	if (params->shaper_profile_id != RTE_TM_SHAPER_PROFILE_ID_NONE)
		return vbr_tm_err(error, EINVAL,
				  RTE_TM_ERROR_TYPE_NODE_PARAMS_SHAPER_PROFILE_ID,
				  "vbr: no shaper on a non-leaf node: the "
				  "device paces Tx queues, not the port");
	if (params->nonleaf.n_sp_priorities != 1)
		return vbr_tm_err(error, EINVAL,
				  RTE_TM_ERROR_TYPE_NODE_PARAMS_N_SP_PRIORITIES,
				  "vbr: n_sp_priorities must be 1");
	if (params->nonleaf.wfq_weight_mode != NULL &&
	    params->nonleaf.wfq_weight_mode[0] != 0)
		return vbr_tm_err(error, EINVAL,
				  RTE_TM_ERROR_TYPE_NODE_PARAMS_WFQ_WEIGHT_MODE,
				  "vbr: no packet-mode WFQ");
	if (params->stats_mask != 0)
		return vbr_tm_err(error, EINVAL,
				  RTE_TM_ERROR_TYPE_NODE_PARAMS_STATS,
				  "vbr: the root node has no stats: read the "
				  "leaves' (or the port's)");
	tm->root = 1;
	tm->root_id = node_id;
	return 0;
}

static int
vbr_tm_leaf_add(struct vbr_priv *priv, struct vbr_tm *tm, uint32_t node_id,
		uint32_t level_id, const struct rte_tm_node_params *params,
		struct rte_tm_error *error)
{
	uint16_t nb_txq = priv->dev->data->nb_tx_queues;
	struct vbr_tm_profile *p = NULL;
	struct vbr_tm_queue *q;
	struct vbr_txq *txq;
	struct vbr_tm_rate r;
	int ret;

	if (node_id >= nb_txq || node_id >= tm->nb_queues)
		return vbr_tm_err(error, EINVAL, RTE_TM_ERROR_TYPE_NODE_ID,
				  "vbr: a node under the root is the leaf of a "
				  "Tx queue: its id is the queue's, below the "
				  "port's number of Tx queues (one non-leaf "
				  "level: the root)");
	if (tm->q[node_id].leaf)
		return vbr_tm_err(error, EEXIST, RTE_TM_ERROR_TYPE_NODE_ID,
				  "vbr: the queue has a leaf already");
	if (level_id != VBR_TM_LEVEL_LEAF &&
	    level_id != RTE_TM_NODE_LEVEL_ID_ANY)
		return vbr_tm_err(error, EINVAL, RTE_TM_ERROR_TYPE_LEVEL_ID,
				  "vbr: leaves are at level 1");
	if (params->shaper_profile_id != RTE_TM_SHAPER_PROFILE_ID_NONE) {
		p = vbr_tm_profile_find(tm, params->shaper_profile_id);
		if (p == NULL)
			return vbr_tm_err(error, EINVAL,
				RTE_TM_ERROR_TYPE_NODE_PARAMS_SHAPER_PROFILE_ID,
				"vbr: no shaper profile with this id");
	}
	if (params->leaf.cman != RTE_TM_CMAN_TAIL_DROP)
		return vbr_tm_err(error, EINVAL,
				  RTE_TM_ERROR_TYPE_NODE_PARAMS_CMAN,
				  "vbr: congestion management must be tail "
				  "drop (0): the queue takes no more when full");
	if (params->leaf.wred.wred_profile_id != RTE_TM_WRED_PROFILE_ID_NONE)
		return vbr_tm_err(error, EINVAL,
				  RTE_TM_ERROR_TYPE_NODE_PARAMS_WRED_PROFILE_ID,
				  "vbr: no WRED: give wred profile id "
				  "0xffffffff (none)");
	if (params->leaf.wred.n_shared_wred_contexts != 0)
		return vbr_tm_err(error, EINVAL,
			RTE_TM_ERROR_TYPE_NODE_PARAMS_N_SHARED_WRED_CONTEXTS,
			"vbr: no shared WRED contexts");
	if ((params->stats_mask & ~(uint64_t)VBR_TM_STATS) != 0)
		return vbr_tm_err(error, EINVAL,
				  RTE_TM_ERROR_TYPE_NODE_PARAMS_STATS,
				  "vbr: a leaf counts packets and bytes sent "
				  "only (stats mask 0x3)");
	q = &tm->q[node_id];
	q->profile = p;
	if (tm->committed) {
		r = vbr_tm_leaf_rate(q);
		ret = vbr_tm_queue_set(priv, tm, node_id, &r);
		if (ret != 0) {
			q->profile = NULL;
			return vbr_tm_err(error, -ret,
				RTE_TM_ERROR_TYPE_NODE_PARAMS_SHAPER_PROFILE_ID,
				vbr_tm_refused_msg(-ret));
		}
	}
	if (p != NULL)
		p->users++;
	q->leaf = 1;
	q->stats_mask = params->stats_mask;
	txq = priv->dev->data->tx_queues[node_id];
	q->pkts_base = txq != NULL ? txq->opackets : 0;
	q->bytes_base = txq != NULL ? txq->obytes : 0;
	tm->nb_leaves++;
	return 0;
}

static int
vbr_tm_node_add(struct rte_eth_dev *dev, uint32_t node_id,
		uint32_t parent_node_id, uint32_t priority, uint32_t weight,
		uint32_t level_id,
		VBR_TM_CONST struct rte_tm_node_params *params,
		struct rte_tm_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct vbr_tm *tm;
	int ret;

	VBR_TM_GET(priv, tm, error);
	ret = vbr_tm_node_check(priority, weight, params, error);
	if (ret != 0)
		return ret;
	if (node_id == RTE_TM_NODE_ID_NULL)
		return vbr_tm_err(error, EINVAL, RTE_TM_ERROR_TYPE_NODE_ID,
				  "vbr: node id UINT32_MAX means none");
	if (vbr_tm_is_root(tm, node_id) || vbr_tm_is_leaf(tm, node_id))
		return vbr_tm_err(error, EEXIST, RTE_TM_ERROR_TYPE_NODE_ID,
				  "vbr: node id in use");
	if (parent_node_id == RTE_TM_NODE_ID_NULL)
		return vbr_tm_root_add(tm, dev->data->nb_tx_queues, node_id,
				       level_id, params, error);
	if (!vbr_tm_is_root(tm, parent_node_id))
		return vbr_tm_err(error, EINVAL,
				  RTE_TM_ERROR_TYPE_NODE_PARENT_NODE_ID,
				  "vbr: the parent must be the root: one "
				  "non-leaf level (add the root first)");
	return vbr_tm_leaf_add(priv, tm, node_id, level_id, params, error);
}

static int
vbr_tm_node_delete(struct rte_eth_dev *dev, uint32_t node_id,
		   struct rte_tm_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	static const struct vbr_tm_rate none;
	struct vbr_tm_queue *q;
	struct vbr_tm *tm;
	int ret;

	VBR_TM_GET(priv, tm, error);
	if (vbr_tm_is_root(tm, node_id)) {
		if (tm->nb_leaves != 0)
			return vbr_tm_err(error, EBUSY,
					  RTE_TM_ERROR_TYPE_NODE_ID,
					  "vbr: the root has leaves: delete "
					  "them first");
		tm->root = 0;
		tm->committed = 0;
		return 0;
	}
	if (!vbr_tm_is_leaf(tm, node_id))
		return vbr_tm_err(error, EINVAL, RTE_TM_ERROR_TYPE_NODE_ID,
				  "vbr: no node with this id");
	q = &tm->q[node_id];
	if (tm->committed) {
		/* The leaf's shaper leaves the queue. */
		ret = vbr_tm_queue_set(priv, tm, node_id, &none);
		if (ret != 0)
			return vbr_tm_err(error, -ret, RTE_TM_ERROR_TYPE_NODE_ID,
					  "vbr: the device refused to remove "
					  "the queue's rate limit");
	}
	if (q->profile != NULL)
		q->profile->users--;
	q->profile = NULL;
	q->leaf = 0;
	tm->nb_leaves--;
	return 0;
}

static int
vbr_tm_node_suspend(struct rte_eth_dev *dev, uint32_t node_id,
		    struct rte_tm_error *error)
{
	RTE_SET_USED(dev);
	RTE_SET_USED(node_id);
	return vbr_tm_err(error, ENOTSUP, RTE_TM_ERROR_TYPE_NODE_ID,
			  "vbr: QP pacing cannot hold a queue: stop it "
			  "(rte_eth_dev_tx_queue_stop) instead");
}

/* Forget every node (clear_on_fail); the queues keep their limits. */
static void
vbr_tm_clear(struct vbr_tm *tm)
{
	uint16_t i;

	for (i = 0; i < tm->nb_queues; i++) {
		struct vbr_tm_queue *q = &tm->q[i];

		if (q->profile != NULL)
			q->profile->users--;
		q->profile = NULL;
		q->leaf = 0;
	}
	tm->nb_leaves = 0;
	tm->root = 0;
	tm->committed = 0;
}

static int
vbr_tm_hierarchy_commit(struct rte_eth_dev *dev, int clear_on_fail,
			struct rte_tm_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	uint16_t nb_txq = dev->data->nb_tx_queues, i, done = 0;
	struct vbr_tm_rate *old = NULL;
	enum rte_tm_error_type type = RTE_TM_ERROR_TYPE_UNSPECIFIED;
	const char *msg = NULL;
	struct vbr_tm *tm;
	int code = EINVAL, ret;

	VBR_TM_GET(priv, tm, error);
	if (!tm->root) {
		msg = "vbr: no root node to commit";
		goto fail;
	}
	for (i = 0; i < tm->nb_queues; i++) {
		if (tm->q[i].leaf && i >= nb_txq) {
			type = RTE_TM_ERROR_TYPE_NODE_ID;
			msg = "vbr: a leaf names a Tx queue the port no longer "
			      "has";
			goto fail;
		}
	}
	old = rte_malloc("vbr_tm_old", sizeof(*old) * (nb_txq + 1u), 0);
	if (old == NULL) {
		code = ENOMEM;
		msg = "vbr: out of memory";
		goto fail;
	}
	/* Queues without a leaf keep the limit they have. */
	for (done = 0; done < nb_txq; done++) {
		struct vbr_tm_queue *q = &tm->q[done];
		struct vbr_tm_rate r = vbr_tm_leaf_rate(q);

		old[done] = vbr_tm_want(q);
		if (!q->leaf)
			continue;
		ret = vbr_tm_queue_set(priv, tm, done, &r);
		if (ret != 0) {
			code = -ret;
			type = RTE_TM_ERROR_TYPE_NODE_PARAMS_SHAPER_PROFILE_ID;
			msg = vbr_tm_refused_msg(code);
			goto fail;
		}
	}
	rte_free(old);
	tm->committed = 1;
	return 0;
fail:
	/* Back to the limits the queues had. */
	while (done > 0) {
		done--;
		if (tm->q[done].leaf)
			vbr_tm_queue_set(priv, tm, done, &old[done]);
	}
	rte_free(old);
	if (clear_on_fail)
		vbr_tm_clear(tm);
	return vbr_tm_err(error, code, type, msg);
}

static int
vbr_tm_node_shaper_update(struct rte_eth_dev *dev, uint32_t node_id,
			  uint32_t shaper_profile_id,
			  struct rte_tm_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	struct vbr_tm_profile *p = NULL;
	struct vbr_tm_queue *q;
	struct vbr_tm_rate r;
	struct vbr_tm *tm;
	int ret;

	VBR_TM_GET(priv, tm, error);
	if (vbr_tm_is_root(tm, node_id)) {
		if (shaper_profile_id == RTE_TM_SHAPER_PROFILE_ID_NONE)
			return 0;
		return vbr_tm_err(error, EINVAL,
				  RTE_TM_ERROR_TYPE_SHAPER_PROFILE_ID,
				  "vbr: no shaper on a non-leaf node: the "
				  "device paces Tx queues, not the port");
	}
	if (!vbr_tm_is_leaf(tm, node_id))
		return vbr_tm_err(error, EINVAL, RTE_TM_ERROR_TYPE_NODE_ID,
				  "vbr: no node with this id");
	if (shaper_profile_id != RTE_TM_SHAPER_PROFILE_ID_NONE) {
		p = vbr_tm_profile_find(tm, shaper_profile_id);
		if (p == NULL)
			return vbr_tm_err(error, EINVAL,
					  RTE_TM_ERROR_TYPE_SHAPER_PROFILE_ID,
					  "vbr: no shaper profile with this "
					  "id");
	}
	q = &tm->q[node_id];
	if (tm->committed) {
		/* The running QP takes the new rate at once. */
		r = p != NULL ? p->rate : (struct vbr_tm_rate){ 0 };
		ret = vbr_tm_queue_set(priv, tm, node_id, &r);
		if (ret != 0)
			return vbr_tm_err(error, -ret,
					  RTE_TM_ERROR_TYPE_SHAPER_PROFILE_ID,
					  vbr_tm_refused_msg(-ret));
	}
	if (q->profile != NULL)
		q->profile->users--;
	q->profile = p;
	if (p != NULL)
		p->users++;
	return 0;
}

static int
vbr_tm_node_stats_read(struct rte_eth_dev *dev, uint32_t node_id,
		       struct rte_tm_node_stats *stats, uint64_t *stats_mask,
		       int clear, struct rte_tm_error *error)
{
	struct vbr_priv *priv = dev->data->dev_private;
	uint64_t pkts = 0, bytes = 0;
	struct vbr_tm_queue *q;
	struct vbr_txq *txq;
	struct vbr_tm *tm;

	VBR_TM_GET(priv, tm, error);
	if (vbr_tm_is_root(tm, node_id))
		return vbr_tm_err(error, EINVAL, RTE_TM_ERROR_TYPE_NODE_ID,
				  "vbr: the root node has no stats: read the "
				  "leaves' (or the port's)");
	if (!vbr_tm_is_leaf(tm, node_id))
		return vbr_tm_err(error, EINVAL, RTE_TM_ERROR_TYPE_NODE_ID,
				  "vbr: no node with this id");
	q = &tm->q[node_id];
	txq = node_id < dev->data->nb_tx_queues ?
	      dev->data->tx_queues[node_id] : NULL;
	if (txq != NULL) {
		pkts = __atomic_load_n(&txq->opackets, __ATOMIC_RELAXED);
		bytes = __atomic_load_n(&txq->obytes, __ATOMIC_RELAXED);
	}
	if (stats != NULL) {
		memset(stats, 0, sizeof(*stats));
		stats->n_pkts = pkts - q->pkts_base;
		stats->n_bytes = bytes - q->bytes_base;
	}
	if (stats_mask != NULL)
		*stats_mask = q->stats_mask;
	if (clear) {
		q->pkts_base = pkts;
		q->bytes_base = bytes;
	}
	return 0;
}

static const struct rte_tm_ops vbr_tm_ops = {
	.node_type_get = vbr_tm_node_type_get,
	.capabilities_get = vbr_tm_capabilities_get,
	.level_capabilities_get = vbr_tm_level_capabilities_get,
	.node_capabilities_get = vbr_tm_node_capabilities_get,
	.wred_profile_add = vbr_tm_wred_profile_add,
	.shaper_profile_add = vbr_tm_shaper_profile_add,
	.shaper_profile_delete = vbr_tm_shaper_profile_delete,
	.shared_shaper_add_update = vbr_tm_shared_shaper_add_update,
	.node_add = vbr_tm_node_add,
	.node_delete = vbr_tm_node_delete,
	.node_suspend = vbr_tm_node_suspend,
	.node_resume = vbr_tm_node_suspend,
	.hierarchy_commit = vbr_tm_hierarchy_commit,
	.node_shaper_update = vbr_tm_node_shaper_update,
	.node_stats_read = vbr_tm_node_stats_read,
};

int
vbr_tm_ops_get(struct rte_eth_dev *dev, void *arg)
{
	RTE_SET_USED(dev);
	*(const struct rte_tm_ops **)arg = &vbr_tm_ops;
	return 0;
}
