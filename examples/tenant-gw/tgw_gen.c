/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * tenant-gw-gen: the traffic generator for tenant-gw. It reads the
 * gateway's tenant file, sends each tenant named in a --mix its frames
 * (rate, size, count; the VLAN and a destination address inside the
 * tenant's prefix taken from the tenant's match) out of port 0 towards the
 * gateway's ingress, and receives what the gateway forwards on port 1. The
 * payload carries a tenant index and a sequence number, so frames are
 * counted per tenant on the way back.
 *
 * For each metered tenant it runs DPDK's rte_meter over the frames it sent,
 * each at the TSC it was handed to the port, with the tenant's profile: the
 * colours the gateway's meter should give that trace. At the end it prints
 * one JSON object per tenant: sent, expected colours, received, and the
 * receive rate from the first to the last frame back.
 *
 * One lcore (the main one) does everything: sending on a TSC schedule and
 * polling for the frames that come back.
 */

#include <arpa/inet.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_meter.h>
#include <rte_udp.h>

#include "tgw_compat.h"
#include "tgw_config.h"

#define GEN_BURST 32
#define GEN_MAGIC 0x7467776eu	/* "tgwn" */
#define GEN_MAX_FLOWS (TGW_MAX_TENANTS + 1)

struct __rte_packed_begin gen_payload {
	rte_be32_t magic;
	rte_be16_t flow;
	rte_be16_t pad;
	rte_be32_t seq;
} __rte_packed_end;

struct gen_flow {
	char name[TGW_NAME_LEN];
	struct tgw_tenant_conf match;	/**< VLAN and address to send */
	double mbps;
	uint16_t size;		/**< frame length, no FCS */
	uint64_t packets;	/**< to send */
	double gap;		/**< TSC cycles between frames */
	double next;		/**< TSC of the next frame */
	uint64_t sent, sent_bytes;
	uint64_t exp[RTE_COLORS];
	bool metered;
	bool trtcm;
	struct rte_meter_srtcm_profile sp;
	struct rte_meter_srtcm sm;
	struct rte_meter_trtcm_profile tp;
	struct rte_meter_trtcm tm;
	uint64_t rcvd, rcvd_bytes, bytes_after_first;
	uint64_t swapped;	/**< came back with the MACs swapped */
	uint64_t first_tsc, last_tsc;
};

/* the addresses frames go out with */
static const uint8_t gen_dst[RTE_ETHER_ADDR_LEN] = { 2, 0, 0, 0, 0, 1 };
static const uint8_t gen_src[RTE_ETHER_ADDR_LEN] = { 2, 0, 0, 0, 0, 0x10 };

static struct gen_flow flows[GEN_MAX_FLOWS];
static unsigned int n_flows;
static volatile sig_atomic_t gen_quit;

static void
gen_on_signal(int sig __rte_unused)
{
	gen_quit = 1;
}

