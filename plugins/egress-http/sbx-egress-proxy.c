/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The http-connect egress route.
 *
 * THREADS.  Every socket is served by one thread per proxy, running its own
 * GMainContext: accepting, reading heads, resolving, dialing, tunnelling
 * and forwarding are all non-blocking GIO operations on that context.
 * authorize, revoke and serve_fd may be called from any thread.
 *
 * LOCKING.  self->lock protects self->execs (and every Exec in it),
 * self->conns, self->closing and Conn.exec.  It is never held across a GIO
 * call that can dispatch a callback, and never while calling out of the
 * plugin.  Everything else in a Conn is touched only by the proxy thread.
 *
 * RULES (each is tested in tests/egress-http/):
 *  - a request is served only with `Proxy-Authorization: Basic
 *    base64(<execution id>:<credential>)`, split at the LAST ':' (the
 *    credential is base64url and has none, so execution ids may contain
 *    ':'); unknown, wrong or revoked credentials get 407 and no dial;
 *  - the target must be one the execution was authorized for (or it was
 *    authorized for all): otherwise 403 and the execution's first denial is
 *    recorded; a request whose target cannot be parsed is denied as
 *    tcp:invalid:1;
 *  - direct route: names are resolved here and refused when ANY address is
 *    non-public; an IP literal in a non-public class is dialed only when the
 *    execution's approval lists that exact target; metadata never; refused
 *    resolutions get 502 and are recorded as denials;
 *  - upstream route: CONNECT / absolute-form requests to the upstream with
 *    its Basic credentials; never a direct connection, whatever fails;
 *  - CONNECT tunnels pass bytes unchanged in both directions with
 *    half-close (TLS stays end-to-end); forward requests lose their
 *    hop-by-hop and proxy fields in both directions;
 *  - limits: the head must be complete within head_timeout_ms and
 *    max_head_bytes (431 beyond); a connection that moves no byte for
 *    idle_timeout_ms is closed;
 *  - revoke closes the execution's connections and only those; a
 *    connection that registers after the revoke finds no execution (407).
 *  - the supervisor's own proxy environment is never consulted.
 */
#include "sbx-egress-proxy.h"
#include "sbx-http-head.h"
#include "sbx-netrules-private.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#define PUMP_BUFFER_SIZE (64 * 1024)
#define READ_CHUNK 16384

typedef struct _Conn Conn;

typedef struct
{
  char       *id;
  char        hash[65];        /* hex SHA-256 of the credential */
  gboolean    all;
  GHashTable *targets;         /* canonical target -> itself */
  char       *denial;          /* first denial */
  GPtrArray  *conns;           /* (element-type Conn) (owned refs) */
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
};

typedef struct
{
  SbxEgressProxy  *proxy;
  GSocketListener *listener;
  GCancellable    *cancellable;
  char            *exec_id;     /* (nullable) the one execution served here */
  char            *forward_target; /* (nullable) a forwarder's target (sbx-egress-forward.c) */
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
  int            pipe_r;
  int            pipe_w;
  gsize          in_pipe;       /* bytes spliced in, not yet out */
  GSource       *source;        /* (nullable) the readiness watch */
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
  gboolean           transparent;     /* a forwarder's connection: no HTTP towards the client */

  char              *target;          /* canonical */
  char              *host;
  guint16            port;
  gboolean           literal;
  gboolean           named;
  gboolean           is_connect;
  char              *path;            /* forward: origin-form path */
  guint64            body_length;
  GList             *addresses;
  GList             *next_address;

  GSource           *connect_source;  /* (nullable) a direct connect in progress */
  Pump               up;              /* client -> server */
  Pump               down;            /* server -> client */
};

static void conn_close (Conn *c);
static void conn_read_head (Conn *c);

/* ------------------------------------------------------------------------- */
/* Small helpers                                                              */
/* ------------------------------------------------------------------------- */

static gint64
now_us (void)
{
  return g_get_monotonic_time ();
}

static void
wipe_free (char *s)
{
  if (s != NULL)
    memset (s, 0, strlen (s));
  g_free (s);
}

static Conn *
conn_ref (Conn *c)
{
  g_atomic_ref_count_inc (&c->ref);
  return c;
}

static void
conn_unref (Conn *c)
{
  if (!g_atomic_ref_count_dec (&c->ref))
    return;
  g_clear_object (&c->client);
  g_clear_object (&c->server);
  g_clear_object (&c->cancellable);
  g_byte_array_unref (c->buf);
  g_byte_array_unref (c->ubuf);
  sbx_http_head_free (c->head);
  g_free (c->target);
  g_free (c->bound_exec);
  g_free (c->host);
  g_free (c->path);
  g_resolver_free_addresses (c->addresses);
  g_free (c->up.buffer);
  g_free (c->down.buffer);
  for (int i = 0; i < 2; i++)
    {
      Pump *p = i == 0 ? &c->up : &c->down;

      if (p->pipe_r >= 0)
        close (p->pipe_r);
      if (p->pipe_w >= 0)
        close (p->pipe_w);
    }
  g_atomic_int_add (&c->proxy->live_conns, -1);
  g_free (c);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Conn, conn_unref)

static void
exec_free (Exec *e)
{
  wipe_free (e->id);
  memset (e->hash, 0, sizeof e->hash);
  g_hash_table_unref (e->targets);
  g_free (e->denial);
  g_ptr_array_unref (e->conns);
  g_free (e);
}

static void
set_nodelay (GSocketConnection *connection)
{
  GSocket *socket = g_socket_connection_get_socket (connection);

  g_socket_set_option (socket, IPPROTO_TCP, TCP_NODELAY, 1, NULL);
}

static char *
sha256_hex (const char *s)
{
  return g_compute_checksum_for_string (G_CHECKSUM_SHA256, s, -1);
}

/* Record the first denial of the connection's execution.  Lock held by caller
 * is not needed: takes it. */
static void
record_denial (Conn       *c,
               const char *exec_id,
               const char *denial)
{
  SbxEgressProxy *self = c->proxy;
  Exec *e;

  g_mutex_lock (&self->lock);
  e = exec_id != NULL ? g_hash_table_lookup (self->execs, exec_id) : c->exec;
  if (e != NULL && e->denial == NULL)
    e->denial = g_strdup (denial);
  g_mutex_unlock (&self->lock);
}

/* ------------------------------------------------------------------------- */
/* Writing                                                                    */
/* ------------------------------------------------------------------------- */

typedef struct
{
  Conn    *conn;
  GBytes  *bytes;
  ConnStep next;
} WriteOp;

static void
write_done (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  WriteOp *op = user_data;
  g_autoptr(Conn) c = op->conn;
  g_autoptr(GError) error = NULL;
  ConnStep next = op->next;

  g_bytes_unref (op->bytes);
  g_free (op);
  if (!g_output_stream_write_all_finish (G_OUTPUT_STREAM (source), result, NULL, &error) || c->closed)
    {
      conn_close (c);
      return;
    }
  c->last_activity = now_us ();
  if (next != NULL)
    next (c);
  else
    conn_close (c);
}

/* Write @bytes (consumed) to @out, then run @next (NULL: close). */
static void
write_then (Conn          *c,
            GOutputStream *out,
            GBytes        *bytes,
            ConnStep       next)
{
  WriteOp *op;

  if (g_bytes_get_size (bytes) == 0)
    {
      g_bytes_unref (bytes);
      if (next != NULL)
        next (c);
      else
        conn_close (c);
      return;
    }
  op = g_new0 (WriteOp, 1);
  op->conn = conn_ref (c);
  op->bytes = bytes;
  op->next = next;
  g_output_stream_write_all_async (out, g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes),
                                   G_PRIORITY_DEFAULT, c->cancellable, write_done, op);
}

static GOutputStream *
client_out (Conn *c)
{
  return g_io_stream_get_output_stream (G_IO_STREAM (c->client));
}

static GOutputStream *
server_out (Conn *c)
{
  return g_io_stream_get_output_stream (G_IO_STREAM (c->server));
}

/* An error answer to the client, then close.  Bodies are fixed texts; never
 * a credential, never a resolved address. */
