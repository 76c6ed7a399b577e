/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * unix.connect.v1 on the real Linux backend, both rungs, through the
 * library and the plugin as built: a host daemon's socket the profile
 * gates is refused without a grant, reachable with one for that one spawn
 * (a second spawn with the same token is refused with REPLAY), and the
 * grant never opens a sibling socket in the same directory.  The same probe
 * reaches both sockets outside the sandbox (the positive control).  The
 * spawn claims no read, write or network boundary, and says which grant
 * removed them; the executor keeps its own.  Issuing follows the profile:
 * a socket it does not name is DENIED, one it allows is UNSUPPORTED.
 *
 * Denials: every refusal of the connect supervisor is one
 * SbxDenial per socket on the run result, its repeats merged, naming the
 * process, the mechanism and the grant that would open it (unix.connect.v1
 * for the gated socket) or why none can (the sibling: the profile does not
 * name it); `sbx run` prints each once, with the --approve that opens it,
 * and the approved run has no denial of that socket.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <gio/gio.h>

#include "executor-test-util.h"

static const char *const rungs[] = { "linux-userns", "linux-landlock" };

/* Connects to each path given and prints "PATH OK" or "PATH ERR errno". */
static const char probe[] =
  "import socket, sys\n"
  "for p in sys.argv[1:]:\n"
  "    s = socket.socket(socket.AF_UNIX)\n"
  "    try:\n"
  "        s.connect(p)\n"
  "        print(p, 'OK')\n"
  "    except OSError as e:\n"
  "        print(p, 'ERR', e.errno)\n"
  "print('END')\n";

typedef struct
{
  EtuTree         tree;
  char           *host_dir;   /* outside every root */
  char           *gated;      /* a listening socket the profile gates */
  char           *sibling;    /* one beside it the profile does not name */
  char           *allowed;    /* one it names (allowed) */
  GSocket        *listeners[3];
  SbxExecutorSet *set;
  SbxExecutor    *executor;
} Fx;

static GSocket *
listen_at (const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocket) sock = g_socket_new (G_SOCKET_FAMILY_UNIX, G_SOCKET_TYPE_STREAM, 0, &error);
  g_autoptr(GSocketAddress) addr = g_unix_socket_address_new (path);

  g_assert_no_error (error);
  g_assert_true (g_socket_bind (sock, addr, FALSE, &error));
  g_assert_no_error (error);
  g_socket_set_listen_backlog (sock, 16);   /* connects complete without an accept */
  g_assert_true (g_socket_listen (sock, &error));
  g_assert_no_error (error);
  return g_steal_pointer (&sock);
}

static gboolean
fx_init (Fx         *fx,
         const char *backend)
{
  const char *dirs[] = { g_getenv ("SBX_TEST_LINUX_PLUGIN_DIR"), NULL };
  g_autoptr(SbxRegistry) registry = NULL;
  g_autoptr(SbxProfileConfig) config = sbx_profile_config_new ();
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxExecutorSetOptions) options = NULL;
  g_autoptr(GError) error = NULL;

  memset (fx, 0, sizeof *fx);
  etu_tree_init (&fx->tree);
  fx->host_dir = g_strdup ("/var/tmp/sbx-test-unix-grant-XXXXXX");
  g_assert_nonnull (g_mkdtemp (fx->host_dir));
  g_assert_cmpint (g_chmod (fx->host_dir, 0755), ==, 0);
  fx->gated = g_build_filename (fx->host_dir, "gated.sock", NULL);
  fx->sibling = g_build_filename (fx->host_dir, "sibling.sock", NULL);
  fx->allowed = g_build_filename (fx->host_dir, "allowed.sock", NULL);
  fx->listeners[0] = listen_at (fx->gated);
  fx->listeners[1] = listen_at (fx->sibling);
  fx->listeners[2] = listen_at (fx->allowed);

  registry = sbx_registry_new_for_directories (dirs, &error);
  g_assert_no_error (error);
  sbx_profile_config_set_workspace (config, fx->tree.ws, SBX_ACCESS_ALLOW, SBX_ACCESS_ALLOW);
  sbx_profile_config_set_command (config, SBX_ACCESS_ALLOW);
  sbx_profile_config_add_gated_host_socket (config, fx->gated);
  sbx_profile_config_add_host_socket (config, fx->allowed);
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

