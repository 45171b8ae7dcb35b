/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Meters at rates where time matters, checked frame by frame against a
 * reference meter written here from the RFCs, not against DPDK's rte_meter
 * (which the policer itself runs): srTCM (RFC 2697), trTCM (RFC 2698) and
 * trTCM with EIR and EBS (RFC 4115); byte and packet mode (rte_mtr's
 * packet_mode: rates in frames per second, bursts in frames); colour-blind,
 * and colour-aware with the input colour from the meter's DSCP table.
 *
 * Two swverbs ports on a pair wire. Port 0 sends batches of 1 to 8 UDP
 * frames of random sizes (and, colour-aware, random input colours); port 1
 * meters them with one rule whose only action is METER. The policy keeps
 * every colour on queue 0 with a MARK naming the colour, so each frame's
 * colour is read from its mbuf, and nothing is dropped.
 *
 * Time. The policer colours a burst's frames at one TSC reading it takes
 * in the Rx burst (vbr_rxtx.c, once per chunk of 32 frames). The test reads
 * the TSC just before and just after each rte_eth_rx_burst(): the
 * policer's time for the burst's frames lies in that window; the meter's
 * time 0 lies in the window of rte_mtr_create(). A batch is polled once
 * all of it waits in the queue (rte_eth_rx_queue_count()), so it goes
 * through the meter in one burst, at a time the test picks: 0.1 to 1.2
 * times the time the batch's tokens take to come back at CIR after the
 * previous poll (so the refill decides colours), and, among such times,
 * one where a poll PLAN_MARGIN_US early or late would find the same
 * colours (so a poll that comes late rarely lands near a boundary). About
 * one batch in FULL_EVERY comes after a pause that fills every bucket.
 *
 * The reference (struct rfc) bounds the buckets from below and above by
 * what these windows allow, and what a meter may round (its tick period,
 * to a whole TSC cycle). Where the bounds give one colour, vbr's must be
 * it, exactly. Where they give two, the frame is near a boundary: vbr's
 * colour must lie between them; such frames are counted and must be at
 * most NEAR_MAX_PCT percent of the frames. At least REFILL_MIN_PCT percent
 * of the frames must have a better colour than the most tokens the
 * buckets could have had with no refill since the previous burst, and
 * each colour at least COLOUR_MIN_PCT percent: a meter that ignored time,
 * or these tests at rates where time cannot matter, fail. The meter's
 * stats must be the colours counted, frames and bytes, none dropped.
 *
 * Colour-aware meters: vbr supports them for all three algorithms
 * (capabilities_get says so, and setup() asserts it); the input colour of
 * a frame is its DSCP's in the meter's table (create's dscp_table: DSCP
 * 3k + c is colour c).
 */

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_flow.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_mtr.h>

#include "test.h"
#include "vbr_test_port.h"

#define RING_SIZE 512
#define WAIT_MS 10000		/* the most a frame is waited for */
#define BATCHES 150		/* batches per meter */
#define BATCH_MAX 8		/* frames per batch, at most */
#define FRAME_MIN 64		/* frame sizes, no FCS */
#define FRAME_MAX 1500
#define FULL_EVERY 8		/* one batch in 8 after a full refill */
#define PLAN_MARGIN_US 100	/* margin sought when a poll time is picked */
#define PLAN_TRIES 32		/* poll times tried */
#define NEAR_MAX_PCT 1		/* near-boundary frames, at most */
#define REFILL_MIN_PCT 10	/* frames the refill decided, at least */
#define COLOUR_MIN_PCT 3	/* frames of each colour, at least */
#define IP4(a, b, c, d) \
	(((uint32_t)(a) << 24) | ((b) << 16) | ((c) << 8) | (d))
#define ACT(t, c) { .type = RTE_FLOW_ACTION_TYPE_##t, .conf = (c) }
#define ACT_END { .type = RTE_FLOW_ACTION_TYPE_END }

enum { PROF = 1 };
enum { POL_MARKS = 10 };
enum { MTR = 5 };

static struct rte_mempool *mp;
static uint16_t port0, port1;
static struct rte_ether_addr mac0, mac1;
static uint64_t hz;
static uint64_t rnd = 0x9e3779b97f4a7c15ull;	/* xorshift64 state */

static const char *const colour_name[RTE_COLORS] = {
	"green", "yellow", "red",
};

static uint64_t
rand64(void)
{
	rnd ^= rnd << 13;
	rnd ^= rnd >> 7;
	rnd ^= rnd << 17;
	return rnd;
}

/* A number in [lo, hi]. */
static uint32_t
rand_in(uint32_t lo, uint32_t hi)
{
	return lo + (uint32_t)(rand64() % (hi - lo + 1));
}

