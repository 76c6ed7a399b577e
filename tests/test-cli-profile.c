/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <sbx/sbx.h>
#include <string.h>

#include "executor-test-util.h"

/* Runs the built `sbx` (path in $SBX_TEST_SBX, set by tests/meson.build) and
 * checks stdout, stderr and the exit status of each profile subcommand. */

typedef struct
{
  int   status;
  char *out;
  char *err;
} Run;

static void
run_clear (Run *run)
{
  g_clear_pointer (&run->out, g_free);
  g_clear_pointer (&run->err, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Run, run_clear)

static void
run_sbx (Run        *run,
         const char *cwd,
         ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE
                                                                       | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GError) error = NULL;
  const char *cli = g_getenv ("SBX_TEST_SBX");
  const char *arg;
  va_list args;

  if (cli == NULL)
    {
      g_test_skip ("SBX_TEST_SBX is not set (run through meson test)");
      return;
    }
  g_ptr_array_add (argv, (gpointer) cli);
  va_start (args, cwd);
  while ((arg = va_arg (args, const char *)) != NULL)
    g_ptr_array_add (argv, (gpointer) arg);
  va_end (args);
  g_ptr_array_add (argv, NULL);

  if (cwd != NULL)
    g_subprocess_launcher_set_cwd (launcher, cwd);
  process = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &error);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (process, NULL, NULL, &run->out, &run->err, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (process));
  run->status = g_subprocess_get_exit_status (process);
}

#define assert_contains(haystack, needle) \
  G_STMT_START { \
    if (strstr ((haystack), (needle)) == NULL) \
      g_error ("\"%s\" lacks \"%s\"", (haystack), (needle)); \
  } G_STMT_END

static void
test_version_and_help (void)
{
  {
    g_auto(Run) run = { 0 };

    run_sbx (&run, NULL, "--version", NULL);
    if (g_test_failed () || run.out == NULL)
      return;
    g_assert_cmpint (run.status, ==, 0);
    /* The first line is the version; the build's details follow
     * (tests/packaging/test-build-info.py checks them). */
    g_assert_true (g_str_has_prefix (run.out, "sbx 0.1.0\nplugin directory: /"));
    g_assert_cmpstr (run.err, ==, "");
  }
  {
    const char *const forms[] = { "--help", "help", "-h" };

    for (guint i = 0; i < G_N_ELEMENTS (forms); i++)
      {
        g_auto(Run) run = { 0 };

        run_sbx (&run, NULL, forms[i], NULL);
        g_assert_cmpint (run.status, ==, 0);
        assert_contains (run.out, "Usage:");
        assert_contains (run.out, "profile");
        g_assert_cmpstr (run.err, ==, "");
      }
  }
  {
    g_auto(Run) run = { 0 };

    run_sbx (&run, NULL, NULL);
    g_assert_cmpint (run.status, ==, 2);
    assert_contains (run.err, "Usage:");
    g_assert_cmpstr (run.out, ==, "");
  }
  {
    g_auto(Run) run = { 0 };

    run_sbx (&run, NULL, "frobnicate", NULL);
    g_assert_cmpint (run.status, ==, 2);
    g_assert_true (g_str_has_prefix (run.err, "sbx: unknown command \"frobnicate\""));
  }
  {
    g_auto(Run) run = { 0 };

    run_sbx (&run, NULL, "--frobnicate", NULL);
    g_assert_cmpint (run.status, ==, 2);
    g_assert_true (g_str_has_prefix (run.err, "sbx: unknown option --frobnicate"));
  }
  {
    g_auto(Run) run = { 0 };

    run_sbx (&run, NULL, "help", "frobnicate", NULL);
    g_assert_cmpint (run.status, ==, 2);
    g_assert_true (g_str_has_prefix (run.err, "sbx: unknown command"));
  }
  {
    g_auto(Run) run = { 0 };

    run_sbx (&run, NULL, "help", "profile", NULL);
    g_assert_cmpint (run.status, ==, 0);
    assert_contains (run.out, "sbx profile check");
    assert_contains (run.out, "sbx profile restrict");
  }
}

