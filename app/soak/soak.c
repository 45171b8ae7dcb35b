/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Soak: two vbr ports on a pair wire (net_vbr0 sends, net_vbr1 receives)
 * put through the same cycle again and again for --seconds:
 *
 *  1. churn: the main lcore creates and destroys rules on port 1 as fast
 *     as it can (a ring of --rules slots, each slot's rule replaced in
 *     turn, its mask and action changing with each generation: mark +
 *     queue + count, mark + rss, drop, drop + count), while the traffic
 *     lcore sends frames of five classes from port 0 and checks each one
 *     received on port 1; then every churned rule is destroyed;
 *  2. stop/start: both ports stopped (the mbufs in use must be those
 *     their Rx queues hold), rules created on the stopped port 1, both
 *     started, the stopped-time rules destroyed;
 *  3. hotplug: both ports removed with rte_eal_hotplug_remove(), no mbuf
 *     may be in use then, and probed again with rte_eal_hotplug_add(),
 *     set up and started again (net_vbr0 first in odd cycles, net_vbr1
 *     in even ones, so that either end is for a while alone on the wire).
 *
 * After each phase a fixed burst of each class must come out exactly as
 * the rules say, and the port counters must add up: frames sent ==
 * delivered + out_of_buffer + no_match + flow_dropped + error completions
 * on port 1, nothing in oerrors, ierrors or rx_nombuf. Classes (by IPv4
 * destination; permanent rules at priority 0, churned ones at 1):
 *   A  10.7.0.1 to port 1's MAC, no rule: default rule, queue 0, no mark
 *   R  10.8.0.1, permanent rule: mark RSS_MARK, count, rss over 4 queues
 *   D  10.9.0.1, permanent rule: count, drop; its hits == frames sent
 *   F  10.7.0.1 to a foreign MAC: rx_no_match, never delivered
 *   C  10.6.255.255, source 10.1.0.0 + slot: churned rule of that slot
 *      (mark slot + 1 on any queue, or dropped) or none (queue 0, no mark)
 *
 * After each cycle (ports started, churned rules gone) the open file
 * descriptors must equal the baseline exactly, and so must the bytes
 * allocated from DPDK's heap (rte_malloc); the C heap in use (mallinfo2,
 * or the sanitizer allocator's count under ASan), the mapped address
 * space and the resident set must stay within a tolerance of it (see
 * mem_tolerance()). The baseline is taken after the first cycle: the
 * first churn makes the device's pools, the first hotplug EAL's lists.
 * At the end both ports are closed and no mbuf may be left in use.
 *
 * usage: soak [--seconds N] [--rules N] [--churn-ms MS] [--pmd PATH]
 *             [--verbose]
 * Exit 0 when no check failed, 1 otherwise (each failure printed), 2 on
 * bad usage; the summary lists what was done and measured.
 */

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_byteorder.h>
#include <rte_bus.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_flow.h>
#include <rte_ip.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_udp.h>

#if defined(__SANITIZE_ADDRESS__)
#define SOAK_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SOAK_ASAN 1
#endif
#endif
#ifdef SOAK_ASAN
/* The sanitizer allocator's count (gcc 12 installs no header for it). */
size_t __sanitizer_get_current_allocated_bytes(void);
#endif

#ifndef VBR_PMD_PATH
#define VBR_PMD_PATH "librte_net_vbr.so"
#endif

#define NB_RXQ 4
#define NB_RXD 512
#define NB_TXD 512
#define NB_MBUF 8192
#define BURST 32
#define WINDOW 256		/* frames in flight at most */
#define CHECK_N 64		/* frames of each class after a phase */
#define STOPPED_RULES 256	/* rules made on the stopped port */
#define NB_MASKS 8		/* masks a slot's rule goes through */
#define DRAIN_MS 30000		/* frames in flight have this long */
#define RX_STASH 64		/* the PMD's refill stash per Rx queue */
#define RSS_MARK 0x800000
#define FRAME_LEN 64

#define IP_A RTE_IPV4(10, 7, 0, 1)
#define IP_R RTE_IPV4(10, 8, 0, 1)
#define IP_D RTE_IPV4(10, 9, 0, 1)
#define IP_C RTE_IPV4(10, 6, 255, 255)
#define SRC_C RTE_IPV4(10, 1, 0, 0)	/* + slot */
#define SRC_X RTE_IPV4(10, 2, 0, 1)	/* other classes */

enum cls { CLS_A, CLS_R, CLS_D, CLS_F, CLS_C, NB_CLS };
static const char *const cls_name[NB_CLS] = { "A", "R", "D", "F", "C" };
/* The traffic mix, one entry per frame, repeated. */
static const enum cls mix[] = {
	CLS_C, CLS_A, CLS_C, CLS_R, CLS_C, CLS_D, CLS_C, CLS_A,
	CLS_C, CLS_R, CLS_C, CLS_F, CLS_C, CLS_R, CLS_C, CLS_A,
};

/* Options. */
static double opt_seconds = 30;
static uint32_t opt_rules = 4096;
static uint32_t opt_churn_ms = 1000;
static const char *opt_pmd = VBR_PMD_PATH;
static bool opt_verbose;

static char cable[64];
/** ",progress=<model>" from VBR_TEST_PROGRESS, or empty. */
static char progress_arg[48];
static struct rte_mempool *mp;
static uint16_t port0, port1;
static struct rte_ether_addr mac1;
static const struct rte_ether_addr foreign_mac = {
	.addr_bytes = { 0x02, 0x00, 0x00, 0x00, 0xee, 0xee } };

/* Permanent rules of port 1 (NULL while it is away). */
static struct rte_flow *rule_r, *rule_d;

/* Churn state: one rule per slot, its generation picks mask and action. */
static struct rte_flow **slots;
static uint32_t *gens;

/* What the run did, for the summary. */
static struct {
	uint64_t cycles, created, destroyed, queried, hotplugs, restarts;
	uint64_t sent, received, dropped, missed;
	uint64_t cls_sent[NB_CLS], cls_recv[NB_CLS];
	uint64_t rss_queue[NB_RXQ];
	unsigned int peak_mbufs, final_mbufs;
	uint64_t errors;
} sum;

