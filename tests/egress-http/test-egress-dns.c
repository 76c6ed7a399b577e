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
 *
 * The stub over TCP: the framing alone (sbx_dns_stream_next), the listener
 * through the vtable next to the UDP socket (same answers, pipelined
 * queries, connections ended by garbage lengths or EOF while the others go
 * on, the revoke), and the server's limits (idle connections, the number
 * of connections per listener, running out of descriptors).
 *
 * This file holds the cases of one module, plugins/egress-http/sbx-egress-dns.c
 * (its parser, its TCP framing and its servers), one GTest binary per
 * concept: hence over a thousand lines rather than two binaries sharing
 * their query builders.
 */
#include "sbx-egress-dns.h"
#include "sbx-egress-forward.h"
#include "sbx-egress-proxy.h"
#include "egress-test-util.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <poll.h>
#include <netinet/in.h>
#include <sys/resource.h>
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

/* A name approved while the tool runs: the REFUSED answer the stub kept,
 * rewritten.  Type A: one record of SBX_DNS_APPROVED_ADDRESS, TTL 0, the
 * question and RD as asked; AAAA: NOERROR without a record; anything that
 * is not a REFUSED answer to a query comes back as it was. */
static void
test_approved_answer (void)
{
  static const guint8 addr[4] = SBX_DNS_APPROVED_ADDRESS;
  guint8 refused[512], out[512];
  gsize n, r;

  {
    g_autoptr(GByteArray) p = query_for ("Live.Example", SBX_DNS_TYPE_A);

    r = sbx_dns_answer (p->data, p->len, NULL, refused, sizeof refused);
    g_assert_cmpuint (refused[3] & 0x0f, ==, SBX_DNS_RCODE_REFUSED);
    n = sbx_dns_approved_answer (refused, r, out, sizeof out);
    g_assert_cmpuint (n, ==, p->len + 16);
    g_assert_cmpuint (out[0], ==, 0x12);
    g_assert_cmpuint (out[2] & 0x81, ==, 0x81);   /* QR, RD copied */
    g_assert_cmpuint (out[3] & 0x0f, ==, SBX_DNS_RCODE_NOERROR);
    g_assert_cmpuint (out[7], ==, 1);
    g_assert_cmpmem (out + 12, p->len - 12, p->data + 12, p->len - 12);
    g_assert_cmpmem (out + n - 10, 4, "\0\0\0\0", 4);   /* TTL 0 */
    g_assert_cmpmem (out + n - 4, 4, addr, 4);
  }
  {
    g_autoptr(GByteArray) p = query_for ("live.example", SBX_DNS_TYPE_AAAA);

    r = sbx_dns_answer (p->data, p->len, NULL, refused, sizeof refused);
    n = sbx_dns_approved_answer (refused, r, out, sizeof out);
    g_assert_cmpuint (n, ==, p->len);
    g_assert_cmpuint (out[3] & 0x0f, ==, SBX_DNS_RCODE_NOERROR);
    g_assert_cmpuint (out[7], ==, 0);
  }
  /* a FORMERR header only (no question): unchanged */
  {
    g_autoptr(GByteArray) p = query_for ("live.example", SBX_DNS_TYPE_A);

    p->data[5] = 2;
    r = sbx_dns_answer (p->data, p->len, NULL, refused, sizeof refused);
    n = sbx_dns_approved_answer (refused, r, out, sizeof out);
    g_assert_cmpuint (n, ==, r);
    g_assert_cmpmem (out, n, refused, r);
  }
}

/* @p framed for TCP: the two-byte length, then the message. */
static GByteArray *
framed (GByteArray *p)
{
  GByteArray *f = g_byte_array_new ();
  guint8 len[2] = { (guint8) (p->len >> 8), (guint8) p->len };

  g_byte_array_append (f, len, 2);
  g_byte_array_append (f, p->data, p->len);
  return f;
}

/* Feeds @bytes into @s (they must fit). */
static void
feed (SbxDnsStream *s,
      const guint8 *bytes,
      gsize         len)
{
  g_assert_cmpuint (len, <=, sizeof s->in - s->in_len);
  memcpy (s->in + s->in_len, bytes, len);
  s->in_len += len;
}

