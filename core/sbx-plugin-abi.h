/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx-plugin-abi.h — the plain-C ABI between libsbx-1 (the "host") and its
 * plugins (backends, egress routes, reporters).
 *
 * Rules:
 *  - This header includes only <stddef.h> and <stdint.h>: a plugin can be
 *    built without GLib (the win32 backend is built with mingw-w64).
 *  - Every table starts with `struct_size`.  The reader uses a field only when
 *    SBX_ABI_HAS() says the size covers it; growth is additive only.
 *  - `abi_version` must be equal on both sides; it changes only for breaking
 *    changes.
 *  - `required_host_features` lets a plugin refuse an older core: the host
 *    rejects every required bit it does not implement (see "Host features").
 *  - No GLib types, no `bool`, no C `enum` types in structs: fixed-width
 *    integers only.
 *  - Memory is freed by whoever allocated it.  Memory that crosses the
 *    boundary in the plugin->host direction is allocated with host->alloc and
 *    freed by the host.
 *  - Errors travel as an int32_t status (SBX_STATUS_*) plus one call of
 *    host->set_error() on the SbxHostCall of that call.
 *
 * The layout of every struct is frozen by tests/abi/test-abi-layout.c.
 *
 * One file, although it is longer than 1,000 lines: it is the whole
 * contract a plugin author builds against (installed as its own package,
 * with no other header to find), and each kind of extension refers to the
 * host table, the status codes and the shared vocabularies above it.
 *
 * The sections below state the rules a plugin must follow and, for each, what
 * this host checks (a rule the host does not check is still a rule: breaking
 * it is a plugin bug that sbx-conformance looks for).  docs/writing-plugins.md
 * walks through them with a working example (examples/plugin-skeleton/).
 *
 * Loading
 * -------
 *  - Files: a plugin directory holds `sbx-plugin-<name>.so`.  Other files are
 *    ignored.  <name> is one to 64 bytes of lowercase words of [a-z0-9]
 *    joined by single dashes ("mock-ok", "linux").  The file and every
 *    directory searched must be owned by root or by the effective user and
 *    must not be writable by group or others; a symbolic link as the plugin
 *    file is refused.  SBX_PLUGIN_PATH is ignored in AT_SECURE processes.
 *  - Names line up three ways, all checked: the file name gives <name>; the
 *    exported entry symbol is `sbx_plugin_<name with '-' as '_'>_entry`
 *    (looked up with dlsym); SbxPluginDescriptor.name, with '_' read as '-',
 *    equals <name>.  SBX_PLUGIN_DEFINE (name, ...) writes the symbol and the
 *    descriptor name from one C identifier, so `SBX_PLUGIN_DEFINE (my_box,
 *    ...)` belongs in `sbx-plugin-my-box.so`.  The first directory providing
 *    a plugin name wins; a later file of the same name is refused.
 *  - Descriptor (checked before init): abi_version == SBX_PLUGIN_ABI_VERSION;
 *    struct_size >= SBX_PLUGIN_DESCRIPTOR_MIN_SIZE; required_host_features
 *    a subset of SbxHostV1.features (see "Host features"); version and
 *    license non-empty UTF-8 of at most 256 bytes; a non-empty extension
 *    list of at most 64 entries ended by an entry with kind SBX_EXT_END.
 *  - Extensions: every entry has the struct_size of the first (the host
 *    walks the array with that stride: at least sizeof (SbxPluginExtension),
 *    at most 4096, a multiple of sizeof (void *)); a name following the rule
 *    for plugin names and unique in the whole registry (across plugins); a
 *    known kind; a non-NULL vtable whose struct_size covers every mandatory
 *    function of its kind, each of them non-NULL.  An egress extension also
 *    needs SBX_HOST_FEATURE_EGRESS_V1 in required_host_features.
 *  - Reserved fields (`reserved0`, `reserved1`, SbxLimitsV1.flags): the
 *    writer sets them to 0 and the reader ignores them.  The host fills
 *    every table it hands out with zeros first; it does not inspect the
 *    reserved fields a plugin writes, but a later ABI may give one a meaning
 *    in which only 0 keeps today's behaviour, so anything else is a bug.
 *  - Any violation refuses the whole plugin (no extension of it is used) with
 *    a message that `sbx doctor` shows.  A refused plugin that got as far as
 *    init stays mapped; no plugin is dlclose()d after its init ran.
 *
 * Lifecycle and threads
 * ---------------------
 *  - init runs once per SbxRegistry that loads the file, not once per
 *    process: the default registry, every sbx_registry_new_for_directories()
 *    and every test harness each call init again on the same mapped object
 *    and get their own *plugin_ctx.  Keep state in *plugin_ctx, including
 *    what a probe measured of the host: it depends on the caller's
 *    credentials and on sysctls that change, may hold fds that fini must
 *    close, and a failed measurement must not stick for the whole process.
 *    The only process-wide state allowed is state about the process itself
 *    that cannot be had twice (the cgroup the process was moved into, say):
 *    it must be initialised thread-safely (pthread_once or a mutex), shared
 *    read-only by every context and never freed by fini.  init and fini run on whatever
 *    thread builds or drops the registry; fini runs once, after the last use
 *    of every extension of that context.  init must not call back into
 *    libsbx.
 *  - Concurrency: after init, every vtable function may be called from any
 *    thread, and calls on different objects (specs, children, sinks) run
 *    concurrently.  The host serialises only this: probe() of one backend
 *    extension in one registry runs at most once at a time (a successful
 *    result is cached; a failed probe is retried by a later caller); for
 *    one spec, release() runs once, after every spawn of it has been
 *    finished; for one child, finish() runs once, after spawn() returned it
 *    and after the host reaped its pid, and signal() is never called after
 *    finish() began; for one sink, close() runs after its last emit().
 *    spawn() may run on one spec from several threads at once.
 *  - Blocking: probe, compile and spawn may block (fork probe children, read
 *    the filesystem, wait for an exec) but must return in bounded time.
 *    signal() must not block.  finish() may wait, bounded, for the tree to
 *    disappear.  emit() runs on the thread of the run it reports: keep it
 *    short.  No call may wait for another call of the same plugin to be made
 *    (the host may be waiting on it).
 *  - Ownership: everything the host passes in (policy, request, strings,
 *    rule fds, the standard fds) stays the host's and is valid for the
 *    duration of the call only; copy or dup() what must outlive it.  A spec,
 *    a child handle, a route and a sink are the plugin's, handed back to the
 *    plugin exactly once to be freed (release, finish, stop, close).
 *    SbxSpawnResultV1.pidfd and .proxy_listen_fd, and the sockets a backend
 *    stores in SbxSpawnRequestV1.listen_fds, pass to the host.  Memory
 *    the host frees is allocated with host->alloc.
 *  - An SbxHostCall is valid only during the call that received it.
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
#ifndef SBX_PLUGIN_ABI_H
#define SBX_PLUGIN_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------- */
/* Versioning                                                                 */
/* ------------------------------------------------------------------------- */

