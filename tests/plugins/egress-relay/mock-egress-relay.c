/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mock-egress-relay: a vendor's egress plugin, built against the ABI header
 * only (no GLib), proving the seam: the host starts its route, authorizes
 * each run, hands it the listener the backend made in the run's sandbox and
 * revokes the run at its end.
 *
 * Its proxy listener reaches nothing: every connection on a served listener
 * is answered with one HTTP response whose body names what the plugin knows
 * about the connection's execution ("mock-egress-relay EXEC targets=...
 * served=N"), so a test inside the sandbox sees which listener it reached.
 * The route "direct" has upstream's direct fingerprint; any other config
 * gets a wrong one, which the host must refuse.
 *
 * serve_listeners is implemented minimally but honestly, as a vendor would
 * start (one thread per execution polls its sockets):
 *  - a FORWARD relays, byte for byte, to its target when the execution was
 *    authorized for exactly that target and the target is an IPv4 literal
 *    outside 169.254.0.0/16 (the metadata endpoints), a non-public one only
 *    when the approval names it (it always does here: every target is
 *    matched exactly, except with "every target", where only public
 *    literals pass).  The mock has no resolver that checks address classes,
 *    so it never dials a name: a name's forwarder refuses every connection
 *    (fail closed) and says so in the denial.  An unauthorized target is
 *    refused and recorded;
 *  - the DNS_UDP socket answers, for that execution only, each of its
 *    IPv4 FORWARDs' host names with the forwarder's address (A; other
 *    types get an empty NOERROR), REFUSED for every other name or class,
 *    FORMERR for a malformed query (a compression pointer too: a query's
 *    one name never needs one), NOTIMP for other opcodes, nothing for a
 *    response;
 *  - revoke stops the execution's thread, which closes its sockets and
 *    tunnels.
 * Every refusal of a forwarder also goes to the host's denial sink
 * (watch_denials), until revoke.
 * Revoke returns the first denial of the execution's forwarders, or else
 * the made-up "tcp:mock.invalid:1 (mock denial of EXEC)": this mock does
 * not check the proxy credentials, and sbx-conformance must say so.
 *
 * With SBX_MOCK_EGRESS_RELAY_LISTENERS=lax in the environment when a route
 * starts, its listeners are deliberately broken, so that each listeners
 * case of sbx-conformance is seen to fail: every FORWARD relays to its
 * target whether the execution was authorized for it or not, names are
 * resolved and dialled with no
 * address-class check, no denial is recorded, the stub answers any name
 * that is not its own with the first forwarder's address and after a
 * malformed query answers nothing more (as a parser that wedged), and
 * revoke leaves the listeners open until stop.  Its own names are still
 * answered right and approved literals still relayed (the controls).
 */
#include "../mock-common.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#define MAX_EXECS   64
#define MAX_LISTENS 16
#define MAX_TUNNELS 16

typedef struct Listeners Listeners;

/* LOCKING: Route.lock protects every Exec field but the listener's thread
 * handles; it is never held across a join. */
typedef struct
{
  char      *id;
  char       targets[512];
  int        all;                 /* authorized for every target */
  int        listener;            /* -1 when none */
  int        served;
  pthread_t  thread;
  int        has_thread;
  char       denial[300];         /* the first denial of a forwarder; "" when none */
  Listeners *listeners;           /* (nullable) what serve_listeners took */
  SbxEgressDenialSinkV1 sink;     /* watch_denials: every forwarder refusal; denied NULL: none */
} Exec;

typedef struct
{
  const SbxHostV1 *host;
  pthread_mutex_t  lock;
  int              lax;           /* SBX_MOCK_EGRESS_RELAY_LISTENERS=lax: see the top */
  Exec             execs[MAX_EXECS];
  Listeners       *leaked[MAX_EXECS];   /* lax: revoked but left open until stop */
} Route;

static SbxEgressStartFunc relay_start;
static SbxEgressAuthorizeFunc relay_authorize;
static SbxEgressServeFunc relay_serve;
static SbxEgressRevokeFunc relay_revoke;
static SbxEgressStopFunc relay_stop;
static SbxEgressServeListenersFunc relay_serve_listeners;
static SbxEgressWatchDenialsFunc relay_watch_denials;
static SbxPluginInitFunc relay_init;
static SbxPluginFiniFunc relay_fini;

