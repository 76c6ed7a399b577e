/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Network targets, address classes and egress routes.  Every rule is a row of a table. */
#include <sbx/sbx.h>
#include <string.h>

#include "sbx-egress-route-private.h"
#include "sbx-netrules-private.h"

/* ------------------------------------------------------------------------- */
/* Targets                                                                    */
/* ------------------------------------------------------------------------- */

typedef struct
{
  const char *raw;
  const char *canonical;  /* NULL: must be rejected */
  const char *host;
  guint16     port;
  gboolean    literal;
  const char *message;    /* glob of the rejection message */
} TargetCase;

static const TargetCase target_cases[] = {
  /* accepted and normalized */
  { "tcp:example.org:443", "tcp:example.org:443", "example.org", 443, FALSE },
  { "tcp:EXAMPLE.Org.:80", "tcp:example.org:80", "example.org", 80, FALSE },
  { "tcp: example.org :80", "tcp:example.org:80", "example.org", 80, FALSE },
  { "tcp:a-b.c0.d:1", "tcp:a-b.c0.d:1", "a-b.c0.d", 1, FALSE },
  { "tcp:example.org:65535", "tcp:example.org:65535", "example.org", 65535, FALSE },
  { "tcp:example.org:00080", "tcp:example.org:80", "example.org", 80, FALSE },
  { "tcp:localhost:3000", "tcp:localhost:3000", "localhost", 3000, FALSE },
  { "tcp:127.0.0.1:3000", "tcp:127.0.0.1:3000", "127.0.0.1", 3000, TRUE },
  { "tcp:[::1]:8080", "tcp:[::1]:8080", "::1", 8080, TRUE },
  { "tcp:[0:0:0:0:0:0:0:1]:8080", "tcp:[::1]:8080", "::1", 8080, TRUE },
  { "tcp:[2001:DB8:0:0:1:0:0:1]:443", "tcp:[2001:db8::1:0:0:1]:443", "2001:db8::1:0:0:1", 443, TRUE },
  { "tcp:[2001:db8:0:1:1:1:1:1]:443", "tcp:[2001:db8:0:1:1:1:1:1]:443", "2001:db8:0:1:1:1:1:1", 443, TRUE },
  { "tcp:[2001:0db8:0000:0000:0000:0000:0000:0001]:1", "tcp:[2001:db8::1]:1", "2001:db8::1", 1, TRUE },
  { "tcp:[::ffff:10.0.0.5]:5432", "tcp:[::ffff:10.0.0.5]:5432", "::ffff:10.0.0.5", 5432, TRUE },
  { "tcp:[::ffff:a00:5]:5432", "tcp:[::ffff:10.0.0.5]:5432", "::ffff:10.0.0.5", 5432, TRUE },
  { "tcp:[1:0:0:1:0:0:0:1]:9", "tcp:[1:0:0:1::1]:9", "1:0:0:1::1", 9, TRUE },
  { "tcp:[1:0:0:2:0:0:3:4]:9", "tcp:[1::2:0:0:3:4]:9", "1::2:0:0:3:4", 9, TRUE },
  { "tcp:[127.0.0.1]:80", "tcp:127.0.0.1:80", "127.0.0.1", 80, TRUE },
  { "tcp:[example.org]:80", "tcp:example.org:80", "example.org", 80, FALSE },
  /* a strict IPv4 literal only: these are names (then refused if they
   * resolve to a non-public address) */
  { "tcp:127.1:80", "tcp:127.1:80", "127.1", 80, FALSE },
  { "tcp:010.0.0.1:80", "tcp:010.0.0.1:80", "010.0.0.1", 80, FALSE },
  /* rejected */
  { "example.org:443", NULL, .message = "*transport must be tcp*" },
  { "udp:example.org:53", NULL, .message = "*transport must be tcp*" },
  { "TCP:example.org:443", NULL, .message = "*transport must be tcp*" },
  { "tcp:example.org", NULL, .message = "*missing port*" },
  { "tcp:example.org:", NULL, .message = "*port “” is invalid*" },
  { "tcp:example.org:0", NULL, .message = "*port “0” is invalid*" },
  { "tcp:example.org:65536", NULL, .message = "*port “65536” is invalid*" },
  { "tcp:example.org:99999999999999999999", NULL, .message = "*is invalid*" },
  { "tcp:example.org:+80", NULL, .message = "*port “+80” is invalid*" },
  { "tcp:example.org:8 0", NULL, .message = "*is invalid*" },
  { "tcp:example.org:http", NULL, .message = "*port “http” is invalid*" },
  { "tcp:::1:80", NULL, .message = "*too many colons*" },
  { "tcp:[::1:80", NULL, .message = "*missing ']'*" },
  { "tcp:[::1]80", NULL, .message = "*unexpected text*" },
  { "tcp:[::1]", NULL, .message = "*missing port*" },
  { "tcp::80", NULL, .message = "*hostname “” is invalid*" },
  { "tcp:.:80", NULL, .message = "*hostname “.” is invalid*" },
  { "tcp: :80", NULL, .message = "*is invalid*" },
  { "tcp:exa/mple:80", NULL, .message = "*is invalid*" },
  { "tcp:user@example.org:80", NULL, .message = "*is invalid*" },
  { "tcp:[fe80::1%eth0]:80", NULL, .message = "*is invalid*" },
  { "tcp:exa mple.org:80", NULL, .message = "*is invalid*" },
  { "tcp:under_score.org:80", NULL, .message = "*is invalid*" },
  { "tcp:-lead.org:80", NULL, .message = "*is invalid*" },
  { "tcp:trail-.org:80", NULL, .message = "*is invalid*" },
  { "tcp:a..b:80", NULL, .message = "*is invalid*" },
  { "tcp:example.org..:80", NULL, .message = "*is invalid*" },
  { "tcp:bücher.de:80", NULL, .message = "*must be ASCII*" },
  { "tcp:a:b:80", NULL, .message = "*too many colons*" },
};

