/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The conformance cases (tools/sbx-conformance-cases.c, the same code the
 * sbx-conformance program runs) against the bundled backends, which must
 * pass, and against mock-broken-read, which claims read-boundary and
 * enforces nothing: it must fail on read-boundary and on nothing else.
 */
#include "sbx-conformance-cases.h"

#include <string.h>

static GPtrArray *
run_cases (const char *plugin_file,
           const char *backend)
{
  g_autoptr(GError) error = NULL;
  GPtrArray *cases = NULL;
  SbxConformanceOptions options = { 0 };

  options.plugin_path = plugin_file;
  options.backend = backend;
  options.probe_helper = g_getenv ("SBX_TEST_CONFORMANCE_PROBE");
  options.self_path = g_getenv ("SBX_TEST_CONFORMANCE");
  g_assert_nonnull (options.probe_helper);
  g_assert_nonnull (options.self_path);
  g_assert_true (sbx_conformance_run (&options, &cases, &error));
  g_assert_no_error (error);
  g_assert_nonnull (cases);
  for (guint i = 0; i < cases->len; i++)
    {
      SbxConformanceCase *c = cases->pdata[i];

      g_test_message ("%s %s %s/%s: %s", c->outcome == SBX_CONFORMANCE_PASS ? "pass"
                                         : c->outcome == SBX_CONFORMANCE_FAIL ? "FAIL" : "skip",
                      c->backend != NULL ? c->backend : "-", c->area, c->name, c->detail);
    }
  return cases;
}

static guint
count (GPtrArray             *cases,
       const char            *backend,
       const char            *area,
       SbxConformanceOutcome  outcome)
{
  guint n = 0;

  for (guint i = 0; i < cases->len; i++)
    {
      SbxConformanceCase *c = cases->pdata[i];

      if ((backend == NULL || g_strcmp0 (c->backend, backend) == 0)
          && (area == NULL || g_str_equal (c->area, area)) && c->outcome == outcome)
        n++;
    }
  return n;
}

static char *
plugin_file (const char *env,
             const char *name)
{
  const char *dir = g_getenv (env);

  if (dir == NULL)
    return NULL;
  return g_build_filename (dir, name, NULL);
}

/* Every claimed guarantee of a bundled backend holds: no case fails, and
 * each of @areas was actually proven (passed) for @backend. */
static void
assert_conforms (GPtrArray         *cases,
                 const char        *backend,
                 const char *const *areas)
{
  g_assert_cmpuint (count (cases, NULL, NULL, SBX_CONFORMANCE_FAIL), ==, 0);
  g_assert_cmpuint (count (cases, backend, "claims", SBX_CONFORMANCE_PASS), ==, 1);
  for (guint i = 0; areas[i] != NULL; i++)
    {
      if (count (cases, backend, areas[i], SBX_CONFORMANCE_PASS) == 0)
        g_error ("%s: nothing of %s was proven", backend, areas[i]);
    }
}

static void
test_unconfined (void)
{
  g_autofree char *file = plugin_file ("SBX_TEST_UNCONFINED_PLUGIN_DIR", "sbx-plugin-unconfined.so");
  g_autoptr(GPtrArray) cases = NULL;
  static const char *const areas[] = { "env-scrub", "teardown", "limits", NULL };

  if (file == NULL)
    {
      g_test_skip ("the unconfined backend is not built (backend-unconfined=disabled)");
      return;
    }
  cases = run_cases (file, NULL);
  assert_conforms (cases, "unconfined", areas);
  /* It claims nothing else: every other guarantee is listed as not claimed. */
  g_assert_cmpuint (count (cases, "unconfined", "read-boundary", SBX_CONFORMANCE_PASS), ==, 0);
  g_assert_cmpuint (count (cases, "unconfined", "read-boundary", SBX_CONFORMANCE_SKIP), ==, 1);
}

