/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Filesystem grants on the real Linux backend, on both rungs, through the
 * library and the plugin as built.  For each filesystem class (one row of
 * class_cases[], run by test_class()): the probe fails without the grant
 * (and the same probe succeeds outside the sandbox), succeeds with it, and a
 * second spawn with the same token is refused with REPLAY.  An
 * exact grant never opens the file's siblings; a tree grant opens the tree
 * and nothing above it; a file swapped between issue and spawn is refused
 * with TARGET_CHANGED.
 *
 * Filesystem denials: for each row with a denial, the grant the core names
 * for a backend's report of it (sbx_backend_denial_new(), the spawn's
 * denial sink) is exactly the row's grant, which the row then proves opens
 * that access and no sibling, and is spent.
 *
 * Write classes also on targets no one may read (write-only): the target is
 * written and still not read or listed, at rung 1 too (the view mounts it
 * writable, Landlock refuses the read).  network.broad.v1 on both rungs:
 * the granted port is reachable, nothing else, and the spawn claims no
 * network guarantee.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <gio/gio.h>

#include "sbx-executor-private.h"
#include "sbx-backend-denials-private.h"
#include "executor-test-util.h"

static const char *const rungs[] = { "linux-userns", "linux-landlock" };

typedef struct
{
  EtuTree         tree;
  const char     *backend;
  char           *root;       /* configured root, read and write Gated */
  char           *wroot;      /* configured root, read Allow, write Gated */
  char           *host_dir;   /* outside every root, not under /tmp */
  SbxExecutorSet *set;
  SbxExecutor    *executor;
} Fx;

static SbxRegistry *
linux_registry (void)
{
  const char *dirs[] = { g_getenv ("SBX_TEST_LINUX_PLUGIN_DIR"), NULL };
  g_autoptr(GError) error = NULL;
  SbxRegistry *registry = sbx_registry_new_for_directories (dirs, &error);

  g_assert_no_error (error);
  return registry;
}

static gboolean
fx_init_full (Fx         *fx,
              const char *backend,
              SbxAccess   network)
{
  g_autoptr(SbxRegistry) registry = linux_registry ();
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxExecutorSetOptions) options = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *sub = NULL;

  memset (fx, 0, sizeof *fx);
  etu_tree_init (&fx->tree);
  fx->backend = backend;
  fx->root = g_build_filename (fx->tree.tmp, "root", NULL);
  fx->wroot = g_build_filename (fx->tree.tmp, "wroot", NULL);
  sub = g_build_filename (fx->root, "sub", NULL);
  g_assert_cmpint (g_mkdir_with_parents (sub, 0700), ==, 0);
  g_assert_cmpint (g_mkdir (fx->wroot, 0700), ==, 0);
  fx->host_dir = g_strdup ("/var/tmp/sbx-test-grant-XXXXXX");
  g_assert_nonnull (g_mkdtemp (fx->host_dir));
#define PUT(dir, name, text)                                              \
  G_STMT_START {                                                          \
    g_autofree char *p_ = g_build_filename (dir, name, NULL);             \
    g_assert_true (g_file_set_contents (p_, text, -1, NULL));             \
  } G_STMT_END
  PUT (fx->root, "secret", "S1-SECRET\n");
  PUT (fx->root, "sibling", "S2-SIBLING\n");
  PUT (sub, "deep", "S3-DEEP\n");
  PUT (fx->tree.tmp, "above", "S4-ABOVE\n");
  PUT (fx->wroot, "target", "W0\n");
  PUT (fx->host_dir, "host-file", "H1-HOST\n");
  PUT (fx->host_dir, "host-sibling", "H5-SIBLING\n");
  PUT (fx->host_dir, "tool", "#!/bin/sh\necho H-TOOL-RAN\n");
  PUT (fx->host_dir, "other-tool", "#!/bin/sh\necho H-OTHER-RAN\n");
#undef PUT
  {
    g_autofree char *tool = g_build_filename (fx->host_dir, "tool", NULL);
    g_autofree char *other = g_build_filename (fx->host_dir, "other-tool", NULL);

    g_assert_no_errno (chmod (tool, 0755));
    g_assert_no_errno (chmod (other, 0755));
  }

  sbx_profile_config_set_workspace (config, fx->tree.ws, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_host (config, SBX_ACCESS_GATED, SBX_ACCESS_GATED);
  sbx_profile_config_set_network (config, network);
  sbx_profile_config_set_command (config, SBX_ACCESS_ALLOW);
  sbx_profile_config_add_root (config, fx->root, SBX_ACCESS_GATED, SBX_ACCESS_GATED);
  sbx_profile_config_add_root (config, fx->wroot, SBX_ACCESS_ALLOW, SBX_ACCESS_GATED);
  profile = sbx_profile_new (config, &error);
  g_assert_no_error (error);
  options = etu_options (fx->tree.scratch, 4, registry);
  sbx_executor_set_options_set_backend (options, backend);
  fx->set = sbx_executor_set_new (profile, options, &error);
  if (fx->set == NULL)
    {
      g_test_skip_printf ("%s is unavailable here: %s", backend, error->message);
      return FALSE;
    }
  fx->executor = sbx_executor_set_for_key (fx->set, "k", &error);
  g_assert_no_error (error);
  return TRUE;
}