/*
 * The reference meter, from the RFCs' text. Two buckets: [0] is C (CIR,
 * CBS); [1] is E (srTCM: what C's tokens leave when it is full, up to EBS;
 * RFC 4115: EIR, EBS) or P (trTCM: PIR, PBS). Tokens are bytes, or frames
 * in packet mode. The RFCs add them one at a time, a bucket's rate times
 * per second: ticks at g + k / rate, g the meter's time 0, when both
 * buckets are full (RFC 2697 2.; the policer's is rte_mtr_create()'s TSC).
 *
 * The exact time of a tick is not known here: g lies in the window of the
 * rte_mtr_create() call, and the meter may round the tick period to a
 * whole TSC cycle. Nor is a burst's time: it lies in the window of its
 * rte_eth_rx_burst(). So the reference runs twice: a low meter, which
 * counts the fewest ticks these windows allow between two bursts (the
 * later as early as it can be, the earlier as late, g late, ticks long),
 * and a high meter, which counts the most; both take out of their buckets
 * what vbr's colour for each frame takes. The true buckets are between
 * the two (the levels only grow with ticks and only shrink with the same
 * frames), and so is the colour of each frame: the colour decisions only
 * get better with more tokens. Where the two meters agree, vbr's colour
 * must be theirs; else the frame is near a boundary, and vbr's colour must
 * lie between theirs.
 */
struct rfc {
	enum rte_mtr_algorithm alg;
	uint64_t rate[2];		/**< ticks per second (srTCM E: CIR) */
	int64_t cap[2];			/**< bucket sizes */
	int64_t lvl[2];			/**< levels (below 0: see above) */
	uint64_t t;			/**< TSC of the last tick counted */
	int dir;			/**< -1: low meter, 1: high meter */
};

/* Ticks of bucket i from g to t, the fewest (dir -1) or the most (1). */
static int64_t
ticks_at(const struct rfc *m, unsigned int i, uint64_t t, uint64_t g0,
	 uint64_t g1, int dir)
{
	/* Period hz / rate, one cycle longer (fewest) or shorter (most). */
	uint64_t g = dir < 0 ? g1 : g0;
	unsigned __int128 num, den = dir < 0 ? hz + m->rate[i] :
					       hz - m->rate[i];

	if (t <= g)
		return 0;
	num = (unsigned __int128)(t - g) * m->rate[i];
	return (int64_t)(num / den);
}

/*
 * Ticks of bucket i in (a, b], the fewest (dir -1) or the most (1): of
 * the grid (g in [g0, g1]), and whatever the grid's phase; the tighter.
 */
static int64_t
ticks_between(const struct rfc *m, unsigned int i, uint64_t a, uint64_t b,
	      uint64_t g0, uint64_t g1, int dir)
{
	unsigned __int128 num, den;
	int64_t grid, any;

	if (b <= a)
		return 0;
	grid = ticks_at(m, i, b, g0, g1, dir) - ticks_at(m, i, a, g0, g1, -dir);
	num = (unsigned __int128)(b - a) * m->rate[i];
	if (dir < 0) {
		den = hz + m->rate[i];
		any = (int64_t)(num / den);
		return RTE_MAX(RTE_MAX(grid, any), (int64_t)0);
	}
	den = hz - m->rate[i];
	any = (int64_t)((num + den - 1) / den);
	return RTE_MIN(grid, any);
}

static void
rfc_init(struct rfc *m, const struct rte_mtr_meter_profile *p, int dir,
	 uint64_t t)
{
	uint64_t c0, c1;

	m->alg = p->alg;
	m->dir = dir;
	switch (p->alg) {
	case RTE_MTR_SRTCM_RFC2697:
		m->rate[0] = m->rate[1] = p->srtcm_rfc2697.cir;
		c0 = p->srtcm_rfc2697.cbs;
		c1 = p->srtcm_rfc2697.ebs;
		break;
	case RTE_MTR_TRTCM_RFC2698:
		m->rate[0] = p->trtcm_rfc2698.cir;
		m->rate[1] = p->trtcm_rfc2698.pir;
		c0 = p->trtcm_rfc2698.cbs;
		c1 = p->trtcm_rfc2698.pbs;
		break;
	default:
		m->rate[0] = p->trtcm_rfc4115.cir;
		m->rate[1] = p->trtcm_rfc4115.eir;
		c0 = p->trtcm_rfc4115.cbs;
		c1 = p->trtcm_rfc4115.ebs;
		break;
	}
	m->cap[0] = (int64_t)c0;
	m->cap[1] = (int64_t)c1;
	/* Both buckets full at time 0 (RFC 2697 2., RFC 2698 2.). */
	m->lvl[0] = m->cap[0];
	m->lvl[1] = m->cap[1];
	m->t = t;
}

