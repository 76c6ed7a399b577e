/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Per-run truth on the real Linux backend, on both rungs: the report of a
 * run is what held for that run, after its grants, not the executor's.
 *
 * Two grants take guarantees away from their spawn:
 *  - network.broad.v1 tcp:*:PORT on a gated network: the run reaches a
 *    listener on the host's 127.0.0.1:PORT (the test's own, on a port the
 *    kernel picked), so network-boundary and address-network do not hold;
 *  - filesystem.host.read.v1 host:* on a gated host: the run reads a file
 *    the test made outside every root, so read-boundary does not hold.
 * For each, through the library (the prepared process's report, the run
 * result's, the process's, the spawn event of a reporter) and through
 * `sbx run --report` (text and JSON): the run's report has scope "run",
 * lacks the guarantee, says which grant removed it, and calls nothing it
 * lacks enforced; the executor's report keeps the guarantee and has scope
 * "executor".  Every probe is shown to work outside the sandbox (the
 * positive control) and to fail inside without the grant.
 */
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "executor-test-util.h"

static const char *const rungs[] = { "linux-userns", "linux-landlock" };

typedef struct
{
  EtuTree         tree;
  const char     *backend;
  char           *host_dir;   /* outside every root, not under /tmp */
  char           *host_file;
  char           *log;        /* the jsonl reporter's file */
  char           *profile;    /* the same profile as JSON, for sbx run */
  SbxExecutorSet *set;
  SbxExecutor    *executor;
} Fx;

#define HOST_TEXT "H1-OUTSIDE-EVERY-ROOT\n"

static gboolean
fx_init (Fx         *fx,
         const char *backend)
{
  const char *dirs[] = { etu_plugin_dir ("linux"), etu_plugin_dir ("jsonl"), NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxRegistry) registry = sbx_registry_new_for_directories (dirs, &error);
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxExecutorSetOptions) options = NULL;
  g_autofree char *json = NULL;

  g_assert_no_error (error);
  memset (fx, 0, sizeof *fx);
  etu_tree_init (&fx->tree);
  fx->backend = backend;
  fx->host_dir = g_strdup ("/var/tmp/sbx-test-run-report-XXXXXX");
  g_assert_nonnull (g_mkdtemp (fx->host_dir));
  fx->host_file = g_build_filename (fx->host_dir, "host-file", NULL);
  g_assert_true (g_file_set_contents (fx->host_file, HOST_TEXT, -1, NULL));
  fx->log = g_build_filename (fx->tree.tmp, "events.jsonl", NULL);

  sbx_profile_config_set_workspace (config, fx->tree.ws, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_host (config, SBX_ACCESS_GATED, SBX_ACCESS_DENY);
  sbx_profile_config_set_network (config, SBX_ACCESS_GATED);
  sbx_profile_config_set_command (config, SBX_ACCESS_ALLOW);
  profile = sbx_profile_new (config, &error);
  g_assert_no_error (error);
  json = g_strdup_printf ("{\"version\": 1, \"workspace\": {\"root\": \"%s\", \"read\": \"allow\", "
                          "\"write\": \"allow\"}, \"host\": {\"read\": \"gated\", \"write\": \"deny\"}, "
                          "\"network\": \"gated\", \"command\": \"allow\"}", fx->tree.ws);
  fx->profile = etu_write_file (fx->tree.tmp, "profile.json", json);

  options = etu_options (fx->tree.scratch, 4, registry);
  sbx_executor_set_options_set_backend (options, backend);
  sbx_executor_set_options_add_reporter (options, "jsonl", fx->log);
  fx->set = sbx_executor_set_new (profile, options, &error);
  if (fx->set == NULL)
    {
      g_test_skip_printf ("%s is unavailable here: %s", backend, error->message);
      return FALSE;
    }
  fx->executor = sbx_executor_set_for_key (fx->set, "k", &error);
  g_assert_no_error (error);
  return TRUE;
}