/* Resources at one point. */
struct res {
	int fds;
	uint64_t heap;		/* C heap in use */
	uint64_t dpdk_heap;	/* rte_malloc allocated */
	uint64_t vm;		/* mapped address space (VmSize) */
	uint64_t rss;		/* resident (VmRSS) */
};

static void
fail(const char *fmt, ...)
{
	va_list ap;

	sum.errors++;
	printf("soak: error: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static uint64_t
now_ms(void)
{
	return rte_get_timer_cycles() * 1000 / rte_get_timer_hz();
}

/* --- resources ---------------------------------------------------------- */

static int
count_fds(void)
{
	struct dirent *e;
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;	/* the directory's own fd */
}

/* A "Name:   N kB" line of /proc/self/status, in bytes. */
static uint64_t
status_kb(const char *key)
{
	char line[256];
	size_t len = strlen(key);
	uint64_t v = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, key, len) == 0 && line[len] == ':') {
			v = strtoull(line + len + 1, NULL, 10) * 1024;
			break;
		}
	fclose(f);
	return v;
}

static uint64_t
heap_in_use(void)
{
#ifdef SOAK_ASAN
	return __sanitizer_get_current_allocated_bytes();
#else
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
#endif
}

static uint64_t
dpdk_heap_in_use(void)
{
	struct rte_malloc_socket_stats st;
	uint64_t n = 0;
	unsigned int s;

	for (s = 0; s < rte_socket_count(); s++)
		if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(s),
						&st) == 0)
			n += st.heap_allocsz_bytes;
	return n;
}

/*
 * The descriptors open once they have settled: EAL's interrupt thread
 * closes its epoll descriptor and opens a new one whenever the set of
 * interrupt sources changes (a port probed or removed), so one read can
 * catch it a descriptor short. @want (-1: none) is what the caller
 * expects; a count that differs is read again, 10 ms apart, until it
 * equals @want or the same count comes five times in a row (a leak stays).
 */
static int
count_fds_settled(int want)
{
	int n = count_fds(), prev = n, same = 1, i;

	for (i = 0; i < 100 && n != want && same < 5; i++) {
		rte_delay_us_sleep(10 * 1000);
		n = count_fds();
		same = n == prev ? same + 1 : 1;
		prev = n;
	}
	return n;
}

static void
res_read(struct res *r, int want_fds)
{
	malloc_trim(0);
	r->fds = count_fds_settled(want_fds);
	r->heap = heap_in_use();
	r->dpdk_heap = dpdk_heap_in_use();
	r->vm = status_kb("VmSize");
	r->rss = status_kb("VmRSS");
}

/*
 * Tolerances against the baseline. Descriptors and DPDK heap bytes are
 * exact: every one a cycle opens or allocates it closes or frees. The C
 * heap may hold a little more than at the baseline (stdio buffers, EAL's
 * per-thread and log state, liburcu's per-thread call_rcu structures
 * resized on demand); 1 MiB, about one cycle's worth of rules at 256 B
 * each for 4096 rules, so that leaking the rules of one cycle fails. The
 * address space grows when glibc gives a thread a new arena (64 MiB of
 * reserve each, at most 8 per CPU) and when ASan maps more of its
 * allocator; one more arena is allowed, 64 MiB. Resident memory moves
 * with what glibc keeps after free and the pages the engine's tables
 * touched; 16 MiB or 10 % of the baseline, whichever is more. Under ASan
 * freed memory waits in its quarantine (quarantine_size_mb, 256 MiB by
 * default) before it is reused, so resident memory climbs until the
 * quarantine is full, at up to twice the quarantine (redzones, chunk
 * rounding, shadow): that much more is allowed there.
 */
#define TOL_HEAP (1u << 20)
#define TOL_VM (64u << 20)
#define TOL_RSS_MIN (16u << 20)

/* Resident memory ASan's quarantine may hold, bytes; 0 without ASan. */
static uint64_t
quarantine_bytes(void)
{
#ifdef SOAK_ASAN
	const char *o = getenv("ASAN_OPTIONS"), *q;
	uint64_t mb = 256;

	q = o != NULL ? strstr(o, "quarantine_size_mb=") : NULL;
	if (q != NULL)
		mb = strtoull(q + strlen("quarantine_size_mb="), NULL, 10);
	return 2 * (mb << 20);
#else
	return 0;
#endif
}

static void
res_check(const char *when, const struct res *base, const struct res *r)
{
	uint64_t tol_rss = RTE_MAX((uint64_t)TOL_RSS_MIN, base->rss / 10) +
			   quarantine_bytes();

	if (r->fds != base->fds)
		fail("%s: %d file descriptors open, baseline %d", when,
		     r->fds, base->fds);
	if (r->dpdk_heap != base->dpdk_heap)
		fail("%s: DPDK heap %" PRIu64 " B allocated, baseline %"
		     PRIu64 " B", when, r->dpdk_heap, base->dpdk_heap);
	if (r->heap > base->heap + TOL_HEAP)
		fail("%s: C heap %" PRIu64 " B in use, baseline %" PRIu64
		     " B + %u", when, r->heap, base->heap, TOL_HEAP);
	if (r->vm > base->vm + TOL_VM)
		fail("%s: %" PRIu64 " B mapped, baseline %" PRIu64 " B + %u",
		     when, r->vm, base->vm, TOL_VM);
	if (r->rss > base->rss + tol_rss)
		fail("%s: %" PRIu64 " B resident, baseline %" PRIu64
		     " B + %" PRIu64, when, r->rss, base->rss, tol_rss);
}

static void
note_mbufs(void)
{
	unsigned int n = rte_mempool_in_use_count(mp);

	if (n > sum.peak_mbufs)
		sum.peak_mbufs = n;
}

/* --- frames ------------------------------------------------------------- */

