/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a registry lists: one immutable, reference-counted record per plugin
 * directory, plugin file and extension, copied under the registry's lock by
 * sbx_registry_list_*(), so a reader never holds an index into lists that
 * another thread may grow.
 */
#include "sbx-registry-info-private.h"

struct _SbxDirectoryInfo
{
  gatomicrefcount  ref_count;
  char            *path;
  GError          *error;
};

struct _SbxPluginInfo
{
  gatomicrefcount  ref_count;
  char            *name;
  char            *path;
  char            *version;
  char            *license;
  SbxPluginState   state;
  GError          *error;
};

struct _SbxExtensionInfo
{
  gatomicrefcount   ref_count;
  char             *name;
  SbxExtensionKind  kind;
  char             *plugin_name;
  int               priority;
};

/**
 * SbxDirectoryInfo:
 *
 * One plugin directory a [class@Sbx.Registry] searched or tried to search,
 * as [method@Sbx.Registry.list_directories] saw it.  Immutable.
 *
 * Since: 0.2
 */
G_DEFINE_BOXED_TYPE (SbxDirectoryInfo, sbx_directory_info, sbx_directory_info_ref,
                     sbx_directory_info_unref)

/**
 * SbxPluginInfo:
 *
 * One plugin file a [class@Sbx.Registry] found, loaded or refused, as
 * [method@Sbx.Registry.list_plugins] saw it.  Immutable.
 *
 * Since: 0.2
 */
G_DEFINE_BOXED_TYPE (SbxPluginInfo, sbx_plugin_info, sbx_plugin_info_ref, sbx_plugin_info_unref)

/**
 * SbxExtensionInfo:
 *
 * One extension (a backend, an egress route or a reporter) of a loaded
 * plugin, as [method@Sbx.Registry.list_extensions] saw it.  Immutable.
 *
 * Since: 0.2
 */
G_DEFINE_BOXED_TYPE (SbxExtensionInfo, sbx_extension_info, sbx_extension_info_ref,
                     sbx_extension_info_unref)

SbxDirectoryInfo *
sbx_directory_info_new (const char   *path,
                        const GError *error)
{
  SbxDirectoryInfo *self = g_new0 (SbxDirectoryInfo, 1);

  g_atomic_ref_count_init (&self->ref_count);
  self->path = g_strdup (path);
  self->error = error != NULL ? g_error_copy (error) : NULL;
  return self;
}

/**
 * sbx_directory_info_ref:
 * @self: a [struct@Sbx.DirectoryInfo]
 *
 * Takes a reference.
 *
 * Returns: (transfer full): @self
 *
 * Since: 0.2
 */
