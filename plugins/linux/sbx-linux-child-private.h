/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The interface between the spawn path's parent side (sbx-linux-spawn.c,
 * sbx-linux-zygote.c, sbx-linux-probe.c) and its child side
 * (sbx-linux-child*.c): the contract of the code that runs in a CLONE_VM
 * child.  Plain C, no GLib: the child files see the parent's types only
 * through it.  Never installed.
 *
 * The rule this split exists for: code that runs in a CLONE_VM child (the
 * zygote, A and B) touches nothing but its own stack and immutable data.
 * Such a child inherits the thread pointer of whichever thread cloned it;
 * the zygote lives on after that thread has exited, and glibc then unmaps
 * the thread's stack and TLS.  One stack-protector canary load (%fs:0x28)
 * or one errno write in child code faults there, or writes into memory a
 * new thread now owns.  So every child function lives in an
 * sbx-linux-child*.c unit, compiled without stack protector, sanitizers,
 * fortify or builtins, and tests/linux/check-child-objects.py proves from
 * the objects that none of them reads TLS or calls anything outside the
 * child units.  (The alternative, giving the zygote a TLS block of its own
 * with CLONE_SETTLS, would hide the bug class instead of removing it: any
 * libc call would still run on a half-initialised thread.)
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "sbx-linux-cgroup-child.h"   /* SBX_CGROUP_MAX_DIRS */

/* The parent's types the context points to (sbx-linux-private.h,
 * sbx-seccomp.h, sbx-linux-egress.h). */
typedef struct _SbxLinuxSpec SbxLinuxSpec;
typedef struct _SbxSeccompProgram SbxSeccompProgram;
typedef struct _SbxLinuxEgressListen SbxLinuxEgressListen;
typedef struct _SbxLinuxStageMount SbxLinuxStageMount;   /* sbx-linux-stage.h */

#if !defined(__x86_64__) && !defined(__aarch64__)
/* No TLS-free clone on these architectures: every spawn goes directly (the
 * cloning thread is then suspended in vfork and its TLS stays valid). */
#define SBX_LINUX_NO_ZYGOTE 1
#endif

/* The devices of the minimal /dev (sbx-linux-child.c): names inside the
 * sandbox and their host sources. */
#define SBX_LINUX_N_DEVICES 6
extern const char *const sbx_linux_dev_names[SBX_LINUX_N_DEVICES];
extern const char *const sbx_linux_dev_host_paths[SBX_LINUX_N_DEVICES];

/* Everything a child needs, computed by the parent.  Shared by A and B
 * through CLONE_VM; lives in the parent until spawn() returns. */
