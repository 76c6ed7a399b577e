/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx-egress-dns.h — the sandbox's DNS stub: a packet parser and answer
 * builder of our own (pure functions, fuzzed by tests/fuzz/fuzz-dns-packet.c)
 * and the server that answers, for one execution per socket, the names that
 * execution was approved to reach with the addresses of their forwarders
 * inside the sandbox, and refuses every other name.  Internal to
 * plugins/egress-http.
 *
 * Answers (one question per query, class IN):
 *  - an approved name, type A: one A record, the forwarder's IPv4 address
 *    (TTL 60); type AAAA or any other type: NOERROR with no answer (the
 *    forwarders are IPv4: a client that only gets an A record connects
 *    there);
 *  - any other name, class or type: REFUSED.  Not NXDOMAIN: the stub is not
 *    authoritative for the name and does not know that it does not exist;
 *    REFUSED says "policy" (RFC 1035 §4.1.1), is not negatively cached, and
 *    glibc's resolver gives up on it at once as well (no other server is
 *    configured, so getaddrinfo fails with EAI_AGAIN);
 *  - a malformed query whose header can be read: FORMERR; an opcode other
 *    than QUERY: NOTIMP; a response, or anything shorter than a header:
 *    dropped.
 *
 * Over TCP (RFC 1035 §4.2.2, RFC 7766) every message carries a two-byte
 * big-endian length; a connection may carry several queries, answered in
 * order with exactly the answers above (a dropped one gets none).  A
 * length of 0 or above SBX_DNS_MAX_PACKET ends the connection, as do EOF
 * (a query cut short by it is not answered), SBX_DNS_TCP_IDLE_MS without a
 * byte moving either way, and any socket error.  A listener keeps at most
 * SBX_DNS_TCP_MAX_CONNECTIONS open; one accepted beyond them is closed at
 * once.  Connections share nothing but the listener's names.
 */
#ifndef SBX_EGRESS_DNS_H
#define SBX_EGRESS_DNS_H

#include <gio/gio.h>

G_BEGIN_DECLS

#define SBX_DNS_HEADER_SIZE   12
#define SBX_DNS_MAX_NAME      255     /* wire octets of a name, RFC 1035 §2.3.4 */
#define SBX_DNS_MAX_LABEL     63
#define SBX_DNS_MAX_PACKET    4096    /* the largest query read; larger ones are dropped */
#define SBX_DNS_MAX_ANSWER    512     /* one question and at most one record always fit */
#define SBX_DNS_TCP_IDLE_MS   10000
#define SBX_DNS_TCP_MAX_CONNECTIONS 16
/* Queries one UDP socket holds for the host's answer at a time (an asking
 * run); past them a refused name is refused at once.  A TCP connection
 * holds one (it reads nothing meanwhile). */
#define SBX_DNS_MAX_HELD      256
/* Where a name approved while the tool runs resolves: no forwarder
 * listens there (forwarders exist only for targets approved at spawn, at
 * 127.83.x.y), so a direct connection is refused at once and the name is
 * reached only through the proxy. */
#define SBX_DNS_APPROVED_ADDRESS { 127, 84, 0, 1 }

#define SBX_DNS_TYPE_A        1
#define SBX_DNS_TYPE_AAAA     28
#define SBX_DNS_CLASS_IN      1

#define SBX_DNS_RCODE_NOERROR 0
#define SBX_DNS_RCODE_FORMERR 1
#define SBX_DNS_RCODE_NOTIMP  4
#define SBX_DNS_RCODE_REFUSED 5

typedef enum
{
  SBX_DNS_PARSE_OK = 0,      /* a standard query with one question */
  SBX_DNS_PARSE_DROP,        /* no header, or a response: no answer at all */
  SBX_DNS_PARSE_FORMERR,     /* malformed: answer FORMERR */
  SBX_DNS_PARSE_NOTIMP,      /* an opcode other than QUERY: answer NOTIMP */
} SbxDnsParse;

