/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Landlock plan, the model (parent side): the access sets per axis and the
 * policy's entries with the precedence they resolve to (the ResolveFS model
 * of <sbx/sbx-fs-resolve.h>, with the policy's glob grammar for denies).
 * See sbx-landlock.c for how the policy becomes rules.
 */
#include "sbx-landlock.h"
#include "sbx-landlock-compat.h"
#include "sbx-landlock-private.h"
#include "sbx-landlock-build-private.h"
#include <sbx/sbx-fs-resolve.h>
#include "sbx-raw-syscall.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <linux/openat2.h>

#include <gio/gio.h>

/* ------------------------------------------------------------------------- */
/* Access sets                                                                */
/* ------------------------------------------------------------------------- */

const uint32_t ll_axes[LL_N_AXES] = { SBX_FS_READ, SBX_FS_EXEC, SBX_FS_WRITE };

const char *
ll_axis_name (uint32_t axis)
{
  switch (axis)
    {
    case SBX_FS_READ:
      return "read";
    case SBX_FS_EXEC:
      return "execute";
    case SBX_FS_WRITE:
      return "write";
    default:
      return "?";
    }
}

uint64_t
ll_handled_fs_for_abi (int abi)
{
  uint64_t mask = LL_FS_ABI1;

  if (abi >= 2)
    mask |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3)
    mask |= LANDLOCK_ACCESS_FS_TRUNCATE;
  if (abi >= 5)
    mask |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
  return mask;
}

/* Landlock rights for @axis on an inode of file type @type (S_IFMT bits). */
uint64_t
ll_axis_rights (uint32_t axis, mode_t type)
{
  gboolean dir = type == S_IFDIR;
  gboolean chr = type == S_IFCHR;

  switch (axis)
    {
    case SBX_FS_READ:
      return (dir ? LL_READ_DIR : LL_READ_FILE) | (chr ? LL_DEVICE_EXTRA : 0);
    case SBX_FS_EXEC:
      return chr ? 0 : LL_EXEC;   /* executing a device is meaningless */
    case SBX_FS_WRITE:
      return (dir ? LL_WRITE_DIR : LL_WRITE_FILE) | (chr ? LL_DEVICE_EXTRA : 0);
    default:
      return 0;
    }
}

/* ------------------------------------------------------------------------- */
/* Policy entries and the ResolveFS model                                     */
/* ------------------------------------------------------------------------- */


void
ll_entry_free (gpointer p)
{
  LlEntry *e = p;

  g_free (e->path);
  g_free (e);
}

/* TRUE when @path is strictly beneath @parent (at a '/' boundary). */
gboolean
ll_path_under (const char *parent, const char *path)
{
  size_t n = strlen (parent);

  if (strcmp (parent, "/") == 0)
    return path[0] == '/' && path[1] != '\0';
  return strncmp (parent, path, n) == 0 && path[n] == '/' && path[n + 1] != '\0';
}

static gboolean
literal_match (const LlEntry *e, const char *path)
{
  if (strcmp (e->path, path) == 0)
    return TRUE;
  return !e->exact && ll_path_under (e->path, path);
}

/* Glob grammar of the policy (the same as the core's
 * sbx_fs_glob_match()): "**" matches any text including '/', '*' any text
 * within one segment, '?' one character other than '/', "[...]" a class of
 * characters and ranges ('!' or '^' negates; a ']' right after the opening
 * is literal); an unclosed '[' is a literal.  Characters are code points (an
 * invalid UTF-8 byte stands for U+FFFD).  A reversed range makes the whole
 * pattern invalid. */

#define GT_LITERAL  0
#define GT_ANY      1   /* ? */
#define GT_STAR     2   /* * */
#define GT_TREE     3   /* ** */
#define GT_CLASS    4

typedef struct
{
  int       kind;
  gunichar  c;
  gboolean  negated;
  guint     first;      /* index of the class's first range pair in ranges */
  guint     n;
} GlobTok;

static gunichar *
utf8_decode (const char *text, gsize *n)
{
  gunichar *out = g_new (gunichar, strlen (text) + 1);
  gsize k = 0;

  while (*text != '\0')
    {
      gunichar c = g_utf8_get_char_validated (text, -1);

      if (c == (gunichar) -1 || c == (gunichar) -2)
        {
          out[k++] = 0xFFFD;
          text++;
        }
      else
        {
          out[k++] = c;
          text = g_utf8_next_char (text);
        }
    }
  *n = k;
  return out;
}

/* Tokens into @toks, class ranges (pairs) into @ranges; FALSE if invalid. */
static gboolean
glob_compile (const gunichar *p, gsize n, GArray *toks, GArray *ranges)
{
  for (gsize i = 0; i < n;)
    {
      GlobTok t = { GT_LITERAL, p[i], FALSE, 0, 0 };

      if (p[i] == '*' && i + 1 < n && p[i + 1] == '*')
        t.kind = GT_TREE, i += 2;
      else if (p[i] == '*')
        t.kind = GT_STAR, i++;
      else if (p[i] == '?')
        t.kind = GT_ANY, i++;
      else if (p[i] == '[')
        {
          gsize j = i + 1, body;

          if (j < n && (p[j] == '!' || p[j] == '^'))
            t.negated = TRUE, j++;
          body = j;
          if (j < n && p[j] == ']')
            j++;
          while (j < n && p[j] != ']')
            j++;
          if (j == n)
            i++;   /* unclosed: literal '[' */
          else
            {
              t.kind = GT_CLASS;
              t.first = ranges->len / 2;
              for (gsize k = body; k < j;)
                {
                  gunichar lo = p[k], hi = p[k];

                  if (k + 2 < j && p[k + 1] == '-')
                    {
                      hi = p[k + 2];
                      if (lo > hi)
                        return FALSE;
                      k += 3;
                    }
                  else
                    k++;
                  g_array_append_val (ranges, lo);
                  g_array_append_val (ranges, hi);
                }
              t.n = ranges->len / 2 - t.first;
              i = j + 1;
            }
        }
      else
        i++;
      g_array_append_val (toks, t);
    }
  return TRUE;
}

