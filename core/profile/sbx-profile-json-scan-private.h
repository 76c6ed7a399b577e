/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The strict JSON scanner of profile loading (pass 1, sbx-profile-json-scan.c)
 * and the member paths its messages and pass 3's start with.  Private to
 * sbx-profile-json*.c.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Text for a message inside double quotes: valid UTF-8, with '"', '\\' and
 * control characters escaped. */
char *sbx_json_quote_text (const char *text);
/* "parent.name" (or ["name"] with escapes for a name that is not plain);
 * @parent "(root)" is the top. */
char *sbx_json_member_path (const char *parent,
                            const char *name);
/* "parent[index]". */
char *sbx_json_element_path (const char *parent,
                             guint       index);
/* Pass 1 over the whole text: refuses duplicate members, escaped NULs,
 * invalid UTF-8, out-of-range integers, nesting deeper than 32 levels and
 * every syntax error, with the member path in the message
 * (SBX_PROFILE_ERROR_PARSE for syntax, _INVALID for the rest). */
gboolean sbx_json_scan_text (const char *text,
                             gsize       len,
                             GError    **error);

G_END_DECLS
