/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a Linux spec may claim, without a kernel: sbx_linux_claims_decide()
 * over a table of probe results x mechanisms x policy.  Each row names the
 * level, the guarantee bits and the statuses of the guarantee features it
 * must produce, or the refusal.  The function is pure, so the same rows are
 * also checked for determinism and for the one-way rule (no bit whose
 * feature is not reported ENFORCED).
 */
#include <string.h>
#include <glib.h>

#include "sbx-linux-claims.h"
#include "sbx-linux-private.h"

#define U1 SBX_LINUX_RUNG_USERNS
#define U2 SBX_LINUX_RUNG_LANDLOCK

#define PB SBX_ABI_GUARANTEE_PROCESS_BOUNDARY
#define WB SBX_ABI_GUARANTEE_WRITE_BOUNDARY
#define RB SBX_ABI_GUARANTEE_READ_BOUNDARY
#define ES SBX_ABI_GUARANTEE_ENV_SCRUB
#define NB SBX_ABI_GUARANTEE_NETWORK_BOUNDARY
#define AN SBX_ABI_GUARANTEE_ADDRESS_NETWORK
#define RL SBX_ABI_GUARANTEE_RESOURCE_LIMITS
#define TN SBX_ABI_GUARANTEE_TARGET_NETWORK

/* Landlock plan bits */
#define LL_RW   (SBX_LANDLOCK_ENFORCES_READ | SBX_LANDLOCK_ENFORCES_WRITE | SBX_LANDLOCK_ENFORCES_SCOPE)
#define LL_NET  (LL_RW | SBX_LANDLOCK_ENFORCES_NET)
#define LL_ABI2 (SBX_LANDLOCK_ENFORCES_READ | SBX_LANDLOCK_ENFORCES_WRITE_EXCEPT_TRUNCATE)
/* seccomp program bits */
#define SC_DENY  (SBX_SECCOMP_ENFORCES_INET_DENIED | SBX_SECCOMP_ENFORCES_UNIX_DENIED)
#define SC_OPEN  (SBX_SECCOMP_ENFORCES_UNIX_DENIED)
#define SC_PORTS (SBX_SECCOMP_ENFORCES_INET_TCP_ONLY | SBX_SECCOMP_ENFORCES_UNIX_DENIED | \
                  SBX_SECCOMP_ENFORCES_INET_LISTEN_DENIED)

#define DENY  SBX_NET_MODE_DENY
#define OPEN  SBX_NET_MODE_OPEN
#define PORTS SBX_NET_MODE_PORTS
#define PROXY SBX_NET_MODE_PROXY

/* Expected statuses: E enforced, U unenforced, N narrowed, - not reported. */
#define E SBX_ABI_REPORT_ENFORCED
#define U SBX_ABI_REPORT_UNENFORCED
#define N SBX_ABI_REPORT_NARROWED
#define _ 0

typedef struct
{
  const char         *name;
  SbxLinuxClaimsInput in;
  const char         *refusal;     /* substring, or NULL */
  uint32_t            level;
  uint64_t            bits;
  uint32_t            containment;
  /* process, write, read, network-boundary, address-network, network, unix-sockets,
   * target-network (0 when not listed) */
  uint32_t            status[SBX_LINUX_N_CLAIMS];
} Row;

/* in: rung, landlock, seccomp, proc_children, landlock_bits, seccomp_bits, limits,
 *     write_restricted, read_restricted, net_mode, allow_unix, unreadable_binds */
