/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Protection domains and memory regions.
 *
 * An lkey is (generation << SWV_MR_BITS) | slot: the slot indexes the
 * process-wide MR table that the engine reads under RCU, the generation makes
 * a stale lkey of a freed slot fail the check instead of naming the slot's
 * next MR. Slot 0 is never used, so no lkey is 0.
 */

#include <errno.h>
#include <stdlib.h>

#include "swv_priv.h"

struct swv_mr *swv_mr_table[1u << SWV_MR_BITS];
static uint32_t swv_mr_gen[1u << SWV_MR_BITS];
static uint32_t swv_mr_next = 1;

struct ibv_pd *
swv_alloc_pd(struct ibv_context *context)
{
	struct swv_device *dev;
	struct swv_pd *pd;

	if (context == NULL) {
		errno = EINVAL;
		return NULL;
	}
	dev = swv_ctx_dev(context);
	pd = calloc(1, sizeof(*pd));
	if (pd == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	pd->ibv_pd.context = context;
	pthread_mutex_lock(&swv_lock);
	if (dev->npd >= SWV_MAX_PD) {
		pthread_mutex_unlock(&swv_lock);
		free(pd);
		errno = ENOMEM;
		return NULL;
	}
	dev->npd++;
	pd->ibv_pd.handle = dev->npd;
	to_swv_ctx(context)->objs++;
	pthread_mutex_unlock(&swv_lock);
	return &pd->ibv_pd;
}

int
swv_dealloc_pd(struct ibv_pd *ibpd)
{
	struct swv_pd *pd;

	if (ibpd == NULL)
		return EINVAL;
	pd = to_swv_pd(ibpd);
	pthread_mutex_lock(&swv_lock);
	if (pd->refs > 0) {
		pthread_mutex_unlock(&swv_lock);
		return EBUSY;
	}
	swv_ctx_dev(ibpd->context)->npd--;
	to_swv_ctx(ibpd->context)->objs--;
	pthread_mutex_unlock(&swv_lock);
	free(pd);
	return 0;
}

#define SWV_ACCESS_KNOWN (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
			  IBV_ACCESS_RELAXED_ORDERING)

struct ibv_mr *
swv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	struct swv_mr *mr;
	uint32_t slot, i;

	if (pd == NULL || length == 0 || (access & ~SWV_ACCESS_KNOWN) != 0 ||
	    (uintptr_t)addr + length < (uintptr_t)addr) {
		errno = EINVAL;
		return NULL;
	}
	/* Remote write or atomic access needs local write, as in verbs. */
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE)) {
		errno = EINVAL;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	mr->start = (uintptr_t)addr;
	mr->end = (uintptr_t)addr + length;
	mr->access = access;
	mr->vmr.mr_type = 0;	/* IBV_MR_TYPE_MR */
	mr->vmr.access = access;
	mr->ibv_mr.context = pd->context;
	mr->ibv_mr.pd = pd;
	mr->ibv_mr.addr = addr;
	mr->ibv_mr.length = length;

	pthread_mutex_lock(&swv_lock);
	slot = 0;
	for (i = 0; i < SWV_MAX_MR; i++) {
		uint32_t s = (swv_mr_next + i - 1) % SWV_MAX_MR + 1;

		if (swv_mr_table[s] == NULL) {
			slot = s;
			break;
		}
	}
	if (slot == 0) {
		pthread_mutex_unlock(&swv_lock);
		free(mr);
		errno = ENOMEM;
		return NULL;
	}
	swv_mr_next = slot % SWV_MAX_MR + 1;
	swv_mr_gen[slot] = (swv_mr_gen[slot] + 1) & 0xffff;
	mr->ibv_mr.lkey = (swv_mr_gen[slot] << SWV_MR_BITS) | slot;
	mr->ibv_mr.rkey = mr->ibv_mr.lkey;
	mr->ibv_mr.handle = mr->ibv_mr.lkey;
	to_swv_pd(pd)->refs++;
	to_swv_ctx(pd->context)->objs++;
	rcu_assign_pointer(swv_mr_table[slot], mr);
	pthread_mutex_unlock(&swv_lock);
	return &mr->ibv_mr;
}

int
swv_dereg_mr(struct ibv_mr *ibmr)
{
	struct swv_mr *mr;
	uint32_t slot;

	if (ibmr == NULL)
		return EINVAL;
	mr = to_swv_mr(ibmr);
	slot = ibmr->lkey & ((1u << SWV_MR_BITS) - 1);
	pthread_mutex_lock(&swv_lock);
	if (swv_mr_table[slot] != mr) {
		pthread_mutex_unlock(&swv_lock);
		return EINVAL;
	}
	rcu_assign_pointer(swv_mr_table[slot], NULL);
	synchronize_rcu();	/* the engine no longer uses it */
	to_swv_pd(ibmr->pd)->refs--;
	to_swv_ctx(ibmr->context)->objs--;
	pthread_mutex_unlock(&swv_lock);
	free(mr);
	return 0;
}
