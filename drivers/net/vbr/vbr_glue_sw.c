/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The swverbs call table, linked into the PMD (with the device lifecycle of
 * a wire= port: wire string, engine placement, device creation), the loader
 * of the ibverbs table, which lives in a separate object so that the PMD
 * itself links no optional library, and the list of backends the devargs
 * choose from.
 */

#include <assert.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sys/queue.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_alarm.h>
#include <rte_common.h>
#include <rte_kvargs.h>
#include <rte_lcore.h>
#include <rte_memory.h>
#include <rte_pause.h>
#include <rte_service.h>
#include <rte_service_component.h>
#include <rte_spinlock.h>
#include <rte_string_fns.h>

#include <swverbs.h>

#include "vbr_glue.h"
#include "vbr_netdev.h"
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
			 "pair:<name>, shm:<name>, af_packet:<ifname>, "
			 "af_xdp:<ifname>[:<queue>])", wire);
		return EINVAL;
	}
}

/* The devargs of a wire= port besides wire= and mac=. */
#define VBR_SW_ARG_ENGINE_CPU "engine_cpu"
#define VBR_SW_ARG_SHARE_WIRE "share_wire"
#define VBR_SW_ARG_PROFILE "profile"
#define VBR_SW_ARG_PROGRESS "progress"

/*
 * The swverbs profile of a wire= port when profile= is not given: "mlx5",
 * swverbs' own default (the driver keeps to what a ConnectX accepts).
 */
#define VBR_SW_PROFILE_DEFAULT "mlx5"

static const char * const vbr_sw_args[] = {
	VBR_SW_ARG_ENGINE_CPU,
	VBR_SW_ARG_SHARE_WIRE,
	VBR_SW_ARG_PROFILE,
	VBR_SW_ARG_PROGRESS,
	NULL,
};

/*
 * Progress models: what runs the port's swverbs device (its engine).
 * A third model is one more entry here and one more case where the port
 * opens (vbr_sw_port_open()).
 */
enum vbr_sw_progress {
	VBR_SW_PROGRESS_THREAD,		/* the default engine's thread */
	VBR_SW_PROGRESS_SERVICE,	/* an engine run by a DPDK service */
	VBR_SW_PROGRESS_INLINE,		/* the PMD's own verbs calls */
};

/*
 * Without progress=: inline, the model that costs the fewest cycles per
 * packet on every wire and takes no core beyond the application's (the
 * figures behind the choice are in the guide's Performance section);
 * engine_cpu= alone asks for the engine thread, so it means thread.
 */
#define VBR_SW_PROGRESS_DEFAULT VBR_SW_PROGRESS_INLINE

static const char * const vbr_sw_progress_names[] = {
	[VBR_SW_PROGRESS_THREAD] = "thread",
	[VBR_SW_PROGRESS_SERVICE] = "service",
	[VBR_SW_PROGRESS_INLINE] = "inline",
};

/** A wire= port's devargs, parsed. */
struct vbr_sw_conf {
	struct vbr_sw_wire wire;	/* wire= */
	int engine_cpu;			/* engine_cpu=, -1: not given */
	unsigned int share_wire:1;	/* share_wire=1 */
	unsigned int profile;		/* SWV_DEVICE_PROFILE_* flag */
	enum vbr_sw_progress progress;	/* progress= */
	bool progress_given;		/* progress= was there */
};

/* progress=<name>: 0, or EINVAL with why[len] set. */
static int
vbr_sw_progress_parse(const char *value, enum vbr_sw_progress *p, char *why,
		      size_t len)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(vbr_sw_progress_names); i++)
		if (strcmp(value, vbr_sw_progress_names[i]) == 0) {
			*p = (enum vbr_sw_progress)i;
			return 0;
		}
	snprintf(why, len, "progress=%s: give thread, service or inline",
		 value);
	return EINVAL;
}

/*
 * The progress model a swverbs port's devargs ask for (dump_priv): the
 * value of progress=, else thread with engine_cpu=, else the default.
 * args is the devargs string after the device name; NULL: none.
 */
