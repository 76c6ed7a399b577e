/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The decision of what a Linux spec may claim (see sbx-linux-claims.h for
 * the rules).  Pure: reads its input, writes its output, nothing else.
 */
#include "sbx-linux-claims.h"

#include <string.h>
#include <sbx/sbx-plugin-abi.h>

#include "sbx-landlock.h"
#include "sbx-linux-private.h"
#include "sbx-seccomp.h"

static const char *const feature_names[SBX_LINUX_N_CLAIMS] = {
  [SBX_LINUX_CLAIM_PROCESS_BOUNDARY] = SBX_ABI_FEATURE_PROCESS_BOUNDARY,
  [SBX_LINUX_CLAIM_WRITE_BOUNDARY] = SBX_ABI_FEATURE_WRITE_BOUNDARY,
  [SBX_LINUX_CLAIM_READ_BOUNDARY] = SBX_ABI_FEATURE_READ_BOUNDARY,
  [SBX_LINUX_CLAIM_NETWORK_BOUNDARY] = SBX_ABI_FEATURE_NETWORK_BOUNDARY,
  [SBX_LINUX_CLAIM_ADDRESS_NETWORK] = SBX_ABI_FEATURE_ADDRESS_NETWORK,
  [SBX_LINUX_CLAIM_NETWORK] = SBX_ABI_FEATURE_NETWORK,
  [SBX_LINUX_CLAIM_UNIX_SOCKETS] = SBX_ABI_FEATURE_UNIX_SOCKETS,
  [SBX_LINUX_CLAIM_TARGET_NETWORK] = SBX_ABI_FEATURE_TARGET_NETWORK,
};

const char *
sbx_linux_claim_feature_name (SbxLinuxClaimFeature feature)
{
  g_return_val_if_fail (feature < SBX_LINUX_N_CLAIMS, NULL);
  return feature_names[feature];
}

static void
claim (SbxLinuxClaims       *out,
       SbxLinuxClaimFeature  feature,
       uint32_t              status,
       const char           *detail)
{
  out->claims[feature].status = status;
  out->claims[feature].detail = detail;
}

/* Why a ports network is refused when ports_enforced() fails, at either
 * rung. */
static const char ports_refusal[] =
  "a ports network (network.broad.v1) needs Landlock TCP rules (ABI >= 4) "
  "and the seccomp TCP-only rules: without them the whole network would be open";

/* TCP connect to the listed ports on any address, nothing else: what a
 * ports network needs from the mechanisms at either rung. */
static gboolean
ports_enforced (const SbxLinuxClaimsInput *in)
{
  return in->landlock && (in->landlock_bits & SBX_LANDLOCK_ENFORCES_NET)
         && in->seccomp && (in->seccomp_bits & SBX_SECCOMP_ENFORCES_INET_TCP_ONLY)
         && (in->seccomp_bits & SBX_SECCOMP_ENFORCES_INET_LISTEN_DENIED);
}

