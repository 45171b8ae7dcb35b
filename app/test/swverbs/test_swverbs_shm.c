/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The shm wire, and the wires between processes: two devices on one shm
 * cable (frames both ways byte-exact, the slot size as frame limit, MTU),
 * a third end refused with its holders named, close and re-attach, a
 * leftover file reused, the file gone with the last end; with a peer
 * process (this program run again as --peer): a stopped peer's full ring
 * holds frames back (backpressure, no loss), a SIGKILLed peer takes the
 * link down and a new one brings it up; frames sent while the link is down
 * are counted (pair and shm); a pair name held by another process warns;
 * a /dev/shm without room for a cable (a small tmpfs mounted there in a
 * mount namespace of a child) refuses the cable with ENOSPC, no SIGBUS;
 * an end whose wake socket name is taken still wakes its sleeping peer;
 * a sender stopped on a full ring stays off deep sleep until it is drained;
 * a setup lock held by a stuck process makes open fail (EBUSY) and close
 * go on, both within a bound, not wait for it; a cable file truncated
 * while frames flow (SIGBUS at the next access of its mapping) leaves both
 * processes alive with the link down and the fault counted, and the ends
 * plug in again by themselves; ring indexes scribbled in the file (a head
 * far ahead, a tail past the head) deliver no phantom frames and stall no
 * sender: the link goes down, the fault is counted, the ends plug in again.
 */

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stddef.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "swv_test_util.h"

/* From swv_wire.h (private): the layout this test checks from outside. */
#define T_SHM_DIR "/dev/shm"
#define T_SHM_SLOTS 1024
#define T_SHM_SLOT 2048

/* From wire_shm.c: the cable file's header, where the indexes are. */
struct t_shm_idx {
	uint32_t head __attribute__((aligned(64)));
	uint32_t tail __attribute__((aligned(64)));
	uint32_t sleeping __attribute__((aligned(64)));
};

struct t_shm_hdr {
	uint64_t magic;
	uint32_t version;
	uint32_t nslots;
	uint32_t slot_size;
	int32_t pid[2];
	struct t_shm_idx ring[2] __attribute__((aligned(64)));
};

#define T_HEAD(s) (offsetof(struct t_shm_hdr, ring) + \
		   (s) * sizeof(struct t_shm_idx) + \
		   offsetof(struct t_shm_idx, head))
#define T_TAIL(s) (offsetof(struct t_shm_hdr, ring) + \
		   (s) * sizeof(struct t_shm_idx) + \
		   offsetof(struct t_shm_idx, tail))

static uint8_t txbuf[65536];
static uint8_t rxbuf[65536];
static char cable[32];
static char cable_path[96];

/*
 * The cable of the test under way: t<pid>-<tag>, so that devtools/test.sh
 * can tell a cable a killed run left (its pid gone) from one in use.
 */
static void
t_cable(const char *tag)
{
	snprintf(cable, sizeof(cable), "t%d-%s", (int)getpid(), tag);
	snprintf(cable_path, sizeof(cable_path), "%s/swverbs-shm.%s",
		 T_SHM_DIR, cable);
}

/*
 * A run that ends half-way (a signal, exit() from a failed assertion)
 * leaves no cable file behind: the ends it made would have unlinked it.
 * Only in the process that runs the tests (not its peers).
 */
static pid_t t_owner;

static void
t_cable_cleanup(void)
{
	if (getpid() == t_owner && cable_path[0] != '\0')
		unlink(cable_path);
}

static void
t_on_signal(int sig)
{
	t_cable_cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

static const char *
t_wire(void)
{
	static char w[48];

	snprintf(w, sizeof(w), "shm:%s", cable);
	return w;
}

static bool
t_up(struct tdev *d)
{
	struct ibv_port_attr pa;

	return swv_query_port(d->ctx, 1, &pa) == 0 &&
	       pa.state == IBV_PORT_ACTIVE;
}

/* Post @n signaled sends of @len bytes from txbuf; wait for their CQEs. */
static int
t_send_n(struct tdev *d, struct ibv_mr *mr, unsigned int n, uint32_t len,
	 unsigned int *ok)
{
	struct ibv_wc wc[64];
	unsigned int posted = 0, done = 0, inflight = 0;
	uint64_t end = t_now_ms() + 10000;
	int r, i;

	*ok = 0;
	while (done < n && t_now_ms() < end) {
		while (posted < n && inflight < 200) {
			if (t_send(d->sqp, mr, txbuf, len, posted) != 0)
				break;
			posted++;
			inflight++;
		}
		r = ibv_poll_cq(d->scq, 64, wc);
		if (r < 0)
			return r;
		for (i = 0; i < r; i++)
			*ok += wc[i].status == IBV_WC_SUCCESS;
		done += (unsigned int)r;
		inflight -= (unsigned int)r;
		if (r == 0)
			usleep(50);
	}
	return (int)done;
}

/*
 * Peer process: this program with --peer <wire> <name>. It makes a device,
 * says "ready", then answers "count" with its rx_frames and tx_link_down,
 * "faults" with its wire_faults, "send <n>" by sending n 64-byte frames,
 * and quits on "quit" or EOF.
 */
static int
peer_main(const char *wire, const char *name)
{
	struct swv_port_counters c;
	struct ibv_mr *mr;
	struct tdev d;
	char line[64];
	unsigned int n, ok;

	if (t_setup(&d, name, wire) != 0) {
		printf("error\n");
		return 1;
	}
	mr = swv_reg_mr(d.pd, txbuf, sizeof(txbuf), 0);
	t_frame(txbuf, 64, (const uint8_t *)"\xff\xff\xff\xff\xff\xff",
		d.mac, 1);
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin) != NULL) {
		if (strncmp(line, "count", 5) == 0) {
			swv_query_port_counters(d.ctx, &c);
			printf("%" PRIu64 " %" PRIu64 " %d\n", c.rx_frames,
			       c.tx_link_down, t_up(&d) ? 1 : 0);
		} else if (strncmp(line, "faults", 6) == 0) {
			swv_query_port_counters(d.ctx, &c);
			printf("%" PRIu64 "\n", c.wire_faults);
		} else if (sscanf(line, "send %u", &n) == 1) {
			t_send_n(&d, mr, n, 64, &ok);
			printf("%u\n", ok);
		} else {
			break;
		}
		fflush(stdout);
	}
	swv_dereg_mr(mr);
	t_teardown(&d);
	return 0;
}

struct peer {
	pid_t pid;
	FILE *to, *from;
};

static const char *self_exe;

