/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * QP pacing on swverbs, accuracy and cost (not a test; run by
 * devtools/bench-pacing.sh). Two swverbs devices joined by a pair cable in
 * this process: device A sends from RAW_PACKET QPs paced with
 * swv_modify_qp_rate_limit(), device B receives every frame into one RAW
 * QP's receive queue, on an extended CQ with completion timestamps (ns of
 * CLOCK_MONOTONIC). Everything is measured on B, from those timestamps and
 * the byte_len of each receive, the bytes pacing counts (L2 header to the
 * end of the payload). Each frame carries its send queue's index in its
 * source MAC, so B meters every queue apart.
 *
 * Cases (--cases, a comma list; all three by default):
 *   rate    one paced queue at each --rates figure (Mbit/s; "max" is the
 *           wire's maximum: the device's qp_rate_limit_max when the cable
 *           carries that unpaced, else 90 % of what the cable carried
 *           unpaced in this run, measured first and again right before
 *           the case (the lower of the two: a machine that changed its
 *           speed since the first reading does not set a rate it cannot
 *           carry now), the headroom for this machine's changes of speed
 *           within the case; the bench prints which);
 *   queues  --queues paced queues at once on device A, sharing
 *           --mq-total Mbit/s equally (each queue at total / n);
 *   cpu     CPU per frame, paced against unpaced at the same packet rate
 *           (--cpu-rate Mbit/s), see below.
 * In the rate and queues cases the application keeps every send queue
 * full (a queue never waits for the application, so what leaves it is the
 * pacer's doing); it counts the times it found a queue empty (underruns),
 * which would make the pacer look slow.
 *
 * Figures, per queue:
 *   - achieved rate over each 1 s window (--window) of the run after a
 *     warm-up, and its error against the target: the window's rate is the
 *     bytes of its frames after its first one over the time from its first
 *     frame to its last, so it does not depend on where the window's edges
 *     fall between frames. The warm-up (the larger of 100 ms and twice the
 *     time the rate takes to send one bucket, max_burst_sz) lets the
 *     bucket's first burst out first; the window figure is the worst
 *     window, the long-run rate is over the whole run after the warm-up;
 *   - the token-bucket check over the whole run, first frame included:
 *     the largest bytes(t0, t1) - rate x (t1 - t0) over all pairs of frames
 *     (both ends' frames counted), against max_burst_sz (O(1) a frame:
 *     bytes through frame j minus rate x t_j, less the least of bytes
 *     before frame i minus rate x t_i over i <= j; in integers, exact,
 *     as the pacer's own arithmetic). max_burst_sz is
 *     --burst, or 0 for the device's default; the bench reads the depth
 *     in force from swv_qp_pace_stats(), and prints from it too the
 *     pacer's worst late release and the share of the case the bucket
 *     sat full (the rate it left unused: a shortfall the pacer itself
 *     sees, so not the bench's doing).
 * Each case prints the other load it met: wait, the ms a second this
 * process's threads sat runnable but not running (other processes had the
 * CPU), and steal, the ms a second the hypervisor ran something else on
 * the machine's CPUs. A pacer late with both near 0 is late by itself.
 * With many queues the error per queue is given as the worst and the
 * median over the queues (each queue's worst window), and the burst as the
 * worst queue's. Frames B dropped (rx_out_of_buffer: the application did
 * not repost receives fast enough) are printed: a case with drops
 * under-reads its rate.
 *
 * CPU (case cpu): process CPU time (CLOCK_PROCESS_CPUTIME_ID: the
 * application and the engine thread, if any) over the frames B received,
 * measured after the warm-up. Unpaced (A): the QP has no limit and the
 * application posts frames on a schedule at the packet rate of the target
 * (its own pacing); paced (B): the QP is limited to the target and the
 * application keeps it full. Both loops are the same otherwise: poll,
 * repost, post, and nap --nap us when a pass found nothing to do (on the
 * inline engine, no later than the next paced departure less the nap's
 * own lateness, none when it is nearer: pb_nap()). This
 * machine's processes run at one of two speeds, so A and B are compared
 * within one process, A B B A A B B A ... (--pairs pairs, neither always
 * first); the i-th A run and the i-th B run make a pair, and the figure is
 * the median over pairs of B's CPU per frame over A's; a pair whose two
 * packet rates differ by more than 1 % is left out (printed).
 *
 * Goals (printed with a PASS or MISS line each): error <= 0.5 % per queue
 * (every window of every queue) at every rate and queue count; no burst
 * above max_burst_sz; pacing costs <= 5 % CPU per frame. A rate above what
 * the cable carries unpaced is printed, not judged. Each case says whether
 * its host was quiet (the case's whole steal <= --quiet-steal ms, as one
 * 1 s window may hold it all, and wait or other, the CPU time of other
 * processes and the kernel, <= --quiet-wait ms a second; 5 and 5 by
 * default: the accuracy goal's own 0.5 % of a second),
 * else LOADED: a miss of the accuracy or CPU goal there is printed apart,
 * as no reading of the goal (NO READING when no quiet case missed); the
 * burst bound holds under any load and is judged in every case.
 *
 * Core layout (--progress): thread (default): the application (posting,
 * polling, metering) on CPU --app-cpu (0), both devices on one swverbs
 * engine whose thread is pinned to --engine-cpu (1); service: the same,
 * with a thread of the bench calling swv_engine_run_once() in a loop on
 * --engine-cpu, as a DPDK service lcore would; inline: both devices on the
 * inline engine, all work in the application's verbs calls on --app-cpu.
 *
 * usage: bench-pacing [--progress thread|service|inline] [--seconds S]
 *        [--window S] [--cases rate,queues,cpu] [--rates R,R..|max]
 *        [--queues N,N..] [--mq-total MBPS] [--cpu-rate MBPS]
 *        [--pairs N] [--cpu-seconds S] [--size BYTES] [--burst BYTES]
 *        [--nap US] [--nap-plain] [--quiet-wait MS] [--quiet-steal MS]
 *        [--app-cpu N] [--engine-cpu N]
 * Exit: 0 when every case ran (whatever the goals say), 1 otherwise.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "swverbs.h"
#include "swv_clock.h"
#include "swv_test_util.h"

#define PB_RX_RING 32768	/* receive WQEs on B */
#define PB_RX_BUF 2048		/* bytes a receive buffer */
#define PB_RX_CQE 65536
#define PB_TX_CQE 16384
#define PB_TX_WQES 65536	/* send WQEs over all queues of a case */
#define PB_BATCH 64		/* polls and posts at a time */
#define PB_CREDIT (PB_RX_RING / 2)	/* frames in flight, unpaced */
#define PB_MAX_QUEUES 4096
#define PB_MAX_LIST 16
#define PB_GOAL_ERR 0.5		/* % */
#define PB_GOAL_CPU 5.0		/* % */
#define PB_SPIN_NS 20000ull	/* a nap shorter: none, a spin */
#define PB_DUE_LATE_NS 1000000ull	/* a nap ends this soon after a departure */
#define PB_HOST_NOTE "host: quiet when the case's whole steal <= " \
	"--quiet-steal ms (one window may hold all of it) and wait or " \
	"other <= --quiet-wait ms a second, else LOADED: a miss then is no " \
	"reading of the accuracy goal (a thread kept from its CPU that " \
	"long can miss by that much with no fault of the pacer's)"
#define PB_LOAD_NOTE "wait: ms a second this process's threads sat " \
	"runnable but not running (other processes had the CPU; " \
	"/proc/self/task/*/schedstat); steal: ms a second the hypervisor " \
	"ran something else on this machine's CPUs (/proc/stat); other: " \
	"ms a second of CPU time that other processes and the kernel " \
	"took (/proc/stat's busy time less this process's: a wait with " \
	"no other is this process's threads' own wake-ups, not load); " \
	"wait with other, and steal, are other load, not the pacer's doing"

/* Source MAC of queue q: 02:70:62:00:qh:ql. */
static const uint8_t pb_src_prefix[4] = { 0x02, 0x70, 0x62, 0x00 };

struct pb_opts {
	const char *progress;
	double seconds;		/* measured time a case, after its warm-up */
	double window;		/* s */
	bool do_rate, do_queues, do_cpu;
	char rates[PB_MAX_LIST][16];	/* Mbit/s figures or "max" */
	unsigned int nrates;
	unsigned int queues[PB_MAX_LIST];
	unsigned int nqueues;
	double mq_total;	/* Mbit/s */
	double cpu_rate;	/* Mbit/s */
	unsigned int pairs;
	double cpu_seconds;
	unsigned int size;	/* frame bytes */
	uint32_t burst;		/* max_burst_sz asked for; 0: the default */
	unsigned int nap_us;
	bool nap_plain;		/* naps of --nap whatever waits */
	double quiet_wait;	/* ms a second: a quiet host's most */
	double quiet_steal;
	int app_cpu, engine_cpu;
};

/* What B measures of one send queue. */
struct pb_meter {
	double rate;		/* target, bytes a ns; 0: none */
	uint64_t warm_end;	/* ns: windows start here */
	uint64_t end;		/* ns: frames after it are not metered */
	uint64_t t0;		/* first frame's timestamp */
	uint64_t frames;
	double bytes;		/* through the last frame */
	/*
	 * The token-bucket check in exact integers, bytes scaled to ns x
	 * kbit/s (PB_NS_KBPS a byte), as the pacer counts: in doubles, the
	 * products of the rate and times of seconds round by a few
	 * millionths of a byte, which made a burst of exactly the bucket
	 * read as a byte's fraction above it.
	 */
	uint64_t kbps;		/* the target */
	int64_t dmin;		/* least bytes before frame i - rate x t_i */
	int64_t iexcess;	/* largest bytes(t0, t1) - rate x (t1 - t0) */
	double excess;		/* the same in bytes */
	double bucket;		/* max_burst_sz in force, bytes */
	/* the current window, [wbeg, wbeg + window) */
	uint64_t wbeg, wlen;
	uint64_t wft, wlt;	/* its first and last frame's timestamps */
	double wfb, wlb;	/* bytes through them */
	uint32_t wn;		/* its frames */
	uint32_t nwin;		/* complete windows */
	double worst;		/* largest |error| of a window, fraction */
	double worst_signed;
	/* after the warm-up, for the long-run rate and the CPU figure */
	uint64_t lft, llt;
	double lfb, llb;
	uint64_t ln;
};

struct pb_txq {
	struct ibv_qp *qp;
	uint64_t posted;	/* frames posted */
	uint64_t done;		/* frames completed (signaled CQEs x sig) */
	struct pb_meter m;
};

struct pb_env {
	struct swv_engine *eng;	/* NULL: inline */
	bool service;
	pthread_t svc;
	volatile int svc_stop;
	char na[SWV_NAME_MAX], nb[SWV_NAME_MAX];
	struct ibv_context *ca, *cb;
	struct ibv_pd *pa, *pb;
	struct ibv_cq *scq;	/* A's send CQ, shared by its QPs */
	struct ibv_cq_ex *rcq;	/* B's receive CQ, timestamps */
	struct ibv_qp *rqp;
	struct ibv_flow *fl;
	struct ibv_mr *tmr, *rmr;
	uint8_t *tbuf, *rbuf;
	uint8_t amac[6], bmac[6];
	struct ibv_packet_pacing_caps caps;
	uint64_t stray;		/* frames B got from no queue of the case */
	uint64_t rx_errors;	/* receive completions in error */
	uint64_t tx_errors;	/* send completions in error */
};

/* Results of one case. */
struct pb_result {
	bool ok;
	unsigned int nq;
	double target;		/* Mbit/s a queue */
	double longrun;		/* Mbit/s, queue 0, after the warm-up */
	double err_worst;	/* % worst window over all queues (signed) */
	double err_median;	/* % median over queues of their worst */
	double lr_worst;	/* % worst long-run error over the queues */
	uint32_t windows;	/* least complete windows over the queues */
	double excess;		/* bytes, the queue worst against its bucket */
	double bucket;		/* that queue's max_burst_sz in force */
	double burst_ratio;	/* its excess / bucket */
	double late_us;		/* the pacer's worst late release, us */
	double full_pct;	/* worst share of the case a bucket sat full */
	uint64_t frames;	/* metered after the warm-up, all queues */
	double pps;		/* of those, a second */
	double cpu_ns;		/* process CPU a metered frame */
	uint64_t dropped;	/* B's rx_out_of_buffer over the case */
	uint64_t underruns;	/* send queues found empty */
	double wait_ms;		/* ms a second runnable, not running */
	double other_ms;	/* ms a second of others' CPU time */
	double steal_ms;	/* ms a second the hypervisor took */
	double steal_case_ms;	/* ms it took over the case */
	/*
	 * The max case: the cable carried less than the target unpaced
	 * right after it (the machine slowed down): no reading, as a host
	 * LOADED.
	 */
	bool slowed;
};

static struct pb_opts opt = {
	.progress = "thread",
	.seconds = 3,
	.window = 1,
	.do_rate = true, .do_queues = true, .do_cpu = true,
	.rates = { "1", "10", "100", "1000", "10000", "max" },
	.nrates = 6,
	.queues = { 1, 64, 1024 },
	.nqueues = 3,
	.mq_total = 1000,
	.cpu_rate = 1000,
	.pairs = 3,
	.cpu_seconds = 0.5,
	.size = 1514,
	.burst = 0,
	.nap_us = 50,
	.quiet_wait = 5,
	.quiet_steal = 5,
	.app_cpu = 0,
	.engine_cpu = 1,
};

/* A clock in ns: CLOCK_MONOTONIC (the timestamps' clock) or CPU time. */
static uint64_t
pb_clock(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#define pb_now() pb_clock(CLOCK_MONOTONIC)
#define pb_cpu_now() pb_clock(CLOCK_PROCESS_CPUTIME_ID)

/*
 * The application's nap when a pass found nothing to do: --nap us; but,
 * when a paced QP waits on the devices (swv_engine_pace_window()), to
 * PB_DUE_LATE_NS after the earliest departure or half-way to the
 * earliest time a waiting QP's bucket is full, whichever comes first,
 * less this thread's own nap lateness (the largest of the last second or
 * two, less its run-queue waits: swv_late, swv_run_delay_ns(); none while
 * those waits are the larger, as the engine thread does), and none when
 * that is nearer than PB_SPIN_NS: on the inline engine the departures
 * happen in this thread's verbs calls, and one called again before the
 * bucket is full loses no rate (what came due meanwhile goes as a batch,
 * within the bucket), so one wake-up serves a batch of departures, not
 * each. The other half of the time to the full bucket is the margin of a
 * wake-up later than the estimate; the bound after the departure keeps a
 * slow queue's frames (one every few ms) within a millisecond of their
 * times, which a 1 s window's rate would see (a frame 5 ms late at either
 * end of a window is 0.5 %). A busy-polling application (testpmd's forwarding
 * lcores) never naps; one that naps must keep its naps to this. Only on
 * the inline engine: the thread and service models release departures
 * on their own threads, whatever this one does. --nap-plain: a full nap
 * whatever waits (the bench before, for comparison).
 */
static struct {
	struct swv_late late;	/* this thread's nap lateness */
	struct swv_late rq;	/* its run-queue waits in naps */
	int sched_fd;		/* its schedstat, -1: none */
	uint64_t naps, cut, skipped, stretched;
} pb_naps = { .sched_fd = -1 };

static void
pb_nap(struct pb_env *e)
{
	uint64_t ns = (uint64_t)opt.nap_us * 1000, now, due, latest, late;
	uint64_t rd, wake;
	struct timespec ts;

	if (ns == 0)
		return;
	now = pb_now();
	if (!opt.nap_plain && e->eng == NULL &&
	    swv_engine_pace_window(swv_engine_inline(), &due, &latest) == 0 &&
	    due != UINT64_MAX) {
		late = swv_late_get(&pb_naps.late, now);
		if (swv_late_get(&pb_naps.rq, now) > late)
			late = 0;	/* a contended CPU: no spin */
		if (latest <= now + late + PB_SPIN_NS) {
			pb_naps.skipped++;
			return;
		}
		wake = (latest - now - late) / 2;
		if (due + PB_DUE_LATE_NS < now + late + wake)
			wake = due + PB_DUE_LATE_NS > now + late ?
			       due + PB_DUE_LATE_NS - now - late : 0;
		if (wake <= PB_SPIN_NS) {
			pb_naps.skipped++;
			return;
		}
		if (wake < ns)
			pb_naps.cut++;
		else if (wake > ns)
			pb_naps.stretched++;
		ns = wake;
	}
	pb_naps.naps++;
	ts.tv_sec = (time_t)(ns / 1000000000ull);
	ts.tv_nsec = (long)(ns % 1000000000ull);
	wake = now + ns;
	rd = swv_run_delay_ns(pb_naps.sched_fd);
	nanosleep(&ts, NULL);
	now = pb_now();
	rd = swv_run_delay_ns(pb_naps.sched_fd) - rd;
	if (rd > now - wake)
		rd = now > wake ? now - wake : 0;
	swv_late_add(&pb_naps.late, wake, now - rd);
	swv_late_add(&pb_naps.rq, now - rd, now);
}

/*
 * A case's host was quiet enough to read the goal against: little steal,
 * and little run-queue wait or no other CPU time to explain it (the wait
 * of a thread that naps or sleeps some 10,000 times a second, each
 * wake-up under a us on the run queue of an idle CPU, is its own). The
 * steal is the case's whole (one 1 s window may hold all of it: the
 * hypervisor takes a CPU a 10-ms tick at a time, and one tick in a window
 * is 1 % of it), the waits a second's.
 */
static bool
pb_quiet(const struct pb_result *r)
{
	return r->steal_case_ms <= opt.quiet_steal &&
	       (r->wait_ms <= opt.quiet_wait || r->other_ms <= opt.quiet_wait);
}

static int
pb_pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) == 0 ? 0 : errno;
}

/*
 * Other load, over a metered run: the ms this process's threads spent
 * runnable but not running (the run-queue wait of each thread,
 * /proc/self/task/<tid>/schedstat's second field: other processes of this
 * machine had the CPU), and the ms the hypervisor ran something else on
 * this machine's CPUs (steal, /proc/stat). Neither is the pacer's doing;
 * a pacer late with both near 0 is.
 */
struct pb_load {
	uint64_t wait_ns;
	uint64_t steal_ns;
	uint64_t busy_ns;	/* the machine's CPU time, all CPUs */
	uint64_t own_ns;	/* this process's */
};

static void
pb_load_read(struct pb_load *l)
{
	unsigned long long user, nice, sys, idle, iow, irq, sirq, steal;
	char path[300];
	struct dirent *d;
	FILE *f;
	DIR *dir;

	memset(l, 0, sizeof(*l));
	dir = opendir("/proc/self/task");
	while (dir != NULL && (d = readdir(dir)) != NULL) {
		unsigned long long run, wait;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat",
			 d->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fscanf(f, "%llu %llu", &run, &wait) == 2)
			l->wait_ns += wait;
		fclose(f);
	}
	if (dir != NULL)
		closedir(dir);
	f = fopen("/proc/stat", "r");
	if (f == NULL)
		return;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user,
		   &nice, &sys, &idle, &iow, &irq, &sirq, &steal) == 8) {
		l->steal_ns = (uint64_t)(steal * (1e9 / sysconf(_SC_CLK_TCK)));
		l->busy_ns = (uint64_t)((user + nice + sys + irq + sirq) *
					(1e9 / sysconf(_SC_CLK_TCK)));
	}
	fclose(f);
	l->own_ns = pb_cpu_now();
}

