/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx profile learn end to end: the sbx program of this build, the Linux
 * backend and plugins/egress-http, real commands, a server on this host's
 * loopback on a port it picked.
 *
 * What it shows:
 *  - a refused connection (rung 1): the diff gates the network and the
 *    comments name the approval; the server saw nothing; the changed
 *    profile (--output) with that approval, passed to sbx run, reaches it
 *    (and the same curl reaches it without the sandbox: the control);
 *  - a refused command start (both rungs): the diff opens "command", the
 *    command never ran, and the changed profile runs it;
 *  - a file outside the view (rung 1): asserted where the run's report
 *    says the backend observes filesystem refusals (an "fs-denials" entry
 *    that is not unenforced), skipped with the report's reason otherwise;
 *  - --output never replaces a file without --force and never BASE; usage
 *    errors exit 2; stdout holds the diff alone (the command's output goes
 *    to stderr).
 */
#include <sbx/sbx.h>

#include <stdarg.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "executor-test-util.h"
#include "egress-test-util.h"

static const char gated_json[] =
  "{ \"version\": 1,\n"
  "  \"workspace\": { \"root\": \".\", \"read\": \"allow\", \"write\": \"allow\" },\n"
  "  \"host\": { \"read\": \"deny\", \"write\": \"deny\" },\n"
  "  \"network\": \"deny\", \"command\": \"gated\", \"home\": \"isolated\" }\n";

/* TRUE when @backend can run a sandboxed command here; else skips. */
static gboolean
backend_runs (EtuTree    *tree,
              const char *backend)
{
  g_autofree char *out = NULL, *err = NULL;

  if (etu_run_sbx (tree, backend, &out, &err, "run", "--", "true", NULL) == 0)
    return TRUE;
  g_test_skip_printf ("%s cannot run a sandboxed command here: %s", backend, err);
  return FALSE;
}

static gboolean
have_program (const char *name)
{
  g_autofree char *path = g_find_program_in_path (name);

  return path != NULL;
}

