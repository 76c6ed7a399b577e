/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Admission: every check and reservation before a spawn, in one function
 * shared by runs (sbx-executor-run.c) and processes (sbx-process.c), so
 * that both refuse exactly the same things in exactly the same order:
 *
 *   1. the argument vector, the timeout, the working directory (canonical,
 *      with valid execution ID and command text, for a grant transaction);
 *   2. the cancellable;
 *   3. the set's lifecycle barrier (CLOSED once the set is closing);
 *   4. the grant transaction (verify, compile the transient spec, consume)
 *      or, without grants, the command gate;
 *   5. a last look at close, cancel and the deadline, then the spawn event.
 *
 * A successful admission holds the set's barrier until it is cleared: the
 * caller spawns, supervises and clears it once the backend's finish() ran.
 */
#include "sbx-executor-impl-private.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx-executor-error-private.h"
#include "sbx-path-private.h"
#include "sbx-denial-private.h"
#include "sbx-backend-denials-private.h"
#include "sbx-executor-ask-private.h"
#include "sbx-grant-private.h"
#include "sbx-compile-report-private.h"
#include "sbx-executor-shared-private.h"
#include "sbx-run-options-private.h"

/* ------------------------------------------------------------------------- */
/* Start requests                                                             */
/* ------------------------------------------------------------------------- */

SbxStartRequest *
sbx_start_request_new (const char          *cwd,
                       const char *const   *argv,
                       const SbxRunOptions *options)
{
  SbxStartRequest *rr = g_new0 (SbxStartRequest, 1);

  rr->cwd = g_strdup (cwd);
  rr->argv = g_strdupv ((char **) argv);
  rr->fds[0] = rr->fds[1] = rr->fds[2] = -1;
  rr->grace = SBX_RUN_OPTIONS_DEFAULT_TERMINATE_GRACE;
  rr->pty_fds[0] = rr->pty_fds[1] = -1;
  if (options == NULL)
    return rr;

  if (sbx_ask_settings_get_ask (sbx_run_options_peek_ask (options)))
    {
      rr->ask = sbx_ask_settings_ref (sbx_run_options_peek_ask (options));
      rr->ask_context = g_main_context_ref_thread_default ();
    }
  rr->timeout = sbx_run_options_get_timeout (options);
  rr->max_output = sbx_run_options_get_max_output (options);
  rr->fds[0] = sbx_run_options_get_stdin_fd (options);
  rr->fds[1] = sbx_run_options_get_stdout_fd (options);
  rr->fds[2] = sbx_run_options_get_stderr_fd (options);
  rr->modes[0] = sbx_run_options_get_stdin (options);
  rr->modes[1] = sbx_run_options_get_stdout (options);
  rr->modes[2] = sbx_run_options_get_stderr (options);
  rr->pty = sbx_run_options_get_pty (options, &rr->rows, &rr->cols);
  rr->grace = sbx_run_options_get_terminate_grace (options);
  rr->staged = sbx_run_options_get_staged (options);
  {
    gsize n_ignored = 0;
    g_autofree int *ignored = sbx_run_options_get_ignored_signals (options, &n_ignored);

    for (gsize i = 0; i < n_ignored; i++)
      rr->ignored_signals |= G_GUINT64_CONSTANT (1) << (ignored[i] - 1);
  }
  if (rr->pty)
    rr->pty_fds[0] = sbx_run_options_get_pty_resize_fd (options, &rr->pty_fds[1]);
  if (sbx_run_options_get_deadline (options) != NULL)
    rr->deadline_real_us = g_date_time_to_unix (sbx_run_options_get_deadline (options))
                           * G_USEC_PER_SEC
                           + g_date_time_get_microsecond (sbx_run_options_get_deadline (options));
  if (sbx_run_options_get_grants (options) != NULL
      || sbx_run_options_get_execution_id (options) != NULL)
    {
      rr->with_grants = TRUE;
      rr->execution_id = g_strdup (sbx_run_options_get_execution_id (options));
      rr->grants = g_strdupv ((char **) sbx_run_options_get_grants (options));
      /* A NULL command (empty or non-UTF-8 argv) is refused by admission:
       * EMPTY_ARGV first, then MALFORMED. */
      rr->command = sbx_grant_command_for_argv (argv);
    }
  return rr;
}