/*
 * The meter.
 *//*
 * The meter.
 */

/* ns x kbit/s in a byte: 8 bits a byte, 1e9 ns a s, 1e3 bit/s a kbit/s. */
#define PB_NS_KBPS 8000000ll

static void
meter_init(struct pb_meter *m, uint32_t kbps, uint64_t warm_end,
	   uint64_t end)
{
	memset(m, 0, sizeof(*m));
	m->kbps = kbps;
	m->rate = kbps / 8e6;
	m->warm_end = warm_end;
	m->end = end;
	m->wbeg = warm_end;
	m->wlen = (uint64_t)(opt.window * 1e9);
}

/* Close the current window and open the next one. */
static void
meter_next_window(struct pb_meter *m)
{
	double err = -1;	/* fewer than two frames: nothing came */

	if (m->wn >= 2 && m->wlt > m->wft && m->rate > 0)
		err = (m->wlb - m->wfb) / (double)(m->wlt - m->wft) /
		      m->rate - 1;
	if (m->rate > 0) {
		if (fabs(err) > m->worst) {
			m->worst = fabs(err);
			m->worst_signed = err;
		}
		m->nwin++;
	}
	m->wbeg += m->wlen;
	m->wn = 0;
}

static void
meter_add(struct pb_meter *m, uint64_t ts, uint32_t len)
{
	int64_t rt, d;

	if (ts > m->end)
		return;
	if (m->frames == 0)
		m->t0 = ts;
	rt = (int64_t)m->kbps * (int64_t)(ts - m->t0);
	/* token bucket: bytes before this frame - rate x t */
	d = (int64_t)m->bytes * PB_NS_KBPS - rt;
	if (m->frames == 0 || d < m->dmin)
		m->dmin = d;
	m->frames++;
	m->bytes += len;
	d = (int64_t)m->bytes * PB_NS_KBPS - rt - m->dmin;
	if (d > m->iexcess) {
		m->iexcess = d;
		m->excess = (double)d / PB_NS_KBPS;
	}
	if (ts < m->warm_end)
		return;
	while (ts >= m->wbeg + m->wlen)
		meter_next_window(m);
	if (m->wn == 0) {
		m->wft = ts;
		m->wfb = m->bytes;
	}
	m->wlt = ts;
	m->wlb = m->bytes;
	m->wn++;
	if (m->ln == 0) {
		m->lft = ts;
		m->lfb = m->bytes;
	}
	m->llt = ts;
	m->llb = m->bytes;
	m->ln++;
}