const char *
vbr_glue_sw_progress_name(const char *args)
{
	struct rte_kvargs *kv = args != NULL ? rte_kvargs_parse(args, NULL) :
				NULL;
	const char *v, *name;
	enum vbr_sw_progress p = VBR_SW_PROGRESS_DEFAULT;
	char why[96];

	v = kv != NULL ? rte_kvargs_get(kv, VBR_SW_ARG_PROGRESS) : NULL;
	if (v != NULL) {
		if (vbr_sw_progress_parse(v, &p, why, sizeof(why)) != 0)
			p = VBR_SW_PROGRESS_DEFAULT;
	} else if (kv != NULL && rte_kvargs_count(kv, VBR_SW_ARG_ENGINE_CPU)) {
		p = VBR_SW_PROGRESS_THREAD;
	}
	name = vbr_sw_progress_names[p];
	rte_kvargs_free(kv);
	return name;
}

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
				snprintf(why, len, "profile=%s: give mlx5, "
					 "mlx5-noburst, mlx5-vf or full", value);
				return EINVAL;
			}
		} else if (strcmp(key, VBR_SW_ARG_PROGRESS) == 0) {
			ret = vbr_sw_progress_parse(value, &sw->progress, why,
						    len);
			if (ret != 0)
				return ret;
			sw->progress_given = true;
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
	if (!sw->progress_given)
		sw->progress = sw->engine_cpu >= 0 ? VBR_SW_PROGRESS_THREAD :
			       VBR_SW_PROGRESS_DEFAULT;
	if (sw->share_wire && sw->wire.kind != SWV_WIRE_AF_PACKET) {
		snprintf(why, len, "share_wire=1 applies to "
			 "wire=af_packet:<ifname> only");
		return EINVAL;
	}
	if (sw->engine_cpu >= 0 && sw->progress != VBR_SW_PROGRESS_THREAD) {
		snprintf(why, len, "engine_cpu= places the engine thread of "
			 "progress=thread; progress=%s has none",
			 vbr_sw_progress_names[sw->progress]);
		return EINVAL;
	}
	return 0;
}

/*
 * progress=service: the port's device is served by an engine of its own,
 * with no thread; a DPDK service runs its passes (swv_engine_run_once()) on
 * a service lcore. Both ends of a pair cable hand frames to each other on
 * one engine's pass (swverbs requires it), so the ports of a cable share
 * one engine and one service; any other port has its own.
 *
 * Services registered while EAL probes the devices (--vdev) are mapped to
 * the service lcores and started by EAL itself (it starts them with
 * defaults after the probe); a port probed later (hotplug) or a service the
 * application unmapped is mapped here at port start, to the service lcore
 * with the fewest services, which is started if it is not running. With no
 * service lcore at all, the port does not start.
 *
 * The callback never sleeps: an idle pass returns -EAGAIN (no work, which
 * service statistics count apart) after a look at each wire and queue.
 * Control path only (probe, start, close): one lock guards the list.
 */
struct vbr_sw_svc {
	TAILQ_ENTRY(vbr_sw_svc) next;
	char key[SWV_NAME_MAX + 8];	/* "pair:<cable>" or "port:<name>" */
	struct swv_engine *eng;
	uint32_t id;			/* DPDK service id */
	unsigned int refs;		/* ports on it */
};

/* A port served by a service, by its device name. */
struct vbr_sw_svc_port {
	TAILQ_ENTRY(vbr_sw_svc_port) next;
	char name[SWV_NAME_MAX];
	struct vbr_sw_svc *svc;
};

static TAILQ_HEAD(, vbr_sw_svc) vbr_sw_svcs =
	TAILQ_HEAD_INITIALIZER(vbr_sw_svcs);
static TAILQ_HEAD(, vbr_sw_svc_port) vbr_sw_svc_ports =
	TAILQ_HEAD_INITIALIZER(vbr_sw_svc_ports);
static rte_spinlock_t vbr_sw_svc_lock = RTE_SPINLOCK_INITIALIZER;

static int32_t
vbr_sw_service_run(void *arg)
{
	struct vbr_sw_svc *s = arg;

	return swv_engine_run_once(s->eng) > 0 ? 0 : -EAGAIN;
}

/* Stop and unregister a service, destroy its engine (no port left). */
static void
vbr_sw_svc_free(struct vbr_sw_svc *s)
{
	uint32_t cores[RTE_MAX_LCORE];
	int32_t i, n;

	rte_service_runstate_set(s->id, 0);
	rte_service_component_runstate_set(s->id, 0);
	/* The last pass under way ends: the engine is then ours. */
	while (rte_service_may_be_active(s->id) == 1)
		rte_pause();
	n = rte_service_lcore_list(cores, RTE_DIM(cores));
	for (i = 0; i < n; i++)
		rte_service_map_lcore_set(s->id, cores[i], 0);
	rte_service_component_unregister(s->id);
	swv_engine_destroy(s->eng);
	free(s);
}

