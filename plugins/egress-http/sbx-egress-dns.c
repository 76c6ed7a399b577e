/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sandbox's DNS stub (see sbx-egress-dns.h for what it answers).
 *
 * THREADS.  One thread per route runs its own GMainContext; every socket
 * (UDP socket, TCP listener, TCP connection) is non-blocking and watched
 * there.  serve_fd and revoke may be called from any thread: they hand
 * their work to that context.  self->lock protects the counts tests read
 * and self->closing; self->served and every listener's connections belong
 * to the thread.
 *
 * A TCP connection is driven by sbx_dns_stream_next: answer what is
 * buffered, send it, read more.  Its socket is watched for output while an
 * answer is unsent or its turn ran out with queries still buffered, for
 * input otherwise, so one connection never holds the thread and a client
 * that does not read stops being read.
 *
 * The parser never reads outside [packet, packet + len): every read is
 * preceded by a bounds check, compression pointers must point strictly
 * before the label they replace (so a chain cannot loop) and at most
 * MAX_POINTERS are followed.
 */
#include "sbx-egress-dns.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_POINTERS 16
#define ANSWER_TTL   60
/* per wake-up: datagrams of one UDP socket, connections accepted, reads
 * and writes of one connection */
#define UDP_BUDGET    64
#define ACCEPT_BUDGET 16
#define CONN_BUDGET   16
/* After EMFILE and friends, accepting pauses this long instead of spinning
 * (the pending connection stays in the backlog until resources free up). */
#define ACCEPT_BACKOFF_MS 50

static guint16
get16 (const guint8 *p)
{
  return (guint16) ((p[0] << 8) | p[1]);
}

static void
put16 (guint8 *p,
       guint16 v)
{
  p[0] = (guint8) (v >> 8);
  p[1] = (guint8) (v & 0xff);
}

/* Reads the name at @offset.  On success *end is the offset just after the
 * name where it started (after the first pointer, if any). */
static gboolean
parse_name (const guint8 *packet,
            gsize         len,
            gsize         offset,
            SbxDnsQuery  *q,
            gsize        *end)
{
  gsize pos = offset, text = 0, wire = 0;
  guint pointers = 0;
  gsize lowest = offset;   /* a pointer must go below every place read so far */
  gboolean jumped = FALSE;

  q->n_labels = 0;
  for (;;)
    {
      guint8 l;

      if (pos >= len)
        return FALSE;
      l = packet[pos];
      if ((l & 0xc0) == 0xc0)
        {
          gsize target;

          if (pos + 1 >= len || ++pointers > MAX_POINTERS)
            return FALSE;
          target = ((gsize) (l & 0x3f) << 8) | packet[pos + 1];
          if (target >= lowest)
            return FALSE;          /* forwards or onto itself: a loop is possible */
          if (!jumped)
            *end = pos + 2;
          jumped = TRUE;
          lowest = target;
          pos = target;
          continue;
        }
      if ((l & 0xc0) != 0)
        return FALSE;              /* 0x40 / 0x80: extended label types */
      if (l == 0)
        {
          if (wire + 1 > SBX_DNS_MAX_NAME)
            return FALSE;
          q->wire[wire++] = 0;
          if (!jumped)
            *end = pos + 1;
          break;
        }
      if (pos + 1 + l > len)
        return FALSE;              /* truncated label */
      if (wire + 1 + l + 1 > SBX_DNS_MAX_NAME)
        return FALSE;              /* oversized name (255 octets with the root) */
      q->wire[wire++] = l;
      memcpy (q->wire + wire, packet + pos + 1, l);
      wire += l;
      if (text > 0)
        {
          q->name[text] = '.';
          q->lower[text] = '.';
          text++;
        }
      for (guint i = 0; i < l; i++)
        {
          guint8 ch = packet[pos + 1 + i];

          if (ch <= 0x20 || ch >= 0x7f || ch == '.')
            return FALSE;          /* such a name can never be an approved host */
          q->name[text] = (char) ch;
          q->lower[text] = g_ascii_tolower ((char) ch);
          text++;
        }
      q->n_labels++;
      pos += 1 + l;
      if (!jumped)
        lowest = pos;   /* not needed for bounds, but keeps pointers strictly backwards */
    }
  q->name[text] = '\0';
  q->lower[text] = '\0';
  q->wire_len = wire;
  return TRUE;
}

