/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Profiles as JSON, the writing half: sbx_profile_to_json() and the
 * normalized form (docs/profile-format.md).  Loading is in
 * sbx-profile-json.c.
 */
#include "sbx-profile-private.h"

#include <string.h>

/*
 * The normalized form is written directly, not built as a json-glib tree and
 * generated: the tree and the generator's class set-up were most of
 * `sbx profile show`'s own cost.  The bytes are json-glib 1.6's pretty
 * generator's with an indent of two spaces (what this function used to
 * call, and what profile files and tests already hold): "name" : value, one
 * member or element per line, an empty array as [], and its string escapes
 * (below).  test-profile-json compares the two over every ASCII byte.
 */
typedef struct
{
  GString  *out;
  guint     depth;
  gboolean  first[8];   /* per open level: nothing written in it yet (the
                         * normalized form nests three levels deep) */
} JsonWriter;

static void
writer_indent (JsonWriter *w)
{
  for (guint i = 0; i < w->depth; i++)
    g_string_append (w->out, "  ");
}

/* Starts a member or element of the innermost level on a line of its own. */
static void
writer_element (JsonWriter *w)
{
  g_string_append (w->out, w->first[w->depth] ? "\n" : ",\n");
  w->first[w->depth] = FALSE;
  writer_indent (w);
}

static void
writer_open (JsonWriter *w,
             char        bracket)
{
  g_string_append_c (w->out, bracket);
  w->depth++;
  w->first[w->depth] = TRUE;
}

static void
writer_close (JsonWriter *w,
              char        bracket)
{
  gboolean empty = w->first[w->depth];

  w->depth--;
  if (!empty)
    {
      g_string_append_c (w->out, '\n');
      writer_indent (w);
    }
  g_string_append_c (w->out, bracket);
}

/* json-glib's escapes: '"', '\\', \b \f \n \r \t, \u00XX for the other
 * bytes below 0x1f and for 0x7f; everything else (0x1f included, which
 * json-glib 1.6 leaves as it is, and UTF-8 sequences) verbatim.  Profile
 * strings are valid UTF-8 (validation refuses others). */
static void
writer_string (JsonWriter *w,
               const char *text)
{
  g_string_append_c (w->out, '"');
  for (const guchar *p = (const guchar *) text; *p != '\0'; p++)
    switch (*p)
      {
      case '"':
        g_string_append (w->out, "\\\"");
        break;
      case '\\':
        g_string_append (w->out, "\\\\");
        break;
      case '\b':
        g_string_append (w->out, "\\b");
        break;
      case '\f':
        g_string_append (w->out, "\\f");
        break;
      case '\n':
        g_string_append (w->out, "\\n");
        break;
      case '\r':
        g_string_append (w->out, "\\r");
        break;
      case '\t':
        g_string_append (w->out, "\\t");
        break;
      default:
        if (*p < 0x1f || *p == 0x7f)
          g_string_append_printf (w->out, "\\u%04x", (unsigned) *p);
        else
          g_string_append_c (w->out, (char) *p);
      }
  g_string_append_c (w->out, '"');
}

/* Member names here are fixed ASCII words: no escaping needed. */
static void
writer_member (JsonWriter *w,
               const char *name)
{
  writer_element (w);
  g_string_append_printf (w->out, "\"%s\" : ", name);
}

static void
writer_access (JsonWriter *w,
               const char *member,
               SbxAccess   access)
{
  writer_member (w, member);
  writer_string (w, sbx_access_to_string (access));
}

static void
writer_int (JsonWriter *w,
            const char *member,
            gint64      value)
{
  writer_member (w, member);
  g_string_append_printf (w->out, "%" G_GINT64_FORMAT, value);
}

/**
 * sbx_profile_to_json:
 * @self: a [struct@Sbx.Profile]
 *
 * Writes @self in its normalized JSON form: every member in a fixed order
 * (version, workspace, host, network, command, home, isolation,
 * ack-unconfined only when true, roots, limits only when one is set, with
 * only the set ones), canonical absolute paths, roots sorted, memory in
 * bytes; indented with two spaces and ending with a newline.
 * [ctor@Sbx.Profile.new_from_json] on the result gives an equal profile
 * (while the paths resolve the same way).
 *
 * Returns: (transfer full): the JSON text
 *
 * Since: 0.1
 */
