/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Sandbox-wide resource limits of the Linux backend: one cgroup per sandbox
 * (sbx-linux-cgroup.c).  Private to plugins/linux and its white-box tests.
 *
 *  1. sbx_cgroup_host_new() reads what the host offers, changing nothing:
 *     the cgroup mounts (/proc/self/mounts), this process's cgroups
 *     (/proc/self/cgroup), which controllers each offers, whether we may
 *     write there, and whether a systemd user manager could delegate a
 *     cgroup v2 subtree.
 *  2. sbx_cgroup_base_get() makes one base usable, once per process:
 *       - cgroup v2 (root, or a delegated subtree): our own cgroup, with the
 *         supervisor moved into a leaf "sbx-supervisor" so the pids and
 *         memory controllers can be enabled below it (cgroup v2 has no
 *         internal processes);
 *       - unprivileged without a delegated subtree: a transient scope with
 *         Delegate=yes asked from the systemd user manager over D-Bus
 *         (StartTransientUnit, as `systemd-run --user --scope` does), then as
 *         above inside it;
 *       - cgroup v1 or hybrid (root only: v1 cannot delegate safely): our
 *         cgroups in the pids and memory hierarchies (and the freezer's);
 *     and reaps what dead supervisors left (sbx_cgroup_base_reap_stale).
 *  3. sbx_cgroup_new() per sandbox: mkdir, write pids.max and the memory
 *     limit, read them back, open each join file (v1 "tasks", v2
 *     "cgroup.procs") for A to write "0" into before anything else
 *     (sbx-linux-cgroup-child.h);
 *     sbx_cgroup_destroy() kills everything in it (cgroup.kill, or freeze
 *     and SIGKILL until cgroup.procs reads empty) and removes it.
 *
 * Leftovers.  A per-sandbox cgroup is named sbx-<pidns>-<pid>-<start>-<n>
 * after its supervisor (pid namespace inode, pid, start time in clock ticks,
 * a counter).  When a supervisor dies without destroying its cgroups
 * (SIGKILL), sbx-init sees its pipe close and kills the tree, leaving empty
 * directories; the next executor created by any sbx process that uses the
 * same base (sbx_cgroup_base_reap_stale, run at every compile) finds the
 * owner gone (no such pid, or another start time) and kills and removes
 * them.  Nothing removes them by itself: v1's release_agent is one per
 * hierarchy and belongs to the host, and v2 has none.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "sbx-linux-cgroup-child.h"

G_BEGIN_DECLS

typedef enum
{
  SBX_CGROUP_NONE = 0,
  SBX_CGROUP_V2,
  SBX_CGROUP_V1,
} SbxCgroupMode;

/* SBX_CGROUP_MAX_DIRS (v1: pids, memory, freezer; v2: one) is in
 * sbx-linux-cgroup-child.h, which the child contract includes. */

/* Where the host's files are; all NULL on a real host.  White-box tests
 * point them at a fake tree (regular files stand in for the kernel's, and
 * @fake_fs makes a new cgroup directory get the interface files the kernel
 * would create). */
typedef struct
{
  const char *mounts;        /* default /proc/self/mounts */
  const char *self_cgroup;   /* default /proc/self/cgroup */
  const char *bus_address;   /* the user manager's bus; default: the session bus */
  gboolean    fake_fs;
  gboolean    as_root;       /* with @fake_fs: decide as uid 0 would */
} SbxCgroupPaths;

typedef struct
{
  gboolean root;             /* euid 0 */
  /* cgroup v2 */
  char    *v2_mount;         /* NULL: no cgroup2 mount */
  char    *v2_dir;           /* our cgroup there */
  gboolean v2_offered;       /* pids and memory in the hierarchy's root cgroup.controllers */
  gboolean v2_pids, v2_memory;           /* in our cgroup.controllers */
  gboolean v2_enabled;       /* both already in our cgroup.subtree_control */
  gboolean v2_writable;      /* we may create children and move processes */
  /* cgroup v1 */
  char    *v1_pids;          /* our cgroup in the pids hierarchy, NULL: none */
  char    *v1_memory;
  char    *v1_memory_mount;  /* where the memory hierarchy is mounted (its root cgroup) */
  char    *v1_freezer;
  gboolean v1_writable;      /* pids and memory directories writable by us */
  /* the systemd user manager (unprivileged, v2 only) */
  char    *bus_address;      /* NULL: no user bus found */
  SbxCgroupPaths paths;      /* copies of the paths given */
} SbxCgroupHost;

SbxCgroupHost *sbx_cgroup_host_new      (const SbxCgroupPaths *paths);
void           sbx_cgroup_host_free     (SbxCgroupHost        *host);
/* What the host's root may use: both controllers in one hierarchy, and
 * cgroups this process may create there. */
gboolean       sbx_cgroup_host_v2_usable_by_root (const SbxCgroupHost *host);
gboolean       sbx_cgroup_host_v1_usable         (const SbxCgroupHost *host);
/* One sentence each (with a Hint: when nothing is offered): which
 * mechanism this host offers to root, and to an unprivileged user. */
char          *sbx_cgroup_host_describe (const SbxCgroupHost  *host,
                                         gboolean              for_root);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxCgroupHost, sbx_cgroup_host_free)

