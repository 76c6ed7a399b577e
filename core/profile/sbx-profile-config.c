/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sbx-profile-config-private.h"

#include <gio/gio.h>
#include <string.h>
#include <unistd.h>

#include "sbx-fingerprint-private.h"
#include "sbx-path-private.h"

/**
 * SbxProfileConfig:
 *
 * A mutable builder for a [struct@Sbx.Profile].
 *
 * Setters store the values exactly as given, including out-of-range enum
 * values: every check happens in [ctor@Sbx.Profile.new], which reports the
 * first problem.  A fresh config holds the safest values: no workspace (so
 * it does not validate until one is set), every access %SBX_ACCESS_DENY,
 * %SBX_HOME_ISOLATED, %SBX_ISOLATION_SANDBOXED, no acknowledgement, no
 * additional roots and no resource limits.
 *
 * Since: 0.1
 */
/* ------------------------------------------------------------------------- */
/* SbxProfileConfig */

static void
config_root_clear (gpointer data)
{
  ConfigRoot *root = data;

  g_clear_pointer (&root->path, g_free);
}

/**
 * sbx_profile_config_new:
 *
 * Creates a config holding the safest values (see [struct@Sbx.ProfileConfig]).
 * Set at least the workspace before building a profile from it.
 *
 * Returns: (transfer full): a new config
 *
 * Since: 0.1
 */
SbxProfileConfig *
sbx_profile_config_new (void)
{
  SbxProfileConfig *self = g_new0 (SbxProfileConfig, 1);

  self->roots = g_array_new (FALSE, TRUE, sizeof (ConfigRoot));
  g_array_set_clear_func (self->roots, config_root_clear);
  self->host_sockets = g_ptr_array_new_with_free_func (g_free);
  self->host_socket_access = g_array_new (FALSE, FALSE, sizeof (SbxAccess));
  return self;
}

/**
 * sbx_profile_config_copy:
 * @self: a [struct@Sbx.ProfileConfig]
 *
 * Makes a deep copy of @self.
 *
 * Returns: (transfer full): the copy
 *
 * Since: 0.1
 */
SbxProfileConfig *
sbx_profile_config_copy (const SbxProfileConfig *self)
{
  SbxProfileConfig *copy;

  g_return_val_if_fail (self != NULL, NULL);

  copy = sbx_profile_config_new ();
  copy->workspace_root = g_strdup (self->workspace_root);
  copy->workspace_read = self->workspace_read;
  copy->workspace_write = self->workspace_write;
  copy->host_read = self->host_read;
  copy->host_write = self->host_write;
  copy->network = self->network;
  copy->command = self->command;
  copy->home = self->home;
  copy->isolation = self->isolation;
  copy->ack_unconfined = self->ack_unconfined;
  copy->unix_sockets = self->unix_sockets;
  copy->denied_paths = self->denied_paths;
  for (guint i = 0; i < self->host_sockets->len; i++)
    g_ptr_array_add (copy->host_sockets, g_strdup (g_ptr_array_index (self->host_sockets, i)));
  g_array_append_vals (copy->host_socket_access, self->host_socket_access->data, self->host_socket_access->len);
  for (guint i = 0; i < self->roots->len; i++)
    {
      const ConfigRoot *root = &g_array_index (self->roots, ConfigRoot, i);
      ConfigRoot        dup = { g_strdup (root->path), root->read, root->write };

      g_array_append_val (copy->roots, dup);
    }
  copy->max_processes = self->max_processes;
  copy->max_memory = self->max_memory;
  copy->max_open_files = self->max_open_files;
  return copy;
}

/**
 * sbx_profile_config_free:
 * @self: (transfer full): a [struct@Sbx.ProfileConfig]
 *
 * Frees @self.
 *
 * Since: 0.1
 */
void
sbx_profile_config_free (SbxProfileConfig *self)
{
  if (self == NULL)
    return;
  g_free (self->workspace_root);
  g_array_unref (self->roots);
  g_ptr_array_unref (self->host_sockets);
  g_array_unref (self->host_socket_access);
  g_free (self);
}

/**
 * sbx_profile_config_set_workspace:
 * @self: a [struct@Sbx.ProfileConfig]
 * @root: (type filename) (nullable): absolute path of an existing directory
 * @read: read access inside the workspace
 * @write: write access inside the workspace
 *
 * Sets the workspace: the directory the sandboxed command works in, and
 * its access.  @root is canonicalised (symlinks resolved) when the profile
 * is built.
 *
 * Since: 0.1
 */
void
sbx_profile_config_set_workspace (SbxProfileConfig *self,
                                  const char       *root,
                                  SbxAccess         read,
                                  SbxAccess         write)
{
  g_return_if_fail (self != NULL);

  g_free (self->workspace_root);
  self->workspace_root = g_strdup (root);
  self->workspace_read = (int) read;
  self->workspace_write = (int) write;
}

