/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Staged runs end to end (docs/staging.md), through the library with the
 * linux plugin as built:
 *  - `rm -rf` in a staged run leaves the workspace bit for bit as it was
 *    (a tree hash over names, types, modes, contents and link targets);
 *    applying the stage then deletes, as the same run unstaged does;
 *  - real tools staged and applied leave the tree an unstaged run leaves
 *    (git commit / branch switch / reset --hard, mv of a directory,
 *    sed -i, a C build, pip and npm installs from local files; each
 *    skipped, saying so, when its tool is not installed);
 *  - discard leaves the tree unchanged and the stage gone;
 *  - a host edit after the run began is a conflict: kept and reported;
 *    so is a host deletion, or replacement by a directory, of a path the
 *    run changed (in place or by renaming a new file over it);
 *  - a hostile stage (a staged symlink out, a host symlink under a staged
 *    directory, a whiteout moved under a host symlink, FIFOs and device
 *    nodes) cannot make apply write or delete outside the workspace;
 *  - rung 2 refuses a staged run and leaves nothing behind, where the same
 *    command unstaged does change the workspace (positive control).
 *  - the overlay's limits, each as docs/staging.md states it: a directory
 *    rename fails with EXDEV, hard links are applied as copies, extended
 *    attributes are not applied, host inotify watches see nothing.
 * Every denial has its positive control next to it.
 *
 * One file over 1,000 lines on purpose: every case runs on the same
 * fixtures (tree hashes, staged and unstaged runs, the test's own state
 * home), which no other suite uses; split, they would be a helper file
 * serving this file alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "executor-test-util.h"
#include "sbx-stage-private.h"

static char *state_home;

/* ------------------------------------------------------------------------- */
/* Tree hashes                                                                */
/* ------------------------------------------------------------------------- */

static int
compare_names (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* Names, types, permission bits, contents and link targets under @dir
 * (relative @rel), sorted; .git/index is left out (it caches inode
 * numbers and times, which differ between any two trees). */
static void
hash_tree (GChecksum  *sum,
           const char *dir,
           const char *rel)
{
  g_autofree char *path = g_build_filename (dir, rel, NULL);
  g_autoptr(GDir) d = g_dir_open (path, 0, NULL);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  g_assert_nonnull (d);
  while ((name = g_dir_read_name (d)) != NULL)
    g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, compare_names);
  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *child_rel = rel[0] != '\0' ? g_build_filename (rel, names->pdata[i], NULL)
                                   : g_strdup (names->pdata[i]);
      g_autofree char *child = g_build_filename (dir, child_rel, NULL);
      g_autofree char *line = NULL;
      struct stat st;

      if (strcmp (child_rel, ".git/index") == 0)
        continue;
      g_assert_cmpint (lstat (child, &st), ==, 0);
      line = g_strdup_printf ("%s %o\n", child_rel, st.st_mode);
      g_checksum_update (sum, (const guchar *) line, -1);
      if (S_ISREG (st.st_mode))
        {
          g_autofree char *data = NULL;
          gsize len = 0;

          g_assert_true (g_file_get_contents (child, &data, &len, NULL));
          g_checksum_update (sum, (const guchar *) data, (gssize) len);
        }
      else if (S_ISLNK (st.st_mode))
        {
          g_autofree char *target = g_file_read_link (child, NULL);

          g_checksum_update (sum, (const guchar *) target, -1);
        }
      else if (S_ISDIR (st.st_mode))
        hash_tree (sum, dir, child_rel);
    }
}

static char *
tree_hash (const char *dir)
{
  g_autoptr(GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);

  hash_tree (sum, dir, "");
  return g_strdup (g_checksum_get_string (sum));
}

/* The tree hash of @dir is (@same) or is not @expected. */
static void
assert_hash (const char *dir,
             gboolean    same,
             const char *expected)
{
  g_autofree char *hash = tree_hash (dir);

  if (same)
    g_assert_cmpstr (hash, ==, expected);
  else
    g_assert_cmpstr (hash, !=, expected);
}

static void
assert_same_trees (const char *a,
                   const char *b)
{
  g_autofree char *hash = tree_hash (b);

  assert_hash (a, TRUE, hash);
}

/* ------------------------------------------------------------------------- */
/* Runs                                                                       */
/* ------------------------------------------------------------------------- */

static SbxExecutorSet *
make_set (EtuTree     *tree,
          const char  *ws,
          const char  *backend,
          GError     **error)
{
  g_autoptr(SbxRegistry) registry = etu_registry ("linux", NULL);
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxExecutorSetOptions) options = NULL;
  g_autoptr(GError) local_error = NULL;

  profile = sbx_profile_new_default (ws, &local_error);
  g_assert_no_error (local_error);
  options = etu_options (tree->scratch, 8, registry);
  sbx_executor_set_options_set_backend (options, backend);
  return sbx_executor_set_new (profile, options, error);
}

/* Runs `sh -c @script` in @ws (staged or not) on @backend; the result, or
 * NULL with @error. */
static SbxRunResult *
run_in (EtuTree     *tree,
        const char  *ws,
        const char  *backend,
        gboolean     staged,
        const char  *script,
        GError     **error)
{
  g_autoptr(SbxExecutorSet) set = make_set (tree, ws, backend, error);
  g_autoptr(SbxRunOptions) options = sbx_run_options_new ();
  const char *argv[] = { "/bin/sh", "-c", script, NULL };
  SbxExecutor *executor;
  SbxRunResult *result;

  if (set == NULL)
    return NULL;
  executor = sbx_executor_set_for_key (set, "stage", error);
  g_assert_nonnull (executor);
  sbx_run_options_set_staged (options, staged);
  result = sbx_executor_run (executor, ws, argv, options, NULL, error);
  sbx_executor_set_close (set, NULL, NULL);
  return result;
}

