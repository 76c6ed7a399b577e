/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The filesystem identity binding of a grant: what a filesystem grant
 * recorded about its target when it was issued (the canonical path, its
 * deepest existing ancestor and that one's device, inode and file type), the
 * check that nothing on the way was swapped for a symlink or another file
 * since, and the handle a consumed grant opens.  A binding that cannot be
 * re-established fails with SBX_GRANT_ERROR_TARGET_CHANGED: a grant never
 * follows its target to another file.
 */
#include "sbx-grant-binding-private.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sbx-grant-error-private.h"
#include "sbx-path-private.h"

void
sbx_grant_binding_free (SbxGrantBinding *binding)
{
  if (binding == NULL)
    return;
  g_free (binding->canonical_path);
  g_free (binding->existing_path);
  g_free (binding->identity);
  g_free (binding);
}

SbxGrantBinding *
sbx_grant_binding_copy (const SbxGrantBinding *binding)
{
  SbxGrantBinding *copy;

  if (binding == NULL)
    return NULL;
  copy = g_new0 (SbxGrantBinding, 1);
  copy->canonical_path = g_strdup (binding->canonical_path);
  copy->existing_path = g_strdup (binding->existing_path);
  copy->identity = g_strdup (binding->identity);
  return copy;
}

gboolean
sbx_grant_binding_equal (const SbxGrantBinding *a,
                         const SbxGrantBinding *b)
{
  if (a == NULL || b == NULL)
    return a == b;
  return g_strcmp0 (a->canonical_path, b->canonical_path) == 0
         && g_strcmp0 (a->existing_path, b->existing_path) == 0
         && g_strcmp0 (a->identity, b->identity) == 0;
}

static char *
identity_of (const struct stat *st)
{
  return g_strdup_printf ("%" PRIu64 ":%" PRIu64 ":%o", (guint64) st->st_dev,
                          (guint64) st->st_ino, (unsigned) (st->st_mode & S_IFMT));
}

/* FALSE (TARGET_CHANGED) when a component of @path, walking from "/", is a
 * symlink or cannot be lstat'ed. */
static gboolean
components_free_of_symlinks (const char  *path,
                             GError     **error)
{
  g_autofree char *prefix = g_strdup (path);

  for (char *p = prefix + 1;; p++)
    {
      if (*p == '/' || *p == '\0')
        {
          char saved = *p;
          struct stat st;

          *p = '\0';
          if (lstat (prefix, &st) < 0)
            {
              int errsv = errno;

              return sbx_grant_fail (error, SBX_GRANT_ERROR_TARGET_CHANGED, "lstat “%s”: %s", prefix, g_strerror (errsv));
            }
          if (S_ISLNK (st.st_mode))
            return sbx_grant_fail (error, SBX_GRANT_ERROR_TARGET_CHANGED, "“%s” is a symbolic link", prefix);
          *p = saved;
          if (saved == '\0')
            break;
        }
    }
  return TRUE;
}

SbxGrantBinding *
sbx_grant_binding_capture (const char  *canonical,
                           GError     **error)
{
  g_autoptr(SbxGrantBinding) binding = g_new0 (SbxGrantBinding, 1);
  g_autofree char *existing = g_strdup (canonical);
  struct stat st;

  g_return_val_if_fail (canonical != NULL && canonical[0] == '/', NULL);

  for (;;)
    {
      if (lstat (existing, &st) == 0)
        break;
      if (errno != ENOENT)
        {
          int errsv = errno;

          sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "bind target: lstat “%s”: %s", existing, g_strerror (errsv));
          return NULL;
        }
      if (strcmp (existing, "/") == 0)
        {
          sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "bind target: “/” does not exist");
          return NULL;
        }
      {
        char *parent = g_path_get_dirname (existing);

        g_free (existing);
        existing = parent;
      }
    }
  if (!components_free_of_symlinks (existing, error))
    return NULL;
  binding->canonical_path = g_strdup (canonical);
  binding->existing_path = g_steal_pointer (&existing);
  binding->identity = identity_of (&st);
  return g_steal_pointer (&binding);
}

