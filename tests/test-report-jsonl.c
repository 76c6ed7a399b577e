/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The "jsonl" reporter: the file it writes parses line by line, one JSON
 * object per event, with one spawn and one exit event per run, also under
 * concurrent runs; it is created 0600; a reporter that cannot open fails the
 * set; a malformed event is refused and counted, never written.
 */
#include <json-glib/json-glib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx-executor-private.h"
#include "sbx-registry-private.h"
#include "executor-test-util.h"

typedef struct
{
  EtuTree      tree;
  SbxRegistry *registry;
  char        *log;
  guint        fds_before;
} Fixture;

static void
fixture_setup (Fixture       *fx,
               gconstpointer  data)
{
  fx->fds_before = etu_count_fds ();
  etu_tree_init (&fx->tree);
  fx->registry = etu_registry ("unconfined", "jsonl", NULL);
  fx->log = g_build_filename (fx->tree.tmp, "audit.jsonl", NULL);
}

static void
fixture_teardown (Fixture       *fx,
                  gconstpointer  data)
{
  g_clear_object (&fx->registry);
  etu_tree_clear (&fx->tree);
  g_free (fx->log);
  g_assert_cmpuint (etu_count_children (), ==, 0);
  g_assert_cmpuint (etu_count_fds (), ==, fx->fds_before);
}

static SbxExecutorSet *
new_set (Fixture *fx)
{
  g_autoptr(SbxProfile) profile = etu_profile_unconfined (fx->tree.ws, SBX_ACCESS_ALLOW);
  g_autoptr(SbxExecutorSetOptions) options = etu_options (fx->tree.scratch, 4, fx->registry);
  g_autoptr(GError) error = NULL;
  SbxExecutorSet *set;

  sbx_executor_set_options_add_reporter (options, "jsonl", fx->log);
  set = sbx_executor_set_new (profile, options, &error);
  g_assert_no_error (error);
  return set;
}

/* Parses the log: every line one JSON object with schema 1.  Returns the
 * objects (JsonObject*, owned by the array). */
static GPtrArray *
read_events (const char *path)
{
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;
  GPtrArray *events = g_ptr_array_new_with_free_func ((GDestroyNotify) json_object_unref);
  gsize len;

  g_assert_true (g_file_get_contents (path, &contents, &len, NULL));
  g_assert_true (len == 0 || contents[len - 1] == '\n');
  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();
      g_autoptr(GError) error = NULL;
      JsonObject *object;

      if (lines[i][0] == '\0' && lines[i + 1] == NULL)
        break;   /* after the final newline */
      if (!json_parser_load_from_data (parser, lines[i], -1, &error))
        g_error ("line %u is not JSON (%s): %s", i + 1, error->message, lines[i]);
      g_assert_true (JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)));
      object = json_node_get_object (json_parser_get_root (parser));
      g_assert_cmpint (json_object_get_int_member (object, "schema"), ==, 1);
      g_assert_nonnull (json_object_get_string_member (object, "event"));
      g_assert_nonnull (json_object_get_string_member (object, "time"));
      g_assert_nonnull (json_object_get_string_member (object, "set"));
      g_ptr_array_add (events, json_object_ref (object));
    }
  return events;
}

static guint
count_events (GPtrArray  *events,
              const char *name)
{
  guint n = 0;

  for (guint i = 0; i < events->len; i++)
    if (g_str_equal (json_object_get_string_member (events->pdata[i], "event"), name))
      n++;
  return n;
}

static JsonObject *
find_event (GPtrArray  *events,
            const char *name,
            gint64      run)
{
  for (guint i = 0; i < events->len; i++)
    {
      JsonObject *object = events->pdata[i];

      if (g_str_equal (json_object_get_string_member (object, "event"), name)
          && (run < 0 || json_object_get_int_member_with_default (object, "run", -1) == run))
        return object;
    }
  return NULL;
}