static void
test_target_table (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (target_cases); i++)
    {
      const TargetCase *c = &target_cases[i];
      g_autoptr(GError) error = NULL;
      g_autoptr(SbxNetworkTarget) t = sbx_network_target_parse (c->raw, &error);

      g_test_message ("target “%s”", c->raw);
      if (c->canonical == NULL)
        {
          g_assert_null (t);
          g_assert_error (error, SBX_EGRESS_ROUTE_ERROR, SBX_EGRESS_ROUTE_ERROR_INVALID_TARGET);
          if (!g_pattern_match_simple (c->message, error->message))
            g_error ("“%s”: message “%s” does not match “%s”", c->raw, error->message, c->message);
          continue;
        }
      g_assert_no_error (error);
      g_assert_nonnull (t);
      g_assert_cmpstr (sbx_network_target_to_string (t), ==, c->canonical);
      g_assert_cmpstr (sbx_network_target_get_hostname (t), ==, c->host);
      g_assert_cmpuint (sbx_network_target_get_port (t), ==, c->port);
      g_assert_cmpint (sbx_network_target_is_ip_literal (t), ==, c->literal);
      g_assert_cmpstr (sbx_network_target_get_transport (t), ==, "tcp");
      g_assert_cmpstr (sbx_network_target_get_address (t), ==, c->canonical + 4);

      /* idempotent: the canonical form parses to itself */
      {
        g_autoptr(SbxNetworkTarget) again = sbx_network_target_parse (c->canonical, &error);

        g_assert_no_error (error);
        g_assert_true (sbx_network_target_equal (t, again));
        g_assert_cmpuint (sbx_network_target_hash (t), ==, sbx_network_target_hash (again));
      }
    }
}

static void
test_target_limits (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *label63 = g_strnfill (63, 'a');
  g_autofree char *label64 = g_strnfill (64, 'a');
  /* 63+1+63+1+63+1+61 = 253 */
  g_autofree char *label61 = g_strnfill (61, 'b');
  g_autofree char *name253 = g_strjoin (".", label63, label63, label63, label61, NULL);
  g_autofree char *name254 = g_strjoin (".", label63, label63, label63, label61, "c", NULL);
  g_autofree char *t63 = g_strdup_printf ("tcp:%s.org:1", label63);
  g_autofree char *t64 = g_strdup_printf ("tcp:%s.org:1", label64);
  g_autofree char *t253 = g_strdup_printf ("tcp:%s:1", name253);
  g_autofree char *t253dot = g_strdup_printf ("tcp:%s.:1", name253);
  g_autofree char *t254 = g_strdup_printf ("tcp:%s:1", name254);
  g_autoptr(SbxNetworkTarget) a = NULL;
  g_autoptr(SbxNetworkTarget) b = NULL;
  g_autoptr(SbxNetworkTarget) c = NULL;
  g_autoptr(SbxNetworkTarget) d = NULL;

  g_assert_cmpuint (strlen (name253), ==, 253);
  a = sbx_network_target_parse (t63, &error);
  g_assert_no_error (error);
  g_assert_nonnull (a);
  g_assert_null (sbx_network_target_parse (t64, &error));
  g_assert_error (error, SBX_EGRESS_ROUTE_ERROR, SBX_EGRESS_ROUTE_ERROR_INVALID_TARGET);
  g_clear_error (&error);
  b = sbx_network_target_parse (t253, &error);
  g_assert_no_error (error);
  c = sbx_network_target_parse (t253dot, &error);   /* the trailing dot is not counted */
  g_assert_no_error (error);
  g_assert_true (sbx_network_target_equal (b, c));
  g_assert_null (sbx_network_target_parse (t254, &error));
  g_assert_error (error, SBX_EGRESS_ROUTE_ERROR, SBX_EGRESS_ROUTE_ERROR_INVALID_TARGET);
  g_assert_true (strstr (error->message, "too long") != NULL);
  g_clear_error (&error);

  /* the constructor applies the same host rules */
  d = sbx_network_target_new ("2001:DB8::1", 443, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sbx_network_target_to_string (d), ==, "tcp:[2001:db8::1]:443");
  g_assert_null (sbx_network_target_new ("example.org", 0, &error));
  g_assert_error (error, SBX_EGRESS_ROUTE_ERROR, SBX_EGRESS_ROUTE_ERROR_INVALID_TARGET);
  g_clear_error (&error);
  g_assert_null (sbx_network_target_new ("a_b", 1, &error));
  g_assert_error (error, SBX_EGRESS_ROUTE_ERROR, SBX_EGRESS_ROUTE_ERROR_INVALID_TARGET);
  g_clear_error (&error);

  g_assert_cmpstr (SBX_NETWORK_TARGET_UNPARSEABLE, ==, "tcp:invalid:1");
}