typedef struct
{
  int       mode;                          /* SbxCgroupMode; NONE: see @failure */
  char     *dirs[SBX_CGROUP_MAX_DIRS];     /* v2: [0]; v1: pids, memory, freezer (or NULL) */
  int       n_dirs;
  gboolean  memsw;                         /* v1 memory.memsw.limit_in_bytes exists */
  gboolean  fake_fs;
  char     *scope_unit;                    /* the transient scope asked from systemd, or NULL */
  char     *mechanism;                     /* what is used, for the report */
  char     *failure;                       /* NONE: why, with a Hint: */
  gint      seq;                           /* (atomic) names of per-sandbox cgroups */
  char     *prefix;                        /* "sbx-<pidns>-<pid>-<start>-" */
  char     *v1_memory_mount;               /* v1: the memory hierarchy's root, for the reaper */
} SbxCgroupBase;

/* Makes a base usable for this process from @host (may move this process
 * into a leaf cgroup, may ask the systemd user manager for a scope).  Never
 * NULL: mode NONE with @failure when nothing can be used. */
SbxCgroupBase       *sbx_cgroup_base_new        (const SbxCgroupHost *host);
void                 sbx_cgroup_base_free       (SbxCgroupBase       *base);
/* The process-wide base for the real host, made on first use. */
const SbxCgroupBase *sbx_cgroup_base_get        (void);
/* Kills and removes the per-sandbox cgroups of supervisors that are gone.
 * Returns how many were removed.  On v1 a dead supervisor's memory cgroup
 * may lie under another memory cgroup than this process's (it ran in
 * another session or service): when one stale cgroup is found, the memory
 * hierarchy is searched for the directories of every stale name, including
 * those whose pids directory an earlier reaper already removed. */
guint                sbx_cgroup_base_reap_stale (const SbxCgroupBase *base);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxCgroupBase, sbx_cgroup_base_free)

typedef struct _SbxCgroup SbxCgroup;

/* Creates the cgroup of one sandbox under @base with at most @max_pids
 * tasks and @max_memory bytes (0: that limit is not set), each read back.
 * NULL with @error naming the file and value at fault. */
SbxCgroup  *sbx_cgroup_new            (const SbxCgroupBase *base,
                                       guint64              max_pids,
                                       guint64              max_memory,
                                       GError             **error);
/* The open join-file descriptors (v1 "tasks", v2 "cgroup.procs",
 * O_WRONLY|O_CLOEXEC) A writes "0" into, into @fds; returns how many. */
int         sbx_cgroup_join_fds      (SbxCgroup           *cg,
                                      int                  fds[SBX_CGROUP_MAX_DIRS]);
/* Closes them (once A has joined). */
void        sbx_cgroup_close_procs    (SbxCgroup           *cg);
/* The directory of the cgroup (v1: the pids one). */
const char *sbx_cgroup_get_path       (SbxCgroup           *cg);
/* Kills every process in the cgroup, waits until it reads empty, removes
 * the directories.  FALSE with @error when it could not be proven empty or
 * removed. */
gboolean    sbx_cgroup_destroy        (SbxCgroup           *cg,
                                       GError             **error);
/* Destroys (errors ignored) and frees. */
void        sbx_cgroup_free           (SbxCgroup           *cg);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxCgroup, sbx_cgroup_free)

G_END_DECLS
