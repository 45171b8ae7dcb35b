/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The verbs_context behind a swverbs ibv_context.
 *
 * verbs.h's inline calls (ibv_create_flow, ibv_query_port, ibv_create_wq,
 * ibv_read_counters, ...) find a provider's entry points in the struct
 * verbs_context that ends with the ibv_context: they check abi_compat, then
 * that sz covers the member, then that the member is set. A swverbs context
 * is one, with every entry point swverbs has, so a program that holds a
 * swverbs context can use those calls as with any provider. Members left
 * NULL make the inline call fail with EOPNOTSUPP (or fall back, for
 * ibv_query_device_ex, to the exported call), as for a provider that lacks
 * them.
 *
 * What verbs.h reaches only through libibverbs' exported functions
 * (ibv_alloc_pd, ibv_reg_mr, ibv_create_cq, ibv_modify_qp, ibv_destroy_qp,
 * and ibv_create_qp_ex with comp_mask IBV_QP_INIT_ATTR_PD alone, which
 * verbs.h turns into ibv_create_qp) goes through a table private to
 * libibverbs that only a provider it loaded has: for those, call swv_*.
 */

#include <errno.h>
#include <string.h>

#include "swv_priv.h"

/* verbs_context.query_port: fill at most port_attr_len bytes. */
static int
vctx_query_port(struct ibv_context *context, uint8_t port_num,
		struct ibv_port_attr *port_attr, size_t port_attr_len)
{
	struct ibv_port_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	ret = swv_query_port(context, port_num, &a);
	if (ret != 0)
		return ret;
	memset(port_attr, 0, port_attr_len);
	memcpy(port_attr, &a, port_attr_len < sizeof(a) ? port_attr_len :
	       sizeof(a));
	return 0;
}

/* verbs_context.query_device_ex: fill at most attr_size bytes. */
int
swv_vctx_query_device_ex(struct ibv_context *context,
		     const struct ibv_query_device_ex_input *input,
		     struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex a;
	int ret;

	if (attr_size < sizeof(attr->orig_attr))
		return EINVAL;
	memset(&a, 0, sizeof(a));
	ret = swv_query_device_ex(context, input, &a);
	if (ret != 0)
		return ret;
	memset(attr, 0, attr_size);
	memcpy(attr, &a, attr_size < sizeof(a) ? attr_size : sizeof(a));
	return 0;
}

void
swv_vctx_init(struct verbs_context *v)
{
	struct ibv_context *c = &v->context;

	c->abi_compat = __VERBS_ABI_IS_EXTENDED;
	v->sz = sizeof(*v);
	c->ops.post_send = swv_post_send;
	c->ops.post_recv = swv_post_recv;
	c->ops.poll_cq = swv_poll_cq;
	c->ops.req_notify_cq = swv_req_notify_cq;
	v->query_port = vctx_query_port;
	v->query_device_ex = swv_vctx_query_device_ex;
	v->create_cq_ex = swv_create_cq_ex;
	v->create_qp_ex = swv_create_qp_ex;
	v->create_wq = swv_create_wq;
	v->modify_wq = swv_modify_wq;
	v->destroy_wq = swv_destroy_wq;
	v->create_rwq_ind_table = swv_create_rwq_ind_table;
	v->destroy_rwq_ind_table = swv_destroy_rwq_ind_table;
	v->ibv_create_flow = swv_create_flow;
	v->ibv_destroy_flow = swv_destroy_flow;
	v->create_counters = swv_create_counters;
	v->destroy_counters = swv_destroy_counters;
	v->attach_counters_point_flow = swv_attach_counters_point_flow;
	v->read_counters = swv_read_counters;
	v->modify_qp_rate_limit = swv_modify_qp_rate_limit;
	v->query_rt_values = swv_query_rt_values_ex;
}
