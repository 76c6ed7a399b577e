/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Backend selection (GIO's extension-point habit): walk the registry's
 * backends by priority, probe each (cached per backend), keep the first
 * whose probe is OK and whose level and guarantees cover what the profile
 * requires; every rejected candidate and why goes into the compile report.
 * SBX_BACKEND may only select or veto among loaded backends; a named
 * backend that fails fails the selection (no fallback).
 *
 * No lock is held across a probe: the candidate list is a snapshot with
 * references (sbx_registry_snapshot_candidates()).
 */
#include "sbx-registry.h"
#include "sbx-registry-private.h"
#include "sbx-registry-state-private.h"
#include "sbx-plugin-private.h"
#include "sbx-plugin-host-private.h"
#include "sbx-plugin-loader-private.h"
#include "sbx-compile-report-private.h"

#include <errno.h>
#include <string.h>
#include <glib/gstdio.h>

#include "sbx-policy-private.h"

/* ------------------------------------------------------------------------- */
/* Selection                                                                  */
/* ------------------------------------------------------------------------- */

typedef struct
{
  gboolean  help;
  char     *select;   /* (nullable) */
  GStrv     vetoes;
} ForcedBackend;

static void
forced_backend_clear (ForcedBackend *forced)
{
  g_clear_pointer (&forced->select, g_free);
  g_clear_pointer (&forced->vetoes, g_strfreev);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (ForcedBackend, forced_backend_clear)

/* SBX_BACKEND syntax: a comma-separated list of items.  "name" selects that
 * backend (at most one); "-name" or "!name" vetoes one; "help" lists the
 * candidates.  Empty means unset. */
static gboolean
parse_forced_backend (const char     *value,
                      ForcedBackend  *forced,
                      GError        **error)
{
  g_auto(GStrv) items = NULL;
  g_autoptr(GStrvBuilder) vetoes = g_strv_builder_new ();

  memset (forced, 0, sizeof *forced);
  if (value != NULL)
    items = g_strsplit (value, ",", -1);
  for (guint i = 0; items != NULL && items[i] != NULL; i++)
    {
      const char *item = g_strstrip (items[i]);

      if (item[0] == '\0')
        continue;
      if (g_str_equal (item, "help"))
        forced->help = TRUE;
      else if (item[0] == '-' || item[0] == '!')
        {
          if (!sbx_plugin_name_is_well_formed (item + 1))
            return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE,
                                         "SBX_BACKEND='%s': '%s' is not a backend name to veto", value, item);
          g_strv_builder_add (vetoes, item + 1);
        }
      else
        {
          if (!sbx_plugin_name_is_well_formed (item))
            return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE,
                                         "SBX_BACKEND='%s': '%s' is not a backend name", value, item);
          if (forced->select != NULL)
            return sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE,
                                         "SBX_BACKEND='%s' selects more than one backend", value);
          forced->select = g_strdup (item);
        }
    }
  forced->vetoes = g_strv_builder_end (vetoes);
  return TRUE;
}

static int
compare_backends (gconstpointer a,
                  gconstpointer b)
{
  SbxBackend *x = *(SbxBackend *const *) a;
  SbxBackend *y = *(SbxBackend *const *) b;
  int px = sbx_backend_get_priority (x);
  int py = sbx_backend_get_priority (y);

  if (px != py)
    return px > py ? -1 : 1;
  return sbx_backend_get_load_index (x) < sbx_backend_get_load_index (y) ? -1 : 1;
}

/* The backends in selection order and the refused plugins. */
static void
snapshot_candidates (SbxRegistry  *self,
                     GPtrArray   **out_backends,
                     GPtrArray   **out_refused)
{
  sbx_registry_snapshot_candidates (self, out_backends, out_refused);
  g_ptr_array_sort (*out_backends, compare_backends);
}

/* Decides whether a probed backend fits.  Returns NULL when it does, else the
 * reason (transfer full). */
static char *
check_candidate (SbxBackend                *backend,
                 const SbxBackendSelection *selection)
{
  SbxLevel level = sbx_backend_get_probe_level (backend);
  SbxGuarantees guarantees = sbx_backend_get_probe_guarantees (backend);
  gboolean unconfined_only = sbx_backend_is_unconfined_only (backend);
  SbxGuarantees missing;

  if (selection->unconfined && !unconfined_only)
    return g_strdup ("not an unconfined-only backend; an Unconfined profile runs only on one "
                     "(it would otherwise look confined when it is not)");
  if (!selection->unconfined)
    {
      if (unconfined_only)
        return g_strdup ("unconfined-only backend: never used for a Sandboxed profile");
      if (level < SBX_LEVEL_DEGRADED)
        return g_strdup_printf ("level %s on this host; a Sandboxed profile needs degraded or full",
                                sbx_level_to_string (level));
    }
  missing = selection->required_guarantees & ~guarantees;
  if (missing != 0)
    {
      g_auto(GStrv) names = sbx_guarantees_to_strv (missing);
      g_autofree char *joined = g_strjoinv (", ", names);

      return g_strdup_printf ("missing required guarantees: %s (level %s)", joined, sbx_level_to_string (level));
    }
  return NULL;
}

