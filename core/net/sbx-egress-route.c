/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sbx-egress-route-private.h"
#include "sbx-netrules-private.h"

#include <string.h>

/**
 * SbxEgressRoute:
 *
 * How approved network targets are reached: directly, or through an
 * organisation's upstream HTTP(S) proxy.
 *
 * A direct route resolves names with the system resolver (or the one given
 * to [method@Sbx.EgressRoute.with_resolver]) and refuses a target whose
 * name resolves to any non-public address (see [enum@Sbx.AddressClass]):
 * it has both the target and the address guarantee.  An upstream route
 * sends every request through the proxy, which resolves names itself: it
 * has the address guarantee only when the caller vouches for the proxy.
 *
 * Credentials in an upstream URL stay inside the route: they are never part
 * of the fingerprint, of [method@Sbx.EgressRoute.to_string], of error
 * messages, or of anything given to a sandboxed child.
 *
 * The fingerprint is upstream's: `route-v1:` and the hex SHA-256 of
 * `{"Version":1,"Kind":K,"Endpoint":E,"AddressGuarantee":B}`.
 *
 * Immutable and reference counted; safe to share between threads.
 *
 * Since: 0.1
 */
struct _SbxEgressRoute
{
  gatomicrefcount ref;
  char           *kind;        /* "direct", "http", "https" */
  char           *host;        /* upstream only */
  guint16         port;
  char           *user;        /* (nullable) secret */
  char           *password;    /* (nullable) secret */
  char           *endpoint;    /* "" or "host:port" */
  gboolean        address_guarantee;
  char           *fingerprint;
  char           *text;
  char           *upstream;    /* (nullable) "scheme://host:port" */
  GResolver      *resolver;    /* (nullable): the default resolver */
};

G_STATIC_ASSERT ((int) SBX_EGRESS_ROUTE_ERROR_INVALID_TARGET == (int) SBX_NETRULES_ERROR_INVALID_TARGET);
G_STATIC_ASSERT ((int) SBX_EGRESS_ROUTE_ERROR_INVALID_ROUTE == (int) SBX_NETRULES_ERROR_INVALID_ROUTE);
G_STATIC_ASSERT ((int) SBX_EGRESS_ROUTE_ERROR_ADDRESS_DENIED == (int) SBX_NETRULES_ERROR_ADDRESS_DENIED);
G_STATIC_ASSERT ((int) SBX_EGRESS_ROUTE_ERROR_RESOLUTION_FAILED == (int) SBX_NETRULES_ERROR_RESOLUTION_FAILED);
G_STATIC_ASSERT ((int) SBX_EGRESS_ROUTE_ERROR_CONNECTION_FAILED == (int) SBX_NETRULES_ERROR_CONNECTION_FAILED);
G_STATIC_ASSERT ((int) SBX_EGRESS_ROUTE_ERROR_UPSTREAM_UNAVAILABLE == (int) SBX_NETRULES_ERROR_UPSTREAM_UNAVAILABLE);
G_STATIC_ASSERT ((int) SBX_EGRESS_ROUTE_ERROR_UPSTREAM_REJECTED == (int) SBX_NETRULES_ERROR_UPSTREAM_REJECTED);
G_STATIC_ASSERT ((int) SBX_EGRESS_ROUTE_ERROR_TARGET_DENIED == (int) SBX_NETRULES_ERROR_TARGET_DENIED);
G_STATIC_ASSERT ((int) SBX_EGRESS_ROUTE_ERROR_ROUTE_DENIED == (int) SBX_NETRULES_ERROR_ROUTE_DENIED);

G_DEFINE_BOXED_TYPE (SbxEgressRoute, sbx_egress_route, sbx_egress_route_ref, sbx_egress_route_unref)

static void
wipe_free (char *secret)
{
  if (secret != NULL)
    memset (secret, 0, strlen (secret));
  g_free (secret);
}

static SbxEgressRoute *
route_alloc (void)
{
  SbxEgressRoute *self = g_new0 (SbxEgressRoute, 1);

  g_atomic_ref_count_init (&self->ref);
  return self;
}

