/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * swverbs: a software verbs device.
 *
 * swverbs implements the verbs objects that vbr uses (device, PD, MR, CQ,
 * extended CQ, RAW_PACKET QP, WQ, receive WQ indirection table, hash QP, flow
 * steering) with their documented semantics, in user space, over a "wire":
 *
 *   loop                frames sent come back as received, in memory
 *   pair:<name>         two devices in one process joined by a cable
 *   af_packet:<ifname>  a Linux interface through an AF_PACKET socket
 *   af_xdp:<ifname>[:<queue>]  one queue of it through an AF_XDP socket
 *
 * Every call takes and returns the real <infiniband/verbs.h> types and follows
 * the libibverbs conventions, because swverbs stands in for libibverbs:
 *   - creators return NULL and set errno;
 *   - destroy, modify, query and post calls return 0 or a positive errno;
 *   - poll_cq returns the number of completions or a negative value.
 *
 * The datapath calls are reached the way libibverbs reaches a provider, so the
 * inline functions of verbs.h work unchanged on swverbs objects:
 *   ibv_post_send(qp, ...)        qp->context->ops.post_send
 *   ibv_post_recv(qp, ...)        qp->context->ops.post_recv
 *   ibv_poll_cq(cq, ...)          cq->context->ops.poll_cq
 *   ibv_post_wq_recv(wq, ...)     wq->post_recv
 *   ibv_start_poll(cq_ex, ...)    cq_ex->start_poll, and the other members of
 *                                 struct ibv_cq_ex (next_poll, end_poll,
 *                                 read_byte_len, read_wc_flags, read_flow_tag,
 *                                 read_completion_ts, read_opcode, read_qp_num)
 * A swverbs context is a struct verbs_context too (verbs_ctx.c), so the
 * other calls verbs.h defines inline (ibv_query_port, ibv_create_flow,
 * ibv_create_wq, ibv_read_counters, ...) reach swverbs as well.
 * The datapath calls take no lock and make no system call. A QP, WQ or CQ has a single
 * producer and a single consumer on the application side (as with a verbs
 * thread domain): one thread posts to a given queue, one thread polls a given
 * CQ. Different queues may be used from different threads.
 *
 * The device's work (wire Rx, steering, scatter into posted buffers, send
 * queue drain, completions) is done by an engine (see Engines below): a
 * thread owned by swverbs, which busy-polls under load and sleeps when idle,
 * or the passes an application drives with swv_engine_run_once(), or,
 * for a device on the inline engine, the verbs calls made on it.
 */

#ifndef SWVERBS_H
#define SWVERBS_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Longest device name, terminating NUL included. */
#define SWV_NAME_MAX 64

/** Largest frame a swverbs port sends or receives, in bytes (no FCS). */
#define SWV_MAX_FRAME 16384

/*
 * Device registry.
 */

/** Kinds of wire. */
enum swv_wire_kind {
	SWV_WIRE_LOOP,		/**< "loop" */
	SWV_WIRE_PAIR,		/**< "pair:<cable>" */
	SWV_WIRE_AF_PACKET,	/**< "af_packet:<ifname>" */
	SWV_WIRE_SHM,		/**< "shm:<cable>" */
	SWV_WIRE_AF_XDP,	/**< "af_xdp:<ifname>[:<queue>]" */
};

/**
 * Parse a wire string, the one parser of them: *kind gets its kind and
 * *name what follows the ':' (NULL for loop). Either out pointer may be
 * NULL. Return: 0, EINVAL (unknown kind), ENOENT (no name after the ':').
 */
int swv_wire_parse(const char *wire, enum swv_wire_kind *kind,
		   const char **name);

/**
 * Create a software device bound to a wire.
 *
 * @name: device name, unique in the process, at most SWV_NAME_MAX - 1 chars.
 * @wire: "loop", "pair:<cable>", "shm:<cable>", "af_packet:<ifname>" or
 *        "af_xdp:<ifname>[:<queue>]". The first device created on a pair
 *        cable waits for its peer (port DOWN); the second joins it (both
 *        ports ACTIVE); a third fails with EBUSY. A pair cable joins devices
 *        of one process; a shm cable joins any two devices of the machine,
 *        in one process or two, the same way.
 * @mac:  the port's MAC address (6 bytes), or NULL: for af_packet and
 *        af_xdp the interface's address, otherwise a locally administered
 *        address derived from @name.
 *
 * Return: 0, or a positive errno: EINVAL (bad name or wire string), EEXIST
 * (name in use), EBUSY (pair or shm cable already has two ends, or the
 * interface is the wire of another device, or the af_xdp queue has a
 * socket), ENODEV (no such interface), EPERM (AF_PACKET needs CAP_NET_RAW;
 * AF_XDP also CAP_BPF and room under the locked-memory limit), EPROTO (the
 * other end of a shm cable uses another layout), ENOSPC (no room in
 * /dev/shm for a shm cable: SWV_SHM_CABLE_BYTES), EAGAIN (a shm cable's file
 * kept being replaced while this end opened it: try again), EAFNOSUPPORT (no
 * AF_XDP in the kernel), EOPNOTSUPP (no XDP mode on the interface), ENOMEM.
 */
int swv_device_create(const char *name, const char *wire, const uint8_t *mac);

/** Bytes of /dev/shm a shm cable takes (reserved when its first end opens). */
#define SWV_SHM_CABLE_BYTES 4206592u

/**
 * The processes holding the ends of shm cable @cable: pids[i] the pid of
 * end i's holder, 0 for a free end.
 * Return: 0, ENOENT (no such cable), EINVAL (bad name).
 */
int swv_wire_shm_holders(const char *cable, int pids[2]);

/**
 * A warning about how device @name's wire was opened, written to @buf
 * (empty when there is none): e.g. a pair cable whose name another process
 * holds too (each process has its own cable of that name; shm:<cable>
 * joins processes).
 * Return: 0, ENOENT (no such device), EINVAL.
 */
int swv_device_wire_note(const char *name, char *buf, size_t len);

/**
 * The profile flags of a profile name: "mlx5", "mlx5-noburst" (mlx5 with
 * SWV_DEVICE_PACE_NO_BURST), "mlx5-vf" (mlx5 with SWV_DEVICE_PROFILE_VF)
 * or "full".
 * Return: 0 (*flag set), EINVAL (unknown name).
 */
int swv_profile_parse(const char *name, unsigned int *flag);

/**
 * Let devices share an af_packet interface: each then receives every frame
 * the interface receives. Every device on the interface must ask for it.
 */
#define SWV_DEVICE_SHARE_WIRE 1u

/**
 * Device profiles: what the device accepts and how it steers where the man
 * pages leave it open (doc/guides/swverbs.rst, "Device profiles", lists
 * every rule and where it comes from).
 *
 * SWV_DEVICE_PROFILE_MLX5 (0, the default) behaves like a ConnectX (mlx5
 * kernel driver and rdma-core provider, Verbs mode): it refuses what mlx5
 * refuses, with mlx5's errno (flow priorities above 15, IPv4 TTL/flags and
 * IPv6 hop limit matches, GRE C/K/S bits, ESP, MPLS, conflicting ether type
 * or IP protocol, hash QPs mixing IPv4 with IPv6 or TCP with UDP, reads of
 * counters no flow holds, ...) and steers as mlx5 does (any VLAN mask
 * means tagged frames only, multicast-only rules after priority 15,
 * ALL_DEFAULT/MC_DEFAULT as leftovers rules whose specs are ignored).
 *
 * SWV_DEVICE_PROFILE_FULL: swverbs' own, more capable behaviour (TTL, hop
 * limit, GRE flag, ESP and MPLS matches, SNIFFER rules, any priority, reads
 * of unbound counters).
 *
 * swv_query_device_ex() reports the profile in vendor_part_id
 * (SWV_VENDOR_PART_MLX5 or SWV_VENDOR_PART_FULL) and fw_ver; a driver should
 * not need to look: it finds out what a device accepts by trying.
 */
