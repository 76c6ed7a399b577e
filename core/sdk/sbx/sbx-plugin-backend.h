/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx-plugin-backend.h — the backend extension (SBX_EXT_BACKEND): the policy
 * IR the host hands a backend to compile, the backend vtable and the spawn
 * contract.  The rules every plugin follows are in sbx-plugin-envelope.h.
 *
 * Compile versus probe
 * --------------------
 *  probe() states the upper bound of what this backend can do on this host;
 *  compile() states what one spec achieves.  compile() may narrow but never
 *  claim more: its level must not exceed the probed level and its guarantees
 *  must be a subset of the probed guarantees.  The host checks it: it probes
 *  first when no probe has succeeded yet, and a compile whose result exceeds
 *  the probe is released and refused (SBX_PLUGIN_ERROR_INVALID naming the
 *  excess).  Guarantee bits this header does not define are dropped, never
 *  trusted.
 */
#ifndef SBX_PLUGIN_BACKEND_H
#define SBX_PLUGIN_BACKEND_H

#include "sbx-plugin-envelope.h"
#include "sbx-plugin-listen.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------- */
/* Policy IR: what the core hands a backend to compile                         */
/* ------------------------------------------------------------------------- */

/* Filesystem access axes */
#define SBX_FS_READ   1u
#define SBX_FS_EXEC   2u
#define SBX_FS_WRITE  4u
#define SBX_FS_ALL    7u

/* SbxFsRuleV1.flags */
#define SBX_FS_RULE_EXACT      1u  /* matches only this path, not its descendants */
#define SBX_FS_RULE_GLOB       2u  /* path is a glob pattern (only ever a deny) */
#define SBX_FS_RULE_CANONICAL  4u  /* identity-checked by the core: do not re-follow symlinks */
#define SBX_FS_RULE_OPTIONAL   8u  /* may be absent on this host (runtime closure): skip silently */

/* SbxFsRuleV1.origin: why the rule exists (for binding decisions and reports) */
#define SBX_FS_ORIGIN_RUNTIME    1u  /* fixed runtime closure (/usr, /lib*, /etc files) */
#define SBX_FS_ORIGIN_DEVICE     2u  /* a device node of the minimal /dev */
#define SBX_FS_ORIGIN_WORKSPACE  3u
#define SBX_FS_ORIGIN_ROOT       4u  /* an additional root */
#define SBX_FS_ORIGIN_HOST       5u  /* the host root "/" (everything outside the roots) */
#define SBX_FS_ORIGIN_HOME       6u  /* the executor's HOME */
#define SBX_FS_ORIGIN_TMPDIR     7u  /* the executor's TMPDIR */
#define SBX_FS_ORIGIN_GRANT      8u  /* added by a verified grant for one spawn */

/**
 * SbxFsRuleV1:
 *
 * One filesystem rule.  Precedence (every backend must preserve or narrow
 * it): per axis, the most specific matching rule decides (specificity =
 * 2 x length of the literal path, +1 when EXACT); at a tie allows union, denies
 * union and any deny wins; GLOB denies override everything; an axis no rule
 * controls is denied.  The core always fills @deny explicitly: a rule with
 * allow == 0 and deny == 0 is malformed and a backend must treat it as
 * deny-all.
 */
typedef struct SbxFsRuleV1
{
  uint32_t    struct_size;
  uint32_t    flags;    /* SBX_FS_RULE_* */
  uint32_t    allow;    /* SBX_FS_* granted */
  uint32_t    deny;     /* SBX_FS_* denied */
  uint32_t    origin;   /* SBX_FS_ORIGIN_* */
  int32_t     fd;       /* -1, or an O_PATH fd pinned to the identity-checked
                         * target (grants; only with SBX_HOST_FEATURE_RULE_FDS).
                         * Owned by the host; valid during compile only: a
                         * backend that needs it later dup()s it. */
  const char *path;     /* absolute and clean; a pattern when GLOB */
} SbxFsRuleV1;
#define SBX_FS_RULE_V1_MIN_SIZE        (offsetof (SbxFsRuleV1, path) + sizeof (const char *))