static const Row rows[] = {
  /* rung 1 */
  { "r1/full", { U1, TRUE, TRUE, TRUE, LL_RW, SC_DENY, FALSE, TRUE, TRUE, DENY, FALSE, FALSE },
    NULL, SBX_ABI_LEVEL_FULL, PB | WB | RB | ES | NB | AN, SBX_CONTAINMENT_ENFORCED,
    { E, E, E, E, E, _, _ } },
  { "r1/limits", { U1, TRUE, TRUE, TRUE, LL_RW, SC_DENY, TRUE, TRUE, TRUE, DENY, FALSE, FALSE },
    NULL, SBX_ABI_LEVEL_FULL, PB | WB | RB | ES | NB | AN | RL, SBX_CONTAINMENT_ENFORCED,
    { E, E, E, E, E, _, _ } },
  { "r1/no-landlock", { U1, FALSE, TRUE, TRUE, 0, SC_DENY, FALSE, TRUE, TRUE, DENY, FALSE, FALSE },
    NULL, SBX_ABI_LEVEL_DEGRADED, PB | WB | RB | ES | NB | AN, SBX_CONTAINMENT_ENFORCED,
    { E, E, E, E, E, _, _ } },
  { "r1/no-seccomp", { U1, TRUE, FALSE, TRUE, LL_RW, 0, FALSE, TRUE, TRUE, DENY, FALSE, FALSE },
    NULL, SBX_ABI_LEVEL_DEGRADED, PB | ES, SBX_CONTAINMENT_ENFORCED,
    { E, U, U, U, U, _, U } },
  { "r1/open", { U1, TRUE, TRUE, TRUE, LL_RW, SC_OPEN, FALSE, TRUE, TRUE, OPEN, FALSE, FALSE },
    NULL, SBX_ABI_LEVEL_FULL, PB | WB | RB | ES, SBX_CONTAINMENT_ENFORCED,
    { E, E, E, _, _, U, _ } },
  { "r1/unrestricted", { U1, TRUE, TRUE, TRUE, LL_RW, SC_DENY, FALSE, FALSE, FALSE, DENY, FALSE, FALSE },
    NULL, SBX_ABI_LEVEL_FULL, PB | ES | NB | AN, SBX_CONTAINMENT_ENFORCED,
    { E, _, _, E, E, _, _ } },
  { "r1/unix-allowed", { U1, TRUE, TRUE, TRUE, LL_RW, SBX_SECCOMP_ENFORCES_INET_DENIED, FALSE, TRUE, TRUE,
                         DENY, TRUE, FALSE },
    NULL, SBX_ABI_LEVEL_FULL, PB | WB | RB | ES | NB | AN, SBX_CONTAINMENT_ENFORCED,
    { E, E, E, E, E, _, U } },
  /* only the mounted roots' sockets by path; abstract ones in the private
   * network namespace, or scoped by Landlock in the host's */
  { "r1/unix-allowed-proxy", { U1, TRUE, TRUE, TRUE, LL_RW, SBX_SECCOMP_ENFORCES_INET_DENIED, FALSE, TRUE, TRUE,
                               PROXY, TRUE, FALSE },
    NULL, SBX_ABI_LEVEL_FULL, PB | WB | RB | ES | NB | AN | TN, SBX_CONTAINMENT_ENFORCED,
    { E, E, E, E, E, N, U, E } },
  { "r1/unix-allowed-open", { U1, TRUE, TRUE, TRUE, LL_RW, 0, FALSE, TRUE, TRUE, OPEN, TRUE, FALSE },
    NULL, SBX_ABI_LEVEL_FULL, PB | WB | RB | ES, SBX_CONTAINMENT_ENFORCED,
    { E, E, E, _, _, U, U } },
  /* the host network namespace without Landlock scoping: the host's
   * abstract sockets (an X server, a D-Bus bus) are reachable */
  { "r1/unix-allowed-open-no-scope", { U1, TRUE, TRUE, TRUE, SBX_LANDLOCK_ENFORCES_READ |
                                       SBX_LANDLOCK_ENFORCES_WRITE, 0, FALSE, TRUE, TRUE, OPEN, TRUE, FALSE },
    NULL, SBX_ABI_LEVEL_DEGRADED, PB | ES, SBX_CONTAINMENT_ENFORCED,
    { E, U, U, _, _, U, U } },
  /* write-only paths in the view: read boundary only through Landlock */
  { "r1/write-only", { U1, TRUE, TRUE, TRUE, LL_RW, SC_DENY, FALSE, TRUE, TRUE, DENY, FALSE, TRUE },
    NULL, SBX_ABI_LEVEL_FULL, PB | WB | RB | ES | NB | AN, SBX_CONTAINMENT_ENFORCED,
    { E, E, E, E, E, _, _ } },
  { "r1/write-only-no-landlock", { U1, FALSE, TRUE, TRUE, 0, SC_DENY, FALSE, TRUE, TRUE, DENY, FALSE, TRUE },
    "write-only", SBX_ABI_LEVEL_NONE, 0, 0, { _, _, _, _, _, _, _ } },
  /* ports (network.broad.v1): no network bit, ever */
  { "r1/ports", { U1, TRUE, TRUE, TRUE, LL_NET, SC_PORTS, FALSE, TRUE, TRUE, PORTS, FALSE, FALSE },
    NULL, SBX_ABI_LEVEL_FULL, PB | WB | RB | ES, SBX_CONTAINMENT_ENFORCED,
    { E, E, E, U, U, N, _ } },
  { "r1/ports-no-landlock-net", { U1, TRUE, TRUE, TRUE, LL_RW, SC_PORTS, FALSE, TRUE, TRUE, PORTS, FALSE,
                                  FALSE },
    "Landlock TCP rules", SBX_ABI_LEVEL_NONE, 0, 0, { _, _, _, _, _, _, _ } },
  { "r1/ports-no-tcp-only", { U1, TRUE, TRUE, TRUE, LL_NET, SC_OPEN, FALSE, TRUE, TRUE, PORTS, FALSE, FALSE },
    "seccomp TCP-only", SBX_ABI_LEVEL_NONE, 0, 0, { _, _, _, _, _, _, _ } },
  { "r1/ports-listen-open", { U1, TRUE, TRUE, TRUE, LL_NET,
                              SBX_SECCOMP_ENFORCES_INET_TCP_ONLY | SBX_SECCOMP_ENFORCES_UNIX_DENIED,
                              FALSE, TRUE, TRUE, PORTS, FALSE, FALSE },
    "whole network", SBX_ABI_LEVEL_NONE, 0, 0, { _, _, _, _, _, _, _ } },
  { "r1/ports-no-seccomp", { U1, TRUE, FALSE, TRUE, LL_NET, 0, FALSE, TRUE, TRUE, PORTS, FALSE, FALSE },
    "seccomp", SBX_ABI_LEVEL_NONE, 0, 0, { _, _, _, _, _, _, _ } },
  /* proxy (an egress route): the private namespace's one listener is the way out */
  { "r1/proxy", { U1, TRUE, TRUE, TRUE, LL_RW, SC_DENY, FALSE, TRUE, TRUE, PROXY, FALSE, FALSE },
    NULL, SBX_ABI_LEVEL_FULL, PB | WB | RB | ES | NB | AN | TN, SBX_CONTAINMENT_ENFORCED,
    { E, E, E, E, E, N, _, E } },
  { "r1/proxy-unix-reachable", { U1, TRUE, TRUE, TRUE, LL_RW, SBX_SECCOMP_ENFORCES_INET_DENIED, FALSE, TRUE,
                                 TRUE, PROXY, FALSE, FALSE },
    NULL, SBX_ABI_LEVEL_DEGRADED, PB | ES, SBX_CONTAINMENT_ENFORCED,
    { E, U, U, U, U, N, U, U } },

  /* rung 2 */
  { "r2/deny", { U2, TRUE, TRUE, TRUE, LL_NET, SC_DENY, FALSE, TRUE, TRUE, DENY, FALSE, FALSE },
    NULL, SBX_ABI_LEVEL_DEGRADED, WB | RB | ES | NB, SBX_CONTAINMENT_ENFORCED,
    { U, E, E, E, U, _, _ } },
  { "r2/no-scope", { U2, TRUE, TRUE, TRUE, SBX_LANDLOCK_ENFORCES_READ | SBX_LANDLOCK_ENFORCES_WRITE, SC_DENY,
                     FALSE, TRUE, TRUE, DENY, FALSE, FALSE },
    NULL, SBX_ABI_LEVEL_DEGRADED, WB | RB | ES | NB, SBX_CONTAINMENT_BEST_EFFORT,
    { U, E, E, E, U, _, _ } },
  { "r2/no-proc-children", { U2, TRUE, TRUE, FALSE, LL_NET, SC_DENY, FALSE, TRUE, TRUE, DENY, FALSE, FALSE },
    NULL, SBX_ABI_LEVEL_DEGRADED, WB | RB | ES | NB, SBX_CONTAINMENT_BEST_EFFORT,
    { U, E, E, E, U, _, _ } },
  { "r2/abi2-truncate", { U2, TRUE, TRUE, TRUE, LL_ABI2, SC_DENY | SBX_SECCOMP_ENFORCES_TRUNCATE_DENIED,
                          FALSE, TRUE, TRUE, DENY, FALSE, FALSE },
    NULL, SBX_ABI_LEVEL_DEGRADED, WB | RB | ES | NB, SBX_CONTAINMENT_BEST_EFFORT,
    { U, E, E, E, U, _, _ } },
  { "r2/abi2-no-truncate", { U2, TRUE, TRUE, TRUE, LL_ABI2, SC_DENY, FALSE, TRUE, TRUE, DENY, FALSE, FALSE },
    NULL, SBX_ABI_LEVEL_DEGRADED, RB | ES | NB, SBX_CONTAINMENT_BEST_EFFORT,
    { U, U, E, E, U, _, _ } },
  { "r2/glob-read", { U2, TRUE, TRUE, TRUE, SBX_LANDLOCK_ENFORCES_WRITE | SBX_LANDLOCK_ENFORCES_SCOPE, SC_DENY,
                      FALSE, TRUE, TRUE, DENY, FALSE, FALSE },
    NULL, SBX_ABI_LEVEL_DEGRADED, WB | ES | NB, SBX_CONTAINMENT_ENFORCED,
    { U, E, U, E, U, _, _ } },
  { "r2/net-tcp-only", { U2, TRUE, TRUE, TRUE, LL_NET, SC_PORTS, FALSE, TRUE, TRUE, DENY, FALSE, FALSE },
    NULL, SBX_ABI_LEVEL_DEGRADED, WB | RB | ES | NB, SBX_CONTAINMENT_ENFORCED,
    { U, E, E, E, U, _, _ } },
  { "r2/net-open-sockets", { U2, TRUE, TRUE, TRUE, LL_RW, SC_OPEN, FALSE, TRUE, TRUE, DENY, FALSE, FALSE },
    NULL, SBX_ABI_LEVEL_DEGRADED, WB | RB | ES, SBX_CONTAINMENT_ENFORCED,
    { U, E, E, U, U, _, _ } },
  { "r2/open", { U2, TRUE, TRUE, TRUE, LL_RW, SC_OPEN, FALSE, TRUE, TRUE, OPEN, FALSE, FALSE },
    NULL, SBX_ABI_LEVEL_DEGRADED, WB | RB | ES, SBX_CONTAINMENT_ENFORCED,
    { U, E, E, _, _, U, _ } },
  { "r2/ports", { U2, TRUE, TRUE, TRUE, LL_NET, SC_PORTS, TRUE, TRUE, TRUE, PORTS, FALSE, FALSE },
    NULL, SBX_ABI_LEVEL_DEGRADED, WB | RB | ES | RL, SBX_CONTAINMENT_ENFORCED,
    { U, E, E, U, U, N, _ } },
  { "r2/ports-no-landlock-net", { U2, TRUE, TRUE, TRUE, LL_RW, SC_PORTS, FALSE, TRUE, TRUE, PORTS, FALSE,
                                  FALSE },
    "Landlock TCP rules", SBX_ABI_LEVEL_NONE, 0, 0, { _, _, _, _, _, _, _ } },
  { "r2/unix-reachable", { U2, TRUE, TRUE, TRUE, LL_NET, SBX_SECCOMP_ENFORCES_INET_DENIED, FALSE, TRUE, TRUE,
                           DENY, FALSE, FALSE },
    NULL, SBX_ABI_LEVEL_DEGRADED, ES, SBX_CONTAINMENT_ENFORCED,
    { U, U, U, U, U, _, U } },
  /* unix sockets the profile allows: Landlock does not mediate a pathname
   * connect(), so every host daemon's socket is reachable and no boundary
   * holds, whatever the network and the Landlock ABI */
  { "r2/unix-allowed", { U2, TRUE, TRUE, TRUE, LL_NET, SBX_SECCOMP_ENFORCES_INET_DENIED, FALSE, TRUE, TRUE,
                         DENY, TRUE, FALSE },
    NULL, SBX_ABI_LEVEL_DEGRADED, ES, SBX_CONTAINMENT_ENFORCED,
    { U, U, U, U, U, _, U } },
  { "r2/unix-allowed-no-scope", { U2, TRUE, TRUE, TRUE, SBX_LANDLOCK_ENFORCES_READ | SBX_LANDLOCK_ENFORCES_WRITE |
                                  SBX_LANDLOCK_ENFORCES_NET, SBX_SECCOMP_ENFORCES_INET_DENIED, TRUE, TRUE, TRUE,
                                  DENY, TRUE, FALSE },
    NULL, SBX_ABI_LEVEL_DEGRADED, ES | RL, SBX_CONTAINMENT_BEST_EFFORT,
    { U, U, U, U, U, _, U } },
  { "r2/unix-allowed-open", { U2, TRUE, TRUE, TRUE, LL_RW, 0, FALSE, TRUE, TRUE, OPEN, TRUE, FALSE },
    NULL, SBX_ABI_LEVEL_DEGRADED, ES, SBX_CONTAINMENT_ENFORCED,
    { U, U, U, _, _, U, U } },
  { "r2/unix-allowed-ports", { U2, TRUE, TRUE, TRUE, LL_NET, SC_PORTS & ~SBX_SECCOMP_ENFORCES_UNIX_DENIED, FALSE,
                               TRUE, TRUE, PORTS, TRUE, FALSE },
    NULL, SBX_ABI_LEVEL_DEGRADED, ES, SBX_CONTAINMENT_ENFORCED,
    { U, U, U, U, U, N, U } },
  { "r2/no-seccomp", { U2, TRUE, FALSE, TRUE, LL_NET, 0, FALSE, TRUE, TRUE, DENY, FALSE, FALSE },
    "needs Landlock and seccomp", SBX_ABI_LEVEL_NONE, 0, 0, { _, _, _, _, _, _, _ } },
  /* rung 2 has no namespace for a proxy: its compile closes the network
   * first, and a proxy mode that still arrives is refused */
  { "r2/proxy", { U2, TRUE, TRUE, TRUE, LL_NET, SC_DENY, FALSE, TRUE, TRUE, PROXY, FALSE, FALSE },
    "rung 1", SBX_ABI_LEVEL_NONE, 0, 0, { _, _, _, _, _, _, _ } },
  { "bad-rung", { 7, TRUE, TRUE, TRUE, LL_NET, SC_DENY, FALSE, TRUE, TRUE, DENY, FALSE, FALSE },
    "rung", SBX_ABI_LEVEL_NONE, 0, 0, { _, _, _, _, _, _, _ } },
};