SbxDnsParse
sbx_dns_parse_query (const guint8 *packet,
                     gsize         len,
                     SbxDnsQuery  *q)
{
  gsize end = 0;
  guint opcode;

  memset (q, 0, sizeof *q);
  if (packet == NULL || len < SBX_DNS_HEADER_SIZE)
    return SBX_DNS_PARSE_DROP;
  q->id = get16 (packet);
  q->flags = get16 (packet + 2);
  if (q->flags & 0x8000)
    return SBX_DNS_PARSE_DROP;     /* a response: never answered (no reflection loops) */
  opcode = (q->flags >> 11) & 0xf;
  if (opcode != 0)
    return SBX_DNS_PARSE_NOTIMP;
  if (get16 (packet + 4) != 1 || get16 (packet + 6) != 0 || get16 (packet + 8) != 0 || get16 (packet + 10) > 1)
    return SBX_DNS_PARSE_FORMERR;  /* wrong counts */
  if (!parse_name (packet, len, SBX_DNS_HEADER_SIZE, q, &end))
    return SBX_DNS_PARSE_FORMERR;
  if (end + 4 > len)
    return SBX_DNS_PARSE_FORMERR;  /* truncated QTYPE/QCLASS */
  q->qtype = get16 (packet + end);
  q->qclass = get16 (packet + end + 2);
  return SBX_DNS_PARSE_OK;
}

gsize
sbx_dns_build_answer (const SbxDnsQuery *q,
                      gboolean           with_question,
                      guint              rcode,
                      const guint8      *ipv4,
                      guint8            *out,
                      gsize              out_size)
{
  return sbx_dns_build_answer_ttl (q, with_question, rcode, ipv4, ANSWER_TTL, out, out_size);
}

gsize
sbx_dns_build_answer_ttl (const SbxDnsQuery *q,
                          gboolean           with_question,
                          guint              rcode,
                          const guint8      *ipv4,
                          guint32            ttl,
                          guint8            *out,
                          gsize              out_size)
{
  gsize n = SBX_DNS_HEADER_SIZE;
  guint16 flags;

  g_return_val_if_fail (out_size >= SBX_DNS_MAX_ANSWER, 0);
  memset (out, 0, SBX_DNS_HEADER_SIZE);
  put16 (out, q->id);
  /* QR, opcode QUERY, AA, RD as asked, RA, the rcode */
  flags = (guint16) (0x8000 | 0x0400 | (q->flags & 0x0100) | 0x0080 | (rcode & 0xf));
  put16 (out + 2, flags);
  if (with_question)
    {
      put16 (out + 4, 1);
      memcpy (out + n, q->wire, q->wire_len);
      n += q->wire_len;
      put16 (out + n, q->qtype);
      put16 (out + n + 2, q->qclass);
      n += 4;
      if (ipv4 != NULL && rcode == SBX_DNS_RCODE_NOERROR)
        {
          put16 (out + 6, 1);
          put16 (out + n, 0xc000 | SBX_DNS_HEADER_SIZE);   /* the question's name */
          put16 (out + n + 2, SBX_DNS_TYPE_A);
          put16 (out + n + 4, SBX_DNS_CLASS_IN);
          put16 (out + n + 6, (guint16) (ttl >> 16));
          put16 (out + n + 8, (guint16) (ttl & 0xffff));
          put16 (out + n + 10, 4);
          memcpy (out + n + 12, ipv4, 4);
          n += 16;
        }
    }
  g_assert (n <= SBX_DNS_MAX_ANSWER);
  return n;
}

gsize
sbx_dns_answer (const guint8 *packet,
                gsize         len,
                GHashTable   *names,
                guint8       *out,
                gsize         out_size)
{
  char refused[SBX_DNS_MAX_NAME + 1];

  return sbx_dns_answer_full (packet, len, names, out, out_size, refused);
}