static void
decide_rung1 (const SbxLinuxClaimsInput *in,
              SbxLinuxClaims            *out)
{
  out->guarantees |= SBX_ABI_GUARANTEE_PROCESS_BOUNDARY;
  out->containment = SBX_CONTAINMENT_ENFORCED;
  claim (out, SBX_LINUX_CLAIM_PROCESS_BOUNDARY, SBX_ABI_REPORT_ENFORCED,
         "user, mount, pid, ipc and uts namespaces; sbx-init is PID 1; host processes are "
         "neither visible nor reachable by signal or ptrace");
  if (in->write_restricted)
    {
      out->guarantees |= SBX_ABI_GUARANTEE_WRITE_BOUNDARY;
      claim (out, SBX_LINUX_CLAIM_WRITE_BOUNDARY, SBX_ABI_REPORT_ENFORCED,
             "only policy-writable paths are mounted writable");
    }
  if (in->read_restricted && !in->unreadable_binds)
    {
      out->guarantees |= SBX_ABI_GUARANTEE_READ_BOUNDARY;
      claim (out, SBX_LINUX_CLAIM_READ_BOUNDARY, SBX_ABI_REPORT_ENFORCED,
             "only policy-readable paths are mounted");
    }
  else if (in->read_restricted && in->landlock && (in->landlock_bits & SBX_LANDLOCK_ENFORCES_READ))
    {
      out->guarantees |= SBX_ABI_GUARANTEE_READ_BOUNDARY;
      claim (out, SBX_LINUX_CLAIM_READ_BOUNDARY, SBX_ABI_REPORT_ENFORCED,
             "only policy-readable paths are mounted, except write-only ones, which are mounted "
             "for writing and which Landlock refuses to read, list or execute");
    }
  else if (in->read_restricted)
    {
      /* The mount plan refuses this (a write-only path needs Landlock);
       * should it ever get here, nothing is claimed. */
      out->refusal = "a write-only path is mounted and Landlock is not there to refuse reading it";
      return;
    }

  switch (in->net_mode)
    {
    case SBX_NET_MODE_DENY:
      out->guarantees |= SBX_ABI_GUARANTEE_NETWORK_BOUNDARY | SBX_ABI_GUARANTEE_ADDRESS_NETWORK;
      claim (out, SBX_LINUX_CLAIM_NETWORK_BOUNDARY, SBX_ABI_REPORT_ENFORCED,
             "a private network namespace with only loopback up: no route out");
      claim (out, SBX_LINUX_CLAIM_ADDRESS_NETWORK, SBX_ABI_REPORT_ENFORCED,
             "no address outside the sandbox is reachable");
      break;
    case SBX_NET_MODE_PORTS:
      if (!ports_enforced (in))
        {
          out->refusal = ports_refusal;
          return;
        }
      claim (out, SBX_LINUX_CLAIM_NETWORK_BOUNDARY, SBX_ABI_REPORT_UNENFORCED,
             "a network.broad.v1 grant opened the network for this spawn: the host network "
             "namespace, TCP connect to the granted ports (and 53 for DNS) on any address");
      claim (out, SBX_LINUX_CLAIM_ADDRESS_NETWORK, SBX_ABI_REPORT_UNENFORCED,
             "the granted ports are reachable on every address");
      claim (out, SBX_LINUX_CLAIM_NETWORK, SBX_ABI_REPORT_NARROWED,
             "the host network namespace, narrowed by Landlock and seccomp: TCP connect only to the "
             "granted ports and 53, no TCP bind or listen, no UDP, raw, SCTP or MPTCP socket; DNS "
             "over TCP (RES_OPTIONS=use-vc)");
      break;
    case SBX_NET_MODE_PROXY:
      out->guarantees |= SBX_ABI_GUARANTEE_NETWORK_BOUNDARY | SBX_ABI_GUARANTEE_ADDRESS_NETWORK
                         | SBX_ABI_GUARANTEE_TARGET_NETWORK;
      claim (out, SBX_LINUX_CLAIM_NETWORK_BOUNDARY, SBX_ABI_REPORT_ENFORCED,
             "a private network namespace per run with only loopback up and one listener, "
             "served by the egress route for that run alone: the only way out");
      claim (out, SBX_LINUX_CLAIM_ADDRESS_NETWORK, SBX_ABI_REPORT_ENFORCED,
             "no address is reachable except through the proxy and the run's forwarders "
             "(which apply the route's address rules)");
      claim (out, SBX_LINUX_CLAIM_TARGET_NETWORK, SBX_ABI_REPORT_ENFORCED,
             "every connection out goes through the route's proxy or a forwarder of one "
             "approved target, both admitting only the run's approved host:port targets");
      claim (out, SBX_LINUX_CLAIM_NETWORK, SBX_ABI_REPORT_NARROWED,
             "the only resolver inside is the route's DNS stub: it answers the run's approved "
             "names with sandbox-loopback addresses whose forwarders relay through the route, "
             "and refuses every other name; clients that ignore HTTP(S)_PROXY/ALL_PROXY reach "
             "the approved names and IP literals on their approved ports, nothing else");
      break;
    case SBX_NET_MODE_OPEN:
    default:
      claim (out, SBX_LINUX_CLAIM_NETWORK, SBX_ABI_REPORT_UNENFORCED,
             "the host network (the policy allows network access); DNS works through the "
             "host's resolver configuration");
      break;
    }
  out->level = in->landlock && in->seccomp ? SBX_ABI_LEVEL_FULL : SBX_ABI_LEVEL_DEGRADED;
}

