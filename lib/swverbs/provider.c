/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * swverbs as an rdma-core provider: the second door to the same devices.
 *
 * The direct door hands a program swverbs' own contexts (swv_open_device(),
 * verbs_ctx.c; the PMD's wire= ports). This one lets the unmodified system
 * libibverbs find and drive swverbs devices, so that any verbs program --
 * ibv_devinfo, rdma-core's tests, vbr's libibverbs glue, the code a
 * ConnectX user runs -- sees one as an RDMA device:
 *
 * - libibverbs lists the devices of the sysfs tree $SYSFS_PATH names
 *   (devtools/swverbs-sysfs.sh writes it; libibverbs reads sysfs when RDMA
 *   netlink fails) and matches this provider to those whose
 *   device/modalias is "swverbs:<wire>";
 * - alloc_device reads what the tree says of the device: its wire
 *   (device/swverbs_wire, a wire= value of vbr), profile
 *   (device/swverbs_profile: mlx5, the default, mlx5-noburst, mlx5-vf
 *   or full) and MAC
 *   (device/swverbs_mac; without it, swverbs' own: the interface's, or
 *   one made from the name);
 * - alloc_context creates the swverbs device on its first open in the
 *   process (run by swverbs' engine thread) and destroys it when its last
 *   context closes; the context is a swverbs context built inside the
 *   verbs_context libibverbs allocates, with the swv_* entry points the
 *   direct door calls, installed with verbs_set_ops(). The provider owns
 *   async_fd: swverbs' event pipe, 16-byte ib_uverbs_async_event_desc
 *   records as the kernel writes them.
 *
 * What libibverbs does by itself on cmd_fd (/dev/full here: every command
 * write fails with ENOSPC, every ioctl with ENOTTY) fails cleanly or falls
 * back to the tree, except ibv_create_comp_channel(), which only the write()
 * interposer of a preloaded provider answers (provider_preload.c).
 *
 * This object has its own copy of swverbs, separate from any other in the
 * process (the PMD's): the version script keeps every symbol but the
 * interposers local. Built only against the driver.h of the private ABI the
 * installed libibverbs.so.1 exports (lib/swverbs/meson.build).
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <infiniband/driver.h>

#include "swv_priv.h"
#include "swv_preload.h"

/* swverbs' mirrors of driver.h's layouts (swv_priv.h) are driver.h's. */
static_assert(sizeof(struct swv_verbs_mr) == sizeof(struct verbs_mr) &&
	      offsetof(struct swv_verbs_mr, mr_type) ==
	      offsetof(struct verbs_mr, mr_type) &&
	      offsetof(struct swv_verbs_mr, access) ==
	      offsetof(struct verbs_mr, access) &&
	      sizeof(enum ibv_mr_type) == sizeof(int) &&
	      IBV_MR_TYPE_MR == 0, "struct verbs_mr differs from its mirror");
static_assert(sizeof(struct swv_verbs_qp) == sizeof(struct verbs_qp) &&
	      offsetof(struct swv_verbs_qp, comp_mask) ==
	      offsetof(struct verbs_qp, comp_mask) &&
	      offsetof(struct swv_verbs_qp, xrcd) ==
	      offsetof(struct verbs_qp, xrcd),
	      "struct verbs_qp differs from its mirror");
static_assert(offsetof(struct swv_mr, vmr) == 0 &&
	      offsetof(struct swv_qp, vqp) == 0,
	      "swverbs' MRs and QPs begin with what libibverbs reads");
static_assert(sizeof(struct swv_async_desc) ==
	      sizeof(struct ib_uverbs_async_event_desc) &&
	      offsetof(struct swv_async_desc, element) ==
	      offsetof(struct ib_uverbs_async_event_desc, element) &&
	      offsetof(struct swv_async_desc, event_type) ==
	      offsetof(struct ib_uverbs_async_event_desc, event_type),
	      "async event records differ from the kernel's");

#define SWV_PROV_VAL_MAX 128	/* the longest value of a tree file */

/** A device of the tree, as libibverbs lists it. */
struct swv_pdev {
	struct verbs_device vdev;	/**< libibverbs' (first) */
	char wire[SWV_PROV_VAL_MAX];	/**< device/swverbs_wire, or "" */
	char profile[SWV_PROV_VAL_MAX];	/**< device/swverbs_profile, or "" */
	char mac[SWV_PROV_VAL_MAX];	/**< device/swverbs_mac, or "" */
	unsigned int opens;		/**< contexts open (swv_prov_lock) */
	bool created;			/**< the provider made the device */
	/* ports/1/hw_counters/out_of_buffer, served while open (hwc_*()) */
	char hwc_path[PATH_MAX];	/**< the tree's FIFO */
	pthread_t hwc_thread;		/**< its server */
	struct ibv_device *hwc_dev;	/**< swverbs' device it counts for */
	bool hwc_on;			/**< the server runs */
	bool hwc_stop;			/**< the server is to end */
};

/* The provider's devices' lifecycle: open and close of contexts. */
static pthread_mutex_t swv_prov_lock = PTHREAD_MUTEX_INITIALIZER;

static inline struct swv_pdev *
to_swv_pdev(struct ibv_device *ibdev)
{
	return container_of(ibdev, struct swv_pdev, vdev.device);
}

/* A line on stderr: libibverbs' own log is off unless asked for. */
static void __attribute__((format(printf, 1, 2)))
prov_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "swverbs provider: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* The value of a file of the device's tree, or "" when it has none. */
static void
read_attr(struct verbs_sysfs_dev *sd, const char *file, char *buf,
	  size_t len)
{
	if (ibv_read_ibdev_sysfs_file(buf, len, sd, "device/%s", file) < 0)
		buf[0] = '\0';
}

static struct verbs_device *
swv_prov_alloc_device(struct verbs_sysfs_dev *sd)
{
	struct swv_pdev *p;

	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	read_attr(sd, "swverbs_wire", p->wire, sizeof(p->wire));
	read_attr(sd, "swverbs_profile", p->profile, sizeof(p->profile));
	read_attr(sd, "swverbs_mac", p->mac, sizeof(p->mac));
	return &p->vdev;
}

static void
swv_prov_uninit_device(struct verbs_device *vdev)
{
	free(container_of(vdev, struct swv_pdev, vdev));
}

/* "aa:bb:cc:dd:ee:ff" into mac[6]; 0 or EINVAL. */
static int
parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	char end;
	int i;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3],
		   &b[4], &b[5], &end) != 6)
		return EINVAL;
	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

