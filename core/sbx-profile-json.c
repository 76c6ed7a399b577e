/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sbx-profile-private.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx-profiles-resources.h"

/*
 * Profiles as JSON (format: docs/profile-format.md).
 *
 * Loading happens in three passes, each failing closed:
 *
 *  1. A strict RFC 8259 scanner (below) walks the raw text once.  It exists
 *     because json-glib 1.6 is lenient where a security policy must not be:
 *     it keeps the last of two equal member names, truncates strings at an
 *     escaped NUL, accepts single quotes, wraps integers that overflow and
 *     recurses without a depth limit.  The scanner refuses all of that, and
 *     it knows the member path at every byte, so its messages start with
 *     it.  Syntax errors are %SBX_PROFILE_ERROR_PARSE ("roots[1]: line 7,
 *     column 3: expected ',' or '}'"); well-formed text that cannot be a
 *     profile (duplicate member, NUL, invalid UTF-8, integer out of range)
 *     is %SBX_PROFILE_ERROR_INVALID.
 *  2. json-glib builds the tree from the text the scanner accepted.
 *  3. The tree is mapped onto an SbxProfileConfig, refusing unknown members,
 *     wrong types and bad words, and validated with JSON member paths as
 *     field names (sbx_profile_new_with_names()).
 */

/* Larger texts are refused before parsing. */
#define MAX_TEXT_SIZE (1024 * 1024)
/* A profile is 4 levels deep; anything much deeper is not a profile. */
#define MAX_DEPTH 32

/* ------------------------------------------------------------------------- */
/* Member paths */

/* Text for a message inside double quotes: valid UTF-8, with '"', '\\' and
 * control characters escaped. */
static char *
quote_text (const char *text)
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
      g_autofree char *quoted = quote_text (name);

      g_string_append_printf (path, "[\"%s\"]", quoted);
    }
}

static char *
member_path (const char *parent,
             const char *name)
{
  GString *path = g_string_new (g_str_equal (parent, "(root)") ? "" : parent);

  append_member (path, name);
  return g_string_free (path, FALSE);
}

static char *
element_path (const char *parent,
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
          g_autofree char *escaped = quote_text (name->str);

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
static gboolean
scan_text (const char  *text,
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

/* ------------------------------------------------------------------------- */
/* Pass 3: the tree onto a config */

static gboolean json_invalid (GError    **error,
                              const char *path,
                              const char *format,
                              ...) G_GNUC_PRINTF (3, 4);

static gboolean
json_invalid (GError    **error,
              const char *path,
              const char *format,
              ...)
{
  g_autofree char *detail = NULL;
  va_list args;

  va_start (args, format);
  detail = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_INVALID, "%s: %s", path, detail);
  return FALSE;
}

static const char *
describe_node (JsonNode *node)
{
  switch (json_node_get_node_type (node))
    {
    case JSON_NODE_OBJECT:
      return "an object";
    case JSON_NODE_ARRAY:
      return "an array";
    case JSON_NODE_NULL:
      return "null";
    case JSON_NODE_VALUE:
    default:
      break;
    }
  switch (json_node_get_value_type (node))
    {
    case G_TYPE_STRING:
      return "a string";
    case G_TYPE_INT64:
      return "an integer";
    case G_TYPE_DOUBLE:
      return "a number with a fraction or exponent";
    case G_TYPE_BOOLEAN:
      return "a boolean";
    default:
      return "a value";
    }
}

static gboolean
node_is (JsonNode *node,
         GType     value_type)
{
  return JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == value_type;
}

static JsonObject *
expect_object (JsonNode    *node,
               const char  *path,
               GError     **error)
{
  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      json_invalid (error, path, "expected an object, got %s", describe_node (node));
      return NULL;
    }
  return json_node_get_object (node);
}

