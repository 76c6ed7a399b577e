/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The compile report, reporter sinks and the registry listed as JSON
 * (core/plugin/sbx-compile-report.c, sbx-reporter-sink.c, sbx-registry.c).
 */
#include <sbx/sbx.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "sbx-plugin-host-private.h"
#include "sbx-plugin-loader-private.h"
#include "executor-test-util.h"
#include "registry-list-util.h"
#include "registry-test-util.h"

/* Compile report                                                             */
/* ------------------------------------------------------------------------- */

static void
test_report_json_shape (void)
{
  g_autoptr(SbxCompileReport) report = sbx_compile_report_new ();
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *json = NULL;
  g_autofree char *text = NULL;
  g_autofree char *empty_json = NULL;
  g_autoptr(SbxCompileReport) empty = sbx_compile_report_new ();
  JsonObject *root;
  JsonArray *array;
  JsonObject *entry;

  sbx_compile_report_set_backend (report, "linux-userns");
  sbx_compile_report_set_level (report, SBX_LEVEL_FULL);
  sbx_compile_report_set_guarantees (report, SBX_GUARANTEE_WRITE_BOUNDARY | SBX_GUARANTEE_ENV_SCRUB);
  sbx_compile_report_set_required (report, SBX_GUARANTEE_ENV_SCRUB);
  g_assert_true (sbx_compile_report_add_entry (report, "write-boundary", SBX_REPORT_STATUS_ENFORCED, NULL));
  g_assert_true (sbx_compile_report_add_entry (report, "network", SBX_REPORT_STATUS_UNENFORCED,
                                               "open network. Hint: \"quotes\" \n and newline"));
  sbx_compile_report_add_rejected (report, "mock-x", "probe failed: nope");
  sbx_compile_report_add_root (report, "workspace", "/src/app", SBX_ACCESS_ALLOW, SBX_ACCESS_DENY);
  sbx_compile_report_freeze (report);
  g_assert_true (sbx_compile_report_is_frozen (report));
  g_assert_cmpuint (sbx_compile_report_get_n_roots (report), ==, 1);
  g_assert_cmpstr (sbx_compile_report_get_root_kind (report, 0), ==, "workspace");
  g_assert_cmpstr (sbx_compile_report_get_root_path (report, 0), ==, "/src/app");

  json = sbx_compile_report_to_json (report);
  g_assert_null (strchr (json, '\n'));
  g_assert_true (json_parser_load_from_data (parser, json, -1, &error));
  g_assert_no_error (error);
  root = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpuint (json_object_get_size (root), ==, 9);
  /* A report made here belongs to no executor and no run. */
  g_assert_cmpint (sbx_compile_report_get_scope (report), ==, SBX_REPORT_SCOPE_NONE);
  g_assert_cmpstr (json_object_get_string_member (root, "scope"), ==, "none");
  array = json_object_get_array_member (root, "roots");
  g_assert_cmpuint (json_array_get_length (array), ==, 1);
  entry = json_array_get_object_element (array, 0);
  g_assert_cmpuint (json_object_get_size (entry), ==, 4);
  g_assert_cmpstr (json_object_get_string_member (entry, "kind"), ==, "workspace");
  g_assert_cmpstr (json_object_get_string_member (entry, "path"), ==, "/src/app");
  g_assert_cmpstr (json_object_get_string_member (entry, "read"), ==, "allow");
  g_assert_cmpstr (json_object_get_string_member (entry, "write"), ==, "deny");
  g_assert_cmpint (json_object_get_int_member (root, "schema"), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (root, "backend"), ==, "linux-userns");
  g_assert_cmpstr (json_object_get_string_member (root, "level"), ==, "full");
  array = json_object_get_array_member (root, "guarantees");
  g_assert_cmpuint (json_array_get_length (array), ==, 2);
  g_assert_cmpstr (json_array_get_string_element (array, 0), ==, "write-boundary");
  g_assert_cmpstr (json_array_get_string_element (array, 1), ==, "env-scrub");
  array = json_object_get_array_member (root, "required");
  g_assert_cmpuint (json_array_get_length (array), ==, 1);
  g_assert_cmpstr (json_array_get_string_element (array, 0), ==, "env-scrub");
  array = json_object_get_array_member (root, "entries");
  g_assert_cmpuint (json_array_get_length (array), ==, 2);
  entry = json_array_get_object_element (array, 0);
  g_assert_cmpuint (json_object_get_size (entry), ==, 3);
  g_assert_cmpstr (json_object_get_string_member (entry, "feature"), ==, "write-boundary");
  g_assert_cmpstr (json_object_get_string_member (entry, "status"), ==, "enforced");
  g_assert_true (json_object_get_null_member (entry, "detail"));
  entry = json_array_get_object_element (array, 1);
  g_assert_cmpstr (json_object_get_string_member (entry, "status"), ==, "unenforced");
  g_assert_cmpstr (json_object_get_string_member (entry, "detail"), ==, "open network. Hint: \"quotes\" \n and newline");
  array = json_object_get_array_member (root, "rejected");
  g_assert_cmpuint (json_array_get_length (array), ==, 1);
  entry = json_array_get_object_element (array, 0);
  g_assert_cmpstr (json_object_get_string_member (entry, "backend"), ==, "mock-x");
  g_assert_cmpstr (json_object_get_string_member (entry, "reason"), ==, "probe failed: nope");

  text = sbx_compile_report_to_text (report);
  g_assert_true (g_str_has_prefix (text, "report:     none "));
  g_assert_nonnull (strstr (text, "backend:    linux-userns\n"));
  g_assert_nonnull (strstr (text, "level:      full\n"));
  g_assert_nonnull (strstr (text, "guarantees: write-boundary, env-scrub\n"));
  g_assert_nonnull (strstr (text, "  enforced   write-boundary\n"));
  g_assert_nonnull (strstr (text, "  unenforced network: open network."));
  g_assert_nonnull (strstr (text, "rejected:\n  mock-x: probe failed: nope\n"));
  g_assert_nonnull (strstr (text, "roots:\n  workspace  /src/app (read allow, write deny)\n"));

  /* An empty report: backend null, empty arrays. */
  sbx_compile_report_freeze (empty);
  empty_json = sbx_compile_report_to_json (empty);
  g_assert_cmpstr (empty_json, ==,
                   "{\"schema\":1,\"scope\":\"none\",\"backend\":null,\"level\":\"none\",\"guarantees\":[],\"required\":[],"
                   "\"entries\":[],\"roots\":[],\"rejected\":[]}");
}