static void
fx_clear (Fx *fx)
{
  if (fx->set != NULL)
    g_assert_true (sbx_executor_set_close (fx->set, NULL, NULL));
  g_clear_object (&fx->executor);
  g_clear_object (&fx->set);
  if (fx->host_dir != NULL)
    etu_rm_rf (fx->host_dir);
  g_free (fx->host_dir);
  g_free (fx->host_file);
  g_free (fx->log);
  g_free (fx->profile);
  etu_tree_clear (&fx->tree);
}

/* One scenario: a grant, the guarantees it takes, a probe that succeeds
 * only when they are gone. */
typedef struct
{
  const char   *name;
  const char   *grant_class;
  const char   *target;       /* a network target gets ":PORT", the listener's */
  SbxGuarantees removed;
  gboolean      network;      /* the probe connects to the listener */
} Scenario;

static const Scenario scenarios[] = {
  { "net-broad", SBX_GRANT_CLASS_NETWORK_BROAD, "tcp:*",
    SBX_GUARANTEE_NETWORK_BOUNDARY | SBX_GUARANTEE_ADDRESS_NETWORK, TRUE },
  { "host-read", SBX_GRANT_CLASS_FILESYSTEM_HOST_READ, "host:*", SBX_GUARANTEE_READ_BOUNDARY, FALSE },
};

typedef struct
{
  const Scenario *sc;
  GSocket        *listener;
  guint16         port;
  char           *target;     /* the grant's target */
  char           *grant;      /* "class:target", as the report names it */
  char           *script;
} Probe;

static void
probe_clear (Probe *p)
{
  g_clear_object (&p->listener);
  g_free (p->target);
  g_free (p->grant);
  g_free (p->script);
}

/* The probe, and its positive control: it works outside the sandbox. */
static void
probe_init (Probe          *p,
            const Scenario *sc,
            Fx             *fx)
{
  g_autoptr(GError) error = NULL;

  memset (p, 0, sizeof *p);
  p->sc = sc;
  if (sc->network)
    {
      g_autoptr(GInetAddress) lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
      g_autoptr(GSocketAddress) addr = g_inet_socket_address_new (lo, 0);
      g_autoptr(GSocketAddress) bound = NULL;
      g_autoptr(GSocket) client = NULL;

      p->listener = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP,
                                  &error);
      g_assert_no_error (error);
      g_assert_true (g_socket_bind (p->listener, addr, TRUE, &error));
      g_assert_true (g_socket_listen (p->listener, &error));
      bound = g_socket_get_local_address (p->listener, &error);
      g_assert_no_error (error);
      p->port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
      p->target = g_strdup_printf ("%s:%u", sc->target, p->port);
      p->script = g_strdup_printf ("python3 -c \"import socket; "
                                   "socket.create_connection(('127.0.0.1', %u), timeout=5); "
                                   "print('PROBE-OK')\" 2>/dev/null || echo PROBE-FAILED", p->port);
      /* Positive control: the listener takes a connection from here. */
      client = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, &error);
      g_assert_no_error (error);
      g_assert_true (g_socket_connect (client, bound, NULL, &error));
      g_assert_no_error (error);
    }
  else
    {
      g_autofree char *contents = NULL;

      p->target = g_strdup (sc->target);
      p->script = g_strdup_printf ("cat '%s' 2>/dev/null && echo PROBE-OK || echo PROBE-FAILED",
                                   fx->host_file);
      /* Positive control: the file reads from here. */
      g_assert_true (g_file_get_contents (fx->host_file, &contents, NULL, NULL));
      g_assert_cmpstr (contents, ==, HOST_TEXT);
    }
  p->grant = g_strdup_printf ("%s:%s", sc->grant_class, p->target);
}

/* The run's report: scope run, the removed guarantees absent and each named
 * with its grant, nothing it lacks called enforced. */