/* MIX: NAME=MBPS:SIZE:PACKETS */
static int
gen_parse_mix(const struct tgw_config *conf, const char *mix, bool unmatched)
{
	struct gen_flow *f = &flows[n_flows];
	const struct tgw_tenant_conf *t;
	char name[TGW_NAME_LEN];
	const char *spec = mix;
	unsigned int size, i;
	unsigned long long pk;
	double mbps;
	const char *eq;

	if (n_flows == GEN_MAX_FLOWS)
		return -1;
	memset(f, 0, sizeof(*f));
	if (!unmatched) {
		eq = strchr(mix, '=');
		if (eq == NULL || eq == mix || (size_t)(eq - mix) >= sizeof(name))
			goto bad;
		memcpy(name, mix, eq - mix);
		name[eq - mix] = '\0';
		t = tgw_config_find(conf, name);
		if (t == NULL) {
			fprintf(stderr, "tenant-gw-gen: --mix %s: no tenant "
				"\"%s\" in the config\n", mix, name);
			return -1;
		}
		f->match = *t;
		snprintf(f->name, sizeof(f->name), "%s", name);
		spec = eq + 1;
	} else {
		/* a VLAN and an address no tenant takes */
		memset(&f->match, 0, sizeof(f->match));
		f->match.vlan = 4094;
		f->match.family = AF_INET;
		f->match.plen = 32;
		inet_pton(AF_INET, "198.51.100.99", f->match.addr);
		for (i = 0; i < conf->n_tenants; i++)
			if (tgw_tenant_overlap(&f->match, &conf->tenants[i])) {
				fprintf(stderr, "tenant-gw-gen: --unmatched: "
					"tenant %s takes VLAN 4094 / "
					"198.51.100.99\n", conf->tenants[i].name);
				return -1;
			}
		snprintf(f->name, sizeof(f->name), "(unmatched)");
	}
	if (sscanf(spec, "%lf:%u:%llu", &mbps, &size, &pk) != 3 || mbps <= 0 ||
	    size < 64 || size > 1514 || pk == 0)
		goto bad;
	f->mbps = mbps;
	f->size = size;
	f->packets = pk;
	f->gap = (double)size * 8 * rte_get_tsc_hz() / (mbps * 1e6);
	if (!unmatched && f->match.meter.alg == TGW_METER_SRTCM) {
		struct rte_meter_srtcm_params p = {
			.cir = f->match.meter.cir_kbps * 125,
			.cbs = f->match.meter.cbs,
			.ebs = f->match.meter.ebs,
		};

		if (rte_meter_srtcm_profile_config(&f->sp, &p) != 0 ||
		    rte_meter_srtcm_config(&f->sm, &f->sp) != 0)
			goto bad;
		f->metered = true;
	} else if (!unmatched && f->match.meter.alg == TGW_METER_TRTCM) {
		struct rte_meter_trtcm_params p = {
			.cir = f->match.meter.cir_kbps * 125,
			.pir = f->match.meter.pir_kbps * 125,
			.cbs = f->match.meter.cbs,
			.pbs = f->match.meter.pbs,
		};

		if (rte_meter_trtcm_profile_config(&f->tp, &p) != 0 ||
		    rte_meter_trtcm_config(&f->tm, &f->tp) != 0)
			goto bad;
		f->metered = true;
		f->trtcm = true;
	}
	n_flows++;
	return 0;
bad:
	fprintf(stderr, "tenant-gw-gen: bad --mix %s (NAME=MBPS:SIZE:PACKETS, "
		"size 64 to 1514)\n", mix);
	return -1;
}

