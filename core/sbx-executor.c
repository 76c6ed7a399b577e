/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SbxExecutor: one key of an executor set.  It owns the compiled backend
 * spec of the profile, the scrubbed environment, its HOME/TMPDIR, its grant
 * key, and runs commands.
 *
 * LOCKING
 *   self->mutex protects `spec` and `closed`.  A run takes a reference on
 *   the spec under the mutex and drops the mutex before calling the backend:
 *   no lock is held across a plugin call.  Everything else is immutable after
 *   construction.  The set's lifecycle barrier (SbxExecutorShared) orders
 *   runs against close: a run is admitted or fails with CLOSED; close waits
 *   until every admitted run has returned.
 *
 * A sync run supervises its child on the calling thread
 * (sbx-supervise.c).  An async run does the same on a dedicated thread, so
 * long-running children never starve a shared pool, and returns through its
 * GTask in the caller's main context.
 */
#include "sbx-executor-private.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx-compile-report-private.h"
#include "sbx-env-private.h"
#include "sbx-path-private.h"
#include "sbx-policy-private.h"
#include "sbx-run-result-private.h"
#include "sbx-supervise-private.h"

/**
 * SbxExecutor:
 *
 * The executor of one key of a [class@Sbx.ExecutorSet]: an authority
 * identity with its own isolated HOME (unless the profile asks for the real
 * one), its own TMPDIR, its own grant key and the profile compiled once for
 * the set's backend.
 *
 * Obtain executors with [method@Sbx.ExecutorSet.for_key]; the same key
 * always gives the same executor.  Every run checks the profile's command
 * access first (allow runs, gated fails with
 * %SBX_EXECUTOR_ERROR_GRANT_REQUIRED, deny with %SBX_EXECUTOR_ERROR_DENIED,
 * and nothing is spawned), then spawns the command under the backend's
 * confinement with the scrubbed environment and supervises its whole process
 * tree.  [method@Sbx.Executor.get_level], [method@Sbx.Executor.get_guarantees]
 * and [method@Sbx.Executor.get_report] say what the backend actually
 * enforces.
 *
 * Runs are thread-safe and may be concurrent.  Once the set is closed every
 * run fails with %SBX_EXECUTOR_ERROR_CLOSED.
 *
 * Since: 0.1
 */
struct _SbxExecutor
{
  GObject            parent_instance;

  SbxExecutorShared *shared;
  char              *key;
  char              *home;
  gboolean           home_owned;
  char              *tmpdir;
  char              *state_dir;
  char             **environment;
  SbxPolicy         *policy;
  SbxCompileReport  *report;
  SbxLevel           level;
  SbxGuarantees      guarantees;

  GMutex             mutex;
  SbxBackendSpec    *spec;          /* (mutex) NULL once closed */
  gboolean           closed;        /* (mutex) */
  gboolean           key_valid;     /* (mutex) */
  guint8             grant_key[SBX_GRANT_KEY_SIZE];  /* (mutex) */
};

G_DEFINE_FINAL_TYPE (SbxExecutor, sbx_executor, G_TYPE_OBJECT)

/**
 * sbx_executor_error_quark:
 *
 * Returns the error domain of [error@Sbx.ExecutorError].
 *
 * Returns: the quark
 *
 * Since: 0.1
 */
G_DEFINE_QUARK (sbx-executor-error-quark, sbx_executor_error)

static gboolean
fail (GError    **error,
      int         code,
      const char *format,
      ...) G_GNUC_PRINTF (3, 4);

static gboolean
fail (GError    **error,
      int         code,
      const char *format,
      ...)
{
  va_list args;

  va_start (args, format);
  g_propagate_error (error, g_error_new_valist (SBX_EXECUTOR_ERROR, code, format, args));
  va_end (args);
  return FALSE;
}

static void
sbx_executor_finalize (GObject *object)
{
  SbxExecutor *self = SBX_EXECUTOR (object);

  sbx_executor_close_internal (self);
  g_clear_pointer (&self->shared, sbx_executor_shared_unref);
  g_free (self->key);
  g_free (self->home);
  g_free (self->tmpdir);
  g_free (self->state_dir);
  g_strfreev (self->environment);
  g_clear_pointer (&self->policy, sbx_policy_free);
  g_clear_pointer (&self->report, sbx_compile_report_unref);
  g_mutex_clear (&self->mutex);

  G_OBJECT_CLASS (sbx_executor_parent_class)->finalize (object);
}

static void
sbx_executor_class_init (SbxExecutorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = sbx_executor_finalize;
}

static void
sbx_executor_init (SbxExecutor *self)
{
  g_mutex_init (&self->mutex);
}

/* ------------------------------------------------------------------------- */
/* Construction                                                               */
/* ------------------------------------------------------------------------- */

static char *
make_private_dir (const char  *parent,
                  const char  *prefix,
                  GError     **error)
{
  g_autofree char *template = g_strdup_printf ("%s/%s-XXXXXX", parent, prefix);

  if (g_mkdtemp_full (template, 0700) == NULL)
    {
      int errsv = errno;

      g_set_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_SCRATCH,
                   "Cannot create the executor directory %s: %s", template, g_strerror (errsv));
      return NULL;
    }
  /* mkdtemp honours the umask: be explicit. */
  if (chmod (template, 0700) < 0)
    {
      int errsv = errno;

      rmdir (template);
      g_set_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_SCRATCH,
                   "Cannot secure the executor directory %s: chmod: %s", template,
                   g_strerror (errsv));
      return NULL;
    }
  return g_steal_pointer (&template);
}

static gboolean
fill_random (guint8 *buf,
             gsize   len,
             GError **error)
{
  gsize got = 0;

  while (got < len)
    {
      ssize_t n = getrandom (buf + got, len - got, 0);

      if (n < 0)
        {
          int errsv = errno;

          if (errsv == EINTR)
            continue;
          g_set_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_SCRATCH,
                       "Cannot draw the executor's grant key: getrandom: %s", g_strerror (errsv));
          return FALSE;
        }
      got += (gsize) n;
    }
  return TRUE;
}

