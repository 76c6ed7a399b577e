/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Request heads of the http-connect route: reading and parsing the head,
 * the Basic credential, the approval of the target, then a CONNECT tunnel
 * (sbx-egress-tunnel.c) or a forward (absolute-form) request with its
 * hop-by-hop filtering, dialed with the forward as what follows.  Uses the
 * tunnel, the dial and the connection.
 */
#include "sbx-egress-proxy-private.h"

/* ------------------------------------------------------------------------- */
/* Forwarding                                                                 */
/* ------------------------------------------------------------------------- */

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
  sbx_egress_pump_start (c, &c->down, c->server, c->client, G_MAXUINT64, sbx_egress_conn_close);
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
      sbx_egress_respond_error (c, 502, "Bad Gateway", "upstream unavailable");
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
  sbx_egress_write_then (c, sbx_egress_client_out (c), bytes, interim ? forward_read_response : forward_response_body);
}

static void
forward_got_response (Conn        *c,
                      SbxHttpHead *resp)
{
  if (resp == NULL)
    {
      sbx_egress_respond_error (c, 502, "Bad Gateway", "upstream unavailable");
      return;
    }
  /* drop what forward_response_head does not consume: nothing; it uses
   * resp->head_length of c->ubuf */
  forward_response_head (c, resp);
}

static void
forward_read_response (Conn *c)
{
  sbx_egress_server_head_read (c, forward_got_response);
}

static void
forward_send_body (Conn *c)
{
  gsize have = c->buf->len - c->head->head_length;
  guint64 left = c->body_length > have ? c->body_length - have : 0;

  sbx_egress_pump_start (c, &c->up, c->client, c->server, left, forward_read_response);
}

/* What follows the dial of a forward request: the request, rewritten, to
 * the target (direct) or to the upstream proxy in absolute form. */
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
  sbx_egress_write_then (c, sbx_egress_server_out (c), g_string_free_to_bytes (out), forward_send_body);
}

/* ------------------------------------------------------------------------- */
/* Requests                                                                   */
/* ------------------------------------------------------------------------- */

char *
sbx_egress_sha256_hex (const char *s)
{
  return g_compute_checksum_for_string (G_CHECKSUM_SHA256, s, -1);
}

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

/* What follows the approval of the connection's target: the body rules of
 * a forward request, then the dial (every address rule applies there). */
static void
request_proceed (Conn *c)
{
  SbxHttpHead *h = c->head;
  const char *te, *cl;

  if (!c->is_connect)
    {
      guint64 length = 0;

      te = sbx_http_head_get (h, "Transfer-Encoding", NULL);
      cl = sbx_http_head_get (h, "Content-Length", NULL);
      if (te != NULL)
        {
          /* no chunked request bodies: refusing is closed, guessing is not */
          sbx_egress_respond_error (c, 411, "Length Required", "request bodies need Content-Length");
          return;
        }
      if (cl != NULL)
        {
          if (*cl == '\0' || strlen (cl) > 18 || strspn (cl, "0123456789") != strlen (cl))
            {
              sbx_egress_respond_error (c, 400, "Bad Request", "invalid Content-Length");
              return;
            }
          length = g_ascii_strtoull (cl, NULL, 10);
        }
      c->body_length = length;
    }
  if (c->is_connect)
    sbx_egress_tunnel_connect (c);
  else
    sbx_egress_dial (c, forward_start);
}

/* One held request's answer, from the host (any thread): handled on the
 * proxy thread, never inside the ask. */
typedef struct
{
  Conn    *conn;       /* (owned) */
  guint32  decision;
} Answer;

static gboolean
answer_dispatch (gpointer data)
{
  Answer *a = data;
  Conn *c = a->conn;
  SbxEgressProxy *self = c->proxy;
  gboolean allowed = FALSE;

  if (c->closed)
    return G_SOURCE_REMOVE;
  c->held = FALSE;
  c->last_activity = now_us ();
  g_mutex_lock (&self->lock);
  /* a revoked execution (c->exec cleared) takes no answer */
  if (c->exec != NULL && (a->decision == SBX_ABI_DECISION_ONCE || a->decision == SBX_ABI_DECISION_FOR_RUN))
    {
      allowed = TRUE;
      /* the approval names this exact target, as a grant would */
      c->named = TRUE;
      if (a->decision == SBX_ABI_DECISION_FOR_RUN && !c->exec->all)
        g_hash_table_add (c->exec->targets, g_strdup (c->target));
    }
  else if (c->exec != NULL)
    {
      sbx_egress_exec_deny_locked (c->exec, SBX_ABI_DENIAL_CONNECT, SBX_ABI_DENIAL_APPROVABLE, c->target,
                                   "egress-proxy", "not approved when asked");
    }
  g_mutex_unlock (&self->lock);
  if (!allowed)
    {
      sbx_egress_respond_error (c, 403, "Forbidden", "network target denied");
      return G_SOURCE_REMOVE;
    }
  request_proceed (c);
  return G_SOURCE_REMOVE;
}

static void
answer_free (gpointer data)
{
  Answer *a = data;

  sbx_egress_conn_unref (a->conn);
  g_free (a);
}

