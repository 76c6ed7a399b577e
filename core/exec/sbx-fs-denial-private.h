/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Filesystem denials (sbx-fs-denial.c): the grant that would open a refused
 * read, write, exec or listing of a host path, decided from the profile
 * and from what the path is on the host.  Never installed.
 */
#pragma once

#include "sbx-denial-private.h"
#include "sbx-profile.h"

G_BEGIN_DECLS

/* The SbxDenial of one filesystem refusal under @profile: @operation is
 * READ, WRITE, EXEC or LIST; @target the host path the backend named
 * (absolute; cleaned here), and @exact_text FALSE when it was altered to
 * be printable (then no grant is named: it would name another path);
 * @mechanism as the backend said it ("view-supervisor", "landlock-audit";
 * anything else becomes "backend"); @backend_reason (nullable) its words,
 * used only when the profile allows the access.  NULL for a relative
 * @target or another operation. */
SbxDenial *sbx_fs_denial_new (SbxDenialOperation  operation,
                              const char         *target,
                              gboolean            exact_text,
                              const char         *mechanism,
                              const char         *backend_reason,
                              SbxProfile         *profile);

G_END_DECLS
