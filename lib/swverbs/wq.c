/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Receive work queues (IBV_WQT_RQ) and receive WQ indirection tables.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "swv_ring.h"

static int
wq_post_recv(struct ibv_wq *ibwq, struct ibv_recv_wr *wr,
	     struct ibv_recv_wr **bad_wr)
{
	return swv_ring_post_recv(&to_swv_wq(ibwq)->rq.ring, wr, bad_wr);
}

unsigned int
swv_post_wq_recv_burst(struct ibv_wq *ibwq, unsigned int n,
		       const uint64_t *wr_id, const struct ibv_sge *sge)
{
	unsigned int done;

	done = swv_ring_put_burst(&to_swv_wq(ibwq)->rq.ring, n, wr_id, sge,
				  NULL, 0);
	if (SWV_UNLIKELY(done < n))
		errno = ENOMEM;
	return done;
}

static void
wq_to_err(struct swv_rq *rq)
{
	struct swv_wq *wq = container_of(rq, struct swv_wq, rq);

	SWV_STORE(&wq->ibv_wq.state, IBV_WQS_ERR);
	SWV_STORE(&rq->state, SWV_RQ_ERR);
}

struct ibv_wq *
swv_create_wq(struct ibv_context *context, struct ibv_wq_init_attr *attr)
{
	struct swv_device *dev;
	struct swv_wq *wq;
	int ret;

	if (context == NULL || attr == NULL || attr->pd == NULL ||
	    attr->cq == NULL || attr->max_wr == 0 ||
	    attr->max_wr > SWV_MAX_QP_WR || attr->max_sge > SWV_MAX_SGE ||
	    attr->pd->context != context || attr->cq->context != context) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->wq_type != IBV_WQT_RQ ||
	    (attr->comp_mask & ~(uint32_t)IBV_WQ_INIT_ATTR_FLAGS) != 0 ||
	    ((attr->comp_mask & IBV_WQ_INIT_ATTR_FLAGS) &&
	     (attr->create_flags &
	      ~(uint32_t)IBV_WQ_FLAGS_CVLAN_STRIPPING) != 0)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	dev = swv_ctx_dev(context);
	wq = swv_zalloc_aligned(sizeof(*wq));
	if (wq == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ret = swv_ring_init(&wq->rq.ring, attr->max_wr,
			    attr->max_sge > 0 ? attr->max_sge : 1);
	if (ret != 0)
		goto err;
	wq->dev = dev;
	wq->rq.cq = to_swv_cq(attr->cq);
	wq->rq.pd = attr->pd;
	wq->rq.state = SWV_RQ_OFF;
	wq->rq.strip = (attr->comp_mask & IBV_WQ_INIT_ATTR_FLAGS) &&
		       (attr->create_flags & IBV_WQ_FLAGS_CVLAN_STRIPPING);
	wq->rq.csum = !dev->strict;
	wq->rq.to_err = wq_to_err;
	wq->ibv_wq.context = context;
	wq->ibv_wq.wq_context = attr->wq_context;
	wq->ibv_wq.pd = attr->pd;
	wq->ibv_wq.cq = attr->cq;
	wq->ibv_wq.state = IBV_WQS_RESET;
	wq->ibv_wq.wq_type = IBV_WQT_RQ;
	wq->ibv_wq.post_recv = wq_post_recv;
	pthread_mutex_init(&wq->ibv_wq.mutex, NULL);
	pthread_cond_init(&wq->ibv_wq.cond, NULL);
	attr->max_wr = wq->rq.ring.mask + 1;
	attr->max_sge = wq->rq.ring.max_sge;

	pthread_mutex_lock(&swv_lock);
	if (dev->nwq >= SWV_MAX_WQ) {
		pthread_mutex_unlock(&swv_lock);
		ret = ENOMEM;
		goto err;
	}
	dev->nwq++;
	wq->ibv_wq.wq_num = swv_num_next(dev);
	wq->ibv_wq.handle = wq->ibv_wq.wq_num;
	wq->rq.num = wq->ibv_wq.wq_num;
	wq->rq.cq->refs++;
	to_swv_pd(attr->pd)->refs++;
	to_swv_ctx(context)->objs++;
	cds_list_add_tail_rcu(&wq->node, &dev->wqs);
	pthread_mutex_unlock(&swv_lock);
	return &wq->ibv_wq;
err:
	swv_ring_fini(&wq->rq.ring);
	free(wq);
	errno = ret;
	return NULL;
}

/* The flags of a modify that passed its checks (C-VLAN stripping). */
static void
wq_apply_flags(struct swv_wq *wq, const struct ibv_wq_attr *attr)
{
	if ((attr->attr_mask & IBV_WQ_ATTR_FLAGS) &&
	    (attr->flags_mask & IBV_WQ_FLAGS_CVLAN_STRIPPING))
		SWV_STORE(&wq->rq.strip,
			  (attr->flags & IBV_WQ_FLAGS_CVLAN_STRIPPING) != 0);
}

int
swv_modify_wq(struct ibv_wq *ibwq, struct ibv_wq_attr *attr)
{
	enum ibv_wq_state cur, next;
	struct swv_wq *wq;
	int ret = 0;

	if (ibwq == NULL || attr == NULL)
		return EINVAL;
	wq = to_swv_wq(ibwq);
	if ((attr->attr_mask & ~(uint32_t)(IBV_WQ_ATTR_STATE |
					   IBV_WQ_ATTR_CURR_STATE |
					   IBV_WQ_ATTR_FLAGS)) != 0)
		return EINVAL;
	if ((attr->attr_mask & IBV_WQ_ATTR_FLAGS) &&
	    (attr->flags_mask & ~(uint32_t)IBV_WQ_FLAGS_CVLAN_STRIPPING) != 0)
		return EOPNOTSUPP;
	if (!(attr->attr_mask & IBV_WQ_ATTR_STATE)) {
		wq_apply_flags(wq, attr);
		return 0;
	}
	/* All or nothing: the flags once the state change is known good. */
	pthread_mutex_lock(&swv_lock);
	cur = (enum ibv_wq_state)SWV_LOAD(&wq->ibv_wq.state);
	next = attr->wq_state;
	if ((attr->attr_mask & IBV_WQ_ATTR_CURR_STATE) &&
	    attr->curr_wq_state != cur) {
		ret = EINVAL;
		goto out;
	}
	if (next != IBV_WQS_RESET && next != IBV_WQS_RDY &&
	    next != IBV_WQS_ERR) {
		ret = EINVAL;
		goto out;
	}
	/* An errored WQ goes back through RESET. */
	if (cur == IBV_WQS_ERR && next == IBV_WQS_RDY) {
		ret = EINVAL;
		goto out;
	}
	/* mlx5: the CQ forgets what the WQ completed before its RESET. */
	if (cur == IBV_WQS_RESET && next == IBV_WQS_RDY)
		swv_cq_clean(wq->rq.cq, wq->rq.num, true);
	wq_apply_flags(wq, attr);
	SWV_STORE(&wq->ibv_wq.state, next);
	SWV_STORE_REL(&wq->rq.state,
		      next == IBV_WQS_RDY ? SWV_RQ_READY :
		      next == IBV_WQS_ERR ? SWV_RQ_ERR : SWV_RQ_OFF);
	if (next == IBV_WQS_RESET) {
		synchronize_rcu();	/* the engine is out of the ring */
		swv_ring_discard(&wq->rq.ring);
	}
out:
	pthread_mutex_unlock(&swv_lock);
	return ret;
}

int
swv_destroy_wq(struct ibv_wq *ibwq)
{
	struct swv_wq *wq;

	if (ibwq == NULL)
		return EINVAL;
	wq = to_swv_wq(ibwq);
	pthread_mutex_lock(&swv_lock);
	if (wq->refs > 0) {
		pthread_mutex_unlock(&swv_lock);
		return EBUSY;
	}
	cds_list_del_rcu(&wq->node);
	synchronize_rcu();
	/* mlx5: the CQ forgets the completions of a WQ destroyed. */
	swv_cq_clean(wq->rq.cq, wq->rq.num, true);
	wq->dev->nwq--;
	wq->rq.cq->refs--;
	to_swv_pd(ibwq->pd)->refs--;
	to_swv_ctx(ibwq->context)->objs--;
	pthread_mutex_unlock(&swv_lock);
	swv_ring_fini(&wq->rq.ring);
	pthread_mutex_destroy(&wq->ibv_wq.mutex);
	pthread_cond_destroy(&wq->ibv_wq.cond);
	free(wq);
	return 0;
}

struct ibv_rwq_ind_table *
swv_create_rwq_ind_table(struct ibv_context *context,
			 struct ibv_rwq_ind_table_init_attr *attr)
{
	struct swv_ind_table *t;
	struct swv_device *dev;
	uint32_t i, n;

	if (context == NULL || attr == NULL || attr->ind_tbl == NULL ||
	    attr->comp_mask != 0 ||
	    attr->log_ind_tbl_size > SWV_LOG_MAX_IND_TBL) {
		errno = EINVAL;
		return NULL;
	}
	n = 1u << attr->log_ind_tbl_size;
	for (i = 0; i < n; i++) {
		if (attr->ind_tbl[i] == NULL ||
		    attr->ind_tbl[i]->context != context) {
			errno = EINVAL;
			return NULL;
		}
	}
	dev = swv_ctx_dev(context);
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		goto err_nomem;
	t->wqs = calloc(n, sizeof(*t->wqs));
	if (t->wqs == NULL)
		goto err_free;
	t->mask = n - 1;
	t->ibv_tbl.context = context;
	pthread_mutex_lock(&swv_lock);
	if (dev->nind >= SWV_MAX_IND_TBL) {
		pthread_mutex_unlock(&swv_lock);
		free(t->wqs);
		goto err_free;
	}
	dev->nind++;
	for (i = 0; i < n; i++) {
		t->wqs[i] = to_swv_wq(attr->ind_tbl[i]);
		t->wqs[i]->refs++;
	}
	t->ibv_tbl.ind_tbl_num = dev->nind;
	t->ibv_tbl.ind_tbl_handle = dev->nind;
	to_swv_ctx(context)->objs++;
	pthread_mutex_unlock(&swv_lock);
	return &t->ibv_tbl;

err_free:
	free(t);
err_nomem:
	errno = ENOMEM;
	return NULL;
}

int
swv_destroy_rwq_ind_table(struct ibv_rwq_ind_table *ibt)
{
	struct swv_ind_table *t;
	uint32_t i;

	if (ibt == NULL)
		return EINVAL;
	t = to_swv_ind_table(ibt);
	pthread_mutex_lock(&swv_lock);
	if (t->refs > 0) {
		pthread_mutex_unlock(&swv_lock);
		return EBUSY;
	}
	for (i = 0; i <= t->mask; i++)
		t->wqs[i]->refs--;
	swv_ctx_dev(ibt->context)->nind--;
	to_swv_ctx(ibt->context)->objs--;
	pthread_mutex_unlock(&swv_lock);
	free(t->wqs);
	free(t);
	return 0;
}