/* Long-run rate after the warm-up, bytes a ns (0: too few frames). */
static double
meter_longrun(const struct pb_meter *m)
{
	if (m->ln < 2 || m->llt <= m->lft)
		return 0;
	return (m->llb - m->lfb) / (double)(m->llt - m->lft);
}

/*
 * The devices.
 */

static void *
pb_service(void *arg)
{
	struct pb_env *e = arg;

	pb_pin(opt.engine_cpu);
	while (!__atomic_load_n(&e->svc_stop, __ATOMIC_RELAXED))
		swv_engine_run_once(e->eng);
	return NULL;
}

static int
pb_post_recvs(struct pb_env *e, const uint64_t *ids, unsigned int n)
{
	struct ibv_recv_wr wr[PB_BATCH], *bad;
	struct ibv_sge sge[PB_BATCH];
	unsigned int i;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++) {
		sge[i].addr = (uintptr_t)(e->rbuf + ids[i] * PB_RX_BUF);
		sge[i].length = PB_RX_BUF;
		sge[i].lkey = e->rmr->lkey;
		wr[i].wr_id = ids[i];
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	return ibv_post_recv(e->rqp, wr, &bad);
}

static int
pb_env_setup(struct pb_env *e)
{
	struct swv_device_attr attr = { .flags = SWV_DEVICE_PROFILE_MLX5 };
	struct ibv_device_attr_ex dx;
	struct ibv_cq_init_attr_ex ca;
	struct ibv_qp_init_attr qa;
	char wire[SWV_NAME_MAX + 8];
	uint64_t ids[PB_BATCH];
	unsigned int i, j;
	int ret;

	memset(e, 0, sizeof(*e));
	if (strcmp(opt.progress, "inline") == 0) {
		attr.engine = swv_engine_inline();
	} else if (strcmp(opt.progress, "thread") == 0 ||
		   strcmp(opt.progress, "service") == 0) {
		e->eng = swv_engine_create();
		if (e->eng == NULL)
			return errno;
		attr.engine = e->eng;
		e->service = opt.progress[0] == 's';
		ret = e->service ?
		      pthread_create(&e->svc, NULL, pb_service, e) :
		      swv_engine_start(e->eng, opt.engine_cpu);
		if (ret != 0) {
			fprintf(stderr, "bench-pacing: engine: %s\n",
				strerror(ret));
			return ret;
		}
	} else {
		fprintf(stderr, "bench-pacing: --progress %s: thread, "
			"service or inline\n", opt.progress);
		return EINVAL;
	}
	snprintf(e->na, sizeof(e->na), "pba%d", (int)getpid());
	snprintf(e->nb, sizeof(e->nb), "pbb%d", (int)getpid());
	snprintf(wire, sizeof(wire), "pair:pbc%d", (int)getpid());
	ret = swv_device_create_attr(e->na, wire, NULL, &attr);
	if (ret == 0)
		ret = swv_device_create_attr(e->nb, wire, NULL, &attr);
	if (ret != 0) {
		fprintf(stderr, "bench-pacing: devices on %s: %s\n", wire,
			strerror(ret));
		return ret;
	}
	e->ca = t_open(e->na);
	e->cb = t_open(e->nb);
	if (e->ca == NULL || e->cb == NULL)
		return ENODEV;
	swv_query_port_mac(e->ca, e->amac);
	swv_query_port_mac(e->cb, e->bmac);
	memset(&dx, 0, sizeof(dx));
	ret = swv_query_device_ex(e->ca, NULL, &dx);
	if (ret != 0)
		return ret;
	e->caps = dx.packet_pacing_caps;
	e->pa = swv_alloc_pd(e->ca);
	e->pb = swv_alloc_pd(e->cb);
	if (e->pa == NULL || e->pb == NULL)
		return errno;
	e->tbuf = calloc(PB_MAX_QUEUES, opt.size);
	e->rbuf = calloc(PB_RX_RING, PB_RX_BUF);
	if (e->tbuf == NULL || e->rbuf == NULL)
		return ENOMEM;
	for (i = 0; i < PB_MAX_QUEUES; i++) {
		uint8_t *p = e->tbuf + (size_t)i * opt.size;

		memcpy(p, e->bmac, 6);
		memcpy(p + 6, pb_src_prefix, 4);
		p[10] = (uint8_t)(i >> 8);
		p[11] = (uint8_t)i;
		p[12] = 0x88;
		p[13] = 0xb5;
		for (j = 14; j < opt.size; j++)
			p[j] = (uint8_t)(i + j);
	}
	e->tmr = swv_reg_mr(e->pa, e->tbuf, (size_t)PB_MAX_QUEUES * opt.size,
			    0);
	e->rmr = swv_reg_mr(e->pb, e->rbuf, (size_t)PB_RX_RING * PB_RX_BUF,
			    IBV_ACCESS_LOCAL_WRITE);
	e->scq = swv_create_cq(e->ca, PB_TX_CQE, NULL, NULL, 0);
	memset(&ca, 0, sizeof(ca));
	ca.cqe = PB_RX_CQE;
	ca.wc_flags = IBV_WC_EX_WITH_BYTE_LEN |
		      IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	e->rcq = swv_create_cq_ex(e->cb, &ca);
	if (e->tmr == NULL || e->rmr == NULL || e->scq == NULL ||
	    e->rcq == NULL)
		return errno;
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = ibv_cq_ex_to_cq(e->rcq);
	qa.recv_cq = ibv_cq_ex_to_cq(e->rcq);
	qa.qp_type = IBV_QPT_RAW_PACKET;
	qa.sq_sig_all = 1;
	qa.cap.max_send_wr = 1;
	qa.cap.max_recv_wr = PB_RX_RING;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	e->rqp = swv_create_qp(e->pb, &qa);
	if (e->rqp == NULL)
		return errno;
	ret = t_qp_to(e->rqp, IBV_QPS_RTR);
	if (ret != 0)
		return ret;
	e->fl = t_flow_eth(e->rqp, e->bmac, 0);
	if (e->fl == NULL)
		return errno;
	for (i = 0; i < PB_RX_RING; i += PB_BATCH) {
		for (j = 0; j < PB_BATCH; j++)
			ids[j] = i + j;
		ret = pb_post_recvs(e, ids, PB_BATCH);
		if (ret != 0)
			return ret;
	}
	return 0;
}