static gboolean
fx_init (Fx         *fx,
         const char *backend)
{
  return fx_init_full (fx, backend, SBX_ACCESS_DENY);
}

static void
fx_clear (Fx *fx)
{
  if (fx->set != NULL)
    g_assert_true (sbx_executor_set_close (fx->set, NULL, NULL));
  g_clear_object (&fx->executor);
  g_clear_object (&fx->set);
  if (fx->host_dir != NULL)
    etu_rm_rf (fx->host_dir);
  g_free (fx->host_dir);
  g_free (fx->root);
  g_free (fx->wroot);
  etu_tree_clear (&fx->tree);
}

typedef struct
{
  const char *grant_class;
  const char *target;
} GrantSpec;

/* Runs `sh -c SCRIPT` with fresh tokens for @grants (NULL-terminated by a
 * NULL class; none: a plain run).  Returns the output; *out_tokens gets the
 * tokens for a replay. */
static char *
run_argv (Fx                *fx,
          const char *const *argv,
          const GrantSpec   *grants,
          GStrv             *out_tokens,
          int               *out_status,
          GStrv             *out_spent)
{
  g_autofree char *command = sbx_grant_command_for_argv (argv);
  g_autoptr(GPtrArray) tokens = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  GBytes *bytes;
  gsize len;
  const char *data;

  for (guint i = 0; grants != NULL && grants[i].grant_class != NULL; i++)
    {
      char *token = sbx_executor_issue_grant (fx->executor, "exec", command, fx->tree.ws,
                                              grants[i].grant_class, grants[i].target, NULL, &error);

      g_assert_no_error (error);
      g_ptr_array_add (tokens, token);
    }
  g_ptr_array_add (tokens, NULL);
  if (grants == NULL)
    result = sbx_executor_run (fx->executor, fx->tree.ws, argv, NULL, NULL, &error);
  else
    result = etu_run_with_grants (fx->executor, fx->tree.ws, argv, "exec", (const char *const *) tokens->pdata, NULL, NULL, &error);
  g_assert_no_error (error);
  *out_status = sbx_run_result_get_exit_status (result);
  if (out_tokens != NULL)
    *out_tokens = (GStrv) g_ptr_array_steal (tokens, NULL);
  if (out_spent != NULL)
    *out_spent = g_strdupv ((GStrv) sbx_run_result_get_grants_spent (result));
  bytes = sbx_run_result_get_output (result);
  data = g_bytes_get_data (bytes, &len);
  return g_strndup (data, len);
}

static char *
run_script (Fx              *fx,
            const char      *script,
            const GrantSpec *grants,
            GStrv           *out_tokens,
            int             *out_status)
{
  const char *argv[] = { "/bin/sh", "-c", script, NULL };

  return run_argv (fx, argv, grants, out_tokens, out_status, NULL);
}

static void
assert_replay_argv (Fx                *fx,
                    const char *const *argv,
                    GStrv              tokens)
{
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;

  result = etu_run_with_grants (fx->executor, fx->tree.ws, argv, "exec",
                                (const char *const *) tokens, NULL, NULL, &error);
  g_assert_null (result);
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_REPLAY);
}

static void
assert_replay (Fx         *fx,
               const char *script,
               GStrv       tokens)
{
  const char *argv[] = { "/bin/sh", "-c", script, NULL };
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;

  result = etu_run_with_grants (fx->executor, fx->tree.ws, argv, "exec", (const char *const *) tokens, NULL, NULL, &error);
  g_assert_null (result);
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_REPLAY);
}

/* Positive control outside the sandbox. */
static void
assert_readable_here (const char *path,
                      const char *text)
{
  g_autofree char *contents = NULL;

  g_assert_true (g_file_get_contents (path, &contents, NULL, NULL));
  g_assert_cmpstr (contents, ==, text);
}

/* One filesystem grant class, as a row: the same script runs without the
 * grant (the control grants only, if any) and with it, and each run's
 * output is checked for the strings it must and must not hold.  Paths are
 * written with @ROOT@ (configured root, read and write Gated), @WROOT@
 * (configured root, read Allow, write Gated), @HOST@ (outside every root)
 * and @TMP@ (the test's directory, above the roots). */
#define MAX_STRINGS 6

