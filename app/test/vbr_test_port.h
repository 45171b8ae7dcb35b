/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Helpers shared by the test programs that load the vbr PMD: the device
 * they run on (swverbs, or the NIC VBR_TEST_DEV names), EAL start-up
 * with the PMD (no hugepages, no shared files), the mbuf pool, port
 * configuration, sending with a deadline, tear-down, and a Toeplitz
 * reference kept apart from the driver's code.
 */

#ifndef VBR_TEST_PORT_H
#define VBR_TEST_PORT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_bus_vdev.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_flow.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_udp.h>

#include "test.h"
#include "vbr_test_compat.h"

/*
 * The device the suites run on. Without VBR_TEST_DEV: swverbs (its default
 * profile), two ports joined by a pair wire. With VBR_TEST_DEV=<verbs
 * device> (e.g. mlx5_0): port 0 on it and port 1 on VBR_TEST_DEV_PEER (the
 * port cabled to it: the second port of the NIC with a cable between the
 * two, or a port of another NIC), through the ibverbs glue.
 */
static inline const char *
vbr_test_env(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && v[0] != '\0' ? v : NULL;
}

/** The verbs device named by VBR_TEST_DEV, or NULL (swverbs). */
static inline const char *
vbr_test_dev(void)
{
	return vbr_test_env("VBR_TEST_DEV");
}

/** The peer device, VBR_TEST_DEV_PEER, or NULL. */
static inline const char *
vbr_test_dev_peer(void)
{
	return vbr_test_env("VBR_TEST_DEV_PEER");
}

/** Skip the case (77) on a device named by VBR_TEST_DEV: swverbs only. */
#define VBR_TEST_SWVERBS_ONLY(why) do { \
	if (vbr_test_dev() != NULL) \
		TEST_SKIP("on %s: %s", vbr_test_dev(), why); \
} while (0)

/** Skip the case (77) when the device does not count the xstat name. */
#define VBR_TEST_NEED_XSTAT(port, name) do { \
	uint64_t vbr_test_id_; \
	if (rte_eth_xstats_get_id_by_name(port, name, &vbr_test_id_) != 0) \
		TEST_SKIP("the device has no xstat %s", name); \
} while (0)

/** The value of the port's xstat name, or UINT64_MAX when it has none. */
static inline uint64_t
vbr_test_xstat(uint16_t port, const char *name)
{
	uint64_t id, v;

	if (rte_eth_xstats_get_id_by_name(port, name, &id) != 0 ||
	    rte_eth_xstats_get_by_id(port, &id, &v, 1) != 1)
		return UINT64_MAX;
	return v;
}

/** The per-queue counters, by the names of rte_eth_stats' arrays. */
enum vbr_test_qstat {
	VBR_TEST_Q_IPACKETS,	/**< q_ipackets, xstat rx_q<n>_packets */
	VBR_TEST_Q_IBYTES,	/**< q_ibytes, rx_q<n>_bytes */
	VBR_TEST_Q_ERRORS,	/**< q_errors, rx_q<n>_errors */
	VBR_TEST_Q_OPACKETS,	/**< q_opackets, tx_q<n>_packets */
	VBR_TEST_Q_OBYTES,	/**< q_obytes, tx_q<n>_bytes */
};

/*
 * Queue q's counter which of the port whose rte_eth_stats_get() gave *s:
 * the q_* array of *s up to 24.11; from 25.11, which moved them out of
 * rte_eth_stats, the per-queue xstat ethdev makes of it (the PMD sets
 * RTE_ETH_DEV_AUTOFILL_QUEUE_XSTATS), read now: call it with no traffic
 * since *s was read. UINT64_MAX when there is none.
 */
static inline uint64_t
vbr_test_qstat(uint16_t port, const struct rte_eth_stats *s,
	       enum vbr_test_qstat which, uint16_t q)
{
#if VBR_TEST_QSTATS_IN_XSTATS
	static const char *const fmt[] = {
		[VBR_TEST_Q_IPACKETS] = "rx_q%u_packets",
		[VBR_TEST_Q_IBYTES] = "rx_q%u_bytes",
		[VBR_TEST_Q_ERRORS] = "rx_q%u_errors",
		[VBR_TEST_Q_OPACKETS] = "tx_q%u_packets",
		[VBR_TEST_Q_OBYTES] = "tx_q%u_bytes",
	};
	char name[RTE_ETH_XSTATS_NAME_SIZE];

