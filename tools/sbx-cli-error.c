/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one shape of every message of the sbx program (sbx-cmds.h): on
 * stderr, after "sbx: ".  In its own file so the tests that build a
 * subcommand's file without tools/sbx.c (tests/test-cli-run-denials.c) use
 * this one.
 */
#include "sbx-cmds.h"

#include <stdarg.h>
#include <stdio.h>

void
sbx_cli_error (const char *format,
               ...)
{
  g_autofree char *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  fprintf (stderr, "sbx: %s\n", message);
}