/* Build frame k of class c (k picks the C slot and the R source port). */
static struct rte_mbuf *
frame_make(enum cls c, uint32_t k)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	struct rte_ether_hdr *eh;
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *udp;
	uint32_t src = SRC_X, dst = IP_A;

	if (m == NULL)
		return NULL;
	eh = (struct rte_ether_hdr *)rte_pktmbuf_append(m, FRAME_LEN);
	memset(eh, 0, FRAME_LEN);
	eh->dst_addr = c == CLS_F ? foreign_mac : mac1;
	eh->src_addr.addr_bytes[0] = 0x02;
	eh->src_addr.addr_bytes[5] = 0x10;
	eh->ether_type = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	switch (c) {
	case CLS_R:
		dst = IP_R;
		break;
	case CLS_D:
		dst = IP_D;
		break;
	case CLS_C:
		dst = IP_C;
		src = SRC_C + k % opt_rules;
		break;
	default:
		break;
	}
	ip = (struct rte_ipv4_hdr *)(eh + 1);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16(FRAME_LEN - sizeof(*eh));
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = rte_cpu_to_be_32(src);
	ip->dst_addr = rte_cpu_to_be_32(dst);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp = (struct rte_udp_hdr *)(ip + 1);
	udp->src_port = rte_cpu_to_be_16(1024 + (k & 0x3fff));
	udp->dst_port = RTE_BE16(4000);
	udp->dgram_len = rte_cpu_to_be_16(FRAME_LEN - sizeof(*eh) -
					  sizeof(*ip));
	return m;
}

/*
 * Check a frame received on queue q of port 1 against its class; count
 * it. Return the class, or -1 after a fail().
 */
static int
frame_check(struct rte_mbuf *m, uint16_t q, uint64_t *recv)
{
	const struct rte_ether_hdr *eh;
	const struct rte_ipv4_hdr *ip;
	bool marked = (m->ol_flags & RTE_MBUF_F_RX_FDIR_ID) != 0;
	uint32_t dst, src, mark = marked ? m->hash.fdir.hi : 0;
	enum cls c;

	if (rte_pktmbuf_pkt_len(m) != FRAME_LEN) {
		fail("received a frame of %u B, sent %u", m->pkt_len,
		     FRAME_LEN);
		return -1;
	}
	eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	ip = (const struct rte_ipv4_hdr *)(eh + 1);
	dst = rte_be_to_cpu_32(ip->dst_addr);
	src = rte_be_to_cpu_32(ip->src_addr);
	if (!rte_is_same_ether_addr(&eh->dst_addr, &mac1)) {
		fail("received a frame to a foreign MAC (class F)");
		return -1;
	}
	switch (dst) {
	case IP_A:
		c = CLS_A;
		if (marked || q != 0) {
			fail("class A frame on queue %u, mark %" PRIu32
			     " (want queue 0, no mark)", q, mark);
			return -1;
		}
		break;
	case IP_R:
		c = CLS_R;
		if (!marked || mark != RSS_MARK) {
			fail("class R frame with mark %" PRIu32 " (%s), want "
			     "%u", mark, marked ? "marked" : "none",
			     RSS_MARK);
			return -1;
		}
		sum.rss_queue[q]++;
		break;
	case IP_D:
		fail("class D frame delivered past its drop rule");
		return -1;
	case IP_C:
		c = CLS_C;
		if (src - SRC_C >= opt_rules) {
			fail("class C frame from a source out of range");
			return -1;
		}
		if (marked ? mark != src - SRC_C + 1 : q != 0) {
			fail("class C frame of slot %" PRIu32 " on queue %u, "
			     "mark %" PRIu32 " (%s)", src - SRC_C, q, mark,
			     marked ? "marked" : "none");
			return -1;
		}
		break;
	default:
		fail("received a frame to an unknown address %08" PRIx32,
		     dst);
		return -1;
	}
	recv[c]++;
	return c;
}

/* Poll every Rx queue of port 1 once; return the frames received. */
static unsigned int
rx_poll(uint64_t *recv)
{
	struct rte_mbuf *pkts[BURST];
	unsigned int got = 0;
	uint16_t q, i, n;

	for (q = 0; q < NB_RXQ; q++) {
		n = rte_eth_rx_burst(port1, q, pkts, BURST);
		for (i = 0; i < n; i++)
			frame_check(pkts[i], q, recv);
		rte_pktmbuf_free_bulk(pkts, n);
		got += n;
	}
	return got;
}

/* --- counters ----------------------------------------------------------- */

/* What port 1 saw and port 0 sent, from the counters. */
struct acct {
	uint64_t opackets, oerrors;		/* port 0 */
	uint64_t ipackets, ierrors, nombuf;	/* port 1 */
	uint64_t oob, no_match, dropped, err_cqe;	/* port 1 device */
};

static const char *const xstat_names[] = {
	"rx_out_of_buffer", "rx_no_match", "rx_flow_dropped",
	"rx_error_completions",
};

static uint64_t xstat_ids[RTE_DIM(xstat_names)];

/* Look the xstats up on port 1 (after each probe of it). */
static int
xstat_ids_get(void)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(xstat_names); i++)
		if (rte_eth_xstats_get_id_by_name(port1, xstat_names[i],
						  &xstat_ids[i]) != 0) {
			fail("port %u has no xstat %s", port1,
			     xstat_names[i]);
			return -1;
		}
	return 0;
}

static int
acct_read(struct acct *a)
{
	const uint64_t *ids = xstat_ids;
	uint64_t v[RTE_DIM(xstat_names)];
	struct rte_eth_stats s0, s1;

	if (rte_eth_stats_get(port0, &s0) != 0 ||
	    rte_eth_stats_get(port1, &s1) != 0)
		return -1;
	if (rte_eth_xstats_get_by_id(port1, ids, v, RTE_DIM(v)) !=
	    (int)RTE_DIM(v))
		return -1;
	a->opackets = s0.opackets;
	a->oerrors = s0.oerrors;
	a->ipackets = s1.ipackets;
	a->ierrors = s1.ierrors;
	a->nombuf = s1.rx_nombuf;
	a->oob = v[0];
	a->no_match = v[1];
	a->dropped = v[2];
	a->err_cqe = v[3];
	return 0;
}

/* Frames of the traffic that are accounted for on port 1. */
static uint64_t
acct_resolved(const struct acct *a)
{
	return a->ipackets + a->oob + a->no_match + a->dropped + a->err_cqe;
}

