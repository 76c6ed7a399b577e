/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx doctor [--json]: what this host and this installation can do.
 *
 * Lists the plugin directories searched, every plugin found (and why one was
 * refused), each backend's probe (level, guarantees, one entry per mechanism
 * with its hint), the egress and reporter extensions, and which backend a
 * default Sandboxed profile would get here, with what level and guarantees,
 * and which mechanism bounds processes and memory sandbox-wide for root and
 * for an unprivileged user (the backends' "cgroup-for-root" and
 * "cgroup-for-user" probe entries).
 *
 * Exit status: 0 when a backend can run the default Sandboxed profile, 1 when
 * none can (everything is still printed), 2 usage error.
 */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdio.h>

#include <sbx/sbx.h>

#include "sbx-cmds.h"

static char *
join_guarantees (SbxGuarantees guarantees)
{
  g_auto(GStrv) names = sbx_guarantees_to_strv (guarantees);

  if (names[0] == NULL)
    return g_strdup ("(none)");
  return g_strjoinv (", ", names);
}

static int
compare_priority (gconstpointer a,
                  gconstpointer b)
{
  int pa = sbx_extension_info_get_priority (*(SbxExtensionInfo *const *) a);
  int pb = sbx_extension_info_get_priority (*(SbxExtensionInfo *const *) b);

  return pa == pb ? 0 : pa > pb ? -1 : 1;
}

static void
print_report_entries (GString          *out,
                      SbxCompileReport *report,
                      const char       *indent)
{
  for (guint i = 0; i < sbx_compile_report_get_n_entries (report); i++)
    {
      const char *detail = sbx_compile_report_get_entry_detail (report, i);

      g_string_append_printf (out, "%s%-10s %s", indent,
                              sbx_report_status_to_string (sbx_compile_report_get_entry_status (report, i)),
                              sbx_compile_report_get_entry_feature (report, i));
      if (detail != NULL && detail[0] != '\0')
        g_string_append_printf (out, ": %s", detail);
      g_string_append_c (out, '\n');
    }
}

/* One backend's probe, taken once: a probe that failed is not cached by
 * the registry (a later call probes again), so asking it for every section
 * of the output would repeat a failing probe (a child process each) three
 * times. */
typedef struct
{
  char             *name;
  char             *plugin;
  int               priority;
  SbxCompileReport *probe;            /* (nullable) */
  GError           *error;            /* (nullable) set when probe is NULL */
  gboolean          unconfined_only;
} BackendProbe;

static void
backend_probe_clear (gpointer data)
{
  BackendProbe *entry = data;

  g_clear_pointer (&entry->name, g_free);
  g_clear_pointer (&entry->plugin, g_free);
  g_clear_pointer (&entry->probe, sbx_compile_report_unref);
  g_clear_error (&entry->error);
}

/* The backends in selection order, each probed once. */
static GArray *
probe_backends (SbxRegistry *registry)
{
  g_autoptr(GPtrArray) extensions = sbx_registry_list_extensions (registry);
  g_autoptr(GPtrArray) order = g_ptr_array_new ();
  GArray *probes = g_array_new (FALSE, TRUE, sizeof (BackendProbe));

  g_array_set_clear_func (probes, backend_probe_clear);
  for (guint i = 0; i < extensions->len; i++)
    if (sbx_extension_info_get_kind (extensions->pdata[i]) == SBX_EXTENSION_KIND_BACKEND)
      g_ptr_array_add (order, extensions->pdata[i]);
  g_ptr_array_sort (order, compare_priority);
  for (guint k = 0; k < order->len; k++)
    {
      SbxExtensionInfo *ext = order->pdata[k];
      BackendProbe entry = { 0 };

      entry.name = g_strdup (sbx_extension_info_get_name (ext));
      entry.plugin = g_strdup (sbx_extension_info_get_plugin_name (ext));
      entry.priority = sbx_extension_info_get_priority (ext);
      entry.probe = sbx_registry_probe_backend (registry, entry.name, &entry.unconfined_only, &entry.error);
      g_array_append_val (probes, entry);
    }
  return probes;
}

static void
print_backends (GString *out,
                GArray  *probes)
{
  g_string_append (out, "\nBackends (in selection order):\n");
  if (probes->len == 0)
    g_string_append (out, "  (none loaded)\n");
  for (guint k = 0; k < probes->len; k++)
    {
      const BackendProbe *entry = &g_array_index (probes, BackendProbe, k);
      g_autofree char *guarantees = NULL;

      g_string_append_printf (out, "  %s (plugin %s, priority %d)\n", entry->name, entry->plugin, entry->priority);
      if (entry->probe == NULL)
        {
          g_string_append_printf (out, "    probe FAILED: %s\n", entry->error->message);
          continue;
        }
      guarantees = join_guarantees (sbx_compile_report_get_guarantees (entry->probe));
      g_string_append_printf (out, "    level:      %s%s\n",
                              sbx_level_to_string (sbx_compile_report_get_level (entry->probe)),
                              entry->unconfined_only ? " (only for acknowledged Unconfined profiles)" : "");
      g_string_append_printf (out, "    guarantees: %s\n", guarantees);
      print_report_entries (out, entry->probe, "      ");
    }
}

