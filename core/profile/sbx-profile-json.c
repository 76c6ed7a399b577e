/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sbx-profile-private.h"
#include "sbx-profile-config-private.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx-profile-default-table.h"
#include "sbx-profile-json-scan-private.h"
#include "sbx-cleanup.h"

/*
 * Profiles as JSON (format: docs/profile-format.md).
 *
 * Loading happens in three passes, each failing closed:
 *
 *  1. A strict RFC 8259 scanner (sbx-profile-json-scan.c) walks the raw text once.  It exists
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
        g_autofree char *escaped = sbx_json_quote_text (l->data);

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
  g_autofree char *path = sbx_json_member_path (parent, member);
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
    g_autofree char *escaped = sbx_json_quote_text (text);

    return json_invalid (error, path, "expected %s, got \"%s\"", expected, escaped);
  }
}

static const char * const access_words[] = { "deny", "gated", "allow", NULL };
static const char * const home_words[] = { "isolated", "real", NULL };
static const char * const isolation_words[] = { "sandboxed", "unconfined", NULL };
/* indexed by SbxDeniedPaths */
static const char * const denied_paths_words[] = { "permission-denied", "not-found", NULL };
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

/* The string member "path" of the entry at @path (required), or NULL with
 * @error naming it. */
static const char *
get_path_member (JsonObject  *entry,
                 const char  *path,
                 GError     **error)
{
  g_autofree char *member = sbx_json_member_path (path, "path");
  JsonNode *node = json_object_get_member (entry, "path");

  if (node == NULL)
    {
      json_invalid (error, path, "missing member \"path\"");
      return NULL;
    }
  if (!node_is (node, G_TYPE_STRING))
    {
      json_invalid (error, member, "expected a string, got %s", describe_node (node));
      return NULL;
    }
  return json_node_get_string (node);
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
  g_autofree char *path = sbx_json_member_path (parent, member);
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
  g_autofree char *path = sbx_json_member_path (parent, "memory");
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
      g_autofree char *escaped = sbx_json_quote_text (text);

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
    "ack-unconfined", "unix-sockets", "host-sockets", "denied-paths", "roots", "limits", NULL,
  };
  static const char * const workspace_members[] = { "root", "read", "write", NULL };
  static const char * const host_members[] = { "read", "write", NULL };
  static const char * const root_entry_members[] = { "path", "read", "write", NULL };
  static const char * const host_socket_members[] = { "path", "access", NULL };
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

  /* "denied-paths": "permission-denied" (absent: the same) | "not-found" */
  {
    int denied_paths = SBX_DENIED_PATHS_PERMISSION_DENIED;

    if (!get_word (object, "(root)", "denied-paths", denied_paths_words,
                   "\"permission-denied\" or \"not-found\"", &denied_paths, error))
      return NULL;
    sbx_profile_config_set_denied_paths (config, (SbxDeniedPaths) denied_paths);
  }

  /* "host-sockets": [path | "$NAME" (the caller's variable, set) |
   * { "path": path | "$NAME", "access": "allow" | "gated" }, ...];
   * validation refuses relative or unclean paths */
  node = json_object_get_member (object, "host-sockets");
  if (node != NULL && !JSON_NODE_HOLDS_ARRAY (node))
    {
      json_invalid (error, "host-sockets", "expected an array, got %s", describe_node (node));
      return NULL;
    }
  for (guint i = 0; node != NULL && i < json_array_get_length (json_node_get_array (node)); i++)
    {
      g_autofree char *path = sbx_json_element_path ("host-sockets", i);
      JsonNode *element = json_array_get_element (json_node_get_array (node), i);
      g_autofree char *value_path = NULL;
      SbxAccess access = SBX_ACCESS_ALLOW;
      const char *value = NULL;
      const char *expanded;

      if (JSON_NODE_HOLDS_OBJECT (element))
        {
          JsonObject *entry = json_node_get_object (element);

          value_path = sbx_json_member_path (path, "path");
          if (!check_members (entry, path, host_socket_members, error)
              || !get_access (entry, path, "access", &access, error))
            return NULL;
          if (access == SBX_ACCESS_DENY)
            {
              g_autofree char *access_path = sbx_json_member_path (path, "access");

              json_invalid (error, access_path, "\"deny\" names nothing: a host socket not listed is "
                                                "unreachable (use \"allow\" or \"gated\")");
              return NULL;
            }
          value = get_path_member (entry, path, error);
          if (value == NULL)
            return NULL;
        }
      else if (node_is (element, G_TYPE_STRING))
        value = json_node_get_string (element);
      else
        {
          json_invalid (error, path, "expected a string or an object, got %s", describe_node (element));
          return NULL;
        }
      expanded = value[0] == '$' ? g_getenv (value + 1) : value;
      if (expanded == NULL || (value[0] == '$' && expanded[0] == '\0'))
        {
          json_invalid (error, value_path != NULL ? value_path : path, "%s is not set in the environment", value);
          return NULL;
        }
      sbx_profile_config_add_host_socket_access (config, expanded, access);
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
          g_autofree char *path = sbx_json_element_path ("roots", i);
          JsonObject *entry = expect_object (json_array_get_element (roots, i), path, error);
          const char *root_path;
          SbxAccess read, write;

          if (entry == NULL || !get_read_write (entry, path, root_entry_members, &read, &write, error))
            return NULL;
          root_path = get_path_member (entry, path, error);
          if (root_path == NULL)
            return NULL;
          /* Relative paths stay relative: validation refuses them. */
          sbx_profile_config_add_root (config, root_path, read, write);
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
  if (!sbx_json_scan_text (json, len, error))
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
  sbx_autofd int fd = -1;

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
  sbx_clear_fd (&fd);
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
  /* Built from constants generated at build time from
   * data/profiles/default.json (core/profile/gen-default-profile.py), not by
   * parsing the text here: the same settings profile_from_tree() would read
   * from it, in the same order of run-time steps (the workspace, then
   * "memory": "auto"), then the same validation. */
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autofree char *workspace_root = NULL;
  guint64 memory = sbx_default_profile_table.memory;

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  workspace_root = absolute_base (workspace, error);
  if (workspace_root == NULL)
    return NULL;
  sbx_profile_config_set_workspace (config, workspace_root, sbx_default_profile_table.workspace_read,
                                    sbx_default_profile_table.workspace_write);
  sbx_profile_config_set_host (config, sbx_default_profile_table.host_read, sbx_default_profile_table.host_write);
  sbx_profile_config_set_network (config, sbx_default_profile_table.network);
  sbx_profile_config_set_command (config, sbx_default_profile_table.command);
  sbx_profile_config_set_home (config, sbx_default_profile_table.home);
  sbx_profile_config_set_isolation (config, sbx_default_profile_table.isolation);
  if (sbx_default_profile_table.ack_unconfined)
    sbx_profile_config_set_ack_unconfined (config, TRUE);
  sbx_profile_config_set_unix_sockets (config, sbx_default_profile_table.unix_sockets);
  sbx_profile_config_set_denied_paths (config, sbx_default_profile_table.denied_paths);
  for (gsize i = 0; sbx_default_profile_roots[i].path != NULL; i++)
    sbx_profile_config_add_root (config, sbx_default_profile_roots[i].path, sbx_default_profile_roots[i].read,
                                 sbx_default_profile_roots[i].write);
  if (sbx_default_profile_table.memory_auto && !sbx_profile_auto_memory_limit (&memory, error))
    return NULL;
  sbx_profile_config_set_limits (config, sbx_default_profile_table.processes, memory,
                                 sbx_default_profile_table.open_files);
  return sbx_profile_new_with_names (config, SBX_PROFILE_NAMES_JSON, error);
}
