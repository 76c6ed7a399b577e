/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internals of the Linux backend (plugins/linux), shared by its modules and
 * by the white-box tests that link the plugin's static archive.  Never
 * installed.
 *
 *   sbx-linux-probe.c   what this host offers, measured in forked children,
 *                       cached per process
 *   sbx-linux-cgroup.c  sandbox-wide limits: one cgroup per sandbox
 *   sbx-linux-mount.c   rung 1: the mount view, compiled to a flat op list
 *                       in the parent and replayed in the child
 *   sbx-linux-spec.c    compile: policy -> SbxLinuxSpec + report + bits
 *   sbx-linux-spawn.c   spawn (clone, the child path, error channel), signal,
 *                       finish
 *   sbx-linux-plugin.c  the descriptor and the two backend vtables
 *   sbx-landlock.c, sbx-seccomp.c   (lsm) the Landlock plan, the filter
 *   init/sbx-init.c     the init program embedded in the plugin
 */
#pragma once

#include <gio/gio.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <sbx/sbx-plugin-abi.h>
#include "sbx-linux-report.h"
#include "sbx-linux-cgroup.h"
#include "sbx-landlock.h"
#include "sbx-seccomp.h"
#include "sbx-linux-view-server.h"

G_BEGIN_DECLS

#define SBX_LINUX_RUNG_USERNS    1   /* namespaces + mount view + Landlock + seccomp */
#define SBX_LINUX_RUNG_LANDLOCK  2   /* Landlock + seccomp + subreaper, no namespaces */

#define SBX_LINUX_BACKEND_USERNS    "linux-userns"
#define SBX_LINUX_BACKEND_LANDLOCK  "linux-landlock"

/* ------------------------------------------------------------------------- */
/* Probe                                                                      */
/* ------------------------------------------------------------------------- */

/* Steps of the namespace probe child, in order; the first that fails is
 * recorded with its errno. */
typedef enum
{
  SBX_LINUX_PROBE_OK = 0,
  SBX_LINUX_PROBE_CLONE,        /* clone(CLONE_NEWUSER|NEWNS|NEWPID|NEWNET|NEWIPC|NEWUTS) */
  SBX_LINUX_PROBE_ID_MAPS,      /* setgroups deny, uid_map, gid_map written by the child */
  SBX_LINUX_PROBE_MOUNT_SLAVE,  /* mount --make-rslave / */
  SBX_LINUX_PROBE_TMPFS,        /* fsopen/fsmount of a tmpfs */
  SBX_LINUX_PROBE_BIND,         /* open_tree clone + mount_setattr(RDONLY, recursive) */
  SBX_LINUX_PROBE_PROC,         /* a fresh procfs for the new pid namespace */
  SBX_LINUX_PROBE_DEVPTS,       /* a private devpts instance */
  SBX_LINUX_PROBE_LOOPBACK,     /* bring lo up in the new network namespace */
  SBX_LINUX_PROBE_HOSTNAME,     /* sethostname in the new UTS namespace */
  SBX_LINUX_PROBE_PIDNS,        /* getpid() == 1 and a child can be forked */
  SBX_LINUX_PROBE_PIVOT,        /* move_mount + pivot_root(".", ".") + detach */
  SBX_LINUX_PROBE_LSM,          /* (namespaces done) Landlock and seccomp applied */
  SBX_LINUX_PROBE_INIT_EXEC,    /* (namespaces done) sbx-init exec'd from its memfd */
  SBX_LINUX_PROBE_EXIT,         /* the child did not exit with the probe code */
} SbxLinuxProbeStep;

const char *sbx_linux_probe_step_name (int step);

/* How the init program is exec'd. */
typedef enum
{
  SBX_LINUX_INIT_NONE = 0,      /* no way found: spawns fail */
  SBX_LINUX_INIT_MEMFD_EXEC,    /* memfd_create(MFD_EXEC), sealed */
  SBX_LINUX_INIT_MEMFD,         /* memfd_create without MFD_EXEC (older kernels), sealed */
  SBX_LINUX_INIT_TMPFILE,       /* an unlinked 0500 file (vm.memfd_noexec=2) */
} SbxLinuxInitMode;

