/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The DNS stub's packet parser and answers (sbx-egress-dns.c), and the
 * listeners of one execution served through the plugin's real vtable
 * (serve_listeners: the stub's socket and forwarders), against servers on
 * loopback only; the route's resolver and dialer are swapped so that names
 * "resolve" to public addresses that lead back to loopback.
 *
 * Malformed packets: truncated headers, names, labels and question tails,
 * compression loops and forward pointers, oversized names and labels,
 * extended label types, wrong section counts, responses and other opcodes.
 * Each refusal sits next to the accepted packet it was derived from (the
 * positive control).
 */
#include "sbx-egress-dns.h"
#include "sbx-egress-forward.h"
#include "sbx-egress-proxy.h"
#include "egress-test-util.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

/* A query for @name (dotted) of @qtype with id 0x1234 and RD set. */
static GByteArray *
query_for (const char *name,
           guint16     qtype)
{
  static const guint8 header[12] = { 0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0 };
  GByteArray *q = g_byte_array_new ();
  g_auto(GStrv) labels = g_strsplit (name, ".", -1);
  guint8 tail[4] = { (guint8) (qtype >> 8), (guint8) qtype, 0, 1 };

  g_byte_array_append (q, header, sizeof header);
  for (guint i = 0; labels[i] != NULL; i++)
    {
      guint8 len = (guint8) strlen (labels[i]);

      if (len == 0)
        continue;
      g_byte_array_append (q, &len, 1);
      g_byte_array_append (q, (const guint8 *) labels[i], len);
    }
  g_byte_array_append (q, (const guint8 *) "", 1);
  g_byte_array_append (q, tail, 4);
  return q;
}

static SbxDnsParse
parse (GByteArray  *packet,
       SbxDnsQuery *q)
{
  return sbx_dns_parse_query (packet->data, packet->len, q);
}

static void
test_parse_valid (void)
{
  g_autoptr(GByteArray) p = query_for ("Pkg.Example.test", SBX_DNS_TYPE_A);
  SbxDnsQuery q;

  g_assert_cmpint (parse (p, &q), ==, SBX_DNS_PARSE_OK);
  g_assert_cmpuint (q.id, ==, 0x1234);
  g_assert_cmpstr (q.name, ==, "Pkg.Example.test");
  g_assert_cmpstr (q.lower, ==, "pkg.example.test");
  g_assert_cmpuint (q.n_labels, ==, 3);
  g_assert_cmpuint (q.qtype, ==, SBX_DNS_TYPE_A);
  g_assert_cmpuint (q.qclass, ==, SBX_DNS_CLASS_IN);
  /* one EDNS OPT record in the additional section is allowed */
  {
    static const guint8 opt[11] = { 0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 0 };

    p->data[11] = 1;
    g_byte_array_append (p, opt, sizeof opt);
    g_assert_cmpint (parse (p, &q), ==, SBX_DNS_PARSE_OK);
  }
}

static void
test_parse_truncated (void)
{
  g_autoptr(GByteArray) p = query_for ("a.example", SBX_DNS_TYPE_A);
  SbxDnsQuery q;

  g_assert_cmpint (parse (p, &q), ==, SBX_DNS_PARSE_OK);
  /* every strict prefix is refused: no header -> dropped, else FORMERR */
  for (guint len = 0; len < p->len; len++)
    {
      SbxDnsParse r = sbx_dns_parse_query (p->data, len, &q);

      g_assert_cmpint (r, ==, len < SBX_DNS_HEADER_SIZE ? SBX_DNS_PARSE_DROP : SBX_DNS_PARSE_FORMERR);
    }
  g_assert_cmpint (sbx_dns_parse_query (NULL, 0, &q), ==, SBX_DNS_PARSE_DROP);
}

static void
test_parse_counts_and_flags (void)
{
  SbxDnsQuery q;
  struct { guint off; guint8 value; SbxDnsParse expect; } cases[] = {
    { 5, 0, SBX_DNS_PARSE_FORMERR },     /* QDCOUNT 0 */
    { 5, 2, SBX_DNS_PARSE_FORMERR },     /* QDCOUNT 2 */
    { 4, 1, SBX_DNS_PARSE_FORMERR },     /* QDCOUNT 257 */
    { 7, 1, SBX_DNS_PARSE_FORMERR },     /* ANCOUNT 1 */
    { 9, 1, SBX_DNS_PARSE_FORMERR },     /* NSCOUNT 1 */
    { 11, 2, SBX_DNS_PARSE_FORMERR },    /* ARCOUNT 2 */
    { 2, 0x81, SBX_DNS_PARSE_DROP },     /* QR: a response is never answered */
    { 2, 0x11, SBX_DNS_PARSE_NOTIMP },   /* opcode 2 (STATUS) */
    { 2, 0x21, SBX_DNS_PARSE_NOTIMP },   /* opcode 4 (NOTIFY) */
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GByteArray) p = query_for ("a.example", SBX_DNS_TYPE_A);

      g_assert_cmpint (parse (p, &q), ==, SBX_DNS_PARSE_OK);
      p->data[cases[i].off] = cases[i].value;
      g_assert_cmpint (parse (p, &q), ==, cases[i].expect);
      if (cases[i].expect != SBX_DNS_PARSE_DROP)
        g_assert_cmpuint (q.id, ==, 0x1234);
    }
}

