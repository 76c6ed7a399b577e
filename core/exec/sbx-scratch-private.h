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
 * set directories (each must be denied by name).  Past
 * SBX_SCRATCH_MAX_ENTRIES other entries the rest are left out of
 * @out_entries: a snapshot then hides them (narrower, never wider).
 */
gboolean sbx_scratch_list (const char  *scratch_root,
                           const char  *except,
                           GStrv       *out_set_dirs,
                           GStrv       *out_entries,
                           GError     **error);

/* The liveness marker in each set directory: a regular file the owning set
 * holds flock(LOCK_EX) on for exactly its lifetime. */
#define SBX_SET_LIVE_MARKER ".sbx-live"

/* At most this many dead sets are removed by one reaping (bounded cost). */
#define SBX_SCRATCH_MAX_REAP 64

/*
 * sbx_scratch_reap:
 * @scratch_root: a canonical directory
 * @remove: remove what is found (else only list it)
 * @error: return location for a G_IO_ERROR or SBX_EXECUTOR_SET_ERROR
 *
 * Finds the stale entries directly in @scratch_root: directories with the
 * set prefix owned by the caller's effective uid whose liveness marker is
 * not locked by anyone (their set's process is gone), and symbolic links
 * with the set prefix owned by the caller (planted in place of a set
 * directory).  Nothing is followed; another user's entry, a directory
 * without a marker (a set being created, or one from an older sbx) and a
 * live set's directory are never touched.  With @remove, each stale
 * directory is removed while its marker's lock is held (so no other reaper
 * races us) with the careful deletion of sbx_remove_tree_at(), and a link
 * is unlinked as a link.  At most SBX_SCRATCH_MAX_REAP entries per call.
 *
 * Returns: (transfer full) (nullable): the stale paths found (and removed
 *   with @remove), %NULL-terminated, or %NULL with @error set when the
 *   scratch root cannot be listed; a failure to remove one entry stops
 *   the reaping with @error set
 */
GStrv sbx_scratch_reap (const char  *scratch_root,
                        gboolean     remove,
                        GError     **error);

/* Removes @path and everything below it without following symlinks (a child
 * may plant them); makes directories writable first where needed.  Errors
 * are SBX_EXECUTOR_SET_ERROR_SCRATCH. */
gboolean sbx_remove_tree    (const char  *path,
                             GError     **error);
/* The same, for the directory @name in @parent_fd (opened without following
 * a symlink, removed with unlinkat): no path is resolved again, so the tree
 * removed is the one checked.  @path is for messages only. */
gboolean sbx_remove_tree_at (int          parent_fd,
                             const char  *name,
                             const char  *path,
                             GError     **error);

/* The scratch root of a set whose options name none: $XDG_RUNTIME_DIR/sbx
 * (created 0700; an existing one must be the caller's own directory, not a
 * link, with no access for anyone else), else the temporary directory.
 * NULL with SBX_EXECUTOR_SET_ERROR_INVALID_OPTIONS for an unsafe one. */
char    *sbx_scratch_default_root (GError **error);

/*
 * sbx_scratch_create_set_dir:
 * @scratch_root: a canonical directory
 * @out_dir: (out): the new set directory, SBX_SET_DIR_PREFIX "XXXXXX" (0700)
 * @out_live_fd: (out): its liveness marker, flock()ed: the caller keeps it
 *   open for exactly the set's lifetime
 * @error: return location for SBX_EXECUTOR_SET_ERROR_SCRATCH
 *
 * Reaps dead sets' directories first (sbx_scratch_reap(); a failure there
 * is only logged: someone else's leftovers never make a set fail), then
 * creates the set's own directory and its marker.  On failure nothing is
 * left.
 */
gboolean sbx_scratch_create_set_dir (const char  *scratch_root,
                                     char       **out_dir,
                                     int         *out_live_fd,
                                     GError     **error);

G_END_DECLS
