/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Executor sets with an egress route (see sbx-executor-egress-private.h):
 * the wrapper around one egress extension's route, and the per-run
 * authorization.  Like sbx-backend.c for backends, this is the only code
 * that calls an egress vtable; every SBX_STATUS_* + set_error() becomes one
 * GError naming the plugin, the extension and the operation.
 *
 * Secrets: the route's upstream credentials go to the plugin once (start)
 * and are wiped here; each execution's proxy credential exists only in the
 * child's environment copy, which is wiped when the run ends.  Neither is
 * ever part of an error message, a report or an event.
 */
#include "sbx-executor-egress-private.h"
#include "sbx-executor-ask-private.h"

#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include <gio/gio.h>

#include "sbx-compile-report-private.h"
#include "sbx-egress-route-private.h"
#include "sbx-executor-set.h"
#include "sbx-run-result-private.h"
#include "sbx-grant-private.h"
#include "sbx-netrules-private.h"
#include "sbx-plugin-private.h"
#include "sbx-plugin-host-private.h"
#include "sbx-registry-state-private.h"

struct _SbxEgress
{
  gatomicrefcount          ref;
  SbxPlugin               *plugin;        /* (owned) */
  char                    *extension;
  const SbxEgressVTableV1 *vtable;
  char                    *fingerprint;
  gboolean                 target_guarantee;
  gboolean                 address_guarantee;
  char                    *text;          /* the route without secrets, for reports */

  GMutex                   lock;
  void                    *route;         /* (lock) the plugin's; NULL once stopped */
  guint                    users;         /* (lock) calls in flight on route */
  GCond                    idle;          /* users dropped to 0 */
};

SbxEgress *
sbx_egress_start (SbxRegistry     *registry,
                  const char      *extension,
                  SbxEgressRoute  *route,
                  SbxProfile      *profile,
                  GError         **error)
{
  g_autoptr(SbxPlugin) plugin = NULL;
  const SbxEgressVTableV1 *vtable = NULL;
  SbxEgressInfoV1 info = { 0 };
  SbxHostCall call;
  void *plugin_route = NULL;
  char *config;
  int32_t status;
  SbxEgress *self;

  g_return_val_if_fail (SBX_IS_REGISTRY (registry), NULL);
  g_return_val_if_fail (route != NULL, NULL);

  if (extension == NULL)
    extension = SBX_EGRESS_DEFAULT_EXTENSION;
  if (sbx_profile_get_isolation (profile) == SBX_ISOLATION_UNCONFINED)
    {
      g_set_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_INVALID_OPTIONS,
                   "An egress route needs a sandboxed profile: an Unconfined one leaves the "
                   "network open, so nothing would keep it to the route %s",
                   sbx_egress_route_to_string (route));
      return NULL;
    }
  plugin = sbx_registry_find_egress (registry, extension, &vtable);
  if (plugin == NULL)
    {
      g_set_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_INVALID_OPTIONS,
                   "No loaded egress extension is called “%s”: the route %s cannot be served "
                   "(is the egress-http plugin installed?)", extension,
                   sbx_egress_route_to_string (route));
      return NULL;
    }

  info.struct_size = sizeof info;
  config = sbx_egress_route_dup_plugin_config (route);
  sbx_host_call_init (&call, plugin->name, extension, "start", NULL);
  status = vtable->start (plugin->ctx, &call, config, &plugin_route, &info);
  sbx_egress_route_config_free (config);
  if (status != SBX_STATUS_OK)
    {
      g_autoptr(GError) plugin_error = NULL;

      sbx_host_call_fail (&call, status, &plugin_error);
      sbx_host_call_clear (&call);
      g_set_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_INVALID_OPTIONS,
                   "The egress route %s cannot start: %s", sbx_egress_route_to_string (route),
                   plugin_error->message);
      return NULL;
    }
  sbx_host_call_clear (&call);

  /* The plugin must have understood the route the core validated: the same
   * fingerprint (it covers kind, endpoint and the address guarantee). */
  if (info.fingerprint == NULL || strcmp (info.fingerprint, sbx_egress_route_get_fingerprint (route)) != 0)
    {
      g_set_error (error, SBX_EXECUTOR_SET_ERROR, SBX_EXECUTOR_SET_ERROR_INVALID_OPTIONS,
                   "Egress extension “%s” started the route %s with fingerprint “%s”, not the "
                   "route's “%s”; refusing it", extension, sbx_egress_route_to_string (route),
                   info.fingerprint != NULL && g_utf8_validate (info.fingerprint, -1, NULL)
                   ? info.fingerprint : "(none)",
                   sbx_egress_route_get_fingerprint (route));
      g_free (info.fingerprint);
      vtable->stop (plugin->ctx, plugin_route);
      return NULL;
    }

  self = g_new0 (SbxEgress, 1);
  g_atomic_ref_count_init (&self->ref);
  g_mutex_init (&self->lock);
  g_cond_init (&self->idle);
  self->plugin = g_steal_pointer (&plugin);
  self->extension = g_strdup (extension);
  self->vtable = vtable;
  self->fingerprint = info.fingerprint;
  /* The route's own guarantees bound the plugin's claims. */
  self->target_guarantee = info.target_guarantee != 0 && sbx_egress_route_get_target_guarantee (route);
  self->address_guarantee = info.address_guarantee != 0 && sbx_egress_route_get_address_guarantee (route);
  self->text = g_strdup (sbx_egress_route_to_string (route));
  self->route = plugin_route;
  return self;
}