	RTE_SET_USED(s);
	snprintf(name, sizeof(name), fmt[which], q);
	return vbr_test_xstat(port, name);
#else
	RTE_SET_USED(port);
	if (q >= RTE_ETHDEV_QUEUE_STAT_CNTRS)
		return UINT64_MAX;
	switch (which) {
	case VBR_TEST_Q_IPACKETS:
		return s->q_ipackets[q];
	case VBR_TEST_Q_IBYTES:
		return s->q_ibytes[q];
	case VBR_TEST_Q_ERRORS:
		return s->q_errors[q];
	case VBR_TEST_Q_OPACKETS:
		return s->q_opackets[q];
	case VBR_TEST_Q_OBYTES:
		return s->q_obytes[q];
	}
	return UINT64_MAX;
#endif
}

/*
 * The progress model the suites run their swverbs ports with:
 * VBR_TEST_PROGRESS (thread, service, inline; unset: the PMD's default,
 * inline).
 * devtools/test.sh runs the PMD suites once per model. Every wire= port a
 * suite makes gets progress=<model> (vbr_test_vdev_args()), unless its
 * devargs choose (progress=, or engine_cpu=, which belongs to thread); a
 * model that needs more of EAL gets it in vbr_test_eal_init().
 */
static inline const char *
vbr_test_progress(void)
{
	return vbr_test_env("VBR_TEST_PROGRESS");
}

/** Whether the model runs the ports on a DPDK service (a service lcore). */
static inline int
vbr_test_progress_service(void)
{
	const char *p = vbr_test_progress();

	return p != NULL && strcmp(p, "service") == 0;
}

/*
 * args, with ",progress=<model>" added for a wire= port whose args do not
 * choose. The result may be a static buffer, valid until the next call.
 */
static inline const char *
vbr_test_vdev_args(const char *args)
{
	static char buf[256];
	const char *p = vbr_test_progress();

	if (p == NULL || args == NULL || strncmp(args, "wire=", 5) != 0 ||
	    strstr(args, "progress=") != NULL ||
	    strstr(args, "engine_cpu=") != NULL)
		return args;
	if ((size_t)snprintf(buf, sizeof(buf), "%s,progress=%s", args, p) >=
	    sizeof(buf))
		return args;
	return buf;
}

/** rte_vdev_init() with the test's progress model (vbr_test_vdev_args()). */
static inline int
vbr_test_vdev_init(const char *name, const char *args)
{
	return rte_vdev_init(name, vbr_test_vdev_args(args));
}

/*
 * Start EAL on lcore 0 with the PMD at pmd. log_level (e.g.
 * "pmd.net.vbr:info") may be NULL. With cable set, net_vbr0 and net_vbr1
 * are created: on the pair wire of that name, or on VBR_TEST_DEV and
 * VBR_TEST_DEV_PEER when VBR_TEST_DEV is set. With vdev set, that device
 * too. Return 0, TEST_SKIPPED (a two-port suite without
 * VBR_TEST_DEV_PEER), or -1 (said on stdout).
 */
