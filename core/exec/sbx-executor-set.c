/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SbxExecutorSet: the owner.  Selects the backend once, owns a private
 * scratch child, memoizes one SbxExecutor per key, and closes everything.
 *
 * LOCKING
 *   set->mutex protects `executors`, `close_state` and `close_error`;
 *   set->cond is signalled when a pending construction ends and when close
 *   finishes.  The shared state (sbx-executor-shared-private.h) has its own
 *   lock, taken after set->mutex when both are held; neither is ever held
 *   across a plugin call (backend compile/spawn/release, reporter
 *   open/emit/close) or while waiting for a child.
 *
 * for_key: a new key is inserted as a *pending* entry (counted against the
 * limit) while one caller constructs it outside the lock; concurrent callers
 * of the same key wait on set->cond and then return the same executor.  A
 * failed construction removes its entry (it does not count).
 *
 * close: the first caller runs the sequence, every concurrent or later
 * caller waits for it and gets a copy of the same result:
 *   1. no admission (run, spawn, construction) succeeds any more;
 *   2. the close fd becomes readable: every supervising run kills its tree;
 *      prepared processes are closed, running ones killed and reaped (the
 *      close hooks they registered with the shared state);
 *   3. wait until no admission is left (runs returned, constructions done);
 *   4. close every executor: release its spec (once), wipe its grant key;
 *   5. stop the egress route;
 *   6. close the reporters, remove the owned scratch child (only that).
 *
 * The set calls the executors it owns and the shared state; nothing below
 * calls the set.
 */
#include "sbx-executor-set.h"
#include "sbx-executor-private.h"
#include "sbx-executor-egress-private.h"

#include <errno.h>
#include <string.h>

#include "sbx-compile-report-private.h"
#include "sbx-path-private.h"
#include "sbx-registry-private.h"
#include "sbx-scratch-private.h"
#include "sbx-profile-private.h"
#include "sbx-executor-set-options-private.h"

/**
 * SbxExecutorSet:
 *
 * The owner of a group of [class@Sbx.Executor]s sharing one profile and one
 * backend.
 *
 * Creating a set checks its [struct@Sbx.ExecutorSetOptions], selects the
 * strongest loaded backend that can enforce what the profile requires (once,
 * for the whole set; every rejected candidate is kept in the selection
 * report), opens the reporters and creates a private
 * `sandbox-executors-XXXXXX` directory (mode 0700) under the scratch root.
 * The set holds an flock() on a marker file in it (`.sbx-live`) for exactly
 * its lifetime; before creating its own directory, a new set reaps the
 * directories of dead sets of the same user in the same scratch root (see
 * [func@Sbx.ExecutorSet.find_stale_scratch]), so the scratch of a
 * supervisor killed with SIGKILL does not stay forever.
 *
 * [method@Sbx.ExecutorSet.for_key] memoizes one executor per key, each with
 * its own HOME and TMPDIR under that directory, its own grant key and the
 * profile compiled once.  The number of distinct keys is capped for the
 * set's lifetime.
 *
 * [method@Sbx.ExecutorSet.close] is a lifecycle barrier: it stops new
 * admissions, kills the process trees of running commands and waits for
 * them, releases every compiled spec, wipes the grant keys and removes only
 * the set's own directory.  Dropping the last reference closes the set too.
 *
 * Since: 0.1
 */
typedef enum
{
  CLOSE_NOT_STARTED,
  CLOSE_RUNNING,
  CLOSE_DONE,
} CloseState;

typedef struct
{
  SbxExecutor *executor;   /* NULL while pending */
} Entry;

struct _SbxExecutorSet
{
  GObject                parent_instance;

  /* Construct-only. */
  SbxProfile            *profile;
  SbxExecutorSetOptions *options;

  /* Set by init, immutable afterwards. */
  SbxRegistry           *registry;
  SbxExecutorShared     *shared;
  SbxEgress             *egress;       /* (nullable) the set's route; each executor holds it too */
  int                    max_executors;

  GMutex                 mutex;
  GCond                  cond;
  GHashTable            *executors;    /* (mutex) key -> Entry* */
  CloseState             close_state;  /* (mutex) */
  GError                *close_error;  /* (mutex) */
};

