/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A real include guard, not #pragma once: the build tree holds a copy of
 * each public header (so <sbx/...> works uninstalled) and clang treats the
 * two copies as different files. */
#ifndef SBX_REGISTRY_H
#define SBX_REGISTRY_H

#if !defined (SBX_INSIDE) && !defined (SBX_COMPILATION)
#error "Only <sbx/sbx.h> can be included directly."
#endif

#include <gio/gio.h>
#include "sbx-version.h"
#include "sbx-guarantees.h"
#include "sbx-profile.h"
#include "sbx-compile-report.h"

G_BEGIN_DECLS

/**
 * SBX_PLUGIN_ERROR:
 *
 * The error domain of plugin loading, backend selection and calls into
 * plugins.  Errors in this domain use [error@Sbx.PluginError] codes.
 *
 * Since: 0.1
 */
#define SBX_PLUGIN_ERROR (sbx_plugin_error_quark ())

/**
 * SbxPluginError:
 * @SBX_PLUGIN_ERROR_LOAD_FAILED: the plugin file could not be opened or
 *   loaded (unresolved symbol, missing entry symbol, not a shared object, a
 *   directory that does not exist). Since: 0.1
 * @SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR: the plugin's descriptor or one of its
 *   extensions is malformed (too small, wrong name, unknown extension kind,
 *   vtable without its mandatory functions, duplicate extension name). Since: 0.1
 * @SBX_PLUGIN_ERROR_ABI_MISMATCH: the plugin speaks another plugin ABI version
 *   than this library. Since: 0.1
 * @SBX_PLUGIN_ERROR_MISSING_HOST_FEATURE: the plugin requires a host feature
 *   this library does not know. Since: 0.1
 * @SBX_PLUGIN_ERROR_UNSAFE_PERMISSIONS: the plugin file or its directory is
 *   writable by group or others, owned by a user other than root or the
 *   current effective user, or not a regular file/directory. Since: 0.1
 * @SBX_PLUGIN_ERROR_INIT_FAILED: the plugin's init function failed. Since: 0.1
 * @SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE: no loaded backend can run the
 *   profile, or the backend named by `SBX_BACKEND` is missing or was
 *   rejected (there is never a fallback to another one). Since: 0.1
 * @SBX_PLUGIN_ERROR_FAILED: a plugin call failed (`SBX_STATUS_FAILED`). Since: 0.1
 * @SBX_PLUGIN_ERROR_UNAVAILABLE: a mechanism the plugin needs is absent on
 *   this host (`SBX_STATUS_UNAVAILABLE`). Since: 0.1
 * @SBX_PLUGIN_ERROR_UNSUPPORTED: the extension cannot honour the request
 *   (`SBX_STATUS_UNSUPPORTED`). Since: 0.1
 * @SBX_PLUGIN_ERROR_INVALID: the input failed the extension's own
 *   re-validation, or the plugin returned malformed output
 *   (`SBX_STATUS_INVALID`). Since: 0.1
 * @SBX_PLUGIN_ERROR_NO_MEMORY: the plugin ran out of memory
 *   (`SBX_STATUS_NO_MEMORY`). Since: 0.1
 * @SBX_PLUGIN_ERROR_EXEC_NOT_FOUND: spawn: the command was not found
 *   (`SBX_STATUS_EXEC_NOT_FOUND`; the CLI exits 127). Since: 0.1
 * @SBX_PLUGIN_ERROR_EXEC_DENIED: spawn: the command was found but is not
 *   executable (`SBX_STATUS_EXEC_DENIED`; the CLI exits 126). Since: 0.1
 *
 * Errors from loading plugins, selecting a backend and calling plugins.
 * Every message names the plugin (and the extension, for calls into one).
 *
 * Since: 0.1
 */