/*
 * Create the device the tree describes (swv_prov_lock held). Each bad value
 * is logged with the file it came from. Return 0 or a positive errno.
 */
static int
pdev_create(struct swv_pdev *p)
{
	const char *path = p->vdev.sysfs->ibdev_path;
	const char *name = p->vdev.sysfs->ibdev_name;
	struct swv_device_attr attr = { .flags = 0, .engine = NULL };
	uint8_t mac[6];
	char note[256];
	int ret;

	if (p->wire[0] == '\0') {
		prov_log("%s: %s/device/swverbs_wire: missing or empty (give "
			 "a wire: loop, pair:<cable>, shm:<cable>, "
			 "af_packet:<ifname>, af_xdp:<ifname>[:<queue>])",
			 name, path);
		return EINVAL;
	}
	if (swv_wire_parse(p->wire, NULL, NULL) != 0) {
		prov_log("%s: %s/device/swverbs_wire: unknown wire \"%s\" "
			 "(loop, pair:<cable>, shm:<cable>, af_packet:<ifname>, "
			 "af_xdp:<ifname>[:<queue>])", name, path, p->wire);
		return EINVAL;
	}
	if (swv_profile_parse(p->profile[0] != '\0' ? p->profile : "mlx5",
			      &attr.flags) != 0) {
		prov_log("%s: %s/device/swverbs_profile: unknown profile \"%s\" "
			 "(mlx5, mlx5-noburst, mlx5-vf or full)", name, path,
			 p->profile);
		return EINVAL;
	}
	if (p->mac[0] != '\0' && parse_mac(p->mac, mac) != 0) {
		prov_log("%s: %s/device/swverbs_mac: not a MAC address: \"%s\"",
			 name, path, p->mac);
		return EINVAL;
	}
	ret = swv_device_create_attr(name, p->wire,
				     p->mac[0] != '\0' ? mac : NULL, &attr);
	if (ret == EEXIST)
		return 0;	/* made in this process already: attach */
	if (ret != 0) {
		prov_log("%s: %s/device/swverbs_wire: wire=%s: %s", name, path,
			 p->wire, ret == ENODEV ? "no such network interface" :
			 strerror(ret));
		return ret;
	}
	p->created = true;
	if (swv_device_wire_note(name, note, sizeof(note)) == 0 &&
	    note[0] != '\0')
		prov_log("%s: %s", name, note);
	return 0;
}