/** The ABI version spoken by this header.  Host and plugin must be equal. */
#define SBX_PLUGIN_ABI_VERSION 1u

/**
 * SBX_ABI_HAS:
 * @p: pointer to a table that starts with `struct_size`
 * @T: the struct type
 * @field: a member of @T
 *
 * True when the table pointed to by @p is large enough to contain @field.
 */
#define SBX_ABI_HAS(p, T, field) \
  ((p)->struct_size >= offsetof (T, field) + sizeof (((T *) 0)->field))

/* Minimum sizes.  Every table T has SBX_<T>_MIN_SIZE: the size of its first
 * published layout.  A reader checks `struct_size >= SBX_<T>_MIN_SIZE` (never
 * `>= sizeof (T)`, which would make a plugin built against a grown header
 * refuse an older host) and reads any later field only when SBX_ABI_HAS says
 * struct_size covers it.  A writer sets struct_size to sizeof (T) of the
 * header it was built with. */

/* Host features.  A plugin lists in SbxPluginDescriptor.required_host_features
 * the features it cannot work without; a host advertises in SbxHostV1.features
 * exactly the features it IMPLEMENTS (not every bit it knows).  The host
 * refuses, before init, a plugin that requires a bit this header does not
 * define, and a plugin that requires a defined bit the host does not
 * implement: required_host_features must be a subset of SbxHostV1.features.
 * A plugin that merely benefits from a feature leaves the bit out of its
 * requirements and tests host->features at init. */

/** The host passes pre-opened, identity-checked O_PATH fds in SbxFsRuleV1.fd
 * (otherwise every fd is -1 and rules are by path only). */
#define SBX_HOST_FEATURE_RULE_FDS        (UINT64_C (1) << 0)
/** The host accepts and serves a listening socket returned by spawn
 * (SbxSpawnResultV1.proxy_listen_fd); otherwise it closes any it receives. */
#define SBX_HOST_FEATURE_PROXY_LISTEN_FD (UINT64_C (1) << 1)
/** The host consumes egress extensions (SBX_EXT_EGRESS, SbxEgressVTableV1):
 * it starts routes of executor sets, authorizes each execution that may
 * reach the network through one, serves the listeners backends return, and
 * revokes the execution when it ends.  A plugin that lists an egress
 * extension must require it. */
#define SBX_HOST_FEATURE_EGRESS_V1       (UINT64_C (1) << 2)
/** The host asks backends for the egress listeners of a run besides the
 * proxy (SbxSpawnRequestV1.listens: the DNS stub and one forwarder per
 * approved target, see SbxListenV1), accepts the sockets they create in
 * SbxSpawnRequestV1.listen_fds, and hands them to the route's
 * SbxEgressVTableV1.serve_listeners; it closes any it cannot serve. */
#define SBX_HOST_FEATURE_EGRESS_LISTENERS (UINT64_C (1) << 3)
/** Every feature bit this header defines.  A host rejects any other required bit. */
#define SBX_HOST_FEATURES_KNOWN          (SBX_HOST_FEATURE_RULE_FDS | SBX_HOST_FEATURE_PROXY_LISTEN_FD | \
                                          SBX_HOST_FEATURE_EGRESS_V1 | SBX_HOST_FEATURE_EGRESS_LISTENERS)
