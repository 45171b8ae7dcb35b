/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * Between the provider (provider.c) and its interposers
 * (provider_preload.c), both in libswverbs-rdmav<PABI>.so and local to it.
 */

#ifndef SWV_PRELOAD_H
#define SWV_PRELOAD_H

/**
 * The cmd_fd of a context the provider opened / is about to close: the
 * write() interposer answers CREATE_COMP_CHANNEL on these fds only.
 * Return of the add: 0, or ENOSPC (too many contexts at once: that
 * context's completion channels fail as without the interposer).
 */
int swv_preload_cmd_fd_add(int fd);
void swv_preload_cmd_fd_del(int fd);

#endif /* SWV_PRELOAD_H */
