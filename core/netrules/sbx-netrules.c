/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The egress rules (see sbx-netrules-private.h).  Pure functions; no state
 * but the parsed prefix tables, built once.
 */
#include "sbx-netrules-private.h"

#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

/* ------------------------------------------------------------------------- */
/* Host and target normalization                                              */
/* ------------------------------------------------------------------------- */

static gboolean
fail (GError    **error,
      int         code,
      const char *format,
      ...) G_GNUC_PRINTF (3, 4);

static gboolean
fail (GError    **error,
      int         code,
      const char *format,
      ...)
{
  va_list ap;

  va_start (ap, format);
  g_set_error_literal (error, SBX_NETRULES_ERROR, code, "");
  if (error != NULL && *error != NULL)
    {
      g_free ((*error)->message);
      (*error)->message = g_strdup_vprintf (format, ap);
    }
  va_end (ap);
  return FALSE;
}

/* RFC 5952 text of a 16-byte IPv6 address, as Go's netip renders it:
 * lowercase hex without leading zeros, the longest run (first on a tie) of
 * two or more zero groups compressed to "::", and IPv4-mapped addresses as
 * "::ffff:a.b.c.d". */
static char *
format_ipv6 (const guint8 *b)
{
  static const guint8 mapped_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
  GString *s;
  guint16 groups[8];
  int best_start = -1, best_len = 0;

  if (memcmp (b, mapped_prefix, sizeof mapped_prefix) == 0)
    return g_strdup_printf ("::ffff:%u.%u.%u.%u", b[12], b[13], b[14], b[15]);

  for (int i = 0; i < 8; i++)
    groups[i] = (guint16) ((b[2 * i] << 8) | b[2 * i + 1]);
  for (int i = 0; i < 8;)
    {
      int j = i;

      while (j < 8 && groups[j] == 0)
        j++;
      if (j - i > best_len && j - i >= 2)
        {
          best_start = i;
          best_len = j - i;
        }
      i = j > i ? j : i + 1;
    }

  s = g_string_new (NULL);
  for (int i = 0; i < 8; i++)
    {
      if (i == best_start)
        {
          g_string_append (s, "::");
          i += best_len - 1;
          continue;
        }
      if (s->len > 0 && s->str[s->len - 1] != ':')
        g_string_append_c (s, ':');
      g_string_append_printf (s, "%x", groups[i]);
    }
  return g_string_free (s, FALSE);
}

/* Canonical text of an IP literal, or NULL when @host is not one.  Strict:
 * IPv4 must be four decimal octets without leading zeros (inet_pton), so
 * "010.0.0.1" or "127.1" are not literals (they are then checked as names,
 * and a name that resolves to a non-public address is refused). */
static char *
canonical_literal (const char *host)
{
  g_autoptr(GInetAddress) addr = NULL;

  if (strchr (host, '%') != NULL)
    return NULL;
  addr = g_inet_address_new_from_string (host);
  if (addr == NULL)
    return NULL;
  if (g_inet_address_get_family (addr) == G_SOCKET_FAMILY_IPV4)
    return g_inet_address_to_string (addr);
  return format_ipv6 (g_inet_address_to_bytes (addr));
}

