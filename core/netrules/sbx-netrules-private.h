/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx-netrules-private.h — the egress rules as plain functions: target
 * normalization, address classes (with sbx's IP-literal rule), upstream proxy URLs and route fingerprints.
 *
 * One implementation, two users: libsbx-1 builds its public types
 * (SbxNetworkTarget, SbxEgressRoute, SbxAddressClass) on it, and the bundled
 * egress plugin (plugins/egress-http) links the same objects as a static
 * archive to re-validate what the host hands it (defence in depth: a plugin
 * must not trust the host's normalization, and two implementations of one
 * rule drift).  Only GLib/GIO; nothing here is exported from either binary.
 *
 * Every error is in SBX_EGRESS_ROUTE_ERROR (the quark is the same string in
 * both binaries, so the values match in one process).  Error messages name
 * the value at fault, except for upstream URLs, whose text may carry a
 * password: those messages name only the part that is wrong.
 */
#ifndef SBX_NETRULES_PRIVATE_H
#define SBX_NETRULES_PRIVATE_H

#include <gio/gio.h>

G_BEGIN_DECLS

/* Codes: equal to SbxEgressRouteError (core/net/sbx-egress-route.h asserts it). */
#define SBX_NETRULES_ERROR (g_quark_from_static_string ("sbx-egress-route-error-quark"))
enum
{
  SBX_NETRULES_ERROR_INVALID_TARGET      = 1,
  SBX_NETRULES_ERROR_INVALID_ROUTE       = 2,
  SBX_NETRULES_ERROR_ADDRESS_DENIED      = 3,
  SBX_NETRULES_ERROR_RESOLUTION_FAILED   = 4,
  SBX_NETRULES_ERROR_CONNECTION_FAILED   = 5,
  SBX_NETRULES_ERROR_UPSTREAM_UNAVAILABLE = 6,
  SBX_NETRULES_ERROR_UPSTREAM_REJECTED   = 7,
  SBX_NETRULES_ERROR_TARGET_DENIED       = 8,
  SBX_NETRULES_ERROR_ROUTE_DENIED        = 9,
};

/* Address classes: equal to SbxAddressClass. */
enum
{
  SBX_NETRULES_CLASS_PUBLIC     = 0,
  SBX_NETRULES_CLASS_NON_PUBLIC = 1,
  SBX_NETRULES_CLASS_METADATA   = 2,
};

/* The target that stands for "the request named no parseable target". */
#define SBX_NETRULES_UNPARSEABLE_TARGET "tcp:invalid:1"

/* Host normalization (§6.1 steps 1-4).  On success *out is the canonical
 * host (IP literals re-rendered, IPv6 without brackets) and *is_literal says
 * whether it is an IP literal. */
gboolean  sbx_netrules_normalize_host      (const char  *raw,
                                            char       **out,
                                            gboolean    *is_literal,
                                            GError     **error);
/* "tcp:host:port" -> host (canonical) and port. */
gboolean  sbx_netrules_parse_target        (const char  *raw,
                                            char       **host_out,
                                            guint16     *port_out,
                                            gboolean    *is_literal,
                                            GError     **error);
/* "host:port", "[v6]:port". */
char     *sbx_netrules_join_host_port      (const char  *host,
                                            guint        port);
/* Canonical "tcp:host:port" of @raw, or NULL. */
char     *sbx_netrules_canonical_target    (const char  *raw,
                                            GError     **error);

/* Class of an address (IPv4-mapped addresses are unmapped first). */
int       sbx_netrules_classify            (GInetAddress *address);
/* Class of a canonical literal host string; -1 when @host is no literal. */
int       sbx_netrules_classify_literal    (const char   *host);
/* The one rule of a target that sbx never reaches, whatever is approved:
 * @host (canonical, as a target holds it) is a cloud metadata address,
 * either as an IP literal in any form sbx_netrules_classify() knows, or as a
 * name the system resolver reads as an IPv4 address without asking DNS
 * (inet_aton's numeric forms: "2852039166", "0xa9fea9fe", "169.254.43518",
 * octal), which the egress would refuse at connect.  FALSE with
 * SBX_NETRULES_ERROR_ADDRESS_DENIED naming @host and why. */
gboolean  sbx_netrules_check_reachable     (const char   *host,
                                            GError      **error);

/* The resolution rule of a route with the address guarantee.  @host is the
 * target's canonical host, @literal_named TRUE when the approval lists this
 * exact IP-literal target (never TRUE for an allow-all authorization).
 *  - a metadata address: always refused;
 *  - a name: refused if ANY address is non-public (mixed answers refused);
 *  - an IP literal in a non-public class: allowed only if @literal_named.
 * @addresses: (element-type GInetAddress) */
gboolean  sbx_netrules_check_addresses     (const char   *host,
                                            gboolean      is_literal,
                                            gboolean      literal_named,
                                            GList        *addresses,
                                            GError      **error);

/* Upstream proxy URL "http[s]://[user[:password]@]host:port" (§6.2).  The
 * outputs are optional; @user/@password are percent-decoded and NULL when
 * absent.  Error text never repeats the URL. */
gboolean  sbx_netrules_parse_upstream_url  (const char  *url,
                                            char       **scheme,
                                            char       **host,
                                            guint16     *port,
                                            char       **user,
                                            char       **password,
                                            GError     **error);

/* "route-v1:" + hex(sha256({"Version":1,"Kind":..,"Endpoint":..,"AddressGuarantee":..})).
 * @kind is "direct", "http" or "https"; @endpoint "" for direct. */
char     *sbx_netrules_route_fingerprint   (const char  *kind,
                                            const char  *endpoint,
                                            gboolean     address_guarantee);

/* Compare two NUL-terminated strings in time independent of where they
 * differ (lengths may leak). */
gboolean  sbx_netrules_secret_equal        (const char  *a,
                                            const char  *b);

G_END_DECLS

#endif /* SBX_NETRULES_PRIVATE_H */
