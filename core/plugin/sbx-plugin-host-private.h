/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host side of every plugin call (sbx-plugin-host.c): the per-call
 * context, status codes as errors, the host table, and the crash guard
 * around a call into a plugin.
 */
#pragma once

#include <glib.h>
#include "sbx-plugin-envelope.h"
#include "sbx-compile-report.h"
#include "sbx-registry.h"         /* SbxPluginError */

G_BEGIN_DECLS

/* The per-call context handed to plugins (SbxHostCall of the ABI).  Lives on
 * the caller's stack for exactly one plugin call. */
struct SbxHostCall
{
  const char       *plugin;      /* plugin name, for messages */
  const char       *extension;   /* extension name, for messages */
  const char       *operation;   /* "probe", "compile", ... */
  SbxCompileReport *report;      /* (nullable) unfrozen builder for host->report */
  gboolean          has_error;
  int32_t           status;      /* as passed to the first set_error */
  char             *message;     /* (owned) (nullable) first message */
  guint             n_dropped;   /* report entries beyond the cap or malformed */
};

void            sbx_host_call_init    (SbxHostCall      *call,
                                       const char       *plugin,
                                       const char       *extension,
                                       const char       *operation,
                                       SbxCompileReport *report);
void            sbx_host_call_clear   (SbxHostCall      *call);
/* Turns a non-OK @status (and the call's message, if any) into exactly one
 * GError in SBX_PLUGIN_ERROR naming the plugin, extension and operation.
 * Always returns FALSE. */
gboolean        sbx_host_call_fail    (SbxHostCall      *call,
                                       int32_t           status,
                                       GError          **error);
/* Maps an SBX_STATUS_* to its SbxPluginError code (unknown -> FAILED). */
SbxPluginError  sbx_plugin_error_from_status (int32_t status);
const char     *sbx_status_to_string  (int32_t status);

/* The host features this library implements, and so advertises in
 * SbxHostV1.features (the loader refuses a plugin that requires any other).
 *   RULE_FDS: the grant consumer (sbx-executor.c) passes, for every
 *     filesystem path or tree grant, a fresh O_PATH fd opened with
 *     openat2(RESOLVE_NO_SYMLINKS) and identity-checked against the handle
 *     pinned at issue, in SbxFsRuleV1.fd of the transient policy's grant
 *     rule (tests/test-grant.c /grant/fs/binding checks the fd a backend
 *     receives; the Linux plugin binds and Landlocks on it).
 *   PROXY_LISTEN_FD: the listener a spawn returns goes, right after the
 *     spawn (sbx-process-spawn.c), to the run's egress
 *     execution (sbx-executor-egress.c: served for that execution only, or
 *     closed when the run is not authorized); tests/test-executor-egress.c
 *     reaches a loopback server through it from inside linux-userns.
 *   EGRESS_V1: executor sets with a route start it in the named egress
 *     extension, authorize each run, serve its listener and revoke it when
 *     the run ends (sbx-executor-egress.c; tests/test-executor-egress.c
 *     with plugins/egress-http and the mock egress plugin).
 * The work that implements another bit adds it here, with the test that
 * exercises it. */
#define SBX_HOST_FEATURES_IMPLEMENTED (SBX_HOST_FEATURE_RULE_FDS | SBX_HOST_FEATURE_PROXY_LISTEN_FD | \
                                       SBX_HOST_FEATURE_EGRESS_V1 | SBX_HOST_FEATURE_EGRESS_LISTENERS)

/* The host table handed to plugin init, advertising @features (normally
 * SBX_HOST_FEATURES_IMPLEMENTED); static storage, one per distinct mask. */
const SbxHostV1 *sbx_host_table (void);

/*
 * Crash guard around a plugin call.  Between enter and leave, a SIGSEGV,
 * SIGBUS, SIGILL, SIGFPE or SIGABRT raised on this thread writes
 * "sbx: plugin 'P' crashed in OPERATION (extension 'E', signal N)" to stderr
 * with write(2) and then lets the previous disposition handle the signal
 * (the process still dies, or a sanitizer reports).  See sbx-plugin-host.c.
 */
typedef struct
{
  const char *previous;      /* the enclosing guard's message on this thread */
  char        message[256];  /* preformatted: the handler only write()s it */
} SbxCrashGuard;

void sbx_crash_guard_enter (SbxCrashGuard *guard,
                            const char    *plugin,
                            const char    *operation,
                            const char    *extension);
void sbx_crash_guard_leave (SbxCrashGuard *guard);
G_END_DECLS
