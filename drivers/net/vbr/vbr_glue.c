/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The ibverbs call table. Built only into librte_net_vbr_glue.so.<version>,
 * which links libibverbs; the PMD loads it with dlopen() (vbr_glue_sw.c).
 * This is the only file that calls libibverbs.
 */

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <infiniband/verbs.h>

#include "vbr_glue.h"
#include "vbr_netdev.h"
#include "vbr_nl.h"

/* The table the PMD looks up with dlsym(VBR_GLUE_IBV_SYMBOL), at the end. */
extern const struct vbr_glue vbr_glue_ibv;

static const char *
vbr_ibv_get_device_name(struct ibv_device *device)
{
	return ibv_get_device_name(device);
}

static int
vbr_ibv_query_device_ex(struct ibv_context *context,
			const struct ibv_query_device_ex_input *input,
			struct ibv_device_attr_ex *attr)
{
	return ibv_query_device_ex(context, input, attr);
}

static int
vbr_ibv_query_port(struct ibv_context *context, uint8_t port_num,
		   struct ibv_port_attr *port_attr)
{
	return ibv_query_port(context, port_num, port_attr);
}

/*
 * The port's network interface, chosen as DPDK's mlx5 PMD chooses it
 * rather than the first entry of the device's device/net (a switchdev PF
 * lists its VF representors there too, in hash order; a function may have
 * a netdev per port):
 *  1. the netdev the kernel ties to port 1: the one of its GID 0
 *     (ports/1/gid_attrs/ndevs/0, what RDMA netlink's NDEV_INDEX of the
 *     port and mlx5's netlink lookup give): a LAG's bond, a
 *     representor port's representor;
 *  2. else the only entry of device/net;
 *  3. else, among the entries that are not representors (phys_port_name
 *     pf<N>vf<M>, pf<N>sf<M>, ...), the one whose dev_port is 0, the
 *     first port's (dev_id when no entry has a dev_port, or all the same
 *     one, as on old kernels).
 * ENODEV when none fits. how[] says which rule chose it, for the log.
 */
#define VBR_IBV_NETDEVS 64

struct vbr_ibv_netdev {
	char name[IF_NAMESIZE];
	long dev_port;		/**< -1: no dev_port leaf */
	long dev_id;		/**< -1: no dev_id leaf */
	bool representor;	/**< phys_port_name names a VF or SF */
};

/* A number from <ibdev>/device/net/<name>/<leaf> (dev_id is hex); -1. */
static long
vbr_ibv_netdev_leaf(const char *ibdev_path, const char *name,
		    const char *leaf, bool hex)
{
	char path[PATH_MAX];
	long v;
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "%s/device/net/%s/%s", ibdev_path,
		 name, leaf);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	ret = fscanf(f, hex ? "%lx" : "%ld", &v);
	fclose(f);
	return ret == 1 && v >= 0 ? v : -1;
}

/*
 * A representor's phys_port_name: pf<N>vf<M>, pf<N>sf<M>, c<C>pf<N>vf<M>
 * (mlx5e's forms); the uplink's is p<N>. Interfaces without one (a
 * legacy-mode PF, a VF's own netdev) fail the read: not a representor.
 */
static bool
vbr_ibv_netdev_is_representor(const char *ibdev_path, const char *name)
{
	char path[PATH_MAX], ppn[IF_NAMESIZE + 1];
	const char *pf;
	FILE *f;
	bool ret = false;

	snprintf(path, sizeof(path), "%s/device/net/%s/phys_port_name",
		 ibdev_path, name);
	f = fopen(path, "r");
	if (f == NULL)
		return false;
	if (fgets(ppn, sizeof(ppn), f) != NULL) {
		pf = strstr(ppn, "pf");
		ret = pf != NULL && (strstr(pf, "vf") != NULL ||
				     strstr(pf, "sf") != NULL);
	}
	fclose(f);
	return ret;
}

