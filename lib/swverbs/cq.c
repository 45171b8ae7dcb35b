/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Completion queues: a ring of CQEs written by the engine (single producer)
 * and read by one application thread, through ibv_poll_cq() or the extended
 * ibv_start_poll() interface.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "swv_priv.h"

/* CQEs start_poll prefetches ahead (2 or 4 CQEs a line). */
#define SWV_CQ_PREFETCH 32

/* mlx5's but TM_INFO and the wall clock: IBV_WC_STANDARD_FLAGS among them. */
#define SWV_WC_EX_SUPPORTED (IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_FLOW_TAG | \
			     IBV_WC_EX_WITH_CVLAN | \
			     IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)

static inline const struct swv_cqe *
cqe_full(const struct swv_cq *cq, uint32_t idx)
{
	return &((const struct swv_cqe *)cq->cqes)[idx & cq->mask];
}

static inline const struct swv_cqe16 *
cqe16(const struct swv_cq *cq, uint32_t idx)
{
	return &((const struct swv_cqe16 *)cq->cqes)[idx & cq->mask];
}

/* Whether inline device dev has paced QPs waiting for their time. */
static inline bool
cq_inline_paced(const struct swv_device *dev)
{
	const struct swv_wheel *w = rcu_dereference(dev->wheel);

	return SWV_UNLIKELY(w != NULL) && SWV_LOAD(&w->n) > 0;
}

/*
 * CQEs published and not read yet. The shared head is read only when the
 * local copy holds fewer than want; an inline CQ found empty gets the
 * device's work done, then a second look. So does one whose device has
 * paced QPs waiting, CQEs there or not: their frames due by now leave in
 * this call, not in a later one that finds the CQ empty (a napping
 * application calls once, rte_pmd_vbr_pace_window()).
 */
static inline uint32_t
cq_avail(struct swv_cq *cq, uint32_t want)
{
	uint32_t avail = cq->ahead - cq->tail;

	if (avail >= want)
		return avail;
	cq->ahead = SWV_LOAD_ACQ(&cq->head);
	avail = cq->ahead - cq->tail;
	if (cq->idev != NULL && (avail == 0 || cq_inline_paced(cq->idev))) {
		swv_inline_poll(cq->idev);
		cq->ahead = SWV_LOAD_ACQ(&cq->head);
		avail = cq->ahead - cq->tail;
	}
	return avail;
}

/* At most n CQEs that are there. */
static inline unsigned int
cq_avail_min(struct swv_cq *cq, unsigned int n)
{
	uint32_t avail = cq_avail(cq, n);

	return n > avail ? avail : n;
}

int
swv_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
	struct swv_cq *cq = to_swv_cq(ibcq);
	uint32_t tail = cq->tail;
	const struct swv_cqe *e;
	uint32_t avail;
	int i;

	if (n < 0)
		return -1;
	avail = cq_avail(cq, (uint32_t)n);
	if ((uint32_t)n > avail)
		n = (int)avail;
	for (i = 0; i < n; i++) {
		memset(&wc[i], 0, sizeof(wc[i]));
		if (SWV_LIKELY(cq->compact)) {
			const struct swv_cqe16 *c = cqe16(cq, tail + i);

			wc[i].wr_id = c->wr_id;
			wc[i].status = (enum ibv_wc_status)
				       swv_cqi_status(c->info);
			wc[i].opcode = (enum ibv_wc_opcode)
				       swv_cqi_opcode(c->info);
			wc[i].byte_len = swv_cqi_len(c->info);
			wc[i].qp_num = (uint32_t)c->info & SWV_CQI_QPN_MASK;
			continue;
		}
		e = cqe_full(cq, tail + i);
		wc[i].wr_id = e->wr_id;
		wc[i].status = (enum ibv_wc_status)e->status;
		wc[i].opcode = (enum ibv_wc_opcode)e->opcode;
		wc[i].byte_len = e->byte_len;
		wc[i].qp_num = e->qp_num;
		wc[i].wc_flags = e->wc_flags;
	}
	/* Nothing read: the engine's line of tail stays as it is. */
	if (n > 0) {
		SWV_STORE_REL(&cq->tail, tail + n);
		cq->npub++;
	}
	return n;
}

