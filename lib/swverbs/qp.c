/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Queue pairs: RAW_PACKET QPs (send queue, optional receive queue, the QP
 * state machine, post_send/post_recv) and hash (RSS) QPs.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "swv_ring.h"

/*
 * Whether a QP's send queue takes a post: a RAW_PACKET QP in RTS, or in
 * ERR on the mlx5 profile. mlx5's provider writes a WQE whatever the
 * state (rdma-core providers/mlx5/qp.c, _mlx5_post_send(): no state
 * check), and the device flushes what a QP in ERR holds; the full profile
 * refuses it (EINVAL), as it refuses a post before RTS.
 */
static inline bool
sq_takes_posts(const struct swv_qp *qp)
{
	uint32_t st = SWV_LOAD(&qp->state);

	if (SWV_UNLIKELY(qp->is_hash))
		return false;
	return SWV_LIKELY(st == IBV_QPS_RTS) ||
	       (st == IBV_QPS_ERR && qp->dev->strict);
}

/*
 * Whether the SGEs of a WR hold fewer than @min bytes. mlx5's provider
 * copies the first SWV_MLX5_INLINE_L2 bytes of an Ethernet frame into the
 * WQE (copy_eth_inline_headers()) and refuses a shorter frame with EINVAL.
 */
static inline bool
wr_len_below(const struct ibv_sge *sge, int num_sge, uint32_t min)
{
	uint32_t len = 0;
	int i;

	for (i = 0; i < num_sge && len < min; i++)
		len += sge[i].length;
	return len < min;
}

int
swv_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
	      struct ibv_send_wr **bad_wr)
{
	struct swv_qp *qp = to_swv_qp(ibqp);
	struct swv_wq_ring *r = &qp->sq;
	uint32_t head;
	int ret = 0;

	if (SWV_UNLIKELY(!sq_takes_posts(qp))) {
		if (bad_wr != NULL)
			*bad_wr = wr;
		return EINVAL;
	}
	head = r->head;
	for (; wr != NULL; wr = wr->next) {
		if (SWV_UNLIKELY(wr->opcode != IBV_WR_SEND ||
				 wr->num_sge < 0 ||
				 (uint32_t)wr->num_sge > r->max_sge ||
				 (wr->send_flags & IBV_SEND_INLINE))) {
			ret = EINVAL;
			break;
		}
		if (SWV_UNLIKELY(qp->dev->strict &&
				 wr_len_below(wr->sg_list, wr->num_sge,
					      SWV_MLX5_INLINE_L2))) {
			ret = EINVAL;	/* mlx5: a runt WR */
			break;
		}
		if (SWV_UNLIKELY(!swv_ring_has_room(r, head))) {
			ret = ENOMEM;
			break;
		}
		swv_ring_put(r, head, wr->wr_id, wr->sg_list, wr->num_sge,
			 ((qp->sig_all || (wr->send_flags & IBV_SEND_SIGNALED))
			  ? SWV_WQE_SIGNALED : 0) |
			 ((wr->send_flags & IBV_SEND_IP_CSUM) ?
			  SWV_WQE_IP_CSUM : 0));
		head++;
	}
	SWV_STORE_REL(&r->head, head);
	r->npub++;
	if (swv_dev_inline(qp->dev))
		swv_inline_tx(qp->dev);	/* progress.c: drain now */
	else
		swv_doorbell(qp->dev->eng);
	if (ret != 0 && bad_wr != NULL)
		*bad_wr = wr;
	return ret;
}

unsigned int
swv_post_send_burst(struct ibv_qp *ibqp, unsigned int n, const uint64_t *wr_id,
		    const struct ibv_sge *sge, const uint8_t *signaled)
{
	struct swv_qp *qp = to_swv_qp(ibqp);
	unsigned int done, i, want = n;

	if (SWV_UNLIKELY(!sq_takes_posts(qp))) {
		errno = EINVAL;
		return 0;
	}
	if (qp->dev->strict) {
		/* mlx5: a runt is refused, the ones before it posted */
		for (i = 0; i < n; i++)
			if (SWV_UNLIKELY(sge[i].length < SWV_MLX5_INLINE_L2))
				break;
		want = i;
	}
	done = swv_ring_put_burst(&qp->sq, want, wr_id, sge, signaled,
				  qp->sig_all ? SWV_WQE_SIGNALED : 0);
	if (done > 0) {
		if (swv_dev_inline(qp->dev))
			swv_inline_tx(qp->dev);	/* progress.c: drain now */
		else
			swv_doorbell(qp->dev->eng);
	}
	if (SWV_UNLIKELY(done < n))
		errno = done < want ? ENOMEM : EINVAL;
	return done;
}