#define SWV_DEVICE_PROFILE_MLX5 0u
#define SWV_DEVICE_PROFILE_FULL 2u
/**
 * With SWV_DEVICE_PROFILE_MLX5: a ConnectX whose firmware lacks the burst
 * pacing caps (packet_pacing_burst_bound, packet_pacing_typical_size):
 * swv_modify_qp_rate_limit() with max_burst_sz or typical_pkt_sz gives
 * EINVAL, as the mlx5 provider does without MLX5_IB_PP_SUPPORT_BURST
 * (which ibv_query_device_ex() cannot show). Not with the full profile.
 */
#define SWV_DEVICE_PACE_NO_BURST 4u
/**
 * With SWV_DEVICE_PROFILE_MLX5 on an af_packet or af_xdp wire: a ConnectX
 * VF or SF, whose eswitch vport forwards only the frames whose destination
 * its netdev registered. The interface plays that netdev: the device
 * delivers a frame only when its destination is the interface's MAC,
 * broadcast, an address on the interface's unicast or multicast list
 * (`bridge fdb add <mac> dev <if> self`, `ip maddr add`, the IP stack's
 * joins), any multicast with the interface's IFF_ALLMULTI, anything with
 * its IFF_PROMISC (as set by a user: `ip link set <if> promisc on`). It
 * reads them every 10 ms; the rest is dropped before any steering and
 * counted in rx_vport_dropped. Profile name "mlx5-vf". Other wires, or
 * with SWV_DEVICE_PROFILE_FULL: EINVAL.
 */
#define SWV_DEVICE_PROFILE_VF 8u

/**
 * vendor_id of every swverbs device: 0xffffff, no IEEE OUI, as rxe reports
 * (a kernel device always names one; 0 reads as none, and rdma-core's
 * tests refuse it). Not Mellanox's 0x02c9: programs that see that try mlx5
 * direct verbs.
 */
#define SWV_VENDOR_ID 0xffffff
/** vendor_part_id of a device with the mlx5 profile. */
#define SWV_VENDOR_PART_MLX5 0x5701
/** vendor_part_id of a device with the full profile. */
#define SWV_VENDOR_PART_FULL 0x5702

/**
 * swv_device_create() with @flags: SWV_DEVICE_SHARE_WIRE and a profile
 * (SWV_DEVICE_PROFILE_MLX5, the default, or SWV_DEVICE_PROFILE_FULL), or'ed;
 * SWV_DEVICE_PACE_NO_BURST with the mlx5 profile.
 * Return: as swv_device_create(); EINVAL also for unknown flags.
 */
int swv_device_create_flags(const char *name, const char *wire,
			    const uint8_t *mac, unsigned int flags);

/**
 * Bind a device whose wire is gone (its interface deleted: the device
 * raised IBV_EVENT_DEVICE_FATAL) to the interface that now has the name,
 * with fresh sockets. Its objects, MAC and rules stay. Call it with the
 * device's queues idle (e.g. at port start): frames queued on the old wire
 * are lost.
 *
 * Return: 0 (rebound, or nothing to do: the wire is not gone), ENOENT (no
 * such device), ENODEV (no interface of that name yet), EBUSY (the new
 * interface is the wire of another device), EPERM, ENOMEM.
 */
int swv_device_rebind(const char *name);

/**
 * Set the port's MTU (bytes above the Ethernet header). For af_packet, the
 * interface's MTU (SIOCSIFMTU, as a NIC driver sets its netdev's); the
 * kernel refuses what the interface cannot carry. In-memory wires carry
 * any MTU whose largest frame (with a VLAN tag: what Rx lets in) fits
 * SWV_MAX_FRAME (shm: its 2048-byte slot).
 *
 * Return: 0, EINVAL (too large for the wire, or refused by the kernel),
 * ENODEV (the interface is gone), EPERM (needs CAP_NET_ADMIN).
 */
int swv_set_port_mtu(struct ibv_context *context, uint32_t mtu);

/**
 * Set the MTU the port's receive side drops above (frames longer than
 * @mtu + 18 bytes: an Ethernet header and one VLAN tag, no FCS; counted in
 * rx_mtu_dropped), without touching the wire's own MTU: a driver whose
 * port reports another MTU than its interface's keeps the drop at the one
 * it reports. 0: follow the wire's MTU again, as swv_set_port_mtu() also
 * does. On af_packet and af_xdp the kernel still drops above the
 * interface's MTU before the socket.
 *
 * Return: 0, EINVAL (@context NULL).
 */
int swv_set_port_rx_mtu(struct ibv_context *context, uint32_t mtu);

/**
 * Destroy a device created with swv_device_create().
 *
 * Return: 0, ENOENT (no such device), EBUSY (a context is still open on it).
 */
int swv_device_destroy(const char *name);

/** Like ibv_get_device_list(): NULL-terminated list of swverbs devices. */
struct ibv_device **swv_get_device_list(int *num_devices);
/** Like ibv_free_device_list(). */
void swv_free_device_list(struct ibv_device **list);
/** Like ibv_get_device_name(). */
const char *swv_get_device_name(struct ibv_device *device);
/** Like ibv_open_device(). NULL + errno on failure. */
struct ibv_context *swv_open_device(struct ibv_device *device);
/**
 * Like ibv_close_device(). Return: 0, or EBUSY while objects created on the
 * context still exist.
 */
int swv_close_device(struct ibv_context *context);

/**
 * Like ibv_query_device_ex(). Reports the device's real limits and
 * capabilities: raw packet QPs (IBV_RAW_PACKET_CAP_*), flow steering
 * (IBV_DEVICE_MANAGED_FLOW_STEERING), RSS (rss_caps: Toeplitz, the
 * IBV_RX_HASH_* fields, max_rwq_indirection_table_size), WQ limits,
 * completion timestamp (hca_core_clock in kHz; timestamps count nanoseconds
 * of CLOCK_MONOTONIC), the profile (vendor_part_id, fw_ver), packet pacing
 * (packet_pacing_caps: rates of 1 kbit/s to 100 Gbit/s, in kbit/s, on
 * RAW_PACKET QPs; see swv_modify_qp_rate_limit()), and the offloads a
 * ConnectX has: raw_packet_caps IBV_RAW_PACKET_CAP_CVLAN_STRIPPING and
 * IBV_RAW_PACKET_CAP_IP_CSUM (IBV_WC_IP_CSUM_OK on receive; on the mlx5
 * profile, as on mlx5, never on a WQ's completions), and
 * IBV_DEVICE_RAW_IP_CSUM in device_cap_flags_ex (IBV_SEND_IP_CSUM).
 * Return: 0, EINVAL (input comp_mask not 0).
 */
int swv_query_device_ex(struct ibv_context *context,
			const struct ibv_query_device_ex_input *input,
			struct ibv_device_attr_ex *attr);

/**
 * Like ibv_query_port() for port 1 (the only port). state is
 * IBV_PORT_ACTIVE when the wire carries frames (loop always; pair once both
 * ends exist; af_packet while the interface is up and running), link_layer is
 * IBV_LINK_LAYER_ETHERNET, active_speed/active_width give the link rate.
 * Return: 0, EINVAL (port_num not 1).
 */
int swv_query_port(struct ibv_context *context, uint8_t port_num,
		   struct ibv_port_attr *port_attr);

/*
 * Extended port query (ibv_query_port_ex as its seed describes it; rdma-core
 * has no such call). Bits of swv_port_attr_ex.comp_mask: the first 20 select
 * the fields of struct ibv_port_attr in their order, the others fields that
 * the standard query has no room for.
 */