unsigned int
swv_poll_cq_burst(struct ibv_cq_ex *ibcq, unsigned int n, uint64_t *wr_id,
		  uint32_t *byte_len, uint8_t *status, uint32_t *flow_tag)
{
	struct swv_cq *cq = to_swv_cq_ex(ibcq);
	uint32_t tail = cq->tail;
	uint32_t avail = cq_avail(cq, n);
	unsigned int i;

	if (n > avail)
		n = avail;
	/* Nothing read: the engine's line of tail stays as it is. */
	if (n == 0)
		return 0;
	if (SWV_LIKELY(cq->compact)) {
		for (i = 0; i < n; i++) {
			const struct swv_cqe16 *c = cqe16(cq, tail + i);
			uint64_t info = c->info;

			wr_id[i] = c->wr_id;
			status[i] = (uint8_t)swv_cqi_status(info);
			byte_len[i] = swv_cqi_len(info);
			if (flow_tag != NULL)
				flow_tag[i] = swv_cqi_tag(info);
		}
	} else {
		for (i = 0; i < n; i++) {
			const struct swv_cqe *e = cqe_full(cq, tail + i);

			wr_id[i] = e->wr_id;
			status[i] = (uint8_t)e->status;
			byte_len[i] = e->byte_len;
			if (flow_tag != NULL)
				flow_tag[i] = e->flow_tag;
		}
	}
	/* Hand the slots back, once for the burst. */
	SWV_STORE_REL(&cq->tail, tail + n);
	cq->npub++;
	return n;
}

unsigned int
swv_poll_cq_burst_ol(struct ibv_cq_ex *ibcq, unsigned int n, uint64_t *wr_id,
		     uint32_t *byte_len, uint8_t *status, uint32_t *flow_tag,
		     uint8_t *wc_flags, uint16_t *cvlan, uint64_t *ts)
{
	struct swv_cq *cq = to_swv_cq_ex(ibcq);
	unsigned int i;

	if (SWV_UNLIKELY(cq->compact)) {
		/* No room for them: not checked, nothing stripped. */
		n = swv_poll_cq_burst(ibcq, n, wr_id, byte_len, status,
				      flow_tag);
		for (i = 0; i < n; i++) {
			if (wc_flags != NULL)
				wc_flags[i] = 0;
			if (cvlan != NULL)
				cvlan[i] = 0;
			if (ts != NULL)
				ts[i] = 0;
		}
		return n;
	}
	n = cq_avail_min(cq, n);
	if (n == 0)
		return 0;
	for (i = 0; i < n; i++) {
		const struct swv_cqe *e = cqe_full(cq, cq->tail + i);

		wr_id[i] = e->wr_id;
		status[i] = e->status;
		byte_len[i] = e->byte_len;
		if (flow_tag != NULL)
			flow_tag[i] = e->flow_tag;
		if (wc_flags != NULL)
			wc_flags[i] = e->wc_flags;
		if (cvlan != NULL)
			cvlan[i] = e->cvlan;
		if (ts != NULL)
			ts[i] = e->ts;
	}
	SWV_STORE_REL(&cq->tail, cq->tail + n);
	cq->npub++;
	return n;
}

static inline const struct swv_cqe *
cur_cqe(struct ibv_cq_ex *ibcq)
{
	struct swv_cq *cq = to_swv_cq_ex(ibcq);

	return cqe_full(cq, cq->cur);
}

/* The info word of the compact CQE under the poll. */
static inline uint64_t
cur_info(struct ibv_cq_ex *ibcq)
{
	struct swv_cq *cq = to_swv_cq_ex(ibcq);

	return cqe16(cq, cq->cur)->info;
}

static inline void
load_cur(struct swv_cq *cq)
{
	/*
	 * Keep fetching ahead, but only CQEs already published: a line the
	 * engine is about to write must stay on its core.
	 */
	if ((int32_t)(cq->ahead - (cq->cur + SWV_CQ_PREFETCH)) > 0 &&
	    swv_cq_new_line(cq, cq->cur + SWV_CQ_PREFETCH))
		__builtin_prefetch(swv_cq_line(cq, cq->cur + SWV_CQ_PREFETCH));
	if (SWV_LIKELY(cq->compact)) {
		const struct swv_cqe16 *c = cqe16(cq, cq->cur);

		cq->ibv_cq.status = (enum ibv_wc_status)
				    swv_cqi_status(c->info);
		cq->ibv_cq.wr_id = c->wr_id;
		return;
	}
	cq->ibv_cq.status = (enum ibv_wc_status)cqe_full(cq, cq->cur)->status;
	cq->ibv_cq.wr_id = cqe_full(cq, cq->cur)->wr_id;
}

