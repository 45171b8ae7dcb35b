/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * A Linux network interface as the kernel wires (af_packet, af_xdp) see it:
 * bound to an interface index, not to a name; link state and MTU read for
 * that index (cached for SWV_NETIF_REFRESH_NS), MTU set on it, speed from
 * ethtool (cached: re-read once the link was seen going down or up, and
 * every SWV_NETIF_SPEED_NS, because the kernel answers SIOCETHTOOL under
 * the RTNL lock, which any netlink change on the host holds, for
 * milliseconds at times, and the link check that asks runs on the
 * datapath: inside an inline port's burst calls). Private to lib/swverbs
 * (wire_netif.c).
 *
 * When the index goes away (the interface was deleted; a new one of the
 * same name gets another index) the interface is gone for good: link
 * down, gone true.
 */

#ifndef SWV_NETIF_H
#define SWV_NETIF_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <net/if.h>
#include <sys/uio.h>

#include "swv_clock.h"
#include "swv_wire.h"

/* Link flags and MTU are re-read at most this often. */
#define SWV_NETIF_REFRESH_NS (10 * 1000 * 1000)
/* The speed is re-read from ethtool at least this often. */
#define SWV_NETIF_SPEED_NS (1000 * 1000 * 1000)

struct swv_netif {
	int fd;			/**< a socket for the interface ioctls */
	int ifindex;		/**< the bound index */
	uint64_t next;		/**< next refresh (ns), wire callbacks */
	uint32_t mtu;		/**< interface MTU (atomic: any thread) */
	/**
	 * Held from an MTU ioctl to the store of its result (atomic
	 * exchange): the engine's read, a query's and a set may run at
	 * once, and an older reading must not land after a newer one.
	 */
	uint32_t mtu_busy;
	uint32_t speed;		/**< last known speed, Mbit/s (atomic) */
	uint64_t speed_next;	/**< next ethtool read (ns), wire callbacks */
	bool speed_stale;	/**< link changed since the last read */
	bool link;		/**< IFF_UP && IFF_RUNNING */
	bool gone;		/**< the interface index went away */
	char ifname[IF_NAMESIZE]; /**< the name it was opened with */
};

/**
 * The head of a kernel wire's state (af_packet, af_xdp): the wire, then its
 * interface, so that the ops which only ask the interface are shared.
 */
struct swv_netif_wire {
	struct swv_wire wire;	/**< ops and device; must be first */
	struct swv_netif nif;
};

static inline struct swv_netif *
swv_wire_netif(struct swv_wire *wire)
{
	return &((struct swv_netif_wire *)wire)->nif;
}

/* Wire ops of a struct swv_netif_wire. */
/** gone: the interface index went away. */
bool swv_netif_wire_gone(struct swv_wire *wire);
/** mtu: the interface's MTU now (ip link set mtu shows at once). */
uint32_t swv_netif_wire_mtu(struct swv_wire *wire);
/** speed_mbps: from ethtool, 0 when the interface does not say. */
uint32_t swv_netif_wire_speed(struct swv_wire *wire);
/** set_link: the interface's IFF_UP (SIOCSIFFLAGS). */
int swv_netif_wire_set_link(struct swv_wire *wire, bool up);

/**
 * Find @ifname: nif->ifindex and nif->ifname set, nif->fd -1.
 * Return: 0, ENODEV (no such interface, or a bad name), ENOMEM.
 */
int swv_netif_init(struct swv_netif *nif, const char *ifname);

/**
 * Finish opening with @fd (a socket the ioctls go through; the caller
 * keeps it open while the netif lives, and closes it): the MAC into @mac
 * (when not NULL), link state, MTU and speed read.
 * Return: 0, ENODEV (the interface went away), or an errno.
 */
int swv_netif_open(struct swv_netif *nif, int fd, uint8_t mac[6]);

/** Read link state and MTU now; notices a gone index. */
void swv_netif_refresh(struct swv_netif *nif);

/**
 * Refresh when the cache is older than SWV_NETIF_REFRESH_NS.
 * Return: whether it refreshed (the interface not gone).
 */
bool swv_netif_poll(struct swv_netif *nif);

/** The interface's MTU now (read again unless gone). Any thread. */
uint32_t swv_netif_mtu(struct swv_netif *nif);

/*
 * Test hook (NULL outside tests): called between an SIOCGIFMTU (of
 * swv_netif_mtu(), swv_netif_refresh()) and the store of what it read.
 */
extern void (*swv_netif_mtu_hook)(struct swv_netif *nif);

/**
 * Set the interface's MTU (SIOCSIFMTU), as a NIC driver sets its netdev's:
 * the kernel refuses what the interface cannot carry. Any thread.
 * Return: 0 or an errno (ENODEV: gone).
 */
int swv_netif_set_mtu(struct swv_netif *nif, uint32_t mtu);

/**
 * Link speed in Mbit/s (0 when the interface does not say): the last one
 * read, read again from ethtool when the link was seen changing since, or
 * SWV_NETIF_SPEED_NS after the last read.
 */
uint32_t swv_netif_speed(struct swv_netif *nif);
/**
 * Set or clear the interface's IFF_UP. Return: 0, ENODEV (gone), EPERM
 * (needs CAP_NET_ADMIN), or the ioctl's errno.
 */
int swv_netif_set_up(struct swv_netif *nif, bool up);

/**
 * The longest frame the interface sends of the one in @iov: MTU and the
 * Ethernet header, 4 bytes more for an 802.1Q-tagged frame (as the kernel
 * allows on a packet socket). Any thread.
 */
uint32_t swv_netif_frame_max(const struct swv_netif *nif,
			     const struct iovec *iov, int iovcnt);

/*
 * Shortest frame on an Ethernet wire, less its FCS (ETH_ZLEN). The kernel
 * hands a packet socket or an XDP socket shorter ones (its 42-byte ARP
 * frames on a veth), which a NIC never sees: the sender's MAC pads them.
 * The kernel wires model that MAC on both sides: a shorter frame received
 * is delivered padded with zeros (byte_len SWV_NETIF_MIN_FRAME, as a
 * ConnectX reports it), and a shorter frame sent goes out padded, as a
 * ConnectX pads on transmit.
 */
#define SWV_NETIF_MIN_FRAME 60u

/** SWV_NETIF_MIN_FRAME zero bytes, the padding of short frames. */
extern const uint8_t swv_netif_zeros[SWV_NETIF_MIN_FRAME];

/**
 * Pad a received frame of @len bytes in iov[0..*iovcnt) to
 * SWV_NETIF_MIN_FRAME: when shorter, an iovec of zeros is added at
 * iov[*iovcnt] (the caller leaves room for one more) and *iovcnt grows.
 * The frame's own memory is not written.
 * Return: the frame's length now.
 */
static inline uint32_t
swv_netif_rx_pad(struct iovec *iov, int *iovcnt, uint32_t len)
{
	if (__builtin_expect(len >= SWV_NETIF_MIN_FRAME, 1))
		return len;
	iov[*iovcnt].iov_base = (void *)(uintptr_t)swv_netif_zeros;
	iov[*iovcnt].iov_len = SWV_NETIF_MIN_FRAME - len;
	(*iovcnt)++;
	return SWV_NETIF_MIN_FRAME;
}

/**
 * Pad a frame of @len bytes copied to @dst for sending: zeros after it up
 * to SWV_NETIF_MIN_FRAME (@dst has room for them).
 * Return: the length the frame goes out with.
 */
static inline uint32_t
swv_netif_tx_pad(uint8_t *dst, uint32_t len)
{
	if (__builtin_expect(len >= SWV_NETIF_MIN_FRAME, 1))
		return len;
	memset(dst + len, 0, SWV_NETIF_MIN_FRAME - len);
	return SWV_NETIF_MIN_FRAME;
}

/** Mark the interface gone (e.g. a send failed with ENXIO/ENODEV). */
static inline void
swv_netif_set_gone(struct swv_netif *nif)
{
	nif->gone = true;
	nif->link = false;
}

#endif /* SWV_NETIF_H */