static void
test_profile_usage (void)
{
  {
    g_auto(Run) run = { 0 };

    run_sbx (&run, NULL, "profile", NULL);
    if (run.out == NULL)
      return;
    g_assert_cmpint (run.status, ==, 2);
    assert_contains (run.err, "sbx profile show");
  }
  {
    g_auto(Run) run = { 0 };

    run_sbx (&run, NULL, "profile", "--help", NULL);
    g_assert_cmpint (run.status, ==, 0);
    assert_contains (run.out, "check");
    assert_contains (run.out, "show");
    assert_contains (run.out, "restrict");
  }
  {
    g_auto(Run) run = { 0 };

    run_sbx (&run, NULL, "profile", "lint", NULL);
    g_assert_cmpint (run.status, ==, 2);
    g_assert_true (g_str_has_prefix (run.err, "sbx: profile: unknown command \"lint\""));
  }
  {
    const char *const subcommands[] = { "check", "show", "restrict" };

    for (guint i = 0; i < G_N_ELEMENTS (subcommands); i++)
      {
        g_auto(Run) run = { 0 };
        g_auto(Run) help = { 0 };
        g_auto(Run) bad = { 0 };
        g_autofree char *usage = g_strdup_printf ("sbx profile %s", subcommands[i]);

        run_sbx (&help, NULL, "profile", subcommands[i], "--help", NULL);
        g_assert_cmpint (help.status, ==, 0);
        assert_contains (help.out, "Usage:");
        assert_contains (help.out, usage);
        assert_contains (help.out, "--workspace");

        run_sbx (&run, NULL, "profile", subcommands[i], NULL);
        g_assert_cmpint (run.status, ==, 2);
        g_assert_true (g_str_has_prefix (run.err, "sbx: profile "));
        g_assert_cmpstr (run.out, ==, "");

        run_sbx (&bad, NULL, "profile", subcommands[i], "--frobnicate", "x", NULL);
        g_assert_cmpint (bad.status, ==, 2);
        g_assert_true (g_str_has_prefix (bad.err, "sbx: profile "));
        assert_contains (bad.err, "--frobnicate");
      }
  }
}

typedef struct
{
  char *tmp;
  char *ws;
  char *good;      /* valid, relative workspace "." */
  char *bad;       /* roots[2].read is a bad word */
  char *other_ws;  /* valid, workspace tmp/other */
} Files;

static void
files_setup (Files *files)
{
  files->tmp = etu_make_tmpdir ("sbx-test-cli-XXXXXX");
  files->ws = etu_mkdir (files->tmp, "ws");
  g_free (etu_mkdir (files->tmp, "ws/sub"));
  g_free (etu_mkdir (files->tmp, "other"));
  files->good = etu_write_file (files->tmp, "good.json",
                                "{\"version\":1,\"workspace\":{\"root\":\".\",\"read\":\"allow\",\"write\":\"allow\"},"
                                "\"network\":\"allow\",\"command\":\"allow\",\"roots\":[{\"path\":\"/usr\",\"read\":\"allow\"}]}");
  files->bad = etu_write_file (files->tmp, "bad.json",
                               "{\"version\":1,\"roots\":[{\"path\":\"/\"},{\"path\":\"/usr\"},{\"path\":\"/tmp\",\"read\":\"alow\"}]}");
  files->other_ws = etu_write_file (files->tmp, "other.json", "{\"version\":1,\"workspace\":{\"root\":\"../other\"}}");
}

static void
files_teardown (Files *files)
{
  etu_rm_rf (files->tmp);
  g_free (files->tmp);
  g_free (files->ws);
  g_free (files->good);
  g_free (files->bad);
  g_free (files->other_ws);
}