static void
decide_rung2 (const SbxLinuxClaimsInput *in,
              SbxLinuxClaims            *out)
{
  gboolean scoped = (in->landlock_bits & SBX_LANDLOCK_ENFORCES_SCOPE) != 0;
  gboolean write_ok = (in->landlock_bits & SBX_LANDLOCK_ENFORCES_WRITE)
                      || ((in->landlock_bits & SBX_LANDLOCK_ENFORCES_WRITE_EXCEPT_TRUNCATE)
                          && (in->seccomp_bits & SBX_SECCOMP_ENFORCES_TRUNCATE_DENIED));

  if (!in->landlock || !in->seccomp)
    {
      out->refusal = "rung 2 needs Landlock and seccomp";
      return;
    }
  claim (out, SBX_LINUX_CLAIM_PROCESS_BOUNDARY, SBX_ABI_REPORT_UNENFORCED,
         scoped ? "no user namespace: the target shares the host's pid, mount, ipc and network "
                  "namespaces (Landlock scoping keeps it from signalling processes outside the sandbox)"
                : "no user namespace: the target shares the host's pid, mount, ipc and network "
                  "namespaces");
  out->containment = in->proc_children && scoped ? SBX_CONTAINMENT_ENFORCED : SBX_CONTAINMENT_BEST_EFFORT;
  if (in->write_restricted && write_ok)
    {
      out->guarantees |= SBX_ABI_GUARANTEE_WRITE_BOUNDARY;
      claim (out, SBX_LINUX_CLAIM_WRITE_BOUNDARY, SBX_ABI_REPORT_ENFORCED,
             "Landlock filesystem rules: contents and names");
    }
  else if (in->write_restricted)
    claim (out, SBX_LINUX_CLAIM_WRITE_BOUNDARY, SBX_ABI_REPORT_UNENFORCED,
           "the Landlock plan cannot enforce the write boundary on this kernel");
  if (in->read_restricted && (in->landlock_bits & SBX_LANDLOCK_ENFORCES_READ))
    {
      out->guarantees |= SBX_ABI_GUARANTEE_READ_BOUNDARY;
      claim (out, SBX_LINUX_CLAIM_READ_BOUNDARY, SBX_ABI_REPORT_ENFORCED, "Landlock filesystem rules");
    }
  else if (in->read_restricted)
    claim (out, SBX_LINUX_CLAIM_READ_BOUNDARY, SBX_ABI_REPORT_UNENFORCED,
           "the Landlock plan cannot enforce the read boundary on this kernel");

  switch (in->net_mode)
    {
    case SBX_NET_MODE_DENY:
      if ((in->seccomp_bits & SBX_SECCOMP_ENFORCES_INET_DENIED)
          || ((in->landlock_bits & SBX_LANDLOCK_ENFORCES_NET)
              && (in->seccomp_bits & SBX_SECCOMP_ENFORCES_INET_TCP_ONLY)))
        {
          out->guarantees |= SBX_ABI_GUARANTEE_NETWORK_BOUNDARY;
          claim (out, SBX_LINUX_CLAIM_NETWORK_BOUNDARY, SBX_ABI_REPORT_ENFORCED,
                 "no IP socket can reach out (seccomp and Landlock TCP rules)");
        }
      else
        claim (out, SBX_LINUX_CLAIM_NETWORK_BOUNDARY, SBX_ABI_REPORT_UNENFORCED,
               "neither seccomp nor Landlock (ABI >= 4) can close IP networking here");
      claim (out, SBX_LINUX_CLAIM_ADDRESS_NETWORK, SBX_ABI_REPORT_UNENFORCED,
             "no network namespace at rung 2: nothing is address-scoped");
      break;
    case SBX_NET_MODE_PORTS:
      if (!ports_enforced (in))
        {
          out->refusal = ports_refusal;
          return;
        }
      claim (out, SBX_LINUX_CLAIM_NETWORK_BOUNDARY, SBX_ABI_REPORT_UNENFORCED,
             "a network.broad.v1 grant opened the network for this spawn: TCP connect to the granted "
             "ports (and 53 for DNS) on any address");
      claim (out, SBX_LINUX_CLAIM_ADDRESS_NETWORK, SBX_ABI_REPORT_UNENFORCED,
             "no network namespace at rung 2: nothing is address-scoped");
      claim (out, SBX_LINUX_CLAIM_NETWORK, SBX_ABI_REPORT_NARROWED,
             "the host network, narrowed by Landlock and seccomp: TCP connect only to the granted "
             "ports and 53, no TCP bind or listen, no UDP, raw, SCTP or MPTCP socket; DNS over TCP "
             "(RES_OPTIONS=use-vc)");
      break;
    case SBX_NET_MODE_OPEN:
    default:
      claim (out, SBX_LINUX_CLAIM_NETWORK, SBX_ABI_REPORT_UNENFORCED,
             "the host network (the policy allows network access)");
      break;
    }
  out->level = SBX_ABI_LEVEL_DEGRADED;
}

