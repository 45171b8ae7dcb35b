/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The verbs call table. The driver reaches the control-path verbs calls only
 * through one of these tables, with the real <infiniband/verbs.h> types:
 *
 *   - ibverbs: the system's libibverbs, for real RDMA NICs. vbr_glue.c is
 *     built into a separate object, librte_net_vbr_glue.so.<version>, that
 *     links libibverbs; the PMD dlopen()s libibverbs.so.1 and that object at
 *     probe time only, so the PMD loads and runs on swverbs when rdma-core
 *     is absent.
 *   - swverbs: lib/swverbs, linked into the PMD.
 *
 * Every entry keeps the libibverbs convention of its call (creators: NULL and
 * errno; others: positive errno). The port_* entries are the backend's
 * device lifecycle: they create (swverbs) or find (ibverbs) the device a
 * port's devargs name and open it, bind a re-created wire, set the MTU, and
 * close; the PMD never asks which backend it has. The datapath has three
 * burst entries (poll_cq_burst, post_wq_recv_burst, post_send_burst: one
 * call per burst, one-SGE entries in arrays); the other datapath calls are
 * the verbs.h inline functions (ibv_post_send, ibv_post_wq_recv,
 * ibv_start_poll, ...), which reach the provider through the objects' own
 * function pointers on both backends, and which reference no libibverbs
 * symbol.
 */

#ifndef VBR_GLUE_H
#define VBR_GLUE_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

/*
 * Version of the table. The PMD and the ibverbs glue object are built
 * together; one of another build may have another table layout, so the
 * loader refuses a glue whose version string is not the PMD's (as DPDK's
 * mlx4 checks its glue's). The build passes "<project version>-<hash of
 * this header>", so any change to the table or its structs changes it.
 */
#ifndef VBR_GLUE_VERSION
#define VBR_GLUE_VERSION "unversioned"
#endif

/** Symbol that the ibverbs glue object exports its table under. */
#define VBR_GLUE_IBV_SYMBOL "vbr_glue_ibv"
/**
 * File name of the ibverbs glue object: the build passes
 * librte_net_vbr_glue.so.<project version>, the file and SONAME of the
 * glue it builds; the unversioned link name otherwise.
 */
#ifndef VBR_GLUE_IBV_LIB
#define VBR_GLUE_IBV_LIB "librte_net_vbr_glue.so"
#endif

/** Hardware-independent port counters (see swv_port_counters). */
struct vbr_glue_port_counters {
	uint64_t out_of_buffer;	/**< frames dropped for lack of a posted WQE */
	uint64_t no_match;	/**< frames that matched no steering rule */
	uint64_t rx_errors;	/**< frames completed with an error */
	uint64_t dropped;	/**< frames dropped by a DROP rule */
	uint64_t runts;		/**< frames below the wire's minimum size */
	uint64_t tx_link_down;	/**< frames sent while the link was down */
	uint64_t tx_link_down_bytes; /**< bytes of those frames */
	uint64_t wire_dropped;	/**< the wire's ring full before the device */
	uint64_t wire_errors;	/**< frames the wire could not hand over */
	uint32_t valid;		/**< VBR_GLUE_CNT_* the device counts */
	uint64_t mtu_dropped;	/**< received frames above the MTU */
	/* The identity's other terms (VBR_GLUE_CNT_WIRE_TOTALS). */
	uint64_t rx_frames;	/**< frames the wire delivered to the port */
	uint64_t rx_bytes;	/**< bytes of those frames */
	uint64_t rx_delivered;	/**< frames completed into a posted buffer */
	uint64_t tx_frames;	/**< frames handed to the wire */
	uint64_t tx_bytes;	/**< bytes of those frames */
	uint64_t tx_errors;	/**< send WQEs completed with an error */
	uint64_t tx_mtu_dropped; /**< sent frames above the link's MTU */
	uint64_t tx_mtu_dropped_bytes; /**< bytes of those frames */
	uint64_t wire_faults;	/**< the cable itself broke (link down) */
	/** Frames a VF's vport did not register (swverbs' mlx5-vf). */
	uint64_t vport_dropped;
};

