/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Conformance cases for SbxEgressVTableV1.serve_listeners: the DNS stub and
 * the forwarders that carry clients which ignore the proxy variables
 * (core/sdk/sbx/sbx-plugin-abi.h, SbxListenV1 and serve_listeners).
 *
 * A backend would create these sockets inside a run's private network; no
 * namespace is needed to judge the plugin, so this host binds them on its
 * own loopback (127.0.0.1, ephemeral ports; a name's forwarder on 127.0.0.2
 * or .3 where the loopback has them, so that the stub's answer names one
 * forwarder and not just "the loopback") and lists each with exactly the
 * address and port it has, as a backend would.  Two executions of one
 * "direct" route:
 *
 *  A  authorized for tcp:127.0.0.1:ECHO (a literal, named exactly) and
 *     tcp:localhost:NAMED (a name whose addresses are not public); its
 *     listeners: the stub, a forwarder for each of the two targets, and one
 *     for tcp:127.0.0.1:OTHER, which A was NOT authorized for (a host that
 *     lists one by mistake);
 *  B  authorized for tcp:conformance-peer.invalid:443; its stub and that
 *     forwarder.
 *
 * Cases (records in the egress-<extension> area, names "listeners-..."):
 *  - serve: serve_listeners takes both lists;
 *  - unknown kind: a kind no header defines is closed, the rest served;
 *  - forward-approved (the positive control): A's literal forwarder relays
 *    byte for byte to the echo server;
 *  - forward-unauthorized: A's forwarder for OTHER relays nothing, and the
 *    other server sees no connection;
 *  - dns-approved: A's stub answers localhost's A query with the address of
 *    localhost's forwarder (answering is not dialling);
 *  - dns-refuses-other: another name gets RCODE REFUSED;
 *  - dns-malformed: a compression loop and a truncated label get FORMERR or
 *    no answer, and the stub still answers the next valid query;
 *  - dns-other-execution: B's stub refuses A's name and A's stub B's, while
 *    each answers its own (the control);
 *  - name-non-public: a connection to localhost's forwarder never reaches
 *    the server: a forwarder dials as a CONNECT would, and names that
 *    resolve to non-public addresses are refused (skipped when the route's
 *    address_guarantee says it does not refuse them);
 *  - revoke-denial: revoke of A returns a denial beginning with the first
 *    target denied (OTHER);
 *  - revoke-closes: after it A's forwarders refuse connections and A's stub
 *    answers nothing, while B's stub still answers (the control).
 * A vtable without the slot gets one SKIP record: the host closes the
 * sockets it cannot hand over, so proxy-unaware clients have no route.
 *
 * The DNS packets are built and read here by hand (RFC 1035 section 4.1):
 * a 12-byte header (id, flags, four section counts), the question (the name
 * as length-prefixed labels ending in a zero byte, QTYPE, QCLASS) and, in an
 * answer, resource records (name or a 0xc0 compression pointer, TYPE,
 * CLASS, TTL, RDLENGTH, RDATA).
 */
#include "sbx-conformance-egress-private.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <sbx/sbx-cleanup.h>

#define RECORD EGRESS_RECORD

#define LOOPBACK_NAME_A  0x7f000002u   /* 127.0.0.2 */
#define LOOPBACK_NAME_B  0x7f000003u   /* 127.0.0.3 */

#define DNS_TYPE_A       1
#define DNS_CLASS_IN     1
#define DNS_RCODE_NOERROR 0
#define DNS_RCODE_FORMERR 1
#define DNS_RCODE_REFUSED 5
#define DNS_NO_ANSWER    (-1)   /* nothing came back (timeout, port closed) */

/* How long a quiet stub or forwarder is given before "nothing" counts. */
#define QUIET_MS          1500
#define CLOSE_WAIT_TRIES  100
#define CLOSE_WAIT_US     (20 * 1000)

/* ------------------------------------------------------------------------- */
/* DNS bytes                                                                  */
/* ------------------------------------------------------------------------- */