gboolean
sbx_netrules_normalize_host (const char  *raw,
                             char       **out,
                             gboolean    *is_literal,
                             GError     **error)
{
  g_autofree char *host = NULL;
  g_autofree char *literal = NULL;
  gsize len;
  const char *p;

  g_return_val_if_fail (raw != NULL, FALSE);

  /* 1. trim surrounding spaces and one trailing '.', lowercase */
  host = g_strstrip (g_strdup (raw));
  len = strlen (host);
  if (len > 0 && host[len - 1] == '.')
    host[--len] = '\0';
  for (char *c = host; *c != '\0'; c++)
    *c = g_ascii_tolower (*c);

  /* 2. empty, or NUL (cannot be in a C string: callers with a length
   * reject embedded NULs), '/', '%', '@', space */
  if (len == 0 || strpbrk (host, "/%@ ") != NULL)
    return fail (error, SBX_NETRULES_ERROR_INVALID_TARGET,
                 "network target hostname “%s” is invalid", raw);

  /* 3. IP literals are re-rendered canonically */
  literal = canonical_literal (host);
  if (literal != NULL)
    {
      if (is_literal != NULL)
        *is_literal = TRUE;
      if (out != NULL)
        *out = g_steal_pointer (&literal);
      return TRUE;
    }

  /* 4. a DNS name: <= 253 chars, labels 1-63 of [a-z0-9-], no hyphen at
   * either end.  Underscores and raw IDN are refused. */
  if (len > 253)
    return fail (error, SBX_NETRULES_ERROR_INVALID_TARGET,
                 "network target hostname is too long (%" G_GSIZE_FORMAT " > 253 characters)", len);
  for (p = host; *p != '\0'; p++)
    if ((guchar) *p >= 0x80)
      return fail (error, SBX_NETRULES_ERROR_INVALID_TARGET,
                   "network target hostname “%s” must be ASCII (use the punycode form)", raw);
  p = host;
  while (TRUE)
    {
      const char *dot = strchr (p, '.');
      gsize label_len = dot != NULL ? (gsize) (dot - p) : strlen (p);

      if (label_len == 0 || label_len > 63 || p[0] == '-' || p[label_len - 1] == '-')
        return fail (error, SBX_NETRULES_ERROR_INVALID_TARGET,
                     "network target hostname “%s” is invalid", raw);
      for (gsize i = 0; i < label_len; i++)
        if (!g_ascii_islower (p[i]) && !g_ascii_isdigit (p[i]) && p[i] != '-')
          return fail (error, SBX_NETRULES_ERROR_INVALID_TARGET,
                       "network target hostname “%s” is invalid", raw);
      if (dot == NULL)
        break;
      p = dot + 1;
    }

  if (is_literal != NULL)
    *is_literal = FALSE;
  if (out != NULL)
    *out = g_steal_pointer (&host);
  return TRUE;
}

/* Decimal 1-65535, leading zeros allowed, nothing else. */
static gboolean
parse_port (const char *s,
            guint16    *out)
{
  guint value = 0;

  if (*s == '\0')
    return FALSE;
  for (; *s != '\0'; s++)
    {
      if (!g_ascii_isdigit (*s))
        return FALSE;
      value = value * 10 + (guint) (*s - '0');
      if (value > 65535)
        return FALSE;
    }
  if (value == 0)
    return FALSE;
  *out = (guint16) value;
  return TRUE;
}

/* Go's net.SplitHostPort: "[host]:port" or "host:port" with no other colon. */
static gboolean
split_host_port (const char  *hostport,
                 char       **host,
                 char       **port,
                 const char **why)
{
  const char *colon;

  if (hostport[0] == '[')
    {
      const char *close = strchr (hostport, ']');

      if (close == NULL)
        {
          *why = "missing ']' in address";
          return FALSE;
        }
      if (close[1] != ':')
        {
          *why = close[1] == '\0' ? "missing port in address" : "unexpected text after ']'";
          return FALSE;
        }
      if (memchr (hostport + 1, '[', (gsize) (close - hostport - 1)) != NULL || strchr (close + 1, '[') != NULL ||
          strchr (close + 1, ']') != NULL)
        {
          *why = "unexpected '[' or ']' in address";
          return FALSE;
        }
      *host = g_strndup (hostport + 1, (gsize) (close - hostport - 1));
      *port = g_strdup (close + 2);
      return TRUE;
    }

  colon = strrchr (hostport, ':');
  if (colon == NULL)
    {
      *why = "missing port in address";
      return FALSE;
    }
  if (memchr (hostport, ':', (gsize) (colon - hostport)) != NULL)
    {
      *why = "too many colons in address (bracket an IPv6 address)";
      return FALSE;
    }
  if (strpbrk (hostport, "[]") != NULL)
    {
      *why = "unexpected '[' or ']' in address";
      return FALSE;
    }
  *host = g_strndup (hostport, (gsize) (colon - hostport));
  *port = g_strdup (colon + 1);
  return TRUE;
}

