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
 * This file holds construction, the getters and close; the grant
 * transaction is in sbx-executor-grants.c, admission (every check before a
 * spawn, shared by runs and processes) in sbx-executor-admit.c, runs in
 * sbx-executor-run.c and processes in sbx-process.c.
 */
#include "sbx-executor-impl-private.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx-executor-error-private.h"
#include "sbx-compile-report-private.h"
#include "sbx-env-private.h"
#include "sbx-executor-set.h"
#include "sbx-scratch-private.h"
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

G_DEFINE_FINAL_TYPE (SbxExecutor, sbx_executor, G_TYPE_OBJECT)

static void
sbx_executor_finalize (GObject *object)
{
  SbxExecutor *self = SBX_EXECUTOR (object);

  sbx_executor_close_internal (self);
  g_clear_pointer (&self->shared, sbx_executor_shared_unref);
  g_clear_pointer (&self->egress, sbx_egress_unref);
  g_free (self->key);
  g_free (self->home);
  g_free (self->tmpdir);
  g_free (self->state_dir);
  g_strfreev (self->environment);
  g_clear_pointer (&self->policy, sbx_policy_free);
  g_clear_pointer (&self->report, sbx_compile_report_unref);
  g_clear_pointer (&self->run_report, sbx_compile_report_unref);
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
  self->retained = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, sbx_executor_retained_handle_free);
}

/* The values of the executor's retained-handle registry (filled by
 * sbx-executor-grants.c): freed here, with the table that owns them. */