#define SBX_HOST_FEATURES_NONE           UINT64_C (0)

/* ------------------------------------------------------------------------- */
/* Symbol visibility                                                          */
/* ------------------------------------------------------------------------- */

#if defined(_WIN32) || defined(__CYGWIN__)
#define SBX_PLUGIN_EXPORT __declspec (dllexport)
#else
#define SBX_PLUGIN_EXPORT __attribute__ ((visibility ("default")))
#endif

/* ------------------------------------------------------------------------- */
/* Status codes (int32_t)                                                     */
/* ------------------------------------------------------------------------- */

#define SBX_STATUS_OK              0  /* success */
#define SBX_STATUS_FAILED          1  /* generic failure; message via host->set_error */
#define SBX_STATUS_UNAVAILABLE     2  /* a needed mechanism is absent on this host */
#define SBX_STATUS_UNSUPPORTED     3  /* this extension cannot honour the request (never widened) */
#define SBX_STATUS_INVALID         4  /* input failed the extension's own re-validation */
#define SBX_STATUS_NO_MEMORY       5
#define SBX_STATUS_EXEC_NOT_FOUND  6  /* spawn: argv[0] not found (CLI exit 127) */
#define SBX_STATUS_EXEC_DENIED     7  /* spawn: argv[0] found but not executable (CLI exit 126) */

/* ------------------------------------------------------------------------- */
/* Shared vocabularies (numeric values equal the public GLib-side enums)      */
/* ------------------------------------------------------------------------- */

/* SbxLevel */
#define SBX_ABI_LEVEL_NONE      0u
#define SBX_ABI_LEVEL_DEGRADED  1u
#define SBX_ABI_LEVEL_FULL      2u

/* SbxGuarantees (bit positions frozen) */
#define SBX_ABI_GUARANTEE_PROCESS_BOUNDARY  (UINT64_C (1) << 0)
#define SBX_ABI_GUARANTEE_WRITE_BOUNDARY    (UINT64_C (1) << 1)
#define SBX_ABI_GUARANTEE_READ_BOUNDARY     (UINT64_C (1) << 2)
#define SBX_ABI_GUARANTEE_ENV_SCRUB         (UINT64_C (1) << 3)
#define SBX_ABI_GUARANTEE_NETWORK_BOUNDARY  (UINT64_C (1) << 4)
#define SBX_ABI_GUARANTEE_ADDRESS_NETWORK   (UINT64_C (1) << 5)
#define SBX_ABI_GUARANTEE_RESOURCE_LIMITS   (UINT64_C (1) << 6)
#define SBX_ABI_GUARANTEE_TARGET_NETWORK    (UINT64_C (1) << 7)

/* Report feature names.  Every entry of a compile report (host->report())
 * names the feature it describes.  Each guarantee bit has one name, the one
 * below; entries under that name are the evidence for, or against, that
 * guarantee, and the same words appear in the JSON reports, `sbx doctor` and
 * the profile's "requires" list:
 *  - a compile that claims SBX_ABI_GUARANTEE_X reports at least one entry
 *    named SBX_ABI_FEATURE_X saying how it is enforced;
 *  - a compile that does not claim it, but for which the policy asked, may
 *    report SBX_ABI_FEATURE_X as SBX_ABI_REPORT_UNENFORCED with the reason;
 *  - a compile that claims SBX_ABI_GUARANTEE_X and also reports
 *    SBX_ABI_FEATURE_X as SBX_ABI_REPORT_UNENFORCED contradicts itself: the
 *    host refuses the spec (SBX_PLUGIN_ERROR_INVALID naming the feature),
 *    as it refuses a compile that claims more than its probe.
 * Other entries (mechanisms such as "seccomp", plumbing such as
 * "core-dumps") use any lower-case dash-separated name of the plugin's
 * choosing that is not one of these; the shared ones are defined below so
 * that every backend spells them alike. */
