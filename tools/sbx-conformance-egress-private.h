/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internals shared by the egress conformance cases: the minimal host that
 * drives an egress extension through its vtable (sbx-conformance-egress.c:
 * routes, credentials, the proxy listener) and its listeners case
 * (sbx-conformance-listeners.c: the DNS stub and the forwarders), plus the
 * loopback sockets both use.  Everything stays on this host's loopback.
 */
#pragma once

#include "sbx-conformance-private.h"

#include <sbx/sbx-plugin-abi.h>

G_BEGIN_DECLS

/* Our SbxHostCall: the first set_error of one call. */
struct SbxHostCall
{
  int32_t status;
  char    message[512];
};

/* One egress extension opened for judging. */
typedef struct
{
  Run                     *run;
  const char              *plugin;
  const char              *name;
  char                    *area;
  const SbxEgressVTableV1 *vt;
  void                    *ctx;
} Egress;

#define EGRESS_RECORD(g, name, outcome, ...) \
  sbx_conformance_record ((g)->run, NULL, (g)->area, (name), (outcome), __VA_ARGS__)

/* Sockets on the loopback address @address (host byte order, 127.x.y.z),
 * close-on-exec, with 10 s send and receive timeouts on connected ones. */
int      sbx_conformance_bind_loopback    (int          type,
                                           guint32      address,
                                           guint16     *port);
int      sbx_conformance_connect_loopback (guint32      address,
                                           guint16      port);
gboolean sbx_conformance_send_all         (int          fd,
                                           const char  *data,
                                           gsize        len);

/* An origin server on 127.0.0.1: echoes what each connection sends and
 * counts the connections it accepted. */
typedef struct
{
  int      fd;
  guint16  port;
  gint     accepted;   /* atomic */
  GThread *thread;
} Echo;

gboolean sbx_conformance_echo_start (Echo *e);
void     sbx_conformance_echo_stop  (Echo *e);

/* start() of @config; NULL with *message set when refused.  *fingerprint is
 * host-allocated (or NULL); @address_guarantee (optional) gets the info's
 * address_guarantee. */
void    *sbx_conformance_egress_start_route (Egress      *g,
                                             const char  *config,
                                             char       **fingerprint,
                                             guint32     *address_guarantee,
                                             char       **message);
/* authorize(); the credential, or NULL. */
char    *sbx_conformance_egress_authorize   (Egress            *g,
                                             void              *route,
                                             const char        *id,
                                             const char *const *targets);

/* revoke() of @id, recorded as @name: PASS when the denial it returns
 * begins with @denied_target, then ends or goes on with a space. */
void     sbx_conformance_egress_revoke_denial (Egress     *g,
                                               const char *name,
                                               void       *route,
                                               const char *id,
                                               const char *denied_target);

/* The listeners case (sbx-conformance-listeners.c). */
void     sbx_conformance_case_listeners     (Egress *g);

G_END_DECLS
