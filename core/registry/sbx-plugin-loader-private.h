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
#include <sys/stat.h>
#include <sys/types.h>
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

/* File safety, for plugin directories (the registry) and plugin files
 * (here). */
/* The loading policy for one file or directory, given its fstat: right type,
 * owned by root or @euid (or, with @foreign_uid not (uid_t) -1, by
 * @foreign_uid: see sbx_registry_foreign_owner), not writable by group or
 * others.  The message names the path and the mode; an owner refusal ends
 * with @owner_hint (sbx_registry_foreign_owner's why_not: the owner is root
 * seen from a user namespace) or, when NULL, "Hint: chown root PATH". */
gboolean    sbx_registry_check_file_safety (const struct stat  *st,
                                            const char         *path,
                                            gboolean            want_directory,
                                            uid_t               euid,
                                            uid_t               foreign_uid,
                                            const char         *owner_hint,
                                            GError            **error);

/* The owner a plugin file or directory open as @fd may have besides root
 * and the caller, or (uid_t) -1 for none.  Inside a user namespace that does
 * not map the host's root (a Flatpak app, a program run by sbx itself), every
 * file root owns, libsbx and GLib included, shows the overflow uid; such an
 * owner is accepted only when all of these hold:
 *  - @dir is the compiled-in plugin directory (never one of SBX_PLUGIN_PATH),
 *    the one installed beside libsbx, whose own files show the same owner;
 *  - this process is not in the initial user namespace (its uid_map is not
 *    the identity over the whole range) and the overflow uid is unmapped in
 *    it, so no identity of this namespace owns the file: its owner lies
 *    outside, where no process of this namespace can act as it;
 *  - @fd lies on a read-only mount, so nothing in this namespace can change
 *    it either.
 * The directory and every plugin file are checked on their own descriptor.
 * @why_not (may be NULL) is set, when root's files do show a foreign owner
 * here, to the condition @dir or @fd misses. */
uid_t       sbx_registry_foreign_owner     (int                 fd,
                                            const char         *dir,
                                            char              **why_not);
/* The pure part: @uid_map is /proc/self/uid_map's text, @overflow the
 * kernel's overflowuid.  TRUE when the process is in a user namespace other
 * than the initial one and @overflow is mapped by none of its lines. */
gboolean    sbx_registry_overflow_unmapped (const char         *uid_map,
                                            uid_t               overflow);

G_END_DECLS
