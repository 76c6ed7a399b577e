/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A real include guard, not #pragma once: the build tree holds a copy of
 * each public header (so <sbx/...> works uninstalled) and clang treats the
 * two copies as different files. */
#ifndef SBX_GRANT_H
#define SBX_GRANT_H

#if !defined (SBX_INSIDE) && !defined (SBX_COMPILATION)
#error "Only <sbx/sbx.h> can be included directly."
#endif

#include <glib.h>
#include "sbx-version.h"

G_BEGIN_DECLS

/**
 * SBX_GRANT_ERROR:
 *
 * Error domain of [error@Sbx.GrantError].
 *
 * Since: 0.1
 */
#define SBX_GRANT_ERROR (sbx_grant_error_quark ())
SBX_AVAILABLE_IN_0_1
GQuark sbx_grant_error_quark (void);

/**
 * SbxGrantError:
 * @SBX_GRANT_ERROR_REQUIRED: the profile's command access is
 *   %SBX_ACCESS_GATED and no `command.start.v1` grant for this command was
 *   supplied; nothing was spawned.  This is the signal to open your approval
 *   gate.  Since: 0.1
 * @SBX_GRANT_ERROR_DENIED: the capability is %SBX_ACCESS_DENY: the command
 *   access at run time, or the class's scope when a grant is issued.  Never
 *   prompt for it.  Since: 0.1
 * @SBX_GRANT_ERROR_EXPIRED: at issue, the expiry is not in the future or lies
 *   beyond now + the set's grant TTL; at use, the current time (in
 *   milliseconds) is past the token's expiry.  Since: 0.1
 * @SBX_GRANT_ERROR_REPLAY: the token was already spent, appears twice in one
 *   call, or its retained filesystem handle is gone.  Checked before the MAC.
 *   Since: 0.1
 * @SBX_GRANT_ERROR_WRONG_COMMAND: the token was minted for another command,
 *   or a `command.start.v1` target differs from the command.  Since: 0.1
 * @SBX_GRANT_ERROR_WRONG_EXECUTION: the token was minted for another
 *   execution ID.  Since: 0.1
 * @SBX_GRANT_ERROR_WRONG_WORKING_DIRECTORY: the token was minted for another
 *   canonical working directory.  Since: 0.1
 * @SBX_GRANT_ERROR_PROFILE_MISMATCH: the token was minted under another
 *   profile fingerprint.  Since: 0.1
 * @SBX_GRANT_ERROR_ROUTE_MISMATCH: the token was minted under another egress
 *   route fingerprint.  Since: 0.1
 * @SBX_GRANT_ERROR_TARGET_CHANGED: the granted filesystem target changed
 *   between issue and use: its identity, a symlink swapped in on its path, a
 *   missing suffix that appeared.  Since: 0.1
 * @SBX_GRANT_ERROR_UNSUPPORTED: unknown class; the capability is already
 *   %SBX_ACCESS_ALLOW (nothing to grant); the backend cannot enforce the
 *   class or this target's shape.  Since: 0.1
 * @SBX_GRANT_ERROR_GUARANTEE_MISMATCH: the class needs guarantees the
 *   executor does not achieve, the executor's guarantees differ from those
 *   the token was minted under, or the spec recompiled for the grant does not
 *   achieve exactly the expected guarantees.  Since: 0.1
 * @SBX_GRANT_ERROR_MALFORMED: the token is not `sbx1.PAYLOAD.MAC` in
 *   unpadded base64url with a valid payload, or an argument is not valid
 *   text (execution ID, command), the working directory is unusable, or the
 *   target does not fit the class.  Since: 0.1
 * @SBX_GRANT_ERROR_BAD_MAC: the token's MAC does not verify: it was minted
 *   by another executor (every executor has its own key) or it was altered.
 *   Since: 0.1
 *
 * Errors from issuing and spending grants
 * ([method@Sbx.Executor.issue_grant],
 * [method@Sbx.Executor.run] and [method@Sbx.Executor.spawn] with grants in their options).  The codes mirror
 * upstream's grant sentinels one for one.
 *
 * Since: 0.1
 */
typedef enum /*< prefix=SBX_GRANT_ERROR >*/
{
  SBX_GRANT_ERROR_REQUIRED,
  SBX_GRANT_ERROR_DENIED,
  SBX_GRANT_ERROR_EXPIRED,
  SBX_GRANT_ERROR_REPLAY,
  SBX_GRANT_ERROR_WRONG_COMMAND,
  SBX_GRANT_ERROR_WRONG_EXECUTION,
  SBX_GRANT_ERROR_WRONG_WORKING_DIRECTORY,
  SBX_GRANT_ERROR_PROFILE_MISMATCH,
  SBX_GRANT_ERROR_ROUTE_MISMATCH,
  SBX_GRANT_ERROR_TARGET_CHANGED,
  SBX_GRANT_ERROR_UNSUPPORTED,
  SBX_GRANT_ERROR_GUARANTEE_MISMATCH,
  SBX_GRANT_ERROR_MALFORMED,
  SBX_GRANT_ERROR_BAD_MAC,
} SbxGrantError;

