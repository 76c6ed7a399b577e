/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Pass 1 of profile loading: a strict RFC 8259 scanner over the raw text,
 * and the member paths of its messages.  Why it exists (json-glib's
 * leniencies) is said at the top of sbx-profile-json.c.
 */
#include "sbx-profile-json-scan-private.h"

#include <string.h>

#include "sbx-profile.h"

/* A profile is 4 levels deep; anything much deeper is not a profile. */
#define MAX_DEPTH 32

/* ------------------------------------------------------------------------- */
/* Member paths */

/* Text for a message inside double quotes: valid UTF-8, with '"', '\\' and
 * control characters escaped. */
char *
sbx_json_quote_text (const char *text)
{
  g_autofree char *valid = g_utf8_make_valid (text, -1);
  GString *out = g_string_new (NULL);

  for (const char *p = valid; *p != '\0'; p++)
    {
      guchar c = (guchar) *p;

      if (c == '"' || c == '\\')
        {
          g_string_append_c (out, '\\');
          g_string_append_c (out, (char) c);
        }
      else if (c < 0x20 || c == 0x7F)
        g_string_append_printf (out, "\\u%04x", c);
      else
        g_string_append_c (out, (char) c);
    }
  return g_string_free (out, FALSE);
}

static gboolean
is_plain_name (const char *name)
{
  if (name[0] == '\0')
    return FALSE;
  for (const char *p = name; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p) && *p != '-' && *p != '_')
      return FALSE;
  return TRUE;
}

/* Appends ".name" (or "name" at the start), or ["name"] with escapes for a
 * name that is not plain. */
static void
append_member (GString    *path,
               const char *name)
{
  if (is_plain_name (name))
    {
      if (path->len > 0)
        g_string_append_c (path, '.');
      g_string_append (path, name);
    }
  else
    {
      g_autofree char *quoted = sbx_json_quote_text (name);

      g_string_append_printf (path, "[\"%s\"]", quoted);
    }
}

char *
sbx_json_member_path (const char *parent,
                      const char *name)
{
  GString *path = g_string_new (g_str_equal (parent, "(root)") ? "" : parent);

  append_member (path, name);
  return g_string_free (path, FALSE);
}

char *
sbx_json_element_path (const char *parent,
                       guint       index)
{
  return g_strdup_printf ("%s[%u]", g_str_equal (parent, "(root)") ? "" : parent, index);
}

/* ------------------------------------------------------------------------- */
/* Pass 1: the strict scanner */

typedef struct
{
  gboolean    is_object;
  guint       index;   /* arrays: the current element */
  char       *key;     /* objects: the current member, or NULL */
  GHashTable *keys;    /* objects: every member name seen */
} Frame;


typedef struct
{
  const guchar *text;
  gsize         len;
  gsize         pos;
  GArray       *frames;   /* Frame */
  GError      **error;
} Scanner;

static void
frame_clear (gpointer data)
{
  Frame *frame = data;

  g_clear_pointer (&frame->key, g_free);
  g_clear_pointer (&frame->keys, g_hash_table_unref);
}

static char *
scanner_path (Scanner *scanner)
{
  GString *path = g_string_new (NULL);

  for (guint i = 0; i < scanner->frames->len; i++)
    {
      const Frame *frame = &g_array_index (scanner->frames, Frame, i);

      if (frame->is_object)
        {
          if (frame->key != NULL)
            append_member (path, frame->key);
        }
      else
        g_string_append_printf (path, "[%u]", frame->index);
    }
  if (path->len == 0)
    g_string_append (path, "(root)");
  return g_string_free (path, FALSE);
}

/* The path of the innermost object itself (its member names are at fault). */
static char *
scanner_object_path (Scanner *scanner)
{
  Frame *top = &g_array_index (scanner->frames, Frame, scanner->frames->len - 1);
  char *saved = g_steal_pointer (&top->key);
  char *path = scanner_path (scanner);

  top->key = saved;
  return path;
}

static gboolean scanner_syntax (Scanner    *scanner,
                                const char *format,
                                ...) G_GNUC_PRINTF (2, 3);

/* A syntax error at the current position: PARSE, with line and column. */
static gboolean
scanner_syntax (Scanner    *scanner,
                const char *format,
                ...)
{
  g_autofree char *path = scanner_path (scanner);
  g_autofree char *detail = NULL;
  guint line = 1, column = 1;
  va_list args;

  for (gsize i = 0; i < scanner->pos && i < scanner->len; i++)
    {
      if (scanner->text[i] == '\n')
        {
          line++;
          column = 1;
        }
      else if ((scanner->text[i] & 0xC0) != 0x80)
        column++;
    }
  va_start (args, format);
  detail = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (scanner->error, SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_PARSE,
               "%s: line %u, column %u: %s", path, line, column, detail);
  return FALSE;
}

