/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Grant tokens, classes and the replay registry.  See sbx-grant-private.h for
 * the token format; sbx-grant-binding.c holds the filesystem identity binding
 * of a grant, and sbx-executor-grants.c the order of the checks that use
 * these pieces when a grant is issued and consumed (tests/test-grant.c
 * proves that order).
 */
#include "sbx-grant-private.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-glib/json-glib.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sbx-grant-error-private.h"
#include "sbx-path-private.h"
#include "sbx-plugin-backend.h"   /* SBX_FS_*: the access axes of a class */

/* ------------------------------------------------------------------------- */
/* Text                                                                       */
/* ------------------------------------------------------------------------- */

gboolean
sbx_grant_text_valid (const char *text)
{
  const char *last;

  if (text == NULL || text[0] == '\0')
    return FALSE;
  if (!g_utf8_validate (text, -1, NULL))
    return FALSE;
  if (g_unichar_isspace (g_utf8_get_char (text)))
    return FALSE;
  last = g_utf8_find_prev_char (text, text + strlen (text));
  if (last != NULL && g_unichar_isspace (g_utf8_get_char (last)))
    return FALSE;
  return TRUE;
}

/* True when @arg needs no quoting for a POSIX shell. */
static gboolean
arg_is_plain (const char *arg)
{
  if (arg[0] == '\0')
    return FALSE;
  for (const char *p = arg; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p) && strchr ("_@%+=:,./-", *p) == NULL)
      return FALSE;
  return TRUE;
}

/**
 * sbx_grant_command_for_argv:
 * @argv: (array zero-terminated=1): a command and its arguments
 *
 * Returns the normalized command string that stands for @argv in a grant:
 * what [method@Sbx.Executor.run] and [method@Sbx.Executor.spawn] bind when their options carry grants, and so what
 * [method@Sbx.Executor.issue_grant] must be given as its command (and, for
 * `command.start.v1`, as its target).
 *
 * The normalization quotes each argument for a POSIX shell and joins them
 * with single spaces: an argument made only of ASCII letters, digits and
 * `_@%+=:,./-` is kept as it is; any other (the empty one included) is
 * wrapped in single quotes, each `'` inside written as `'\''`.  So
 * `{"sh", "-c", "echo hi"}` becomes `sh -c 'echo hi'`.  Two different
 * vectors never give the same string.
 *
 * Returns: (transfer full) (nullable): the command, or %NULL when @argv is
 *   empty, its first element is empty, or an element is not valid UTF-8
 *
 * Since: 0.1
 */
