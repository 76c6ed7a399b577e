/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SbxDenial and the per-run SbxDenialLog, white-box: the record's line,
 * merging and the bound, a flood from many threads, and how an egress
 * plugin's report becomes a denial (untrusted text, which refusals name a
 * grant).  End to end: tests/test-denials.c.
 */
#include <sbx/sbx.h>

#include <string.h>
#include <unistd.h>

#include "executor-test-util.h"
#include "sbx-denial-private.h"
#include "sbx-executor-egress-private.h"
#include "sbx-backend-denials-private.h"

static void
test_to_string (void)
{
  g_autoptr(SbxDenial) gated = sbx_denial_new (SBX_DENIAL_OPERATION_CONNECT, "example.com:443", "egress-proxy",
                                               "network.proxy-target.v1", "tcp:example.com:443",
                                               "network is gated");
  g_autoptr(SbxDenial) denied = sbx_denial_new (SBX_DENIAL_OPERATION_CONNECT, "example.com:443", "egress-proxy",
                                                NULL, NULL, "the profile denies network");
  g_autofree char *a = sbx_denial_to_string (gated);
  g_autofree char *b = sbx_denial_to_string (denied);

  g_assert_cmpstr (a, ==, "denied connect example.com:443 (network is gated); --approve "
                          "network.proxy-target.v1:tcp:example.com:443 would open it");
  g_assert_cmpstr (b, ==, "denied connect example.com:443 (the profile denies network)");
  g_assert_cmpuint (sbx_denial_get_count (gated), ==, 1);
  g_assert_cmpint (sbx_denial_get_pid (gated), ==, 0);
  g_assert_null (sbx_denial_get_process_name (gated));
  g_assert_null (sbx_denial_get_argv (gated));
  g_assert_cmpstr (sbx_denial_operation_to_string (SBX_DENIAL_OPERATION_UNIX_CONNECT), ==, "unix-connect");
  g_assert_cmpstr (sbx_denial_operation_to_string (SBX_DENIAL_OPERATION_COMMAND_START), ==, "command-start");
  g_assert_cmpstr (sbx_denial_operation_to_string ((SbxDenialOperation) 99), ==, "unknown");
  g_assert_true (G_TYPE_IS_BOXED (SBX_TYPE_DENIAL));
  g_assert_true (G_TYPE_IS_ENUM (SBX_TYPE_DENIAL_OPERATION));
}

static void
add (SbxDenialLog      *log,
     SbxDenialOperation op,
     const char        *target)
{
  g_autoptr(SbxDenial) d = sbx_denial_new (op, target, "egress-proxy", NULL, NULL, "r");

  sbx_denial_log_add (log, d);
}

static void
count_notify (SbxDenial *denial,
              gpointer   data)
{
  g_assert_cmpuint (sbx_denial_get_count (denial), ==, 1);
  g_atomic_int_inc ((gint *) data);
}

static void
test_log_merges_and_bounds (void)
{
  g_autoptr(SbxDenialLog) log = sbx_denial_log_new ();
  g_autoptr(GPtrArray) snapshot = NULL;
  gint notified = 0;

  sbx_denial_log_set_notify (log, count_notify, &notified);
  add (log, SBX_DENIAL_OPERATION_CONNECT, "a:1");
  add (log, SBX_DENIAL_OPERATION_CONNECT, "a:1");
  add (log, SBX_DENIAL_OPERATION_RESOLVE, "a:1");   /* another operation: another entry */
  add (log, SBX_DENIAL_OPERATION_CONNECT, "b:2");
  snapshot = sbx_denial_log_snapshot (log);
  g_assert_cmpuint (snapshot->len, ==, 3);
  g_assert_cmpstr (sbx_denial_get_target (snapshot->pdata[0]), ==, "a:1");   /* order first seen */
  g_assert_cmpuint (sbx_denial_get_count (snapshot->pdata[0]), ==, 2);
  g_assert_cmpuint (sbx_denial_get_count (snapshot->pdata[1]), ==, 1);
  g_assert_cmpint (g_atomic_int_get (&notified), ==, 3);   /* once per distinct denial */
  g_clear_pointer (&snapshot, g_ptr_array_unref);

  for (guint i = 0; i < 1000; i++)
    {
      g_autofree char *target = g_strdup_printf ("host%u:1", i);

      add (log, SBX_DENIAL_OPERATION_CONNECT, target);
    }
  add (log, SBX_DENIAL_OPERATION_CONNECT, "a:1");   /* a kept entry still merges */
  snapshot = sbx_denial_log_snapshot (log);
  g_assert_cmpuint (snapshot->len, ==, SBX_DENIAL_LOG_MAX_ENTRIES);
  g_assert_cmpuint (sbx_denial_get_count (snapshot->pdata[0]), ==, 3);
  g_assert_cmpuint (sbx_denial_log_get_dropped (log), ==, 1000 - (SBX_DENIAL_LOG_MAX_ENTRIES - 3));
  g_assert_cmpint (g_atomic_int_get (&notified), ==, SBX_DENIAL_LOG_MAX_ENTRIES);
}

