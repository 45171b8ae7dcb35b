/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The engine: the "NIC" of the swverbs devices assigned to it. A pass, for
 * each device: wire Rx (rx.c: steering, scatter into posted receive WQEs,
 * CQEs), send queue drain (tx.c: gather, wire Tx, CQEs), wire Tx flush,
 * publication of what the pass did, and every ~10 ms a link check that
 * raises async events.
 *
 * An engine is an object (struct swv_engine): its devices, its pending
 * (publication) list, its doorbell and sleep state, its statistics. A
 * process may run several; each device is served by one, the process-wide
 * default engine unless it was created on another (swv_device_create_attr())
 * or moved (swv_device_set_engine()). One thread at a time runs an engine's
 * passes:
 *   - its own thread (the default engine starts one with its first device
 *     and stops it with its last; another engine with swv_engine_start()):
 *     it busy-polls while it finds work; after SWV_IDLE_SPINS empty passes
 *     it sleeps in ppoll() on the wires' rx_fd()s with a timeout that
 *     doubles from 20 us to 1 ms, then (deep sleep) until a doorbell, so
 *     an idle process costs ~no CPU and a posted WQE waits at most ~1 ms;
 *     not while a wire says sends wait for room (tx_pending: a full shm
 *     ring, af_xdp frames a kick left), which comes without a wakeup:
 *     then it goes on sleeping 1 ms at most;
 *   - or, for an engine without a thread, whoever calls
 *     swv_engine_run_once(): one pass, no blocking, no sleep (a DPDK
 *     service, the PMD's own polling).
 *
 * Memory. An engine owns the memory of its devices' rules and counters
 * objects: a pool (pool.c) they come from and a retire list (classifier.c)
 * they go back through after a grace period. swv_engine_destroy() flushes
 * the list and unmaps the pool, so an engine that goes away leaves no
 * chunk behind; it refuses (EBUSY) while devices or objects are left.
 *
 * RCU. An engine is the only RCU reader (liburcu QSBR) of its devices: the
 * control path publishes with rcu_assign_pointer() / RCU lists and frees
 * after synchronize_rcu(), which waits for every engine's pass in progress.
 * The engine thread reports a quiescent state every pass and is offline
 * while it sleeps. A thread that calls swv_engine_run_once() must be a
 * registered QSBR reader that is offline between calls, so that a
 * synchronize_rcu() on the control path never waits for it; run_once does
 * that for its caller: it registers the calling thread on its first call
 * (and unregisters it when the thread exits), goes online for the pass and
 * offline after it. A caller that is itself an online QSBR reader (it uses
 * liburcu-qsbr for its own data) stays online: it must then report its
 * own quiescent states between calls, and no pointer to swverbs objects
 * survives them. Never call run_once inside a read-side critical section
 * of one's own, nor a swverbs control call (which may wait for a grace
 * period) from inside run_once's device callbacks.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "swv_engine.h"

#define SWV_RX_BUDGET 64
#define SWV_TX_BUDGET 64
#define SWV_IDLE_SPINS 256
#define SWV_SLEEP_MIN_NS 20000ull
#define SWV_SLEEP_MAX_NS 1000000ull
#define SWV_LINK_CHECK_NS 10000000ull
#define SWV_DEEP_SLEEP_NS 100000000ull	/* link checks while asleep */
#define SWV_MAX_FDS 64
/*
 * Paced QPs waiting: idle passes before a sleep; a departure nearer than
 * SWV_PACE_SPIN_NS and the engine's estimate of its oversleep (struct
 * swv_late) is spun for, a later one slept for, to that much before its
 * due time (a QP waits for half its bucket: the other half covers a
 * wake-up later than the estimate).
 */
#define SWV_PACE_IDLE_SPINS 16
#define SWV_PACE_SPIN_NS 20000ull

/* The process-wide default engine: a thread while it has devices. */
static struct swv_engine swv_default_engine = {
	.bell_fd = -1,
	.autothread = true,
	.cpu = -1,
	.devs = CDS_LIST_HEAD_INIT(swv_default_engine.devs),
};

/*
 * Publication.
 */
