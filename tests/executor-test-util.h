/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdarg.h>
#include <sbx/sbx.h>
#include "sbx-plugin-abi.h"

G_BEGIN_DECLS

/* The test suite's one helper library (prefix etu_): temporary trees and the
 * one recursive delete, the one SbxPolicyV1 builder, registries over the
 * built plugins, profiles, and process hygiene checks.  Domain harnesses
 * build on it (linux/linux-test-util.h: probes in forked children;
 * linux/backend-test-util.h: the Linux backend through its vtable).
 * Plugin directories come from the environment meson gives the tests:
 *   SBX_TEST_UNCONFINED_PLUGIN_DIR, SBX_TEST_JSONL_PLUGIN_DIR,
 *   SBX_TEST_LINUX_PLUGIN_DIR (the Linux tests only),
 *   SBX_TEST_MOCK_PLUGIN_DIR (the registry's mocks, one subdir each). */

/* A registry over the named plugin directories: "unconfined", "jsonl",
 * "linux", or a
 * mock name ("ok", "compile-short", ...).  NULL-terminated. */
SbxRegistry *etu_registry          (const char *first_dir,
                                    ...) G_GNUC_NULL_TERMINATED;
const char  *etu_plugin_dir        (const char *name);

/* A canonical temporary directory with "scratch" and "ws" inside. */
typedef struct
{
  char *tmp;
  char *scratch;
  char *ws;
  char *scratch_tmp;   /* the directory holding scratch when it is not under tmp, or NULL */
} EtuTree;

void         etu_tree_init         (EtuTree    *tree);
/* As etu_tree_init(), with scratch on a tmpfs (the temp dir when it is
 * one, else /dev/shm, else $XDG_RUNTIME_DIR): FALSE with *reason, and
 * nothing made, when none of them is a tmpfs this user can write. */
gboolean     etu_tree_init_tmpfs   (EtuTree    *tree,
                                    char      **reason);
void         etu_tree_clear        (EtuTree    *tree);

/* Profiles over @workspace. */
SbxProfile  *etu_profile_unconfined (const char *workspace,
                                     SbxAccess   command);
SbxProfile  *etu_profile_sandboxed  (const char *workspace);

SbxExecutorSetOptions *etu_options (const char  *scratch,
                                    int          max_executors,
                                    SbxRegistry *registry);

/* Process hygiene: open fds of this process, live children of any of its
 * threads. */
guint        etu_count_fds         (void);
char        *etu_list_fds          (void);
guint        etu_count_children    (void);
/* Asserts that no child of this process is left, running or zombie, of any
 * kind (__WALL: clone children too). */
void         etu_assert_no_children (void);
/* TRUE when @pid no longer runs (gone, or a zombie). */
gboolean     etu_pid_is_dead       (int         pid);
/* Polls @path until it exists (or @timeout_ms passes). */
gboolean     etu_wait_for_file     (const char *path,
                                    guint       timeout_ms);
/* Polls @path until it holds a whole line (ends in a newline: a shell
 * creates the file before it writes), and returns its contents; NULL when
 * @timeout_ms passes first. */
char        *etu_wait_for_line     (const char *path,
                                    guint       timeout_ms);

/* A loop-driven wait for an async result. */
GAsyncResult *etu_wait_async       (GAsyncResult **slot);
void          etu_store_result     (GObject       *source,
                                    GAsyncResult  *result,
                                    gpointer       data);

/* Runs one set/executor round trip (sync and async) so GLib's lazily created
 * fds and threads exist before the first leak check. */
void         etu_warm_up           (void);

/* A shell command line as the argument vector every run takes. */
#define SBX_SH_ARGV(cmd) ((const char *const[]) { "/bin/sh", "-c", (cmd), NULL })

/* sbx_executor_run() with an output limit / with grants and an execution
 * ID added to (a copy of) @options. */
SbxRunResult *etu_run_limited      (SbxExecutor        *executor,
                                    const char         *cwd,
                                    const char *const  *argv,
                                    guint64             max_output,
                                    GCancellable       *cancellable,
                                    GError            **error);
