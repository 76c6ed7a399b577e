/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx-egress-proxy-private.h — the http-connect proxy engine's internal
 * types and the functions its files share.  Not installed; only the files of
 * plugins/egress-http include it.
 *
 * The engine is split along its seams into modules that depend on each
 * other in one order (each uses only those before it; no two call each
 * other, tests/check-include-cycles.py):
 *   sbx-egress-conn.c     the connection: its lifetime (new, ref, close,
 *                         its execution's denial), the write and read
 *                         primitives (write then a step, read a server's
 *                         response head) and the error answers;
 *   sbx-egress-dial.c     resolution, address rules and connecting, to the
 *                         target (direct) or the upstream proxy; the caller
 *                         passes what follows the connect;
 *   sbx-egress-tunnel.c   CONNECT tunnels (the upstream CONNECT handshake,
 *                         the 200, the splice(2) relay), the buffer relay of
 *                         forward bodies, raw tunnels (sbx-egress-tunnel.h);
 *   sbx-egress-request.c  request heads, credentials, approval, forwarding;
 *   sbx-egress-listen.c   listeners and accepting (serve_fd, and the raw
 *                         tunnel listeners of sbx-egress-tunnel.h);
 *   sbx-egress-proxy.c    the object: route, executions (authorize,
 *                         revoke), the idle tick, the thread.
 * Beside them: sbx-http-head.c (the head parser, below the connection),
 * sbx-egress-dns.c (the DNS stub, standalone), sbx-egress-forward.c (an
 * execution's stub and forwarders: uses the stub and the listeners) and
 * sbx-egress-http-plugin.c (the ABI glue, on top).
 * The THREADS and LOCKING rules at the top of sbx-egress-proxy.c hold for
 * every one of them.
 */
#ifndef SBX_EGRESS_PROXY_PRIVATE_H
#define SBX_EGRESS_PROXY_PRIVATE_H

#include "sbx-egress-proxy.h"
#include "sbx-http-head.h"
#include "sbx-netrules-private.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

G_BEGIN_DECLS

#define PUMP_BUFFER_SIZE (64 * 1024)
#define READ_CHUNK 16384
/* A tunnel quiet for this long gives its relay pipes back to the pool. */
#define RELAY_IDLE_US (1000 * 1000)

typedef struct _Conn Conn;

typedef struct
{
  int r;
  int w;
} SbxEgressPipe;

typedef struct
{
  char       *id;
  char        hash[65];        /* hex SHA-256 of the credential */
  gboolean    all;
  GHashTable *targets;         /* canonical target -> itself */
  char       *denial;          /* first denial */
  GPtrArray  *conns;           /* (element-type Conn) (owned refs) */
  SbxEgressDenialSinkV1 sink;  /* every refusal (watch_denials); denied NULL: none */
} Exec;

struct _SbxEgressProxy
{
  GMutex        lock;
  GHashTable   *execs;          /* id -> Exec (owned) */
  GHashTable   *conns;          /* Conn -> Conn (owned ref) */
  gboolean      closing;

  /* the route, immutable after new() */
  gboolean      direct;
  gboolean      tls;
  char         *up_host;
  guint16       up_port;
  char         *up_authority;   /* "host:port" */
  char         *up_auth;        /* (nullable) "Basic ..." (secret) */
  gboolean      address_guarantee;
  char         *fingerprint;

  SbxEgressProxyLimits limits;
  GResolver    *resolver;       /* proxy thread; set before serving */
  SbxEgressDialer dialer;       /* proxy thread; tests only */
  gpointer      dialer_data;

  GMainContext *context;
  GMainLoop    *loop;
  GThread      *thread;
  GPtrArray    *listeners;      /* proxy thread: Listener */
  GSource      *tick;
  gint          live_conns;     /* atomic: Conn structs not yet freed */
  gint          live_listeners; /* atomic */
  guint         n_dials;        /* atomic */
  GArray       *pipe_pool;      /* proxy thread: idle relay pipes (SbxEgressPipe) */
  guint         n_pooled;       /* atomic: pipe_pool->len, for tests */
};

typedef struct
{
  SbxEgressProxy  *proxy;
  int              fd;          /* the listening socket (owned) */
  GSource         *source;      /* its readiness watch, also the accept back-off */
  gpointer         tag;         /* the fd's tag in source */
  char            *exec_id;     /* (nullable) the one execution served here */
  char            *tunnel_target; /* (nullable) canonical: every connection is a raw tunnel to it */
} Listener;

typedef struct
{
  Conn          *conn;
  GInputStream  *in;
  GOutputStream *out;
  GSocket       *out_socket;
  guint64        remaining;     /* G_MAXUINT64: until EOF */
  void         (*done) (Conn *c);
  guint8        *buffer;
  gboolean       finished;
  /* tunnels: zero-copy relay through a pipe (splice(2)); -1 when unused */
  GSocket       *in_socket;
  int            in_fd;
  int            out_fd;
  int            pipe_r;
  int            pipe_w;
  gsize          in_pipe;       /* bytes spliced in, not yet out */
  gboolean       grown;         /* the pipe was offered SPLICE_CHUNK */
  gboolean       spliced;       /* this direction runs on the relay source */
} Pump;

typedef void (*ConnStep) (Conn *c);

struct _Conn
{
  gatomicrefcount    ref;
  SbxEgressProxy    *proxy;
  GSocketConnection *client;
  GSocketConnection *server;
  GCancellable      *cancellable;
  gboolean           closed;
  gint64             head_deadline;   /* monotonic us, 0 = none */
  gint64             last_activity;   /* monotonic us */

  GByteArray        *buf;             /* client bytes read so far */
  GByteArray        *ubuf;            /* server bytes read so far (response heads) */
  guint8             chunk[READ_CHUNK];
  SbxHttpHead       *head;
  Exec              *exec;            /* (nullable) under proxy->lock */
  char              *bound_exec;      /* (nullable) the listener's execution: no other authenticates */

  char              *target;          /* canonical */
  char              *host;
  guint16            port;
  gboolean           literal;
  gboolean           named;
  gboolean           held;            /* waits for the host's answer to an ask: no idle timeout */
  gboolean           is_connect;
  char              *path;            /* forward: origin-form path */
  guint64            body_length;
  GList             *addresses;
  GList             *next_address;

  gboolean           raw;             /* a tunnel whose client speaks no HTTP (sbx-egress-tunnel.h) */
  ConnStep           connected;       /* what follows the dial (sbx_egress_dial) */
  ConnStep           release;         /* (nullable) frees what the relay holds; close runs it */
  GSource           *connect_source;  /* (nullable) a direct connect in progress */
  GSource           *relay;           /* (nullable) the splice relay's watch of both sockets */
  gpointer           relay_client_tag;
  gpointer           relay_server_tag;
  Pump               up;              /* client -> server */
  Pump               down;            /* server -> client */
};

/* Reads a response head from the server into c->ubuf, then the step (with
 * NULL when the server ends, fails or sends no valid head). */
typedef void (*HeadStep) (Conn *c, SbxHttpHead *head);

static inline gint64
now_us (void)
{
  return g_get_monotonic_time ();
}

/* sbx-egress-conn.c: the connection */

/* A connection accepted on @client_fd (owned, non-blocking): registered,
 * with its head deadline; the caller gets a reference.  NULL (fd closed)
 * when the proxy is closing.  Proxy thread. */
Conn           *sbx_egress_conn_new        (SbxEgressProxy    *self,
                                            int                client_fd,
                                            const char        *bound_exec);
Conn           *sbx_egress_conn_ref        (Conn              *c);
void            sbx_egress_conn_unref      (Conn              *c);
/* Ends the connection (idempotent): cancels its operations, stops its
 * relay (c->release), closes both sockets, unregisters it from its
 * execution.  Proxy thread. */
void            sbx_egress_conn_close      (Conn              *c);
/* One refusal of @e, with proxy->lock held: kept as its first denial
 * ("target (reason)") when it has none, and reported to its watcher.
 * @operation and @flags as in SbxEgressDenialV1. */
void            sbx_egress_exec_deny_locked (Exec             *e,
                                             guint32           operation,
                                             guint32           flags,
                                             const char       *target,
                                             const char       *mechanism,
                                             const char       *reason);
/* A connect refusal of the connection's execution (the lock is taken
 * here): the proxy's or, for a raw tunnel, the forwarder's. */
void            sbx_egress_record_denial   (Conn              *c,
                                            guint32            flags,
                                            const char        *reason);
/* Writes @bytes (consumed) to @out, then runs @next (NULL: close). */
void            sbx_egress_write_then      (Conn              *c,
                                            GOutputStream     *out,
                                            GBytes            *bytes,
                                            ConnStep           next);
GOutputStream  *sbx_egress_client_out      (Conn              *c);
GOutputStream  *sbx_egress_server_out      (Conn              *c);
/* Reads a response head from the server into c->ubuf, then @step (see
 * HeadStep). */
void            sbx_egress_server_head_read (Conn             *c,
                                             HeadStep          step);
/* An error answer to the client, then close (a raw tunnel: close). */
void            sbx_egress_respond_error   (Conn              *c,
                                            guint              status,
                                            const char        *reason,
                                            const char        *body);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Conn, sbx_egress_conn_unref)

/* sbx-egress-dial.c: connecting */

/* Resolves (direct) and dials the connection's target through the route:
 * on the direct route the target itself, on an upstream route the upstream
 * proxy (what to say to it is the caller's).  Once connected (c->server
 * set), runs @connected; a failure or a refused address is answered with
 * 502 (and a refused address recorded as a denial). */
void            sbx_egress_dial            (Conn              *c,
                                            ConnStep           connected);

/* sbx-egress-tunnel.c: relaying */

/* Relays @remaining bytes (G_MAXUINT64: until EOF) from @from to @to through
 * a user-space buffer, then @done. */
void            sbx_egress_pump_start      (Conn              *c,
                                            Pump              *p,
                                            GSocketConnection *from,
                                            GSocketConnection *to,
                                            guint64            remaining,
                                            void             (*done) (Conn *c));
/* Dials the target of an approved CONNECT (or raw tunnel) and relays: the
 * upstream CONNECT handshake on an upstream route, the 200 to an HTTP
 * client, then both directions with half-close. */
void            sbx_egress_tunnel_connect  (Conn              *c);
/* Starts a raw tunnel of @c to @target (canonical) for @exec_id: approval,
 * address rules and dialing as for CONNECT, no HTTP to the client.  Proxy
 * thread. */
void            sbx_egress_tunnel_begin    (Conn              *c,
                                            const char        *exec_id,
                                            const char        *target);
/* Checks a raw tunnel's @target (canonical) and @execution_id (authorized,
 * the proxy not closing) before handing over.  Closes @fd on failure. */
gboolean        sbx_egress_tunnel_check    (SbxEgressProxy    *proxy,
                                            const char        *execution_id,
                                            const char        *target,
                                            int                fd,
                                            GError           **error);
/* Gives back the pipes of a tunnel that has been idle (the tick). */
void            sbx_egress_relay_idle      (Conn              *c);
/* Closes the pooled pipes (free). */
void            sbx_egress_pipe_pool_free  (SbxEgressProxy    *self);

/* sbx-egress-request.c: requests */

/* Reads the connection's request head and serves it: authentication,
 * approval, then a tunnel or a forward. */
void            sbx_egress_request_read    (Conn              *c);
/* The hex SHA-256 of a credential, as executions keep it. */
char           *sbx_egress_sha256_hex      (const char        *s);

/* sbx-egress-listen.c: listeners */

/* Closes the listener and frees it.  Proxy thread. */
void            sbx_egress_listener_close  (Listener          *l);

G_END_DECLS

#endif /* SBX_EGRESS_PROXY_PRIVATE_H */
