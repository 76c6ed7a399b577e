/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The grant side of SbxExecutor: issuing tokens, the replay and
 * retained-handle registries, verifying a batch for one start (upstream
 * §5.6), and the transient spec a batch with deltas needs.
 *
 * LOCKING: the registries and the grant key are under self->mutex; the
 * *_locked functions expect it held.  No lock is held across a backend call.
 */
#include "sbx-executor-impl-private.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx-executor-error-private.h"
#include "sbx-compile-report-private.h"
#include "sbx-netrules-private.h"
#include "sbx-path-private.h"


/* ------------------------------------------------------------------------- */
/* Grants                                                                     */
/* ------------------------------------------------------------------------- */

gboolean
sbx_executor_grant_fail (GError    **error,
                         int         code,
                         const char *format,
                         ...)
{
  va_list args;

  va_start (args, format);
  g_propagate_error (error, g_error_new_valist (SBX_GRANT_ERROR, code, format, args));
  va_end (args);
  return FALSE;
}

/* (mutex) */
static gint64
grant_now_ms (SbxExecutor *self)
{
  if (self->clock != NULL)
    return self->clock (self->clock_data);
  return g_get_real_time () / 1000;
}

void
sbx_executor_set_grant_clock (SbxExecutor       *self,
                              SbxGrantClockFunc  clock,
                              gpointer           data)
{
  g_return_if_fail (SBX_IS_EXECUTOR (self));

  g_mutex_lock (&self->mutex);
  self->clock = clock;
  self->clock_data = data;
  g_mutex_unlock (&self->mutex);
}

guint
sbx_executor_get_n_replay (SbxExecutor *self)
{
  guint n;

  g_return_val_if_fail (SBX_IS_EXECUTOR (self), 0);

  g_mutex_lock (&self->mutex);
  n = sbx_grant_replay_size (self->replay);
  g_mutex_unlock (&self->mutex);
  return n;
}

guint
sbx_executor_get_n_retained (SbxExecutor *self)
{
  guint n;

  g_return_val_if_fail (SBX_IS_EXECUTOR (self), 0);

  g_mutex_lock (&self->mutex);
  n = g_hash_table_size (self->retained);
  g_mutex_unlock (&self->mutex);
  return n;
}

/* (mutex) Retained handles follow the replay rule: dropped once expiry < now. */
static void
prune_retained (SbxExecutor *self,
                gint64       now_ms)
{
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, self->retained);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    if (((RetainedHandle *) value)->expiry_ms < now_ms)
      g_hash_table_iter_remove (&iter);
}

static gboolean
is_filesystem_shape (SbxGrantShape shape)
{
  return shape == SBX_GRANT_SHAPE_FS_EXACT || shape == SBX_GRANT_SHAPE_FS_TREE;
}

typedef struct
{
  const char *grant_class;
  const char *target;
  const char *execution_id;
  gint64      expiry_ms;
} GrantEvent;

static void
add_grant_members (JsonBuilder *builder,
                   gpointer     data)
{
  const GrantEvent *ev = data;

  /* Never the token: whoever reads the audit log must not be able to spend it. */
  json_builder_set_member_name (builder, "class");
  json_builder_add_string_value (builder, ev->grant_class);
  json_builder_set_member_name (builder, "target");
  sbx_executor_add_string (builder, ev->target);
  json_builder_set_member_name (builder, "execution");
  sbx_executor_add_string (builder, ev->execution_id);
  json_builder_set_member_name (builder, "expiry_ms");
  json_builder_add_int_value (builder, ev->expiry_ms);
}

static gboolean
proxy_target_reachable (const char  *target,
                        GError     **error)
{
  g_autoptr(GError) why = NULL;
  g_autofree char *host = NULL;
  guint16 port;

  if (sbx_netrules_parse_target (target, &host, &port, NULL, &why)
      && sbx_netrules_check_reachable (host, &why))
    return TRUE;
  return sbx_executor_grant_fail (error, SBX_GRANT_ERROR_DENIED,
                                  "Capability denied: %s %s can never be reached: %s",
                                  SBX_GRANT_CLASS_NETWORK_PROXY_TARGET, target, why->message);
}

