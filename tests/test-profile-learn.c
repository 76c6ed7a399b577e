/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx profile learn's computation (tools/sbx-profile-learn.c), fed SbxDenial
 * records made with the library's private constructor, in a directory tree
 * of the test's own: each rule of the file's comment, checked on the
 * changed profile (its roots, network, command, host sockets, and what it
 * answers for the denied path and a sibling), the approvals and the notes.
 * The CLI end to end is tests/test-cli-profile-learn.c.
 */
#include <sbx/sbx.h>

#include <string.h>
#include <glib/gstdio.h>

#include "sbx-denial-private.h"
#include "sbx-profile-learn.h"

typedef struct
{
  char *tmp;     /* the test's tree */
  char *ws;      /* the workspace: tmp/ws */
  char *host;    /* host paths: tmp/host (a, a/b, a/b/c, file a/f, a/b/g) */
} Tree;

static void
tree_init (Tree *t)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *canonical = NULL;

  dir = g_dir_make_tmp ("learn-XXXXXX", &error);
  g_assert_no_error (error);
  canonical = realpath (dir, NULL);
  g_assert_nonnull (canonical);
  t->tmp = g_strdup (canonical);
  t->ws = g_build_filename (t->tmp, "ws", NULL);
  t->host = g_build_filename (t->tmp, "host", NULL);
  g_assert_cmpint (g_mkdir_with_parents (t->ws, 0755), ==, 0);
  {
    g_autofree char *c = g_build_filename (t->host, "a", "b", "c", NULL);
    g_autofree char *f = g_build_filename (t->host, "a", "f", NULL);
    g_autofree char *g = g_build_filename (t->host, "a", "b", "g", NULL);

    g_assert_cmpint (g_mkdir_with_parents (c, 0755), ==, 0);
    g_assert_true (g_file_set_contents (f, "f\n", -1, NULL));
    g_assert_true (g_file_set_contents (g, "g\n", -1, NULL));
  }
}

static void
tree_clear (Tree *t)
{
  g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", t->tmp);

  g_assert_cmpint (system (cmd), ==, 0);
  g_free (t->tmp);
  g_free (t->ws);
  g_free (t->host);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Tree, tree_clear)

/* A path under the host part of the tree. */
static char *
hp (const Tree *t,
    const char *rel)
{
  return g_build_filename (t->host, rel, NULL);
}

/* The default profile's shape on the tree's workspace: workspace
 * read/write, host denied, network denied, command allowed. */
