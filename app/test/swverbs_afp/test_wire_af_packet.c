/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * e2e test of a kernel wire alone (lib/swverbs/wire_af_packet.c, or
 * wire_af_xdp.c with --wire af_xdp), over a veth pair whose far end lives in
 * a network namespace this program creates and removes. The far end is
 * driven through raw sockets opened inside that namespace (setns() around
 * socket()), so no helper process is needed. swv_device_rx() and
 * swv_device_rx_burst() are defined here and record the frames.
 *
 * Needs root and iproute2 (`ip netns`); exits 77 otherwise, and for
 * --wire af_xdp where the kernel has no AF_XDP.
 * `test_wire_af_packet [--wire af_xdp] --bench` also measures Rx and Tx rates.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/ethtool.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/sockios.h>
#include <linux/capability.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "test.h"
#include "vbr_netns.h"
#include "swverbs.h"
#include "swv_netif.h"
#include "swv_wire.h"

#define T_TYPE 0x88b5		/* IEEE local experimental EtherType */
#define T_MAX_REC 4096
#define T_REC_BYTES (32u * 1024 * 1024)

static const uint8_t t_dst[6] = { 0x02, 0x76, 0x62, 0x72, 0x74, 0x02 };
static const uint8_t t_src[6] = { 0x02, 0x76, 0x62, 0x72, 0x74, 0x01 };

/* The device, as far as the wire can tell: a frame recorder. */
struct swv_device {
	bool (*want)(const uint8_t *frame, uint32_t len);
	unsigned int n;			/**< frames recorded */
	unsigned int calls;		/**< swv_device_rx() calls */
	uint64_t link_down;		/**< swv_wire_tx_link_down() calls */
	uint32_t off[T_MAX_REC];
	uint32_t len[T_MAX_REC];
	uint32_t used;
	uint8_t *buf;
};

/* The wire under test: its constructor and its own queries. */
struct t_kind {
	const char *name;
	int (*open)(struct swv_device *dev, const char *ifname,
		    uint8_t mac[6], struct swv_wire **out);
	int (*ifindex)(struct swv_wire *wire);
	uint64_t (*drops)(struct swv_wire *wire);
	/* Largest frame the wire carries (SWV_MAX_FRAME: any the device). */
	uint32_t frame_max;
	/*
	 * Bytes above MTU + 14 any frame may have on send: 4 as a ConnectX
	 * (af_packet, whose virtio-net header leaves the length to it), or
	 * 0: the kernel's rule, 4 for an 802.1Q-tagged frame only (af_xdp).
	 */
	uint32_t tx_extra;
};

static int
t_netif_ifindex(struct swv_wire *wire)
{
	return swv_wire_netif(wire)->ifindex;
}

static const struct t_kind t_kinds[] = {
	{ "af_packet", swv_wire_af_packet_open, swv_wire_af_packet_ifindex,
	  swv_wire_af_packet_drops, SWV_MAX_FRAME, 4 },
	/* A 4 KiB UMEM frame less the kernel's 256-byte headroom. */
	{ "af_xdp", swv_wire_af_xdp_open, t_netif_ifindex,
	  swv_wire_af_xdp_drops, 3840, 0 },
};

static const struct t_kind *t_kind = &t_kinds[0];

/*
 * The ioctl()s the wires make, SIOCETHTOOL counted: this definition takes
 * the place of libc's for the wire code linked into this test.
 */
static unsigned long t_ethtool_calls;

int
ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (req == SIOCETHTOOL)
		__atomic_fetch_add(&t_ethtool_calls, 1, __ATOMIC_RELAXED);
	return (int)syscall(SYS_ioctl, fd, req, arg);
}
static struct swv_device t_dev;
static struct swv_wire *t_wire;
static char t_a[IF_NAMESIZE], t_b[IF_NAMESIZE], t_ns[IF_NAMESIZE];
static bool t_created;
static int t_peer = -1;		/* raw socket on t_b, in t_ns */
static uint8_t t_mac[6];

void
swv_device_rx(struct swv_device *dev, const struct iovec *iov, int iovcnt,
	      uint32_t len)
{
	uint8_t frame[SWV_MAX_FRAME];
	uint32_t got = 0;
	int i;

	dev->calls++;
	for (i = 0; i < iovcnt; i++) {
		if (got + iov[i].iov_len > sizeof(frame))
			return;
		memcpy(frame + got, iov[i].iov_base, iov[i].iov_len);
		got += iov[i].iov_len;
	}
	if (got != len)
		return;		/* caught by the comparisons: not recorded */
	if (dev->want != NULL && !dev->want(frame, len))
		return;
	if (dev->n == T_MAX_REC || dev->used + len > T_REC_BYTES)
		return;
	dev->off[dev->n] = dev->used;
	dev->len[dev->n] = len;
	memcpy(dev->buf + dev->used, frame, len);
	dev->used += len;
	dev->n++;
}

void
swv_wire_tx_link_down(struct swv_wire *wire, uint32_t len)
{
	(void)len;
	wire->dev->link_down++;
}

void
swv_device_rx_burst(struct swv_device *dev, const struct swv_frame *fr,
		    unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		swv_device_rx(dev, fr[i].iov, fr[i].iovcnt, fr[i].len);
}

static bool
is_xdp(void)
{
	return t_kind == &t_kinds[1];
}

static void
rec_reset(bool (*want)(const uint8_t *, uint32_t))
{
	t_dev.want = want;
	t_dev.n = 0;
	t_dev.used = 0;
}

/* Test frames: from t_src, EtherType T_TYPE after any VLAN tags. */
static bool
want_test(const uint8_t *f, uint32_t len)
{
	return len >= 14 && memcmp(f + 6, t_src, 6) == 0;
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
cleanup(void)
{
	if (t_wire != NULL) {
		t_wire->ops->close(t_wire);
		t_wire = NULL;
	}
	if (t_peer >= 0) {
		close(t_peer);
		t_peer = -1;
	}
	if (!t_created)
		return;
	t_created = false;
	vbr_sh("ip link del %s >/dev/null 2>&1", t_a);
	vbr_sh("ip netns del %s >/dev/null 2>&1", t_ns);
}

static void
on_signal(int sig)
{
	cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

static int
peer_open(void)
{
	int one = 1, buf = 64 << 20;

	t_peer = vbr_ns_peer_socket(t_ns, t_b);
	if (t_peer < 0)
		return -1;
	setsockopt(t_peer, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf));
	setsockopt(t_peer, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf));
	setsockopt(t_peer, SOL_PACKET, PACKET_AUXDATA, &one, sizeof(one));
	return 0;
}

/*
 * Receive one frame on the peer (not one the peer sent), with its VLAN
 * tag put back; from t_src only. Return its length, 0 after @ms.
 */
static int
peer_recv(uint8_t *frame, size_t size, unsigned int ms)
{
	uint64_t end = now_ms() + ms;
	uint8_t data[SWV_MAX_FRAME + 64];
	union {
		struct cmsghdr h;
		uint8_t b[CMSG_SPACE(sizeof(struct tpacket_auxdata))];
	} ctl;
	struct sockaddr_ll sll;
	struct iovec iov = { data, sizeof(data) };
	struct msghdr msg;
	struct cmsghdr *c;
	struct pollfd pfd = { t_peer, POLLIN, 0 };
	ssize_t n;
	size_t len;

	while (now_ms() < end) {
		memset(&msg, 0, sizeof(msg));
		msg.msg_name = &sll;
		msg.msg_namelen = sizeof(sll);
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = &ctl;
		msg.msg_controllen = sizeof(ctl);
		n = recvmsg(t_peer, &msg, MSG_DONTWAIT);
		if (n < 0) {
			poll(&pfd, 1, 5);
			continue;
		}
		if (sll.sll_pkttype == PACKET_OUTGOING || n < 14 ||
		    memcmp(data + 6, t_src, 6) != 0)
			continue;
		len = (size_t)n;
		for (c = CMSG_FIRSTHDR(&msg); c != NULL;
		     c = CMSG_NXTHDR(&msg, c)) {
			struct tpacket_auxdata aux;

			if (c->cmsg_level != SOL_PACKET ||
			    c->cmsg_type != PACKET_AUXDATA)
				continue;
			memcpy(&aux, CMSG_DATA(c), sizeof(aux));
			if (!(aux.tp_status & TP_STATUS_VLAN_VALID))
				continue;
			memmove(data + 16, data + 12, len - 12);
			data[12] = aux.tp_vlan_tpid >> 8;
			data[13] = aux.tp_vlan_tpid & 0xff;
			data[14] = aux.tp_vlan_tci >> 8;
			data[15] = aux.tp_vlan_tci & 0xff;
			len += 4;
		}
		if (len > size)
			return -1;
		memcpy(frame, data, len);
		return (int)len;
	}
	return 0;
}