static void
assert_run_report (SbxCompileReport *report,
                   const Probe      *p,
                   SbxGuarantees     executor_bits)
{
  SbxGuarantees bits = sbx_compile_report_get_guarantees (report);

  g_assert_cmpint (sbx_compile_report_get_scope (report), ==, SBX_REPORT_SCOPE_RUN);
  g_assert_cmpuint (bits & p->sc->removed, ==, 0);
  g_assert_cmpuint (bits & ~executor_bits, ==, 0);
  for (SbxGuarantees bit = 1; bit <= SBX_GUARANTEES_ALL; bit <<= 1)
    {
      const char *name = sbx_guarantee_to_string (bit);
      gboolean named = FALSE;

      for (guint i = 0; i < sbx_compile_report_get_n_entries (report); i++)
        {
          const char *detail = sbx_compile_report_get_entry_detail (report, i);

          if (g_strcmp0 (sbx_compile_report_get_entry_feature (report, i), name) != 0)
            continue;
          /* Nothing the run lacks is called enforced. */
          if ((bits & bit) == 0)
            g_assert_cmpint (sbx_compile_report_get_entry_status (report, i), !=,
                             SBX_REPORT_STATUS_ENFORCED);
          if (detail != NULL && strstr (detail, p->grant) != NULL)
            named = TRUE;
        }
      if (bit & p->sc->removed & executor_bits)
        g_assert_true (named);
    }
}

static char *
output_of (SbxRunResult *result)
{
  gsize len;
  const char *data = g_bytes_get_data (sbx_run_result_get_output (result), &len);

  return data != NULL ? g_strndup (data, len) : g_strdup ("");
}

static char *
issue (Fx          *fx,
       const Probe *p,
       const char  *execution_id)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *command = sbx_grant_command_for_argv (SBX_SH_ARGV (p->script));
  char *token = sbx_executor_issue_grant (fx->executor, execution_id, command, fx->tree.ws,
                                          p->sc->grant_class, p->target, NULL, &error);

  g_assert_no_error (error);
  return token;
}

/* The spawn events of the reporter's log, in order. */
static GPtrArray *
spawn_events (Fx *fx)
{
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;
  GPtrArray *events = g_ptr_array_new_with_free_func ((GDestroyNotify) json_node_unref);

  g_assert_true (g_file_get_contents (fx->log, &text, NULL, NULL));
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();
      JsonObject *ev;

      if (lines[i][0] == '\0')
        continue;
      g_assert_true (json_parser_load_from_data (parser, lines[i], -1, NULL));
      ev = json_node_get_object (json_parser_get_root (parser));
      if (g_strcmp0 (json_object_get_string_member_with_default (ev, "event", ""), "spawn") == 0)
        g_ptr_array_add (events, json_node_copy (json_parser_get_root (parser)));
    }
  return events;
}

static gboolean
event_has_guarantee (JsonNode   *node,
                     const char *name)
{
  JsonArray *array = json_object_get_array_member (json_node_get_object (node), "guarantees");

  g_assert_nonnull (array);
  for (guint i = 0; i < json_array_get_length (array); i++)
    if (g_strcmp0 (json_array_get_string_element (array, i), name) == 0)
      return TRUE;
  return FALSE;
}

