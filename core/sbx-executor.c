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
#include "sbx-executor-egress-private.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx-compile-report-private.h"
#include "sbx-env-private.h"
#include "sbx-grant-private.h"
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
  SbxGrantReplay    *replay;        /* (mutex) spent and in-flight token IDs */
  GHashTable        *retained;      /* (mutex) token ID -> RetainedHandle */
  SbxGrantClockFunc  clock;         /* (mutex) tests only; NULL: wall clock */
  gpointer           clock_data;    /* (mutex) */
};

/* A filesystem grant's identity-pinned handle, kept from issue until the
 * token is spent, expires or the executor closes. */
typedef struct
{
  SbxGrantBinding *binding;
  char            *target;
  gboolean         exact;
  gint64           expiry_ms;
  int              fd;
} RetainedHandle;

static void
retained_handle_free (gpointer data)
{
  RetainedHandle *rh = data;

  if (rh->fd >= 0)
    close (rh->fd);
  sbx_grant_binding_free (rh->binding);
  g_free (rh->target);
  g_free (rh);
}

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
  g_clear_pointer (&self->replay, sbx_grant_replay_free);
  g_clear_pointer (&self->retained, g_hash_table_unref);
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
  self->replay = sbx_grant_replay_new ();
  self->retained = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, retained_handle_free);
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
  dirs.proxy_port = sbx_egress_policy_proxy_port (shared->egress, profile);   /* egress */

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
  self->guarantees = sbx_egress_compose_guarantees (shared->egress, profile, self->report,
                                                    self->guarantees);   /* egress */
  sbx_compile_report_freeze (self->report);

  /* Fail closed: the backend must achieve every required guarantee. */
  required |= sbx_egress_required_guarantees (shared->egress, profile);   /* egress */
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
  /* Close drops the replay registry (no token verifies any more: the key is
   * gone) and closes every retained handle. */
  if (self->retained != NULL)
    g_hash_table_remove_all (self->retained);
  if (self->replay != NULL)
    sbx_grant_replay_prune (self->replay, G_MAXINT64);
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
  /* Runs with grants (upstream RunCommandWithGrants). */
  gboolean       with_grants;
  char          *execution_id;
  char          *command;      /* the bound command: shell text or normalized argv */
  char         **grants;       /* the tokens; wiped when the request is freed */
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
  g_free (rr->execution_id);
  g_free (rr->command);
  for (guint i = 0; rr->grants != NULL && rr->grants[i] != NULL; i++)
    explicit_bzero (rr->grants[i], strlen (rr->grants[i]));
  g_strfreev (rr->grants);
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

/* ------------------------------------------------------------------------- */
/* Grants                                                                     */
/* ------------------------------------------------------------------------- */

static gboolean
grant_fail (GError    **error,
            int         code,
            const char *format,
            ...) G_GNUC_PRINTF (3, 4);

static gboolean
grant_fail (GError    **error,
            int         code,
            const char *format,
            ...)
{
  va_list args;

  va_start (args, format);
  g_propagate_error (error, g_error_new_valist (SBX_GRANT_ERROR, code, format, args));
  va_end (args);
  return FALSE;
}

/* (mutex) */
static gint64
grant_now_ms (SbxExecutor *self)
{
  if (self->clock != NULL)
    return self->clock (self->clock_data);
  return g_get_real_time () / 1000;
}

void
sbx_executor_set_grant_clock (SbxExecutor       *self,
                              SbxGrantClockFunc  clock,
                              gpointer           data)
{
  g_return_if_fail (SBX_IS_EXECUTOR (self));

  g_mutex_lock (&self->mutex);
  self->clock = clock;
  self->clock_data = data;
  g_mutex_unlock (&self->mutex);
}

guint
sbx_executor_get_n_replay (SbxExecutor *self)
{
  guint n;

  g_return_val_if_fail (SBX_IS_EXECUTOR (self), 0);

  g_mutex_lock (&self->mutex);
  n = sbx_grant_replay_size (self->replay);
  g_mutex_unlock (&self->mutex);
  return n;
}

guint
sbx_executor_get_n_retained (SbxExecutor *self)
{
  guint n;

  g_return_val_if_fail (SBX_IS_EXECUTOR (self), 0);

  g_mutex_lock (&self->mutex);
  n = g_hash_table_size (self->retained);
  g_mutex_unlock (&self->mutex);
  return n;
}

/* (mutex) Retained handles follow the replay rule: dropped once expiry < now. */
static void
prune_retained (SbxExecutor *self,
                gint64       now_ms)
{
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, self->retained);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    if (((RetainedHandle *) value)->expiry_ms < now_ms)
      g_hash_table_iter_remove (&iter);
}

static gboolean
is_filesystem_shape (SbxGrantShape shape)
{
  return shape == SBX_GRANT_SHAPE_FS_EXACT || shape == SBX_GRANT_SHAPE_FS_TREE;
}

typedef struct
{
  const char *grant_class;
  const char *target;
  const char *execution_id;
  gint64      expiry_ms;
} GrantEvent;

static void
add_grant_members (JsonBuilder *builder,
                   gpointer     data)
{
  const GrantEvent *ev = data;

  /* Never the token: whoever reads the audit log must not be able to spend it. */
  json_builder_set_member_name (builder, "class");
  json_builder_add_string_value (builder, ev->grant_class);
  json_builder_set_member_name (builder, "target");
  add_string_sanitized (builder, ev->target);
  json_builder_set_member_name (builder, "execution");
  add_string_sanitized (builder, ev->execution_id);
  json_builder_set_member_name (builder, "expiry_ms");
  json_builder_add_int_value (builder, ev->expiry_ms);
}