/* Add a device's pending counts to its published counters. */
static void
publish_counters(struct swv_device *dev)
{
	struct swv_port_counters *c = &dev->cnt, *a = &dev->acc;

	/*
	 * Totals before their parts: a reader that loads the parts, then
	 * (acquire) the totals, sees rx_frames >= the sum of the parts.
	 */
	SWV_STORE(&c->rx_frames, c->rx_frames + a->rx_frames);
	SWV_STORE(&c->rx_bytes, c->rx_bytes + a->rx_bytes);
	SWV_STORE(&c->tx_frames, c->tx_frames + a->tx_frames);
	SWV_STORE(&c->tx_bytes, c->tx_bytes + a->tx_bytes);
	SWV_STORE(&c->tx_errors, c->tx_errors + a->tx_errors);
	SWV_STORE(&c->tx_link_down, c->tx_link_down + a->tx_link_down);
	SWV_STORE(&c->tx_link_down_bytes,
		  c->tx_link_down_bytes + a->tx_link_down_bytes);
	SWV_STORE(&c->tx_mtu_dropped, c->tx_mtu_dropped + a->tx_mtu_dropped);
	SWV_STORE(&c->tx_mtu_dropped_bytes,
		  c->tx_mtu_dropped_bytes + a->tx_mtu_dropped_bytes);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	SWV_STORE(&c->rx_delivered, c->rx_delivered + a->rx_delivered);
	SWV_STORE(&c->rx_out_of_buffer,
		  c->rx_out_of_buffer + a->rx_out_of_buffer);
	SWV_STORE(&c->rx_no_match, c->rx_no_match + a->rx_no_match);
	SWV_STORE(&c->rx_errors, c->rx_errors + a->rx_errors);
	SWV_STORE(&c->rx_dropped, c->rx_dropped + a->rx_dropped);
	SWV_STORE(&c->rx_runts, c->rx_runts + a->rx_runts);
	SWV_STORE(&c->rx_mtu_dropped, c->rx_mtu_dropped + a->rx_mtu_dropped);
	SWV_STORE(&c->wire_faults, c->wire_faults + a->wire_faults);
	SWV_STORE(&c->rx_vport_dropped,
		  c->rx_vport_dropped + a->rx_vport_dropped);
	memset(a, 0, sizeof(*a));
	dev->acc_dirty = false;
}

void
swv_publish(struct swv_pending *p)
{
	unsigned int i;

	for (i = 0; i < p->ndev; i++)
		publish_counters(p->dev[i]);
	/* Counters are visible before the completions that follow them. */
	for (i = 0; i < p->nring; i++) {
		struct swv_wq_ring *r = p->ring[i];

		SWV_STORE_REL(&r->tail, r->ctail);
		r->dirty = false;
		r->epub++;
	}
	for (i = 0; i < p->ncq; i++) {
		struct swv_cq *cq = p->cq[i];
		uint32_t from = cq->head;

		SWV_STORE_REL(&cq->head, cq->ehead);
		if (SWV_UNLIKELY(cq->channel != NULL))
			swv_cq_notify(cq, from);
		cq->dirty = false;
		cq->epub++;
	}
	/*
	 * And what the rings gave back, after the completions: a poster that
	 * sees a slot done sees its CQE (swv_qp_sq_held()), while a CQE seen
	 * means its slot is free (tail, above).
	 */
	for (i = 0; i < p->nring; i++)
		SWV_STORE_REL(&p->ring[i]->done, p->ring[i]->ctail);
	p->ndev = 0;
	p->nring = 0;
	p->ncq = 0;
	p->ts = 0;
}

/*
 * @n faults of a wire's medium that took its link down (swv_wire.h):
 * counted on the device's port.
 */
void
swv_wire_fault(struct swv_wire *wire, uint32_t n)
{
	wire->dev->acc.wire_faults += n;
	swv_dev_dirty(wire->dev);
}

/*
 * The pass.
 */
/*
 * Link state and speed; a wire gone for good (its interface deleted) makes
 * the link go down and raises IBV_EVENT_DEVICE_FATAL once, as a NIC that
 * is unplugged does.
 */