static void
test_linux (void)
{
  g_autofree char *file = plugin_file ("SBX_TEST_LINUX_PLUGIN_DIR", "sbx-plugin-linux.so");
  g_autoptr(GPtrArray) cases = NULL;
  static const char *const landlock_areas[] = { "write-boundary", "read-boundary", "env-scrub",
                                                "network-boundary", "teardown", "limits",
                                                "spawn-report", NULL };
  static const char *const userns_areas[] = { "process-boundary", "write-boundary", "read-boundary",
                                              "env-scrub", "network-boundary", "address-network",
                                              "teardown", "limits", "spawn-report", NULL };

  if (file == NULL)
    {
      g_test_skip ("the Linux backend is not built");
      return;
    }
  cases = run_cases (file, NULL);
  g_assert_cmpuint (count (cases, NULL, NULL, SBX_CONFORMANCE_FAIL), ==, 0);
  /* A rung whose probe fails here claims nothing (its probe case is the
   * skip that says why); a rung that probes is proven on what it claims. */
  if (count (cases, "linux-userns", "probe", SBX_CONFORMANCE_PASS) == 1)
    assert_conforms (cases, "linux-userns", userns_areas);
  else
    g_test_message ("linux-userns does not probe on this host");
  if (count (cases, "linux-landlock", "probe", SBX_CONFORMANCE_PASS) == 1)
    assert_conforms (cases, "linux-landlock", landlock_areas);
  else
    g_test_message ("linux-landlock does not probe on this host");
  if (count (cases, NULL, "probe", SBX_CONFORMANCE_PASS) == 0)
    g_test_skip ("no rung of the Linux backend probes on this host");
}

/* Every case of @names in @area has @outcome (and exists). */
static void
assert_cases (GPtrArray             *cases,
              const char            *area,
              const char *const     *names,
              SbxConformanceOutcome  outcome)
{
  for (guint k = 0; names[k] != NULL; k++)
    {
      gboolean seen = FALSE;

      for (guint i = 0; i < cases->len && !seen; i++)
        {
          SbxConformanceCase *c = cases->pdata[i];

          if (g_str_equal (c->area, area) && g_str_equal (c->name, names[k]))
            {
              if (c->outcome != outcome)
                g_error ("%s/%s: outcome %d, expected %d (%s)", area, names[k], c->outcome, outcome, c->detail);
              seen = TRUE;
            }
        }
      if (!seen)
        g_error ("%s/%s: no such case", area, names[k]);
    }
}

/* The serve_listeners cases (tools/sbx-conformance-listeners.c). */
static const char *const listeners_cases[] = {
  "listeners-serve", "listeners-forward-approved", "listeners-forward-unauthorized", "listeners-dns-approved",
  "listeners-dns-refuses-other", "listeners-dns-malformed", "listeners-dns-other-execution",
  "listeners-name-non-public", "listeners-unknown-kind", "listeners-revoke-denial", "listeners-revoke-closes", NULL
};

/* The bundled egress extension conforms: every egress case passes, the
 * serve_listeners ones included. */
static void
test_egress_http (void)
{
  g_autofree char *file = plugin_file ("SBX_TEST_EGRESS_HTTP_PLUGIN_DIR", "sbx-plugin-egress-http.so");
  g_autoptr(GPtrArray) cases = NULL;

  if (file == NULL)
    {
      g_test_skip ("the egress-http plugin is not built");
      return;
    }
  cases = run_cases (file, NULL);
  g_assert_cmpuint (count (cases, NULL, NULL, SBX_CONFORMANCE_FAIL), ==, 0);
  g_assert_cmpuint (count (cases, NULL, "egress-http-connect", SBX_CONFORMANCE_PASS), >=, 23);
  assert_cases (cases, "egress-http-connect", listeners_cases, SBX_CONFORMANCE_PASS);
  {
    /* every refusal reaches the host's denial sink, not only the first */
    static const char *const watch[] = { "watch-denials", NULL };

    assert_cases (cases, "egress-http-connect", watch, SBX_CONFORMANCE_PASS);
  }
}

/* The relay mock answers every connection whatever its credential: the
 * egress cases that must fail for it do, by name, and the ones it meets
 * (its direct fingerprint, serving a listener, closing it at revoke) pass;
 * it has watch_denials, but its proxy refuses nothing to report.
 * Its serve_listeners (the vendor's seam for proxy-unaware clients) is
 * honest: every listeners case passes. */
