/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The executor's and the executor set's error domains and the helpers every
 * module of a run fails and words its messages with: below the set, the
 * executor, admission, grants, egress and processes, which all use them.
 */
#include "sbx-executor-error-private.h"

#include "sbx-executor.h"
#include "sbx-executor-set.h"

/**
 * sbx_executor_error_quark:
 *
 * Returns the error domain of [error@Sbx.ExecutorError].
 *
 * Returns: the quark
 *
 * Since: 0.1
 */
G_DEFINE_QUARK (sbx-executor-error-quark, sbx_executor_error)

/**
 * sbx_executor_set_error_quark:
 *
 * Returns the error domain of [error@Sbx.ExecutorSetError].
 *
 * Returns: the quark
 *
 * Since: 0.1
 */
G_DEFINE_QUARK (sbx-executor-set-error-quark, sbx_executor_set_error)

gboolean
sbx_executor_fail (GError    **error,
                   int         code,
                   const char *format,
                   ...)
{
  va_list args;

  va_start (args, format);
  g_propagate_error (error, g_error_new_valist (SBX_EXECUTOR_ERROR, code, format, args));
  va_end (args);
  return FALSE;
}

char *
sbx_executor_guarantee_names (SbxGuarantees bits)
{
  g_auto(GStrv) names = sbx_guarantees_to_strv (bits);

  return g_strjoinv (", ", names);
}

void
sbx_executor_add_string (JsonBuilder *builder,
                         const char  *text)
{
  g_autofree char *valid = g_utf8_make_valid (text, -1);

  json_builder_add_string_value (builder, valid);
}
