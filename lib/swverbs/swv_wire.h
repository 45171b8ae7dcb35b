/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Wires: where a swverbs device's frames go. Private to lib/swverbs.
 *
 * A wire is driven by the engine that serves its device (its thread, or the
 * thread in swv_engine_run_once()): every callback below except open/close
 * and peer runs there, one thread at a time.
 */

#ifndef SWV_WIRE_H
#define SWV_WIRE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

struct swv_device;
struct swv_wire;

/**
 * Deliver one received frame to a device (implemented by the device side,
 * engine.c). The frame is @len bytes spread over @iov; the call copies what
 * it keeps before returning. Runs on the engine thread.
 */
void swv_device_rx(struct swv_device *dev, const struct iovec *iov, int iovcnt,
		   uint32_t len);

/** One frame of a burst: @len bytes spread over @iov. */
struct swv_frame {
	const struct iovec *iov;
	int iovcnt;
	uint32_t len;
};

/**
 * Count a frame of @len bytes that a wire dropped because its link is down
 * (tx_link_down): as into an unplugged cable. The engine's thread.
 */
void swv_wire_tx_link_down(struct swv_wire *wire, uint32_t len);
/**
 * Count @n faults of the wire's medium that took its link down
 * (wire_faults: a shm cable's file truncated, nonsense in its ring
 * indexes). From rx_burst() or tx()
 * only, where the engine gathers counts: not from link_up(), which also
 * runs outside of a pass.
 */
void swv_wire_fault(struct swv_wire *wire, uint32_t n);
/**
 * Deliver @n received frames to a device, in order, as swv_device_rx() for
 * each (engine.c). The frames' memory must stay valid and unchanged until
 * the call returns; it copies what it keeps. The frames are steered
 * together: parsed, then looked up with their cache misses overlapped, then
 * delivered one after the other. Runs on the engine thread.
 */
void swv_device_rx_burst(struct swv_device *dev, const struct swv_frame *fr,
			 unsigned int n);