gsize
sbx_dns_answer_full (const guint8 *packet,
                     gsize         len,
                     GHashTable   *names,
                     guint8       *out,
                     gsize         out_size,
                     char         *refused)
{
  SbxDnsQuery q;
  gpointer value = NULL;
  guint32 address;

  refused[0] = '\0';

  switch (sbx_dns_parse_query (packet, len, &q))
    {
    case SBX_DNS_PARSE_DROP:
      return 0;
    case SBX_DNS_PARSE_FORMERR:
      return sbx_dns_build_answer (&q, FALSE, SBX_DNS_RCODE_FORMERR, NULL, out, out_size);
    case SBX_DNS_PARSE_NOTIMP:
      return sbx_dns_build_answer (&q, FALSE, SBX_DNS_RCODE_NOTIMP, NULL, out, out_size);
    case SBX_DNS_PARSE_OK:
    default:
      break;
    }
  if (q.qclass != SBX_DNS_CLASS_IN || names == NULL || q.lower[0] == '\0' ||
      !g_hash_table_lookup_extended (names, q.lower, NULL, &value))
    {
      if (q.qclass == SBX_DNS_CLASS_IN && q.lower[0] != '\0')
        g_strlcpy (refused, q.lower, SBX_DNS_MAX_NAME + 1);
      return sbx_dns_build_answer (&q, TRUE, SBX_DNS_RCODE_REFUSED, NULL, out, out_size);
    }
  if (q.qtype != SBX_DNS_TYPE_A)
    return sbx_dns_build_answer (&q, TRUE, SBX_DNS_RCODE_NOERROR, NULL, out, out_size);
  address = GPOINTER_TO_UINT (value);
  return sbx_dns_build_answer (&q, TRUE, SBX_DNS_RCODE_NOERROR, (const guint8 *) &address, out, out_size);
}

gsize
sbx_dns_approved_answer (const guint8 *refused,
                         gsize         len,
                         guint8       *out,
                         gsize         out_size)
{
  static const guint8 address[4] = SBX_DNS_APPROVED_ADDRESS;
  guint8 query[SBX_DNS_MAX_ANSWER];
  SbxDnsQuery q;

  g_return_val_if_fail (out_size >= SBX_DNS_MAX_ANSWER && len <= SBX_DNS_MAX_ANSWER, 0);
  memcpy (query, refused, len);
  /* the REFUSED answer with QR clear is the query again (1/0/0/0) */
  if (len >= SBX_DNS_HEADER_SIZE)
    query[2] &= 0x7f;
  if (sbx_dns_parse_query (query, len, &q) != SBX_DNS_PARSE_OK)
    {
      memcpy (out, refused, len);
      return len;
    }
  return sbx_dns_build_answer_ttl (&q, TRUE, SBX_DNS_RCODE_NOERROR, q.qtype == SBX_DNS_TYPE_A ? address : NULL,
                                   0, out, out_size);
}

SbxDnsStreamStep
sbx_dns_stream_next (SbxDnsStream *s,
                     GHashTable   *names)
{
  if (s->out_len > 0)
    return SBX_DNS_STREAM_ANSWER;
  while (s->in_len >= 2)
    {
      gsize len = get16 (s->in), n;

      if (len == 0 || len > SBX_DNS_MAX_PACKET)
        return SBX_DNS_STREAM_CLOSE;
      if (s->in_len < 2 + len)
        return SBX_DNS_STREAM_MORE;
      n = sbx_dns_answer_full (s->in + 2, len, names, s->out + 2, sizeof s->out - 2, s->refused);
      s->in_len -= 2 + len;
      memmove (s->in, s->in + 2 + len, s->in_len);
      if (n > 0)
        {
          put16 (s->out, (guint16) n);
          s->out_len = 2 + n;
          return SBX_DNS_STREAM_ANSWER;
        }
    }
  return SBX_DNS_STREAM_MORE;
}

/* ------------------------------------------------------------------------- */
/* The server                                                                 */
/* ------------------------------------------------------------------------- */

typedef struct
{
  SbxEgressDns *dns;
  char         *exec_id;
  GSocket      *socket;
  GSource      *source;    /* the socket's watch, or a TCP listener's back-off */
  GHashTable   *names;
  GPtrArray    *conns;     /* a TCP listener's open connections (Conn); NULL for UDP */
  guint         n_held;    /* UDP: queries held for the host's answer */
} Served;

typedef struct _Held Held;