static void
test_library (gconstpointer data)
{
  const void *const *params = data;
  const char *backend = params[0];
  const Scenario *sc = params[1];
  g_autoptr(SbxRunResult) plain = NULL;
  g_autoptr(SbxRunResult) granted = NULL;
  g_autoptr(SbxPreparedProcess) prepared = NULL;
  g_autoptr(SbxRunOptions) options = NULL;
  g_autoptr(SbxProcess) process = NULL;
  g_autoptr(GPtrArray) events = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *token = NULL;
  g_autofree char *json = NULL;
  const char *tokens[2] = { NULL, NULL };
  SbxGuarantees executor_bits;
  Probe p;
  Fx fx;

  if (!fx_init (&fx, backend))
    {
      fx_clear (&fx);
      return;
    }
  probe_init (&p, sc, &fx);
  executor_bits = sbx_executor_get_guarantees (fx.executor);
  /* The executor holds what the grant will take: the executor's report
   * says so, and its scope says whose it is. */
  g_assert_cmpuint (executor_bits & sc->removed, ==, sc->removed & executor_bits);
  g_assert_true (executor_bits & sc->removed);
  g_assert_cmpint (sbx_compile_report_get_scope (sbx_executor_get_report (fx.executor)), ==,
                   SBX_REPORT_SCOPE_EXECUTOR);

  /* Without the grant the probe fails inside, and the run's report is the
   * executor's facts, as a run's. */
  plain = sbx_executor_run (fx.executor, fx.tree.ws, SBX_SH_ARGV (p.script), NULL, NULL, &error);
  g_assert_no_error (error);
  out = output_of (plain);
  g_test_message ("%s %s, no grant: %s", backend, sc->name, out);
  g_assert_nonnull (strstr (out, "PROBE-FAILED"));
  g_clear_pointer (&out, g_free);
  g_assert_cmpint (sbx_compile_report_get_scope (sbx_run_result_get_spawn_report (plain)), ==,
                   SBX_REPORT_SCOPE_RUN);
  g_assert_cmpuint (sbx_run_result_get_spawn_guarantees (plain), ==, executor_bits);
  g_assert_cmpuint (sbx_compile_report_get_guarantees (sbx_run_result_get_spawn_report (plain)), ==,
                    executor_bits);

  /* With it: prepared, its report is the run's, then run to its end. */
  token = issue (&fx, &p, "exec-prepared");
  tokens[0] = token;
  options = sbx_run_options_new ();
  sbx_run_options_set_execution_id (options, "exec-prepared");
  sbx_run_options_set_grants (options, tokens);
  prepared = sbx_executor_prepare (fx.executor, fx.tree.ws, SBX_SH_ARGV (p.script), options, NULL,
                                   &error);
  g_assert_no_error (error);
  assert_run_report (sbx_prepared_process_get_report (prepared), &p, executor_bits);
  json = sbx_compile_report_to_json (sbx_prepared_process_get_report (prepared));
  g_assert_nonnull (strstr (json, "\"scope\":\"run\""));
  granted = sbx_prepared_process_run (prepared, NULL, &error);
  g_assert_no_error (error);
  out = output_of (granted);
  g_test_message ("%s %s, %s: %s", backend, sc->name, p.grant, out);
  g_assert_nonnull (strstr (out, "PROBE-OK"));
  g_assert_true (sbx_run_result_get_spawn_report (granted) == sbx_prepared_process_get_report (prepared));
  g_assert_cmpuint (sbx_run_result_get_spawn_guarantees (granted) & sc->removed, ==, 0);
  g_assert_cmpint (sbx_run_result_get_spawn_level (granted), ==,
                   sbx_compile_report_get_level (sbx_run_result_get_spawn_report (granted)));
  /* The grant's spent line says what it removed. */
  g_assert_nonnull (strstr (sbx_run_result_get_grants_spent (granted)[0], "removed for this spawn: "));
  /* A prepared process runs once. */
  g_assert_null (sbx_prepared_process_run (prepared, NULL, &error));
  g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_ALREADY_STARTED);
  g_clear_error (&error);

  /* A process started with the grant says the same. */
  g_clear_pointer (&token, g_free);
  token = issue (&fx, &p, "exec-spawn");
  tokens[0] = token;
  sbx_run_options_set_execution_id (options, "exec-spawn");
  sbx_run_options_set_grants (options, tokens);
  process = sbx_executor_spawn (fx.executor, fx.tree.ws, SBX_SH_ARGV (p.script), options, NULL, &error);
  g_assert_no_error (error);
  assert_run_report (sbx_process_get_spawn_report (process), &p, executor_bits);
  g_assert_cmpuint (sbx_process_get_spawn_guarantees (process) & sc->removed, ==, 0);
  g_assert_cmpint (sbx_process_get_spawn_level (process), ==,
                   sbx_compile_report_get_level (sbx_process_get_spawn_report (process)));
  g_assert_true (sbx_process_wait (process, NULL, &error));
  g_assert_no_error (error);

  /* sbx_executor_run() with the grant: the same report in its result. */
  {
    g_autoptr(SbxRunResult) direct = NULL;

    g_clear_pointer (&token, g_free);
    token = issue (&fx, &p, "exec-run");
    tokens[0] = token;
    direct = etu_run_with_grants (fx.executor, fx.tree.ws, SBX_SH_ARGV (p.script), "exec-run", tokens,
                                  NULL, NULL, &error);
    g_assert_no_error (error);
    assert_run_report (sbx_run_result_get_spawn_report (direct), &p, executor_bits);
  }

  /* The executor is not widened by its runs. */
  g_assert_cmpuint (sbx_executor_get_guarantees (fx.executor), ==, executor_bits);

  /* The reporter's spawn events carry each spawn's guarantees: the first
   * (no grant) the executor's, the granted ones without the removed. */
  g_assert_true (sbx_executor_set_close (fx.set, NULL, NULL));
  events = spawn_events (&fx);
  g_assert_cmpuint (events->len, ==, 4);
  for (SbxGuarantees bit = 1; bit <= SBX_GUARANTEES_ALL; bit <<= 1)
    {
      if ((bit & sc->removed & executor_bits) == 0)
        continue;
      g_assert_true (event_has_guarantee (events->pdata[0], sbx_guarantee_to_string (bit)));
      for (guint i = 1; i < events->len; i++)
        g_assert_false (event_has_guarantee (events->pdata[i], sbx_guarantee_to_string (bit)));
    }
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (events->pdata[1]), "level"), ==,
                   sbx_level_to_string (sbx_run_result_get_spawn_level (granted)));

  probe_clear (&p);
  fx_clear (&fx);
}