/**
 * sbx_egress_route_new_direct:
 *
 * The direct route: targets are resolved here and dialed directly.  Its
 * fingerprint is
 * `route-v1:80b26a4527e3e2a376fba2710f15e5810847af6c0762b3ba2e68ab7417f6c09d`.
 *
 * Returns: (transfer full): a new route
 *
 * Since: 0.1
 */
SbxEgressRoute *
sbx_egress_route_new_direct (void)
{
  SbxEgressRoute *self = route_alloc ();

  self->kind = g_strdup ("direct");
  self->endpoint = g_strdup ("");
  self->address_guarantee = TRUE;
  self->fingerprint = sbx_netrules_route_fingerprint ("direct", "", TRUE);
  self->text = g_strdup ("direct");
  return self;
}

/**
 * sbx_egress_route_new_upstream:
 * @url: `http://` or `https://`, optional `USER[:PASSWORD]@` (percent
 *   escaped), a host and an explicit port; nothing after the port, not even
 *   a `/`
 * @trusted_address_guarantee: %TRUE when the upstream proxy is known to
 *   refuse non-public addresses itself (only then does the route carry the
 *   address guarantee)
 * @error: return location for a [error@Sbx.EgressRouteError]
 *
 * A route through an organisation's upstream proxy: CONNECT for tunnels,
 * absolute-form requests for plain HTTP, Basic credentials from @url.
 * There is never a fallback to direct connections.
 *
 * Returns: (transfer full) (nullable): a new route, or %NULL with @error set
 *   to %SBX_EGRESS_ROUTE_ERROR_INVALID_ROUTE (the message never repeats
 *   @url, which may carry a password)
 *
 * Since: 0.1
 */
SbxEgressRoute *
sbx_egress_route_new_upstream (const char  *url,
                               gboolean     trusted_address_guarantee,
                               GError     **error)
{
  g_autofree char *scheme = NULL;
  g_autofree char *host = NULL;
  char *user = NULL, *password = NULL;
  guint16 port = 0;
  SbxEgressRoute *self;

  g_return_val_if_fail (url != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!sbx_netrules_parse_upstream_url (url, &scheme, &host, &port, &user, &password, error))
    return NULL;

  self = route_alloc ();
  self->kind = g_steal_pointer (&scheme);
  self->host = g_steal_pointer (&host);
  self->port = port;
  self->user = user;
  self->password = password;
  self->endpoint = sbx_netrules_join_host_port (self->host, port);
  self->address_guarantee = trusted_address_guarantee ? TRUE : FALSE;
  self->fingerprint = sbx_netrules_route_fingerprint (self->kind, self->endpoint, self->address_guarantee);
  self->upstream = g_strdup_printf ("%s://%s", self->kind, self->endpoint);
  self->text = g_strdup (self->upstream);
  return self;
}

/**
 * sbx_egress_route_with_resolver:
 * @self: a [struct@Sbx.EgressRoute]
 * @resolver: (nullable): the resolver for target names, or %NULL for the
 *   system's
 *
 * A copy of @self that resolves target names with @resolver (tests use a
 * resolver that returns fixed answers).  The fingerprint is unchanged: the
 * resolver is how the route is reached, not what it allows.
 *
 * Returns: (transfer full): a new route
 *
 * Since: 0.1
 */
SbxEgressRoute *
sbx_egress_route_with_resolver (SbxEgressRoute *self,
                                GResolver      *resolver)
{
  SbxEgressRoute *copy;

  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (resolver == NULL || G_IS_RESOLVER (resolver), NULL);

  copy = route_alloc ();
  copy->kind = g_strdup (self->kind);
  copy->host = g_strdup (self->host);
  copy->port = self->port;
  copy->user = g_strdup (self->user);
  copy->password = g_strdup (self->password);
  copy->endpoint = g_strdup (self->endpoint);
  copy->address_guarantee = self->address_guarantee;
  copy->fingerprint = g_strdup (self->fingerprint);
  copy->text = g_strdup (self->text);
  copy->upstream = g_strdup (self->upstream);
  copy->resolver = resolver != NULL ? g_object_ref (resolver) : NULL;
  return copy;
}