/* A test frame of @len bytes, number @seq, with @ntags VLAN tags. */
static void
build_frame(uint8_t *f, uint32_t len, uint32_t seq, int ntags)
{
	uint32_t i, o = 12;
	int t;

	memcpy(f, t_dst, 6);
	memcpy(f + 6, t_src, 6);
	for (t = 0; t < ntags; t++) {
		uint16_t tpid = (t == 0 && ntags == 2) ? 0x88a8 : 0x8100;
		uint16_t tci = (uint16_t)(0x2000 | ((seq + t) & 0xfff));

		f[o] = tpid >> 8;
		f[o + 1] = tpid & 0xff;
		f[o + 2] = tci >> 8;
		f[o + 3] = tci & 0xff;
		o += 4;
	}
	f[o] = T_TYPE >> 8;
	f[o + 1] = T_TYPE & 0xff;
	o += 2;
	for (i = o; i < len; i++)
		f[i] = (uint8_t)(seq * 7 + i);
	if (len >= o + 4) {
		f[o] = seq >> 24;
		f[o + 1] = seq >> 16;
		f[o + 2] = seq >> 8;
		f[o + 3] = seq;
	}
}

/* Drain the wire until @want frames are recorded or @ms pass. */
static void
rx_until(unsigned int want, unsigned int budget, unsigned int ms)
{
	uint64_t end = now_ms() + ms;
	struct pollfd pfd = { t_wire->ops->rx_fd(t_wire), POLLIN, 0 };

	while (t_dev.n < want && now_ms() < end) {
		if (t_wire->ops->rx_burst(t_wire, budget) == 0)
			poll(&pfd, 1, 2);
	}
}

static void wire_close(void);

static int
wire_open(void)
{
	/* One a failed case left open would hold the queue (af_xdp). */
	wire_close();
	return t_kind->open(&t_dev, t_a, t_mac, &t_wire);
}

static void
wire_close(void)
{
	if (t_wire != NULL) {
		t_wire->ops->close(t_wire);
		t_wire = NULL;
	}
}

/* Peer sends frames of sizes lo..hi (step), the wire must get them all. */
static int
check_rx_sizes(uint32_t lo, uint32_t hi, uint32_t step, int ntags)
{
	static uint8_t f[SWV_MAX_FRAME];
	uint32_t len, seq = 0, batch_lo = lo, k;
	unsigned int got = 0;

	while (batch_lo <= hi) {
		uint32_t first = seq;

		rec_reset(want_test);
		for (len = batch_lo, k = 0; len <= hi && k < 64;
		     len += step, k++) {
			build_frame(f, len, seq++, ntags);
			TEST_ASSERT_EQUAL(send(t_peer, f, len, 0), len,
					  "peer send %u: %s", len,
					  strerror(errno));
		}
		rx_until(k, 32, 2000);
		TEST_ASSERT_EQUAL(t_dev.n, k, "frames from %u bytes", batch_lo);
		for (k = 0; k < t_dev.n; k++) {
			len = batch_lo + k * step;
			build_frame(f, len, first + k, ntags);
			TEST_ASSERT_EQUAL(t_dev.len[k], len, "frame %u", k);
			TEST_ASSERT(memcmp(t_dev.buf + t_dev.off[k], f,
					   len) == 0,
				    "frame %u (%u bytes) differs", k, len);
		}
		got += t_dev.n;
		batch_lo += 64 * step;
	}
	TEST_ASSERT(got > 0, "no frame");
	return TEST_SUCCESS;
}

/* The wire sends frames of sizes lo..hi (step); the peer gets them all. */
static int
check_tx_sizes(uint32_t lo, uint32_t hi, uint32_t step, int ntags)
{
	static uint8_t f[SWV_MAX_FRAME], r[SWV_MAX_FRAME + 64];
	struct iovec iov[3];
	uint32_t len, seq = 0, batch_lo = lo, k, i;
	int n, ret;

	rec_reset(want_test);
	while (batch_lo <= hi) {
		uint32_t first = seq;

		for (len = batch_lo, k = 0; len <= hi && k < 32;
		     len += step, k++) {
			build_frame(f, len, seq++, ntags);
			/* Gather from three pieces, as the engine may. */
			iov[0].iov_base = f;
			iov[0].iov_len = 7;
			iov[1].iov_base = f + 7;
			iov[1].iov_len = len / 2 - 7;
			iov[2].iov_base = f + len / 2;
			iov[2].iov_len = len - len / 2;
			ret = t_wire->ops->tx(t_wire, iov, 3, len);
			TEST_ASSERT_SUCCESS(ret, "tx %u bytes: %s", len,
					    strerror(ret));
		}
		t_wire->ops->tx_flush(t_wire);
		for (i = 0; i < k; i++) {
			len = batch_lo + i * step;
			build_frame(f, len, first + i, ntags);
			n = peer_recv(r, sizeof(r), 2000);
			TEST_ASSERT_EQUAL(n, len, "peer frame %u", first + i);
			TEST_ASSERT(memcmp(r, f, len) == 0,
				    "peer frame %u (%u bytes) differs",
				    first + i, len);
		}
		batch_lo += 32 * step;
	}
	/* Our own frames must not come back through rx_burst. */
	rx_until(1, 64, 50);
	TEST_ASSERT_EQUAL(t_dev.n, 0, "own frames received back");
	return TEST_SUCCESS;
}

static int
test_open(void)
{
	uint8_t mac[6];
	unsigned int m[6];
	char path[128];
	struct swv_wire *w = NULL;
	FILE *fp;
	int i;

	TEST_ASSERT_EQUAL(t_kind->open(&t_dev, "vbrtnonexist0",
						  mac, &w), ENODEV, "");
	TEST_ASSERT_SUCCESS(t_kind->open(&t_dev, t_a, mac, &w), "");
	TEST_ASSERT(w->dev == &t_dev, "wire->dev");
	TEST_ASSERT(w->ops->rx_fd(w) >= 0, "rx_fd");
	TEST_ASSERT_EQUAL(w->ops->speed_mbps(w), 10000, "veth speed");
	TEST_ASSERT(w->ops->link_up(w), "link up");
	TEST_ASSERT_EQUAL(t_kind->drops(w), 0, "drops");
	if (is_xdp())
		TEST_ASSERT_SUCCESS(vbr_sh("ip link show dev %s | grep -q xdp",
				       t_a), "no XDP program attached");
	w->ops->close(w);
	/* Closing the wire detaches the program it attached. */
	TEST_ASSERT(vbr_sh("ip link show dev %s | grep -q xdp", t_a) != 0,
		    "an XDP program still attached");
	snprintf(path, sizeof(path), "/sys/class/net/%s/address", t_a);
	fp = fopen(path, "r");
	TEST_ASSERT_NOT_NULL(fp, "%s", path);
	i = fscanf(fp, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4],
		   &m[5]);
	fclose(fp);
	TEST_ASSERT_EQUAL(i, 6, "mac");
	for (i = 0; i < 6; i++)
		TEST_ASSERT_EQUAL(mac[i], m[i], "mac byte %d", i);
	return TEST_SUCCESS;
}

/*
 * In a child that dropped every capability (@keep_all false), or only
 * CAP_IPC_LOCK with a locked-memory limit of 1 MiB: the wire's open error.
 */