static gboolean
have_userns (EtuTree *tree)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxExecutorSet) set = make_set (tree, tree->ws, "linux-userns", &error);

  if (set == NULL)
    {
      g_test_skip_printf ("linux-userns is unavailable here: %s", error->message);
      return FALSE;
    }
  sbx_executor_set_close (set, NULL, NULL);
  return TRUE;
}

static void fill_tree (const char *ws);

/* A fresh tree with the small project in its workspace; FALSE (and a
 * skip, nothing left) when the host has no linux-userns. */
static gboolean
tree_with_userns (EtuTree *tree)
{
  etu_tree_init (tree);
  if (!have_userns (tree))
    {
      etu_tree_clear (tree);
      return FALSE;
    }
  fill_tree (tree->ws);
  return TRUE;
}

/* A staged run of @script in @ws that must exit 0; its stage's ID. */
static char *
staged (EtuTree    *tree,
        const char *ws,
        const char *script)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxRunResult) result = run_in (tree, ws, "linux-userns", TRUE, script, &error);
  g_autofree char *out = NULL;

  g_assert_no_error (error);
  out = g_strndup (g_bytes_get_data (sbx_run_result_get_output (result), NULL),
                   g_bytes_get_size (sbx_run_result_get_output (result)));
  if (sbx_run_result_get_exit_status (result) != 0)
    g_printerr ("%s\n", out);
  g_assert_cmpint (sbx_run_result_get_exit_status (result), ==, 0);
  g_assert_nonnull (sbx_run_result_get_stage_id (result));
  g_assert_true (g_str_has_prefix (sbx_run_result_get_stage_dir (result), state_home));
  return g_strdup (sbx_run_result_get_stage_id (result));
}

static void
unstaged (EtuTree    *tree,
          const char *ws,
          const char *script)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxRunResult) result = run_in (tree, ws, "linux-userns", FALSE, script, &error);

  g_assert_no_error (error);
  g_assert_cmpint (sbx_run_result_get_exit_status (result), ==, 0);
  g_assert_null (sbx_run_result_get_stage_id (result));
}

static void
write_file (const char *dir,
            const char *rel,
            const char *contents,
            int         mode)
{
  g_autofree char *path = g_build_filename (dir, rel, NULL);
  g_autofree char *parent = g_path_get_dirname (path);

  g_assert_cmpint (g_mkdir_with_parents (parent, 0755), ==, 0);
  g_assert_true (g_file_set_contents (path, contents, -1, NULL));
  g_assert_cmpint (chmod (path, mode), ==, 0);
}

/* A small project: text files, an executable, a nested directory, a link. */
static void
fill_tree (const char *ws)
{
  g_autofree char *link = g_build_filename (ws, "link", NULL);

  write_file (ws, "README", "hello\nworld\n", 0644);
  write_file (ws, "run.sh", "#!/bin/sh\necho run\n", 0755);
  write_file (ws, "src/main.c", "int main (void) { return 0; }\n", 0644);
  write_file (ws, "src/lib/x.txt", "x\ny\nz\n", 0600);
  g_assert_cmpint (symlink ("README", link), ==, 0);
}

static char *
stage_dir_of (const char *id)
{
  g_autofree char *root = sbx_stage_root_dir ();

  return g_build_filename (root, id, NULL);
}