/* Bits of vbr_glue_port_counters.valid. */
#define VBR_GLUE_CNT_OUT_OF_BUFFER	(1u << 0)
#define VBR_GLUE_CNT_NO_MATCH		(1u << 1)
#define VBR_GLUE_CNT_RX_ERRORS		(1u << 2)
#define VBR_GLUE_CNT_DROPPED		(1u << 3)
#define VBR_GLUE_CNT_RUNTS		(1u << 4)
#define VBR_GLUE_CNT_TX_LINK_DOWN	(1u << 5)
#define VBR_GLUE_CNT_WIRE_DROPPED	(1u << 6)
#define VBR_GLUE_CNT_MTU_DROPPED	(1u << 7)
#define VBR_GLUE_CNT_WIRE_TOTALS	(1u << 8)
#define VBR_GLUE_CNT_TX_MTU_DROPPED	(1u << 9)
#define VBR_GLUE_CNT_WIRE_FAULTS	(1u << 10)
#define VBR_GLUE_CNT_VPORT_DROPPED	(1u << 11)

/*
 * QP counters (rdma statistic qp): the kernel's counter modes and auto
 * criteria (enum rdma_nl_counter_mode / _mask, which swverbs' equal).
 */
#define VBR_GLUE_COUNTER_MODE_NONE	0
#define VBR_GLUE_COUNTER_MODE_AUTO	1
#define VBR_GLUE_COUNTER_MODE_MANUAL	2
#define VBR_GLUE_COUNTER_MASK_QP_TYPE	(1u << 0)
#define VBR_GLUE_COUNTER_MASK_PID	(1u << 1)

/** Most values a QP counter reports (mlx5 has about 30). */
#define VBR_GLUE_QP_CNT_MAX 48
/** Most QPs of a counter that counter_query lists. */
#define VBR_GLUE_QP_CNT_QPS 64

/** A counter's value, by the device's name for it. */
struct vbr_glue_val {
	char name[32];
	uint64_t value;
};

/** Most values an MR reports. */
#define VBR_GLUE_MR_VALS 8

/** An MR as "rdma statistic show mr" sees it. */
struct vbr_glue_mr {
	uint32_t mrn;
	uint32_t nvals;
	struct vbr_glue_val val[VBR_GLUE_MR_VALS];
};

/** What a QP's pacer let go, over the QP's life (qp_pace_stats). */
struct vbr_glue_qp_pace {
	uint64_t bytes;		/**< bytes of the frames it let go */
	uint64_t full_ns;	/**< time its bucket sat full (rate unused) */
};

/** A QP counter: who it is for, and its values by name. */
struct vbr_glue_qp_counter {
	uint32_t cntn;
	uint32_t mode;		/**< VBR_GLUE_COUNTER_MODE_* */
	uint32_t mask;		/**< auto: criteria it was made under */
	uint32_t qp_type;	/**< enum ibv_qp_type of its QP of origin */
	int32_t pid;		/**< of that QP's creator; -1: unknown */
	char comm[16];		/**< that task's name; "" unknown */
	uint32_t nqps;		/**< QPs bound (lqpn[] holds the first ones) */
	uint32_t lqpn[VBR_GLUE_QP_CNT_QPS];
	uint32_t nvals;
	struct vbr_glue_val val[VBR_GLUE_QP_CNT_MAX];
};

/*
 * query_port_ex (seed 002; rdma-core has no such call): comp_mask selects
 * fields. The first 20 bits are the fields of struct ibv_port_attr in their
 * order (IBV_QUERY_PORT_EX_STATE ... _LINK_LAYER in the seed); the others
 * are fields the standard query has no room for.
 */
#define VBR_GLUE_PORT_EX_STATE		(1u << 0)
#define VBR_GLUE_PORT_EX_ACTIVE_WIDTH	(1u << 16)
#define VBR_GLUE_PORT_EX_ACTIVE_SPEED	(1u << 17)
/** The standard fields: ibv_query_port() gives them. */
#define VBR_GLUE_PORT_EX_STD_MASK	((1u << 20) - 1)
#define VBR_GLUE_PORT_EX_ETH_MTU	(1u << 20) /**< eth_mtu */
#define VBR_GLUE_PORT_EX_ETH_MAX_MTU	(1u << 21) /**< eth_max_mtu */
#define VBR_GLUE_PORT_EX_SPEED_MBPS	(1u << 22) /**< speed_mbps */
/** Every bit query_port_ex() knows. */
#define VBR_GLUE_PORT_EX_MASK		((1u << 23) - 1)

/** What query_port_ex() fills. */
struct vbr_glue_port_attr_ex {
	struct ibv_port_attr std;	/**< the standard fields */
	uint32_t eth_mtu;		/**< Ethernet MTU, bytes */
	uint32_t eth_max_mtu;		/**< largest Ethernet MTU, bytes */
	uint32_t speed_mbps;		/**< link rate, Mbit/s */
	uint32_t comp_mask;		/**< in: the fields wanted */
};