static gboolean scanner_invalid (Scanner    *scanner,
                                 const char *path,
                                 const char *format,
                                 ...) G_GNUC_PRINTF (3, 4);

/* Well-formed but not acceptable: INVALID, starting with @path. */
static gboolean
scanner_invalid (Scanner    *scanner,
                 const char *path,
                 const char *format,
                 ...)
{
  g_autofree char *detail = NULL;
  va_list args;

  va_start (args, format);
  detail = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (scanner->error, SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_INVALID,
               "%s: %s", path, detail);
  return FALSE;
}

static void
skip_whitespace (Scanner *scanner)
{
  while (scanner->pos < scanner->len)
    {
      guchar c = scanner->text[scanner->pos];

      if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
        break;
      scanner->pos++;
    }
}

static int
peek (Scanner *scanner)
{
  return scanner->pos < scanner->len ? scanner->text[scanner->pos] : -1;
}

/* "'x'" for a printable ASCII byte, else "byte 0xNN", or "end of text". */
static char *
describe_byte (int c)
{
  if (c < 0)
    return g_strdup ("end of text");
  if (c >= 0x20 && c < 0x7F)
    return g_strdup_printf ("'%c'", c);
  return g_strdup_printf ("byte 0x%02x", (guint) c);
}

static int
hex_value (guchar c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* Reads 4 hex digits at the current position. */
static gboolean
read_hex4 (Scanner  *scanner,
           gunichar *out)
{
  gunichar value = 0;

  if (scanner->len - scanner->pos < 4)
    return scanner_syntax (scanner, "truncated \\u escape");
  for (guint i = 0; i < 4; i++)
    {
      int digit = hex_value (scanner->text[scanner->pos + i]);

      if (digit < 0)
        return scanner_syntax (scanner, "\\u must be followed by 4 hex digits");
      value = (value << 4) | (gunichar) digit;
    }
  scanner->pos += 4;
  *out = value;
  return TRUE;
}

/*
 * Scans a string literal at the opening quote.  @decoded receives the
 * decoded text (NUL bytes excluded; @has_nul says whether there were any).
 * @what is "member name" or "string" for messages; @path is where a
 * problem with the content is reported.
 */
static gboolean
scan_string (Scanner    *scanner,
             GString    *decoded,
             gboolean   *has_nul,
             const char *path,
             const char *what)
{
  scanner->pos++;   /* opening quote */
  *has_nul = FALSE;
  for (;;)
    {
      guchar c;

      if (scanner->pos >= scanner->len)
        return scanner_syntax (scanner, "unterminated %s", what);
      c = scanner->text[scanner->pos];
      if (c == '"')
        {
          scanner->pos++;
          return TRUE;
        }
      if (c == '\\')
        {
          int e;

          scanner->pos++;
          e = peek (scanner);
          scanner->pos++;
          switch (e)
            {
            case '"':  g_string_append_c (decoded, '"'); break;
            case '\\': g_string_append_c (decoded, '\\'); break;
            case '/':  g_string_append_c (decoded, '/'); break;
            case 'b':  g_string_append_c (decoded, '\b'); break;
            case 'f':  g_string_append_c (decoded, '\f'); break;
            case 'n':  g_string_append_c (decoded, '\n'); break;
            case 'r':  g_string_append_c (decoded, '\r'); break;
            case 't':  g_string_append_c (decoded, '\t'); break;
            case 'u':
              {
                gunichar u;

                if (!read_hex4 (scanner, &u))
                  return FALSE;
                if (u >= 0xDC00 && u <= 0xDFFF)
                  return scanner_invalid (scanner, path, "%s has an unpaired surrogate \\u%04X", what, u);
                if (u >= 0xD800 && u <= 0xDBFF)
                  {
                    gunichar low;

                    if (scanner->len - scanner->pos < 2 || scanner->text[scanner->pos] != '\\'
                        || scanner->text[scanner->pos + 1] != 'u')
                      return scanner_invalid (scanner, path, "%s has an unpaired surrogate \\u%04X", what, u);
                    scanner->pos += 2;
                    if (!read_hex4 (scanner, &low))
                      return FALSE;
                    if (low < 0xDC00 || low > 0xDFFF)
                      return scanner_invalid (scanner, path, "%s has an unpaired surrogate \\u%04X", what, u);
                    u = 0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00);
                  }
                if (u == 0)
                  *has_nul = TRUE;
                else
                  g_string_append_unichar (decoded, u);
              }
              break;
            default:
              {
                g_autofree char *shown = describe_byte (e);

                scanner->pos--;
                return scanner_syntax (scanner, "invalid escape \\ followed by %s", shown);
              }
            }
          continue;
        }
      if (c == 0)
        {
          *has_nul = TRUE;
          scanner->pos++;
          continue;
        }
      if (c < 0x20)
        return scanner_syntax (scanner, "control character 0x%02x in a %s (escape it)", c, what);
      if (c < 0x80)
        {
          g_string_append_c (decoded, (char) c);
          scanner->pos++;
          continue;
        }
      {
        gunichar u = g_utf8_get_char_validated ((const char *) scanner->text + scanner->pos,
                                                (gssize) (scanner->len - scanner->pos));
        const char *next;

        if (u == (gunichar) -1 || u == (gunichar) -2)
          return scanner_invalid (scanner, path, "%s is not valid UTF-8", what);
        next = g_utf8_next_char ((const char *) scanner->text + scanner->pos);
        g_string_append_len (decoded, (const char *) scanner->text + scanner->pos,
                             next - ((const char *) scanner->text + scanner->pos));
        scanner->pos = (gsize) (next - (const char *) scanner->text);
      }
    }
}