static void
test_egress_nonconforming (void)
{
  g_autofree char *file = plugin_file ("SBX_TEST_MOCK_PLUGIN_DIR",
                                       "egress-relay/sbx-plugin-mock-egress-relay.so");
  g_autoptr(GPtrArray) cases = run_cases (file, NULL);
  static const char *const must_fail[] = { "start-upstream", "no-credential-407", "unapproved-port-403",
                                           "other-execution-407", "revoke-denial",
                                           /* its proxy refuses nothing, so it reports nothing */
                                           "watch-denials", NULL };
  static const char *const must_pass[] = { "start-direct", "serve", "revoked-credential-dead", NULL };

  assert_cases (cases, "egress-mock-egress-relay", must_fail, SBX_CONFORMANCE_FAIL);
  assert_cases (cases, "egress-mock-egress-relay", must_pass, SBX_CONFORMANCE_PASS);
  g_assert_cmpuint (count (cases, NULL, "egress-mock-egress-relay", SBX_CONFORMANCE_FAIL), >=, 5);
  assert_cases (cases, "egress-mock-egress-relay", listeners_cases, SBX_CONFORMANCE_PASS);
}

/* Every listeners case can fail: the relay mock with its listeners broken
 * on purpose (SBX_MOCK_EGRESS_RELAY_LISTENERS=lax: relays unauthorized
 * targets, dials names unchecked, answers any name, wedges on a malformed
 * query, records no denial, keeps its listeners after revoke) fails each by
 * name, while the controls it still meets (serving, relaying the approved
 * literal, answering its own name) pass. */
static void
test_egress_listeners_broken (void)
{
  g_autofree char *file = plugin_file ("SBX_TEST_MOCK_PLUGIN_DIR",
                                       "egress-relay/sbx-plugin-mock-egress-relay.so");
  g_autoptr(GPtrArray) cases = NULL;
  static const char *const must_fail[] = {
    "listeners-forward-unauthorized", "listeners-dns-refuses-other", "listeners-dns-malformed",
    "listeners-dns-other-execution", "listeners-name-non-public", "listeners-revoke-denial",
    "listeners-revoke-closes", NULL
  };
  static const char *const must_pass[] = { "listeners-serve", "listeners-forward-approved",
                                           "listeners-dns-approved", NULL };

  g_setenv ("SBX_MOCK_EGRESS_RELAY_LISTENERS", "lax", TRUE);
  cases = run_cases (file, NULL);
  g_unsetenv ("SBX_MOCK_EGRESS_RELAY_LISTENERS");
  assert_cases (cases, "egress-mock-egress-relay", must_fail, SBX_CONFORMANCE_FAIL);
  assert_cases (cases, "egress-mock-egress-relay", must_pass, SBX_CONFORMANCE_PASS);
}

/* An egress extension without serve_listeners gets one SKIP saying what
 * that costs, and no listeners case runs. */
static void
test_egress_no_listeners (void)
{
  g_autofree char *file = plugin_file ("SBX_TEST_MOCK_PLUGIN_DIR", "egress/sbx-plugin-mock-egress.so");
  g_autoptr(GPtrArray) cases = run_cases (file, NULL);
  gboolean seen = FALSE;

  for (guint i = 0; i < cases->len; i++)
    {
      SbxConformanceCase *c = cases->pdata[i];

      if (!g_str_equal (c->area, "egress-mock-egress") || !g_str_has_prefix (c->name, "listeners"))
        continue;
      g_assert_cmpstr (c->name, ==, "listeners");
      g_assert_cmpint (c->outcome, ==, SBX_CONFORMANCE_SKIP);
      g_assert_nonnull (strstr (c->detail, "proxy-unaware clients"));
      g_assert_nonnull (strstr (c->detail, "no route"));
      seen = TRUE;
    }
  g_assert_true (seen);
}

/* The broken mock fails, naming read-boundary, and only read-boundary: the
 * suite judges by claims, so env-scrub (which does hold) passes. */