/* SbxEgressAnswerFunc: @ticket is the held connection's reference. */
static void
answer_held (void    *ticket,
             uint32_t decision)
{
  Answer *a = g_new0 (Answer, 1);
  GSource *idle = g_idle_source_new ();

  a->conn = ticket;
  a->decision = decision;
  g_source_set_callback (idle, answer_dispatch, a, answer_free);
  g_source_set_static_name (idle, "[sbx-egress] answer");
  g_source_attach (idle, a->conn->proxy->context);
  g_source_unref (idle);
}

static void
handle_request (Conn *c)
{
  SbxEgressProxy *self = c->proxy;
  SbxHttpHead *h = c->head;
  g_autofree char *id = NULL;
  g_autofree char *credential = NULL;
  g_autofree char *hash = NULL;
  gboolean authenticated = FALSE, allowed = FALSE, held = FALSE, parsed;
  Exec *e;

  if (parse_proxy_authorization (sbx_http_head_get (h, "Proxy-Authorization", NULL), &id, &credential))
    hash = sbx_egress_sha256_hex (credential);
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
      if (!parsed)
        {
          sbx_egress_exec_deny_locked (e, SBX_ABI_DENIAL_CONNECT, 0, SBX_NETRULES_UNPARSEABLE_TARGET,
                                       "egress-proxy",
                                       "the request names no http:// URL or CONNECT authority");
        }
      else if (e->all || g_hash_table_contains (e->targets, c->target))
        {
          allowed = TRUE;
          /* a non-public literal needs the approval to name it */
          c->named = g_hash_table_contains (e->targets, c->target);
          c->exec = e;
          g_ptr_array_add (e->conns, sbx_egress_conn_ref (c));
        }
      else if (e->sink.ask != NULL)
        {
          SbxEgressDenialV1 request = { 0 };

          /* held: on the execution's list (its revoke closes it), asked
           * under the lock so no ask follows the revoke */
          held = TRUE;
          c->held = TRUE;
          c->exec = e;
          g_ptr_array_add (e->conns, sbx_egress_conn_ref (c));
          request.struct_size = sizeof request;
          request.operation = SBX_ABI_DENIAL_CONNECT;
          request.flags = SBX_ABI_DENIAL_APPROVABLE;
          request.target = c->target;
          request.mechanism = "egress-proxy";
          request.reason = "not approved for this execution";
          e->sink.ask (e->sink.data, &request, answer_held, sbx_egress_conn_ref (c));
        }
      else
        sbx_egress_exec_deny_locked (e, SBX_ABI_DENIAL_CONNECT, SBX_ABI_DENIAL_APPROVABLE, c->target,
                                     "egress-proxy", "not approved for this execution");
    }
  g_mutex_unlock (&self->lock);

  if (!authenticated)
    {
      sbx_egress_respond_error (c, 407, "Proxy Authentication Required", "proxy authentication required");
      return;
    }
  if (held)
    return;
  if (!allowed)
    {
      sbx_egress_respond_error (c, 403, "Forbidden", "network target denied");
      return;
    }
  request_proceed (c);
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
      sbx_egress_conn_close (c);
      return;
    }
  c->last_activity = now_us ();
  g_byte_array_append (c->buf, c->chunk, (guint) n);
  sbx_egress_request_read (c);
}

void
sbx_egress_request_read (Conn *c)
{
  const char *why = NULL;
  SbxHttpParse r = SBX_HTTP_PARSE_INCOMPLETE;

  /* A fresh connection's head is usually there already (the listener defers
   * accepting until the first bytes): read it now, without a task and a
   * trip through the loop.  Later reads (a head in pieces) go async. */
  if (c->buf->len == 0)
    {
      gssize n = g_socket_receive_with_blocking (g_socket_connection_get_socket (c->client), (char *) c->chunk,
                                                 sizeof c->chunk, FALSE, NULL, NULL);

      if (n == 0)
        {
          sbx_egress_conn_close (c);
          return;
        }
      if (n > 0)
        {
          c->last_activity = now_us ();
          g_byte_array_append (c->buf, c->chunk, (guint) n);
        }
      /* n < 0: would block (the async read below waits) or an error (which
       * the async read reports again) */
    }
  if (c->buf->len > 0)
    r = sbx_http_head_parse ((const char *) c->buf->data, c->buf->len, c->proxy->limits.max_head_bytes,
                             FALSE, &c->head, &why);
  switch (r)
    {
    case SBX_HTTP_PARSE_OK:
      handle_request (c);
      return;
    case SBX_HTTP_PARSE_TOO_LARGE:
      sbx_egress_respond_error (c, 431, "Request Header Fields Too Large", "request head too large");
      return;
    case SBX_HTTP_PARSE_INVALID:
      sbx_egress_respond_error (c, 400, "Bad Request", "malformed request");
      return;
    case SBX_HTTP_PARSE_INCOMPLETE:
      break;
    default:
      sbx_egress_conn_close (c);
      return;
    }
  g_input_stream_read_async (g_io_stream_get_input_stream (G_IO_STREAM (c->client)), c->chunk,
                             sizeof c->chunk, G_PRIORITY_DEFAULT, c->cancellable, head_read_done, sbx_egress_conn_ref (c));
}
