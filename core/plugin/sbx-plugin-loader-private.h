/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The plugin loader (sbx-plugin-loader.c): one plugin file from a directory
 * entry to an initialised SbxPlugin, or a refused one with the reason.  Used
 * by the registry only; never installed.
 *
 * Every step either succeeds or refuses the plugin (state REFUSED, error
 * set) and leaves nothing mapped that did not initialise.
 */
#pragma once

#include <glib.h>
#include "sbx-plugin-private.h"

G_BEGIN_DECLS

/* Plugin files are "sbx-plugin-<name>.so"; <name> is lowercase words of
 * [a-z0-9] joined by single dashes, at most this many bytes. */
#define PLUGIN_FILE_PREFIX          "sbx-plugin-"
#define PLUGIN_FILE_SUFFIX          ".so"
#define SBX_PLUGIN_MAX_NAME_LENGTH  64

/* One extension of a validated descriptor, before the registry publishes it. */
typedef struct
{
  SbxExtensionKind  kind;
  const char       *name;      /* points into the plugin (resident once initialised) */
  int               priority;
  const void       *vtable;
} SbxExtensionView;

gboolean   sbx_plugin_name_is_well_formed (const char *name);
/* "sbx-plugin-mock-ok.so" -> "mock-ok"; NULL for any other file name. */
char      *sbx_plugin_name_from_file      (const char *file_name);

/* A refused record for the file @path (plugin name @name, may be NULL). */
SbxPlugin *sbx_plugin_new                 (const char *path,
                                           const char *name);
/* Marks @plugin refused for @error (taken). */
void       sbx_plugin_refuse              (SbxPlugin  *plugin,
                                           GError     *error);

/* Step 1: opens @file_name in @dirfd (the directory @dir) without following
 * symlinks and checks owner and mode; with @foreign_dir (the directory was
 * accepted with a foreign owner) the file may have one too, judged on its
 * own descriptor.  Returns the fd (O_CLOEXEC) or -1 with @plugin refused. */
int        sbx_plugin_open_checked        (SbxPlugin  *plugin,
                                           int         dirfd,
                                           const char *dir,
                                           gboolean    foreign_dir,
                                           const char *file_name);
/* Step 2: maps the file open as @fd (the inode checked in step 1), calls the
 * entry symbol and validates the descriptor; @implemented is the host
 * feature mask the descriptor's requirements must fit in.  Fills @views
 * (of SbxExtensionView).  FALSE: refused and unmapped. */
gboolean   sbx_plugin_map                 (SbxPlugin  *plugin,
                                           int         fd,
                                           const char *file_name,
                                           uint64_t    implemented,
                                           GArray     *views);
/* Undoes step 2 for a plugin that must not initialise (a name clash found
 * after mapping) and refuses it with @error (taken). */
void       sbx_plugin_unmap               (SbxPlugin  *plugin,
                                           GError     *error);
/* Step 3: init with @host under the crash guard.  FALSE: refused (the code
 * stays mapped: init ran). */
gboolean   sbx_plugin_initialise          (SbxPlugin       *plugin,
                                           const SbxHostV1 *host);

G_END_DECLS