SbxEgress *
sbx_egress_ref (SbxEgress *self)
{
  g_atomic_ref_count_inc (&self->ref);
  return self;
}

void
sbx_egress_close (SbxEgress *self)
{
  void *route;

  if (self == NULL)
    return;
  g_mutex_lock (&self->lock);
  route = g_steal_pointer (&self->route);
  while (self->users > 0)
    g_cond_wait (&self->idle, &self->lock);
  g_mutex_unlock (&self->lock);
  if (route != NULL)
    self->vtable->stop (self->plugin->ctx, route);
}

void
sbx_egress_unref (SbxEgress *self)
{
  if (self == NULL || !g_atomic_ref_count_dec (&self->ref))
    return;
  sbx_egress_close (self);
  sbx_plugin_unref (self->plugin);
  g_free (self->extension);
  g_free (self->fingerprint);
  g_free (self->text);
  g_mutex_clear (&self->lock);
  g_cond_clear (&self->idle);
  g_free (self);
}

/* A use of the route: NULL once it is stopped. */
static void *
route_enter (SbxEgress *self)
{
  void *route;

  g_mutex_lock (&self->lock);
  route = self->route;
  if (route != NULL)
    self->users++;
  g_mutex_unlock (&self->lock);
  return route;
}

static void
route_leave (SbxEgress *self)
{
  g_mutex_lock (&self->lock);
  if (--self->users == 0)
    g_cond_broadcast (&self->idle);
  g_mutex_unlock (&self->lock);
}

guint16
sbx_egress_policy_proxy_port (SbxEgress  *self,
                              SbxProfile *profile)
{
  if (self == NULL || sbx_profile_get_network (profile) == SBX_ACCESS_DENY)
    return 0;
  return SBX_EGRESS_PROXY_PORT;
}

SbxGuarantees
sbx_egress_required_guarantees (SbxEgress  *self,
                                SbxProfile *profile)
{
  return sbx_egress_policy_proxy_port (self, profile) != 0 ? SBX_GUARANTEE_NETWORK_BOUNDARY : 0;
}

const char *
sbx_egress_grant_route (SbxEgress *self)
{
  return self != NULL ? self->fingerprint : SBX_GRANT_ROUTE_DIRECT;
}

SbxGuarantees
sbx_egress_compose_guarantees (SbxEgress        *self,
                               SbxProfile       *profile,
                               SbxCompileReport *report,
                               SbxGuarantees     bits)
{
  gboolean target;

  /* Network=Deny compiles no proxy: nothing to compose. */
  if (sbx_egress_policy_proxy_port (self, profile) == 0)
    return bits;
  target = (bits & SBX_GUARANTEE_TARGET_NETWORK) != 0 && self->target_guarantee;
  if (!target)
    bits &= ~SBX_GUARANTEE_TARGET_NETWORK;
  if (!(target && self->address_guarantee))
    bits &= ~SBX_GUARANTEE_ADDRESS_NETWORK;
  if (report != NULL)
    {
      g_autofree char *detail = NULL;

      if (target)
        detail = g_strdup_printf ("network reaches only the %s proxy inside the sandbox (route %s, "
                                  "%s): each run is authorized for its own targets, with its own "
                                  "credential%s", self->extension, self->text, self->fingerprint,
                                  self->address_guarantee
                                  ? "; names resolving to non-public addresses are refused"
                                  : "; the upstream resolves names, so non-public addresses are "
                                    "not refused here (address-network does not hold)");
      else
        detail = g_strdup_printf ("route %s (%s) is configured, but the backend cannot keep the "
                                  "network to it: target-network and address-network do not hold",
                                  self->text, self->fingerprint);
      sbx_compile_report_add_entry (report, "egress-route",
                                    target ? SBX_REPORT_STATUS_ENFORCED : SBX_REPORT_STATUS_UNENFORCED,
                                    detail);
      sbx_compile_report_set_guarantees (report, bits);
    }
  return bits;
}