#define SWV_QUERY_PORT_EX_STATE			(1u << 0)
#define SWV_QUERY_PORT_EX_MAX_MTU		(1u << 1)
#define SWV_QUERY_PORT_EX_ACTIVE_MTU		(1u << 2)
#define SWV_QUERY_PORT_EX_GID_TBL_LEN		(1u << 3)
#define SWV_QUERY_PORT_EX_CAP_FLAGS		(1u << 4)
#define SWV_QUERY_PORT_EX_MAX_MSG_SZ		(1u << 5)
#define SWV_QUERY_PORT_EX_BAD_PKEY_CNTR		(1u << 6)
#define SWV_QUERY_PORT_EX_QKEY_VIOL_CNTR	(1u << 7)
#define SWV_QUERY_PORT_EX_PKEY_TBL_LEN		(1u << 8)
#define SWV_QUERY_PORT_EX_LID			(1u << 9)
#define SWV_QUERY_PORT_EX_SM_LID		(1u << 10)
#define SWV_QUERY_PORT_EX_LMC			(1u << 11)
#define SWV_QUERY_PORT_EX_MAX_VL_NUM		(1u << 12)
#define SWV_QUERY_PORT_EX_SM_SL			(1u << 13)
#define SWV_QUERY_PORT_EX_SUBNET_TIMEOUT	(1u << 14)
#define SWV_QUERY_PORT_EX_INIT_TYPE_REPLY	(1u << 15)
#define SWV_QUERY_PORT_EX_ACTIVE_WIDTH		(1u << 16)
#define SWV_QUERY_PORT_EX_ACTIVE_SPEED		(1u << 17)
#define SWV_QUERY_PORT_EX_PHYS_STATE		(1u << 18)
#define SWV_QUERY_PORT_EX_LINK_LAYER		(1u << 19)
/** The fields ibv_query_port() gives. */
#define SWV_QUERY_PORT_EX_STD_MASK		((1u << 20) - 1)
/** eth_mtu: the Ethernet MTU in bytes (active_mtu is an IB MTU). */
#define SWV_QUERY_PORT_EX_ETH_MTU		(1u << 20)
/** eth_max_mtu: the largest Ethernet MTU the wire takes, bytes. */
#define SWV_QUERY_PORT_EX_ETH_MAX_MTU		(1u << 21)
/** speed_mbps: the link's rate in Mbit/s (not rounded to IB rates). */
#define SWV_QUERY_PORT_EX_SPEED_MBPS		(1u << 22)
/** Every bit swv_query_port_ex() knows. */
#define SWV_QUERY_PORT_EX_MASK			((1u << 23) - 1)

/** What swv_query_port_ex() fills, the fields comp_mask selects. */
struct swv_port_attr_ex {
	struct ibv_port_attr std;	/**< the standard fields */
	uint32_t eth_mtu;		/**< SWV_QUERY_PORT_EX_ETH_MTU */
	uint32_t eth_max_mtu;		/**< SWV_QUERY_PORT_EX_ETH_MAX_MTU */
	uint32_t speed_mbps;		/**< SWV_QUERY_PORT_EX_SPEED_MBPS */
	uint32_t comp_mask;		/**< in: the fields wanted */
};

/**
 * Query port 1 for the fields @attr->comp_mask selects. The standard
 * fields are all filled whatever the mask (a mask of standard bits only, 0
 * included, is swv_query_port() into @attr->std); the others only when
 * their bit is set (zero otherwise). comp_mask is left as given. max_mtu and active_mtu
 * are IB MTUs derived from the wire's largest and current Ethernet MTU, as
 * mlx5 derives them from its netdev's; eth_mtu and eth_max_mtu give those
 * in bytes; speed_mbps the rate the wire reports (ethtool on af_packet and
 * af_xdp: a veth says 10000; 100000 on the in-memory wires).
 *
 * Return: 0; EINVAL (@context or @attr NULL, @port_num not 1, a bit outside
 * SWV_QUERY_PORT_EX_MASK); ENOSYS (a field the wire cannot give: the speed
 * of an interface whose driver reports none, e.g. a dummy or tun).
 */
int swv_query_port_ex(struct ibv_context *context, uint8_t port_num,
		      struct swv_port_attr_ex *attr);

/**
 * Set the port's link administratively up or down, as `ip link set dev X
 * up|down` on a NIC's netdev. af_packet and af_xdp: the interface's IFF_UP
 * (SIOCSIFFLAGS), so a veth peer loses carrier too. loop and pair: the
 * cable end is unplugged: both ends go down (the peer raises
 * IBV_EVENT_PORT_ERR) until it is plugged back. Frames sent meanwhile are
 * dropped and counted (tx_link_down). The port's own link event follows on
 * its next link check. shm: EOPNOTSUPP.
 *
 * Return: 0, EINVAL (@context NULL), EOPNOTSUPP (the wire has no such
 * control), EPERM (needs CAP_NET_ADMIN), ENODEV (the interface is gone).
 */
int swv_set_port_link(struct ibv_context *context, bool up);

/**
 * The interface whose netdev a device of the mlx5-vf profile plays
 * (SWV_DEVICE_PROFILE_VF): its name into ifname[len]. A driver tells it
 * the addresses the VF must receive, as it tells a ConnectX VF's netdev.
 * Return: 0, ENOTSUP (not the mlx5-vf profile), EINVAL (@len too small).
 */
int swv_query_port_vf_netdev(struct ibv_context *context, char *ifname,
			     size_t len);

/**
 * The port's MAC address. Return: 0, EINVAL.
 */
int swv_query_port_mac(struct ibv_context *context, uint8_t mac[6]);

/** Port counters of a device, all since device creation. */
struct swv_port_counters {
	uint64_t rx_frames;	  /**< frames the wire delivered to the port */
	uint64_t rx_bytes;	  /**< bytes of those frames */
	uint64_t rx_delivered;	  /**< frames completed into a posted buffer */
	uint64_t rx_out_of_buffer; /**< matched, but no WQE posted (or CQ full) */
	uint64_t rx_no_match;	  /**< matched no flow rule */
	uint64_t rx_errors;	  /**< completed with an error status, or runts */
	uint64_t tx_frames;	  /**< frames handed to the wire */
	uint64_t tx_bytes;	  /**< bytes of those frames */
	uint64_t tx_errors;	  /**< send WQEs completed with an error */
	uint64_t rx_dropped;	  /**< matched a rule with ACTION_DROP */
	uint64_t rx_runts;	  /**< shorter than the wire's minimum frame */
	/**
	 * Of tx_frames: sent while the link was down (a pair or shm cable
	 * with one end), so dropped by the wire.
	 */
	uint64_t tx_link_down;
	uint64_t tx_link_down_bytes; /**< bytes of those frames */
	/**
	 * Frames the wire dropped before the port saw them, so not in
	 * rx_frames: af_packet's and af_xdp's kernel rings full (the port not
	 * polled fast enough). 0 on the in-memory wires, which hold a frame
	 * back instead.
	 */
	uint64_t rx_wire_dropped;
	/**
	 * Frames the wire received but could not hand over, not in
	 * rx_frames either: truncated, longer than the largest frame, GSO
	 * super-frames (af_packet).
	 */
	uint64_t rx_wire_errors;
	/**
	 * Longer than the port's MTU allows: more than MTU + 18 bytes (an
	 * Ethernet header and one VLAN tag, no FCS), as a ConnectX drops
	 * them. Also in rx_errors.
	 */
	uint64_t rx_mtu_dropped;
	/**
	 * Of tx_frames: longer than the link's MTU allows (more than MTU +
	 * 14 bytes, or MTU + 18 with a VLAN tag), so dropped by the port,
	 * as a ConnectX drops them and counts them in tx_errors_phy. Their
	 * WQEs complete successfully and the QP stays in RTS: a NIC's port
	 * drops a frame after its send queue has taken it. Kernel wires
	 * (af_packet, af_xdp), which follow the interface's MTU, and shm,
	 * whose slots hold a frame of its largest MTU.
	 */
	uint64_t tx_mtu_dropped;
	uint64_t tx_mtu_dropped_bytes; /**< bytes of those frames */
	/**
	 * Times the wire took the link down because its medium broke, as a
	 * NIC counts a cable that fails: a shm cable whose file was cut
	 * short (truncated: a SIGBUS caught), whose header was wiped, or
	 * whose ring indexes made no sense (a head more than a ring ahead
	 * or moved back, a tail past the head). The link comes back up by
	 * itself once both ends plug in again. 0 on the other wires.
	 */
	uint64_t wire_faults;
	/**
	 * The mlx5-vf profile: frames whose destination the vport did not
	 * register (SWV_DEVICE_PROFILE_VF), dropped before the port saw
	 * them, as a VF's eswitch never forwards them: not in rx_frames.
	 */
	uint64_t rx_vport_dropped;
};
/*
 * Invariant: rx_frames == rx_delivered + rx_out_of_buffer + rx_no_match +
 * rx_errors + rx_dropped. Copies made for SNIFFER rules are not counted.
 * Runts (below 60 bytes on a kernel wire, below an Ethernet header on an
 * in-memory one) are dropped before steering, as a NIC drops them, and
 * counted both in rx_runts and in rx_errors; so are frames above the MTU
 * (rx_mtu_dropped and rx_errors).
 */

