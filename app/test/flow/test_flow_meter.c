/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Meters. The policer of vbr_mtr.h against DPDK's rte_meter: deterministic
 * traces (times, sizes) give the same colour frame for frame, for every
 * algorithm and mode, through one slot or several taking turns; two
 * threads sharing one meter hand out exactly the tokens it has. Then
 * rte_mtr on two swverbs ports joined by a pair cable: a trTCM meter with
 * CBS 400 and PBS 500 bytes at rates that refill the buckets between
 * frames, its policy sending green to queue 0, yellow to queue 1 and red
 * to the bin; the stats, the lifecycle and the errors.
 */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_flow.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_meter.h>
#include <rte_mtr.h>
#include <rte_udp.h>

#include "test.h"
#include "vbr_test_port.h"
#include "vbr_mtr.h"

#define NSLOTS 4
#define TRACE_LEN 20000

/* A reference rte_meter and its profile. */
struct ref {
	enum rte_mtr_algorithm alg;
	union {
		struct rte_meter_srtcm_profile sr;
		struct rte_meter_trtcm_profile tr;
		struct rte_meter_trtcm_rfc4115_profile t4;
	} p;
	union {
		struct rte_meter_srtcm sr;
		struct rte_meter_trtcm tr;
		struct rte_meter_trtcm_rfc4115 t4;
	} m;
};

static int
ref_init(struct ref *r, const struct rte_mtr_meter_profile *mp, uint64_t t0)
{
	r->alg = mp->alg;
	switch (mp->alg) {
	case RTE_MTR_SRTCM_RFC2697: {
		struct rte_meter_srtcm_params a = {
			mp->srtcm_rfc2697.cir, mp->srtcm_rfc2697.cbs,
			mp->srtcm_rfc2697.ebs,
		};

		if (rte_meter_srtcm_profile_config(&r->p.sr, &a) != 0 ||
		    rte_meter_srtcm_config(&r->m.sr, &r->p.sr) != 0)
			return -1;
		r->m.sr.time = t0;
		return 0;
	}
	case RTE_MTR_TRTCM_RFC2698: {
		struct rte_meter_trtcm_params a = {
			mp->trtcm_rfc2698.cir, mp->trtcm_rfc2698.pir,
			mp->trtcm_rfc2698.cbs, mp->trtcm_rfc2698.pbs,
		};

		if (rte_meter_trtcm_profile_config(&r->p.tr, &a) != 0 ||
		    rte_meter_trtcm_config(&r->m.tr, &r->p.tr) != 0)
			return -1;
		r->m.tr.time_tc = t0;
		r->m.tr.time_tp = t0;
		return 0;
	}
	default: {
		struct rte_meter_trtcm_rfc4115_params a = {
			mp->trtcm_rfc4115.cir, mp->trtcm_rfc4115.eir,
			mp->trtcm_rfc4115.cbs, mp->trtcm_rfc4115.ebs,
		};

		if (rte_meter_trtcm_rfc4115_profile_config(&r->p.t4, &a) != 0 ||
		    rte_meter_trtcm_rfc4115_config(&r->m.t4, &r->p.t4) != 0)
			return -1;
		r->m.t4.time_tc = t0;
		r->m.t4.time_te = t0;
		return 0;
	}
	}
}

static enum rte_color
ref_check(struct ref *r, uint64_t t, uint32_t len)
{
	switch (r->alg) {
	case RTE_MTR_SRTCM_RFC2697:
		return rte_meter_srtcm_color_blind_check(&r->m.sr, &r->p.sr,
							 t, len);
	case RTE_MTR_TRTCM_RFC2698:
		return rte_meter_trtcm_color_blind_check(&r->m.tr, &r->p.tr,
							 t, len);
	default:
		return rte_meter_trtcm_rfc4115_color_blind_check(&r->m.t4,
							&r->p.t4, t, len);
	}
}

static enum rte_color
ref_check_aware(struct ref *r, uint64_t t, uint32_t len, enum rte_color in)
{
	switch (r->alg) {
	case RTE_MTR_SRTCM_RFC2697:
		return rte_meter_srtcm_color_aware_check(&r->m.sr, &r->p.sr,
							 t, len, in);
	case RTE_MTR_TRTCM_RFC2698:
		return rte_meter_trtcm_color_aware_check(&r->m.tr, &r->p.tr,
							 t, len, in);
	default:
		return rte_meter_trtcm_rfc4115_color_aware_check(&r->m.t4,
							&r->p.t4, t, len, in);
	}
}

static struct vbr_mtr_rt *
rt_new(struct vbr_mtr_prm *prm, uint64_t t0)
{
	struct vbr_mtr_rt *rt = aligned_alloc(RTE_CACHE_LINE_SIZE,
		RTE_ALIGN_CEIL(vbr_mtr_rt_size(vbr_mtr_rt_nslots(NSLOTS)),
			       RTE_CACHE_LINE_SIZE));

	if (rt == NULL)
		return NULL;
	memset(rt, 0, vbr_mtr_rt_size(vbr_mtr_rt_nslots(NSLOTS)));
	vbr_mtr_rt_init(rt, NSLOTS, vbr_mtr_own_setup());
	vbr_mtr_rt_reset(rt, NSLOTS - 1, prm, t0);
	return rt;
}

/* Profiles of every algorithm; packet mode gets rates in frames. */
static const struct rte_mtr_meter_profile profiles[] = {
	{ .alg = RTE_MTR_SRTCM_RFC2697,
	  .srtcm_rfc2697 = { .cir = 1250000, .cbs = 2048, .ebs = 4096 } },
	{ .alg = RTE_MTR_TRTCM_RFC2698,
	  .trtcm_rfc2698 = { .cir = 1250000, .pir = 2500000, .cbs = 2048,
			     .pbs = 4096 } },
	{ .alg = RTE_MTR_TRTCM_RFC4115,
	  .trtcm_rfc4115 = { .cir = 1250000, .eir = 1250000, .cbs = 2048,
			     .ebs = 4096 } },
	{ .alg = RTE_MTR_SRTCM_RFC2697, .packet_mode = 1,
	  .srtcm_rfc2697 = { .cir = 10000, .cbs = 64, .ebs = 128 } },
	{ .alg = RTE_MTR_TRTCM_RFC2698, .packet_mode = 1,
	  .trtcm_rfc2698 = { .cir = 100000, .pir = 200000, .cbs = 32,
			     .pbs = 64 } },
	{ .alg = RTE_MTR_TRTCM_RFC4115, .packet_mode = 1,
	  .trtcm_rfc4115 = { .cir = 100000, .eir = 50000, .cbs = 32,
			     .ebs = 64 } },
};

static const char *const alg_name[] = {
	[RTE_MTR_SRTCM_RFC2697] = "srtcm_rfc2697",
	[RTE_MTR_TRTCM_RFC2698] = "trtcm_rfc2698",
	[RTE_MTR_TRTCM_RFC4115] = "trtcm_rfc4115",
};

/*
 * A trace with bursts and gaps, frames of 60 to 1514 bytes, fed to the
 * policer through slots taking turns (slots = 1: one) and to rte_meter;
 * once in a while a time from before the last one (an lcore that read its
 * TSC earlier), which the policer feeds rte_meter as the last time.
 * aware: each frame has a random input colour, through rte_meter's
 * colour-aware checks.
 */
static int
trace_gaps(unsigned int slots, bool runs, bool aware, bool idle)
{
	uint64_t hz = rte_get_tsc_hz();
	unsigned int i, k, c, r;

	for (k = 0; k < RTE_DIM(profiles); k++) {
		const struct rte_mtr_meter_profile *mp = &profiles[k];
		uint64_t seen[RTE_COLORS] = { 0 };
		uint64_t t0 = 1000000, t = t0, last = t0;
		struct vbr_mtr_prm prm;
		struct vbr_mtr_rt *rt;
		struct ref ref;

		TEST_ASSERT_SUCCESS(vbr_mtr_prm_config(&prm, mp), "profile");
		TEST_ASSERT_SUCCESS(ref_init(&ref, mp, t0), "reference");
		rt = rt_new(&prm, t0);
		TEST_ASSERT_NOT_NULL(rt, "runtime");
		srand(k + 1);
		for (i = 0; i < TRACE_LEN; i += r) {
			uint32_t len[32];
			uint8_t got[32], in[32];
			uint64_t at;

			/* Mostly back to back, sometimes a gap. */
			if (idle && rand() % 64 == 0)
				t += (uint64_t)rand() * (rand() % 4096 + 1);
			else if (rand() % 16 == 0)
				t += rand() % (hz / 1000);
			else
				t += rand() % (hz / 1000000 + 1);
			at = t;
			if (rand() % 64 == 0 && t > t0 + 1000)
				at = t - 1000;	/* an earlier TSC */
			last = RTE_MAX(last, at);
			/* A burst's run of frames of one meter, or one. */
			r = runs ? 1 + rand() % 32 : 1;
			for (c = 0; c < r; c++) {
				len[c] = 60 + rand() % 1455;
				/* Mostly green in, as a marker upstream. */
				in[c] = aware && rand() % 4 == 0 ?
					1 + rand() % 2 : 0;
			}
			if (runs)
				vbr_mtr_color_n(rt, i % slots, at, len, r,
						aware ? in : NULL, got);
			else if (aware)
				got[0] = vbr_mtr_color_aware(rt, i % slots, at,
					len[0], (enum rte_color)in[0]);
			else
				got[0] = vbr_mtr_color(rt, i % slots, at, len[0]);
			for (c = 0; c < r; c++) {
				uint32_t l = mp->packet_mode ? 1 : len[c];
				enum rte_color want = aware ?
					ref_check_aware(&ref, last, l,
						(enum rte_color)in[c]) :
					ref_check(&ref, last, l);

				TEST_ASSERT_EQUAL(got[c], want, "%s%s frame %u: "
						  "colour %d, rte_meter %d",
						  alg_name[mp->alg],
						  mp->packet_mode ?
						  " packet mode" : "", i + c,
						  got[c], want);
				seen[got[c]]++;
			}
		}
		/*
		 * The trace reaches every colour, or it tests little; with
		 * idle gaps, green and another (packet mode's buckets of
		 * 32 to 128 frames fill up between most gaps).
		 */
		for (c = 0; c < RTE_COLORS; c++)
			TEST_ASSERT(seen[c] > 0 || (idle && c > 0 &&
				    seen[1] + seen[2] > 0),
				    "%s%s: no frame of colour %u (%" PRIu64
				    " %" PRIu64 " %" PRIu64 ")",
				    alg_name[mp->alg], mp->packet_mode ?
				    " packet mode" : "", c, seen[0], seen[1],
				    seen[2]);
		printf("  ok: %s%s, %u slot%s%s%s: %" PRIu64 " green, %"
		       PRIu64 " yellow, %" PRIu64 " red\n", alg_name[mp->alg],
		       mp->packet_mode ? " packet mode" : "", slots,
		       slots > 1 ? "s" : "", runs ? ", runs" : "",
		       aware ? ", colour-aware" : "", seen[0], seen[1],
		       seen[2]);
		free(rt);
	}
	return TEST_SUCCESS;
}

/* The trace of trace_gaps() with gaps of up to 1 ms. */
static int
trace(unsigned int slots, bool runs, bool aware)
{
	return trace_gaps(slots, runs, aware, false);
}

static int
test_trace_one_slot(void)
{
	return trace(1, false, false);
}

static int
test_trace_slots(void)
{
	return trace(NSLOTS - 1, false, false);
}

/* Runs of up to 32 frames at one time, one CAS each (an Rx chunk). */
static int
test_trace_runs(void)
{
	return trace(NSLOTS - 1, true, false);
}

/* Colour-aware: one slot, slots taking turns, runs. */
static int
test_trace_aware(void)
{
	TEST_ASSERT_SUCCESS(trace(1, false, true), "one slot");
	TEST_ASSERT_SUCCESS(trace(NSLOTS - 1, false, true), "slots");
	return trace(NSLOTS - 1, true, true);
}

/*
 * Idle gaps too, up to 2^43 cycles (an hour at 2.4 GHz) between frames:
 * buckets refilled from empty to full, against rte_meter fed the same
 * times; one slot and runs, colour-blind and colour-aware.
 */