/* The interface of the port's GID 0, if the kernel names one there. */
static bool
vbr_ibv_netdev_of_gid(const char *ibdev_path, char name[IF_NAMESIZE])
{
	char path[PATH_MAX], buf[IF_NAMESIZE + 2];
	struct stat st;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/ports/1/gid_attrs/ndevs/0",
		 ibdev_path);
	f = fopen(path, "r");
	if (f == NULL)
		return false;
	if (fgets(buf, sizeof(buf), f) == NULL) {
		fclose(f);
		return false;	/* EINVAL: no GID 0 (RoCE off) */
	}
	fclose(f);
	n = strcspn(buf, "\n");
	if (n == 0 || n >= IF_NAMESIZE)
		return false;
	buf[n] = '\0';
	snprintf(path, sizeof(path), "/sys/class/net/%s", buf);
	if (stat(path, &st) != 0)
		return false;
	memcpy(name, buf, n + 1);
	return true;
}

static int
vbr_ibv_netdev_pick(const char *ibdev_path, char name[IF_NAMESIZE],
		    char *how, size_t len)
{
	struct vbr_ibv_netdev nd[VBR_IBV_NETDEVS];
	unsigned int n = 0, i, uplinks = 0, with_port = 0;
	char dir[PATH_MAX];
	struct dirent *e;
	bool by_id;
	long first;
	DIR *d;
	int match = -1;

	if (vbr_ibv_netdev_of_gid(ibdev_path, name)) {
		snprintf(how, len, "the netdev of the port's GID 0");
		return 0;
	}
	snprintf(dir, sizeof(dir), "%s/device/net", ibdev_path);
	d = opendir(dir);
	if (d == NULL)
		return errno;
	while ((e = readdir(d)) != NULL && n < VBR_IBV_NETDEVS) {
		if (e->d_name[0] == '.' || strlen(e->d_name) >= IF_NAMESIZE)
			continue;
		memcpy(nd[n].name, e->d_name, strlen(e->d_name) + 1);
		n++;
	}
	closedir(d);
	if (n == 0)
		return ENODEV;
	if (n == 1) {
		memcpy(name, nd[0].name, IF_NAMESIZE);
		snprintf(how, len, "the device's only netdev");
		return 0;
	}
	first = -2;
	by_id = true;
	for (i = 0; i < n; i++) {
		nd[i].dev_port = vbr_ibv_netdev_leaf(ibdev_path, nd[i].name,
						     "dev_port", false);
		nd[i].dev_id = vbr_ibv_netdev_leaf(ibdev_path, nd[i].name,
						   "dev_id", true);
		nd[i].representor =
			vbr_ibv_netdev_is_representor(ibdev_path, nd[i].name);
		if (nd[i].representor)
			continue;
		uplinks++;
		if (nd[i].dev_port < 0)
			continue;
		with_port++;
		if (first == -2)
			first = nd[i].dev_port;
		else if (nd[i].dev_port != first)
			by_id = false;
	}
	/* dev_port tells the ports apart unless missing or all equal */
	if (with_port == 0 || uplinks < 2)
		by_id = with_port == 0 && uplinks > 1;
	for (i = 0; i < n; i++) {
		if (nd[i].representor)
			continue;
		if (uplinks == 1 ||
		    (by_id ? nd[i].dev_id : nd[i].dev_port) == 0) {
			if (match >= 0 && strcmp(nd[i].name, nd[match].name) > 0)
				continue;	/* two fit: the lowest name */
			match = (int)i;
		}
	}
	if (match < 0)
		return ENODEV;
	memcpy(name, nd[match].name, IF_NAMESIZE);
	if (uplinks == 1)
		snprintf(how, len, "the one of %u netdevs that is not a "
			 "representor", n);
	else
		snprintf(how, len, "%s 0 among %u netdevs%s",
			 by_id ? "dev_id" : "dev_port", n,
			 uplinks < n ? ", representors left out" : "");
	return 0;
}

/* Name of the port's network interface (see vbr_ibv_netdev_pick()). */
static int
vbr_ibv_netdev_name(struct ibv_context *context, char name[IF_NAMESIZE])
{
	char how[128];

	return vbr_ibv_netdev_pick(context->device->ibdev_path, name, how,
				   sizeof(how));
}