static void
apply_all (const char *id)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxChanges) changes = sbx_changes_open (id, &error);
  g_autofree char *dir = stage_dir_of (id);

  g_assert_no_error (error);
  g_assert_true (sbx_changes_apply (changes, NULL, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  /* An applied stage leaves nothing behind. */
  g_assert_false (g_file_test (dir, G_FILE_TEST_EXISTS));
}

/* ------------------------------------------------------------------------- */

static void
test_rm_rf (void)
{
  EtuTree tree = { 0 };
  g_autofree char *copy = NULL;
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  g_autofree char *id = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxChanges) changes = NULL;

  if (!tree_with_userns (&tree))
    return;
  copy = etu_mkdir (tree.tmp, "copy");
  fill_tree (copy);
  before = tree_hash (tree.ws);

  id = staged (&tree, tree.ws, "rm -rf ./* ./.[!.]* && test -z \"$(ls -A)\"");
  after = tree_hash (tree.ws);
  g_assert_cmpstr (after, ==, before);

  changes = sbx_changes_open (id, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (sbx_changes_get_n_changes (changes), ==, 4);   /* README run.sh src link */
  for (guint i = 0; i < 4; i++)
    g_assert_cmpint (sbx_changes_get_kind (changes, i), ==, SBX_CHANGE_DELETED);

  /* Positive control: the same command unstaged empties the copy, and
   * applying the stage does the same to the workspace. */
  unstaged (&tree, copy, "rm -rf ./* ./.[!.]*");
  apply_all (id);
  assert_same_trees (tree.ws, copy);
  assert_hash (tree.ws, FALSE, before);
  etu_tree_clear (&tree);
}

typedef struct
{
  const char *name;
  const char *needs;   /* a program the case needs on the host, or NULL */
  const char *prepare; /* run unstaged on both trees first, or NULL */
  const char *script;
} ToolCase;

#define GIT_ENV "export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@e GIT_COMMITTER_NAME=t " \
  "GIT_COMMITTER_EMAIL=t@e GIT_AUTHOR_DATE='2020-01-01T00:00:00Z' "                      \
  "GIT_COMMITTER_DATE='2020-01-01T00:00:00Z' GIT_CONFIG_NOSYSTEM=1 HOME=$PWD/.home; "

#define PIP_WHEEL "python3 -c \"import zipfile\n"                                          \
  "z = zipfile.ZipFile('mini-1.0-py3-none-any.whl', 'w')\n"                                 \
  "for n, d in (('mini/__init__.py', 'X = 1\\\\n'),\n"                                      \
  "             ('mini-1.0.dist-info/METADATA', 'Metadata-Version: 2.1\\\\nName: mini\\\\nVersion: 1.0\\\\n'),\n" \
  "             ('mini-1.0.dist-info/WHEEL', 'Wheel-Version: 1.0\\\\nRoot-Is-Purelib: true\\\\nTag: py3-none-any\\\\n'),\n" \
  "             ('mini-1.0.dist-info/RECORD', '')):\n"                                       \
  "    z.writestr(zipfile.ZipInfo(n, (2020, 1, 1, 0, 0, 0)), d)\n"                            \
  "z.close()\""

#define NPM_ENV "export npm_config_cache=\"$TMPDIR/npm-cache\" npm_config_offline=true "          \
  "npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false; "

static const ToolCase tool_cases[] = {
  { "git", "git", GIT_ENV "git init -q -b main . && git add README src && git commit -q -m one",
    GIT_ENV "git checkout -q -b topic && echo more >> README && git commit -q -am two && "
            "git checkout -q main && echo junk > src/main.c && git reset -q --hard && "
            "git merge -q --ff-only topic && git branch -q -D topic" },
  { "mv-dir", NULL, NULL, "mv src moved && mkdir -p src && mv moved src/inner" },
  { "sed-i", "sed", NULL, "sed -i 's/world/there/' README && sed -i '1d' src/lib/x.txt" },
  { "c-build", "cc", NULL, "cc -O0 -o src/main src/main.c && ./src/main && chmod 0700 run.sh" },
  /* Installs from local files only: a wheel written here (fixed zip
   * dates, so both trees get the same bytes) found with --no-index, and a
   * tarball `npm pack` made, installed --offline with the cache in the
   * sandbox's TMPDIR (not the workspace); the project's package.json
   * names it (npm's lock file takes the directory's name otherwise). */
  { "pip", "pip3", PIP_WHEEL,
    "pip3 install -q --no-index --find-links=. --no-cache-dir --no-compile "
    "--disable-pip-version-check --target vendor mini && test -f vendor/mini/__init__.py" },
  { "npm", "npm", NPM_ENV "mkdir -p pkg && printf '{\"name\":\"mini\",\"version\":\"1.0.0\"}\\n' > pkg/package.json "
                          "&& echo 'module.exports = 1;' > pkg/index.js && (cd pkg && npm pack -q >/dev/null) "
                          "&& mv pkg/mini-1.0.0.tgz . && rm -r pkg "
                          "&& printf '{\"name\":\"proj\",\"version\":\"1.0.0\"}\\n' > package.json",
    NPM_ENV "npm install -q ./mini-1.0.0.tgz && test -f node_modules/mini/index.js" },
};

static void
test_tool (gconstpointer data)
{
  const ToolCase *tc = data;
  EtuTree tree = { 0 };
  g_autofree char *copy = NULL;
  g_autofree char *before = NULL;
  g_autofree char *id = NULL;
  g_autofree char *program = tc->needs != NULL ? g_find_program_in_path (tc->needs) : NULL;

  if (tc->needs != NULL && program == NULL)
    {
      g_test_skip_printf ("%s is not installed", tc->needs);
      return;
    }
  if (!tree_with_userns (&tree))
    return;
  copy = etu_mkdir (tree.tmp, "copy");
  fill_tree (copy);
  if (tc->prepare != NULL)
    {
      unstaged (&tree, tree.ws, tc->prepare);
      unstaged (&tree, copy, tc->prepare);
    }
  assert_same_trees (tree.ws, copy);
  before = tree_hash (tree.ws);

  id = staged (&tree, tree.ws, tc->script);
  assert_hash (tree.ws, TRUE, before);
  unstaged (&tree, copy, tc->script);
  /* Positive control: the command does change the tree. */
  assert_hash (copy, FALSE, before);
  apply_all (id);
  assert_same_trees (tree.ws, copy);
  etu_tree_clear (&tree);
}

static void
test_discard (void)
{
  EtuTree tree = { 0 };
  g_autofree char *before = NULL;
  g_autofree char *id = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *diff = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxChanges) changes = NULL;

  if (!tree_with_userns (&tree))
    return;
  before = tree_hash (tree.ws);
  id = staged (&tree, tree.ws, "echo changed > README && chmod 0600 run.sh && ln -sf run.sh link "
                               "&& rm -r src/lib && mkfifo fifo");
  dir = stage_dir_of (id);
  g_assert_true (g_file_test (dir, G_FILE_TEST_IS_DIR));
  changes = sbx_changes_open (id, &error);
  g_assert_no_error (error);
  diff = sbx_changes_get_diff (changes, NULL, &error);
  g_assert_no_error (error);
  if (strstr (diff, "-hello\n-world\n+changed\n") == NULL)
    g_printerr ("%s", diff);
  g_assert_nonnull (strstr (diff, "-hello\n-world\n+changed\n"));
  {
    g_autofree char *summary = sbx_changes_get_summary (changes);

    g_assert_nonnull (strstr (summary, "M  "));
    g_assert_nonnull (strstr (summary, "P  "));
    g_assert_nonnull (strstr (summary, "L  "));
    g_assert_nonnull (strstr (summary, "!  "));   /* the FIFO: refused */
    g_assert_nonnull (strstr (summary, "D  "));
  }
  g_assert_true (sbx_changes_discard (changes, &error));
  g_assert_no_error (error);
  assert_hash (tree.ws, TRUE, before);
  g_assert_false (g_file_test (dir, G_FILE_TEST_EXISTS));
  etu_tree_clear (&tree);
}

