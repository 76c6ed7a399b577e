/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The plugin registry object: the plugin directories it searched, the
 * plugins it found (loaded or refused) and the extensions they registered,
 * in load order.  Its siblings: sbx-plugin-loader.c loads one file,
 * sbx-registry-select.c picks a backend for a profile, sbx-reporter-sink.c
 * opens reporter extensions, sbx-registry-json.c lists the registry as JSON;
 * they reach the registry's lists only through sbx-registry-state-private.h.
 * This file is over a thousand lines (about 1,140) for one reason: some 460
 * of them are the public listing getters ("Listing" below), each a gtk-doc
 * comment around a lock-copy-unlock that reads the locked lists directly.
 * They are the object's read side; moving them to a sibling would publish
 * the struct and its lock to another file for no reader's benefit.
 *
 * LOCKING
 *
 *  - SbxRegistry.lock protects the registry's lists: directories, plugins,
 *    extensions, and the two name tables (plugin_names, extension_names),
 *    which hold every published name plus the names reserved by a load in
 *    progress.  Records in those lists are immutable once published, so a
 *    pointer read under the lock stays valid for the registry's lifetime.
 *  - SbxBackend.probe_lock (sbx-backend.c) protects one backend's probe
 *    cache.  It is a leaf lock.
 *  - guard_lock (sbx-plugin-host.c) protects the crash guard's counter and
 *    saved signal dispositions.  It is a leaf lock.
 *  - Lock order: SbxRegistry.lock before SbxBackend.probe_lock; in practice
 *    they are never nested, because...
 *  - ...no lock is held across a plugin call (entry/init/probe/compile/
 *    spawn/signal/finish/release/open/emit/close).  Loading reserves the
 *    plugin's names under the lock, releases it, calls init, then re-locks to
 *    publish.  Selection copies the candidate list (with references) under
 *    the lock, releases it, probes, and publishes each probe result in the
 *    backend's own cache under probe_lock.
 *  - The default registry pointer is set once with g_once_init_enter().
 */
#include "sbx-registry.h"
#include "sbx-registry-private.h"
#include "sbx-plugin-private.h"
#include "sbx-plugin-host-private.h"
#include "sbx-plugin-abi.h"       /* the extensions of every kind it lists */
#include "sbx-plugin-loader-private.h"
#include "sbx-registry-state-private.h"
#include "sbx-compile-report-private.h"
#include "sbx-registry-info-private.h"
#include "sbx-enum-types.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx-cleanup.h"

/* ------------------------------------------------------------------------- */
/* Records                                                                    */
/* ------------------------------------------------------------------------- */

typedef struct
{
  char   *path;
  GError *error;  /* (nullable) */
} DirectoryRecord;

typedef struct
{
  SbxExtensionKind  kind;
  char             *name;
  int               priority;
  SbxPlugin        *plugin;   /* (owned) */
  const void       *vtable;   /* points into the (resident) plugin */
  SbxBackend       *backend;  /* (owned) (nullable) for kind BACKEND */
} ExtensionRecord;

struct _SbxRegistry
{
  GObject     parent_instance;

  GStrv       initial_dirs;     /* construct-only */
  gboolean    tolerant;         /* the default registry: directory errors are listed, not fatal */

  GMutex      lock;
  GPtrArray  *directories;      /* (locked lock) of DirectoryRecord */
  GPtrArray  *plugins;          /* (locked lock) of SbxPlugin, loaded and refused */
  GPtrArray  *extensions;       /* (locked lock) of ExtensionRecord */
  GHashTable *plugin_names;     /* (locked lock) name -> path, published or reserved */
  GHashTable *extension_names;  /* (locked lock) name -> plugin name, published or reserved */
  SbxHostV1   host;             /* immutable after construction: the table plugin init gets,
                                 * advertising host.features (SBX_HOST_FEATURES_IMPLEMENTED) */
};

static void sbx_registry_initable_iface_init (GInitableIface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SbxRegistry, sbx_registry, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE, sbx_registry_initable_iface_init))

