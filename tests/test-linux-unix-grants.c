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
