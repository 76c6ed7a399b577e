/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Helpers for the profile tests: a canonical temporary directory tree that
 * is removed again (without following symlinks). */

char *ptu_make_tmpdir (const char *template_name);
char *ptu_mkdir       (const char *base,
                       const char *relative);
char *ptu_write_file  (const char *base,
                       const char *relative,
                       const char *contents);
char *ptu_symlink     (const char *base,
                       const char *relative,
                       const char *target);
void  ptu_rm_rf       (const char *path);

G_END_DECLS
