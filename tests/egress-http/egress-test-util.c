/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "egress-test-util.h"

#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* ------------------------------------------------------------------------- */
/* Fake host                                                                  */
/* ------------------------------------------------------------------------- */

static EgressTestHost *current_host;

static void
host_set_error (SbxHostCall *call,
                int32_t      status,
                const char  *message)
{
  EgressTestHost *th = (EgressTestHost *) call;

  g_mutex_lock (&th->lock);
  if (th->error == NULL)
    {
      th->error_status = status;
      th->error = g_strdup (message);
    }
  g_mutex_unlock (&th->lock);
}

static void
host_report (SbxHostCall *call,
             const char  *feature,
             uint32_t     status,
             const char  *detail)
{
}

static void
host_log (uint32_t    level,
          const char *domain,
          const char *message)
{
  g_test_message ("[%s] %s", domain, message);
}

static void *
host_alloc (size_t size)
{
  return g_malloc (size);
}

static void
host_release (void *ptr)
{
  g_free (ptr);
}

EgressTestHost *
egress_test_host_new (uint64_t features)
{
  EgressTestHost *th = g_new0 (EgressTestHost, 1);
  const SbxPluginDescriptor *d = sbx_plugin_egress_http_entry ();
  int32_t status;

  g_mutex_init (&th->lock);
  th->host = (SbxHostV1) {
    .struct_size = sizeof (SbxHostV1),
    .abi_version = SBX_PLUGIN_ABI_VERSION,
    .features = features,
    .core_version = "0.1.0",
    .set_error = host_set_error,
    .report = host_report,
    .log = host_log,
    .alloc = host_alloc,
    .release = host_release,
  };
  status = d->init (&th->host, &th->plugin_ctx);
  if (status != SBX_STATUS_OK)
    {
      g_mutex_clear (&th->lock);
      g_free (th);
      return NULL;
    }
  g_assert_cmpuint (d->extensions[0].kind, ==, SBX_EXT_EGRESS);
  th->vtable = d->extensions[0].vtable;
  current_host = th;
  return th;
}

void
egress_test_host_free (EgressTestHost *th)
{
  if (th == NULL)
    return;
  sbx_plugin_egress_http_entry ()->fini (th->plugin_ctx);
  g_free (th->error);
  g_mutex_clear (&th->lock);
  g_free (th);
}

char *
egress_test_host_take_error (EgressTestHost *th)
{
  char *e;

  g_mutex_lock (&th->lock);
  e = g_steal_pointer (&th->error);
  g_mutex_unlock (&th->lock);
  return e;
}

EgressTestRoute *
egress_test_route_start (EgressTestHost *th,
                         const char     *config,
                         char          **error)
{
  EgressTestRoute *r = g_new0 (EgressTestRoute, 1);
  SbxEgressInfoV1 info = { .struct_size = sizeof (SbxEgressInfoV1) };
  g_autoptr(GSocket) listener = NULL;
  g_autoptr(GInetAddress) lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) any = g_inet_socket_address_new (lo, 0);
  g_autoptr(GSocketAddress) bound = NULL;
  g_autoptr(GError) local = NULL;
  int32_t status;
  int fd;

  r->th = th;
  status = th->vtable->start (th->plugin_ctx, (SbxHostCall *) th, config, &r->route, &info);
  if (status != SBX_STATUS_OK)
    {
      *error = egress_test_host_take_error (th);
      g_free (r);
      return NULL;
    }
  r->fingerprint = info.fingerprint;
  r->address_guarantee = info.address_guarantee;

  listener = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, &local);
  g_assert_no_error (local);
  g_assert_true (g_socket_bind (listener, any, TRUE, &local));
  g_assert_true (g_socket_listen (listener, &local));
  g_assert_no_error (local);
  bound = g_socket_get_local_address (listener, &local);
  r->port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
  fd = dup (g_socket_get_fd (listener));
  g_assert_cmpint (fd, >=, 0);
  status = th->vtable->serve (th->plugin_ctx, (SbxHostCall *) th, r->route, NULL, fd);
  g_assert_cmpint (status, ==, SBX_STATUS_OK);
  return r;
}

void
egress_test_route_stop (EgressTestRoute *r)
{
  if (r == NULL)
    return;
  r->th->vtable->stop (r->th->plugin_ctx, r->route);
  g_free (r->fingerprint);
  g_free (r);
}