static int
peer_start(struct peer *p, const char *wire, const char *name)
{
	int in[2], out[2];
	char line[32];

	if (pipe(in) != 0 || pipe(out) != 0)
		return -1;
	p->pid = fork();
	if (p->pid < 0)
		return -1;
	if (p->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(self_exe, self_exe, "--peer", wire, name, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	p->to = fdopen(in[1], "w");
	p->from = fdopen(out[0], "r");
	if (fgets(line, sizeof(line), p->from) == NULL ||
	    strncmp(line, "ready", 5) != 0)
		return -1;
	return 0;
}

/* Ask the peer for its counters: rx_frames, tx_link_down, link up. */
static int
peer_count(struct peer *p, uint64_t *rx, uint64_t *down, int *up)
{
	char line[96];
	unsigned long long a, b;

	fprintf(p->to, "count\n");
	fflush(p->to);
	if (fgets(line, sizeof(line), p->from) == NULL ||
	    sscanf(line, "%llu %llu %d", &a, &b, up) != 3)
		return -1;
	*rx = a;
	*down = b;
	return 0;
}

/* Ask the peer for its wire_faults. */
static int
peer_faults(struct peer *p, uint64_t *faults)
{
	char line[32];

	fprintf(p->to, "faults\n");
	fflush(p->to);
	if (fgets(line, sizeof(line), p->from) == NULL)
		return -1;
	*faults = strtoull(line, NULL, 10);
	return 0;
}

static int
peer_stop(struct peer *p)
{
	int st = -1;

	fprintf(p->to, "quit\n");
	fclose(p->to);
	fclose(p->from);
	waitpid(p->pid, &st, 0);
	return st;
}

static void
peer_kill(struct peer *p)
{
	kill(p->pid, SIGKILL);
	waitpid(p->pid, NULL, 0);
	fclose(p->to);
	fclose(p->from);
}

/* Whether a process is stopped (state T in /proc/<pid>/stat). */
static bool
t_stopped(pid_t pid)
{
	char path[64], buf[256], *p;
	FILE *f;
	bool ret = false;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return false;
	if (fgets(buf, sizeof(buf), f) != NULL) {
		p = strrchr(buf, ')');
		ret = p != NULL && p[1] == ' ' && p[2] == 'T';
	}
	fclose(f);
	return ret;
}

/*
 * Frames of many sizes from @tx to @rx, gathered from two SGEs: each one
 * arrives whole and exact; a frame one byte over the slot is refused with
 * an error completion, not cut.
 */
static int
shm_exact(struct tdev *tx, struct tdev *rx)
{
	/* From 18 bytes: the mlx5 profile refuses a shorter send. */
	static const uint32_t sizes[] = { 18, 60, 64, 65, 1500, 1514, 2047,
					  T_SHM_SLOT };
	struct swv_port_counters c0, c1;
	struct ibv_mr *tmr, *rmr;
	struct ibv_flow *fl;
	struct ibv_wc wc;
	uint8_t frame[T_SHM_SLOT + 1];
	unsigned int k;

	tmr = swv_reg_mr(tx->pd, txbuf, sizeof(txbuf), 0);
	rmr = swv_reg_mr(rx->pd, rxbuf, sizeof(rxbuf),
			 IBV_ACCESS_LOCAL_WRITE);
	TEST_ASSERT_NOT_NULL(tmr, "");
	TEST_ASSERT_NOT_NULL(rmr, "");
	fl = t_flow_eth(rx->rqp, rx->mac, 0);
	TEST_ASSERT_NOT_NULL(fl, "");
	/* The largest MTU a slot carries (1500 drops the longer frames). */
	TEST_ASSERT_SUCCESS(swv_set_port_mtu(rx->ctx, 2048 - 18), "");
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		uint32_t len = sizes[k], a = len / 2;
		struct ibv_sge ss[2] = {
			{ (uintptr_t)txbuf, a, tmr->lkey },
			{ (uintptr_t)txbuf + 30000, len - a, tmr->lkey },
		};
		struct ibv_send_wr swr = {
			.wr_id = k, .sg_list = ss, .num_sge = 2,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		}, *sbad;

		t_frame(frame, len, rx->mac, tx->mac, (uint8_t)k);
		memcpy(txbuf, frame, a);
		memcpy(txbuf + 30000, frame + a, len - a);
		memset(rxbuf, 0xa5, 4096);
		TEST_ASSERT_SUCCESS(t_recv(rx->rqp, rmr, rxbuf, 4096, k), "");
		TEST_ASSERT_SUCCESS(ibv_post_send(tx->sqp, &swr, &sbad), "");
		TEST_ASSERT_EQUAL(t_poll(tx->scq, &wc, 1, T_WAIT_MS), 1, "");
		TEST_ASSERT_EQUAL(wc.status, IBV_WC_SUCCESS, "len %u", len);
		TEST_ASSERT_EQUAL(t_poll(rx->rcq, &wc, 1, T_WAIT_MS), 1, "len %u",
				  len);
		TEST_ASSERT_EQUAL(wc.status, IBV_WC_SUCCESS, "");
		TEST_ASSERT_EQUAL(wc.byte_len, len, "");
		TEST_ASSERT(memcmp(rxbuf, frame, len) == 0, "len %u", len);
		TEST_ASSERT_EQUAL(rxbuf[len], 0xa5, "len %u", len);
	}
	/*
	 * One byte over the slot, above any MTU the link carries: dropped by
	 * the port and counted, as a ConnectX drops a frame above its MTU;
	 * the WQE completes and the QP goes on.
	 */
	swv_query_port_counters(tx->ctx, &c0);
	t_frame(txbuf, T_SHM_SLOT + 1, rx->mac, tx->mac, 9);
	TEST_ASSERT_SUCCESS(t_send(tx->sqp, tmr, txbuf, T_SHM_SLOT + 1, 99),
			    "");
	TEST_ASSERT_EQUAL(t_poll(tx->scq, &wc, 1, T_WAIT_MS), 1, "");
	TEST_ASSERT_EQUAL(wc.status, IBV_WC_SUCCESS, "");
	swv_query_port_counters(tx->ctx, &c1);
	TEST_ASSERT_EQUAL(c1.tx_errors - c0.tx_errors, 0, "");
	TEST_ASSERT_EQUAL(c1.tx_mtu_dropped - c0.tx_mtu_dropped, 1, "");
	TEST_ASSERT_EQUAL(c1.tx_mtu_dropped_bytes - c0.tx_mtu_dropped_bytes,
			  T_SHM_SLOT + 1, "");
	TEST_ASSERT_EQUAL(t_poll(rx->rcq, &wc, 1, 100), 0, "none arrived");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fl), "");
	TEST_ASSERT_SUCCESS(swv_dereg_mr(tmr), "");
	TEST_ASSERT_SUCCESS(swv_dereg_mr(rmr), "");
	return TEST_SUCCESS;
}

static int
test_shm_exact_both_ways(void)
{
	struct swv_port_counters ca, cb;
	struct tdev a, b;
	int ret;

	t_cable("x");
	TEST_ASSERT_SUCCESS(t_setup(&a, "sa", t_wire()), "");
	TEST_ASSERT(!t_up(&a), "one end: link down");
	TEST_ASSERT_SUCCESS(t_setup(&b, "sb", t_wire()), "");
	T_WAIT(t_up(&a) && t_up(&b));
	TEST_ASSERT(t_up(&a) && t_up(&b), "two ends: link up");
	ret = shm_exact(&a, &b);
	if (ret == TEST_SUCCESS)
		ret = shm_exact(&b, &a);
	swv_query_port_counters(a.ctx, &ca);
	swv_query_port_counters(b.ctx, &cb);
	/* MTU: its largest frame (one VLAN tag) fills the slot. */
	TEST_ASSERT_SUCCESS(swv_set_port_mtu(a.ctx, T_SHM_SLOT - 18), "");
	TEST_ASSERT_EQUAL(swv_set_port_mtu(a.ctx, T_SHM_SLOT - 17), EINVAL,
			  "");
	t_teardown(&a);
	t_teardown(&b);
	/* What each end sent arrived, but the frame the port dropped. */
	TEST_ASSERT_EQUAL(ca.tx_mtu_dropped, 1, "a: the oversize frame");
	TEST_ASSERT_EQUAL(cb.tx_mtu_dropped, 1, "b: the oversize frame");
	TEST_ASSERT_EQUAL(ca.tx_frames - ca.tx_mtu_dropped, cb.rx_frames,
			  "a -> b");
	TEST_ASSERT_EQUAL(cb.tx_frames - cb.tx_mtu_dropped, ca.rx_frames,
			  "b -> a");
	TEST_ASSERT_EQUAL(ca.tx_bytes - ca.tx_mtu_dropped_bytes, cb.rx_bytes,
			  "");
	TEST_ASSERT_EQUAL(ca.tx_link_down + cb.tx_link_down, 0, "");
	TEST_ASSERT(access(cable_path, F_OK) != 0, "last end unlinks %s",
		    cable_path);
	return ret;
}