typedef struct
{
  guint16 id;
  guint16 flags;                        /* the header's second word as received */
  guint16 qtype;
  guint16 qclass;
  /* The question's name as dotted text, as received (case kept, for the
   * echo) and lower-cased (for matching); "" is the root.  Valid with OK. */
  char    name[SBX_DNS_MAX_NAME + 1];
  char    lower[SBX_DNS_MAX_NAME + 1];
  guint   n_labels;
  /* The labels as received, for the echo: wire form without compression. */
  guint8  wire[SBX_DNS_MAX_NAME];
  gsize   wire_len;
} SbxDnsQuery;

/* Parses @packet.  Every rule: a 12-byte header; QR clear; opcode QUERY
 * (else NOTIMP); QDCOUNT 1, ANCOUNT 0, NSCOUNT 0, ARCOUNT at most 1 (an
 * EDNS OPT record, not interpreted); a name of labels of 1-63 octets each,
 * at most 255 octets in all, compression pointers only backwards and at
 * most 16 of them (no loops), no extended label types; labels hold no '.',
 * NUL or byte outside printable ASCII (such a name cannot be approved);
 * QTYPE and QCLASS complete.  Bytes after the question (the additional
 * record) are not examined.  With FORMERR and NOTIMP only id and flags of
 * @q are valid. */
SbxDnsParse  sbx_dns_parse_query     (const guint8  *packet,
                                      gsize          len,
                                      SbxDnsQuery   *q);

/* sbx_dns_build_answer() with the A record's TTL @ttl (seconds). */
gsize        sbx_dns_build_answer_ttl (const SbxDnsQuery *q,
                                       gboolean           with_question,
                                       guint              rcode,
                                       const guint8      *ipv4,
                                       guint32            ttl,
                                       guint8            *out,
                                       gsize              out_size);

/* The answer the stub gives a name approved while the tool runs, from the
 * REFUSED answer @refused (@len bytes, as the stub built it) that it
 * replaces: for type A one record of SBX_DNS_APPROVED_ADDRESS, TTL 0 (no
 * cache keeps it past this answer); any other type NOERROR without one.
 * Its length in @out (>= 512 bytes); a copy of @refused when it is not
 * one. */
gsize        sbx_dns_approved_answer (const guint8  *refused,
                                      gsize          len,
                                      guint8        *out,
                                      gsize          out_size);

/* Writes the answer to @q into @out (at least 512 bytes): @rcode, and with
 * @ipv4 (4 bytes, network order; only with NOERROR) one A record for the
 * question.  The question is echoed when @q parsed OK (@with_question).
 * Returns the length (never above 512). */
gsize        sbx_dns_build_answer    (const SbxDnsQuery *q,
                                      gboolean           with_question,
                                      guint              rcode,
                                      const guint8      *ipv4,
                                      guint8            *out,
                                      gsize              out_size);

/* The answer the stub gives @packet with @names (lower-case name ->
 * GINT_TO_POINTER of the IPv4 address in network order, as a guint32; may
 * be NULL: nothing approved).  Returns its length in @out (>= 512 bytes),
 * or 0 when the packet gets no answer. */
gsize        sbx_dns_answer          (const guint8  *packet,
                                      gsize          len,
                                      GHashTable    *names,
                                      guint8        *out,
                                      gsize          out_size);
/* The same, and the lower-cased name of a question it REFUSED (a name
 * that is not approved) in @refused (SBX_DNS_MAX_NAME + 1 bytes; "" when
 * the answer refused no name). */
gsize        sbx_dns_answer_full     (const guint8  *packet,
                                      gsize          len,
                                      GHashTable    *names,
                                      guint8        *out,
                                      gsize          out_size,
                                      char          *refused);

/* One TCP connection's framing, without I/O (RFC 1035 §4.2.2): the
 * caller reads into in[in_len .. sizeof in) and adds to in_len, and sends
 * out[0 .. out_len).  The buffer always holds a whole query of the largest
 * length accepted, so a full @in always contains one. */
typedef struct
{
  guint8 in[2 + SBX_DNS_MAX_PACKET];
  gsize  in_len;
  guint8 out[2 + SBX_DNS_MAX_ANSWER];
  gsize  out_len;
  char   refused[SBX_DNS_MAX_NAME + 1];   /* the last answer's refused name, or "" */
} SbxDnsStream;