char *
sbx_grant_command_for_argv (const char *const *argv)
{
  g_autoptr(GString) out = NULL;

  if (argv == NULL || argv[0] == NULL || argv[0][0] == '\0')
    return NULL;
  out = g_string_new (NULL);
  for (guint i = 0; argv[i] != NULL; i++)
    {
      if (!g_utf8_validate (argv[i], -1, NULL))
        return NULL;
      if (i > 0)
        g_string_append_c (out, ' ');
      if (arg_is_plain (argv[i]))
        {
          g_string_append (out, argv[i]);
          continue;
        }
      g_string_append_c (out, '\'');
      for (const char *p = argv[i]; *p != '\0'; p++)
        {
          if (*p == '\'')
            g_string_append (out, "'\\''");
          else
            g_string_append_c (out, *p);
        }
      g_string_append_c (out, '\'');
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* ------------------------------------------------------------------------- */
/* Payload                                                                    */
/* ------------------------------------------------------------------------- */

void
sbx_grant_payload_clear (SbxGrantPayload *payload)
{
  g_clear_pointer (&payload->execution_id, g_free);
  g_clear_pointer (&payload->command, g_free);
  g_clear_pointer (&payload->cwd, g_free);
  g_clear_pointer (&payload->profile_fingerprint, g_free);
  g_clear_pointer (&payload->route_fingerprint, g_free);
  g_clear_pointer (&payload->grant_class, g_free);
  g_clear_pointer (&payload->target, g_free);
  g_clear_pointer (&payload->binding, sbx_grant_binding_free);
  payload->guarantee_bits = 0;
  payload->expiry_ms = 0;
  memset (payload->nonce, 0, sizeof payload->nonce);
}

static void
add_string_member (JsonBuilder *builder,
                   const char  *name,
                   const char  *value)
{
  json_builder_set_member_name (builder, name);
  json_builder_add_string_value (builder, value != NULL ? value : "");
}

char *
sbx_grant_payload_serialize (const SbxGrantPayload *payload)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;

  json_builder_begin_object (builder);
  add_string_member (builder, "ExecutionID", payload->execution_id);
  add_string_member (builder, "Command", payload->command);
  add_string_member (builder, "WorkingDirectory", payload->cwd);
  add_string_member (builder, "ProfileFingerprint", payload->profile_fingerprint);
  add_string_member (builder, "RouteFingerprint", payload->route_fingerprint);
  json_builder_set_member_name (builder, "GuaranteeBits");
  json_builder_add_int_value (builder, (gint64) payload->guarantee_bits);
  add_string_member (builder, "Class", payload->grant_class);
  add_string_member (builder, "Target", payload->target);
  json_builder_set_member_name (builder, "PathBinding");
  if (payload->binding == NULL)
    json_builder_add_null_value (builder);
  else
    {
      json_builder_begin_object (builder);
      add_string_member (builder, "CanonicalPath", payload->binding->canonical_path);
      add_string_member (builder, "ExistingPath", payload->binding->existing_path);
      add_string_member (builder, "Identity", payload->binding->identity);
      json_builder_end_object (builder);
    }
  json_builder_set_member_name (builder, "ExpiryUnixMilli");
  json_builder_add_int_value (builder, payload->expiry_ms);
  json_builder_set_member_name (builder, "Nonce");
  json_builder_begin_array (builder);
  for (guint i = 0; i < SBX_GRANT_NONCE_SIZE; i++)
    json_builder_add_int_value (builder, payload->nonce[i]);
  json_builder_end_array (builder);
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  return json_generator_to_data (generator, NULL);
}

static gboolean
get_string (JsonObject  *object,
            const char  *name,
            char       **out)
{
  JsonNode *node = json_object_get_member (object, name);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return FALSE;
  *out = g_strdup (json_node_get_string (node));
  return TRUE;
}

static gboolean
get_int (JsonObject *object,
         const char *name,
         gint64     *out)
{
  JsonNode *node = json_object_get_member (object, name);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64)
    return FALSE;
  *out = json_node_get_int (node);
  return TRUE;
}

