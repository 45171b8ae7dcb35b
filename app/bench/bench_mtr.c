/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * rte_mtr meters on a vbr port: how fast they are made and destroyed, what
 * each costs in memory, and what the policer costs per frame.
 *
 *   bench-mtr PATH/librte_net_vbr.so [meters (1000)] [EAL options ...]
 *
 * One port (a vbr pair wire's end, configured, not started: meters need no
 * traffic), one trTCM profile and one policy; then, timed, meters 1 to n
 * made (rte_mtr_create()), and destroyed; then the same for 65535 meters
 * (with meter 0, the 65536 a port holds): the rate must not fall with the
 * meters there are (meters are found by id in a hash). Memory per meter:
 * the growth of
 * DPDK's heap (rte_malloc_get_socket_stats(): the datapath part, the
 * meter's buckets and counts) and of libc's heap (mallinfo2(): the control
 * part) over meters 1 to n, after meter 0 was made (it also makes the
 * port's table of meter slots, once). The datapath part grows with the EAL
 * lcores (a record pair and counts per lcore index): the figures are for
 * this run's lcores, printed.
 *
 * Policer: cycles per frame of vbr_mtr_color_n() (the Rx burst's call) for
 * runs of 32 frames of 64 bytes from one slot, colour-blind and
 * colour-aware, next to rte_meter's own check on one meter; and of
 * vbr_mtr_in_colour() (a frame's input colour from its headers). Then one
 * frame per meter over 1000 meters in turn (one meter per rule over 1k
 * rules: every frame a run of its own, a meter's lines rarely in L1): the
 * policer with its counts, the meter 4 frames on asked for first as the Rx
 * burst does, against rte_meter's check on 1000 meters in turn; best of 9
 * each, taking turns.
 * Not a test: no pass/fail.
 */

#include <inttypes.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_meter.h>
#include <rte_mtr.h>

#include "vbr_mtr.h"

#define RUN 32
#define ROUNDS 200000

static size_t
heap_dpdk(void)
{
	struct rte_malloc_socket_stats st;
	size_t sum = 0;
	int s;

	for (s = 0; s < (int)rte_socket_count(); s++)
		if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(s),
						&st) == 0)
			sum += st.heap_allocsz_bytes;
	return sum;
}

static size_t
heap_libc(void)
{
	return mallinfo2().uordblks;
}

static double
secs(uint64_t c)
{
	return (double)c / rte_get_tsc_hz();
}

/* Make meters 1 to n and destroy them, timed; mem: print memory too. */
static int
meters(uint16_t port, unsigned int n, bool mem)
{
	struct rte_mtr_meter_profile prof = {
		.alg = RTE_MTR_TRTCM_RFC2698,
		.trtcm_rfc2698 = { .cir = 1250000, .pir = 2500000, .cbs = 2048,
				   .pbs = 4096 },
	};
	struct rte_flow_action green[] = {
		{ .type = RTE_FLOW_ACTION_TYPE_QUEUE,
		  .conf = &(struct rte_flow_action_queue){ 0 } },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	struct rte_flow_action red[] = {
		{ .type = RTE_FLOW_ACTION_TYPE_DROP },
		{ .type = RTE_FLOW_ACTION_TYPE_END },
	};
	struct rte_mtr_meter_policy_params pol = {
		.actions = { green, green, red },
	};
	struct rte_mtr_params p = {
		.meter_profile_id = 1, .meter_policy_id = 1, .meter_enable = 1,
		.stats_mask = UINT64_MAX,
	};
	size_t d0, l0, d1, l1, dfirst, lfirst;
	struct rte_mtr_error err;
	uint64_t t0, t1, t2;
	unsigned int i;

	if (mem && (rte_mtr_meter_profile_add(port, 1, &prof, &err) != 0 ||
		    rte_mtr_meter_policy_add(port, 1, &pol, &err) != 0)) {
		fprintf(stderr, "profile or policy: %s\n", err.message);
		return -1;
	}
	malloc_trim(0);
	dfirst = heap_dpdk();
	lfirst = heap_libc();
	if (rte_mtr_create(port, 0, &p, 1, &err) != 0) {
		fprintf(stderr, "meter 0: %s\n", err.message);
		return -1;
	}
	d0 = heap_dpdk();
	l0 = heap_libc();
	t0 = rte_rdtsc();
	for (i = 1; i <= n; i++) {
		if (rte_mtr_create(port, i, &p, 1, &err) != 0) {
			fprintf(stderr, "meter %u: %s\n", i, err.message);
			return -1;
		}
	}
	t1 = rte_rdtsc();
	d1 = heap_dpdk();
	l1 = heap_libc();
	for (i = 1; i <= n; i++)
		rte_mtr_destroy(port, i, &err);
	t2 = rte_rdtsc();
	printf("meters: %u made in %.3f ms: %.0f meters/s; destroyed %.0f/s\n",
	       n, secs(t1 - t0) * 1e3, n / secs(t1 - t0), n / secs(t2 - t1));
	if (!mem)
		goto out;
	printf("memory per meter: %.0f B DPDK heap (buckets, counts: %u EAL "
	       "lcore slots + 2) + %.0f B libc heap (control) = %.0f B\n",
	       (double)(d1 - d0) / n, rte_lcore_count(), (double)(l1 - l0) / n,
	       (double)(d1 - d0 + l1 - l0) / n);
	printf("first meter of a port: %zu B DPDK heap (with the slot table), "
	       "%zd B libc heap\n", d0 - dfirst, (ssize_t)(l0 - lfirst));
out:
	rte_mtr_destroy(port, 0, &err);
	return 0;
}

/* The policer benches' trTCM: rates and bursts no run reaches (green). */
static const struct rte_mtr_meter_profile unbound = {
	.alg = RTE_MTR_TRTCM_RFC2698,
	.trtcm_rfc2698 = { .cir = 100000000000ull, .pir = 100000000000ull,
			   .cbs = 1u << 30, .pbs = 1u << 30 },
};

/* Cycles per frame of the policer and of rte_meter, runs of RUN frames. */
static void
policer(void)
{
	const struct rte_mtr_meter_profile mp = unbound;
	uint8_t frame[64] = {
		[12] = 0x08, [13] = 0x00, [14] = 0x45, [15] = 10 << 2,
	};
	struct rte_meter_trtcm_profile rp;
	struct rte_meter_trtcm rm;
	struct rte_meter_trtcm_params rpa = {
		mp.trtcm_rfc2698.cir, mp.trtcm_rfc2698.pir,
		mp.trtcm_rfc2698.cbs, mp.trtcm_rfc2698.pbs,
	};
	uint32_t len[RUN];
	uint8_t in[RUN], c[RUN];
	struct vbr_mtr_prm prm;
	struct vbr_mtr_rt *rt;
	uint64_t t0, t1, now, sink = 0;
	unsigned int i, k;
	size_t sz = vbr_mtr_rt_size(vbr_mtr_rt_nslots(1));

	vbr_mtr_prm_config(&prm, &mp);
	rt = rte_zmalloc("bench_mtr", sz, RTE_CACHE_LINE_SIZE);
	if (rt == NULL)
		return;
	vbr_mtr_rt_init(rt, 1, vbr_mtr_own_setup());
	vbr_mtr_rt_reset(rt, vbr_mtr_rt_ctrl(rt), &prm, rte_rdtsc());
	for (i = 0; i < RUN; i++) {
		len[i] = 64;
		in[i] = RTE_COLOR_GREEN;
	}
	rt->in.tab[2][10] = RTE_COLOR_YELLOW;
	rte_meter_trtcm_profile_config(&rp, &rpa);
	rte_meter_trtcm_config(&rm, &rp);

	/* Each twice: the first round warms caches and pages up. */
	for (k = 0; k < 6; k++) {
		const char *what[] = { "colour-blind", "colour-aware",
				       "rte_meter" };

		t0 = rte_rdtsc();
		for (i = 0; i < ROUNDS; i++) {
			now = rte_rdtsc();
			if (k % 3 == 2) {
				unsigned int j;

				for (j = 0; j < RUN; j++)
					sink += rte_meter_trtcm_color_blind_check(
						&rm, &rp, now, 64);
				continue;
			}
			vbr_mtr_color_n(rt, 0, now, len, RUN,
					k % 3 == 1 ? in : NULL, c);
			sink += c[0];
		}
		t1 = rte_rdtsc();
		if (k < 3)
			continue;
		printf("policer, runs of %u frames: %s %.1f cycles/frame\n", RUN,
		       what[k % 3], (double)(t1 - t0) / ROUNDS / RUN);
	}
	t0 = rte_rdtsc();
	for (i = 0; i < ROUNDS * RUN; i++) {
		/* DSCP i % 64: not the same frame each time */
		frame[15] = (uint8_t)(i << 2);
		sink += vbr_mtr_in_colour(&rt->in, 3 | 1 << 4, frame,
					  sizeof(frame));
	}
	t1 = rte_rdtsc();
	printf("input colour of a frame (outer_vlan, outer_ip): %.1f "
	       "cycles/frame (%" PRIu64 ")\n",
	       (double)(t1 - t0) / ROUNDS / RUN, sink % 7);
	rte_free(rt);
}

#define MANY 1000

/*
 * One frame per meter, MANY meters in turn, a time per round of RUN frames
 * (a burst's): the policer (vbr_mtr_color_n() and vbr_mtr_count(), as the
 * Rx burst runs them for a run of one frame) against rte_meter's check on
 * MANY meters in turn.
 */
static void
policer_many(void)
{
	const struct rte_mtr_meter_profile mp = unbound;
	struct rte_meter_trtcm_params rpa = {
		mp.trtcm_rfc2698.cir, mp.trtcm_rfc2698.pir,
		mp.trtcm_rfc2698.cbs, mp.trtcm_rfc2698.pbs,
	};
	size_t sz = vbr_mtr_rt_size(vbr_mtr_rt_nslots(1));
	static struct vbr_mtr_rt *rt[MANY];
	static struct rte_meter_trtcm rm[MANY];
	struct rte_meter_trtcm_profile rp;
	struct vbr_mtr_prm prm;
	uint64_t t0, t1, now = 0, sink = 0;
	double best[2] = { 1e9, 1e9 };
	unsigned int i, k, m;
	uint32_t len = 64;

	vbr_mtr_prm_config(&prm, &mp);
	rte_meter_trtcm_profile_config(&rp, &rpa);
	for (m = 0; m < MANY; m++) {
		rt[m] = rte_zmalloc("bench_mtr", sz, RTE_CACHE_LINE_SIZE);
		if (rt[m] == NULL)
			goto out;
		vbr_mtr_rt_init(rt[m], 1, vbr_mtr_own_setup());
		vbr_mtr_rt_reset(rt[m], vbr_mtr_rt_ctrl(rt[m]), &prm,
				 rte_rdtsc());
		rte_meter_trtcm_config(&rm[m], &rp);
	}
	/* Taking turns, ten times each: the best of each but the first (a
	 * shared machine's noise only ever adds cycles).
	 */
	for (k = 0; k < 20; k++) {
		t0 = rte_rdtsc();
		for (i = 0, m = 0; i < ROUNDS; i++) {
			uint8_t c;

			if (i % RUN == 0)
				now = rte_rdtsc();
			if (k % 2 == 1) {
				sink += rte_meter_trtcm_color_blind_check(
					&rm[m], &rp, now, len);
			} else {
				/* As the Rx burst: 4 frames ahead. */
				vbr_mtr_rt_prefetch(rt[(m + 4) % MANY], 0);
				vbr_mtr_color_n(rt[m], 0, now, &len, 1, NULL,
						&c);
				vbr_mtr_count(rt[m], 0, (enum rte_color)c,
					      len, false);
				sink += c;
			}
			m = m + 1 == MANY ? 0 : m + 1;
		}
		t1 = rte_rdtsc();
		if (k >= 2 && (double)(t1 - t0) / ROUNDS < best[k % 2])
			best[k % 2] = (double)(t1 - t0) / ROUNDS;
	}
	printf("policer, one frame per meter over %u meters (best of 9): "
	       "policer and counts %.1f cycles/frame, rte_meter %.1f (%"
	       PRIu64 ")\n", MANY, best[0], best[1], sink % 7);
out:
	for (m = 0; m < MANY; m++)
		rte_free(rt[m]);
}

int
main(int argc, char **argv)
{
	char pfx[64], vdev0[96], vdev1[96];
	struct rte_eth_conf conf = { 0 };
	unsigned int n = 1000;
	char *eal[32];
	int ne = 0, i;

	if (argc < 2) {
		fprintf(stderr, "usage: %s <librte_net_vbr.so> [meters] "
			"[EAL options]\n", argv[0]);
		return 2;
	}
	if (argc > 2)
		n = (unsigned int)strtoul(argv[2], NULL, 0);
	snprintf(pfx, sizeof(pfx), "bench-mtr-%d", (int)getpid());
	snprintf(vdev0, sizeof(vdev0), "net_vbr0,wire=pair:bmtr%d,"
		 "progress=inline", (int)getpid());
	snprintf(vdev1, sizeof(vdev1), "net_vbr1,wire=pair:bmtr%d,"
		 "progress=inline", (int)getpid());
	eal[ne++] = argv[0];
	eal[ne++] = "--no-huge";
	eal[ne++] = "-m";
	eal[ne++] = "512";
	eal[ne++] = "--no-shconf";
	eal[ne++] = "--no-pci";
	eal[ne++] = "--file-prefix";
	eal[ne++] = pfx;
	eal[ne++] = "--log-level";
	eal[ne++] = "pmd.net.vbr:warning";
	eal[ne++] = "-d";
	eal[ne++] = argv[1];
	eal[ne++] = "--vdev";
	eal[ne++] = vdev0;
	eal[ne++] = "--vdev";
	eal[ne++] = vdev1;
	for (i = 3; i < argc && ne < (int)RTE_DIM(eal) - 1; i++)
		eal[ne++] = argv[i];
	eal[ne] = NULL;
	if (rte_eal_init(ne, eal) < 0) {
		fprintf(stderr, "EAL init failed\n");
		return 1;
	}
	if (rte_eth_dev_count_avail() < 1 ||
	    rte_eth_dev_configure(0, 1, 1, &conf) != 0) {
		fprintf(stderr, "no vbr port\n");
		return 1;
	}
	if (meters(0, n, true) != 0 || meters(0, VBR_MTR_MAX - 1, false) != 0)
		return 1;
	policer();
	policer_many();
	rte_eal_cleanup();
	return 0;
}
