/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * QP counters, as the kernel's RDMA core keeps them for "rdma statistic qp"
 * (drivers/infiniband/core/counters.c, linux 6.x) on a device whose
 * counter sets are hardware objects (mlx5's q-counters):
 *
 *   - A QP counts on its own all the time (swv_qp.hw, engine-written). A
 *     counter is a set of QPs: its value is what its QPs counted while bound
 *     to it, the sum over the QPs bound now of (hw - hw at their bind) plus
 *     the counts of QPs unbound since (hist), as a q-counter keeps counting
 *     what a QP added to it once the QP moves back to the default set.
 *   - The port's mode: none; manual (counters made by bind); auto, by QP
 *     type and/or pid, in which each new QP binds to the first counter whose
 *     QP of origin had the same type / pid (rdma_get_counter_auto_mode()),
 *     or to a new one (alloc_and_bind()), when it moves RESET -> INIT
 *     with a port and is not bound yet, as the kernel's _ib_modify_qp()
 *     binds: a hash QP, never modified, is never bound in auto mode (as on
 *     a ConnectX); a QP made before auto mode binds at its next INIT.
 *   - Errors as rdma_counter_set_auto_mode(), rdma_counter_bind_qpn(),
 *     rdma_counter_bind_qpn_alloc() and rdma_counter_unbind_qpn() return
 *     them, with one exception: binding an already bound QP to a new
 *     counter is EINVAL here, as __rdma_counter_bind_qp() says, where the
 *     kernel's alloc_and_bind() turns that into ENOMEM.
 *   - Numbers: the lowest free cntn from 1 (mlx5's cntn is the firmware's
 *     q-counter id, also a small number reused once freed).
 *   - The mlx5 profile (dev->strict) adds what a ConnectX and the kernel's
 *     permission checks add (doc/guides/swverbs.rst "QP counters"):
 *     changes need CAP_NET_ADMIN (EPERM, netlink.c's RDMA_NL_ADMIN_PERM
 *     check, before anything else); a RAW_PACKET QP is found only with
 *     CAP_NET_RAW (ENOENT, rdma_counter_get_qp()); hash QPs, all numbered
 *     0 (mlx5 qp.c), are never found; a QP binds only in RESET (mlx5
 *     qp.c mlx5_ib_qp_set_counter() keeps the counter for RESET -> INIT;
 *     in any other state it sends RTS2RTS_QP on a raw QP's SQ or RQ
 *     number, which the firmware is taken to refuse: EINVAL, inferred);
 *     and a counter reads no Tx counts (q-counters count receive queue
 *     events; a raw Tx QP has none).
 *
 * Everything but the counting runs under swv_lock; the counts are read
 * with relaxed loads, whole.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>

#include "swv_priv.h"

struct swv_counter {
	struct swv_counter *next;	/**< in dev->counters, by cntn */
	uint32_t cntn;
	uint32_t mode;			/**< SWV_COUNTER_MODE_AUTO/_MANUAL */
	uint32_t mask;			/**< auto: criteria it was made under */
	enum ibv_qp_type qp_type;	/**< of its QP of origin */
	int pid;			/**< of its QP of origin */
	char comm[16];
	uint32_t nqps;
	struct swv_qp_stats hist;	/**< counts of QPs unbound since */
};

#define STAT_N (sizeof(struct swv_qp_stats) / sizeof(uint64_t))

static void
stats_load(const struct swv_qp_stats *s, uint64_t v[STAT_N])
{
	const uint64_t *p = (const uint64_t *)s;
	unsigned int i;

	for (i = 0; i < STAT_N; i++)
		v[i] = SWV_LOAD(&p[i]);
}

/* *acc += qp's counts since its bind. */
static void
stats_add_bound(struct swv_qp_stats *acc, const struct swv_qp *qp)
{
	const uint64_t *b = (const uint64_t *)&qp->cnt_base;
	uint64_t *a = (uint64_t *)acc, v[STAT_N];
	unsigned int i;

	stats_load(&qp->hw, v);
	for (i = 0; i < STAT_N; i++)
		a[i] += v[i] - b[i];
}

/*
 * Whether the calling thread has capability cap in its effective set (the
 * kernel checks the caller's: a thread that dropped it has it no more).
 */
static bool
cap_effective(unsigned int cap)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0,
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d) != 0)
		return false;
	return (d[cap / 32].effective & (1u << (cap % 32))) != 0;
}

/* The mlx5 profile: a change without CAP_NET_ADMIN is EPERM. */
static int
change_check(const struct swv_device *dev)
{
	return dev->strict && !cap_effective(CAP_NET_ADMIN) ? EPERM : 0;
}

/*
 * The live QP of dev numbered lqpn, or NULL (swv_lock). On the mlx5
 * profile hash QPs are never found (all numbered 0), nor, without
 * CAP_NET_RAW, RAW_PACKET QPs (rdma_counter_get_qp()).
 */