int
swv_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
	      struct ibv_recv_wr **bad_wr)
{
	struct swv_qp *qp = to_swv_qp(ibqp);

	if (SWV_UNLIKELY(!qp->has_rq || SWV_LOAD(&qp->state) == IBV_QPS_RESET)) {
		if (bad_wr != NULL)
			*bad_wr = wr;
		return EINVAL;
	}
	return swv_ring_post_recv(&qp->rq.ring, wr, bad_wr);
}

static void
qp_rq_to_err(struct swv_rq *rq)
{
	struct swv_qp *qp = container_of(rq, struct swv_qp, rq);

	uint32_t st = SWV_LOAD(&qp->state);

	/*
	 * Only from a state that receives (RTR, RTS): a RESET or ERR the
	 * control path stored meanwhile stands. The state first, as
	 * qp_to_err() (tx.c).
	 */
	do {
		if (st != IBV_QPS_RTR && st != IBV_QPS_RTS)
			return;
	} while (!__atomic_compare_exchange_n(&qp->state, &st, IBV_QPS_ERR,
					      false, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	if (!qp->dev->strict)	/* as qp_to_err() (tx.c) */
		SWV_STORE_REL(&qp->ibv_qp.state, IBV_QPS_ERR);
	SWV_STORE_REL(&rq->state, SWV_RQ_ERR);
	swv_qps_changed(qp->dev);	/* a waiting QP's flush */
}

static struct swv_qp *
qp_alloc(struct ibv_context *context, struct ibv_pd *pd)
{
	struct swv_qp *qp;

	qp = swv_zalloc_aligned(sizeof(*qp));
	if (qp == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	qp->dev = swv_ctx_dev(context);
	qp->ibv_qp.context = context;
	qp->ibv_qp.pd = pd;
	qp->ibv_qp.qp_type = IBV_QPT_RAW_PACKET;
	pthread_mutex_init(&qp->ibv_qp.mutex, NULL);
	pthread_cond_init(&qp->ibv_qp.cond, NULL);
	return qp;
}

static void
qp_free(struct swv_qp *qp)
{
	swv_ring_fini(&qp->sq);
	swv_ring_fini(&qp->rq.ring);
	pthread_mutex_destroy(&qp->ibv_qp.mutex);
	pthread_cond_destroy(&qp->ibv_qp.cond);
	free(qp);
}

/*
 * Register a new QP with its device and context (swv_lock held). The
 * caller puts it on dev->qps or dev->hqps.
 */
static int
qp_register(struct swv_qp *qp)
{
	struct swv_device *dev = qp->dev;

	if (dev->nqp >= SWV_MAX_QP)
		return ENOMEM;
	dev->nqp++;
	qp->ibv_qp.qp_num = swv_num_next(dev);
	qp->ibv_qp.handle = qp->ibv_qp.qp_num;
	qp->rq.num = qp->ibv_qp.qp_num;
	to_swv_ctx(qp->ibv_qp.context)->objs++;
	to_swv_pd(qp->ibv_qp.pd)->refs++;
	return 0;
}

/*
 * The mlx5 profile refuses a send queue a ConnectX refuses, with its
 * EINVAL: more SGEs than a largest WQE holds, or more basic blocks than
 * the queue may have (swv_priv.h, SWV_MLX5_WQE_SZ_SQ).
 */
static int
mlx5_sq_check(const struct ibv_qp_cap *cap)
{
	uint32_t wqe, max_gather;
	uint64_t bytes;

	if (cap->max_send_wr == 0)
		return 0;
	max_gather = (SWV_MLX5_WQE_SZ_SQ - SWV_MLX5_RAW_OVERHEAD) /
		     SWV_MLX5_DSEG;
	if (cap->max_send_sge > max_gather)
		return EINVAL;
	wqe = SWV_MLX5_RAW_OVERHEAD + cap->max_send_sge * SWV_MLX5_DSEG;
	wqe = (wqe + SWV_MLX5_WQE_BB - 1) / SWV_MLX5_WQE_BB * SWV_MLX5_WQE_BB;
	bytes = (uint64_t)cap->max_send_wr * wqe;
	/* rounded up to a power of two */
	bytes = bytes <= 1 ? 1 : 1ull << (64 - __builtin_clzll(bytes - 1));
	if (bytes / SWV_MLX5_WQE_BB > SWV_MAX_QP_WR)
		return EINVAL;
	return 0;
}

static struct ibv_qp *
create_raw_qp(struct ibv_context *context, struct ibv_pd *pd,
	      struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_cap *cap = &attr->cap;
	struct swv_qp *qp;
	int ret;

	if (attr->qp_type != IBV_QPT_RAW_PACKET) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->srq != NULL || attr->send_cq == NULL ||
	    (cap->max_recv_wr > 0 && attr->recv_cq == NULL) ||
	    cap->max_send_wr > SWV_MAX_QP_WR ||
	    cap->max_recv_wr > SWV_MAX_QP_WR ||
	    cap->max_send_sge > SWV_MAX_SGE ||
	    cap->max_recv_sge > SWV_MAX_SGE || cap->max_inline_data > 0 ||
	    attr->send_cq->context != context ||
	    (attr->recv_cq != NULL && attr->recv_cq->context != context) ||
	    pd->context != context) {
		errno = EINVAL;
		return NULL;
	}
	if (swv_ctx_dev(context)->strict) {
		ret = mlx5_sq_check(cap);
		if (ret != 0) {
			errno = ret;
			return NULL;
		}
	}
	qp = qp_alloc(context, pd);
	if (qp == NULL)
		return NULL;
	qp->ibv_qp.qp_context = attr->qp_context;
	qp->ibv_qp.send_cq = attr->send_cq;
	qp->ibv_qp.recv_cq = attr->recv_cq;
	qp->ibv_qp.state = IBV_QPS_RESET;
	qp->state = IBV_QPS_RESET;
	qp->sig_all = attr->sq_sig_all != 0;
	qp->scq = to_swv_cq(attr->send_cq);
	ret = swv_ring_init(&qp->sq, cap->max_send_wr > 0 ? cap->max_send_wr : 1,
			    cap->max_send_sge > 0 ? cap->max_send_sge : 1);
	if (ret != 0)
		goto err;
	if (cap->max_recv_wr > 0) {
		qp->has_rq = true;
		ret = swv_ring_init(&qp->rq.ring, cap->max_recv_wr,
				    cap->max_recv_sge > 0 ?
				    cap->max_recv_sge : 1);
		if (ret != 0)
			goto err;
		qp->rq.cq = to_swv_cq(attr->recv_cq);
		qp->rq.pd = pd;
		qp->rq.state = SWV_RQ_OFF;
		qp->rq.csum = true;
		qp->rq.to_err = qp_rq_to_err;
	}
	cap->max_send_wr = cap->max_send_wr > 0 ? qp->sq.mask + 1 : 0;
	cap->max_send_sge = qp->sq.max_sge;
	if (qp->has_rq) {
		cap->max_recv_wr = qp->rq.ring.mask + 1;
		cap->max_recv_sge = qp->rq.ring.max_sge;
	}
	cap->max_inline_data = 0;
	qp->cap = *cap;

	pthread_mutex_lock(&swv_lock);
	ret = qp_register(qp);
	if (ret != 0) {
		pthread_mutex_unlock(&swv_lock);
		goto err;
	}
	qp->scq->refs++;
	if (qp->has_rq)
		qp->rq.cq->refs++;
	cds_list_add_tail_rcu(&qp->node, &qp->dev->qps);
	swv_qps_changed(qp->dev);
	swv_stat_qp_created(qp);
	pthread_mutex_unlock(&swv_lock);
	return &qp->ibv_qp;
err:
	qp_free(qp);
	errno = ret;
	return NULL;
}

struct ibv_qp *
swv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	if (pd == NULL || attr == NULL) {
		errno = EINVAL;
		return NULL;
	}
	return create_raw_qp(pd->context, pd, attr);
}

#define SWV_HASH_FIELDS (IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 | \
			 IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6 | \
			 IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_TCP | \
			 IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP)

