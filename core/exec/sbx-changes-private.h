/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SbxChanges internals shared by sbx-changes.c (reading a stage) and
 * sbx-changes-apply.c.  Never installed.
 */
#pragma once

#include <sys/stat.h>
#include "sbx-changes.h"
#include "sbx-changes-diff-private.h"

G_BEGIN_DECLS

typedef struct
{
  char          *path;      /* absolute host path */
  char          *rel;       /* relative to its root ("" never: the root itself is not a change) */
  guint          root;
  SbxChangeKind  kind;
  gboolean       conflict;  /* the host's object changed after the run began */
  mode_t         upper_mode;/* the staged object's st_mode (0 for a deletion) */
} SbxChange;

struct _SbxChanges
{
  GObject    parent_instance;
  char      *id;
  char      *dir;
  char      *command;
  GDateTime *created;
  guint      n_roots;
  char     **roots;         /* host paths */
  char     **uppers;
  GHashTable **at_start;    /* per root: path relative to it -> 'd' or '-'
                             * (N/host.list), NULL when the stage has none */
  struct timespec started;  /* ctime of the stage's "started" file */
  GPtrArray *changes;       /* of SbxChange, pre-order (a parent before its children) */
};

/* openat2(@dirfd, @rel) beneath @dirfd, never through a symlink or "..";
 * "" duplicates @dirfd.  -1 with errno set. */
int      sbx_changes_open_beneath (int         dirfd,
                                   const char *rel,
                                   int         flags);
/* Whether @st changed after the stage's start (ctime). */
gboolean sbx_changes_changed_since (SbxChanges        *self,
                                    const struct stat *st);
/* Re-reads the change list from the stage and the host. */
gboolean sbx_changes_scan          (SbxChanges        *self,
                                    GError           **error);

G_END_DECLS