static void
respond_error (Conn       *c,
               guint       status,
               const char *reason,
               const char *body)
{
  g_autofree char *text = NULL;

  /* a forwarder's client speaks no HTTP: a refusal is the close */
  if (c->transparent)
    {
      conn_close (c);
      return;
    }

  text = g_strdup_printf ("HTTP/1.1 %u %s\r\n"
                          "%s"
                          "Content-Type: text/plain; charset=utf-8\r\n"
                          "Content-Length: %zu\r\n"
                          "Connection: close\r\n\r\n%s",
                          status, reason,
                          status == 407 ? "Proxy-Authenticate: Basic realm=\"sandbox\"\r\n" : "",
                          strlen (body) + 1, body);
  {
    g_autofree char *with_nl = g_strconcat (text, "\n", NULL);
    gsize len = strlen (with_nl);

    write_then (c, client_out (c), g_bytes_new_take (g_steal_pointer (&with_nl), len), NULL);
  }
}

/* ------------------------------------------------------------------------- */
/* Pumps                                                                      */
/* ------------------------------------------------------------------------- */

static void pump_read (Pump *p);

static void
pump_write_done (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  Pump *p = user_data;
  g_autoptr(Conn) c = p->conn;
  g_autoptr(GError) error = NULL;

  if (!g_output_stream_write_all_finish (G_OUTPUT_STREAM (source), result, NULL, &error) || c->closed)
    {
      conn_close (c);
      return;
    }
  c->last_activity = now_us ();
  if (p->remaining == 0)
    {
      p->finished = TRUE;
      p->done (c);
      return;
    }
  pump_read (p);
}

static void
pump_read_done (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  Pump *p = user_data;
  g_autoptr(Conn) c = p->conn;
  g_autoptr(GError) error = NULL;
  gssize n = g_input_stream_read_finish (G_INPUT_STREAM (source), result, &error);

  if (n < 0 || c->closed)
    {
      conn_close (c);
      return;
    }
  if (n == 0)
    {
      p->finished = TRUE;
      p->done (c);
      return;
    }
  c->last_activity = now_us ();
  if (p->remaining != G_MAXUINT64)
    p->remaining -= (guint64) n;
  conn_ref (c);
  g_output_stream_write_all_async (p->out, p->buffer, (gsize) n, G_PRIORITY_DEFAULT, c->cancellable,
                                   pump_write_done, p);
}

static void
pump_read (Pump *p)
{
  Conn *c = p->conn;
  gsize want = PUMP_BUFFER_SIZE;

  if (p->remaining != G_MAXUINT64 && p->remaining < want)
    want = (gsize) p->remaining;
  if (p->buffer == NULL)
    p->buffer = g_malloc (PUMP_BUFFER_SIZE);
  /* every pending operation holds a reference; the callback drops it */
  conn_ref (c);
  g_input_stream_read_async (p->in, p->buffer, want, G_PRIORITY_DEFAULT, c->cancellable, pump_read_done, p);
}

static void
pump_start (Conn                *c,
            Pump                *p,
            GSocketConnection   *from,
            GSocketConnection   *to,
            guint64              remaining,
            void               (*done) (Conn *c))
{
  p->conn = c;
  p->in = g_io_stream_get_input_stream (G_IO_STREAM (from));
  p->out = g_io_stream_get_output_stream (G_IO_STREAM (to));
  p->out_socket = g_socket_connection_get_socket (to);
  p->remaining = remaining;
  p->done = done;
  p->finished = FALSE;
  if (remaining == 0)
    {
      p->finished = TRUE;
      done (c);
      return;
    }
  pump_read (p);
}

/* Tunnels relay with splice(2) through a pipe per direction: the bytes never
 * enter user space (a copy through a GIO buffer costs two more copies and
 * more wake-ups).  Same rules as the GIO pump: EOF becomes done(), any error
 * closes the connection, every move counts as activity. */
#define SPLICE_CHUNK (1 << 20)
#define SPLICE_ROUNDS 16   /* per wake-up, so one busy tunnel cannot starve the others */

static gboolean splice_ready (GSocket *socket, GIOCondition condition, gpointer data);

static void
splice_source_done (gpointer data)
{
  Pump *p = data;

  conn_unref (p->conn);
}

static void
splice_watch (Pump    *p,
              gboolean for_output)
{
  Conn *c = p->conn;

  if (p->source != NULL)
    {
      g_source_destroy (p->source);
      g_source_unref (p->source);
    }
  p->source = g_socket_create_source (for_output ? p->out_socket : p->in_socket,
                                      (for_output ? G_IO_OUT : G_IO_IN) | G_IO_HUP | G_IO_ERR, NULL);
  conn_ref (c);
  g_source_set_callback (p->source, G_SOURCE_FUNC (splice_ready), p, splice_source_done);
  g_source_attach (p->source, c->proxy->context);
}

