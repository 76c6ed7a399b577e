/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx run: the run's denials on stderr (tools/sbx-cmd-run-denials.c), in
 * words an agent can act on.
 */
#pragma once

#include <sbx/sbx.h>

G_BEGIN_DECLS

/* One "sbx: denied ..." line per distinct denial of @result (each once,
 * with its count), and a line saying when the list overflowed.  With
 * @json, also one JSON object {"denials": [...], "denials_dropped": N} on
 * a line of its own (only when there are any). */
void        sbx_run_print_denials          (SbxRunResult     *result,
                                            gboolean          json);
/* The denial line of a start the command gate refused (@error from the
 * run: SBX_GRANT_ERROR_REQUIRED under a Gated command, DENIED under a
 * Deny one); FALSE (nothing printed) for any other error.  With @json,
 * also the JSON object. */
gboolean    sbx_run_print_command_denial   (const GError     *error,
                                            SbxProfile       *profile,
                                            const char       *command,
                                            gboolean          json);

G_END_DECLS
