/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The grant error domain and the one way to fail with it, below the token
 * code (sbx-grant.c) and the identity binding (sbx-grant-binding.c), which
 * both fail with it.
 */
#include "sbx-grant-error-private.h"

/**
 * sbx_grant_error_quark:
 *
 * Returns the error domain of [error@Sbx.GrantError].
 *
 * Returns: the quark
 *
 * Since: 0.1
 */
G_DEFINE_QUARK (sbx-grant-error-quark, sbx_grant_error)

gboolean
sbx_grant_fail (GError        **error,
                SbxGrantError   code,
                const char     *format,
                ...)
{
  va_list args;
  g_autofree char *detail = NULL;

  va_start (args, format);
  detail = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, SBX_GRANT_ERROR, code, "%s: %s",
               code == SBX_GRANT_ERROR_TARGET_CHANGED ? "Granted filesystem target changed"
               : "Grant token malformed", detail);
  return FALSE;
}