static int
test_shm_third_end_refused(void)
{
	struct tdev a, b;
	int pids[2];

	t_cable("3");
	TEST_ASSERT_SUCCESS(t_setup(&a, "s3a", t_wire()), "");
	TEST_ASSERT_SUCCESS(t_setup(&b, "s3b", t_wire()), "");
	TEST_ASSERT_EQUAL(swv_device_create("s3c", t_wire(), NULL), EBUSY,
			  "");
	TEST_ASSERT_SUCCESS(swv_wire_shm_holders(cable, pids), "");
	TEST_ASSERT_EQUAL(pids[0], getpid(), "");
	TEST_ASSERT_EQUAL(pids[1], getpid(), "");
	/* Bad names. */
	TEST_ASSERT_EQUAL(swv_device_create("s3d", "shm:a/b", NULL), EINVAL,
			  "");
	TEST_ASSERT_EQUAL(swv_device_create("s3d", "shm:..", NULL), EINVAL,
			  "");
	t_teardown(&b);
	TEST_ASSERT_SUCCESS(swv_wire_shm_holders(cable, pids), "");
	TEST_ASSERT_EQUAL(pids[0] + pids[1], getpid(), "one end left");
	t_teardown(&a);
	TEST_ASSERT_EQUAL(swv_wire_shm_holders(cable, pids), ENOENT, "");
	return TEST_SUCCESS;
}

/*
 * An end closes: the link goes down at the other, which counts what it
 * sends as dropped (its sends still complete); a new end attaches to the
 * freed side and traffic flows again.
 */
static int
test_shm_close_reattach(void)
{
	struct swv_port_counters c0, c1;
	struct ibv_mr *mr;
	struct tdev a, b;
	unsigned int ok;

	t_cable("r");
	TEST_ASSERT_SUCCESS(t_setup(&a, "sra", t_wire()), "");
	TEST_ASSERT_SUCCESS(t_setup(&b, "srb", t_wire()), "");
	T_WAIT(t_up(&a));
	mr = swv_reg_mr(a.pd, txbuf, sizeof(txbuf), 0);
	TEST_ASSERT_NOT_NULL(mr, "");
	t_frame(txbuf, 64, b.mac, a.mac, 3);
	t_teardown(&b);
	T_WAIT(!t_up(&a));
	TEST_ASSERT(!t_up(&a), "peer closed: link down");
	swv_query_port_counters(a.ctx, &c0);
	TEST_ASSERT_EQUAL(t_send_n(&a, mr, 10, 64, &ok), 10, "");
	TEST_ASSERT_EQUAL(ok, 10, "sends complete");
	swv_query_port_counters(a.ctx, &c1);
	TEST_ASSERT_EQUAL(c1.tx_link_down - c0.tx_link_down, 10, "");
	TEST_ASSERT_EQUAL(c1.tx_link_down_bytes - c0.tx_link_down_bytes,
			  10 * 64, "");
	TEST_ASSERT_SUCCESS(t_setup(&b, "srb", t_wire()), "");
	T_WAIT(t_up(&a) && t_up(&b));
	TEST_ASSERT(t_up(&a) && t_up(&b), "re-attached: link up");
	swv_query_port_counters(a.ctx, &c0);
	TEST_ASSERT_EQUAL(t_send_n(&a, mr, 10, 64, &ok), 10, "");
	T_WAIT(swv_query_port_counters(b.ctx, &c1) == 0 &&
	       c1.rx_frames == 10);
	TEST_ASSERT_EQUAL(c1.rx_frames, 10, "the new end gets them all");
	swv_query_port_counters(a.ctx, &c1);
	TEST_ASSERT_EQUAL(c1.tx_link_down, c0.tx_link_down, "");
	swv_dereg_mr(mr);
	t_teardown(&b);
	t_teardown(&a);
	return TEST_SUCCESS;
}