static int
test_trace_idle(void)
{
	TEST_ASSERT_SUCCESS(trace_gaps(1, false, false, true), "one slot");
	TEST_ASSERT_SUCCESS(trace_gaps(NSLOTS - 1, true, true, true), "runs");
	return TEST_SUCCESS;
}

/*
 * Offered load at 2x CIR: the green share is CIR / offered, within 1 %.
 * Deterministic, not real time: frames of 1000 bytes at exact arrival
 * times (TSC values) for 2x CIR go through the policer, packet for packet
 * equal to rte_meter fed the same times; a real-time test would measure
 * the machine's load instead (the lcore polls late, bursts pile up).
 * srTCM (CIR 1.25 MB/s), trTCM (CIR 1.25, PIR 2 MB/s: yellow is
 * (PIR - CIR) / offered) and RFC 4115 (CIR 1.25, EIR 0.5 MB/s), over
 * 10 simulated seconds so that the first burst's share is below 0.1 %.
 */
static int
test_green_share(void)
{
	static const struct rte_mtr_meter_profile ps[] = {
		{ .alg = RTE_MTR_SRTCM_RFC2697,
		  .srtcm_rfc2697 = { .cir = 1250000, .cbs = 4000,
				     .ebs = 4000 } },
		{ .alg = RTE_MTR_TRTCM_RFC2698,
		  .trtcm_rfc2698 = { .cir = 1250000, .pir = 2000000,
				     .cbs = 4000, .pbs = 4000 } },
		{ .alg = RTE_MTR_TRTCM_RFC4115,
		  .trtcm_rfc4115 = { .cir = 1250000, .eir = 500000,
				     .cbs = 4000, .ebs = 4000 } },
	};
	/* Shares of the offered 2.5 MB/s the profiles give. */
	static const double want_y[] = { 0.0, 0.3, 0.2 };
	const uint64_t hz = rte_get_tsc_hz(), offered = 2500000;
	const unsigned int size = 1000, n = 10 * offered / size;
	unsigned int k, i;

	for (k = 0; k < RTE_DIM(ps); k++) {
		uint64_t seen[RTE_COLORS] = { 0 }, t0 = 1000;
		struct vbr_mtr_prm prm;
		struct vbr_mtr_rt *rt;
		struct ref ref;
		double g, y;

		TEST_ASSERT_SUCCESS(vbr_mtr_prm_config(&prm, &ps[k]), "prm");
		TEST_ASSERT_SUCCESS(ref_init(&ref, &ps[k], t0), "reference");
		rt = rt_new(&prm, t0);
		TEST_ASSERT_NOT_NULL(rt, "runtime");
		for (i = 0; i < n; i++) {
			/* Frame i arrives at i * size / offered seconds. */
			uint64_t t = t0 + (uint64_t)((double)i * size * hz /
						     offered);
			enum rte_color c = vbr_mtr_color(rt, i % 2, t, size);

			TEST_ASSERT_EQUAL(c, ref_check(&ref, t, size),
					  "%s frame %u", alg_name[ps[k].alg],
					  i);
			seen[c]++;
		}
		g = (double)seen[RTE_COLOR_GREEN] / n;
		y = (double)seen[RTE_COLOR_YELLOW] / n;
		printf("  %s at 2x CIR: green %.4f (0.5), yellow %.4f (%.1f)\n",
		       alg_name[ps[k].alg], g, y, want_y[k]);
		TEST_ASSERT(g > 0.495 && g < 0.505, "green share %.4f", g);
		TEST_ASSERT(y > want_y[k] - 0.005 && y < want_y[k] + 0.005,
			    "yellow share %.4f", y);
		free(rt);
	}
	return TEST_SUCCESS;
}

/* Frames' headers for the input colour tests. */
static unsigned int
put_eth(uint8_t *f, const uint16_t *tci, unsigned int ntags, uint16_t type)
{
	unsigned int o = 12, i;

	memset(f, 0, 12);
	for (i = 0; i < ntags; i++) {
		f[o] = i == 0 && ntags > 1 ? 0x88 : 0x81;
		f[o + 1] = i == 0 && ntags > 1 ? 0xa8 : 0x00;
		f[o + 2] = tci[i] >> 8;
		f[o + 3] = tci[i] & 0xff;
		o += 4;
	}
	f[o] = type >> 8;
	f[o + 1] = type & 0xff;
	return o + 2;
}

static unsigned int
put_ip4(uint8_t *f, unsigned int o, uint8_t dscp, uint8_t proto)
{
	memset(f + o, 0, 20);
	f[o] = 0x45;
	f[o + 1] = dscp << 2 | 1;	/* ECN bits must not count */
	f[o + 9] = proto;
	return o + 20;
}

static unsigned int
put_ip6(uint8_t *f, unsigned int o, uint8_t dscp, uint8_t next)
{
	uint8_t tc = dscp << 2 | 2;

	memset(f + o, 0, 40);
	f[o] = 0x60 | tc >> 4;
	f[o + 1] = (tc & 0xf) << 4 | 0xa;	/* flow label bits */
	f[o + 6] = next;
	return o + 40;
}

/*
 * Input colours from headers: IPv4 DSCP and IPv6 traffic class, outer and
 * inner (IP in IP, VXLAN), outer and inner VLAN (PCP << 1 | DEI), in the
 * meter's priority order, and the default when no enabled header is
 * there.
 */
static int
test_in_colour(void)
{
	static struct vbr_mtr_in in;
	uint8_t f[256];
	unsigned int o, p, i;
	uint16_t tci[2];
#define ORD(a, b) ((uint32_t)(a) | (uint32_t)(b) << 4)
	const uint32_t ip_first = ORD(3, 1) | RTE_COLOR_YELLOW << 16;
	const uint32_t vlan_first = ORD(1, 3) | RTE_COLOR_RED << 16;
	const uint32_t inner = ORD(4, 2) | RTE_COLOR_YELLOW << 16;

	/* A distinct colour pattern per table: entry e of table p. */
	for (p = 0; p < VBR_MTR_IN_PROTOS; p++)
		for (i = 0; i < VBR_MTR_IN_DSCP; i++)
			in.tab[p][i] = (i + p) % 3;
#define COL(p, e) (((e) + (p)) % 3)
	/* IPv4, DSCP 46, no VLAN. */
	o = put_eth(f, NULL, 0, 0x0800);
	o = put_ip4(f, o, 46, 17);
	TEST_ASSERT_EQUAL(vbr_mtr_in_colour(&in, ip_first, f, o), COL(2, 46),
			  "ipv4 dscp");
	TEST_ASSERT_EQUAL(vbr_mtr_in_colour(&in, vlan_first, f, o),
			  COL(2, 46), "no vlan: ip next");
	TEST_ASSERT_EQUAL(vbr_mtr_in_colour(&in, ORD(1, 0) |
			  RTE_COLOR_RED << 16, f, o), RTE_COLOR_RED,
			  "only vlan enabled, none there: default");
	TEST_ASSERT_EQUAL(vbr_mtr_in_colour(&in, RTE_COLOR_RED << 16, f, o),
			  RTE_COLOR_RED, "nothing enabled: default");
	TEST_ASSERT_EQUAL(vbr_mtr_in_colour(&in, ip_first, f, o - 1),
			  RTE_COLOR_YELLOW, "truncated: default");
	/* IPv6 traffic class, DSCP 10. */
	o = put_eth(f, NULL, 0, 0x86dd);
	o = put_ip6(f, o, 10, 17);
	TEST_ASSERT_EQUAL(vbr_mtr_in_colour(&in, ip_first, f, o), COL(2, 10),
			  "ipv6 traffic class");
	/* VLAN PCP 5 DEI 1, IPv4 DSCP 7: the priority decides. */
	tci[0] = 5 << 13 | 1 << 12 | 100;
	o = put_eth(f, tci, 1, 0x0800);
	o = put_ip4(f, o, 7, 6);
	TEST_ASSERT_EQUAL(vbr_mtr_in_colour(&in, ip_first, f, o), COL(2, 7),
			  "ip before vlan");
	TEST_ASSERT_EQUAL(vbr_mtr_in_colour(&in, vlan_first, f, o),
			  COL(0, 11), "vlan before ip: pcp 5 dei 1");
	TEST_ASSERT_EQUAL(vbr_mtr_in_colour(&in, ORD(2, 0), f, o),
			  COL(1, 11), "one tag: inner vlan is it");
	/* QinQ: outer PCP 1, inner PCP 6. */
	tci[0] = 1 << 13 | 10;
	tci[1] = 6 << 13 | 20;
	o = put_eth(f, tci, 2, 0x86dd);
	o = put_ip6(f, o, 33, 17);
	TEST_ASSERT_EQUAL(vbr_mtr_in_colour(&in, vlan_first, f, o),
			  COL(0, 2), "qinq outer");
	TEST_ASSERT_EQUAL(vbr_mtr_in_colour(&in, inner, f, o), COL(3, 33),
			  "qinq: inner ip first (one ip: the outer)");
	TEST_ASSERT_EQUAL(vbr_mtr_in_colour(&in, ORD(2, 4), f, o),
			  COL(1, 12), "qinq inner vlan");
	/* The device stripped the outer tag (PCP 4 DEI 1): the tag left in
	 * the data (PCP 6) is the inner one; none left: the stripped is both.
	 */
	o = put_eth(f, tci + 1, 1, 0x86dd);
	o = put_ip6(f, o, 33, 17);
	TEST_ASSERT_EQUAL(vbr_mtr_in_colour_vlan(&in, vlan_first, f, o,
			  4 << 13 | 1 << 12 | 10), COL(0, 9),
			  "stripped outer vlan");
	TEST_ASSERT_EQUAL(vbr_mtr_in_colour_vlan(&in, ORD(2, 0), f, o,
			  4 << 13 | 1 << 12 | 10), COL(1, 12),
			  "stripped: the data's tag is the inner");
	o = put_eth(f, NULL, 0, 0x86dd);
	o = put_ip6(f, o, 33, 17);
	TEST_ASSERT_EQUAL(vbr_mtr_in_colour_vlan(&in, ORD(2, 0), f, o,
			  4 << 13 | 10), COL(1, 8),
			  "stripped, no tag left: inner is the stripped");
	/* IPv4 in IPv6: outer DSCP 8, inner 40. */
	o = put_eth(f, NULL, 0, 0x86dd);
	o = put_ip6(f, o, 8, 4);
	o = put_ip4(f, o, 40, 17);
	TEST_ASSERT_EQUAL(vbr_mtr_in_colour(&in, ip_first, f, o), COL(2, 8),
			  "ip in ip: outer");
	TEST_ASSERT_EQUAL(vbr_mtr_in_colour(&in, inner, f, o), COL(3, 40),
			  "ip in ip: inner");
	/* VXLAN: outer IPv4 DSCP 4, inner VLAN PCP 3, inner IPv6 DSCP 50. */
	o = put_eth(f, NULL, 0, 0x0800);
	o = put_ip4(f, o, 4, 17);
	memset(f + o, 0, 16);
	f[o + 2] = 4789 >> 8;
	f[o + 3] = 4789 & 0xff;
	o += 16;
	tci[0] = 3 << 13;
	o = put_eth(f + o, tci, 1, 0x86dd) + o;
	o = put_ip6(f, o, 50, 17);
	TEST_ASSERT_EQUAL(vbr_mtr_in_colour(&in, ip_first, f, o), COL(2, 4),
			  "vxlan: outer ip");
	TEST_ASSERT_EQUAL(vbr_mtr_in_colour(&in, inner, f, o), COL(3, 50),
			  "vxlan: inner ip");
	TEST_ASSERT_EQUAL(vbr_mtr_in_colour(&in, ORD(2, 0), f, o), COL(1, 6),
			  "vxlan: inner vlan");
	TEST_ASSERT_EQUAL(vbr_mtr_in_colour(&in, vlan_first, f, o),
			  COL(2, 4), "vxlan: no outer vlan");
#undef COL
#undef ORD
	return TEST_SUCCESS;
}

