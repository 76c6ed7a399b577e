/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sbx-path-private.h"

#include <errno.h>
#include <gio/gio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/*
 * sbx_path_is_clean_absolute:
 * @path: a path
 *
 * Whether @path is absolute and already in the form sbx_path_clean() would
 * give it: it starts with '/', has no empty, "." or ".." component and no
 * trailing '/' (except "/" itself).  This is the grammar of filesystem scopes
 * in sbx_profile_access_for(): callers must pass canonical spellings, nothing
 * is resolved for them.
 *
 * Returns: %TRUE when @path is a clean absolute path
 */
gboolean
sbx_path_is_clean_absolute (const char *path)
{
  const char *p;

  if (path == NULL || path[0] != '/')
    return FALSE;
  if (path[1] == '\0')
    return TRUE;

  p = path + 1;
  for (;;)
    {
      const char *end = strchr (p, '/');
      size_t len = end != NULL ? (size_t) (end - p) : strlen (p);

      if (len == 0)
        return FALSE;   /* "//" or a trailing '/' */
      if (len == 1 && p[0] == '.')
        return FALSE;
      if (len == 2 && p[0] == '.' && p[1] == '.')
        return FALSE;
      if (end == NULL)
        return TRUE;
      p = end + 1;
    }
}

/*
 * sbx_path_clean:
 * @path: a path, absolute or relative
 *
 * Returns the shortest path naming the same file by purely lexical
 * processing (Go's filepath.Clean): repeated '/' collapse, "." components
 * go, "dir/.." pairs cancel, ".." at the root of an absolute path goes, and
 * a trailing '/' goes.  An empty result is "." (or "/" for an absolute
 * path).  No symbolic link is looked at, so "link/.." becomes "." even when
 * link points elsewhere; resolve symlinks afterwards if that matters.
 *
 * Returns: (transfer full): the cleaned path
 */
char *
sbx_path_clean (const char *path)
{
  g_autoptr(GPtrArray) parts = g_ptr_array_new ();
  g_autoptr(GString) out = g_string_new (NULL);
  g_auto(GStrv) split = NULL;
  gboolean rooted;
  guint leading_dotdot = 0;

  g_return_val_if_fail (path != NULL, NULL);

  rooted = path[0] == '/';
  split = g_strsplit (path, "/", -1);
  for (guint i = 0; split[i] != NULL; i++)
    {
      const char *part = split[i];

      if (part[0] == '\0' || g_str_equal (part, "."))
        continue;
      if (g_str_equal (part, ".."))
        {
          if (parts->len > leading_dotdot)
            g_ptr_array_remove_index (parts, parts->len - 1);
          else if (!rooted)
            {
              g_ptr_array_add (parts, (gpointer) part);
              leading_dotdot++;
            }
          continue;
        }
      g_ptr_array_add (parts, (gpointer) part);
    }

  if (rooted)
    g_string_append_c (out, '/');
  for (guint i = 0; i < parts->len; i++)
    {
      if (i > 0)
        g_string_append_c (out, '/');
      g_string_append (out, g_ptr_array_index (parts, i));
    }
  if (out->len == 0)
    g_string_append_c (out, '.');
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/*
 * sbx_path_within:
 * @path: a clean absolute path
 * @root: a clean absolute path
 *
 * Whether @path is @root itself or lies beneath it.  "/" contains every
 * path; otherwise the match is at a '/' boundary, so "/srv/app2" is not
 * within "/srv/app".  Bytes are compared exactly: no case folding, no
 * resolution.
 *
 * Returns: %TRUE when @path is within @root
 */
gboolean
sbx_path_within (const char *path,
                 const char *root)
{
  size_t root_len;

  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (root != NULL, FALSE);

  if (g_str_equal (root, "/"))
    return TRUE;
  root_len = strlen (root);
  if (strncmp (path, root, root_len) != 0)
    return FALSE;
  return path[root_len] == '\0' || path[root_len] == '/';
}

static gboolean
check_absolute (const char  *path,
                GError     **error)
{
  if (path == NULL || path[0] == '\0')
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "path is empty");
      return FALSE;
    }
  if (path[0] != '/')
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "path is not absolute");
      return FALSE;
    }
  return TRUE;
}

/* realpath() into GLib memory; on failure returns NULL with errno set. */
static char *
resolve (const char *path)
{
  char *resolved = realpath (path, NULL);
  char *copy;

  if (resolved == NULL)
    return NULL;
  copy = g_strdup (resolved);
  free (resolved);
  return copy;
}