static char *
issue_grant_admitted (SbxExecutor  *self,
                      const char   *execution_id,
                      const char   *command,
                      const char   *cwd,
                      const char   *grant_class,
                      const char   *target_in,
                      GDateTime    *expiry,
                      GError      **error)
{
  SbxExecutorShared *shared = self->shared;
  g_autoptr(GError) local_error = NULL;
  g_autofree char *canonical_cwd = NULL;
  g_autofree char *target = NULL;
  g_autofree char *scope = NULL;
  g_autoptr(SbxGrantBinding) binding = NULL;
  g_auto(SbxGrantPayload) payload = { 0 };
  const SbxGrantClassInfo *info;
  SbxAccess access = SBX_ACCESS_DENY;
  gint64 now_ms;
  gint64 ttl_ms;
  gint64 expiry_ms;
  char *token;
  int fd = -1;
  GrantEvent ev;

  /* §5.5, in upstream's order. */
  if (!sbx_grant_text_valid (execution_id))
    return (grant_fail (error, SBX_GRANT_ERROR_MALFORMED,
                        "Grant malformed: the execution ID must be valid text (non-empty UTF-8, "
                        "no NUL, no leading or trailing white space)"), NULL);
  if (!sbx_grant_text_valid (command))
    return (grant_fail (error, SBX_GRANT_ERROR_MALFORMED,
                        "Grant malformed: the command must be valid text (non-empty UTF-8, "
                        "no NUL, no leading or trailing white space)"), NULL);
  canonical_cwd = sbx_path_canonical_root (cwd, &local_error);
  if (canonical_cwd == NULL)
    return (grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "Grant malformed: cwd “%s”: %s",
                        cwd != NULL ? cwd : "(null)", local_error->message), NULL);
  /* An unknown class is UNSUPPORTED whatever its target (upstream passes
   * such a target through step 5 unchanged and refuses it at step 6). */
  info = sbx_grant_class_lookup (grant_class);
  if (info == NULL)
    return (grant_fail (error, SBX_GRANT_ERROR_UNSUPPORTED,
                        "Grant class unsupported: “%s” is not a grant class",
                        grant_class != NULL && g_utf8_validate (grant_class, -1, NULL)
                        ? grant_class : "(invalid)"), NULL);
  /* Steps 5 and 6: the kind and scope are derived from the class and the
   * canonical target, so they cannot disagree with them, and step 11
   * (canonicalise again, authorise again) has nothing left to narrow. */
  target = sbx_grant_normalize_target (info, command, target_in, &scope, error);
  if (target == NULL)
    return NULL;
  if (info->shape == SBX_GRANT_SHAPE_COMMAND && strcmp (target, command) != 0)
    return (grant_fail (error, SBX_GRANT_ERROR_WRONG_COMMAND,
                        "Grant command mismatch: a %s target must be the command itself",
                        info->name), NULL);
  if (info->shape == SBX_GRANT_SHAPE_NET_PROXY && shared->egress == NULL)
    return (grant_fail (error, SBX_GRANT_ERROR_UNSUPPORTED,
                        "Grant class unsupported: %s needs an egress route, and this executor "
                        "set has none", info->name), NULL);
  if (!sbx_backend_supports_grant_class (shared->backend, info->name))
    return (grant_fail (error, SBX_GRANT_ERROR_UNSUPPORTED,
                        "Grant class unsupported: backend “%s” cannot enforce %s",
                        sbx_backend_get_name (shared->backend), info->name), NULL);
  if (!sbx_profile_access_for (shared->profile, info->kind, scope, &access, error))
    return NULL;
  if (access == SBX_ACCESS_DENY)
    return (grant_fail (error, SBX_GRANT_ERROR_DENIED,
                        "Capability denied: the profile denies %s on “%s”; it cannot be granted",
                        info->kind, scope[0] != '\0' ? scope : target), NULL);
  if (access == SBX_ACCESS_ALLOW)
    return (grant_fail (error, SBX_GRANT_ERROR_UNSUPPORTED,
                        "Grant class unsupported: the profile already allows %s on “%s”; "
                        "there is nothing to grant", info->kind, scope[0] != '\0' ? scope : target),
            NULL);
  /* The set's private directory (every executor's HOME, TMPDIR and state)
   * is denied whole by the compiled policy, whatever the profile says about
   * the host: it is Deny, so never grantable (no approval opens another
   * executor's files). */
  if (is_filesystem_shape (info->shape) && sbx_path_within (target, shared->owned_dir))
    return (grant_fail (error, SBX_GRANT_ERROR_DENIED,
                        "Capability denied: “%s” lies in the executor set's private directory, "
                        "which no grant opens", target), NULL);

  g_mutex_lock (&self->mutex);
  if (self->closed || !self->key_valid)
    {
      g_mutex_unlock (&self->mutex);
      return (fail (error, SBX_EXECUTOR_ERROR_CLOSED, "The executor is closed"), NULL);
    }
  now_ms = grant_now_ms (self);
  prune_retained (self, now_ms);
  ttl_ms = shared->grant_ttl / 1000;
  expiry_ms = expiry != NULL
              ? g_date_time_to_unix (expiry) * 1000 + g_date_time_get_microsecond (expiry) / 1000
              : now_ms + ttl_ms;
  if (!(now_ms < expiry_ms && expiry_ms <= now_ms + ttl_ms))
    {
      g_mutex_unlock (&self->mutex);
      return (grant_fail (error, SBX_GRANT_ERROR_EXPIRED,
                          "Grant expired: the expiry must lie after now and at most the set's "
                          "grant TTL (%" G_GINT64_FORMAT " ms) ahead; it is %" G_GINT64_FORMAT
                          " ms from now", ttl_ms, expiry_ms - now_ms), NULL);
    }
  if ((info->required & ~self->guarantees) != 0)
    {
      g_autofree char *names = guarantee_names (info->required & ~self->guarantees);

      g_mutex_unlock (&self->mutex);
      return (grant_fail (error, SBX_GRANT_ERROR_GUARANTEE_MISMATCH,
                          "Grant guarantee mismatch: %s needs %s, which this executor does not "
                          "achieve", info->name, names), NULL);
    }
  if (!fill_random (payload.nonce, sizeof payload.nonce, &local_error))
    {
      g_mutex_unlock (&self->mutex);
      return (grant_fail (error, SBX_GRANT_ERROR_UNSUPPORTED, "%s", local_error->message), NULL);
    }
  if (is_filesystem_shape (info->shape))
    {
      binding = sbx_grant_binding_capture (target, error);
      if (binding != NULL)
        fd = sbx_grant_acquire_handle (binding, info->shape == SBX_GRANT_SHAPE_FS_EXACT, error);
      if (fd < 0)
        {
          g_mutex_unlock (&self->mutex);
          return NULL;
        }
    }

  payload.execution_id = g_strdup (execution_id);
  payload.command = g_strdup (command);
  payload.cwd = g_strdup (canonical_cwd);
  payload.profile_fingerprint = g_strdup (sbx_profile_get_fingerprint (shared->profile));
  payload.route_fingerprint = g_strdup (sbx_egress_grant_route (shared->egress));
  payload.guarantee_bits = self->guarantees;
  payload.grant_class = g_strdup (info->name);
  payload.target = g_strdup (target);
  payload.binding = sbx_grant_binding_copy (binding);
  payload.expiry_ms = expiry_ms;
  token = sbx_grant_token_mint (self->grant_key, &payload);

  if (fd >= 0)
    {
      RetainedHandle *rh = g_new0 (RetainedHandle, 1);

      rh->binding = g_steal_pointer (&binding);
      rh->target = g_strdup (target);
      rh->exact = info->shape == SBX_GRANT_SHAPE_FS_EXACT;
      rh->expiry_ms = expiry_ms;
      rh->fd = fd;
      g_hash_table_replace (self->retained, sbx_grant_token_id (token), rh);
    }
  g_mutex_unlock (&self->mutex);

  ev.grant_class = info->name;
  ev.target = target;
  ev.execution_id = execution_id;
  ev.expiry_ms = expiry_ms;
  sbx_executor_shared_emit (shared, SBX_EVENT_GRANT_ISSUED, self->key, add_grant_members, &ev);
  return token;
}