#define SWV_HASH_V4 (IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4)
#define SWV_HASH_V6 (IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6)
#define SWV_HASH_TCP (IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_TCP)
#define SWV_HASH_UDP (IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP)

/*
 * The mlx5 profile's checks of a hash QP (mlx5 qp.c create_rss_raw_qp_tir):
 * Toeplitz only (EOPNOTSUPP) with a 40-byte key (EINVAL); no fields only
 * with a 1-entry table; IPv4 or IPv6, not both; at most one of TCP ports,
 * UDP ports, SPI (EINVAL); INNER needs a DV flag Verbs cannot give
 * (EOPNOTSUPP). Ports without an IP family are refused too (EINVAL): mlx5
 * takes them, but what it then hashes is unknown.
 */
static int
hash_conf_mlx5(const struct ibv_rx_hash_conf *h,
	       const struct ibv_rwq_ind_table *tbl)
{
	uint64_t f = h->rx_hash_fields_mask;
	unsigned int l4 = 0;

	if (f & IBV_RX_HASH_INNER)
		return EOPNOTSUPP;
	if (h->rx_hash_function != IBV_RX_HASH_FUNC_TOEPLITZ)
		return EOPNOTSUPP;
	if (h->rx_hash_key_len != SWV_HASH_KEY_LEN || h->rx_hash_key == NULL)
		return EINVAL;
	if (f == 0)
		return to_swv_ind_table((struct ibv_rwq_ind_table *)tbl)->mask
		       == 0 ? 0 : EINVAL;
	if ((f & SWV_HASH_V4) && (f & SWV_HASH_V6))
		return EINVAL;
	l4 += (f & SWV_HASH_TCP) != 0;
	l4 += (f & SWV_HASH_UDP) != 0;
	l4 += (f & IBV_RX_HASH_IPSEC_SPI) != 0;
	if (l4 > 1)
		return EINVAL;
	if (f & IBV_RX_HASH_IPSEC_SPI)
		return EOPNOTSUPP;	/* not advertised, as on mlx5 */
	if (l4 == 1 && !(f & (SWV_HASH_V4 | SWV_HASH_V6)))
		return EINVAL;
	return 0;
}