static char *
real_home (void)
{
  const char *home = g_getenv ("HOME");

  if (home == NULL || home[0] != '/')
    home = g_get_home_dir ();
  return sbx_path_clean (home);
}

static void
add_created_members (JsonBuilder *builder,
                     gpointer     data)
{
  SbxExecutor *self = data;
  g_auto(GStrv) names = sbx_guarantees_to_strv (self->guarantees);

  json_builder_set_member_name (builder, "backend");
  json_builder_add_string_value (builder, sbx_backend_get_name (self->shared->backend));
  json_builder_set_member_name (builder, "level");
  json_builder_add_string_value (builder, sbx_level_to_string (self->level));
  json_builder_set_member_name (builder, "guarantees");
  json_builder_begin_array (builder);
  for (guint i = 0; names[i] != NULL; i++)
    json_builder_add_string_value (builder, names[i]);
  json_builder_end_array (builder);
  json_builder_set_member_name (builder, "profile");
  json_builder_add_string_value (builder, sbx_profile_get_fingerprint (self->shared->profile));
  json_builder_set_member_name (builder, "report");
  json_builder_add_value (builder, sbx_compile_report_to_json_node (self->report));
}

static char *
guarantee_names (SbxGuarantees bits)
{
  g_auto(GStrv) names = sbx_guarantees_to_strv (bits);

  return g_strjoinv (", ", names);
}

/* The report an executor's compile fills: the roots as the resolved paths
 * they became and the set's rejected candidates. */
static SbxCompileReport *
executor_report_new (SbxExecutorShared *shared,
                     SbxGuarantees      required)
{
  SbxProfile *profile = shared->profile;
  SbxCompileReport *report = sbx_compile_report_new ();

  sbx_compile_report_set_backend (report, sbx_backend_get_name (shared->backend));
  sbx_compile_report_set_required (report, required);
  sbx_compile_report_add_root (report, "workspace", sbx_profile_get_workspace_root (profile),
                               sbx_profile_get_workspace_read (profile),
                               sbx_profile_get_workspace_write (profile));
  for (guint i = 0; i < sbx_profile_get_n_roots (profile); i++)
    sbx_compile_report_add_root (report, "root", sbx_profile_get_root_path (profile, i),
                                 sbx_profile_get_root_read (profile, i),
                                 sbx_profile_get_root_write (profile, i));
  for (guint i = 0; i < sbx_compile_report_get_n_rejected (shared->selection_report); i++)
    sbx_compile_report_add_rejected (report,
                                     sbx_compile_report_get_rejected_name (shared->selection_report, i),
                                     sbx_compile_report_get_rejected_reason (shared->selection_report, i));
  return report;
}

static gboolean
strv_is_subset (const char *const *a,
                const char *const *b)
{
  for (guint i = 0; a[i] != NULL; i++)
    if (!g_strv_contains (b, a[i]))
      return FALSE;
  return TRUE;
}

static GStrv
strv_union (const char *const *a,
            const char *const *b)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();

  g_strv_builder_addv (builder, (const char **) a);
  for (guint i = 0; b[i] != NULL; i++)
    if (!g_strv_contains (a, b[i]))
      g_strv_builder_add (builder, b[i]);
  return g_strv_builder_end (builder);
}

/* Creates everything an executor owns.  On FALSE, what was created so far is
 * recorded in @self for executor_discard(). */