/**
 * sbx_executor_issue_grant:
 * @self: a [class@Sbx.Executor]
 * @execution_id: names the one execution the grant is for; any valid text
 *   (':' included)
 * @command: the exact command the grant is for: the shell text given to
 *   [method@Sbx.Executor.run_command_with_grants], or
 *   [func@Sbx.grant_command_for_argv] of the vector given to
 *   [method@Sbx.Executor.run_argv_with_grants]
 * @cwd: (type filename): the working directory of that run; bound in its
 *   canonical form (symlinks resolved), so it must exist
 * @grant_class: one of the `SBX_GRANT_CLASS_*` strings, such as
 *   %SBX_GRANT_CLASS_COMMAND_START
 * @target: (nullable): what the class opens: the command for
 *   `command.start.v1` (%NULL means @command), an absolute path for the
 *   `filesystem.path.*` and `filesystem.tree.*` classes (canonicalised),
 *   `host:*` for the host classes, `tcp:*:PORT` for `network.broad.v1`
 * @expiry: (nullable): when the grant expires; %NULL means now plus the
 *   set's grant TTL.  It must lie after now and at most the TTL ahead.
 * @error: return location for a [error@Sbx.GrantError]
 *
 * Mints a single-use grant token that opens one %SBX_ACCESS_GATED
 * capability for one spawn of exactly @command, by exactly this executor.
 *
 * The token binds this executor (through its private key), @execution_id,
 * @command, the canonical @cwd, the profile fingerprint, the route
 * fingerprint, the guarantees the executor achieves, the class, the
 * normalized target and the expiry; a filesystem grant also binds the
 * identity (device, inode, type) of the target, and the executor keeps an
 * `O_PATH` handle on it, opened now without following any symlink, until the
 * token is spent or expires.
 *
 * Issuing reads the profile itself: a capability the profile denies gives
 * %SBX_GRANT_ERROR_DENIED, one it already allows gives
 * %SBX_GRANT_ERROR_UNSUPPORTED; only a gated one mints.  A class the backend
 * cannot enforce gives %SBX_GRANT_ERROR_UNSUPPORTED before the target is
 * looked at.  Issuing never prompts and never persists anything: the caller
 * is the approval system.
 *
 * The token is a secret for the caller: it never reaches the child (not in
 * its argv, environment or anything it can read) nor any reporter.
 *
 * Returns: (transfer full) (nullable): the token, or %NULL with @error set
 *   (%SBX_EXECUTOR_ERROR_CLOSED once the set is closed)
 *
 * Since: 0.1
 */
char *
sbx_executor_issue_grant (SbxExecutor  *self,
                          const char   *execution_id,
                          const char   *command,
                          const char   *cwd,
                          const char   *grant_class,
                          const char   *target,
                          GDateTime    *expiry,
                          GError      **error)
{
  char *token;

  g_return_val_if_fail (SBX_IS_EXECUTOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!sbx_executor_shared_enter (self->shared))
    return (fail (error, SBX_EXECUTOR_ERROR_CLOSED, "The executor set is closed"), NULL);
  token = issue_grant_admitted (self, execution_id, command, cwd, grant_class, target, expiry,
                                error);
  sbx_executor_shared_leave (self->shared);
  return token;
}

/* One filesystem delta of a verified token. */
typedef struct
{
  char            *id;
  const SbxGrantClassInfo *info;
  char            *target;
  SbxGrantBinding *binding;
  gint64           expiry_ms;
  int              fd;          /* fresh handle, -1 for host grants */
} FsDelta;

static void
fs_delta_free (gpointer data)
{
  FsDelta *d = data;

  if (d->fd >= 0)
    close (d->fd);
  g_free (d->id);
  g_free (d->target);
  sbx_grant_binding_free (d->binding);
  g_free (d);
}

/* What a batch of verified tokens opens for one spawn. */
typedef struct
{
  GPtrArray *ids;          /* char* reserved in the replay registry */
  GArray    *expiries;     /* gint64, parallel to ids */
  GPtrArray *fs;           /* FsDelta* */
  GArray    *ports;        /* guint16, network.broad.v1 */
  gboolean   command_start;
  SbxGuarantees may_drop;  /* bits a host grant may take from the expected set */
  GPtrArray *spent;        /* char* "class target: what it opened" */
  GPtrArray *proxy_targets; /* char* network.proxy-target.v1 targets, NULL-terminated at run */
} GrantBatch;

