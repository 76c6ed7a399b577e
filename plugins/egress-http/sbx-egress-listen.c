/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Listeners of the http-connect route: serve_fd hands a listening socket to
 * the proxy thread, which accepts on it until the proxy stops or, for a
 * listener bound to one execution, until that execution is revoked.  A
 * connection accepted on the proxy's listener is a request; on a raw tunnel
 * listener (a forwarder, sbx_egress_tunnel_serve_fd), a raw tunnel.  Uses
 * the request, the tunnel and the connection.
 */
#include "sbx-egress-proxy-private.h"

#include "sbx-egress-tunnel.h"

/* ------------------------------------------------------------------------- */
/* Accepting                                                                  */
/* ------------------------------------------------------------------------- */

/* Connections accepted per wake-up: a burst of clients is taken in one
 * dispatch, and one busy listener cannot starve the tunnels. */
#define ACCEPT_BATCH 64
/* After EMFILE and friends, accepting pauses this long instead of spinning. */
#define ACCEPT_BACKOFF_US (50 * 1000)

/* A listener's watch: one fd, plus a ready time while accepting is paused.
 * Accepting is a plain accept4() on readiness (GSocketListener's
 * accept_async costs a task, an idle dispatch and eight syscalls per
 * connection). */
static gboolean
listener_dispatch (GSource     *source,
                   GSourceFunc  callback,
                   gpointer     user_data)
{
  Listener *l = user_data;
  SbxEgressProxy *self = l->proxy;

  if (g_source_get_ready_time (source) >= 0)
    {
      /* the back-off ended: watch the socket again */
      g_source_set_ready_time (source, -1);
      g_source_modify_unix_fd (source, l->tag, G_IO_IN);
    }
  for (int i = 0; i < ACCEPT_BATCH; i++)
    {
      int fd = accept4 (l->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
      Conn *c;

      if (fd < 0)
        {
          if (errno == EAGAIN || errno == EWOULDBLOCK)
            break;
          if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
            continue;
          /* EMFILE, ENFILE, ENOBUFS, ENOMEM: the pending connection stays
           * in the backlog until resources free up */
          g_source_modify_unix_fd (source, l->tag, 0);
          g_source_set_ready_time (source, g_get_monotonic_time () + ACCEPT_BACKOFF_US);
          break;
        }
      c = sbx_egress_conn_new (self, fd, l->exec_id);
      if (c == NULL)
        break;
      if (l->tunnel_target != NULL)
        sbx_egress_tunnel_begin (c, l->exec_id, l->tunnel_target);
      else
        sbx_egress_request_read (c);
      sbx_egress_conn_unref (c);
    }
  return G_SOURCE_CONTINUE;
}

static GSourceFuncs listener_funcs = {
  .dispatch = listener_dispatch,
};

void
sbx_egress_listener_close (Listener *l)
{
  if (l->source != NULL)
    {
      g_source_destroy (l->source);
      g_clear_pointer (&l->source, g_source_unref);
    }
  if (l->fd >= 0)
    close (l->fd);
  g_atomic_int_add (&l->proxy->live_listeners, -1);
  g_free (l->exec_id);
  g_free (l->tunnel_target);
  g_free (l);
}

typedef struct
{
  SbxEgressProxy *self;
  int             fd;
  char           *exec_id;
  char           *tunnel_target;
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
  l->fd = op->fd;
  l->exec_id = g_steal_pointer (&op->exec_id);
  l->tunnel_target = g_steal_pointer (&op->tunnel_target);
  g_atomic_int_inc (&self->live_listeners);
  if (closing)
    sbx_egress_listener_close (l);
  else
    {
      /* An HTTP client speaks first: with TCP_DEFER_ACCEPT the connection
       * is accepted when its first bytes are there, so accepting and
       * reading the head take one wake-up, not two.  A client that stays
       * silent is held by the kernel (no descriptor of ours) for at most
       * about this long, then accepted and held to the head timeout.  Not
       * for raw tunnels, whose servers may speak first (ssh, smtp). */
      if (l->tunnel_target == NULL)
        {
          int secs = (int) MAX (1, (self->limits.head_timeout_ms + 999) / 1000);

          (void) setsockopt (l->fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &secs, sizeof secs);
        }
      l->source = g_source_new (&listener_funcs, sizeof (GSource));
      g_source_set_callback (l->source, NULL, l, NULL);
      g_source_set_name (l->source, "sbx-egress-listener");
      l->tag = g_source_add_unix_fd (l->source, l->fd, G_IO_IN);
      g_source_attach (l->source, self->context);
      g_ptr_array_add (self->listeners, l);
    }
  g_free (op);
  return G_SOURCE_REMOVE;
}

/* Takes @fd.  @loopback_only: the proxy's own listeners; a forwarder's may
 * listen on any address of the sandbox. */
static gboolean
check_listener (int        fd,
                gboolean   loopback_only,
                GError   **error)
{
  struct sockaddr_storage local;
  socklen_t len = sizeof local;
  int value = 0;
  socklen_t optlen = sizeof value;
  gboolean loopback = FALSE;

  if (fd < 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "egress serve: no listening socket (fd %d)", fd);
      return FALSE;
    }
  if (getsockopt (fd, SOL_SOCKET, SO_ACCEPTCONN, &value, &optlen) != 0 || !value)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "egress serve: fd %d is not a listening socket", fd);
      close (fd);
      return FALSE;
    }
  optlen = sizeof value;
  if (getsockopt (fd, SOL_SOCKET, SO_TYPE, &value, &optlen) != 0 || value != SOCK_STREAM ||
      getsockname (fd, (struct sockaddr *) &local, &len) != 0 ||
      (local.ss_family != AF_INET && local.ss_family != AF_INET6))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "egress serve: fd %d must be a TCP listener", fd);
      close (fd);
      return FALSE;
    }
  if (local.ss_family == AF_INET)
    loopback = (ntohl (((struct sockaddr_in *) &local)->sin_addr.s_addr) >> 24) == 127;
  else
    {
      const struct in6_addr *a = &((struct sockaddr_in6 *) &local)->sin6_addr;

      loopback = IN6_IS_ADDR_LOOPBACK (a) ||
                 (IN6_IS_ADDR_V4MAPPED (a) && a->s6_addr[12] == 127);
    }
  if (loopback_only && !loopback)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "egress serve: fd %d must be a loopback TCP listener", fd);
      close (fd);
      return FALSE;
    }
  if (fcntl (fd, F_SETFL, fcntl (fd, F_GETFL) | O_NONBLOCK) != 0)
    {
      int saved = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "egress serve: fd %d: O_NONBLOCK: %s", fd,
                   g_strerror (saved));
      close (fd);
      return FALSE;
    }
  return TRUE;
}