/* A new profile starts with full buckets; the old one no longer counts. */
static int
test_reset(void)
{
	struct rte_mtr_meter_profile a = profiles[0], b = profiles[0];
	struct vbr_mtr_prm pa, pb;
	struct vbr_mtr_rt *rt;
	unsigned int i, green = 0;

	b.srtcm_rfc2697.cbs = 4000;
	TEST_ASSERT_SUCCESS(vbr_mtr_prm_config(&pa, &a), "a");
	TEST_ASSERT_SUCCESS(vbr_mtr_prm_config(&pb, &b), "b");
	rt = rt_new(&pa, 100);
	TEST_ASSERT_NOT_NULL(rt, "runtime");
	for (i = 0; i < 10; i++)
		green += vbr_mtr_color(rt, 0, 100, 1000) == RTE_COLOR_GREEN;
	TEST_ASSERT_EQUAL(green, 2, "cbs 2048: two green 1000-byte frames");
	vbr_mtr_rt_reset(rt, NSLOTS - 1, &pb, 100);
	for (i = 0, green = 0; i < 10; i++)
		green += vbr_mtr_color(rt, 1, 100, 1000) == RTE_COLOR_GREEN;
	TEST_ASSERT_EQUAL(green, 4, "cbs 4000 after the update: four");
	free(rt);
	return TEST_SUCCESS;
}

#define SHARE_FRAMES 1000000

struct share {
	struct vbr_mtr_rt *rt;
	unsigned int slot;
	unsigned int *ready;
	uint64_t n[RTE_COLORS];
};

static void *
share_run(void *arg)
{
	struct share *s = arg;
	unsigned int i;

	/* Both threads in the loop at once, as far as the CPUs allow. */
	__atomic_fetch_add(s->ready, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(s->ready, __ATOMIC_ACQUIRE) < 2)
		;
	for (i = 0; i < SHARE_FRAMES; i++)
		s->n[vbr_mtr_color(s->rt, s->slot, 5000, 100)]++;
	return NULL;
}

/*
 * Two threads on one meter at one fixed time (no refill): the buckets
 * hold cbs and ebs bytes, so exactly cbs / 100 frames are green and
 * ebs / 100 yellow between them, however their CASes interleave. A
 * policer that lost or doubled an update would give more.
 */
static int
test_shared_exact(void)
{
	struct rte_mtr_meter_profile mp = {
		.alg = RTE_MTR_SRTCM_RFC2697,
		.srtcm_rfc2697 = { .cir = 1000, .cbs = 100000000,
				   .ebs = 50000000 },
	};
	struct share s[2];
	pthread_t th[2];
	unsigned int ready = 0;
	struct vbr_mtr_prm prm;
	uint64_t n[RTE_COLORS] = { 0 };
	unsigned int i, c;

	TEST_ASSERT_SUCCESS(vbr_mtr_prm_config(&prm, &mp), "profile");
	for (i = 0; i < 2; i++) {
		memset(&s[i], 0, sizeof(s[i]));
		s[i].slot = i;
		s[i].ready = &ready;
	}
	s[0].rt = rt_new(&prm, 5000);
	TEST_ASSERT_NOT_NULL(s[0].rt, "runtime");
	s[1].rt = s[0].rt;
	for (i = 0; i < 2; i++)
		TEST_ASSERT_SUCCESS(pthread_create(&th[i], NULL, share_run,
						   &s[i]), "thread");
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	for (c = 0; c < RTE_COLORS; c++)
		n[c] = s[0].n[c] + s[1].n[c];
	printf("  two threads: %" PRIu64 " green (%" PRIu64 " + %" PRIu64
	       "), %" PRIu64 " yellow, %" PRIu64 " red\n", n[0], s[0].n[0],
	       s[1].n[0], n[1], n[2]);
	TEST_ASSERT_EQUAL(n[RTE_COLOR_GREEN], 1000000, "green: cbs / 100");
	TEST_ASSERT_EQUAL(n[RTE_COLOR_YELLOW], 500000, "yellow: ebs / 100");
	TEST_ASSERT_EQUAL(n[RTE_COLOR_RED], 2 * SHARE_FRAMES - 1500000,
			  "red");
	free(s[0].rt);
	return TEST_SUCCESS;
}

/*
 * One slot alone takes the meter (runs publish with a plain store, no
 * CAS); another slot's run revokes it for good, the control path's too,
 * and a reset leaves it to the next slot that runs it. Colours as
 * rte_meter's all along.
 */
static int
test_owner(void)
{
	const struct rte_mtr_meter_profile *mp = &profiles[1];
	struct vbr_mtr_prm prm;
	struct vbr_mtr_rt *rt;
	struct ref ref;
	uint64_t t = 1000;
	unsigned int i;

	if (!vbr_mtr_own_setup()) {
		printf("  no membarrier(2): meters are never owned\n");
		return TEST_SKIPPED;
	}
	TEST_ASSERT_SUCCESS(vbr_mtr_prm_config(&prm, mp), "profile");
	TEST_ASSERT_SUCCESS(ref_init(&ref, mp, t), "reference");
	rt = rt_new(&prm, t);
	TEST_ASSERT_NOT_NULL(rt, "runtime");
	TEST_ASSERT_EQUAL((uint32_t)rt->cur & (VBR_MTR_CUR_OWNED |
		VBR_MTR_CUR_SHARED), 0, "a new meter has no owner");
	for (i = 0; i < 3000; i++) {
		unsigned int slot = i < 1000 ? 0 : i < 2000 ? 1 : 2;
		uint32_t cur;

		if (i == 2000) {
			/* A reset: no owner, the next run's slot takes it. */
			vbr_mtr_rt_reset(rt, vbr_mtr_rt_ctrl(rt), &prm, t);
			TEST_ASSERT_SUCCESS(ref_init(&ref, mp, t), "reference");
		}
		t += rand() % 20000;
		TEST_ASSERT_EQUAL(vbr_mtr_color(rt, slot, t, 100),
				  ref_check(&ref, t, 100), "frame %u", i);
		cur = (uint32_t)rt->cur;
		if (i < 1000 || i >= 2000) {
			TEST_ASSERT(cur & VBR_MTR_CUR_OWNED,
				    "frame %u: slot %u alone owns it", i, slot);
			TEST_ASSERT_EQUAL((cur & VBR_MTR_CUR_REC) / 2, slot,
					  "frame %u: the owner's record", i);
		} else {
			TEST_ASSERT_EQUAL(cur & (VBR_MTR_CUR_OWNED |
				VBR_MTR_CUR_SHARED), VBR_MTR_CUR_SHARED,
				"frame %u: slot 1 revoked slot 0, for good", i);
		}
	}
	/* The control path revokes too; shared slots never own. */
	vbr_mtr_rt_revoke(rt, &(uint64_t){ rt->cur });
	TEST_ASSERT(!((uint32_t)rt->cur & VBR_MTR_CUR_OWNED), "revoked");
	vbr_mtr_rt_reset(rt, vbr_mtr_rt_ctrl(rt), &prm, t);
	vbr_mtr_color(rt, NSLOTS, t, 100);
	TEST_ASSERT(!((uint32_t)rt->cur & VBR_MTR_CUR_OWNED),
		    "the shared slot does not take a meter");
	free(rt);
	return TEST_SUCCESS;
}

/* Whether byte off of a runtime lies in one of the lines l[0, n). */
static bool
in_lines(const struct vbr_mtr_rt *rt, size_t off, const uintptr_t *l,
	 unsigned int n)
{
	uintptr_t a = (uintptr_t)rt + off;
	unsigned int i;

	for (i = 0; i < n; i++)
		if (a >= l[i] && a < l[i] + RTE_CACHE_LINE_SIZE)
			return true;
	return false;
}

/*
 * The owner of a meter runs its record in place: a run and its counts
 * change no byte outside the lines vbr_mtr_rt_lines() names for its slot
 * (what the Rx burst prefetches): not cur (the owner publishes nothing),
 * not the slot's other record, no other slot; for every algorithm and
 * mode, runs of 1 to 32 frames, colours as rte_meter's all along. Then a
 * revocation hands the owner's state on whole: the next run, from another
 * slot, still colours as rte_meter.
 */
static int
test_owner_lines(void)
{
	size_t sz = vbr_mtr_rt_size(vbr_mtr_rt_nslots(NSLOTS));
	uint8_t *before = malloc(sz);
	unsigned int k, o, i, c, r;

	RTE_BUILD_BUG_ON(offsetof(struct vbr_mtr_rt, in.order) +
			 sizeof(uint32_t) > RTE_CACHE_LINE_SIZE);
	TEST_ASSERT_NOT_NULL(before, "snapshot");
	if (!vbr_mtr_own_setup()) {
		free(before);
		return TEST_SKIPPED;
	}
	for (k = 0; k < RTE_DIM(profiles); k++) {
		/* Slot 0 owns, then slot 2 (rt_new() resets from slot 3). */
		for (o = 0; o < 3; o += 2) {
			const struct rte_mtr_meter_profile *mp = &profiles[k];
			uint64_t t = 1000000;
			uintptr_t l[VBR_MTR_RT_LINES];
			struct vbr_mtr_prm prm;
			struct vbr_mtr_rt *rt;
			unsigned int nl;
			struct ref ref;
			uint64_t cur;

			TEST_ASSERT_SUCCESS(vbr_mtr_prm_config(&prm, mp),
					    "profile");
			TEST_ASSERT_SUCCESS(ref_init(&ref, mp, t), "reference");
			rt = rt_new(&prm, t);
			TEST_ASSERT_NOT_NULL(rt, "runtime");
			nl = vbr_mtr_rt_lines(rt, (int)o, l);
			TEST_ASSERT_EQUAL(nl, VBR_MTR_RT_LINES, "lines");
			srand(k * 3 + o + 1);
			for (i = 0; i < 400; i++) {
				uint32_t len[32];
				uint8_t got[32];

				t += rand() % 5000;
				r = 1 + rand() % 32;
				for (c = 0; c < r; c++)
					len[c] = 60 + rand() % 1455;
				memcpy(before, rt, sz);
				cur = __atomic_load_n(&rt->cur,
						      __ATOMIC_RELAXED);
				vbr_mtr_color_n(rt, o, t, len, r, NULL, got);
				for (c = 0; c < r; c++) {
					uint32_t pl = mp->packet_mode ?
						      1 : len[c];

					TEST_ASSERT_EQUAL(got[c],
						ref_check(&ref, t, pl),
						"%s frame %u", alg_name[mp->alg],
						c);
					vbr_mtr_count(rt, o,
						(enum rte_color)got[c], len[c],
						got[c] == RTE_COLOR_RED);
				}
				if (i == 0) {
					/* The first run takes the meter. */
					TEST_ASSERT((uint32_t)rt->cur &
						    VBR_MTR_CUR_OWNED,
						    "slot %u owns it", o);
					continue;
				}
				TEST_ASSERT_EQUAL(rt->cur, cur, "%s, owner %u, "
						  "run %u: cur written",
						  alg_name[mp->alg], o, i);
				for (c = 0; c < sz; c++)
					TEST_ASSERT(before[c] ==
						    ((uint8_t *)rt)[c] ||
						    in_lines(rt, c, l, nl),
						    "%s, owner %u, run %u: "
						    "byte %u written, outside "
						    "the prefetched lines",
						    alg_name[mp->alg], o, i, c);
			}
			/* Another slot revokes and goes on from the state. */
			t += 3000;
			TEST_ASSERT_EQUAL(vbr_mtr_color(rt, 1, t, 700),
					  ref_check(&ref, t, mp->packet_mode ?
						    1 : 700), "after revoke");
			TEST_ASSERT_EQUAL((uint32_t)rt->cur &
					  (VBR_MTR_CUR_OWNED |
					   VBR_MTR_CUR_SHARED),
					  VBR_MTR_CUR_SHARED, "revoked");
			free(rt);
		}
	}
	printf("  %zu profiles, owners 0 and 2: runs write %u lines, cur "
	       "untouched\n", RTE_DIM(profiles), VBR_MTR_RT_LINES);
	free(before);
	return TEST_SUCCESS;
}

#define LATE_ROUNDS 300
#define LATE_FRAMES 20000
/* Slot 0, the owner, and the slots that join it (a revoker and others). */
#define LATE_THREADS 3

