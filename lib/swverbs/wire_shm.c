/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * shm:<cable>: a cable between two processes (or two devices of one) over
 * shared memory.
 *
 * The cable is a file, SWV_SHM_DIR "/swverbs-shm.<cable>" (tmpfs), that
 * both ends map. A file rather than a memfd passed over a unix socket: the
 * two ends are alike (neither has to be the server the other asks for the
 * fd), a crashed end leaves nothing that the next one cannot take over, and
 * `ls /dev/shm` shows who is plugged in.
 *
 * Who holds what is kept with open file description locks (F_OFD_SETLK),
 * which the kernel drops when the holder closes the file or dies, SIGKILL
 * included, and which two opens of one process hold apart:
 *   byte 0, byte 1   side 0 and side 1, each held by its end while attached;
 *   byte 2           setup: written while an end attaches or leaves, read
 *                    for an instant by a link check.
 * An end that claims a side while the other side is free (re)initializes
 * the whole header, so a leftover of a crashed run is reused as new; with a
 * peer in place it only resets what it reads, dropping frames that the
 * peer sent to the end's predecessor. The last end to leave unlinks the
 * file. The link is up while the other side is held, as seen by the link
 * check (every 10 ms, 100 ms while the engine sleeps deeply): a peer that
 * dies takes the link down within that.
 *
 * Data: two rings of SWV_SHM_SLOTS frame slots of SWV_SHM_SLOT bytes, one
 * per direction, each with its slots' lengths apart. Single producer,
 * single consumer; head and tail on their own cache lines; each end keeps
 * private copies of the other's index and reads the shared one only when
 * its copy says full (producer) or empty (consumer). The producer publishes
 * head once per burst (tx_flush), the consumer tail once per rx_burst.
 * Received frames are handed to the device straight from their slots.
 *
 * A cut cable: a MAP_SHARED page that its file no longer covers (the file
 * truncated: by a stray `truncate`, a cleanup script) faults with SIGBUS
 * at every access, however it was populated or locked before, since the
 * kernel drops truncated pages from every mapping. A size check at attach
 * cannot help, and sealing (F_SEAL_SHRINK) is for memfds only, which
 * would take the alike ends and the crash takeover above. So each mapping
 * is guarded: a process-wide SIGBUS handler (chained to the one it
 * replaced, put back in place by the link check if someone replaced it)
 * that finds the address in a cable mapping maps anonymous memory over
 * the whole of it and returns, so the access goes on, on zeros. The end
 * sees the mark the handler left (rx_burst, tx_flush, the link check) and
 * takes its link down: a fault, counted in the port's wire_faults. The
 * end then leaves the file (wiping its magic first, so that a peer that
 * did not fault on it leaves too; the last to leave unlinks it) and, at
 * each link check, plugs in again as a new end, which brings the link
 * back up once the peer has done the same. A frame being copied out at
 * the instant of the cut may arrive with zeros for its lost bytes.
 *
 * The other end's index is checked whenever it is read, since anything
 * that can write the file can write nonsense there: a head may only move
 * forward, by at most a ring beyond our tail; a tail only forward, and
 * not past our head. Anything else (a wild head made a consumer deliver
 * the same slots over and over, a wild tail stalled the producer on a
 * ring it thought full) is a fault as a cut is: the link goes down,
 * wire_faults counts it, both ends leave and plug in again with empty
 * rings.
 *
 * Wakeup: an idle engine sleeps on rx_fd(), a unix datagram socket (in the
 * abstract namespace, named after the file's inode and the side) that the
 * consumer arms by setting its ring's "sleeping" flag; a producer that sees
 * the flag after publishing clears it and sends one datagram. Busy, neither
 * end makes a system call. Across network namespaces the datagram does not
 * arrive; the engine's own timeouts pace it then (at most 100 ms).
 *
 * All state is in struct swv_shm_end and the shared file: the callbacks may
 * run on any one thread at a time.
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "swv_priv.h"

#define SWV_SHM_MAGIC 0x316d687376777300ull	/* "\0swvshm1" */
#define SWV_SHM_VERSION 1
#define SWV_SHM_SPEED 100000	/* Mbit/s */
#define SWV_SHM_MIN_FRAME 14	/* an Ethernet header: shorter is a runt */
#define SWV_SHM_HDR_SZ 4096
#define SWV_SHM_LENS_SZ (SWV_SHM_SLOTS * sizeof(uint32_t))
#define SWV_SHM_RING_SZ (SWV_SHM_LENS_SZ + \
			 (size_t)SWV_SHM_SLOTS * SWV_SHM_SLOT)