/*
 * Count the ticks from the last burst to time t (g in [g0, g1]), the
 * fewest or the most by m->dir; then the meter's last time is t_next (the
 * low meter: the end of this burst's window, the high one: its start).
 * Return whether both buckets are full.
 */
static bool
rfc_refill(struct rfc *m, uint64_t t, uint64_t t_next, uint64_t g0,
	   uint64_t g1)
{
	int64_t k0 = ticks_between(m, 0, m->t, t, g0, g1, m->dir);
	int64_t k1, add;

	if (m->alg == RTE_MTR_SRTCM_RFC2697) {
		/*
		 * RFC 2697: a tick adds a token to C if C is below CBS,
		 * else to E if E is below EBS.
		 */
		add = RTE_MIN(k0, RTE_MAX(m->cap[0] - m->lvl[0], (int64_t)0));
		m->lvl[0] += add;
		k1 = k0 - add;
	} else {
		/* RFC 2698 and 4115: each bucket at its own rate. */
		m->lvl[0] = RTE_MIN(m->lvl[0] + k0, m->cap[0]);
		k1 = ticks_between(m, 1, m->t, t, g0, g1, m->dir);
	}
	m->lvl[1] = RTE_MIN(m->lvl[1] + k1, m->cap[1]);
	m->t = t_next;
	return m->lvl[0] == m->cap[0] && m->lvl[1] == m->cap[1];
}

/*
 * The colour of a frame of b tokens, input colour in (green for
 * colour-blind: the RFCs' colour-blind rules are their colour-aware ones
 * for a green frame).
 */
static enum rte_color
rfc_colour(const struct rfc *m, int64_t b, enum rte_color in)
{
	if (m->alg == RTE_MTR_TRTCM_RFC2698) {
		/*
		 * RFC 2698 3.: red if precoloured red or Tp < B; else yellow
		 * if precoloured yellow or Tc < B; else green.
		 */
		if (in == RTE_COLOR_RED || m->lvl[1] < b)
			return RTE_COLOR_RED;
		if (in == RTE_COLOR_YELLOW || m->lvl[0] < b)
			return RTE_COLOR_YELLOW;
		return RTE_COLOR_GREEN;
	}
	/*
	 * RFC 2697 3. and RFC 4115 3.: green if precoloured green and
	 * Tc >= B; else yellow if precoloured green or yellow and Te >= B;
	 * else red.
	 */
	if (in == RTE_COLOR_GREEN && m->lvl[0] >= b)
		return RTE_COLOR_GREEN;
	if (in != RTE_COLOR_RED && m->lvl[1] >= b)
		return RTE_COLOR_YELLOW;
	return RTE_COLOR_RED;
}

/* Take a frame of b tokens of colour c out of the buckets. */
static void
rfc_take(struct rfc *m, int64_t b, enum rte_color c)
{
	if (m->alg == RTE_MTR_TRTCM_RFC2698) {
		/* Green: Tp and Tc; yellow: Tp. */
		if (c != RTE_COLOR_RED)
			m->lvl[1] -= b;
		if (c == RTE_COLOR_GREEN)
			m->lvl[0] -= b;
	} else if (c == RTE_COLOR_GREEN) {
		m->lvl[0] -= b;
	} else if (c == RTE_COLOR_YELLOW) {
		m->lvl[1] -= b;
	}
}

/* What a run of one meter needs. */
struct run {
	const char *name;
	struct rte_mtr_meter_profile prof;
	bool aware;			/**< input colours from DSCP */
};

/* A frame of a batch. */
struct frame {
	uint16_t len;			/**< bytes, no FCS */
	uint8_t in;			/**< input colour */
	uint8_t got;			/**< vbr's colour */
	uint64_t t0, t1;		/**< window of the burst that had it */
};

/* The reference of a run: its low and high meters, the grid's window. */
struct ref {
	struct rfc lo, hi;
	uint64_t g0, g1;		/**< rte_mtr_create()'s window */
};

/* A run's bookkeeping. */
struct tally {
	unsigned int frames;
	unsigned int near;		/**< frames near a boundary */
	unsigned int refill;		/**< frames the refill decided */
	unsigned int n[RTE_COLORS];	/**< frames per colour (vbr's) */
	uint64_t bytes[RTE_COLORS];	/**< their bytes */
	uint64_t max_win;		/**< widest window, cycles */
	uint64_t win_sum;		/**< for the mean */
	unsigned int bursts;
	unsigned int full;		/**< bursts certainly full */
};

static uint64_t
us_cycles(double us)
{
	return (uint64_t)(us * 1e-6 * (double)hz);
}

/* Tokens of a frame of len bytes. */
static int64_t
tokens(const struct run *r, uint16_t len)
{
	return r->prof.packet_mode ? 1 : len;
}