/* Sandbox-wide limits differ between root and an unprivileged user (uid 0
 * is exempt from RLIMIT_NPROC; v1 cgroups cannot be delegated), so a backend
 * probe says what each would get: the first backend in selection order that
 * reports @feature answers. */
static gboolean
find_limits_entry (GArray           *probes,
                   const char       *feature,
                   SbxReportStatus  *status,
                   char            **detail,
                   char            **backend)
{
  for (guint k = 0; k < probes->len; k++)
    {
      const BackendProbe *entry = &g_array_index (probes, BackendProbe, k);

      for (guint i = 0; entry->probe != NULL && i < sbx_compile_report_get_n_entries (entry->probe); i++)
        if (g_strcmp0 (sbx_compile_report_get_entry_feature (entry->probe, i), feature) == 0)
          {
            *status = sbx_compile_report_get_entry_status (entry->probe, i);
            *detail = g_strdup (sbx_compile_report_get_entry_detail (entry->probe, i));
            *backend = g_strdup (entry->name);
            return TRUE;
          }
    }
  return FALSE;
}

static void
print_limits (GString *out,
              GArray  *probes)
{
  static const char *const features[] = { "cgroup-for-root", "cgroup-for-user" };
  static const char *const who[] = { "root", "unprivileged user" };

  g_string_append (out, "\nSandbox-wide limits (processes, memory):\n");
  for (guint i = 0; i < G_N_ELEMENTS (features); i++)
    {
      g_autofree char *detail = NULL;
      g_autofree char *backend = NULL;
      SbxReportStatus status;

      if (find_limits_entry (probes, features[i], &status, &detail, &backend))
        g_string_append_printf (out, "  %s (%s): %s %s\n", who[i], backend,
                                sbx_report_status_to_string (status), detail != NULL ? detail : "");
      else
        g_string_append_printf (out, "  %s: no backend reports it\n", who[i]);
    }
}

static void
print_other_extensions (GString          *out,
                        SbxRegistry      *registry,
                        SbxExtensionKind  kind,
                        const char       *title)
{
  g_autoptr(GPtrArray) extensions = sbx_registry_list_extensions (registry);
  gboolean any = FALSE;

  g_string_append_printf (out, "\n%s:\n", title);
  for (guint i = 0; i < extensions->len; i++)
    {
      SbxExtensionInfo *ext = extensions->pdata[i];

      if (sbx_extension_info_get_kind (ext) != kind)
        continue;
      any = TRUE;
      g_string_append_printf (out, "  %s (plugin %s, priority %d)\n",
                              sbx_extension_info_get_name (ext),
                              sbx_extension_info_get_plugin_name (ext),
                              sbx_extension_info_get_priority (ext));
    }
  if (!any)
    g_string_append (out, "  (none loaded)\n");
}

/* The build this sbx comes from (tools/meson.build): the compiled-in plugin
 * directory and the comma-separated plugin extensions built with it. */
static void
add_build_list (JsonObject *build,
                const char *member,
                const char *csv)
{
  g_auto(GStrv) names = g_strsplit (csv, ",", -1);
  JsonArray *array = json_array_new ();

  for (guint i = 0; names[i] != NULL; i++)
    if (names[i][0] != '\0')
      json_array_add_string_element (array, names[i]);
  json_object_set_array_member (build, member, array);
}

static JsonObject *
build_info_to_json (void)
{
  JsonObject *build = json_object_new ();

  json_object_set_string_member (build, "version", SBX_VERSION_STRING);
  json_object_set_string_member (build, "plugindir", SBX_CLI_PLUGINDIR);
  add_build_list (build, "backends", SBX_CLI_BUILD_BACKENDS);
  add_build_list (build, "egress", SBX_CLI_BUILD_EGRESS);
  add_build_list (build, "reporters", SBX_CLI_BUILD_REPORTERS);
  return build;
}