gboolean
sbx_netrules_parse_target (const char  *raw,
                           char       **host_out,
                           guint16     *port_out,
                           gboolean    *is_literal,
                           GError     **error)
{
  g_autofree char *host = NULL;
  g_autofree char *port_text = NULL;
  g_autofree char *canonical = NULL;
  const char *why = NULL;
  guint16 port = 0;

  g_return_val_if_fail (raw != NULL, FALSE);

  if (!g_str_has_prefix (raw, "tcp:"))
    return fail (error, SBX_NETRULES_ERROR_INVALID_TARGET,
                 "network target “%s”: transport must be tcp (write tcp:HOST:PORT)", raw);
  if (!split_host_port (raw + 4, &host, &port_text, &why))
    return fail (error, SBX_NETRULES_ERROR_INVALID_TARGET, "network target “%s”: %s", raw, why);
  if (!parse_port (port_text, &port))
    return fail (error, SBX_NETRULES_ERROR_INVALID_TARGET,
                 "network target “%s”: port “%s” is invalid (decimal 1-65535)", raw, port_text);
  if (!sbx_netrules_normalize_host (host, &canonical, is_literal, error))
    return FALSE;
  if (host_out != NULL)
    *host_out = g_steal_pointer (&canonical);
  if (port_out != NULL)
    *port_out = port;
  return TRUE;
}

char *
sbx_netrules_join_host_port (const char *host,
                             guint       port)
{
  if (strchr (host, ':') != NULL)
    return g_strdup_printf ("[%s]:%u", host, port);
  return g_strdup_printf ("%s:%u", host, port);
}

char *
sbx_netrules_canonical_target (const char  *raw,
                               GError     **error)
{
  g_autofree char *host = NULL;
  g_autofree char *hostport = NULL;
  guint16 port;

  if (!sbx_netrules_parse_target (raw, &host, &port, NULL, error))
    return NULL;
  hostport = sbx_netrules_join_host_port (host, port);
  return g_strconcat ("tcp:", hostport, NULL);
}

/* ------------------------------------------------------------------------- */
/* Address classes                                                            */
/* ------------------------------------------------------------------------- */

typedef struct
{
  guint8 bytes[16];
  guint  bits;
  gsize  len;   /* 4 or 16 */
} Prefix;

/* Every non-public prefix of upstream's table, tested at every boundary. */
static const char *const non_public_v4[] = {
  "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "100.100.100.200/32", "127.0.0.0/8",
  "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.31.196.0/24",
  "192.52.193.0/24", "192.88.99.0/24", "192.168.0.0/16", "192.175.48.0/24", "198.18.0.0/15",
  "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
};
static const char *const non_public_v6[] = {
  "::/96", "::1/128", "::ffff:0:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64",
  "2001::/23", "2001:db8::/32", "2002::/16", "2620:4f:8000::/48", "3fff::/20", "5f00::/16",
  "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
};
/* Cloud metadata endpoints: never reachable, even when an approval names the
 * literal.  AWS/GCP/Azure 169.254.169.254 and AWS IPv6 fd00:ec2::254 (the
 * issue's two), plus AWS ECS task metadata 169.254.170.2 and Alibaba
 * 100.100.100.200 (which upstream's table lists on its own for this reason). */
static const char *const metadata_v4[] = { "169.254.169.254", "169.254.170.2", "100.100.100.200" };
static const char *const metadata_v6[] = { "fd00:ec2::254" };

static Prefix *prefixes_v4;
static Prefix *prefixes_v6;

static void
parse_prefix (const char *text,
              Prefix     *out)
{
  g_auto(GStrv) parts = g_strsplit (text, "/", 2);
  g_autoptr(GInetAddress) addr = g_inet_address_new_from_string (parts[0]);

  /* The tables are constants of this file; a typo is a programming error. */
  g_return_if_fail (addr != NULL && parts[1] != NULL);
  out->len = g_inet_address_get_native_size (addr);
  memcpy (out->bytes, g_inet_address_to_bytes (addr), out->len);
  out->bits = (guint) g_ascii_strtoull (parts[1], NULL, 10);
}