typedef struct
{
  Served       *listener;
  GSocket      *socket;
  GSource      *source;    /* watches @watching */
  GIOCondition  watching;
  GSource      *idle;      /* closes the connection when it fires */
  gsize         out_sent;  /* of stream.out */
  Held         *held;      /* (nullable) its query waits for the host: nothing is read or sent */
  SbxDnsStream  stream;
} Conn;

/* A query held for the host's answer: the REFUSED answer it would get,
 * sent as is when denied, rewritten (sbx_dns_approved_answer) when
 * approved.  In dns->held until answered; when its socket or connection
 * closes first, @udp and @conn are NULL and the answer goes nowhere. */
struct _Held
{
  SbxEgressDns           *dns;
  Served                 *udp;
  Conn                   *conn;
  struct sockaddr_storage from;
  socklen_t               from_len;
  guint32                 decision;   /* written by the answer, read on the thread */
  gsize                   len;
  guint8                  answer[SBX_DNS_MAX_ANSWER];
  char                    name[SBX_DNS_MAX_NAME + 1];
};

struct _SbxEgressDns
{
  GMutex        lock;
  gboolean      closing;   /* (lock) */
  guint         n_served;  /* (lock) */
  guint         n_conns;   /* (lock) */
  guint         tcp_idle_ms;   /* (atomic) */
  GMainContext *context;
  GMainLoop    *loop;
  GThread      *thread;
  GPtrArray    *served;    /* DNS thread: Served */
  SbxEgressDnsRefused refused;       /* (nullable) set before serving */
  gpointer            refused_data;
  SbxEgressDnsAsk     ask;           /* (nullable) set before serving */
  gpointer            ask_data;
  GHashTable         *held;          /* DNS thread: Held set (owned) */
};

static void
source_clear (GSource **source)
{
  if (*source != NULL)
    {
      g_source_destroy (*source);
      g_source_unref (*source);
      *source = NULL;
    }
}

static void
conn_free (Conn *c)
{
  SbxEgressDns *dns = c->listener->dns;

  if (c->held != NULL)
    c->held->conn = NULL;   /* its answer goes nowhere */
  source_clear (&c->source);
  source_clear (&c->idle);
  g_socket_close (c->socket, NULL);
  g_object_unref (c->socket);
  g_free (c);
  g_mutex_lock (&dns->lock);
  dns->n_conns--;
  g_mutex_unlock (&dns->lock);
}

/* Frees @c (its sources too, also from inside one of their callbacks). */
static void
conn_close (Conn *c)
{
  g_ptr_array_remove_fast (c->listener->conns, c);
}

static gboolean
conn_idle (gpointer data)
{
  conn_close (data);
  return G_SOURCE_REMOVE;
}

/* The idle limit starts again now. */
static void
conn_arm_idle (Conn *c)
{
  source_clear (&c->idle);
  c->idle = g_timeout_source_new (g_atomic_int_get (&c->listener->dns->tcp_idle_ms));
  g_source_set_callback (c->idle, conn_idle, c, NULL);
  g_source_attach (c->idle, c->listener->dns->context);
}

static gboolean conn_ready (GSocket      *socket,
                            GIOCondition  condition,
                            gpointer      data);

static void
conn_watch (Conn         *c,
            GIOCondition  condition)
{
  if (c->source != NULL && c->watching == condition)
    return;
  source_clear (&c->source);
  c->source = g_socket_create_source (c->socket, condition, NULL);
  g_source_set_callback (c->source, G_SOURCE_FUNC (conn_ready), c, NULL);
  g_source_attach (c->source, c->listener->dns->context);
  c->watching = condition;
}