/* ------------------------------------------------------------------------- */
/* Address classes                                                            */
/* ------------------------------------------------------------------------- */

static SbxAddressClass
class_of (const char *text)
{
  g_autoptr(GInetAddress) a = g_inet_address_new_from_string (text);

  if (a == NULL)
    g_error ("bad test address %s", text);
  return sbx_address_class_for_address (a);
}

/* Upstream's table, computed here independently: the first and the last
 * address of every prefix are non-public. */
static const char *const boundary_prefixes[] = {
  "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "100.100.100.200/32", "127.0.0.0/8",
  "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.31.196.0/24",
  "192.52.193.0/24", "192.88.99.0/24", "192.168.0.0/16", "192.175.48.0/24", "198.18.0.0/15",
  "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
  "::/96", "::1/128", "::ffff:0:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64",
  "2001::/23", "2001:db8::/32", "2002::/16", "2620:4f:8000::/48", "3fff::/20", "5f00::/16",
  "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
};

static void
test_address_class_boundaries (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (boundary_prefixes); i++)
    {
      g_auto(GStrv) parts = g_strsplit (boundary_prefixes[i], "/", 2);
      g_autoptr(GInetAddress) base = g_inet_address_new_from_string (parts[0]);
      guint bits = (guint) atoi (parts[1]);
      gsize len = g_inet_address_get_native_size (base);
      guint8 first[16], last[16];

      memcpy (first, g_inet_address_to_bytes (base), len);
      memcpy (last, first, len);
      for (guint bit = bits; bit < len * 8; bit++)
        {
          first[bit / 8] &= (guint8) ~(0x80 >> (bit % 8));
          last[bit / 8] |= (guint8) (0x80 >> (bit % 8));
        }
      for (int k = 0; k < 2; k++)
        {
          g_autoptr(GInetAddress) a = g_inet_address_new_from_bytes (k == 0 ? first : last,
                                                                     len == 4 ? G_SOCKET_FAMILY_IPV4
                                                                              : G_SOCKET_FAMILY_IPV6);
          g_autofree char *text = g_inet_address_to_string (a);
          SbxAddressClass klass = sbx_address_class_for_address (a);

          g_test_message ("%s: %s", boundary_prefixes[i], text);
          g_assert_cmpint (klass, !=, SBX_ADDRESS_CLASS_PUBLIC);
        }
    }
}

typedef struct
{
  const char     *address;
  SbxAddressClass klass;
} ClassCase;

