/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The af_packet wire: a Linux network interface reached through two
 * AF_PACKET sockets with mmap rings.
 *
 * Rx: a TPACKET_V3 ring (blocks of variable-size frames, retired by the
 * kernel when full or after SWV_AFP_RX_TOV_MS). The engine walks the blocks
 * the kernel handed over (TP_STATUS_USER), hands their frames to the device
 * in bursts (swv_device_rx_burst()) and gives a block back
 * (TP_STATUS_KERNEL) once all its frames are consumed and delivered; a
 * burst may stop inside a block and resume there. No system call and no
 * allocation per frame.
 *
 * The Rx socket asks for a virtio-net header in front of each frame
 * (PACKET_VNET_HDR) so that it can finish checksums the sender left to
 * "hardware" (CHECKSUM_PARTIAL frames crossing a veth) and refuse GSO
 * super-frames, which no NIC delivers. Offloaded VLAN tags (the kernel strips
 * them before packet taps run) are put back in place, so the device sees the
 * frame as it was on the wire.
 *
 * Tx: a TPACKET_V2 ring on a second socket (a socket has one ring version),
 * bound with protocol 0 so that it receives nothing. tx() copies a frame
 * into the next free slot and marks it TP_STATUS_SEND_REQUEST; tx_flush()
 * kicks the kernel with one sendto() per burst. PACKET_QDISC_BYPASS where
 * the kernel has it; PACKET_LOSS so that a frame the kernel refuses is
 * dropped rather than blocking the ring.
 *
 * The port's MTU is the interface's: tx() refuses (EMSGSIZE: the port
 * drops it and counts it, tx_mtu_dropped) a frame above the MTU it last
 * read, as the kernel would. The Tx slots hold the largest frame the
 * device takes (SWV_MAX_FRAME and a VLAN tag), whatever the MTU is now,
 * so that a raised MTU needs no new ring. Each Tx
 * frame carries a virtio-net header (PACKET_VNET_HDR, all zero: no offload)
 * where the kernel has it: the kernel then leaves the length check to us
 * and never drops a frame for its size silently, as PACKET_LOSS would do
 * with one that passed our check against an MTU lowered since. Its
 * hdr_len is the whole frame (up to SWV_AFP_TX_LINEAR_MAX bytes): the
 * kernel then copies the frame into the skb's head rather than pointing
 * page fragments at the ring, which it marks zero-copy; such fragments
 * cost a page allocation and a copy per frame wherever the skb must own
 * its data (skb_copy_ubufs(): a veth handing it to its peer, a tap), and
 * a small frame's copy costs less than the fragment bookkeeping anyway.
 *
 * The wire is bound to an interface index, not to a name: flags and MTU
 * are read for that index. When the index is gone (the interface was
 * deleted; a new one of the same name has another index), or a send fails
 * with ENXIO/ENODEV, the wire is gone for good: link down, gone() true,
 * nothing sent or received; the device raises its removal event and can
 * be opened again on the new interface.
 */

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <net/if.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/sockios.h>
#include <linux/virtio_net.h>

#include "swverbs.h"
#include "swv_netif.h"
#include "swv_wire.h"

/* Rx ring: 16 blocks of 256 KiB, retired after at most 1 ms. */
#define SWV_AFP_RX_BLOCK_SIZE (256u * 1024)
#define SWV_AFP_RX_BLOCK_NR 16u
#define SWV_AFP_RX_FRAME_SIZE 2048u	/* nominal: V3 frames are packed */
#define SWV_AFP_RX_TOV_MS 1u
/* Frames handed to the device per swv_device_rx_burst(), at most. */
#define SWV_AFP_RX_BATCH 32u

/*
 * Tx ring: 256 slots or a few more, each holding the largest frame with a
 * VLAN tag and a virtio-net header; 128 KiB blocks of 7 slots (~5 MiB).
 */
#define SWV_AFP_TX_BLOCK_SIZE (128u * 1024)
#define SWV_AFP_TX_FRAME_NR_MIN 256u
/* Where a V2 Tx frame's data starts (no PACKET_TX_HAS_OFF). */
#define SWV_AFP_TX_DATA_OFF TPACKET_ALIGN(sizeof(struct tpacket2_hdr))
#define SWV_AFP_VNET_LEN ((uint32_t)sizeof(struct virtio_net_hdr))

