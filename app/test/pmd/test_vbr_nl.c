/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The RDMA netlink parsing of vbr_nl.c without an RDMA device: messages
 * built with libmnl in the kernel's layout (nldev.c res_get_common_dumpit()
 * and fill_res_counter_entry(), as iproute2's rdma/stat.c reads them) are
 * fed to the STAT_GET dump's callback. A message: DEV_INDEX, DEV_NAME,
 * STAT_COUNTER { STAT_COUNTER_ENTRY { PORT_INDEX, STAT_COUNTER_ID,
 * STAT_MODE, [RES_TYPE], [RES_PID | RES_KERN_NAME], RES_QP { RES_QP_ENTRY
 * { RES_LQPN } ... }, STAT_HWCOUNTERS { STAT_HWCOUNTER_ENTRY { NAME,
 * VALUE } ... } } ... }. vbr_nl.c is compiled in, for its static callbacks.
 */

#include "vbr_nl.c"

#include "test.h"

static char buf[16384];

/* A STAT_GET dump message of device 3, "mlx5_0", STAT_COUNTER open. */
static struct nlmsghdr *
msg_start(struct nlattr **nest)
{
	struct nlmsghdr *nlh;

	memset(buf, 0, sizeof(buf));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = NL_TYPE(RDMA_NLDEV_CMD_STAT_GET);
	nlh->nlmsg_flags = NLM_F_MULTI;
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 3);
	mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_0");
	*nest = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_STAT_COUNTER);
	return nlh;
}

/*
 * One counter entry: mode, the criteria's values (qp_type < 0: none; pid
 * 0: none, < 0: a kernel task's name), its QPs, two hardware counters.
 */
static void
msg_counter(struct nlmsghdr *nlh, uint32_t cntn, uint32_t mode, int qp_type,
	    int pid, const uint32_t *qpn, unsigned int nqp, uint64_t v)
{
	struct nlattr *e, *qps, *q, *hw, *h;
	unsigned int i;

	e = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_STAT_COUNTER_ENTRY);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_STAT_COUNTER_ID, cntn);
	mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_STAT_MODE, mode);
	if (qp_type >= 0)
		mnl_attr_put_u8(nlh, RDMA_NLDEV_ATTR_RES_TYPE,
				(uint8_t)qp_type);
	if (pid > 0)
		mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_PID, (uint32_t)pid);
	else if (pid < 0)
		mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_RES_KERN_NAME, "kthr");
	qps = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_RES_QP);
	for (i = 0; i < nqp; i++) {
		q = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_RES_QP_ENTRY);
		mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_RES_LQPN, qpn[i]);
		mnl_attr_nest_end(nlh, q);
	}
	mnl_attr_nest_end(nlh, qps);
	hw = mnl_attr_nest_start(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
	for (i = 0; i < 2; i++) {
		h = mnl_attr_nest_start(nlh,
					RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
		mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME,
				  i == 0 ? "rx_write_requests" :
					   "out_of_sequence");
		mnl_attr_put_u64(nlh,
				 RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE,
				 v + i);
		mnl_attr_nest_end(nlh, h);
	}
	mnl_attr_nest_end(nlh, hw);
	mnl_attr_nest_end(nlh, e);
}