static void
test_conflict (void)
{
  EtuTree tree = { 0 };
  g_autofree char *id = NULL;
  g_autofree char *readme = NULL;
  g_autofree char *added = NULL;
  g_autofree char *data = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxChanges) changes = NULL;
  gboolean found = FALSE;

  if (!tree_with_userns (&tree))
    return;
  id = staged (&tree, tree.ws, "echo staged > README && echo new > added");
  /* The host edits the same file after the run began. */
  readme = g_build_filename (tree.ws, "README", NULL);
  g_assert_true (g_file_set_contents (readme, "host\n", -1, NULL));

  changes = sbx_changes_open (id, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < sbx_changes_get_n_changes (changes); i++)
    if (strcmp (sbx_changes_get_path (changes, i), readme) == 0)
      found = sbx_changes_get_conflict (changes, i);
  g_assert_true (found);
  g_assert_false (sbx_changes_apply (changes, NULL, NULL, NULL, NULL, &error));
  g_assert_error (error, SBX_CHANGES_ERROR, SBX_CHANGES_ERROR_CONFLICT);
  g_assert_nonnull (strstr (error->message, readme));
  g_assert_true (g_file_get_contents (readme, &data, NULL, NULL));
  g_assert_cmpstr (data, ==, "host\n");
  /* The rest was applied. */
  added = g_build_filename (tree.ws, "added", NULL);
  g_assert_true (g_file_test (added, G_FILE_TEST_IS_REGULAR));
  g_clear_error (&error);
  g_assert_true (sbx_changes_discard (changes, &error));
  etu_tree_clear (&tree);
}

/* Whether @path is among @changes and a conflict; fails when not listed. */
static gboolean
conflict_of (SbxChanges *changes,
             const char *path)
{
  for (guint i = 0; i < sbx_changes_get_n_changes (changes); i++)
    if (strcmp (sbx_changes_get_path (changes, i), path) == 0)
      return sbx_changes_get_conflict (changes, i);
  g_printerr ("%s is not among the changes\n", path);
  g_assert_not_reached ();
  return FALSE;
}

