/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The plugin record (sbx-plugin.c): what the backend and reporter wrappers,
 * the host side of egress and the loader hold of one plugin file, and the
 * plugin error domain's way to fail.  Loading is the loader's
 * (sbx-plugin-loader-private.h), the host table and host calls the host's
 * (sbx-plugin-host-private.h).
 */
#pragma once

#include <glib.h>
#include "sbx-plugin-envelope.h"
#include "sbx-registry.h"         /* SbxPluginState, SbxPluginError */

G_BEGIN_DECLS

/* One plugin file found in a plugin directory, loaded or refused.
 * Ref-counted; the fields are written before the record is published and
 * never change afterwards, so readers need no lock. */
typedef struct _SbxPlugin
{
  gatomicrefcount            ref_count;
  char                      *path;        /* the file as found */
  char                      *name;        /* file-derived, dash form: "mock-ok" */
  char                      *version;     /* (nullable) copied from the descriptor */
  char                      *license;     /* (nullable) */
  SbxPluginState             state;
  GError                    *error;       /* (nullable) why it was refused */
  void                      *dl_handle;   /* (nullable) never dlclose'd once init ran */
  const SbxPluginDescriptor *desc;        /* (nullable) points into the loaded object */
  void                      *ctx;         /* plugin_ctx from init */
  gboolean                   initialised; /* init returned OK: fini runs on the last unref */
} SbxPlugin;

/* A refused record for the file @path (plugin name @name, may be NULL). */
SbxPlugin *sbx_plugin_new   (const char *path,
                             const char *name);
SbxPlugin *sbx_plugin_ref   (SbxPlugin  *plugin);
void       sbx_plugin_unref (SbxPlugin  *plugin);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxPlugin, sbx_plugin_unref)
/* Marks @plugin refused for @error (taken). */
void       sbx_plugin_refuse (SbxPlugin *plugin,
                              GError    *error);

/* g_set_error in SBX_PLUGIN_ERROR; returns FALSE. */
gboolean   sbx_set_plugin_error (GError         **error,
                                 SbxPluginError   code,
                                 const char      *format,
                                 ...) G_GNUC_PRINTF (3, 4);

G_END_DECLS
