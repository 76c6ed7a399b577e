/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <sbx/sbx.h>
#include <string.h>

#include "sbx-fingerprint-private.h"
#include "executor-test-util.h"

/* The Go library's test vector: /srv/app, access (2,2,2,0,0,2), home 0, isolation 0,
 * no roots, ack false, required 26 (write, env-scrub, network). */
static const SbxFingerprintSettings upstream_settings = {
  .version = 1,
  .workspace_root = "/srv/app",
  .workspace_read = 2,
  .workspace_write = 2,
  .host_read = 2,
  .host_write = 0,
  .network = 0,
  .command = 2,
  .home = 0,
  .isolation = 0,
  .roots = NULL,
  .n_roots = 0,
  .ack_unconfined = FALSE,
  .required_guarantees = 26,
};

static void
test_upstream_vectors (void)
{
  SbxFingerprintSettings settings = upstream_settings;
  const SbxFingerprintRoot data_root = { "/data", 1, 0 };
  g_autofree char *serialized = sbx_fingerprint_serialize (&settings);
  g_autofree char *first = sbx_fingerprint_compute (&settings);
  g_autofree char *second = NULL;
  g_autofree char *serialized2 = NULL;

  g_assert_cmpstr (serialized, ==,
                   "{\"Version\":1,\"WorkspaceRoot\":\"/srv/app\",\"WorkspaceRead\":2,\"WorkspaceWrite\":2,"
                   "\"HostRead\":2,\"HostWrite\":0,\"Network\":0,\"Command\":2,\"Home\":0,\"Isolation\":0,"
                   "\"AdditionalRoots\":[],\"AckUnconfined\":false,\"RequiredGuarantees\":26}");
  g_assert_cmpstr (first, ==, "fc33a54946b76f4e95c01f236a2b5d594ef8ba6e3a35e0d028b4af071a464692");

  settings.roots = &data_root;
  settings.n_roots = 1;
  settings.required_guarantees = 30;
  serialized2 = sbx_fingerprint_serialize (&settings);
  g_assert_nonnull (strstr (serialized2, "\"AdditionalRoots\":[{\"Path\":\"/data\",\"Read\":1,\"Write\":0}]"));
  second = sbx_fingerprint_compute (&settings);
  g_assert_cmpstr (second, ==, "4bd263e30494e294e4ef34bd5084038e9ed6de41efd25847126ae9673edcf4c6");
}

/* The extension member for resource limits; pinned so it stays stable. */
static void
test_limits_extension (void)
{
  SbxFingerprintSettings settings = upstream_settings;
  g_autofree char *serialized = NULL;
  g_autofree char *fingerprint = NULL;

  settings.max_processes = 1024;
  settings.max_memory = G_GUINT64_CONSTANT (4294967296);
  serialized = sbx_fingerprint_serialize (&settings);
  g_assert_true (g_str_has_suffix (serialized,
                                   ",\"RequiredGuarantees\":26,"
                                   "\"Limits\":{\"Processes\":1024,\"Memory\":4294967296,\"OpenFiles\":0}}"));
  fingerprint = sbx_fingerprint_compute (&settings);
  g_assert_cmpstr (fingerprint, ==, "19401245f7b92f1ec6d13d56fa83e3c53315b545d99633d13f6d0ee9b32d0677");
}

/* sbx's unix-sockets member: serialized last and only when allowed, so every
 * profile without it keeps its fingerprint (the vectors above); pinned. */
static void
test_unix_sockets_extension (void)
{
  SbxFingerprintSettings settings = upstream_settings;
  g_autofree char *closed = sbx_fingerprint_serialize (&settings);
  g_autofree char *serialized = NULL;
  g_autofree char *fingerprint = NULL;

  g_assert_null (strstr (closed, "UnixSockets"));
  settings.unix_sockets = TRUE;
  serialized = sbx_fingerprint_serialize (&settings);
  g_assert_true (g_str_has_suffix (serialized, ",\"RequiredGuarantees\":26,\"UnixSockets\":true}"));
  fingerprint = sbx_fingerprint_compute (&settings);
  g_assert_cmpstr (fingerprint, !=, "fc33a54946b76f4e95c01f236a2b5d594ef8ba6e3a35e0d028b4af071a464692");
  g_assert_cmpuint (strlen (fingerprint), ==, 64);
}

