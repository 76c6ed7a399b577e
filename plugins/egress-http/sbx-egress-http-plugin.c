/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The egress-http plugin: one egress extension, "http-connect", mapping
 * SbxEgressVTableV1 onto SbxEgressProxy (sbx-egress-proxy.c).
 *
 * It requires SBX_HOST_FEATURE_EGRESS_V1 (every egress plugin must: the
 * egress vtable is provisional until a host implements the bit) and checks
 * the host table advertises it before doing anything.  No globals: the host
 * table lives in plugin_ctx, each route is one SbxEgressProxy.  A route's
 * DNS stub (sbx-egress-dns.c, its own thread) is made on the first
 * serve_listeners and kept in plugin_ctx next to the route, stopped with it.
 */
#include <sbx/sbx-plugin-abi.h>

#include "sbx-egress-proxy.h"
#include "sbx-egress-forward.h"

#include <string.h>
#include <unistd.h>

typedef struct
{
  const SbxHostV1 *host;
  GMutex           lock;
  GHashTable      *dns;      /* (lock) SbxEgressProxy -> SbxEgressDns (owned) */
} Plugin;

static SbxPluginInitFunc egress_http_init;
static SbxPluginFiniFunc egress_http_fini;
static SbxEgressStartFunc egress_http_start;
static SbxEgressAuthorizeFunc egress_http_authorize;
static SbxEgressServeFunc egress_http_serve;
static SbxEgressRevokeFunc egress_http_revoke;
static SbxEgressStopFunc egress_http_stop;
static SbxEgressServeListenersFunc egress_http_serve_listeners;
static SbxEgressWatchDenialsFunc egress_http_watch_denials;

static char *
host_strdup (const SbxHostV1 *host,
             const char      *s)
{
  size_t len = strlen (s) + 1;
  char *copy = host->alloc (len);

  if (copy != NULL)
    memcpy (copy, s, len);
  return copy;
}

static int32_t
egress_http_init (const SbxHostV1 *host,
                  void           **plugin_ctx)
{
  Plugin *plugin;

  if (host == NULL || host->struct_size < SBX_HOST_V1_MIN_SIZE || (host->features & SBX_HOST_FEATURE_EGRESS_V1) == 0)
    return SBX_STATUS_UNAVAILABLE;
  plugin = g_new0 (Plugin, 1);
  plugin->host = host;
  g_mutex_init (&plugin->lock);
  plugin->dns = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, (GDestroyNotify) sbx_egress_dns_free);
  *plugin_ctx = plugin;
  return SBX_STATUS_OK;
}

static void
egress_http_fini (void *plugin_ctx)
{
  Plugin *plugin = plugin_ctx;

  g_hash_table_unref (plugin->dns);
  g_mutex_clear (&plugin->lock);
  g_free (plugin);
}

/* The route's stub, made on first use; NULL only with @create FALSE. */
/* The stub's refusals are the execution's resolve denials.  Reported, a
 * refused name names no grant: the stub answers the names of targets
 * approved at spawn (host and port); only an asking run's question names
 * one (see sbx_egress_denial_new). */
static void
dns_refused (gpointer    data,
             const char *execution_id,
             const char *name)
{
  sbx_egress_proxy_deny (data, execution_id, SBX_ABI_DENIAL_RESOLVE, 0, name, "dns-stub",
                         "the sandbox resolves only the names of approved targets");
}

/* An asking execution's refused name is held and asked (the stub answers
 * it once approved; see SBX_DNS_APPROVED_ADDRESS for what that reaches). */
G_STATIC_ASSERT (SBX_EGRESS_DNS_DENY == SBX_ABI_DECISION_DENY);
G_STATIC_ASSERT (SBX_EGRESS_DNS_ONCE == SBX_ABI_DECISION_ONCE);
G_STATIC_ASSERT (SBX_EGRESS_DNS_FOR_RUN == SBX_ABI_DECISION_FOR_RUN);

static gboolean
dns_ask (gpointer           data,
         const char        *execution_id,
         const char        *name,
         SbxEgressDnsAnswer answer,
         void              *ticket)
{
  return sbx_egress_proxy_ask (data, execution_id, SBX_ABI_DENIAL_RESOLVE, name, "dns-stub",
                               "the sandbox resolves only the names of approved targets", answer, ticket);
}