static void
pb_env_teardown(struct pb_env *e)
{
	if (e->fl != NULL)
		swv_destroy_flow(e->fl);
	if (e->rqp != NULL)
		swv_destroy_qp(e->rqp);
	if (e->rcq != NULL)
		swv_destroy_cq(ibv_cq_ex_to_cq(e->rcq));
	if (e->scq != NULL)
		swv_destroy_cq(e->scq);
	if (e->tmr != NULL)
		swv_dereg_mr(e->tmr);
	if (e->rmr != NULL)
		swv_dereg_mr(e->rmr);
	if (e->pa != NULL)
		swv_dealloc_pd(e->pa);
	if (e->pb != NULL)
		swv_dealloc_pd(e->pb);
	if (e->ca != NULL)
		swv_close_device(e->ca);
	if (e->cb != NULL)
		swv_close_device(e->cb);
	swv_device_destroy(e->na);
	swv_device_destroy(e->nb);
	if (e->service) {
		__atomic_store_n(&e->svc_stop, 1, __ATOMIC_RELAXED);
		pthread_join(e->svc, NULL);
	}
	if (e->eng != NULL)
		swv_engine_destroy(e->eng);
	free(e->tbuf);
	free(e->rbuf);
}

/*
 * One case: @nq queues of A, each limited to @kbps (0: no limit), posted
 * full, or (@pps > 0) on a schedule of @pps frames a second over all
 * queues. Runs the warm-up and then @secs seconds, metering on B.
 */

struct pb_case {
	struct pb_txq *q;
	unsigned int nq;
	unsigned int depth;	/* send WQEs a queue */
	unsigned int sig;	/* one signaled WQE in sig */
	double pps;
	/*
	 * Unpaced and kept full: frames in flight held to PB_CREDIT, the
	 * receive buffers B has free, so that the cable figure is what
	 * reaches B, not what B drops.
	 */
	bool credit;
	uint64_t posted;	/* over all queues */
	uint64_t received;	/* frames of the case B completed */
	uint64_t start;
	uint64_t underruns;
};

/* Post what queue @i may take now (its room, or @limit at most). */
static unsigned int
pb_fill(struct pb_env *e, struct pb_case *c, unsigned int i, uint64_t limit)
{
	struct pb_txq *q = &c->q[i];
	struct ibv_sge sge[PB_BATCH];
	uint64_t ids[PB_BATCH];
	uint8_t sig[PB_BATCH];
	uint64_t room = c->depth - (q->posted - q->done);
	unsigned int n, k, total = 0;

	if (c->pps < 0)
		return 0;	/* the case's tail */
	if (q->posted == q->done && q->posted > 0 && c->pps == 0 &&
	    !c->credit)
		c->underruns++;
	if (room > limit)
		room = limit;
	if (c->credit) {
		uint64_t fly = c->posted - c->received;

		if (room > PB_CREDIT - fly)
			room = fly < PB_CREDIT ? PB_CREDIT - fly : 0;
	}
	while (room > 0) {
		n = room < PB_BATCH ? (unsigned int)room : PB_BATCH;
		for (k = 0; k < n; k++) {
			sge[k].addr = (uintptr_t)(e->tbuf +
						  (size_t)i * opt.size);
			sge[k].length = opt.size;
			sge[k].lkey = e->tmr->lkey;
			ids[k] = i;
			sig[k] = (q->posted + k) % c->sig == c->sig - 1;
		}
		k = swv_post_send_burst(q->qp, n, ids, sge, sig);
		q->posted += k;
		c->posted += k;
		total += k;
		room -= k;
		if (k < n)
			break;
	}
	return total;
}

/* Poll B's receive CQ once: meter, repost. Returns the completions. */
static unsigned int
pb_poll_rx(struct pb_env *e, struct pb_case *c)
{
	struct ibv_poll_cq_attr pa = { .comp_mask = 0 };
	struct ibv_cq_ex *cq = e->rcq;
	uint64_t ids[PB_BATCH];
	unsigned int n = 0;
	int ret;

	ret = ibv_start_poll(cq, &pa);
	while (ret == 0) {
		uint64_t id = cq->wr_id;
		const uint8_t *p = e->rbuf + id * PB_RX_BUF;
		unsigned int qi = (unsigned int)p[10] << 8 | p[11];

		if (cq->status != IBV_WC_SUCCESS)
			e->rx_errors++;
		else if (c == NULL)
			;	/* after a case: its last frames */
		else if (memcmp(p + 6, pb_src_prefix, 4) != 0 || qi >= c->nq)
			e->stray++;
		else {
			meter_add(&c->q[qi].m, ibv_wc_read_completion_ts(cq),
				  ibv_wc_read_byte_len(cq));
			c->received++;
		}
		ids[n++] = id;
		if (n == PB_BATCH)
			break;
		ret = ibv_next_poll(cq);
	}
	if (ret == 0 || n > 0)
		ibv_end_poll(cq);
	if (pb_post_recvs(e, ids, n) != 0)
		e->rx_errors += n;
	return n;
}