static gboolean
executor_setup (SbxExecutor  *self,
                GError      **error)
{
  SbxExecutorShared *shared = self->shared;
  SbxProfile *profile = shared->profile;
  const char *backend = sbx_backend_get_name (shared->backend);
  g_autoptr(GError) compile_error = NULL;
  g_auto(GStrv) parent_env = NULL;
  g_autofree char *forced_home = NULL;
  g_autofree char *forced_tmpdir = NULL;
  const char *forced[3];
  SbxPolicyDirs dirs = { 0 };
  SbxGuarantees required = sbx_profile_get_required_guarantees (profile);
  SbxGuarantees missing;
  g_auto(GStrv) others = NULL;
  g_auto(GStrv) entries = NULL;
  g_autoptr(GError) list_error = NULL;

  if (sbx_profile_get_home (profile) == SBX_HOME_ISOLATED)
    {
      self->home = make_private_dir (shared->owned_dir, "home", error);
      if (self->home == NULL)
        return FALSE;
      self->home_owned = TRUE;
    }
  else
    {
      self->home = real_home ();
    }
  self->tmpdir = make_private_dir (shared->owned_dir, "tmp", error);
  if (self->tmpdir == NULL)
    return FALSE;
  self->state_dir = make_private_dir (shared->owned_dir, "state", error);
  if (self->state_dir == NULL)
    return FALSE;

  /* The environment is a snapshot taken now, used by every run (upstream
   * Q11 made grant runs re-read the parent's at spawn). */
  parent_env = g_get_environ ();
  forced_home = g_strconcat ("HOME=", self->home, NULL);
  forced_tmpdir = g_strconcat ("TMPDIR=", self->tmpdir, NULL);
  forced[0] = forced_home;
  forced[1] = forced_tmpdir;
  forced[2] = NULL;
  self->environment = sbx_env_scrub ((const char *const *) parent_env,
                                     sbx_env_baseline_allowlist (), forced);

  dirs.home = self->home;
  dirs.home_owned = self->home_owned;
  dirs.tmpdir = self->tmpdir;
  dirs.state_dir = self->state_dir;
  dirs.set_dir = shared->owned_dir;

  /* Other sets' directories in the scratch root are denied by name.  One
   * created while the backend compiled was not named, and a backend that
   * snapshots directory listings (Landlock's carving) may have granted it:
   * list again afterwards and compile again until the list holds still. */
  for (guint attempt = 0;; attempt++)
    {
      g_auto(GStrv) again = NULL;

      if (others == NULL)
        {
          if (!sbx_scratch_list (shared->scratch_root, shared->owned_dir, &others, &entries, &list_error))
            {
              g_set_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_SCRATCH,
                           "Cannot list the other executor sets for key “%s”: %s",
                           self->key, list_error->message);
              return FALSE;
            }
        }
      dirs.other_set_dirs = (const char *const *) others;
      dirs.scratch_root = shared->scratch_root;
      dirs.scratch_entries = (const char *const *) entries;
      g_clear_pointer (&self->policy, sbx_policy_free);
      self->policy = sbx_policy_new_for_profile (profile, &dirs);

      g_clear_pointer (&self->report, sbx_compile_report_unref);
      self->report = executor_report_new (shared, required);
      self->spec = sbx_backend_compile (shared->backend, sbx_policy_get_abi (self->policy),
                                        self->report, &self->level, &self->guarantees, &compile_error);
      if (self->spec == NULL)
        {
          g_set_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_COMPILE_FAILED,
                       "Backend “%s” cannot compile the profile for key “%s”: %s",
                       backend, self->key, compile_error->message);
          return FALSE;
        }
      again = sbx_scratch_list_set_dirs (shared->scratch_root, shared->owned_dir, &list_error);
      if (again == NULL)
        {
          g_set_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_SCRATCH,
                       "Cannot list the other executor sets for key “%s”: %s",
                       self->key, list_error->message);
          return FALSE;
        }
      if (strv_is_subset ((const char *const *) again, (const char *const *) others))
        break;
      g_clear_pointer (&self->spec, sbx_backend_spec_unref);
      if (attempt >= 3)
        {
          g_set_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_COMPILE_FAILED,
                       "Executor sets keep appearing in %s while the profile for key “%s” "
                       "compiles; refusing an executor that might reach one of them",
                       shared->scratch_root, self->key);
          return FALSE;
        }
      {
        GStrv merged = strv_union ((const char *const *) others, (const char *const *) again);

        g_strfreev (others);
        others = merged;
      }
    }
  sbx_compile_report_freeze (self->report);

  /* Fail closed: the backend must achieve every required guarantee. */
  missing = required & ~self->guarantees;
  if (missing != 0)
    {
      g_autofree char *names = guarantee_names (missing);

      g_set_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_MISSING_GUARANTEES,
                   "Backend “%s” does not achieve guarantees the profile requires (%s); "
                   "refusing to run without them", backend, names);
      return FALSE;
    }

  if (!fill_random (self->grant_key, sizeof self->grant_key, error))
    return FALSE;
  self->key_valid = TRUE;
  return TRUE;
}

/* Undoes a failed executor_setup(): releases the spec (its only reference,
 * so exactly once) and removes the directories it created.  A cleanup
 * failure is added to @error. */
static void
executor_discard (SbxExecutor  *self,
                  GError      **error)
{
  const char *made[] = { self->home_owned ? self->home : NULL, self->tmpdir, self->state_dir };

  sbx_executor_close_internal (self);
  for (guint i = 0; i < G_N_ELEMENTS (made); i++)
    {
      g_autoptr(GError) remove_error = NULL;

      if (made[i] != NULL && !sbx_remove_tree (made[i], &remove_error))
        g_prefix_error (error, "Cleanup failed too (%s); ", remove_error->message);
    }
}

SbxExecutor *
sbx_executor_new_internal (SbxExecutorShared *shared,
                           const char        *key,
                           GError           **error)
{
  g_autoptr(SbxExecutor) self = NULL;
  g_autoptr(GError) local_error = NULL;

  g_return_val_if_fail (shared != NULL, NULL);
  g_return_val_if_fail (key != NULL, NULL);

  self = g_object_new (SBX_TYPE_EXECUTOR, NULL);
  self->shared = sbx_executor_shared_ref (shared);
  self->key = g_strdup (key);

  if (!executor_setup (self, &local_error))
    {
      executor_discard (self, &local_error);
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }

  sbx_executor_shared_emit (shared, SBX_EVENT_EXECUTOR_CREATED, key, add_created_members, self);
  return g_steal_pointer (&self);
}

void
sbx_executor_close_internal (SbxExecutor *self)
{
  SbxBackendSpec *spec;

  g_return_if_fail (SBX_IS_EXECUTOR (self));

  g_mutex_lock (&self->mutex);
  self->closed = TRUE;
  spec = g_steal_pointer (&self->spec);
  explicit_bzero (self->grant_key, sizeof self->grant_key);
  self->key_valid = FALSE;
  g_mutex_unlock (&self->mutex);

  /* The backend's release() runs outside the lock. */
  if (spec != NULL)
    sbx_backend_spec_unref (spec);
}

gboolean
sbx_executor_peek_grant_key (SbxExecutor *self,
                             guint8       out_key[SBX_GRANT_KEY_SIZE])
{
  gboolean valid;

  g_return_val_if_fail (SBX_IS_EXECUTOR (self), FALSE);

  g_mutex_lock (&self->mutex);
  memcpy (out_key, self->grant_key, SBX_GRANT_KEY_SIZE);
  valid = self->key_valid;
  g_mutex_unlock (&self->mutex);
  return valid;
}

const char *
sbx_executor_get_state_dir (SbxExecutor *self)
{
  g_return_val_if_fail (SBX_IS_EXECUTOR (self), NULL);

  return self->state_dir;
}

/* ------------------------------------------------------------------------- */
/* Getters                                                                    */
/* ------------------------------------------------------------------------- */

/**
 * sbx_executor_get_key:
 * @self: a [class@Sbx.Executor]
 *
 * Returns the key this executor was created for.
 *
 * Returns: the key this executor was created for
 *
 * Since: 0.1
 */