typedef struct
{
  int       landlock_abi;        /* proven by restricting a child; 0 absent */
  int       landlock_errno;      /* why absent */
  gboolean  seccomp;             /* a filter was loaded in a child */
  int       seccomp_errno;
  gboolean  userns;              /* the whole rung-1 namespace set works */
  int       userns_step;         /* SbxLinuxProbeStep that failed */
  int       userns_errno;
  int       cap_last_cap;        /* /proc/sys/kernel/cap_last_cap */
  gboolean  proc_children;       /* /proc/PID/task/TID/children exists */
  SbxCgroupHost *cgroup;         /* the cgroups this host offers (read only, never changed) */
  gboolean  cgroup_direct;       /* one is usable by this caller without asking anyone */
  char     *cgroup_root_detail;  /* the mechanism root gets, or why none (with a Hint:) */
  char     *cgroup_user_detail;  /* the same for an unprivileged user */
  int       memfd_noexec;        /* vm.memfd_noexec, -1 unknown */
  int       init_mode;           /* SbxLinuxInitMode */
  int       init_fd;             /* sealed init program, exec'd with execveat */
  int       init_errno;
  char     *hint_userns;         /* "Hint: ..." for a missing user namespace */
  int       fuse_errno;          /* 0: a user namespace can open /dev/fuse and mount FUSE on it
                                  * (the view supervisor's root); else why not */
} SbxLinuxProbe;

/* Measures this host for the calling process's credentials (forks
 * children; never assumes).  Never NULL.  One per plugin instance (each
 * init's context measures its own, on first use): see sbx-linux-probe.c
 * for why this is not a process-wide cache. */
SbxLinuxProbe       *sbx_linux_probe_new    (void);
/* Closes the init program's fd and frees @probe (NULL is ignored). */
void                 sbx_linux_probe_free   (SbxLinuxProbe          *probe);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxLinuxProbe, sbx_linux_probe_free)
/* Adds one report entry per mechanism, as seen by @rung. */
void                 sbx_linux_probe_report (const SbxLinuxProbe    *probe,
                                             int                     rung,
                                             const SbxLinuxReporter *reporter);

/* ------------------------------------------------------------------------- */
/* Mount view (rung 1)                                                        */
/* ------------------------------------------------------------------------- */

typedef enum
{
  SBX_MOUNT_OP_MKDIR = 1,   /* a directory in a tmpfs of ours */
  SBX_MOUNT_OP_MKFILE,      /* an empty placeholder file in a tmpfs of ours */
  SBX_MOUNT_OP_SYMLINK,     /* a symlink in a tmpfs of ours (replicates a host link) */
  SBX_MOUNT_OP_BIND,        /* the host path, bound onto the same path (or @source onto it) */
  SBX_MOUNT_OP_TMPFS,       /* an empty tmpfs of ours over the path (hides it) */
  SBX_MOUNT_OP_MASK_FILE,   /* an empty unreadable file over a file (hides it) */
} SbxMountOpKind;

#define SBX_MOUNT_F_DIR       1u   /* the path is a directory */
#define SBX_MOUNT_F_RDONLY    2u
#define SBX_MOUNT_F_NOEXEC    4u
#define SBX_MOUNT_F_OPTIONAL  8u   /* absent at spawn: skip (narrower) */
#define SBX_MOUNT_F_SKELETON 16u   /* MKDIR/MKFILE/SYMLINK in the root tmpfs itself: an entry of the
                                    * view's skeleton, not made by a child whose root is the view
                                    * supervisor's FUSE filesystem (it shows the entry) */
