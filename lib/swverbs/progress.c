/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Inline progress: devices with no thread serving them. A device created on
 * the inline engine (swv_engine_inline()) does its work inside the verbs
 * calls its user makes already:
 *   - ibv_post_send() drains the device's send queues to the wire as it
 *     posts (tx.c's one drain: gather, gate, wire, CQEs);
 *   - polling a CQ of the device (ibv_start_poll(), ibv_poll_cq()) that is
 *     empty pulls from the wire (rx.c: parse, lookup, scatter, CQEs) and
 *     drains the sends left posted, then looks again.
 * Link checks and async events happen from those calls too, paced by the
 * coarse clock as on an engine thread.
 *
 * Ownership. Whoever does a device's work holds it: inl_own, taken with an
 * exchange that never waits. A call that cannot take it asks the owner for
 * the work instead (inl_want, a count the owner reads when it takes the
 * device and again after it lets go: if it changed, the owner goes round
 * once more), so nothing posted waits for a later call while an owner is
 * there. The two ends of a pair cable hand frames to each other: draining
 * one end's sends writes the other end's receive queues and CQs, so the
 * drain needs both ends. A call that holds its device but not the peer
 * leaves the sends posted (backpressure: nothing is lost), asks the peer's
 * owner, and flags both ends (inl_backlog), so that the next call on either
 * end, a poll of an empty CQ included, drains them. A call that holds both
 * does the work of both.
 *
 * One owner covers the device's Rx and Tx sides together: they share the
 * port counters' accumulator and may share a CQ (a RAW_PACKET QP's send and
 * receive queues on one CQ), which must have a single producer.
 *
 * What a call did is published (CQ heads, ring tails, counters) from a
 * pending list on its own stack, before it lets go of the devices.
 *
 * RCU. A thread making inline calls becomes a liburcu-qsbr reader: it is
 * registered on its first call (and unregistered when it exits) and is
 * online only inside a call that works, so synchronize_rcu() on the control
 * path never waits for a thread that stopped calling. A thread that is
 * online already (it uses liburcu-qsbr for its own data) stays online: it
 * then reports its own quiescent states between calls.
 *
 * Cost. A call that finds nothing to do (a poll of an empty CQ on an
 * in-memory wire with nothing left posted and no link check due) reads one
 * flag and the coarse clock. A call that works pays one exchange per device
 * held, the RCU online/offline fences and the publication, per burst.
 */

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "swv_engine.h"

/* WQEs a pass takes from one send queue at most. */
#define SWV_INL_TX_BUDGET 256
/* Frames a pass pulls from a wire at most. */
#define SWV_INL_RX_BUDGET 64
/* Passes one call runs for other callers' requests at most. */
#define SWV_INL_ROUNDS 8

static struct swv_engine swv_inline_engine = {
	.bell_fd = -1,
	.cpu = -1,
	.inl = true,
	.devs = CDS_LIST_HEAD_INIT(swv_inline_engine.devs),
};

struct swv_engine *
swv_engine_inline(void)
{
	return &swv_inline_engine;
}

/* Take dev without waiting. Return: whether the caller holds it now. */
static inline bool
inl_take(struct swv_device *dev)
{
	return SWV_LOAD(&dev->inl_own) == 0 &&
	       __atomic_exchange_n(&dev->inl_own, 1, __ATOMIC_ACQUIRE) == 0;
}

static inline void
inl_give(struct swv_device *dev)
{
	__atomic_store_n(&dev->inl_own, 0, __ATOMIC_RELEASE);
}

void
swv_inline_link_sync(struct swv_device *dev)
{
	/* A pass is short and never takes swv_lock: wait for it. */
	while (!inl_take(dev))
		sched_yield();
	swv_link_check(dev, swv_now_coarse_ns());
	inl_give(dev);
}

void
swv_inline_add(struct swv_device *dev, struct swv_device *peer)
{
	dev->inl_pull = !dev->wire->rx_pushed;
	SWV_STORE(&dev->inl_own, 0);
	SWV_STORE(&dev->inl_backlog, 0);
	/* Calls may work the device (and its wire, set before) from now. */
	SWV_STORE_REL(&dev->inl_live, 1);
	if (peer != NULL) {
		rcu_assign_pointer(dev->inl_peer, peer);
		rcu_assign_pointer(peer->inl_peer, dev);
		/*
		 * The cable is plugged: the peer, which may see no call for
		 * a while, raises its link event now, as a NIC would.
		 */
		swv_inline_link_sync(peer);
	}
}

