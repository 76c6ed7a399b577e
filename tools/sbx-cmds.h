/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * The sbx command line: one function per subcommand, each in its own file
 * tools/sbx-cmd-<name>.c, listed in the table in tools/sbx.c (one line per
 * command).
 *
 * Convention for every subcommand:
 *  - argv[0] is the subcommand's name ("profile"), the rest its arguments,
 *    so a GOptionContext can parse (argc, argv) directly;
 *  - before parsing, call g_set_prgname ("sbx <name>") once, so --help shows
 *    the right usage line (main never sets it on the subcommand path);
 *  - messages go to stderr and start with "sbx: " (use sbx_cli_error());
 *    machine-readable output on stdout is JSON;
 *  - return the exit status: 0 success, 1 the operation failed, 2 usage
 *    error (SBX_CLI_EXIT_USAGE).  `sbx run` uses its own documented codes.
 */

#define SBX_CLI_EXIT_OK      0
#define SBX_CLI_EXIT_FAILURE 1
#define SBX_CLI_EXIT_USAGE   2

void sbx_cli_error (const char *format,
                    ...) G_GNUC_PRINTF (1, 2);

int sbx_cmd_doctor  (int    argc,
                     char **argv);
int sbx_cmd_profile (int    argc,
                     char **argv);
/* sbx profile learn (tools/sbx-cmd-profile-learn.c); argv[0] is "learn". */
int sbx_cmd_profile_learn (int    argc,
                           char **argv);
int sbx_cmd_run     (int    argc,
                     char **argv);
int sbx_cmd_stage   (int    argc,
                     char **argv);
/* After a staged run (tools/sbx-cmd-stage.c): its summary and ID on
 * stderr (with @json, also {"stage": {"id", "dir", "changes"}} on a line
 * of its own); with @review, asks on the terminal what to do with it. */
void sbx_run_stage_finish (const char *id,
                           gboolean    review,
                           gboolean    json);
/* sbx doctor: the stages waiting to be applied or discarded (text on
 * stdout; JSON: an array of {"id", "changes", "created", "command",
 * "stale"}); a stage older than a day is stale. */
void sbx_doctor_print_stages (void);
struct _JsonArray *sbx_doctor_stages_json (void);

G_END_DECLS
