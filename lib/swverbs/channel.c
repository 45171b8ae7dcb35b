/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Completion channels and CQ events (ibv_create_comp_channel(3),
 * ibv_req_notify_cq(3), ibv_get_cq_event(3)).
 *
 * A channel is an eventfd in semaphore mode: each event adds one, each read
 * takes one, so channel->fd is readable while an event waits, and a read
 * blocks unless the user made the fd non-blocking (fcntl O_NONBLOCK, as
 * with rdma-core). Which CQ an event is for is kept beside it, in the
 * channel's list of fired CQs.
 *
 * Arming is one-shot. As on a ConnectX (mlx5's arm doorbell carries the
 * consumer index), an armed CQ raises its event as soon as it holds a CQE
 * the application has not polled: a CQE that arrived before the arm and is
 * still in the CQ raises it at once, so "poll until empty, arm, sleep" never
 * sleeps on a frame. solicited_only arms for the next completion in error
 * (a raw Ethernet frame has no solicited bit). The engine looks at the arm
 * only for CQs with a channel, once per publication of the CQ's head.
 *
 * The arm (application) and the publication (engine) each store, then load
 * what the other stored: a full fence on each side, so that at least one of
 * them sees the other and the event is not lost.
 *
 * Destroying a CQ drops its events not read yet (as the kernel does); one
 * with events read and not acknowledged (ibv_ack_cq_events()) is refused
 * with EBUSY, where libibverbs would wait.
 *
 * Through the provider door (provider.c) the channel is libibverbs': its
 * fd is a datagram socket the preload object made (provider_preload.c),
 * and libibverbs' ibv_get_cq_event() reads each event from it as the
 * kernel writes one, the CQ's address in 8 bytes. The CQ then takes its
 * events on a stand-in channel of its own whose kfd is that socket: the
 * arm is the same, and the event is sent to kfd instead of being queued.
 * Events of a CQ destroyed before they are read stay in the socket, and
 * libibverbs would read a freed CQ: read them first (the kernel drops
 * them).
 */

#include <errno.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "swv_priv.h"

struct ibv_comp_channel *
swv_create_comp_channel(struct ibv_context *context)
{
	struct swv_comp_channel *ch;

	if (context == NULL) {
		errno = EINVAL;
		return NULL;
	}
	ch = calloc(1, sizeof(*ch));
	if (ch == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ch->ibv_ch.fd = eventfd(0, EFD_SEMAPHORE | EFD_CLOEXEC);
	if (ch->ibv_ch.fd < 0) {
		int err = errno;

		free(ch);
		errno = err;
		return NULL;
	}
	ch->ibv_ch.context = context;
	ch->kfd = -1;
	pthread_spin_init(&ch->lock, PTHREAD_PROCESS_PRIVATE);
	CDS_INIT_LIST_HEAD(&ch->fired);
	pthread_mutex_lock(&swv_lock);
	to_swv_ctx(context)->objs++;
	pthread_mutex_unlock(&swv_lock);
	return &ch->ibv_ch;
}

int
swv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct swv_comp_channel *ch;

	if (channel == NULL)
		return EINVAL;
	ch = container_of(channel, struct swv_comp_channel, ibv_ch);
	pthread_mutex_lock(&swv_lock);
	if (channel->refcnt > 0) {
		pthread_mutex_unlock(&swv_lock);
		return EBUSY;
	}
	to_swv_ctx(channel->context)->objs--;
	pthread_mutex_unlock(&swv_lock);
	close(channel->fd);
	pthread_spin_destroy(&ch->lock);
	free(ch);
	return 0;
}