/* The service for a port's key, new or shared; NULL with why[len] set. */
static struct vbr_sw_svc *
vbr_sw_svc_get(const char *key, char *why, size_t len)
{
	struct rte_service_spec spec;
	struct vbr_sw_svc *s;
	int ret;

	TAILQ_FOREACH(s, &vbr_sw_svcs, next)
		if (strcmp(s->key, key) == 0) {
			s->refs++;
			return s;
		}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		snprintf(why, len, "no memory for the port's service");
		return NULL;
	}
	snprintf(s->key, sizeof(s->key), "%s", key);
	s->eng = swv_engine_create();
	if (s->eng == NULL) {
		snprintf(why, len, "swv_engine_create: %s", strerror(errno));
		free(s);
		return NULL;
	}
	memset(&spec, 0, sizeof(spec));
	/* a name to find it by (rte_service_get_by_name()), cut to fit */
	memcpy(spec.name, "vbr_", 4);
	strlcpy(spec.name + 4, key, sizeof(spec.name) - 4);
	spec.callback = vbr_sw_service_run;
	spec.callback_userdata = s;
	spec.socket_id = SOCKET_ID_ANY;
	/* not MT-safe: DPDK runs it on one lcore at a time */
	ret = rte_service_component_register(&spec, &s->id);
	if (ret == 0)
		ret = rte_service_component_runstate_set(s->id, 1);
	if (ret == 0)
		ret = rte_service_runstate_set(s->id, 1);
	if (ret != 0) {
		snprintf(why, len, "cannot register the port's DPDK service: "
			 "%s", strerror(-ret));
		swv_engine_destroy(s->eng);
		free(s);
		return NULL;
	}
	s->refs = 1;
	TAILQ_INSERT_TAIL(&vbr_sw_svcs, s, next);
	return s;
}

static void
vbr_sw_svc_put(struct vbr_sw_svc *s)
{
	if (--s->refs > 0)
		return;
	TAILQ_REMOVE(&vbr_sw_svcs, s, next);
	vbr_sw_svc_free(s);
}

static struct vbr_sw_svc_port *
vbr_sw_svc_port_find(const char *name)
{
	struct vbr_sw_svc_port *p;

	TAILQ_FOREACH(p, &vbr_sw_svc_ports, next)
		if (strcmp(p->name, name) == 0)
			return p;
	return NULL;
}

/*
 * Port start: the port's service runs on a service lcore: mapped to one
 * (by the application or EAL, else here) that is running.
 * Return 0 or a positive errno with why[len] set.
 */
