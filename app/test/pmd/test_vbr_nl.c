/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The RDMA netlink parsing of vbr_nl.c without an RDMA device: messages
 * built with libmnl in the kernel's layout (nldev.c res_get_common_dumpit()
 * and fill_res_counter_entry(), as iproute2's rdma/stat.c reads them) are
 * fed to the STAT_GET dump's callback. A message: DEV_INDEX, DEV_NAME,
 * STAT_COUNTER { STAT_COUNTER_ENTRY { PORT_INDEX, STAT_COUNTER_ID,
 * STAT_MODE, [RES_TYPE], [RES_PID | RES_KERN_NAME], RES_QP { RES_QP_ENTRY
 * { RES_LQPN } ... }, STAT_HWCOUNTERS { STAT_HWCOUNTER_ENTRY { NAME,
 * VALUE } ... } } ... }. vbr_nl.c is compiled in, for its static callbacks,
 * and its requests go to a fake kernel (below).
 */

/*
 * The requests go to a fake kernel instead of a NETLINK_RDMA socket: the
 * libmnl socket calls of vbr_nl.c are this file's (fake_*), which answer
 * as nldev.c does for the requests vbr makes (the checks the kernel makes
 * before it acts, and the errno it gives).
 */
#include <libmnl/libmnl.h>

struct mnl_socket;
static struct mnl_socket *fake_open(int bus);
static int fake_bind(struct mnl_socket *nl, unsigned int groups, pid_t pid);
static unsigned int fake_portid(const struct mnl_socket *nl);
static ssize_t fake_sendto(const struct mnl_socket *nl, const void *req,
			   size_t len);
static ssize_t fake_recvfrom(const struct mnl_socket *nl, void *buf,
			     size_t size);
static int fake_close(struct mnl_socket *nl);
#define mnl_socket_open fake_open
#define mnl_socket_bind fake_bind
#define mnl_socket_get_portid fake_portid
#define mnl_socket_sendto fake_sendto
#define mnl_socket_recvfrom fake_recvfrom
#define mnl_socket_close fake_close

#include "vbr_nl.c"

#include "test.h"

/* The fake kernel's state: one device, "mlx5_0" index 3, port 1. */
static struct {
	bool net_admin;		/* the caller has CAP_NET_ADMIN */
	uint32_t mode, mask;	/* the port's counter mode */
	char reply[8192];
	size_t reply_len;
	int last_cmd;
	bool open;
} k;

static int fake_sock;

static struct mnl_socket *
fake_open(int bus)
{
	if (bus != NETLINK_RDMA) {
		errno = EPROTONOSUPPORT;
		return NULL;
	}
	k.open = true;
	return (struct mnl_socket *)&fake_sock;
}

static int
fake_bind(struct mnl_socket *nl, unsigned int groups, pid_t pid)
{
	(void)nl;
	(void)groups;
	(void)pid;
	return 0;
}

static unsigned int
fake_portid(const struct mnl_socket *nl)
{
	(void)nl;
	return 4321;
}

static int
fake_close(struct mnl_socket *nl)
{
	(void)nl;
	k.open = false;
	return 0;
}

/* A reply message of type @type into k.reply, its header returned. */
static struct nlmsghdr *
reply_put(const struct nlmsghdr *req, uint16_t type, uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(k.reply + k.reply_len);

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = flags;
	nlh->nlmsg_seq = req->nlmsg_seq;
	nlh->nlmsg_pid = 4321;
	return nlh;
}

static void
reply_end(struct nlmsghdr *nlh)
{
	k.reply_len += NLMSG_ALIGN(nlh->nlmsg_len);
}

/* The ack (err 0) or error (-err) that ends a request. */
static void
reply_ack(const struct nlmsghdr *req, int err)
{
	struct nlmsghdr *nlh = reply_put(req, NLMSG_ERROR, 0);
	struct nlmsgerr *e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));

	e->error = -err;
	e->msg = *req;
	reply_end(nlh);
}

