/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <sbx/sbx.h>

G_BEGIN_DECLS

/* Helpers shared by the executor, executor-set, env-scrub and report tests.
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
} EtuTree;

void         etu_tree_init         (EtuTree    *tree);
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
/* TRUE when @pid no longer runs (gone, or a zombie). */
gboolean     etu_pid_is_dead       (int         pid);
/* Polls @path until it exists (or @timeout_ms passes). */
gboolean     etu_wait_for_file     (const char *path,
                                    guint       timeout_ms);

/* A loop-driven wait for an async result. */
GAsyncResult *etu_wait_async       (GAsyncResult **slot);
void          etu_store_result     (GObject       *source,
                                    GAsyncResult  *result,
                                    gpointer       data);

/* Runs one set/executor round trip (sync and async) so GLib's lazily created
 * fds and threads exist before the first leak check. */
void         etu_warm_up           (void);

G_END_DECLS