#define SBX_ABI_FEATURE_PROCESS_BOUNDARY    "process-boundary"   /* SBX_ABI_GUARANTEE_PROCESS_BOUNDARY */
#define SBX_ABI_FEATURE_WRITE_BOUNDARY      "write-boundary"     /* SBX_ABI_GUARANTEE_WRITE_BOUNDARY */
#define SBX_ABI_FEATURE_READ_BOUNDARY       "read-boundary"      /* SBX_ABI_GUARANTEE_READ_BOUNDARY */
#define SBX_ABI_FEATURE_ENV_SCRUB           "env-scrub"          /* SBX_ABI_GUARANTEE_ENV_SCRUB */
#define SBX_ABI_FEATURE_NETWORK_BOUNDARY    "network-boundary"   /* SBX_ABI_GUARANTEE_NETWORK_BOUNDARY */
#define SBX_ABI_FEATURE_ADDRESS_NETWORK     "address-network"    /* SBX_ABI_GUARANTEE_ADDRESS_NETWORK */
#define SBX_ABI_FEATURE_RESOURCE_LIMITS     "resource-limits"    /* SBX_ABI_GUARANTEE_RESOURCE_LIMITS */
#define SBX_ABI_FEATURE_TARGET_NETWORK      "target-network"     /* SBX_ABI_GUARANTEE_TARGET_NETWORK */
/* Shared names that support no guarantee bit of their own. */
#define SBX_ABI_FEATURE_CONFINEMENT         "confinement"        /* whether the backend confines at all */
#define SBX_ABI_FEATURE_PROCESS_LIFETIME    "process-lifetime"   /* whether the tree ends with the run */
#define SBX_ABI_FEATURE_PROCESS_CONTAINMENT "process-containment" /* how descendants are kept in the tree */
#define SBX_ABI_FEATURE_UNIX_SOCKETS        "unix-sockets"       /* what unix sockets the target can reach */
#define SBX_ABI_FEATURE_NETWORK             "network"            /* the network the policy allows */
/* The name of the guarantee bit at position @i (0..7), for a plugin that
 * reports guarantees in a loop; "" outside the defined bits. */
#define SBX_ABI_FEATURE_FOR_GUARANTEE_BIT(i)                                               \
  ((i) == 0 ? SBX_ABI_FEATURE_PROCESS_BOUNDARY : (i) == 1 ? SBX_ABI_FEATURE_WRITE_BOUNDARY   \
   : (i) == 2 ? SBX_ABI_FEATURE_READ_BOUNDARY : (i) == 3 ? SBX_ABI_FEATURE_ENV_SCRUB         \
   : (i) == 4 ? SBX_ABI_FEATURE_NETWORK_BOUNDARY : (i) == 5 ? SBX_ABI_FEATURE_ADDRESS_NETWORK \
   : (i) == 6 ? SBX_ABI_FEATURE_RESOURCE_LIMITS : (i) == 7 ? SBX_ABI_FEATURE_TARGET_NETWORK  \
   : "")

/* Compile-report entry status (SbxReportStatus) */
#define SBX_ABI_REPORT_ENFORCED    1u  /* fully enforced as requested */
#define SBX_ABI_REPORT_NARROWED    2u  /* enforced more tightly than requested (errs narrow) */
#define SBX_ABI_REPORT_UNENFORCED  3u  /* not enforced */
#define SBX_ABI_REPORT_WIDENED     4u  /* documented platform-plumbing allowance */
#define SBX_ABI_REPORT_VACUOUS     5u  /* holds only incidentally */

/* Log levels for host->log */
#define SBX_LOG_ERROR    1u
#define SBX_LOG_WARNING  2u
#define SBX_LOG_INFO     3u
#define SBX_LOG_DEBUG    4u

/* ------------------------------------------------------------------------- */
/* The host table handed to SbxPluginDescriptor.init                           */
/* ------------------------------------------------------------------------- */

/**
 * SbxHostCall:
 *
 * Opaque per-call context.  The host passes a fresh one to every vtable
 * function that can fail or report; the plugin hands it back to set_error()
 * and report().  It is valid only for the duration of that call and may be
 * used from whatever thread the call runs on.
 */
typedef struct SbxHostCall SbxHostCall;

/* Functions of the host table.  Every slot of every table in this header has
 * a function typedef (a function type, not a pointer): declare each
 * implementation through it (`static SbxBackendProbeFunc my_probe;` before
 * the definition) so a mismatched signature cannot compile, and fill tables
 * with designated initializers (`.probe = my_probe`) so two slots cannot be
 * swapped. */
typedef void SbxHostSetErrorFunc (SbxHostCall *call, int32_t status, const char *message);
typedef void SbxHostReportFunc (SbxHostCall *call, const char *feature, uint32_t status,
                                const char *detail);
typedef void SbxHostLogFunc (uint32_t level, const char *domain, const char *message);
typedef void *SbxHostAllocFunc (size_t size);
typedef void SbxHostReleaseFunc (void *ptr);

typedef struct SbxHostV1
{
  uint32_t    struct_size;
  uint32_t    abi_version;      /* == SBX_PLUGIN_ABI_VERSION */
  uint64_t    features;         /* SBX_HOST_FEATURE_* this host implements */
  const char *core_version;     /* e.g. "0.1.0" */

  /* Record the error of the current call.  @status is the SBX_STATUS_* the
   * vtable function is about to return; @message is UTF-8 and should name the
   * operation and the path or value at fault.  Calling it more than once per
   * call keeps the first message. */
  SbxHostSetErrorFunc *set_error;

  /* Append one entry to the compile report of the current probe or compile
   * call.  @feature is a lower-case dash-separated name, one of the
   * SBX_ABI_FEATURE_* names for a guarantee (see "Report feature
   * names" above), @status one of SBX_ABI_REPORT_*, @detail free text (may be
   * NULL). */
  SbxHostReportFunc  *report;

  /* Diagnostic logging.  Never changes policy.  @domain names the plugin. */
  SbxHostLogFunc     *log;

  /* Allocation for memory handed from the plugin to the host. */
  SbxHostAllocFunc   *alloc;
  SbxHostReleaseFunc *release;
} SbxHostV1;

