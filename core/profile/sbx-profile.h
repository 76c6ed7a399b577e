/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* An include guard, not only #pragma once: the build tree holds a copy of
 * this header (core/include/sbx/), and clang treats the two files as
 * different, so code including both <sbx/sbx.h> and a core private header
 * would see every declaration twice. */
#ifndef SBX_PROFILE_H
#define SBX_PROFILE_H

#if !defined (SBX_INSIDE) && !defined (SBX_COMPILATION)
#error "Only <sbx/sbx.h> can be included directly."
#endif

#include <glib-object.h>
#include "sbx-version.h"
#include "sbx-guarantees.h"

G_BEGIN_DECLS

/**
 * SbxAccess:
 * @SBX_ACCESS_DENY: never allowed; a request is refused without prompting.
 * @SBX_ACCESS_GATED: allowed only for one spawn, through a verified grant.
 * @SBX_ACCESS_ALLOW: always allowed.
 *
 * The authority of one access dimension.  Ordered `DENY < GATED < ALLOW`;
 * the numeric values are frozen.
 *
 * Since: 0.1
 */
typedef enum /*< prefix=SBX_ACCESS >*/
{
  SBX_ACCESS_DENY  = 0,
  SBX_ACCESS_GATED = 1,
  SBX_ACCESS_ALLOW = 2,
} SbxAccess;

/**
 * SbxHome:
 * @SBX_HOME_ISOLATED: each executor gets a private, empty HOME.
 * @SBX_HOME_REAL: the user's real HOME (access to it still follows the profile).
 *
 * Which HOME the child sees.
 *
 * Since: 0.1
 */
typedef enum /*< prefix=SBX_HOME >*/
{
  SBX_HOME_ISOLATED = 0,
  SBX_HOME_REAL     = 1,
} SbxHome;

/**
 * SbxIsolation:
 * @SBX_ISOLATION_SANDBOXED: run under OS confinement, or not at all.
 * @SBX_ISOLATION_UNCONFINED: run without confinement; must be acknowledged
 *   and needs every filesystem and network dimension at %SBX_ACCESS_ALLOW.
 *
 * Whether a profile requires OS confinement.
 *
 * Since: 0.1
 */
typedef enum /*< prefix=SBX_ISOLATION >*/
{
  SBX_ISOLATION_SANDBOXED  = 0,
  SBX_ISOLATION_UNCONFINED = 1,
} SbxIsolation;

/**
 * SbxDeniedPaths:
 * @SBX_DENIED_PATHS_PERMISSION_DENIED: a host path that exists and that the
 *   profile does not open answers "Permission denied" (`EACCES`), so a tool
 *   (or an agent reading its output) learns that the sandbox refused it
 *   rather than that it is missing; the refusal is also reported as a
 *   [struct@Sbx.Denial].  The default.
 * @SBX_DENIED_PATHS_NOT_FOUND: such a path answers "No such file or
 *   directory" (`ENOENT`), as a missing one does: the sandbox does not reveal
 *   which host paths exist.  The refusal is still reported as a
 *   [struct@Sbx.Denial] to the application (outside the sandbox).
 *
 * What a sandboxed program is told when it names a host path outside the
 * profile's view (the JSON member `"denied-paths"`).  The numeric values
 * are frozen.  A backend that cannot tell a denied path from a missing one
 * answers as it can; the compile report says what holds.
 *
 * Since: 0.2
 */
typedef enum /*< prefix=SBX_DENIED_PATHS >*/
{
  SBX_DENIED_PATHS_PERMISSION_DENIED = 0,
  SBX_DENIED_PATHS_NOT_FOUND         = 1,
} SbxDeniedPaths;

/**
 * SbxProfileError:
 * @SBX_PROFILE_ERROR_INVALID: the profile (or a JSON member of it) is invalid;
 *   the message names the field and the value at fault.  Since: 0.1
 * @SBX_PROFILE_ERROR_PARSE: the profile text is not well-formed JSON.  Since: 0.1
 * @SBX_PROFILE_ERROR_WORKSPACE_MISMATCH: [method@Sbx.Profile.restrict] was given
 *   profiles whose workspace roots differ.  Since: 0.1
 *
 * Errors from building, loading and narrowing a [struct@Sbx.Profile].
 *
 * Since: 0.1
 */
typedef enum /*< prefix=SBX_PROFILE_ERROR >*/
{
  SBX_PROFILE_ERROR_INVALID,
  SBX_PROFILE_ERROR_PARSE,
  SBX_PROFILE_ERROR_WORKSPACE_MISMATCH,
} SbxProfileError;