/* Every caller descriptor of a start: stdin, stdout, stderr, then the PTY
 * resize hook's two. */
static int *
start_request_fd (SbxStartRequest *rr,
                  int              i)
{
  return i < 3 ? &rr->fds[i] : &rr->pty_fds[i - 3];
}

#define N_START_FDS 5

void
sbx_start_request_close_fds (SbxStartRequest *rr)
{
  if (!rr->owns_fds)
    return;
  for (int i = 0; i < N_START_FDS; i++)
    if (*start_request_fd (rr, i) >= 0)
      {
        close (*start_request_fd (rr, i));
        *start_request_fd (rr, i) = -1;
      }
}

void
sbx_start_request_free (SbxStartRequest *rr)
{
  if (rr == NULL)
    return;
  sbx_start_request_close_fds (rr);
  g_free (rr->cwd);
  g_strfreev (rr->argv);
  g_free (rr->execution_id);
  g_free (rr->command);
  for (guint i = 0; rr->grants != NULL && rr->grants[i] != NULL; i++)
    explicit_bzero (rr->grants[i], strlen (rr->grants[i]));
  g_strfreev (rr->grants);
  g_clear_pointer (&rr->ask, sbx_ask_settings_unref);
  g_clear_pointer (&rr->ask_context, g_main_context_unref);
  g_free (rr);
}

gboolean
sbx_start_request_own_fds (SbxStartRequest  *rr,
                           GError          **error)
{
  static const char *const names[N_START_FDS] = {
    "stdin", "stdout", "stderr", "PTY resize", "PTY size"
  };

  for (int i = 0; i < N_START_FDS; i++)
    {
      int *fdp = start_request_fd (rr, i);
      int fd;

      if (*fdp < 0)
        continue;
      fd = fcntl (*fdp, F_DUPFD_CLOEXEC, 3);
      if (fd < 0)
        {
          int errsv = errno;
          int bad = *fdp;

          /* Ours so far are closed, the caller's left alone. */
          for (int k = i; k < N_START_FDS; k++)
            *start_request_fd (rr, k) = -1;
          rr->owns_fds = TRUE;
          sbx_start_request_close_fds (rr);
          return sbx_executor_fail (error, SBX_EXECUTOR_ERROR_INVALID_ARGUMENT,
                                    "Cannot duplicate the run's %s file descriptor %d: %s",
                                    names[i], bad, g_strerror (errsv));
        }
      *fdp = fd;
    }
  rr->owns_fds = TRUE;
  return TRUE;
}

/* ------------------------------------------------------------------------- */
/* Events                                                                     */
/* ------------------------------------------------------------------------- */

typedef struct
{
  const SbxStartRequest *rr;
  const SbxAdmission    *admission;
  guint64                run_id;
} SpawnEvent;

static void
add_spawn_members (JsonBuilder *builder,
                   gpointer     data)
{
  const SpawnEvent *ev = data;

  json_builder_set_member_name (builder, "run");
  json_builder_add_int_value (builder, (gint64) ev->run_id);
  json_builder_set_member_name (builder, "argv");
  json_builder_begin_array (builder);
  for (guint i = 0; ev->rr->argv[i] != NULL; i++)
    sbx_executor_add_string (builder, ev->rr->argv[i]);
  json_builder_end_array (builder);
  json_builder_set_member_name (builder, "cwd");
  sbx_executor_add_string (builder, ev->rr->cwd);
  /* What held for this spawn, after its grants (the executor-created
   * event carries what a run without grants gets). */
  json_builder_set_member_name (builder, "level");
  json_builder_add_string_value (builder, sbx_level_to_string (ev->admission->level));
  json_builder_set_member_name (builder, "guarantees");
  json_builder_begin_array (builder);
  {
    g_auto(GStrv) names = sbx_guarantees_to_strv (ev->admission->guarantees);

    for (guint i = 0; names[i] != NULL; i++)
      json_builder_add_string_value (builder, names[i]);
  }
  json_builder_end_array (builder);
}

typedef struct
{
  guint64                   run_id;
  const SbxSuperviseResult *result;
  const GError             *error;     /* NULL when the command ran to its end */
  gboolean                  spawned;
} ExitEvent;