typedef struct
{
  const char *name;
  const char *comment;
  /* Positive control outside the sandbox: this file reads as this text. */
  const char *here_path;
  const char *here_text;
  const char *script;
  /* Without the grant. */
  GrantSpec   control_grants[2];   /* ended by a NULL class */
  const char *control_absent[MAX_STRINGS];
  const char *control_present[MAX_STRINGS];
  const char *control_missing;     /* a path the control run must not create */
  /* With it. */
  GrantSpec   grants[3];           /* ended by a NULL class */
  const char *present[MAX_STRINGS];
  const char *absent[MAX_STRINGS];
  const char *contents_path;       /* afterwards this file holds contents */
  const char *contents;
  const char *exists;              /* afterwards this path exists */
  /* A backend's report that names this row's one grant (none: no denial). */
  guint32     denial_op;           /* SBX_ABI_DENIAL_READ ... _LIST */
  const char *denial_path;
} ClassCase;

static const ClassCase class_cases[] = {
  { "path-read", "exact: never the siblings, never the directory listing",
    "@ROOT@/secret", "S1-SECRET\n",
    "cat '@ROOT@/secret'; cat '@ROOT@/sibling'; ls '@ROOT@'; echo END",
    { { NULL, NULL } }, { "S1-SECRET" }, { "END" }, NULL,
    { { SBX_GRANT_CLASS_FILESYSTEM_PATH_READ, "@ROOT@/secret" }, { NULL, NULL } },
    { "S1-SECRET" }, { "S2-SIBLING", "sibling\n" }, NULL, NULL, NULL, SBX_ABI_DENIAL_READ, "@ROOT@/secret" },
  { "path-write", "exact: the directory stays read-only",
    NULL, NULL,
    "echo W1 >> '@WROOT@/target' && echo WROTE; echo X > '@WROOT@/new' && echo CREATED; echo END",
    { { NULL, NULL } }, { "WROTE" }, { "END" }, NULL,
    { { SBX_GRANT_CLASS_FILESYSTEM_PATH_WRITE, "@WROOT@/target" }, { NULL, NULL } },
    { "WROTE" }, { "CREATED" }, "@WROOT@/target", "W0\nW1\n", NULL, SBX_ABI_DENIAL_WRITE, "@WROOT@/target" },
  { "tree-read", "the tree, nothing above it",
    "@TMP@/above", "S4-ABOVE\n",
    "cat '@ROOT@/sub/deep'; cat '@ROOT@/secret'; cat '@TMP@/above'; echo END",
    { { NULL, NULL } }, { "S3-DEEP" }, { "END" }, NULL,
    { { SBX_GRANT_CLASS_FILESYSTEM_TREE_READ, "@ROOT@" }, { NULL, NULL } },
    { "S3-DEEP", "S1-SECRET" }, { "S4-ABOVE" }, NULL, NULL, NULL },
  { "tree-write", "the tree, nothing above it",
    NULL, NULL,
    "echo N > '@WROOT@/new' && echo CREATED; echo A > '@TMP@/above-new' && echo ABOVE; echo END",
    { { NULL, NULL } }, { "CREATED" }, { NULL }, "@WROOT@/new",
    { { SBX_GRANT_CLASS_FILESYSTEM_TREE_WRITE, "@WROOT@" }, { NULL, NULL } },
    { "CREATED" }, { "ABOVE" }, NULL, NULL, "@WROOT@/new", SBX_ABI_DENIAL_WRITE, "@WROOT@/new" },
  { "host-read", "a host file outside every root",
    "@HOST@/host-file", "H1-HOST\n",
    "cat '@HOST@/host-file'; echo END",
    { { NULL, NULL } }, { "H1-HOST" }, { NULL }, NULL,
    { { SBX_GRANT_CLASS_FILESYSTEM_HOST_READ, "host:*" }, { NULL, NULL } },
    { "H1-HOST" }, { NULL }, NULL, NULL, NULL },
  { "host-write", "control: host read alone does not write",
    NULL, NULL,
    "echo H2 >> '@HOST@/host-file' && echo WROTE; echo END",
    { { SBX_GRANT_CLASS_FILESYSTEM_HOST_READ, "host:*" }, { NULL, NULL } }, { "WROTE" }, { NULL }, NULL,
    { { SBX_GRANT_CLASS_FILESYSTEM_HOST_READ, "host:*" },
      { SBX_GRANT_CLASS_FILESYSTEM_HOST_WRITE, "host:*" }, { NULL, NULL } },
    { "WROTE" }, { NULL }, "@HOST@/host-file", "H1-HOST\nH2\n", NULL },
  /* Write-only: a write grant on a target the profile lets no one read
   * (root's read and write are both Gated).  The target is written and still
   * cannot be read: at rung 1 the view mounts it writable and Landlock
   * refuses the read; at rung 2 Landlock alone. */
  { "path-write-only", "written, still not read",
    "@ROOT@/secret", "S1-SECRET\n",
    "echo W1 >> '@ROOT@/secret' && echo WROTE; cat '@ROOT@/secret' && echo READ; cat '@ROOT@/sibling'; echo END",
    { { NULL, NULL } }, { "WROTE", "S1-SECRET" }, { "END" }, NULL,
    { { SBX_GRANT_CLASS_FILESYSTEM_PATH_WRITE, "@ROOT@/secret" }, { NULL, NULL } },
    { "WROTE" }, { "READ", "S1-SECRET", "S2-SIBLING" }, "@ROOT@/secret", "S1-SECRET\nW1\n", NULL,
    SBX_ABI_DENIAL_WRITE, "@ROOT@/secret" },
  /* A write-only tree: files can be created and replaced in it, none read,
   * and the tree cannot be listed (at rung 1 the view's directories lose
   * their blanket listing right for this spawn). */
  { "tree-write-only", "created, nothing read or listed",
    "@ROOT@/sub/deep", "S3-DEEP\n",
    "echo N > '@ROOT@/new' && echo CREATED; cat '@ROOT@/secret' '@ROOT@/sub/deep'; "
    "ls '@ROOT@' && echo LISTED; ls '@ROOT@/sub' && echo LISTED-SUB; cat '@TMP@/above'; echo END",
    { { NULL, NULL } }, { "CREATED" }, { "END" }, "@ROOT@/new",
    { { SBX_GRANT_CLASS_FILESYSTEM_TREE_WRITE, "@ROOT@" }, { NULL, NULL } },
    { "CREATED", "END" }, { "S1-SECRET", "S3-DEEP", "S4-ABOVE", "LISTED", "sibling" },
    "@ROOT@/new", "N\n", NULL, SBX_ABI_DENIAL_WRITE, "@ROOT@/new" },
  /* Rows for the filesystem denials the ones above do not cover: a host
   * file read or executed (its exact grant), a directory listed in a gated
   * root (the root's tree) or outside every root (only the host grant lists
   * it; it still writes nothing). */
  { "denial-read-host-file", "a host file: exactly it",
    "@HOST@/host-file", "H1-HOST\n",
    "cat '@HOST@/host-file'; cat '@HOST@/host-sibling'; echo END",
    { { NULL, NULL } }, { "H1-HOST", "H5-SIBLING" }, { "END" }, NULL,
    { { SBX_GRANT_CLASS_FILESYSTEM_PATH_READ, "@HOST@/host-file" }, { NULL, NULL } },
    { "H1-HOST", "END" }, { "H5-SIBLING" }, NULL, NULL, NULL, SBX_ABI_DENIAL_READ, "@HOST@/host-file" },
  { "denial-exec-host-file", "a host program: exactly it runs",
    "@HOST@/tool", "#!/bin/sh\necho H-TOOL-RAN\n",
    "'@HOST@/tool'; '@HOST@/other-tool'; echo END",
    { { NULL, NULL } }, { "H-TOOL-RAN", "H-OTHER-RAN" }, { "END" }, NULL,
    { { SBX_GRANT_CLASS_FILESYSTEM_PATH_READ, "@HOST@/tool" }, { NULL, NULL } },
    { "H-TOOL-RAN", "END" }, { "H-OTHER-RAN" }, NULL, NULL, NULL, SBX_ABI_DENIAL_EXEC, "@HOST@/tool" },
  { "denial-list-root-dir", "a directory in a gated root: the root's tree, nothing above it",
    "@TMP@/above", "S4-ABOVE\n",
    "ls '@ROOT@/sub'; cat '@TMP@/above'; cat '@HOST@/host-file'; echo END",
    { { NULL, NULL } }, { "deep", "S4-ABOVE", "H1-HOST" }, { "END" }, NULL,
    { { SBX_GRANT_CLASS_FILESYSTEM_TREE_READ, "@ROOT@" }, { NULL, NULL } },
    { "deep", "END" }, { "S4-ABOVE", "H1-HOST" }, NULL, NULL, NULL, SBX_ABI_DENIAL_LIST, "@ROOT@/sub" },
  { "denial-list-host-dir", "a host directory: the host grant lists it and writes nothing",
    "@HOST@/host-sibling", "H5-SIBLING\n",
    "ls '@HOST@'; echo X > '@HOST@/new' && echo HOSTWROTE; echo END",
    { { NULL, NULL } }, { "host-sibling", "HOSTWROTE" }, { "END" }, "@HOST@/new",
    { { SBX_GRANT_CLASS_FILESYSTEM_HOST_READ, "host:*" }, { NULL, NULL } },
    { "host-sibling", "END" }, { "HOSTWROTE" }, NULL, NULL, NULL, SBX_ABI_DENIAL_LIST, "@HOST@" },
};

