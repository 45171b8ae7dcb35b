/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * rte_flow at scale on two ports joined by a wire (vbr over a swverbs pair
 * wire, or any two ports that see each other's frames): for each case
 * (rules, masks), create the rules on port 1, forward 64-byte UDP frames
 * from port 0 to port 1 for a fixed time, destroy the rules, and print one
 * table row:
 *
 *   rules masks pmd-ins/s pmd-B/r start/s ins/s del/s B/rule Mpps hit%
 *
 * pmd-ins/s, pmd-B/r: creation rate and resident memory per rule with port
 * 1 stopped: the rules are only kept by the PMD, what the PMD side costs
 * alone; start/s: rules per second the port start then puts on the device;
 * ins/s and del/s: with port 1 started, the device included; B/rule:
 * growth of the process's resident memory per rule while started (PMD and
 * device);
 * Mpps: frames received on port 1 per second; hit%: frames that carried the
 * rule's MARK (each rule marks, so a miss is a frame the rules did not
 * steer).
 *
 * Rates are timed over at least MIN_CREATE_MS of creation: when making the
 * n rules took less, they are destroyed and made again (the destroys timed
 * too) until it has, so that a case of one rule times thousands of
 * rte_flow_create() calls, not one. ins/s is all the rules made over all
 * the time spent making them, del/s all the rules destroyed (the final
 * destroy included) over all the time spent destroying, pmd-ins/s as
 * ins/s with the port stopped; start/s is one port start. The rules of the
 * last round are the ones the port starts with and forwarding uses.
 * pmd-B/r and B/rule are the resident growth over the first round only
 * (later rounds reuse what it freed), with the heap trimmed just before
 * (malloc_trim()), so that memory an earlier case or run freed does not
 * hide the growth; what the device keeps in its own pools still may, so
 * counts of a few rules read 0.
 *
 * Rule i of a case with m masks, in subtable k = i % m:
 *   eth / ipv4 src is S(i) dst is D & M(k) (mask M(k)) / udp / end
 *   actions mark id i / queue index 0 / end
 * with S(i) = 10.0.0.0 + i, M(k) = 255.255.255.255 << k: m distinct masks,
 * and every frame, with dst D and one of the rules' sources, matches one
 * rule. Frames cycle over the sources of up to --flows rules spread over
 * the whole set, so with 1M rules lookups touch the whole table; --flows 1
 * sends every frame to rule 0 whatever the number of rules (equal traffic).
 * Forwarding is a closed loop, as testpmd's io mode with tx_first: a window
 * of frames circulates, each received frame is sent again, so the bench's
 * own core does no frame building and never overruns the Rx ring. Run the
 * swverbs engine on another core than this lcore (devarg engine_cpu=N).
 * BENCH_DEBUG=1 in the environment prints the Rx port's counters per case.
 *
 * --count adds a COUNT action to every rule; the row then ends with qry/s:
 * rte_flow_query(COUNT) calls per second over the case's rules, round
 * robin, for a second after the forwarding, and checks that the rules
 * counted every frame received ("-" without --count).
 *
 * --ab N (A/B) runs each case 2N times in a row in this one process,
 * without and with COUNT alternately, in the order A B B A A B B A ...
 * (A uncounted, B counted: neither always goes first), one row per run;
 * the counted rows are those with a qry/s figure, and pair i of a case is
 * its i-th uncounted and i-th counted row. The two variants differ only
 * by the COUNT action. Two runs side by side in one process compare
 * better than runs of two processes, on a machine whose processes land on
 * different speeds; the speed still changes now and then within a
 * process, hence several pairs and the median of their ratios
 * (devtools/bench-count.sh). --ab overrides --count; --ab 0 is as without
 * it. --slices MS adds, after a case's A/B runs, the datapath of both
 * variants measured in alternating slices of MS milliseconds on one table
 * (see run_slices()). --spread-slices N, after the other cases, puts N
 * rules on the port and compares, in alternating slices (--slices MS, 20
 * by default) on that one table, frames all on rule 0 with frames spread
 * over --flows of the N rules (see run_spread_slices()). --meter-slices N
 * compares N rules without and N with a meter each the same way (see
 * run_meter_slices()). --frag-slices N compares N mark rules with N
 * that also say "not a fragment", which a device without fragment matches
 * (the mlx5 profile) checks in the Rx burst (see run_frag_slices()).
 * --csum-slices LEN compares Rx without and with the
 * checksum offloads (vbr verifies them in software) on two more ports,
 * the same way, LEN-byte frames (see run_csum_slices()).
 *
 * usage: bench-flow-rules <EAL args> -- [--rules N,N..] [--masks M,M..]
 *        [--mask-rules N] [--seconds S] [--flows F] [--no-stopped]
 *        [--count] [--ab N [--slices MS]] [--spread-slices N]
 *        [--meter-slices N] [--frag-slices N] [--csum-slices LEN]
 * Cases: each --rules count with one mask, then each --masks count with
 * --mask-rules rules. Exit 0 when every case ran; a case that cannot
 * create its rules prints the reason in its row (with [A] or [B] after
 * the counts under --ab).
 */

#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_flow.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_mtr.h>
#include <rte_udp.h>

#define BURST 32
#define NB_MBUF 16384
#define WINDOW 512	/* frames in flight */
#define MAX_CASES 16
#define SRC_BASE RTE_IPV4(10, 0, 0, 0)
#define DST_ADDR RTE_IPV4(192, 168, 255, 255)
#define MIN_CREATE_MS 20	/* least creation time a rate is taken over */

static struct rte_mempool *mp;
static uint16_t tx_port, rx_port;
static struct rte_ether_addr rx_mac;
static struct rte_flow **flows;

