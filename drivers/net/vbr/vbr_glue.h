/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The verbs call table. The driver reaches the control-path verbs calls only
 * through one of these tables, with the real <infiniband/verbs.h> types:
 *
 *   - ibverbs: the system's libibverbs, for real RDMA NICs. vbr_glue.c is
 *     built into a separate object, librte_net_vbr_glue_ibv.so, that links
 *     libibverbs; the PMD dlopen()s libibverbs.so.1 and that object at probe
 *     time only, so the PMD loads and runs on swverbs when rdma-core is
 *     absent.
 *   - swverbs: lib/swverbs, linked into the PMD.
 *
 * Every entry keeps the libibverbs convention of its call (creators: NULL and
 * errno; others: positive errno). Datapath calls are not in the table: they
 * are the verbs.h inline functions (ibv_post_send, ibv_post_wq_recv,
 * ibv_start_poll, ...), which reach the provider through the objects' own
 * function pointers on both backends, and which reference no libibverbs
 * symbol.
 */

#ifndef VBR_GLUE_H
#define VBR_GLUE_H

#include <stdint.h>
#include <infiniband/verbs.h>

/** Symbol that the ibverbs glue object exports its table under. */
#define VBR_GLUE_IBV_SYMBOL "vbr_glue_ibv"
/** File name of the ibverbs glue object. */
#define VBR_GLUE_IBV_LIB "librte_net_vbr_glue_ibv.so"

/** Hardware-independent port counters (see swv_port_counters). */
struct vbr_glue_port_counters {
	uint64_t out_of_buffer;	/**< frames dropped for lack of a posted WQE */
	uint64_t no_match;	/**< frames that matched no steering rule */
	uint64_t rx_errors;	/**< frames completed with an error */
	uint64_t dropped;	/**< frames dropped by a DROP rule */
	uint64_t runts;		/**< frames below the wire's minimum size */
};

struct vbr_glue {
	const char *name;	/**< "ibverbs" or "swverbs" */
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
};

/* vbr_glue_sw.c */
extern const struct vbr_glue vbr_glue_swverbs;
/**
 * Load the ibverbs table. Return: the table, or NULL with *why set to a
 * sentence a user can act on (libibverbs.so.1 missing, glue object missing).
 */
const struct vbr_glue *vbr_glue_ibverbs_load(const char **why);

#endif /* VBR_GLUE_H */
