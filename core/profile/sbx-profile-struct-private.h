/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The representation of SbxProfile, shared by the files that implement it
 * and by nothing else (SbxProfileConfig's is in
 * sbx-profile-config-private.h):
 *   sbx-profile-config.c    the mutable builder (below the others)
 *   sbx-profile.c           the type, its reference counting, access words,
 *                           queries
 *   sbx-profile-validate.c  construction: validation, canonical roots,
 *                           derived fields
 *   sbx-profile-restrict.c  narrowing one profile by another
 * (sbx-profile-json.c reads and writes profiles through the getters.)
 * They depend on each other in that order only: queries need no
 * construction, construction needs no restriction.
 */
#pragma once

#include "sbx-profile-private.h"

G_BEGIN_DECLS

struct _SbxProfile
{
  gatomicrefcount ref_count;
  char           *workspace_root;
  SbxAccess       workspace_read;
  SbxAccess       workspace_write;
  SbxAccess       host_read;
  SbxAccess       host_write;
  SbxAccess       network;
  SbxAccess       command;
  SbxHome         home;
  SbxIsolation    isolation;
  gboolean        ack_unconfined;
  gboolean        unix_sockets;
  SbxDeniedPaths  denied_paths;
  char          **host_sockets; /* NULL-terminated, sorted, canonical absolute paths */
  char          **gated_host_sockets; /* likewise: host sockets a unix.connect.v1 grant opens */
  SbxProfileRoot *roots; /* sorted by path, byte order */
  guint           n_roots;
  guint64         max_processes;
  guint64         max_memory;
  guint64         max_open_files;
  SbxGuarantees   required;
  char           *fingerprint;
  GPtrArray      *links; /* (nullable) SbxPathLink: every symlink a root was reached through */
};

/* Text safe to put in a GError message (which must be UTF-8); never NULL. */
char *sbx_profile_display (const char *text);
/* The access word of @value, "?" outside the enumeration. */
const char *sbx_profile_access_word (int value);
/* Sets SBX_PROFILE_ERROR_INVALID; always returns FALSE. */
gboolean sbx_profile_set_invalid (GError    **error,
                                  const char *format,
                                  ...) G_GNUC_PRINTF (2, 3);

/* Validation steps 5-8 (sbx-profile-validate.c) on a profile whose paths
 * are canonical and whose roots are sorted; @sources (nullable) holds each
 * root's input index for messages. */
gboolean sbx_profile_finish (SbxProfile     *self,
                             SbxProfileNames names,
                             const guint    *sources,
                             GError        **error);
/* Frees a profile that was never published (no refcount involved). */
void sbx_profile_free_owned (SbxProfile *self);
/* A profile under construction: freed directly, not through the refcount. */
typedef SbxProfile SbxProfileOwned;
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxProfileOwned, sbx_profile_free_owned)

/* The access at @path on the @write axis when the additional roots are
 * @roots (sbx-profile.c). */
SbxAccess sbx_profile_access_at_path_with_roots (const SbxProfile     *self,
                                                 const SbxProfileRoot *roots,
                                                 guint                 n_roots,
                                                 gboolean              write,
                                                 const char           *path);

G_END_DECLS