static int
rule_hits(struct rte_flow *f, uint64_t *hits)
{
	static const struct rte_flow_action count = {
		.type = RTE_FLOW_ACTION_TYPE_COUNT };
	struct rte_flow_query_count q = { 0 };
	struct rte_flow_error err = { 0 };

	if (rte_flow_query(port1, f, &count, &q, &err) != 0) {
		fail("query: %s", err.message != NULL ? err.message : "?");
		return -1;
	}
	*hits = q.hits;
	return 0;
}

/* One stretch of traffic: what was sent and received, by class. */
struct run {
	struct acct a0;
	uint64_t hits_r, hits_d;
	uint64_t sent, cls_sent[NB_CLS], cls_recv[NB_CLS];
};

static int
run_begin(struct run *r)
{
	memset(r, 0, sizeof(*r));
	if (acct_read(&r->a0) != 0) {
		fail("stats: cannot read the port counters");
		return -1;
	}
	if (rule_hits(rule_r, &r->hits_r) != 0 ||
	    rule_hits(rule_d, &r->hits_d) != 0)
		return -1;
	return 0;
}

/*
 * Receive until every frame sent is accounted for, then check the sums.
 * exact: no churned rule was there (every class's outcome is known).
 */
static int
run_end(struct run *r, const char *phase, bool exact)
{
	uint64_t deadline = now_ms() + DRAIN_MS, recv = 0, hr, hd;
	struct acct a;
	unsigned int c;
	int errs = sum.errors;

	for (;;) {
		unsigned int n = rx_poll(r->cls_recv);

		if (acct_read(&a) != 0) {
			fail("%s: cannot read the port counters", phase);
			return -1;
		}
		if (n == 0 && acct_resolved(&a) - acct_resolved(&r->a0) >=
		    r->sent && a.ipackets - r->a0.ipackets ==
		    r->cls_recv[CLS_A] + r->cls_recv[CLS_R] +
		    r->cls_recv[CLS_C])
			break;
		if (now_ms() > deadline)
			break;
	}
	for (c = 0; c < NB_CLS; c++)
		recv += r->cls_recv[c];
#define D(f) (a.f - r->a0.f)
	if (D(opackets) != r->sent)
		fail("%s: port 0 opackets %" PRIu64 ", sent %" PRIu64, phase,
		     D(opackets), r->sent);
	if (D(ipackets) + D(oob) + D(no_match) + D(dropped) + D(err_cqe) !=
	    r->sent)
		fail("%s: sent %" PRIu64 " != delivered %" PRIu64 " + "
		     "out_of_buffer %" PRIu64 " + no_match %" PRIu64 " + "
		     "flow_dropped %" PRIu64 " + error completions %" PRIu64,
		     phase, r->sent, D(ipackets), D(oob), D(no_match),
		     D(dropped), D(err_cqe));
	if (D(ipackets) != recv)
		fail("%s: ipackets %" PRIu64 ", frames received %" PRIu64,
		     phase, D(ipackets), recv);
	if (D(oerrors) + D(ierrors) + D(nombuf) + D(err_cqe) != 0)
		fail("%s: oerrors %" PRIu64 " ierrors %" PRIu64 " rx_nombuf %"
		     PRIu64 " error completions %" PRIu64, phase, D(oerrors),
		     D(ierrors), D(nombuf), D(err_cqe));
	if (D(no_match) != r->cls_sent[CLS_F])
		fail("%s: rx_no_match %" PRIu64 ", class F frames sent %"
		     PRIu64, phase, D(no_match), r->cls_sent[CLS_F]);
	if (rule_hits(rule_r, &hr) == 0 && hr - r->hits_r !=
	    r->cls_sent[CLS_R])
		fail("%s: rss rule counted %" PRIu64 ", class R frames sent %"
		     PRIu64, phase, hr - r->hits_r, r->cls_sent[CLS_R]);
	if (rule_hits(rule_d, &hd) == 0 && hd - r->hits_d !=
	    r->cls_sent[CLS_D])
		fail("%s: drop rule counted %" PRIu64 ", class D frames sent %"
		     PRIu64, phase, hd - r->hits_d, r->cls_sent[CLS_D]);
	if (exact && D(dropped) != r->cls_sent[CLS_D])
		fail("%s: rx_flow_dropped %" PRIu64 ", class D frames sent %"
		     PRIu64, phase, D(dropped), r->cls_sent[CLS_D]);
	if (D(oob) == 0)
		for (c = 0; c < NB_CLS; c++) {
			uint64_t want = c == CLS_D || c == CLS_F ? 0 :
					r->cls_sent[c];

			if (c == CLS_C && !exact)
				continue;	/* some dropped by churned rules */
			if (r->cls_recv[c] != want)
				fail("%s: class %s: %" PRIu64 " received, "
				     "want %" PRIu64, phase, cls_name[c],
				     r->cls_recv[c], want);
		}
#undef D
	sum.missed += a.oob - r->a0.oob;
	sum.dropped += a.no_match - r->a0.no_match + a.dropped -
		       r->a0.dropped;
	sum.sent += r->sent;
	sum.received += recv;
	for (c = 0; c < NB_CLS; c++) {
		sum.cls_sent[c] += r->cls_sent[c];
		sum.cls_recv[c] += r->cls_recv[c];
	}
	return (int)sum.errors == errs ? 0 : -1;
}

/* Send n frames of the mix from frame k on; return how many went. */
static unsigned int
tx_mix(struct run *r, uint32_t k, unsigned int n)
{
	struct rte_mbuf *pkts[BURST];
	enum cls cl[BURST];
	unsigned int i, made;
	uint16_t sent;

	n = RTE_MIN(n, (unsigned int)BURST);
	for (made = 0; made < n; made++) {
		cl[made] = mix[(k + made) % RTE_DIM(mix)];
		pkts[made] = frame_make(cl[made], (k + made) / RTE_DIM(mix));
		if (pkts[made] == NULL)
			break;
	}
	sent = rte_eth_tx_burst(port0, 0, pkts, made);
	for (i = 0; i < sent; i++)
		r->cls_sent[cl[i]]++;
	rte_pktmbuf_free_bulk(pkts + sent, made - sent);
	r->sent += sent;
	return sent;
}