static void
put16 (GByteArray *b,
       guint16     v)
{
  guint8 two[2] = { (guint8) (v >> 8), (guint8) v };

  g_byte_array_append (b, two, 2);
}

/* A standard query: header with @id, RD, QDCOUNT 1; the question for
 * @name (dotted, no empty labels) of type A, class IN. */
static GByteArray *
dns_query (guint16     id,
           const char *name)
{
  GByteArray *q = g_byte_array_new ();
  g_auto(GStrv) labels = g_strsplit (name, ".", -1);

  put16 (q, id);
  put16 (q, 0x0100);   /* QR 0, opcode QUERY, RD */
  put16 (q, 1);        /* QDCOUNT */
  put16 (q, 0);        /* ANCOUNT */
  put16 (q, 0);        /* NSCOUNT */
  put16 (q, 0);        /* ARCOUNT */
  for (guint i = 0; labels[i] != NULL; i++)
    {
      guint8 len = (guint8) strlen (labels[i]);

      g_byte_array_append (q, &len, 1);
      g_byte_array_append (q, (const guint8 *) labels[i], len);
    }
  g_byte_array_append (q, (const guint8 *) "", 1);
  put16 (q, DNS_TYPE_A);
  put16 (q, DNS_CLASS_IN);
  return q;
}

/* Skips the name at *pos (labels, ending in a zero byte or a pointer). */
static gboolean
skip_name (const guint8 *p,
           gsize         len,
           gsize        *pos)
{
  while (*pos < len)
    {
      guint8 l = p[*pos];

      if ((l & 0xc0) == 0xc0)
        {
          *pos += 2;
          return *pos <= len;
        }
      if ((l & 0xc0) != 0)
        return FALSE;
      *pos += 1 + (gsize) l;
      if (l == 0)
        return *pos <= len;
    }
  return FALSE;
}

/* Sends @query to the stub at 127.0.0.1:@port from a fresh socket and
 * reads one answer with @id.  The rcode, or DNS_NO_ANSWER; with NOERROR
 * and an A record among the answers, its address in @a (network order),
 * else @a is zero. */
static int
dns_ask (guint16     port,
         GByteArray *query,
         guint16     id,
         guint8      a[4])
{
  struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons (port) };
  struct timeval tv = { QUIET_MS / 1000, (QUIET_MS % 1000) * 1000 };
  sbx_autofd int fd = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  guint8 answer[1500];
  gsize pos = 12;
  ssize_t n;
  guint ancount;

  memset (a, 0, 4);
  to.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  if (fd < 0 || connect (fd, (struct sockaddr *) &to, sizeof to) != 0)
    return DNS_NO_ANSWER;
  setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (send (fd, query->data, query->len, 0) != (ssize_t) query->len)
    return DNS_NO_ANSWER;
  for (;;)
    {
      n = recv (fd, answer, sizeof answer, 0);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 12)
        return DNS_NO_ANSWER;   /* timeout, ECONNREFUSED (closed), or a runt */
      if ((answer[2] & 0x80) != 0 && ((answer[0] << 8) | answer[1]) == id)
        break;
    }
  if ((answer[3] & 0x0f) != DNS_RCODE_NOERROR)
    return answer[3] & 0x0f;
  ancount = (guint) ((answer[6] << 8) | answer[7]);
  for (guint q = (guint) ((answer[4] << 8) | answer[5]); q > 0; q--)
    {
      if (!skip_name (answer, (gsize) n, &pos))
        return DNS_RCODE_NOERROR;
      pos += 4;
    }
  for (; ancount > 0 && pos <= (gsize) n; ancount--)
    {
      guint type, klass, rdlength;

      if (!skip_name (answer, (gsize) n, &pos) || pos + 10 > (gsize) n)
        break;
      type = (guint) ((answer[pos] << 8) | answer[pos + 1]);
      klass = (guint) ((answer[pos + 2] << 8) | answer[pos + 3]);
      rdlength = (guint) ((answer[pos + 8] << 8) | answer[pos + 9]);
      pos += 10;
      if (pos + rdlength > (gsize) n)
        break;
      if (type == DNS_TYPE_A && klass == DNS_CLASS_IN && rdlength == 4)
        {
          memcpy (a, answer + pos, 4);
          break;
        }
      pos += rdlength;
    }
  return DNS_RCODE_NOERROR;
}