#define SBX_MOUNT_F_LIST     32u   /* a SKELETON directory holding skeleton entries: a child whose
                                    * root is the FUSE filesystem lists it once before it mounts
                                    * under it (one READDIRPLUS answers every entry's lookup) */

typedef struct
{
  uint32_t    kind;         /* SbxMountOpKind */
  uint32_t    flags;        /* SBX_MOUNT_F_* */
  const char *path;         /* absolute path in the view; for BIND also the host source */
  const char *rel;          /* path relative to the new root ("" for "/") */
  const char *parent_rel;   /* directory part of @rel ("" at the top) */
  const char *name;         /* last component of @rel */
  const char *link;         /* SYMLINK target */
  const char *source;       /* BIND: a file of the sandbox's own bound at @path instead of the
                             * host's (the view's /etc/hosts); NULL: @path itself */
  int32_t     tmpfs_slot;   /* TMPFS: index into the child's own-tmpfs fd table */
  /* BIND of a grant: the identity (statx dev major:minor, inode) of the
   * core's pinned fd; the child binds @path only if it still is that inode. */
  uint32_t    pinned;
  uint32_t    pin_dev_major;
  uint32_t    pin_dev_minor;
  uint64_t    pin_ino;
} SbxMountOp;

typedef struct _SbxLinuxMountPlan SbxLinuxMountPlan;

/* The curated /sys's mountpoint for the sandbox's own cgroup. */
#define SBX_LINUX_SYS_CGROUP "/sys/fs/cgroup"

struct _SbxLinuxMountPlan
{
  /* The root of the view: a tmpfs of ours, or the host "/" bound read-only
   * (host read allowed), with these flags. */
  gboolean     root_is_host;
  uint32_t     root_flags;        /* SBX_MOUNT_F_* of the host-root bind */
  gboolean     dev_mkdir;         /* "dev" must be created in the root tmpfs */
  gboolean     proc_mkdir;
  SbxMountOp  *ops;
  gsize        n_ops;
  int          n_tmpfs_slots;     /* TMPFS ops, remounted read-only at the end */
  char       **bind_sources;      /* NULL-terminated host paths bound (Landlock mount_roots) */
  char       **masked;            /* NULL-terminated paths hidden by the view */
  gboolean     hides_host_sockets;/* /run, /var/run, /tmp masked over a visible host */
  guint        n_binds;
  guint        n_unreadable_binds;/* paths shown without read (Landlock refuses reading them) */
  gboolean     unlisted_view;     /* a directory is shown without read: the child gives the view's
                                   * directories no blanket READ_DIR (it would list that one too) */
  gboolean     curated_sys;       /* the view has our read-only /sys (CPU topology, NUMA nodes, the
                                   * sandbox's cgroup at SBX_LINUX_SYS_CGROUP): Landlock gets a read
                                   * rule for /sys in the view */
  gboolean     own_run;           /* a root of our own: /run is the sandbox's own empty read-only
                                   * tmpfs (plan_add_own_run) */
  gboolean     own_hosts;         /* the view's /etc/hosts is the sandbox's own file (hosts_source):
                                   * Landlock gets a read rule for it in the view */
  /* The sandbox's /tmp (sbx-linux-tmp.c): the executor's TMPDIR bound at /tmp (NULL: not moved,
   * @tmp_why_not says why), and the isolated HOME shown at SBX_LINUX_VIEW_HOME (NULL: at its path). */
  const char  *tmp_source;
  const char  *home_source;
  const char  *tmp_why_not;
  /* A root of our own (!root_is_host): what the ops flagged SBX_MOUNT_F_SKELETON create in it,
   * and /dev and /proc, as the view supervisor's skeleton (sbx-linux-view-server.h): with a FUSE
   * root the child makes none of them, the server shows them.  NULL with a host root. */
  SbxViewEntry *skeleton;
  gsize         n_skeleton;
  GStringChunk *strings;
};

/* @landlock: a Landlock plan will sit on the view and refuse reading what
 * the policy lets no one read; only then may a path that is writable (or
 * executable) but not readable be mounted (counted in n_unreadable_binds).
 * Without it such a path is hidden, and a grant's is refused
 * (G_IO_ERROR_NOT_SUPPORTED): a grant is never silently void. */
/* @hosts_source: NULL, or the sandbox's own hosts file (sbx-linux-hosts.c),
 * bound read-only over the view's /etc/hosts where the view shows the
 * host's as a read-only regular file, or created there in a tmpfs of ours
 * when the host has none. */
SbxLinuxMountPlan *sbx_linux_mount_plan_new   (const SbxPolicyV1  *policy,
                                               gboolean            landlock,
                                               const char         *hosts_source,
                                               GError            **error);
void               sbx_linux_mount_plan_free  (SbxLinuxMountPlan  *plan);
/* Whether the view of @plan shows the absolute path @path (in the view's
 * terms) at all: under a mount of the plan, a skeleton entry, /dev, /proc
 * or a host root; a relative path counts as shown.  A lookup of a path not
 * shown fails (and, with the view supervisor's root, is a denial).  In
 * sbx-linux-tmp.c, with the environment rewrites that use it. */
gboolean           sbx_linux_mount_plan_shows (const SbxLinuxMountPlan *plan,
                                               const char              *path);

/* The sandbox's /tmp (sbx-linux-tmp.c). */
#define SBX_LINUX_VIEW_TMP  "/tmp"
#define SBX_LINUX_VIEW_HOME "/home/sbx"
/* Whether the view of @rules (canonical, as the plan sees them) can show
 * the policy's TMPDIR at /tmp; *move_home when the isolated HOME must then
 * be shown at SBX_LINUX_VIEW_HOME.  FALSE with *why_not (allocated). */
gboolean sbx_linux_view_tmp_decide (const SbxPolicyV1 *policy,
                                    const SbxFsRuleV1 *rules,
                                    gsize              n_rules,
                                    gboolean           root_is_host,
                                    gboolean          *move_home,
                                    char             **why_not);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxLinuxMountPlan, sbx_linux_mount_plan_free)