static struct swv_qp *
qp_find(struct swv_device *dev, uint32_t lqpn)
{
	struct cds_list_head *lists[2] = { &dev->qps, &dev->hqps };
	struct cds_list_head *node;
	struct swv_qp *qp;
	unsigned int i;

	for (i = 0; i < (dev->strict ? 1u : 2u); i++)
		cds_list_for_each(node, lists[i]) {
			qp = cds_list_entry(node, struct swv_qp, node);
			if (qp->ibv_qp.qp_num != lqpn)
				continue;
			if (dev->strict &&
			    qp->ibv_qp.qp_type == IBV_QPT_RAW_PACKET &&
			    !cap_effective(CAP_NET_RAW))
				return NULL;
			return qp;
		}
	return NULL;
}

static struct swv_counter *
counter_find(struct swv_device *dev, uint32_t cntn)
{
	struct swv_counter *c;

	for (c = dev->counters; c != NULL; c = c->next)
		if (c->cntn == cntn)
			return c;
	return NULL;
}

static void
counter_bind(struct swv_counter *c, struct swv_qp *qp)
{
	stats_load(&qp->hw, (uint64_t *)&qp->cnt_base);
	qp->counter = c;
	c->nqps++;
}

/* A new counter, linked, with qp bound: NULL when out of memory. */
static struct swv_counter *
counter_new(struct swv_device *dev, struct swv_qp *qp, uint32_t mode)
{
	struct swv_counter *c, **at;
	uint32_t n = 1;

	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	/* The lowest free number: the list is sorted. */
	for (at = &dev->counters; *at != NULL && (*at)->cntn == n;
	     at = &(*at)->next)
		n++;
	c->cntn = n;
	c->mode = mode;
	c->mask = mode == SWV_COUNTER_MODE_AUTO ? dev->cnt_mask : 0;
	c->qp_type = qp->ibv_qp.qp_type;
	c->pid = qp->pid;
	memcpy(c->comm, qp->comm, sizeof(c->comm));
	c->next = *at;
	*at = c;
	counter_bind(c, qp);
	return c;
}

/* Unbind qp; the counter keeps its counts, and goes with its last QP. */
static void
counter_unbind(struct swv_device *dev, struct swv_qp *qp)
{
	struct swv_counter *c = qp->counter, **at;

	stats_add_bound(&c->hist, qp);
	qp->counter = NULL;
	if (--c->nqps > 0)
		return;
	for (at = &dev->counters; *at != c; at = &(*at)->next)
		;
	*at = c->next;
	free(c);
	/* rdma_counter_free(): manual mode with no counter left is none. */
	if (dev->counters == NULL && dev->cnt_mode == SWV_COUNTER_MODE_MANUAL)
		dev->cnt_mode = SWV_COUNTER_MODE_NONE;
}

void
swv_stat_qp_created(struct swv_qp *qp)
{
	qp->pid = (int)gettid();
	if (prctl(PR_GET_NAME, qp->comm) != 0)
		qp->comm[0] = '\0';
	qp->comm[sizeof(qp->comm) - 1] = '\0';
}

void
swv_stat_qp_init(struct swv_qp *qp)
{
	struct swv_device *dev = qp->dev;
	struct swv_counter *c;

	if (dev->cnt_mode != SWV_COUNTER_MODE_AUTO || qp->counter != NULL)
		return;
	for (c = dev->counters; c != NULL; c = c->next) {
		if ((dev->cnt_mask & SWV_COUNTER_MASK_QP_TYPE) &&
		    c->qp_type != qp->ibv_qp.qp_type)
			continue;
		if ((dev->cnt_mask & SWV_COUNTER_MASK_PID) && c->pid != qp->pid)
			continue;
		counter_bind(c, qp);
		return;
	}
	/* Out of memory: the QP stays unbound, as it would in none mode. */
	(void)counter_new(dev, qp, SWV_COUNTER_MODE_AUTO);
}

void
swv_stat_qp_destroyed(struct swv_qp *qp)
{
	if (qp->counter != NULL)
		counter_unbind(qp->dev, qp);
}

int
swv_counter_set_auto_mode(struct ibv_context *context, uint32_t mask)
{
	struct swv_device *dev;
	uint32_t mode;
	int ret = 0;

	if (context == NULL || (mask & ~SWV_COUNTER_MASK_ALL) != 0)
		return EINVAL;
	dev = swv_ctx_dev(context);
	ret = change_check(dev);
	if (ret != 0)
		return ret;
	pthread_mutex_lock(&swv_lock);
	if (mask != 0)
		mode = SWV_COUNTER_MODE_AUTO;
	else
		mode = dev->counters != NULL ? SWV_COUNTER_MODE_MANUAL :
					       SWV_COUNTER_MODE_NONE;
	if (mode == dev->cnt_mode && mask == dev->cnt_mask)
		goto out;
	if (mode == SWV_COUNTER_MODE_AUTO && dev->counters != NULL) {
		ret = EBUSY;
		goto out;
	}
	dev->cnt_mode = mode;
	dev->cnt_mask = mask;
out:
	pthread_mutex_unlock(&swv_lock);
	return ret;
}