/* Path of the port's network interface, in sysfs. */
static int
vbr_ibv_netdev_path(struct ibv_context *context, const char *leaf,
		    char *path, size_t size)
{
	char name[IF_NAMESIZE];
	int ret;

	ret = vbr_ibv_netdev_name(context, name);
	if (ret != 0)
		return ret;
	if ((size_t)snprintf(path, size, "/sys/class/net/%s/%s", name,
			     leaf) >= size)
		return ENAMETOOLONG;
	return 0;
}

/* A number from the netdev's sysfs leaf; ENOSYS if it has none (-1). */
static int
vbr_ibv_netdev_read(struct ibv_context *context, const char *leaf,
		    uint32_t *value)
{
	char path[PATH_MAX];
	long v;
	FILE *f;
	int ret;

	ret = vbr_ibv_netdev_path(context, leaf, path, sizeof(path));
	if (ret != 0)
		return ret;
	f = fopen(path, "r");
	if (f == NULL)
		return ENOSYS;
	ret = fscanf(f, "%ld", &v);
	fclose(f);
	if (ret != 1 || v <= 0 || v > UINT32_MAX)
		return ENOSYS;	/* e.g. speed of a link that is down */
	*value = (uint32_t)v;
	return 0;
}

/*
 * The seed's rules: standard bits only, the standard query; unknown bits
 * EINVAL; the MTU and speed in their units from the netdev (sysfs); the
 * largest MTU is not there (netlink's IFLA_MAX_MTU): ENOSYS.
 */
static int
vbr_ibv_query_port_ex(struct ibv_context *context, uint8_t port_num,
		      struct vbr_glue_port_attr_ex *attr)
{
	uint32_t mask = attr->comp_mask;
	int ret;

	if ((mask & ~VBR_GLUE_PORT_EX_MASK) != 0)
		return EINVAL;
	if (mask & VBR_GLUE_PORT_EX_ETH_MAX_MTU)
		return ENOSYS;
	ret = ibv_query_port(context, port_num, &attr->std);
	if (ret != 0)
		return ret;
	attr->eth_mtu = 0;
	attr->eth_max_mtu = 0;
	attr->speed_mbps = 0;
	if (mask & VBR_GLUE_PORT_EX_ETH_MTU) {
		ret = vbr_ibv_netdev_read(context, "mtu", &attr->eth_mtu);
		if (ret != 0)
			return ret;
	}
	if (mask & VBR_GLUE_PORT_EX_SPEED_MBPS) {
		ret = vbr_ibv_netdev_read(context, "speed", &attr->speed_mbps);
		if (ret != 0)
			return ret;
	}
	return 0;
}

/* A request on the device's netdev, as ip(8) makes it. */
static int
vbr_ibv_netdev_ioctl(struct ibv_context *context, unsigned long req,
		     struct ifreq *ifr)
{
	int fd, ret = 0;

	ret = vbr_ibv_netdev_name(context, ifr->ifr_name);
	if (ret != 0)
		return ret;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	if (ioctl(fd, req, ifr) != 0)
		ret = errno;
	close(fd);
	return ret;
}

static int
vbr_ibv_port_set_link(struct ibv_context *context, int up, char *why,
		      size_t len)
{
	struct ifreq ifr;
	int ret;

	memset(&ifr, 0, sizeof(ifr));
	ret = vbr_ibv_netdev_ioctl(context, SIOCGIFFLAGS, &ifr);
	if (ret == 0) {
		if (up)
			ifr.ifr_flags |= IFF_UP;
		else
			ifr.ifr_flags &= ~IFF_UP;
		ret = vbr_ibv_netdev_ioctl(context, SIOCSIFFLAGS, &ifr);
	}
	if (ret != 0)
		snprintf(why, len, "setting the device's netdev %s %s: %s%s",
			 ifr.ifr_name, up ? "up" : "down", strerror(ret),
			 ret == EPERM ? " (needs CAP_NET_ADMIN)" : "");
	return ret;
}