/** One devarg of a port, as given. */
struct vbr_glue_arg {
	const char *key;	/**< name */
	const char *value;	/**< value, never empty */
};

/** What a port asks of its backend (vbr.c fills it from the devargs). */
struct vbr_glue_port_conf {
	const char *port;		/**< port (vdev) name */
	const char *target;		/**< value of the backend's key */
	const uint8_t *mac;		/**< mac=, or NULL */
	const struct vbr_glue_arg *args; /**< backend devargs given */
	unsigned int nb_args;		/**< entries of args */
};

/** A port's device, as port_open() leaves it. */
struct vbr_glue_port {
	struct ibv_context *ctx;	/**< open context */
	char ibdev_name[64];		/**< verbs device name */
	uint32_t max_frame;		/**< largest frame, no FCS, bytes */
	/**
	 * A verbs VLAN match takes tags of any TPID (swverbs' full profile),
	 * not 802.1Q C-tags only (a ConnectX, mlx5's cvlan_tag): creating a
	 * rule does not tell, so the glue says.
	 */
	bool vlan_any_tpid;
	/** The port's network interface, "" if none (a wire= port). */
	char netdev[16];
	char netdev_how[112];	/**< how it was chosen, for the log */
};

/* port_vport() requests. */
#define VBR_GLUE_VPORT_QUERY	0	/**< is there a netdev to tell? */
#define VBR_GLUE_VPORT_MAC_ADD	1	/**< mac[] on its address list */
#define VBR_GLUE_VPORT_MAC_DEL	2	/**< mac[] off it */
#define VBR_GLUE_VPORT_PROMISC	3	/**< IFF_PROMISC to *on */
#define VBR_GLUE_VPORT_ALLMULTI	4	/**< IFF_ALLMULTI to *on */
/* The flags VBR_GLUE_VPORT_QUERY gives in *on. */
#define VBR_GLUE_VPORT_F_PROMISC	(1 << 0)
#define VBR_GLUE_VPORT_F_ALLMULTI	(1 << 1)

/** What cq_peek() tells. */
struct vbr_glue_cq_peek {
	uint32_t pending;		/**< CQEs there, not polled yet */
	/** The 32-bit word a new CQE changes, or NULL (none to watch). */
	const volatile uint32_t *watch;
	uint32_t idle;			/**< its value while nothing is new */
};