const char *
sbx_executor_get_key (SbxExecutor *self)
{
  g_return_val_if_fail (SBX_IS_EXECUTOR (self), NULL);

  return self->key;
}

/**
 * sbx_executor_get_level:
 * @self: a [class@Sbx.Executor]
 *
 * The confinement level the backend reported when it compiled the profile
 * for this executor: the backend's observation of this host, never computed
 * by the executor.
 *
 * Returns: the level
 *
 * Since: 0.1
 */
SbxLevel
sbx_executor_get_level (SbxExecutor *self)
{
  g_return_val_if_fail (SBX_IS_EXECUTOR (self), SBX_LEVEL_NONE);

  return self->level;
}

/**
 * sbx_executor_get_guarantees:
 * @self: a [class@Sbx.Executor]
 *
 * The guarantees the backend achieves for this executor's compiled profile.
 * They include every guarantee the profile requires (otherwise the executor
 * would not exist).
 *
 * Returns: the achieved guarantees
 *
 * Since: 0.1
 */
SbxGuarantees
sbx_executor_get_guarantees (SbxExecutor *self)
{
  g_return_val_if_fail (SBX_IS_EXECUTOR (self), SBX_GUARANTEE_NONE);

  return self->guarantees;
}

/**
 * sbx_executor_get_report:
 * @self: a [class@Sbx.Executor]
 *
 * The compile report of this executor: the backend, its level and
 * guarantees, what the profile required, every entry the backend reported
 * and every backend candidate the set rejected, with why.
 *
 * Returns: (transfer none): the report
 *
 * Since: 0.1
 */
SbxCompileReport *
sbx_executor_get_report (SbxExecutor *self)
{
  g_return_val_if_fail (SBX_IS_EXECUTOR (self), NULL);

  return self->report;
}

/**
 * sbx_executor_get_home:
 * @self: a [class@Sbx.Executor]
 *
 * The HOME children of this executor see: a private 0700 directory under the
 * set's scratch child, or the real HOME when the profile asks for it.
 *
 * Returns: (type filename): the HOME path
 *
 * Since: 0.1
 */
const char *
sbx_executor_get_home (SbxExecutor *self)
{
  g_return_val_if_fail (SBX_IS_EXECUTOR (self), NULL);

  return self->home;
}

/**
 * sbx_executor_get_tmpdir:
 * @self: a [class@Sbx.Executor]
 *
 * The private 0700 TMPDIR children of this executor see (the shared /tmp is
 * never implied).
 *
 * Returns: (type filename): the TMPDIR path
 *
 * Since: 0.1
 */
const char *
sbx_executor_get_tmpdir (SbxExecutor *self)
{
  g_return_val_if_fail (SBX_IS_EXECUTOR (self), NULL);

  return self->tmpdir;
}

/**
 * sbx_executor_get_environment:
 * @self: a [class@Sbx.Executor]
 *
 * The scrubbed environment children of this executor get, built once when
 * the executor was created: the parent's PATH, HOME, TERM, LANG, LC_*, USER,
 * LOGNAME, SHELL and TZ, with HOME and TMPDIR forced to the executor's own.
 * Nothing else of the parent's environment reaches a child.
 *
 * Returns: (transfer none) (array zero-terminated=1): the environment
 *
 * Since: 0.1
 */
const char *const *
sbx_executor_get_environment (SbxExecutor *self)
{
  g_return_val_if_fail (SBX_IS_EXECUTOR (self), NULL);

  return (const char *const *) self->environment;
}

/**
 * sbx_executor_is_closed:
 * @self: a [class@Sbx.Executor]
 *
 * Returns %TRUE once the executor's set is closing or closed.
 *
 * Returns: %TRUE once the executor's set is closing or closed
 *
 * Since: 0.1
 */
gboolean
sbx_executor_is_closed (SbxExecutor *self)
{
  gboolean closed;

  g_return_val_if_fail (SBX_IS_EXECUTOR (self), TRUE);

  g_mutex_lock (&self->shared->mutex);
  closed = self->shared->closing;
  g_mutex_unlock (&self->shared->mutex);
  if (closed)
    return TRUE;
  g_mutex_lock (&self->mutex);
  closed = self->closed;
  g_mutex_unlock (&self->mutex);
  return closed;
}

/* ------------------------------------------------------------------------- */
/* Runs                                                                       */
/* ------------------------------------------------------------------------- */

typedef struct
{
  char          *cwd;
  char         **argv;
  GTimeSpan      timeout;
  guint64        max_output;
  int            fds[3];       /* stdin, stdout, stderr; -1 default */
  gboolean       owns_fds;     /* async: dup'd, closed when done */
} RunRequest;

/* Closes the run's own duplicates of the caller's fds, as soon as the run is
 * over (the task may live on in the caller's hands). */
static void
run_request_close_fds (RunRequest *rr)
{
  if (!rr->owns_fds)
    return;
  for (int i = 0; i < 3; i++)
    if (rr->fds[i] >= 0)
      {
        close (rr->fds[i]);
        rr->fds[i] = -1;
      }
}