static void
test_parse_compression (void)
{
  SbxDnsQuery q;
  /* header, then at 12 the name given as bytes, then type/class */
  static const guint8 header[12] = { 0, 7, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0 };
  struct { const guint8 *name; gsize len; SbxDnsParse expect; const char *text; } cases[] = {
    /* a pointer onto itself: a loop */
    { (const guint8 *) "\xc0\x0c", 2, SBX_DNS_PARSE_FORMERR, NULL },
    /* a pointer forwards (to its own tail) */
    { (const guint8 *) "\xc0\x0e\x01" "a\x00", 5, SBX_DNS_PARSE_FORMERR, NULL },
    /* a label, then a pointer back to that label: a loop through it */
    { (const guint8 *) "\x01" "a\xc0\x0c", 4, SBX_DNS_PARSE_FORMERR, NULL },
    /* a pointer whose second byte is missing */
    { (const guint8 *) "\xc0", 1, SBX_DNS_PARSE_FORMERR, NULL },
    /* extended label types 0x40 and 0x80 */
    { (const guint8 *) "\x41" "a\x00", 3, SBX_DNS_PARSE_FORMERR, NULL },
    { (const guint8 *) "\x81" "a\x00", 3, SBX_DNS_PARSE_FORMERR, NULL },
    /* a backward pointer into the header reads "\x00": the root name, valid */
    { (const guint8 *) "\xc0\x03", 2, SBX_DNS_PARSE_OK, "" },
    /* a NUL or a dot inside a label cannot be an approved host */
    { (const guint8 *) "\x03" "a\x00" "b\x00", 6, SBX_DNS_PARSE_FORMERR, NULL },
    { (const guint8 *) "\x03" "a.b\x00", 5, SBX_DNS_PARSE_FORMERR, NULL },
    /* the positive control: the same label plain */
    { (const guint8 *) "\x03" "abc\x00", 5, SBX_DNS_PARSE_OK, "abc" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GByteArray) p = g_byte_array_new ();
      static const guint8 tail[4] = { 0, 1, 0, 1 };

      g_byte_array_append (p, header, sizeof header);
      g_byte_array_append (p, cases[i].name, (guint) cases[i].len);
      g_byte_array_append (p, tail, sizeof tail);
      g_assert_cmpint (parse (p, &q), ==, cases[i].expect);
      if (cases[i].text != NULL)
        g_assert_cmpstr (q.name, ==, cases[i].text);
    }
}

