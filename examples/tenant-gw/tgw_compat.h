/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * What differs for tenant-gw between the DPDK releases it builds against
 * (22.11, 24.11, 25.11): the code reads the newer API, this header gives
 * it to the older releases. A stand-alone example keeps its own copy of
 * the few lines it needs rather than reach into the PMD's vbr_compat.h.
 */

#ifndef TGW_COMPAT_H
#define TGW_COMPAT_H

#include <rte_version.h>

/* rte_tel_data_add_dict_uint: from 23.03; the _u64 form is gone in 25.11. */
#if RTE_VERSION < RTE_VERSION_NUM(23, 3, 0, 0)
#define rte_tel_data_add_dict_uint rte_tel_data_add_dict_u64
#endif

/*
 * IPv6 addresses: uint8_t[16] up to 24.07, struct rte_ipv6_addr (the bytes
 * in .a) from 24.11. TGW_IPV6_BYTES(addr) is the uint8_t[16] in both.
 */
#if RTE_VERSION >= RTE_VERSION_NUM(24, 11, 0, 0)
#define TGW_IPV6_BYTES(addr) ((addr).a)
#else
#define TGW_IPV6_BYTES(addr) (addr)
#endif

/*
 * Packed structs: __rte_packed_begin/__rte_packed_end from 25.03, where
 * __rte_packed became deprecated.
 */
#if RTE_VERSION < RTE_VERSION_NUM(25, 3, 0, 0)
#define __rte_packed_begin
#define __rte_packed_end __rte_packed
#endif

#endif /* TGW_COMPAT_H */