/* Refuses the first member (in document order) not in @allowed. */
static gboolean
check_members (JsonObject         *object,
               const char         *path,
               const char * const *allowed,
               GError            **error)
{
  g_autoptr(GList) members = json_object_get_members (object);

  for (GList *l = members; l != NULL; l = l->next)
    if (!g_strv_contains (allowed, l->data))
      {
        g_autofree char *escaped = quote_text (l->data);

        return json_invalid (error, path, "unknown member \"%s\"", escaped);
      }
  return TRUE;
}

/* Looks up a string member that takes one of @words (in enum order); an
 * absent member leaves *@out alone. */
static gboolean
get_word (JsonObject         *object,
          const char         *parent,
          const char         *member,
          const char * const *words,
          const char         *expected,
          int                *out,
          GError            **error)
{
  g_autofree char *path = member_path (parent, member);
  JsonNode *node = json_object_get_member (object, member);
  const char *text;

  if (node == NULL)
    return TRUE;
  if (!node_is (node, G_TYPE_STRING))
    return json_invalid (error, path, "expected a string (%s), got %s", expected, describe_node (node));
  text = json_node_get_string (node);
  for (int i = 0; words[i] != NULL; i++)
    if (g_str_equal (text, words[i]))
      {
        *out = i;
        return TRUE;
      }
  {
    g_autofree char *escaped = quote_text (text);

    return json_invalid (error, path, "expected %s, got \"%s\"", expected, escaped);
  }
}

static const char * const access_words[] = { "deny", "gated", "allow", NULL };
static const char * const home_words[] = { "isolated", "real", NULL };
static const char * const isolation_words[] = { "sandboxed", "unconfined", NULL };
#define ACCESS_EXPECTED "\"deny\", \"gated\" or \"allow\""

static gboolean
get_access (JsonObject  *object,
            const char  *parent,
            const char  *member,
            SbxAccess   *out,
            GError     **error)
{
  int value = (int) *out;

  if (!get_word (object, parent, member, access_words, ACCESS_EXPECTED, &value, error))
    return FALSE;
  *out = (SbxAccess) value;
  return TRUE;
}

/* Reads a read/write pair (absent = deny) after checking the members. */
static gboolean
get_read_write (JsonObject         *object,
                const char         *path,
                const char * const *allowed,
                SbxAccess          *read,
                SbxAccess          *write,
                GError            **error)
{
  *read = SBX_ACCESS_DENY;
  *write = SBX_ACCESS_DENY;
  return check_members (object, path, allowed, error)
         && get_access (object, path, "read", read, error)
         && get_access (object, path, "write", write, error);
}

/* "512M", "4G", "1024": digits and an optional K/M/G/T (powers of 1024). */
static gboolean
parse_size (const char *text,
            guint64    *out)
{
  guint64 value = 0;
  guint shift = 0;
  const char *p = text;

  if (!g_ascii_isdigit (*p))
    return FALSE;
  for (; g_ascii_isdigit (*p); p++)
    {
      guint digit = (guint) (*p - '0');

      if (value > (SBX_PROFILE_LIMIT_MAX - digit) / 10)
        return FALSE;
      value = value * 10 + digit;
    }
  switch (g_ascii_toupper (*p))
    {
    case '\0':
      break;
    case 'K':
      shift = 10;
      break;
    case 'M':
      shift = 20;
      break;
    case 'G':
      shift = 30;
      break;
    case 'T':
      shift = 40;
      break;
    default:
      return FALSE;
    }
  if (*p != '\0' && p[1] != '\0')
    return FALSE;
  if (value > (SBX_PROFILE_LIMIT_MAX >> shift))
    return FALSE;
  *out = value << shift;
  return TRUE;
}

static gboolean
get_count (JsonObject  *object,
           const char  *parent,
           const char  *member,
           guint64     *out,
           GError     **error)
{
  g_autofree char *path = member_path (parent, member);
  JsonNode *node = json_object_get_member (object, member);
  gint64 value;

  if (node == NULL)
    return TRUE;
  if (!node_is (node, G_TYPE_INT64))
    return json_invalid (error, path, "expected a non-negative integer (0 = no limit), got %s",
                         describe_node (node));
  value = json_node_get_int (node);
  if (value < 0)
    return json_invalid (error, path, "expected a non-negative integer (0 = no limit), got %" G_GINT64_FORMAT,
                         value);
  *out = (guint64) value;
  return TRUE;
}