static void
fx_clear (Fx *fx)
{
  if (fx->set != NULL)
    g_assert_true (sbx_executor_set_close (fx->set, NULL, NULL));
  g_clear_object (&fx->executor);
  g_clear_object (&fx->set);
  for (guint i = 0; i < G_N_ELEMENTS (fx->listeners); i++)
    g_clear_object (&fx->listeners[i]);
  if (fx->host_dir != NULL)
    etu_rm_rf (fx->host_dir);
  g_free (fx->host_dir);
  g_free (fx->gated);
  g_free (fx->sibling);
  g_free (fx->allowed);
  etu_tree_clear (&fx->tree);
}

static char *
line_for (const char *path,
          const char *what)
{
  return g_strdup_printf ("%s %s\n", path, what);
}

/* Runs the probe on the three sockets; with @token (nullable) spent.
 * Returns the output; the result in *out_result. */
static char *
run_probe (Fx            *fx,
           const char    *token,
           SbxRunResult **out_result)
{
  const char *argv[] = { "/usr/bin/python3", "-c", probe, fx->gated, fx->sibling, fx->allowed, NULL };
  const char *tokens[] = { token, NULL };
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  GBytes *bytes;
  gsize len;
  const char *data;

  result = etu_run_with_grants (fx->executor, fx->tree.ws, argv, "exec", token != NULL ? tokens : NULL, NULL,
                                NULL, &error);
  g_assert_no_error (error);
  bytes = sbx_run_result_get_output (result);
  data = g_bytes_get_data (bytes, &len);
  if (out_result != NULL)
    *out_result = g_steal_pointer (&result);
  return g_strndup (data, len);
}

static char *
issue (Fx          *fx,
       const char  *target,
       GError     **error)
{
  const char *argv[] = { "/usr/bin/python3", "-c", probe, fx->gated, fx->sibling, fx->allowed, NULL };
  g_autofree char *command = sbx_grant_command_for_argv (argv);

  return sbx_executor_issue_grant (fx->executor, "exec", command, fx->tree.ws, SBX_GRANT_CLASS_UNIX_CONNECT,
                                   target, NULL, error);
}