/** Smallest host table a plugin may be handed (the first published layout);
 * a plugin checks struct_size against this, never against sizeof, so a
 * plugin built against a grown header still loads in an older host. */
#define SBX_HOST_V1_MIN_SIZE (offsetof (SbxHostV1, release) + sizeof (SbxHostReleaseFunc *))

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
} SbxCompileResultV1;
#define SBX_COMPILE_RESULT_V1_MIN_SIZE (offsetof (SbxCompileResultV1, guarantees) + sizeof (uint64_t))

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

/* SbxListenV1.kind */
#define SBX_LISTEN_DNS_UDP  1u  /* the sandbox's DNS stub: a bound UDP socket on address:port */
#define SBX_LISTEN_FORWARD  2u  /* a TCP listener on address:port relaying to @target */
#define SBX_LISTEN_DNS_TCP  3u  /* the same stub over TCP (RFC 7766): a TCP listener on the
                                 * DNS_UDP entry's address:port */

/* SbxListenV1.flags */
#define SBX_LISTEN_F_ADD_ADDRESS  1u  /* the address is not on the sandbox's loopback yet:
                                       * the backend adds it (a /32 or /128 on lo) first */

/* SbxListenV1.family */
#define SBX_LISTEN_IPV4  4u  /* address[0..3] */
#define SBX_LISTEN_IPV6  6u  /* address[0..15] */

/**
 * SbxListenV1:
 *
 * One egress listener a backend creates inside the sandbox's own network
 * (SBX_HOST_FEATURE_EGRESS_LISTENERS), besides the proxy's: the DNS stub
 * (the only resolver the sandbox's resolv.conf names) or a forwarder for one
 * approved target.  The host computes the list per run; the backend only
 * binds (and for FORWARD and DNS_TCP listens); the egress plugin serves
 * them.  @address is in network byte order.  @target is the canonical
 * "tcp:host:port" a FORWARD relays to (the stub answers a name target's host
 * with @address); NULL for DNS_UDP and DNS_TCP.
 *
 * Kinds are additive.  A backend leaves -1 for a kind it does not know (the
 * listener is then simply missing) and an egress plugin closes the socket
 * of a kind it does not know and serves the others; serving DNS_TCP is
 * never required.  The host lists kinds newer than DNS_UDP and FORWARD
 * after every entry of those two, so that a plugin that stops at the first
 * kind it does not know has served the rest.
 */
typedef struct SbxListenV1
{
  uint32_t    struct_size;
  uint32_t    kind;         /* SBX_LISTEN_* */
  uint32_t    family;       /* SBX_LISTEN_IPV4 or SBX_LISTEN_IPV6 */
  uint32_t    flags;        /* SBX_LISTEN_F_* */
  uint8_t     address[16];
  uint16_t    port;
  uint16_t    reserved0;
  uint32_t    reserved1;
  const char *target;
} SbxListenV1;
#define SBX_LISTEN_V1_MIN_SIZE         (offsetof (SbxListenV1, target) + sizeof (const char *))

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
 *   called from any thread, result may be cached by the plugin per process.
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
 *   abstract name).
 * @pid: the refused process as its sandbox sees it (its pid namespace's
 *   number), or 0 when unknown.
 * @mechanism: which part refused ("connect-supervisor").
 * @process: (nullable) the process's argv[0] (or its name).
 * @reason: (nullable) why, in words.
 */
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

typedef struct SbxBackendDenialSinkV1
{
  uint32_t              struct_size;
  uint32_t              reserved0;   /* 0 */
  SbxBackendDeniedFunc *denied;
  void                 *data;
} SbxBackendDenialSinkV1;
#define SBX_BACKEND_DENIAL_SINK_V1_MIN_SIZE (offsetof (SbxBackendDenialSinkV1, data) + sizeof (void *))

/* ------------------------------------------------------------------------- */
/* Egress extension                                                           */
/* ------------------------------------------------------------------------- */

typedef struct SbxEgressInfoV1
{
  uint32_t struct_size;
  uint32_t target_guarantee;   /* 1 when every target can be scoped by host and port */
  uint32_t address_guarantee;  /* 1 when non-public resolved addresses are refused */
  uint32_t reserved0;
  char    *fingerprint;        /* host->alloc'd "route-v1:<hex>"; never contains secrets */
} SbxEgressInfoV1;
#define SBX_EGRESS_INFO_V1_MIN_SIZE    (offsetof (SbxEgressInfoV1, fingerprint) + sizeof (char *))