static const ClassCase class_cases[] = {
  /* upstream's public examples */
  { "1.1.1.1", SBX_ADDRESS_CLASS_PUBLIC },
  { "8.8.8.8", SBX_ADDRESS_CLASS_PUBLIC },
  { "2001:4860:4860::8888", SBX_ADDRESS_CLASS_PUBLIC },
  { "::ffff:8.8.8.8", SBX_ADDRESS_CLASS_PUBLIC },
  /* just outside each IPv4 prefix */
  { "9.255.255.255", SBX_ADDRESS_CLASS_PUBLIC }, { "11.0.0.0", SBX_ADDRESS_CLASS_PUBLIC },
  { "100.63.255.255", SBX_ADDRESS_CLASS_PUBLIC }, { "100.128.0.0", SBX_ADDRESS_CLASS_PUBLIC },
  { "126.255.255.255", SBX_ADDRESS_CLASS_PUBLIC }, { "128.0.0.0", SBX_ADDRESS_CLASS_PUBLIC },
  { "169.253.255.255", SBX_ADDRESS_CLASS_PUBLIC }, { "169.255.0.0", SBX_ADDRESS_CLASS_PUBLIC },
  { "172.15.255.255", SBX_ADDRESS_CLASS_PUBLIC }, { "172.32.0.0", SBX_ADDRESS_CLASS_PUBLIC },
  { "192.0.1.0", SBX_ADDRESS_CLASS_PUBLIC }, { "192.0.3.0", SBX_ADDRESS_CLASS_PUBLIC },
  { "192.31.195.255", SBX_ADDRESS_CLASS_PUBLIC }, { "192.31.197.0", SBX_ADDRESS_CLASS_PUBLIC },
  { "192.52.192.255", SBX_ADDRESS_CLASS_PUBLIC }, { "192.52.194.0", SBX_ADDRESS_CLASS_PUBLIC },
  { "192.88.98.255", SBX_ADDRESS_CLASS_PUBLIC }, { "192.88.100.0", SBX_ADDRESS_CLASS_PUBLIC },
  { "192.167.255.255", SBX_ADDRESS_CLASS_PUBLIC }, { "192.169.0.0", SBX_ADDRESS_CLASS_PUBLIC },
  { "192.175.47.255", SBX_ADDRESS_CLASS_PUBLIC }, { "192.175.49.0", SBX_ADDRESS_CLASS_PUBLIC },
  { "198.17.255.255", SBX_ADDRESS_CLASS_PUBLIC }, { "198.20.0.0", SBX_ADDRESS_CLASS_PUBLIC },
  { "198.51.99.255", SBX_ADDRESS_CLASS_PUBLIC }, { "198.51.101.0", SBX_ADDRESS_CLASS_PUBLIC },
  { "203.0.112.255", SBX_ADDRESS_CLASS_PUBLIC }, { "203.0.114.0", SBX_ADDRESS_CLASS_PUBLIC },
  { "223.255.255.255", SBX_ADDRESS_CLASS_PUBLIC },
  { "100.100.100.199", SBX_ADDRESS_CLASS_NON_PUBLIC },  /* inside 100.64/10 */
  { "1.0.0.0", SBX_ADDRESS_CLASS_PUBLIC },
  /* just outside each IPv6 prefix */
  { "::1:0:0", SBX_ADDRESS_CLASS_PUBLIC },
  { "64:ff9b::1:0:0", SBX_ADDRESS_CLASS_PUBLIC }, { "64:ff9b:2::", SBX_ADDRESS_CLASS_PUBLIC },
  { "100:0:0:1::", SBX_ADDRESS_CLASS_PUBLIC }, { "100::1:0:0:0", SBX_ADDRESS_CLASS_NON_PUBLIC },
  { "2001:200::", SBX_ADDRESS_CLASS_PUBLIC }, { "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", SBX_ADDRESS_CLASS_PUBLIC },
  { "2001:db9::", SBX_ADDRESS_CLASS_PUBLIC }, { "2001:ffff::", SBX_ADDRESS_CLASS_PUBLIC },
  { "2003::", SBX_ADDRESS_CLASS_PUBLIC },
  { "2620:4f:7fff:ffff:ffff:ffff:ffff:ffff", SBX_ADDRESS_CLASS_PUBLIC }, { "2620:4f:8001::", SBX_ADDRESS_CLASS_PUBLIC },
  { "3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", SBX_ADDRESS_CLASS_PUBLIC }, { "3fff:1000::", SBX_ADDRESS_CLASS_PUBLIC },
  { "5eff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", SBX_ADDRESS_CLASS_PUBLIC }, { "5f01::", SBX_ADDRESS_CLASS_PUBLIC },
  { "fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", SBX_ADDRESS_CLASS_PUBLIC }, { "fe00::", SBX_ADDRESS_CLASS_PUBLIC },
  { "fec0::", SBX_ADDRESS_CLASS_NON_PUBLIC }, { "fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", SBX_ADDRESS_CLASS_PUBLIC },
  /* non-public, through IPv4-mapped forms too */
  { "127.0.0.1", SBX_ADDRESS_CLASS_NON_PUBLIC }, { "::ffff:127.0.0.1", SBX_ADDRESS_CLASS_NON_PUBLIC },
  { "::ffff:10.1.2.3", SBX_ADDRESS_CLASS_NON_PUBLIC }, { "::1", SBX_ADDRESS_CLASS_NON_PUBLIC },
  { "::", SBX_ADDRESS_CLASS_NON_PUBLIC }, { "0.0.0.0", SBX_ADDRESS_CLASS_NON_PUBLIC },
  { "255.255.255.255", SBX_ADDRESS_CLASS_NON_PUBLIC }, { "169.254.1.1", SBX_ADDRESS_CLASS_NON_PUBLIC },
  /* metadata, in every spelling */
  { "169.254.169.254", SBX_ADDRESS_CLASS_METADATA }, { "::ffff:169.254.169.254", SBX_ADDRESS_CLASS_METADATA },
  { "::169.254.169.254", SBX_ADDRESS_CLASS_METADATA }, { "64:ff9b::169.254.169.254", SBX_ADDRESS_CLASS_METADATA },
  { "2002:a9fe:a9fe::", SBX_ADDRESS_CLASS_METADATA }, { "fd00:ec2::254", SBX_ADDRESS_CLASS_METADATA },
  { "fd00:ec2:0:0:0:0:0:254", SBX_ADDRESS_CLASS_METADATA }, { "169.254.170.2", SBX_ADDRESS_CLASS_METADATA },
  { "100.100.100.200", SBX_ADDRESS_CLASS_METADATA },
  { "169.254.169.253", SBX_ADDRESS_CLASS_NON_PUBLIC }, { "fd00:ec2::253", SBX_ADDRESS_CLASS_NON_PUBLIC },
};

static void
test_address_class_table (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (class_cases); i++)
    {
      g_test_message ("%s", class_cases[i].address);
      g_assert_cmpint (class_of (class_cases[i].address), ==, class_cases[i].klass);
    }
}

/* What sbx never reaches, refused when it is approved
 * (sbx_network_target_check_reachable): the metadata addresses in every IP
 * form the classification knows, and the numeric names the resolver reads
 * as one of them without DNS.  Everything else passes (names are judged
 * when they resolve). */
typedef struct
{
  const char *target;
  gboolean    reachable;
} ReachCase;