static void
test_connect_grant (gconstpointer data)
{
  Fx fx;
  g_autofree char *control = NULL;
  g_autofree char *out = NULL;
  g_autofree char *token = NULL;
  g_autofree char *gated_ok = NULL;
  g_autofree char *sibling_ok = NULL;
  g_autofree char *allowed_ok = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(GError) error = NULL;
  const char *const *spent;
  int status = 0;

  if (!fx_init (&fx, data))
    {
      fx_clear (&fx);
      return;
    }
  gated_ok = line_for (fx.gated, "OK");
  sibling_ok = line_for (fx.sibling, "OK");
  allowed_ok = line_for (fx.allowed, "OK");

  /* Positive control: outside, the probe reaches all three. */
  {
    const char *argv[] = { "/usr/bin/python3", "-c", probe, fx.gated, fx.sibling, fx.allowed, NULL };

    g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &control, NULL,
                                 &status, &error));
    g_assert_no_error (error);
    g_assert_nonnull (strstr (control, gated_ok));
    g_assert_nonnull (strstr (control, sibling_ok));
    g_assert_nonnull (strstr (control, allowed_ok));
  }

  /* No grant: only the allowed socket. */
  out = run_probe (&fx, NULL, NULL);
  g_test_message ("%s, no grant: %s", (const char *) data, out);
  g_assert_nonnull (strstr (out, "END"));
  g_assert_null (strstr (out, gated_ok));
  g_assert_null (strstr (out, sibling_ok));
  g_assert_nonnull (strstr (out, allowed_ok));
  g_clear_pointer (&out, g_free);

  /* The grant: exactly the gated socket joins, for this spawn. */
  token = issue (&fx, fx.gated, &error);
  g_assert_no_error (error);
  out = run_probe (&fx, token, &result);
  g_test_message ("%s, granted: %s", (const char *) data, out);
  g_assert_nonnull (strstr (out, gated_ok));
  g_assert_null (strstr (out, sibling_ok));
  g_assert_nonnull (strstr (out, allowed_ok));
  spent = sbx_run_result_get_grants_spent (result);
  g_assert_nonnull (spent);
  g_assert_cmpuint (g_strv_length ((char **) spent), ==, 1);
  g_assert_true (g_str_has_prefix (spent[0], SBX_GRANT_CLASS_UNIX_CONNECT " "));
  g_assert_nonnull (strstr (spent[0], "removed for this spawn"));
  /* The spawn has no read, write or network boundary; the executor does. */
  g_assert_false (sbx_run_result_get_spawn_guarantees (result)
                  & (SBX_GUARANTEE_READ_BOUNDARY | SBX_GUARANTEE_WRITE_BOUNDARY | SBX_GUARANTEE_NETWORK_BOUNDARY));
  g_assert_true (sbx_executor_get_guarantees (fx.executor) & SBX_GUARANTEE_WRITE_BOUNDARY);
  g_clear_pointer (&out, g_free);

  /* Single use. */
  {
    const char *argv[] = { "/usr/bin/python3", "-c", probe, fx.gated, NULL };
    const char *tokens[] = { token, NULL };
    g_autoptr(SbxRunResult) again = NULL;
    g_autoptr(GError) replay = NULL;
    g_autofree char *command = sbx_grant_command_for_argv (argv);
    g_autofree char *other = sbx_executor_issue_grant (fx.executor, "exec", command, fx.tree.ws,
                                                       SBX_GRANT_CLASS_UNIX_CONNECT, fx.gated, NULL, &replay);

    g_assert_no_error (replay);
    g_assert_nonnull (other);
    again = etu_run_with_grants (fx.executor, fx.tree.ws,
                                 (const char *const[]) { "/usr/bin/python3", "-c", probe, fx.gated, fx.sibling,
                                                         fx.allowed, NULL },
                                 "exec", tokens, NULL, NULL, &replay);
    g_assert_null (again);
    g_assert_error (replay, SBX_GRANT_ERROR, SBX_GRANT_ERROR_REPLAY);
  }

  /* The executor's own spawns are not widened. */
  out = run_probe (&fx, NULL, NULL);
  g_assert_null (strstr (out, gated_ok));
  fx_clear (&fx);
}

/* Issuing reads the profile: the sibling is not named (DENIED), the
 * allowed socket needs no grant (UNSUPPORTED), a path that cannot be a
 * socket address is MALFORMED. */
static void
test_issue_follows_profile (gconstpointer data)
{
  Fx fx;
  g_autofree char *long_path = NULL;
  char *token;

  if (!fx_init (&fx, data))
    {
      fx_clear (&fx);
      return;
    }
  {
    g_autoptr(GError) error = NULL;

    token = issue (&fx, fx.sibling, &error);
    g_assert_null (token);
    g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_DENIED);
  }
  {
    g_autoptr(GError) error = NULL;

    token = issue (&fx, fx.allowed, &error);
    g_assert_null (token);
    g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_UNSUPPORTED);
  }
  long_path = g_strnfill (120, 'x');
  long_path[0] = '/';
  for (guint i = 0; i < 2; i++)
    {
      g_autoptr(GError) error = NULL;

      token = issue (&fx, i == 0 ? long_path : "relative.sock", &error);
      g_assert_null (token);
      g_assert_error (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_MALFORMED);
    }
  fx_clear (&fx);
}

