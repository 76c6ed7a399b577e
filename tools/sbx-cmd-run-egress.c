/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx run's egress options.  --allow-host HOST:PORT (repeatable) gives the
 * run an egress route (direct, or --upstream-proxy URL) and approves each
 * target for this run only: a network that is Deny in the profile becomes
 * Gated for the run and each target is one network.proxy-target.v1 grant
 * spent by it; a Gated network gets the same grants; under Allow the route
 * already lets every target through.  --upstream-proxy alone routes an
 * Allow network through the organisation's proxy.
 *
 * A Gated network is observed with or without these options: with no route
 * asked for, a Sandboxed run gets the direct route --allow-host uses
 * (sbx_run_egress_gated_route), and each connection of a Gated network
 * that no grant opens is refused at once, as a denial naming the
 * network.proxy-target.v1 grant that opens it (sbx_run_egress_observe).
 * Without the route such a run has no proxy: its connections fail unseen,
 * and the grant a denial would name has nothing to authorize.
 */
#include "sbx-cmd-run-egress.h"
#include "sbx-cmds.h"

#include <string.h>

void
sbx_run_egress_clear (SbxRunEgress *egress)
{
  g_clear_pointer (&egress->targets, g_ptr_array_unref);
  g_clear_pointer (&egress->route, sbx_egress_route_unref);
}

/* The URL's text in sbx's own argv strings is overwritten: the parsed copy
 * is all sbx needs, and /proc/PID/cmdline is readable by other processes
 * of the host. */
static void
wipe_from_argv (const char *url,
                int         argc,
                char      **argv)
{
  gsize len = strlen (url);

  if (len == 0)
    return;
  for (int i = 0; i < argc; i++)
    {
      char *hit = argv[i] != NULL ? strstr (argv[i], url) : NULL;

      if (hit != NULL)
        memset (hit, 'x', len);
    }
}

gboolean
sbx_run_egress_parse (SbxRunEgress  *egress,
                      char         **allow_hosts,
                      char          *upstream,
                      int            argc,
                      char         **argv,
                      GError       **error)
{
  memset (egress, 0, sizeof *egress);
  egress->targets = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; allow_hosts != NULL && allow_hosts[i] != NULL; i++)
    {
      g_autofree char *text = g_strconcat ("tcp:", allow_hosts[i], NULL);
      g_autoptr(GError) local = NULL;
      g_autoptr(SbxNetworkTarget) target = sbx_network_target_parse (text, &local);

      if (target == NULL)
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--allow-host %s: %s (HOST:PORT, an IPv6 literal in brackets)", allow_hosts[i],
                       local->message);
          return FALSE;
        }
      /* Refused now, not at connect: the library's rule for what sbx never
       * reaches (a cloud metadata address in any form). */
      if (!sbx_network_target_check_reachable (target, &local))
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--allow-host %s: %s",
                       allow_hosts[i], local->message);
          return FALSE;
        }
      g_ptr_array_add (egress->targets, g_strdup (sbx_network_target_to_string (target)));
    }
  if (upstream != NULL)
    {
      g_autofree char *from_env = NULL;
      const char *url = upstream;

      if (g_str_has_prefix (upstream, "env:"))
        {
          url = g_getenv (upstream + 4);
          if (url == NULL || upstream[4] == '\0')
            {
              g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                           "--upstream-proxy %s: the environment variable %s is not set", upstream,
                           upstream + 4);
              return FALSE;
            }
          from_env = g_strdup (url);
          url = from_env;
        }
      egress->route = sbx_egress_route_new_upstream (url, FALSE, error);
      if (from_env != NULL)
        explicit_bzero (from_env, strlen (from_env));
      else
        wipe_from_argv (upstream, argc, argv);
      explicit_bzero (upstream, strlen (upstream));
      if (egress->route == NULL)
        {
          g_prefix_error (error, "--upstream-proxy: ");
          return FALSE;
        }
    }
  else if (egress->targets->len > 0)
    egress->route = sbx_egress_route_new_direct ();
  return TRUE;
}

SbxProfile *
sbx_run_egress_profile (SbxRunEgress  *egress,
                        SbxProfile    *profile,
                        gboolean       explicit_deny,
                        GError       **error)
{
  g_autoptr(SbxProfileConfig) config = NULL;

  if (egress->targets->len == 0)
    {
      if (egress->route != NULL && sbx_profile_get_network (profile) == SBX_ACCESS_DENY)
        {
          g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                               "--upstream-proxy: the network is denied, so nothing would use the "
                               "route; add --allow-host HOST:PORT or --network allow");
          return NULL;
        }
      return sbx_profile_ref (profile);
    }
  if (explicit_deny)
    {
      g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                           "--allow-host approves targets of a network that --network deny closes");
      return NULL;
    }
  if (sbx_profile_get_network (profile) != SBX_ACCESS_DENY)
    return sbx_profile_ref (profile);
  config = sbx_profile_dup_config (profile);
  sbx_profile_config_set_network (config, SBX_ACCESS_GATED);
  return sbx_profile_new (config, error);
}

void
sbx_run_egress_set_options (SbxRunEgress          *egress,
                            SbxExecutorSetOptions *options)
{
  sbx_executor_set_options_set_egress_route (options, egress->route);
}