static struct ibv_qp *
create_hash_qp(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_rx_hash_conf *h = &attr->rx_hash_conf;
	struct swv_qp *qp;
	int ret;

	if (attr->rwq_ind_tbl == NULL || attr->pd == NULL ||
	    attr->qp_type != IBV_QPT_RAW_PACKET ||
	    attr->rwq_ind_tbl->context != context ||
	    attr->pd->context != context || attr->srq != NULL) {
		errno = EINVAL;
		return NULL;
	}
	if (swv_ctx_dev(context)->strict) {
		ret = hash_conf_mlx5(h, attr->rwq_ind_tbl);
		if (ret != 0) {
			errno = ret;
			return NULL;
		}
	}
	if (h->rx_hash_function != IBV_RX_HASH_FUNC_TOEPLITZ ||
	    (h->rx_hash_fields_mask & ~(uint64_t)SWV_HASH_FIELDS) != 0) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (h->rx_hash_fields_mask != 0 &&
	    (h->rx_hash_key_len != SWV_HASH_KEY_LEN || h->rx_hash_key == NULL)) {
		errno = EINVAL;
		return NULL;
	}
	qp = qp_alloc(context, attr->pd);
	if (qp == NULL)
		return NULL;
	qp->is_hash = true;
	qp->ibv_qp.qp_context = attr->qp_context;
	/* A hash QP has no state machine; it receives once a flow is on it. */
	qp->ibv_qp.state = IBV_QPS_RTR;
	qp->state = IBV_QPS_RTR;
	qp->ind = to_swv_ind_table(attr->rwq_ind_tbl);
	qp->hash_fields = h->rx_hash_fields_mask;
	if (h->rx_hash_fields_mask != 0)
		memcpy(qp->hash_key, h->rx_hash_key, SWV_HASH_KEY_LEN);
	pthread_mutex_lock(&swv_lock);
	ret = qp_register(qp);
	if (ret != 0) {
		pthread_mutex_unlock(&swv_lock);
		qp_free(qp);
		errno = ret;
		return NULL;
	}
	/* mlx5 qp.c create_rss_raw_qp_tir: an RSS QP's qp_num is 0. */
	if (qp->dev->strict)
		qp->ibv_qp.qp_num = 0;
	qp->ind->refs++;
	cds_list_add_tail(&qp->node, &qp->dev->hqps);
	swv_stat_qp_created(qp);
	pthread_mutex_unlock(&swv_lock);
	return &qp->ibv_qp;
}