void
swv_link_check(struct swv_device *dev, uint64_t now)
{
	struct swv_wire *wire = dev->wire;
	bool gone;
	uint32_t up;

	dev->next_link_check = now + SWV_LINK_CHECK_NS;
	up = wire->ops->link_up(wire) ? 1 : 0;
	gone = wire->ops->gone != NULL && wire->ops->gone(wire);
	if (gone)
		up = 0;
	else
		SWV_STORE(&dev->speed, wire->ops->speed_mbps(wire));
	swv_dev_mtu_sync_try(dev);	/* an MTU set from outside (ip link) */
	if (dev->vport != NULL && !gone)
		swv_vport_refresh(dev);	/* what the VF's netdev registered */
	if (up != SWV_LOAD(&dev->link)) {
		SWV_STORE(&dev->link, up);
		swv_device_event(dev, up ? IBV_EVENT_PORT_ACTIVE :
				 IBV_EVENT_PORT_ERR);
	}
	if (SWV_UNLIKELY(gone && !SWV_LOAD(&dev->removed))) {
		SWV_STORE(&dev->removed, 1);
		swv_device_event(dev, IBV_EVENT_DEVICE_FATAL);
	}
}

static unsigned int
device_work(struct swv_engine *eng, struct swv_device *dev, uint64_t now)
{
	struct swv_wire *wire = dev->wire;
	struct cds_list_head *node;
	struct swv_wq *wq;
	unsigned int n;
	uint32_t i;
	bool run;

	/*
	 * Node by node, cds_list_entry() on real nodes only: the _entry
	 * iterators take the container of the head, which is no such struct
	 * (UBSan: misaligned member access).
	 */
	n = wire->ops->rx_burst(wire, SWV_RX_BUDGET);
	run = swv_run_sync(dev);	/* the QPs to visit: not the waiting */
	if (SWV_UNLIKELY(dev->wheel != NULL))
		swv_pace_advance(dev);	/* paced QPs now due */
	if (SWV_LIKELY(run)) {
		for (i = 0; i < dev->nrun; ) {
			n += swv_qp_process(dev->run[i], SWV_TX_BUDGET);
			i += swv_run_keep(dev, i);
		}
	} else {
		cds_list_for_each_rcu(node, &dev->qps)
			n += swv_qp_process(cds_list_entry(node, struct swv_qp,
							   node),
					    SWV_TX_BUDGET);
	}
	cds_list_for_each_rcu(node, &dev->wqs) {
		wq = cds_list_entry(node, struct swv_wq, node);
		if (SWV_UNLIKELY(SWV_LOAD(&wq->rq.state) == SWV_RQ_ERR))
			n += swv_rq_flush(&eng->pend, &wq->rq);
	}
	wire->ops->tx_flush(wire);
	swv_publish(&eng->pend);
	if (now >= dev->next_link_check)
		swv_link_check(dev, now);
	return n;
}

/* One pass over the engine's devices. Return: the work found. */
static unsigned int
engine_work(struct swv_engine *eng, uint64_t now)
{
	struct cds_list_head *node;
	unsigned int work = 0;

	cds_list_for_each_rcu(node, &eng->devs)
		work += device_work(eng, cds_list_entry(node,
							struct swv_device,
							eng_node), now);
	SWV_STORE(&eng->passes, eng->passes + 1);
	if (work > 0)
		SWV_STORE(&eng->work_passes, eng->work_passes + 1);
	return work;
}

/* Whether a wire of the engine has sends that wait for room. */
static bool
engine_tx_pending(struct swv_engine *eng)
{
	struct cds_list_head *node;
	struct swv_wire *wire;

	cds_list_for_each_rcu(node, &eng->devs) {
		wire = cds_list_entry(node, struct swv_device,
				      eng_node)->wire;
		if (wire->ops->tx_pending != NULL &&
		    wire->ops->tx_pending(wire))
			return true;
	}
	return false;
}

/*
 * The engine's own thread.
 */