struct swv_wire_ops {
	/**
	 * Send one frame of @len bytes gathered from @iov.
	 * Return: 0 when handed to the wire, EAGAIN when the wire has no room
	 * now (the engine retries later; nothing was sent), EMSGSIZE for a
	 * frame longer than the link's MTU allows (the port drops it and
	 * counts it in tx_mtu_dropped; its WQE completes successfully), or
	 * another positive errno for a frame the wire will never take (a tx
	 * error: the WQE fails and the QP moves to ERR).
	 */
	int (*tx)(struct swv_wire *wire, const struct iovec *iov, int iovcnt,
		  uint32_t len);
	/**
	 * Optional (NULL: the engine calls tx() per frame): send @n frames
	 * that the wire takes all of, now and without fail (in-memory wires).
	 * Their memory is valid until the call returns: the engine completes
	 * the send WQEs only after it.
	 */
	void (*tx_burst)(struct swv_wire *wire, const struct swv_frame *fr,
			 unsigned int n);
	/** Push frames queued by tx() out (e.g. one sendto() per burst). */
	void (*tx_flush)(struct swv_wire *wire);
	/**
	 * Receive up to @budget frames, calling swv_device_rx() for each.
	 * Return: the number of frames received.
	 */
	unsigned int (*rx_burst)(struct swv_wire *wire, unsigned int budget);
	/** Whether the link carries frames now (port ACTIVE). */
	bool (*link_up)(struct swv_wire *wire);
	/**
	 * Optional (NULL: never): whether what the wire is bound to went
	 * away for good (an interface deleted), as last seen by link_up() or
	 * a send. A gone wire sends and receives nothing; the device raises
	 * its removal event and swv_device_rebind() opens it again.
	 */
	bool (*gone)(struct swv_wire *wire);
	/**
	 * Optional (NULL: the device checks @mtu against SWV_MAX_FRAME only):
	 * set the MTU of what the wire is bound to. Any thread.
	 * Return: 0, or a positive errno (EINVAL: the wire cannot carry it).
	 */
	int (*set_mtu)(struct swv_wire *wire, uint32_t mtu);
	/**
	 * Optional (NULL: the MTU last set through the device, 1500 at
	 * first): the MTU of what the wire is bound to, or 0 if unknown.
	 */
	uint32_t (*mtu)(struct swv_wire *wire);
	/**
	 * Optional (NULL: none): a warning about how the wire was opened
	 * (e.g. a pair cable whose name another process holds too), or NULL.
	 * Any thread; the string lives as long as the wire.
	 */
	const char *(*note)(struct swv_wire *wire);
	/**
	 * Optional (NULL: the device's SWV_MAX_FRAME less SWV_MTU_OVERHEAD, an
	 * Ethernet header and a VLAN tag): the largest MTU set_mtu() takes.
	 */
	uint32_t (*max_mtu)(struct swv_wire *wire);
	/**
	 * Optional (NULL: EOPNOTSUPP): take the link administratively up or
	 * down (a netdev's IFF_UP; an in-memory cable end plugged or not),
	 * so that link_up() follows on both sides. Control path, swv_lock
	 * held. Return: 0 or a positive errno.
	 */
	int (*set_link)(struct swv_wire *wire, bool up);
	/** Link speed in Mbit/s, for ibv_query_port; 0 if unknown. */
	uint32_t (*speed_mbps)(struct swv_wire *wire);
	/**
	 * A file descriptor that becomes readable when frames arrive, for the
	 * engine to sleep on when idle, or -1 (the engine then polls). Call it
	 * right before each sleep, not to collect fds while busy: a wire may
	 * arm its wakeup here (shm: the peer then makes a system call).
	 */
	int (*rx_fd)(struct swv_wire *wire);
	/**
	 * Optional (NULL: never): whether sends wait on the wire, for room
	 * that the other side frees without telling (shm: a tx() said EAGAIN
	 * on a full ring; af_xdp: frames in the Tx ring that a kick left).
	 * The engine then sleeps SWV_SLEEP_MAX_NS at most, not deeply. On the
	 * engine's thread, right before a deep sleep.
	 */
	bool (*tx_pending)(struct swv_wire *wire);
	/**
	 * Optional (NULL: none): the device this wire hands frames to
	 * directly, on the sending device's engine (a pair cable's other
	 * end), or NULL while there is none. Two devices joined so must be
	 * served by the same engine: swverbs refuses the other cases
	 * (EXDEV). Control path, swv_lock held.
	 */
	struct swv_device *(*peer)(struct swv_wire *wire);
	/**
	 * Optional (NULL: none): frames the wire dropped on receive before the
	 * device saw them, since the wire was opened (never decreasing):
	 * @full, for want of room (the kernel's ring full); @bad, frames the
	 * wire cannot hand over (truncated, above SWV_MAX_FRAME, GSO). Any
	 * thread, with the device's wire_lock held (a system call).
	 */
	void (*rx_drops)(struct swv_wire *wire, uint64_t *full, uint64_t *bad);
	/** Release the wire. Called with the engine no longer serving it. */
	void (*close)(struct swv_wire *wire);
};

struct swv_wire {
	const struct swv_wire_ops *ops;
	struct swv_device *dev;	/**< the device frames are delivered to */
	/**
	 * Shortest frame the device takes from this wire; shorter ones are
	 * runts, dropped and counted (rx_runts): 14 (an Ethernet header) on
	 * an in-memory wire, where no MAC pads; 60 (the Ethernet minimum
	 * without FCS) on a kernel wire, which pads shorter frames to it
	 * (swv_netif.h), so that none is a runt there.
	 */
	uint32_t min_frame;
	/**
	 * Frames reach the device only through the sender's tx() (loop,
	 * pair): rx_burst() has nothing to pull, and an inline device's
	 * idle poll need not call it.
	 */
	bool rx_pushed;
};

/*
 * Wire constructors. Each returns 0 and sets *out, or a positive errno.
 * @dev is the device that the wire delivers to.
 */
/* wire_mem.c */
int swv_wire_loop_open(struct swv_device *dev, struct swv_wire **out);
int swv_wire_pair_open(struct swv_device *dev, const char *cable,
		       struct swv_wire **out);