/* Host daemons' sockets are reachable: every boundary but the process one
 * is withdrawn, its entry saying why (@detail), and the level is degraded. */
static void
cancel_boundaries (SbxLinuxClaims *out,
                   const char     *detail)
{
  static const SbxLinuxClaimFeature cancelled[] = {
    SBX_LINUX_CLAIM_WRITE_BOUNDARY, SBX_LINUX_CLAIM_READ_BOUNDARY,
    SBX_LINUX_CLAIM_NETWORK_BOUNDARY, SBX_LINUX_CLAIM_ADDRESS_NETWORK,
    SBX_LINUX_CLAIM_TARGET_NETWORK,
  };

  out->guarantees &= ~(SBX_ABI_GUARANTEE_READ_BOUNDARY | SBX_ABI_GUARANTEE_WRITE_BOUNDARY
                       | SBX_ABI_GUARANTEE_NETWORK_BOUNDARY | SBX_ABI_GUARANTEE_ADDRESS_NETWORK
                       | SBX_ABI_GUARANTEE_TARGET_NETWORK);
  out->level = SBX_ABI_LEVEL_DEGRADED;
  out->host_sockets = TRUE;
  for (gsize i = 0; i < G_N_ELEMENTS (cancelled); i++)
    if (out->claims[cancelled[i]].status == SBX_ABI_REPORT_ENFORCED)
      claim (out, cancelled[i], SBX_ABI_REPORT_UNENFORCED, detail);
}

