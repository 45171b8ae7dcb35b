/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The configuration file: JSON read with jansson (duplicate keys refused),
 * then every object walked against its table of known keys, so that a
 * misspelt key is an error and not a silently ignored option. Errors name
 * the file and the JSON path of the field; a syntax error names the line
 * and column jansson stopped at.
 */

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "tgw_config.h"

struct tgw_parse {
	const char *file;
	char *err;
	size_t err_len;
	uint32_t link_mbps;
};

static int
tgw_fail(struct tgw_parse *p, const char *path, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(p->err, p->err_len, "%s: %s: %s", p->file, path, msg);
	return -1;
}

/* Refuse any key of OBJ not in KEYS (NULL-terminated). */
static int
tgw_check_keys(struct tgw_parse *p, const char *path, json_t *obj,
	       const char *const *keys)
{
	const char *key;
	json_t *val;
	char where[192];
	unsigned int i;

	json_object_foreach(obj, key, val) {
		for (i = 0; keys[i] != NULL; i++)
			if (strcmp(key, keys[i]) == 0)
				break;
		if (keys[i] == NULL) {
			snprintf(where, sizeof(where), "%s%s%s", path,
				 path[0] != '\0' ? "." : "", key);
			return tgw_fail(p, where, "unknown key");
		}
	}
	return 0;
}

/* An optional integer field in [MIN, MAX]; DEF when absent. */
static int
tgw_get_int(struct tgw_parse *p, const char *path, json_t *obj,
	    const char *key, int64_t min, int64_t max, int64_t def,
	    int64_t *out, bool required)
{
	json_t *v = json_object_get(obj, key);
	char where[192];
	int64_t x;

	snprintf(where, sizeof(where), "%s%s%s", path,
		 path[0] != '\0' ? "." : "", key);
	if (v == NULL) {
		if (required)
			return tgw_fail(p, where, "missing");
		*out = def;
		return 0;
	}
	if (!json_is_integer(v))
		return tgw_fail(p, where, "not an integer");
	x = json_integer_value(v);
	if (x < min || x > max)
		return tgw_fail(p, where, "%" PRId64 " is out of range %" PRId64
				" to %" PRId64, x, min, max);
	*out = x;
	return 0;
}

static int
tgw_parse_prefix(struct tgw_parse *p, const char *where, const char *s,
		 struct tgw_tenant_conf *t)
{
	char buf[64];
	char *slash, *end;
	unsigned int maxlen, i;
	long len;

	if (strlen(s) >= sizeof(buf))
		return tgw_fail(p, where, "\"%s\" is not an address/length prefix", s);
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (slash == NULL)
		return tgw_fail(p, where, "\"%s\": no /length", s);
	*slash = '\0';
	memset(t->addr, 0, sizeof(t->addr));
	if (inet_pton(AF_INET, buf, t->addr) == 1) {
		t->family = AF_INET;
		maxlen = 32;
	} else if (inet_pton(AF_INET6, buf, t->addr) == 1) {
		t->family = AF_INET6;
		maxlen = 128;
	} else {
		return tgw_fail(p, where, "\"%s\" is not an IPv4 or IPv6 address", buf);
	}
	errno = 0;
	len = strtol(slash + 1, &end, 10);
	if (slash[1] == '\0' || *end != '\0' || errno != 0 || len < 1 ||
	    len > (long)maxlen)
		return tgw_fail(p, where, "\"%s\": the length must be 1 to %u",
				s, maxlen);
	t->plen = len;
	for (i = 0; i < maxlen / 8; i++) {
		unsigned int bit = i * 8;
		uint8_t host;

		if (bit + 8 <= t->plen)
			continue;
		host = bit >= t->plen ? 0xff : (uint8_t)(0xff >> (t->plen - bit));
		if ((t->addr[i] & host) != 0)
			return tgw_fail(p, where, "\"%s\" has host bits set", s);
	}
	return 0;
}

static int
tgw_parse_meter(struct tgw_parse *p, const char *path, json_t *m,
		struct tgw_meter_conf *mc)
{
	static const char *const keys[] = {
		"algorithm", "cir_kbps", "pir_kbps", "cbs", "ebs", "pbs", NULL
	};
	const int64_t rmax = 100000000; /* 100 Gbit/s in kbit/s */
	const int64_t bmax = UINT32_MAX;
	char where[192];
	const char *alg;
	json_t *a;
	int64_t v;

