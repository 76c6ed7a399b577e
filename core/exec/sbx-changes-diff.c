/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unified diffs of a stage's text files, our own code (no diff(1) needed
 * on the host): the longest common subsequence of lines by dynamic
 * programming, bounded to MAX_CELLS table cells; past that bound the hunk
 * replaces the whole file (still a correct patch, only a longer one).
 * Content with a NUL byte in its first 8000 bytes is binary, as diff(1)
 * decides.
 */
#include "sbx-changes-diff-private.h"

#include <string.h>

#define MAX_CELLS (4u * 1024u * 1024u)
#define CONTEXT   3

typedef struct
{
  const char *start;
  gsize       len;   /* with its newline, if any */
} Line;

static GArray *
split_lines (GBytes *bytes)
{
  GArray *lines = g_array_new (FALSE, FALSE, sizeof (Line));
  gsize size = 0;
  const char *data = g_bytes_get_data (bytes, &size);
  gsize pos = 0;

  while (pos < size)
    {
      const char *nl = memchr (data + pos, '\n', size - pos);
      Line line = { data + pos, nl != NULL ? (gsize) (nl - (data + pos)) + 1 : size - pos };

      g_array_append_val (lines, line);
      pos += line.len;
    }
  return lines;
}

static gboolean
is_binary (GBytes *bytes)
{
  gsize size = 0;
  const char *data = g_bytes_get_data (bytes, &size);

  return size > 0 && memchr (data, '\0', MIN (size, 8000)) != NULL;
}

static gboolean
line_equal (const Line *a,
            const Line *b)
{
  return a->len == b->len && memcmp (a->start, b->start, a->len) == 0;
}

/* The edit script: per step, ' ' keep, '-' old only, '+' new only. */
static GString *
edit_script (GArray *a,
             GArray *b)
{
  GString *ops = g_string_new (NULL);
  guint n = a->len, m = b->len, i = 0, j = 0;
  guint32 *table;

  if ((guint64) (n + 1) * (m + 1) > MAX_CELLS)
    {
      for (i = 0; i < n; i++)
        g_string_append_c (ops, '-');
      for (j = 0; j < m; j++)
        g_string_append_c (ops, '+');
      return ops;
    }
  /* table[i][j]: the LCS length of a[i..] and b[j..]. */
  table = g_new0 (guint32, (gsize) (n + 1) * (m + 1));
  for (guint ii = n; ii-- > 0;)
    for (guint jj = m; jj-- > 0;)
      table[ii * (m + 1) + jj] = line_equal (&g_array_index (a, Line, ii), &g_array_index (b, Line, jj))
                                 ? table[(ii + 1) * (m + 1) + jj + 1] + 1
                                 : MAX (table[(ii + 1) * (m + 1) + jj], table[ii * (m + 1) + jj + 1]);
  while (i < n || j < m)
    {
      if (i < n && j < m && line_equal (&g_array_index (a, Line, i), &g_array_index (b, Line, j)))
        {
          g_string_append_c (ops, ' ');
          i++;
          j++;
        }
      /* Deletions before insertions, as diff -u shows a replaced run. */
      else if (i < n && (j == m || table[(i + 1) * (m + 1) + j] >= table[i * (m + 1) + j + 1]))
        {
          g_string_append_c (ops, '-');
          i++;
        }
      else
        {
          g_string_append_c (ops, '+');
          j++;
        }
    }
  g_free (table);
  return ops;
}

static void
append_line (GString    *out,
             char        mark,
             const Line *line)
{
  g_string_append_c (out, mark);
  g_string_append_len (out, line->start, (gssize) line->len);
  if (line->len == 0 || line->start[line->len - 1] != '\n')
    g_string_append (out, "\n\\ No newline at end of file\n");
}

void
sbx_changes_diff_text (GString    *out,
                       const char *old_label,
                       GBytes     *old,
                       const char *new_label,
                       GBytes     *new_)
{
  g_autoptr(GArray) a = NULL;
  g_autoptr(GArray) b = NULL;
  g_autoptr(GString) ops = NULL;
  guint k = 0;

  if (is_binary (old) || is_binary (new_))
    {
      g_string_append_printf (out, "Binary files %s and %s differ\n", old_label, new_label);
      return;
    }
  a = split_lines (old);
  b = split_lines (new_);
  ops = edit_script (a, b);
  g_string_append_printf (out, "--- %s\n+++ %s\n", old_label, new_label);
  while (k < ops->len)
    {
      guint start, end, ai = 0, bi = 0, na = 0, nb = 0;

      while (k < ops->len && ops->str[k] == ' ')
        k++;
      if (k == ops->len)
        break;
      /* A hunk: from CONTEXT keeps before the change to the first run of
       * more than 2 * CONTEXT keeps after one (or the end). */
      start = k >= CONTEXT ? k - CONTEXT : 0;
      end = k;
      while (end < ops->len)
        {
          guint keeps = 0;

          while (end + keeps < ops->len && ops->str[end + keeps] == ' ')
            keeps++;
          if (end + keeps == ops->len || keeps > 2 * CONTEXT)
            {
              end += MIN (keeps, CONTEXT);
              break;
            }
          end += keeps;
          while (end < ops->len && ops->str[end] != ' ')
            end++;
        }
      for (guint x = 0; x < start; x++)
        {
          ai += ops->str[x] != '+';
          bi += ops->str[x] != '-';
        }
      for (guint x = start; x < end; x++)
        {
          na += ops->str[x] != '+';
          nb += ops->str[x] != '-';
        }
      g_string_append_printf (out, "@@ -%u,%u +%u,%u @@\n", na > 0 ? ai + 1 : ai, na, nb > 0 ? bi + 1 : bi, nb);
      for (guint x = start; x < end; x++)
        {
          if (ops->str[x] == ' ')
            {
              append_line (out, ' ', &g_array_index (a, Line, ai));
              ai++;
              bi++;
            }
          else if (ops->str[x] == '-')
            append_line (out, '-', &g_array_index (a, Line, ai++));
          else
            append_line (out, '+', &g_array_index (b, Line, bi++));
        }
      k = end;
    }
}