void
sbx_linux_claims_decide (const SbxLinuxClaimsInput *in,
                         SbxLinuxClaims            *out)
{
  g_return_if_fail (in != NULL);
  g_return_if_fail (out != NULL);

  memset (out, 0, sizeof *out);
  out->guarantees = SBX_ABI_GUARANTEE_ENV_SCRUB;
  out->level = SBX_ABI_LEVEL_NONE;
  if (in->net_mode == SBX_NET_MODE_PROXY && in->rung != SBX_LINUX_RUNG_USERNS)
    {
      out->refusal = "a proxy network needs the private network namespace of rung 1 (refused "
                     "rather than widened)";
      out->guarantees = 0;
      return;
    }
  if (in->rung == SBX_LINUX_RUNG_USERNS)
    decide_rung1 (in, out);
  else if (in->rung == SBX_LINUX_RUNG_LANDLOCK)
    decide_rung2 (in, out);
  else
    out->refusal = "unknown rung";
  if (out->refusal != NULL)
    {
      /* Nothing is claimed for a spec that will not be built. */
      const char *refusal = out->refusal;

      memset (out, 0, sizeof *out);
      out->refusal = refusal;
      return;
    }
  if (in->limits)
    out->guarantees |= SBX_ABI_GUARANTEE_RESOURCE_LIMITS;

  /* Unix sockets are closed on both rungs unless the profile opened them. */
  if (in->allow_unix)
    {
#define UNIX_ROOTS                                                                               \
      "the profile allows unix sockets: every pathname socket under the roots the sandbox can " \
      "see (workspace and every --read/--write root, read-only ones included) is reachable, "   \
      "and a daemon listening there (tmux, ssh, gpg-agent, an editor) may run commands outside " \
      "the sandbox; "
#define UNIX_HOST                                                                                 \
      "the profile allows unix sockets, and Landlock does not mediate connect() to a pathname "  \
      "socket (that takes LANDLOCK_ACCESS_FS_RESOLVE_UNIX, ABI 9, which sbx does not use): every " \
      "pathname socket on the host the caller's uid may connect to is reachable, whatever the "  \
      "roots and whether or not the target can list its directory (docker.sock, the D-Bus "      \
      "buses, tmux, ssh-agent); a daemon there runs commands outside the sandbox, so no write, "  \
      "read or network boundary is claimed; "
#define HOST_ABSTRACT_DAEMONS                                                                      \
      ": a daemon listening on one (an X server, a D-Bus bus) runs commands outside the sandbox, " \
      "so no write, read or network boundary is claimed"
      /* [rung 2][abstract: own netns, Landlock scoping, host] */
      static const char *const details[2][3] = {
        { UNIX_ROOTS "abstract sockets stay in the sandbox's network namespace",
          UNIX_ROOTS "abstract sockets are scoped by Landlock",
          UNIX_ROOTS "abstract sockets of the host too (host network namespace, no Landlock "
                     "scoping)" HOST_ABSTRACT_DAEMONS },
        { UNIX_HOST "abstract sockets stay in the sandbox",
          UNIX_HOST "abstract sockets are scoped by Landlock",
          UNIX_HOST "abstract sockets of the host too (no Landlock scoping)" },
      };
#undef UNIX_ROOTS
#undef UNIX_HOST
#undef HOST_ABSTRACT_DAEMONS
      gboolean rung2 = in->rung == SBX_LINUX_RUNG_LANDLOCK;
      int abstract = !rung2 && (in->net_mode == SBX_NET_MODE_DENY
                                || in->net_mode == SBX_NET_MODE_PROXY) ? 0
                     : (in->landlock_bits & SBX_LANDLOCK_ENFORCES_SCOPE) ? 1 : 2;

      /* Rung 1 shows only the mounted roots, so only their sockets are
       * reachable by path: the boundaries hold with that exception (the
       * compile glue appends it).  At rung 2 nothing hides a path, and
       * Landlock below ABI 9 does not mediate connect() at all; at either
       * rung the host network namespace without Landlock scoping exposes
       * the host's abstract sockets.  A host daemon reached that way (the
       * systemd user manager over D-Bus, docker, tmux, an X server) runs
       * whatever it is asked with the caller's authority (docker's: root's),
       * outside every mechanism of the sandbox: it reads and writes any
       * file and opens any connection.  So then no write, read or network
       * boundary is claimed; the process boundary (rung 1) stays, since the
       * target itself still cannot see, signal or trace a host process. */
      claim (out, SBX_LINUX_CLAIM_UNIX_SOCKETS, SBX_ABI_REPORT_UNENFORCED, details[rung2][abstract]);
      if (rung2 || abstract == 2)
        cancel_boundaries (out, "not claimed: the profile allows unix sockets and host daemons' sockets "
                                "are reachable (see unix-sockets)");
    }
  else if (!(in->seccomp
             && (in->seccomp_bits & (SBX_SECCOMP_ENFORCES_UNIX_DENIED | SBX_SECCOMP_ENFORCES_UNIX_SUPERVISED))))
    {
      /* A reachable D-Bus, tmux or docker socket runs anything outside the
       * sandbox: no boundary can be claimed then. */
      cancel_boundaries (out, "not claimed: host unix sockets are reachable (see unix-sockets)");
      claim (out, SBX_LINUX_CLAIM_UNIX_SOCKETS, SBX_ABI_REPORT_UNENFORCED,
             "host unix sockets are reachable (by path or abstract name) and seccomp could not "
             "refuse AF_UNIX sockets: a D-Bus, tmux or docker socket would escape every boundary, "
             "so none is claimed");
    }
}