/* The access the policy's literal rules give @path: SBX_FS_* bits.  With
 * @tree, for a descendant of @path that no deeper rule names (EXACT rules at
 * @path do not apply); otherwise for @path itself.  GLOB rules are ignored
 * here (the compiler refuses them before).  Exposed for tests. */
uint32_t sbx_linux_resolve (const SbxFsRuleV1 *rules,
                            gsize              n_rules,
                            const char        *path,
                            gboolean           tree);

/* ------------------------------------------------------------------------- */
/* Compiled spec                                                              */
/* ------------------------------------------------------------------------- */

#define SBX_LINUX_MAX_RLIMITS 5

typedef struct
{
  int           resource;
  struct rlimit limit;
} SbxLinuxRlimit;

typedef struct _SbxLinuxSpec SbxLinuxSpec;
typedef struct _SbxLinuxZygote SbxLinuxZygote;
typedef struct _SbxLinuxViewEarly SbxLinuxViewEarly;   /* sbx-linux-view-start.h */

struct _SbxLinuxSpec
{
  int                 rung;
  const SbxLinuxProbe *probe;
  SbxLinuxMountPlan  *mounts;      /* rung 1 */
  SbxLandlockPlan    *landlock;    /* NULL when Landlock is absent (rung 1 only) */
  SbxSeccompProgram  *seccomp;     /* NULL when seccomp is absent (rung 1 only) */
  /* The same program with the terminal-setting ioctl requests refused
   * (SbxSeccompOptions.caller_terminal_shared), loaded instead of @seccomp
   * by a spawn whose standard stream is a terminal the backend did not
   * create for the target (sbx_linux_spawn_shares_terminal()); NULL with
   * @seccomp. */
  SbxSeccompProgram  *seccomp_terminal;
  gboolean            netns;       /* rung 1: private network namespace (net deny) */
  /* NULL-terminated: the host unix sockets the target may connect to (the
   * policy's host_sockets, re-checked), for the connect supervisor */
  char              **host_sockets;
  gboolean            dns_over_tcp;/* ports network with DNS: the target gets RES_OPTIONS=use-vc */
  char               *uid_map;     /* "UID UID 1\n" */
  char               *gid_map;
  gsize               uid_map_len;
  gsize               gid_map_len;
  char               *root_dir;    /* where the view's root is attached before pivot_root */
  gboolean            root_dir_created;
  char               *hostname;
  SbxLinuxRlimit      rlimits[SBX_LINUX_MAX_RLIMITS];
  int                 n_rlimits;
  uint32_t            level;
  uint64_t            guarantees;
  uint32_t            containment; /* SBX_CONTAINMENT_* for spawn results */
  /* Sandbox-wide limits: a cgroup per spawn under @cgroup_base (NULL: none,
   * the rlimits above are all there is). */
  const SbxCgroupBase *cgroup_base;
  guint64             cgroup_max_pids;
  guint64             cgroup_max_memory;
  SbxLinuxZygote     *zygote;      /* rung 1: namespaces and view made once (spawn.c) */
  /* rung 1 with a root of our own, where the probe mounted FUSE in a user
   * namespace: a direct spawn's root is the view supervisor's FUSE
   * filesystem (sbx-linux-view-server.h), A's ids in its namespace */
  gboolean            view_fuse;
  /* The view's FUSE root made and listed while the caller goes on from
   * compile to its first spawn (sbx-linux-view-start.c), taken by the
   * spec's first direct spawn (atomically); NULL: none, or taken. */
  SbxLinuxViewEarly  *early;
  long                view_uid;
  long                view_gid;
  uint32_t            policy_flags;/* SBX_POLICY_* (the view supervisor reads DENIED_NOT_FOUND) */
  gboolean            transient;   /* carries grant rules: one spawn, never a zygote */
  gboolean            mask_proc;   /* rung 1, root caller: mask sbx-linux-proc-mask.h's entries */
  guint16             proxy_port;  /* rung 1, net mode proxy: A's listener port (sbx-linux-egress.c) */
  /* rung 1, net mode proxy: the sandbox's resolv.conf and hosts (the DNS
   * stub is its only resolver), written once under the state directory */
  char               *egress_dir;
  char               *egress_resolv;
  char               *egress_hosts;
  /* rung 1: the sandbox's /etc/hosts (sbx-linux-hosts.c), the host's lines
   * and one naming @hostname, in a directory of the state directory */
  char               *hosts_dir;
  char               *hosts_file;
};