static void
test_report_statuses_and_caps (void)
{
  g_autoptr(SbxCompileReport) report = sbx_compile_report_new ();
  g_autoptr(GString) long_text = g_string_new (NULL);

  g_assert_cmpstr (sbx_report_status_to_string (SBX_REPORT_STATUS_ENFORCED), ==, "enforced");
  g_assert_cmpstr (sbx_report_status_to_string (SBX_REPORT_STATUS_NARROWED), ==, "narrowed");
  g_assert_cmpstr (sbx_report_status_to_string (SBX_REPORT_STATUS_UNENFORCED), ==, "unenforced");
  g_assert_cmpstr (sbx_report_status_to_string (SBX_REPORT_STATUS_WIDENED), ==, "widened");
  g_assert_cmpstr (sbx_report_status_to_string (SBX_REPORT_STATUS_VACUOUS), ==, "vacuous");
  g_assert_null (sbx_report_status_to_string ((SbxReportStatus) 0));
  g_assert_null (sbx_report_status_to_string ((SbxReportStatus) 6));

  for (guint i = 0; i < SBX_COMPILE_REPORT_MAX_ENTRIES; i++)
    g_assert_true (sbx_compile_report_add_entry (report, "f", SBX_REPORT_STATUS_ENFORCED, NULL));
  g_assert_false (sbx_compile_report_add_entry (report, "f", SBX_REPORT_STATUS_ENFORCED, NULL));
  g_assert_cmpuint (sbx_compile_report_get_n_entries (report), ==, SBX_COMPILE_REPORT_MAX_ENTRIES);

  g_clear_pointer (&report, sbx_compile_report_unref);
  report = sbx_compile_report_new ();
  for (guint i = 0; i < SBX_COMPILE_REPORT_MAX_TEXT; i++)
    g_string_append (long_text, "\xc3\xa9");  /* 2 bytes each */
  g_assert_true (sbx_compile_report_add_entry (report, "f", SBX_REPORT_STATUS_ENFORCED, long_text->str));
  g_assert_true (sbx_compile_report_add_entry (report, "g", SBX_REPORT_STATUS_ENFORCED, "bad \xff utf8"));
  g_assert_cmpuint (strlen (sbx_compile_report_get_entry_detail (report, 0)), ==, SBX_COMPILE_REPORT_MAX_TEXT);
  g_assert_true (g_utf8_validate (sbx_compile_report_get_entry_detail (report, 0), -1, NULL));
  g_assert_true (g_utf8_validate (sbx_compile_report_get_entry_detail (report, 1), -1, NULL));
  g_assert_true (G_TYPE_IS_BOXED (SBX_TYPE_COMPILE_REPORT));
}