static void
ensure_tables (void)
{
  static gsize once = 0;

  if (g_once_init_enter (&once))
    {
      Prefix *v4 = g_new0 (Prefix, G_N_ELEMENTS (non_public_v4));
      Prefix *v6 = g_new0 (Prefix, G_N_ELEMENTS (non_public_v6));

      for (gsize i = 0; i < G_N_ELEMENTS (non_public_v4); i++)
        parse_prefix (non_public_v4[i], &v4[i]);
      for (gsize i = 0; i < G_N_ELEMENTS (non_public_v6); i++)
        parse_prefix (non_public_v6[i], &v6[i]);
      prefixes_v4 = v4;
      prefixes_v6 = v6;
      g_once_init_leave (&once, 1);
    }
}

static gboolean
prefix_contains (const Prefix *p,
                 const guint8 *bytes)
{
  guint full = p->bits / 8, rest = p->bits % 8;

  if (memcmp (p->bytes, bytes, full) != 0)
    return FALSE;
  if (rest == 0)
    return TRUE;
  return ((p->bytes[full] ^ bytes[full]) & (guint8) (0xff << (8 - rest))) == 0;
}

static gboolean
v4_is_metadata (const guint8 *b)
{
  char text[16];

  g_snprintf (text, sizeof text, "%u.%u.%u.%u", b[0], b[1], b[2], b[3]);
  for (gsize i = 0; i < G_N_ELEMENTS (metadata_v4); i++)
    if (strcmp (text, metadata_v4[i]) == 0)
      return TRUE;
  return FALSE;
}

static int
classify_bytes (const guint8 *b,
                gsize         len)
{
  static const guint8 mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
  static const guint8 nat64[12] = { 0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0 };
  static const guint8 compat[12] = { 0 };

  ensure_tables ();
  if (len == 16 && memcmp (b, mapped, 12) == 0)
    {
      b += 12;
      len = 4;
    }

  if (len == 4)
    {
      if (v4_is_metadata (b))
        return SBX_NETRULES_CLASS_METADATA;
      for (gsize i = 0; i < G_N_ELEMENTS (non_public_v4); i++)
        if (prefix_contains (&prefixes_v4[i], b))
          return SBX_NETRULES_CLASS_NON_PUBLIC;
      return SBX_NETRULES_CLASS_PUBLIC;
    }

  for (gsize i = 0; i < G_N_ELEMENTS (metadata_v6); i++)
    {
      g_autoptr(GInetAddress) m = g_inet_address_new_from_string (metadata_v6[i]);

      if (memcmp (g_inet_address_to_bytes (m), b, 16) == 0)
        return SBX_NETRULES_CLASS_METADATA;
    }
  /* A metadata IPv4 address embedded in a translation prefix (NAT64,
   * IPv4-compatible, 6to4) is the metadata endpoint on a translating path. */
  if (memcmp (b, nat64, 12) == 0 || memcmp (b, compat, 12) == 0)
    {
      if (v4_is_metadata (b + 12))
        return SBX_NETRULES_CLASS_METADATA;
    }
  if (b[0] == 0x20 && b[1] == 0x02 && v4_is_metadata (b + 2))
    return SBX_NETRULES_CLASS_METADATA;
  for (gsize i = 0; i < G_N_ELEMENTS (non_public_v6); i++)
    if (prefix_contains (&prefixes_v6[i], b))
      return SBX_NETRULES_CLASS_NON_PUBLIC;
  return SBX_NETRULES_CLASS_PUBLIC;
}

int
sbx_netrules_classify (GInetAddress *address)
{
  g_return_val_if_fail (G_IS_INET_ADDRESS (address), SBX_NETRULES_CLASS_METADATA);

  return classify_bytes (g_inet_address_to_bytes (address), g_inet_address_get_native_size (address));
}

int
sbx_netrules_classify_literal (const char *host)
{
  g_autoptr(GInetAddress) addr = NULL;

  if (strchr (host, '%') != NULL)
    return -1;
  addr = g_inet_address_new_from_string (host);
  if (addr == NULL)
    return -1;
  return sbx_netrules_classify (addr);
}