static void
grant_batch_clear (GrantBatch *b)
{
  g_clear_pointer (&b->ids, g_ptr_array_unref);
  g_clear_pointer (&b->expiries, g_array_unref);
  g_clear_pointer (&b->fs, g_ptr_array_unref);
  g_clear_pointer (&b->ports, g_array_unref);
  g_clear_pointer (&b->spent, g_ptr_array_unref);
  g_clear_pointer (&b->proxy_targets, g_ptr_array_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (GrantBatch, grant_batch_clear)

/* The consumption-time re-validation of a class and target (upstream
 * §5.6 step 4.4): lexical only, the token's MAC already vouches for what
 * was canonicalised at issue. */
static gboolean
target_fits_class (const SbxGrantClassInfo *info,
                   const char              *target)
{
  switch (info->shape)
    {
    case SBX_GRANT_SHAPE_COMMAND:
      return sbx_grant_text_valid (target);
    case SBX_GRANT_SHAPE_FS_EXACT:
    case SBX_GRANT_SHAPE_FS_TREE:
      return sbx_path_is_clean_absolute (target);
    case SBX_GRANT_SHAPE_FS_HOST:
      return strcmp (target, "host:*") == 0;
    case SBX_GRANT_SHAPE_NET_BROAD:
      return sbx_grant_broad_port (target) != 0;
    case SBX_GRANT_SHAPE_NET_PROXY:
      return g_str_has_prefix (target, "tcp:");
    default:
      return FALSE;
    }
}

static gboolean
same_identity_fd (int a,
                  int b)
{
  struct stat sa, sb;

  return fstat (a, &sa) == 0 && fstat (b, &sb) == 0
         && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino
         && (sa.st_mode & S_IFMT) == (sb.st_mode & S_IFMT);
}

/* (mutex) Verifies every token of @grants, in order, for this run
 * (upstream §5.6 steps 3-7).  The first failure aborts the batch and
 * nothing is consumed.  On success every token ID is reserved in the replay
 * registry (so a concurrent consumer of the same token gets REPLAY) and the
 * caller commits or un-reserves them. */
static gboolean
verify_batch_locked (SbxExecutor       *self,
                     const char        *execution_id,
                     const char        *command,
                     const char        *cwd,
                     const char *const *grants,
                     GrantBatch        *batch,
                     GError           **error)
{
  SbxExecutorShared *shared = self->shared;
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  gint64 now_ms = grant_now_ms (self);

  sbx_grant_replay_prune (self->replay, now_ms);
  prune_retained (self, now_ms);

  for (guint i = 0; grants != NULL && grants[i] != NULL; i++)
    {
      g_auto(SbxGrantPayload) p = { 0 };
      g_autofree char *id = sbx_grant_token_id (grants[i]);
      const SbxGrantClassInfo *info;

      if (sbx_grant_replay_contains (self->replay, id) || g_hash_table_contains (seen, id))
        return grant_fail (error, SBX_GRANT_ERROR_REPLAY,
                           "Grant replay: token %u was already spent (or is given twice)", i);
      g_hash_table_add (seen, g_strdup (id));
      if (!sbx_grant_token_open (self->grant_key, grants[i], &p, error))
        return FALSE;
      if (now_ms > p.expiry_ms)
        return grant_fail (error, SBX_GRANT_ERROR_EXPIRED,
                           "Grant expired: token %u expired %" G_GINT64_FORMAT " ms ago", i,
                           now_ms - p.expiry_ms);
      if (strcmp (p.execution_id, execution_id) != 0)
        return grant_fail (error, SBX_GRANT_ERROR_WRONG_EXECUTION,
                           "Grant execution mismatch: token %u was issued for another execution", i);
      if (strcmp (p.command, command) != 0)
        return grant_fail (error, SBX_GRANT_ERROR_WRONG_COMMAND,
                           "Grant command mismatch: token %u was issued for another command", i);
      if (strcmp (p.cwd, cwd) != 0)
        return grant_fail (error, SBX_GRANT_ERROR_WRONG_WORKING_DIRECTORY,
                           "Grant working directory mismatch: token %u was issued for “%s”, "
                           "not “%s”", i, p.cwd, cwd);
      if (strcmp (p.profile_fingerprint, sbx_profile_get_fingerprint (shared->profile)) != 0)
        return grant_fail (error, SBX_GRANT_ERROR_PROFILE_MISMATCH,
                           "Grant profile mismatch: token %u was issued under another profile", i);
      if (strcmp (p.route_fingerprint, sbx_egress_grant_route (shared->egress)) != 0)
        return grant_fail (error, SBX_GRANT_ERROR_ROUTE_MISMATCH,
                           "Grant route mismatch: token %u was issued for another egress route", i);
      if (p.guarantee_bits != (guint64) self->guarantees)
        return grant_fail (error, SBX_GRANT_ERROR_GUARANTEE_MISMATCH,
                           "Grant guarantee mismatch: token %u was issued under other guarantees "
                           "(0x%" G_GINT64_MODIFIER "x, now 0x%x)", i, p.guarantee_bits,
                           (unsigned) self->guarantees);
      info = sbx_grant_class_lookup (p.grant_class);
      if (info == NULL)
        return grant_fail (error, SBX_GRANT_ERROR_UNSUPPORTED,
                           "Grant class unsupported: token %u has an unknown class", i);
      if (!target_fits_class (info, p.target)
          || (is_filesystem_shape (info->shape)
              && (p.binding == NULL || strcmp (p.binding->canonical_path, p.target) != 0))
          || (!is_filesystem_shape (info->shape) && p.binding != NULL))
        return grant_fail (error, SBX_GRANT_ERROR_MALFORMED,
                           "Grant malformed: token %u's target does not fit %s", i, info->name);
      if (!sbx_backend_supports_grant_class (shared->backend, info->name))
        return grant_fail (error, SBX_GRANT_ERROR_UNSUPPORTED,
                           "Grant class unsupported: backend “%s” cannot enforce %s",
                           sbx_backend_get_name (shared->backend), info->name);
      if ((info->required & ~self->guarantees) != 0)
        return grant_fail (error, SBX_GRANT_ERROR_GUARANTEE_MISMATCH,
                           "Grant guarantee mismatch: %s needs guarantees this executor lacks",
                           info->name);

      switch (info->shape)
        {
        case SBX_GRANT_SHAPE_COMMAND:
          if (strcmp (p.target, command) != 0)
            return grant_fail (error, SBX_GRANT_ERROR_WRONG_COMMAND,
                               "Grant command mismatch: token %u starts another command", i);
          batch->command_start = TRUE;
          g_ptr_array_add (batch->spent, g_strdup_printf ("%s %s: authorized this start",
                                                          info->name, p.target));
          break;
        case SBX_GRANT_SHAPE_FS_EXACT:
        case SBX_GRANT_SHAPE_FS_TREE:
        case SBX_GRANT_SHAPE_FS_HOST:
          {
            FsDelta *d = g_new0 (FsDelta, 1);

            d->id = g_strdup (id);
            d->info = info;
            d->target = g_strdup (p.target);
            d->binding = g_steal_pointer (&p.binding);
            d->expiry_ms = p.expiry_ms;
            d->fd = -1;
            g_ptr_array_add (batch->fs, d);
            g_ptr_array_add (batch->spent,
                             g_strdup_printf ("%s %s: opened %s %s for this spawn", info->name,
                                              p.target,
                                              info->fs_allow & SBX_FS_WRITE ? "write" : "read+exec",
                                              info->shape == SBX_GRANT_SHAPE_FS_EXACT
                                              ? "on exactly this file"
                                              : info->shape == SBX_GRANT_SHAPE_FS_TREE
                                              ? "on this tree" : "on the whole host"));
            if (info->shape == SBX_GRANT_SHAPE_FS_HOST)
              batch->may_drop |= info->required;
          }
          break;
        case SBX_GRANT_SHAPE_NET_BROAD:
          {
            guint16 port = sbx_grant_broad_port (p.target);

            g_array_append_val (batch->ports, port);
            g_ptr_array_add (batch->spent,
                             g_strdup_printf ("%s %s: opened TCP port %u and DNS for this spawn",
                                              info->name, p.target, port));
          }
          break;
        case SBX_GRANT_SHAPE_NET_PROXY:
          if (shared->egress != NULL)
            {
              /* egress: the run is authorized for exactly these targets */
              g_ptr_array_add (batch->proxy_targets, g_strdup (p.target));
              g_ptr_array_add (batch->spent,
                               g_strdup_printf ("%s %s: authorized this target through the egress "
                                                "route for this run", info->name, p.target));
              break;
            }
          G_GNUC_FALLTHROUGH;
        default:
          /* Upstream step 6: proxy targets without a proxy. */
          return grant_fail (error, SBX_GRANT_ERROR_UNSUPPORTED,
                             "Grant class unsupported: %s needs an egress route, and this "
                             "executor set has none", info->name);
        }
      g_ptr_array_add (batch->ids, g_strdup (id));
      g_array_append_val (batch->expiries, p.expiry_ms);
    }

  /* Step 5: the command gate, after the token loop. */
  switch (sbx_profile_get_command (shared->profile))
    {
    case SBX_ACCESS_ALLOW:
      break;
    case SBX_ACCESS_GATED:
      if (!batch->command_start)
        return grant_fail (error, SBX_GRANT_ERROR_REQUIRED,
                           "Approval grant required: the profile gates command execution and no "
                           "%s grant for this command was given", SBX_GRANT_CLASS_COMMAND_START);
      break;
    case SBX_ACCESS_DENY:
    default:
      return grant_fail (error, SBX_GRANT_ERROR_DENIED,
                         "Capability denied: the profile denies command execution");
    }

  /* Step 7: every filesystem token's retained handle, re-acquired fresh. */
  for (guint i = 0; i < batch->fs->len; i++)
    {
      FsDelta *d = g_ptr_array_index (batch->fs, i);
      RetainedHandle *rh;

      if (d->info->shape == SBX_GRANT_SHAPE_FS_HOST)
        continue;
      rh = g_hash_table_lookup (self->retained, d->id);
      if (rh == NULL)
        return grant_fail (error, SBX_GRANT_ERROR_REPLAY,
                           "Grant replay: the handle of the grant on “%s” is gone (spent or "
                           "expired)", d->target);
      if (!sbx_grant_binding_equal (rh->binding, d->binding) || strcmp (rh->target, d->target) != 0
          || rh->exact != (d->info->shape == SBX_GRANT_SHAPE_FS_EXACT)
          || rh->expiry_ms != d->expiry_ms)
        return grant_fail (error, SBX_GRANT_ERROR_TARGET_CHANGED,
                           "Granted filesystem target changed: the retained handle of “%s” does "
                           "not match its token", d->target);
      if (!sbx_grant_binding_revalidate (d->binding, error))
        return FALSE;
      d->fd = sbx_grant_acquire_handle (d->binding, rh->exact, error);
      if (d->fd < 0)
        return FALSE;
      if (!same_identity_fd (d->fd, rh->fd))
        return grant_fail (error, SBX_GRANT_ERROR_TARGET_CHANGED,
                           "Granted filesystem target changed: “%s” is not the file approved",
                           d->target);
      for (guint k = 0; k < i; k++)
        {
          FsDelta *o = g_ptr_array_index (batch->fs, k);

          if (o->fd >= 0 && strcmp (o->target, d->target) == 0 && !same_identity_fd (o->fd, d->fd))
            return grant_fail (error, SBX_GRANT_ERROR_TARGET_CHANGED,
                               "Granted filesystem target changed: two grants name “%s” with "
                               "different identities", d->target);
        }
    }

  for (guint i = 0; i < batch->ids->len; i++)
    sbx_grant_replay_add (self->replay, g_ptr_array_index (batch->ids, i),
                          g_array_index (batch->expiries, gint64, i));
  return TRUE;
}

typedef struct
{
  const char *execution_id;
  const char *what;
} GrantSpentEvent;

static void
add_grant_spent_members (JsonBuilder *builder,
                         gpointer     data)
{
  const GrantSpentEvent *ev = data;

  json_builder_set_member_name (builder, "execution");
  add_string_sanitized (builder, ev->execution_id);
  json_builder_set_member_name (builder, "grant");
  add_string_sanitized (builder, ev->what);
}

/* (mutex) Un-reserves a batch that will not run: nothing is consumed. */
static void
unreserve_batch_locked (SbxExecutor *self,
                        GrantBatch  *batch)
{
  for (guint i = 0; i < batch->ids->len; i++)
    sbx_grant_replay_remove (self->replay, g_ptr_array_index (batch->ids, i));
}

/* (mutex) From here the tokens are burned, even if the spawn fails: their
 * IDs stay in the replay registry and their retained handles close. */
static void
commit_batch_locked (SbxExecutor *self,
                     GrantBatch  *batch)
{
  for (guint i = 0; i < batch->fs->len; i++)
    g_hash_table_remove (self->retained, ((FsDelta *) g_ptr_array_index (batch->fs, i))->id);
}

/* A policy for one spawn: the executor's base policy plus the deltas of a
 * batch (upstream applyFilesystemGrant): on every rule with the grant's
 * path and exactness the granted bits leave `deny` (a rule that then
 * controls nothing goes, since allow == deny == 0 would mean deny-all),
 * then the grant's own rule is appended, CANONICAL and carrying the fresh
 * identity-pinned fd.  network.broad.v1 turns MODE_DENY into MODE_PORTS
 * with DNS.  The strings point into the base policy and the batch, which
 * outlive the compile. */
typedef struct
{
  SbxPolicyV1    abi;
  SbxNetPolicyV1 net;
  GArray        *rules;
  GArray        *ports;
} TransientPolicy;

static void
transient_policy_clear (TransientPolicy *tp)
{
  g_clear_pointer (&tp->rules, g_array_unref);
  g_clear_pointer (&tp->ports, g_array_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (TransientPolicy, transient_policy_clear)

static void
transient_policy_build (TransientPolicy   *tp,
                        const SbxPolicyV1 *base,
                        const GrantBatch  *batch)
{
  tp->abi = *base;
  tp->net = *base->net;
  tp->rules = g_array_new (FALSE, FALSE, sizeof (SbxFsRuleV1));
  g_array_append_vals (tp->rules, base->fs_rules, base->n_fs_rules);

  for (guint i = 0; i < batch->fs->len; i++)
    {
      const FsDelta *d = g_ptr_array_index (batch->fs, i);
      gboolean exact = d->info->shape == SBX_GRANT_SHAPE_FS_EXACT;
      const char *path = d->info->shape == SBX_GRANT_SHAPE_FS_HOST ? "/" : d->target;
      SbxFsRuleV1 rule = { 0 };

      for (guint k = tp->rules->len; k-- > 0;)
        {
          SbxFsRuleV1 *r = &g_array_index (tp->rules, SbxFsRuleV1, k);

          if ((r->flags & SBX_FS_RULE_GLOB) || strcmp (r->path, path) != 0
              || ((r->flags & SBX_FS_RULE_EXACT) != 0) != exact)
            continue;
          r->deny &= ~d->info->fs_allow;
          if (r->allow == 0 && r->deny == 0)
            g_array_remove_index (tp->rules, k);
        }
      rule.struct_size = sizeof rule;
      rule.flags = (exact ? SBX_FS_RULE_EXACT : 0) | SBX_FS_RULE_CANONICAL;
      rule.allow = d->info->fs_allow;
      rule.deny = 0;
      rule.origin = SBX_FS_ORIGIN_GRANT;
      rule.fd = d->fd;
      rule.path = path;
      g_array_append_val (tp->rules, rule);
    }

  tp->ports = g_array_new (FALSE, FALSE, sizeof (guint16));
  if (batch->ports->len > 0)
    {
      if (tp->net.mode == SBX_NET_MODE_PORTS)
        g_array_append_vals (tp->ports, base->net->tcp_ports, base->net->n_tcp_ports);
      for (guint i = 0; i < batch->ports->len; i++)
        g_array_append_val (tp->ports, g_array_index (batch->ports, guint16, i));
      tp->net.mode = SBX_NET_MODE_PORTS;
      tp->net.flags |= SBX_NET_FLAG_DNS;
      tp->net.n_tcp_ports = tp->ports->len;
      tp->net.tcp_ports = (const guint16 *) (gpointer) tp->ports->data;
    }
  tp->abi.fs_rules = (const SbxFsRuleV1 *) (gpointer) tp->rules->data;
  tp->abi.n_fs_rules = tp->rules->len;
  tp->abi.net = &tp->net;
}

/* Compiles the transient spec of a batch with deltas (upstream §5.6 steps
 * 8-9).  The backend gets the grant fds during compile only (it dup()s what
 * it keeps); the recompiled guarantees must equal the expected ones. */
static SbxBackendSpec *
compile_transient (SbxExecutor  *self,
                   GrantBatch   *batch,
                   GError      **error)
{
  g_auto(TransientPolicy) tp = { 0 };
  g_autoptr(SbxCompileReport) report = sbx_compile_report_new ();
  g_autoptr(GError) compile_error = NULL;
  g_autoptr(SbxBackendSpec) spec = NULL;
  SbxLevel level;
  SbxGuarantees bits;
  SbxGuarantees keep = self->guarantees & ~batch->may_drop;

  transient_policy_build (&tp, sbx_policy_get_abi (self->policy), batch);
  spec = sbx_backend_compile (self->shared->backend, &tp.abi, report, &level, &bits,
                              &compile_error);
  if (spec == NULL)
    return (fail (error, SBX_EXECUTOR_ERROR_SPAWN_FAILED,
                  "Backend “%s” cannot compile the spec this run's grants need: %s",
                  sbx_backend_get_name (self->shared->backend), compile_error->message), NULL);
  if ((bits & ~batch->may_drop) != keep || (bits & ~self->guarantees) != 0)
    {
      g_autofree char *got = guarantee_names (bits);
      g_autofree char *want = guarantee_names (keep);

      return (grant_fail (error, SBX_GRANT_ERROR_GUARANTEE_MISMATCH,
                          "Grant guarantee mismatch: the spec compiled for this run's grants "
                          "achieves {%s}, expected {%s}", got, want), NULL);
    }
  return g_steal_pointer (&spec);
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
      return grant_fail (error, SBX_GRANT_ERROR_REQUIRED,
                         "Approval grant required: the profile gates command execution; run "
                         "with a %s grant for this command", SBX_GRANT_CLASS_COMMAND_START);
    case SBX_ACCESS_DENY:
    default:
      return grant_fail (error, SBX_GRANT_ERROR_DENIED,
                         "Capability denied: the profile denies command execution");
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
  g_autofree char *canonical_cwd = NULL;
  const char *cwd = rr->cwd;
  g_auto(GrantBatch) batch = { 0 };
  g_auto(SbxEgressRun) egress_run = { 0 };

  if (rr->argv == NULL || rr->argv[0] == NULL || rr->argv[0][0] == '\0')
    return (fail (error, SBX_EXECUTOR_ERROR_EMPTY_ARGV, "The command is empty"), NULL);
  if (rr->timeout < 0)
    return (fail (error, SBX_EXECUTOR_ERROR_INVALID_ARGUMENT,
                  "The timeout %" G_GINT64_FORMAT " µs is negative", rr->timeout), NULL);
  if (rr->with_grants)
    {
      /* Upstream §5.6 step 2: the working directory is canonicalised (and
       * the child runs there); text must be valid. */
      canonical_cwd = sbx_path_canonical_root (rr->cwd, &local_error);
      if (canonical_cwd == NULL)
        return (grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "Grant malformed: cwd “%s”: %s",
                            rr->cwd != NULL ? rr->cwd : "(null)", local_error->message), NULL);
      if (!sbx_grant_text_valid (rr->execution_id))
        return (grant_fail (error, SBX_GRANT_ERROR_MALFORMED,
                            "Grant malformed: the execution ID must be valid text"), NULL);
      if (!sbx_grant_text_valid (rr->command))
        return (grant_fail (error, SBX_GRANT_ERROR_MALFORMED,
                            "Grant malformed: the command must be valid text"), NULL);
      cwd = canonical_cwd;
    }
  else if (!check_cwd (rr->cwd, error))
    return NULL;
  if (g_cancellable_is_cancelled (cancellable))
    return (fail (error, SBX_EXECUTOR_ERROR_CANCELLED,
                  "The run was cancelled before it started; nothing was spawned"), NULL);

  if (!sbx_executor_shared_enter (shared))
    return (fail (error, SBX_EXECUTOR_ERROR_CLOSED, "The executor set is closed"), NULL);

  g_mutex_lock (&self->mutex);
  if (!self->closed && self->spec != NULL)
    spec = sbx_backend_spec_ref (self->spec);
  if (spec != NULL && rr->with_grants)
    {
      batch.ids = g_ptr_array_new_with_free_func (g_free);
      batch.expiries = g_array_new (FALSE, FALSE, sizeof (gint64));
      batch.fs = g_ptr_array_new_with_free_func (fs_delta_free);
      batch.ports = g_array_new (FALSE, FALSE, sizeof (guint16));
      batch.spent = g_ptr_array_new_with_free_func (g_free);
      batch.proxy_targets = g_ptr_array_new_with_free_func (g_free);
      ok = verify_batch_locked (self, rr->execution_id, rr->command, cwd,
                                (const char *const *) rr->grants, &batch, error);
      if (!ok)
        {
          g_mutex_unlock (&self->mutex);
          sbx_executor_shared_leave (shared);
          return NULL;
        }
    }
  g_mutex_unlock (&self->mutex);
  if (spec == NULL)
    {
      sbx_executor_shared_leave (shared);
      return (fail (error, SBX_EXECUTOR_ERROR_CLOSED, "The executor is closed"), NULL);
    }
  if (rr->with_grants)
    {
      /* Only a batch that changes the policy gets a transient spec: a
       * command.start.v1 grant alone authorizes the start and runs on the
       * executor's own spec (same policy, same guarantees). */
      if (batch.fs->len > 0 || batch.ports->len > 0)
        {
          SbxBackendSpec *transient = compile_transient (self, &batch, error);

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
              unreserve_batch_locked (self, &batch);
              g_mutex_unlock (&self->mutex);
              sbx_executor_shared_leave (shared);
              return NULL;
            }
          g_clear_pointer (&spec, sbx_backend_spec_unref);
          spec = transient;
        }
      g_mutex_lock (&self->mutex);
      commit_batch_locked (self, &batch);
      g_mutex_unlock (&self->mutex);
      for (guint i = 0; i < batch.spent->len; i++)
        {
          GrantSpentEvent ev = { rr->execution_id, g_ptr_array_index (batch.spent, i) };

          sbx_executor_shared_emit (shared, SBX_EVENT_GRANT_SPENT, self->key,
                                    add_grant_spent_members, &ev);
        }
    }
  else if (!check_command_gate (self, error))
    {
      sbx_executor_shared_leave (shared);
      return NULL;
    }

  /* Egress: authorize this run on the set's route (its grants' targets, or
   * every target for a Network=Allow profile). */
  if (batch.proxy_targets != NULL)
    g_ptr_array_add (batch.proxy_targets, NULL);
  if (!sbx_egress_run_begin (&egress_run, shared->egress, shared->profile, rr->execution_id,
                             batch.proxy_targets != NULL ? (const char *const *) batch.proxy_targets->pdata : NULL,
                             (const char *const *) self->environment, error))
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
  req.cwd = cwd;
  req.argv = (const char *const *) rr->argv;
  req.envp = (const char *const *) (egress_run.envp != NULL ? egress_run.envp : self->environment);
  req.stdin_fd = rr->fds[0];
  req.stdout_fd = rr->fds[1];
  req.stderr_fd = rr->fds[2];
  req.max_output = rr->max_output;
  req.deadline = rr->timeout > 0 ? g_get_monotonic_time () + rr->timeout : 0;
  req.cancellable = cancellable;
  req.close_fd = shared->close_fd;
  req.proxy_listen_fn = sbx_egress_run_serve;   /* egress */
  req.proxy_listen_data = &egress_run;

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
          if (batch.spent != NULL)
            {
              g_ptr_array_add (batch.spent, NULL);
              sbx_run_result_set_grants_spent (run_result, (const char *const *) batch.spent->pdata);
            }
          break;
        }
    }

  /* Egress: the execution ends with the run; its first denial is reported. */
  sbx_egress_run_end (&egress_run);
  if (egress_run.denial_target != NULL)
    sbx_executor_report_network_denial (shared, self->key, spawn_event.run_id, run_result,
                                        egress_run.denial_target, egress_run.denial_reason);

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

/* ------------------------------------------------------------------------- */
/* Runs with grants                                                           */
/* ------------------------------------------------------------------------- */

static RunRequest *
grants_request (const char          *cwd,
                const char *const   *argv,
                const char          *command,
                const char          *execution_id,
                const char *const   *grants,
                const SbxRunOptions *options)
{
  RunRequest *rr = run_request_new (cwd, argv, options);

  rr->with_grants = TRUE;
  rr->execution_id = g_strdup (execution_id);
  rr->command = g_strdup (command);
  rr->grants = g_strdupv ((char **) grants);
  return rr;
}

static RunRequest *
command_grants_request (const char          *cwd,
                        const char          *command,
                        const char          *execution_id,
                        const char *const   *grants,
                        const SbxRunOptions *options)
{
  const char *argv[] = { "/bin/sh", "-c", command, NULL };

  return grants_request (cwd, argv, command, execution_id, grants, options);
}

static RunRequest *
argv_grants_request (const char          *cwd,
                     const char *const   *argv,
                     const char          *execution_id,
                     const char *const   *grants,
                     const SbxRunOptions *options)
{
  g_autofree char *command = sbx_grant_command_for_argv (argv);

  /* A NULL command (empty or non-UTF-8 argv) is refused by executor_run:
   * EMPTY_ARGV first, then MALFORMED. */
  return grants_request (cwd, argv, command, execution_id, grants, options);
}

/**
 * sbx_executor_run_command_with_grants:
 * @self: a [class@Sbx.Executor]
 * @cwd: (type filename): working directory; canonicalised (symlinks
 *   resolved), and the command runs in the canonical directory
 * @command: a shell command line, run as `/bin/sh -c @command`
 * @execution_id: the execution the grants were issued for
 * @grants: (array zero-terminated=1) (nullable): the tokens to spend, from
 *   [method@Sbx.Executor.issue_grant]
 * @options: (nullable): a timeout, an output limit and stream redirections
 * @cancellable: (nullable): cancelling it kills the whole process tree
 *   before the call returns
 * @error: return location for a [error@Sbx.GrantError] or
 *   [error@Sbx.ExecutorError]
 *
 * Verifies every token in @grants, in order, then runs @command once with
 * what they open.  Each token is checked for replay (before its MAC), then
 * its MAC, expiry, execution ID, command, working directory, profile, route
 * and guarantees; the first failure refuses the whole batch, spends none of
 * its tokens and spawns nothing.  After the tokens, the command gate:
 * %SBX_GRANT_ERROR_DENIED when the profile denies commands,
 * %SBX_GRANT_ERROR_REQUIRED when it gates them and no `command.start.v1`
 * token for @command was given.
 *
 * Grants that change the policy (filesystem, network) get a spec compiled
 * for this one spawn, on the handles pinned when they were issued; it must
 * achieve exactly the expected guarantees.  Once verified and compiled the
 * tokens are spent, even if the spawn then fails: a second use gives
 * %SBX_GRANT_ERROR_REPLAY.  Of two concurrent runs with the same token,
 * exactly one spends it.  [method@Sbx.RunResult.get_grants_spent] lists what
 * each token opened.
 *
 * Returns: (transfer full): the result, or %NULL with @error set
 *
 * Since: 0.1
 */
SbxRunResult *
sbx_executor_run_command_with_grants (SbxExecutor          *self,
                                      const char           *cwd,
                                      const char           *command,
                                      const char           *execution_id,
                                      const char *const    *grants,
                                      const SbxRunOptions  *options,
                                      GCancellable         *cancellable,
                                      GError              **error)
{
  g_autoptr(RunRequest) rr = NULL;

  g_return_val_if_fail (SBX_IS_EXECUTOR (self), NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (command == NULL || command[0] == '\0')
    return (fail (error, SBX_EXECUTOR_ERROR_EMPTY_ARGV, "The shell command is empty"), NULL);
  rr = command_grants_request (cwd, command, execution_id, grants, options);
  return executor_run (self, rr, cancellable, error);
}

/**
 * sbx_executor_run_command_with_grants_async:
 * @self: a [class@Sbx.Executor]
 * @cwd: (type filename): working directory (canonicalised)
 * @command: a shell command line, run as `/bin/sh -c @command`
 * @execution_id: the execution the grants were issued for
 * @grants: (array zero-terminated=1) (nullable): the tokens to spend
 * @options: (nullable): a timeout, an output limit and stream redirections;
 *   copied, and its file descriptors duplicated, before this returns
 * @cancellable: (nullable): cancelling it kills the whole process tree
 *   before the task completes
 * @callback: (scope async): called when the run is over
 * @user_data: data for @callback
 *
 * Asynchronous twin of [method@Sbx.Executor.run_command_with_grants].
 *
 * Since: 0.1
 */
void
sbx_executor_run_command_with_grants_async (SbxExecutor          *self,
                                            const char           *cwd,
                                            const char           *command,
                                            const char           *execution_id,
                                            const char *const    *grants,
                                            const SbxRunOptions  *options,
                                            GCancellable         *cancellable,
                                            GAsyncReadyCallback   callback,
                                            gpointer              user_data)
{
  g_return_if_fail (SBX_IS_EXECUTOR (self));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  if (command == NULL || command[0] == '\0')
    {
      g_task_report_new_error (self, callback, user_data,
                               sbx_executor_run_command_with_grants_async,
                               SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_EMPTY_ARGV,
                               "The shell command is empty");
      return;
    }
  executor_run_async (self, sbx_executor_run_command_with_grants_async,
                      command_grants_request (cwd, command, execution_id, grants, options),
                      cancellable, callback, user_data);
}

/**
 * sbx_executor_run_command_with_grants_finish:
 * @self: a [class@Sbx.Executor]
 * @result: the result passed to the callback
 * @error: return location for a [error@Sbx.GrantError] or
 *   [error@Sbx.ExecutorError]
 *
 * Finishes [method@Sbx.Executor.run_command_with_grants_async].
 *
 * Returns: (transfer full): the result, or %NULL with @error set
 *
 * Since: 0.1
 */
SbxRunResult *
sbx_executor_run_command_with_grants_finish (SbxExecutor   *self,
                                             GAsyncResult  *result,
                                             GError       **error)
{
  return executor_run_finish (self, result, sbx_executor_run_command_with_grants_async, error);
}

/**
 * sbx_executor_run_argv_with_grants:
 * @self: a [class@Sbx.Executor]
 * @cwd: (type filename): working directory; canonicalised, and the command
 *   runs in the canonical directory
 * @argv: (array zero-terminated=1): the command and its arguments; no shell
 *   is involved
 * @execution_id: the execution the grants were issued for
 * @grants: (array zero-terminated=1) (nullable): the tokens to spend
 * @options: (nullable): a timeout, an output limit and stream redirections
 * @cancellable: (nullable): cancelling it kills the whole process tree
 *   before the call returns
 * @error: return location for a [error@Sbx.GrantError] or
 *   [error@Sbx.ExecutorError]
 *
 * Like [method@Sbx.Executor.run_command_with_grants] for an argument vector.
 * The grants bind the exact vector: their command must be
 * [func@Sbx.grant_command_for_argv] of @argv (each argument quoted for a
 * POSIX shell, joined by spaces).
 *
 * Returns: (transfer full): the result, or %NULL with @error set
 *
 * Since: 0.1
 */
SbxRunResult *
sbx_executor_run_argv_with_grants (SbxExecutor          *self,
                                   const char           *cwd,
                                   const char *const    *argv,
                                   const char           *execution_id,
                                   const char *const    *grants,
                                   const SbxRunOptions  *options,
                                   GCancellable         *cancellable,
                                   GError              **error)
{
  g_autoptr(RunRequest) rr = NULL;

  g_return_val_if_fail (SBX_IS_EXECUTOR (self), NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  rr = argv_grants_request (cwd, argv, execution_id, grants, options);
  return executor_run (self, rr, cancellable, error);
}

/**
 * sbx_executor_run_argv_with_grants_async:
 * @self: a [class@Sbx.Executor]
 * @cwd: (type filename): working directory (canonicalised)
 * @argv: (array zero-terminated=1): the command and its arguments
 * @execution_id: the execution the grants were issued for
 * @grants: (array zero-terminated=1) (nullable): the tokens to spend
 * @options: (nullable): a timeout, an output limit and stream redirections;
 *   copied, and its file descriptors duplicated, before this returns
 * @cancellable: (nullable): cancelling it kills the whole process tree
 *   before the task completes
 * @callback: (scope async): called when the run is over
 * @user_data: data for @callback
 *
 * Asynchronous twin of [method@Sbx.Executor.run_argv_with_grants].
 *
 * Since: 0.1
 */
void
sbx_executor_run_argv_with_grants_async (SbxExecutor          *self,
                                         const char           *cwd,
                                         const char *const    *argv,
                                         const char           *execution_id,
                                         const char *const    *grants,
                                         const SbxRunOptions  *options,
                                         GCancellable         *cancellable,
                                         GAsyncReadyCallback   callback,
                                         gpointer              user_data)
{
  g_return_if_fail (SBX_IS_EXECUTOR (self));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  executor_run_async (self, sbx_executor_run_argv_with_grants_async,
                      argv_grants_request (cwd, argv, execution_id, grants, options),
                      cancellable, callback, user_data);
}

/**
 * sbx_executor_run_argv_with_grants_finish:
 * @self: a [class@Sbx.Executor]
 * @result: the result passed to the callback
 * @error: return location for a [error@Sbx.GrantError] or
 *   [error@Sbx.ExecutorError]
 *
 * Finishes [method@Sbx.Executor.run_argv_with_grants_async].
 *
 * Returns: (transfer full): the result, or %NULL with @error set
 *
 * Since: 0.1
 */
SbxRunResult *
sbx_executor_run_argv_with_grants_finish (SbxExecutor   *self,
                                          GAsyncResult  *result,
                                          GError       **error)
{
  return executor_run_finish (self, result, sbx_executor_run_argv_with_grants_async, error);
}
