/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Conformance, area "spawn-report": a spawn's report never claims a
 * guarantee its spawn spec dropped.
 *
 * Two grants widen one spawn's policy past a guarantee the backend claims
 * for the executor: network.broad.v1 (TCP to a port on any address: no
 * network-boundary, no address-network) and filesystem.host.read.v1
 * host:* (the whole host readable: no read-boundary).  For each whose
 * guarantee the backend claims, a profile that gates that capability gets
 * an executor on the backend, the grant is issued and a start is prepared:
 * the library compiles the spawn's own spec with the backend and hands out
 * its report (what `sbx run --report` prints).  That report must be the
 * run's (scope "run"), must not list the guarantee, must call no entry of
 * that guarantee enforced, and must name the grant that removed it.  A
 * backend that claims the dropped network guarantee for the widened spec is
 * refused by the core (GUARANTEE_MISMATCH): that is a failure of the
 * backend, recorded as such.  A backend that cannot enforce the grant class
 * (UNSUPPORTED) is skipped: nothing of it is claimed.
 */
#include "sbx-conformance-private.h"

#include <string.h>

typedef struct
{
  const char   *name;
  const char   *grant_class;
  SbxGuarantees dropped;
} SpawnDelta;

static const SpawnDelta deltas[] = {
  { "broad-network-grant", SBX_GRANT_CLASS_NETWORK_BROAD,
    SBX_GUARANTEE_NETWORK_BOUNDARY | SBX_GUARANTEE_ADDRESS_NETWORK },
  { "host-read-grant", SBX_GRANT_CLASS_FILESYSTEM_HOST_READ, SBX_GUARANTEE_READ_BOUNDARY },
};

/* Port 9 (discard): the grant is prepared, never run. */
#define BROAD_TARGET "tcp:*:9"

static SbxProfile *
gated_profile (Subject          *s,
               const SpawnDelta *d,
               GError          **error)
{
  g_autoptr(SbxProfileConfig) config = sbx_profile_dup_config (s->profile);

  if (d->dropped & SBX_GUARANTEE_READ_BOUNDARY)
    sbx_profile_config_set_host (config, SBX_ACCESS_GATED, sbx_profile_get_host_write (s->profile));
  else
    sbx_profile_config_set_network (config, SBX_ACCESS_GATED);
  return sbx_profile_new (config, error);
}

/* What is wrong with @report for a spawn under @grant (NULL: nothing). */
static char *
judge_report (SbxCompileReport *report,
              SbxGuarantees     dropped,
              const char       *grant)
{
  SbxGuarantees claimed = sbx_compile_report_get_guarantees (report) & dropped;
  gboolean named = FALSE;

  if (sbx_compile_report_get_scope (report) != SBX_REPORT_SCOPE_RUN)
    return g_strdup_printf ("the prepared spawn's report has scope “%s”, not “run”",
                            sbx_report_scope_to_string (sbx_compile_report_get_scope (report)));
  if (claimed != 0)
    {
      g_auto(GStrv) names = sbx_guarantees_to_strv (claimed);
      g_autofree char *joined = g_strjoinv (", ", names);

      return g_strdup_printf ("the spawn's report claims [%s], which %s removed", joined, grant);
    }
  for (guint i = 0; i < sbx_compile_report_get_n_entries (report); i++)
    {
      const char *feature = sbx_compile_report_get_entry_feature (report, i);
      const char *detail = sbx_compile_report_get_entry_detail (report, i);
      SbxGuarantees bit = 0;

      if (!sbx_guarantee_from_string (feature, &bit) || (bit & dropped) == 0)
        continue;
      if (sbx_compile_report_get_entry_status (report, i) == SBX_REPORT_STATUS_ENFORCED)
        return g_strdup_printf ("the spawn's report has an enforced %s entry (%s), which %s removed",
                                feature, detail != NULL ? detail : "no detail", grant);
      if (detail != NULL && strstr (detail, grant) != NULL)
        named = TRUE;
    }
  if (!named)
    return g_strdup_printf ("no entry of the spawn's report says that %s removed the guarantee", grant);
  return NULL;
}

