/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a Linux spec may claim: a pure function of what the probe found, what
 * the Landlock plan and the seccomp program say they enforce, and what the
 * policy asks for.  No system call, no global, no report: the compile glue
 * (sbx-linux-spec.c) feeds it and emits the entries it decides, and
 * tests/linux/test-linux-claims.c checks it as a table without a kernel.
 *
 * The rules it encodes (one-way: a bit is set only when every probe it
 * covers is refused on every path):
 *  - rung 1: process boundary always (namespaces); write/read boundary when
 *    restricted (the mount view, Landlock on top; a path the view shows
 *    without read, such as a write-only grant, needs Landlock's read denial);
 *    network and address boundary only when the network is denied (a private
 *    network namespace); level full only with Landlock and seccomp;
 *  - rung 2: no process boundary; write/read boundary when restricted and
 *    the Landlock plan (and for ABI < 3 the seccomp truncate deny) enforces
 *    it; network boundary only when the network is denied and IP sockets are
 *    closed (seccomp, or Landlock TCP rules with seccomp keeping only TCP);
 *    never the address boundary; level degraded;
 *  - ports (a network.broad.v1 grant), both rungs: TCP connect to the listed
 *    ports on any address is open, so neither network bit is claimed, and the
 *    spec is refused unless Landlock TCP rules and the seccomp TCP-only rules
 *    are both in place (otherwise the whole network would be open);
 *  - proxy (an egress route), rung 1 only: a private network namespace per
 *    run whose one way out is the route's listener: network, address and
 *    target boundaries; rung 2 has no namespace, so its compile rewrites the
 *    policy to a denied network before it gets here, and a proxy mode that
 *    still arrives at rung 2 is refused;
 *  - host unix sockets reachable without the profile asking (seccomp could
 *    not refuse them) cancel every boundary but the process one;
 *  - unix sockets the profile allows ("unix-sockets": "allow"): at rung 1
 *    in a private network namespace (or with Landlock scoping) only the
 *    sockets under the mounted roots are reachable, and the boundaries hold
 *    with that exception; at rung 2 (Landlock does not mediate a pathname
 *    connect() below ABI 9, and sbx builds no such rule) every pathname
 *    socket on the host is, and at either rung the host network namespace
 *    without Landlock scoping exposes the host's abstract sockets: a host
 *    daemon there runs commands outside the sandbox, so every boundary but
 *    the process one is cancelled, as above.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

/* The guarantee features the claims decide (the compile glue reports them
 * in its own order). */
typedef enum
{
  SBX_LINUX_CLAIM_PROCESS_BOUNDARY,
  SBX_LINUX_CLAIM_WRITE_BOUNDARY,
  SBX_LINUX_CLAIM_READ_BOUNDARY,
  SBX_LINUX_CLAIM_NETWORK_BOUNDARY,
  SBX_LINUX_CLAIM_ADDRESS_NETWORK,
  SBX_LINUX_CLAIM_NETWORK,          /* "network": the open or partly open network */
  SBX_LINUX_CLAIM_UNIX_SOCKETS,
  SBX_LINUX_CLAIM_TARGET_NETWORK,   /* a proxy network: only approved host:port targets */
  SBX_LINUX_N_CLAIMS
} SbxLinuxClaimFeature;

typedef struct
{
  int      rung;                /* SBX_LINUX_RUNG_* */
  /* probe and mechanisms */
  gboolean landlock;            /* a Landlock plan was built */
  gboolean seccomp;             /* a seccomp program was built */
  gboolean proc_children;       /* /proc/PID/task/TID/children exists */
  uint32_t landlock_bits;       /* SBX_LANDLOCK_ENFORCES_* of the plan */
  uint32_t seccomp_bits;        /* SBX_SECCOMP_ENFORCES_* of the program */
  gboolean limits;              /* the resource limits hold sandbox-wide */
  /* policy */
  gboolean write_restricted;
  gboolean read_restricted;
  uint32_t net_mode;            /* SBX_NET_MODE_* */
  gboolean allow_unix;          /* SBX_POLICY_UNIX_SOCKETS */
  gboolean unreadable_binds;    /* rung 1: the view shows a path the policy lets no one read */
} SbxLinuxClaimsInput;

typedef struct
{
  uint32_t    status;           /* SBX_ABI_REPORT_*; 0: nothing to report */
  const char *detail;           /* static text */
} SbxLinuxClaim;

typedef struct
{
  const char   *refusal;        /* non-NULL: no spec may be built (static text, why) */
  uint32_t      level;          /* SBX_ABI_LEVEL_* */
  uint64_t      guarantees;     /* SBX_ABI_GUARANTEE_* */
  uint32_t      containment;    /* SBX_CONTAINMENT_* */
  SbxLinuxClaim claims[SBX_LINUX_N_CLAIMS];
  /* Host daemons' unix sockets are reachable (the boundaries were
   * cancelled for it): the glue adds no "except unix sockets" note. */
  gboolean      host_sockets;
} SbxLinuxClaims;

/* The report feature name of @feature ("process-boundary", ...). */
const char *sbx_linux_claim_feature_name (SbxLinuxClaimFeature feature);

/* Decides @out from @in.  Pure: same input, same output. */
void        sbx_linux_claims_decide      (const SbxLinuxClaimsInput *in,
                                          SbxLinuxClaims            *out);

G_END_DECLS