int
swv_counter_get_mode(struct ibv_context *context, uint32_t *mode,
		     uint32_t *mask)
{
	struct swv_device *dev;

	if (context == NULL || mode == NULL || mask == NULL)
		return EINVAL;
	dev = swv_ctx_dev(context);
	pthread_mutex_lock(&swv_lock);
	*mode = dev->cnt_mode;
	*mask = dev->cnt_mask;
	pthread_mutex_unlock(&swv_lock);
	return 0;
}

/*
 * What rdma_counter_bind_qpn() and _alloc() check first (swv_lock): not in
 * auto mode, the QP lqpn exists, and is not bound. 0 and *qpp, or EINVAL,
 * ENOENT.
 */
static int
bind_check(struct swv_device *dev, uint32_t lqpn, struct swv_qp **qpp)
{
	if (dev->cnt_mode == SWV_COUNTER_MODE_AUTO)
		return EINVAL;
	*qpp = qp_find(dev, lqpn);
	if (*qpp == NULL)
		return ENOENT;
	return (*qpp)->counter != NULL ? EINVAL : 0;
}

/*
 * The mlx5 profile's last word on a bind the core took: a QP out of RESET
 * goes through the firmware's RTS2RTS_QP, refused (inferred): EINVAL.
 */
static int
bind_hw(const struct swv_device *dev, const struct swv_qp *qp)
{
	return dev->strict && SWV_LOAD(&qp->state) != IBV_QPS_RESET ?
	       EINVAL : 0;
}

int
swv_counter_bind_qp_alloc(struct ibv_context *context, uint32_t lqpn,
			  uint32_t *cntn)
{
	struct swv_qp *qp = NULL;
	struct swv_device *dev;
	struct swv_counter *c;
	int ret;

	if (context == NULL || cntn == NULL)
		return EINVAL;
	dev = swv_ctx_dev(context);
	ret = change_check(dev);
	if (ret != 0)
		return ret;
	pthread_mutex_lock(&swv_lock);
	ret = bind_check(dev, lqpn, &qp);
	if (ret == 0)
		ret = bind_hw(dev, qp);
	if (ret == 0) {
		c = counter_new(dev, qp, SWV_COUNTER_MODE_MANUAL);
		if (c == NULL) {
			ret = ENOMEM;
		} else {
			dev->cnt_mode = SWV_COUNTER_MODE_MANUAL;
			dev->cnt_mask = 0;
			*cntn = c->cntn;
		}
	}
	pthread_mutex_unlock(&swv_lock);
	return ret;
}

int
swv_counter_bind_qp(struct ibv_context *context, uint32_t lqpn,
		    uint32_t cntn)
{
	struct swv_qp *qp = NULL;
	struct swv_device *dev;
	struct swv_counter *c;
	int ret;

	if (context == NULL)
		return EINVAL;
	dev = swv_ctx_dev(context);
	ret = change_check(dev);
	if (ret != 0)
		return ret;
	pthread_mutex_lock(&swv_lock);
	ret = bind_check(dev, lqpn, &qp);
	c = counter_find(dev, cntn);
	/* The kernel looks the counter up before it sees the QP bound. */
	if (qp != NULL && c == NULL)
		ret = ENOENT;
	if (ret == 0)
		ret = bind_hw(dev, qp);
	if (ret == 0)
		counter_bind(c, qp);
	pthread_mutex_unlock(&swv_lock);
	return ret;
}

int
swv_counter_unbind_qp(struct ibv_context *context, uint32_t lqpn,
		      uint32_t cntn)
{
	struct swv_device *dev;
	struct swv_qp *qp;
	int ret = 0;

	if (context == NULL)
		return EINVAL;
	dev = swv_ctx_dev(context);
	ret = change_check(dev);
	if (ret != 0)
		return ret;
	pthread_mutex_lock(&swv_lock);
	qp = qp_find(dev, lqpn);
	if (qp == NULL)
		ret = ENOENT;
	else if (qp->counter == NULL || qp->counter->cntn != cntn ||
		 dev->cnt_mode != SWV_COUNTER_MODE_MANUAL)
		ret = EINVAL;
	else
		counter_unbind(dev, qp);
	pthread_mutex_unlock(&swv_lock);
	return ret;
}