char *
egress_test_authorize (EgressTestRoute   *r,
                       const char        *execution_id,
                       const char *const *targets)
{
  char *credential = NULL;
  int32_t status = r->th->vtable->authorize (r->th->plugin_ctx, (SbxHostCall *) r->th, r->route, execution_id,
                                             targets, &credential);

  if (status != SBX_STATUS_OK)
    {
      g_autofree char *e = egress_test_host_take_error (r->th);

      g_error ("authorize %s: status %d: %s", execution_id, status, e);
    }
  g_assert_nonnull (credential);
  return credential;
}

char *
egress_test_revoke (EgressTestRoute *r,
                    const char      *execution_id)
{
  char *denial = NULL;

  g_assert_cmpint (r->th->vtable->revoke (r->th->plugin_ctx, r->route, execution_id, &denial), ==,
                   SBX_STATUS_OK);
  return denial;
}

char *
egress_test_auth_header (const char *execution_id,
                         const char *credential)
{
  g_autofree char *pair = g_strconcat (execution_id, ":", credential, NULL);
  g_autofree char *b64 = g_base64_encode ((const guchar *) pair, strlen (pair));

  return g_strdup_printf ("Proxy-Authorization: Basic %s\r\n", b64);
}

/* ------------------------------------------------------------------------- */
/* Servers                                                                    */
/* ------------------------------------------------------------------------- */

struct _TestServer
{
  TestServerKind   kind;
  char            *script;
  GSocketListener *listener;
  guint16          port;
  GMainContext    *context;
  GMainLoop       *loop;
  GThread         *thread;
  GCancellable    *cancellable;
  gint             n_accepted;
  GMutex           lock;
  char            *last_head;
  GPtrArray       *conns;     /* server thread only */
  gint             live;      /* atomic */
};

typedef struct
{
  TestServer        *server;
  GSocketConnection *conn;
  guint8             buf[65536];
  GByteArray        *head;
  gsize              need_body;
  gboolean           closed;
} ServerConn;

static void
server_conn_free (ServerConn *sc)
{
  if (!sc->closed)
    g_io_stream_close (G_IO_STREAM (sc->conn), NULL, NULL);
  g_object_unref (sc->conn);
  if (sc->head != NULL)
    g_byte_array_unref (sc->head);
  g_atomic_int_add (&sc->server->live, -1);
  g_free (sc);
}

static void echo_read (ServerConn *sc);

static void
echo_written (GObject      *source,
              GAsyncResult *result,
              gpointer      data)
{
  ServerConn *sc = data;

  if (!g_output_stream_write_all_finish (G_OUTPUT_STREAM (source), result, NULL, NULL))
    {
      server_conn_free (sc);
      return;
    }
  echo_read (sc);
}

static void
echo_got (GObject      *source,
          GAsyncResult *result,
          gpointer      data)
{
  ServerConn *sc = data;
  gssize n = g_input_stream_read_finish (G_INPUT_STREAM (source), result, NULL);

  if (n <= 0)
    {
      /* half-close honoured: EOF in, then our own EOF out */
      if (n == 0)
        g_socket_shutdown (g_socket_connection_get_socket (sc->conn), FALSE, TRUE, NULL);
      server_conn_free (sc);
      return;
    }
  g_output_stream_write_all_async (g_io_stream_get_output_stream (G_IO_STREAM (sc->conn)), sc->buf, (gsize) n,
                                   G_PRIORITY_DEFAULT, sc->server->cancellable, echo_written, sc);
}

static void
echo_read (ServerConn *sc)
{
  g_input_stream_read_async (g_io_stream_get_input_stream (G_IO_STREAM (sc->conn)), sc->buf, sizeof sc->buf,
                             G_PRIORITY_DEFAULT, sc->server->cancellable, echo_got, sc);
}

static void head_read (ServerConn *sc);

static void
reply_written (GObject      *source,
               GAsyncResult *result,
               gpointer      data)
{
  ServerConn *sc = data;

  g_output_stream_write_all_finish (G_OUTPUT_STREAM (source), result, NULL, NULL);
  g_free (g_object_get_data (G_OBJECT (sc->conn), "reply"));
  g_socket_shutdown (g_socket_connection_get_socket (sc->conn), FALSE, TRUE, NULL);
  server_conn_free (sc);
}

static void
reply (ServerConn *sc)
{
  TestServer *s = sc->server;
  char *text;

  if (s->kind == TEST_SERVER_SCRIPTED)
    text = g_strdup (s->script);
  else
    {
      g_autofree char *body = g_strndup ((const char *) sc->head->data, sc->head->len);

      text = g_strdup_printf ("HTTP/1.1 200 OK\r\n"
                              "Content-Type: text/plain\r\n"
                              "Keep-Alive: timeout=5\r\n"
                              "Connection: X-Resp-Hop\r\n"
                              "X-Resp-Hop: secret-hop\r\n"
                              "Proxy-Authenticate: Basic realm=\"origin\"\r\n"
                              "X-Resp-Keep: kept\r\n"
                              "Content-Length: %u\r\n\r\n%s",
                              sc->head->len, body);
    }
  g_object_set_data (G_OBJECT (sc->conn), "reply", text);
  g_output_stream_write_all_async (g_io_stream_get_output_stream (G_IO_STREAM (sc->conn)), text, strlen (text),
                                   G_PRIORITY_DEFAULT, s->cancellable, reply_written, sc);
}