void
swv_inline_del(struct swv_device *dev)
{
	struct swv_device *peer = dev->inl_peer;

	/*
	 * swv_engine_del() waits for a grace period after this: then no call
	 * works the device (its wire may be replaced, or the device freed).
	 */
	SWV_STORE(&dev->inl_live, 0);
	if (peer != NULL)
		rcu_assign_pointer(peer->inl_peer, NULL);
	rcu_assign_pointer(dev->inl_peer, NULL);
}

/*
 * The QSBR reader side, for inline calls and swv_engine_run_once(): a key
 * whose destructor unregisters the thread when it exits.
 */
static pthread_key_t swv_reader_key;
static pthread_once_t swv_reader_once = PTHREAD_ONCE_INIT;

static void
reader_key_done(void *arg)
{
	(void)arg;
	rcu_unregister_thread();
}

static void
reader_key_init(void)
{
	if (pthread_key_create(&swv_reader_key, reader_key_done) != 0)
		abort();	/* no key left: the process cannot go on */
}

void
swv_reader_register(void)
{
	pthread_once(&swv_reader_once, reader_key_init);
	rcu_register_thread();
	rcu_thread_offline();
	pthread_setspecific(swv_reader_key, &swv_reader_key);
}

/*
 * Take dev, or ask its owner for the work: the request is counted before a
 * second try, so that either the owner sees it after letting go, or the
 * second try finds the device free.
 */
static inline bool
inl_take_or_ask(struct swv_device *dev)
{
	if (SWV_LIKELY(inl_take(dev)))
		return true;
	__atomic_fetch_add(&dev->inl_want, 1, __ATOMIC_SEQ_CST);
	return inl_take(dev);
}

/*
 * A held device's work: wire Rx, send queues (only with @tx: the device
 * and the peer its frames go to are held), flushes of queues in error, the
 * wire's Tx kick, the link check when due. Return: the work found.
 */
/* One QP's sends (only with @tx); *more: WQEs left. Return: the work. */
static unsigned int
inl_qp(struct swv_qp *qp, bool tx, bool *more)
{
	unsigned int n = 0, k, i;

	if (SWV_UNLIKELY(!tx) && SWV_LOAD_ACQ(&qp->state) == IBV_QPS_RTS) {
		*more |= swv_ring_avail(&qp->sq) > 0;
		return 0;
	}
	/*
	 * Until caught up with the head (which the drain reads only when its
	 * copy says empty), or stuck (CQ full, wire busy).
	 */
	i = 0;
	do {
		k = swv_qp_process(qp, SWV_INL_TX_BUDGET);
		n += k;
	} while (k > 0 && ++i < SWV_INL_ROUNDS &&
		 SWV_LOAD(&qp->state) == IBV_QPS_RTS &&
		 swv_ring_avail(&qp->sq) > 0);
	/*
	 * WQEs left (CQ full, wire busy, or posted after the drain read the
	 * head): the next call goes on with them.
	 */
	if (SWV_LOAD(&qp->state) == IBV_QPS_RTS)
		*more |= swv_ring_avail(&qp->sq) > 0;
	return n;
}

static unsigned int
inl_work(struct swv_device *dev, bool tx, uint64_t now)
{
	struct swv_wire *wire = dev->wire;
	struct cds_list_head *node;
	struct swv_wq *wq;
	unsigned int n = 0;
	bool more = false, run;
	uint32_t i;

	if (dev->inl_pull)
		n = wire->ops->rx_burst(wire, SWV_INL_RX_BUDGET);
	run = swv_run_sync(dev);	/* the QPs to visit: not the waiting */
	if (SWV_UNLIKELY(dev->wheel != NULL)) {
		swv_pace_advance(dev);	/* paced QPs now due */
		/* QPs waiting on the wheel: the next call looks again. */
		more |= SWV_LOAD(&dev->wheel->n) > 0;
	}
	if (SWV_LIKELY(run)) {
		for (i = 0; i < dev->nrun; ) {
			n += inl_qp(dev->run[i], tx, &more);
			i += swv_run_keep(dev, i);
		}
	} else {
		cds_list_for_each_rcu(node, &dev->qps)
			n += inl_qp(cds_list_entry(node, struct swv_qp, node),
				    tx, &more);
	}
	cds_list_for_each_rcu(node, &dev->wqs) {
		wq = cds_list_entry(node, struct swv_wq, node);
		if (SWV_UNLIKELY(SWV_LOAD(&wq->rq.state) == SWV_RQ_ERR))
			n += swv_rq_flush(dev->pend, &wq->rq);
	}
	wire->ops->tx_flush(wire);
	if (SWV_UNLIKELY(more))
		SWV_STORE(&dev->inl_backlog, 1);
	if (SWV_UNLIKELY(now >= dev->next_link_check))
		swv_link_check(dev, now);
	return n;
}