enum
{
  PROP_0,
  PROP_DIRECTORIES,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
directory_record_free (gpointer data)
{
  DirectoryRecord *record = data;

  g_free (record->path);
  g_clear_error (&record->error);
  g_free (record);
}

static void
extension_record_free (gpointer data)
{
  ExtensionRecord *record = data;

  g_clear_pointer (&record->backend, sbx_backend_unref);
  sbx_plugin_unref (record->plugin);
  g_free (record->name);
  g_free (record);
}

/* ------------------------------------------------------------------------- */
/* Loading                                                                    */
/* ------------------------------------------------------------------------- */

static void
release_names (SbxRegistry *self,
               const char  *plugin_name,
               GArray      *views)
{
  g_mutex_lock (&self->lock);
  if (plugin_name != NULL)
    g_hash_table_remove (self->plugin_names, plugin_name);
  for (guint i = 0; views != NULL && i < views->len; i++)
    g_hash_table_remove (self->extension_names, g_array_index (views, SbxExtensionView, i).name);
  g_mutex_unlock (&self->lock);
}

/* Loads one plugin file (sbx-plugin-loader.c does each step) and reserves
 * its names here, so no two plugins of one registry share a plugin or an
 * extension name.  Always returns a record: loaded, or refused with the
 * reason.  @extensions_out receives the records to publish. */
static SbxPlugin *
load_plugin (SbxRegistry *self,
             int          dirfd,
             const char  *dir,
             gboolean     foreign_dir,
             const char  *file_name,
             GPtrArray   *extensions_out)
{
  g_autofree char *path = g_build_filename (dir, file_name, NULL);
  g_autofree char *name = sbx_plugin_name_from_file (file_name);
  g_autoptr(GArray) views = g_array_new (FALSE, FALSE, sizeof (SbxExtensionView));
  g_autoptr(SbxPlugin) plugin = sbx_plugin_new (path, name);
  GError *error = NULL;
  gboolean mapped;
  sbx_autofd int fd = -1;

  fd = sbx_plugin_open_checked (plugin, dirfd, dir, foreign_dir, file_name);
  if (fd < 0)
    return g_steal_pointer (&plugin);

  /* Reserve the plugin name: the first directory that provides it wins. */
  g_mutex_lock (&self->lock);
  if (g_hash_table_contains (self->plugin_names, name))
    {
      error = g_error_new (SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_LOAD_FAILED,
                           "plugin '%s' at '%s' ignored: a plugin of that name is already loaded from '%s'",
                           name, path, (const char *) g_hash_table_lookup (self->plugin_names, name));
      g_mutex_unlock (&self->lock);
      sbx_plugin_refuse (plugin, error);
      return g_steal_pointer (&plugin);
    }
  g_hash_table_insert (self->plugin_names, g_strdup (name), g_strdup (path));
  g_mutex_unlock (&self->lock);

  mapped = sbx_plugin_map (plugin, fd, file_name, self->host.features, views);
  sbx_clear_fd (&fd);   /* the mapping no longer needs the file */
  if (!mapped)
    {
      release_names (self, name, NULL);
      return g_steal_pointer (&plugin);
    }

  /* Reserve the extension names: unique across the whole registry. */
  g_mutex_lock (&self->lock);
  for (guint i = 0; i < views->len && error == NULL; i++)
    {
      const char *ext_name = g_array_index (views, SbxExtensionView, i).name;
      const char *owner = g_hash_table_lookup (self->extension_names, ext_name);

      if (owner != NULL)
        {
          error = g_error_new (SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
                               "plugin '%s' declares extension '%s', which plugin '%s' already registered",
                               name, ext_name, owner);
          for (guint j = 0; j < i; j++)
            g_hash_table_remove (self->extension_names, g_array_index (views, SbxExtensionView, j).name);
        }
      else
        g_hash_table_insert (self->extension_names, g_strdup (ext_name), g_strdup (name));
    }
  g_mutex_unlock (&self->lock);
  if (error != NULL)
    {
      sbx_plugin_unmap (plugin, error);
      release_names (self, name, NULL);
      return g_steal_pointer (&plugin);
    }

  /* init, without any lock held. */
  if (!sbx_plugin_initialise (plugin, &self->host))
    {
      release_names (self, name, views);
      return g_steal_pointer (&plugin);
    }

  for (guint i = 0; i < views->len; i++)
    {
      const SbxExtensionView *view = &g_array_index (views, SbxExtensionView, i);
      ExtensionRecord *record = g_new0 (ExtensionRecord, 1);

      record->kind = view->kind;
      record->name = g_strdup (view->name);
      record->priority = view->priority;
      record->plugin = sbx_plugin_ref (plugin);
      record->vtable = view->vtable;
      g_ptr_array_add (extensions_out, record);
    }
  return g_steal_pointer (&plugin);
}

static int
compare_strings (gconstpointer a,
                 gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* Loads every sbx-plugin-*.so of the directory open as @dirfd, in name
 * order, and publishes each plugin (loaded or refused) and its extensions. */
static void
load_directory_entries (SbxRegistry *self,
                        int          dirfd,
                        const char  *dir,
                        gboolean     foreign_dir,
                        GPtrArray   *names)
{
  g_ptr_array_sort (names, compare_strings);
  for (guint i = 0; i < names->len; i++)
    {
      g_autoptr(GPtrArray) extensions = g_ptr_array_new_with_free_func (extension_record_free);
      SbxPlugin *plugin = load_plugin (self, dirfd, dir, foreign_dir, names->pdata[i], extensions);

      g_mutex_lock (&self->lock);
      g_ptr_array_add (self->plugins, plugin);
      for (guint j = 0; j < extensions->len; j++)
        {
          ExtensionRecord *ext = extensions->pdata[j];

          if (ext->kind == SBX_EXTENSION_KIND_BACKEND)
            ext->backend = sbx_backend_new (ext->plugin, ext->name, ext->priority,
                                            self->extensions->len, ext->vtable);
          g_ptr_array_add (self->extensions, ext);
        }
      /* Ownership moved to self->extensions. */
      g_ptr_array_set_free_func (extensions, NULL);
      g_mutex_unlock (&self->lock);
    }
}

/* Opens and checks @dir, then loads its plugins.  Returns FALSE only when
 * the directory itself cannot be used. */
static gboolean
search_directory (SbxRegistry  *self,
                  const char   *dir,
                  GError      **error)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  struct dirent *dent;
  struct stat st;
  DIR *stream;
  sbx_autofd int dirfd = -1;
  sbx_autofd int list_fd = -1;
  g_autofree char *why_not = NULL;
  uid_t foreign;

  if (!g_path_is_absolute (dir))
    return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_LOAD_FAILED,
                                 "plugin directory '%s' is not an absolute path; ignored", dir);
  dirfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY);
  if (dirfd < 0)
    {
      int saved_errno = errno;

      return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_LOAD_FAILED,
                                   "cannot open plugin directory '%s': %s", dir, g_strerror (saved_errno));
    }
  if (fstat (dirfd, &st) != 0)
    {
      int saved_errno = errno;

      return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_LOAD_FAILED,
                                   "cannot stat plugin directory '%s': %s", dir, g_strerror (saved_errno));
    }
  /* Only an owner that is neither root nor the caller needs the namespace
   * looked at (the usual case reads nothing more). */
  foreign = st.st_uid != 0 && st.st_uid != geteuid () ? sbx_registry_foreign_owner (dirfd, dir, &why_not)
                                                      : (uid_t) -1;
  if (!sbx_registry_check_file_safety (&st, dir, TRUE, geteuid (), foreign, why_not, error))
    return FALSE;

  list_fd = fcntl (dirfd, F_DUPFD_CLOEXEC, 0);
  stream = list_fd >= 0 ? fdopendir (list_fd) : NULL;
  if (stream == NULL)
    {
      int saved_errno = errno;

      return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_LOAD_FAILED,
                                   "cannot list plugin directory '%s': %s", dir, g_strerror (saved_errno));
    }
  while ((dent = readdir (stream)) != NULL)
    if (g_str_has_prefix (dent->d_name, PLUGIN_FILE_PREFIX) && g_str_has_suffix (dent->d_name, PLUGIN_FILE_SUFFIX))
      g_ptr_array_add (names, g_strdup (dent->d_name));
  list_fd = -1;   /* closedir() closes it */
  closedir (stream);

  load_directory_entries (self, dirfd, dir, foreign != (uid_t) -1, names);
  return TRUE;
}

