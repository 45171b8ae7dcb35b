/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The swverbs call table, linked into the PMD (with the device lifecycle of
 * a wire= port: wire string, engine placement, device creation), the loader
 * of the ibverbs table, which lives in a separate object so that the PMD
 * itself links no optional library, and the list of backends the devargs
 * choose from.
 */

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rte_common.h>
#include <rte_lcore.h>

#include <swverbs.h>

#include "vbr_glue.h"
#include "vbr_utils.h"

static const struct vbr_glue vbr_glue_swverbs;

/*
 * Wire strings: parsed by swverbs' own parser (swv_wire_parse(), which the
 * device uses too); the devargs check, the share_wire rule and the
 * messages all read its result.
 */
struct vbr_sw_wire {
	enum swv_wire_kind kind;
	const char *name;	/* after the ':', NULL for loop */
};

/* Parse a wire string into *w. Return 0 or EINVAL with why[len] set. */
static int
vbr_sw_wire_parse(const char *wire, struct vbr_sw_wire *w, char *why,
		  size_t len)
{
	switch (swv_wire_parse(wire, &w->kind, &w->name)) {
	case 0:
		return 0;
	case ENOENT:
		snprintf(why, len, "wire=%s: name missing after ':'", wire);
		return EINVAL;
	default:
		snprintf(why, len, "wire=%s: unknown wire kind (loop, "
			 "pair:<name>, af_packet:<ifname>, "
			 "af_xdp:<ifname>[:<queue>])", wire);
		return EINVAL;
	}
}

/* The devargs of a wire= port besides wire= and mac=. */
#define VBR_SW_ARG_ENGINE_CPU "engine_cpu"
#define VBR_SW_ARG_SHARE_WIRE "share_wire"
#define VBR_SW_ARG_PROFILE "profile"

/*
 * The swverbs profile of a wire= port when profile= is not given: "mlx5",
 * swverbs' own default (the driver keeps to what a ConnectX accepts).
 */
#define VBR_SW_PROFILE_DEFAULT "mlx5"

static const char * const vbr_sw_args[] = {
	VBR_SW_ARG_ENGINE_CPU,
	VBR_SW_ARG_SHARE_WIRE,
	VBR_SW_ARG_PROFILE,
	NULL,
};

/** A wire= port's devargs, parsed. */
struct vbr_sw_conf {
	struct vbr_sw_wire wire;	/* wire= */
	int engine_cpu;			/* engine_cpu=, -1: not given */
	unsigned int share_wire:1;	/* share_wire=1 */
	unsigned int profile;		/* SWV_DEVICE_PROFILE_* flag */
};

static int
vbr_sw_conf_parse(const struct vbr_glue_port_conf *conf,
		  struct vbr_sw_conf *sw, char *why, size_t len)
{
	unsigned int i;
	int ret;

	memset(sw, 0, sizeof(*sw));
	sw->engine_cpu = -1;
	swv_profile_parse(VBR_SW_PROFILE_DEFAULT, &sw->profile);
	for (i = 0; i < conf->nb_args; i++) {
		const char *key = conf->args[i].key;
		const char *value = conf->args[i].value;

		if (strcmp(key, VBR_SW_ARG_SHARE_WIRE) == 0) {
			if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0) {
				snprintf(why, len, "share_wire=%s: give 0 or 1",
					 value);
				return EINVAL;
			}
			sw->share_wire = value[0] == '1';
		} else if (strcmp(key, VBR_SW_ARG_PROFILE) == 0) {
			if (swv_profile_parse(value, &sw->profile) != 0) {
				snprintf(why, len, "profile=%s: give mlx5 or "
					 "full", value);
				return EINVAL;
			}
		} else if (strcmp(key, VBR_SW_ARG_ENGINE_CPU) == 0) {
			char *end;
			long cpu;

			errno = 0;
			cpu = strtol(value, &end, 10);
			if (errno != 0 || *end != '\0' || cpu < 0 ||
			    cpu >= RTE_MAX_LCORE * 4) {
				snprintf(why, len, "engine_cpu=%s: not a CPU "
					 "number", value);
				return EINVAL;
			}
			sw->engine_cpu = cpu;
		} else {
			snprintf(why, len, "%s= is not a swverbs devarg", key);
			return EINVAL;
		}
	}
	ret = vbr_sw_wire_parse(conf->target, &sw->wire, why, len);
	if (ret != 0)
		return ret;
	if (sw->share_wire && sw->wire.kind != SWV_WIRE_AF_PACKET) {
		snprintf(why, len, "share_wire=1 applies to "
			 "wire=af_packet:<ifname> only");
		return EINVAL;
	}
	return 0;
}

