/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx-plugin-egress.h — the egress extension (SBX_EXT_EGRESS): routes that
 * carry a sandbox's network traffic, their per-execution authorizations, the
 * listeners they serve and the denials they report.  The rules every plugin
 * follows are in sbx-plugin-envelope.h.
 */
#ifndef SBX_PLUGIN_EGRESS_H
#define SBX_PLUGIN_EGRESS_H

#include "sbx-plugin-envelope.h"
#include "sbx-plugin-listen.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------- */
/* Egress extension                                                           */
/* ------------------------------------------------------------------------- */

typedef struct SbxEgressInfoV1
{
  uint32_t struct_size;
  uint32_t target_guarantee;   /* 1 when every target can be scoped by host and port */
  uint32_t address_guarantee;  /* 1 when non-public resolved addresses are refused */
  uint32_t reserved0;
  char    *fingerprint;        /* host->alloc'd "route-v1:<hex>"; never contains secrets */
} SbxEgressInfoV1;
#define SBX_EGRESS_INFO_V1_MIN_SIZE    (offsetof (SbxEgressInfoV1, fingerprint) + sizeof (char *))

/**
 * SbxEgressVTableV1:
 *
 * @start: parse @route_config (a URL or "direct") and create a route.
 * @authorize: allow @execution_id to reach @targets ("tcp:host:port",
 *   NULL-terminated; NULL means every target, an empty list none yet:
 *   a host that asks, see SbxEgressAskFunc; plugins before 0.2 refuse it) and return a fresh credential
 *   (host->alloc'd) the child presents to the proxy.
 * @serve: serve proxy connections arriving on @listen_fd, a listening
 *   loopback TCP socket (ownership passes to the plugin, also on failure).
 *   With @execution_id (an authorized execution: the listener lives in that
 *   execution's sandbox, e.g. in its private network namespace), only that
 *   execution's credential authenticates on it, and @revoke of it closes the
 *   listener; NULL serves every execution of the route, told apart by their
 *   credentials alone.  Served until @revoke or @stop.
 * @revoke: withdraw @execution_id; in-flight tunnels of it end, and so do
 *   the listeners served for it.  Returns the first denial of that execution
 *   in @denial_out (host->alloc'd, or NULL when nothing was denied): UTF-8
 *   text that begins with the denied target ("tcp:host:port"), optionally
 *   followed by one space and the reason.
 * @stop: end the route, every tunnel and every listener.
 * @serve_listeners: optional (read only when struct_size covers it;
 *   SBX_HOST_FEATURE_EGRESS_LISTENERS).  Serves the listeners a backend
 *   created for @execution_id from @listens (the list the host computed for
 *   that run): @fds[i] is the socket of @listens[i], or -1 when none was
 *   made (ownership of each passes to the plugin, also on failure).  The
 *   DNS_UDP socket (and the DNS_TCP listener, with the same answers to
 *   each length-prefixed query of a connection) answers, for that execution
 *   only, each FORWARD target's host name with the FORWARD's address (A;
 *   AAAA only for an IPv6 one) and refuses every other name; each FORWARD
 *   relays every connection to its target through the route exactly as a
 *   CONNECT of that execution would (authorization, address classes,
 *   upstream chaining, denial record).  @revoke of the execution closes them and their tunnels.
 *
 * Credentials: the child presents "<execution id>:<credential>" as HTTP
 * Basic proxy authorization; the credential is random, at most 256 bytes of
 * [A-Za-z0-9_-], so the pair splits at the last ':' and execution ids may
 * contain ':'.  It is a secret of that one execution: never logged, never
 * in a denial or an error message.
 */
typedef int32_t SbxEgressStartFunc (void *plugin_ctx, SbxHostCall *call, const char *route_config,
                                    void **route_out, SbxEgressInfoV1 *info);
typedef int32_t SbxEgressAuthorizeFunc (void *plugin_ctx, SbxHostCall *call, void *route,
                                        const char *execution_id, const char *const *targets,
                                        char **credential_out);