#define SWV_SHM_FILE_SZ (SWV_SHM_HDR_SZ + 2 * SWV_SHM_RING_SZ)
#define SWV_SHM_SETUP 2		/* the setup lock byte */
#define SWV_SHM_RETRIES 16
/* How long an end waits for the setup lock (a peer attaching, leaving). */
#define SWV_SHM_LOCK_WAIT_NS 1000000000ull
#define SWV_SHM_LOCK_POLL_NS 1000000l
/* Cable mappings a process may hold at once (4 MiB each). */
#define SWV_SHM_GUARDS 1024

/* One direction's indexes, in the shared header. Indexes run free. */
struct swv_shm_idx {
	uint32_t head SWV_ALIGNED;	/**< producer: slots published */
	uint32_t tail SWV_ALIGNED;	/**< consumer: slots given back */
	uint32_t sleeping SWV_ALIGNED;	/**< consumer waits for a datagram */
};

struct swv_shm_hdr {
	uint64_t magic;
	uint32_t version;
	uint32_t nslots;
	uint32_t slot_size;
	int32_t pid[2];			/**< holder of each side, 0: none */
	struct swv_shm_idx ring[2] SWV_ALIGNED;	/**< ring[s]: side s sends */
};

_Static_assert(sizeof(struct swv_shm_hdr) <= SWV_SHM_HDR_SZ, "header");
_Static_assert((SWV_SHM_SLOTS & (SWV_SHM_SLOTS - 1)) == 0, "power of 2");
_Static_assert(SWV_SHM_FILE_SZ == SWV_SHM_CABLE_BYTES, "swverbs.h's size");

/* A cable mapping that the SIGBUS handler covers. */
struct shm_guard {
	uintptr_t base;			/**< the mapping, 0: a free entry */
	uint32_t cut;			/**< faulted: anonymous memory now */
};

struct swv_shm_end {
	struct swv_wire wire;
	int fd;				/**< the cable file, with our locks */
	int wake_fd;			/**< datagram socket, or -1 */
	bool bound;			/**< wake_fd has our side's name */
	unsigned int side;
	bool up;			/**< peer attached, at the last check */
	bool plugged;			/**< fd, side and mapping held */
	bool broken;			/**< a fault seen: leave at the check */
	uint32_t faults;		/**< faults not counted on the port yet */
	struct shm_guard *guard;	/**< the mapping's, while plugged */
	struct swv_shm_hdr *hdr;	/**< the mapping */
	struct swv_shm_idx *txi, *rxi;	/**< ring[side], ring[side ^ 1] */
	uint32_t *tx_len, *rx_len;
	uint8_t *tx_slot, *rx_slot;
	/* producer side of txi */
	uint32_t head;			/**< next slot to fill */
	uint32_t tail_c;		/**< copy of txi->tail */
	uint32_t pub;			/**< head last published */
	bool tx_full;			/**< a tx() found the ring full */
	/* consumer side of rxi */
	uint32_t tail;			/**< next slot to read */
	uint32_t head_c;		/**< copy of rxi->head */
	dev_t st_dev;
	ino_t st_ino;
	struct sockaddr_un peer_addr;	/**< the peer's wake socket */
	socklen_t peer_len;
	char path[sizeof(SWV_SHM_DIR) + 16 + SWV_NAME_MAX];
};

static int
shm_path(const char *cable, char *buf, size_t len)
{
	if (cable[0] == '\0' || strlen(cable) >= SWV_NAME_MAX ||
	    strchr(cable, '/') != NULL || strcmp(cable, ".") == 0 ||
	    strcmp(cable, "..") == 0)
		return EINVAL;
	snprintf(buf, len, "%s/swverbs-shm.%s", SWV_SHM_DIR, cable);
	return 0;
}

/*
 * The SIGBUS guard (see the top of the file). Entries are claimed under
 * shm_guard_lock and read by the handler without it: an entry's base is
 * set once the mapping exists and cleared before it goes away.
 */
static struct shm_guard shm_guards[SWV_SHM_GUARDS];
static pthread_mutex_t shm_guard_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction shm_bus_prev;	/* what the handler chains to */