static int32_t
relay_init (const SbxHostV1 *host,
            void           **plugin_ctx)
{
  if ((host->features & SBX_HOST_FEATURE_EGRESS_V1) == 0)
    return SBX_STATUS_UNAVAILABLE;
  return mock_init (host, plugin_ctx);
}

static void
relay_fini (void *plugin_ctx)
{
  mock_fini (plugin_ctx);
}

static char *
host_strdup (const SbxHostV1 *host,
             const char      *s)
{
  size_t len = strlen (s) + 1;
  char *copy = host->alloc (len);

  if (copy != NULL)
    memcpy (copy, s, len);
  return copy;
}

static int32_t
relay_start (void            *plugin_ctx,
             SbxHostCall     *call,
             const char      *route_config,
             void           **route_out,
             SbxEgressInfoV1 *info)
{
  const SbxHostV1 *host = ((MockCtx *) plugin_ctx)->host;
  Route *r = calloc (1, sizeof *r);

  if (r == NULL)
    return SBX_STATUS_NO_MEMORY;
  r->host = host;
  r->lax = getenv ("SBX_MOCK_EGRESS_RELAY_LISTENERS") != NULL
           && strcmp (getenv ("SBX_MOCK_EGRESS_RELAY_LISTENERS"), "lax") == 0;
  pthread_mutex_init (&r->lock, NULL);
  for (int i = 0; i < MAX_EXECS; i++)
    r->execs[i].listener = -1;
  info->target_guarantee = 1;
  info->address_guarantee = 1;
  info->fingerprint = host_strdup (host, strcmp (route_config, "direct") == 0
                                         ? "route-v1:80b26a4527e3e2a376fba2710f15e5810847af6c0762b3ba2e68ab7417f6c09d"
                                         : "route-v1:not-the-route-you-gave-me");
  *route_out = r;
  return SBX_STATUS_OK;
}

static Exec *
find (Route      *r,
      const char *id)
{
  for (int i = 0; i < MAX_EXECS; i++)
    if (r->execs[i].id != NULL && strcmp (r->execs[i].id, id) == 0)
      return &r->execs[i];
  return NULL;
}

static int32_t
relay_authorize (void              *plugin_ctx,
                 SbxHostCall       *call,
                 void              *route,
                 const char        *execution_id,
                 const char *const *targets,
                 char             **credential_out)
{
  Route *r = route;
  Exec *e = NULL;

  pthread_mutex_lock (&r->lock);
  if (find (r, execution_id) != NULL)
    {
      pthread_mutex_unlock (&r->lock);
      r->host->set_error (call, SBX_STATUS_INVALID, "mock-egress-relay: execution already authorized");
      return SBX_STATUS_INVALID;
    }
  for (int i = 0; i < MAX_EXECS && e == NULL; i++)
    if (r->execs[i].id == NULL)
      e = &r->execs[i];
  if (e == NULL)
    {
      pthread_mutex_unlock (&r->lock);
      r->host->set_error (call, SBX_STATUS_FAILED, "mock-egress-relay: too many executions");
      return SBX_STATUS_FAILED;
    }
  e->id = strdup (execution_id);
  e->targets[0] = '\0';
  e->denial[0] = '\0';
  memset (&e->sink, 0, sizeof e->sink);
  e->all = targets == NULL;
  if (targets == NULL)
    snprintf (e->targets, sizeof e->targets, "all");
  for (size_t i = 0; targets != NULL && targets[i] != NULL; i++)
    {
      size_t used = strlen (e->targets);

      snprintf (e->targets + used, sizeof e->targets - used, "%s%s", used > 0 ? "," : "", targets[i]);
    }
  pthread_mutex_unlock (&r->lock);
  *credential_out = host_strdup (r->host, "mock-credential");
  return SBX_STATUS_OK;
}

typedef struct
{
  Route *route;
  Exec  *exec;
  int    fd;
} ServeArg;