/**
 * SBX_PROFILE_ERROR:
 *
 * Error domain of [error@Sbx.ProfileError].
 *
 * Since: 0.1
 */
#define SBX_PROFILE_ERROR (sbx_profile_error_quark ())
SBX_AVAILABLE_IN_0_1
GQuark sbx_profile_error_quark (void);

/**
 * SBX_ACCESS_VERSION:
 *
 * The access vocabulary version a valid profile reports from
 * [method@Sbx.Profile.get_access_version].  Callers must reject 0 and any
 * version they do not know.
 *
 * Since: 0.1
 */
#define SBX_ACCESS_VERSION 1

/* ------------------------------------------------------------------------- */

typedef struct _SbxProfileConfig SbxProfileConfig;

#define SBX_TYPE_PROFILE_CONFIG (sbx_profile_config_get_type ())
SBX_AVAILABLE_IN_0_1
GType             sbx_profile_config_get_type         (void) G_GNUC_CONST;
SBX_AVAILABLE_IN_0_1
SbxProfileConfig *sbx_profile_config_new              (void);
SBX_AVAILABLE_IN_0_1
SbxProfileConfig *sbx_profile_config_copy             (const SbxProfileConfig *self);
SBX_AVAILABLE_IN_0_1
void              sbx_profile_config_free             (SbxProfileConfig       *self);
SBX_AVAILABLE_IN_0_1
void              sbx_profile_config_set_workspace    (SbxProfileConfig       *self,
                                                       const char             *root,
                                                       SbxAccess               read,
                                                       SbxAccess               write);
SBX_AVAILABLE_IN_0_1
void              sbx_profile_config_set_host         (SbxProfileConfig       *self,
                                                       SbxAccess               read,
                                                       SbxAccess               write);
SBX_AVAILABLE_IN_0_1
void              sbx_profile_config_set_network      (SbxProfileConfig       *self,
                                                       SbxAccess               network);
SBX_AVAILABLE_IN_0_1
void              sbx_profile_config_set_command      (SbxProfileConfig       *self,
                                                       SbxAccess               command);
SBX_AVAILABLE_IN_0_1
void              sbx_profile_config_set_home         (SbxProfileConfig       *self,
                                                       SbxHome                 home);
SBX_AVAILABLE_IN_0_1
void              sbx_profile_config_set_isolation    (SbxProfileConfig       *self,
                                                       SbxIsolation            isolation);
SBX_AVAILABLE_IN_0_1
void              sbx_profile_config_set_ack_unconfined (SbxProfileConfig     *self,
                                                         gboolean              ack);
SBX_AVAILABLE_IN_0_2
void              sbx_profile_config_add_host_socket (SbxProfileConfig       *self,
                                                      const char             *path);
SBX_AVAILABLE_IN_0_2
void              sbx_profile_config_add_gated_host_socket (SbxProfileConfig *self,
                                                            const char       *path);
SBX_AVAILABLE_IN_0_1
void              sbx_profile_config_set_unix_sockets (SbxProfileConfig       *self,
                                                       gboolean                allow);
SBX_AVAILABLE_IN_0_2
void              sbx_profile_config_set_denied_paths (SbxProfileConfig       *self,
                                                       SbxDeniedPaths          denied_paths);
SBX_AVAILABLE_IN_0_1
void              sbx_profile_config_add_root         (SbxProfileConfig       *self,
                                                       const char             *path,
                                                       SbxAccess               read,
                                                       SbxAccess               write);
SBX_AVAILABLE_IN_0_1
void              sbx_profile_config_set_limits       (SbxProfileConfig       *self,
                                                       guint64                 max_processes,
                                                       guint64                 max_memory_bytes,
                                                       guint64                 max_open_files);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxProfileConfig, sbx_profile_config_free)

/* ------------------------------------------------------------------------- */

typedef struct _SbxProfile SbxProfile;

#define SBX_TYPE_PROFILE (sbx_profile_get_type ())
SBX_AVAILABLE_IN_0_1
GType          sbx_profile_get_type               (void) G_GNUC_CONST;

SBX_AVAILABLE_IN_0_1
SbxProfile    *sbx_profile_new                    (const SbxProfileConfig *config,
                                                   GError                **error);
SBX_AVAILABLE_IN_0_1
SbxProfile    *sbx_profile_new_from_json          (const char             *json,
                                                   gssize                  length,
                                                   const char             *base_dir,
                                                   GError                **error);
SBX_AVAILABLE_IN_0_1
SbxProfile    *sbx_profile_new_from_file          (const char             *path,
                                                   const char             *base_dir,
                                                   GError                **error);
SBX_AVAILABLE_IN_0_1
SbxProfile    *sbx_profile_new_default            (const char             *workspace,
                                                   GError                **error);