static void
test_broken_read (void)
{
  g_autofree char *file = plugin_file ("SBX_TEST_MOCK_PLUGIN_DIR", "broken-read/sbx-plugin-mock-broken-read.so");
  g_autoptr(GPtrArray) cases = run_cases (file, NULL);

  g_assert_cmpuint (count (cases, "mock-broken-read", "read-boundary", SBX_CONFORMANCE_FAIL), >=, 2);
  g_assert_cmpuint (count (cases, NULL, NULL, SBX_CONFORMANCE_FAIL), ==,
                    count (cases, "mock-broken-read", "read-boundary", SBX_CONFORMANCE_FAIL));
  g_assert_cmpuint (count (cases, "mock-broken-read", "env-scrub", SBX_CONFORMANCE_PASS), ==, 1);
  /* The positive control inside the sandbox still passed. */
  for (guint i = 0; i < cases->len; i++)
    {
      SbxConformanceCase *c = cases->pdata[i];

      if (g_str_equal (c->name, "read-in-workspace"))
        g_assert_cmpint (c->outcome, ==, SBX_CONFORMANCE_PASS);
    }
}

/* Every guarantee case can fail: mock-ok, told to claim process-, write-,
 * read- and network-boundary, env-scrub and resource-limits while confining
 * nothing, fails each boundary by name; env-scrub (which the host's
 * environment makes true) still passes. */
static void
test_claims_unenforced (void)
{
  g_autofree char *file = plugin_file ("SBX_TEST_MOCK_PLUGIN_DIR", "ok/sbx-plugin-mock-ok.so");
  g_autoptr(GPtrArray) cases = NULL;
  static const char *const lies[] = { "process-boundary", "write-boundary", "read-boundary",
                                      "network-boundary", "resource-limits", NULL };

  g_setenv ("SBX_MOCK_OK_GUARANTEES", "0x5f", TRUE);
  g_setenv ("SBX_MOCK_OK_LEVEL", "1", TRUE);
  cases = run_cases (file, "mock-ok");
  g_unsetenv ("SBX_MOCK_OK_GUARANTEES");
  g_unsetenv ("SBX_MOCK_OK_LEVEL");
  for (guint i = 0; lies[i] != NULL; i++)
    if (count (cases, "mock-ok", lies[i], SBX_CONFORMANCE_FAIL) == 0)
      g_error ("mock-ok claims %s and enforces nothing, yet no %s case failed", lies[i], lies[i]);
  g_assert_cmpuint (count (cases, "mock-ok", "env-scrub", SBX_CONFORMANCE_FAIL), ==, 0);
  g_assert_cmpuint (count (cases, "mock-ok", "env-scrub", SBX_CONFORMANCE_PASS), ==, 1);
}

/* compile claiming more than probe never reaches the cases: the host
 * refuses the spec, and the suite reports the failed compile. */
static void
test_claims_more (void)
{
  g_autofree char *file = plugin_file ("SBX_TEST_MOCK_PLUGIN_DIR",
                                       "contract-breaker/sbx-plugin-mock-contract-breaker.so");
  g_autoptr(GPtrArray) cases = run_cases (file, "mock-claims-more-guarantees");
  gboolean seen = FALSE;

  for (guint i = 0; i < cases->len; i++)
    {
      SbxConformanceCase *c = cases->pdata[i];

      if (g_strcmp0 (c->backend, "mock-claims-more-guarantees") == 0 && g_str_equal (c->area, "claims"))
        {
          g_assert_cmpint (c->outcome, ==, SBX_CONFORMANCE_FAIL);
          g_assert_nonnull (strstr (c->detail, "compile claims more than probe found"));
          seen = TRUE;
        }
    }
  g_assert_true (seen);
}

int
main (int    argc,
      char **argv)
{
  /* Before any thread: the secret env-scrub must hide. */
  sbx_conformance_prepare_environment ();
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/conformance/unconfined", test_unconfined);
  g_test_add_func ("/conformance/linux", test_linux);
  g_test_add_func ("/conformance/broken-read", test_broken_read);
  g_test_add_func ("/conformance/egress-http", test_egress_http);
  g_test_add_func ("/conformance/egress-nonconforming", test_egress_nonconforming);
  g_test_add_func ("/conformance/egress-listeners-broken", test_egress_listeners_broken);
  g_test_add_func ("/conformance/egress-no-listeners", test_egress_no_listeners);
  g_test_add_func ("/conformance/contract-breaker", test_claims_more);
  g_test_add_func ("/conformance/claims-unenforced", test_claims_unenforced);
  return g_test_run ();
}