/**
 * Read the port counters. Values never decrease; reads from any thread see
 * whole (untorn) values. rx_wire_dropped asks the wire (a system call on
 * the kernel wires) under a lock of the device's own, never the library's.
 * Return: 0, EINVAL.
 */
/** Where a device's rule lookups were answered (swv_query_cls_stats()). */
struct swv_cls_stats {
	uint64_t emc_hits;	/**< by the exact-match cache */
	uint64_t smc_hits;	/**< by the signature-match cache */
	uint64_t walks;		/**< by the subtables (caches off or missed) */
};

/**
 * Read the device's rule lookup tallies (for tests and tuning: whether the
 * flow caches answer). Any thread. Return: 0, EINVAL.
 */
int swv_query_cls_stats(struct ibv_context *context,
			struct swv_cls_stats *st);

int swv_query_port_counters(struct ibv_context *context,
			    struct swv_port_counters *counters);

/**
 * Like ibv_get_async_event(): blocks on context->async_fd unless it was made
 * non-blocking, then fails with EAGAIN. Events: IBV_EVENT_PORT_ACTIVE and
 * IBV_EVENT_PORT_ERR when the port state changes. Return: 0 or -1 (errno).
 */
int swv_get_async_event(struct ibv_context *context,
			struct ibv_async_event *event);
/** Like ibv_ack_async_event(). */
void swv_ack_async_event(struct ibv_async_event *event);

/*
 * Objects. Each behaves like the libibverbs call of the same name.
 */

struct ibv_pd *swv_alloc_pd(struct ibv_context *context);
/** Return: 0, EBUSY (MRs, QPs or WQs still use the PD). */
int swv_dealloc_pd(struct ibv_pd *pd);

/**
 * Register [addr, addr + length). lkey and rkey are unique and never 0.
 * A send or receive SGE is valid when its lkey names a live MR of the same PD
 * and [addr, addr + length) lies inside that MR; otherwise the WQE completes
 * with IBV_WC_LOC_PROT_ERR and no byte outside the MR is read or written.
 * Receive buffers also need IBV_ACCESS_LOCAL_WRITE.
 * NULL + errno: EINVAL (length 0, unknown access bits), ENOMEM.
 */
struct ibv_mr *swv_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			  int access);
int swv_dereg_mr(struct ibv_mr *mr);

struct ibv_cq *swv_create_cq(struct ibv_context *context, int cqe,
			     void *cq_context,
			     struct ibv_comp_channel *channel,
			     int comp_vector);
/**
 * Extended CQ. wc_flags may hold IBV_WC_STANDARD_FLAGS (of which
 * IBV_WC_EX_WITH_IMM, _SRC_QP, _SLID, _SL and _DLID_PATH_BITS read 0: an
 * Ethernet completion of a RAW_PACKET QP has none, as on mlx5),
 * IBV_WC_EX_WITH_FLOW_TAG, IBV_WC_EX_WITH_CVLAN,
 * IBV_WC_EX_WITH_COMPLETION_TIMESTAMP; others (TM_INFO, the wall clock)
 * give EOPNOTSUPP.
 *
 * A CQ created with IBV_WC_EX_WITH_CVLAN or
 * IBV_WC_EX_WITH_COMPLETION_TIMESTAMP has 32-byte CQEs; any other has
 * 16-byte ones, with no room for the receive offloads: only on the first
 * kind does ibv_wc_read_wc_flags() say IBV_WC_IP_CSUM_OK and
 * ibv_wc_read_cvlan() give a stripped tag. IBV_WC_IP_CSUM_OK is what a
 * ConnectX sets: an IPv4 frame (not a fragment) whose header checksum and
 * TCP or UDP checksum are right (a UDP checksum of 0: none, right). Its
 * absence says "bad, or not checked": IPv6, other protocols, fragments,
 * 16-byte CQEs, and every completion of a WQ on the mlx5 profile (the
 * mlx5 provider reports it for a QP's receive queue only); a QP's receive
 * queue, and a WQ on the full profile, report it.
 */
struct ibv_cq_ex *swv_create_cq_ex(struct ibv_context *context,
				   struct ibv_cq_init_attr_ex *attr);
/**
 * Return: 0, EBUSY (a QP or WQ still uses the CQ, or events of its channel
 * were read with swv_get_cq_event() and not acknowledged: where libibverbs
 * waits for the acknowledgement, swverbs refuses). Events not read yet are
 * dropped.
 */
int swv_destroy_cq(struct ibv_cq *cq);

/*
 * Completion events, as ibv_create_comp_channel(3), ibv_req_notify_cq(3),
 * ibv_get_cq_event(3). A CQ created with a channel (swv_create_cq(),
 * swv_create_cq_ex()'s attr->channel) raises one event per arm. A CQ of a
 * device served inline (progress=inline) cannot have a channel
 * (EOPNOTSUPP): nothing runs the device while its user sleeps.
 */
/**
 * A channel; its fd is readable while an event waits and blocking unless
 * made O_NONBLOCK by the user. NULL + errno: EINVAL, ENOMEM, EMFILE.
 */
struct ibv_comp_channel *swv_create_comp_channel(struct ibv_context *context);
/** Return: 0, EINVAL, EBUSY (CQs still use the channel). */
int swv_destroy_comp_channel(struct ibv_comp_channel *channel);
/**
 * Arm cq for one event: the next CQE (solicited_only 0) or the next CQE in
 * error (solicited_only non-zero; raw Ethernet frames are never
 * solicited). As on a ConnectX, a CQE already in the CQ and not polled
 * raises the event at once. Also reached through ibv_req_notify_cq().
 * Return: 0, EINVAL (no channel).
 */
int swv_req_notify_cq(struct ibv_cq *cq, int solicited_only);
/**
 * Wait for the next event of channel (or EAGAIN on a non-blocking fd):
 * *cq and *cq_context are the CQ it is for. Return: 0 or -1 (errno).
 */
int swv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq,
		     void **cq_context);
/** Acknowledge nevents events of cq read with swv_get_cq_event(). */
void swv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents);

/**
 * What the CQ's consumer may know of it without polling: *pending, the
 * CQEs the device made visible and the consumer did not poll yet; *head,
 * the word the device writes when it makes CQEs visible (a power monitor
 * waits on it; NULL for a device served inline: nothing writes it while
 * its user sleeps) and *tail, the value at *head that means "nothing
 * new". Only the thread polling the CQ may call it.
 * Return: 0, EINVAL.
 */
int swv_cq_peek(struct ibv_cq_ex *cq, uint32_t *pending,
		const volatile uint32_t **head, uint32_t *tail);

/**
 * RAW_PACKET QPs only (others: EOPNOTSUPP). Created in IBV_QPS_RESET.
 * sq_sig_all = 0 gives selective signalling: only WQEs posted with
 * IBV_SEND_SIGNALED complete with a CQE on success; errors always do.
 */
struct ibv_qp *swv_create_qp(struct ibv_pd *pd,
			     struct ibv_qp_init_attr *attr);
/**
 * As swv_create_qp(), plus the hash (RSS) QP: comp_mask with
 * IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
 * IBV_QP_INIT_ATTR_RX_HASH. A hash QP has no send queue and no receive queue
 * of its own: it is a steering target that spreads matching frames over the
 * WQs of its indirection table by the Toeplitz hash of rx_hash_conf (key
 * and IBV_RX_HASH_* fields; no field selected: always entry 0). It is usable
 * at once, in no state machine.
 * The mlx5 profile takes what an mlx5 TIR takes: a 40-byte key always; no
 * field only with a 1-entry table; IPv4 or IPv6 fields, not both; at most
 * one of TCP ports, UDP ports (EINVAL), and ports only with an IP family
 * (EINVAL, a swverbs choice); IBV_RX_HASH_INNER, IPSEC_SPI: EOPNOTSUPP.
 */