SBX_AVAILABLE_IN_0_1
SbxProfile    *sbx_profile_ref                    (SbxProfile             *self);
SBX_AVAILABLE_IN_0_1
void           sbx_profile_unref                  (SbxProfile             *self);

SBX_AVAILABLE_IN_0_1
char          *sbx_profile_to_json                (SbxProfile             *self);
SBX_AVAILABLE_IN_0_1
SbxProfileConfig *sbx_profile_dup_config          (SbxProfile             *self);

SBX_AVAILABLE_IN_0_1
guint          sbx_profile_get_access_version     (SbxProfile             *self);
SBX_AVAILABLE_IN_0_1
gboolean       sbx_profile_access_for             (SbxProfile             *self,
                                                   const char             *kind,
                                                   const char             *scope,
                                                   SbxAccess              *out_access,
                                                   GError                **error);
SBX_AVAILABLE_IN_0_1
SbxProfile    *sbx_profile_restrict               (SbxProfile             *base,
                                                   SbxProfile             *ceiling,
                                                   GError                **error);
SBX_AVAILABLE_IN_0_1
const char    *sbx_profile_get_fingerprint        (SbxProfile             *self);
SBX_AVAILABLE_IN_0_1
SbxGuarantees  sbx_profile_get_required_guarantees (SbxProfile            *self);
SBX_AVAILABLE_IN_0_1
gboolean       sbx_profile_equal                  (SbxProfile             *a,
                                                   SbxProfile             *b);

SBX_AVAILABLE_IN_0_1
const char    *sbx_profile_get_workspace_root     (SbxProfile             *self);
SBX_AVAILABLE_IN_0_1
SbxAccess      sbx_profile_get_workspace_read     (SbxProfile             *self);
SBX_AVAILABLE_IN_0_1
SbxAccess      sbx_profile_get_workspace_write    (SbxProfile             *self);
SBX_AVAILABLE_IN_0_1
SbxAccess      sbx_profile_get_host_read          (SbxProfile             *self);
SBX_AVAILABLE_IN_0_1
SbxAccess      sbx_profile_get_host_write         (SbxProfile             *self);
SBX_AVAILABLE_IN_0_1
SbxAccess      sbx_profile_get_network            (SbxProfile             *self);
SBX_AVAILABLE_IN_0_1
SbxAccess      sbx_profile_get_command            (SbxProfile             *self);
SBX_AVAILABLE_IN_0_1
SbxHome        sbx_profile_get_home               (SbxProfile             *self);
SBX_AVAILABLE_IN_0_1
SbxIsolation   sbx_profile_get_isolation          (SbxProfile             *self);
SBX_AVAILABLE_IN_0_1
gboolean       sbx_profile_get_ack_unconfined     (SbxProfile             *self);
SBX_AVAILABLE_IN_0_1
gboolean       sbx_profile_get_unix_sockets       (SbxProfile             *self);
SBX_AVAILABLE_IN_0_2
SbxDeniedPaths sbx_profile_get_denied_paths       (SbxProfile             *self);
SBX_AVAILABLE_IN_0_2
const char * const *sbx_profile_get_host_sockets  (SbxProfile             *self);
SBX_AVAILABLE_IN_0_2
const char * const *sbx_profile_get_gated_host_sockets (SbxProfile         *self);
SBX_AVAILABLE_IN_0_1
guint          sbx_profile_get_n_roots            (SbxProfile             *self);
SBX_AVAILABLE_IN_0_1
const char    *sbx_profile_get_root_path          (SbxProfile             *self,
                                                   guint                   index);
SBX_AVAILABLE_IN_0_1
SbxAccess      sbx_profile_get_root_read          (SbxProfile             *self,
                                                   guint                   index);
SBX_AVAILABLE_IN_0_1
SbxAccess      sbx_profile_get_root_write         (SbxProfile             *self,
                                                   guint                   index);
SBX_AVAILABLE_IN_0_1
guint64        sbx_profile_get_max_processes      (SbxProfile             *self);
SBX_AVAILABLE_IN_0_1
guint64        sbx_profile_get_max_memory         (SbxProfile             *self);
SBX_AVAILABLE_IN_0_1
guint64        sbx_profile_get_max_open_files     (SbxProfile             *self);

SBX_AVAILABLE_IN_0_1
const char    *sbx_access_to_string               (SbxAccess               access);
SBX_AVAILABLE_IN_0_1
gboolean       sbx_access_from_string             (const char             *text,
                                                   SbxAccess              *out_access);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxProfile, sbx_profile_unref)

G_END_DECLS

#endif /* SBX_PROFILE_H */