static void
add_exit_members (JsonBuilder *builder,
                  gpointer     data)
{
  const ExitEvent *ev = data;
  const char *outcome = "exited";

  json_builder_set_member_name (builder, "run");
  json_builder_add_int_value (builder, (gint64) ev->run_id);

  if (!ev->spawned)
    outcome = "spawn-failed";
  else
    switch (ev->result->outcome)
      {
      case SBX_SUPERVISE_TIMED_OUT: outcome = "timed-out"; break;
      case SBX_SUPERVISE_CANCELLED: outcome = "cancelled"; break;
      case SBX_SUPERVISE_CLOSED:    outcome = "closed"; break;
      case SBX_SUPERVISE_EXITED:
      default:
        outcome = ev->result->truncated ? "output-limit" : "exited";
        break;
      }
  json_builder_set_member_name (builder, "outcome");
  json_builder_add_string_value (builder, outcome);

  if (ev->spawned)
    {
      if (ev->result->exit.kind == SBX_EXIT_SIGNALED)
        {
          json_builder_set_member_name (builder, "signal");
          json_builder_add_int_value (builder, ev->result->exit.signo);
        }
      else
        {
          json_builder_set_member_name (builder, "exit_code");
          json_builder_add_int_value (builder, ev->result->exit.code);
        }
      json_builder_set_member_name (builder, "truncated");
      json_builder_add_boolean_value (builder, ev->result->truncated);
      json_builder_set_member_name (builder, "duration_ms");
      json_builder_add_double_value (builder, ev->result->duration_us / 1000.0);
    }
  if (ev->error != NULL)
    {
      json_builder_set_member_name (builder, "error");
      sbx_executor_add_string (builder, ev->error->message);
    }
}

void
sbx_executor_emit_exit (SbxExecutor              *self,
                        const SbxAdmission       *admission,
                        const SbxSuperviseResult *result,
                        const GError             *error,
                        gboolean                  spawned)
{
  ExitEvent ev = { admission->run_id, result, error, spawned };

  g_return_if_fail (admission->guard != NULL);
  sbx_executor_shared_emit (self->shared, SBX_EVENT_EXIT, self->key, add_exit_members, &ev);
}

void
sbx_executor_map_spawn_error (GError     **error,
                              GError      *spawn_error_in,
                              const char  *argv0)
{
  g_autoptr(GError) spawn_error = spawn_error_in;
  int code = SBX_EXECUTOR_ERROR_SPAWN_FAILED;

  if (spawn_error->domain == SBX_PLUGIN_ERROR)
    {
      if (spawn_error->code == SBX_PLUGIN_ERROR_EXEC_NOT_FOUND)
        code = SBX_EXECUTOR_ERROR_NOT_FOUND;
      else if (spawn_error->code == SBX_PLUGIN_ERROR_EXEC_DENIED)
        code = SBX_EXECUTOR_ERROR_NOT_EXECUTABLE;
    }
  g_set_error (error, SBX_EXECUTOR_ERROR, code, "Cannot run “%s”: %s", argv0,
               spawn_error->message);
}

/* ------------------------------------------------------------------------- */
/* Admission                                                                  */
/* ------------------------------------------------------------------------- */

static gboolean
check_cwd (const char  *cwd,
           GError     **error)
{
  struct stat st;

  if (cwd == NULL || cwd[0] != '/')
    return sbx_executor_fail (error, SBX_EXECUTOR_ERROR_INVALID_CWD,
                              "The working directory “%s” is not an absolute path",
                              cwd != NULL ? cwd : "(null)");
  if (stat (cwd, &st) < 0)
    {
      int errsv = errno;

      return sbx_executor_fail (error, SBX_EXECUTOR_ERROR_INVALID_CWD,
                                "The working directory “%s” is unusable: %s", cwd,
                                g_strerror (errsv));
    }
  if (!S_ISDIR (st.st_mode))
    return sbx_executor_fail (error, SBX_EXECUTOR_ERROR_INVALID_CWD,
                              "The working directory “%s” is not a directory", cwd);
  return TRUE;
}

