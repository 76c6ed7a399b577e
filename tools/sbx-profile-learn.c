/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx profile learn's computation: from the denials of one run to the
 * narrowest profile change that would have allowed them.
 *
 * The rules, each a reason a person reviewing the diff can check:
 *  - Only what the base left to its defaults is changed: the host access
 *    (by a new root), the network scalar, the command scalar, a host socket
 *    the profile does not name.  An entry the profile wrote that denies or
 *    gates the access (a root, a gated host socket) is the author's choice:
 *    it is listed, with the approval a gated one takes per run, and never
 *    widened.
 *  - A filesystem denial of P under the host access becomes a root at the
 *    nearest existing directory at or above P (P itself when it is one): a
 *    root is a directory tree, and no narrower one holds P.  Read, exec and
 *    list open the root's read, write its write; the other axis keeps what
 *    the base gives there, so nothing else changes.  The host access
 *    itself is never widened: a root at / (the whole host) cannot be named
 *    and is listed instead.
 *  - Roots merge: one inside another with no more access on either axis is
 *    dropped, and one kept inside another carries at least the outer one's
 *    access (the longest root decides a path, so a nested root with less
 *    would take access away).
 *  - A refused connection with a grant makes the network at least gated;
 *    the profile has no per-target list, so the grants are listed as the
 *    approvals a run needs.  A refused name is the same with the port left
 *    to the person (the name was refused before any connection).
 *  - A refused command start opens "command": "allow"; the command never
 *    ran, so the notes say to learn again with the changed profile.
 *  - A denial no grant opens (a metadata address, an abstract socket) is
 *    listed with its reason, never turned into a change.
 */
#include "sbx-profile-learn.h"

#include <stdarg.h>
#include <string.h>

#include "sbx-changes-diff-private.h"

#define LEARN_ROOT_READ  1u
#define LEARN_ROOT_WRITE 2u

struct _SbxLearn
{
  SbxProfile *base;           /* (owned) */
  GHashTable *roots;          /* canonical-looking dir (owned) -> LEARN_ROOT_* bits */
  GPtrArray  *sockets;        /* host socket paths to name (owned strings), in order */
  GPtrArray  *names;          /* refused names (owned strings), in order */
  GPtrArray  *approvals;      /* "CLASS:TARGET" (owned strings, NULL-terminated after compute) */
  GPtrArray  *notes;          /* lines (owned strings, NULL-terminated after compute) */
  GHashTable *seen;           /* approvals and notes already added (borrowed keys) */
  SbxAccess   network;        /* what the changed profile's network is at least */
  SbxAccess   command;        /* likewise for command */
  guint64     dropped;
  char       *outcome;        /* (nullable) how the command ended */
  SbxProfile *result;         /* (nullable) (owned) after compute */
};

SbxLearn *
sbx_learn_new (SbxProfile *base)
{
  SbxLearn *self = g_new0 (SbxLearn, 1);

  self->base = sbx_profile_ref (base);
  self->roots = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->sockets = g_ptr_array_new_with_free_func (g_free);
  self->names = g_ptr_array_new_with_free_func (g_free);
  self->approvals = g_ptr_array_new_with_free_func (g_free);
  self->notes = g_ptr_array_new_with_free_func (g_free);
  self->seen = g_hash_table_new (g_str_hash, g_str_equal);
  self->network = sbx_profile_get_network (base);
  self->command = sbx_profile_get_command (base);
  return self;
}

void
sbx_learn_free (SbxLearn *self)
{
  if (self == NULL)
    return;
  g_hash_table_unref (self->seen);
  g_hash_table_unref (self->roots);
  g_ptr_array_unref (self->sockets);
  g_ptr_array_unref (self->names);
  g_ptr_array_unref (self->approvals);
  g_ptr_array_unref (self->notes);
  g_clear_pointer (&self->result, sbx_profile_unref);
  g_free (self->outcome);
  sbx_profile_unref (self->base);
  g_free (self);
}