/* Answers every connection on the listener until it is shut down. */
static void *
serve_thread (void *data)
{
  ServeArg *a = data;

  for (;;)
    {
      char body[800], response[1024];
      int c = accept (a->fd, NULL, NULL);
      int n;

      if (c < 0 && errno == EINTR)
        continue;
      if (c < 0)
        break;
      pthread_mutex_lock (&a->route->lock);
      a->exec->served++;
      snprintf (body, sizeof body, "mock-egress-relay %s targets=%s served=%d\n", a->exec->id,
                a->exec->targets, a->exec->served);
      pthread_mutex_unlock (&a->route->lock);
      n = snprintf (response, sizeof response,
                    "HTTP/1.0 200 OK\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n%s", strlen (body), body);
      (void) !write (c, response, (size_t) n);
      shutdown (c, SHUT_WR);
      close (c);
    }
  free (a);
  return NULL;
}

static int32_t
relay_serve (void        *plugin_ctx,
             SbxHostCall *call,
             void        *route,
             const char  *execution_id,
             int32_t      listen_fd)
{
  Route *r = route;
  ServeArg *a;
  Exec *e;

  pthread_mutex_lock (&r->lock);
  e = execution_id != NULL ? find (r, execution_id) : NULL;
  if (e == NULL || e->listener >= 0)
    {
      pthread_mutex_unlock (&r->lock);
      close (listen_fd);
      r->host->set_error (call, SBX_STATUS_INVALID, "mock-egress-relay: serve needs one authorized execution");
      return SBX_STATUS_INVALID;
    }
  a = calloc (1, sizeof *a);
  a->route = r;
  a->exec = e;
  a->fd = listen_fd;
  e->listener = listen_fd;
  e->has_thread = pthread_create (&e->thread, NULL, serve_thread, a) == 0;
  pthread_mutex_unlock (&r->lock);
  if (!e->has_thread)
    {
      free (a);
      return SBX_STATUS_FAILED;
    }
  return SBX_STATUS_OK;
}

/* ------------------------------------------------------------------------- */
/* serve_listeners: the DNS stub and the forwarders                           */
/* ------------------------------------------------------------------------- */

typedef struct
{
  uint32_t kind;                  /* SBX_LISTEN_DNS_UDP or SBX_LISTEN_FORWARD */
  int      fd;
  uint32_t family;
  uint8_t  address[16];
  char     target[300];           /* FORWARD: "tcp:HOST:PORT" */
  char     host[256];             /* FORWARD: HOST, lower case */
  char     port[8];
} Served;

typedef struct
{
  int client;                     /* -1: the slot is free */
  int server;
  int up;                         /* client -> server still open */
  int down;                       /* server -> client still open */
} Tunnel;

struct Listeners
{
  Route    *route;
  Exec     *exec;                 /* never touched in lax mode (it may be reused) */
  int       lax;
  int       wedged;               /* lax: a malformed query was seen */
  Served    served[MAX_LISTENS];
  int       n_served;
  Tunnel    tunnels[MAX_TUNNELS];
  int       wake[2];              /* a byte on wake[1] ends the thread */
  pthread_t thread;
};

static int
write_all (int         fd,
           const void *data,
           size_t      len)
{
  const char *p = data;

  while (len > 0)
    {
      ssize_t n = send (fd, p, len, MSG_NOSIGNAL);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return -1;
      p += n;
      len -= (size_t) n;
    }
  return 0;
}

/* @target is one of @e's approved targets, matched exactly. */
static int
exec_names (const Exec *e,
            const char *target)
{
  size_t len = strlen (target);

  for (const char *p = e->targets; !e->all && *p != '\0';)
    {
      const char *comma = strchr (p, ',');
      size_t n = comma != NULL ? (size_t) (comma - p) : strlen (p);

      if (n == len && strncmp (p, target, n) == 0)
        return 1;
      p += n + (comma != NULL);
    }
  return 0;
}

/* The first denial for revoke, and every one to the host's sink (under
 * the route's lock, which revoke takes to drop the sink: no report after
 * revoke returns).  @approvable: approving @target would have opened it. */