/* Which claim feature carries each guarantee bit. */
static const struct { uint64_t bit; SbxLinuxClaimFeature feature; } carriers[] = {
  { PB, SBX_LINUX_CLAIM_PROCESS_BOUNDARY }, { WB, SBX_LINUX_CLAIM_WRITE_BOUNDARY },
  { RB, SBX_LINUX_CLAIM_READ_BOUNDARY }, { NB, SBX_LINUX_CLAIM_NETWORK_BOUNDARY },
  { AN, SBX_LINUX_CLAIM_ADDRESS_NETWORK }, { TN, SBX_LINUX_CLAIM_TARGET_NETWORK },
};

static void
test_table (gconstpointer data)
{
  const Row *row = data;
  SbxLinuxClaims out, again;

  sbx_linux_claims_decide (&row->in, &out);
  if (row->refusal != NULL)
    {
      g_assert_nonnull (out.refusal);
      g_assert_nonnull (strstr (out.refusal, row->refusal));
    }
  else if (out.refusal != NULL)
    g_error ("%s: refused: %s", row->name, out.refusal);
  g_assert_cmpuint (out.level, ==, row->level);
  g_assert_cmphex (out.guarantees, ==, row->bits);
  if (row->refusal == NULL)
    g_assert_cmpuint (out.containment, ==, row->containment);
  for (guint f = 0; f < SBX_LINUX_N_CLAIMS; f++)
    {
      g_test_message ("%s: %s = %u (%s)", row->name, sbx_linux_claim_feature_name (f),
                      out.claims[f].status, out.claims[f].detail != NULL ? out.claims[f].detail : "");
      g_assert_cmpuint (out.claims[f].status, ==, row->status[f]);
      g_assert_true ((out.claims[f].status == 0) == (out.claims[f].detail == NULL));
    }
  /* One way: a bit is set exactly when its feature says ENFORCED. */
  for (guint k = 0; k < G_N_ELEMENTS (carriers); k++)
    g_assert_cmpint ((out.guarantees & carriers[k].bit) != 0, ==,
                     out.claims[carriers[k].feature].status == SBX_ABI_REPORT_ENFORCED);
  /* ENV_SCRUB always, unless refused. */
  g_assert_cmpint ((out.guarantees & ES) != 0, ==, row->refusal == NULL);
  /* Pure: the same input decides the same. */
  sbx_linux_claims_decide (&row->in, &again);
  g_assert_cmpmem (&out, sizeof out, &again, sizeof again);
}