/* swverbs' ibv_device of that name, or NULL. */
static struct ibv_device *
swv_ibdev(const char *name)
{
	struct ibv_device **list, *d = NULL;
	int n, i;

	list = swv_get_device_list(&n);
	if (list == NULL)
		return NULL;
	for (i = 0; i < n; i++)
		if (strcmp(swv_get_device_name(list[i]), name) == 0)
			d = list[i];
	swv_free_device_list(list);
	return d;
}

/*
 * The port's hw_counters, as a kernel computes them at each read: a
 * kernel's sysfs file gives the count of the moment, a file of the tree
 * could only give what was written last. So the tree holds a FIFO for each
 * counter served (devtools/swverbs-sysfs.sh makes them), and while a
 * context of the device is open in this process a thread of the provider
 * answers each open of it for reading with the count of that moment, one
 * line, then end of file: `cat` and vbr's ibverbs glue read it as they
 * read a NIC's. out_of_buffer: frames dropped for want of a posted receive
 * WQE, as mlx5's (swv_port_counters.rx_out_of_buffer).
 */
/*
 * Answer the readers of an open FIFO: the line, then again every 10 ms
 * until none is left (POLLERR; EPIPE) or for a second at most. A reader
 * that opens the FIFO while the one before has not closed it yet shares
 * this opening: closing at once would give it end of file and no count;
 * so each reader gets a line of its own, and reads the first.
 */
static void
hwc_answer(int fd, const char *line, int n)
{
	struct pollfd pf;
	int k;

	for (k = 0; k < 100; k++) {
		if (write(fd, line, (size_t)n) != n)
			return;
		pf.fd = fd;
		pf.events = 0;
		pf.revents = 0;
		if (poll(&pf, 1, 10) > 0 && (pf.revents & POLLERR))
			return;
	}
}

static void *
hwc_serve(void *arg)
{
	struct swv_pdev *p = arg;
	struct swv_port_counters pc;
	struct ibv_context *c;
	sigset_t pipe;
	char line[32];
	int fd, n;

	/* A reader gone before the answer: EPIPE here, not the process's end. */
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe, NULL);
	c = swv_open_device(p->hwc_dev);
	for (;;) {
		/* until a reader opens it, or hwc_stop()'s own open */
		fd = open(p->hwc_path, O_WRONLY | O_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (__atomic_load_n(&p->hwc_stop, __ATOMIC_ACQUIRE)) {
			close(fd);
			break;
		}
		memset(&pc, 0, sizeof(pc));
		if (c != NULL)
			(void)swv_query_port_counters(c, &pc);
		n = snprintf(line, sizeof(line), "%" PRIu64 "\n",
			     pc.rx_out_of_buffer);
		hwc_answer(fd, line, n);
		close(fd);
	}
	if (c != NULL)
		swv_close_device(c);
	return NULL;
}

/* Serve the device's hw_counters FIFO, if its tree has one. */
static void
hwc_start(struct swv_pdev *p, struct ibv_device *sdev)
{
	struct stat st;

	snprintf(p->hwc_path, sizeof(p->hwc_path),
		 "%s/ports/1/hw_counters/out_of_buffer",
		 p->vdev.sysfs->ibdev_path);
	if (stat(p->hwc_path, &st) != 0 || !S_ISFIFO(st.st_mode))
		return;
	p->hwc_stop = false;
	p->hwc_dev = sdev;
	if (pthread_create(&p->hwc_thread, NULL, hwc_serve, p) != 0) {
		prov_log("%s: %s: no thread to serve it",
			 p->vdev.sysfs->ibdev_name, p->hwc_path);
		return;
	}
	p->hwc_on = true;
}

/*
 * End the server (it takes no lock: swv_prov_lock may be held). Its
 * blocking open for writing ends when a reader opens the FIFO: this one,
 * held open until the thread is gone, so that an open after a last answer
 * ends too.
 */
