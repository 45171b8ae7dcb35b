/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * swverbs clocks. Private to lib/swverbs.
 *
 * Two reads of CLOCK_MONOTONIC, both vDSO calls (no system call): the
 * precise one for completion timestamps, the coarse one (a tick's
 * resolution, a few ns to read) for what only needs pacing, such as the
 * engine's link checks and the netdev wires' refreshes and kick retries;
 * and an estimate of how late a thread's sleeps end, for whoever sleeps
 * until a paced departure (the engine thread, an application's naps).
 * Standalone: the wires that see no device internals include it too.
 */

#ifndef SWV_CLOCK_H
#define SWV_CLOCK_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

/*
 * How late sleeps end: the largest oversleep (the time from the wake-up a
 * sleep asked for to the thread running again) over the last one to two
 * windows of SWV_LATE_WIN_NS, the maximum of the current window's and the
 * previous one's. A maximum, not a percentile: one wake-up later than the
 * slack of a paced queue loses rate, however rare. A sleeper that aims
 * that much before its due time and spins the rest is on time unless a
 * wake-up is later than any in the last second; when its due time is
 * nearer than the estimate it spins, and so takes no samples: a window or
 * two of spinning forget the estimate, and the next sleep probes the host
 * again. On a quiet host the estimate is a few us; on a busy one it
 * follows the host's noise, and so does the CPU spent spinning.
 */
#define SWV_LATE_WIN_NS 1000000000ull
/*
 * A sample above this (a sleep that lasted through a stall) counts as it:
 * one stall costs at most this much spin before each departure of the
 * next second or two, not the whole stall's.
 */
#define SWV_LATE_MAX_NS 10000000ull

struct swv_late {
	uint64_t cur;	/**< largest oversleep of the current window */
	uint64_t prev;	/**< of the window before (0: none there) */
	uint64_t win;	/**< the current window's start (0: none yet) */
};

/* Start a new window when now is past the current one. */
static inline void
swv_late_roll(struct swv_late *l, uint64_t now)
{
	if (l->win != 0 && now < l->win + SWV_LATE_WIN_NS)
		return;
	/* the window before is the current one only if it just ended */
	l->prev = l->win != 0 && now < l->win + 2 * SWV_LATE_WIN_NS ?
		  l->cur : 0;
	l->cur = 0;
	l->win = now;
}

/** A sleep that should have ended at wake ended at now. */
static inline void
swv_late_add(struct swv_late *l, uint64_t wake, uint64_t now)
{
	uint64_t late = now > wake ? now - wake : 0;

	if (late > SWV_LATE_MAX_NS)
		late = SWV_LATE_MAX_NS;
	swv_late_roll(l, now);
	if (late > l->cur)
		l->cur = late;
}

/** How much earlier than a due time a sleep should end, at now. */
static inline uint64_t
swv_late_get(struct swv_late *l, uint64_t now)
{
	swv_late_roll(l, now);
	return l->cur > l->prev ? l->cur : l->prev;
}

/*
 * A thread's wait on the run queue so far (ns: the second field of
 * /proc/thread-self/schedstat, opened by that thread as fd), 0 without
 * the file (fd < 0). A sleep's lateness less the run-queue wait it
 * included is what a thread that spun instead would have saved: the rest
 * came from other threads of this machine, which a spinning thread
 * yields to as well.
 */
static inline uint64_t
swv_run_delay_ns(int fd)
{
	char buf[96], *sp;
	ssize_t n;

	if (fd < 0)
		return 0;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	sp = strchr(buf, ' ');
	return sp != NULL ? strtoull(sp + 1, NULL, 10) : 0;
}

#endif /* SWV_CLOCK_H */