/* ------------------------------------------------------------------------- */
/* Runs                                                                       */
/* ------------------------------------------------------------------------- */

static char *
fresh_route_execution_id (GError **error)
{
  guint8 random[18];
  g_autofree char *b64 = NULL;
  gsize len;

  if (getrandom (random, sizeof random, 0) != (ssize_t) sizeof random)
    {
      g_set_error_literal (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_SPAWN_FAILED,
                           "Cannot make an egress execution id: getrandom failed");
      return NULL;
    }
  b64 = g_base64_encode (random, sizeof random);
  len = strlen (b64);
  while (len > 0 && b64[len - 1] == '=')
    b64[--len] = '\0';
  for (char *p = b64; *p != '\0'; p++)
    *p = *p == '+' ? '-' : *p == '/' ? '_' : *p;
  return g_strconcat ("route-", b64, NULL);
}

static void
wipe_strv (char **v)
{
  for (gsize i = 0; v != NULL && v[i] != NULL; i++)
    explicit_bzero (v[i], strlen (v[i]));
  g_strfreev (v);
}

/* @env with every NAME=value of @set replacing the same NAME in place or
 * appended, in @set's order. */
static char **
env_with (const char *const *env,
          const char *const *set)
{
  GPtrArray *out = g_ptr_array_new ();

  for (gsize i = 0; env != NULL && env[i] != NULL; i++)
    {
      const char *eq = strchr (env[i], '=');
      gboolean replaced = FALSE;

      for (gsize k = 0; eq != NULL && set[k] != NULL; k++)
        if (strncmp (set[k], env[i], (gsize) (eq - env[i]) + 1) == 0)
          replaced = TRUE;
      if (!replaced)
        g_ptr_array_add (out, g_strdup (env[i]));
    }
  for (gsize k = 0; set[k] != NULL; k++)
    g_ptr_array_add (out, g_strdup (set[k]));
  g_ptr_array_add (out, NULL);
  return (char **) g_ptr_array_free (out, FALSE);
}

/* Listeners                                                                   */

static void
add_listen (SbxEgressRun *run,
            guint32       kind,
            GInetAddress *address,
            guint16       port,
            const char   *target)
{
  SbxListenV1 entry = { 0 };
  const guint8 *bytes = g_inet_address_to_bytes (address);
  gboolean v4 = g_inet_address_get_family (address) == G_SOCKET_FAMILY_IPV4;

  entry.struct_size = sizeof entry;
  entry.kind = kind;
  entry.family = v4 ? SBX_LISTEN_IPV4 : SBX_LISTEN_IPV6;
  memcpy (entry.address, bytes, v4 ? 4 : 16);
  entry.port = port;
  /* 127.0.0.0/8 and ::1 are on every namespace's lo once it is up */
  if (v4 ? bytes[0] != 127 : !g_inet_address_get_is_loopback (address))
    entry.flags |= SBX_LISTEN_F_ADD_ADDRESS;
  if (target != NULL)
    {
      g_ptr_array_add (run->listen_targets, g_strdup (target));
      entry.target = g_ptr_array_index (run->listen_targets, run->listen_targets->len - 1);
    }
  g_array_append_val (run->listens, entry);
}

/* A literal that can carry a forwarder: not metadata (never reachable),
 * not IPv6 link-local (needs a scope), multicast or IPv4-mapped (not a
 * host of its own). */
static gboolean
literal_can_forward (const char   *host,
                     GInetAddress *address)
{
  if (sbx_netrules_classify_literal (host) == SBX_NETRULES_CLASS_METADATA)
    return FALSE;
  if (g_inet_address_get_is_multicast (address) || g_inet_address_get_is_any (address))
    return FALSE;
  if (g_inet_address_get_family (address) == G_SOCKET_FAMILY_IPV6)
    {
      const guint8 *b = g_inet_address_to_bytes (address);
      static const guint8 mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

      if (g_inet_address_get_is_link_local (address) || memcmp (b, mapped, 12) == 0)
        return FALSE;
    }
  return TRUE;
}

