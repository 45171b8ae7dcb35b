/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * vbr-stat: iproute2's "rdma statistic" (rdma-statistic(8)) for the vbr
 * ports of a running DPDK process, spoken over that process's telemetry
 * socket (/var/run/dpdk/<file-prefix>/dpdk_telemetry.v2, SOCK_SEQPACKET:
 * the first message after connect is the process's info, with the largest
 * reply it sends; then one reply per request "<command>,<params>").
 *
 * The PMD's /vbr/ endpoints (drivers/net/vbr/vbr_stats.c) stand in for the
 * kernel's RDMA netlink: /vbr/ports is the device map (rdma's "dev" list:
 * each vbr port is a device DEV with port 1), and each rdma request has
 * its endpoint. The command grammar, the text lines, the JSON objects and
 * the messages follow rdma (iproute2 6.1): abbreviated keywords,
 * "Unknown ... '...'.", "Wrong device name", "error: <errno text>" for a
 * request the device refuses, preceded by "Error: <reason>." where the
 * kernel gives a reason. Every error says what it is on stderr and exits
 * 1, an unknown word and a stray argument too (rdma exits 0 for some).
 * doc/guides/vbr-stat.rst lists where it differs and why.
 */

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <jansson.h>

#ifndef VBR_VERSION
#define VBR_VERSION "unknown"
#endif

/** Devices (vbr ports) a process may have. */
#define VST_MAX_DEVS 1024
/** Filters one command takes. */
#define VST_MAX_FILTERS 8
/** The info message's size, before we know max_output_len. */
#define VST_INFO_LEN 1024

#define pr_err(...) fprintf(stderr, __VA_ARGS__)
#define pr_out(...) fprintf(stdout, __VA_ARGS__)

/** One device: a vbr port, as rdma's "link DEV/PORT" names it. */
struct vst_dev {
	char *name;		/**< the verbs device name (ifname) */
	unsigned int ethdev;	/**< the ethdev port id: the endpoints' key */
	uint32_t num_ports;	/**< verbs ports (1) */
};

/** A filter: FILTER-NAME FILTER-VALUE. */
struct vst_filter {
	const char *key;	/**< the full filter name */
	char *value;		/**< lowercase */
	bool is_number;		/**< value is a list of numbers and ranges */
};

/** A filter a command accepts. */
struct vst_filter_def {
	const char *name;
	bool is_number;
};

/** The tool's state: rdma's struct rd. */
struct vst {
	const char *filename;	/**< argv[0]'s base name */
	int argc;
	char **argv;
	bool json;		/**< -j */
	bool pretty;		/**< -p */
	int sock;		/**< the telemetry socket */
	char *buf;		/**< a reply */
	size_t buf_len;		/**< max_output_len + 1 */
	struct vst_dev *devs;
	unsigned int ndevs;
	const struct vst_dev *dev;	/**< the device a callback works on */
	uint32_t port_idx;		/**< and its port (0: none) */
	struct vst_filter filters[VST_MAX_FILTERS];
	unsigned int nfilters;
	const char *prefix;	/**< -f: the process's file-prefix */
	bool connected;		/**< socket and device map ready */
	json_t *out;		/**< -j: the array being printed */
	json_t *obj;		/**< -j: the object being printed */
};

struct vst_cmd {
	const char *cmd;
	int (*func)(struct vst *s);
};

/* Reply keys that are not counters. */
static const char *const vst_not_counters[] = {
	"ifname", "port", "cntn", "mode", "criteria", "qp_type", "pid",
	"comm", "lqpn", "mrn", "ethdev_port", "name", "backend",
};

static void
help(const char *name)
{
	pr_out("Usage: %s [ OPTIONS ] OBJECT { COMMAND | help }\n"
	       "where  OBJECT := { statistic | help }\n"
	       "       OPTIONS := { -V[ersion] | -j[son] | -p[retty] | "
	       "-f[ile-prefix] PREFIX }\n", name);
}

static int
stat_help(struct vst *s)
{
	const char *n = s->filename;

	pr_out("Usage: %s [ OPTIONS ] statistic { COMMAND | help }\n", n);
	pr_out("       %s statistic OBJECT show\n", n);
	pr_out("       %s statistic OBJECT show link [ DEV/PORT_INDEX ] "
	       "[ FILTER-NAME FILTER-VALUE ]\n", n);
	pr_out("       %s statistic OBJECT mode\n", n);
	pr_out("       %s statistic OBJECT set COUNTER_SCOPE [DEV/PORT_INDEX] "
	       "auto {CRITERIA | off}\n", n);
	pr_out("       %s statistic OBJECT bind COUNTER_SCOPE [DEV/PORT_INDEX] "
	       "[OBJECT-ID] [COUNTER-ID]\n", n);
	pr_out("       %s statistic OBJECT unbind COUNTER_SCOPE "
	       "[DEV/PORT_INDEX] [COUNTER-ID]\n", n);
	pr_out("       %s statistic show\n", n);
	pr_out("       %s statistic show link [ DEV/PORT_INDEX ]\n", n);
	pr_out("       %s statistic show mr [ mrn MRN ]\n", n);
	pr_out("where  OBJECT: = { qp }\n");
	pr_out("       CRITERIA : = { type | pid | type,pid }\n");
	pr_out("       COUNTER_SCOPE: = { link }\n");
	pr_out("       FILTER_NAME: = { cntn | lqpn | pid | qp-type }\n");
	pr_out("Examples:\n");
	pr_out("       %s statistic qp show\n", n);
	pr_out("       %s statistic qp show link net_vbr0/1\n", n);
	pr_out("       %s statistic qp show link net_vbr0/1 qp-type "
	       "RAW_PACKET\n", n);
	pr_out("       %s statistic qp mode\n", n);
	pr_out("       %s statistic qp mode link net_vbr0/1\n", n);
	pr_out("       %s statistic qp set link net_vbr0/1 auto type on\n", n);
	pr_out("       %s statistic qp set link net_vbr0/1 auto off\n", n);
	pr_out("       %s statistic qp bind link net_vbr0/1 lqpn 178\n", n);
	pr_out("       %s statistic qp bind link net_vbr0/1 lqpn 178 "
	       "cntn 4\n", n);
	pr_out("       %s statistic qp unbind link net_vbr0/1 cntn 4\n", n);
	pr_out("       %s statistic qp unbind link net_vbr0/1 cntn 4 "
	       "lqpn 178\n", n);
	pr_out("       %s statistic show\n", n);
	pr_out("       %s statistic show link net_vbr0/1\n", n);
	pr_out("       %s statistic show mr\n", n);
	pr_out("       %s statistic show mr mrn 6\n", n);
	return 0;
}