struct ibv_qp *swv_create_qp_ex(struct ibv_context *context,
				struct ibv_qp_init_attr_ex *attr);
/**
 * RESET -> INIT (IBV_QP_STATE | IBV_QP_PORT) -> RTR -> RTS; any state ->
 * RESET or ERR. Other transitions, or attr_mask bits the transition does not
 * allow, give EINVAL. Moving to RESET discards outstanding WQEs.
 * The mlx5 profile follows the kernel's RAW_PACKET table: also RESET ->
 * RESET, INIT -> INIT and RTS -> RTS; not RESET -> ERR nor IBV_QP_CUR_STATE
 * (EINVAL); a hash QP cannot be modified or queried (EOPNOTSUPP).
 * IBV_QP_RATE_LIMIT (both profiles) goes with RTR -> RTS and RTS -> RTS
 * only: attr->rate_limit as swv_modify_qp_rate_limit()'s, with the default
 * burst and typical packet size (EINVAL outside the caps or with another
 * transition). Moving to RESET removes the QP's rate limit.
 */
int swv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);

/**
 * Like ibv_modify_qp_rate_limit(): pace the sends of a RAW_PACKET QP in
 * RTS. attr->rate_limit in kbit/s within packet_pacing_caps
 * [qp_rate_limit_min, qp_rate_limit_max], or 0 to remove the limit;
 * max_burst_sz the token bucket's depth in bytes, 0: the default (1 ms at
 * the rate, at least two typical_pkt_sz); typical_pkt_sz the frame size
 * the pacer wakes for (a QP that must wait sleeps until the bucket holds
 * max(next frame, typical_pkt_sz), at most the depth), 0: the port MTU.
 * What counts is the frame as the peer receives it (Ethernet header to
 * the end of the payload: no FCS, preamble or gap). A frame that does not
 * conform waits in the send queue, in order; none is dropped for pacing.
 * A new limit on a running QP applies from its next frame on.
 * The mlx5 profile's rate table: each distinct (rate_limit, max_burst_sz,
 * typical_pkt_sz), as given, takes one of the device's 127 entries, shared
 * by every QP that sets an equal limit and free again when none holds it
 * (a limit removed, a QP reset or destroyed). The new limit takes its
 * entry before the QP lets go of its old one, as mlx5.
 * Return: 0; EINVAL: attr->comp_mask not 0, rate outside the caps,
 * max_burst_sz or typical_pkt_sz with rate 0 (as mlx5) or on a device
 * with SWV_DEVICE_PACE_NO_BURST, typical_pkt_sz above SWV_MAX_FRAME, a
 * hash QP, a QP not in RTS; ENOSPC: the mlx5 profile's rate table has no
 * entry for a new limit; ENOMEM.
 */
int swv_modify_qp_rate_limit(struct ibv_qp *qp,
			     struct ibv_qp_rate_limit_attr *attr);

/** A QP's pacing, as swv_qp_pace_stats() reads it. */
struct swv_qp_pace_stats {
	uint32_t rate_limit;	/**< kbit/s, 0: no limit */
	uint32_t max_burst_sz;	/**< bucket depth in force, bytes */
	uint32_t typical_pkt_sz; /**< in force, bytes */
	uint64_t frames;	/**< frames the pacer let go */
	uint64_t bytes;		/**< their bytes */
	uint64_t waits;		/**< times the QP waited on the wheel */
	/**
	 * Time, in ns, the QP's bucket was full and overflowed (the rate
	 * left unused: the QP idle, or the pacer late by more than the
	 * bucket's depth). Over a stretch with frames always posted, the
	 * bytes let go are at least rate * (time - full_ns) - depth - one
	 * frame.
	 */
	uint64_t full_ns;
	uint64_t late_max_ns;	/**< worst release after its due time */
};

/**
 * *held: the send WQEs posted to the raw QP that the device has not given
 * back yet (sent, or completed in error, flushed included). The poster's
 * call: a QP in ERR with *held 0 has flushed every WQE it was given, and
 * their completions are in the CQ (a RESET then removes those not yet
 * polled, as it does any CQE of the QP: poll first). A NIC
 * shows no such count; vbr waits a fixed time there.
 * Return: 0, EINVAL (a hash QP).
 */
int swv_qp_sq_held(struct ibv_qp *qp, uint32_t *held);

/**
 * Read a QP's pacing counters (cumulative over its life; a reset keeps
 * them). Return: 0; EINVAL (NULL, a hash QP).
 */
int swv_qp_pace_stats(struct ibv_qp *qp, struct swv_qp_pace_stats *st);
int swv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		 struct ibv_qp_init_attr *init_attr);
/** Return: 0, EBUSY (flows still attached). */
int swv_destroy_qp(struct ibv_qp *qp);

/**
 * IBV_WQT_RQ only. Created in IBV_WQS_RESET; ready after modify to RDY.
 * create_flags (comp_mask IBV_WQ_INIT_ATTR_FLAGS) may hold
 * IBV_WQ_FLAGS_CVLAN_STRIPPING: the first 802.1Q tag of a received frame
 * is taken off as the frame is written to the buffer, its TCI goes to the
 * CQE (ibv_wc_read_cvlan()); steering has matched the tag already. Other
 * flags: EOPNOTSUPP.
 */
struct ibv_wq *swv_create_wq(struct ibv_context *context,
			     struct ibv_wq_init_attr *attr);
/**
 * attr_mask IBV_WQ_ATTR_STATE, IBV_WQ_ATTR_CURR_STATE, IBV_WQ_ATTR_FLAGS
 * (flags_mask IBV_WQ_FLAGS_CVLAN_STRIPPING, in any state; the next frame
 * sees it). Return: 0, EINVAL (unknown bits, a bad state move),
 * EOPNOTSUPP (another flag).
 */
int swv_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *attr);
/** Return: 0, EBUSY (an indirection table still holds it). */
int swv_destroy_wq(struct ibv_wq *wq);

/** log_ind_tbl_size up to the device's limit; all WQs of one context. */
struct ibv_rwq_ind_table *
swv_create_rwq_ind_table(struct ibv_context *context,
			 struct ibv_rwq_ind_table_init_attr *attr);
/** Return: 0, EBUSY (a QP still uses it). */
int swv_destroy_rwq_ind_table(struct ibv_rwq_ind_table *table);

/**
 * Attach a steering rule to a QP (a RAW_PACKET QP with its own receive queue,
 * or a hash QP), as ibv_create_flow(3) says. Types IBV_FLOW_ATTR_NORMAL,
 * IBV_FLOW_ATTR_ALL_DEFAULT, IBV_FLOW_ATTR_MC_DEFAULT (and SNIFFER on the
 * full profile). Lower priority values win; among rules of one priority,
 * the first created wins (on mlx5 the winner among overlapping rules of one
 * priority is unspecified: do not rely on it). On the mlx5 profile the
 * rules of doc/guides/swverbs.rst "Device profiles" apply: priority 0-15
 * (ENOMEM above), at most 10 specs, mlx5's masks and errnos, VLAN masks
 * meaning tagged frames, multicast-only rules after priority 15, leftovers
 * rules ignoring their specs, EEXIST for an equal match and priority with
 * another action. A frame that
 * matches no rule of the port is dropped and counted (rx_no_match).
 * IBV_FLOW_SPEC_ACTION_COUNT binds a counters object (see Counters below)
 * until the flow is destroyed.
 * NULL + errno: EINVAL (bad attr, spec size or type; COUNT with NULL
 * counters or counters of another device), ENOTSUP (spec type the device
 * does not support), ENOMEM; on the mlx5 profile also EEXIST and the
 * errnos of the profile table.
 */
struct ibv_flow *swv_create_flow(struct ibv_qp *qp,
				 struct ibv_flow_attr *flow_attr);
int swv_destroy_flow(struct ibv_flow *flow);