/*
 * Whether frames f[0, n) polled within margin of t would all have one
 * colour the reference is sure of (copies of its meters are run).
 */
static bool
plan_ok(const struct ref *rf, const struct run *r, const struct frame *f,
	unsigned int n, uint64_t t, uint64_t margin)
{
	struct rfc lo = rf->lo, hi = rf->hi;
	unsigned int i;

	rfc_refill(&lo, t - margin, t + margin, rf->g0, rf->g1);
	rfc_refill(&hi, t + margin, t - margin, rf->g0, rf->g1);
	for (i = 0; i < n; i++) {
		int64_t b = tokens(r, f[i].len);
		enum rte_color c = rfc_colour(&lo, b, (enum rte_color)f[i].in);

		if (rfc_colour(&hi, b, (enum rte_color)f[i].in) != c)
			return false;
		rfc_take(&lo, b, c);
		rfc_take(&hi, b, c);
	}
	return true;
}

/* A frame to port 1: UDP, seq in its payload, input colour as DSCP. */
static struct rte_mbuf *
mk_frame(const struct frame *f, uint32_t seq)
{
	struct rte_mbuf *m = vbr_test_udp4(mp, &mac1, &mac0, IP4(10, 0, 0, 1),
					   IP4(10, 0, 1, 1), 1000, 53, f->len);
	struct rte_ipv4_hdr *ip;
	uint8_t *pl;

	if (m == NULL)
		return NULL;
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *,
				     sizeof(struct rte_ether_hdr));
	/* DSCP 3k + c: colour c in the meter's table (dscp_table[]). */
	ip->type_of_service = (uint8_t)((3 * rand_in(0, 20) + f->in) << 2);
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	pl = rte_pktmbuf_mtod_offset(m, uint8_t *,
				     sizeof(struct rte_ether_hdr) +
				     sizeof(*ip) + sizeof(struct rte_udp_hdr));
	memcpy(pl, &seq, sizeof(seq));
	return m;
}

/* Sleep, then spin, until the TSC reaches t. */
static void
wait_until(uint64_t t)
{
	uint64_t now = rte_rdtsc(), ahead = (uint64_t)us_cycles(300);

	if (t > now + ahead) {
		uint64_t ns = (t - now - ahead) * 1000000000ull / hz;
		struct timespec ts = {
			.tv_sec = (time_t)(ns / 1000000000ull),
			.tv_nsec = (long)(ns % 1000000000ull),
		};

		nanosleep(&ts, NULL);
	}
	while (rte_rdtsc() < t)
		rte_pause();
}

/* Wait until n frames wait in port 1's queue 0 (or, no count, a while). */
static int
wait_queued(unsigned int n)
{
	uint64_t deadline = rte_rdtsc() + hz * WAIT_MS / 1000;
	int q;

	for (;;) {
		q = rte_eth_rx_queue_count(port1, 0);
		if (q < 0) {
			rte_delay_us_sleep(2000);
			return TEST_SUCCESS;
		}
		if ((unsigned int)q >= n)
			return TEST_SUCCESS;
		TEST_ASSERT(rte_rdtsc() < deadline, "%u of %u frames came", q,
			    n);
		rte_delay_us_sleep(20);
	}
}

/*
 * Poll the n frames f[0, n) of a batch (seq first_seq on), the first burst
 * at start: each frame's colour and its burst's window.
 */
static int
poll_batch(struct frame *f, unsigned int n, uint32_t first_seq,
	   uint64_t start, struct tally *tl)
{
	uint64_t deadline = rte_rdtsc() + hz * WAIT_MS / 1000;
	struct rte_mbuf *pk[32];
	unsigned int got = 0, k, nb;
	uint64_t t0, t1;

	wait_until(start);
	while (got < n) {
		t0 = rte_rdtsc();
		nb = rte_eth_rx_burst(port1, 0, pk, RTE_DIM(pk));
		t1 = rte_rdtsc();
		if (nb > 0) {
			tl->bursts++;
			tl->win_sum += t1 - t0;
			tl->max_win = RTE_MAX(tl->max_win, t1 - t0);
		}
		for (k = 0; k < nb; k++) {
			struct rte_mbuf *m = pk[k];
			uint32_t seq, mark, len = m->pkt_len;
			int ok;

			memcpy(&seq, rte_pktmbuf_mtod_offset(m, uint8_t *,
				sizeof(struct rte_ether_hdr) +
				sizeof(struct rte_ipv4_hdr) +
				sizeof(struct rte_udp_hdr)), sizeof(seq));
			mark = (m->ol_flags & RTE_MBUF_F_RX_FDIR_ID) ?
			       m->hash.fdir.hi : 0;
			ok = got < n && seq == first_seq + got &&
			     len == f[got].len && mark >= 1 &&
			     mark <= RTE_COLORS;
			if (ok) {
				f[got].got = (uint8_t)(mark - 1);
				f[got].t0 = t0;
				f[got].t1 = t1;
			}
			rte_pktmbuf_free(m);
			TEST_ASSERT(ok, "frame %u of the batch: seq %u (%u "
				    "wanted), %u bytes, mark %u", got, seq,
				    first_seq + got, len, mark);
			got++;
		}
		TEST_ASSERT(got == n || rte_rdtsc() < deadline,
			    "%u of %u frames came", got, n);
	}
	return TEST_SUCCESS;
}