/* A leftover file (a crashed run, garbage in it) is taken over. */
static int
test_shm_leftover_reused(void)
{
	struct swv_port_counters c;
	struct ibv_mr *mr;
	struct tdev a, b;
	unsigned int ok, i;
	int fd;

	t_cable("l");
	fd = open(cable_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	TEST_ASSERT(fd >= 0, "");
	for (i = 0; i < sizeof(txbuf); i++)
		txbuf[i] = (uint8_t)(i * 37 + 11);
	TEST_ASSERT_EQUAL(write(fd, txbuf, sizeof(txbuf)), sizeof(txbuf), "");
	close(fd);
	TEST_ASSERT_SUCCESS(t_setup(&a, "sla", t_wire()), "");
	TEST_ASSERT_SUCCESS(t_setup(&b, "slb", t_wire()), "");
	T_WAIT(t_up(&a));
	mr = swv_reg_mr(a.pd, txbuf, sizeof(txbuf), 0);
	t_frame(txbuf, 100, b.mac, a.mac, 4);
	TEST_ASSERT_EQUAL(t_send_n(&a, mr, 50, 100, &ok), 50, "");
	T_WAIT(swv_query_port_counters(b.ctx, &c) == 0 && c.rx_frames == 50);
	TEST_ASSERT_EQUAL(c.rx_frames, 50, "");
	TEST_ASSERT_EQUAL(c.rx_bytes, 50 * 100, "");
	swv_dereg_mr(mr);
	t_teardown(&a);
	t_teardown(&b);
	TEST_ASSERT(access(cable_path, F_OK) != 0, "");
	return TEST_SUCCESS;
}

/*
 * A peer process that stops polling (SIGSTOP): its ring fills and the
 * sender's WQEs wait (no completion, nothing dropped); once it runs again
 * every frame arrives, counted exactly.
 */
#define BP_FRAMES 3000

struct bp_state {
	unsigned int posted;	/* sends posted */
	unsigned int done;	/* completions */
	unsigned int ok;	/* of them, successful */
};

/*
 * Keep up to 200 of BP_FRAMES sends posted and reap their completions
 * until @want have completed or @ms passed.
 */
static void
bp_pump(struct tdev *d, struct ibv_mr *mr, struct bp_state *b,
	unsigned int want, unsigned int ms)
{
	uint64_t end = t_now_ms() + ms;
	struct ibv_wc wc[64];
	int r, i;

	while (t_now_ms() < end && b->done < want) {
		while (b->posted < BP_FRAMES && b->posted - b->done < 200 &&
		       t_send(d->sqp, mr, txbuf, 64, b->posted) == 0)
			b->posted++;
		r = ibv_poll_cq(d->scq, 64, wc);
		for (i = 0; i < r; i++)
			b->ok += wc[i].status == IBV_WC_SUCCESS;
		b->done += r > 0 ? (unsigned int)r : 0;
		if (r <= 0)
			usleep(100);
	}
}

static int
test_shm_backpressure_process(void)
{
	struct swv_port_counters c;
	struct peer p;
	struct ibv_mr *mr;
	struct bp_state bp = { 0, 0, 0 };
	struct tdev a;
	uint64_t rx, down, end;
	int up;

	t_cable("b");
	TEST_ASSERT_SUCCESS(t_setup(&a, "sba", t_wire()), "");
	TEST_ASSERT_SUCCESS(peer_start(&p, t_wire(), "peer"), "");
	T_WAIT(t_up(&a));
	TEST_ASSERT(t_up(&a), "");
	mr = swv_reg_mr(a.pd, txbuf, sizeof(txbuf), 0);
	t_frame(txbuf, 64, (const uint8_t *)"\xff\xff\xff\xff\xff\xff", a.mac,
		5);
	kill(p.pid, SIGSTOP);
	T_WAIT(t_stopped(p.pid));
	TEST_ASSERT(t_stopped(p.pid), "");
	/* Post all we can; completions stop at one ring of frames. */
	bp_pump(&a, mr, &bp, T_SHM_SLOTS + 1, 3000);
	TEST_ASSERT_EQUAL(bp.done, T_SHM_SLOTS, "a full ring holds frames back");
	TEST_ASSERT_EQUAL(bp.ok, T_SHM_SLOTS, "");
	swv_query_port_counters(a.ctx, &c);
	TEST_ASSERT_EQUAL(c.tx_link_down, 0, "");
	kill(p.pid, SIGCONT);
	bp_pump(&a, mr, &bp, BP_FRAMES, 10000);
	TEST_ASSERT_EQUAL(bp.ok, BP_FRAMES, "");
	end = t_now_ms() + 5000;
	do {
		TEST_ASSERT_SUCCESS(peer_count(&p, &rx, &down, &up), "");
	} while (rx < BP_FRAMES && t_now_ms() < end && usleep(1000) == 0);
	TEST_ASSERT_EQUAL(rx, BP_FRAMES, "the peer counts every frame");
	TEST_ASSERT_EQUAL(peer_stop(&p), 0, "");
	T_WAIT(!t_up(&a));
	TEST_ASSERT(!t_up(&a), "peer left: link down");
	swv_dereg_mr(mr);
	t_teardown(&a);
	TEST_ASSERT(access(cable_path, F_OK) != 0, "");
	return TEST_SUCCESS;
}

/*
 * A peer process killed with SIGKILL: the link goes down; a new process
 * attaches to the freed end, the link comes up and frames flow both ways.
 */
static int
test_shm_peer_killed(void)
{
	struct swv_port_counters c;
	struct peer p;
	struct ibv_mr *mr;
	struct tdev a;
	uint64_t rx, down, end;
	unsigned int ok;
	int up;
	char line[32];

	t_cable("k");
	TEST_ASSERT_SUCCESS(t_setup(&a, "ska", t_wire()), "");
	TEST_ASSERT_SUCCESS(peer_start(&p, t_wire(), "peer"), "");
	T_WAIT(t_up(&a));
	TEST_ASSERT(t_up(&a), "");
	mr = swv_reg_mr(a.pd, txbuf, sizeof(txbuf), 0);
	t_frame(txbuf, 64, (const uint8_t *)"\xff\xff\xff\xff\xff\xff", a.mac,
		6);
	/* Frames the peer never reads: stale once it dies. */
	kill(p.pid, SIGSTOP);
	T_WAIT(t_stopped(p.pid));
	TEST_ASSERT_EQUAL(t_send_n(&a, mr, 50, 64, &ok), 50, "");
	peer_kill(&p);
	T_WAIT(!t_up(&a));
	TEST_ASSERT(!t_up(&a), "killed peer: link down");
	TEST_ASSERT_SUCCESS(peer_start(&p, t_wire(), "peer"), "");
	T_WAIT(t_up(&a));
	TEST_ASSERT(t_up(&a), "new peer: link up");
	/* The new peer gets these 100 and none of the 50 stale ones. */
	TEST_ASSERT_EQUAL(t_send_n(&a, mr, 100, 64, &ok), 100, "");
	end = t_now_ms() + 5000;
	do {
		TEST_ASSERT_SUCCESS(peer_count(&p, &rx, &down, &up), "");
	} while (rx < 100 && t_now_ms() < end && usleep(1000) == 0);
	TEST_ASSERT_EQUAL(rx, 100, "");
	TEST_ASSERT_EQUAL(up, 1, "");
	/* And back. */
	fprintf(p.to, "send 100\n");
	fflush(p.to);
	TEST_ASSERT_NOT_NULL(fgets(line, sizeof(line), p.from), "");
	TEST_ASSERT_EQUAL(atoi(line), 100, "");
	T_WAIT(swv_query_port_counters(a.ctx, &c) == 0 && c.rx_frames == 100);
	TEST_ASSERT_EQUAL(c.rx_frames, 100, "");
	TEST_ASSERT_EQUAL(peer_stop(&p), 0, "");
	swv_dereg_mr(mr);
	t_teardown(&a);
	return TEST_SUCCESS;
}

/* A pair cable with one end: frames sent are counted as dropped. */
static int
test_pair_link_down_drops(void)
{
	struct swv_port_counters c;
	struct ibv_mr *mr;
	struct tdev a;
	unsigned int ok;

	snprintf(cable, sizeof(cable), "pair:t%dd", (int)getpid());
	TEST_ASSERT_SUCCESS(t_setup(&a, "pd", cable), "");
	TEST_ASSERT(!t_up(&a), "");
	mr = swv_reg_mr(a.pd, txbuf, sizeof(txbuf), 0);
	t_frame(txbuf, 64, a.mac, a.mac, 7);
	TEST_ASSERT_EQUAL(t_send_n(&a, mr, 20, 64, &ok), 20, "");
	TEST_ASSERT_EQUAL(ok, 20, "");
	T_WAIT(swv_query_port_counters(a.ctx, &c) == 0 &&
	       c.tx_link_down == 20);
	TEST_ASSERT_EQUAL(c.tx_link_down, 20, "");
	TEST_ASSERT_EQUAL(c.tx_link_down_bytes, 20 * 64, "");
	TEST_ASSERT_EQUAL(c.tx_frames, 20, "");
	swv_dereg_mr(mr);
	t_teardown(&a);
	return TEST_SUCCESS;
}

/*
 * A pair name another process holds: a warning that this process got its
 * own cable; none for a name no other process holds.
 */
static int
test_pair_name_elsewhere(void)
{
	char wire[48], note[256];
	struct peer p;
	struct tdev a;

	snprintf(wire, sizeof(wire), "pair:t%dw", (int)getpid());
	TEST_ASSERT_SUCCESS(t_setup(&a, "pw", wire), "");
	TEST_ASSERT_SUCCESS(swv_device_wire_note("pw", note, sizeof(note)),
			    "");
	TEST_ASSERT_EQUAL(note[0], '\0', "no other process: %s", note);
	t_teardown(&a);
	TEST_ASSERT_SUCCESS(peer_start(&p, wire, "peer"), "");
	TEST_ASSERT_SUCCESS(t_setup(&a, "pw", wire), "");
	TEST_ASSERT_SUCCESS(swv_device_wire_note("pw", note, sizeof(note)),
			    "");
	TEST_ASSERT(strstr(note, "its own cable") != NULL &&
		    strstr(note, "shm:") != NULL, "note: %s", note);
	TEST_ASSERT_EQUAL(peer_stop(&p), 0, "");
	t_teardown(&a);
	/* The peer has gone: its name with it. */
	TEST_ASSERT_SUCCESS(t_setup(&a, "pw", wire), "");
	TEST_ASSERT_SUCCESS(swv_device_wire_note("pw", note, sizeof(note)),
			    "");
	TEST_ASSERT_EQUAL(note[0], '\0', "%s", note);
	t_teardown(&a);
	return TEST_SUCCESS;
}

/* An engine's statistics now (zeroes if it cannot tell). */
static struct swv_engine_stats
t_estats(struct swv_engine *eng)
{
	struct swv_engine_stats st;

	if (swv_engine_get_stats(eng, &st) != 0)
		memset(&st, 0, sizeof(st));
	return st;
}

/*
 * A (the default engine, its thread) receives from B (an engine driven
 * from here), whose wake socket name was taken when B plugged in (as by a
 * predecessor on its side still closing): with A's engine in deep sleep,
 * each frame B sends must wake it through its wire (a fd wake), not leave
 * it to its timeout. Counted, not timed: of 3 rounds, none woken by the
 * fd means B swallowed the wakeups.
 */
static int
test_shm_unbound_end_wakes(void)
{
	struct swv_device_attr attr = { SWV_DEVICE_PROFILE_MLX5, NULL };
	struct swv_engine *eng, *def = swv_engine_default();
	struct ibv_mr *mr, *rmr;
	struct sockaddr_un sa;
	struct ibv_flow *fl;
	struct ibv_wc wc;
	struct tdev a, b;
	struct stat st;
	uint64_t w0, woken = 0;
	unsigned int r, k;
	int s, n;

	t_cable("u");
	eng = swv_engine_create();
	TEST_ASSERT_NOT_NULL(eng, "");
	attr.engine = eng;
	TEST_ASSERT_SUCCESS(t_setup(&a, "ua", t_wire()), "");
	TEST_ASSERT_SUCCESS(stat(cable_path, &st), "");
	/* Side 1's wake socket name, taken before B plugs in. */
	s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	TEST_ASSERT(s >= 0, "");
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	n = snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1,
		     "swverbs-shm/%llx:%llx/1", (unsigned long long)st.st_dev,
		     (unsigned long long)st.st_ino);
	TEST_ASSERT_SUCCESS(bind(s, (struct sockaddr *)&sa,
				 (socklen_t)(offsetof(struct sockaddr_un,
						      sun_path) + 1 + n)), "");
	TEST_ASSERT_SUCCESS(t_setup_attr(&b, "ub", t_wire(), &attr), "");
	close(s);
	T_WAIT(t_up(&a));
	TEST_ASSERT(t_up(&a), "");
	mr = swv_reg_mr(b.pd, txbuf, sizeof(txbuf), 0);
	rmr = swv_reg_mr(a.pd, rxbuf, sizeof(rxbuf), IBV_ACCESS_LOCAL_WRITE);
	fl = t_flow_eth(a.rqp, a.mac, 0);
	TEST_ASSERT(mr != NULL && rmr != NULL && fl != NULL, "");
	t_frame(txbuf, 64, a.mac, b.mac, 3);
	for (r = 0; r < 3; r++) {
		TEST_ASSERT_SUCCESS(t_recv(a.rqp, rmr, rxbuf, 4096, r), "");
		T_WAIT(t_estats(def).asleep);
		TEST_ASSERT(t_estats(def).asleep, "round %u", r);
		usleep(20000);	/* well inside its sleep */
		w0 = t_estats(def).fd_wakes;
		TEST_ASSERT_SUCCESS(t_send(b.sqp, mr, txbuf, 64, r), "");
		swv_engine_run_once(eng);	/* B sends and flushes */
		TEST_ASSERT_EQUAL(t_poll(a.rcq, &wc, 1, T_WAIT_MS), 1, "round %u",
				  r);
		TEST_ASSERT_EQUAL(wc.status, IBV_WC_SUCCESS, "");
		woken += t_estats(def).fd_wakes - w0;
		for (k = 0; k < 4; k++)
			swv_engine_run_once(eng);
		TEST_ASSERT_EQUAL(ibv_poll_cq(b.scq, 1, &wc), 1, "");
	}
	printf("  A's engine woken by the wire in %" PRIu64 " of 3 rounds\n",
	       woken);
	TEST_ASSERT(woken > 0, "B swallowed every wakeup of its peer");
	TEST_ASSERT_SUCCESS(swv_destroy_flow(fl), "");
	swv_dereg_mr(mr);
	swv_dereg_mr(rmr);
	t_teardown(&b);
	t_teardown(&a);
	swv_engine_destroy(eng);
	return TEST_SUCCESS;
}