static void
shm_sigbus(int sig, siginfo_t *si, void *uc)
{
	uintptr_t addr = (uintptr_t)si->si_addr, base;
	struct sigaction dfl;
	int err = errno;
	unsigned int i;

	for (i = 0; i < SWV_SHM_GUARDS; i++) {
		base = __atomic_load_n(&shm_guards[i].base, __ATOMIC_ACQUIRE);
		if (base == 0 || addr - base >= SWV_SHM_FILE_SZ)
			continue;
		/* The access that faulted runs again, on zeros. */
		if (mmap((void *)base, SWV_SHM_FILE_SZ, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
		    MAP_FAILED)
			break;	/* cannot cover it: a fault as any other */
		__atomic_store_n(&shm_guards[i].cut, 1, __ATOMIC_RELEASE);
		errno = err;
		return;
	}
	/* Not a cable's: what was there before us. */
	if (shm_bus_prev.sa_flags & SA_SIGINFO) {
		shm_bus_prev.sa_sigaction(sig, si, uc);
	} else if (shm_bus_prev.sa_handler == SIG_IGN) {
		if (si->si_code > 0) {	/* a fault cannot be ignored */
			memset(&dfl, 0, sizeof(dfl));
			dfl.sa_handler = SIG_DFL;
			sigaction(SIGBUS, &dfl, NULL);
		}
	} else if (shm_bus_prev.sa_handler != SIG_DFL) {
		shm_bus_prev.sa_handler(sig);
	} else {
		/* The default: the access faults again, or the signal sent. */
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		sigaction(SIGBUS, &dfl, NULL);
		if (si->si_code <= 0)
			raise(sig);
	}
	errno = err;
}

static bool
shm_sigbus_ours(void)
{
	struct sigaction cur;

	return sigaction(SIGBUS, NULL, &cur) == 0 &&
	       (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == shm_sigbus;
}

/*
 * Put the handler in place, unless it is: at each plug and link check,
 * so that one installed later (chaining to nothing) does not leave the
 * cables unguarded.
 */
static void
shm_guard_arm(void)
{
	struct sigaction sa;

	if (SWV_LIKELY(shm_sigbus_ours()))
		return;
	pthread_mutex_lock(&shm_guard_lock);
	if (!shm_sigbus_ours()) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = shm_sigbus;
		sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGBUS, &sa, &shm_bus_prev);
	}
	pthread_mutex_unlock(&shm_guard_lock);
}

/* Guard a new mapping. Return: its entry, NULL when none is free. */
static struct shm_guard *
shm_guard_add(void *base)
{
	struct shm_guard *g = NULL;
	unsigned int i;

	shm_guard_arm();
	pthread_mutex_lock(&shm_guard_lock);
	for (i = 0; i < SWV_SHM_GUARDS; i++) {
		if (shm_guards[i].base == 0) {
			g = &shm_guards[i];
			__atomic_store_n(&g->cut, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&g->base, (uintptr_t)base,
					 __ATOMIC_RELEASE);
			break;
		}
	}
	pthread_mutex_unlock(&shm_guard_lock);
	return g;
}

static void
shm_guard_del(struct shm_guard *g)
{
	pthread_mutex_lock(&shm_guard_lock);
	__atomic_store_n(&g->base, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&shm_guard_lock);
}

/*
 * Take (F_WRLCK, F_RDLCK) or drop (F_UNLCK) an OFD lock on @n bytes, now:
 * EAGAIN (or EACCES) when another open holds it.
 */
static int
shm_lock(int fd, short type, off_t start, off_t n)
{
	struct flock fl;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = type;
	fl.l_whence = SEEK_SET;
	fl.l_start = start;
	fl.l_len = n;
	while (fcntl(fd, F_OFD_SETLK, &fl) != 0) {
		if (errno != EINTR)
			return errno;
	}
	return 0;
}

static uint64_t
shm_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The setup lock, waited for SWV_SHM_LOCK_WAIT_NS at most: callers hold
 * swv_lock, which a peer stopped inside its setup must not hold forever.
 * Return: 0, EBUSY (still held), or an errno.
 */
static int
shm_lock_setup(int fd)
{
	const struct timespec poll = { 0, SWV_SHM_LOCK_POLL_NS };
	uint64_t end = shm_now_ns() + SWV_SHM_LOCK_WAIT_NS;
	int ret;

	for (;;) {
		ret = shm_lock(fd, F_WRLCK, SWV_SHM_SETUP, 1);
		if (ret != EAGAIN && ret != EACCES)
			return ret;
		if (shm_now_ns() >= end)
			return EBUSY;
		nanosleep(&poll, NULL);
	}
}