static const ReachCase reach_cases[] = {
  { "tcp:169.254.169.254:80", FALSE },            /* AWS, GCP, Azure, ... */
  { "tcp:169.254.170.2:80", FALSE },              /* ECS task metadata */
  { "tcp:100.100.100.200:80", FALSE },            /* Alibaba */
  { "tcp:169.254.169.254.:443", FALSE },          /* trailing dot */
  { "tcp:[fd00:ec2::254]:80", FALSE },            /* AWS IPv6 */
  { "tcp:[::ffff:169.254.169.254]:80", FALSE },   /* IPv4-mapped */
  { "tcp:[::ffff:a9fe:a9fe]:80", FALSE },         /* IPv4-mapped, hex */
  { "tcp:[::169.254.169.254]:80", FALSE },        /* IPv4-compatible */
  { "tcp:[64:ff9b::a9fe:a9fe]:80", FALSE },       /* NAT64 */
  { "tcp:[2002:a9fe:a9fe::]:80", FALSE },         /* 6to4 */
  { "tcp:[::ffff:100.100.100.200]:80", FALSE },
  { "tcp:2852039166:80", FALSE },                 /* numeric names */
  { "tcp:0xa9fea9fe:80", FALSE },
  { "tcp:169.254.43518:80", FALSE },
  { "tcp:0251.0376.0251.0376:80", FALSE },
  { "tcp:0xa9.0xfe.0xa9.0xfe:80", FALSE },
  /* reachable when approved (a non-public literal only when named) */
  { "tcp:169.254.169.253:80", TRUE },
  { "tcp:[fd00:ec2::253]:80", TRUE },
  { "tcp:127.0.0.1:3000", TRUE },
  { "tcp:[::1]:8080", TRUE },
  { "tcp:10.0.0.1:80", TRUE },
  { "tcp:2852039167:80", TRUE },                  /* 169.254.169.255 */
  { "tcp:example.org:443", TRUE },
  { "tcp:metadata.example:80", TRUE },            /* a name: judged when it resolves */
};

static void
test_target_reachable (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (reach_cases); i++)
    {
      const ReachCase *c = &reach_cases[i];
      g_autoptr(GError) error = NULL;
      g_autoptr(SbxNetworkTarget) target = sbx_network_target_parse (c->target, &error);
      gboolean ok;

      g_test_message ("%s", c->target);
      g_assert_no_error (error);
      ok = sbx_network_target_check_reachable (target, &error);
      g_assert_cmpint (ok, ==, c->reachable);
      if (c->reachable)
        {
          g_assert_no_error (error);
          continue;
        }
      g_assert_error (error, SBX_EGRESS_ROUTE_ERROR, SBX_EGRESS_ROUTE_ERROR_ADDRESS_DENIED);
      g_assert_nonnull (strstr (error->message, sbx_network_target_get_hostname (target)));
      g_assert_nonnull (strstr (error->message, "cloud metadata address"));
      g_assert_nonnull (strstr (error->message, "never reachable"));
    }
}

/* The resolution rule: one row per (host kind, named, answer set). */
typedef struct
{
  const char *host;
  gboolean    literal;
  gboolean    named;
  const char *answers;   /* comma-separated; "" = no answer */
  int         code;      /* 0 = allowed */
} CheckCase;

static const CheckCase check_cases[] = {
  { "example.org", FALSE, TRUE, "93.184.216.34", 0 },
  { "example.org", FALSE, TRUE, "93.184.216.34,2606:2800:220:1::248", 0 },
  { "example.org", FALSE, TRUE, "93.184.216.34,10.0.0.1", SBX_EGRESS_ROUTE_ERROR_ADDRESS_DENIED },  /* mixed */
  { "example.org", FALSE, TRUE, "10.0.0.1,93.184.216.34", SBX_EGRESS_ROUTE_ERROR_ADDRESS_DENIED },
  { "localhost", FALSE, TRUE, "127.0.0.1", SBX_EGRESS_ROUTE_ERROR_ADDRESS_DENIED },
  { "rebind.example", FALSE, TRUE, "::ffff:192.168.1.1", SBX_EGRESS_ROUTE_ERROR_ADDRESS_DENIED },
  { "meta.example", FALSE, TRUE, "169.254.169.254", SBX_EGRESS_ROUTE_ERROR_ADDRESS_DENIED },
  { "example.org", FALSE, TRUE, "", SBX_EGRESS_ROUTE_ERROR_RESOLUTION_FAILED },
  /* IP literals: non-public allowed only when named exactly */
  { "127.0.0.1", TRUE, TRUE, "127.0.0.1", 0 },
  { "127.0.0.1", TRUE, FALSE, "127.0.0.1", SBX_EGRESS_ROUTE_ERROR_ADDRESS_DENIED },
  { "::1", TRUE, TRUE, "::1", 0 },
  { "10.0.0.5", TRUE, TRUE, "10.0.0.5", 0 },
  { "10.0.0.5", TRUE, FALSE, "10.0.0.5", SBX_EGRESS_ROUTE_ERROR_ADDRESS_DENIED },
  { "8.8.8.8", TRUE, FALSE, "8.8.8.8", 0 },
  /* metadata never, named or not */
  { "169.254.169.254", TRUE, TRUE, "169.254.169.254", SBX_EGRESS_ROUTE_ERROR_ADDRESS_DENIED },
  { "fd00:ec2::254", TRUE, TRUE, "fd00:ec2::254", SBX_EGRESS_ROUTE_ERROR_ADDRESS_DENIED },
  { "::ffff:169.254.169.254", TRUE, TRUE, "::ffff:169.254.169.254", SBX_EGRESS_ROUTE_ERROR_ADDRESS_DENIED },
};