/**
 * sbx_egress_route_ref:
 * @self: a [struct@Sbx.EgressRoute]
 *
 * Takes a reference.
 *
 * Returns: (transfer full): @self
 *
 * Since: 0.1
 */
SbxEgressRoute *
sbx_egress_route_ref (SbxEgressRoute *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_atomic_ref_count_inc (&self->ref);
  return self;
}

/**
 * sbx_egress_route_unref:
 * @self: (transfer full): a [struct@Sbx.EgressRoute]
 *
 * Drops a reference; the last one frees the route and wipes its
 * credentials.
 *
 * Since: 0.1
 */
void
sbx_egress_route_unref (SbxEgressRoute *self)
{
  g_return_if_fail (self != NULL);
  if (!g_atomic_ref_count_dec (&self->ref))
    return;
  g_free (self->kind);
  g_free (self->host);
  wipe_free (self->user);
  wipe_free (self->password);
  g_free (self->endpoint);
  g_free (self->fingerprint);
  g_free (self->text);
  g_free (self->upstream);
  g_clear_object (&self->resolver);
  g_free (self);
}

/**
 * sbx_egress_route_get_fingerprint:
 * @self: a [struct@Sbx.EgressRoute]
 *
 * The route fingerprint grants are bound to (`route-v1:<hex>`); it never
 * depends on credentials.
 *
 * Returns: (transfer none): the fingerprint
 *
 * Since: 0.1
 */
const char *
sbx_egress_route_get_fingerprint (SbxEgressRoute *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->fingerprint;
}

/**
 * sbx_egress_route_to_string:
 * @self: a [struct@Sbx.EgressRoute]
 *
 * `direct`, or `scheme://host:port` of the upstream (never credentials).
 *
 * Returns: (transfer none): the description
 *
 * Since: 0.1
 */
const char *
sbx_egress_route_to_string (SbxEgressRoute *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->text;
}

/**
 * sbx_egress_route_is_direct:
 * @self: a [struct@Sbx.EgressRoute]
 *
 * Whether targets are dialed directly.
 *
 * Returns: %TRUE for the direct route
 *
 * Since: 0.1
 */
gboolean
sbx_egress_route_is_direct (SbxEgressRoute *self)
{
  g_return_val_if_fail (self != NULL, FALSE);
  return self->upstream == NULL;
}

/**
 * sbx_egress_route_get_upstream:
 * @self: a [struct@Sbx.EgressRoute]
 *
 * The upstream proxy as `scheme://host:port`, without credentials.
 *
 * Returns: (transfer none) (nullable): the upstream, or %NULL for the direct
 *   route
 *
 * Since: 0.1
 */
const char *
sbx_egress_route_get_upstream (SbxEgressRoute *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->upstream;
}

/**
 * sbx_egress_route_get_target_guarantee:
 * @self: a [struct@Sbx.EgressRoute]
 *
 * Whether the route scopes every connection to an approved host and port.
 * True for every valid route: the proxy checks the target before it dials
 * or asks the upstream.
 *
 * Returns: %TRUE
 *
 * Since: 0.1
 */
gboolean
sbx_egress_route_get_target_guarantee (SbxEgressRoute *self)
{
  g_return_val_if_fail (self != NULL, FALSE);
  return TRUE;
}

/**
 * sbx_egress_route_get_address_guarantee:
 * @self: a [struct@Sbx.EgressRoute]
 *
 * Whether names resolving to non-public addresses are refused: always for
 * the direct route, for an upstream only when it was created with
 * `trusted_address_guarantee`.
 *
 * Returns: %TRUE when the route carries the address guarantee
 *
 * Since: 0.1
 */
gboolean
sbx_egress_route_get_address_guarantee (SbxEgressRoute *self)
{
  g_return_val_if_fail (self != NULL, FALSE);
  return self->address_guarantee;
}

