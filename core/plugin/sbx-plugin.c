/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The plugin record (SbxPlugin) and its lifetime, and the plugin error
 * domain: what the backend and reporter wrappers and the egress host side
 * hold of a plugin.  Loading one (finding, checking, mapping, initialising)
 * is the loader's (sbx-plugin-loader.c), above this.
 */
#include "sbx-plugin-private.h"

/**
 * sbx_plugin_error_quark:
 *
 * Returns the error domain of [error@Sbx.PluginError].
 *
 * Returns: the quark
 *
 * Since: 0.1
 */
G_DEFINE_QUARK (sbx-plugin-error-quark, sbx_plugin_error)

SbxPlugin *
sbx_plugin_new (const char *path,
                const char *name)
{
  SbxPlugin *plugin = g_new0 (SbxPlugin, 1);

  g_atomic_ref_count_init (&plugin->ref_count);
  plugin->path = g_strdup (path);
  plugin->name = g_strdup (name);
  plugin->state = SBX_PLUGIN_STATE_REFUSED;
  return plugin;
}

SbxPlugin *
sbx_plugin_ref (SbxPlugin *plugin)
{
  g_return_val_if_fail (plugin != NULL, NULL);

  g_atomic_ref_count_inc (&plugin->ref_count);
  return plugin;
}

void
sbx_plugin_unref (SbxPlugin *plugin)
{
  g_return_if_fail (plugin != NULL);

  if (!g_atomic_ref_count_dec (&plugin->ref_count))
    return;
  /* fini of this registry's plugin_ctx; the code itself stays mapped: a
   * plugin that initialised is never dlclose'd (it may have started threads
   * or registered callbacks we cannot see). */
  if (plugin->initialised && plugin->desc->fini != NULL)
    plugin->desc->fini (plugin->ctx);
  g_free (plugin->path);
  g_free (plugin->name);
  g_free (plugin->version);
  g_free (plugin->license);
  g_clear_error (&plugin->error);
  g_free (plugin);
}

void
sbx_plugin_refuse (SbxPlugin *plugin,
                   GError    *error)
{
  g_clear_error (&plugin->error);
  plugin->error = error;
  plugin->state = SBX_PLUGIN_STATE_REFUSED;
}

gboolean
sbx_set_plugin_error (GError         **error,
                      SbxPluginError   code,
                      const char      *format,
                      ...)
{
  va_list args;

  if (error == NULL)
    return FALSE;
  va_start (args, format);
  *error = g_error_new_valist (SBX_PLUGIN_ERROR, code, format, args);
  va_end (args);
  return FALSE;
}