static void
test_check_addresses (void)
{
  for (gsize i = 0; i < G_N_ELEMENTS (check_cases); i++)
    {
      const CheckCase *c = &check_cases[i];
      g_auto(GStrv) answers = g_strsplit (c->answers, ",", -1);
      GList *list = NULL;
      g_autoptr(GError) error = NULL;
      gboolean ok;

      for (gsize k = 0; answers[k] != NULL; k++)
        if (*answers[k] != '\0')
          list = g_list_append (list, g_inet_address_new_from_string (answers[k]));
      ok = sbx_netrules_check_addresses (c->host, c->literal, c->named, list, &error);
      g_test_message ("%s named=%d [%s] -> %s", c->host, c->named, c->answers, ok ? "ok" : error->message);
      if (c->code == 0)
        {
          g_assert_no_error (error);
          g_assert_true (ok);
        }
      else
        {
          g_assert_false (ok);
          g_assert_error (error, SBX_EGRESS_ROUTE_ERROR, c->code);
        }
      g_list_free_full (list, g_object_unref);
    }
}

/* ------------------------------------------------------------------------- */
/* Routes                                                                     */
/* ------------------------------------------------------------------------- */

static void
test_route_direct (void)
{
  g_autoptr(SbxEgressRoute) r = sbx_egress_route_new_direct ();
  g_autofree char *config = sbx_egress_route_dup_plugin_config (r);

  g_assert_cmpstr (sbx_egress_route_get_fingerprint (r), ==,
                   "route-v1:80b26a4527e3e2a376fba2710f15e5810847af6c0762b3ba2e68ab7417f6c09d");
  g_assert_cmpstr (sbx_egress_route_to_string (r), ==, "direct");
  g_assert_true (sbx_egress_route_is_direct (r));
  g_assert_null (sbx_egress_route_get_upstream (r));
  g_assert_true (sbx_egress_route_get_target_guarantee (r));
  g_assert_true (sbx_egress_route_get_address_guarantee (r));
  g_assert_cmpstr (config, ==, "direct");
}

typedef struct
{
  const char *url;
  gboolean    trusted;
  const char *fingerprint;   /* NULL: only "route-v1:" prefix checked */
  const char *text;          /* NULL: must be rejected */
  const char *user;
  const char *password;
  const char *message;
} UpstreamCase;

static const UpstreamCase upstream_cases[] = {
  { "http://proxy.example:8080", FALSE,
    "route-v1:c92b8d2179f320a97289e555c7c8b6eab86179a384e85e6eef7507449437d9d2", "http://proxy.example:8080" },
  { "HTTP://Proxy.Example.:08080", FALSE,
    "route-v1:c92b8d2179f320a97289e555c7c8b6eab86179a384e85e6eef7507449437d9d2", "http://proxy.example:8080" },
  /* credentials never change the fingerprint */
  { "http://alice:s3cr%40t@proxy.example:8080", FALSE,
    "route-v1:c92b8d2179f320a97289e555c7c8b6eab86179a384e85e6eef7507449437d9d2", "http://proxy.example:8080",
    "alice", "s3cr@t" },
  { "http://alice@proxy.example:8080", FALSE,
    "route-v1:c92b8d2179f320a97289e555c7c8b6eab86179a384e85e6eef7507449437d9d2", "http://proxy.example:8080",
    "alice", NULL },
  { "https://proxy.example:8443", TRUE, NULL, "https://proxy.example:8443" },
  { "http://[::1]:3128", FALSE, NULL, "http://[::1]:3128" },
  { "http://127.0.0.1:3128", FALSE, NULL, "http://127.0.0.1:3128" },
  /* rejected; the message never repeats the URL */
  { "", FALSE, .message = "*http://HOST:PORT*" },
  { "socks5://proxy.example:1080", FALSE, .message = "*must use http or https*" },
  { "ftp://proxy.example:21", FALSE, .message = "*must use http or https*" },
  { "proxy.example:8080", FALSE, .message = "*http://HOST:PORT*" },
  { "http://proxy.example:8080/", FALSE, .message = "*only authority*" },
  { "http://proxy.example:8080/path", FALSE, .message = "*only authority*" },
  { "http://proxy.example:8080?q", FALSE, .message = "*only authority*" },
  { "http://proxy.example:8080#f", FALSE, .message = "*only authority*" },
  { "http://proxy.example", FALSE, .message = "*port is invalid*" },
  { "http://proxy.example:", FALSE, .message = "*port “” is invalid*" },
  { "http://proxy.example:0", FALSE, .message = "*port “0” is invalid*" },
  { "http://proxy.example:65536", FALSE, .message = "*port “65536” is invalid*" },
  { "http://[::1]", FALSE, .message = "*port is invalid*" },
  { "http://", FALSE, .message = "*no host*" },
  { "http://:8080", FALSE, .message = "*host “” is invalid*" },
  { "http://under_score:8080", FALSE, .message = "*host “under_score” is invalid*" },
  { "http://user:pa ss@proxy.example:8080", FALSE, .message = "*space*" },
  { "http://user:p%zzass@proxy.example:8080", FALSE, .message = "*invalid %-escape*" },
  { "http://user:p%00ass@proxy.example:8080", FALSE, .message = "*invalid %-escape*" },
};

