/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "sbx-profile.h"

G_BEGIN_DECLS

/* One additional root of a validated profile: canonical path, own access. */
typedef struct
{
  char      *path;
  SbxAccess  read;
  SbxAccess  write;
} SbxProfileRoot;

/*
 * How validation names fields in its messages: the C API's words
 * ("additional root 2 (/x): path is not a directory", "host write: ...") or
 * the JSON member paths ("roots[2].path (/x): ...", "host.write: ...").
 * The JSON spelling is also stricter: a root repeated with the same access
 * is an error instead of being merged.
 */
typedef enum
{
  SBX_PROFILE_NAMES_API,
  SBX_PROFILE_NAMES_JSON,
} SbxProfileNames;

SbxProfile *sbx_profile_new_with_names     (const SbxProfileConfig  *config,
                                            SbxProfileNames          names,
                                            GError                 **error);
SbxAccess   sbx_profile_access_at_path     (SbxProfile              *self,
                                            gboolean                 write,
                                            const char              *path);
gboolean    sbx_profile_is_configured_root (SbxProfile              *self,
                                            const char              *path);
const SbxProfileRoot *sbx_profile_get_roots (SbxProfile             *self,
                                             guint                  *n_roots);
GPtrArray  *sbx_profile_get_root_links     (SbxProfile              *self);
gboolean    sbx_profile_auto_memory_limit  (guint64                 *out_bytes,
                                            GError                 **error);
/* The access the profile gives to connecting to the host socket @path:
 * ALLOW ("unix-sockets": "allow", or named), GATED (named gated), DENY. */
SbxAccess   sbx_profile_host_socket_access (SbxProfile              *self,
                                            const char              *path);

/* The largest value a limit may take (JSON integers are signed 64-bit). */
#define SBX_PROFILE_LIMIT_MAX ((guint64) G_MAXINT64)

/* The cap of the "auto" memory limit: half the RAM, at most 4 GiB. */
#define SBX_PROFILE_AUTO_MEMORY_CAP (G_GUINT64_CONSTANT (4) << 30)

G_END_DECLS