gboolean
sbx_grant_payload_parse (const char       *json,
                         gsize             length,
                         SbxGrantPayload  *out,
                         GError          **error)
{
  g_autoptr(JsonParser) parser = json_parser_new_immutable ();
  g_autoptr(GError) parse_error = NULL;
  g_auto(SbxGrantPayload) p = { 0 };
  g_autofree char *again = NULL;
  JsonNode *root;
  JsonObject *object;
  JsonNode *binding;
  JsonNode *nonce;
  JsonArray *array;
  gint64 bits;

  if (memchr (json, '\0', length) != NULL)
    return sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "payload holds a NUL byte");
  if (!json_parser_load_from_data (parser, json, (gssize) length, &parse_error))
    return sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "payload is not JSON: %s", parse_error->message);
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "payload is not a JSON object");
  object = json_node_get_object (root);
  if (json_object_get_size (object) != 11)
    return sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "payload has %u members, not 11", json_object_get_size (object));
  if (!get_string (object, "ExecutionID", &p.execution_id)
      || !get_string (object, "Command", &p.command)
      || !get_string (object, "WorkingDirectory", &p.cwd)
      || !get_string (object, "ProfileFingerprint", &p.profile_fingerprint)
      || !get_string (object, "RouteFingerprint", &p.route_fingerprint)
      || !get_int (object, "GuaranteeBits", &bits)
      || !get_string (object, "Class", &p.grant_class)
      || !get_string (object, "Target", &p.target)
      || !get_int (object, "ExpiryUnixMilli", &p.expiry_ms))
    return sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "payload member missing or of the wrong type");
  if (bits < 0)
    return sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "GuaranteeBits is negative");
  p.guarantee_bits = (guint64) bits;

  binding = json_object_get_member (object, "PathBinding");
  if (binding == NULL)
    return sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "PathBinding missing");
  if (JSON_NODE_HOLDS_OBJECT (binding))
    {
      JsonObject *b = json_node_get_object (binding);

      p.binding = g_new0 (SbxGrantBinding, 1);
      if (json_object_get_size (b) != 3
          || !get_string (b, "CanonicalPath", &p.binding->canonical_path)
          || !get_string (b, "ExistingPath", &p.binding->existing_path)
          || !get_string (b, "Identity", &p.binding->identity))
        return sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "PathBinding is not {CanonicalPath, ExistingPath, Identity}");
    }
  else if (!JSON_NODE_HOLDS_NULL (binding))
    return sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "PathBinding is neither null nor an object");

  nonce = json_object_get_member (object, "Nonce");
  if (nonce == NULL || !JSON_NODE_HOLDS_ARRAY (nonce))
    return sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "Nonce is not an array");
  array = json_node_get_array (nonce);
  if (json_array_get_length (array) != SBX_GRANT_NONCE_SIZE)
    return sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "Nonce does not hold %d numbers", SBX_GRANT_NONCE_SIZE);
  for (guint i = 0; i < SBX_GRANT_NONCE_SIZE; i++)
    {
      JsonNode *e = json_array_get_element (array, i);
      gint64 v;

      if (!JSON_NODE_HOLDS_VALUE (e) || json_node_get_value_type (e) != G_TYPE_INT64)
        return sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "Nonce[%u] is not an integer", i);
      v = json_node_get_int (e);
      if (v < 0 || v > 255)
        return sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "Nonce[%u] = %" G_GINT64_FORMAT " is not a byte", i, v);
      p.nonce[i] = (guint8) v;
    }

  /* Canonical form only: the bytes must be exactly what this library
   * serializes for the parsed values (member order, no white space, no
   * duplicate member, no string holding a NUL).  Only this library mints
   * payloads, so anything else was not minted by it. */
  again = sbx_grant_payload_serialize (&p);
  if (strlen (again) != length || memcmp (again, json, length) != 0)
    return sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "payload is not in canonical form");

  *out = p;
  memset (&p, 0, sizeof p);
  return TRUE;
}

/* ------------------------------------------------------------------------- */
/* Base64url without padding                                                  */
/* ------------------------------------------------------------------------- */

static const char b64url_alphabet[] =
  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

char *
sbx_grant_b64url_encode (const guint8 *data,
                         gsize         len)
{
  GString *out = g_string_sized_new ((len + 2) / 3 * 4 + 1);
  gsize i = 0;

  for (; i + 3 <= len; i += 3)
    {
      guint32 v = ((guint32) data[i] << 16) | ((guint32) data[i + 1] << 8) | data[i + 2];

      g_string_append_c (out, b64url_alphabet[(v >> 18) & 63]);
      g_string_append_c (out, b64url_alphabet[(v >> 12) & 63]);
      g_string_append_c (out, b64url_alphabet[(v >> 6) & 63]);
      g_string_append_c (out, b64url_alphabet[v & 63]);
    }
  if (len - i == 1)
    {
      guint32 v = (guint32) data[i] << 16;

      g_string_append_c (out, b64url_alphabet[(v >> 18) & 63]);
      g_string_append_c (out, b64url_alphabet[(v >> 12) & 63]);
    }
  else if (len - i == 2)
    {
      guint32 v = ((guint32) data[i] << 16) | ((guint32) data[i + 1] << 8);

      g_string_append_c (out, b64url_alphabet[(v >> 18) & 63]);
      g_string_append_c (out, b64url_alphabet[(v >> 12) & 63]);
      g_string_append_c (out, b64url_alphabet[(v >> 6) & 63]);
    }
  return g_string_free (out, FALSE);
}