/* Return: ppoll()'s (0: the timeout ended the sleep). */
static int
engine_sleep(struct swv_engine *eng, uint64_t ns, bool bell)
{
	struct pollfd fds[SWV_MAX_FDS + 1];
	struct cds_list_head *node;
	struct swv_device *dev;
	struct timespec ts;
	uint64_t rings;
	nfds_t n = 0;
	int fd, ret;

	cds_list_for_each_rcu(node, &eng->devs) {
		dev = cds_list_entry(node, struct swv_device, eng_node);
		fd = dev->wire->ops->rx_fd(dev->wire);
		if (fd >= 0 && n < SWV_MAX_FDS) {
			fds[n].fd = fd;
			fds[n].events = POLLIN;
			fds[n].revents = 0;
			n++;
		}
	}
	if (bell) {
		fds[n].fd = eng->bell_fd;
		fds[n].events = POLLIN;
		fds[n].revents = 0;
		n++;
	}
	ts.tv_sec = (time_t)(ns / 1000000000ull);
	ts.tv_nsec = (long)(ns % 1000000000ull);
	rcu_thread_offline();
	ret = ppoll(fds, n, &ts, NULL);
	rcu_thread_online();
	if (bell) {
		SWV_STORE(&eng->deep_sleeps, eng->deep_sleeps + 1);
		if (fds[n - 1].revents & POLLIN)
			SWV_STORE(&eng->bell_wakes, eng->bell_wakes + 1);
		for (fd = 0; fd < (int)n - 1; fd++)
			if (fds[fd].revents & POLLIN)
				break;
		if (fd < (int)n - 1)
			SWV_STORE(&eng->fd_wakes, eng->fd_wakes + 1);
		SWV_STORE(&eng->asleep, 0);
		if (read(eng->bell_fd, &rings, sizeof(rings)) < 0)
			rings = 0;	/* nothing rang: EAGAIN */
	}
	return ret;
}

void
swv_engine_wake(struct swv_engine *eng)
{
	uint64_t one = 1;

	if (__atomic_exchange_n(&eng->asleep, 0, __ATOMIC_ACQ_REL) != 0 &&
	    write(eng->bell_fd, &one, sizeof(one)) < 0)
		return;	/* the counter is full: the engine is woken anyway */
}

/* Take the engine for its caller. Return: false if another thread has it. */
static inline bool
engine_take(struct swv_engine *eng)
{
	return __atomic_exchange_n(&eng->in_pass, 1, __ATOMIC_ACQUIRE) == 0;
}

static inline void
engine_give(struct swv_engine *eng)
{
	__atomic_store_n(&eng->in_pass, 0, __ATOMIC_RELEASE);
}

/*
 * A test hook, NULL but in tests: called by the engine thread just before
 * it sets asleep for a deep sleep (paced false) or a sleep until a paced
 * departure (paced true), so that a test can post in the window between
 * its last pass and the flag, where a post rings no doorbell.
 */
void (*swv_engine_sleep_hook)(struct swv_engine *eng, bool paced) = NULL;
void (*swv_engine_pace_late_hook)(struct swv_engine *eng, uint64_t wake,
				  uint64_t due, uint64_t late) = NULL;
uint64_t (*swv_engine_run_delay_hook)(struct swv_engine *eng) = NULL;

/*
 * The earliest departure of a paced QP on the engine's devices; with
 * @latest, the earliest full bucket too (swv_pace_window()).
 */
static uint64_t
engine_pace_window(struct swv_engine *eng, uint64_t *latest)
{
	struct cds_list_head *node;
	uint64_t next = UINT64_MAX, t, f;

	if (latest != NULL)
		*latest = UINT64_MAX;
	cds_list_for_each_rcu(node, &eng->devs) {
		t = swv_pace_window(cds_list_entry(node, struct swv_device,
						   eng_node),
				    latest != NULL ? &f : NULL);
		if (t < next)
			next = t;
		if (latest != NULL && f < *latest)
			*latest = f;
	}
	return next;
}

static uint64_t
engine_pace_next(struct swv_engine *eng)
{
	return engine_pace_window(eng, NULL);
}

/*
 * The engine thread's run-queue wait since the last call (schedstat, fd),
 * a sample of eng->rq: a sleep's, or the preemptions of a spin.
 */
/* How often a spinning engine reads its run-queue wait. */
#define SWV_RQ_LOOK_NS 1000000ull