static void
test_conflict_host_deleted (void)
{
  EtuTree tree = { 0 };
  g_autofree char *id = NULL;
  g_autofree char *readme = NULL;
  g_autofree char *run_sh = NULL;
  g_autofree char *lib = NULL;
  g_autofree char *x = NULL;
  g_autofree char *main_c = NULL;
  g_autofree char *added = NULL;
  g_autofree char *data = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxChanges) changes = NULL;

  if (!tree_with_userns (&tree))
    return;
  /* The run changes files in place, by renaming a new file over one
   * (sed -i), and adds one. */
  id = staged (&tree, tree.ws, "echo staged > README && echo staged >> run.sh && "
                               "sed -i 's/y/Y/' src/lib/x.txt && echo staged > src/main.c && echo new > added");
  readme = g_build_filename (tree.ws, "README", NULL);
  run_sh = g_build_filename (tree.ws, "run.sh", NULL);
  lib = g_build_filename (tree.ws, "src/lib", NULL);
  x = g_build_filename (tree.ws, "src/lib/x.txt", NULL);
  main_c = g_build_filename (tree.ws, "src/main.c", NULL);
  added = g_build_filename (tree.ws, "added", NULL);
  /* Then the host deletes README and src/lib, and replaces run.sh by a
   * directory. */
  g_assert_cmpint (unlink (readme), ==, 0);
  g_assert_cmpint (unlink (x), ==, 0);
  g_assert_cmpint (rmdir (lib), ==, 0);
  g_assert_cmpint (unlink (run_sh), ==, 0);
  g_assert_cmpint (mkdir (run_sh, 0755), ==, 0);

  changes = sbx_changes_open (id, &error);
  g_assert_no_error (error);
  g_assert_true (conflict_of (changes, readme));
  g_assert_true (conflict_of (changes, run_sh));
  g_assert_true (conflict_of (changes, lib));
  g_assert_true (conflict_of (changes, x));
  /* Positive controls: what the host left alone is no conflict. */
  g_assert_false (conflict_of (changes, main_c));
  g_assert_false (conflict_of (changes, added));
  g_assert_false (sbx_changes_apply (changes, NULL, NULL, NULL, NULL, &error));
  g_assert_error (error, SBX_CHANGES_ERROR, SBX_CHANGES_ERROR_CONFLICT);
  g_assert_nonnull (strstr (error->message, readme));
  g_assert_nonnull (strstr (error->message, run_sh));
  g_assert_nonnull (strstr (error->message, x));
  /* Kept as the host left them: not recreated, still a directory. */
  g_assert_false (g_file_test (readme, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (lib, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (run_sh, G_FILE_TEST_IS_DIR));
  /* The rest was applied. */
  g_assert_true (g_file_get_contents (main_c, &data, NULL, NULL));
  g_assert_cmpstr (data, ==, "staged\n");
  g_assert_true (g_file_test (added, G_FILE_TEST_IS_REGULAR));
  /* The kept ones stay in the stage until discarded. */
  g_clear_object (&changes);
  g_clear_error (&error);
  changes = sbx_changes_open (id, &error);
  g_assert_no_error (error);
  g_assert_true (conflict_of (changes, readme));
  g_assert_true (sbx_changes_discard (changes, &error));
  g_assert_no_error (error);
  etu_tree_clear (&tree);
}

/* Replaces the host directory @rel of @ws by a symlink to @outside (the
 * race a hostile host-side process could win between listing and apply). */
static void
swap_for_link (const char *ws,
               const char *rel,
               const char *outside)
{
  g_autofree char *path = g_build_filename (ws, rel, NULL);
  g_autofree char *aside = g_strconcat (path, ".real", NULL);

  g_assert_cmpint (rename (path, aside), ==, 0);
  g_assert_cmpint (symlink (outside, path), ==, 0);
}

static void
test_hostile (void)
{
  EtuTree tree = { 0 };
  g_autofree char *id = NULL;
  g_autofree char *outside = NULL;
  g_autofree char *victim = NULL;
  g_autofree char *pwned = NULL;
  g_autofree char *upper = NULL;
  g_autofree char *escape = NULL;
  g_autofree char *target = NULL;
  g_autofree char *script = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxChanges) changes = NULL;
  struct stat st;

  if (!tree_with_userns (&tree))
    return;
  write_file (tree.ws, "sub/victim", "staged away\n", 0644);
  write_file (tree.ws, "sub2/keep", "k\n", 0644);
  outside = etu_mkdir (tree.tmp, "outside");
  write_file (outside, "victim", "keep me\n", 0644);
  victim = g_build_filename (outside, "victim", NULL);
  pwned = g_build_filename (outside, "pwned", NULL);
  /* The run: a symlink pointing out, a deletion and a new file in two
   * directories the host will swap for symlinks out, a FIFO. */
  script = g_strdup_printf ("ln -s %s escape && rm sub/victim && echo x > sub2/pwned && mkfifo fifo",
                            outside);
  id = staged (&tree, tree.ws, script);
  upper = g_build_filename (state_home, "sbx", "stages", id, "0", "upper", NULL);
  /* A hand-crafted stage: the whiteout sub/victim is one (char 0:0); a
   * device node where this user may make one. */
  {
    g_autofree char *wh = g_build_filename (upper, "sub", "victim", NULL);

    g_assert_cmpint (lstat (wh, &st), ==, 0);
    g_assert_true (S_ISCHR (st.st_mode) && st.st_rdev == makedev (0, 0));
    if (geteuid () == 0)
      {
        g_autofree char *dev = g_build_filename (upper, "null", NULL);

        g_assert_cmpint (mknod (dev, S_IFCHR | 0666, makedev (1, 3)), ==, 0);
      }
  }
  changes = sbx_changes_open (id, &error);
  g_assert_no_error (error);
  /* Between the listing and the apply, the host's sub and sub2 become
   * symlinks to a directory outside the workspace. */
  swap_for_link (tree.ws, "sub", outside);
  swap_for_link (tree.ws, "sub2", outside);

  g_assert_false (sbx_changes_apply (changes, NULL, NULL, NULL, NULL, &error));
  g_assert_error (error, SBX_CHANGES_ERROR, SBX_CHANGES_ERROR_FAILED);
  g_assert_nonnull (strstr (error->message, "symbolic link"));
  g_clear_error (&error);
  /* Nothing outside changed: the victim is there, nothing was written. */
  g_assert_true (g_file_test (victim, G_FILE_TEST_IS_REGULAR));
  g_assert_false (g_file_test (pwned, G_FILE_TEST_EXISTS));
  /* The staged symlink is a link in the workspace, not followed. */
  escape = g_build_filename (tree.ws, "escape", NULL);
  g_assert_cmpint (lstat (escape, &st), ==, 0);
  g_assert_true (S_ISLNK (st.st_mode));
  target = g_file_read_link (escape, NULL);
  g_assert_cmpstr (target, ==, outside);
  /* Neither the FIFO nor the device node was made. */
  {
    g_autofree char *fifo = g_build_filename (tree.ws, "fifo", NULL);
    g_autofree char *dev = g_build_filename (tree.ws, "null", NULL);

    g_assert_cmpint (lstat (fifo, &st), <, 0);
    g_assert_cmpint (lstat (dev, &st), <, 0);
  }
  /* Positive control: with the real directories back, the same stage
   * applies the deletion and the new file inside the workspace. */
  {
    g_autofree char *s1 = g_build_filename (tree.ws, "sub", NULL);
    g_autofree char *s2 = g_build_filename (tree.ws, "sub2", NULL);
    g_autofree char *r1 = g_strconcat (s1, ".real", NULL);
    g_autofree char *r2 = g_strconcat (s2, ".real", NULL);
    g_autofree char *gone = g_build_filename (tree.ws, "sub", "victim", NULL);
    g_autofree char *made = g_build_filename (tree.ws, "sub2", "pwned", NULL);
    g_autoptr(SbxChanges) again = NULL;

    g_assert_cmpint (unlink (s1), ==, 0);
    g_assert_cmpint (unlink (s2), ==, 0);
    g_assert_cmpint (rename (r1, s1), ==, 0);
    g_assert_cmpint (rename (r2, s2), ==, 0);
    again = sbx_changes_open (id, &error);
    g_assert_no_error (error);
    g_assert_false (sbx_changes_apply (again, NULL, NULL, NULL, NULL, &error));
    /* Only the refused FIFO (and device node) are left. */
    g_assert_error (error, SBX_CHANGES_ERROR, SBX_CHANGES_ERROR_CONFLICT);
    g_clear_error (&error);
    g_assert_false (g_file_test (gone, G_FILE_TEST_EXISTS));
    g_assert_true (g_file_test (made, G_FILE_TEST_IS_REGULAR));
    g_assert_true (sbx_changes_discard (again, &error));
  }
  etu_tree_clear (&tree);
}