static gboolean
splice_ready (GSocket      *socket,
              GIOCondition  condition,
              gpointer      data)
{
  Pump *p = data;
  Conn *c = p->conn;
  int in_fd = g_socket_get_fd (p->in_socket);
  int out_fd = g_socket_get_fd (p->out_socket);

  if (c->closed)
    return G_SOURCE_REMOVE;
  for (int round = 0; round < SPLICE_ROUNDS; round++)
    {
      ssize_t n;

      if (p->in_pipe > 0)
        {
          n = splice (p->pipe_r, NULL, out_fd, NULL, p->in_pipe, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
          if (n < 0 && errno == EAGAIN)
            {
              splice_watch (p, TRUE);
              return G_SOURCE_REMOVE;
            }
          if (n <= 0)
            {
              conn_close (c);
              return G_SOURCE_REMOVE;
            }
          p->in_pipe -= (gsize) n;
          c->last_activity = now_us ();
          continue;
        }
      n = splice (in_fd, NULL, p->pipe_w, NULL, SPLICE_CHUNK, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
      if (n < 0 && errno == EAGAIN)
        {
          splice_watch (p, FALSE);
          return G_SOURCE_REMOVE;
        }
      if (n < 0)
        {
          conn_close (c);
          return G_SOURCE_REMOVE;
        }
      if (n == 0)
        {
          p->finished = TRUE;
          if (p->source != NULL)
            {
              g_source_destroy (p->source);
              g_clear_pointer (&p->source, g_source_unref);
            }
          p->done (c);
          return G_SOURCE_REMOVE;
        }
      p->in_pipe += (gsize) n;
      c->last_activity = now_us ();
    }
  /* yield: come back when there is more (or room) */
  splice_watch (p, p->in_pipe > 0);
  return G_SOURCE_REMOVE;
}

/* Starts a splice relay; FALSE when no pipe can be had (then the GIO pump
 * is used). */
static gboolean
splice_start (Conn              *c,
              Pump              *p,
              GSocketConnection *from,
              GSocketConnection *to,
              void             (*done) (Conn *c))
{
  int fds[2];

  if (pipe2 (fds, O_CLOEXEC | O_NONBLOCK) != 0)
    return FALSE;
  /* a bigger pipe moves more per wake-up; refusal (pipe-max-size) is fine */
  (void) fcntl (fds[1], F_SETPIPE_SZ, SPLICE_CHUNK);
  p->conn = c;
  p->pipe_r = fds[0];
  p->pipe_w = fds[1];
  p->in_socket = g_socket_connection_get_socket (from);
  p->out_socket = g_socket_connection_get_socket (to);
  p->remaining = G_MAXUINT64;
  p->done = done;
  p->finished = FALSE;
  splice_watch (p, FALSE);
  return TRUE;
}

/* ------------------------------------------------------------------------- */
/* Closing                                                                    */
/* ------------------------------------------------------------------------- */

static void
conn_close (Conn *c)
{
  SbxEgressProxy *self = c->proxy;
  gboolean owned;

  if (c->closed)
    return;
  c->closed = TRUE;
  g_cancellable_cancel (c->cancellable);
  if (c->connect_source != NULL)
    {
      GSource *source = g_steal_pointer (&c->connect_source);

      /* drops the watch's reference after this dispatch; the caller holds one */
      g_source_destroy (source);
      g_source_unref (source);
    }
  for (int i = 0; i < 2; i++)
    {
      Pump *p = i == 0 ? &c->up : &c->down;

      /* destroying the watch drops its reference (splice_source_done);
       * the caller holds one, so c stays valid here */
      if (p->source != NULL)
        {
          GSource *source = g_steal_pointer (&p->source);

          g_source_destroy (source);
          g_source_unref (source);
        }
    }
  if (c->client != NULL)
    g_io_stream_close (G_IO_STREAM (c->client), NULL, NULL);
  if (c->server != NULL)
    g_io_stream_close (G_IO_STREAM (c->server), NULL, NULL);

  g_mutex_lock (&self->lock);
  if (c->exec != NULL)
    {
      g_ptr_array_remove_fast (c->exec->conns, c);   /* drops the exec's ref */
      c->exec = NULL;
    }
  owned = g_hash_table_steal (self->conns, c);
  g_mutex_unlock (&self->lock);
  if (owned)
    conn_unref (c);
}

/* ------------------------------------------------------------------------- */
/* Tunnels and forwarding                                                     */
/* ------------------------------------------------------------------------- */

static void
tunnel_direction_done (Conn *c)
{
  /* half-close: EOF from one side becomes a write shutdown on the other */
  if (c->up.finished)
    g_socket_shutdown (c->up.out_socket, FALSE, TRUE, NULL);
  if (c->down.finished)
    g_socket_shutdown (c->down.out_socket, FALSE, TRUE, NULL);
  if (c->up.finished && c->down.finished)
    conn_close (c);
}

static void
tunnel_start (Conn *c)
{
  /* bytes the client sent after the CONNECT head go first (they were read
   * with the head) */
  gsize leftover = c->head != NULL ? c->buf->len - c->head->head_length : 0;

  c->head_deadline = 0;
  if (leftover > 0)
    {
      GBytes *bytes = g_bytes_new (c->buf->data + c->head->head_length, leftover);

      g_byte_array_set_size (c->buf, c->head->head_length);
      write_then (c, server_out (c), bytes, tunnel_start);
      return;
    }
  if (!splice_start (c, &c->up, c->client, c->server, tunnel_direction_done))
    pump_start (c, &c->up, c->client, c->server, G_MAXUINT64, tunnel_direction_done);
  if (!splice_start (c, &c->down, c->server, c->client, tunnel_direction_done))
    pump_start (c, &c->down, c->server, c->client, G_MAXUINT64, tunnel_direction_done);
}

static void
tunnel_established (Conn *c)
{
  /* upstream bytes read beyond its 200 head go to the client first */
  if (c->ubuf->len > 0)
    {
      GBytes *bytes = g_bytes_new (c->ubuf->data, c->ubuf->len);

      g_byte_array_set_size (c->ubuf, 0);
      write_then (c, client_out (c), bytes, tunnel_established);
      return;
    }
  tunnel_start (c);
}

static void
send_established (Conn *c)
{
  static const char ok[] = "HTTP/1.1 200 Connection Established\r\n\r\n";

  if (c->transparent)
    {
      tunnel_established (c);
      return;
    }
  write_then (c, client_out (c), g_bytes_new_static (ok, sizeof ok - 1), tunnel_established);
}

static gboolean
is_hop_by_hop (const char *name,
               const char *connection_list)
{
  static const char *const fixed[] = {
    "connection", "proxy-connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
    "te", "trailer", "transfer-encoding", "upgrade",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (fixed); i++)
    if (g_ascii_strcasecmp (name, fixed[i]) == 0)
      return TRUE;
  return sbx_http_list_has_token (connection_list, name);
}

static void
forward_response_body (Conn *c)
{
  pump_start (c, &c->down, c->server, c->client, G_MAXUINT64, conn_close);
}

static void forward_read_response (Conn *c);

static void
forward_response_head (Conn        *c,
                       SbxHttpHead *resp)
{
  const char *connection = sbx_http_head_get (resp, "Connection", NULL);
  const char *te = sbx_http_head_get (resp, "Transfer-Encoding", NULL);
  GString *out = g_string_new (NULL);
  gsize rest = c->ubuf->len - resp->head_length;
  GBytes *bytes;
  gboolean interim = resp->status >= 100 && resp->status < 200;

  if (resp->status == 101)
    {
      g_string_free (out, TRUE);
      respond_error (c, 502, "Bad Gateway", "upstream unavailable");
      return;
    }
  g_string_append_printf (out, "HTTP/1.1 %u %s\r\n", resp->status, resp->reason);
  for (guint i = 0; i < resp->names->len; i++)
    {
      if (is_hop_by_hop (resp->names->pdata[i], connection))
        continue;
      g_string_append_printf (out, "%s: %s\r\n", (char *) resp->names->pdata[i],
                              (char *) resp->values->pdata[i]);
    }
  /* The body is relayed byte for byte, so its framing travels with it:
   * Transfer-Encoding is hop-by-hop, and this hop re-frames identically. */
  if (te != NULL && !interim)
    g_string_append_printf (out, "Transfer-Encoding: %s\r\n", te);
  if (!interim)
    g_string_append (out, "Connection: close\r\n");
  g_string_append (out, "\r\n");
  if (interim)
    {
      /* what follows an interim head is the next head: it must be parsed
       * and filtered too, never passed on raw */
      g_byte_array_remove_range (c->ubuf, 0, (guint) resp->head_length);
    }
  else
    {
      g_string_append_len (out, (const char *) c->ubuf->data + resp->head_length, (gssize) rest);
      g_byte_array_set_size (c->ubuf, 0);
    }
  bytes = g_string_free_to_bytes (out);
  write_then (c, client_out (c), bytes, interim ? forward_read_response : forward_response_body);
}

/* Reads a response head from the server into c->ubuf, then @on_head. */
typedef void (*HeadStep) (Conn *c, SbxHttpHead *head);

typedef struct
{
  Conn    *conn;
  HeadStep step;
} HeadOp;

static void server_head_read (Conn *c, HeadStep step);

static void
server_head_done (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  HeadOp *op = user_data;
  g_autoptr(Conn) c = op->conn;
  HeadStep step = op->step;
  g_autoptr(GError) error = NULL;
  gssize n;

  g_free (op);
  n = g_input_stream_read_finish (G_INPUT_STREAM (source), result, &error);
  if (c->closed)
    return;
  if (n <= 0)
    {
      step (c, NULL);
      return;
    }
  c->last_activity = now_us ();
  g_byte_array_append (c->ubuf, c->chunk, (guint) n);
  server_head_read (c, step);
}

static void
server_head_read (Conn    *c,
                  HeadStep step)
{
  SbxHttpHead *head = NULL;
  SbxHttpParse r = SBX_HTTP_PARSE_INCOMPLETE;
  HeadOp *op;

  if (c->ubuf->len > 0)
    r = sbx_http_head_parse ((const char *) c->ubuf->data, c->ubuf->len, c->proxy->limits.max_head_bytes,
                             TRUE, &head, NULL);
  if (r == SBX_HTTP_PARSE_OK)
    {
      step (c, head);
      sbx_http_head_free (head);
      return;
    }
  if (r != SBX_HTTP_PARSE_INCOMPLETE)
    {
      step (c, NULL);
      return;
    }
  op = g_new0 (HeadOp, 1);
  op->conn = conn_ref (c);
  op->step = step;
  g_input_stream_read_async (g_io_stream_get_input_stream (G_IO_STREAM (c->server)), c->chunk,
                             sizeof c->chunk, G_PRIORITY_DEFAULT, c->cancellable, server_head_done, op);
}

static void
forward_got_response (Conn        *c,
                      SbxHttpHead *resp)
{
  if (resp == NULL)
    {
      respond_error (c, 502, "Bad Gateway", "upstream unavailable");
      return;
    }
  /* drop what forward_response_head does not consume: nothing; it uses
   * resp->head_length of c->ubuf */
  forward_response_head (c, resp);
}

static void
forward_read_response (Conn *c)
{
  server_head_read (c, forward_got_response);
}

static void
forward_send_body (Conn *c)
{
  gsize have = c->buf->len - c->head->head_length;
  guint64 left = c->body_length > have ? c->body_length - have : 0;

  pump_start (c, &c->up, c->client, c->server, left, forward_read_response);
}

static void
forward_start (Conn *c)
{
  SbxEgressProxy *self = c->proxy;
  SbxHttpHead *h = c->head;
  const char *connection = sbx_http_head_get (h, "Connection", NULL);
  const char *proxy_connection = sbx_http_head_get (h, "Proxy-Connection", NULL);
  g_autofree char *authority = sbx_netrules_join_host_port (c->host, c->port);
  GString *out = g_string_new (NULL);
  gsize have = c->buf->len - h->head_length;
  gsize body_now = (gsize) MIN ((guint64) have, c->body_length);

  c->head_deadline = 0;
  if (self->direct)
    g_string_append_printf (out, "%s %s HTTP/1.1\r\n", h->method, c->path);
  else
    g_string_append_printf (out, "%s http://%s%s HTTP/1.1\r\n", h->method, authority, c->path);
  /* Host is what was authorized, whatever the client wrote */
  if (c->port == 80 && strchr (c->host, ':') == NULL)
    g_string_append_printf (out, "Host: %s\r\n", c->host);
  else if (c->port == 80)
    g_string_append_printf (out, "Host: [%s]\r\n", c->host);
  else
    g_string_append_printf (out, "Host: %s\r\n", authority);
  for (guint i = 0; i < h->names->len; i++)
    {
      const char *name = h->names->pdata[i];

      if (is_hop_by_hop (name, connection) || sbx_http_list_has_token (proxy_connection, name) ||
          g_ascii_strcasecmp (name, "Host") == 0)
        continue;
      g_string_append_printf (out, "%s: %s\r\n", name, (char *) h->values->pdata[i]);
    }
  if (!self->direct && self->up_auth != NULL)
    g_string_append_printf (out, "Proxy-Authorization: %s\r\n", self->up_auth);
  g_string_append (out, "Connection: close\r\n\r\n");
  g_string_append_len (out, (const char *) c->buf->data + h->head_length, (gssize) body_now);
  write_then (c, server_out (c), g_string_free_to_bytes (out), forward_send_body);
}

/* ------------------------------------------------------------------------- */
/* Dialing                                                                    */
/* ------------------------------------------------------------------------- */

static void
upstream_connect_reply (Conn        *c,
                        SbxHttpHead *resp)
{
  if (resp == NULL || resp->status / 100 != 2)
    {
      /* the upstream refused: never a direct attempt.  Its 407 means the
       * route's credentials are wrong: the client sees 407 too. */
      if (resp != NULL && resp->status == 407)
        respond_error (c, 407, "Proxy Authentication Required", "upstream proxy authentication failed");
      else
        respond_error (c, 502, "Bad Gateway", "upstream unavailable");
      return;
    }
  g_byte_array_remove_range (c->ubuf, 0, (guint) resp->head_length);
  c->head_deadline = 0;
  send_established (c);
}

static void upstream_handshake_sent (Conn *c);

static void
upstream_await_reply (Conn *c)
{
  server_head_read (c, upstream_connect_reply);
}

static void
connected (Conn *c)
{
  SbxEgressProxy *self = c->proxy;

  set_nodelay (c->server);
  if (c->is_connect && self->direct)
    send_established (c);
  else if (c->is_connect)
    upstream_handshake_sent (c);
  else
    forward_start (c);
}

static void
upstream_handshake_sent (Conn *c)
{
  SbxEgressProxy *self = c->proxy;
  g_autofree char *authority = sbx_netrules_join_host_port (c->host, c->port);
  GString *out = g_string_new (NULL);

  g_string_append_printf (out, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n", authority, authority);
  if (self->up_auth != NULL)
    g_string_append_printf (out, "Proxy-Authorization: %s\r\n", self->up_auth);
  g_string_append (out, "\r\n");
  /* the handshake has the upstream deadline; cleared on success */
  c->head_deadline = now_us () + (gint64) self->limits.upstream_timeout_ms * 1000;
  write_then (c, server_out (c), g_string_free_to_bytes (out), upstream_await_reply);
}

static void dial_next (Conn *c);

static void dial_next (Conn *c);

static void
dial_result (Conn              *c,
             GSocketConnection *connection)
{
  if (connection == NULL)
    {
      if (c->proxy->direct && c->next_address != NULL)
        {
          dial_next (c);
          return;
        }
      respond_error (c, 502, "Bad Gateway", "upstream unavailable");
      return;
    }
  c->server = connection;
  /* GSocketClient's timeout bounds the connect; left on the socket it would
   * also end a tunnel whose server side is quiet for that long.  Idleness
   * is the tick's business (both directions together). */
  g_socket_set_timeout (g_socket_connection_get_socket (connection), 0);
  c->last_activity = now_us ();
  connected (c);
}

static void
dial_done (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  g_autoptr(Conn) c = user_data;
  g_autoptr(GError) error = NULL;
  GSocketConnection *connection = g_socket_client_connect_finish (G_SOCKET_CLIENT (source), result, &error);

  if (c->closed)
    {
      if (connection != NULL)
        {
          g_io_stream_close (G_IO_STREAM (connection), NULL, NULL);
          g_object_unref (connection);
        }
      return;
    }
  dial_result (c, connection);
}

/* Direct dials are a plain non-blocking connect() and a writability watch:
 * GSocketClient's machinery (tasks, address enumerators, events) costs more
 * than the connect itself on loopback.  Bounded by the head deadline. */
static gboolean
direct_connect_ready (GSocket      *socket,
                      GIOCondition  condition,
                      gpointer      data)
{
  Conn *c = data;
  GSocketConnection *connection = NULL;

  g_clear_pointer (&c->connect_source, g_source_unref);
  if (c->closed)
    return G_SOURCE_REMOVE;
  if (g_socket_check_connect_result (socket, NULL))
    connection = g_socket_connection_factory_create_connection (socket);
  else
    g_socket_close (socket, NULL);
  dial_result (c, connection);
  return G_SOURCE_REMOVE;
}

static void
direct_connect (Conn           *c,
                GSocketAddress *address)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocket) socket = g_socket_new (g_socket_address_get_family (address), G_SOCKET_TYPE_STREAM,
                                            G_SOCKET_PROTOCOL_TCP, &error);

  if (socket == NULL)
    {
      dial_result (c, NULL);
      return;
    }
  g_socket_set_blocking (socket, FALSE);
  if (g_socket_connect (socket, address, NULL, &error))
    {
      dial_result (c, g_socket_connection_factory_create_connection (socket));
      return;
    }
  if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_PENDING))
    {
      g_socket_close (socket, NULL);
      dial_result (c, NULL);
      return;
    }
  c->connect_source = g_socket_create_source (socket, G_IO_OUT | G_IO_ERR | G_IO_HUP, NULL);
  g_source_set_callback (c->connect_source, G_SOURCE_FUNC (direct_connect_ready), conn_ref (c),
                         (GDestroyNotify) conn_unref);
  g_source_attach (c->connect_source, c->proxy->context);
}

