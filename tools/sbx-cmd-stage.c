/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx stage list|diff|apply|discard, and what `sbx run --stage` and
 * `sbx run --review` print after a staged run (docs/staging.md).
 */
#include "sbx-cmds.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <json-glib/json-glib.h>
#include <sbx/sbx.h>

#define STALE_AFTER (G_TIME_SPAN_DAY)

static void
print_summary (SbxChanges *changes)
{
  g_autofree char *summary = sbx_changes_get_summary (changes);

  fputs (summary, stderr);
}

static int
stage_apply (SbxChanges        *changes,
             const char *const *paths)
{
  g_autoptr(GError) error = NULL;

  if (!sbx_changes_apply (changes, paths, NULL, NULL, NULL, &error))
    {
      sbx_cli_error ("stage apply: %s", error->message);
      return SBX_CLI_EXIT_FAILURE;
    }
  fprintf (stderr, "sbx: stage %s applied\n", sbx_changes_get_id (changes));
  return SBX_CLI_EXIT_OK;
}

static int
stage_discard (SbxChanges *changes)
{
  g_autoptr(GError) error = NULL;

  if (!sbx_changes_discard (changes, &error))
    {
      sbx_cli_error ("stage discard: %s", error->message);
      return SBX_CLI_EXIT_FAILURE;
    }
  fprintf (stderr, "sbx: stage %s discarded\n", sbx_changes_get_id (changes));
  return SBX_CLI_EXIT_OK;
}

/* After a staged run: the summary and the ID on stderr; with @review, on
 * a terminal, ask what to do with it. */
void
sbx_run_stage_finish (const char *id,
                      gboolean    review,
                      gboolean    json)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxChanges) changes = sbx_changes_open (id, &error);
  char answer[16];

  if (changes == NULL)
    {
      sbx_cli_error ("run: stage %s: %s", id, error->message);
      return;
    }
  print_summary (changes);
  fprintf (stderr, "sbx: staged in %s (stage %s); apply with `sbx stage apply %s`\n",
           sbx_changes_get_dir (changes), id, id);
  if (json)
    {
      g_autoptr(JsonBuilder) b = json_builder_new ();
      g_autoptr(JsonGenerator) gen = json_generator_new ();
      g_autoptr(JsonNode) root = NULL;
      g_autofree char *text = NULL;

      json_builder_begin_object (b);
      json_builder_set_member_name (b, "stage");
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "id");
      json_builder_add_string_value (b, id);
      json_builder_set_member_name (b, "dir");
      json_builder_add_string_value (b, sbx_changes_get_dir (changes));
      json_builder_set_member_name (b, "changes");
      json_builder_add_int_value (b, sbx_changes_get_n_changes (changes));
      json_builder_end_object (b);
      json_builder_end_object (b);
      root = json_builder_get_root (b);
      json_generator_set_root (gen, root);
      text = json_generator_to_data (gen, NULL);
      fprintf (stderr, "%s\n", text);
    }
  if (!review)
    return;
  if (!isatty (STDIN_FILENO))
    {
      sbx_cli_error ("run: --review needs a terminal on stdin; the stage is kept");
      return;
    }
  for (;;)
    {
      fprintf (stderr, "Apply, discard, show the diff, or keep the stage? [a/d/s/k] ");
      if (fgets (answer, sizeof answer, stdin) == NULL || answer[0] == 'k')
        return;
      if (answer[0] == 'a')
        {
          stage_apply (changes, NULL);
          return;
        }
      if (answer[0] == 'd')
        {
          stage_discard (changes);
          return;
        }
      if (answer[0] == 's')
        {
          g_autofree char *diff = sbx_changes_get_diff (changes, NULL, NULL);

          fputs (diff != NULL ? diff : "", stdout);
          fflush (stdout);
        }
    }
}