/* On the stub's thread: the host answered @data (a Held). */
static gboolean
held_dispatch (gpointer data)
{
  Held *h = data;
  SbxEgressDns *dns = h->dns;
  gboolean approved = h->decision == SBX_EGRESS_DNS_ONCE || h->decision == SBX_EGRESS_DNS_FOR_RUN;
  Served *owner = h->udp != NULL ? h->udp : h->conn != NULL ? h->conn->listener : NULL;
  guint8 out[SBX_DNS_MAX_ANSWER];
  gsize n;

  g_hash_table_steal (dns->held, h);
  if (owner != NULL && !approved && dns->refused != NULL)
    dns->refused (dns->refused_data, owner->exec_id, h->name);
  n = approved ? sbx_dns_approved_answer (h->answer, h->len, out, sizeof out) : h->len;
  if (!approved)
    memcpy (out, h->answer, n);
  if (h->udp != NULL)
    {
      (void) sendto (g_socket_get_fd (h->udp->socket), out, n, MSG_DONTWAIT | MSG_NOSIGNAL,
                     (struct sockaddr *) &h->from, h->from_len);
      h->udp->n_held--;
    }
  else if (h->conn != NULL)
    {
      Conn *c = h->conn;

      c->held = NULL;
      put16 (c->stream.out, (guint16) n);
      memcpy (c->stream.out + 2, out, n);
      c->stream.out_len = 2 + n;
      c->out_sent = 0;
      conn_arm_idle (c);
      conn_watch (c, G_IO_OUT);
    }
  g_free (h);
  return G_SOURCE_REMOVE;
}

/* SbxEgressDnsAnswer: from any thread (maybe inside the ask). */
static void
held_answered (void    *ticket,
               guint32  decision)
{
  Held *h = ticket;
  GSource *idle = g_idle_source_new ();

  h->decision = decision;
  g_source_set_callback (idle, held_dispatch, h, NULL);
  g_source_set_static_name (idle, "[sbx-egress-dns] answer");
  g_source_attach (idle, h->dns->context);
  g_source_unref (idle);
}

/* Holds the query of @udp (from @from) or @conn that got the REFUSED
 * @answer for @name and asks: FALSE (nothing held) when it cannot. */
static gboolean
hold (SbxEgressDns                  *dns,
      Served                        *udp,
      Conn                          *conn,
      const struct sockaddr_storage *from,
      socklen_t                      from_len,
      const guint8                  *answer,
      gsize                          len,
      const char                    *name)
{
  Served *owner = udp != NULL ? udp : conn->listener;
  Held *h;

  if (dns->ask == NULL || len > SBX_DNS_MAX_ANSWER || (udp != NULL && udp->n_held >= SBX_DNS_MAX_HELD))
    return FALSE;
  h = g_new0 (Held, 1);
  h->dns = dns;
  h->udp = udp;
  h->conn = conn;
  if (from != NULL)
    h->from = *from;
  h->from_len = from_len;
  h->len = len;
  memcpy (h->answer, answer, len);
  g_strlcpy (h->name, name, sizeof h->name);
  g_hash_table_add (dns->held, h);
  if (udp != NULL)
    udp->n_held++;
  else
    conn->held = h;
  /* the answer comes back through an idle on this thread, never inside */
  if (dns->ask (dns->ask_data, owner->exec_id, name, held_answered, h))
    return TRUE;
  g_hash_table_remove (dns->held, h);
  if (udp != NULL)
    udp->n_held--;
  else
    conn->held = NULL;
  g_free (h);
  return FALSE;
}