/* Verbs does not report the Ethernet address: read the netdev's. */
static int
vbr_ibv_query_port_mac(struct ibv_context *context, uint8_t mac[6])
{
	char path[PATH_MAX];
	unsigned int b[6];
	FILE *f;
	int ret, i;

	ret = vbr_ibv_netdev_path(context, "address", path, sizeof(path));
	if (ret != 0)
		return ret;
	f = fopen(path, "r");
	if (f == NULL)
		return errno;
	ret = fscanf(f, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3],
		     &b[4], &b[5]);
	fclose(f);
	if (ret != 6)
		return EINVAL;
	for (i = 0; i < 6; i++)
		mac[i] = b[i];
	return 0;
}

/*
 * Device lifecycle. A hardware port's device exists already: dev= names
 * it. Its netdev keeps its own MTU, and it has no wire to bind again.
 */

/** rdma-core's mlx5 provider: destroys succeed after a device fatal. */
#define VBR_IBV_FATAL_CLEANUP "MLX5_DEVICE_FATAL_CLEANUP"

/** Largest frame of a hardware port: a 9000-byte MTU jumbo frame. */
#define VBR_IBV_MAX_FRAME 9018

/*
 * libibverbs lists no device at all when the kernel has no RDMA support:
 * say so, and why, rather than its errno (ENOSYS).
 */
static void
vbr_ibv_why_none(int err, const char *name, char *why, size_t len)
{
	struct stat st;
	size_t at;

	if (err != ENOSYS && err != ENODEV)
		return;
	if (stat("/sys/class/infiniband", &st) == 0) {
		if (err != ENODEV || strstr(why, "there are none") == NULL)
			return;
		at = strlen(why);
		snprintf(why + at, len - at, " (the kernel has RDMA support "
			 "but no RDMA device: is the NIC's RDMA driver, e.g. "
			 "mlx5_ib, loaded? ibv_devices lists them)");
		return;
	}
	snprintf(why, len, "ibverbs: no verbs device named %s; there are "
		 "none: /sys/class/infiniband is missing (no RDMA support in "
		 "the kernel: load ib_uverbs and the NIC's RDMA driver, e.g. "
		 "mlx5_ib); without a NIC use wire=loop|pair:<name>|"
		 "shm:<name>|af_packet:<ifname>|af_xdp:<ifname>[:<queue>]",
		 name);
}

static int
vbr_ibv_port_open(const struct vbr_glue_port_conf *conf,
		  struct vbr_glue_port *port, char *why, size_t len)
{
	int ret;

	if ((size_t)snprintf(port->ibdev_name, sizeof(port->ibdev_name), "%s",
			     conf->target) >= sizeof(port->ibdev_name)) {
		snprintf(why, len, "dev=%s: name too long", conf->target);
		return EINVAL;
	}
	/*
	 * After a removal (IBV_EVENT_DEVICE_FATAL) the kernel fails every
	 * destroy with EIO; rdma-core's mlx5 provider then reports success
	 * and frees its side when this is set as a context is made, so that
	 * closing the port leaks nothing. The mlx5 PMD sets it too. A value
	 * the user set stays.
	 */
	if (setenv(VBR_IBV_FATAL_CLEANUP, "1", 0) != 0)
		return errno;
	ret = vbr_glue_open_named(&vbr_glue_ibv, conf->target, &port->ctx,
				  why, len);
	if (ret != 0) {
		vbr_ibv_why_none(ret, conf->target, why, len);
		return ret;
	}
	port->max_frame = VBR_IBV_MAX_FRAME;
	ret = vbr_ibv_netdev_pick(port->ctx->device->ibdev_path, port->netdev,
				  port->netdev_how, sizeof(port->netdev_how));
	if (ret != 0)
		snprintf(port->netdev_how, sizeof(port->netdev_how),
			 "none: %s", strerror(ret));
	return 0;
}

static int
vbr_ibv_port_close(struct ibv_context *context, char *why, size_t len)
{
	int ret = ibv_close_device(context);

	if (ret != 0)
		snprintf(why, len, "close_device: %s", strerror(ret));
	return ret;
}

static int
vbr_ibv_port_rebind(struct ibv_context *context, char *why, size_t len)
{
	(void)context;
	(void)why;
	(void)len;
	return 0;
}

