/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Dialing for the http-connect route: the direct route resolves names,
 * applies the address rules and connects to the target; the upstream route
 * connects to the organisation proxy (what is said to it, a CONNECT or an
 * absolute-form request, is the caller's continuation).  Never a direct
 * connection on the upstream route, whatever fails.  Uses only the
 * connection (sbx-egress-conn.c).
 */
#include "sbx-egress-proxy-private.h"

/* ------------------------------------------------------------------------- */
/* Dialing                                                                    */
/* ------------------------------------------------------------------------- */

static void
set_nodelay (GSocketConnection *connection)
{
  GSocket *socket = g_socket_connection_get_socket (connection);

  g_socket_set_option (socket, IPPROTO_TCP, TCP_NODELAY, 1, NULL);
}

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
      sbx_egress_respond_error (c, 502, "Bad Gateway", "upstream unavailable");
      return;
    }
  c->server = connection;
  /* GSocketClient's timeout bounds the connect; left on the socket it would
   * also end a tunnel whose server side is quiet for that long.  Idleness
   * is the tick's business (both directions together). */
  g_socket_set_timeout (g_socket_connection_get_socket (connection), 0);
  c->last_activity = now_us ();
  set_nodelay (c->server);
  c->connected (c);
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
  /* A loopback (or otherwise fast) handshake has often completed by now:
   * go on without a trip through the loop. */
  if (g_socket_condition_check (socket, G_IO_OUT | G_IO_ERR | G_IO_HUP) != 0)
    {
      if (g_socket_check_connect_result (socket, NULL))
        dial_result (c, g_socket_connection_factory_create_connection (socket));
      else
        {
          g_socket_close (socket, NULL);
          dial_result (c, NULL);
        }
      return;
    }
  c->connect_source = g_socket_create_source (socket, G_IO_OUT | G_IO_ERR | G_IO_HUP, NULL);
  g_source_set_callback (c->connect_source, G_SOURCE_FUNC (direct_connect_ready), sbx_egress_conn_ref (c),
                         (GDestroyNotify) sbx_egress_conn_unref);
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
      sbx_egress_respond_error (c, 502, "Bad Gateway", "upstream unavailable");
      return;
    }
  if (!sbx_netrules_check_addresses (c->host, c->literal, c->named, addresses, &error))
    {
      g_resolver_free_addresses (addresses);
      if (g_error_matches (error, SBX_NETRULES_ERROR, SBX_NETRULES_ERROR_ADDRESS_DENIED))
        sbx_egress_record_denial (c, 0, error->message);
      sbx_egress_respond_error (c, 502, "Bad Gateway", "upstream unavailable");
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

void
sbx_egress_dial (Conn    *c,
                 ConnStep connected)
{
  SbxEgressProxy *self = c->proxy;

  c->connected = connected;
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
              sbx_egress_record_denial (c, 0, error->message);
              sbx_egress_respond_error (c, 502, "Bad Gateway", "upstream unavailable");
              return;
            }
        }
      g_atomic_int_inc (&self->n_dials);
      g_socket_client_connect_to_host_async (client, self->up_authority, self->up_port, c->cancellable,
                                             dial_done, sbx_egress_conn_ref (c));
      return;
    }

  if (c->literal)
    {
      dial_checked (c, g_list_prepend (NULL, g_inet_address_new_from_string (c->host)), NULL);
      return;
    }
  g_resolver_lookup_by_name_async (self->resolver, c->host, c->cancellable, lookup_done, sbx_egress_conn_ref (c));
}