static uint32_t rule_counts[MAX_CASES] = { 1, 1000, 100000, 1000000 };
static unsigned int nb_rule_counts = 4;
static uint32_t mask_counts[MAX_CASES] = { 1, 8, 32 };
static unsigned int nb_mask_counts = 3;
static uint32_t mask_rules = 100000;
static double seconds = 2.0;
static uint32_t nb_flows = 65536;
static int with_stopped = 1;
static int with_count;
static uint32_t ab_pairs;	/* --ab: pairs of runs per case, 0: one run */
static uint32_t slices_ms;	/* --slices: slice length, 0: none */
static uint32_t spread_rules;	/* --spread-slices: rules, 0: none */
static uint32_t meter_rules;	/* --meter-slices: rules, 0: none */
static uint32_t frag_rules;	/* --frag-slices: rules, 0: none */
static uint32_t csum_len;	/* --csum-slices: frame length, 0: none */
static uint32_t frame_len = 60;	/* frames frame_fill() builds, no FCS */

/* What rule_create() puts in a rule's actions. */
enum rule_kind {
	RULE_MARK,	/* mark id i / queue 0 (every case but below) */
	RULE_PLAIN,	/* queue 0: --meter-slices' rules without a meter */
	RULE_METER,	/* meter rule_mtr: --meter-slices' metered rules */
	RULE_NOFRAG,	/* as RULE_MARK, ipv4 not a fragment (--frag-slices) */
};
static enum rule_kind rule_kind;
static uint32_t rule_mtr;

/* Creation timed over rounds (rules_create_timed()). */
struct create_timing {
	uint64_t made;		/* rules created, all rounds */
	uint64_t made_tsc;	/* TSC cycles spent creating them */
	uint64_t gone;		/* rules destroyed between rounds */
	uint64_t gone_tsc;	/* TSC cycles spent destroying them */
	int64_t mem;		/* resident growth over the first round */
};

static unsigned int
parse_list(const char *s, uint32_t *out)
{
	unsigned int n = 0;
	char *end;

	while (*s != '\0' && n < MAX_CASES) {
		out[n++] = strtoul(s, &end, 0);
		if (*end != ',')
			break;
		s = end + 1;
	}
	return n;
}

static int
parse_args(int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--no-stopped") == 0) {
			with_stopped = 0;
			continue;
		}
		if (strcmp(a, "--count") == 0) {
			with_count = 1;
			continue;
		}
		if (v == NULL)
			return -1;
		i++;
		if (strcmp(a, "--ab") == 0)
			ab_pairs = strtoul(v, NULL, 0);
		else if (strcmp(a, "--slices") == 0)
			slices_ms = strtoul(v, NULL, 0);
		else if (strcmp(a, "--spread-slices") == 0)
			spread_rules = strtoul(v, NULL, 0);
		else if (strcmp(a, "--meter-slices") == 0)
			meter_rules = strtoul(v, NULL, 0);
		else if (strcmp(a, "--frag-slices") == 0)
			frag_rules = strtoul(v, NULL, 0);
		else if (strcmp(a, "--csum-slices") == 0)
			csum_len = strtoul(v, NULL, 0);
		else if (strcmp(a, "--rules") == 0)
			nb_rule_counts = parse_list(v, rule_counts);
		else if (strcmp(a, "--masks") == 0)
			nb_mask_counts = parse_list(v, mask_counts);
		else if (strcmp(a, "--mask-rules") == 0)
			mask_rules = strtoul(v, NULL, 0);
		else if (strcmp(a, "--seconds") == 0)
			seconds = strtod(v, NULL);
		else if (strcmp(a, "--flows") == 0)
			nb_flows = strtoul(v, NULL, 0);
		else
			return -1;
	}
	if (csum_len != 0 && (csum_len < 60 || csum_len > 1514))
		return -1;
	return nb_flows == 0 ? -1 : 0;
}

/* Configure and start a port, its Rx offloads rx_ol. */
static int
port_init(uint16_t port, uint64_t rx_ol)
{
	struct rte_eth_conf conf = { .rxmode.offloads = rx_ol };
	int ret;

	ret = rte_eth_dev_configure(port, 1, 1, &conf);
	if (ret == 0)
		ret = rte_eth_rx_queue_setup(port, 0, 1024, SOCKET_ID_ANY,
					     NULL, mp);
	if (ret == 0)
		ret = rte_eth_tx_queue_setup(port, 0, 1024, SOCKET_ID_ANY,
					     NULL);
	if (ret == 0)
		ret = rte_eth_dev_start(port);
	return ret;
}

/* Resident set size of the process, bytes. */
static uint64_t
rss_bytes(void)
{
	unsigned long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f == NULL)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &resident) != 2)
		resident = 0;
	fclose(f);
	return (uint64_t)resident * sysconf(_SC_PAGESIZE);
}

