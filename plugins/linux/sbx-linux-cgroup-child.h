/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The child half of the per-sandbox cgroup (sbx-linux-cgroup.h): A, the
 * sandbox's first process, writes "0" (itself) into each pre-opened join
 * file (v1 "tasks", v2 "cgroup.procs"; why in sbx-linux-cgroup.c,
 * join_file) before it does anything else, so B, the target and every
 * descendant start inside.  A is a CLONE_VM child: raw system calls only.
 * The kernel checks the move against the credentials of whoever opened the
 * descriptor (the supervisor), not A's, so A's user namespace does not
 * matter.
 */
#pragma once

#include "sbx-raw-syscall.h"

/* The most cgroup directories one sandbox joins: v1 pids, memory and
 * freezer; v2 one. */
#define SBX_CGROUP_MAX_DIRS 3

/* 0, or -errno of the first write that failed (-EIO for a short one). */
SBX_CHILD_FUNC static inline long
sbx_cgroup_child_join (const int *fds,
                       int        n)
{
  int i;
  long r;

  for (i = 0; i < n; i++)
    {
      do
        r = sbx_raw_syscall3 (__NR_write, fds[i], "0", 1);
      while (r == -EINTR);
      if (r < 0)
        return r;
      if (r != 1)
        return -EIO;
    }
  return 0;
}