static int
b64url_value (char c)
{
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (c == '-')
    return 62;
  if (c == '_')
    return 63;
  return -1;
}

/* Strict: only the url alphabet, no padding, no white space, and the unused
 * low bits of the last character must be zero (one encoding per value). */
guint8 *
sbx_grant_b64url_decode (const char *text,
                         gsize       text_len,
                         gsize      *out_len)
{
  g_autofree guint8 *out = NULL;
  gsize n = 0;
  guint32 acc = 0;
  int bits = 0;

  if (text_len % 4 == 1)
    return NULL;
  out = g_malloc (text_len / 4 * 3 + 3);
  for (gsize i = 0; i < text_len; i++)
    {
      int v = b64url_value (text[i]);

      if (v < 0)
        return NULL;
      acc = (acc << 6) | (guint32) v;
      bits += 6;
      if (bits >= 8)
        {
          bits -= 8;
          out[n++] = (guint8) (acc >> bits);
          acc &= (1u << bits) - 1;
        }
    }
  if (acc != 0)
    return NULL;   /* non-zero padding bits: a second spelling */
  *out_len = n;
  return g_steal_pointer (&out);
}

/* ------------------------------------------------------------------------- */
/* Tokens                                                                     */
/* ------------------------------------------------------------------------- */

static void
compute_mac (const guint8 *key,
             const char   *payload,
             gsize         len,
             guint8        mac[SBX_GRANT_MAC_SIZE])
{
  GHmac *hmac = g_hmac_new (G_CHECKSUM_SHA256, key, SBX_GRANT_KEY_SIZE);
  gsize mac_len = SBX_GRANT_MAC_SIZE;

  g_hmac_update (hmac, (const guchar *) payload, (gssize) len);
  g_hmac_get_digest (hmac, mac, &mac_len);
  g_hmac_unref (hmac);
  g_assert (mac_len == SBX_GRANT_MAC_SIZE);
}

/* Constant time in the contents (the length is public). */
static gboolean
mac_equal (const guint8 *a,
           const guint8 *b,
           gsize         len)
{
  volatile guint8 diff = 0;

  for (gsize i = 0; i < len; i++)
    diff |= a[i] ^ b[i];
  return diff == 0;
}

char *
sbx_grant_token_mint (const guint8          *key,
                      const SbxGrantPayload *payload)
{
  g_autofree char *json = sbx_grant_payload_serialize (payload);
  g_autofree char *payload_b64 = NULL;
  g_autofree char *mac_b64 = NULL;
  guint8 mac[SBX_GRANT_MAC_SIZE];

  compute_mac (key, json, strlen (json), mac);
  payload_b64 = sbx_grant_b64url_encode ((const guint8 *) json, strlen (json));
  mac_b64 = sbx_grant_b64url_encode (mac, sizeof mac);
  explicit_bzero (mac, sizeof mac);
  return g_strconcat (SBX_GRANT_TOKEN_PREFIX, ".", payload_b64, ".", mac_b64, NULL);
}

