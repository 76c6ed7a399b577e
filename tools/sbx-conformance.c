/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx-conformance PLUGIN.so [--backend NAME] [--json FILE] [--probe-helper PATH]
 *
 * Loads one plugin file (a copy, from a private directory, through the
 * ordinary loader) and proves each of its backends against what it claims:
 * every claimed guarantee is attacked from inside the sandbox and must hold,
 * with a positive control outside; compile may not claim more than probe;
 * teardown leaves nothing; limits hold as reported.  Prints TAP on stdout
 * and a JSON summary on stderr (or into FILE); exits 0 when no case failed,
 * 1 when one did, 2 when the run could not be set up.
 */
#include "config-conformance.h"
#include "sbx-conformance-cases.h"

#include <locale.h>
#include <stdio.h>
#include <unistd.h>

typedef struct
{
  guint n;
} Tap;

static void
emit_tap (const SbxConformanceCase *c,
          gpointer                  user_data)
{
  Tap             *tap = user_data;
  g_autofree char *detail = g_strdelimit (g_strdup (c->detail), "\n", ' ');
  const char      *word = c->outcome == SBX_CONFORMANCE_FAIL ? "not ok" : "ok";

  tap->n++;
  if (c->outcome == SBX_CONFORMANCE_SKIP)
    g_print ("%s %u - %s%s%s/%s # SKIP %s\n", word, tap->n, c->backend != NULL ? c->backend : "",
             c->backend != NULL ? " " : "", c->area, c->name, detail);
  else
    g_print ("%s %u - %s%s%s/%s: %s\n", word, tap->n, c->backend != NULL ? c->backend : "",
             c->backend != NULL ? " " : "", c->area, c->name, detail);
  fflush (stdout);
}

/* The probe helper: --probe-helper, else next to this program (a build
 * tree), else the installed one. */
static char *
find_probe_helper (const char *given)
{
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  g_autofree char *dir = self != NULL ? g_path_get_dirname (self) : NULL;
  char            *beside = dir != NULL ? g_build_filename (dir, "sbx-conformance-probe", NULL) : NULL;

  if (given != NULL)
    {
      g_free (beside);
      return g_strdup (given);
    }
  if (beside != NULL && g_file_test (beside, G_FILE_TEST_IS_EXECUTABLE))
    return beside;
  g_free (beside);
  return g_build_filename (SBX_CONFORMANCE_LIBEXECDIR, "sbx-conformance-probe", NULL);
}

int
main (int    argc,
      char **argv)
{
  g_autofree char *backend = NULL;
  g_autofree char *json_file = NULL;
  g_autofree char *helper_arg = NULL;
  g_autofree char *helper = NULL;
  g_autofree char *self = NULL;
  g_autofree char *summary = NULL;
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GPtrArray) cases = NULL;
  g_autoptr(GError) error = NULL;
  SbxConformanceOptions options = { 0 };
  Tap                   tap = { 0 };
  gboolean              failed = FALSE;
  GOptionEntry          entries[] = {
    { "backend", 'b', 0, G_OPTION_ARG_STRING, &backend, "Judge only this backend of the plugin", "NAME" },
    { "json", 0, 0, G_OPTION_ARG_FILENAME, &json_file, "Write the JSON summary to FILE (default: stderr)", "FILE" },
    { "probe-helper", 0, 0, G_OPTION_ARG_FILENAME, &helper_arg, "The sbx-conformance-probe program to use", "PATH" },
    { NULL, 0, 0, G_OPTION_ARG_NONE, NULL, NULL, NULL },
  };

  setlocale (LC_ALL, "");
  /* Hidden mode: the supervisor the killed-supervisor case kills. */
  if (argc >= 2 && g_str_equal (argv[1], "--supervise-child"))
    return sbx_conformance_supervise_child (argc - 2, argv + 2);

  /* Before any thread exists: the secret env-scrub must hide. */
  sbx_conformance_prepare_environment ();

  context = g_option_context_new ("PLUGIN.so — prove a plugin's backends against their claims");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || argc != 2)
    {
      g_printerr ("sbx-conformance: %s\nUsage: sbx-conformance PLUGIN.so [--backend NAME] [--json FILE]\n",
                  error != NULL ? error->message : "exactly one plugin file is needed");
      return 2;
    }

  helper = find_probe_helper (helper_arg);
  self = g_file_read_link ("/proc/self/exe", NULL);
  options.plugin_path = argv[1];
  options.backend = backend;
  options.probe_helper = helper;
  options.self_path = self;
  options.emit = emit_tap;
  options.user_data = &tap;
  g_print ("TAP version 13\n");
  if (!sbx_conformance_run (&options, &cases, &error))
    {
      g_print ("1..0 # SKIP cannot run: %s\n", error->message);
      g_printerr ("sbx-conformance: %s\n", error->message);
      return 2;
    }
  g_print ("1..%u\n", tap.n);

  for (guint i = 0; i < cases->len; i++)
    failed = failed || ((SbxConformanceCase *) cases->pdata[i])->outcome == SBX_CONFORMANCE_FAIL;
  summary = sbx_conformance_summary_json (argv[1], cases);
  if (json_file != NULL)
    {
      if (!g_file_set_contents (json_file, summary, -1, &error))
        {
          g_printerr ("sbx-conformance: %s\n", error->message);
          return 2;
        }
    }
  else
    g_printerr ("%s\n", summary);
  return failed ? 1 : 0;
}