static int
vbr_sw_svc_start(struct vbr_sw_svc *s, char *why, size_t len)
{
	uint32_t cores[RTE_MAX_LCORE], best = RTE_MAX_LCORE;
	int32_t i, n, load, best_load = INT32_MAX, ret;

	n = rte_service_lcore_list(cores, RTE_DIM(cores));
	if (n <= 0) {
		snprintf(why, len, "progress=service needs a service lcore, "
			 "and the application has none: give EAL one with "
			 "-s <coremask> or -S <corelist> (a core of its own, "
			 "or an lcore mapped with --lcores, e.g. "
			 "--lcores 0@0,1@1,2@0 -S 2), or use "
			 "progress=thread");
		return ENODEV;
	}
	for (i = 0; i < n; i++)
		if (rte_service_map_lcore_get(s->id, cores[i]) == 1)
			return 0;	/* the application's (or EAL's) choice */
	for (i = 0; i < n; i++) {
		load = rte_service_lcore_count_services(cores[i]);
		if (load >= 0 && load < best_load) {
			best_load = load;
			best = cores[i];
		}
	}
	ret = rte_service_map_lcore_set(s->id, best, 1);
	if (ret == 0 && rte_service_lcore_may_be_active(best) != 1) {
		ret = rte_service_lcore_start(best);
		if (ret == -EALREADY)
			ret = 0;
	}
	if (ret != 0) {
		snprintf(why, len, "cannot run the port's service on service "
			 "lcore %u: %s", best, strerror(-ret));
		return -ret;
	}
	VBR_LOG(INFO, "service %s mapped to service lcore %u", s->key, best);
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

/*
 * progress=inline: the device's work runs in the port's verbs calls, and
 * so do its link checks. An application that makes none (its ports idle,
 * or link status read from the LSC cache) would never see a link change:
 * an EAL alarm queries the port every VBR_SW_INLINE_WATCH_US, which runs
 * the device's link check (and raises its async events). The thread
 * model's engine wakes as often when it sleeps deeply.
 */
#define VBR_SW_INLINE_WATCH_US 100000

static void
vbr_sw_inline_watch(void *arg)
{
	struct ibv_context *ctx = arg;
	struct ibv_port_attr pattr;

	swv_query_port(ctx, 1, &pattr);
	if (rte_eal_alarm_set(VBR_SW_INLINE_WATCH_US, vbr_sw_inline_watch,
			      ctx) != 0)
		VBR_LOG(ERR, "%s: cannot re-arm the link watch: link changes "
			"show only when the port is polled",
			ctx->device->name);
}

/* The sentence for a swv_device_create_flags() error. */
static void
vbr_sw_create_why(int err, const char *wire, const struct vbr_sw_conf *sw,
		  char *why, size_t len)
{
	int pids[2];

	if (sw->wire.kind == SWV_WIRE_AF_XDP &&
	    vbr_sw_create_why_xdp(err, wire, why, len))
		return;
	switch (err) {
	case EBUSY:
		if (sw->wire.kind == SWV_WIRE_SHM &&
		    swv_wire_shm_holders(sw->wire.name, pids) == 0 &&
		    pids[0] != 0 && pids[1] != 0)
			snprintf(why, len, "wire=%s: the shm cable already has "
				 "two ends, held by pids %d and %d", wire,
				 pids[0], pids[1]);
		else if (sw->wire.kind == SWV_WIRE_SHM &&
			 swv_wire_shm_holders(sw->wire.name, pids) == 0)
			snprintf(why, len, "wire=%s: another end of the shm "
				 "cable has been attaching or leaving for over "
				 "1 s (a stopped process?)", wire);
		else if (sw->wire.kind == SWV_WIRE_SHM)
			snprintf(why, len, "wire=%s: the shm cable already has "
				 "two ends", wire);
		else if (sw->wire.kind == SWV_WIRE_PAIR)
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
	case EXDEV:
		snprintf(why, len, "wire=%s: the other end of the pair cable "
			 "has another progress= model; both ends need the "
			 "same", wire);
		break;
	case EINVAL:
		snprintf(why, len, "wire=%s: invalid wire", wire);
		break;
	case EPROTO:
		snprintf(why, len, "wire=%s: the other end of the shm cable "
			 "uses another layout (another swverbs version)", wire);
		break;
	case ENOSPC:
		if (sw->wire.kind == SWV_WIRE_SHM) {
			snprintf(why, len, "wire=%s: no room in /dev/shm for "
				 "the cable (%u bytes)", wire,
				 SWV_SHM_CABLE_BYTES);
			break;
		}
		snprintf(why, len, "wire=%s: %s", wire, strerror(err));
		break;
	default:
		snprintf(why, len, "wire=%s: %s", wire, strerror(err));
		break;
	}
}

/* Log the device's wire warning, if any (e.g. a pair cable per process). */
static void
vbr_sw_warn_note(const char *name)
{
	char note[256];

	if (swv_device_wire_note(name, note, sizeof(note)) == 0 &&
	    note[0] != '\0')
		VBR_LOG(WARNING, "%s: %s", name, note);
}

/* A wire= port: create its swverbs device, named after the port; open it. */
static int
vbr_sw_port_open(const struct vbr_glue_port_conf *conf,
		 struct vbr_glue_port *port, char *why, size_t len)
{
	struct vbr_sw_svc_port *sp = NULL;
	struct swv_device_attr attr;
	char key[SWV_NAME_MAX + 8];
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
	attr.flags = sw.profile | (sw.share_wire ? SWV_DEVICE_SHARE_WIRE : 0);
	attr.engine = NULL;
	switch (sw.progress) {
	case VBR_SW_PROGRESS_THREAD:
		ret = vbr_sw_place_engine(&sw, why, len);
		if (ret != 0)
			return ret;
		break;
	case VBR_SW_PROGRESS_SERVICE:
		sp = calloc(1, sizeof(*sp));
		if (sp == NULL) {
			snprintf(why, len, "no memory");
			return ENOMEM;
		}
		snprintf(sp->name, sizeof(sp->name), "%s", port->ibdev_name);
		if (sw.wire.kind == SWV_WIRE_PAIR)
			snprintf(key, sizeof(key), "pair:%s", sw.wire.name);
		else
			snprintf(key, sizeof(key), "port:%s", port->ibdev_name);
		rte_spinlock_lock(&vbr_sw_svc_lock);
		sp->svc = vbr_sw_svc_get(key, why, len);
		rte_spinlock_unlock(&vbr_sw_svc_lock);
		if (sp->svc == NULL) {
			free(sp);
			return ENOMEM;
		}
		attr.engine = sp->svc->eng;
		break;
	case VBR_SW_PROGRESS_INLINE:
		/* no thread: the datapath's verbs calls do the work */
		attr.engine = swv_engine_inline();
		break;
	}
	ret = swv_device_create_attr(port->ibdev_name, conf->target,
				     conf->mac, &attr);
	if (ret != 0) {
		vbr_sw_create_why(ret, conf->target, &sw, why, len);
		goto err_svc;
	}
	ret = vbr_glue_open_named(&vbr_glue_swverbs, port->ibdev_name,
				  &port->ctx, why, len);
	if (ret != 0) {
		ret2 = swv_device_destroy(port->ibdev_name);
		if (ret2 != 0)
			VBR_LOG(ERR, "%s: swv_device_destroy: %s",
				port->ibdev_name, strerror(ret2));
		goto err_svc;
	}
	if (sp != NULL) {
		rte_spinlock_lock(&vbr_sw_svc_lock);
		TAILQ_INSERT_TAIL(&vbr_sw_svc_ports, sp, next);
		rte_spinlock_unlock(&vbr_sw_svc_lock);
	}
	if (sw.progress == VBR_SW_PROGRESS_INLINE &&
	    rte_eal_alarm_set(VBR_SW_INLINE_WATCH_US, vbr_sw_inline_watch,
			      port->ctx) != 0)
		VBR_LOG(WARNING, "%s: no link watch (EAL alarm): link changes "
			"show only when the port is polled", port->ibdev_name);
	port->max_frame = SWV_MAX_FRAME;
	port->vlan_any_tpid = (sw.profile & SWV_DEVICE_PROFILE_FULL) != 0;
	vbr_sw_warn_note(port->ibdev_name);
	return 0;
err_svc:
	if (sp != NULL) {
		rte_spinlock_lock(&vbr_sw_svc_lock);
		vbr_sw_svc_put(sp->svc);
		rte_spinlock_unlock(&vbr_sw_svc_lock);
		free(sp);
	}
	return ret;
}

static int
vbr_sw_port_close(struct ibv_context *context, char *why, size_t len)
{
	struct vbr_sw_svc_port *sp;
	char name[SWV_NAME_MAX];
	int ret;

	snprintf(name, sizeof(name), "%s", context->device->name);
	/* progress=inline: the link watch (none: nothing to cancel) */
	rte_eal_alarm_cancel(vbr_sw_inline_watch, context);
	ret = swv_close_device(context);
	if (ret != 0) {
		snprintf(why, len, "close_device: %s", strerror(ret));
		return ret;
	}
	ret = swv_device_destroy(name);
	if (ret != 0) {
		snprintf(why, len, "swv_device_destroy: %s", strerror(ret));
		return ret;
	}
	/* The last port of a service: stop and unregister it. */
	rte_spinlock_lock(&vbr_sw_svc_lock);
	sp = vbr_sw_svc_port_find(name);
	if (sp != NULL) {
		TAILQ_REMOVE(&vbr_sw_svc_ports, sp, next);
		vbr_sw_svc_put(sp->svc);
	}
	rte_spinlock_unlock(&vbr_sw_svc_lock);
	free(sp);
	return 0;
}

static int
vbr_sw_port_rebind(struct ibv_context *context, char *why, size_t len)
{
	struct vbr_sw_svc_port *sp;
	int ret;

	/* progress=service: the service runs on a service lcore. */
	rte_spinlock_lock(&vbr_sw_svc_lock);
	sp = vbr_sw_svc_port_find(context->device->name);
	ret = sp != NULL ? vbr_sw_svc_start(sp->svc, why, len) : 0;
	rte_spinlock_unlock(&vbr_sw_svc_lock);
	if (ret != 0)
		return ret;
	ret = swv_device_rebind(context->device->name);

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
vbr_sw_port_set_rx_mtu(struct ibv_context *context, uint32_t mtu)
{
	return swv_set_port_rx_mtu(context, mtu);
}

static int
vbr_sw_query_port_counters(struct ibv_context *context,
			   struct vbr_glue_port_counters *counters)
{
	struct swv_port_counters c;
	char name[IF_NAMESIZE];
	int ret;

	ret = swv_query_port_counters(context, &c);
	if (ret != 0)
		return ret;
	counters->out_of_buffer = c.rx_out_of_buffer;
	counters->no_match = c.rx_no_match;
	counters->rx_errors = c.rx_errors;
	counters->dropped = c.rx_dropped;
	counters->runts = c.rx_runts;
	counters->tx_link_down = c.tx_link_down;
	counters->tx_link_down_bytes = c.tx_link_down_bytes;
	counters->wire_dropped = c.rx_wire_dropped;
	counters->wire_errors = c.rx_wire_errors;
	counters->mtu_dropped = c.rx_mtu_dropped;
	counters->rx_frames = c.rx_frames;
	counters->rx_bytes = c.rx_bytes;
	counters->rx_delivered = c.rx_delivered;
	counters->tx_frames = c.tx_frames;
	counters->tx_bytes = c.tx_bytes;
	counters->tx_errors = c.tx_errors;
	counters->tx_mtu_dropped = c.tx_mtu_dropped;
	counters->tx_mtu_dropped_bytes = c.tx_mtu_dropped_bytes;
	counters->wire_faults = c.wire_faults;
	counters->valid = VBR_GLUE_CNT_OUT_OF_BUFFER | VBR_GLUE_CNT_NO_MATCH |
			  VBR_GLUE_CNT_RX_ERRORS | VBR_GLUE_CNT_DROPPED |
			  VBR_GLUE_CNT_RUNTS | VBR_GLUE_CNT_TX_LINK_DOWN |
			  VBR_GLUE_CNT_WIRE_DROPPED | VBR_GLUE_CNT_MTU_DROPPED |
			  VBR_GLUE_CNT_WIRE_TOTALS | VBR_GLUE_CNT_TX_MTU_DROPPED |
			  VBR_GLUE_CNT_WIRE_FAULTS;
	counters->vport_dropped = c.rx_vport_dropped;
	if (swv_query_port_vf_netdev(context, name, sizeof(name)) == 0)
		counters->valid |= VBR_GLUE_CNT_VPORT_DROPPED;
	return 0;
}

/* QP counters: swverbs has one port, its modes and masks are the glue's. */
static_assert(VBR_GLUE_COUNTER_MODE_AUTO == SWV_COUNTER_MODE_AUTO &&
	      VBR_GLUE_COUNTER_MODE_MANUAL == SWV_COUNTER_MODE_MANUAL &&
	      VBR_GLUE_COUNTER_MASK_QP_TYPE == SWV_COUNTER_MASK_QP_TYPE &&
	      VBR_GLUE_COUNTER_MASK_PID == SWV_COUNTER_MASK_PID,
	      "counter modes differ");

static int
vbr_sw_counter_set_auto_mode(struct ibv_context *context, uint8_t port,
			     uint32_t mask)
{
	if (port != 1)
		return EINVAL;
	return swv_counter_set_auto_mode(context, mask);
}

static int
vbr_sw_counter_get_mode(struct ibv_context *context, uint8_t port,
			uint32_t *mode, uint32_t *mask)
{
	if (port != 1)
		return EINVAL;
	return swv_counter_get_mode(context, mode, mask);
}

static int
vbr_sw_counter_bind_qp(struct ibv_context *context, uint8_t port,
		       uint32_t lqpn, uint32_t *cntn)
{
	if (port != 1 || cntn == NULL)
		return EINVAL;
	if (*cntn == 0)
		return swv_counter_bind_qp_alloc(context, lqpn, cntn);
	return swv_counter_bind_qp(context, lqpn, *cntn);
}

static int
vbr_sw_counter_unbind_qp(struct ibv_context *context, uint8_t port,
			 uint32_t lqpn, uint32_t cntn)
{
	if (port != 1)
		return EINVAL;
	return swv_counter_unbind_qp(context, lqpn, cntn);
}

/* swverbs' QP counts under their names (the kernel's out_of_buffer). */
static const struct {
	const char *name;
	size_t offset;
} vbr_sw_qp_vals[] = {
	{ "rx_frames", offsetof(struct swv_qp_stats, rx_frames) },
	{ "rx_bytes", offsetof(struct swv_qp_stats, rx_bytes) },
	{ "out_of_buffer", offsetof(struct swv_qp_stats, rx_out_of_buffer) },
	{ "rx_errors", offsetof(struct swv_qp_stats, rx_errors) },
	{ "tx_frames", offsetof(struct swv_qp_stats, tx_frames) },
	{ "tx_bytes", offsetof(struct swv_qp_stats, tx_bytes) },
	{ "tx_errors", offsetof(struct swv_qp_stats, tx_errors) },
};

static int
vbr_sw_counter_list(struct ibv_context *context, uint8_t port,
		    struct vbr_glue_qp_counter *c, unsigned int max,
		    unsigned int *n)
{
	uint32_t stack_ids[256], *ids = stack_ids;
	unsigned int i, k, got = 0, cap = RTE_DIM(stack_ids);
	struct swv_counter_attr at;
	int nc, nq;

	if (port != 1 || n == NULL)
		return EINVAL;
	nc = swv_counter_list(context, ids, cap);
	if (nc < 0)
		return errno;
	if ((unsigned int)nc > cap) {
		/* All of them: c[] is filled up to max, the rest counted. */
		cap = (unsigned int)nc;
		ids = malloc(cap * sizeof(*ids));
		if (ids == NULL)
			return ENOMEM;
		nc = swv_counter_list(context, ids, cap);
		if (nc < 0) {
			nc = errno;
			free(ids);
			return nc;
		}
	}
	for (i = 0; i < (unsigned int)nc && i < cap; i++) {
		struct vbr_glue_qp_counter *g = &c[got];
		uint32_t lq[VBR_GLUE_QP_CNT_QPS];

		if (got >= max) {
			got++;
			continue;
		}
		nq = swv_counter_query(context, ids[i], &at, lq, RTE_DIM(lq));
		if (nq < 0)
			continue;	/* freed since the list */
		memset(g, 0, sizeof(*g));
		g->cntn = at.cntn;
		g->mode = at.mode;
		g->mask = at.mask;
		g->qp_type = at.qp_type;
		g->pid = at.pid;
		memcpy(g->comm, at.comm, sizeof(g->comm));
		g->nqps = (uint32_t)nq;
		memcpy(g->lqpn, lq, RTE_MIN((unsigned int)nq,
					   (unsigned int)RTE_DIM(lq)) *
		       sizeof(lq[0]));
		for (k = 0; k < RTE_DIM(vbr_sw_qp_vals); k++) {
			snprintf(g->val[k].name, sizeof(g->val[k].name), "%s",
				 vbr_sw_qp_vals[k].name);
			g->val[k].value = *(const uint64_t *)
				((const char *)&at.stats +
				 vbr_sw_qp_vals[k].offset);
		}
		g->nvals = k;
		got++;
	}
	if (ids != stack_ids)
		free(ids);
	*n = got;
	return 0;
}

static int
vbr_sw_qp_pace_stats(struct ibv_qp *qp, struct vbr_glue_qp_pace *st)
{
	struct swv_qp_pace_stats ps;
	int ret;

	ret = swv_qp_pace_stats(qp, &ps);
	if (ret != 0)
		return ret;
	st->bytes = ps.bytes;
	st->full_ns = ps.full_ns;
	return 0;
}

static int
vbr_sw_mr_list(struct ibv_context *context, struct vbr_glue_mr *m,
	       unsigned int max, unsigned int *n)
{
	struct swv_mr_stats *st;
	unsigned int i;
	int nm;

	if (n == NULL)
		return EINVAL;
	/* m[] filled up to max: *n may exceed max, never what is filled. */
	st = calloc(RTE_MAX(max, 1u), sizeof(*st));
	if (st == NULL)
		return ENOMEM;
	nm = swv_query_mr_stats(context, st, max);
	if (nm < 0) {
		nm = errno;
		free(st);
		return nm;
	}
	for (i = 0; i < RTE_MIN((unsigned int)nm, max); i++) {
		struct vbr_glue_mr *g = &m[i];

		memset(g, 0, sizeof(*g));
		g->mrn = st[i].mrn;
		snprintf(g->val[0].name, sizeof(g->val[0].name), "mrlen");
		g->val[0].value = st[i].length;
		snprintf(g->val[1].name, sizeof(g->val[1].name), "pages");
		g->val[1].value = st[i].pages;
		snprintf(g->val[2].name, sizeof(g->val[2].name),
			 "access_errors");
		g->val[2].value = st[i].access_errors;
		g->nvals = 3;
	}
	free(st);
	*n = (unsigned int)nm;
	return 0;
}

/* The glue's bits are swverbs' (both follow the seed's order). */
static_assert(VBR_GLUE_PORT_EX_STD_MASK == SWV_QUERY_PORT_EX_STD_MASK &&
	      VBR_GLUE_PORT_EX_ETH_MTU == SWV_QUERY_PORT_EX_ETH_MTU &&
	      VBR_GLUE_PORT_EX_ETH_MAX_MTU == SWV_QUERY_PORT_EX_ETH_MAX_MTU &&
	      VBR_GLUE_PORT_EX_SPEED_MBPS == SWV_QUERY_PORT_EX_SPEED_MBPS &&
	      VBR_GLUE_PORT_EX_MASK == SWV_QUERY_PORT_EX_MASK,
	      "query_port_ex bits differ");

static int
vbr_sw_query_port_ex(struct ibv_context *context, uint8_t port_num,
		     struct vbr_glue_port_attr_ex *attr)
{
	struct swv_port_attr_ex a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.comp_mask = attr->comp_mask;
	ret = swv_query_port_ex(context, port_num, &a);
	if (ret != 0)
		return ret;
	attr->std = a.std;
	attr->eth_mtu = a.eth_mtu;
	attr->eth_max_mtu = a.eth_max_mtu;
	attr->speed_mbps = a.speed_mbps;
	return 0;
}

static int
vbr_sw_port_set_link(struct ibv_context *context, int up, char *why,
		     size_t len)
{
	int ret = swv_set_port_link(context, up != 0);

	switch (ret) {
	case 0:
		break;
	case EOPNOTSUPP:
		snprintf(why, len, "the wire has no link control (a shm "
			 "cable: detach its other end instead)");
		break;
	case EPERM:
		snprintf(why, len, "setting the interface %s needs "
			 "CAP_NET_ADMIN", up ? "up" : "down");
		break;
	default:
		snprintf(why, len, "link %s: %s", up ? "up" : "down",
			 strerror(ret));
		break;
	}
	return ret;
}

/*
 * A device of the mlx5-vf profile plays a VF: its interface is the netdev
 * to tell. Other profiles and wires have none (ENOTSUP).
 */
static int
vbr_sw_port_vport(struct ibv_context *context, int op, uint8_t mac[6],
		  int *on, char *why, size_t len)
{
	char name[IF_NAMESIZE];
	int ret;

	ret = swv_query_port_vf_netdev(context, name, sizeof(name));
	if (ret != 0)
		return ret;
	return vbr_netdev_vport(name, op, mac, on, why, len);
}

static int
vbr_sw_cq_peek(struct ibv_cq_ex *cq, struct vbr_glue_cq_peek *peek)
{
	return swv_cq_peek(cq, &peek->pending, &peek->watch, &peek->idle);
}

static const struct vbr_glue vbr_glue_swverbs = {
	.version = VBR_GLUE_VERSION,
	.name = "swverbs",
	.port_open = vbr_sw_port_open,
	.port_close = vbr_sw_port_close,
	.port_rebind = vbr_sw_port_rebind,
	.port_set_mtu = vbr_sw_port_set_mtu,
	.port_set_rx_mtu = vbr_sw_port_set_rx_mtu,
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
	.modify_qp_rate_limit = swv_modify_qp_rate_limit,
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
	.poll_cq_burst = swv_poll_cq_burst,
	.post_wq_recv_burst = swv_post_wq_recv_burst,
	.post_send_burst = swv_post_send_burst,
	.query_port_ex = vbr_sw_query_port_ex,
	.port_set_link = vbr_sw_port_set_link,
	.poll_cq_burst_ol = swv_poll_cq_burst_ol,
	.query_rt_values_ex = swv_query_rt_values_ex,
	.counter_set_auto_mode = vbr_sw_counter_set_auto_mode,
	.counter_get_mode = vbr_sw_counter_get_mode,
	.counter_bind_qp = vbr_sw_counter_bind_qp,
	.counter_unbind_qp = vbr_sw_counter_unbind_qp,
	.counter_list = vbr_sw_counter_list,
	.mr_list = vbr_sw_mr_list,
	.create_comp_channel = swv_create_comp_channel,
	.destroy_comp_channel = swv_destroy_comp_channel,
	.get_cq_event = swv_get_cq_event,
	.ack_cq_events = swv_ack_cq_events,
	.cq_peek = vbr_sw_cq_peek,
	.port_vport = vbr_sw_port_vport,
	.qp_pace_stats = vbr_sw_qp_pace_stats,
	.query_qp = swv_query_qp,
	.sq_held = swv_qp_sq_held,
	.pace_window = swv_device_pace_window,
};

_Static_assert(VBR_GLUE_SEND_SIGNALED == SWV_SEND_BURST_SIGNALED &&
	       VBR_GLUE_SEND_IP_CSUM == SWV_SEND_BURST_IP_CSUM,
	       "post_send_burst() flags are swverbs' burst flags");

/* Loaded once; handles stay open for the life of the process. */
static const struct vbr_glue *vbr_glue_ibv_table;
static char vbr_glue_why[PATH_MAX + 512];

/*
 * Where the glue object is: VBR_GLUE_PATH (the file, or a folder with it);
 * else <this PMD's folder>-glue/, where meson install puts it (as DPDK's
 * mlx4 puts its glue beside the plugin folder, pmds-23.0-glue), when it is
 * there; else <this PMD's folder>/vbr-glue/, where the build makes it.
 */
static int
vbr_glue_path(char *path, size_t size)
{
	static const char *const fmts[] = { "%.*s-glue/%s", "%.*s/vbr-glue/%s" };
	const char *env = getenv("VBR_GLUE_PATH");
	struct stat st;
	Dl_info info;
	const char *slash;
	unsigned int i;
	int dir_len;
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
	slash = strrchr(info.dli_fname, '/');
	if (slash == NULL)
		return -1;
	dir_len = (int)(slash - info.dli_fname);
	for (i = 0; i < RTE_DIM(fmts); i++) {
		n = snprintf(path, size, fmts[i], dir_len, info.dli_fname,
			     VBR_GLUE_IBV_LIB);
		if (n < 0 || (size_t)n >= size)
			return -1;
		if (access(path, F_OK) == 0)
			return 0;
	}
	/* neither: the installed place, which the load error then names */
	n = snprintf(path, size, fmts[0], dir_len, info.dli_fname,
		     VBR_GLUE_IBV_LIB);
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
			 "wire=loop|pair:<name>|shm:<name>|af_packet:<ifname>|"
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
			 "%s built with this PMD (or point VBR_GLUE_PATH at "
			 "it)", path, table->version, VBR_GLUE_VERSION,
			 VBR_GLUE_IBV_LIB);
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
		.usage = "wire=loop|pair:<name>|shm:<name>|af_packet:<ifname>|"
			 "af_xdp:<ifname>[:<queue>]",
		.args = vbr_sw_args,
		.load = vbr_glue_swverbs_load,
	},
	{ .key = NULL },
};