/* Searches @dir and records it (with its error, if any) in the listing. */
static gboolean
load_directory (SbxRegistry  *self,
                const char   *dir,
                GError      **error)
{
  DirectoryRecord *record = g_new0 (DirectoryRecord, 1);
  GError *local_error = NULL;
  gboolean ok;

  record->path = g_strdup (dir);
  ok = search_directory (self, dir, &local_error);
  if (!ok)
    record->error = g_error_copy (local_error);
  g_mutex_lock (&self->lock);
  g_ptr_array_add (self->directories, record);
  g_mutex_unlock (&self->lock);
  if (!ok)
    g_propagate_error (error, local_error);
  return ok;
}

/* ------------------------------------------------------------------------- */
/* GObject                                                                    */
/* ------------------------------------------------------------------------- */

static void
sbx_registry_finalize (GObject *object)
{
  SbxRegistry *self = SBX_REGISTRY (object);

  g_ptr_array_unref (self->extensions);
  g_ptr_array_unref (self->plugins);
  g_ptr_array_unref (self->directories);
  g_hash_table_unref (self->plugin_names);
  g_hash_table_unref (self->extension_names);
  g_strfreev (self->initial_dirs);
  g_mutex_clear (&self->lock);

  G_OBJECT_CLASS (sbx_registry_parent_class)->finalize (object);
}