static void
test_parse_oversized (void)
{
  SbxDnsQuery q;
  g_autofree char *l63 = g_strnfill (63, 'a');
  g_autofree char *l64 = g_strnfill (64, 'a');
  g_autofree char *l61 = g_strnfill (61, 'b');
  g_autofree char *l62 = g_strnfill (62, 'b');
  /* 3 x (1 + 63) + (1 + 61) + root = 255 octets: the largest name */
  g_autofree char *max = g_strjoin (".", l63, l63, l63, l61, NULL);
  g_autofree char *over = g_strjoin (".", l63, l63, l63, l62, NULL);
  g_autoptr(GByteArray) ok63 = query_for (l63, SBX_DNS_TYPE_A);
  g_autoptr(GByteArray) bad64 = query_for (l64, SBX_DNS_TYPE_A);
  g_autoptr(GByteArray) pmax = query_for (max, SBX_DNS_TYPE_A);
  g_autoptr(GByteArray) pover = query_for (over, SBX_DNS_TYPE_A);

  g_assert_cmpint (parse (ok63, &q), ==, SBX_DNS_PARSE_OK);
  g_assert_cmpint (parse (bad64, &q), ==, SBX_DNS_PARSE_FORMERR);   /* 64 reads as an extended type */
  g_assert_cmpint (parse (pmax, &q), ==, SBX_DNS_PARSE_OK);
  g_assert_cmpuint (strlen (q.name), ==, 253);
  g_assert_cmpint (parse (pover, &q), ==, SBX_DNS_PARSE_FORMERR);
}

static GHashTable *
names_with (const char *name,
            const char *address)
{
  GHashTable *names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GInetAddress) a = g_inet_address_new_from_string (address);
  guint32 v;

  memcpy (&v, g_inet_address_to_bytes (a), 4);
  g_hash_table_insert (names, g_strdup (name), GUINT_TO_POINTER (v));
  return names;
}

static void
test_answers (void)
{
  g_autoptr(GHashTable) names = names_with ("pkg.example.test", "127.83.0.1");
  guint8 out[512];
  gsize n;

  /* approved, A: one answer, the question echoed as asked (case kept) */
  {
    g_autoptr(GByteArray) p = query_for ("PKG.example.Test", SBX_DNS_TYPE_A);
    static const guint8 addr[4] = { 127, 83, 0, 1 };

    n = sbx_dns_answer (p->data, p->len, names, out, sizeof out);
    g_assert_cmpuint (n, ==, p->len + 16);
    g_assert_cmpuint (out[0], ==, 0x12);
    g_assert_cmpuint (out[1], ==, 0x34);
    g_assert_cmpuint (out[2] & 0x80, ==, 0x80);   /* QR */
    g_assert_cmpuint (out[2] & 0x01, ==, 0x01);   /* RD copied */
    g_assert_cmpuint (out[3] & 0x0f, ==, SBX_DNS_RCODE_NOERROR);
    g_assert_cmpuint (out[7], ==, 1);             /* ANCOUNT */
    g_assert_cmpmem (out + 12, p->len - 12, p->data + 12, p->len - 12);
    g_assert_cmpmem (out + n - 4, 4, addr, 4);
  }
  /* approved, AAAA (and any other type): NOERROR, no answer */
  for (guint16 type = SBX_DNS_TYPE_AAAA; type != 0; type = type == SBX_DNS_TYPE_AAAA ? 15 : 0)
    {
      g_autoptr(GByteArray) p = query_for ("pkg.example.test", type);

      n = sbx_dns_answer (p->data, p->len, names, out, sizeof out);
      g_assert_cmpuint (n, ==, p->len);
      g_assert_cmpuint (out[3] & 0x0f, ==, SBX_DNS_RCODE_NOERROR);
      g_assert_cmpuint (out[7], ==, 0);
    }
  /* other names, a sub-name, the root, class CH, nothing approved: REFUSED */
  {
    const char *refused[] = { "other.test", "sub.pkg.example.test", "example.test", "", NULL };

    for (gsize i = 0; refused[i] != NULL; i++)
      {
        g_autoptr(GByteArray) p = query_for (refused[i], SBX_DNS_TYPE_A);

        n = sbx_dns_answer (p->data, p->len, names, out, sizeof out);
        g_assert_cmpuint (out[3] & 0x0f, ==, SBX_DNS_RCODE_REFUSED);
        g_assert_cmpuint (out[7], ==, 0);
      }
  }
  {
    g_autoptr(GByteArray) p = query_for ("pkg.example.test", SBX_DNS_TYPE_A);

    p->data[p->len - 1] = 3;   /* class CH */
    n = sbx_dns_answer (p->data, p->len, names, out, sizeof out);
    g_assert_cmpuint (out[3] & 0x0f, ==, SBX_DNS_RCODE_REFUSED);
    p->data[p->len - 1] = 1;
    n = sbx_dns_answer (p->data, p->len, NULL, out, sizeof out);
    g_assert_cmpuint (out[3] & 0x0f, ==, SBX_DNS_RCODE_REFUSED);
  }
  /* malformed: FORMERR without a question; responses: no answer */
  {
    g_autoptr(GByteArray) p = query_for ("pkg.example.test", SBX_DNS_TYPE_A);

    p->data[5] = 2;
    n = sbx_dns_answer (p->data, p->len, names, out, sizeof out);
    g_assert_cmpuint (n, ==, 12);
    g_assert_cmpuint (out[3] & 0x0f, ==, SBX_DNS_RCODE_FORMERR);
    p->data[5] = 1;
    p->data[2] |= 0x80;
    g_assert_cmpuint (sbx_dns_answer (p->data, p->len, names, out, sizeof out), ==, 0);
  }
}