/*
 * Hold the frames of one burst, f[0, n), all of window [t0, t1], to the
 * reference (see struct rfc).
 */
static int
check_burst(struct ref *rf, const struct run *r, const struct frame *f,
	    unsigned int n, struct tally *tl)
{
	uint64_t t0 = f[0].t0, t1 = f[0].t1;
	struct rfc stale = rf->hi;
	unsigned int i;

	/* The low meter at the window's start, the high one at its end. */
	if (rfc_refill(&rf->lo, t0, t1, rf->g0, rf->g1))
		tl->full++;
	rfc_refill(&rf->hi, t1, t0, rf->g0, rf->g1);
	for (i = 0; i < n; i++) {
		int64_t b = tokens(r, f[i].len);
		enum rte_color in = (enum rte_color)f[i].in;
		enum rte_color got = (enum rte_color)f[i].got;
		enum rte_color lo = rfc_colour(&rf->lo, b, in);
		enum rte_color hi = rfc_colour(&rf->hi, b, in);
		enum rte_color st = rfc_colour(&stale, b, in);

		/*
		 * The most tokens the buckets had without the ticks since
		 * the last burst give a worse colour: the refill decided.
		 */
		if (st > got)
			tl->refill++;
		rfc_take(&stale, b, st);
		if (lo == hi) {
			TEST_ASSERT(got == lo, "frame %u of %u (%u bytes, in "
				    "%s): %s, the RFC says %s (low meter C %"
				    PRId64 " E/P %" PRId64 ", high C %" PRId64
				    " E/P %" PRId64 ")", i, n, f[i].len,
				    colour_name[in], colour_name[got],
				    colour_name[lo], rf->lo.lvl[0],
				    rf->lo.lvl[1], rf->hi.lvl[0],
				    rf->hi.lvl[1]);
		} else {
			/* Near a boundary. enum rte_color: green 0 best. */
			TEST_ASSERT(got >= hi && got <= lo, "frame %u of %u "
				    "(%u bytes, in %s) near a boundary: %s, "
				    "the RFC says %s to %s", i, n, f[i].len,
				    colour_name[in], colour_name[got],
				    colour_name[hi], colour_name[lo]);
			tl->near++;
		}
		rfc_take(&rf->lo, b, got);
		rfc_take(&rf->hi, b, got);
		tl->n[got]++;
		tl->bytes[got] += f[i].len;
		tl->frames++;
	}
	return TEST_SUCCESS;
}

/* A pause after which every bucket is full, from empty. */
static uint64_t
fill_cycles(const struct rfc *m)
{
	uint64_t c0 = (uint64_t)m->cap[0] * hz / m->rate[0];
	uint64_t c1 = (uint64_t)m->cap[1] * hz / m->rate[1];

	if (m->alg == RTE_MTR_SRTCM_RFC2697)
		return c0 + c1;
	return RTE_MAX(c0, c1);
}

static struct rte_flow *
meter_rule(void)
{
	static const struct rte_flow_action_meter am = { .mtr_id = MTR };
	const struct rte_flow_action actions[] = { ACT(METER, &am), ACT_END };
	const struct rte_flow_attr attr = { .ingress = 1 };
	static const struct rte_flow_item pattern[] = {
		{ .type = RTE_FLOW_ITEM_TYPE_ETH },
		{ .type = RTE_FLOW_ITEM_TYPE_IPV4 },
		{ .type = RTE_FLOW_ITEM_TYPE_UDP },
		{ .type = RTE_FLOW_ITEM_TYPE_END },
	};
	struct rte_flow_error err;
	struct rte_flow *fl;

	fl = rte_flow_create(port1, &attr, pattern, actions, &err);
	if (fl == NULL)
		printf("flow create: %s\n", err.message ? err.message : "?");
	return fl;
}

/*
 * The batches of run r through meter MTR, made within [g0, g1] (TSC), its
 * rule in place.
 */