struct late {
	struct vbr_mtr_rt *rt;
	unsigned int slot;
	unsigned int *go;	/* 1: slot 0 runs; 2: the others too */
	uint64_t n[RTE_COLORS];
};

static void *
late_run(void *arg)
{
	struct late *l = arg;
	unsigned int i;

	if (l->slot == 0)
		__atomic_store_n(l->go, 1, __ATOMIC_RELEASE);
	else	/* join while slot 0 owns the meter and runs it */
		while (__atomic_load_n(l->go, __ATOMIC_ACQUIRE) < 2)
			;
	for (i = 0; i < LATE_FRAMES; i++) {
		uint32_t len[4] = { 100, 100, 100, 100 };
		uint8_t c[4];
		unsigned int k;

		vbr_mtr_color_n(l->rt, l->slot, 5000, len, 4, NULL, c);
		for (k = 0; k < 4; k++)
			l->n[c[k]]++;
		if (l->slot == 0 && i == LATE_FRAMES / 8)
			__atomic_store_n(l->go, 2, __ATOMIC_RELEASE);
	}
	return NULL;
}

/*
 * A second lcore joins a meter the first owns, while the first runs it,
 * many times over (a reset between rounds gives it back its owner): at
 * one fixed time the buckets hand out exactly cbs and ebs bytes per round
 * between the two, so the revocation lost no update of the owner's (a
 * plain store of the owner over the other's CAS would give more green).
 */
static int
test_owner_revoked_exact(void)
{
	struct rte_mtr_meter_profile mp = {
		.alg = RTE_MTR_SRTCM_RFC2697,
		.srtcm_rfc2697 = { .cir = 1000, .cbs = 4000000,
				   .ebs = 2000000 },
	};
	struct vbr_mtr_prm prm;
	struct vbr_mtr_rt *rt;
	unsigned int r, i, c;

	if (!vbr_mtr_own_setup())
		return TEST_SKIPPED;
	TEST_ASSERT_SUCCESS(vbr_mtr_prm_config(&prm, &mp), "profile");
	rt = rt_new(&prm, 5000);
	TEST_ASSERT_NOT_NULL(rt, "runtime");
	for (r = 0; r < LATE_ROUNDS; r++) {
		struct late l[LATE_THREADS];
		pthread_t th[LATE_THREADS];
		unsigned int go = 0;
		uint64_t n[RTE_COLORS] = { 0 };

		vbr_mtr_rt_reset(rt, vbr_mtr_rt_ctrl(rt), &prm, 5000);
		for (i = 0; i < LATE_THREADS; i++) {
			memset(&l[i], 0, sizeof(l[i]));
			l[i].rt = rt;
			l[i].slot = i;
			l[i].go = &go;
			TEST_ASSERT_SUCCESS(pthread_create(&th[i], NULL,
				late_run, &l[i]), "thread");
		}
		for (i = 0; i < LATE_THREADS; i++)
			pthread_join(th[i], NULL);
		for (i = 0; i < LATE_THREADS; i++)
			for (c = 0; c < RTE_COLORS; c++)
				n[c] += l[i].n[c];
		TEST_ASSERT_EQUAL(n[RTE_COLOR_GREEN], 40000, "round %u: green "
				  "%" PRIu64 " (slot 0 %" PRIu64 "), not cbs / 100",
				  r, n[0], l[0].n[0]);
		TEST_ASSERT_EQUAL(n[RTE_COLOR_YELLOW], 20000, "round %u: "
				  "yellow %" PRIu64 ", not ebs / 100", r, n[1]);
		TEST_ASSERT((uint32_t)rt->cur & VBR_MTR_CUR_SHARED,
			    "round %u: slot 0 revoked", r);
	}
	printf("  %u rounds: %u slots joined slot 0's meter, exact each\n",
	       LATE_ROUNDS, LATE_THREADS - 1);
	free(rt);
	return TEST_SUCCESS;
}

static const struct unit_test_suite suite = {
	.name = "vbr meter policer",
	.cases = {
		TEST_CASE(test_trace_one_slot),
		TEST_CASE(test_trace_slots),
		TEST_CASE(test_trace_runs),
		TEST_CASE(test_trace_aware),
		TEST_CASE(test_trace_idle),
		TEST_CASE(test_green_share),
		TEST_CASE(test_in_colour),
		TEST_CASE(test_reset),
		TEST_CASE(test_shared_exact),
		TEST_CASE(test_owner),
		TEST_CASE(test_owner_lines),
		TEST_CASE(test_owner_revoked_exact),
		TEST_CASES_END(),
	},
};

/*
 * Traffic.
 */

#define NB_RXQ 2
#define RING_SIZE 512
#define WAIT_MS 10000		/* the most a frame is waited for */
#define IP4(a, b, c, d) \
	(((uint32_t)(a) << 24) | ((b) << 16) | ((c) << 8) | (d))
#define ACT(t, c) { .type = RTE_FLOW_ACTION_TYPE_##t, .conf = (c) }
#define ACT_END { .type = RTE_FLOW_ACTION_TYPE_END }

enum { PROF_TR = 1, PROF_TR_BIG, PROF_SR_PKT };
enum { POL_QQD = 10, POL_MARK, POL_RSS };
enum { MTR = 5, MTR_AWARE };

static struct rte_mempool *mp;
static uint16_t port0, port1;
static struct rte_ether_addr mac0, mac1;

/* A UDP frame of len bytes (no FCS) to port 1. */
static struct rte_mbuf *
mk_frame(uint16_t len)
{
	return vbr_test_udp4(mp, &mac1, &mac0, IP4(10, 0, 0, 1),
			     IP4(10, 0, 1, 1), 1000, 53, len);
}

/* What came on port 1's queues. */
struct got {
	unsigned int n[NB_RXQ];		/* frames per queue */
	uint32_t len[NB_RXQ][64];	/* their lengths, in order */
	uint32_t mark[NB_RXQ][64];	/* fdir id + 1, 0: none */
};

static void
poll_into(struct got *g)
{
	struct rte_mbuf *r[32];
	uint16_t q, n, k;

	for (q = 0; q < NB_RXQ; q++) {
		n = rte_eth_rx_burst(port1, q, r, RTE_DIM(r));
		for (k = 0; k < n; k++) {
			unsigned int i = g->n[q]++;

			if (i < RTE_DIM(g->len[q])) {
				g->len[q][i] = r[k]->pkt_len;
				g->mark[q][i] = (r[k]->ol_flags &
						 RTE_MBUF_F_RX_FDIR_ID) ?
						r[k]->hash.fdir.hi + 1 : 0;
			}
			rte_pktmbuf_free(r[k]);
		}
	}
}

/* Frames meter id has seen: passed in any colour or dropped. */
static uint64_t
seen_by(uint32_t id)
{
	struct rte_mtr_error err;
	struct rte_mtr_stats st;
	uint64_t mask;

	if (rte_mtr_stats_read(port1, id, &st, &mask, 0, &err) != 0)
		return UINT64_MAX;
	return st.n_pkts[RTE_COLOR_GREEN] + st.n_pkts[RTE_COLOR_YELLOW] +
	       st.n_pkts[RTE_COLOR_RED] + st.n_pkts_dropped;
}

/*
 * Send frames of lens[0, n) one at a time through meter mtr, each polled
 * out and seen by the meter before the next goes (so the buckets refill
 * in between, a burst holds one frame, and a dropped frame is not still
 * on its way when the next test starts: the swverbs engine may be slow on
 * a busy machine); expect[i] frames of them should arrive in all (a red
 * one: none). Then poll a little more for frames that should not have
 * come.
 */
static int
send_dscp(const uint16_t *lens, const uint8_t *dscp, unsigned int n,
	  const unsigned int *expect, uint32_t mtr, struct got *g)
{
	unsigned int i, want = 0, have;
	uint64_t deadline, base = seen_by(mtr), seen;

	memset(g, 0, sizeof(*g));
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = mk_frame(lens[i]);
		struct rte_ipv4_hdr *ip;

		TEST_ASSERT_NOT_NULL(m, "mbuf");
		if (dscp != NULL) {
			ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *,
				sizeof(struct rte_ether_hdr));
			ip->type_of_service = dscp[i] << 2;
			ip->hdr_checksum = 0;
			ip->hdr_checksum = rte_ipv4_cksum(ip);
		}
		TEST_ASSERT_EQUAL(vbr_test_tx_all(port0, &m, 1, WAIT_MS), 1,
				  "send");
		want += expect[i];
		deadline = rte_get_timer_cycles() +
			   rte_get_timer_hz() * WAIT_MS / 1000;
		do {
			poll_into(g);
			have = g->n[0] + g->n[1];
			seen = seen_by(mtr);
		} while ((have < want || seen < base + i + 1) &&
			 rte_get_timer_cycles() < deadline);
		TEST_ASSERT_EQUAL(have, want, "frame %u (%u bytes): %u frames "
				  "arrived, %u wanted", i, lens[i], have, want);
		TEST_ASSERT_EQUAL(seen, base + i + 1, "frame %u (%u bytes): "
				  "the meter saw %" PRIu64 " frames", i,
				  lens[i], seen - base);
	}
	/* At least one poll, however late this thread runs. */
	deadline = rte_get_timer_cycles() + rte_get_timer_hz() / 50;
	do
		poll_into(g);
	while (rte_get_timer_cycles() < deadline);
	TEST_ASSERT_EQUAL(g->n[0] + g->n[1], want, "late frames");
	return TEST_SUCCESS;
}

/* send_dscp() with DSCP 0. */
static int
send_each(const uint16_t *lens, unsigned int n, const unsigned int *expect,
	  struct got *g)
{
	return send_dscp(lens, NULL, n, expect, MTR, g);
}

static int
stats(struct rte_mtr_stats *st, int clear)
{
	struct rte_mtr_error err;
	uint64_t mask;

	memset(st, 0xff, sizeof(*st));
	TEST_ASSERT_SUCCESS(rte_mtr_stats_read(port1, MTR, st, &mask, clear,
					       &err), "stats read: %s",
			    err.message);
	return TEST_SUCCESS;
}

static struct rte_flow *
meter_rule_at(uint32_t priority, const struct rte_flow_action *actions)
{
	const struct rte_flow_attr attr = {
		.ingress = 1, .priority = priority,
	};
	static const struct rte_flow_item pattern[] = {
		{ .type = RTE_FLOW_ITEM_TYPE_ETH },
		{ .type = RTE_FLOW_ITEM_TYPE_IPV4 },
		{ .type = RTE_FLOW_ITEM_TYPE_UDP },
		{ .type = RTE_FLOW_ITEM_TYPE_END },
	};
	struct rte_flow_error err;
	struct rte_flow *f;

	f = rte_flow_create(port1, &attr, pattern, actions, &err);
	if (f == NULL)
		printf("flow create: %s\n", err.message ? err.message : "?");
	return f;
}

static struct rte_flow *
meter_rule(const struct rte_flow_action *actions)
{
	return meter_rule_at(0, actions);
}

/* Lengths around CBS 400 and PBS 500; what arrives, queue by colour. */
static const uint16_t lens[] = { 64, 400, 401, 500, 501, 1000, 300, 450 };
static const unsigned int arrives[] = { 1, 1, 1, 1, 0, 0, 1, 1 };

static int
check_colours(const struct got *g, bool marked)
{
	TEST_ASSERT_EQUAL(g->n[0], 3, "green frames on queue 0");
	TEST_ASSERT_EQUAL(g->n[1], 3, "yellow frames on queue 1");
	TEST_ASSERT(g->len[0][0] == 64 && g->len[0][1] == 400 &&
		    g->len[0][2] == 300, "green: 64, 400, 300 (got %u %u %u)",
		    g->len[0][0], g->len[0][1], g->len[0][2]);
	TEST_ASSERT(g->len[1][0] == 401 && g->len[1][1] == 500 &&
		    g->len[1][2] == 450, "yellow: 401, 500, 450 (got %u %u %u)",
		    g->len[1][0], g->len[1][1], g->len[1][2]);
	TEST_ASSERT_EQUAL(g->mark[0][0], marked ? 8u : 0u, "green mark");
	TEST_ASSERT_EQUAL(g->mark[1][0], 0, "yellow: no mark");
	return TEST_SUCCESS;
}