static int
cq_start_poll(struct ibv_cq_ex *ibcq, struct ibv_poll_cq_attr *attr)
{
	struct swv_cq *cq = to_swv_cq_ex(ibcq);

	if (SWV_UNLIKELY(attr != NULL && attr->comp_mask != 0))
		return EINVAL;
	/* The shared head is read only when the copy says empty. */
	if (cq->ahead == cq->tail) {
		uint32_t i, n, step;

		n = cq_avail(cq, 1);
		if (n == 0)
			return ENOENT;
		/*
		 * The new CQEs come from the engine's core: ask for all their
		 * lines at once rather than one miss after the other.
		 */
		if (n > SWV_CQ_PREFETCH)
			n = SWV_CQ_PREFETCH;
		step = SWV_CACHE_LINE >> cq->shift;
		for (i = step; i < n; i += step)
			__builtin_prefetch(swv_cq_line(cq, cq->tail + i));
	}
	cq->cur = cq->tail;
	load_cur(cq);
	return 0;
}

static int
cq_next_poll(struct ibv_cq_ex *ibcq)
{
	struct swv_cq *cq = to_swv_cq_ex(ibcq);

	if (cq->ahead == cq->cur + 1) {
		cq->ahead = SWV_LOAD_ACQ(&cq->head);
		if (cq->ahead == cq->cur + 1)
			return ENOENT;
	}
	cq->cur++;
	load_cur(cq);
	return 0;
}

static void
cq_end_poll(struct ibv_cq_ex *ibcq)
{
	struct swv_cq *cq = to_swv_cq_ex(ibcq);

	/* Everything up to the current CQE was read: hand the slots back. */
	SWV_STORE_REL(&cq->tail, cq->cur + 1);
	cq->npub++;
}

static enum ibv_wc_opcode
cq_read_opcode(struct ibv_cq_ex *ibcq)
{
	if (SWV_LIKELY(to_swv_cq_ex(ibcq)->compact))
		return (enum ibv_wc_opcode)swv_cqi_opcode(cur_info(ibcq));
	return (enum ibv_wc_opcode)cur_cqe(ibcq)->opcode;
}

static uint32_t
cq_read_vendor_err(struct ibv_cq_ex *ibcq)
{
	(void)ibcq;
	return 0;
}

static uint32_t
cq_read_byte_len(struct ibv_cq_ex *ibcq)
{
	if (SWV_LIKELY(to_swv_cq_ex(ibcq)->compact))
		return swv_cqi_len(cur_info(ibcq));
	return cur_cqe(ibcq)->byte_len;
}

static uint32_t
cq_read_qp_num(struct ibv_cq_ex *ibcq)
{
	if (SWV_LIKELY(to_swv_cq_ex(ibcq)->compact))
		return (uint32_t)cur_info(ibcq) & SWV_CQI_QPN_MASK;
	return cur_cqe(ibcq)->qp_num;
}

/*
 * The fields of IBV_WC_STANDARD_FLAGS that an Ethernet completion of a
 * RAW_PACKET QP does not carry: no immediate data (wc_flags never says
 * IBV_WC_WITH_IMM), source QP, LID, SL or path bits. 0, as mlx5 reads them
 * from such a CQE.
 */
static __be32
cq_read_imm_data(struct ibv_cq_ex *ibcq)
{
	(void)ibcq;
	return 0;
}

static uint32_t
cq_read_zero32(struct ibv_cq_ex *ibcq)
{
	(void)ibcq;
	return 0;
}

static uint8_t
cq_read_zero8(struct ibv_cq_ex *ibcq)
{
	(void)ibcq;
	return 0;
}

/* IBV_WC_IP_CSUM_OK, in full CQEs only; never immediate data. */
static unsigned int
cq_read_wc_flags(struct ibv_cq_ex *ibcq)
{
	if (SWV_LIKELY(to_swv_cq_ex(ibcq)->compact))
		return 0;
	return cur_cqe(ibcq)->wc_flags;
}

