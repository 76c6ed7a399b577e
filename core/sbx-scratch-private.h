/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * The scratch root and the executor sets' directories in it.
 *
 * Every executor set owns one directory SBX_SET_DIR_PREFIX "XXXXXX" directly
 * in its scratch root (mode 0700), holding each executor's HOME, TMPDIR and
 * state.  Other processes' sets share the root (the CLI's default is /tmp).
 */

/* The name prefix of every set's private directory in a scratch root. */
#define SBX_SET_DIR_PREFIX "sandbox-executors-"

/* At most this many set directories are listed in one scratch root; past it
 * the listing fails (a policy cannot deny what it did not list). */
#define SBX_SCRATCH_MAX_SET_DIRS 1024
#define SBX_SCRATCH_MAX_ENTRIES  4096

/*
 * sbx_scratch_list_set_dirs:
 * @scratch_root: a canonical directory
 * @except: (nullable): a set directory to leave out (the caller's own)
 * @error: return location for a G_IO_ERROR
 *
 * Lists the absolute paths of every directory directly in @scratch_root
 * whose name has the set prefix, of any owner, sorted.  Symbolic links and
 * other non-directories are not listed (nothing is followed).
 *
 * Returns: (transfer full) (nullable): a %NULL-terminated array, or %NULL
 *   with @error set
 */
GStrv sbx_scratch_list_set_dirs (const char  *scratch_root,
                                 const char  *except,
                                 GError     **error);

/*
 * sbx_scratch_list:
 * @scratch_root: a canonical directory
 * @except: (nullable): a set directory to leave out
 * @out_set_dirs: (out): as sbx_scratch_list_set_dirs()
 * @out_entries: (out): the absolute paths of every other entry directly in
 *   @scratch_root (files, links, directories without the set prefix), sorted
 * @error: return location for a G_IO_ERROR
 *
 * One listing of the scratch root; fails past SBX_SCRATCH_MAX_SET_DIRS
 * set directories or SBX_SCRATCH_MAX_ENTRIES other entries.
 */
gboolean sbx_scratch_list (const char  *scratch_root,
                           const char  *except,
                           GStrv       *out_set_dirs,
                           GStrv       *out_entries,
                           GError     **error);

G_END_DECLS