typedef enum
{
  SBX_DNS_STREAM_MORE = 0,   /* no whole query buffered: read more */
  SBX_DNS_STREAM_ANSWER,     /* @out holds one length-prefixed answer: send it, then
                              * set out_len to 0 */
  SBX_DNS_STREAM_CLOSE,      /* a length of 0 or above SBX_DNS_MAX_PACKET: end the
                              * connection */
} SbxDnsStreamStep;

/* Consumes the buffered queries up to the first one that gets an answer
 * (sbx_dns_answer with @names) and frames that answer into @s->out.  With
 * an answer still in @s->out it returns ANSWER and consumes nothing. */
SbxDnsStreamStep sbx_dns_stream_next (SbxDnsStream *s,
                                      GHashTable   *names);

/* The server: its own thread and GMainContext, non-blocking sockets. */
typedef struct _SbxEgressDns SbxEgressDns;

SbxEgressDns *sbx_egress_dns_new       (void);
/* Closes every socket and joins the thread. */
void          sbx_egress_dns_free      (SbxEgressDns   *self);
/* Told, on the stub's thread, of every name refused to @execution_id
 * (lower-cased).  Set before the first serve. */
typedef void (*SbxEgressDnsRefused) (gpointer    data,
                                     const char *execution_id,
                                     const char *name);
void          sbx_egress_dns_set_refused (SbxEgressDns       *self,
                                          SbxEgressDnsRefused refused,
                                          gpointer            data);
/* Asks the host, on the stub's thread, about @name that @execution_id's
 * query would be refused: TRUE when it asks (then @answer(@ticket,
 * SBX_ABI_DECISION_*) is called exactly once, from any thread, maybe
 * before this returns), FALSE when it does not (the execution does not
 * ask; the query is refused at once).  Set before the first serve. */
#define SBX_EGRESS_DNS_DENY     0u   /* equal to SBX_ABI_DECISION_DENY */
#define SBX_EGRESS_DNS_ONCE     1u   /* equal to SBX_ABI_DECISION_ONCE */
#define SBX_EGRESS_DNS_FOR_RUN  2u   /* equal to SBX_ABI_DECISION_FOR_RUN */
typedef void (*SbxEgressDnsAnswer) (void    *ticket,
                                    guint32  decision);
typedef gboolean (*SbxEgressDnsAsk) (gpointer           data,
                                     const char        *execution_id,
                                     const char        *name,
                                     SbxEgressDnsAnswer answer,
                                     void              *ticket);
void          sbx_egress_dns_set_ask   (SbxEgressDns       *self,
                                        SbxEgressDnsAsk     ask,
                                        gpointer            data);
/* Serves @fd, a bound UDP socket (@stream FALSE) or a listening TCP
 * socket (@stream TRUE) in @execution_id's sandbox, answering @names
 * (taken: lower-case name -> address as in sbx_dns_answer).  Takes
 * ownership of @fd, also on failure. */
gboolean      sbx_egress_dns_serve_fd  (SbxEgressDns   *self,
                                        const char     *execution_id,
                                        int             fd,
                                        gboolean        stream,
                                        GHashTable     *names,
                                        GError        **error);
/* The idle limit of TCP connections accepted from now on (tests; the
 * default is SBX_DNS_TCP_IDLE_MS). */
void          sbx_egress_dns_set_tcp_idle_ms (SbxEgressDns *self,
                                              guint         idle_ms);
/* Closes the sockets served for @execution_id (no other). */
void          sbx_egress_dns_revoke    (SbxEgressDns   *self,
                                        const char     *execution_id);
/* Sockets served now, listeners and UDP sockets (tests). */
guint         sbx_egress_dns_get_n_sockets (SbxEgressDns *self);
/* TCP connections open now (tests). */
guint         sbx_egress_dns_get_n_connections (SbxEgressDns *self);

G_END_DECLS

#endif /* SBX_EGRESS_DNS_H */
