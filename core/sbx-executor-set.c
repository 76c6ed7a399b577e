/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SbxExecutorSet: the owner.  Selects the backend once, owns a private
 * scratch child, memoizes one SbxExecutor per key, and closes everything.
 *
 * LOCKING
 *   set->mutex protects `executors`, `close_state` and `close_error`;
 *   set->cond is signalled when a pending construction ends and when close
 *   finishes.  shared->mutex (SbxExecutorShared) protects `closing`,
 *   `active`, `sinks` and `next_run_id`; shared->cond is signalled when
 *   `active` drops.  Lock order: set->mutex, then shared->mutex; neither is
 *   ever held across a plugin call (backend compile/spawn/release, reporter
 *   open/emit/close) or while waiting for a child.
 *
 * for_key: a new key is inserted as a *pending* entry (counted against the
 * limit) while one caller constructs it outside the lock; concurrent callers
 * of the same key wait on set->cond and then return the same executor.  A
 * failed construction removes its entry (it does not count).
 *
 * close: the first caller runs the sequence, every concurrent or later
 * caller waits for it and gets a copy of the same result:
 *   1. shared->closing = TRUE: no admission (run, construction) succeeds;
 *   2. close_fd becomes readable: every supervising run kills its tree;
 *   3. wait until no admission is left (runs returned, constructions done);
 *   4. close every executor: release its spec (once), wipe its grant key;
 *   5. close the reporters;
 *   6. remove the owned scratch child (only that).
 */
#include "sbx-executor-private.h"
#include "sbx-process-private.h"
#include "sbx-executor-egress-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx-compile-report-private.h"
#include "sbx-path-private.h"
#include "sbx-profile-private.h"

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

/**
 * sbx_executor_set_error_quark:
 *
 * Returns the error domain of [error@Sbx.ExecutorSetError].
 *
 * Returns: the quark
 *
 * Since: 0.1
 */
G_DEFINE_QUARK (sbx-executor-set-error-quark, sbx_executor_set_error)

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
/* SbxExecutorShared                                                          */
/* ------------------------------------------------------------------------- */

static SbxExecutorShared *
executor_shared_new (void)
{
  SbxExecutorShared *shared = g_new0 (SbxExecutorShared, 1);

  g_atomic_ref_count_init (&shared->ref);
  g_mutex_init (&shared->mutex);
  g_cond_init (&shared->cond);
  shared->close_fd = -1;
  shared->live_fd = -1;
  shared->sinks = g_ptr_array_new ();
  shared->processes = g_ptr_array_new ();
  shared->prepared = g_ptr_array_new ();
  return shared;
}

SbxExecutorShared *
sbx_executor_shared_ref (SbxExecutorShared *shared)
{
  g_return_val_if_fail (shared != NULL, NULL);

  g_atomic_ref_count_inc (&shared->ref);
  return shared;
}

static void
close_sinks (GPtrArray *sinks)
{
  if (sinks == NULL)
    return;
  for (guint i = 0; i < sinks->len; i++)
    sbx_reporter_sink_close (sinks->pdata[i]);
  g_ptr_array_unref (sinks);
}

void
sbx_executor_shared_unref (SbxExecutorShared *shared)
{
  g_return_if_fail (shared != NULL);

  if (!g_atomic_ref_count_dec (&shared->ref))
    return;
  close_sinks (g_steal_pointer (&shared->sinks));
  /* Empty: a process leaves the list when it is reaped, and holds the
   * shared state (through its executor) until then. */
  g_ptr_array_unref (shared->processes);
  g_ptr_array_unref (shared->prepared);
  if (shared->close_fd >= 0)
    close (shared->close_fd);
  g_free (shared->set_id);
  g_clear_pointer (&shared->profile, sbx_profile_unref);
  g_clear_pointer (&shared->backend, sbx_backend_unref);
  g_clear_pointer (&shared->egress, sbx_egress_unref);
  g_clear_pointer (&shared->selection_report, sbx_compile_report_unref);
  g_free (shared->owned_dir);
  g_free (shared->scratch_root);
  if (shared->live_fd >= 0)
    close (shared->live_fd);   /* releases the liveness lock */
  g_mutex_clear (&shared->mutex);
  g_cond_clear (&shared->cond);
  g_free (shared);
}

