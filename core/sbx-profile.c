/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sbx-profile-private.h"

#include <gio/gio.h>
#include <string.h>
#include <unistd.h>

#include "sbx-fingerprint-private.h"
#include "sbx-path-private.h"

/*
 * Validation, in this fixed order (the first failing
 * rule is reported, so errors are deterministic):
 *
 *  1. workspace root: non-empty, absolute, valid UTF-8, an existing
 *     directory; canonicalised (lexical clean, then every symlink resolved).
 *  2. the six access fields, in this order: workspace read, workspace write,
 *     host read, host write, network, command; each must be 0..2.
 *  3. home (0..1), then isolation (0..1).
 *  4. each additional root, in input order: read then write access in range;
 *     path canonicalised as in 1; not the workspace root; not a repeat of an
 *     earlier root with different access (the C API merges a repeat with the
 *     same access; JSON files refuse every repeat).
 *  4b. no root (workspace or additional) reached through a symbolic link
 *     that lies inside a writable root of this profile (see
 *     check_planted_links()).
 *  5. roots sorted by canonical path, plain byte order.
 *  6. unconfined consistency: no acknowledgement on a sandboxed profile; an
 *     unconfined profile must be acknowledged and have workspace read,
 *     workspace write, host read, host write and network (in that order) at
 *     Allow, then every root's read and write at Allow.
 *  7. resource limits (processes, memory, open files, in that order) at most
 *     G_MAXINT64 (so every profile can be written as JSON).
 *  8. required guarantees derived, fingerprint computed.
 *
 * Steps 5-8 (everything that does not touch the filesystem) are the
 * "structural" checks, also run on the result of sbx_profile_restrict().
 */

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
typedef struct
{
  char *path;
  int   read;
  int   write;
} ConfigRoot;

struct _SbxProfileConfig
{
  char    *workspace_root;
  int      workspace_read;
  int      workspace_write;
  int      host_read;
  int      host_write;
  int      network;
  int      command;
  int      home;
  int      isolation;
  gboolean ack_unconfined;
  gboolean unix_sockets;
  GArray  *roots;   /* ConfigRoot */
  guint64  max_processes;
  guint64  max_memory;
  guint64  max_open_files;
};

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
struct _SbxProfile
{
  gatomicrefcount ref_count;
  char           *workspace_root;
  SbxAccess       workspace_read;
  SbxAccess       workspace_write;
  SbxAccess       host_read;
  SbxAccess       host_write;
  SbxAccess       network;
  SbxAccess       command;
  SbxHome         home;
  SbxIsolation    isolation;
  gboolean        ack_unconfined;
  gboolean        unix_sockets;
  SbxProfileRoot *roots;   /* sorted by path, byte order */
  guint           n_roots;
  guint64         max_processes;
  guint64         max_memory;
  guint64         max_open_files;
  SbxGuarantees   required;
  char           *fingerprint;
  GPtrArray      *links;   /* (nullable) SbxPathLink: every symlink a root was reached through */
};

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
static char *
display (const char *text)
{
  if (text == NULL)
    return g_strdup ("(null)");
  return g_utf8_make_valid (text, -1);
}