static int
check_stats(const struct rte_mtr_stats *st)
{
	TEST_ASSERT_EQUAL(st->n_pkts[RTE_COLOR_GREEN], 3, "green pkts");
	TEST_ASSERT_EQUAL(st->n_bytes[RTE_COLOR_GREEN], 764, "green bytes");
	TEST_ASSERT_EQUAL(st->n_pkts[RTE_COLOR_YELLOW], 3, "yellow pkts");
	TEST_ASSERT_EQUAL(st->n_bytes[RTE_COLOR_YELLOW], 1351,
			  "yellow bytes");
	/* Red frames are dropped: counted as dropped only, not as passed. */
	TEST_ASSERT_EQUAL(st->n_pkts[RTE_COLOR_RED], 0, "red pkts passed");
	TEST_ASSERT_EQUAL(st->n_bytes[RTE_COLOR_RED], 0, "red bytes passed");
	TEST_ASSERT_EQUAL(st->n_pkts_dropped, 2, "dropped pkts");
	TEST_ASSERT_EQUAL(st->n_bytes_dropped, 1501, "dropped bytes");
	return TEST_SUCCESS;
}

/*
 * The example: a rule whose only action is the meter; green to
 * queue 0 (where the device steers the rule), yellow handed to queue 1,
 * red dropped and counted; read and clear.
 */
static int
test_colours(void)
{
	static const struct rte_flow_action_meter m = { .mtr_id = MTR };
	const struct rte_flow_action actions[] = { ACT(METER, &m), ACT_END };
	struct rte_mtr_stats st;
	struct rte_flow_error ferr;
	struct rte_flow *f;
	struct got g;

	f = meter_rule(actions);
	TEST_ASSERT_NOT_NULL(f, "metered rule");
	TEST_ASSERT_SUCCESS(send_each(lens, RTE_DIM(lens), arrives, &g),
			    "traffic");
	TEST_ASSERT_SUCCESS(check_colours(&g, false), "colours");
	TEST_ASSERT_SUCCESS(stats(&st, 1), "stats");
	TEST_ASSERT_SUCCESS(check_stats(&st), "counts");
	TEST_ASSERT_SUCCESS(stats(&st, 0), "stats");
	TEST_ASSERT_EQUAL(st.n_pkts[RTE_COLOR_GREEN] + st.n_pkts_dropped, 0,
			  "cleared");
	TEST_ASSERT_SUCCESS(rte_flow_destroy(port1, f, &ferr), "destroy");
	return TEST_SUCCESS;
}

/*
 * Two rules on one meter, one with its own MARK and COUNT; the policy's
 * green MARK; disabled, every frame is green; stop and start keep meter
 * and rules; the stats mask hides what it leaves out.
 */
static int
test_lifecycle(void)
{
	static const struct rte_flow_action_meter m = { .mtr_id = MTR };
	static const struct rte_flow_action_queue q0 = { .index = 0 };
	const struct rte_flow_action actions[] = { ACT(METER, &m), ACT_END };
	const struct rte_flow_action own[] = {
		ACT(METER, &m), ACT(COUNT, NULL), ACT(QUEUE, &q0), ACT_END,
	};
	static const unsigned int all[RTE_DIM(lens)] = {
		1, 1, 1, 1, 1, 1, 1, 1,
	};
	struct rte_mtr_error err;
	struct rte_flow_error ferr;
	struct rte_mtr_stats st;
	struct rte_flow *f, *f2;
	struct got g;

	f = meter_rule(actions);
	TEST_ASSERT_NOT_NULL(f, "metered rule");
	/* The same match at priority 1 never wins: only shares the meter. */
	f2 = meter_rule_at(1, own);
	TEST_ASSERT_NOT_NULL(f2, "second rule on the meter");
	TEST_ASSERT_SUCCESS(rte_mtr_meter_disable(port1, MTR, &err),
			    "disable");
	TEST_ASSERT_SUCCESS(send_each(lens, RTE_DIM(lens), all, &g),
			    "disabled");
	TEST_ASSERT_EQUAL(g.n[0], RTE_DIM(lens), "disabled: all green");
	TEST_ASSERT_SUCCESS(stats(&st, 1), "stats");
	TEST_ASSERT_EQUAL(st.n_pkts[RTE_COLOR_GREEN], RTE_DIM(lens),
			  "disabled: counted green");
	TEST_ASSERT_SUCCESS(rte_mtr_meter_enable(port1, MTR, &err), "enable");
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "stop");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "start");
	rte_delay_ms(20);
	TEST_ASSERT_SUCCESS(send_each(lens, RTE_DIM(lens), arrives, &g),
			    "after stop/start");
	TEST_ASSERT_SUCCESS(check_colours(&g, false), "colours kept");
	/* Only the packet counts. */
	TEST_ASSERT_SUCCESS(rte_mtr_stats_update(port1, MTR,
			    RTE_MTR_STATS_N_PKTS_GREEN |
			    RTE_MTR_STATS_N_PKTS_YELLOW |
			    RTE_MTR_STATS_N_PKTS_RED |
			    RTE_MTR_STATS_N_PKTS_DROPPED, &err), "mask");
	TEST_ASSERT_SUCCESS(stats(&st, 1), "stats");
	TEST_ASSERT_EQUAL(st.n_pkts[RTE_COLOR_RED], 0, "red pkts passed");
	TEST_ASSERT_EQUAL(st.n_pkts_dropped, 2, "red pkts dropped");
	TEST_ASSERT_EQUAL(st.n_bytes[RTE_COLOR_GREEN], 0, "masked bytes");
	TEST_ASSERT_SUCCESS(rte_mtr_stats_update(port1, MTR, UINT8_MAX, &err),
			    "mask");
	/* In use: EBUSY for the meter, its profile and policy. */
	TEST_ASSERT_EQUAL(rte_mtr_destroy(port1, MTR, &err), -EBUSY,
			  "meter in use");
	TEST_ASSERT_EQUAL(rte_mtr_meter_profile_delete(port1, PROF_TR, &err),
			  -EBUSY, "profile in use");
	TEST_ASSERT_EQUAL(rte_mtr_meter_policy_delete(port1, POL_QQD, &err),
			  -EBUSY, "policy in use");
	TEST_ASSERT_EQUAL(rte_mtr_meter_policy_update(port1, MTR, POL_MARK,
						      &err), -EBUSY,
			  "policy update under rules");
	TEST_ASSERT_SUCCESS(rte_flow_destroy(port1, f2, &ferr), "destroy");
	TEST_ASSERT_SUCCESS(rte_flow_destroy(port1, f, &ferr), "destroy");
	/* No rule now: the policy may change; green is marked 7. */
	TEST_ASSERT_SUCCESS(rte_mtr_meter_policy_update(port1, MTR, POL_MARK,
							&err), "policy update");
	f = meter_rule(actions);
	TEST_ASSERT_NOT_NULL(f, "metered rule");
	TEST_ASSERT_SUCCESS(send_each(lens, RTE_DIM(lens), arrives, &g),
			    "marked");
	TEST_ASSERT_SUCCESS(check_colours(&g, true), "green marked");
	TEST_ASSERT_SUCCESS(rte_flow_destroy(port1, f, &ferr), "destroy");
	TEST_ASSERT_SUCCESS(rte_mtr_meter_policy_update(port1, MTR, POL_QQD,
							&err), "policy back");
	TEST_ASSERT_SUCCESS(stats(&st, 1), "clear");
	return TEST_SUCCESS;
}

/* A bigger profile: every frame up to 1000 bytes green. */
static int
test_profile_update(void)
{
	static const struct rte_flow_action_meter m = { .mtr_id = MTR };
	const struct rte_flow_action actions[] = { ACT(METER, &m), ACT_END };
	static const unsigned int all[RTE_DIM(lens)] = {
		1, 1, 1, 1, 1, 1, 1, 1,
	};
	struct rte_mtr_error err;
	struct rte_flow_error ferr;
	struct rte_flow *f;
	struct got g;

	f = meter_rule(actions);
	TEST_ASSERT_NOT_NULL(f, "metered rule");
	TEST_ASSERT_SUCCESS(rte_mtr_meter_profile_update(port1, MTR,
			    PROF_TR_BIG, &err), "update: %s", err.message);
	TEST_ASSERT_SUCCESS(send_each(lens, RTE_DIM(lens), all, &g), "big");
	TEST_ASSERT_EQUAL(g.n[0], RTE_DIM(lens), "all green");
	TEST_ASSERT_SUCCESS(rte_mtr_meter_profile_update(port1, MTR, PROF_TR,
							 &err), "back");
	TEST_ASSERT_SUCCESS(send_each(lens, RTE_DIM(lens), arrives, &g),
			    "small again");
	TEST_ASSERT_SUCCESS(check_colours(&g, false), "colours");
	TEST_ASSERT_SUCCESS(rte_flow_destroy(port1, f, &ferr), "destroy");
	return TEST_SUCCESS;
}