static struct rte_flow *
rule_create(uint32_t i, uint32_t masks, struct rte_flow_error *err)
{
	static const struct rte_flow_attr attr = { .ingress = 1 };
	uint32_t mask = UINT32_MAX << (i % masks);
	struct rte_flow_item_ipv4 spec = {
		.hdr.src_addr = rte_cpu_to_be_32(SRC_BASE + i),
		.hdr.dst_addr = rte_cpu_to_be_32(DST_ADDR & mask),
	};
	struct rte_flow_item_ipv4 msk = {
		.hdr.src_addr = RTE_BE32(UINT32_MAX),
		.hdr.dst_addr = rte_cpu_to_be_32(mask),
	};
	const struct rte_flow_item pattern[] = {
		{ .type = RTE_FLOW_ITEM_TYPE_ETH },
		{ .type = RTE_FLOW_ITEM_TYPE_IPV4, .spec = &spec, .mask = &msk },
		{ .type = RTE_FLOW_ITEM_TYPE_UDP },
		{ .type = RTE_FLOW_ITEM_TYPE_END },
	};
	struct rte_flow_action_mark mark = { .id = i };
	struct rte_flow_action_meter meter = { .mtr_id = rule_mtr };
	static const struct rte_flow_action_queue queue = { .index = 0 };
	struct rte_flow_action actions[] = {
		{ .type = RTE_FLOW_ACTION_TYPE_MARK, .conf = &mark },
		{ .type = RTE_FLOW_ACTION_TYPE_QUEUE, .conf = &queue },
		{ .type = with_count ? RTE_FLOW_ACTION_TYPE_COUNT :
			  RTE_FLOW_ACTION_TYPE_END },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	const struct rte_flow_action *a = actions;

	if (rule_kind == RULE_NOFRAG)
		msk.hdr.fragment_offset = RTE_BE16(0x3fff);	/* spec 0 */
	if (rule_kind == RULE_PLAIN) {
		a = &actions[1];	/* queue 0 */
	} else if (rule_kind == RULE_METER) {
		a = &actions[1];	/* meter, its policy's queue */
		actions[1] = (struct rte_flow_action){
			.type = RTE_FLOW_ACTION_TYPE_METER, .conf = &meter };
	}
	return rte_flow_create(rx_port, &attr, pattern, a, err);
}

/* Create n rules; return how many were made, err set when not all. */
static uint32_t
rules_create(uint32_t n, uint32_t masks, struct rte_flow_error *err)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		flows[i] = rule_create(i, masks, err);
		if (flows[i] == NULL)
			break;
	}
	return i;
}

static void
rules_destroy(uint32_t n)
{
	struct rte_flow_error err;
	uint32_t i;

	for (i = 0; i < n; i++)
		if (rte_flow_destroy(rx_port, flows[i], &err) != 0)
			printf("# destroy %" PRIu32 ": %s\n", i,
			       err.message != NULL ? err.message : "?");
}

/*
 * Create the n rules and time it; while the creation time so far is under
 * MIN_CREATE_MS, destroy them and create them again. Return how many the
 * last round made (n, or fewer with err set); those rules stay. *t: the
 * rules made and destroyed over all rounds, the cycles each took, and the
 * resident growth over the first round.
 */
static uint32_t
rules_create_timed(uint32_t n, uint32_t masks, struct create_timing *t,
		   struct rte_flow_error *err)
{
	uint64_t min = rte_get_tsc_hz() / 1000 * MIN_CREATE_MS;
	uint64_t t0, t1, m0;
	uint32_t made;

	memset(t, 0, sizeof(*t));
	malloc_trim(0);
	m0 = rss_bytes();
	t0 = rte_rdtsc();
	made = rules_create(n, masks, err);
	t1 = rte_rdtsc();
	t->mem = (int64_t)(rss_bytes() - m0);
	t->made = made;
	t->made_tsc = t1 - t0;
	while (n != 0 && made == n && t->made_tsc < min) {
		t0 = rte_rdtsc();
		rules_destroy(n);
		t1 = rte_rdtsc();
		t->gone += n;
		t->gone_tsc += t1 - t0;
		t0 = rte_rdtsc();
		made = rules_create(n, masks, err);
		t1 = rte_rdtsc();
		t->made += made;
		t->made_tsc += t1 - t0;
	}
	return made;
}

/* An IPv4 UDP frame of frame_len bytes, its checksums right. */
static void
frame_fill(struct rte_mbuf *m, uint32_t src)
{
	struct rte_ether_hdr *eh;
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *udp;

	eh = (struct rte_ether_hdr *)rte_pktmbuf_append(m, frame_len);
	if (eh == NULL)
		return;
	memset(eh, 0, frame_len);
	eh->dst_addr = rx_mac;
	eh->src_addr.addr_bytes[0] = 0x02;
	eh->ether_type = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	ip = (struct rte_ipv4_hdr *)(eh + 1);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16(frame_len - sizeof(*eh));
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = rte_cpu_to_be_32(src);
	ip->dst_addr = RTE_BE32(DST_ADDR);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp = (struct rte_udp_hdr *)(ip + 1);
	udp->src_port = RTE_BE16(1024);
	udp->dst_port = RTE_BE16(4000);
	udp->dgram_len = rte_cpu_to_be_16(frame_len - sizeof(*eh) -
					  sizeof(*ip));
	udp->dgram_cksum = rte_ipv4_udptcp_cksum(ip, udp);
}

/* Point a frame built by frame_fill() at another source (no checksum:
 * nothing on the path checks it, and the bench measures the device).
 */
static inline void
frame_src(struct rte_mbuf *m, uint32_t src)
{
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m,
		struct rte_ipv4_hdr *, sizeof(struct rte_ether_hdr));

	ip->src_addr = rte_cpu_to_be_32(src);
}

/* Forwarding state, kept across the slices of run_slices(). */
struct fwd {
	uint64_t sent;		/* frames sent */
	uint64_t got;		/* frames received */
	uint64_t marked;	/* of them, with a MARK */
	uint64_t over;		/* of them, with a MARK of mark_min or more */
	uint32_t mark_min;
	uint64_t from;		/* of them, from source src_min or later */
	uint32_t src_min;	/* 0: not looked at */
	uint64_t l4_good;	/* of them, RTE_MBUF_F_RX_L4_CKSUM_GOOD */
	uint32_t f;		/* next flow */
};