/*
 * A (the default engine, its thread) sends to B (an engine driven from
 * here) until A's ring is full. The room B makes when it drains the ring
 * comes without a wakeup: A's engine must not sleep deeply (~100 ms, until
 * a doorbell) while its sends wait, and must again once they went. Counted
 * (deep sleeps of A's engine), not timed.
 */
static int
test_shm_full_ring_no_deep_sleep(void)
{
	struct swv_device_attr attr = { SWV_DEVICE_PROFILE_MLX5, NULL };
	struct swv_engine *eng, *def = swv_engine_default();
	unsigned int posted = 0, done = 0, i;
	uint64_t d0, d1, end;
	struct ibv_wc wc[64];
	struct ibv_mr *mr;
	struct tdev a, b;
	int n;

	t_cable("f");
	eng = swv_engine_create();
	TEST_ASSERT_NOT_NULL(eng, "");
	attr.engine = eng;
	TEST_ASSERT_SUCCESS(t_setup(&a, "fa", t_wire()), "");
	TEST_ASSERT_SUCCESS(t_setup_attr(&b, "fb", t_wire(), &attr), "");
	T_WAIT(t_up(&a));
	TEST_ASSERT(t_up(&a), "");
	mr = swv_reg_mr(a.pd, txbuf, sizeof(txbuf), 0);
	TEST_ASSERT_NOT_NULL(mr, "");
	t_frame(txbuf, 64, (const uint8_t *)"\xff\xff\xff\xff\xff\xff",
		a.mac, 1);
	/*
	 * Send until A's completions reach a ring of frames: its ring is
	 * full (B's engine does not run). Counted, not timed: a pause of
	 * 50 ms in the completions is no proof, the engine thread may only
	 * have lost its CPU. The 300 ms below check that no more come.
	 */
	end = t_now_ms() + T_WAIT_MS;
	while (done < T_SHM_SLOTS && t_now_ms() < end) {
		while (posted - done < 200 &&
		       t_send(a.sqp, mr, txbuf, 64, posted) == 0)
			posted++;
		n = ibv_poll_cq(a.scq, 64, wc);
		if (n > 0)
			done += (unsigned int)n;
		else
			usleep(100);
	}
	TEST_ASSERT(done == T_SHM_SLOTS && posted > done, "%u of %u", done,
		    posted);
	/* Stopped on the full ring for 300 ms: no deep sleep in them. */
	d0 = t_estats(def).deep_sleeps;
	usleep(300 * 1000);
	d1 = t_estats(def).deep_sleeps;
	TEST_ASSERT_EQUAL(ibv_poll_cq(a.scq, 64, wc), 0, "ring not full");
	TEST_ASSERT_EQUAL(d1, d0, "%" PRIu64 " deep sleeps while sends "
			  "waited for room", d1 - d0);
	/* B drains; A's waiting sends complete, then A may sleep again. */
	end = t_now_ms() + 5000;
	while (done < posted && t_now_ms() < end) {
		for (i = 0; i < 4; i++)
			swv_engine_run_once(eng);
		n = ibv_poll_cq(a.scq, 64, wc);
		done += n > 0 ? (unsigned int)n : 0;
	}
	TEST_ASSERT_EQUAL(done, posted, "sends lost");
	for (i = 0; i < T_SHM_SLOTS / 64 + 2; i++)
		swv_engine_run_once(eng);
	T_WAIT(t_estats(def).deep_sleeps > d1);
	TEST_ASSERT(t_estats(def).deep_sleeps > d1, "no deep sleep once drained");
	swv_dereg_mr(mr);
	t_teardown(&b);
	t_teardown(&a);
	swv_engine_destroy(eng);
	return TEST_SUCCESS;
}