static void
judge_delta (Subject          *s,
             const SpawnDelta *d)
{
  const char *backend = s->backend;
  const char *target = (d->dropped & SBX_GUARANTEE_READ_BOUNDARY) ? "host:*" : BROAD_TARGET;
  const char *argv[] = { "true", NULL };
  const char *tokens[2] = { NULL, NULL };
  g_autoptr(SbxExecutorSetOptions) options = sbx_executor_set_options_new ();
  g_autoptr(SbxProfile) profile = NULL;
  g_autoptr(SbxExecutorSet) set = NULL;
  g_autoptr(SbxExecutor) executor = NULL;
  g_autoptr(SbxRunOptions) run_options = NULL;
  g_autoptr(SbxPreparedProcess) prepared = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GError) close_error = NULL;
  g_autofree char *token = NULL;
  g_autofree char *grant = g_strdup_printf ("%s:%s", d->grant_class, target);
  g_autofree char *wrong = NULL;
  g_autofree char *drops = NULL;

  if ((s->compiled & d->dropped) == 0)
    {
      sbx_conformance_record (s->run, backend, "spawn-report", d->name, SBX_CONFORMANCE_SKIP,
                              "the backend claims none of the guarantees %s removes", grant);
      return;
    }
  profile = gated_profile (s, d, &error);
  sbx_executor_set_options_set_registry (options, s->run->registry);
  sbx_executor_set_options_set_backend (options, backend);
  sbx_executor_set_options_set_scratch_root (options, s->scratch);
  sbx_executor_set_options_set_max_executors (options, 1);
  if (profile != NULL)
    set = sbx_executor_set_new (profile, options, &error);
  if (set != NULL)
    executor = sbx_executor_set_for_key (set, "spawn-report", &error);
  if (executor != NULL)
    token = sbx_executor_issue_grant (executor, "conformance", "true", s->ws, d->grant_class, target,
                                      NULL, &error);
  if (token != NULL)
    {
      tokens[0] = token;
      run_options = sbx_run_options_new ();
      sbx_run_options_set_execution_id (run_options, "conformance");
      sbx_run_options_set_grants (run_options, tokens);
      prepared = sbx_executor_prepare (executor, s->ws, argv, run_options, NULL, &error);
    }

  if (prepared != NULL)
    wrong = judge_report (sbx_prepared_process_get_report (prepared), d->dropped, grant);
  if (prepared == NULL && g_error_matches (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_UNSUPPORTED))
    sbx_conformance_record (s->run, backend, "spawn-report", d->name, SBX_CONFORMANCE_SKIP,
                            "the backend cannot enforce %s, so no spawn gets it: %s", d->grant_class,
                            error->message);
  else if (prepared == NULL && g_error_matches (error, SBX_GRANT_ERROR, SBX_GRANT_ERROR_GUARANTEE_MISMATCH))
    sbx_conformance_record (s->run, backend, "spawn-report", d->name, SBX_CONFORMANCE_FAIL,
                            "the backend's compile of the spec widened by %s claims a guarantee that "
                            "grant removes (the core refused the spawn): %s", grant, error->message);
  else if (prepared == NULL)
    sbx_conformance_record (s->run, backend, "spawn-report", d->name, SBX_CONFORMANCE_FAIL,
                            "a spawn with %s could not be prepared on a profile that gates it: %s", grant,
                            error->message);
  else if (wrong != NULL)
    sbx_conformance_record (s->run, backend, "spawn-report", d->name, SBX_CONFORMANCE_FAIL, "%s", wrong);
  else
    {
      g_auto(GStrv) names = sbx_guarantees_to_strv (s->compiled & d->dropped);

      drops = g_strjoinv (", ", names);
      sbx_conformance_record (s->run, backend, "spawn-report", d->name, SBX_CONFORMANCE_PASS,
                              "the spawn with %s claims none of [%s], and its report names the grant",
                              grant, drops);
    }
  if (prepared != NULL)
    sbx_prepared_process_close (prepared);
  if (set != NULL && !sbx_executor_set_close (set, NULL, &close_error))
    sbx_conformance_record (s->run, backend, "teardown", "spawn-report-close", SBX_CONFORMANCE_FAIL,
                            "%s", close_error->message);
}

void
sbx_conformance_case_spawn_report (Subject *s)
{
  if (s->unconfined)
    {
      sbx_conformance_record (s->run, s->backend, "spawn-report", "grants", SBX_CONFORMANCE_SKIP,
                              "an Unconfined profile has nothing to gate");
      return;
    }
  for (gsize i = 0; i < G_N_ELEMENTS (deltas); i++)
    judge_delta (s, &deltas[i]);
}
