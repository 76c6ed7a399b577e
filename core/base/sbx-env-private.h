/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Environment scrubbing, identical for every backend.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The baseline allowlist of variable-name globs: PATH HOME TERM LANG LC_*
 * USER LOGNAME SHELL TZ.  NULL-terminated. */
const char *const *sbx_env_baseline_allowlist (void);

/* Name glob of the allowlist (Go's path.Match): "*" any text without '/',
 * "?" one character other than '/', "[...]" a class ('^' or '!' negates,
 * ranges, "\\" escapes), "\\c" the character c.  A malformed pattern (an
 * unclosed class, a trailing backslash, a reversed range) matches nothing:
 * *out_valid is then FALSE. */
gboolean sbx_env_name_match (const char *pattern,
                             const char *name,
                             gboolean   *out_valid);

/* Builds a child environment from @parent ("NAME=value" strings):
 *  - keeps, in @parent's order, each entry whose NAME matches one glob of
 *    @allow (an entry without '=' is dropped);
 *  - then applies @forced ("NAME=value"): an existing NAME is replaced in
 *    place (no duplicates), new names are appended in sorted order;
 *  - an empty result is an empty, non-NULL vector, never "inherit".
 * Returns: (transfer full) (array zero-terminated=1): the environment. */
char   **sbx_env_scrub      (const char *const *parent,
                             const char *const *allow,
                             const char *const *forced);

G_END_DECLS
