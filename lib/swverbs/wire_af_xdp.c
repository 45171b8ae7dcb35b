/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The af_xdp wire: one queue of a Linux network interface reached through
 * an AF_XDP socket (libxdp's xsk API) with a UMEM of its own.
 *
 * UMEM: SWV_XDP_FRAMES frames of SWV_XDP_FRAME_SIZE bytes; the first half
 * belongs to Rx (always either in the fill ring, in the kernel, or in the
 * Rx ring), the second half to Tx (on the free stack, in the Tx ring, in
 * the kernel, or in the completion ring).
 *
 * Rx: rx_burst() peeks a batch of descriptors from the Rx ring, hands them
 * to the device as one burst (swv_device_rx_burst(), which copies what it
 * keeps), releases them and gives the same frames back to the fill ring.
 * No system call per frame; the fill ring is kicked (recvfrom) only when
 * the kernel asks for it (XDP_USE_NEED_WAKEUP). Frames longer than a UMEM
 * frame can hold never reach the ring: the kernel drops and counts them
 * (XDP_STATISTICS rx_dropped; swv_wire_af_xdp_drops()).
 *
 * Tx: tx() takes a frame from the free stack (reclaiming the completion
 * ring when it is empty; tx_flush() reclaims after each kick, so that the
 * stack's top is the frames last sent, warm in the cache), copies the frame
 * into it and reserves a Tx ring descriptor; tx_flush() submits all that
 * the burst reserved at once and kicks the kernel (sendto) only when the
 * ring says it needs it. In copy
 * mode the kernel sends at most 32 frames per kick and answers EAGAIN
 * when more wait: tx_flush() kicks again while each kick takes frames, a
 * bounded number of times. No room (no free frame, Tx ring full): EAGAIN,
 * the engine retries later.
 *
 * Modes, tried in this order: native (driver) XDP with zero copy, native
 * XDP in copy mode, generic (SKB) XDP in copy mode. A veth has native XDP
 * but no zero copy. The mode taken is said on stderr at open and by
 * swv_wire_af_xdp_mode(). libxdp loads its default program (through its
 * dispatcher where a BPF filesystem is mounted), which redirects the
 * queue's frames to the socket and passes the rest to the kernel stack;
 * close() detaches it when this was its last socket.
 *
 * The port's MTU is the interface's (link state, MTU, speed and "gone"
 * through swv_netif, as the af_packet wire): tx() refuses above it
 * (EMSGSIZE); set_mtu() refuses (EINVAL) what a UMEM frame cannot carry,
 * then the kernel refuses what the XDP mode cannot (native XDP on a veth
 * caps the MTU near 3.5 KB while the program is attached).
 *
 * All callbacks but open run on one thread at a time, not always the same
 * one; the wire keeps no thread-local state.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <net/if.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>

#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include <xdp/xsk.h>

#include "swverbs.h"
#include "swv_netif.h"
#include "swv_wire.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif

#define SWV_XDP_FRAME_SIZE 4096u
#define SWV_XDP_FRAMES 8192u		/* 32 MiB of UMEM */
#define SWV_XDP_RX_FRAMES (SWV_XDP_FRAMES / 2)
#define SWV_XDP_TX_FRAMES (SWV_XDP_FRAMES - SWV_XDP_RX_FRAMES)
/* What a frame holds: the kernel keeps XDP_PACKET_HEADROOM in front. */
#define SWV_XDP_ROOM (SWV_XDP_FRAME_SIZE - XDP_PACKET_HEADROOM)
/* Frames handed to the device per swv_device_rx_burst(), at most. */
#define SWV_XDP_RX_BATCH 64u
/*
 * A queue whose last socket was just closed stays busy until the kernel's
 * deferred release ran: EBUSY is retried this often, this many times.
 */
#define SWV_XDP_BUSY_RETRY_US 5000u
#define SWV_XDP_BUSY_TRIES 100u
/*
 * Kicks per flush at most while the kernel answers EAGAIN: enough for a
 * whole Tx ring at the copy mode's 32 frames a kick.
 */
#define SWV_XDP_KICKS_MAX (SWV_XDP_TX_FRAMES / 16)
/* A failed Tx kick for a down link is retried at most this often. */
#define SWV_XDP_KICK_RETRY_NS (1000 * 1000)
#define SWV_XDP_VLAN_HLEN 4u

#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#endif
#ifndef unlikely
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif

struct swv_xdp {
	struct swv_netif_wire nw;	/**< wire and interface; must be first */
	/* Rx, wire callbacks. */
	struct xsk_ring_cons rx;
	struct xsk_ring_prod fill;
	/* Tx, wire callbacks. */
	struct xsk_ring_prod tx;
	struct xsk_ring_cons comp;
	uint32_t tx_reserved;		/**< descriptors reserved, not submitted */
	uint32_t tx_nfree;		/**< frames on tx_free */
	bool tx_kick;			/**< the kernel has frames to send */
	uint64_t tx_kick_after;		/**< no kick before (ns), after ENETDOWN */
	uint64_t *tx_free;		/**< free Tx frame addresses (a stack) */
	uint8_t *area;			/**< the UMEM */
	/* Counters: written by the wire, read by anyone. */
	uint64_t tx_kick_errors;	/**< failed sendto() kicks */
	/* Control. */
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	int fd;				/**< the xsk socket */
	int ctl_fd;			/**< AF_INET socket for the ioctls */
	uint32_t queue;
	bool native;			/**< native (driver) XDP, else generic */
	bool zerocopy;			/**< XDP_ZEROCOPY, else XDP_COPY */
	bool need_wakeup;		/**< XDP_USE_NEED_WAKEUP was granted */
};

static inline struct swv_xdp *
to_xdp(struct swv_wire *wire)
{
	return (struct swv_xdp *)wire;
}

static inline void
xdp_count(uint64_t *counter, uint64_t n)
{
	__atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
}

static unsigned int
xdp_rx_burst(struct swv_wire *wire, unsigned int budget)
{
	struct swv_xdp *x = to_xdp(wire);
	struct swv_frame fr[SWV_XDP_RX_BATCH];
	struct iovec iov[2 * SWV_XDP_RX_BATCH];	/* a frame, its padding */
	uint64_t addr[SWV_XDP_RX_BATCH];
	const struct xdp_desc *d;
	unsigned int total = 0, want, n, i;
	uint32_t idx, fidx;

	while (total < budget) {
		want = budget - total < SWV_XDP_RX_BATCH ?
			budget - total : SWV_XDP_RX_BATCH;
		n = xsk_ring_cons__peek(&x->rx, want, &idx);
		if (n == 0)
			break;
		/*
		 * Fill slots for the frames before they are delivered. The
		 * fill ring has room for every Rx frame, so this only fails if
		 * the rings were broken: then nothing is taken.
		 */
		if (unlikely(xsk_ring_prod__reserve(&x->fill, n, &fidx) != n)) {
			xsk_ring_cons__cancel(&x->rx, n);
			break;
		}
		for (i = 0; i < n; i++) {
			d = xsk_ring_cons__rx_desc(&x->rx, idx + i);
			addr[i] = d->addr;
			iov[2 * i].iov_base = xsk_umem__get_data(x->area,
								 d->addr);
			iov[2 * i].iov_len = d->len;
			fr[i].iov = &iov[2 * i];
			fr[i].iovcnt = 1;
			fr[i].len = swv_netif_rx_pad(&iov[2 * i], &fr[i].iovcnt,
						     d->len);
		}
		swv_device_rx_burst(x->nw.wire.dev, fr, n);
		xsk_ring_cons__release(&x->rx, n);
		/* Copied out: the frames go back to the kernel at once. */
		for (i = 0; i < n; i++)
			*xsk_ring_prod__fill_addr(&x->fill, fidx + i) =
				xsk_umem__extract_addr(addr[i]);
		xsk_ring_prod__submit(&x->fill, n);
		total += n;
	}
	if (x->need_wakeup && xsk_ring_prod__needs_wakeup(&x->fill))
		recvfrom(x->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
	return total;
}

/* Frames the kernel sent go back to the free stack. */
static void
xdp_reclaim(struct swv_xdp *x)
{
	uint32_t idx, n, i;

	n = xsk_ring_cons__peek(&x->comp, SWV_XDP_TX_FRAMES, &idx);
	if (n == 0)
		return;
	for (i = 0; i < n; i++)
		x->tx_free[x->tx_nfree++] = xsk_umem__extract_addr(
			*xsk_ring_cons__comp_addr(&x->comp, idx + i));
	xsk_ring_cons__release(&x->comp, n);
}

static int
xdp_tx(struct swv_wire *wire, const struct iovec *iov, int iovcnt,
       uint32_t len)
{
	struct swv_xdp *x = to_xdp(wire);
	struct xdp_desc *d;
	uint32_t idx, left, n, have = 0;
	uint64_t addr;
	uint8_t *dst, *data;
	int i;

	if (unlikely(len < ETH_HLEN))
		return EINVAL;
	if (unlikely(len > SWV_XDP_ROOM))
		return EMSGSIZE;
	if (unlikely(len > __atomic_load_n(&x->nw.nif.mtu, __ATOMIC_RELAXED) +
		     ETH_HLEN) && len > swv_netif_frame_max(&x->nw.nif, iov, iovcnt))
		return EMSGSIZE;
	for (i = 0; i < iovcnt && have < len; i++)
		have += (uint32_t)iov[i].iov_len;
	if (unlikely(have < len))
		return EINVAL;	/* @iov holds fewer than @len bytes */
	if (unlikely(x->nw.nif.gone))
		return ENODEV;
	if (unlikely(!__atomic_load_n(&x->nw.nif.link, __ATOMIC_RELAXED))) {
		swv_wire_tx_link_down(wire, len);	/* dropped, counted */
		return 0;
	}
	if (unlikely(x->tx_nfree == 0)) {
		xdp_reclaim(x);
		if (x->tx_nfree == 0) {
			x->tx_kick = true;
			return EAGAIN;
		}
	}
	if (unlikely(xsk_ring_prod__reserve(&x->tx, 1, &idx) != 1)) {
		x->tx_kick = true;
		return EAGAIN;
	}
	addr = x->tx_free[--x->tx_nfree];
	dst = xsk_umem__get_data(x->area, addr);
	data = dst;
	left = len;
	for (i = 0; i < iovcnt && left != 0; i++) {
		n = iov[i].iov_len < left ? (uint32_t)iov[i].iov_len : left;
		memcpy(dst, iov[i].iov_base, n);
		dst += n;
		left -= n;
	}
	d = xsk_ring_prod__tx_desc(&x->tx, idx);
	d->addr = addr;
	/* A ConnectX pads a short frame: so does this wire (swv_netif.h). */
	d->len = swv_netif_tx_pad(data, len);
	d->options = 0;
	x->tx_reserved++;
	return 0;
}

/* How far the kernel has taken the Tx ring. */
static inline uint32_t
xdp_tx_taken(const struct swv_xdp *x)
{
	return __atomic_load_n(x->tx.consumer, __ATOMIC_ACQUIRE);
}

/*
 * Kick the kernel to send what the Tx ring holds. In copy mode a kick
 * sends a batch (32 frames) and says EAGAIN while more wait: kick again
 * while each kick takes frames; one that takes none (the device queue is
 * full) leaves the rest to the next flush.
 */
static void
xdp_kick(struct swv_xdp *x)
{
	uint32_t before;
	unsigned int k;
	int err;

	if (unlikely(x->tx_kick_after != 0)) {
		if (swv_now_coarse_ns() < x->tx_kick_after)
			return;
		x->tx_kick_after = 0;
	}
	x->tx_kick = true;
	for (k = 0; k < SWV_XDP_KICKS_MAX; k++) {
		before = xdp_tx_taken(x);
		err = sendto(x->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 ?
			errno : 0;
		if (err != 0 && err != EAGAIN && err != EBUSY &&
		    err != ENOBUFS && err != EINTR)
			break;
		if (x->zerocopy || xdp_tx_taken(x) == *x->tx.producer) {
			x->tx_kick = false;	/* all taken (or the driver's) */
			return;
		}
		if (xdp_tx_taken(x) == before)
			return;			/* busy: the next flush goes on */
	}
	if (k == SWV_XDP_KICKS_MAX)
		return;
	if (err == ENXIO || err == ENODEV) {
		/* Unbound by the kernel: the interface went away. */
		swv_netif_set_gone(&x->nw.nif);
		x->tx_kick = false;
	}
	xdp_count(&x->tx_kick_errors, 1);
	x->tx_kick_after = swv_now_coarse_ns() + SWV_XDP_KICK_RETRY_NS;
}

static void
xdp_tx_flush(struct swv_wire *wire)
{
	struct swv_xdp *x = to_xdp(wire);

	if (x->tx_reserved != 0) {
		xsk_ring_prod__submit(&x->tx, x->tx_reserved);
		x->tx_reserved = 0;
		x->tx_kick = true;
	}
	if (x->tx_kick) {
		if (!x->need_wakeup || xsk_ring_prod__needs_wakeup(&x->tx))
			xdp_kick(x);
		else
			x->tx_kick = false;
	}
	/*
	 * What the kernel has sent goes back on top of the free stack at
	 * once, so that the next burst writes the frames this one did, still
	 * in the cache, not ones sent thousands of frames ago.
	 */
	xdp_reclaim(x);
}

/*
 * Frames the kernel has yet to take (a kick left them: the device queue
 * was full) or sends refused for want of a frame: the kernel frees room
 * without a wakeup. Not while the link is down: nothing moves then.
 */
static bool
xdp_tx_pending(struct swv_wire *wire)
{
	struct swv_xdp *x = to_xdp(wire);

	return x->tx_kick && __atomic_load_n(&x->nw.nif.link, __ATOMIC_RELAXED);
}

static bool
xdp_link_up(struct swv_wire *wire)
{
	struct swv_xdp *x = to_xdp(wire);

	swv_netif_poll(&x->nw.nif);
	return x->nw.nif.link;
}

/* The largest MTU a UMEM frame carries, with a VLAN tag. */
static uint32_t
xdp_mtu_max(void)
{
	return SWV_XDP_ROOM - ETH_HLEN - SWV_XDP_VLAN_HLEN;
}

static int
xdp_set_mtu(struct swv_wire *wire, uint32_t mtu)
{
	struct swv_xdp *x = to_xdp(wire);

	if (mtu > xdp_mtu_max()) {
		fprintf(stderr, "swverbs: af_xdp:%s: MTU %u refused: a UMEM "
			"frame carries MTU %u at most (no multi-buffer "
			"frames)\n", x->nw.nif.ifname, mtu, xdp_mtu_max());
		return EINVAL;
	}
	return swv_netif_set_mtu(&x->nw.nif, mtu);
}

static uint32_t
xdp_max_mtu(struct swv_wire *wire)
{
	(void)wire;
	return xdp_mtu_max();
}

static int
xdp_rx_fd(struct swv_wire *wire)
{
	struct swv_xdp *x = to_xdp(wire);

	/* Unbound, the socket would only ever report an error. */
	return x->nw.nif.gone ? -1 : x->fd;
}

static void
xdp_free(struct swv_xdp *x)
{
	/* Deleting the last socket of the queue detaches the program. */
	if (x->xsk != NULL)
		xsk_socket__delete(x->xsk);
	if (x->umem != NULL)
		xsk_umem__delete(x->umem);
	if (x->area != NULL)
		munmap(x->area, (size_t)SWV_XDP_FRAMES * SWV_XDP_FRAME_SIZE);
	if (x->ctl_fd >= 0)
		close(x->ctl_fd);
	free(x->tx_free);
	free(x);
}

static void
xdp_close(struct swv_wire *wire)
{
	xdp_free(to_xdp(wire));
}

/*
 * The kernel's drops, all as "full": rx_ring_full, and rx_dropped, which
 * counts both a fill ring with no buffer and a frame longer than a UMEM
 * frame (which the MTU cap keeps off the wire).
 */
static void
xdp_rx_drops(struct swv_wire *wire, uint64_t *full, uint64_t *bad)
{
	*full = swv_wire_af_xdp_drops(wire);
	*bad = 0;
}

static const struct swv_wire_ops xdp_ops = {
	.tx = xdp_tx,
	.tx_flush = xdp_tx_flush,
	.rx_burst = xdp_rx_burst,
	.link_up = xdp_link_up,
	.gone = swv_netif_wire_gone,
	.set_mtu = xdp_set_mtu,
	.mtu = swv_netif_wire_mtu,
	.max_mtu = xdp_max_mtu,
	.set_link = swv_netif_wire_set_link,
	.speed_mbps = swv_netif_wire_speed,
	.rx_fd = xdp_rx_fd,
	.tx_pending = xdp_tx_pending,
	.rx_drops = xdp_rx_drops,
	.close = xdp_close,
};

uint32_t
swv_wire_af_xdp_queue(struct swv_wire *wire)
{
	return to_xdp(wire)->queue;
}

const char *
swv_wire_af_xdp_mode(struct swv_wire *wire)
{
	struct swv_xdp *x = to_xdp(wire);

	if (x->native)
		return x->zerocopy ? "native XDP, zero copy" :
			"native XDP, copy";
	return "generic XDP, copy";
}

uint64_t
swv_wire_af_xdp_drops(struct swv_wire *wire)
{
	struct swv_xdp *x = to_xdp(wire);
	struct xdp_statistics st;
	socklen_t sl = sizeof(st);

	/* The kernel's counters are totals since the socket was made. */
	memset(&st, 0, sizeof(st));
	if (getsockopt(x->fd, SOL_XDP, XDP_STATISTICS, &st, &sl) != 0)
		return 0;
	return st.rx_dropped + st.rx_ring_full;
}

/*
 * "<ifname>[:<queue>]" into @ifname and *queue (0 when not given).
 * Interface names have no ':'. Return 0, ENODEV (bad name), EINVAL
 * (bad queue).
 */
static int
xdp_parse(const char *spec, char ifname[IF_NAMESIZE], uint32_t *queue)
{
	const char *colon;
	unsigned long q;
	size_t n;
	char *end;

	if (spec == NULL)
		return ENODEV;
	colon = strchr(spec, ':');
	n = colon != NULL ? (size_t)(colon - spec) : strlen(spec);
	if (n == 0 || n >= IF_NAMESIZE)
		return ENODEV;
	memcpy(ifname, spec, n);
	ifname[n] = '\0';
	*queue = 0;
	if (colon == NULL)
		return 0;
	if (colon[1] < '0' || colon[1] > '9')
		return EINVAL;
	errno = 0;
	q = strtoul(colon + 1, &end, 10);
	if (errno != 0 || *end != '\0' || q > UINT32_MAX)
		return EINVAL;
	*queue = (uint32_t)q;
	return 0;
}

/* Map a libxdp/kernel error at socket or program setup to ours. */
static int
xdp_errno(int err)
{
	if (err == EACCES || err == EPERM)
		return EPERM;
	if (err == ENOSYS)
		return EOPNOTSUPP;
	return err;
}

/*
 * While a wire opens (swv_lock held), libbpf and libxdp say only their
 * warnings, through the printers the application had: their notes on the
 * ELF sections of libxdp's own program are noise here.
 */
static libbpf_print_fn_t xdp_bpf_prev;
static libxdp_print_fn_t xdp_xdp_prev;

static int
xdp_bpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level != LIBBPF_WARN || xdp_bpf_prev == NULL)
		return 0;
	return xdp_bpf_prev(level, fmt, ap);
}

static int
xdp_xdp_print(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	if (level != LIBXDP_WARN || xdp_xdp_prev == NULL)
		return 0;
	return xdp_xdp_prev(level, fmt, ap);
}

/* Give every Rx frame to the fill ring, every Tx frame to the stack. */
static int
xdp_frames_init(struct swv_xdp *x)
{
	uint32_t idx, i;

	if (xsk_ring_prod__reserve(&x->fill, SWV_XDP_RX_FRAMES, &idx) !=
	    SWV_XDP_RX_FRAMES)
		return ENOMEM;	/* a new fill ring of that size: not here */
	for (i = 0; i < SWV_XDP_RX_FRAMES; i++)
		*xsk_ring_prod__fill_addr(&x->fill, idx + i) =
			(uint64_t)i * SWV_XDP_FRAME_SIZE;
	xsk_ring_prod__submit(&x->fill, SWV_XDP_RX_FRAMES);
	for (i = 0; i < SWV_XDP_TX_FRAMES; i++)
		x->tx_free[i] = (uint64_t)(SWV_XDP_RX_FRAMES + i) *
			SWV_XDP_FRAME_SIZE;
	x->tx_nfree = SWV_XDP_TX_FRAMES;
	return 0;
}

/* One try at the UMEM and the socket in one mode. Return 0 or an errno. */
static int
xdp_try_once(struct swv_xdp *x, uint32_t xdp_flags, uint16_t bind_flags)
{
	struct xsk_umem_config uc;
	struct xsk_socket_config sc;
	int ret;

	memset(&uc, 0, sizeof(uc));
	uc.fill_size = SWV_XDP_RX_FRAMES;
	uc.comp_size = SWV_XDP_TX_FRAMES;
	uc.frame_size = SWV_XDP_FRAME_SIZE;
	uc.frame_headroom = 0;
	ret = xsk_umem__create(&x->umem, x->area,
			       (uint64_t)SWV_XDP_FRAMES * SWV_XDP_FRAME_SIZE,
			       &x->fill, &x->comp, &uc);
	if (ret != 0) {
		x->umem = NULL;
		/* The UMEM is over the locked-memory limit (RLIMIT_MEMLOCK). */
		return ret == -ENOBUFS ? EPERM : xdp_errno(-ret);
	}
	memset(&sc, 0, sizeof(sc));
	sc.rx_size = SWV_XDP_RX_FRAMES;
	sc.tx_size = SWV_XDP_TX_FRAMES;
	sc.xdp_flags = xdp_flags;
	sc.bind_flags = bind_flags | XDP_USE_NEED_WAKEUP;
	ret = xsk_socket__create(&x->xsk, x->nw.nif.ifname, x->queue, x->umem,
				 &x->rx, &x->tx, &sc);
	if (ret != 0) {
		x->xsk = NULL;
		xsk_umem__delete(x->umem);
		x->umem = NULL;
		return xdp_errno(-ret);
	}
	return 0;
}

static int
xdp_try(struct swv_xdp *x, uint32_t xdp_flags, uint16_t bind_flags)
{
	unsigned int i;
	int ret;

	for (i = 0; i < SWV_XDP_BUSY_TRIES; i++) {
		ret = xdp_try_once(x, xdp_flags, bind_flags);
		if (ret != EBUSY)
			break;
		usleep(SWV_XDP_BUSY_RETRY_US);
	}
	return ret;
}

/* Whether the kernel has AF_XDP sockets and lets us make one. */
static int
xdp_probe_socket(void)
{
	int fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno == EPERM || errno == EACCES)
		return EPERM;
	if (errno == EAFNOSUPPORT || errno == EINVAL)
		return EAFNOSUPPORT;
	return errno;
}

/* Make the socket: native XDP before generic, zero copy before copy. */
static int
xdp_setup(struct swv_xdp *x)
{
	static const struct {
		uint32_t xdp_flags;
		uint16_t bind_flags;
		bool native, zerocopy;
	} modes[] = {
		{ XDP_FLAGS_DRV_MODE, XDP_ZEROCOPY, true, true },
		{ XDP_FLAGS_DRV_MODE, XDP_COPY, true, false },
		{ XDP_FLAGS_SKB_MODE, XDP_COPY, false, false },
	};
	struct xdp_options opt;
	socklen_t sl = sizeof(opt);
	unsigned int i;
	int ret = EOPNOTSUPP;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		ret = xdp_try(x, modes[i].xdp_flags, modes[i].bind_flags);
		if (ret == 0)
			break;
		/* No privilege or no memory: another mode will not help. */
		if (ret == EPERM || ret == ENOMEM || ret == ENODEV ||
		    ret == EBUSY)
			return ret;
	}
	/* Generic XDP, tried last, works where any does: its error. */
	if (ret != 0)
		return ret;
	x->native = modes[i].native;
	x->zerocopy = modes[i].zerocopy;
	x->need_wakeup = true;
	x->fd = xsk_socket__fd(x->xsk);
	/*
	 * libxdp's fill ring takes buffers once the first socket exists:
	 * frames that come before this are dropped and counted by the kernel.
	 */
	ret = xdp_frames_init(x);
	if (ret != 0)
		return ret;
	if (getsockopt(x->fd, SOL_XDP, XDP_OPTIONS, &opt, &sl) == 0)
		x->zerocopy = (opt.flags & XDP_OPTIONS_ZEROCOPY) != 0;
	return 0;
}

