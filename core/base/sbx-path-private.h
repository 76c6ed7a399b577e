/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * Path helpers shared by every module that compares or canonicalises
 * filesystem paths (profile, policy compiler, grants, executor).
 *
 * Paths are compared as exact bytes: comparison is case-sensitive and only
 * '/' separates components.  None of these functions is a security boundary
 * by itself: a canonical path names what the filesystem looked like when it
 * was resolved, and code that later opens it must still guard against the
 * tree changing (O_NOFOLLOW, openat2 RESOLVE_*, identity checks).
 *
 * Errors are in the G_IO_ERROR domain, and their messages never name the
 * path itself (callers prefix the field and the value they were checking):
 *   G_IO_ERROR_INVALID_ARGUMENT  "path is empty", "path is not absolute"
 *   g_io_error_from_errno()      "resolve symlinks: <strerror>",
 *                                "stat: <strerror>"
 *   G_IO_ERROR_NOT_DIRECTORY     "path is not a directory"
 *   G_IO_ERROR_NOT_FOUND         "resolve symlinks: dangling symbolic link"
 *                                (sbx_path_canonical_path only)
 */

/* A symbolic link met while resolving a path: @location is where the link
 * lies (canonical directory + its name), @target its text as stored. */
typedef struct
{
  char *location;
  char *target;
} SbxPathLink;

void      sbx_path_link_free         (SbxPathLink *link);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxPathLink, sbx_path_link_free)

gboolean  sbx_path_is_clean_absolute (const char  *path);
char     *sbx_path_clean             (const char  *path);
gboolean  sbx_path_within            (const char  *path,
                                      const char  *root);
char     *sbx_path_canonical_root    (const char  *path,
                                      GError     **error);
char     *sbx_path_canonical_path    (const char  *path,
                                      GError     **error);
char     *sbx_path_canonical_root_with_links (const char  *path,
                                              GPtrArray   *links,
                                              GError     **error);

G_END_DECLS