/* SbxNetPolicyV1.mode */
#define SBX_NET_MODE_DENY   0u  /* no egress (loopback inside a private namespace at most) */
#define SBX_NET_MODE_OPEN   1u  /* host network */
#define SBX_NET_MODE_PORTS  2u  /* only the listed TCP ports (network.broad grants) */
#define SBX_NET_MODE_PROXY  3u  /* only the egress proxy on loopback proxy_port */

/* SbxNetPolicyV1.flags */
#define SBX_NET_FLAG_DNS    1u  /* name resolution must work (MODE_PORTS) */

typedef struct SbxNetPolicyV1
{
  uint32_t        struct_size;
  uint32_t        mode;         /* SBX_NET_MODE_* */
  uint32_t        flags;        /* SBX_NET_FLAG_* */
  uint32_t        n_tcp_ports;
  const uint16_t *tcp_ports;    /* MODE_PORTS: allowed destination ports */
  uint16_t        proxy_port;   /* MODE_PROXY: loopback port the child reaches the proxy on */
  uint16_t        reserved0;
  uint32_t        reserved1;
} SbxNetPolicyV1;
#define SBX_NET_POLICY_V1_MIN_SIZE     (offsetof (SbxNetPolicyV1, reserved1) + sizeof (uint32_t))

/**
 * SbxLimitsV1:
 *
 * Resource limits for the whole sandbox (not per process).  0 means "no limit
 * requested".  A backend enforces what the host allows and reports the rest
 * as narrowed or unenforced under the "resource-limits" feature.
 */
typedef struct SbxLimitsV1
{
  uint32_t struct_size;
  uint32_t flags;               /* reserved, 0 */
  uint64_t max_processes;       /* tasks in the sandbox */
  uint64_t max_memory_bytes;    /* memory of the sandbox */
  uint64_t max_open_files;      /* per process (RLIMIT_NOFILE) */
} SbxLimitsV1;
#define SBX_LIMITS_V1_MIN_SIZE         (offsetof (SbxLimitsV1, max_open_files) + sizeof (uint64_t))

/* SbxPolicyV1.flags */
#define SBX_POLICY_UNCONFINED    1u  /* an acknowledged Unconfined profile */
#define SBX_POLICY_UNIX_SOCKETS  2u  /* the profile opens unix sockets ("unix-sockets": "allow"):
                                      * a backend may let the target create AF_UNIX sockets, and
                                      * reports what becomes reachable; without it they are closed */
#define SBX_POLICY_DENIED_NOT_FOUND 4u /* Since 0.2: the profile hides denied host paths
                                        * ("denied-paths": "not-found"): a backend that tells a
                                        * denied existing host path from a missing one answers
                                        * ENOENT for both (still reporting the denial); without
                                        * it, EACCES for one that exists */

typedef struct SbxPolicyV1
{
  uint32_t              struct_size;
  uint32_t              flags;                /* SBX_POLICY_* */
  uint64_t              required_guarantees;  /* SBX_ABI_GUARANTEE_* the profile requires */
  const SbxFsRuleV1    *fs_rules;
  uint32_t              n_fs_rules;
  uint32_t              reserved0;
  const SbxNetPolicyV1 *net;
  const SbxLimitsV1    *limits;
  const char           *workspace;    /* canonical workspace root */
  /* HOME and TMPDIR of the child, as host paths (absolute).  A backend
   * whose view shows one at another path (Linux rung 1: TMPDIR at /tmp)
   * replaces exactly these values of HOME= and TMPDIR= in the spawn
   * request's environment with that path, and reports it. */
  const char           *home;
  const char           *tmpdir;
  const char           *state_dir;    /* executor-private 0700 dir the backend may use */
  /* Since 0.2 (SBX_POLICY_V1_HOST_SOCKETS_SIZE): NULL-terminated canonical
   * absolute paths of the host unix sockets the target may connect to (the
   * profile's "host-sockets"); every other host socket stays unreachable
   * unless SBX_POLICY_UNIX_SOCKETS.  A smaller struct_size means none. */
  const char *const    *host_sockets;
} SbxPolicyV1;
#define SBX_POLICY_V1_HOST_SOCKETS_SIZE (offsetof (SbxPolicyV1, host_sockets) + sizeof (const char *const *))
#define SBX_POLICY_V1_MIN_SIZE         (offsetof (SbxPolicyV1, state_dir) + sizeof (const char *))

