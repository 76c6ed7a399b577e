/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The grant error domain's one way to fail (sbx-grant-error.c). */
#pragma once

#include "sbx-grant.h"

G_BEGIN_DECLS

/* Sets @error to @code (MALFORMED or TARGET_CHANGED) with that code's fixed
 * message prefix ("Grant token malformed: ", "Granted filesystem target
 * changed: ") before the formatted detail; returns FALSE. */
gboolean sbx_grant_fail (GError        **error,
                         SbxGrantError   code,
                         const char     *format,
                         ...) G_GNUC_PRINTF (3, 4);

G_END_DECLS