static int
open_without_caps(bool keep_all)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];
	struct rlimit rl = { 1 << 20, 1 << 20 };
	struct swv_wire *w = NULL;
	pid_t pid;
	int st;

	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		memset(data, 0, sizeof(data));
		if (keep_all) {
			if (syscall(SYS_capget, &hdr, data) != 0 ||
			    setrlimit(RLIMIT_MEMLOCK, &rl) != 0)
				_exit(255);
			data[0].effective &= ~(1u << CAP_IPC_LOCK);
			data[0].permitted &= ~(1u << CAP_IPC_LOCK);
		}
		if (syscall(SYS_capset, &hdr, data) != 0)
			_exit(255);
		st = t_kind->open(&t_dev, t_a, NULL, &w);
		_exit(st > 254 ? 254 : st);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* Errors said as the constructor promises. */
static int
test_open_errors(void)
{
	struct swv_wire *w = NULL;
	char spec[64];

	TEST_ASSERT_EQUAL(open_without_caps(false), EPERM, "no capabilities");
	TEST_ASSERT_EQUAL(t_kind->open(&t_dev, "", NULL, &w), ENODEV, "");
	TEST_ASSERT_EQUAL(t_kind->open(&t_dev, "vbrtnonexist0", NULL, &w),
			  ENODEV, "");
	if (!is_xdp())
		return TEST_SUCCESS;
	/* 32 MiB of UMEM over a 1 MiB locked-memory limit. */
	TEST_ASSERT_EQUAL(open_without_caps(true), EPERM, "RLIMIT_MEMLOCK");
	/* A veth has one queue; queue numbers are decimal. */
	snprintf(spec, sizeof(spec), "%s:7", t_a);
	TEST_ASSERT_EQUAL(t_kind->open(&t_dev, spec, NULL, &w), EINVAL,
			  "queue 7");
	snprintf(spec, sizeof(spec), "%s:x", t_a);
	TEST_ASSERT_EQUAL(t_kind->open(&t_dev, spec, NULL, &w), EINVAL, "");
	snprintf(spec, sizeof(spec), "%s:", t_a);
	TEST_ASSERT_EQUAL(t_kind->open(&t_dev, spec, NULL, &w), EINVAL, "");
	snprintf(spec, sizeof(spec), "%s:0", t_a);
	TEST_ASSERT_SUCCESS(t_kind->open(&t_dev, spec, NULL, &w), "queue 0");
	TEST_ASSERT_EQUAL(swv_wire_af_xdp_queue(w), 0, "");
	TEST_ASSERT_EQUAL(t_kind->open(&t_dev, t_a, NULL, &t_wire), EBUSY,
			  "a second socket on the queue");
	t_wire = NULL;
	w->ops->close(w);
	return TEST_SUCCESS;
}

static int
test_rx_sizes(void)
{
	int ret;

	TEST_ASSERT_SUCCESS(wire_open(), "");
	ret = check_rx_sizes(60, 1514, 1, 0);
	if (ret == TEST_SUCCESS)
		TEST_ASSERT_EQUAL(t_kind->drops(t_wire), 0, "");
	wire_close();
	return ret;
}

static int
test_rx_vlan(void)
{
	int ret;

	TEST_ASSERT_SUCCESS(wire_open(), "");
	/* The kernel strips the outer tag; the wire must put it back. */
	ret = check_rx_sizes(64, 1518, 3, 1);
	if (ret == TEST_SUCCESS)
		ret = check_rx_sizes(68, 1514, 5, 2);
	wire_close();
	return ret;
}

static int
test_rx_budget(void)
{
	static uint8_t f[256];
	unsigned int i, n, calls = 0;
	uint64_t end;

	TEST_ASSERT_SUCCESS(wire_open(), "");
	rec_reset(want_test);
	for (i = 0; i < 100; i++) {
		build_frame(f, 100, i, 0);
		TEST_ASSERT_EQUAL(send(t_peer, f, 100, 0), 100, "");
	}
	end = now_ms() + 2000;
	while (t_dev.n < 100 && now_ms() < end) {
		n = t_wire->ops->rx_burst(t_wire, 7);
		TEST_ASSERT(n <= 7, "burst of %u > budget 7", n);
		calls += n != 0;
		usleep(100);
	}
	TEST_ASSERT_EQUAL(t_dev.n, 100, "");
	TEST_ASSERT(calls >= 15, "only %u non-empty bursts", calls);
	for (i = 0; i < 100; i++) {
		build_frame(f, 100, i, 0);
		TEST_ASSERT(memcmp(t_dev.buf + t_dev.off[i], f, 100) == 0,
			    "frame %u out of order or wrong", i);
	}
	TEST_ASSERT_EQUAL(t_wire->ops->rx_burst(t_wire, 0), 0, "budget 0");
	wire_close();
	return TEST_SUCCESS;
}

static int
test_rx_poll(void)
{
	static uint8_t f[128];
	struct pollfd pfd;
	uint64_t t0;
	int ret;

	TEST_ASSERT_SUCCESS(wire_open(), "");
	rec_reset(want_test);
	while (t_wire->ops->rx_burst(t_wire, 64) != 0)
		;
	pfd.fd = t_wire->ops->rx_fd(t_wire);
	pfd.events = POLLIN;
	pfd.revents = 0;
	TEST_ASSERT_EQUAL(poll(&pfd, 1, 0), 0, "readable with no frame");
	build_frame(f, 128, 1, 0);
	TEST_ASSERT_EQUAL(send(t_peer, f, 128, 0), 128, "");
	/*
	 * The frame makes rx_fd readable: poll returns 1, not 0 at its
	 * timeout. No bound on how soon: a loaded machine (a sanitizer
	 * build, CI) may run this thread late.
	 */
	t0 = now_ms();
	ret = poll(&pfd, 1, 5000);
	TEST_ASSERT_EQUAL(ret, 1, "not readable after %" PRIu64 " ms",
			  now_ms() - t0);
	rx_until(1, 64, 2000);
	TEST_ASSERT_EQUAL(t_dev.n, 1, "");
	wire_close();
	return TEST_SUCCESS;
}

static int
test_tx_sizes(void)
{
	static uint8_t f[2048];
	struct iovec iov;
	int ret;

	uint32_t top = 1514 + t_kind->tx_extra;

	TEST_ASSERT_SUCCESS(wire_open(), "");
	ret = check_tx_sizes(60, top, 1, 0);
	if (ret == TEST_SUCCESS)
		ret = check_tx_sizes(64, 1518, 7, 1);
	if (ret == TEST_SUCCESS)
		ret = check_tx_sizes(68, top, 11, 2);
	if (ret != TEST_SUCCESS) {
		wire_close();
		return ret;
	}
	/*
	 * Over the MTU: above 1518 (MTU + 18) whatever the tags on
	 * af_packet, as a ConnectX; on af_xdp above 1514 untagged, 1518
	 * 802.1Q-tagged (the kernel's rule: not 802.1ad). Runts. Short iov.
	 */
	build_frame(f, top + 1, 0, 0);
	iov.iov_base = f;
	iov.iov_len = top + 1;
	TEST_ASSERT_EQUAL(t_wire->ops->tx(t_wire, &iov, 1, top + 1), EMSGSIZE,
			  "");
	build_frame(f, 1519, 0, 1);
	iov.iov_len = 1519;
	TEST_ASSERT_EQUAL(t_wire->ops->tx(t_wire, &iov, 1, 1519), EMSGSIZE,
			  "");
	build_frame(f, top + 1, 0, 2);
	iov.iov_len = top + 1;
	TEST_ASSERT_EQUAL(t_wire->ops->tx(t_wire, &iov, 1, top + 1), EMSGSIZE,
			  "");
	iov.iov_len = SWV_MAX_FRAME + 1;
	TEST_ASSERT_EQUAL(t_wire->ops->tx(t_wire, &iov, 1, SWV_MAX_FRAME + 1),
			  EMSGSIZE, "");
	iov.iov_len = 13;
	TEST_ASSERT_EQUAL(t_wire->ops->tx(t_wire, &iov, 1, 13), EINVAL, "");
	iov.iov_len = 100;
	TEST_ASSERT_EQUAL(t_wire->ops->tx(t_wire, &iov, 1, 200), EINVAL, "");
	wire_close();
	return TEST_SUCCESS;
}

