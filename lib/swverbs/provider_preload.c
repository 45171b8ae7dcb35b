/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The provider's interposers, for a process that LD_PRELOADs
 * libswverbs-rdmav<PABI>.so (devtools/swverbs-run.sh does): with them the
 * system libibverbs finds and drives swverbs devices on a kernel with no
 * RDMA, with no root and no namespace. The version script exports these
 * four functions and nothing else. When libibverbs dlopen()s the provider
 * instead (RDMAV_DRIVERS), they are found after libc's and bind nothing:
 * the process then needs a real /dev/infiniband/<uverbsN> (a mount
 * namespace), and has no completion channels.
 *
 * Each acts only on swverbs' own paths and fds:
 * - stat() and open() of /dev/infiniband/<uverbsN>, when no such file
 *   exists and $SYSFS_PATH/class/infiniband_verbs/<uverbsN> is a swverbs
 *   device (its device/modalias starts with "swverbs:"): /dev/full's, the
 *   character device 1:7 the tree's dev file names. libibverbs lists a
 *   device only if that path stats, and opens it as the context's cmd_fd,
 *   which must be a character device of that number. On /dev/full every
 *   command write fails (ENOSPC) and every ioctl (ENOTTY), so each path of
 *   libibverbs that would ask the kernel fails cleanly or falls back to
 *   the tree; on /dev/null writes "succeed" with no answer.
 * - socket(AF_NETLINK, *, NETLINK_RDMA) while SYSFS_PATH is set:
 *   EPROTONOSUPPORT. libibverbs lists devices from RDMA netlink first and
 *   reads sysfs only when that fails: on a host with RDMA in its kernel,
 *   the tree would be ignored.
 * - write() of IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL on the cmd_fd of a
 *   context this provider opened: ibv_create_comp_channel() is libibverbs'
 *   alone, a write the kernel answers with a new fd. The answer here is an
 *   AF_UNIX datagram socket connected to itself, its fd stored through the
 *   request's response pointer as the kernel does: swverbs sends each CQ
 *   event to it (channel.c), libibverbs' ibv_get_cq_event() reads it, and
 *   ibv_destroy_comp_channel()'s close() frees it.
 */

/*
 * libibverbs calls open and stat, not open64 and stat64 (the same
 * functions on 64-bit Linux): define those names, whatever meson asks.
 */
#undef _FILE_OFFSET_BITS

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <rdma/ib_user_verbs.h>

#include "swv_preload.h"

/* Interposers: exported by the version script, with libc's prototypes. */
int open(const char *path, int flags, ...);
int stat(const char *restrict path, struct stat *restrict st);
int socket(int domain, int type, int protocol);
ssize_t write(int fd, const void *buf, size_t count);

static const char swv_cdev_dir[] = "/dev/infiniband/";

/* The cmd_fds of the provider's contexts: few, looked at on each write. */
#define SWV_CMD_FDS 64
static int swv_cmd_fds[SWV_CMD_FDS];	/* -1 or 0: free (fd 0 is never one) */
static unsigned int swv_ncmd;		/* taken slots, atomic */
static pthread_mutex_t swv_cmd_lock = PTHREAD_MUTEX_INITIALIZER;

int
swv_preload_cmd_fd_add(int fd)
{
	unsigned int i;
	int ret = ENOSPC;

	if (fd <= 0)
		return EINVAL;
	pthread_mutex_lock(&swv_cmd_lock);
	for (i = 0; i < SWV_CMD_FDS; i++)
		if (__atomic_load_n(&swv_cmd_fds[i], __ATOMIC_RELAXED) <= 0) {
			__atomic_store_n(&swv_cmd_fds[i], fd, __ATOMIC_RELEASE);
			__atomic_fetch_add(&swv_ncmd, 1, __ATOMIC_RELEASE);
			ret = 0;
			break;
		}
	pthread_mutex_unlock(&swv_cmd_lock);
	return ret;
}

void
swv_preload_cmd_fd_del(int fd)
{
	unsigned int i;

	pthread_mutex_lock(&swv_cmd_lock);
	for (i = 0; i < SWV_CMD_FDS; i++)
		if (__atomic_load_n(&swv_cmd_fds[i], __ATOMIC_RELAXED) == fd) {
			__atomic_store_n(&swv_cmd_fds[i], -1, __ATOMIC_RELEASE);
			__atomic_fetch_sub(&swv_ncmd, 1, __ATOMIC_RELEASE);
			break;
		}
	pthread_mutex_unlock(&swv_cmd_lock);
}

static bool
is_cmd_fd(int fd)
{
	unsigned int i;

	if (fd <= 0)
		return false;
	for (i = 0; i < SWV_CMD_FDS; i++)
		if (__atomic_load_n(&swv_cmd_fds[i], __ATOMIC_ACQUIRE) == fd)
			return true;
	return false;
}