/* A ports network never claims a network bit, whatever the mechanisms. */
static void
test_ports_never_claim_network (void)
{
  for (int rung = U1; rung <= U2; rung++)
    for (uint32_t ll = 0; ll < 32; ll++)
      for (uint32_t sc = 0; sc < 256; sc++)
        {
          SbxLinuxClaimsInput in = { rung, TRUE, TRUE, TRUE, ll, sc, TRUE, TRUE, TRUE, PORTS, FALSE, FALSE };
          SbxLinuxClaims out;

          sbx_linux_claims_decide (&in, &out);
          g_assert_cmphex (out.guarantees & (NB | AN), ==, 0);
          /* and is refused unless both Landlock TCP rules and seccomp's TCP-only rules hold */
          if (!(ll & SBX_LANDLOCK_ENFORCES_NET) || !(sc & SBX_SECCOMP_ENFORCES_INET_TCP_ONLY)
              || !(sc & SBX_SECCOMP_ENFORCES_INET_LISTEN_DENIED))
            g_assert_nonnull (out.refusal);
        }
}

/* Allowed unix sockets: whatever the mechanisms and the network, rung 2
 * claims no write, read or network boundary and names the host's sockets;
 * rung 1 in its private network namespace names the roots' sockets only
 * and keeps the boundaries its mechanisms give. */