static const char *
access_word (int value)
{
  const char *word = sbx_access_to_string ((SbxAccess) value);

  return word != NULL ? word : "?";
}

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
  for (guint i = 0; i < self->roots->len; i++)
    {
      const ConfigRoot *root = &g_array_index (self->roots, ConfigRoot, i);
      ConfigRoot dup = { g_strdup (root->path), root->read, root->write };

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
 * Opens unix domain sockets (the JSON member `"unix-sockets": "allow"`).
 * By default they are closed: a host daemon listening on a pathname socket
 * inside any root the sandbox sees, even a read-only one, would accept a
 * connection (tmux, ssh ControlMaster, gpg-agent and editor sockets run
 * commands on the host), so backends that cannot mediate connect() refuse
 * socket(AF_UNIX) and leave only socketpair().  With @allow every such
 * socket under the roots becomes reachable, and the compile report says so.
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

/* ------------------------------------------------------------------------- */
/* Field names in messages */

typedef enum
{
  FIELD_WORKSPACE_ROOT,
  FIELD_WORKSPACE_READ,
  FIELD_WORKSPACE_WRITE,
  FIELD_HOST_READ,
  FIELD_HOST_WRITE,
  FIELD_NETWORK,
  FIELD_COMMAND,
  FIELD_HOME,
  FIELD_ISOLATION,
  FIELD_ACK_UNCONFINED,
  FIELD_LIMIT_PROCESSES,
  FIELD_LIMIT_MEMORY,
  FIELD_LIMIT_OPEN_FILES,
  N_FIELDS
} Field;

static const char *const api_names[N_FIELDS] = {
  "workspace root", "workspace read", "workspace write", "host read", "host write",
  "network", "command", "home", "isolation", "ack unconfined",
  "max processes", "max memory", "max open files",
};

static const char *const json_names[N_FIELDS] = {
  "workspace.root", "workspace.read", "workspace.write", "host.read", "host.write",
  "network", "command", "home", "isolation", "ack-unconfined",
  "limits.processes", "limits.memory", "limits.open-files",
};

static const char *
field_name (SbxProfileNames names,
            Field           field)
{
  return names == SBX_PROFILE_NAMES_JSON ? json_names[field] : api_names[field];
}

/* "additional root 2" / "roots[2].path", and the read/write variants. */
static char *
root_name (SbxProfileNames names,
           guint           index,
           const char     *member)
{
  if (names == SBX_PROFILE_NAMES_JSON)
    return g_strdup_printf ("roots[%u].%s", index, member);
  if (g_str_equal (member, "path"))
    return g_strdup_printf ("additional root %u", index);
  return g_strdup_printf ("additional root %u %s", index, member);
}

static gboolean
set_invalid (GError    **error,
             const char *format,
             ...) G_GNUC_PRINTF (2, 3);

static gboolean
set_invalid (GError    **error,
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

/* ------------------------------------------------------------------------- */
/* Validation helpers */

static gboolean
check_access (SbxProfileNames names,
              Field           field,
              int             value,
              GError        **error)
{
  if ((guint) value > SBX_ACCESS_ALLOW)
    return set_invalid (error, "%s: access value %d is out of range (0 deny, 1 gated, 2 allow)",
                        field_name (names, field), value);
  return TRUE;
}

/* Canonical directory for a root field; the message is "<name> (<value>):
 * <problem>" or "<name>: path is empty". */
static char *
canonical_root_for (const char  *name,
                    const char  *path,
                    GPtrArray   *links,
                    GError     **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *shown = NULL;
  char *canonical;

  if (path == NULL || path[0] == '\0')
    {
      set_invalid (error, "%s: path is empty", name);
      return NULL;
    }
  shown = display (path);
  if (!g_utf8_validate (path, -1, NULL))
    {
      set_invalid (error, "%s (%s): path is not valid UTF-8", name, shown);
      return NULL;
    }
  canonical = sbx_path_canonical_root_with_links (path, links, &local_error);
  if (canonical == NULL)
    {
      set_invalid (error, "%s (%s): %s", name, shown, local_error->message);
      return NULL;
    }
  if (!g_utf8_validate (canonical, -1, NULL))
    {
      g_autofree char *resolved = display (canonical);

      g_free (canonical);
      set_invalid (error, "%s (%s): resolves to %s, which is not valid UTF-8", name, shown, resolved);
      return NULL;
    }
  return canonical;
}

/* A validated root and where it was in the input, while sorting. */
typedef struct
{
  SbxProfileRoot root;
  guint          source;
  GPtrArray     *links;   /* SbxPathLink met while resolving it */
} SourcedRoot;

static void
sourced_root_clear (gpointer data)
{
  SourcedRoot *sourced = data;

  g_clear_pointer (&sourced->root.path, g_free);
  g_clear_pointer (&sourced->links, g_ptr_array_unref);
}

/*
 * Step 4b, the planted-symlink rule.  A symbolic link is dangerous when the
 * link itself lies inside a root the sandbox can write: the workspace or an
 * additional root whose write access is not Deny (Gated counts: a grant
 * opens it).  An earlier run of the same profile, or a symlink committed in
 * an untrusted repository, could have put it there, and following it would
 * hand the sandbox whatever it points at ("ln -s ~ out" then "--write
 * ./out").  So a root reached through such a link is refused, naming the
 * link and its target; the caller may pass the resolved path on purpose.
 * Links elsewhere (/lib64, /var/run, a link in a read-only root) are
 * followed as before.  Host write access is not a "root" here: a profile
 * that lets the sandbox write the host can already write the link's target
 * directly, so refusing the link would protect nothing.
 */
static gboolean
check_planted_links (const char      *root_label,
                     const char      *shown,
                     GPtrArray       *links,
                     const char      *workspace,
                     SbxAccess        workspace_write,
                     GArray          *roots,
                     SbxProfileNames  names,
                     GError         **error)
{
  for (guint i = 0; links != NULL && i < links->len; i++)
    {
      const SbxPathLink *link = g_ptr_array_index (links, i);
      g_autofree char *inside = NULL;

      if (workspace_write != SBX_ACCESS_DENY && sbx_path_within (link->location, workspace))
        inside = g_strdup_printf ("the writable %s (%s)",
                                  names == SBX_PROFILE_NAMES_JSON ? "workspace.root" : "workspace", workspace);
      for (guint j = 0; inside == NULL && j < roots->len; j++)
        {
          const SourcedRoot *other = &g_array_index (roots, SourcedRoot, j);

          if (other->root.write != SBX_ACCESS_DENY && sbx_path_within (link->location, other->root.path))
            {
              g_autofree char *other_name = root_name (names, other->source, "path");

              inside = g_strdup_printf ("the writable %s (%s)", other_name, other->root.path);
            }
        }
      if (inside != NULL)
        {
          g_autofree char *location = display (link->location);
          g_autofree char *target = display (link->target);

          return set_invalid (error, "%s (%s): reached through the symbolic link %s -> %s, which lies "
                              "inside %s where a sandboxed command could have planted it; pass the "
                              "resolved path if you mean it", root_label, shown, location, target, inside);
        }
    }
  return TRUE;
}

static int
compare_sourced_roots (gconstpointer a,
                       gconstpointer b)
{
  const SourcedRoot *ra = a;
  const SourcedRoot *rb = b;

  return strcmp (ra->root.path, rb->root.path);
}

static SbxGuarantees
derive_required (const SbxProfile *self)
{
  SbxGuarantees bits = SBX_GUARANTEE_ENV_SCRUB;

  if (self->isolation == SBX_ISOLATION_UNCONFINED)
    return bits;
  if (self->workspace_read != SBX_ACCESS_ALLOW || self->host_read != SBX_ACCESS_ALLOW)
    bits |= SBX_GUARANTEE_READ_BOUNDARY;
  if (self->workspace_write != SBX_ACCESS_ALLOW || self->host_write != SBX_ACCESS_ALLOW)
    bits |= SBX_GUARANTEE_WRITE_BOUNDARY;
  if (self->network != SBX_ACCESS_ALLOW)
    bits |= SBX_GUARANTEE_NETWORK_BOUNDARY;
  for (guint i = 0; i < self->n_roots; i++)
    {
      if (self->roots[i].read != SBX_ACCESS_ALLOW)
        bits |= SBX_GUARANTEE_READ_BOUNDARY;
      if (self->roots[i].write != SBX_ACCESS_ALLOW)
        bits |= SBX_GUARANTEE_WRITE_BOUNDARY;
    }
  return bits;
}

static char *
compute_fingerprint (const SbxProfile *self)
{
  g_autofree SbxFingerprintRoot *roots = g_new0 (SbxFingerprintRoot, self->n_roots + 1);
  SbxFingerprintSettings settings = {
    .version = SBX_ACCESS_VERSION,
    .workspace_root = self->workspace_root,
    .workspace_read = self->workspace_read,
    .workspace_write = self->workspace_write,
    .host_read = self->host_read,
    .host_write = self->host_write,
    .network = self->network,
    .command = self->command,
    .home = self->home,
    .isolation = self->isolation,
    .roots = roots,
    .n_roots = self->n_roots,
    .ack_unconfined = self->ack_unconfined,
    .unix_sockets = self->unix_sockets,
    .required_guarantees = self->required,
    .max_processes = self->max_processes,
    .max_memory = self->max_memory,
    .max_open_files = self->max_open_files,
  };

  for (guint i = 0; i < self->n_roots; i++)
    {
      roots[i].path = self->roots[i].path;
      roots[i].read = self->roots[i].read;
      roots[i].write = self->roots[i].write;
    }
  return sbx_fingerprint_compute (&settings);
}

static void
profile_free (SbxProfile *self)
{
  g_free (self->workspace_root);
  for (guint i = 0; i < self->n_roots; i++)
    g_free (self->roots[i].path);
  g_free (self->roots);
  g_free (self->fingerprint);
  g_clear_pointer (&self->links, g_ptr_array_unref);
  g_free (self);
}

/* A profile under construction: freed directly, not through the refcount. */
typedef SbxProfile SbxProfileOwned;
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SbxProfileOwned, profile_free)

/* "additional root 2 (/x)" / "roots[2].read" for the root at sorted
 * position @i, or "additional root (/x)" when input positions are unknown. */
static char *
sorted_root_name (const SbxProfile *self,
                  SbxProfileNames   names,
                  const guint      *sources,
                  guint             i,
                  const char       *member)
{
  g_autofree char *shown = display (self->roots[i].path);

  if (sources == NULL)
    return g_strdup_printf ("additional root (%s)", shown);
  if (names == SBX_PROFILE_NAMES_JSON)
    return g_strdup_printf ("roots[%u].%s", sources[i], member);
  return g_strdup_printf ("additional root %u (%s)", sources[i], shown);
}

/*
 * Steps 5-8 on a profile whose paths are already canonical and whose roots
 * are sorted: every rule that does not look at the filesystem, then the
 * derived fields.  Used by the constructor and by restrict (defence in
 * depth: a restricted profile is held to the same rules as a built one).
 * @sources, when not %NULL, holds each root's input index for messages.
 */
static gboolean
profile_finish (SbxProfile      *self,
                SbxProfileNames  names,
                const guint     *sources,
                GError         **error)
{
  static const Field unconfined_fields[] = {
    FIELD_WORKSPACE_READ, FIELD_WORKSPACE_WRITE, FIELD_HOST_READ, FIELD_HOST_WRITE, FIELD_NETWORK,
  };
  const SbxAccess unconfined_values[] = {
    self->workspace_read, self->workspace_write, self->host_read, self->host_write, self->network,
  };
  const guint64 limits[] = { self->max_processes, self->max_memory, self->max_open_files };
  static const Field limit_fields[] = {
    FIELD_LIMIT_PROCESSES, FIELD_LIMIT_MEMORY, FIELD_LIMIT_OPEN_FILES,
  };

  /* 5. Structural invariants the earlier steps establish, re-checked:
   * canonical spellings, no root at the workspace, sorted and unique. */
  if (!sbx_path_is_clean_absolute (self->workspace_root))
    return set_invalid (error, "%s: path is not canonical", field_name (names, FIELD_WORKSPACE_ROOT));
  for (guint i = 0; i < self->n_roots; i++)
    {
      const SbxProfileRoot *root = &self->roots[i];

      if (!sbx_path_is_clean_absolute (root->path) || g_str_equal (root->path, self->workspace_root)
          || (i > 0 && strcmp (self->roots[i - 1].path, root->path) >= 0)
          || (guint) root->read > SBX_ACCESS_ALLOW || (guint) root->write > SBX_ACCESS_ALLOW)
        {
          g_autofree char *name = sorted_root_name (self, names, sources, i, "path");

          return set_invalid (error, "%s: not a canonical, sorted, unique root", name);
        }
    }

  /* 6. unconfined consistency */
  if (self->isolation != SBX_ISOLATION_UNCONFINED)
    {
      if (self->ack_unconfined)
        return set_invalid (error, "%s: set on a sandboxed profile (only an unconfined profile is acknowledged)",
                            field_name (names, FIELD_ACK_UNCONFINED));
    }
  else
    {
      if (!self->ack_unconfined)
        return set_invalid (error, "%s: unconfined execution is not acknowledged (set %s)",
                            field_name (names, FIELD_ISOLATION),
                            field_name (names, FIELD_ACK_UNCONFINED));
      for (guint i = 0; i < G_N_ELEMENTS (unconfined_fields); i++)
        if (unconfined_values[i] != SBX_ACCESS_ALLOW)
          return set_invalid (error, "%s: an unconfined profile needs allow, not %s",
                              field_name (names, unconfined_fields[i]),
                              access_word (unconfined_values[i]));
      for (guint i = 0; i < self->n_roots; i++)
        if (self->roots[i].read != SBX_ACCESS_ALLOW || self->roots[i].write != SBX_ACCESS_ALLOW)
          {
            gboolean bad_read = self->roots[i].read != SBX_ACCESS_ALLOW;
            g_autofree char *name = sorted_root_name (self, names, sources, i,
                                                      bad_read ? "read" : "write");

            if (names == SBX_PROFILE_NAMES_JSON && sources != NULL)
              return set_invalid (error, "%s: an unconfined profile needs allow, not %s", name,
                                  access_word (bad_read ? self->roots[i].read : self->roots[i].write));
            return set_invalid (error, "%s: an unconfined profile needs read and write allow, not read %s, write %s",
                                name, access_word (self->roots[i].read), access_word (self->roots[i].write));
          }
    }

  /* 7. limits */
  for (guint i = 0; i < G_N_ELEMENTS (limits); i++)
    if (limits[i] > SBX_PROFILE_LIMIT_MAX)
      return set_invalid (error, "%s: value %" G_GUINT64_FORMAT " is out of range (at most %" G_GINT64_FORMAT ")",
                          field_name (names, limit_fields[i]), limits[i], G_MAXINT64);

  /* 8. derived fields */
  self->required = derive_required (self);
  g_free (self->fingerprint);
  self->fingerprint = compute_fingerprint (self);
  return TRUE;
}

/*
 * sbx_profile_new_with_names:
 * @config: the config
 * @names: how messages name fields (C API words or JSON member paths)
 * @error: return location for a [error@Sbx.ProfileError]
 *
 * [ctor@Sbx.Profile.new] with a choice of field names.  With
 * %SBX_PROFILE_NAMES_JSON a repeated root is refused even with equal access.
 *
 * Returns: (transfer full) (nullable): the profile
 */
SbxProfile *
sbx_profile_new_with_names (const SbxProfileConfig  *config,
                            SbxProfileNames          names,
                            GError                 **error)
{
  g_autoptr(SbxProfileOwned) self = NULL;
  g_autoptr(GArray) roots = NULL;     /* SourcedRoot */
  g_autofree guint *sources = NULL;
  const int access_values[] = {
    config->workspace_read, config->workspace_write, config->host_read,
    config->host_write, config->network, config->command,
  };
  static const Field access_fields[] = {
    FIELD_WORKSPACE_READ, FIELD_WORKSPACE_WRITE, FIELD_HOST_READ,
    FIELD_HOST_WRITE, FIELD_NETWORK, FIELD_COMMAND,
  };
  g_autofree char *workspace = NULL;
  g_autoptr(GPtrArray) workspace_links = g_ptr_array_new_with_free_func ((GDestroyNotify) sbx_path_link_free);
  g_autoptr(GPtrArray) all_links = g_ptr_array_new_with_free_func ((GDestroyNotify) sbx_path_link_free);

  /* 1. workspace root */
  workspace = canonical_root_for (field_name (names, FIELD_WORKSPACE_ROOT),
                                  config->workspace_root, workspace_links, error);
  if (workspace == NULL)
    return NULL;

  /* 2. access fields, in a fixed order */
  for (guint i = 0; i < G_N_ELEMENTS (access_fields); i++)
    if (!check_access (names, access_fields[i], access_values[i], error))
      return NULL;

  /* 3. home, isolation */
  if ((guint) config->home > SBX_HOME_REAL)
    {
      set_invalid (error, "%s: value %d is out of range (0 isolated, 1 real)",
                   field_name (names, FIELD_HOME), config->home);
      return NULL;
    }
  if ((guint) config->isolation > SBX_ISOLATION_UNCONFINED)
    {
      set_invalid (error, "%s: value %d is out of range (0 sandboxed, 1 unconfined)",
                   field_name (names, FIELD_ISOLATION), config->isolation);
      return NULL;
    }

  /* 4. additional roots, in input order */
  roots = g_array_new (FALSE, TRUE, sizeof (SourcedRoot));
  g_array_set_clear_func (roots, sourced_root_clear);
  for (guint i = 0; i < config->roots->len; i++)
    {
      const ConfigRoot *root = &g_array_index (config->roots, ConfigRoot, i);
      g_autofree char *path_name = root_name (names, i, "path");
      g_autofree char *canonical = NULL;
      g_autofree char *shown = NULL;
      g_autoptr(GPtrArray) links = NULL;
      SourcedRoot kept;
      gboolean duplicate = FALSE;

      if ((guint) root->read > SBX_ACCESS_ALLOW || (guint) root->write > SBX_ACCESS_ALLOW)
        {
          gboolean bad_read = (guint) root->read > SBX_ACCESS_ALLOW;
          g_autofree char *name = root_name (names, i, bad_read ? "read" : "write");

          set_invalid (error, "%s: access value %d is out of range (0 deny, 1 gated, 2 allow)",
                       name, bad_read ? root->read : root->write);
          return NULL;
        }
      links = g_ptr_array_new_with_free_func ((GDestroyNotify) sbx_path_link_free);
      canonical = canonical_root_for (path_name, root->path, links, error);
      if (canonical == NULL)
        return NULL;
      shown = display (root->path);
      if (g_str_equal (canonical, workspace))
        {
          set_invalid (error, "%s (%s): duplicates the workspace root", path_name, shown);
          return NULL;
        }
      for (guint j = 0; j < roots->len; j++)
        {
          const SourcedRoot *prior = &g_array_index (roots, SourcedRoot, j);
          g_autofree char *prior_name = NULL;

          if (!g_str_equal (prior->root.path, canonical))
            continue;
          prior_name = root_name (names, prior->source, "path");
          if (names == SBX_PROFILE_NAMES_JSON)
            {
              g_autofree char *resolved = display (canonical);

              set_invalid (error, "%s (%s): duplicates %s (both are %s)", path_name, shown, prior_name, resolved);
              return NULL;
            }
          if ((int) prior->root.read != root->read || (int) prior->root.write != root->write)
            {
              set_invalid (error, "%s (%s): contradicts %s (read %s, write %s vs read %s, write %s)",
                           path_name, shown, prior_name,
                           access_word (root->read), access_word (root->write),
                           access_word (prior->root.read), access_word (prior->root.write));
              return NULL;
            }
          duplicate = TRUE;
          break;
        }
      if (duplicate)
        continue;
      kept.root.path = g_steal_pointer (&canonical);
      kept.root.read = (SbxAccess) root->read;
      kept.root.write = (SbxAccess) root->write;
      kept.source = i;
      kept.links = g_steal_pointer (&links);
      g_array_append_val (roots, kept);
    }

  /* 4b. no root reached through a link planted in a writable root */
  {
    g_autofree char *shown = display (config->workspace_root);

    if (!check_planted_links (field_name (names, FIELD_WORKSPACE_ROOT), shown, workspace_links,
                              workspace, (SbxAccess) config->workspace_write, roots, names, error))
      return NULL;
    for (guint i = 0; i < workspace_links->len; i++)
      g_ptr_array_add (all_links, g_steal_pointer (&workspace_links->pdata[i]));
  }
  for (guint i = 0; i < roots->len; i++)
    {
      SourcedRoot *sourced = &g_array_index (roots, SourcedRoot, i);
      const ConfigRoot *given = &g_array_index (config->roots, ConfigRoot, sourced->source);
      g_autofree char *path_name = root_name (names, sourced->source, "path");
      g_autofree char *shown = display (given->path);

      if (!check_planted_links (path_name, shown, sourced->links, workspace,
                                (SbxAccess) config->workspace_write, roots, names, error))
        return NULL;
      for (guint j = 0; j < sourced->links->len; j++)
        g_ptr_array_add (all_links, g_steal_pointer (&sourced->links->pdata[j]));
    }

  /* 5. sorted by canonical path, byte order */
  g_array_sort (roots, compare_sourced_roots);

  self = g_new0 (SbxProfile, 1);
  g_atomic_ref_count_init (&self->ref_count);
  self->workspace_root = g_steal_pointer (&workspace);
  self->workspace_read = (SbxAccess) config->workspace_read;
  self->workspace_write = (SbxAccess) config->workspace_write;
  self->host_read = (SbxAccess) config->host_read;
  self->host_write = (SbxAccess) config->host_write;
  self->network = (SbxAccess) config->network;
  self->command = (SbxAccess) config->command;
  self->home = (SbxHome) config->home;
  self->isolation = (SbxIsolation) config->isolation;
  self->ack_unconfined = config->ack_unconfined;
  self->unix_sockets = config->unix_sockets;
  self->n_roots = roots->len;
  self->roots = g_new0 (SbxProfileRoot, roots->len + 1);
  sources = g_new0 (guint, roots->len + 1);
  for (guint i = 0; i < roots->len; i++)
    {
      SourcedRoot *sourced = &g_array_index (roots, SourcedRoot, i);

      self->roots[i] = sourced->root;
      sourced->root.path = NULL;   /* moved */
      sources[i] = sourced->source;
    }
  self->max_processes = config->max_processes;
  self->max_memory = config->max_memory;
  self->max_open_files = config->max_open_files;
  self->links = g_steal_pointer (&all_links);

  /* 6-8 */
  if (!profile_finish (self, names, sources, error))
    return NULL;
  return g_steal_pointer (&self);
}

/**
 * sbx_profile_new:
 * @config: a [struct@Sbx.ProfileConfig]
 * @error: return location for a [error@Sbx.ProfileError]
 *
 * Validates @config and builds an immutable profile from a private copy of
 * it: changing @config afterwards does not change the profile.
 *
 * Validation applies these rules in this order and reports the first
 * failure as %SBX_PROFILE_ERROR_INVALID, with a message naming the field
 * and the value ("additional root 2 (/tmp/x): path is not a directory",
 * "host write: access value 3 is out of range (0 deny, 1 gated, 2 allow)"):
 *
 * 1. the workspace root is non-empty, absolute, valid UTF-8 and an existing
 *    directory; it is cleaned and every symlink resolved;
 * 2. workspace read, workspace write, host read, host write, network and
 *    command (in this order) are valid [enum@Sbx.Access] values;
 * 3. home, then isolation, are valid;
 * 4. each additional root in order: read and write valid; path as in 1; not
 *    the workspace root; a repeat of an earlier root (same canonical path)
 *    with different access is an error, with the same access it is merged;
 * 5. roots are sorted by canonical path (byte order);
 * 6. a sandboxed profile must not be acknowledged as unconfined; an
 *    unconfined one must be, and needs workspace read/write, host
 *    read/write, network and every root's read/write at Allow;
 * 7. each resource limit is at most %G_MAXINT64;
 * 8. the required guarantees and the fingerprint are derived.
 *
 * Returns: (transfer full) (nullable): the profile, or %NULL with @error set
 *
 * Since: 0.1
 */
SbxProfile *
sbx_profile_new (const SbxProfileConfig  *config,
                 GError                 **error)
{
  g_return_val_if_fail (config != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return sbx_profile_new_with_names (config, SBX_PROFILE_NAMES_API, error);
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
    profile_free (self);
}

/**
 * sbx_profile_dup_config:
 * @self: a [struct@Sbx.Profile]
 *
 * Returns a config holding this profile's normalized values (canonical
 * paths, sorted roots), so [ctor@Sbx.Profile.new] on it gives an equal
 * profile (while the paths still resolve the same way).
 *
 * Returns: (transfer full): a new config
 *
 * Since: 0.1
 */
SbxProfileConfig *
sbx_profile_dup_config (SbxProfile *self)
{
  SbxProfileConfig *config;

  g_return_val_if_fail (self != NULL, NULL);

  config = sbx_profile_config_new ();
  sbx_profile_config_set_workspace (config, self->workspace_root, self->workspace_read, self->workspace_write);
  sbx_profile_config_set_host (config, self->host_read, self->host_write);
  sbx_profile_config_set_network (config, self->network);
  sbx_profile_config_set_command (config, self->command);
  sbx_profile_config_set_home (config, self->home);
  sbx_profile_config_set_isolation (config, self->isolation);
  sbx_profile_config_set_ack_unconfined (config, self->ack_unconfined);
  sbx_profile_config_set_unix_sockets (config, self->unix_sockets);
  for (guint i = 0; i < self->n_roots; i++)
    sbx_profile_config_add_root (config, self->roots[i].path, self->roots[i].read, self->roots[i].write);
  sbx_profile_config_set_limits (config, self->max_processes, self->max_memory, self->max_open_files);
  return config;
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
static SbxAccess
access_at_path_with_roots (const SbxProfile     *self,
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
  return access_at_path_with_roots (self, self->roots, self->n_roots, write, path);
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
 * @kind: the access kind: "command.execute", "network", "filesystem.read"
 *   or "filesystem.write"
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
    return set_invalid (error, "access for %s: no valid profile", kind);

  if (g_str_equal (kind, "command.execute") || g_str_equal (kind, "network"))
    {
      if (scope[0] != '\0')
        {
          g_autofree char *shown = display (scope);

          return set_invalid (error, "%s: scope must be empty, not \"%s\"", kind, shown);
        }
      *out_access = kind[0] == 'c' ? self->command : self->network;
      return TRUE;
    }

  if (g_str_equal (kind, "filesystem.read"))
    write = FALSE;
  else if (g_str_equal (kind, "filesystem.write"))
    write = TRUE;
  else
    {
      g_autofree char *shown = display (kind);

      return set_invalid (error, "unknown access kind \"%s\"", shown);
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
      g_autofree char *shown = display (scope);

      return set_invalid (error,
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
    return set_invalid (error, "limits.memory: \"auto\" cannot read the physical memory size");
  half = ((guint64) pages / 2) * (guint64) page_size;
  *out_bytes = MIN (half, SBX_PROFILE_AUTO_MEMORY_CAP);
  return TRUE;
}

/* ------------------------------------------------------------------------- */
/* Restrict */

typedef struct
{
  char     *path;      /* borrowed from an input */
  SbxAccess read;
  SbxAccess write;
  gboolean  in_both;
} Candidate;

static int
compare_candidates (gconstpointer a,
                    gconstpointer b)
{
  const Candidate *ca = a;
  const Candidate *cb = b;
  size_t la = strlen (ca->path);
  size_t lb = strlen (cb->path);

  if (la != lb)
    return la < lb ? -1 : 1;
  return strcmp (ca->path, cb->path);
}

static int
compare_roots (gconstpointer a,
               gconstpointer b)
{
  const SbxProfileRoot *ra = a;
  const SbxProfileRoot *rb = b;

  return strcmp (ra->path, rb->path);
}

static SbxAccess
min_access (SbxAccess a,
            SbxAccess b)
{
  return MIN (a, b);
}

/* Limits: 0 means "no limit", so it is the largest value. */
static guint64
min_limit (guint64 a,
           guint64 b)
{
  if (a == 0)
    return b;
  if (b == 0)
    return a;
  return MIN (a, b);
}

/**
 * sbx_profile_restrict:
 * @base: (nullable): a [struct@Sbx.Profile]
 * @ceiling: (nullable): a [struct@Sbx.Profile] with the same workspace root
 * @error: return location for a [error@Sbx.ProfileError]
 *
 * Narrows @base by @ceiling: the result allows nothing either input does
 * not allow.  Neither input changes.
 *
 * - Workspace, host, network and command access, home and isolation are
 *   each the minimum (Deny < Gated < Allow; isolated HOME and sandboxed
 *   win).  Resource limits are the smaller (a limit beats "no limit").
 * - The acknowledgement is kept only when the result is unconfined and both
 *   inputs acknowledged it.
 * - Filesystem access is the exact pathwise minimum: for every path P,
 *   `access_for (result, P)` equals the smaller of `access_for (base, P)` and
 *   `access_for (ceiling, P)`, on each axis.  The result's candidate roots
 *   are every root of either input, each with the minimum of what the two
 *   inputs resolve there; a candidate is dropped only when it is a root of
 *   one input alone and the roots kept so far (visited shortest path
 *   first) already resolve its path to the same access, so dropping it
 *   changes no path.  Upstream dropped nested roots whose access equalled
 *   the host's, which could widen; this cannot.
 * - A "tree:" scope is Deny unless its path is a root of the result, and
 *   never more than the pathwise minimum at its path.  A root of both inputs
 *   stays a root, so `restrict (p, p)` equals p (same fingerprint), and the
 *   result does not depend on the argument order.
 *
 * The result is re-validated (every rule that does not touch the
 * filesystem: the inputs' paths are canonical already, and resolving them
 * again could move a root) and re-fingerprinted.
 *
 * Errors: %SBX_PROFILE_ERROR_INVALID for a %NULL input,
 * %SBX_PROFILE_ERROR_WORKSPACE_MISMATCH when the workspace roots differ.
 *
 * Returns: (transfer full) (nullable): the narrowed profile, or %NULL with
 *   @error set
 *
 * Since: 0.1
 */
SbxProfile *
sbx_profile_restrict (SbxProfile  *base,
                      SbxProfile  *ceiling,
                      GError     **error)
{
  g_autoptr(SbxProfileOwned) result = NULL;
  g_autoptr(GArray) candidates = NULL;
  g_autoptr(GArray) kept = NULL;
  guint i, j;

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (base == NULL || base->fingerprint == NULL || ceiling == NULL || ceiling->fingerprint == NULL)
    {
      set_invalid (error, "restrict: %s is not a valid profile",
                   base == NULL || base->fingerprint == NULL ? "base" : "ceiling");
      return NULL;
    }
  if (!g_str_equal (base->workspace_root, ceiling->workspace_root))
    {
      g_autofree char *a = display (base->workspace_root);
      g_autofree char *b = display (ceiling->workspace_root);

      g_set_error (error, SBX_PROFILE_ERROR, SBX_PROFILE_ERROR_WORKSPACE_MISMATCH,
                   "restrict: workspace roots differ (%s vs %s)", a, b);
      return NULL;
    }

  result = g_new0 (SbxProfile, 1);
  g_atomic_ref_count_init (&result->ref_count);
  result->workspace_root = g_strdup (base->workspace_root);
  result->workspace_read = min_access (base->workspace_read, ceiling->workspace_read);
  result->workspace_write = min_access (base->workspace_write, ceiling->workspace_write);
  result->host_read = min_access (base->host_read, ceiling->host_read);
  result->host_write = min_access (base->host_write, ceiling->host_write);
  result->network = min_access (base->network, ceiling->network);
  result->command = min_access (base->command, ceiling->command);
  result->home = MIN (base->home, ceiling->home);
  result->isolation = MIN (base->isolation, ceiling->isolation);
  result->ack_unconfined = result->isolation == SBX_ISOLATION_UNCONFINED
                           && base->ack_unconfined && ceiling->ack_unconfined;
  result->unix_sockets = base->unix_sockets && ceiling->unix_sockets;
  result->max_processes = min_limit (base->max_processes, ceiling->max_processes);
  result->max_memory = min_limit (base->max_memory, ceiling->max_memory);
  result->max_open_files = min_limit (base->max_open_files, ceiling->max_open_files);

  /* Candidates: the union of both (sorted) root lists. */
  candidates = g_array_new (FALSE, FALSE, sizeof (Candidate));
  for (i = 0, j = 0; i < base->n_roots || j < ceiling->n_roots;)
    {
      Candidate c = { NULL, SBX_ACCESS_DENY, SBX_ACCESS_DENY, FALSE };
      int cmp;

      if (i == base->n_roots)
        cmp = 1;
      else if (j == ceiling->n_roots)
        cmp = -1;
      else
        cmp = strcmp (base->roots[i].path, ceiling->roots[j].path);
      if (cmp <= 0)
        c.path = base->roots[i].path;
      else
        c.path = ceiling->roots[j].path;
      c.in_both = cmp == 0;
      if (cmp <= 0)
        i++;
      if (cmp >= 0)
        j++;
      c.read = min_access (sbx_profile_access_at_path (base, FALSE, c.path),
                           sbx_profile_access_at_path (ceiling, FALSE, c.path));
      c.write = min_access (sbx_profile_access_at_path (base, TRUE, c.path),
                            sbx_profile_access_at_path (ceiling, TRUE, c.path));
      g_array_append_val (candidates, c);
    }

  /*
   * With every candidate kept, the deepest candidate (or the workspace)
   * containing any path P is at least as deep as each input's own deepest
   * root containing P, and each input resolves that candidate exactly as it
   * resolves P; so the result resolves P to the exact minimum.  Visiting
   * candidates shortest first, dropping one whose access equals what the
   * kept roots already give at its path moves the paths it decided to its
   * nearest enclosing kept root, which has that same access: no path
   * changes.  Roots of both inputs are always kept (see the doc comment).
   */
  g_array_sort (candidates, compare_candidates);
  kept = g_array_new (FALSE, FALSE, sizeof (SbxProfileRoot));
  for (i = 0; i < candidates->len; i++)
    {
      const Candidate *c = &g_array_index (candidates, Candidate, i);
      SbxProfileRoot root = { NULL, c->read, c->write };

      /* Resolve c->path against the result as built so far. */
      if (!c->in_both
          && access_at_path_with_roots (result, (SbxProfileRoot *) (void *) kept->data, kept->len,
                                        FALSE, c->path) == c->read
          && access_at_path_with_roots (result, (SbxProfileRoot *) (void *) kept->data, kept->len,
                                        TRUE, c->path) == c->write)
        continue;
      root.path = g_strdup (c->path);
      g_array_append_val (kept, root);
    }
  g_array_sort (kept, compare_roots);
  result->n_roots = kept->len;
  result->roots = (SbxProfileRoot *) (void *) g_array_free (g_steal_pointer (&kept), FALSE);

  if (!profile_finish (result, SBX_PROFILE_NAMES_API, NULL, error))
    {
      g_prefix_error (error, "restrict: ");
      return NULL;
    }
  return g_steal_pointer (&result);
}