/* The stub, and with @targets one forwarder per target (see the header). */
static void
plan_listeners (SbxEgressRun      *run,
                const char *const *targets)
{
  g_autoptr(GHashTable) name_index = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GHashTable) taken = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GInetAddress) dns = g_inet_address_new_from_string (SBX_EGRESS_DNS_ADDRESS);
  static const guint8 proxy_address[4] = { 127, 0, 0, 1 };
  guint n_forwarders = 0;

  run->listens = g_array_new (FALSE, TRUE, sizeof (SbxListenV1));
  run->listen_targets = g_ptr_array_new_with_free_func (g_free);
  add_listen (run, SBX_LISTEN_DNS_UDP, dns, 53, NULL);
  /* the stub's TCP listener comes last (see below); no forwarder takes its
   * address and port */
  g_hash_table_add (taken, g_strdup (SBX_EGRESS_DNS_ADDRESS " 53"));
  for (gsize i = 0; targets != NULL && targets[i] != NULL && n_forwarders < SBX_EGRESS_MAX_FORWARDERS; i++)
    {
      g_autofree char *host = NULL;
      g_autofree char *key = NULL;
      g_autoptr(GInetAddress) address = NULL;
      guint16 port = 0;
      gboolean literal = FALSE;

      if (!sbx_netrules_parse_target (targets[i], &host, &port, &literal, NULL))
        continue;
      if (literal)
        {
          address = g_inet_address_new_from_string (host);
          if (address == NULL || !literal_can_forward (host, address))
            continue;
        }
      else
        {
          gpointer index = g_hash_table_lookup (name_index, host);
          guint8 bytes[4] = { 127, 83, 0, 0 };
          guint n;

          if (index == NULL)
            {
              index = GUINT_TO_POINTER (g_hash_table_size (name_index) + 1);
              g_hash_table_insert (name_index, g_strdup (host), index);
            }
          n = GPOINTER_TO_UINT (index);
          bytes[2] = (guint8) (n >> 8);
          bytes[3] = (guint8) (n & 0xff);
          address = g_inet_address_new_from_bytes (bytes, G_SOCKET_FAMILY_IPV4);
        }
      {
        g_autofree char *text = g_inet_address_to_string (address);

        key = g_strdup_printf ("%s %u", text, port);
      }
      /* one listener per address and port; never over the proxy's */
      if (g_hash_table_contains (taken, key))
        continue;
      if (port == SBX_EGRESS_PROXY_PORT && g_inet_address_get_family (address) == G_SOCKET_FAMILY_IPV4 &&
          memcmp (g_inet_address_to_bytes (address), proxy_address, 4) == 0)
        continue;
      g_hash_table_add (taken, g_steal_pointer (&key));
      add_listen (run, SBX_LISTEN_FORWARD, address, port, targets[i]);
      n_forwarders++;
    }
  /* After every DNS_UDP and FORWARD entry: a plugin older than this kind
   * stops at it, and has then served the rest (see SbxListenV1). */
  add_listen (run, SBX_LISTEN_DNS_TCP, dns, 53, NULL);
  run->listen_fds = g_new (int32_t, run->listens->len);
  for (guint i = 0; i < run->listens->len; i++)
    run->listen_fds[i] = -1;
}

static void
close_listen_fds (SbxEgressRun *run)
{
  for (guint i = 0; run->listens != NULL && i < run->listens->len; i++)
    if (run->listen_fds[i] >= 0)
      {
        close (run->listen_fds[i]);
        run->listen_fds[i] = -1;
      }
}

void
sbx_egress_run_spawn_listens (SbxEgressRun       *run,
                              const SbxListenV1 **listens,
                              int32_t           **fds,
                              guint32            *n_listens)
{
  *listens = NULL;
  *fds = NULL;
  *n_listens = 0;
  if (run == NULL || run->listens == NULL || run->execution_id == NULL)
    return;
  close_listen_fds (run);   /* a second spawn of one run never inherits sockets */
  *listens = (const SbxListenV1 *) (gpointer) run->listens->data;
  *fds = run->listen_fds;
  *n_listens = run->listens->len;
}

/* Serves the run's other listeners (the fds are taken). */
static void
serve_listeners (SbxEgressRun *run,
                 void         *route)
{
  const SbxEgressVTableV1 *vtable = run->egress->vtable;
  g_autofree int32_t *fds = NULL;
  gboolean any = FALSE;
  SbxHostCall call;
  int32_t status;

  if (run->listens == NULL)
    return;
  for (guint i = 0; i < run->listens->len; i++)
    any |= run->listen_fds[i] >= 0;
  if (!any)
    return;
  if (!SBX_ABI_HAS (vtable, SbxEgressVTableV1, serve_listeners) || vtable->serve_listeners == NULL)
    {
      /* a plugin without the slot: nothing behind them, so no route */
      close_listen_fds (run);
      return;
    }
  fds = g_memdup2 (run->listen_fds, sizeof (int32_t) * run->listens->len);
  for (guint i = 0; i < run->listens->len; i++)
    run->listen_fds[i] = -1;
  sbx_host_call_init (&call, run->egress->plugin->name, run->egress->extension, "serve_listeners", NULL);
  status = vtable->serve_listeners (run->egress->plugin->ctx, &call, route, run->execution_id,
                                    (const SbxListenV1 *) (gpointer) run->listens->data, fds,
                                    run->listens->len);
  if (status != SBX_STATUS_OK)
    {
      g_autoptr(GError) plugin_error = NULL;

      /* The stub and forwarders are then missing: names and literals of the
       * run reach nothing but through the proxy. */
      sbx_host_call_fail (&call, status, &plugin_error);
      g_warning ("egress: %s", plugin_error->message);
    }
  sbx_host_call_clear (&call);
}