static char *
describe_candidate (SbxBackend *backend)
{
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) names = NULL;
  g_autofree char *joined = NULL;

  if (!sbx_backend_probe (backend, NULL, &error))
    return g_strdup_printf ("%s (plugin %s, priority %d): %s",
                            sbx_backend_get_name (backend), sbx_backend_get_plugin_name (backend),
                            sbx_backend_get_priority (backend), error->message);
  names = sbx_guarantees_to_strv (sbx_backend_get_probe_guarantees (backend));
  joined = g_strjoinv (", ", names);
  return g_strdup_printf ("%s (plugin %s, priority %d): level %s%s, guarantees [%s]",
                          sbx_backend_get_name (backend), sbx_backend_get_plugin_name (backend),
                          sbx_backend_get_priority (backend),
                          sbx_level_to_string (sbx_backend_get_probe_level (backend)),
                          sbx_backend_is_unconfined_only (backend) ? ", unconfined-only" : "",
                          joined);
}

/*
 * SBX_BACKEND=help: every candidate is probed and listed — in the error
 * message (which `sbx run` prints before exiting 125) and as "rejected"
 * entries of the report — and selection then FAILS with
 * SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE.  Unlike GIO's print_help we do not
 * continue with the default choice: someone asking which backends exist
 * should not have their command run under a backend they did not pick, and
 * the library never prints on its own.
 */
static SbxBackend *
select_help (GPtrArray        *backends,
             SbxCompileReport *report,
             GError          **error)
{
  g_autoptr(GString) listing = g_string_new ("SBX_BACKEND=help: candidates in priority order:");

  for (guint i = 0; i < backends->len; i++)
    {
      g_autofree char *line = describe_candidate (backends->pdata[i]);

      g_string_append_printf (listing, "\n  %s", line);
      sbx_compile_report_add_rejected (report, sbx_backend_get_name (backends->pdata[i]),
                                       "SBX_BACKEND=help: listed, not selected");
    }
  if (backends->len == 0)
    g_string_append (listing, "\n  (no backend plugin is loaded)");
  g_string_append (listing, "\nNo backend was selected. Unset SBX_BACKEND, or set it to one of these names "
                            "(or to -NAME to veto one).");
  sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE, "%s", listing->str);
  return NULL;
}