/* ------------------------------------------------------------------------- */
/* Backend extension                                                          */
/* ------------------------------------------------------------------------- */

/* SbxProbeResultV1.flags */
#define SBX_PROBE_UNCONFINED_ONLY  1u  /* accepts only SBX_POLICY_UNCONFINED policies */

typedef struct SbxProbeResultV1
{
  uint32_t struct_size;
  uint32_t level;        /* best SBX_ABI_LEVEL_* this backend reaches on this host */
  uint64_t guarantees;   /* upper bound of SBX_ABI_GUARANTEE_* it can enforce here */
  uint32_t flags;        /* SBX_PROBE_* */
  uint32_t reserved0;
} SbxProbeResultV1;
#define SBX_PROBE_RESULT_V1_MIN_SIZE   (offsetof (SbxProbeResultV1, reserved0) + sizeof (uint32_t))

typedef struct SbxCompileResultV1
{
  uint32_t struct_size;
  uint32_t level;        /* SBX_ABI_LEVEL_* this spec achieves */
  uint64_t guarantees;   /* SBX_ABI_GUARANTEE_* this spec enforces */
  /* Appended (Since 0.2): written only when struct_size covers it
   * (SBX_COMPILE_RESULT_V1_SPAWN_FLAGS_SIZE); the host sets 0.  The spawn
   * flags a spawn of this spec honours among those the host must know of
   * before it spawns (SBX_SPAWN_STAGED): the host never sets one the spec
   * did not announce here. */
  uint32_t spawn_flags;
  uint32_t reserved0;
} SbxCompileResultV1;
#define SBX_COMPILE_RESULT_V1_MIN_SIZE (offsetof (SbxCompileResultV1, guarantees) + sizeof (uint64_t))
#define SBX_COMPILE_RESULT_V1_SPAWN_FLAGS_SIZE (offsetof (SbxCompileResultV1, spawn_flags) + sizeof (uint32_t))

/** The search list for a bare argv[0] when the spawn request's envp has no
 * PATH (execvp's default without the current directory). */
#define SBX_SPAWN_DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

/* SbxSpawnRequestV1.flags */
#define SBX_SPAWN_PTY  1u  /* stdin_fd is a terminal slave: make it the controlling tty */
/* The backend allocates the target's terminal itself, inside the sandbox
 * (its own devpts where the sandbox has one), and hands the host only the
 * master:
 *  - the request's struct_size covers pty_cols (SBX_SPAWN_REQUEST_V1_PTY_SIZE)
 *    and the result's covers pty_master_fd (SBX_SPAWN_RESULT_V1_PTY_SIZE);
 *  - stdin_fd, stdout_fd and stderr_fd are -1 and SBX_SPAWN_PTY is clear:
 *    the terminal's slave becomes the target's 0, 1 and 2 and its
 *    controlling terminal (a new session), so stdout and stderr are one
 *    stream on the master;
 *  - the window size is pty_rows x pty_cols (0 leaves the kernel's 0 x 0);
 *  - on OK, SbxSpawnResultV1.pty_master_fd is the master (close-on-exec,
 *    owned by the host); on failure no descriptor is handed out.
 * A backend that cannot do this returns SBX_STATUS_UNSUPPORTED; one built
 * before this flag leaves pty_master_fd at the host's -1, and the host
 * then kills the tree and fails the run. */
#define SBX_SPAWN_PTY_SANDBOX  2u
/* The target starts with the signals of SbxSpawnRequestV1.ignored_signals
 * ignored (SIG_IGN, which execve keeps), as a plain wrapper's child inherits
 * the dispositions its caller ignores (nohup, "&" in a script, a CI runner):
 *  - the request's struct_size covers ignored_signals
 *    (SBX_SPAWN_REQUEST_V1_SIGNALS_SIZE); bit N-1 stands for signal N
 *    (1..64); SIGKILL and SIGSTOP cannot be ignored and are refused
 *    (SBX_STATUS_INVALID), as is an empty set with the flag;
 *  - every other signal starts with its default disposition, as without
 *    the flag;
 *  - a signal the host sends through signal() that the target ignores is
 *    not forwarded to the rest of the tree by an init of the backend's:
 *    the command ignores it, as it would the same signal sent to a plain
 *    wrapper's child;
 *  - on OK the backend sets SBX_SPAWN_IGNORED_SIGNALS in
 *    SbxSpawnResultV1.honoured_flags (the host sets 0 there): a backend
 *    that predates the flag leaves it clear, and the host then kills the
 *    tree and fails the run; one that cannot honour it returns
 *    SBX_STATUS_UNSUPPORTED.
 * The host sets the flag only for a non-empty set: without it every signal
 * starts with its default disposition. */