/* Several counters a message, in two messages; each entry's fields. */
static int
test_counter_dump(void)
{
	static const uint32_t q1[] = { 0x107, 0x108 }, q2[] = { 0x10a };
	struct vbr_glue_qp_counter c[8];
	struct list_get l = { .c = c, .max = 8, .n = 0 };
	struct nlmsghdr *nlh;
	struct nlattr *nest;

	nlh = msg_start(&nest);
	/* auto, by QP type (IB_QPT_RAW_PACKET is 8) */
	msg_counter(nlh, 4, RDMA_COUNTER_MODE_AUTO, 8, 0, q1, 2, 100);
	/* auto, by QP type and task */
	msg_counter(nlh, 5, RDMA_COUNTER_MODE_AUTO, 8, 4242, q2, 1, 200);
	mnl_attr_nest_end(nlh, nest);
	TEST_ASSERT_EQUAL(list_cb(nlh, &l), MNL_CB_OK, "");
	TEST_ASSERT_EQUAL(l.n, 2u, "counters of the first message");
	nlh = msg_start(&nest);
	/* manual (bound with a pid, as fill_res_name_pid() has it) */
	msg_counter(nlh, 6, RDMA_COUNTER_MODE_MANUAL, -1, 4243, q2, 1, 300);
	/* auto, by task only, a kernel one */
	msg_counter(nlh, 7, RDMA_COUNTER_MODE_AUTO, -1, -1, NULL, 0, 400);
	mnl_attr_nest_end(nlh, nest);
	TEST_ASSERT_EQUAL(list_cb(nlh, &l), MNL_CB_OK, "");
	TEST_ASSERT_EQUAL(l.n, 4u, "counters of both messages");

	TEST_ASSERT_EQUAL(c[0].cntn, 4u, "");
	TEST_ASSERT_EQUAL(c[0].mode, VBR_GLUE_COUNTER_MODE_AUTO, "");
	TEST_ASSERT_EQUAL(c[0].mask, VBR_GLUE_COUNTER_MASK_QP_TYPE, "mask");
	TEST_ASSERT_EQUAL(c[0].qp_type, 8u, "");
	TEST_ASSERT_EQUAL(c[0].pid, -1, "");
	TEST_ASSERT_EQUAL(c[0].nqps, 2u, "");
	TEST_ASSERT(c[0].lqpn[0] == 0x107 && c[0].lqpn[1] == 0x108, "qpns");
	TEST_ASSERT_EQUAL(c[0].nvals, 2u, "");
	TEST_ASSERT(strcmp(c[0].val[0].name, "rx_write_requests") == 0 &&
		    c[0].val[0].value == 100 && c[0].val[1].value == 101,
		    "hw counters");

	TEST_ASSERT_EQUAL(c[1].cntn, 5u, "");
	TEST_ASSERT_EQUAL(c[1].mask, VBR_GLUE_COUNTER_MASK_QP_TYPE |
		       VBR_GLUE_COUNTER_MASK_PID, "mask %#x", c[1].mask);
	TEST_ASSERT_EQUAL(c[1].pid, 4242, "");
	TEST_ASSERT(c[1].nqps == 1 && c[1].lqpn[0] == 0x10a, "");
	TEST_ASSERT_EQUAL(c[1].val[0].value, 200u, "");

	TEST_ASSERT_EQUAL(c[2].cntn, 6u, "");
	TEST_ASSERT_EQUAL(c[2].mode, VBR_GLUE_COUNTER_MODE_MANUAL, "");
	TEST_ASSERT_EQUAL(c[2].mask, 0u, "manual: no mask");
	TEST_ASSERT_EQUAL(c[2].pid, 4243, "");

	TEST_ASSERT_EQUAL(c[3].cntn, 7u, "");
	TEST_ASSERT_EQUAL(c[3].mask, VBR_GLUE_COUNTER_MASK_PID, "");
	TEST_ASSERT(strcmp(c[3].comm, "kthr") == 0, "kernel task name");
	TEST_ASSERT_EQUAL(c[3].nqps, 0u, "");
	TEST_ASSERT_EQUAL(c[3].val[1].value, 401u, "");
	return TEST_SUCCESS;
}

/* More counters than room: all counted, the first ones filled. */
static int
test_counter_dump_max(void)
{
	struct vbr_glue_qp_counter c[2];
	struct list_get l = { .c = c, .max = 2, .n = 0 };
	struct nlmsghdr *nlh;
	struct nlattr *nest;
	uint32_t i;

	nlh = msg_start(&nest);
	for (i = 0; i < 3; i++)
		msg_counter(nlh, 10 + i, RDMA_COUNTER_MODE_MANUAL, -1, 0,
			    NULL, 0, i);
	mnl_attr_nest_end(nlh, nest);
	TEST_ASSERT_EQUAL(list_cb(nlh, &l), MNL_CB_OK, "");
	TEST_ASSERT_EQUAL(l.n, 3u, "");
	TEST_ASSERT(c[0].cntn == 10 && c[1].cntn == 11, "");
	/* A message without counters (a device with none) adds none. */
	nlh = msg_start(&nest);
	mnl_attr_nest_end(nlh, nest);
	TEST_ASSERT_EQUAL(list_cb(nlh, &l), MNL_CB_OK, "");
	TEST_ASSERT_EQUAL(l.n, 3u, "");
	return TEST_SUCCESS;
}

static const struct unit_test_suite suite = {
	.name = "vbr netlink",
	.cases = {
		TEST_CASE(test_counter_dump),
		TEST_CASE(test_counter_dump_max),
		TEST_CASES_END(),
	},
};

int
main(void)
{
	return unit_test_suite_runner(&suite);
}