SbxDirectoryInfo *
sbx_directory_info_ref (SbxDirectoryInfo *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

/**
 * sbx_directory_info_unref:
 * @self: (transfer full): a [struct@Sbx.DirectoryInfo]
 *
 * Drops a reference; the last one frees the record.
 *
 * Since: 0.2
 */
void
sbx_directory_info_unref (SbxDirectoryInfo *self)
{
  g_return_if_fail (self != NULL);

  if (!g_atomic_ref_count_dec (&self->ref_count))
    return;
  g_free (self->path);
  g_clear_error (&self->error);
  g_free (self);
}

/**
 * sbx_directory_info_get_path:
 * @self: a [struct@Sbx.DirectoryInfo]
 *
 * The directory, as given to the registry.
 *
 * Returns: (transfer none) (type filename): the path
 *
 * Since: 0.2
 */
const char *
sbx_directory_info_get_path (SbxDirectoryInfo *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->path;
}

/**
 * sbx_directory_info_get_error:
 * @self: a [struct@Sbx.DirectoryInfo]
 *
 * Why the directory could not be searched (missing, not a directory,
 * unsafe permissions), or %NULL when it was searched.
 *
 * Returns: (transfer none) (nullable): the error
 *
 * Since: 0.2
 */
const GError *
sbx_directory_info_get_error (SbxDirectoryInfo *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->error;
}

SbxPluginInfo *
sbx_plugin_info_new (const char     *name,
                     const char     *path,
                     const char     *version,
                     const char     *license,
                     SbxPluginState  state,
                     const GError   *error)
{
  SbxPluginInfo *self = g_new0 (SbxPluginInfo, 1);

  g_atomic_ref_count_init (&self->ref_count);
  self->name = g_strdup (name);
  self->path = g_strdup (path);
  self->version = g_strdup (version);
  self->license = g_strdup (license);
  self->state = state;
  self->error = error != NULL ? g_error_copy (error) : NULL;
  return self;
}

/**
 * sbx_plugin_info_ref:
 * @self: a [struct@Sbx.PluginInfo]
 *
 * Takes a reference.
 *
 * Returns: (transfer full): @self
 *
 * Since: 0.2
 */
SbxPluginInfo *
sbx_plugin_info_ref (SbxPluginInfo *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

/**
 * sbx_plugin_info_unref:
 * @self: (transfer full): a [struct@Sbx.PluginInfo]
 *
 * Drops a reference; the last one frees the record.
 *
 * Since: 0.2
 */
void
sbx_plugin_info_unref (SbxPluginInfo *self)
{
  g_return_if_fail (self != NULL);

  if (!g_atomic_ref_count_dec (&self->ref_count))
    return;
  g_free (self->name);
  g_free (self->path);
  g_free (self->version);
  g_free (self->license);
  g_clear_error (&self->error);
  g_free (self);
}

/**
 * sbx_plugin_info_get_name:
 * @self: a [struct@Sbx.PluginInfo]
 *
 * The plugin's name, derived from its file name (`sbx-plugin-NAME.so`).
 *
 * Returns: (transfer none): the name
 *
 * Since: 0.2
 */
const char *
sbx_plugin_info_get_name (SbxPluginInfo *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->name;
}

/**
 * sbx_plugin_info_get_path:
 * @self: a [struct@Sbx.PluginInfo]
 *
 * The plugin's file.
 *
 * Returns: (transfer none) (type filename): the path
 *
 * Since: 0.2
 */
const char *
sbx_plugin_info_get_path (SbxPluginInfo *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->path;
}

/**
 * sbx_plugin_info_get_version:
 * @self: a [struct@Sbx.PluginInfo]
 *
 * The version the plugin declares.
 *
 * Returns: (transfer none) (nullable): the version, or %NULL when the plugin
 *   was refused before its descriptor was validated
 *
 * Since: 0.2
 */
const char *
sbx_plugin_info_get_version (SbxPluginInfo *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->version;
}

/**
 * sbx_plugin_info_get_license:
 * @self: a [struct@Sbx.PluginInfo]
 *
 * The SPDX license identifier the plugin declares.
 *
 * Returns: (transfer none) (nullable): the license, or %NULL when the plugin
 *   was refused before its descriptor was validated
 *
 * Since: 0.2
 */
const char *
sbx_plugin_info_get_license (SbxPluginInfo *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->license;
}

/**
 * sbx_plugin_info_get_state:
 * @self: a [struct@Sbx.PluginInfo]
 *
 * Whether the plugin is loaded or was refused.
 *
 * Returns: the state
 *
 * Since: 0.2
 */
SbxPluginState
sbx_plugin_info_get_state (SbxPluginInfo *self)
{
  g_return_val_if_fail (self != NULL, SBX_PLUGIN_STATE_REFUSED);

  return self->state;
}

/**
 * sbx_plugin_info_get_error:
 * @self: a [struct@Sbx.PluginInfo]
 *
 * Why the plugin was refused: a [error@Sbx.PluginError] whose message names
 * the plugin, the file and the fault (for permissions, the mode).
 *
 * Returns: (transfer none) (nullable): the error, or %NULL for a loaded
 *   plugin
 *
 * Since: 0.2
 */
const GError *
sbx_plugin_info_get_error (SbxPluginInfo *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->error;
}

SbxExtensionInfo *
sbx_extension_info_new (const char       *name,
                        SbxExtensionKind  kind,
                        const char       *plugin_name,
                        int               priority)
{
  SbxExtensionInfo *self = g_new0 (SbxExtensionInfo, 1);

  g_atomic_ref_count_init (&self->ref_count);
  self->name = g_strdup (name);
  self->kind = kind;
  self->plugin_name = g_strdup (plugin_name);
  self->priority = priority;
  return self;
}

/**
 * sbx_extension_info_ref:
 * @self: a [struct@Sbx.ExtensionInfo]
 *
 * Takes a reference.
 *
 * Returns: (transfer full): @self
 *
 * Since: 0.2
 */
SbxExtensionInfo *
sbx_extension_info_ref (SbxExtensionInfo *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

/**
 * sbx_extension_info_unref:
 * @self: (transfer full): a [struct@Sbx.ExtensionInfo]
 *
 * Drops a reference; the last one frees the record.
 *
 * Since: 0.2
 */
void
sbx_extension_info_unref (SbxExtensionInfo *self)
{
  g_return_if_fail (self != NULL);

  if (!g_atomic_ref_count_dec (&self->ref_count))
    return;
  g_free (self->name);
  g_free (self->plugin_name);
  g_free (self);
}

/**
 * sbx_extension_info_get_name:
 * @self: a [struct@Sbx.ExtensionInfo]
 *
 * The extension's name ("linux-userns"), unique across the registry.
 *
 * Returns: (transfer none): the name
 *
 * Since: 0.2
 */
const char *
sbx_extension_info_get_name (SbxExtensionInfo *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->name;
}

/**
 * sbx_extension_info_get_kind:
 * @self: a [struct@Sbx.ExtensionInfo]
 *
 * What the extension is.
 *
 * Returns: the kind
 *
 * Since: 0.2
 */
SbxExtensionKind
sbx_extension_info_get_kind (SbxExtensionInfo *self)
{
  g_return_val_if_fail (self != NULL, SBX_EXTENSION_KIND_BACKEND);

  return self->kind;
}

/**
 * sbx_extension_info_get_plugin_name:
 * @self: a [struct@Sbx.ExtensionInfo]
 *
 * The name of the plugin that provides the extension.
 *
 * Returns: (transfer none): the plugin name
 *
 * Since: 0.2
 */
const char *
sbx_extension_info_get_plugin_name (SbxExtensionInfo *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return self->plugin_name;
}

/**
 * sbx_extension_info_get_priority:
 * @self: a [struct@Sbx.ExtensionInfo]
 *
 * The extension's priority: higher is tried first, negative means last
 * resort.
 *
 * Returns: the priority
 *
 * Since: 0.2
 */
int
sbx_extension_info_get_priority (SbxExtensionInfo *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->priority;
}