char *
sbx_profile_to_json (SbxProfile *self)
{
  g_autoptr(GString) out = g_string_sized_new (512);
  JsonWriter w = { out, 0, { TRUE } };
  guint64 processes, memory, open_files;
  guint n_roots;
  const SbxProfileRoot *roots;

  g_return_val_if_fail (self != NULL, NULL);

  roots = sbx_profile_get_roots (self, &n_roots);
  writer_open (&w, '{');
  writer_member (&w, "version");
  g_string_append_c (out, '1');

  writer_member (&w, "workspace");
  writer_open (&w, '{');
  writer_member (&w, "root");
  writer_string (&w, sbx_profile_get_workspace_root (self));
  writer_access (&w, "read", sbx_profile_get_workspace_read (self));
  writer_access (&w, "write", sbx_profile_get_workspace_write (self));
  writer_close (&w, '}');

  writer_member (&w, "host");
  writer_open (&w, '{');
  writer_access (&w, "read", sbx_profile_get_host_read (self));
  writer_access (&w, "write", sbx_profile_get_host_write (self));
  writer_close (&w, '}');

  writer_access (&w, "network", sbx_profile_get_network (self));
  writer_access (&w, "command", sbx_profile_get_command (self));
  writer_member (&w, "home");
  writer_string (&w, sbx_profile_get_home (self) == SBX_HOME_REAL ? "real" : "isolated");
  writer_member (&w, "isolation");
  writer_string (&w, sbx_profile_get_isolation (self) == SBX_ISOLATION_UNCONFINED ? "unconfined" : "sandboxed");
  if (sbx_profile_get_ack_unconfined (self))
    {
      writer_member (&w, "ack-unconfined");
      g_string_append (out, "true");
    }
  if (sbx_profile_get_unix_sockets (self))
    {
      writer_member (&w, "unix-sockets");
      writer_string (&w, "allow");
    }
  if (sbx_profile_get_host_sockets (self)[0] != NULL || sbx_profile_get_gated_host_sockets (self)[0] != NULL)
    {
      /* the allowed ones as strings, then the gated ones as objects */
      writer_member (&w, "host-sockets");
      writer_open (&w, '[');
      for (const char * const *p = sbx_profile_get_host_sockets (self); *p != NULL; p++)
        {
          writer_element (&w);
          writer_string (&w, *p);
        }
      for (const char * const *p = sbx_profile_get_gated_host_sockets (self); *p != NULL; p++)
        {
          writer_element (&w);
          writer_open (&w, '{');
          writer_member (&w, "path");
          writer_string (&w, *p);
          writer_member (&w, "access");
          writer_string (&w, "gated");
          writer_close (&w, '}');
        }
      writer_close (&w, ']');
    }
  if (sbx_profile_get_denied_paths (self) == SBX_DENIED_PATHS_NOT_FOUND)
    {
      writer_member (&w, "denied-paths");
      writer_string (&w, "not-found");
    }

  writer_member (&w, "roots");
  writer_open (&w, '[');
  for (guint i = 0; i < n_roots; i++)
    {
      writer_element (&w);
      writer_open (&w, '{');
      writer_member (&w, "path");
      writer_string (&w, roots[i].path);
      writer_access (&w, "read", roots[i].read);
      writer_access (&w, "write", roots[i].write);
      writer_close (&w, '}');
    }
  writer_close (&w, ']');

  processes = sbx_profile_get_max_processes (self);
  memory = sbx_profile_get_max_memory (self);
  open_files = sbx_profile_get_max_open_files (self);
  if (processes != 0 || memory != 0 || open_files != 0)
    {
      writer_member (&w, "limits");
      writer_open (&w, '{');
      /* Validation caps every limit at G_MAXINT64, so the casts are exact. */
      if (processes != 0)
        writer_int (&w, "processes", (gint64) processes);
      if (memory != 0)
        writer_int (&w, "memory", (gint64) memory);
      if (open_files != 0)
        writer_int (&w, "open-files", (gint64) open_files);
      writer_close (&w, '}');
    }
  writer_close (&w, '}');
  g_string_append_c (out, '\n');
  return g_string_free (g_steal_pointer (&out), FALSE);
}