typedef struct
{
  const SbxLinuxSpec *spec;
  const char         *cwd;
  char *const        *argv;
  char *const        *envp;
  const char         *path_env;     /* PATH of envp, or SBX_SPAWN_DEFAULT_PATH */
  int                 stdio[3];
  /* The filter B loads: spec->seccomp, or spec->seccomp_terminal when a
   * standard stream is the caller's terminal (set per request). */
  const SbxSeccompProgram *seccomp;
  int                 pty;
  /* SBX_SPAWN_PTY_SANDBOX: B opens a terminal in the sandbox's devpts and
   * sends the master over pty_sock (SCM_RIGHTS). */
  int                 pty_sandbox;
  int                 pty_sock;     /* B's end of the socket pair, or -1 */
  /* The supervised filter (SBX_SECCOMP_ENFORCES_UNIX_SUPERVISED): B sends
   * its seccomp listener and a sock_diag socket of the sandbox's network
   * namespace over this (B's end), or -1. */
  int                 unotify_sock;
  unsigned short      pty_rows;
  unsigned short      pty_cols;
  int                 err_fd;       /* write end of the error channel */
  int                 exit_fd;      /* write end of the exit-record pipe */
  char               *stack_a_top;
  char               *stack_b_top;
  int                *tmpfs_fds;    /* plan->n_tmpfs_slots + 2 (root, dev) */
  /* The view supervisor (sbx-linux-view-server.h): where A sends the
   * /dev/fuse descriptor of the view's FUSE root, or -1 (a tmpfs root).
   * A sets view_fuse once that root is mounted; when it cannot be made, A
   * fails its setup (SBX_LINUX_STEP_VIEW_ROOT): with view_sock set, the
   * spawn's report promises the root. */
  int                 view_sock;
  volatile int        view_fuse;
  /* The spawn's denial sink can ask: a read approved while the tool runs
   * is served through the view supervisor's file slots
   * (sbx-linux-view-slots.h), so B looks each slot up for its Landlock
   * rule.  Without an ask the supervisor shows none, and B does not look:
   * each lookup is a round trip to the supervisor before the target
   * starts (16 of them, most of what the FUSE root added to `sbx run`). */
  int                 view_slots;
  /* The view's FUSE root made by the supervisor ahead of A
   * (sbx-linux-view-start.c, the early root): A attaches the mount
   * view_early_fd (in its copy of our table) instead of making one, and
   * lists nothing (the supervisor did).  view_early_fd is read only when
   * view_early is set (a context zeroed elsewhere has none). */
  int                 view_early;
  int                 view_early_fd;
  int                 needs_empty;  /* the plan masks a file */
  int                 template;     /* the zygote building its template view */
  long                a_pid;        /* A's pid as B sees it */
  long                zpid;         /* via a zygote: A's pid, or -errno */
  int                 z_pidfd;      /* via a zygote: A's pidfd (shared fd table) */
  int                 z_req_fd;     /* the zygote's own context: read end of its request pipe */
  int                 z_resp_fd;    /* ... write end of its response pipe */
  int                 z_sup_pidfd;  /* ... pidfd of the supervisor process (its lifeline) */
  volatile int        b_failed;
  long                b_pid;        /* B's pid as A sees it */
  char                init_pid_buf[24];
  char                init_fd_buf[24];
  char                init_ignored_buf[24];  /* the ignored set for sbx-init, in decimal */
  const char         *init_argv[6];
  uint64_t            ignored_signals;  /* SBX_SPAWN_IGNORED_SIGNALS: B sets them to SIG_IGN */
  const char         *init_envp[1];
  char                exec_path[4096];
  int                 cgroup_fds[SBX_CGROUP_MAX_DIRS];   /* join files A writes "0" into */
  int                 n_cgroup_fds;
  int                 egress_fd;    /* -1, or where A sends the proxy listener (sbx-linux-child-egress.c) */
  /* A warm sandbox (sbx-linux-zygote.c): A made ahead of need by the
   * zygote, waiting for its request on w_go_fd, acknowledging on w_ack_fd
   * (the supervisor's ends; the table is shared until the request). */
  int                 warm;
  int                 w_go_fd;
  int                 w_ack_fd;
  const SbxLinuxEgressListen *egress_listens;  /* the run's other listeners, sent after the proxy's */
  int                 n_egress_listens;
  /* SBX_SPAWN_STAGED: per mount op, the overlay that replaces its bind, or
   * NULL (sbx-linux-stage.c); NULL for an unstaged spawn. */
  const SbxLinuxStageMount *const *stage;
} ChildCtx;

/* clone(2) without libc: returns the child's pid or -errno; the child runs
 * fn(arg) on @stack_top and exits with its result.  Touches no TLS. */
long sbx_linux_raw_clone (unsigned long flags,
                          void         *stack_top,
                          int          *ptid,
                          int         (*fn) (void *),
                          void         *arg);

/* A cloned by the supervisor: builds the sandbox, starts B (the target),
 * becomes sbx-init.  @data: a ChildCtx. */
int sbx_linux_child_a_main (void *data);

/* The mount view (sbx-linux-child-mount.c), rung 1.  mount_view builds the
 * view under spec->root_dir and pivots into it (ctx->template: builds it and
 * stays outside); enter_template, in an A cloned by a zygote, mounts what is
 * per sandbox (procfs, devpts, /dev/shm) on the zygote's view and pivots.
 * 0 or -errno with *step (and *index: the failing op or device) set. */
