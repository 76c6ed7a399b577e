/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mock-contract-breaker: backends that each break one rule of the backend
 * contract the host checks (tests only, never installed).
 *
 *   mock-claims-more-guarantees  probe: degraded, env-scrub; compile claims
 *                                write-boundary on top.
 *   mock-claims-more-level       probe: degraded, env-scrub; compile claims
 *                                level full.
 *   mock-claims-unenforced       probe: degraded, env-scrub; compile claims
 *                                env-scrub and reports it unenforced.
 *   mock-not-a-child             spawn returns the pid of a grandchild (a
 *                                double fork), which the host cannot wait for;
 *                                signal kills it, finish frees the handle.
 *   mock-ignores-flags           spawn forks a direct child (sleep) and acts
 *                                on no spawn flag, as a backend built before
 *                                SBX_SPAWN_IGNORED_SIGNALS would: it never
 *                                confirms the flag in honoured_flags.
 *
 * sbx_mock_contract_breaker_count ("release" | "signal" | "finish") is
 * exported so a test can check the host released and finished what it
 * refused.
 */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../mock-common.h"

SBX_PLUGIN_EXPORT unsigned sbx_mock_contract_breaker_count (const char *what);

static unsigned n_release, n_signal, n_finish;

unsigned
sbx_mock_contract_breaker_count (const char *what)
{
  if (strcmp (what, "release") == 0)
    return __atomic_load_n (&n_release, __ATOMIC_SEQ_CST);
  if (strcmp (what, "signal") == 0)
    return __atomic_load_n (&n_signal, __ATOMIC_SEQ_CST);
  if (strcmp (what, "finish") == 0)
    return __atomic_load_n (&n_finish, __ATOMIC_SEQ_CST);
  return (unsigned) -1;
}

static int32_t
probe_env_scrub (void             *plugin_ctx,
                 SbxHostCall      *call,
                 SbxProbeResultV1 *result)
{
  result->level = SBX_ABI_LEVEL_DEGRADED;
  result->guarantees = SBX_ABI_GUARANTEE_ENV_SCRUB;
  result->flags = 0;
  return SBX_STATUS_OK;
}

static int32_t
compile_claiming (SbxHostCall        *call,
                  void              **spec_out,
                  SbxCompileResultV1 *result,
                  uint32_t            level,
                  uint64_t            guarantees)
{
  int *spec = malloc (sizeof *spec);

  if (spec == NULL)
    return SBX_STATUS_NO_MEMORY;
  *spec = 1;
  result->level = level;
  result->guarantees = guarantees;
  *spec_out = spec;
  return SBX_STATUS_OK;
}

static int32_t
compile_more_guarantees (void               *plugin_ctx,
                         SbxHostCall        *call,
                         const SbxPolicyV1  *policy,
                         void              **spec_out,
                         SbxCompileResultV1 *result)
{
  return compile_claiming (call, spec_out, result, SBX_ABI_LEVEL_DEGRADED,
                           SBX_ABI_GUARANTEE_ENV_SCRUB | SBX_ABI_GUARANTEE_WRITE_BOUNDARY);
}

static int32_t
compile_more_level (void               *plugin_ctx,
                    SbxHostCall        *call,
                    const SbxPolicyV1  *policy,
                    void              **spec_out,
                    SbxCompileResultV1 *result)
{
  return compile_claiming (call, spec_out, result, SBX_ABI_LEVEL_FULL, SBX_ABI_GUARANTEE_ENV_SCRUB);
}

static int32_t
compile_contradicting (void               *plugin_ctx,
                       SbxHostCall        *call,
                       const SbxPolicyV1  *policy,
                       void              **spec_out,
                       SbxCompileResultV1 *result)
{
  MockCtx *ctx = plugin_ctx;

  ctx->host->report (call, SBX_ABI_FEATURE_ENV_SCRUB, SBX_ABI_REPORT_UNENFORCED,
                     "mock: the environment is passed through");
  return compile_claiming (call, spec_out, result, SBX_ABI_LEVEL_DEGRADED, SBX_ABI_GUARANTEE_ENV_SCRUB);
}