static void
test_unix_allowed (void)
{
  static const uint32_t modes[] = { DENY, OPEN, PORTS, PROXY };

  for (int rung = U1; rung <= U2; rung++)
    for (guint m = 0; m < G_N_ELEMENTS (modes); m++)
      for (uint32_t ll = 0; ll < 32; ll++)
        for (uint32_t sc = 0; sc < 256; sc++)
          {
            SbxLinuxClaimsInput in = { rung, TRUE, TRUE, TRUE, ll, sc & ~SBX_SECCOMP_ENFORCES_UNIX_DENIED, FALSE, TRUE,
                                       TRUE, modes[m], TRUE, FALSE };
            SbxLinuxClaims out;
            const char *unix_detail;

            sbx_linux_claims_decide (&in, &out);
            if (out.refusal != NULL)
              continue;
            unix_detail = out.claims[SBX_LINUX_CLAIM_UNIX_SOCKETS].detail;
            g_assert_cmpuint (out.claims[SBX_LINUX_CLAIM_UNIX_SOCKETS].status, ==, SBX_ABI_REPORT_UNENFORCED);
            if (rung == U2)
              {
                g_assert_cmphex (out.guarantees & (WB | RB | NB | AN | TN), ==, 0);
                g_assert_true (out.host_sockets);
                g_assert_nonnull (strstr (unix_detail, "every pathname socket on the host"));
                g_assert_null (strstr (unix_detail, "under the roots"));
              }
            else if (modes[m] == DENY || modes[m] == PROXY || (ll & SBX_LANDLOCK_ENFORCES_SCOPE))
              {
                g_assert_false (out.host_sockets);
                g_assert_nonnull (strstr (unix_detail, "under the roots"));
                g_assert_cmphex (out.guarantees & (WB | RB), ==, WB | RB);
              }
            else
              {
                g_assert_true (out.host_sockets);
                g_assert_nonnull (strstr (unix_detail, "abstract sockets of the host"));
                g_assert_cmphex (out.guarantees & (WB | RB | NB | AN | TN), ==, 0);
              }
          }
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autofree char *path = g_strdup_printf ("/linux/claims/%s", rows[i].name);

      g_test_add_data_func (path, &rows[i], test_table);
    }
  g_test_add_func ("/linux/claims/ports-never-claim-network", test_ports_never_claim_network);
  g_test_add_func ("/linux/claims/unix-allowed", test_unix_allowed);
  return g_test_run ();
}