/* "denied-paths": "not-found": serialized last and only when set, so a
 * profile without it (or with "permission-denied") keeps its fingerprint. */
static void
test_denied_paths_extension (void)
{
  SbxFingerprintSettings settings = upstream_settings;
  g_autofree char *explain = sbx_fingerprint_serialize (&settings);
  g_autofree char *serialized = NULL;
  g_autofree char *fingerprint = NULL;

  g_assert_null (strstr (explain, "DeniedPaths"));
  settings.denied_paths = SBX_DENIED_PATHS_NOT_FOUND;
  settings.unix_sockets = TRUE;
  serialized = sbx_fingerprint_serialize (&settings);
  g_assert_true (g_str_has_suffix (serialized, ",\"RequiredGuarantees\":26,\"UnixSockets\":true,\"DeniedPaths\":1}"));
  fingerprint = sbx_fingerprint_compute (&settings);
  g_assert_cmpuint (strlen (fingerprint), ==, 64);
}

/* Go encoding/json (HTML-safe) string escaping. */
static void
test_go_escaping (void)
{
  static const struct { const char *in; gssize len; const char *out; } rows[] = {
    { "plain /path", -1, "\"plain /path\"" },
    { "q\"b\\s", -1, "\"q\\\"b\\\\s\"" },
    { "\b\f\n\r\t", -1, "\"\\b\\f\\n\\r\\t\"" },
    { "\x01\x1f\x0b", -1, "\"\\u0001\\u001f\\u000b\"" },
    { "a\0b", 3, "\"a\\u0000b\"" },
    { "<a>&", -1, "\"\\u003ca\\u003e\\u0026\"" },
    { "\x7f", -1, "\"\x7f\"" },
    { "caf\xc3\xa9", -1, "\"caf\xc3\xa9\"" },
    { "\xe2\x80\xa8|\xe2\x80\xa9", -1, "\"\\u2028|\\u2029\"" },
    { "\xe2\x80\xaa", -1, "\"\xe2\x80\xaa\"" },                    /* U+202A is raw */
    { "\xef\xbf\xbd", -1, "\"\xef\xbf\xbd\"" },                    /* a real U+FFFD is raw */
    { "\xf0\x9f\x98\x80", -1, "\"\xf0\x9f\x98\x80\"" },            /* 4-byte sequence */
    { "a\xffz", -1, "\"a\\ufffdz\"" },                             /* invalid byte */
    { "\xe2\x82", -1, "\"\\ufffd\\ufffd\"" },                      /* truncated: one per byte */
    { "\xed\xa0\x80", -1, "\"\\ufffd\\ufffd\\ufffd\"" },           /* a surrogate */
    { "\xc0\xaf", -1, "\"\\ufffd\\ufffd\"" },                      /* overlong */
    { "\xe0\x80\xaf", -1, "\"\\ufffd\\ufffd\\ufffd\"" },           /* overlong, 3 bytes */
    { "\xf4\x90\x80\x80", -1, "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" },/* above U+10FFFF */
    { "\xf4\x8f\xbf\xbf", -1, "\"\xf4\x8f\xbf\xbf\"" },            /* U+10FFFF */
    { "\x80", -1, "\"\\ufffd\"" },                                 /* lone continuation */
    { "", -1, "\"\"" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autoptr(GString) out = g_string_new (NULL);

      sbx_fingerprint_append_go_string (out, rows[i].in, rows[i].len);
      if (!g_str_equal (out->str, rows[i].out))
        g_error ("row %u: got %s, expected %s", i, out->str, rows[i].out);
    }
}

/* ------------------------------------------------------------------------- */

static SbxProfile *
load (const char *json,
      const char *base)
{
  g_autoptr(GError) error = NULL;
  SbxProfile *profile = sbx_profile_new_from_json (json, -1, base, &error);

  g_assert_no_error (error);
  return profile;
}

/* Member order, root order and path spellings do not matter. */
static void
test_equivalent_spellings (void)
{
  g_autofree char *tmp = etu_make_tmpdir ("sbx-test-fingerprint-XXXXXX");
  g_autofree char *ws = etu_mkdir (tmp, "ws");
  g_autofree char *a = etu_mkdir (tmp, "a");
  g_autofree char *b = etu_mkdir (tmp, "ws/b");
  g_autofree char *link = etu_symlink (tmp, "link", "a");
  g_autofree char *text1 = g_strdup_printf (
    "{\"version\":1,\"workspace\":{\"root\":\"%s\",\"read\":\"allow\",\"write\":\"gated\"},"
    "\"host\":{\"read\":\"deny\",\"write\":\"deny\"},\"network\":\"gated\",\"command\":\"allow\","
    "\"roots\":[{\"path\":\"%s\",\"read\":\"gated\"},{\"path\":\"%s\",\"write\":\"allow\",\"read\":\"allow\"}],"
    "\"limits\":{\"processes\":10,\"memory\":\"1K\"}}", ws, a, b);
  g_autofree char *text2 = g_strdup_printf (
    "{\"limits\":{\"memory\":1024,\"processes\":10,\"open-files\":0},"
    "\"roots\":[{\"write\":\"allow\",\"path\":\"%s/./b\",\"read\":\"allow\"},{\"path\":\"%s//\",\"read\":\"gated\",\"write\":\"deny\"}],"
    "\"command\":\"allow\",\"network\":\"gated\",\"isolation\":\"sandboxed\",\"home\":\"isolated\","
    "\"host\":{\"write\":\"deny\"},\"workspace\":{\"write\":\"gated\",\"read\":\"allow\",\"root\":\"ws/.\"},\"version\":1}",
    ws, link);
  g_autoptr(SbxProfile) p1 = load (text1, NULL);
  g_autoptr(SbxProfile) p2 = load (text2, tmp);
  g_autofree char *again = NULL;

  g_assert_cmpstr (sbx_profile_get_fingerprint (p1), ==, sbx_profile_get_fingerprint (p2));
  g_assert_true (sbx_profile_equal (p1, p2));

  /* Stable across loads (and processes: the serialization has no state). */
  {
    g_autoptr(SbxProfile) p3 = load (text1, NULL);

    g_assert_cmpstr (sbx_profile_get_fingerprint (p3), ==, sbx_profile_get_fingerprint (p1));
  }
  /* The fingerprint is the hash of the documented serialization. */
  {
    const SbxFingerprintRoot roots[] = { { a, 1, 0 }, { b, 2, 2 } };
    SbxFingerprintSettings settings = {
      .version = 1, .workspace_root = ws, .workspace_read = 2, .workspace_write = 1,
      .host_read = 0, .host_write = 0, .network = 1, .command = 2, .home = 0, .isolation = 0,
      .roots = roots, .n_roots = 2, .ack_unconfined = FALSE,
      .required_guarantees = SBX_GUARANTEE_READ_BOUNDARY | SBX_GUARANTEE_WRITE_BOUNDARY
                             | SBX_GUARANTEE_ENV_SCRUB | SBX_GUARANTEE_NETWORK_BOUNDARY,
      .max_processes = 10, .max_memory = 1024, .max_open_files = 0,
    };

    again = sbx_fingerprint_compute (&settings);
    g_assert_cmpstr (again, ==, sbx_profile_get_fingerprint (p1));
  }
  etu_rm_rf (tmp);
}

typedef struct
{
  const char *ws;
  int         ws_read, ws_write, host_read, host_write, network, command, home, isolation;
  gboolean    ack;
  const char *root1;
  int         root1_read, root1_write;
  const char *root2;
  guint64     processes, memory, open_files;
  gboolean    unix_sockets;
  int         denied_paths;
} Variant;

static SbxProfile *
build_variant (const char    *tmp,
               const Variant *v)
{
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *ws = g_build_filename (tmp, v->ws, NULL);
  SbxProfile *profile;

  sbx_profile_config_set_workspace (config, ws, v->ws_read, v->ws_write);
  sbx_profile_config_set_host (config, v->host_read, v->host_write);
  sbx_profile_config_set_network (config, v->network);
  sbx_profile_config_set_command (config, v->command);
  sbx_profile_config_set_home (config, v->home);
  sbx_profile_config_set_isolation (config, v->isolation);
  sbx_profile_config_set_ack_unconfined (config, v->ack);
  if (v->root1 != NULL)
    {
      g_autofree char *path = g_build_filename (tmp, v->root1, NULL);

      sbx_profile_config_add_root (config, path, v->root1_read, v->root1_write);
    }
  if (v->root2 != NULL)
    {
      g_autofree char *path = g_build_filename (tmp, v->root2, NULL);

      sbx_profile_config_add_root (config, path, SBX_ACCESS_GATED, SBX_ACCESS_GATED);
    }
  sbx_profile_config_set_limits (config, v->processes, v->memory, v->open_files);
  sbx_profile_config_set_unix_sockets (config, v->unix_sockets);
  sbx_profile_config_set_denied_paths (config, (SbxDeniedPaths) v->denied_paths);
  profile = sbx_profile_new (config, &error);
  g_assert_no_error (error);
  return profile;
}

/* Every single-field change gives a different fingerprint. */
static void
test_single_field_changes (void)
{
  static const Variant base = { "ws", 1, 1, 1, 1, 1, 1, 0, 0, FALSE, "a", 1, 1, NULL, 5, 5, 5 };
  g_autofree char *tmp = etu_make_tmpdir ("sbx-test-fingerprint-XXXXXX");
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  Variant variants[32];
  const char *names[32];
  guint n = 0;

  g_free (etu_mkdir (tmp, "ws/sub"));
  g_free (etu_mkdir (tmp, "ws2"));
  g_free (etu_mkdir (tmp, "a"));
  g_free (etu_mkdir (tmp, "b"));

#define VARIANT(label, stmt) do { variants[n] = base; { Variant *v = &variants[n]; stmt; } names[n++] = label; } while (0)
  VARIANT ("base", (void) v);
  VARIANT ("workspace root", v->ws = "ws2");
  VARIANT ("workspace read", v->ws_read = 2);
  VARIANT ("workspace write", v->ws_write = 0);
  VARIANT ("host read", v->host_read = 0);
  VARIANT ("host write", v->host_write = 2);
  VARIANT ("network", v->network = 2);
  VARIANT ("command", v->command = 0);
  VARIANT ("home", v->home = 1);
  VARIANT ("root removed", v->root1 = NULL);
  VARIANT ("root path", v->root1 = "b");
  VARIANT ("root read", v->root1_read = 0);
  VARIANT ("root write", v->root1_write = 2);
  VARIANT ("root added", v->root2 = "b");
  VARIANT ("root nested in workspace", v->root2 = "ws/sub");
  VARIANT ("max processes", v->processes = 6);
  VARIANT ("max memory", v->memory = 6);
  VARIANT ("max open files", v->open_files = 6);
  VARIANT ("no limits", v->processes = 0; v->memory = 0; v->open_files = 0);
  VARIANT ("one limit", v->memory = 0; v->open_files = 0);
  VARIANT ("unix sockets", v->unix_sockets = TRUE);
  VARIANT ("denied paths", v->denied_paths = SBX_DENIED_PATHS_NOT_FOUND);
#undef VARIANT

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(SbxProfile) profile = build_variant (tmp, &variants[i]);
      const char *fingerprint = sbx_profile_get_fingerprint (profile);
      const char *previous = g_hash_table_lookup (seen, fingerprint);

      if (previous != NULL)
        g_error ("\"%s\" and \"%s\" have the same fingerprint", previous, names[i]);
      g_hash_table_insert (seen, g_strdup (fingerprint), g_strdup (names[i]));
    }

  /* Isolation (and with it the acknowledgement) on an all-allow profile. */
  {
    Variant sandboxed = { "ws", 2, 2, 2, 2, 2, 2, 0, 0, FALSE, NULL, 0, 0, NULL, 0, 0, 0 };
    Variant unconfined = sandboxed;
    g_autoptr(SbxProfile) p1 = NULL;
    g_autoptr(SbxProfile) p2 = NULL;

    unconfined.isolation = 1;
    unconfined.ack = TRUE;
    p1 = build_variant (tmp, &sandboxed);
    p2 = build_variant (tmp, &unconfined);
    g_assert_cmpstr (sbx_profile_get_fingerprint (p1), !=, sbx_profile_get_fingerprint (p2));
  }
  etu_rm_rf (tmp);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/fingerprint/upstream-vectors", test_upstream_vectors);
  g_test_add_func ("/fingerprint/limits-extension", test_limits_extension);
  g_test_add_func ("/fingerprint/unix-sockets-extension", test_unix_sockets_extension);
  g_test_add_func ("/fingerprint/denied-paths-extension", test_denied_paths_extension);
  g_test_add_func ("/fingerprint/go-escaping", test_go_escaping);
  g_test_add_func ("/fingerprint/equivalent-spellings", test_equivalent_spellings);
  g_test_add_func ("/fingerprint/single-field-changes", test_single_field_changes);
  return g_test_run ();
}
