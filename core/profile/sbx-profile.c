/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sbx-profile-struct-private.h"

#include <gio/gio.h>
#include <string.h>
#include <unistd.h>

#include "sbx-fingerprint-private.h"
#include "sbx-path-private.h"

/*
 * SbxProfile: the types, the access words and the queries.  Construction
 * and validation are in sbx-profile-validate.c, the builder in
 * sbx-profile-config.c, narrowing in sbx-profile-restrict.c; the
 * representation they share is sbx-profile-struct-private.h.
 */

/**
 * SbxProfile:
 *
 * An immutable, validated, canonical authority profile.
 *
 * A profile says what a sandboxed command may do: read and write its
 * workspace, additional roots and the rest of the host ("host"), reach the
 * network, start at all ("command"), which HOME it sees, whether it is
 * confined at all, and which resource limits apply.  Each access dimension
 * is an [enum@Sbx.Access]: Deny, Gated (only through a one-shot grant) or
 * Allow.
 *
 * Profiles are reference counted and never change after construction, so
 * they can be shared between threads freely.  Build one with
 * [ctor@Sbx.Profile.new] from a [struct@Sbx.ProfileConfig], load one with
 * [ctor@Sbx.Profile.new_from_json] or [ctor@Sbx.Profile.new_default], and
 * narrow one with [method@Sbx.Profile.restrict].
 *
 * Since: 0.1
 */
/**
 * sbx_profile_error_quark:
 *
 * Returns the quark of the [error@Sbx.ProfileError] domain.
 *
 * Returns: the error domain quark
 *
 * Since: 0.1
 */
G_DEFINE_QUARK (sbx-profile-error-quark, sbx_profile_error)

G_DEFINE_BOXED_TYPE (SbxProfileConfig, sbx_profile_config,
                     sbx_profile_config_copy, sbx_profile_config_free)
G_DEFINE_BOXED_TYPE (SbxProfile, sbx_profile, sbx_profile_ref, sbx_profile_unref)

static const char *const access_names[] = { "deny", "gated", "allow" };

/**
 * sbx_access_to_string:
 * @access: an [enum@Sbx.Access]
 *
 * Returns the lower-case word for @access ("deny", "gated", "allow"), as
 * used in profile files.
 *
 * Returns: (transfer none) (nullable): the word, or %NULL for a value
 *   outside the enumeration
 *
 * Since: 0.1
 */
const char *
sbx_access_to_string (SbxAccess access)
{
  if ((guint) access >= G_N_ELEMENTS (access_names))
    return NULL;
  return access_names[access];
}

/**
 * sbx_access_from_string:
 * @text: an access word
 * @out_access: (out): return location for the access
 *
 * Parses a word produced by [func@Sbx.Access.to_string].  Matching is exact
 * (lower case only).
 *
 * Returns: %TRUE when @text names an access value
 *
 * Since: 0.1
 */
gboolean
sbx_access_from_string (const char *text,
                        SbxAccess  *out_access)
{
  g_return_val_if_fail (text != NULL, FALSE);
  g_return_val_if_fail (out_access != NULL, FALSE);

  for (guint i = 0; i < G_N_ELEMENTS (access_names); i++)
    if (g_str_equal (text, access_names[i]))
      {
        *out_access = (SbxAccess) i;
        return TRUE;
      }
  return FALSE;
}

/* Text safe to put in a GError message (which must be UTF-8). */
char *
sbx_profile_display (const char *text)
{
  if (text == NULL)
    return g_strdup ("(null)");
  return g_utf8_make_valid (text, -1);
}

const char *
sbx_profile_access_word (int value)
{
  const char *word = sbx_access_to_string ((SbxAccess) value);

  return word != NULL ? word : "?";
}

gboolean
sbx_profile_set_invalid (GError    **error,
                         const char *format,
                         ...)
{
  va_list args;

  va_start (args, format);
  g_propagate_error (error, g_error_new_valist (SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_INVALID,
                                                format, args));
  va_end (args);
  return FALSE;
}