/* @text with the fixture's paths for the placeholders above. */
static char *
expand (const Fx   *fx,
        const char *text)
{
  const struct { const char *word; const char *path; } words[] = {
    { "@ROOT@", fx->root }, { "@WROOT@", fx->wroot }, { "@HOST@", fx->host_dir }, { "@TMP@", fx->tree.tmp },
  };
  GString *out = g_string_new (text);

  for (guint i = 0; i < G_N_ELEMENTS (words); i++)
    g_string_replace (out, words[i].word, words[i].path, 0);
  return g_string_free (out, FALSE);
}

/* @specs with their targets expanded; the strings live in @keep. */
static GrantSpec *
expand_grants (const Fx        *fx,
               const GrantSpec *specs,
               guint            n_specs,
               GPtrArray       *keep)
{
  GrantSpec *out = g_new0 (GrantSpec, n_specs + 1);

  for (guint i = 0; i < n_specs && specs[i].grant_class != NULL; i++)
    {
      char *target = expand (fx, specs[i].target);

      g_ptr_array_add (keep, target);
      out[i].grant_class = specs[i].grant_class;
      out[i].target = target;
    }
  g_ptr_array_add (keep, out);
  return out;
}

static void
assert_strings (const char        *out,
                const char *const *strings,
                gboolean           present)
{
  for (guint i = 0; i < MAX_STRINGS && strings[i] != NULL; i++)
    if (present)
      g_assert_nonnull (strstr (out, strings[i]));
    else
      g_assert_null (strstr (out, strings[i]));
}