static void
test_events (Fixture       *fx,
             gconstpointer  data)
{
  g_autoptr(SbxExecutorSet) set = new_set (fx);
  g_autoptr(SbxExecutor) executor = NULL;
  g_autoptr(SbxRunResult) ok = NULL;
  g_autoptr(SbxRunResult) killed = NULL;
  g_autoptr(SbxRunResult) missing = NULL;
  g_autoptr(GPtrArray) events = NULL;
  g_autoptr(GError) error = NULL;
  const char *argv_ok[] = { "sh", "-c", "exit 2", NULL };
  const char *argv_kill[] = { "sh", "-c", "kill -KILL $$", NULL };
  const char *argv_missing[] = { "sbx-no-such-command", NULL };
  JsonObject *created;
  JsonObject *spawn;
  JsonObject *exit_event;
  JsonArray *argv;
  struct stat st;

  executor = sbx_executor_set_for_key (set, "agent", &error);
  g_assert_no_error (error);
  ok = sbx_executor_run (executor, fx->tree.ws, argv_ok, NULL, NULL, &error);
  g_assert_no_error (error);
  killed = sbx_executor_run (executor, fx->tree.ws, argv_kill, NULL, NULL, &error);
  g_assert_no_error (error);
  missing = sbx_executor_run (executor, fx->tree.ws, argv_missing, NULL, NULL, &error);
  g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_true (sbx_executor_set_close (set, NULL, &error));

  g_assert_cmpint (stat (fx->log, &st), ==, 0);
  g_assert_cmpuint (st.st_mode & 0777, ==, 0600);
  events = read_events (fx->log);
  g_assert_cmpuint (events->len, ==, 7);
  g_assert_cmpuint (count_events (events, "executor-created"), ==, 1);
  g_assert_cmpuint (count_events (events, "spawn"), ==, 3);
  g_assert_cmpuint (count_events (events, "exit"), ==, 3);

  created = find_event (events, "executor-created", -1);
  g_assert_cmpstr (json_object_get_string_member (created, "executor"), ==, "agent");
  g_assert_cmpstr (json_object_get_string_member (created, "backend"), ==, "unconfined");
  g_assert_cmpstr (json_object_get_string_member (created, "level"), ==, "none");
  g_assert_true (json_object_has_member (created, "report"));
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (created, "report"),
                                                  "backend"), ==, "unconfined");

  spawn = find_event (events, "spawn", 1);
  g_assert_nonnull (spawn);
  argv = json_object_get_array_member (spawn, "argv");
  g_assert_cmpuint (json_array_get_length (argv), ==, 3);
  g_assert_cmpstr (json_array_get_string_element (argv, 2), ==, "exit 2");
  g_assert_cmpstr (json_object_get_string_member (spawn, "cwd"), ==, fx->tree.ws);
  exit_event = find_event (events, "exit", 1);
  g_assert_cmpint (json_object_get_int_member (exit_event, "exit_code"), ==, 2);
  g_assert_false (json_object_has_member (exit_event, "signal"));
  g_assert_false (json_object_get_boolean_member (exit_event, "truncated"));
  g_assert_cmpstr (json_object_get_string_member (exit_event, "outcome"), ==, "exited");
  g_assert_true (json_object_has_member (exit_event, "duration_ms"));

  exit_event = find_event (events, "exit", 2);
  g_assert_cmpint (json_object_get_int_member (exit_event, "signal"), ==, 9);
  g_assert_false (json_object_has_member (exit_event, "exit_code"));

  exit_event = find_event (events, "exit", 3);
  g_assert_cmpstr (json_object_get_string_member (exit_event, "outcome"), ==, "spawn-failed");
  g_assert_nonnull (json_object_get_string_member (exit_event, "error"));

  /* All events name the same set. */
  for (guint i = 1; i < events->len; i++)
    g_assert_cmpstr (json_object_get_string_member (events->pdata[i], "set"), ==,
                     json_object_get_string_member (events->pdata[0], "set"));
}

typedef struct
{
  SbxExecutor *executor;
  const char  *cwd;
} Worker;

static gpointer
worker (gpointer data)
{
  Worker *w = data;

  for (guint i = 0; i < 10; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(SbxRunResult) result = sbx_executor_run (w->executor, w->cwd, SBX_SH_ARGV ("echo x"), NULL, NULL, &error);

      g_assert_no_error (error);
      g_assert_nonnull (result);
    }
  return NULL;
}

/* 8 threads x 10 runs: 80 spawn and 80 exit lines, none torn. */
static void
test_concurrent_lines (Fixture       *fx,
                       gconstpointer  data)
{
  g_autoptr(SbxExecutorSet) set = new_set (fx);
  g_autoptr(SbxExecutor) a = NULL;
  g_autoptr(SbxExecutor) b = NULL;
  g_autoptr(GPtrArray) events = NULL;
  g_autoptr(GError) error = NULL;
  GThread *threads[8];
  Worker workers[8];

  a = sbx_executor_set_for_key (set, "a", &error);
  g_assert_no_error (error);
  b = sbx_executor_set_for_key (set, "b", &error);
  g_assert_no_error (error);
  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    {
      workers[i] = (Worker) { i % 2 ? a : b, fx->tree.ws };
      threads[i] = g_thread_new ("worker", worker, &workers[i]);
    }
  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    g_thread_join (threads[i]);
  g_assert_true (sbx_executor_set_close (set, NULL, &error));

  events = read_events (fx->log);
  g_assert_cmpuint (count_events (events, "executor-created"), ==, 2);
  g_assert_cmpuint (count_events (events, "spawn"), ==, 80);
  g_assert_cmpuint (count_events (events, "exit"), ==, 80);
  /* Every run id has exactly one spawn and one exit. */
  for (gint64 run = 1; run <= 80; run++)
    {
      g_assert_nonnull (find_event (events, "spawn", run));
      g_assert_nonnull (find_event (events, "exit", run));
    }
}