/* ---- sbx run --report ---- */

typedef struct
{
  int   status;
  char *out;
  char *err;
} Outcome;

static Outcome
sbx_run (Fx                *fx,
         const char *const *args)
{
  g_autoptr(GSubprocessLauncher) l = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE
                                                                | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GError) error = NULL;
  Outcome o = { 0 };

  g_subprocess_launcher_setenv (l, "SBX_PLUGIN_PATH", etu_plugin_dir ("linux"), TRUE);
  g_subprocess_launcher_setenv (l, "TMPDIR", fx->tree.scratch, TRUE);
  g_subprocess_launcher_setenv (l, "SBX_BACKEND", fx->backend, TRUE);
  g_subprocess_launcher_set_cwd (l, fx->tree.ws);
  g_ptr_array_add (argv, (gpointer) g_getenv ("SBX_TEST_SBX"));
  g_ptr_array_add (argv, (gpointer) "run");
  for (; *args != NULL; args++)
    g_ptr_array_add (argv, (gpointer) *args);
  g_ptr_array_add (argv, NULL);
  proc = g_subprocess_launcher_spawnv (l, (const char *const *) argv->pdata, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_communicate_utf8 (proc, NULL, NULL, &o.out, &o.err, &error));
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (proc));
  o.status = g_subprocess_get_exit_status (proc);
  g_test_message ("sbx run: status %d, stdout: %s, stderr: %s", o.status, o.out, o.err);
  return o;
}

static void
outcome_clear (Outcome *o)
{
  g_free (o->out);
  g_free (o->err);
}

/* The first line of stderr as a report, scope run, checked as the library's. */
static void
assert_cli_json (const char    *err,
                 const Probe   *p,
                 SbxGuarantees  executor_bits)
{
  g_autofree char *line = g_strndup (err, strcspn (err, "\n"));
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonObject *report;
  JsonArray *array;
  gboolean named = FALSE;

  g_assert_true (json_parser_load_from_data (parser, line, -1, NULL));
  report = json_node_get_object (json_parser_get_root (parser));
  array = json_object_get_array_member (report, "guarantees");
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      SbxGuarantees bit = 0;

      g_assert_true (sbx_guarantee_from_string (json_array_get_string_element (array, i), &bit));
      g_assert_cmpuint (bit & p->sc->removed, ==, 0);
      g_assert_cmpuint (bit & ~executor_bits, ==, 0);
    }
  g_assert_cmpstr (json_object_get_string_member (report, "scope"), ==, "run");
  array = json_object_get_array_member (report, "entries");
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonObject *entry = json_array_get_object_element (array, i);
      SbxGuarantees bit = 0;

      if (!sbx_guarantee_from_string (json_object_get_string_member (entry, "feature"), &bit)
          || (bit & p->sc->removed) == 0)
        continue;
      g_assert_cmpstr (json_object_get_string_member (entry, "status"), !=, "enforced");
      if (!json_object_get_null_member (entry, "detail")
          && strstr (json_object_get_string_member (entry, "detail"), p->grant) != NULL)
        named = TRUE;
    }
  g_assert_true (named);
}

