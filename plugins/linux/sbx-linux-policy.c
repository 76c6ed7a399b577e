/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The backend's own check of the policy IR before compile() builds
 * anything from it (sbx-linux-spec.c).  Defense in depth: the backend
 * re-validates what the core's compiler produced and must not trust it;
 * every message names the rule, field or value at fault.
 */
#include <limits.h>
#include <string.h>

#include "sbx-linux-private.h"
#include "sbx-linux-egress.h"

#define KNOWN_RULE_FLAGS (SBX_FS_RULE_EXACT | SBX_FS_RULE_GLOB | SBX_FS_RULE_CANONICAL | SBX_FS_RULE_OPTIONAL)

static gboolean
path_is_clean_absolute (const char *path)
{
  const char *p;

  if (path == NULL || path[0] != '/' || strlen (path) >= PATH_MAX)
    return FALSE;
  if (strcmp (path, "/") == 0)
    return TRUE;
  if (g_str_has_suffix (path, "/"))
    return FALSE;
  for (p = path; *p != '\0'; p++)
    {
      if (*p != '/')
        continue;
      if (p[1] == '/')
        return FALSE;
      if (p[1] == '.' && (p[2] == '/' || p[2] == '\0'))
        return FALSE;
      if (p[1] == '.' && p[2] == '.' && (p[3] == '/' || p[3] == '\0'))
        return FALSE;
    }
  return TRUE;
}

gboolean
sbx_linux_policy_validate (const SbxPolicyV1  *policy,
                           int32_t            *status,
                           GError            **error)
{
  guint32 i;

  *status = SBX_STATUS_INVALID;
  if (policy == NULL || policy->struct_size < SBX_POLICY_V1_MIN_SIZE)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           "policy: missing or smaller than SbxPolicyV1");
      return FALSE;
    }
  if (policy->n_fs_rules > 0 && policy->fs_rules == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "policy: %u filesystem rules but no array", policy->n_fs_rules);
      return FALSE;
    }
  if (policy->n_fs_rules > 65536)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "policy: %u filesystem rules is more than the backend accepts (65536)",
                   policy->n_fs_rules);
      return FALSE;
    }
  for (i = 0; i < policy->n_fs_rules; i++)
    {
      const SbxFsRuleV1 *r = &policy->fs_rules[i];

      if (r->struct_size < SBX_FS_RULE_V1_MIN_SIZE)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "policy: rule %u: struct_size %u is too small", i, r->struct_size);
          return FALSE;
        }
      if ((r->flags & SBX_FS_RULE_GLOB) ? (r->path == NULL || r->path[0] != '/')
                                        : !path_is_clean_absolute (r->path))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "policy: rule %u: path '%s' is not a clean absolute path", i,
                       r->path != NULL ? r->path : "(null)");
          return FALSE;
        }
      if ((r->allow | r->deny) & ~SBX_FS_ALL)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "policy: rule %u (%s): unknown access bits allow=0x%x deny=0x%x",
                       i, r->path, r->allow, r->deny);
          return FALSE;
        }
      if (r->flags & ~KNOWN_RULE_FLAGS)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "policy: rule %u (%s): unknown flags 0x%x", i, r->path, r->flags);
          return FALSE;
        }
      if (r->origin < SBX_FS_ORIGIN_RUNTIME || r->origin > SBX_FS_ORIGIN_GRANT)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "policy: rule %u (%s): unknown origin %u", i, r->path, r->origin);
          return FALSE;
        }
      if (r->flags & SBX_FS_RULE_GLOB)
        {
          *status = SBX_STATUS_UNSUPPORTED;
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                       "policy: rule %u: glob rules ('%s') are not supported by the Linux backend "
                       "(neither a mount view nor Landlock can express them; refusing rather than "
                       "ignoring a deny)", i, r->path);
          return FALSE;
        }
    }
  if (policy->net == NULL || policy->net->struct_size < SBX_NET_POLICY_V1_MIN_SIZE)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           "policy: network policy missing or too small");
      return FALSE;
    }
  switch (policy->net->mode)
    {
    case SBX_NET_MODE_DENY:
    case SBX_NET_MODE_OPEN:
      break;
    case SBX_NET_MODE_PROXY:   /* egress: sbx-linux-egress.c */
      if (!sbx_linux_egress_validate (policy->net, error))
        return FALSE;
      break;
    case SBX_NET_MODE_PORTS:
      if (policy->net->n_tcp_ports == 0 || policy->net->n_tcp_ports > 65535
          || policy->net->tcp_ports == NULL)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "policy: network mode ports with %u ports%s", policy->net->n_tcp_ports,
                       policy->net->tcp_ports == NULL ? " and no array" : "");
          return FALSE;
        }
      for (guint32 k = 0; k < policy->net->n_tcp_ports; k++)
        if (policy->net->tcp_ports[k] == 0)
          {
            g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                         "policy: network port %u is 0", k);
            return FALSE;
          }
      break;
    default:
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "policy: unknown network mode %u", policy->net->mode);
      return FALSE;
    }
  if (policy->limits != NULL && policy->limits->struct_size < SBX_LIMITS_V1_MIN_SIZE)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           "policy: limits smaller than SbxLimitsV1");
      return FALSE;
    }
  if (policy->state_dir != NULL && !path_is_clean_absolute (policy->state_dir))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "policy: state directory '%s' is not a clean absolute path", policy->state_dir);
      return FALSE;
    }
  if (policy->flags & SBX_POLICY_UNCONFINED)
    {
      *status = SBX_STATUS_UNSUPPORTED;
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                           "policy: an unconfined policy belongs to the unconfined backend; "
                           "the Linux backends only confine");
      return FALSE;
    }
  *status = SBX_STATUS_OK;
  return TRUE;
}

/* Upstream's IsAccessRestricted: some rule denies an axis of @mask, or the
 * root does not get all of @mask. */