/* One frame of flow FI, sequence SEQ. */
static struct rte_mbuf *
gen_frame(struct rte_mempool *mp, unsigned int fi, uint32_t seq)
{
	const struct gen_flow *f = &flows[fi];
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	struct rte_ether_hdr *eh;
	struct rte_udp_hdr *uh;
	struct gen_payload *pl;
	uint16_t l3 = 0, len = f->size;
	uint8_t *p;

	if (m == NULL)
		return NULL;
	p = (uint8_t *)rte_pktmbuf_append(m, len);
	if (p == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memset(p, 0, len);
	eh = (struct rte_ether_hdr *)p;
	memcpy(eh->dst_addr.addr_bytes, gen_dst, RTE_ETHER_ADDR_LEN);
	memcpy(eh->src_addr.addr_bytes, gen_src, RTE_ETHER_ADDR_LEN);
	p += sizeof(*eh);
	if (f->match.vlan >= 0) {
		struct rte_vlan_hdr *vh = (struct rte_vlan_hdr *)p;

		eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN);
		vh->vlan_tci = rte_cpu_to_be_16(f->match.vlan);
		p += sizeof(*vh);
		l3 = sizeof(*vh);
	}
	l3 += sizeof(*eh);
	if (f->match.family == AF_INET6) {
		struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)p;

		((rte_be16_t *)(p - 2))[0] = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
		ip->vtc_flow = rte_cpu_to_be_32(6u << 28);
		ip->payload_len = rte_cpu_to_be_16(len - l3 - sizeof(*ip));
		ip->proto = IPPROTO_UDP;
		ip->hop_limits = 64;
		TGW_IPV6_BYTES(ip->src_addr)[0] = 0xfd;
		TGW_IPV6_BYTES(ip->src_addr)[15] = 1 + seq % 16;
		memcpy(TGW_IPV6_BYTES(ip->dst_addr), f->match.addr, 16);
		if (f->match.plen < 128)
			TGW_IPV6_BYTES(ip->dst_addr)[15] |= 1;
		p += sizeof(*ip);
	} else {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)p;
		uint8_t dst[4] = { 192, 0, 2, 1 };

		((rte_be16_t *)(p - 2))[0] = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
		if (f->match.family == AF_INET) {
			memcpy(dst, f->match.addr, 4);
			if (f->match.plen < 32)
				dst[3] |= 1;
		}
		ip->version_ihl = 0x45;
		ip->total_length = rte_cpu_to_be_16(len - l3);
		ip->time_to_live = 64;
		ip->next_proto_id = IPPROTO_UDP;
		ip->src_addr = rte_cpu_to_be_32(0x0a000001 + seq % 16);
		memcpy(&ip->dst_addr, dst, 4);
		ip->hdr_checksum = rte_ipv4_cksum(ip);
		p += sizeof(*ip);
	}
	uh = (struct rte_udp_hdr *)p;
	uh->src_port = rte_cpu_to_be_16(1024 + seq % 16);
	uh->dst_port = rte_cpu_to_be_16(9);
	uh->dgram_len = rte_cpu_to_be_16(len - (p - rte_pktmbuf_mtod(m, uint8_t *)));
	pl = (struct gen_payload *)(uh + 1);
	pl->magic = rte_cpu_to_be_32(GEN_MAGIC);
	pl->flow = rte_cpu_to_be_16(fi);
	pl->seq = rte_cpu_to_be_32(seq);
	return m;
}

static void
gen_receive(uint16_t port)
{
	struct rte_mbuf *pkts[GEN_BURST];
	uint64_t now = rte_get_tsc_cycles();
	uint16_t n, i;

	n = rte_eth_rx_burst(port, 0, pkts, GEN_BURST);
	for (i = 0; i < n; i++) {
		uint8_t *p = rte_pktmbuf_mtod(pkts[i], uint8_t *);
		uint32_t len = rte_pktmbuf_data_len(pkts[i]);
		uint32_t off = sizeof(struct rte_ether_hdr);
		uint16_t type = rte_be_to_cpu_16(*(rte_be16_t *)(p + 12));
		struct gen_payload pl;
		struct gen_flow *f;
		unsigned int fi;

		if (type == RTE_ETHER_TYPE_VLAN) {
			type = rte_be_to_cpu_16(*(rte_be16_t *)(p + 16));
			off += 4;
		}
		off += type == RTE_ETHER_TYPE_IPV6 ? 40 : 20;
		off += sizeof(struct rte_udp_hdr);
		if (off + sizeof(pl) > len)
			goto next;
		memcpy(&pl, p + off, sizeof(pl));
		fi = rte_be_to_cpu_16(pl.flow);
		if (rte_be_to_cpu_32(pl.magic) != GEN_MAGIC || fi >= n_flows)
			goto next;
		f = &flows[fi];
		if (f->rcvd == 0)
			f->first_tsc = now;
		else
			f->bytes_after_first += rte_pktmbuf_pkt_len(pkts[i]);
		f->rcvd++;
		f->rcvd_bytes += rte_pktmbuf_pkt_len(pkts[i]);
		if (memcmp(p, gen_src, RTE_ETHER_ADDR_LEN) == 0 &&
		    memcmp(p + RTE_ETHER_ADDR_LEN, gen_dst, RTE_ETHER_ADDR_LEN) == 0)
			f->swapped++;
		f->last_tsc = now;
next:
		rte_pktmbuf_free(pkts[i]);
	}
}

static void
gen_color(struct gen_flow *f, uint64_t tsc, uint32_t len)
{
	enum rte_color c;

	if (!f->metered)
		return;
	if (f->trtcm)
		c = rte_meter_trtcm_color_blind_check(&f->tm, &f->tp, tsc, len);
	else
		c = rte_meter_srtcm_color_blind_check(&f->sm, &f->sp, tsc, len);
	f->exp[c]++;
}

