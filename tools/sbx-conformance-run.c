/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The conformance driver: copies the plugin into a private directory, loads
 * it through the ordinary loader, and for each backend probes it, builds a
 * profile within its probed claims, opens an executor set that forces it,
 * checks compile against probe and runs the cases of sbx-conformance-cases.c;
 * then the JSON summary and the supervisor the killed-supervisor case kills.
 */
#include "sbx-conformance-private.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

/* ------------------------------------------------------------------------- */
/* One backend                                                                */
/* ------------------------------------------------------------------------- */

static gboolean
subject_lay_out (Subject  *s,
                 GError  **error)
{
  g_autofree char *secret = g_build_filename (s->outside, "secret", NULL);
  g_autofree char *existing = g_build_filename (s->outside, "existing", NULL);
  g_autofree char *named = g_build_filename (s->outside, "outside-secret-name", NULL);
  g_autofree char *visible = g_build_filename (s->ws, "visible", NULL);

  if (g_mkdir (s->dir, 0700) != 0 || g_mkdir (s->ws, 0755) != 0 || g_mkdir (s->outside, 0755) != 0
      || g_mkdir (s->scratch, 0700) != 0)
    {
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errno), "mkdir under %s: %s",
                   s->dir, g_strerror (errno));
      return FALSE;
    }
  return sbx_conformance_copy_file (s->run->options->probe_helper, s->helper, 0755, error)
         && g_file_set_contents (secret, "outside-secret-contents\n", -1, error)
         && g_file_set_contents (existing, "original\n", -1, error)
         && g_file_set_contents (named, "", -1, error)
         && g_file_set_contents (visible, "workspace-contents\n", -1, error)
         && g_chmod (secret, 0644) == 0;
}