/* A failed Tx kick for a down link is retried at most this often. */
#define SWV_AFP_KICK_RETRY_NS (1000 * 1000)
/* Frames up to this long go in the skb's head, whole (see top). */
#define SWV_AFP_TX_LINEAR_MAX 2048u

#define SWV_AFP_VLAN_HLEN 4u

#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#endif
#ifndef unlikely
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif

struct swv_afp {
	struct swv_netif_wire nw;	/**< wire and interface; must be first */
	/* Rx, engine thread. */
	uint8_t *rx_map;		/**< the V3 ring */
	uint8_t *rx_pkt;		/**< next frame in the current block */
	uint32_t rx_block;		/**< block being read */
	uint32_t rx_left;		/**< frames left in it; 0: none taken */
	bool rx_vnet;			/**< frames carry a virtio_net_hdr */
	/* Tx, engine thread. */
	uint8_t *tx_map;		/**< the V2 ring */
	uint32_t tx_frame_size;		/**< slot size */
	uint32_t tx_frame_nr;		/**< slots */
	uint32_t tx_per_block;		/**< slots in a block */
	uint32_t tx_head;		/**< next slot to fill */
	uint8_t *tx_slot;		/**< its header */
	uint32_t tx_in_block;		/**< its index in its block */
	uint32_t tx_room;		/**< longest frame a slot holds */
	bool tx_vnet;			/**< frames carry a virtio_net_hdr */
	bool tx_kick;			/**< frames wait for a sendto() */
	uint64_t tx_kick_after;		/**< no kick before (ns), after ENETDOWN */
	/* Counters: written by the engine, read by anyone. */
	uint64_t rx_dropped;		/**< truncated, oversize, GSO frames */
	uint64_t rx_kernel_dropped;	/**< ring full (PACKET_STATISTICS) */
	uint64_t tx_kick_errors;	/**< failed sendto() kicks */
	/* Control. */
	size_t rx_map_len;
	size_t tx_map_len;
	int rx_fd;
	int tx_fd;
};

static inline struct swv_afp *
to_afp(struct swv_wire *wire)
{
	return (struct swv_afp *)wire;
}

static inline void
afp_count(uint64_t *counter, uint64_t n)
{
	__atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
}