static void
record_denial_as (Listeners  *l,
                  const char *target,
                  const char *reason,
                  int         approvable)
{
  if (l->lax)
    return;
  pthread_mutex_lock (&l->route->lock);
  if (l->exec->denial[0] == '\0')
    snprintf (l->exec->denial, sizeof l->exec->denial, "%s (%s)", target, reason);
  if (l->exec->sink.denied != NULL)
    {
      SbxEgressDenialV1 denial = { 0 };

      denial.struct_size = sizeof denial;
      denial.operation = SBX_ABI_DENIAL_CONNECT;
      denial.flags = approvable ? SBX_ABI_DENIAL_APPROVABLE : 0;
      denial.target = target;
      denial.mechanism = "forwarder";
      denial.reason = reason;
      l->exec->sink.denied (l->exec->sink.data, &denial);
    }
  pthread_mutex_unlock (&l->route->lock);
}

static void
record_denial (Listeners  *l,
               const char *target,
               const char *reason)
{
  record_denial_as (l, target, reason, strcmp (reason, "not approved for this execution") == 0);
}

/* Public enough to dial without the approval naming it: not 0/8, 10/8,
 * 100.64/10, 127/8, 169.254/16, 172.16/12, 192.168/16 or 224/3. */
static int
ipv4_public (uint32_t a)
{
  return !((a >> 24) == 0 || (a >> 24) == 10 || (a >> 22) == (100u << 2 | 1) || (a >> 24) == 127 ||
           (a >> 16) == (169u << 8 | 254) || (a >> 20) == (172u << 4 | 1) || (a >> 16) == (192u << 8 | 168) ||
           (a >> 29) == 7);
}