static SbxDenial *
find_denial (GPtrArray  *denials,
             const char *target)
{
  SbxDenial *found = NULL;

  for (guint i = 0; i < denials->len; i++)
    if (strcmp (sbx_denial_get_target (denials->pdata[i]), target) == 0)
      {
        g_assert_null (found);   /* one entry per socket: repeats merge */
        found = denials->pdata[i];
      }
  return found;
}

static void
test_denials (gconstpointer data)
{
  Fx fx;
  const char *argv[4] = { "/usr/bin/python3", "-c", NULL, NULL };
  g_autofree char *script = NULL;
  g_autofree char *token = NULL;
  g_autoptr(SbxRunResult) result = NULL;
  g_autoptr(SbxRunResult) granted = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *command = NULL;
  const char *tokens[2] = { NULL, NULL };
  GPtrArray *denials;
  SbxDenial *d;

  if (!fx_init (&fx, data))
    {
      fx_clear (&fx);
      return;
    }
  /* Each socket tried twice: the gated one, the sibling, the allowed one. */
  script = g_strdup_printf ("import socket\n"
                            "for p in ['%s', '%s', '%s'] * 2:\n"
                            "    try:\n"
                            "        socket.socket(socket.AF_UNIX).connect(p)\n"
                            "    except OSError:\n"
                            "        pass\n", fx.gated, fx.sibling, fx.allowed);
  argv[2] = script;
  result = sbx_executor_run (fx.executor, fx.tree.ws, argv, NULL, NULL, &error);
  g_assert_no_error (error);
  denials = sbx_run_result_get_denials (result);
  g_assert_cmpuint (sbx_run_result_get_denials_dropped (result), ==, 0);
  d = find_denial (denials, fx.gated);
  g_assert_nonnull (d);
  g_assert_cmpint (sbx_denial_get_operation (d), ==, SBX_DENIAL_OPERATION_UNIX_CONNECT);
  g_assert_cmpuint (sbx_denial_get_count (d), ==, 2);
  g_assert_cmpstr (sbx_denial_get_mechanism (d), ==, "connect-supervisor");
  g_assert_cmpstr (sbx_denial_get_grant_class (d), ==, SBX_GRANT_CLASS_UNIX_CONNECT);
  g_assert_cmpstr (sbx_denial_get_grant_target (d), ==, fx.gated);
  g_assert_cmpint (sbx_denial_get_pid (d), >, 0);
  g_assert_nonnull (strstr (sbx_denial_get_process_name (d), "python3"));
  d = find_denial (denials, fx.sibling);
  g_assert_nonnull (d);
  g_assert_cmpuint (sbx_denial_get_count (d), ==, 2);
  g_assert_null (sbx_denial_get_grant_class (d));
  g_assert_cmpstr (sbx_denial_get_reason (d), ==, "the profile does not name this host socket");
  g_assert_null (find_denial (denials, fx.allowed));
  g_assert_cmpuint (denials->len, ==, 2);

  /* The grant the denial names opens exactly that socket: no denial of it. */
  command = sbx_grant_command_for_argv (argv);
  token = sbx_executor_issue_grant (fx.executor, "exec", command, fx.tree.ws,
                                    sbx_denial_get_grant_class (find_denial (denials, fx.gated)),
                                    sbx_denial_get_grant_target (find_denial (denials, fx.gated)), NULL, &error);
  g_assert_no_error (error);
  tokens[0] = token;
  granted = etu_run_with_grants (fx.executor, fx.tree.ws, argv, "exec", tokens, NULL, NULL, &error);
  g_assert_no_error (error);
  denials = sbx_run_result_get_denials (granted);
  g_assert_null (find_denial (denials, fx.gated));
  g_assert_nonnull (find_denial (denials, fx.sibling));
  fx_clear (&fx);
}