/* The row's one grant is the grant the core names for a backend's report
 * of the row's denial (sbx_backend_denial_new(): what the spawn's denial
 * sink does with a view-supervisor record). */
static void
assert_denial_names_grant (Fx              *fx,
                           const ClassCase *c)
{
  g_autofree char *path = expand (fx, c->denial_path);
  g_autofree char *target = expand (fx, c->grants[0].target);
  SbxBackendDenialV1 record = { sizeof record, c->denial_op, 2, path, "view-supervisor", "sh", NULL };
  g_autoptr(SbxDenial) denial = sbx_backend_denial_new (&record, sbx_executor_set_get_profile (fx->set));
  g_autofree char *line = NULL;

  g_assert_nonnull (denial);
  line = sbx_denial_to_string (denial);
  g_test_message ("%s", line);
  g_assert_null (c->grants[1].grant_class);
  g_assert_cmpstr (sbx_denial_get_grant_class (denial), ==, c->grants[0].grant_class);
  g_assert_cmpstr (sbx_denial_get_grant_target (denial), ==, target);
}

static void
test_class (gconstpointer data)
{
  const ClassCase *c = ((const void *const *) data)[1];
  const char *backend = ((const void *const *) data)[0];
  Fx fx;
  g_autoptr(GPtrArray) keep = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *script = NULL;
  g_autofree char *out = NULL;
  g_auto(GStrv) tokens = NULL;
  const GrantSpec *control;
  int status = 0;

  if (!fx_init (&fx, backend))
    {
      fx_clear (&fx);
      return;
    }
  if (c->here_path != NULL)
    {
      g_autofree char *here = expand (&fx, c->here_path);

      assert_readable_here (here, c->here_text);
    }
  if (c->denial_path != NULL)
    assert_denial_names_grant (&fx, c);
  script = expand (&fx, c->script);
  control = expand_grants (&fx, c->control_grants, G_N_ELEMENTS (c->control_grants), keep);
  out = run_script (&fx, script, control[0].grant_class != NULL ? control : NULL, NULL, &status);
  assert_strings (out, c->control_absent, FALSE);
  assert_strings (out, c->control_present, TRUE);
  if (c->control_missing != NULL)
    {
      g_autofree char *missing = expand (&fx, c->control_missing);

      g_assert_false (g_file_test (missing, G_FILE_TEST_EXISTS));
    }
  g_clear_pointer (&out, g_free);

  {
    const char *argv[] = { "/bin/sh", "-c", script, NULL };
    const GrantSpec *grants = expand_grants (&fx, c->grants, G_N_ELEMENTS (c->grants), keep);
    g_auto(GStrv) spent = NULL;
    guint n_grants = 0;

    while (grants[n_grants].grant_class != NULL)
      n_grants++;
    out = run_argv (&fx, argv, grants, &tokens, &status, &spent);
    g_assert_cmpuint (g_strv_length (spent), ==, n_grants);   /* each grant reported spent */
  }
  g_test_message ("%s: %s: %s", fx.backend, c->comment, out);
  assert_strings (out, c->present, TRUE);
  assert_strings (out, c->absent, FALSE);
  if (c->contents_path != NULL)
    {
      g_autofree char *path = expand (&fx, c->contents_path);
      g_autofree char *contents = NULL;

      g_assert_true (g_file_get_contents (path, &contents, NULL, NULL));
      g_assert_cmpstr (contents, ==, c->contents);
    }
  if (c->exists != NULL)
    {
      g_autofree char *path = expand (&fx, c->exists);

      g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
    }
  assert_replay (&fx, script, tokens);
  fx_clear (&fx);
}