static void
run_request_free (RunRequest *rr)
{
  run_request_close_fds (rr);
  g_free (rr->cwd);
  g_strfreev (rr->argv);
  g_free (rr);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (RunRequest, run_request_free)

static RunRequest *
run_request_new (const char          *cwd,
                 const char *const   *argv,
                 const SbxRunOptions *options)
{
  RunRequest *rr = g_new0 (RunRequest, 1);

  rr->cwd = g_strdup (cwd);
  rr->argv = g_strdupv ((char **) argv);
  rr->fds[0] = rr->fds[1] = rr->fds[2] = -1;
  if (options != NULL)
    {
      rr->timeout = sbx_run_options_get_timeout (options);
      rr->max_output = sbx_run_options_get_max_output (options);
      rr->fds[0] = sbx_run_options_get_stdin_fd (options);
      rr->fds[1] = sbx_run_options_get_stdout_fd (options);
      rr->fds[2] = sbx_run_options_get_stderr_fd (options);
    }
  return rr;
}

/* For a run on another thread: the caller may close its fds once the call
 * returns, so the run works on its own duplicates. */
static gboolean
run_request_own_fds (RunRequest  *rr,
                     GError     **error)
{
  for (int i = 0; i < 3; i++)
    if (rr->fds[i] >= 0)
      {
        int fd = fcntl (rr->fds[i], F_DUPFD_CLOEXEC, 3);

        if (fd < 0)
          {
            int errsv = errno;

            for (int k = 0; k < i; k++)
              if (rr->fds[k] >= 0)
                {
                  close (rr->fds[k]);
                  rr->fds[k] = -1;
                }
            for (int k = i; k < 3; k++)
              rr->fds[k] = -1;
            return fail (error, SBX_EXECUTOR_ERROR_INVALID_ARGUMENT,
                         "Cannot duplicate the run's file descriptor %d: %s",
                         i, g_strerror (errsv));
          }
        rr->fds[i] = fd;
      }
  rr->owns_fds = TRUE;
  return TRUE;
}

typedef struct
{
  const RunRequest *rr;
  guint64           run_id;
} SpawnEvent;

static void
add_string_sanitized (JsonBuilder *builder,
                      const char  *text)
{
  g_autofree char *valid = g_utf8_make_valid (text, -1);

  json_builder_add_string_value (builder, valid);
}

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
    add_string_sanitized (builder, ev->rr->argv[i]);
  json_builder_end_array (builder);
  json_builder_set_member_name (builder, "cwd");
  add_string_sanitized (builder, ev->rr->cwd);
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
      add_string_sanitized (builder, ev->error->message);
    }
}