/*
 * Counters (ibv_create_counters(3), ibv_attach_counters_point_flow(3),
 * ibv_read_counters(3)).
 *
 * A counters object holds values at indices 0 .. SWV_MAX_COUNTERS - 1. Each
 * index is the sum of the counter descriptions attached at it
 * (IBV_COUNTER_PACKETS, IBV_COUNTER_BYTES; the same description attached
 * twice counts twice). Values are 0 at creation and only grow. They grow
 * while the object is bound to flows, by IBV_FLOW_SPEC_ACTION_COUNT in
 * swv_create_flow(): every frame a bound flow matches adds 1 to PACKETS and
 * its length to BYTES, whatever happens to it next (delivered, dropped by
 * IBV_FLOW_SPEC_ACTION_DROP, or lost for lack of a receive WQE). The length
 * is that of the frame as on the wire without FCS, the byte_len of its
 * completion (Ethernet header included, CRC excluded). Flows bound to one
 * object add to it together. Objects belong to a context; a flow can bind
 * only an object of its own device.
 */

/** Indices of a counters object: 0 .. SWV_MAX_COUNTERS - 1. */
#define SWV_MAX_COUNTERS 64

/**
 * Like ibv_create_counters(): a counters object with no counter point
 * attached, all values 0.
 * NULL + errno: EINVAL (context or init_attr NULL, comp_mask not 0), ENOMEM.
 */
struct ibv_counters *swv_create_counters(struct ibv_context *context,
					 struct ibv_counters_init_attr *init_attr);

/**
 * Like ibv_destroy_counters(). The man page asks that the object be detached
 * first: while a flow binds it, this fails with EBUSY (as the kernel does for
 * any object in use) and the object stays usable; destroy the flows first.
 * Return: 0, EINVAL (counters NULL), EBUSY (bound to a flow).
 */
int swv_destroy_counters(struct ibv_counters *counters);

/**
 * Like ibv_attach_counters_point_flow(), static mode only: @flow must be
 * NULL, and the point counts once the object is bound by
 * swv_create_flow(). A point attached after the object already counted
 * starts from 0 for the frames seen since, so attaching never changes a
 * value. Attach is refused while the object is bound to a flow; it is
 * allowed again once every flow binding it is destroyed.
 * Return: 0, or
 *   EINVAL   counters or attr NULL, attr->comp_mask not 0, attr->index not
 *            below SWV_MAX_COUNTERS;
 *   ENOTSUP  @flow not NULL (dynamic attach to an existing flow is not
 *            supported, as on mlx5), or counter_desc other than
 *            IBV_COUNTER_PACKETS and IBV_COUNTER_BYTES;
 *   EBUSY    the object is bound to a flow;
 *   ENOMEM.
 */
int swv_attach_counters_point_flow(struct ibv_counters *counters,
				   struct ibv_counter_attach_attr *attr,
				   struct ibv_flow *flow);

/**
 * Like ibv_read_counters(): the values of indices 0 .. ncounters - 1 into
 * counters_value; an index with no counter point reads 0. The values of one
 * call are of one instant: all indices reflect the same set of frames (so
 * with packets at one index and bytes at another, bytes is exactly the sum
 * of the lengths of those packets). Never torn, never smaller than a
 * previous read. May be called from any thread while the engine counts:
 * it takes the object's own spinlock (shared with attach and flow
 * create/destroy, never with the engine) and reads each bound flow's tally
 * through a sequence count, so the engine never waits for a reader.
 * flags: 0 or IBV_READ_COUNTERS_ATTR_PREFER_CACHED; both read the live
 * values (a software device has no slower "hardware access" to avoid).
 * On the mlx5 profile, as on mlx5, a read of an object no live flow binds
 * (none yet, or all destroyed) and one with ncounters below the highest
 * attached index + 1 fail with EINVAL; the full profile answers both.
 * Return: 0, EINVAL (counters NULL, unknown flags, counters_value NULL with
 * ncounters > 0; mlx5 profile: unbound, ncounters too small).
 */
int swv_read_counters(struct ibv_counters *counters, uint64_t *counters_value,
		      uint32_t ncounters, uint32_t flags);

/*
 * Engines. An engine does the devices' work (wire Rx, steering, scatter,
 * send queue drain, completions, link checks) for the devices assigned to
 * it. Every device is served by exactly one engine: the process-wide
 * default engine (swv_engine_default()), unless it was created on another
 * one with swv_device_create_attr() or moved with swv_device_set_engine().
 * The default engine runs its own thread while it has devices. Another
 * engine runs either its own thread, from swv_engine_start(), or the passes
 * its user drives with swv_engine_run_once() (a DPDK service, a poll
 * loop), one thread at a time. Control calls (create, destroy, start, stop,
 * set_engine) may come from any thread, serialized with the other control
 * calls of swverbs.
 */
struct swv_engine;

/** The process-wide default engine (never destroyed). */
struct swv_engine *swv_engine_default(void);

/**
 * The inline engine (never destroyed): a device created on it (or moved
 * to it) has no thread serving it; its work runs inside the verbs calls
 * made on it. ibv_post_send() drains the device's send queues to the wire;
 * a poll (ibv_start_poll(), ibv_poll_cq()) of one of its CQs that finds it
 * empty pulls from the wire, drains the sends left posted, raises link
 * events when due, then looks again. Any thread may make these calls, on
 * different queues at once: the device's work has one owner at a time,
 * taken without waiting; a call that finds it taken hands its work to the
 * owner. Each calling thread becomes a liburcu-qsbr reader, online only
 * inside a call (see progress.c). Both ends of a pair cable must be inline
 * (EXDEV otherwise). It cannot be started, stopped, destroyed or run with
 * swv_engine_run_once() (EINVAL).
 */
struct swv_engine *swv_engine_inline(void);

/**
 * A new engine, serving no device, with no thread.
 * NULL + errno: ENOMEM.
 */
struct swv_engine *swv_engine_create(void);

/**
 * Destroy an engine (stopping its thread, if it runs one). Devices must be
 * destroyed or moved first.
 * Return: 0, EINVAL (NULL or the default engine), EBUSY (devices are still
 * assigned to it; it stays usable).
 */
int swv_engine_destroy(struct swv_engine *eng);

/**
 * Start a thread that runs the engine until swv_engine_stop() or
 * swv_engine_destroy(), pinned to @cpu (-1: not pinned). It busy-polls
 * while it finds work and sleeps when idle.
 * Return: 0, EINVAL (NULL, the default engine, no such CPU), EBUSY (a
 * thread runs it already), or pthread_create()'s error.
 */
int swv_engine_start(struct swv_engine *eng, int cpu);

/**
 * Stop the engine's thread; the engine is then driven by run_once again.
 * Return: 0, EINVAL (NULL or the default engine), ENOENT (no thread).
 */
int swv_engine_stop(struct swv_engine *eng);

/**
 * One pass of work for every device of an engine without a thread: wire
 * Rx, send queue drains, completions, link checks. It never blocks nor
 * sleeps; its system calls are those a wire needs (e.g. an af_packet Tx
 * kick) and liburcu's wake-up of a grace period that waits for the caller.
 * Nothing moves on the engine's devices between calls.
 * RCU: swverbs frees what its engines may read after an RCU grace period
 * (liburcu-qsbr), and the calling thread is a reader while it runs a pass.
 * The call registers the calling thread with liburcu-qsbr on its first
 * call (unregistered when the thread exits), puts it online for the pass
 * and offline after it, so that nothing waits for the caller between
 * calls. A thread that is already an online liburcu-qsbr reader of its own
 * stays online: it must report its quiescent states (rcu_quiescent_state())
 * between calls, and not call swverbs control functions while online.
 * Return: 1 (it did work: frames, WQEs, completions), 0 (nothing to do),
 * -1 + errno: EINVAL (NULL or the default engine), EBUSY (its thread or
 * another caller runs it now).
 */
int swv_engine_run_once(struct swv_engine *eng);