struct ibv_qp *
swv_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp *qp;
	uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
			 IBV_QP_INIT_ATTR_RX_HASH |
			 IBV_QP_INIT_ATTR_CREATE_FLAGS;
	uint32_t rss = IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH;

	if (context == NULL || attr == NULL ||
	    !(attr->comp_mask & IBV_QP_INIT_ATTR_PD)) {
		errno = EINVAL;
		return NULL;
	}
	if ((attr->comp_mask & ~known) != 0 ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     attr->create_flags != 0)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if ((attr->comp_mask & rss) == rss)
		return create_hash_qp(context, attr);
	if ((attr->comp_mask & rss) != 0 || attr->pd == NULL) {
		errno = EINVAL;
		return NULL;
	}
	memset(&init, 0, sizeof(init));
	init.qp_context = attr->qp_context;
	init.send_cq = attr->send_cq;
	init.recv_cq = attr->recv_cq;
	init.srq = attr->srq;
	init.cap = attr->cap;
	init.qp_type = attr->qp_type;
	init.sq_sig_all = attr->sq_sig_all;
	qp = create_raw_qp(context, attr->pd, &init);
	if (qp != NULL)
		attr->cap = init.cap;
	return qp;
}

/* Exchange the QP's state from @from to @to; false if it moved meanwhile. */
static bool
qp_state_move(struct swv_qp *qp, uint32_t from, uint32_t to)
{
	return __atomic_compare_exchange_n(&qp->state, &from, to, false,
					   __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

/* The state's copies: ibv_qp's and the receive queue's. */
static void
qp_state_publish(struct swv_qp *qp, enum ibv_qp_state st)
{
	SWV_STORE(&qp->ibv_qp.state, st);
	swv_qps_changed(qp->dev);
	if (qp->has_rq)
		SWV_STORE_REL(&qp->rq.state,
			      st == IBV_QPS_RTR || st == IBV_QPS_RTS ?
			      SWV_RQ_READY : st == IBV_QPS_ERR ?
			      SWV_RQ_ERR : SWV_RQ_OFF);
}

/*
 * The mlx5 profile's RAW_PACKET transitions (core verbs.c qp_state_table,
 * ib_modify_qp_is_ok): on top of RESET -> INIT (with IBV_QP_PORT) -> RTR
 * -> RTS and any state -> RESET or ERR, it allows RESET -> RESET, INIT ->
 * INIT and RTS -> RTS (with no attribute but IBV_QP_RATE_LIMIT), refuses
 * RESET -> ERR and IBV_QP_CUR_STATE (EINVAL). Checked before the lock:
 * the state read is the caller's, who owns the QP's transitions.
 */
static int
modify_qp_mlx5(struct swv_qp *qp, const struct ibv_qp_attr *attr,
	       int attr_mask)
{
	uint32_t cur = SWV_LOAD(&qp->state);

	if (!(attr_mask & IBV_QP_STATE) || (attr_mask & IBV_QP_CUR_STATE))
		return EINVAL;
	if (cur == IBV_QPS_RESET && attr->qp_state == IBV_QPS_ERR)
		return EINVAL;
	return 0;
}

/* Empty both queues of a QP the engine no longer touches. */
static void
qp_discard(struct swv_qp *qp)
{
	swv_ring_discard(&qp->sq);
	if (qp->has_rq)
		swv_ring_discard(&qp->rq.ring);
}

void (*swv_modify_qp_hook)(struct ibv_qp *qp);

/*
 * mlx5's provider, at a RESET and at destroy: the QP's CQs forget its
 * completions, the receive CQ's and the send CQ's if another. The engine
 * is out of the QP (a grace period since it saw it last).
 */
static void
qp_clean_cqs(struct swv_qp *qp)
{
	if (qp->has_rq)
		swv_cq_clean(qp->rq.cq, qp->ibv_qp.qp_num, false);
	if (!qp->has_rq || qp->scq != qp->rq.cq)
		swv_cq_clean(qp->scq, qp->ibv_qp.qp_num, false);
}

int
swv_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask)
{
	struct swv_qp *qp;
	enum ibv_qp_state cur, next;
	int allowed = IBV_QP_STATE | IBV_QP_CUR_STATE;
	bool moves;
	int ret = 0;

	if (ibqp == NULL || attr == NULL)
		return EINVAL;
	qp = to_swv_qp(ibqp);
	if (qp->dev->strict) {
		if (qp->is_hash)
			return EOPNOTSUPP;	/* as the mlx5 provider */
		ret = modify_qp_mlx5(qp, attr, attr_mask);
		if (ret != 0)
			return ret;
	}
	if (qp->is_hash || !(attr_mask & IBV_QP_STATE))
		return EINVAL;
	pthread_mutex_lock(&swv_lock);
	cur = (enum ibv_qp_state)SWV_LOAD(&qp->state);
	next = attr->qp_state;
	if ((attr_mask & IBV_QP_CUR_STATE) && attr->cur_qp_state != cur) {
		ret = EINVAL;
		goto out;
	}
	if (next == IBV_QPS_RESET || next == IBV_QPS_ERR) {
		/* from any state */
	} else if (cur == IBV_QPS_RESET && next == IBV_QPS_INIT) {
		allowed |= IBV_QP_PORT;
		if (!(attr_mask & IBV_QP_PORT) || attr->port_num != 1) {
			ret = EINVAL;
			goto out;
		}
	} else if (!(cur == IBV_QPS_INIT && next == IBV_QPS_RTR) &&
		   !(cur == IBV_QPS_RTR && next == IBV_QPS_RTS) &&
		   !(qp->dev->strict && cur == next &&
		     (cur == IBV_QPS_INIT || cur == IBV_QPS_RTS)) &&
		   !(cur == IBV_QPS_RTS && next == IBV_QPS_RTS &&
		     (attr_mask & IBV_QP_RATE_LIMIT))) {
		ret = EINVAL;
		goto out;
	}
	/* The raw packet table: a rate limit on the way to RTS (pacing.c). */
	if (next == IBV_QPS_RTS)
		allowed |= IBV_QP_RATE_LIMIT;
	if ((attr_mask & ~allowed) != 0) {
		ret = EINVAL;
		goto out;
	}
	if (attr_mask & IBV_QP_RATE_LIMIT) {
		ret = swv_pace_check(qp, attr->rate_limit, 0, 0);
		if (ret != 0)
			goto out;
	}
	if (swv_modify_qp_hook != NULL)
		swv_modify_qp_hook(ibqp);
	/*
	 * The engine moves a QP in RTR or RTS to ERR on its own (a local
	 * error), without swv_lock: a move to a state other than RESET or
	 * ERR may not undo that, as a device refuses ERR -> RTS. One that
	 * stays (RTS -> RTS) checks first, so that a refused call changes
	 * nothing; one that moves exchanges from the state read.
	 */
	moves = next == IBV_QPS_RESET || next == IBV_QPS_ERR || next != cur;
	if (!moves && !qp_state_move(qp, cur, next)) {
		ret = EINVAL;
		goto out;
	}
	if (attr_mask & IBV_QP_RATE_LIMIT) {
		/* Set before the state: paced from the first frame in RTS. */
		ret = swv_pace_set(qp, attr->rate_limit, 0, 0);
		if (ret != 0)
			goto out;
	}
	/* Release: a ring emptied by an earlier RESET is seen first. */
	if (next == IBV_QPS_RESET || next == IBV_QPS_ERR) {
		SWV_STORE_REL(&qp->state, next);
	} else if (moves && !qp_state_move(qp, cur, next)) {
		/* RTR -> RTS: no limit out of RTS, as before the call */
		if (attr_mask & IBV_QP_RATE_LIMIT)
			swv_pace_set(qp, 0, 0, 0);
		ret = EINVAL;
		goto out;
	}
	qp_state_publish(qp, next);
	/*
	 * The engine's ERR after the exchange: its stores of the other two
	 * may have come before these. Store its outcome again.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (next != IBV_QPS_ERR && next != IBV_QPS_RESET &&
	    SWV_LOAD(&qp->state) == IBV_QPS_ERR)
		qp_state_publish(qp, IBV_QPS_ERR);
	if (next == IBV_QPS_RESET) {
		synchronize_rcu();	/* the engine is out of the queues */
		/* an ERR whose stores the engine made before the reset's */
		qp_state_publish(qp, IBV_QPS_RESET);
		qp_discard(qp);
		qp_clean_cqs(qp);
		swv_pace_reset(qp);	/* as mlx5: no limit out of RTS */
	}
	/* _ib_modify_qp(): auto mode binds at RESET -> INIT with a port. */
	if (cur == IBV_QPS_RESET && next == IBV_QPS_INIT)
		swv_stat_qp_init(qp);
out:
	pthread_mutex_unlock(&swv_lock);
	return ret;
}

