/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The filesystem identity binding of a grant (sbx-grant-binding.c): the
 * record, its lifetime, capture, revalidation and the handle a consumed
 * grant opens.  Fails with SBX_GRANT_ERROR (sbx-grant-error-private.h).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct
{
  char *canonical_path;   /* the canonical target */
  char *existing_path;    /* its deepest existing ancestor (itself when it exists) */
  char *identity;         /* "dev:ino:S_IFMT" of existing_path, from lstat */
} SbxGrantBinding;

void     sbx_grant_binding_free   (SbxGrantBinding *binding);
SbxGrantBinding *sbx_grant_binding_copy (const SbxGrantBinding *binding);
gboolean sbx_grant_binding_equal  (const SbxGrantBinding *a,
                                   const SbxGrantBinding *b);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxGrantBinding, sbx_grant_binding_free)

/* Filesystem identity binding (§5.7).  Capture: walk up from @canonical to
 * the deepest existing ancestor with lstat (a non-ENOENT error aborts:
 * MALFORMED), check that no component of it is a symlink (TARGET_CHANGED),
 * record its identity.  Revalidate: same ancestor identity, still free of
 * symlinks, every missing suffix still missing; else TARGET_CHANGED. */
SbxGrantBinding *sbx_grant_binding_capture    (const char            *canonical,
                                               GError               **error);
gboolean         sbx_grant_binding_revalidate (const SbxGrantBinding *binding,
                                               GError               **error);
/* An identity-pinned O_PATH handle on @binding's target:
 * openat2(O_PATH|O_NOFOLLOW|O_CLOEXEC, RESOLVE_NO_SYMLINKS|NO_MAGICLINKS)
 * (TARGET_CHANGED when it fails or the identity differs), then the shape:
 * an exact grant needs a regular file with one link, a tree grant a
 * directory (UNSUPPORTED otherwise: never widened).  Returns the fd or -1. */
int              sbx_grant_acquire_handle     (const SbxGrantBinding *binding,
                                               gboolean               exact,
                                               GError               **error);

G_END_DECLS
