/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * What differs between the DPDK releases the PMD builds against: 22.11,
 * 24.11 and 25.11 (the LTS releases; meson refuses others unless asked).
 * Each difference is tested against the first LTS release that has it,
 * with RTE_VERSION_NUM; the code reads the newer API and this header
 * gives it to the older release where that is a rename, or a symbol the
 * code branches on where the shape changed.
 *
 * devtools/check-dpdk-versions.py compiles the tree against each release.
 */

#ifndef VBR_COMPAT_H
#define VBR_COMPAT_H

#include <stdint.h>

#include <rte_version.h>

/*
 * Telemetry: rte_tel_data_add_{dict,array}_uint came in 23.03, the _u64
 * forms they replace were deprecated then and are gone in 25.11.
 */
#if RTE_VERSION < RTE_VERSION_NUM(23, 3, 0, 0)
#define rte_tel_data_add_dict_uint rte_tel_data_add_dict_u64
#define rte_tel_data_add_array_uint rte_tel_data_add_array_u64
#define RTE_TEL_UINT_VAL RTE_TEL_U64_VAL
#endif

/*
 * IPv6 addresses in rte_ipv6_hdr (and the flow items): uint8_t[16] up to
 * 24.07, struct rte_ipv6_addr (the bytes in .a) from 24.11.
 * VBR_IPV6_BYTES(addr) is the uint8_t[16] in both.
 */
#if RTE_VERSION >= RTE_VERSION_NUM(24, 11, 0, 0)
#define VBR_IPV6_BYTES(addr) ((addr).a)
#else
#define VBR_IPV6_BYTES(addr) (addr)
#endif

/*
 * rte_tm ops: the profile and node parameters became const in 24.11 (the
 * PMD never wrote them).
 */
#if RTE_VERSION >= RTE_VERSION_NUM(24, 11, 0, 0)
#define VBR_TM_CONST const
#else
#define VBR_TM_CONST
#endif

/*
 * 25.11: the per-queue counters left struct rte_eth_stats for struct
 * eth_queue_stats, which stats_get takes as a third argument (NULL when
 * ethdev wants no per-queue counter); rx_queue_count returns int, a
 * negative errno on error, where it returned uint32_t and set rte_errno.
 */
#if RTE_VERSION >= RTE_VERSION_NUM(25, 11, 0, 0)
#define VBR_ETH_QSTATS 1
/** The struct stats_get writes the per-queue counters (q_ipackets...) in. */
#define vbr_eth_qstats eth_queue_stats
/** What rx_queue_count returns. */
typedef int vbr_rx_queue_count_t;
#else
#define VBR_ETH_QSTATS 0
#define vbr_eth_qstats rte_eth_stats
typedef uint32_t vbr_rx_queue_count_t;
#endif

#endif /* VBR_COMPAT_H */
