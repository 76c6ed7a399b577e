/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Filesystem denials: a read, write, exec or listing of a host path that a
 * backend's own mechanism refused (at rung 1 the view supervisor: a lookup
 * of a name outside the mount view; at rung 2 Landlock's audit records,
 * where the host has them), and the grant that would open it.
 *
 * The backend says only what happened; the grant is the core's to name,
 * from the profile and from what the path is on the host:
 *
 *  1. The dimension that covers the path: the longest configured root (the
 *     workspace or an additional root) containing its canonical form, with
 *     that root's read or write access; else host read or host write.  A
 *     write is the write axis; read, exec and list are the read axis (a
 *     read grant opens read and exec).
 *  2. Deny: no grant; the reason names the dimension ("the profile denies
 *     host write", "the root /srv denies write").  Allow: the profile does
 *     not refuse it, something else did (a read-only mount of the host):
 *     no grant, "refused by the backend" or the backend's own words.
 *  3. Gated: the narrowest grant sbx_executor_issue_grant() accepts that
 *     opens the access.  An existing regular file with one link gets the
 *     exact grant for exactly it (filesystem.path.read.v1 for a read, an
 *     exec or a listing of a file, filesystem.path.write.v1 for a write).
 *     An exact grant takes nothing else (a directory, a path to create, a
 *     file with several links, a device), and a tree grant only a
 *     configured root, so anything else gets the tree grant of the
 *     covering root, or the host grant (host:*) when the host dimension
 *     covers it; the reason says that this opens more than the path.  A
 *     read of a path that does not exist names no grant: nothing is there
 *     to open.
 *
 * The grant's target is the canonical path (symlinks resolved, as
 * sbx_executor_issue_grant() binds it); the denial's target stays the path
 * the program named.  A path that cannot be resolved (a dangling symlink,
 * a directory the caller cannot search) or that had to be altered to be
 * printable names no grant: it would name another path.
 */
#include "sbx-fs-denial-private.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "sbx-grant.h"
#include "sbx-path-private.h"
#include "sbx-plugin-abi.h"

G_STATIC_ASSERT (SBX_ABI_DENIAL_READ == (guint) SBX_DENIAL_OPERATION_READ);
G_STATIC_ASSERT (SBX_ABI_DENIAL_WRITE == (guint) SBX_DENIAL_OPERATION_WRITE);
G_STATIC_ASSERT (SBX_ABI_DENIAL_EXEC == (guint) SBX_DENIAL_OPERATION_EXEC);
G_STATIC_ASSERT (SBX_ABI_DENIAL_LIST == (guint) SBX_DENIAL_OPERATION_LIST);

typedef struct
{
  const char *root;        /* (nullable) the covering root; NULL: the host dimension */
  gboolean    workspace;   /* @root is the workspace */
  SbxAccess   access;      /* on the axis asked */
} Cover;

typedef enum
{
  PATH_FILE,           /* a regular file with one link: an exact grant takes it */
  PATH_LINKED_FILE,    /* a regular file with several links */
  PATH_DIRECTORY,
  PATH_MISSING,
  PATH_OTHER,          /* a device, fifo, socket, or not examinable */
} PathKind;

/* The dimension covering @path, as sbx_profile_access_for() decides it. */
static void
cover_for (SbxProfile *profile,
           const char *path,
           gboolean    write,
           Cover      *out)
{
  const char *workspace = sbx_profile_get_workspace_root (profile);
  gsize best = 0;

  out->root = NULL;
  out->workspace = FALSE;
  out->access = write ? sbx_profile_get_host_write (profile) : sbx_profile_get_host_read (profile);
  if (sbx_path_within (path, workspace))
    {
      out->root = workspace;
      out->workspace = TRUE;
      out->access = write ? sbx_profile_get_workspace_write (profile) : sbx_profile_get_workspace_read (profile);
      best = strlen (workspace);
    }
  for (guint i = 0; i < sbx_profile_get_n_roots (profile); i++)
    {
      const char *root = sbx_profile_get_root_path (profile, i);
      gsize len = strlen (root);

      if ((out->root == NULL || len > best) && sbx_path_within (path, root))
        {
          out->root = root;
          out->workspace = FALSE;
          out->access = write ? sbx_profile_get_root_write (profile, i) : sbx_profile_get_root_read (profile, i);
          best = len;
        }
    }
}

/* "host read is gated", "the profile denies host write", "write of the
 * root /srv is gated", "the workspace /src denies write". */