static void
test_check (void)
{
  Files files;
  g_autoptr(SbxProfile) expected = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *ok_line = NULL;

  files_setup (&files);
  expected = sbx_profile_new_from_file (files.good, files.ws, &error);
  g_assert_no_error (error);
  ok_line = g_strdup_printf ("%s: ok %s\n", files.good, sbx_profile_get_fingerprint (expected));

  {
    /* relative workspace: the current directory */
    g_auto(Run) run = { 0 };

    run_sbx (&run, files.ws, "profile", "check", files.good, NULL);
    if (run.out == NULL)
      {
        files_teardown (&files);
        return;
      }
    g_assert_cmpint (run.status, ==, 0);
    g_assert_cmpstr (run.out, ==, ok_line);
    g_assert_cmpstr (run.err, ==, "");
  }
  {
    /* ... or --workspace DIR */
    g_auto(Run) run = { 0 };

    run_sbx (&run, files.tmp, "profile", "check", "--workspace", files.ws, files.good, NULL);
    g_assert_cmpint (run.status, ==, 0);
    g_assert_cmpstr (run.out, ==, ok_line);
  }
  {
    g_auto(Run) run = { 0 };
    g_autofree char *prefix = g_strdup_printf ("sbx: %s: roots[2].read: expected \"deny\", \"gated\" or \"allow\", got \"alow\"\n",
                                               files.bad);

    run_sbx (&run, files.ws, "profile", "check", files.bad, NULL);
    g_assert_cmpint (run.status, ==, 1);
    g_assert_cmpstr (run.err, ==, prefix);
    g_assert_cmpstr (run.out, ==, "");
  }
  {
    /* every file is checked; one bad one fails the whole run */
    g_auto(Run) run = { 0 };

    run_sbx (&run, files.ws, "profile", "check", files.bad, files.good, NULL);
    g_assert_cmpint (run.status, ==, 1);
    g_assert_cmpstr (run.out, ==, ok_line);
    assert_contains (run.err, "roots[2].read");
  }
  {
    g_auto(Run) run = { 0 };
    g_autofree char *missing = g_build_filename (files.tmp, "missing.json", NULL);

    run_sbx (&run, files.ws, "profile", "check", missing, NULL);
    g_assert_cmpint (run.status, ==, 1);
    g_assert_true (g_str_has_prefix (run.err, "sbx: open "));
    assert_contains (run.err, "missing.json: No such file or directory");
  }
  {
    /* the data/profiles examples */
    g_autofree char *dir = g_test_build_filename (G_TEST_DIST, "..", "data", "profiles", NULL);
    g_autofree char *review = g_build_filename (dir, "review-readonly.json", NULL);
    g_autofree char *sdk = g_build_filename (dir, "offline-sdk.json", NULL);
    g_auto(Run) run = { 0 };

    run_sbx (&run, files.ws, "profile", "check", review, sdk, NULL);
    g_assert_cmpint (run.status, ==, 0);
    assert_contains (run.out, "review-readonly.json: ok ");
    assert_contains (run.out, "offline-sdk.json: ok ");
  }
  files_teardown (&files);
}

static JsonObject *
parse_object (const char *text,
              JsonNode  **out_node)
{
  g_autoptr(GError) error = NULL;
  JsonNode *node = json_from_string (text, &error);

  g_assert_no_error (error);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (node));
  *out_node = node;
  return json_node_get_object (node);
}

/* `profile show` writes its object itself: the bytes must be the ones
 * json-glib's pretty generator (indent 2) prints for the same tree. */
static void
assert_generator_form (const char *text,
                       JsonNode   *node)
{
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autofree char *generated = NULL;
  g_autofree char *expected = NULL;

  json_generator_set_root (generator, node);
  json_generator_set_pretty (generator, TRUE);
  json_generator_set_indent (generator, 2);
  generated = json_generator_to_data (generator, NULL);
  expected = g_strconcat (generated, "\n", NULL);
  g_assert_cmpstr (text, ==, expected);
}