/**
 * SbxEgressVTableV1:
 *
 * @start: parse @route_config (a URL or "direct") and create a route.
 * @authorize: allow @execution_id to reach @targets ("tcp:host:port",
 *   NULL-terminated; NULL means every target, an empty list none yet:
 *   a host that asks, see SbxEgressAskFunc; plugins before 0.2 refuse it) and return a fresh credential
 *   (host->alloc'd) the child presents to the proxy.
 * @serve: serve proxy connections arriving on @listen_fd, a listening
 *   loopback TCP socket (ownership passes to the plugin, also on failure).
 *   With @execution_id (an authorized execution: the listener lives in that
 *   execution's sandbox, e.g. in its private network namespace), only that
 *   execution's credential authenticates on it, and @revoke of it closes the
 *   listener; NULL serves every execution of the route, told apart by their
 *   credentials alone.  Served until @revoke or @stop.
 * @revoke: withdraw @execution_id; in-flight tunnels of it end, and so do
 *   the listeners served for it.  Returns the first denial of that execution
 *   in @denial_out (host->alloc'd, or NULL when nothing was denied): UTF-8
 *   text that begins with the denied target ("tcp:host:port"), optionally
 *   followed by one space and the reason.
 * @stop: end the route, every tunnel and every listener.
 * @serve_listeners: optional (read only when struct_size covers it;
 *   SBX_HOST_FEATURE_EGRESS_LISTENERS).  Serves the listeners a backend
 *   created for @execution_id from @listens (the list the host computed for
 *   that run): @fds[i] is the socket of @listens[i], or -1 when none was
 *   made (ownership of each passes to the plugin, also on failure).  The
 *   DNS_UDP socket (and the DNS_TCP listener, with the same answers to
 *   each length-prefixed query of a connection) answers, for that execution
 *   only, each FORWARD target's host name with the FORWARD's address (A;
 *   AAAA only for an IPv6 one) and refuses every other name; each FORWARD
 *   relays every connection to its target through the route exactly as a
 *   CONNECT of that execution would (authorization, address classes,
 *   upstream chaining, denial record).  @revoke of the execution closes them and their tunnels.
 *
 * Credentials: the child presents "<execution id>:<credential>" as HTTP
 * Basic proxy authorization; the credential is random, at most 256 bytes of
 * [A-Za-z0-9_-], so the pair splits at the last ':' and execution ids may
 * contain ':'.  It is a secret of that one execution: never logged, never
 * in a denial or an error message.
 */
typedef int32_t SbxEgressStartFunc (void *plugin_ctx, SbxHostCall *call, const char *route_config,
                                    void **route_out, SbxEgressInfoV1 *info);
typedef int32_t SbxEgressAuthorizeFunc (void *plugin_ctx, SbxHostCall *call, void *route,
                                        const char *execution_id, const char *const *targets,
                                        char **credential_out);
typedef int32_t SbxEgressServeFunc (void *plugin_ctx, SbxHostCall *call, void *route,
                                    const char *execution_id, int32_t listen_fd);
typedef int32_t SbxEgressRevokeFunc (void *plugin_ctx, void *route, const char *execution_id,
                                     char **denial_out);
typedef void SbxEgressStopFunc (void *plugin_ctx, void *route);
typedef int32_t SbxEgressServeListenersFunc (void *plugin_ctx, SbxHostCall *call, void *route,
                                             const char *execution_id, const SbxListenV1 *listens,
                                             const int32_t *fds, uint32_t n_listens);

/* ------------------------------------------------------------------------- */
/* Egress denials: every refusal of an execution, as it happens            */
/* ------------------------------------------------------------------------- */

/**
 * SbxEgressDenialV1:
 *
 * One refusal of an authorized execution's network access, handed to the
 * host as it happens (see SbxEgressDenialSinkV1).  Every string is UTF-8,
 * valid for the duration of the call only, and never holds a credential.
 *
 * @operation: SBX_ABI_DENIAL_CONNECT (a connection to @target) or
 *   SBX_ABI_DENIAL_RESOLVE (a lookup of the name @target).
 * @flags: SBX_ABI_DENIAL_APPROVABLE when approving @target for the
 *   execution would have opened it (the target was not approved); clear
 *   when no approval can (a metadata or non-public address the rules
 *   refuse, a request naming no target, a name the stub never answers).
 * @target: CONNECT: the canonical "tcp:host:port" (SBX's
 *   "tcp:invalid:1" when the request named none); RESOLVE: the name as
 *   asked, lower-cased.
 * @mechanism: which part refused: "egress-proxy", "dns-stub", "forwarder".
 * @reason: (nullable) why, in words ("not approved for this execution",
 *   the address rule that refused it).
 */
#define SBX_ABI_DENIAL_CONNECT     4u   /* equal to SBX_DENIAL_OPERATION_CONNECT */
#define SBX_ABI_DENIAL_RESOLVE     5u   /* equal to SBX_DENIAL_OPERATION_RESOLVE */
#define SBX_ABI_DENIAL_APPROVABLE  (1u << 0)

typedef struct SbxEgressDenialV1
{
  uint32_t    struct_size;
  uint32_t    operation;   /* SBX_ABI_DENIAL_* */
  uint32_t    flags;       /* SBX_ABI_DENIAL_APPROVABLE */
  uint32_t    reserved0;   /* 0 */
  const char *target;
  const char *mechanism;
  const char *reason;      /* nullable */
} SbxEgressDenialV1;
#define SBX_EGRESS_DENIAL_V1_MIN_SIZE (offsetof (SbxEgressDenialV1, reason) + sizeof (const char *))

