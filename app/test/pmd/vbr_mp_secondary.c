/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * A secondary process on a primary's vbr ports, driven through stdin by
 * app/test/scripts/test_mp_testpmd.py (it is not a test by itself).
 *
 * usage: vbr-mp-secondary EAL-ARGS (with --proc-type=secondary)
 * Prints "ready N" (N ports), then answers one command a line:
 *   check   per port: "stats P RET ipackets opackets ibytes obytes imissed
 *           ierrors oerrors", "rx P N" (an Rx burst), "tx P N" (a Tx burst
 *           of one mbuf), "configure P RET", "start P RET", "mtu P RET"
 *   stats   per port: "stats P RET ..." as above
 *   quit    close the ports, "bye", exit 0
 */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

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
}

int
main(int argc, char **argv)
{
	struct rte_mempool *mp;
	char line[64];
	uint16_t p;

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