static uint64_t
engine_rq(struct swv_engine *eng, int fd, uint64_t now)
{
	uint64_t rd = swv_engine_run_delay_hook != NULL ?
		      swv_engine_run_delay_hook(eng) : swv_run_delay_ns(fd), d;

	/* 0: the first read (of the thread, or after a test's hook) */
	d = eng->rq_last != 0 && rd > eng->rq_last ? rd - eng->rq_last : 0;
	eng->rq_last = rd;
	if (d > 0)
		swv_late_add(&eng->rq, now - d, now);
	return d;
}

/*
 * Idle passes, and paced QPs wait on the wheels: sleep until the earliest
 * departure less the estimate of how late the sleep will end, with the
 * doorbell armed so that a post ends the sleep, as in a deep sleep; spin
 * when the departure is nearer than that and SWV_PACE_SPIN_NS. A sleep
 * the timeout ended is a sample of its lateness, less the time the thread
 * then sat on this machine's run queue (sched_fd: its schedstat): that
 * comes from the other threads here and would come to a spinning thread
 * too (the scheduler preempts it, and sooner than a sleeper that woke);
 * what spinning saves is the rest, the wake-up a halted vCPU's host was
 * late to deliver. The run-queue waits have an estimate of their own
 * (eng->rq, from the sleeps and from the preemptions of the spins): while
 * it is the larger, the CPU is contended here and the engine sleeps to
 * the due time, as a spin would cost more than it saves. Return: false
 * when no QP waits (the usual idle path then), true otherwise.
 */
static bool
engine_pace_wait(struct swv_engine *eng, int sched_fd)
{
	uint64_t next = engine_pace_next(eng), now, ns, late, wake, rd;

	if (next == UINT64_MAX)
		return false;
	now = swv_now_ns();
	/*
	 * Preempted since the last look: at most once a millisecond while
	 * it spins (a read of procfs, not a departure's cost).
	 */
	if (now - eng->rq_look >= SWV_RQ_LOOK_NS) {
		eng->rq_look = now;
		engine_rq(eng, sched_fd, now);
	}
	late = swv_late_get(&eng->late, now);
	/*
	 * Other threads want this CPU more than the host is late: a spin
	 * would only spend the engine's share of it, and leave it later
	 * on the run queue at its next wake-up. Sleep to the due time.
	 */
	if (swv_late_get(&eng->rq, now) > late)
		late = 0;
	SWV_STORE(&eng->pace_late_ns, late);
	if (next <= now + late + SWV_PACE_SPIN_NS)
		return true;
	ns = next - now - late;
	if (ns > SWV_DEEP_SLEEP_NS)
		ns = SWV_DEEP_SLEEP_NS;	/* link checks */
	if (ns > SWV_SLEEP_MAX_NS && engine_tx_pending(eng))
		ns = SWV_SLEEP_MAX_NS;	/* room that comes without a wakeup */
	if (swv_engine_sleep_hook != NULL)
		swv_engine_sleep_hook(eng, true);
	SWV_STORE(&eng->asleep, 1);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (SWV_LOAD_ACQ(&eng->stop) ||
	    engine_work(eng, swv_now_coarse_ns()) > 0) {
		SWV_STORE(&eng->asleep, 0);	/* a post raced with the flag */
		return true;
	}
	/*
	 * That pass may have parked a QP posted before the flag (it sends
	 * nothing, and its post rang no doorbell): sleep no later than its
	 * departure, less the estimate.
	 */
	next = engine_pace_next(eng);
	now = swv_now_ns();
	if (next <= now + late + SWV_PACE_SPIN_NS) {
		SWV_STORE(&eng->asleep, 0);
		return true;
	}
	if (ns > next - now - late)
		ns = next - now - late;
	rcu_quiescent_state();
	SWV_STORE(&eng->pace_sleeps, eng->pace_sleeps + 1);
	wake = now + ns;
	engine_rq(eng, sched_fd, now);
	if (engine_sleep(eng, ns, true) == 0) {
		if (swv_engine_pace_late_hook != NULL)
			swv_engine_pace_late_hook(eng, wake, next, late);
		now = swv_now_ns();
		rd = engine_rq(eng, sched_fd, now);
		if (rd > now - wake)
			rd = now > wake ? now - wake : 0;
		swv_late_add(&eng->late, wake, now - rd);
	}
	return true;
}

