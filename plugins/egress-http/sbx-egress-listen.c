#include "sbx-egress-proxy-private.h"

/* ------------------------------------------------------------------------- */
/* Accepting, ticking, stopping                                               */
/* ------------------------------------------------------------------------- */

void
sbx_egress_listener_free (Listener *l)
{
  g_socket_listener_close (l->listener);
  g_object_unref (l->listener);
  g_object_unref (l->cancellable);
  g_atomic_int_add (&l->proxy->live_listeners, -1);
  g_free (l->exec_id);
  g_free (l);
}

static gboolean
accept_retry (gpointer data)
{
  sbx_egress_listener_accept (data);
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
          sbx_egress_listener_free (l);
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
      sbx_egress_listener_free (l);
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
  sbx_egress_set_nodelay (connection);
  g_mutex_lock (&self->lock);
  g_hash_table_add (self->conns, c);   /* the table owns the first ref */
  g_mutex_unlock (&self->lock);
  sbx_egress_conn_read_head (c);

  sbx_egress_listener_accept (l);
}

void
sbx_egress_listener_accept (Listener *l)
{
  g_socket_listener_accept_async (l->listener, l->cancellable, accept_done, l);
}

typedef struct
{
  SbxEgressProxy *self;
  GSocket        *socket;
  char           *exec_id;
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
  l->listener = g_socket_listener_new ();
  l->cancellable = g_cancellable_new ();
  g_atomic_int_inc (&self->live_listeners);
  if (closing || !g_socket_listener_add_socket (l->listener, op->socket, NULL, NULL))
    {
      g_socket_close (op->socket, NULL);
      sbx_egress_listener_free (l);
    }
  else
    {
      g_ptr_array_add (self->listeners, l);
      sbx_egress_listener_accept (l);
    }
  g_object_unref (op->socket);
  g_free (op->exec_id);
  g_free (op);
  return G_SOURCE_REMOVE;
}

gboolean
sbx_egress_proxy_serve_fd (SbxEgressProxy  *self,
                           const char      *execution_id,
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
      !g_inet_address_get_is_loopback (g_inet_socket_address_get_address (G_INET_SOCKET_ADDRESS (local))))
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
  op->socket = g_steal_pointer (&socket);
  g_main_context_invoke (self->context, serve_in_thread, op);
  return TRUE;
}