/* Arguments, as rdma walks them. */

static int
vst_argc(struct vst *s)
{
	return s->argc;
}

static char *
vst_argv(struct vst *s)
{
	return s->argc > 0 ? *s->argv : NULL;
}

static bool
vst_no_arg(struct vst *s)
{
	return s->argc == 0;
}

static void
vst_arg_inc(struct vst *s)
{
	if (s->argc == 0)
		return;
	s->argc--;
	s->argv++;
}

/* 0 when str abbreviates word (rdma's strcmpx). */
static int
vst_abbrev(const char *str, const char *word)
{
	if (strlen(str) > strlen(word))
		return -1;
	return strncmp(str, word, strlen(str));
}

static bool
vst_argv_match(struct vst *s, const char *word)
{
	return !vst_no_arg(s) && vst_abbrev(vst_argv(s), word) == 0;
}

static int
vst_exec_cmd(struct vst *s, const struct vst_cmd *cmds, const char *what)
{
	const struct vst_cmd *c;

	/* the first entry is what no argument does */
	if (vst_no_arg(s))
		return cmds->func(s);
	for (c = cmds + 1; c->cmd != NULL; c++)
		if (vst_argv_match(s, c->cmd)) {
			vst_arg_inc(s);
			return c->func(s);
		}
	pr_err("Unknown %s '%s'.\n", what, vst_argv(s));
	return -EINVAL;
}

/* An argument left over once a command has all it takes: an error. */
static int
vst_no_more(struct vst *s)
{
	if (vst_no_arg(s))
		return 0;
	pr_err("Unknown parameter '%s'.\n", vst_argv(s));
	return -EINVAL;
}

/* Output: text lines or, with -j, an array of objects. */

static void
vst_json_start(struct vst *s)
{
	if (s->json)
		s->out = json_array();
}

static void
vst_json_end(struct vst *s)
{
	size_t flags = JSON_PRESERVE_ORDER;

	if (s->out == NULL)
		return;
	flags |= s->pretty ? JSON_INDENT(4) : JSON_COMPACT;
	json_dumpf(s->out, stdout, flags);
	pr_out("\n");
	json_decref(s->out);
	s->out = NULL;
}

static void
vst_open(struct vst *s)
{
	if (s->json)
		s->obj = json_object();
}

/* End the object (and the line). */
static void
vst_newline(struct vst *s)
{
	if (s->json) {
		json_array_append_new(s->out, s->obj);
		s->obj = NULL;
	} else {
		pr_out("\n");
	}
}

/* A counter's line break in pretty text (rdma's newline_indent). */
static void
vst_indent(struct vst *s)
{
	if (s->pretty && !s->json)
		pr_out("\n    ");
}

static void
vst_str(struct vst *s, const char *key, const char *fmt, const char *v)
{
	if (s->json) {
		if (key != NULL)
			json_object_set_new(s->obj, key, json_string(v));
	} else if (fmt != NULL) {
		pr_out(fmt, v);
	}
}

static void
vst_uint(struct vst *s, const char *key, const char *fmt, uint64_t v)
{
	if (s->json) {
		if (key != NULL)
			json_object_set_new(s->obj, key, json_integer(v));
	} else if (fmt != NULL) {
		pr_out(fmt, v);
	}
}

/* "name value " (rdma's res_print_u64). */
static void
vst_counter(struct vst *s, const char *name, uint64_t v)
{
	if (s->json)
		json_object_set_new(s->obj, name, json_integer(v));
	else
		pr_out("%s %" PRIu64 " ", name, v);
}

/* rdma's print_link: ifindex (JSON), ifname, port, "link DEV/PORT ". */
static void
vst_link(struct vst *s)
{
	char tmp[300];

	vst_uint(s, "ifindex", NULL, s->dev->ethdev);
	vst_str(s, "ifname", NULL, s->dev->name);
	vst_uint(s, "port", NULL, s->port_idx);
	snprintf(tmp, sizeof(tmp), "%s/%u", s->dev->name, s->port_idx);
	vst_str(s, NULL, "link %s ", tmp);
}

/* Telemetry. */

static const char *
vst_runtime_dir(void)
{
	const char *d;

	if (getuid() == 0)
		return "/var/run";
	d = getenv("XDG_RUNTIME_DIR");
	return d != NULL ? d : "/tmp";
}