static void
head_got (GObject      *source,
          GAsyncResult *result,
          gpointer      data)
{
  ServerConn *sc = data;
  gssize n = g_input_stream_read_finish (G_INPUT_STREAM (source), result, NULL);
  const char *end;

  if (n <= 0)
    {
      server_conn_free (sc);
      return;
    }
  g_byte_array_append (sc->head, sc->buf, (guint) n);
  g_byte_array_append (sc->head, (const guint8 *) "", 1);
  g_byte_array_set_size (sc->head, sc->head->len - 1);
  end = g_strstr_len ((const char *) sc->head->data, sc->head->len, "\r\n\r\n");
  if (end == NULL)
    {
      head_read (sc);
      return;
    }
  /* a body by Content-Length (case-insensitive search is enough here) */
  {
    gsize head_len = (gsize) (end + 4 - (const char *) sc->head->data);
    g_autofree char *lower = g_ascii_strdown ((const char *) sc->head->data, (gssize) head_len);
    const char *cl = strstr (lower, "\r\ncontent-length:");
    gsize body = cl != NULL ? (gsize) g_ascii_strtoull (cl + 17, NULL, 10) : 0;

    if (sc->head->len < head_len + body)
      {
        head_read (sc);
        return;
      }
    g_mutex_lock (&sc->server->lock);
    g_free (sc->server->last_head);
    sc->server->last_head = g_strndup ((const char *) sc->head->data, sc->head->len);
    g_mutex_unlock (&sc->server->lock);
  }
  reply (sc);
}

static void
head_read (ServerConn *sc)
{
  g_input_stream_read_async (g_io_stream_get_input_stream (G_IO_STREAM (sc->conn)), sc->buf, sizeof sc->buf,
                             G_PRIORITY_DEFAULT, sc->server->cancellable, head_got, sc);
}

static void
accepted (GObject      *source,
          GAsyncResult *result,
          gpointer      data)
{
  TestServer *s = data;
  GSocketConnection *conn = g_socket_listener_accept_finish (G_SOCKET_LISTENER (source), result, NULL, NULL);
  ServerConn *sc;

  if (conn == NULL)
    return;
  g_atomic_int_inc (&s->n_accepted);
  g_atomic_int_inc (&s->live);
  sc = g_new0 (ServerConn, 1);
  sc->server = s;
  sc->conn = conn;
  g_socket_set_option (g_socket_connection_get_socket (conn), IPPROTO_TCP, 1 /* TCP_NODELAY */, 1, NULL);
  if (s->kind == TEST_SERVER_ECHO)
    echo_read (sc);
  else
    {
      sc->head = g_byte_array_new ();
      head_read (sc);
    }
  g_socket_listener_accept_async (s->listener, s->cancellable, accepted, s);
}

static gpointer
server_thread (gpointer data)
{
  TestServer *s = data;

  g_main_context_push_thread_default (s->context);
  g_socket_listener_accept_async (s->listener, s->cancellable, accepted, s);
  g_main_loop_run (s->loop);
  /* drain the cancelled operations */
  while (g_atomic_int_get (&s->live) > 0)
    if (!g_main_context_iteration (s->context, FALSE))
      g_usleep (1000);
  while (g_main_context_iteration (s->context, FALSE))
    ;
  g_main_context_pop_thread_default (s->context);
  return NULL;
}

TestServer *
test_server_new (TestServerKind kind,
                 const char    *script)
{
  TestServer *s = g_new0 (TestServer, 1);
  g_autoptr(GInetAddress) lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) addr = g_inet_socket_address_new (lo, 0);
  g_autoptr(GSocketAddress) effective = NULL;
  g_autoptr(GError) error = NULL;

  s->kind = kind;
  s->script = g_strdup (script);
  g_mutex_init (&s->lock);
  s->listener = g_socket_listener_new ();
  g_socket_listener_set_backlog (s->listener, 2048);
  g_assert_true (g_socket_listener_add_address (s->listener, addr, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP,
                                                NULL, &effective, &error));
  g_assert_no_error (error);
  s->port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (effective));
  s->context = g_main_context_new ();
  s->loop = g_main_loop_new (s->context, FALSE);
  s->cancellable = g_cancellable_new ();
  s->thread = g_thread_new ("test-server", server_thread, s);
  return s;
}