static gboolean
get_memory (JsonObject  *object,
            const char  *parent,
            guint64     *out,
            GError     **error)
{
  g_autofree char *path = member_path (parent, "memory");
  JsonNode *node = json_object_get_member (object, "memory");
  const char *text;

  if (node == NULL || node_is (node, G_TYPE_INT64))
    return get_count (object, parent, "memory", out, error);
  if (!node_is (node, G_TYPE_STRING))
    return json_invalid (error, path,
                         "expected bytes as an integer or a string (\"512M\", \"4G\", \"auto\"), got %s",
                         describe_node (node));
  text = json_node_get_string (node);
  if (g_str_equal (text, "auto"))
    return sbx_profile_auto_memory_limit (out, error);
  if (!parse_size (text, out))
    {
      g_autofree char *escaped = quote_text (text);

      return json_invalid (error, path,
                           "expected a size such as \"512M\" or \"4G\" (K, M, G, T are powers of 1024; "
                           "at most %" G_GUINT64_FORMAT " bytes) or \"auto\", got \"%s\"",
                           SBX_PROFILE_LIMIT_MAX, escaped);
    }
  return TRUE;
}

/*
 * The directory a relative or absent workspace.root is resolved against.
 * Not g_get_current_dir(): it answers "/" when getcwd() fails (say, the
 * directory was removed), which would silently make "/" the workspace.
 */
static char *
absolute_base (const char  *base_dir,
               GError     **error)
{
  g_autofree char *cwd = NULL;
  gsize size = 256;

  if (base_dir != NULL && g_path_is_absolute (base_dir))
    return g_strdup (base_dir);
  for (;;)
    {
      cwd = g_malloc (size);
      if (getcwd (cwd, size) != NULL)
        break;
      if (errno != ERANGE || size > 1024 * 1024)
        {
          int saved_errno = errno;

          json_invalid (error, "workspace.root", "cannot resolve against the current directory: getcwd: %s",
                        g_strerror (saved_errno));
          return NULL;
        }
      g_clear_pointer (&cwd, g_free);
      size *= 2;
    }
  if (base_dir == NULL)
    return g_steal_pointer (&cwd);
  return g_build_filename (cwd, base_dir, NULL);
}