static char *
cover_reason (const Cover *cover,
              gboolean     write)
{
  const char *axis = write ? "write" : "read";
  const char *kind = cover->workspace ? "workspace" : "root";

  if (cover->root == NULL)
    return cover->access == SBX_ACCESS_DENY ? g_strdup_printf ("the profile denies host %s", axis)
           : g_strdup_printf ("host %s is gated", axis);
  return cover->access == SBX_ACCESS_DENY ? g_strdup_printf ("the %s %s denies %s", kind, cover->root, axis)
         : g_strdup_printf ("%s of the %s %s is gated", axis, kind, cover->root);
}

static PathKind
path_kind (const char *canonical)
{
  struct stat st;

  if (stat (canonical, &st) != 0)
    return errno == ENOENT || errno == ENOTDIR ? PATH_MISSING : PATH_OTHER;
  if (S_ISREG (st.st_mode))
    return st.st_nlink == 1 ? PATH_FILE : PATH_LINKED_FILE;
  if (S_ISDIR (st.st_mode))
    return PATH_DIRECTORY;
  return PATH_OTHER;
}

/* Step 3: the covered dimension is gated. */
static SbxDenial *
gated_denial (SbxDenialOperation operation,
              const char        *path,
              const char        *canonical,
              const char        *mechanism,
              const Cover       *cover,
              const char        *reason)
{
  gboolean write = operation == SBX_DENIAL_OPERATION_WRITE;
  PathKind kind = path_kind (canonical);
  g_autofree char *why = NULL;
  const char *what;

  if (kind == PATH_FILE)
    return sbx_denial_new (operation, path, mechanism,
                           write ? SBX_GRANT_CLASS_FILESYSTEM_PATH_WRITE : SBX_GRANT_CLASS_FILESYSTEM_PATH_READ,
                           canonical, reason);
  if (kind == PATH_MISSING && !write)
    {
      why = g_strdup_printf ("%s; the path does not exist on the host, so no grant opens it", reason);
      return sbx_denial_new (operation, path, mechanism, NULL, NULL, why);
    }
  what = kind == PATH_DIRECTORY ? "a directory"
         : kind == PATH_MISSING ? "a new file"
         : kind == PATH_LINKED_FILE ? "a file with several links" : "a special file";
  if (cover->root != NULL)
    {
      why = g_strdup_printf ("%s; no narrower grant opens %s there: the tree grant opens the whole %s",
                             reason, what, cover->workspace ? "workspace" : "root");
      return sbx_denial_new (operation, path, mechanism,
                             write ? SBX_GRANT_CLASS_FILESYSTEM_TREE_WRITE : SBX_GRANT_CLASS_FILESYSTEM_TREE_READ,
                             cover->root, why);
    }
  why = g_strdup_printf ("%s; no narrower grant opens %s outside the roots: the host grant opens every host path "
                         "for %s", reason, what, write ? "writing" : "reading");
  return sbx_denial_new (operation, path, mechanism,
                         write ? SBX_GRANT_CLASS_FILESYSTEM_HOST_WRITE : SBX_GRANT_CLASS_FILESYSTEM_HOST_READ,
                         "host:*", why);
}

SbxDenial *
sbx_fs_denial_new (SbxDenialOperation operation,
                   const char        *target,
                   gboolean           exact_text,
                   const char        *mechanism,
                   const char        *backend_reason,
                   SbxProfile        *profile)
{
  gboolean write = operation == SBX_DENIAL_OPERATION_WRITE;
  g_autofree char *path = NULL;
  g_autofree char *canonical = NULL;
  g_autofree char *reason = NULL;
  Cover cover;

  g_return_val_if_fail (profile != NULL, NULL);

  if ((guint) operation > SBX_DENIAL_OPERATION_LIST || target == NULL || target[0] != '/')
    return NULL;
  path = sbx_path_clean (target);
  if (mechanism == NULL
      || (strcmp (mechanism, "view-supervisor") != 0 && strcmp (mechanism, "landlock-audit") != 0))
    mechanism = "backend";
  if (exact_text)
    canonical = sbx_path_canonical_path (path, NULL);
  cover_for (profile, canonical != NULL ? canonical : path, write, &cover);
  if (cover.access == SBX_ACCESS_ALLOW)
    return sbx_denial_new (operation, path, mechanism, NULL, NULL,
                           backend_reason != NULL ? backend_reason : "refused by the backend");
  reason = cover_reason (&cover, write);
  if (cover.access == SBX_ACCESS_DENY)
    return sbx_denial_new (operation, path, mechanism, NULL, NULL, reason);
  if (canonical == NULL)
    {
      g_autofree char *why = g_strdup_printf ("%s; %s, so no grant can name it", reason,
                                              exact_text ? "the path cannot be resolved on the host"
                                              : "the path is not printable text");

      return sbx_denial_new (operation, path, mechanism, NULL, NULL, why);
    }
  return gated_denial (operation, path, canonical, mechanism, &cover, reason);
}