static char *
issue_grant_admitted (SbxExecutor  *self,
                      const char   *execution_id,
                      const char   *command,
                      const char   *cwd,
                      const char   *grant_class,
                      const char   *target_in,
                      GDateTime    *expiry,
                      GError      **error)
{
  SbxExecutorShared *shared = self->shared;
  g_autoptr(GError) local_error = NULL;
  g_autofree char *canonical_cwd = NULL;
  g_autofree char *target = NULL;
  g_autofree char *scope = NULL;
  g_autoptr(SbxGrantBinding) binding = NULL;
  g_auto(SbxGrantPayload) payload = { 0 };
  const SbxGrantClassInfo *info;
  SbxAccess access = SBX_ACCESS_DENY;
  gint64 now_ms;
  gint64 ttl_ms;
  gint64 expiry_ms;
  char *token;
  int fd = -1;
  GrantEvent ev;

  /* §5.5, in upstream's order. */
  if (!sbx_grant_text_valid (execution_id))
    return (sbx_executor_grant_fail (error, SBX_GRANT_ERROR_MALFORMED,
                                     "Grant malformed: the execution ID must be valid text (non-empty UTF-8, "
                                     "no NUL, no leading or trailing white space)"), NULL);
  if (!sbx_grant_text_valid (command))
    return (sbx_executor_grant_fail (error, SBX_GRANT_ERROR_MALFORMED,
                                     "Grant malformed: the command must be valid text (non-empty UTF-8, "
                                     "no NUL, no leading or trailing white space)"), NULL);
  canonical_cwd = sbx_path_canonical_root (cwd, &local_error);
  if (canonical_cwd == NULL)
    return (sbx_executor_grant_fail (error, SBX_GRANT_ERROR_MALFORMED, "Grant malformed: cwd “%s”: %s",
                                     cwd != NULL ? cwd : "(null)", local_error->message), NULL);
  /* An unknown class is UNSUPPORTED whatever its target (upstream passes
   * such a target through step 5 unchanged and refuses it at step 6). */
  info = sbx_grant_class_lookup (grant_class);
  if (info == NULL)
    return (sbx_executor_grant_fail (error, SBX_GRANT_ERROR_UNSUPPORTED,
                                     "Grant class unsupported: “%s” is not a grant class",
                                     grant_class != NULL && g_utf8_validate (grant_class, -1, NULL)
                                     ? grant_class : "(invalid)"), NULL);
  /* Steps 5 and 6: the kind and scope are derived from the class and the
   * canonical target, so they cannot disagree with them, and step 11
   * (canonicalise again, authorise again) has nothing left to narrow. */
  target = sbx_grant_normalize_target (info, command, target_in, &scope, error);
  if (target == NULL)
    return NULL;
  if (info->shape == SBX_GRANT_SHAPE_COMMAND && strcmp (target, command) != 0)
    return (sbx_executor_grant_fail (error, SBX_GRANT_ERROR_WRONG_COMMAND,
                                     "Grant command mismatch: a %s target must be the command itself",
                                     info->name), NULL);
  if (info->shape == SBX_GRANT_SHAPE_NET_PROXY && self->egress == NULL)
    return (sbx_executor_grant_fail (error, SBX_GRANT_ERROR_UNSUPPORTED,
                                     "Grant class unsupported: %s needs an egress route, and this executor "
                                     "set has none", info->name), NULL);
  /* A target the egress would refuse at every connect is refused here, by
   * the same rule (sbx_netrules_check_reachable), with the reason. */
  if (info->shape == SBX_GRANT_SHAPE_NET_PROXY && !proxy_target_reachable (target, error))
    return NULL;
  if (!sbx_backend_supports_grant_class (sbx_executor_shared_get_backend (shared), info->name))
    return (sbx_executor_grant_fail (error, SBX_GRANT_ERROR_UNSUPPORTED,
                                     "Grant class unsupported: backend “%s” cannot enforce %s",
                                     sbx_backend_get_name (sbx_executor_shared_get_backend (shared)), info->name), NULL);
  if (!sbx_profile_access_for (sbx_executor_shared_get_profile (shared), info->kind, scope, &access, error))
    return NULL;
  if (access == SBX_ACCESS_DENY)
    return (sbx_executor_grant_fail (error, SBX_GRANT_ERROR_DENIED,
                                     "Capability denied: the profile denies %s on “%s”; it cannot be granted",
                                     info->kind, scope[0] != '\0' ? scope : target), NULL);
  if (access == SBX_ACCESS_ALLOW)
    return (sbx_executor_grant_fail (error, SBX_GRANT_ERROR_UNSUPPORTED,
                                     "Grant class unsupported: the profile already allows %s on “%s”; "
                                     "there is nothing to grant", info->kind, scope[0] != '\0' ? scope : target),
            NULL);
  /* The set's private directory (every executor's HOME, TMPDIR and state)
   * is denied whole by the compiled policy, whatever the profile says about
   * the host: it is Deny, so never grantable (no approval opens another
   * executor's files). */
  if (is_filesystem_shape (info->shape) && sbx_path_within (target, sbx_executor_shared_get_owned_dir (shared)))
    return (sbx_executor_grant_fail (error, SBX_GRANT_ERROR_DENIED,
                                     "Capability denied: “%s” lies in the executor set's private directory, "
                                     "which no grant opens", target), NULL);

  g_mutex_lock (&self->mutex);
  if (self->closed || !self->key_valid)
    {
      g_mutex_unlock (&self->mutex);
      return (sbx_executor_fail (error, SBX_EXECUTOR_ERROR_CLOSED, "The executor is closed"), NULL);
    }
  now_ms = grant_now_ms (self);
  prune_retained (self, now_ms);
  ttl_ms = sbx_executor_shared_get_grant_ttl (shared) / 1000;
  expiry_ms = expiry != NULL
              ? g_date_time_to_unix (expiry) * 1000 + g_date_time_get_microsecond (expiry) / 1000
              : now_ms + ttl_ms;
  if (!(now_ms < expiry_ms && expiry_ms <= now_ms + ttl_ms))
    {
      g_mutex_unlock (&self->mutex);
      return (sbx_executor_grant_fail (error, SBX_GRANT_ERROR_EXPIRED,
                                       "Grant expired: the expiry must lie after now and at most the set's "
                                       "grant TTL (%" G_GINT64_FORMAT " ms) ahead; it is %" G_GINT64_FORMAT
                                       " ms from now", ttl_ms, expiry_ms - now_ms), NULL);
    }
  if ((info->required & ~self->guarantees) != 0)
    {
      g_autofree char *names = sbx_executor_guarantee_names (info->required & ~self->guarantees);

      g_mutex_unlock (&self->mutex);
      return (sbx_executor_grant_fail (error, SBX_GRANT_ERROR_GUARANTEE_MISMATCH,
                                       "Grant guarantee mismatch: %s needs %s, which this executor does not "
                                       "achieve", info->name, names), NULL);
    }
  if (!sbx_executor_fill_random (payload.nonce, sizeof payload.nonce, &local_error))
    {
      g_mutex_unlock (&self->mutex);
      return (sbx_executor_grant_fail (error, SBX_GRANT_ERROR_UNSUPPORTED, "%s", local_error->message), NULL);
    }
  if (is_filesystem_shape (info->shape))
    {
      binding = sbx_grant_binding_capture (target, error);
      if (binding != NULL)
        fd = sbx_grant_acquire_handle (binding, info->shape == SBX_GRANT_SHAPE_FS_EXACT, error);
      if (fd < 0)
        {
          g_mutex_unlock (&self->mutex);
          return NULL;
        }
    }

  payload.execution_id = g_strdup (execution_id);
  payload.command = g_strdup (command);
  payload.cwd = g_strdup (canonical_cwd);
  payload.profile_fingerprint = g_strdup (sbx_profile_get_fingerprint (sbx_executor_shared_get_profile (shared)));
  payload.route_fingerprint = g_strdup (sbx_egress_grant_route (self->egress));
  payload.guarantee_bits = self->guarantees;
  payload.grant_class = g_strdup (info->name);
  payload.target = g_strdup (target);
  payload.binding = sbx_grant_binding_copy (binding);
  payload.expiry_ms = expiry_ms;
  token = sbx_grant_token_mint (self->grant_key, &payload);

  if (fd >= 0)
    {
      RetainedHandle *rh = g_new0 (RetainedHandle, 1);

      rh->binding = g_steal_pointer (&binding);
      rh->target = g_strdup (target);
      rh->exact = info->shape == SBX_GRANT_SHAPE_FS_EXACT;
      rh->expiry_ms = expiry_ms;
      rh->fd = fd;
      g_hash_table_replace (self->retained, sbx_grant_token_id (token), rh);
    }
  g_mutex_unlock (&self->mutex);

  ev.grant_class = info->name;
  ev.target = target;
  ev.execution_id = execution_id;
  ev.expiry_ms = expiry_ms;
  sbx_executor_shared_emit (shared, SBX_EVENT_GRANT_ISSUED, self->key, add_grant_members, &ev);
  return token;
}