/*
 * sbx_path_canonical_root:
 * @path: (type filename): an absolute path to an existing directory
 * @error: return location for a G_IO_ERROR
 *
 * Canonicalises a directory that acts as a root (workspace, additional
 * root, scratch root, working directory): the path must be non-empty and
 * absolute; it is cleaned lexically (sbx_path_clean()), every symbolic link
 * is resolved, and the result must be an existing directory.  The result is
 * clean, absolute and free of symlinks at the time of the call, so "ws/."
 * and a symlink to ws give the same string.
 *
 * Returns: (transfer full) (nullable): the canonical path, or %NULL with
 *   @error set
 */
char *
sbx_path_canonical_root (const char  *path,
                         GError     **error)
{
  g_autofree char *clean = NULL;
  g_autofree char *resolved = NULL;
  struct stat st;

  if (!check_absolute (path, error))
    return NULL;

  clean = sbx_path_clean (path);
  resolved = resolve (clean);
  if (resolved == NULL)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "resolve symlinks: %s", g_strerror (saved_errno));
      return NULL;
    }
  if (stat (resolved, &st) != 0)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "stat: %s", g_strerror (saved_errno));
      return NULL;
    }
  if (!S_ISDIR (st.st_mode))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_DIRECTORY, "path is not a directory");
      return NULL;
    }
  return g_steal_pointer (&resolved);
}

void
sbx_path_link_free (SbxPathLink *link)
{
  if (link == NULL)
    return;
  g_free (link->location);
  g_free (link->target);
  g_free (link);
}

/* The kernel's limit on links followed in one lookup (MAXSYMLINKS). */
#define SBX_PATH_MAX_LINKS 40

/*
 * Resolves @clean (a clean absolute path) component by component with
 * lstat()/readlink(), as the kernel would, and records each symbolic link
 * it follows: where the link lies (the resolved directory holding it plus
 * its name) and its target text.  Returns the resolved path, or NULL with
 * errno set (ENOENT for a missing component or a dangling link, ELOOP past
 * SBX_PATH_MAX_LINKS, ENOTDIR for a non-directory in the middle).
 */
static char *
resolve_walk (const char *clean,
              GPtrArray  *links)
{
  g_autoptr(GString) resolved = g_string_new ("/");
  g_autoptr(GQueue) todo = g_queue_new ();
  g_auto(GStrv) split = g_strsplit (clean, "/", -1);
  guint followed = 0;
  char *part;

  for (guint i = 0; split[i] != NULL; i++)
    g_queue_push_tail (todo, g_strdup (split[i]));

  while ((part = g_queue_pop_head (todo)) != NULL)
    {
      g_autofree char *component = part;
      g_autofree char *candidate = NULL;
      struct stat st;

      if (component[0] == '\0' || g_str_equal (component, "."))
        continue;
      if (g_str_equal (component, ".."))
        {
          char *slash = strrchr (resolved->str, '/');

          g_string_truncate (resolved, slash == resolved->str ? 1 : (gsize) (slash - resolved->str));
          continue;
        }
      candidate = resolved->len == 1 ? g_strconcat ("/", component, NULL)
                                     : g_strconcat (resolved->str, "/", component, NULL);
      if (lstat (candidate, &st) != 0)
        {
          int saved_errno = errno;

          while ((part = g_queue_pop_head (todo)) != NULL)
            g_free (part);
          errno = saved_errno;
          return NULL;
        }
      if (S_ISLNK (st.st_mode))
        {
          g_autofree char *target = NULL;
          g_autoptr(GError) local_error = NULL;
          g_auto(GStrv) target_parts = NULL;
          SbxPathLink *link;
          guint n;

          if (++followed > SBX_PATH_MAX_LINKS)
            {
              while ((part = g_queue_pop_head (todo)) != NULL)
                g_free (part);
              errno = ELOOP;
              return NULL;
            }
          target = g_file_read_link (candidate, &local_error);
          if (target == NULL || target[0] == '\0')
            {
              while ((part = g_queue_pop_head (todo)) != NULL)
                g_free (part);
              errno = target == NULL ? EIO : ENOENT;
              return NULL;
            }
          link = g_new0 (SbxPathLink, 1);
          link->location = g_strdup (candidate);
          link->target = g_strdup (target);
          g_ptr_array_add (links, link);
          if (target[0] == '/')
            g_string_assign (resolved, "/");
          /* The target's components run before what was left. */
          target_parts = g_strsplit (target, "/", -1);
          n = g_strv_length (target_parts);
          for (guint i = n; i > 0; i--)
            g_queue_push_head (todo, g_strdup (target_parts[i - 1]));
          continue;
        }
      if (!S_ISDIR (st.st_mode) && !g_queue_is_empty (todo))
        {
          while ((part = g_queue_pop_head (todo)) != NULL)
            g_free (part);
          errno = ENOTDIR;
          return NULL;
        }
      g_string_assign (resolved, candidate);
    }
  return g_string_free (g_steal_pointer (&resolved), FALSE);
}