guint16
test_server_get_port (TestServer *s)
{
  return s->port;
}

guint
test_server_get_n_accepted (TestServer *s)
{
  return (guint) g_atomic_int_get (&s->n_accepted);
}

/* The server's connections still open (their descriptors closed once this
 * is 0). */
guint
test_server_get_n_live (TestServer *s)
{
  return (guint) g_atomic_int_get (&s->live);
}

char *
test_server_last_head (TestServer *s)
{
  char *h;

  g_mutex_lock (&s->lock);
  h = g_strdup (s->last_head);
  g_mutex_unlock (&s->lock);
  return h;
}

static gboolean
quit_server (gpointer data)
{
  TestServer *s = data;

  g_cancellable_cancel (s->cancellable);
  g_socket_listener_close (s->listener);
  g_main_loop_quit (s->loop);
  return G_SOURCE_REMOVE;
}

void
test_server_free (TestServer *s)
{
  if (s == NULL)
    return;
  g_main_context_invoke (s->context, quit_server, s);
  g_thread_join (s->thread);
  g_object_unref (s->listener);
  g_object_unref (s->cancellable);
  g_main_loop_unref (s->loop);
  g_main_context_unref (s->context);
  g_free (s->script);
  g_free (s->last_head);
  g_mutex_clear (&s->lock);
  g_free (s);
}

/* ------------------------------------------------------------------------- */
/* Blocking clients                                                           */
/* ------------------------------------------------------------------------- */

GSocket *
test_connect_loopback (guint16 port)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GInetAddress) lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) addr = g_inet_socket_address_new (lo, port);
  GSocket *s = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, &error);

  g_assert_no_error (error);
  g_socket_set_timeout (s, 10);
  g_assert_true (g_socket_connect (s, addr, NULL, &error));
  g_assert_no_error (error);
  return s;
}

void
test_send_all (GSocket    *s,
               const void *data,
               gsize       len)
{
  const guint8 *p = data;

  while (len > 0)
    {
      g_autoptr(GError) error = NULL;
      gssize n = g_socket_send (s, (const char *) p, len, NULL, &error);

      g_assert_no_error (error);
      g_assert_cmpint (n, >, 0);
      p += n;
      len -= (gsize) n;
    }
}

guint
test_read_status (GSocket  *s,
                  char    **head_out)
{
  GString *head = g_string_new (NULL);
  guint status = 0;

  /* byte by byte: nothing after the head is consumed */
  while (!g_str_has_suffix (head->str, "\r\n\r\n"))
    {
      char c;
      g_autoptr(GError) error = NULL;
      gssize n = g_socket_receive (s, &c, 1, NULL, &error);

      if (n <= 0)
        break;
      g_string_append_c (head, c);
    }
  if (g_str_has_prefix (head->str, "HTTP/1."))
    status = (guint) g_ascii_strtoull (head->str + 9, NULL, 10);
  if (head_out != NULL)
    *head_out = g_string_free (head, FALSE);
  else
    g_string_free (head, TRUE);
  return status;
}

GByteArray *
test_read_all (GSocket *s,
               gsize    max)
{
  GByteArray *out = g_byte_array_new ();
  guint8 buf[16384];

  while (out->len < max)
    {
      g_autoptr(GError) error = NULL;
      gssize n = g_socket_receive (s, (char *) buf, MIN (sizeof buf, max - out->len), NULL, &error);

      if (n <= 0)
        break;
      g_byte_array_append (out, buf, (guint) n);
    }
  return out;
}

void
test_read_exact (GSocket *s,
                 guint8  *buf,
                 gsize    len)
{
  while (len > 0)
    {
      g_autoptr(GError) error = NULL;
      gssize n = g_socket_receive (s, (char *) buf, len, NULL, &error);

      g_assert_no_error (error);
      g_assert_cmpint (n, >, 0);
      buf += n;
      len -= (gsize) n;
    }
}

GSocket *
test_connect_request (guint16     proxy_port,
                      const char *authority,
                      const char *auth_header,
                      guint       expect,
                      char      **head)
{
  GSocket *s = test_connect_loopback (proxy_port);
  g_autofree char *req = g_strdup_printf ("CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s\r\n", authority, authority,
                                          auth_header != NULL ? auth_header : "");
  guint status;

  test_send_all (s, req, strlen (req));
  status = test_read_status (s, head);
  if (status != expect)
    g_error ("CONNECT %s: status %u, expected %u", authority, status, expect);
  return s;
}