static void
test_report_from_selection_json (void)
{
  g_autoptr(SbxRegistry) registry = etu_registry ("ok", "probe-short", NULL);
  g_autoptr(SbxCompileReport) report = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *json = NULL;
  JsonObject *root;
  JsonObject *rejected;

  g_assert_true (sbx_registry_preview_selection (registry, SBX_ISOLATION_SANDBOXED, DEFAULT_SANDBOXED_REQUIRED,
                                                 &report, &error));
  g_assert_no_error (error);
  g_assert_true (sbx_compile_report_is_frozen (report));
  json = sbx_compile_report_to_json (report);
  g_assert_true (json_parser_load_from_data (parser, json, -1, &error));
  root = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpstr (json_object_get_string_member (root, "backend"), ==, "mock-ok");
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (root, "required")), ==, 4);
  rejected = json_array_get_object_element (json_object_get_array_member (root, "rejected"), 0);
  g_assert_cmpstr (json_object_get_string_member (rejected, "backend"), ==, "mock-probe-short");
  g_assert_true (g_str_has_prefix (json_object_get_string_member (rejected, "reason"), "missing required guarantees"));
}

/* ------------------------------------------------------------------------- */
/* Reporter sinks                                                             */
/* ------------------------------------------------------------------------- */

static void
test_reporter_sink (void)
{
  g_autoptr(SbxRegistry) registry = etu_registry ("ok", NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *tmpdir = rtu_make_tmpdir ();
  g_autofree char *log = g_build_filename (tmpdir, "events.jsonl", NULL);
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;
  SbxReporterSink *sink;

  sink = sbx_registry_open_reporter (registry, "mock-ok-reporter", log, &error);
  g_assert_no_error (error);
  sbx_reporter_sink_emit (sink, "{\"schema\":1,\"event\":\"a\"}");
  sbx_reporter_sink_emit (sink, "{\"schema\":1,\"event\":\"b\"}");
  g_assert_cmpuint (sbx_reporter_sink_get_n_failures (sink), ==, 0);
  sbx_reporter_sink_close (sink);
  g_assert_true (g_file_get_contents (log, &contents, NULL, NULL));
  lines = g_strsplit (contents, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 3);
  g_assert_cmpstr (lines[0], ==, "{\"schema\":1,\"event\":\"a\"}");
  g_assert_cmpstr (lines[2], ==, "");

  /* A failing reporter: counted, and nothing propagates. */
  sink = sbx_registry_open_reporter (registry, "mock-ok-reporter", "fail", &error);
  g_assert_no_error (error);
  sbx_reporter_sink_emit (sink, "{\"schema\":1}");
  sbx_reporter_sink_emit (sink, "{\"schema\":1}");
  g_assert_cmpuint (sbx_reporter_sink_get_n_failures (sink), ==, 2);
  sbx_reporter_sink_close (sink);
  sbx_reporter_sink_close (NULL);

  g_assert_null (sbx_registry_open_reporter (registry, "mock-ok-reporter", NULL, &error));
  g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "plugin 'mock-ok', extension 'mock-ok-reporter': open failed"));
  g_clear_error (&error);
  g_assert_null (sbx_registry_open_reporter (registry, "mock-ok", "x", &error));  /* a backend, not a reporter */
  g_assert_error (error, SBX_PLUGIN_ERROR, SBX_PLUGIN_ERROR_UNAVAILABLE);
  g_unlink (log);
  rtu_remove_tree (tmpdir);
}