static SbxProfile *
base_profile (const Tree *t,
              void      (*tweak) (SbxProfileConfig *config, const Tree *t))
{
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autoptr(GError) error = NULL;
  SbxProfile *profile;

  sbx_profile_config_set_workspace (config, t->ws, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_host (config, SBX_ACCESS_DENY, SBX_ACCESS_DENY);
  sbx_profile_config_set_network (config, SBX_ACCESS_DENY);
  sbx_profile_config_set_command (config, SBX_ACCESS_ALLOW);
  if (tweak != NULL)
    tweak (config, t);
  profile = sbx_profile_new (config, &error);
  g_assert_no_error (error);
  return profile;
}

static void
add (SbxLearn          *learn,
     SbxDenialOperation op,
     const char        *target,
     const char        *grant_class,
     const char        *grant_target,
     const char        *reason)
{
  g_autoptr(SbxDenial) d = sbx_denial_new (op, target, "view-supervisor", grant_class, grant_target, reason);

  sbx_learn_add_denial (learn, d);
}

static SbxProfile *
compute (SbxLearn *learn)
{
  g_autoptr(GError) error = NULL;
  SbxProfile *profile = sbx_learn_compute (learn, &error);

  g_assert_no_error (error);
  g_assert_nonnull (profile);
  return profile;
}

static SbxAccess
access_at (SbxProfile *profile,
           const char *kind,
           const char *path)
{
  g_autoptr(GError) error = NULL;
  SbxAccess access = SBX_ACCESS_ALLOW;

  g_assert_true (sbx_profile_access_for (profile, kind, path, &access, &error));
  g_assert_no_error (error);
  return access;
}

/* The index of root @path in @profile, or -1. */
static int
root_index (SbxProfile *profile,
            const char *path)
{
  for (guint i = 0; i < sbx_profile_get_n_roots (profile); i++)
    if (g_str_equal (sbx_profile_get_root_path (profile, i), path))
      return (int) i;
  return -1;
}

static gboolean
notes_have (SbxLearn   *learn,
            const char *fragment)
{
  const char *const *notes = sbx_learn_get_notes (learn);

  for (guint i = 0; notes[i] != NULL; i++)
    if (strstr (notes[i], fragment) != NULL)
      return TRUE;
  return FALSE;
}

/* read of a file: a read root at its directory; its sibling tree (the
 * parent of that directory) stays denied, and write stays the host's. */
static void
test_read_file (void)
{
  g_auto(Tree) t = { 0 };
  g_autoptr(SbxProfile) base = NULL;
  g_autoptr(SbxLearn) learn = NULL;
  g_autoptr(SbxProfile) changed = NULL;
  g_autofree char *f = NULL, *a = NULL;
  int i;

  tree_init (&t);
  base = base_profile (&t, NULL);
  f = hp (&t, "a/f");
  a = hp (&t, "a");
  /* the control: the base denies the path */
  g_assert_cmpint (access_at (base, "filesystem.read", f), ==, SBX_ACCESS_DENY);
  learn = sbx_learn_new (base);
  add (learn, SBX_DENIAL_OPERATION_READ, f, "filesystem.path.read.v1", f, "host read is denied");
  changed = compute (learn);
  g_assert_cmpuint (sbx_profile_get_n_roots (changed), ==, 1);
  i = root_index (changed, a);
  g_assert_cmpint (i, ==, 0);
  g_assert_cmpint (sbx_profile_get_root_read (changed, i), ==, SBX_ACCESS_ALLOW);
  g_assert_cmpint (sbx_profile_get_root_write (changed, i), ==, SBX_ACCESS_DENY);
  g_assert_cmpint (access_at (changed, "filesystem.read", f), ==, SBX_ACCESS_ALLOW);
  g_assert_cmpint (access_at (changed, "filesystem.write", f), ==, SBX_ACCESS_DENY);
  g_assert_cmpint (access_at (changed, "filesystem.read", t.host), ==, SBX_ACCESS_DENY);
  /* nothing else moved */
  g_assert_cmpint (sbx_profile_get_host_read (changed), ==, SBX_ACCESS_DENY);
  g_assert_cmpint (sbx_profile_get_network (changed), ==, SBX_ACCESS_DENY);
  g_assert_cmpint (sbx_profile_get_command (changed), ==, SBX_ACCESS_ALLOW);
  g_assert_null (sbx_learn_get_approvals (learn)[0]);
  g_assert_null (sbx_learn_get_notes (learn)[0]);
}

/* list of a directory and exec of a file: the directory itself, and the
 * file's directory; a root inside another with no more access is dropped */
static void
test_list_exec_merge (void)
{
  g_auto(Tree) t = { 0 };
  g_autoptr(SbxProfile) base = NULL;
  g_autoptr(SbxLearn) learn = NULL;
  g_autoptr(SbxProfile) changed = NULL;
  g_autofree char *b = NULL, *c = NULL, *g = NULL, *a = NULL, *f = NULL;

  tree_init (&t);
  base = base_profile (&t, NULL);
  a = hp (&t, "a");
  b = hp (&t, "a/b");
  c = hp (&t, "a/b/c");
  g = hp (&t, "a/b/g");
  f = hp (&t, "a/f");

  learn = sbx_learn_new (base);
  add (learn, SBX_DENIAL_OPERATION_LIST, c, NULL, NULL, "the profile denies host read");
  changed = compute (learn);
  g_assert_cmpuint (sbx_profile_get_n_roots (changed), ==, 1);
  g_assert_cmpint (root_index (changed, c), ==, 0);
  g_assert_cmpint (access_at (changed, "filesystem.read", g), ==, SBX_ACCESS_DENY);
  g_clear_pointer (&changed, sbx_profile_unref);
  g_clear_pointer (&learn, sbx_learn_free);

  /* exec of b/g: root b; list of b/c inside it: dropped; read of a/f: root
   * a, which then holds b too: only a is left */
  learn = sbx_learn_new (base);
  add (learn, SBX_DENIAL_OPERATION_EXEC, g, NULL, NULL, NULL);
  add (learn, SBX_DENIAL_OPERATION_LIST, c, NULL, NULL, NULL);
  changed = compute (learn);
  g_assert_cmpuint (sbx_profile_get_n_roots (changed), ==, 1);
  g_assert_cmpint (root_index (changed, b), ==, 0);
  g_assert_cmpint (access_at (changed, "filesystem.read", c), ==, SBX_ACCESS_ALLOW);
  g_assert_cmpint (access_at (changed, "filesystem.read", f), ==, SBX_ACCESS_DENY);
  g_clear_pointer (&changed, sbx_profile_unref);
  g_clear_pointer (&learn, sbx_learn_free);

  learn = sbx_learn_new (base);
  add (learn, SBX_DENIAL_OPERATION_EXEC, g, NULL, NULL, NULL);
  add (learn, SBX_DENIAL_OPERATION_READ, f, NULL, NULL, NULL);
  add (learn, SBX_DENIAL_OPERATION_LIST, c, NULL, NULL, NULL);
  changed = compute (learn);
  g_assert_cmpuint (sbx_profile_get_n_roots (changed), ==, 1);
  g_assert_cmpint (root_index (changed, a), ==, 0);
  g_assert_cmpint (access_at (changed, "filesystem.write", g), ==, SBX_ACCESS_DENY);
}

/* write: of an existing file, write at its directory (read stays what the
 * base gives there); of a missing path, the nearest existing directory; a
 * write root inside a read root keeps the read (a nested root with less
 * would take it away) */
static void
test_write (void)
{
  g_auto(Tree) t = { 0 };
  g_autoptr(SbxProfile) base = NULL;
  g_autoptr(SbxLearn) learn = NULL;
  g_autoptr(SbxProfile) changed = NULL;
  g_autofree char *a = NULL, *b = NULL, *f = NULL, *missing = NULL, *g = NULL;
  int i;

  tree_init (&t);
  base = base_profile (&t, NULL);
  a = hp (&t, "a");
  b = hp (&t, "a/b");
  f = hp (&t, "a/f");
  g = hp (&t, "a/b/g");
  missing = hp (&t, "a/b/new/deeper/file");

  learn = sbx_learn_new (base);
  add (learn, SBX_DENIAL_OPERATION_WRITE, f, NULL, NULL, "the profile denies host write");
  changed = compute (learn);
  i = root_index (changed, a);
  g_assert_cmpint (i, >=, 0);
  g_assert_cmpint (sbx_profile_get_root_read (changed, i), ==, SBX_ACCESS_DENY);
  g_assert_cmpint (sbx_profile_get_root_write (changed, i), ==, SBX_ACCESS_ALLOW);
  g_assert_cmpint (access_at (changed, "filesystem.write", f), ==, SBX_ACCESS_ALLOW);
  g_assert_cmpint (access_at (changed, "filesystem.write", t.host), ==, SBX_ACCESS_DENY);
  g_assert_cmpint (sbx_profile_get_host_write (changed), ==, SBX_ACCESS_DENY);
  g_clear_pointer (&changed, sbx_profile_unref);
  g_clear_pointer (&learn, sbx_learn_free);

  learn = sbx_learn_new (base);
  add (learn, SBX_DENIAL_OPERATION_READ, f, NULL, NULL, NULL);
  add (learn, SBX_DENIAL_OPERATION_WRITE, missing, NULL, NULL, NULL);
  changed = compute (learn);
  g_assert_cmpuint (sbx_profile_get_n_roots (changed), ==, 2);
  i = root_index (changed, b);
  g_assert_cmpint (i, >=, 0);
  g_assert_cmpint (sbx_profile_get_root_read (changed, i), ==, SBX_ACCESS_ALLOW);
  g_assert_cmpint (sbx_profile_get_root_write (changed, i), ==, SBX_ACCESS_ALLOW);
  i = root_index (changed, a);
  g_assert_cmpint (i, >=, 0);
  g_assert_cmpint (sbx_profile_get_root_write (changed, i), ==, SBX_ACCESS_DENY);
  g_assert_cmpint (access_at (changed, "filesystem.write", f), ==, SBX_ACCESS_DENY);
  g_assert_cmpint (access_at (changed, "filesystem.write", g), ==, SBX_ACCESS_ALLOW);
}

static void
deny_root_a (SbxProfileConfig *config,
             const Tree       *t)
{
  g_autofree char *a = hp (t, "a");
  g_autofree char *b = hp (t, "a/b");

  sbx_profile_config_add_root (config, a, SBX_ACCESS_DENY, SBX_ACCESS_DENY);
  sbx_profile_config_add_root (config, b, SBX_ACCESS_GATED, SBX_ACCESS_DENY);
}

/* what the profile wrote is left as written: a denying root is listed, a
 * gated one lists the approval its denial names; a read the host already
 * allows, a path no root can hold (/) and an unclean path are listed too */
static void
test_written_and_unexpressible (void)
{
  g_auto(Tree) t = { 0 };
  g_autoptr(SbxProfile) base = NULL;
  g_autoptr(SbxLearn) learn = NULL;
  g_autoptr(SbxProfile) changed = NULL;
  g_autofree char *f = NULL, *g = NULL, *expected = NULL, *note = NULL;

  tree_init (&t);
  base = base_profile (&t, deny_root_a);
  f = hp (&t, "a/f");
  g = hp (&t, "a/b/g");
  learn = sbx_learn_new (base);
  add (learn, SBX_DENIAL_OPERATION_READ, f, NULL, NULL, "the root denies read");
  add (learn, SBX_DENIAL_OPERATION_READ, g, "filesystem.path.read.v1", g, "read is gated");
  add (learn, SBX_DENIAL_OPERATION_READ, "/no-such-top-level-name", NULL, NULL, NULL);
  add (learn, SBX_DENIAL_OPERATION_READ, "/etc/../etc/passwd", NULL, NULL, NULL);
  add (learn, SBX_DENIAL_OPERATION_READ, "relative/path", NULL, NULL, NULL);
  changed = compute (learn);
  g_assert_true (sbx_profile_equal (base, changed));
  expected = g_strdup_printf ("filesystem.path.read.v1:%s", g);
  g_assert_cmpstr (sbx_learn_get_approvals (learn)[0], ==, expected);
  g_assert_null (sbx_learn_get_approvals (learn)[1]);
  note = g_strdup_printf ("the profile's root %s/a denies read; left as written", t.host);
  g_assert_true (notes_have (learn, note));
  g_clear_pointer (&note, g_free);
  note = g_strdup_printf ("the profile's root %s/a/b gates read", t.host);
  g_assert_true (notes_have (learn, note));
  g_assert_true (notes_have (learn, "denied read /no-such-top-level-name: the narrowest root would be /"));
  g_assert_true (notes_have (learn, "denied read /etc/../etc/passwd: not an absolute clean path"));
  g_assert_true (notes_have (learn, "denied read relative/path: not an absolute clean path"));
  g_clear_pointer (&changed, sbx_profile_unref);
  g_clear_pointer (&learn, sbx_learn_free);
  g_clear_pointer (&base, sbx_profile_unref);

  /* host read allowed: the profile is not what refused it */
  {
    g_autoptr(SbxProfileConfig) config = NULL;

    base = base_profile (&t, NULL);
    config = sbx_profile_dup_config (base);
    sbx_profile_config_set_host (config, SBX_ACCESS_ALLOW, SBX_ACCESS_DENY);
    g_clear_pointer (&base, sbx_profile_unref);
    base = sbx_profile_new (config, NULL);
    g_assert_nonnull (base);
  }
  learn = sbx_learn_new (base);
  add (learn, SBX_DENIAL_OPERATION_READ, f, NULL, NULL, "refused by the backend");
  changed = compute (learn);
  g_assert_true (sbx_profile_equal (base, changed));
  g_assert_true (notes_have (learn, "the profile already allows host read; something else refused it"));
}

/* network: a refused connection with a grant makes a denied network gated
 * and lists its approval; one without (a metadata address) is listed and
 * changes nothing; a refused name asks for its port unless a connection
 * named it; a gated network stays gated */
static void
test_network (void)
{
  g_auto(Tree) t = { 0 };
  g_autoptr(SbxProfile) base = NULL;
  g_autoptr(SbxLearn) learn = NULL;
  g_autoptr(SbxProfile) changed = NULL;
  const char *const *approvals;

  tree_init (&t);
  base = base_profile (&t, NULL);

  learn = sbx_learn_new (base);
  add (learn, SBX_DENIAL_OPERATION_CONNECT, "169.254.169.254:80", NULL, NULL, "a metadata address");
  add (learn, SBX_DENIAL_OPERATION_RESOLVE, "0xa9fea9fe", NULL, NULL, NULL);
  changed = compute (learn);
  g_assert_true (sbx_profile_equal (base, changed));
  g_assert_true (notes_have (learn, "denied connect 169.254.169.254:80 (a metadata address): no grant opens it"));
  g_assert_true (notes_have (learn, "denied resolve 0xa9fea9fe: "));
  g_assert_null (sbx_learn_get_approvals (learn)[0]);
  g_clear_pointer (&changed, sbx_profile_unref);
  g_clear_pointer (&learn, sbx_learn_free);

  learn = sbx_learn_new (base);
  add (learn, SBX_DENIAL_OPERATION_CONNECT, "example.com:443", "network.proxy-target.v1", "tcp:example.com:443",
       "network is gated");
  add (learn, SBX_DENIAL_OPERATION_CONNECT, "example.com:443", "network.proxy-target.v1", "tcp:example.com:443",
       "network is gated");
  add (learn, SBX_DENIAL_OPERATION_RESOLVE, "example.com", NULL, NULL,
       "the sandbox resolves only the names of approved targets");
  add (learn, SBX_DENIAL_OPERATION_RESOLVE, "pypi.org", NULL, NULL,
       "the sandbox resolves only the names of approved targets");
  changed = compute (learn);
  g_assert_cmpint (sbx_profile_get_network (changed), ==, SBX_ACCESS_GATED);
  g_assert_cmpuint (sbx_profile_get_n_roots (changed), ==, 0);
  approvals = sbx_learn_get_approvals (learn);
  g_assert_cmpstr (approvals[0], ==, "network.proxy-target.v1:tcp:example.com:443");
  g_assert_null (approvals[1]);
  g_assert_true (notes_have (learn, "denied resolve pypi.org: approve network.proxy-target.v1:tcp:pypi.org:PORT"));
  g_assert_false (notes_have (learn, "example.com:PORT"));
  g_clear_pointer (&changed, sbx_profile_unref);
  g_clear_pointer (&learn, sbx_learn_free);

  /* a gated base: unchanged, the approvals listed */
  {
    g_autoptr(SbxProfileConfig) config = sbx_profile_dup_config (base);
    g_autoptr(SbxProfile) gated = NULL;

    sbx_profile_config_set_network (config, SBX_ACCESS_GATED);
    gated = sbx_profile_new (config, NULL);
    learn = sbx_learn_new (gated);
    add (learn, SBX_DENIAL_OPERATION_CONNECT, "10.1.2.3:5432", "network.proxy-target.v1", "tcp:10.1.2.3:5432",
         "network is gated");
    changed = compute (learn);
    g_assert_true (sbx_profile_equal (gated, changed));
    g_assert_cmpstr (sbx_learn_get_approvals (learn)[0], ==, "network.proxy-target.v1:tcp:10.1.2.3:5432");
  }
}

static void
gate_socket (SbxProfileConfig *config,
             const Tree       *t)
{
  sbx_profile_config_add_gated_host_socket (config, "/run/gated.sock");
}

/* unix-connect: a host socket the profile does not name is added, with
 * what its daemon means; an abstract one is listed; a gated one keeps its
 * gate and lists the approval */
static void
test_unix_connect (void)
{
  g_auto(Tree) t = { 0 };
  g_autoptr(SbxProfile) base = NULL;
  g_autoptr(SbxLearn) learn = NULL;
  g_autoptr(SbxProfile) changed = NULL;
  const char *const *sockets;

  tree_init (&t);
  base = base_profile (&t, gate_socket);
  learn = sbx_learn_new (base);
  add (learn, SBX_DENIAL_OPERATION_UNIX_CONNECT, "/run/user/1000/bus", NULL, NULL,
       "the profile does not name this host socket");
  add (learn, SBX_DENIAL_OPERATION_UNIX_CONNECT, "@/tmp/.X11-unix/X0", NULL, NULL,
       "an abstract socket outside the sandbox; no grant opens it");
  add (learn, SBX_DENIAL_OPERATION_UNIX_CONNECT, "/run/gated.sock", "unix.connect.v1", "/run/gated.sock",
       "the host socket is gated");
  changed = compute (learn);
  sockets = sbx_profile_get_host_sockets (changed);
  g_assert_cmpstr (sockets[0], ==, "/run/user/1000/bus");
  g_assert_null (sockets[1]);
  g_assert_cmpstr (sbx_profile_get_gated_host_sockets (changed)[0], ==, "/run/gated.sock");
  g_assert_null (sbx_profile_get_host_sockets (base)[0]);
  g_assert_true (notes_have (learn, "host-sockets /run/user/1000/bus: the daemon behind it acts for the sandbox "
                                    "outside every boundary"));
  g_assert_true (notes_have (learn, "denied unix-connect @/tmp/.X11-unix/X0"));
  g_assert_cmpstr (sbx_learn_get_approvals (learn)[0], ==, "unix.connect.v1:/run/gated.sock");
  g_assert_false (sbx_profile_get_unix_sockets (changed));
}

static void
gate_command (SbxProfileConfig *config,
              const Tree       *t)
{
  sbx_profile_config_set_command (config, SBX_ACCESS_GATED);
}

/* a refused command start opens "command": "allow" and says the command
 * never ran; an overflowed list says the change is incomplete */
static void
test_command_and_overflow (void)
{
  g_auto(Tree) t = { 0 };
  g_autoptr(SbxProfile) base = NULL;
  g_autoptr(SbxLearn) learn = NULL;
  g_autoptr(SbxProfile) changed = NULL;

  tree_init (&t);
  base = base_profile (&t, gate_command);
  learn = sbx_learn_new (base);
  add (learn, SBX_DENIAL_OPERATION_COMMAND_START, "make", "command.start.v1", "make", "command execution is gated");
  sbx_learn_set_dropped (learn, 7);
  changed = compute (learn);
  g_assert_cmpint (sbx_profile_get_command (changed), ==, SBX_ACCESS_ALLOW);
  g_assert_true (notes_have (learn, "the command did not start"));
  g_assert_true (notes_have (learn, "--approve command.start.v1"));
  g_assert_true (notes_have (learn, "7 more refusals did not fit the run's list of denials: the change is incomplete"));
}

/* the output: a unified diff of the normalized JSON, then the approvals
 * and notes as comments; nothing learned says so */
static void
test_format (void)
{
  g_auto(Tree) t = { 0 };
  g_autoptr(SbxProfile) base = NULL;
  g_autoptr(SbxLearn) learn = NULL;
  g_autoptr(SbxProfile) changed = NULL;
  g_autofree char *text = NULL, *f = NULL, *root_line = NULL;

  tree_init (&t);
  base = base_profile (&t, NULL);
  f = hp (&t, "a/f");
  learn = sbx_learn_new (base);
  add (learn, SBX_DENIAL_OPERATION_READ, f, NULL, NULL, NULL);
  add (learn, SBX_DENIAL_OPERATION_CONNECT, "example.com:443", "network.proxy-target.v1", "tcp:example.com:443",
       "network is gated");
  sbx_learn_set_outcome (learn, "the command exited with status 3");
  changed = compute (learn);
  text = sbx_learn_format (learn, "base.json");
  g_test_message ("%s", text);
  g_assert_true (g_str_has_prefix (text, "--- base.json\n+++ base.json (learned)\n@@ -"));
  g_assert_nonnull (strstr (text, "\n-  \"network\" : \"deny\",\n+  \"network\" : \"gated\",\n"));
  root_line = g_strdup_printf ("\n+      \"path\" : \"%s/a\",\n", t.host);
  g_assert_nonnull (strstr (text, root_line));
  g_assert_nonnull (strstr (text, "\n#   --allow-host example.com:443   (the grant "
                                  "network.proxy-target.v1:tcp:example.com:443)\n"));
  g_assert_true (g_str_has_suffix (text, "\n# the command exited with status 3\n"));
  g_clear_pointer (&text, g_free);
  g_clear_pointer (&changed, sbx_profile_unref);
  g_clear_pointer (&learn, sbx_learn_free);

  learn = sbx_learn_new (base);
  changed = compute (learn);
  g_assert_true (sbx_profile_equal (base, changed));
  text = sbx_learn_format (learn, "base.json");
  g_assert_cmpstr (text, ==, "# no profile change: nothing refused could be opened by one\n");
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/profile-learn/fs/read-file", test_read_file);
  g_test_add_func ("/profile-learn/fs/list-exec-merge", test_list_exec_merge);
  g_test_add_func ("/profile-learn/fs/write", test_write);
  g_test_add_func ("/profile-learn/fs/written-and-unexpressible", test_written_and_unexpressible);
  g_test_add_func ("/profile-learn/network", test_network);
  g_test_add_func ("/profile-learn/unix-connect", test_unix_connect);
  g_test_add_func ("/profile-learn/command-and-overflow", test_command_and_overflow);
  g_test_add_func ("/profile-learn/format", test_format);
  return g_test_run ();
}