/* Ones' complement sum of @len bytes, not folded. */
static uint64_t
afp_csum_add(uint64_t sum, const uint8_t *p, uint32_t len)
{
	while (len >= 2) {
		sum += (uint32_t)p[0] << 8 | p[1];
		p += 2;
		len -= 2;
	}
	if (len != 0)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

/*
 * Finish the checksum of a CHECKSUM_PARTIAL frame: the field at
 * csum_start + csum_offset holds the pseudo-header sum; the final value is
 * the complement of the sum from csum_start to the end of the frame.
 */
static bool
afp_csum_finish(uint8_t *frame, uint32_t len,
		const struct virtio_net_hdr *vh)
{
	uint32_t start = le16toh(vh->csum_start);
	uint32_t field = start + le16toh(vh->csum_offset);
	uint64_t sum;
	uint16_t csum;

	if (start >= len || field + 2 > len)
		return false;
	sum = afp_csum_add(0, frame + start, len - start);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	csum = ~sum & 0xffff;
	frame[field] = csum >> 8;
	frame[field + 1] = csum & 0xff;
	return true;
}

/*
 * Describe one ring frame for the device in @fr, its iovecs in @iov (4:
 * MACs, re-inserted VLAN tag, the rest, padding), the tag in @tag. Return
 * 1 if it is to be delivered, 0 if dropped (counted) or our own.
 */
static inline unsigned int
afp_rx_one(struct swv_afp *afp, struct tpacket3_hdr *h, struct swv_frame *fr,
	   struct iovec *iov, uint8_t *tag)
{
	const struct sockaddr_ll *sll;
	uint8_t *frame = (uint8_t *)h + h->tp_mac;
	uint32_t len = h->tp_snaplen;

	sll = (const struct sockaddr_ll *)((uint8_t *)h +
		TPACKET_ALIGN(sizeof(struct tpacket3_hdr)));
	/* Our own Tx (when PACKET_IGNORE_OUTGOING is missing). */
	if (unlikely(sll->sll_pkttype == PACKET_OUTGOING))
		return 0;
	if (unlikely(len < h->tp_len))
		goto drop;
	if (afp->rx_vnet) {
		const struct virtio_net_hdr *vh = (const void *)
			(frame - sizeof(struct virtio_net_hdr));

		if (unlikely(vh->gso_type != VIRTIO_NET_HDR_GSO_NONE))
			goto drop;
		if (unlikely(vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) &&
		    !afp_csum_finish(frame, len, vh))
			goto drop;
	}
	fr->iov = iov;
	if (likely(!(h->tp_status & TP_STATUS_VLAN_VALID))) {
		if (unlikely(len > SWV_MAX_FRAME))
			goto drop;
		iov[0].iov_base = frame;
		iov[0].iov_len = len;
		fr->iovcnt = 1;
		fr->len = swv_netif_rx_pad(iov, &fr->iovcnt, len);
		return 1;
	}
	/* The kernel took the outer tag off: put it back after the MACs. */
	if (unlikely(len < 2 * ETH_ALEN ||
		     len + SWV_AFP_VLAN_HLEN > SWV_MAX_FRAME))
		goto drop;
	{
		uint16_t tpid = (h->tp_status & TP_STATUS_VLAN_TPID_VALID) ?
			h->hv1.tp_vlan_tpid : ETH_P_8021Q;
		uint16_t tci = h->hv1.tp_vlan_tci;

		tag[0] = tpid >> 8;
		tag[1] = tpid & 0xff;
		tag[2] = tci >> 8;
		tag[3] = tci & 0xff;
	}
	iov[0].iov_base = frame;
	iov[0].iov_len = 2 * ETH_ALEN;
	iov[1].iov_base = tag;
	iov[1].iov_len = SWV_AFP_VLAN_HLEN;
	iov[2].iov_base = frame + 2 * ETH_ALEN;
	iov[2].iov_len = len - 2 * ETH_ALEN;
	fr->iovcnt = 3;
	fr->len = swv_netif_rx_pad(iov, &fr->iovcnt, len + SWV_AFP_VLAN_HLEN);
	return 1;
drop:
	afp_count(&afp->rx_dropped, 1);
	return 0;
}

/* Give a block back to the kernel. */
static inline void
afp_rx_release(struct tpacket_block_desc *bd)
{
	__atomic_store_n(&bd->hdr.bh1.block_status, TP_STATUS_KERNEL,
			 __ATOMIC_RELEASE);
}

/*
 * Up to SWV_AFP_RX_BATCH frames at a time are handed to the device as one
 * burst (swv_device_rx_burst(): parsed, then looked up together); the
 * blocks they were read from go back to the kernel after it, once every
 * frame of theirs is consumed.
 */
static unsigned int
afp_rx_burst(struct swv_wire *wire, unsigned int budget)
{
	struct swv_afp *afp = to_afp(wire);
	struct swv_frame fr[SWV_AFP_RX_BATCH];
	struct iovec iov[SWV_AFP_RX_BATCH][4];
	uint8_t tag[SWV_AFP_RX_BATCH][SWV_AFP_VLAN_HLEN];
	struct tpacket_block_desc *done[SWV_AFP_RX_BLOCK_NR];
	struct tpacket_block_desc *bd;
	struct tpacket3_hdr *h;
	unsigned int n = 0, m, ndone, i;
	bool more = true;

	while (more && n < budget) {
		m = 0;
		ndone = 0;
		while (m < SWV_AFP_RX_BATCH && n + m < budget &&
		       ndone < SWV_AFP_RX_BLOCK_NR) {
			bd = (struct tpacket_block_desc *)(afp->rx_map +
				(size_t)afp->rx_block * SWV_AFP_RX_BLOCK_SIZE);
			if (afp->rx_left == 0) {
				if (!(__atomic_load_n(&bd->hdr.bh1.block_status,
						      __ATOMIC_ACQUIRE) &
				      TP_STATUS_USER)) {
					more = false;
					break;
				}
				afp->rx_left = bd->hdr.bh1.num_pkts;
				afp->rx_pkt = (uint8_t *)bd +
					bd->hdr.bh1.offset_to_first_pkt;
			}
			if (afp->rx_left != 0) {
				h = (struct tpacket3_hdr *)afp->rx_pkt;
				m += afp_rx_one(afp, h, &fr[m], iov[m], tag[m]);
				afp->rx_pkt += h->tp_next_offset;
				afp->rx_left--;
			}
			if (afp->rx_left == 0) {
				done[ndone++] = bd;
				if (++afp->rx_block == SWV_AFP_RX_BLOCK_NR)
					afp->rx_block = 0;
			}
		}
		if (m != 0)
			swv_device_rx_burst(afp->nw.wire.dev, fr, m);
		for (i = 0; i < ndone; i++)
			afp_rx_release(done[i]);
		n += m;
	}
	return n;
}

/* Step tx_head to the next slot; the blocks may end with unused bytes. */
static inline void
afp_tx_next(struct swv_afp *afp)
{
	if (unlikely(++afp->tx_head == afp->tx_frame_nr)) {
		afp->tx_head = 0;
		afp->tx_in_block = 0;
		afp->tx_slot = afp->tx_map;
	} else if (unlikely(++afp->tx_in_block == afp->tx_per_block)) {
		afp->tx_in_block = 0;
		afp->tx_slot = afp->tx_map + (size_t)afp->tx_head /
			afp->tx_per_block * SWV_AFP_TX_BLOCK_SIZE;
	} else {
		afp->tx_slot += afp->tx_frame_size;
	}
}

/*
 * Whether a frame above MTU + 14 bytes is too long to send. A ConnectX's
 * port takes up to MTU + 18 bytes (its port MTU, less the FCS), tagged or
 * not; so does this wire with the virtio-net header, with which the kernel
 * leaves the length to it (the receiving end, a veth or a NIC, takes MTU +
 * 18 as well). Without it, the kernel allows the 4 more bytes to 802.1Q-
 * tagged frames only, and so does the wire, or the kernel would refuse.
 */
static bool
afp_tx_too_long(struct swv_afp *afp, const struct iovec *iov, int iovcnt,
		uint32_t len)
{
	if (afp->tx_vnet)
		return len > __atomic_load_n(&afp->nw.nif.mtu,
					     __ATOMIC_RELAXED) + ETH_HLEN + 4;
	return len > swv_netif_frame_max(&afp->nw.nif, iov, iovcnt);
}

static int
afp_tx(struct swv_wire *wire, const struct iovec *iov, int iovcnt,
       uint32_t len)
{
	struct swv_afp *afp = to_afp(wire);
	struct virtio_net_hdr *vh;
	struct tpacket2_hdr *h;
	uint32_t status, left, n;
	uint8_t *dst, *data;
	int i;

	if (unlikely(len < ETH_HLEN))
		return EINVAL;
	if (unlikely(len > afp->tx_room))
		return EMSGSIZE;
	if (unlikely(len > __atomic_load_n(&afp->nw.nif.mtu, __ATOMIC_RELAXED) +
		     ETH_HLEN) && afp_tx_too_long(afp, iov, iovcnt, len))
		return EMSGSIZE;
	if (unlikely(afp->nw.nif.gone))
		return ENODEV;
	h = (struct tpacket2_hdr *)afp->tx_slot;
	status = __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);
	if (status & (TP_STATUS_SEND_REQUEST | TP_STATUS_SENDING)) {
		/* Not yet sent: make sure the next flush kicks. */
		if (status & TP_STATUS_SEND_REQUEST)
			afp->tx_kick = true;
		return EAGAIN;
	}
	dst = (uint8_t *)h + SWV_AFP_TX_DATA_OFF;
	vh = (struct virtio_net_hdr *)dst;
	if (afp->tx_vnet) {
		/* No offload asked: the frame goes out as it is. */
		memset(vh, 0, SWV_AFP_VNET_LEN);
		dst += SWV_AFP_VNET_LEN;
	}
	data = dst;
	left = len;
	for (i = 0; i < iovcnt && left != 0; i++) {
		n = iov[i].iov_len < left ? iov[i].iov_len : left;
		memcpy(dst, iov[i].iov_base, n);
		dst += n;
		left -= n;
	}
	if (unlikely(left != 0))
		return EINVAL;	/* @iov holds fewer than @len bytes */
	/* A ConnectX pads a short frame: so does this wire (swv_netif.h). */
	len = swv_netif_tx_pad(data, len);
	/* The bytes the kernel copies into the skb's head (see top). */
	if (afp->tx_vnet && likely(len <= SWV_AFP_TX_LINEAR_MAX))
		vh->hdr_len = htole16((uint16_t)len);
	h->tp_len = len + (afp->tx_vnet ? SWV_AFP_VNET_LEN : 0);
	__atomic_store_n(&h->tp_status, TP_STATUS_SEND_REQUEST,
			 __ATOMIC_RELEASE);
	afp_tx_next(afp);
	afp->tx_kick = true;
	return 0;
}

