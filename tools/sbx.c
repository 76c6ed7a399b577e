/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <glib.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include <sbx/sbx.h>

#include "sbx-cmds.h"

typedef struct
{
  const char *name;
  int       (*run) (int argc, char **argv);
  const char *summary;
} SbxCommand;

/* One line per command; keep them sorted by name. */
static const SbxCommand commands[] = {
  { "doctor", sbx_cmd_doctor, "Show plugins, backend probes and what this host can enforce" },
  { "profile", sbx_cmd_profile, "Check, show and narrow profiles" },
  { "run", sbx_cmd_run, "Run one command in the sandbox" },
  { "stage", sbx_cmd_stage, "List, diff, apply or discard the stages of staged runs" },
};

static void
print_usage (FILE *out)
{
  fprintf (out,
           "Usage:\n"
           "  sbx COMMAND [ARGUMENT...]\n"
           "  sbx --version\n"
           "  sbx help [COMMAND]\n"
           "\n"
           "A least-authority process sandbox.\n"
           "\n"
           "Commands:\n");
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    fprintf (out, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf (out, "  %-10s %s\n", "help", "Show this help, or a command's");
  fprintf (out, "\nRun 'sbx COMMAND --help' for a command's options.\n");
}

/* The first line stays "sbx VERSION" (scripts read it); the rest names the
 * build a distribution made: where this sbx looks for plugins and which
 * plugins were built with it (what is installed may differ: see sbx
 * doctor). */
static void
print_version (void)
{
  printf ("sbx %s\n", SBX_VERSION_STRING);
  printf ("plugin directory: %s\n", SBX_CLI_PLUGINDIR);
  printf ("backends built: %s\n", SBX_CLI_BUILD_BACKENDS[0] != '\0' ? SBX_CLI_BUILD_BACKENDS : "(none)");
  printf ("egress built: %s\n", SBX_CLI_BUILD_EGRESS[0] != '\0' ? SBX_CLI_BUILD_EGRESS : "(none)");
  printf ("reporters built: %s\n", SBX_CLI_BUILD_REPORTERS[0] != '\0' ? SBX_CLI_BUILD_REPORTERS : "(none)");
}

/* The locale categories a command uses: LC_CTYPE (the charset its option
 * parser converts arguments from and GLib converts messages to) and
 * LC_MESSAGES (translated system and GLib messages).  Nothing in sbx
 * formats numbers, dates, money or collates text by the locale (its output
 * is for scripts: JSON, fixed words), so the other categories stay "C";
 * loading them all (LC_ALL) was half again the cost of these two. */
static void
set_command_locale (void)
{
  setlocale (LC_CTYPE, "");
  setlocale (LC_MESSAGES, "");
}

static const SbxCommand *
find_command (const char *name)
{
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    if (g_str_equal (commands[i].name, name))
      return &commands[i];
  return NULL;
}

int
main (int    argc,
      char **argv)
{
  const SbxCommand *command;

  /* The locale is set only for a command (its option parser converts
   * arguments from the locale's charset): --version and the usage text are
   * ASCII, and loading the locale is a measurable part of their run. */
  if (argc < 2)
    {
      print_usage (stderr);
      return SBX_CLI_EXIT_USAGE;
    }
  if (g_str_equal (argv[1], "--version"))
    {
      print_version ();
      return SBX_CLI_EXIT_OK;
    }
  if (g_str_equal (argv[1], "--help") || g_str_equal (argv[1], "-h")
      || (g_str_equal (argv[1], "help") && argc == 2))
    {
      print_usage (stdout);
      return SBX_CLI_EXIT_OK;
    }
  if (g_str_equal (argv[1], "help"))
    {
      /* "sbx help COMMAND [SUB]" is "sbx COMMAND [SUB] --help". */
      g_autoptr(GPtrArray) args = g_ptr_array_new ();

      command = find_command (argv[2]);
      if (command == NULL)
        {
          sbx_cli_error ("unknown command \"%s\" (see sbx --help)", argv[2]);
          return SBX_CLI_EXIT_USAGE;
        }
      for (int i = 2; i < argc; i++)
        g_ptr_array_add (args, argv[i]);
      g_ptr_array_add (args, (gpointer) "--help");
      g_ptr_array_add (args, NULL);
      set_command_locale ();
      return command->run ((int) args->len - 1, (char **) args->pdata);
    }
  if (argv[1][0] == '-')
    {
      sbx_cli_error ("unknown option %s (see sbx --help)", argv[1]);
      return SBX_CLI_EXIT_USAGE;
    }

  command = find_command (argv[1]);
  if (command == NULL)
    {
      sbx_cli_error ("unknown command \"%s\" (see sbx --help)", argv[1]);
      return SBX_CLI_EXIT_USAGE;
    }
  set_command_locale ();
  return command->run (argc - 1, argv + 1);
}
