/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Byte relay of the http-connect route: CONNECT tunnels (the dial, the
 * upstream CONNECT handshake on an upstream route, the 200, then splice(2)
 * with half-close), forward bodies through a buffer, and the raw tunnels of
 * sbx-egress-tunnel.h (tunnels whose client speaks no HTTP; their listeners
 * are in sbx-egress-listen.c).  Uses the dial and the connection.
 */
#include "sbx-egress-proxy-private.h"
#include "sbx-egress-tunnel.h"

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
      sbx_egress_conn_close (c);
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
      sbx_egress_conn_close (c);
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
  sbx_egress_conn_ref (c);
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
  sbx_egress_conn_ref (c);
  g_input_stream_read_async (p->in, p->buffer, want, G_PRIORITY_DEFAULT, c->cancellable, pump_read_done, p);
}

void
sbx_egress_pump_start (Conn                *c,
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
 * more wake-ups).  Both directions of a tunnel share one watch of its two
 * sockets whose events follow what each direction waits for (input when
 * its pipe is empty, output while it holds bytes), so a wake-up costs no
 * allocation.  Same rules as the GIO pump: EOF becomes done(), any error
 * closes the connection, every move counts as activity. */
#define SPLICE_CHUNK (1 << 20)
#define SPLICE_ROUNDS 16   /* per direction and wake-up, so one busy tunnel cannot starve the others */

/* Relay pipes are pooled per proxy and held only by tunnels that move bytes:
 * an idle tunnel holds none (a pipe is two descriptors and counts against
 * the user's pipe-user-pages-soft, which the sandboxed programs of the same
 * user share), and a pooled pipe saves the pipe2() of the next tunnel.
 * Pooled pipes are empty and of the default size; proxy thread only. */
#define PIPE_DEFAULT_SIZE (64 * 1024)
#define PIPE_POOL_MAX 32

static gboolean
pipe_take (SbxEgressProxy *self,
           Pump           *p)
{
  int fds[2];

  if (self->pipe_pool->len > 0)
    {
      SbxEgressPipe *last = &g_array_index (self->pipe_pool, SbxEgressPipe, self->pipe_pool->len - 1);

      fds[0] = last->r;
      fds[1] = last->w;
      g_array_set_size (self->pipe_pool, self->pipe_pool->len - 1);
      g_atomic_int_set (&self->n_pooled, (gint) self->pipe_pool->len);
    }
  else if (pipe2 (fds, O_CLOEXEC | O_NONBLOCK) != 0)
    return FALSE;
  p->pipe_r = fds[0];
  p->pipe_w = fds[1];
  p->grown = FALSE;
  return TRUE;
}

/* An empty pipe goes back to the pool (a grown one is closed: the pool
 * holds default-size pipes only); one holding bytes is closed with them. */
static void
pipe_give (SbxEgressProxy *self,
           Pump           *p)
{
  if (p->pipe_r < 0)
    return;
  if (p->in_pipe == 0 && !p->grown && self->pipe_pool->len < PIPE_POOL_MAX)
    {
      SbxEgressPipe pair = { p->pipe_r, p->pipe_w };

      g_array_append_val (self->pipe_pool, pair);
      g_atomic_int_set (&self->n_pooled, (gint) self->pipe_pool->len);
    }
  else
    {
      close (p->pipe_r);
      close (p->pipe_w);
    }
  p->pipe_r = p->pipe_w = -1;
  p->in_pipe = 0;
}

void
sbx_egress_pipe_pool_free (SbxEgressProxy *self)
{
  if (self->pipe_pool == NULL)
    return;
  for (guint i = 0; i < self->pipe_pool->len; i++)
    {
      close (g_array_index (self->pipe_pool, SbxEgressPipe, i).r);
      close (g_array_index (self->pipe_pool, SbxEgressPipe, i).w);
    }
  g_clear_pointer (&self->pipe_pool, g_array_unref);
}

void
sbx_egress_relay_idle (Conn *c)
{
  if (c->relay == NULL || c->closed)
    return;
  if (c->up.in_pipe == 0)
    pipe_give (c->proxy, &c->up);
  if (c->down.in_pipe == 0)
    pipe_give (c->proxy, &c->down);
}

typedef struct
{
  GSource base;
  Conn   *conn;             /* (owned) */
} RelaySource;

