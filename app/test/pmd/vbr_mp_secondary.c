/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * A secondary process on a primary's vbr ports, driven through stdin by
 * app/test/scripts/test_mp_testpmd.py (it is not a test by itself).
 *
 * usage: vbr-mp-secondary EAL-ARGS (with --proc-type=secondary)
 * Prints "ready N" (N ports), then answers one command a line:
 *   check   per port: "stats P RET ipackets opackets ibytes obytes imissed
 *           ierrors oerrors", "rx P N" (an Rx burst), "tx P N" (a Tx burst
 *           of one mbuf), "configure P RET", "start P RET", "mtu P RET",
 *           then the PMD's own API (found with dlsym() in the -d plugin):
 *           "set_limit P RET", "get_limit P RET", "pace_window P RET"
 *   stats   per port: "stats P RET ..." as above
 *   quit    close the ports, "bye", exit 0
 */

#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

/* rte_pmd_vbr.h's calls, from the plugin the EAL loaded (NULL: none). */
static int (*set_limit)(uint16_t, uint16_t, uint32_t, uint32_t, uint16_t);
static int (*get_limit)(uint16_t, uint16_t, uint32_t *, uint32_t *,
			uint16_t *);
static int (*pace_window)(uint16_t, uint64_t *, uint64_t *);

/* The plugin named by -d in argv (read before the EAL reorders it). */
static const char *
pmd_path(int argc, char **argv)
{
	int i;

	for (i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], "-d") == 0)
			return argv[i + 1];
	return NULL;
}

/* The PMD's API in the plugin at path, which the EAL loaded. */
static void
find_pmd_api(const char *path)
{
	void *h = path != NULL ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;

	if (h == NULL)
		return;
	set_limit = (__typeof__(set_limit))dlsym(h,
		"rte_pmd_vbr_set_queue_rate_limit");
	get_limit = (__typeof__(get_limit))dlsym(h,
		"rte_pmd_vbr_get_queue_rate_limit");
	pace_window = (__typeof__(pace_window))dlsym(h,
		"rte_pmd_vbr_pace_window");
}

/* The PMD's API on port p: a secondary's calls are refused. */
static void
check_pmd_api(uint16_t p)
{
	uint64_t due, latest;
	uint32_t rate, burst;
	uint16_t size;

	if (set_limit == NULL || get_limit == NULL || pace_window == NULL) {
		printf("pmd_api %u missing\n", p);
		return;
	}
	printf("set_limit %u %d\n", p, set_limit(p, 0, 1000, 0, 0));
	printf("get_limit %u %d\n", p, get_limit(p, 0, &rate, &burst, &size));
	printf("pace_window %u %d\n", p, pace_window(p, &due, &latest));
}

static void
print_stats(uint16_t p)
{
	struct rte_eth_stats st;
	int ret;

	memset(&st, 0, sizeof(st));
	ret = rte_eth_stats_get(p, &st);
	printf("stats %u %d %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
	       " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", p, ret, st.ipackets,
	       st.opackets, st.ibytes, st.obytes, st.imissed, st.ierrors,
	       st.oerrors);
}

static void
check(uint16_t p, struct rte_mempool *mp)
{
	struct rte_eth_conf conf;
	struct rte_mbuf *pkts[32];
	uint16_t n;

	print_stats(p);
	n = rte_eth_rx_burst(p, 0, pkts, RTE_DIM(pkts));
	printf("rx %u %u\n", p, n);
	pkts[0] = rte_pktmbuf_alloc(mp);
	if (pkts[0] == NULL) {
		printf("tx %u nombuf\n", p);
	} else {
		memset(rte_pktmbuf_append(pkts[0], 60), 0, 60);
		n = rte_eth_tx_burst(p, 0, pkts, 1);
		printf("tx %u %u\n", p, n);
		if (n == 0)
			rte_pktmbuf_free(pkts[0]);
	}
	memset(&conf, 0, sizeof(conf));
	printf("configure %u %d\n", p, rte_eth_dev_configure(p, 1, 1, &conf));
	printf("start %u %d\n", p, rte_eth_dev_start(p));
	printf("mtu %u %d\n", p, rte_eth_dev_set_mtu(p, 1400));
	check_pmd_api(p);
}

int
main(int argc, char **argv)
{
	struct rte_mempool *mp;
	char line[64];
	uint16_t p;

	const char *pmd = pmd_path(argc, argv);

	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "cannot init EAL\n");
		return 1;
	}
	/* used only by this process: a Tx burst that takes no mbuf */
	mp = rte_pktmbuf_pool_create("vbr_mp_sec", 63, 0, 0,
				     RTE_MBUF_DEFAULT_BUF_SIZE,
				     rte_socket_id());
	if (mp == NULL) {
		fprintf(stderr, "cannot create a mempool\n");
		return 1;
	}
	find_pmd_api(pmd);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready %u\n", rte_eth_dev_count_avail());
	while (fgets(line, sizeof(line), stdin) != NULL) {
		if (strncmp(line, "check", 5) == 0) {
			RTE_ETH_FOREACH_DEV(p)
				check(p, mp);
		} else if (strncmp(line, "stats", 5) == 0) {
			RTE_ETH_FOREACH_DEV(p)
				print_stats(p);
		} else if (strncmp(line, "quit", 4) == 0) {
			break;
		}
		printf("done\n");
	}
	RTE_ETH_FOREACH_DEV(p)
		rte_eth_dev_close(p);
	rte_mempool_free(mp);
	rte_eal_cleanup();
	printf("bye\n");
	return 0;
}
