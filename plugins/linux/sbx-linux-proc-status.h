/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading a task's /proc status file (sbx-linux-proc-status.c), shared by the
 * supervisors that report a task's pid as its sandbox numbers it (the
 * connect supervisor, the view supervisor).
 */
#pragma once

#include <stdint.h>

/* The last number of the @field line ("NSpid", "NStgid") of the status file
 * @path (relative to @dirfd, or AT_FDCWD): the id as the task's own pid
 * namespace numbers it; 0 when unknown (gone, unreadable, no such line). */
int64_t sbx_linux_status_ns_last (int         dirfd,
                                  const char *path,
                                  const char *field);
