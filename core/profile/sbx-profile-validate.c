/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sbx-profile-struct-private.h"
#include "sbx-profile-config-private.h"

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
 *  3. home (0..1), then isolation (0..1), then denied paths (0..1).
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
  FIELD_DENIED_PATHS,
  FIELD_ACK_UNCONFINED,
  FIELD_LIMIT_PROCESSES,
  FIELD_LIMIT_MEMORY,
  FIELD_LIMIT_OPEN_FILES,
  N_FIELDS
} Field;

static const char *const api_names[N_FIELDS] = {
  "workspace root", "workspace read", "workspace write", "host read", "host write",
  "network", "command", "home", "isolation", "denied paths", "ack unconfined",
  "max processes", "max memory", "max open files",
};

static const char *const json_names[N_FIELDS] = {
  "workspace.root", "workspace.read", "workspace.write", "host.read", "host.write",
  "network", "command", "home", "isolation", "denied-paths", "ack-unconfined",
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


/* ------------------------------------------------------------------------- */
/* Validation helpers */

static gboolean
check_access (SbxProfileNames names,
              Field           field,
              int             value,
              GError        **error)
{
  if ((guint) value > SBX_ACCESS_ALLOW)
    return sbx_profile_set_invalid (error, "%s: access value %d is out of range (0 deny, 1 gated, 2 allow)",
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
      sbx_profile_set_invalid (error, "%s: path is empty", name);
      return NULL;
    }
  shown = sbx_profile_display (path);
  if (!g_utf8_validate (path, -1, NULL))
    {
      sbx_profile_set_invalid (error, "%s (%s): path is not valid UTF-8", name, shown);
      return NULL;
    }
  canonical = sbx_path_canonical_root_with_links (path, links, &local_error);
  if (canonical == NULL)
    {
      sbx_profile_set_invalid (error, "%s (%s): %s", name, shown, local_error->message);
      return NULL;
    }
  if (g_str_equal (canonical, "/"))
    {
      /* Neither backend can mount or scope the filesystem root as one root
       * among others (it is the view itself), so a profile saying so would
       * be reported as access it never gets.  The whole host is the host
       * read/write access. */
      g_free (canonical);
      sbx_profile_set_invalid (error, "%s (%s): resolves to the filesystem root “/”; a root is a "
                                      "directory below it (the whole host is the host read/write access)",
                               name, shown);
      return NULL;
    }
  if (!g_utf8_validate (canonical, -1, NULL))
    {
      g_autofree char *resolved = sbx_profile_display (canonical);

      g_free (canonical);
      sbx_profile_set_invalid (error, "%s (%s): resolves to %s, which is not valid UTF-8", name, shown, resolved);
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
          g_autofree char *location = sbx_profile_display (link->location);
          g_autofree char *target = sbx_profile_display (link->target);

          return sbx_profile_set_invalid (error, "%s (%s): reached through the symbolic link %s -> %s, which lies "
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

static int
compare_strings (gconstpointer a,
                 gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/* The host sockets the sandbox may connect to (SbxProfileConfig's
 * host_sockets): absolute, canonical (a name the supervisor compares byte
 * for byte with what the target connects to), shorter than sun_path, no
 * two alike (allowed or gated); sorted, the gated ones in *@gated_out.
 * NULL with @error set otherwise. */
static char **
canonical_host_sockets (const SbxProfileConfig *config,
                        char                 ***gated_out,
                        GError                **error)
{
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) gated = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) seen = g_ptr_array_new ();

  if (config->host_sockets->len > SBX_PROFILE_MAX_HOST_SOCKETS)
    {
      sbx_profile_set_invalid (error, "host-sockets: %u entries (at most %d)", config->host_sockets->len,
                               SBX_PROFILE_MAX_HOST_SOCKETS);
      return NULL;
    }
  for (guint i = 0; i < config->host_sockets->len; i++)
    {
      const char *path = g_ptr_array_index (config->host_sockets, i);
      g_autofree char *shown = sbx_profile_display (path);
      g_auto(GStrv) parts = NULL;

      if (path[0] != '/')
        {
          sbx_profile_set_invalid (error, "host-sockets[%u] (%s): path is not absolute", i, shown);
          return NULL;
        }
      if (strlen (path) >= 108)
        {
          sbx_profile_set_invalid (error, "host-sockets[%u] (%s): %zu bytes, a unix socket address holds at most "
                                          "107", i, shown, strlen (path));
          return NULL;
        }
      parts = g_strsplit (path + 1, "/", -1);
      for (guint k = 0; parts[k] != NULL; k++)
        if (parts[k][0] == '\0' || strcmp (parts[k], ".") == 0 || strcmp (parts[k], "..") == 0)
          {
            sbx_profile_set_invalid (error, "host-sockets[%u] (%s): not canonical (an empty, \".\" or \"..\" "
                                            "component)", i, shown);
            return NULL;
          }
      for (guint k = 0; k < seen->len; k++)
        if (strcmp (g_ptr_array_index (seen, k), path) == 0)
          {
            sbx_profile_set_invalid (error, "host-sockets[%u] (%s): named twice", i, shown);
            return NULL;
          }
      g_ptr_array_add (seen, (gpointer) path);
      if (g_array_index (config->host_socket_access, SbxAccess, i) == SBX_ACCESS_GATED && config->unix_sockets)
        {
          sbx_profile_set_invalid (error, "host-sockets[%u] (%s): gated, but \"unix-sockets\": \"allow\" opens "
                                          "every unix socket, so no grant could gate it", i, shown);
          return NULL;
        }
      if (g_array_index (config->host_socket_access, SbxAccess, i) == SBX_ACCESS_GATED)
        g_ptr_array_add (gated, g_strdup (path));
      else
        g_ptr_array_add (out, g_strdup (path));
    }
  g_ptr_array_sort (out, compare_strings);
  g_ptr_array_add (out, NULL);
  g_ptr_array_sort (gated, compare_strings);
  g_ptr_array_add (gated, NULL);
  *gated_out = (char **) g_ptr_array_free (g_steal_pointer (&gated), FALSE);
  return (char **) g_ptr_array_free (g_steal_pointer (&out), FALSE);
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
    .denied_paths = self->denied_paths,
    .host_sockets = (const char * const *) self->host_sockets,
    .gated_host_sockets = (const char * const *) self->gated_host_sockets,
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


/* "additional root 2 (/x)" / "roots[2].read" for the root at sorted
 * position @i, or "additional root (/x)" when input positions are unknown. */
static char *
sorted_root_name (const SbxProfile *self,
                  SbxProfileNames   names,
                  const guint      *sources,
                  guint             i,
                  const char       *member)
{
  g_autofree char *shown = sbx_profile_display (self->roots[i].path);

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
gboolean
sbx_profile_finish (SbxProfile      *self,
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
    return sbx_profile_set_invalid (error, "%s: path is not canonical", field_name (names, FIELD_WORKSPACE_ROOT));
  for (guint i = 0; i < self->n_roots; i++)
    {
      const SbxProfileRoot *root = &self->roots[i];

      if (!sbx_path_is_clean_absolute (root->path) || g_str_equal (root->path, self->workspace_root)
          || (i > 0 && strcmp (self->roots[i - 1].path, root->path) >= 0)
          || (guint) root->read > SBX_ACCESS_ALLOW || (guint) root->write > SBX_ACCESS_ALLOW)
        {
          g_autofree char *name = sorted_root_name (self, names, sources, i, "path");

          return sbx_profile_set_invalid (error, "%s: not a canonical, sorted, unique root", name);
        }
    }

  /* 6. unconfined consistency */
  if (self->isolation != SBX_ISOLATION_UNCONFINED)
    {
      if (self->ack_unconfined)
        return sbx_profile_set_invalid (error, "%s: set on a sandboxed profile (only an unconfined profile is acknowledged)",
                                        field_name (names, FIELD_ACK_UNCONFINED));
    }
  else
    {
      if (!self->ack_unconfined)
        return sbx_profile_set_invalid (error, "%s: unconfined execution is not acknowledged (set %s)",
                                        field_name (names, FIELD_ISOLATION),
                                        field_name (names, FIELD_ACK_UNCONFINED));
      for (guint i = 0; i < G_N_ELEMENTS (unconfined_fields); i++)
        if (unconfined_values[i] != SBX_ACCESS_ALLOW)
          return sbx_profile_set_invalid (error, "%s: an unconfined profile needs allow, not %s",
                                          field_name (names, unconfined_fields[i]),
                                          sbx_profile_access_word (unconfined_values[i]));
      for (guint i = 0; i < self->n_roots; i++)
        if (self->roots[i].read != SBX_ACCESS_ALLOW || self->roots[i].write != SBX_ACCESS_ALLOW)
          {
            gboolean bad_read = self->roots[i].read != SBX_ACCESS_ALLOW;
            g_autofree char *name = sorted_root_name (self, names, sources, i,
                                                      bad_read ? "read" : "write");

            if (names == SBX_PROFILE_NAMES_JSON && sources != NULL)
              return sbx_profile_set_invalid (error, "%s: an unconfined profile needs allow, not %s", name,
                                              sbx_profile_access_word (bad_read ? self->roots[i].read : self->roots[i].write));
            return sbx_profile_set_invalid (error, "%s: an unconfined profile needs read and write allow, not read %s, write %s",
                                            name, sbx_profile_access_word (self->roots[i].read), sbx_profile_access_word (self->roots[i].write));
          }
    }

  /* 7. limits */
  for (guint i = 0; i < G_N_ELEMENTS (limits); i++)
    if (limits[i] > SBX_PROFILE_LIMIT_MAX)
      return sbx_profile_set_invalid (error, "%s: value %" G_GUINT64_FORMAT " is out of range (at most %" G_GINT64_FORMAT ")",
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
  g_auto(GStrv) host_sockets = NULL;
  g_auto(GStrv) gated_host_sockets = NULL;
  g_autoptr(GPtrArray) workspace_links = g_ptr_array_new_with_free_func ((GDestroyNotify) sbx_path_link_free);
  g_autoptr(GPtrArray) all_links = g_ptr_array_new_with_free_func ((GDestroyNotify) sbx_path_link_free);

  /* 0. host sockets (no file system access) */
  host_sockets = canonical_host_sockets (config, &gated_host_sockets, error);
  if (host_sockets == NULL)
    return NULL;

  /* 1. workspace root */
  workspace = canonical_root_for (field_name (names, FIELD_WORKSPACE_ROOT),
                                  config->workspace_root, workspace_links, error);
  if (workspace == NULL)
    return NULL;

  /* 2. access fields, in a fixed order */
  for (guint i = 0; i < G_N_ELEMENTS (access_fields); i++)
    if (!check_access (names, access_fields[i], access_values[i], error))
      return NULL;

  /* 3. home, isolation, denied paths */
  if ((guint) config->home > SBX_HOME_REAL)
    {
      sbx_profile_set_invalid (error, "%s: value %d is out of range (0 isolated, 1 real)",
                               field_name (names, FIELD_HOME), config->home);
      return NULL;
    }
  if ((guint) config->isolation > SBX_ISOLATION_UNCONFINED)
    {
      sbx_profile_set_invalid (error, "%s: value %d is out of range (0 sandboxed, 1 unconfined)",
                               field_name (names, FIELD_ISOLATION), config->isolation);
      return NULL;
    }
  if ((guint) config->denied_paths > SBX_DENIED_PATHS_NOT_FOUND)
    {
      sbx_profile_set_invalid (error, "%s: value %d is out of range (0 permission-denied, 1 not-found)",
                               field_name (names, FIELD_DENIED_PATHS), config->denied_paths);
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

          sbx_profile_set_invalid (error, "%s: access value %d is out of range (0 deny, 1 gated, 2 allow)",
                                   name, bad_read ? root->read : root->write);
          return NULL;
        }
      links = g_ptr_array_new_with_free_func ((GDestroyNotify) sbx_path_link_free);
      canonical = canonical_root_for (path_name, root->path, links, error);
      if (canonical == NULL)
        return NULL;
      shown = sbx_profile_display (root->path);
      if (g_str_equal (canonical, workspace))
        {
          sbx_profile_set_invalid (error, "%s (%s): duplicates the workspace root", path_name, shown);
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
              g_autofree char *resolved = sbx_profile_display (canonical);

              sbx_profile_set_invalid (error, "%s (%s): duplicates %s (both are %s)", path_name, shown, prior_name, resolved);
              return NULL;
            }
          if ((int) prior->root.read != root->read || (int) prior->root.write != root->write)
            {
              sbx_profile_set_invalid (error, "%s (%s): contradicts %s (read %s, write %s vs read %s, write %s)",
                                       path_name, shown, prior_name,
                                       sbx_profile_access_word (root->read), sbx_profile_access_word (root->write),
                                       sbx_profile_access_word (prior->root.read), sbx_profile_access_word (prior->root.write));
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
    g_autofree char *shown = sbx_profile_display (config->workspace_root);

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
      g_autofree char *shown = sbx_profile_display (given->path);

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
  self->denied_paths = (SbxDeniedPaths) config->denied_paths;
  self->host_sockets = g_steal_pointer (&host_sockets);
  self->gated_host_sockets = g_steal_pointer (&gated_host_sockets);
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
  if (!sbx_profile_finish (self, names, sources, error))
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
 * 3. home, then isolation, then denied paths, are valid;
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
  sbx_profile_config_set_denied_paths (config, self->denied_paths);
  for (guint i = 0; self->host_sockets[i] != NULL; i++)
    sbx_profile_config_add_host_socket (config, self->host_sockets[i]);
  for (guint i = 0; self->gated_host_sockets[i] != NULL; i++)
    sbx_profile_config_add_gated_host_socket (config, self->gated_host_sockets[i]);
  for (guint i = 0; i < self->n_roots; i++)
    sbx_profile_config_add_root (config, self->roots[i].path, self->roots[i].read, self->roots[i].write);
  sbx_profile_config_set_limits (config, self->max_processes, self->max_memory, self->max_open_files);
  return config;
}
