/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What sbx-changes-diff.c offers: a unified diff of two texts, the change
 * set's "show diff".  Knows nothing of stages.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* A unified diff of @old against @new (labels @old_label, @new_label); a
 * "Binary files differ" line for binary content. */
void     sbx_changes_diff_text     (GString           *out,
                                    const char        *old_label,
                                    GBytes            *old,
                                    const char        *new_label,
                                    GBytes            *new_);

G_END_DECLS