/**
 * sbx_executor_issue_grant:
 * @self: a [class@Sbx.Executor]
 * @execution_id: names the one execution the grant is for; any valid text
 *   (':' included)
 * @command: the exact command the grant is for:
 *   [func@Sbx.grant_command_for_argv] of the vector that
 *   [method@Sbx.Executor.run], [method@Sbx.Executor.spawn] or
 *   [method@Sbx.Executor.prepare] will be given (a shell command line is the
 *   vector `{"/bin/sh", "-c", command}`)
 * @cwd: (type filename): the working directory of that run; bound in its
 *   canonical form (symlinks resolved), so it must exist
 * @grant_class: one of the `SBX_GRANT_CLASS_*` strings, such as
 *   %SBX_GRANT_CLASS_COMMAND_START
 * @target: (nullable): what the class opens: the command for
 *   `command.start.v1` (%NULL means @command), an absolute path for the
 *   `filesystem.path.*` and `filesystem.tree.*` classes (canonicalised),
 *   `host:*` for the host classes, `tcp:*:PORT` for `network.broad.v1`
 * @expiry: (nullable): when the grant expires; %NULL means now plus the
 *   set's grant TTL.  It must lie after now and at most the TTL ahead.
 * @error: return location for a [error@Sbx.GrantError]
 *
 * Mints a single-use grant token that opens one %SBX_ACCESS_GATED
 * capability for one spawn of exactly @command, by exactly this executor.
 *
 * The token binds this executor (through its private key), @execution_id,
 * @command, the canonical @cwd, the profile fingerprint, the route
 * fingerprint, the guarantees the executor achieves, the class, the
 * normalized target and the expiry; a filesystem grant also binds the
 * identity (device, inode, type) of the target, and the executor keeps an
 * `O_PATH` handle on it, opened now without following any symlink, until the
 * token is spent or expires.
 *
 * Issuing reads the profile itself: a capability the profile denies gives
 * %SBX_GRANT_ERROR_DENIED, one it already allows gives
 * %SBX_GRANT_ERROR_UNSUPPORTED; only a gated one mints.  A class the backend
 * cannot enforce gives %SBX_GRANT_ERROR_UNSUPPORTED before the target is
 * looked at.  A `network.proxy-target.v1` target sbx never reaches (a cloud
 * metadata address in any form, [method@Sbx.NetworkTarget.check_reachable])
 * gives %SBX_GRANT_ERROR_DENIED naming the target and why, rather than a
 * token every connect would refuse.  Issuing never prompts and never
 * persists anything: the caller is the approval system.
 *
 * A grant that widens the policy may take guarantees from its spawn (a host
 * grant its boundary, `network.broad.v1` network-boundary and
 * address-network): the run's report
 * ([method@Sbx.PreparedProcess.get_report],
 * [method@Sbx.RunResult.get_spawn_report]) says so, the executor's does not.
 *
 * The token is a secret for the caller: it never reaches the child (not in
 * its argv, environment or anything it can read) nor any reporter.
 *
 * Returns: (transfer full) (nullable): the token, or %NULL with @error set
 *   (%SBX_EXECUTOR_ERROR_CLOSED once the set is closed)
 *
 * Since: 0.1
 */