/* Frames that others send out of the interface are not received either. */
static int
test_no_outgoing(void)
{
	static uint8_t f[128], r[256];
	struct sockaddr_ll sll;
	unsigned int i;
	int fd;

	TEST_ASSERT_SUCCESS(wire_open(), "");
	rec_reset(want_test);
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	TEST_ASSERT(fd >= 0, "");
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_ifindex = (int)if_nametoindex(t_a);
	TEST_ASSERT_SUCCESS(bind(fd, (struct sockaddr *)&sll, sizeof(sll)),
			    "");
	for (i = 0; i < 10; i++) {
		build_frame(f, sizeof(f), i, 0);
		TEST_ASSERT_EQUAL(send(fd, f, sizeof(f), 0), sizeof(f), "");
	}
	close(fd);
	for (i = 0; i < 10; i++)
		TEST_ASSERT_EQUAL(peer_recv(r, sizeof(r), 1000), sizeof(f),
				  "frame %u did not go out", i);
	rx_until(1, 64, 50);
	TEST_ASSERT_EQUAL(t_dev.n, 0, "outgoing frames received");
	wire_close();
	return TEST_SUCCESS;
}

static int
test_tx_ring_full(void)
{
	static uint8_t f[64], r[256];
	struct iovec iov = { f, 64 };
	unsigned int n = 0, got = 0;
	int ret;

	TEST_ASSERT_SUCCESS(wire_open(), "");
	build_frame(f, 64, 0, 0);
	while ((ret = t_wire->ops->tx(t_wire, &iov, 1, 64)) == 0 &&
	       n < (1u << 20))
		build_frame(f, 64, ++n, 0);
	TEST_ASSERT_EQUAL(ret, EAGAIN, "after %u frames", n);
	TEST_ASSERT(n >= 64, "ring of %u frames", n);
	TEST_ASSERT_EQUAL(t_wire->ops->tx(t_wire, &iov, 1, 64), EAGAIN, "");
	/* Nothing left before the flush. */
	TEST_ASSERT_EQUAL(peer_recv(r, sizeof(r), 20), 0, "sent before flush");
	t_wire->ops->tx_flush(t_wire);
	while (peer_recv(r, sizeof(r), 500) == 64)
		got++;
	TEST_ASSERT_EQUAL(got, n, "ring of %u frames", n);
	TEST_ASSERT_SUCCESS(t_wire->ops->tx(t_wire, &iov, 1, 64),
			    "ring still full");
	t_wire->ops->tx_flush(t_wire);
	TEST_ASSERT_EQUAL(peer_recv(r, sizeof(r), 1000), 64, "");
	printf("    tx ring: %u frames\n", n);
	wire_close();
	return TEST_SUCCESS;
}

static int
wait_link(bool up)
{
	uint64_t end = now_ms() + 3000;

	while (now_ms() < end) {
		if (t_wire->ops->link_up(t_wire) == up)
			return 0;
		usleep(1000);
	}
	return -1;
}

static int
test_link(void)
{
	struct pollfd pfd;
	socklen_t sl = sizeof(int);
	int err;

	TEST_ASSERT_SUCCESS(wire_open(), "");
	TEST_ASSERT_SUCCESS(wait_link(true), "link not up");
	TEST_ASSERT_SUCCESS(vbr_sh("ip -n %s link set %s down", t_ns, t_b), "");
	TEST_ASSERT_SUCCESS(wait_link(false), "link still up, peer down");
	TEST_ASSERT_SUCCESS(vbr_sh("ip -n %s link set %s up", t_ns, t_b), "");
	TEST_ASSERT_SUCCESS(wait_link(true), "link still down, peer up");
	TEST_ASSERT_SUCCESS(vbr_sh("ip link set %s down", t_a), "");
	TEST_ASSERT_SUCCESS(wait_link(false), "link still up, own side down");
	TEST_ASSERT_SUCCESS(vbr_sh("ip link set %s up", t_a), "");
	TEST_ASSERT_SUCCESS(wait_link(true), "link still down, own side up");
	/* link_up() also clears the ENETDOWN the flap left on rx_fd. */
	usleep(20000);
	t_wire->ops->link_up(t_wire);
	pfd.fd = t_wire->ops->rx_fd(t_wire);
	pfd.events = POLLIN;
	pfd.revents = 0;
	TEST_ASSERT(poll(&pfd, 1, 0) == 0 || !(pfd.revents & POLLERR),
		    "rx_fd left in error");
	/* The peer socket has its own ENETDOWN pending: consume it. */
	getsockopt(t_peer, SOL_SOCKET, SO_ERROR, &err, &sl);
	wire_close();
	return TEST_SUCCESS;
}

/* The peer's carrier as its sysfs file says it: 1, 0, or -1. */
static int
peer_carrier(void)
{
	char cmd[160];
	int c = -1;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "ip netns exec %s cat "
		 "/sys/class/net/%s/carrier 2>/dev/null", t_ns, t_b);
	f = popen(cmd, "r");
	if (f == NULL)
		return -1;
	if (fscanf(f, "%d", &c) != 1)
		c = -1;
	pclose(f);
	return c;
}

/*
 * set_link(): the interface's IFF_UP. Down: the link goes down on both
 * sides (the veth peer loses carrier); up: back.
 */
static int
test_set_link(void)
{
	uint64_t end;

	TEST_ASSERT_SUCCESS(wire_open(), "");
	TEST_ASSERT_NOT_NULL(t_wire->ops->set_link, "");
	TEST_ASSERT_SUCCESS(wait_link(true), "link not up");
	TEST_ASSERT_SUCCESS(t_wire->ops->set_link(t_wire, false), "");
	TEST_ASSERT(vbr_sh("ip link show dev %s | grep -q '[<,]UP[,>]'",
			   t_a) != 0, "IFF_UP still set");
	TEST_ASSERT_SUCCESS(wait_link(false), "link still up");
	end = now_ms() + 5000;
	while (peer_carrier() != 0 && now_ms() < end)
		usleep(10000);
	TEST_ASSERT_EQUAL(peer_carrier(), 0, "the peer kept its carrier");
	TEST_ASSERT_SUCCESS(t_wire->ops->set_link(t_wire, true), "");
	TEST_ASSERT_SUCCESS(wait_link(true), "link still down");
	TEST_ASSERT_EQUAL(peer_carrier(), 1, "the peer has no carrier");
	wire_close();
	return TEST_SUCCESS;
}

/*
 * The engine's link check (link_up(), then speed_mbps(), every 10 ms) asks
 * ethtool for the speed only once the link was seen going down or up (or a
 * second after the last read): the kernel answers SIOCETHTOOL under the
 * RTNL lock, and an inline port's link check runs in its burst calls.
 */
static int
test_speed_cached(void)
{
	socklen_t sl = sizeof(int);
	unsigned long calls;
	uint64_t t0, ms;
	int err;
	unsigned int i;

	TEST_ASSERT_SUCCESS(wire_open(), "");
	TEST_ASSERT_SUCCESS(wait_link(true), "link not up");
	calls = t_ethtool_calls;
	t0 = now_ms();
	for (i = 0; i < 30; i++) {
		usleep(11000);	/* past SWV_NETIF_REFRESH_NS: link re-read */
		TEST_ASSERT(t_wire->ops->link_up(t_wire), "link went down");
		TEST_ASSERT_EQUAL(t_wire->ops->speed_mbps(t_wire), 10000,
				  "veth speed, check %u", i);
	}
	ms = now_ms() - t0;
	/*
	 * 0.33 s of checks if every usleep() returns on time: one read at
	 * most, a second after the last. A loaded machine stretches the loop,
	 * so the bound is one read more per second it really took.
	 */
	TEST_ASSERT(t_ethtool_calls - calls <= 2 + ms / 1000,
		    "%lu ethtool calls for 30 link checks in %" PRIu64 " ms",
		    t_ethtool_calls - calls, ms);
	/* A link that goes down and comes back up: read again. */
	TEST_ASSERT_SUCCESS(vbr_sh("ip -n %s link set %s down", t_ns, t_b), "");
	TEST_ASSERT_SUCCESS(wait_link(false), "link still up, peer down");
	TEST_ASSERT_SUCCESS(vbr_sh("ip -n %s link set %s up", t_ns, t_b), "");
	TEST_ASSERT_SUCCESS(wait_link(true), "link still down, peer up");
	calls = t_ethtool_calls;
	TEST_ASSERT_EQUAL(t_wire->ops->speed_mbps(t_wire), 10000, "");
	TEST_ASSERT(t_ethtool_calls > calls, "speed not read after a flap");
	calls = t_ethtool_calls;
	TEST_ASSERT_EQUAL(t_wire->ops->speed_mbps(t_wire), 10000, "");
	TEST_ASSERT_EQUAL(t_ethtool_calls, calls, "read twice for one flap");
	/* The peer socket has its own ENETDOWN pending: consume it. */
	getsockopt(t_peer, SOL_SOCKET, SO_ERROR, &err, &sl);
	wire_close();
	return TEST_SUCCESS;
}

