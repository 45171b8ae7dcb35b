/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Packet pacing: per-QP rate limits (ibv_modify_qp_rate_limit(),
 * ibv_modify_qp() with IBV_QP_RATE_LIMIT).
 *
 * Control path. The rules are mlx5's (rdma-core's mlx5 provider, the
 * kernel's raw packet QP path) where the man page is silent: the rate in
 * kbit/s within packet_pacing_caps, or 0 for no limit; max_burst_sz and
 * typical_pkt_sz only with a rate (0: the defaults); comp_mask 0; the QP a
 * RAW_PACKET QP with a send queue, in RTS. A new limit is published as an
 * immutable struct swv_pace_cfg (RCU pointer, the old one freed with
 * call_rcu()) and announced by bumping the QP's pace_gen; the engine picks
 * it up at its next look at the QP, keeping the bucket's level, so a
 * change on a running QP loses and reorders nothing: frames wait in the
 * send queue, never dropped for pacing.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "swv_engine.h"

/* ns * kbit/s per byte: a byte takes 8e6 / rate ns at rate kbit/s. */
#define SWV_PACE_NS_KBPS 8000000ull
/* The default bucket: 1 ms at the rate, two typical frames at least. */
#define SWV_PACE_BURST_NS 1000000ull

int
swv_pace_check(const struct swv_qp *qp, uint32_t rate, uint32_t burst,
	       uint32_t typical)
{
	if (qp->is_hash)
		return EINVAL;	/* no send queue: nothing to pace */
	if (rate == 0)
		return burst != 0 || typical != 0 ? EINVAL : 0;
	if (rate < SWV_PACE_RATE_MIN || rate > SWV_PACE_RATE_MAX)
		return EINVAL;
	if (typical > SWV_MAX_FRAME)
		return EINVAL;
	return 0;
}

static void
pace_cfg_free(struct rcu_head *head)
{
	free(caa_container_of(head, struct swv_pace_cfg, rcu));
}

/* The wheel of dev, made with its first limit (swv_lock held). */
static int
pace_wheel(struct swv_device *dev)
{
	struct swv_wheel *w;
	unsigned int i;

	if (dev->wheel != NULL)
		return 0;
	w = swv_zalloc_aligned(sizeof(*w));
	if (w == NULL)
		return ENOMEM;
	pthread_spin_init(&w->lock, PTHREAD_PROCESS_PRIVATE);
	for (i = 0; i < SWV_WHEEL_SLOTS; i++)
		CDS_INIT_LIST_HEAD(&w->slot[i]);
	w->tick = swv_now_ns() >> SWV_WHEEL_SHIFT;
	rcu_assign_pointer(dev->wheel, w);
	return 0;
}

int
swv_pace_set(struct swv_qp *qp, uint32_t rate, uint32_t burst,
	     uint32_t typical)
{
	struct swv_pace_cfg *cfg = NULL, *old;
	uint64_t depth;
	int ret;

	if (rate != 0) {
		ret = pace_wheel(qp->dev);
		if (ret != 0)
			return ret;
		cfg = calloc(1, sizeof(*cfg));
		if (cfg == NULL)
			return ENOMEM;
		if (typical == 0)
			typical = swv_dev_mtu(qp->dev);
		if (burst == 0) {
			depth = (uint64_t)rate * SWV_PACE_BURST_NS /
				SWV_PACE_NS_KBPS;
			if (depth < 2ull * typical)
				depth = 2ull * typical;
			burst = depth > UINT32_MAX ? UINT32_MAX :
				(uint32_t)depth;
		}
		cfg->rate = rate;
		cfg->burst = burst;
		cfg->typical = typical;
	}
	old = qp->pace_cfg;
	rcu_assign_pointer(qp->pace_cfg, cfg);
	SWV_STORE_REL(&qp->pace_gen, qp->pace_gen + 1);
	if (old != NULL)
		call_rcu(&old->rcu, pace_cfg_free);
	return 0;
}

void
swv_pace_reset(struct swv_qp *qp)
{
	struct swv_wheel *w = qp->dev->wheel;
	struct swv_pace *p = &qp->pace;

	if (qp->pace_cfg == NULL && qp->pace_rate == 0)
		return;
	(void)swv_pace_set(qp, 0, 0, 0);	/* a removal: no allocation */
	if (w != NULL) {
		pthread_spin_lock(&w->lock);
		if (p->parked) {
			cds_list_del(&p->wnode);
			p->parked = false;
			w->n--;
		}
		pthread_spin_unlock(&w->lock);
	}
	qp->pace_rate = 0;
	qp->pace_seen = qp->pace_gen;
}

void
swv_pace_fini(struct swv_device *dev)
{
	if (dev->wheel == NULL)
		return;
	pthread_spin_destroy(&dev->wheel->lock);
	free(dev->wheel);
	dev->wheel = NULL;
}

int
swv_modify_qp_rate_limit(struct ibv_qp *ibqp,
			 struct ibv_qp_rate_limit_attr *attr)
{
	struct swv_qp *qp;
	int ret;

	if (ibqp == NULL || attr == NULL || attr->comp_mask != 0)
		return EINVAL;
	qp = to_swv_qp(ibqp);
	ret = swv_pace_check(qp, attr->rate_limit, attr->max_burst_sz,
			     attr->typical_pkt_sz);
	if (ret != 0)
		return ret;
	pthread_mutex_lock(&swv_lock);
	if (SWV_LOAD(&qp->state) != IBV_QPS_RTS)
		ret = EINVAL;
	else
		ret = swv_pace_set(qp, attr->rate_limit, attr->max_burst_sz,
				   attr->typical_pkt_sz);
	pthread_mutex_unlock(&swv_lock);
	return ret;
}

int
swv_qp_pace_stats(struct ibv_qp *ibqp, struct swv_qp_pace_stats *st)
{
	struct swv_pace_cfg *cfg;
	struct swv_qp *qp;

	if (ibqp == NULL || st == NULL)
		return EINVAL;
	qp = to_swv_qp(ibqp);
	if (qp->is_hash)
		return EINVAL;
	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&swv_lock);	/* the writers' lock */
	cfg = qp->pace_cfg;
	if (cfg != NULL) {
		st->rate_limit = cfg->rate;
		st->max_burst_sz = cfg->burst;
		st->typical_pkt_sz = cfg->typical;
	}
	pthread_mutex_unlock(&swv_lock);
	st->frames = SWV_LOAD(&qp->pace.frames);
	st->bytes = SWV_LOAD(&qp->pace.bytes);
	st->waits = SWV_LOAD(&qp->pace.waits);
	st->full_ns = SWV_LOAD(&qp->pace.full_ns);
	st->late_max_ns = SWV_LOAD(&qp->pace.late_max_ns);
	return 0;
}