static void
test_stream_framing (void)
{
  g_autoptr(GHashTable) names = names_with ("pkg.example.test", "127.83.0.1");
  g_autoptr(GByteArray) approved = query_for ("pkg.example.test", SBX_DNS_TYPE_A);
  g_autoptr(GByteArray) other = query_for ("other.test", SBX_DNS_TYPE_A);
  g_autoptr(GByteArray) f1 = NULL, f2 = NULL;
  SbxDnsStream *s = g_new0 (SbxDnsStream, 1);
  guint8 udp[512];
  gsize n;

  other->data[1] = 0x35;   /* id 0x1235 */
  f1 = framed (approved);
  f2 = framed (other);

  /* two queries in one read: answered one at a time, in order, each with
   * exactly the UDP answer */
  feed (s, f1->data, f1->len);
  feed (s, f2->data, f2->len);
  g_assert_cmpint (sbx_dns_stream_next (s, names), ==, SBX_DNS_STREAM_ANSWER);
  n = sbx_dns_answer (approved->data, approved->len, names, udp, sizeof udp);
  g_assert_cmpuint (s->out_len, ==, n + 2);
  g_assert_cmpuint ((s->out[0] << 8) | s->out[1], ==, n);
  g_assert_cmpmem (s->out + 2, n, udp, n);
  /* an unsent answer is never overwritten */
  g_assert_cmpint (sbx_dns_stream_next (s, names), ==, SBX_DNS_STREAM_ANSWER);
  g_assert_cmpuint (s->in_len, ==, f2->len);
  s->out_len = 0;
  g_assert_cmpint (sbx_dns_stream_next (s, names), ==, SBX_DNS_STREAM_ANSWER);
  g_assert_cmpuint (s->out[2], ==, 0x12);
  g_assert_cmpuint (s->out[3], ==, 0x35);
  g_assert_cmpuint (s->out[2 + 3] & 0x0f, ==, SBX_DNS_RCODE_REFUSED);
  s->out_len = 0;
  g_assert_cmpint (sbx_dns_stream_next (s, names), ==, SBX_DNS_STREAM_MORE);
  g_assert_cmpuint (s->in_len, ==, 0);

  /* one byte at a time: nothing until the last byte, then the answer */
  for (guint i = 0; i < f1->len; i++)
    {
      feed (s, f1->data + i, 1);
      g_assert_cmpint (sbx_dns_stream_next (s, names), ==,
                       i + 1 < f1->len ? SBX_DNS_STREAM_MORE : SBX_DNS_STREAM_ANSWER);
    }
  s->out_len = 0;

  /* a response inside the stream gets no answer and is consumed; the query
   * after it is answered */
  {
    g_autoptr(GByteArray) response = query_for ("pkg.example.test", SBX_DNS_TYPE_A);
    g_autoptr(GByteArray) fr = NULL;

    response->data[2] |= 0x80;
    fr = framed (response);
    feed (s, fr->data, fr->len);
    feed (s, f2->data, f2->len);
    g_assert_cmpint (sbx_dns_stream_next (s, names), ==, SBX_DNS_STREAM_ANSWER);
    g_assert_cmpuint (s->out[3], ==, 0x35);
    g_assert_cmpuint (s->in_len, ==, 0);
    s->out_len = 0;
  }

  /* garbage of a valid length: FORMERR; a length of 0: the end */
  {
    static const guint8 garbage[] = { 0, 14, 0xab, 0xcd, 0x01, 0x00, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0x3f, 0x3f };
    static const guint8 zero[] = { 0, 0 };

    feed (s, garbage, sizeof garbage);
    g_assert_cmpint (sbx_dns_stream_next (s, names), ==, SBX_DNS_STREAM_ANSWER);
    g_assert_cmpuint (s->out_len, ==, 2 + 12);
    g_assert_cmpuint (s->out[2 + 3] & 0x0f, ==, SBX_DNS_RCODE_FORMERR);
    s->out_len = 0;
    feed (s, zero, sizeof zero);
    g_assert_cmpint (sbx_dns_stream_next (s, names), ==, SBX_DNS_STREAM_CLOSE);
  }

  /* the largest query accepted (the approved one padded to
   * SBX_DNS_MAX_PACKET: bytes after the question are not examined) is
   * answered; one byte more ends the connection before its body is read */
  for (gsize len = SBX_DNS_MAX_PACKET; len <= SBX_DNS_MAX_PACKET + 1; len++)
    {
      g_autoptr(GByteArray) big = query_for ("pkg.example.test", SBX_DNS_TYPE_A);
      g_autoptr(GByteArray) fb = NULL;

      guint query_len = big->len;

      memset (s, 0, sizeof *s);
      g_byte_array_set_size (big, (guint) len);
      memset (big->data + query_len, 0, len - query_len);
      fb = framed (big);
      if (len <= SBX_DNS_MAX_PACKET)
        {
          feed (s, fb->data, fb->len);
          g_assert_cmpint (sbx_dns_stream_next (s, names), ==, SBX_DNS_STREAM_ANSWER);
          g_assert_cmpuint (s->out[2 + 3] & 0x0f, ==, SBX_DNS_RCODE_NOERROR);
        }
      else
        {
          feed (s, fb->data, 2);
          g_assert_cmpint (sbx_dns_stream_next (s, names), ==, SBX_DNS_STREAM_CLOSE);
        }
    }
  g_free (s);
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

/* @listens[i] of @kind for @address:@port, and in @fds[i] its socket on
 * 127.0.0.1 (UDP for the UDP stub, a TCP listener otherwise); returns the
 * socket's port. */
static guint16
add_entry (SbxListenV1 *listens,
           int32_t     *fds,
           guint        i,
           guint32      kind,
           const char  *address,
           guint16      port,
           const char  *target)
{
  guint16 bound;

  fds[i] = make_socket (kind == SBX_LISTEN_DNS_UDP ? SOCK_DGRAM : SOCK_STREAM, &bound);
  listens[i] = entry (kind, address, port, target);
  return bound;
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

/* A TCP connection to 127.0.0.1:@port with a receive timeout of 10 s; -1
 * when refused. */
static int
tcp_connect (guint16 port)
{
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons (port) };
  struct timeval tv = { 10, 0 };
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

  a.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  if (connect (fd, (struct sockaddr *) &a, sizeof a) != 0)
    {
      close (fd);
      return -1;
    }
  setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

/* Sends @name's A query with @id, framed, on @fd. */
static void
tcp_send_query (int         fd,
                const char *name,
                guint16     id)
{
  g_autoptr(GByteArray) p = query_for (name, SBX_DNS_TYPE_A);
  g_autoptr(GByteArray) f = NULL;

  p->data[0] = (guint8) (id >> 8);
  p->data[1] = (guint8) id;
  f = framed (p);
  g_assert_cmpint (send (fd, f->data, f->len, MSG_NOSIGNAL), ==, (ssize_t) f->len);
}

static gboolean
read_exactly (int     fd,
              guint8 *buf,
              gsize   len)
{
  for (gsize got = 0; got < len;)
    {
      ssize_t n = recv (fd, buf + got, len - got, 0);

      if (n <= 0)
        return FALSE;
      got += (gsize) n;
    }
  return TRUE;
}

/* Reads one framed answer from @fd: its rcode, or -1 at EOF, reset or
 * timeout; its id in @id and the answered address in @addr. */
static int
tcp_read_answer (int      fd,
                 guint16 *id,
                 guint8   addr[4])
{
  guint8 len[2], out[512];
  gsize n;

  if (!read_exactly (fd, len, 2))
    return -1;
  n = (gsize) ((len[0] << 8) | len[1]);
  g_assert_cmpuint (n, >=, 12);
  g_assert_cmpuint (n, <=, sizeof out);
  if (!read_exactly (fd, out, n))
    return -1;
  if (id != NULL)
    *id = (guint16) ((out[0] << 8) | out[1]);
  if ((out[3] & 0x0f) == 0 && out[7] == 1 && addr != NULL)
    memcpy (addr, out + n - 4, 4);
  return out[3] & 0x0f;
}

/* One query on a fresh connection: the rcode, or -1 (refused, closed). */
static int
tcp_ask (guint16     port,
         const char *name,
         guint8      addr[4])
{
  int fd = tcp_connect (port);
  int rcode;

  if (fd < 0)
    return -1;
  tcp_send_query (fd, name, 0x1234);
  rcode = tcp_read_answer (fd, NULL, addr);
  close (fd);
  return rcode;
}

/* TRUE when the server closed @fd (EOF or reset) within 10 s, with nothing
 * sent before. */
static gboolean
tcp_closed_by_peer (int fd)
{
  guint8 byte;
  ssize_t n = recv (fd, &byte, 1, 0);

  return n == 0 || (n < 0 && errno == ECONNRESET);
}

/* Connects to @port, sends "ping", returns what came back before EOF. */
static char *
through (guint16 port)
{
  g_autoptr(GSocket) s = NULL;
  g_autoptr(GByteArray) got = NULL;
  int fd = tcp_connect (port);

  if (fd < 0)
    return g_strdup ("(refused)");
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
  dns_port = add_entry (listens, fds, 0, SBX_LISTEN_DNS_UDP, "127.0.0.53", 53, NULL);
  pub_port = add_entry (listens, fds, 1, SBX_LISTEN_FORWARD, "127.83.0.1", 443, "tcp:pub.test:443");
  priv_port = add_entry (listens, fds, 2, SBX_LISTEN_FORWARD, "127.83.0.2", 443, "tcp:private.test:443");
  lit_port = add_entry (listens, fds, 3, SBX_LISTEN_FORWARD, "127.0.0.1", test_server_get_port (echo), literal);
  /* a forwarder for a target the execution was never approved for (a host
   * that lists one by mistake): it must refuse */
  evil_port = add_entry (listens, fds, 4, SBX_LISTEN_FORWARD, "127.83.0.3", 443, "tcp:evil.test:443");
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

/* The stub over TCP through the vtable, next to its UDP socket: the same
 * answers, several queries per connection, and a connection that sends
 * garbage, a zero length, an impossible length or a query cut short by
 * EOF is closed while the listener and every other connection go on. */
static void
test_serve_tcp (void)
{
  EgressTestHost *th = egress_test_host_new (SBX_HOST_FEATURE_EGRESS_V1 | SBX_HOST_FEATURE_EGRESS_LISTENERS);
  g_autofree char *error = NULL, *cred = NULL;
  const char *targets[] = { "tcp:pub.test:443", NULL };
  static const guint8 expect[4] = { 127, 83, 0, 1 };
  EgressTestRoute *r;
  SbxListenV1 listens[4];
  int32_t fds[4];
  guint16 udp_port, future_port, tcp_port, id = 0;
  guint8 addr[4] = { 0 };
  int held, fd;

  g_assert_nonnull (th);
  r = egress_test_route_start (th, "direct", &error);
  g_assert_nonnull (r);
  cred = egress_test_authorize (r, "x", targets);
  udp_port = add_entry (listens, fds, 0, SBX_LISTEN_DNS_UDP, "127.0.0.53", 53, NULL);
  add_entry (listens, fds, 1, SBX_LISTEN_FORWARD, "127.83.0.1", 443, "tcp:pub.test:443");
  /* a kind newer than the plugin, before the TCP stub: closed unserved,
   * and the entries after it are still served */
  future_port = add_entry (listens, fds, 2, 99, "127.0.0.54", 53, NULL);
  tcp_port = add_entry (listens, fds, 3, SBX_LISTEN_DNS_TCP, "127.0.0.53", 53, NULL);
  g_assert_cmpint (th->vtable->serve_listeners (th->plugin_ctx, (SbxHostCall *) th, r->route, "x", listens, fds,
                                                4), ==, SBX_STATUS_OK);
  g_assert_cmpint (tcp_connect (future_port), ==, -1);

  /* the approved name: the forwarder's address over TCP as over UDP (the
   * control); other names REFUSED */
  g_assert_cmpint (ask (udp_port, "pub.test", addr), ==, SBX_DNS_RCODE_NOERROR);
  g_assert_cmpmem (addr, 4, expect, 4);
  memset (addr, 0, sizeof addr);
  g_assert_cmpint (tcp_ask (tcp_port, "PUB.test", addr), ==, SBX_DNS_RCODE_NOERROR);
  g_assert_cmpmem (addr, 4, expect, 4);
  g_assert_cmpint (tcp_ask (tcp_port, "other.test", NULL), ==, SBX_DNS_RCODE_REFUSED);
  g_assert_cmpint (tcp_ask (tcp_port, "127.83.0.1", NULL), ==, SBX_DNS_RCODE_REFUSED);

  /* a connection held open across the others' garbage */
  held = tcp_connect (tcp_port);
  g_assert_cmpint (held, >=, 0);
  tcp_send_query (held, "pub.test", 7);
  g_assert_cmpint (tcp_read_answer (held, &id, NULL), ==, SBX_DNS_RCODE_NOERROR);
  g_assert_cmpuint (id, ==, 7);

  /* two queries in one segment: both answered, in order */
  {
    g_autoptr(GByteArray) a = query_for ("pub.test", SBX_DNS_TYPE_A);
    g_autoptr(GByteArray) b = query_for ("other.test", SBX_DNS_TYPE_A);
    g_autoptr(GByteArray) both = NULL;
    g_autoptr(GByteArray) fb = NULL;

    a->data[1] = 1;
    b->data[1] = 2;
    both = framed (a);
    fb = framed (b);
    g_byte_array_append (both, fb->data, fb->len);
    fd = tcp_connect (tcp_port);
    g_assert_cmpint (send (fd, both->data, both->len, MSG_NOSIGNAL), ==, (ssize_t) both->len);
    memset (addr, 0, sizeof addr);
    g_assert_cmpint (tcp_read_answer (fd, &id, addr), ==, SBX_DNS_RCODE_NOERROR);
    g_assert_cmpuint (id, ==, 0x1201);
    g_assert_cmpmem (addr, 4, expect, 4);
    g_assert_cmpint (tcp_read_answer (fd, &id, NULL), ==, SBX_DNS_RCODE_REFUSED);
    g_assert_cmpuint (id, ==, 0x1202);
    /* a whole query then EOF (a half-close): answered, then closed */
    tcp_send_query (fd, "pub.test", 3);
    shutdown (fd, SHUT_WR);
    g_assert_cmpint (tcp_read_answer (fd, &id, NULL), ==, SBX_DNS_RCODE_NOERROR);
    g_assert_cmpuint (id, ==, 3);
    g_assert_true (tcp_closed_by_peer (fd));
    close (fd);
  }

  /* garbage of a valid length: FORMERR, and the connection goes on */
  {
    static const guint8 garbage[] = { 0, 14, 0xab, 0xcd, 0x01, 0x00, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0x3f, 0x3f };

    fd = tcp_connect (tcp_port);
    g_assert_cmpint (send (fd, garbage, sizeof garbage, MSG_NOSIGNAL), ==, (ssize_t) sizeof garbage);
    g_assert_cmpint (tcp_read_answer (fd, &id, NULL), ==, SBX_DNS_RCODE_FORMERR);
    g_assert_cmpuint (id, ==, 0xabcd);
    tcp_send_query (fd, "pub.test", 4);
    g_assert_cmpint (tcp_read_answer (fd, &id, NULL), ==, SBX_DNS_RCODE_NOERROR);
    close (fd);
  }

  /* a length with its query cut short by EOF, a zero length and an
   * impossible length: each connection closed without an answer */
  {
    g_autoptr(GByteArray) p = query_for ("pub.test", SBX_DNS_TYPE_A);
    g_autoptr(GByteArray) cut = framed (p);
    static const guint8 zero[] = { 0, 0, 0x12, 0x34 };
    static const guint8 huge[] = { 0xff, 0xff, 0x12, 0x34, 0x01, 0x00 };

    fd = tcp_connect (tcp_port);
    g_assert_cmpint (send (fd, cut->data, cut->len - 3, MSG_NOSIGNAL), ==, (ssize_t) cut->len - 3);
    shutdown (fd, SHUT_WR);
    g_assert_true (tcp_closed_by_peer (fd));
    close (fd);
    fd = tcp_connect (tcp_port);
    g_assert_cmpint (send (fd, zero, sizeof zero, MSG_NOSIGNAL), ==, (ssize_t) sizeof zero);
    g_assert_true (tcp_closed_by_peer (fd));
    close (fd);
    fd = tcp_connect (tcp_port);
    g_assert_cmpint (send (fd, huge, sizeof huge, MSG_NOSIGNAL), ==, (ssize_t) sizeof huge);
    g_assert_true (tcp_closed_by_peer (fd));
    close (fd);
  }

  /* none of that touched the listener or the held connection */
  g_assert_cmpint (tcp_ask (tcp_port, "pub.test", NULL), ==, SBX_DNS_RCODE_NOERROR);
  tcp_send_query (held, "pub.test", 8);
  g_assert_cmpint (tcp_read_answer (held, &id, NULL), ==, SBX_DNS_RCODE_NOERROR);
  g_assert_cmpuint (id, ==, 8);

  /* the revoke closes the TCP listener and its open connections, as it
   * closes the UDP socket */
  g_free (egress_test_revoke (r, "x"));
  g_assert_true (tcp_closed_by_peer (held));
  close (held);
  g_assert_cmpint (tcp_connect (tcp_port), ==, -1);
  g_assert_cmpint (ask (udp_port, "pub.test", NULL), ==, -1);

  egress_test_route_stop (r);
  egress_test_host_free (th);
}

static void
wait_for_connections (SbxEgressDns *dns,
                      guint         n)
{
  for (int i = 0; sbx_egress_dns_get_n_connections (dns) != n; i++)
    {
      g_assert_cmpint (i, <, 500);
      g_usleep (10000);
    }
}

/* Idle connections are closed, busy ones are not; out of descriptors the
 * listener waits instead of spinning; a listener keeps at most
 * SBX_DNS_TCP_MAX_CONNECTIONS; a socket of the wrong kind is refused. */
static void
test_tcp_limits (void)
{
  SbxEgressDns *dns = sbx_egress_dns_new ();
  g_autoptr(GError) error = NULL;
  int conns[SBX_DNS_TCP_MAX_CONNECTIONS];
  guint16 port, ignored;
  guint16 id = 0;
  int fd, busy, silent, partial, extra;

  /* a UDP socket or a TCP socket that is not listening is no TCP stub */
  fd = make_socket (SOCK_DGRAM, &ignored);
  g_assert_false (sbx_egress_dns_serve_fd (dns, "x", fd, TRUE, names_with ("pkg.example.test", "127.83.0.1"),
                                           &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_cmpint (fcntl (fd, F_GETFD), ==, -1);
  fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  g_assert_false (sbx_egress_dns_serve_fd (dns, "x", fd, TRUE, names_with ("pkg.example.test", "127.83.0.1"),
                                           &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_cmpint (fcntl (fd, F_GETFD), ==, -1);
  g_assert_cmpuint (sbx_egress_dns_get_n_sockets (dns), ==, 0);

  sbx_egress_dns_set_tcp_idle_ms (dns, 300);
  fd = make_socket (SOCK_STREAM, &port);
  g_assert_true (sbx_egress_dns_serve_fd (dns, "x", fd, TRUE, names_with ("pkg.example.test", "127.83.0.1"),
                                          &error));
  g_assert_no_error (error);

  /* a connection that asks every 100 ms for a second stays open; a
   * silent one, and one silent after half a query, are closed once the
   * limit passed, not before */
  busy = tcp_connect (port);
  silent = tcp_connect (port);
  partial = tcp_connect (port);
  g_assert_cmpint (send (partial, "\0\x20\x12", 3, MSG_NOSIGNAL), ==, 3);
  for (guint16 i = 0; i < 10; i++)
    {
      struct pollfd p[2] = { { silent, POLLIN, 0 }, { partial, POLLIN, 0 } };

      tcp_send_query (busy, "pkg.example.test", i);
      g_assert_cmpint (tcp_read_answer (busy, &id, NULL), ==, SBX_DNS_RCODE_NOERROR);
      g_assert_cmpuint (id, ==, i);
      if (i == 0)
        g_assert_cmpint (poll (p, 2, 0), ==, 0);
      g_usleep (100000);
    }
  g_assert_true (tcp_closed_by_peer (silent));
  g_assert_true (tcp_closed_by_peer (partial));
  close (silent);
  close (partial);
  g_assert_true (tcp_closed_by_peer (busy));   /* silent itself now */
  close (busy);
  wait_for_connections (dns, 0);

  /* out of descriptors, accepting pauses instead of spinning, and the
   * connection waiting in the backlog is served once they are back */
  {
    struct rlimit saved, one_left;
    struct rusage before, after;
    int probe = dup (0);
    gint64 cpu_us;

    g_assert_cmpint (getrlimit (RLIMIT_NOFILE, &saved), ==, 0);
    one_left = saved;
    one_left.rlim_cur = (rlim_t) probe + 1;   /* every number below probe is taken */
    close (probe);
    g_assert_cmpint (setrlimit (RLIMIT_NOFILE, &one_left), ==, 0);
    fd = tcp_connect (port);                   /* takes the last one: accept4 gets EMFILE */
    g_assert_cmpint (fd, >=, 0);
    tcp_send_query (fd, "pkg.example.test", 42);
    g_assert_cmpint (getrusage (RUSAGE_SELF, &before), ==, 0);
    g_usleep (300000);
    g_assert_cmpint (getrusage (RUSAGE_SELF, &after), ==, 0);
    g_assert_cmpint (setrlimit (RLIMIT_NOFILE, &saved), ==, 0);
    cpu_us = (after.ru_utime.tv_sec - before.ru_utime.tv_sec + after.ru_stime.tv_sec - before.ru_stime.tv_sec) *
             G_USEC_PER_SEC + after.ru_utime.tv_usec - before.ru_utime.tv_usec + after.ru_stime.tv_usec -
             before.ru_stime.tv_usec;
    g_test_message ("cpu while out of descriptors: %" G_GINT64_FORMAT " us", cpu_us);
    g_assert_cmpint (cpu_us, <, 150000);
    g_assert_cmpint (tcp_read_answer (fd, &id, NULL), ==, SBX_DNS_RCODE_NOERROR);
    g_assert_cmpuint (id, ==, 42);
    close (fd);
    wait_for_connections (dns, 0);
  }

  /* at most SBX_DNS_TCP_MAX_CONNECTIONS: each answered, one more closed at
   * once, and a slot freed serves again */
  sbx_egress_dns_set_tcp_idle_ms (dns, SBX_DNS_TCP_IDLE_MS);
  for (guint i = 0; i < G_N_ELEMENTS (conns); i++)
    {
      conns[i] = tcp_connect (port);
      tcp_send_query (conns[i], "pkg.example.test", (guint16) i);
      g_assert_cmpint (tcp_read_answer (conns[i], NULL, NULL), ==, SBX_DNS_RCODE_NOERROR);
    }
  g_assert_cmpuint (sbx_egress_dns_get_n_connections (dns), ==, SBX_DNS_TCP_MAX_CONNECTIONS);
  extra = tcp_connect (port);
  g_assert_true (tcp_closed_by_peer (extra));
  close (extra);
  close (conns[0]);
  wait_for_connections (dns, SBX_DNS_TCP_MAX_CONNECTIONS - 1);
  conns[0] = tcp_connect (port);
  tcp_send_query (conns[0], "pkg.example.test", 99);
  g_assert_cmpint (tcp_read_answer (conns[0], &id, NULL), ==, SBX_DNS_RCODE_NOERROR);
  g_assert_cmpuint (id, ==, 99);

  /* the revoke of another execution closes nothing; of this one, all */
  sbx_egress_dns_revoke (dns, "y");
  g_assert_cmpuint (sbx_egress_dns_get_n_connections (dns), ==, SBX_DNS_TCP_MAX_CONNECTIONS);
  sbx_egress_dns_revoke (dns, "x");
  g_assert_cmpuint (sbx_egress_dns_get_n_connections (dns), ==, 0);
  g_assert_cmpuint (sbx_egress_dns_get_n_sockets (dns), ==, 0);
  for (guint i = 0; i < G_N_ELEMENTS (conns); i++)
    {
      g_assert_true (tcp_closed_by_peer (conns[i]));
      close (conns[i]);
    }
  sbx_egress_dns_free (dns);
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
  g_test_add_func ("/egress-dns/approved-answer", test_approved_answer);
  g_test_add_func ("/egress-dns/stream-framing", test_stream_framing);
  g_test_add_func ("/egress-dns/serve-listeners", test_serve_listeners);
  g_test_add_func ("/egress-dns/serve-tcp", test_serve_tcp);
  g_test_add_func ("/egress-dns/tcp-limits", test_tcp_limits);
  return g_test_run ();
}