static SbxProfile *
subject_profile (Subject  *s,
                 GError  **error)
{
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();

  sbx_profile_config_set_workspace (config, s->ws, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_home (config, SBX_HOME_ISOLATED);
  sbx_profile_config_set_command (config, SBX_ACCESS_ALLOW);
  if (s->unconfined)
    {
      sbx_profile_config_set_host (config, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
      sbx_profile_config_set_network (config, SBX_ACCESS_ALLOW);
      sbx_profile_config_set_isolation (config, SBX_ISOLATION_UNCONFINED);
      sbx_profile_config_set_ack_unconfined (config, TRUE);
    }
  else
    {
      /* Deny exactly what the probe says can be enforced, so the profile's
       * required guarantees are within the backend's claims. */
      sbx_profile_config_set_host (config,
                                   (s->probed & SBX_GUARANTEE_READ_BOUNDARY) ? SBX_ACCESS_DENY : SBX_ACCESS_ALLOW,
                                   (s->probed & SBX_GUARANTEE_WRITE_BOUNDARY) ? SBX_ACCESS_DENY : SBX_ACCESS_ALLOW);
      sbx_profile_config_set_network (config,
                                      (s->probed & SBX_GUARANTEE_NETWORK_BOUNDARY) ? SBX_ACCESS_DENY
                                                                                   : SBX_ACCESS_ALLOW);
      sbx_profile_config_set_isolation (config, SBX_ISOLATION_SANDBOXED);
      sbx_profile_config_set_limits (config, PROCESS_LIMIT, 0, 0);
    }
  return sbx_profile_new (config, error);
}

/* Everything a judged backend leaves: its set closed (a failed close is a
 * case of its own), its objects dropped, its directory removed.  Runs at
 * every exit of judge_backend(). */
static void
subject_clear (Subject *s)
{
  Run *run = s->run;
  const char *backend = s->backend;

  if (s->set != NULL)
    {
      g_autoptr(GError) close_error = NULL;

      if (!sbx_executor_set_close (s->set, NULL, &close_error))
        sbx_conformance_record (run, backend, "teardown", "final-close", SBX_CONFORMANCE_FAIL, "%s", close_error->message);
    }
  g_clear_object (&s->executor);
  g_clear_object (&s->set);
  g_clear_pointer (&s->profile, sbx_profile_unref);
  if (s->dir != NULL)
    sbx_conformance_remove_tree (s->dir);
  g_free (s->dir);
  g_free (s->ws);
  g_free (s->outside);
  g_free (s->scratch);
  g_free (s->helper);
  g_free (s->profile_file);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Subject, subject_clear)

static void
judge_backend (Run        *run,
               const char *backend)
{
  g_autoptr(SbxCompileReport) probe = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxExecutorSetOptions) options = sbx_executor_set_options_new ();
  g_autofree char *json = NULL;
  g_autofree char *claims = NULL;
  g_auto(GStrv) names = NULL;
  g_auto(Subject) subject = { .run = run, .backend = backend };
  Subject *s = &subject;
  gboolean unconfined_only = FALSE;
  SbxGuarantees excess;

  probe = sbx_registry_probe_backend (run->registry, backend, &unconfined_only, &error);
  if (probe == NULL)
    {
      sbx_conformance_record (run, backend, "probe", "probe", SBX_CONFORMANCE_SKIP,
                              "the probe failed, so the backend claims nothing here: %s", error->message);
      return;
    }
  s->probed_level = sbx_compile_report_get_level (probe);
  s->probed = sbx_compile_report_get_guarantees (probe);
  s->unconfined = unconfined_only;
  names = sbx_guarantees_to_strv (s->probed);
  claims = g_strjoinv (", ", names);
  sbx_conformance_record (run, backend, "probe", "probe", SBX_CONFORMANCE_PASS, "level %s, guarantees [%s]%s",
                          sbx_level_to_string (s->probed_level), claims, unconfined_only ? ", unconfined-only" : "");
  if (!unconfined_only && s->probed_level < SBX_LEVEL_DEGRADED)
    {
      sbx_conformance_record (run, backend, "claims", "selectable", SBX_CONFORMANCE_SKIP,
                              "level none and not unconfined-only: the host never selects it, so nothing it claims is used");
      return;
    }

  s->dir = g_build_filename (run->root, backend, NULL);
  s->ws = g_build_filename (s->dir, "workspace", NULL);
  s->outside = g_build_filename (s->dir, "outside", NULL);
  s->scratch = g_build_filename (s->dir, "scratch", NULL);
  s->helper = g_build_filename (s->ws, ".sbx-conformance-probe", NULL);
  s->profile_file = g_build_filename (s->dir, "profile.json", NULL);
  if (subject_lay_out (s, &error))
    s->profile = subject_profile (s, &error);
  if (s->profile != NULL)
    json = sbx_profile_to_json (s->profile);
  if (json == NULL || !g_file_set_contents (s->profile_file, json, -1, &error))
    {
      sbx_conformance_record (run, backend, "setup", "layout", SBX_CONFORMANCE_FAIL, "%s",
                              error != NULL ? error->message : "the profile has no JSON form");
      return;
    }

  sbx_executor_set_options_set_registry (options, run->registry);
  sbx_executor_set_options_set_backend (options, backend);
  sbx_executor_set_options_set_scratch_root (options, s->scratch);
  sbx_executor_set_options_set_max_executors (options, 2);
  s->set = sbx_executor_set_new (s->profile, options, &error);
  if (s->set != NULL)
    s->executor = sbx_executor_set_for_key (s->set, "conformance", &error);
  if (s->executor == NULL)
    {
      sbx_conformance_record (run, backend, "claims", "compile", SBX_CONFORMANCE_FAIL,
                              "a profile within the probed claims (%s) could not be compiled: %s",
                              s->unconfined ? "Unconfined" : "Sandboxed", error->message);
      return;
    }
  s->level = sbx_executor_get_level (s->executor);
  s->compiled = sbx_executor_get_guarantees (s->executor);

  /* No guarantee is claimed whose mechanism the probe did not find. */
  excess = s->compiled & ~s->probed;
  if (excess != 0 || s->level > s->probed_level)
    {
      g_auto(GStrv) more = sbx_guarantees_to_strv (excess);
      g_autofree char *joined = g_strjoinv (", ", more);

      sbx_conformance_record (run, backend, "claims", "compile-within-probe", SBX_CONFORMANCE_FAIL,
                              "compile claims level %s and [%s] beyond the probe (level %s)",
                              sbx_level_to_string (s->level), joined, sbx_level_to_string (s->probed_level));
    }
  else
    {
      g_auto(GStrv) got = sbx_guarantees_to_strv (s->compiled);
      g_autofree char *joined = g_strjoinv (", ", got);

      sbx_conformance_record (run, backend, "claims", "compile-within-probe", SBX_CONFORMANCE_PASS,
                              "compiled level %s, guarantees [%s]", sbx_level_to_string (s->level), joined);
    }

  /* Each guarantee: proven when claimed, listed when not. */
  {
    static const SbxGuarantees order[] = {
      SBX_GUARANTEE_PROCESS_BOUNDARY, SBX_GUARANTEE_WRITE_BOUNDARY, SBX_GUARANTEE_READ_BOUNDARY,
      SBX_GUARANTEE_ENV_SCRUB, SBX_GUARANTEE_NETWORK_BOUNDARY, SBX_GUARANTEE_ADDRESS_NETWORK,
      SBX_GUARANTEE_RESOURCE_LIMITS, SBX_GUARANTEE_TARGET_NETWORK,
    };

    for (gsize i = 0; i < G_N_ELEMENTS (order); i++)
      {
        g_auto(GStrv) one = sbx_guarantees_to_strv (order[i]);

        if ((s->compiled & order[i]) == 0)
          {
            sbx_conformance_record (run, backend, one[0], "not-claimed", SBX_CONFORMANCE_SKIP, "not claimed by this backend");
            continue;
          }
        switch (order[i])
          {
          case SBX_GUARANTEE_PROCESS_BOUNDARY: sbx_conformance_case_process_boundary (s); break;
          case SBX_GUARANTEE_WRITE_BOUNDARY: sbx_conformance_case_write_boundary (s); break;
          case SBX_GUARANTEE_READ_BOUNDARY: sbx_conformance_case_read_boundary (s); break;
          case SBX_GUARANTEE_ENV_SCRUB: sbx_conformance_case_env_scrub (s); break;
          case SBX_GUARANTEE_RESOURCE_LIMITS:
            if (s->unconfined)
              sbx_conformance_record (run, backend, one[0], "fork-loop-stops", SBX_CONFORMANCE_FAIL,
                                      "resource-limits is claimed for an Unconfined profile, which sets no limits");
            else
              sbx_conformance_case_fork_limit (s, one[0], "fork-loop-stops");
            break;
          /* With network denied, address- and target-scoped egress reduce to
           * "no host address is reachable"; the egress cases add the rest
           * when egress lands. */
          case SBX_GUARANTEE_NETWORK_BOUNDARY:
          case SBX_GUARANTEE_ADDRESS_NETWORK:
          case SBX_GUARANTEE_TARGET_NETWORK:
            sbx_conformance_case_network (s, one[0]);
            break;
          case SBX_GUARANTEE_NONE:
          default:
            break;
          }
      }
  }

  sbx_conformance_case_teardown_exit (s);
  sbx_conformance_case_teardown_timeout (s);
  sbx_conformance_case_teardown_close (s);
  sbx_conformance_case_teardown_killed_supervisor (s);
  sbx_conformance_case_output_limit (s);
  sbx_conformance_case_process_limit (s);
  sbx_conformance_case_spawn_report (s);

}

/* ------------------------------------------------------------------------- */
/* Entry points                                                               */
/* ------------------------------------------------------------------------- */

/* The run's registry dropped and its private directory removed, at every
 * exit of sbx_conformance_run(). */
static void
run_clear (Run *run)
{
  g_clear_object (&run->registry);
  if (run->root != NULL)
    sbx_conformance_remove_tree (run->root);
  g_free (run->root);
  g_free (run->plugin_dir);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Run, run_clear)

gboolean
sbx_conformance_run (const SbxConformanceOptions  *options,
                     GPtrArray                   **out_cases,
                     GError                      **error)
{
  g_autoptr(GPtrArray) cases = g_ptr_array_new_with_free_func ((GDestroyNotify) sbx_conformance_case_free);
  g_autofree char *base = NULL;
  g_autofree char *copy = NULL;
  g_autoptr(GPtrArray) backends = g_ptr_array_new ();
  const char *dirs[2] = { NULL, NULL };
  g_auto(Run) run = { .options = options, .cases = cases };
  int plugin_index = -1;
  g_autoptr(GPtrArray) plugins = NULL;
  g_autoptr(GPtrArray) extensions = NULL;
  SbxPluginInfo *plugin = NULL;
  gboolean has_egress = FALSE;

  g_return_val_if_fail (options != NULL && options->plugin_path != NULL, FALSE);
  g_return_val_if_fail (options->probe_helper != NULL, FALSE);

  base = g_path_get_basename (options->plugin_path);
  if (!g_str_has_prefix (base, "sbx-plugin-") || !g_str_has_suffix (base, ".so"))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "%s: a plugin file is named sbx-plugin-NAME.so (the host derives its entry symbol "
                   "from that name)", options->plugin_path);
      return FALSE;
    }
  if (!g_file_test (options->probe_helper, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "the probe helper %s is not an executable file",
                   options->probe_helper);
      return FALSE;
    }
  run.root = g_dir_make_tmp ("sbx-conformance-XXXXXX", error);
  if (run.root == NULL)
    return FALSE;
  run.plugin_dir = g_build_filename (run.root, "plugins", NULL);
  copy = g_build_filename (run.plugin_dir, base, NULL);
  if (g_mkdir (run.plugin_dir, 0700) != 0 || !sbx_conformance_copy_file (options->plugin_path, copy, 0644, error))
    {
      if (error != NULL && *error == NULL)
        g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errno), "mkdir %s: %s",
                     run.plugin_dir, g_strerror (errno));
      return FALSE;
    }

  dirs[0] = run.plugin_dir;
  run.registry = sbx_registry_new_for_directories (dirs, error);
  if (run.registry == NULL)
    {
      return FALSE;
    }
  plugins = sbx_registry_list_plugins (run.registry);
  extensions = sbx_registry_list_extensions (run.registry);
  for (guint i = 0; i < plugins->len; i++)
    plugin_index = (int) i;
  if (plugin_index >= 0)
    plugin = plugins->pdata[plugin_index];
  if (plugin == NULL)
    sbx_conformance_record (&run, NULL, "load", "load", SBX_CONFORMANCE_FAIL, "the registry found no plugin in %s", copy);
  else if (sbx_plugin_info_get_state (plugin) != SBX_PLUGIN_STATE_LOADED)
    sbx_conformance_record (&run, NULL, "load", "load", SBX_CONFORMANCE_FAIL, "the host refused the plugin: %s",
                            sbx_plugin_info_get_error (plugin)->message);
  else
    sbx_conformance_record (&run, NULL, "load", "load", SBX_CONFORMANCE_PASS, "loaded %s %s",
                            sbx_plugin_info_get_name (plugin), sbx_plugin_info_get_version (plugin));

  for (guint i = 0; i < extensions->len; i++)
    has_egress |= sbx_extension_info_get_kind (extensions->pdata[i]) == SBX_EXTENSION_KIND_EGRESS;
  for (guint i = 0; i < extensions->len; i++)
    if (sbx_extension_info_get_kind (extensions->pdata[i]) == SBX_EXTENSION_KIND_BACKEND
        && (options->backend == NULL
            || g_str_equal (options->backend, sbx_extension_info_get_name (extensions->pdata[i]))))
      g_ptr_array_add (backends, (gpointer) sbx_extension_info_get_name (extensions->pdata[i]));
  if (backends->len == 0 && plugin != NULL && !has_egress
      && sbx_plugin_info_get_state (plugin) == SBX_PLUGIN_STATE_LOADED)
    sbx_conformance_record (&run, NULL, "load", "backends", options->backend != NULL ? SBX_CONFORMANCE_FAIL : SBX_CONFORMANCE_SKIP,
                            options->backend != NULL ? "the plugin has no backend named %s" : "the plugin has no backend%s",
                            options->backend != NULL ? options->backend : "");

  for (guint i = 0; i < backends->len; i++)
    judge_backend (&run, backends->pdata[i]);
  /* Egress extensions (sbx-conformance-egress.c), unless one backend was
   * asked for. */
  for (guint i = 0; options->backend == NULL && i < extensions->len; i++)
    if (sbx_extension_info_get_kind (extensions->pdata[i]) == SBX_EXTENSION_KIND_EGRESS)
      sbx_conformance_judge_egress (&run, copy, sbx_plugin_info_get_name (plugin),
                                    sbx_extension_info_get_name (extensions->pdata[i]));

  if (out_cases != NULL)
    *out_cases = g_steal_pointer (&cases);
  return TRUE;
}