/*
 * Whether the device is a function behind an eswitch, whose vport gets
 * only what its netdev registered: an SR-IOV VF (device/physfn, as the
 * PCI core links it) or a ConnectX SF (an auxiliary device named
 * mlx5_core.sf.<n>). The mlx5 PMD tells the netdev on these only.
 */
static bool
vbr_ibv_behind_eswitch(struct ibv_context *context)
{
	char path[PATH_MAX], real[PATH_MAX];

	snprintf(path, sizeof(path), "%s/device/physfn",
		 context->device->ibdev_path);
	if (access(path, F_OK) == 0)
		return true;
	snprintf(path, sizeof(path), "%s/device", context->device->ibdev_path);
	return realpath(path, real) != NULL && strstr(real, ".sf.") != NULL;
}

static int
vbr_ibv_port_vport(struct ibv_context *context, int op, uint8_t mac[6],
		   int *on, char *why, size_t len)
{
	char name[IF_NAMESIZE];
	int ret;

	if (!vbr_ibv_behind_eswitch(context))
		return ENOTSUP;
	ret = vbr_ibv_netdev_name(context, name);
	if (ret != 0) {
		snprintf(why, len, "the VF's netdev (%s/device/net): %s",
			 context->device->ibdev_path, strerror(ret));
		return ret;
	}
	return vbr_netdev_vport(name, op, mac, on, why, len);
}

/* A NIC drops at its port MTU, which follows the netdev's: none other. */
static int
vbr_ibv_port_set_rx_mtu(struct ibv_context *context, uint32_t mtu)
{
	(void)context;
	(void)mtu;
	return ENOSYS;
}

/* The netdev's MTU (SIOCSIFMTU), as the mlx5 PMD sets it. */
static int
vbr_ibv_port_set_mtu(struct ibv_context *context, uint32_t mtu, char *why,
		     size_t len)
{
	struct ifreq ifr;
	int ret;

	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_mtu = (int)mtu;
	ret = vbr_ibv_netdev_ioctl(context, SIOCSIFMTU, &ifr);
	if (ret != 0)
		snprintf(why, len, "MTU %u on the device's netdev %s: %s%s",
			 mtu, ifr.ifr_name, strerror(ret),
			 ret == EPERM ? " (needs CAP_NET_ADMIN)" : "");
	return ret;
}

static int
vbr_ibv_read_counter(struct ibv_context *context, const char *name,
		     uint64_t *value)
{
	char path[PATH_MAX];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "%s/ports/1/hw_counters/%s",
		 context->device->ibdev_path, name);
	f = fopen(path, "r");
	if (f == NULL)
		return ENOTSUP;
	ret = fscanf(f, "%" SCNu64, value);
	fclose(f);
	return ret == 1 ? 0 : ENOTSUP;
}

/* Drop counters from the device's hw_counters, when it has them. */
static int
vbr_ibv_query_port_counters(struct ibv_context *context,
			    struct vbr_glue_port_counters *counters)
{
	int ret;

	memset(counters, 0, sizeof(*counters));
	ret = vbr_ibv_read_counter(context, "out_of_buffer",
				   &counters->out_of_buffer);
	if (ret == 0)
		counters->valid = VBR_GLUE_CNT_OUT_OF_BUFFER;
	return ret;
}

/* QP counters through RDMA netlink (vbr_nl.c). */
static int
vbr_ibv_counter_set_auto_mode(struct ibv_context *context, uint8_t port,
			      uint32_t mask)
{
	return vbr_nl_set_auto_mode(ibv_get_device_name(context->device),
				    port, mask);
}

static int
vbr_ibv_counter_get_mode(struct ibv_context *context, uint8_t port,
			 uint32_t *mode, uint32_t *mask)
{
	return vbr_nl_get_mode(ibv_get_device_name(context->device), port,
			       mode, mask);
}

static int
vbr_ibv_counter_bind_qp(struct ibv_context *context, uint8_t port,
			uint32_t lqpn, uint32_t *cntn)
{
	return vbr_nl_bind_qp(ibv_get_device_name(context->device), port,
			      lqpn, cntn);
}