/**
 * sbx_profile_config_set_host:
 * @self: a [struct@Sbx.ProfileConfig]
 * @read: read access to everything outside the configured roots
 * @write: write access to everything outside the configured roots
 *
 * Sets the access to the host: every path that is neither inside the
 * workspace nor inside an additional root.
 *
 * Since: 0.1
 */
void
sbx_profile_config_set_host (SbxProfileConfig *self,
                             SbxAccess         read,
                             SbxAccess         write)
{
  g_return_if_fail (self != NULL);

  self->host_read = (int) read;
  self->host_write = (int) write;
}

/**
 * sbx_profile_config_set_network:
 * @self: a [struct@Sbx.ProfileConfig]
 * @network: access to the network (all egress)
 *
 * Sets the network access.
 *
 * Since: 0.1
 */
void
sbx_profile_config_set_network (SbxProfileConfig *self,
                                SbxAccess         network)
{
  g_return_if_fail (self != NULL);

  self->network = (int) network;
}

/**
 * sbx_profile_config_set_command:
 * @self: a [struct@Sbx.ProfileConfig]
 * @command: whether a process may start at all
 *
 * Sets the command gate: Allow runs commands, Gated needs a
 * `command.start.v1` grant per run, Deny refuses every run.
 *
 * Since: 0.1
 */
void
sbx_profile_config_set_command (SbxProfileConfig *self,
                                SbxAccess         command)
{
  g_return_if_fail (self != NULL);

  self->command = (int) command;
}

/**
 * sbx_profile_config_set_home:
 * @self: a [struct@Sbx.ProfileConfig]
 * @home: which HOME the child sees
 *
 * Sets the HOME choice.
 *
 * Since: 0.1
 */
void
sbx_profile_config_set_home (SbxProfileConfig *self,
                             SbxHome           home)
{
  g_return_if_fail (self != NULL);

  self->home = (int) home;
}

/**
 * sbx_profile_config_set_isolation:
 * @self: a [struct@Sbx.ProfileConfig]
 * @isolation: whether OS confinement is required
 *
 * Sets the isolation.  %SBX_ISOLATION_UNCONFINED also needs
 * [method@Sbx.ProfileConfig.set_ack_unconfined] and every filesystem and
 * network access at %SBX_ACCESS_ALLOW.
 *
 * Since: 0.1
 */
void
sbx_profile_config_set_isolation (SbxProfileConfig *self,
                                  SbxIsolation      isolation)
{
  g_return_if_fail (self != NULL);

  self->isolation = (int) isolation;
}

/**
 * sbx_profile_config_set_ack_unconfined:
 * @self: a [struct@Sbx.ProfileConfig]
 * @ack: %TRUE to acknowledge running without confinement
 *
 * Acknowledges an unconfined profile.  Setting it on a sandboxed profile is
 * an error, so a stray acknowledgement cannot hide in a profile.
 *
 * Since: 0.1
 */
void
sbx_profile_config_set_ack_unconfined (SbxProfileConfig *self,
                                       gboolean          ack)
{
  g_return_if_fail (self != NULL);

  self->ack_unconfined = !!ack;
}

/**
 * sbx_profile_config_set_unix_sockets:
 * @self: a [struct@Sbx.ProfileConfig]
 * @allow: %TRUE to let the sandbox create unix domain sockets
 *
 * Opens every unix domain socket (the JSON member `"unix-sockets": "allow"`).
 * By default the sandbox reaches only its own sockets and the host sockets
 * named with [method@Sbx.ProfileConfig.add_host_socket]: a host daemon
 * listening on a pathname socket inside any root the sandbox sees, even a
 * read-only one, would accept a connection (tmux, ssh ControlMaster,
 * gpg-agent and editor sockets run commands on the host).  The Linux
 * backend decides each connect itself (and refuses unix datagram sockets);
 * a backend that cannot mediate connect() refuses unix sockets.  With
 * @allow every socket under the roots becomes reachable, and the compile
 * report says so.
 *
 * Since: 0.1
 */
void
sbx_profile_config_set_unix_sockets (SbxProfileConfig *self,
                                     gboolean          allow)
{
  g_return_if_fail (self != NULL);

  self->unix_sockets = !!allow;
}

/**
 * sbx_profile_config_set_denied_paths:
 * @self: a [struct@Sbx.ProfileConfig]
 * @denied_paths: what a sandboxed program is told about a host path the
 *   profile does not open
 *
 * Chooses between explaining a refusal and hiding that the path exists (the
 * JSON member `"denied-paths"`): with %SBX_DENIED_PATHS_PERMISSION_DENIED
 * (the default) a denied host path that exists answers `EACCES`, with
 * %SBX_DENIED_PATHS_NOT_FOUND it answers `ENOENT` like a missing one.
 * Either way the refusal is reported to the application as a
 * [struct@Sbx.Denial].  A value outside the enumeration is stored as given
 * and refused by [ctor@Sbx.Profile.new].
 *
 * Since: 0.2
 */