/* What the network probe prints for one connect/socket/listen attempt. */
#define NET_PROBE                                                                   \
  "import socket, os\n"                                                             \
  "def t(name, f):\n"                                                               \
  "    try:\n"                                                                      \
  "        f(); print(name, 'OK')\n"                                                \
  "    except OSError as e:\n"                                                      \
  "        print(name, 'ERR', e.errno)\n"                                           \
  "t('CONNECT-A', lambda: socket.create_connection(('127.0.0.1', %u), timeout=5))\n" \
  "t('CONNECT-B', lambda: socket.create_connection(('127.0.0.1', %u), timeout=5))\n" \
  "t('CONNECT6-A', lambda: socket.create_connection(('::1', %u), timeout=5))\n"     \
  "t('UDP', lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))\n"            \
  "t('MPTCP', lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262))\n"    \
  "t('BIND', lambda: socket.socket().bind(('127.0.0.1', 0)))\n"                     \
  "def listen():\n"                                                                 \
  "    s = socket.socket(); s.listen()\n"                                           \
  "t('LISTEN', listen)\n"                                                           \
  "print('RES', os.environ.get('RES_OPTIONS'))\n"                                   \
  "print('END')\n"

static GSocket *
listen_loopback (GSocketFamily  family,
                 guint16       *port)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GInetAddress) any = g_inet_address_new_loopback (family);
  g_autoptr(GSocketAddress) addr = g_inet_socket_address_new (any, *port);
  g_autoptr(GSocketAddress) bound = NULL;
  GSocket *sock = g_socket_new (family, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, &error);

  g_assert_no_error (error);
  if (!g_socket_bind (sock, addr, TRUE, &error))
    {
      g_test_message ("bind [%s]:%u: %s", family == G_SOCKET_FAMILY_IPV6 ? "::1" : "127.0.0.1",
                      *port, error->message);
      g_object_unref (sock);
      return NULL;
    }
  g_assert_true (g_socket_listen (sock, &error));
  bound = g_socket_get_local_address (sock, &error);
  g_assert_no_error (error);
  *port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
  return sock;
}

/* network.broad.v1 on both rungs: with the grant TCP connect to the granted
 * port works (IPv4 and IPv6, any address), and nothing else does (another
 * port, UDP, MPTCP, bind, listen); DNS goes over TCP.  Without the grant the
 * same probe reaches nothing, and outside the sandbox everything works (the
 * positive control).  The spawn claims no network guarantee; the executor
 * keeps its own. */
static void
test_net_broad (gconstpointer data)
{
  Fx fx;
  g_autoptr(GSocket) a = NULL;
  g_autoptr(GSocket) a6 = NULL;
  g_autoptr(GSocket) b = NULL;
  guint16 port_a = 0, port_b = 0;
  g_autofree char *script = NULL;
  g_autofree char *target = NULL;
  g_autofree char *out = NULL;
  g_autofree char *control = NULL;
  g_auto(GStrv) tokens = NULL;
  g_auto(GStrv) spent = NULL;
  g_autoptr(GError) error = NULL;
  int status = 0;

  if (!fx_init_full (&fx, data, SBX_ACCESS_GATED))
    {
      fx_clear (&fx);
      return;
    }
  g_assert_true (sbx_executor_get_guarantees (fx.executor) & SBX_GUARANTEE_NETWORK_BOUNDARY);
  a = listen_loopback (G_SOCKET_FAMILY_IPV4, &port_a);
  g_assert_nonnull (a);
  a6 = listen_loopback (G_SOCKET_FAMILY_IPV6, &port_a);   /* same port on ::1, if there is IPv6 */
  b = listen_loopback (G_SOCKET_FAMILY_IPV4, &port_b);
  g_assert_nonnull (b);
  script = g_strdup_printf (NET_PROBE, port_a, port_b, port_a);
  {
    const char *argv[] = { "/usr/bin/python3", "-c", script, NULL };
    GrantSpec grants[] = { { SBX_GRANT_CLASS_NETWORK_BROAD, NULL }, { NULL, NULL } };

    /* Positive control: the same probe outside the sandbox. */
    g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &control,
                                 NULL, &status, &error));
    g_assert_no_error (error);
    g_test_message ("outside: %s", control);
    g_assert_nonnull (strstr (control, "CONNECT-A OK"));
    g_assert_nonnull (strstr (control, "CONNECT-B OK"));
    g_assert_nonnull (strstr (control, "UDP OK"));
    g_assert_nonnull (strstr (control, "BIND OK"));
    g_assert_nonnull (strstr (control, "LISTEN OK"));

    /* Baseline: no grant, no network. */
    out = run_argv (&fx, argv, NULL, NULL, &status, NULL);
    g_test_message ("%s, no grant: %s", fx.backend, out);
    g_assert_nonnull (strstr (out, "END"));
    g_assert_null (strstr (out, "CONNECT-A OK"));
    g_assert_null (strstr (out, "CONNECT-B OK"));
    g_assert_null (strstr (out, "CONNECT6-A OK"));
    g_clear_pointer (&out, g_free);

    target = g_strdup_printf ("tcp:*:%u", port_a);
    grants[0].target = target;
    out = run_argv (&fx, argv, grants, &tokens, &status, &spent);
    g_test_message ("%s, tcp:*:%u: %s", fx.backend, port_a, out);
    g_assert_nonnull (strstr (out, "END"));
    g_assert_nonnull (strstr (out, "CONNECT-A OK"));
    if (a6 != NULL)
      g_assert_nonnull (strstr (out, "CONNECT6-A OK"));
    g_assert_nonnull (strstr (out, "CONNECT-B ERR 13"));   /* Landlock: EACCES */
    g_assert_nonnull (strstr (out, "UDP ERR 13"));
    g_assert_nonnull (strstr (out, "MPTCP ERR 13"));
    g_assert_nonnull (strstr (out, "BIND ERR 13"));
    g_assert_nonnull (strstr (out, "LISTEN ERR 13"));
    g_assert_nonnull (strstr (out, "RES use-vc"));
    /* The run's report says what the grant opened and what no longer holds. */
    g_assert_nonnull (spent);
    g_assert_cmpuint (g_strv_length (spent), ==, 1);
    g_assert_nonnull (strstr (spent[0], "no network-boundary"));
    assert_replay_argv (&fx, argv, tokens);
    /* The executor's own spawns are not widened. */
    g_clear_pointer (&out, g_free);
    out = run_argv (&fx, argv, NULL, NULL, &status, NULL);
    g_assert_null (strstr (out, "CONNECT-A OK"));
    g_assert_true (sbx_executor_get_guarantees (fx.executor) & SBX_GUARANTEE_NETWORK_BOUNDARY);
  }
  fx_clear (&fx);
}