static void
afp_tx_flush(struct swv_wire *wire)
{
	struct swv_afp *afp = to_afp(wire);
	uint64_t now;

	if (!afp->tx_kick)
		return;
	if (unlikely(afp->tx_kick_after != 0)) {
		now = swv_now_coarse_ns();
		if (now < afp->tx_kick_after)
			return;
		afp->tx_kick_after = 0;
	}
	afp->tx_kick = false;
	if (likely(sendto(afp->tx_fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0))
		return;
	/*
	 * Frames the kernel did not take stay queued in the ring: kick again
	 * on the next flush; at once for congestion (socket buffer, device
	 * queue), not before SWV_AFP_KICK_RETRY_NS for a link that is down.
	 */
	afp->tx_kick = true;
	if (errno == EAGAIN || errno == ENOBUFS || errno == EINTR)
		return;
	if (errno == ENXIO || errno == ENODEV) {
		/* Unbound by the kernel: the interface went away. */
		swv_netif_set_gone(&afp->nw.nif);
		afp->tx_kick = false;
	}
	afp_count(&afp->tx_kick_errors, 1);
	afp->tx_kick_after = swv_now_coarse_ns() + SWV_AFP_KICK_RETRY_NS;
}

static void
afp_clear_error(int fd)
{
	socklen_t sl;
	int err;

	sl = sizeof(err);
	getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &sl);
}