G_STATIC_ASSERT (SBX_ABI_DENIAL_CONNECT == (guint) SBX_DENIAL_OPERATION_CONNECT);
G_STATIC_ASSERT (SBX_ABI_DENIAL_RESOLVE == (guint) SBX_DENIAL_OPERATION_RESOLVE);

SbxDenial *
sbx_egress_denial_new (const SbxEgressDenialV1 *denial,
                       SbxAccess                network)
{
  g_autofree char *target = NULL;
  g_autofree char *reason = NULL;
  const char *mechanism;
  gboolean approvable;
  SbxDenialOperation operation;

  if (denial->struct_size < SBX_EGRESS_DENIAL_V1_MIN_SIZE || denial->target == NULL)
    return NULL;
  switch (denial->operation)
    {
    case SBX_ABI_DENIAL_CONNECT:
      operation = SBX_DENIAL_OPERATION_CONNECT;
      break;
    case SBX_ABI_DENIAL_RESOLVE:
      operation = SBX_DENIAL_OPERATION_RESOLVE;
      break;
    default:
      return NULL;   /* an operation newer than this host */
    }
  /* The plugin's words are untrusted text: valid UTF-8, bounded, no
   * control characters (they end up on a terminal). */
  target = g_utf8_make_valid (denial->target, MIN (strlen (denial->target), 512));
  reason = denial->reason != NULL
           ? g_utf8_make_valid (denial->reason, MIN (strlen (denial->reason), 512)) : NULL;
  for (char *p = target; *p != '\0'; p++)
    if ((guchar) *p < 0x20 || *p == 0x7f)
      *p = '?';
  for (char *p = reason; p != NULL && *p != '\0'; p++)
    if ((guchar) *p < 0x20 || *p == 0x7f)
      *p = ' ';
  mechanism = denial->mechanism != NULL && strcmp (denial->mechanism, "dns-stub") == 0 ? "dns-stub"
              : denial->mechanism != NULL && strcmp (denial->mechanism, "forwarder") == 0 ? "forwarder"
              : "egress-proxy";
  approvable = (denial->flags & SBX_ABI_DENIAL_APPROVABLE) != 0 && operation == SBX_DENIAL_OPERATION_CONNECT;
  if (operation == SBX_DENIAL_OPERATION_CONNECT)
    {
      g_autofree char *canonical = sbx_netrules_canonical_target (target, NULL);

      /* Only a canonical target can be a grant's: anything else is
       * reported as it came and opens nothing. */
      if (canonical == NULL || strcmp (canonical, target) != 0)
        approvable = FALSE;
      if (approvable && network == SBX_ACCESS_DENY)
        return sbx_denial_new (operation, target + strlen ("tcp:"), mechanism, NULL, NULL,
                               "the profile denies network");
      if (approvable)
        return sbx_denial_new (operation, target + strlen ("tcp:"), mechanism,
                               "network.proxy-target.v1", target, "network is gated");
      return sbx_denial_new (operation, g_str_has_prefix (target, "tcp:") ? target + 4 : target,
                             mechanism, NULL, NULL, reason);
    }
  return sbx_denial_new (operation, target, mechanism, NULL, NULL, reason);
}

/* The data of a run's denial sink: on the heap, because the SbxEgressRun
 * itself is moved with its admission. */
typedef struct
{
  SbxDenialLog      *log;       /* (owned) */
  SbxAccess          network;   /* the profile's network: what a grant can open */
  SbxDecisionBroker *broker;    /* (nullable) (owned) an asking run's questions */
} DenialWatch;

static void
denial_watch_free (gpointer data)
{
  DenialWatch *watch = data;

  sbx_denial_log_unref (watch->log);
  g_clear_pointer (&watch->broker, sbx_decision_broker_unref);
  g_free (watch);
}

/* SbxEgressDenialSinkV1.denied: from any thread of the plugin. */
static void
run_denied (void                    *data,
            const SbxEgressDenialV1 *denial)
{
  DenialWatch *watch = data;
  g_autoptr(SbxDenial) d = denial != NULL ? sbx_egress_denial_new (denial, watch->network) : NULL;

  if (d != NULL)
    sbx_denial_log_add (watch->log, d);
}

/* SbxEgressDenialSinkV1.ask: from any thread of the plugin, with its lock
 * held (answers only queue).  Only a refusal that names a grant (a name:
 * sbx_ask_resolve_question) is asked; anything else is denied at once. */