int
swv_counter_list(struct ibv_context *context, uint32_t *cntn,
		 unsigned int max)
{
	struct swv_counter *c;
	unsigned int n = 0;

	if (context == NULL || (cntn == NULL && max > 0)) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&swv_lock);
	for (c = swv_ctx_dev(context)->counters; c != NULL; c = c->next) {
		if (n < max)
			cntn[n] = c->cntn;
		n++;
	}
	pthread_mutex_unlock(&swv_lock);
	return (int)n;
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

int
swv_counter_query(struct ibv_context *context, uint32_t cntn,
		  struct swv_counter_attr *attr, uint32_t *lqpn,
		  unsigned int max)
{
	struct cds_list_head *lists[2];
	struct swv_device *dev;
	struct cds_list_head *node;
	struct swv_counter *c;
	struct swv_qp *qp;
	unsigned int i, n = 0;

	if (context == NULL || attr == NULL || (lqpn == NULL && max > 0)) {
		errno = EINVAL;
		return -1;
	}
	dev = swv_ctx_dev(context);
	lists[0] = &dev->qps;
	lists[1] = &dev->hqps;
	pthread_mutex_lock(&swv_lock);
	c = counter_find(dev, cntn);
	if (c == NULL) {
		pthread_mutex_unlock(&swv_lock);
		errno = ENOENT;
		return -1;
	}
	memset(attr, 0, sizeof(*attr));
	attr->cntn = c->cntn;
	attr->mode = c->mode;
	attr->mask = c->mask;
	attr->qp_type = c->qp_type;
	attr->pid = c->pid;
	memcpy(attr->comm, c->comm, sizeof(attr->comm));
	attr->nqps = c->nqps;
	attr->stats = c->hist;
	for (i = 0; i < 2; i++)
		cds_list_for_each(node, lists[i]) {
			qp = cds_list_entry(node, struct swv_qp, node);
			if (qp->counter != c)
				continue;
			stats_add_bound(&attr->stats, qp);
			if (n < max)
				lqpn[n] = qp->ibv_qp.qp_num;
			n++;
		}
	pthread_mutex_unlock(&swv_lock);
	/* mlx5: q-counters count receive queue events, no sends. */
	if (dev->strict) {
		attr->stats.tx_frames = 0;
		attr->stats.tx_bytes = 0;
		attr->stats.tx_errors = 0;
	}
	if (n > 0 && max > 0)
		qsort(lqpn, n < max ? n : max, sizeof(*lqpn), cmp_u32);
	return (int)n;
}

int
swv_query_qp_stats(struct ibv_qp *ibqp, struct swv_qp_stats *stats,
		   uint32_t *cntn, int *pid)
{
	struct swv_qp *qp;

	if (ibqp == NULL || stats == NULL)
		return EINVAL;
	qp = to_swv_qp(ibqp);
	stats_load(&qp->hw, (uint64_t *)stats);
	pthread_mutex_lock(&swv_lock);
	if (cntn != NULL)
		*cntn = qp->counter != NULL ? qp->counter->cntn : 0;
	if (pid != NULL)
		*pid = qp->pid;
	pthread_mutex_unlock(&swv_lock);
	return 0;
}

/*
 * MR counters. The kernel's "rdma statistic show mr" shows an MR's
 * driver counters by mrn (mlx5: its ODP page faults); swverbs pins
 * nothing and faults nothing, and says what it can: the MR's size, and the
 * work requests it refused.
 */
void
swv_mr_access_error(const struct ibv_sge *sge)
{
	struct swv_mr *mr;

	mr = rcu_dereference(swv_mr_table[sge->lkey &
					   ((1u << SWV_MR_BITS) - 1)]);
	if (mr != NULL && mr->ibv_mr.lkey == sge->lkey)
		swv_qp_count(&mr->access_errors, 1);
}

int
swv_query_mr_stats(struct ibv_context *context, struct swv_mr_stats *st,
		   unsigned int max)
{
	struct swv_device *dev;
	const struct swv_mr *mr;
	unsigned int n = 0;
	uint32_t slot;

	if (context == NULL || (st == NULL && max > 0)) {
		errno = EINVAL;
		return -1;
	}
	dev = swv_ctx_dev(context);
	pthread_mutex_lock(&swv_lock);
	for (slot = 1; slot <= SWV_MAX_MR; slot++) {
		mr = swv_mr_table[slot];
		if (mr == NULL || swv_ctx_dev(mr->ibv_mr.context) != dev)
			continue;
		if (n < max) {
			struct swv_mr_stats *m = &st[n];

			m->mrn = slot;
			m->lkey = mr->ibv_mr.lkey;
			m->length = mr->end - mr->start;
			m->pages = ((mr->end + 4095) >> 12) - (mr->start >> 12);
			m->access = mr->access;
			m->access_errors = SWV_LOAD(&mr->access_errors);
		}
		n++;
	}
	pthread_mutex_unlock(&swv_lock);
	return (int)n;
}