/* The sandbox's own hosts file (rung 1): the host's /etc/hosts, when the
 * policy lets the sandbox read it, followed by a line giving the sandbox's
 * hostname the loopback address 127.0.1.1 (Debian's convention for the
 * machine's own name), so the name the sandbox sees resolves; without a
 * readable host file, localhost and that line.  Written 0444 under the
 * policy's state directory into spec->hosts_dir / hosts_file (canonical:
 * the child opens it without following symlinks).  FALSE with @error set. */
gboolean sbx_linux_hosts_file_new  (SbxLinuxSpec      *spec,
                                    const SbxPolicyV1 *policy,
                                    GError           **error);
/* Unlinks and forgets what sbx_linux_hosts_file_new made (idempotent). */
void     sbx_linux_hosts_file_free (SbxLinuxSpec      *spec);
/* The line sbx_linux_hosts_file_new adds for @hostname (also in the egress
 * hosts file): "127.0.1.1\t@hostname\n". */
#define SBX_LINUX_HOSTNAME_ADDRESS "127.0.1.1"

/* The backend's own check of @policy (sbx-linux-policy.c), before
 * anything is built from it: FALSE with @error naming the rule, field or
 * value, and *status set (SBX_STATUS_INVALID). */
gboolean      sbx_linux_policy_validate (const SbxPolicyV1  *policy,
                                         int32_t            *status,
                                         GError            **error);