void
sbx_profile_free_owned (SbxProfile *self)
{
  g_free (self->workspace_root);
  for (guint i = 0; i < self->n_roots; i++)
    g_free (self->roots[i].path);
  g_free (self->roots);
  g_strfreev (self->host_sockets);
  g_strfreev (self->gated_host_sockets);
  g_free (self->fingerprint);
  g_clear_pointer (&self->links, g_ptr_array_unref);
  g_free (self);
}

/**
 * sbx_profile_ref:
 * @self: a [struct@Sbx.Profile]
 *
 * Takes a reference (atomically).
 *
 * Returns: (transfer full): @self
 *
 * Since: 0.1
 */
SbxProfile *
sbx_profile_ref (SbxProfile *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

/**
 * sbx_profile_unref:
 * @self: (transfer full): a [struct@Sbx.Profile]
 *
 * Drops a reference (atomically); the last one frees the profile.
 *
 * Since: 0.1
 */
void
sbx_profile_unref (SbxProfile *self)
{
  g_return_if_fail (self != NULL);

  if (g_atomic_ref_count_dec (&self->ref_count))
    sbx_profile_free_owned (self);
}

/* ------------------------------------------------------------------------- */
/* Queries */

/**
 * sbx_profile_get_access_version:
 * @self: (nullable): a [struct@Sbx.Profile]
 *
 * Returns the access vocabulary version, %SBX_ACCESS_VERSION, or 0 for
 * %NULL.  Callers must reject 0 and any version they do not know.
 *
 * Returns: the version
 *
 * Since: 0.1
 */
guint
sbx_profile_get_access_version (SbxProfile *self)
{
  if (self == NULL || self->fingerprint == NULL)
    return 0;
  return SBX_ACCESS_VERSION;
}

/*
 * sbx_profile_access_at_path:
 * @self: a profile
 * @write: %TRUE for the write axis, %FALSE for read
 * @path: a clean absolute path (not checked)
 *
 * The access at @path: the longest configured root (the workspace or an
 * additional root) containing @path decides; a path in no configured root
 * gets the host access.  The workspace is tried first and an additional
 * root must be strictly longer to win, but equal lengths cannot both
 * contain a path unless equal, which validation forbids.
 */
SbxAccess
sbx_profile_access_at_path_with_roots (const SbxProfile     *self,
                                       const SbxProfileRoot *roots,
                                       guint                 n_roots,
                                       gboolean              write,
                                       const char           *path)
{
  size_t best_len = 0;
  gboolean found = FALSE;
  SbxAccess best = SBX_ACCESS_DENY;

  if (sbx_path_within (path, self->workspace_root))
    {
      found = TRUE;
      best_len = strlen (self->workspace_root);
      best = write ? self->workspace_write : self->workspace_read;
    }
  for (guint i = 0; i < n_roots; i++)
    {
      const SbxProfileRoot *root = &roots[i];
      size_t len = strlen (root->path);

      if ((!found || len > best_len) && sbx_path_within (path, root->path))
        {
          found = TRUE;
          best_len = len;
          best = write ? root->write : root->read;
        }
    }
  if (found)
    return best;
  return write ? self->host_write : self->host_read;
}

SbxAccess
sbx_profile_access_at_path (SbxProfile *self,
                            gboolean    write,
                            const char *path)
{
  return sbx_profile_access_at_path_with_roots (self, self->roots, self->n_roots, write, path);
}

/*
 * sbx_profile_is_configured_root:
 * Whether @path is byte-equal to the workspace root or an additional root.
 */
gboolean
sbx_profile_is_configured_root (SbxProfile *self,
                                const char *path)
{
  if (g_str_equal (path, self->workspace_root))
    return TRUE;
  for (guint i = 0; i < self->n_roots; i++)
    if (g_str_equal (path, self->roots[i].path))
      return TRUE;
  return FALSE;
}

/*
 * sbx_profile_get_roots:
 * Returns: (transfer none) (array length=n_roots): the sorted roots
 */
const SbxProfileRoot *
sbx_profile_get_roots (SbxProfile *self,
                       guint      *n_roots)
{
  *n_roots = self->n_roots;
  return self->roots;
}

/*
 * sbx_profile_get_root_links:
 * @self: a profile
 *
 * Every symbolic link the workspace and the additional roots were reached
 * through when the profile was built (empty for a profile built from
 * canonical paths, such as a restricted one).
 *
 * Returns: (transfer none) (element-type SbxPathLink) (nullable): the links
 */
GPtrArray *
sbx_profile_get_root_links (SbxProfile *self)
{
  return self->links;
}

/**
 * sbx_profile_access_for:
 * @self: (nullable): a [struct@Sbx.Profile]
 * @kind: the access kind: "command.execute", "network", "filesystem.read",
 *   "filesystem.write" or "unix.connect"
 * @scope: (nullable): the scope; %NULL means ""
 * @out_access: (out) (optional): return location for the access; %SBX_ACCESS_DENY
 *   on error
 * @error: return location for a [error@Sbx.ProfileError]
 *
 * Answers "what access does this profile give to @kind on @scope?".
 *
 * - "command.execute" and "network" take an empty scope and give the
 *   command and network access.
 * - "filesystem.read" / "filesystem.write" take:
 *   - "host:*": the host access;
 *   - an absolute clean path (no "//", ".", ".." or trailing "/"): the
 *     access at that path, decided by the longest configured root (the
 *     workspace or an additional root) containing it, else the host;
 *   - "tree:" and an absolute clean path: when the path is exactly the
 *     workspace root or an additional root, the access at it; otherwise
 *     %SBX_ACCESS_DENY, without an error.
 * - "unix.connect" takes the absolute clean path of a host unix socket:
 *   %SBX_ACCESS_ALLOW when the profile names it (or allows every unix
 *   socket), %SBX_ACCESS_GATED when it names it gated, else
 *   %SBX_ACCESS_DENY (since 0.2).
 *
 * Paths are compared as bytes and nothing is resolved: pass canonical paths.
 * Errors (%SBX_PROFILE_ERROR_INVALID): a %NULL profile, an unknown kind, a
 * non-empty command or network scope, a malformed filesystem scope.
 *
 * Returns: %TRUE on success
 *
 * Since: 0.1
 */
gboolean
sbx_profile_access_for (SbxProfile  *self,
                        const char  *kind,
                        const char  *scope,
                        SbxAccess   *out_access,
                        GError     **error)
{
  SbxAccess unused;
  gboolean write;
  gboolean tree;
  const char *path;

  g_return_val_if_fail (kind != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (out_access == NULL)
    out_access = &unused;
  *out_access = SBX_ACCESS_DENY;
  if (scope == NULL)
    scope = "";

  if (self == NULL || self->fingerprint == NULL)
    return sbx_profile_set_invalid (error, "access for %s: no valid profile", kind);

  if (g_str_equal (kind, "command.execute") || g_str_equal (kind, "network"))
    {
      if (scope[0] != '\0')
        {
          g_autofree char *shown = sbx_profile_display (scope);

          return sbx_profile_set_invalid (error, "%s: scope must be empty, not \"%s\"", kind, shown);
        }
      *out_access = kind[0] == 'c' ? self->command : self->network;
      return TRUE;
    }

  if (g_str_equal (kind, "unix.connect"))
    {
      if (!sbx_path_is_clean_absolute (scope))
        {
          g_autofree char *shown = sbx_profile_display (scope);

          return sbx_profile_set_invalid (error, "%s: malformed socket scope \"%s\" (expected a clean absolute path)",
                                          kind, shown);
        }
      *out_access = sbx_profile_host_socket_access (self, scope);
      return TRUE;
    }
  if (g_str_equal (kind, "filesystem.read"))
    write = FALSE;
  else if (g_str_equal (kind, "filesystem.write"))
    write = TRUE;
  else
    {
      g_autofree char *shown = sbx_profile_display (kind);

      return sbx_profile_set_invalid (error, "unknown access kind \"%s\"", shown);
    }

  if (g_str_equal (scope, "host:*"))
    {
      *out_access = write ? self->host_write : self->host_read;
      return TRUE;
    }
  tree = g_str_has_prefix (scope, "tree:");
  path = tree ? scope + strlen ("tree:") : scope;
  if (!sbx_path_is_clean_absolute (path))
    {
      g_autofree char *shown = sbx_profile_display (scope);

      return sbx_profile_set_invalid (error,
                                      "%s: malformed filesystem scope \"%s\" (expected \"host:*\", a clean absolute path, or \"tree:\" and one)",
                                      kind, shown);
    }
  if (tree && !sbx_profile_is_configured_root (self, path))
    return TRUE;   /* Deny: trees exist only at configured roots */
  *out_access = sbx_profile_access_at_path (self, write, path);
  return TRUE;
}

/**
 * sbx_profile_get_fingerprint:
 * @self: (nullable): a [struct@Sbx.Profile]
 *
 * Returns the profile's fingerprint: the lowercase hex SHA-256 (64
 * characters) of a canonical serialization of every normalized field (see
 * docs/profile-format.md).  Equivalent spellings and any root order give
 * the same fingerprint; any change of authority changes it.  For a profile
 * without resource limits it is byte-for-byte upstream's fingerprint.
 *
 * Returns: (transfer none): the fingerprint, or "" for %NULL
 *
 * Since: 0.1
 */
const char *
sbx_profile_get_fingerprint (SbxProfile *self)
{
  if (self == NULL || self->fingerprint == NULL)
    return "";
  return self->fingerprint;
}

/**
 * sbx_profile_get_required_guarantees:
 * @self: a [struct@Sbx.Profile]
 *
 * Returns the guarantees a backend must achieve to run this profile:
 * %SBX_GUARANTEE_ENV_SCRUB always; for a sandboxed profile also
 * %SBX_GUARANTEE_READ_BOUNDARY when workspace, host or any root read is not
 * Allow, %SBX_GUARANTEE_WRITE_BOUNDARY likewise for write, and
 * %SBX_GUARANTEE_NETWORK_BOUNDARY when network is not Allow.  Process
 * boundary, address network, resource limits and target network are never
 * required.
 *
 * Returns: the required guarantee bits
 *
 * Since: 0.1
 */
SbxGuarantees
sbx_profile_get_required_guarantees (SbxProfile *self)
{
  g_return_val_if_fail (self != NULL, SBX_GUARANTEE_NONE);

  return self->required;
}

/**
 * sbx_profile_equal:
 * @a: a [struct@Sbx.Profile]
 * @b: a [struct@Sbx.Profile]
 *
 * Whether @a and @b hold the same normalized values (then their
 * fingerprints are equal too).
 *
 * Returns: %TRUE when equal
 *
 * Since: 0.1
 */
gboolean
sbx_profile_equal (SbxProfile *a,
                   SbxProfile *b)
{
  g_return_val_if_fail (a != NULL, FALSE);
  g_return_val_if_fail (b != NULL, FALSE);

  if (a == b)
    return TRUE;
  if (!g_str_equal (a->workspace_root, b->workspace_root)
      || a->workspace_read != b->workspace_read || a->workspace_write != b->workspace_write
      || a->host_read != b->host_read || a->host_write != b->host_write
      || a->network != b->network || a->command != b->command
      || a->home != b->home || a->isolation != b->isolation
      || a->ack_unconfined != b->ack_unconfined || a->unix_sockets != b->unix_sockets
      || a->denied_paths != b->denied_paths
      || !g_strv_equal ((const char * const *) a->host_sockets, (const char * const *) b->host_sockets)
      || !g_strv_equal ((const char * const *) a->gated_host_sockets,
                        (const char * const *) b->gated_host_sockets)
      || a->n_roots != b->n_roots
      || a->max_processes != b->max_processes || a->max_memory != b->max_memory
      || a->max_open_files != b->max_open_files)
    return FALSE;
  for (guint i = 0; i < a->n_roots; i++)
    if (!g_str_equal (a->roots[i].path, b->roots[i].path)
        || a->roots[i].read != b->roots[i].read || a->roots[i].write != b->roots[i].write)
      return FALSE;
  return TRUE;
}

/**
 * sbx_profile_get_workspace_root:
 * @self: a [struct@Sbx.Profile]
 *
 * Returns the canonical workspace root.
 *
 * Returns: (transfer none) (type filename): the path
 *
 * Since: 0.1
 */
const char *
sbx_profile_get_workspace_root (SbxProfile *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->workspace_root;
}

/**
 * sbx_profile_get_workspace_read:
 * @self: a [struct@Sbx.Profile]
 *
 * Returns the read access inside the workspace.
 *
 * Returns: the read access inside the workspace
 *
 * Since: 0.1
 */
SbxAccess
sbx_profile_get_workspace_read (SbxProfile *self)
{
  g_return_val_if_fail (self != NULL, SBX_ACCESS_DENY);
  return self->workspace_read;
}

/**
 * sbx_profile_get_workspace_write:
 * @self: a [struct@Sbx.Profile]
 *
 * Returns the write access inside the workspace.
 *
 * Returns: the write access inside the workspace
 *
 * Since: 0.1
 */
SbxAccess
sbx_profile_get_workspace_write (SbxProfile *self)
{
  g_return_val_if_fail (self != NULL, SBX_ACCESS_DENY);
  return self->workspace_write;
}

/**
 * sbx_profile_get_host_read:
 * @self: a [struct@Sbx.Profile]
 *
 * Returns the read access outside every configured root.
 *
 * Returns: the read access outside every configured root
 *
 * Since: 0.1
 */
SbxAccess
sbx_profile_get_host_read (SbxProfile *self)
{
  g_return_val_if_fail (self != NULL, SBX_ACCESS_DENY);
  return self->host_read;
}

/**
 * sbx_profile_get_host_write:
 * @self: a [struct@Sbx.Profile]
 *
 * Returns the write access outside every configured root.
 *
 * Returns: the write access outside every configured root
 *
 * Since: 0.1
 */
SbxAccess
sbx_profile_get_host_write (SbxProfile *self)
{
  g_return_val_if_fail (self != NULL, SBX_ACCESS_DENY);
  return self->host_write;
}

/**
 * sbx_profile_get_network:
 * @self: a [struct@Sbx.Profile]
 *
 * Returns the network access.
 *
 * Returns: the network access
 *
 * Since: 0.1
 */
SbxAccess
sbx_profile_get_network (SbxProfile *self)
{
  g_return_val_if_fail (self != NULL, SBX_ACCESS_DENY);
  return self->network;
}

/**
 * sbx_profile_get_command:
 * @self: a [struct@Sbx.Profile]
 *
 * Returns the command gate.
 *
 * Returns: the command gate
 *
 * Since: 0.1
 */
SbxAccess
sbx_profile_get_command (SbxProfile *self)
{
  g_return_val_if_fail (self != NULL, SBX_ACCESS_DENY);
  return self->command;
}

/**
 * sbx_profile_get_home:
 * @self: a [struct@Sbx.Profile]
 *
 * Returns the HOME choice.
 *
 * Returns: the HOME choice
 *
 * Since: 0.1
 */
SbxHome
sbx_profile_get_home (SbxProfile *self)
{
  g_return_val_if_fail (self != NULL, SBX_HOME_ISOLATED);
  return self->home;
}

/**
 * sbx_profile_get_isolation:
 * @self: a [struct@Sbx.Profile]
 *
 * Returns the isolation.
 *
 * Returns: the isolation
 *
 * Since: 0.1
 */
SbxIsolation
sbx_profile_get_isolation (SbxProfile *self)
{
  g_return_val_if_fail (self != NULL, SBX_ISOLATION_SANDBOXED);
  return self->isolation;
}

/**
 * sbx_profile_get_unix_sockets:
 * @self: a [struct@Sbx.Profile]
 *
 * Whether the profile opens unix domain sockets (see
 * [method@Sbx.ProfileConfig.set_unix_sockets]).
 *
 * Returns: %TRUE when `"unix-sockets": "allow"`; %FALSE (closed) by default
 *
 * Since: 0.1
 */
gboolean
sbx_profile_get_unix_sockets (SbxProfile *self)
{
  g_return_val_if_fail (self != NULL, FALSE);
  return self->unix_sockets;
}

/**
 * sbx_profile_get_denied_paths:
 * @self: a [struct@Sbx.Profile]
 *
 * What a sandboxed program is told about a host path the profile does not
 * open (see [method@Sbx.ProfileConfig.set_denied_paths]).
 *
 * Returns: %SBX_DENIED_PATHS_PERMISSION_DENIED (the default, also when the
 *   JSON member is absent) or %SBX_DENIED_PATHS_NOT_FOUND
 *
 * Since: 0.2
 */
SbxDeniedPaths
sbx_profile_get_denied_paths (SbxProfile *self)
{
  g_return_val_if_fail (self != NULL, SBX_DENIED_PATHS_PERMISSION_DENIED);
  return self->denied_paths;
}

/**
 * sbx_profile_get_host_sockets:
 * @self: a [struct@Sbx.Profile]
 *
 * The host unix sockets the sandbox may connect to (see
 * [method@Sbx.ProfileConfig.add_host_socket]), sorted.
 *
 * Returns: (transfer none) (array zero-terminated=1) (element-type filename): the paths; empty by default
 *
 * Since: 0.2
 */
const char * const *
sbx_profile_get_host_sockets (SbxProfile *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return (const char * const *) self->host_sockets;
}

/**
 * sbx_profile_get_gated_host_sockets:
 * @self: a [struct@Sbx.Profile]
 *
 * The host unix sockets the sandbox may connect to only with a
 * %SBX_GRANT_CLASS_UNIX_CONNECT grant (see
 * [method@Sbx.ProfileConfig.add_gated_host_socket]), sorted.
 *
 * Returns: (transfer none) (array zero-terminated=1) (element-type filename): the paths; empty by default
 *
 * Since: 0.2
 */
const char * const *
sbx_profile_get_gated_host_sockets (SbxProfile *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return (const char * const *) self->gated_host_sockets;
}

SbxAccess
sbx_profile_host_socket_access (SbxProfile *self,
                                const char *path)
{
  if (self->unix_sockets || g_strv_contains ((const char * const *) self->host_sockets, path))
    return SBX_ACCESS_ALLOW;
  if (g_strv_contains ((const char * const *) self->gated_host_sockets, path))
    return SBX_ACCESS_GATED;
  return SBX_ACCESS_DENY;
}

/**
 * sbx_profile_get_ack_unconfined:
 * @self: a [struct@Sbx.Profile]
 *
 * Returns whether the profile acknowledges unconfined execution (only ever %TRUE for an unconfined profile).
 *
 * Returns: whether the profile acknowledges unconfined execution (only
 *   ever %TRUE for an unconfined profile)
 *
 * Since: 0.1
 */
gboolean
sbx_profile_get_ack_unconfined (SbxProfile *self)
{
  g_return_val_if_fail (self != NULL, FALSE);
  return self->ack_unconfined;
}

/**
 * sbx_profile_get_n_roots:
 * @self: a [struct@Sbx.Profile]
 *
 * Returns the number of additional roots (after merging repeats).
 *
 * Returns: the number of additional roots (after merging repeats)
 *
 * Since: 0.1
 */
guint
sbx_profile_get_n_roots (SbxProfile *self)
{
  g_return_val_if_fail (self != NULL, 0);
  return self->n_roots;
}

/**
 * sbx_profile_get_root_path:
 * @self: a [struct@Sbx.Profile]
 * @index: a root index, below [method@Sbx.Profile.get_n_roots]
 *
 * Returns the canonical path of an additional root.  Roots are sorted by
 * path in byte order.
 *
 * Returns: (transfer none) (type filename): the path
 *
 * Since: 0.1
 */
const char *
sbx_profile_get_root_path (SbxProfile *self,
                           guint       index)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (index < self->n_roots, NULL);
  return self->roots[index].path;
}

/**
 * sbx_profile_get_root_read:
 * @self: a [struct@Sbx.Profile]
 * @index: a root index, below [method@Sbx.Profile.get_n_roots]
 *
 * Returns the read access inside that root.
 *
 * Returns: the read access inside that root
 *
 * Since: 0.1
 */
SbxAccess
sbx_profile_get_root_read (SbxProfile *self,
                           guint       index)
{
  g_return_val_if_fail (self != NULL, SBX_ACCESS_DENY);
  g_return_val_if_fail (index < self->n_roots, SBX_ACCESS_DENY);
  return self->roots[index].read;
}

/**
 * sbx_profile_get_root_write:
 * @self: a [struct@Sbx.Profile]
 * @index: a root index, below [method@Sbx.Profile.get_n_roots]
 *
 * Returns the write access inside that root.
 *
 * Returns: the write access inside that root
 *
 * Since: 0.1
 */
SbxAccess
sbx_profile_get_root_write (SbxProfile *self,
                            guint       index)
{
  g_return_val_if_fail (self != NULL, SBX_ACCESS_DENY);
  g_return_val_if_fail (index < self->n_roots, SBX_ACCESS_DENY);
  return self->roots[index].write;
}

/**
 * sbx_profile_get_max_processes:
 * @self: a [struct@Sbx.Profile]
 *
 * Returns the most processes in the sandbox, or 0 for no limit.
 *
 * Returns: the most processes in the sandbox, or 0 for no limit
 *
 * Since: 0.1
 */
guint64
sbx_profile_get_max_processes (SbxProfile *self)
{
  g_return_val_if_fail (self != NULL, 0);
  return self->max_processes;
}

/**
 * sbx_profile_get_max_memory:
 * @self: a [struct@Sbx.Profile]
 *
 * Returns the most memory of the sandbox in bytes, or 0 for no limit.
 *
 * Returns: the most memory of the sandbox in bytes, or 0 for no limit
 *
 * Since: 0.1
 */
guint64
sbx_profile_get_max_memory (SbxProfile *self)
{
  g_return_val_if_fail (self != NULL, 0);
  return self->max_memory;
}

/**
 * sbx_profile_get_max_open_files:
 * @self: a [struct@Sbx.Profile]
 *
 * Returns the most open files per process, or 0 for no limit.
 *
 * Returns: the most open files per process, or 0 for no limit
 *
 * Since: 0.1
 */
guint64
sbx_profile_get_max_open_files (SbxProfile *self)
{
  g_return_val_if_fail (self != NULL, 0);
  return self->max_open_files;
}

/*
 * sbx_profile_auto_memory_limit:
 * @out_bytes: (out): the limit
 *
 * The "auto" memory limit: half the physical RAM, at most 4 GiB, read now.
 */
gboolean
sbx_profile_auto_memory_limit (guint64  *out_bytes,
                               GError  **error)
{
  long pages = sysconf (_SC_PHYS_PAGES);
  long page_size = sysconf (_SC_PAGESIZE);
  guint64 half;

  if (pages <= 0 || page_size <= 0)
    return sbx_profile_set_invalid (error, "limits.memory: \"auto\" cannot read the physical memory size");
  half = ((guint64) pages / 2) * (guint64) page_size;
  *out_bytes = MIN (half, SBX_PROFILE_AUTO_MEMORY_CAP);
  return TRUE;
}