static SbxEgressDns *
route_dns (Plugin  *plugin,
           void    *route,
           gboolean create)
{
  SbxEgressDns *dns;

  g_mutex_lock (&plugin->lock);
  dns = g_hash_table_lookup (plugin->dns, route);
  if (dns == NULL && create)
    {
      dns = sbx_egress_dns_new ();
      sbx_egress_dns_set_refused (dns, dns_refused, route);
      sbx_egress_dns_set_ask (dns, dns_ask, route);
      g_hash_table_insert (plugin->dns, route, dns);
    }
  g_mutex_unlock (&plugin->lock);
  return dns;
}

static int32_t
egress_http_start (void            *plugin_ctx,
                   SbxHostCall     *call,
                   const char      *route_config,
                   void           **route_out,
                   SbxEgressInfoV1 *info)
{
  Plugin *plugin = plugin_ctx;
  g_autoptr(GError) error = NULL;
  SbxEgressProxy *proxy;

  if (route_config == NULL || route_out == NULL || info == NULL || info->struct_size < SBX_EGRESS_INFO_V1_MIN_SIZE)
    {
      plugin->host->set_error (call, SBX_STATUS_INVALID, "http-connect: start: missing route config or info");
      return SBX_STATUS_INVALID;
    }
  proxy = sbx_egress_proxy_new (route_config, &error);
  if (proxy == NULL)
    {
      g_autofree char *message = g_strdup_printf ("http-connect: route: %s", error->message);

      plugin->host->set_error (call, SBX_STATUS_INVALID, message);
      return SBX_STATUS_INVALID;
    }
  info->target_guarantee = 1;
  info->address_guarantee = sbx_egress_proxy_get_address_guarantee (proxy) ? 1 : 0;
  info->fingerprint = host_strdup (plugin->host, sbx_egress_proxy_get_fingerprint (proxy));
  if (info->fingerprint == NULL)
    {
      sbx_egress_proxy_free (proxy);
      plugin->host->set_error (call, SBX_STATUS_NO_MEMORY, "http-connect: start: out of memory");
      return SBX_STATUS_NO_MEMORY;
    }
  *route_out = proxy;
  return SBX_STATUS_OK;
}

static int32_t
egress_http_authorize (void              *plugin_ctx,
                       SbxHostCall       *call,
                       void              *route,
                       const char        *execution_id,
                       const char *const *targets,
                       char             **credential_out)
{
  Plugin *plugin = plugin_ctx;
  g_autoptr(GError) error = NULL;
  g_autofree char *credential = NULL;

  if (route == NULL || credential_out == NULL)
    {
      plugin->host->set_error (call, SBX_STATUS_INVALID, "http-connect: authorize: no route");
      return SBX_STATUS_INVALID;
    }
  credential = sbx_egress_proxy_authorize (route, execution_id, targets, &error);
  if (credential == NULL)
    {
      g_autofree char *message = g_strdup_printf ("http-connect: %s", error->message);
      int32_t status = g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CLOSED) ? SBX_STATUS_UNAVAILABLE
                                                                               : SBX_STATUS_INVALID;

      plugin->host->set_error (call, status, message);
      return status;
    }
  *credential_out = host_strdup (plugin->host, credential);
  memset (credential, 0, strlen (credential));
  if (*credential_out == NULL)
    {
      char *ignored = NULL;

      sbx_egress_proxy_revoke (route, execution_id, &ignored);
      g_free (ignored);
      plugin->host->set_error (call, SBX_STATUS_NO_MEMORY, "http-connect: authorize: out of memory");
      return SBX_STATUS_NO_MEMORY;
    }
  return SBX_STATUS_OK;
}

static int32_t
egress_http_serve (void        *plugin_ctx,
                   SbxHostCall *call,
                   void        *route,
                   const char  *execution_id,
                   int32_t      listen_fd)
{
  Plugin *plugin = plugin_ctx;
  g_autoptr(GError) error = NULL;

  if (route == NULL)
    {
      if (listen_fd >= 0)
        close (listen_fd);
      plugin->host->set_error (call, SBX_STATUS_INVALID, "http-connect: serve: no route");
      return SBX_STATUS_INVALID;
    }
  if (!sbx_egress_proxy_serve_fd (route, execution_id, listen_fd, &error))
    {
      g_autofree char *message = g_strdup_printf ("http-connect: %s", error->message);

      plugin->host->set_error (call, SBX_STATUS_INVALID, message);
      return SBX_STATUS_INVALID;
    }
  return SBX_STATUS_OK;
}