/*
 * sbx_path_canonical_root_with_links:
 * @path: (type filename): an absolute path to an existing directory
 * @links: (element-type SbxPathLink): receives every symbolic link followed,
 *   in the order the lookup met them
 * @error: return location for a G_IO_ERROR
 *
 * sbx_path_canonical_root() that also says through which symbolic links
 * the result was reached, so that callers can refuse a root reached through
 * a link that a sandbox could have planted.  Each link's location is the
 * resolved directory that holds it plus its name, so it can be compared
 * with other canonical paths (sbx_path_within()).
 *
 * Returns: (transfer full) (nullable): the canonical path, or %NULL with
 *   @error set
 */
char *
sbx_path_canonical_root_with_links (const char  *path,
                                    GPtrArray   *links,
                                    GError     **error)
{
  g_autofree char *clean = NULL;
  g_autofree char *resolved = NULL;
  struct stat st;

  g_return_val_if_fail (links != NULL, NULL);

  if (!check_absolute (path, error))
    return NULL;

  clean = sbx_path_clean (path);
  resolved = resolve_walk (clean, links);
  if (resolved == NULL)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "resolve symlinks: %s", g_strerror (saved_errno));
      return NULL;
    }
  if (stat (resolved, &st) != 0)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "stat: %s", g_strerror (saved_errno));
      return NULL;
    }
  if (!S_ISDIR (st.st_mode))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_DIRECTORY, "path is not a directory");
      return NULL;
    }
  return g_steal_pointer (&resolved);
}

/*
 * sbx_path_canonical_path:
 * @path: (type filename): an absolute path; its leaf (and any number of
 *   trailing components) may be missing
 * @error: return location for a G_IO_ERROR
 *
 * Canonicalises a path that need not exist yet (a grant target, a file a
 * command will create): the path is cleaned, then the deepest ancestor that
 * exists is resolved with every symlink followed, and the missing
 * components are appended to it again.
 *
 * Stricter than upstream: the walk only climbs past components that do not
 * exist at all.  A dangling symbolic link (which exists but points nowhere)
 * is an error (G_IO_ERROR_NOT_FOUND), because appending its name would name
 * the link and not where a write through it would land.  Any other failure
 * (a non-directory in the middle, EACCES, ELOOP) is reported as is.
 *
 * Returns: (transfer full) (nullable): the canonical path, or %NULL with
 *   @error set
 */
char *
sbx_path_canonical_path (const char  *path,
                         GError     **error)
{
  g_autofree char *clean = NULL;
  g_autofree char *current = NULL;
  g_autoptr(GPtrArray) missing = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *resolved = NULL;
  g_autoptr(GString) out = NULL;

  if (!check_absolute (path, error))
    return NULL;

  clean = sbx_path_clean (path);
  current = g_strdup (clean);
  for (;;)
    {
      int saved_errno;
      struct stat st;
      char *slash;

      resolved = resolve (current);
      if (resolved != NULL)
        break;
      saved_errno = errno;
      if (saved_errno != ENOENT)
        {
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                       "resolve symlinks: %s", g_strerror (saved_errno));
          return NULL;
        }
      if (lstat (current, &st) == 0)
        {
          /* It exists, yet resolving it says ENOENT: a dangling link. */
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                               "resolve symlinks: dangling symbolic link");
          return NULL;
        }
      saved_errno = errno;
      if (saved_errno != ENOENT)
        {
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                       "resolve symlinks: %s", g_strerror (saved_errno));
          return NULL;
        }
      /* current != "/" here: realpath ("/") cannot fail with ENOENT. */
      slash = strrchr (current, '/');
      g_ptr_array_insert (missing, 0, g_strdup (slash + 1));
      if (slash == current)
        slash[1] = '\0';
      else
        slash[0] = '\0';
    }

  out = g_string_new (resolved);
  for (guint i = 0; i < missing->len; i++)
    {
      if (out->str[out->len - 1] != '/')
        g_string_append_c (out, '/');
      g_string_append (out, g_ptr_array_index (missing, i));
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}