gboolean
sbx_grant_token_open (const guint8     *key,
                      const char       *token,
                      SbxGrantPayload  *out,
                      GError          **error)
{
  const char *first;
  const char *second;
  gsize len;
  g_autofree guint8 *payload = NULL;
  g_autofree guint8 *mac = NULL;
  gsize payload_len = 0;
  gsize mac_len = 0;
  guint8 expected[SBX_GRANT_MAC_SIZE];
  gboolean equal;

  if (token == NULL)
    return sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "no token");
  len = strnlen (token, SBX_GRANT_TOKEN_MAX + 1);
  if (len > SBX_GRANT_TOKEN_MAX)
    return sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "longer than %d bytes", SBX_GRANT_TOKEN_MAX);
  first = memchr (token, '.', len);
  second = first != NULL ? memchr (first + 1, '.', len - (gsize) (first + 1 - token)) : NULL;
  if (first == NULL || second == NULL
      || memchr (second + 1, '.', len - (gsize) (second + 1 - token)) != NULL)
    return sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "not three dot-separated parts");
  if ((gsize) (first - token) != strlen (SBX_GRANT_TOKEN_PREFIX)
      || memcmp (token, SBX_GRANT_TOKEN_PREFIX, strlen (SBX_GRANT_TOKEN_PREFIX)) != 0)
    return sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "prefix is not “%s”", SBX_GRANT_TOKEN_PREFIX);
  payload = sbx_grant_b64url_decode (first + 1, (gsize) (second - first - 1), &payload_len);
  if (payload == NULL || payload_len == 0)
    return sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "payload is not unpadded base64url");
  mac = sbx_grant_b64url_decode (second + 1, len - (gsize) (second + 1 - token), &mac_len);
  if (mac == NULL)
    return sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "MAC is not unpadded base64url");
  if (mac_len != SBX_GRANT_MAC_SIZE)
    return sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "MAC is %" G_GSIZE_FORMAT " bytes, not %d", mac_len, SBX_GRANT_MAC_SIZE);

  compute_mac (key, (const char *) payload, payload_len, expected);
  equal = mac_equal (expected, mac, SBX_GRANT_MAC_SIZE);
  explicit_bzero (expected, sizeof expected);
  if (!equal)
    {
      g_set_error_literal (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_BAD_MAC,
                           "Grant token MAC mismatch: minted by another executor, or altered");
      return FALSE;
    }
  return sbx_grant_payload_parse ((const char *) payload, payload_len, out, error);
}

char *
sbx_grant_token_id (const char *token)
{
  return g_compute_checksum_for_string (G_CHECKSUM_SHA256, token, -1);
}

/* ------------------------------------------------------------------------- */
/* Classes                                                                    */
/* ------------------------------------------------------------------------- */

static const SbxGrantClassInfo grant_classes[] = {
  { SBX_GRANT_CLASS_COMMAND_START, "command.execute", SBX_GRANT_SHAPE_COMMAND, 0, 0 },
  { SBX_GRANT_CLASS_FILESYSTEM_PATH_READ, "filesystem.read", SBX_GRANT_SHAPE_FS_EXACT,
    SBX_FS_READ | SBX_FS_EXEC, SBX_GUARANTEE_READ_BOUNDARY },
  { SBX_GRANT_CLASS_FILESYSTEM_PATH_WRITE, "filesystem.write", SBX_GRANT_SHAPE_FS_EXACT,
    SBX_FS_WRITE, SBX_GUARANTEE_WRITE_BOUNDARY },
  { SBX_GRANT_CLASS_FILESYSTEM_TREE_READ, "filesystem.read", SBX_GRANT_SHAPE_FS_TREE,
    SBX_FS_READ | SBX_FS_EXEC, SBX_GUARANTEE_READ_BOUNDARY },
  { SBX_GRANT_CLASS_FILESYSTEM_TREE_WRITE, "filesystem.write", SBX_GRANT_SHAPE_FS_TREE,
    SBX_FS_WRITE, SBX_GUARANTEE_WRITE_BOUNDARY },
  { SBX_GRANT_CLASS_FILESYSTEM_HOST_READ, "filesystem.read", SBX_GRANT_SHAPE_FS_HOST,
    SBX_FS_READ | SBX_FS_EXEC, SBX_GUARANTEE_READ_BOUNDARY },
  { SBX_GRANT_CLASS_FILESYSTEM_HOST_WRITE, "filesystem.write", SBX_GRANT_SHAPE_FS_HOST,
    SBX_FS_WRITE, SBX_GUARANTEE_WRITE_BOUNDARY },
  { SBX_GRANT_CLASS_NETWORK_BROAD, "network", SBX_GRANT_SHAPE_NET_BROAD, 0,
    SBX_GUARANTEE_NETWORK_BOUNDARY },
  { SBX_GRANT_CLASS_NETWORK_PROXY_TARGET, "network", SBX_GRANT_SHAPE_NET_PROXY, 0,
    SBX_GUARANTEE_NETWORK_BOUNDARY | SBX_GUARANTEE_TARGET_NETWORK },
  /* Needs no achieved guarantee: it takes the boundaries from its spawn
   * (sbx-executor-grants.c), whatever the executor had. */
  { SBX_GRANT_CLASS_UNIX_CONNECT, "unix.connect", SBX_GRANT_SHAPE_UNIX_SOCKET, 0, 0 },
};