SbxBackend *
sbx_registry_select_backend (SbxRegistry               *self,
                             const SbxBackendSelection *selection,
                             SbxCompileReport          *report,
                             GError                   **error)
{
  g_autoptr(SbxCompileReport) local_report = NULL;
  g_autoptr(GPtrArray) backends = NULL;
  g_autoptr(GPtrArray) refused = NULL;
  g_autoptr(GString) reasons = g_string_new (NULL);
  g_auto(ForcedBackend) forced = { 0 };
  const char *forced_text;
  gboolean found_selected = FALSE;

  g_return_val_if_fail (SBX_IS_REGISTRY (self), NULL);
  g_return_val_if_fail (selection != NULL, NULL);
  g_return_val_if_fail (report == NULL || !sbx_compile_report_is_frozen (report), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (report == NULL)
    report = local_report = sbx_compile_report_new ();
  sbx_compile_report_set_required (report, selection->required_guarantees);

  forced_text = selection->forced_backend != NULL ? selection->forced_backend : g_getenv ("SBX_BACKEND");
  if (!parse_forced_backend (forced_text, &forced, error))
    return NULL;

  snapshot_candidates (self, &backends, &refused);

  /* Refused plugins are candidates that never made it: say so. */
  for (guint i = 0; i < refused->len; i++)
    {
      SbxPlugin *plugin = refused->pdata[i];
      g_autofree char *reason = g_strdup_printf ("plugin refused at load: %s", plugin->error->message);

      sbx_compile_report_add_rejected (report, plugin->name, reason);
    }

  if (forced.help)
    return select_help (backends, report, error);

  for (guint i = 0; i < backends->len && forced.select != NULL; i++)
    if (g_str_equal (sbx_backend_get_name (backends->pdata[i]), forced.select))
      found_selected = TRUE;
  if (forced.select != NULL && !found_selected)
    {
      g_autoptr(GString) loaded = g_string_new (NULL);

      for (guint i = 0; i < backends->len; i++)
        g_string_append_printf (loaded, "%s%s", i > 0 ? ", " : "", sbx_backend_get_name (backends->pdata[i]));
      sbx_compile_report_add_rejected (report, forced.select, "SBX_BACKEND names it, but no loaded plugin provides it");
      sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE,
                            "SBX_BACKEND=%s: no loaded plugin provides a backend of that name "
                            "(loaded backends: %s); there is no fallback to another backend",
                            forced.select, loaded->len > 0 ? loaded->str : "none");
      return NULL;
    }

  for (guint i = 0; i < backends->len; i++)
    {
      SbxBackend *backend = backends->pdata[i];
      const char *name = sbx_backend_get_name (backend);
      g_autoptr(GError) probe_error = NULL;
      g_autofree char *reason = NULL;

      if (forced.select != NULL && !g_str_equal (name, forced.select))
        reason = g_strdup_printf ("not selected (SBX_BACKEND=%s)", forced.select);
      else if (forced.vetoes != NULL && g_strv_contains ((const char *const *) forced.vetoes, name))
        reason = g_strdup ("vetoed by SBX_BACKEND");
      else if (!sbx_backend_probe (backend, NULL, &probe_error))
        reason = g_strdup (probe_error->message);  /* "plugin 'P', extension 'E': probe failed: ..." */
      else
        reason = check_candidate (backend, selection);

      if (reason == NULL)
        {
          sbx_compile_report_set_backend (report, name);
          sbx_compile_report_set_level (report, sbx_backend_get_probe_level (backend));
          sbx_compile_report_set_guarantees (report, sbx_backend_get_probe_guarantees (backend));
          return sbx_backend_ref (backend);
        }
      sbx_compile_report_add_rejected (report, name, reason);
      if (forced.select == NULL || g_str_equal (name, forced.select))
        g_string_append_printf (reasons, "; %s: %s", name, reason);
    }

  if (forced.select != NULL)
    sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE,
                          "SBX_BACKEND=%s: that backend cannot run this profile%s; there is no fallback to "
                          "another backend", forced.select, reasons->str);
  else if (backends->len == 0)
    sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE,
                          "no backend plugin is loaded%s. Hint: run 'sbx doctor' to see the plugin "
                          "directories searched and the plugins refused",
                          refused->len > 0 ? " (some plugins were refused)" : "");
  else
    sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE,
                          "no backend can run this %s profile%s. Hint: run 'sbx doctor' for what this "
                          "host provides",
                          selection->unconfined ? "Unconfined" : "Sandboxed", reasons->str);
  return NULL;
}

/**
 * sbx_registry_preview_selection:
 * @self: a [class@Sbx.Registry]
 * @isolation: the profile's isolation
 * @required: the guarantees the profile requires
 * @out_report: (out) (optional) (transfer full): the selection report, set
 *   whether or not a backend was found
 * @error: return location for a [error@Sbx.PluginError]
 *
 * Runs backend selection as an executor set would for a profile with
 * @isolation and @required (honouring `SBX_BACKEND`) without compiling
 * anything: the report names the backend that would be chosen, its probed
 * level and guarantees, and every rejected candidate with the reason.
 *
 * Returns: %TRUE when a backend would be selected
 *
 * Since: 0.1
 */