void
sbx_executor_retained_handle_free (gpointer data)
{
  RetainedHandle *rh = data;

  if (rh->fd >= 0)
    close (rh->fd);
  sbx_grant_binding_free (rh->binding);
  g_free (rh->target);
  g_free (rh);
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

gboolean
sbx_executor_fill_random (guint8  *buf,
                          gsize    len,
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
  json_builder_add_string_value (builder, sbx_backend_get_name (sbx_executor_shared_get_backend (self->shared)));
  json_builder_set_member_name (builder, "level");
  json_builder_add_string_value (builder, sbx_level_to_string (self->level));
  json_builder_set_member_name (builder, "guarantees");
  json_builder_begin_array (builder);
  for (guint i = 0; names[i] != NULL; i++)
    json_builder_add_string_value (builder, names[i]);
  json_builder_end_array (builder);
  json_builder_set_member_name (builder, "profile");
  json_builder_add_string_value (builder, sbx_profile_get_fingerprint (sbx_executor_shared_get_profile (self->shared)));
  json_builder_set_member_name (builder, "report");
  json_builder_add_value (builder, sbx_compile_report_to_json_node (self->report));
}

/* The report an executor's compile (and a run's transient compile) fills: the roots as the resolved paths
 * they became and the set's rejected candidates. */
SbxCompileReport *
sbx_executor_report_new (SbxExecutorShared *shared,
                         SbxGuarantees      required)
{
  SbxProfile *profile = sbx_executor_shared_get_profile (shared);
  SbxCompileReport *selection = sbx_executor_shared_get_selection_report (shared);
  SbxCompileReport *report = sbx_compile_report_new ();

  sbx_compile_report_set_backend (report,
                                  sbx_backend_get_name (sbx_executor_shared_get_backend (shared)));
  sbx_compile_report_set_required (report, required);
  sbx_compile_report_add_root (report, "workspace", sbx_profile_get_workspace_root (profile),
                               sbx_profile_get_workspace_read (profile),
                               sbx_profile_get_workspace_write (profile));
  for (guint i = 0; i < sbx_profile_get_n_roots (profile); i++)
    sbx_compile_report_add_root (report, "root", sbx_profile_get_root_path (profile, i),
                                 sbx_profile_get_root_read (profile, i),
                                 sbx_profile_get_root_write (profile, i));
  for (guint i = 0; i < sbx_compile_report_get_n_rejected (selection); i++)
    sbx_compile_report_add_rejected (report,
                                     sbx_compile_report_get_rejected_name (selection, i),
                                     sbx_compile_report_get_rejected_reason (selection, i));
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
  SbxProfile *profile = sbx_executor_shared_get_profile (shared);
  const char *owned_dir = sbx_executor_shared_get_owned_dir (shared);
  const char *scratch_root = sbx_executor_shared_get_scratch_root (shared);
  const char *backend = sbx_backend_get_name (sbx_executor_shared_get_backend (shared));
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
      self->home = make_private_dir (owned_dir, "home", error);
      if (self->home == NULL)
        return FALSE;
      self->home_owned = TRUE;
    }
  else
    {
      self->home = real_home ();
    }
  self->tmpdir = make_private_dir (owned_dir, "tmp", error);
  if (self->tmpdir == NULL)
    return FALSE;
  self->state_dir = make_private_dir (owned_dir, "state", error);
  if (self->state_dir == NULL)
    return FALSE;

  /* The environment is a snapshot taken now, used by every run, grant runs
   * included: re-reading the parent's at spawn would let a variable set
   * after the executor was made reach a run its grant did not describe. */
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
  dirs.set_dir = owned_dir;
  dirs.proxy_port = sbx_egress_policy_proxy_port (self->egress, profile);   /* egress */

  /* Other sets' directories in the scratch root are denied by name.  One
   * created while the backend compiled was not named, and a backend that
   * snapshots directory listings (Landlock's carving) may have granted it:
   * list again afterwards and compile again until the list holds still. */
  for (guint attempt = 0;; attempt++)
    {
      g_auto(GStrv) again = NULL;

      if (others == NULL)
        {
          if (!sbx_scratch_list (scratch_root, owned_dir, &others, &entries, &list_error))
            {
              g_set_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_SCRATCH,
                           "Cannot list the other executor sets for key “%s”: %s",
                           self->key, list_error->message);
              return FALSE;
            }
        }
      dirs.other_set_dirs = (const char *const *) others;
      dirs.scratch_root = scratch_root;
      dirs.scratch_entries = (const char *const *) entries;
      g_clear_pointer (&self->policy, sbx_policy_free);
      self->policy = sbx_policy_new_for_profile (profile, &dirs);

      g_clear_pointer (&self->report, sbx_compile_report_unref);
      self->report = sbx_executor_report_new (shared, required);
      self->spec = sbx_backend_compile (sbx_executor_shared_get_backend (shared), sbx_policy_get_abi (self->policy),
                                        self->report, &self->level, &self->guarantees, &compile_error);
      if (self->spec == NULL)
        {
          g_set_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_COMPILE_FAILED,
                       "Backend “%s” cannot compile the profile for key “%s”: %s",
                       backend, self->key, compile_error->message);
          return FALSE;
        }
      again = sbx_scratch_list_set_dirs (scratch_root, owned_dir, &list_error);
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
                       scratch_root, self->key);
          return FALSE;
        }
      {
        GStrv merged = strv_union ((const char *const *) others, (const char *const *) again);

        g_strfreev (others);
        others = merged;
      }
    }
  self->guarantees = sbx_egress_compose_guarantees (self->egress, profile, self->report,
                                                    self->guarantees);   /* egress */
  sbx_compile_report_set_scope (self->report, SBX_REPORT_SCOPE_EXECUTOR);
  sbx_compile_report_freeze (self->report);
  /* What a run on the executor's own spec got: the same facts, as the
   * run's report (made once, shared by every such run). */
  g_clear_pointer (&self->run_report, sbx_compile_report_unref);
  self->run_report = sbx_compile_report_dup (self->report);
  sbx_compile_report_set_scope (self->run_report, SBX_REPORT_SCOPE_RUN);
  sbx_compile_report_freeze (self->run_report);

  /* Fail closed: the backend must achieve every required guarantee. */
  required |= sbx_egress_required_guarantees (self->egress, profile);   /* egress */
  missing = required & ~self->guarantees;
  if (missing != 0)
    {
      g_autofree char *names = sbx_executor_guarantee_names (missing);

      g_set_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_MISSING_GUARANTEES,
                   "Backend “%s” does not achieve guarantees the profile requires (%s); "
                   "refusing to run without them", backend, names);
      return FALSE;
    }

  if (!sbx_executor_fill_random (self->grant_key, sizeof self->grant_key, error))
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
                           SbxEgress         *egress,
                           const char        *key,
                           GError           **error)
{
  g_autoptr(SbxExecutor) self = NULL;
  g_autoptr(GError) local_error = NULL;

  g_return_val_if_fail (shared != NULL, NULL);
  g_return_val_if_fail (key != NULL, NULL);

  self = g_object_new (SBX_TYPE_EXECUTOR, NULL);
  self->shared = sbx_executor_shared_ref (shared);
  self->egress = egress != NULL ? sbx_egress_ref (egress) : NULL;
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
 * would not exist).  A run with grants may hold fewer: see
 * [method@Sbx.RunResult.get_spawn_guarantees].
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
 * This is what a run *without grants* gets (its scope is
 * %SBX_REPORT_SCOPE_EXECUTOR).  A run whose grants change the policy runs
 * under a spec compiled for it alone and may hold less: a host grant or a
 * `network.broad.v1` grant takes guarantees away.  What held for one run is
 * its own report: [method@Sbx.PreparedProcess.get_report],
 * [method@Sbx.Process.get_spawn_report],
 * [method@Sbx.RunResult.get_spawn_report].
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
 * The HOME of this executor's children, as a path on the host: a private
 * 0700 directory under the set's scratch child, or the real HOME when the
 * profile asks for it.  Where `linux-userns` shows TMPDIR at `/tmp` and the
 * private HOME lies under the host's `/tmp`, the child sees it at
 * `/home/sbx` (`HOME=/home/sbx`; see [method@Sbx.Executor.get_tmpdir]).
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
 * The private 0700 TMPDIR of this executor's children, as a path on the
 * host (the shared /tmp is never implied).  A backend may show it to the
 * child at another path and then sets TMPDIR to that path: Linux's
 * `linux-userns` shows it at `/tmp` (`TMPDIR=/tmp`) where its mount view
 * can (docs/linux-backend.md, "Temporary files"; the report's `tmp` entry
 * says what holds).
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
 * LOGNAME, SHELL and TZ, with HOME and TMPDIR forced to the executor's own
 * (host paths: a backend that shows them at other paths replaces exactly
 * these values, see [method@Sbx.Executor.get_tmpdir]).  Nothing else of
 * the parent's environment reaches a child.
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

  if (sbx_executor_shared_is_closing (self->shared))
    return TRUE;
  g_mutex_lock (&self->mutex);
  closed = self->closed;
  g_mutex_unlock (&self->mutex);
  return closed;
}