static inline int
vbr_test_eal_init(const char *prog, const char *pmd, const char *log_level,
		  const char *cable, const char *vdev)
{
	static char log_arg[128], vdev0[272], vdev1[272], vdev2[272];
	const char *dev = vbr_test_dev(), *peer = vbr_test_dev_peer();
	char *eal[20];
	int n = 0;

	eal[n++] = (char *)(uintptr_t)prog;
	eal[n++] = (char *)(uintptr_t)"--no-huge";
	eal[n++] = (char *)(uintptr_t)"--no-shconf";
	eal[n++] = (char *)(uintptr_t)"--no-pci";
	if (vbr_test_progress_service()) {
		/* a service lcore (1) beside lcore 0, on any CPU */
		eal[n++] = (char *)(uintptr_t)"--lcores";
		eal[n++] = (char *)(uintptr_t)"0@0,1@(0-1)";
		eal[n++] = (char *)(uintptr_t)"-S";
		eal[n++] = (char *)(uintptr_t)"1";
	} else {
		eal[n++] = (char *)(uintptr_t)"-l";
		eal[n++] = (char *)(uintptr_t)"0";
	}
	if (vbr_test_progress() != NULL)
		printf("progress model: %s (VBR_TEST_PROGRESS)\n",
		       vbr_test_progress());
	if (log_level != NULL) {
		snprintf(log_arg, sizeof(log_arg), "--log-level=%s",
			 log_level);
		eal[n++] = log_arg;
	}
	eal[n++] = (char *)(uintptr_t)"-d";
	eal[n++] = (char *)(uintptr_t)pmd;
	if (cable != NULL && dev != NULL) {
		if (peer == NULL) {
			printf("SKIP: VBR_TEST_DEV=%s: a two-port suite needs "
			       "VBR_TEST_DEV_PEER=<the port cabled to it>\n",
			       dev);
			return TEST_SKIPPED;
		}
		snprintf(vdev0, sizeof(vdev0), "net_vbr0,dev=%s", dev);
		snprintf(vdev1, sizeof(vdev1), "net_vbr1,dev=%s", peer);
		printf("device: %s, peer %s (VBR_TEST_DEV)\n", dev, peer);
	} else if (cable != NULL) {
		char wire[128];
		const char *args;

		snprintf(wire, sizeof(wire), "wire=pair:%s", cable);
		args = vbr_test_vdev_args(wire);
		snprintf(vdev0, sizeof(vdev0), "net_vbr0,%s", args);
		snprintf(vdev1, sizeof(vdev1), "net_vbr1,%s", args);
	}
	if (cable != NULL) {
		eal[n++] = (char *)(uintptr_t)"--vdev";
		eal[n++] = vdev0;
		eal[n++] = (char *)(uintptr_t)"--vdev";
		eal[n++] = vdev1;
	}
	if (vdev != NULL) {
		const char *comma = strchr(vdev, ',');

		if (comma != NULL)
			snprintf(vdev2, sizeof(vdev2), "%.*s,%s",
				 (int)(comma - vdev), vdev,
				 vbr_test_vdev_args(comma + 1));
		else
			snprintf(vdev2, sizeof(vdev2), "%s", vdev);
		eal[n++] = (char *)(uintptr_t)"--vdev";
		eal[n++] = vdev2;
	}
	eal[n] = NULL;
	if (rte_eal_init(n, eal) < 0) {
		printf("rte_eal_init failed: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

/*
 * The group a test main() was asked for (argv[2]; argv[1]: the PMD): the
 * index in @groups, an array of structs with a const char *name, or -1
 * once the usage or the unknown name is said on stderr.
 */
#define VBR_TEST_GROUP(argc, argv, groups) \
	vbr_test_group((argc), (argv), &(groups)[0].name, \
		       sizeof((groups)[0]), RTE_DIM(groups))

static inline int
vbr_test_group(int argc, char **argv, const char *const *name,
	       size_t stride, unsigned int n)
{
	unsigned int g;

	if (argc != 3) {
		fprintf(stderr, "usage: %s <librte_net_vbr.so> <group>\n",
			argv[0]);
		return -1;
	}
	for (g = 0; g < n; g++) {
		if (strcmp(argv[2], *name) == 0)
			return (int)g;
		name = (const char *const *)(const void *)
		       ((const char *)name + stride);
	}
	fprintf(stderr, "unknown group %s\n", argv[2]);
	return -1;
}

/** A main()'s exit status for a vbr_test_eal_init() result. */
static inline int
vbr_test_init_status(int ret)
{
	return ret == TEST_SKIPPED ? 77 : ret != 0 ? 1 : 0;
}

/* An mbuf pool of n default-sized buffers; NULL (said on stdout). */
static inline struct rte_mempool *
vbr_test_pool(const char *name, unsigned int n)
{
	struct rte_mempool *mp;

	mp = rte_pktmbuf_pool_create(name, n, 256, 0,
				     RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (mp == NULL)
		printf("mempool: %s\n", rte_strerror(rte_errno));
	return mp;
}

/*
 * Configure a port as conf says with nb_rxq Rx queues of nb_rxd
 * descriptors from mp and one Tx queue of nb_txd; not started. Return 0
 * or the failing call's result (said on stdout).
 */
static inline int
vbr_test_port_config(uint16_t port, const struct rte_eth_conf *conf,
		     uint16_t nb_rxq, uint16_t nb_rxd, uint16_t nb_txd,
		     struct rte_mempool *mp)
{
	uint16_t q;
	int ret;

	ret = rte_eth_dev_configure(port, nb_rxq, 1, conf);
	if (ret != 0) {
		printf("configure port %u: %d\n", port, ret);
		return ret;
	}
	for (q = 0; q < nb_rxq; q++) {
		ret = rte_eth_rx_queue_setup(port, q, nb_rxd, SOCKET_ID_ANY,
					     NULL, mp);
		if (ret != 0) {
			printf("rxq %u setup port %u: %d\n", q, port, ret);
			return ret;
		}
	}
	ret = rte_eth_tx_queue_setup(port, 0, nb_txd, SOCKET_ID_ANY, NULL);
	if (ret != 0)
		printf("txq setup port %u: %d\n", port, ret);
	return ret;
}

/* Send pkts on Tx queue 0 of port until all went or wait_ms passed. */
static inline uint16_t
vbr_test_tx_all(uint16_t port, struct rte_mbuf **pkts, uint16_t n,
		unsigned int wait_ms)
{
	uint64_t deadline = rte_get_timer_cycles() +
			    rte_get_timer_hz() * wait_ms / 1000;
	uint16_t sent = 0;

	while (sent < n && rte_get_timer_cycles() < deadline)
		sent += rte_eth_tx_burst(port, 0, pkts + sent, n - sent);
	return sent;
}

/* The ports of net_vbr0 and net_vbr1 (vbr_test_eal_init() with a cable). */
static inline int
vbr_test_pair_ports(uint16_t *port0, uint16_t *port1)
{
	TEST_ASSERT_SUCCESS(rte_eth_dev_get_port_by_name("net_vbr0", port0),
			    "port 0");
	TEST_ASSERT_SUCCESS(rte_eth_dev_get_port_by_name("net_vbr1", port1),
			    "port 1");
	return TEST_SUCCESS;
}

/* Start both ports of a pair. */
static inline int
vbr_test_pair_start(uint16_t port0, uint16_t port1)
{
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port0), "start port 0");
	TEST_ASSERT_SUCCESS(rte_eth_dev_start(port1), "start port 1");
	return TEST_SUCCESS;
}

/* Free the pool and leave EAL. */
static inline void
vbr_test_fini(struct rte_mempool *mp)
{
	rte_mempool_free(mp);
	rte_eal_cleanup();
}

/* Stop and close both ports of a pair, then vbr_test_fini(). */
static inline void
vbr_test_pair_fini(uint16_t port0, uint16_t port1, struct rte_mempool *mp)
{
	rte_eth_dev_stop(port0);
	rte_eth_dev_stop(port1);
	rte_eth_dev_close(port0);
	rte_eth_dev_close(port1);
	vbr_test_fini(mp);
}

/*
 * Toeplitz reference, bit by bit as the RSS specification describes it:
 * for every set bit i of the input (most significant bit of byte 0 first),
 * XOR in the 32 key bits that start at bit i; bits past the key are 0.
 */
static inline uint32_t
vbr_test_toeplitz(const uint8_t *key, unsigned int key_len,
		  const uint8_t *in, unsigned int len)
{
	uint32_t h = 0, w;
	unsigned int i, j, b;

	for (i = 0; i < len * 8; i++) {
		if ((in[i / 8] & (0x80 >> (i % 8))) == 0)
			continue;
		w = 0;
		for (j = 0; j < 32; j++) {
			b = i + j;
			w <<= 1;
			if (b / 8 < key_len)
				w |= (key[b / 8] >> (7 - b % 8)) & 1;
		}
		h ^= w;
	}
	return h;
}

/**
 * A UDP/IPv4 frame of len bytes (no FCS, zero payload) from dst to src MAC,
 * ip_src to ip_dst (host order), sport to dport; NULL when mp is empty.
 */
static inline struct rte_mbuf *
vbr_test_udp4(struct rte_mempool *mp, const struct rte_ether_addr *dst,
	      const struct rte_ether_addr *src, uint32_t ip_src,
	      uint32_t ip_dst, uint16_t sport, uint16_t dport, uint16_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	struct rte_ether_hdr *eh;
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *udp;

	if (m == NULL)
		return NULL;
	eh = (struct rte_ether_hdr *)rte_pktmbuf_append(m, len);
	if (eh == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memset(eh, 0, len);
	eh->dst_addr = *dst;
	eh->src_addr = *src;
	eh->ether_type = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	ip = (struct rte_ipv4_hdr *)(eh + 1);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->total_length = rte_cpu_to_be_16(len - sizeof(*eh));
	ip->src_addr = rte_cpu_to_be_32(ip_src);
	ip->dst_addr = rte_cpu_to_be_32(ip_dst);
	udp = (struct rte_udp_hdr *)(ip + 1);
	udp->src_port = rte_cpu_to_be_16(sport);
	udp->dst_port = rte_cpu_to_be_16(dport);
	udp->dgram_len = rte_cpu_to_be_16(len - sizeof(*eh) - sizeof(*ip));
	return m;
}

/** Destroy a rule, printing the driver's message when it fails. */
static inline int
vbr_test_flow_destroy(uint16_t port, struct rte_flow *f)
{
	struct rte_flow_error err = { 0 };
	int ret = rte_flow_destroy(port, f, &err);

	if (ret != 0)
		printf("destroy: %s\n", err.message != NULL ? err.message :
		       "no message");
	return ret;
}

#endif /* VBR_TEST_PORT_H */