void          etu_run_limited_async (SbxExecutor        *executor,
                                     const char         *cwd,
                                     const char *const  *argv,
                                     guint64             max_output,
                                     GCancellable       *cancellable,
                                     GAsyncReadyCallback callback,
                                     gpointer            user_data);
SbxRunResult *etu_run_with_grants  (SbxExecutor         *executor,
                                    const char          *cwd,
                                    const char *const   *argv,
                                    const char          *execution_id,
                                    const char *const   *grants,
                                    const SbxRunOptions *options,
                                    GCancellable        *cancellable,
                                    GError             **error);
void          etu_run_with_grants_async (SbxExecutor         *executor,
                                         const char          *cwd,
                                         const char *const   *argv,
                                         const char          *execution_id,
                                         const char *const   *grants,
                                         const SbxRunOptions *options,
                                         GCancellable        *cancellable,
                                         GAsyncReadyCallback  callback,
                                         gpointer             user_data);

/* Temporary trees.  A new directory under the (isolated) temp dir, with
 * symlinks resolved so expected canonical paths can be built from it. */
char *etu_make_tmpdir (const char *template_name);
/* base/relative, created (with parents); the joined path. */
char *etu_mkdir       (const char *base,
                       const char *relative);
char *etu_write_file  (const char *base,
                       const char *relative,
                       const char *contents);
char *etu_symlink     (const char *base,
                       const char *relative,
                       const char *target);
/* Runs the sbx program of this build (SBX_TEST_SBX) in @tree's workspace:
 * @command (nullable: none) and the NULL-terminated arguments from @first,
 * with the plugins of SBX_TEST_LINUX_PLUGIN_DIR and
 * SBX_TEST_EGRESS_HTTP_PLUGIN_DIR, SBX_BACKEND=@backend (NULL: unset) and
 * TMPDIR the tree's scratch.  Returns its exit status (-1 for a signal);
 * *@out and *@err get its stdout and stderr. */
int   etu_run_sbx_va  (EtuTree    *tree,
                       const char *backend,
                       char      **out,
                       char      **err,
                       const char *command,
                       const char *first,
                       va_list     ap);
int   etu_run_sbx     (EtuTree    *tree,
                       const char *backend,
                       char      **out,
                       char      **err,
                       const char *first,
                       ...) G_GNUC_NULL_TERMINATED;
/* How many times @needle occurs in @haystack (overlapping ones too): a
 * line printed once, an event sent once. */
guint etu_count       (const char *haystack,
                       const char *needle);
/* Runs `/bin/sh -c @command` without the sandbox (a positive control);
 * returns its exit status (-1 for a signal), its stdout in *@out. */
int   etu_run_outside (const char *command,
                       char      **out);
/* Removes @path and everything below it (never following a symlink),
 * making directories writable first; asserts every removal. */
void  etu_rm_rf       (const char *path);

/* An SbxPolicyV1 under construction.  Paths starting with '~' are taken
 * relative to @root.  Network open, no limits, no flags until the test sets
 * them (the fields are the test's to change). */
typedef struct
{
  char           *root;
  GArray         *rules;      /* SbxFsRuleV1 */
  GPtrArray      *strings;
  SbxNetPolicyV1  net;
  uint16_t        ports[8];
  SbxLimitsV1     limits;
  SbxPolicyV1     policy;
} EtuPolicy;

EtuPolicy         *etu_policy_new         (const char *root);
void               etu_policy_free        (EtuPolicy  *tp);
void               etu_policy_add         (EtuPolicy  *tp,
                                           const char *path,
                                           uint32_t    allow,
                                           uint32_t    deny,
                                           uint32_t    flags,
                                           uint32_t    origin);
/* Adds the runtime closure an exec'd /bin/sh needs (usr-merged trees, the
 * loader cache), optional and read/exec only. */
void               etu_policy_add_runtime (EtuPolicy  *tp);
/* The policy as built so far; valid until the next add or the free. */
const SbxPolicyV1 *etu_policy_get         (EtuPolicy  *tp);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (EtuPolicy, etu_policy_free)

G_END_DECLS