/**
 * sbx_egress_route_resolve_target:
 * @self: a direct [struct@Sbx.EgressRoute]
 * @target: the target to reach
 * @literal_named: %TRUE when the approval names @target exactly (never for
 *   an allow-every-target approval); only then is an IP literal in the
 *   non-public class allowed
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a [error@Sbx.EgressRouteError]
 *
 * Resolves @target as the route would before dialing it and applies the
 * address rules: a name resolving to any non-public address is refused
 * (mixed answers too), a metadata address always, a non-public IP literal
 * unless @literal_named.  Blocks; call it from a worker thread.
 *
 * Returns: (transfer full) (element-type GInetAddress) (nullable): the
 *   addresses to dial, in order, or %NULL with @error set
 *   (%SBX_EGRESS_ROUTE_ERROR_ADDRESS_DENIED,
 *   %SBX_EGRESS_ROUTE_ERROR_RESOLUTION_FAILED; an upstream route resolves at
 *   the upstream: %SBX_EGRESS_ROUTE_ERROR_INVALID_ROUTE)
 *
 * Since: 0.1
 */
GList *
sbx_egress_route_resolve_target (SbxEgressRoute    *self,
                                 SbxNetworkTarget  *target,
                                 gboolean           literal_named,
                                 GCancellable      *cancellable,
                                 GError           **error)
{
  const char *host;
  GList *addresses = NULL;

  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (target != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (self->upstream != NULL)
    {
      g_set_error (error, SBX_EGRESS_ROUTE_ERROR, SBX_EGRESS_ROUTE_ERROR_INVALID_ROUTE,
                   "route %s: targets are resolved by the upstream proxy", self->text);
      return NULL;
    }

  host = sbx_network_target_get_hostname (target);
  if (sbx_network_target_is_ip_literal (target))
    addresses = g_list_prepend (NULL, g_inet_address_new_from_string (host));
  else
    {
      g_autoptr(GResolver) resolver = self->resolver != NULL ? g_object_ref (self->resolver)
                                                             : g_resolver_get_default ();
      g_autoptr(GError) local = NULL;

      addresses = g_resolver_lookup_by_name (resolver, host, cancellable, &local);
      if (addresses == NULL)
        {
          if (g_error_matches (local, G_IO_ERROR, G_IO_ERROR_CANCELLED))
            g_propagate_error (error, g_steal_pointer (&local));
          else
            g_set_error (error, SBX_EGRESS_ROUTE_ERROR, SBX_EGRESS_ROUTE_ERROR_RESOLUTION_FAILED,
                         "network target %s: resolution failed: %s", sbx_network_target_to_string (target),
                         local != NULL ? local->message : "no address");
          return NULL;
        }
    }

  if (!sbx_netrules_check_addresses (host, sbx_network_target_is_ip_literal (target), literal_named,
                                     addresses, error))
    {
      g_resolver_free_addresses (addresses);
      return NULL;
    }
  return addresses;
}

static char *
escape_userinfo (const char *s)
{
  /* unreserved characters only; everything else %-escaped */
  return g_uri_escape_string (s, NULL, FALSE);
}

char *
sbx_egress_route_dup_plugin_config (SbxEgressRoute *self)
{
  g_autofree char *user = NULL;
  g_autofree char *password = NULL;
  GString *s;

  g_return_val_if_fail (self != NULL, NULL);

  if (self->upstream == NULL)
    return g_strdup ("direct");
  s = g_string_new (self->address_guarantee ? "trusted-address-guarantee " : "");
  g_string_append_printf (s, "%s://", self->kind);
  if (self->user != NULL)
    {
      user = escape_userinfo (self->user);
      g_string_append (s, user);
      if (self->password != NULL)
        {
          password = escape_userinfo (self->password);
          g_string_append_c (s, ':');
          g_string_append (s, password);
          memset (password, 0, strlen (password));
        }
      g_string_append_c (s, '@');
    }
  g_string_append (s, self->endpoint);
  return g_string_free (s, FALSE);
}

void
sbx_egress_route_config_free (char *config)
{
  wipe_free (config);
}