/* Poll A's send CQ once; in fill mode, refill the queues it names. */
static unsigned int
pb_poll_tx(struct pb_env *e, struct pb_case *c)
{
	struct ibv_wc wc[PB_BATCH];
	int n, k;

	n = ibv_poll_cq(e->scq, PB_BATCH, wc);
	for (k = 0; k < n; k++) {
		if (wc[k].status != IBV_WC_SUCCESS) {
			e->tx_errors++;
			continue;
		}
		if (c != NULL && wc[k].wr_id < c->nq) {
			c->q[wc[k].wr_id].done += c->sig;
			if (c->pps == 0)
				pb_fill(e, c, (unsigned int)wc[k].wr_id,
					UINT64_MAX);
		}
	}
	return n > 0 ? (unsigned int)n : 0;
}

/* Poll both CQs until nothing came for 20 ms (the end of a case). */
static void
pb_drain(struct pb_env *e)
{
	uint64_t quiet = pb_now() + 20000000ull;

	while (pb_now() < quiet)
		if (pb_poll_rx(e, NULL) + pb_poll_tx(e, NULL) > 0)
			quiet = pb_now() + 20000000ull;
		else
			pb_nap(e);
}

static int
pb_set_rate(struct ibv_qp *qp, uint32_t kbps)
{
	struct ibv_qp_rate_limit_attr ra;

	memset(&ra, 0, sizeof(ra));
	ra.rate_limit = kbps;
	ra.max_burst_sz = opt.burst;
	ra.typical_pkt_sz = 0;
	return swv_modify_qp_rate_limit(qp, &ra);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of @n values (sorts them); 0 for none. */
static double
pb_median(double *v, unsigned int n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(v[0]), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int
pb_run(struct pb_env *e, unsigned int nq, uint32_t kbps, double pps,
       double secs, struct pb_result *r)
{
	struct swv_port_counters c0, c1;
	struct pb_case c;
	struct ibv_qp_init_attr qa;
	double rate = kbps / 8e6, *worst = NULL, *bucket = NULL, bmax = 0;
	struct swv_qp_pace_stats ps;
	uint64_t warm, end, now, cpu0 = 0, cpu1 = 0, due;
	struct pb_load l0 = { 0 }, l1 = { 0 };
	bool cpu_started = false;
	unsigned int i, k, next = 0;
	int ret = 0;

	memset(r, 0, sizeof(*r));
	memset(&c, 0, sizeof(c));
	r->nq = nq;
	r->target = kbps / 1000.0;
	c.nq = nq;
	c.pps = pps;
	c.credit = kbps == 0 && pps == 0;
	c.depth = PB_TX_WQES / nq;
	if (c.depth > 8192)
		c.depth = 8192;
	if (c.depth < 16)
		c.depth = 16;
	c.sig = c.depth / 8;
	c.q = calloc(nq, sizeof(*c.q));
	worst = calloc(nq, sizeof(*worst));
	bucket = calloc(nq, sizeof(*bucket));
	if (c.q == NULL || worst == NULL || bucket == NULL) {
		ret = ENOMEM;
		goto out;
	}
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = e->scq;
	qa.recv_cq = e->scq;
	qa.qp_type = IBV_QPT_RAW_PACKET;
	qa.sq_sig_all = 0;
	qa.cap.max_send_wr = c.depth;
	qa.cap.max_send_sge = 1;
	for (i = 0; i < nq; i++) {
		c.q[i].qp = swv_create_qp(e->pa, &qa);
		if (c.q[i].qp == NULL) {
			ret = errno;
			fprintf(stderr, "bench-pacing: QP %u of %u: %s\n", i,
				nq, strerror(ret));
			goto out;
		}
		ret = t_qp_to(c.q[i].qp, IBV_QPS_RTS);
		if (ret == 0 && kbps > 0)
			ret = pb_set_rate(c.q[i].qp, kbps);
		if (ret == 0 && kbps > 0)
			ret = swv_qp_pace_stats(c.q[i].qp, &ps);
		bucket[i] = kbps > 0 && ret == 0 ? ps.max_burst_sz : 0;
		if (bucket[i] > bmax)
			bmax = bucket[i];
		if (ret != 0) {
			fprintf(stderr, "bench-pacing: QP %u, rate %" PRIu32
				" kbit/s, burst %" PRIu32 ": %s\n", i, kbps,
				opt.burst, strerror(ret));
			goto out;
		}
	}
	/* The warm-up: the bucket's first burst out, twice over. */
	warm = 100000000ull;
	if (rate > 0 && 2 * bmax / rate > warm)
		warm = (uint64_t)(2 * bmax / rate);
	swv_query_port_counters(e->cb, &c0);
	c.start = pb_now();
	end = c.start + warm + (uint64_t)(secs * 1e9);
	for (i = 0; i < nq; i++) {
		meter_init(&c.q[i].m, kbps, c.start + warm, end);
		c.q[i].m.bucket = bucket[i];
	}
	if (pps == 0)
		for (i = 0; i < nq; i++)
			pb_fill(e, &c, i, UINT64_MAX);
	for (;;) {
		bool busy = false;

		now = pb_now();
		if (!cpu_started && now >= c.start + warm) {
			cpu0 = pb_cpu_now();
			pb_load_read(&l0);
			cpu_started = true;
		}
		if (now >= end && cpu1 == 0) {
			cpu1 = pb_cpu_now();
			pb_load_read(&l1);
			swv_query_port_counters(e->cb, &c1);
			/* no more posts: the fill on completion stops too */
			c.pps = -1;
		}
		busy |= pb_poll_rx(e, &c) > 0;
		if (now >= end) {
			/*
			 * The tail: what B timestamped up to the end may
			 * still wait in its CQ; what came after is not
			 * metered.
			 */
			if (!busy || now >= end + 10000000ull)
				break;
			continue;
		}
		busy |= pb_poll_tx(e, &c) > 0;
		for (i = 0; c.credit && i < nq; i++)
			busy |= pb_fill(e, &c, i, UINT64_MAX) > 0;
		if (pps > 0) {
			uint64_t posted = 0;

			for (i = 0; i < nq; i++)
				posted += c.q[i].posted;
			due = (uint64_t)(pps * (double)(now - c.start) / 1e9);
			/* round robin over the queues, one at a time */
			for (k = 0; posted < due && k < nq; k++) {
				unsigned int got = pb_fill(e, &c, next, 1);

				posted += got;
				busy |= got > 0;
				next = (next + 1) % nq;
			}
		}
		if (!busy)
			pb_nap(e);
	}
	r->dropped = c1.rx_out_of_buffer - c0.rx_out_of_buffer;
	r->underruns = c.underruns;
	/* the frames metered: those B timestamped up to the end */
	for (i = 0; i < nq; i++) {
		struct pb_meter *m = &c.q[i].m;
		double lr = meter_longrun(m);

		/* the windows the run covered whole, up to its end */
		while (m->rate > 0 && m->wbeg + m->wlen <= m->end)
			meter_next_window(m);
		worst[i] = m->worst * 100;
		if (i == 0 || m->nwin < r->windows)
			r->windows = m->nwin;
		if (fabs(m->worst_signed * 100) >= fabs(r->err_worst))
			r->err_worst = m->worst_signed * 100;
		if (rate > 0 && fabs(lr / rate - 1) * 100 > fabs(r->lr_worst))
			r->lr_worst = (lr / rate - 1) * 100;
		if (i == 0)
			r->longrun = lr * 8e3;
		if (m->bucket > 0 && (i == 0 ||
				      m->excess / m->bucket > r->burst_ratio)) {
			r->burst_ratio = m->excess / m->bucket;
			r->excess = m->excess;
			r->bucket = m->bucket;
		}
		if (kbps > 0 && swv_qp_pace_stats(c.q[i].qp, &ps) == 0) {
			double full = ps.full_ns * 100.0 / (end - c.start);

			if (ps.late_max_ns / 1e3 > r->late_us)
				r->late_us = ps.late_max_ns / 1e3;
			if (full > r->full_pct)
				r->full_pct = full;
		}
		r->frames += m->ln;
	}
	r->pps = r->frames / (secs > 0 ? secs : 1);
	r->wait_ms = (l1.wait_ns - l0.wait_ns) / 1e6 / (secs > 0 ? secs : 1);
	r->steal_case_ms = (l1.steal_ns - l0.steal_ns) / 1e6;
	r->steal_ms = r->steal_case_ms / (secs > 0 ? secs : 1);
	r->other_ms = l1.busy_ns - l0.busy_ns > l1.own_ns - l0.own_ns ?
		      (double)(l1.busy_ns - l0.busy_ns -
			       (l1.own_ns - l0.own_ns)) / 1e6 /
		      (secs > 0 ? secs : 1) : 0;
	r->cpu_ns = r->frames > 0 ? (double)(cpu1 - cpu0) / r->frames : 0;
	r->err_median = pb_median(worst, nq);
	r->ok = true;
out:
	if (c.q != NULL)
		for (i = 0; i < nq && c.q[i].qp != NULL; i++) {
			struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

			swv_modify_qp(c.q[i].qp, &a, IBV_QP_STATE);
			swv_destroy_qp(c.q[i].qp);
		}
	pb_drain(e);
	free(c.q);
	free(worst);
	free(bucket);
	return ret;
}

/*
 * Verdicts: a goal is met, missed or has no figure, per case.
 */

struct pb_goal {
	const char *name;
	char met[512], miss[512], none[512], loaded[512];
};

static void
goal_add(struct pb_goal *g, int verdict, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* @verdict: 1 met, 0 missed, -1 no figure, -2 missed on a loaded host. */
static void
goal_add(struct pb_goal *g, int verdict, const char *fmt, ...)
{
	char *dst = verdict > 0 ? g->met : verdict == 0 ? g->miss :
		    verdict == -1 ? g->none : g->loaded;
	size_t len = strlen(dst);
	va_list ap;

	if (len > 0 && len + 2 < sizeof(g->met)) {
		strcat(dst, ", ");
		len += 2;
	}
	va_start(ap, fmt);
	vsnprintf(dst + len, sizeof(g->met) - len, fmt, ap);
	va_end(ap);
}

static void
goal_print(const struct pb_goal *g)
{
	const char *v = g->miss[0] != '\0' ? "MISS" :
			g->loaded[0] != '\0' ? "NO READING (missed only on a "
			"loaded host)" :
			g->met[0] != '\0' && g->none[0] == '\0' ? "PASS" :
			g->met[0] != '\0' ? "PASS (some cases without a figure)" :
			"MISS (no figure)";

	printf("%s: %s\n", v, g->name);
	if (g->met[0] != '\0')
		printf("    met: %s\n", g->met);
	if (g->miss[0] != '\0')
		printf("    NOT met (quiet host): %s\n", g->miss);
	if (g->loaded[0] != '\0')
		printf("    NOT met on a loaded host (wait and other > %.1f "
		       "ms/s, or steal > %.1f ms in the case; not a reading of "
		       "the goal): %s\n",
		       opt.quiet_wait, opt.quiet_steal, g->loaded);
	if (g->none[0] != '\0')
		printf("    no figure: %s\n", g->none);
}

static struct pb_goal goal_err = {
	.name = "error <= 0.5 % per queue (every 1 s window) at every rate "
		"and queue count",
};
static struct pb_goal goal_burst = {
	.name = "no burst above max_burst_sz",
};
static struct pb_goal goal_cpu = {
	.name = "pacing costs <= 5 % CPU per frame",
};

/* The judged figure of a case has a meaning (windows, no drop). */
static bool
pb_figure(const struct pb_result *r)
{
	return r->ok && r->windows > 0 && r->dropped == 0;
}

static void
pb_judge(const struct pb_result *r, const char *tag)
{
	if (!pb_figure(r)) {
		goal_add(&goal_err, -1, "%s (%s)", tag, !r->ok ? "failed" :
			 r->dropped > 0 ? "B dropped frames" : "no window");
		goal_add(&goal_burst, -1, "%s", tag);
		return;
	}
	goal_add(&goal_err, fabs(r->err_worst) <= PB_GOAL_ERR ? 1 :
		 pb_quiet(r) && !r->slowed ? 0 : -2,
		 "%s (%+.3f %%)",
		 tag, r->err_worst);
	goal_add(&goal_burst, r->excess <= r->bucket, "%s (%.0f B of %.0f)",
		 tag, r->excess, r->bucket);
}

/*
 * The cases.
 */

/* Unpaced, one queue kept full: what the cable carries, Mbit/s. */
static double
pb_cable(struct pb_env *e)
{
	struct pb_result r;
	double secs = opt.seconds < 1 ? opt.seconds : 1;

	if (pb_run(e, 1, 0, 0, secs, &r) != 0)
		return 0;
	printf("unpaced cable: %.0f Mbit/s (%.0f frames/s of %u bytes, one "
	       "queue kept full up to %u frames in flight, %.1f s; B dropped "
	       "%" PRIu64 ")\n",
	       r.longrun, r.pps, opt.size, PB_CREDIT, secs, r.dropped);
	return r.longrun;
}

static int
pb_case_rates(struct pb_env *e, double cable)
{
	double max_mbps = e->caps.qp_rate_limit_max / 1000.0;
	unsigned int i;
	int fails = 0;

	printf("\n== rate: one paced queue, %u-byte frames, %.1f s a case "
	       "after the warm-up, %.1f s windows\n", opt.size, opt.seconds,
	       opt.window);
	printf("%8s %10s %8s %9s %3s %9s %9s %5s %8s %5s %8s %7s %5s %6s "
	       "%6s %6s %6s %s\n", "target", "long-run", "err", "worst-win",
	       "win", "burst B", "bucket B", "/bkt", "late us", "full%",
	       "frames", "dropped", "under", "wait", "steal", "other", "host",
	       "note");
	for (i = 0; i < opt.nrates; i++) {
		const char *src = "";
		struct pb_result r;
		double mbps, after;
		uint32_t kbps;
		char tag[64], note[160] = "";

		if (strcmp(opt.rates[i], "max") == 0) {
			double now = cable < max_mbps ? pb_cable(e) : cable;

			if (now > 0 && now < cable)
				cable = now;
			if (cable >= max_mbps) {
				mbps = max_mbps;
				src = "max = qp_rate_limit_max";
			} else {
				mbps = floor(cable * 0.9);
				src = "max = 90 % of the unpaced cable";
			}
		} else {
			mbps = atof(opt.rates[i]);
		}
		kbps = (uint32_t)(mbps * 1000);
		if (kbps < e->caps.qp_rate_limit_min ||
		    kbps > e->caps.qp_rate_limit_max) {
			printf("%10.0f %s: outside the device's range "
			       "[%" PRIu32 ", %" PRIu32 "] kbit/s, not run\n",
			       mbps, opt.rates[i], e->caps.qp_rate_limit_min,
			       e->caps.qp_rate_limit_max);
			continue;
		}
		if (pb_run(e, 1, kbps, 0, opt.seconds, &r) != 0) {
			fails++;
			r.ok = false;
		}
		r.slowed = false;
		after = 0;
		if (strcmp(opt.rates[i], "max") == 0 && cable < max_mbps) {
			after = pb_cable(e);
			r.slowed = after > 0 && after < mbps;
		}
		snprintf(tag, sizeof(tag), "%.0f Mbit/s", mbps);
		if (mbps > cable)
			snprintf(note, sizeof(note), "above the unpaced "
				 "cable (%.0f), not judged", cable);
		else if (r.slowed)
			snprintf(note, sizeof(note), "%s; the cable carried "
				 "%.0f after it: SLOWED, no reading", src,
				 after);
		else
			snprintf(note, sizeof(note), "%s", src);
		printf("%8.0f %10.3f %+7.3f%% %+8.3f%% %3u %9.0f %9.0f %5.2f "
		       "%8.1f %5.1f %8" PRIu64 " %7" PRIu64 " %5" PRIu64
		       " %6.1f %6.1f %6.1f %6s %s\n", mbps, r.longrun,
		       r.lr_worst, r.err_worst, r.windows, r.excess, r.bucket,
		       r.burst_ratio, r.late_us, r.full_pct, r.frames,
		       r.dropped, r.underruns, r.wait_ms, r.steal_ms,
		       r.other_ms, r.slowed ? "SLOWED" :
		       pb_quiet(&r) ? "quiet" :
		       "LOADED", note);
		if (mbps <= cable)
			pb_judge(&r, tag);
	}
	printf("target, long-run: Mbit/s of frame bytes (L2 header to the end "
	       "of the payload); err: long-run against the target; worst-win:"
	       " the worst window; win: complete windows; burst B: the "
	       "largest bytes(t0, t1) - rate x (t1 - t0) seen by B; bucket B: "
	       "max_burst_sz in force (%s, swv_qp_pace_stats()); /bkt: burst "
	       "over bucket; late us: the pacer's worst release after its due "
	       "time; full%%: the share of the case its bucket sat full (rate "
	       "left unused: the pacer late by more than the bucket); under: "
	       "send queue found empty; %s; %s\n", opt.burst ?
	       "--burst" : "the device's default", PB_LOAD_NOTE,
	       PB_HOST_NOTE);
	return fails;
}

static int
pb_case_queues(struct pb_env *e)
{
	unsigned int i;
	int fails = 0;

	printf("\n== queues: n paced queues at once on one device sharing %.0f"
	       " Mbit/s, %u-byte frames, %.1f s a case after the warm-up\n",
	       opt.mq_total, opt.size, opt.seconds);
	printf("%6s %9s %10s %8s %10s %3s %9s %9s %5s %8s %5s %9s %7s %5s "
	       "%6s %6s %6s %6s\n", "queues", "Mbit/s/q", "worst-win",
	       "median", "worst-lr", "win", "burst B", "bucket B", "/bkt",
	       "late us", "full%", "frames", "dropped", "under", "wait",
	       "steal", "other", "host");
	for (i = 0; i < opt.nqueues; i++) {
		unsigned int nq = opt.queues[i];
		uint32_t kbps = (uint32_t)(opt.mq_total * 1000 / nq);
		struct pb_result r;
		char tag[64];

		if (nq == 0 || nq > PB_MAX_QUEUES) {
			printf("%6u: 1 to %u queues\n", nq, PB_MAX_QUEUES);
			fails++;
			continue;
		}
		if (kbps < e->caps.qp_rate_limit_min) {
			printf("%6u %10.3f: below the device's minimum "
			       "(%" PRIu32 " kbit/s), not run\n", nq,
			       kbps / 1000.0, e->caps.qp_rate_limit_min);
			continue;
		}
		if (pb_run(e, nq, kbps, 0, opt.seconds, &r) != 0) {
			fails++;
			r.ok = false;
		}
		snprintf(tag, sizeof(tag), "%u queues", nq);
		printf("%6u %9.3f %+9.3f%% %7.3f%% %+9.3f%% %3u %9.0f %9.0f "
		       "%5.2f %8.1f %5.1f %9" PRIu64 " %7" PRIu64 " %5" PRIu64
		       " %6.1f %6.1f %6.1f %6s\n", nq, kbps / 1000.0,
		       r.err_worst, r.err_median, r.lr_worst, r.windows,
		       r.excess, r.bucket, r.burst_ratio, r.late_us,
		       r.full_pct, r.frames, r.dropped, r.underruns,
		       r.wait_ms, r.steal_ms, r.other_ms,
		       pb_quiet(&r) ? "quiet" :
		       "LOADED");
		pb_judge(&r, tag);
	}
	printf("worst-win: the worst 1 s window of the worst queue; median: "
	       "the median over the queues of each queue's worst |error|; "
	       "worst-lr: the worst queue's long-run error; win: the fewest "
	       "complete windows of a queue; burst B, bucket B, /bkt: the queue "
	       "worst against its bucket; late us, full%%: the worst queue's; "
	       "%s; %s\n", PB_LOAD_NOTE, PB_HOST_NOTE);
	return fails;
}

static int
pb_case_cpu(struct pb_env *e)
{
	uint32_t kbps = (uint32_t)(opt.cpu_rate * 1000);
	double pps = opt.cpu_rate * 1e6 / (8.0 * opt.size);
	double a[64], b[64], ap[64], bp[64], ratio[64], med;
	unsigned int na = 0, nb = 0, i, n = 2 * opt.pairs, nr = 0;
	unsigned int loaded = 0;
	int fails = 0;

	printf("\n== cpu: one queue at %.0f Mbit/s (%.0f frames/s of %u "
	       "bytes): unpaced, posted on a schedule (A), against paced, "
	       "kept full (B); %u pairs of %.1f s runs, A B B A ...\n",
	       opt.cpu_rate, pps, opt.size, opt.pairs, opt.cpu_seconds);
	if (kbps < e->caps.qp_rate_limit_min ||
	    kbps > e->caps.qp_rate_limit_max) {
		printf("  %.0f Mbit/s is outside the device's range, not run\n",
		       opt.cpu_rate);
		goal_add(&goal_cpu, -1, "%.0f Mbit/s", opt.cpu_rate);
		return 0;
	}
	printf("%4s %3s %12s %12s %9s %7s %6s %6s %6s %6s\n", "run", "var",
	       "frames/s", "CPU ns/frm", "frames", "dropped", "wait", "steal",
	       "other", "host");
	for (i = 0; i < n; i++) {
		bool paced = i % 4 == 1 || i % 4 == 2;
		struct pb_result r;
		int ret;

		ret = paced ? pb_run(e, 1, kbps, 0, opt.cpu_seconds, &r) :
		      pb_run(e, 1, 0, pps, opt.cpu_seconds, &r);
		if (ret != 0 || r.frames == 0) {
			fails += ret != 0;
			printf("%4u %3s failed: %s\n", i, paced ? "B" : "A",
			       ret != 0 ? strerror(ret) : "no frames");
			continue;
		}
		printf("%4u %3s %12.0f %12.1f %9" PRIu64 " %7" PRIu64
		       " %6.1f %6.1f %6.1f %6s\n", i, paced ? "B" : "A",
		       r.pps, r.cpu_ns, r.frames, r.dropped, r.wait_ms,
		       r.steal_ms, r.other_ms,
		       pb_quiet(&r) ? "quiet" :
		       "LOADED");
		loaded += !pb_quiet(&r);
		if (paced) {
			bp[nb] = r.pps;
			b[nb++] = r.cpu_ns;
		} else {
			ap[na] = r.pps;
			a[na++] = r.cpu_ns;
		}
	}
	n = na < nb ? na : nb;
	printf("per pair, paced CPU per frame over unpaced:");
	for (i = 0; i < n; i++) {
		/* a pair counts when both ran at one packet rate */
		if (fabs(bp[i] / ap[i] - 1) > 0.01) {
			printf(" (%.0f against %.0f frames/s: not counted)",
			       bp[i], ap[i]);
			continue;
		}
		ratio[nr] = (b[i] / a[i] - 1) * 100;
		printf(" %+.1f%%", ratio[nr++]);
	}
	printf("\n");
	if (nr == 0) {
		goal_add(&goal_cpu, -1, "%.0f Mbit/s (no pair at one packet "
			 "rate)", opt.cpu_rate);
		return fails;
	}
	med = pb_median(ratio, nr);
	printf("medians: unpaced %.1f ns, paced %.1f ns a frame; of the "
	       "pairs' ratios %+.1f %%\n", pb_median(a, na), pb_median(b, nb),
	       med);
	if (loaded > 0)
		printf("%u of the runs on a loaded host (%s)\n", loaded,
		       PB_HOST_NOTE);
	goal_add(&goal_cpu, med <= PB_GOAL_CPU ? 1 : loaded == 0 ? 0 : -2,
		 "%.0f Mbit/s (%+.1f %%)", opt.cpu_rate, med);
	return fails;
}

/*
 * Options.
 */

static int
pb_list(const char *arg, char out[][16], unsigned int *n)
{
	char buf[256], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", arg);
	*n = 0;
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		if (*n == PB_MAX_LIST || strlen(tok) >= 16)
			return EINVAL;
		snprintf(out[(*n)++], 16, "%s", tok);
	}
	return 0;
}

static void
usage(void)
{
	fprintf(stderr, "usage: bench-pacing [--progress thread|service|"
		"inline] [--seconds S] [--window S]\n"
		"  [--cases rate,queues,cpu] [--rates R,R..|max] "
		"[--queues N,N..] [--mq-total MBPS]\n"
		"  [--cpu-rate MBPS] [--pairs N] [--cpu-seconds S] "
		"[--size BYTES] [--burst BYTES]\n"
		"  [--nap US] [--nap-plain] [--quiet-wait MS] "
		"[--quiet-steal MS]\n"
		"  [--app-cpu N] [--engine-cpu N]\n");
}

static int
pb_parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "progress", 1, NULL, 'p' }, { "seconds", 1, NULL, 's' },
		{ "window", 1, NULL, 'w' }, { "cases", 1, NULL, 'c' },
		{ "rates", 1, NULL, 'r' }, { "queues", 1, NULL, 'q' },
		{ "mq-total", 1, NULL, 'm' }, { "cpu-rate", 1, NULL, 'u' },
		{ "pairs", 1, NULL, 'P' }, { "cpu-seconds", 1, NULL, 'S' },
		{ "size", 1, NULL, 'z' }, { "burst", 1, NULL, 'b' },
		{ "nap", 1, NULL, 'n' }, { "app-cpu", 1, NULL, 'a' },
		{ "engine-cpu", 1, NULL, 'e' }, { "nap-plain", 0, NULL, 'N' },
		{ "quiet-wait", 1, NULL, 'W' }, { "quiet-steal", 1, NULL, 'T' },
		{ NULL, 0, NULL, 0 },
	};
	char list[PB_MAX_LIST][16];
	unsigned int i, n;
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'p':
			opt.progress = optarg;
			break;
		case 's':
			opt.seconds = atof(optarg);
			break;
		case 'w':
			opt.window = atof(optarg);
			break;
		case 'c':
			if (pb_list(optarg, list, &n) != 0)
				return EINVAL;
			opt.do_rate = opt.do_queues = opt.do_cpu = false;
			for (i = 0; i < n; i++) {
				if (strcmp(list[i], "rate") == 0)
					opt.do_rate = true;
				else if (strcmp(list[i], "queues") == 0)
					opt.do_queues = true;
				else if (strcmp(list[i], "cpu") == 0)
					opt.do_cpu = true;
				else
					return EINVAL;
			}
			break;
		case 'r':
			if (pb_list(optarg, opt.rates, &opt.nrates) != 0)
				return EINVAL;
			for (i = 0; i < opt.nrates; i++)
				if (strcmp(opt.rates[i], "max") != 0 &&
				    atof(opt.rates[i]) <= 0)
					return EINVAL;
			break;
		case 'q':
			if (pb_list(optarg, list, &n) != 0)
				return EINVAL;
			for (i = 0; i < n; i++)
				opt.queues[i] = (unsigned int)atoi(list[i]);
			opt.nqueues = n;
			break;
		case 'm':
			opt.mq_total = atof(optarg);
			break;
		case 'u':
			opt.cpu_rate = atof(optarg);
			break;
		case 'P':
			opt.pairs = (unsigned int)atoi(optarg);
			break;
		case 'S':
			opt.cpu_seconds = atof(optarg);
			break;
		case 'z':
			opt.size = (unsigned int)atoi(optarg);
			break;
		case 'b':
			opt.burst = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'n':
			opt.nap_us = (unsigned int)atoi(optarg);
			break;
		case 'N':
			opt.nap_plain = true;
			break;
		case 'W':
			opt.quiet_wait = atof(optarg);
			break;
		case 'T':
			opt.quiet_steal = atof(optarg);
			break;
		case 'a':
			opt.app_cpu = atoi(optarg);
			break;
		case 'e':
			opt.engine_cpu = atoi(optarg);
			break;
		default:
			return EINVAL;
		}
	}
	if (optind != argc || opt.seconds <= 0 || opt.window <= 0 ||
	    opt.cpu_seconds <= 0 || opt.pairs == 0 || opt.pairs > 32 ||
	    opt.size < 60 || opt.size > PB_RX_BUF || opt.mq_total <= 0 ||
	    opt.cpu_rate <= 0 || opt.quiet_wait < 0 || opt.quiet_steal < 0)
		return EINVAL;
	return 0;
}