static void
test_show (void)
{
  Files files;

  files_setup (&files);
  {
    g_auto(Run) run = { 0 };
    g_autoptr(JsonNode) node = NULL;
    g_autoptr(SbxProfile) expected = NULL;
    g_autoptr(SbxProfile) shown = NULL;
    g_autoptr(GError) error = NULL;
    g_autofree char *profile_text = NULL;
    JsonObject *object;
    JsonArray *guarantees;

    run_sbx (&run, files.ws, "profile", "show", files.good, NULL);
    if (run.out == NULL)
      {
        files_teardown (&files);
        return;
      }
    g_assert_cmpint (run.status, ==, 0);
    g_assert_cmpstr (run.err, ==, "");
    object = parse_object (run.out, &node);
    assert_generator_form (run.out, node);
    g_assert_cmpuint (json_object_get_size (object), ==, 3);
    expected = sbx_profile_new_from_file (files.good, files.ws, &error);
    g_assert_no_error (error);
    g_assert_cmpstr (json_object_get_string_member (object, "fingerprint"), ==,
                     sbx_profile_get_fingerprint (expected));
    guarantees = json_object_get_array_member (object, "required-guarantees");
    g_assert_cmpuint (json_array_get_length (guarantees), ==, 3);
    g_assert_cmpstr (json_array_get_string_element (guarantees, 0), ==, "write-boundary");
    g_assert_cmpstr (json_array_get_string_element (guarantees, 1), ==, "read-boundary");
    g_assert_cmpstr (json_array_get_string_element (guarantees, 2), ==, "env-scrub");
    /* the "profile" member is the normalized profile itself */
    profile_text = json_to_string (json_object_get_member (object, "profile"), FALSE);
    shown = sbx_profile_new_from_json (profile_text, -1, "/", &error);
    g_assert_no_error (error);
    g_assert_true (sbx_profile_equal (shown, expected));
  }
  {
    g_auto(Run) run = { 0 };
    g_autoptr(JsonNode) node = NULL;
    JsonObject *object, *profile, *limits;

    run_sbx (&run, files.tmp, "profile", "show", "--default", "--workspace", files.ws, NULL);
    g_assert_cmpint (run.status, ==, 0);
    object = parse_object (run.out, &node);
    assert_generator_form (run.out, node);
    profile = json_object_get_object_member (object, "profile");
    g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (profile, "workspace"), "root"), ==,
                     files.ws);
    g_assert_cmpstr (json_object_get_string_member (profile, "network"), ==, "deny");
    limits = json_object_get_object_member (profile, "limits");
    g_assert_cmpint (json_object_get_int_member (limits, "processes"), ==, 1024);
    g_assert_cmpint (json_object_get_int_member (limits, "memory"), >, 0);
    g_assert_cmpint (json_object_get_int_member (limits, "memory"), <=, G_GINT64_CONSTANT (4) << 30);
    g_assert_cmpuint (strlen (json_object_get_string_member (object, "fingerprint")), ==, 64);
  }
  {
    /* Roots whose paths need escaping (a quote, a backslash, a tab) and
     * hold non-ASCII text, in an array of objects (the default profile has an
     * empty one): the same bytes as json-glib's generator. */
    g_auto(Run) run = { 0 };
    g_autoptr(JsonNode) node = NULL;
    g_autofree char *odd = etu_mkdir (files.tmp, "r\"\\\t\xc3\xa9");
    g_autofree char *json = NULL;
    g_autofree char *path = NULL;
    g_autofree char *quoted = NULL;

    quoted = g_strescape (odd, "\xc3\xa9");
    json = g_strdup_printf ("{\"version\":1,\"roots\":[{\"path\":\"%s\",\"read\":\"allow\"},"
                            "{\"path\":\"/usr\",\"read\":\"allow\"}]}", quoted);
    path = etu_write_file (files.tmp, "odd.json", json);
    run_sbx (&run, files.ws, "profile", "show", path, NULL);
    g_assert_cmpint (run.status, ==, 0);
    parse_object (run.out, &node);
    assert_generator_form (run.out, node);
    assert_contains (run.out, "\\\"\\\\\\t\xc3\xa9");
  }
  {
    /* "denied-paths": shown when it hides existence ("not-found"), absent
     * for the default (permission-denied, as the default profile shows),
     * and a bad word names the member and the value */
    g_auto(Run) run = { 0 };
    g_auto(Run) plain = { 0 };
    g_auto(Run) bad = { 0 };
    g_autoptr(JsonNode) node = NULL;
    g_autofree char *path = etu_write_file (files.tmp, "hide.json",
                                            "{\"version\":1,\"denied-paths\":\"not-found\"}");
    g_autofree char *bad_path = etu_write_file (files.tmp, "hide-bad.json",
                                                "{\"version\":1,\"denied-paths\":\"hidden\"}");
    JsonObject *object;

    run_sbx (&run, files.ws, "profile", "show", path, NULL);
    g_assert_cmpint (run.status, ==, 0);
    object = parse_object (run.out, &node);
    assert_generator_form (run.out, node);
    g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (object, "profile"),
                                                    "denied-paths"), ==, "not-found");
    run_sbx (&plain, files.ws, "profile", "show", "--default", NULL);
    g_assert_cmpint (plain.status, ==, 0);
    g_assert_null (strstr (plain.out, "denied-paths"));
    run_sbx (&bad, files.ws, "profile", "show", bad_path, NULL);
    g_assert_cmpint (bad.status, ==, 1);
    assert_contains (bad.err, "denied-paths: expected \"permission-denied\" or \"not-found\", got \"hidden\"");
    g_assert_cmpstr (bad.out, ==, "");
  }
  {
    g_auto(Run) run = { 0 };
    g_autoptr(JsonNode) node = NULL;
    JsonObject *object;

    /* --default without --workspace: the current directory */
    run_sbx (&run, files.ws, "profile", "show", "--default", NULL);
    g_assert_cmpint (run.status, ==, 0);
    object = parse_object (run.out, &node);
    g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (
                                                      json_object_get_object_member (object, "profile"), "workspace"), "root"), ==, files.ws);
  }
  {
    g_auto(Run) both = { 0 };
    g_auto(Run) bad = { 0 };

    run_sbx (&both, files.ws, "profile", "show", "--default", files.good, NULL);
    g_assert_cmpint (both.status, ==, 2);
    g_assert_true (g_str_has_prefix (both.err, "sbx: profile show: "));
    run_sbx (&bad, files.ws, "profile", "show", files.bad, NULL);
    g_assert_cmpint (bad.status, ==, 1);
    assert_contains (bad.err, "roots[2].read: expected");
    g_assert_cmpstr (bad.out, ==, "");
  }
  files_teardown (&files);
}