/*
 * An interface going down leaves ENETDOWN pending on the Rx socket, which
 * makes rx_fd report POLLERR until read: read it on each refresh.
 */
static bool
afp_link_up(struct swv_wire *wire)
{
	struct swv_afp *afp = to_afp(wire);

	if (swv_netif_poll(&afp->nw.nif))
		afp_clear_error(afp->rx_fd);
	return afp->nw.nif.link;
}

/* Set the interface's MTU; the kernel refuses what it cannot carry. */
static int
afp_set_mtu(struct swv_wire *wire, uint32_t mtu)
{
	struct swv_afp *afp = to_afp(wire);

	if (mtu + ETH_HLEN + SWV_AFP_VLAN_HLEN > afp->tx_room)
		return EINVAL;
	return swv_netif_set_mtu(&afp->nw.nif, mtu);
}

/* The largest MTU a Tx ring slot carries, with a VLAN tag. */
static uint32_t
afp_max_mtu(struct swv_wire *wire)
{
	return to_afp(wire)->tx_room - ETH_HLEN - SWV_AFP_VLAN_HLEN;
}

static int
afp_rx_fd(struct swv_wire *wire)
{
	struct swv_afp *afp = to_afp(wire);

	/* Unbound, the socket would only ever report an error. */
	return afp->nw.nif.gone ? -1 : afp->rx_fd;
}

static void
afp_free(struct swv_afp *afp)
{
	if (afp->tx_map != NULL)
		munmap(afp->tx_map, afp->tx_map_len);
	if (afp->rx_map != NULL)
		munmap(afp->rx_map, afp->rx_map_len);
	if (afp->tx_fd >= 0)
		close(afp->tx_fd);
	if (afp->rx_fd >= 0)
		close(afp->rx_fd);	/* also leaves promiscuous mode */
	free(afp);
}

static void
afp_close(struct swv_wire *wire)
{
	afp_free(to_afp(wire));
}

static void afp_rx_drops(struct swv_wire *wire, uint64_t *full,
			 uint64_t *bad);

static const struct swv_wire_ops afp_ops = {
	.tx = afp_tx,
	.tx_flush = afp_tx_flush,
	.rx_burst = afp_rx_burst,
	.link_up = afp_link_up,
	.gone = swv_netif_wire_gone,
	.set_mtu = afp_set_mtu,
	.mtu = swv_netif_wire_mtu,
	.max_mtu = afp_max_mtu,
	.set_link = swv_netif_wire_set_link,
	.speed_mbps = swv_netif_wire_speed,
	.rx_fd = afp_rx_fd,
	.rx_drops = afp_rx_drops,
	.close = afp_close,
};