/* The log is appended to, never truncated, by a second set. */
static void
test_appends (Fixture       *fx,
              gconstpointer  data)
{
  g_autoptr(GPtrArray) events = NULL;
  g_autoptr(GError) error = NULL;

  for (guint round = 0; round < 2; round++)
    {
      g_autoptr(SbxExecutorSet) set = new_set (fx);
      g_autoptr(SbxExecutor) executor = sbx_executor_set_for_key (set, "k", &error);

      g_assert_no_error (error);
      g_assert_nonnull (executor);
      g_assert_true (sbx_executor_set_close (set, NULL, &error));
    }
  events = read_events (fx->log);
  g_assert_cmpuint (count_events (events, "executor-created"), ==, 2);
}

static void
test_open_failure_fails_set (Fixture       *fx,
                             gconstpointer  data)
{
  g_autoptr(SbxProfile) profile = etu_profile_unconfined (fx->tree.ws, SBX_ACCESS_ALLOW);
  g_autoptr(SbxExecutorSetOptions) options = etu_options (fx->tree.scratch, 1, fx->registry);
  g_autofree char *bad = g_build_filename (fx->tree.tmp, "no-such-dir", "audit.jsonl", NULL);
  g_autoptr(SbxExecutorSet) set = NULL;
  g_autoptr(GError) error = NULL;

  sbx_executor_set_options_add_reporter (options, "jsonl", bad);
  set = sbx_executor_set_new (profile, options, &error);
  g_assert_null (set);
  g_assert_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_REPORTER);
  g_assert_nonnull (strstr (error->message, "no-such-dir"));
  g_clear_error (&error);

  /* An unknown reporter name, and a missing config, fail the same way. */
  g_clear_pointer (&options, sbx_executor_set_options_free);
  options = etu_options (fx->tree.scratch, 1, fx->registry);
  sbx_executor_set_options_add_reporter (options, "no-such-reporter", fx->log);
  set = sbx_executor_set_new (profile, options, &error);
  g_assert_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_REPORTER);
  g_clear_error (&error);
  g_clear_pointer (&options, sbx_executor_set_options_free);
  options = etu_options (fx->tree.scratch, 1, fx->registry);
  sbx_executor_set_options_add_reporter (options, "jsonl", NULL);
  set = sbx_executor_set_new (profile, options, &error);
  g_assert_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_REPORTER);
  g_assert_false (g_file_test (fx->log, G_FILE_TEST_EXISTS));
}

/* The plugin refuses what is not one line of one object; the host counts it. */
static void
test_plugin_refuses_bad_events (Fixture       *fx,
                                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  SbxReporterSink *sink = sbx_registry_open_reporter (fx->registry, "jsonl", fx->log, &error);
  g_autoptr(GPtrArray) events = NULL;

  g_assert_no_error (error);
  sbx_reporter_sink_emit (sink, "{\"schema\":1,\"event\":\"a\",\"time\":\"t\",\"set\":\"s\"}");
  g_assert_cmpuint (sbx_reporter_sink_get_n_failures (sink), ==, 0);
  sbx_reporter_sink_emit (sink, "{\"schema\":1,\n\"event\":\"torn\"}");
  sbx_reporter_sink_emit (sink, "[1,2]");
  sbx_reporter_sink_emit (sink, "");
  g_assert_cmpuint (sbx_reporter_sink_get_n_failures (sink), ==, 3);
  sbx_reporter_sink_close (sink);

  events = read_events (fx->log);
  g_assert_cmpuint (events->len, ==, 1);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  if (!g_test_subprocess ())
    etu_warm_up ();

#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("/report-jsonl/events", test_events);
  ADD ("/report-jsonl/concurrent-lines", test_concurrent_lines);
  ADD ("/report-jsonl/appends", test_appends);
  ADD ("/report-jsonl/open-failure-fails-set", test_open_failure_fails_set);
  ADD ("/report-jsonl/plugin-refuses-bad-events", test_plugin_refuses_bad_events);
#undef ADD

  return g_test_run ();
}