/* A broad grant needs a gated network: Deny is never grantable. */
static void
test_net_broad_denied (gconstpointer data)
{
  Fx fx;
  g_autofree char *token = NULL;
  g_autoptr(GError) error = NULL;

  if (!fx_init (&fx, data))
    {
      fx_clear (&fx);
      return;
    }
  token = sbx_executor_issue_grant (fx.executor, "exec", "true", fx.tree.ws,
                                    SBX_GRANT_CLASS_NETWORK_BROAD, "tcp:*:80", NULL, &error);
  g_assert_null (token);
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_DENIED);
  fx_clear (&fx);
}

/* The token never reaches the child on the real backends either: not its
 * argv or environment, not the cmdline or environ of any process it can
 * see (a host read grant lets it read all of the host /proc at rung 2;
 * rung 1 has its own). */
static void
test_token_not_in_child (gconstpointer data)
{
  Fx fx;
  const char *script = "cat /proc/self/cmdline /proc/self/environ; n=0; "
                       "for f in /proc/[0-9]*/cmdline /proc/[0-9]*/environ; do "
                       "cat \"$f\" 2>/dev/null && n=$((n+1)); done; echo; echo READ=$n END";
  const char *argv[] = { "/bin/sh", "-c", script, NULL };
  g_autofree char *command = NULL;
  g_autofree char *token = NULL;
  g_auto(GStrv) parts = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  const char *grants[2] = { NULL, NULL };
  GBytes *bytes;
  const char *out;
  gsize len;

  if (!fx_init (&fx, data))
    {
      fx_clear (&fx);
      return;
    }
  command = sbx_grant_command_for_argv (argv);
  token = sbx_executor_issue_grant (fx.executor, "exec", command, fx.tree.ws,
                                    SBX_GRANT_CLASS_FILESYSTEM_HOST_READ, "host:*", NULL, &error);
  g_assert_no_error (error);
  parts = g_strsplit (token, ".", -1);
  g_assert_cmpuint (g_strv_length (parts), ==, 3);
  grants[0] = token;
  result = etu_run_with_grants (fx.executor, fx.tree.ws, argv, "exec", grants, NULL,
                                NULL, &error);
  g_assert_no_error (error);
  bytes = sbx_run_result_get_output (result);
  out = g_bytes_get_data (bytes, &len);
  /* The probe ran and read something (cmdline and environ hold NULs). */
  g_assert_nonnull (memmem (out, len, "/proc/self/cmdline", strlen ("/proc/self/cmdline")));
  g_assert_nonnull (memmem (out, len, " END", 4));
  {
    /* The last line is the count (the script's own text, in its cmdline,
     * holds the unexpanded one). */
    const char *n = NULL;
    int count;

    for (const char *p = out; (p = memmem (p, len - (gsize) (p - out), "READ=", 5)) != NULL; p++)
      n = p;
    g_autofree char *tail = NULL;

    g_assert_nonnull (n);
    tail = g_strndup (n + 5, len - (gsize) (n + 5 - out));   /* the output holds no terminating NUL */
    count = atoi (tail);
    g_test_message ("%s: the child read %d cmdline/environ files", fx.backend, count);
    g_assert_cmpint (count, >=, 2);
  }
  /* Neither the token nor its payload or MAC. */
  g_assert_null (memmem (out, len, token, strlen (token)));
  g_assert_null (memmem (out, len, parts[1], strlen (parts[1])));
  g_assert_null (memmem (out, len, parts[2], strlen (parts[2])));
  fx_clear (&fx);
}