void
sbx_profile_config_set_denied_paths (SbxProfileConfig *self,
                                     SbxDeniedPaths    denied_paths)
{
  g_return_if_fail (self != NULL);

  self->denied_paths = (int) denied_paths;
}

/**
 * sbx_profile_config_add_host_socket:
 * @self: a [struct@Sbx.ProfileConfig]
 * @path: (type filename): absolute path of a host unix socket
 *
 * Names a host daemon's unix socket the sandbox may connect to (the JSON
 * member `"host-sockets"`).  By default every host socket is unreachable,
 * even one lying inside a root (connecting needs only write permission on
 * the socket, which a read-only root does not take away); the sandbox's own
 * sockets always work.  The sandbox reaches a named socket by connecting
 * to exactly @path.
 *
 * @path must be absolute and canonical (no `.`, `..` or empty component,
 * no trailing slash) and shorter than a socket address's 108 bytes;
 * building the profile checks it.  The caller resolves variables
 * (`$SSH_AUTH_SOCK`) and symlinks it means to follow.
 *
 * Naming a socket hands the sandbox whatever its daemon does for a client:
 * docker's socket or the system D-Bus bus is equivalent to root on the
 * host, a session bus or an ssh agent acts as the user.
 *
 * Since: 0.2
 */
void
sbx_profile_config_add_host_socket (SbxProfileConfig *self,
                                    const char       *path)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (path != NULL);

  sbx_profile_config_add_host_socket_access (self, path, SBX_ACCESS_ALLOW);
}

/**
 * sbx_profile_config_add_gated_host_socket:
 * @self: a [struct@Sbx.ProfileConfig]
 * @path: (type filename): absolute path of a host unix socket
 *
 * Names a host daemon's unix socket the sandbox may connect to only with a
 * grant (the JSON form `"host-sockets": [{ "path": PATH, "access": "gated"
 * }]`): a %SBX_GRANT_CLASS_UNIX_CONNECT grant for exactly @path opens it
 * for one spawn, and without one the connect is refused (and is a denial
 * that names that grant).  @path follows the rules of
 * [method@Sbx.ProfileConfig.add_host_socket]; a path may be named once,
 * allowed or gated.
 *
 * Since: 0.2
 */
void
sbx_profile_config_add_gated_host_socket (SbxProfileConfig *self,
                                          const char       *path)
{
  g_return_if_fail (self != NULL);
  g_return_if_fail (path != NULL);

  sbx_profile_config_add_host_socket_access (self, path, SBX_ACCESS_GATED);
}

void
sbx_profile_config_add_host_socket_access (SbxProfileConfig *self,
                                           const char       *path,
                                           SbxAccess         access)
{
  g_ptr_array_add (self->host_sockets, g_strdup (path));
  g_array_append_val (self->host_socket_access, access);
}

/**
 * sbx_profile_config_add_root:
 * @self: a [struct@Sbx.ProfileConfig]
 * @path: (type filename): absolute path of an existing directory
 * @read: read access inside @path
 * @write: write access inside @path
 *
 * Adds an additional root.  Roots may nest inside the workspace or inside
 * each other; the longest configured root containing a path decides its
 * access.  A root may not be the workspace itself; repeating a root (same
 * canonical path) with the same access is merged, with different access it
 * is an error.
 *
 * Since: 0.1
 */
void
sbx_profile_config_add_root (SbxProfileConfig *self,
                             const char       *path,
                             SbxAccess         read,
                             SbxAccess         write)
{
  ConfigRoot root;

  g_return_if_fail (self != NULL);

  root.path = g_strdup (path);
  root.read = (int) read;
  root.write = (int) write;
  g_array_append_val (self->roots, root);
}

/**
 * sbx_profile_config_set_limits:
 * @self: a [struct@Sbx.ProfileConfig]
 * @max_processes: most processes (threads count too) in the sandbox, or 0
 *   for no limit
 * @max_memory_bytes: most memory of the sandbox in bytes, or 0 for no limit
 * @max_open_files: most open files per process, or 0 for no limit
 *
 * Sets the resource limits.  Each must be at most %G_MAXINT64.  Limits are
 * part of the fingerprint; whether and how a backend enforces them shows in
 * its compile report.
 *
 * Since: 0.1
 */
void
sbx_profile_config_set_limits (SbxProfileConfig *self,
                               guint64           max_processes,
                               guint64           max_memory_bytes,
                               guint64           max_open_files)
{
  g_return_if_fail (self != NULL);

  self->max_processes = max_processes;
  self->max_memory = max_memory_bytes;
  self->max_open_files = max_open_files;
}
