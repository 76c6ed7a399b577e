/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Failing and wording messages for every module of a run
 * (sbx-executor-error.c): the error domains' quarks live there too, below
 * everything that raises them.
 */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>
#include "sbx-guarantees.h"

G_BEGIN_DECLS

/* SBX_EXECUTOR_ERROR with a formatted message; FALSE. */
gboolean sbx_executor_fail       (GError    **error,
                                  int         code,
                                  const char *format,
                                  ...) G_GNUC_PRINTF (3, 4);
/* "a, b, c" of the guarantee names.  (transfer full) */
char    *sbx_executor_guarantee_names (SbxGuarantees bits);
/* Adds @text as a JSON string, made valid UTF-8 first. */
void     sbx_executor_add_string (JsonBuilder *builder,
                                  const char  *text);

G_END_DECLS