static void
test_rung2_refused (void)
{
  EtuTree tree = { 0 };
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(SbxRunResult) control = NULL;
  g_autofree char *before = NULL;
  g_autofree char *marker = NULL;
  g_auto(GStrv) stages_before = NULL;
  g_auto(GStrv) stages_after = NULL;

  etu_tree_init (&tree);
  fill_tree (tree.ws);
  before = tree_hash (tree.ws);
  stages_before = sbx_changes_list_stages (&error);
  g_assert_no_error (error);
  result = run_in (&tree, tree.ws, "linux-landlock", TRUE, "rm -rf ./* && touch marker", &error);
  if (result == NULL && error->domain != SBX_EXECUTOR_ERROR)
    {
      g_test_skip_printf ("linux-landlock is unavailable here: %s", error->message);
      etu_tree_clear (&tree);
      return;
    }
  g_assert_null (result);
  g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_SPAWN_FAILED);
  g_assert_nonnull (strstr (error->message, "linux-landlock"));
  g_assert_nonnull (strstr (error->message, "cannot stage"));
  g_clear_error (&error);
  assert_hash (tree.ws, TRUE, before);
  stages_after = sbx_changes_list_stages (&error);
  g_assert_cmpuint (g_strv_length (stages_after), ==, g_strv_length (stages_before));

  /* Positive control: unstaged, rung 2 runs it and the workspace changes. */
  control = run_in (&tree, tree.ws, "linux-landlock", FALSE, "rm -rf ./* && touch marker", &error);
  g_assert_no_error (error);
  g_assert_cmpint (sbx_run_result_get_exit_status (control), ==, 0);
  marker = g_build_filename (tree.ws, "marker", NULL);
  g_assert_true (g_file_test (marker, G_FILE_TEST_EXISTS));
  etu_tree_clear (&tree);
}

/* The unconfined backend (an acknowledged Unconfined profile) has nothing
 * to stage with: refused, and the same run unstaged does write. */
static void
test_unconfined_refused (void)
{
  EtuTree tree = { 0 };
  g_autoptr(SbxRegistry) registry = etu_registry ("unconfined", NULL);
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxExecutorSetOptions) options = NULL;
  g_autoptr(SbxExecutorSet) set = NULL;
  g_autoptr(SbxRunOptions) run_options = sbx_run_options_new ();
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *marker = NULL;
  const char *argv[] = { "/bin/sh", "-c", "touch marker", NULL };
  SbxExecutor *executor;

  etu_tree_init (&tree);
  profile = etu_profile_unconfined (tree.ws, SBX_ACCESS_ALLOW);
  options = etu_options (tree.scratch, 1, registry);
  set = sbx_executor_set_new (profile, options, &error);
  g_assert_no_error (error);
  executor = sbx_executor_set_for_key (set, "k", &error);
  g_assert_no_error (error);
  marker = g_build_filename (tree.ws, "marker", NULL);
  sbx_run_options_set_staged (run_options, TRUE);
  result = sbx_executor_run (executor, tree.ws, argv, run_options, NULL, &error);
  g_assert_null (result);
  g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_SPAWN_FAILED);
  g_assert_nonnull (strstr (error->message, "“unconfined” cannot stage"));
  g_clear_error (&error);
  g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));
  /* A started process cannot be staged at all. */
  g_assert_null (sbx_executor_spawn (executor, tree.ws, argv, run_options, NULL, &error));
  g_assert_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));
  /* Positive control. */
  sbx_run_options_set_staged (run_options, FALSE);
  result = sbx_executor_run (executor, tree.ws, argv, run_options, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_file_test (marker, G_FILE_TEST_EXISTS));
  sbx_executor_set_close (set, NULL, NULL);
  etu_tree_clear (&tree);
}

/* `sbx` (SBX_TEST_SBX) in @cwd with the linux plugin and this test's
 * state directory; its exit status, stdout and stderr. */
static int
sbx_cli (const char  *cwd,
         char       **out,
         char       **err,
         const char  *first,
         ...)
{
  g_autoptr(GSubprocessLauncher) l = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE
                                                                | G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_autoptr(GPtrArray) args = g_ptr_array_new ();
  g_autoptr(GSubprocess) p = NULL;
  g_autoptr(GError) error = NULL;
  const char *arg;
  va_list ap;

  g_ptr_array_add (args, (gpointer) g_getenv ("SBX_TEST_SBX"));
  va_start (ap, first);
  for (arg = first; arg != NULL; arg = va_arg (ap, const char *))
    g_ptr_array_add (args, (gpointer) arg);
  va_end (ap);
  g_ptr_array_add (args, NULL);
  g_subprocess_launcher_set_cwd (l, cwd);
  g_subprocess_launcher_setenv (l, "SBX_PLUGIN_PATH", g_getenv ("SBX_TEST_LINUX_PLUGIN_DIR"), TRUE);
  g_subprocess_launcher_setenv (l, "XDG_STATE_HOME", state_home, TRUE);
  p = g_subprocess_launcher_spawnv (l, (const char *const *) args->pdata, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_communicate_utf8 (p, NULL, NULL, out, err, &error));
  g_assert_no_error (error);
  return g_subprocess_get_exit_status (p);
}