/** What an engine did, for tests and monitoring. */
struct swv_engine_stats {
	uint64_t passes;	/**< passes over its devices */
	uint64_t work_passes;	/**< passes that found work */
	uint64_t bell_wakes;	/**< deep sleeps of its thread a post ended */
	uint64_t deep_sleeps;	/**< sleeps of its thread until a doorbell */
	uint64_t fd_wakes;	/**< deep sleeps a wire's wakeup ended */
	uint32_t asleep;	/**< its thread sleeps until a doorbell now */
	uint32_t ndev;		/**< devices assigned */
	uint32_t thread;	/**< it runs a thread */
	uint32_t pad;		/**< 0 */
	/* its devices' rules and counters objects (the engine's own pool) */
	uint64_t pool_mapped;	/**< bytes of pool memory mapped */
	uint64_t pool_live;	/**< objects allocated, not yet freed */
	uint64_t retired;	/**< objects waiting for a grace period */
	/**
	 * Sleeps of its thread until the next departure of a paced QP
	 * (doorbell armed; counted in deep_sleeps too).
	 */
	uint64_t pace_sleeps;
	/**
	 * How late its thread's sleeps end (ns, the largest oversleep of
	 * the last second or two): a sleep until a paced departure ends
	 * that much before it, and the rest is spun.
	 */
	uint64_t pace_late_ns;
};

/** Read an engine's statistics. Return: 0, EINVAL. */
int swv_engine_get_stats(const struct swv_engine *eng,
			 struct swv_engine_stats *stats);

/**
 * The earliest departure due of a paced QP that waits on the devices of
 * @eng (CLOCK_MONOTONIC, ns), for an application that drives an engine
 * without a thread (swv_engine_run_once(), the inline engine's verbs
 * calls) and naps between its calls: a nap past it delays the departure
 * by as much, and a delay longer than the QP's bucket lasts loses rate.
 * Any thread, any time (it takes each device's wheel lock briefly).
 * Return: 0 and *due (UINT64_MAX: no QP waits), or EINVAL (NULL).
 */
int swv_engine_next_departure(struct swv_engine *eng, uint64_t *due);

/**
 * swv_engine_next_departure()'s *due, and *latest: the earliest time the
 * bucket of a paced QP that waits is full (ns; UINT64_MAX: no QP waits).
 * Called again by then, the engine loses no QP any rate: what came due
 * meanwhile goes at once, within the bucket (at most max_burst_sz beyond
 * the rate). An application that naps between its calls may so nap to
 * *latest, less its own wake-up lateness, and pay one wake-up a batch
 * instead of one a frame; a nap to *due keeps each departure on time.
 * Any thread, any time. Return: 0, or EINVAL (NULL).
 */
int swv_engine_pace_window(struct swv_engine *eng, uint64_t *due,
			   uint64_t *latest);

/**
 * swv_engine_pace_window() for the one device of @context, as its user
 * needs it: a device served inline (swv_engine_inline()) releases its
 * paced departures in its user's verbs calls, so *due and *latest are its
 * wheel's; any other device's engine has a thread, or a runner that asks
 * swv_engine_pace_window() itself, and needs no call of its user: both
 * UINT64_MAX. Any thread while the context is open (it takes the wheel's
 * lock for a scan of its slots: not on the datapath of every frame). A
 * call that polls a CQ of the device (one with CQEs in it too) releases
 * what came due. Return: 0, or EINVAL (NULL).
 */
int swv_device_pace_window(struct ibv_context *context, uint64_t *due,
			   uint64_t *latest);

/** Creation attributes of a device. */
struct swv_device_attr {
	unsigned int flags;		/**< as swv_device_create_flags() */
	struct swv_engine *engine;	/**< NULL: the default engine */
};

/**
 * swv_device_create_flags() with attributes: the device is served by
 * attr->engine from its creation on.
 * The two ends of a pair cable hand frames to each other on one thread:
 * they must be served by the same engine.
 * Return: as swv_device_create_flags(); EINVAL also for attr NULL; EXDEV
 * (the other end of the pair cable is served by another engine).
 */
int swv_device_create_attr(const char *name, const char *wire,
			   const uint8_t *mac,
			   const struct swv_device_attr *attr);

/**
 * Move a device to another engine (NULL: the default one). Only while no
 * context is open on the device.
 * Return: 0, ENOENT (no such device), EBUSY (a context is open), EXDEV
 * (the other end of its pair cable is served by another engine), or an
 * error starting the default engine's thread.
 */
int swv_device_set_engine(const char *name, struct swv_engine *eng);

/*
 * Burst datapath calls: what a poll-mode driver does with the verbs.h
 * inline calls, in one call per burst and with one-SGE entries only. Each
 * keeps the semantics of the calls it stands for (ibv_start_poll() and its
 * loop, ibv_post_wq_recv(), ibv_post_send()), the inline engine's work
 * included; like them, they take no lock and make no system call of their
 * own.
 */

/**
 * Poll up to @n completions of a CQ into arrays, as an ibv_start_poll(),
 * ibv_next_poll() ... ibv_end_poll() loop would: every completion returned
 * is consumed, error completions included, with their status. @flow_tag
 * NULL: tags not read; else the flow tag of each (0: none). A CQ of the
 * inline engine that is found empty first pulls from the wire, as
 * ibv_start_poll() does, then looks again.
 * Return: the completions written (0: none), each entry i < return with
 * wr_id[i], status[i] (enum ibv_wc_status) and byte_len[i].
 */
unsigned int swv_poll_cq_burst(struct ibv_cq_ex *cq, unsigned int n,
			       uint64_t *wr_id, uint32_t *byte_len,
			       uint8_t *status, uint32_t *flow_tag);

/**
 * swv_poll_cq_burst(), and for each completion what
 * ibv_wc_read_wc_flags() (@wc_flags, the low 8 bits),
 * ibv_wc_read_cvlan() (@cvlan) and ibv_wc_read_completion_ts() (@ts)
 * would say; each of the three NULL: not read. A CQ of 16-byte CQEs
 * gives 0 for them.
 * Return: as swv_poll_cq_burst().
 */
unsigned int swv_poll_cq_burst_ol(struct ibv_cq_ex *cq, unsigned int n,
				  uint64_t *wr_id, uint32_t *byte_len,
				  uint8_t *status, uint32_t *flow_tag,
				  uint8_t *wc_flags, uint16_t *cvlan,
				  uint64_t *ts);

/**
 * Like ibv_query_rt_values_ex(): comp_mask IBV_VALUES_MASK_RAW_CLOCK
 * gives the device clock now in raw_clock.tv_nsec (tv_sec 0), in the
 * units of completion timestamps (hca_core_clock kHz).
 * verbs.h's ibv_query_rt_values_ex() reaches it on a swverbs context.
 * Return: 0, EINVAL (NULL, unknown comp_mask bits).
 */
int swv_query_rt_values_ex(struct ibv_context *context,
			   struct ibv_values_ex *values);

/**
 * Post @n receives of one SGE each (sge[i], wr_id[i]) to a receive WQ, in
 * order, and publish them at once.
 * Return: the receives posted; fewer than @n when the ring is full (errno
 * ENOMEM).
 */
unsigned int swv_post_wq_recv_burst(struct ibv_wq *wq, unsigned int n,
				    const uint64_t *wr_id,
				    const struct ibv_sge *sge);

/** Bits of swv_post_send_burst()'s signaled[i]. */
#define SWV_SEND_BURST_SIGNALED 1u	/**< as IBV_SEND_SIGNALED */
#define SWV_SEND_BURST_IP_CSUM 2u	/**< as IBV_SEND_IP_CSUM */

/**
 * Post @n sends of one SGE each (sge[i], wr_id[i]; signaled[i] the
 * SWV_SEND_BURST_* flags of each) to a RAW_PACKET QP, in order, and publish
 * them at once;
 * on the inline engine the device's send queues then go to the wire, as
 * after ibv_post_send().
 * Return: the sends posted; 0 with errno EINVAL when the QP does not take
 * posts (as ibv_post_send() refuses its first WR): not in RTS, or, on the
 * full profile, in ERR (the mlx5 profile takes posts in ERR, as mlx5 does,
 * and the device flushes them: IBV_WC_WR_FLUSH_ERR); on the mlx5 profile
 * the sends before the first of fewer than 18 bytes with errno EINVAL (a
 * ConnectX's inline L2 header); fewer than @n with errno ENOMEM when the
 * ring is full.
 */