/* Moves what it can in one direction.  FALSE when the connection closed. */
static gboolean
splice_move (Conn *c,
             Pump *p)
{
  for (int round = 0; round < SPLICE_ROUNDS; round++)
    {
      ssize_t n;

      if (p->in_pipe > 0)
        {
          n = splice (p->pipe_r, NULL, p->out_fd, NULL, p->in_pipe, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
          if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return TRUE;
          if (n <= 0)
            {
              sbx_egress_conn_close (c);
              return FALSE;
            }
          p->in_pipe -= (gsize) n;
          c->last_activity = now_us ();
          continue;
        }
      if (p->pipe_r < 0 && !pipe_take (c->proxy, p))
        {
          /* out of descriptors: the tunnel cannot move bytes, and a
           * readable socket must not spin the loop */
          sbx_egress_conn_close (c);
          return FALSE;
        }
      n = splice (p->in_fd, NULL, p->pipe_w, NULL, SPLICE_CHUNK, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
      if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return TRUE;
      /* a direction that fills the default pipe in one move is a bulk
       * transfer: offer it a bigger pipe (once; refusal, e.g. over
       * pipe-user-pages-soft, is fine) */
      if (n >= PIPE_DEFAULT_SIZE && !p->grown)
        {
          p->grown = TRUE;
          (void) fcntl (p->pipe_w, F_SETPIPE_SZ, SPLICE_CHUNK);
        }
      if (n < 0)
        {
          sbx_egress_conn_close (c);
          return FALSE;
        }
      if (n == 0)
        {
          p->finished = TRUE;
          pipe_give (c->proxy, p);
          p->done (c);
          return !c->closed;
        }
      p->in_pipe += (gsize) n;
      c->last_activity = now_us ();
    }
  return TRUE;
}

static GIOCondition
wanted (Pump *reader,
        Pump *writer)
{
  GIOCondition events = 0;

  if (reader->spliced && !reader->finished && reader->in_pipe == 0)
    events |= G_IO_IN;
  if (writer->spliced && !writer->finished && writer->in_pipe > 0)
    events |= G_IO_OUT;
  return events;
}

/* A socket nothing waits on leaves the watch: poll() reports a hang-up
 * whatever the events, and a hung-up socket whose reader is blocked on
 * output would otherwise wake the loop without end. */
static void
watch_fd (GSource      *source,
          gpointer     *tag,
          int           fd,
          GIOCondition  events)
{
  if (events == 0)
    {
      if (*tag != NULL)
        g_source_remove_unix_fd (source, *tag);
      *tag = NULL;
    }
  else if (*tag == NULL)
    *tag = g_source_add_unix_fd (source, fd, events);
  else
    g_source_modify_unix_fd (source, *tag, events);
}

static void
relay_update (Conn *c)
{
  watch_fd (c->relay, &c->relay_client_tag, c->up.in_fd, wanted (&c->up, &c->down));
  watch_fd (c->relay, &c->relay_server_tag, c->down.in_fd, wanted (&c->down, &c->up));
}

static gboolean
relay_dispatch (GSource     *source,
                GSourceFunc  callback,
                gpointer     user_data)
{
  Conn *c = ((RelaySource *) source)->conn;
  GIOCondition client = c->relay_client_tag != NULL ? g_source_query_unix_fd (source, c->relay_client_tag) : 0;
  GIOCondition server = c->relay_server_tag != NULL ? g_source_query_unix_fd (source, c->relay_server_tag) : 0;
  GIOCondition any = G_IO_IN | G_IO_OUT | G_IO_HUP | G_IO_ERR;

  if (c->closed)
    return G_SOURCE_REMOVE;
  /* a hang-up or an error is found by the splice that touches the socket */
  if (!c->up.finished && ((client & (any & ~G_IO_OUT)) != 0 || (server & (any & ~G_IO_IN)) != 0) &&
      !splice_move (c, &c->up))
    return G_SOURCE_REMOVE;
  if (!c->down.finished && ((server & (any & ~G_IO_OUT)) != 0 || (client & (any & ~G_IO_IN)) != 0) &&
      !splice_move (c, &c->down))
    return G_SOURCE_REMOVE;
  if (c->closed)
    return G_SOURCE_REMOVE;
  relay_update (c);
  return G_SOURCE_CONTINUE;
}

static void
relay_finalize (GSource *source)
{
  g_clear_pointer (&((RelaySource *) source)->conn, sbx_egress_conn_unref);
}

static GSourceFuncs relay_funcs = {
  .dispatch = relay_dispatch,
  .finalize = relay_finalize,
};

/* The connection's release while the relay runs: stops the watch and gives
 * the pipes back. */
static void
relay_stop (Conn *c)
{
  if (c->relay != NULL)
    {
      GSource *source = g_steal_pointer (&c->relay);

      c->relay_client_tag = c->relay_server_tag = NULL;
      g_source_destroy (source);
      g_source_unref (source);
      pipe_give (c->proxy, &c->up);
      pipe_give (c->proxy, &c->down);
    }
}

static void
splice_init (Conn              *c,
             Pump              *p,
             GSocketConnection *from,
             GSocketConnection *to,
             void             (*done) (Conn *c))
{
  p->conn = c;
  p->in_socket = g_socket_connection_get_socket (from);
  p->out_socket = g_socket_connection_get_socket (to);
  p->in_fd = g_socket_get_fd (p->in_socket);
  p->out_fd = g_socket_get_fd (p->out_socket);
  p->remaining = G_MAXUINT64;
  p->done = done;
  p->finished = FALSE;
  p->spliced = TRUE;
}

/* Starts the splice relay of both directions (pipes are taken when bytes
 * arrive). */
static void
splice_start (Conn  *c,
              void (*done) (Conn *c))
{
  RelaySource *source;

  splice_init (c, &c->up, c->client, c->server, done);
  splice_init (c, &c->down, c->server, c->client, done);
  source = (RelaySource *) g_source_new (&relay_funcs, sizeof (RelaySource));
  source->conn = sbx_egress_conn_ref (c);
  g_source_set_name (&source->base, "sbx-egress-relay");
  c->relay = &source->base;
  c->release = relay_stop;
  relay_update (c);
  g_source_attach (c->relay, c->proxy->context);
}

/* ------------------------------------------------------------------------- */
/* Tunnels                                                                    */
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
    sbx_egress_conn_close (c);
}

static void
tunnel_start (Conn *c)
{
  /* bytes the client sent after the CONNECT head go first (they were read
   * with the head) */
  gsize head_length = c->head != NULL ? c->head->head_length : 0;
  gsize leftover = c->buf->len - head_length;

  c->head_deadline = 0;
  if (leftover > 0)
    {
      GBytes *bytes = g_bytes_new (c->buf->data + head_length, leftover);

      g_byte_array_set_size (c->buf, head_length);
      sbx_egress_write_then (c, sbx_egress_server_out (c), bytes, tunnel_start);
      return;
    }
  splice_start (c, tunnel_direction_done);
}

static void
tunnel_established (Conn *c)
{
  /* upstream bytes read beyond its 200 head go to the client first */
  if (c->ubuf->len > 0)
    {
      GBytes *bytes = g_bytes_new (c->ubuf->data, c->ubuf->len);

      g_byte_array_set_size (c->ubuf, 0);
      sbx_egress_write_then (c, sbx_egress_client_out (c), bytes, tunnel_established);
      return;
    }
  tunnel_start (c);
}

static void
send_established (Conn *c)
{
  static const char ok[] = "HTTP/1.1 200 Connection Established\r\n\r\n";

  /* a raw tunnel's client is told nothing: the relay is the answer */
  if (c->raw)
    {
      tunnel_established (c);
      return;
    }
  /* the 39 bytes fit an empty socket buffer: sent now, without a task and
   * a trip through the loop; anything short of that takes the async path */
  {
    GSocket *socket = g_socket_connection_get_socket (c->client);
    gssize n = g_socket_send_with_blocking (socket, ok, sizeof ok - 1, FALSE, NULL, NULL);

    if (n == (gssize) sizeof ok - 1)
      {
        c->last_activity = now_us ();
        tunnel_established (c);
        return;
      }
    if (n > 0)
      {
        sbx_egress_write_then (c, sbx_egress_client_out (c), g_bytes_new_static (ok + n, sizeof ok - 1 - (gsize) n),
                               tunnel_established);
        return;
      }
  }
  sbx_egress_write_then (c, sbx_egress_client_out (c), g_bytes_new_static (ok, sizeof ok - 1), tunnel_established);
}

/* On an upstream route the dial reached the upstream proxy: a CONNECT with
 * the route's credentials asks it for the target. */
static void
upstream_connect_reply (Conn        *c,
                        SbxHttpHead *resp)
{
  if (resp == NULL || resp->status / 100 != 2)
    {
      /* the upstream refused: never a direct attempt.  Its 407 means the
       * route's credentials are wrong: the client sees 407 too. */
      if (resp != NULL && resp->status == 407)
        sbx_egress_respond_error (c, 407, "Proxy Authentication Required", "upstream proxy authentication failed");
      else
        sbx_egress_respond_error (c, 502, "Bad Gateway", "upstream unavailable");
      return;
    }
  g_byte_array_remove_range (c->ubuf, 0, (guint) resp->head_length);
  c->head_deadline = 0;
  send_established (c);
}

static void
upstream_await_reply (Conn *c)
{
  sbx_egress_server_head_read (c, upstream_connect_reply);
}

static void
upstream_handshake (Conn *c)
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
  sbx_egress_write_then (c, sbx_egress_server_out (c), g_string_free_to_bytes (out), upstream_await_reply);
}

