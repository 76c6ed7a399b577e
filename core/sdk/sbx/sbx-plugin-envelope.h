/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx-plugin-envelope.h — what every plugin of the plain-C ABI between
 * libsbx-1 (the "host") and its plugins shares, whatever its kinds of
 * extension: versions and host features, status codes, the shared
 * vocabularies, the host table, the descriptor and SBX_PLUGIN_DEFINE.  The
 * kinds have a header each (sbx-plugin-backend.h, sbx-plugin-egress.h,
 * sbx-plugin-reporter.h); <sbx/sbx-plugin-abi.h> includes them all.
 *
 * Rules:
 *  - The ABI's headers include only <stddef.h> and <stdint.h>: a plugin can
 *    be built without GLib (the win32 backend is built with mingw-w64).
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
 */
#ifndef SBX_PLUGIN_ENVELOPE_H
#define SBX_PLUGIN_ENVELOPE_H

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

#endif /* SBX_PLUGIN_ENVELOPE_H */