struct vbr_glue {
	const char *version;	/**< VBR_GLUE_VERSION; stays first */
	const char *name;	/**< "ibverbs" or "swverbs" */
	/*
	 * Device lifecycle. Each returns 0 or a positive errno, with a
	 * sentence a user can act on in why[len] (without the port name).
	 */
	/** Create or find the device conf names and open it. */
	int (*port_open)(const struct vbr_glue_port_conf *conf,
			 struct vbr_glue_port *port, char *why, size_t len);
	/** Close the context; destroy what port_open() created. */
	int (*port_close)(struct ibv_context *context, char *why, size_t len);
	/**
	 * Port start: make sure what runs the port's device runs (swverbs
	 * progress=service: its DPDK service is mapped to a running service
	 * lcore), and bind a wire that went away (its interface deleted and
	 * created again) anew; 0 when there is nothing to do.
	 */
	int (*port_rebind)(struct ibv_context *context, char *why, size_t len);
	/** Set the port's MTU (bytes above the Ethernet header). */
	int (*port_set_mtu)(struct ibv_context *context, uint32_t mtu,
			    char *why, size_t len);
	/**
	 * Drop received frames above an MTU other than the wire's (the one
	 * the port reports), leaving the wire's own; 0: the wire's again.
	 * ENOSYS: the device drops at its netdev's MTU only (ibverbs).
	 */
	int (*port_set_rx_mtu)(struct ibv_context *context, uint32_t mtu);
	/* Verbs calls. */
	struct ibv_device **(*get_device_list)(int *num_devices);
	void (*free_device_list)(struct ibv_device **list);
	const char *(*get_device_name)(struct ibv_device *device);
	struct ibv_context *(*open_device)(struct ibv_device *device);
	int (*close_device)(struct ibv_context *context);
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	/** MAC address of port 1 (0 or positive errno). */
	int (*query_port_mac)(struct ibv_context *context, uint8_t mac[6]);
	/** Port drop counters (0 or positive errno; ENOTSUP if unknown). */
	int (*query_port_counters)(struct ibv_context *context,
				   struct vbr_glue_port_counters *counters);
	int (*get_async_event)(struct ibv_context *context,
			       struct ibv_async_event *event);
	void (*ack_async_event)(struct ibv_async_event *event);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	int (*dealloc_pd)(struct ibv_pd *pd);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 int access);
	int (*dereg_mr)(struct ibv_mr *mr);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *attr);
	int (*destroy_cq)(struct ibv_cq *cq);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	/**
	 * ibv_modify_qp_rate_limit(): pace a RAW_PACKET QP in RTS (rate in
	 * kbit/s within packet_pacing_caps, or 0: no limit; max_burst_sz,
	 * typical_pkt_sz 0: the device's defaults). 0 or a positive errno.
	 */
	int (*modify_qp_rate_limit)(struct ibv_qp *qp,
				    struct ibv_qp_rate_limit_attr *attr);
	int (*destroy_qp)(struct ibv_qp *qp);
	struct ibv_wq *(*create_wq)(struct ibv_context *context,
				    struct ibv_wq_init_attr *attr);
	int (*modify_wq)(struct ibv_wq *wq, struct ibv_wq_attr *attr);
	int (*destroy_wq)(struct ibv_wq *wq);
	struct ibv_rwq_ind_table *(*create_rwq_ind_table)(
		struct ibv_context *context,
		struct ibv_rwq_ind_table_init_attr *attr);
	int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table *table);
	struct ibv_flow *(*create_flow)(struct ibv_qp *qp,
					struct ibv_flow_attr *flow_attr);
	int (*destroy_flow)(struct ibv_flow *flow);
	/* Flow counters (ibv_create_counters(3) and the calls it names). */
	struct ibv_counters *(*create_counters)(
		struct ibv_context *context,
		struct ibv_counters_init_attr *init_attr);
	int (*destroy_counters)(struct ibv_counters *counters);
	int (*attach_counters_point_flow)(struct ibv_counters *counters,
					  struct ibv_counter_attach_attr *attr,
					  struct ibv_flow *flow);
	int (*read_counters)(struct ibv_counters *counters,
			     uint64_t *counters_value, uint32_t ncounters,
			     uint32_t flags);
	/*
	 * Datapath bursts. No lock, no system call of their own, no errno
	 * but where said.
	 */
	/**
	 * Poll up to n completions into arrays, as an ibv_start_poll(),
	 * ibv_next_poll() ... ibv_end_poll() loop: each one returned is
	 * consumed, error completions included (status[i] !=
	 * IBV_WC_SUCCESS; byte_len[i] then undefined). flow_tag NULL: tags
	 * not read. Return: the completions written.
	 */
	unsigned int (*poll_cq_burst)(struct ibv_cq_ex *cq, unsigned int n,
				      uint64_t *wr_id, uint32_t *byte_len,
				      uint8_t *status, uint32_t *flow_tag);
	/**
	 * Post n one-SGE receives (wr_id[i], sge[i]) to a WQ, in order.
	 * Return: the receives posted, the first ones; fewer than n only
	 * when the WQ refused the next one.
	 */
	unsigned int (*post_wq_recv_burst)(struct ibv_wq *wq, unsigned int n,
					   const uint64_t *wr_id,
					   const struct ibv_sge *sge);
	/**
	 * Post n one-SGE sends (wr_id[i], sge[i]; signaled[i] the
	 * VBR_GLUE_SEND_* flags of each) to a QP, in order. Return: the
	 * sends posted, the first ones; fewer than n when the QP refused the
	 * next one: not in RTS (ERR included), or the ring full.
	 */
	unsigned int (*post_send_burst)(struct ibv_qp *qp, unsigned int n,
					const uint64_t *wr_id,
					const struct ibv_sge *sge,
					const uint8_t *signaled);
	/*
	 * Port attributes and link control (seed 002).
	 */
	/**
	 * Query the fields attr->comp_mask selects; the standard ones are all
	 * filled. Return: 0; EINVAL (unknown bits, bad port); ENOSYS (a field
	 * the device cannot give); or the standard query's errno.
	 */
	int (*query_port_ex)(struct ibv_context *context, uint8_t port_num,
			     struct vbr_glue_port_attr_ex *attr);
	/**
	 * Take the port's link administratively up or down (its netdev's
	 * IFF_UP; an in-memory cable end). 0 or a positive errno, with a
	 * sentence in why[len].
	 */
	int (*port_set_link)(struct ibv_context *context, int up, char *why,
			     size_t len);
	/*
	 * Offloads (a datapath burst and the device clock).
	 */
	/**
	 * poll_cq_burst(), and per completion the low 8 bits of
	 * ibv_wc_read_wc_flags() (wc_flags: IBV_WC_IP_CSUM_OK),
	 * ibv_wc_read_cvlan() (cvlan; only for a CQ created with
	 * IBV_WC_EX_WITH_CVLAN) and ibv_wc_read_completion_ts() (ts; only
	 * with IBV_WC_EX_WITH_COMPLETION_TIMESTAMP); each NULL: not read.
	 */
	unsigned int (*poll_cq_burst_ol)(struct ibv_cq_ex *cq, unsigned int n,
					 uint64_t *wr_id, uint32_t *byte_len,
					 uint8_t *status, uint32_t *flow_tag,
					 uint8_t *wc_flags, uint16_t *cvlan,
					 uint64_t *ts);
	/** ibv_query_rt_values_ex(): 0 or a positive errno. */
	int (*query_rt_values_ex)(struct ibv_context *context,
				  struct ibv_values_ex *values);
	/*
	 * QP counters (rdma statistic qp) of port @port, with the kernel's
	 * errnos (positive): swverbs' swv_counter_*(); ibverbs: RDMA netlink
	 * RDMA_NLDEV_CMD_STAT_* (vbr_nl.c).
	 */
	/** Auto mode on with criteria @mask, or off (@mask 0). */
	int (*counter_set_auto_mode)(struct ibv_context *context,
				     uint8_t port, uint32_t mask);
	/** The port's mode and auto criteria. */
	int (*counter_get_mode)(struct ibv_context *context, uint8_t port,
				uint32_t *mode, uint32_t *mask);
	/** Bind QP @lqpn to counter *@cntn, or to a new one (*@cntn 0). */
	int (*counter_bind_qp)(struct ibv_context *context, uint8_t port,
			       uint32_t lqpn, uint32_t *cntn);
	/** Unbind QP @lqpn from counter @cntn. */
	int (*counter_unbind_qp)(struct ibv_context *context, uint8_t port,
				 uint32_t lqpn, uint32_t cntn);
	/**
	 * The port's counters, ascending by cntn, into c[0 .. max - 1];
	 * their number in *@n (may exceed @max).
	 */
	int (*counter_list)(struct ibv_context *context, uint8_t port,
			    struct vbr_glue_qp_counter *c, unsigned int max,
			    unsigned int *n);
	/**
	 * The device's MRs (rdma statistic show mr), ascending by mrn, into
	 * m[0 .. max - 1]; their number in *@n (may exceed @max).
	 */
	int (*mr_list)(struct ibv_context *context, struct vbr_glue_mr *m,
		       unsigned int max, unsigned int *n);
	/*
	 * Completion events (ibv_create_comp_channel(3), ibv_get_cq_event(3);
	 * arming is verbs.h's inline ibv_req_notify_cq()).
	 */
	struct ibv_comp_channel *(*create_comp_channel)(
		struct ibv_context *context);
	int (*destroy_comp_channel)(struct ibv_comp_channel *channel);
	int (*get_cq_event)(struct ibv_comp_channel *channel,
			    struct ibv_cq **cq, void **cq_context);
	void (*ack_cq_events)(struct ibv_cq *cq, unsigned int nevents);
	/**
	 * The CQ seen by its poller without polling (struct
	 * vbr_glue_cq_peek). 0, or ENOTSUP: the device does not show its
	 * CQ's indexes (ibverbs without a direct-verbs provider).
	 */
	int (*cq_peek)(struct ibv_cq_ex *cq, struct vbr_glue_cq_peek *peek);
	/**
	 * A paced QP's departures as its pacer counts them (struct
	 * vbr_glue_qp_pace; swverbs' swv_qp_pace_stats()). 0 or a positive
	 * errno. NULL: the device does not show them (ibverbs).
	 */
	int (*qp_pace_stats)(struct ibv_qp *qp, struct vbr_glue_qp_pace *st);
	/**
	 * ibv_query_qp(): the QP's attributes (qp_state: why the device
	 * refused a rate limit). 0 or a positive errno.
	 */
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	/**
	 * *held: the send WQEs the device was given and has not given back
	 * (sent or completed in error); swverbs' swv_qp_sq_held(). 0 or a
	 * positive errno. NULL: the device does not show it (a NIC).
	 */
	int (*sq_held)(struct ibv_qp *qp, uint32_t *held);
	/**
	 * The times (CLOCK_MONOTONIC ns, UINT64_MAX: none) by which the
	 * user's next verbs call on the device is due for its paced send
	 * queues: *due, the earliest departure; *latest, the earliest time a
	 * waiting queue's bucket is full (swverbs' swv_device_pace_window();
	 * both UINT64_MAX unless the device is served inline). 0 or a
	 * positive errno. NULL: the device paces on its own (a NIC).
	 */
	int (*pace_window)(struct ibv_context *context, uint64_t *due,
			   uint64_t *latest);
	/**
	 * The port's function sits behind an eswitch (a ConnectX VF or SF;
	 * swverbs' mlx5-vf profile), whose vport forwards only the frames
	 * its netdev registered: tell the netdev (vbr_netdev.h).
	 * VBR_GLUE_VPORT_QUERY: 0 when the port has such a netdev, with its
	 * MAC in mac[] and its VBR_GLUE_VPORT_F_* flags in *on; ENOTSUP when
	 * not (a PF, a wire without a VF profile: nothing to tell).
	 * _MAC_ADD, _MAC_DEL: mac[] on the netdev's address list or off it
	 * (EEXIST: listed already; ENOENT: not listed).
	 * _PROMISC, _ALLMULTI: the netdev's flag to *on.
	 * 0 or a positive errno, with a sentence in why[len].
	 */
	int (*port_vport)(struct ibv_context *context, int op, uint8_t mac[6],
			  int *on, char *why, size_t len);
};