int
swv_wire_af_packet_ifindex(struct swv_wire *wire)
{
	return swv_wire_netif(wire)->ifindex;
}

/* The ring's drops (full) and the wire's own (bad), so far. */
static void
afp_rx_drops(struct swv_wire *wire, uint64_t *full, uint64_t *bad)
{
	struct swv_afp *afp = to_afp(wire);
	struct tpacket_stats_v3 st;
	socklen_t sl = sizeof(st);

	/* The kernel resets its counters on each read: accumulate. */
	if (getsockopt(afp->rx_fd, SOL_PACKET, PACKET_STATISTICS, &st,
		       &sl) == 0)
		afp_count(&afp->rx_kernel_dropped, st.tp_drops);
	*full = __atomic_load_n(&afp->rx_kernel_dropped, __ATOMIC_RELAXED);
	*bad = __atomic_load_n(&afp->rx_dropped, __ATOMIC_RELAXED);
}

uint64_t
swv_wire_af_packet_drops(struct swv_wire *wire)
{
	uint64_t full, bad;

	afp_rx_drops(wire, &full, &bad);
	return full + bad;
}

static int
afp_socket(void)
{
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);

	if (fd >= 0)
		return fd;
	if (errno == EPERM || errno == EACCES)
		return -EPERM;
	return -errno;
}

static int
afp_setopt(int fd, int level, int name, int val)
{
	if (setsockopt(fd, level, name, &val, sizeof(val)) != 0)
		return errno;
	return 0;
}

static int
afp_bind(int fd, int ifindex, uint16_t proto)
{
	struct sockaddr_ll sll;

	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(proto);
	sll.sll_ifindex = ifindex;
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) != 0)
		return errno;
	return 0;
}

static int
afp_rx_setup(struct swv_afp *afp)
{
	struct tpacket_req3 req;
	struct packet_mreq mr;
	int err;

	err = afp_setopt(afp->rx_fd, SOL_PACKET, PACKET_VERSION, TPACKET_V3);
	if (err != 0)
		return err;
	/* Optional: without it, no checksum completion and no GSO check. */
	afp->rx_vnet = afp_setopt(afp->rx_fd, SOL_PACKET, PACKET_VNET_HDR,
				  1) == 0;
	/* Optional (Linux >= 4.20): rx_burst also filters PACKET_OUTGOING. */
	afp_setopt(afp->rx_fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, 1);
	memset(&req, 0, sizeof(req));
	req.tp_block_size = SWV_AFP_RX_BLOCK_SIZE;
	req.tp_block_nr = SWV_AFP_RX_BLOCK_NR;
	req.tp_frame_size = SWV_AFP_RX_FRAME_SIZE;
	req.tp_frame_nr = SWV_AFP_RX_BLOCK_SIZE / SWV_AFP_RX_FRAME_SIZE *
		SWV_AFP_RX_BLOCK_NR;
	req.tp_retire_blk_tov = SWV_AFP_RX_TOV_MS;
	if (setsockopt(afp->rx_fd, SOL_PACKET, PACKET_RX_RING, &req,
		       sizeof(req)) != 0)
		return errno;
	afp->rx_map_len = (size_t)SWV_AFP_RX_BLOCK_SIZE * SWV_AFP_RX_BLOCK_NR;
	afp->rx_map = mmap(NULL, afp->rx_map_len, PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_POPULATE, afp->rx_fd, 0);
	if (afp->rx_map == MAP_FAILED) {
		afp->rx_map = NULL;
		return errno;
	}
	memset(&mr, 0, sizeof(mr));
	mr.mr_ifindex = afp->nw.nif.ifindex;
	mr.mr_type = PACKET_MR_PROMISC;
	if (setsockopt(afp->rx_fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr,
		       sizeof(mr)) != 0)
		return errno;
	/* Bind last: no frame reaches the socket before its ring exists. */
	return afp_bind(afp->rx_fd, afp->nw.nif.ifindex, ETH_P_ALL);
}