static gboolean
scan_number (Scanner *scanner)
{
  gsize start = scanner->pos;
  gboolean integer = TRUE;
  gboolean negative = FALSE;
  guint64 magnitude = 0;
  gboolean overflow = FALSE;

  if (peek (scanner) == '-')
    {
      negative = TRUE;
      scanner->pos++;
    }
  if (peek (scanner) == '0')
    scanner->pos++;
  else if (peek (scanner) >= '1' && peek (scanner) <= '9')
    {
      while (peek (scanner) >= '0' && peek (scanner) <= '9')
        {
          guint digit = (guint) (peek (scanner) - '0');

          if (magnitude > (G_MAXUINT64 - digit) / 10)
            overflow = TRUE;
          else
            magnitude = magnitude * 10 + digit;
          scanner->pos++;
        }
    }
  else
    return scanner_syntax (scanner, "malformed number");
  if (peek (scanner) == '.')
    {
      integer = FALSE;
      scanner->pos++;
      if (!(peek (scanner) >= '0' && peek (scanner) <= '9'))
        return scanner_syntax (scanner, "malformed number: digits must follow '.'");
      while (peek (scanner) >= '0' && peek (scanner) <= '9')
        scanner->pos++;
    }
  if (peek (scanner) == 'e' || peek (scanner) == 'E')
    {
      integer = FALSE;
      scanner->pos++;
      if (peek (scanner) == '+' || peek (scanner) == '-')
        scanner->pos++;
      if (!(peek (scanner) >= '0' && peek (scanner) <= '9'))
        return scanner_syntax (scanner, "malformed number: digits must follow the exponent");
      while (peek (scanner) >= '0' && peek (scanner) <= '9')
        scanner->pos++;
    }
  /* json-glib reads integers as gint64 and silently wraps beyond it. */
  if (integer && (overflow || magnitude > (negative ? (guint64) G_MAXINT64 + 1 : (guint64) G_MAXINT64)))
    {
      g_autofree char *path = scanner_path (scanner);
      int shown = (int) MIN (scanner->pos - start, 40);

      return scanner_invalid (scanner, path, "integer %.*s%s is out of range", shown,
                              (const char *) scanner->text + start,
                              scanner->pos - start > 40 ? "..." : "");
    }
  return TRUE;
}

static gboolean
scan_literal (Scanner    *scanner,
              const char *word)
{
  size_t n = strlen (word);

  if (scanner->len - scanner->pos < n || memcmp (scanner->text + scanner->pos, word, n) != 0)
    return scanner_syntax (scanner, "unexpected text (expected a value)");
  scanner->pos += n;
  return TRUE;
}

static gboolean scan_value (Scanner *scanner,
                            guint    depth);