enum
{
  PROP_0,
  PROP_PROFILE,
  PROP_OPTIONS,
  PROP_BACKEND_NAME,
  PROP_MAX_EXECUTORS,
  PROP_OWNED_DIR,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void sbx_executor_set_initable_iface_init (GInitableIface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SbxExecutorSet, sbx_executor_set, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE,
                                                      sbx_executor_set_initable_iface_init))

static gboolean
set_fail (GError    **error,
          int         code,
          const char *format,
          ...) G_GNUC_PRINTF (3, 4);

static gboolean
set_fail (GError    **error,
          int         code,
          const char *format,
          ...)
{
  va_list args;

  va_start (args, format);
  g_propagate_error (error, g_error_new_valist (SBX_EXECUTOR_SET_ERROR, code, format, args));
  va_end (args);
  return FALSE;
}

/* ------------------------------------------------------------------------- */
/* GObject                                                                    */
/* ------------------------------------------------------------------------- */

static void
entry_free (gpointer data)
{
  Entry *entry = data;

  g_clear_object (&entry->executor);
  g_free (entry);
}

static void
sbx_executor_set_dispose (GObject *object)
{
  SbxExecutorSet *self = SBX_EXECUTOR_SET (object);
  g_autoptr(GError) error = NULL;

  /* Dropping the last reference closes the set; a successfully initialised
   * set that was never closed still cleans up after itself. */
  if (self->shared != NULL && !sbx_executor_set_close (self, NULL, &error))
    g_debug ("closing executor set %s on dispose: %s",
             sbx_executor_shared_get_set_id (self->shared), error->message);

  G_OBJECT_CLASS (sbx_executor_set_parent_class)->dispose (object);
}

static void
sbx_executor_set_finalize (GObject *object)
{
  SbxExecutorSet *self = SBX_EXECUTOR_SET (object);

  g_clear_pointer (&self->profile, sbx_profile_unref);
  g_clear_pointer (&self->options, sbx_executor_set_options_free);
  g_clear_object (&self->registry);
  g_clear_pointer (&self->shared, sbx_executor_shared_unref);
  g_clear_pointer (&self->egress, sbx_egress_unref);
  g_clear_pointer (&self->executors, g_hash_table_unref);
  g_clear_error (&self->close_error);
  g_mutex_clear (&self->mutex);
  g_cond_clear (&self->cond);

  G_OBJECT_CLASS (sbx_executor_set_parent_class)->finalize (object);
}