static GSocketClient *
make_client (SbxEgressProxy *self,
             gboolean        tls)
{
  GSocketClient *client = g_socket_client_new ();

  /* the supervisor's own proxy settings never apply (no GProxyResolver) */
  g_socket_client_set_enable_proxy (client, FALSE);
  g_socket_client_set_timeout (client, (self->limits.upstream_timeout_ms + 999) / 1000);
  g_socket_client_set_tls (client, tls);
  return client;
}

static void
dial_next (Conn *c)
{
  SbxEgressProxy *self = c->proxy;
  g_autoptr(GSocketAddress) address = self->dialer != NULL
                                        ? self->dialer (c->next_address->data, c->port, self->dialer_data)
                                        : g_inet_socket_address_new (c->next_address->data, c->port);

  c->next_address = c->next_address->next;
  g_atomic_int_inc (&self->n_dials);
  direct_connect (c, address);
}

static void
dial_checked (Conn   *c,
              GList  *addresses,
              GError *lookup_error)
{
  g_autoptr(GError) error = NULL;

  if (addresses == NULL)
    {
      respond_error (c, 502, "Bad Gateway", "upstream unavailable");
      return;
    }
  if (!sbx_netrules_check_addresses (c->host, c->literal, c->named, addresses, &error))
    {
      g_autofree char *denial = g_strdup_printf ("%s (%s)", c->target, error->message);

      g_resolver_free_addresses (addresses);
      if (g_error_matches (error, SBX_NETRULES_ERROR, SBX_NETRULES_ERROR_ADDRESS_DENIED))
        record_denial (c, NULL, denial);
      respond_error (c, 502, "Bad Gateway", "upstream unavailable");
      return;
    }
  c->addresses = addresses;
  c->next_address = addresses;
  dial_next (c);
}

static void
lookup_done (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  g_autoptr(Conn) c = user_data;
  g_autoptr(GError) error = NULL;
  GList *addresses = g_resolver_lookup_by_name_finish (G_RESOLVER (source), result, &error);

  if (c->closed)
    {
      g_resolver_free_addresses (addresses);
      return;
    }
  dial_checked (c, addresses, error);
}