/*
 * Engine placement: engine_cpu= pins the engine threads; without it, the
 * first port of the process puts them on the main lcore's CPU. DPDK
 * applications (testpmd among them) keep busy-polling work off the main
 * lcore, while an unpinned engine may land on a forwarding core and halve
 * both.
 */
static int
vbr_sw_place_engine(const struct vbr_sw_conf *sw, char *why, size_t len)
{
	static bool placed;	/* an engine CPU was chosen in this process */
	int ret, cpu;

	if (sw->engine_cpu >= 0) {
		ret = swv_set_engine_cpu(sw->engine_cpu);
		if (ret != 0) {
			snprintf(why, len, "engine_cpu=%d: %s", sw->engine_cpu,
				 strerror(ret));
			return ret;
		}
		placed = true;
	} else if (!placed) {
		cpu = rte_lcore_to_cpu_id(rte_get_main_lcore());
		if (cpu >= 0 && swv_set_engine_cpu(cpu) == 0)
			VBR_LOG(DEBUG, "swverbs engine on CPU %d (main lcore)",
				cpu);
		placed = true;
	}
	return 0;
}

/* The sentence for an af_xdp wire's own errors; false for the others. */
static bool
vbr_sw_create_why_xdp(int err, const char *wire, char *why, size_t len)
{
	switch (err) {
	case EBUSY:
		snprintf(why, len, "wire=%s: the interface queue has an AF_XDP "
			 "socket already (one port per queue)", wire);
		return true;
	case EPERM:
		snprintf(why, len, "wire=%s: AF_XDP needs CAP_NET_RAW and "
			 "CAP_BPF/CAP_SYS_ADMIN (and a locked-memory limit "
			 "that holds its UMEM)", wire);
		return true;
	case EAFNOSUPPORT:
		snprintf(why, len, "wire=%s: the kernel has no AF_XDP sockets "
			 "(CONFIG_XDP_SOCKETS)", wire);
		return true;
	case EOPNOTSUPP:
		snprintf(why, len, "wire=%s: neither native nor generic XDP "
			 "works on the interface", wire);
		return true;
	case EINVAL:
		snprintf(why, len, "wire=%s: bad queue number, or the "
			 "interface has no such queue", wire);
		return true;
	default:
		return false;
	}
}

/* The sentence for a swv_device_create_flags() error. */
static void
vbr_sw_create_why(int err, const char *wire, const struct vbr_sw_conf *sw,
		  char *why, size_t len)
{
	if (sw->wire.kind == SWV_WIRE_AF_XDP &&
	    vbr_sw_create_why_xdp(err, wire, why, len))
		return;
	switch (err) {
	case EBUSY:
		if (sw->wire.kind == SWV_WIRE_PAIR)
			snprintf(why, len, "wire=%s: the pair cable already "
				 "has two ends", wire);
		else
			snprintf(why, len, "wire=%s: the interface is the wire "
				 "of another port already (both would get "
				 "every frame); give share_wire=1 to every "
				 "port on it to share it", wire);
		break;
	case ENODEV:
		snprintf(why, len, "wire=%s: no such network interface", wire);
		break;
	case EPERM:
		snprintf(why, len, "wire=%s: AF_PACKET needs CAP_NET_RAW",
			 wire);
		break;
	case EEXIST:
		snprintf(why, len, "a swverbs device of that name exists");
		break;
	case EINVAL:
		snprintf(why, len, "wire=%s: invalid wire", wire);
		break;
	default:
		snprintf(why, len, "wire=%s: %s", wire, strerror(err));
		break;
	}
}

/* A wire= port: create its swverbs device, named after the port; open it. */
static int
vbr_sw_port_open(const struct vbr_glue_port_conf *conf,
		 struct vbr_glue_port *port, char *why, size_t len)
{
	struct vbr_sw_conf sw;
	int ret, ret2;

	ret = vbr_sw_conf_parse(conf, &sw, why, len);
	if (ret != 0)
		return ret;
	if ((size_t)snprintf(port->ibdev_name, sizeof(port->ibdev_name), "%s",
			     conf->port) >= sizeof(port->ibdev_name)) {
		snprintf(why, len, "name too long");
		return EINVAL;
	}
	ret = vbr_sw_place_engine(&sw, why, len);
	if (ret != 0)
		return ret;
	ret = swv_device_create_flags(port->ibdev_name, conf->target,
				      conf->mac, sw.profile | (sw.share_wire ?
				      SWV_DEVICE_SHARE_WIRE : 0));
	if (ret != 0) {
		vbr_sw_create_why(ret, conf->target, &sw, why, len);
		return ret;
	}
	ret = vbr_glue_open_named(&vbr_glue_swverbs, port->ibdev_name,
				  &port->ctx, why, len);
	if (ret != 0) {
		ret2 = swv_device_destroy(port->ibdev_name);
		if (ret2 != 0)
			VBR_LOG(ERR, "%s: swv_device_destroy: %s",
				port->ibdev_name, strerror(ret2));
		return ret;
	}
	port->max_frame = SWV_MAX_FRAME;
	return 0;
}