int
swv_cq_channel_attach(struct swv_cq *cq, struct ibv_comp_channel *channel)
{
	struct swv_comp_channel *kch;

	cq->ibv_cq.channel = channel;
	CDS_INIT_LIST_HEAD(&cq->ev_node);
	if (to_swv_ctx(channel->context)->provider) {
		/* libibverbs counts the CQ on its channel (verbs_init_cq()) */
		kch = calloc(1, sizeof(*kch));
		if (kch == NULL)
			return ENOMEM;
		kch->ibv_ch.context = channel->context;
		kch->ibv_ch.fd = -1;
		kch->kfd = channel->fd;
		pthread_spin_init(&kch->lock, PTHREAD_PROCESS_PRIVATE);
		CDS_INIT_LIST_HEAD(&kch->fired);
		cq->kch = kch;
		cq->channel = kch;
		return 0;
	}
	cq->channel = container_of(channel, struct swv_comp_channel, ibv_ch);
	pthread_mutex_lock(&swv_lock);
	channel->refcnt++;
	pthread_mutex_unlock(&swv_lock);
	return 0;
}

int
swv_cq_channel_detach(struct swv_cq *cq)
{
	struct swv_comp_channel *ch = cq->channel;
	uint32_t acked;

	if (ch == NULL)
		return 0;
	pthread_mutex_lock(&cq->ibv_cq.mutex);
	acked = cq->ibv_cq.comp_events_completed;
	pthread_mutex_unlock(&cq->ibv_cq.mutex);
	pthread_spin_lock(&ch->lock);
	if (cq->ev_got != acked) {
		pthread_spin_unlock(&ch->lock);
		return EBUSY;
	}
	/* No arm left: the engine no longer queues events for it. */
	__atomic_store_n(&cq->armed, SWV_ARM_NONE, __ATOMIC_SEQ_CST);
	if (cq->ev_queued > 0) {
		cds_list_del(&cq->ev_node);
		cq->ev_queued = 0;
	}
	pthread_spin_unlock(&ch->lock);
	cq->channel = NULL;
	if (cq->kch != NULL) {
		pthread_spin_destroy(&cq->kch->lock);
		free(cq->kch);
		cq->kch = NULL;
		return 0;
	}
	pthread_mutex_lock(&swv_lock);
	ch->ibv_ch.refcnt--;
	pthread_mutex_unlock(&swv_lock);
	return 0;
}

/* Whether one of the CQEs [from, to) completed in error. */
static bool
cq_has_error(const struct swv_cq *cq, uint32_t from, uint32_t to)
{
	for (; from != to; from++) {
		uint32_t i = from & cq->mask;
		uint8_t status;

		if (cq->compact)
			status = swv_cqi_status(
				((const struct swv_cqe16 *)cq->cqes)[i].info);
		else
			status = ((const struct swv_cqe *)cq->cqes)[i].status;
		if (status != IBV_WC_SUCCESS)
			return true;
	}
	return false;
}

