/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * QP counters of a real RDMA device through the kernel's RDMA netlink
 * (NETLINK_RDMA, client RDMA_NL_NLDEV), as iproute2's "rdma statistic qp"
 * drives them, with libmnl:
 *
 *   set auto mode	STAT_SET  STAT_RES=QP STAT_MODE=AUTO
 *			STAT_AUTO_MODE_MASK=mask (0: off)
 *   bind		STAT_SET  STAT_RES=QP STAT_MODE=MANUAL RES_LQPN
 *			[STAT_COUNTER_ID]; the reply names the counter
 *   unbind		STAT_DEL  STAT_RES=QP STAT_COUNTER_ID RES_LQPN
 *   mode		STAT_GET  STAT_RES=QP STAT_MODE=0 (the kernel's
 *			stat_get_doit_qp() takes a request without STAT_MODE
 *			for no request of the mode: EINVAL; iproute2 puts
 *			it for that); the reply has STAT_MODE and, in auto
 *			mode, STAT_AUTO_MODE_MASK
 *   MRs		STAT_GET  dump, STAT_RES=MR: RES_MR of RES_MR_ENTRY
 *			{RES_MRN, RES_MRLEN, STAT_HWCOUNTERS}
 *   counters		STAT_GET  dump, STAT_RES=QP: messages of DEV_INDEX,
 *			DEV_NAME and a STAT_COUNTER nest of several
 *			STAT_COUNTER_ENTRY nests, one a counter: PORT_INDEX,
 *			STAT_COUNTER_ID, STAT_MODE, in auto mode RES_TYPE
 *			and / or RES_PID (or RES_KERN_NAME) by its criteria
 *			(no STAT_AUTO_MODE_MASK: the mask is what is there),
 *			RES_QP of RES_QP_ENTRY{RES_LQPN}, STAT_HWCOUNTERS of
 *			STAT_HWCOUNTER_ENTRY{ENTRY_NAME, ENTRY_VALUE}
 *			(nldev.c res_get_common_dumpit(),
 *			fill_res_counter_entry(); iproute2 rdma/stat.c)
 *
 * The device is named by its index, found with a CMD_GET dump. Errors are
 * the kernel's errno, positive. Part of the ibverbs glue object only.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <rdma/rdma_netlink.h>

#include "vbr_glue.h"
#include "vbr_nl.h"

#define NL_TYPE(cmd) RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd)


/* Room for a dump's messages (libmnl's MNL_SOCKET_DUMP_SIZE). */
#define VBR_NL_BUF 32768

struct vbr_nl_req {
	char buf[VBR_NL_BUF];
	struct nlmsghdr *nlh;
};

static void
nl_start(struct vbr_nl_req *r, int cmd, uint16_t flags)
{
	r->nlh = mnl_nlmsg_put_header(r->buf);
	r->nlh->nlmsg_type = NL_TYPE(cmd);
	r->nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	r->nlh->nlmsg_seq = (uint32_t)time(NULL);
}

/* Send the request, run cb on each reply. Return 0 or a positive errno. */
static int
nl_talk(struct vbr_nl_req *r, mnl_cb_t cb, void *arg)
{
	struct mnl_socket *nl;
	unsigned int portid;
	uint32_t seq = r->nlh->nlmsg_seq;
	ssize_t len;
	int ret;

	nl = mnl_socket_open(NETLINK_RDMA);
	if (nl == NULL)
		return errno != 0 ? errno : ENOTSUP;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		ret = errno;
		goto out;
	}
	portid = mnl_socket_get_portid(nl);
	if (mnl_socket_sendto(nl, r->nlh, r->nlh->nlmsg_len) < 0) {
		ret = errno;
		goto out;
	}
	for (;;) {
		len = mnl_socket_recvfrom(nl, r->buf, sizeof(r->buf));
		if (len < 0) {
			ret = errno;
			break;
		}
		/* STOP (0) at the ack or the dump's end; -1: an error. */
		ret = mnl_cb_run(r->buf, (size_t)len, seq, portid,
				 cb, arg);
		if (ret < 0) {
			ret = errno != 0 ? errno : EIO;
			break;
		}
		if (ret == MNL_CB_STOP)
			break;
	}
out:
	mnl_socket_close(nl);
	return ret;
}

static int
nl_attr_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(attr);

	if (type >= 0 && type < RDMA_NLDEV_ATTR_MAX)
		tb[type] = attr;
	return MNL_CB_OK;
}

static void
nl_parse(const struct nlmsghdr *nlh, const struct nlattr **tb)
{
	memset(tb, 0, sizeof(*tb) * RDMA_NLDEV_ATTR_MAX);
	mnl_attr_parse(nlh, 0, nl_attr_cb, tb);
}