static int32_t
compile_honest (void               *plugin_ctx,
                SbxHostCall        *call,
                const SbxPolicyV1  *policy,
                void              **spec_out,
                SbxCompileResultV1 *result)
{
  return compile_claiming (call, spec_out, result, SBX_ABI_LEVEL_DEGRADED, SBX_ABI_GUARANTEE_ENV_SCRUB);
}

static void
release_counted (void *plugin_ctx,
                 void *spec)
{
  __atomic_add_fetch (&n_release, 1, __ATOMIC_SEQ_CST);
  free (spec);
}

typedef struct
{
  pid_t grandchild;
} BreakerChild;

/* Double fork: the middle process forks the target (sleep), reports its pid
 * and exits, so the target is re-parented away from the host. */
static int32_t
spawn_grandchild (void                    *plugin_ctx,
                  SbxHostCall             *call,
                  void                    *spec,
                  const SbxSpawnRequestV1 *request,
                  SbxSpawnResultV1        *result)
{
  MockCtx      *ctx = plugin_ctx;
  BreakerChild *child;
  int           fds[2];
  pid_t         middle;
  pid_t         target = -1;
  ssize_t       got;

  if (pipe (fds) < 0)
    {
      ctx->host->set_error (call, SBX_STATUS_FAILED, "mock-not-a-child: pipe failed");
      return SBX_STATUS_FAILED;
    }
  middle = fork ();
  if (middle < 0)
    {
      close (fds[0]);
      close (fds[1]);
      ctx->host->set_error (call, SBX_STATUS_FAILED, "mock-not-a-child: fork failed");
      return SBX_STATUS_FAILED;
    }
  if (middle == 0)
    {
      pid_t pid = fork ();

      if (pid == 0)
        {
          char *const argv[] = { (char *) "sleep", (char *) "30", NULL };

          close (fds[0]);
          close (fds[1]);
          execv ("/bin/sleep", argv);
          _exit (127);
        }
      if (write (fds[1], &pid, sizeof pid) != (ssize_t) sizeof pid)
        _exit (1);
      _exit (0);
    }
  close (fds[1]);
  do
    got = read (fds[0], &target, sizeof target);
  while (got < 0 && errno == EINTR);
  close (fds[0]);
  while (waitpid (middle, NULL, 0) < 0 && errno == EINTR)
    ;
  if (got != (ssize_t) sizeof target || target <= 0)
    {
      ctx->host->set_error (call, SBX_STATUS_FAILED, "mock-not-a-child: no grandchild");
      return SBX_STATUS_FAILED;
    }
  child = calloc (1, sizeof *child);
  if (child == NULL)
    {
      kill (target, SIGKILL);
      return SBX_STATUS_NO_MEMORY;
    }
  child->grandchild = target;
  result->pid = target;
  result->pidfd = -1;
  result->proxy_listen_fd = -1;
  result->containment = SBX_CONTAINMENT_BEST_EFFORT;
  result->child = child;
  return SBX_STATUS_OK;
}

static int32_t
signal_grandchild (void   *plugin_ctx,
                   void   *child_ptr,
                   int32_t signo)
{
  BreakerChild *child = child_ptr;

  __atomic_add_fetch (&n_signal, 1, __ATOMIC_SEQ_CST);
  if (kill (child->grandchild, signo) < 0 && errno != ESRCH)
    return SBX_STATUS_FAILED;
  return SBX_STATUS_OK;
}

static int32_t
finish_grandchild (void        *plugin_ctx,
                   SbxHostCall *call,
                   void        *child_ptr,
                   int32_t      wait_status,
                   SbxExitV1   *out)
{
  __atomic_add_fetch (&n_finish, 1, __ATOMIC_SEQ_CST);
  free (child_ptr);
  out->kind = SBX_EXIT_SIGNALED;
  out->code = 0;
  out->signo = SIGKILL;
  return SBX_STATUS_OK;
}