#define SBX_SPAWN_IGNORED_SIGNALS  4u
/* A staged run (Since 0.2): every writable root of the policy the host
 * lists in SbxSpawnRequestV1.stage_roots is shown to the target as an
 * overlay whose lower layer is the host path (read only) and whose upper
 * and work directories are the entry's; nothing the target writes there
 * reaches the host path.  The host sets the flag only for a spec whose
 * compile announced it (SbxCompileResultV1.spawn_flags) and with
 * n_stage_roots > 0.  The backend refuses the spawn (SBX_STATUS_UNSUPPORTED,
 * naming the path) when it would show any other policy path writable, or
 * cannot stage a listed root: it never runs a staged request unstaged. */
#define SBX_SPAWN_STAGED  8u

/**
 * SbxStageRootV1:
 *
 * One writable root of a staged spawn (SBX_SPAWN_STAGED): @path is the
 * canonical host path of a policy rule that grants write; @upper and @work
 * are empty directories of the host's on one filesystem, owned by the
 * caller, that the target never sees.  No path contains ',', ':' or '\\'.
 */
typedef struct SbxStageRootV1
{
  uint32_t    struct_size;
  uint32_t    flags;        /* reserved, 0 */
  const char *path;
  const char *upper;
  const char *work;
} SbxStageRootV1;
#define SBX_STAGE_ROOT_V1_MIN_SIZE     (offsetof (SbxStageRootV1, work) + sizeof (const char *))

typedef struct SbxSpawnRequestV1
{
  uint32_t           struct_size;
  uint32_t           flags;       /* SBX_SPAWN_* */
  const char        *cwd;         /* absolute working directory */
  const char *const *argv;        /* NULL-terminated; argv[0] without '/' is looked up
                                   * in the PATH of @envp, never the host's (see the
                                   * spawn contract at SbxBackendVTableV1) */
  const char *const *envp;        /* complete scrubbed environment, NULL-terminated */
  /* The host's fds, never closed by the backend; may be equal to each other. */
  int32_t            stdin_fd;    /* -1 = /dev/null */
  int32_t            stdout_fd;   /* -1 = /dev/null */
  int32_t            stderr_fd;   /* -1 = /dev/null */
  uint32_t           reserved0;
  /* Appended: read only with SBX_SPAWN_PTY_SANDBOX. */
  uint32_t           pty_rows;    /* initial window size of the sandbox's terminal */
  uint32_t           pty_cols;
  /* Appended: read only when struct_size covers n_listens
   * (SBX_SPAWN_REQUEST_V1_LISTEN_SIZE) and the spawn has a network mode
   * PROXY.  The backend creates each of @listens inside the sandbox's
   * network and stores its fd (close-on-exec) at the same index of
   * @listen_fds, which the host allocated and filled with -1; on OK the
   * fds pass to the host, on failure the backend closes every one it
   * created and leaves -1.  A backend that cannot create them inside a
   * private network (no namespace) leaves every entry -1: nothing else
   * leads out, so the listed targets are then simply unreachable. */
  const SbxListenV1 *listens;
  int32_t           *listen_fds;
  uint32_t           n_listens;
  uint32_t           reserved1;
  /* Appended: read only with SBX_SPAWN_IGNORED_SIGNALS (see there). */
  uint64_t           ignored_signals;  /* bit N-1: signal N starts ignored */
  /* Appended (Since 0.2): read only with SBX_SPAWN_STAGED (see there). */
  const SbxStageRootV1 *stage_roots;
  uint32_t           n_stage_roots;
  uint32_t           reserved2;
  /* Appended (since 0.2): read only when struct_size covers it
   * (SBX_SPAWN_REQUEST_V1_DENIALS_SIZE).  NULL, or where the backend
   * reports the refusals its own mechanisms observe while the target runs
   * (see "Backend denials"). */
  const struct SbxBackendDenialSinkV1 *denial_sink;
} SbxSpawnRequestV1;
#define SBX_SPAWN_REQUEST_V1_MIN_SIZE  (offsetof (SbxSpawnRequestV1, reserved0) + sizeof (uint32_t))
#define SBX_SPAWN_REQUEST_V1_PTY_SIZE  (offsetof (SbxSpawnRequestV1, pty_cols) + sizeof (uint32_t))
#define SBX_SPAWN_REQUEST_V1_LISTEN_SIZE (offsetof (SbxSpawnRequestV1, n_listens) + sizeof (uint32_t))
#define SBX_SPAWN_REQUEST_V1_SIGNALS_SIZE (offsetof (SbxSpawnRequestV1, ignored_signals) + sizeof (uint64_t))
#define SBX_SPAWN_REQUEST_V1_STAGE_SIZE (offsetof (SbxSpawnRequestV1, n_stage_roots) + sizeof (uint32_t))
#define SBX_SPAWN_REQUEST_V1_DENIALS_SIZE (offsetof (SbxSpawnRequestV1, denial_sink) + sizeof (void *))