/* ------------------------------------------------------------------------- */
/* Listing as JSON                                                            */
/* ------------------------------------------------------------------------- */

static void
test_registry_json (void)
{
  g_autoptr(SbxRegistry) registry = etu_registry ("ok", "abi-too-new", "probe-fails", NULL);
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *json = sbx_registry_to_json (registry);
  JsonObject *root;
  JsonArray *plugins;
  JsonArray *backends;
  JsonObject *object;
  JsonObject *probe;

  g_assert_nonnull (json);
  g_assert_true (json_parser_load_from_data (parser, json, -1, &error));
  g_assert_no_error (error);
  root = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpint (json_object_get_int_member (root, "schema"), ==, 1);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (root, "directories")), ==, 3);

  plugins = json_object_get_array_member (root, "plugins");
  g_assert_cmpuint (json_array_get_length (plugins), ==, 3);
  object = json_array_get_object_element (plugins, 0);
  g_assert_cmpstr (json_object_get_string_member (object, "name"), ==, "mock-ok");
  g_assert_cmpstr (json_object_get_string_member (object, "state"), ==, "loaded");
  g_assert_true (json_object_get_null_member (object, "error"));
  object = json_array_get_object_element (plugins, 1);
  g_assert_cmpstr (json_object_get_string_member (object, "name"), ==, "mock-abi-too-new");
  g_assert_cmpstr (json_object_get_string_member (object, "state"), ==, "refused");
  g_assert_cmpstr (json_object_get_string_member (object, "error_code"), ==, "abi-mismatch");
  g_assert_nonnull (strstr (json_object_get_string_member (object, "error"), "ABI version 2"));

  backends = json_object_get_array_member (root, "backends");
  g_assert_cmpuint (json_array_get_length (backends), ==, 2);
  object = json_array_get_object_element (backends, 0);
  g_assert_cmpstr (json_object_get_string_member (object, "name"), ==, "mock-ok");
  g_assert_cmpint (json_object_get_int_member (object, "priority"), ==, 10);
  probe = json_object_get_object_member (object, "probe");
  g_assert_true (json_object_get_boolean_member (probe, "ok"));
  g_assert_cmpstr (json_object_get_string_member (probe, "level"), ==, "full");
  g_assert_false (json_object_get_boolean_member (probe, "unconfined_only"));
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (probe, "guarantees")), ==, 8);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (probe, "entries")), ==, 1);
  object = json_array_get_object_element (backends, 1);
  probe = json_object_get_object_member (object, "probe");
  g_assert_false (json_object_get_boolean_member (probe, "ok"));
  g_assert_cmpstr (json_object_get_string_member (probe, "error_code"), ==, "unavailable");

  /* No egress: none of the listed mocks has an egress extension. */
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (root, "egress")), ==, 0);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (root, "reporters")), ==, 1);
}

void
registry_tests_add_report (void)
{
  g_test_add_func ("/registry/report/json-shape", test_report_json_shape);
  g_test_add_func ("/registry/report/statuses-and-caps", test_report_statuses_and_caps);
  g_test_add_func ("/registry/report/from-selection", test_report_from_selection_json);
  g_test_add_func ("/registry/reporter/sink", test_reporter_sink);
  g_test_add_func ("/registry/json", test_registry_json);
}