static void
hwc_end(struct swv_pdev *p)
{
	int fd;

	if (!p->hwc_on)
		return;
	__atomic_store_n(&p->hwc_stop, true, __ATOMIC_RELEASE);
	fd = open(p->hwc_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	pthread_join(p->hwc_thread, NULL);
	if (fd >= 0)
		close(fd);
	p->hwc_on = false;
}

/* The last context of the device closed (swv_prov_lock held). */
static void
pdev_put(struct swv_pdev *p)
{
	int ret;

	if (--p->opens > 0)
		return;
	hwc_end(p);
	if (!p->created)
		return;
	ret = swv_device_destroy(p->vdev.sysfs->ibdev_name);
	if (ret != 0)
		prov_log("%s: cannot destroy the device: %s",
			 p->vdev.sysfs->ibdev_name, strerror(ret));
	p->created = false;
}

static struct ibv_mr *
swv_prov_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		uint64_t hca_va, int access)
{
	/* swverbs' MRs are addressed as the process sees them: no IOVA. */
	if (hca_va != (uintptr_t)addr) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return swv_reg_mr(pd, addr, length, access);
}

static int
swv_prov_dereg_mr(struct verbs_mr *vmr)
{
	return swv_dereg_mr(&vmr->ibv_mr);
}

static struct ibv_cq *
swv_prov_create_cq(struct ibv_context *context, int cqe,
		   struct ibv_comp_channel *channel, int comp_vector)
{
	/* libibverbs sets cq_context (verbs_init_cq()) */
	return swv_create_cq(context, cqe, NULL, channel, comp_vector);
}

/*
 * ibv_create_flow() as a kernel device sees it: libibverbs does not read
 * flow_attr->size (ibv_cmd_create_flow() walks num_of_specs specs by their
 * own hdr.size and tells uverbs the sum), so programs leave it at
 * sizeof(struct ibv_flow_attr), as pyverbs does. The direct door bounds the
 * specs by it: hand it a copy whose size is what the specs add up to. A
 * spec size that cannot be one is EINVAL, as libibverbs answers an unknown
 * spec.
 */