static void
print_text (SbxRegistry      *registry,
            GArray           *probes,
            SbxGuarantees     required,
            gboolean          selected,
            SbxCompileReport *report,
            const GError     *selection_error)
{
  g_autoptr(GString) out = g_string_new (NULL);
  g_autofree char *required_text = join_guarantees (required);
  g_autoptr(GPtrArray) directories = sbx_registry_list_directories (registry);
  g_autoptr(GPtrArray) plugins = sbx_registry_list_plugins (registry);

  g_string_append_printf (out, "sbx %s\n\nPlugin directories (in search order):\n", SBX_VERSION_STRING);
  for (guint i = 0; i < directories->len; i++)
    {
      const GError *error = sbx_directory_info_get_error (directories->pdata[i]);

      g_string_append_printf (out, "  %s\n", sbx_directory_info_get_path (directories->pdata[i]));
      if (error != NULL)
        g_string_append_printf (out, "    not searched: %s\n", error->message);
    }

  g_string_append (out, "\nPlugins:\n");
  if (plugins->len == 0)
    g_string_append (out, "  (none found)\n");
  for (guint i = 0; i < plugins->len; i++)
    {
      SbxPluginInfo *plugin = plugins->pdata[i];
      const GError *error = sbx_plugin_info_get_error (plugin);

      if (sbx_plugin_info_get_state (plugin) == SBX_PLUGIN_STATE_LOADED)
        g_string_append_printf (out, "  %s %s (%s): loaded\n    %s\n",
                                sbx_plugin_info_get_name (plugin),
                                sbx_plugin_info_get_version (plugin),
                                sbx_plugin_info_get_license (plugin),
                                sbx_plugin_info_get_path (plugin));
      else
        g_string_append_printf (out, "  %s: REFUSED\n    %s\n    %s\n",
                                sbx_plugin_info_get_name (plugin),
                                sbx_plugin_info_get_path (plugin),
                                error != NULL ? error->message : "(no reason recorded)");
    }

  print_backends (out, probes);
  print_limits (out, probes);
  print_other_extensions (out, registry, SBX_EXTENSION_KIND_EGRESS, "Egress routes");
  print_other_extensions (out, registry, SBX_EXTENSION_KIND_REPORTER, "Reporters");

  g_string_append_printf (out, "\nDefault Sandboxed profile (requires %s):\n", required_text);
  if (selected)
    {
      g_autofree char *guarantees = join_guarantees (sbx_compile_report_get_guarantees (report));

      g_string_append_printf (out, "  backend:    %s\n  level:      %s\n  guarantees: %s\n",
                              sbx_compile_report_get_backend (report),
                              sbx_level_to_string (sbx_compile_report_get_level (report)),
                              guarantees);
    }
  else
    g_string_append_printf (out, "  NO BACKEND can run it on this host: %s\n", selection_error->message);
  if (sbx_compile_report_get_n_rejected (report) > 0)
    g_string_append (out, "  rejected:\n");
  for (guint i = 0; i < sbx_compile_report_get_n_rejected (report); i++)
    g_string_append_printf (out, "    %s: %s\n", sbx_compile_report_get_rejected_name (report, i),
                            sbx_compile_report_get_rejected_reason (report, i));

  fputs (out->str, stdout);
}

static gboolean
print_json (const char       *scratch_root,
            char            **stale,
            gboolean          cleaned,
            SbxRegistry      *registry,
            GArray           *probes,
            gboolean          selected,
            SbxCompileReport *report,
            const GError     *selection_error)
{
  g_autofree char *registry_json = sbx_registry_to_json (registry);
  g_autofree char *report_json = sbx_compile_report_to_json (report);
  g_autoptr(JsonParser) registry_parser = json_parser_new ();
  g_autoptr(JsonParser) report_parser = json_parser_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  JsonObject *sandboxed;

  if (!json_parser_load_from_data (registry_parser, registry_json, -1, &error) ||
      !json_parser_load_from_data (report_parser, report_json, -1, &error))
    {
      sbx_cli_error ("internal error: %s", error->message);
      return FALSE;
    }
  root = json_node_copy (json_parser_get_root (registry_parser));
  sandboxed = json_object_new ();
  json_object_set_boolean_member (sandboxed, "ok", selected);
  if (selection_error != NULL)
    json_object_set_string_member (sandboxed, "error", selection_error->message);
  else
    json_object_set_null_member (sandboxed, "error");
  json_object_set_member (sandboxed, "report", json_node_copy (json_parser_get_root (report_parser)));
  json_object_set_object_member (json_node_get_object (root), "default_sandboxed", sandboxed);
  json_object_set_object_member (json_node_get_object (root), "build", build_info_to_json ());
  {
    static const char *const features[] = { "cgroup-for-root", "cgroup-for-user" };
    static const char *const keys[] = { "root", "user" };
    JsonObject *limits = json_object_new ();

    for (guint i = 0; i < G_N_ELEMENTS (features); i++)
      {
        g_autofree char *detail = NULL;
        g_autofree char *backend = NULL;
        SbxReportStatus status;
        JsonObject *entry;

        if (!find_limits_entry (probes, features[i], &status, &detail, &backend))
          {
            json_object_set_null_member (limits, keys[i]);
            continue;
          }
        entry = json_object_new ();
        json_object_set_string_member (entry, "backend", backend);
        json_object_set_string_member (entry, "status", sbx_report_status_to_string (status));
        json_object_set_string_member (entry, "detail", detail != NULL ? detail : "");
        json_object_set_object_member (limits, keys[i], entry);
      }
    json_object_set_object_member (json_node_get_object (root), "resource_limits", limits);
  }
  {
    JsonObject *scratch = json_object_new ();
    JsonArray *paths = json_array_new ();

    for (guint i = 0; stale != NULL && stale[i] != NULL; i++)
      json_array_add_string_element (paths, stale[i]);
    json_object_set_string_member (scratch, "root", scratch_root);
    json_object_set_array_member (scratch, "stale", paths);
    json_object_set_boolean_member (scratch, "removed", cleaned);
    json_object_set_object_member (json_node_get_object (root), "scratch", scratch);
    json_object_set_array_member (json_node_get_object (root), "stages", sbx_doctor_stages_json ());
  }

  text = json_to_string (root, FALSE);
  printf ("%s\n", text);
  return TRUE;
}