static gboolean
glob_tok_matches (const GlobTok *t, const gunichar *ranges, gunichar c)
{
  gboolean in = FALSE;

  switch (t->kind)
    {
    case GT_LITERAL:
      return c == t->c;
    case GT_ANY:
      return c != '/';
    case GT_CLASS:
      for (guint k = 0; k < t->n && !in; k++)
        in = c >= ranges[2 * (t->first + k)] && c <= ranges[2 * (t->first + k) + 1];
      return in != t->negated;
    default:
      return FALSE;
    }
}

/* Deny globs fail closed: an invalid pattern matches everything.  Linear
 * NFA simulation (state i: the first i tokens matched). */
static gboolean
deny_glob_matches (const char *pattern, const char *path)
{
  g_autoptr(GArray) toks = g_array_new (FALSE, FALSE, sizeof (GlobTok));
  g_autoptr(GArray) ranges = g_array_new (FALSE, FALSE, sizeof (gunichar));
  g_autofree gunichar *pat = NULL, *text = NULL;
  g_autofree gboolean *cur = NULL, *nxt = NULL;
  gsize n_pat, n_text;
  guint n;
  const GlobTok *t;

  pat = utf8_decode (pattern, &n_pat);
  if (!glob_compile (pat, n_pat, toks, ranges))
    return TRUE;
  t = (const GlobTok *) (void *) toks->data;
  n = toks->len;
  text = utf8_decode (path, &n_text);
  cur = g_new0 (gboolean, n + 1);
  nxt = g_new0 (gboolean, n + 1);
  cur[0] = TRUE;
  for (guint i = 0; i < n; i++)   /* stars match the empty text */
    if (cur[i] && (t[i].kind == GT_STAR || t[i].kind == GT_TREE))
      cur[i + 1] = TRUE;
  for (gsize k = 0; k < n_text; k++)
    {
      gboolean alive = FALSE;

      for (guint i = 0; i <= n; i++)
        nxt[i] = FALSE;
      for (guint i = 0; i < n; i++)
        {
          if (!cur[i])
            continue;
          if (t[i].kind == GT_TREE || (t[i].kind == GT_STAR && text[k] != '/'))
            nxt[i] = alive = TRUE;
          else if (glob_tok_matches (&t[i], (const gunichar *) (void *) ranges->data, text[k]))
            nxt[i + 1] = alive = TRUE;
        }
      if (!alive)
        return FALSE;
      for (guint i = 0; i < n; i++)
        if (nxt[i] && (t[i].kind == GT_STAR || t[i].kind == GT_TREE))
          nxt[i + 1] = TRUE;
      for (guint i = 0; i <= n; i++)
        cur[i] = nxt[i];
    }
  return cur[n];
}

static int
ll_glob_match (const char *pattern,
               const char *path,
               void       *user_data)
{
  /* deny_glob_matches() already treats a malformed pattern as matching */
  return deny_glob_matches (pattern, path) ? 1 : 0;
}

/* The policy's precedence (sbx_fs_resolve_rules() of <sbx/sbx-fs-resolve.h>,
 * the one implementation the core uses too) at @path over @entries
 * (literal) and @globs (deny only): the SBX_FS_* axes granted. */
uint32_t
ll_resolve_path (GPtrArray *entries, GPtrArray *globs, const char *path)
{
  g_autofree SbxFsRuleV1 *rules = g_new0 (SbxFsRuleV1, entries->len + globs->len + 1);
  guint n = 0;

  for (guint i = 0; i < entries->len; i++)
    {
      const LlEntry *e = g_ptr_array_index (entries, i);

      rules[n].struct_size = sizeof (SbxFsRuleV1);
      rules[n].flags = e->exact ? SBX_FS_RULE_EXACT : 0;
      rules[n].allow = e->allow;
      rules[n].deny = e->deny;
      rules[n].fd = -1;
      rules[n].path = e->path;
      n++;
    }
  for (guint i = 0; i < globs->len; i++)
    {
      const LlEntry *g = g_ptr_array_index (globs, i);

      rules[n].struct_size = sizeof (SbxFsRuleV1);
      rules[n].flags = SBX_FS_RULE_GLOB;
      rules[n].allow = 0;
      rules[n].deny = g->deny != 0 ? g->deny : SBX_FS_ALL;
      rules[n].fd = -1;
      rules[n].path = g->path;
      n++;
    }
  return sbx_fs_resolve_rules (rules, n, path, SBX_FS_RESOLVE_PATH, ll_glob_match, NULL);
}

/* An absolute, clean path: no empty, "." or ".." components, no trailing '/'. */
gboolean
ll_path_is_clean (const char *path)
{
  if (path == NULL || path[0] != '/')
    return FALSE;
  if (strcmp (path, "/") == 0)
    return TRUE;
  for (const char *c = path; *c != '\0';)
    {
      const char *next;
      size_t len;

      c++;   /* skip '/' */
      next = strchr (c, '/');
      len = next != NULL ? (size_t) (next - c) : strlen (c);
      if (len == 0 || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
        return FALSE;
      if (next == NULL)
        break;
      c = next;
    }
  return strlen (path) < PATH_MAX;
}