/* Take the arm of a CQ that holds CQEs [from, to), and queue its event. */
static void
cq_fire(struct swv_cq *cq, uint32_t from, uint32_t to)
{
	struct swv_comp_channel *ch = cq->channel;
	uint32_t armed = __atomic_load_n(&cq->armed, __ATOMIC_SEQ_CST);
	uint64_t one = 1;

	if (armed == SWV_ARM_NONE)
		return;
	if (armed == SWV_ARM_SOL && !cq_has_error(cq, from, to))
		return;
	if (!__atomic_compare_exchange_n(&cq->armed, &armed, SWV_ARM_NONE,
					 false, __ATOMIC_SEQ_CST,
					 __ATOMIC_RELAXED))
		return;		/* the other side took it */
	if (ch->kfd >= 0) {
		uint64_t handle = (uintptr_t)ibv_cq_ex_to_cq(&cq->ibv_cq);

		/*
		 * Never blocks the engine. A socket with no room (some
		 * hundreds of events not read, one per arm) loses the event.
		 */
		ssize_t n = send(ch->kfd, &handle, sizeof(handle),
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		(void)n;
		return;
	}
	pthread_spin_lock(&ch->lock);
	if (cq->ev_queued++ == 0)
		cds_list_add_tail(&cq->ev_node, &ch->fired);
	pthread_spin_unlock(&ch->lock);
	/* An eventfd write blocks only at 2^64 - 2: never here. */
	if (write(ch->ibv_ch.fd, &one, sizeof(one)) != sizeof(one))
		abort();
}

void
swv_cq_notify(struct swv_cq *cq, uint32_t from)
{
	/* The head stored before the arm is loaded (see the head comment). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (SWV_LIKELY(__atomic_load_n(&cq->armed, __ATOMIC_RELAXED) ==
		       SWV_ARM_NONE))
		return;
	cq_fire(cq, from, cq->ehead);
}

int
swv_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct swv_cq *cq;
	uint32_t head;

	if (ibcq == NULL)
		return EINVAL;
	cq = to_swv_cq(ibcq);
	if (cq->channel == NULL)
		return EINVAL;	/* no channel to raise the event on */
	if (solicited_only) {
		uint32_t none = SWV_ARM_NONE;

		/* An arm for the next completion covers this one. */
		__atomic_compare_exchange_n(&cq->armed, &none, SWV_ARM_SOL,
					    false, __ATOMIC_SEQ_CST,
					    __ATOMIC_RELAXED);
	} else {
		__atomic_store_n(&cq->armed, SWV_ARM_NEXT, __ATOMIC_SEQ_CST);
	}
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	head = SWV_LOAD_ACQ(&cq->head);
	if (head != cq->tail)
		cq_fire(cq, cq->tail, head);
	return 0;
}

int
swv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq,
		 void **cq_context)
{
	struct swv_comp_channel *ch;
	struct swv_cq *c;
	uint64_t v;

	if (channel == NULL || cq == NULL || cq_context == NULL) {
		errno = EINVAL;
		return -1;
	}
	ch = container_of(channel, struct swv_comp_channel, ibv_ch);
	for (;;) {
		/* Blocks, or EAGAIN, as the user set the fd. */
		if (read(channel->fd, &v, sizeof(v)) != sizeof(v))
			return -1;
		pthread_spin_lock(&ch->lock);
		if (!cds_list_empty(&ch->fired))
			break;
		/* The event of a CQ destroyed since. */
		pthread_spin_unlock(&ch->lock);
	}
	c = cds_list_entry(ch->fired.next, struct swv_cq, ev_node);
	if (--c->ev_queued == 0)
		cds_list_del(&c->ev_node);
	c->ev_got++;
	pthread_spin_unlock(&ch->lock);
	*cq = ibv_cq_ex_to_cq(&c->ibv_cq);
	*cq_context = c->ibv_cq.cq_context;
	return 0;
}

void
swv_cq_event_read(struct ibv_cq *ibcq)
{
	struct swv_cq *cq = to_swv_cq(ibcq);
	struct swv_comp_channel *ch = cq->channel;

	if (ch == NULL)
		return;
	pthread_spin_lock(&ch->lock);
	cq->ev_got++;
	pthread_spin_unlock(&ch->lock);
}

void
swv_ack_cq_events(struct ibv_cq *ibcq, unsigned int nevents)
{
	if (ibcq == NULL)
		return;
	pthread_mutex_lock(&ibcq->mutex);
	ibcq->comp_events_completed += nevents;
	pthread_cond_signal(&ibcq->cond);
	pthread_mutex_unlock(&ibcq->mutex);
}

int
swv_cq_peek(struct ibv_cq_ex *ibcq, uint32_t *pending,
	    const volatile uint32_t **head, uint32_t *tail)
{
	struct swv_cq *cq;

	if (ibcq == NULL || pending == NULL || head == NULL || tail == NULL)
		return EINVAL;
	cq = to_swv_cq_ex(ibcq);
	*pending = SWV_LOAD_ACQ(&cq->head) - cq->tail;
	*head = cq->idev != NULL ? NULL : &cq->head;
	*tail = cq->tail;
	return 0;
}
