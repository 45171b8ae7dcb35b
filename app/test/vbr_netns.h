/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Helpers for tests over a veth pair whose far end lives in a network
 * namespace the test creates and removes: shell commands, sockets opened
 * inside the namespace (setns() around socket(), no helper process), the
 * veth pair itself.
 */

#ifndef VBR_NETNS_H
#define VBR_NETNS_H

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>

/* Run a shell command; its exit status, -1 if it did not exit. */
static int
vbr_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
vbr_sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* A socket made inside namespace @ns; -1 on error. */
static inline int
vbr_ns_socket(const char *ns, int domain, int type, int proto)
{
	char path[128];
	int self, nsfd, fd = -1;

	snprintf(path, sizeof(path), "/var/run/netns/%s", ns);
	self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	nsfd = open(path, O_RDONLY | O_CLOEXEC);
	if (self >= 0 && nsfd >= 0 && setns(nsfd, CLONE_NEWNET) == 0) {
		fd = socket(domain, type | SOCK_CLOEXEC, proto);
		if (setns(self, CLONE_NEWNET) != 0)
			abort();	/* cannot go home: stop here */
	}
	if (self >= 0)
		close(self);
	if (nsfd >= 0)
		close(nsfd);
	return fd;
}

/* The ifindex of @ifname inside namespace @ns; 0 on error. */
static inline int
vbr_ns_ifindex(const char *ns, const char *ifname)
{
	char cmd[128];
	FILE *p;
	int idx = 0;

	snprintf(cmd, sizeof(cmd),
		 "ip netns exec %s cat /sys/class/net/%s/ifindex", ns, ifname);
	p = popen(cmd, "r");
	if (p == NULL)
		return 0;
	if (fscanf(p, "%d", &idx) != 1)
		idx = 0;
	pclose(p);
	return idx;
}

/* A raw AF_PACKET socket in @ns bound to its @ifname (all protocols). */
static inline int
vbr_ns_peer_socket(const char *ns, const char *ifname)
{
	struct sockaddr_ll sll;
	int fd;

	fd = vbr_ns_socket(ns, AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (fd < 0)
		return -1;
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = vbr_ns_ifindex(ns, ifname);
	if (sll.sll_ifindex == 0 ||
	    bind(fd, (struct sockaddr *)&sll, sizeof(sll)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * veth @a here, its peer @b in namespace @ns (which must exist), both up,
 * IPv6 off (no solicitations to spoil exact counts). 0 or -1.
 */
static inline int
vbr_veth_make(const char *a, const char *b, const char *ns)
{
	if (vbr_sh("ip link add %s type veth peer name %s netns %s",
		   a, b, ns) != 0)
		return -1;
	vbr_sh("echo 1 > /proc/sys/net/ipv6/conf/%s/disable_ipv6", a);
	vbr_sh("ip netns exec %s sh -c 'echo 1 > "
	       "/proc/sys/net/ipv6/conf/%s/disable_ipv6'", ns, b);
	if (vbr_sh("ip link set %s up", a) != 0 ||
	    vbr_sh("ip -n %s link set %s up", ns, b) != 0)
		return -1;
	return 0;
}

/* The namespace vbr_netns_enter() made, removed at exit or on a signal. */
static char vbr_netns_own[32];

static inline void
vbr_netns_remove(void)
{
	if (vbr_netns_own[0] != '\0')
		vbr_sh("ip netns del %s 2>/dev/null", vbr_netns_own);
	vbr_netns_own[0] = '\0';
}

static inline void
vbr_netns_signal(int sig)
{
	vbr_netns_remove();
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * A network namespace of the test's own, named @prefix and the pid (so
 * that devtools/test.sh knows it when a killed run leaves it), with a
 * veth pair @a - @b in it, both up, IPv6 off; this process moves into it.
 * It is removed at exit and on SIGINT, SIGTERM and SIGHUP. 0; 77 (said
 * why) without root or ip netns; 1 (said why) when it cannot be made.
 */
static inline int
vbr_netns_enter(const char *prefix, const char *a, const char *b)
{
	char path[64];
	int fd;

	if (geteuid() != 0 || vbr_sh("ip netns list >/dev/null 2>&1") != 0) {
		printf("SKIP: needs root and ip netns\n");
		return 77;
	}
	snprintf(vbr_netns_own, sizeof(vbr_netns_own), "%s%d", prefix,
		 (int)getpid());
	atexit(vbr_netns_remove);
	signal(SIGINT, vbr_netns_signal);
	signal(SIGTERM, vbr_netns_signal);
	signal(SIGHUP, vbr_netns_signal);
	if (vbr_sh("ip netns add %s", vbr_netns_own) != 0 ||
	    vbr_sh("ip -n %s link add %s type veth peer name %s",
		   vbr_netns_own, a, b) != 0 ||
	    vbr_sh("ip netns exec %s sh -c 'for i in %s %s; do echo 1 > "
		   "/proc/sys/net/ipv6/conf/$i/disable_ipv6; done'",
		   vbr_netns_own, a, b) != 0 ||
	    vbr_sh("ip -n %s link set %s up && ip -n %s link set %s up",
		   vbr_netns_own, a, vbr_netns_own, b) != 0) {
		printf("FAIL: veth pair in %s\n", vbr_netns_own);
		return 1;
	}
	snprintf(path, sizeof(path), "/var/run/netns/%s", vbr_netns_own);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
		printf("FAIL: setns %s: %s\n", vbr_netns_own, strerror(errno));
		return 1;
	}
	close(fd);
	return 0;
}

#ifndef AF_XDP
#define AF_XDP 44
#endif

/* Whether the kernel has AF_XDP sockets (tests of af_xdp wires skip if not). */
static inline bool
vbr_has_af_xdp(void)
{
	int fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);

	if (fd >= 0) {
		close(fd);
		return true;
	}
	/* EPERM and the like: the family exists; the test will say more. */
	return errno != EAFNOSUPPORT && errno != EINVAL;
}

/* /sys/class/net/@ifname/mtu of this namespace; 0 on error. */
static inline unsigned int
vbr_if_mtu(const char *ifname)
{
	char path[128];
	unsigned int mtu = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "/sys/class/net/%s/mtu", ifname);
	fp = fopen(path, "r");
	if (fp == NULL)
		return 0;
	if (fscanf(fp, "%u", &mtu) != 1)
		mtu = 0;
	fclose(fp);
	return mtu;
}

#endif /* VBR_NETNS_H */