/* wire_shm.c */
/** Where shm cables live: tmpfs, shared by the processes of the machine. */
#define SWV_SHM_DIR "/dev/shm"
/** Frame slots per direction of a shm cable. */
#define SWV_SHM_SLOTS 1024
/** Bytes of a shm frame slot: the largest frame a shm cable carries. */
#define SWV_SHM_SLOT 2048
/**
 * Plug into shm cable @cable (SWV_SHM_DIR "/swverbs-shm.<cable>", created
 * if missing): the first free of its two ends. The link is up while the
 * other end is attached, from any process. A cable whose file is cut short
 * (truncated), whose header is wiped or whose ring indexes make no sense
 * is a fault: the link goes down
 * (wire_faults counts it) and both ends plug in again by themselves; a
 * SIGBUS handler of swverbs' covers the mapping (wire_shm.c).
 * Errors: EINVAL (bad name: empty, with '/', too long), EBUSY (both ends
 * are held: swv_wire_shm_holders() says by whom; or another end kept the
 * cable's setup lock, taken while an end attaches or leaves, for over
 * 1 s), EPROTO (the other end uses another layout, or found the cable
 * broken and has not left it yet, or the ring indexes left in the file make
 * no sense: the peer then leaves too), EMFILE (1024 cable ends in the process
 * already), ENOSPC (no room in SWV_SHM_DIR for the cable's
 * SWV_SHM_CABLE_BYTES; a file this end created is removed again), EAGAIN
 * (the file kept being replaced by ends leaving and arriving while this
 * one opened it: try again), ENOMEM, or the errno of open/mmap.
 */
int swv_wire_shm_open(struct swv_device *dev, const char *cable,
		      struct swv_wire **out);
/* wire_af_packet.c */
/**
 * Open @ifname with an AF_PACKET socket: TPACKET_V3 mmap Rx ring, mmap Tx
 * ring (TPACKET_V2), PACKET_QDISC_BYPASS where available. The interface's
 * MAC is written to @mac when not NULL.
 * Errors: ENODEV (no such interface), EPERM (no CAP_NET_RAW), ENOMEM.
 */
int swv_wire_af_packet_open(struct swv_device *dev, const char *ifname,
			    uint8_t mac[6], struct swv_wire **out);
/** The interface index an af_packet wire is bound to. Any thread. */
int swv_wire_af_packet_ifindex(struct swv_wire *wire);
/**
 * Frames an af_packet wire received but did not deliver: truncated by the
 * kernel, longer than SWV_MAX_FRAME, GSO super-frames, and frames the kernel
 * dropped because the Rx ring was full. Any thread.
 */
uint64_t swv_wire_af_packet_drops(struct swv_wire *wire);
/* wire_af_xdp.c */
/**
 * Open queue <queue> (0 when not given) of interface <ifname>, @spec
 * "<ifname>[:<queue>]", with an AF_XDP socket and a UMEM of its own:
 * native XDP before generic (SKB) XDP, zero copy before copy, as the
 * interface allows (swv_wire_af_xdp_mode() says which). The interface's MAC
 * is written to @mac when not NULL.
 * Errors: ENODEV (no such interface), EINVAL (bad queue number), EPERM (no
 * CAP_NET_RAW/CAP_BPF, or locked-memory limit), EAFNOSUPPORT (kernel
 * without AF_XDP), EOPNOTSUPP (no XDP mode works on the interface), EBUSY
 * (the queue has a socket already), ENOMEM.
 */
int swv_wire_af_xdp_open(struct swv_device *dev, const char *spec,
			 uint8_t mac[6], struct swv_wire **out);
/** The interface queue an af_xdp wire is bound to. Any thread. */
uint32_t swv_wire_af_xdp_queue(struct swv_wire *wire);
/** "native XDP, zero copy", "native XDP, copy" or "generic XDP, copy". */
const char *swv_wire_af_xdp_mode(struct swv_wire *wire);
/**
 * Frames the kernel dropped before the af_xdp wire saw them: longer than a
 * UMEM frame holds, or the Rx ring full (XDP_STATISTICS). Any thread.
 */
uint64_t swv_wire_af_xdp_drops(struct swv_wire *wire);

#endif /* SWV_WIRE_H */