/* Send what is due on flow FI at NOW; returns whether frames are left. */
static bool
gen_send(struct rte_mempool *mp, uint16_t port, unsigned int fi, uint64_t now)
{
	struct gen_flow *f = &flows[fi];
	struct rte_mbuf *pkts[GEN_BURST];
	uint16_t n = 0, sent, i;
	uint64_t tsc;

	if (f->sent == f->packets)
		return false;
	/* a generator that fell behind (descheduled) does not catch up in a
	 * burst: it goes on at its rate from now, so the trace stays smooth
	 * (the expected colours come from the actual send times anyway) */
	if (f->next == 0 || f->next + GEN_BURST * f->gap < (double)now)
		f->next = now;
	while (n < GEN_BURST && f->sent + n < f->packets &&
	       f->next + n * f->gap <= (double)now) {
		pkts[n] = gen_frame(mp, fi, f->sent + n);
		if (pkts[n] == NULL)
			break;
		n++;
	}
	if (n == 0)
		return true;
	tsc = rte_get_tsc_cycles();
	sent = rte_eth_tx_burst(port, 0, pkts, n);
	for (i = 0; i < sent; i++)
		gen_color(f, tsc, f->size);
	for (i = sent; i < n; i++)
		rte_pktmbuf_free(pkts[i]);
	f->sent += sent;
	f->sent_bytes += (uint64_t)sent * f->size;
	f->next += sent * f->gap;
	return f->sent < f->packets;
}

static void
gen_report(void)
{
	double hz = rte_get_tsc_hz();
	unsigned int i;

	for (i = 0; i < n_flows; i++) {
		const struct gen_flow *f = &flows[i];
		double span = (double)(f->last_tsc - f->first_tsc) / hz;

		printf("{\"tenant\": \"%s\", \"sent\": %" PRIu64
		       ", \"sent_bytes\": %" PRIu64 ", \"offered_mbps\": %.3f"
		       ", \"metered\": %s, \"expected_green\": %" PRIu64
		       ", \"expected_yellow\": %" PRIu64
		       ", \"expected_red\": %" PRIu64 ", \"received\": %" PRIu64
		       ", \"received_bytes\": %" PRIu64
		       ", \"received_swapped\": %" PRIu64 ", \"rx_mbps\": %.4f}\n",
		       f->name, f->sent, f->sent_bytes, f->mbps,
		       f->metered ? "true" : "false", f->exp[RTE_COLOR_GREEN],
		       f->exp[RTE_COLOR_YELLOW], f->exp[RTE_COLOR_RED], f->rcvd,
		       f->rcvd_bytes, f->swapped,
		       span > 0 ? f->bytes_after_first * 8 / span / 1e6 : 0.0);
	}
	fflush(stdout);
}

static int
gen_port_init(uint16_t port, struct rte_mempool *mp)
{
	struct rte_eth_conf pc = { 0 };
	int ret;

	ret = rte_eth_dev_configure(port, 1, 1, &pc);
	if (ret == 0)
		ret = rte_eth_rx_queue_setup(port, 0, 1024,
					     rte_eth_dev_socket_id(port), NULL, mp);
	if (ret == 0)
		ret = rte_eth_tx_queue_setup(port, 0, 1024,
					     rte_eth_dev_socket_id(port), NULL);
	if (ret == 0)
		ret = rte_eth_dev_start(port);
	if (ret == 0)
		ret = rte_eth_promiscuous_enable(port);
	if (ret != 0)
		fprintf(stderr, "tenant-gw-gen: port %u: %s\n", port,
			rte_strerror(-ret));
	return ret;
}

