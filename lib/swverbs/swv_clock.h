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
 * How late sleeps end: the oversleeps (the time from the wake-up a sleep
 * asked for to the thread running again) of the last one to two windows
 * of SWV_LATE_WIN_NS, the current window's and the previous one's
 * together: their largest but for one in SWV_LATE_RARE, the rarest ones,
 * left out. With fewer than SWV_LATE_RARE samples it is their maximum.
 * Samples are counted in power-of-two classes, each with its largest
 * sample: the estimate is the largest sample of the class that holds the
 * one sought, so it is never below it and less than twice it.
 *
 * A wake-up later than the slack of a paced queue (half its bucket's time
 * on an engine thread) loses rate, so the estimate keeps to the worst of
 * the common case. A maximum let one odd wake-up decide: on this project's
 * 2-CPU VM, of some 20,000 50-us naps of an application (the inline
 * model, a few seconds), 3 to 11 ended 0.26 to 2 ms late (one or two
 * over 1 ms) and the rest under 0.26 ms; each odd one made the sleeper
 * spin for the next second or two, which took a paced queue's CPU per
 * frame from about 0.3x an unpaced queue's to 1.8x
 * (devtools/bench-pacing.sh). Left out, one costs its queue at most its
 * lateness past the slack, once in SWV_LATE_RARE sleeps or less.
 * A sleeper that aims that much before its due time and spins the rest is
 * on time unless a wake-up is later than the estimate; when its due time
 * is nearer than the estimate it spins, and so takes no samples: a window
 * or two of spinning forget the estimate, and the next sleep probes the
 * host again. On a quiet host the estimate is a few us; on a busy one it
 * follows the host's noise, and so does the CPU spent spinning.
 */
#define SWV_LATE_WIN_NS 1000000000ull
/*
 * A sample above this (a sleep that lasted through a stall) counts as it:
 * one stall costs at most this much spin before each departure of the
 * next second or two, not the whole stall's.
 */
#define SWV_LATE_MAX_NS 10000000ull
/** One sample in this many is left out of the estimate, the largest. */
#define SWV_LATE_RARE 1000u
/** Classes: sample s (0 < s <= SWV_LATE_MAX_NS) in 64 - clz(s), 0 in 0. */
#define SWV_LATE_CLASSES 25
_Static_assert(SWV_LATE_MAX_NS < (1ull << (SWV_LATE_CLASSES - 1)),
	       "SWV_LATE_MAX_NS in the last class");

/** One window's samples. */
struct swv_late_win {
	uint64_t n;				/**< samples */
	uint32_t cnt[SWV_LATE_CLASSES];	/**< by class */
	uint64_t max[SWV_LATE_CLASSES];	/**< each class' largest */
};

struct swv_late {
	struct swv_late_win cur;	/**< the current window */
	struct swv_late_win prev;	/**< the one before (zero: none) */
	uint64_t win;	/**< the current window's start (0: none yet) */
};

/* Start a new window when now is past the current one. */
static inline void
swv_late_roll(struct swv_late *l, uint64_t now)
{
	if (l->win != 0 && now < l->win + SWV_LATE_WIN_NS)
		return;
	/* the window before is the current one only if it just ended */
	if (l->win != 0 && now < l->win + 2 * SWV_LATE_WIN_NS)
		l->prev = l->cur;
	else
		memset(&l->prev, 0, sizeof(l->prev));
	memset(&l->cur, 0, sizeof(l->cur));
	l->win = now;
}

/** A sleep that should have ended at wake ended at now. */
static inline void
swv_late_add(struct swv_late *l, uint64_t wake, uint64_t now)
{
	uint64_t late = now > wake ? now - wake : 0;
	unsigned int c;

	if (late > SWV_LATE_MAX_NS)
		late = SWV_LATE_MAX_NS;
	swv_late_roll(l, now);
	c = late != 0 ? 64 - (unsigned int)__builtin_clzll(late) : 0;
	l->cur.n++;
	l->cur.cnt[c]++;
	if (late > l->cur.max[c])
		l->cur.max[c] = late;
}

/** How much earlier than a due time a sleep should end, at now. */
static inline uint64_t
swv_late_get(struct swv_late *l, uint64_t now)
{
	uint64_t skip, seen = 0;
	int c;

	swv_late_roll(l, now);
	skip = (l->cur.n + l->prev.n) / SWV_LATE_RARE;
	for (c = SWV_LATE_CLASSES - 1; c > 0; c--) {
		seen += l->cur.cnt[c] + l->prev.cnt[c];
		if (seen > skip)
			return l->cur.max[c] > l->prev.max[c] ?
			       l->cur.max[c] : l->prev.max[c];
	}
	return 0;
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