static void
test_restrict (void)
{
  Files files;
  g_autofree char *ceiling = NULL;

  files_setup (&files);
  ceiling = etu_write_file (files.tmp, "ceiling.json",
                            "{\"version\":1,\"workspace\":{\"read\":\"allow\",\"write\":\"gated\"},"
                            "\"network\":\"deny\",\"command\":\"gated\",\"host\":{\"read\":\"allow\"}}");
  {
    g_auto(Run) run = { 0 };
    g_autoptr(SbxProfile) base = NULL;
    g_autoptr(SbxProfile) top = NULL;
    g_autoptr(SbxProfile) expected = NULL;
    g_autoptr(SbxProfile) printed = NULL;
    g_autoptr(GError) error = NULL;
    g_autofree char *expected_text = NULL;

    run_sbx (&run, files.ws, "profile", "restrict", files.good, ceiling, NULL);
    if (run.out == NULL)
      {
        files_teardown (&files);
        return;
      }
    g_assert_cmpint (run.status, ==, 0);
    g_assert_cmpstr (run.err, ==, "");
    base = sbx_profile_new_from_file (files.good, files.ws, &error);
    g_assert_no_error (error);
    top = sbx_profile_new_from_file (ceiling, files.ws, &error);
    g_assert_no_error (error);
    expected = sbx_profile_restrict (base, top, &error);
    g_assert_no_error (error);
    expected_text = sbx_profile_to_json (expected);
    g_assert_cmpstr (run.out, ==, expected_text);
    printed = sbx_profile_new_from_json (run.out, -1, "/", &error);
    g_assert_no_error (error);
    g_assert_cmpint (sbx_profile_get_network (printed), ==, SBX_ACCESS_DENY);
    g_assert_cmpint (sbx_profile_get_workspace_write (printed), ==, SBX_ACCESS_GATED);
    g_assert_cmpint (sbx_profile_get_command (printed), ==, SBX_ACCESS_GATED);
  }
  {
    g_auto(Run) run = { 0 };

    run_sbx (&run, files.ws, "profile", "restrict", files.good, files.other_ws, NULL);
    g_assert_cmpint (run.status, ==, 1);
    g_assert_true (g_str_has_prefix (run.err, "sbx: restrict: workspace roots differ"));
    g_assert_cmpstr (run.out, ==, "");
  }
  {
    g_auto(Run) run = { 0 };

    run_sbx (&run, files.ws, "profile", "restrict", files.good, files.bad, NULL);
    g_assert_cmpint (run.status, ==, 1);
    assert_contains (run.err, "bad.json: roots[2].read");
  }
  {
    g_auto(Run) run = { 0 };

    run_sbx (&run, files.ws, "profile", "restrict", files.good, NULL);
    g_assert_cmpint (run.status, ==, 2);
    g_assert_true (g_str_has_prefix (run.err, "sbx: profile restrict: "));
  }
  files_teardown (&files);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/cli/version-and-help", test_version_and_help);
  g_test_add_func ("/cli/profile/usage", test_profile_usage);
  g_test_add_func ("/cli/profile/check", test_check);
  g_test_add_func ("/cli/profile/show", test_show);
  g_test_add_func ("/cli/profile/restrict", test_restrict);
  return g_test_run ();
}