static int
vst_connect(struct vst *s, const char *prefix)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	json_t *info, *len;
	ssize_t n;
	int err;

	if ((size_t)snprintf(sun.sun_path, sizeof(sun.sun_path),
			     "%s/dpdk/%s/dpdk_telemetry.v2", vst_runtime_dir(),
			     prefix) >= sizeof(sun.sun_path)) {
		pr_err("Failed to connect to the telemetry socket of "
		       "file-prefix %s: %s\n", prefix, strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	s->sock = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (s->sock < 0 ||
	    connect(s->sock, (struct sockaddr *)&sun, sizeof(sun)) != 0) {
		err = errno;
		pr_err("Failed to connect to %s: %s\n", sun.sun_path,
		       strerror(err));
		return -err;
	}
	s->buf_len = VST_INFO_LEN;
	s->buf = malloc(s->buf_len);
	if (s->buf == NULL) {
		pr_err("error: %s\n", strerror(ENOMEM));
		return -ENOMEM;
	}
	n = recv(s->sock, s->buf, s->buf_len - 1, 0);
	info = n > 0 ? json_loadb(s->buf, n, 0, NULL) : NULL;
	len = json_object_get(info, "max_output_len");
	if (!json_is_integer(len) || json_integer_value(len) <= 0) {
		pr_err("Failed to read the telemetry info of %s\n",
		       sun.sun_path);
		json_decref(info);
		return -EPROTO;
	}
	free(s->buf);
	s->buf_len = (size_t)json_integer_value(len) + 1;
	json_decref(info);
	s->buf = malloc(s->buf_len);
	if (s->buf == NULL) {
		pr_err("error: %s\n", strerror(ENOMEM));
		return -ENOMEM;
	}
	return 0;
}

/*
 * One request: the reply's value (json_decref() it), or NULL when the
 * process did not answer (said on stderr).
 */
static json_t *
vst_tel(struct vst *s, const char *fmt, ...)
{
	char cmd[256], *comma;
	json_t *root, *v;
	va_list ap;
	ssize_t n;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (send(s->sock, cmd, strlen(cmd), 0) < 0 ||
	    (n = recv(s->sock, s->buf, s->buf_len - 1, 0)) <= 0) {
		pr_err("Failed to send %s to the telemetry socket: %s\n", cmd,
		       strerror(errno));
		return NULL;
	}
	root = json_loadb(s->buf, n, 0, NULL);
	comma = strchr(cmd, ',');
	if (comma != NULL)
		*comma = '\0';
	v = json_incref(json_object_get(root, cmd));
	json_decref(root);
	if (v == NULL)
		pr_err("Failed to read the reply to %s\n", cmd);
	return v;
}

/* An endpoint's error reply: its errno, or 0 when v is not one. */
static int
vst_reply_errno(const json_t *v)
{
	const json_t *e = json_object_get(v, "errno");

	if (json_object_get(v, "error") == NULL || !json_is_integer(e))
		return 0;
	return (int)json_integer_value(e);
}

/*
 * Say what the device refused, as rdma says what the kernel refused: its
 * reason ("Error: ...") when there is one, then "error: <errno text>".
 * Return -errno.
 */
static int
vst_reply_error(const json_t *v)
{
	const char *extack = json_string_value(json_object_get(v, "extack"));
	const char *msg = json_string_value(json_object_get(v, "message"));
	int err = vst_reply_errno(v);

	if (extack != NULL && *extack != '\0')
		pr_err("Error: %s%s\n", extack,
		       extack[strlen(extack) - 1] == '.' ? "" : ".");
	pr_err("error: %s\n", msg != NULL ? msg : strerror(err));
	return -err;
}

/*
 * A request whose answer must not be an error: its value (decref it), or
 * NULL with the error said and *ret set.
 */
static json_t *
vst_tel_ok(struct vst *s, int *ret, const char *fmt, ...)
{
	char cmd[256];
	va_list ap;
	json_t *v;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	v = vst_tel(s, "%s", cmd);
	if (v == NULL) {
		*ret = -EIO;
		return NULL;
	}
	if (!json_is_object(v)) {
		pr_err("error: %s\n", strerror(EIO));
		json_decref(v);
		*ret = -EIO;
		return NULL;
	}
	if (vst_reply_errno(v) != 0) {
		*ret = vst_reply_error(v);
		json_decref(v);
		return NULL;
	}
	*ret = 0;
	return v;
}

/* The device map, from /vbr/ports ({"<ethdev port>": "<ifname>/<port>"}). */
static int
vst_dev_init(struct vst *s)
{
	const char *key, *link, *slash;
	json_t *ports, *v;
	unsigned int i;
	int ret = 0;

	ports = vst_tel(s, "/vbr/ports");
	if (ports == NULL)
		return -EIO;
	if (vst_reply_errno(ports) != 0) {
		ret = vst_reply_error(ports);
		json_decref(ports);
		return ret;
	}
	/* null: the process has no vbr PMD, so no device */
	if (!json_is_object(ports) && !json_is_null(ports)) {
		pr_err("error: %s\n", strerror(EIO));
		json_decref(ports);
		return -EIO;
	}
	s->devs = calloc(VST_MAX_DEVS, sizeof(*s->devs));
	if (s->devs == NULL) {
		pr_err("error: %s\n", strerror(ENOMEM));
		json_decref(ports);
		return -ENOMEM;
	}
	json_object_foreach(ports, key, v) {
		struct vst_dev *d;
		unsigned long port;
		size_t len;

		link = json_string_value(v);
		slash = link != NULL ? strrchr(link, '/') : NULL;
		if (slash == NULL || s->ndevs == VST_MAX_DEVS)
			continue;
		len = slash - link;
		port = strtoul(slash + 1, NULL, 10);
		for (i = 0; i < s->ndevs; i++)
			if (strlen(s->devs[i].name) == len &&
			    strncmp(s->devs[i].name, link, len) == 0)
				break;
		if (i < s->ndevs) {
			/* a second ethdev port on one device: the first */
			continue;
		}
		d = &s->devs[s->ndevs];
		d->name = strndup(link, len);
		if (d->name == NULL) {
			pr_err("error: %s\n", strerror(ENOMEM));
			ret = -ENOMEM;
			break;
		}
		d->ethdev = (unsigned int)strtoul(key, NULL, 10);
		d->num_ports = (uint32_t)port;
		s->ndevs++;
	}
	json_decref(ports);
	if (ret != 0)
		return ret;
	/* in ethdev port order, as rdma lists devices by index */
	for (i = 1; i < s->ndevs; i++) {
		struct vst_dev d = s->devs[i];
		unsigned int j = i;

		for (; j > 0 && s->devs[j - 1].ethdev > d.ethdev; j--)
			s->devs[j] = s->devs[j - 1];
		s->devs[j] = d;
	}
	return 0;
}

static const struct vst_dev *
vst_dev_lookup(struct vst *s, bool allow_port)
{
	const struct vst_dev *d = NULL;
	char *name, *slash;
	unsigned int i;

	if (vst_no_arg(s))
		return NULL;
	name = strdup(vst_argv(s));
	if (name == NULL)
		return NULL;
	slash = allow_port ? strrchr(name, '/') : NULL;
	if (slash != NULL)
		*slash = '\0';
	for (i = 0; i < s->ndevs; i++)
		if (strcmp(name, s->devs[i].name) == 0)
			d = &s->devs[i];
	free(name);
	return d;
}

/*
 * The port of "DEV[/PORT]" (rdma's get_port_from_argv): DEV and DEV/ mean
 * every port (*all), DEV/N port N, DEV/- none; with strict a port N > 0
 * must be given.
 */
static int
vst_port_of_argv(struct vst *s, uint32_t *port, bool *all, bool strict)
{
	char *slash = strchr(vst_argv(s), '/');

	*port = 0;
	*all = !strict;
	if (slash != NULL) {
		slash++;
		if (*slash == '-') {
			if (strict)
				return -EINVAL;
			*all = false;
			return 0;
		}
		if (isdigit((unsigned char)*slash)) {
			*all = false;
			*port = (uint32_t)atoi(slash);
		}
		if (*port == 0 && strlen(slash) != 0)
			return -EINVAL;
	}
	if (strict && *port == 0)
		return -EINVAL;
	return 0;
}

static int vst_connect(struct vst *s, const char *prefix);
static int vst_dev_init(struct vst *s);

/* Connect and read the device map, once: help needs no process. */
static int
vst_ready(struct vst *s)
{
	int ret;

	if (s->connected)
		return 0;
	ret = vst_connect(s, s->prefix);
	if (ret == 0)
		ret = vst_dev_init(s);
	s->connected = ret == 0;
	return ret;
}

/* Run cb per port of every device, or of "DEV[/PORT]" (rdma_exec_link). */
static int
vst_exec_link(struct vst *s, int (*cb)(struct vst *s), bool strict)
{
	const struct vst_dev *d;
	unsigned int i;
	uint32_t port;
	bool all;
	int ret;

	ret = vst_ready(s);
	if (ret != 0)
		return ret;
	vst_json_start(s);
	if (vst_no_arg(s)) {
		for (i = 0; i < s->ndevs && ret == 0; i++) {
			s->dev = &s->devs[i];
			for (port = strict ? 1 : 0;
			     port <= s->dev->num_ports && ret == 0; port++) {
				s->port_idx = port;
				ret = cb(s);
			}
		}
		goto out;
	}
	d = vst_dev_lookup(s, true);
	ret = vst_port_of_argv(s, &port, &all, strict);
	if (d == NULL || port > d->num_ports || (port == 0 && ret != 0)) {
		pr_err("Wrong device name\n");
		ret = -ENOENT;
		goto out;
	}
	vst_arg_inc(s);
	s->dev = d;
	for (s->port_idx = port; s->port_idx <= d->num_ports; s->port_idx++) {
		ret = cb(s);
		if (ret != 0 || !all)
			break;
	}
out:
	vst_json_end(s);
	return ret;
}

/* Run cb per device (rdma's rd_exec_dev). */
static int
vst_exec_dev(struct vst *s, int (*cb)(struct vst *s))
{
	unsigned int i;
	int ret;

	ret = vst_ready(s);
	if (ret != 0)
		return ret;
	vst_json_start(s);
	for (i = 0; i < s->ndevs && ret == 0; i++) {
		s->dev = &s->devs[i];
		ret = cb(s);
	}
	vst_json_end(s);
	return ret;
}

/* Filters: FILTER-NAME FILTER-VALUE pairs (rdma's rd_build_filter). */

static void
vst_filters_free(struct vst *s)
{
	unsigned int i;

	for (i = 0; i < s->nfilters; i++)
		free(s->filters[i].value);
	s->nfilters = 0;
}

static int
vst_add_filter(struct vst *s, const char *key, const char *value,
	       const struct vst_filter_def *defs)
{
	static const char cset[] = "1234567890,-";
	const struct vst_filter_def *d;
	struct vst_filter *f;
	size_t i;

	for (d = defs; d->name != NULL; d++)
		if (vst_abbrev(key, d->name) == 0)
			break;
	if (d->name == NULL) {
		pr_err("Unsupported filter option: %s\n", key);
		return -EINVAL;
	}
	if (d->is_number && strspn(value, cset) != strlen(value)) {
		pr_err("%s filter accepts \"%s\" characters only\n", key, cset);
		return -EINVAL;
	}
	if (s->nfilters == VST_MAX_FILTERS) {
		pr_err("At most %u filter options\n", VST_MAX_FILTERS);
		return -E2BIG;
	}
	f = &s->filters[s->nfilters];
	f->value = strdup(value);
	if (f->value == NULL) {
		pr_err("error: %s\n", strerror(ENOMEM));
		return -ENOMEM;
	}
	for (i = 0; f->value[i] != '\0'; i++)
		f->value[i] = (char)tolower((unsigned char)f->value[i]);
	f->key = d->name;
	f->is_number = d->is_number;
	s->nfilters++;
	return 0;
}

static int
vst_build_filter(struct vst *s, const struct vst_filter_def *defs)
{
	int i, ret;

	vst_filters_free(s);
	if (vst_argc(s) == 0)
		return 0;
	if (vst_argc(s) == 1) {
		pr_err("No filter data was supplied to filter option %s\n",
		       vst_argv(s));
		return -EINVAL;
	}
	if (vst_argc(s) % 2 != 0) {
		pr_err("There is filter option without data\n");
		return -EINVAL;
	}
	for (i = 0; i < vst_argc(s); i += 2) {
		ret = vst_add_filter(s, s->argv[i], s->argv[i + 1], defs);
		if (ret != 0)
			return ret;
	}
	return 0;
}

static const struct vst_filter *
vst_filter_get(struct vst *s, const char *key)
{
	unsigned int i;

	for (i = 0; i < s->nfilters; i++)
		if (strcmp(s->filters[i].key, key) == 0)
			return &s->filters[i];
	return NULL;
}

/* Whether v is in a "N,N-M,..." list. */
static bool
vst_in_list(const char *list, uint64_t v)
{
	const char *p = list;

	while (*p != '\0') {
		char *end;
		uint64_t lo = strtoull(p, &end, 10), hi = lo;

		if (*end == '-')
			hi = strtoull(end + 1, &end, 10);
		if (v >= lo && v <= hi)
			return true;
		p = *end == ',' ? end + 1 : end;
		if (end == p && *p != '\0' && *p != ',')
			break;
	}
	return false;
}

/* Whether a filter on key hides the value v. */
static bool
vst_filtered(struct vst *s, const char *key, uint64_t v)
{
	const struct vst_filter *f = vst_filter_get(s, key);

	return f != NULL && !vst_in_list(f->value, v);
}

static bool
vst_filtered_str(struct vst *s, const char *key, const char *v)
{
	const struct vst_filter *f = vst_filter_get(s, key);

	return f != NULL && strcasecmp(f->value, v) != 0;
}

static bool
vst_is_counter(const char *key)
{
	size_t i;

	for (i = 0; i < sizeof(vst_not_counters) / sizeof(*vst_not_counters);
	     i++)
		if (strcmp(key, vst_not_counters[i]) == 0)
			return false;
	return true;
}

/* The reply's counters, "name value " each (rdma's res_get_hwcounters). */
static void
vst_counters(struct vst *s, json_t *v)
{
	const char *key;
	json_t *c;

	json_object_foreach(v, key, c)
		if (json_is_integer(c) && vst_is_counter(key)) {
			vst_indent(s);
			vst_counter(s, key, (uint64_t)json_integer_value(c));
		}
}

/*
 * The reply to a request for one item (a counter, an MR) listed before:
 * 1 when it is the item, 0 when the item is gone since (ENOENT: not an
 * error, as rdma), else the error said and a negative errno.
 */
static int
vst_item(const json_t *v)
{
	if (vst_reply_errno(v) == ENOENT)
		return 0;
	if (vst_reply_errno(v) != 0)
		return vst_reply_error(v);
	if (!json_is_object(v)) {
		pr_err("error: %s\n", strerror(EIO));
		return -EIO;
	}
	return 1;
}

static uint64_t
vst_u64(json_t *v, const char *key)
{
	return (uint64_t)json_integer_value(json_object_get(v, key));
}

/* statistic show [link DEV/PORT] */

static int
stat_show_one_link(struct vst *s)
{
	json_t *v;
	int ret;

	ret = vst_no_more(s);
	if (ret != 0 || s->port_idx == 0)
		return ret;
	v = vst_tel_ok(s, &ret, "/vbr/port_counters,%u", s->dev->ethdev);
	if (v == NULL)
		return ret;
	vst_open(s);
	vst_str(s, "ifname", "link %s/", s->dev->name);
	vst_uint(s, "port", "%" PRIu64 " ", s->port_idx);
	vst_counters(s, v);
	vst_newline(s);
	json_decref(v);
	return 0;
}

static int
stat_show_link(struct vst *s)
{
	return vst_exec_link(s, stat_show_one_link, false);
}

/* statistic show mr [mrn N] */

static const struct vst_filter_def stat_mr_filters[] = {
	{ "mrn", true },
	{ NULL, false },
};

static int
stat_mr_line(struct vst *s, json_t *v)
{
	uint64_t mrn = vst_u64(v, "mrn");

	if (vst_filtered(s, "mrn", mrn))
		return 0;
	vst_open(s);
	vst_uint(s, "ifindex", NULL, s->dev->ethdev);
	vst_str(s, "ifname", "dev %s ", s->dev->name);
	vst_uint(s, "mrn", "mrn %" PRIu64 " ", mrn);
	vst_counters(s, v);
	vst_newline(s);
	return 0;
}

static int
stat_mr_one_dev(struct vst *s)
{
	const struct vst_filter *f = vst_filter_get(s, "mrn");
	json_t *mrs, *mr, *n;
	size_t i;
	int ret = 0;

	if (f != NULL && strspn(f->value, "0123456789") == strlen(f->value)) {
		/* one MR: nothing when there is no such MR (as rdma) */
		mr = vst_tel(s, "/vbr/mr,%u,%s", s->dev->ethdev, f->value);
		if (mr == NULL)
			return -EIO;
		ret = vst_item(mr);
		if (ret > 0)
			ret = stat_mr_line(s, mr);
		json_decref(mr);
		return ret;
	}
	mrs = vst_tel_ok(s, &ret, "/vbr/mrs,%u", s->dev->ethdev);
	if (mrs == NULL)
		return ret;
	json_array_foreach(json_object_get(mrs, "mrn"), i, n) {
		if (vst_filtered(s, "mrn", json_integer_value(n)))
			continue;
		mr = vst_tel(s, "/vbr/mr,%u,%" JSON_INTEGER_FORMAT,
			     s->dev->ethdev, json_integer_value(n));
		if (mr == NULL) {
			ret = -EIO;
			break;
		}
		/* an MR gone since the listing is not an error */
		ret = vst_item(mr);
		if (ret > 0)
			ret = stat_mr_line(s, mr);
		json_decref(mr);
		if (ret != 0)
			break;
	}
	json_decref(mrs);
	return ret;
}

static int
stat_mr(struct vst *s)
{
	int ret = vst_build_filter(s, stat_mr_filters);

	if (ret != 0)
		return ret;
	/* the filters are all the arguments: every device */
	s->argc = 0;
	return vst_exec_dev(s, stat_mr_one_dev);
}

static int
stat_show(struct vst *s)
{
	static const struct vst_cmd cmds[] = {
		{ NULL, stat_show_link },
		{ "link", stat_show_link },
		{ "mr", stat_mr },
		{ "help", stat_help },
		{ NULL, NULL },
	};

	return vst_exec_cmd(s, cmds, "parameter");
}

/* statistic qp show [link DEV/PORT] [FILTER-NAME FILTER-VALUE] */

static const struct vst_filter_def stat_qp_filters[] = {
	{ "cntn", true },
	{ "lqpn", true },
	{ "pid", true },
	{ "qp-type", false },
	{ NULL, false },
};

/* Whether a counter shows: every filter matches (lqpn: one of its QPs). */
static bool
stat_qp_shown(struct vst *s, json_t *c, bool with_type)
{
	const char *type = json_string_value(json_object_get(c, "qp_type"));
	json_t *lqpn = json_object_get(c, "lqpn"), *q;
	bool any = false;
	size_t i;

	if (vst_filtered(s, "cntn", vst_u64(c, "cntn")))
		return false;
	if (vst_filter_get(s, "qp-type") != NULL &&
	    (!with_type || vst_filtered_str(s, "qp-type", type)))
		return false;
	if (vst_filtered(s, "pid", vst_u64(c, "pid")))
		return false;
	if (vst_filter_get(s, "lqpn") == NULL)
		return true;
	json_array_foreach(lqpn, i, q)
		any |= !vst_filtered(s, "lqpn", json_integer_value(q));
	return any;
}

static void
stat_qp_line(struct vst *s, json_t *c)
{
	const char *mode = json_string_value(json_object_get(c, "mode"));
	const char *crit = json_string_value(json_object_get(c, "criteria"));
	const char *comm = json_string_value(json_object_get(c, "comm"));
	uint64_t pid = vst_u64(c, "pid");
	json_t *q;
	size_t i;

	vst_open(s);
	vst_link(s);
	vst_uint(s, "cntn", "cntn %" PRIu64 " ", vst_u64(c, "cntn"));
	/* the QP type is the counter's criterion in auto mode by type */
	if (mode != NULL && strcmp(mode, "auto") == 0 && crit != NULL &&
	    strstr(crit, "type") != NULL)
		vst_str(s, "qp-type", "qp-type %s ",
			json_string_value(json_object_get(c, "qp_type")));
	if (pid != 0)
		vst_uint(s, "pid", "pid %" PRIu64 " ", pid);
	if (comm != NULL && *comm != '\0') {
		char tmp[40];

		snprintf(tmp, sizeof(tmp), pid != 0 || s->json ? "%s" : "[%s]",
			 comm);
		vst_str(s, "comm", "comm %s ", tmp);
	}
	vst_counters(s, c);
	if (s->json) {
		json_t *a = json_array();

		json_array_foreach(json_object_get(c, "lqpn"), i, q)
			json_array_append(a, q);
		json_object_set_new(s->obj, "lqpn", a);
	} else {
		pr_out("\n    LQPN: <");
		json_array_foreach(json_object_get(c, "lqpn"), i, q)
			pr_out("%s%" JSON_INTEGER_FORMAT, i == 0 ? "" : ",",
			       json_integer_value(q));
		pr_out(">");
	}
	vst_newline(s);
}

static int
stat_qp_show_one_link(struct vst *s)
{
	json_t *cs, *c, *n;
	size_t i;
	int ret;

	if (s->port_idx == 0)
		return 0;
	/* none left: no filter, or stat_qp_show_filters() built them */
	if (!vst_no_arg(s)) {
		ret = vst_build_filter(s, stat_qp_filters);
		if (ret != 0)
			return ret;
	}
	cs = vst_tel_ok(s, &ret, "/vbr/qp_counters,%u", s->dev->ethdev);
	if (cs == NULL)
		return ret;
	json_array_foreach(json_object_get(cs, "cntn"), i, n) {
		const char *mode, *crit;
		bool with_type;

		c = vst_tel(s, "/vbr/qp_counter,%u,%" JSON_INTEGER_FORMAT,
			    s->dev->ethdev, json_integer_value(n));
		if (c == NULL) {
			ret = -EIO;
			break;
		}
		/* a counter freed since the listing is not an error */
		ret = vst_item(c);
		if (ret > 0) {
			ret = 0;
			mode = json_string_value(json_object_get(c, "mode"));
			crit = json_string_value(json_object_get(c,
								 "criteria"));
			with_type = mode != NULL && strcmp(mode, "auto") == 0 &&
				    crit != NULL && strstr(crit, "type");
			if (stat_qp_shown(s, c, with_type))
				stat_qp_line(s, c);
		}
		json_decref(c);
		if (ret != 0)
			break;
	}
	json_decref(cs);
	return ret;
}

static int
stat_qp_show_link(struct vst *s)
{
	return vst_exec_link(s, stat_qp_show_one_link, false);
}

/*
 * "qp show FILTER-NAME FILTER-VALUE...": every port's counters, filtered
 * ("qp show pid 30489"; rdma takes filters after "link DEV/PORT" only).
 */
static int
stat_qp_show_filters(struct vst *s)
{
	int ret = vst_build_filter(s, stat_qp_filters);

	if (ret != 0)
		return ret;
	/* the filters are all the arguments: every port */
	s->argc = 0;
	return vst_exec_link(s, stat_qp_show_one_link, false);
}

static int
stat_qp_show(struct vst *s)
{
	static const struct vst_cmd cmds[] = {
		{ NULL, stat_qp_show_link },
		{ "link", stat_qp_show_link },
		{ "help", stat_help },
		{ NULL, NULL },
	};
	const struct vst_filter_def *f;

	/* a keyword first, as rdma: "l" is link, not lqpn */
	if (!vst_no_arg(s) && !vst_argv_match(s, "link") &&
	    !vst_argv_match(s, "help"))
		for (f = stat_qp_filters; f->name != NULL; f++)
			if (vst_argv_match(s, f->name))
				return stat_qp_show_filters(s);
	return vst_exec_cmd(s, cmds, "parameter");
}

/* statistic qp mode [link DEV/PORT] */

static int
stat_one_qp_link_get_mode(struct vst *s)
{
	const char *mode, *crit;
	char out[64];
	json_t *v;
	int ret;

	ret = vst_no_more(s);
	if (ret != 0 || s->port_idx == 0)
		return ret;
	v = vst_tel_ok(s, &ret, "/vbr/qp_mode,%u", s->dev->ethdev);
	if (v == NULL)
		return ret;
	mode = json_string_value(json_object_get(v, "mode"));
	crit = json_string_value(json_object_get(v, "criteria"));
	if (mode != NULL && strcmp(mode, "auto") == 0 && crit != NULL &&
	    *crit != '\0')
		snprintf(out, sizeof(out), "qp auto %s on", crit);
	else
		snprintf(out, sizeof(out), "qp auto off");
	vst_open(s);
	vst_link(s);
	vst_str(s, "mode", "mode %s ", out);
	vst_newline(s);
	json_decref(v);
	return 0;
}

static int
stat_qp_link_get_mode(struct vst *s)
{
	return vst_exec_link(s, stat_one_qp_link_get_mode, false);
}

static int
stat_qp_get_mode(struct vst *s)
{
	static const struct vst_cmd cmds[] = {
		{ NULL, stat_qp_link_get_mode },
		{ "link", stat_qp_link_get_mode },
		{ "help", stat_help },
		{ NULL, NULL },
	};

	return vst_exec_cmd(s, cmds, "parameter");
}

/* statistic qp set link DEV/PORT auto {CRITERIA on | off} */

/* A request that answers nothing on success (bind, unbind, set). */
static int
vst_do(struct vst *s, const char *fmt, ...)
{
	char cmd[256];
	va_list ap;
	json_t *v;
	int ret;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	v = vst_tel_ok(s, &ret, "%s", cmd);
	json_decref(v);
	return ret;
}

/*
 * CRITERIA: "type", "pid", "type,pid" or "pid,type". rdma takes empty and
 * repeated ones too ("type,,type"); here they are errors.
 */
static int
stat_auto_criteria(const char *arg, bool *type, bool *pid)
{
	const char *mode = arg, *end;
	size_t len;

	*type = *pid = false;
	for (;;) {
		bool *b;

		end = strchr(mode, ',');
		len = end != NULL ? (size_t)(end - mode) : strlen(mode);
		if (len == 0) {
			pr_err("Empty auto mode in '%s'.\n", arg);
			return -EINVAL;
		}
		if (len == 4 && strncmp(mode, "type", len) == 0) {
			b = type;
		} else if (len == 3 && strncmp(mode, "pid", len) == 0) {
			b = pid;
		} else {
			pr_err("Unknown auto mode '%.*s'.\n", (int)len, mode);
			return -EINVAL;
		}
		if (*b) {
			pr_err("Repeated auto mode '%.*s'.\n", (int)len, mode);
			return -EINVAL;
		}
		*b = true;
		if (end == NULL)
			return 0;
		mode = end + 1;	/* not before: NULL + 1 is undefined */
	}
}

static int
stat_one_qp_set_link_auto(struct vst *s)
{
	bool type, pid;
	const char *crit;
	int ret;

	if (vst_no_arg(s)) {
		pr_err("Missing auto mode: { type | pid | type,pid } on, "
		       "or off.\n");
		return -EINVAL;
	}
	if (vst_abbrev(vst_argv(s), "off") == 0) {
		vst_arg_inc(s);
		ret = vst_no_more(s);
		if (ret != 0)
			return ret;
		return vst_do(s, "/vbr/qp_set_auto,%u,off", s->dev->ethdev);
	}
	ret = stat_auto_criteria(vst_argv(s), &type, &pid);
	if (ret != 0)
		return ret;
	vst_arg_inc(s);
	if (vst_no_arg(s)) {
		pr_err("Missing 'on' after the auto mode.\n");
		return -EINVAL;
	}
	if (vst_abbrev(vst_argv(s), "on") != 0) {
		pr_err("Unknown parameter '%s'.\n", vst_argv(s));
		return -EINVAL;
	}
	vst_arg_inc(s);
	ret = vst_no_more(s);
	if (ret != 0)
		return ret;
	crit = type && pid ? "type,pid" : type ? "type" : "pid";
	return vst_do(s, "/vbr/qp_set_auto,%u,%s", s->dev->ethdev, crit);
}

static int
stat_one_qp_set_link(struct vst *s)
{
	static const struct vst_cmd cmds[] = {
		{ NULL, stat_one_qp_link_get_mode },
		{ "auto", stat_one_qp_set_link_auto },
		{ NULL, NULL },
	};

	if (s->port_idx == 0)
		return 0;
	return vst_exec_cmd(s, cmds, "parameter");
}

static int
stat_qp_set_link(struct vst *s)
{
	return vst_exec_link(s, stat_one_qp_set_link, false);
}

static int
stat_qp_set(struct vst *s)
{
	static const struct vst_cmd cmds[] = {
		{ NULL, stat_help },
		{ "link", stat_qp_set_link },
		{ "help", stat_help },
		{ NULL, NULL },
	};

	return vst_exec_cmd(s, cmds, "parameter");
}

/* statistic qp bind / unbind link DEV/PORT ... */

/* "arg N": N, or -EINVAL (rdma's stat_get_arg). */
static int
stat_get_arg(struct vst *s, const char *arg)
{
	char *end;
	long v;

	if (vst_no_arg(s) || vst_abbrev(vst_argv(s), arg) != 0) {
		if (vst_no_arg(s))
			pr_err("Missing %s N.\n", arg);
		else
			pr_err("Unknown parameter '%s' (%s N expected).\n",
			       vst_argv(s), arg);
		return -EINVAL;
	}
	vst_arg_inc(s);
	if (!vst_no_arg(s) && strpbrk(vst_argv(s), ",-") != NULL) {
		pr_err("The parameter %s shouldn't include range\n", arg);
		return -EINVAL;
	}
	if (vst_no_arg(s) || *vst_argv(s) == '\0') {
		pr_err("Missing %s N.\n", arg);
		return -EINVAL;
	}
	errno = 0;
	v = strtol(vst_argv(s), &end, 10);
	if (errno != 0 || *end != '\0' || v < 0 || v > INT32_MAX) {
		pr_err("The parameter %s is out of range: %s\n", arg,
		       vst_argv(s));
		return -EINVAL;
	}
	vst_arg_inc(s);
	return (int)v;
}

/*
 * "FIRST N [SECOND N]" as /vbr/<endpoint>,<port>,N[,N]: bind (lqpn, cntn)
 * and unbind (cntn, lqpn).
 */
static int
stat_one_qp_ids(struct vst *s, const char *endpoint, const char *first,
		const char *second)
{
	int a, b, ret;

	if (vst_no_arg(s)) {
		stat_help(s);
		return -EINVAL;
	}
	ret = vst_build_filter(s, stat_qp_filters);
	if (ret != 0)
		return ret;
	a = stat_get_arg(s, first);
	if (a < 0)
		return a;
	if (vst_no_arg(s))
		return vst_do(s, "/vbr/%s,%u,%d", endpoint, s->dev->ethdev, a);
	b = stat_get_arg(s, second);
	if (b < 0)
		return b;
	ret = vst_no_more(s);
	if (ret != 0)
		return ret;
	return vst_do(s, "/vbr/%s,%u,%d,%d", endpoint, s->dev->ethdev, a, b);
}

static int
stat_one_qp_bind(struct vst *s)
{
	return stat_one_qp_ids(s, "qp_bind", "lqpn", "cntn");
}

static int
stat_one_qp_unbind(struct vst *s)
{
	return stat_one_qp_ids(s, "qp_unbind", "cntn", "lqpn");
}

static int
stat_qp_bind_link(struct vst *s)
{
	return vst_exec_link(s, stat_one_qp_bind, true);
}

static int
stat_qp_unbind_link(struct vst *s)
{
	return vst_exec_link(s, stat_one_qp_unbind, true);
}

static int
stat_qp_bind(struct vst *s)
{
	static const struct vst_cmd cmds[] = {
		{ NULL, stat_help },
		{ "link", stat_qp_bind_link },
		{ "help", stat_help },
		{ NULL, NULL },
	};

	return vst_exec_cmd(s, cmds, "parameter");
}

static int
stat_qp_unbind(struct vst *s)
{
	static const struct vst_cmd cmds[] = {
		{ NULL, stat_help },
		{ "link", stat_qp_unbind_link },
		{ "help", stat_help },
		{ NULL, NULL },
	};

	return vst_exec_cmd(s, cmds, "parameter");
}

static int
stat_qp(struct vst *s)
{
	static const struct vst_cmd cmds[] = {
		{ NULL, stat_qp_show },
		{ "show", stat_qp_show },
		{ "list", stat_qp_show },
		{ "mode", stat_qp_get_mode },
		{ "set", stat_qp_set },
		{ "bind", stat_qp_bind },
		{ "unbind", stat_qp_unbind },
		{ "help", stat_help },
		{ NULL, NULL },
	};

	return vst_exec_cmd(s, cmds, "parameter");
}

static int
cmd_stat(struct vst *s)
{
	static const struct vst_cmd cmds[] = {
		{ NULL, stat_show },
		{ "show", stat_show },
		{ "list", stat_show },
		{ "help", stat_help },
		{ "qp", stat_qp },
		{ "mr", stat_mr },
		{ NULL, NULL },
	};

	return vst_exec_cmd(s, cmds, "statistic command");
}

static int
cmd_help(struct vst *s)
{
	help(s->filename);
	return 0;
}

static int
vst_cmd(struct vst *s)
{
	static const struct vst_cmd cmds[] = {
		{ NULL, cmd_help },
		{ "help", cmd_help },
		{ "statistic", cmd_stat },
		{ NULL, NULL },
	};

	return vst_exec_cmd(s, cmds, "object");
}

static void
vst_cleanup(struct vst *s)
{
	unsigned int i;

	vst_filters_free(s);
	for (i = 0; i < s->ndevs; i++)
		free(s->devs[i].name);
	free(s->devs);
	free(s->buf);
	if (s->sock >= 0)
		close(s->sock);
}

/* The exit status: 1 for an error, output that did not get out too. */
static int
vst_exit(int err)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		pr_err("Failed to write the output: %s\n", strerror(errno));
		err = -EIO;
	}
	return err != 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

int
main(int argc, char **argv)
{
	static const struct option long_options[] = {
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "file-prefix", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	struct vst s = { .sock = -1, .prefix = "rte" };
	int opt, err;

	s.filename = basename(argv[0]);
	while ((opt = getopt_long(argc, argv, ":Vhjpf:", long_options,
				  NULL)) >= 0) {
		switch (opt) {
		case 'V':
			printf("%s utility, vbr-%s\n", s.filename, VBR_VERSION);
			return vst_exit(0);
		case 'p':
			s.pretty = true;
			break;
		case 'j':
			s.json = true;
			break;
		case 'f':
			s.prefix = optarg;
			break;
		case 'h':
			help(s.filename);
			return vst_exit(0);
		case ':':
			pr_err("-%c option requires an argument\n", optopt);
			return EXIT_FAILURE;
		default:
			pr_err("Unknown option.\n");
			help(s.filename);
			return EXIT_FAILURE;
		}
	}
	s.argc = argc - optind;
	s.argv = argv + optind;
	err = vst_cmd(&s);
	vst_cleanup(&s);
	return vst_exit(err);
}