static int
traffic(const struct run *r, uint64_t g0, uint64_t g1, struct tally *tl)
{
	struct frame f[BATCH_MAX];
	struct rte_mbuf *pk[BATCH_MAX];
	uint64_t fill, prev, now, start, west = us_cycles(5);
	uint32_t seq = 0;
	struct ref rf;
	unsigned int bt, i, j, n;

	rfc_init(&rf.lo, &r->prof, -1, g1);
	rfc_init(&rf.hi, &r->prof, 1, g0);
	rf.g0 = g0;
	rf.g1 = g1;
	fill = fill_cycles(&rf.lo) + us_cycles(2000);
	prev = g1;
	for (bt = 0; bt < BATCHES; bt++) {
		uint64_t sum = 0, lo, hi, t = 0;

		n = rand_in(1, BATCH_MAX);
		for (i = 0; i < n; i++) {
			f[i].len = (uint16_t)rand_in(FRAME_MIN, FRAME_MAX);
			f[i].in = r->aware ? (uint8_t)rand_in(0, 2) :
					     RTE_COLOR_GREEN;
			sum += (uint64_t)tokens(r, f[i].len);
			pk[i] = mk_frame(&f[i], seq + i);
			TEST_ASSERT_NOT_NULL(pk[i], "mbuf");
		}
		TEST_ASSERT_EQUAL(vbr_test_tx_all(port0, pk, n, WAIT_MS), n,
				  "send");
		TEST_ASSERT_SUCCESS(wait_queued(n), "batch %u", bt);
		/*
		 * When: 0.1 to 1.2 times the batch's tokens at CIR after the
		 * previous poll, or after a pause that fills the buckets;
		 * among PLAN_TRIES times there, the first where a poll
		 * PLAN_MARGIN_US early or late gives colours the reference
		 * is sure of, else the last tried.
		 */
		if (bt == 0 || rand_in(1, FULL_EVERY) == 1) {
			lo = prev + fill;
			hi = lo + us_cycles(1000);
		} else {
			lo = prev + sum * hz / 10 / rf.lo.rate[0];
			hi = prev + sum * hz * 6 / 5 / rf.lo.rate[0];
		}
		now = rte_rdtsc() + us_cycles(50);
		lo = RTE_MAX(lo, now);
		hi = RTE_MAX(hi, lo + 1);
		for (j = 0; j < PLAN_TRIES; j++) {
			t = lo + rand64() % (hi - lo);
			if (plan_ok(&rf, r, f, n, t, us_cycles(PLAN_MARGIN_US)))
				break;
		}
		start = t - west / 2;
		TEST_ASSERT_SUCCESS(poll_batch(f, n, seq, start, tl),
				    "batch %u", bt);
		west = (west * 7 + (f[0].t1 - f[0].t0)) / 8;
		/* The frames by burst, in order. */
		for (i = 0; i < n; i = j) {
			for (j = i + 1; j < n && f[j].t0 == f[i].t0; j++)
				;
			TEST_ASSERT_SUCCESS(check_burst(&rf, r, &f[i], j - i,
							tl),
					    "batch %u (%u frames)", bt, n);
		}
		prev = f[n - 1].t1;
		seq += n;
	}
	return TEST_SUCCESS;
}