/*
 * After a phase: CHECK_N frames of each class in the mix's proportions,
 * with only the permanent rules on port 1; every frame must come out as
 * its class says.
 */
static int
check_traffic(const char *phase)
{
	uint64_t deadline = now_ms() + DRAIN_MS;
	unsigned int total = CHECK_N * RTE_DIM(mix);
	struct run r;
	uint32_t k = 0;

	if (run_begin(&r) != 0)
		return -1;
	while (k < total && now_ms() < deadline) {
		k += tx_mix(&r, k, total - k);
		rx_poll(r.cls_recv);
	}
	if (k < total)
		fail("%s: sent %" PRIu32 " of %u frames", phase, k, total);
	return run_end(&r, phase, true);
}

/* --- traffic lcore ------------------------------------------------------ */

static volatile int traffic_run;
static struct run traffic;

/*
 * Send the mix and check what comes back until traffic_run drops, keeping
 * at most WINDOW frames in flight: frames the device dropped (read from
 * its counters when the window is full) count as back.
 */
static int
traffic_main(void *arg)
{
	struct run *r = &traffic;
	uint64_t recv = 0, resolved0 = acct_resolved(&r->a0);
	uint64_t drops = 0, iter = 0;
	uint32_t k = 0;
	struct acct a;

	RTE_SET_USED(arg);
	while (traffic_run) {
		if (r->sent - recv - drops < WINDOW)
			k += tx_mix(r, k, BURST);
		else if (acct_read(&a) == 0)
			drops = acct_resolved(&a) - resolved0 -
				(a.ipackets - r->a0.ipackets);
		recv += rx_poll(r->cls_recv);
		if ((++iter & 1023) == 0)
			note_mbufs();
	}
	return 0;
}

/* --- rules -------------------------------------------------------------- */

static const struct rte_flow_action_rss rss_conf = {
	.types = RTE_ETH_RSS_NONFRAG_IPV4_UDP,
	.queue_num = NB_RXQ,
	.queue = (const uint16_t[]){ 0, 1, 2, 3 },
};