static int
vbr_ibv_counter_unbind_qp(struct ibv_context *context, uint8_t port,
			  uint32_t lqpn, uint32_t cntn)
{
	return vbr_nl_unbind_qp(ibv_get_device_name(context->device), port,
				lqpn, cntn);
}

static int
vbr_ibv_counter_list(struct ibv_context *context, uint8_t port,
		     struct vbr_glue_qp_counter *c, unsigned int max,
		     unsigned int *n)
{
	return vbr_nl_counter_list(ibv_get_device_name(context->device), port,
				   c, max, n);
}

static int
vbr_ibv_mr_list(struct ibv_context *context, struct vbr_glue_mr *m,
		unsigned int max, unsigned int *n)
{
	return vbr_nl_mr_list(ibv_get_device_name(context->device), m, max, n);
}

static struct ibv_cq_ex *
vbr_ibv_create_cq_ex(struct ibv_context *context,
		     struct ibv_cq_init_attr_ex *attr)
{
	return ibv_create_cq_ex(context, attr);
}

static struct ibv_qp *
vbr_ibv_create_qp_ex(struct ibv_context *context,
		     struct ibv_qp_init_attr_ex *attr)
{
	return ibv_create_qp_ex(context, attr);
}

static struct ibv_wq *
vbr_ibv_create_wq(struct ibv_context *context, struct ibv_wq_init_attr *attr)
{
	return ibv_create_wq(context, attr);
}

static int
vbr_ibv_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *attr)
{
	return ibv_modify_wq(wq, attr);
}

static int
vbr_ibv_destroy_wq(struct ibv_wq *wq)
{
	return ibv_destroy_wq(wq);
}

static struct ibv_rwq_ind_table *
vbr_ibv_create_rwq_ind_table(struct ibv_context *context,
			     struct ibv_rwq_ind_table_init_attr *attr)
{
	return ibv_create_rwq_ind_table(context, attr);
}

static int
vbr_ibv_destroy_rwq_ind_table(struct ibv_rwq_ind_table *table)
{
	return ibv_destroy_rwq_ind_table(table);
}

static struct ibv_flow *
vbr_ibv_create_flow(struct ibv_qp *qp, struct ibv_flow_attr *flow_attr)
{
	return ibv_create_flow(qp, flow_attr);
}

static int
vbr_ibv_destroy_flow(struct ibv_flow *flow)
{
	return ibv_destroy_flow(flow);
}

/*
 * Counters: verbs.h inline calls into the provider's verbs_context; they
 * fail with EOPNOTSUPP/ENOSYS where the provider has none.
 */
static struct ibv_counters *
vbr_ibv_create_counters(struct ibv_context *context,
			struct ibv_counters_init_attr *init_attr)
{
	return ibv_create_counters(context, init_attr);
}

static int
vbr_ibv_destroy_counters(struct ibv_counters *counters)
{
	return ibv_destroy_counters(counters);
}

static int
vbr_ibv_attach_counters_point_flow(struct ibv_counters *counters,
				   struct ibv_counter_attach_attr *attr,
				   struct ibv_flow *flow)
{
	return ibv_attach_counters_point_flow(counters, attr, flow);
}

static int
vbr_ibv_read_counters(struct ibv_counters *counters, uint64_t *counters_value,
		      uint32_t ncounters, uint32_t flags)
{
	return ibv_read_counters(counters, counters_value, ncounters, flags);
}

static struct ibv_mr *
vbr_ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return ibv_reg_mr(pd, addr, length, access);
}

/* Most entries a burst call hands to libibverbs in one WR list. */
#define VBR_IBV_BURST 64

static unsigned int
vbr_ibv_poll_cq_burst(struct ibv_cq_ex *cq, unsigned int n, uint64_t *wr_id,
		      uint32_t *byte_len, uint8_t *status, uint32_t *flow_tag)
{
	struct ibv_poll_cq_attr attr = { .comp_mask = 0 };
	unsigned int k = 0;

	if (n == 0 || ibv_start_poll(cq, &attr) != 0)
		return 0;
	for (;;) {
		wr_id[k] = cq->wr_id;
		status[k] = (uint8_t)cq->status;
		byte_len[k] = cq->status == IBV_WC_SUCCESS ?
			      ibv_wc_read_byte_len(cq) : 0;
		if (flow_tag != NULL)
			flow_tag[k] = cq->status == IBV_WC_SUCCESS ?
				      ibv_wc_read_flow_tag(cq) : 0;
		if (++k == n || ibv_next_poll(cq) != 0)
			break;
	}
	ibv_end_poll(cq);
	return k;
}