/* SbxSpawnResultV1.containment (LifetimeContainment) */
#define SBX_CONTAINMENT_UNSPECIFIED  0u
#define SBX_CONTAINMENT_ENFORCED     1u
#define SBX_CONTAINMENT_BEST_EFFORT  2u

typedef struct SbxSpawnResultV1
{
  uint32_t struct_size;
  uint32_t containment;      /* SBX_CONTAINMENT_* */
  int64_t  pid;              /* host-namespace pid the host waits for (waitpid/pidfd) */
  int32_t  pidfd;            /* pidfd of @pid or -1; ownership passes to the host */
  int32_t  proxy_listen_fd;  /* -1, or a listening socket inside the sandbox's
                              * network for the egress proxy; owned by the host */
  void    *child;            /* backend per-spawn handle for signal()/finish() */
  /* Appended: written only with SBX_SPAWN_PTY_SANDBOX; the host sets -1. */
  int32_t  pty_master_fd;    /* master of the sandbox's terminal; owned by the host */
  /* Was reserved1 (the host always set 0 there): written only when
   * struct_size covers it (SBX_SPAWN_RESULT_V1_FLAGS_SIZE).  The request
   * flags the backend acted on, of those that need the answer
   * (SBX_SPAWN_IGNORED_SIGNALS); the host sets 0. */
  uint32_t honoured_flags;
} SbxSpawnResultV1;
#define SBX_SPAWN_RESULT_V1_MIN_SIZE   (offsetof (SbxSpawnResultV1, child) + sizeof (void *))
#define SBX_SPAWN_RESULT_V1_PTY_SIZE   (offsetof (SbxSpawnResultV1, pty_master_fd) + sizeof (int32_t))
#define SBX_SPAWN_RESULT_V1_FLAGS_SIZE (offsetof (SbxSpawnResultV1, honoured_flags) + sizeof (uint32_t))

/* SbxExitV1.kind */
#define SBX_EXIT_EXITED    1u
#define SBX_EXIT_SIGNALED  2u

typedef struct SbxExitV1
{
  uint32_t struct_size;
  uint32_t kind;     /* SBX_EXIT_* of the target (not of any wrapper or init) */
  int32_t  code;     /* exit code when EXITED */
  int32_t  signo;    /* terminating signal when SIGNALED */
} SbxExitV1;
#define SBX_EXIT_V1_MIN_SIZE           (offsetof (SbxExitV1, signo) + sizeof (int32_t))