/* Bits of post_send_burst()'s signaled[i]. */
#define VBR_GLUE_SEND_SIGNALED	1u	/**< IBV_SEND_SIGNALED */
#define VBR_GLUE_SEND_IP_CSUM	2u	/**< IBV_SEND_IP_CSUM */

/**
 * Open the device called name through a table's device list into *ctx.
 * Return 0, or a positive errno with why[len] set.
 */
static inline int
vbr_glue_open_named(const struct vbr_glue *glue, const char *name,
		    struct ibv_context **ctx, char *why, size_t len)
{
	struct ibv_device **list;
	int n = 0, i, ret = 0;

	*ctx = NULL;
	list = glue->get_device_list(&n);
	if (list == NULL) {
		ret = errno != 0 ? errno : ENOMEM;
		snprintf(why, len, "%s: get_device_list: %s", glue->name,
			 strerror(ret));
		return ret;
	}
	for (i = 0; i < n; i++)
		if (strcmp(glue->get_device_name(list[i]), name) == 0)
			break;
	if (i == n) {
		size_t at;

		ret = ENODEV;
		at = (size_t)snprintf(why, len, "%s: no verbs device named %s; ",
				      glue->name, name);
		if (n == 0 && at < len)
			snprintf(why + at, len - at, "there are none");
		for (i = 0; i < n && at < len; i++)
			at += (size_t)snprintf(why + at, len - at, "%s%s",
					       i == 0 ? "there are: " : ", ",
					       glue->get_device_name(list[i]));
	} else {
		*ctx = glue->open_device(list[i]);
		if (*ctx == NULL) {
			ret = errno != 0 ? errno : ENODEV;
			snprintf(why, len, "%s: open_device(%s): %s",
				 glue->name, name, strerror(ret));
		}
	}
	glue->free_device_list(list);
	return ret;
}

/**
 * A backend as the devargs see it: the key that selects it, the other
 * devargs it takes, and how to get its table.
 */
struct vbr_glue_backend {
	const char *key;		/**< "dev" or "wire" */
	const char *usage;		/**< "<key>=<what>", for messages */
	const char * const *args;	/**< its other devargs, NULL-ended */
	/** The table, or NULL with *why set to a sentence. */
	const struct vbr_glue *(*load)(const char **why);
};

/* vbr_glue_sw.c */
/** The backends, ended by a NULL key. */
extern const struct vbr_glue_backend vbr_glue_backends[];
/**
 * Load the ibverbs table. Return: the table, or NULL with *why set to a
 * sentence a user can act on (libibverbs.so.1 missing, glue object missing
 * or of another build).
 */
const struct vbr_glue *vbr_glue_ibverbs_load(const char **why);
/** A swverbs port's progress model by its devargs (thread, service...). */
const char *vbr_glue_sw_progress_name(const char *args);

#endif /* VBR_GLUE_H */