static void *
engine_main(void *arg)
{
	struct swv_engine *eng = arg;
	unsigned int work, idle = 0;
	uint64_t sleep_ns = SWV_SLEEP_MIN_NS, now;
	int sched_fd;

	/* Short sleeps must stay short. */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	/* its run-queue waits (-1 without schedstats: counted as lateness) */
	sched_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	/* engine_thread_start() took the engine for this thread. */
	rcu_register_thread();
	while (!SWV_LOAD_ACQ(&eng->stop)) {
		/*
		 * The clock only paces link checks: a coarse one (vDSO, a few
		 * ns, a tick's resolution) read every loop, so that under any
		 * load a link or MTU change is seen within SWV_LINK_CHECK_NS
		 * and a tick, plus one loop.
		 */
		now = swv_now_coarse_ns();
		work = engine_work(eng, now);
		rcu_quiescent_state();
		if (work > 0) {
			idle = 0;
			sleep_ns = SWV_SLEEP_MIN_NS;
			continue;
		}
		if (++idle >= SWV_PACE_IDLE_SPINS &&
		    engine_pace_wait(eng, sched_fd)) {
			idle = 0;
			sleep_ns = SWV_SLEEP_MIN_NS;
			continue;
		}
		if (idle < SWV_IDLE_SPINS)
			continue;
		if (sleep_ns < SWV_SLEEP_MAX_NS || engine_tx_pending(eng)) {
			engine_sleep(eng, sleep_ns, false);
			sleep_ns *= 2;
			if (sleep_ns > SWV_SLEEP_MAX_NS)
				sleep_ns = SWV_SLEEP_MAX_NS;
			continue;
		}
		/*
		 * Idle for over a millisecond, and no send waits for room on
		 * a wire (room that comes without a wakeup: polled for every
		 * SWV_SLEEP_MAX_NS): ask posters for a doorbell,
		 * look once more (a post may have raced with the flag), then
		 * sleep until the doorbell, a wire's fd or the next link check.
		 */
		if (swv_engine_sleep_hook != NULL)
			swv_engine_sleep_hook(eng, false);
		SWV_STORE(&eng->asleep, 1);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (SWV_LOAD_ACQ(&eng->stop))
			break;
		now = swv_now_coarse_ns();
		work = engine_work(eng, now);
		/*
		 * A pass that parked a QP (a post before the flag, which rang
		 * no doorbell) sends nothing: then sleep until its departure
		 * (engine_pace_wait()), not for the deep sleep's length.
		 */
		if (work > 0 || engine_pace_next(eng) != UINT64_MAX) {
			SWV_STORE(&eng->asleep, 0);
			idle = 0;
			sleep_ns = SWV_SLEEP_MIN_NS;
			continue;
		}
		rcu_quiescent_state();
		engine_sleep(eng, SWV_DEEP_SLEEP_NS, true);
	}
	SWV_STORE(&eng->asleep, 0);
	if (sched_fd >= 0)
		close(sched_fd);
	rcu_unregister_thread();
	engine_give(eng);
	return NULL;
}

/*
 * The engine's CPU set: the one CPU it is pinned to, or every CPU. Never the
 * creating thread's set: that is often an application thread pinned to its
 * own core (a DPDK lcore), which the engine would then share with it.
 */
static void
engine_cpuset(int cpu, cpu_set_t *set)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	long i;

	CPU_ZERO(set);
	if (cpu >= 0) {
		CPU_SET(cpu, set);
		return;
	}
	for (i = 0; i < ncpu && i < CPU_SETSIZE; i++)
		CPU_SET(i, set);
}

/* Start the engine's thread (swv_lock held). */
static int
engine_thread_start(struct swv_engine *eng)
{
	pthread_attr_t attr;
	cpu_set_t set;
	int ret;

	eng->bell_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (eng->bell_fd < 0)
		return errno;
	/*
	 * The thread owns the engine from here on: a run_once() pass under
	 * way ends first (a pass is short), later ones get EBUSY.
	 */
	while (!engine_take(eng))
		sched_yield();
	pthread_attr_init(&attr);
	engine_cpuset(eng->cpu, &set);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	SWV_STORE(&eng->stop, 0);
	ret = pthread_create(&eng->thread, &attr, engine_main, eng);
	pthread_attr_destroy(&attr);
	if (ret != 0) {
		engine_give(eng);
		close(eng->bell_fd);
		eng->bell_fd = -1;
		return ret;
	}
	pthread_setname_np(eng->thread, "swv-engine");
	eng->running = true;
	return 0;
}