static void
dial (Conn *c)
{
  SbxEgressProxy *self = c->proxy;

  if (!self->direct)
    {
      g_autoptr(GSocketClient) client = make_client (self, self->tls);

      /* An upstream resolves names itself.  IP literals are still judged
       * here: a metadata literal never leaves, a non-public literal only
       * when named. */
      if (c->literal)
        {
          g_autoptr(GError) error = NULL;
          GList *one = g_list_prepend (NULL, g_inet_address_new_from_string (c->host));
          gboolean ok = sbx_netrules_check_addresses (c->host, TRUE, c->named, one, &error);

          g_resolver_free_addresses (one);
          if (!ok)
            {
              g_autofree char *denial = g_strdup_printf ("%s (%s)", c->target,
                                                         error->message);

              record_denial (c, NULL, denial);
              respond_error (c, 502, "Bad Gateway", "upstream unavailable");
              return;
            }
        }
      g_atomic_int_inc (&self->n_dials);
      g_socket_client_connect_to_host_async (client, self->up_authority, self->up_port, c->cancellable,
                                             dial_done, conn_ref (c));
      return;
    }

  if (c->literal)
    {
      dial_checked (c, g_list_prepend (NULL, g_inet_address_new_from_string (c->host)), NULL);
      return;
    }
  g_resolver_lookup_by_name_async (self->resolver, c->host, c->cancellable, lookup_done, conn_ref (c));
}

/* ------------------------------------------------------------------------- */
/* Requests                                                                   */
/* ------------------------------------------------------------------------- */

/* Splits "Basic base64(id:cred)" at the last ':'.  FALSE when malformed. */
static gboolean
parse_proxy_authorization (const char  *value,
                           char       **id,
                           char       **credential)
{
  g_autofree guchar *decoded = NULL;
  g_autofree char *text = NULL;
  gsize len = 0;
  char *colon;

  if (value == NULL || g_ascii_strncasecmp (value, "Basic ", 6) != 0)
    return FALSE;
  value += 6;
  while (*value == ' ')
    value++;
  for (const char *p = value; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p) && *p != '+' && *p != '/' && *p != '=')
      return FALSE;
  decoded = g_base64_decode (value, &len);
  if (decoded == NULL || len == 0 || memchr (decoded, '\0', len) != NULL)
    return FALSE;
  text = g_strndup ((const char *) decoded, len);
  memset (decoded, 0, len);
  if (!g_utf8_validate (text, -1, NULL))
    return FALSE;
  colon = strrchr (text, ':');
  if (colon == NULL || colon == text || colon[1] == '\0')
    return FALSE;
  *id = g_strndup (text, (gsize) (colon - text));
  *credential = g_strdup (colon + 1);
  memset (text, 0, len);
  return TRUE;
}

/* The target of a request: CONNECT authority, or an absolute http:// URL
 * (forward).  FALSE for anything else (origin-form, https://, userinfo). */
static gboolean
request_target (Conn *c)
{
  SbxHttpHead *h = c->head;
  g_autofree char *authority = NULL;
  g_autofree char *raw = NULL;
  const char *rest;

  if (strcmp (h->method, "CONNECT") == 0)
    {
      c->is_connect = TRUE;
      authority = g_strdup (h->target);
    }
  else
    {
      const char *slash;

      if (g_ascii_strncasecmp (h->target, "http://", 7) != 0)
        return FALSE;
      rest = h->target + 7;
      slash = strpbrk (rest, "/?#");
      authority = g_strndup (rest, slash != NULL ? (gsize) (slash - rest) : strlen (rest));
      if (slash == NULL)
        c->path = g_strdup ("/");
      else if (*slash == '/')
        c->path = g_strdup (slash);
      else if (*slash == '?')
        c->path = g_strconcat ("/", slash, NULL);
      else
        c->path = g_strdup ("/");
      /* a fragment never goes on the wire */
      {
        char *hash = strchr (c->path, '#');

        if (hash != NULL)
          *hash = '\0';
      }
    }
  if (*authority == '\0' || strchr (authority, '@') != NULL)
    return FALSE;
  /* the port defaults to 80 only when the authority has no colon at all
   * (after the closing bracket of an IPv6 literal) */
  {
    const char *after = authority[0] == '[' ? strchr (authority, ']') : authority;

    if (after == NULL)
      return FALSE;
    if (strchr (after, ':') == NULL)
      raw = g_strconcat ("tcp:", authority, ":80", NULL);
    else
      raw = g_strconcat ("tcp:", authority, NULL);
  }
  if (!sbx_netrules_parse_target (raw, &c->host, &c->port, &c->literal, NULL))
    return FALSE;
  {
    g_autofree char *hp = sbx_netrules_join_host_port (c->host, c->port);

    c->target = g_strconcat ("tcp:", hp, NULL);
  }
  return TRUE;
}

/* Under self->lock: whether @e may reach c->target (the first denial is
 * recorded otherwise); on TRUE the connection joins @e. */
static gboolean
admit_target (Conn    *c,
              Exec    *e,
              gboolean parsed)
{
  if (!parsed)
    {
      if (e->denial == NULL)
        e->denial = g_strdup (SBX_NETRULES_UNPARSEABLE_TARGET
                              " (the request names no http:// URL or CONNECT authority)");
      return FALSE;
    }
  if (e->all || g_hash_table_contains (e->targets, c->target))
    {
      /* a non-public literal needs the approval to name it */
      c->named = g_hash_table_contains (e->targets, c->target);
      c->exec = e;
      g_ptr_array_add (e->conns, conn_ref (c));
      return TRUE;
    }
  if (e->denial == NULL)
    e->denial = g_strdup_printf ("%s (not approved for this execution)", c->target);
  return FALSE;
}

/* A forwarder's connection (sbx-egress-forward.c): a CONNECT of the
 * listener's execution to the listener's target, with no HTTP on the
 * client side; the same admission, dial and relay as a CONNECT. */
static void
forward_accepted (Conn       *c,
                  const char *target)
{
  SbxEgressProxy *self = c->proxy;
  gboolean allowed = FALSE;
  Exec *e;

  c->transparent = TRUE;
  c->is_connect = TRUE;
  if (sbx_netrules_parse_target (target, &c->host, &c->port, &c->literal, NULL))
    {
      g_autofree char *hp = sbx_netrules_join_host_port (c->host, c->port);

      c->target = g_strconcat ("tcp:", hp, NULL);
    }
  g_mutex_lock (&self->lock);
  e = c->bound_exec != NULL && !self->closing ? g_hash_table_lookup (self->execs, c->bound_exec) : NULL;
  if (e != NULL)
    allowed = admit_target (c, e, c->target != NULL);
  g_mutex_unlock (&self->lock);
  if (!allowed)
    {
      conn_close (c);
      return;
    }
  dial (c);
}

static void
handle_request (Conn *c)
{
  SbxEgressProxy *self = c->proxy;
  SbxHttpHead *h = c->head;
  g_autofree char *id = NULL;
  g_autofree char *credential = NULL;
  g_autofree char *hash = NULL;
  gboolean authenticated = FALSE, allowed = FALSE, parsed;
  const char *te, *cl;
  Exec *e;

  if (parse_proxy_authorization (sbx_http_head_get (h, "Proxy-Authorization", NULL), &id, &credential))
    hash = sha256_hex (credential);
  if (credential != NULL)
    memset (credential, 0, strlen (credential));

  parsed = request_target (c);

  g_mutex_lock (&self->lock);
  e = id != NULL && !self->closing ? g_hash_table_lookup (self->execs, id) : NULL;
  /* A listener that lives in one execution's sandbox serves that execution
   * only: another execution's valid credential is refused there as if it
   * were wrong. */
  if (e != NULL && c->bound_exec != NULL && strcmp (c->bound_exec, e->id) != 0)
    e = NULL;
  if (e != NULL && sbx_netrules_secret_equal (hash, e->hash))
    {
      authenticated = TRUE;
      allowed = admit_target (c, e, parsed);
    }
  g_mutex_unlock (&self->lock);

  if (!authenticated)
    {
      respond_error (c, 407, "Proxy Authentication Required", "proxy authentication required");
      return;
    }
  if (!allowed)
    {
      respond_error (c, 403, "Forbidden", "network target denied");
      return;
    }

  if (!c->is_connect)
    {
      guint64 length = 0;

      te = sbx_http_head_get (h, "Transfer-Encoding", NULL);
      cl = sbx_http_head_get (h, "Content-Length", NULL);
      if (te != NULL)
        {
          /* no chunked request bodies: refusing is closed, guessing is not */
          respond_error (c, 411, "Length Required", "request bodies need Content-Length");
          return;
        }
      if (cl != NULL)
        {
          if (*cl == '\0' || strlen (cl) > 18 || strspn (cl, "0123456789") != strlen (cl))
            {
              respond_error (c, 400, "Bad Request", "invalid Content-Length");
              return;
            }
          length = g_ascii_strtoull (cl, NULL, 10);
        }
      c->body_length = length;
    }
  dial (c);
}

