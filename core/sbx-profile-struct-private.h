/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The representation of SbxProfileConfig and SbxProfile, shared by the files
 * that implement them and by nothing else:
 *   sbx-profile.c           the types, access words, queries
 *   sbx-profile-config.c    the mutable builder
 *   sbx-profile-validate.c  construction: validation, canonical roots,
 *                           derived fields, reference counting
 *   sbx-profile-restrict.c  narrowing one profile by another
 * (sbx-profile-json.c reads and writes profiles through the getters.)
 * They depend on each other in that order only: queries need no
 * construction, construction needs no restriction.
 */
#pragma once

#include "sbx-profile-private.h"

G_BEGIN_DECLS

typedef struct
{
  char *path;
  int   read;
  int   write;
} ConfigRoot;

/* At most this many host sockets in a profile. */
#define SBX_PROFILE_MAX_HOST_SOCKETS 64

struct _SbxProfileConfig
{
  char    *workspace_root;
  int      workspace_read;
  int      workspace_write;
  int      host_read;
  int      host_write;
  int      network;
  int      command;
  int      home;
  int      isolation;
  gboolean ack_unconfined;
  gboolean unix_sockets;
  GPtrArray *host_sockets; /* char *: host unix sockets the sandbox may connect to, as added */
  GArray  *host_socket_access; /* SbxAccess, parallel to host_sockets: ALLOW or GATED */
  GArray  *roots; /* ConfigRoot */
  guint64  max_processes;
  guint64  max_memory;
  guint64  max_open_files;
};

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
