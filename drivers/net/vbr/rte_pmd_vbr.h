/* SPDX-License-Identifier: BSD-3-Clause */

/**
 * @file
 * The vbr PMD's own API, for what the generic DPDK APIs cannot carry.
 *
 * Tx queue rate limits: a vbr Tx queue is a RAW_PACKET QP, and the device
 * paces it (ibv_modify_qp_rate_limit(3)). ethdev's
 * rte_eth_set_queue_rate_limit() and rte_tm's private shapers reach the same
 * pacing with some of its fields fixed; this call sets all of them.
 *
 * The pace window: when an application that naps must call a port again
 * for its paced frames, on a device with no engine of its own (swverbs,
 * progress=inline).
 *
 * Every call here is experimental (__rte_experimental, the EXPERIMENTAL
 * node of the PMD's version script): it may change in a later vbr release.
 * An application defines ALLOW_EXPERIMENTAL_API to call them without a
 * deprecation warning, and links the PMD: pkg-config librte_net_vbr.
 */

#ifndef RTE_PMD_VBR_H
#define RTE_PMD_VBR_H

#include <stdint.h>

#include <rte_compat.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Set the rate limit of Tx queue @p queue_id of a vbr port.
 *
 * The limit may be set before the queue is set up or the port started: it
 * is kept and goes on the queue's QP each time the QP is made ready to send
 * (port start, queue recovery). On a started queue it takes effect at once.
 * The last limit set on a queue, through this call,
 * rte_eth_set_queue_rate_limit() or an rte_tm leaf, is the one it has.
 *
 * @param port_id
 *   A vbr port.
 * @param queue_id
 *   A Tx queue, below the port's max_tx_queues (it need not exist yet).
 * @param rate_kbps
 *   Rate in kbit/s (1000 bit/s), within the device's
 *   [qp_rate_limit_min, qp_rate_limit_max] (ibv_query_device_ex(3)
 *   packet_pacing_caps); 0 removes the limit (the other two must be 0).
 * @param max_burst_sz
 *   Bytes the queue may send at once (the token bucket depth); 0: the
 *   device's default.
 * @param typical_pkt_sz
 *   The queue's typical frame size in bytes, at most the port's largest
 *   frame; 0: the device's default (the port MTU).
 * @return
 *   0 on success; -ENODEV: not a vbr port; -ENOTSUP: the device does not
 *   pace RAW_PACKET QPs, or a secondary process (the queues are the
 *   primary's); -EINVAL: queue_id, a rate outside the range,
 *   typical_pkt_sz too large, or burst/size given with rate 0; another
 *   negative errno: the device refused the limit on the running queue (the
 *   queue keeps its previous limit).
 */
__rte_experimental
int rte_pmd_vbr_set_queue_rate_limit(uint16_t port_id, uint16_t queue_id,
				     uint32_t rate_kbps, uint32_t max_burst_sz,
				     uint16_t typical_pkt_sz);

/**
 * Read the rate limit of Tx queue @p queue_id of a vbr port, as the last
 * call that set it left it (0 kbit/s: no limit).
 *
 * @return
 *   0 on success; -ENODEV: not a vbr port; -EINVAL: queue_id, or a NULL
 *   pointer; -ENOTSUP: a secondary process (the queues are the primary's).
 */
__rte_experimental
int rte_pmd_vbr_get_queue_rate_limit(uint16_t port_id, uint16_t queue_id,
				     uint32_t *rate_kbps,
				     uint32_t *max_burst_sz,
				     uint16_t *typical_pkt_sz);

/**
 * When this process must call the port again so that its paced Tx queues
 * lose nothing, for an application that naps while its queues are idle.
 *
 * A vbr port on swverbs with progress=inline has no engine: its paced
 * frames leave in the application's own calls (rte_eth_tx_burst(),
 * rte_eth_rx_burst() on the port or its pair peer), so a nap past a
 * departure delays it. This call says how long a nap may be. Calling the
 * port again by @p latest_ns loses no rate: the frames that came due
 * meanwhile leave at once, within the queue's bucket (max_burst_sz beyond
 * the rate at most); by @p due_ns, each frame leaves on time. Any other
 * port (a NIC, which paces on its own; swverbs with progress=thread or
 * service, whose engine releases its frames itself) needs no call: both
 * times are UINT64_MAX, as they are when no paced frame waits.
 *
 * @param port_id
 *   A vbr port.
 * @param due_ns
 *   The earliest departure due on the port's paced queues, CLOCK_MONOTONIC
 *   ns (clock_gettime(3)); UINT64_MAX: none.
 * @param latest_ns
 *   The earliest time a waiting queue's bucket is full, CLOCK_MONOTONIC
 *   ns; UINT64_MAX: none.
 * @return
 *   0 on success; -ENODEV: not a vbr port; -EINVAL: a NULL pointer;
 *   -ENOTSUP: a secondary process (the device is the primary's).
 */
__rte_experimental
int rte_pmd_vbr_pace_window(uint16_t port_id, uint64_t *due_ns,
			    uint64_t *latest_ns);

#ifdef __cplusplus
}
#endif

#endif /* RTE_PMD_VBR_H */