const SbxGrantClassInfo *
sbx_grant_class_lookup (const char *grant_class)
{
  if (grant_class == NULL)
    return NULL;
  for (guint i = 0; i < G_N_ELEMENTS (grant_classes); i++)
    if (strcmp (grant_classes[i].name, grant_class) == 0)
      return &grant_classes[i];
  return NULL;
}

const SbxGrantClassInfo *
sbx_grant_class_nth (guint index)
{
  return index < G_N_ELEMENTS (grant_classes) ? &grant_classes[index] : NULL;
}

/* A decimal port 1..65535 without sign or leading zero; 0 otherwise. */
static guint16
parse_port (const char *text)
{
  guint value = 0;

  if (text[0] == '\0' || text[0] == '0' || strlen (text) > 5)
    return 0;
  for (const char *p = text; *p != '\0'; p++)
    {
      if (!g_ascii_isdigit (*p))
        return 0;
      value = value * 10 + (guint) (*p - '0');
    }
  return value <= 65535 ? (guint16) value : 0;
}

guint16
sbx_grant_broad_port (const char *target)
{
  if (target == NULL || !g_str_has_prefix (target, "tcp:*:"))
    return 0;
  return parse_port (target + strlen ("tcp:*:"));
}

/* "tcp:HOST:PORT" in normalised form: HOST a lowercase DNS name (labels of
 * [a-z0-9-], no empty label, no trailing dot), a dotted IPv4 literal, or a
 * bracketed lowercase IPv6 literal. */
static gboolean
proxy_target_valid (const char *target)
{
  const char *host;
  const char *colon;
  g_autofree char *name = NULL;

  if (!g_str_has_prefix (target, "tcp:"))
    return FALSE;
  host = target + 4;
  colon = strrchr (host, ':');
  if (colon == NULL || colon == host || parse_port (colon + 1) == 0)
    return FALSE;
  name = g_strndup (host, (gsize) (colon - host));
  if (name[0] == '[')
    {
      gsize n = strlen (name);

      if (n < 3 || name[n - 1] != ']')
        return FALSE;
      for (gsize i = 1; i + 1 < n; i++)
        if (!g_ascii_isxdigit (name[i]) && name[i] != ':' && name[i] != '.')
          return FALSE;
        else if (g_ascii_isupper (name[i]))
          return FALSE;
      return TRUE;
    }
  if (name[0] == '.' || name[strlen (name) - 1] == '.' || strstr (name, "..") != NULL)
    return FALSE;
  for (const char *p = name; *p != '\0'; p++)
    if (!(g_ascii_islower (*p) || g_ascii_isdigit (*p) || *p == '-' || *p == '.'))
      return FALSE;
  return TRUE;
}