static void
head_read_done (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(Conn) c = user_data;
  g_autoptr(GError) error = NULL;
  gssize n = g_input_stream_read_finish (G_INPUT_STREAM (source), result, &error);

  if (c->closed)
    return;
  if (n <= 0)
    {
      conn_close (c);
      return;
    }
  c->last_activity = now_us ();
  g_byte_array_append (c->buf, c->chunk, (guint) n);
  conn_read_head (c);
}

static void
conn_read_head (Conn *c)
{
  const char *why = NULL;
  SbxHttpParse r = SBX_HTTP_PARSE_INCOMPLETE;

  if (c->buf->len > 0)
    r = sbx_http_head_parse ((const char *) c->buf->data, c->buf->len, c->proxy->limits.max_head_bytes,
                             FALSE, &c->head, &why);
  switch (r)
    {
    case SBX_HTTP_PARSE_OK:
      handle_request (c);
      return;
    case SBX_HTTP_PARSE_TOO_LARGE:
      respond_error (c, 431, "Request Header Fields Too Large", "request head too large");
      return;
    case SBX_HTTP_PARSE_INVALID:
      respond_error (c, 400, "Bad Request", "malformed request");
      return;
    case SBX_HTTP_PARSE_INCOMPLETE:
      break;
    default:
      conn_close (c);
      return;
    }
  g_input_stream_read_async (g_io_stream_get_input_stream (G_IO_STREAM (c->client)), c->chunk,
                             sizeof c->chunk, G_PRIORITY_DEFAULT, c->cancellable, head_read_done, conn_ref (c));
}

/* ------------------------------------------------------------------------- */
/* Accepting, ticking, stopping                                               */
/* ------------------------------------------------------------------------- */

static void listener_accept (Listener *l);

static void
listener_free (Listener *l)
{
  g_socket_listener_close (l->listener);
  g_object_unref (l->listener);
  g_object_unref (l->cancellable);
  g_atomic_int_add (&l->proxy->live_listeners, -1);
  g_free (l->exec_id);
  g_free (l->forward_target);
  g_free (l);
}

static gboolean
accept_retry (gpointer data)
{
  listener_accept (data);
  return G_SOURCE_REMOVE;
}

static void
accept_done (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  Listener *l = user_data;
  SbxEgressProxy *self = l->proxy;
  g_autoptr(GError) error = NULL;
  GSocketConnection *connection = g_socket_listener_accept_finish (G_SOCKET_LISTENER (source), result,
                                                                   NULL, &error);
  Conn *c;
  gboolean closing;

  g_mutex_lock (&self->lock);
  closing = self->closing;
  g_mutex_unlock (&self->lock);

  if (connection == NULL)
    {
      if (closing || g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) ||
          g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CLOSED))
        {
          listener_free (l);
          return;
        }
      /* EMFILE and friends: back off instead of spinning */
      {
        GSource *retry = g_timeout_source_new (50);

        g_source_set_callback (retry, accept_retry, l, NULL);
        g_source_attach (retry, self->context);
        g_source_unref (retry);
      }
      return;
    }
  if (closing)
    {
      g_io_stream_close (G_IO_STREAM (connection), NULL, NULL);
      g_object_unref (connection);
      listener_free (l);
      return;
    }

  c = g_new0 (Conn, 1);
  g_atomic_ref_count_init (&c->ref);
  g_atomic_int_inc (&self->live_conns);
  c->proxy = self;
  c->client = connection;
  c->bound_exec = g_strdup (l->exec_id);
  c->cancellable = g_cancellable_new ();
  c->buf = g_byte_array_new ();
  c->ubuf = g_byte_array_new ();
  c->up.pipe_r = c->up.pipe_w = c->down.pipe_r = c->down.pipe_w = -1;
  c->last_activity = now_us ();
  c->head_deadline = c->last_activity + (gint64) self->limits.head_timeout_ms * 1000;
  set_nodelay (connection);
  g_mutex_lock (&self->lock);
  g_hash_table_add (self->conns, c);   /* the table owns the first ref */
  g_mutex_unlock (&self->lock);
  if (l->forward_target != NULL)
    forward_accepted (c, l->forward_target);
  else
    conn_read_head (c);

  listener_accept (l);
}

static void
listener_accept (Listener *l)
{
  g_socket_listener_accept_async (l->listener, l->cancellable, accept_done, l);
}

/* Closes connections past their head deadline or idle too long. */
static gboolean
tick (gpointer data)
{
  SbxEgressProxy *self = data;
  g_autoptr(GPtrArray) expired = g_ptr_array_new_with_free_func ((GDestroyNotify) conn_unref);
  gint64 now = now_us ();
  gint64 idle = (gint64) self->limits.idle_timeout_ms * 1000;
  GHashTableIter iter;
  gpointer key;

  g_mutex_lock (&self->lock);
  g_hash_table_iter_init (&iter, self->conns);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    {
      Conn *c = key;

      if ((c->head_deadline != 0 && now > c->head_deadline) || now - c->last_activity > idle)
        g_ptr_array_add (expired, conn_ref (c));
    }
  g_mutex_unlock (&self->lock);
  for (guint i = 0; i < expired->len; i++)
    conn_close (expired->pdata[i]);
  return G_SOURCE_CONTINUE;
}

static void
restart_tick (SbxEgressProxy *self)
{
  guint interval = MIN (self->limits.head_timeout_ms, self->limits.idle_timeout_ms) / 4;

  if (self->tick != NULL)
    {
      g_source_destroy (self->tick);
      g_source_unref (self->tick);
    }
  self->tick = g_timeout_source_new (CLAMP (interval, 10, 1000));
  g_source_set_callback (self->tick, tick, self, NULL);
  g_source_attach (self->tick, self->context);
}

static gpointer
proxy_thread (gpointer data)
{
  SbxEgressProxy *self = data;
  gint64 give_up;

  g_main_context_push_thread_default (self->context);
  g_main_loop_run (self->loop);
  /* Drain: cancelled operations still owe their callbacks (and refs). */
  give_up = now_us () + 10 * G_USEC_PER_SEC;
  while ((g_atomic_int_get (&self->live_conns) > 0 || g_atomic_int_get (&self->live_listeners) > 0) &&
         now_us () < give_up)
    {
      if (!g_main_context_iteration (self->context, FALSE))
        g_usleep (1000);
    }
  g_main_context_pop_thread_default (self->context);
  return NULL;
}

static gboolean
stop_in_thread (gpointer data)
{
  SbxEgressProxy *self = data;
  g_autoptr(GPtrArray) all = g_ptr_array_new_with_free_func ((GDestroyNotify) conn_unref);
  GHashTableIter iter;
  gpointer key;

  g_mutex_lock (&self->lock);
  g_hash_table_iter_init (&iter, self->conns);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    g_ptr_array_add (all, conn_ref (key));
  g_mutex_unlock (&self->lock);
  for (guint i = 0; i < all->len; i++)
    conn_close (all->pdata[i]);
  for (guint i = 0; i < self->listeners->len; i++)
    {
      Listener *l = self->listeners->pdata[i];

      g_cancellable_cancel (l->cancellable);
      g_socket_listener_close (l->listener);
    }
  g_ptr_array_set_size (self->listeners, 0);
  if (self->tick != NULL)
    {
      g_source_destroy (self->tick);
      g_clear_pointer (&self->tick, g_source_unref);
    }
  g_main_loop_quit (self->loop);
  return G_SOURCE_REMOVE;
}

/* ------------------------------------------------------------------------- */
/* Public functions                                                           */
/* ------------------------------------------------------------------------- */