static void
run_ask (void                    *data,
         const SbxEgressDenialV1 *request,
         SbxEgressAnswerFunc     *answer,
         void                    *ticket)
{
  DenialWatch *watch = data;
  g_autoptr(SbxDenial) d = request == NULL ? NULL : request->operation == SBX_ABI_DENIAL_RESOLVE
                           ? sbx_ask_resolve_question (request->target, watch->network)
                           : sbx_egress_denial_new (request, watch->network);

  sbx_decision_broker_ask_or_deny (watch->broker, d, answer, ticket);
}

G_STATIC_ASSERT (SBX_ABI_DECISION_DENY == (guint) SBX_DECISION_DENY);
G_STATIC_ASSERT (SBX_ABI_DECISION_ONCE == (guint) SBX_DECISION_ONCE);
G_STATIC_ASSERT (SBX_ABI_DECISION_FOR_RUN == (guint) SBX_DECISION_FOR_RUN);

/* Asks the plugin for every refusal of the run (an optional slot: without
 * it only the first denial is known, from revoke), and, for an asking run,
 * to ask before refusing. */
static void
watch_denials (SbxEgressRun *run,
               SbxProfile   *profile,
               void         *route)
{
  const SbxEgressVTableV1 *vtable = run->egress->vtable;
  SbxEgressDenialSinkV1 sink = { 0 };
  DenialWatch *watch;

  if (!SBX_ABI_HAS (vtable, SbxEgressVTableV1, watch_denials) || vtable->watch_denials == NULL)
    return;
  watch = g_new0 (DenialWatch, 1);
  watch->log = sbx_denial_log_new ();
  watch->network = sbx_profile_get_network (profile);
  sink.struct_size = sizeof sink;
  sink.denied = run_denied;
  sink.data = watch;
  if (run->broker != NULL)
    {
      watch->broker = sbx_decision_broker_ref (run->broker);
      sink.ask = run_ask;
    }
  if (vtable->watch_denials (run->egress->plugin->ctx, route, run->execution_id, &sink) != SBX_STATUS_OK)
    {
      denial_watch_free (watch);
      return;
    }
  run->watch = watch;
  run->denials = sbx_denial_log_ref (watch->log);
}

gboolean
sbx_egress_run_begin (SbxEgressRun       *run,
                      SbxEgress          *egress,
                      SbxProfile         *profile,
                      const char         *execution_id,
                      const char *const  *targets,
                      const char *const  *env,
                      SbxAskSettings     *ask,
                      GMainContext       *ask_context,
                      GError            **error)
{
  static const char *const no_target[] = { NULL };
  g_autofree char *fresh_id = NULL;
  gboolean asking;
  g_autofree char *escaped_id = NULL;
  g_autofree char *url = NULL;
  char *credential = NULL;
  SbxHostCall call;
  int32_t status;
  void *route;

  memset (run, 0, sizeof *run);
  /* gated host sockets and gated file reads are asked with or without a
   * route (the backend) */
  if (sbx_ask_gates_host_sockets (ask, profile) || sbx_ask_gates_files (ask, profile))
    run->broker = sbx_decision_broker_new (ask, ask_context);
  if (egress == NULL)
    return TRUE;
  if (targets != NULL && targets[0] == NULL)
    targets = NULL;
  /* Asking is for a Gated network only: Allow has nothing to ask, and a
   * Deny dimension is never asked. */
  asking = sbx_ask_settings_get_ask (ask) && sbx_profile_get_network (profile) == SBX_ACCESS_GATED;
  if (targets == NULL && asking)
    {
      /* no grant: authorized for no target yet, so the proxy is there to
       * hold and ask (without asking such a run gets no proxy at all) */
      targets = no_target;
      if (execution_id == NULL)
        {
          fresh_id = fresh_route_execution_id (error);
          if (fresh_id == NULL)
            return FALSE;
          execution_id = fresh_id;
        }
    }
  else if (targets == NULL)
    {
      if (sbx_profile_get_network (profile) != SBX_ACCESS_ALLOW)
        return TRUE;   /* nothing approved: no credential, the listener stays closed */
      fresh_id = fresh_route_execution_id (error);
      if (fresh_id == NULL)
        return FALSE;
      execution_id = fresh_id;
    }

  route = route_enter (egress);
  if (route == NULL)
    {
      g_set_error_literal (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_CLOSED,
                           "The executor set's egress route is stopped");
      return FALSE;
    }
  sbx_host_call_init (&call, egress->plugin->name, egress->extension, "authorize", NULL);
  status = egress->vtable->authorize (egress->plugin->ctx, &call, route, execution_id, targets, &credential);
  route_leave (egress);
  if (status != SBX_STATUS_OK || credential == NULL)
    {
      g_autoptr(GError) plugin_error = NULL;

      if (credential != NULL)
        {
          explicit_bzero (credential, strlen (credential));
          g_free (credential);
        }
      sbx_host_call_fail (&call, status != SBX_STATUS_OK ? status : SBX_STATUS_FAILED, &plugin_error);
      sbx_host_call_clear (&call);
      g_set_error (error, SBX_EXECUTOR_ERROR, SBX_EXECUTOR_ERROR_SPAWN_FAILED,
                   "Cannot authorize the run on the egress route: %s", plugin_error->message);
      return FALSE;
    }
  sbx_host_call_clear (&call);

  run->egress = sbx_egress_ref (egress);
  run->execution_id = g_strdup (execution_id);
  if (asking && run->broker == NULL)
    run->broker = sbx_decision_broker_new (ask, ask_context);
  route = route_enter (egress);
  if (route != NULL)
    {
      watch_denials (run, profile, route);
      route_leave (egress);
    }
  plan_listeners (run, targets);
  escaped_id = g_uri_escape_string (execution_id, NULL, FALSE);
  {
    g_autofree char *escaped_credential = g_uri_escape_string (credential, NULL, FALSE);

    url = g_strdup_printf ("http://%s:%s@127.0.0.1:%u", escaped_id, escaped_credential,
                           (unsigned) SBX_EGRESS_PROXY_PORT);
    explicit_bzero (escaped_credential, strlen (escaped_credential));
  }
  explicit_bzero (credential, strlen (credential));
  g_free (credential);
  {
    char *set[9];
    static const char *const names[] = { "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
                                         "http_proxy", "https_proxy", "all_proxy" };

    for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
      set[i] = g_strconcat (names[i], "=", url, NULL);
    set[6] = g_strdup ("NO_PROXY=");
    set[7] = g_strdup ("no_proxy=");
    set[8] = NULL;
    run->envp = env_with (env, (const char *const *) set);
    for (gsize i = 0; set[i] != NULL; i++)
      {
        explicit_bzero (set[i], strlen (set[i]));
        g_free (set[i]);
      }
  }
  explicit_bzero (url, strlen (url));
  return TRUE;
}

