/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * What differs for the test programs between the DPDK releases the tree
 * builds against (22.11, 24.11, 25.11). The PMD's own differences are in
 * drivers/net/vbr/vbr_compat.h; these are the ones of the API the tests
 * call as an application does.
 */

#ifndef VBR_TEST_COMPAT_H
#define VBR_TEST_COMPAT_H

#include <rte_version.h>

/*
 * IPv6 addresses: uint8_t[16] up to 24.07, struct rte_ipv6_addr (the bytes
 * in .a) from 24.11. VBR_TEST_IPV6_BYTES(addr) is the uint8_t[16] in both.
 */
#if RTE_VERSION >= RTE_VERSION_NUM(24, 11, 0, 0)
#define VBR_TEST_IPV6_BYTES(addr) ((addr).a)
#else
#define VBR_TEST_IPV6_BYTES(addr) (addr)
#endif

/*
 * Per-queue counters: in struct rte_eth_stats (q_ipackets...) up to 24.11;
 * from 25.11 only in the per-queue xstats ethdev makes of them
 * (rx_q<n>_packets...). vbr_test_qstat() (vbr_test_port.h) reads either.
 */
#if RTE_VERSION >= RTE_VERSION_NUM(25, 11, 0, 0)
#define VBR_TEST_QSTATS_IN_XSTATS 1
#else
#define VBR_TEST_QSTATS_IN_XSTATS 0
#endif

/*
 * From 23.03 ethdev's rte_tm and rte_mtr calls feed their output arguments
 * to trace points after the driver's op has run: rte_tm_node_type_get()
 * reads *is_leaf and rte_mtr_stats_read() *stats_mask even when the op
 * refused a NULL one. A NULL there reaches the PMD's own check only before
 * 23.03; from then on the caller must pass both.
 */
#if RTE_VERSION >= RTE_VERSION_NUM(23, 3, 0, 0)
#define VBR_TEST_NULL_OUT_ARGS 0
#else
#define VBR_TEST_NULL_OUT_ARGS 1
#endif

#endif /* VBR_TEST_COMPAT_H */
