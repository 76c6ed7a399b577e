/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A connection of the http-connect route: its lifetime (accepted and
 * registered, referenced by every pending operation, closed once), the
 * primitives every later stage writes and reads with, and the error answers.
 * The bottom of the engine (sbx-egress-proxy-private.h gives the order): it
 * calls no other module of the plugin; what a stage holds beyond the two
 * sockets it frees through c->release, which close runs.
 */
#include "sbx-egress-proxy-private.h"

/* ------------------------------------------------------------------------- */
/* Lifetime                                                                   */
/* ------------------------------------------------------------------------- */

Conn *
sbx_egress_conn_ref (Conn *c)
{
  g_atomic_ref_count_inc (&c->ref);
  return c;
}

void
sbx_egress_conn_unref (Conn *c)
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

Conn *
sbx_egress_conn_new (SbxEgressProxy *self,
                     int             client_fd,
                     const char     *bound_exec)
{
  g_autoptr(GSocket) socket = NULL;
  Conn *c;
  int one = 1;
  gboolean closing;

  g_mutex_lock (&self->lock);
  closing = self->closing;
  g_mutex_unlock (&self->lock);
  if (!closing)
    socket = g_socket_new_from_fd (client_fd, NULL);
  if (socket == NULL)
    {
      close (client_fd);
      return NULL;
    }
  setsockopt (client_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  c = g_new0 (Conn, 1);
  g_atomic_ref_count_init (&c->ref);
  g_atomic_int_inc (&self->live_conns);
  c->proxy = self;
  c->client = g_socket_connection_factory_create_connection (socket);
  c->bound_exec = g_strdup (bound_exec);
  c->cancellable = g_cancellable_new ();
  c->buf = g_byte_array_new ();
  c->ubuf = g_byte_array_new ();
  c->up.pipe_r = c->up.pipe_w = c->down.pipe_r = c->down.pipe_w = -1;
  c->last_activity = now_us ();
  c->head_deadline = c->last_activity + (gint64) self->limits.head_timeout_ms * 1000;
  g_mutex_lock (&self->lock);
  g_hash_table_add (self->conns, sbx_egress_conn_ref (c));   /* the table owns a ref */
  g_mutex_unlock (&self->lock);
  return c;
}

void
sbx_egress_conn_close (Conn *c)
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
  /* stopping the relay drops its watch's reference; the caller holds one,
   * so c stays valid here */
  if (c->release != NULL)
    c->release (c);
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
    sbx_egress_conn_unref (c);
}

void
sbx_egress_exec_deny_locked (Exec       *e,
                             guint32     operation,
                             guint32     flags,
                             const char *target,
                             const char *mechanism,
                             const char *reason)
{
  if (e->denial == NULL && operation == SBX_ABI_DENIAL_CONNECT)
    e->denial = reason != NULL ? g_strdup_printf ("%s (%s)", target, reason) : g_strdup (target);
  if (e->sink.denied != NULL)
    {
      SbxEgressDenialV1 denial = { 0 };

      denial.struct_size = sizeof denial;
      denial.operation = operation;
      denial.flags = flags;
      denial.target = target;
      denial.mechanism = mechanism;
      denial.reason = reason;
      e->sink.denied (e->sink.data, &denial);
    }
}

void
sbx_egress_record_denial (Conn       *c,
                          guint32     flags,
                          const char *reason)
{
  SbxEgressProxy *self = c->proxy;

  g_mutex_lock (&self->lock);
  if (c->exec != NULL)
    sbx_egress_exec_deny_locked (c->exec, SBX_ABI_DENIAL_CONNECT, flags, c->target,
                                 c->raw ? "forwarder" : "egress-proxy", reason);
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
      sbx_egress_conn_close (c);
      return;
    }
  c->last_activity = now_us ();
  if (next != NULL)
    next (c);
  else
    sbx_egress_conn_close (c);
}

void
sbx_egress_write_then (Conn          *c,
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
        sbx_egress_conn_close (c);
      return;
    }
  op = g_new0 (WriteOp, 1);
  op->conn = sbx_egress_conn_ref (c);
  op->bytes = bytes;
  op->next = next;
  g_output_stream_write_all_async (out, g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes),
                                   G_PRIORITY_DEFAULT, c->cancellable, write_done, op);
}

GOutputStream *
sbx_egress_client_out (Conn *c)
{
  return g_io_stream_get_output_stream (G_IO_STREAM (c->client));
}

GOutputStream *
sbx_egress_server_out (Conn *c)
{
  return g_io_stream_get_output_stream (G_IO_STREAM (c->server));
}

/* ------------------------------------------------------------------------- */
/* Reading response heads                                                     */
/* ------------------------------------------------------------------------- */

typedef struct
{
  Conn    *conn;
  HeadStep step;
} HeadOp;

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
  sbx_egress_server_head_read (c, step);
}

void
sbx_egress_server_head_read (Conn    *c,
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
  op->conn = sbx_egress_conn_ref (c);
  op->step = step;
  g_input_stream_read_async (g_io_stream_get_input_stream (G_IO_STREAM (c->server)), c->chunk,
                             sizeof c->chunk, G_PRIORITY_DEFAULT, c->cancellable, server_head_done, op);
}

/* ------------------------------------------------------------------------- */
/* Error answers                                                              */
/* ------------------------------------------------------------------------- */

/* An error answer to the client, then close.  Bodies are fixed texts; never
 * a credential, never a resolved address. */
void
sbx_egress_respond_error (Conn       *c,
                          guint       status,
                          const char *reason,
                          const char *body)
{
  g_autofree char *text = NULL;

  /* a raw tunnel's client speaks no HTTP: closing is its refusal */
  if (c->raw)
    {
      sbx_egress_conn_close (c);
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

    sbx_egress_write_then (c, sbx_egress_client_out (c), g_bytes_new_take (g_steal_pointer (&with_nl), len), NULL);
  }
}
