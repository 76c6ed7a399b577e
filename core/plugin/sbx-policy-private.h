/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The policy compiler: profile + executor directories -> effective policy
 * -> the plain-data SbxPolicyV1 view a backend
 * compiles.  Also the reference model of filesystem precedence
 * (sbx_fs_resolve), which every backend must preserve or narrow and which
 * backend tests use as their oracle.
 *
 */
#pragma once

#include <glib.h>
#include "sbx-plugin-abi.h"
#include "sbx-profile.h"

G_BEGIN_DECLS

/* One additional root of a policy input. */
typedef struct
{
  const char *path;     /* canonical absolute directory */
  SbxAccess   read;
  SbxAccess   write;
} SbxPolicyRoot;

/* What the compiler reads from a profile.  Kept separate from SbxProfile so
 * the compiler can be tested with inputs no profile would produce. */
typedef struct
{
  const char          *workspace;        /* canonical absolute directory */
  SbxAccess            workspace_read;
  SbxAccess            workspace_write;
  SbxAccess            host_read;
  SbxAccess            host_write;
  SbxAccess            network;
  SbxIsolation         isolation;
  SbxGuarantees        required;
  const SbxPolicyRoot *roots;
  guint                n_roots;
  guint64              max_processes;    /* 0: no limit requested */
  guint64              max_memory_bytes;
  guint64              max_open_files;
  gboolean             unix_sockets;     /* SBX_POLICY_UNIX_SOCKETS */
  SbxDeniedPaths       denied_paths;     /* NOT_FOUND: SBX_POLICY_DENIED_NOT_FOUND */
  const char * const  *host_sockets;     /* (nullable) SbxPolicyV1.host_sockets */
} SbxPolicyInput;

/* The executor's own directories (all absolute).  @home is what the child
 * sees as HOME; it gets an R|W|X rule only when @home_owned (an isolated HOME
 * the set created).  A real HOME stays governed by the profile.  @set_dir
 * (nullable) is the set's private directory holding every executor's HOME,
 * TMPDIR and state: a Sandboxed policy denies it whole, so that no executor
 * reads or writes another's, even when the profile allows host read or
 * write (the executor's own HOME and TMPDIR are more specific and win).
 * @other_set_dirs (nullable, NULL-terminated) are the other executor sets'
 * directories found in the same scratch root (any process, any user): each
 * is denied whole too, optional (a set may close and remove it before a
 * backend looks).  Sets created later are not listed; backends that carve
 * (Landlock's sibling enumeration) leave them without access, and the
 * executor re-lists after the backend compile (sbx-executor.c).
 *
 * @scratch_root (nullable) is the canonical directory holding @set_dir and
 * @scratch_entries (nullable, NULL-terminated) the absolute paths of every
 * other entry directly in it (no set directory), listed when the executor
 * was created.  When the policy lets the sandbox read or write the scratch
 * root (a workspace of /tmp), the scratch root is denied (tree) and
 * each listed entry is granted again with the access that covers it: the
 * sandbox sees the scratch root as it was, and an executor set created
 * later in it is not there for it (a mount view shows the snapshot; Landlock
 * grants only the listed inodes).  See scratch_snapshot(). */
typedef struct
{
  const char        *home;
  gboolean           home_owned;
  const char        *tmpdir;
  const char        *state_dir;
  const char        *set_dir;
  const char *const *other_set_dirs;
  const char        *scratch_root;
  const char *const *scratch_entries;
  /* Egress: non-zero when the set has a route and the network is not Deny:
   * the network becomes SBX_NET_MODE_PROXY on this loopback port (never for
   * an Unconfined profile). */
  guint16            proxy_port;
} SbxPolicyDirs;

/* A compiled effective policy.  Immutable; owns every string and array the
 * SbxPolicyV1 view points into. */
typedef struct _SbxPolicy SbxPolicy;

SbxPolicy         *sbx_policy_new             (const SbxPolicyInput *input,
                                               const SbxPolicyDirs  *dirs);
SbxPolicy         *sbx_policy_new_for_profile (SbxProfile           *profile,
                                               const SbxPolicyDirs  *dirs);
void               sbx_policy_free            (SbxPolicy            *self);
/* The ABI view; valid as long as @self lives. */
const SbxPolicyV1 *sbx_policy_get_abi         (SbxPolicy            *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxPolicy, sbx_policy_free)

/* The fixed runtime closure of a Sandboxed policy: the paths ordinary
 * programs need to start with host read denied.  One row per path. */
typedef struct
{
  const char *path;
  guint32     allow;    /* SBX_FS_* */
  guint32     flags;    /* SBX_FS_RULE_EXACT / _OPTIONAL */
  guint32     origin;   /* SBX_FS_ORIGIN_RUNTIME or _DEVICE */
} SbxRuntimePath;

const SbxRuntimePath *sbx_policy_runtime_closure (gsize *n_paths);
/* The resolved target of an exact runtime row that is a symbolic link on
 * this host, or NULL when @path is not a symlink (or dangles).  The compiled
 * policy grants such a target the row's access (see sbx-policy.c). */
char *sbx_policy_runtime_link_target (const char *path);

/* ResolveFS: the access (SBX_FS_* bits) @rules grant at @path, by the
 * precedence model (<sbx/sbx-fs-resolve.h> implements it):
 *  - @path is cleaned lexically (no symlink resolution: pass canonical paths);
 *  - read, exec and write are decided independently; per axis the matching
 *    rule with the highest precedence decides (2 x length of its cleaned
 *    literal prefix, +1 when EXACT); at a tie allows union, denies union and
 *    any deny wins; an axis no rule controls is denied;
 *  - a literal tree rule matches itself and descendants at a '/' boundary,
 *    "/" matches everything, an EXACT rule only the equal path;
 *  - GLOB rules match by sbx_fs_glob_match(); a glob that denies an axis
 *    overrides everything for that axis (applied last);
 *  - a malformed deny glob matches every path (fail closed), a malformed allow
 *    glob matches none;
 *  - a rule with allow == 0 and deny == 0 denies every axis. */
guint32  sbx_fs_resolve      (const SbxFsRuleV1 *rules,
                              gsize              n_rules,
                              const char        *path);

/* Glob grammar of filesystem rules: "**" matches any text including '/',
 * "*" any text within one path segment, "?" one character other than '/',
 * "[...]" a character class ('!' or '^' negates, "a-z" ranges; a ']' right
 * after the opening bracket is literal); an unclosed '[' is a literal '['.
 * Characters are Unicode code points (an invalid UTF-8 byte stands for
 * U+FFFD); matching is case-sensitive.  Returns whether @path matches;
 * *out_valid is FALSE (and the result FALSE) when the pattern is malformed
 * (a reversed range such as "[z-a]"). */
gboolean sbx_fs_glob_match   (const char        *pattern,
                              const char        *path,
                              gboolean          *out_valid);

G_END_DECLS