gboolean
sbx_grant_binding_revalidate (const SbxGrantBinding *binding,
                              GError               **error)
{
  g_autofree char *identity = NULL;
  struct stat st;
  gsize existing_len;

  if (binding == NULL || binding->canonical_path == NULL || binding->existing_path == NULL
      || !sbx_path_within (binding->canonical_path, binding->existing_path))
    return sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "bind target: the binding does not describe its target");
  if (!components_free_of_symlinks (binding->existing_path, error))
    return FALSE;
  if (lstat (binding->existing_path, &st) < 0)
    {
      int errsv = errno;

      return sbx_grant_fail (error, SBX_GRANT_ERROR_TARGET_CHANGED, "lstat “%s”: %s", binding->existing_path, g_strerror (errsv));
    }
  identity = identity_of (&st);
  if (strcmp (identity, binding->identity) != 0)
    return sbx_grant_fail (error, SBX_GRANT_ERROR_TARGET_CHANGED, "“%s” is no longer the file approved (identity %s, was %s)",
                           binding->existing_path, identity, binding->identity);

  /* Every component missing at approval time must still be missing. */
  existing_len = strlen (binding->existing_path);
  if (existing_len < strlen (binding->canonical_path))
    {
      g_autofree char *walk = g_strdup (binding->canonical_path);
      char *p = walk + (existing_len == 1 ? 1 : existing_len + 1);

      for (;; p++)
        if (*p == '/' || *p == '\0')
          {
            char saved = *p;

            *p = '\0';
            if (lstat (walk, &st) == 0 || errno != ENOENT)
              return sbx_grant_fail (error, SBX_GRANT_ERROR_TARGET_CHANGED, "“%s” appeared after approval", walk);
            *p = saved;
            if (saved == '\0')
              break;
          }
    }
  return TRUE;
}

int
sbx_grant_acquire_handle (const SbxGrantBinding *binding,
                          gboolean               exact,
                          GError               **error)
{
  struct open_how how = { 0 };
  g_autofree char *identity = NULL;
  struct stat st;
  int fd;

  if (strcmp (binding->existing_path, binding->canonical_path) != 0)
    {
      g_set_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_UNSUPPORTED,
                   "Grant class unsupported: “%s” does not exist, and a grant only opens an "
                   "existing %s", binding->canonical_path, exact ? "regular file" : "directory");
      return -1;
    }
  how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  do
    fd = (int) syscall (SYS_openat2, AT_FDCWD, binding->canonical_path, &how, sizeof how);
  while (fd < 0 && errno == EINTR);
  if (fd < 0)
    {
      int errsv = errno;

      sbx_grant_fail (error, SBX_GRANT_ERROR_TARGET_CHANGED, "openat2 “%s” (no symlinks): %s", binding->canonical_path,
                      g_strerror (errsv));
      return -1;
    }
  if (fstat (fd, &st) < 0)
    {
      int errsv = errno;

      close (fd);
      sbx_grant_fail (error, SBX_GRANT_ERROR_TARGET_CHANGED, "fstat “%s”: %s", binding->canonical_path, g_strerror (errsv));
      return -1;
    }
  identity = identity_of (&st);
  if (strcmp (identity, binding->identity) != 0)
    {
      close (fd);
      sbx_grant_fail (error, SBX_GRANT_ERROR_TARGET_CHANGED, "“%s” is no longer the file approved (identity %s, was %s)",
                      binding->canonical_path, identity, binding->identity);
      return -1;
    }
  if (exact ? !(S_ISREG (st.st_mode) && st.st_nlink == 1) : !S_ISDIR (st.st_mode))
    {
      close (fd);
      g_set_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_UNSUPPORTED,
                   "Grant class unsupported: “%s” is not %s", binding->canonical_path,
                   exact ? "a regular file with exactly one link (an exact grant never "
                           "opens another name of the same file)"
                         : "a directory");
      return -1;
    }
  return fd;
}