static gboolean
would_block (void)
{
  return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

static gboolean
conn_ready (GSocket      *socket,
            GIOCondition  condition,
            gpointer      data)
{
  Conn *c = data;
  int fd = g_socket_get_fd (socket);
  GIOCondition next = G_IO_OUT;   /* the turn ran out with work left */
  gboolean moved = FALSE;

  for (int i = 0; i < CONN_BUDGET; i++)
    {
      ssize_t n;

      if (c->stream.out_len > 0)
        {
          n = send (fd, c->stream.out + c->out_sent, c->stream.out_len - c->out_sent,
                    MSG_DONTWAIT | MSG_NOSIGNAL);
          if (n < 0 && would_block ())
            break;
          if (n <= 0)
            {
              conn_close (c);
              return G_SOURCE_REMOVE;
            }
          moved = TRUE;
          c->out_sent += (gsize) n;
          if (c->out_sent == c->stream.out_len)
            c->stream.out_len = c->out_sent = 0;
          continue;
        }
      switch (sbx_dns_stream_next (&c->stream, c->listener->names))
        {
        case SBX_DNS_STREAM_ANSWER:
          if (c->stream.refused[0] != '\0'
              && hold (c->listener->dns, NULL, c, NULL, 0, c->stream.out + 2, c->stream.out_len - 2,
                       c->stream.refused))
            {
              /* nothing read or sent until the answer; no idle limit */
              c->stream.out_len = 0;
              c->stream.refused[0] = '\0';
              source_clear (&c->idle);
              source_clear (&c->source);
              return G_SOURCE_REMOVE;
            }
          if (c->stream.refused[0] != '\0' && c->listener->dns->refused != NULL)
            c->listener->dns->refused (c->listener->dns->refused_data, c->listener->exec_id,
                                       c->stream.refused);
          c->stream.refused[0] = '\0';
          continue;
        case SBX_DNS_STREAM_CLOSE:
          conn_close (c);
          return G_SOURCE_REMOVE;
        case SBX_DNS_STREAM_MORE:
        default:
          break;
        }
      n = recv (fd, c->stream.in + c->stream.in_len, sizeof c->stream.in - c->stream.in_len, MSG_DONTWAIT);
      if (n < 0 && would_block ())
        {
          next = G_IO_IN;
          break;
        }
      if (n <= 0)
        {
          /* EOF (what is left is a query cut short, or nothing) or an error */
          conn_close (c);
          return G_SOURCE_REMOVE;
        }
      moved = TRUE;
      c->stream.in_len += (gsize) n;
    }
  if (moved)
    conn_arm_idle (c);
  conn_watch (c, next);
  return G_SOURCE_CONTINUE;
}

static void served_watch (Served *s);

static gboolean
accept_resume (gpointer data)
{
  served_watch (data);
  return G_SOURCE_REMOVE;
}

/* Accepts what is queued on a TCP listener (bounded per wake-up, like the
 * UDP socket's datagrams). */
static gboolean
acceptable (GSocket      *socket,
            GIOCondition  condition,
            gpointer      data)
{
  Served *s = data;

  for (int i = 0; i < ACCEPT_BUDGET; i++)
    {
      int fd = accept4 (g_socket_get_fd (socket), NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
      GSocket *accepted;
      Conn *c;

      if (fd < 0 && (errno == EINTR || errno == ECONNABORTED || errno == EPROTO))
        continue;
      if (fd < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
        {
          /* EMFILE, ENFILE, ENOBUFS, ENOMEM */
          source_clear (&s->source);
          s->source = g_timeout_source_new (ACCEPT_BACKOFF_MS);
          g_source_set_callback (s->source, accept_resume, s, NULL);
          g_source_attach (s->source, s->dns->context);
          return G_SOURCE_REMOVE;
        }
      if (fd < 0)
        break;
      if (s->conns->len >= SBX_DNS_TCP_MAX_CONNECTIONS)
        {
          close (fd);
          continue;
        }
      accepted = g_socket_new_from_fd (fd, NULL);
      if (accepted == NULL)
        {
          close (fd);
          continue;
        }
      c = g_new0 (Conn, 1);
      c->listener = s;
      c->socket = accepted;
      g_mutex_lock (&s->dns->lock);
      s->dns->n_conns++;
      g_mutex_unlock (&s->dns->lock);
      g_ptr_array_add (s->conns, c);
      conn_arm_idle (c);
      conn_watch (c, G_IO_IN);
    }
  return G_SOURCE_CONTINUE;
}

static void
served_free (Served *s)
{
  GHashTableIter iter;
  gpointer key;

  g_hash_table_iter_init (&iter, s->dns->held);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    if (((Held *) key)->udp == s)
      ((Held *) key)->udp = NULL;
  source_clear (&s->source);
  if (s->conns != NULL)
    g_ptr_array_unref (s->conns);
  g_socket_close (s->socket, NULL);
  g_object_unref (s->socket);
  g_hash_table_unref (s->names);
  g_free (s->exec_id);
  g_mutex_lock (&s->dns->lock);
  s->dns->n_served--;
  g_mutex_unlock (&s->dns->lock);
  g_free (s);
}

/* Answers what is queued (bounded per wake-up so that one sandbox cannot
 * starve another's socket). */
static gboolean
readable (GSocket      *socket,
          GIOCondition  condition,
          gpointer      data)
{
  Served *s = data;
  int fd = g_socket_get_fd (socket);

  for (int i = 0; i < UDP_BUDGET; i++)
    {
      guint8 packet[SBX_DNS_MAX_PACKET];
      guint8 answer[SBX_DNS_MAX_ANSWER];
      char refused[SBX_DNS_MAX_NAME + 1];
      struct sockaddr_storage from;
      socklen_t from_len = sizeof from;
      ssize_t n;
      gsize out;

      n = recvfrom (fd, packet, sizeof packet, MSG_DONTWAIT | MSG_TRUNC, (struct sockaddr *) &from, &from_len);
      if (n < 0)
        break;   /* EAGAIN, or an error the next wake-up sees again */
      if ((gsize) n > sizeof packet)
        continue;   /* truncated by us: dropped */
      out = sbx_dns_answer_full (packet, (gsize) n, s->names, answer, sizeof answer, refused);
      if (refused[0] != '\0' && hold (s->dns, s, NULL, &from, from_len, answer, out, refused))
        continue;
      if (out > 0)
        (void) sendto (fd, answer, out, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *) &from, from_len);
      if (refused[0] != '\0' && s->dns->refused != NULL)
        s->dns->refused (s->dns->refused_data, s->exec_id, refused);
    }
  return G_SOURCE_CONTINUE;
}

static gpointer
dns_thread (gpointer data)
{
  SbxEgressDns *self = data;

  g_main_context_push_thread_default (self->context);
  g_main_loop_run (self->loop);
  g_main_context_pop_thread_default (self->context);
  return NULL;
}

void
sbx_egress_dns_set_refused (SbxEgressDns       *self,
                            SbxEgressDnsRefused refused,
                            gpointer            data)
{
  self->refused = refused;
  self->refused_data = data;
}

void
sbx_egress_dns_set_ask (SbxEgressDns   *self,
                        SbxEgressDnsAsk ask,
                        gpointer        data)
{
  self->ask = ask;
  self->ask_data = data;
}

SbxEgressDns *
sbx_egress_dns_new (void)
{
  SbxEgressDns *self = g_new0 (SbxEgressDns, 1);

  self->held = g_hash_table_new (NULL, NULL);

  g_mutex_init (&self->lock);
  self->tcp_idle_ms = SBX_DNS_TCP_IDLE_MS;
  self->served = g_ptr_array_new_with_free_func ((GDestroyNotify) served_free);
  self->context = g_main_context_new ();
  self->loop = g_main_loop_new (self->context, FALSE);
  self->thread = g_thread_new ("sbx-egress-dns", dns_thread, self);
  return self;
}

static gboolean
stop_in_thread (gpointer data)
{
  SbxEgressDns *self = data;

  g_ptr_array_set_size (self->served, 0);
  g_main_loop_quit (self->loop);
  return G_SOURCE_REMOVE;
}

void
sbx_egress_dns_free (SbxEgressDns *self)
{
  if (self == NULL)
    return;
  g_mutex_lock (&self->lock);
  self->closing = TRUE;
  g_mutex_unlock (&self->lock);
  g_main_context_invoke (self->context, stop_in_thread, self);
  g_thread_join (self->thread);
  /* anything queued after the stop (a late serve) is freed here */
  while (g_main_context_iteration (self->context, FALSE))
    ;
  /* held queries were answered before their revoke (the ABI's rule) */
  g_warn_if_fail (g_hash_table_size (self->held) == 0);
  g_hash_table_unref (self->held);
  g_ptr_array_unref (self->served);
  g_main_loop_unref (self->loop);
  g_main_context_unref (self->context);
  g_mutex_clear (&self->lock);
  g_free (self);
}

/* Watches @s's socket (again, after a back-off). */
static void
served_watch (Served *s)
{
  source_clear (&s->source);
  s->source = g_socket_create_source (s->socket, G_IO_IN, NULL);
  g_source_set_callback (s->source, G_SOURCE_FUNC (s->conns != NULL ? acceptable : readable), s, NULL);
  g_source_attach (s->source, s->dns->context);
}

static gboolean
serve_in_thread (gpointer data)
{
  Served *s = data;
  SbxEgressDns *self = s->dns;
  gboolean closing;

  g_mutex_lock (&self->lock);
  closing = self->closing;
  g_mutex_unlock (&self->lock);
  if (closing)
    {
      served_free (s);
      return G_SOURCE_REMOVE;
    }
  served_watch (s);
  g_ptr_array_add (self->served, s);
  return G_SOURCE_REMOVE;
}

gboolean
sbx_egress_dns_serve_fd (SbxEgressDns  *self,
                         const char    *execution_id,
                         int            fd,
                         gboolean       stream,
                         GHashTable    *names,
                         GError       **error)
{
  g_autoptr(GSocket) socket = NULL;
  Served *s;
  int listening = 0;
  socklen_t len = sizeof listening;

  if (fd < 0 || execution_id == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "dns serve: no socket (fd %d) or no execution", fd);
      if (fd >= 0)
        close (fd);
      g_hash_table_unref (names);
      return FALSE;
    }
  socket = g_socket_new_from_fd (fd, error);
  if (socket == NULL)
    {
      close (fd);
      g_hash_table_unref (names);
      return FALSE;
    }
  if (stream ? g_socket_get_socket_type (socket) != G_SOCKET_TYPE_STREAM ||
      getsockopt (fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening
      : g_socket_get_socket_type (socket) != G_SOCKET_TYPE_DATAGRAM)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "dns serve: fd %d is not a %s", fd, stream ? "listening TCP socket" : "UDP socket");
      g_socket_close (socket, NULL);
      g_hash_table_unref (names);
      return FALSE;
    }
  g_socket_set_blocking (socket, FALSE);
  s = g_new0 (Served, 1);
  s->dns = self;
  s->exec_id = g_strdup (execution_id);
  s->socket = g_steal_pointer (&socket);
  s->names = names;
  if (stream)
    s->conns = g_ptr_array_new_with_free_func ((GDestroyNotify) conn_free);
  g_mutex_lock (&self->lock);
  self->n_served++;
  g_mutex_unlock (&self->lock);
  g_main_context_invoke (self->context, serve_in_thread, s);
  return TRUE;
}