void
sbx_egress_run_serve (gpointer data,
                      int      fd)
{
  SbxEgressRun *run = data;
  SbxHostCall call;
  int32_t status;
  void *route;

  /* Not authorized (or no route): nothing may be served in that sandbox. */
  if (run == NULL || run->egress == NULL || run->execution_id == NULL)
    {
      if (run != NULL)
        close_listen_fds (run);
      if (fd >= 0)
        close (fd);
      return;
    }
  route = route_enter (run->egress);
  if (route == NULL)
    {
      close_listen_fds (run);
      if (fd >= 0)
        close (fd);
      return;
    }
  serve_listeners (run, route);
  if (fd < 0)
    {
      route_leave (run->egress);
      return;
    }
  sbx_host_call_init (&call, run->egress->plugin->name, run->egress->extension, "serve", NULL);
  status = run->egress->vtable->serve (run->egress->plugin->ctx, &call, route, run->execution_id, fd);
  route_leave (run->egress);
  if (status != SBX_STATUS_OK)
    {
      g_autoptr(GError) plugin_error = NULL;

      /* The child then finds no proxy: its connections are refused. */
      sbx_host_call_fail (&call, status, &plugin_error);
      g_warning ("egress: %s", plugin_error->message);
    }
  else
    g_atomic_int_inc (&run->served);
  sbx_host_call_clear (&call);
}

/* "tcp:host:port (reason)" or "tcp:host:port reason": the target must be a
 * canonical one; anything else is recorded as the unparseable target. */
static void
parse_denial (const char  *text,
              char       **target,
              char       **reason)
{
  g_autofree char *valid = g_utf8_make_valid (text, MIN (strlen (text), 2048));
  const char *space = strchr (valid, ' ');
  g_autofree char *first = space != NULL ? g_strndup (valid, space - valid) : g_strdup (valid);
  g_autofree char *canonical = sbx_netrules_canonical_target (first, NULL);
  g_autofree char *rest = NULL;

  if (canonical != NULL && strcmp (canonical, first) == 0)
    {
      *target = g_steal_pointer (&first);
      rest = g_strdup (space != NULL ? space + 1 : "");
    }
  else
    {
      *target = g_strdup (SBX_NETRULES_UNPARSEABLE_TARGET);
      rest = g_strdup (valid);
    }
  g_strstrip (rest);
  if (rest[0] == '(' && rest[strlen (rest) - 1] == ')')
    {
      rest[strlen (rest) - 1] = '\0';
      memmove (rest, rest + 1, strlen (rest));
    }
  for (char *p = rest; *p != '\0'; p++)
    if ((guchar) *p < 0x20 || *p == 0x7f)
      *p = ' ';
  *reason = rest[0] != '\0' ? g_steal_pointer (&rest) : NULL;
}