/* Tally received frames' marks and make them plain again. */
static void
fwd_tally(struct fwd *s, struct rte_mbuf **pkts, uint16_t nb)
{
	uint16_t i;

	for (i = 0; i < nb; i++) {
		if (pkts[i]->ol_flags & RTE_MBUF_F_RX_FDIR_ID) {
			s->marked++;
			s->over += pkts[i]->hash.fdir.hi >= s->mark_min;
		}
		s->l4_good += (pkts[i]->ol_flags &
			       RTE_MBUF_F_RX_L4_CKSUM_MASK) ==
			      RTE_MBUF_F_RX_L4_CKSUM_GOOD;
		pkts[i]->ol_flags = 0;
	}
	if (s->src_min != 0)
		for (i = 0; i < nb; i++)
			s->from += rte_be_to_cpu_32(rte_pktmbuf_mtod_offset(
				pkts[i], struct rte_ipv4_hdr *,
				sizeof(struct rte_ether_hdr))->src_addr) >=
				s->src_min;
	s->got += nb;
}

/*
 * Forward until TSC end, as testpmd's io mode with tx_first: WINDOW frames
 * circulate, each received frame is sent again at once (with the next
 * source), so the window never overruns the Rx ring and no cycle goes to
 * building or freeing frames: what is measured is the port pair and the
 * device. Frames cycle over nb_flows sources spread over the n rules from
 * rule first on. Return the TSC cycles it ran.
 */
static uint64_t
fwd_until(struct fwd *s, uint32_t first, uint32_t n, uint64_t end)
{
	struct rte_mbuf *pkts[BURST * 2];
	uint32_t flows_used = RTE_MAX(RTE_MIN(n, nb_flows), 1u);
	uint32_t stride = RTE_MAX(n / flows_used, 1u);
	uint32_t base = SRC_BASE + first;
	uint64_t start = rte_rdtsc(), now = start;
	uint16_t i, nb_tx, nb_rx;

	if (s->f >= flows_used)
		s->f = 0;
	while (now < end) {
		/* Top the window up (at start, and after any loss). */
		if (s->sent - s->got < WINDOW &&
		    rte_pktmbuf_alloc_bulk(mp, pkts, BURST) == 0) {
			for (i = 0; i < BURST; i++) {
				frame_fill(pkts[i], base + s->f * stride);
				s->f = s->f + 1 == flows_used ? 0 : s->f + 1;
			}
			nb_tx = rte_eth_tx_burst(tx_port, 0, pkts, BURST);
			if (nb_tx < BURST)
				rte_pktmbuf_free_bulk(pkts + nb_tx,
						      BURST - nb_tx);
			s->sent += nb_tx;
		}
		nb_rx = rte_eth_rx_burst(rx_port, 0, pkts, RTE_DIM(pkts));
		fwd_tally(s, pkts, nb_rx);
		for (i = 0; i < nb_rx; i++) {
			frame_src(pkts[i], base + s->f * stride);
			s->f = s->f + 1 == flows_used ? 0 : s->f + 1;
		}
		nb_tx = nb_rx == 0 ? 0 :
			rte_eth_tx_burst(tx_port, 0, pkts, nb_rx);
		if (nb_tx < nb_rx)
			rte_pktmbuf_free_bulk(pkts + nb_tx, nb_rx - nb_tx);
		s->sent += nb_tx;
		now = rte_rdtsc();
	}
	return now - start;
}

/* Receive what is in flight, so that the next case starts empty. */
static void
fwd_drain(struct fwd *s)
{
	struct rte_mbuf *pkts[BURST * 2];
	uint16_t nb_rx;
	int i;

	for (i = 0; i < 100; i++) {
		nb_rx = rte_eth_rx_burst(rx_port, 0, pkts, RTE_DIM(pkts));
		fwd_tally(s, pkts, nb_rx);
		rte_pktmbuf_free_bulk(pkts, nb_rx);
		rte_delay_us(100);
	}
	if (getenv("BENCH_DEBUG") != NULL) {
		struct rte_eth_stats st;

		rte_eth_stats_get(rx_port, &st);
		printf("# sent %" PRIu64 " got %" PRIu64 " imissed %" PRIu64
		       " ierrors %" PRIu64 " nombuf %" PRIu64 "\n", s->sent,
		       s->got, st.imissed, st.ierrors, st.rx_nombuf);
	}
}

/*
 * Forward over the n rules for --seconds. Return Mpps received (in
 * the forwarding time); *hit: marked share.
 */
static double
forward(uint32_t n, double *hit)
{
	struct fwd s = { .mark_min = UINT32_MAX };
	uint64_t hz = rte_get_tsc_hz(), tsc, got;

	tsc = fwd_until(&s, 0, n, rte_rdtsc() + (uint64_t)(seconds * hz));
	got = s.got;
	fwd_drain(&s);
	*hit = s.got != 0 ? 100.0 * s.marked / s.got : 0;
	return tsc != 0 ? got / ((double)tsc / hz) / 1e6 : 0;
}

static double
rate(uint64_t n, uint64_t cycles)
{
	return cycles != 0 ? n / ((double)cycles / rte_get_tsc_hz()) : 0;
}

/* The hits of rules first .. first + n - 1 into *hits; 0, or -1 if a query
 * failed.
 */
static int
hits_sum(uint32_t first, uint32_t n, uint64_t *hits)
{
	const struct rte_flow_action count = {
		.type = RTE_FLOW_ACTION_TYPE_COUNT };
	struct rte_flow_query_count q;
	struct rte_flow_error err;
	uint32_t i;

	*hits = 0;
	for (i = first; i < first + n; i++) {
		memset(&q, 0, sizeof(q));
		if (rte_flow_query(rx_port, flows[i], &count, &q, &err) != 0)
			return -1;
		*hits += q.hits;
	}
	return 0;
}

/*
 * rte_flow_query(COUNT) over the n rules, round robin, for a second:
 * queries per second; *hits: the sum of one pass over all rules.
 */