static void
sbx_registry_get_property (GObject    *object,
                           guint       prop_id,
                           GValue     *value,
                           GParamSpec *pspec)
{
  SbxRegistry *self = SBX_REGISTRY (object);

  switch (prop_id)
    {
    case PROP_DIRECTORIES:
      g_value_set_boxed (value, self->initial_dirs);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sbx_registry_set_property (GObject      *object,
                           guint         prop_id,
                           const GValue *value,
                           GParamSpec   *pspec)
{
  SbxRegistry *self = SBX_REGISTRY (object);

  switch (prop_id)
    {
    case PROP_DIRECTORIES:
      g_strfreev (self->initial_dirs);
      self->initial_dirs = g_value_dup_boxed (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sbx_registry_class_init (SbxRegistryClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = sbx_registry_finalize;
  object_class->get_property = sbx_registry_get_property;
  object_class->set_property = sbx_registry_set_property;

  /**
   * SbxRegistry:directories: (type GStrv)
   *
   * The plugin directories loaded at construction, in order.
   *
   * Since: 0.1
   */
  properties[PROP_DIRECTORIES] =
    g_param_spec_boxed ("directories", NULL, NULL, G_TYPE_STRV,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
sbx_registry_init (SbxRegistry *self)
{
  g_mutex_init (&self->lock);
  self->directories = g_ptr_array_new_with_free_func (directory_record_free);
  self->plugins = g_ptr_array_new_with_free_func ((GDestroyNotify) sbx_plugin_unref);
  self->extensions = g_ptr_array_new_with_free_func (extension_record_free);
  self->plugin_names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->extension_names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->host = *sbx_host_table ();
  self->host.features = SBX_HOST_FEATURES_IMPLEMENTED;
}

static gboolean
sbx_registry_initable_init (GInitable     *initable,
                            GCancellable  *cancellable,
                            GError       **error)
{
  SbxRegistry *self = SBX_REGISTRY (initable);

  for (guint i = 0; self->initial_dirs != NULL && self->initial_dirs[i] != NULL; i++)
    {
      g_autoptr(GError) local_error = NULL;

      if (!load_directory (self, self->initial_dirs[i], &local_error) && !self->tolerant)
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
    }
  return TRUE;
}

static void
sbx_registry_initable_iface_init (GInitableIface *iface)
{
  iface->init = sbx_registry_initable_init;
}

/* ------------------------------------------------------------------------- */
/* Construction                                                               */
/* ------------------------------------------------------------------------- */

char **
sbx_registry_compute_default_directories (const char *plugindir,
                                          const char *plugin_path,
                                          gboolean    secure)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  g_auto(GStrv) entries = NULL;

  /* SBX_PLUGIN_PATH first (like GIO_EXTRA_MODULES): a build tree's plugins
   * shadow installed ones of the same name.  Never for a setuid/AT_SECURE
   * process: its environment belongs to a less privileged caller. */
  if (!secure && plugin_path != NULL)
    {
      entries = g_strsplit (plugin_path, G_SEARCHPATH_SEPARATOR_S, -1);
      for (guint i = 0; entries[i] != NULL; i++)
        if (entries[i][0] != '\0' && g_hash_table_add (seen, entries[i]))
          g_strv_builder_add (builder, entries[i]);
    }
  if (plugindir != NULL && plugindir[0] != '\0' && !g_hash_table_contains (seen, plugindir))
    g_strv_builder_add (builder, plugindir);
  return g_strv_builder_end (builder);
}

gboolean
sbx_registry_is_secure_execution (void)
{
  return getauxval (AT_SECURE) != 0;
}

SbxRegistry *
sbx_registry_new_tolerant (const char *const *dirs)
{
  g_autoptr(SbxRegistry) self = g_object_new (SBX_TYPE_REGISTRY, "directories", dirs, NULL);

  self->tolerant = TRUE;
  /* Tolerant: directory problems are listed, never fatal. */
  if (!g_initable_init (G_INITABLE (self), NULL, NULL))
    g_return_val_if_reached (NULL);
  return g_steal_pointer (&self);
}

/**
 * sbx_registry_get_default:
 *
 * Returns the process-wide registry, creating it on first use.
 *
 * It loads, in this order, the directories of the colon-separated
 * `SBX_PLUGIN_PATH` environment variable and the compiled-in plugin directory
 * (`$libdir/sbx-1/plugins`).  `SBX_PLUGIN_PATH` is ignored when the process
 * runs with `AT_SECURE` (setuid, setgid, file capabilities).  When two
 * directories hold a plugin of the same name, the first one wins.  A missing
 * or refused directory does not make this fail; it is listed with its error
 * (see [method@Sbx.Registry.list_directories]).
 *
 * Returns: (transfer none): the default registry
 *
 * Since: 0.1
 */
SbxRegistry *
sbx_registry_get_default (void)
{
  static SbxRegistry *default_registry; /* (owned) (atomic) */

  if (g_once_init_enter (&default_registry))
    {
      g_auto(GStrv) dirs = sbx_registry_compute_default_directories (SBX_PLUGINDIR,
                                                                     g_getenv ("SBX_PLUGIN_PATH"),
                                                                     sbx_registry_is_secure_execution ());

      g_once_init_leave (&default_registry, sbx_registry_new_tolerant ((const char *const *) dirs));
    }
  return default_registry;
}

/**
 * sbx_registry_new_for_directories:
 * @dirs: (array zero-terminated=1) (element-type filename): absolute plugin
 *   directories, searched in order
 * @error: return location for a [error@Sbx.PluginError]
 *
 * Creates a registry that loads exactly the plugins of @dirs; the environment
 * (`SBX_PLUGIN_PATH`) plays no part.  Plugins that are refused (unsafe
 * permissions, invalid descriptor, failed init, ...) do not make this fail:
 * they are listed with the reason.
 *
 * Returns: (transfer full) (nullable): a new registry, or %NULL when one of
 *   @dirs cannot be used (missing, not absolute, not a directory, or writable
 *   by group/others or owned by another user:
 *   %SBX_PLUGIN_ERROR_UNSAFE_PERMISSIONS)
 *
 * Since: 0.1
 */
SbxRegistry *
sbx_registry_new_for_directories (const char *const  *dirs,
                                  GError            **error)
{
  g_return_val_if_fail (dirs != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return g_initable_new (SBX_TYPE_REGISTRY, NULL, error, "directories", dirs, NULL);
}

SbxRegistry *
sbx_registry_new_with_host_features (const char *const  *dirs,
                                     uint64_t            features,
                                     GError            **error)
{
  g_autoptr(SbxRegistry) self = NULL;

  g_return_val_if_fail (dirs != NULL, NULL);
  g_return_val_if_fail ((features & ~SBX_HOST_FEATURES_KNOWN) == 0, NULL);

  self = g_initable_new (SBX_TYPE_REGISTRY, NULL, error, NULL);
  if (self == NULL)
    return NULL;
  self->host.features = features;
  for (gsize i = 0; dirs[i] != NULL; i++)
    if (!sbx_registry_add_directory (self, dirs[i], error))
      return NULL;
  return g_steal_pointer (&self);
}

/**
 * sbx_registry_add_directory:
 * @self: a [class@Sbx.Registry]
 * @dir: (type filename): an absolute plugin directory
 * @error: return location for a [error@Sbx.PluginError]
 *
 * Loads the plugins of @dir into @self.  Safe to call while other threads
 * use the registry; plugins are never unloaded.
 *
 * Returns: %TRUE when @dir could be searched (its plugins may still have
 *   been refused individually; they are listed with the reason)
 *
 * Since: 0.1
 */
gboolean
sbx_registry_add_directory (SbxRegistry  *self,
                            const char   *dir,
                            GError      **error)
{
  g_return_val_if_fail (SBX_IS_REGISTRY (self), FALSE);
  g_return_val_if_fail (dir != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return load_directory (self, dir, error);
}

/* ------------------------------------------------------------------------- */
/* Listing                                                                    */
/* ------------------------------------------------------------------------- */

/**
 * sbx_registry_list_directories:
 * @self: a [class@Sbx.Registry]
 *
 * The plugin directories searched so far, in search order, each with why
 * it could not be searched if it could not.  A snapshot: later loads do
 * not change it.
 *
 * Returns: (transfer container) (element-type SbxDirectoryInfo): the
 *   directories
 *
 * Since: 0.2
 */
GPtrArray *
sbx_registry_list_directories (SbxRegistry *self)
{
  GPtrArray *list;

  g_return_val_if_fail (SBX_IS_REGISTRY (self), NULL);

  list = g_ptr_array_new_with_free_func ((GDestroyNotify) sbx_directory_info_unref);
  g_mutex_lock (&self->lock);
  for (guint i = 0; i < self->directories->len; i++)
    {
      DirectoryRecord *record = self->directories->pdata[i];

      g_ptr_array_add (list, sbx_directory_info_new (record->path, record->error));
    }
  g_mutex_unlock (&self->lock);
  return list;
}

/**
 * sbx_registry_list_plugins:
 * @self: a [class@Sbx.Registry]
 *
 * The plugin files found so far, loaded or refused, in load order.  A
 * snapshot: later loads do not change it.
 *
 * Returns: (transfer container) (element-type SbxPluginInfo): the plugins
 *
 * Since: 0.2
 */
GPtrArray *
sbx_registry_list_plugins (SbxRegistry *self)
{
  GPtrArray *list;

  g_return_val_if_fail (SBX_IS_REGISTRY (self), NULL);

  list = g_ptr_array_new_with_free_func ((GDestroyNotify) sbx_plugin_info_unref);
  g_mutex_lock (&self->lock);
  for (guint i = 0; i < self->plugins->len; i++)
    {
      SbxPlugin *plugin = self->plugins->pdata[i];

      g_ptr_array_add (list, sbx_plugin_info_new (plugin->name, plugin->path, plugin->version,
                                                  plugin->license, plugin->state,
                                                  plugin->error));
    }
  g_mutex_unlock (&self->lock);
  return list;
}

/**
 * sbx_registry_list_extensions:
 * @self: a [class@Sbx.Registry]
 *
 * The registered extensions (backends, egress routes and reporters) of
 * loaded plugins, in registration order.  A snapshot: later loads do not
 * change it.
 *
 * Returns: (transfer container) (element-type SbxExtensionInfo): the
 *   extensions
 *
 * Since: 0.2
 */
GPtrArray *
sbx_registry_list_extensions (SbxRegistry *self)
{
  GPtrArray *list;

  g_return_val_if_fail (SBX_IS_REGISTRY (self), NULL);

  list = g_ptr_array_new_with_free_func ((GDestroyNotify) sbx_extension_info_unref);
  g_mutex_lock (&self->lock);
  for (guint i = 0; i < self->extensions->len; i++)
    {
      ExtensionRecord *ext = self->extensions->pdata[i];

      g_ptr_array_add (list, sbx_extension_info_new (ext->name, ext->kind, ext->plugin->name,
                                                     ext->priority));
    }
  g_mutex_unlock (&self->lock);
  return list;
}

SbxBackend *
sbx_registry_lookup_backend (SbxRegistry *self,
                             const char  *name)
{
  SbxBackend *backend = NULL;

  g_return_val_if_fail (SBX_IS_REGISTRY (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);

  g_mutex_lock (&self->lock);
  for (guint i = 0; i < self->extensions->len && backend == NULL; i++)
    {
      ExtensionRecord *ext = self->extensions->pdata[i];

      if (ext->kind == SBX_EXTENSION_KIND_BACKEND && g_str_equal (ext->name, name))
        backend = sbx_backend_ref (ext->backend);
    }
  g_mutex_unlock (&self->lock);
  return backend;
}

/**
 * sbx_registry_probe_backend:
 * @self: a [class@Sbx.Registry]
 * @name: a backend extension name
 * @out_unconfined_only: (out) (optional): whether the backend accepts only
 *   acknowledged Unconfined profiles
 * @error: return location for a [error@Sbx.PluginError]
 *
 * Probes backend @name (once per registry: a successful probe is cached)
 * and returns what it measured on this host: a report whose level and
 * guarantees are the backend's best on this host, with one entry per
 * mechanism (a missing one carries a "Hint: ..." in its detail).  Its
 * "required" set is empty.
 *
 * Returns: (transfer full) (nullable): the probe report, or %NULL with
 *   @error set when there is no such backend or its probe failed
 *
 * Since: 0.1
 */
SbxCompileReport *
sbx_registry_probe_backend (SbxRegistry  *self,
                            const char   *name,
                            gboolean     *out_unconfined_only,
                            GError      **error)
{
  g_autoptr(SbxBackend) backend = NULL;
  SbxCompileReport *report = NULL;

  g_return_val_if_fail (SBX_IS_REGISTRY (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  backend = sbx_registry_lookup_backend (self, name);
  if (backend == NULL)
    {
      sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE,
                            "no loaded backend is called '%s'", name);
      return NULL;
    }
  if (!sbx_backend_probe (backend, &report, error))
    return NULL;
  if (out_unconfined_only != NULL)
    *out_unconfined_only = sbx_backend_is_unconfined_only (backend);
  return report;
}

/* ------------------------------------------------------------------------- */
/* State for the sibling files (sbx-registry-state-private.h)                  */
/* ------------------------------------------------------------------------- */

void
sbx_registry_snapshot_candidates (SbxRegistry  *self,
                                  GPtrArray   **out_backends,
                                  GPtrArray   **out_refused)
{
  GPtrArray *backends = g_ptr_array_new_with_free_func ((GDestroyNotify) sbx_backend_unref);
  GPtrArray *refused = g_ptr_array_new_with_free_func ((GDestroyNotify) sbx_plugin_unref);

  g_mutex_lock (&self->lock);
  for (guint i = 0; i < self->extensions->len; i++)
    {
      ExtensionRecord *ext = self->extensions->pdata[i];

      if (ext->kind == SBX_EXTENSION_KIND_BACKEND)
        g_ptr_array_add (backends, sbx_backend_ref (ext->backend));
    }
  for (guint i = 0; i < self->plugins->len; i++)
    {
      SbxPlugin *plugin = self->plugins->pdata[i];

      if (plugin->state == SBX_PLUGIN_STATE_REFUSED)
        g_ptr_array_add (refused, sbx_plugin_ref (plugin));
    }
  g_mutex_unlock (&self->lock);
  *out_backends = backends;
  *out_refused = refused;
}

SbxPlugin *
sbx_registry_find_reporter (SbxRegistry                *self,
                            const char                 *name,
                            const SbxReporterVTableV1 **vtable_out)
{
  SbxPlugin *plugin = NULL;

  g_mutex_lock (&self->lock);
  for (guint i = 0; i < self->extensions->len && plugin == NULL; i++)
    {
      ExtensionRecord *ext = self->extensions->pdata[i];

      if (ext->kind == SBX_EXTENSION_KIND_REPORTER && g_str_equal (ext->name, name))
        {
          plugin = sbx_plugin_ref (ext->plugin);
          *vtable_out = ext->vtable;
        }
    }
  g_mutex_unlock (&self->lock);
  return plugin;
}


/* Finds reporter extension @name and opens it as a sink. */
SbxReporterSink *
sbx_registry_open_reporter (SbxRegistry *self,
                            const char  *name,
                            const char  *config,
                            GError     **error)
{
  g_autoptr(SbxPlugin) plugin = NULL;
  const SbxReporterVTableV1 *vtable = NULL;

  g_return_val_if_fail (SBX_IS_REGISTRY (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  plugin = sbx_registry_find_reporter (self, name, &vtable);
  if (plugin == NULL)
    {
      sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_UNAVAILABLE, "no loaded reporter is called '%s'", name);
      return NULL;
    }
  return sbx_reporter_sink_open (plugin, name, vtable, config, error);
}

SbxPlugin *
sbx_registry_find_egress (SbxRegistry              *self,
                          const char               *name,
                          const SbxEgressVTableV1 **vtable_out)
{
  SbxPlugin *plugin = NULL;

  g_mutex_lock (&self->lock);
  for (guint i = 0; i < self->extensions->len && plugin == NULL; i++)
    {
      ExtensionRecord *ext = self->extensions->pdata[i];

      if (ext->kind == SBX_EXTENSION_KIND_EGRESS && g_str_equal (ext->name, name))
        {
          plugin = sbx_plugin_ref (ext->plugin);
          *vtable_out = ext->vtable;
        }
    }
  g_mutex_unlock (&self->lock);
  return plugin;
}