/* ------------------------------------------------------------------------- */
/* serve_listeners through the vtable                                        */
/* ------------------------------------------------------------------------- */

typedef struct
{
  GResolver parent;
} PubResolver;
typedef struct
{
  GResolverClass parent_class;
} PubResolverClass;
static GType pub_resolver_get_type (void);
G_DEFINE_TYPE (PubResolver, pub_resolver, G_TYPE_RESOLVER)

/* pub.test is public (8.8.8.8), private.test is not (10.1.2.3) */
static GList *
pub_lookup (GResolver    *resolver,
            const char   *hostname,
            GCancellable *cancellable,
            GError      **error)
{
  if (g_str_equal (hostname, "pub.test"))
    return g_list_append (NULL, g_inet_address_new_from_string ("8.8.8.8"));
  if (g_str_equal (hostname, "private.test"))
    return g_list_append (NULL, g_inet_address_new_from_string ("10.1.2.3"));
  g_set_error (error, G_RESOLVER_ERROR, G_RESOLVER_ERROR_NOT_FOUND, "%s: not found", hostname);
  return NULL;
}

static void
pub_lookup_async (GResolver           *resolver,
                  const char          *hostname,
                  GCancellable        *cancellable,
                  GAsyncReadyCallback  callback,
                  gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (resolver, cancellable, callback, user_data);
  GError *error = NULL;
  GList *l = pub_lookup (resolver, hostname, cancellable, &error);

  if (l == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, l, (GDestroyNotify) g_resolver_free_addresses);
}

static GList *
pub_lookup_finish (GResolver     *resolver,
                   GAsyncResult  *result,
                   GError       **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
pub_resolver_class_init (PubResolverClass *klass)
{
  G_RESOLVER_CLASS (klass)->lookup_by_name = pub_lookup;
  G_RESOLVER_CLASS (klass)->lookup_by_name_async = pub_lookup_async;
  G_RESOLVER_CLASS (klass)->lookup_by_name_finish = pub_lookup_finish;
}

static void
pub_resolver_init (PubResolver *self)
{
}

/* every dial goes to the echo server on loopback */
static GSocketAddress *
to_echo (GInetAddress *address,
         guint16       port,
         gpointer      user_data)
{
  g_autoptr(GInetAddress) lo = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);

  return g_inet_socket_address_new (lo, (guint16) GPOINTER_TO_UINT (user_data));
}

/* A socket on 127.0.0.1:0 whose only fd is returned (the plugin takes it). */
static int
make_socket (int      type,
             guint16 *port)
{
  struct sockaddr_in a = { .sin_family = AF_INET };
  socklen_t len = sizeof a;
  int fd = socket (AF_INET, type | SOCK_CLOEXEC, 0);

  g_assert_cmpint (fd, >=, 0);
  a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  g_assert_cmpint (bind (fd, (struct sockaddr *) &a, sizeof a), ==, 0);
  if (type == SOCK_STREAM)
    g_assert_cmpint (listen (fd, 16), ==, 0);
  g_assert_cmpint (getsockname (fd, (struct sockaddr *) &a, &len), ==, 0);
  *port = ntohs (a.sin_port);
  return fd;
}

static SbxListenV1
entry (guint32     kind,
       const char *address,
       guint16     port,
       const char *target)
{
  SbxListenV1 l = { .struct_size = sizeof l, .kind = kind, .family = SBX_LISTEN_IPV4, .port = port,
                    .target = target };
  g_autoptr(GInetAddress) a = g_inet_address_new_from_string (address);

  memcpy (l.address, g_inet_address_to_bytes (a), 4);
  return l;
}