/* Whether another open of the file holds side @side. */
static bool
shm_held(int fd, unsigned int side)
{
	struct flock fl;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = side;
	fl.l_len = 1;
	if (fcntl(fd, F_OFD_GETLK, &fl) != 0)
		return true;	/* cannot tell: not free for sure */
	return fl.l_type != F_UNLCK;
}

/* The abstract socket address of a side's wake socket. */
static socklen_t
shm_wake_addr(const struct swv_shm_end *e, unsigned int side,
	      struct sockaddr_un *sa)
{
	int n;

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	n = snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1,
		     "swverbs-shm/%llx:%llx/%u",
		     (unsigned long long)e->st_dev,
		     (unsigned long long)e->st_ino, side);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

/*
 * Give the wake socket our side's name, if it has none yet. The name may
 * still be held for a moment (a predecessor on our side closing): until it
 * is ours we get no wakeups (the engine polls on its timeouts) but still
 * send the peer its own.
 */
static bool
shm_wake_bind(struct swv_shm_end *e)
{
	struct sockaddr_un sa;
	socklen_t len;

	if (!e->bound) {
		len = shm_wake_addr(e, e->side, &sa);
		e->bound = bind(e->wake_fd, (struct sockaddr *)&sa, len) == 0;
	}
	return e->bound;
}

static void
shm_wake_open(struct swv_shm_end *e)
{
	e->wake_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			    0);
	if (e->wake_fd < 0)
		return;	/* no wakeups either way: timeouts pace both ends */
	e->peer_len = shm_wake_addr(e, e->side ^ 1, &e->peer_addr);
	shm_wake_bind(e);
}

/* Lay a fresh header down: no end but us, every ring empty. */
static void
shm_init_hdr(struct swv_shm_hdr *h)
{
	memset(h, 0, sizeof(*h));
	h->version = SWV_SHM_VERSION;
	h->nslots = SWV_SHM_SLOTS;
	h->slot_size = SWV_SHM_SLOT;
	__atomic_store_n(&h->magic, SWV_SHM_MAGIC, __ATOMIC_RELEASE);
}

static bool
shm_hdr_ok(const struct swv_shm_hdr *h)
{
	return h->magic == SWV_SHM_MAGIC && h->version == SWV_SHM_VERSION &&
	       h->nslots == SWV_SHM_SLOTS && h->slot_size == SWV_SHM_SLOT;
}

/*
 * Open the cable file and take its setup lock, on the file that the path
 * names still (the last end of the cable unlinks it: a file unlinked
 * between our open and our lock is left for a new one). @wait: for the
 * setup lock as shm_lock_setup(), or not at all (EAGAIN or EACCES).
 */