struct t_opener {
	struct tdev d;
	int ret;
	int done;
};

static void *
t_open_thread(void *arg)
{
	struct t_opener *o = arg;

	o->ret = t_setup(&o->d, "lb", t_wire());
	__atomic_store_n(&o->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Whether @o finished within @ms. */
static bool
t_opener_wait(struct t_opener *o, unsigned int ms)
{
	uint64_t end = t_now_ms() + ms;

	while (!__atomic_load_n(&o->done, __ATOMIC_ACQUIRE) &&
	       t_now_ms() < end)
		usleep(1000);
	return __atomic_load_n(&o->done, __ATOMIC_ACQUIRE) != 0;
}

/*
 * Take the setup lock byte on fd as another process would: the engine's
 * link check holds it for a moment now and then (a read lock), so a busy
 * lock is tried again, for 5 s at most. Return: 0, or the errno.
 */
static int
t_setup_lock(int fd, struct flock *fl)
{
	uint64_t end = t_now_ms() + 5000;

	while (fcntl(fd, F_OFD_SETLK, fl) != 0) {
		if ((errno != EAGAIN && errno != EACCES) || t_now_ms() >= end)
			return errno;
		usleep(100);
	}
	return 0;
}

/*
 * The cable's setup lock (byte 2) held by another open, as by a process
 * stopped while it attaches: a new end's open gives up with EBUSY (within
 * 10 s here; 1 s in the wire) instead of waiting under swv_lock; an end's
 * close goes on without it and leaves the file. Frees the lock in any case
 * so that a hung open ends.
 */
static int
test_shm_setup_lock_bounded(void)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_start = 2, .l_len = 1 };
	struct t_opener o = { .ret = -1, .done = 0 };
	struct swv_port_counters c;
	pthread_t th;
	struct tdev a;
	bool ended;
	int fd;

	t_cable("l");
	TEST_ASSERT_SUCCESS(t_setup(&a, "la", t_wire()), "");
	fd = open(cable_path, O_RDWR | O_CLOEXEC);
	TEST_ASSERT(fd >= 0, "");
	TEST_ASSERT_SUCCESS(t_setup_lock(fd, &fl), "");
	TEST_ASSERT_SUCCESS(pthread_create(&th, NULL, t_open_thread, &o), "");
	ended = t_opener_wait(&o, 10000);
	/* Other swverbs control calls are not held up after it. */
	if (ended)
		TEST_ASSERT_SUCCESS(swv_query_port_counters(a.ctx, &c), "");
	fl.l_type = F_UNLCK;
	fcntl(fd, F_OFD_SETLK, &fl);
	pthread_join(th, NULL);
	if (o.ret == 0)
		t_teardown(&o.d);
	TEST_ASSERT(ended, "open waited for the setup lock");
	TEST_ASSERT_EQUAL(o.ret, EBUSY, "");
	/* Close with the lock held: it goes on, the file stays. */
	fl.l_type = F_WRLCK;
	TEST_ASSERT_SUCCESS(t_setup_lock(fd, &fl), "");
	t_teardown(&a);
	TEST_ASSERT_SUCCESS(access(cable_path, F_OK), "file removed unlocked");
	close(fd);
	/* Reused by the next end, removed by its close. */
	TEST_ASSERT_SUCCESS(t_setup(&a, "la", t_wire()), "");
	t_teardown(&a);
	TEST_ASSERT(access(cable_path, F_OK) != 0, "file left");
	return TEST_SUCCESS;
}

/*
 * Child (--nospace <cable>): in a mount namespace of its own, a 1 MiB
 * tmpfs on /dev/shm (a cable is about 4 MiB): the device is refused with
 * ENOSPC and leaves no file. Exits 0 (as it should), 1 (wrong), 77 (no
 * mount namespace here).
 */
static int
nospace_main(const char *name)
{
	struct tdev d;
	int ret;

	if (unshare(CLONE_NEWNS) != 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount("tmpfs", T_SHM_DIR, "tmpfs", 0, "size=1m") != 0)
		return 77;
	snprintf(cable, sizeof(cable), "%s", name);
	snprintf(cable_path, sizeof(cable_path), "%s/swverbs-shm.%s",
		 T_SHM_DIR, cable);
	ret = t_setup(&d, "nsp", t_wire());
	if (ret == 0) {
		printf("cable opened on a full /dev/shm\n");
		t_teardown(&d);
		return 1;
	}
	if (ret != ENOSPC) {
		printf("error %d, not ENOSPC\n", ret);
		return 1;
	}
	if (access(cable_path, F_OK) == 0) {
		printf("%s left behind\n", cable_path);
		return 1;
	}
	return 0;
}

static int
test_shm_no_room(void)
{
	pid_t pid;
	int st;

	t_cable("n");
	fflush(stdout);
	pid = fork();
	TEST_ASSERT(pid >= 0, "fork");
	if (pid == 0) {
		execl(self_exe, self_exe, "--nospace", cable, (char *)NULL);
		_exit(127);
	}
	TEST_ASSERT_EQUAL(waitpid(pid, &st, 0), pid, "");
	TEST_ASSERT(!WIFSIGNALED(st), "killed by signal %d on a full /dev/shm",
		    WTERMSIG(st));
	if (WEXITSTATUS(st) == 77)
		TEST_SKIP("no mount namespace (root needed)");
	TEST_ASSERT_EQUAL(WEXITSTATUS(st), 0, "");
	return TEST_SUCCESS;
}

