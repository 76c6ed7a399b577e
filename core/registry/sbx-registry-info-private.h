/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The registry's snapshots (SbxDirectoryInfo, SbxPluginInfo,
 * SbxExtensionInfo): made by sbx_registry_list_*() under the registry's
 * lock, immutable afterwards.  Never installed.
 */
#pragma once

#include "sbx-registry.h"

G_BEGIN_DECLS

/* Each copies its strings and error; @error may be NULL. */
SbxDirectoryInfo *sbx_directory_info_new (const char       *path,
                                          const GError     *error);
SbxPluginInfo    *sbx_plugin_info_new    (const char       *name,
                                          const char       *path,
                                          const char       *version,
                                          const char       *license,
                                          SbxPluginState    state,
                                          const GError     *error);
SbxExtensionInfo *sbx_extension_info_new (const char       *name,
                                          SbxExtensionKind  kind,
                                          const char       *plugin_name,
                                          int               priority);

G_END_DECLS