static void
test_route_upstream_table (void)
{
  GHashTable *seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (gsize i = 0; i < G_N_ELEMENTS (upstream_cases); i++)
    {
      const UpstreamCase *c = &upstream_cases[i];
      g_autoptr(GError) error = NULL;
      g_autoptr(SbxEgressRoute) r = sbx_egress_route_new_upstream (c->url, c->trusted, &error);

      g_test_message ("upstream “%s”", c->url);
      if (c->text == NULL)
        {
          g_assert_null (r);
          g_assert_error (error, SBX_EGRESS_ROUTE_ERROR, SBX_EGRESS_ROUTE_ERROR_INVALID_ROUTE);
          if (!g_pattern_match_simple (c->message, error->message))
            g_error ("“%s”: message “%s” does not match “%s”", c->url, error->message, c->message);
          /* no secret in the message: neither the password part nor the URL */
          g_assert_null (strstr (error->message, "pa ss"));
          g_assert_null (strstr (error->message, "p%zzass"));
          if (*c->url != '\0')
            g_assert_null (strstr (error->message, c->url));
          continue;
        }
      g_assert_no_error (error);
      g_assert_nonnull (r);
      g_assert_true (g_str_has_prefix (sbx_egress_route_get_fingerprint (r), "route-v1:"));
      g_assert_cmpuint (strlen (sbx_egress_route_get_fingerprint (r)), ==, 9 + 64);
      if (c->fingerprint != NULL)
        g_assert_cmpstr (sbx_egress_route_get_fingerprint (r), ==, c->fingerprint);
      g_assert_cmpstr (sbx_egress_route_to_string (r), ==, c->text);
      g_assert_cmpstr (sbx_egress_route_get_upstream (r), ==, c->text);
      g_assert_false (sbx_egress_route_is_direct (r));
      g_assert_true (sbx_egress_route_get_target_guarantee (r));
      g_assert_cmpint (sbx_egress_route_get_address_guarantee (r), ==, c->trusted);
      if (c->password != NULL)
        {
          g_assert_null (strstr (sbx_egress_route_get_fingerprint (r), c->password));
          g_assert_null (strstr (sbx_egress_route_to_string (r), c->password));
          g_assert_null (strstr (sbx_egress_route_to_string (r), c->user));
        }
      /* the plugin config carries the credentials (escaped) and round-trips */
      {
        g_autofree char *config = sbx_egress_route_dup_plugin_config (r);
        const char *url = config;
        g_autofree char *user = NULL;
        g_autofree char *password = NULL;

        if (c->trusted)
          {
            g_assert_true (g_str_has_prefix (config, "trusted-address-guarantee "));
            url += strlen ("trusted-address-guarantee ");
          }
        g_assert_true (sbx_netrules_parse_upstream_url (url, NULL, NULL, NULL, &user, &password, &error));
        g_assert_no_error (error);
        g_assert_cmpstr (user, ==, c->user);
        g_assert_cmpstr (password, ==, c->password);
      }
      g_hash_table_add (seen, g_strdup (sbx_egress_route_get_fingerprint (r)));
    }

  /* distinct routes, distinct fingerprints: the http example (4 spellings),
   * https trusted, [::1], 127.0.0.1, plus direct */
  {
    g_autoptr(SbxEgressRoute) d = sbx_egress_route_new_direct ();
    g_autoptr(SbxEgressRoute) t = sbx_egress_route_new_upstream ("http://proxy.example:8080", TRUE, NULL);

    g_hash_table_add (seen, g_strdup (sbx_egress_route_get_fingerprint (d)));
    g_hash_table_add (seen, g_strdup (sbx_egress_route_get_fingerprint (t)));
    g_assert_cmpuint (g_hash_table_size (seen), ==, 6);
  }
  g_hash_table_unref (seen);
}

/* A resolver with fixed answers: rebinding and mixed answers without DNS. */
typedef struct
{
  GResolver parent;
  GHashTable *answers;  /* name -> "a,b" */
  guint lookups;
} FixedResolver;
typedef struct
{
  GResolverClass parent_class;
} FixedResolverClass;

static GType fixed_resolver_get_type (void);
G_DEFINE_TYPE (FixedResolver, fixed_resolver, G_TYPE_RESOLVER)

static GList *
fixed_lookup_by_name (GResolver     *resolver,
                      const char    *hostname,
                      GCancellable  *cancellable,
                      GError       **error)
{
  FixedResolver *self = (FixedResolver *) resolver;
  const char *answer = g_hash_table_lookup (self->answers, hostname);
  g_auto(GStrv) parts = NULL;
  GList *list = NULL;

  self->lookups++;
  if (answer == NULL)
    {
      g_set_error (error, G_RESOLVER_ERROR, G_RESOLVER_ERROR_NOT_FOUND, "no such name %s", hostname);
      return NULL;
    }
  parts = g_strsplit (answer, ",", -1);
  for (gsize i = 0; parts[i] != NULL; i++)
    list = g_list_append (list, g_inet_address_new_from_string (parts[i]));
  return list;
}

static void
fixed_resolver_finalize (GObject *object)
{
  g_hash_table_unref (((FixedResolver *) object)->answers);
  G_OBJECT_CLASS (fixed_resolver_parent_class)->finalize (object);
}

static void
fixed_resolver_class_init (FixedResolverClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = fixed_resolver_finalize;
  G_RESOLVER_CLASS (klass)->lookup_by_name = fixed_lookup_by_name;
}

static void
fixed_resolver_init (FixedResolver *self)
{
  self->answers = g_hash_table_new (g_str_hash, g_str_equal);
}