static SbxProfile *
profile_from_tree (JsonNode    *root,
                   const char  *base_dir,
                   GError     **error)
{
  static const char * const root_members[] = {
    "version", "workspace", "host", "network", "command", "home", "isolation",
    "ack-unconfined", "unix-sockets", "roots", "limits", NULL,
  };
  static const char * const workspace_members[] = { "root", "read", "write", NULL };
  static const char * const host_members[] = { "read", "write", NULL };
  static const char * const root_entry_members[] = { "path", "read", "write", NULL };
  static const char * const limit_members[] = { "processes", "memory", "open-files", NULL };
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autofree char *base = NULL;
  g_autofree char *workspace_root = NULL;
  SbxAccess workspace_read = SBX_ACCESS_DENY, workspace_write = SBX_ACCESS_DENY;
  SbxAccess host_read = SBX_ACCESS_DENY, host_write = SBX_ACCESS_DENY;
  SbxAccess network = SBX_ACCESS_DENY, command = SBX_ACCESS_DENY;
  int home = SBX_HOME_ISOLATED, isolation = SBX_ISOLATION_SANDBOXED;
  guint64 processes = 0, memory = 0, open_files = 0;
  JsonObject *object;
  JsonNode *node;

  object = expect_object (root, "(root)", error);
  if (object == NULL)
    return NULL;

  /* The version first: a newer file's members would only look unknown. */
  node = json_object_get_member (object, "version");
  if (node == NULL)
    {
      json_invalid (error, "(root)", "missing member \"version\" (this sbx reads version 1)");
      return NULL;
    }
  if (!node_is (node, G_TYPE_INT64))
    {
      json_invalid (error, "version", "expected an integer, got %s", describe_node (node));
      return NULL;
    }
  if (json_node_get_int (node) != 1)
    {
      json_invalid (error, "version", "unsupported version %" G_GINT64_FORMAT " (this sbx reads version 1)",
                    json_node_get_int (node));
      return NULL;
    }
  if (!check_members (object, "(root)", root_members, error))
    return NULL;

  /* workspace */
  node = json_object_get_member (object, "workspace");
  if (node != NULL)
    {
      JsonObject *workspace = expect_object (node, "workspace", error);
      JsonNode *root_node;

      if (workspace == NULL
          || !get_read_write (workspace, "workspace", workspace_members, &workspace_read, &workspace_write, error))
        return NULL;
      root_node = json_object_get_member (workspace, "root");
      if (root_node != NULL)
        {
          const char *text;

          if (!node_is (root_node, G_TYPE_STRING))
            {
              json_invalid (error, "workspace.root", "expected a string, got %s", describe_node (root_node));
              return NULL;
            }
          text = json_node_get_string (root_node);
          if (text[0] == '\0')
            workspace_root = g_strdup ("");   /* validation names it */
          else if (g_path_is_absolute (text))
            workspace_root = g_strdup (text);
          else
            {
              base = absolute_base (base_dir, error);
              if (base == NULL)
                return NULL;
              workspace_root = g_build_filename (base, text, NULL);
            }
        }
    }
  if (workspace_root == NULL)
    {
      workspace_root = absolute_base (base_dir, error);
      if (workspace_root == NULL)
        return NULL;
    }
  sbx_profile_config_set_workspace (config, workspace_root, workspace_read, workspace_write);

  /* host */
  node = json_object_get_member (object, "host");
  if (node != NULL)
    {
      JsonObject *host = expect_object (node, "host", error);

      if (host == NULL || !get_read_write (host, "host", host_members, &host_read, &host_write, error))
        return NULL;
    }
  sbx_profile_config_set_host (config, host_read, host_write);

  if (!get_access (object, "(root)", "network", &network, error)
      || !get_access (object, "(root)", "command", &command, error)
      || !get_word (object, "(root)", "home", home_words, "\"isolated\" or \"real\"", &home, error)
      || !get_word (object, "(root)", "isolation", isolation_words, "\"sandboxed\" or \"unconfined\"",
                    &isolation, error))
    return NULL;
  sbx_profile_config_set_network (config, network);
  sbx_profile_config_set_command (config, command);
  sbx_profile_config_set_home (config, (SbxHome) home);
  sbx_profile_config_set_isolation (config, (SbxIsolation) isolation);

  node = json_object_get_member (object, "ack-unconfined");
  if (node != NULL)
    {
      if (!node_is (node, G_TYPE_BOOLEAN))
        {
          json_invalid (error, "ack-unconfined", "expected true or false, got %s", describe_node (node));
          return NULL;
        }
      sbx_profile_config_set_ack_unconfined (config, json_node_get_boolean (node));
    }

  /* "unix-sockets": "allow" | "deny" (absent: deny).  "gated" has no
   * grant class behind it and is refused rather than widened or narrowed. */
  {
    static const char * const unix_words[] = { "deny", "allow", NULL };
    int unix_sockets = 0;

    if (!get_word (object, "(root)", "unix-sockets", unix_words, "\"deny\" or \"allow\"", &unix_sockets, error))
      return NULL;
    sbx_profile_config_set_unix_sockets (config, unix_sockets == 1);
  }

  /* roots */
  node = json_object_get_member (object, "roots");
  if (node != NULL)
    {
      JsonArray *roots;

      if (!JSON_NODE_HOLDS_ARRAY (node))
        {
          json_invalid (error, "roots", "expected an array, got %s", describe_node (node));
          return NULL;
        }
      roots = json_node_get_array (node);
      for (guint i = 0; i < json_array_get_length (roots); i++)
        {
          g_autofree char *path = element_path ("roots", i);
          g_autofree char *path_member = member_path (path, "path");
          JsonObject *entry = expect_object (json_array_get_element (roots, i), path, error);
          SbxAccess read, write;
          JsonNode *path_node;

          if (entry == NULL || !get_read_write (entry, path, root_entry_members, &read, &write, error))
            return NULL;
          path_node = json_object_get_member (entry, "path");
          if (path_node == NULL)
            {
              json_invalid (error, path, "missing member \"path\"");
              return NULL;
            }
          if (!node_is (path_node, G_TYPE_STRING))
            {
              json_invalid (error, path_member, "expected a string, got %s", describe_node (path_node));
              return NULL;
            }
          /* Relative paths stay relative: validation refuses them. */
          sbx_profile_config_add_root (config, json_node_get_string (path_node), read, write);
        }
    }

  /* limits */
  node = json_object_get_member (object, "limits");
  if (node != NULL)
    {
      JsonObject *limits = expect_object (node, "limits", error);

      if (limits == NULL
          || !check_members (limits, "limits", limit_members, error)
          || !get_count (limits, "limits", "processes", &processes, error)
          || !get_memory (limits, "limits", &memory, error)
          || !get_count (limits, "limits", "open-files", &open_files, error))
        return NULL;
    }
  sbx_profile_config_set_limits (config, processes, memory, open_files);

  return sbx_profile_new_with_names (config, SBX_PROFILE_NAMES_JSON, error);
}