/**
 * SbxBackendVTableV1:
 *
 * @probe: measure what this host offers.  Called without any policy, may be
 *   called from any thread.  What it measured may be kept in the plugin's
 *   context (*plugin_ctx), never per process, and a failed measurement is
 *   not kept: a later probe measures again (see "Lifecycle and threads" in
 *   sbx-plugin-envelope.h; the host itself caches only a successful result).
 *   Entries added with host->report() describe each mechanism (with a
 *   "Hint: ..." in the detail when something is missing).
 * @compile: compile @policy once into an opaque spec (compile once, spawn
 *   many).  Narrowing is reported through @result and host->report(), never
 *   through an error; an error means the policy cannot be compiled at all
 *   (and then nothing is left allocated).  @result may not claim a higher
 *   level or more guarantees than probe did; the host refuses such a spec.
 * @spawn: start one child under @spec, following the spawn contract below.
 *   Safe to call concurrently on one spec from several threads.
 * @signal: deliver @signo to the target's whole process tree.
 * @finish: called exactly once per successful spawn, after the host reaped
 *   SbxSpawnResultV1.pid with @wait_status (as from waitpid).  Kills every
 *   remaining process of the tree, proves the tree empty, translates the
 *   status into the target's own exit (@out) and frees @child.
 * @release: free @spec.  Called once, after every spawn of it has finished.
 *
 * The spawn contract (what the host relies on after spawn() returns OK):
 *  - SbxSpawnResultV1.pid is a direct child of the host process (fork,
 *    clone or posix_spawn from the calling thread, no double fork): the host
 *    waits for it with waitpid() and a pidfd.  Whatever the backend puts
 *    around the target (an init, a zygote) lives below that pid; finish()
 *    translates the pid's wait status into the target's exit.  The host
 *    checks that the pid is its child (waitid with WNOWAIT) and, when it is
 *    not, kills the tree through signal(), calls finish() and fails the run.
 *  - Standard fds: stdin_fd, stdout_fd and stderr_fd belong to the host;
 *    the backend never closes them, it dup2()s them onto 0, 1 and 2 in the
 *    child (-1 means /dev/null).  Two or three of them may be the same fd
 *    (stdout and stderr share one pipe when output is captured together), and
 *    any of them may be 0, 1 or 2 of the host itself: copy all three above 2
 *    before the dup2()s so that no copy clobbers another.  The host closes its
 *    own copies after spawn() returns.
 *  - Every other fd is closed (or close-on-exec) when the target execs: only
 *    0, 1 and 2 cross execve.
 *  - The target starts with an empty signal mask and every signal at its
 *    default disposition, whatever the host's threads had.
 *  - argv[0] containing '/' is executed as is; otherwise it is searched in
 *    the PATH entry of envp (never the host's PATH; an empty PATH element
 *    means the working directory).  When envp has no PATH, the search list is
 *    SBX_SPAWN_DEFAULT_PATH, "/usr/local/bin:/usr/bin:/bin" (execvp's default
 *    without the current directory).  EACCES on one candidate with no later success reports
 *    SBX_STATUS_EXEC_DENIED.
 *  - cwd is absolute; the child chdir()s to it (inside the sandbox's view)
 *    before exec.  A failed chdir is SBX_STATUS_FAILED with a message naming
 *    "chdir", the directory and the errno text.
 *  - "Returns after exec": spawn() returns OK only once the target's execve
 *    has succeeded, which the parent learns without guessing, e.g. from EOF
 *    on a close-on-exec pipe whose write end only the child holds.  On a
 *    failure before or in execve, the child reports the step and errno on
 *    that pipe and exits; spawn() reaps it and everything it created and
 *    returns SBX_STATUS_EXEC_NOT_FOUND (ENOENT, ENOTDIR), EXEC_DENIED (EACCES,
 *    EPERM, ENOEXEC) or another non-OK status, with set_error() naming the
 *    step, the path and the errno text.  No process is left behind.
 *  - SbxSpawnResultV1.containment says whether the backend can prove that
 *    finish() leaves no process of the tree (ENFORCED: a pid namespace or a
 *    cgroup) or only tries (BEST_EFFORT, UNSPECIFIED).
 * @supports_grant_class: optional (may be NULL, then "supported when the
 *   guarantees allow it").  Returns 1 when a grant of @grant_class
 *   ("filesystem.path.read.v1", ...) can be enforced by this backend, else 0.
 * @explain: optional (may be NULL; the host reads it only when struct_size
 *   covers it).  Describes what @compile would build for @policy as
 *   human-readable UTF-8 text (host->alloc'd, NUL-terminated, in
 *   *@text_out): mount operations and rules, a profile text, token and job
 *   settings.  Creates and enforces nothing, so it may run on a host where
 *   this backend cannot spawn (its probe failed); report entries of the
 *   compilation go through host->report().  Safe from any thread.
 */
