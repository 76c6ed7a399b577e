/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx doctor [--json]: what this host and this installation can do.
 *
 * Lists the plugin directories searched, every plugin found (and why one was
 * refused), each backend's probe (level, guarantees, one entry per mechanism
 * with its hint), the egress and reporter extensions, and which backend a
 * default Sandboxed profile would get here, with what level and guarantees.
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
                  gconstpointer b,
                  gpointer      user_data)
{
  SbxRegistry *registry = user_data;
  int pa = sbx_registry_get_extension_priority (registry, GPOINTER_TO_UINT (*(const gpointer *) a));
  int pb = sbx_registry_get_extension_priority (registry, GPOINTER_TO_UINT (*(const gpointer *) b));

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

static void
print_backends (GString     *out,
                SbxRegistry *registry)
{
  g_autoptr(GPtrArray) order = g_ptr_array_new ();
  guint n = sbx_registry_get_n_extensions (registry);

  for (guint i = 0; i < n; i++)
    if (sbx_registry_get_extension_kind (registry, i) == SBX_EXTENSION_KIND_BACKEND)
      g_ptr_array_add (order, GUINT_TO_POINTER (i));
  g_ptr_array_sort_with_data (order, compare_priority, registry);

  g_string_append (out, "\nBackends (in selection order):\n");
  if (order->len == 0)
    g_string_append (out, "  (none loaded)\n");
  for (guint k = 0; k < order->len; k++)
    {
      guint i = GPOINTER_TO_UINT (order->pdata[k]);
      const char *name = sbx_registry_get_extension_name (registry, i);
      g_autoptr(SbxCompileReport) probe = NULL;
      g_autoptr(GError) error = NULL;
      gboolean unconfined_only = FALSE;

      g_string_append_printf (out, "  %s (plugin %s, priority %d)\n", name,
                              sbx_registry_get_extension_plugin (registry, i),
                              sbx_registry_get_extension_priority (registry, i));
      probe = sbx_registry_probe_backend (registry, name, &unconfined_only, &error);
      if (probe == NULL)
        {
          g_string_append_printf (out, "    probe FAILED: %s\n", error->message);
          continue;
        }
      {
        g_autofree char *guarantees = join_guarantees (sbx_compile_report_get_guarantees (probe));

        g_string_append_printf (out, "    level:      %s%s\n",
                                sbx_level_to_string (sbx_compile_report_get_level (probe)),
                                unconfined_only ? " (only for acknowledged Unconfined profiles)" : "");
        g_string_append_printf (out, "    guarantees: %s\n", guarantees);
        print_report_entries (out, probe, "      ");
      }
    }
}

static void
print_other_extensions (GString          *out,
                        SbxRegistry      *registry,
                        SbxExtensionKind  kind,
                        const char       *title)
{
  guint n = sbx_registry_get_n_extensions (registry);
  gboolean any = FALSE;

  g_string_append_printf (out, "\n%s:\n", title);
  for (guint i = 0; i < n; i++)
    {
      if (sbx_registry_get_extension_kind (registry, i) != kind)
        continue;
      any = TRUE;
      g_string_append_printf (out, "  %s (plugin %s, priority %d)\n",
                              sbx_registry_get_extension_name (registry, i),
                              sbx_registry_get_extension_plugin (registry, i),
                              sbx_registry_get_extension_priority (registry, i));
    }
  if (!any)
    g_string_append (out, "  (none loaded)\n");
}

static void
print_text (SbxRegistry      *registry,
            SbxGuarantees     required,
            gboolean          selected,
            SbxCompileReport *report,
            const GError     *selection_error)
{
  g_autoptr(GString) out = g_string_new (NULL);
  g_autofree char *required_text = join_guarantees (required);

  g_string_append_printf (out, "sbx %s\n\nPlugin directories (in search order):\n", SBX_VERSION_STRING);
  for (guint i = 0; i < sbx_registry_get_n_directories (registry); i++)
    {
      const GError *error = sbx_registry_get_directory_error (registry, i);

      g_string_append_printf (out, "  %s\n", sbx_registry_get_directory_path (registry, i));
      if (error != NULL)
        g_string_append_printf (out, "    not searched: %s\n", error->message);
    }

  g_string_append (out, "\nPlugins:\n");
  if (sbx_registry_get_n_plugins (registry) == 0)
    g_string_append (out, "  (none found)\n");
  for (guint i = 0; i < sbx_registry_get_n_plugins (registry); i++)
    {
      const GError *error = sbx_registry_get_plugin_error (registry, i);

      if (sbx_registry_get_plugin_state (registry, i) == SBX_PLUGIN_STATE_LOADED)
        g_string_append_printf (out, "  %s %s (%s): loaded\n    %s\n",
                                sbx_registry_get_plugin_name (registry, i),
                                sbx_registry_get_plugin_version (registry, i),
                                sbx_registry_get_plugin_license (registry, i),
                                sbx_registry_get_plugin_path (registry, i));
      else
        g_string_append_printf (out, "  %s: REFUSED\n    %s\n    %s\n",
                                sbx_registry_get_plugin_name (registry, i),
                                sbx_registry_get_plugin_path (registry, i),
                                error != NULL ? error->message : "(no reason recorded)");
    }

  print_backends (out, registry);
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
print_json (SbxRegistry      *registry,
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

  text = json_to_string (root, FALSE);
  printf ("%s\n", text);
  return TRUE;
}

int
sbx_cmd_doctor (int    argc,
                char **argv)
{
  gboolean json = FALSE;
  GOptionEntry entries[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print one JSON object (schema 1) instead of text", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxCompileReport) report = NULL;
  g_autoptr(GError) selection_error = NULL;
  g_autofree char *cwd = g_get_current_dir ();
  SbxRegistry *registry;
  SbxGuarantees required;
  gboolean selected;

  g_set_prgname ("sbx doctor");
  context = g_option_context_new (NULL);
  g_option_context_set_summary (context,
                                "Show the plugins found (and refused, with why), each backend's probe, and the\n"
                                "level and guarantees this host can give a default Sandboxed profile.\n"
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

  if (json)
    {
      if (!print_json (registry, selected, report, selection_error))
        return SBX_CLI_EXIT_FAILURE;
    }
  else
    print_text (registry, required, selected, report, selection_error);

  return selected ? SBX_CLI_EXIT_OK : SBX_CLI_EXIT_FAILURE;
}