/* ------------------------------------------------------------------------- */
/* Public entry points */

/**
 * sbx_profile_new_from_json:
 * @json: (array length=length) (element-type guint8): the profile text (UTF-8 JSON)
 * @length: length of @json in bytes, or -1 when it is NUL-terminated
 * @base_dir: (type filename) (nullable): directory a relative or absent
 *   `workspace.root` is resolved against; %NULL means the current directory
 * @error: return location for a [error@Sbx.ProfileError]
 *
 * Loads a profile from JSON text (format: docs/profile-format.md).
 *
 * `"version": 1` is required.  Every other member is optional and defaults
 * to the safest value (access "deny", home "isolated", isolation
 * "sandboxed", no roots, no limits); an absent `workspace.root` is
 * @base_dir itself.  Additional roots must be absolute.
 *
 * Parsing fails closed.  Every message starts with the JSON member path at
 * fault ("(root)" for the top level): malformed JSON, text over 1 MiB or
 * nested deeper than 32 levels give %SBX_PROFILE_ERROR_PARSE
 * ("workspace: line 3, column 12: expected ',' or '}', found '\"'");
 * unknown members, wrong types, bad words, NUL bytes in strings or member
 * names, invalid UTF-8, duplicate member names, integers beyond 64 bits,
 * repeated roots (same canonical path, even with equal access) and every
 * validation rule of [ctor@Sbx.Profile.new] give %SBX_PROFILE_ERROR_INVALID
 * (`roots[2].read: expected "deny", "gated" or "allow", got "alow"`,
 * `(root): unknown member "netwrok"`).
 *
 * Returns: (transfer full) (nullable): the profile, or %NULL with @error set
 *
 * Since: 0.1
 */