typedef int32_t SbxBackendProbeFunc (void *plugin_ctx, SbxHostCall *call, SbxProbeResultV1 *result);
typedef int32_t SbxBackendCompileFunc (void *plugin_ctx, SbxHostCall *call, const SbxPolicyV1 *policy,
                                       void **spec_out, SbxCompileResultV1 *result);
typedef int32_t SbxBackendSpawnFunc (void *plugin_ctx, SbxHostCall *call, void *spec,
                                     const SbxSpawnRequestV1 *request, SbxSpawnResultV1 *result);
typedef int32_t SbxBackendSignalFunc (void *plugin_ctx, void *child, int32_t signo);
typedef int32_t SbxBackendFinishFunc (void *plugin_ctx, SbxHostCall *call, void *child,
                                      int32_t wait_status, SbxExitV1 *out);
typedef void SbxBackendReleaseFunc (void *plugin_ctx, void *spec);
typedef uint32_t SbxBackendSupportsGrantClassFunc (void *plugin_ctx, const char *grant_class);
typedef int32_t SbxBackendExplainFunc (void *plugin_ctx, SbxHostCall *call, const SbxPolicyV1 *policy,
                                       char **text_out);

typedef struct SbxBackendVTableV1
{
  uint32_t                         struct_size;
  uint32_t                         reserved0;             /* 0 */
  SbxBackendProbeFunc             *probe;
  SbxBackendCompileFunc           *compile;
  SbxBackendSpawnFunc             *spawn;
  SbxBackendSignalFunc            *signal;
  SbxBackendFinishFunc            *finish;
  SbxBackendReleaseFunc           *release;
  SbxBackendSupportsGrantClassFunc *supports_grant_class;  /* optional: may be NULL */
  /* Appended after the first release: additive, found through struct_size. */
  SbxBackendExplainFunc           *explain;                /* optional: may be NULL */
} SbxBackendVTableV1;

/** Smallest backend vtable a host accepts: every mandatory slot (probe ..
 * release).  Optional slots after it are read only when struct_size covers
 * them (SBX_ABI_HAS). */
#define SBX_BACKEND_VTABLE_V1_MIN_SIZE (offsetof (SbxBackendVTableV1, release) + sizeof (SbxBackendReleaseFunc *))
/* ------------------------------------------------------------------------- */
/* Backend denials: refusals a backend observes while its target runs         */
/* ------------------------------------------------------------------------- */

/**
 * SbxBackendDenialV1:
 *
 * One refusal a backend's own mechanism made for the target of a spawn
 * (today: the Linux connect supervisor refusing a unix connect), handed
 * to the host as it happens.  Every string is UTF-8, valid for the
 * duration of the call only.  The host decides which grant, if any, would
 * open it (from the profile); the backend says only what happened.
 *
 * @operation: SBX_ABI_DENIAL_UNIX_CONNECT (connecting to the unix socket
 *   @target: an absolute path as the target named it, or "@NAME" for an
 *   abstract name); since 0.2 also SBX_ABI_DENIAL_READ (reading the file,
 *   or the metadata, at the host path @target), SBX_ABI_DENIAL_WRITE
 *   (creating, writing, renaming or removing @target), SBX_ABI_DENIAL_EXEC
 *   (executing @target) and SBX_ABI_DENIAL_LIST (listing the directory
 *   @target).  A filesystem @target is the absolute, lexically clean host
 *   path the operation named.
 * @pid: the refused process as its sandbox sees it (its pid namespace's
 *   number), or 0 when unknown.
 * @mechanism: which part refused ("connect-supervisor").
 * @process: (nullable) the process's argv[0] (or its name).
 * @reason: (nullable) why, in words.
 */
#define SBX_ABI_DENIAL_READ          0u   /* equal to SBX_DENIAL_OPERATION_READ */
#define SBX_ABI_DENIAL_WRITE         1u   /* equal to SBX_DENIAL_OPERATION_WRITE */
#define SBX_ABI_DENIAL_EXEC          2u   /* equal to SBX_DENIAL_OPERATION_EXEC */
#define SBX_ABI_DENIAL_LIST          3u   /* equal to SBX_DENIAL_OPERATION_LIST */
#define SBX_ABI_DENIAL_UNIX_CONNECT  6u   /* equal to SBX_DENIAL_OPERATION_UNIX_CONNECT */

