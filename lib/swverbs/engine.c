/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The engine: the one thread per process that is the "NIC" of every swverbs
 * device. Each loop, for each device: wire Rx (rx.c: steering, scatter into
 * posted receive WQEs, CQEs), send queue drain (tx.c: gather, wire Tx,
 * CQEs), wire Tx flush, publication of what the pass did, and every ~10 ms
 * a link check that raises async events.
 *
 * It busy-polls while it finds work; after SWV_IDLE_SPINS empty loops it
 * sleeps in ppoll() on the wires' rx_fd()s with a timeout that doubles from
 * 20 us to 1 ms, so an idle process costs ~no CPU and a posted WQE waits at
 * most ~1 ms.
 *
 * The engine is the only RCU reader (QSBR): it reports a quiescent state
 * every loop and is offline while it sleeps. The control path publishes with
 * rcu_assign_pointer() / RCU lists and frees after synchronize_rcu().
 */

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <time.h>
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

uint32_t swv_engine_asleep;
uint64_t swv_engine_bell_wakes;

static struct {
	pthread_t thread;
	int bell_fd;			/**< eventfd: doorbell while asleep */
	bool running;
	uint32_t stop;
	int cpu;			/**< -1: not pinned */
	unsigned int ndev;
	struct cds_list_head devs;	/**< swv_device.eng_node (RCU) */
} swv_engine = {
	.cpu = -1,
	.bell_fd = -1,
	.devs = CDS_LIST_HEAD_INIT(swv_engine.devs),
};

/*
 * Publication.
 */
struct swv_pending swv_pend;

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
	__atomic_thread_fence(__ATOMIC_RELEASE);
	SWV_STORE(&c->rx_delivered, c->rx_delivered + a->rx_delivered);
	SWV_STORE(&c->rx_out_of_buffer,
		  c->rx_out_of_buffer + a->rx_out_of_buffer);
	SWV_STORE(&c->rx_no_match, c->rx_no_match + a->rx_no_match);
	SWV_STORE(&c->rx_errors, c->rx_errors + a->rx_errors);
	SWV_STORE(&c->rx_dropped, c->rx_dropped + a->rx_dropped);
	SWV_STORE(&c->rx_runts, c->rx_runts + a->rx_runts);
	memset(a, 0, sizeof(*a));
	dev->acc_dirty = false;
}

void
swv_publish(void)
{
	unsigned int i;

	for (i = 0; i < swv_pend.ndev; i++)
		publish_counters(swv_pend.dev[i]);
	/* Counters are visible before the completions that follow them. */
	for (i = 0; i < swv_pend.nring; i++) {
		struct swv_wq_ring *r = swv_pend.ring[i];

		SWV_STORE_REL(&r->tail, r->ctail);
		r->dirty = false;
	}
	for (i = 0; i < swv_pend.ncq; i++) {
		struct swv_cq *cq = swv_pend.cq[i];

		SWV_STORE_REL(&cq->head, cq->ehead);
		cq->dirty = false;
	}
	swv_pend.ndev = 0;
	swv_pend.nring = 0;
	swv_pend.ncq = 0;
	swv_pend.ts = 0;
}

/*
 * The loop.
 */
/*
 * Link state and speed; a wire gone for good (its interface deleted) makes
 * the link go down and raises IBV_EVENT_DEVICE_FATAL once, as a NIC that
 * is unplugged does.
 */
static void
link_check(struct swv_device *dev, uint64_t now)
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
device_work(struct swv_device *dev, uint64_t now)
{
	struct swv_wire *wire = dev->wire;
	struct cds_list_head *node;
	struct swv_wq *wq;
	unsigned int n;

	/*
	 * Node by node, cds_list_entry() on real nodes only: the _entry
	 * iterators take the container of the head, which is no such struct
	 * (UBSan: misaligned member access).
	 */
	n = wire->ops->rx_burst(wire, SWV_RX_BUDGET);
	cds_list_for_each_rcu(node, &dev->qps)
		n += swv_qp_process(cds_list_entry(node, struct swv_qp, node),
				    SWV_TX_BUDGET);
	cds_list_for_each_rcu(node, &dev->wqs) {
		wq = cds_list_entry(node, struct swv_wq, node);
		if (SWV_UNLIKELY(SWV_LOAD(&wq->rq.state) == SWV_RQ_ERR))
			n += swv_rq_flush(&wq->rq);
	}
	wire->ops->tx_flush(wire);
	swv_publish();
	if (now >= dev->next_link_check)
		link_check(dev, now);
	return n;
}

static void
engine_sleep(uint64_t ns, bool bell)
{
	struct pollfd fds[SWV_MAX_FDS + 1];
	struct cds_list_head *node;
	struct swv_device *dev;
	struct timespec ts;
	uint64_t rings;
	nfds_t n = 0;
	int fd;

	cds_list_for_each_rcu(node, &swv_engine.devs) {
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
		fds[n].fd = swv_engine.bell_fd;
		fds[n].events = POLLIN;
		fds[n].revents = 0;
		n++;
	}
	ts.tv_sec = (time_t)(ns / 1000000000ull);
	ts.tv_nsec = (long)(ns % 1000000000ull);
	rcu_thread_offline();
	ppoll(fds, n, &ts, NULL);
	rcu_thread_online();
	if (bell) {
		if (fds[n - 1].revents & POLLIN)
			SWV_STORE(&swv_engine_bell_wakes,
				  swv_engine_bell_wakes + 1);
		SWV_STORE(&swv_engine_asleep, 0);
		if (read(swv_engine.bell_fd, &rings, sizeof(rings)) < 0)
			rings = 0;	/* nothing rang: EAGAIN */
	}
}