int
main(int argc, char **argv)
{
	struct swv_engine_stats es;
	struct pb_env e;
	double cable = 0;
	int ret, fails = 0;

	if (pb_parse(argc, argv) != 0) {
		usage();
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = pb_pin(opt.app_cpu);
	if (ret != 0)
		fprintf(stderr, "bench-pacing: app CPU %d: %s (not pinned)\n",
			opt.app_cpu, strerror(ret));
	ret = pb_env_setup(&e);
	if (ret != 0) {
		fprintf(stderr, "bench-pacing: setup: %s\n", strerror(ret));
		pb_env_teardown(&e);
		return 1;
	}
	/*
	 * The application's naps as short as asked: 1 us of timer slack,
	 * not 50; set after the engine's thread started, which keeps the
	 * default as in any application.
	 */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	pb_naps.sched_fd = open("/proc/thread-self/schedstat",
				O_RDONLY | O_CLOEXEC);
	printf("bench-pacing: progress %s; core layout: application "
	       "(posting, polling, metering) on CPU %d, ", opt.progress,
	       opt.app_cpu);
	if (strcmp(opt.progress, "inline") == 0)
		printf("the inline engine in its verbs calls, no engine "
		       "thread\n");
	else
		printf("%s on CPU %d\n", e.service ? "a bench thread calling "
		       "swv_engine_run_once()" : "the engine's thread "
		       "(swv_engine_start())", opt.engine_cpu);
	printf("device: packet_pacing_caps qp_rate_limit [%" PRIu32 ", %"
	       PRIu32 "] kbit/s, supported_qpts 0x%" PRIx32 "; pair cable, "
	       "nap %u us%s; a host is quiet with wait <= %.1f and steal <= "
	       "%.1f ms a second\n", e.caps.qp_rate_limit_min,
	       e.caps.qp_rate_limit_max, e.caps.supported_qpts, opt.nap_us,
	       opt.nap_plain ? " whatever waits (--nap-plain)" :
	       ", no later than a paced departure less the nap's lateness",
	       opt.quiet_wait, opt.quiet_steal);
	if (e.caps.qp_rate_limit_max == 0 ||
	    !(e.caps.supported_qpts & (1u << IBV_QPT_RAW_PACKET))) {
		fprintf(stderr, "bench-pacing: the device does not pace "
			"RAW_PACKET QPs\n");
		pb_env_teardown(&e);
		return 1;
	}
	if (opt.do_rate) {
		cable = pb_cable(&e);
		fails += pb_case_rates(&e, cable);
	}
	if (opt.do_queues)
		fails += pb_case_queues(&e);
	if (opt.do_cpu)
		fails += pb_case_cpu(&e);
	printf("\n== goals (progress %s)\n", opt.progress);
	if (opt.do_rate || opt.do_queues) {
		goal_print(&goal_err);
		goal_print(&goal_burst);
	}
	if (opt.do_cpu)
		goal_print(&goal_cpu);
	printf("application naps: %" PRIu64 ", %" PRIu64 " of them cut "
	       "short and %" PRIu64 " made longer to a paced departure's "
	       "batch; %" PRIu64 " not taken (its wake-up nearer than the "
	       "nap's lateness, now %.1f us)\n", pb_naps.naps,
	       pb_naps.cut, pb_naps.stretched, pb_naps.skipped,
	       swv_late_get(&pb_naps.late, pb_now()) / 1e3);
	if (e.eng != NULL && !e.service &&
	    swv_engine_get_stats(e.eng, &es) == 0)
		printf("engine thread: %" PRIu64 " sleeps until a paced "
		       "departure; the estimate of their lateness (they end "
		       "that much early and spin the rest) now %.1f us\n",
		       es.pace_sleeps, es.pace_late_ns / 1e3);
	if (e.stray + e.rx_errors + e.tx_errors > 0)
		printf("stray frames %" PRIu64 ", receive errors %" PRIu64
		       ", send errors %" PRIu64 "\n", e.stray, e.rx_errors,
		       e.tx_errors);
	pb_env_teardown(&e);
	return fails > 0 ? 1 : 0;
}