/* Serves @fd (owned, a listening stream socket) for @execution_id (NULL:
 * every execution); with @tunnel_target, every accepted connection is a raw
 * tunnel to it.  Any thread. */
static gboolean
listen_on (SbxEgressProxy  *self,
           const char      *execution_id,
           const char      *tunnel_target,
           int              fd,
           GError         **error)
{
  ServeOp *op;

  if (!check_listener (fd, tunnel_target == NULL, error))
    return FALSE;
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
          close (fd);
          return FALSE;
        }
    }
  op = g_new0 (ServeOp, 1);
  op->self = self;
  op->fd = fd;
  op->exec_id = g_strdup (execution_id);
  op->tunnel_target = g_strdup (tunnel_target);
  g_main_context_invoke (self->context, serve_in_thread, op);
  return TRUE;
}

gboolean
sbx_egress_proxy_serve_fd (SbxEgressProxy  *self,
                           const char      *execution_id,
                           int              fd,
                           GError         **error)
{
  return listen_on (self, execution_id, NULL, fd, error);
}

/* ------------------------------------------------------------------------- */
/* Raw tunnel listeners (sbx-egress-tunnel.h)                                 */
/* ------------------------------------------------------------------------- */

gboolean
sbx_egress_tunnel_serve_fd (SbxEgressProxy *proxy,
                            const char     *execution_id,
                            const char     *target,
                            int             listen_fd,
                            GError        **error)
{
  if (listen_fd < 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "egress tunnel: no listening socket (fd %d)",
                   listen_fd);
      return FALSE;
    }
  if (!sbx_egress_tunnel_check (proxy, execution_id, target, listen_fd, error))
    return FALSE;
  return listen_on (proxy, execution_id, target, listen_fd, error);
}