/* Sends @name's A query to the stub on @port; the rcode, or -1 when no
 * answer arrived (the socket is gone); the answered address in @addr. */
static int
ask (guint16     port,
     const char *name,
     guint8      addr[4])
{
  g_autoptr(GByteArray) p = query_for (name, SBX_DNS_TYPE_A);
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons (port) };
  struct timeval tv = { 2, 0 };
  guint8 out[512];
  int fd = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ssize_t n;

  a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  g_assert_cmpint (connect (fd, (struct sockaddr *) &a, sizeof a), ==, 0);
  setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  g_assert_cmpint (send (fd, p->data, p->len, 0), ==, (ssize_t) p->len);
  n = recv (fd, out, sizeof out, 0);
  close (fd);
  if (n < 12)
    return -1;
  if ((out[3] & 0x0f) == 0 && out[7] == 1 && addr != NULL)
    memcpy (addr, out + n - 4, 4);
  return out[3] & 0x0f;
}

/* Connects to @port, sends "ping", returns what came back before EOF. */
static char *
through (guint16 port)
{
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons (port) };
  g_autoptr(GSocket) s = NULL;
  g_autoptr(GByteArray) got = NULL;
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct timeval tv = { 10, 0 };

  a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  if (connect (fd, (struct sockaddr *) &a, sizeof a) != 0)
    {
      close (fd);
      return g_strdup ("(refused)");
    }
  setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  s = g_socket_new_from_fd (fd, NULL);
  g_assert_nonnull (s);
  if (!g_socket_send (s, "ping", 4, NULL, NULL))
    return g_strdup ("(reset)");
  g_socket_shutdown (s, FALSE, TRUE, NULL);
  got = test_read_all (s, 64);
  return got->len == 0 ? g_strdup ("") : g_strndup ((const char *) got->data, got->len);
}