unsigned int swv_post_send_burst(struct ibv_qp *qp, unsigned int n,
				 const uint64_t *wr_id,
				 const struct ibv_sge *sge,
				 const uint8_t *signaled);

/**
 * Pin the default engine's thread to a CPU (-1: no pinning, the default);
 * at once if it runs, else when it starts.
 * Return: 0, EINVAL (no such CPU).
 */
int swv_set_engine_cpu(int cpu);

/*
 * QP counters (stat.c), with the semantics of the kernel's RDMA counters
 * (drivers/infiniband/core/counters.c) that iproute2's "rdma statistic qp"
 * drives. A counter (cntn) holds the counts of the QPs bound to it (lqpn,
 * the qp_num) while they were bound: a QP's counts from before its bind do
 * not show, and a QP unbound keeps what it counted in the counter. The last
 * unbind frees the counter. Counters are per device (one port, port 1).
 * Per port mode: none (no counter), manual (counters made by bind), auto
 * (each new QP is bound, at its RESET -> INIT, to the counter of QPs of its
 * type and/or pid, one made for it if none matches). Control path, any
 * thread; the counts are read whole (relaxed loads of engine-written
 * values).
 *
 * The mlx5 profile answers as a ConnectX under the kernel does
 * (doc/guides/swverbs.rst "QP counters"): set auto mode, bind and unbind
 * need CAP_NET_ADMIN in the calling thread's effective set (EPERM before
 * any other check); a RAW_PACKET QP is found only with CAP_NET_RAW
 * (ENOENT without it); hash QPs have qp_num 0 and are never found
 * (ENOENT); a QP binds only in RESET (EINVAL in any other state: the
 * firmware's refusal, inferred); counters read 0 for tx_frames, tx_bytes
 * and tx_errors. The full profile checks no capability, finds hash QPs by
 * their nonzero numbers, binds in any state and counts sends.
 */

/** Counter modes (the values of the kernel's enum rdma_nl_counter_mode). */
#define SWV_COUNTER_MODE_NONE	0
#define SWV_COUNTER_MODE_AUTO	1
#define SWV_COUNTER_MODE_MANUAL	2

/** Auto mode criteria (the kernel's enum rdma_nl_counter_mask). */
#define SWV_COUNTER_MASK_QP_TYPE	(1u << 0)
#define SWV_COUNTER_MASK_PID		(1u << 1)
#define SWV_COUNTER_MASK_ALL \
	(SWV_COUNTER_MASK_QP_TYPE | SWV_COUNTER_MASK_PID)

/**
 * What a QP counts. Rx: a frame steered to a hash QP counts on that QP
 * (not on the WQ its hash picked); one steered to a RAW_PACKET QP's own
 * receive queue on that QP; SNIFFER copies count on the QP that took them.
 * Tx: the RAW_PACKET QP that sent.
 */
struct swv_qp_stats {
	uint64_t rx_frames;	   /**< completed into a posted buffer */
	uint64_t rx_bytes;	   /**< bytes of those frames */
	uint64_t rx_out_of_buffer; /**< no WQE posted (or CQ full): dropped */
	uint64_t rx_errors;	   /**< completed with an error status */
	uint64_t tx_frames;	   /**< handed to the wire */
	uint64_t tx_bytes;	   /**< bytes of those frames */
	uint64_t tx_errors;	   /**< send WQEs completed with an error */
};

/** A counter as swv_counter_query() reports it. */
struct swv_counter_attr {
	uint32_t cntn;
	uint32_t mode;		/**< SWV_COUNTER_MODE_AUTO or _MANUAL */
	uint32_t mask;		/**< auto: the criteria it was made under */
	enum ibv_qp_type qp_type; /**< of the QP it was made for */
	int pid;		/**< thread id that created that QP */
	char comm[16];		/**< that thread's name */
	uint32_t nqps;		/**< QPs bound now */
	struct swv_qp_stats stats; /**< the counts */
};

/**
 * Turn auto mode on with criteria @mask (SWV_COUNTER_MASK_*), or off (@mask
 * 0: the mode becomes manual while counters exist, else none). Setting the
 * mode it has is a success.
 * Return: 0; EPERM (mlx5 profile, no CAP_NET_ADMIN); EINVAL (@context NULL,
 * unknown bits in @mask); EBUSY (turning
 * auto mode on, or changing its criteria, while counters exist: the kernel's
 * "Modifying auto mode is not allowed when there is a bound QP").
 */
int swv_counter_set_auto_mode(struct ibv_context *context, uint32_t mask);

/** The port's mode and auto criteria. Return: 0, EINVAL. */
int swv_counter_get_mode(struct ibv_context *context, uint32_t *mode,
			 uint32_t *mask);

/**
 * Make a counter and bind QP @lqpn to it; its number in *@cntn. The mode
 * becomes manual.
 * Return: 0; EPERM (mlx5 profile, no CAP_NET_ADMIN); EINVAL (@context or
 * @cntn NULL, auto mode on, the QP already bound; mlx5 profile: the QP not
 * in RESET); ENOENT (no QP @lqpn on the device; mlx5 profile: @lqpn 0, a
 * RAW_PACKET QP without CAP_NET_RAW); ENOMEM.
 */
int swv_counter_bind_qp_alloc(struct ibv_context *context, uint32_t lqpn,
			      uint32_t *cntn);

/**
 * Bind QP @lqpn to existing counter @cntn.
 * Return: 0; EPERM, EINVAL, ENOENT as swv_counter_bind_qp_alloc(); ENOENT
 * also for no counter @cntn.
 */
int swv_counter_bind_qp(struct ibv_context *context, uint32_t lqpn,
			uint32_t cntn);

/**
 * Unbind QP @lqpn from counter @cntn; the counter keeps the QP's counts;
 * the last QP's unbind frees the counter (and, in manual mode, with the
 * last counter the mode becomes none).
 * Return: 0; EPERM (mlx5 profile, no CAP_NET_ADMIN); ENOENT (no QP @lqpn,
 * as swv_counter_bind_qp_alloc() finds them); EINVAL (the QP not bound to
 * @cntn, or the mode not manual: auto mode's bindings are undone by turning
 * it off first).
 */
int swv_counter_unbind_qp(struct ibv_context *context, uint32_t lqpn,
			  uint32_t cntn);

/**
 * The device's counter numbers, ascending, into cntn[0 .. max - 1].
 * Return: how many counters there are (may exceed @max), or -1 (errno
 * EINVAL).
 */
int swv_counter_list(struct ibv_context *context, uint32_t *cntn,
		     unsigned int max);

/**
 * Counter @cntn: its attributes in *@attr, the numbers of its QPs
 * ascending in lqpn[0 .. max - 1].
 * Return: the number of QPs bound (may exceed @max), or -1 with errno
 * EINVAL or ENOENT (no counter @cntn).
 */
int swv_counter_query(struct ibv_context *context, uint32_t cntn,
		      struct swv_counter_attr *attr, uint32_t *lqpn,
		      unsigned int max);

/**
 * A QP's own counts since its creation, its counter in *@cntn (0: not
 * bound), its creator's thread id in *@pid. Return: 0, EINVAL.
 */
int swv_query_qp_stats(struct ibv_qp *qp, struct swv_qp_stats *stats,
		       uint32_t *cntn, int *pid);

/** An MR as "rdma statistic show mr" sees it (swv_query_mr_stats()). */
struct swv_mr_stats {
	uint32_t mrn;		/**< its number: the lkey's table slot */
	uint32_t lkey;
	uint64_t length;	/**< bytes */
	uint64_t pages;		/**< 4 KiB pages the range touches */
	int access;		/**< IBV_ACCESS_* it was registered with */
	/**
	 * Work requests that named its lkey and were refused: an SGE out of
	 * its range, or a receive into an MR without local write.
	 */
	uint64_t access_errors;
};

/**
 * The MRs of @context's device, by ascending mrn, into st[0 .. max - 1].
 * Return: how many there are (may exceed @max), or -1 (errno EINVAL).
 */
int swv_query_mr_stats(struct ibv_context *context, struct swv_mr_stats *st,
		       unsigned int max);

#ifdef __cplusplus
}
#endif

#endif /* SWVERBS_H */