static unsigned int
vbr_ibv_poll_cq_burst_ol(struct ibv_cq_ex *cq, unsigned int n,
			 uint64_t *wr_id, uint32_t *byte_len, uint8_t *status,
			 uint32_t *flow_tag, uint8_t *wc_flags,
			 uint16_t *cvlan, uint64_t *ts)
{
	struct ibv_poll_cq_attr attr = { .comp_mask = 0 };
	unsigned int k = 0;
	bool ok;

	if (n == 0 || ibv_start_poll(cq, &attr) != 0)
		return 0;
	for (;;) {
		ok = cq->status == IBV_WC_SUCCESS;
		wr_id[k] = cq->wr_id;
		status[k] = (uint8_t)cq->status;
		byte_len[k] = ok ? ibv_wc_read_byte_len(cq) : 0;
		if (flow_tag != NULL)
			flow_tag[k] = ok ? ibv_wc_read_flow_tag(cq) : 0;
		if (wc_flags != NULL)
			wc_flags[k] = ok ? (uint8_t)ibv_wc_read_wc_flags(cq) :
				      0;
		if (cvlan != NULL)
			cvlan[k] = ok ? ibv_wc_read_cvlan(cq) : 0;
		if (ts != NULL)
			ts[k] = ok ? ibv_wc_read_completion_ts(cq) : 0;
		if (++k == n || ibv_next_poll(cq) != 0)
			break;
	}
	ibv_end_poll(cq);
	return k;
}

static int
vbr_ibv_query_rt_values_ex(struct ibv_context *context,
			   struct ibv_values_ex *values)
{
	return ibv_query_rt_values_ex(context, values);
}

static unsigned int
vbr_ibv_post_wq_recv_burst(struct ibv_wq *wq, unsigned int n,
			   const uint64_t *wr_id, const struct ibv_sge *sge)
{
	struct ibv_recv_wr wrs[VBR_IBV_BURST], *bad;
	unsigned int done = 0, k, i;

	while (done < n) {
		k = n - done < VBR_IBV_BURST ? n - done : VBR_IBV_BURST;
		for (i = 0; i < k; i++) {
			wrs[i].wr_id = wr_id[done + i];
			wrs[i].sg_list = (struct ibv_sge *)&sge[done + i];
			wrs[i].num_sge = 1;
			wrs[i].next = i + 1 < k ? &wrs[i + 1] : NULL;
		}
		if (ibv_post_wq_recv(wq, wrs, &bad) != 0)
			return done + (unsigned int)(bad - wrs);
		done += k;
	}
	return done;
}

static unsigned int
vbr_ibv_post_send_burst(struct ibv_qp *qp, unsigned int n,
			const uint64_t *wr_id, const struct ibv_sge *sge,
			const uint8_t *signaled)
{
	struct ibv_send_wr wrs[VBR_IBV_BURST], *bad;
	unsigned int done = 0, k, i;

	while (done < n) {
		k = n - done < VBR_IBV_BURST ? n - done : VBR_IBV_BURST;
		memset(wrs, 0, sizeof(wrs[0]) * k);
		for (i = 0; i < k; i++) {
			wrs[i].wr_id = wr_id[done + i];
			wrs[i].sg_list = (struct ibv_sge *)&sge[done + i];
			wrs[i].num_sge = 1;
			wrs[i].opcode = IBV_WR_SEND;
			wrs[i].send_flags =
				((signaled[done + i] & VBR_GLUE_SEND_SIGNALED) ?
				 IBV_SEND_SIGNALED : 0) |
				((signaled[done + i] & VBR_GLUE_SEND_IP_CSUM) ?
				 IBV_SEND_IP_CSUM : 0);
			wrs[i].next = i + 1 < k ? &wrs[i + 1] : NULL;
		}
		if (ibv_post_send(qp, wrs, &bad) != 0)
			return done + (unsigned int)(bad - wrs);
		done += k;
	}
	return done;
}