/* The TCI a WQ with IBV_WQ_FLAGS_CVLAN_STRIPPING took off, or 0. */
static uint16_t
cq_read_cvlan(struct ibv_cq_ex *ibcq)
{
	/* A CQ that asked for the VLAN has full CQEs. */
	if (SWV_UNLIKELY(to_swv_cq_ex(ibcq)->compact))
		return 0;
	return cur_cqe(ibcq)->cvlan;
}

static uint32_t
cq_read_flow_tag(struct ibv_cq_ex *ibcq)
{
	if (SWV_LIKELY(to_swv_cq_ex(ibcq)->compact))
		return swv_cqi_tag(cur_info(ibcq));
	return cur_cqe(ibcq)->flow_tag;
}

static uint64_t
cq_read_completion_ts(struct ibv_cq_ex *ibcq)
{
	/* A CQ that asked for timestamps has full CQEs. */
	if (SWV_UNLIKELY(to_swv_cq_ex(ibcq)->compact))
		return 0;
	return cur_cqe(ibcq)->ts;
}

/*
 * A CQ with a completion channel; an inline device cannot have one: nothing
 * would run the device while its user sleeps on the channel.
 */
static struct swv_cq *
cq_alloc(struct ibv_context *context, uint32_t cqe, uint64_t wc_flags,
	 struct ibv_comp_channel *channel)
{
	struct swv_device *dev = swv_ctx_dev(context);
	struct swv_cq *cq;
	uint32_t size = 1;

	if (cqe == 0 || cqe > SWV_MAX_CQE ||
	    (channel != NULL && channel->context != context)) {
		errno = EINVAL;
		return NULL;
	}
	if (channel != NULL && swv_dev_inline(dev)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	while (size < cqe)
		size <<= 1;
	cq = swv_zalloc_aligned(sizeof(*cq));
	if (cq == NULL)
		goto err_nomem;
	cq->wc_flags = wc_flags;
	cq->want_ts = (wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP) != 0;
	/*
	 * Full CQEs only where the timestamp or the VLAN is asked for; they
	 * carry the checksum status too.
	 */
	cq->compact = !cq->want_ts && !(wc_flags & IBV_WC_EX_WITH_CVLAN);
	cq->want_ol = !cq->compact;
	cq->shift = cq->compact ? 4 : 5;
	/* Line-aligned: the prefetches ahead fetch each line once. */
	cq->cqes = swv_zalloc_aligned((size_t)size << cq->shift);
	if (cq->cqes == NULL)
		goto err_free;
	cq->mask = size - 1;
	cq->ibv_cq.context = context;
	cq->ibv_cq.cqe = (int)size;
	pthread_mutex_init(&cq->ibv_cq.mutex, NULL);
	pthread_cond_init(&cq->ibv_cq.cond, NULL);
	cq->ibv_cq.start_poll = cq_start_poll;
	cq->ibv_cq.next_poll = cq_next_poll;
	cq->ibv_cq.end_poll = cq_end_poll;
	cq->ibv_cq.read_opcode = cq_read_opcode;
	cq->ibv_cq.read_vendor_err = cq_read_vendor_err;
	cq->ibv_cq.read_byte_len = cq_read_byte_len;
	cq->ibv_cq.read_qp_num = cq_read_qp_num;
	cq->ibv_cq.read_imm_data = cq_read_imm_data;
	cq->ibv_cq.read_src_qp = cq_read_zero32;
	cq->ibv_cq.read_slid = cq_read_zero32;
	cq->ibv_cq.read_sl = cq_read_zero8;
	cq->ibv_cq.read_dlid_path_bits = cq_read_zero8;
	cq->ibv_cq.read_wc_flags = cq_read_wc_flags;
	cq->ibv_cq.read_flow_tag = cq_read_flow_tag;
	cq->ibv_cq.read_completion_ts = cq_read_completion_ts;
	cq->ibv_cq.read_cvlan = cq_read_cvlan;

	pthread_mutex_lock(&swv_lock);
	if (dev->ncq >= SWV_MAX_CQ) {
		pthread_mutex_unlock(&swv_lock);
		free(cq->cqes);
		goto err_free;
	}
	dev->ncq++;
	cq->ibv_cq.handle = dev->ncq;
	/* The device's engine stays while a context is open on it. */
	cq->idev = swv_dev_inline(dev) ? dev : NULL;
	to_swv_ctx(context)->objs++;
	pthread_mutex_unlock(&swv_lock);
	if (channel != NULL && swv_cq_channel_attach(cq, channel) != 0) {
		pthread_mutex_lock(&swv_lock);
		dev->ncq--;
		to_swv_ctx(context)->objs--;
		pthread_mutex_unlock(&swv_lock);
		free(cq->cqes);
		goto err_free;
	}
	return cq;

err_free:
	free(cq);
err_nomem:
	errno = ENOMEM;
	return NULL;
}

struct ibv_cq *
swv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
	      struct ibv_comp_channel *channel, int comp_vector)
{
	struct swv_cq *cq;