SbxEgressProxy *
sbx_egress_proxy_new (const char  *config,
                      GError     **error)
{
  g_autofree char *scheme = NULL;
  g_autofree char *user = NULL;
  char *password = NULL;
  SbxEgressProxy *self;
  gboolean trusted = FALSE;
  const char *url = config;

  g_return_val_if_fail (config != NULL, NULL);

  self = g_new0 (SbxEgressProxy, 1);
  g_mutex_init (&self->lock);
  self->execs = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) exec_free);
  self->conns = g_hash_table_new (g_direct_hash, g_direct_equal);
  self->limits = (SbxEgressProxyLimits) {
    .max_head_bytes = 64 * 1024,
    .head_timeout_ms = 10000,
    .idle_timeout_ms = 30000,
    .upstream_timeout_ms = 10000,
  };

  if (strcmp (config, "direct") == 0)
    {
      self->direct = TRUE;
      self->address_guarantee = TRUE;
      self->fingerprint = sbx_netrules_route_fingerprint ("direct", "", TRUE);
    }
  else
    {
      if (g_str_has_prefix (config, "trusted-address-guarantee "))
        {
          trusted = TRUE;
          url = config + strlen ("trusted-address-guarantee ");
        }
      if (!sbx_netrules_parse_upstream_url (url, &scheme, &self->up_host, &self->up_port, &user, &password,
                                            error))
        {
          sbx_egress_proxy_free (self);
          return NULL;
        }
      self->tls = strcmp (scheme, "https") == 0;
      self->up_authority = sbx_netrules_join_host_port (self->up_host, self->up_port);
      self->address_guarantee = trusted;
      self->fingerprint = sbx_netrules_route_fingerprint (scheme, self->up_authority, trusted);
      if (user != NULL)
        {
          g_autofree char *pair = g_strconcat (user, ":", password != NULL ? password : "", NULL);
          g_autofree char *b64 = g_base64_encode ((const guchar *) pair, strlen (pair));

          self->up_auth = g_strconcat ("Basic ", b64, NULL);
          memset (pair, 0, strlen (pair));
          memset (b64, 0, strlen (b64));
          memset (user, 0, strlen (user));
        }
      wipe_free (password);
    }

  self->resolver = g_resolver_get_default ();
  self->listeners = g_ptr_array_new ();
  self->context = g_main_context_new ();
  self->loop = g_main_loop_new (self->context, FALSE);
  restart_tick (self);
  self->thread = g_thread_new ("sbx-egress-http", proxy_thread, self);
  return self;
}

void
sbx_egress_proxy_free (SbxEgressProxy *self)
{
  if (self == NULL)
    return;
  if (self->thread != NULL)
    {
      g_mutex_lock (&self->lock);
      self->closing = TRUE;
      g_mutex_unlock (&self->lock);
      g_main_context_invoke (self->context, stop_in_thread, self);
      g_thread_join (self->thread);
    }
  g_hash_table_unref (self->execs);
  g_hash_table_unref (self->conns);
  g_free (self->up_host);
  g_free (self->up_authority);
  wipe_free (self->up_auth);
  g_free (self->fingerprint);
  g_clear_object (&self->resolver);
  if (self->listeners != NULL)
    g_ptr_array_unref (self->listeners);
  if (self->tick != NULL)
    {
      g_source_destroy (self->tick);
      g_source_unref (self->tick);
    }
  g_clear_pointer (&self->loop, g_main_loop_unref);
  g_clear_pointer (&self->context, g_main_context_unref);
  g_mutex_clear (&self->lock);
  g_free (self);
}

const char *
sbx_egress_proxy_get_fingerprint (SbxEgressProxy *self)
{
  return self->fingerprint;
}

gboolean
sbx_egress_proxy_get_address_guarantee (SbxEgressProxy *self)
{
  return self->address_guarantee;
}

static gboolean
valid_execution_id (const char *id)
{
  if (id == NULL || *id == '\0' || strlen (id) > 1024 || !g_utf8_validate (id, -1, NULL))
    return FALSE;
  for (const char *p = id; *p != '\0'; p++)
    if ((guchar) *p < 0x20 || *p == 0x7f)
      return FALSE;
  return TRUE;
}

char *
sbx_egress_proxy_authorize (SbxEgressProxy    *self,
                            const char        *execution_id,
                            const char *const *targets,
                            GError           **error)
{
  guint8 random[32];
  g_autofree char *b64 = NULL;
  g_autofree char *hash = NULL;
  Exec *e;
  gsize len;

  if (!valid_execution_id (execution_id))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "egress authorization: invalid execution id (empty, too long, not UTF-8 or with "
                   "control characters)");
      return NULL;
    }
  if (targets != NULL && targets[0] == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "egress authorization of “%s”: empty target list (pass NULL for every target)", execution_id);
      return NULL;
    }

  e = g_new0 (Exec, 1);
  e->id = g_strdup (execution_id);
  e->all = targets == NULL;
  e->targets = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  e->conns = g_ptr_array_new_with_free_func ((GDestroyNotify) conn_unref);
  for (gsize i = 0; targets != NULL && targets[i] != NULL; i++)
    {
      g_autoptr(GError) local = NULL;
      g_autofree char *canonical = sbx_netrules_canonical_target (targets[i], &local);

      /* defence in depth: the host normalizes; a target that is not in
       * canonical form means the two sides disagree, so refuse it */
      if (canonical == NULL || strcmp (canonical, targets[i]) != 0)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "egress authorization of “%s”: target “%s” is not a canonical tcp:HOST:PORT%s%s",
                       execution_id, targets[i], local != NULL ? ": " : "", local != NULL ? local->message : "");
          exec_free (e);
          return NULL;
        }
      g_hash_table_add (e->targets, g_steal_pointer (&canonical));
    }

  if (getrandom (random, sizeof random, 0) != (ssize_t) sizeof random)
    {
      int saved = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "egress authorization: getrandom: %s",
                   g_strerror (saved));
      exec_free (e);
      return NULL;
    }
  b64 = g_base64_encode (random, sizeof random);
  memset (random, 0, sizeof random);
  /* base64url without padding */
  len = strlen (b64);
  while (len > 0 && b64[len - 1] == '=')
    b64[--len] = '\0';
  for (char *p = b64; *p != '\0'; p++)
    *p = *p == '+' ? '-' : *p == '/' ? '_' : *p;
  hash = sha256_hex (b64);
  memcpy (e->hash, hash, 64);
  e->hash[64] = '\0';

  g_mutex_lock (&self->lock);
  if (self->closing)
    {
      g_mutex_unlock (&self->lock);
      exec_free (e);
      wipe_free (g_steal_pointer (&b64));
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_CLOSED, "egress authorization of “%s”: the route is closing",
                   execution_id);
      return NULL;
    }
  if (g_hash_table_contains (self->execs, execution_id))
    {
      g_mutex_unlock (&self->lock);
      exec_free (e);
      wipe_free (g_steal_pointer (&b64));
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_EXISTS,
                   "egress authorization: execution “%s” is already authorized", execution_id);
      return NULL;
    }
  g_hash_table_insert (self->execs, e->id, e);
  g_mutex_unlock (&self->lock);
  return g_steal_pointer (&b64);
}

typedef struct
{
  SbxEgressProxy *self;
  char           *exec_id;
  GPtrArray      *conns;
} CloseBatch;

static void
close_batch_free (CloseBatch *b)
{
  g_free (b->exec_id);
  g_ptr_array_unref (b->conns);
  g_free (b);
}

/* Proxy thread: closes the execution's connections and the listeners that
 * serve only it (a listener keeps its sandbox's network namespace alive). */
static gboolean
close_batch (gpointer data)
{
  CloseBatch *b = data;
  GPtrArray *listeners = b->self->listeners;

  for (guint i = 0; i < b->conns->len; i++)
    conn_close (b->conns->pdata[i]);
  for (guint i = listeners->len; i-- > 0;)
    {
      Listener *l = listeners->pdata[i];

      if (l->exec_id != NULL && strcmp (l->exec_id, b->exec_id) == 0)
        {
          g_cancellable_cancel (l->cancellable);
          g_socket_listener_close (l->listener);
          g_ptr_array_remove_index_fast (listeners, i);
        }
    }
  return G_SOURCE_REMOVE;
}