static int
vbr_sw_port_close(struct ibv_context *context, char *why, size_t len)
{
	char name[SWV_NAME_MAX];
	int ret;

	snprintf(name, sizeof(name), "%s", context->device->name);
	ret = swv_close_device(context);
	if (ret != 0) {
		snprintf(why, len, "close_device: %s", strerror(ret));
		return ret;
	}
	ret = swv_device_destroy(name);
	if (ret != 0)
		snprintf(why, len, "swv_device_destroy: %s", strerror(ret));
	return ret;
}

static int
vbr_sw_port_rebind(struct ibv_context *context, char *why, size_t len)
{
	int ret = swv_device_rebind(context->device->name);

	switch (ret) {
	case 0:
		break;
	case ENODEV:
		snprintf(why, len, "its interface was deleted and none has "
			 "its name now: create it, then start the port again");
		break;
	case EBUSY:
		snprintf(why, len, "the re-created interface is the wire of "
			 "another port now");
		break;
	default:
		snprintf(why, len, "cannot bind the re-created interface: %s",
			 strerror(ret));
		break;
	}
	return ret;
}

static int
vbr_sw_port_set_mtu(struct ibv_context *context, uint32_t mtu, char *why,
		    size_t len)
{
	int ret = swv_set_port_mtu(context, mtu);

	if (ret != 0)
		snprintf(why, len, "MTU %u: the wire cannot carry it: %s", mtu,
			 strerror(ret));
	return ret;
}

static int
vbr_sw_query_port_counters(struct ibv_context *context,
			   struct vbr_glue_port_counters *counters)
{
	struct swv_port_counters c;
	int ret;

	ret = swv_query_port_counters(context, &c);
	if (ret != 0)
		return ret;
	counters->out_of_buffer = c.rx_out_of_buffer;
	counters->no_match = c.rx_no_match;
	counters->rx_errors = c.rx_errors;
	counters->dropped = c.rx_dropped;
	counters->runts = c.rx_runts;
	counters->valid = VBR_GLUE_CNT_OUT_OF_BUFFER | VBR_GLUE_CNT_NO_MATCH |
			  VBR_GLUE_CNT_RX_ERRORS | VBR_GLUE_CNT_DROPPED |
			  VBR_GLUE_CNT_RUNTS;
	return 0;
}

static const struct vbr_glue vbr_glue_swverbs = {
	.version = VBR_GLUE_VERSION,
	.name = "swverbs",
	.port_open = vbr_sw_port_open,
	.port_close = vbr_sw_port_close,
	.port_rebind = vbr_sw_port_rebind,
	.port_set_mtu = vbr_sw_port_set_mtu,
	.get_device_list = swv_get_device_list,
	.free_device_list = swv_free_device_list,
	.get_device_name = swv_get_device_name,
	.open_device = swv_open_device,
	.close_device = swv_close_device,
	.query_device_ex = swv_query_device_ex,
	.query_port = swv_query_port,
	.query_port_mac = swv_query_port_mac,
	.query_port_counters = vbr_sw_query_port_counters,
	.get_async_event = swv_get_async_event,
	.ack_async_event = swv_ack_async_event,
	.alloc_pd = swv_alloc_pd,
	.dealloc_pd = swv_dealloc_pd,
	.reg_mr = swv_reg_mr,
	.dereg_mr = swv_dereg_mr,
	.create_cq_ex = swv_create_cq_ex,
	.destroy_cq = swv_destroy_cq,
	.create_qp_ex = swv_create_qp_ex,
	.modify_qp = swv_modify_qp,
	.destroy_qp = swv_destroy_qp,
	.create_wq = swv_create_wq,
	.modify_wq = swv_modify_wq,
	.destroy_wq = swv_destroy_wq,
	.create_rwq_ind_table = swv_create_rwq_ind_table,
	.destroy_rwq_ind_table = swv_destroy_rwq_ind_table,
	.create_flow = swv_create_flow,
	.destroy_flow = swv_destroy_flow,
	.create_counters = swv_create_counters,
	.destroy_counters = swv_destroy_counters,
	.attach_counters_point_flow = swv_attach_counters_point_flow,
	.read_counters = swv_read_counters,
};