/* Stop the engine's thread (swv_lock held). */
static void
engine_thread_stop(struct swv_engine *eng)
{
	SWV_STORE_REL(&eng->stop, 1);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	swv_engine_wake(eng);
	pthread_join(eng->thread, NULL);
	eng->running = false;
	close(eng->bell_fd);
	eng->bell_fd = -1;
}

int
swv_engine_add(struct swv_engine *eng, struct swv_device *dev)
{
	int ret;

	struct swv_device *peer;

	if (eng == NULL)
		eng = &swv_default_engine;
	/* A wire that hands frames to a peer on our engine's thread. */
	peer = dev->wire->ops->peer != NULL ?
	       dev->wire->ops->peer(dev->wire) : NULL;
	if (peer != NULL && peer->eng != eng)
		return EXDEV;
	if (eng->autothread && eng->ndev == 0 && !eng->running) {
		ret = engine_thread_start(eng);
		if (ret != 0)
			return ret;
	}
	if (eng->inl)
		swv_inline_add(dev, peer);
	eng->ndev++;
	dev->eng = eng;
	dev->pend = &eng->pend;
	dev->next_link_check = 0;
	cds_list_add_tail_rcu(&dev->eng_node, &eng->devs);
	/* A new wire fd to sleep on, a pair peer's link to raise. */
	swv_engine_wake(eng);
	return 0;
}

void
swv_engine_del(struct swv_device *dev)
{
	struct swv_engine *eng = dev->eng;

	cds_list_del_rcu(&dev->eng_node);
	if (eng->inl)
		swv_inline_del(dev);
	swv_engine_wake(eng);
	synchronize_rcu();
	eng->ndev--;
	if (eng->autothread && eng->ndev == 0 && eng->running)
		engine_thread_stop(eng);
}

/*
 * The engine object's API (swverbs.h).
 */
struct swv_engine *
swv_engine_default(void)
{
	return &swv_default_engine;
}

struct swv_engine *
swv_engine_create(void)
{
	struct swv_engine *eng;

	eng = swv_zalloc_aligned(sizeof(*eng));
	if (eng == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	eng->bell_fd = -1;
	eng->cpu = -1;
	CDS_INIT_LIST_HEAD(&eng->devs);
	return eng;
}

int
swv_engine_destroy(struct swv_engine *eng)
{
	if (eng == NULL || eng == &swv_default_engine || eng->inl)
		return EINVAL;
	pthread_mutex_lock(&swv_lock);
	if (eng->ndev > 0) {
		pthread_mutex_unlock(&swv_lock);
		return EBUSY;
	}
	/*
	 * What its devices retired (the last ones may have moved away), then
	 * its chunks. No device: no object can be live, but say so if one is.
	 */
	swv_retire_flush(eng);
	if (swv_pool_release(&eng->pool) != 0) {
		pthread_mutex_unlock(&swv_lock);
		return EBUSY;
	}
	if (eng->running)
		engine_thread_stop(eng);
	pthread_mutex_unlock(&swv_lock);
	free(eng);
	return 0;
}

/* Whether the process may run a thread on cpu (-1: any). */
static bool
engine_cpu_valid(int cpu)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);

	return cpu >= -1 && (cpu < 0 || (cpu < CPU_SETSIZE && cpu < ncpu));
}

int
swv_engine_start(struct swv_engine *eng, int cpu)
{
	int ret;

	if (eng == NULL || eng->autothread || eng->inl ||
	    !engine_cpu_valid(cpu))
		return EINVAL;
	pthread_mutex_lock(&swv_lock);
	if (eng->running) {
		ret = EBUSY;
	} else {
		eng->cpu = cpu;
		ret = engine_thread_start(eng);
	}
	pthread_mutex_unlock(&swv_lock);
	return ret;
}