gboolean
sbx_registry_preview_selection (SbxRegistry       *self,
                                SbxIsolation       isolation,
                                SbxGuarantees      required,
                                SbxCompileReport **out_report,
                                GError           **error)
{
  g_autoptr(SbxCompileReport) report = sbx_compile_report_new ();
  g_autoptr(SbxBackend) backend = NULL;
  SbxBackendSelection selection = { 0 };

  g_return_val_if_fail (SBX_IS_REGISTRY (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  selection.unconfined = isolation == SBX_ISOLATION_UNCONFINED;
  selection.required_guarantees = required;
  backend = sbx_registry_select_backend (self, &selection, report, error);
  sbx_compile_report_freeze (report);
  if (out_report != NULL)
    *out_report = g_steal_pointer (&report);
  return backend != NULL;
}

/* Removes the placeholder tree explain made (depth 2: set/{home,tmp,state}). */
static void
remove_explain_dirs (const char *set_dir)
{
  static const char *const children[] = { "home", "tmp", "state" };

  for (gsize i = 0; i < G_N_ELEMENTS (children); i++)
    {
      g_autofree char *child = g_build_filename (set_dir, children[i], NULL);

      g_rmdir (child);
    }
  g_rmdir (set_dir);
}

/**
 * sbx_registry_explain_profile:
 * @self: a [class@Sbx.Registry]
 * @backend: (nullable): a backend extension name, or %NULL for the backend
 *   an executor set would select for @profile on this host
 * @profile: the profile to explain
 * @out_report: (out) (optional) (transfer full): the entries the backend
 *   reported while compiling (narrowed, widened, unenforced ...)
 * @error: return location for a [error@Sbx.PluginError]
 *
 * Prints what @backend would compile for @profile: mount operations,
 * Landlock rules and the seccomp summary for the Linux backends, the SBPL
 * text for darwin-seatbelt, the token and job settings for win32-restricted.
 * A named backend is explained even where its probe fails (its compiler is
 * portable); nothing is spawned.  The executor's HOME, TMPDIR and state
 * directories are stand-ins created for the call (and removed after it), so
 * their names differ from a real run's.
 *
 * Returns: (transfer full) (nullable): the explanation (UTF-8), or %NULL
 *   with @error set when there is no such backend, it cannot explain, or
 *   the profile cannot be compiled by it
 *
 * Since: 0.1
 */
char *
sbx_registry_explain_profile (SbxRegistry       *self,
                              const char        *backend,
                              SbxProfile        *profile,
                              SbxCompileReport **out_report,
                              GError           **error)
{
  g_autoptr(SbxCompileReport) report = sbx_compile_report_new ();
  g_autoptr(SbxBackend) chosen = NULL;
  g_autoptr(SbxPolicy) policy = NULL;
  g_autofree char *set_dir = NULL;
  g_autofree char *home = NULL;
  g_autofree char *tmpdir = NULL;
  g_autofree char *state_dir = NULL;
  g_autofree char *template = NULL;
  SbxPolicyDirs dirs = { 0 };
  char *text;

  g_return_val_if_fail (SBX_IS_REGISTRY (self), NULL);
  g_return_val_if_fail (profile != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (backend != NULL)
    {
      chosen = sbx_registry_lookup_backend (self, backend);
      if (chosen == NULL)
        {
          sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_BACKEND_UNAVAILABLE,
                                "no loaded backend is called '%s'", backend);
          return NULL;
        }
    }
  else
    {
      g_autoptr(SbxCompileReport) selection_report = sbx_compile_report_new ();
      SbxBackendSelection selection = { 0 };

      selection.unconfined = sbx_profile_get_isolation (profile) == SBX_ISOLATION_UNCONFINED;
      selection.required_guarantees = sbx_profile_get_required_guarantees (profile);
      chosen = sbx_registry_select_backend (self, &selection, selection_report, error);
      if (chosen == NULL)
        return NULL;
    }

  /* Stand-in executor directories: a backend may open them while it
   * compiles, so they exist for the duration of the call. */
  template = g_build_filename (g_get_tmp_dir (), "sbx-explain-XXXXXX", NULL);
  set_dir = g_mkdtemp_full (template, 0700) != NULL ? g_strdup (template) : NULL;
  if (set_dir == NULL)
    {
      int errsv = errno;

      sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_FAILED, "explain: cannot create %s: %s",
                            template, g_strerror (errsv));
      return NULL;
    }
  home = g_build_filename (set_dir, "home", NULL);
  tmpdir = g_build_filename (set_dir, "tmp", NULL);
  state_dir = g_build_filename (set_dir, "state", NULL);
  if (g_mkdir (home, 0700) != 0 || g_mkdir (tmpdir, 0700) != 0 || g_mkdir (state_dir, 0700) != 0)
    {
      int errsv = errno;

      remove_explain_dirs (set_dir);
      sbx_set_plugin_error (error, SBX_PLUGIN_ERROR_FAILED,
                            "explain: cannot create the stand-in directories under %s: %s",
                            set_dir, g_strerror (errsv));
      return NULL;
    }
  dirs.home = home;
  dirs.home_owned = sbx_profile_get_home (profile) == SBX_HOME_ISOLATED;
  if (!dirs.home_owned)
    dirs.home = g_get_home_dir ();
  dirs.tmpdir = tmpdir;
  dirs.state_dir = state_dir;
  dirs.set_dir = set_dir;
  policy = sbx_policy_new_for_profile (profile, &dirs);

  text = sbx_backend_explain (chosen, sbx_policy_get_abi (policy), report, error);
  remove_explain_dirs (set_dir);
  if (text == NULL)
    return NULL;
  sbx_compile_report_set_backend (report, sbx_backend_get_name (chosen));
  sbx_compile_report_freeze (report);
  if (out_report != NULL)
    *out_report = g_steal_pointer (&report);
  return text;
}
