/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sbx-network-target.h"
#include "sbx-netrules-private.h"

/**
 * SbxNetworkTarget:
 *
 * A normalized TCP network target, `tcp:HOST:PORT`: what an approval names
 * and what an egress proxy compares requests against.
 *
 * Parsing follows upstream's rules exactly: the `tcp:` prefix is required;
 * host and port are split as `HOST:PORT` or `[IPV6]:PORT`; the port is
 * decimal 1-65535 (leading zeros allowed); the host is trimmed of
 * surrounding spaces and one trailing dot and lowercased, must not be empty
 * or contain `/`, `%`, `@` or a space; IP literals are re-rendered
 * canonically (IPv6 as RFC 5952, IPv4-mapped as `::ffff:a.b.c.d`); names are
 * at most 253 characters of labels of 1-63 `[a-z0-9-]` with no hyphen at
 * either end (no underscores, no raw IDN).
 *
 * Immutable and reference counted; safe to share between threads.
 *
 * Since: 0.1
 */
struct _SbxNetworkTarget
{
  gatomicrefcount ref;
  char           *hostname;
  guint16         port;
  gboolean        literal;
  char           *address;  /* "host:port" / "[v6]:port" */
  char           *text;     /* "tcp:" + address */
};

G_DEFINE_BOXED_TYPE (SbxNetworkTarget, sbx_network_target, sbx_network_target_ref, sbx_network_target_unref)

/* The error domain of network targets and egress routes: here, below the
 * routes, which use the targets. */
/**
 * sbx_egress_route_error_quark:
 *
 * Returns the error domain of [error@Sbx.EgressRouteError].
 *
 * Returns: the quark
 *
 * Since: 0.1
 */
G_DEFINE_QUARK (sbx-egress-route-error-quark, sbx_egress_route_error)

static SbxNetworkTarget *
target_new_take (char     *hostname,
                 guint16   port,
                 gboolean  literal)
{
  SbxNetworkTarget *self = g_new0 (SbxNetworkTarget, 1);

  g_atomic_ref_count_init (&self->ref);
  self->hostname = hostname;
  self->port = port;
  self->literal = literal;
  self->address = sbx_netrules_join_host_port (hostname, port);
  self->text = g_strconcat ("tcp:", self->address, NULL);
  return self;
}

/**
 * sbx_network_target_parse:
 * @text: a target such as `tcp:example.org:443` or `tcp:[::1]:8080`
 * @error: return location for a [error@Sbx.EgressRouteError]
 *
 * Parses and normalizes @text.
 *
 * Returns: (transfer full) (nullable): the target, or %NULL with @error set
 *   to %SBX_EGRESS_ROUTE_ERROR_INVALID_TARGET naming the value at fault
 *
 * Since: 0.1
 */
SbxNetworkTarget *
sbx_network_target_parse (const char  *text,
                          GError     **error)
{
  char *host = NULL;
  guint16 port = 0;
  gboolean literal = FALSE;

  g_return_val_if_fail (text != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!sbx_netrules_parse_target (text, &host, &port, &literal, error))
    return NULL;
  return target_new_take (host, port, literal);
}

/**
 * sbx_network_target_new:
 * @hostname: a DNS name or an IP literal (IPv6 without brackets)
 * @port: the TCP port, 1-65535
 * @error: return location for a [error@Sbx.EgressRouteError]
 *
 * Builds the normalized target for @hostname and @port.
 *
 * Returns: (transfer full) (nullable): the target, or %NULL with @error set
 *
 * Since: 0.1
 */