	if (context == NULL || cqe <= 0 || comp_vector != 0) {
		errno = EINVAL;
		return NULL;
	}
	cq = cq_alloc(context, (uint32_t)cqe, 0, channel);
	if (cq == NULL)
		return NULL;
	cq->ibv_cq.cq_context = cq_context;
	return ibv_cq_ex_to_cq(&cq->ibv_cq);
}

struct ibv_cq_ex *
swv_create_cq_ex(struct ibv_context *context, struct ibv_cq_init_attr_ex *attr)
{
	struct swv_cq *cq;

	if (context == NULL || attr == NULL || attr->comp_vector != 0) {
		errno = EINVAL;
		return NULL;
	}
	if ((attr->comp_mask & ~(uint32_t)IBV_CQ_INIT_ATTR_MASK_FLAGS) != 0 ||
	    (attr->wc_flags & ~(uint64_t)SWV_WC_EX_SUPPORTED) != 0) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	cq = cq_alloc(context, attr->cqe, attr->wc_flags, attr->channel);
	if (cq == NULL)
		return NULL;
	cq->ibv_cq.cq_context = attr->cq_context;
	return &cq->ibv_cq;
}

/* Whether CQE idx is of queue number num (recv_only: a receive of it). */
static bool
cqe_of(const struct swv_cq *cq, uint32_t idx, uint32_t num, bool recv_only)
{
	if (cq->compact) {
		uint64_t info = cqe16(cq, idx)->info;

		return (!recv_only || (info & SWV_CQI_RECV)) &&
		       ((uint32_t)info & SWV_CQI_QPN_MASK) == num;
	}
	return (!recv_only || cqe_full(cq, idx)->opcode == IBV_WC_RECV) &&
	       cqe_full(cq, idx)->qp_num == num;
}

unsigned int
swv_cq_clean(struct swv_cq *cq, uint32_t num, bool recv_only)
{
	uint32_t tail = cq->tail, head = SWV_LOAD_ACQ(&cq->head);
	size_t sz = (size_t)1 << cq->shift;
	uint32_t i = head, freed = 0;

	/* From the newest down: the ones kept move up over the freed. */
	while (i != tail) {
		i--;
		if (cqe_of(cq, i, num, recv_only))
			freed++;
		else if (freed > 0)
			memcpy(cq->cqes + ((size_t)((i + freed) & cq->mask) <<
					   cq->shift),
			       cq->cqes + ((size_t)(i & cq->mask) << cq->shift),
			       sz);
	}
	cq->ahead = head;
	if (freed > 0)
		SWV_STORE_REL(&cq->tail, tail + freed);
	return freed;
}

int
swv_destroy_cq(struct ibv_cq *ibcq)
{
	struct swv_cq *cq;
	int ret;

	if (ibcq == NULL)
		return EINVAL;
	cq = to_swv_cq(ibcq);
	pthread_mutex_lock(&swv_lock);
	if (cq->refs > 0) {
		pthread_mutex_unlock(&swv_lock);
		return EBUSY;
	}
	pthread_mutex_unlock(&swv_lock);
	/* No QP or WQ left to complete on it: the engine is done with it. */
	ret = swv_cq_channel_detach(cq);
	if (ret != 0)
		return ret;
	pthread_mutex_lock(&swv_lock);
	swv_ctx_dev(ibcq->context)->ncq--;
	to_swv_ctx(ibcq->context)->objs--;
	pthread_mutex_unlock(&swv_lock);
	pthread_mutex_destroy(&cq->ibv_cq.mutex);
	pthread_cond_destroy(&cq->ibv_cq.cond);
	free(cq->cqes);
	free(cq);
	return 0;
}