/* Whether the default registry (the one sbx's executor sets use) has the
 * egress extension a direct route is served by, "http-connect" of the
 * egress-http plugin. */
static gboolean
have_direct_route_extension (void)
{
  g_autoptr(GPtrArray) extensions = sbx_registry_list_extensions (sbx_registry_get_default ());

  for (guint i = 0; i < extensions->len; i++)
    if (sbx_extension_info_get_kind (extensions->pdata[i]) == SBX_EXTENSION_KIND_EGRESS
        && g_str_equal (sbx_extension_info_get_name (extensions->pdata[i]), "http-connect"))
      return TRUE;
  return FALSE;
}

SbxEgressRoute *
sbx_run_egress_gated_route (SbxProfile        *profile,
                            const char *const *approve)
{
  /* An Unconfined profile cannot take a route (no sandbox to keep the
   * network to it); Allow needs none to be reached and Deny is never
   * asked. */
  if (sbx_profile_get_network (profile) != SBX_ACCESS_GATED
      || sbx_profile_get_isolation (profile) != SBX_ISOLATION_SANDBOXED)
    return NULL;
  /* A network.broad.v1 grant opens its port to every address for the run,
   * which then claims no network guarantee; the core refuses it on a set
   * with a route (the run would lack the target-network its executor
   * promises), so such a run keeps no route, as before. */
  for (gsize i = 0; approve != NULL && approve[i] != NULL; i++)
    if (g_str_has_prefix (approve[i], SBX_GRANT_CLASS_NETWORK_BROAD ":")
        || g_str_equal (approve[i], SBX_GRANT_CLASS_NETWORK_BROAD))
      return NULL;
  /* Without the egress-http plugin (a build or an installation without
   * it) the route cannot be served: the run keeps the closed network it
   * had before (its connections refused unseen, no route in its report)
   * rather than failing. */
  if (!have_direct_route_extension ())
    return NULL;
  return sbx_egress_route_new_direct ();
}

gboolean
sbx_run_egress_may_observe (SbxProfile *profile)
{
  const char *const *gated = sbx_profile_get_gated_host_sockets (profile);

  /* Asking is observing (nobody answers) only while it approves nothing:
   * a run that asks with a gated host socket claims no read, write or
   * network boundary (an approval would hand it a host daemon), so
   * without --ask such a run is not made to ask. */
  return sbx_profile_get_unix_sockets (profile) || gated == NULL || gated[0] == NULL;
}

void
sbx_run_egress_observe (SbxExecutor   *executor,
                        SbxRunOptions *options)
{
  /* Where the backend cannot keep the network to the route (rung 2: no
   * network namespace), the proxy would be named to a sandbox that cannot
   * reach it: the run is not authorized on it, its connections fail
   * unseen, and the report's egress-route entry says the route is not
   * kept. */
  if (!(sbx_executor_get_guarantees (executor) & SBX_GUARANTEE_TARGET_NETWORK))
    return;
  /* Asking with nobody to answer: the library refuses each question at
   * once (no delivery, no main-loop round trip) and the refusal is a
   * denial of the run.  Without asking, a run authorized for no target
   * gets no proxy at all, so nothing would be seen. */
  sbx_run_options_set_ask (options, TRUE);
}

gboolean
sbx_run_egress_mint (SbxRunEgress  *egress,
                     SbxExecutor   *executor,
                     SbxProfile    *profile,
                     const char    *execution_id,
                     const char    *command,
                     const char    *cwd,
                     GPtrArray     *tokens,
                     GPtrArray     *approved,
                     GError       **error)
{
  if (sbx_profile_get_network (profile) != SBX_ACCESS_GATED)
    return TRUE;
  for (guint i = 0; i < egress->targets->len; i++)
    {
      const char *target = egress->targets->pdata[i];
      char *token = sbx_executor_issue_grant (executor, execution_id, command, cwd,
                                              SBX_GRANT_CLASS_NETWORK_PROXY_TARGET, target, NULL, error);

      if (token == NULL)
        {
          g_prefix_error (error, "--allow-host %s: ", target + 4);
          return FALSE;
        }
      g_ptr_array_add (tokens, token);
      g_ptr_array_add (approved, g_strconcat (SBX_GRANT_CLASS_NETWORK_PROXY_TARGET ":", target, NULL));
    }
  return TRUE;
}

void
sbx_run_egress_report_denial (SbxRunResult *result)
{
  const char *target = sbx_run_result_get_denied_target (result);
  const char *reason = sbx_run_result_get_denial_reason (result);

  /* A route that reports every refusal has them in the run's denials,
   * each printed once with the grant that opens it
   * (sbx-cmd-run-denials.c): this line would repeat the first one, with
   * the plugin's own wording ("not approved when asked" for a run sbx
   * asked on nobody's behalf).  Only the first is known otherwise. */
  if (target == NULL || sbx_run_result_get_denials (result)->len > 0
      || sbx_run_result_get_denials_dropped (result) > 0)
    return;
  if (reason != NULL)
    sbx_cli_error ("run: network target denied: %s (%s)", target, reason);
  else
    sbx_cli_error ("run: network target denied: %s", target);
}