static gpointer
flood_thread (gpointer data)
{
  for (guint i = 0; i < 20000; i++)
    {
      g_autofree char *target = g_strdup_printf ("t%u:%u", i % 512, i);

      add (data, SBX_DENIAL_OPERATION_CONNECT, i % 2 == 0 ? "same:1" : target);
    }
  return NULL;
}

/* Four threads at once (the egress plugin's threads): nothing lost,
 * nothing past the bound. */
static void
test_log_threads (void)
{
  g_autoptr(SbxDenialLog) log = sbx_denial_log_new ();
  g_autoptr(GPtrArray) snapshot = NULL;
  GThread *threads[4];
  guint64 total;

  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    threads[i] = g_thread_new ("flood", flood_thread, log);
  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    g_thread_join (threads[i]);
  snapshot = sbx_denial_log_snapshot (log);
  g_assert_cmpuint (snapshot->len, ==, SBX_DENIAL_LOG_MAX_ENTRIES);
  total = sbx_denial_log_get_dropped (log);
  for (guint i = 0; i < snapshot->len; i++)
    total += sbx_denial_get_count (snapshot->pdata[i]);
  g_assert_cmpuint (total, ==, 4 * 20000);
}

static SbxDenial *
from_plugin (guint32     operation,
             guint32     flags,
             const char *target,
             const char *mechanism,
             const char *reason,
             SbxAccess   network)
{
  SbxEgressDenialV1 d = { 0 };

  d.struct_size = sizeof d;
  d.operation = operation;
  d.flags = flags;
  d.target = target;
  d.mechanism = mechanism;
  d.reason = reason;
  return sbx_egress_denial_new (&d, network);
}

static void
test_from_plugin (void)
{
  g_autoptr(SbxDenial) gated = from_plugin (SBX_ABI_DENIAL_CONNECT, SBX_ABI_DENIAL_APPROVABLE,
                                            "tcp:example.com:443", "forwarder", "not approved",
                                            SBX_ACCESS_GATED);
  g_autoptr(SbxDenial) metadata = from_plugin (SBX_ABI_DENIAL_CONNECT, 0, "tcp:169.254.169.254:80",
                                               "egress-proxy", "a metadata address", SBX_ACCESS_ALLOW);
  g_autoptr(SbxDenial) odd = from_plugin (SBX_ABI_DENIAL_CONNECT, SBX_ABI_DENIAL_APPROVABLE,
                                          "tcp:EXAMPLE.com:0443", "made-up\x1b[31m", "x\ny", SBX_ACCESS_GATED);
  g_autoptr(SbxDenial) name = from_plugin (SBX_ABI_DENIAL_RESOLVE, SBX_ABI_DENIAL_APPROVABLE, "example.com",
                                           "dns-stub", "refused", SBX_ACCESS_GATED);
  g_autoptr(SbxDenial) deny = from_plugin (SBX_ABI_DENIAL_CONNECT, SBX_ABI_DENIAL_APPROVABLE,
                                           "tcp:example.com:443", "egress-proxy", NULL, SBX_ACCESS_DENY);

  g_assert_cmpstr (sbx_denial_get_target (gated), ==, "example.com:443");
  g_assert_cmpstr (sbx_denial_get_mechanism (gated), ==, "forwarder");
  g_assert_cmpstr (sbx_denial_get_grant_class (gated), ==, "network.proxy-target.v1");
  g_assert_cmpstr (sbx_denial_get_grant_target (gated), ==, "tcp:example.com:443");
  g_assert_cmpstr (sbx_denial_get_reason (gated), ==, "network is gated");
  /* an address rule: no approval opens it, the rule is the reason */
  g_assert_null (sbx_denial_get_grant_class (metadata));
  g_assert_cmpstr (sbx_denial_get_reason (metadata), ==, "a metadata address");
  /* a target that is not canonical names no grant; an unknown mechanism is
   * not repeated; control characters never reach a terminal */
  g_assert_null (sbx_denial_get_grant_class (odd));
  g_assert_cmpstr (sbx_denial_get_mechanism (odd), ==, "egress-proxy");
  g_assert_cmpstr (sbx_denial_get_reason (odd), ==, "x y");
  /* a name: no grant names a name alone */
  g_assert_cmpint (sbx_denial_get_operation (name), ==, SBX_DENIAL_OPERATION_RESOLVE);
  g_assert_null (sbx_denial_get_grant_class (name));
  /* a profile that denies network: no grant */
  g_assert_null (sbx_denial_get_grant_class (deny));
  g_assert_cmpstr (sbx_denial_get_reason (deny), ==, "the profile denies network");
  /* an operation newer than this host, or a short table: dropped */
  g_assert_null (from_plugin (99, 0, "tcp:example.com:443", "egress-proxy", NULL, SBX_ACCESS_GATED));
  {
    SbxEgressDenialV1 d = { .struct_size = 8, .operation = SBX_ABI_DENIAL_CONNECT };

    g_assert_null (sbx_egress_denial_new (&d, SBX_ACCESS_GATED));
  }
}