static double
query_rate(uint32_t n, uint64_t *hits)
{
	const struct rte_flow_action count = {
		.type = RTE_FLOW_ACTION_TYPE_COUNT };
	struct rte_flow_query_count q;
	struct rte_flow_error err;
	uint64_t hz = rte_get_tsc_hz(), t0, t1, done = 0;
	uint32_t i;

	if (hits_sum(0, n, hits) != 0)
		return 0;
	t0 = rte_rdtsc();
	do {
		for (i = 0; i < 1024; i++) {
			memset(&q, 0, sizeof(q));
			rte_flow_query(rx_port, flows[(done + i) % n], &count,
				       &q, &err);
		}
		done += 1024;
		t1 = rte_rdtsc();
	} while (t1 - t0 < hz);
	return done / ((double)(t1 - t0) / hz);
}

static void
run_case(uint32_t n, uint32_t masks)
{
	const char *ab = ab_pairs == 0 ? "" : with_count ? " [B]" : " [A]";
	struct rte_flow_error err = { 0 };
	struct create_timing ct;
	uint64_t t0, t1;
	double pmd_rate = 0, pmd_bytes = 0, start_rate = 0;
	double ins_rate, del_rate, mpps, hit, qrate = 0;
	struct rte_eth_stats st;
	uint64_t hits = 0, rx0 = 0;
	char qcol[32] = "-";
	uint32_t made;
	int ret;

	fflush(stdout);
	if (with_stopped) {
		rte_eth_dev_stop(rx_port);
		made = rules_create_timed(n, masks, &ct, &err);
		pmd_rate = rate(ct.made, ct.made_tsc);
		pmd_bytes = n != 0 ? (double)ct.mem / n : 0;
		if (made < n) {
			printf("%9" PRIu32 " %5" PRIu32 "%s  failed at rule %"
			       PRIu32 " (port stopped): %s\n", n, masks, ab,
			       made, err.message != NULL ? err.message : "?");
			rte_flow_flush(rx_port, &err);
			rte_eth_dev_start(rx_port);
			return;
		}
		/* all n rules go to the device at start */
		t0 = rte_rdtsc();
		ret = rte_eth_dev_start(rx_port);
		t1 = rte_rdtsc();
		start_rate = rate(n, t1 - t0);
		rte_flow_flush(rx_port, &err);
		if (ret != 0) {
			printf("%9" PRIu32 " %5" PRIu32 "%s %10.0f %7.0f  port "
			       "start with the rules failed (%s): see the "
			       "log\n", n, masks, ab, pmd_rate, pmd_bytes,
			       strerror(-ret));
			rte_eth_dev_start(rx_port);
			return;
		}
	}
	made = rules_create_timed(n, masks, &ct, &err);
	if (made < n) {
		printf("%9" PRIu32 " %5" PRIu32 "%s  failed at rule %" PRIu32
		       ": %s\n", n, masks, ab, made,
		       err.message != NULL ? err.message : "?");
		rules_destroy(made);
		return;
	}
	ins_rate = rate(ct.made, ct.made_tsc);
	if (rte_eth_stats_get(rx_port, &st) == 0)
		rx0 = st.ipackets;
	mpps = forward(n, &hit);
	if (with_count) {
		rte_delay_ms(50);	/* frames in flight land */
		qrate = query_rate(n, &hits);
		snprintf(qcol, sizeof(qcol), "%.0f", qrate);
		if (rte_eth_stats_get(rx_port, &st) == 0 &&
		    hits != st.ipackets - rx0)
			printf("# counted %" PRIu64 " frames, received %"
			       PRIu64 "\n", hits, st.ipackets - rx0);
	}
	t0 = rte_rdtsc();
	rules_destroy(n);
	t1 = rte_rdtsc();
	del_rate = rate(ct.gone + n, ct.gone_tsc + (t1 - t0));
	printf("%9" PRIu32 " %5" PRIu32 " %10.0f %7.0f %10.0f %10.0f %10.0f "
	       "%7.0f %6.3f %5.1f %9s\n", n, masks, pmd_rate, pmd_bytes,
	       start_rate, ins_rate, del_rate,
	       n != 0 ? (double)ct.mem / n : 0, mpps, hit, qcol);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
median(double *v, unsigned int n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * The two lines of slices_run() from the Mpps of nslices slices A B B A
 * ... (mpps has room for 3 * nslices / 2 more values after them).
 */
static void
slices_print(const char *name, uint32_t n, uint32_t masks, double *mpps,
	     uint32_t nslices)
{
	uint32_t k, npairs = nslices / 2;
	double *diff = mpps + nslices, *ma, *mb;
	int b;

	/* Pair j: slices 2j and 2j+1, one A and one B (A B, B A, ...). */
	ma = diff + npairs;
	mb = ma + npairs;
	for (k = 0; k < npairs; k++) {
		b = k & 1;	/* slice 2k is the B one in odd pairs */
		ma[k] = mpps[2 * k + b];
		mb[k] = mpps[2 * k + !b];
		diff[k] = ma[k] != 0 ? (mb[k] / ma[k] - 1) * 100 : 0;
	}
	printf("# %s-pairs", name);
	for (k = 0; k < npairs; k++)
		printf(" %+.1f", diff[k]);
	printf("\n# %s %" PRIu32 " %" PRIu32 " %" PRIu32 " %.3f %.3f "
	       "%+.2f\n", name, n, masks, npairs, median(ma, npairs),
	       median(mb, npairs), median(diff, npairs));
}

/*
 * The slices of one comparison on the rules installed: nslices slices of
 * slice cycles (A B B A ...), A forwarding over the rules a_first ..
 * a_first + a_n - 1 (frames spread over them as fwd_until() does), B over
 * b_first .. b_first + b_n - 1; then the two lines below, tagged with
 * name. Each pair of slices is close in time, so a change of the
 * machine's speed (which comes and goes under a second here) hits both
 * alike:
 *   # <name>-pairs  each pair's B/A - 1, %
 *   # <name> rules masks pairs Mpps-A Mpps-B diff%
 * medians over the pairs, diff the median of the per-pair ratios.
 */
static int
slices_run(struct fwd *s, const char *name, uint32_t n, uint32_t masks,
	   uint32_t a_first, uint32_t a_n, uint32_t b_first, uint32_t b_n)
{
	uint64_t hz = rte_get_tsc_hz(), slice = hz / 1000 * slices_ms;
	uint32_t nslices = (uint32_t)(seconds * 1000 / slices_ms) & ~3u;
	uint64_t tsc, got;
	double *mpps;
	uint32_t k;
	int b;

	if (nslices < 4)
		nslices = 4;
	mpps = calloc(nslices + 3 * (nslices / 2), sizeof(*mpps));
	if (mpps == NULL)
		return -1;
	for (k = 0; k < nslices; k++) {
		b = (k ^ (k >> 1)) & 1;
		got = s->got;
		tsc = fwd_until(s, b ? b_first : a_first, b ? b_n : a_n,
				rte_rdtsc() + slice);
		mpps[k] = tsc != 0 ? (s->got - got) / ((double)tsc / hz) /
			  1e6 : 0;
	}
	fwd_drain(s);
	slices_print(name, n, masks, mpps, nslices);
	free(mpps);
	return 0;
}

/*
 * --slices: the datapath with and without COUNT in one table, in slices.
 * n uncounted rules (0 .. n-1) and n counted ones (n .. 2n-1, sources and
 * marks of their own) are on the port together; the frames go to the
 * uncounted ones for one slice, to the counted ones the next (A B B A
 * ...), for --seconds in all; one line:
 *   # slices rules masks pairs Mpps Mpps+cnt diff%
 * (slices_run()), then a line with each pair's ratio. The counted rules'
 * hits must add up to the frames received with their marks.
 */
static void
run_slices(uint32_t n, uint32_t masks)
{
	struct fwd s = { .mark_min = n };
	struct rte_flow_error err = { 0 };
	uint64_t hits = 0;
	uint32_t i, made = 0;

	for (i = 0; i < 2 * n; i++, made++) {
		with_count = i >= n;
		flows[i] = rule_create(i, masks, &err);
		if (flows[i] == NULL)
			break;
	}
	with_count = 0;
	if (made < 2 * n) {
		printf("# slices %" PRIu32 " %" PRIu32 " failed at rule %"
		       PRIu32 ": %s\n", n, masks, made,
		       err.message != NULL ? err.message : "?");
		goto out;
	}
	if (slices_run(&s, "slices", n, masks, 0, n, n, n) != 0)
		goto out;
	rte_delay_ms(50);	/* frames in flight land */
	if (hits_sum(n, n, &hits) != 0 || hits != s.over)
		printf("# slices: counted %" PRIu64 " frames, received %"
		       PRIu64 " with the counted rules' marks\n", hits,
		       s.over);
out:
	rules_destroy(made);
}

/*
 * --spread-slices N: the cost of a big table, in one table and in slices.
 * N rules (one mask) on the port; in A slices every frame hits rule 0,
 * as with a table of one rule (its lines stay in cache), in B slices the
 * frames cycle over --flows rules spread over all N (each lookup misses
 * the cache): one line
 *   # spread-slices N 1 pairs Mpps-one Mpps-spread diff%
 * (slices_run()). Beside the rule-count rows (one process, one case after
 * the other, where a change of the machine's speed between the cases
 * moves their ratio), the same comparison with the speed held alike.
 */
static void
run_spread_slices(uint32_t n)
{
	struct fwd s = { .mark_min = UINT32_MAX };
	struct rte_flow_error err = { 0 };
	uint32_t made = rules_create(n, 1, &err);

	if (made < n)
		printf("# spread-slices %" PRIu32 " 1 failed at rule %" PRIu32
		       ": %s\n", n, made,
		       err.message != NULL ? err.message : "?");
	else
		slices_run(&s, "spread-slices", n, 1, 0, 1, 0, n);
	rules_destroy(made);
}

/*
 * --meter-slices N: one meter per rule over N rules (rte_mtr), in slices.
 * N rules without a meter (0 .. N-1: queue 0) and N with one each (N ..
 * 2N-1: meter i - N, one trTCM profile at rates no run reaches, so every
 * frame is green, and a policy of queue 0 for green and yellow, drop for
 * red) are on the port together; frames go to the plain rules for one
 * slice, to the metered ones the next (A B B A ..., --slices MS, 20 by
 * default), cycling over the N rules of the slice in turn (every frame a
 * meter of its own, as bench-fwd.sh's 1k-meter case): one line
 *   # meter-slices rules 1 pairs Mpps Mpps+meter diff%
 * (slices_run()). The meters' green frames must add up to the frames
 * received from the metered rules' sources. The metering is the Rx burst's
 * (the PMD's): run the ports with progress=inline on one lcore to have the
 * whole frame's cost on that lcore, as bench-fwd.sh's inline cases.
 */
static void
run_meter_slices(uint32_t n)
{
	struct fwd s = { .mark_min = UINT32_MAX, .src_min = SRC_BASE + n };
	struct rte_mtr_meter_profile prof = {
		.alg = RTE_MTR_TRTCM_RFC2698,
		.trtcm_rfc2698 = { .cir = 100000000000ull,
				   .pir = 100000000000ull,
				   .cbs = 1000000000ull, .pbs = 1000000000ull },
	};
	static const struct rte_flow_action_queue q0 = { .index = 0 };
	const struct rte_flow_action pass[] = {
		{ .type = RTE_FLOW_ACTION_TYPE_QUEUE, .conf = &q0 },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	const struct rte_flow_action drop[] = {
		{ .type = RTE_FLOW_ACTION_TYPE_DROP },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	struct rte_mtr_meter_policy_params pol = {
		.actions = { pass, pass, drop },
	};
	struct rte_mtr_params params = {
		.meter_profile_id = 1, .meter_policy_id = 1,
		.meter_enable = 1, .stats_mask = RTE_MTR_STATS_N_PKTS_GREEN,
	};
	struct rte_mtr_stats st;
	struct rte_mtr_error me = { 0 };
	struct rte_flow_error err = { 0 };
	uint64_t green = 0, mask;
	uint32_t i, made = 0, meters = 0;
	const char *why = NULL;

	if (rte_mtr_meter_profile_add(rx_port, 1, &prof, &me) != 0 ||
	    rte_mtr_meter_policy_add(rx_port, 1, &pol, &me) != 0) {
		why = me.message;
		goto out;
	}
	for (; meters < n; meters++)
		if (rte_mtr_create(rx_port, meters, &params, 0, &me) != 0) {
			why = me.message;
			goto out;
		}
	for (i = 0; i < 2 * n; i++, made++) {
		rule_kind = i < n ? RULE_PLAIN : RULE_METER;
		rule_mtr = i - n;
		flows[i] = rule_create(i, 1, &err);
		if (flows[i] == NULL) {
			why = err.message;
			goto out;
		}
	}
	if (slices_run(&s, "meter-slices", n, 1, 0, n, n, n) != 0)
		goto out;
	rte_delay_ms(50);	/* frames in flight land */
	for (i = 0; i < n; i++) {
		if (rte_mtr_stats_read(rx_port, i, &st, &mask, 0, &me) != 0) {
			why = me.message;
			goto out;
		}
		green += st.n_pkts[RTE_COLOR_GREEN];
	}
	if (green != s.from)
		printf("# meter-slices: the meters saw %" PRIu64 " green "
		       "frames, %" PRIu64 " came from their rules\n", green,
		       s.from);
out:
	if (why != NULL || made < 2 * n)
		printf("# meter-slices %" PRIu32 " 1 failed (meter %" PRIu32
		       ", rule %" PRIu32 "): %s\n", n, meters, made,
		       why != NULL ? why : "?");
	rule_kind = RULE_MARK;
	rules_destroy(made);
	for (i = 0; i < meters; i++)
		rte_mtr_destroy(rx_port, i, &me);
	rte_mtr_meter_policy_delete(rx_port, 1, &me);
	rte_mtr_meter_profile_delete(rx_port, 1, &me);
}

/*
 * --frag-slices N: N rules "mark i / queue 0" (0 .. N-1) and N that also
 * match ipv4 fragment_offset 0 under 0x3fff, "not a fragment" (N .. 2N-1),
 * on the port together; frames (whole datagrams, so all marked) go to the
 * first rules for one slice, to the others the next (A B B A ...,
 * --slices MS, 20 by default), cycling over the N rules of the slice: one
 * line
 *   # frag-slices rules 1 pairs Mpps Mpps+cond diff%
 * (slices_run()). On a device that matches fragments (swverbs' full
 * profile) both are verbs matches; on one that does not (mlx5, a
 * ConnectX) the condition is checked in the Rx burst for each frame of
 * such a rule: the diff is that check's cost. Run the ports with
 * progress=inline on one lcore, as --meter-slices.
 */
static void
run_frag_slices(uint32_t n)
{
	struct fwd s = { .mark_min = UINT32_MAX, .src_min = SRC_BASE + n };
	struct rte_flow_error err = { 0 };
	uint32_t i, made = 0;

	/* The frames a condition excludes must be the port's: promiscuous. */
	rte_eth_promiscuous_enable(rx_port);
	for (i = 0; i < 2 * n; i++, made++) {
		rule_kind = i < n ? RULE_MARK : RULE_NOFRAG;
		flows[i] = rule_create(i, 1, &err);
		if (flows[i] == NULL)
			break;
	}
	rule_kind = RULE_MARK;
	if (made < 2 * n)
		printf("# frag-slices %" PRIu32 " 1 failed (rule %" PRIu32
		       "): %s\n", n, made,
		       err.message != NULL ? err.message : "?");
	else
		slices_run(&s, "frag-slices", n, 1, 0, n, n, n);
	rules_destroy(made);
	rte_eth_promiscuous_disable(rx_port);
}

/* A port pair of --csum-slices: frames go from tx to rx. */
struct csum_pair {
	uint16_t tx, rx;
	struct rte_ether_addr mac;	/* rx's */
	struct fwd s;
};

/*
 * --csum-slices LEN: Rx with and without the checksum offloads, in slices.
 * Ports 0 -> 1 (A: no Rx offload) and ports 2 -> 3 (B: IPV4, UDP and TCP
 * checksums on port 3; vbr verifies them in software, as on a ConnectX),
 * each pair on its own cable, no rule; LEN-byte IPv4 UDP frames, their
 * checksums right, circulate on each pair as fwd_until() has them; the
 * slices alternate between the pairs (A B B A ..., --slices MS, 20 by
 * default): one line
 *   # csum-slices LEN 1 pairs Mpps Mpps+csum diff%
 * (slices_print()). Every frame B received must say L4 GOOD. Run the
 * ports with progress=inline on one lcore, as --meter-slices.
 */
static void
run_csum_slices(uint32_t len)
{
	struct csum_pair p[2] = {
		{ .tx = 0, .rx = 1, .s = { .mark_min = UINT32_MAX } },
		{ .tx = 2, .rx = 3, .s = { .mark_min = UINT32_MAX } },
	};
	uint64_t hz = rte_get_tsc_hz(), slice = hz / 1000 * slices_ms;
	uint32_t nslices = (uint32_t)(seconds * 1000 / slices_ms) & ~3u;
	uint64_t tsc, got;
	double *mpps;
	uint32_t k;
	int b;

	if (nslices < 4)
		nslices = 4;
	mpps = calloc(nslices + 3 * (nslices / 2), sizeof(*mpps));
	if (mpps == NULL)
		return;
	frame_len = len;
	rte_eth_macaddr_get(p[0].rx, &p[0].mac);
	rte_eth_macaddr_get(p[1].rx, &p[1].mac);
	for (k = 0; k < nslices; k++) {
		b = (k ^ (k >> 1)) & 1;
		tx_port = p[b].tx;
		rx_port = p[b].rx;
		rx_mac = p[b].mac;
		got = p[b].s.got;
		tsc = fwd_until(&p[b].s, 0, 0, rte_rdtsc() + slice);
		mpps[k] = tsc != 0 ? (p[b].s.got - got) / ((double)tsc / hz) /
			  1e6 : 0;
	}
	for (b = 0; b < 2; b++) {
		tx_port = p[b].tx;
		rx_port = p[b].rx;
		fwd_drain(&p[b].s);
	}
	slices_print("csum-slices", len, 1, mpps, nslices);
	if (p[1].s.l4_good != p[1].s.got || p[0].s.l4_good != 0)
		printf("# csum-slices: L4 GOOD on %" PRIu64 " of %" PRIu64
		       " frames with the offloads, %" PRIu64 " without\n",
		       p[1].s.l4_good, p[1].s.got, p[0].s.l4_good);
	free(mpps);
	tx_port = 0;
	rx_port = 1;
	rx_mac = p[0].mac;
	frame_len = 60;
}

/*
 * One case: one run as the options say, or under --ab 2N runs alternating
 * without and with COUNT, A B B A A B B A ...: run r is B when bit 0 of r
 * differs from bit 1.
 */
static void
run_cases(uint32_t n, uint32_t masks)
{
	uint32_t r;

	if (ab_pairs == 0) {
		run_case(n, masks);
		return;
	}
	for (r = 0; r < 2 * ab_pairs; r++) {
		with_count = (r ^ (r >> 1)) & 1;
		run_case(n, masks);
	}
	with_count = 0;
	if (slices_ms != 0)
		run_slices(n, masks);
}

int
main(int argc, char **argv)
{
	uint32_t max = 1;
	unsigned int i;
	double hit;
	int ret;

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "bench-flow-rules: EAL init failed\n");
		return 1;
	}
	if (parse_args(argc - ret - 1, argv + ret + 1) != 0) {
		fprintf(stderr, "usage: bench-flow-rules <EAL args> -- "
			"[--rules N,..] [--masks M,..] [--mask-rules N] "
			"[--seconds S] [--flows F] [--no-stopped] "
			"[--count] [--ab N [--slices MS]] "
			"[--spread-slices N] [--meter-slices N] "
			"[--frag-slices N] [--csum-slices LEN]\n");
		return 2;
	}
	if (rte_eth_dev_count_avail() < (csum_len != 0 ? 4u : 2u)) {
		fprintf(stderr, "bench-flow-rules: %s ports needed\n",
			csum_len != 0 ? "four" : "two");
		return 1;
	}
	tx_port = 0;
	rx_port = 1;
	mp = rte_pktmbuf_pool_create("bench", NB_MBUF, 256, 0,
				     RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (mp == NULL || port_init(tx_port, 0) != 0 ||
	    port_init(rx_port, 0) != 0 ||
	    (csum_len != 0 && (port_init(2, 0) != 0 ||
			       port_init(3, RTE_ETH_RX_OFFLOAD_IPV4_CKSUM |
					 RTE_ETH_RX_OFFLOAD_UDP_CKSUM |
					 RTE_ETH_RX_OFFLOAD_TCP_CKSUM) != 0))) {
		fprintf(stderr, "bench-flow-rules: port setup failed\n");
		return 1;
	}
	rte_eth_macaddr_get(rx_port, &rx_mac);
	for (i = 0; i < nb_rule_counts; i++)
		max = RTE_MAX(max, rule_counts[i]);
	max = RTE_MAX(max, mask_rules);
	max = RTE_MAX(max, spread_rules);
	max = RTE_MAX(max, meter_rules);
	max = RTE_MAX(max, frag_rules);
	flows = calloc(2 * (size_t)max, sizeof(*flows)); /* --slices: 2n */
	if (flows == NULL)
		return 1;
	/* warm-up: link up, engine running, first frames through */
	rte_delay_ms(200);
	forward(0, &hit);
	printf("%9s %5s %10s %7s %10s %10s %10s %7s %6s %5s %9s\n", "rules",
	       "masks", "pmd-ins/s", "pmd-B/r", "start/s", "ins/s", "del/s",
	       "B/rule", "Mpps", "hit%", "qry/s");
	for (i = 0; i < nb_rule_counts; i++)
		run_cases(rule_counts[i], 1);
	for (i = 0; i < nb_mask_counts; i++)
		run_cases(mask_rules, mask_counts[i]);
	if (spread_rules != 0) {
		if (slices_ms == 0)
			slices_ms = 20;
		run_spread_slices(spread_rules);
	}
	if (meter_rules != 0) {
		if (slices_ms == 0)
			slices_ms = 20;
		run_meter_slices(meter_rules);
	}
	if (frag_rules != 0) {
		if (slices_ms == 0)
			slices_ms = 20;
		run_frag_slices(frag_rules);
	}
	if (csum_len != 0) {
		if (slices_ms == 0)
			slices_ms = 20;
		run_csum_slices(csum_len);
	}
	for (i = 0; i < (csum_len != 0 ? 4u : 2u); i++) {
		rte_eth_dev_stop(i);
		rte_eth_dev_close(i);
	}
	free(flows);
	rte_eal_cleanup();
	return 0;
}