int
sbx_cmd_doctor (int    argc,
                char **argv)
{
  gboolean json = FALSE;
  gboolean clean = FALSE;
  g_auto(GStrv) stale = NULL;
  g_autoptr(GError) stale_error = NULL;
  const char *scratch_root = g_get_tmp_dir ();
  GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print one JSON object (schema 1) instead of text", NULL },
    { "clean", 0, 0, G_OPTION_ARG_NONE, &clean,
      "Remove the stale scratch of dead executor sets (yours only) from the sbx run scratch root", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxCompileReport) report = NULL;
  g_autoptr(GError) selection_error = NULL;
  g_autofree char *cwd = g_get_current_dir ();
  g_autoptr(GArray) probes = NULL;
  SbxRegistry *registry;
  SbxGuarantees required;
  gboolean selected;

  g_set_prgname ("sbx doctor");
  context = g_option_context_new (NULL);
  g_option_context_set_summary (context,
                                "Show the plugins found (and refused, with why), each backend's probe, the\n"
                                "level and guarantees this host can give a default Sandboxed profile, and the\n"
                                "stale scratch of dead executor sets in $TMPDIR (--clean removes it).\n"
                                "Honours SBX_PLUGIN_PATH and SBX_BACKEND as every sbx command does.\n"
                                "Exit status: 0 when a backend can run the default Sandboxed profile, 1 when\n"
                                "none can, 2 on a usage error.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      sbx_cli_error ("%s", error->message);
      return SBX_CLI_EXIT_USAGE;
    }
  if (argc > 1)
    {
      sbx_cli_error ("doctor takes no arguments (see sbx doctor --help)");
      return SBX_CLI_EXIT_USAGE;
    }

  /* The embedded default profile decides what "default Sandboxed" requires. */
  profile = sbx_profile_new_default (cwd, &error);
  if (profile == NULL)
    {
      sbx_cli_error ("cannot build the default profile: %s", error->message);
      return SBX_CLI_EXIT_FAILURE;
    }
  required = sbx_profile_get_required_guarantees (profile);

  registry = sbx_registry_get_default ();
  selected = sbx_registry_preview_selection (registry, sbx_profile_get_isolation (profile), required,
                                             &report, &selection_error);
  probes = probe_backends (registry);

  /* Scratch of dead sets in the scratch root `sbx run` uses. */
  stale = sbx_executor_set_find_stale_scratch (scratch_root, clean, &stale_error);
  if (stale == NULL)
    sbx_cli_error ("cannot look for stale scratch in %s: %s", scratch_root, stale_error->message);

  if (json)
    {
      if (!print_json (scratch_root, stale, clean && stale != NULL, registry, probes, selected, report,
                       selection_error))
        return SBX_CLI_EXIT_FAILURE;
    }
  else
    {
      print_text (registry, probes, required, selected, report, selection_error);
      sbx_doctor_print_stages ();
      if (stale != NULL && stale[0] == NULL)
        printf ("stale scratch in %s: none\n", scratch_root);
      else if (stale != NULL)
        {
          printf ("stale scratch in %s (executor sets whose process died%s):\n", scratch_root,
                  clean ? "; removed" : "; `sbx doctor --clean` removes it");
          for (guint i = 0; stale[i] != NULL; i++)
            printf ("  %s\n", stale[i]);
        }
    }
  if (clean && stale == NULL)
    return SBX_CLI_EXIT_FAILURE;

  return selected ? SBX_CLI_EXIT_OK : SBX_CLI_EXIT_FAILURE;
}
