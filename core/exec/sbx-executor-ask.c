/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An asking run's approvals, when it ends: every live approval is a spent
 * grant of that run (see sbx-decision-private.h), in its result after the
 * grants it started with, and one "grant-spent" event each (with
 * "approved_while_running": true).  Nothing of it outlives the run.
 */
#include "sbx-executor-ask-private.h"

#include <string.h>

#include "sbx-grant.h"
#include "sbx-profile-private.h"
#include "sbx-run-result-private.h"

SbxDenial *
sbx_ask_resolve_question (const char *name,
                          SbxAccess   network)
{
  g_autofree char *grant_target = NULL;

  /* Only a gated network is asked; a name as the stub parses it (labels
   * of printable ASCII, no controls) and no longer than a name can be. */
  if (name == NULL || name[0] == '\0' || network != SBX_ACCESS_GATED || strlen (name) > 253)
    return NULL;
  for (const char *p = name; *p != '\0'; p++)
    if ((guchar) *p <= 0x20 || (guchar) *p >= 0x7f || *p == ':')
      return NULL;
  grant_target = g_strdup_printf ("tcp:%s:*", name);
  return sbx_denial_new (SBX_DENIAL_OPERATION_RESOLVE, name, "dns-stub", SBX_GRANT_CLASS_NETWORK_PROXY_TARGET,
                         grant_target, "network is gated");
}

gboolean
sbx_ask_gates_files (SbxAskSettings *ask,
                     SbxProfile     *profile)
{
  if (!sbx_ask_settings_get_ask (ask))
    return FALSE;
  if (sbx_profile_get_host_read (profile) == SBX_ACCESS_GATED
      || sbx_profile_get_workspace_read (profile) == SBX_ACCESS_GATED)
    return TRUE;
  for (guint i = 0; i < sbx_profile_get_n_roots (profile); i++)
    if (sbx_profile_get_root_read (profile, i) == SBX_ACCESS_GATED)
      return TRUE;
  return FALSE;
}

gboolean
sbx_ask_gates_host_sockets (SbxAskSettings *ask,
                            SbxProfile     *profile)
{
  const char *const *gated = sbx_profile_get_gated_host_sockets (profile);

  /* a profile that opens unix sockets has no connect supervisor to ask */
  return sbx_ask_settings_get_ask (ask) && !sbx_profile_get_unix_sockets (profile)
         && gated != NULL && gated[0] != NULL;
}


typedef struct
{
  guint64     run_id;
  const char *grant;
} ApprovalEvent;

static void
add_approval_members (JsonBuilder *builder,
                      gpointer     data)
{
  const ApprovalEvent *ev = data;

  json_builder_set_member_name (builder, "run");
  json_builder_add_int_value (builder, (gint64) ev->run_id);
  json_builder_set_member_name (builder, "grant");
  json_builder_add_string_value (builder, ev->grant);
  json_builder_set_member_name (builder, "approved_while_running");
  json_builder_add_boolean_value (builder, TRUE);
}

void
sbx_executor_report_live_approvals (SbxExecutorShared *shared,
                                    const char        *key,
                                    guint64            run_id,
                                    SbxRunResult      *result,
                                    SbxDecisionBroker *broker)
{
  g_auto(GStrv) approvals = sbx_decision_broker_dup_spent (broker);

  if (approvals[0] == NULL)
    return;
  if (result != NULL)
    {
      const char *const *before = sbx_run_result_get_grants_spent (result);
      g_autoptr(GStrvBuilder) all = g_strv_builder_new ();
      g_auto(GStrv) lines = NULL;

      g_strv_builder_addv (all, (const char **) before);
      g_strv_builder_addv (all, (const char **) approvals);
      lines = g_strv_builder_end (all);
      sbx_run_result_set_grants_spent (result, (const char *const *) lines);
    }
  for (guint i = 0; approvals[i] != NULL; i++)
    {
      ApprovalEvent ev = { run_id, approvals[i] };

      sbx_executor_shared_emit (shared, SBX_EVENT_GRANT_SPENT, key, add_approval_members, &ev);
    }
}