/* The permanent rules R and D on port 1. */
static int
perm_rules_create(void)
{
	static const struct rte_flow_attr attr = { .ingress = 1 };
	struct rte_flow_item_ipv4 spec_r = {
		.hdr.dst_addr = RTE_BE32(IP_R) };
	struct rte_flow_item_ipv4 spec_d = {
		.hdr.dst_addr = RTE_BE32(IP_D) };
	static const struct rte_flow_item_ipv4 mask = {
		.hdr.dst_addr = RTE_BE32(UINT32_MAX) };
	struct rte_flow_item pat[] = {
		{ .type = RTE_FLOW_ITEM_TYPE_ETH },
		{ .type = RTE_FLOW_ITEM_TYPE_IPV4, .spec = &spec_r,
		  .mask = &mask },
		{ .type = RTE_FLOW_ITEM_TYPE_UDP },
		{ .type = RTE_FLOW_ITEM_TYPE_END },
	};
	static const struct rte_flow_action_mark mark = { .id = RSS_MARK };
	static const struct rte_flow_action act_r[] = {
		{ .type = RTE_FLOW_ACTION_TYPE_MARK, .conf = &mark },
		{ .type = RTE_FLOW_ACTION_TYPE_COUNT },
		{ .type = RTE_FLOW_ACTION_TYPE_RSS, .conf = &rss_conf },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	static const struct rte_flow_action act_d[] = {
		{ .type = RTE_FLOW_ACTION_TYPE_COUNT },
		{ .type = RTE_FLOW_ACTION_TYPE_DROP },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	struct rte_flow_error err = { 0 };

	rule_r = rte_flow_create(port1, &attr, pat, act_r, &err);
	if (rule_r == NULL) {
		fail("rss rule: %s", err.message != NULL ? err.message : "?");
		return -1;
	}
	pat[1].spec = &spec_d;
	rule_d = rte_flow_create(port1, &attr, pat, act_d, &err);
	if (rule_d == NULL) {
		fail("drop rule: %s", err.message != NULL ? err.message : "?");
		return -1;
	}
	return 0;
}

/*
 * The rule of slot s, generation g, at priority 1:
 *   eth / ipv4 src is SRC_C + s, dst is IP_C & M / udp
 * with M = UINT32_MAX << (g % NB_MASKS), and the action by g % 4: mark
 * s + 1, count, queue s % 4; mark s + 1, rss; drop; count, drop.
 */
static struct rte_flow *
churn_rule(uint32_t s, uint32_t g, struct rte_flow_error *err)
{
	static const struct rte_flow_attr attr = { .ingress = 1,
						   .priority = 1 };
	uint32_t m = UINT32_MAX << (g % NB_MASKS);
	struct rte_flow_item_ipv4 spec = {
		.hdr.src_addr = rte_cpu_to_be_32(SRC_C + s),
		.hdr.dst_addr = rte_cpu_to_be_32(IP_C & m),
	};
	struct rte_flow_item_ipv4 mask = {
		.hdr.src_addr = RTE_BE32(UINT32_MAX),
		.hdr.dst_addr = rte_cpu_to_be_32(m),
	};
	const struct rte_flow_item pat[] = {
		{ .type = RTE_FLOW_ITEM_TYPE_ETH },
		{ .type = RTE_FLOW_ITEM_TYPE_IPV4, .spec = &spec,
		  .mask = &mask },
		{ .type = RTE_FLOW_ITEM_TYPE_UDP },
		{ .type = RTE_FLOW_ITEM_TYPE_END },
	};
	struct rte_flow_action_mark mark = { .id = s + 1 };
	struct rte_flow_action_queue queue = { .index = s % NB_RXQ };
	struct rte_flow_action act[4] = { 0 };

	switch (g % 4) {
	case 0:
		act[0].type = RTE_FLOW_ACTION_TYPE_MARK;
		act[0].conf = &mark;
		act[1].type = RTE_FLOW_ACTION_TYPE_COUNT;
		act[2].type = RTE_FLOW_ACTION_TYPE_QUEUE;
		act[2].conf = &queue;
		break;
	case 1:
		act[0].type = RTE_FLOW_ACTION_TYPE_MARK;
		act[0].conf = &mark;
		act[1].type = RTE_FLOW_ACTION_TYPE_RSS;
		act[1].conf = &rss_conf;
		break;
	case 2:
		act[0].type = RTE_FLOW_ACTION_TYPE_DROP;
		break;
	default:
		act[0].type = RTE_FLOW_ACTION_TYPE_COUNT;
		act[1].type = RTE_FLOW_ACTION_TYPE_DROP;
		break;
	}
	act[3].type = RTE_FLOW_ACTION_TYPE_END;
	return rte_flow_create(port1, &attr, pat, act, err);
}

static bool
churn_counted(uint32_t g)
{
	return g % 4 == 0 || g % 4 == 3;
}

/* Destroy the rule of slot s (reading its counter first when it has one). */
static int
slot_clear(uint32_t s)
{
	struct rte_flow_error err = { 0 };
	uint64_t hits;

	if (slots[s] == NULL)
		return 0;
	if (churn_counted(gens[s]) && s % 16 == 0) {
		if (rule_hits(slots[s], &hits) != 0)
			return -1;
		sum.queried++;
	}
	if (rte_flow_destroy(port1, slots[s], &err) != 0) {
		fail("destroy slot %" PRIu32 ": %s", s,
		     err.message != NULL ? err.message : "?");
		return -1;
	}
	slots[s] = NULL;
	gens[s]++;
	sum.destroyed++;
	return 0;
}

static int
slot_fill(uint32_t s)
{
	struct rte_flow_error err = { 0 };

	slots[s] = churn_rule(s, gens[s], &err);
	if (slots[s] == NULL) {
		fail("create slot %" PRIu32 " gen %" PRIu32 ": %s", s,
		     gens[s], err.message != NULL ? err.message : "?");
		return -1;
	}
	sum.created++;
	return 0;
}

static int
slots_clear(uint32_t n)
{
	uint32_t s;

	for (s = 0; s < n; s++)
		if (slot_clear(s) != 0)
			return -1;
	return 0;
}

/* Replace slot rules in turn until ms passed. */
static int
churn(uint64_t ms)
{
	uint64_t end = now_ms() + ms;
	uint32_t s = 0, i;

	while (now_ms() < end) {
		for (i = 0; i < 64; i++) {
			if (slot_clear(s) != 0 || slot_fill(s) != 0)
				return -1;
			s = s + 1 == opt_rules ? 0 : s + 1;
		}
	}
	return 0;
}

/* --- ports -------------------------------------------------------------- */

static int
port_setup(uint16_t port)
{
	struct rte_eth_conf conf = { 0 };
	uint16_t q;
	int ret;

	ret = rte_eth_dev_configure(port, NB_RXQ, 1, &conf);
	for (q = 0; ret == 0 && q < NB_RXQ; q++)
		ret = rte_eth_rx_queue_setup(port, q, NB_RXD, SOCKET_ID_ANY,
					     NULL, mp);
	if (ret == 0)
		ret = rte_eth_tx_queue_setup(port, 0, NB_TXD, SOCKET_ID_ANY,
					     NULL);
	if (ret == 0)
		ret = rte_eth_dev_start(port);
	if (ret != 0)
		fail("port %u setup: %s", port, strerror(-ret));
	return ret;
}

/* Wait until both links are up (the other end of the wire is there). */
static int
links_up(void)
{
	uint64_t deadline = now_ms() + DRAIN_MS;
	struct rte_eth_link l0, l1;

	do {
		if (rte_eth_link_get_nowait(port0, &l0) == 0 &&
		    rte_eth_link_get_nowait(port1, &l1) == 0 &&
		    l0.link_status && l1.link_status)
			return 0;
		rte_delay_ms(1);
	} while (now_ms() < deadline);
	fail("links not up");
	return -1;
}

static int
vdev_remove(const char *name)
{
	uint16_t port;
	int ret;

	if (strcmp(name, "net_vbr1") == 0) {
		rule_r = NULL;	/* the port's close takes its rules */
		rule_d = NULL;
	}
	ret = rte_eal_hotplug_remove("vdev", name);
	if (ret != 0) {
		fail("hotplug remove %s: %s", name, strerror(-ret));
		return -1;
	}
	if (rte_eth_dev_get_port_by_name(name, &port) == 0) {
		fail("%s still has port %u after its removal", name, port);
		return -1;
	}
	return 0;
}

/* Probe the vdev name again; set it up and start it. */
static int
vdev_add(const char *name)
{
	char args[128];
	uint16_t port;
	int ret;

	snprintf(args, sizeof(args), "wire=pair:%s%s", cable, progress_arg);
	ret = rte_eal_hotplug_add("vdev", name, args);
	if (ret != 0) {
		fail("hotplug add %s,%s: %s", name, args, strerror(-ret));
		return -1;
	}
	if (rte_eth_dev_get_port_by_name(name, &port) != 0) {
		fail("%s: no port after the probe", name);
		return -1;
	}
	if (strcmp(name, "net_vbr1") == 0)
		port1 = port;
	else
		port0 = port;
	if (port_setup(port) != 0)
		return -1;
	if (port == port1) {
		rte_eth_macaddr_get(port1, &mac1);
		if (xstat_ids_get() != 0 || perm_rules_create() != 0)
			return -1;
	}
	sum.hotplugs++;
	return 0;
}

/*
 * Remove both ports, first then second (the first one's peer stays alone
 * on the wire for a while, started, with its queues and rules): no mbuf
 * may be in use then. Probe them again in the same order and start them.
 */
static int
hotplug(const char *first, const char *second)
{
	unsigned int n;

	if (vdev_remove(first) != 0 || vdev_remove(second) != 0)
		return -1;
	n = rte_mempool_in_use_count(mp);
	if (n != 0)
		fail("%u mbufs in use with both ports removed", n);
	if (vdev_add(first) != 0 || vdev_add(second) != 0)
		return -1;
	return links_up();
}

/*
 * Stop both ports: the Tx queues free what they hold, the Rx queues keep
 * their posted buffers (NB_RXD each) and the fresh ones of their refill
 * stash (up to RX_STASH each, how many depends on where the last refill
 * left it), and nothing else may be in use. Create rules on the stopped
 * port 1, start both, destroy those rules.
 */
static int
stop_start(void)
{
	const unsigned int posted = 2 * NB_RXQ * NB_RXD;
	unsigned int n;
	uint32_t s;
	int ret;

	if (rte_eth_dev_stop(port0) != 0 || rte_eth_dev_stop(port1) != 0) {
		fail("port stop failed");
		return -1;
	}
	n = rte_mempool_in_use_count(mp);
	if (n < posted || n > posted + 2 * NB_RXQ * RX_STASH)
		fail("%u mbufs in use with the ports stopped, want %u posted "
		     "+ at most %u in the refill stashes", n, posted,
		     2 * NB_RXQ * RX_STASH);
	for (s = 0; s < RTE_MIN(opt_rules, (uint32_t)STOPPED_RULES); s++)
		if (slot_fill(s) != 0)
			return -1;
	ret = rte_eth_dev_start(port1);
	if (ret == 0)
		ret = rte_eth_dev_start(port0);
	if (ret != 0) {
		fail("port start: %s", strerror(-ret));
		return -1;
	}
	sum.restarts++;
	if (slots_clear(RTE_MIN(opt_rules, (uint32_t)STOPPED_RULES)) != 0)
		return -1;
	return links_up();
}

/* --- main --------------------------------------------------------------- */

/* One cycle; return 0, or -1 when the run cannot go on. */
static int
cycle(uint64_t n)
{
	const char *hp[2] = { "net_vbr0", "net_vbr1" };
	char phase[128];
	int ret;

	if (run_begin(&traffic) != 0)
		return -1;
	traffic_run = 1;
	ret = rte_eal_remote_launch(traffic_main, NULL,
				    rte_get_next_lcore(-1, 1, 0));
	if (ret != 0) {
		fail("launch the traffic lcore: %s", strerror(-ret));
		return -1;
	}
	ret = churn(opt_churn_ms);
	traffic_run = 0;
	rte_eal_mp_wait_lcore();
	if (ret != 0)
		return -1;
	if (slots_clear(opt_rules) != 0)
		return -1;
	snprintf(phase, sizeof(phase), "cycle %" PRIu64 " churn", n);
	run_end(&traffic, phase, false);
	snprintf(phase, sizeof(phase), "cycle %" PRIu64 " after churn", n);
	check_traffic(phase);

	if (stop_start() != 0)
		return -1;
	snprintf(phase, sizeof(phase), "cycle %" PRIu64 " after stop/start",
		 n);
	check_traffic(phase);

	if (hotplug(hp[n % 2], hp[!(n % 2)]) != 0)
		return -1;
	snprintf(phase, sizeof(phase), "cycle %" PRIu64 " after hotplug, %s "
		 "first", n, hp[n % 2]);
	check_traffic(phase);
	note_mbufs();
	sum.cycles++;
	return 0;
}

static void
usage(void)
{
	fprintf(stderr, "usage: soak [--seconds N] [--rules N] "
		"[--churn-ms MS] [--pmd PATH] [--verbose]\n");
}

static int
parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "rules", required_argument, NULL, 'r' },
		{ "churn-ms", required_argument, NULL, 'c' },
		{ "pmd", required_argument, NULL, 'p' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			opt_seconds = strtod(optarg, &end);
			if (*end != '\0' || opt_seconds <= 0)
				return -1;
			break;
		case 'r':
			opt_rules = strtoul(optarg, &end, 0);
			if (*end != '\0' || opt_rules < 1 ||
			    opt_rules > (1u << 16))
				return -1;
			break;
		case 'c':
			opt_churn_ms = strtoul(optarg, &end, 0);
			if (*end != '\0' || opt_churn_ms < 1)
				return -1;
			break;
		case 'p':
			opt_pmd = optarg;
			break;
		case 'v':
			opt_verbose = true;
			break;
		default:
			return -1;
		}
	}
	return optind == argc ? 0 : -1;
}