char *
sbx_grant_normalize_target (const SbxGrantClassInfo *info,
                            const char              *command,
                            const char              *target,
                            char                   **out_scope,
                            GError                 **error)
{
  g_autofree char *canonical = NULL;
  g_autoptr(GError) local_error = NULL;

  *out_scope = NULL;
  switch (info->shape)
    {
    case SBX_GRANT_SHAPE_COMMAND:
      if (target == NULL)
        target = command;
      if (!sbx_grant_text_valid (target))
        return (sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "target: a %s target must be valid text", info->name), NULL);
      *out_scope = g_strdup ("");
      return g_strdup (target);

    case SBX_GRANT_SHAPE_FS_EXACT:
    case SBX_GRANT_SHAPE_FS_TREE:
      if (target == NULL || target[0] != '/' || !g_utf8_validate (target, -1, NULL))
        return (sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "target: “%s” is not an absolute path",
                                target != NULL && g_utf8_validate (target, -1, NULL) ? target : "(invalid)"),
                NULL);
      canonical = sbx_path_canonical_path (target, &local_error);
      if (canonical == NULL)
        return (sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "target: “%s”: %s", target, local_error->message), NULL);
      *out_scope = info->shape == SBX_GRANT_SHAPE_FS_TREE
                   ? g_strconcat ("tree:", canonical, NULL) : g_strdup (canonical);
      return g_steal_pointer (&canonical);

    case SBX_GRANT_SHAPE_FS_HOST:
      if (g_strcmp0 (target, "host:*") != 0)
        return (sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "target: a %s target must be “host:*”", info->name), NULL);
      *out_scope = g_strdup ("host:*");
      return g_strdup (target);

    case SBX_GRANT_SHAPE_NET_BROAD:
      if (sbx_grant_broad_port (target) == 0)
        return (sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "target: a %s target must be “tcp:*:PORT” with PORT in 1..65535",
                                info->name), NULL);
      *out_scope = g_strdup ("");
      return g_strdup (target);

    case SBX_GRANT_SHAPE_NET_PROXY:
      if (target == NULL || !proxy_target_valid (target))
        return (sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "target: a %s target must be a normalised “tcp:HOST:PORT”",
                                info->name), NULL);
      *out_scope = g_strdup ("");
      return g_strdup (target);

    case SBX_GRANT_SHAPE_UNIX_SOCKET:
      /* Lexical only: the supervisor matches the exact path the target
       * connects to, and resolves it in the host's view at each connect. */
      if (!sbx_grant_unix_socket_valid (target))
        return (sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "target: a %s target must be a clean absolute "
                                                                  "path shorter than 108 bytes, not “%s”", info->name,
                                target != NULL && g_utf8_validate (target, -1, NULL) ? target : "(invalid)"), NULL);
      *out_scope = g_strdup (target);
      return g_strdup (target);

    default:
      return (sbx_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "target: unknown class shape"), NULL);
    }
}

gboolean
sbx_grant_unix_socket_valid (const char *target)
{
  return target != NULL && g_utf8_validate (target, -1, NULL) && sbx_path_is_clean_absolute (target)
         && strcmp (target, "/") != 0 && strlen (target) < 108;
}

/* ------------------------------------------------------------------------- */
/* Replay registry                                                            */
/* ------------------------------------------------------------------------- */

struct _SbxGrantReplay
{
  GHashTable *entries;   /* char *id -> gint64 *expiry_ms */
};

SbxGrantReplay *
sbx_grant_replay_new (void)
{
  SbxGrantReplay *replay = g_new0 (SbxGrantReplay, 1);

  replay->entries = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  return replay;
}

void
sbx_grant_replay_free (SbxGrantReplay *replay)
{
  if (replay == NULL)
    return;
  g_hash_table_unref (replay->entries);
  g_free (replay);
}

void
sbx_grant_replay_prune (SbxGrantReplay *replay,
                        gint64          now_ms)
{
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, replay->entries);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    if (*(gint64 *) value < now_ms)
      g_hash_table_iter_remove (&iter);
}

gboolean
sbx_grant_replay_contains (SbxGrantReplay *replay,
                           const char     *id)
{
  return g_hash_table_contains (replay->entries, id);
}

void
sbx_grant_replay_add (SbxGrantReplay *replay,
                      const char     *id,
                      gint64          expiry_ms)
{
  gint64 *value = g_new (gint64, 1);

  *value = expiry_ms;
  g_hash_table_replace (replay->entries, g_strdup (id), value);
}

gboolean
sbx_grant_replay_remove (SbxGrantReplay *replay,
                         const char     *id)
{
  return g_hash_table_remove (replay->entries, id);
}

guint
sbx_grant_replay_size (SbxGrantReplay *replay)
{
  return g_hash_table_size (replay->entries);
}
