/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx-plugin-listen.h — the egress listeners (SbxListenV1) a backend binds
 * inside the sandbox and an egress extension serves: the one record the
 * backend and egress kinds share.  Included by sbx-plugin-backend.h and
 * sbx-plugin-egress.h.
 */
#ifndef SBX_PLUGIN_LISTEN_H
#define SBX_PLUGIN_LISTEN_H

#include "sbx-plugin-envelope.h"

#ifdef __cplusplus
extern "C" {
#endif

/* SbxListenV1.kind */
#define SBX_LISTEN_DNS_UDP  1u  /* the sandbox's DNS stub: a bound UDP socket on address:port */
#define SBX_LISTEN_FORWARD  2u  /* a TCP listener on address:port relaying to @target */
#define SBX_LISTEN_DNS_TCP  3u  /* the same stub over TCP (RFC 7766): a TCP listener on the
                                 * DNS_UDP entry's address:port */

/* SbxListenV1.flags */
#define SBX_LISTEN_F_ADD_ADDRESS  1u  /* the address is not on the sandbox's loopback yet:
                                       * the backend adds it (a /32 or /128 on lo) first */

/* SbxListenV1.family */
#define SBX_LISTEN_IPV4  4u  /* address[0..3] */
#define SBX_LISTEN_IPV6  6u  /* address[0..15] */

/**
 * SbxListenV1:
 *
 * One egress listener a backend creates inside the sandbox's own network
 * (SBX_HOST_FEATURE_EGRESS_LISTENERS), besides the proxy's: the DNS stub
 * (the only resolver the sandbox's resolv.conf names) or a forwarder for one
 * approved target.  The host computes the list per run; the backend only
 * binds (and for FORWARD and DNS_TCP listens); the egress plugin serves
 * them.  @address is in network byte order.  @target is the canonical
 * "tcp:host:port" a FORWARD relays to (the stub answers a name target's host
 * with @address); NULL for DNS_UDP and DNS_TCP.
 *
 * Kinds are additive.  A backend leaves -1 for a kind it does not know (the
 * listener is then simply missing) and an egress plugin closes the socket
 * of a kind it does not know and serves the others; serving DNS_TCP is
 * never required.  The host lists kinds newer than DNS_UDP and FORWARD
 * after every entry of those two, so that a plugin that stops at the first
 * kind it does not know has served the rest.
 */
typedef struct SbxListenV1
{
  uint32_t    struct_size;
  uint32_t    kind;         /* SBX_LISTEN_* */
  uint32_t    family;       /* SBX_LISTEN_IPV4 or SBX_LISTEN_IPV6 */
  uint32_t    flags;        /* SBX_LISTEN_F_* */
  uint8_t     address[16];
  uint16_t    port;
  uint16_t    reserved0;
  uint32_t    reserved1;
  const char *target;
} SbxListenV1;
#define SBX_LISTEN_V1_MIN_SIZE         (offsetof (SbxListenV1, target) + sizeof (const char *))

#ifdef __cplusplus
}
#endif

#endif /* SBX_PLUGIN_LISTEN_H */