static int
afp_tx_setup(struct swv_afp *afp)
{
	struct tpacket_req req;
	uint32_t need, fs;
	int err, buf;

	err = afp_setopt(afp->tx_fd, SOL_PACKET, PACKET_VERSION, TPACKET_V2);
	if (err != 0)
		return err;
	afp_setopt(afp->tx_fd, SOL_PACKET, PACKET_QDISC_BYPASS, 1);
	err = afp_setopt(afp->tx_fd, SOL_PACKET, PACKET_LOSS, 1);
	if (err != 0)
		return err;
	/* Optional: without it the kernel also checks the MTU (see top). */
	afp->tx_vnet = afp_setopt(afp->tx_fd, SOL_PACKET, PACKET_VNET_HDR,
				  1) == 0;
	/*
	 * Slots hold the largest frame with a VLAN tag, whatever the MTU:
	 * a raised MTU needs no new ring. The kernel wants a slot size that
	 * is a multiple of TPACKET_ALIGNMENT; slots do not cross blocks.
	 */
	need = SWV_AFP_TX_DATA_OFF + SWV_AFP_VNET_LEN + SWV_MAX_FRAME +
		SWV_AFP_VLAN_HLEN;
	fs = TPACKET_ALIGN(need);
	afp->tx_frame_size = fs;
	afp->tx_room = SWV_MAX_FRAME;
	afp->tx_per_block = SWV_AFP_TX_BLOCK_SIZE / fs;
	memset(&req, 0, sizeof(req));
	req.tp_block_size = SWV_AFP_TX_BLOCK_SIZE;
	req.tp_frame_size = fs;
	req.tp_block_nr = (SWV_AFP_TX_FRAME_NR_MIN + afp->tx_per_block - 1) /
		afp->tx_per_block;
	afp->tx_frame_nr = req.tp_block_nr * afp->tx_per_block;
	req.tp_frame_nr = afp->tx_frame_nr;
	if (setsockopt(afp->tx_fd, SOL_PACKET, PACKET_TX_RING, &req,
		       sizeof(req)) != 0)
		return errno;
	/*
	 * Sent frames hold send-buffer space until freed (for a veth, until
	 * the peer consumed them): leave room for the whole ring.
	 */
	buf = (int)(afp->tx_frame_nr * (fs + 1024));
	if (afp_setopt(afp->tx_fd, SOL_SOCKET, SO_SNDBUFFORCE, buf) != 0)
		afp_setopt(afp->tx_fd, SOL_SOCKET, SO_SNDBUF, buf);
	afp->tx_map_len = (size_t)req.tp_block_size * req.tp_block_nr;
	afp->tx_map = mmap(NULL, afp->tx_map_len, PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_POPULATE, afp->tx_fd, 0);
	if (afp->tx_map == MAP_FAILED) {
		afp->tx_map = NULL;
		return errno;
	}
	afp->tx_slot = afp->tx_map;
	/* Protocol 0: this socket sends only, it receives nothing. */
	return afp_bind(afp->tx_fd, afp->nw.nif.ifindex, 0);
}

int
swv_wire_af_packet_open(struct swv_device *dev, const char *ifname,
			uint8_t mac[6], struct swv_wire **out)
{
	struct swv_afp *afp;
	int err;

	afp = calloc(1, sizeof(*afp));
	if (afp == NULL)
		return ENOMEM;
	afp->rx_fd = -1;
	afp->tx_fd = -1;
	afp->nw.wire.ops = &afp_ops;
	afp->nw.wire.dev = dev;
	/* Shorter frames are padded (swv_netif.h): none is a runt. */
	afp->nw.wire.min_frame = SWV_NETIF_MIN_FRAME;
	err = swv_netif_init(&afp->nw.nif, ifname);
	if (err != 0)
		goto fail;
	afp->rx_fd = afp_socket();
	if (afp->rx_fd < 0) {
		err = -afp->rx_fd;
		goto fail;
	}
	afp->tx_fd = afp_socket();
	if (afp->tx_fd < 0) {
		err = -afp->tx_fd;
		goto fail;
	}
	err = swv_netif_open(&afp->nw.nif, afp->tx_fd, mac);
	if (err != 0)
		goto fail;
	err = afp_rx_setup(afp);
	if (err != 0)
		goto fail;
	err = afp_tx_setup(afp);
	if (err != 0)
		goto fail;
	*out = &afp->nw.wire;
	return 0;
fail:
	afp_free(afp);
	return err;
}