gboolean
sbx_egress_proxy_revoke (SbxEgressProxy  *self,
                         const char      *execution_id,
                         char           **denial)
{
  GPtrArray *conns;
  CloseBatch *batch;
  Exec *e;

  if (denial != NULL)
    *denial = NULL;
  if (execution_id == NULL)
    return FALSE;

  g_mutex_lock (&self->lock);
  e = g_hash_table_lookup (self->execs, execution_id);
  if (e == NULL)
    {
      g_mutex_unlock (&self->lock);
      return FALSE;
    }
  g_hash_table_steal (self->execs, execution_id);
  conns = g_steal_pointer (&e->conns);
  e->conns = g_ptr_array_new_with_free_func ((GDestroyNotify) conn_unref);
  for (guint i = 0; i < conns->len; i++)
    {
      Conn *c = conns->pdata[i];

      c->exec = NULL;
      /* ends every pending operation of the connection now, from this
       * thread; the proxy thread then closes its sockets */
      g_cancellable_cancel (c->cancellable);
    }
  g_mutex_unlock (&self->lock);

  if (denial != NULL)
    *denial = g_steal_pointer (&e->denial);
  batch = g_new0 (CloseBatch, 1);
  batch->self = self;
  batch->exec_id = g_strdup (execution_id);
  batch->conns = conns;
  exec_free (e);
  g_main_context_invoke_full (self->context, G_PRIORITY_HIGH, close_batch, batch,
                              (GDestroyNotify) close_batch_free);
  return TRUE;
}

typedef struct
{
  SbxEgressProxy *self;
  GSocket        *socket;
  char           *exec_id;
  char           *forward_target;
} ServeOp;

static gboolean
serve_in_thread (gpointer data)
{
  ServeOp *op = data;
  SbxEgressProxy *self = op->self;
  Listener *l;
  gboolean closing;

  /* An execution's listener arriving after its revoke is closed at once. */
  g_mutex_lock (&self->lock);
  closing = self->closing || (op->exec_id != NULL && !g_hash_table_contains (self->execs, op->exec_id));
  g_mutex_unlock (&self->lock);

  l = g_new0 (Listener, 1);
  l->proxy = self;
  l->exec_id = g_steal_pointer (&op->exec_id);
  l->forward_target = g_steal_pointer (&op->forward_target);
  l->listener = g_socket_listener_new ();
  l->cancellable = g_cancellable_new ();
  g_atomic_int_inc (&self->live_listeners);
  if (closing || !g_socket_listener_add_socket (l->listener, op->socket, NULL, NULL))
    {
      g_socket_close (op->socket, NULL);
      listener_free (l);
    }
  else
    {
      g_ptr_array_add (self->listeners, l);
      listener_accept (l);
    }
  g_object_unref (op->socket);
  g_free (op->exec_id);
  g_free (op->forward_target);
  g_free (op);
  return G_SOURCE_REMOVE;
}

static gboolean serve_listener_fd (SbxEgressProxy *self, const char *execution_id, const char *forward_target,
                                   int fd, GError **error);

gboolean
sbx_egress_proxy_serve_fd (SbxEgressProxy  *self,
                           const char      *execution_id,
                           int              fd,
                           GError         **error)
{
  return serve_listener_fd (self, execution_id, NULL, fd, error);
}

gboolean
sbx_egress_proxy_serve_forward_fd (SbxEgressProxy  *self,
                                   const char      *execution_id,
                                   const char      *target,
                                   int              fd,
                                   GError         **error)
{
  g_return_val_if_fail (execution_id != NULL && target != NULL, FALSE);
  return serve_listener_fd (self, execution_id, target, fd, error);
}

/* A forwarder (@forward_target) listens on an address of the sandbox's own
 * network, which need not be a loopback address (an approved literal is
 * added to the sandbox's lo); the proxy's listener is on loopback. */
static gboolean
serve_listener_fd (SbxEgressProxy  *self,
                   const char      *execution_id,
                   const char      *forward_target,
                   int              fd,
                   GError         **error)
{
  g_autoptr(GSocket) socket = NULL;
  g_autoptr(GSocketAddress) local = NULL;
  int listening = 0;
  socklen_t optlen = sizeof listening;
  ServeOp *op;

  if (fd < 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "egress serve: no listening socket (fd %d)", fd);
      return FALSE;
    }
  if (getsockopt (fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &optlen) != 0 || !listening)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "egress serve: fd %d is not a listening socket", fd);
      close (fd);
      return FALSE;
    }
  socket = g_socket_new_from_fd (fd, error);
  if (socket == NULL)
    {
      close (fd);
      return FALSE;
    }
  local = g_socket_get_local_address (socket, NULL);
  if (g_socket_get_socket_type (socket) != G_SOCKET_TYPE_STREAM || local == NULL ||
      !G_IS_INET_SOCKET_ADDRESS (local) ||
      (forward_target == NULL &&
       !g_inet_address_get_is_loopback (g_inet_socket_address_get_address (G_INET_SOCKET_ADDRESS (local)))))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "egress serve: fd %d must be a loopback TCP listener", fd);
      g_socket_close (socket, NULL);
      return FALSE;
    }
  g_socket_set_blocking (socket, FALSE);

  if (execution_id != NULL)
    {
      gboolean known;

      g_mutex_lock (&self->lock);
      known = g_hash_table_contains (self->execs, execution_id);
      g_mutex_unlock (&self->lock);
      if (!known)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                       "egress serve: execution “%s” is not authorized", execution_id);
          g_socket_close (socket, NULL);
          return FALSE;
        }
    }
  op = g_new0 (ServeOp, 1);
  op->self = self;
  op->exec_id = g_strdup (execution_id);
  op->forward_target = g_strdup (forward_target);
  op->socket = g_steal_pointer (&socket);
  g_main_context_invoke (self->context, serve_in_thread, op);
  return TRUE;
}

typedef struct
{
  SbxEgressProxy      *self;
  SbxEgressProxyLimits limits;
  GResolver           *resolver;
  gboolean             set_dialer;
  SbxEgressDialer      dialer;
  gpointer             dialer_data;
  GMutex               lock;
  GCond                cond;
  gboolean             done;
} SetOp;

static gboolean
set_in_thread (gpointer data)
{
  SetOp *op = data;

  if (op->set_dialer)
    {
      op->self->dialer = op->dialer;
      op->self->dialer_data = op->dialer_data;
    }
  else if (op->resolver != NULL)
    g_set_object (&op->self->resolver, op->resolver);
  else
    {
      op->self->limits = op->limits;
      restart_tick (op->self);
    }
  g_mutex_lock (&op->lock);
  op->done = TRUE;
  g_cond_signal (&op->cond);
  g_mutex_unlock (&op->lock);
  return G_SOURCE_REMOVE;
}

static void
run_in_thread_sync (SetOp *op)
{
  g_mutex_init (&op->lock);
  g_cond_init (&op->cond);
  g_main_context_invoke (op->self->context, set_in_thread, op);
  g_mutex_lock (&op->lock);
  while (!op->done)
    g_cond_wait (&op->cond, &op->lock);
  g_mutex_unlock (&op->lock);
  g_mutex_clear (&op->lock);
  g_cond_clear (&op->cond);
}

void
sbx_egress_proxy_set_limits (SbxEgressProxy             *self,
                             const SbxEgressProxyLimits *limits)
{
  SetOp op = { .self = self, .limits = *limits };

  run_in_thread_sync (&op);
}

void
sbx_egress_proxy_set_resolver (SbxEgressProxy *self,
                               GResolver      *resolver)
{
  SetOp op = { .self = self, .resolver = resolver };

  g_return_if_fail (G_IS_RESOLVER (resolver));
  run_in_thread_sync (&op);
}

void
sbx_egress_proxy_set_dialer (SbxEgressProxy  *self,
                             SbxEgressDialer  dialer,
                             gpointer         user_data)
{
  SetOp op = { .self = self, .set_dialer = TRUE, .dialer = dialer, .dialer_data = user_data };

  run_in_thread_sync (&op);
}

guint
sbx_egress_proxy_get_n_connections (SbxEgressProxy *self)
{
  guint n;

  g_mutex_lock (&self->lock);
  n = g_hash_table_size (self->conns);
  g_mutex_unlock (&self->lock);
  return n;
}

guint
sbx_egress_proxy_get_n_dials (SbxEgressProxy *self)
{
  return (guint) g_atomic_int_get (&self->n_dials);
}