static void
test_cli (gconstpointer data)
{
  const void *const *params = data;
  const char *backend = params[0];
  const Scenario *sc = params[1];
  g_autofree char *approve = NULL;
  SbxGuarantees executor_bits;
  Probe p;
  Fx fx;

  if (!fx_init (&fx, backend))
    {
      fx_clear (&fx);
      return;
    }
  probe_init (&p, sc, &fx);
  executor_bits = sbx_executor_get_guarantees (fx.executor);
  approve = g_strdup_printf ("--approve=%s", p.grant);
  {
    const char *args[] = { "--profile", fx.profile, "--report=json", approve, "--", "sh", "-c", p.script,
                           NULL };
    Outcome o = sbx_run (&fx, args);

    g_assert_cmpint (o.status, ==, 0);
    g_assert_nonnull (strstr (o.out, "PROBE-OK"));
    assert_cli_json (o.err, &p, executor_bits);
    /* After the run, what the grant removed. */
    g_assert_nonnull (strstr (o.err, "{\"grants_spent\":["));
    g_assert_nonnull (strstr (o.err, "removed for this spawn: "));
    outcome_clear (&o);
  }
  {
    /* Without the grant: the report is still the run's, the probe fails. */
    const char *args[] = { "--profile", fx.profile, "--report=json", "--", "sh", "-c", p.script, NULL };
    Outcome o = sbx_run (&fx, args);

    g_assert_cmpint (o.status, ==, 0);
    g_assert_nonnull (strstr (o.out, "PROBE-FAILED"));
    g_assert_true (g_str_has_prefix (o.err, "{\"schema\":1,\"scope\":\"run\","));
    outcome_clear (&o);
  }
  {
    const char *args[] = { "--profile", fx.profile, "--report", approve, "--", "sh", "-c", p.script, NULL };
    Outcome o = sbx_run (&fx, args);
    g_autofree char *guarantees = NULL;
    const char *line;

    g_assert_cmpint (o.status, ==, 0);
    g_assert_nonnull (strstr (o.out, "PROBE-OK"));
    g_assert_true (g_str_has_prefix (o.err, "report:     run "));
    line = strstr (o.err, "\nguarantees: ");
    g_assert_nonnull (line);
    guarantees = g_strndup (line + 1, strcspn (line + 1, "\n"));
    for (SbxGuarantees bit = 1; bit <= SBX_GUARANTEES_ALL; bit <<= 1)
      if (bit & sc->removed)
        {
          g_autofree char *removed = g_strdup_printf ("  unenforced %s: removed for this run by grant %s",
                                                      sbx_guarantee_to_string (bit), p.grant);
          g_autofree char *claimed = g_strdup_printf ("  enforced   %s:", sbx_guarantee_to_string (bit));

          g_assert_null (strstr (guarantees, sbx_guarantee_to_string (bit)));
          g_assert_null (strstr (o.err, claimed));
          if (bit & executor_bits)
            g_assert_nonnull (strstr (o.err, removed));
        }
    g_assert_nonnull (strstr (o.err, "Grants spent:\n"));
    outcome_clear (&o);
  }
  probe_clear (&p);
  fx_clear (&fx);
}

int
main (int    argc,
      char **argv)
{
  static const void *params[G_N_ELEMENTS (rungs)][G_N_ELEMENTS (scenarios)][2];

  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  for (guint r = 0; r < G_N_ELEMENTS (rungs); r++)
    for (guint s = 0; s < G_N_ELEMENTS (scenarios); s++)
      {
        g_autofree char *lib = g_strdup_printf ("/linux/run-report/%s/%s/library", rungs[r],
                                                scenarios[s].name);
        g_autofree char *cli = g_strdup_printf ("/linux/run-report/%s/%s/cli", rungs[r],
                                                scenarios[s].name);

        params[r][s][0] = rungs[r];
        params[r][s][1] = &scenarios[s];
        g_test_add_data_func (lib, params[r][s], test_library);
        g_test_add_data_func (cli, params[r][s], test_cli);
      }
  return g_test_run ();
}
