/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Test harness for the Linux backend: a fake host (SbxHostV1) that records
 * errors and report entries, a builder of SbxPolicyV1 values shaped like the
 * executor's (runtime closure, devices, workspace, roots, host, HOME,
 * TMPDIR), and helpers that compile, spawn, wait and finish through the
 * plugin's real vtable (sbx_plugin_linux_entry()).
 */
#pragma once

#include <gio/gio.h>
#include <sys/types.h>
#include "sbx-plugin-abi.h"

G_BEGIN_DECLS

/* ---- fake host ---- */

typedef struct
{
  char    *feature;
  uint32_t status;
  char    *detail;
} LinuxTestEntry;

typedef struct
{
  SbxHostV1  host;
  GPtrArray *entries;      /* LinuxTestEntry */
  int32_t    error_status;
  char      *error;        /* first set_error message of the current call */
  GMutex     lock;         /* spawns may run on several threads */
} LinuxTestHost;

/* ---- policy builder ---- */

typedef struct _LinuxTestPolicy LinuxTestPolicy;

/* A policy like the executor's for a Sandboxed profile: the runtime closure,
 * the devices, @workspace (read/write per @ws_read/@ws_write), the host "/"
 * (@host_read/@host_write), and a fresh HOME and TMPDIR under a private
 * scratch directory (removed by linux_test_policy_free()).  Network deny.
 * Access values: 0 deny, 2 allow (as SbxAccess). */
LinuxTestPolicy   *linux_test_policy_new       (const char      *workspace,
                                                int              ws_read,
                                                int              ws_write,
                                                int              host_read,
                                                int              host_write);
void               linux_test_policy_free      (LinuxTestPolicy *self);
void               linux_test_policy_add_root  (LinuxTestPolicy *self,
                                                const char      *path,
                                                int              read,
                                                int              write);
void               linux_test_policy_add_rule  (LinuxTestPolicy *self,
                                                const char      *path,
                                                uint32_t         allow,
                                                uint32_t         deny,
                                                uint32_t         flags,
                                                uint32_t         origin);
void               linux_test_policy_set_net   (LinuxTestPolicy *self,
                                                uint32_t         mode);
/* SBX_NET_MODE_PORTS with @ports (copied) and DNS. */
void               linux_test_policy_set_ports (LinuxTestPolicy *self,
                                                const uint16_t  *ports,
                                                guint            n_ports);
void               linux_test_policy_set_limits (LinuxTestPolicy *self,
                                                 guint64          max_processes,
                                                 guint64          max_memory,
                                                 guint64          max_open_files);
/* SbxPolicyV1.host_sockets (copied; NULL: none). */
void               linux_test_policy_set_host_sockets (LinuxTestPolicy    *self,
                                                       const char * const *paths);
/* SbxPolicyV1.flags (SBX_POLICY_*), 0 by default. */
void               linux_test_policy_set_flags (LinuxTestPolicy *self,
                                                uint32_t         flags);
const SbxPolicyV1 *linux_test_policy_get       (LinuxTestPolicy *self);
const char        *linux_test_policy_home      (LinuxTestPolicy *self);
const char        *linux_test_policy_tmpdir    (LinuxTestPolicy *self);
const char        *linux_test_policy_scratch   (LinuxTestPolicy *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LinuxTestPolicy, linux_test_policy_free)

/* ---- backend ---- */

typedef struct
{
  LinuxTestHost             th;
  const SbxBackendVTableV1 *vtable;
  /* Every spawn's denial sink: "op|target|mechanism|pid" of each denial,
   * under denials_lock (linux_test_backend_denials()). */
  SbxBackendDenialSinkV1    denial_sink;
  GPtrArray                *denials;
  GMutex                    denials_lock;
  void                     *plugin_ctx;
  void                     *spec;
  uint32_t                  level;
  uint64_t                  guarantees;
  char                     *name;
} LinuxTestBackend;

/* Loads the plugin descriptor, inits it, finds extension @name. */
LinuxTestBackend *linux_test_backend_new     (const char *name);
void              linux_test_backend_free    (LinuxTestBackend *self);
/* Probe: SBX_STATUS_*, *result filled. */
int32_t           linux_test_backend_probe   (LinuxTestBackend *self,
                                              SbxProbeResultV1 *result);
/* Compile (keeps the spec in @self, releasing a previous one). */
int32_t           linux_test_backend_compile (LinuxTestBackend  *self,
                                              const SbxPolicyV1 *policy);
/* The denials reported through the spawns' sink since the last call, as
 * "op|target|mechanism|pid" (op: read, write, exec, list, unix-connect);
 * the caller owns the array, the record starts empty again. */
