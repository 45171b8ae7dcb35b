/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The mlx5-vf profile (SWV_DEVICE_PROFILE_VF): a device that plays a
 * ConnectX VF delivers only frames whose destination its interface (the
 * VF's netdev) registered. Without arguments: the profile's name and the
 * wires it takes. With --veth (root): a veth pair in a namespace of the
 * test's own, a sender on one end and the VF on the other with an
 * ALL_DEFAULT rule (takes anything the vport lets in); frames to another
 * unicast MAC, to a multicast group, arrive only once the interface has
 * them (`bridge fdb add ... self`), anything with IFF_PROMISC, any
 * multicast with IFF_ALLMULTI; the others are counted in rx_vport_dropped,
 * not in rx_frames.
 */

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "swv_test_util.h"
#include "vbr_netns.h"

static int
test_profile_name(void)
{
	unsigned int fl;

	TEST_ASSERT_SUCCESS(swv_profile_parse("mlx5-vf", &fl), "");
	TEST_ASSERT_EQUAL(fl, SWV_DEVICE_PROFILE_MLX5 | SWV_DEVICE_PROFILE_VF,
			  "mlx5-vf is mlx5 with the VF bit");
	return TEST_SUCCESS;
}

/* A VF's netdev is an interface: in-memory wires and the full profile no. */
static int
test_profile_wires(void)
{
	TEST_ASSERT_EQUAL(swv_device_create_flags("vf-loop", "loop", NULL,
						  SWV_DEVICE_PROFILE_VF),
			  EINVAL, "loop");
	TEST_ASSERT_EQUAL(swv_device_create_flags("vf-pair", "pair:vfp", NULL,
						  SWV_DEVICE_PROFILE_VF),
			  EINVAL, "pair");
	TEST_ASSERT_EQUAL(swv_device_create_flags("vf-full", "af_packet:lo",
						  NULL,
						  SWV_DEVICE_PROFILE_VF |
						  SWV_DEVICE_PROFILE_FULL),
			  EINVAL, "full profile");
	return TEST_SUCCESS;
}

static const struct unit_test_suite suite = {
	.name = "swverbs mlx5-vf profile",
	.cases = {
		TEST_CASE(test_profile_name),
		TEST_CASE(test_profile_wires),
		TEST_CASES_END(),
	},
};

/* Over the veth: names, then the two ends as devices. */

static const uint8_t other_mac[6] = { 0x02, 0x76, 0x62, 0x76, 0x00, 0x55 };
static const uint8_t other2_mac[6] = { 0x02, 0x76, 0x62, 0x76, 0x00, 0x56 };
static const uint8_t mc_mac[6] = { 0x01, 0x00, 0x5e, 0x76, 0x62, 0x01 };
static const uint8_t mc2_mac[6] = { 0x01, 0x00, 0x5e, 0x76, 0x62, 0x02 };
static const char *const other_s = "02:76:62:76:00:55";
static const char *const mc_s = "01:00:5e:76:62:01";

struct tvf {
	struct tdev tx, vf;
	struct ibv_mr *tmr, *rmr;
	struct ibv_flow *fl;
	uint8_t tbuf[128];
	uint8_t rbuf[64][128];
};

static struct tvf tv;

static int
tvf_setup(void)
{
	unsigned int i;

	memset(&tv, 0, sizeof(tv));
	TEST_ASSERT_SUCCESS(t_setup(&tv.tx, "vf-sender", "af_packet:vvb"),
			    "sender");
	TEST_ASSERT_SUCCESS(t_setup_flags(&tv.vf, "vf-port", "af_packet:vva",
					  SWV_DEVICE_PROFILE_VF), "VF");
	tv.tmr = swv_reg_mr(tv.tx.pd, tv.tbuf, sizeof(tv.tbuf), 0);
	tv.rmr = swv_reg_mr(tv.vf.pd, tv.rbuf, sizeof(tv.rbuf),
			    IBV_ACCESS_LOCAL_WRITE);
	TEST_ASSERT(tv.tmr != NULL && tv.rmr != NULL, "MRs");
	tv.fl = t_flow_default(tv.vf.rqp, IBV_FLOW_ATTR_ALL_DEFAULT, 0);
	TEST_ASSERT_NOT_NULL(tv.fl, "ALL_DEFAULT rule");
	for (i = 0; i < sizeof(tv.rbuf) / sizeof(tv.rbuf[0]); i++)
		TEST_ASSERT_SUCCESS(t_recv(tv.vf.rqp, tv.rmr, tv.rbuf[i],
					   sizeof(tv.rbuf[i]), i), "recv");
	return 0;
}

static void
tvf_teardown(void)
{
	if (tv.fl != NULL)
		swv_destroy_flow(tv.fl);
	if (tv.tmr != NULL)
		swv_dereg_mr(tv.tmr);
	if (tv.rmr != NULL)
		swv_dereg_mr(tv.rmr);
	t_teardown(&tv.vf);
	t_teardown(&tv.tx);
}

/*
 * Send one frame to @dst; whether the VF delivered it. Waits for the
 * frame to be counted either way, so each step's counts are exact.
 */
/* Frames tvf_send() saw the vport drop. */
static uint64_t tvf_dropped;

static int
tvf_send(const uint8_t *dst, bool *delivered)
{
	struct swv_port_counters c0, c1;
	struct ibv_wc wc;
	uint64_t end;

	TEST_ASSERT_SUCCESS(swv_query_port_counters(tv.vf.ctx, &c0), "");
	t_frame(tv.tbuf, 80, dst, tv.tx.mac, 7);
	TEST_ASSERT_SUCCESS(t_send(tv.tx.sqp, tv.tmr, tv.tbuf, 80, 1), "send");
	TEST_ASSERT_EQUAL(t_poll(tv.tx.scq, &wc, 1, 2000), 1, "send CQE");
	end = t_now_ms() + 2000;
	do {
		TEST_ASSERT_SUCCESS(swv_query_port_counters(tv.vf.ctx, &c1),
				    "");
		if (c1.rx_frames > c0.rx_frames ||
		    c1.rx_vport_dropped > c0.rx_vport_dropped)
			break;
		usleep(1000);
	} while (t_now_ms() < end);
	TEST_ASSERT_EQUAL(c1.rx_frames - c0.rx_frames +
			  c1.rx_vport_dropped - c0.rx_vport_dropped, 1,
			  "the frame reached the VF's wire once");
	*delivered = c1.rx_frames > c0.rx_frames;
	if (!*delivered)
		tvf_dropped++;
	if (*delivered) {
		TEST_ASSERT_EQUAL(c1.rx_delivered - c0.rx_delivered, 1,
				  "the vport's frame went through steering");
		TEST_ASSERT_EQUAL(t_poll(tv.vf.rcq, &wc, 1, 2000), 1,
				  "receive CQE");
		TEST_ASSERT_SUCCESS(t_recv(tv.vf.rqp, tv.rmr,
					   tv.rbuf[wc.wr_id],
					   sizeof(tv.rbuf[0]), wc.wr_id), "");
	}
	return 0;
}

/* Run a command, then let a link check read the interface (10 ms). */
static int
tvf_sh(const char *cmd)
{
	int ret = vbr_sh("%s", cmd);

	usleep(50 * 1000);
	return ret;
}

#define EXPECT(dst, want, what) do { \
	bool got_; \
	TEST_ASSERT_SUCCESS(tvf_send(dst, &got_), what); \
	TEST_ASSERT_EQUAL(got_, (want), what ": %s", \
			  (want) ? "dropped by the vport" : "delivered"); \
} while (0)