/* Compiles @policy for @rung on the host @probe measured (the plugin
 * instance's; the spec keeps a pointer, so @probe outlives it).  Reports
 * through @reporter; the level and bits go to @out_level / @out_guarantees.
 * On error returns NULL, sets @error (message names the rule or value) and
 * *out_status to an SBX_STATUS_*. */
SbxLinuxSpec *sbx_linux_spec_new  (const SbxLinuxProbe     *probe,
                                   const SbxPolicyV1       *policy,
                                   int                      rung,
                                   const SbxLinuxReporter  *reporter,
                                   uint32_t                *out_level,
                                   uint64_t                *out_guarantees,
                                   int32_t                 *out_status,
                                   GError                 **error);
void          sbx_linux_spec_free (SbxLinuxSpec            *spec);

/* The spec as text for the backends' explain() (sbx-linux-explain.c). */
char         *sbx_linux_explain   (const SbxLinuxSpec      *spec);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxLinuxSpec, sbx_linux_spec_free)

/* The sandbox's /tmp (sbx-linux-tmp.c), for a spawn of @spec: @envp (or
 * @given, taken, when not NULL) with the TMPDIR and HOME the core forced
 * replaced by the paths the view shows them at; @given itself when the
 * view moves neither.  sbx_linux_view_path(): where the view shows the
 * host @path, or NULL when it is shown at its own path. */
GPtrArray *sbx_linux_view_envp       (const SbxLinuxSpec     *spec,
                                      GPtrArray              *given,
                                      const char *const      *envp);
char      *sbx_linux_view_path       (const SbxLinuxSpec     *spec,
                                      const char             *path);
/* The "tmp" report entry: what /tmp and TMPDIR are for the target. */
void       sbx_linux_view_tmp_report (const SbxLinuxReporter *reporter,
                                      const SbxLinuxSpec     *spec,
                                      const SbxPolicyV1      *policy);

/* ------------------------------------------------------------------------- */
/* Spawn                                                                      */
/* ------------------------------------------------------------------------- */

/* Setup steps of the child, reported through the error channel. */
typedef enum
{
  SBX_LINUX_STEP_NONE = 0,
  SBX_LINUX_STEP_SIGNALS,
  SBX_LINUX_STEP_SETGROUPS,
  SBX_LINUX_STEP_UID_MAP,
  SBX_LINUX_STEP_GID_MAP,
  SBX_LINUX_STEP_MOUNT_SLAVE,
  SBX_LINUX_STEP_HOSTNAME,
  SBX_LINUX_STEP_LOOPBACK,
  SBX_LINUX_STEP_ROOT,          /* the root tmpfs or host-root bind */
  SBX_LINUX_STEP_MKDIR,         /* index = mount op */
  SBX_LINUX_STEP_MKFILE,
  SBX_LINUX_STEP_SYMLINK,
  SBX_LINUX_STEP_BIND_SOURCE,   /* opening the host path (no symlinks) */
  SBX_LINUX_STEP_BIND_TARGET,   /* opening the mountpoint (no symlinks) */
  SBX_LINUX_STEP_BIND,          /* open_tree / mount_setattr / move_mount */
  SBX_LINUX_STEP_TMPFS,
  SBX_LINUX_STEP_MASK,
  SBX_LINUX_STEP_DEV,           /* index = device or /dev entry */
  SBX_LINUX_STEP_DEVPTS,
  SBX_LINUX_STEP_SHM,
  SBX_LINUX_STEP_PROC,
  SBX_LINUX_STEP_READONLY,      /* remounting our tmpfs read-only */
  SBX_LINUX_STEP_PIVOT_ROOT,
  SBX_LINUX_STEP_SUBREAPER,
  SBX_LINUX_STEP_CLONE_TARGET,
  SBX_LINUX_STEP_SETSID,
  SBX_LINUX_STEP_STDIO,
  SBX_LINUX_STEP_CONTROLLING_TTY,
  SBX_LINUX_STEP_CLOSE_FDS,
  SBX_LINUX_STEP_CHDIR,
  SBX_LINUX_STEP_RLIMIT,
  SBX_LINUX_STEP_PDEATHSIG,
  SBX_LINUX_STEP_LANDLOCK,
  SBX_LINUX_STEP_CAPABILITIES,
  SBX_LINUX_STEP_NO_NEW_PRIVS,
  SBX_LINUX_STEP_SECCOMP,
  SBX_LINUX_STEP_EXEC,          /* the target's execve */
  SBX_LINUX_STEP_INIT_PREPARE,
  SBX_LINUX_STEP_EXEC_INIT,
  SBX_LINUX_STEP_CGROUP,        /* A joining the sandbox's cgroup */
  SBX_LINUX_STEP_EGRESS_LISTEN, /* A's proxy listener on the sandbox's loopback */
  SBX_LINUX_STEP_PTY,           /* B allocating the sandbox's terminal (SBX_SPAWN_PTY_SANDBOX) */
  SBX_LINUX_STEP_WARM,          /* a warm A taking its request (sbx-linux-zygote.c) */
  SBX_LINUX_STEP_SYS_CGROUP,    /* the curated /sys's cgroup namespace and mount (index: controller) */
  SBX_LINUX_STEP_OVERLAY,       /* a staged root's overlay (index = mount op; sbx-linux-stage.c) */
  SBX_LINUX_STEP_VIEW_ROOT,     /* the view supervisor's FUSE root (its device, mount or hand-over) */
  SBX_LINUX_STEP_LAST
} SbxLinuxStep;