void
sbx_admission_clear (SbxAdmission *admission)
{
  g_clear_pointer (&admission->spec, sbx_backend_spec_unref);
  g_clear_pointer (&admission->cwd, g_free);
  g_clear_pointer (&admission->spent, g_ptr_array_unref);
  /* The backend made its last call into the sink when finish() returned,
   * which came before this (or the spawn failed: none was made). */
  g_clear_pointer (&admission->backend_denials, sbx_backend_denials_free);
  sbx_egress_run_clear (&admission->egress);
  g_clear_pointer (&admission->write_paths, g_ptr_array_unref);
  g_clear_pointer (&admission->write_trees, g_ptr_array_unref);
  g_clear_pointer (&admission->report, sbx_compile_report_unref);
  g_clear_pointer (&admission->guard, sbx_shared_guard_release);
}

/* The grant transaction of one start (upstream §5.6): verify under the
 * executor's lock (reserving the IDs), compile the transient spec outside
 * it, then consume.  Replaces *spec with the transient one when the batch
 * changes the policy. */
static gboolean
admit_grants (SbxExecutor            *self,
              const SbxStartRequest  *rr,
              const char             *cwd,
              SbxBackendSpec        **spec,
              GPtrArray             **out_spent,
              GPtrArray             **out_proxy_targets,
              SbxAdmission           *out,
              GError                **error)
{
  g_auto(GrantBatch) batch = { 0 };
  gboolean ok;

  batch.ids = g_ptr_array_new_with_free_func (g_free);
  batch.expiries = g_array_new (FALSE, FALSE, sizeof (gint64));
  batch.fs = g_ptr_array_new_with_free_func (sbx_executor_fs_delta_free);
  batch.ports = g_array_new (FALSE, FALSE, sizeof (guint16));
  batch.unix_sockets = g_ptr_array_new_with_free_func (g_free);
  batch.spent = g_ptr_array_new_with_free_func (g_free);
  batch.proxy_targets = g_ptr_array_new_with_free_func (g_free);

  g_mutex_lock (&self->mutex);
  ok = sbx_executor_verify_batch_locked (self, rr->execution_id, rr->command, cwd,
                                         (const char *const *) rr->grants, &batch, error);
  g_mutex_unlock (&self->mutex);
  if (!ok)
    return FALSE;

  out->write_paths = g_ptr_array_new_with_free_func (g_free);
  out->write_trees = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < batch.fs->len; i++)
    {
      const FsDelta *d = g_ptr_array_index (batch.fs, i);

      if ((d->info->fs_allow & SBX_FS_WRITE) == 0)
        continue;
      if (d->info->shape == SBX_GRANT_SHAPE_FS_HOST)
        out->host_write = TRUE;
      else if (d->info->shape == SBX_GRANT_SHAPE_FS_EXACT)
        g_ptr_array_add (out->write_paths, g_strdup (d->target));
      else
        g_ptr_array_add (out->write_trees, g_strdup (d->target));
    }

  /* Only a batch that changes the policy gets a transient spec: a
   * command.start.v1 grant alone authorizes the start and runs on the
   * executor's own spec (same policy, same guarantees). */
  if (batch.fs->len > 0 || batch.ports->len > 0 || batch.unix_sockets->len > 0)
    {
      SbxBackendSpec *transient = sbx_executor_compile_transient (self, &batch, &out->report,
                                                                  &out->level, &out->guarantees,
                                                                  error);

      /* The fresh handles were for the compile only. */
      for (guint i = 0; i < batch.fs->len; i++)
        {
          FsDelta *d = g_ptr_array_index (batch.fs, i);

          if (d->fd >= 0)
            {
              close (d->fd);
              d->fd = -1;
            }
        }
      if (transient == NULL)
        {
          g_mutex_lock (&self->mutex);
          sbx_executor_unreserve_batch_locked (self, &batch);
          g_mutex_unlock (&self->mutex);
          return FALSE;
        }
      g_clear_pointer (spec, sbx_backend_spec_unref);
      *spec = transient;
    }
  g_mutex_lock (&self->mutex);
  sbx_executor_commit_batch_locked (self, &batch);
  g_mutex_unlock (&self->mutex);
  for (guint i = 0; i < batch.spent->len; i++)
    {
      GrantSpentEvent ev = { rr->execution_id, g_ptr_array_index (batch.spent, i) };

      sbx_executor_shared_emit (self->shared, SBX_EVENT_GRANT_SPENT, self->key,
                                sbx_executor_add_grant_spent_members, &ev);
    }
  g_ptr_array_add (batch.spent, NULL);
  *out_spent = g_steal_pointer (&batch.spent);
  g_ptr_array_add (batch.proxy_targets, NULL);
  *out_proxy_targets = g_steal_pointer (&batch.proxy_targets);
  return TRUE;
}