typedef int32_t SbxEgressServeFunc (void *plugin_ctx, SbxHostCall *call, void *route,
                                    const char *execution_id, int32_t listen_fd);
typedef int32_t SbxEgressRevokeFunc (void *plugin_ctx, void *route, const char *execution_id,
                                     char **denial_out);
typedef void SbxEgressStopFunc (void *plugin_ctx, void *route);
typedef int32_t SbxEgressServeListenersFunc (void *plugin_ctx, SbxHostCall *call, void *route,
                                             const char *execution_id, const SbxListenV1 *listens,
                                             const int32_t *fds, uint32_t n_listens);

/* ------------------------------------------------------------------------- */
/* Egress denials: every refusal of an execution, as it happens            */
/* ------------------------------------------------------------------------- */

/**
 * SbxEgressDenialV1:
 *
 * One refusal of an authorized execution's network access, handed to the
 * host as it happens (see SbxEgressDenialSinkV1).  Every string is UTF-8,
 * valid for the duration of the call only, and never holds a credential.
 *
 * @operation: SBX_ABI_DENIAL_CONNECT (a connection to @target) or
 *   SBX_ABI_DENIAL_RESOLVE (a lookup of the name @target).
 * @flags: SBX_ABI_DENIAL_APPROVABLE when approving @target for the
 *   execution would have opened it (the target was not approved); clear
 *   when no approval can (a metadata or non-public address the rules
 *   refuse, a request naming no target, a name the stub never answers).
 * @target: CONNECT: the canonical "tcp:host:port" (SBX's
 *   "tcp:invalid:1" when the request named none); RESOLVE: the name as
 *   asked, lower-cased.
 * @mechanism: which part refused: "egress-proxy", "dns-stub", "forwarder".
 * @reason: (nullable) why, in words ("not approved for this execution",
 *   the address rule that refused it).
 */
#define SBX_ABI_DENIAL_CONNECT     4u   /* equal to SBX_DENIAL_OPERATION_CONNECT */
#define SBX_ABI_DENIAL_RESOLVE     5u   /* equal to SBX_DENIAL_OPERATION_RESOLVE */
#define SBX_ABI_DENIAL_APPROVABLE  (1u << 0)

typedef struct SbxEgressDenialV1
{
  uint32_t    struct_size;
  uint32_t    operation;   /* SBX_ABI_DENIAL_* */
  uint32_t    flags;       /* SBX_ABI_DENIAL_APPROVABLE */
  uint32_t    reserved0;   /* 0 */
  const char *target;
  const char *mechanism;
  const char *reason;      /* nullable */
} SbxEgressDenialV1;
#define SBX_EGRESS_DENIAL_V1_MIN_SIZE (offsetof (SbxEgressDenialV1, reason) + sizeof (const char *))

/**
 * SbxEgressDenialSinkV1:
 *
 * Where an egress plugin reports the refusals of one execution.
 * @denied(@data, denial) is the host's: it may be called from any thread of
 * the plugin, concurrently, must not block, and never calls back into the
 * plugin.  The host copies what it keeps and bounds it (repeats merged,
 * distinct denials capped), so a plugin reports every refusal as it
 * happens and need not rate-limit.
 */
typedef void SbxEgressDeniedFunc (void *data, const SbxEgressDenialV1 *denial);

/* Egress asks (live approvals): see SbxEgressAskFunc below. */
#define SBX_ABI_DECISION_DENY      0u   /* refuse this request */
#define SBX_ABI_DECISION_ONCE      1u   /* open this request (and those merged with it) */
#define SBX_ABI_DECISION_FOR_RUN   2u   /* open the target for the rest of the execution */

/**
 * SbxEgressAnswerFunc:
 *
 * The plugin's: the host's answer to one ask (SBX_ABI_DECISION_*), given
 * exactly once per ask, from any thread, possibly before the ask returns
 * and possibly much later.  It must not block and must not take a lock
 * the plugin holds while it calls @ask.
 */