/* A direct child running sleep; every spawn flag is left unread. */
static int32_t
spawn_ignoring_flags (void                    *plugin_ctx,
                      SbxHostCall             *call,
                      void                    *spec,
                      const SbxSpawnRequestV1 *request,
                      SbxSpawnResultV1        *result)
{
  MockCtx      *ctx = plugin_ctx;
  BreakerChild *child = calloc (1, sizeof *child);
  pid_t         pid;

  if (child == NULL)
    return SBX_STATUS_NO_MEMORY;
  pid = fork ();
  if (pid < 0)
    {
      free (child);
      ctx->host->set_error (call, SBX_STATUS_FAILED, "mock-ignores-flags: fork failed");
      return SBX_STATUS_FAILED;
    }
  if (pid == 0)
    {
      char *const argv[] = { (char *) "sleep", (char *) "30", NULL };

      execv ("/bin/sleep", argv);
      _exit (127);
    }
  child->grandchild = pid;
  result->pid = pid;
  result->pidfd = -1;
  result->proxy_listen_fd = -1;
  result->containment = SBX_CONTAINMENT_BEST_EFFORT;
  result->child = child;
  return SBX_STATUS_OK;
}

static const SbxBackendVTableV1 more_guarantees_vtable = {
  .struct_size = sizeof (SbxBackendVTableV1),
  .probe = probe_env_scrub,
  .compile = compile_more_guarantees,
  .spawn = mock_spawn_unsupported,
  .signal = mock_signal_unsupported,
  .finish = mock_finish_unsupported,
  .release = release_counted,
};

static const SbxBackendVTableV1 more_level_vtable = {
  .struct_size = sizeof (SbxBackendVTableV1),
  .probe = probe_env_scrub,
  .compile = compile_more_level,
  .spawn = mock_spawn_unsupported,
  .signal = mock_signal_unsupported,
  .finish = mock_finish_unsupported,
  .release = release_counted,
};

static const SbxBackendVTableV1 contradicting_vtable = {
  .struct_size = sizeof (SbxBackendVTableV1),
  .probe = probe_env_scrub,
  .compile = compile_contradicting,
  .spawn = mock_spawn_unsupported,
  .signal = mock_signal_unsupported,
  .finish = mock_finish_unsupported,
  .release = release_counted,
};

static const SbxBackendVTableV1 not_a_child_vtable = {
  .struct_size = sizeof (SbxBackendVTableV1),
  .probe = probe_env_scrub,
  .compile = compile_honest,
  .spawn = spawn_grandchild,
  .signal = signal_grandchild,
  .finish = finish_grandchild,
  .release = release_counted,
};

static const SbxBackendVTableV1 ignores_flags_vtable = {
  .struct_size = sizeof (SbxBackendVTableV1),
  .probe = probe_env_scrub,
  .compile = compile_honest,
  .spawn = spawn_ignoring_flags,
  .signal = signal_grandchild,
  .finish = finish_grandchild,
  .release = release_counted,
};

static const SbxPluginExtension breaker_extensions[] = {
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_BACKEND, .name = "mock-claims-more-guarantees", .priority = 30, .vtable = &more_guarantees_vtable },
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_BACKEND, .name = "mock-claims-more-level", .priority = 20, .vtable = &more_level_vtable },
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_BACKEND, .name = "mock-not-a-child", .priority = 10, .vtable = &not_a_child_vtable },
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_BACKEND, .name = "mock-claims-unenforced", .priority = 5, .vtable = &contradicting_vtable },
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_BACKEND, .name = "mock-ignores-flags", .priority = 4, .vtable = &ignores_flags_vtable },
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_END },
};

SBX_PLUGIN_DEFINE (mock_contract_breaker, "0.1.0", "LGPL-2.1-or-later", SBX_HOST_FEATURES_NONE, mock_init, mock_fini, breaker_extensions)