/* Turns a backend's spawn error (consumed) into an executor error. */
static void
map_spawn_error (GError     **error,
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

static gboolean
check_cwd (const char  *cwd,
           GError     **error)
{
  struct stat st;

  if (cwd == NULL || cwd[0] != '/')
    return fail (error, SBX_EXECUTOR_ERROR_INVALID_CWD,
                 "The working directory “%s” is not an absolute path",
                 cwd != NULL ? cwd : "(null)");
  if (stat (cwd, &st) < 0)
    {
      int errsv = errno;

      return fail (error, SBX_EXECUTOR_ERROR_INVALID_CWD,
                   "The working directory “%s” is unusable: %s", cwd, g_strerror (errsv));
    }
  if (!S_ISDIR (st.st_mode))
    return fail (error, SBX_EXECUTOR_ERROR_INVALID_CWD,
                 "The working directory “%s” is not a directory", cwd);
  return TRUE;
}

/* The command gate: decided before anything is spawned. */
static gboolean
check_command_gate (SbxExecutor  *self,
                    GError      **error)
{
  switch (sbx_profile_get_command (self->shared->profile))
    {
    case SBX_ACCESS_ALLOW:
      return TRUE;
    case SBX_ACCESS_GATED:
      return fail (error, SBX_EXECUTOR_ERROR_GRANT_REQUIRED,
                   "The profile gates command execution: a grant is required to run a command");
    case SBX_ACCESS_DENY:
    default:
      return fail (error, SBX_EXECUTOR_ERROR_DENIED,
                   "The profile denies command execution");
    }
}

static SbxRunResult *
executor_run (SbxExecutor      *self,
              const RunRequest *rr,
              GCancellable     *cancellable,
              GError          **error)
{
  SbxExecutorShared *shared = self->shared;
  g_autoptr(SbxBackendSpec) spec = NULL;
  g_autoptr(GError) local_error = NULL;
  SbxSuperviseRequest req = { 0 };
  SbxSuperviseResult result = { 0 };
  SpawnEvent spawn_event;
  ExitEvent exit_event = { 0 };
  gboolean spawned = FALSE;
  gboolean closing;
  gboolean ok;
  SbxRunResult *run_result = NULL;

  if (rr->argv == NULL || rr->argv[0] == NULL || rr->argv[0][0] == '\0')
    return (fail (error, SBX_EXECUTOR_ERROR_EMPTY_ARGV, "The command is empty"), NULL);
  if (rr->timeout < 0)
    return (fail (error, SBX_EXECUTOR_ERROR_INVALID_ARGUMENT,
                  "The timeout %" G_GINT64_FORMAT " µs is negative", rr->timeout), NULL);
  if (!check_cwd (rr->cwd, error))
    return NULL;
  if (g_cancellable_is_cancelled (cancellable))
    return (fail (error, SBX_EXECUTOR_ERROR_CANCELLED,
                  "The run was cancelled before it started; nothing was spawned"), NULL);

  if (!sbx_executor_shared_enter (shared))
    return (fail (error, SBX_EXECUTOR_ERROR_CLOSED, "The executor set is closed"), NULL);

  g_mutex_lock (&self->mutex);
  if (!self->closed && self->spec != NULL)
    spec = sbx_backend_spec_ref (self->spec);
  g_mutex_unlock (&self->mutex);
  if (spec == NULL)
    {
      sbx_executor_shared_leave (shared);
      return (fail (error, SBX_EXECUTOR_ERROR_CLOSED, "The executor is closed"), NULL);
    }
  if (!check_command_gate (self, error))
    {
      sbx_executor_shared_leave (shared);
      return NULL;
    }

  /* Last look before anything is spawned: a close or a cancel that came
   * while the run was being admitted means nothing runs at all. */
  g_mutex_lock (&shared->mutex);
  closing = shared->closing;
  spawn_event.run_id = ++shared->next_run_id;
  g_mutex_unlock (&shared->mutex);
  if (closing || g_cancellable_is_cancelled (cancellable))
    {
      sbx_executor_shared_leave (shared);
      if (closing)
        return (fail (error, SBX_EXECUTOR_ERROR_CLOSED,
                      "The executor set was closed before “%s” started; nothing was spawned",
                      rr->argv[0]), NULL);
      return (fail (error, SBX_EXECUTOR_ERROR_CANCELLED,
                    "The run was cancelled before “%s” started; nothing was spawned",
                    rr->argv[0]), NULL);
    }
  spawn_event.rr = rr;
  sbx_executor_shared_emit (shared, SBX_EVENT_SPAWN, self->key, add_spawn_members, &spawn_event);

  req.spec = spec;
  req.cwd = rr->cwd;
  req.argv = (const char *const *) rr->argv;
  req.envp = (const char *const *) self->environment;
  req.stdin_fd = rr->fds[0];
  req.stdout_fd = rr->fds[1];
  req.stderr_fd = rr->fds[2];
  req.max_output = rr->max_output;
  req.deadline = rr->timeout > 0 ? g_get_monotonic_time () + rr->timeout : 0;
  req.cancellable = cancellable;
  req.close_fd = shared->close_fd;

  ok = sbx_supervise_run (&req, &result, &spawned, &local_error);
  if (!ok && !spawned)
    map_spawn_error (&local_error, g_steal_pointer (&local_error), rr->argv[0]);
  else if (!ok)
    {
      g_autoptr(GError) teardown = g_steal_pointer (&local_error);

      g_set_error (&local_error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_TEARDOWN_FAILED,
                   "“%s” ran, but its process tree could not be torn down: %s",
                   rr->argv[0], teardown->message);
    }
  else
    {
      switch (result.outcome)
        {
        case SBX_SUPERVISE_TIMED_OUT:
          fail (&local_error, SBX_EXECUTOR_ERROR_TIMED_OUT,
                "“%s” timed out after %.3f s; its process tree was killed",
                rr->argv[0], rr->timeout / (double) G_USEC_PER_SEC);
          break;
        case SBX_SUPERVISE_CANCELLED:
          fail (&local_error, SBX_EXECUTOR_ERROR_CANCELLED,
                "The run of “%s” was cancelled; its process tree was killed", rr->argv[0]);
          break;
        case SBX_SUPERVISE_CLOSED:
          fail (&local_error, SBX_EXECUTOR_ERROR_CLOSED,
                "The executor set was closed during the run of “%s”; its process tree was killed",
                rr->argv[0]);
          break;
        case SBX_SUPERVISE_EXITED:
        default:
          run_result = sbx_run_result_new (result.output, &result.exit, result.truncated,
                                           (SbxLifetimeContainment) result.containment,
                                           result.duration_us);
          break;
        }
    }

  exit_event.run_id = spawn_event.run_id;
  exit_event.result = &result;
  exit_event.error = local_error;
  exit_event.spawned = spawned;
  sbx_executor_shared_emit (shared, SBX_EVENT_EXIT, self->key, add_exit_members, &exit_event);

  sbx_supervise_result_clear (&result);
  sbx_executor_shared_leave (shared);

  if (run_result == NULL)
    g_propagate_error (error, g_steal_pointer (&local_error));
  return run_result;
}

/* ------------------------------------------------------------------------- */
/* Async runs                                                                 */
/* ------------------------------------------------------------------------- */

static gpointer
run_thread (gpointer data)
{
  g_autoptr(GTask) task = data;
  SbxExecutor *self = g_task_get_source_object (task);
  RunRequest *rr = g_task_get_task_data (task);
  GError *error = NULL;
  SbxRunResult *result;

  result = executor_run (self, rr, g_task_get_cancellable (task), &error);
  run_request_close_fds (rr);
  if (result == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, result, (GDestroyNotify) sbx_run_result_unref);
  return NULL;
}

static void
executor_run_async (SbxExecutor         *self,
                    gpointer             source_tag,
                    RunRequest          *rr,
                    GCancellable        *cancellable,
                    GAsyncReadyCallback  callback,
                    gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autoptr(GError) error = NULL;
  GThread *thread;

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, source_tag);
  /* The run reports cancellation itself (SBX_EXECUTOR_ERROR_CANCELLED), after
   * the tree is dead. */
  g_task_set_check_cancellable (task, FALSE);
  g_task_set_task_data (task, rr, (GDestroyNotify) run_request_free);

  if (!run_request_own_fds (rr, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  thread = g_thread_try_new ("sbx-run", run_thread, g_object_ref (task), &error);
  if (thread == NULL)
    {
      g_object_unref (task);   /* the reference meant for the thread */
      g_task_return_new_error (task, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_SPAWN_FAILED,
                               "Cannot start a supervising thread: %s", error->message);
      return;
    }
  g_thread_unref (thread);
}

static SbxRunResult *
executor_run_finish (SbxExecutor   *self,
                     GAsyncResult  *result,
                     gpointer       source_tag,
                     GError       **error)
{
  g_return_val_if_fail (SBX_IS_EXECUTOR (self), NULL);
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  g_return_val_if_fail (g_async_result_is_tagged (result, source_tag), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static RunRequest *
shell_request (const char *cwd,
               const char *command)
{
  const char *argv[] = { "/bin/sh", "-c", command, NULL };

  return run_request_new (cwd, argv, NULL);
}

/**
 * sbx_executor_run:
 * @self: a [class@Sbx.Executor]
 * @cwd: (type filename): absolute working directory of the command
 * @argv: (array zero-terminated=1): the command and its arguments; no shell
 *   is involved; `argv[0]` without a '/' is looked up in the PATH of the
 *   scrubbed environment
 * @options: (nullable): a timeout, an output limit and stream redirections
 * @cancellable: (nullable): cancelling it kills the whole process tree
 *   before the call returns
 * @error: return location for a [error@Sbx.ExecutorError]
 *
 * Runs a command under the executor's confinement and waits for it.  The
 * command gate comes first: nothing is spawned unless the profile allows
 * commands.  After the command exits, the backend tears down whatever is left
 * of its process tree.  Does not depend on a main loop; safe to call from any
 * thread, also concurrently.
 *
 * Returns: (transfer full): the result, or %NULL with @error set; a non-zero
 *   exit or a death by signal is a result, not an error
 *
 * Since: 0.1
 */
SbxRunResult *
sbx_executor_run (SbxExecutor          *self,
                  const char           *cwd,
                  const char *const    *argv,
                  const SbxRunOptions  *options,
                  GCancellable         *cancellable,
                  GError              **error)
{
  g_autoptr(RunRequest) rr = NULL;

  g_return_val_if_fail (SBX_IS_EXECUTOR (self), NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  rr = run_request_new (cwd, argv, options);
  return executor_run (self, rr, cancellable, error);
}

/**
 * sbx_executor_run_async:
 * @self: a [class@Sbx.Executor]
 * @cwd: (type filename): absolute working directory of the command
 * @argv: (array zero-terminated=1): the command and its arguments
 * @options: (nullable): a timeout, an output limit and stream redirections;
 *   copied, and its file descriptors duplicated, before this returns
 * @cancellable: (nullable): cancelling it kills the whole process tree
 *   before the task completes
 * @callback: (scope async): called in the thread-default main context of
 *   the caller when the run is over
 * @user_data: data for @callback
 *
 * Asynchronous twin of [method@Sbx.Executor.run].  The child is supervised
 * on a dedicated thread.
 *
 * Since: 0.1
 */
void
sbx_executor_run_async (SbxExecutor          *self,
                        const char           *cwd,
                        const char *const    *argv,
                        const SbxRunOptions  *options,
                        GCancellable         *cancellable,
                        GAsyncReadyCallback   callback,
                        gpointer              user_data)
{
  g_return_if_fail (SBX_IS_EXECUTOR (self));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  executor_run_async (self, sbx_executor_run_async, run_request_new (cwd, argv, options),
                      cancellable, callback, user_data);
}

/**
 * sbx_executor_run_finish:
 * @self: a [class@Sbx.Executor]
 * @result: the result passed to the callback
 * @error: return location for a [error@Sbx.ExecutorError]
 *
 * Finishes [method@Sbx.Executor.run_async].
 *
 * Returns: (transfer full): the result, or %NULL with @error set
 *
 * Since: 0.1
 */
SbxRunResult *
sbx_executor_run_finish (SbxExecutor   *self,
                         GAsyncResult  *result,
                         GError       **error)
{
  return executor_run_finish (self, result, sbx_executor_run_async, error);
}

/**
 * sbx_executor_run_argv:
 * @self: a [class@Sbx.Executor]
 * @cwd: (type filename): absolute working directory of the command
 * @argv: (array zero-terminated=1): the command and its arguments; no shell
 *   is involved (`$HOME` is not expanded)
 * @cancellable: (nullable): cancelling it kills the whole process tree
 *   before the call returns
 * @error: return location for a [error@Sbx.ExecutorError]
 *
 * Runs @argv with stdin from the null device and stdout and stderr captured
 * together into the result.  See [method@Sbx.Executor.run].
 *
 * Returns: (transfer full): the result, or %NULL with @error set
 *
 * Since: 0.1
 */
SbxRunResult *
sbx_executor_run_argv (SbxExecutor        *self,
                       const char         *cwd,
                       const char *const  *argv,
                       GCancellable       *cancellable,
                       GError            **error)
{
  return sbx_executor_run (self, cwd, argv, NULL, cancellable, error);
}

/**
 * sbx_executor_run_argv_async:
 * @self: a [class@Sbx.Executor]
 * @cwd: (type filename): absolute working directory of the command
 * @argv: (array zero-terminated=1): the command and its arguments
 * @cancellable: (nullable): cancelling it kills the whole process tree
 *   before the task completes
 * @callback: (scope async): called when the run is over
 * @user_data: data for @callback
 *
 * Asynchronous twin of [method@Sbx.Executor.run_argv].
 *
 * Since: 0.1
 */
void
sbx_executor_run_argv_async (SbxExecutor         *self,
                             const char          *cwd,
                             const char *const   *argv,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  g_return_if_fail (SBX_IS_EXECUTOR (self));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  executor_run_async (self, sbx_executor_run_argv_async, run_request_new (cwd, argv, NULL),
                      cancellable, callback, user_data);
}

/**
 * sbx_executor_run_argv_finish:
 * @self: a [class@Sbx.Executor]
 * @result: the result passed to the callback
 * @error: return location for a [error@Sbx.ExecutorError]
 *
 * Finishes [method@Sbx.Executor.run_argv_async].
 *
 * Returns: (transfer full): the result, or %NULL with @error set
 *
 * Since: 0.1
 */
SbxRunResult *
sbx_executor_run_argv_finish (SbxExecutor   *self,
                              GAsyncResult  *result,
                              GError       **error)
{
  return executor_run_finish (self, result, sbx_executor_run_argv_async, error);
}

static RunRequest *
limited_request (const char        *cwd,
                 const char *const *argv,
                 guint64            max_output)
{
  RunRequest *rr = run_request_new (cwd, argv, NULL);

  rr->max_output = max_output;
  return rr;
}

/**
 * sbx_executor_run_argv_limited:
 * @self: a [class@Sbx.Executor]
 * @cwd: (type filename): absolute working directory of the command
 * @argv: (array zero-terminated=1): the command and its arguments
 * @max_output: the most bytes of combined output to keep; must be positive
 * @cancellable: (nullable): cancelling it kills the whole process tree
 *   before the call returns
 * @error: return location for a [error@Sbx.ExecutorError]
 *
 * Like [method@Sbx.Executor.run_argv], with a cap on the combined output.
 * The first byte past @max_output kills the whole process tree at once (a
 * child that keeps writing can never hang the call); the result then holds
 * exactly @max_output bytes and [method@Sbx.RunResult.get_truncated] is
 * %TRUE.
 *
 * Returns: (transfer full): the result, or %NULL with @error set
 *   (%SBX_EXECUTOR_ERROR_INVALID_ARGUMENT when @max_output is 0)
 *
 * Since: 0.1
 */
SbxRunResult *
sbx_executor_run_argv_limited (SbxExecutor        *self,
                               const char         *cwd,
                               const char *const  *argv,
                               guint64             max_output,
                               GCancellable       *cancellable,
                               GError            **error)
{
  g_autoptr(RunRequest) rr = NULL;

  g_return_val_if_fail (SBX_IS_EXECUTOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (max_output == 0)
    return (fail (error, SBX_EXECUTOR_ERROR_INVALID_ARGUMENT,
                  "The output limit of a limited run must be positive"), NULL);
  rr = limited_request (cwd, argv, max_output);
  return executor_run (self, rr, cancellable, error);
}

/**
 * sbx_executor_run_argv_limited_async:
 * @self: a [class@Sbx.Executor]
 * @cwd: (type filename): absolute working directory of the command
 * @argv: (array zero-terminated=1): the command and its arguments
 * @max_output: the most bytes of combined output to keep; must be positive
 * @cancellable: (nullable): cancelling it kills the whole process tree
 *   before the task completes
 * @callback: (scope async): called when the run is over
 * @user_data: data for @callback
 *
 * Asynchronous twin of [method@Sbx.Executor.run_argv_limited].
 *
 * Since: 0.1
 */
void
sbx_executor_run_argv_limited_async (SbxExecutor         *self,
                                     const char          *cwd,
                                     const char *const   *argv,
                                     guint64              max_output,
                                     GCancellable        *cancellable,
                                     GAsyncReadyCallback  callback,
                                     gpointer             user_data)
{
  g_return_if_fail (SBX_IS_EXECUTOR (self));

  if (max_output == 0)
    {
      g_task_report_new_error (self, callback, user_data, sbx_executor_run_argv_limited_async,
                               SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_INVALID_ARGUMENT,
                               "The output limit of a limited run must be positive");
      return;
    }
  executor_run_async (self, sbx_executor_run_argv_limited_async,
                      limited_request (cwd, argv, max_output), cancellable, callback, user_data);
}

/**
 * sbx_executor_run_argv_limited_finish:
 * @self: a [class@Sbx.Executor]
 * @result: the result passed to the callback
 * @error: return location for a [error@Sbx.ExecutorError]
 *
 * Finishes [method@Sbx.Executor.run_argv_limited_async].
 *
 * Returns: (transfer full): the result, or %NULL with @error set
 *
 * Since: 0.1
 */
SbxRunResult *
sbx_executor_run_argv_limited_finish (SbxExecutor   *self,
                                      GAsyncResult  *result,
                                      GError       **error)
{
  return executor_run_finish (self, result, sbx_executor_run_argv_limited_async, error);
}

/**
 * sbx_executor_run_command:
 * @self: a [class@Sbx.Executor]
 * @cwd: (type filename): absolute working directory of the command
 * @command: a shell command line, run as `/bin/sh -c @command`
 * @cancellable: (nullable): cancelling it kills the whole process tree
 *   before the call returns
 * @error: return location for a [error@Sbx.ExecutorError]
 *
 * Runs a shell command.  See [method@Sbx.Executor.run_argv].
 *
 * Returns: (transfer full): the result, or %NULL with @error set
 *
 * Since: 0.1
 */
SbxRunResult *
sbx_executor_run_command (SbxExecutor   *self,
                          const char    *cwd,
                          const char    *command,
                          GCancellable  *cancellable,
                          GError       **error)
{
  g_autoptr(RunRequest) rr = NULL;

  g_return_val_if_fail (SBX_IS_EXECUTOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (command == NULL || command[0] == '\0')
    return (fail (error, SBX_EXECUTOR_ERROR_EMPTY_ARGV, "The shell command is empty"), NULL);
  rr = shell_request (cwd, command);
  return executor_run (self, rr, cancellable, error);
}

/**
 * sbx_executor_run_command_async:
 * @self: a [class@Sbx.Executor]
 * @cwd: (type filename): absolute working directory of the command
 * @command: a shell command line, run as `/bin/sh -c @command`
 * @cancellable: (nullable): cancelling it kills the whole process tree
 *   before the task completes
 * @callback: (scope async): called when the run is over
 * @user_data: data for @callback
 *
 * Asynchronous twin of [method@Sbx.Executor.run_command].
 *
 * Since: 0.1
 */
void
sbx_executor_run_command_async (SbxExecutor         *self,
                                const char          *cwd,
                                const char          *command,
                                GCancellable        *cancellable,
                                GAsyncReadyCallback  callback,
                                gpointer             user_data)
{
  g_return_if_fail (SBX_IS_EXECUTOR (self));

  if (command == NULL || command[0] == '\0')
    {
      g_task_report_new_error (self, callback, user_data, sbx_executor_run_command_async,
                               SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_EMPTY_ARGV,
                               "The shell command is empty");
      return;
    }
  executor_run_async (self, sbx_executor_run_command_async, shell_request (cwd, command),
                      cancellable, callback, user_data);
}

/**
 * sbx_executor_run_command_finish:
 * @self: a [class@Sbx.Executor]
 * @result: the result passed to the callback
 * @error: return location for a [error@Sbx.ExecutorError]
 *
 * Finishes [method@Sbx.Executor.run_command_async].
 *
 * Returns: (transfer full): the result, or %NULL with @error set
 *
 * Since: 0.1
 */
SbxRunResult *
sbx_executor_run_command_finish (SbxExecutor   *self,
                                 GAsyncResult  *result,
                                 GError       **error)
{
  return executor_run_finish (self, result, sbx_executor_run_command_async, error);
}