/* What follows the dial of a tunnel: on the direct route the server is the
 * target itself. */
static void
tunnel_connected (Conn *c)
{
  if (c->proxy->direct)
    send_established (c);
  else
    upstream_handshake (c);
}

void
sbx_egress_tunnel_connect (Conn *c)
{
  sbx_egress_dial (c, tunnel_connected);
}

/* ------------------------------------------------------------------------- */
/* Raw tunnels (sbx-egress-tunnel.h)                                          */
/* ------------------------------------------------------------------------- */

void
sbx_egress_tunnel_begin (Conn       *c,
                         const char *exec_id,
                         const char *target)
{
  SbxEgressProxy *self = c->proxy;
  gboolean allowed = FALSE;
  Exec *e;

  c->raw = TRUE;
  c->is_connect = TRUE;
  if (exec_id == NULL || !sbx_netrules_parse_target (target, &c->host, &c->port, &c->literal, NULL))
    {
      sbx_egress_conn_close (c);
      return;
    }
  c->target = g_strdup (target);
  g_mutex_lock (&self->lock);
  e = !self->closing ? g_hash_table_lookup (self->execs, exec_id) : NULL;
  if (e != NULL && (e->all || g_hash_table_contains (e->targets, c->target)))
    {
      allowed = TRUE;
      /* a non-public literal needs the approval to name it */
      c->named = g_hash_table_contains (e->targets, c->target);
      c->exec = e;
      g_ptr_array_add (e->conns, sbx_egress_conn_ref (c));
    }
  else if (e != NULL)
    sbx_egress_exec_deny_locked (e, SBX_ABI_DENIAL_CONNECT, SBX_ABI_DENIAL_APPROVABLE, c->target,
                                 "forwarder", "not approved for this execution");
  g_mutex_unlock (&self->lock);
  if (!allowed)
    {
      sbx_egress_conn_close (c);
      return;
    }
  sbx_egress_tunnel_connect (c);
}