/* Bad input: each refused with an error naming what is wrong. */
static int
test_errors(void)
{
	static const struct rte_flow_action_meter none = { .mtr_id = 99 };
	const struct rte_flow_action no_meter[] = {
		ACT(METER, &none), ACT_END,
	};
	struct rte_mtr_meter_profile bad = {
		.alg = RTE_MTR_TRTCM_RFC2698,
		.trtcm_rfc2698 = { .cir = 2000, .pir = 1000, .cbs = 1,
				   .pbs = 1 },
	};
	static const struct rte_flow_action_rss rss = { .queue_num = 0 };
	static const uint16_t rss_queues[] = { 0, 7 };
	static const struct rte_flow_action_rss rss7 = {
		.queue_num = RTE_DIM(rss_queues), .queue = rss_queues,
	};
	struct rte_flow_action q5[] = {
		ACT(QUEUE, &(struct rte_flow_action_queue){ 5 }), ACT_END,
	};
	struct rte_flow_action rss_q7[] = { ACT(RSS, &rss7), ACT_END };
	struct rte_mtr_meter_policy_params pol = {
		.actions = {
			[RTE_COLOR_GREEN] = (struct rte_flow_action[]) {
				ACT(RSS, &rss), ACT_END,
			},
		},
	};
	enum rte_color dscp[64] = { RTE_COLOR_GREEN };
	struct rte_mtr_params params = {
		.meter_profile_id = PROF_TR, .meter_policy_id = POL_QQD,
		.meter_enable = 1, .dscp_table = dscp,
	};
	struct rte_mtr_capabilities cap;
	struct rte_flow_error ferr;
	struct rte_mtr_error err;

	TEST_ASSERT_NULL(meter_rule(no_meter), "no such meter");
	TEST_ASSERT_EQUAL(rte_flow_validate(port1, &(struct rte_flow_attr){
					    .ingress = 1 },
					    (const struct rte_flow_item[]){
					    { .type = RTE_FLOW_ITEM_TYPE_ETH },
					    { .type = RTE_FLOW_ITEM_TYPE_END } },
					    no_meter, &ferr), -ENOENT,
			  "validate: no such meter, as create");
	TEST_ASSERT(ferr.cause == &no_meter[0], "the error names the meter "
		    "action");
	TEST_ASSERT_EQUAL(rte_mtr_meter_profile_add(port1, 50, &bad, &err),
			  -EINVAL, "cir above pir");
	TEST_ASSERT(strstr(err.message, "cir at most pir") != NULL, "%s",
		    err.message);
	TEST_ASSERT_EQUAL(rte_mtr_meter_profile_add(port1, PROF_TR,
			  &(struct rte_mtr_meter_profile){
				.alg = RTE_MTR_SRTCM_RFC2697,
				.srtcm_rfc2697 = { 1000, 100, 100 } }, &err),
			  -EEXIST, "profile id twice");
	TEST_ASSERT_EQUAL(rte_mtr_meter_policy_validate(port1, &pol, &err),
			  -ENOTSUP, "rss in a policy");
	TEST_ASSERT(strstr(err.message, "green actions: rss") != NULL, "%s",
		    err.message);
	TEST_ASSERT_EQUAL(err.type, RTE_MTR_ERROR_TYPE_POLICER_ACTION_GREEN,
			  "names the green actions");
	pol.actions[RTE_COLOR_YELLOW] = pol.actions[RTE_COLOR_GREEN];
	pol.actions[RTE_COLOR_GREEN] = NULL;
	TEST_ASSERT_EQUAL(rte_mtr_meter_policy_validate(port1, &pol, &err),
			  -ENOTSUP, "rss in a policy");
	TEST_ASSERT_EQUAL(err.type, RTE_MTR_ERROR_TYPE_POLICER_ACTION_YELLOW,
			  "names the yellow actions");
	/* A queue the port lacks: refused at the policy, not at the rule. */
	pol.actions[RTE_COLOR_YELLOW] = q5;
	memset(&err, 0, sizeof(err));
	TEST_ASSERT_EQUAL(rte_mtr_meter_policy_validate(port1, &pol, &err),
			  -EINVAL, "validate: queue 5 of 2");
	TEST_ASSERT(err.message != NULL &&
		    strstr(err.message, "yellow actions: queue 5, the port "
			   "has 2 Rx queues") != NULL, "%s",
		    err.message ? err.message : "no message");
	TEST_ASSERT_EQUAL(err.type, RTE_MTR_ERROR_TYPE_POLICER_ACTION_YELLOW,
			  "names the yellow actions");
	TEST_ASSERT(err.cause == &q5[0], "the error names the queue action");
	memset(&err, 0, sizeof(err));
	TEST_ASSERT_EQUAL(rte_mtr_meter_policy_add(port1, 60, &pol, &err),
			  -EINVAL, "add: queue 5 of 2");
	TEST_ASSERT(err.message != NULL &&
		    strstr(err.message, "queue 5") != NULL, "%s",
		    err.message ? err.message : "no message");
	TEST_ASSERT_EQUAL(rte_mtr_meter_policy_delete(port1, 60, &err),
			  -ENOENT, "the refused policy was not added");
	/* RSS naming a queue the port lacks: RSS is refused anyway. */
	pol.actions[RTE_COLOR_YELLOW] = rss_q7;
	TEST_ASSERT_EQUAL(rte_mtr_meter_policy_add(port1, 60, &pol, &err),
			  -ENOTSUP, "rss to queues 0 and 7");
	TEST_ASSERT(strstr(err.message, "yellow actions: rss") != NULL, "%s",
		    err.message);
	dscp[9] = (enum rte_color)RTE_COLORS;
	TEST_ASSERT_EQUAL(rte_mtr_create(port1, 60, &params, 1, &err),
			  -EINVAL, "dscp table entry not a colour");
	TEST_ASSERT(strstr(err.message, "dscp_table entry 9") != NULL, "%s",
		    err.message);
	dscp[9] = RTE_COLOR_RED;
	params.default_input_color = (enum rte_color)7;
	TEST_ASSERT_EQUAL(rte_mtr_create(port1, 60, &params, 1, &err),
			  -EINVAL, "default input colour not a colour");
	TEST_ASSERT(strstr(err.message, "default_input_color") != NULL, "%s",
		    err.message);
	params.dscp_table = NULL;
	TEST_ASSERT_EQUAL(rte_mtr_create(port1, 60, &params, 1, &err),
			  -EINVAL, "default input colour, no table: refused too "
			  "(a protocol set later would use it)");
	params.dscp_table = dscp;
	params.default_input_color = RTE_COLOR_GREEN;
	params.use_prev_mtr_color = 1;
	TEST_ASSERT_EQUAL(rte_mtr_create(port1, 60, &params, 1, &err),
			  -ENOTSUP, "meter chaining");
	params.use_prev_mtr_color = 0;
	params.dscp_table = NULL;
	params.meter_profile_id = 77;
	TEST_ASSERT_EQUAL(rte_mtr_create(port1, 60, &params, 1, &err),
			  -ENOENT, "no such profile");
	TEST_ASSERT_EQUAL(err.type, RTE_MTR_ERROR_TYPE_METER_PROFILE_ID,
			  "names the profile id");
	TEST_ASSERT_EQUAL(rte_mtr_destroy(port1, 61, &err), -ENOENT,
			  "no such meter");
	TEST_ASSERT_SUCCESS(rte_mtr_capabilities_get(port1, &cap, &err),
			    "caps");
	TEST_ASSERT(cap.n_max > 0 && cap.trtcm_rfc4115_packet_mode_supported,
		    "caps");
	return TEST_SUCCESS;
}

/*
 * A meter made again takes the slot of the one destroyed: fresh counts and
 * full buckets, the same colours.
 */
static int
test_recreate(void)
{
	static const struct rte_flow_action_meter m = { .mtr_id = MTR };
	const struct rte_flow_action actions[] = { ACT(METER, &m), ACT_END };
	struct rte_mtr_params params = {
		.meter_profile_id = PROF_TR, .meter_policy_id = POL_QQD,
		.meter_enable = 1, .stats_mask = UINT64_MAX,
	};
	struct rte_mtr_error err;
	struct rte_flow_error ferr;
	struct rte_mtr_stats st;
	struct rte_flow *f;
	uint64_t mask;
	struct got g;

	f = meter_rule(actions);
	TEST_ASSERT_NOT_NULL(f, "metered rule");
	TEST_ASSERT_SUCCESS(send_each(lens, RTE_DIM(lens), arrives, &g),
			    "traffic");
	TEST_ASSERT_SUCCESS(rte_flow_destroy(port1, f, &ferr), "destroy");
	TEST_ASSERT_SUCCESS(rte_mtr_destroy(port1, MTR, &err), "destroy: %s",
			    err.message);
	TEST_ASSERT_EQUAL(rte_mtr_stats_read(port1, MTR, &st, &mask, 0, &err),
			  -ENOENT, "gone");
	TEST_ASSERT_SUCCESS(rte_mtr_create(port1, MTR, &params, 0, &err),
			    "create again: %s", err.message);
	f = meter_rule(actions);
	TEST_ASSERT_NOT_NULL(f, "metered rule");
	TEST_ASSERT_SUCCESS(send_each(lens, RTE_DIM(lens), arrives, &g),
			    "traffic");
	TEST_ASSERT_SUCCESS(check_colours(&g, false), "colours");
	TEST_ASSERT_SUCCESS(stats(&st, 0), "stats");
	TEST_ASSERT_SUCCESS(check_stats(&st), "fresh counts");
	TEST_ASSERT_SUCCESS(rte_flow_destroy(port1, f, &ferr), "destroy");
	return TEST_SUCCESS;
}

/* The lens[] trace through the meter: the colours of check_colours(). */
static int
traffic_colours(void)
{
	struct got g;

	TEST_ASSERT_SUCCESS(send_each(lens, RTE_DIM(lens), arrives, &g),
			    "traffic");
	return check_colours(&g, false);
}

/* A rule whose only action is meter MTR. */
static struct rte_flow *
mtr_rule(void)
{
	static const struct rte_flow_action_meter m = { .mtr_id = MTR };
	const struct rte_flow_action actions[] = { ACT(METER, &m), ACT_END };

	return meter_rule(actions);
}

/* Frames meter MTR has seen. */
static uint64_t
metered(void)
{
	return seen_by(MTR);
}

/*
 * Send lens[] one at a time, polling only queue 0 until the meter has seen
 * each: the yellow frames wait in queue 1's hand-off ring. Return the
 * frames queue 0 got (or -1).
 */
static int
send_poll_q0(void)
{
	struct rte_mbuf *r[32];
	unsigned int i, got = 0;
	uint64_t base = metered(), deadline;
	uint16_t n;

	for (i = 0; i < RTE_DIM(lens); i++) {
		struct rte_mbuf *m = mk_frame(lens[i]);

		if (m == NULL || vbr_test_tx_all(port0, &m, 1, WAIT_MS) != 1)
			return -1;
		deadline = rte_get_timer_cycles() +
			   rte_get_timer_hz() * WAIT_MS / 1000;
		do {
			n = rte_eth_rx_burst(port1, 0, r, RTE_DIM(r));
			got += n;
			rte_pktmbuf_free_bulk(r, n);
		} while (metered() < base + i + 1 &&
			 rte_get_timer_cycles() < deadline);
		if (metered() != base + i + 1) {
			printf("frame %u not metered\n", i);
			return -1;
		}
	}
	return (int)got;
}

/*
 * A rule on meter MTR, the lens[] trace sent with only queue 0 polled (its
 * 3 green frames there): the 3 yellow ones wait in queue 1's ring. The
 * rule, or NULL.
 */
static struct rte_flow *
yellow_waiting(void)
{
	struct rte_flow_error ferr;
	struct rte_flow *f = mtr_rule();
	int got;

	if (f == NULL)
		return NULL;
	got = send_poll_q0();
	if (got == 3)
		return f;
	printf("%d frames on queue 0, 3 wanted\n", got);
	rte_flow_destroy(port1, f, &ferr);
	return NULL;
}

/* Frames on queue 1 within a short wait, freed. */
static unsigned int
poll_q1(struct got *g)
{
	uint64_t deadline = rte_get_timer_cycles() + rte_get_timer_hz() / 50;
	struct rte_mbuf *r[32];
	uint16_t n, k;

	memset(g, 0, sizeof(*g));
	do {	/* at least one burst, however late this thread runs */
		n = rte_eth_rx_burst(port1, 1, r, RTE_DIM(r));
		for (k = 0; k < n; k++) {
			if (g->n[1] < RTE_DIM(g->len[1]))
				g->len[1][g->n[1]] = r[k]->pkt_len;
			g->n[1]++;
		}
		rte_pktmbuf_free_bulk(r, n);
	} while (rte_get_timer_cycles() < deadline);
	return g->n[1];
}

/*
 * Yellow frames wait in queue 1's hand-off ring while only queue 0 is
 * polled; the rule goes: queue 1 still hands them out, in order.
 */
static int
test_handoff_after_destroy(void)
{
	struct rte_flow_error ferr;
	struct rte_flow *f = yellow_waiting();
	struct got g;

	TEST_ASSERT_NOT_NULL(f, "metered rule, yellow frames waiting");
	TEST_ASSERT_SUCCESS(rte_flow_destroy(port1, f, &ferr), "destroy");
	TEST_ASSERT_EQUAL(poll_q1(&g), 3, "yellow frames on queue 1 after "
			  "the rule went");
	TEST_ASSERT(g.len[1][0] == 401 && g.len[1][1] == 500 &&
		    g.len[1][2] == 450, "yellow: 401, 500, 450 (got %u %u %u)",
		    g.len[1][0], g.len[1][1], g.len[1][2]);
	return TEST_SUCCESS;
}

/*
 * Frames waiting in a hand-off ring at dev_stop are freed, not delivered
 * after the start; the rule and meter stay and work.
 */
static int
test_handoff_stop(void)
{
	struct rte_flow_error ferr;
	struct rte_flow *f = yellow_waiting();
	struct got g;

	TEST_ASSERT_NOT_NULL(f, "metered rule, yellow frames waiting");
	TEST_ASSERT_SUCCESS(rte_eth_xstats_reset(port1), "xstats reset");
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "stop");
	/* The stop freed them: counted where a user sees it. */
	TEST_ASSERT_EQUAL(vbr_test_xstat(port1, "rx_mtr_handoff_freed"), 3,
			  "frames freed at stop");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "start");
	rte_delay_ms(20);
	TEST_ASSERT_EQUAL(poll_q1(&g), 0, "frames from before the stop");
	TEST_ASSERT_SUCCESS(rte_eth_xstats_reset(port1), "xstats reset");
	TEST_ASSERT_EQUAL(vbr_test_xstat(port1, "rx_mtr_handoff_freed"), 0,
			  "after reset");
	TEST_ASSERT_SUCCESS(traffic_colours(), "after stop/start");
	TEST_ASSERT_SUCCESS(rte_flow_destroy(port1, f, &ferr), "destroy");
	return TEST_SUCCESS;
}

/*
 * Configured with one Rx queue, a rule whose meter policy sends yellow to
 * queue 1 keeps the port from starting (as a QUEUE rule would), and a new
 * one is refused by validate as by create; two queues again: it starts.
 */