static void
nl_parse_nested(const struct nlattr *nest, const struct nlattr **tb)
{
	memset(tb, 0, sizeof(*tb) * RDMA_NLDEV_ATTR_MAX);
	mnl_attr_parse_nested(nest, nl_attr_cb, tb);
}

struct dev_find {
	const char *name;
	uint32_t index;
	bool found;
};

static int
dev_find_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlattr *tb[RDMA_NLDEV_ATTR_MAX];
	struct dev_find *f = arg;

	nl_parse(nlh, tb);
	if (tb[RDMA_NLDEV_ATTR_DEV_NAME] != NULL &&
	    tb[RDMA_NLDEV_ATTR_DEV_INDEX] != NULL &&
	    strcmp(mnl_attr_get_str(tb[RDMA_NLDEV_ATTR_DEV_NAME]),
		   f->name) == 0) {
		f->index = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_DEV_INDEX]);
		f->found = true;
	}
	return MNL_CB_OK;
}

/*
 * Start a request of statistics resource @res on device @name, port @port
 * (0: none): the device's index first.
 */
static int
nl_dev_req(struct vbr_nl_req *r, const char *name, uint8_t port, int cmd,
	   uint16_t flags, uint32_t res)
{
	struct dev_find f = { .name = name, .index = 0, .found = false };
	int ret;

	nl_start(r, RDMA_NLDEV_CMD_GET, NLM_F_DUMP);
	ret = nl_talk(r, dev_find_cb, &f);
	if (ret != 0)
		return ret;
	if (!f.found)
		return ENODEV;
	nl_start(r, cmd, flags);
	mnl_attr_put_u32(r->nlh, RDMA_NLDEV_ATTR_DEV_INDEX, f.index);
	if (port != 0)
		mnl_attr_put_u32(r->nlh, RDMA_NLDEV_ATTR_PORT_INDEX, port);
	mnl_attr_put_u32(r->nlh, RDMA_NLDEV_ATTR_STAT_RES, res);
	return 0;
}

static int
nl_ignore_cb(const struct nlmsghdr *nlh, void *arg)
{
	(void)nlh;
	(void)arg;
	return MNL_CB_OK;
}

int
vbr_nl_set_auto_mode(const char *name, uint8_t port, uint32_t mask)
{
	struct vbr_nl_req r;
	int ret;

	ret = nl_dev_req(&r, name, port, RDMA_NLDEV_CMD_STAT_SET, 0,
			 RDMA_NLDEV_ATTR_RES_QP);
	if (ret != 0)
		return ret;
	mnl_attr_put_u32(r.nlh, RDMA_NLDEV_ATTR_STAT_MODE,
			 RDMA_COUNTER_MODE_AUTO);
	mnl_attr_put_u32(r.nlh, RDMA_NLDEV_ATTR_STAT_AUTO_MODE_MASK, mask);
	return nl_talk(&r, nl_ignore_cb, NULL);
}

struct mode_get {
	uint32_t mode, mask, cntn;
};

static int
mode_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlattr *tb[RDMA_NLDEV_ATTR_MAX];
	struct mode_get *m = arg;

	nl_parse(nlh, tb);
	if (tb[RDMA_NLDEV_ATTR_STAT_MODE] != NULL)
		m->mode = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_STAT_MODE]);
	if (tb[RDMA_NLDEV_ATTR_STAT_AUTO_MODE_MASK] != NULL)
		m->mask = mnl_attr_get_u32(
			tb[RDMA_NLDEV_ATTR_STAT_AUTO_MODE_MASK]);
	if (tb[RDMA_NLDEV_ATTR_STAT_COUNTER_ID] != NULL)
		m->cntn = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_STAT_COUNTER_ID]);
	return MNL_CB_OK;
}

int
vbr_nl_get_mode(const char *name, uint8_t port, uint32_t *mode,
		uint32_t *mask)
{
	struct mode_get m = { 0, 0, 0 };
	struct vbr_nl_req r;
	int ret;

	ret = nl_dev_req(&r, name, port, RDMA_NLDEV_CMD_STAT_GET, 0,
			 RDMA_NLDEV_ATTR_RES_QP);
	if (ret == 0) {
		/* what makes it a request of the mode; its value is unread */
		mnl_attr_put_u32(r.nlh, RDMA_NLDEV_ATTR_STAT_MODE, 0);
		ret = nl_talk(&r, mode_cb, &m);
	}
	if (ret == 0) {
		*mode = m.mode;
		*mask = m.mode == RDMA_COUNTER_MODE_AUTO ? m.mask : 0;
	}
	return ret;
}