/* One run: profile, meter, rule, traffic, checks; all removed after. */
static int
run_one(const struct run *r)
{
	enum rte_color dscp[64];
	struct rte_mtr_params params = {
		.meter_profile_id = PROF, .meter_policy_id = POL_MARKS,
		.meter_enable = 1, .stats_mask = UINT64_MAX,
		.default_input_color = RTE_COLOR_GREEN,
	};
	struct rte_mtr_meter_profile prof = r->prof;	/* 22.11: not const */
	struct rte_mtr_error err;
	struct rte_mtr_stats st;
	struct rte_flow *fl;
	struct tally tl;
	unsigned int c, i;
	uint64_t mask, g0, g1;
	int ret;

	memset(&tl, 0, sizeof(tl));
	for (i = 0; i < RTE_DIM(dscp); i++)
		dscp[i] = (enum rte_color)(i % 3);
	if (r->aware)
		params.dscp_table = dscp;
	TEST_ASSERT_SUCCESS(rte_mtr_meter_profile_add(port1, PROF, &prof,
						      &err), "%s: profile: %s",
			    r->name, err.message);
	g0 = rte_rdtsc();
	TEST_ASSERT_SUCCESS(rte_mtr_create(port1, MTR, &params, 1, &err),
			    "%s: meter: %s", r->name, err.message);
	g1 = rte_rdtsc();
	fl = meter_rule();
	TEST_ASSERT_NOT_NULL(fl, "%s: rule", r->name);
	ret = traffic(r, g0, g1, &tl);
	memset(&st, 0, sizeof(st));
	if (rte_mtr_stats_read(port1, MTR, &st, &mask, 1, &err) != 0)
		ret = TEST_FAILED;
	if (vbr_test_flow_destroy(port1, fl) != 0 ||
	    rte_mtr_destroy(port1, MTR, &err) != 0 ||
	    rte_mtr_meter_profile_delete(port1, PROF, &err) != 0)
		ret = TEST_FAILED;
	TEST_ASSERT_SUCCESS(ret, "%s", r->name);
	printf("  %s: %u frames, %u bursts (window mean %.1f us, max %.1f "
	       "us), %u full: green %u yellow %u red %u; refill decided %u, "
	       "near a boundary %u\n", r->name, tl.frames, tl.bursts,
	       tl.win_sum * 1e6 / hz / RTE_MAX(tl.bursts, 1u),
	       tl.max_win * 1e6 / hz, tl.full, tl.n[0], tl.n[1], tl.n[2],
	       tl.refill, tl.near);
	TEST_ASSERT(tl.near * 100 <= tl.frames * NEAR_MAX_PCT, "%s: %u of "
		    "%u frames near a boundary", r->name, tl.near, tl.frames);
	TEST_ASSERT(tl.refill * 100 >= tl.frames * REFILL_MIN_PCT, "%s: the "
		    "refill decided %u of %u frames", r->name, tl.refill,
		    tl.frames);
	for (c = 0; c < RTE_COLORS; c++) {
		TEST_ASSERT(tl.n[c] * 100 >= tl.frames * COLOUR_MIN_PCT,
			    "%s: %u %s frames of %u", r->name, tl.n[c],
			    colour_name[c], tl.frames);
		TEST_ASSERT(st.n_pkts[c] == tl.n[c] &&
			    st.n_bytes[c] == tl.bytes[c], "%s: stats: %s %"
			    PRIu64 " frames %" PRIu64 " bytes, %u and %"
			    PRIu64 " seen", r->name, colour_name[c],
			    st.n_pkts[c], st.n_bytes[c], tl.n[c],
			    tl.bytes[c]);
	}
	TEST_ASSERT_EQUAL(st.n_pkts_dropped, 0, "%s: dropped", r->name);
	return TEST_SUCCESS;
}

/*
 * The profiles: byte mode near 1 MB/s (8 Mbit/s), packet mode near 1000
 * frames/s, buckets of a few frames: a batch's tokens come back in
 * milliseconds, and the window of a poll (microseconds) is a small part.
 */
#define SRTCM(c, cb, eb, pm) { .alg = RTE_MTR_SRTCM_RFC2697, \
	.srtcm_rfc2697 = { .cir = (c), .cbs = (cb), .ebs = (eb) }, \
	.packet_mode = (pm) }
#define TRTCM(c, p, cb, pb, pm) { .alg = RTE_MTR_TRTCM_RFC2698, \
	.trtcm_rfc2698 = { .cir = (c), .pir = (p), .cbs = (cb), \
			   .pbs = (pb) }, .packet_mode = (pm) }
#define RFC4115(c, e, cb, eb, pm) { .alg = RTE_MTR_TRTCM_RFC4115, \
	.trtcm_rfc4115 = { .cir = (c), .eir = (e), .cbs = (cb), \
			   .ebs = (eb) }, .packet_mode = (pm) }

static const struct run runs[] = {
	{ "srTCM bytes blind", SRTCM(1000000, 3000, 3000, 0), false },
	{ "srTCM bytes aware", SRTCM(1000000, 3000, 3000, 0), true },
	{ "srTCM frames blind", SRTCM(1000, 3, 3, 1), false },
	{ "srTCM frames aware", SRTCM(1000, 3, 3, 1), true },
	{ "trTCM bytes blind", TRTCM(1000000, 2000000, 3000, 4000, 0),
	  false },
	{ "trTCM bytes aware", TRTCM(1000000, 2000000, 3000, 4000, 0),
	  true },
	{ "trTCM frames blind", TRTCM(1000, 2000, 3, 4, 1), false },
	{ "trTCM frames aware", TRTCM(1000, 2000, 3, 4, 1), true },
	{ "RFC 4115 bytes blind", RFC4115(1000000, 250000, 3000, 3000, 0),
	  false },
	{ "RFC 4115 bytes aware", RFC4115(1000000, 250000, 3000, 3000, 0),
	  true },
	{ "RFC 4115 frames blind", RFC4115(1000, 500, 3, 3, 1), false },
	{ "RFC 4115 frames aware", RFC4115(1000, 500, 3, 3, 1), true },
};

static int
test_srtcm(void)
{
	unsigned int i;

	for (i = 0; i < 4; i++)
		TEST_ASSERT_SUCCESS(run_one(&runs[i]), "%s", runs[i].name);
	return TEST_SUCCESS;
}