/**
 * SbxEgressDenialSinkV1:
 *
 * Where an egress plugin reports the refusals of one execution.
 * @denied(@data, denial) is the host's: it may be called from any thread of
 * the plugin, concurrently, must not block, and never calls back into the
 * plugin.  The host copies what it keeps and bounds it (repeats merged,
 * distinct denials capped), so a plugin reports every refusal as it
 * happens and need not rate-limit.
 */
typedef void SbxEgressDeniedFunc (void *data, const SbxEgressDenialV1 *denial);

/* Egress asks (live approvals): see SbxEgressAskFunc below. */
#define SBX_ABI_DECISION_DENY      0u   /* refuse this request */
#define SBX_ABI_DECISION_ONCE      1u   /* open this request (and those merged with it) */
#define SBX_ABI_DECISION_FOR_RUN   2u   /* open the target for the rest of the execution */

/**
 * SbxEgressAnswerFunc:
 *
 * The plugin's: the host's answer to one ask (SBX_ABI_DECISION_*), given
 * exactly once per ask, from any thread, possibly before the ask returns
 * and possibly much later.  It must not block and must not take a lock
 * the plugin holds while it calls @ask.
 */
typedef void SbxEgressAnswerFunc (void *ticket, uint32_t decision);

/**
 * SbxEgressAskFunc:
 *
 * The host's (optional; see SbxEgressDenialSinkV1.ask).  Instead of
 * refusing an APPROVABLE CONNECT of an execution (the target is not
 * approved for it), a plugin whose sink has @ask holds the request and
 * calls @ask(@data, @request, @answer, @ticket): @request is the denial it
 * would have reported (valid for the call only).  The host answers through
 * @answer(@ticket, decision) exactly once, at the latest before @revoke of
 * the execution is called.  DENY: the plugin refuses the request as it
 * would have without asking (reporting the denial to @denied); ONCE: it
 * serves that request; FOR_RUN: it serves it and adds the target to the
 * execution's approved targets.  Either way every address rule still
 * applies (metadata never; a name with a non-public address refused); an
 * approved IP literal counts as named by the approval, as a grant's does.
 * Held requests cost the plugin no thread and no polling.
 */
typedef void SbxEgressAskFunc (void *data, const SbxEgressDenialV1 *request,
                               SbxEgressAnswerFunc *answer, void *ticket);

typedef struct SbxEgressDenialSinkV1
{
  uint32_t             struct_size;
  uint32_t             reserved0;   /* 0 */
  SbxEgressDeniedFunc *denied;
  void                *data;
  /* Appended: optional, read only when struct_size covers it; NULL: the
   * host does not ask (every refusal is reported to @denied). */
  SbxEgressAskFunc    *ask;
} SbxEgressDenialSinkV1;
#define SBX_EGRESS_DENIAL_SINK_V1_MIN_SIZE (offsetof (SbxEgressDenialSinkV1, data) + sizeof (void *))

/* @watch_denials: optional (read only when the vtable's struct_size covers
 * it).  The host calls it once per execution, after @authorize and before
 * serving any listener of it; the plugin copies *@sink and, from then on,
 * calls sink->denied for EVERY refusal of @execution_id by any of its
 * mechanisms (the proxy, the DNS stub, the forwarders), until @revoke of
 * that execution returns: no call is in flight or made after that.  The
 * first-denial text of @revoke is still returned (older hosts rely on
 * it).  Returns SBX_STATUS_OK, or SBX_STATUS_INVALID for an unknown
 * execution or a sink whose struct_size is below its minimum. */
typedef int32_t SbxEgressWatchDenialsFunc (void *plugin_ctx, void *route, const char *execution_id,
                                           const SbxEgressDenialSinkV1 *sink);

/* A plugin listing an egress extension must require
 * SBX_HOST_FEATURE_EGRESS_V1 (see the host features above). */
typedef struct SbxEgressVTableV1
{
  uint32_t               struct_size;
  uint32_t               reserved0;   /* 0 */
  SbxEgressStartFunc    *start;
  SbxEgressAuthorizeFunc *authorize;
  SbxEgressServeFunc    *serve;
  SbxEgressRevokeFunc   *revoke;
  SbxEgressStopFunc     *stop;
  /* Appended: optional, found through struct_size. */
  SbxEgressServeListenersFunc *serve_listeners;
  /* Appended: optional, found through struct_size (see "Egress denials"). */
  SbxEgressWatchDenialsFunc   *watch_denials;
} SbxEgressVTableV1;

#define SBX_EGRESS_VTABLE_V1_MIN_SIZE (offsetof (SbxEgressVTableV1, stop) + sizeof (SbxEgressStopFunc *))

/* ------------------------------------------------------------------------- */
/* Reporter extension                                                         */
/* ------------------------------------------------------------------------- */