typedef struct
{
  SbxEgressProxy *self;
  int             fd;
  char           *exec_id;
  char           *target;
} OpenOp;

static gboolean
open_in_thread (gpointer data)
{
  OpenOp *op = data;
  Conn *c = sbx_egress_conn_new (op->self, op->fd, op->exec_id);

  if (c != NULL)
    {
      sbx_egress_tunnel_begin (c, op->exec_id, op->target);
      sbx_egress_conn_unref (c);
    }
  g_free (op->exec_id);
  g_free (op->target);
  g_free (op);
  return G_SOURCE_REMOVE;
}

/* Checks what can be checked before handing over.  Takes @fd on failure. */
gboolean
sbx_egress_tunnel_check (SbxEgressProxy *proxy,
                         const char     *execution_id,
                         const char     *target,
                         int             fd,
                         GError        **error)
{
  g_autofree char *canonical = NULL;
  g_autoptr(GError) local = NULL;
  gboolean known;

  if (target != NULL)
    canonical = sbx_netrules_canonical_target (target, &local);
  if (canonical == NULL || strcmp (canonical, target) != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "egress tunnel: target “%s” is not a canonical tcp:HOST:PORT%s%s",
                   target != NULL ? target : "(null)", local != NULL ? ": " : "",
                   local != NULL ? local->message : "");
      if (fd >= 0)
        close (fd);
      return FALSE;
    }
  g_mutex_lock (&proxy->lock);
  known = execution_id != NULL && !proxy->closing && g_hash_table_contains (proxy->execs, execution_id);
  g_mutex_unlock (&proxy->lock);
  if (!known)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   "egress tunnel to %s: execution “%s” is not authorized (or the route is closing)", target,
                   execution_id != NULL ? execution_id : "(null)");
      if (fd >= 0)
        close (fd);
      return FALSE;
    }
  return TRUE;
}

gboolean
sbx_egress_tunnel_open (SbxEgressProxy *proxy,
                        const char     *execution_id,
                        const char     *target,
                        int             client_fd,
                        GError        **error)
{
  OpenOp *op;
  int type = 0;
  socklen_t len = sizeof type;

  if (client_fd < 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "egress tunnel: no client socket (fd %d)",
                   client_fd);
      return FALSE;
    }
  if (!sbx_egress_tunnel_check (proxy, execution_id, target, client_fd, error))
    return FALSE;
  if (getsockopt (client_fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM ||
      fcntl (client_fd, F_SETFL, fcntl (client_fd, F_GETFL) | O_NONBLOCK) != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "egress tunnel to %s: fd %d is not a stream socket", target, client_fd);
      close (client_fd);
      return FALSE;
    }
  op = g_new0 (OpenOp, 1);
  op->self = proxy;
  op->fd = client_fd;
  op->exec_id = g_strdup (execution_id);
  op->target = g_strdup (target);
  g_main_context_invoke (proxy->context, open_in_thread, op);
  return TRUE;
}