static void
test_cli (void)
{
  EtuTree tree = { 0 };
  g_autofree char *before = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *list = NULL;
  g_autofree char *id = NULL;
  g_autofree char *readme = NULL;
  g_autofree char *data = NULL;
  g_autofree char *y = NULL;

  if (g_getenv ("SBX_TEST_SBX") == NULL)
    {
      g_test_skip ("SBX_TEST_SBX is not set");
      return;
    }
  if (!tree_with_userns (&tree))
    return;
  before = tree_hash (tree.ws);
  g_assert_cmpint (sbx_cli (tree.ws, &out, &err, "run", "--stage", "--", "sh", "-c",
                            "echo changed > README", NULL), ==, 0);
  assert_hash (tree.ws, TRUE, before);
  g_assert_nonnull (strstr (err, "M  "));
  g_assert_nonnull (strstr (err, "1 changes: 0 added, 1 modified"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  /* One stage a line, its ID first; the summary named it. */
  g_assert_cmpint (sbx_cli (tree.ws, &list, &err, "stage", "list", NULL), ==, 0);
  id = g_strndup (list, strcspn (list, "\t"));
  g_assert_cmpuint (strlen (id), >, 0);
  g_assert_nonnull (strstr (list, "\t1 changes\t"));
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (sbx_cli (tree.ws, &out, &err, "doctor", NULL), !=, 2);
  g_assert_nonnull (strstr (out, id));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (sbx_cli (tree.ws, &out, &err, "stage", "diff", id, NULL), ==, 0);
  g_assert_nonnull (strstr (out, "-hello\n-world\n+changed\n"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (sbx_cli (tree.ws, &out, &err, "stage", "apply", id, NULL), ==, 0);
  readme = g_build_filename (tree.ws, "README", NULL);
  g_assert_true (g_file_get_contents (readme, &data, NULL, NULL));
  g_assert_cmpstr (data, ==, "changed\n");
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  /* Applied: gone from the list; an unknown ID fails naming it. */
  g_assert_cmpint (sbx_cli (tree.ws, &out, &err, "stage", "list", NULL), ==, 0);
  g_assert_null (strstr (out, id));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (sbx_cli (tree.ws, &out, &err, "stage", "discard", id, NULL), ==, 1);
  g_assert_nonnull (strstr (err, id));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  /* The JSON report names the stage; rung 2 refuses with exit status 125. */
  g_assert_cmpint (sbx_cli (tree.ws, &out, &err, "run", "--stage", "--report=json", "--", "touch", "x",
                            NULL), ==, 0);
  g_assert_nonnull (strstr (err, "{\"stage\":{\"id\":\""));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);
  g_setenv ("SBX_BACKEND", "linux-landlock", TRUE);
  g_assert_cmpint (sbx_cli (tree.ws, &out, &err, "run", "--stage", "--", "touch", "y", NULL), ==, 125);
  g_unsetenv ("SBX_BACKEND");
  g_assert_nonnull (strstr (err, "cannot stage"));
  y = g_build_filename (tree.ws, "y", NULL);
  g_assert_false (g_file_test (y, G_FILE_TEST_EXISTS));
  etu_tree_clear (&tree);
}

/* ------------------------------------------------------------------------- */
/* What an overlay cannot show (docs/staging.md, "limits"), each as stated   */
/* ------------------------------------------------------------------------- */

/* Renaming a directory that exists on the host fails with EXDEV inside a
 * staged run (no redirect_dir in a user namespace); unstaged it renames. */
#define RENAME_SRC "python3 -c \"import errno, os, sys\n"                              \
  "try:\n    os.rename('src', 'moved')\n"                                              \
  "except OSError as e:\n    sys.exit(0 if e.errno == errno.EXDEV else 1)\n"           \
  "sys.exit(2)\""

static void
test_limit_dir_rename (void)
{
  EtuTree tree = { 0 };
  g_autofree char *copy = NULL;
  g_autofree char *moved = NULL;
  g_autofree char *id = NULL;
  g_autofree char *python = g_find_program_in_path ("python3");

  if (python == NULL)
    {
      g_test_skip ("python3 is not installed");
      return;
    }
  if (!tree_with_userns (&tree))
    return;
  copy = etu_mkdir (tree.tmp, "copy");
  fill_tree (copy);
  /* Exit 0 only when the rename failed with EXDEV. */
  id = staged (&tree, tree.ws, RENAME_SRC);
  /* Positive control: unstaged the same rename succeeds. */
  unstaged (&tree, copy, "python3 -c \"import os; os.rename('src', 'moved')\"");
  moved = g_build_filename (copy, "moved", "main.c", NULL);
  g_assert_true (g_file_test (moved, G_FILE_TEST_IS_REGULAR));
  etu_tree_clear (&tree);
}

/* A file linked twice in the run is applied as two separate copies; the
 * same command unstaged leaves one inode with two links. */
static void
test_limit_hard_links (void)
{
  EtuTree tree = { 0 };
  g_autofree char *copy = NULL;
  g_autofree char *id = NULL;
  const char *script = "echo new > made && ln made made.hard && ln README README.hard";
  const char *names[] = { "made", "made.hard", "README", "README.hard" };

  if (!tree_with_userns (&tree))
    return;
  copy = etu_mkdir (tree.tmp, "copy");
  fill_tree (copy);
  id = staged (&tree, tree.ws, script);
  apply_all (id);
  unstaged (&tree, copy, script);
  assert_same_trees (tree.ws, copy);
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autofree char *applied = g_build_filename (tree.ws, names[i], NULL);
      g_autofree char *control = g_build_filename (copy, names[i], NULL);
      struct stat st;

      g_assert_cmpint (lstat (applied, &st), ==, 0);
      g_assert_cmpuint (st.st_nlink, ==, 1);
      g_assert_cmpint (lstat (control, &st), ==, 0);
      g_assert_cmpuint (st.st_nlink, ==, 2);
    }
  etu_tree_clear (&tree);
}

/* Extended attributes are not applied: a user.* attribute the run sets
 * stays in the stage; unstaged it lands on the host file. */
static void
test_limit_xattrs (void)
{
  EtuTree tree = { 0 };
  g_autofree char *copy = NULL;
  g_autofree char *id = NULL;
  g_autofree char *applied = NULL;
  g_autofree char *control = NULL;
  g_autofree char *python = g_find_program_in_path ("python3");
  const char *script = "echo changed >> README && "
                       "python3 -c \"import os; os.setxattr('README', 'user.sbx', b'v')\"";
  char value[8];

  if (python == NULL)
    {
      g_test_skip ("python3 is not installed");
      return;
    }
  if (!tree_with_userns (&tree))
    return;
  copy = etu_mkdir (tree.tmp, "copy");
  fill_tree (copy);
  control = g_build_filename (copy, "README", NULL);
  if (setxattr (control, "user.sbx-probe", "v", 1, 0) != 0)
    {
      g_test_skip_printf ("the filesystem of %s has no user xattrs: %s", copy, g_strerror (errno));
      etu_tree_clear (&tree);
      return;
    }
  id = staged (&tree, tree.ws, script);
  apply_all (id);
  unstaged (&tree, copy, script);
  assert_same_trees (tree.ws, copy);
  applied = g_build_filename (tree.ws, "README", NULL);
  /* Positive control: the command sets the attribute on a host file. */
  g_assert_cmpint (getxattr (control, "user.sbx", value, sizeof value), ==, 1);
  g_assert_cmpint (getxattr (applied, "user.sbx", value, sizeof value), ==, -1);
  g_assert_cmpint (errno, ==, ENODATA);
  etu_tree_clear (&tree);
}

/* The changes inotify reports on the host's workspace during a run of
 * @script (staged or not): how many modification events arrived. */
static guint
host_events_during (EtuTree    *tree,
                    const char *ws,
                    gboolean    stage,
                    const char *script)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  int fd = inotify_init1 (IN_NONBLOCK | IN_CLOEXEC);
  char buf[4096] __attribute__((aligned (__alignof__ (struct inotify_event))));
  guint n = 0;
  ssize_t len;

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (inotify_add_watch (fd, ws, IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_CREATE
                                      | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO), >=, 0);
  result = run_in (tree, ws, "linux-userns", stage, script, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sbx_run_result_get_exit_status (result), ==, 0);
  /* The run has returned, so every event it caused is queued already. */
  while ((len = read (fd, buf, sizeof buf)) > 0)
    for (char *p = buf; p < buf + len; p += sizeof (struct inotify_event) + ((struct inotify_event *) p)->len)
      n++;
  g_assert_true (len < 0 && errno == EAGAIN);
  close (fd);
  if (stage)
    {
      g_autoptr(GError) discard_error = NULL;
      g_autoptr(SbxChanges) changes = sbx_changes_open (sbx_run_result_get_stage_id (result),
                                                        &discard_error);

      g_assert_no_error (discard_error);
      g_assert_true (sbx_changes_discard (changes, &discard_error));
      g_assert_no_error (discard_error);
    }
  return n;
}

/* inotify: watches the host set on the workspace see nothing of a staged
 * run; the same run unstaged is seen. */
static void
test_limit_inotify (void)
{
  EtuTree tree = { 0 };
  const char *script = "echo more >> README && touch added && rm run.sh";

  if (!tree_with_userns (&tree))
    return;
  g_assert_cmpuint (host_events_during (&tree, tree.ws, TRUE, script), ==, 0);
  /* Positive control. */
  g_assert_cmpuint (host_events_during (&tree, tree.ws, FALSE, script), >, 0);
  etu_tree_clear (&tree);
}

int
main (int    argc,
      char **argv)
{
  int status;

  /* Before anything asks GLib for the state directory (it caches it). */
  state_home = etu_make_tmpdir ("sbx-stage-state-XXXXXX");
  g_setenv ("XDG_STATE_HOME", state_home, TRUE);
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/stage/rm-rf", test_rm_rf);
  for (guint i = 0; i < G_N_ELEMENTS (tool_cases); i++)
    {
      g_autofree char *name = g_strdup_printf ("/stage/tool/%s", tool_cases[i].name);

      g_test_add_data_func (name, &tool_cases[i], test_tool);
    }
  g_test_add_func ("/stage/discard", test_discard);
  g_test_add_func ("/stage/conflict", test_conflict);
  g_test_add_func ("/stage/conflict-host-deleted", test_conflict_host_deleted);
  g_test_add_func ("/stage/hostile", test_hostile);
  g_test_add_func ("/stage/rung2-refused", test_rung2_refused);
  g_test_add_func ("/stage/cli", test_cli);
  g_test_add_func ("/stage/unconfined-refused", test_unconfined_refused);
  g_test_add_func ("/stage/limit/dir-rename", test_limit_dir_rename);
  g_test_add_func ("/stage/limit/hard-links", test_limit_hard_links);
  g_test_add_func ("/stage/limit/xattrs", test_limit_xattrs);
  g_test_add_func ("/stage/limit/inotify", test_limit_inotify);
  status = g_test_run ();
  sbx_stage_remove_tree (state_home, NULL);
  g_free (state_home);
  return status;
}
