/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Linux backend's side of egress (SBX_NET_MODE_PROXY): the parent-side
 * half of the proxy listener that A creates in the sandbox's network
 * namespace (sbx-linux-child-egress.c), and what a proxy spec compiles to.
 *
 * Rung 1: every spawn of a proxy spec gets its own network namespace (no
 * zygote shares one), in which A binds 127.0.0.1:<proxy port> and hands
 * the listener to the supervisor over a socketpair; spawn returns it in
 * SbxSpawnResultV1.proxy_listen_fd and the host's egress plugin serves it
 * for that one execution.  Nothing else in the namespace leads out:
 * network-boundary, target-network and address-network (the core keeps the
 * last only when the route has the address guarantee).
 *
 * Rung 2: no namespace, and Landlock cannot tell the proxy port on loopback
 * from the same port anywhere else, so the network is closed instead (as
 * for a denied network) and the report says target-network does not hold:
 * proxy-target grants then fail closed at issue.
 */
#pragma once

#include <glib.h>
#include <sbx/sbx-plugin-abi.h>
#include "sbx-linux-report.h"

G_BEGIN_DECLS

typedef struct _SbxLinuxSpec SbxLinuxSpec;

/* One egress listener besides the proxy's, copied by the parent from the
 * spawn request (SbxListenV1) into plain data the child reads. */
typedef struct _SbxLinuxEgressListen SbxLinuxEgressListen;
struct _SbxLinuxEgressListen
{
  uint32_t kind;          /* SBX_LISTEN_DNS_UDP, _FORWARD, _DNS_TCP, or
                           * SBX_LINUX_EGRESS_LISTEN_SKIP */
  uint32_t family;        /* SBX_LISTEN_IPV4 / SBX_LISTEN_IPV6 */
  uint32_t flags;         /* SBX_LISTEN_F_* */
  uint16_t port;
  uint8_t  address[16];
};
/* A kind the backend does not know: nothing is made for it. */
#define SBX_LINUX_EGRESS_LISTEN_SKIP 0u


/* A proxy policy's network part: a port 1-65535, no port list. */
gboolean           sbx_linux_egress_validate       (const SbxNetPolicyV1   *net,
                                                    GError                **error);
/* Rung 2: @policy with the network closed (copied into @copy/@net_copy,
 * which must outlive the compile), and the report entry saying so. */
const SbxPolicyV1 *sbx_linux_egress_rung2_policy   (const SbxPolicyV1      *policy,
                                                    SbxPolicyV1            *copy,
                                                    SbxNetPolicyV1         *net_copy,
                                                    const SbxLinuxReporter *reporter);
/* The channel A sends the listener on: a SOCK_SEQPACKET socketpair, both
 * ends CLOEXEC and above stdio.  FALSE with @error_message set. */
gboolean           sbx_linux_egress_channel_open   (int                     fds[2],
                                                    char                  **error_message);
/* The listener A sent (after A exec'd, so it is there or never will be):
 * the fd, CLOEXEC, checked to be a listening TCP socket; -1 with
 * @error_message set. */
int                sbx_linux_egress_channel_receive (int                    fd,
                                                     char                 **error_message);

/* The run's other listeners (SbxSpawnRequestV1.listens, read only when the
 * request's struct_size covers them): validated and copied into plain data
 * for A; one of a kind this backend does not know is copied as
 * SBX_LINUX_EGRESS_LISTEN_SKIP and gets no socket.  *n_out is their number
 * (0: none), or -1 with @error_message set for an invalid list. */
SbxLinuxEgressListen *sbx_linux_egress_listens_copy (const SbxSpawnRequestV1 *request,
                                                     int                     *n_out,
                                                     char                   **error_message);
/* Receives the @n listeners A sent after the proxy's into
 * request->listen_fds (each checked to be of its kind).  FALSE with
 * @error_message set, and every fd closed, when one is missing. */
gboolean           sbx_linux_egress_channel_receive_listens (int                      fd,
                                                             const SbxSpawnRequestV1 *request,
                                                             int                      n,
                                                             char                   **error_message);
/* Closes every fd in request->listen_fds (a spawn that fails after them). */
void               sbx_linux_egress_close_listens (const SbxSpawnRequestV1 *request);
/* The resolver files of a proxy spec (resolv.conf naming only the DNS stub,
 * hosts with localhost alone) in a fresh directory under the policy's
 * state directory. */
gboolean           sbx_linux_egress_files_new      (SbxLinuxSpec           *spec,
                                                    const SbxPolicyV1      *policy,
                                                    GError                **error);
void               sbx_linux_egress_files_free     (SbxLinuxSpec           *spec);

G_END_DECLS