/*
 * speed_mbps(): 0 for an interface whose driver reports no speed (a
 * bridge without ports: SPEED_UNKNOWN; a dummy: no link settings), so the
 * port query says ENOSYS for it.
 */
static int
test_speed_unknown(void)
{
	struct swv_wire *w = NULL;
	char name[IF_NAMESIZE];
	int ret;

	snprintf(name, sizeof(name), "vbd%d", (int)getpid() % 1000000);
	if (vbr_sh("ip link add %s type bridge 2>/dev/null", name) != 0 &&
	    vbr_sh("ip link add %s type dummy 2>/dev/null", name) != 0)
		TEST_SKIP("no bridge nor dummy interfaces in this kernel");
	vbr_sh("ip link set %s up", name);
	ret = t_kind->open(&t_dev, name, NULL, &w);
	if (ret == 0) {
		TEST_ASSERT_EQUAL(w->ops->speed_mbps(w), 0, "no speed reported");
		w->ops->close(w);
	}
	vbr_sh("ip link del %s", name);
	TEST_ASSERT_SUCCESS(ret, "open on a dummy");
	return TEST_SUCCESS;
}

/*
 * af_xdp: frames sent while the link is down are dropped and counted
 * (tx_link_down), as shm and pair do, not kept in the Tx ring to go out
 * once it is up again.
 */
static int
test_tx_link_down(void)
{
	static uint8_t f[64], r[256];
	struct iovec iov = { f, 64 };
	unsigned int i;
	uint64_t d0;

	if (!is_xdp())
		TEST_SKIP("af_packet keeps its own ENETDOWN handling");
	TEST_ASSERT_SUCCESS(wire_open(), "");
	TEST_ASSERT_SUCCESS(wait_link(true), "link not up");
	TEST_ASSERT_SUCCESS(vbr_sh("ip link set %s down", t_a), "");
	TEST_ASSERT_SUCCESS(wait_link(false), "link still up");
	d0 = t_dev.link_down;
	for (i = 0; i < 10; i++) {
		build_frame(f, 64, i, 0);
		TEST_ASSERT_SUCCESS(t_wire->ops->tx(t_wire, &iov, 1, 64), "");
	}
	t_wire->ops->tx_flush(t_wire);
	TEST_ASSERT_EQUAL(t_dev.link_down - d0, 10, "not counted");
	TEST_ASSERT_SUCCESS(vbr_sh("ip link set %s up", t_a), "");
	TEST_ASSERT_SUCCESS(wait_link(true), "link still down");
	for (i = 0; i < 5; i++) {
		usleep(2000);
		t_wire->ops->tx_flush(t_wire);
	}
	TEST_ASSERT_EQUAL(peer_recv(r, sizeof(r), 200), 0,
			  "a frame sent while down went out late");
	wire_close();
	return TEST_SUCCESS;
}

static bool
want_udp9(const uint8_t *f, uint32_t len)
{
	return len >= 42 && f[12] == 0x08 && f[13] == 0x00 && f[23] == 17 &&
		f[36] == 0 && f[37] == 9;
}

static uint32_t
sum16(uint32_t s, const uint8_t *p, uint32_t n)
{
	uint32_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	return s;
}

static uint16_t
fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* A UDP datagram from the namespace's stack (checksum left to "hardware"). */
static int
test_rx_csum(void)
{
	static const char payload[] = "vbr af_packet checksum test, odd len";
	struct sockaddr_in to;
	const uint8_t *f, *ip, *udp;
	uint32_t s, ulen;
	int fd;

	TEST_ASSERT_SUCCESS(wire_open(), "");
	TEST_ASSERT_SUCCESS(vbr_sh("ip -n %s addr add 10.77.0.2/24 dev %s",
			       t_ns, t_b), "");
	TEST_ASSERT_SUCCESS(vbr_sh("ip -n %s neigh replace 10.77.0.1 lladdr "
			       "%02x:%02x:%02x:%02x:%02x:%02x dev %s", t_ns,
			       t_mac[0], t_mac[1], t_mac[2], t_mac[3],
			       t_mac[4], t_mac[5], t_b), "");
	rec_reset(want_udp9);
	fd = vbr_ns_socket(t_ns, AF_INET, SOCK_DGRAM, 0);
	TEST_ASSERT(fd >= 0, "udp socket");
	if (is_xdp()) {
		/*
		 * XDP sees no skb metadata: a checksum the peer's stack left
		 * to the veth stays partial. With Tx checksumming off on the
		 * peer (`ethtool -K <peer> tx off`, as the docs say) the
		 * frame is whole.
		 */
		struct ethtool_value ev = { ETHTOOL_STXCSUM, 0 };
		struct ifreq ifr;

		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", t_b);
		ifr.ifr_data = (void *)&ev;
		TEST_ASSERT_SUCCESS(ioctl(fd, SIOCETHTOOL, &ifr),
				    "peer tx checksum off: %s",
				    strerror(errno));
	}
	memset(&to, 0, sizeof(to));
	to.sin_family = AF_INET;
	to.sin_port = htons(9);
	to.sin_addr.s_addr = htonl(0x0a4d0001);
	TEST_ASSERT_EQUAL(sendto(fd, payload, sizeof(payload), 0,
				 (struct sockaddr *)&to, sizeof(to)),
			  sizeof(payload), "%s", strerror(errno));
	close(fd);
	rx_until(1, 64, 2000);
	TEST_ASSERT_EQUAL(t_dev.n, 1, "udp frame");
	f = t_dev.buf + t_dev.off[0];
	ip = f + 14;
	udp = ip + 20;
	TEST_ASSERT_EQUAL(fold(sum16(0, ip, 20)), 0xffff, "ipv4 checksum");
	ulen = (uint32_t)(udp[4] << 8 | udp[5]);
	TEST_ASSERT_EQUAL(ulen, 8 + sizeof(payload), "");
	TEST_ASSERT(udp[6] != 0 || udp[7] != 0, "no udp checksum");
	s = sum16(0, ip + 12, 8);	/* addresses */
	s += 17 + ulen;
	s = sum16(s, udp, ulen);
	TEST_ASSERT_EQUAL(fold(s), 0xffff, "udp checksum wrong");
	wire_close();
	return TEST_SUCCESS;
}

/*
 * The peer sends frames of sizes lo..hi (step) that the wire cannot carry:
 * none is delivered, each is counted as a wire drop.
 */
static int
check_rx_dropped(uint32_t lo, uint32_t hi, uint32_t step)
{
	static uint8_t f[SWV_MAX_FRAME];
	uint64_t d0 = t_kind->drops(t_wire), end;
	uint32_t len, n = 0;

	rec_reset(want_test);
	for (len = lo; len <= hi; len += step, n++) {
		build_frame(f, len, n, 0);
		TEST_ASSERT_EQUAL(send(t_peer, f, len, 0), len, "peer send %u",
				  len);
	}
	end = now_ms() + 2000;
	while (t_kind->drops(t_wire) - d0 < n && now_ms() < end)
		rx_until(1, 64, 5);
	rx_until(1, 64, 50);
	TEST_ASSERT_EQUAL(t_dev.n, 0, "frames above %u bytes delivered",
			  t_kind->frame_max);
	TEST_ASSERT_EQUAL(t_kind->drops(t_wire) - d0, n, "drops counted");
	return TEST_SUCCESS;
}

