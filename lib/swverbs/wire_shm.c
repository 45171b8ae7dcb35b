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

struct swv_shm_end {
	struct swv_wire wire;
	int fd;				/**< the cable file, with our locks */
	int wake_fd;			/**< datagram socket, or -1 */
	bool bound;			/**< wake_fd has our side's name */
	unsigned int side;
	bool up;			/**< peer attached, at the last check */
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
 * between our open and our lock is left for a new one).
 */
static int
shm_open_locked(struct swv_shm_end *e)
{
	struct stat st, sp;
	unsigned int i;
	int ret;

	for (i = 0; i < SWV_SHM_RETRIES; i++) {
		e->fd = open(e->path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (e->fd < 0)
			return errno;
		ret = shm_lock_setup(e->fd);
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

/*
 * Attach to a side (setup lock held): the header reset when we are alone,
 * our receive ring emptied of what was sent to our predecessor otherwise.
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
	/* The peer's ring: what is in it was not for us. */
	e->head_c = SWV_LOAD_ACQ(&e->rxi->head);
	e->tail = e->head_c;
	SWV_STORE_REL(&e->rxi->tail, e->tail);
	SWV_STORE(&e->rxi->sleeping, 0);
	SWV_STORE(&h->pid[e->side], (int32_t)getpid());
	return 0;
}

/*
 * Link check: the peer's side held, looked at outside of a setup (an end
 * that attaches is up once its rings are reset); keep the last answer
 * while one runs.
 */
static bool
shm_link_up(struct swv_wire *wire)
{
	struct swv_shm_end *e = container_of(wire, struct swv_shm_end, wire);

	if (shm_lock(e->fd, F_RDLCK, SWV_SHM_SETUP, 1) != 0)
		return e->up;
	e->up = shm_held(e->fd, e->side ^ 1);
	shm_lock(e->fd, F_UNLCK, SWV_SHM_SETUP, 1);
	return e->up;
}

static int
shm_tx(struct swv_wire *wire, const struct iovec *iov, int iovcnt,
       uint32_t len)
{
	struct swv_shm_end *e = container_of(wire, struct swv_shm_end, wire);
	uint32_t slot;
	uint8_t *dst;
	int i;

	if (SWV_UNLIKELY(len > SWV_SHM_SLOT))
		return EMSGSIZE;
	if (SWV_UNLIKELY(!e->up)) {
		swv_wire_tx_link_down(wire, len);
		return 0;
	}
	if (SWV_UNLIKELY(e->head - e->tail_c >= SWV_SHM_SLOTS)) {
		e->tail_c = SWV_LOAD_ACQ(&e->txi->tail);
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

	if (e->head == e->pub)
		return;
	SWV_STORE_REL(&e->txi->head, e->head);
	e->pub = e->head;
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

	if (!e->tx_full)
		return false;
	e->tail_c = SWV_LOAD_ACQ(&e->txi->tail);
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
	uint32_t avail, slot, len;

	avail = e->head_c - e->tail;
	if (avail == 0) {
		e->head_c = SWV_LOAD_ACQ(&e->rxi->head);
		avail = e->head_c - e->tail;
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

	if (e->wake_fd < 0 || !shm_wake_bind(e))
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

/*
 * Leave: under the setup lock, give our side back; the last end (no side
 * held by anyone once ours is dropped) unlinks the file it still names.
 * A setup lock held by another for over a second (a peer stopped while it
 * attaches): leave anyway, and leave the file, which the next end reuses.
 */
static void
shm_close(struct swv_wire *wire)
{
	struct swv_shm_end *e = container_of(wire, struct swv_shm_end, wire);
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
	setup = shm_lock_setup(e->fd) == 0;
	SWV_STORE(&e->hdr->pid[e->side], 0);
	munmap(e->hdr, SWV_SHM_FILE_SZ);
	shm_lock(e->fd, F_UNLCK, e->side, 1);
	if (setup && shm_lock(e->fd, F_WRLCK, 0, 2) == 0 &&
	    stat(e->path, &sp) == 0 && sp.st_dev == e->st_dev &&
	    sp.st_ino == e->st_ino)
		unlink(e->path);
	close(e->fd);	/* drops every lock we hold */
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

int
swv_wire_shm_open(struct swv_device *dev, const char *cable,
		  struct swv_wire **out)
{
	struct swv_shm_end *e;
	unsigned int side;
	bool peer;
	int ret;

	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return ENOMEM;
	e->wake_fd = -1;
	ret = shm_path(cable, e->path, sizeof(e->path));
	if (ret == 0)
		ret = shm_open_locked(e);
	if (ret != 0) {
		free(e);
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
	ret = shm_map(e);
	if (ret != 0)
		goto err_fd;
	ret = shm_attach(e, peer);
	if (ret != 0)
		goto err_map;
	shm_wake_open(e);
	e->up = peer;
	e->wire.ops = &shm_ops;
	e->wire.dev = dev;
	e->wire.min_frame = SWV_SHM_MIN_FRAME;
	shm_lock(e->fd, F_UNLCK, SWV_SHM_SETUP, 1);
	*out = &e->wire;
	return 0;
err_map:
	munmap(e->hdr, SWV_SHM_FILE_SZ);
err_fd:
	close(e->fd);
	shm_end_free(e);
	return ret;
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