typedef struct
{
  SbxEgressDns *self;
  char         *exec_id;
  GMutex        lock;
  GCond         cond;
  gboolean      done;
} RevokeOp;

static gboolean
revoke_in_thread (gpointer data)
{
  RevokeOp *op = data;

  for (guint i = op->self->served->len; i-- > 0;)
    {
      Served *s = op->self->served->pdata[i];

      if (strcmp (s->exec_id, op->exec_id) == 0)
        g_ptr_array_remove_index_fast (op->self->served, i);
    }
  g_mutex_lock (&op->lock);
  op->done = TRUE;
  g_cond_signal (&op->cond);
  g_mutex_unlock (&op->lock);
  return G_SOURCE_REMOVE;
}

void
sbx_egress_dns_revoke (SbxEgressDns *self,
                       const char   *execution_id)
{
  RevokeOp op = { .self = self, .exec_id = (char *) execution_id };

  if (self == NULL || execution_id == NULL)
    return;
  /* Synchronous: once revoke returns, the execution's sockets are closed
   * (serve_in_thread ran before, as the context runs in order). */
  g_mutex_init (&op.lock);
  g_cond_init (&op.cond);
  g_main_context_invoke (self->context, revoke_in_thread, &op);
  g_mutex_lock (&op.lock);
  while (!op.done)
    g_cond_wait (&op.cond, &op.lock);
  g_mutex_unlock (&op.lock);
  g_mutex_clear (&op.lock);
  g_cond_clear (&op.cond);
}

/* @count, one of self's (lock) counters, read under the lock. */
static guint
locked_count (SbxEgressDns *self,
              const guint  *count)
{
  guint n;

  g_mutex_lock (&self->lock);
  n = *count;
  g_mutex_unlock (&self->lock);
  return n;
}

guint
sbx_egress_dns_get_n_sockets (SbxEgressDns *self)
{
  return locked_count (self, &self->n_served);
}

guint
sbx_egress_dns_get_n_connections (SbxEgressDns *self)
{
  return locked_count (self, &self->n_conns);
}

void
sbx_egress_dns_set_tcp_idle_ms (SbxEgressDns *self,
                                guint         idle_ms)
{
  g_atomic_int_set (&self->tcp_idle_ms, idle_ms);
}