typedef enum /*< prefix=SBX_PLUGIN_ERROR >*/
{
  SBX_PLUGIN_ERROR_LOAD_FAILED,
  SBX_PLUGIN_ERROR_INVALID_DESCRIPTOR,
  SBX_PLUGIN_ERROR_ABI_MISMATCH,
  SBX_PLUGIN_ERROR_MISSING_HOST_FEATURE,
  SBX_PLUGIN_ERROR_UNSAFE_PERMISSIONS,
  SBX_PLUGIN_ERROR_INIT_FAILED,
  SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE,
  SBX_PLUGIN_ERROR_FAILED,
  SBX_PLUGIN_ERROR_UNAVAILABLE,
  SBX_PLUGIN_ERROR_UNSUPPORTED,
  SBX_PLUGIN_ERROR_INVALID,
  SBX_PLUGIN_ERROR_NO_MEMORY,
  SBX_PLUGIN_ERROR_EXEC_NOT_FOUND,
  SBX_PLUGIN_ERROR_EXEC_DENIED,
} SbxPluginError;

SBX_AVAILABLE_IN_0_1
GQuark sbx_plugin_error_quark (void);

/**
 * SbxPluginState:
 * @SBX_PLUGIN_STATE_LOADED: the plugin was validated, initialised and its
 *   extensions registered.
 * @SBX_PLUGIN_STATE_REFUSED: the plugin was refused; see
 *   [method@Sbx.PluginInfo.get_error].
 *
 * Whether a plugin file found in a plugin directory is in use.
 *
 * Since: 0.1
 */
typedef enum /*< prefix=SBX_PLUGIN_STATE >*/
{
  SBX_PLUGIN_STATE_LOADED  = 0,
  SBX_PLUGIN_STATE_REFUSED = 1,
} SbxPluginState;

/**
 * SbxExtensionKind:
 * @SBX_EXTENSION_KIND_BACKEND: a confinement backend.
 * @SBX_EXTENSION_KIND_EGRESS: an egress route (authenticated proxy).
 * @SBX_EXTENSION_KIND_REPORTER: a reporter that receives events.
 *
 * The kind of a plugin extension.  The values equal the plugin ABI's
 * `SBX_EXT_*` numbers.
 *
 * Since: 0.1
 */
typedef enum /*< prefix=SBX_EXTENSION_KIND >*/
{
  SBX_EXTENSION_KIND_BACKEND  = 1,
  SBX_EXTENSION_KIND_EGRESS   = 2,
  SBX_EXTENSION_KIND_REPORTER = 3,
} SbxExtensionKind;

typedef struct _SbxDirectoryInfo SbxDirectoryInfo;
typedef struct _SbxPluginInfo    SbxPluginInfo;
typedef struct _SbxExtensionInfo SbxExtensionInfo;

#define SBX_TYPE_DIRECTORY_INFO (sbx_directory_info_get_type ())
SBX_AVAILABLE_IN_0_2
GType             sbx_directory_info_get_type        (void) G_GNUC_CONST;
SBX_AVAILABLE_IN_0_2
SbxDirectoryInfo *sbx_directory_info_ref             (SbxDirectoryInfo *self);
SBX_AVAILABLE_IN_0_2
void              sbx_directory_info_unref           (SbxDirectoryInfo *self);
SBX_AVAILABLE_IN_0_2
const char       *sbx_directory_info_get_path        (SbxDirectoryInfo *self);
SBX_AVAILABLE_IN_0_2
const GError     *sbx_directory_info_get_error       (SbxDirectoryInfo *self);

#define SBX_TYPE_PLUGIN_INFO (sbx_plugin_info_get_type ())
SBX_AVAILABLE_IN_0_2
GType             sbx_plugin_info_get_type           (void) G_GNUC_CONST;
SBX_AVAILABLE_IN_0_2
SbxPluginInfo    *sbx_plugin_info_ref                (SbxPluginInfo    *self);
SBX_AVAILABLE_IN_0_2
void              sbx_plugin_info_unref              (SbxPluginInfo    *self);
SBX_AVAILABLE_IN_0_2
const char       *sbx_plugin_info_get_name           (SbxPluginInfo    *self);
SBX_AVAILABLE_IN_0_2
const char       *sbx_plugin_info_get_path           (SbxPluginInfo    *self);
SBX_AVAILABLE_IN_0_2
const char       *sbx_plugin_info_get_version        (SbxPluginInfo    *self);
SBX_AVAILABLE_IN_0_2
const char       *sbx_plugin_info_get_license        (SbxPluginInfo    *self);
SBX_AVAILABLE_IN_0_2
SbxPluginState    sbx_plugin_info_get_state          (SbxPluginInfo    *self);
SBX_AVAILABLE_IN_0_2
const GError     *sbx_plugin_info_get_error          (SbxPluginInfo    *self);