/* The port events queued on @d since the last call: PORT_ERR ones. */
static unsigned int
t_port_errs(struct tdev *d)
{
	struct ibv_async_event ev;
	unsigned int n = 0;
	int fl;

	fl = fcntl(d->ctx->async_fd, F_GETFL);
	fcntl(d->ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
	while (swv_get_async_event(d->ctx, &ev) == 0) {
		n += ev.event_type == IBV_EVENT_PORT_ERR;
		swv_ack_async_event(&ev);
	}
	fcntl(d->ctx->async_fd, F_SETFL, fl);
	return n;
}

struct t_cutter {
	unsigned int after_ms;
	int ret;
};

static void *
t_cut_thread(void *arg)
{
	struct t_cutter *c = arg;

	usleep(c->after_ms * 1000);
	c->ret = truncate(cable_path, 0) == 0 ? 0 : errno;
	return NULL;
}

/*
 * The cable file truncated (as by a stray `truncate` or a cleanup script)
 * while frames flow both ways between this process and a peer process:
 * the mapping's pages are gone, so the next access of either end is a
 * SIGBUS. Both processes live on, the link goes down (a PORT_ERR here),
 * wire_faults counts the cut at both ends; the ends plug in again by
 * themselves and frames flow once more, each one delivered once.
 */
static int
test_shm_truncated(void)
{
	struct swv_port_counters c0, c1;
	struct t_cutter cut = { .after_ms = 50, .ret = -1 };
	struct ibv_wc wc[64];
	struct ibv_mr *mr;
	struct peer p;
	struct tdev a;
	pthread_t th;
	uint64_t rx, rx0, down, faults, end;
	unsigned int ok, posted = 0, done = 0, errs;
	int up, n, st;
	char line[32];

	t_cable("t");
	TEST_ASSERT_SUCCESS(t_setup(&a, "sta", t_wire()), "");
	TEST_ASSERT_SUCCESS(peer_start(&p, t_wire(), "peer"), "");
	T_WAIT(t_up(&a));
	TEST_ASSERT(t_up(&a), "");
	t_port_errs(&a);
	mr = swv_reg_mr(a.pd, txbuf, sizeof(txbuf), 0);
	TEST_ASSERT_NOT_NULL(mr, "");
	t_frame(txbuf, 64, (const uint8_t *)"\xff\xff\xff\xff\xff\xff", a.mac,
		4);
	/* The peer sends to us, we to it; the file is cut after 50 ms. */
	fprintf(p.to, "send 100000\n");
	fflush(p.to);
	TEST_ASSERT_SUCCESS(pthread_create(&th, NULL, t_cut_thread, &cut), "");
	end = t_now_ms() + 300;
	while (t_now_ms() < end) {
		while (posted - done < 200 &&
		       t_send(a.sqp, mr, txbuf, 64, posted) == 0)
			posted++;
		n = ibv_poll_cq(a.scq, 64, wc);
		done += n > 0 ? (unsigned int)n : 0;
	}
	pthread_join(th, NULL);
	TEST_ASSERT_SUCCESS(cut.ret, "truncate %s", cable_path);
	end = t_now_ms() + T_WAIT_MS;
	while (done < posted && t_now_ms() < end) {
		n = ibv_poll_cq(a.scq, 64, wc);
		done += n > 0 ? (unsigned int)n : 0;
	}
	TEST_ASSERT_EQUAL(done, posted, "sends stuck after the cut");
	/* The peer's sends all complete too (delivered, or dropped). */
	TEST_ASSERT_NOT_NULL(fgets(line, sizeof(line), p.from), "peer died");
	TEST_ASSERT_EQUAL(waitpid(p.pid, &st, WNOHANG), 0, "peer ended");
	printf("  %u frames sent here, the peer's: %s", posted, line);
	T_WAIT(swv_query_port_counters(a.ctx, &c0) == 0 &&
	       c0.wire_faults >= 1);
	TEST_ASSERT(c0.wire_faults >= 1, "the cut not counted here");
	TEST_ASSERT_SUCCESS(peer_faults(&p, &faults), "");
	TEST_ASSERT(faults >= 1, "the cut not counted by the peer");
	errs = 0;
	T_WAIT((errs += t_port_errs(&a)) >= 1);
	TEST_ASSERT(errs >= 1, "no PORT_ERR: the link never went down");
	printf("  wire_faults: %" PRIu64 " here, %" PRIu64 " at the peer; "
	       "%u PORT_ERR\n", c0.wire_faults, faults, errs);
	/* Plugged in again: the link up, frames flow, counted once each. */
	T_WAIT(t_up(&a));
	TEST_ASSERT(t_up(&a), "the ends did not plug in again");
	end = t_now_ms() + T_WAIT_MS;
	do {
		TEST_ASSERT_SUCCESS(peer_count(&p, &rx0, &down, &up), "");
	} while (up == 0 && t_now_ms() < end && usleep(1000) == 0);
	TEST_ASSERT_EQUAL(up, 1, "the peer's link");
	swv_query_port_counters(a.ctx, &c0);
	TEST_ASSERT_EQUAL(t_send_n(&a, mr, 100, 64, &ok), 100, "");
	end = t_now_ms() + 5000;
	do {
		TEST_ASSERT_SUCCESS(peer_count(&p, &rx, &down, &up), "");
	} while (rx < rx0 + 100 && t_now_ms() < end && usleep(1000) == 0);
	TEST_ASSERT_EQUAL(rx - rx0, 100, "");
	swv_query_port_counters(a.ctx, &c1);
	TEST_ASSERT_EQUAL(c1.tx_link_down, c0.tx_link_down, "");
	TEST_ASSERT_EQUAL(c1.wire_faults, c0.wire_faults, "a fault after");
	TEST_ASSERT_EQUAL(peer_stop(&p), 0, "");
	swv_dereg_mr(mr);
	t_teardown(&a);
	TEST_ASSERT(access(cable_path, F_OK) != 0, "%s left", cable_path);
	return TEST_SUCCESS;
}

/* Read or write an index word of the cable file, as a stray writer. */
static uint32_t
t_peek(size_t off)
{
	uint32_t v = 0;
	int fd;

	fd = open(cable_path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (pread(fd, &v, sizeof(v), (off_t)off) != sizeof(v))
			v = 0;
		close(fd);
	}
	return v;
}

static int
t_poke(size_t off, uint32_t v)
{
	int fd, ret = 0;

	fd = open(cable_path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (pwrite(fd, &v, sizeof(v), (off_t)off) != sizeof(v))
		ret = errno;
	close(fd);
	return ret;
}

/*
 * A's head word (A is side 0: first on the cable) scribbled a billion
 * slots ahead while B waits for frames: B used to take every one of them
 * as a frame, over and over (45.6M frames against 6,144 sent). Now B
 * delivers none, takes its link down (PORT_ERR) and counts the fault; the
 * ends plug in again and frames flow, each delivered once.
 */
static int
test_shm_head_scribbled(void)
{
	struct swv_port_counters ca, cb;
	struct ibv_mr *mr;
	struct tdev a, b;
	unsigned int ok, errs;
	uint32_t head;

	t_cable("h");
	TEST_ASSERT_SUCCESS(t_setup(&a, "sha", t_wire()), "");
	TEST_ASSERT_SUCCESS(t_setup(&b, "shb", t_wire()), "");
	T_WAIT(t_up(&a) && t_up(&b));
	TEST_ASSERT(t_up(&a) && t_up(&b), "");
	mr = swv_reg_mr(a.pd, txbuf, sizeof(txbuf), 0);
	TEST_ASSERT_NOT_NULL(mr, "");
	t_frame(txbuf, 64, b.mac, a.mac, 5);
	TEST_ASSERT_EQUAL(t_send_n(&a, mr, 10, 64, &ok), 10, "");
	T_WAIT(swv_query_port_counters(b.ctx, &cb) == 0 &&
	       cb.rx_frames == 10);
	TEST_ASSERT_EQUAL(cb.rx_frames, 10, "");
	t_port_errs(&b);
	head = t_peek(T_HEAD(0));
	TEST_ASSERT_EQUAL(head, 10, "A's head in the file (A on side 0)");
	TEST_ASSERT_SUCCESS(t_poke(T_HEAD(0), head + 0x40000000u), "");
	T_WAIT(swv_query_port_counters(b.ctx, &cb) == 0 &&
	       (cb.wire_faults >= 1 || cb.rx_frames > 10 + T_SHM_SLOTS));
	TEST_ASSERT_EQUAL(cb.rx_frames, 10, "phantom frames delivered");
	TEST_ASSERT(cb.wire_faults >= 1, "the scribble not counted");
	errs = 0;
	T_WAIT((errs += t_port_errs(&b)) >= 1);
	TEST_ASSERT(errs >= 1, "no PORT_ERR: the link never went down");
	/* Plugged in again: frames flow, each once. */
	T_WAIT(t_up(&a) && t_up(&b));
	TEST_ASSERT(t_up(&a) && t_up(&b), "the ends did not plug in again");
	TEST_ASSERT_EQUAL(t_send_n(&a, mr, 10, 64, &ok), 10, "");
	T_WAIT(swv_query_port_counters(b.ctx, &cb) == 0 &&
	       cb.rx_frames >= 20);
	usleep(50000);
	swv_query_port_counters(a.ctx, &ca);
	swv_query_port_counters(b.ctx, &cb);
	printf("  wire_faults: A %" PRIu64 ", B %" PRIu64 "; B's PORT_ERR %u\n",
	       ca.wire_faults, cb.wire_faults, errs);
	TEST_ASSERT_EQUAL(cb.rx_frames, 20, "");
	swv_dereg_mr(mr);
	t_teardown(&b);
	t_teardown(&a);
	TEST_ASSERT(access(cable_path, F_OK) != 0, "%s left", cable_path);
	return TEST_SUCCESS;
}

/*
 * A (the default engine, its thread) fills its ring to B (an engine
 * driven from here, not run yet); then B's tail word is scribbled past
 * A's head. A used to see a ring full for ever: its sends stalled. Now
 * A's waiting sends complete (as link-down drops), A counts the fault;
 * B delivers no more than was sent; the ends plug in again.
 */
static int
test_shm_tail_scribbled(void)
{
	struct swv_device_attr attr = { SWV_DEVICE_PROFILE_MLX5, NULL };
	struct swv_engine *eng;
	unsigned int posted = 0, done = 0, i, errs;
	struct swv_port_counters ca, cb;
	struct ibv_wc wc[64];
	struct ibv_mr *mr;
	struct tdev a, b;
	uint64_t end;
	uint32_t head;
	int n;

	t_cable("s");
	eng = swv_engine_create();
	TEST_ASSERT_NOT_NULL(eng, "");
	attr.engine = eng;
	TEST_ASSERT_SUCCESS(t_setup(&a, "ssa", t_wire()), "");
	TEST_ASSERT_SUCCESS(t_setup_attr(&b, "ssb", t_wire(), &attr), "");
	T_WAIT(t_up(&a));
	TEST_ASSERT(t_up(&a), "");
	t_port_errs(&a);
	mr = swv_reg_mr(a.pd, txbuf, sizeof(txbuf), 0);
	TEST_ASSERT_NOT_NULL(mr, "");
	t_frame(txbuf, 64, b.mac, a.mac, 6);
	end = t_now_ms() + T_WAIT_MS;
	while (done < T_SHM_SLOTS && t_now_ms() < end) {
		while (posted - done < 200 &&
		       t_send(a.sqp, mr, txbuf, 64, posted) == 0)
			posted++;
		n = ibv_poll_cq(a.scq, 64, wc);
		if (n > 0)
			done += (unsigned int)n;
		else
			usleep(100);
	}
	TEST_ASSERT(done == T_SHM_SLOTS && posted > done, "%u of %u", done,
		    posted);
	head = t_peek(T_HEAD(0));
	TEST_ASSERT_EQUAL(head, T_SHM_SLOTS, "A's head in the file");
	TEST_ASSERT_SUCCESS(t_poke(T_TAIL(0), head + 12345), "");
	/* A's waiting sends complete: dropped on a link now down. */
	end = t_now_ms() + T_WAIT_MS;
	while (done < posted && t_now_ms() < end) {
		n = ibv_poll_cq(a.scq, 64, wc);
		done += n > 0 ? (unsigned int)n : 0;
		if (n <= 0)
			usleep(100);
	}
	TEST_ASSERT_EQUAL(done, posted, "A's sends stalled");
	T_WAIT(swv_query_port_counters(a.ctx, &ca) == 0 &&
	       ca.wire_faults >= 1);
	TEST_ASSERT(ca.wire_faults >= 1, "the scribble not counted");
	TEST_ASSERT_EQUAL(ca.tx_link_down, posted - T_SHM_SLOTS, "");
	errs = 0;
	T_WAIT((errs += t_port_errs(&a)) >= 1);
	TEST_ASSERT(errs >= 1, "no PORT_ERR: the link never went down");
	/* B runs: what it takes is what A sent, then both plug in again. */
	end = t_now_ms() + T_WAIT_MS;
	do {
		for (i = 0; i < 8; i++)
			swv_engine_run_once(eng);
		usleep(1000);
	} while (!(t_up(&a) && t_up(&b)) && t_now_ms() < end);
	TEST_ASSERT(t_up(&a) && t_up(&b), "the ends did not plug in again");
	swv_query_port_counters(b.ctx, &cb);
	TEST_ASSERT(cb.rx_frames <= T_SHM_SLOTS, "%" PRIu64 " frames: phantoms",
		    cb.rx_frames);
	printf("  wire_faults: A %" PRIu64 ", B %" PRIu64 "; B took %" PRIu64
	       " of the %u in the ring\n", ca.wire_faults, cb.wire_faults,
	       cb.rx_frames, T_SHM_SLOTS);
	swv_dereg_mr(mr);
	t_teardown(&b);
	t_teardown(&a);
	swv_engine_destroy(eng);
	TEST_ASSERT(access(cable_path, F_OK) != 0, "%s left", cable_path);
	return TEST_SUCCESS;
}

static const struct unit_test_suite suite = {
	.name = "swverbs shm and cables between processes",
	.cases = {
		TEST_CASE(test_shm_exact_both_ways),
		TEST_CASE(test_shm_third_end_refused),
		TEST_CASE(test_shm_close_reattach),
		TEST_CASE(test_shm_leftover_reused),
		TEST_CASE(test_shm_backpressure_process),
		TEST_CASE(test_shm_peer_killed),
		TEST_CASE(test_pair_link_down_drops),
		TEST_CASE(test_pair_name_elsewhere),
		TEST_CASE(test_shm_no_room),
		TEST_CASE(test_shm_unbound_end_wakes),
		TEST_CASE(test_shm_full_ring_no_deep_sleep),
		TEST_CASE(test_shm_setup_lock_bounded),
		TEST_CASE(test_shm_truncated),
		TEST_CASE(test_shm_head_scribbled),
		TEST_CASE(test_shm_tail_scribbled),
		TEST_CASES_END(),
	},
};

int
main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "--peer") == 0)
		return peer_main(argv[2], argv[3]);
	if (argc == 3 && strcmp(argv[1], "--nospace") == 0)
		return nospace_main(argv[2]);
	self_exe = "/proc/self/exe";
	signal(SIGPIPE, SIG_IGN);
	t_owner = getpid();
	atexit(t_cable_cleanup);
	signal(SIGINT, t_on_signal);
	signal(SIGTERM, t_on_signal);
	signal(SIGHUP, t_on_signal);
	return unit_test_suite_runner(&suite);
}