static int
shm_open_locked(struct swv_shm_end *e, bool wait)
{
	struct stat st, sp;
	unsigned int i;
	int ret;

	for (i = 0; i < SWV_SHM_RETRIES; i++) {
		e->fd = open(e->path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (e->fd < 0)
			return errno;
		if (wait)
			ret = shm_lock_setup(e->fd);
		else
			ret = shm_lock(e->fd, F_WRLCK, SWV_SHM_SETUP, 1);
		if (ret == 0 && fstat(e->fd, &st) != 0)
			ret = errno;
		if (ret != 0) {
			close(e->fd);
			return ret;
		}
		if (stat(e->path, &sp) == 0 && sp.st_dev == st.st_dev &&
		    sp.st_ino == st.st_ino) {
			e->st_dev = st.st_dev;
			e->st_ino = st.st_ino;
			/*
			 * Reserve every page now: tmpfs grows a file by
			 * ftruncate without taking room, and a page that
			 * /dev/shm cannot give at first touch is a SIGBUS.
			 */
			ret = posix_fallocate(e->fd, 0, SWV_SHM_FILE_SZ);
			if (ret != 0) {
				if (st.st_size == 0 &&
				    !shm_held(e->fd, 0) && !shm_held(e->fd, 1))
					unlink(e->path);	/* ours, empty */
				close(e->fd);
				return ret == EFBIG ? ENOSPC : ret;
			}
			return 0;
		}
		close(e->fd);
	}
	return EAGAIN;
}

static int
shm_map(struct swv_shm_end *e)
{
	uint8_t *base, *tx, *rx;

	base = mmap(NULL, SWV_SHM_FILE_SZ, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_POPULATE, e->fd, 0);
	if (base == MAP_FAILED)
		return errno;
	e->guard = shm_guard_add(base);
	if (e->guard == NULL) {
		munmap(base, SWV_SHM_FILE_SZ);
		return EMFILE;
	}
	e->hdr = (struct swv_shm_hdr *)base;
	tx = base + SWV_SHM_HDR_SZ + e->side * SWV_SHM_RING_SZ;
	rx = base + SWV_SHM_HDR_SZ + (e->side ^ 1) * SWV_SHM_RING_SZ;
	e->txi = &e->hdr->ring[e->side];
	e->rxi = &e->hdr->ring[e->side ^ 1];
	e->tx_len = (uint32_t *)tx;
	e->rx_len = (uint32_t *)rx;
	e->tx_slot = tx + SWV_SHM_LENS_SZ;
	e->rx_slot = rx + SWV_SHM_LENS_SZ;
	return 0;
}

static void
shm_unmap(struct swv_shm_end *e)
{
	shm_guard_del(e->guard);
	munmap(e->hdr, SWV_SHM_FILE_SZ);
	e->guard = NULL;
	e->hdr = NULL;
}

/*
 * Whether a tail read from the consumer makes sense to its producer: moved
 * forward from our copy, and not past our head.
 */
static inline bool
shm_tail_ok(const struct swv_shm_end *e, uint32_t tail)
{
	return tail - e->tail_c <= e->head - e->tail_c;
}

/*
 * Attach to a side (setup lock held): the header reset when we are alone,
 * our receive ring emptied of what was sent to our predecessor otherwise.
 * EPROTO: our ring's indexes, as our predecessor and the peer left them,
 * make no sense (more than a ring apart).
 */
static int
shm_attach(struct swv_shm_end *e, bool peer)
{
	struct swv_shm_hdr *h = e->hdr;

	if (!peer)
		shm_init_hdr(h);
	else if (!shm_hdr_ok(h))
		return EPROTO;	/* the peer speaks another layout */
	/* Our ring: we go on from what our predecessor published. */
	e->head = SWV_LOAD(&e->txi->head);
	e->pub = e->head;
	e->tail_c = SWV_LOAD_ACQ(&e->txi->tail);
	if (e->head - e->tail_c > SWV_SHM_SLOTS)
		return EPROTO;
	/* The peer's ring: what is in it was not for us. */
	e->head_c = SWV_LOAD_ACQ(&e->rxi->head);
	e->tail = e->head_c;
	SWV_STORE_REL(&e->rxi->tail, e->tail);
	SWV_STORE(&e->rxi->sleeping, 0);
	SWV_STORE(&h->pid[e->side], (int32_t)getpid());
	return 0;
}

/*
 * The cable is broken (a fault): the link goes down now, the fault is
 * counted (by the next rx_burst: the engine gathers counts there) and the
 * end leaves the file at its next link check. Once per fault.
 */
static void
shm_fault(struct swv_shm_end *e)
{
	if (e->broken)
		return;
	e->broken = true;
	e->up = false;
	e->faults++;
}

/* Whether the guard found the mapping cut: a fault if so. */
static bool
shm_cut(struct swv_shm_end *e)
{
	if (SWV_LIKELY(__atomic_load_n(&e->guard->cut, __ATOMIC_ACQUIRE) == 0))
		return false;
	shm_fault(e);
	return true;
}

/*
 * Leave the cable: under the setup lock (@wait: as shm_lock_setup(), or
 * one try), give our side back; the last end (no side held by anyone once
 * ours is dropped) unlinks the file it still names. Without the setup
 * lock (a peer stopped while it attaches): leave anyway, and leave the
 * file, which the next end reuses.
 */
static void
shm_leave(struct swv_shm_end *e, bool wait)
{
	struct stat sp;
	bool setup;

	/*
	 * The wake socket's name first: a successor that takes our side
	 * once we drop its lock finds the name free.
	 */
	if (e->wake_fd >= 0) {
		close(e->wake_fd);
		e->wake_fd = -1;
	}
	e->bound = false;
	if (wait)
		setup = shm_lock_setup(e->fd) == 0;
	else
		setup = shm_lock(e->fd, F_WRLCK, SWV_SHM_SETUP, 1) == 0;
	SWV_STORE(&e->hdr->pid[e->side], 0);
	shm_unmap(e);
	shm_lock(e->fd, F_UNLCK, e->side, 1);
	if (setup && shm_lock(e->fd, F_WRLCK, 0, 2) == 0 &&
	    stat(e->path, &sp) == 0 && sp.st_dev == e->st_dev &&
	    sp.st_ino == e->st_ino)
		unlink(e->path);
	close(e->fd);	/* drops every lock we hold */
	e->fd = -1;
	e->plugged = false;
	e->up = false;
}

/* Wipe the file's magic: a header no end takes (but one alone renews). */
static void
shm_wipe(struct swv_shm_end *e)
{
	static const uint64_t wiped;

	if (pwrite(e->fd, &wiped, sizeof(wiped),
		   offsetof(struct swv_shm_hdr, magic)) < 0) {
		/* a file we cannot write: the peer faults on its own */
	}
}

/*
 * Leave a broken cable: its magic wiped in the file first (not through
 * our mapping, which may be the guard's zeros now), so that a peer that
 * did not fault on it sees a bad header at its link check and leaves too;
 * both then plug in again as new ends.
 */
static void
shm_unplug(struct swv_shm_end *e)
{
	shm_wipe(e);
	shm_leave(e, false);
	e->broken = false;
}

static int shm_plug(struct swv_shm_end *e, bool wait);

/*
 * Link check: the peer's side held, looked at outside of a setup (an end
 * that attaches is up once its rings are reset); keep the last answer
 * while one runs. A broken cable (cut under us, its header wiped by a
 * peer that found it broken) is left; an end that left plugs in again,
 * one try a check.
 */
static bool
shm_link_up(struct swv_wire *wire)
{
	struct swv_shm_end *e = container_of(wire, struct swv_shm_end, wire);

	shm_guard_arm();
	if (!e->plugged && shm_plug(e, false) != 0)
		return false;
	if (SWV_UNLIKELY(e->broken || shm_cut(e)))
		goto unplug;
	if (shm_lock(e->fd, F_RDLCK, SWV_SHM_SETUP, 1) != 0)
		return e->up;
	if (SWV_UNLIKELY(!shm_hdr_ok(e->hdr) || shm_cut(e))) {
		shm_lock(e->fd, F_UNLCK, SWV_SHM_SETUP, 1);
		shm_fault(e);
		goto unplug;
	}
	e->up = shm_held(e->fd, e->side ^ 1);
	shm_lock(e->fd, F_UNLCK, SWV_SHM_SETUP, 1);
	return e->up;
unplug:
	shm_unplug(e);
	return false;
}

static int
shm_tx(struct swv_wire *wire, const struct iovec *iov, int iovcnt,
       uint32_t len)
{
	struct swv_shm_end *e = container_of(wire, struct swv_shm_end, wire);
	uint32_t slot, tail;
	uint8_t *dst;
	int i;

	if (SWV_UNLIKELY(len > SWV_SHM_SLOT))
		return EMSGSIZE;
	if (SWV_UNLIKELY(!e->up)) {
		swv_wire_tx_link_down(wire, len);
		return 0;
	}
	if (SWV_UNLIKELY(e->head - e->tail_c >= SWV_SHM_SLOTS)) {
		tail = SWV_LOAD_ACQ(&e->txi->tail);
		if (SWV_UNLIKELY(!shm_tail_ok(e, tail))) {
			shm_fault(e);	/* a tail the consumer never wrote */
			swv_wire_tx_link_down(wire, len);
			return 0;
		}
		e->tail_c = tail;
		if (e->head - e->tail_c >= SWV_SHM_SLOTS) {
			e->tx_full = true;
			return EAGAIN;
		}
	}
	e->tx_full = false;
	slot = e->head & (SWV_SHM_SLOTS - 1);
	dst = e->tx_slot + (size_t)slot * SWV_SHM_SLOT;
	for (i = 0; i < iovcnt; i++) {
		memcpy(dst, iov[i].iov_base, iov[i].iov_len);
		dst += iov[i].iov_len;
	}
	e->tx_len[slot] = len;
	e->head++;
	return 0;
}

static void
shm_tx_flush(struct swv_wire *wire)
{
	struct swv_shm_end *e = container_of(wire, struct swv_shm_end, wire);
	static const char one = 1;

	if (e->head == e->pub || SWV_UNLIKELY(!e->plugged))
		return;
	SWV_STORE_REL(&e->txi->head, e->head);
	e->pub = e->head;
	if (SWV_UNLIKELY(shm_cut(e)))
		return;	/* sent into a cut cable: as on a real one */
	/* Pairs with the fence in shm_rx_fd(): it sees head, or we the flag. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/* The flag is cleared only by an end that can send the datagram. */
	if (SWV_UNLIKELY(SWV_LOAD(&e->txi->sleeping) != 0) &&
	    e->wake_fd >= 0 &&
	    __atomic_exchange_n(&e->txi->sleeping, 0, __ATOMIC_ACQ_REL) != 0 &&
	    sendto(e->wake_fd, &one, 1, MSG_DONTWAIT,
		   (struct sockaddr *)&e->peer_addr, e->peer_len) < 0)
		return;	/* no wakeup: the peer's engine wakes on its timeout */
}

/*
 * A send refused on a full ring waits for the peer to take frames, which
 * it does without a word: the engine polls rather than sleep deeply. Room
 * seen (or the peer gone): one more pass, then no longer.
 */
static bool
shm_tx_pending(struct swv_wire *wire)
{
	struct swv_shm_end *e = container_of(wire, struct swv_shm_end, wire);
	uint32_t tail;

	if (!e->tx_full)
		return false;
	if (SWV_UNLIKELY(!e->plugged || e->broken)) {
		e->tx_full = false;
		return false;
	}
	tail = SWV_LOAD_ACQ(&e->txi->tail);
	if (SWV_UNLIKELY(!shm_tail_ok(e, tail))) {
		shm_fault(e);	/* the sends waiting go as link-down drops */
		e->tx_full = false;
		return true;
	}
	e->tail_c = tail;
	if (!e->up || e->head - e->tail_c < SWV_SHM_SLOTS)
		e->tx_full = false;
	return true;
}

static unsigned int
shm_rx_burst(struct swv_wire *wire, unsigned int budget)
{
	struct swv_shm_end *e = container_of(wire, struct swv_shm_end, wire);
	struct swv_frame fr[SWV_RX_BURST];
	struct iovec iov[SWV_RX_BURST];
	unsigned int n = 0, k, m;
	uint32_t avail, slot, len, head;

	if (SWV_UNLIKELY(e->faults != 0)) {
		swv_wire_fault(wire, e->faults);
		e->faults = 0;
	}
	if (SWV_UNLIKELY(!e->plugged || e->broken || shm_cut(e)))
		return 0;
	avail = e->head_c - e->tail;
	if (avail == 0) {
		head = SWV_LOAD_ACQ(&e->rxi->head);
		/* Forward by a ring at most: else not the producer's. */
		if (SWV_UNLIKELY(head - e->tail > SWV_SHM_SLOTS)) {
			shm_fault(e);
			return 0;
		}
		e->head_c = head;
		avail = head - e->tail;
		if (avail == 0)
			return 0;
	}
	if (avail > budget)
		avail = budget;
	while (n < avail) {
		m = avail - n < SWV_RX_BURST ? avail - n : SWV_RX_BURST;
		for (k = 0; k < m; k++) {
			slot = (e->tail + k) & (SWV_SHM_SLOTS - 1);
			len = e->rx_len[slot];
			/* A peer's bad length is cut to the slot. */
			if (SWV_UNLIKELY(len > SWV_SHM_SLOT))
				len = SWV_SHM_SLOT;
			iov[k].iov_base = e->rx_slot +
					  (size_t)slot * SWV_SHM_SLOT;
			iov[k].iov_len = len;
			fr[k].iov = &iov[k];
			fr[k].iovcnt = 1;
			fr[k].len = len;
		}
		/* Lengths read from a cut cable are the guard's zeros. */
		if (SWV_UNLIKELY(shm_cut(e)))
			return n;
		swv_device_rx_burst(e->wire.dev, fr, m);
		e->tail += m;
		n += m;
	}
	SWV_STORE_REL(&e->rxi->tail, e->tail);
	return n;
}

/*
 * Before the engine sleeps: drain old datagrams, arm the wakeup, and look
 * once more (a frame published before the flag was seen wakes us at once).
 */
static int
shm_rx_fd(struct swv_wire *wire)
{
	struct swv_shm_end *e = container_of(wire, struct swv_shm_end, wire);
	struct sockaddr_un self;
	socklen_t len;
	char buf[16];

	if (e->wake_fd < 0 || e->broken || !shm_wake_bind(e))
		return -1;	/* nothing would wake us: do not ask */
	while (recv(e->wake_fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
	SWV_STORE(&e->rxi->sleeping, 1);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (SWV_LOAD(&e->rxi->head) != e->tail &&
	    __atomic_exchange_n(&e->rxi->sleeping, 0, __ATOMIC_ACQ_REL) != 0) {
		len = shm_wake_addr(e, e->side, &self);
		if (sendto(e->wake_fd, buf, 1, MSG_DONTWAIT,
			   (struct sockaddr *)&self, len) < 0)
			return -1;
	}
	return e->wake_fd;
}

static int
shm_set_mtu(struct swv_wire *wire, uint32_t mtu)
{
	(void)wire;
	/* The largest frame the MTU lets in fills a slot. */
	return mtu + SWV_MTU_OVERHEAD > SWV_SHM_SLOT ? EINVAL : 0;
}

static uint32_t
shm_max_mtu(struct swv_wire *wire)
{
	(void)wire;
	return SWV_SHM_SLOT - SWV_MTU_OVERHEAD;
}

static uint32_t
shm_speed(struct swv_wire *wire)
{
	(void)wire;
	return SWV_SHM_SPEED;
}

static void
shm_end_free(struct swv_shm_end *e)
{
	if (e->wake_fd >= 0)
		close(e->wake_fd);
	free(e);
}

/* Leave (waiting 1 s at most for a setup under way), unless we left. */
static void
shm_close(struct swv_wire *wire)
{
	struct swv_shm_end *e = container_of(wire, struct swv_shm_end, wire);

	if (e->plugged)
		shm_leave(e, true);
	shm_end_free(e);
}

static const struct swv_wire_ops shm_ops = {
	.tx = shm_tx,
	.tx_flush = shm_tx_flush,
	.rx_burst = shm_rx_burst,
	.link_up = shm_link_up,
	.set_mtu = shm_set_mtu,
	.max_mtu = shm_max_mtu,
	.speed_mbps = shm_speed,
	.rx_fd = shm_rx_fd,
	.tx_pending = shm_tx_pending,
	.close = shm_close,
};

/*
 * Plug in: open the file, take a free side, map the file and attach.
 * @wait: for the setup lock (an open), or one try (the link check plugging
 * a broken cable's end in again). Return: 0, or an errno with nothing
 * held.
 */
static int
shm_plug(struct swv_shm_end *e, bool wait)
{
	struct swv_shm_hdr h;
	unsigned int side;
	bool peer;
	int ret;

	ret = shm_open_locked(e, wait);
	if (ret != 0) {
		e->fd = -1;
		return ret;
	}
	for (side = 0; side < 2; side++)
		if (shm_lock(e->fd, F_WRLCK, side, 1) == 0)
			break;
	if (side == 2) {
		ret = EBUSY;
		goto err_fd;
	}
	e->side = side;
	peer = shm_held(e->fd, side ^ 1);
	/* A peer on a bad header (broken, not left yet): not mapped for it. */
	if (peer && (pread(e->fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
		     !shm_hdr_ok(&h))) {
		ret = EPROTO;
		goto err_fd;
	}
	ret = shm_map(e);
	if (ret != 0)
		goto err_fd;
	ret = shm_attach(e, peer);
	if (ret != 0) {
		shm_wipe(e);	/* broken: the peer leaves it too */
		goto err_map;
	}
	shm_wake_open(e);
	e->up = peer;
	e->plugged = true;
	shm_lock(e->fd, F_UNLCK, SWV_SHM_SETUP, 1);
	return 0;
err_map:
	shm_unmap(e);
err_fd:
	close(e->fd);
	e->fd = -1;
	return ret;
}

int
swv_wire_shm_open(struct swv_device *dev, const char *cable,
		  struct swv_wire **out)
{
	struct swv_shm_end *e;
	int ret;

	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return ENOMEM;
	e->fd = -1;
	e->wake_fd = -1;
	ret = shm_path(cable, e->path, sizeof(e->path));
	if (ret == 0)
		ret = shm_plug(e, true);
	if (ret != 0) {
		free(e);
		return ret;
	}
	e->wire.ops = &shm_ops;
	e->wire.dev = dev;
	e->wire.min_frame = SWV_SHM_MIN_FRAME;
	*out = &e->wire;
	return 0;
}

int
swv_wire_shm_holders(const char *cable, int pids[2])
{
	char path[sizeof(SWV_SHM_DIR) + 16 + SWV_NAME_MAX];
	struct swv_shm_hdr h;
	unsigned int s;
	int fd, ret;

	pids[0] = 0;
	pids[1] = 0;
	ret = shm_path(cable, path, sizeof(path));
	if (ret != 0)
		return ret;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    !shm_hdr_ok(&h)) {
		close(fd);
		return ENOENT;
	}
	for (s = 0; s < 2; s++)
		if (shm_held(fd, s))
			pids[s] = h.pid[s];
	close(fd);
	return 0;
}