static int32_t
egress_http_revoke (void       *plugin_ctx,
                    void       *route,
                    const char *execution_id,
                    char      **denial_out)
{
  Plugin *plugin = plugin_ctx;
  g_autofree char *denial = NULL;

  if (denial_out != NULL)
    *denial_out = NULL;
  if (route == NULL)
    return SBX_STATUS_INVALID;
  /* the stub's sockets first: no answer after the revoke */
  sbx_egress_dns_revoke (route_dns (plugin, route, FALSE), execution_id);
  if (!sbx_egress_proxy_revoke (route, execution_id, &denial))
    return SBX_STATUS_INVALID;
  if (denial != NULL && denial_out != NULL)
    {
      *denial_out = host_strdup (plugin->host, denial);
      if (*denial_out == NULL)
        return SBX_STATUS_NO_MEMORY;
    }
  return SBX_STATUS_OK;
}

static void
egress_http_stop (void *plugin_ctx,
                  void *route)
{
  Plugin *plugin = plugin_ctx;

  g_mutex_lock (&plugin->lock);
  g_hash_table_remove (plugin->dns, route);   /* joins the stub's thread */
  g_mutex_unlock (&plugin->lock);
  sbx_egress_proxy_free (route);
}

static int32_t
egress_http_serve_listeners (void              *plugin_ctx,
                             SbxHostCall       *call,
                             void              *route,
                             const char        *execution_id,
                             const SbxListenV1 *listens,
                             const int32_t     *fds,
                             uint32_t           n_listens)
{
  Plugin *plugin = plugin_ctx;
  g_autoptr(GError) error = NULL;

  if (route == NULL || execution_id == NULL || (n_listens > 0 && (listens == NULL || fds == NULL)))
    {
      for (uint32_t i = 0; fds != NULL && i < n_listens; i++)
        if (fds[i] >= 0)
          close (fds[i]);
      plugin->host->set_error (call, SBX_STATUS_INVALID,
                               "http-connect: serve_listeners: no route, execution or listener list");
      return SBX_STATUS_INVALID;
    }
  if (!sbx_egress_forward_serve (route, route_dns (plugin, route, TRUE), execution_id, listens, fds, n_listens,
                                 &error))
    {
      g_autofree char *message = g_strdup_printf ("http-connect: serve_listeners: %s", error->message);

      plugin->host->set_error (call, SBX_STATUS_INVALID, message);
      return SBX_STATUS_INVALID;
    }
  return SBX_STATUS_OK;
}

/* Every refusal of the execution, by the proxy, the forwarders and the
 * stub, goes to @sink until its revoke returns (the proxy's lock orders
 * the two). */
static int32_t
egress_http_watch_denials (void                        *plugin_ctx,
                           void                        *route,
                           const char                  *execution_id,
                           const SbxEgressDenialSinkV1 *sink)
{
  (void) plugin_ctx;
  if (route == NULL || !sbx_egress_proxy_watch (route, execution_id, sink))
    return SBX_STATUS_INVALID;
  return SBX_STATUS_OK;
}

static const SbxEgressVTableV1 egress_http_vtable = {
  .struct_size = sizeof (SbxEgressVTableV1),
  .start = egress_http_start,
  .authorize = egress_http_authorize,
  .serve = egress_http_serve,
  .revoke = egress_http_revoke,
  .stop = egress_http_stop,
  .serve_listeners = egress_http_serve_listeners,
  .watch_denials = egress_http_watch_denials,
};

static const SbxPluginExtension egress_http_extensions[] = {
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_EGRESS, .name = "http-connect",
    .priority = 0, .vtable = &egress_http_vtable },
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_END },
};

SBX_PLUGIN_DEFINE (egress_http, "0.1.0", "LGPL-2.1-or-later", SBX_HOST_FEATURE_EGRESS_V1,
                   egress_http_init, egress_http_fini, egress_http_extensions)