/* The monotonic deadline of a start: the earlier of now + timeout and the
 * wall-clock deadline; 0 for none. */
static gint64
start_deadline (const SbxStartRequest *rr)
{
  gint64 now = g_get_monotonic_time ();
  gint64 deadline = rr->timeout > 0 ? now + rr->timeout : 0;

  if (rr->deadline_real_us != 0)
    {
      gint64 from_wall = now + (rr->deadline_real_us - g_get_real_time ());

      if (from_wall <= 0)
        from_wall = 1;
      if (deadline == 0 || from_wall < deadline)
        deadline = from_wall;
    }
  return deadline;
}

/* A start the command gate refused (@error: REQUIRED when the profile
 * gates command execution, DENIED when it denies it) is a command-start
 * denial for the set's reporters, naming the command.start.v1 grant that
 * would open it (its target: exactly this command) or why none can. */
static void
report_command_denial (SbxExecutor           *self,
                       const SbxStartRequest *rr,
                       const GError          *error)
{
  SbxProfile *profile = sbx_executor_shared_get_profile (self->shared);
  g_autofree char *command = NULL;
  g_autoptr(SbxDenial) denial = NULL;

  if (error == NULL || error->domain != SBX_GRANT_ERROR)
    return;
  if (error->code == SBX_GRANT_ERROR_REQUIRED
      && sbx_profile_get_command (profile) == SBX_ACCESS_GATED)
    {
      command = sbx_grant_command_for_argv ((const char *const *) rr->argv);
      if (command == NULL)
        return;
      denial = sbx_denial_new (SBX_DENIAL_OPERATION_COMMAND_START, rr->argv[0], "command-gate",
                               SBX_GRANT_CLASS_COMMAND_START, command, "command execution is gated");
    }
  else if (error->code == SBX_GRANT_ERROR_DENIED
           && sbx_profile_get_command (profile) == SBX_ACCESS_DENY)
    denial = sbx_denial_new (SBX_DENIAL_OPERATION_COMMAND_START, rr->argv[0], "command-gate", NULL, NULL,
                             "the profile denies command execution");
  else
    return;
  sbx_denial_set_process (denial, 0, NULL, (const char *const *) rr->argv);
  sbx_executor_shared_emit_denial (self->shared, self->key, 0, denial);
}

/* A run starting with @ask: when it asks about gated host sockets (the
 * connect supervisor holds their connects), *@report and *@guarantees (the
 * run's, before the spawn event) lose every boundary an approved host
 * socket defeats (SBX_GRANT_UNIX_CONNECT_TAKES, as a spent unix.connect.v1
 * grant takes them: its report is written before anyone answers), each
 * said UNENFORCED with why, and TRUE.  FALSE (unchanged): it does not ask
 * about them. */