typedef void SbxEgressAnswerFunc (void *ticket, uint32_t decision);

/**
 * SbxEgressAskFunc:
 *
 * The host's (optional; see SbxEgressDenialSinkV1.ask).  Instead of
 * refusing an APPROVABLE CONNECT of an execution (the target is not
 * approved for it), or, since 0.2, an APPROVABLE RESOLVE of a name its DNS
 * stub would refuse (@target the lower-case name; the host asks it only
 * under a gated network, and the approved answer must reach nothing the
 * execution was not approved for: egress-http answers an address where no
 * forwarder listens), a plugin whose sink has @ask holds the request and
 * calls @ask(@data, @request, @answer, @ticket): @request is the denial it
 * would have reported (valid for the call only).  The host answers through
 * @answer(@ticket, decision) exactly once, at the latest before @revoke of
 * the execution is called.  DENY: the plugin refuses the request as it
 * would have without asking (reporting the denial to @denied); ONCE: it
 * serves that request; FOR_RUN: it serves it and adds the target to the
 * execution's approved targets.  Either way every address rule still
 * applies (metadata never; a name with a non-public address refused); an
 * approved IP literal counts as named by the approval, as a grant's does.
 * Held requests cost the plugin no thread and no polling.
 */
typedef void SbxEgressAskFunc (void *data, const SbxEgressDenialV1 *request,
                               SbxEgressAnswerFunc *answer, void *ticket);

typedef struct SbxEgressDenialSinkV1
{
  uint32_t             struct_size;
  uint32_t             reserved0;   /* 0 */
  SbxEgressDeniedFunc *denied;
  void                *data;
  /* Appended: optional, read only when struct_size covers it; NULL: the
   * host does not ask (every refusal is reported to @denied). */
  SbxEgressAskFunc    *ask;
} SbxEgressDenialSinkV1;
#define SBX_EGRESS_DENIAL_SINK_V1_MIN_SIZE (offsetof (SbxEgressDenialSinkV1, data) + sizeof (void *))

/* @watch_denials: optional (read only when the vtable's struct_size covers
 * it).  The host calls it once per execution, after @authorize and before
 * serving any listener of it; the plugin copies *@sink and, from then on,
 * calls sink->denied for EVERY refusal of @execution_id by any of its
 * mechanisms (the proxy, the DNS stub, the forwarders), until @revoke of
 * that execution returns: no call is in flight or made after that.  The
 * first-denial text of @revoke is still returned (older hosts rely on
 * it).  Returns SBX_STATUS_OK, or SBX_STATUS_INVALID for an unknown
 * execution or a sink whose struct_size is below its minimum. */
typedef int32_t SbxEgressWatchDenialsFunc (void *plugin_ctx, void *route, const char *execution_id,
                                           const SbxEgressDenialSinkV1 *sink);

/* A plugin listing an egress extension must require
 * SBX_HOST_FEATURE_EGRESS_V1 (see the host features in sbx-plugin-envelope.h). */
typedef struct SbxEgressVTableV1
{
  uint32_t               struct_size;
  uint32_t               reserved0;   /* 0 */
  SbxEgressStartFunc    *start;
  SbxEgressAuthorizeFunc *authorize;
  SbxEgressServeFunc    *serve;
  SbxEgressRevokeFunc   *revoke;
  SbxEgressStopFunc     *stop;
  /* Appended: optional, found through struct_size. */
  SbxEgressServeListenersFunc *serve_listeners;
  /* Appended: optional, found through struct_size (see "Egress denials"). */
  SbxEgressWatchDenialsFunc   *watch_denials;
} SbxEgressVTableV1;

#define SBX_EGRESS_VTABLE_V1_MIN_SIZE (offsetof (SbxEgressVTableV1, stop) + sizeof (SbxEgressStopFunc *))

#ifdef __cplusplus
}
#endif

#endif /* SBX_PLUGIN_EGRESS_H */