/**
 * SBX_GRANT_VERSION:
 *
 * The grant token version: 1, implied by the `sbx1` prefix of every token.
 *
 * Since: 0.1
 */
#define SBX_GRANT_VERSION 1

/**
 * SBX_GRANT_CLASS_COMMAND_START:
 *
 * Authorizes one start of exactly the bound command when the profile's
 * command access is %SBX_ACCESS_GATED.  Its target is the command itself.
 *
 * Since: 0.1
 */
#define SBX_GRANT_CLASS_COMMAND_START "command.start.v1"
/**
 * SBX_GRANT_CLASS_FILESYSTEM_PATH_READ:
 *
 * Read and execute access to one existing single-link regular file (never
 * its siblings or, for a directory, its children).
 *
 * Since: 0.1
 */
#define SBX_GRANT_CLASS_FILESYSTEM_PATH_READ "filesystem.path.read.v1"
/**
 * SBX_GRANT_CLASS_FILESYSTEM_PATH_WRITE:
 *
 * Write access to one existing single-link regular file.
 *
 * Since: 0.1
 */
#define SBX_GRANT_CLASS_FILESYSTEM_PATH_WRITE "filesystem.path.write.v1"
/**
 * SBX_GRANT_CLASS_FILESYSTEM_TREE_READ:
 *
 * Read and execute access to a configured root (a directory) and everything
 * below it.
 *
 * Since: 0.1
 */
#define SBX_GRANT_CLASS_FILESYSTEM_TREE_READ "filesystem.tree.read.v1"
/**
 * SBX_GRANT_CLASS_FILESYSTEM_TREE_WRITE:
 *
 * Write access to a configured root and everything below it.
 *
 * Since: 0.1
 */
#define SBX_GRANT_CLASS_FILESYSTEM_TREE_WRITE "filesystem.tree.write.v1"
/**
 * SBX_GRANT_CLASS_FILESYSTEM_HOST_READ:
 *
 * Read and execute access to the whole host (target `host:*`).
 *
 * Since: 0.1
 */
#define SBX_GRANT_CLASS_FILESYSTEM_HOST_READ "filesystem.host.read.v1"
/**
 * SBX_GRANT_CLASS_FILESYSTEM_HOST_WRITE:
 *
 * Write access to the whole host (target `host:*`).
 *
 * Since: 0.1
 */
#define SBX_GRANT_CLASS_FILESYSTEM_HOST_WRITE "filesystem.host.write.v1"
/**
 * SBX_GRANT_CLASS_NETWORK_BROAD:
 *
 * TCP egress to one port on any host, plus name resolution (target
 * `tcp:*:PORT`, PORT in 1..65535 written without leading zeros).
 *
 * Since: 0.1
 */
#define SBX_GRANT_CLASS_NETWORK_BROAD "network.broad.v1"
/**
 * SBX_GRANT_CLASS_NETWORK_PROXY_TARGET:
 *
 * Egress to one `tcp:HOST:PORT` target through the set's egress route.
 * Fails closed with %SBX_GRANT_ERROR_UNSUPPORTED until egress routes exist.
 *
 * Since: 0.1
 */
#define SBX_GRANT_CLASS_NETWORK_PROXY_TARGET "network.proxy-target.v1"
/**
 * SBX_GRANT_CLASS_UNIX_CONNECT:
 *
 * Connecting to one host daemon's unix socket by exactly this absolute path
 * (target: the path, clean, shorter than 108 bytes, as the profile names
 * it), for one spawn.  Only a socket the profile gates
 * ([method@Sbx.ProfileConfig.add_gated_host_socket], `"host-sockets": [{
 * "path": ..., "access": "gated" }]`) can be granted.  The daemon acts for
 * the sandbox outside every boundary (a `docker.sock` or the system bus is
 * host-root-equivalent), so the run claims no read, write or network
 * boundary; its report says which grant removed them.
 *
 * Since: 0.2
 */
#define SBX_GRANT_CLASS_UNIX_CONNECT "unix.connect.v1"

SBX_AVAILABLE_IN_0_1
char *sbx_grant_command_for_argv (const char *const *argv);

G_END_DECLS

#endif /* SBX_GRANT_H */