GPtrArray        *linux_test_backend_denials (LinuxTestBackend *self);
/* The report entry @feature, or NULL. */
const LinuxTestEntry *linux_test_backend_entry (LinuxTestBackend *self,
                                                const char       *feature);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LinuxTestBackend, linux_test_backend_free)

typedef struct
{
  int32_t   spawn_status;  /* SBX_STATUS_* of spawn */
  char     *spawn_error;
  int32_t   finish_status;
  char     *finish_error;
  SbxExitV1 exit;
  char     *out;           /* stdout */
  char     *err;           /* stderr */
} LinuxTestRun;

void linux_test_run_free (LinuxTestRun *run);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (LinuxTestRun, linux_test_run_free)

/* Spawns @argv in @cwd with @envp (NULL: PATH, HOME, TMPDIR of the policy),
 * feeds @input (may be NULL) to stdin, collects stdout/stderr, waits with
 * the returned pidfd, finishes.  Asserts nothing. */
LinuxTestRun *linux_test_backend_run (LinuxTestBackend  *self,
                                      LinuxTestPolicy   *policy,
                                      const char        *cwd,
                                      const char *const *argv,
                                      const char *const *envp,
                                      const char        *input);
/* The two halves of linux_test_backend_run, for tests that act on a running
 * sandbox.  start() returns NULL when spawn failed (*run_out then holds the
 * failure); wait() pumps output, reaps, finishes and frees @proc. */
typedef struct _LinuxTestProc LinuxTestProc;

LinuxTestProc *linux_test_backend_start (LinuxTestBackend  *self,
                                         LinuxTestPolicy   *policy,
                                         const char        *cwd,
                                         const char *const *argv,
                                         const char *const *envp,
                                         int                stdin_fd,
                                         uint32_t           flags,
                                         LinuxTestRun     **run_out);
/* The same with @sink as the spawn's denial sink (NULL: none) instead of
 * the backend's record: a test that tells spawns' denials apart. */
LinuxTestProc *linux_test_backend_start_sink (LinuxTestBackend             *self,
                                              LinuxTestPolicy              *policy,
                                              const char                   *cwd,
                                              const char *const            *argv,
                                              const char *const            *envp,
                                              int                           stdin_fd,
                                              uint32_t                      flags,
                                              const SbxBackendDenialSinkV1 *sink,
                                              LinuxTestRun                **run_out);
/* SBX_SPAWN_PTY_SANDBOX: the backend opens the terminal inside; the output
 * is read from the master it hands back (which the wait closes). */
LinuxTestProc *linux_test_backend_start_sandbox_pty (LinuxTestBackend  *self,
                                                     LinuxTestPolicy   *policy,
                                                     const char        *cwd,
                                                     const char *const *argv,
                                                     guint              rows,
                                                     guint              cols,
                                                     LinuxTestRun     **run_out);
int            linux_test_proc_pty_master (LinuxTestProc *proc);
pid_t          linux_test_proc_pid      (LinuxTestProc *proc);
void          *linux_test_proc_child    (LinuxTestProc *proc);
LinuxTestRun  *linux_test_proc_wait     (LinuxTestProc *proc,
                                         const char    *input);
/* Reads stdout until it contains @text (or EOF/timeout in ms). */
gboolean       linux_test_proc_read_until (LinuxTestProc *proc,
                                           const char    *text,
                                           int            timeout_ms);

/* sh -c @script in @cwd. */
LinuxTestRun *linux_test_backend_sh  (LinuxTestBackend  *self,
                                      LinuxTestPolicy   *policy,
                                      const char        *cwd,
                                      const char        *script);

/* Runs "sh -c @script" without any sandbox (the positive control of every
 * denial test), same environment; returns the exit code (or 128+signal). */
int   linux_test_host_sh (const char *cwd,
                          const char *script,
                          char      **out);

/* TRUE when linux-userns probes OK here (else the test skips with why). */
gboolean linux_test_have_rung (const char *backend_name,
                               char      **why);

/* Scratch directories: etu_make_tmpdir() and etu_rm_rf()
 * (executor-test-util.h). */

/* etu_assert_no_children() (executor-test-util.h) asserts that no child is
 * left: a spec's zygote is a child while the spec lives, so call it after
 * the release. */

/* Runs every test case once per rung ("linux-userns", "linux-landlock"):
 * adds "/<prefix>/<rung>/<name>" with @func given the rung name. */
void linux_test_add_both (const char *name,
                          void      (*func) (gconstpointer rung));

G_END_DECLS