static gboolean
ask_host_sockets (SbxExecutorShared *shared,
                  SbxAskSettings    *ask,
                  SbxCompileReport **report,
                  SbxGuarantees     *guarantees)
{
  SbxProfile *profile = sbx_executor_shared_get_profile (shared);
  SbxGuarantees required = sbx_compile_report_get_required (*report);
  SbxGuarantees taken = *guarantees & SBX_GRANT_UNIX_CONNECT_TAKES;
  const char *const *gated = sbx_profile_get_gated_host_sockets (profile);
  g_autofree char *sockets = NULL;
  SbxCompileReport *fresh;

  /* Required boundaries included: as with a spent unix.connect.v1 grant,
   * the caller chose this for the run (it asks, the profile gates the
   * socket), and the executor's own report still claims them. */
  if (!sbx_ask_gates_host_sockets (ask, profile))
    return FALSE;
  if (taken == 0)
    return TRUE;
  sockets = g_strjoinv (", ", (char **) gated);
  fresh = sbx_executor_report_new (shared, required);
  for (guint i = 0; i < sbx_compile_report_get_n_entries (*report); i++)
    {
      const char *feature = sbx_compile_report_get_entry_feature (*report, i);
      SbxGuarantees bit = 0;

      if (sbx_guarantee_from_string (feature, &bit) && (bit & taken) != 0)
        continue;
      sbx_compile_report_add_entry (fresh, feature, sbx_compile_report_get_entry_status (*report, i),
                                    sbx_compile_report_get_entry_detail (*report, i));
    }
  for (SbxGuarantees bit = 1; bit <= SBX_GUARANTEES_ALL; bit <<= 1)
    if ((taken & bit) != 0)
      {
        g_autofree char *detail = g_strdup_printf ("not claimed for this run: it asks while running, and "
                                                   "approving a gated host socket (unix.connect.v1 %s) "
                                                   "hands it a host daemon outside every mechanism",
                                                   sockets);

        sbx_compile_report_add_entry (fresh, sbx_guarantee_to_string (bit), SBX_REPORT_STATUS_UNENFORCED, detail);
      }
  sbx_compile_report_set_level (fresh, sbx_compile_report_get_level (*report));
  sbx_compile_report_set_guarantees (fresh, *guarantees & ~taken);
  sbx_compile_report_set_scope (fresh, SBX_REPORT_SCOPE_RUN);
  sbx_compile_report_freeze (fresh);
  sbx_compile_report_unref (*report);
  *report = fresh;
  *guarantees &= ~taken;
  return TRUE;
}

