/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The parent side of the Landlock plan, shared by its three units:
 * sbx-landlock-model.c (access sets, entries, precedence),
 * sbx-landlock-builder.c (rules from entries) and sbx-landlock.c (the plan:
 * validation, network, report).  Never seen by child code.
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sbx/sbx-plugin-abi.h>

#include "sbx-landlock.h"
#include "sbx-landlock-private.h"

G_BEGIN_DECLS

typedef struct
{
  char     *path;
  uint32_t  allow;
  uint32_t  deny;       /* normalised: allow == deny == 0 means deny-all */
  uint32_t  origin;
  int       fd;         /* borrowed from the host (grants), or -1 */
  gboolean  exact;
  gboolean  glob;
  gboolean  optional;
  gboolean  canonical;  /* SBX_FS_RULE_CANONICAL: the core checked it; never re-resolve */
  gboolean  resolved;   /* a symlink path whose target got its own entry */
} LlEntry;

#define EX_TREE     1  /* denied node and its subtree: skip */
#define EX_EXACT    2  /* denied node only: do not grant it, descend if a directory */
#define EX_BARRIER  3  /* write barrier at a tree read/exec deny: skip a directory
                        * (no write inside it), a file keeps its own write */

typedef struct
{
  const char *path;
  int         kind;
} LlExclude;

typedef struct
{
  SbxLandlockPlan *plan;          /* borrowed: the plan being built */
  GPtrArray       *entries;       /* LlEntry (literal) */
  GPtrArray       *globs;         /* LlEntry (glob denies) */
  GArray          *rules;         /* LlRule */
  GHashTable      *rule_index;    /* "maj:min:ino" -> index + 1 */
  GHashTable      *pins;          /* path -> fd + 1 (top-level and carved dirs) */
  GArray          *fds;           /* int, owned */
  GPtrArray       *dropped;       /* char*: "path (why)" */
  GPtrArray       *gaps;          /* char*: symlinks whose target is outside the policy */
  uint32_t         carved_axes;
  gboolean         carved_write_deny;  /* a writable tree holds a nested write deny */
  gboolean         literal_deny;       /* a literal deny narrowed an allow */
} Builder;

#define LL_N_AXES 3
extern const uint32_t ll_axes[LL_N_AXES];   /* read, exec, write */

/* sbx-landlock-model.c */
const char *ll_axis_name          (uint32_t    axis);
/* The LANDLOCK_ACCESS_FS_* a ruleset of @abi handles. */
uint64_t    ll_handled_fs_for_abi (int         abi);
/* Landlock rights for @axis on an inode of file type @type (S_IFMT bits). */
uint64_t    ll_axis_rights        (uint32_t    axis,
                                   mode_t      type);
void        ll_entry_free         (gpointer    p);
/* TRUE when @path is strictly beneath @parent (at a '/' boundary). */
gboolean    ll_path_under         (const char *parent,
                                   const char *path);
/* The policy's precedence at @path over @entries (literal) and @globs
 * (deny only): the SBX_FS_* axes granted. */
uint32_t    ll_resolve_path       (GPtrArray  *entries,
                                   GPtrArray  *globs,
                                   const char *path);
/* Absolute and clean: no empty, "." or ".." component, no trailing '/'. */
gboolean    ll_path_is_clean      (const char *path);

/* sbx-landlock-builder.c */
/* Emits the rules of @e's @axis (one rule, or the carve around nested
 * denies) into @b. */
gboolean    ll_emit_allow_axis           (Builder        *b,
                                          const LlEntry  *e,
                                          uint32_t        axis,
                                          GError        **error);
/* Policy paths that run through a symlink get an entry at their target for
 * the axes the policy also grants there; the rest is recorded as a gap. */
void        ll_resolve_symlinked_entries (Builder        *b);
/* The builder of @plan (borrowed), its tables empty; cleared by
 * ll_builder_clear(), which leaves the plan to its owner. */
void        ll_builder_init              (Builder         *b,
                                          SbxLandlockPlan *plan);
void        ll_builder_clear             (Builder        *b);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Builder, ll_builder_clear)

/* open(@path, O_PATH|O_NOFOLLOW|O_CLOEXEC) without following a symbolic
 * link on the way: openat2(RESOLVE_NO_SYMLINKS), or the same walk one
 * component at a time where openat2 returns ENOSYS.  The fd or -errno. */
int ll_open_path_nofollow (const char *path);

G_END_DECLS