/* `sbx run` prints each denial once, with the --approve that opens it;
 * that --approve then connects. */
static void
test_cli (gconstpointer data)
{
  Fx fx;
  g_autofree char *profile_path = NULL;
  g_autofree char *profile = NULL;
  g_autofree char *expect = NULL;
  g_autofree char *approve = NULL;
  g_autofree char *gated_ok = NULL;

  if (!fx_init (&fx, data))
    {
      fx_clear (&fx);
      return;
    }
  profile = g_strdup_printf ("{ \"version\": 1, \"workspace\": { \"root\": \".\", \"read\": \"allow\", "
                             "\"write\": \"allow\" }, \"command\": \"allow\", \"host-sockets\": [ { \"path\": "
                             "\"%s\", \"access\": \"gated\" } ] }", fx.gated);
  profile_path = etu_write_file (fx.tree.tmp, "profile.json", profile);
  expect = g_strdup_printf ("sbx: denied unix-connect %s (the host socket is gated) [2 times]; --approve "
                            "unix.connect.v1:%s would open it\n", fx.gated, fx.gated);
  approve = g_strdup_printf ("--approve=unix.connect.v1:%s", fx.gated);
  gated_ok = line_for (fx.gated, "OK");
  for (guint pass = 0; pass < 2; pass++)
    {
      g_autoptr(GSubprocessLauncher) l = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE
                                                                    | G_SUBPROCESS_FLAGS_STDERR_PIPE);
      g_autoptr(GSubprocess) proc = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *out = NULL;
      g_autofree char *err = NULL;
      const char *sbx_argv[] = { g_getenv ("SBX_TEST_SBX"), "run", "--profile", profile_path,
                                 pass == 0 ? "--no-pty" : approve, "--no-pty", "--", "/usr/bin/python3", "-c",
                                 probe, fx.gated, fx.gated, NULL };

      g_subprocess_launcher_setenv (l, "SBX_PLUGIN_PATH", g_getenv ("SBX_TEST_LINUX_PLUGIN_DIR"), TRUE);
      g_subprocess_launcher_setenv (l, "SBX_BACKEND", data, TRUE);
      g_subprocess_launcher_setenv (l, "TMPDIR", fx.tree.scratch, TRUE);
      g_subprocess_launcher_set_cwd (l, fx.tree.ws);
      proc = g_subprocess_launcher_spawnv (l, sbx_argv, &error);
      g_assert_no_error (error);
      g_assert_true (g_subprocess_communicate_utf8 (proc, NULL, NULL, &out, &err, &error));
      g_assert_no_error (error);
      g_test_message ("%s pass %u: %s%s", (const char *) data, pass, out, err);
      g_assert_true (g_subprocess_get_if_exited (proc));
      g_assert_cmpint (g_subprocess_get_exit_status (proc), ==, 0);
      if (pass == 0)
        {
          g_assert_null (strstr (out, gated_ok));
          g_assert_nonnull (strstr (err, expect));
          g_assert_null (strstr (strstr (err, expect) + strlen (expect), "denied unix-connect"));   /* once */
        }
      else
        {
          g_assert_nonnull (strstr (out, gated_ok));
          g_assert_null (strstr (err, "denied unix-connect"));
        }
    }
  fx_clear (&fx);
}

int
main (int    argc,
      char **argv)
{
  static const struct
  {
    const char *name;
    GTestDataFunc fn;
  } cases[] = {
    { "connect-grant", test_connect_grant },
    { "issue-follows-profile", test_issue_follows_profile },
    { "denials", test_denials },
    { "cli", test_cli },
  };

  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  for (guint r = 0; r < G_N_ELEMENTS (rungs); r++)
    for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
      {
        g_autofree char *path = g_strdup_printf ("/linux/unix-grants/%s/%s", rungs[r], cases[c].name);

        g_test_add_data_func (path, rungs[r], cases[c].fn);
      }
  return g_test_run ();
}