/* Standard verbs keep a CQ's ring to the provider. */
static int
vbr_ibv_cq_peek(struct ibv_cq_ex *cq, struct vbr_glue_cq_peek *peek)
{
	(void)cq;
	(void)peek;
	return ENOTSUP;
}

__attribute__((visibility("default")))
const struct vbr_glue vbr_glue_ibv = {
	.version = VBR_GLUE_VERSION,
	.name = "ibverbs",
	.port_open = vbr_ibv_port_open,
	.port_close = vbr_ibv_port_close,
	.port_rebind = vbr_ibv_port_rebind,
	.port_set_mtu = vbr_ibv_port_set_mtu,
	.port_set_rx_mtu = vbr_ibv_port_set_rx_mtu,
	.get_device_list = ibv_get_device_list,
	.free_device_list = ibv_free_device_list,
	.get_device_name = vbr_ibv_get_device_name,
	.open_device = ibv_open_device,
	.close_device = ibv_close_device,
	.query_device_ex = vbr_ibv_query_device_ex,
	.query_port = vbr_ibv_query_port,
	.query_port_mac = vbr_ibv_query_port_mac,
	.query_port_counters = vbr_ibv_query_port_counters,
	.get_async_event = ibv_get_async_event,
	.ack_async_event = ibv_ack_async_event,
	.alloc_pd = ibv_alloc_pd,
	.dealloc_pd = ibv_dealloc_pd,
	.reg_mr = vbr_ibv_reg_mr,
	.dereg_mr = ibv_dereg_mr,
	.create_cq_ex = vbr_ibv_create_cq_ex,
	.destroy_cq = ibv_destroy_cq,
	.create_qp_ex = vbr_ibv_create_qp_ex,
	.modify_qp = ibv_modify_qp,
	.modify_qp_rate_limit = ibv_modify_qp_rate_limit,
	.destroy_qp = ibv_destroy_qp,
	.create_wq = vbr_ibv_create_wq,
	.modify_wq = vbr_ibv_modify_wq,
	.destroy_wq = vbr_ibv_destroy_wq,
	.create_rwq_ind_table = vbr_ibv_create_rwq_ind_table,
	.destroy_rwq_ind_table = vbr_ibv_destroy_rwq_ind_table,
	.create_flow = vbr_ibv_create_flow,
	.destroy_flow = vbr_ibv_destroy_flow,
	.create_counters = vbr_ibv_create_counters,
	.destroy_counters = vbr_ibv_destroy_counters,
	.attach_counters_point_flow = vbr_ibv_attach_counters_point_flow,
	.read_counters = vbr_ibv_read_counters,
	.poll_cq_burst = vbr_ibv_poll_cq_burst,
	.post_wq_recv_burst = vbr_ibv_post_wq_recv_burst,
	.post_send_burst = vbr_ibv_post_send_burst,
	.query_port_ex = vbr_ibv_query_port_ex,
	.port_set_link = vbr_ibv_port_set_link,
	.poll_cq_burst_ol = vbr_ibv_poll_cq_burst_ol,
	.query_rt_values_ex = vbr_ibv_query_rt_values_ex,
	.counter_set_auto_mode = vbr_ibv_counter_set_auto_mode,
	.counter_get_mode = vbr_ibv_counter_get_mode,
	.counter_bind_qp = vbr_ibv_counter_bind_qp,
	.counter_unbind_qp = vbr_ibv_counter_unbind_qp,
	.counter_list = vbr_ibv_counter_list,
	.mr_list = vbr_ibv_mr_list,
	.create_comp_channel = ibv_create_comp_channel,
	.destroy_comp_channel = ibv_destroy_comp_channel,
	.get_cq_event = ibv_get_cq_event,
	.ack_cq_events = ibv_ack_cq_events,
	.cq_peek = vbr_ibv_cq_peek,
	.port_vport = vbr_ibv_port_vport,
	.query_qp = ibv_query_qp,
};