static struct ibv_flow *
swv_prov_create_flow(struct ibv_qp *qp, struct ibv_flow_attr *attr)
{
	struct ibv_flow_attr *copy;
	struct ibv_flow_spec spec;
	struct ibv_flow *flow;
	const uint8_t *p;
	size_t len = 0;
	unsigned int i;
	int err;

	if (attr == NULL)
		return swv_create_flow(qp, attr);
	p = (const uint8_t *)(attr + 1);
	for (i = 0; i < attr->num_of_specs; i++) {
		memcpy(&spec.hdr, p + len, sizeof(spec.hdr));
		if (spec.hdr.size < sizeof(spec.hdr) ||
		    spec.hdr.size > sizeof(spec)) {
			errno = EINVAL;
			return NULL;
		}
		len += spec.hdr.size;
	}
	if (attr->size == sizeof(*attr) + len)
		return swv_create_flow(qp, attr);
	copy = malloc(sizeof(*attr) + len);
	if (copy == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(copy, attr, sizeof(*attr) + len);
	copy->size = (uint16_t)(sizeof(*attr) + len);
	flow = swv_create_flow(qp, copy);
	err = errno;
	free(copy);
	errno = err;
	return flow;
}

static void swv_prov_free_context(struct ibv_context *ibctx);

/* The swv_* entry points of verbs_ctx.c, and those only libibverbs calls. */
static const struct verbs_context_ops swv_prov_ctx_ops = {
	.alloc_pd = swv_alloc_pd,
	.attach_counters_point_flow = swv_attach_counters_point_flow,
	.cq_event = swv_cq_event_read,
	.create_counters = swv_create_counters,
	.create_cq = swv_prov_create_cq,
	.create_cq_ex = swv_create_cq_ex,
	.create_flow = swv_prov_create_flow,
	.create_qp = swv_create_qp,
	.create_qp_ex = swv_create_qp_ex,
	.create_rwq_ind_table = swv_create_rwq_ind_table,
	.create_wq = swv_create_wq,
	.dealloc_pd = swv_dealloc_pd,
	.dereg_mr = swv_prov_dereg_mr,
	.destroy_counters = swv_destroy_counters,
	.destroy_cq = swv_destroy_cq,
	.destroy_flow = swv_destroy_flow,
	.destroy_qp = swv_destroy_qp,
	.destroy_rwq_ind_table = swv_destroy_rwq_ind_table,
	.destroy_wq = swv_destroy_wq,
	.free_context = swv_prov_free_context,
	.modify_qp = swv_modify_qp,
	.modify_qp_rate_limit = swv_modify_qp_rate_limit,
	.modify_wq = swv_modify_wq,
	.poll_cq = swv_poll_cq,
	.post_recv = swv_post_recv,
	.post_send = swv_post_send,
	.query_device_ex = swv_vctx_query_device_ex,
	.query_port = swv_query_port,
	.query_qp = swv_query_qp,
	.query_rt_values = swv_query_rt_values_ex,
	.read_counters = swv_read_counters,
	.reg_mr = swv_prov_reg_mr,
	.req_notify_cq = swv_req_notify_cq,
};

static struct verbs_context *
swv_prov_alloc_context(struct ibv_device *ibdev, int cmd_fd,
		       void *private_data)
{
	struct swv_pdev *p = to_swv_pdev(ibdev);
	const char *name = p->vdev.sysfs->ibdev_name;
	struct ibv_device *sdev;
	struct swv_context *ctx;
	int ret;

	(void)private_data;
	/* cmd_fd is the context's from here on: closed with it */
	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, vctx,
					   RDMA_DRIVER_UNKNOWN);
	if (ctx == NULL)
		return NULL;
	pthread_mutex_lock(&swv_prov_lock);
	ret = p->opens == 0 ? pdev_create(p) : 0;
	if (ret != 0) {
		pthread_mutex_unlock(&swv_prov_lock);
		goto err_ctx;
	}
	p->opens++;
	sdev = swv_ibdev(name);
	ret = sdev != NULL ? swv_ctx_init(ctx, sdev) : ENODEV;
	if (ret != 0) {
		pdev_put(p);
		pthread_mutex_unlock(&swv_prov_lock);
		prov_log("%s: cannot open the device: %s", name, strerror(ret));
		goto err_ctx;
	}
	if (p->opens == 1)
		hwc_start(p, sdev);
	pthread_mutex_unlock(&swv_prov_lock);
	ctx->provider = true;
	ctx->vctx.context.num_comp_vectors = 1;
	verbs_set_ops(&ctx->vctx, &swv_prov_ctx_ops);
	if (cmd_fd >= 0 && swv_preload_cmd_fd_add(cmd_fd) != 0)
		prov_log("%s: too many contexts open: this one has no "
			 "completion channels", name);
	return &ctx->vctx;

err_ctx:
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
	errno = ret;
	return NULL;
}

static void
swv_prov_free_context(struct ibv_context *ibctx)
{
	struct swv_context *ctx = to_swv_ctx(ibctx);
	struct swv_pdev *p = to_swv_pdev(ibctx->device);
	int ret;

	ret = swv_ctx_fini(ctx);
	if (ret != 0) {
		/* libibverbs' close cannot fail: what the objects use stays */
		prov_log("%s: ibv_close_device() with objects still made on "
			 "the context (%u): it stays open", ibctx->device->name,
			 ctx->objs);
		return;
	}
	if (ibctx->cmd_fd >= 0)
		swv_preload_cmd_fd_del(ibctx->cmd_fd);
	verbs_uninit_context(&ctx->vctx);	/* closes cmd_fd, async_fd */
	pthread_mutex_lock(&swv_prov_lock);
	pdev_put(p);
	pthread_mutex_unlock(&swv_prov_lock);
	free(ctx);
}

/* A device of the tree is swverbs' when its device/modalias says so. */
static const struct verbs_match_ent swv_prov_match[] = {
	VERBS_MODALIAS_MATCH("swverbs:*", NULL),
	{},
};

static const struct verbs_device_ops swv_prov_dev_ops = {
	.name = "swverbs",
	.match_min_abi_version = 0,
	.match_max_abi_version = INT32_MAX,
	.match_table = swv_prov_match,
	.alloc_device = swv_prov_alloc_device,
	.uninit_device = swv_prov_uninit_device,
	.alloc_context = swv_prov_alloc_context,
};

PROVIDER_DRIVER(swverbs, swv_prov_dev_ops);