static ssize_t
fake_sendto(const struct mnl_socket *nl, const void *buf, size_t len)
{
	const struct nlmsghdr *req = buf;
	const struct nlattr *tb[RDMA_NLDEV_ATTR_MAX];
	struct nlmsghdr *nlh;
	int op = RDMA_NL_GET_OP(req->nlmsg_type);

	(void)nl;
	k.reply_len = 0;
	k.last_cmd = op;
	nl_parse(req, tb);
	if (op == RDMA_NLDEV_CMD_GET) {
		nlh = reply_put(req, req->nlmsg_type, NLM_F_MULTI);
		mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_DEV_INDEX, 3);
		mnl_attr_put_strz(nlh, RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_0");
		reply_end(nlh);
		nlh = reply_put(req, NLMSG_DONE, NLM_F_MULTI);
		reply_end(nlh);
		return (ssize_t)len;
	}
	if (op == RDMA_NLDEV_CMD_STAT_GET) {
		/* stat_get_doit_qp(): mode, device and port, or EINVAL */
		if (tb[RDMA_NLDEV_ATTR_STAT_MODE] == NULL ||
		    tb[RDMA_NLDEV_ATTR_DEV_INDEX] == NULL ||
		    tb[RDMA_NLDEV_ATTR_PORT_INDEX] == NULL) {
			reply_ack(req, EINVAL);
			return (ssize_t)len;
		}
		nlh = reply_put(req, req->nlmsg_type, 0);
		mnl_attr_put_u32(nlh, RDMA_NLDEV_ATTR_STAT_MODE, k.mode);
		if (k.mode == RDMA_COUNTER_MODE_AUTO)
			mnl_attr_put_u32(nlh,
					 RDMA_NLDEV_ATTR_STAT_AUTO_MODE_MASK,
					 k.mask);
		reply_end(nlh);
		reply_ack(req, 0);
		return (ssize_t)len;
	}
	if (op == RDMA_NLDEV_CMD_STAT_SET) {
		/* a changing command: netlink_capable(CAP_NET_ADMIN) */
		if (!k.net_admin) {
			reply_ack(req, EPERM);
			return (ssize_t)len;
		}
		if (tb[RDMA_NLDEV_ATTR_STAT_MODE] != NULL &&
		    mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_STAT_MODE]) ==
		    RDMA_COUNTER_MODE_AUTO) {
			k.mask = mnl_attr_get_u32(
				tb[RDMA_NLDEV_ATTR_STAT_AUTO_MODE_MASK]);
			k.mode = k.mask != 0 ? RDMA_COUNTER_MODE_AUTO :
					       RDMA_COUNTER_MODE_NONE;
		}
		reply_ack(req, 0);
		return (ssize_t)len;
	}
	reply_ack(req, EOPNOTSUPP);
	return (ssize_t)len;
}

static ssize_t
fake_recvfrom(const struct mnl_socket *nl, void *buf, size_t size)
{
	(void)nl;
	if (k.reply_len == 0 || k.reply_len > size) {
		errno = EAGAIN;
		return -1;
	}
	memcpy(buf, k.reply, k.reply_len);
	size = k.reply_len;
	k.reply_len = 0;
	return (ssize_t)size;
}

/*
 * The port's mode: a request the kernel takes (STAT_MODE in it, or the
 * kernel says EINVAL, as it did to every get of vbr's before), its reply
 * read; auto mode's criteria with it.
 */
static int
test_get_mode(void)
{
	uint32_t mode = 99, mask = 99;

	k.net_admin = true;
	k.mode = RDMA_COUNTER_MODE_NONE;
	TEST_ASSERT_EQUAL(vbr_nl_get_mode("mlx5_0", 1, &mode, &mask), 0,
			  "get mode");
	TEST_ASSERT_EQUAL(k.last_cmd, RDMA_NLDEV_CMD_STAT_GET, "");
	TEST_ASSERT(mode == RDMA_COUNTER_MODE_NONE && mask == 0, "none");
	TEST_ASSERT_EQUAL(vbr_nl_set_auto_mode("mlx5_0", 1, 1), 0, "auto");
	TEST_ASSERT_EQUAL(vbr_nl_get_mode("mlx5_0", 1, &mode, &mask), 0,
			  "get mode");
	TEST_ASSERT(mode == RDMA_COUNTER_MODE_AUTO && mask == 1,
		    "auto by type: %u %#x", mode, mask);
	TEST_ASSERT_EQUAL(vbr_nl_get_mode("mlx5_9", 1, &mode, &mask),
			  ENODEV, "an unknown device");
	TEST_ASSERT(!k.open, "the socket closed");
	return TEST_SUCCESS;
}

/* Without CAP_NET_ADMIN: reads work, changes get the kernel's EPERM. */
static int
test_no_net_admin(void)
{
	uint32_t mode, mask, cntn = 0;

	k.net_admin = false;
	k.mode = RDMA_COUNTER_MODE_NONE;
	TEST_ASSERT_EQUAL(vbr_nl_set_auto_mode("mlx5_0", 1, 1), EPERM, "");
	TEST_ASSERT_EQUAL(vbr_nl_bind_qp("mlx5_0", 1, 0x107, &cntn), EPERM,
			  "");
	TEST_ASSERT_EQUAL(vbr_nl_get_mode("mlx5_0", 1, &mode, &mask), 0, "");
	TEST_ASSERT_EQUAL(mode, RDMA_COUNTER_MODE_NONE, "unchanged");
	return TEST_SUCCESS;
}

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
		TEST_CASE(test_get_mode),
		TEST_CASE(test_no_net_admin),
		TEST_CASES_END(),
	},
};

int
main(void)
{
	return unit_test_suite_runner(&suite);
}
