#include "sbx-egress-proxy-private.h"

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
 * more wake-ups).  Same rules as the GIO pump: EOF becomes done(), any error
 * closes the connection, every move counts as activity. */
#define SPLICE_CHUNK (1 << 20)
#define SPLICE_ROUNDS 16   /* per wake-up, so one busy tunnel cannot starve the others */

static gboolean splice_ready (GSocket *socket, GIOCondition condition, gpointer data);

static void
splice_source_done (gpointer data)
{
  Pump *p = data;

  sbx_egress_conn_unref (p->conn);
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
  sbx_egress_conn_ref (c);
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
              sbx_egress_conn_close (c);
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
          sbx_egress_conn_close (c);
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
  gsize leftover = c->buf->len - c->head->head_length;

  c->head_deadline = 0;
  if (leftover > 0)
    {
      GBytes *bytes = g_bytes_new (c->buf->data + c->head->head_length, leftover);

      g_byte_array_set_size (c->buf, c->head->head_length);
      sbx_egress_write_then (c, sbx_egress_server_out (c), bytes, tunnel_start);
      return;
    }
  if (!splice_start (c, &c->up, c->client, c->server, tunnel_direction_done))
    sbx_egress_pump_start (c, &c->up, c->client, c->server, G_MAXUINT64, tunnel_direction_done);
  if (!splice_start (c, &c->down, c->server, c->client, tunnel_direction_done))
    sbx_egress_pump_start (c, &c->down, c->server, c->client, G_MAXUINT64, tunnel_direction_done);
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

void
sbx_egress_send_established (Conn *c)
{
  static const char ok[] = "HTTP/1.1 200 Connection Established\r\n\r\n";

  sbx_egress_write_then (c, sbx_egress_client_out (c), g_bytes_new_static (ok, sizeof ok - 1), tunnel_established);
}