void
swv_engine_wake(void)
{
	uint64_t one = 1;

	if (__atomic_exchange_n(&swv_engine_asleep, 0, __ATOMIC_ACQ_REL) != 0 &&
	    write(swv_engine.bell_fd, &one, sizeof(one)) < 0)
		return;	/* the counter is full: the engine is woken anyway */
}

static unsigned int
engine_work(uint64_t now)
{
	struct cds_list_head *node;
	unsigned int work = 0;

	cds_list_for_each_rcu(node, &swv_engine.devs)
		work += device_work(cds_list_entry(node, struct swv_device,
						   eng_node), now);
	return work;
}

static void *
engine_main(void *arg)
{
	unsigned int work, idle = 0;
	uint64_t sleep_ns = SWV_SLEEP_MIN_NS, now;

	(void)arg;
	/* Short sleeps must stay short. */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	rcu_register_thread();
	while (!SWV_LOAD_ACQ(&swv_engine.stop)) {
		/*
		 * The clock only paces link checks: a coarse one (vDSO, a few
		 * ns, a tick's resolution) read every loop, so that under any
		 * load a link or MTU change is seen within SWV_LINK_CHECK_NS
		 * and a tick, plus one loop.
		 */
		now = swv_now_coarse_ns();
		work = engine_work(now);
		rcu_quiescent_state();
		if (work > 0) {
			idle = 0;
			sleep_ns = SWV_SLEEP_MIN_NS;
			continue;
		}
		if (++idle < SWV_IDLE_SPINS)
			continue;
		if (sleep_ns < SWV_SLEEP_MAX_NS) {
			engine_sleep(sleep_ns, false);
			sleep_ns *= 2;
			if (sleep_ns > SWV_SLEEP_MAX_NS)
				sleep_ns = SWV_SLEEP_MAX_NS;
			continue;
		}
		/*
		 * Idle for over a millisecond: ask posters for a doorbell,
		 * look once more (a post may have raced with the flag), then
		 * sleep until the doorbell, a wire's fd or the next link check.
		 */
		SWV_STORE(&swv_engine_asleep, 1);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (SWV_LOAD_ACQ(&swv_engine.stop))
			break;
		now = swv_now_coarse_ns();
		work = engine_work(now);
		if (work > 0) {
			SWV_STORE(&swv_engine_asleep, 0);
			idle = 0;
			sleep_ns = SWV_SLEEP_MIN_NS;
			continue;
		}
		rcu_quiescent_state();
		engine_sleep(SWV_DEEP_SLEEP_NS, true);
	}
	rcu_unregister_thread();
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

static int
engine_start(void)
{
	pthread_attr_t attr;
	cpu_set_t set;
	int ret;

	swv_engine.bell_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (swv_engine.bell_fd < 0)
		return errno;
	pthread_attr_init(&attr);
	engine_cpuset(swv_engine.cpu, &set);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	SWV_STORE(&swv_engine.stop, 0);
	ret = pthread_create(&swv_engine.thread, &attr, engine_main, NULL);
	pthread_attr_destroy(&attr);
	if (ret != 0) {
		close(swv_engine.bell_fd);
		swv_engine.bell_fd = -1;
		return ret;
	}
	pthread_setname_np(swv_engine.thread, "swv-engine");
	swv_engine.running = true;
	return 0;
}

int
swv_engine_add(struct swv_device *dev)
{
	int ret;

	if (swv_engine.ndev == 0 && !swv_engine.running) {
		ret = engine_start();
		if (ret != 0)
			return ret;
	}
	swv_engine.ndev++;
	dev->next_link_check = 0;
	cds_list_add_tail_rcu(&dev->eng_node, &swv_engine.devs);
	/* A new wire fd to sleep on, a pair peer's link to raise. */
	swv_engine_wake();
	return 0;
}

void
swv_engine_del(struct swv_device *dev)
{
	cds_list_del_rcu(&dev->eng_node);
	swv_engine_wake();
	synchronize_rcu();
	swv_engine.ndev--;
	if (swv_engine.ndev == 0 && swv_engine.running) {
		SWV_STORE_REL(&swv_engine.stop, 1);
		swv_engine_wake();
		pthread_join(swv_engine.thread, NULL);
		swv_engine.running = false;
		close(swv_engine.bell_fd);
		swv_engine.bell_fd = -1;
	}
}

int
swv_set_engine_cpu(int cpu)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	cpu_set_t set;
	int ret = 0;

	/*
	 * Not checked against the calling thread's affinity: that is often an
	 * application thread pinned to its own core, and the engine belongs
	 * on another one. A CPU the process may not use fails the engine's
	 * start, or here when it runs.
	 */
	if (cpu < -1 || (cpu >= 0 && (cpu >= CPU_SETSIZE || cpu >= ncpu)))
		return EINVAL;
	pthread_mutex_lock(&swv_lock);
	if (swv_engine.running) {
		engine_cpuset(cpu, &set);
		ret = pthread_setaffinity_np(swv_engine.thread, sizeof(set),
					     &set);
	}
	if (ret == 0)
		swv_engine.cpu = cpu;
	pthread_mutex_unlock(&swv_lock);
	return ret;
}