static void
test_route_resolve (void)
{
  g_autoptr(SbxEgressRoute) direct = sbx_egress_route_new_direct ();
  FixedResolver *fixed = g_object_new (fixed_resolver_get_type (), NULL);
  g_autoptr(SbxEgressRoute) r = NULL;
  g_autoptr(SbxEgressRoute) up = sbx_egress_route_new_upstream ("http://u:p@proxy.example:3128", FALSE, NULL);
  static const struct
  {
    const char *target;
    gboolean    named;
    int         code;
    guint       n;
  } rows[] = {
    { "tcp:public.example:443", TRUE, 0, 2 },
    { "tcp:mixed.example:443", TRUE, SBX_EGRESS_ROUTE_ERROR_ADDRESS_DENIED, 0 },
    { "tcp:rebind.example:443", TRUE, SBX_EGRESS_ROUTE_ERROR_ADDRESS_DENIED, 0 },
    { "tcp:metadata.example:80", TRUE, SBX_EGRESS_ROUTE_ERROR_ADDRESS_DENIED, 0 },
    { "tcp:missing.example:80", TRUE, SBX_EGRESS_ROUTE_ERROR_RESOLUTION_FAILED, 0 },
    { "tcp:127.0.0.1:3000", TRUE, 0, 1 },
    { "tcp:127.0.0.1:3000", FALSE, SBX_EGRESS_ROUTE_ERROR_ADDRESS_DENIED, 0 },
    { "tcp:[::1]:8080", TRUE, 0, 1 },
    { "tcp:10.0.0.5:5432", TRUE, 0, 1 },
    { "tcp:169.254.169.254:80", TRUE, SBX_EGRESS_ROUTE_ERROR_ADDRESS_DENIED, 0 },
    { "tcp:[fd00:ec2::254]:80", TRUE, SBX_EGRESS_ROUTE_ERROR_ADDRESS_DENIED, 0 },
  };
  guint literal_lookups;

  g_hash_table_insert (fixed->answers, "public.example", "93.184.216.34,2606:2800:220:1::248");
  g_hash_table_insert (fixed->answers, "mixed.example", "93.184.216.34,192.168.0.10");
  g_hash_table_insert (fixed->answers, "rebind.example", "127.0.0.1");
  g_hash_table_insert (fixed->answers, "metadata.example", "169.254.169.254");
  r = sbx_egress_route_with_resolver (direct, G_RESOLVER (fixed));
  g_assert_cmpstr (sbx_egress_route_get_fingerprint (r), ==, sbx_egress_route_get_fingerprint (direct));

  for (gsize i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autoptr(SbxNetworkTarget) t = sbx_network_target_parse (rows[i].target, NULL);
      g_autoptr(GError) error = NULL;
      GList *addrs = sbx_egress_route_resolve_target (r, t, rows[i].named, NULL, &error);

      g_test_message ("%s named=%d", rows[i].target, rows[i].named);
      if (rows[i].code == 0)
        {
          g_assert_no_error (error);
          g_assert_cmpuint (g_list_length (addrs), ==, rows[i].n);
        }
      else
        {
          g_assert_null (addrs);
          g_assert_error (error, SBX_EGRESS_ROUTE_ERROR, rows[i].code);
        }
      g_resolver_free_addresses (addrs);
    }
  /* literals are never looked up: 5 names above, 5 lookups */
  literal_lookups = fixed->lookups;
  g_assert_cmpuint (literal_lookups, ==, 5);

  /* an upstream route does not resolve here */
  {
    g_autoptr(SbxNetworkTarget) t = sbx_network_target_parse ("tcp:public.example:443", NULL);
    g_autoptr(GError) error = NULL;

    g_assert_null (sbx_egress_route_resolve_target (up, t, TRUE, NULL, &error));
    g_assert_error (error, SBX_EGRESS_ROUTE_ERROR, SBX_EGRESS_ROUTE_ERROR_INVALID_ROUTE);
    g_assert_null (strstr (error->message, ":p@"));
  }
  g_object_unref (fixed);
}

static void
test_secret_equal (void)
{
  g_assert_true (sbx_netrules_secret_equal ("abc", "abc"));
  g_assert_false (sbx_netrules_secret_equal ("abc", "abd"));
  g_assert_false (sbx_netrules_secret_equal ("abc", "ab"));
  g_assert_false (sbx_netrules_secret_equal ("ab", "abc"));
  g_assert_false (sbx_netrules_secret_equal ("", ""));
  g_assert_false (sbx_netrules_secret_equal ("x", ""));
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/egress/target/table", test_target_table);
  g_test_add_func ("/egress/target/limits", test_target_limits);
  g_test_add_func ("/egress/address-class/boundaries", test_address_class_boundaries);
  g_test_add_func ("/egress/address-class/table", test_address_class_table);
  g_test_add_func ("/egress/address-class/resolution-rule", test_check_addresses);
  g_test_add_func ("/egress/target/reachable", test_target_reachable);
  g_test_add_func ("/egress/route/direct", test_route_direct);
  g_test_add_func ("/egress/route/upstream-table", test_route_upstream_table);
  g_test_add_func ("/egress/route/resolve", test_route_resolve);
  g_test_add_func ("/egress/route/secret-equal", test_secret_equal);
  return g_test_run ();
}