/*
 * Do dev's work (and its pair peer's, when the peer can be taken too and
 * @pull asks for it, it has sends left or someone asked), once, then again
 * while other callers asked for it. The caller is online.
 */
static void
inl_run(struct swv_device *dev, bool pull)
{
	struct swv_pending pend;
	struct swv_device *peer;
	uint32_t seen, pseen = 0;
	unsigned int round;
	bool both, asked;
	uint64_t now;

	pend.ncq = 0;
	pend.nring = 0;
	pend.ndev = 0;
	pend.ts = 0;
	for (round = 0; round < SWV_INL_ROUNDS; round++) {
		if (!inl_take_or_ask(dev))
			return;	/* its owner does the work */
		if (SWV_UNLIKELY(!SWV_LOAD_ACQ(&dev->inl_live))) {
			/* leaving the engine (rebind, destroy): hands off */
			inl_give(dev);
			return;
		}
		seen = __atomic_load_n(&dev->inl_want, __ATOMIC_SEQ_CST);
		dev->pend = &pend;
		peer = rcu_dereference(dev->inl_peer);
		both = peer == NULL || peer == dev;
		if (!both && inl_take_or_ask(peer)) {
			both = true;
			pseen = __atomic_load_n(&peer->inl_want,
						__ATOMIC_SEQ_CST);
			peer->pend = &pend;
		}
		now = swv_now_coarse_ns();
		if (both) {
			SWV_STORE(&dev->inl_backlog, 0);
			/*
			 * A send needs the peer held, not its work (its own
			 * calls do that), unless it has sends left or this
			 * round runs for someone's request.
			 */
			if (peer != NULL && peer != dev &&
			    (pull || round > 0 ||
			     SWV_LOAD(&peer->inl_backlog) != 0)) {
				SWV_STORE(&peer->inl_backlog, 0);
				inl_work(peer, true, now);
			}
		}
		inl_work(dev, both, now);
		if (!both) {
			/* Sends left for the peer: a call on either end. */
			SWV_STORE(&dev->inl_backlog, 1);
			SWV_STORE(&peer->inl_backlog, 1);
		}
		swv_publish(&pend);
		if (both && peer != NULL && peer != dev)
			inl_give(peer);
		inl_give(dev);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		asked = __atomic_load_n(&dev->inl_want, __ATOMIC_RELAXED) !=
			seen;
		if (both && peer != NULL && peer != dev)
			asked |= __atomic_load_n(&peer->inl_want,
						 __ATOMIC_RELAXED) != pseen;
		if (!asked)
			return;
	}
	/* Still asked after the last round: the next call looks again. */
	SWV_STORE(&dev->inl_backlog, 1);
}

void
swv_inline_tx(struct swv_device *dev)
{
	bool leave = swv_reader_enter();

	inl_run(dev, false);
	swv_reader_leave(leave);
}

void
swv_inline_poll(struct swv_device *dev)
{
	bool leave;

	/* Nothing to pull, nothing left posted, no link check due. */
	if (SWV_LIKELY(!dev->inl_pull &&
		       SWV_LOAD(&dev->inl_backlog) == 0) &&
	    swv_now_coarse_ns() < SWV_LOAD(&dev->next_link_check))
		return;
	leave = swv_reader_enter();
	inl_run(dev, true);
	swv_reader_leave(leave);
}

void
swv_inline_link(struct swv_device *dev)
{
	bool leave;

	/* Due now: this call, or the owner's pass, checks it. */
	SWV_STORE(&dev->next_link_check, 0);
	leave = swv_reader_enter();
	inl_run(dev, true);
	swv_reader_leave(leave);
}