int
sbx_cmd_stage (int    argc,
               char **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxChanges) changes = NULL;
  const char *verb;

  g_set_prgname ("sbx stage");
  context = g_option_context_new ("list | diff ID [PATH] | apply ID [PATH...] | discard ID");
  g_option_context_set_summary (context, "Review, apply or discard what a staged run "
                                         "(sbx run --stage) wrote.");
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      sbx_cli_error ("stage: %s", error->message);
      return SBX_CLI_EXIT_USAGE;
    }
  verb = argc > 1 ? argv[1] : NULL;
  if (verb != NULL && strcmp (verb, "list") == 0 && argc == 2)
    {
      g_auto(GStrv) ids = sbx_changes_list_stages (&error);

      if (ids == NULL)
        {
          sbx_cli_error ("stage list: %s", error->message);
          return SBX_CLI_EXIT_FAILURE;
        }
      for (guint i = 0; ids[i] != NULL; i++)
        {
          g_autoptr(SbxChanges) one = sbx_changes_open (ids[i], NULL);

          printf ("%s\t%u changes\t%s\n", ids[i], one != NULL ? sbx_changes_get_n_changes (one) : 0,
                  one != NULL && sbx_changes_get_command (one) != NULL ? sbx_changes_get_command (one)
                  : "(unreadable)");
        }
      return SBX_CLI_EXIT_OK;
    }
  if (verb == NULL || argc < 3 || (strcmp (verb, "diff") != 0 && strcmp (verb, "apply") != 0
                                   && strcmp (verb, "discard") != 0)
      || (strcmp (verb, "discard") == 0 && argc != 3) || (strcmp (verb, "diff") == 0 && argc > 4))
    {
      sbx_cli_error ("stage: usage: sbx stage list | diff ID [PATH] | apply ID [PATH...] | discard ID");
      return SBX_CLI_EXIT_USAGE;
    }
  changes = sbx_changes_open (argv[2], &error);
  if (changes == NULL)
    {
      sbx_cli_error ("stage %s: %s", verb, error->message);
      return SBX_CLI_EXIT_FAILURE;
    }
  if (strcmp (verb, "diff") == 0)
    {
      g_autofree char *diff = sbx_changes_get_diff (changes, argc == 4 ? argv[3] : NULL, &error);

      if (diff == NULL)
        {
          sbx_cli_error ("stage diff: %s", error->message);
          return SBX_CLI_EXIT_FAILURE;
        }
      fputs (diff, stdout);
      return SBX_CLI_EXIT_OK;
    }
  if (strcmp (verb, "discard") == 0)
    return stage_discard (changes);
  return stage_apply (changes, argc > 3 ? (const char *const *) argv + 3 : NULL);
}

static gboolean
stage_is_stale (SbxChanges *changes)
{
  g_autoptr(GDateTime) now = g_date_time_new_now_utc ();
  GDateTime *created = sbx_changes_get_created (changes);

  return created == NULL || g_date_time_difference (now, created) > STALE_AFTER;
}

void
sbx_doctor_print_stages (void)
{
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) ids = sbx_changes_list_stages (&error);

  if (ids == NULL)
    {
      sbx_cli_error ("cannot list the stages: %s", error->message);
      return;
    }
  if (ids[0] == NULL)
    {
      printf ("stages of staged runs: none\n");
      return;
    }
  printf ("stages of staged runs (`sbx stage apply ID` or `sbx stage discard ID`; stale: older than a day):\n");
  for (guint i = 0; ids[i] != NULL; i++)
    {
      g_autoptr(SbxChanges) changes = sbx_changes_open (ids[i], NULL);

      if (changes == NULL)
        printf ("  %s  (unreadable: discard it)\n", ids[i]);
      else
        printf ("  %s  %u changes%s  %s\n", ids[i], sbx_changes_get_n_changes (changes),
                stage_is_stale (changes) ? ", stale" : "",
                sbx_changes_get_command (changes) != NULL ? sbx_changes_get_command (changes) : "");
    }
}

JsonArray *
sbx_doctor_stages_json (void)
{
  JsonArray *array = json_array_new ();
  g_auto(GStrv) ids = sbx_changes_list_stages (NULL);

  for (guint i = 0; ids != NULL && ids[i] != NULL; i++)
    {
      g_autoptr(SbxChanges) changes = sbx_changes_open (ids[i], NULL);
      JsonObject *o = json_object_new ();

      json_object_set_string_member (o, "id", ids[i]);
      if (changes != NULL)
        {
          g_autofree char *created = sbx_changes_get_created (changes) != NULL
                                     ? g_date_time_format_iso8601 (sbx_changes_get_created (changes)) : NULL;

          json_object_set_int_member (o, "changes", sbx_changes_get_n_changes (changes));
          json_object_set_string_member (o, "created", created);
          json_object_set_string_member (o, "command", sbx_changes_get_command (changes));
        }
      json_object_set_boolean_member (o, "stale", changes == NULL || stage_is_stale (changes));
      json_array_add_object_element (array, o);
    }
  return array;
}