static void
test_network (void)
{
  EtuTree tree;
  TestServer *server = NULL;
  g_autofree char *url = NULL, *script = NULL, *outside = NULL, *out = NULL, *err = NULL;
  g_autofree char *approve = NULL, *comment = NULL, *learned = NULL, *control = NULL, *host = NULL;
  int status;

  if (!have_program ("curl"))
    {
      g_test_skip ("curl is not installed (scripts/setup.sh installs it)");
      return;
    }
  etu_tree_init (&tree);
  if (!backend_runs (&tree, "linux-userns"))
    {
      etu_tree_clear (&tree);
      return;
    }
  server = test_server_new (TEST_SERVER_HTTP, NULL);
  url = g_strdup_printf ("http://127.0.0.1:%u/learn", test_server_get_port (server));
  approve = g_strdup_printf ("network.proxy-target.v1:tcp:127.0.0.1:%u", test_server_get_port (server));
  host = g_strdup_printf ("127.0.0.1:%u", test_server_get_port (server));
  comment = g_strdup_printf ("\n#   --allow-host %s   (the grant %s)\n", host, approve);

  /* the control: the target answers without the sandbox */
  control = g_strdup_printf ("curl -sf --noproxy '*' %s", url);
  g_assert_cmpint (etu_run_outside (control, &outside), ==, 0);
  g_assert_nonnull (strstr (outside, "GET /learn"));
  g_assert_cmpuint (test_server_get_n_accepted (server), ==, 1);

  /* learned: the network gated, the approval named, nothing reached */
  script = g_strdup_printf ("curl -sf %s; echo learn-ran", url);
  learned = g_build_filename (tree.tmp, "learned.json", NULL);
  status = etu_run_sbx (&tree, "linux-userns", &out, &err, "profile", "learn", "--output", learned, "--",
                        "sh", "-c", script, NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_true (g_str_has_prefix (out, "--- default profile\n+++ default profile (learned)\n@@ "));
  g_assert_nonnull (strstr (out, "\n-  \"network\" : \"deny\",\n+  \"network\" : \"gated\",\n"));
  g_assert_nonnull (strstr (out, comment));
  g_assert_true (g_str_has_suffix (out, "\n# the command exited with status 0\n"));
  /* stdout is the diff's: the command's output went to stderr */
  g_assert_null (strstr (out, "learn-ran"));
  g_assert_nonnull (strstr (err, "learn-ran"));
  g_assert_cmpuint (test_server_get_n_accepted (server), ==, 1);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* the changed profile with the approval reaches exactly that target */
  status = etu_run_sbx (&tree, "linux-userns", &out, &err, "run", "--profile", learned, "--allow-host", host, "--",
                        "sh", "-c", script, NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "GET /learn"));
  g_assert_cmpuint (test_server_get_n_accepted (server), ==, 2);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  /* and without it stays refused */
  status = etu_run_sbx (&tree, "linux-userns", &out, &err, "run", "--profile", learned, "--", "sh", "-c", script,
                        NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_null (strstr (out, "GET /learn"));
  g_assert_cmpuint (test_server_get_n_accepted (server), ==, 2);
  test_server_free (server);
  etu_tree_clear (&tree);
}

static void
test_command_gate (gconstpointer data)
{
  const char *backend = data;
  EtuTree tree;
  g_autofree char *profile = NULL, *learned = NULL, *out = NULL, *err = NULL;
  int status;

  etu_tree_init (&tree);
  if (!backend_runs (&tree, backend))
    {
      etu_tree_clear (&tree);
      return;
    }
  profile = etu_write_file (tree.tmp, "gated.json", gated_json);
  learned = g_build_filename (tree.tmp, "learned.json", NULL);
  /* the control: the base refuses the start */
  status = etu_run_sbx (&tree, backend, &out, &err, "run", "--profile", profile, "--", "echo", "learn-gated", NULL);
  g_assert_cmpint (status, ==, 125);
  g_assert_null (strstr (out, "learn-gated"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  status = etu_run_sbx (&tree, backend, &out, &err, "profile", "learn", "--profile", profile, "--output", learned,
                        "--", "echo", "learn-gated", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "\n-  \"command\" : \"gated\",\n+  \"command\" : \"allow\",\n"));
  g_assert_nonnull (strstr (out, "#   denied command-start echo (command execution is gated)"));
  g_assert_nonnull (strstr (out, "the command did not start, so nothing else it needs was learned"));
  g_assert_null (strstr (out, "learn-gated"));
  g_assert_null (strstr (err, "learn-gated"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* the changed profile runs it */
  status = etu_run_sbx (&tree, backend, &out, &err, "run", "--profile", learned, "--", "echo", "learn-gated", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "learn-gated"));
  etu_tree_clear (&tree);
}

/* The status of the "fs-denials" entry of `sbx run --report=json`'s
 * report, with its detail in @detail; NULL when there is none. */
static char *
fs_denials_status (EtuTree *tree,
                   char   **detail)
{
  g_autofree char *out = NULL, *err = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autofree char *line = NULL;
  JsonArray *entries;

  *detail = NULL;
  g_assert_cmpint (etu_run_sbx (tree, "linux-userns", &out, &err, "run", "--report=json", "--", "true", NULL), ==, 0);
  line = g_strndup (err, strcspn (err, "\n"));
  g_assert_true (json_parser_load_from_data (parser, line, -1, NULL));
  entries = json_object_get_array_member (json_node_get_object (json_parser_get_root (parser)), "entries");
  for (guint i = 0; i < json_array_get_length (entries); i++)
    {
      JsonObject *entry = json_array_get_object_element (entries, i);

      if (g_str_equal (json_object_get_string_member (entry, "feature"), "fs-denials"))
        {
          *detail = g_strdup (json_object_get_string_member_with_default (entry, "detail", ""));
          return g_strdup (json_object_get_string_member (entry, "status"));
        }
    }
  return NULL;
}

static void
test_filesystem (void)
{
  EtuTree tree;
  g_autofree char *status_word = NULL, *detail = NULL, *cwd = g_get_current_dir ();
  g_autofree char *host = NULL, *secret = NULL, *canonical = NULL, *learned = NULL;
  g_autofree char *out = NULL, *err = NULL, *outside = NULL, *control = NULL, *root_line = NULL;
  g_autoptr(GError) error = NULL;
  int status;

  etu_tree_init (&tree);
  if (!backend_runs (&tree, "linux-userns"))
    {
      etu_tree_clear (&tree);
      return;
    }
  status_word = fs_denials_status (&tree, &detail);
  if (status_word == NULL || g_str_equal (status_word, "unenforced"))
    {
      g_test_skip_printf ("the run's report does not say filesystem refusals are observed (fs-denials: %s%s%s)",
                          status_word != NULL ? status_word : "no entry", detail != NULL ? ": " : "",
                          detail != NULL ? detail : "");
      etu_tree_clear (&tree);
      return;
    }
  /* outside the view: not under the temporary directory (the sandbox's
   * own /tmp hides it) but in the test's working directory */
  host = g_build_filename (cwd, "learn-host-XXXXXX", NULL);
  g_assert_nonnull (g_mkdtemp (host));
  canonical = realpath (host, NULL);
  secret = g_build_filename (canonical, "secret", NULL);
  g_assert_true (g_file_set_contents (secret, "learn-secret\n", -1, &error));
  g_assert_no_error (error);
  learned = g_build_filename (tree.tmp, "learned.json", NULL);

  /* the control: readable without the sandbox */
  control = g_strdup_printf ("cat '%s'", secret);
  g_assert_cmpint (etu_run_outside (control, &outside), ==, 0);
  g_assert_nonnull (strstr (outside, "learn-secret"));

  status = etu_run_sbx (&tree, "linux-userns", &out, &err, "profile", "learn", "--output", learned, "--",
                        "cat", secret, NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_null (strstr (err, "learn-secret"));
  root_line = g_strdup_printf ("\n+      \"path\" : \"%s\",\n+      \"read\" : \"allow\",\n+      \"write\" : \"deny\"\n",
                               canonical);
  g_assert_nonnull (strstr (out, root_line));
  g_assert_null (strstr (out, "filesystem refusals were not observed"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  status = etu_run_sbx (&tree, "linux-userns", &out, &err, "run", "--profile", learned, "--", "cat", secret, NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "learn-secret"));
  etu_rm_rf (canonical);
  etu_tree_clear (&tree);
}

static void
test_output_and_usage (void)
{
  EtuTree tree;
  g_autofree char *profile = NULL, *existing = NULL, *out = NULL, *err = NULL, *text = NULL;
  g_autofree char *before = NULL;
  int status;

  etu_tree_init (&tree);
  profile = etu_write_file (tree.tmp, "gated.json", gated_json);
  existing = etu_write_file (tree.tmp, "existing.json", "keep\n");

  /* usage errors, before anything runs */
  status = etu_run_sbx (&tree, NULL, &out, &err, "profile", "learn", NULL);
  g_assert_cmpint (status, ==, 2);
  g_assert_nonnull (strstr (err, "sbx: profile learn: no command given"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  status = etu_run_sbx (&tree, NULL, &out, &err, "profile", "learn", "--force", "--", "true", NULL);
  g_assert_cmpint (status, ==, 2);
  g_assert_nonnull (strstr (err, "--force only applies to --output FILE"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  status = etu_run_sbx (&tree, NULL, &out, &err, "profile", "learn", "--help", NULL);
  g_assert_cmpint (status, ==, 0);
  g_assert_nonnull (strstr (out, "--output=FILE"));
  g_assert_nonnull (strstr (out, "--profile=BASE"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* an existing --output is refused without --force, before the run */
  status = etu_run_sbx (&tree, NULL, &out, &err, "profile", "learn", "--output", existing, "--", "sh", "-c",
                        "echo learn-ran", NULL);
  g_assert_cmpint (status, ==, 1);
  g_assert_nonnull (strstr (err, "the file exists (give --force to replace it)"));
  g_assert_null (strstr (err, "learn-ran"));
  g_assert_true (g_file_get_contents (existing, &text, NULL, NULL));
  g_assert_cmpstr (text, ==, "keep\n");
  g_clear_pointer (&text, g_free);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* an --output in a directory that does not exist, before the run */
  {
    g_autofree char *nowhere = g_build_filename (tree.tmp, "no-such-dir", "out.json", NULL);

    status = etu_run_sbx (&tree, NULL, &out, &err, "profile", "learn", "--output", nowhere, "--", "sh", "-c",
                          "echo learn-ran", NULL);
    g_assert_cmpint (status, ==, 1);
    g_assert_nonnull (strstr (err, "no-such-dir does not exist"));
    g_assert_null (strstr (err, "learn-ran"));
    g_clear_pointer (&out, g_free);
    g_clear_pointer (&err, g_free);
  }

  /* BASE is never written, --force or not */
  g_assert_true (g_file_get_contents (profile, &before, NULL, NULL));
  status = etu_run_sbx (&tree, NULL, &out, &err, "profile", "learn", "--profile", profile, "--output", profile,
                        "--force", "--", "true", NULL);
  g_assert_cmpint (status, ==, 1);
  g_assert_nonnull (strstr (err, "is BASE itself; learn never changes BASE"));
  g_assert_true (g_file_get_contents (profile, &text, NULL, NULL));
  g_assert_cmpstr (text, ==, before);
  g_clear_pointer (&text, g_free);
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* a missing BASE names the file */
  status = etu_run_sbx (&tree, NULL, &out, &err, "profile", "learn", "--profile", "no-such.json", "--", "true", NULL);
  g_assert_cmpint (status, ==, 1);
  g_assert_nonnull (strstr (err, "no-such.json"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  /* --force replaces another file with the changed profile */
  if (backend_runs (&tree, NULL))
    {
      status = etu_run_sbx (&tree, NULL, &out, &err, "profile", "learn", "--profile", profile, "--output", existing,
                            "--force", "--", "true", NULL);
      g_assert_cmpint (status, ==, 0);
      g_assert_true (g_file_get_contents (existing, &text, NULL, NULL));
      g_assert_nonnull (strstr (text, "\"command\" : \"allow\""));
    }
  etu_tree_clear (&tree);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/profile-learn-cli/network", test_network);
  g_test_add_data_func ("/profile-learn-cli/command-gate/rung1", "linux-userns", test_command_gate);
  g_test_add_data_func ("/profile-learn-cli/command-gate/rung2", "linux-landlock", test_command_gate);
  g_test_add_func ("/profile-learn-cli/filesystem", test_filesystem);
  g_test_add_func ("/profile-learn-cli/output-and-usage", test_output_and_usage);
  return g_test_run ();
}