gboolean
sbx_executor_shared_enter (SbxExecutorShared *shared)
{
  gboolean admitted;

  g_mutex_lock (&shared->mutex);
  admitted = !shared->closing;
  if (admitted)
    shared->active++;
  g_mutex_unlock (&shared->mutex);
  return admitted;
}

void
sbx_executor_shared_leave (SbxExecutorShared *shared)
{
  g_mutex_lock (&shared->mutex);
  g_return_if_fail (shared->active > 0);
  shared->active--;
  if (shared->active == 0)
    g_cond_broadcast (&shared->cond);
  g_mutex_unlock (&shared->mutex);
}

void
sbx_executor_shared_emit (SbxExecutorShared *shared,
                          const char        *event,
                          const char        *key,
                          void             (*add_members) (JsonBuilder *builder,
                                                             gpointer     data),
                          gpointer           data)
{
  g_autoptr(JsonBuilder) builder = NULL;
  g_autoptr(JsonGenerator) generator = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GDateTime) now = NULL;
  g_autofree char *timestamp = NULL;
  g_autofree char *json = NULL;
  GPtrArray *sinks;

  /* Inside an admission `sinks` cannot be closed; without reporters there
   * is nothing to build. */
  g_mutex_lock (&shared->mutex);
  sinks = shared->sinks;
  g_mutex_unlock (&shared->mutex);
  if (sinks == NULL || sinks->len == 0)
    return;

  now = g_date_time_new_now_utc ();
  timestamp = g_date_time_format_iso8601 (now);
  builder = json_builder_new ();
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "schema");
  json_builder_add_int_value (builder, SBX_EVENT_SCHEMA);
  json_builder_set_member_name (builder, "event");
  json_builder_add_string_value (builder, event);
  json_builder_set_member_name (builder, "time");
  json_builder_add_string_value (builder, timestamp);
  json_builder_set_member_name (builder, "set");
  json_builder_add_string_value (builder, shared->set_id);
  if (key != NULL)
    {
      json_builder_set_member_name (builder, "executor");
      json_builder_add_string_value (builder, key);
    }
  if (add_members != NULL)
    add_members (builder, data);
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  generator = json_generator_new ();
  json_generator_set_pretty (generator, FALSE);
  json_generator_set_root (generator, root);
  json = json_generator_to_data (generator, NULL);

  for (guint i = 0; i < sinks->len; i++)
    sbx_reporter_sink_emit (sinks->pdata[i], json);
}

/* ------------------------------------------------------------------------- */
/* Removing the owned tree                                                    */
/* ------------------------------------------------------------------------- */

/* Empties the directory @dfd (consumed), never following symlinks.  @path is
 * for messages only. */