/*
 * MTU 9000: frames up to 9014 bytes (9018 tagged) both ways, or up to what
 * the wire carries (af_xdp: a UMEM frame) and the longer ones counted as
 * dropped on Rx, refused on Tx.
 */
static int
test_jumbo(void)
{
	uint32_t top = t_kind->frame_max < 9014 ? t_kind->frame_max : 9014;
	static uint8_t f[9019];
	struct iovec iov = { f, sizeof(f) };
	int ret;

	wire_close();
	TEST_ASSERT_SUCCESS(vbr_sh("ip link set %s mtu 9000", t_a), "");
	TEST_ASSERT_SUCCESS(vbr_sh("ip -n %s link set %s mtu 9000", t_ns, t_b),
			    "");
	TEST_ASSERT_SUCCESS(wire_open(), "");
	ret = check_rx_sizes(1400, top, 7, 0);
	if (ret == TEST_SUCCESS)
		ret = check_rx_sizes(top, top, 1, 0);
	if (ret == TEST_SUCCESS && top < 9014)
		ret = check_rx_dropped(top + 1, 9014, 199);
	if (ret == TEST_SUCCESS)
		ret = check_tx_sizes(1400, top, 13, 0);
	if (ret == TEST_SUCCESS && top == 9014)
		ret = check_tx_sizes(9018, 9018, 1, 1);
	if (ret == TEST_SUCCESS && top == 9014 && t_kind->tx_extra != 0)
		ret = check_tx_sizes(9015, 9018, 1, 0);
	if (ret == TEST_SUCCESS && top < 9014) {
		build_frame(f, top + 1, 0, 0);
		iov.iov_len = top + 1;
		if (t_wire->ops->tx(t_wire, &iov, 1, top + 1) != EMSGSIZE) {
			printf("%u bytes taken at MTU 9000\n", top + 1);
			ret = TEST_FAILED;
		}
		iov.iov_len = sizeof(f);
	}
	if (ret == TEST_SUCCESS) {
		/* 9015 untagged (af_xdp), 9019 (af_packet): above it */
		uint32_t over = 9015 + t_kind->tx_extra;

		build_frame(f, over, 0, 0);
		iov.iov_len = over;
		ret = t_wire->ops->tx(t_wire, &iov, 1, over);
		if (ret != EMSGSIZE)
			printf("%u bytes at MTU 9000: %d\n", over, ret);
		ret = ret == EMSGSIZE ? TEST_SUCCESS : TEST_FAILED;
	}
	wire_close();
	vbr_sh("ip link set %s mtu 1500", t_a);
	vbr_sh("ip -n %s link set %s mtu 1500", t_ns, t_b);
	return ret;
}

/*
 * A reader of the MTU (the engine's link check, a port query) got the old
 * MTU from the kernel; a set stores the new one before the reader stores
 * what it read. The hook holds the reader there until the set is done, or
 * 2 s (a set that waits for the reader); then the cache must hold the new
 * MTU, or Tx refuses frames of it until the next read.
 */
static uint32_t mtu_race_armed, mtu_race_held, mtu_race_set;

static void
mtu_race_hook(struct swv_netif *nif)
{
	unsigned int i;

	(void)nif;
	if (__atomic_exchange_n(&mtu_race_armed, 0, __ATOMIC_ACQ_REL) == 0)
		return;
	__atomic_store_n(&mtu_race_held, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 2000 && !__atomic_load_n(&mtu_race_set,
						 __ATOMIC_ACQUIRE); i++)
		usleep(1000);
}

static void *
mtu_race_reader(void *arg)
{
	(void)arg;
	t_wire->ops->mtu(t_wire);
	return NULL;
}