void
sbx_egress_run_end (SbxEgressRun *run)
{
  char *denial = NULL;
  void *route;

  /* The run's end denies every pending question before the revoke. */
  if (run->broker != NULL)
    sbx_decision_broker_close (run->broker);
  if (run->egress == NULL || run->execution_id == NULL)
    return;
  route = route_enter (run->egress);
  if (route != NULL)
    {
      /* Revoke has no SbxHostCall: its failure only means the execution
       * was already gone (the route was stopped). */
      run->egress->vtable->revoke (run->egress->plugin->ctx, route, run->execution_id, &denial);
      route_leave (run->egress);
    }
  if (denial != NULL)
    {
      parse_denial (denial, &run->denial_target, &run->denial_reason);
      g_free (denial);
    }
  /* revoke returned: the plugin reports nothing more, the log is final. */
  g_clear_pointer (&run->watch, denial_watch_free);
  g_clear_pointer (&run->execution_id, g_free);
  g_clear_pointer (&run->envp, wipe_strv);
  close_listen_fds (run);
}

void
sbx_egress_run_clear (SbxEgressRun *run)
{
  sbx_egress_run_end (run);
  close_listen_fds (run);
  g_clear_pointer (&run->listens, g_array_unref);
  g_clear_pointer (&run->listen_targets, g_ptr_array_unref);
  g_clear_pointer (&run->listen_fds, g_free);
  g_clear_pointer (&run->envp, wipe_strv);
  g_clear_pointer (&run->denial_target, g_free);
  g_clear_pointer (&run->denial_reason, g_free);
  g_clear_pointer (&run->watch, denial_watch_free);
  g_clear_pointer (&run->denials, sbx_denial_log_unref);
  if (run->broker != NULL)
    sbx_decision_broker_close (run->broker);
  g_clear_pointer (&run->broker, sbx_decision_broker_unref);
  g_clear_pointer (&run->egress, sbx_egress_unref);
}

typedef struct
{
  guint64     run_id;
  const char *target;
  const char *reason;
} DenialEvent;

static void
add_denial_members (JsonBuilder *builder,
                    gpointer     data)
{
  const DenialEvent *ev = data;

  json_builder_set_member_name (builder, "run");
  json_builder_add_int_value (builder, (gint64) ev->run_id);
  json_builder_set_member_name (builder, "target");
  json_builder_add_string_value (builder, ev->target);
  if (ev->reason != NULL)
    {
      json_builder_set_member_name (builder, "reason");
      json_builder_add_string_value (builder, ev->reason);
    }
}

void
sbx_executor_report_network_denial (SbxExecutorShared *shared,
                                    const char        *key,
                                    guint64            run_id,
                                    SbxRunResult      *result,
                                    const char        *target,
                                    const char        *reason)
{
  DenialEvent ev = { run_id, target, reason };

  if (result != NULL)
    sbx_run_result_set_network_denial (result, target, reason);
  sbx_executor_shared_emit (shared, SBX_EVENT_NETWORK_DENIED, key, add_denial_members, &ev);
}

typedef struct
{
  guint64 run_id;
  guint64 dropped;
} DroppedEvent;

static void
add_dropped_members (JsonBuilder *builder,
                     gpointer     data)
{
  const DroppedEvent *ev = data;

  json_builder_set_member_name (builder, "run");
  json_builder_add_int_value (builder, (gint64) ev->run_id);
  json_builder_set_member_name (builder, "dropped");
  json_builder_add_int_value (builder, (gint64) MIN (ev->dropped, (guint64) G_MAXINT64));
}

void
sbx_executor_report_denials (SbxExecutorShared *shared,
                             const char        *key,
                             guint64            run_id,
                             SbxRunResult      *result,
                             SbxEgressRun      *run)
{
  g_autoptr(GPtrArray) denials = NULL;
  DroppedEvent dropped = { run_id, 0 };

  if (run->broker != NULL)
    sbx_executor_report_live_approvals (shared, key, run_id, result, run->broker);
  if (run->denials == NULL)
    return;
  if (result != NULL)
    sbx_run_result_set_denials (result, run->denials);
  denials = sbx_denial_log_snapshot (run->denials);
  for (guint i = 0; i < denials->len; i++)
    sbx_executor_shared_emit_denial (shared, key, run_id, denials->pdata[i]);
  dropped.dropped = sbx_denial_log_get_dropped (run->denials);
  if (dropped.dropped > 0)
    sbx_executor_shared_emit (shared, SBX_EVENT_DENIALS_DROPPED, key, add_dropped_members, &dropped);
}