static void
test_serve_listeners (void)
{
  EgressTestHost *th = egress_test_host_new (SBX_HOST_FEATURE_EGRESS_V1 | SBX_HOST_FEATURE_EGRESS_LISTENERS);
  g_autoptr(GResolver) resolver = g_object_new (pub_resolver_get_type (), NULL);
  TestServer *echo = test_server_new (TEST_SERVER_ECHO, NULL);
  g_autofree char *error = NULL, *literal = NULL, *cred = NULL, *denial = NULL;
  g_autofree char *pub = NULL, *priv = NULL, *lit = NULL, *unapproved = NULL;
  EgressTestRoute *r;
  SbxListenV1 listens[5];
  int32_t fds[5];
  guint16 dns_port, pub_port, priv_port, lit_port, evil_port;
  guint8 addr[4] = { 0 };
  static const guint8 expect_pub[4] = { 127, 83, 0, 1 };
  guint dials;

  g_assert_nonnull (th);
  g_assert_true (SBX_ABI_HAS (th->vtable, SbxEgressVTableV1, serve_listeners));
  r = egress_test_route_start (th, "direct", &error);
  g_assert_nonnull (r);
  sbx_egress_proxy_set_resolver (r->route, resolver);
  sbx_egress_proxy_set_dialer (r->route, to_echo, GUINT_TO_POINTER (test_server_get_port (echo)));
  literal = g_strdup_printf ("tcp:127.0.0.1:%u", test_server_get_port (echo));
  {
    const char *targets[] = { "tcp:pub.test:443", "tcp:private.test:443", literal, NULL };

    cred = egress_test_authorize (r, "x", targets);
  }
  fds[0] = make_socket (SOCK_DGRAM, &dns_port);
  fds[1] = make_socket (SOCK_STREAM, &pub_port);
  fds[2] = make_socket (SOCK_STREAM, &priv_port);
  fds[3] = make_socket (SOCK_STREAM, &lit_port);
  fds[4] = make_socket (SOCK_STREAM, &evil_port);
  listens[0] = entry (SBX_LISTEN_DNS_UDP, "127.0.0.53", 53, NULL);
  listens[1] = entry (SBX_LISTEN_FORWARD, "127.83.0.1", 443, "tcp:pub.test:443");
  listens[2] = entry (SBX_LISTEN_FORWARD, "127.83.0.2", 443, "tcp:private.test:443");
  listens[3] = entry (SBX_LISTEN_FORWARD, "127.0.0.1", test_server_get_port (echo), literal);
  /* a forwarder for a target the execution was never approved for (a host
   * that lists one by mistake): it must refuse */
  listens[4] = entry (SBX_LISTEN_FORWARD, "127.83.0.3", 443, "tcp:evil.test:443");
  g_assert_cmpint (th->vtable->serve_listeners (th->plugin_ctx, (SbxHostCall *) th, r->route, "x", listens, fds,
                                                5), ==, SBX_STATUS_OK);

  /* the stub: approved names (the unapproved one too: the host listed it,
   * and its forwarder refuses), other names refused */
  g_assert_cmpint (ask (dns_port, "pub.test", addr), ==, SBX_DNS_RCODE_NOERROR);
  g_assert_cmpmem (addr, 4, expect_pub, 4);
  g_assert_cmpint (ask (dns_port, "other.test", NULL), ==, SBX_DNS_RCODE_REFUSED);
  g_assert_cmpint (ask (dns_port, "127.0.0.1", NULL), ==, SBX_DNS_RCODE_REFUSED);   /* literals are not names */

  /* forwarders: a public name and the approved literal are relayed (the
   * control), the name with a non-public address is refused and recorded,
   * the unapproved target is refused without a dial */
  pub = through (pub_port);
  g_assert_cmpstr (pub, ==, "ping");
  lit = through (lit_port);
  g_assert_cmpstr (lit, ==, "ping");
  dials = sbx_egress_proxy_get_n_dials (r->route);
  priv = through (priv_port);
  g_assert_cmpstr (priv, ==, "");
  unapproved = through (evil_port);
  g_assert_cmpstr (unapproved, ==, "");
  g_assert_cmpuint (sbx_egress_proxy_get_n_dials (r->route), ==, dials);

  /* the revoke closes the stub's socket and every forwarder of x */
  denial = egress_test_revoke (r, "x");
  g_assert_nonnull (denial);
  g_assert_true (g_str_has_prefix (denial, "tcp:private.test:443"));
  g_assert_cmpint (ask (dns_port, "pub.test", NULL), ==, -1);
  for (int i = 0; i < 100; i++)
    {
      g_autofree char *after = through (pub_port);

      if (g_str_equal (after, "(refused)"))
        break;
      g_assert_cmpint (i, <, 99);
      g_usleep (10000);
    }

  /* an invalid list is refused and its fds are taken */
  {
    int32_t bad_fds[1];
    SbxListenV1 bad = entry (SBX_LISTEN_FORWARD, "127.83.0.9", 1, "tcp:NOT canonical:1");
    guint16 ignored;
    const char *targets[] = { "tcp:pub.test:443", NULL };
    g_autofree char *cred2 = egress_test_authorize (r, "y", targets);
    g_autofree char *message = NULL;

    g_assert_nonnull (cred2);
    bad_fds[0] = make_socket (SOCK_STREAM, &ignored);
    g_assert_cmpint (th->vtable->serve_listeners (th->plugin_ctx, (SbxHostCall *) th, r->route, "y", &bad,
                                                  bad_fds, 1), ==, SBX_STATUS_INVALID);
    message = egress_test_host_take_error (th);
    g_assert_nonnull (strstr (message, "canonical"));
    g_assert_cmpint (fcntl (bad_fds[0], F_GETFD), ==, -1);
    g_free (egress_test_revoke (r, "y"));
  }

  egress_test_route_stop (r);
  test_server_free (echo);
  egress_test_host_free (th);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/egress-dns/parse/valid", test_parse_valid);
  g_test_add_func ("/egress-dns/parse/truncated", test_parse_truncated);
  g_test_add_func ("/egress-dns/parse/counts-and-flags", test_parse_counts_and_flags);
  g_test_add_func ("/egress-dns/parse/compression", test_parse_compression);
  g_test_add_func ("/egress-dns/parse/oversized", test_parse_oversized);
  g_test_add_func ("/egress-dns/answers", test_answers);
  g_test_add_func ("/egress-dns/serve-listeners", test_serve_listeners);
  return g_test_run ();
}