/**
 * SbxReporterVTableV1:
 *
 * Reporters receive events as versioned JSON objects ("schema": 1), one per
 * call.  They can never alter policy: a reporter error is logged and
 * counted by the host and changes nothing else.
 *
 * @open: create a sink from @config (reporter-specific, e.g. a file path).
 * @emit: deliver one event; @event_json is one JSON object without newline.
 * @close: flush and free @sink.
 */
typedef int32_t SbxReporterOpenFunc (void *plugin_ctx, SbxHostCall *call, const char *config,
                                     void **sink_out);
typedef int32_t SbxReporterEmitFunc (void *plugin_ctx, SbxHostCall *call, void *sink,
                                     const char *event_json, size_t length);
typedef void SbxReporterCloseFunc (void *plugin_ctx, void *sink);

typedef struct SbxReporterVTableV1
{
  uint32_t             struct_size;
  uint32_t             reserved0;   /* 0 */
  SbxReporterOpenFunc *open;
  SbxReporterEmitFunc *emit;
  SbxReporterCloseFunc *close;
} SbxReporterVTableV1;

#define SBX_REPORTER_VTABLE_V1_MIN_SIZE (offsetof (SbxReporterVTableV1, close) + sizeof (SbxReporterCloseFunc *))

/* ------------------------------------------------------------------------- */
/* Descriptor                                                                 */
/* ------------------------------------------------------------------------- */

#define SBX_EXT_END       0u  /* terminates the extension list */
#define SBX_EXT_BACKEND   1u  /* vtable is SbxBackendVTableV1 */
#define SBX_EXT_EGRESS    2u  /* vtable is SbxEgressVTableV1 */
#define SBX_EXT_REPORTER  3u  /* vtable is SbxReporterVTableV1 */

typedef struct SbxPluginExtension
{
  uint32_t    struct_size;
  uint32_t    kind;       /* SBX_EXT_*; SBX_EXT_END ends the list */
  const char *name;       /* lowercase words joined with dashes: "linux-userns" */
  int32_t     priority;   /* spaced by 10s; higher is tried first; negative = last resort */
  uint32_t    reserved0;
  const void *vtable;     /* per kind */
} SbxPluginExtension;
#define SBX_PLUGIN_EXTENSION_MIN_SIZE  (offsetof (SbxPluginExtension, vtable) + sizeof (const void *))

typedef int32_t SbxPluginInitFunc (const SbxHostV1 *host, void **plugin_ctx);
typedef void SbxPluginFiniFunc (void *plugin_ctx);

typedef struct SbxPluginDescriptor
{
  uint32_t    struct_size;
  uint32_t    abi_version;             /* SBX_PLUGIN_ABI_VERSION */
  uint64_t    required_host_features;  /* SBX_HOST_FEATURE_* the plugin cannot work without */
  const char *name;                    /* equals the file-name-derived name */
  const char *version;
  const char *license;                 /* SPDX identifier */
  /* No globals: plugin state lives in *plugin_ctx.  Returns SBX_STATUS_*. */
  SbxPluginInitFunc *init;
  SbxPluginFiniFunc *fini;
  const SbxPluginExtension *extensions; /* terminated by kind == SBX_EXT_END */
} SbxPluginDescriptor;

/** Smallest descriptor a host accepts (everything up to and including extensions). */
#define SBX_PLUGIN_DESCRIPTOR_MIN_SIZE \
  (offsetof (SbxPluginDescriptor, extensions) + sizeof (const SbxPluginExtension *))

/**
 * SBX_PLUGIN_DEFINE:
 *
 * Defines the descriptor and the exported entry symbol
 * `sbx_plugin_<name>_entry`.  The plugin file must be called
 * `sbx-plugin-<name with '_' as '-'>.so` (".dll" on Windows): the host
 * derives the symbol from the file name.
 */
#define SBX_PLUGIN_DEFINE(id_, ver_, license_, required_, init_fn_, fini_fn_, ext_table_) \
  static const SbxPluginDescriptor sbx_plugin_desc_##id_ = {                           \
    .struct_size = sizeof (SbxPluginDescriptor),                                       \
    .abi_version = SBX_PLUGIN_ABI_VERSION,                                             \
    .required_host_features = (required_),                                             \
    .name = #id_, .version = (ver_), .license = (license_),                            \
    .init = (init_fn_), .fini = (fini_fn_), .extensions = (ext_table_) };              \
  SBX_PLUGIN_EXPORT const SbxPluginDescriptor *sbx_plugin_##id_##_entry (void);        \
  SBX_PLUGIN_EXPORT const SbxPluginDescriptor *sbx_plugin_##id_##_entry (void)         \
  {                                                                                    \
    return &sbx_plugin_desc_##id_;                                                     \
  }

/* The exported entry symbol `sbx_plugin_<name>_entry` has this type. */
typedef const SbxPluginDescriptor *SbxPluginEntryFunc (void);

#ifdef __cplusplus
}
#endif

#endif /* SBX_PLUGIN_ABI_H */