static int
test_mtu_read_race(void)
{
	struct swv_netif *nif;
	pthread_t th;
	unsigned int i;
	uint32_t got;
	int ret;

	TEST_ASSERT_SUCCESS(wire_open(), "");
	nif = swv_wire_netif(t_wire);
	TEST_ASSERT_EQUAL(t_wire->ops->mtu(t_wire), 1500, "MTU at start");
	__atomic_store_n(&mtu_race_held, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&mtu_race_set, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&mtu_race_armed, 1, __ATOMIC_RELEASE);
	swv_netif_mtu_hook = mtu_race_hook;
	ret = pthread_create(&th, NULL, mtu_race_reader, NULL);
	if (ret != 0) {
		swv_netif_mtu_hook = NULL;
		wire_close();
		TEST_ASSERT_SUCCESS(ret, "pthread_create");
	}
	for (i = 0; i < 10000 && !__atomic_load_n(&mtu_race_held,
						  __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	ret = t_wire->ops->set_mtu(t_wire, 2000);
	__atomic_store_n(&mtu_race_set, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	swv_netif_mtu_hook = NULL;
	got = __atomic_load_n(&nif->mtu, __ATOMIC_RELAXED);
	printf("    reader held: %u, set: %d, interface MTU %u, cached %u\n",
	       __atomic_load_n(&mtu_race_held, __ATOMIC_ACQUIRE), ret,
	       vbr_if_mtu(t_a), got);
	wire_close();
	vbr_sh("ip link set %s mtu 1500", t_a);
	TEST_ASSERT_EQUAL(__atomic_load_n(&mtu_race_held, __ATOMIC_ACQUIRE), 1,
			  "the reader never reached the hook");
	TEST_ASSERT_SUCCESS(ret, "set_mtu 2000");
	TEST_ASSERT_EQUAL(got, 2000, "cached MTU after the set");
	return TEST_SUCCESS;
}

/* Let the wire read the interface again (its cache lives 10 ms). */
static bool
link_refresh(void)
{
	usleep(15000);
	return t_wire->ops->link_up(t_wire);
}

static int
veth_make(void)
{
	return vbr_veth_make(t_a, t_b, t_ns);
}

/*
 * Finding 4: the Tx slots hold a frame of any MTU the interface is raised
 * to after the wire opened.
 */
static int
test_mtu_raised(void)
{
	/* af_xdp: native XDP on a veth caps the MTU near 3.5 KB. */
	unsigned int mtu = is_xdp() ? 3000 : 9000, len = mtu - 1000;
	static uint8_t f[9014], r[9100];
	struct iovec iov = { f, len };
	int ret = TEST_SUCCESS;

	TEST_ASSERT_SUCCESS(wire_open(), "");
	TEST_ASSERT_SUCCESS(vbr_sh("ip link set %s mtu %u", t_a, mtu), "");
	TEST_ASSERT_SUCCESS(vbr_sh("ip -n %s link set %s mtu %u", t_ns, t_b,
			       mtu), "");
	TEST_ASSERT(link_refresh(), "link");
	build_frame(f, len, 1, 0);
	ret = t_wire->ops->tx(t_wire, &iov, 1, len);
	if (ret == 0) {
		t_wire->ops->tx_flush(t_wire);
		ret = peer_recv(r, sizeof(r), 2000) == (int)len &&
			memcmp(r, f, len) == 0 ? TEST_SUCCESS : TEST_FAILED;
		if (ret != TEST_SUCCESS)
			printf("%u-byte frame not received exactly\n", len);
	} else {
		printf("tx of %u bytes at MTU %u: %s\n", len, mtu,
		       strerror(ret));
		ret = TEST_FAILED;
	}
	wire_close();
	vbr_sh("ip link set %s mtu 1500", t_a);
	vbr_sh("ip -n %s link set %s mtu 1500", t_ns, t_b);
	return ret;
}

/*
 * Finding 5: a frame the wire takes is never dropped by the kernel for its
 * size, even when the MTU was lowered after the wire last read it (as
 * under load, before its next refresh); once read, the new MTU is enforced
 * by the wire (EMSGSIZE, a Tx error the device counts). Counts only.
 */
static int
test_mtu_lowered(void)
{
	static uint8_t f[1400], r[1500];
	struct iovec iov = { f, sizeof(f) };
	unsigned int i, taken = 0, got = 0;
	int ret;

	TEST_ASSERT_SUCCESS(wire_open(), "");
	TEST_ASSERT(link_refresh(), "link");
	TEST_ASSERT_SUCCESS(vbr_sh("ip link set %s mtu 1000", t_a), "");
	/* No link_up() call: the wire still believes the MTU is 1500. */
	for (i = 0; i < 20; i++) {
		build_frame(f, sizeof(f), i, 0);
		ret = t_wire->ops->tx(t_wire, &iov, 1, sizeof(f));
		TEST_ASSERT(ret == 0 || ret == EMSGSIZE, "tx: %s",
			    strerror(ret));
		taken += ret == 0;
	}
	t_wire->ops->tx_flush(t_wire);
	while (peer_recv(r, sizeof(r), 500) == (int)sizeof(f))
		got++;
	printf("    %u frames taken, %u reached the peer\n", taken, got);
	TEST_ASSERT_EQUAL(got, taken, "frames taken but dropped unseen");
	link_refresh();
	TEST_ASSERT_EQUAL(t_wire->ops->tx(t_wire, &iov, 1, sizeof(f)),
			  EMSGSIZE, "above the MTU read");
	iov.iov_len = 1014;
	TEST_ASSERT_SUCCESS(t_wire->ops->tx(t_wire, &iov, 1, 1014), "");
	t_wire->ops->tx_flush(t_wire);
	TEST_ASSERT_EQUAL(peer_recv(r, sizeof(r), 2000), 1014, "");
	wire_close();
	vbr_sh("ip link set %s mtu 1500", t_a);
	return TEST_SUCCESS;
}

/* set_mtu sets the interface's MTU; the kernel refuses what it cannot. */
static int
test_set_mtu(void)
{
	char vx[IF_NAMESIZE];
	struct swv_wire *w = NULL;
	unsigned int mtu;
	int ret;

	TEST_ASSERT_SUCCESS(wire_open(), "");
	if (is_xdp()) {
		/* More than a UMEM frame carries: refused, MTU unchanged. */
		TEST_ASSERT_EQUAL(t_wire->ops->set_mtu(t_wire, 3823), EINVAL,
				  "");
		TEST_ASSERT_EQUAL(vbr_if_mtu(t_a), 1500, "interface MTU");
		TEST_ASSERT_SUCCESS(t_wire->ops->set_mtu(t_wire, 3000), "");
		TEST_ASSERT_EQUAL(vbr_if_mtu(t_a), 3000, "interface MTU");
	} else {
		TEST_ASSERT_SUCCESS(t_wire->ops->set_mtu(t_wire, 9000), "");
		TEST_ASSERT_EQUAL(vbr_if_mtu(t_a), 9000, "interface MTU");
	}
	TEST_ASSERT_EQUAL(t_wire->ops->set_mtu(t_wire, SWV_MAX_FRAME), EINVAL,
			  "more than a Tx slot holds");
	TEST_ASSERT_SUCCESS(t_wire->ops->set_mtu(t_wire, 1500), "");
	TEST_ASSERT_EQUAL(vbr_if_mtu(t_a), 1500, "interface MTU");
	wire_close();
	/*
	 * A VXLAN interface over the veth carries at most the veth's MTU
	 * less its 50-byte encapsulation: 1450.
	 */
	snprintf(vx, sizeof(vx), "%.12sx", t_a);
	TEST_ASSERT_SUCCESS(vbr_sh("ip link add %s type vxlan id 5 dev %s "
			       "dstport 4789", vx, t_a), "");
	vbr_sh("ip link set %s up", vx);
	ret = t_kind->open(&t_dev, vx, NULL, &w);
	if (ret == 0) {
		ret = w->ops->set_mtu(w, 1460);
		if (ret == EINVAL && w->ops->set_mtu(w, 1400) != 0)
			ret = -1;
		w->ops->close(w);
	}
	mtu = vbr_if_mtu(vx);
	vbr_sh("ip link del %s", vx);
	TEST_ASSERT_EQUAL(ret, EINVAL, "MTU 1460 over VXLAN on MTU 1500");
	TEST_ASSERT_EQUAL(mtu, 1400, "vxlan MTU");
	return TEST_SUCCESS;
}

/*
 * Finding 3: the interface is deleted, then made again under its name:
 * the wire stays bound to the old index, reports it gone and the link
 * down (not the new interface's state), sends nothing; a new wire on the
 * name carries frames again.
 */
static int
test_gone(void)
{
	static uint8_t f[128];
	struct iovec iov = { f, sizeof(f) };
	unsigned int i;
	int idx;

	TEST_ASSERT_SUCCESS(wire_open(), "");
	TEST_ASSERT(link_refresh(), "link up");
	TEST_ASSERT(!t_wire->ops->gone(t_wire), "gone at start");
	idx = t_kind->ifindex(t_wire);
	TEST_ASSERT_EQUAL(idx, (int)if_nametoindex(t_a), "ifindex");
	close(t_peer);
	t_peer = -1;
	TEST_ASSERT_SUCCESS(vbr_sh("ip link del %s", t_a), "");
	TEST_ASSERT(!link_refresh(), "link up on a deleted interface");
	TEST_ASSERT(t_wire->ops->gone(t_wire), "not gone");
	TEST_ASSERT_EQUAL(t_wire->ops->rx_fd(t_wire), -1, "rx_fd");
	TEST_ASSERT_SUCCESS(veth_make(), "veth again");
	TEST_ASSERT((int)if_nametoindex(t_a) != idx, "same index");
	for (i = 0; i < 5; i++)
		TEST_ASSERT(!link_refresh(), "link read from the new interface");
	TEST_ASSERT(t_wire->ops->gone(t_wire), "");
	build_frame(f, sizeof(f), 0, 0);
	TEST_ASSERT_EQUAL(t_wire->ops->tx(t_wire, &iov, 1, sizeof(f)), ENODEV,
			  "");
	wire_close();
	TEST_ASSERT_SUCCESS(peer_open(), "peer");
	TEST_ASSERT_SUCCESS(wire_open(), "");
	TEST_ASSERT(link_refresh(), "new wire's link");
	rec_reset(want_test);
	TEST_ASSERT_EQUAL(send(t_peer, f, sizeof(f), 0), sizeof(f), "");
	rx_until(1, 64, 2000);
	TEST_ASSERT_EQUAL(t_dev.n, 1, "frame on the new interface");
	wire_close();
	return TEST_SUCCESS;
}

/*
 * Frames under 60 bytes (the kernel's 42-byte ARP frames on a veth) are
 * padded as a NIC's MAC pads them: received, they reach the device as 60
 * bytes, their own bytes first, zeros after (a re-inserted VLAN tag
 * counts); sent, they go out as 60 bytes the same way.
 */
static const uint32_t t_short[][2] = {
	/* length, VLAN tags */
	{ 14, 0 }, { 42, 0 }, { 59, 0 }, { 30, 1 }, { 56, 1 }, { 60, 0 },
};
#define T_NSHORT (sizeof(t_short) / sizeof(t_short[0]))

static int
check_padded(const uint8_t *got, uint32_t got_len, uint32_t len, int ntags,
	     uint32_t seq)
{
	static uint8_t f[64];
	uint32_t i;

	build_frame(f, len, seq, ntags);
	TEST_ASSERT_EQUAL(got_len, 60, "%u-byte frame: %u bytes", len,
			  got_len);
	TEST_ASSERT(memcmp(got, f, len) == 0, "%u-byte frame differs", len);
	for (i = len; i < 60; i++)
		TEST_ASSERT_EQUAL(got[i], 0, "%u-byte frame: byte %u", len, i);
	return TEST_SUCCESS;
}

static int
test_short_padded(void)
{
	static uint8_t f[64], r[SWV_MAX_FRAME + 64];
	struct iovec iov;
	uint32_t k, len;
	int ntags, n;

	TEST_ASSERT_SUCCESS(wire_open(), "");
	rec_reset(want_test);
	for (k = 0; k < T_NSHORT; k++) {
		build_frame(f, t_short[k][0], k, (int)t_short[k][1]);
		TEST_ASSERT_EQUAL(send(t_peer, f, t_short[k][0], 0),
				  t_short[k][0], "");
	}
	rx_until(T_NSHORT, 64, 2000);
	TEST_ASSERT_EQUAL(t_dev.n, T_NSHORT, "all delivered");
	for (k = 0; k < T_NSHORT; k++)
		TEST_ASSERT_SUCCESS(check_padded(t_dev.buf + t_dev.off[k],
						 t_dev.len[k], t_short[k][0],
						 (int)t_short[k][1], k), "rx");
	TEST_ASSERT_EQUAL(t_kind->drops(t_wire), 0, "counted as dropped");
	for (k = 0; k < T_NSHORT; k++) {
		len = t_short[k][0];
		ntags = (int)t_short[k][1];
		build_frame(f, len, k, ntags);
		iov.iov_base = f;
		iov.iov_len = len;
		TEST_ASSERT_SUCCESS(t_wire->ops->tx(t_wire, &iov, 1, len),
				    "tx %u bytes", len);
	}
	t_wire->ops->tx_flush(t_wire);
	for (k = 0; k < T_NSHORT; k++) {
		n = peer_recv(r, sizeof(r), 2000);
		TEST_ASSERT_SUCCESS(check_padded(r, n < 0 ? 0 : (uint32_t)n,
						 t_short[k][0],
						 (int)t_short[k][1], k), "tx");
	}
	wire_close();
	return TEST_SUCCESS;
}

static int
suite_setup(void)
{
	int pid = (int)getpid();

	if (geteuid() != 0)
		TEST_SKIP("not root");
	if (vbr_sh("ip netns list >/dev/null 2>&1") != 0)
		TEST_SKIP("no `ip netns`");
	if (is_xdp() && !vbr_has_af_xdp())
		TEST_SKIP("the kernel has no AF_XDP");
	snprintf(t_a, sizeof(t_a), "vbrt%da", pid);
	snprintf(t_b, sizeof(t_b), "vbrt%db", pid);
	snprintf(t_ns, sizeof(t_ns), "vbrt%d", pid);
	t_dev.buf = malloc(T_REC_BYTES);
	if (t_dev.buf == NULL)
		return TEST_FAILED;
	if (vbr_sh("ip netns add %s", t_ns) != 0)
		TEST_SKIP("cannot create a network namespace");
	t_created = true;
	atexit(cleanup);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	if (veth_make() != 0 || peer_open() != 0) {
		printf("cannot bring the veth pair up\n");
		return TEST_FAILED;
	}
	return TEST_SUCCESS;
}

static void
suite_teardown(void)
{
	cleanup();
}

/* CPU time of this thread, user and kernel, in ns. */
static uint64_t
cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* This thread's CPU time in user space and in the kernel, ns. */
static void
cpu_split_ns(uint64_t *user, uint64_t *sys)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	*user = (uint64_t)ru.ru_utime.tv_sec * 1000000000u +
		(uint64_t)ru.ru_utime.tv_usec * 1000u;
	*sys = (uint64_t)ru.ru_stime.tv_sec * 1000000000u +
		(uint64_t)ru.ru_stime.tv_usec * 1000u;
}

/* Rates over one second each: Rx from a sender in the namespace, Tx. */
static int
test_bench(void)
{
	static uint8_t f[60];
	struct iovec iov = { f, 60 };
	uint64_t t0, n = 0, full = 0, drops, idle = 0, cpu0, u0, s0, u1, s1;
	unsigned int i;
	pid_t child;
	int ret;

	TEST_ASSERT_SUCCESS(wire_open(), "");
	rec_reset(NULL);
	t_dev.calls = 0;
	build_frame(f, 60, 0, 0);
	child = fork();
	TEST_ASSERT(child >= 0, "fork");
	if (child == 0) {
		struct mmsghdr m[64];
		struct iovec v = { f, 60 };

		memset(m, 0, sizeof(m));
		for (i = 0; i < 64; i++) {
			m[i].msg_hdr.msg_iov = &v;
			m[i].msg_hdr.msg_iovlen = 1;
		}
		i = 1;
		setsockopt(t_peer, SOL_PACKET, PACKET_QDISC_BYPASS, &i,
			   sizeof(i));
		t0 = now_ms();
		while (now_ms() - t0 < 1500)
			sendmmsg(t_peer, m, 64, 0);
		_exit(0);
	}
	usleep(200000);
	while (t_wire->ops->rx_burst(t_wire, 1u << 20) != 0)
		;
	drops = t_kind->drops(t_wire);
	t_dev.calls = 0;
	t0 = now_ms();
	while (now_ms() - t0 < 1000)
		idle += t_wire->ops->rx_burst(t_wire, 64) == 0;
	n = t_dev.calls;
	drops = t_kind->drops(t_wire) - drops;
	waitpid(child, NULL, 0);
	printf("    rx: %.3f Mpps (60-byte frames, sender: sendmmsg in the "
	       "namespace), %.3f Mpps dropped by a full ring, %" PRIu64
	       " empty bursts\n", n / 1e6, drops / 1e6, idle);
	/* The peer's raw socket would queue a copy of each frame. */
	close(t_peer);
	t_peer = -1;
	n = 0;
	cpu0 = cpu_ns();
	cpu_split_ns(&u0, &s0);
	t0 = now_ms();
	while (now_ms() - t0 < 1000) {
		for (i = 0; i < 32; i++) {
			ret = t_wire->ops->tx(t_wire, &iov, 1, 60);
			if (ret != 0) {
				full++;
				break;
			}
			n++;
		}
		t_wire->ops->tx_flush(t_wire);
	}
	cpu0 = cpu_ns() - cpu0;
	cpu_split_ns(&u1, &s1);
	printf("    tx: %.3f Mpps (60-byte frames, bursts of 32, "
	       "%" PRIu64 " ring-full), %.0f ns of CPU (user and kernel) "
	       "per frame: %.1f user, %.1f kernel\n", n / 1e6, full,
	       n ? (double)cpu0 / n : 0.0, n ? (double)(u1 - u0) / n : 0.0,
	       n ? (double)(s1 - s0) / n : 0.0);
	wire_close();
	return TEST_SUCCESS;
}

static struct unit_test_suite afp_suite = {
	.name = "swverbs af_packet wire",
	.setup = suite_setup,
	.teardown = suite_teardown,
	.cases = {
		TEST_CASE(test_open),
		TEST_CASE(test_open_errors),
		TEST_CASE(test_rx_sizes),
		TEST_CASE(test_rx_vlan),
		TEST_CASE(test_rx_budget),
		TEST_CASE(test_rx_poll),
		TEST_CASE(test_tx_sizes),
		TEST_CASE(test_no_outgoing),
		TEST_CASE(test_tx_ring_full),
		TEST_CASE(test_link),
		TEST_CASE(test_set_link),
		TEST_CASE(test_speed_unknown),
		TEST_CASE(test_speed_cached),
		TEST_CASE(test_tx_link_down),
		TEST_CASE(test_rx_csum),
		TEST_CASE(test_jumbo),
		TEST_CASE(test_mtu_raised),
		TEST_CASE(test_mtu_lowered),
		TEST_CASE(test_set_mtu),
		TEST_CASE(test_mtu_read_race),
		TEST_CASE(test_short_padded),
		TEST_CASE(test_gone),
		TEST_CASES_END(),
	},
};

static struct unit_test_suite bench_suite = {
	.name = "swverbs af_packet wire bench",
	.setup = suite_setup,
	.teardown = suite_teardown,
	.cases = {
		TEST_CASE(test_bench),
		TEST_CASES_END(),
	},
};

int
main(int argc, char **argv)
{
	bool bench = false;
	unsigned int k;
	int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--bench") == 0) {
			bench = true;
			continue;
		}
		if (strcmp(argv[i], "--wire") != 0 || i + 1 == argc) {
			printf("usage: %s [--wire af_packet|af_xdp] [--bench]\n",
			       argv[0]);
			return 2;
		}
		i++;
		for (k = 0; k < sizeof(t_kinds) / sizeof(t_kinds[0]); k++)
			if (strcmp(argv[i], t_kinds[k].name) == 0)
				t_kind = &t_kinds[k];
		if (strcmp(argv[i], t_kind->name) != 0) {
			printf("unknown wire %s\n", argv[i]);
			return 2;
		}
	}
	if (is_xdp()) {
		afp_suite.name = "swverbs af_xdp wire";
		bench_suite.name = "swverbs af_xdp wire bench";
	}
	return unit_test_suite_runner(bench ? &bench_suite : &afp_suite);
}