/* The A answer for @name at the stub on @port: the rcode, the address in
 * @a (see dns_ask). */
static int
dns_ask_name (guint16     port,
              const char *name,
              guint8      a[4])
{
  static guint16 next_id = 0x5100;
  guint16 id = next_id++;
  g_autoptr(GByteArray) q = dns_query (id, name);

  return dns_ask (port, q, id, a);
}

static char *
address_text (const guint8 a[4])
{
  return g_strdup_printf ("%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
}

static const char *
rcode_text (int rcode)
{
  switch (rcode)
    {
    case DNS_NO_ANSWER:
      return "no answer";
    case DNS_RCODE_NOERROR:
      return "NOERROR";
    case DNS_RCODE_FORMERR:
      return "FORMERR";
    case 2:
      return "SERVFAIL";
    case 3:
      return "NXDOMAIN";
    case 4:
      return "NOTIMP";
    case DNS_RCODE_REFUSED:
      return "REFUSED";
    default:
      return "another rcode";
    }
}

/* ------------------------------------------------------------------------- */
/* Listeners                                                                  */
/* ------------------------------------------------------------------------- */

#define MAX_LISTENS 4

/* One execution and the listeners made for it. */
typedef struct
{
  const char  *id;
  SbxListenV1  listens[MAX_LISTENS];
  int32_t      fds[MAX_LISTENS];
  guint16      ports[MAX_LISTENS];
  guint32      addresses[MAX_LISTENS];   /* host byte order */
  guint32      n;
} Side;

static void
side_close (Side *side)
{
  for (guint32 i = 0; i < side->n; i++)
    if (side->fds[i] >= 0)
      {
        close (side->fds[i]);
        side->fds[i] = -1;
      }
}

/* Binds one listener of @kind on @address (falling back to 127.0.0.1 when
 * this host's loopback lacks it) and lists it with that address and port. */
static gboolean
side_add (Side       *side,
          guint32     kind,
          guint32     address,
          const char *target)
{
  guint32 i = side->n;
  SbxListenV1 *l = &side->listens[i];
  int type = kind == SBX_LISTEN_DNS_UDP ? SOCK_DGRAM : SOCK_STREAM;
  guint32 net;

  g_return_val_if_fail (i < MAX_LISTENS, FALSE);
  side->fds[i] = sbx_conformance_bind_loopback (type, address, &side->ports[i]);
  if (side->fds[i] < 0 && errno == EADDRNOTAVAIL && address != INADDR_LOOPBACK)
    {
      address = INADDR_LOOPBACK;
      side->fds[i] = sbx_conformance_bind_loopback (type, address, &side->ports[i]);
    }
  if (side->fds[i] < 0)
    return FALSE;
  side->addresses[i] = address;
  memset (l, 0, sizeof *l);
  l->struct_size = sizeof *l;
  l->kind = kind;
  l->family = SBX_LISTEN_IPV4;
  l->flags = 0;   /* 127.0.0.0/8 is on the loopback already */
  net = htonl (address);
  memcpy (l->address, &net, 4);
  l->port = side->ports[i];
  l->target = target;
  side->n++;
  return TRUE;
}

/* serve_listeners of @side; the fds pass to the plugin whatever it says.
 * *message (freed first) gets the plugin's message. */
static gboolean
side_serve (Egress *g,
            void   *route,
            Side   *side,
            char  **message)
{
  SbxHostCall call = { 0 };
  int32_t status = g->vt->serve_listeners (g->ctx, &call, route, side->id, side->listens, side->fds, side->n);

  for (guint32 i = 0; i < side->n; i++)
    side->fds[i] = -1;
  g_free (*message);
  *message = g_strdup (call.message[0] != '\0' ? call.message : "(no message)");
  return status == SBX_STATUS_OK;
}

/* Connects to a forwarder and sends "conform"; what came back before EOF,
 * a quiet QUIET_MS or 7 bytes, or NULL when the connection was refused. */
static char *
forward_probe (guint32 address,
               guint16 port)
{
  struct timeval tv = { QUIET_MS / 1000, (QUIET_MS % 1000) * 1000 };
  sbx_autofd int fd = sbx_conformance_connect_loopback (address, port);
  char got[8] = { 0 };
  gsize used = 0;

  if (fd < 0)
    return NULL;
  setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (!sbx_conformance_send_all (fd, "conform", 7))
    return g_strdup ("");
  while (used < 7)
    {
      ssize_t n = recv (fd, got + used, 7 - used, 0);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      used += (gsize) n;
    }
  return g_strndup (got, used);
}

/* TRUE once a connection to the forwarder is refused (within about 2 s):
 * the plugin closed it. */
static gboolean
forward_closed (guint32 address,
                guint16 port)
{
  for (int i = 0; i < CLOSE_WAIT_TRIES; i++)
    {
      int fd = sbx_conformance_connect_loopback (address, port);

      if (fd < 0)
        return TRUE;
      close (fd);
      g_usleep (CLOSE_WAIT_US);
    }
  return FALSE;
}

/* ------------------------------------------------------------------------- */
/* The cases                                                                  */
/* ------------------------------------------------------------------------- */

/* Indices of A's and B's listeners. */
enum
{
  A_DNS, A_LITERAL, A_NAME, A_UNAUTHORIZED,
};
enum
{
  B_DNS, B_NAME,
};

static void
case_dns (Egress *g,
          Side   *a,
          Side   *b)
{
  guint8 got[4], got_b[4];
  guint32 want_net = htonl (a->addresses[A_NAME]);
  guint32 want_b_net = htonl (b->addresses[B_NAME]);
  g_autofree char *got_text = NULL, *want_text = address_text ((const guint8 *) &want_net);
  g_autofree char *got_b_text = NULL;
  int rcode, rcode_b, refused;

  rcode = dns_ask_name (a->ports[A_DNS], "localhost", got);
  got_text = address_text (got);
  if (rcode == DNS_RCODE_NOERROR && memcmp (got, &want_net, 4) == 0)
    RECORD (g, "listeners-dns-approved", SBX_CONFORMANCE_PASS, "localhost A %s: its forwarder's address",
            got_text);
  else
    RECORD (g, "listeners-dns-approved", SBX_CONFORMANCE_FAIL,
            "localhost A: %s, address %s; expected NOERROR with %s, the address of localhost's forwarder",
            rcode_text (rcode), got_text, want_text);

  refused = dns_ask_name (a->ports[A_DNS], "conformance-unapproved.example", got);
  RECORD (g, "listeners-dns-refuses-other", refused == DNS_RCODE_REFUSED ? SBX_CONFORMANCE_PASS
          : SBX_CONFORMANCE_FAIL, "a name no forwarder of the execution has: %s (expected REFUSED)",
          rcode_text (refused));

  /* A name that points at itself (a compression loop) and a label longer
   * than what follows it; then the valid query again. */
  {
    static const guint8 loop[] = { 0x51, 0x01, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 0x0c, 0, 1, 0, 1 };
    static const guint8 truncated[] = { 0x51, 0x02, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 0x3f, 'a', 'b' };
    g_autoptr(GByteArray) p_loop = g_byte_array_new ();
    g_autoptr(GByteArray) p_trunc = g_byte_array_new ();
    int r_loop, r_trunc, again;

    g_byte_array_append (p_loop, loop, sizeof loop);
    g_byte_array_append (p_trunc, truncated, sizeof truncated);
    r_loop = dns_ask (a->ports[A_DNS], p_loop, 0x5101, got);
    r_trunc = dns_ask (a->ports[A_DNS], p_trunc, 0x5102, got);
    again = dns_ask_name (a->ports[A_DNS], "localhost", got);
    g_clear_pointer (&got_text, g_free);
    got_text = address_text (got);
    if ((r_loop == DNS_RCODE_FORMERR || r_loop == DNS_NO_ANSWER)
        && (r_trunc == DNS_RCODE_FORMERR || r_trunc == DNS_NO_ANSWER)
        && again == DNS_RCODE_NOERROR && memcmp (got, &want_net, 4) == 0)
      RECORD (g, "listeners-dns-malformed", SBX_CONFORMANCE_PASS,
              "compression loop: %s, truncated label: %s; the next query answered", rcode_text (r_loop),
              rcode_text (r_trunc));
    else
      RECORD (g, "listeners-dns-malformed", SBX_CONFORMANCE_FAIL,
              "compression loop: %s, truncated label: %s (FORMERR or no answer expected); then localhost A: "
              "%s %s (NOERROR %s expected)", rcode_text (r_loop), rcode_text (r_trunc), rcode_text (again),
              got_text, want_text);
  }

  rcode = dns_ask_name (b->ports[B_DNS], "localhost", got);
  refused = dns_ask_name (a->ports[A_DNS], "conformance-peer.invalid", got);
  rcode_b = dns_ask_name (b->ports[B_DNS], "conformance-peer.invalid", got_b);
  got_b_text = address_text (got_b);
  if (rcode == DNS_RCODE_REFUSED && refused == DNS_RCODE_REFUSED && rcode_b == DNS_RCODE_NOERROR
      && memcmp (got_b, &want_b_net, 4) == 0)
    RECORD (g, "listeners-dns-other-execution", SBX_CONFORMANCE_PASS,
            "each stub refuses the other execution's name and answers its own");
  else
    RECORD (g, "listeners-dns-other-execution", SBX_CONFORMANCE_FAIL,
            "B's stub on A's name: %s; A's stub on B's name: %s (both must be REFUSED); B's stub on its own "
            "name: %s %s", rcode_text (rcode), rcode_text (refused), rcode_text (rcode_b), got_b_text);
}

static void
case_revoke (Egress     *g,
             void       *route,
             Side       *a,
             Side       *b,
             const char *denied_target)
{
  const char *open_forwarder = NULL;
  guint8 got[4];
  int after, control;

  sbx_conformance_egress_revoke_denial (g, "listeners-revoke-denial", route, a->id, denied_target);
  for (guint32 i = A_LITERAL; i < a->n && open_forwarder == NULL; i++)
    if (!forward_closed (a->addresses[i], a->ports[i]))
      open_forwarder = a->listens[i].target;
  after = dns_ask_name (a->ports[A_DNS], "localhost", got);
  control = dns_ask_name (b->ports[B_DNS], "conformance-peer.invalid", got);
  if (open_forwarder == NULL && after == DNS_NO_ANSWER && control == DNS_RCODE_NOERROR)
    RECORD (g, "listeners-revoke-closes", SBX_CONFORMANCE_PASS,
            "A's forwarders refuse connections and its stub is silent; B's stub still answers");
  else
    RECORD (g, "listeners-revoke-closes", SBX_CONFORMANCE_FAIL,
            "after revoke: %s%s, A's stub: %s (expected no answer); B's stub, not revoked: %s",
            open_forwarder != NULL ? "still accepting for " : "A's forwarders closed",
            open_forwarder != NULL ? open_forwarder : "", rcode_text (after), rcode_text (control));
}

/* Listener kinds are added over time: a plugin closes the socket of a kind
 * it does not know and serves the others (the host lists newer kinds after
 * the older ones).  A third execution gets a forwarder for the approved
 * literal and a TCP listener of a kind no header defines: the call
 * succeeds, the forwarder relays, and the unknown kind's socket is closed
 * (a connection to it is refused, where a listener left open would accept
 * it into its backlog). */
#define SBX_LISTEN_KIND_UNDEFINED 0x7fffffffu

static void
case_unknown_kind (Egress     *g,
                   void       *route,
                   const char *literal)
{
  const char *targets[] = { literal, NULL };
  g_autofree char *cred = NULL, *message = NULL, *relayed = NULL, *denial = NULL;
  Side c = { .id = "conformance-listen-c" };
  int probe;

  cred = sbx_conformance_egress_authorize (g, route, c.id, targets);
  if (cred == NULL || !side_add (&c, SBX_LISTEN_FORWARD, INADDR_LOOPBACK, literal)
      || !side_add (&c, SBX_LISTEN_KIND_UNDEFINED, INADDR_LOOPBACK, NULL))
    {
      RECORD (g, "listeners-unknown-kind", SBX_CONFORMANCE_FAIL, "cannot set up a third execution: %s",
              cred == NULL ? "authorize failed" : g_strerror (errno));
      side_close (&c);
      return;
    }
  if (!side_serve (g, route, &c, &message))
    {
      RECORD (g, "listeners-unknown-kind", SBX_CONFORMANCE_FAIL,
              "serve_listeners refused a list with a kind it does not know (close that socket and serve the "
              "others): %s", message);
      g->vt->revoke (g->ctx, route, c.id, &denial);
      return;
    }
  relayed = forward_probe (c.addresses[0], c.ports[0]);
  probe = sbx_conformance_connect_loopback (c.addresses[1], c.ports[1]);
  if (probe >= 0)
    close (probe);
  RECORD (g, "listeners-unknown-kind", g_strcmp0 (relayed, "conform") == 0 && probe < 0
          ? SBX_CONFORMANCE_PASS : SBX_CONFORMANCE_FAIL,
          "a kind it does not know next to a forwarder: the forwarder %s, the unknown kind's socket %s",
          g_strcmp0 (relayed, "conform") == 0 ? "relays" : "does not relay",
          probe < 0 ? "is closed" : "was left open");
  g->vt->revoke (g->ctx, route, c.id, &denial);
}

void
sbx_conformance_case_listeners (Egress *g)
{
  g_autofree char *fingerprint = NULL, *message = NULL, *literal = NULL, *name = NULL, *unauthorized = NULL;
  g_autofree char *cred_a = NULL, *cred_b = NULL, *denial = NULL;
  g_autofree char *relayed = NULL, *stray = NULL, *named_got = NULL;
  static const char *const b_targets[] = { "tcp:conformance-peer.invalid:443", NULL };
  Echo echo = { .fd = -1 }, other = { .fd = -1 }, named = { .fd = -1 };
  Side a = { .id = "conformance-listen:a" }, b = { .id = "conformance-listen-b" };
  guint32 address_guarantee = 0;
  void *route;

  if (!SBX_ABI_HAS (g->vt, SbxEgressVTableV1, serve_listeners) || g->vt->serve_listeners == NULL)
    {
      RECORD (g, "listeners", SBX_CONFORMANCE_SKIP,
              "no serve_listeners slot: the host closes the DNS stub and forwarders a backend makes for a run, "
              "so proxy-unaware clients (git://, ssh, database clients, plain sockets) will have no route");
      return;
    }
  route = sbx_conformance_egress_start_route (g, "direct", &fingerprint, &address_guarantee, &message);
  if (route == NULL)
    {
      RECORD (g, "listeners", SBX_CONFORMANCE_SKIP, "no direct route to try: %s", message);
      return;
    }
  if (!sbx_conformance_echo_start (&echo) || !sbx_conformance_echo_start (&other)
      || !sbx_conformance_echo_start (&named))
    {
      RECORD (g, "listeners-serve", SBX_CONFORMANCE_FAIL, "cannot listen on 127.0.0.1: %s", g_strerror (errno));
      goto out;
    }
  literal = g_strdup_printf ("tcp:127.0.0.1:%u", echo.port);
  name = g_strdup_printf ("tcp:localhost:%u", named.port);
  unauthorized = g_strdup_printf ("tcp:127.0.0.1:%u", other.port);
  {
    const char *a_targets[] = { literal, name, NULL };

    cred_a = sbx_conformance_egress_authorize (g, route, a.id, a_targets);
    cred_b = sbx_conformance_egress_authorize (g, route, b.id, b_targets);
  }
  if (cred_a == NULL || cred_b == NULL)
    {
      RECORD (g, "listeners-serve", SBX_CONFORMANCE_FAIL, "authorize failed for the two executions");
      goto out;
    }
  if (!side_add (&a, SBX_LISTEN_DNS_UDP, INADDR_LOOPBACK, NULL)
      || !side_add (&a, SBX_LISTEN_FORWARD, INADDR_LOOPBACK, literal)
      || !side_add (&a, SBX_LISTEN_FORWARD, LOOPBACK_NAME_A, name)
      || !side_add (&a, SBX_LISTEN_FORWARD, INADDR_LOOPBACK, unauthorized)
      || !side_add (&b, SBX_LISTEN_DNS_UDP, INADDR_LOOPBACK, NULL)
      || !side_add (&b, SBX_LISTEN_FORWARD, LOOPBACK_NAME_B, b_targets[0]))
    {
      RECORD (g, "listeners-serve", SBX_CONFORMANCE_FAIL, "cannot bind the listeners on the loopback: %s",
              g_strerror (errno));
      side_close (&a);
      side_close (&b);
      goto out;
    }
  {
    g_autofree char *message_b = NULL;
    gboolean served_a = side_serve (g, route, &a, &message);
    gboolean served_b = side_serve (g, route, &b, &message_b);

    if (!served_a || !served_b)
      {
        RECORD (g, "listeners-serve", SBX_CONFORMANCE_FAIL, "serve_listeners refused a valid list: %s",
                !served_a ? message : message_b);
        goto out;
      }
    RECORD (g, "listeners-serve", SBX_CONFORMANCE_PASS, "two executions' stubs and forwarders served");
  }

  relayed = forward_probe (a.addresses[A_LITERAL], a.ports[A_LITERAL]);
  RECORD (g, "listeners-forward-approved", g_strcmp0 (relayed, "conform") == 0
          ? SBX_CONFORMANCE_PASS : SBX_CONFORMANCE_FAIL, "the forwarder for %s %s", literal,
          relayed == NULL ? "refused the connection" : g_strcmp0 (relayed, "conform") == 0
          ? "relays byte for byte" : "did not echo");

  stray = forward_probe (a.addresses[A_UNAUTHORIZED], a.ports[A_UNAUTHORIZED]);
  RECORD (g, "listeners-forward-unauthorized", (stray == NULL || stray[0] == '\0')
          && g_atomic_int_get (&other.accepted) == 0 ? SBX_CONFORMANCE_PASS : SBX_CONFORMANCE_FAIL,
          "a forwarder for %s, which the execution was not authorized for: %zu bytes relayed, the server saw "
          "%d connections", unauthorized, stray != NULL ? strlen (stray) : 0, g_atomic_int_get (&other.accepted));

  case_dns (g, &a, &b);

  named_got = forward_probe (a.addresses[A_NAME], a.ports[A_NAME]);
  if (!address_guarantee)
    RECORD (g, "listeners-name-non-public", SBX_CONFORMANCE_SKIP,
            "the route does not claim the address guarantee (names resolving to non-public addresses refused)");
  else
    RECORD (g, "listeners-name-non-public", (named_got == NULL || named_got[0] == '\0')
            && g_atomic_int_get (&named.accepted) == 0 ? SBX_CONFORMANCE_PASS : SBX_CONFORMANCE_FAIL,
            "the forwarder for %s (a name resolving to non-public addresses): %zu bytes relayed, the server "
            "saw %d connections", name, named_got != NULL ? strlen (named_got) : 0,
            g_atomic_int_get (&named.accepted));

  case_unknown_kind (g, route, literal);
  case_revoke (g, route, &a, &b, unauthorized);
  g->vt->revoke (g->ctx, route, b.id, &denial);

out:
  g->vt->stop (g->ctx, route);
  sbx_conformance_echo_stop (&echo);
  sbx_conformance_echo_stop (&other);
  sbx_conformance_echo_stop (&named);
}
