/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The representation of SbxProfileConfig, the mutable builder
 * (sbx-profile-config.c), for the files that read a config to build a
 * profile (sbx-profile-validate.c).  Needs nothing of the profile itself.
 */
#pragma once

#include "sbx-profile.h"

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
  GArray  *roots; /* ConfigRoot */
  guint64  max_processes;
  guint64  max_memory;
  guint64  max_open_files;
};

G_END_DECLS