static int
connect_to (const struct sockaddr *to,
            socklen_t              len)
{
  struct timeval tv = { 5, 0 };
  int fd = socket (to->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

  if (fd < 0)
    return -1;
  setsockopt (fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (connect (fd, to, len) != 0)
    {
      close (fd);
      return -1;
    }
  return fd;
}

/* The server side of one forwarded connection, or -1 (refused, recorded). */
static int
forward_dial (Listeners    *l,
              const Served *s)
{
  struct sockaddr_in to = { .sin_family = AF_INET };
  int named = 0, allowed;

  if (!l->lax)
    {
      pthread_mutex_lock (&l->route->lock);
      named = exec_names (l->exec, s->target);
      allowed = named || l->exec->all;
      pthread_mutex_unlock (&l->route->lock);
      if (!allowed)
        {
          record_denial (l, s->target, "not approved for this execution");
          return -1;
        }
    }
  if (inet_pton (AF_INET, s->host, &to.sin_addr) != 1)
    {
      struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
      struct addrinfo *res = NULL;
      int fd = -1;

      if (!l->lax)
        {
          record_denial (l, s->target, "mock-egress-relay dials IPv4 literals only: it has no resolver that "
                                       "checks address classes");
          return -1;
        }
      /* lax: resolved and dialled with no address-class check */
      if (getaddrinfo (s->host, s->port, &hints, &res) == 0 && res != NULL)
        fd = connect_to (res->ai_addr, res->ai_addrlen);
      if (res != NULL)
        freeaddrinfo (res);
      return fd;
    }
  if (!l->lax)
    {
      uint32_t a = ntohl (to.sin_addr.s_addr);

      if ((a >> 16) == (169u << 8 | 254))
        {
          record_denial (l, s->target, "a link-local address, where the metadata endpoints are: never reachable");
          return -1;
        }
      if (!ipv4_public (a) && !named)
        {
          record_denial (l, s->target, "a non-public address the approval does not name exactly");
          return -1;
        }
    }
  to.sin_port = htons ((uint16_t) atoi (s->port));
  return connect_to ((struct sockaddr *) &to, sizeof to);
}

static void
forward_accept (Listeners    *l,
                const Served *s)
{
  int client = accept4 (s->fd, NULL, NULL, SOCK_CLOEXEC);
  int server;

  if (client < 0)
    return;
  server = forward_dial (l, s);
  for (int i = 0; server >= 0 && i < MAX_TUNNELS; i++)
    if (l->tunnels[i].client < 0)
      {
        l->tunnels[i] = (Tunnel) { .client = client, .server = server, .up = 1, .down = 1 };
        return;
      }
  if (server >= 0)
    close (server);
  close (client);
}

/* One direction of @t is readable: copies what is there, or passes on EOF. */
static void
tunnel_pump (Tunnel *t,
             int     upward)
{
  char buf[4096];
  int from = upward ? t->client : t->server, to = upward ? t->server : t->client;
  ssize_t n = recv (from, buf, sizeof buf, MSG_DONTWAIT);

  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return;
  if (n <= 0 || write_all (to, buf, (size_t) n) != 0)
    {
      shutdown (to, SHUT_WR);
      *(upward ? &t->up : &t->down) = 0;
    }
  if (!t->up && !t->down)
    {
      close (t->client);
      close (t->server);
      t->client = t->server = -1;
    }
}

/* Reads the question's name (labels only) at @packet + 12 into @lower;
 * the offset after it, or 0 when malformed. */
static size_t
dns_name (const uint8_t *packet,
          size_t         len,
          char          *lower,
          size_t         size)
{
  size_t pos = 12, text = 0, wire = 0;

  for (;;)
    {
      uint8_t n;

      if (pos >= len)
        return 0;
      n = packet[pos];
      if (n == 0)
        break;
      if ((n & 0xc0) != 0 || pos + 1 + n > len || (wire += 1u + n) + 1 > 255 || text + n + 2 > size)
        return 0;
      if (text > 0)
        lower[text++] = '.';
      for (uint8_t i = 0; i < n; i++)
        {
          uint8_t ch = packet[pos + 1 + i];

          if (ch <= 0x20 || ch >= 0x7f || ch == '.')
            return 0;
          lower[text++] = (char) (ch >= 'A' && ch <= 'Z' ? ch + ('a' - 'A') : ch);
        }
      pos += 1u + n;
    }
  lower[text] = '\0';
  return pos + 1;
}

/* The answer to @packet in @out (at least 512 bytes); its length, or 0 for
 * no answer. */
static size_t
dns_answer (Listeners     *l,
            const uint8_t *packet,
            size_t         len,
            uint8_t       *out)
{
  char name[256];
  const uint8_t *address = NULL;
  unsigned rcode = 0;
  size_t end, n = 12;

  if (len < 12 || (packet[2] & 0x80) != 0)
    return 0;                     /* a runt, or a response: never answered */
  memset (out, 0, 12);
  out[0] = packet[0];
  out[1] = packet[1];
  out[2] = (uint8_t) (0x80 | 0x04 | (packet[2] & 0x01));   /* QR, AA, RD as asked */
  out[3] = 0x80;                                            /* RA */
  if (((packet[2] >> 3) & 0x0f) != 0)
    {
      out[3] |= 4;                /* NOTIMP: only standard queries */
      return 12;
    }
  end = dns_name (packet, len, name, sizeof name);
  if (packet[4] != 0 || packet[5] != 1 || packet[6] != 0 || packet[7] != 0 || packet[8] != 0 ||
      packet[9] != 0 || packet[10] != 0 || packet[11] > 1 || end == 0 || end + 4 > len)
    {
      out[3] |= 1;                /* FORMERR */
      l->wedged = l->lax;
      return 12;
    }
  for (int i = 0; i < l->n_served && address == NULL; i++)
    {
      const Served *s = &l->served[i];
      struct in_addr literal;

      /* an IP literal target is not a name the stub knows */
      if (s->kind == SBX_LISTEN_FORWARD && s->family == SBX_LISTEN_IPV4 && strcmp (s->host, name) == 0 &&
          inet_pton (AF_INET, s->host, &literal) != 1)
        address = s->address;
    }
  for (int i = 0; l->lax && i < l->n_served && address == NULL; i++)
    if (l->served[i].kind == SBX_LISTEN_FORWARD && l->served[i].family == SBX_LISTEN_IPV4)
      address = l->served[i].address;
  if (address == NULL || packet[end + 2] != 0 || packet[end + 3] != 1)
    rcode = 5;                    /* REFUSED: not one of its names, or not class IN */
  out[3] |= (uint8_t) rcode;
  out[5] = 1;
  memcpy (out + n, packet + 12, end + 4 - 12);
  n += end + 4 - 12;
  if (rcode == 0 && packet[end] == 0 && packet[end + 1] == 1)
    {
      static const uint8_t rr[12] = { 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4 };

      out[7] = 1;
      memcpy (out + n, rr, sizeof rr);
      memcpy (out + n + sizeof rr, address, 4);
      n += sizeof rr + 4;
    }
  return n;
}

static void
dns_readable (Listeners    *l,
              const Served *s)
{
  uint8_t packet[512], out[600];
  struct sockaddr_storage from;
  socklen_t from_len = sizeof from;
  ssize_t n = recvfrom (s->fd, packet, sizeof packet, MSG_DONTWAIT | MSG_TRUNC, (struct sockaddr *) &from,
                        &from_len);
  size_t answer;

  if (n < 0 || (size_t) n > sizeof packet || l->wedged)
    return;                       /* nothing, or longer than a UDP query may be: dropped */
  answer = dns_answer (l, packet, (size_t) n, out);
  if (answer > 0)
    (void) sendto (s->fd, out, answer, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *) &from, from_len);
}

static void *
listeners_thread (void *data)
{
  Listeners *l = data;

  for (;;)
    {
      struct pollfd p[1 + MAX_LISTENS + 2 * MAX_TUNNELS];
      int n = 0;

      p[n++] = (struct pollfd) { .fd = l->wake[0], .events = POLLIN };
      for (int i = 0; i < l->n_served; i++)
        p[n++] = (struct pollfd) { .fd = l->served[i].fd, .events = POLLIN }
      ;
      for (int i = 0; i < MAX_TUNNELS; i++)
        {
          Tunnel *t = &l->tunnels[i];

          p[n++] = (struct pollfd) { .fd = t->client >= 0 && t->up ? t->client : -1, .events = POLLIN };
          p[n++] = (struct pollfd) { .fd = t->client >= 0 && t->down ? t->server : -1, .events = POLLIN };
        }
      if (poll (p, (nfds_t) n, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }
      if (p[0].revents != 0)
        break;
      for (int i = 0; i < l->n_served; i++)
        if (p[1 + i].revents != 0)
          {
            if (l->served[i].kind == SBX_LISTEN_DNS_UDP)
              dns_readable (l, &l->served[i]);
            else
              forward_accept (l, &l->served[i]);
          }
      for (int i = 0; i < MAX_TUNNELS; i++)
        {
          Tunnel *t = &l->tunnels[i];

          if (t->client >= 0 && p[1 + l->n_served + 2 * i].revents != 0)
            tunnel_pump (t, 1);
          if (t->client >= 0 && p[2 + l->n_served + 2 * i].revents != 0)
            tunnel_pump (t, 0);
        }
    }
  return NULL;
}

/* Ends @l's thread, then closes every socket and tunnel of it. */
static void
listeners_free (Listeners *l)
{
  if (l == NULL)
    return;
  (void) !write (l->wake[1], "x", 1);
  pthread_join (l->thread, NULL);
  for (int i = 0; i < l->n_served; i++)
    close (l->served[i].fd);
  for (int i = 0; i < MAX_TUNNELS; i++)
    if (l->tunnels[i].client >= 0)
      {
        close (l->tunnels[i].client);
        close (l->tunnels[i].server);
      }
  close (l->wake[0]);
  close (l->wake[1]);
  free (l);
}

static int
socket_type (int fd)
{
  int type = -1;
  socklen_t len = sizeof type;

  if (getsockopt (fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0)
    return -1;
  return type;
}

/* Checks one entry; 1 when the mock serves it, -1 for a kind it does not
 * know (kinds are added over time: such a socket is closed and the others
 * served, as the ABI asks), 0 with *why set when the entry is malformed. */
static int
served_from (Served            *s,
             const SbxListenV1 *entry,
             int                fd,
             const char       **why)
{
  const char *colon;
  size_t host_len;

  memset (s, 0, sizeof *s);
  s->fd = fd;
  if (entry->struct_size < SBX_LISTEN_V1_MIN_SIZE)
    return *why = "struct_size below SBX_LISTEN_V1_MIN_SIZE", 0;
  s->kind = entry->kind;
  s->family = entry->family;
  memcpy (s->address, entry->address, sizeof s->address);
  if (entry->kind == SBX_LISTEN_DNS_UDP)
    return socket_type (fd) == SOCK_DGRAM ? 1 : (*why = "the DNS_UDP socket is not a UDP socket", 0);
  if (entry->kind != SBX_LISTEN_FORWARD)
    return -1;
  if (socket_type (fd) != SOCK_STREAM)
    return *why = "a FORWARD socket is not a TCP listener", 0;
  colon = entry->target != NULL ? strrchr (entry->target, ':') : NULL;
  if (colon == NULL || strncmp (entry->target, "tcp:", 4) != 0 || colon <= entry->target + 4 ||
      strlen (entry->target) >= sizeof s->target || strlen (colon + 1) >= sizeof s->port)
    return *why = "a FORWARD target is not tcp:HOST:PORT", 0;
  host_len = (size_t) (colon - (entry->target + 4));
  snprintf (s->target, sizeof s->target, "%s", entry->target);
  snprintf (s->port, sizeof s->port, "%s", colon + 1);
  memcpy (s->host, entry->target + 4, host_len);
  s->host[host_len] = '\0';
  for (char *c = s->host; *c != '\0'; c++)
    if (*c >= 'A' && *c <= 'Z')
      *c = (char) (*c + ('a' - 'A'));
  return 1;
}

static int32_t
relay_serve_listeners (void              *plugin_ctx,
                       SbxHostCall       *call,
                       void              *route,
                       const char        *execution_id,
                       const SbxListenV1 *listens,
                       const int32_t     *fds,
                       uint32_t           n_listens)
{
  Route *r = route;
  const char *why = NULL;
  Listeners *l = calloc (1, sizeof *l);
  char fds_closed[MAX_LISTENS] = { 0 };
  Exec *e;

  if (l != NULL)
    l->wake[0] = l->wake[1] = -1;
  if (l == NULL || n_listens > MAX_LISTENS || (n_listens > 0 && (listens == NULL || fds == NULL)))
    why = "no listener list, or more listeners than the mock serves";
  for (uint32_t i = 0; why == NULL && i < n_listens; i++)
    {
      int known;

      if (fds[i] < 0)
        continue;
      known = served_from (&l->served[l->n_served], &listens[i], fds[i], &why);
      if (known == 0)
        break;
      if (known > 0)
        l->n_served++;
      else
        {
          close (fds[i]);   /* a kind the mock does not know */
          fds_closed[i] = 1;
        }
    }
  if (why == NULL && pipe2 (l->wake, O_CLOEXEC) != 0)
    why = "pipe2 failed";
  pthread_mutex_lock (&r->lock);
  e = execution_id != NULL ? find (r, execution_id) : NULL;
  if (why == NULL && (e == NULL || e->listeners != NULL))
    why = "serve_listeners needs one authorized execution, once";
  if (why == NULL)
    {
      l->route = r;
      l->exec = e;
      l->lax = r->lax;
      for (int i = 0; i < MAX_TUNNELS; i++)
        l->tunnels[i].client = l->tunnels[i].server = -1;
      if (pthread_create (&l->thread, NULL, listeners_thread, l) == 0)
        e->listeners = l;
      else
        why = "pthread_create failed";
    }
  pthread_mutex_unlock (&r->lock);
  if (why != NULL)
    {
      char message[200];

      /* every fd is ours, also on failure */
      for (uint32_t i = 0; fds != NULL && i < n_listens; i++)
        if (fds[i] >= 0 && (i >= MAX_LISTENS || !fds_closed[i]))
          close (fds[i]);
      if (l != NULL && l->wake[0] >= 0)
        {
          close (l->wake[0]);
          close (l->wake[1]);
        }
      free (l);
      snprintf (message, sizeof message, "mock-egress-relay: serve_listeners: %s", why);
      r->host->set_error (call, SBX_STATUS_INVALID, message);
      return SBX_STATUS_INVALID;
    }
  return SBX_STATUS_OK;
}

/* Ends @e's listener and thread (lock not held: the thread takes it). */
static void
exec_end (Exec *e)
{
  if (e->listener >= 0)
    shutdown (e->listener, SHUT_RDWR);   /* accept() returns */
  if (e->has_thread)
    pthread_join (e->thread, NULL);
  if (e->listener >= 0)
    close (e->listener);
  e->listener = -1;
  e->has_thread = 0;
}

/* Ends @e's stub and forwarders (lock not held), or in lax mode leaves them
 * open until the route stops. */
static void
exec_end_listeners (Route *r,
                    Exec  *e)
{
  Listeners *l;

  pthread_mutex_lock (&r->lock);
  l = e->listeners;
  e->listeners = NULL;
  for (int i = 0; l != NULL && l->lax && i < MAX_EXECS; i++)
    if (r->leaked[i] == NULL)
      {
        r->leaked[i] = l;
        l = NULL;
      }
  pthread_mutex_unlock (&r->lock);
  listeners_free (l);
}

static int32_t
relay_revoke (void       *plugin_ctx,
              void       *route,
              const char *execution_id,
              char      **denial_out)
{
  Route *r = route;
  char denial[300];
  Exec *e;

  *denial_out = NULL;
  pthread_mutex_lock (&r->lock);
  e = find (r, execution_id);
  if (e != NULL)
    memset (&e->sink, 0, sizeof e->sink);   /* no report after revoke */
  pthread_mutex_unlock (&r->lock);
  if (e == NULL)
    return SBX_STATUS_INVALID;
  exec_end (e);
  exec_end_listeners (r, e);
  pthread_mutex_lock (&r->lock);
  if (e->denial[0] != '\0')
    snprintf (denial, sizeof denial, "%s", e->denial);
  else
    snprintf (denial, sizeof denial, "tcp:mock.invalid:1 (mock denial of %s)", execution_id);
  pthread_mutex_unlock (&r->lock);
  *denial_out = host_strdup (r->host, denial);
  pthread_mutex_lock (&r->lock);
  free (e->id);
  e->id = NULL;
  pthread_mutex_unlock (&r->lock);
  return SBX_STATUS_OK;
}

static int32_t
relay_watch_denials (void                        *plugin_ctx,
                     void                        *route,
                     const char                  *execution_id,
                     const SbxEgressDenialSinkV1 *sink)
{
  Route *r = route;
  Exec *e;

  if (r == NULL || sink == NULL || sink->struct_size < SBX_EGRESS_DENIAL_SINK_V1_MIN_SIZE
      || sink->denied == NULL)
    return SBX_STATUS_INVALID;
  pthread_mutex_lock (&r->lock);
  e = find (r, execution_id);
  if (e != NULL)
    {
      e->sink.struct_size = sizeof e->sink;
      e->sink.denied = sink->denied;
      e->sink.data = sink->data;
    }
  pthread_mutex_unlock (&r->lock);
  return e != NULL ? SBX_STATUS_OK : SBX_STATUS_INVALID;
}

static void
relay_stop (void *plugin_ctx,
            void *route)
{
  Route *r = route;

  for (int i = 0; i < MAX_EXECS; i++)
    if (r->execs[i].id != NULL)
      {
        exec_end (&r->execs[i]);
        exec_end_listeners (r, &r->execs[i]);
        free (r->execs[i].id);
      }
  for (int i = 0; i < MAX_EXECS; i++)
    listeners_free (r->leaked[i]);
  pthread_mutex_destroy (&r->lock);
  free (r);
}

static const SbxEgressVTableV1 relay = {
  .struct_size = sizeof (SbxEgressVTableV1),
  .start = relay_start,
  .authorize = relay_authorize,
  .serve = relay_serve,
  .revoke = relay_revoke,
  .stop = relay_stop,
  .serve_listeners = relay_serve_listeners,
  .watch_denials = relay_watch_denials,
};

static const SbxPluginExtension extensions[] = {
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_EGRESS, .name = "mock-egress-relay",
    .priority = 0, .vtable = &relay },
  { 0 },
};

SBX_PLUGIN_DEFINE (mock_egress_relay, "0.1.0", "LGPL-2.1-or-later", SBX_HOST_FEATURE_EGRESS_V1,
                   relay_init, relay_fini, extensions)
