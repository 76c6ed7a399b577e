/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* One additional root as the fingerprint sees it. */
typedef struct
{
  const char *path;
  guint       read;
  guint       write;
} SbxFingerprintRoot;

/*
 * SbxFingerprintSettings:
 *
 * Every normalized field of a profile that the fingerprint covers, as plain
 * numbers (the frozen enum values), so tests can reproduce upstream's test
 * vectors without the paths existing.  @roots must already be sorted by
 * byte order and deduplicated, as a validated profile's are.
 */
typedef struct
{
  guint                     version;
  const char               *workspace_root;
  guint                     workspace_read;
  guint                     workspace_write;
  guint                     host_read;
  guint                     host_write;
  guint                     network;
  guint                     command;
  guint                     home;
  guint                     isolation;
  const SbxFingerprintRoot *roots;
  gsize                     n_roots;
  gboolean                  ack_unconfined;
  gboolean                  unix_sockets;   /* serialized only when TRUE: older profiles keep their fingerprints */
  guint                     denied_paths;   /* SbxDeniedPaths; serialized only when not 0, likewise */
  const char * const       *host_sockets;   /* (nullable) sorted; serialized only when not empty, likewise */
  const char * const       *gated_host_sockets; /* (nullable) sorted; likewise */
  guint64                   required_guarantees;
  guint64                   max_processes;
  guint64                   max_memory;
  guint64                   max_open_files;
} SbxFingerprintSettings;

void   sbx_fingerprint_append_go_string (GString                      *out,
                                         const char                   *text,
                                         gssize                        length);
char  *sbx_fingerprint_serialize        (const SbxFingerprintSettings *settings);
char  *sbx_fingerprint_compute          (const SbxFingerprintSettings *settings);

G_END_DECLS