/*
 * The first frame after a change of the interface: the device reads the
 * interface at its link check, every 10 ms but as late as its engine runs
 * (a sanitizer build under load: later than tvf_sh()'s 50 ms). Frames go
 * until one gets the new treatment, for 2 s at most; each is counted once
 * either way, and every later EXPECT() must agree at once.
 */
#define EXPECT_SOON(dst, want, what) do { \
	uint64_t end_ = t_now_ms() + 2000; \
	bool got_; \
	do { \
		TEST_ASSERT_SUCCESS(tvf_send(dst, &got_), what); \
		if (got_ == (want)) \
			break; \
		usleep(20 * 1000); \
	} while (t_now_ms() < end_); \
	TEST_ASSERT_EQUAL(got_, (want), what ": %s after 2 s", \
			  (want) ? "dropped by the vport" : "delivered"); \
} while (0)

static int
test_vf_filter(void)
{
	struct swv_port_counters c;
	struct ibv_device_attr_ex attr;
	char cmd[160];
	size_t n;

	TEST_ASSERT_SUCCESS(tvf_setup(), "setup");
	TEST_ASSERT_SUCCESS(swv_query_device_ex(tv.vf.ctx, NULL, &attr), "");
	n = strlen(attr.orig_attr.fw_ver);
	TEST_ASSERT(n > 8 && strcmp(attr.orig_attr.fw_ver + n - 8,
				    " mlx5-vf") == 0,
		    "fw_ver tells the profile: %s", attr.orig_attr.fw_ver);
	EXPECT(other_mac, false, "unicast not registered");
	EXPECT(mc_mac, false, "multicast not joined");
	snprintf(cmd, sizeof(cmd), "bridge fdb add %s dev vva self permanent",
		 other_s);
	TEST_ASSERT_SUCCESS(tvf_sh(cmd), "%s", cmd);
	EXPECT_SOON(other_mac, true, "unicast on the interface's list");
	EXPECT(other2_mac, false, "another unicast");
	snprintf(cmd, sizeof(cmd), "bridge fdb add %s dev vva self permanent",
		 mc_s);
	TEST_ASSERT_SUCCESS(tvf_sh(cmd), "%s", cmd);
	EXPECT_SOON(mc_mac, true, "multicast on the interface's list");
	EXPECT(mc2_mac, false, "another group");
	TEST_ASSERT_SUCCESS(tvf_sh("ip link set vva allmulticast on"), "");
	EXPECT_SOON(mc2_mac, true, "any group with IFF_ALLMULTI");
	EXPECT(other2_mac, false, "but not unicast");
	TEST_ASSERT_SUCCESS(tvf_sh("ip link set vva allmulticast off"), "");
	EXPECT_SOON(mc2_mac, false, "IFF_ALLMULTI off");
	TEST_ASSERT_SUCCESS(tvf_sh("ip link set vva promisc on"), "");
	EXPECT_SOON(other2_mac, true, "anything with IFF_PROMISC");
	EXPECT(mc2_mac, true, "anything with IFF_PROMISC");
	TEST_ASSERT_SUCCESS(tvf_sh("ip link set vva promisc off"), "");
	snprintf(cmd, sizeof(cmd), "bridge fdb del %s dev vva self", other_s);
	TEST_ASSERT_SUCCESS(tvf_sh(cmd), "%s", cmd);
	EXPECT_SOON(other_mac, false, "unicast taken off the list");
	EXPECT(mc_mac, true, "the group stays");
	TEST_ASSERT_SUCCESS(swv_query_port_counters(tv.tx.ctx, &c), "");
	TEST_ASSERT_EQUAL(c.rx_vport_dropped, 0, "no vport filter on mlx5");
	TEST_ASSERT_SUCCESS(swv_query_port_counters(tv.vf.ctx, &c), "");
	/* 7, and as many more as EXPECT_SOON() sent before a change */
	TEST_ASSERT(tvf_dropped >= 7, "%" PRIu64 " drops seen", tvf_dropped);
	TEST_ASSERT_EQUAL(c.rx_vport_dropped, tvf_dropped,
			  "vport drops counted, each once");
	TEST_ASSERT_EQUAL(c.rx_frames, c.rx_delivered + c.rx_out_of_buffer +
			  c.rx_no_match + c.rx_errors + c.rx_dropped,
			  "rx_frames identity without the vport's drops");
	tvf_teardown();
	return TEST_SUCCESS;
}

static const struct unit_test_suite suite_veth = {
	.name = "swverbs mlx5-vf profile over a veth",
	.cases = {
		TEST_CASE(test_vf_filter),
		TEST_CASES_END(),
	},
};

/* The namespace vbvf<pid> with both ends (vva, vvb), this process in it. */
static int
veth_setup(void)
{
	if (geteuid() == 0 && vbr_sh("bridge -V >/dev/null 2>&1") != 0) {
		printf("SKIP: needs bridge(8) (iproute2)\n");
		return 77;
	}
	return vbr_netns_enter("vbvf", "vva", "vvb");
}

int
main(int argc, char **argv)
{
	int ret;

	if (argc > 1 && strcmp(argv[1], "--veth") == 0) {
		ret = veth_setup();
		if (ret != 0)
			return ret;
		ret = unit_test_suite_runner(&suite_veth);
		vbr_netns_remove();
		return ret;
	}
	return unit_test_suite_runner(&suite);
}