SbxProfile *
sbx_profile_new_from_json (const char  *json,
                           gssize       length,
                           const char  *base_dir,
                           GError     **error)
{
  g_autoptr(JsonParser) parser = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autofree char *copy = NULL;
  gsize len;

  g_return_val_if_fail (json != NULL || length == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  len = length < 0 ? strlen (json) : (gsize) length;
  if (len > MAX_TEXT_SIZE)
    {
      g_set_error (error, SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_PARSE,
                   "(root): the profile text is %" G_GSIZE_FORMAT " bytes, more than the limit of %u bytes",
                   len, MAX_TEXT_SIZE);
      return NULL;
    }
  /* A UTF-8 byte order mark, as some editors write, is not content. */
  if (len >= 3 && memcmp (json, "\xEF\xBB\xBF", 3) == 0)
    {
      json += 3;
      len -= 3;
    }
  if (!scan_text (json, len, error))
    return NULL;

  /* The scanner refused NUL bytes, so a NUL-terminated copy is the text. */
  copy = g_malloc (len + 1);
  memcpy (copy, json, len);
  copy[len] = '\0';
  parser = json_parser_new_immutable ();
  if (!json_parser_load_from_data (parser, copy, (gssize) len, &local_error))
    {
      g_set_error (error, SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_PARSE, "(root): %s", local_error->message);
      return NULL;
    }
  return profile_from_tree (json_parser_get_root (parser), base_dir, error);
}

/**
 * sbx_profile_new_from_file:
 * @path: (type filename): a profile file
 * @base_dir: (type filename) (nullable): directory a relative or absent
 *   `workspace.root` is resolved against; %NULL means the current directory
 *   (not the file's directory)
 * @error: return location for a [error@Sbx.ProfileError] or a
 *   [error@GLib.FileError]
 *
 * Reads @path (at most 1 MiB) and loads it as
 * [ctor@Sbx.Profile.new_from_json] does.  A file that cannot be read gives
 * a %G_FILE_ERROR naming it; problems with its content give
 * [error@Sbx.ProfileError] messages that start with the member path (they
 * do not repeat the file name).
 *
 * Returns: (transfer full) (nullable): the profile, or %NULL with @error set
 *
 * Since: 0.1
 */
SbxProfile *
sbx_profile_new_from_file (const char  *path,
                           const char  *base_dir,
                           GError     **error)
{
  g_autoptr(GByteArray) data = g_byte_array_new ();
  g_autofree char *shown = NULL;
  int fd;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  shown = g_utf8_make_valid (path, -1);
  fd = g_open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY, 0);
  if (fd < 0)
    {
      int saved_errno = errno;

      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved_errno),
                   "open %s: %s", shown, g_strerror (saved_errno));
      return NULL;
    }
  for (;;)
    {
      guint8 buffer[16384];
      gssize n = read (fd, buffer, sizeof buffer);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int saved_errno = errno;

          close (fd);
          g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (saved_errno),
                       "read %s: %s", shown, g_strerror (saved_errno));
          return NULL;
        }
      if (n == 0)
        break;
      g_byte_array_append (data, buffer, (guint) n);
      if (data->len > MAX_TEXT_SIZE)
        break;   /* enough to refuse it */
    }
  close (fd);
  return sbx_profile_new_from_json ((const char *) data->data, data->len, base_dir, error);
}

/**
 * sbx_profile_new_default:
 * @workspace: (type filename) (nullable): the workspace directory; %NULL
 *   means the current directory
 * @error: return location for a [error@Sbx.ProfileError]
 *
 * Loads the built-in default profile (data/profiles/default.json, compiled
 * into the library): @workspace readable and writable, the rest of the
 * host neither readable nor writable (the backend's fixed runtime closure
 * still lets ordinary programs start), no network, commands allowed, an
 * isolated HOME, sandboxed, and the limits: at most 1024 processes and
 * memory at most half the physical RAM, capped at 4 GiB (computed when
 * loaded).
 *
 * Returns: (transfer full) (nullable): the profile, or %NULL with @error set
 *   (for example when @workspace is not a directory)
 *
 * Since: 0.1
 */