static int
test_fewer_queues(void)
{
	static const struct rte_flow_action_meter m = { .mtr_id = MTR };
	const struct rte_flow_action actions[] = { ACT(METER, &m), ACT_END };
	const struct rte_flow_attr attr = { .ingress = 1 };
	static const struct rte_flow_item pattern[] = {
		{ .type = RTE_FLOW_ITEM_TYPE_ETH },
		{ .type = RTE_FLOW_ITEM_TYPE_END },
	};
	struct rte_mtr_meter_policy_params q1 = {
		.actions = {
			[RTE_COLOR_GREEN] = (struct rte_flow_action[]) {
				ACT(QUEUE, &(struct rte_flow_action_queue){ 1 }),
				ACT_END,
			},
		},
	};
	struct rte_eth_conf conf = { 0 };
	struct rte_flow_error ferr;
	struct rte_mtr_error err;
	struct rte_flow *f;
	int ret;

	f = meter_rule(actions);
	TEST_ASSERT_NOT_NULL(f, "metered rule");
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "stop");
	TEST_ASSERT_SUCCESS(vbr_test_port_config(port1, &conf, 1, RING_SIZE,
						 RING_SIZE, mp), "1 queue");
	ret = rte_eth_dev_start(port1);
	if (ret == 0)
		rte_eth_dev_stop(port1);
	TEST_ASSERT_EQUAL(ret, -EINVAL, "start with the policy's queue 1 "
			  "gone: %d", ret);
	memset(&ferr, 0, sizeof(ferr));
	TEST_ASSERT_EQUAL(rte_flow_validate(port1, &attr, pattern, actions,
					    &ferr), -EINVAL,
			  "validate: policy queue 1 of 1");
	TEST_ASSERT(ferr.message != NULL &&
		    strstr(ferr.message, "to queue 1") != NULL, "%s",
		    ferr.message ? ferr.message : "no message");
	/* A new policy is checked against the queues the port has now. */
	memset(&err, 0, sizeof(err));
	TEST_ASSERT_EQUAL(rte_mtr_meter_policy_add(port1, 60, &q1, &err),
			  -EINVAL, "policy: queue 1 of 1");
	TEST_ASSERT(err.message != NULL &&
		    strstr(err.message, "green actions: queue 1, the port "
			   "has 1 Rx queue") != NULL, "%s",
		    err.message ? err.message : "no message");
	TEST_ASSERT_SUCCESS(vbr_test_port_config(port1, &conf, NB_RXQ,
						 RING_SIZE, RING_SIZE, mp),
			    "2 queues");
	TEST_ASSERT_SUCCESS(rte_mtr_meter_policy_add(port1, 60, &q1, &err),
			    "policy: queue 1 of 2: %s", err.message);
	TEST_ASSERT_SUCCESS(rte_mtr_meter_policy_delete(port1, 60, &err),
			    "policy 60 deleted");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "start");
	rte_delay_ms(20);
	TEST_ASSERT_SUCCESS(traffic_colours(), "two queues again");
	TEST_ASSERT_SUCCESS(rte_flow_destroy(port1, f, &ferr), "destroy");
	return TEST_SUCCESS;
}

/* A thread rte_thread_register() made, and the main one's steps. */
/* Frames of DSCP 0, 10, 20 (green, yellow, red in), 200 bytes each. */
static const uint16_t aw_lens[] = { 200, 200, 200, 200, 200, 200 };
static const uint8_t aw_dscp[] = { 0, 10, 20, 10, 0, 20 };

/*
 * Send aw_dscp[]'s frames (expect: which arrive); q0 of them should reach
 * queue 0 and q1 queue 1.
 */
static int
aware_send(const unsigned int *expect, unsigned int q0, unsigned int q1,
	   const char *what)
{
	struct got g;

	TEST_ASSERT_SUCCESS(send_dscp(aw_lens, aw_dscp, RTE_DIM(aw_lens),
				      expect, MTR_AWARE, &g), "%s: traffic",
			    what);
	TEST_ASSERT_EQUAL(g.n[0], q0, "%s: frames on queue 0", what);
	TEST_ASSERT_EQUAL(g.n[1], q1, "%s: frames on queue 1", what);
	return TEST_SUCCESS;
}

/*
 * A colour-aware meter on real frames: its DSCP table marks DSCP 10
 * yellow and 20 red; the buckets are big enough that every frame keeps
 * its input colour (trTCM: never better than it came). Green to queue 0,
 * yellow to queue 1, red dropped, as counted. Then: a table update, the
 * protocols' priorities (inner_ip before outer_ip), the disabled meter
 * passing the input colour, and the ops' errors.
 */
static int
colour_aware(struct rte_flow **fp)
{
	static const struct rte_flow_action_meter m = { .mtr_id = MTR_AWARE };
	const struct rte_flow_action actions[] = { ACT(METER, &m), ACT_END };
	static const unsigned int aw_arrives[] = { 1, 1, 0, 1, 1, 0 };
	static const unsigned int all[] = { 1, 1, 1, 1, 1, 1 };
	enum rte_color dscp[64] = { RTE_COLOR_GREEN };
	struct rte_mtr_params params = {
		.meter_profile_id = PROF_TR_BIG, .meter_policy_id = POL_QQD,
		.meter_enable = 1, .stats_mask = UINT64_MAX,
		.dscp_table = dscp, .default_input_color = RTE_COLOR_GREEN,
	};
	struct rte_mtr_capabilities cap;
	struct rte_flow_error ferr;
	struct rte_mtr_error err;
	struct rte_mtr_stats st;
	struct rte_flow *f;
	uint64_t mask;
	uint32_t prio;

	TEST_ASSERT_SUCCESS(rte_mtr_capabilities_get(port1, &cap, &err),
			    "caps");
	TEST_ASSERT(cap.color_aware_srtcm_rfc2697_supported &&
		    cap.color_aware_trtcm_rfc2698_supported &&
		    cap.color_aware_trtcm_rfc4115_supported &&
		    cap.input_color_proto_mask == 0xf, "colour-aware caps");
	dscp[10] = RTE_COLOR_YELLOW;
	dscp[20] = RTE_COLOR_RED;
	TEST_ASSERT_SUCCESS(rte_mtr_create(port1, MTR_AWARE, &params, 1,
					   &err), "colour-aware meter: %s",
			    err.message);
	TEST_ASSERT_SUCCESS(rte_mtr_color_in_protocol_get(port1, MTR_AWARE,
							  &mask, &err), "get");
	TEST_ASSERT_EQUAL(mask, RTE_MTR_COLOR_IN_PROTO_OUTER_IP,
			  "a dscp table enables outer_ip");
	f = meter_rule(actions);
	*fp = f;
	TEST_ASSERT_NOT_NULL(f, "metered rule");
	TEST_ASSERT_SUCCESS(aware_send(aw_arrives, 2, 2,
				       "dscp table"), "colours");
	memset(&st, 0, sizeof(st));
	TEST_ASSERT_SUCCESS(rte_mtr_stats_read(port1, MTR_AWARE, &st, &mask, 1,
					       &err), "stats");
	TEST_ASSERT(st.n_pkts[0] == 2 && st.n_pkts[1] == 2 &&
		    st.n_pkts_dropped == 2 && st.n_bytes_dropped == 400,
		    "counted: %" PRIu64 " green %" PRIu64 " yellow %" PRIu64
		    " dropped", st.n_pkts[0], st.n_pkts[1], st.n_pkts_dropped);

	/* Disabled: each frame passes in its input colour. */
	TEST_ASSERT_SUCCESS(rte_mtr_meter_disable(port1, MTR_AWARE, &err),
			    "disable");
	TEST_ASSERT_SUCCESS(aware_send(aw_arrives, 2, 2,
				       "disabled"), "colours");
	TEST_ASSERT_SUCCESS(rte_mtr_meter_enable(port1, MTR_AWARE, &err),
			    "enable");

	/* outer_ip's table all green; inner_ip keeps create's table. */
	TEST_ASSERT_SUCCESS(rte_mtr_meter_dscp_table_update(port1, MTR_AWARE,
			    RTE_MTR_COLOR_IN_PROTO_OUTER_IP, NULL, &err),
			    "dscp table update: %s", err.message);
	TEST_ASSERT_SUCCESS(aware_send(all, 6, 0,
				       "outer_ip all green"), "colours");
	/* inner_ip at priority 0 too: outer_ip's bit comes first. */
	TEST_ASSERT_SUCCESS(rte_mtr_color_in_protocol_set(port1, MTR_AWARE,
			    RTE_MTR_COLOR_IN_PROTO_INNER_IP, 0, &err),
			    "inner_ip: %s", err.message);
	TEST_ASSERT_SUCCESS(aware_send(all, 6, 0,
				       "tie: outer_ip first"), "colours");
	TEST_ASSERT_SUCCESS(rte_mtr_color_in_protocol_set(port1, MTR_AWARE,
			    RTE_MTR_COLOR_IN_PROTO_OUTER_IP, 5, &err),
			    "outer_ip 5");
	TEST_ASSERT_SUCCESS(aware_send(aw_arrives, 2, 2,
				       "inner_ip first"), "colours");
	TEST_ASSERT_SUCCESS(rte_mtr_color_in_protocol_priority_get(port1,
			    MTR_AWARE, RTE_MTR_COLOR_IN_PROTO_OUTER_IP, &prio,
			    &err), "prio get");
	TEST_ASSERT_EQUAL(prio, 5, "outer_ip's priority");
	TEST_ASSERT_SUCCESS(rte_mtr_color_in_protocol_get(port1, MTR_AWARE,
							  &mask, &err), "get");
	TEST_ASSERT_EQUAL(mask, RTE_MTR_COLOR_IN_PROTO_OUTER_IP |
			  RTE_MTR_COLOR_IN_PROTO_INNER_IP, "mask");

	/* Errors, each naming what. */
	TEST_ASSERT_EQUAL(rte_mtr_color_in_protocol_priority_get(port1,
			  MTR_AWARE, RTE_MTR_COLOR_IN_PROTO_OUTER_VLAN, &prio,
			  &err), -EINVAL, "prio of a protocol not enabled");
	TEST_ASSERT(strstr(err.message, "outer_vlan is not enabled") != NULL,
		    "%s", err.message);
	TEST_ASSERT_EQUAL(rte_mtr_color_in_protocol_set(port1, MTR_AWARE, 0, 0,
							&err), -EINVAL,
			  "no protocol");
	TEST_ASSERT(strstr(err.message, "is not one of") != NULL, "%s",
		    err.message);
	TEST_ASSERT_EQUAL(rte_mtr_meter_dscp_table_update(port1, MTR_AWARE,
			  RTE_MTR_COLOR_IN_PROTO_OUTER_VLAN, dscp, &err),
			  -EINVAL, "dscp table of a vlan protocol");
	TEST_ASSERT(strstr(err.message, "outer_ip or inner_ip") != NULL, "%s",
		    err.message);
	TEST_ASSERT_EQUAL(rte_mtr_meter_vlan_table_update(port1, MTR_AWARE,
			  RTE_MTR_COLOR_IN_PROTO_INNER_IP, dscp, &err),
			  -EINVAL, "vlan table of an ip protocol");
	dscp[3] = (enum rte_color)5;
	TEST_ASSERT_EQUAL(rte_mtr_meter_vlan_table_update(port1, MTR_AWARE,
			  RTE_MTR_COLOR_IN_PROTO_INNER_VLAN, dscp, &err),
			  -EINVAL, "vlan table entry not a colour");
	TEST_ASSERT(strstr(err.message, "vlan table entry 3") != NULL, "%s",
		    err.message);
	TEST_ASSERT_EQUAL(rte_mtr_meter_vlan_table_update(port1, 99,
			  RTE_MTR_COLOR_IN_PROTO_INNER_VLAN, NULL, &err),
			  -ENOENT, "no such meter");
	*fp = NULL;
	TEST_ASSERT_SUCCESS(rte_flow_destroy(port1, f, &ferr), "destroy");
	TEST_ASSERT_SUCCESS(rte_mtr_destroy(port1, MTR_AWARE, &err),
			    "destroy meter");
	return TEST_SUCCESS;
}