int
vbr_nl_bind_qp(const char *name, uint8_t port, uint32_t lqpn, uint32_t *cntn)
{
	struct mode_get m = { 0, 0, 0 };
	struct vbr_nl_req r;
	int ret;

	ret = nl_dev_req(&r, name, port, RDMA_NLDEV_CMD_STAT_SET, 0,
			 RDMA_NLDEV_ATTR_RES_QP);
	if (ret != 0)
		return ret;
	mnl_attr_put_u32(r.nlh, RDMA_NLDEV_ATTR_STAT_MODE,
			 RDMA_COUNTER_MODE_MANUAL);
	mnl_attr_put_u32(r.nlh, RDMA_NLDEV_ATTR_RES_LQPN, lqpn);
	if (*cntn != 0)
		mnl_attr_put_u32(r.nlh, RDMA_NLDEV_ATTR_STAT_COUNTER_ID, *cntn);
	ret = nl_talk(&r, mode_cb, &m);
	if (ret == 0 && *cntn == 0)
		*cntn = m.cntn;
	return ret;
}

int
vbr_nl_unbind_qp(const char *name, uint8_t port, uint32_t lqpn,
		 uint32_t cntn)
{
	struct vbr_nl_req r;
	int ret;

	ret = nl_dev_req(&r, name, port, RDMA_NLDEV_CMD_STAT_DEL, 0,
			 RDMA_NLDEV_ATTR_RES_QP);
	if (ret != 0)
		return ret;
	mnl_attr_put_u32(r.nlh, RDMA_NLDEV_ATTR_STAT_COUNTER_ID, cntn);
	mnl_attr_put_u32(r.nlh, RDMA_NLDEV_ATTR_RES_LQPN, lqpn);
	return nl_talk(&r, nl_ignore_cb, NULL);
}

/* The {name, value} entries of a STAT_HWCOUNTERS nest into val[]. */
static uint32_t
nl_hwcounters(const struct nlattr *nest, struct vbr_glue_val *val,
	      uint32_t max)
{
	const struct nlattr *pos, *t2[RDMA_NLDEV_ATTR_MAX];
	uint32_t n = 0;

	if (nest == NULL)
		return 0;
	mnl_attr_for_each_nested(pos, nest) {
		nl_parse_nested(pos, t2);
		if (t2[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME] == NULL ||
		    t2[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE] == NULL ||
		    n == max)
			continue;
		snprintf(val[n].name, sizeof(val[n].name), "%s",
			 mnl_attr_get_str(
				t2[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME]));
		val[n].value = mnl_attr_get_u64(
			t2[RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE]);
		n++;
	}
	return n;
}

struct list_get {
	struct vbr_glue_qp_counter *c;
	unsigned int max, n;
};

/*
 * One counter of the dump: the attributes of its STAT_COUNTER_ENTRY. The
 * kernel says an auto counter's criteria by the values it puts (RES_TYPE
 * for the QP type, RES_PID or RES_KERN_NAME for the task), not by a mask.
 */
static void
list_fill(struct vbr_glue_qp_counter *g, const struct nlattr **tb)
{
	const struct nlattr *pos, *t2[RDMA_NLDEV_ATTR_MAX];

	memset(g, 0, sizeof(*g));
	g->pid = -1;
	g->cntn = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_STAT_COUNTER_ID]);
	if (tb[RDMA_NLDEV_ATTR_STAT_MODE] != NULL)
		g->mode = mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_STAT_MODE]);
	if (g->mode == VBR_GLUE_COUNTER_MODE_AUTO) {
		if (tb[RDMA_NLDEV_ATTR_RES_TYPE] != NULL)
			g->mask |= VBR_GLUE_COUNTER_MASK_QP_TYPE;
		if (tb[RDMA_NLDEV_ATTR_RES_PID] != NULL ||
		    tb[RDMA_NLDEV_ATTR_RES_KERN_NAME] != NULL)
			g->mask |= VBR_GLUE_COUNTER_MASK_PID;
	}
	if (tb[RDMA_NLDEV_ATTR_RES_TYPE] != NULL)
		g->qp_type = mnl_attr_get_u8(tb[RDMA_NLDEV_ATTR_RES_TYPE]);
	if (tb[RDMA_NLDEV_ATTR_RES_PID] != NULL)
		g->pid = (int32_t)mnl_attr_get_u32(tb[RDMA_NLDEV_ATTR_RES_PID]);
	if (tb[RDMA_NLDEV_ATTR_RES_KERN_NAME] != NULL)
		snprintf(g->comm, sizeof(g->comm), "%s",
			 mnl_attr_get_str(tb[RDMA_NLDEV_ATTR_RES_KERN_NAME]));
	if (tb[RDMA_NLDEV_ATTR_RES_QP] != NULL)
		mnl_attr_for_each_nested(pos, tb[RDMA_NLDEV_ATTR_RES_QP]) {
			nl_parse_nested(pos, t2);
			if (t2[RDMA_NLDEV_ATTR_RES_LQPN] == NULL)
				continue;
			if (g->nqps < VBR_GLUE_QP_CNT_QPS)
				g->lqpn[g->nqps] = mnl_attr_get_u32(
					t2[RDMA_NLDEV_ATTR_RES_LQPN]);
			g->nqps++;
		}
	g->nvals = nl_hwcounters(tb[RDMA_NLDEV_ATTR_STAT_HWCOUNTERS], g->val,
				 VBR_GLUE_QP_CNT_MAX);
}