/* Appends @text (taken) to @list unless it is there already. */
static void
add_unique (SbxLearn  *self,
            GPtrArray *list,
            char      *text)
{
  g_return_if_fail (self->result == NULL);
  if (g_hash_table_contains (self->seen, text))
    {
      g_free (text);
      return;
    }
  g_ptr_array_add (list, text);
  g_hash_table_add (self->seen, text);
}

void
sbx_learn_add_note (SbxLearn   *self,
                    const char *format,
                    ...)
{
  va_list ap;
  char *text;

  va_start (ap, format);
  text = g_strdup_vprintf (format, ap);
  va_end (ap);
  add_unique (self, self->notes, text);
}

static void
add_approval (SbxLearn   *self,
              const char *grant_class,
              const char *grant_target)
{
  add_unique (self, self->approvals, g_strconcat (grant_class, ":", grant_target, NULL));
}

/* "denied OP TARGET" (REASON) as the notes start each line. */
static char *
denial_words (SbxDenialOperation operation,
              const char        *target,
              const char        *reason)
{
  return g_strdup_printf ("denied %s %s%s%s%s", sbx_denial_operation_to_string (operation), target,
                          reason != NULL ? " (" : "", reason != NULL ? reason : "", reason != NULL ? ")" : "");
}

/* Absolute, no empty, "." or ".." component, no trailing slash. */
static gboolean
is_clean_absolute (const char *path)
{
  g_auto(GStrv) parts = NULL;

  if (path[0] != '/' || (path[1] != '\0' && g_str_has_suffix (path, "/")))
    return FALSE;
  if (path[1] == '\0')
    return TRUE;
  parts = g_strsplit (path + 1, "/", -1);
  for (guint i = 0; parts[i] != NULL; i++)
    if (parts[i][0] == '\0' || g_str_equal (parts[i], ".") || g_str_equal (parts[i], ".."))
      return FALSE;
  return TRUE;
}