typedef struct SbxBackendDenialV1
{
  uint32_t    struct_size;
  uint32_t    operation;   /* SBX_ABI_DENIAL_* */
  int64_t     pid;
  const char *target;
  const char *mechanism;
  const char *process;     /* nullable */
  const char *reason;      /* nullable */
} SbxBackendDenialV1;
#define SBX_BACKEND_DENIAL_V1_MIN_SIZE (offsetof (SbxBackendDenialV1, reason) + sizeof (const char *))

/**
 * SbxBackendDenialSinkV1:
 *
 * Where a backend reports the refusals of one spawn
 * (SbxSpawnRequestV1.denial_sink).  The backend copies the sink in spawn()
 * and may call @denied(@data, denial) from any of its threads, without
 * blocking on it, for every refusal of that spawn, until finish() of its
 * child returns: no call is in flight or made after that, and the host
 * keeps @data valid until then.  @denied never calls back into the
 * plugin; the host copies what it keeps and bounds it (repeats merged,
 * distinct denials capped), so a backend reports every refusal and need
 * not rate-limit.
 */
typedef void SbxBackendDeniedFunc (void *data, const SbxBackendDenialV1 *denial);

/* Backend asks (live approvals), since 0.2: the same answers as an egress
 * plugin's (sbx-plugin-egress.h defines these identically). */
#define SBX_ABI_DECISION_DENY      0u   /* refuse this request */
#define SBX_ABI_DECISION_ONCE      1u   /* open this request (and those merged with it) */
#define SBX_ABI_DECISION_FOR_RUN   2u   /* open the target for the rest of the execution */

/**
 * SbxBackendAnswerFunc:
 *
 * The backend's: the host's answer to one ask (SBX_ABI_DECISION_*), given
 * exactly once per ask, from any thread, possibly before the ask returns
 * (then on the asking thread) and possibly much later, also after
 * finish() of the child returned.  It must not block and must not take a
 * lock the backend holds while it calls @ask; @ticket stays the backend's
 * to free.
 */
typedef void SbxBackendAnswerFunc (void *ticket, uint32_t decision);

/**
 * SbxBackendAskFunc:
 *
 * The host's (optional; see SbxBackendDenialSinkV1.ask), since 0.2.
 * Instead of refusing an attempt its mechanism can still perform (today a
 * unix connect to a host socket, SBX_ABI_DENIAL_UNIX_CONNECT with an
 * absolute @target), a backend whose sink has @ask holds the attempt and
 * calls @ask(@data, @request, @answer, @ticket): @request is the denial it
 * would have reported (valid for the call only).  The host decides whether
 * to ask at all (only a target the profile gates is asked; any other is
 * answered DENY at once) and answers through @answer(@ticket, decision)
 * exactly once.  DENY: the backend refuses the attempt as it would have
 * without asking (reporting the denial to @denied); ONCE: it performs that
 * attempt as for a granted target; FOR_RUN: the same (the host answers
 * later attempts on that target ONCE or FOR_RUN at once).  A held attempt
 * costs the backend no thread and no polling; a backend bounds how many it
 * holds and refuses the rest as without asking.
 */
typedef void SbxBackendAskFunc (void *data, const SbxBackendDenialV1 *request,
                                SbxBackendAnswerFunc *answer, void *ticket);

typedef struct SbxBackendDenialSinkV1
{
  uint32_t              struct_size;
  uint32_t              reserved0;   /* 0 */
  SbxBackendDeniedFunc *denied;
  void                 *data;
  /* Appended (0.2): optional, read only when struct_size covers it; NULL:
   * the host does not ask (every refusal is reported to @denied). */
  SbxBackendAskFunc    *ask;
} SbxBackendDenialSinkV1;
#define SBX_BACKEND_DENIAL_SINK_V1_MIN_SIZE (offsetof (SbxBackendDenialSinkV1, data) + sizeof (void *))
#define SBX_BACKEND_DENIAL_SINK_V1_ASK_SIZE (offsetof (SbxBackendDenialSinkV1, ask) + sizeof (void *))


#ifdef __cplusplus
}
#endif

#endif /* SBX_PLUGIN_BACKEND_H */
