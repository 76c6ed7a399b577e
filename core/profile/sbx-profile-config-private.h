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
  int      denied_paths;   /* SbxDeniedPaths, as given: validated by sbx_profile_new() */
  GPtrArray *host_sockets; /* char *: host unix sockets the sandbox may connect to, as added */
  GArray  *host_socket_access; /* SbxAccess, parallel to host_sockets: ALLOW or GATED */
  GArray  *roots; /* ConfigRoot */
  guint64  max_processes;
  guint64  max_memory;
  guint64  max_open_files;
};

/* Adds a host socket with @access (ALLOW or GATED), in the order the
 * validation's messages index them (the JSON array's). */
void        sbx_profile_config_add_host_socket_access (SbxProfileConfig *self,
                                                       const char       *path,
                                                       SbxAccess         access);

G_END_DECLS
