/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The denials of `sbx run`: each distinct refusal once on stderr, as
 * "sbx: denied OPERATION TARGET (REASON); --approve CLASS:TARGET would open
 * it" (sbx_denial_to_string), so an agent reading the output knows what to
 * ask a person to approve, and with --report=json as one JSON object.
 * Filesystem refusals print the same way: "sbx: denied read
 * /home/u/.ssh/config (host read is gated); --approve
 * filesystem.path.read.v1:/home/u/.ssh/config would open it".
 */
#include "sbx-cmd-run-denials.h"

#include <stdio.h>
#include <json-glib/json-glib.h>

#include "sbx-cmds.h"

static void
add_denial (JsonBuilder *builder,
            SbxDenial   *denial)
{
  const char *const *argv = sbx_denial_get_argv (denial);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "operation");
  json_builder_add_string_value (builder, sbx_denial_operation_to_string (sbx_denial_get_operation (denial)));
  json_builder_set_member_name (builder, "target");
  json_builder_add_string_value (builder, sbx_denial_get_target (denial));
  json_builder_set_member_name (builder, "mechanism");
  json_builder_add_string_value (builder, sbx_denial_get_mechanism (denial));
  json_builder_set_member_name (builder, "count");
  json_builder_add_int_value (builder, (gint64) MIN (sbx_denial_get_count (denial), (guint64) G_MAXINT64));
  if (sbx_denial_get_grant_class (denial) != NULL)
    {
      json_builder_set_member_name (builder, "grant_class");
      json_builder_add_string_value (builder, sbx_denial_get_grant_class (denial));
      json_builder_set_member_name (builder, "grant_target");
      json_builder_add_string_value (builder, sbx_denial_get_grant_target (denial));
    }
  if (sbx_denial_get_reason (denial) != NULL)
    {
      json_builder_set_member_name (builder, "reason");
      json_builder_add_string_value (builder, sbx_denial_get_reason (denial));
    }
  /* the process inside, when the mechanism saw it (a filesystem refusal
   * or a unix connect: the sandbox's pid and argv[0]) */
  if (sbx_denial_get_pid (denial) > 0)
    {
      json_builder_set_member_name (builder, "pid");
      json_builder_add_int_value (builder, sbx_denial_get_pid (denial));
    }
  if (sbx_denial_get_process_name (denial) != NULL)
    {
      json_builder_set_member_name (builder, "process");
      json_builder_add_string_value (builder, sbx_denial_get_process_name (denial));
    }
  if (argv != NULL)
    {
      json_builder_set_member_name (builder, "argv");
      json_builder_begin_array (builder);
      for (gsize i = 0; argv[i] != NULL; i++)
        json_builder_add_string_value (builder, argv[i]);
      json_builder_end_array (builder);
    }
  json_builder_end_object (builder);
}

static void
print_json (GPtrArray *denials,
            guint64    dropped)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *text = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "denials");
  json_builder_begin_array (builder);
  for (guint i = 0; i < denials->len; i++)
    add_denial (builder, denials->pdata[i]);
  json_builder_end_array (builder);
  json_builder_set_member_name (builder, "denials_dropped");
  json_builder_add_int_value (builder, (gint64) MIN (dropped, (guint64) G_MAXINT64));
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  text = json_generator_to_data (generator, NULL);
  fprintf (stderr, "%s\n", text);
}

void
sbx_run_print_denials (SbxRunResult *result,
                       gboolean      json)
{
  GPtrArray *denials = sbx_run_result_get_denials (result);
  guint64 dropped = sbx_run_result_get_denials_dropped (result);

  for (guint i = 0; i < denials->len; i++)
    {
      g_autofree char *line = sbx_denial_to_string (denials->pdata[i]);

      sbx_cli_error ("%s", line);
    }
  if (dropped > 0)
    sbx_cli_error ("%" G_GUINT64_FORMAT " more refusals of other targets were not listed "
                   "(at most %u distinct denials are kept per run)", dropped, denials->len);
  if (json && (denials->len > 0 || dropped > 0))
    print_json (denials, dropped);
}

gboolean
sbx_run_print_command_denial (const GError *error,
                              SbxProfile   *profile,
                              const char   *command,
                              gboolean      json)
{
  const char *reason;
  gboolean gated;

  if (g_error_matches (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_REQUIRED)
      && sbx_profile_get_command (profile) == SBX_ACCESS_GATED)
    gated = TRUE;
  else if (g_error_matches (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_DENIED)
           && sbx_profile_get_command (profile) == SBX_ACCESS_DENY)
    gated = FALSE;
  else
    return FALSE;
  reason = gated ? "command execution is gated" : "the profile denies command execution";
  /* command.start.v1 without a target binds exactly this command line. */
  if (gated)
    sbx_cli_error ("denied command-start %s (%s); --approve %s would open it", command, reason,
                   SBX_GRANT_CLASS_COMMAND_START);
  else
    sbx_cli_error ("denied command-start %s (%s)", command, reason);
  if (json)
    {
      g_autoptr(JsonBuilder) builder = json_builder_new ();
      g_autoptr(JsonGenerator) generator = json_generator_new ();
      g_autoptr(JsonNode) root = NULL;
      g_autofree char *text = NULL;

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "denials");
      json_builder_begin_array (builder);
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "operation");
      json_builder_add_string_value (builder, "command-start");
      json_builder_set_member_name (builder, "target");
      json_builder_add_string_value (builder, command);
      json_builder_set_member_name (builder, "mechanism");
      json_builder_add_string_value (builder, "command-gate");
      json_builder_set_member_name (builder, "count");
      json_builder_add_int_value (builder, 1);
      if (gated)
        {
          json_builder_set_member_name (builder, "grant_class");
          json_builder_add_string_value (builder, SBX_GRANT_CLASS_COMMAND_START);
        }
      json_builder_set_member_name (builder, "reason");
      json_builder_add_string_value (builder, reason);
      json_builder_end_object (builder);
      json_builder_end_array (builder);
      json_builder_set_member_name (builder, "denials_dropped");
      json_builder_add_int_value (builder, 0);
      json_builder_end_object (builder);
      root = json_builder_get_root (builder);
      json_generator_set_root (generator, root);
      text = json_generator_to_data (generator, NULL);
      fprintf (stderr, "%s\n", text);
    }
  return TRUE;
}
