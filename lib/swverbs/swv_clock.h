/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * swverbs clocks. Private to lib/swverbs.
 *
 * Two reads of CLOCK_MONOTONIC, both vDSO calls (no system call): the
 * precise one for completion timestamps, the coarse one (a tick's
 * resolution, a few ns to read) for what only needs pacing, such as the
 * engine's link checks and the netdev wires' refreshes and kick retries.
 * Standalone: the wires that see no device internals include it too.
 */

#ifndef SWV_CLOCK_H
#define SWV_CLOCK_H

#include <stdint.h>
#include <time.h>

/** CLOCK_MONOTONIC in ns. */
static inline uint64_t
swv_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/** CLOCK_MONOTONIC_COARSE in ns: cheap, a tick's resolution. */
static inline uint64_t
swv_now_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif /* SWV_CLOCK_H */
