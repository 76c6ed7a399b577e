/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

#include <sbx/sbx.h>

#include "sbx-cmds.h"

/*
 * sbx profile check [--workspace DIR] FILE...
 * sbx profile show [--workspace DIR] (FILE | --default)
 * sbx profile restrict [--workspace DIR] BASE CEILING
 * sbx profile explain [--workspace DIR] [--backend NAME] (FILE | --default)
 * sbx profile learn [--profile BASE] [--workspace DIR] [--output FILE [--force]] -- COMMAND [ARG...]
 *   (tools/sbx-cmd-profile-learn.c)
 *
 * A relative or absent workspace.root in a file is resolved against
 * --workspace DIR, or the current directory: a shared profile file applies
 * to the project it is used in, not to the directory it is stored in.
 */

typedef struct
{
  const char *name;
  int       (*run) (int argc, char **argv);
  const char *summary;
} ProfileCommand;

static int profile_check    (int argc, char **argv);
static int profile_show     (int argc, char **argv);
static int profile_restrict (int argc, char **argv);
static int profile_explain  (int argc, char **argv);

static const ProfileCommand profile_commands[] = {
  { "check", profile_check, "Validate profile files and print their fingerprints" },
  { "show", profile_show, "Print a profile's normalized form, fingerprint and required guarantees" },
  { "restrict", profile_restrict, "Print the narrowing of BASE by CEILING" },
  { "explain", profile_explain, "Print what a backend would compile for a profile" },
  { "learn", sbx_cmd_profile_learn, "Run a command and print the profile change it would need, as a diff" },
};

static void
print_profile_usage (FILE *out)
{
  fprintf (out,
           "Usage:\n"
           "  sbx profile check [--workspace DIR] FILE...\n"
           "  sbx profile show [--workspace DIR] (FILE | --default)\n"
           "  sbx profile restrict [--workspace DIR] BASE CEILING\n"
           "  sbx profile explain [--workspace DIR] [--backend NAME] (FILE | --default)\n"
           "  sbx profile learn [--profile BASE] [--workspace DIR] [--output FILE [--force]] -- COMMAND [ARG...]\n"
           "\n"
           "Commands:\n");
  for (gsize i = 0; i < G_N_ELEMENTS (profile_commands); i++)
    fprintf (out, "  %-10s %s\n", profile_commands[i].name, profile_commands[i].summary);
  fprintf (out,
           "\nA relative or absent workspace.root is resolved against --workspace DIR,\n"
           "or the current directory.  Run 'sbx profile COMMAND --help' for details.\n");
}

/* Parses options; on a usage error prints it and returns FALSE. */
static gboolean
parse_options (GOptionContext *context,
               const char     *name,
               int            *argc,
               char         ***argv)
{
  g_autoptr(GError) error = NULL;

  if (!g_option_context_parse (context, argc, argv, &error))
    {
      sbx_cli_error ("profile %s: %s (see sbx profile %s --help)", name, error->message, name);
      return FALSE;
    }
  return TRUE;
}

static SbxProfile *
load_profile (const char *file,
              const char *workspace)
{
  g_autoptr(GError) error = NULL;
  SbxProfile *profile = sbx_profile_new_from_file (file, workspace, &error);

  if (profile == NULL)
    {
      /* File errors already name the file; content errors start with the
       * member path. */
      if (error->domain == G_FILE_ERROR)
        sbx_cli_error ("%s", error->message);
      else
        sbx_cli_error ("%s: %s", file, error->message);
    }
  return profile;
}