int
swv_engine_stop(struct swv_engine *eng)
{
	int ret = 0;

	if (eng == NULL || eng->autothread || eng->inl)
		return EINVAL;
	pthread_mutex_lock(&swv_lock);
	if (eng->running)
		engine_thread_stop(eng);
	else
		ret = ENOENT;
	pthread_mutex_unlock(&swv_lock);
	return ret;
}

int
swv_engine_run_once(struct swv_engine *eng)
{
	unsigned int work;
	bool leave;

	if (SWV_UNLIKELY(eng == NULL || eng->autothread || eng->inl)) {
		errno = EINVAL;
		return -1;
	}
	if (SWV_UNLIKELY(!engine_take(eng))) {
		errno = EBUSY;	/* its thread, or another caller, has it */
		return -1;
	}
	leave = swv_reader_enter();
	work = engine_work(eng, swv_now_coarse_ns());
	swv_reader_leave(leave);
	engine_give(eng);
	return work > 0 ? 1 : 0;
}

int
swv_engine_get_stats(const struct swv_engine *eng,
		     struct swv_engine_stats *st)
{
	if (eng == NULL || st == NULL)
		return EINVAL;
	memset(st, 0, sizeof(*st));
	st->passes = SWV_LOAD(&eng->passes);
	st->work_passes = SWV_LOAD(&eng->work_passes);
	st->bell_wakes = SWV_LOAD(&eng->bell_wakes);
	st->deep_sleeps = SWV_LOAD(&eng->deep_sleeps);
	st->fd_wakes = SWV_LOAD(&eng->fd_wakes);
	st->pace_sleeps = SWV_LOAD(&eng->pace_sleeps);
	st->pace_late_ns = SWV_LOAD(&eng->pace_late_ns);
	st->asleep = SWV_LOAD(&eng->asleep) != 0;
	st->ndev = SWV_LOAD(&eng->ndev);
	st->thread = SWV_LOAD(&eng->running);
	/* Written under swv_lock, read here without it (monitoring). */
	st->pool_mapped = SWV_LOAD(&eng->pool.mapped);
	st->pool_live = SWV_LOAD(&eng->pool.live);
	st->retired = SWV_LOAD(&eng->retire.n);
	return 0;
}

int
swv_engine_pace_window(struct swv_engine *eng, uint64_t *due,
		       uint64_t *latest)
{
	bool leave;

	if (eng == NULL || due == NULL || latest == NULL)
		return EINVAL;
	leave = swv_reader_enter();	/* the engine's device list */
	*due = engine_pace_window(eng, latest);
	swv_reader_leave(leave);
	return 0;
}

int
swv_device_pace_window(struct ibv_context *context, uint64_t *due,
		       uint64_t *latest)
{
	struct swv_device *dev;

	if (context == NULL || due == NULL || latest == NULL)
		return EINVAL;
	dev = swv_ctx_dev(context);
	if (!swv_dev_inline(dev)) {
		*due = UINT64_MAX;
		*latest = UINT64_MAX;
		return 0;
	}
	*due = swv_pace_window(dev, latest);
	return 0;
}

int
swv_engine_next_departure(struct swv_engine *eng, uint64_t *due)
{
	bool leave;

	if (eng == NULL || due == NULL)
		return EINVAL;
	leave = swv_reader_enter();	/* the engine's device list */
	*due = engine_pace_next(eng);
	swv_reader_leave(leave);
	return 0;
}

int
swv_set_engine_cpu(int cpu)
{
	struct swv_engine *eng = &swv_default_engine;
	cpu_set_t set;
	int ret = 0;

	/*
	 * Not checked against the calling thread's affinity: that is often an
	 * application thread pinned to its own core, and the engine belongs
	 * on another one. A CPU the process may not use fails the engine's
	 * start, or here when it runs.
	 */
	if (!engine_cpu_valid(cpu))
		return EINVAL;
	pthread_mutex_lock(&swv_lock);
	if (eng->running) {
		engine_cpuset(cpu, &set);
		ret = pthread_setaffinity_np(eng->thread, sizeof(set), &set);
	}
	if (ret == 0)
		eng->cpu = cpu;
	pthread_mutex_unlock(&swv_lock);
	return ret;
}