/* The first line of a small file, without its newline; false: none. */
static bool
read_line(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return true;
}

/* Whether path is /dev/infiniband/<uverbsN> of a swverbs device. */
static bool
swv_cdev_path(const char *path)
{
	const char *sysfs = getenv("SYSFS_PATH");
	char p[PATH_MAX], ibdev[256], modalias[256];
	const char *name;

	if (path == NULL || sysfs == NULL || sysfs[0] == '\0' ||
	    strncmp(path, swv_cdev_dir, sizeof(swv_cdev_dir) - 1) != 0)
		return false;
	name = path + sizeof(swv_cdev_dir) - 1;
	if (name[0] == '\0' || name[0] == '.' || strchr(name, '/') != NULL)
		return false;
	if ((size_t)snprintf(p, sizeof(p), "%s/class/infiniband_verbs/%s/ibdev",
			     sysfs, name) >= sizeof(p) ||
	    !read_line(p, ibdev, sizeof(ibdev)) || strchr(ibdev, '/') != NULL)
		return false;
	if ((size_t)snprintf(p, sizeof(p),
			     "%s/class/infiniband/%s/device/modalias", sysfs,
			     ibdev) >= sizeof(p) ||
	    !read_line(p, modalias, sizeof(modalias)))
		return false;
	return strncmp(modalias, "swverbs:", 8) == 0;
}

int
stat(const char *restrict path, struct stat *restrict st)
{
	int ret = fstatat(AT_FDCWD, path, st, 0);

	if (ret != 0 && errno == ENOENT && swv_cdev_path(path))
		return fstatat(AT_FDCWD, "/dev/full", st, 0);
	return ret;
}

int
open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;
	int fd;

	if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) {
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	fd = openat(AT_FDCWD, path, flags, mode);
	if (fd < 0 && errno == ENOENT && swv_cdev_path(path))
		return openat(AT_FDCWD, "/dev/full", flags & ~O_CREAT, 0);
	return fd;
}

int
socket(int domain, int type, int protocol)
{
	const char *sysfs;

	if (domain == AF_NETLINK && protocol == NETLINK_RDMA) {
		sysfs = getenv("SYSFS_PATH");
		if (sysfs != NULL && sysfs[0] != '\0') {
			errno = EPROTONOSUPPORT;
			return -1;
		}
	}
	return (int)syscall(SYS_socket, domain, type, protocol);
}

/* libc's write(), found once; the system call until then. */
static ssize_t
real_write(int fd, const void *buf, size_t count)
{
	static ssize_t (*libc_write)(int, const void *, size_t);
	ssize_t (*w)(int, const void *, size_t);

	w = __atomic_load_n(&libc_write, __ATOMIC_RELAXED);
	if (w == NULL) {
		w = (ssize_t (*)(int, const void *, size_t))
			dlsym(RTLD_NEXT, "write");
		if (w == NULL)
			return syscall(SYS_write, fd, buf, count);
		__atomic_store_n(&libc_write, w, __ATOMIC_RELAXED);
	}
	return w(fd, buf, count);
}

/* CREATE_COMP_CHANNEL, answered as the kernel does. */
static ssize_t
create_comp_channel(const void *buf, size_t count)
{
	struct ib_uverbs_create_comp_channel_resp resp;
	struct ib_uverbs_create_comp_channel cmd;
	struct sockaddr_un a;
	socklen_t len;
	int s, err;

	memcpy(&cmd, (const char *)buf + sizeof(struct ib_uverbs_cmd_hdr),
	       sizeof(cmd));
	if (cmd.response == 0) {
		errno = EFAULT;
		return -1;
	}
	s = (int)syscall(SYS_socket, AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	/* an abstract name of the kernel's choosing, then to itself */
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	len = sizeof(a);
	if (bind(s, (struct sockaddr *)&a, sizeof(sa_family_t)) != 0 ||
	    getsockname(s, (struct sockaddr *)&a, &len) != 0 ||
	    connect(s, (struct sockaddr *)&a, len) != 0) {
		err = errno;
		close(s);
		errno = err;
		return -1;
	}
	memset(&resp, 0, sizeof(resp));
	resp.fd = (uint32_t)s;
	memcpy((void *)(uintptr_t)cmd.response, &resp, sizeof(resp));
	return (ssize_t)count;
}

ssize_t
write(int fd, const void *buf, size_t count)
{
	struct ib_uverbs_cmd_hdr hdr;

	if (__atomic_load_n(&swv_ncmd, __ATOMIC_RELAXED) != 0 &&
	    count >= sizeof(hdr) + sizeof(struct ib_uverbs_create_comp_channel) &&
	    is_cmd_fd(fd)) {
		memcpy(&hdr, buf, sizeof(hdr));
		if (hdr.command == IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL)
			return create_comp_channel(buf, count);
	}
	return real_write(fd, buf, count);
}