/* @path is @root or below it, at a '/' boundary. */
static gboolean
path_in (const char *path,
         const char *root)
{
  gsize n = strlen (root);

  return strncmp (path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* The configured root (the workspace or an additional root) deciding
 * @path: the longest containing it.  FALSE when the host access does.
 * @out_path is borrowed from the profile. */
static gboolean
covering_root (SbxProfile  *profile,
               const char  *path,
               const char **out_path,
               SbxAccess   *out_read,
               SbxAccess   *out_write)
{
  const char *best = NULL;
  gsize best_len = 0;

  if (path_in (path, sbx_profile_get_workspace_root (profile)))
    {
      best = sbx_profile_get_workspace_root (profile);
      best_len = strlen (best);
      *out_read = sbx_profile_get_workspace_read (profile);
      *out_write = sbx_profile_get_workspace_write (profile);
    }
  for (guint i = 0; i < sbx_profile_get_n_roots (profile); i++)
    {
      const char *root = sbx_profile_get_root_path (profile, i);

      if (path_in (path, root) && strlen (root) > best_len)
        {
          best = root;
          best_len = strlen (root);
          *out_read = sbx_profile_get_root_read (profile, i);
          *out_write = sbx_profile_get_root_write (profile, i);
        }
    }
  *out_path = best;
  return best != NULL;
}

/* The nearest existing directory at or above @path (lexically: the host
 * resolves any symlink in it when the profile is built). */
static char *
nearest_directory (const char *path)
{
  g_autofree char *dir = g_strdup (path);

  while (!g_file_test (dir, G_FILE_TEST_IS_DIR))
    {
      char *parent = g_path_get_dirname (dir);

      g_free (dir);
      dir = parent;
    }
  return g_steal_pointer (&dir);
}

static void
learn_path (SbxLearn          *self,
            SbxDenialOperation operation,
            const char        *target,
            const char        *grant_class,
            const char        *grant_target,
            const char        *reason)
{
  gboolean write = operation == SBX_DENIAL_OPERATION_WRITE;
  const char *axis = write ? "write" : "read";
  g_autofree char *what = denial_words (operation, target, reason);
  g_autofree char *dir = NULL;
  const char *root = NULL;
  SbxAccess read_access = SBX_ACCESS_DENY, write_access = SBX_ACCESS_DENY, access;
  gpointer bits;

  if (!is_clean_absolute (target))
    {
      sbx_learn_add_note (self, "%s: not an absolute clean path; no profile change names it", what);
      return;
    }
  if (covering_root (self->base, target, &root, &read_access, &write_access))
    {
      access = write ? write_access : read_access;
      if (access == SBX_ACCESS_DENY)
        sbx_learn_add_note (self, "%s: the profile's root %s denies %s; left as written", what, root, axis);
      else if (access == SBX_ACCESS_GATED)
        {
          sbx_learn_add_note (self, "%s: the profile's root %s gates %s; left as written (approve it per run)",
                              what, root, axis);
          if (grant_class != NULL)
            add_approval (self, grant_class, grant_target);
        }
      else
        sbx_learn_add_note (self, "%s: the profile's root %s already allows %s; something else refused it",
                            what, root, axis);
      return;
    }
  access = write ? sbx_profile_get_host_write (self->base) : sbx_profile_get_host_read (self->base);
  if (access == SBX_ACCESS_ALLOW)
    {
      sbx_learn_add_note (self, "%s: the profile already allows host %s; something else refused it", what, axis);
      return;
    }
  dir = nearest_directory (target);
  if (g_str_equal (dir, "/"))
    {
      sbx_learn_add_note (self, "%s: the narrowest root would be / (the whole host), which a profile "
                                "cannot name; host %s \"allow\" would open it (not proposed)", what, axis);
      return;
    }
  bits = g_hash_table_lookup (self->roots, dir);
  g_hash_table_insert (self->roots, g_strdup (dir),
                       GUINT_TO_POINTER (GPOINTER_TO_UINT (bits) | (write ? LEARN_ROOT_WRITE : LEARN_ROOT_READ)));
}

static gboolean
strv_has (const char *const *strv,
          const char        *text)
{
  return strv != NULL && g_strv_contains (strv, text);
}

static gboolean
list_has (GPtrArray  *list,
          const char *text)
{
  for (guint i = 0; i < list->len; i++)
    if (g_str_equal (list->pdata[i], text))
      return TRUE;
  return FALSE;
}

static void
raise_network (SbxLearn *self)
{
  if (self->network == SBX_ACCESS_DENY)
    self->network = SBX_ACCESS_GATED;
}

static void
learn_network (SbxLearn          *self,
               SbxDenialOperation operation,
               const char        *target,
               const char        *grant_class,
               const char        *grant_target,
               const char        *reason)
{
  g_autofree char *what = denial_words (operation, target, reason);

  if (operation == SBX_DENIAL_OPERATION_CONNECT)
    {
      if (grant_class == NULL)
        {
          sbx_learn_add_note (self, "%s: no grant opens it, so no profile change does", what);
          return;
        }
      raise_network (self);
      add_approval (self, grant_class, grant_target);
      return;
    }
  /* A name: the stub refused it before any connection, so the port is
   * unknown; a name never reachable stays listed. */
  {
    g_autofree char *text = g_strdup_printf ("tcp:%s:443", target);
    g_autoptr(SbxNetworkTarget) parsed = sbx_network_target_parse (text, NULL);
    g_autoptr(GError) error = NULL;

    if (parsed == NULL || sbx_network_target_get_hostname (parsed) == NULL)
      {
        sbx_learn_add_note (self, "%s: not a host name a grant can name", what);
        return;
      }
    if (!sbx_network_target_check_reachable (parsed, &error))
      {
        sbx_learn_add_note (self, "%s: %s", what, error->message);
        return;
      }
    raise_network (self);
    if (!list_has (self->names, target))
      g_ptr_array_add (self->names, g_strdup (target));
  }
}

static void
learn_socket (SbxLearn   *self,
              const char *target,
              const char *grant_class,
              const char *grant_target,
              const char *reason)
{
  g_autofree char *what = denial_words (SBX_DENIAL_OPERATION_UNIX_CONNECT, target, reason);

  if (target[0] != '/')
    sbx_learn_add_note (self, "%s: an abstract socket outside the sandbox; no profile change opens it", what);
  else if (strv_has (sbx_profile_get_gated_host_sockets (self->base), target))
    {
      sbx_learn_add_note (self, "%s: the profile gates this host socket; left as written (approve it per run)",
                          what);
      if (grant_class != NULL)
        add_approval (self, grant_class, grant_target);
    }
  else if (sbx_profile_get_unix_sockets (self->base)
           || strv_has (sbx_profile_get_host_sockets (self->base), target))
    sbx_learn_add_note (self, "%s: the profile already allows this socket; something else refused it", what);
  else if (!is_clean_absolute (target))
    sbx_learn_add_note (self, "%s: not a canonical path \"host-sockets\" can name", what);
  else
    {
      if (list_has (self->sockets, target))
        return;
      g_ptr_array_add (self->sockets, g_strdup (target));
    }
}

static void
learn_command (SbxLearn   *self,
               const char *target,
               const char *reason)
{
  g_autofree char *what = denial_words (SBX_DENIAL_OPERATION_COMMAND_START, target, reason);

  if (self->command == SBX_ACCESS_ALLOW)
    {
      sbx_learn_add_note (self, "%s: the profile already allows commands; something else refused it", what);
      return;
    }
  if (self->command == SBX_ACCESS_GATED)
    sbx_learn_add_note (self, "%s: \"command\": \"allow\" opens every start; to keep asking, leave it gated "
                              "and approve each run (--approve %s)", what, SBX_GRANT_CLASS_COMMAND_START);
  sbx_learn_add_note (self, "the command did not start, so nothing else it needs was learned: "
                            "learn again with the changed profile (--output FILE, then --profile FILE)");
  self->command = SBX_ACCESS_ALLOW;
}

void
sbx_learn_add (SbxLearn          *self,
               SbxDenialOperation operation,
               const char        *target,
               const char        *grant_class,
               const char        *grant_target,
               const char        *reason)
{
  g_return_if_fail (self != NULL && target != NULL);
  g_return_if_fail ((grant_class == NULL) == (grant_target == NULL));

  switch (operation)
    {
    case SBX_DENIAL_OPERATION_READ:
    case SBX_DENIAL_OPERATION_WRITE:
    case SBX_DENIAL_OPERATION_EXEC:
    case SBX_DENIAL_OPERATION_LIST:
      learn_path (self, operation, target, grant_class, grant_target, reason);
      break;
    case SBX_DENIAL_OPERATION_CONNECT:
    case SBX_DENIAL_OPERATION_RESOLVE:
      learn_network (self, operation, target, grant_class, grant_target, reason);
      break;
    case SBX_DENIAL_OPERATION_UNIX_CONNECT:
      learn_socket (self, target, grant_class, grant_target, reason);
      break;
    case SBX_DENIAL_OPERATION_COMMAND_START:
      learn_command (self, target, reason);
      break;
    default:
      sbx_learn_add_note (self, "denied %s: an operation this version of sbx does not know", target);
      break;
    }
}

void
sbx_learn_add_denial (SbxLearn  *self,
                      SbxDenial *denial)
{
  sbx_learn_add (self, sbx_denial_get_operation (denial), sbx_denial_get_target (denial),
                 sbx_denial_get_grant_class (denial), sbx_denial_get_grant_target (denial),
                 sbx_denial_get_reason (denial));
}

void
sbx_learn_set_outcome (SbxLearn   *self,
                       const char *outcome)
{
  g_free (self->outcome);
  self->outcome = g_strdup (outcome);
}

void
sbx_learn_set_dropped (SbxLearn *self,
                       guint64   dropped)
{
  self->dropped = dropped;
}

static gint
compare_length (gconstpointer a,
                gconstpointer b)
{
  const char *x = *(const char *const *) a;
  const char *y = *(const char *const *) b;
  gsize lx = strlen (x), ly = strlen (y);

  return lx != ly ? (lx < ly ? -1 : 1) : strcmp (x, y);
}

typedef struct
{
  char     *path;
  SbxAccess read;
  SbxAccess write;
} LearnRoot;

static void
learn_root_clear (gpointer data)
{
  g_free (((LearnRoot *) data)->path);
}

/* The roots to add, merged: shortest first, each inheriting from the
 * nearest kept root around it (else the host access), dropped when it adds
 * nothing to that. */
static GArray *
merged_roots (SbxLearn *self)
{
  g_autofree gpointer *paths = (gpointer *) g_hash_table_get_keys_as_array (self->roots, NULL);
  guint n = g_hash_table_size (self->roots);
  GArray *kept = g_array_new (FALSE, FALSE, sizeof (LearnRoot));

  g_array_set_clear_func (kept, learn_root_clear);
  qsort (paths, n, sizeof *paths, compare_length);
  for (guint i = 0; i < n; i++)
    {
      guint bits = GPOINTER_TO_UINT (g_hash_table_lookup (self->roots, paths[i]));
      SbxAccess outer_read = sbx_profile_get_host_read (self->base);
      SbxAccess outer_write = sbx_profile_get_host_write (self->base);
      gboolean nested = FALSE;
      LearnRoot root;

      for (guint k = kept->len; k-- > 0 && !nested;)
        {
          LearnRoot *outer = &g_array_index (kept, LearnRoot, k);

          if (path_in (paths[i], outer->path))
            {
              outer_read = outer->read;
              outer_write = outer->write;
              nested = TRUE;
            }
        }
      root.read = (bits & LEARN_ROOT_READ) != 0 ? SBX_ACCESS_ALLOW : outer_read;
      root.write = (bits & LEARN_ROOT_WRITE) != 0 ? SBX_ACCESS_ALLOW : outer_write;
      if (nested && root.read == outer_read && root.write == outer_write)
        continue;
      root.path = g_strdup (paths[i]);
      g_array_append_val (kept, root);
    }
  return kept;
}

/* The base's configuration with @root (or the host socket @socket) added
 * validates: the profile's own rules (an existing directory not reached
 * through a planted link; a canonical socket path short enough...). */
static gboolean
addition_validates (SbxLearn        *self,
                    const LearnRoot *root,
                    const char      *socket,
                    GError         **error)
{
  g_autoptr(SbxProfileConfig) config = sbx_profile_dup_config (self->base);
  g_autoptr(SbxProfile) profile = NULL;

  if (root != NULL)
    sbx_profile_config_add_root (config, root->path, root->read, root->write);
  else
    sbx_profile_config_add_host_socket (config, socket);
  profile = sbx_profile_new (config, error);
  return profile != NULL;
}

/* A refused name, unless a refused connection to it already names its
 * grant: the port is the person's to fill in. */
static void
note_names (SbxLearn *self)
{
  for (guint i = 0; i < self->names->len; i++)
    {
      const char *name = self->names->pdata[i];
      g_autofree char *prefix = g_strdup_printf ("%s:tcp:%s:", SBX_GRANT_CLASS_NETWORK_PROXY_TARGET, name);
      gboolean named = FALSE;

      for (guint k = 0; k < self->approvals->len && !named; k++)
        named = g_str_has_prefix (self->approvals->pdata[k], prefix);
      if (!named)
        sbx_learn_add_note (self, "denied resolve %s: approve %sPORT with the port the tool connects to "
                                  "(the name was refused before any connection)", name, prefix);
    }
}

SbxProfile *
sbx_learn_compute (SbxLearn *self,
                   GError  **error)
{
  g_autoptr(SbxProfileConfig) config = NULL;
  g_autoptr(GArray) roots = NULL;
  SbxProfile *result;

  g_return_val_if_fail (self != NULL, NULL);

  if (self->result != NULL)
    return sbx_profile_ref (self->result);
  config = sbx_profile_dup_config (self->base);
  roots = merged_roots (self);
  for (guint i = 0; i < roots->len; i++)
    {
      const LearnRoot *root = &g_array_index (roots, LearnRoot, i);
      g_autoptr(GError) local = NULL;

      if (!addition_validates (self, root, NULL, &local))
        {
          sbx_learn_add_note (self, "root %s: left out: %s", root->path, local->message);
          continue;
        }
      sbx_profile_config_add_root (config, root->path, root->read, root->write);
    }
  for (guint i = 0; i < self->sockets->len; i++)
    {
      g_autoptr(GError) local = NULL;

      if (!addition_validates (self, NULL, self->sockets->pdata[i], &local))
        {
          sbx_learn_add_note (self, "host-sockets %s: left out: %s", (const char *) self->sockets->pdata[i],
                              local->message);
          continue;
        }
      sbx_profile_config_add_host_socket (config, self->sockets->pdata[i]);
      sbx_learn_add_note (self, "host-sockets %s: the daemon behind it acts for the sandbox outside every "
                                "boundary (a container engine's socket or the system bus is root on the host; "
                                "a session bus or an ssh agent acts as you)", (const char *) self->sockets->pdata[i]);
    }
  sbx_profile_config_set_network (config, self->network);
  sbx_profile_config_set_command (config, self->command);
  note_names (self);
  if (self->dropped > 0)
    sbx_learn_add_note (self, "%" G_GUINT64_FORMAT " more refusals did not fit the run's list of denials: "
                              "the change is incomplete; learn again with the changed profile", self->dropped);
  result = sbx_profile_new (config, error);
  if (result == NULL)
    return NULL;
  g_ptr_array_add (self->approvals, NULL);
  g_ptr_array_add (self->notes, NULL);
  self->result = result;
  return sbx_profile_ref (result);
}

const char *const *
sbx_learn_get_approvals (SbxLearn *self)
{
  g_return_val_if_fail (self->result != NULL, NULL);

  return (const char *const *) self->approvals->pdata;
}

const char *const *
sbx_learn_get_notes (SbxLearn *self)
{
  g_return_val_if_fail (self->result != NULL, NULL);

  return (const char *const *) self->notes->pdata;
}

/* One approval as `sbx run` takes it: a network target as --allow-host
 * (which also gives the run the egress route the grant needs), anything
 * else as --approve. */
static void
append_approval (GString    *out,
                 const char *approval)
{
  const char *prefix = SBX_GRANT_CLASS_NETWORK_PROXY_TARGET ":tcp:";

  if (g_str_has_prefix (approval, prefix))
    g_string_append_printf (out, "#   --allow-host %s   (the grant %s)\n", approval + strlen (prefix), approval);
  else
    g_string_append_printf (out, "#   --approve %s\n", approval);
}

char *
sbx_learn_format (SbxLearn   *self,
                  const char *label)
{
  g_autofree char *old_json = NULL;
  g_autofree char *new_json = NULL;
  g_autofree char *new_label = NULL;
  GString *out;

  g_return_val_if_fail (self->result != NULL, NULL);

  out = g_string_new (NULL);
  old_json = sbx_profile_to_json (self->base);
  new_json = sbx_profile_to_json (self->result);
  if (!g_str_equal (old_json, new_json))
    {
      g_autoptr(GBytes) a = g_bytes_new_static (old_json, strlen (old_json));
      g_autoptr(GBytes) b = g_bytes_new_static (new_json, strlen (new_json));

      new_label = g_strdup_printf ("%s (learned)", label);
      sbx_changes_diff_text (out, label, a, new_label, b);
    }
  else
    g_string_append (out, "# no profile change: nothing refused could be opened by one\n");
  if (self->approvals->len > 1)
    {
      g_string_append (out, "# approvals a run also needs (the profile names no single target), "
                            "as sbx run takes them:\n");
      for (guint i = 0; i + 1 < self->approvals->len; i++)
        append_approval (out, self->approvals->pdata[i]);
    }
  if (self->notes->len > 1)
    {
      g_string_append (out, "# notes:\n");
      for (guint i = 0; i + 1 < self->notes->len; i++)
        g_string_append_printf (out, "#   %s\n", (const char *) self->notes->pdata[i]);
    }
  if (self->outcome != NULL)
    g_string_append_printf (out, "# %s\n", self->outcome);
  return g_string_free (out, FALSE);
}