	if (!json_is_object(m))
		return tgw_fail(p, path, "not an object");
	if (tgw_check_keys(p, path, m, keys) != 0)
		return -1;
	snprintf(where, sizeof(where), "%s.algorithm", path);
	a = json_object_get(m, "algorithm");
	if (a == NULL)
		return tgw_fail(p, where, "missing (srtcm or trtcm)");
	alg = json_string_value(a);
	if (alg != NULL && strcmp(alg, "srtcm") == 0)
		mc->alg = TGW_METER_SRTCM;
	else if (alg != NULL && strcmp(alg, "trtcm") == 0)
		mc->alg = TGW_METER_TRTCM;
	else
		return tgw_fail(p, where, "must be \"srtcm\" or \"trtcm\"");
	if (tgw_get_int(p, path, m, "cir_kbps", 1, rmax, 0, &v, true) != 0)
		return -1;
	mc->cir_kbps = v;
	if (tgw_get_int(p, path, m, "cbs", 1, bmax, 0, &v, true) != 0)
		return -1;
	mc->cbs = v;
	if (mc->alg == TGW_METER_SRTCM) {
		if (json_object_get(m, "pir_kbps") != NULL ||
		    json_object_get(m, "pbs") != NULL) {
			snprintf(where, sizeof(where), "%s.%s", path,
				 json_object_get(m, "pbs") != NULL ?
				 "pbs" : "pir_kbps");
			return tgw_fail(p, where, "is a trtcm field, not srtcm");
		}
		if (tgw_get_int(p, path, m, "ebs", 0, bmax, 0, &v, false) != 0)
			return -1;
		mc->ebs = v;
		return 0;
	}
	if (json_object_get(m, "ebs") != NULL) {
		snprintf(where, sizeof(where), "%s.ebs", path);
		return tgw_fail(p, where, "is a srtcm field, not trtcm");
	}
	if (tgw_get_int(p, path, m, "pir_kbps", (int64_t)mc->cir_kbps, rmax,
			0, &v, true) != 0)
		return -1;
	mc->pir_kbps = v;
	if (tgw_get_int(p, path, m, "pbs", 1, bmax, 0, &v, true) != 0)
		return -1;
	mc->pbs = v;
	return 0;
}

static bool
tgw_name_ok(const char *s)
{
	if (*s == '\0' || strlen(s) >= TGW_NAME_LEN)
		return false;
	for (; *s != '\0'; s++)
		if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_' &&
		    *s != '.')
			return false;
	return true;
}

static int
tgw_parse_tenant(struct tgw_parse *p, const char *path, json_t *o,
		 struct tgw_tenant_conf *t)
{
	static const char *const keys[] = {
		"name", "vlan", "prefix", "rx_queues", "rate_mbps",
		"burst_bytes", "meter", NULL
	};
	char where[192];
	const char *s;
	json_t *v;
	int64_t x;

	memset(t, 0, sizeof(*t));
	t->vlan = -1;
	if (!json_is_object(o))
		return tgw_fail(p, path, "not an object");
	if (tgw_check_keys(p, path, o, keys) != 0)
		return -1;
	snprintf(where, sizeof(where), "%s.name", path);
	v = json_object_get(o, "name");
	if (v == NULL)
		return tgw_fail(p, where, "missing");
	s = json_string_value(v);
	if (s == NULL || !tgw_name_ok(s))
		return tgw_fail(p, where, "must be 1 to %d letters, digits, '-', "
				"'_' or '.'", TGW_NAME_LEN - 1);
	strcpy(t->name, s);
	if (tgw_get_int(p, path, o, "vlan", 1, 4095, -1, &x, false) != 0)
		return -1;
	t->vlan = x;
	v = json_object_get(o, "prefix");
	if (v != NULL) {
		snprintf(where, sizeof(where), "%s.prefix", path);
		s = json_string_value(v);
		if (s == NULL)
			return tgw_fail(p, where, "not a string");
		if (tgw_parse_prefix(p, where, s, t) != 0)
			return -1;
	}
	if (t->vlan < 0 && t->family == 0)
		return tgw_fail(p, path, "needs a \"vlan\" or a \"prefix\" to match");
	if (tgw_get_int(p, path, o, "rx_queues", 1, TGW_MAX_RXQ_PER_TENANT, 1,
			&x, false) != 0)
		return -1;
	t->rx_queues = x;
	if (tgw_get_int(p, path, o, "rate_mbps", 0, 400000, 0, &x, false) != 0)
		return -1;
	if (p->link_mbps != 0 && x > p->link_mbps) {
		snprintf(where, sizeof(where), "%s.rate_mbps", path);
		return tgw_fail(p, where, "%" PRId64 " Mbit/s is above the "
				"egress port's link speed, %" PRIu32 " Mbit/s",
				x, p->link_mbps);
	}
	t->rate_mbps = x;
	if (tgw_get_int(p, path, o, "burst_bytes", 1514, UINT32_MAX, 0, &x,
			false) != 0)
		return -1;
	t->burst_bytes = x;
	v = json_object_get(o, "meter");
	if (v != NULL) {
		char mpath[80];

		snprintf(mpath, sizeof(mpath), "%s.meter", path);
		if (tgw_parse_meter(p, mpath, v, &t->meter) != 0)
			return -1;
	}
	return 0;
}