/* A dump message: a STAT_COUNTER nest of STAT_COUNTER_ENTRY nests. */
static int
list_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlattr *tb[RDMA_NLDEV_ATTR_MAX], *t2[RDMA_NLDEV_ATTR_MAX];
	const struct nlattr *pos;
	struct list_get *l = arg;

	nl_parse(nlh, tb);
	if (tb[RDMA_NLDEV_ATTR_STAT_COUNTER] == NULL)
		return MNL_CB_OK;
	mnl_attr_for_each_nested(pos, tb[RDMA_NLDEV_ATTR_STAT_COUNTER]) {
		nl_parse_nested(pos, t2);
		if (t2[RDMA_NLDEV_ATTR_STAT_COUNTER_ID] == NULL)
			continue;
		if (l->n < l->max)
			list_fill(&l->c[l->n], t2);
		l->n++;
	}
	return MNL_CB_OK;
}

int
vbr_nl_counter_list(const char *name, uint8_t port,
		    struct vbr_glue_qp_counter *c, unsigned int max,
		    unsigned int *n)
{
	struct list_get l = { .c = c, .max = max, .n = 0 };
	struct vbr_nl_req r;
	int ret;

	ret = nl_dev_req(&r, name, port, RDMA_NLDEV_CMD_STAT_GET, NLM_F_DUMP,
			 RDMA_NLDEV_ATTR_RES_QP);
	if (ret == 0)
		ret = nl_talk(&r, list_cb, &l);
	if (ret == 0)
		*n = l.n;
	return ret;
}

struct mr_get {
	struct vbr_glue_mr *m;
	unsigned int max, n;
};

/* A dump message: a RES_MR nest of RES_MR_ENTRY nests. */
static int
mr_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlattr *tb[RDMA_NLDEV_ATTR_MAX], *t2[RDMA_NLDEV_ATTR_MAX];
	const struct nlattr *pos;
	struct mr_get *l = arg;

	nl_parse(nlh, tb);
	if (tb[RDMA_NLDEV_ATTR_RES_MR] == NULL)
		return MNL_CB_OK;
	mnl_attr_for_each_nested(pos, tb[RDMA_NLDEV_ATTR_RES_MR]) {
		struct vbr_glue_mr *g;

		nl_parse_nested(pos, t2);
		if (t2[RDMA_NLDEV_ATTR_RES_MRN] == NULL)
			continue;
		if (l->n < l->max) {
			g = &l->m[l->n];
			memset(g, 0, sizeof(*g));
			g->mrn = mnl_attr_get_u32(t2[RDMA_NLDEV_ATTR_RES_MRN]);
			if (t2[RDMA_NLDEV_ATTR_RES_MRLEN] != NULL) {
				snprintf(g->val[0].name, sizeof(g->val[0].name),
					 "mrlen");
				g->val[0].value = mnl_attr_get_u64(
					t2[RDMA_NLDEV_ATTR_RES_MRLEN]);
				g->nvals = 1;
			}
			g->nvals += nl_hwcounters(
				t2[RDMA_NLDEV_ATTR_STAT_HWCOUNTERS],
				&g->val[g->nvals],
				VBR_GLUE_MR_VALS - g->nvals);
		}
		l->n++;
	}
	return MNL_CB_OK;
}

int
vbr_nl_mr_list(const char *name, struct vbr_glue_mr *m, unsigned int max,
	       unsigned int *n)
{
	struct mr_get l = { .m = m, .max = max, .n = 0 };
	struct vbr_nl_req r;
	int ret;

	ret = nl_dev_req(&r, name, 0, RDMA_NLDEV_CMD_STAT_GET, NLM_F_DUMP,
			 RDMA_NLDEV_ATTR_RES_MR);
	if (ret != 0)
		return ret;
	ret = nl_talk(&r, mr_cb, &l);
	if (ret == 0)
		*n = l.n;
	return ret;
}