/* A backend's unix-connect refusal: the grant comes from the profile. */
static void
test_from_backend (void)
{
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(GError) error = NULL;
  SbxBackendDenialV1 d = { sizeof d, SBX_ABI_DENIAL_UNIX_CONNECT, 7, "/run/gated.sock", "connect-supervisor",
                           "python3", NULL };

  sbx_profile_config_set_workspace (config, g_get_tmp_dir (), SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_add_gated_host_socket (config, "/run/gated.sock");
  profile = sbx_profile_new (config, &error);
  g_assert_no_error (error);
  {
    g_autoptr(SbxDenial) gated = sbx_backend_denial_new (&d, profile);

    g_assert_cmpint (sbx_denial_get_operation (gated), ==, SBX_DENIAL_OPERATION_UNIX_CONNECT);
    g_assert_cmpstr (sbx_denial_get_grant_class (gated), ==, "unix.connect.v1");
    g_assert_cmpstr (sbx_denial_get_grant_target (gated), ==, "/run/gated.sock");
    g_assert_cmpint (sbx_denial_get_pid (gated), ==, 7);
    g_assert_cmpstr (sbx_denial_get_process_name (gated), ==, "python3");
    g_assert_cmpstr (sbx_denial_get_mechanism (gated), ==, "connect-supervisor");
  }
  {
    g_autoptr(SbxDenial) other = NULL;

    d.target = "/run/other.sock";
    d.mechanism = "made-up";
    d.process = "evil\x1b[2J";
    other = sbx_backend_denial_new (&d, profile);
    g_assert_null (sbx_denial_get_grant_class (other));
    g_assert_cmpstr (sbx_denial_get_reason (other), ==, "the profile does not name this host socket");
    g_assert_cmpstr (sbx_denial_get_mechanism (other), ==, "backend");
    g_assert_null (strchr (sbx_denial_get_process_name (other), '\x1b'));
  }
  {
    g_autoptr(SbxDenial) abstract = NULL;

    d.target = "@/tmp/.X11-unix/X0";
    abstract = sbx_backend_denial_new (&d, profile);
    g_assert_null (sbx_denial_get_grant_class (abstract));
    g_assert_nonnull (strstr (sbx_denial_get_reason (abstract), "abstract"));
  }
  /* an operation this host does not know, no target, a short table: dropped */
  d.operation = 99;
  g_assert_null (sbx_backend_denial_new (&d, profile));
  d.operation = SBX_ABI_DENIAL_UNIX_CONNECT;
  d.target = NULL;
  g_assert_null (sbx_backend_denial_new (&d, profile));
  d.target = "/run/gated.sock";
  d.struct_size = 8;
  g_assert_null (sbx_backend_denial_new (&d, profile));
}

/* A backend's filesystem refusal: the dimension covering the path decides
 * (tests/linux/test-linux-grants.c proves each grant opens exactly that
 * access through the executor). */
typedef struct
{
  char       *tmp;
  SbxProfile *profile;
} FsFixture;

static void
fs_fixture_setup (FsFixture *fx)
{
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *ws = NULL;
  g_autofree char *gated = NULL;
  g_autofree char *ro = NULL;
  g_autofree char *hidden = NULL;
  g_autofree char *file = NULL;
  g_autofree char *h1 = NULL;
  g_autofree char *h2 = NULL;
  g_autofree char *symlink_path = NULL;

  fx->tmp = etu_make_tmpdir ("sbx-test-fs-denial-XXXXXX");
  ws = etu_mkdir (fx->tmp, "ws");
  gated = etu_mkdir (fx->tmp, "gated");
  g_free (etu_mkdir (fx->tmp, "gated/sub"));
  g_free (etu_write_file (fx->tmp, "gated/file", "g"));
  ro = etu_mkdir (fx->tmp, "ro");
  hidden = etu_mkdir (fx->tmp, "hidden");
  g_free (etu_write_file (fx->tmp, "hidden/f", "h"));
  g_free (etu_mkdir (fx->tmp, "host"));
  file = etu_write_file (fx->tmp, "host/file", "x");
  h1 = etu_write_file (fx->tmp, "host/h1", "x");
  h2 = g_build_filename (fx->tmp, "host", "h2", NULL);
  g_assert_no_errno (link (h1, h2));
  symlink_path = g_build_filename (fx->tmp, "host", "link", NULL);
  g_assert_no_errno (symlink (file, symlink_path));
  sbx_profile_config_set_workspace (config, ws, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_host (config, SBX_ACCESS_GATED, SBX_ACCESS_DENY);
  sbx_profile_config_add_root (config, gated, SBX_ACCESS_GATED, SBX_ACCESS_GATED);
  sbx_profile_config_add_root (config, ro, SBX_ACCESS_ALLOW, SBX_ACCESS_DENY);
  sbx_profile_config_add_root (config, hidden, SBX_ACCESS_DENY, SBX_ACCESS_DENY);
  fx->profile = sbx_profile_new (config, &error);
  g_assert_no_error (error);
}

static void
fs_fixture_teardown (FsFixture *fx)
{
  etu_rm_rf (fx->tmp);
  g_free (fx->tmp);
  sbx_profile_unref (fx->profile);
}

/* The denial of @operation on tmp/@relative (or on @relative itself when it
 * starts with '/') as the view supervisor reports it. */
static SbxDenial *
fs_denial (FsFixture  *fx,
           guint32     operation,
           const char *relative,
           const char *mechanism,
           const char *reason)
{
  g_autofree char *target = relative[0] == '/' ? g_strdup (relative) : g_build_filename (fx->tmp, relative, NULL);
  SbxBackendDenialV1 d = { sizeof d, operation, 42, target, mechanism, "cat", reason };

  return sbx_backend_denial_new (&d, fx->profile);
}

static void
assert_fs_grant (SbxDenial  *d,
                 const char *grant_class,
                 const char *grant_target,
                 const char *reason_part)
{
  g_assert_nonnull (d);
  g_assert_cmpstr (sbx_denial_get_grant_class (d), ==, grant_class);
  g_assert_cmpstr (sbx_denial_get_grant_target (d), ==, grant_target);
  if (reason_part != NULL && strstr (sbx_denial_get_reason (d), reason_part) == NULL)
    g_error ("reason \"%s\" does not contain \"%s\"", sbx_denial_get_reason (d), reason_part);
}

static void
test_fs_from_backend (void)
{
  FsFixture fx;
  g_autofree char *file = NULL;
  g_autofree char *gated = NULL;
  g_autofree char *gated_file = NULL;
  g_autofree char *ro = NULL;
  g_autofree char *hidden = NULL;
  g_autofree char *ws = NULL;

  fs_fixture_setup (&fx);
  file = g_build_filename (fx.tmp, "host", "file", NULL);
  gated = g_build_filename (fx.tmp, "gated", NULL);
  gated_file = g_build_filename (fx.tmp, "gated", "file", NULL);
  ro = g_build_filename (fx.tmp, "ro", NULL);
  hidden = g_build_filename (fx.tmp, "hidden", NULL);
  ws = g_build_filename (fx.tmp, "ws", NULL);
  {
    /* gated host read of a file: exactly that file; the line of the issue */
    g_autoptr(SbxDenial) d = fs_denial (&fx, SBX_ABI_DENIAL_READ, "host/file", "view-supervisor", NULL);
    g_autofree char *line = sbx_denial_to_string (d);
    g_autofree char *expected = g_strdup_printf ("denied read %s (host read is gated); --approve "
                                                 "filesystem.path.read.v1:%s would open it", file, file);

    assert_fs_grant (d, "filesystem.path.read.v1", file, NULL);
    g_assert_cmpstr (sbx_denial_get_reason (d), ==, "host read is gated");
    g_assert_cmpstr (line, ==, expected);
    g_assert_cmpint (sbx_denial_get_operation (d), ==, SBX_DENIAL_OPERATION_READ);
    g_assert_cmpstr (sbx_denial_get_mechanism (d), ==, "view-supervisor");
    g_assert_cmpint (sbx_denial_get_pid (d), ==, 42);
    g_assert_cmpstr (sbx_denial_get_process_name (d), ==, "cat");
  }
  {
    /* an exec: the read grant opens read and exec */
    g_autoptr(SbxDenial) d = fs_denial (&fx, SBX_ABI_DENIAL_EXEC, "host/file", "landlock-audit", NULL);

    assert_fs_grant (d, "filesystem.path.read.v1", file, "host read is gated");
    g_assert_cmpint (sbx_denial_get_operation (d), ==, SBX_DENIAL_OPERATION_EXEC);
    g_assert_cmpstr (sbx_denial_get_mechanism (d), ==, "landlock-audit");
  }
  {
    /* a symlink: the denial names what the program named, the grant its
     * canonical target (what issue_grant binds); an unclean spelling is
     * cleaned */
    g_autoptr(SbxDenial) d = fs_denial (&fx, SBX_ABI_DENIAL_READ, "host/link", "view-supervisor", NULL);
    g_autofree char *unclean = g_strdup_printf ("%s/host/../host//file", fx.tmp);
    g_autoptr(SbxDenial) u = fs_denial (&fx, SBX_ABI_DENIAL_READ, unclean, "view-supervisor", NULL);
    g_autofree char *symlink_path = g_build_filename (fx.tmp, "host", "link", NULL);

    g_assert_cmpstr (sbx_denial_get_target (d), ==, symlink_path);
    assert_fs_grant (d, "filesystem.path.read.v1", file, NULL);
    g_assert_cmpstr (sbx_denial_get_target (u), ==, file);
  }
  {
    /* listing a directory outside the roots: no exact grant takes a
     * directory and no tree grant a non-root, so the host grant, said */
    g_autoptr(SbxDenial) d = fs_denial (&fx, SBX_ABI_DENIAL_LIST, "host", "view-supervisor", NULL);

    assert_fs_grant (d, "filesystem.host.read.v1", "host:*", "host read is gated; no narrower grant opens "
                                                             "a directory outside the roots");
  }
  {
    /* a file with several links: no exact grant either */
    g_autoptr(SbxDenial) d = fs_denial (&fx, SBX_ABI_DENIAL_READ, "host/h1", "view-supervisor", NULL);

    assert_fs_grant (d, "filesystem.host.read.v1", "host:*", "a file with several links");
  }
  {
    /* reading a path that does not exist: nothing to open */
    g_autoptr(SbxDenial) d = fs_denial (&fx, SBX_ABI_DENIAL_READ, "host/missing", "view-supervisor", NULL);

    assert_fs_grant (d, NULL, NULL, "host read is gated; the path does not exist on the host");
  }
  {
    /* a denied dimension: no grant, the reason names it */
    g_autoptr(SbxDenial) d = fs_denial (&fx, SBX_ABI_DENIAL_WRITE, "host/file", "view-supervisor", NULL);
    g_autoptr(SbxDenial) r = fs_denial (&fx, SBX_ABI_DENIAL_WRITE, "ro/x", "view-supervisor", NULL);
    g_autoptr(SbxDenial) h = fs_denial (&fx, SBX_ABI_DENIAL_READ, "hidden/f", "view-supervisor", NULL);
    g_autofree char *line = sbx_denial_to_string (d);
    g_autofree char *expected = g_strdup_printf ("denied write %s (the profile denies host write)", file);
    g_autofree char *ro_reason = g_strdup_printf ("the root %s denies write", ro);
    g_autofree char *hidden_reason = g_strdup_printf ("the root %s denies read", hidden);

    assert_fs_grant (d, NULL, NULL, NULL);
    g_assert_cmpstr (line, ==, expected);
    assert_fs_grant (r, NULL, NULL, NULL);
    g_assert_cmpstr (sbx_denial_get_reason (r), ==, ro_reason);
    assert_fs_grant (h, NULL, NULL, NULL);
    g_assert_cmpstr (sbx_denial_get_reason (h), ==, hidden_reason);
  }
  {
    /* a gated root: writing an existing file is the exact write grant;
     * creating a file, the tree grant of the root (said); listing a
     * directory in it, the tree read grant */
    g_autoptr(SbxDenial) w = fs_denial (&fx, SBX_ABI_DENIAL_WRITE, "gated/file", "view-supervisor", NULL);
    g_autoptr(SbxDenial) c = fs_denial (&fx, SBX_ABI_DENIAL_WRITE, "gated/sub/new", "view-supervisor", NULL);
    g_autoptr(SbxDenial) l = fs_denial (&fx, SBX_ABI_DENIAL_LIST, "gated/sub", "view-supervisor", NULL);
    g_autofree char *gated_reason = g_strdup_printf ("write of the root %s is gated", gated);

    assert_fs_grant (w, "filesystem.path.write.v1", gated_file, NULL);
    g_assert_cmpstr (sbx_denial_get_reason (w), ==, gated_reason);
    assert_fs_grant (c, "filesystem.tree.write.v1", gated, gated_reason);
    assert_fs_grant (c, "filesystem.tree.write.v1", gated, "no narrower grant opens a new file there: the tree "
                                                           "grant opens the whole root");
    assert_fs_grant (l, "filesystem.tree.read.v1", gated, "read of the root");
  }
  {
    /* the profile allows it: the backend refused for its own reasons */
    g_autoptr(SbxDenial) a = fs_denial (&fx, SBX_ABI_DENIAL_READ, "ws/f", "view-supervisor", NULL);
    g_autoptr(SbxDenial) b = fs_denial (&fx, SBX_ABI_DENIAL_WRITE, "ws/f", "view-supervisor", "read-only\nmount");

    assert_fs_grant (a, NULL, NULL, NULL);
    g_assert_cmpstr (sbx_denial_get_reason (a), ==, "refused by the backend");
    g_assert_cmpstr (sbx_denial_get_reason (b), ==, "read-only?mount");   /* never a control character */
  }
  {
    /* a path altered to be printable names no grant (it would name another
     * path); an unknown mechanism is not repeated */
    g_autofree char *odd = g_strdup_printf ("%s/host/fi\x1ble", fx.tmp);
    g_autoptr(SbxDenial) d = fs_denial (&fx, SBX_ABI_DENIAL_READ, odd, "made-up", NULL);

    assert_fs_grant (d, NULL, NULL, "host read is gated; the path is not printable text");
    g_assert_null (strchr (sbx_denial_get_target (d), '\x1b'));
    g_assert_cmpstr (sbx_denial_get_mechanism (d), ==, "backend");
  }
  /* a relative or empty path, or an operation this host does not know: dropped */
  {
    SbxBackendDenialV1 d = { sizeof d, SBX_ABI_DENIAL_READ, 1, "etc/passwd", "view-supervisor", NULL, NULL };

    g_assert_null (sbx_backend_denial_new (&d, fx.profile));
    d.target = "";
    g_assert_null (sbx_backend_denial_new (&d, fx.profile));
    d.target = "/etc/passwd";
    d.operation = 5;   /* resolve: an egress plugin's, never a backend's */
    g_assert_null (sbx_backend_denial_new (&d, fx.profile));
  }
  (void) ws;
  fs_fixture_teardown (&fx);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/denial/from-backend", test_from_backend);
  g_test_add_func ("/denial/from-backend/filesystem", test_fs_from_backend);
  g_test_add_func ("/denial/to-string", test_to_string);
  g_test_add_func ("/denial/log/merges-and-bounds", test_log_merges_and_bounds);
  g_test_add_func ("/denial/log/threads", test_log_threads);
  g_test_add_func ("/denial/from-plugin", test_from_plugin);
  return g_test_run ();
}