gboolean
sbx_netrules_check_reachable (const char  *host,
                              GError     **error)
{
  struct in_addr numeric;
  g_autoptr(GInetAddress) addr = NULL;
  g_autofree char *text = NULL;

  g_return_val_if_fail (host != NULL, FALSE);

  if (sbx_netrules_classify_literal (host) == SBX_NETRULES_CLASS_METADATA)
    return fail (error, SBX_NETRULES_ERROR_ADDRESS_DENIED,
                 "network target host “%s” is a cloud metadata address: never reachable through "
                 "sbx, whatever is approved", host);
  /* A name the resolver parses as a number never reaches DNS: it is the
   * address it spells, and is judged as that address. */
  if (sbx_netrules_classify_literal (host) >= 0 || inet_aton (host, &numeric) == 0)
    return TRUE;
  addr = g_inet_address_new_from_bytes ((const guint8 *) &numeric.s_addr, G_SOCKET_FAMILY_IPV4);
  if (sbx_netrules_classify (addr) != SBX_NETRULES_CLASS_METADATA)
    return TRUE;
  text = g_inet_address_to_string (addr);
  return fail (error, SBX_NETRULES_ERROR_ADDRESS_DENIED,
               "network target host “%s” is the cloud metadata address %s (the resolver reads "
               "the number as that address): never reachable through sbx, whatever is approved",
               host, text);
}

gboolean
sbx_netrules_check_addresses (const char   *host,
                              gboolean      is_literal,
                              gboolean      literal_named,
                              GList        *addresses,
                              GError      **error)
{
  if (addresses == NULL)
    return fail (error, SBX_NETRULES_ERROR_RESOLUTION_FAILED,
                 "network target host “%s”: resolution gave no address", host);

  for (GList *l = addresses; l != NULL; l = l->next)
    {
      int klass = sbx_netrules_classify (l->data);
      g_autofree char *text = g_inet_address_to_string (l->data);

      if (klass == SBX_NETRULES_CLASS_METADATA)
        return fail (error, SBX_NETRULES_ERROR_ADDRESS_DENIED,
                     "network target host “%s”: address %s is a cloud metadata endpoint (never reachable)",
                     host, text);
      if (klass == SBX_NETRULES_CLASS_PUBLIC)
        continue;
      if (!is_literal)
        return fail (error, SBX_NETRULES_ERROR_ADDRESS_DENIED,
                     "network target host “%s” resolved to non-public address %s "
                     "(names must resolve to public addresses only; approve the IP literal instead)",
                     host, text);
      if (!literal_named)
        return fail (error, SBX_NETRULES_ERROR_ADDRESS_DENIED,
                     "network target %s is a non-public address and the approval does not name it exactly",
                     text);
    }
  return TRUE;
}

/* ------------------------------------------------------------------------- */
/* Upstream proxy URLs and fingerprints                                       */
/* ------------------------------------------------------------------------- */

static char *
percent_decode (const char *s,
                gsize       len)
{
  g_autofree char *copy = g_strndup (s, len);

  /* NULL on a bad escape or an escaped NUL */
  return g_uri_unescape_string (copy, "");
}