static int
profile_check (int    argc,
               char **argv)
{
  g_autofree char *workspace = NULL;
  const GOptionEntry entries[] = {
    { "workspace", 'w', 0, G_OPTION_ARG_FILENAME, &workspace,
      "Resolve a relative or absent workspace.root against DIR (default: the current directory)", "DIR" },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("FILE...");
  int status = SBX_CLI_EXIT_OK;

  g_set_prgname ("sbx profile check");
  g_option_context_set_summary (context,
                                "Validates each profile FILE.  Prints \"FILE: ok FINGERPRINT\" for a valid one;\n"
                                "for an invalid one prints why on stderr, naming the member path and value.\n"
                                "Exits with 0 when every file is valid, 1 otherwise, 2 on a usage error.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!parse_options (context, "check", &argc, &argv))
    return SBX_CLI_EXIT_USAGE;
  if (argc < 2)
    {
      sbx_cli_error ("profile check: no profile file given (see sbx profile check --help)");
      return SBX_CLI_EXIT_USAGE;
    }
  for (int i = 1; i < argc; i++)
    {
      g_autoptr(SbxProfile) profile = load_profile (argv[i], workspace);

      if (profile == NULL)
        {
          status = SBX_CLI_EXIT_FAILURE;
          continue;
        }
      printf ("%s: ok %s\n", argv[i], sbx_profile_get_fingerprint (profile));
    }
  return status;
}

/* [a-z0-9-]+: printed inside JSON quotes as it is. */
static gboolean
is_plain_json_word (const char *text)
{
  if (text == NULL || text[0] == '\0')
    return FALSE;
  for (const char *p = text; *p != '\0'; p++)
    if (!g_ascii_islower (*p) && !g_ascii_isdigit (*p) && *p != '-')
      return FALSE;
  return TRUE;
}

static int
profile_show (int    argc,
              char **argv)
{
  g_autofree char *workspace = NULL;
  gboolean use_default = FALSE;
  const GOptionEntry entries[] = {
    { "workspace", 'w', 0, G_OPTION_ARG_FILENAME, &workspace,
      "The workspace of --default, and the directory a relative or absent workspace.root "
      "is resolved against (default: the current directory)", "DIR" },
    { "default", 0, 0, G_OPTION_ARG_NONE, &use_default,
      "Show the built-in default profile", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("(FILE | --default)");
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) out = NULL;
  g_autofree char *profile_json = NULL;
  g_auto(GStrv) guarantees = NULL;

  g_set_prgname ("sbx profile show");
  g_option_context_set_summary (context,
                                "Prints one JSON object: {\"profile\": the normalized profile,\n"
                                "\"fingerprint\": its SHA-256 fingerprint, \"required-guarantees\": the\n"
                                "guarantees a backend must achieve to run it}.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!parse_options (context, "show", &argc, &argv))
    return SBX_CLI_EXIT_USAGE;
  if ((use_default && argc != 1) || (!use_default && argc != 2))
    {
      sbx_cli_error ("profile show: give exactly one FILE or --default (see sbx profile show --help)");
      return SBX_CLI_EXIT_USAGE;
    }

  if (use_default)
    {
      profile = sbx_profile_new_default (workspace, &error);
      if (profile == NULL)
        {
          sbx_cli_error ("default profile: %s", error->message);
          return SBX_CLI_EXIT_FAILURE;
        }
    }
  else
    {
      profile = load_profile (argv[1], workspace);
      if (profile == NULL)
        return SBX_CLI_EXIT_FAILURE;
    }

  /* The object is written here rather than built with json-glib and
   * generated: parsing sbx_profile_to_json()'s text back into a tree to nest
   * it was a third of this command's own cost.  The bytes are the ones
   * json-glib's pretty generator (indent 2) printed for that tree:
   * sbx_profile_to_json() is that generator's text, one line per member, no
   * raw newline inside a string, so nesting it one level deeper is indenting
   * every line after the first by two spaces.  The other members are
   * written as that generator writes them ("name" : value, an empty array
   * as []); a fingerprint and guarantee names are lowercase ASCII words and
   * hex, which need no escaping (checked, not assumed). */
  profile_json = sbx_profile_to_json (profile);
  if (!g_str_has_suffix (profile_json, "\n"))
    {
      sbx_cli_error ("profile show: internal error: the normalized profile does not end with a newline");
      return SBX_CLI_EXIT_FAILURE;
    }
  guarantees = sbx_guarantees_to_strv (sbx_profile_get_required_guarantees (profile));
  out = g_string_sized_new (strlen (profile_json) * 2);
  g_string_append (out, "{\n  \"profile\" : ");
  for (const char *line = profile_json; *line != '\0';)
    {
      const char *end = strchr (line, '\n');

      if (line != profile_json)
        g_string_append (out, "  ");
      g_string_append_len (out, line, end - line);
      line = end + 1;
      g_string_append (out, *line != '\0' ? "\n" : ",\n");
    }
  if (!is_plain_json_word (sbx_profile_get_fingerprint (profile)))
    {
      sbx_cli_error ("profile show: internal error: unexpected fingerprint text");
      return SBX_CLI_EXIT_FAILURE;
    }
  g_string_append_printf (out, "  \"fingerprint\" : \"%s\",\n  \"required-guarantees\" : ",
                          sbx_profile_get_fingerprint (profile));
  if (guarantees[0] == NULL)
    g_string_append (out, "[]\n");
  else
    {
      g_string_append (out, "[\n");
      for (guint i = 0; guarantees[i] != NULL; i++)
        {
          if (!is_plain_json_word (guarantees[i]))
            {
              sbx_cli_error ("profile show: internal error: unexpected guarantee name");
              return SBX_CLI_EXIT_FAILURE;
            }
          g_string_append_printf (out, "    \"%s\"%s\n", guarantees[i], guarantees[i + 1] != NULL ? "," : "");
        }
      g_string_append (out, "  ]\n");
    }
  g_string_append (out, "}\n");
  fputs (out->str, stdout);
  return SBX_CLI_EXIT_OK;
}

static int
profile_restrict (int    argc,
                  char **argv)
{
  g_autofree char *workspace = NULL;
  const GOptionEntry entries[] = {
    { "workspace", 'w', 0, G_OPTION_ARG_FILENAME, &workspace,
      "Resolve a relative or absent workspace.root against DIR (default: the current directory)", "DIR" },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("BASE CEILING");
  g_autoptr(SbxProfile) base = NULL;
  g_autoptr(SbxProfile) ceiling = NULL;
  g_autoptr(SbxProfile) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;

  g_set_prgname ("sbx profile restrict");
  g_option_context_set_summary (context,
                                "Prints the normalized JSON of BASE narrowed by CEILING: every access the\n"
                                "smaller of the two, path by path, so the result allows nothing either\n"
                                "profile denies.  Both must have the same workspace root.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!parse_options (context, "restrict", &argc, &argv))
    return SBX_CLI_EXIT_USAGE;
  if (argc != 3)
    {
      sbx_cli_error ("profile restrict: give exactly BASE and CEILING (see sbx profile restrict --help)");
      return SBX_CLI_EXIT_USAGE;
    }
  base = load_profile (argv[1], workspace);
  if (base == NULL)
    return SBX_CLI_EXIT_FAILURE;
  ceiling = load_profile (argv[2], workspace);
  if (ceiling == NULL)
    return SBX_CLI_EXIT_FAILURE;
  result = sbx_profile_restrict (base, ceiling, &error);
  if (result == NULL)
    {
      sbx_cli_error ("%s", error->message);
      return SBX_CLI_EXIT_FAILURE;
    }
  text = sbx_profile_to_json (result);
  fputs (text, stdout);
  return SBX_CLI_EXIT_OK;
}

static int
profile_explain (int    argc,
                 char **argv)
{
  g_autofree char *workspace = NULL;
  g_autofree char *backend = NULL;
  gboolean use_default = FALSE;
  const GOptionEntry entries[] = {
    { "workspace", 'w', 0, G_OPTION_ARG_FILENAME, &workspace,
      "The workspace of --default, and the directory a relative or absent workspace.root "
      "is resolved against (default: the current directory)", "DIR" },
    { "backend", 'b', 0, G_OPTION_ARG_STRING, &backend,
      "Explain for backend NAME (any loaded one, even where it cannot run; default: the one "
      "an executor set would select here)", "NAME" },
    { "default", 0, 0, G_OPTION_ARG_NONE, &use_default,
      "Explain the built-in default profile", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("(FILE | --default)");
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxCompileReport) report = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  SbxRegistry *registry;

  g_set_prgname ("sbx profile explain");
  g_option_context_set_summary (context,
                                "Prints what a backend would compile for the profile: mount operations,\n"
                                "Landlock rules and the seccomp summary for the Linux backends, the SBPL\n"
                                "text for darwin-seatbelt, the token and job settings for win32-restricted,\n"
                                "then the entries the backend reported (narrowed, widened, unenforced).\n"
                                "Nothing is spawned.  HOME, TMPDIR and the executor's state directory are\n"
                                "stand-ins made for the call.  Exits 0, or 1 when the backend is missing or\n"
                                "cannot compile the profile, 2 on a usage error.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!parse_options (context, "explain", &argc, &argv))
    return SBX_CLI_EXIT_USAGE;
  if ((use_default && argc != 1) || (!use_default && argc != 2))
    {
      sbx_cli_error ("profile explain: give exactly one FILE or --default (see sbx profile explain --help)");
      return SBX_CLI_EXIT_USAGE;
    }
  if (use_default)
    {
      profile = sbx_profile_new_default (workspace, &error);
      if (profile == NULL)
        {
          sbx_cli_error ("default profile: %s", error->message);
          return SBX_CLI_EXIT_FAILURE;
        }
    }
  else
    {
      profile = load_profile (argv[1], workspace);
      if (profile == NULL)
        return SBX_CLI_EXIT_FAILURE;
    }

  registry = sbx_registry_get_default ();
  text = sbx_registry_explain_profile (registry, backend, profile, &report, &error);
  if (text == NULL)
    {
      sbx_cli_error ("profile explain: %s", error->message);
      return SBX_CLI_EXIT_FAILURE;
    }
  printf ("; backend: %s\n", sbx_compile_report_get_backend (report));
  fputs (text, stdout);
  if (text[0] != '\0' && text[strlen (text) - 1] != '\n')
    putchar ('\n');
  printf ("; --- report ---\n");
  for (guint i = 0; i < sbx_compile_report_get_n_entries (report); i++)
    {
      const char *detail = sbx_compile_report_get_entry_detail (report, i);

      printf ("; %-10s %s%s%s\n",
              sbx_report_status_to_string (sbx_compile_report_get_entry_status (report, i)),
              sbx_compile_report_get_entry_feature (report, i),
              detail != NULL && detail[0] != '\0' ? ": " : "",
              detail != NULL ? detail : "");
    }
  return SBX_CLI_EXIT_OK;
}

/**
 * sbx_cmd_profile:
 * @argc: argument count; argv[0] is "profile"
 * @argv: the arguments
 *
 * `sbx profile check|show|restrict|explain|learn ...`.
 *
 * Returns: the exit status
 */
int
sbx_cmd_profile (int    argc,
                 char **argv)
{
  if (argc < 2)
    {
      print_profile_usage (stderr);
      return SBX_CLI_EXIT_USAGE;
    }
  if (g_str_equal (argv[1], "--help") || g_str_equal (argv[1], "-h"))
    {
      print_profile_usage (stdout);
      return SBX_CLI_EXIT_OK;
    }
  for (gsize i = 0; i < G_N_ELEMENTS (profile_commands); i++)
    if (g_str_equal (argv[1], profile_commands[i].name))
      return profile_commands[i].run (argc - 1, argv + 1);
  sbx_cli_error ("profile: unknown command \"%s\" (see sbx profile --help)", argv[1]);
  return SBX_CLI_EXIT_USAGE;
}