int
swv_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask,
	     struct ibv_qp_init_attr *init_attr)
{
	struct swv_qp *qp;

	(void)attr_mask;
	if (ibqp == NULL || attr == NULL || init_attr == NULL)
		return EINVAL;
	qp = to_swv_qp(ibqp);
	if (qp->is_hash && qp->dev->strict)
		return EOPNOTSUPP;	/* as the mlx5 provider */
	memset(attr, 0, sizeof(*attr));
	memset(init_attr, 0, sizeof(*init_attr));
	attr->qp_state = (enum ibv_qp_state)SWV_LOAD(&qp->state);
	attr->cur_qp_state = attr->qp_state;
	attr->port_num = 1;
	attr->path_mtu = IBV_MTU_4096;
	attr->cap = qp->cap;
	attr->sq_draining = 0;
	init_attr->qp_context = ibqp->qp_context;
	init_attr->send_cq = ibqp->send_cq;
	init_attr->recv_cq = ibqp->recv_cq;
	init_attr->cap = qp->cap;
	init_attr->qp_type = IBV_QPT_RAW_PACKET;
	init_attr->sq_sig_all = qp->sig_all;
	return 0;
}

int
swv_destroy_qp(struct ibv_qp *ibqp)
{
	struct swv_qp *qp;

	if (ibqp == NULL)
		return EINVAL;
	qp = to_swv_qp(ibqp);
	pthread_mutex_lock(&swv_lock);
	if (qp->flows > 0) {
		pthread_mutex_unlock(&swv_lock);
		return EBUSY;
	}
	if (qp->is_hash) {
		/*
		 * The engine may still hold a rule of this QP from a lookup
		 * made before the rule was unpublished: let it finish before
		 * the QP (and, through it, the indirection table) goes.
		 */
		synchronize_rcu();
		cds_list_del(&qp->node);
		qp->ind->refs--;
	} else {
		cds_list_del_rcu(&qp->node);
		swv_qps_changed(qp->dev);
		swv_pace_unpark(qp);
		synchronize_rcu();
		swv_pace_reset(qp);
		qp_clean_cqs(qp);
		qp->scq->refs--;
		if (qp->has_rq)
			qp->rq.cq->refs--;
	}
	swv_stat_qp_destroyed(qp);
	qp->dev->nqp--;
	to_swv_pd(ibqp->pd)->refs--;
	to_swv_ctx(ibqp->context)->objs--;
	pthread_mutex_unlock(&swv_lock);
	qp_free(qp);
	return 0;
}