SbxNetworkTarget *
sbx_network_target_new (const char  *hostname,
                        guint16      port,
                        GError     **error)
{
  char *host = NULL;
  gboolean literal = FALSE;

  g_return_val_if_fail (hostname != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (port == 0)
    {
      g_set_error (error, SBX_EGRESS_ROUTE_ERROR, SBX_EGRESS_ROUTE_ERROR_INVALID_TARGET,
                   "network target port 0 is invalid (decimal 1-65535)");
      return NULL;
    }
  if (!sbx_netrules_normalize_host (hostname, &host, &literal, error))
    return NULL;
  return target_new_take (host, port, literal);
}

/**
 * sbx_network_target_ref:
 * @self: a [struct@Sbx.NetworkTarget]
 *
 * Takes a reference.
 *
 * Returns: (transfer full): @self
 *
 * Since: 0.1
 */
SbxNetworkTarget *
sbx_network_target_ref (SbxNetworkTarget *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_atomic_ref_count_inc (&self->ref);
  return self;
}

/**
 * sbx_network_target_unref:
 * @self: (transfer full): a [struct@Sbx.NetworkTarget]
 *
 * Drops a reference; the last one frees the target.
 *
 * Since: 0.1
 */
void
sbx_network_target_unref (SbxNetworkTarget *self)
{
  g_return_if_fail (self != NULL);
  if (!g_atomic_ref_count_dec (&self->ref))
    return;
  g_free (self->hostname);
  g_free (self->address);
  g_free (self->text);
  g_free (self);
}

/**
 * sbx_network_target_to_string:
 * @self: a [struct@Sbx.NetworkTarget]
 *
 * The canonical text, `tcp:` followed by the address (`tcp:[::1]:443`).
 * Parsing it gives an equal target.
 *
 * Returns: (transfer none): the canonical text
 *
 * Since: 0.1
 */
const char *
sbx_network_target_to_string (SbxNetworkTarget *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->text;
}

/**
 * sbx_network_target_get_transport:
 * @self: a [struct@Sbx.NetworkTarget]
 *
 * The transport; always `tcp` in this version.
 *
 * Returns: (transfer none): `tcp`
 *
 * Since: 0.1
 */
const char *
sbx_network_target_get_transport (SbxNetworkTarget *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return "tcp";
}

/**
 * sbx_network_target_get_hostname:
 * @self: a [struct@Sbx.NetworkTarget]
 *
 * The normalized host: a lowercase DNS name, or a canonical IP literal
 * (IPv6 without brackets).
 *
 * Returns: (transfer none): the host
 *
 * Since: 0.1
 */
const char *
sbx_network_target_get_hostname (SbxNetworkTarget *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->hostname;
}

/**
 * sbx_network_target_get_port:
 * @self: a [struct@Sbx.NetworkTarget]
 *
 * The TCP port.
 *
 * Returns: the port, 1-65535
 *
 * Since: 0.1
 */
guint16
sbx_network_target_get_port (SbxNetworkTarget *self)
{
  g_return_val_if_fail (self != NULL, 0);
  return self->port;
}

/**
 * sbx_network_target_get_address:
 * @self: a [struct@Sbx.NetworkTarget]
 *
 * Host and port joined as a proxy request names them: `host:port`, or
 * `[v6]:port`.
 *
 * Returns: (transfer none): the address
 *
 * Since: 0.1
 */
const char *
sbx_network_target_get_address (SbxNetworkTarget *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->address;
}

/**
 * sbx_network_target_is_ip_literal:
 * @self: a [struct@Sbx.NetworkTarget]
 *
 * Whether the host is an IP literal rather than a name.  A literal in a
 * non-public [enum@Sbx.AddressClass] is reachable only when an approval
 * names this exact target (metadata addresses never).
 *
 * Returns: %TRUE for an IP literal
 *
 * Since: 0.1
 */
gboolean
sbx_network_target_is_ip_literal (SbxNetworkTarget *self)
{
  g_return_val_if_fail (self != NULL, FALSE);
  return self->literal;
}

/**
 * sbx_network_target_equal:
 * @a: a [struct@Sbx.NetworkTarget]
 * @b: a [struct@Sbx.NetworkTarget]
 *
 * Compares the canonical forms.
 *
 * Returns: %TRUE when @a and @b name the same target
 *
 * Since: 0.1
 */
gboolean
sbx_network_target_equal (SbxNetworkTarget *a,
                          SbxNetworkTarget *b)
{
  g_return_val_if_fail (a != NULL && b != NULL, FALSE);
  return g_str_equal (a->text, b->text);
}

/**
 * sbx_network_target_hash:
 * @self: a [struct@Sbx.NetworkTarget]
 *
 * A hash of the canonical form, for #GHashTable with
 * [method@Sbx.NetworkTarget.equal].
 *
 * Returns: the hash
 *
 * Since: 0.1
 */
guint
sbx_network_target_hash (SbxNetworkTarget *self)
{
  g_return_val_if_fail (self != NULL, 0);
  return g_str_hash (self->text);
}

/**
 * sbx_network_target_check_reachable:
 * @self: a [struct@Sbx.NetworkTarget]
 * @error: return location for a [error@Sbx.EgressRouteError]
 *
 * Refuses a target that sbx never reaches, whatever an approval says: a
 * cloud metadata address ([enum@Sbx.AddressClass] %SBX_ADDRESS_CLASS_METADATA)
 * as an IP literal in any form (IPv4, IPv6, IPv4-mapped, IPv4-compatible,
 * NAT64, 6to4), or as a name the system resolver reads as such an address
 * without asking DNS (the numeric forms `2852039166`, `0xa9fea9fe`,
 * `169.254.43518`).  [method@Sbx.Executor.issue_grant] and `sbx run
 * --allow-host` apply this rule, so such a target is refused when it is
 * approved rather than at connect.  A name is otherwise judged when it
 * resolves, at connect.
 *
 * Returns: %TRUE when the target may be approved; %FALSE with @error set to
 *   %SBX_EGRESS_ROUTE_ERROR_ADDRESS_DENIED naming the host and the reason
 *
 * Since: 0.2
 */
gboolean
sbx_network_target_check_reachable (SbxNetworkTarget  *self,
                                    GError           **error)
{
  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return sbx_netrules_check_reachable (self->hostname, error);
}