static void
sbx_executor_set_get_property (GObject    *object,
                               guint       prop_id,
                               GValue     *value,
                               GParamSpec *pspec)
{
  SbxExecutorSet *self = SBX_EXECUTOR_SET (object);

  switch (prop_id)
    {
    case PROP_PROFILE:
      g_value_set_boxed (value, self->profile);
      break;
    case PROP_OPTIONS:
      g_value_set_boxed (value, self->options);
      break;
    case PROP_BACKEND_NAME:
      g_value_set_string (value, sbx_executor_set_get_backend_name (self));
      break;
    case PROP_MAX_EXECUTORS:
      g_value_set_int (value, self->max_executors);
      break;
    case PROP_OWNED_DIR:
      g_value_set_string (value, sbx_executor_set_get_owned_dir (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
    }
}

static void
sbx_executor_set_set_property (GObject      *object,
                               guint         prop_id,
                               const GValue *value,
                               GParamSpec   *pspec)
{
  SbxExecutorSet *self = SBX_EXECUTOR_SET (object);

  switch (prop_id)
    {
    case PROP_PROFILE:
      self->profile = g_value_dup_boxed (value);
      break;
    case PROP_OPTIONS:
      self->options = g_value_dup_boxed (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
    }
}

static void
sbx_executor_set_class_init (SbxExecutorSetClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = sbx_executor_set_dispose;
  object_class->finalize = sbx_executor_set_finalize;
  object_class->get_property = sbx_executor_set_get_property;
  object_class->set_property = sbx_executor_set_set_property;

  /**
   * SbxExecutorSet:profile:
   *
   * The profile every executor of the set runs under.
   *
   * Since: 0.1
   */
  properties[PROP_PROFILE] =
    g_param_spec_boxed ("profile", NULL, NULL, SBX_TYPE_PROFILE,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * SbxExecutorSet:options:
   *
   * The options the set was created with (a copy).
   *
   * Since: 0.1
   */
  properties[PROP_OPTIONS] =
    g_param_spec_boxed ("options", NULL, NULL, SBX_TYPE_EXECUTOR_SET_OPTIONS,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * SbxExecutorSet:backend-name:
   *
   * The name of the backend extension selected for the set.
   *
   * Since: 0.1
   */
  properties[PROP_BACKEND_NAME] =
    g_param_spec_string ("backend-name", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * SbxExecutorSet:max-executors:
   *
   * The most distinct keys the set will ever hold.
   *
   * Since: 0.1
   */
  properties[PROP_MAX_EXECUTORS] =
    g_param_spec_int ("max-executors", NULL, NULL, 0, G_MAXINT, 0,
                      G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * SbxExecutorSet:owned-dir:
   *
   * The set's private directory under the scratch root.
   *
   * Since: 0.1
   */
  properties[PROP_OWNED_DIR] =
    g_param_spec_string ("owned-dir", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
sbx_executor_set_init (SbxExecutorSet *self)
{
  g_mutex_init (&self->mutex);
  g_cond_init (&self->cond);
  self->executors = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, entry_free);
}

static gboolean
sbx_executor_set_initable_init (GInitable     *initable,
                                GCancellable  *cancellable,
                                GError       **error)
{
  SbxExecutorSet *self = SBX_EXECUTOR_SET (initable);
  const SbxExecutorSetOptions *options;
  g_autoptr(SbxExecutorShared) shared = NULL;
  g_autoptr(SbxCompileReport) selection_report = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autofree char *scratch = NULL;
  g_autofree char *owned_dir = NULL;
  g_autoptr(SbxEgress) egress = NULL;
  SbxBackend *backend;
  int live_fd = -1;
  SbxBackendSelection selection = { 0 };
  g_autofree char *default_scratch = NULL;
  const char *scratch_option;
  GTimeSpan ttl;

  g_return_val_if_fail (self->shared == NULL, FALSE);

  /* No options: every default. */
  if (self->options == NULL)
    self->options = sbx_executor_set_options_new ();
  options = self->options;

  /* Validation, in upstream's order. */
  if (self->profile == NULL || sbx_profile_get_access_version (self->profile) != SBX_ACCESS_VERSION)
    return set_fail (error, SBX_EXECUTOR_SET_ERROR_INVALID_PROFILE,
                     "The executor set needs a valid profile");
  scratch_option = options != NULL ? sbx_executor_set_options_get_scratch_root (options) : NULL;
  if (scratch_option == NULL || scratch_option[0] == '\0')
    {
      default_scratch = sbx_scratch_default_root (error);
      if (default_scratch == NULL)
        return FALSE;
      scratch_option = default_scratch;
    }
  self->max_executors = options != NULL ? sbx_executor_set_options_get_max_executors (options) : 0;
  if (self->max_executors == 0)
    self->max_executors = SBX_EXECUTOR_SET_DEFAULT_MAX_EXECUTORS;
  if (self->max_executors < 0)
    return set_fail (error, SBX_EXECUTOR_SET_ERROR_INVALID_OPTIONS,
                     "The executor set's maximum number of executors must be positive, not %d",
                     self->max_executors);
  ttl = options != NULL ? sbx_executor_set_options_get_grant_ttl (options)
                        : SBX_EXECUTOR_SET_DEFAULT_GRANT_TTL;
  if (ttl <= 0)
    return set_fail (error, SBX_EXECUTOR_SET_ERROR_INVALID_OPTIONS,
                     "The executor set's grant TTL must be positive, not %" G_GINT64_FORMAT " µs",
                     ttl);
  scratch = sbx_path_canonical_root (scratch_option, &local_error);
  if (scratch == NULL)
    return set_fail (error, SBX_EXECUTOR_SET_ERROR_INVALID_OPTIONS,
                     "The executor set's scratch root “%s” is unusable: %s",
                     scratch_option, local_error->message);

  /* A root reached through a symlink lying in a set's scratch directory
   * (any set's: a killed supervisor leaves its directory behind) was
   * possibly planted by a sandboxed command: refused, like links in the
   * profile's own writable roots (sbx-profile.c, check_planted_links). */
  {
    GPtrArray *links = sbx_profile_get_root_links (self->profile);

    for (guint i = 0; links != NULL && i < links->len; i++)
      {
        const SbxPathLink *link = g_ptr_array_index (links, i);
        g_autofree char *prefix = g_build_filename (scratch, SBX_SET_DIR_PREFIX, NULL);

        if (g_str_has_prefix (link->location, prefix))
          return set_fail (error, SBX_EXECUTOR_SET_ERROR_INVALID_PROFILE,
                           "A root of the profile is reached through the symbolic link %s -> %s, "
                           "which lies in an executor set's scratch directory under %s where a "
                           "sandboxed command could have planted it; pass the resolved path",
                           link->location, link->target, scratch);
      }
  }

  self->registry = sbx_executor_set_options_get_registry (options) != NULL
                   ? g_object_ref (sbx_executor_set_options_get_registry (options))
                   : g_object_ref (sbx_registry_get_default ());

  shared = sbx_executor_shared_new (self->profile, ttl, error);
  if (shared == NULL)
    return FALSE;

  /* The backend is selected once, here, for every executor of the set. */
  selection.unconfined = sbx_profile_get_isolation (self->profile) == SBX_ISOLATION_UNCONFINED;
  selection.required_guarantees = sbx_profile_get_required_guarantees (self->profile);
  selection.forced_backend = sbx_executor_set_options_get_backend (options);
  selection_report = sbx_compile_report_new ();
  sbx_compile_report_set_required (selection_report, selection.required_guarantees);
  backend = sbx_registry_select_backend (self->registry, &selection, selection_report,
                                         &local_error);
  if (backend == NULL)
    return set_fail (error, SBX_EXECUTOR_SET_ERROR_BACKEND_UNAVAILABLE, "%s",
                     local_error->message);
  sbx_compile_report_set_backend (selection_report, sbx_backend_get_name (backend));
  sbx_compile_report_freeze (selection_report);
  sbx_executor_shared_set_backend (shared, backend, g_steal_pointer (&selection_report));

  for (guint i = 0; i < sbx_executor_set_options_get_n_reporters (options); i++)
    {
      const char *name = sbx_executor_set_options_get_reporter_name (options, i);
      SbxReporterSink *sink;

      sink = sbx_registry_open_reporter (self->registry, name,
                                         sbx_executor_set_options_get_reporter_config (options, i),
                                         &local_error);
      if (sink == NULL)
        return set_fail (error, SBX_EXECUTOR_SET_ERROR_REPORTER,
                         "Cannot open reporter “%s”: %s", name, local_error->message);
      sbx_executor_shared_add_sink (shared, sink);
    }

  /* Egress: the set's route, started once for every executor of the set. */
  if (sbx_executor_set_options_get_egress_route (options) != NULL)
    {
      egress = sbx_egress_start (self->registry, sbx_executor_set_options_get_egress_extension (options),
                                 sbx_executor_set_options_get_egress_route (options),
                                 self->profile, error);
      if (egress == NULL)
        return FALSE;
    }

  /* The set's own directory and its liveness lock (reaping dead sets'
   * directories first). */
  if (!sbx_scratch_create_set_dir (scratch, &owned_dir, &live_fd, error))
    return FALSE;
  sbx_executor_shared_set_scratch (shared, g_steal_pointer (&scratch),
                                   g_steal_pointer (&owned_dir), live_fd);

  self->egress = g_steal_pointer (&egress);
  self->shared = g_steal_pointer (&shared);
  return TRUE;
}

static void
sbx_executor_set_initable_iface_init (GInitableIface *iface)
{
  iface->init = sbx_executor_set_initable_init;
}

/* ------------------------------------------------------------------------- */
/* Public API                                                                 */
/* ------------------------------------------------------------------------- */

/**
 * sbx_executor_set_new:
 * @profile: the profile of every executor of the set
 * @options: (nullable): the options, or %NULL for the defaults: the scratch
 *   root `$XDG_RUNTIME_DIR/sbx` (created with mode 0700) or, without a usable
 *   `$XDG_RUNTIME_DIR`, the temporary directory; at most
 *   %SBX_EXECUTOR_SET_DEFAULT_MAX_EXECUTORS executors; the grant TTL
 *   %SBX_EXECUTOR_SET_DEFAULT_GRANT_TTL
 * @error: return location for a [error@Sbx.ExecutorSetError]
 *
 * Creates an executor set: validates @options, selects the backend (once,
 * for the whole set), opens the reporters and creates the set's private
 * directory under the scratch root.
 *
 * It never returns a set that claims more than the host gives: when no
 * loaded backend can enforce what @profile requires, it fails with
 * %SBX_EXECUTOR_SET_ERROR_BACKEND_UNAVAILABLE.  Bindings create sets through
 * #GInitable (`Sbx.ExecutorSet(profile=..., options=...)` plus `init()`).
 *
 * Returns: (transfer full) (nullable): the set, or %NULL with @error set
 *
 * Since: 0.1
 */
SbxExecutorSet *
sbx_executor_set_new (SbxProfile                  *profile,
                      const SbxExecutorSetOptions *options,
                      GError                     **error)
{
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return g_initable_new (SBX_TYPE_EXECUTOR_SET, NULL, error,
                         "profile", profile,
                         "options", options,
                         NULL);
}

static gboolean
key_is_valid (const char *key)
{
  const char *last;

  if (key[0] == '\0' || !g_utf8_validate (key, -1, NULL))
    return FALSE;
  if (g_unichar_isspace (g_utf8_get_char (key)))
    return FALSE;
  last = g_utf8_find_prev_char (key, key + strlen (key));
  return last == NULL || !g_unichar_isspace (g_utf8_get_char (last));
}

/**
 * sbx_executor_set_for_key:
 * @self: a [class@Sbx.ExecutorSet]
 * @key: (not nullable): authority identity: non-empty UTF-8 without leading
 *   or trailing whitespace
 * @error: return location for a [error@Sbx.ExecutorSetError]
 *
 * Returns the memoized executor for @key, creating it on first use.  The
 * same key always gives the same executor (the same HOME, TMPDIR and grant
 * key), also when many threads ask at once; use distinct keys for distinct
 * authority identities.
 *
 * Creating an executor compiles the profile with the set's backend and fails
 * closed with %SBX_EXECUTOR_SET_ERROR_MISSING_GUARANTEES when the backend
 * does not achieve every guarantee the profile requires.
 *
 * Returns: (transfer full) (nullable): the executor, or %NULL with @error set
 *   once the set is closed or [property@Sbx.ExecutorSet:max-executors] is
 *   reached
 *
 * Since: 0.1
 */
SbxExecutor *
sbx_executor_set_for_key (SbxExecutorSet  *self,
                          const char      *key,
                          GError         **error)
{
  g_autoptr(SbxExecutor) executor = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autoptr(SbxSharedGuard) guard = NULL;
  Entry *entry;

  g_return_val_if_fail (SBX_IS_EXECUTOR_SET (self), NULL);
  g_return_val_if_fail (key != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!key_is_valid (key))
    {
      g_autofree char *shown = g_utf8_make_valid (key, -1);

      return (set_fail (error, SBX_EXECUTOR_SET_ERROR_INVALID_KEY,
                        "Invalid executor key “%s”: it must be non-empty UTF-8 without "
                        "leading or trailing whitespace", shown), NULL);
    }
  if (self->shared != NULL)
    guard = sbx_executor_shared_admit (self->shared);
  if (guard == NULL)
    return (set_fail (error, SBX_EXECUTOR_SET_ERROR_CLOSED, "The executor set is closed"), NULL);

  g_mutex_lock (&self->mutex);
  for (;;)
    {
      entry = g_hash_table_lookup (self->executors, key);
      if (entry != NULL && entry->executor != NULL)
        {
          executor = g_object_ref (entry->executor);
          break;
        }
      if (entry != NULL)
        {
          /* Another caller is constructing this key. */
          g_cond_wait (&self->cond, &self->mutex);
          continue;
        }
      if (g_hash_table_size (self->executors) >= (guint) self->max_executors)
        {
          set_fail (&local_error, SBX_EXECUTOR_SET_ERROR_LIMIT,
                    "The executor set already holds its maximum of %d executors",
                    self->max_executors);
          break;
        }
      g_hash_table_insert (self->executors, g_strdup (key), g_new0 (Entry, 1));
      g_mutex_unlock (&self->mutex);

      /* Construct outside the lock: compile calls into the backend. */
      executor = sbx_executor_new_internal (self->shared, self->egress, key, &local_error);

      g_mutex_lock (&self->mutex);
      if (executor != NULL)
        {
          entry = g_hash_table_lookup (self->executors, key);
          entry->executor = g_object_ref (executor);
        }
      else
        {
          g_hash_table_remove (self->executors, key);
        }
      g_cond_broadcast (&self->cond);
      break;
    }
  g_mutex_unlock (&self->mutex);
  g_clear_pointer (&guard, sbx_shared_guard_release);

  if (executor == NULL)
    g_propagate_error (error, g_steal_pointer (&local_error));
  return g_steal_pointer (&executor);
}

static gboolean
set_close_run (SbxExecutorSet  *self,
               GError         **error)
{
  g_autoptr(GPtrArray) executors = g_ptr_array_new_with_free_func (g_object_unref);
  GHashTableIter iter;
  gpointer value;

  /* 1-3: stop admissions, wake every supervising run, close what was
   * prepared and what runs (through the hooks they registered), wait until
   * every admitted run and construction has returned. */
  sbx_executor_shared_close_begin (self->shared);

  /* 4: release every compiled spec once, wipe every grant key. */
  g_mutex_lock (&self->mutex);
  g_hash_table_iter_init (&iter, self->executors);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      Entry *entry = value;

      if (entry->executor != NULL)
        g_ptr_array_add (executors, g_object_ref (entry->executor));
    }
  g_hash_table_remove_all (self->executors);
  g_mutex_unlock (&self->mutex);
  for (guint i = 0; i < executors->len; i++)
    sbx_executor_close_internal (executors->pdata[i]);

  /* 5: the egress route (every tunnel and listener ends); 6: the reporters,
   * then only the set's own directory, then its liveness lock. */
  sbx_egress_close (self->egress);
  return sbx_executor_shared_close_end (self->shared, error);
}

/**
 * sbx_executor_set_close:
 * @self: a [class@Sbx.ExecutorSet]
 * @cancellable: (nullable): unused: a close always runs to completion, so
 *   nothing is left behind
 * @error: return location for a [error@Sbx.ExecutorSetError]
 *
 * Closes the set: stops new admissions, kills the process trees of running
 * commands and waits until their runs have returned (they fail with
 * %SBX_EXECUTOR_ERROR_CLOSED), releases every compiled spec exactly once,
 * wipes every grant key, closes the reporters and removes the set's own
 * directory (the caller's scratch root stays).  Once it returns, the
 * library's own threads (those that reap spawned processes and those of
 * async runs) hold nothing of the set: what stays open is what the caller
 * still references, and the callbacks still queued on its main contexts.
 *
 * Idempotent: concurrent and later callers wait for the first close and get
 * the same result.  A failure to remove the directory is reported, and the
 * set stays closed.
 *
 * Returns: %TRUE when everything was cleaned up
 *
 * Since: 0.1
 */
gboolean
sbx_executor_set_close (SbxExecutorSet  *self,
                        GCancellable    *cancellable,
                        GError         **error)
{
  g_autoptr(GError) close_error = NULL;
  gboolean ok;

  g_return_val_if_fail (SBX_IS_EXECUTOR_SET (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (self->shared == NULL)
    return set_fail (error, SBX_EXECUTOR_SET_ERROR_CLOSED,
                     "The executor set was never initialised");

  g_mutex_lock (&self->mutex);
  if (self->close_state == CLOSE_NOT_STARTED)
    {
      self->close_state = CLOSE_RUNNING;
      g_mutex_unlock (&self->mutex);

      ok = set_close_run (self, &close_error);

      g_mutex_lock (&self->mutex);
      self->close_error = ok ? NULL : g_steal_pointer (&close_error);
      self->close_state = CLOSE_DONE;
      g_cond_broadcast (&self->cond);
    }
  else
    {
      while (self->close_state != CLOSE_DONE)
        g_cond_wait (&self->cond, &self->mutex);
    }
  ok = self->close_error == NULL;
  if (!ok)
    g_propagate_error (error, g_error_copy (self->close_error));
  g_mutex_unlock (&self->mutex);
  return ok;
}

static void
close_thread (GTask        *task,
              gpointer      source_object,
              gpointer      task_data,
              GCancellable *cancellable)
{
  GError *error = NULL;

  if (sbx_executor_set_close (source_object, cancellable, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

/**
 * sbx_executor_set_close_async:
 * @self: a [class@Sbx.ExecutorSet]
 * @cancellable: (nullable): unused (see [method@Sbx.ExecutorSet.close])
 * @callback: (scope async): called when the set is closed
 * @user_data: data for @callback
 *
 * Asynchronous twin of [method@Sbx.ExecutorSet.close], for applications
 * that must not block their main loop while running commands are torn down.
 *
 * Since: 0.1
 */
void
sbx_executor_set_close_async (SbxExecutorSet      *self,
                              GCancellable        *cancellable,
                              GAsyncReadyCallback  callback,
                              gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;

  g_return_if_fail (SBX_IS_EXECUTOR_SET (self));

  task = g_task_new (self, NULL, callback, user_data);
  g_task_set_source_tag (task, sbx_executor_set_close_async);
  g_task_run_in_thread (task, close_thread);
}

/**
 * sbx_executor_set_close_finish:
 * @self: a [class@Sbx.ExecutorSet]
 * @result: the result passed to the callback
 * @error: return location for a [error@Sbx.ExecutorSetError]
 *
 * Finishes [method@Sbx.ExecutorSet.close_async].
 *
 * Returns: %TRUE when everything was cleaned up
 *
 * Since: 0.1
 */
gboolean
sbx_executor_set_close_finish (SbxExecutorSet  *self,
                               GAsyncResult    *result,
                               GError         **error)
{
  g_return_val_if_fail (SBX_IS_EXECUTOR_SET (self), FALSE);
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  g_return_val_if_fail (g_async_result_is_tagged (result, sbx_executor_set_close_async), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}

/**
 * sbx_executor_set_get_profile:
 * @self: a [class@Sbx.ExecutorSet]
 *
 * Returns the set's profile.
 *
 * Returns: (transfer none): the set's profile
 *
 * Since: 0.1
 */
SbxProfile *
sbx_executor_set_get_profile (SbxExecutorSet *self)
{
  g_return_val_if_fail (SBX_IS_EXECUTOR_SET (self), NULL);

  return self->profile;
}

/**
 * sbx_executor_set_get_backend_name:
 * @self: a [class@Sbx.ExecutorSet]
 *
 * Returns the name of the backend selected for the set.
 *
 * Returns: (nullable): the name of the backend selected for the set
 *
 * Since: 0.1
 */
const char *
sbx_executor_set_get_backend_name (SbxExecutorSet *self)
{
  g_return_val_if_fail (SBX_IS_EXECUTOR_SET (self), NULL);

  if (self->shared == NULL)
    return NULL;
  return sbx_backend_get_name (sbx_executor_shared_get_backend (self->shared));
}

/**
 * sbx_executor_set_get_selection_report:
 * @self: a [class@Sbx.ExecutorSet]
 *
 * The report of the backend selection: the selected backend and every
 * rejected candidate with why.  Each executor's
 * [method@Sbx.Executor.get_report] adds what the backend reported when it
 * compiled the profile.
 *
 * Returns: (transfer none) (nullable): the report
 *
 * Since: 0.1
 */
SbxCompileReport *
sbx_executor_set_get_selection_report (SbxExecutorSet *self)
{
  g_return_val_if_fail (SBX_IS_EXECUTOR_SET (self), NULL);

  if (self->shared == NULL)
    return NULL;
  return sbx_executor_shared_get_selection_report (self->shared);
}

/**
 * sbx_executor_set_find_stale_scratch:
 * @scratch_root: (type filename): a scratch root
 * @remove: whether to remove what is found
 * @error: return location for a #GError
 *
 * Finds the scratch left behind by executor sets whose process died without
 * closing them (a supervisor killed with SIGKILL): the directories with the
 * set prefix directly in @scratch_root that belong to the caller's
 * effective user and whose liveness marker no process holds, and symbolic
 * links with that prefix planted in place of one.  With @remove they are
 * removed (a link as a link; nothing is ever followed).  Another user's
 * directory and a live set's directory are never touched.  Creating an
 * executor set does the same on its scratch root.
 *
 * Returns: (transfer full) (array zero-terminated=1) (element-type filename) (nullable):
 *   the stale paths (removed when @remove), or %NULL with @error set
 *
 * Since: 0.1
 */
char **
sbx_executor_set_find_stale_scratch (const char  *scratch_root,
                                     gboolean     remove,
                                     GError     **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *canonical = NULL;

  g_return_val_if_fail (scratch_root != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  canonical = sbx_path_canonical_root (scratch_root, &local_error);
  if (canonical == NULL)
    {
      set_fail (error, SBX_EXECUTOR_SET_ERROR_INVALID_OPTIONS,
                "The scratch root “%s” is unusable: %s", scratch_root, local_error->message);
      return NULL;
    }
  return sbx_scratch_reap (canonical, remove, error);
}

/**
 * sbx_executor_set_get_owned_dir:
 * @self: a [class@Sbx.ExecutorSet]
 *
 * Returns the set's private directory under the scratch root (removed by close).
 *
 * Returns: (type filename) (nullable): the set's private directory under the
 *   scratch root (removed by close)
 *
 * Since: 0.1
 */
const char *
sbx_executor_set_get_owned_dir (SbxExecutorSet *self)
{
  g_return_val_if_fail (SBX_IS_EXECUTOR_SET (self), NULL);

  if (self->shared == NULL)
    return NULL;
  return sbx_executor_shared_get_owned_dir (self->shared);
}

/**
 * sbx_executor_set_get_max_executors:
 * @self: a [class@Sbx.ExecutorSet]
 *
 * Returns the most distinct keys the set will ever hold.
 *
 * Returns: the most distinct keys the set will ever hold
 *
 * Since: 0.1
 */
int
sbx_executor_set_get_max_executors (SbxExecutorSet *self)
{
  g_return_val_if_fail (SBX_IS_EXECUTOR_SET (self), 0);

  return self->max_executors;
}

/**
 * sbx_executor_set_get_n_executors:
 * @self: a [class@Sbx.ExecutorSet]
 *
 * Returns the number of keys the set holds (including ones being created); 0 once closed.
 *
 * Returns: the number of keys the set holds (including ones being created);
 *   0 once closed
 *
 * Since: 0.1
 */
guint
sbx_executor_set_get_n_executors (SbxExecutorSet *self)
{
  guint n;

  g_return_val_if_fail (SBX_IS_EXECUTOR_SET (self), 0);

  g_mutex_lock (&self->mutex);
  n = g_hash_table_size (self->executors);
  g_mutex_unlock (&self->mutex);
  return n;
}

/**
 * sbx_executor_set_get_grant_ttl:
 * @self: a [class@Sbx.ExecutorSet]
 *
 * Returns the cap on the lifetime of grants, in microseconds.
 *
 * Returns: the cap on the lifetime of grants, in microseconds
 *
 * Since: 0.1
 */
GTimeSpan
sbx_executor_set_get_grant_ttl (SbxExecutorSet *self)
{
  g_return_val_if_fail (SBX_IS_EXECUTOR_SET (self), 0);

  if (self->shared == NULL)
    return 0;
  return sbx_executor_shared_get_grant_ttl (self->shared);
}

/**
 * sbx_executor_set_is_closed:
 * @self: a [class@Sbx.ExecutorSet]
 *
 * Returns %TRUE once [method@Sbx.ExecutorSet.close] has started.
 *
 * Returns: %TRUE once [method@Sbx.ExecutorSet.close] has started
 *
 * Since: 0.1
 */
gboolean
sbx_executor_set_is_closed (SbxExecutorSet *self)
{
  gboolean closed;

  g_return_val_if_fail (SBX_IS_EXECUTOR_SET (self), TRUE);

  g_mutex_lock (&self->mutex);
  closed = self->close_state != CLOSE_NOT_STARTED;
  g_mutex_unlock (&self->mutex);
  return closed;
}
