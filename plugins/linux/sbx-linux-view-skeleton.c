/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The view supervisor's skeleton: the nodes a view shows (the entries the
 * mount plan gives, their implied ancestors and the root), checked once:
 * absolute clean paths, nothing below a file or a symlink, no entry twice.
 * Immutable once built; the server answers from it.
 */
#include "sbx-linux-view-private.h"

#include <string.h>
#include <sys/stat.h>

#include <gio/gio.h>

static inline SbxViewNode *
node_at (SbxViewSkeleton *self, guint i)
{
  return &g_array_index (self->nodes, SbxViewNode, i);
}

static void
node_clear (gpointer data)
{
  SbxViewNode *n = data;

  g_free (n->path);
  g_free (n->link_target);
  if (n->children != NULL)
    g_array_unref (n->children);
}

/* ------------------------------------------------------------------------- */
/* The skeleton                                                              */
/* ------------------------------------------------------------------------- */

static gboolean
path_is_clean_absolute (const char *path)
{
  g_autofree char *copy = NULL;

  if (path == NULL || path[0] != '/' || strcmp (path, "/") == 0 || strlen (path) >= PATH_MAX)
    return FALSE;
  copy = g_strdup (path);
  return sbx_view_clean_path (copy) && strcmp (copy, path) == 0;
}

/* The node of @path, adding it (and its missing ancestors, as directories)
 * as @type.  @explicit: the caller's entry (twice is an error), not an
 * implied ancestor. */
static gboolean
add_node (SbxViewSkeleton *self, const char *path, mode_t type, const char *link, gboolean explicit, guint *out,
          GError **error)
{
  gpointer found = g_hash_table_lookup (self->by_path, path);
  g_autofree char *parent_path = NULL;
  guint parent = 0, idx;
  SbxViewNode node = { 0 };
  SbxViewNode *p;

  if (found != NULL)
    {
      SbxViewNode *n = node_at (self, GPOINTER_TO_UINT (found) - 1);

      if (explicit && n->explicit)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "view skeleton: \"%s\" is given twice", path);
          return FALSE;
        }
      if (n->type != S_IFDIR || type != S_IFDIR)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "view skeleton: \"%s\" has entries below it but is not a directory", path);
          return FALSE;
        }
      n->explicit |= explicit;
      *out = GPOINTER_TO_UINT (found) - 1;
      return TRUE;
    }
  parent_path = g_path_get_dirname (path);
  if (strcmp (parent_path, "/") != 0 && !add_node (self, parent_path, S_IFDIR, NULL, FALSE, &parent, error))
    return FALSE;
  p = node_at (self, parent);
  if (p->type != S_IFDIR)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "view skeleton: \"%s\" lies below \"%s\", which is not a directory", path, p->path);
      return FALSE;
    }
  node.path = g_strdup (path);
  node.name = strrchr (node.path, '/') + 1;
  node.parent = parent;
  node.type = type;
  node.link_target = g_strdup (link);
  node.explicit = explicit;
  if (type == S_IFDIR)
    node.children = g_array_new (FALSE, FALSE, sizeof (guint));
  idx = self->nodes->len;
  g_array_append_val (self->nodes, node);
  p = node_at (self, parent);
  g_array_append_val (p->children, idx);
  if (type == S_IFDIR)
    p->n_subdirs++;
  g_hash_table_insert (self->by_path, node_at (self, idx)->path, GUINT_TO_POINTER (idx + 1));
  *out = idx;
  return TRUE;
}

gboolean
sbx_view_skeleton_build (SbxViewSkeleton    *self,
                         const SbxViewEntry *entries,
                         size_t              n_entries,
                         GError            **error)
{
  SbxViewNode root = { 0 };

  self->nodes = g_array_new (FALSE, FALSE, sizeof (SbxViewNode));
  g_array_set_clear_func (self->nodes, node_clear);
  self->by_path = g_hash_table_new (g_str_hash, g_str_equal);
  root.path = g_strdup ("/");
  root.name = root.path;
  root.type = S_IFDIR;
  root.children = g_array_new (FALSE, FALSE, sizeof (guint));
  g_array_append_val (self->nodes, root);
  g_hash_table_insert (self->by_path, node_at (self, 0)->path, GUINT_TO_POINTER (1));
  for (size_t i = 0; i < n_entries; i++)
    {
      const SbxViewEntry *e = &entries[i];
      guint idx;

      if (!path_is_clean_absolute (e->path))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "view skeleton: entry %zu: \"%s\" is not a clean absolute path below /", i,
                       e->path != NULL ? e->path : "(null)");
          return FALSE;
        }
      if ((e->type != S_IFDIR && e->type != S_IFREG && e->type != S_IFLNK)
          || (e->type == S_IFLNK) != (e->link_target != NULL)
          || (e->link_target != NULL && (e->link_target[0] == '\0' || strlen (e->link_target) >= PATH_MAX)))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "view skeleton: \"%s\": type 0%o with%s a link target (a directory, a file, or a symlink "
                       "with a target)", e->path, (unsigned) e->type, e->link_target != NULL ? "" : "out");
          return FALSE;
        }
      if (!add_node (self, e->path, e->type, e->link_target, TRUE, &idx, error))
        return FALSE;
    }
  return TRUE;
}

void
sbx_view_skeleton_clear (SbxViewSkeleton *self)
{
  g_clear_pointer (&self->by_path, g_hash_table_unref);
  g_clear_pointer (&self->nodes, g_array_unref);
}