static void
gen_usage(FILE *f)
{
	fprintf(f,
		"usage: tenant-gw-gen [EAL options] -- --config FILE\n"
		"       --mix NAME=MBPS:SIZE:PACKETS [--mix ...]\n"
		"       [--unmatched MBPS:SIZE:PACKETS] [--wait SECS]\n"
		"  --config FILE  the gateway's tenant file\n"
		"  --mix          PACKETS frames of SIZE bytes (64 to 1514, no\n"
		"                 FCS) at MBPS Mbit/s to tenant NAME\n"
		"  --unmatched    the same, to no tenant (VLAN 4094)\n"
		"  --wait SECS    how long to wait for frames back after the\n"
		"                 last one sent (default 1)\n"
		"  --help         this text\n"
		"  sends on port 0, receives on port 1; one JSON object per\n"
		"  tenant on stdout at the end\n");
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "mix", required_argument, NULL, 'm' },
		{ "unmatched", required_argument, NULL, 'u' },
		{ "wait", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *mixes[GEN_MAX_FLOWS], *unmatched = NULL, *file = NULL;
	unsigned int n_mix = 0, i, wait_s = 1;
	struct tgw_config conf;
	struct rte_mempool *mp;
	uint64_t last_rx, hz;
	uint64_t rcvd_before;
	char err[512], *end;
	bool busy;
	int c, ret;

	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "tenant-gw-gen: EAL init failed\n");
		return 1;
	}
	argc -= ret;
	argv += ret;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			file = optarg;
			break;
		case 'm':
			if (n_mix == TGW_MAX_TENANTS)
				goto usage;
			mixes[n_mix++] = optarg;
			break;
		case 'u':
			unmatched = optarg;
			break;
		case 'w':
			wait_s = strtoul(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || wait_s > 3600) {
				fprintf(stderr, "tenant-gw-gen: --wait %s: "
					"seconds, 0 to 3600\n", optarg);
				goto fail;
			}
			break;
		case 'h':
			gen_usage(stdout);
			rte_eal_cleanup();
			return 0;
		default:
			goto usage;
		}
	}
	if (file == NULL || (n_mix == 0 && unmatched == NULL) || optind != argc)
		goto usage;
	if (rte_eth_dev_count_avail() < 2) {
		fprintf(stderr, "tenant-gw-gen: needs two ports (port 0 to the "
			"gateway's ingress, port 1 from its egress)\n");
		goto fail;
	}
	if (tgw_config_load(file, 0, &conf, err, sizeof(err)) != 0) {
		fprintf(stderr, "tenant-gw-gen: %s\n", err);
		goto fail;
	}
	for (i = 0; i < n_mix; i++)
		if (gen_parse_mix(&conf, mixes[i], false) != 0)
			goto fail;
	if (unmatched != NULL && gen_parse_mix(&conf, unmatched, true) != 0)
		goto fail;
	mp = rte_pktmbuf_pool_create("gen_pool", 8192, 256, 0,
				     RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
	if (mp == NULL || gen_port_init(0, mp) != 0 || gen_port_init(1, mp) != 0)
		goto fail;
	signal(SIGINT, gen_on_signal);
	signal(SIGTERM, gen_on_signal);
	hz = rte_get_tsc_hz();
	do {
		uint64_t now = rte_get_tsc_cycles();

		busy = false;
		for (i = 0; i < n_flows; i++)
			busy |= gen_send(mp, 0, i, now);
		gen_receive(1);
	} while (busy && !gen_quit);
	/* wait for the gateway's backlog: until WAIT s pass with nothing */
	last_rx = rte_get_tsc_cycles();
	rcvd_before = 0;
	while (!gen_quit && rte_get_tsc_cycles() - last_rx < wait_s * hz) {
		uint64_t r = 0;

		gen_receive(1);
		for (i = 0; i < n_flows; i++)
			r += flows[i].rcvd;
		if (r != rcvd_before) {
			rcvd_before = r;
			last_rx = rte_get_tsc_cycles();
		}
	}
	gen_report();
	rte_eth_dev_stop(0);
	rte_eth_dev_stop(1);
	rte_eth_dev_close(0);
	rte_eth_dev_close(1);
	rte_eal_cleanup();
	return 0;
usage:
	gen_usage(stderr);
fail:
	rte_eal_cleanup();
	return 1;
}