long sbx_linux_child_mount_view     (ChildCtx *ctx,
                                     int      *step,
                                     int      *index);
long sbx_linux_child_enter_template (ChildCtx *ctx,
                                     int      *step,
                                     int      *index);

/* The view supervisor's FUSE filesystem (sbx-linux-view-server.h) as a
 * detached mount (read-only, nosuid, nodev, noexec), created in the
 * caller's user namespace: the kernel requires the /dev/fuse opener and the
 * mount to share it, so the child opens the device (*dev_fd, CLOEXEC; the
 * caller sends it to the server and closes it).  @uid and @gid: the
 * caller's ids in that namespace.  The mount fd, or -errno with nothing
 * left open.  Without @mount, the superblock only (its filesystem context
 * fd): what the probe needs, without a mount whose release would wait for
 * an RCU grace period. */
struct _SbxLinuxMountPlan;   /* sbx-linux-private.h */

/* Lists the skeleton directories of the view whose FUSE root is @rootfd
 * (sbx-linux-child-mount.c says how and why); stops early once *@cancel
 * (NULL: never) is set. */
void sbx_linux_child_prime_skeleton (long                     rootfd,
                                     const struct _SbxLinuxMountPlan *plan,
                                     const int               *cancel);
long sbx_linux_child_fuse_mount (long  uid,
                                 long  gid,
                                 int   mount,
                                 long *dev_fd);

/* The zygote (rung 1): builds the template view once, then clones one A per
 * ChildCtx pointer read from ctx->z_req_fd.  @data: its own ChildCtx. */
int sbx_linux_child_zygote_main (void *data);

/* Egress (sbx-linux-child-egress.c): in A, after loopback is up, a TCP
 * listener on 127.0.0.1:@port of the sandbox's network namespace, sent over
 * @channel_fd (SCM_RIGHTS) and closed here.  0 or -errno. */
long sbx_linux_child_egress_listen (int      channel_fd,
                                    uint16_t port);
/* Egress, right after the proxy's listener: each of @listens (adding its
 * address to lo first where flagged), bound (and listening for a forwarder
 * and the stub's TCP side) in the sandbox's network namespace, sent over
 * @channel_fd in order (none for SBX_LINUX_EGRESS_LISTEN_SKIP) and closed
 * here.  0 or -errno (the first failure ends it). */
long sbx_linux_child_egress_listeners (int                         channel_fd,
                                       const SbxLinuxEgressListen *listens,
                                       int                         n_listens);
/* Egress, the sandbox's resolver files: before the view is built, detached
 * read-only copies of the host files @resolv and @hosts (the spec's, under
 * the state directory) into @trees; after pivot_root, attached over the
 * view's /etc/resolv.conf and /etc/hosts (a view without them keeps none).
 * 0 or -errno. */
long sbx_linux_child_egress_files_open   (const char *resolv,
                                          const char *hosts,
                                          long        trees[2]);
long sbx_linux_child_egress_files_attach (long        trees[2]);

/* The probe (sbx-linux-probe.c) and its children (sbx-linux-child-probe.c):
 * shared through CLONE_VM. */
typedef struct
{
  int         step;
  int         err;
  const char *uid_map;
  size_t      uid_map_len;
  const char *gid_map;
  size_t      gid_map_len;
  char       *grandchild_stack_top;
  int         init_fd;
  int         landlock_err;     /* 0: restricted */
  int         seccomp_err;      /* 0: filter loaded */
  /* The view supervisor's FUSE root (sbx-linux-view-server.h): the child
   * opens /dev/fuse in its user namespace and creates a FUSE superblock on
   * it with these ids, as a spawn's A does; 0 when that worked, else the
   * errno (best effort: never fails the probe). */
  long        fuse_uid;
  long        fuse_gid;
  int         fuse_err;
} ProbeShared;

int sbx_linux_probe_ns_child   (void *data);   /* namespaces, mounts, pivot, LSMs, init exec */
int sbx_linux_probe_lsm_child  (void *data);   /* Landlock and seccomp only (rung 2) */
int sbx_linux_probe_init_child (void *data);   /* the embedded init execs */