static gboolean
scan_object (Scanner *scanner,
             guint    depth)
{
  Frame frame = { TRUE, 0, NULL, g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL) };
  Frame *top;

  scanner->pos++;   /* '{' */
  g_array_append_val (scanner->frames, frame);
  top = &g_array_index (scanner->frames, Frame, scanner->frames->len - 1);

  skip_whitespace (scanner);
  if (peek (scanner) == '}')
    {
      scanner->pos++;
      g_array_set_size (scanner->frames, scanner->frames->len - 1);
      return TRUE;
    }
  for (;;)
    {
      g_autoptr(GString) name = g_string_new (NULL);
      g_autofree char *object_path = NULL;
      gboolean has_nul;

      if (peek (scanner) != '"')
        {
          g_autofree char *shown = describe_byte (peek (scanner));

          return scanner_syntax (scanner, "expected a member name in double quotes, found %s", shown);
        }
      object_path = scanner_object_path (scanner);
      if (!scan_string (scanner, name, &has_nul, object_path, "member name"))
        return FALSE;
      if (has_nul)
        return scanner_invalid (scanner, object_path, "member name contains a NUL byte");
      top = &g_array_index (scanner->frames, Frame, scanner->frames->len - 1);
      if (g_hash_table_contains (top->keys, name->str))
        {
          g_autofree char *escaped = sbx_json_quote_text (name->str);

          return scanner_invalid (scanner, object_path, "duplicate member \"%s\"", escaped);
        }
      g_hash_table_add (top->keys, g_strdup (name->str));
      g_free (top->key);
      top->key = g_string_free (g_steal_pointer (&name), FALSE);

      skip_whitespace (scanner);
      if (peek (scanner) != ':')
        {
          g_autofree char *shown = describe_byte (peek (scanner));

          return scanner_syntax (scanner, "expected ':' after the member name, found %s", shown);
        }
      scanner->pos++;
      skip_whitespace (scanner);
      if (!scan_value (scanner, depth + 1))
        return FALSE;
      skip_whitespace (scanner);
      if (peek (scanner) == ',')
        {
          scanner->pos++;
          skip_whitespace (scanner);
          /* A problem with the next member name belongs to the object. */
          top = &g_array_index (scanner->frames, Frame, scanner->frames->len - 1);
          g_clear_pointer (&top->key, g_free);
          continue;
        }
      if (peek (scanner) == '}')
        {
          scanner->pos++;
          g_array_set_size (scanner->frames, scanner->frames->len - 1);
          return TRUE;
        }
      {
        g_autofree char *shown = describe_byte (peek (scanner));

        return scanner_syntax (scanner, "expected ',' or '}', found %s", shown);
      }
    }
}

static gboolean
scan_array (Scanner *scanner,
            guint    depth)
{
  Frame frame = { FALSE, 0, NULL, NULL };

  scanner->pos++;   /* '[' */
  g_array_append_val (scanner->frames, frame);
  skip_whitespace (scanner);
  if (peek (scanner) == ']')
    {
      scanner->pos++;
      g_array_set_size (scanner->frames, scanner->frames->len - 1);
      return TRUE;
    }
  for (;;)
    {
      Frame *top;

      if (!scan_value (scanner, depth + 1))
        return FALSE;
      skip_whitespace (scanner);
      if (peek (scanner) == ']')
        {
          scanner->pos++;
          g_array_set_size (scanner->frames, scanner->frames->len - 1);
          return TRUE;
        }
      if (peek (scanner) != ',')
        {
          g_autofree char *shown = describe_byte (peek (scanner));

          return scanner_syntax (scanner, "expected ',' or ']', found %s", shown);
        }
      scanner->pos++;
      skip_whitespace (scanner);
      top = &g_array_index (scanner->frames, Frame, scanner->frames->len - 1);
      top->index++;
    }
}

static gboolean
scan_value (Scanner *scanner,
            guint    depth)
{
  int c = peek (scanner);

  if (depth > MAX_DEPTH)
    return scanner_syntax (scanner, "nested deeper than %u levels", MAX_DEPTH);

  switch (c)
    {
    case '{':
      return scan_object (scanner, depth);
    case '[':
      return scan_array (scanner, depth);
    case '"':
      {
        g_autoptr(GString) value = g_string_new (NULL);
        g_autofree char *path = scanner_path (scanner);
        gboolean has_nul;

        if (!scan_string (scanner, value, &has_nul, path, "string"))
          return FALSE;
        if (has_nul)
          return scanner_invalid (scanner, path, "string contains a NUL byte");
        return TRUE;
      }
    case 't':
      return scan_literal (scanner, "true");
    case 'f':
      return scan_literal (scanner, "false");
    case 'n':
      return scan_literal (scanner, "null");
    default:
      if (c == '-' || (c >= '0' && c <= '9'))
        return scan_number (scanner);
      {
        g_autofree char *shown = describe_byte (c);

        return scanner_syntax (scanner, "expected a value, found %s", shown);
      }
    }
}

/* Pass 1 over the whole text. */
gboolean
sbx_json_scan_text (const char  *text,
                    gsize        len,
                    GError     **error)
{
  g_autoptr(GArray) frames = g_array_new (FALSE, TRUE, sizeof (Frame));
  Scanner scanner = { (const guchar *) text, len, 0, frames, error };

  g_array_set_clear_func (frames, frame_clear);
  skip_whitespace (&scanner);
  if (scanner.pos == len)
    return scanner_syntax (&scanner, "the text is empty (expected a profile object)");
  if (!scan_value (&scanner, 1))
    return FALSE;
  skip_whitespace (&scanner);
  if (scanner.pos != len)
    {
      g_autofree char *shown = describe_byte (peek (&scanner));

      return scanner_syntax (&scanner, "unexpected %s after the profile object", shown);
    }
  return TRUE;
}