#define SBX_TYPE_EXTENSION_INFO (sbx_extension_info_get_type ())
SBX_AVAILABLE_IN_0_2
GType             sbx_extension_info_get_type        (void) G_GNUC_CONST;
SBX_AVAILABLE_IN_0_2
SbxExtensionInfo *sbx_extension_info_ref             (SbxExtensionInfo *self);
SBX_AVAILABLE_IN_0_2
void              sbx_extension_info_unref           (SbxExtensionInfo *self);
SBX_AVAILABLE_IN_0_2
const char       *sbx_extension_info_get_name        (SbxExtensionInfo *self);
SBX_AVAILABLE_IN_0_2
SbxExtensionKind  sbx_extension_info_get_kind        (SbxExtensionInfo *self);
SBX_AVAILABLE_IN_0_2
const char       *sbx_extension_info_get_plugin_name (SbxExtensionInfo *self);
SBX_AVAILABLE_IN_0_2
int               sbx_extension_info_get_priority    (SbxExtensionInfo *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxDirectoryInfo, sbx_directory_info_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxPluginInfo, sbx_plugin_info_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxExtensionInfo, sbx_extension_info_unref)

/**
 * SbxRegistry:
 *
 * The set of loaded plugins and the extensions they provide: confinement
 * backends, egress routes and reporters.
 *
 * A registry loads plugins from directories, validates each one before
 * running any of its code, and refuses (and lists, with the reason) every
 * plugin that is unsafe or does not match the ABI.  An executor set asks it
 * for the strongest backend whose probe covers what a profile requires.
 * [func@Sbx.Registry.get_default] is the process-wide instance;
 * [ctor@Sbx.Registry.new_for_directories] makes private ones (tests, apps with
 * their own plugin directory).
 *
 * Since: 0.1
 */
#define SBX_TYPE_REGISTRY (sbx_registry_get_type ())
SBX_AVAILABLE_IN_0_1
G_DECLARE_FINAL_TYPE (SbxRegistry, sbx_registry, SBX, REGISTRY, GObject)

SBX_AVAILABLE_IN_0_1
SbxRegistry      *sbx_registry_get_default             (void);
SBX_AVAILABLE_IN_0_1
SbxRegistry      *sbx_registry_new_for_directories     (const char *const  *dirs,
                                                        GError            **error);
SBX_AVAILABLE_IN_0_1
gboolean          sbx_registry_add_directory           (SbxRegistry        *self,
                                                        const char         *dir,
                                                        GError            **error);

SBX_AVAILABLE_IN_0_2
GPtrArray        *sbx_registry_list_directories        (SbxRegistry        *self);
SBX_AVAILABLE_IN_0_2
GPtrArray        *sbx_registry_list_plugins            (SbxRegistry        *self);
SBX_AVAILABLE_IN_0_2
GPtrArray        *sbx_registry_list_extensions         (SbxRegistry        *self);

SBX_AVAILABLE_IN_0_1
SbxCompileReport *sbx_registry_probe_backend           (SbxRegistry        *self,
                                                        const char         *name,
                                                        gboolean           *out_unconfined_only,
                                                        GError            **error);
SBX_AVAILABLE_IN_0_1
gboolean          sbx_registry_preview_selection       (SbxRegistry        *self,
                                                        SbxIsolation        isolation,
                                                        SbxGuarantees       required,
                                                        SbxCompileReport  **out_report,
                                                        GError            **error);
SBX_AVAILABLE_IN_0_1
char             *sbx_registry_explain_profile         (SbxRegistry        *self,
                                                        const char         *backend,
                                                        SbxProfile         *profile,
                                                        SbxCompileReport  **out_report,
                                                        GError            **error);
SBX_AVAILABLE_IN_0_1
char             *sbx_registry_to_json                 (SbxRegistry        *self);

G_END_DECLS

#endif /* SBX_REGISTRY_H */