static int
test_trtcm(void)
{
	unsigned int i;

	for (i = 4; i < 8; i++)
		TEST_ASSERT_SUCCESS(run_one(&runs[i]), "%s", runs[i].name);
	return TEST_SUCCESS;
}

static int
test_rfc4115(void)
{
	unsigned int i;

	for (i = 8; i < 12; i++)
		TEST_ASSERT_SUCCESS(run_one(&runs[i]), "%s", runs[i].name);
	return TEST_SUCCESS;
}

static int
setup(void)
{
	struct rte_eth_conf conf = { 0 };
	struct rte_flow_action_mark mk[RTE_COLORS] = {
		{ .id = 1 }, { .id = 2 }, { .id = 3 },
	};
	struct rte_flow_action_queue q0 = { .index = 0 };
	struct rte_flow_action acts[RTE_COLORS][3];
	struct rte_mtr_meter_policy_params pol;
	struct rte_mtr_capabilities cap;
	struct rte_mtr_error err;
	unsigned int c;

	memset(&pol, 0, sizeof(pol));
	for (c = 0; c < RTE_COLORS; c++) {
		/* Every colour on queue 0, marked 1 + its enum value. */
		acts[c][0] = (struct rte_flow_action)ACT(MARK, &mk[c]);
		acts[c][1] = (struct rte_flow_action)ACT(QUEUE, &q0);
		acts[c][2] = (struct rte_flow_action)ACT_END;
		pol.actions[c] = acts[c];
	}
	hz = rte_get_tsc_hz();
	TEST_ASSERT(hz >= 100000000, "TSC at %" PRIu64 " Hz", hz);
	TEST_ASSERT_SUCCESS(vbr_test_pair_ports(&port0, &port1), "ports");
	TEST_ASSERT_SUCCESS(vbr_test_port_config(port0, &conf, 1, RING_SIZE,
						 RING_SIZE, mp), "port 0");
	TEST_ASSERT_SUCCESS(vbr_test_port_config(port1, &conf, 1, RING_SIZE,
						 RING_SIZE, mp), "port 1");
	TEST_ASSERT_SUCCESS(vbr_test_pair_start(port0, port1), "start");
	TEST_ASSERT_SUCCESS(rte_eth_macaddr_get(port0, &mac0), "mac 0");
	TEST_ASSERT_SUCCESS(rte_eth_macaddr_get(port1, &mac1), "mac 1");
	/* What the runs need, all of it: none may be skipped. */
	TEST_ASSERT_SUCCESS(rte_mtr_capabilities_get(port1, &cap, &err),
			    "caps: %s", err.message);
	TEST_ASSERT(cap.meter_srtcm_rfc2697_n_max > 0 &&
		    cap.meter_trtcm_rfc2698_n_max > 0 &&
		    cap.meter_trtcm_rfc4115_n_max > 0 &&
		    cap.srtcm_rfc2697_byte_mode_supported &&
		    cap.srtcm_rfc2697_packet_mode_supported &&
		    cap.trtcm_rfc2698_byte_mode_supported &&
		    cap.trtcm_rfc2698_packet_mode_supported &&
		    cap.trtcm_rfc4115_byte_mode_supported &&
		    cap.trtcm_rfc4115_packet_mode_supported &&
		    cap.color_aware_srtcm_rfc2697_supported &&
		    cap.color_aware_trtcm_rfc2698_supported &&
		    cap.color_aware_trtcm_rfc4115_supported &&
		    (cap.input_color_proto_mask &
		     RTE_MTR_COLOR_IN_PROTO_OUTER_IP), "capabilities");
	TEST_ASSERT_SUCCESS(rte_mtr_meter_policy_add(port1, POL_MARKS, &pol,
						     &err), "policy: %s",
			    err.message);
	printf("TSC %.3f MHz\n", hz / 1e6);
	return TEST_SUCCESS;
}

static const struct unit_test_suite suite = {
	.name = "vbr meters at real rates, against RFC 2697/2698/4115",
	.setup = setup,
	.cases = {
		TEST_CASE(test_srtcm),
		TEST_CASE(test_trtcm),
		TEST_CASE(test_rfc4115),
		TEST_CASES_END(),
	},
};

int
main(int argc, char **argv)
{
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: %s <librte_net_vbr.so>\n", argv[0]);
		return 2;
	}
	ret = vbr_test_eal_init(argv[0], argv[1], "pmd.net.vbr:notice",
				"fmrt", NULL);
	if (ret != 0)
		return vbr_test_init_status(ret);
	mp = vbr_test_pool("mtr_rate", 4095);
	if (mp == NULL)
		return 1;
	ret = unit_test_suite_runner(&suite);
	vbr_test_pair_fini(port0, port1, mp);
	return ret;
}