char *
sbx_conformance_summary_json (const char *plugin_path,
                              GPtrArray  *cases)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GPtrArray) backends = g_ptr_array_new ();
  guint counts[3] = { 0, 0, 0 };

  for (guint i = 0; i < cases->len; i++)
    {
      SbxConformanceCase *c = cases->pdata[i];
      gboolean seen = FALSE;

      counts[c->outcome]++;
      for (guint j = 0; j < backends->len && c->backend != NULL; j++)
        seen = seen || g_str_equal (backends->pdata[j], c->backend);
      if (!seen && c->backend != NULL)
        g_ptr_array_add (backends, c->backend);
    }

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "schema");
  json_builder_add_int_value (builder, 1);
  json_builder_set_member_name (builder, "plugin");
  json_builder_add_string_value (builder, plugin_path);
  json_builder_set_member_name (builder, "passed");
  json_builder_add_int_value (builder, counts[SBX_CONFORMANCE_PASS]);
  json_builder_set_member_name (builder, "failed");
  json_builder_add_int_value (builder, counts[SBX_CONFORMANCE_FAIL]);
  json_builder_set_member_name (builder, "skipped");
  json_builder_add_int_value (builder, counts[SBX_CONFORMANCE_SKIP]);
  json_builder_set_member_name (builder, "ok");
  json_builder_add_boolean_value (builder, counts[SBX_CONFORMANCE_FAIL] == 0);
  json_builder_set_member_name (builder, "backends");
  json_builder_begin_array (builder);
  for (guint j = 0; j < backends->len; j++)
    {
      g_autoptr(GPtrArray) failed_areas = g_ptr_array_new ();

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "name");
      json_builder_add_string_value (builder, backends->pdata[j]);
      json_builder_set_member_name (builder, "cases");
      json_builder_begin_array (builder);
      for (guint i = 0; i < cases->len; i++)
        {
          SbxConformanceCase *c = cases->pdata[i];
          static const char *const words[] = { "pass", "fail", "skip" };

          if (g_strcmp0 (c->backend, backends->pdata[j]) != 0)
            continue;
          if (c->outcome == SBX_CONFORMANCE_FAIL && !g_ptr_array_find_with_equal_func (failed_areas, c->area,
                                                                                       g_str_equal, NULL))
            g_ptr_array_add (failed_areas, c->area);
          json_builder_begin_object (builder);
          json_builder_set_member_name (builder, "area");
          json_builder_add_string_value (builder, c->area);
          json_builder_set_member_name (builder, "case");
          json_builder_add_string_value (builder, c->name);
          json_builder_set_member_name (builder, "result");
          json_builder_add_string_value (builder, words[c->outcome]);
          json_builder_set_member_name (builder, "detail");
          json_builder_add_string_value (builder, c->detail);
          json_builder_end_object (builder);
        }
      json_builder_end_array (builder);
      json_builder_set_member_name (builder, "failed");
      json_builder_begin_array (builder);
      for (guint i = 0; i < failed_areas->len; i++)
        json_builder_add_string_value (builder, failed_areas->pdata[i]);
      json_builder_end_array (builder);
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  return json_generator_to_data (generator, NULL);
}

