/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * tenant-gw's configuration: a JSON file (parsed with jansson) checked in
 * full before any port is touched. Every error names the JSON path and the
 * field ("tenants[1].vlan: ...") or, for a file that is not JSON, the line
 * and column.
 */

#ifndef TGW_CONFIG_H
#define TGW_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>

#define TGW_MAX_TENANTS 32
#define TGW_NAME_LEN 32
#define TGW_MAX_RXQ_PER_TENANT 4

enum tgw_meter_alg {
	TGW_METER_NONE = 0,
	TGW_METER_SRTCM,	/**< RFC 2697: cir, cbs, ebs */
	TGW_METER_TRTCM,	/**< RFC 2698: cir, pir, cbs, pbs */
};

struct tgw_meter_conf {
	enum tgw_meter_alg alg;
	uint64_t cir_kbps;	/**< committed rate, kbit/s */
	uint64_t pir_kbps;	/**< peak rate, kbit/s (trtcm) */
	uint64_t cbs;		/**< committed burst, bytes */
	uint64_t ebs;		/**< excess burst, bytes (srtcm) */
	uint64_t pbs;		/**< peak burst, bytes (trtcm) */
};

struct tgw_tenant_conf {
	char name[TGW_NAME_LEN];
	int vlan;		/**< VLAN id 1..4095, -1: any */
	int family;		/**< AF_INET, AF_INET6 or 0: any address */
	uint8_t addr[16];	/**< destination prefix, network order */
	uint8_t plen;		/**< prefix length */
	uint16_t rx_queues;	/**< 1: QUEUE, more: RSS over them */
	uint32_t rate_mbps;	/**< egress rate, 0: unpaced */
	uint32_t burst_bytes;	/**< egress bucket, 0: 20 ms at the rate */
	struct tgw_meter_conf meter;
};

struct tgw_config {
	bool default_drop;	/**< unmatched traffic dropped (else queue 0) */
	uint16_t spare_queues;	/**< queues kept for tenants a reload adds */
	unsigned int n_tenants;
	struct tgw_tenant_conf tenants[TGW_MAX_TENANTS];
};

/*
 * Read and check FILE into CONF. LINK_MBPS, when non-zero, is the egress
 * port's speed: a rate above it is refused. On error returns -1 with a
 * message in ERR ("FILE: tenants[2].rate_mbps: ...").
 */
int tgw_config_load(const char *file, uint32_t link_mbps,
		    struct tgw_config *conf, char *err, size_t err_len);

/* Whether two tenants' matches can both match one frame. */
bool tgw_tenant_overlap(const struct tgw_tenant_conf *a,
			const struct tgw_tenant_conf *b);

/* Whether A and B match the same frames onto the same number of queues. */
bool tgw_tenant_same_match(const struct tgw_tenant_conf *a,
			   const struct tgw_tenant_conf *b);

/* The tenant named NAME, or NULL. */
const struct tgw_tenant_conf *
tgw_config_find(const struct tgw_config *conf, const char *name);

#endif /* TGW_CONFIG_H */