int
swv_wire_af_xdp_open(struct swv_device *dev, const char *spec,
		     uint8_t mac[6], struct swv_wire **out)
{
	char ifname[IF_NAMESIZE];
	struct swv_xdp *x;
	uint32_t queue;
	int err;

	err = xdp_parse(spec, ifname, &queue);
	if (err != 0)
		return err;
	x = calloc(1, sizeof(*x));
	if (x == NULL)
		return ENOMEM;
	x->fd = -1;
	x->ctl_fd = -1;
	x->queue = queue;
	x->nw.wire.ops = &xdp_ops;
	x->nw.wire.dev = dev;
	/* Shorter frames are padded (swv_netif.h): none is a runt. */
	x->nw.wire.min_frame = SWV_NETIF_MIN_FRAME;
	err = swv_netif_init(&x->nw.nif, ifname);
	if (err != 0)
		goto fail;
	err = xdp_probe_socket();
	if (err != 0)
		goto fail;
	x->ctl_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (x->ctl_fd < 0)
		x->ctl_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (x->ctl_fd < 0) {
		err = errno;
		goto fail;
	}
	err = swv_netif_open(&x->nw.nif, x->ctl_fd, mac);
	if (err != 0)
		goto fail;
	x->tx_free = calloc(SWV_XDP_TX_FRAMES, sizeof(*x->tx_free));
	x->area = mmap(NULL, (size_t)SWV_XDP_FRAMES * SWV_XDP_FRAME_SIZE,
		       PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (x->area == MAP_FAILED)
		x->area = NULL;
	if (x->tx_free == NULL || x->area == NULL) {
		err = ENOMEM;
		goto fail;
	}
	xdp_bpf_prev = libbpf_set_print(xdp_bpf_print);
	xdp_xdp_prev = libxdp_set_print(xdp_xdp_print);
	err = xdp_setup(x);
	libxdp_set_print(xdp_xdp_prev);
	libbpf_set_print(xdp_bpf_prev);
	if (err != 0)
		goto fail;
	fprintf(stderr, "swverbs: af_xdp:%s queue %u: %s\n", ifname, queue,
		swv_wire_af_xdp_mode(&x->nw.wire));
	*out = &x->nw.wire;
	return 0;
fail:
	xdp_free(x);
	return err;
}