int
sbx_conformance_supervise_child (int          argc,
                                 char *const *argv)
{
  g_autoptr(SbxRegistry) registry = NULL;
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxExecutorSetOptions) options = sbx_executor_set_options_new ();
  g_autoptr(SbxExecutorSet) set = NULL;
  g_autoptr(SbxExecutor) executor = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  const char *dirs[2] = { NULL, NULL };
  const char *run_argv[4] = { NULL, "tree", NULL, NULL };

  if (argc != 7 || !g_str_has_prefix (argv[6], "marker="))
    return 2;
  dirs[0] = argv[0];
  run_argv[0] = argv[5];
  run_argv[2] = argv[6] + strlen ("marker=");
  registry = sbx_registry_new_for_directories (dirs, &error);
  if (registry != NULL)
    profile = sbx_profile_new_from_file (argv[2], NULL, &error);
  if (profile != NULL)
    {
      sbx_executor_set_options_set_registry (options, registry);
      sbx_executor_set_options_set_backend (options, argv[1]);
      sbx_executor_set_options_set_scratch_root (options, argv[3]);
      sbx_executor_set_options_set_max_executors (options, 2);
      set = sbx_executor_set_new (profile, options, &error);
    }
  if (set != NULL)
    executor = sbx_executor_set_for_key (set, "killed", &error);
  if (executor != NULL)
    result = sbx_executor_run (executor, argv[4], run_argv, NULL, NULL, &error);
  if (error != NULL)
    g_printerr ("sbx-conformance --supervise-child: %s\n", error->message);
  return 1;
}
