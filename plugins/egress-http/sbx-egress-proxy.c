/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The http-connect egress route: the object (route, executions, the idle
 * tick, the thread), the top of the engine; the modules beneath it, in the
 * order they use each other, are listed in sbx-egress-proxy-private.h.
 *
 * THREADS.  Every socket is served by one thread per proxy, running its own
 * GMainContext: accepting, reading heads, resolving, dialing, tunnelling
 * and forwarding are all non-blocking GIO operations on that context.
 * authorize, revoke, serve_fd and the raw-tunnel calls of
 * sbx-egress-tunnel.h may be called from any thread.
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
 *  - an execution whose host asks (SbxEgressDenialSinkV1.ask) holds a
 *    request for a target it is not authorized for, costing nothing but
 *    the connection, until the host's answer; approved, it goes on as an
 *    authorized one with every address rule below; denied, 403 as above.
 *    An empty target list authorizes nothing (every target then asked);
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
#include "sbx-egress-proxy-private.h"
#include "sbx-netrules-private.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>


/* ------------------------------------------------------------------------- */
/* Small helpers                                                              */
/* ------------------------------------------------------------------------- */

static void
wipe_free (char *s)
{
  if (s != NULL)
    memset (s, 0, strlen (s));
  g_free (s);
}

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

/* ------------------------------------------------------------------------- */
/* Ticking and stopping                                                       */
/* ------------------------------------------------------------------------- */

/* Closes connections past their head deadline or idle too long. */
static gboolean
tick (gpointer data)
{
  SbxEgressProxy *self = data;
  g_autoptr(GPtrArray) expired = g_ptr_array_new_with_free_func ((GDestroyNotify) sbx_egress_conn_unref);
  gint64 now = now_us ();
  gint64 idle = (gint64) self->limits.idle_timeout_ms * 1000;
  GHashTableIter iter;
  gpointer key;

  g_mutex_lock (&self->lock);
  g_hash_table_iter_init (&iter, self->conns);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    {
      Conn *c = key;

      if (c->held)
        continue;   /* the host's answer (or its timeout, or the revoke) ends it */
      if ((c->head_deadline != 0 && now > c->head_deadline) || now - c->last_activity > idle)
        g_ptr_array_add (expired, sbx_egress_conn_ref (c));
      else if (now - c->last_activity > RELAY_IDLE_US)
        sbx_egress_relay_idle (c);
    }
  g_mutex_unlock (&self->lock);
  for (guint i = 0; i < expired->len; i++)
    sbx_egress_conn_close (expired->pdata[i]);
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
  g_autoptr(GPtrArray) all = g_ptr_array_new_with_free_func ((GDestroyNotify) sbx_egress_conn_unref);
  GHashTableIter iter;
  gpointer key;

  g_mutex_lock (&self->lock);
  g_hash_table_iter_init (&iter, self->conns);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    g_ptr_array_add (all, sbx_egress_conn_ref (key));
  g_mutex_unlock (&self->lock);
  for (guint i = 0; i < all->len; i++)
    sbx_egress_conn_close (all->pdata[i]);
  for (guint i = 0; i < self->listeners->len; i++)
    sbx_egress_listener_close (self->listeners->pdata[i]);
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
  self->pipe_pool = g_array_new (FALSE, FALSE, sizeof (SbxEgressPipe));
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
  sbx_egress_pipe_pool_free (self);
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
  e = g_new0 (Exec, 1);
  e->id = g_strdup (execution_id);
  e->all = targets == NULL;
  e->targets = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  e->conns = g_ptr_array_new_with_free_func ((GDestroyNotify) sbx_egress_conn_unref);
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
  hash = sbx_egress_sha256_hex (b64);
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
    sbx_egress_conn_close (b->conns->pdata[i]);
  for (guint i = listeners->len; i-- > 0;)
    {
      Listener *l = listeners->pdata[i];

      if (l->exec_id != NULL && strcmp (l->exec_id, b->exec_id) == 0)
        {
          g_ptr_array_remove_index_fast (listeners, i);
          sbx_egress_listener_close (l);
        }
    }
  return G_SOURCE_REMOVE;
}

gboolean
sbx_egress_proxy_watch (SbxEgressProxy              *self,
                        const char                  *execution_id,
                        const SbxEgressDenialSinkV1 *sink)
{
  Exec *e;

  if (execution_id == NULL || sink == NULL || sink->struct_size < SBX_EGRESS_DENIAL_SINK_V1_MIN_SIZE
      || sink->denied == NULL)
    return FALSE;
  g_mutex_lock (&self->lock);
  e = g_hash_table_lookup (self->execs, execution_id);
  if (e != NULL)
    {
      e->sink.struct_size = sizeof e->sink;
      e->sink.denied = sink->denied;
      e->sink.data = sink->data;
      /* an older host's sink ends before ask: it is never asked */
      e->sink.ask = SBX_ABI_HAS (sink, SbxEgressDenialSinkV1, ask) ? sink->ask : NULL;
    }
  g_mutex_unlock (&self->lock);
  return e != NULL;
}

gboolean
sbx_egress_proxy_ask (SbxEgressProxy      *self,
                      const char          *execution_id,
                      guint32              operation,
                      const char          *target,
                      const char          *mechanism,
                      const char          *reason,
                      SbxEgressAnswerFunc *answer,
                      void                *ticket)
{
  SbxEgressDenialV1 request = { 0 };
  gboolean asked = FALSE;
  Exec *e;

  if (execution_id == NULL)
    return FALSE;
  g_mutex_lock (&self->lock);
  e = self->closing ? NULL : g_hash_table_lookup (self->execs, execution_id);
  if (e != NULL && e->sink.ask != NULL)
    {
      request.struct_size = sizeof request;
      request.operation = operation;
      request.flags = SBX_ABI_DENIAL_APPROVABLE;
      request.target = target;
      request.mechanism = mechanism;
      request.reason = reason;
      e->sink.ask (e->sink.data, &request, answer, ticket);
      asked = TRUE;
    }
  g_mutex_unlock (&self->lock);
  return asked;
}

void
sbx_egress_proxy_deny (SbxEgressProxy *self,
                       const char     *execution_id,
                       guint32         operation,
                       guint32         flags,
                       const char     *target,
                       const char     *mechanism,
                       const char     *reason)
{
  Exec *e;

  if (execution_id == NULL)
    return;
  g_mutex_lock (&self->lock);
  e = g_hash_table_lookup (self->execs, execution_id);
  if (e != NULL)
    sbx_egress_exec_deny_locked (e, operation, flags, target, mechanism, reason);
  g_mutex_unlock (&self->lock);
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
  e->conns = g_ptr_array_new_with_free_func ((GDestroyNotify) sbx_egress_conn_unref);
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

guint
sbx_egress_proxy_get_n_pooled_pipes (SbxEgressProxy *self)
{
  return (guint) g_atomic_int_get (&self->n_pooled);
}