SbxProfile *
sbx_profile_new_default (const char  *workspace,
                         GError     **error)
{
  g_autoptr(GBytes) bytes = NULL;
  gconstpointer data;
  gsize size;

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  bytes = g_resource_lookup_data (sbx_profiles_get_resource (), "/org/sbx/profiles/default.json",
                                  G_RESOURCE_LOOKUP_FLAGS_NONE, NULL);
  /* The resource is linked into this library; it cannot be missing. */
  g_return_val_if_fail (bytes != NULL, NULL);
  data = g_bytes_get_data (bytes, &size);
  return sbx_profile_new_from_json (data, (gssize) size, workspace, error);
}

/* ------------------------------------------------------------------------- */
/* Writing */

static void
add_access (JsonBuilder *builder,
            const char  *member,
            SbxAccess    access)
{
  json_builder_set_member_name (builder, member);
  json_builder_add_string_value (builder, sbx_access_to_string (access));
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
  g_autoptr(JsonBuilder) builder = json_builder_new_immutable ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GString) text = NULL;
  guint64 processes, memory, open_files;
  guint n_roots;
  const SbxProfileRoot *roots;

  g_return_val_if_fail (self != NULL, NULL);

  roots = sbx_profile_get_roots (self, &n_roots);
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "version");
  json_builder_add_int_value (builder, 1);

  json_builder_set_member_name (builder, "workspace");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "root");
  json_builder_add_string_value (builder, sbx_profile_get_workspace_root (self));
  add_access (builder, "read", sbx_profile_get_workspace_read (self));
  add_access (builder, "write", sbx_profile_get_workspace_write (self));
  json_builder_end_object (builder);

  json_builder_set_member_name (builder, "host");
  json_builder_begin_object (builder);
  add_access (builder, "read", sbx_profile_get_host_read (self));
  add_access (builder, "write", sbx_profile_get_host_write (self));
  json_builder_end_object (builder);

  add_access (builder, "network", sbx_profile_get_network (self));
  add_access (builder, "command", sbx_profile_get_command (self));
  json_builder_set_member_name (builder, "home");
  json_builder_add_string_value (builder, home_words[sbx_profile_get_home (self)]);
  json_builder_set_member_name (builder, "isolation");
  json_builder_add_string_value (builder, isolation_words[sbx_profile_get_isolation (self)]);
  if (sbx_profile_get_ack_unconfined (self))
    {
      json_builder_set_member_name (builder, "ack-unconfined");
      json_builder_add_boolean_value (builder, TRUE);
    }
  if (sbx_profile_get_unix_sockets (self))
    {
      json_builder_set_member_name (builder, "unix-sockets");
      json_builder_add_string_value (builder, "allow");
    }

  json_builder_set_member_name (builder, "roots");
  json_builder_begin_array (builder);
  for (guint i = 0; i < n_roots; i++)
    {
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "path");
      json_builder_add_string_value (builder, roots[i].path);
      add_access (builder, "read", roots[i].read);
      add_access (builder, "write", roots[i].write);
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);

  processes = sbx_profile_get_max_processes (self);
  memory = sbx_profile_get_max_memory (self);
  open_files = sbx_profile_get_max_open_files (self);
  if (processes != 0 || memory != 0 || open_files != 0)
    {
      json_builder_set_member_name (builder, "limits");
      json_builder_begin_object (builder);
      /* Validation caps every limit at G_MAXINT64, so the casts are exact. */
      if (processes != 0)
        {
          json_builder_set_member_name (builder, "processes");
          json_builder_add_int_value (builder, (gint64) processes);
        }
      if (memory != 0)
        {
          json_builder_set_member_name (builder, "memory");
          json_builder_add_int_value (builder, (gint64) memory);
        }
      if (open_files != 0)
        {
          json_builder_set_member_name (builder, "open-files");
          json_builder_add_int_value (builder, (gint64) open_files);
        }
      json_builder_end_object (builder);
    }
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  json_generator_set_pretty (generator, TRUE);
  json_generator_set_indent (generator, 2);
  text = g_string_new (NULL);
  json_generator_to_gstring (generator, text);
  g_string_append_c (text, '\n');
  return g_string_free (g_steal_pointer (&text), FALSE);
}