char *
sbx_executor_issue_grant (SbxExecutor  *self,
                          const char   *execution_id,
                          const char   *command,
                          const char   *cwd,
                          const char   *grant_class,
                          const char   *target,
                          GDateTime    *expiry,
                          GError      **error)
{
  g_autoptr(SbxSharedGuard) guard = NULL;

  g_return_val_if_fail (SBX_IS_EXECUTOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  guard = sbx_executor_shared_admit (self->shared);
  if (guard == NULL)
    return (sbx_executor_fail (error, SBX_EXECUTOR_ERROR_CLOSED, "The executor set is closed"), NULL);
  return issue_grant_admitted (self, execution_id, command, cwd, grant_class, target, expiry,
                               error);
}


void
sbx_executor_fs_delta_free (gpointer data)
{
  FsDelta *d = data;

  if (d->fd >= 0)
    close (d->fd);
  g_free (d->id);
  g_free (d->target);
  sbx_grant_binding_free (d->binding);
  g_free (d);
}


void
sbx_executor_grant_batch_clear (GrantBatch *b)
{
  g_clear_pointer (&b->ids, g_ptr_array_unref);
  g_clear_pointer (&b->expiries, g_array_unref);
  g_clear_pointer (&b->fs, g_ptr_array_unref);
  g_clear_pointer (&b->ports, g_array_unref);
  g_clear_pointer (&b->spent, g_ptr_array_unref);
  g_clear_pointer (&b->proxy_targets, g_ptr_array_unref);
  g_clear_pointer (&b->drops, g_array_unref);
  g_clear_pointer (&b->unix_sockets, g_ptr_array_unref);
}

static void
grant_drop_clear (gpointer data)
{
  g_free (((GrantDrop *) data)->grant);
}

/* Records that the grant just listed in `spent` may take @bits. */
static void
batch_add_drop (GrantBatch    *batch,
                const char    *grant_class,
                const char    *target,
                SbxGuarantees  bits)
{
  GrantDrop drop = { g_strdup_printf ("%s:%s", grant_class, target), bits,
                     batch->spent->len - 1 };

  if (batch->drops == NULL)
    {
      batch->drops = g_array_new (FALSE, TRUE, sizeof (GrantDrop));
      g_array_set_clear_func (batch->drops, grant_drop_clear);
    }
  g_array_append_val (batch->drops, drop);
}


/* The consumption-time re-validation of a class and target (upstream
 * §5.6 step 4.4): lexical only, the token's MAC already vouches for what
 * was canonicalised at issue. */
static gboolean
target_fits_class (const SbxGrantClassInfo *info,
                   const char              *target)
{
  switch (info->shape)
    {
    case SBX_GRANT_SHAPE_COMMAND:
      return sbx_grant_text_valid (target);
    case SBX_GRANT_SHAPE_FS_EXACT:
    case SBX_GRANT_SHAPE_FS_TREE:
      return sbx_path_is_clean_absolute (target);
    case SBX_GRANT_SHAPE_FS_HOST:
      return strcmp (target, "host:*") == 0;
    case SBX_GRANT_SHAPE_NET_BROAD:
      return sbx_grant_broad_port (target) != 0;
    case SBX_GRANT_SHAPE_NET_PROXY:
      return g_str_has_prefix (target, "tcp:");
    case SBX_GRANT_SHAPE_UNIX_SOCKET:
      return sbx_grant_unix_socket_valid (target);
    default:
      return FALSE;
    }
}

static gboolean
same_identity_fd (int a,
                  int b)
{
  struct stat sa, sb;

  return fstat (a, &sa) == 0 && fstat (b, &sb) == 0
         && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino
         && (sa.st_mode & S_IFMT) == (sb.st_mode & S_IFMT);
}

/* (mutex) Verifies every token of @grants, in order, for this run
 * (upstream §5.6 steps 3-7).  The first failure aborts the batch and
 * nothing is consumed.  On success every token ID is reserved in the replay
 * registry (so a concurrent consumer of the same token gets REPLAY) and the
 * caller commits or un-reserves them. */
gboolean
sbx_executor_verify_batch_locked (SbxExecutor       *self,
                                  const char        *execution_id,
                                  const char        *command,
                                  const char        *cwd,
                                  const char *const *grants,
                                  GrantBatch        *batch,
                                  GError           **error)
{
  SbxExecutorShared *shared = self->shared;
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  gint64 now_ms = grant_now_ms (self);

  sbx_grant_replay_prune (self->replay, now_ms);
  prune_retained (self, now_ms);

  for (guint i = 0; grants != NULL && grants[i] != NULL; i++)
    {
      g_auto(SbxGrantPayload) p = { 0 };
      g_autofree char *id = sbx_grant_token_id (grants[i]);
      const SbxGrantClassInfo *info;

      if (sbx_grant_replay_contains (self->replay, id) || g_hash_table_contains (seen, id))
        return sbx_executor_grant_fail (error, SBX_GRANT_ERROR_REPLAY,
                                        "Grant replay: token %u was already spent (or is given twice)", i);
      g_hash_table_add (seen, g_strdup (id));
      if (!sbx_grant_token_open (self->grant_key, grants[i], &p, error))
        return FALSE;
      if (now_ms > p.expiry_ms)
        return sbx_executor_grant_fail (error, SBX_GRANT_ERROR_EXPIRED,
                                        "Grant expired: token %u expired %" G_GINT64_FORMAT " ms ago", i,
                                        now_ms - p.expiry_ms);
      if (strcmp (p.execution_id, execution_id) != 0)
        return sbx_executor_grant_fail (error, SBX_GRANT_ERROR_WRONG_EXECUTION,
                                        "Grant execution mismatch: token %u was issued for another execution", i);
      if (strcmp (p.command, command) != 0)
        return sbx_executor_grant_fail (error, SBX_GRANT_ERROR_WRONG_COMMAND,
                                        "Grant command mismatch: token %u was issued for another command", i);
      if (strcmp (p.cwd, cwd) != 0)
        return sbx_executor_grant_fail (error, SBX_GRANT_ERROR_WRONG_WORKING_DIRECTORY,
                                        "Grant working directory mismatch: token %u was issued for “%s”, "
                                        "not “%s”", i, p.cwd, cwd);
      if (strcmp (p.profile_fingerprint, sbx_profile_get_fingerprint (sbx_executor_shared_get_profile (shared))) != 0)
        return sbx_executor_grant_fail (error, SBX_GRANT_ERROR_PROFILE_MISMATCH,
                                        "Grant profile mismatch: token %u was issued under another profile", i);
      if (strcmp (p.route_fingerprint, sbx_egress_grant_route (self->egress)) != 0)
        return sbx_executor_grant_fail (error, SBX_GRANT_ERROR_ROUTE_MISMATCH,
                                        "Grant route mismatch: token %u was issued for another egress route", i);
      if (p.guarantee_bits != (guint64) self->guarantees)
        return sbx_executor_grant_fail (error, SBX_GRANT_ERROR_GUARANTEE_MISMATCH,
                                        "Grant guarantee mismatch: token %u was issued under other guarantees "
                                        "(0x%" G_GINT64_MODIFIER "x, now 0x%x)", i, p.guarantee_bits,
                                        (unsigned) self->guarantees);
      info = sbx_grant_class_lookup (p.grant_class);
      if (info == NULL)
        return sbx_executor_grant_fail (error, SBX_GRANT_ERROR_UNSUPPORTED,
                                        "Grant class unsupported: token %u has an unknown class", i);
      if (!target_fits_class (info, p.target)
          || (is_filesystem_shape (info->shape)
              && (p.binding == NULL || strcmp (p.binding->canonical_path, p.target) != 0))
          || (!is_filesystem_shape (info->shape) && p.binding != NULL))
        return sbx_executor_grant_fail (error, SBX_GRANT_ERROR_MALFORMED,
                                        "Grant malformed: token %u's target does not fit %s", i, info->name);
      if (!sbx_backend_supports_grant_class (sbx_executor_shared_get_backend (shared), info->name))
        return sbx_executor_grant_fail (error, SBX_GRANT_ERROR_UNSUPPORTED,
                                        "Grant class unsupported: backend “%s” cannot enforce %s",
                                        sbx_backend_get_name (sbx_executor_shared_get_backend (shared)), info->name);
      if ((info->required & ~self->guarantees) != 0)
        return sbx_executor_grant_fail (error, SBX_GRANT_ERROR_GUARANTEE_MISMATCH,
                                        "Grant guarantee mismatch: %s needs guarantees this executor lacks",
                                        info->name);

      switch (info->shape)
        {
        case SBX_GRANT_SHAPE_COMMAND:
          if (strcmp (p.target, command) != 0)
            return sbx_executor_grant_fail (error, SBX_GRANT_ERROR_WRONG_COMMAND,
                                            "Grant command mismatch: token %u starts another command", i);
          batch->command_start = TRUE;
          g_ptr_array_add (batch->spent, g_strdup_printf ("%s %s: authorized this start",
                                                          info->name, p.target));
          break;
        case SBX_GRANT_SHAPE_FS_EXACT:
        case SBX_GRANT_SHAPE_FS_TREE:
        case SBX_GRANT_SHAPE_FS_HOST:
          {
            FsDelta *d = g_new0 (FsDelta, 1);

            d->id = g_strdup (id);
            d->info = info;
            d->target = g_strdup (p.target);
            d->binding = g_steal_pointer (&p.binding);
            d->expiry_ms = p.expiry_ms;
            d->fd = -1;
            g_ptr_array_add (batch->fs, d);
            g_ptr_array_add (batch->spent,
                             g_strdup_printf ("%s %s: opened %s %s for this spawn", info->name,
                                              p.target,
                                              info->fs_allow & SBX_FS_WRITE ? "write" : "read+exec",
                                              info->shape == SBX_GRANT_SHAPE_FS_EXACT
                                              ? "on exactly this file"
                                              : info->shape == SBX_GRANT_SHAPE_FS_TREE
                                              ? "on this tree" : "on the whole host"));
            if (info->shape == SBX_GRANT_SHAPE_FS_HOST)
              {
                batch->may_drop |= info->required;
                batch_add_drop (batch, info->name, p.target, info->required);
              }
          }
          break;
        case SBX_GRANT_SHAPE_NET_BROAD:
          {
            guint16 port = sbx_grant_broad_port (p.target);

            g_array_append_val (batch->ports, port);
            /* TCP to that port on any address: neither network guarantee
             * may be claimed for this spawn, whatever the backend says. */
            batch->must_drop |= SBX_GUARANTEE_NETWORK_BOUNDARY | SBX_GUARANTEE_ADDRESS_NETWORK;
            g_ptr_array_add (batch->spent,
                             g_strdup_printf ("%s %s: opened TCP connect to port %u on any address, "
                                              "and DNS, for this spawn (which has no network-boundary "
                                              "or address-network guarantee)",
                                              info->name, p.target, port));
            batch_add_drop (batch, info->name, p.target,
                            SBX_GUARANTEE_NETWORK_BOUNDARY | SBX_GUARANTEE_ADDRESS_NETWORK);
          }
          break;
        case SBX_GRANT_SHAPE_UNIX_SOCKET:
          /* SBX_GRANT_UNIX_CONNECT_TAKES says why. */
          g_ptr_array_add (batch->unix_sockets, g_strdup (p.target));
          batch->may_drop |= SBX_GRANT_UNIX_CONNECT_TAKES;
          g_ptr_array_add (batch->spent,
                           g_strdup_printf ("%s %s: opened connecting to exactly this host socket for this "
                                            "spawn (its daemon acts outside the sandbox)", info->name, p.target));
          batch_add_drop (batch, info->name, p.target, SBX_GRANT_UNIX_CONNECT_TAKES);
          break;
        case SBX_GRANT_SHAPE_NET_PROXY:
          if (self->egress != NULL && batch->proxy_targets != NULL)
            {
              /* egress: the run is authorized for exactly these targets */
              g_ptr_array_add (batch->proxy_targets, g_strdup (p.target));
              g_ptr_array_add (batch->spent,
                               g_strdup_printf ("%s %s: authorized this target through the egress "
                                                "route for this run", info->name, p.target));
              break;
            }
          G_GNUC_FALLTHROUGH;
        default:
          /* Upstream step 6: proxy targets without a proxy. */
          return sbx_executor_grant_fail (error, SBX_GRANT_ERROR_UNSUPPORTED,
                                          "Grant class unsupported: %s needs an egress route, and this "
                                          "executor set has none", info->name);
        }
      g_ptr_array_add (batch->ids, g_strdup (id));
      g_array_append_val (batch->expiries, p.expiry_ms);
    }

  /* Step 5: the command gate, after the token loop. */
  switch (sbx_profile_get_command (sbx_executor_shared_get_profile (shared)))
    {
    case SBX_ACCESS_ALLOW:
      break;
    case SBX_ACCESS_GATED:
      if (!batch->command_start)
        return sbx_executor_grant_fail (error, SBX_GRANT_ERROR_REQUIRED,
                                        "Approval grant required: the profile gates command execution and no "
                                        "%s grant for this command was given", SBX_GRANT_CLASS_COMMAND_START);
      break;
    case SBX_ACCESS_DENY:
    default:
      return sbx_executor_grant_fail (error, SBX_GRANT_ERROR_DENIED,
                                      "Capability denied: the profile denies command execution");
    }

  /* Step 7: every filesystem token's retained handle, re-acquired fresh. */
  for (guint i = 0; i < batch->fs->len; i++)
    {
      FsDelta *d = g_ptr_array_index (batch->fs, i);
      RetainedHandle *rh;

      if (d->info->shape == SBX_GRANT_SHAPE_FS_HOST)
        continue;
      rh = g_hash_table_lookup (self->retained, d->id);
      if (rh == NULL)
        return sbx_executor_grant_fail (error, SBX_GRANT_ERROR_REPLAY,
                                        "Grant replay: the handle of the grant on “%s” is gone (spent or "
                                        "expired)", d->target);
      if (!sbx_grant_binding_equal (rh->binding, d->binding) || strcmp (rh->target, d->target) != 0
          || rh->exact != (d->info->shape == SBX_GRANT_SHAPE_FS_EXACT)
          || rh->expiry_ms != d->expiry_ms)
        return sbx_executor_grant_fail (error, SBX_GRANT_ERROR_TARGET_CHANGED,
                                        "Granted filesystem target changed: the retained handle of “%s” does "
                                        "not match its token", d->target);
      if (!sbx_grant_binding_revalidate (d->binding, error))
        return FALSE;
      d->fd = sbx_grant_acquire_handle (d->binding, rh->exact, error);
      if (d->fd < 0)
        return FALSE;
      if (!same_identity_fd (d->fd, rh->fd))
        return sbx_executor_grant_fail (error, SBX_GRANT_ERROR_TARGET_CHANGED,
                                        "Granted filesystem target changed: “%s” is not the file approved",
                                        d->target);
      for (guint k = 0; k < i; k++)
        {
          FsDelta *o = g_ptr_array_index (batch->fs, k);

          if (o->fd >= 0 && strcmp (o->target, d->target) == 0 && !same_identity_fd (o->fd, d->fd))
            return sbx_executor_grant_fail (error, SBX_GRANT_ERROR_TARGET_CHANGED,
                                            "Granted filesystem target changed: two grants name “%s” with "
                                            "different identities", d->target);
        }
    }

  for (guint i = 0; i < batch->ids->len; i++)
    sbx_grant_replay_add (self->replay, g_ptr_array_index (batch->ids, i),
                          g_array_index (batch->expiries, gint64, i));
  return TRUE;
}


void
sbx_executor_add_grant_spent_members (JsonBuilder *builder,
                                      gpointer     data)
{
  const GrantSpentEvent *ev = data;

  json_builder_set_member_name (builder, "execution");
  sbx_executor_add_string (builder, ev->execution_id);
  json_builder_set_member_name (builder, "grant");
  sbx_executor_add_string (builder, ev->what);
}

/* (mutex) Un-reserves a batch that will not run: nothing is consumed. */
void
sbx_executor_unreserve_batch_locked (SbxExecutor *self,
                                     GrantBatch  *batch)
{
  for (guint i = 0; i < batch->ids->len; i++)
    sbx_grant_replay_remove (self->replay, g_ptr_array_index (batch->ids, i));
}

/* (mutex) From here the tokens are burned, even if the spawn fails: their
 * IDs stay in the replay registry and their retained handles close. */
void
sbx_executor_commit_batch_locked (SbxExecutor *self,
                                  GrantBatch  *batch)
{
  for (guint i = 0; i < batch->fs->len; i++)
    g_hash_table_remove (self->retained, ((FsDelta *) g_ptr_array_index (batch->fs, i))->id);
}

/* A policy for one spawn: the executor's base policy plus the deltas of a
 * batch (upstream applyFilesystemGrant): on every rule with the grant's
 * path and exactness the granted bits leave `deny` (a rule that then
 * controls nothing goes, since allow == deny == 0 would mean deny-all),
 * then the grant's own rule is appended, CANONICAL and carrying the fresh
 * identity-pinned fd.  network.broad.v1 turns MODE_DENY into MODE_PORTS
 * with DNS.  The strings point into the base policy and the batch, which
 * outlive the compile. */
typedef struct
{
  SbxPolicyV1    abi;
  SbxNetPolicyV1 net;
  GArray        *rules;
  GArray        *ports;
  GPtrArray     *host_sockets;   /* NULL-terminated: the base's plus unix.connect.v1 targets */
} TransientPolicy;

static void
transient_policy_clear (TransientPolicy *tp)
{
  g_clear_pointer (&tp->rules, g_array_unref);
  g_clear_pointer (&tp->ports, g_array_unref);
  g_clear_pointer (&tp->host_sockets, g_ptr_array_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (TransientPolicy, transient_policy_clear)

static void
transient_policy_build (TransientPolicy   *tp,
                        const SbxPolicyV1 *base,
                        const GrantBatch  *batch)
{
  tp->abi = *base;
  tp->net = *base->net;
  tp->rules = g_array_new (FALSE, FALSE, sizeof (SbxFsRuleV1));
  g_array_append_vals (tp->rules, base->fs_rules, base->n_fs_rules);

  for (guint i = 0; i < batch->fs->len; i++)
    {
      const FsDelta *d = g_ptr_array_index (batch->fs, i);
      gboolean exact = d->info->shape == SBX_GRANT_SHAPE_FS_EXACT;
      const char *path = d->info->shape == SBX_GRANT_SHAPE_FS_HOST ? "/" : d->target;
      SbxFsRuleV1 rule = { 0 };

      for (guint k = tp->rules->len; k-- > 0;)
        {
          SbxFsRuleV1 *r = &g_array_index (tp->rules, SbxFsRuleV1, k);

          if ((r->flags & SBX_FS_RULE_GLOB) || strcmp (r->path, path) != 0
              || ((r->flags & SBX_FS_RULE_EXACT) != 0) != exact)
            continue;
          r->deny &= ~d->info->fs_allow;
          if (r->allow == 0 && r->deny == 0)
            g_array_remove_index (tp->rules, k);
        }
      rule.struct_size = sizeof rule;
      rule.flags = (exact ? SBX_FS_RULE_EXACT : 0) | SBX_FS_RULE_CANONICAL;
      rule.allow = d->info->fs_allow;
      rule.deny = 0;
      rule.origin = SBX_FS_ORIGIN_GRANT;
      rule.fd = d->fd;
      rule.path = path;
      g_array_append_val (tp->rules, rule);
    }

  tp->ports = g_array_new (FALSE, FALSE, sizeof (guint16));
  if (batch->ports->len > 0)
    {
      if (tp->net.mode == SBX_NET_MODE_PORTS)
        g_array_append_vals (tp->ports, base->net->tcp_ports, base->net->n_tcp_ports);
      for (guint i = 0; i < batch->ports->len; i++)
        g_array_append_val (tp->ports, g_array_index (batch->ports, guint16, i));
      tp->net.mode = SBX_NET_MODE_PORTS;
      tp->net.flags |= SBX_NET_FLAG_DNS;
      tp->net.n_tcp_ports = tp->ports->len;
      tp->net.tcp_ports = (const guint16 *) (gpointer) tp->ports->data;
    }
  /* unix.connect.v1: the granted sockets join the ones the profile names
   * (the base policy is the core's own: it has host_sockets). */
  tp->host_sockets = g_ptr_array_new ();
  for (guint i = 0; base->host_sockets != NULL && base->host_sockets[i] != NULL; i++)
    g_ptr_array_add (tp->host_sockets, (gpointer) base->host_sockets[i]);
  g_ptr_array_extend (tp->host_sockets, batch->unix_sockets, NULL, NULL);
  g_ptr_array_add (tp->host_sockets, NULL);
  tp->abi.host_sockets = (const char *const *) tp->host_sockets->pdata;
  tp->abi.fs_rules = (const SbxFsRuleV1 *) (gpointer) tp->rules->data;
  tp->abi.n_fs_rules = tp->rules->len;
  tp->abi.net = &tp->net;
}

/* The guarantees @drop takes, as "a, b". */
static char *
drop_names (const GrantDrop *drop,
            SbxGuarantees    removed)
{
  return sbx_executor_guarantee_names (drop->bits & removed);
}

/* The run's report: the backend's entries of the transient compile, except
 * that an entry that calls a guarantee this spawn does not have enforced is
 * folded into the entry that says which grant removed it (its detail kept
 * there); one such entry per removed guarantee and grant.  The grant's
 * "spent" line says what it took. */
static void
add_run_entries (SbxCompileReport *report,
                 SbxCompileReport *compiled,
                 SbxGuarantees     removed,
                 GrantBatch       *batch)
{
  for (guint i = 0; i < sbx_compile_report_get_n_entries (compiled); i++)
    {
      const char *feature = sbx_compile_report_get_entry_feature (compiled, i);
      SbxGuarantees bit = 0;

      if (sbx_guarantee_from_string (feature, &bit) && (bit & removed) != 0
          && sbx_compile_report_get_entry_status (compiled, i) == SBX_REPORT_STATUS_ENFORCED)
        continue;
      sbx_compile_report_add_entry (report, feature, sbx_compile_report_get_entry_status (compiled, i),
                                    sbx_compile_report_get_entry_detail (compiled, i));
    }
  for (guint i = 0; batch->drops != NULL && i < batch->drops->len; i++)
    {
      const GrantDrop *drop = &g_array_index (batch->drops, GrantDrop, i);
      char **line = (char **) &g_ptr_array_index (batch->spent, drop->spent_index);
      g_autofree char *names = drop_names (drop, removed);
      char *amended;

      if ((drop->bits & removed) == 0)
        continue;
      for (SbxGuarantees bit = 1; bit <= SBX_GUARANTEES_ALL; bit <<= 1)
        {
          const char *name = sbx_guarantee_to_string (bit);
          g_autofree char *detail = NULL;
          const char *mechanism = NULL;

          if ((drop->bits & removed & bit) == 0)
            continue;
          for (guint k = 0; k < sbx_compile_report_get_n_entries (compiled); k++)
            if (g_strcmp0 (sbx_compile_report_get_entry_feature (compiled, k), name) == 0
                && sbx_compile_report_get_entry_status (compiled, k) == SBX_REPORT_STATUS_ENFORCED)
              mechanism = sbx_compile_report_get_entry_detail (compiled, k);
          if (mechanism != NULL)
            detail = g_strdup_printf ("removed for this run by grant %s (the executor's report "
                                      "claims it; this run does not have it); the backend's "
                                      "mechanism, over the policy that grant widened: %s",
                                      drop->grant, mechanism);
          else
            detail = g_strdup_printf ("removed for this run by grant %s (the executor's report "
                                      "claims it; this run does not have it)", drop->grant);
          sbx_compile_report_add_entry (report, name, SBX_REPORT_STATUS_UNENFORCED, detail);
        }
      amended = g_strdup_printf ("%s; removed for this spawn: %s", *line, names);
      g_free (*line);
      *line = amended;
    }
}

/* Compiles the transient spec of a batch with deltas (upstream §5.6 steps
 * 8-9).  The backend gets the grant fds during compile only (it dup()s what
 * it keeps); the recompiled guarantees must equal the expected ones. */
SbxBackendSpec *
sbx_executor_compile_transient (SbxExecutor       *self,
                                GrantBatch        *batch,
                                SbxCompileReport **out_report,
                                SbxLevel          *out_level,
                                SbxGuarantees     *out_guarantees,
                                GError           **error)
{
  g_auto(TransientPolicy) tp = { 0 };
  SbxProfile *profile = sbx_executor_shared_get_profile (self->shared);
  g_autoptr(SbxCompileReport) report = NULL;
  g_autoptr(SbxCompileReport) compiled = NULL;
  g_autoptr(GError) compile_error = NULL;
  g_autoptr(SbxBackendSpec) spec = NULL;
  SbxLevel level;
  SbxGuarantees bits;
  SbxGuarantees keep = self->guarantees & ~batch->may_drop & ~batch->must_drop;

  /* The run's report is built as the executor's is: the same header, the
   * backend's compile, the same egress composition, then frozen. */
  compiled = sbx_compile_report_new ();
  transient_policy_build (&tp, sbx_policy_get_abi (self->policy), batch);
  spec = sbx_backend_compile (sbx_executor_shared_get_backend (self->shared), &tp.abi, compiled, &level,
                              &bits, &compile_error);
  if (spec == NULL)
    {
      sbx_executor_fail (error, SBX_EXECUTOR_ERROR_SPAWN_FAILED,
                         "Backend “%s” cannot compile the spec this run's grants need: %s",
                         sbx_backend_get_name (sbx_executor_shared_get_backend (self->shared)),
                         compile_error->message);
      return NULL;
    }
  /* Compared like with like: the executor's guarantees went through the
   * route's composition too. */
  bits = sbx_egress_compose_guarantees (self->egress, profile, NULL, bits);   /* egress */
  if ((bits & ~batch->may_drop) != keep || (bits & ~self->guarantees) != 0
      || (bits & batch->must_drop) != 0)
    {
      g_autofree char *got = sbx_executor_guarantee_names (bits);
      g_autofree char *want = sbx_executor_guarantee_names (keep);

      sbx_executor_grant_fail (error, SBX_GRANT_ERROR_GUARANTEE_MISMATCH,
                               "Grant guarantee mismatch: the spec compiled for this run's grants "
                               "achieves {%s}, expected {%s}", got, want);
      return NULL;
    }
  /* A host grant opens the whole host on its axis: whatever the backend
   * makes of the widened policy, reads (writes) outside the profile's
   * roots are not denied for this spawn, so its boundary is not claimed. */
  bits &= ~batch->may_drop;
  report = sbx_executor_report_new (self->shared, sbx_compile_report_get_required (self->report));
  add_run_entries (report, compiled, self->guarantees & ~bits, batch);
  sbx_compile_report_set_level (report, level);
  sbx_compile_report_set_guarantees (report, bits);
  /* The route's entry, as the executor's report has it (the bits are
   * already composed: unchanged). */
  bits = sbx_egress_compose_guarantees (self->egress, profile, report, bits);   /* egress */
  sbx_compile_report_set_scope (report, SBX_REPORT_SCOPE_RUN);
  sbx_compile_report_freeze (report);
  *out_report = g_steal_pointer (&report);
  *out_level = level;
  *out_guarantees = bits;
  return g_steal_pointer (&spec);
}

/* The command gate: decided before anything is spawned. */
gboolean
sbx_executor_check_command_gate (SbxExecutor  *self,
                                 GError      **error)
{
  switch (sbx_profile_get_command (sbx_executor_shared_get_profile (self->shared)))
    {
    case SBX_ACCESS_ALLOW:
      return TRUE;
    case SBX_ACCESS_GATED:
      return sbx_executor_grant_fail (error, SBX_GRANT_ERROR_REQUIRED,
                                      "Approval grant required: the profile gates command execution; run "
                                      "with a %s grant for this command", SBX_GRANT_CLASS_COMMAND_START);
    case SBX_ACCESS_DENY:
    default:
      return sbx_executor_grant_fail (error, SBX_GRANT_ERROR_DENIED,
                                      "Capability denied: the profile denies command execution");
    }
}