bool
tgw_tenant_overlap(const struct tgw_tenant_conf *a,
		   const struct tgw_tenant_conf *b)
{
	unsigned int n, i;

	if (a->vlan >= 0 && b->vlan >= 0 && a->vlan != b->vlan)
		return false;
	if (a->family == 0 || b->family == 0)
		return true;
	if (a->family != b->family)
		return false;
	/* same family: one prefix contains the other over the shorter length */
	n = a->plen < b->plen ? a->plen : b->plen;
	for (i = 0; i < n / 8; i++)
		if (a->addr[i] != b->addr[i])
			return false;
	if (n % 8 != 0) {
		uint8_t m = (uint8_t)(0xff << (8 - n % 8));

		if ((a->addr[i] & m) != (b->addr[i] & m))
			return false;
	}
	return true;
}

bool
tgw_tenant_same_match(const struct tgw_tenant_conf *a,
		      const struct tgw_tenant_conf *b)
{
	return a->vlan == b->vlan && a->family == b->family &&
		a->plen == b->plen &&
		memcmp(a->addr, b->addr, sizeof(a->addr)) == 0 &&
		a->rx_queues == b->rx_queues;
}

const struct tgw_tenant_conf *
tgw_config_find(const struct tgw_config *conf, const char *name)
{
	unsigned int i;

	for (i = 0; i < conf->n_tenants; i++)
		if (strcmp(conf->tenants[i].name, name) == 0)
			return &conf->tenants[i];
	return NULL;
}

int
tgw_config_load(const char *file, uint32_t link_mbps,
		struct tgw_config *conf, char *err, size_t err_len)
{
	static const char *const keys[] = {
		"default", "spare_queues", "tenants", NULL
	};
	struct tgw_parse p = {
		.file = file, .err = err, .err_len = err_len,
		.link_mbps = link_mbps,
	};
	json_error_t jerr;
	json_t *root, *arr, *v;
	char path[64];
	const char *s;
	unsigned int i, j;
	int64_t x;
	int ret = -1;

	memset(conf, 0, sizeof(*conf));
	root = json_load_file(file, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL) {
		if (jerr.line < 0)
			snprintf(err, err_len, "%s: %s", file, jerr.text);
		else
			snprintf(err, err_len, "%s: line %d, column %d: %s",
				 file, jerr.line, jerr.column, jerr.text);
		return -1;
	}
	if (!json_is_object(root)) {
		tgw_fail(&p, "(top)", "not an object");
		goto out;
	}
	if (tgw_check_keys(&p, "", root, keys) != 0)
		goto out;
	v = json_object_get(root, "default");
	if (v != NULL) {
		s = json_string_value(v);
		if (s != NULL && strcmp(s, "drop") == 0) {
			conf->default_drop = true;
		} else if (s == NULL || strcmp(s, "queue") != 0) {
			tgw_fail(&p, "default", "must be \"queue\" or \"drop\"");
			goto out;
		}
	}
	if (tgw_get_int(&p, "", root, "spare_queues", 0, 16, 4, &x,
			false) != 0)
		goto out;
	conf->spare_queues = x;
	arr = json_object_get(root, "tenants");
	if (arr == NULL || !json_is_array(arr) || json_array_size(arr) == 0) {
		tgw_fail(&p, "tenants", "must be a non-empty array");
		goto out;
	}
	if (json_array_size(arr) > TGW_MAX_TENANTS) {
		tgw_fail(&p, "tenants", "%zu tenants, at most %d",
			 json_array_size(arr), TGW_MAX_TENANTS);
		goto out;
	}
	json_array_foreach(arr, i, v) {
		snprintf(path, sizeof(path), "tenants[%u]", i);
		if (tgw_parse_tenant(&p, path, v, &conf->tenants[i]) != 0)
			goto out;
		for (j = 0; j < i; j++) {
			if (strcmp(conf->tenants[j].name,
				   conf->tenants[i].name) == 0) {
				snprintf(path, sizeof(path), "tenants[%u].name", i);
				tgw_fail(&p, path, "\"%s\" is tenants[%u]'s name too",
					 conf->tenants[i].name, j);
				goto out;
			}
			if (tgw_tenant_overlap(&conf->tenants[j],
					       &conf->tenants[i])) {
				tgw_fail(&p, path, "\"%s\" overlaps tenants[%u] "
					 "(\"%s\"): a frame can match both",
					 conf->tenants[i].name, j,
					 conf->tenants[j].name);
				goto out;
			}
		}
		conf->n_tenants++;
	}
	ret = 0;
out:
	json_decref(root);
	return ret;
}