static gboolean
remove_dir_contents (int          dfd,
                     const char  *path,
                     GError     **error)
{
  DIR *dir;
  struct dirent *entry;
  gboolean ok = TRUE;

  /* A child may have left a directory without write or search permission. */
  fchmod (dfd, 0700);
  dir = fdopendir (dfd);
  if (dir == NULL)
    {
      int errsv = errno;

      close (dfd);
      return set_fail (error, SBX_EXECUTOR_SET_ERROR_SCRATCH,
                       "Cannot list %s: %s", path, g_strerror (errsv));
    }

  while ((entry = readdir (dir)) != NULL)
    {
      const char *name = entry->d_name;
      g_autofree char *child_path = NULL;

      if (g_str_equal (name, ".") || g_str_equal (name, ".."))
        continue;
      if (unlinkat (dirfd (dir), name, 0) == 0 || errno == ENOENT)
        continue;
      if (errno == EISDIR || errno == EPERM)
        {
          int child;

          /* A directory without read or search permission cannot be opened
           * to be emptied: make it ours first (never through a symlink). */
          if (fchmodat (dirfd (dir), name, 0700, AT_SYMLINK_NOFOLLOW) != 0)
            {
              /* not fatal here: the openat below fails and names the entry */
            }
          child = openat (dirfd (dir), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

          child_path = g_build_filename (path, name, NULL);
          if (child >= 0)
            {
              if (!remove_dir_contents (child, child_path, ok ? error : NULL))
                ok = FALSE;
              if (unlinkat (dirfd (dir), name, AT_REMOVEDIR) == 0 || errno == ENOENT)
                continue;
            }
        }
      if (ok)
        {
          int errsv = errno;

          if (child_path == NULL)
            child_path = g_build_filename (path, name, NULL);
          set_fail (error, SBX_EXECUTOR_SET_ERROR_SCRATCH,
                    "Cannot remove %s: %s", child_path, g_strerror (errsv));
        }
      ok = FALSE;
    }
  closedir (dir);
  return ok;
}

gboolean
sbx_remove_tree_at (int          parent_fd,
                    const char  *name,
                    const char  *path,
                    GError     **error)
{
  int dfd;

  dfd = openat (parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd < 0)
    {
      int errsv = errno;

      if (errsv == ENOENT)
        return TRUE;
      return set_fail (error, SBX_EXECUTOR_SET_ERROR_SCRATCH,
                       "Cannot open %s for removal: %s", path, g_strerror (errsv));
    }
  if (!remove_dir_contents (dfd, path, error))
    return FALSE;
  if (unlinkat (parent_fd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
    {
      int errsv = errno;

      return set_fail (error, SBX_EXECUTOR_SET_ERROR_SCRATCH,
                       "Cannot remove %s: %s", path, g_strerror (errsv));
    }
  return TRUE;
}

gboolean
sbx_remove_tree (const char  *path,
                 GError     **error)
{
  int dfd;

  dfd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd < 0)
    {
      int errsv = errno;

      if (errsv == ENOENT)
        return TRUE;
      return set_fail (error, SBX_EXECUTOR_SET_ERROR_SCRATCH,
                       "Cannot open %s for removal: %s", path, g_strerror (errsv));
    }
  if (!remove_dir_contents (dfd, path, error))
    return FALSE;
  if (rmdir (path) < 0 && errno != ENOENT)
    {
      int errsv = errno;

      return set_fail (error, SBX_EXECUTOR_SET_ERROR_SCRATCH,
                       "Cannot remove %s: %s", path, g_strerror (errsv));
    }
  return TRUE;
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
    g_debug ("closing executor set %s on dispose: %s", self->shared->set_id, error->message);

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

/* The scratch root of a set whose options name none: $XDG_RUNTIME_DIR/sbx
 * (created 0700; an existing one must be the caller's own directory, not a
 * link, with no access for anyone else), else the temporary directory. */
static char *
default_scratch_root (GError **error)
{
  const char *runtime = g_getenv ("XDG_RUNTIME_DIR");
  g_autofree char *dir = NULL;
  struct stat st;

  if (runtime == NULL || runtime[0] != '/' || !g_file_test (runtime, G_FILE_TEST_IS_DIR))
    return g_strdup (g_get_tmp_dir ());
  dir = g_build_filename (runtime, "sbx", NULL);
  if (mkdir (dir, 0700) < 0 && errno != EEXIST)
    {
      int errsv = errno;

      g_debug ("cannot create %s (%s); using %s", dir, g_strerror (errsv), g_get_tmp_dir ());
      return g_strdup (g_get_tmp_dir ());
    }
  if (lstat (dir, &st) < 0 || !S_ISDIR (st.st_mode) || st.st_uid != geteuid ()
      || (st.st_mode & 077) != 0)
    return (set_fail (error, SBX_EXECUTOR_SET_ERROR_INVALID_OPTIONS,
                      "The default scratch root “%s” is not a directory of this user with "
                      "mode 0700 (a link or someone else's directory is never used)", dir), NULL);
  return g_steal_pointer (&dir);
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
  g_autofree char *template = NULL;
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
      default_scratch = default_scratch_root (error);
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

  shared = executor_shared_new ();
  shared->set_id = g_uuid_string_random ();
  shared->profile = sbx_profile_ref (self->profile);
  shared->grant_ttl = ttl;

  /* The backend is selected once, here, for every executor of the set. */
  selection.unconfined = sbx_profile_get_isolation (self->profile) == SBX_ISOLATION_UNCONFINED;
  selection.required_guarantees = sbx_profile_get_required_guarantees (self->profile);
  selection.forced_backend = sbx_executor_set_options_get_backend (options);
  selection_report = sbx_compile_report_new ();
  sbx_compile_report_set_required (selection_report, selection.required_guarantees);
  shared->backend = sbx_registry_select_backend (self->registry, &selection, selection_report,
                                                 &local_error);
  if (shared->backend == NULL)
    return set_fail (error, SBX_EXECUTOR_SET_ERROR_BACKEND_UNAVAILABLE, "%s",
                     local_error->message);
  sbx_compile_report_set_backend (selection_report, sbx_backend_get_name (shared->backend));
  sbx_compile_report_freeze (selection_report);
  shared->selection_report = g_steal_pointer (&selection_report);

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
      g_ptr_array_add (shared->sinks, sink);
    }

  /* Egress: the set's route, started once for every executor of the set. */
  if (sbx_executor_set_options_get_egress_route (options) != NULL)
    {
      shared->egress = sbx_egress_start (self->registry, sbx_executor_set_options_get_egress_extension (options),
                                         sbx_executor_set_options_get_egress_route (options),
                                         self->profile, error);
      if (shared->egress == NULL)
        return FALSE;
    }

  shared->close_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (shared->close_fd < 0)
    {
      int errsv = errno;

      return set_fail (error, SBX_EXECUTOR_SET_ERROR_SCRATCH,
                       "Cannot create the executor set's close notifier: eventfd: %s",
                       g_strerror (errsv));
    }

  /* Dead sets' directories (a supervisor killed with SIGKILL)
   * are reaped here, once per set, before ours exists.  Someone else's
   * leftovers never make this set fail. */
  {
    g_auto(GStrv) reaped = sbx_scratch_reap (scratch, TRUE, &local_error);

    if (reaped == NULL)
      {
        g_debug ("reaping stale scratch in %s: %s", scratch, local_error->message);
        g_clear_error (&local_error);
      }
  }

  template = g_build_filename (scratch, SBX_SET_DIR_PREFIX "XXXXXX", NULL);
  if (g_mkdtemp_full (template, 0700) == NULL)
    {
      int errsv = errno;

      return set_fail (error, SBX_EXECUTOR_SET_ERROR_SCRATCH,
                       "Cannot create the executor set's directory in %s: %s",
                       scratch, g_strerror (errsv));
    }
  if (chmod (template, 0700) < 0)
    {
      int errsv = errno;

      rmdir (template);
      return set_fail (error, SBX_EXECUTOR_SET_ERROR_SCRATCH,
                       "Cannot secure the executor set's directory %s: %s",
                       template, g_strerror (errsv));
    }
  shared->owned_dir = g_steal_pointer (&template);
  shared->scratch_root = g_steal_pointer (&scratch);

  /* The liveness marker: locked for exactly the set's lifetime, so another
   * process tells a live set from a dead one by the lock alone. */
  {
    g_autofree char *marker = g_build_filename (shared->owned_dir, SBX_SET_LIVE_MARKER, NULL);

    shared->live_fd = open (marker, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (shared->live_fd < 0 || flock (shared->live_fd, LOCK_EX | LOCK_NB) < 0)
      {
        int errsv = errno;

        sbx_remove_tree (shared->owned_dir, NULL);
        return set_fail (error, SBX_EXECUTOR_SET_ERROR_SCRATCH,
                         "Cannot mark the executor set's directory %s as live: %s",
                         shared->owned_dir, g_strerror (errsv));
      }
  }

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
  if (self->shared == NULL || !sbx_executor_shared_enter (self->shared))
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
      executor = sbx_executor_new_internal (self->shared, key, &local_error);

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
  sbx_executor_shared_leave (self->shared);

  if (executor == NULL)
    g_propagate_error (error, g_steal_pointer (&local_error));
  return g_steal_pointer (&executor);
}

static gboolean
set_close_run (SbxExecutorSet  *self,
               GError         **error)
{
  SbxExecutorShared *shared = self->shared;
  g_autoptr(GPtrArray) executors = g_ptr_array_new_with_free_func (g_object_unref);
  GPtrArray *sinks;
  GHashTableIter iter;
  gpointer value;
  guint64 one = 1;
  ssize_t r;

  /* 1-2: stop admissions, wake every supervising run. */
  g_mutex_lock (&shared->mutex);
  shared->closing = TRUE;
  g_mutex_unlock (&shared->mutex);
  do
    r = write (shared->close_fd, &one, sizeof one);
  while (r < 0 && errno == EINTR);

  /* 2a: close every prepared process that was never started (its
   * reservation holds the barrier).  A start racing this either took its
   * admission first (and registers as a process below, or fails CLOSED) or
   * finds it closed. */
  {
    g_autoptr(GPtrArray) prepared = NULL;

    g_mutex_lock (&shared->mutex);
    prepared = g_ptr_array_copy (shared->prepared, (GCopyFunc) (void (*) (void)) g_object_ref,
                                 NULL);
    g_ptr_array_set_free_func (prepared, g_object_unref);
    g_mutex_unlock (&shared->mutex);
    for (guint i = 0; i < prepared->len; i++)
      sbx_prepared_process_close (prepared->pdata[i]);
  }

  /* 2b: kill every spawned process and reap it here (its waits complete
   * with CLOSED): a process's admission lasts until its finish() ran, and
   * this thread may be the one whose main loop would have reaped it. */
  {
    g_autoptr(GPtrArray) processes = NULL;

    g_mutex_lock (&shared->mutex);
    processes = g_ptr_array_copy (shared->processes, (GCopyFunc) (void (*) (void)) g_object_ref,
                                  NULL);
    g_ptr_array_set_free_func (processes, g_object_unref);
    g_mutex_unlock (&shared->mutex);
    for (guint i = 0; i < processes->len; i++)
      sbx_process_close_internal (processes->pdata[i]);
  }

  /* 3: wait until every admitted run and construction has returned. */
  g_mutex_lock (&shared->mutex);
  while (shared->active > 0)
    g_cond_wait (&shared->cond, &shared->mutex);
  sinks = g_steal_pointer (&shared->sinks);
  g_mutex_unlock (&shared->mutex);

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

  /* 5: reporters; the egress route (every tunnel and listener ends). */
  close_sinks (sinks);
  sbx_egress_close (shared->egress);

  /* 6: only the set's own directory; then its liveness lock goes (a
   * directory that could not be removed is a dead set's from now on). */
  {
    gboolean removed = sbx_remove_tree (shared->owned_dir, error);

    if (shared->live_fd >= 0)
      {
        close (shared->live_fd);
        shared->live_fd = -1;
      }
    return removed;
  }
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
 * directory (the caller's scratch root stays).
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
  return sbx_backend_get_name (self->shared->backend);
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
  return self->shared->selection_report;
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
  return self->shared->owned_dir;
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
  return self->shared->grant_ttl;
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
