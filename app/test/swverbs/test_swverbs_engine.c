/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The engine's sleep and doorbell: a device idle for long enough sleeps until
 * a doorbell, a wire fd or a link check (every 100 ms); a send posted to a
 * sleeping engine rings the doorbell, which ends the sleep, not the next
 * link check. And destroying the last device stops a sleeping engine the
 * same way. The engine counts the sleeps its doorbell ended: the tests
 * check that count, never a time.
 */

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "swv_priv.h"
#include "swv_test_util.h"
#include "test.h"

/* An engine's statistics (all 0 if it cannot be read). */
static struct swv_engine_stats
te_stats(struct swv_engine *eng)
{
	struct swv_engine_stats st;

	memset(&st, 0, sizeof(st));
	swv_engine_get_stats(eng, &st);
	return st;
}

/* The default engine's sleep state and doorbell count. */
#define t_asleep() (te_stats(swv_engine_default()).asleep)
#define t_bell_wakes() (te_stats(swv_engine_default()).bell_wakes)

/*
 * A post to an engine in its deep sleep (it waits up to 100 ms for a wire
 * fd or the doorbell) rings the doorbell, and the doorbell is what ends
 * the sleep: counted by the engine, not timed, so a loaded machine cannot
 * make it fail or pass.
 */
static int
test_doorbell_wakes_sleeping_engine(void)
{
	static uint8_t tbuf[256], rbuf[2048];
	struct ibv_mr *tmr, *rmr;
	struct ibv_flow *fl;
	struct ibv_wc wc;
	struct tdev d;
	uint64_t w0;
	int round;

	TEST_ASSERT_SUCCESS(t_setup(&d, "bell", "loop"), "");
	tmr = swv_reg_mr(d.pd, tbuf, sizeof(tbuf), 0);
	rmr = swv_reg_mr(d.pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	TEST_ASSERT(tmr != NULL && rmr != NULL, "reg_mr: %d", errno);
	fl = t_flow_eth(d.rqp, d.mac, 0);
	TEST_ASSERT_NOT_NULL(fl, "flow: %d", errno);
	t_frame(tbuf, 64, d.mac, d.mac, 1);
	for (round = 0; round < 5; round++) {
		TEST_ASSERT_SUCCESS(t_recv(d.rqp, rmr, rbuf, sizeof(rbuf), 1),
				    "");
		/* Let the engine fall into its deep sleep. */
		T_WAIT(t_asleep());
		TEST_ASSERT(t_asleep(), "asleep");
		w0 = t_bell_wakes();
		TEST_ASSERT_SUCCESS(t_send(d.sqp, tmr, tbuf, 64, 2), "");
		TEST_ASSERT_EQUAL(t_poll(d.rcq, &wc, 1, 1000), 1,
				  "frame received");
		TEST_ASSERT_EQUAL(wc.status, IBV_WC_SUCCESS, "");
		TEST_ASSERT_EQUAL(wc.byte_len, 64, "");
		TEST_ASSERT_EQUAL(t_poll(d.scq, &wc, 1, 1000), 1,
				  "send completion");
		TEST_ASSERT(t_bell_wakes() > w0,
			    "the doorbell did not end the engine's sleep");
	}
	swv_destroy_flow(fl);
	swv_dereg_mr(tmr);
	swv_dereg_mr(rmr);
	t_teardown(&d);
	return TEST_SUCCESS;
}

static int
test_sleeping_engine_stops_at_once(void)
{
	struct tdev d;
	uint64_t w0;
	int i;

	/* The stop rings the doorbell, which ends the sleep (counted). */
	for (i = 0; i < 5; i++) {
		TEST_ASSERT_SUCCESS(t_setup(&d, "stop", "loop"), "");
		T_WAIT(t_asleep());
		TEST_ASSERT(t_asleep(), "asleep");
		w0 = t_bell_wakes();
		t_teardown(&d);
		TEST_ASSERT(t_bell_wakes() > w0,
			    "destroy waited for the engine's timeout");
	}
	return TEST_SUCCESS;
}

/*
 * SGE lengths that add up past 4 GiB must not wrap into a short frame: the
 * send completes with a length error. Two SGEs of 2 GiB + 32 bytes each,
 * inside one MR over reserved (never touched) address space, would wrap to
 * 64 bytes in 32-bit arithmetic.
 */
static int
test_sge_length_sum_no_wrap(void)
{
	const size_t half = (size_t)1 << 31;
	const size_t span = 2 * half + 4096;
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_sge sge[2];
	struct ibv_wc wc;
	struct ibv_mr *mr;
	struct tdev d;
	uint8_t *va;

	va = mmap(NULL, span, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS |
		  MAP_NORESERVE, -1, 0);
	if (va == MAP_FAILED)
		TEST_SKIP("no 4 GiB of address space: %d", errno);
	TEST_ASSERT_SUCCESS(t_setup(&d, "wrap", "loop"), "");
	mr = swv_reg_mr(d.pd, va, span, 0);
	TEST_ASSERT_NOT_NULL(mr, "reg_mr: %d", errno);
	sge[0].addr = (uintptr_t)va;
	sge[0].length = (uint32_t)(half + 32);
	sge[0].lkey = mr->lkey;
	sge[1] = sge[0];
	sge[1].addr = (uintptr_t)va + half + 64;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 7;
	wr.sg_list = sge;
	wr.num_sge = 2;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	TEST_ASSERT_SUCCESS(ibv_post_send(d.sqp, &wr, &bad), "post");
	TEST_ASSERT_EQUAL(t_poll(d.scq, &wc, 1, 1000), 1, "completion");
	TEST_ASSERT_EQUAL(wc.wr_id, 7, "");
	TEST_ASSERT_EQUAL(wc.status, IBV_WC_LOC_LEN_ERR,
			  "a 4 GiB frame was sent as a short one");
	swv_destroy_qp(d.sqp);
	d.sqp = NULL;
	swv_dereg_mr(mr);
	t_teardown(&d);
	munmap(va, span);
	return TEST_SUCCESS;
}

/*
 * Engines as objects.
 */

/* A device with a MAC rule to its receiver and a frame buffer, on eng. */
struct teng {
	struct tport p;
	uint8_t tbuf[256];
	uint8_t rbuf[2048];
};

static int
te_setup(struct teng *t, const char *name, const char *wire,
	 struct swv_engine *eng)
{
	struct swv_device_attr attr = { .flags = 0, .engine = eng };
	int ret;

	ret = t_port_setup(&t->p, name, wire, &attr, t->tbuf, sizeof(t->tbuf),
			   t->rbuf, sizeof(t->rbuf), true);
	if (ret == 0)
		t_frame(t->tbuf, 64, t->p.d.mac, t->p.d.mac, 1);
	return ret;
}

/* Post a receive and a send of the test frame on t's device. */
static int
te_post(struct teng *t)
{
	int ret;

	ret = t_recv(t->p.d.rqp, t->p.rmr, t->rbuf, sizeof(t->rbuf), 1);
	if (ret == 0)
		ret = t_send(t->p.d.sqp, t->p.tmr, t->tbuf, 64, 2);
	return ret;
}

/* Run eng's passes until cq has a completion, at most 1000 of them. */
static int
te_run_until(struct swv_engine *eng, struct ibv_cq *cq, struct ibv_wc *wc)
{
	int i, n;

	for (i = 0; i < 1000; i++) {
		if (swv_engine_run_once(eng) < 0)
			return -1;
		n = ibv_poll_cq(cq, 1, wc);
		if (n != 0)
			return n;
	}
	return 0;
}

/*
 * A device on an engine with no thread moves only when swv_engine_run_once()
 * is called: nothing completes while nobody calls it, the first call does
 * the send, the loop back and the receive, the next one finds nothing.
 */
static int
test_run_once_drives_device(void)
{
	struct swv_engine *eng;
	struct swv_port_counters pc;
	struct ibv_wc wc;
	struct teng t;
	int round;

	eng = swv_engine_create();
	TEST_ASSERT_NOT_NULL(eng, "engine_create: %d", errno);
	TEST_ASSERT_SUCCESS(te_setup(&t, "ro", "loop", eng), "");
	TEST_ASSERT_EQUAL(te_stats(eng).ndev, 1, "");
	TEST_ASSERT_EQUAL(te_stats(eng).thread, 0, "");
	for (round = 0; round < 3; round++) {
		TEST_ASSERT_SUCCESS(te_post(&t), "");
		/* Nobody runs the engine: nothing moves, however long. */
		TEST_ASSERT_EQUAL(t_poll(t.p.d.rcq, &wc, 1, 20), 0,
				  "a frame went through with no engine pass");
		TEST_ASSERT_EQUAL(t_poll(t.p.d.scq, &wc, 1, 0), 0, "");
		TEST_ASSERT_EQUAL(swv_engine_run_once(eng), 1,
				  "the pass found no work");
		TEST_ASSERT_EQUAL(t_poll(t.p.d.rcq, &wc, 1, 0), 1,
				  "one pass did not deliver the frame");
		TEST_ASSERT_EQUAL(wc.status, IBV_WC_SUCCESS, "");
		TEST_ASSERT_EQUAL(wc.byte_len, 64, "");
		TEST_ASSERT_EQUAL(t_poll(t.p.d.scq, &wc, 1, 0), 1, "");
		TEST_ASSERT_EQUAL(wc.wr_id, 2, "");
		TEST_ASSERT_EQUAL(swv_engine_run_once(eng), 0,
				  "an idle pass reported work");
	}
	TEST_ASSERT_SUCCESS(swv_query_port_counters(t.p.d.ctx, &pc), "");
	TEST_ASSERT_EQUAL(pc.rx_delivered, 3, "");
	TEST_ASSERT_EQUAL(pc.tx_frames, 3, "");
	TEST_ASSERT(te_stats(eng).passes >= 6, "");
	TEST_ASSERT_EQUAL(te_stats(eng).work_passes, 3, "");
	/* The default engine has a thread of its own: no run_once. */
	TEST_ASSERT_EQUAL(swv_engine_run_once(swv_engine_default()), -1, "");
	TEST_ASSERT_EQUAL(errno, EINVAL, "");
	TEST_ASSERT_EQUAL(swv_engine_run_once(NULL), -1, "");
	t_port_teardown(&t.p);
	TEST_ASSERT_EQUAL(te_stats(eng).ndev, 0, "");
	TEST_ASSERT_SUCCESS(swv_engine_destroy(eng), "");
	return TEST_SUCCESS;
}

/* Two new engines, and room for three devices. 0 or ENOMEM. */
static int
te_two_three(struct swv_engine **ea, struct swv_engine **eb,
	     struct teng **a, struct teng **b, struct teng **c)
{
	*ea = swv_engine_create();
	*eb = swv_engine_create();
	*a = calloc(1, sizeof(**a));
	*b = calloc(1, sizeof(**b));
	*c = calloc(1, sizeof(**c));
	return *ea != NULL && *eb != NULL && *a != NULL && *b != NULL &&
	       *c != NULL ? 0 : ENOMEM;
}

/*
 * Two engines in one process, each serving a device: one with its own
 * thread, one driven by run_once from here; and the default engine beside
 * them with a third device. Each device's frames go through on its own
 * engine.
 */
static int
test_two_engines(void)
{
	struct swv_engine *ea, *eb;
	struct teng *a, *b, *c;
	struct ibv_wc wc;
	int round;

	TEST_ASSERT_SUCCESS(te_two_three(&ea, &eb, &a, &b, &c), "");
	TEST_ASSERT_SUCCESS(swv_engine_start(ea, -1), "");
	TEST_ASSERT_EQUAL(swv_engine_start(ea, -1), EBUSY, "");
	TEST_ASSERT_EQUAL(swv_engine_start(eb, -5), EINVAL, "");
	TEST_ASSERT_EQUAL(swv_engine_start(swv_engine_default(), -1), EINVAL,
			  "");
	TEST_ASSERT_SUCCESS(te_setup(a, "two-a", "loop", ea), "");
	TEST_ASSERT_SUCCESS(te_setup(b, "two-b", "loop", eb), "");
	TEST_ASSERT_SUCCESS(te_setup(c, "two-c", "loop", NULL), "");
	TEST_ASSERT_EQUAL(te_stats(ea).ndev, 1, "");
	TEST_ASSERT_EQUAL(te_stats(eb).ndev, 1, "");
	TEST_ASSERT_EQUAL(te_stats(ea).thread, 1, "");
	/* Its thread runs ea: nobody else may. */
	TEST_ASSERT_EQUAL(swv_engine_run_once(ea), -1, "");
	TEST_ASSERT_EQUAL(errno, EBUSY, "");
	for (round = 0; round < 4; round++) {
		TEST_ASSERT_SUCCESS(te_post(a), "");
		TEST_ASSERT_SUCCESS(te_post(b), "");
		TEST_ASSERT_SUCCESS(te_post(c), "");
		TEST_ASSERT_EQUAL(t_poll(a->p.d.rcq, &wc, 1, 1000), 1,
				  "a's thread did not deliver");
		TEST_ASSERT_EQUAL(t_poll(c->p.d.rcq, &wc, 1, 1000), 1,
				  "the default engine did not deliver");
		TEST_ASSERT_EQUAL(t_poll(b->p.d.rcq, &wc, 1, 0), 0,
				  "b moved with no pass of its engine");
		TEST_ASSERT_EQUAL(te_run_until(eb, b->p.d.rcq, &wc), 1, "");
		TEST_ASSERT_EQUAL(wc.status, IBV_WC_SUCCESS, "");
		TEST_ASSERT_EQUAL(t_poll(a->p.d.scq, &wc, 1, 1000), 1, "");
		TEST_ASSERT_EQUAL(t_poll(c->p.d.scq, &wc, 1, 1000), 1, "");
		TEST_ASSERT_EQUAL(t_poll(b->p.d.scq, &wc, 1, 0), 1, "");
	}
	TEST_ASSERT(te_stats(ea).work_passes >= 1, "");
	TEST_ASSERT(te_stats(eb).work_passes >= 1, "");
	/* Stopped, ea is driven by run_once. */
	TEST_ASSERT_SUCCESS(swv_engine_stop(ea), "");
	TEST_ASSERT_EQUAL(swv_engine_stop(ea), ENOENT, "");
	TEST_ASSERT_SUCCESS(te_post(a), "");
	TEST_ASSERT_EQUAL(te_run_until(ea, a->p.d.rcq, &wc), 1, "");
	t_port_teardown(&a->p);
	t_port_teardown(&b->p);
	t_port_teardown(&c->p);
	TEST_ASSERT_SUCCESS(swv_engine_destroy(ea), "");
	TEST_ASSERT_SUCCESS(swv_engine_destroy(eb), "");
	free(a);
	free(b);
	free(c);
	return TEST_SUCCESS;
}

/*
 * An engine that still serves a device is not destroyed: EBUSY, and the
 * device keeps working on it. Once the device is gone, it is.
 */
static int
test_destroy_busy_engine(void)
{
	struct swv_engine *eng;
	struct ibv_wc wc;
	struct teng t;

	eng = swv_engine_create();
	TEST_ASSERT_NOT_NULL(eng, "");
	TEST_ASSERT_SUCCESS(swv_engine_start(eng, -1), "");
	TEST_ASSERT_SUCCESS(te_setup(&t, "busy", "loop", eng), "");
	TEST_ASSERT_EQUAL(swv_engine_destroy(eng), EBUSY, "");
	TEST_ASSERT_SUCCESS(te_post(&t), "");
	TEST_ASSERT_EQUAL(t_poll(t.p.d.rcq, &wc, 1, 1000), 1,
			  "the engine stopped after a refused destroy");
	TEST_ASSERT_EQUAL(swv_engine_destroy(NULL), EINVAL, "");
	TEST_ASSERT_EQUAL(swv_engine_destroy(swv_engine_default()), EINVAL,
			  "");
	t_port_teardown(&t.p);
	/* Its thread still runs: destroy stops it. */
	TEST_ASSERT_SUCCESS(swv_engine_destroy(eng), "");
	return TEST_SUCCESS;
}

/*
 * A device moves between engines while no context is open on it; the two
 * ends of a pair cable stay on one engine (EXDEV otherwise).
 */
static int
test_device_set_engine(void)
{
	struct swv_engine *ea, *eb;
	struct ibv_wc wc;
	struct teng t;

	ea = swv_engine_create();
	eb = swv_engine_create();
	TEST_ASSERT(ea != NULL && eb != NULL, "");
	TEST_ASSERT_SUCCESS(swv_device_create("mv", "loop", NULL), "");
	TEST_ASSERT_SUCCESS(swv_device_set_engine("mv", ea), "");
	TEST_ASSERT_EQUAL(te_stats(ea).ndev, 1, "");
	TEST_ASSERT_SUCCESS(swv_device_set_engine("mv", eb), "");
	TEST_ASSERT_EQUAL(te_stats(ea).ndev, 0, "");
	TEST_ASSERT_EQUAL(te_stats(eb).ndev, 1, "");
	TEST_ASSERT_SUCCESS(swv_device_set_engine("mv", NULL), "");
	TEST_ASSERT_EQUAL(te_stats(eb).ndev, 0, "");
	TEST_ASSERT_EQUAL(swv_device_set_engine("nosuch", ea), ENOENT, "");
	TEST_ASSERT_SUCCESS(swv_device_destroy("mv"), "");
	/* A context open: the posters read the engine without a lock. */
	TEST_ASSERT_SUCCESS(te_setup(&t, "mvctx", "loop", ea), "");
	TEST_ASSERT_EQUAL(swv_device_set_engine("mvctx", eb), EBUSY, "");
	TEST_ASSERT_SUCCESS(te_post(&t), "");
	TEST_ASSERT_EQUAL(te_run_until(ea, t.p.d.rcq, &wc), 1, "");
	t_port_teardown(&t.p);
	/* Pair ends: one engine for both. */
	TEST_ASSERT_SUCCESS(swv_device_create_attr("pa", "pair:eng-x", NULL,
		&(struct swv_device_attr){ .engine = ea }), "");
	TEST_ASSERT_EQUAL(swv_device_create_attr("pb", "pair:eng-x", NULL,
		&(struct swv_device_attr){ .engine = eb }), EXDEV, "");
	TEST_ASSERT_EQUAL(swv_device_create("pb", "pair:eng-x", NULL), EXDEV,
			  "");
	TEST_ASSERT_SUCCESS(swv_device_create_attr("pb", "pair:eng-x", NULL,
		&(struct swv_device_attr){ .engine = ea }), "");
	TEST_ASSERT_EQUAL(swv_device_set_engine("pb", eb), EXDEV, "");
	TEST_ASSERT_EQUAL(te_stats(ea).ndev, 2, "");
	TEST_ASSERT_EQUAL(te_stats(eb).ndev, 0, "");
	TEST_ASSERT_SUCCESS(swv_device_destroy("pb"), "");
	/* Alone on its cable, an end may move. */
	TEST_ASSERT_SUCCESS(swv_device_set_engine("pa", eb), "");
	TEST_ASSERT_SUCCESS(swv_device_destroy("pa"), "");
	TEST_ASSERT_EQUAL(swv_device_create_attr("pz", "loop", NULL, NULL),
			  EINVAL, "");
	TEST_ASSERT_SUCCESS(swv_engine_destroy(ea), "");
	TEST_ASSERT_SUCCESS(swv_engine_destroy(eb), "");
	return TEST_SUCCESS;
}

struct te_thread_arg {
	struct swv_engine *eng;
	struct teng *t;
	int got;
};

/* Drive the engine from a thread of our own, then exit. */
static void *
te_thread(void *arg)
{
	struct te_thread_arg *a = arg;
	struct ibv_wc wc;

	a->got = te_run_until(a->eng, a->t->p.d.rcq, &wc);
	return NULL;
}

/*
 * Threads that ran passes and exited leave nothing behind: the control
 * path's grace periods (destroying a flow, a QP, the device) neither wait
 * for them nor touch what they left (ASan), and another thread can take
 * the engine over.
 */
static int
test_run_once_threads_exit(void)
{
	struct te_thread_arg arg;
	struct swv_engine *eng;
	pthread_t th;
	struct teng t;
	int i;

	eng = swv_engine_create();
	TEST_ASSERT_NOT_NULL(eng, "");
	TEST_ASSERT_SUCCESS(te_setup(&t, "thr", "loop", eng), "");
	for (i = 0; i < 4; i++) {
		TEST_ASSERT_SUCCESS(te_post(&t), "");
		arg.eng = eng;
		arg.t = &t;
		arg.got = -2;
		TEST_ASSERT_SUCCESS(pthread_create(&th, NULL, te_thread,
						   &arg), "");
		TEST_ASSERT_SUCCESS(pthread_join(th, NULL), "");
		TEST_ASSERT_EQUAL(arg.got, 1, "pass from thread %d", i);
		/* A grace period with the thread gone. */
		swv_destroy_flow(t.p.fl);
		t.p.fl = t_flow_eth(t.p.d.rqp, t.p.d.mac, 0);
		TEST_ASSERT_NOT_NULL(t.p.fl, "");
		while (ibv_poll_cq(t.p.d.scq, 1, &(struct ibv_wc){ 0 }) > 0)
			;
	}
	t_port_teardown(&t.p);
	TEST_ASSERT_SUCCESS(swv_engine_destroy(eng), "");
	return TEST_SUCCESS;
}

/* A thread that runs one pass, then waits (alive, idle) until released. */
struct te_idle_arg {
	struct swv_engine *eng;
	struct teng *t;
	int got;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int state;		/* 1: pass done, 2: released */
};

static void *
te_idle_thread(void *arg)
{
	struct te_idle_arg *a = arg;
	struct ibv_wc wc;

	a->got = te_run_until(a->eng, a->t->p.d.rcq, &wc);
	pthread_mutex_lock(&a->lock);
	a->state = 1;
	pthread_cond_broadcast(&a->cond);
	while (a->state != 2)
		pthread_cond_wait(&a->cond, &a->lock);
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

static void
te_hung(int sig)
{
	static const char msg[] = "a grace period waited for a thread idle "
				  "between run_once calls\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

/*
 * Between run_once calls the caller is no RCU reader: a grace period on
 * the control path (deregistering an MR) completes while the thread that
 * ran the pass lives on, idle. (Were it left online, the destroy would
 * wait for it forever: the alarm ends the test then.)
 */
static int
test_run_once_offline_between_calls(void)
{
	struct te_idle_arg arg;
	struct swv_engine *eng;
	pthread_t th;
	struct teng t;

	eng = swv_engine_create();
	TEST_ASSERT_NOT_NULL(eng, "");
	TEST_ASSERT_SUCCESS(te_setup(&t, "idle", "loop", eng), "");
	TEST_ASSERT_SUCCESS(te_post(&t), "");
	memset(&arg, 0, sizeof(arg));
	arg.eng = eng;
	arg.t = &t;
	pthread_mutex_init(&arg.lock, NULL);
	pthread_cond_init(&arg.cond, NULL);
	TEST_ASSERT_SUCCESS(pthread_create(&th, NULL, te_idle_thread, &arg),
			    "");
	pthread_mutex_lock(&arg.lock);
	while (arg.state != 1)
		pthread_cond_wait(&arg.cond, &arg.lock);
	pthread_mutex_unlock(&arg.lock);
	TEST_ASSERT_EQUAL(arg.got, 1, "");
	signal(SIGALRM, te_hung);
	alarm(60);
	swv_dereg_mr(t.p.tmr);		/* synchronize_rcu() */
	t.p.tmr = NULL;
	alarm(0);
	pthread_mutex_lock(&arg.lock);
	arg.state = 2;
	pthread_cond_broadcast(&arg.cond);
	pthread_mutex_unlock(&arg.lock);
	pthread_join(th, NULL);
	pthread_mutex_destroy(&arg.lock);
	pthread_cond_destroy(&arg.cond);
	t_port_teardown(&t.p);
	TEST_ASSERT_SUCCESS(swv_engine_destroy(eng), "");
	return TEST_SUCCESS;
}

/*
 * Engines' memory. Each engine has a pool and a retire list of its own: a
 * device's rules and counters objects come from its engine's pool and go
 * back through its engine's retire list; the other engines' counts do not
 * move.
 */
#define TP_RULES 16

/* Traffic on a device of an engine with a thread, from a thread of ours. */
struct tp_traffic {
	struct teng *t;
	uint32_t stop;
	unsigned int sent;
	unsigned int delivered;
};

static void *
tp_traffic_main(void *arg)
{
	struct tp_traffic *a = arg;
	struct ibv_wc wc;

	while (!__atomic_load_n(&a->stop, __ATOMIC_ACQUIRE)) {
		if (te_post(a->t) != 0)
			break;
		__atomic_add_fetch(&a->sent, 1, __ATOMIC_RELEASE);
		if (t_poll(a->t->p.d.rcq, &wc, 1, 1000) == 1 &&
		    wc.status == IBV_WC_SUCCESS)
			__atomic_add_fetch(&a->delivered, 1,
					   __ATOMIC_RELEASE);
		t_poll(a->t->p.d.scq, &wc, 1, 1000);
	}
	return NULL;
}

/* Whether the page at p is mapped in this process. */
static bool
tp_mapped(const void *p)
{
	unsigned char vec;

	return mincore((void *)((uintptr_t)p & ~(uintptr_t)4095), 4096,
		       &vec) == 0;
}

static int
test_engine_pools(void)
{
	struct swv_engine_stats s0, si0;
	struct swv_engine *ea, *eb, *inl = swv_engine_inline();
	struct ibv_flow *fl[TP_RULES];
	struct ibv_counters *cnt = NULL;
	struct tp_traffic tr;
	struct teng *a, *b, *c;
	uint8_t mac[6];
	pthread_t th;
	void *chunk;
	int i;

	TEST_ASSERT_SUCCESS(te_two_three(&ea, &eb, &a, &b, &c), "");
	TEST_ASSERT_EQUAL(te_stats(ea).pool_mapped, 0, "");
	TEST_ASSERT_SUCCESS(swv_engine_start(ea, -1), "");
	TEST_ASSERT_SUCCESS(swv_engine_start(eb, -1), "");
	s0 = te_stats(swv_engine_default());
	si0 = te_stats(inl);
	/* te_setup() makes one rule each. */
	TEST_ASSERT_SUCCESS(te_setup(a, "pool-a", "loop", ea), "");
	TEST_ASSERT_SUCCESS(te_setup(b, "pool-b", "loop", eb), "");
	TEST_ASSERT_SUCCESS(te_setup(c, "pool-c", "loop", inl), "");
	TEST_ASSERT_EQUAL(te_stats(ea).pool_live, 1, "");
	TEST_ASSERT_EQUAL(te_stats(eb).pool_live, 1, "");
	TEST_ASSERT_EQUAL(te_stats(inl).pool_live, si0.pool_live + 1, "");
	TEST_ASSERT(te_stats(ea).pool_mapped > 0, "");
	TEST_ASSERT(te_stats(eb).pool_mapped > 0, "");
	/*
	 * More rules and a counters object on a: ea's counts only. The
	 * counters object, of another size, comes before the last rule: each
	 * rule's lookup fields still start a cache line.
	 */
	memcpy(mac, a->p.d.mac, 6);
	for (i = 0; i < TP_RULES; i++) {
		if (i == TP_RULES - 1) {
			cnt = t_counters(a->p.d.ctx);
			TEST_ASSERT_NOT_NULL(cnt, "counters: %d", errno);
		}
		mac[5] = (uint8_t)(a->p.d.mac[5] + 1 + i);
		fl[i] = t_flow_eth(a->p.d.rqp, mac, 0);
		TEST_ASSERT_NOT_NULL(fl[i], "flow %d: %d", i, errno);
		TEST_ASSERT_EQUAL((uintptr_t)&((struct swv_flow *)fl[i])->rank %
				  SWV_CACHE_LINE, 0,
				  "rule %d's lookup line is not aligned", i);
	}
	TEST_ASSERT_EQUAL(te_stats(ea).pool_live, TP_RULES + 2, "");
	TEST_ASSERT_EQUAL(te_stats(eb).pool_live, 1, "");
	TEST_ASSERT_EQUAL(te_stats(inl).pool_live, si0.pool_live + 1, "");
	TEST_ASSERT_EQUAL(te_stats(swv_engine_default()).pool_live,
			  s0.pool_live, "the default engine's pool moved");
	/*
	 * Rules go away on ea while eb's thread is busy with b's traffic:
	 * retired on ea (eb's list stays empty), freed after a grace period
	 * that eb's passes do not hold up.
	 */
	memset(&tr, 0, sizeof(tr));
	tr.t = b;
	TEST_ASSERT_SUCCESS(pthread_create(&th, NULL, tp_traffic_main, &tr),
			    "");
	T_WAIT(__atomic_load_n(&tr.delivered, __ATOMIC_ACQUIRE) >= 4);
	for (i = 0; i < TP_RULES; i++) {
		TEST_ASSERT_SUCCESS(swv_destroy_flow(fl[i]), "");
		TEST_ASSERT_EQUAL(te_stats(eb).retired, 0, "");
		TEST_ASSERT_EQUAL(te_stats(eb).pool_live, 1, "");
	}
	TEST_ASSERT(te_stats(ea).retired >= TP_RULES,
		    "a's rules were not retired on its engine");
	TEST_ASSERT_EQUAL(te_stats(ea).pool_live, TP_RULES + 2,
			  "freed before a grace period");
	/* The last rule of a: one grace period frees them all. */
	TEST_ASSERT_SUCCESS(swv_destroy_flow(a->p.fl), "");
	a->p.fl = NULL;
	TEST_ASSERT_EQUAL(te_stats(ea).retired, 0, "");
	TEST_ASSERT_EQUAL(te_stats(ea).pool_live, 1, "the counters object");
	i = (int)__atomic_load_n(&tr.delivered, __ATOMIC_ACQUIRE);
	T_WAIT(__atomic_load_n(&tr.delivered, __ATOMIC_ACQUIRE) >=
	       (unsigned int)i + 4);
	__atomic_store_n(&tr.stop, 1, __ATOMIC_RELEASE);
	TEST_ASSERT_SUCCESS(pthread_join(th, NULL), "");
	TEST_ASSERT(tr.sent >= 8, "b's traffic did not run: %u", tr.sent);
	TEST_ASSERT_EQUAL(tr.delivered, tr.sent,
			  "b's engine lost frames meanwhile");
	TEST_ASSERT_EQUAL(te_stats(eb).pool_live, 1, "");
	TEST_ASSERT_SUCCESS(swv_destroy_counters(cnt), "");
	TEST_ASSERT_EQUAL(te_stats(ea).pool_live, 0, "");
	/* Empty, the pool keeps one chunk until its engine goes. */
	TEST_ASSERT(te_stats(ea).pool_mapped > 0, "");
	chunk = ea->pool.chunks;
	TEST_ASSERT(chunk != NULL && tp_mapped(chunk), "");
	/* Devices gone: the engines go, and their chunks with them. */
	t_port_teardown(&a->p);
	TEST_ASSERT_SUCCESS(swv_engine_destroy(ea), "");
	TEST_ASSERT(!tp_mapped(chunk),
		    "a destroyed engine left its pool mapped");
	chunk = eb->pool.chunks;
	t_port_teardown(&b->p);
	TEST_ASSERT_EQUAL(te_stats(eb).pool_live, 0, "");
	TEST_ASSERT_SUCCESS(swv_engine_destroy(eb), "");
	TEST_ASSERT(!tp_mapped(chunk), "");
	t_port_teardown(&c->p);
	TEST_ASSERT_EQUAL(te_stats(inl).pool_live, si0.pool_live, "");
	free(a);
	free(b);
	free(c);
	return TEST_SUCCESS;
}

/*
 * A device moves to another engine only with no context open, so with no
 * rule nor counters object live; a rule made after the move comes from the
 * new engine's pool.
 */
static int
test_pool_follows_device(void)
{
	struct swv_engine *ea, *eb;
	struct ibv_counters *cnt = NULL;
	struct teng t;

	ea = swv_engine_create();
	eb = swv_engine_create();
	TEST_ASSERT(ea != NULL && eb != NULL, "");
	TEST_ASSERT_SUCCESS(te_setup(&t, "pool-mv", "loop", ea), "");
	cnt = t_counters(t.p.d.ctx);
	TEST_ASSERT_NOT_NULL(cnt, "");
	TEST_ASSERT_EQUAL(te_stats(ea).pool_live, 2, "");
	TEST_ASSERT_EQUAL(swv_device_set_engine("pool-mv", eb), EBUSY,
			  "moved with its rules live");
	TEST_ASSERT_EQUAL(te_stats(ea).pool_live, 2, "");
	TEST_ASSERT_EQUAL(te_stats(eb).pool_live, 0, "");
	TEST_ASSERT_SUCCESS(swv_destroy_counters(cnt), "");
	swv_destroy_flow(t.p.fl);
	t.p.fl = NULL;
	swv_dereg_mr(t.p.tmr);
	swv_dereg_mr(t.p.rmr);
	t.p.tmr = NULL;
	t.p.rmr = NULL;
	/* Keep the name, close everything else: the device may move. */
	TEST_ASSERT_SUCCESS(swv_destroy_qp(t.p.d.sqp), "");
	TEST_ASSERT_SUCCESS(swv_destroy_qp(t.p.d.rqp), "");
	TEST_ASSERT_SUCCESS(swv_destroy_cq(t.p.d.scq), "");
	TEST_ASSERT_SUCCESS(swv_destroy_cq(t.p.d.rcq), "");
	TEST_ASSERT_SUCCESS(swv_dealloc_pd(t.p.d.pd), "");
	TEST_ASSERT_SUCCESS(swv_close_device(t.p.d.ctx), "");
	TEST_ASSERT_EQUAL(te_stats(ea).pool_live, 0, "");
	TEST_ASSERT_SUCCESS(swv_device_set_engine("pool-mv", eb), "");
	TEST_ASSERT_EQUAL(te_stats(ea).retired, 0, "");
	TEST_ASSERT_SUCCESS(swv_engine_destroy(ea), "");
	t.p.d.ctx = t_open("pool-mv");
	TEST_ASSERT_NOT_NULL(t.p.d.ctx, "");
	cnt = t_counters(t.p.d.ctx);
	TEST_ASSERT_NOT_NULL(cnt, "");
	TEST_ASSERT_EQUAL(te_stats(eb).pool_live, 1, "not from eb's pool");
	TEST_ASSERT_SUCCESS(swv_destroy_counters(cnt), "");
	TEST_ASSERT_SUCCESS(swv_close_device(t.p.d.ctx), "");
	TEST_ASSERT_SUCCESS(swv_device_destroy("pool-mv"), "");
	TEST_ASSERT_SUCCESS(swv_engine_destroy(eb), "");
	return TEST_SUCCESS;
}

static struct unit_test_suite engine_suite = {
	.name = "swverbs engine",
	.cases = {
		TEST_CASE(test_doorbell_wakes_sleeping_engine),
		TEST_CASE(test_sleeping_engine_stops_at_once),
		TEST_CASE(test_sge_length_sum_no_wrap),
		TEST_CASE(test_run_once_drives_device),
		TEST_CASE(test_two_engines),
		TEST_CASE(test_destroy_busy_engine),
		TEST_CASE(test_device_set_engine),
		TEST_CASE(test_run_once_threads_exit),
		TEST_CASE(test_run_once_offline_between_calls),
		TEST_CASE(test_engine_pools),
		TEST_CASE(test_pool_follows_device),
		TEST_CASES_END(),
	},
};

int
main(void)
{
	return unit_test_suite_runner(&engine_suite);
}