const char *sbx_linux_step_name (int step);

/* The fixed record of the error channel: one write(2) on a CLOEXEC pipe by
 * the child that failed; EOF on the pipe means both the target and init
 * exec'd. */
typedef struct
{
  uint32_t magic;      /* SBX_LINUX_SETUP_ERROR_MAGIC */
  int32_t  step;       /* SbxLinuxStep */
  int32_t  err;        /* errno */
  int32_t  index;      /* mount op / device index, -1 when none */
} SbxLinuxSetupError;

#define SBX_LINUX_SETUP_ERROR_MAGIC 0x65786273u

typedef struct _SbxLinuxChild SbxLinuxChild;

/* Spawns one child under @spec.  On failure returns an SBX_STATUS_* and a
 * message in *error_message (caller frees); no process is left behind. */
int32_t  sbx_linux_spawn  (SbxLinuxSpec            *spec,
                           const SbxSpawnRequestV1 *request,
                           SbxSpawnResultV1        *result,
                           char                   **error_message);
int32_t  sbx_linux_signal (SbxLinuxChild           *child,
                           int                      signo);
/* Frees @child.  Status of the tree proof; *out is always filled. */
int32_t  sbx_linux_finish (SbxLinuxChild           *child,
                           int                      wait_status,
                           SbxExitV1               *out,
                           char                   **error_message);

/* sbx-linux-spawn-error.c: the backend's own check of a request (FALSE and
 * a message naming the field), and the message and SBX_STATUS_* of a setup
 * error record. */
gboolean sbx_linux_spawn_request_is_valid (const SbxSpawnRequestV1  *request,
                                           char                    **error_message);
/* TRUE when a standard stream of @request is a terminal not handed over as
 * the target's own (the caller's): the spawn loads spec->seccomp_terminal. */
gboolean sbx_linux_spawn_shares_terminal  (const SbxSpawnRequestV1  *request);
char    *sbx_linux_spawn_describe_failure (const SbxLinuxSpec       *spec,
                                           const SbxSpawnRequestV1  *request,
                                           const SbxLinuxSetupError *rec);
int32_t  sbx_linux_spawn_failure_status   (const SbxLinuxSetupError *rec);

G_END_DECLS