static int
eal_start(const char *prog)
{
	static char prefix[96], vdev0[160], vdev1[160];
	const char *model = getenv("VBR_TEST_PROGRESS");
	char *eal[24];
	int n = 0;

	/*
	 * The progress model of the test run (devtools/test.sh runs the
	 * suites once per model): progress=<model> on both ports, and for
	 * service a service lcore (2) beside lcores 0 and 1, on any CPU.
	 */
	if (model != NULL && model[0] != '\0')
		snprintf(progress_arg, sizeof(progress_arg), ",progress=%s",
			 model);
	snprintf(cable, sizeof(cable), "soak%d", (int)getpid());
	snprintf(prefix, sizeof(prefix), "--file-prefix=%s", cable);
	snprintf(vdev0, sizeof(vdev0), "net_vbr0,wire=pair:%s%s", cable,
		 progress_arg);
	snprintf(vdev1, sizeof(vdev1), "net_vbr1,wire=pair:%s%s", cable,
		 progress_arg);
	eal[n++] = (char *)(uintptr_t)prog;
	if (model != NULL && strcmp(model, "service") == 0) {
		printf("progress model: service (VBR_TEST_PROGRESS)\n");
		eal[n++] = (char *)(uintptr_t)"--lcores";
		eal[n++] = (char *)(uintptr_t)"0@0,1@1,2@(0-1)";
		eal[n++] = (char *)(uintptr_t)"-S";
		eal[n++] = (char *)(uintptr_t)"2";
	} else {
		if (model != NULL && model[0] != '\0')
			printf("progress model: %s (VBR_TEST_PROGRESS)\n",
			       model);
		eal[n++] = (char *)(uintptr_t)"-l";
		eal[n++] = (char *)(uintptr_t)"0,1";
	}
	eal[n++] = (char *)(uintptr_t)"--no-huge";
	eal[n++] = (char *)(uintptr_t)"-m";
	eal[n++] = (char *)(uintptr_t)"256";
	eal[n++] = (char *)(uintptr_t)"--no-shconf";
	eal[n++] = prefix;
	eal[n++] = (char *)(uintptr_t)"--no-pci";
	eal[n++] = (char *)(uintptr_t)"--log-level=pmd.net.vbr:warning";
	eal[n++] = (char *)(uintptr_t)"-d";
	eal[n++] = (char *)(uintptr_t)opt_pmd;
	eal[n++] = (char *)(uintptr_t)"--vdev";
	eal[n++] = vdev0;
	eal[n++] = (char *)(uintptr_t)"--vdev";
	eal[n++] = vdev1;
	eal[n] = NULL;
	if (rte_eal_init(n, eal) < 0) {
		fprintf(stderr, "soak: EAL init: %s\n",
			rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

static void
print_res(const char *what, const struct res *r)
{
	printf("%-9s fds %d, C heap %" PRIu64 " KiB, DPDK heap %" PRIu64
	       " KiB, mapped %" PRIu64 " MiB, resident %" PRIu64 " MiB\n",
	       what, r->fds, r->heap >> 10, r->dpdk_heap >> 10, r->vm >> 20,
	       r->rss >> 20);
}

static void
summary(double secs, const struct res *base, const struct res *fin,
	const struct res *peak)
{
	unsigned int c;

	printf("soak summary\n");
	printf("seconds   %.1f\n", secs);
	printf("cycles    %" PRIu64 " (restarts %" PRIu64 ", port hotplugs %"
	       PRIu64 ")\n", sum.cycles, sum.restarts, sum.hotplugs);
	printf("rules     created %" PRIu64 ", destroyed %" PRIu64
	       ", counters read %" PRIu64 " (%" PRIu32 " slots)\n",
	       sum.created, sum.destroyed, sum.queried, opt_rules);
	printf("frames    sent %" PRIu64 ", received %" PRIu64 ", dropped "
	       "by rules or no match %" PRIu64 ", out of buffer %" PRIu64
	       "\n", sum.sent, sum.received, sum.dropped, sum.missed);
	printf("classes  ");
	for (c = 0; c < NB_CLS; c++)
		printf(" %s %" PRIu64 "/%" PRIu64, cls_name[c],
		       sum.cls_recv[c], sum.cls_sent[c]);
	printf(" (received/sent)\n");
	printf("rss       queues");
	for (c = 0; c < NB_RXQ; c++)
		printf(" %" PRIu64, sum.rss_queue[c]);
	printf("\n");
	printf("mbufs     peak %u in use\n", sum.peak_mbufs);
	print_res("baseline", base);
	print_res("peak", peak);
	print_res("final", fin);
	printf("errors    %" PRIu64 "\n", sum.errors);
}

int
main(int argc, char **argv)
{
	struct res base, r, peak;
	uint64_t t0, end, n;
	double secs;

	if (parse_args(argc, argv) != 0) {
		usage();
		return 2;
	}
	if (eal_start(argv[0]) != 0)
		return 1;
	if (rte_lcore_count() < 2) {
		fprintf(stderr, "soak: two lcores needed\n");
		return 1;
	}
	slots = calloc(opt_rules, sizeof(*slots));
	gens = calloc(opt_rules, sizeof(*gens));
	mp = rte_pktmbuf_pool_create("soak", NB_MBUF, 256, 0,
				     RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (slots == NULL || gens == NULL || mp == NULL) {
		fprintf(stderr, "soak: out of memory\n");
		return 1;
	}
	if (rte_eth_dev_get_port_by_name("net_vbr0", &port0) != 0 ||
	    rte_eth_dev_get_port_by_name("net_vbr1", &port1) != 0 ||
	    port_setup(port0) != 0 || port_setup(port1) != 0)
		goto out;
	rte_eth_macaddr_get(port1, &mac1);
	if (xstat_ids_get() != 0 || perm_rules_create() != 0 ||
	    links_up() != 0 ||
	    check_traffic("start") != 0)
		goto out;

	t0 = now_ms();
	end = t0 + (uint64_t)(opt_seconds * 1000);
	memset(&base, 0, sizeof(base));
	memset(&peak, 0, sizeof(peak));
	for (n = 1; n == 1 || now_ms() < end; n++) {
		if (cycle(n) != 0)
			break;
		res_read(&r, n == 1 ? -1 : base.fds);
		if (n == 1)
			base = r;	/* the first cycle sets the baseline */
		else
			res_check("after a cycle", &base, &r);
		peak.fds = RTE_MAX(peak.fds, r.fds);
		peak.heap = RTE_MAX(peak.heap, r.heap);
		peak.dpdk_heap = RTE_MAX(peak.dpdk_heap, r.dpdk_heap);
		peak.vm = RTE_MAX(peak.vm, r.vm);
		peak.rss = RTE_MAX(peak.rss, r.rss);
		if (opt_verbose) {
			char what[32];

			snprintf(what, sizeof(what), "cycle %" PRIu64, n);
			print_res(what, &r);
		}
		if (sum.errors > 20) {
			printf("soak: too many errors, stopping\n");
			break;
		}
	}
	secs = (now_ms() - t0) / 1000.0;
	res_read(&r, base.fds);
	res_check("at the end", &base, &r);
	summary(secs, &base, &r, &peak);
out:
	if (rte_eth_dev_is_valid_port(port0)) {
		rte_eth_dev_stop(port0);
		rte_eth_dev_close(port0);
	}
	if (rte_eth_dev_is_valid_port(port1)) {
		rte_eth_dev_stop(port1);
		rte_eth_dev_close(port1);
	}
	if (mp != NULL) {
		sum.final_mbufs = rte_mempool_in_use_count(mp);
		if (sum.final_mbufs != 0)
			fail("%u mbufs in use after both ports closed",
			     sum.final_mbufs);
		printf("mbufs     %u in use after close\n", sum.final_mbufs);
	}
	rte_mempool_free(mp);
	free(slots);
	free(gens);
	rte_eal_cleanup();
	printf("soak: %s, %" PRIu64 " errors\n", sum.errors == 0 ? "PASS" :
	       "FAIL", sum.errors);
	return sum.errors == 0 ? 0 : 1;
}