gboolean
sbx_executor_admit (SbxExecutor            *self,
                    const SbxStartRequest  *rr,
                    GCancellable           *cancellable,
                    SbxAdmission           *out,
                    GError                **error)
{
  SbxExecutorShared *shared = self->shared;
  g_autoptr(GError) local_error = NULL;
  g_autoptr(SbxBackendSpec) spec = NULL;
  g_autoptr(GPtrArray) spent = NULL;
  g_autoptr(GPtrArray) proxy_targets = NULL;
  g_autofree char *cwd = NULL;
  SpawnEvent spawn_event;
  gboolean closing;
  guint64 run_id;

  memset (out, 0, sizeof *out);

  /* 1. Arguments. */
  if (rr->argv == NULL || rr->argv[0] == NULL || rr->argv[0][0] == '\0')
    return sbx_executor_fail (error, SBX_EXECUTOR_ERROR_EMPTY_ARGV, "The command is empty");
  if (rr->timeout < 0)
    return sbx_executor_fail (error, SBX_EXECUTOR_ERROR_INVALID_ARGUMENT,
                              "The timeout %" G_GINT64_FORMAT " µs is negative", rr->timeout);
  if (rr->with_grants)
    {
      /* Upstream §5.6 step 2: the working directory is canonicalised (and
       * the child runs there); text must be valid. */
      cwd = sbx_path_canonical_root (rr->cwd, &local_error);
      if (cwd == NULL)
        return sbx_executor_grant_fail (error, SBX_GRANT_ERROR_MALFORMED,
                                        "Grant malformed: cwd “%s”: %s",
                                        rr->cwd != NULL ? rr->cwd : "(null)",
                                        local_error->message);
      if (!sbx_grant_text_valid (rr->execution_id))
        return sbx_executor_grant_fail (error, SBX_GRANT_ERROR_MALFORMED,
                                        "Grant malformed: the execution ID must be valid text");
      if (!sbx_grant_text_valid (rr->command))
        return sbx_executor_grant_fail (error, SBX_GRANT_ERROR_MALFORMED,
                                        "Grant malformed: the command must be valid text");
    }
  else
    {
      if (!check_cwd (rr->cwd, error))
        return FALSE;
      cwd = g_strdup (rr->cwd);
    }

  /* 2. */
  if (g_cancellable_is_cancelled (cancellable))
    return sbx_executor_fail (error, SBX_EXECUTOR_ERROR_CANCELLED,
                              "The run was cancelled before it started; nothing was spawned");

  /* 3. The barrier: from here on, a failure leaves it. */
  out->guard = sbx_executor_shared_admit (shared);
  if (out->guard == NULL)
    return sbx_executor_fail (error, SBX_EXECUTOR_ERROR_CLOSED, "The executor set is closed");

  g_mutex_lock (&self->mutex);
  if (!self->closed && self->spec != NULL)
    spec = sbx_backend_spec_ref (self->spec);
  g_mutex_unlock (&self->mutex);
  if (spec == NULL)
    {
      sbx_admission_clear (out);
      return sbx_executor_fail (error, SBX_EXECUTOR_ERROR_CLOSED, "The executor is closed");
    }

  /* 4. */
  if (rr->with_grants)
    {
      if (!admit_grants (self, rr, cwd, &spec, &spent, &proxy_targets, out, &local_error))
        {
          report_command_denial (self, rr, local_error);
          sbx_admission_clear (out);
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
    }
  else if (!sbx_executor_check_command_gate (self, &local_error))
    {
      report_command_denial (self, rr, local_error);
      sbx_admission_clear (out);
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }

  /* Egress: authorize this start on the set's route (its grants' targets,
   * or every target for a Network=Allow profile). */
  if (!sbx_egress_run_begin (&out->egress, self->egress, sbx_executor_shared_get_profile (shared),
                             rr->execution_id,
                             proxy_targets != NULL ? (const char *const *) proxy_targets->pdata : NULL,
                             (const char *const *) self->environment, rr->ask, rr->ask_context,
                             error))
    {
      sbx_admission_clear (out);
      return FALSE;
    }

  /* The backend's refusals join the run's denial log (the egress
   * plugin's, or one of the run's own). */
  if (out->egress.denials == NULL)
    out->egress.denials = sbx_denial_log_new ();
  out->backend_denials = sbx_backend_denials_new (out->egress.denials, sbx_executor_shared_get_profile (shared));

  /* 5. Last look before anything is spawned: a close or a cancel that came
   * while the start was being admitted means nothing runs at all. */
  closing = !sbx_executor_shared_next_run_id (shared, &run_id);
  if (closing)
    {
      sbx_admission_clear (out);
      return sbx_executor_fail (error, SBX_EXECUTOR_ERROR_CLOSED,
                                "The executor set was closed before “%s” started; nothing was "
                                "spawned", rr->argv[0]);
    }
  if (g_cancellable_is_cancelled (cancellable))
    {
      sbx_admission_clear (out);
      return sbx_executor_fail (error, SBX_EXECUTOR_ERROR_CANCELLED,
                                "The run was cancelled before “%s” started; nothing was spawned",
                                rr->argv[0]);
    }
  out->deadline = start_deadline (rr);
  if (out->deadline != 0 && out->deadline <= g_get_monotonic_time ())
    {
      sbx_admission_clear (out);
      return sbx_executor_fail (error, SBX_EXECUTOR_ERROR_TIMED_OUT,
                                "The deadline of “%s” passed before it started; nothing was "
                                "spawned", rr->argv[0]);
    }

  /* A start on the executor's own spec holds what the executor holds. */
  if (out->report == NULL)
    {
      out->report = sbx_compile_report_ref (self->run_report);
      out->level = self->level;
      out->guarantees = self->guarantees;
    }
  /* An asking run's connect supervisor holds a gated host socket's
   * connect and asks, as the egress proxy does a connection; the run then
   * claims no boundary an approval would defeat. */
  if (out->egress.broker != NULL
      && (ask_host_sockets (shared, rr->ask, &out->report, &out->guarantees)
          || sbx_ask_gates_files (rr->ask, sbx_executor_shared_get_profile (shared))))
    sbx_backend_denials_set_broker (out->backend_denials, out->egress.broker);
  out->run_id = run_id;
  out->spec = g_steal_pointer (&spec);
  out->cwd = g_steal_pointer (&cwd);
  out->spent = g_steal_pointer (&spent);
  spawn_event.rr = rr;
  spawn_event.admission = out;
  spawn_event.run_id = run_id;
  sbx_executor_shared_emit (shared, SBX_EVENT_SPAWN, self->key, add_spawn_members, &spawn_event);
  return TRUE;
}