gboolean
sbx_netrules_parse_upstream_url (const char  *url,
                                 char       **scheme_out,
                                 char       **host_out,
                                 guint16     *port_out,
                                 char       **user_out,
                                 char       **password_out,
                                 GError     **error)
{
  g_autofree char *scheme = NULL;
  g_autofree char *hostport = NULL;
  g_autofree char *user = NULL;
  g_autofree char *password = NULL;
  g_autofree char *host_raw = NULL;
  g_autofree char *port_text = NULL;
  g_autofree char *host = NULL;
  const char *sep, *authority, *at, *why = NULL;
  gboolean literal;
  guint16 port = 0;

  g_return_val_if_fail (url != NULL, FALSE);

  sep = strstr (url, "://");
  if (sep == NULL)
    return fail (error, SBX_NETRULES_ERROR_INVALID_ROUTE,
                 "upstream proxy URL must be http://HOST:PORT or https://HOST:PORT");
  scheme = g_ascii_strdown (url, sep - url);
  if (strcmp (scheme, "http") != 0 && strcmp (scheme, "https") != 0)
    return fail (error, SBX_NETRULES_ERROR_INVALID_ROUTE,
                 "upstream proxy must use http or https (not “%.16s”)", scheme);
  authority = sep + 3;
  if (strpbrk (authority, "/?#") != NULL)
    return fail (error, SBX_NETRULES_ERROR_INVALID_ROUTE,
                 "upstream proxy URL must contain only authority (no path, query or fragment, "
                 "not even a trailing '/')");
  for (const char *c = authority; *c != '\0'; c++)
    if ((guchar) *c <= 0x20 || (guchar) *c >= 0x7f || *c == '\\')
      return fail (error, SBX_NETRULES_ERROR_INVALID_ROUTE,
                   "upstream proxy URL contains a control, space, non-ASCII or '\\' character");

  at = strrchr (authority, '@');
  if (at != NULL)
    {
      const char *colon = memchr (authority, ':', (gsize) (at - authority));

      user = percent_decode (authority, colon != NULL ? (gsize) (colon - authority) : (gsize) (at - authority));
      if (colon != NULL)
        password = percent_decode (colon + 1, (gsize) (at - colon - 1));
      if (user == NULL || (colon != NULL && password == NULL))
        return fail (error, SBX_NETRULES_ERROR_INVALID_ROUTE,
                     "upstream proxy URL credentials have an invalid %%-escape");
      if (memchr (authority, '@', (gsize) (at - authority)) != NULL)
        return fail (error, SBX_NETRULES_ERROR_INVALID_ROUTE,
                     "upstream proxy URL credentials must %%-escape '@'");
      hostport = g_strdup (at + 1);
    }
  else
    hostport = g_strdup (authority);

  if (hostport[0] == '\0')
    return fail (error, SBX_NETRULES_ERROR_INVALID_ROUTE, "upstream proxy URL has no host");
  if (!split_host_port (hostport, &host_raw, &port_text, &why))
    {
      /* no colon at all: the port is missing, which is its own error */
      if (strchr (hostport, ':') == NULL || g_str_has_suffix (hostport, "]"))
        return fail (error, SBX_NETRULES_ERROR_INVALID_ROUTE,
                     "upstream proxy port is invalid (it must be explicit, 1-65535)");
      return fail (error, SBX_NETRULES_ERROR_INVALID_ROUTE, "upstream proxy URL host is invalid: %s", why);
    }
  if (!sbx_netrules_normalize_host (host_raw, &host, &literal, NULL))
    return fail (error, SBX_NETRULES_ERROR_INVALID_ROUTE, "upstream proxy host “%s” is invalid", host_raw);
  if (!parse_port (port_text, &port))
    return fail (error, SBX_NETRULES_ERROR_INVALID_ROUTE,
                 "upstream proxy port “%s” is invalid (it must be explicit, 1-65535)", port_text);

  if (scheme_out != NULL)
    *scheme_out = g_steal_pointer (&scheme);
  if (host_out != NULL)
    *host_out = g_steal_pointer (&host);
  if (port_out != NULL)
    *port_out = port;
  if (user_out != NULL)
    *user_out = g_steal_pointer (&user);
  if (password_out != NULL)
    *password_out = g_steal_pointer (&password);
  if (password != NULL)
    memset (password, 0, strlen (password));
  return TRUE;
}

char *
sbx_netrules_route_fingerprint (const char *kind,
                                const char *endpoint,
                                gboolean    address_guarantee)
{
  g_autofree char *json = NULL;
  g_autofree char *hex = NULL;

  /* kind and endpoint come from the parsers above: [a-z0-9.:[\]-] only, so
   * no JSON escaping is needed; a character outside that set would change
   * the fingerprint format, so refuse to produce one. */
  for (const char *c = endpoint; *c != '\0'; c++)
    g_return_val_if_fail (*c != '"' && *c != '\\' && (guchar) *c >= 0x20, NULL);
  json = g_strdup_printf ("{\"Version\":1,\"Kind\":\"%s\",\"Endpoint\":\"%s\",\"AddressGuarantee\":%s}",
                          kind, endpoint, address_guarantee ? "true" : "false");
  hex = g_compute_checksum_for_string (G_CHECKSUM_SHA256, json, -1);
  return g_strconcat ("route-v1:", hex, NULL);
}

gboolean
sbx_netrules_secret_equal (const char *a,
                           const char *b)
{
  gsize la = strlen (a), lb = strlen (b);
  guint8 diff = la == lb ? 0 : 1;

  for (gsize i = 0; i < la; i++)
    diff |= (guint8) (a[i] ^ b[i % (lb == 0 ? 1 : lb)]);
  return lb != 0 && diff == 0;
}