/* Loaded once; handles stay open for the life of the process. */
static const struct vbr_glue *vbr_glue_ibv_table;
static char vbr_glue_why[PATH_MAX + 512];

/* Where the glue object is: VBR_GLUE_PATH, else next to this PMD. */
static int
vbr_glue_path(char *path, size_t size)
{
	const char *env = getenv("VBR_GLUE_PATH");
	struct stat st;
	Dl_info info;
	char *slash;
	int n;

	if (env != NULL && env[0] != '\0') {
		if (stat(env, &st) == 0 && S_ISDIR(st.st_mode))
			n = snprintf(path, size, "%s/%s", env,
				     VBR_GLUE_IBV_LIB);
		else
			n = snprintf(path, size, "%s", env);
		return n < 0 || (size_t)n >= size ? -1 : 0;
	}
	if (dladdr((void *)(uintptr_t)vbr_glue_ibverbs_load, &info) == 0 ||
	    info.dli_fname == NULL)
		return -1;
	n = snprintf(path, size, "%s", info.dli_fname);
	if (n < 0 || (size_t)n >= size)
		return -1;
	slash = strrchr(path, '/');
	if (slash == NULL) {
		n = snprintf(path, size, "vbr-glue/%s", VBR_GLUE_IBV_LIB);
	} else {
		size_t dir_len = slash - path + 1;

		n = snprintf(slash + 1, size - dir_len, "vbr-glue/%s",
			     VBR_GLUE_IBV_LIB);
		if (n >= 0)
			n += dir_len;
	}
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

const struct vbr_glue *
vbr_glue_ibverbs_load(const char **why)
{
	char path[PATH_MAX];
	void *ibv, *glue;
	const struct vbr_glue *table;

	if (vbr_glue_ibv_table != NULL)
		return vbr_glue_ibv_table;
	*why = vbr_glue_why;
	ibv = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (ibv == NULL) {
		snprintf(vbr_glue_why, sizeof(vbr_glue_why),
			 "rdma-core is not installed (libibverbs.so.1: %s): "
			 "hardware devices cannot be opened; use "
			 "wire=loop|pair:<name>|af_packet:<ifname>|"
			 "af_xdp:<ifname>[:<queue>]", dlerror());
		return NULL;
	}
	if (vbr_glue_path(path, sizeof(path)) != 0) {
		snprintf(vbr_glue_why, sizeof(vbr_glue_why),
			 "cannot locate %s (set VBR_GLUE_PATH)",
			 VBR_GLUE_IBV_LIB);
		dlclose(ibv);
		return NULL;
	}
	glue = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (glue == NULL) {
		snprintf(vbr_glue_why, sizeof(vbr_glue_why),
			 "cannot load the ibverbs glue %s: %s (set "
			 "VBR_GLUE_PATH to its file or folder)", path,
			 dlerror());
		dlclose(ibv);
		return NULL;
	}
	table = dlsym(glue, VBR_GLUE_IBV_SYMBOL);
	if (table == NULL) {
		snprintf(vbr_glue_why, sizeof(vbr_glue_why),
			 "%s has no symbol %s: wrong file", path,
			 VBR_GLUE_IBV_SYMBOL);
		dlclose(glue);
		dlclose(ibv);
		return NULL;
	}
	if (strcmp(table->version, VBR_GLUE_VERSION) != 0) {
		snprintf(vbr_glue_why, sizeof(vbr_glue_why),
			 "%s is version %.64s, this PMD needs version %s: "
			 "the glue object is from another vbr build; use the "
			 "vbr-glue/%s built with this PMD (or point "
			 "VBR_GLUE_PATH at it)", path, table->version,
			 VBR_GLUE_VERSION, VBR_GLUE_IBV_LIB);
		dlclose(glue);
		dlclose(ibv);
		return NULL;
	}
	vbr_glue_ibv_table = table;
	*why = NULL;
	return table;
}

static const struct vbr_glue *
vbr_glue_swverbs_load(const char **why)
{
	*why = NULL;
	return &vbr_glue_swverbs;
}

const struct vbr_glue_backend vbr_glue_backends[] = {
	{
		.key = "dev",
		.usage = "dev=<verbs device>",
		.args = (const char * const []){ NULL },
		.load = vbr_glue_ibverbs_load,
	},
	{
		.key = "wire",
		.usage = "wire=loop|pair:<name>|af_packet:<ifname>|"
			 "af_xdp:<ifname>[:<queue>]",
		.args = vbr_sw_args,
		.load = vbr_glue_swverbs_load,
	},
	{ .key = NULL },
};