/* An exact grant's file that gains a hard link between issue and spawn is
 * never opened: an inode rule would open every name of it. */
static void
test_link_after_issue (gconstpointer data)
{
  Fx fx;
  g_autofree char *secret = NULL;
  g_autofree char *alias = NULL;
  g_autofree char *script = NULL;
  g_autofree char *command = NULL;
  g_autofree char *token = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  const char *grants[2] = { NULL, NULL };

  if (!fx_init (&fx, data))
    {
      fx_clear (&fx);
      return;
    }
  secret = g_build_filename (fx.root, "secret", NULL);
  alias = g_build_filename (fx.wroot, "alias", NULL);
  script = g_strdup_printf ("cat '%s'", secret);
  {
    const char *argv[] = { "/bin/sh", "-c", script, NULL };

    command = sbx_grant_command_for_argv (argv);
    token = sbx_executor_issue_grant (fx.executor, "exec", command, fx.tree.ws,
                                      SBX_GRANT_CLASS_FILESYSTEM_PATH_READ, secret, NULL, &error);
    g_assert_no_error (error);
    g_assert_cmpint (link (secret, alias), ==, 0);
    grants[0] = token;
    result = etu_run_with_grants (fx.executor, fx.tree.ws, argv, "exec", grants, NULL,
                                  NULL, &error);
  }
  g_assert_null (result);
  g_test_message ("%s: %s", fx.backend, error->message);
  g_assert_true (g_error_matches (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_UNSUPPORTED)
                 || g_error_matches (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_TARGET_CHANGED));
  fx_clear (&fx);
}

/* A file renamed over the granted one (or exchanged with it) between issue
 * and spawn. */
static void
swap_refused (gconstpointer data,
              gboolean      exchange)
{
  Fx fx;
  g_autofree char *secret = NULL;
  g_autofree char *sibling = NULL;
  g_autofree char *script = NULL;
  g_autofree char *command = NULL;
  g_autofree char *token = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  const char *grants[2] = { NULL, NULL };

  if (!fx_init (&fx, data))
    {
      fx_clear (&fx);
      return;
    }
  secret = g_build_filename (fx.root, "secret", NULL);
  sibling = g_build_filename (fx.root, "sibling", NULL);
  script = g_strdup_printf ("cat '%s'", secret);
  {
    const char *argv[] = { "/bin/sh", "-c", script, NULL };

    command = sbx_grant_command_for_argv (argv);
    token = sbx_executor_issue_grant (fx.executor, "exec", command, fx.tree.ws,
                                      SBX_GRANT_CLASS_FILESYSTEM_PATH_READ, secret, NULL, &error);
    g_assert_no_error (error);
    if (exchange)
      g_assert_cmpint (syscall (SYS_renameat2, AT_FDCWD, sibling, AT_FDCWD, secret, RENAME_EXCHANGE),
                       ==, 0);
    else
      g_assert_cmpint (g_rename (sibling, secret), ==, 0);
    grants[0] = token;
    result = etu_run_with_grants (fx.executor, fx.tree.ws, argv, "exec", grants, NULL, NULL, &error);
  }
  g_assert_null (result);
  g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_TARGET_CHANGED);
  fx_clear (&fx);
}

static void
test_swap_refused (gconstpointer data)
{
  swap_refused (data, FALSE);
}

static void
test_exchange_refused (gconstpointer data)
{
  swap_refused (data, TRUE);
}

int
main (int    argc,
      char **argv)
{
  static const struct { const char *name; GTestDataFunc fn; } cases[] = {
    { "net-broad", test_net_broad },
    { "net-broad-denied", test_net_broad_denied },
    { "swap-refused", test_swap_refused },
    { "exchange-refused", test_exchange_refused },
    { "link-after-issue", test_link_after_issue },
    { "token-not-in-child", test_token_not_in_child },
  };

  static const void *class_params[G_N_ELEMENTS (rungs)][G_N_ELEMENTS (class_cases)][2];

  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  for (guint r = 0; r < G_N_ELEMENTS (rungs); r++)
    for (guint c = 0; c < G_N_ELEMENTS (class_cases); c++)
      {
        g_autofree char *path = g_strdup_printf ("/linux/grants/%s/%s", rungs[r], class_cases[c].name);

        class_params[r][c][0] = rungs[r];
        class_params[r][c][1] = &class_cases[c];
        g_test_add_data_func (path, class_params[r][c], test_class);
      }
  for (guint r = 0; r < G_N_ELEMENTS (rungs); r++)
    for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
      {
        g_autofree char *path = g_strdup_printf ("/linux/grants/%s/%s", rungs[r], cases[c].name);

        g_test_add_data_func (path, rungs[r], cases[c].fn);
      }
  return g_test_run ();
}