/* colour_aware(); what it made goes, pass or fail, for the next tests. */
static int
test_colour_aware(void)
{
	struct rte_flow *f = NULL;
	struct rte_flow_error ferr;
	struct rte_mtr_error err;
	int ret = colour_aware(&f);

	if (ret != TEST_SUCCESS) {
		if (f != NULL)
			rte_flow_destroy(port1, f, &ferr);
		rte_mtr_destroy(port1, MTR_AWARE, &err);
	}
	return ret;
}

/*
 * Send one frame to port 1 with an 802.1Q tag of PCP pcp; want: whether it
 * should arrive. Wait until the meter MTR_AWARE has seen it.
 */
static int
send_tagged(uint8_t pcp, bool want, const char *what)
{
	struct rte_mbuf *m = mk_frame(200);
	uint64_t deadline, base = seen_by(MTR_AWARE);
	unsigned int n = want ? 1 : 0;
	struct got g;

	TEST_ASSERT_NOT_NULL(m, "mbuf");
	m->vlan_tci = (uint16_t)(pcp << 13 | 5);
	TEST_ASSERT_SUCCESS(rte_vlan_insert(&m), "tag");
	TEST_ASSERT_EQUAL(vbr_test_tx_all(port0, &m, 1, WAIT_MS), 1, "send");
	memset(&g, 0, sizeof(g));
	deadline = rte_get_timer_cycles() + rte_get_timer_hz() * WAIT_MS / 1000;
	do {
		poll_into(&g);
	} while ((g.n[0] + g.n[1] < n ||
		  seen_by(MTR_AWARE) < base + 1) &&
		 rte_get_timer_cycles() < deadline);
	deadline = rte_get_timer_cycles() + rte_get_timer_hz() / 50;
	do
		poll_into(&g);
	while (rte_get_timer_cycles() < deadline);
	TEST_ASSERT_EQUAL(seen_by(MTR_AWARE), base + 1, "%s: metered", what);
	TEST_ASSERT_EQUAL(g.n[0] + g.n[1], n, "%s: arrived", what);
	return TEST_SUCCESS;
}

/*
 * A colour-aware meter whose VLAN table makes PCP 7 red, on queues that
 * strip the tag: the colour comes from the stripped TCI (vlan_tci), not
 * from the data, which has no tag left. PCP 7: red, dropped; PCP 1: green.
 */
static int
colour_aware_stripped(struct rte_flow **fp)
{
	static const struct rte_flow_action_meter m = { .mtr_id = MTR_AWARE };
	const struct rte_flow_action actions[] = { ACT(METER, &m), ACT_END };
	enum rte_color vt[16] = { RTE_COLOR_GREEN };
	struct rte_mtr_params params = {
		.meter_profile_id = PROF_TR_BIG, .meter_policy_id = POL_QQD,
		.meter_enable = 1, .stats_mask = UINT64_MAX,
		.vlan_table = vt, .default_input_color = RTE_COLOR_GREEN,
	};
	struct rte_mtr_error err;

	vt[7 << 1] = RTE_COLOR_RED;	/* PCP 7, DEI 0 */
	vt[7 << 1 | 1] = RTE_COLOR_RED;
	TEST_ASSERT_SUCCESS(rte_eth_dev_stop(port1), "stop");
	TEST_ASSERT_SUCCESS(rte_eth_dev_set_vlan_offload(port1,
			    RTE_ETH_VLAN_STRIP_OFFLOAD), "vlan strip on");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "start");
	TEST_ASSERT_SUCCESS(rte_mtr_create(port1, MTR_AWARE, &params, 1,
					   &err), "meter: %s", err.message);
	*fp = meter_rule(actions);
	TEST_ASSERT_NOT_NULL(*fp, "metered rule");
	TEST_ASSERT_SUCCESS(send_tagged(1, true, "stripped pcp 1"), "green");
	TEST_ASSERT_SUCCESS(send_tagged(7, false, "stripped pcp 7"), "red");
	return TEST_SUCCESS;
}

static int
test_colour_aware_stripped(void)
{
	struct rte_flow *f = NULL;
	struct rte_flow_error ferr;
	struct rte_mtr_error err;
	int ret = colour_aware_stripped(&f);

	if (f != NULL)
		rte_flow_destroy(port1, f, &ferr);
	rte_mtr_destroy(port1, MTR_AWARE, &err);
	if (rte_eth_dev_stop(port1) != 0 ||
	    rte_eth_dev_set_vlan_offload(port1, 0) != 0 ||
	    rte_eth_dev_start(port1) != 0)
		ret = TEST_FAILED;
	return ret;
}

static int reg_state;	/* 1: traffic done, 2: main is done */
static int reg_result;

static void *
reg_run(void *arg)
{
	struct got *g = arg;

	if (rte_thread_register() != 0) {
		reg_result = TEST_FAILED;
		__atomic_store_n(&reg_state, 1, __ATOMIC_RELEASE);
		return NULL;
	}
	/* Polled from a non-EAL thread: the meter's shared slot. */
	reg_result = send_each(lens, RTE_DIM(lens), arrives, g);
	__atomic_store_n(&reg_state, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&reg_state, __ATOMIC_ACQUIRE) != 2)
		rte_pause();
	rte_thread_unregister();
	return NULL;
}

/*
 * rte_thread_register() raises rte_lcore_count(): the meter made before
 * keeps its slots. Traffic polled from the registered thread, and a
 * profile update while it is registered, leave the counts right.
 */
static int
test_thread_register(void)
{
	struct rte_flow_error ferr;
	struct rte_mtr_error err;
	struct rte_mtr_stats st;
	struct rte_flow *f;
	pthread_t th;
	struct got g;
	int ret;

	f = mtr_rule();
	TEST_ASSERT_NOT_NULL(f, "metered rule");
	TEST_ASSERT_SUCCESS(stats(&st, 1), "clear");
	reg_state = 0;
	TEST_ASSERT_SUCCESS(pthread_create(&th, NULL, reg_run, &g), "thread");
	while (__atomic_load_n(&reg_state, __ATOMIC_ACQUIRE) != 1)
		rte_pause();
	ret = rte_mtr_meter_profile_update(port1, MTR, PROF_TR, &err);
	__atomic_store_n(&reg_state, 2, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	TEST_ASSERT_SUCCESS(ret, "profile update: %s", err.message);
	TEST_ASSERT_SUCCESS(reg_result, "traffic from a registered thread");
	TEST_ASSERT_SUCCESS(check_colours(&g, false), "colours");
	TEST_ASSERT_SUCCESS(stats(&st, 1), "stats");
	TEST_ASSERT_SUCCESS(check_stats(&st), "counts");
	TEST_ASSERT_SUCCESS(rte_flow_destroy(port1, f, &ferr), "destroy");
	return TEST_SUCCESS;
}

static int
mtr_setup(void)
{
	struct rte_eth_conf conf = { 0 };
	struct rte_mtr_meter_profile tr = {
		/* 10 GB/s: 500 bytes come back in 50 ns */
		.alg = RTE_MTR_TRTCM_RFC2698,
		.trtcm_rfc2698 = { .cir = 10000000000ull,
				   .pir = 10000000000ull, .cbs = 400,
				   .pbs = 500 },
	};
	struct rte_mtr_meter_profile big = tr;
	struct rte_mtr_meter_policy_params qqd = {
		.actions = {
			[RTE_COLOR_GREEN] = (struct rte_flow_action[]) {
				ACT(QUEUE, &(struct rte_flow_action_queue){ 0 }),
				ACT_END,
			},
			[RTE_COLOR_YELLOW] = (struct rte_flow_action[]) {
				ACT(QUEUE, &(struct rte_flow_action_queue){ 1 }),
				ACT_END,
			},
			[RTE_COLOR_RED] = (struct rte_flow_action[]) {
				ACT(DROP, NULL), ACT_END,
			},
		},
	};
	struct rte_mtr_meter_policy_params marked = qqd;
	struct rte_mtr_meter_policy_params far = qqd;
	struct rte_flow_action q9[] = {
		ACT(QUEUE, &(struct rte_flow_action_queue){ 9 }), ACT_END,
	};
	struct rte_flow_action green_mark[] = {
		ACT(MARK, &(struct rte_flow_action_mark){ 7 }),
		ACT(QUEUE, &(struct rte_flow_action_queue){ 0 }),
		ACT_END,
	};
	struct rte_mtr_params params = {
		.meter_profile_id = PROF_TR, .meter_policy_id = POL_QQD,
		.meter_enable = 1, .stats_mask = UINT8_MAX,
	};
	struct rte_mtr_error err;

	big.trtcm_rfc2698.cbs = 2000;
	big.trtcm_rfc2698.pbs = 3000;
	marked.actions[RTE_COLOR_GREEN] = green_mark;
	TEST_ASSERT_SUCCESS(vbr_test_pair_ports(&port0, &port1), "ports");
	/*
	 * Before dev_configure the port has no Rx queue count: a policy's
	 * queue is checked at flow create and dev_start instead.
	 */
	far.actions[RTE_COLOR_YELLOW] = q9;
	TEST_ASSERT_SUCCESS(rte_mtr_meter_policy_add(port1, 60, &far, &err),
			    "unconfigured port: policy to queue 9: %s",
			    err.message);
	TEST_ASSERT_SUCCESS(rte_mtr_meter_policy_delete(port1, 60, &err),
			    "policy 60 deleted");
	TEST_ASSERT_SUCCESS(vbr_test_port_config(port0, &conf, 1, RING_SIZE,
						 RING_SIZE, mp), "port 0");
	TEST_ASSERT_SUCCESS(vbr_test_port_config(port1, &conf, NB_RXQ,
						 RING_SIZE, RING_SIZE, mp),
			    "port 1");
	TEST_ASSERT_SUCCESS(vbr_test_pair_start(port0, port1), "start");
	TEST_ASSERT_SUCCESS(rte_eth_macaddr_get(port0, &mac0), "mac 0");
	TEST_ASSERT_SUCCESS(rte_eth_macaddr_get(port1, &mac1), "mac 1");
	TEST_ASSERT_SUCCESS(rte_mtr_meter_profile_add(port1, PROF_TR, &tr,
						      &err), "profile: %s",
			    err.message);
	TEST_ASSERT_SUCCESS(rte_mtr_meter_profile_add(port1, PROF_TR_BIG,
						      &big, &err), "profile");
	TEST_ASSERT_SUCCESS(rte_mtr_meter_policy_add(port1, POL_QQD, &qqd,
						     &err), "policy: %s",
			    err.message);
	TEST_ASSERT_SUCCESS(rte_mtr_meter_policy_add(port1, POL_MARK, &marked,
						     &err), "policy: %s",
			    err.message);
	TEST_ASSERT_SUCCESS(rte_mtr_create(port1, MTR, &params, 1, &err),
			    "meter: %s", err.message);
	rte_delay_ms(50);
	return TEST_SUCCESS;
}

static const struct unit_test_suite packet_suite = {
	.name = "vbr meters: packets",
	.setup = mtr_setup,
	.cases = {
		TEST_CASE(test_colours),
		TEST_CASE(test_lifecycle),
		TEST_CASE(test_profile_update),
		TEST_CASE(test_recreate),
		TEST_CASE(test_errors),
		TEST_CASE(test_colour_aware),
		TEST_CASE(test_colour_aware_stripped),
		TEST_CASE(test_handoff_after_destroy),
		TEST_CASE(test_handoff_stop),
		TEST_CASE(test_fewer_queues),
		TEST_CASE(test_thread_register),
		TEST_CASES_END(),
	},
};

int
main(int argc, char **argv)
{
	int ret, ret2;

	if (argc != 2) {
		fprintf(stderr, "usage: %s <librte_net_vbr.so>\n", argv[0]);
		return 2;
	}
	/* rte_meter reads the TSC rate that EAL measures. */
	ret = vbr_test_eal_init(argv[0], argv[1], "pmd.net.vbr:notice",
				"fmtr", NULL);
	if (ret != 0)
		return ret == TEST_SKIPPED ? ret : 1;
	ret = unit_test_suite_runner(&suite);
	mp = vbr_test_pool("mtr_pkts", 4095);
	if (mp == NULL)
		return 1;
	ret2 = unit_test_suite_runner(&packet_suite);
	vbr_test_pair_fini(port0, port1, mp);
	if (ret == 1 || ret2 == 1)
		return 1;
	return ret2;
}
