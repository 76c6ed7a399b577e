/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Conformance cases for egress extensions: what the host relies on when it
 * routes a run through a vendor's plugin (core/sdk/sbx/sbx-plugin-abi.h, "Egress
 * extension").  The plugin (already accepted by the loader) is opened once
 * more and driven through its vtable by a minimal host of our own, against
 * servers on this host's loopback only:
 *
 *  - start: "direct" and an upstream URL give upstream's fingerprints, and
 *    a password in the URL is never part of one (nor of an error);
 *  - authorize: a credential of [A-Za-z0-9_-], at most 256 bytes;
 *  - a listener served for one execution: without a credential 407, with
 *    the approved target 200 and a byte-exact tunnel (the positive
 *    control), another port 403 and no connection to it, another
 *    execution's credential 407, an unapproved non-public literal refused;
 *  - revoke: the first denial begins with the denied target; the
 *    credential is dead afterwards;
 *  - watch_denials (optional): the refused port was reported once to the
 *    host's sink, as an approvable CONNECT of that target;
 *  - serve_listeners, the DNS stub and forwarders of proxy-unaware
 *    clients: sbx-conformance-listeners.c.
 * Each case is one record in the egress-<extension> area.
 */
#include "sbx-conformance-egress-private.h"

#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

static void
host_set_error (SbxHostCall *call,
                int32_t      status,
                const char  *message)
{
  if (call == NULL || call->message[0] != '\0')
    return;
  call->status = status;
  g_strlcpy (call->message, message != NULL ? message : "(no message)", sizeof call->message);
}

static void
host_report (SbxHostCall *call,
             const char  *feature,
             uint32_t     status,
             const char  *detail)
{
}

static void
host_log (uint32_t    level,
          const char *domain,
          const char *message)
{
}

static void *
host_alloc (size_t size)
{
  return g_try_malloc (size != 0 ? size : 1);
}

static void
host_release (void *ptr)
{
  g_free (ptr);
}

static const SbxHostV1 conformance_host = {
  .struct_size = sizeof (SbxHostV1),
  .abi_version = SBX_PLUGIN_ABI_VERSION,
  /* EGRESS_LISTENERS: the listeners case hands serve_listeners sockets it
   * made on this host's loopback, as a backend would inside a sandbox. */
  .features = SBX_HOST_FEATURE_RULE_FDS | SBX_HOST_FEATURE_PROXY_LISTEN_FD | SBX_HOST_FEATURE_EGRESS_V1 |
              SBX_HOST_FEATURE_EGRESS_LISTENERS,
  .core_version = "conformance",
  .set_error = host_set_error,
  .report = host_report,
  .log = host_log,
  .alloc = host_alloc,
  .release = host_release,
};

/* ------------------------------------------------------------------------- */
/* Loopback helpers (blocking sockets with 10 s timeouts)                     */
/* ------------------------------------------------------------------------- */

int
sbx_conformance_bind_loopback (int      type,
                               guint32  address,
                               guint16 *port)
{
  struct sockaddr_in addr = { .sin_family = AF_INET };
  socklen_t len = sizeof addr;
  int fd = socket (AF_INET, type | SOCK_CLOEXEC, 0);

  addr.sin_addr.s_addr = htonl (address);
  if (fd < 0 || bind (fd, (struct sockaddr *) &addr, sizeof addr) < 0
      || (type == SOCK_STREAM && listen (fd, 64) < 0)
      || getsockname (fd, (struct sockaddr *) &addr, &len) < 0)
    {
      int saved = errno;

      if (fd >= 0)
        close (fd);
      errno = saved;
      return -1;
    }
  *port = ntohs (addr.sin_port);
  return fd;
}

static int
listen_loopback (guint16 *port)
{
  return sbx_conformance_bind_loopback (SOCK_STREAM, INADDR_LOOPBACK, port);
}

int
sbx_conformance_connect_loopback (guint32 address,
                                  guint16 port)
{
  struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons (port) };
  struct timeval tv = { 10, 0 };
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

  addr.sin_addr.s_addr = htonl (address);
  if (fd < 0)
    return -1;
  setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt (fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (connect (fd, (struct sockaddr *) &addr, sizeof addr) < 0)
    {
      int saved = errno;

      close (fd);
      errno = saved;
      return -1;
    }
  return fd;
}

gboolean
sbx_conformance_send_all (int         fd,
                          const char *data,
                          gsize       len)
{
  while (len > 0)
    {
      ssize_t n = send (fd, data, len, MSG_NOSIGNAL);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return FALSE;
      data += n;
      len -= (gsize) n;
    }
  return TRUE;
}

/* Reads a response head; its status, or 0. */
static guint
read_status (int fd)
{
  char head[8192];
  gsize used = 0;

  while (used < sizeof head - 1)
    {
      ssize_t n = recv (fd, head + used, 1, 0);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return 0;
      used++;
      head[used] = '\0';
      if (used >= 4 && strcmp (head + used - 4, "\r\n\r\n") == 0)
        break;
    }
  if (strncmp (head, "HTTP/1.", 7) != 0 || used < 12)
    return 0;
  return (guint) g_ascii_strtoull (head + 9, NULL, 10);
}

/* CONNECT @authority at @proxy_port with @auth ("id:cred" or NULL); the
 * status, and the socket in *out when it is 200. */
static guint
connect_request (guint16     proxy_port,
                 const char *authority,
                 const char *auth,
                 int        *out)
{
  g_autofree char *header = NULL;
  g_autofree char *request = NULL;
  int fd = sbx_conformance_connect_loopback (INADDR_LOOPBACK, proxy_port);
  guint status;

  *out = -1;
  if (fd < 0)
    return 0;
  if (auth != NULL)
    {
      g_autofree char *b64 = g_base64_encode ((const guchar *) auth, strlen (auth));

      header = g_strdup_printf ("Proxy-Authorization: Basic %s\r\n", b64);
    }
  request = g_strdup_printf ("CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s\r\n", authority, authority,
                             header != NULL ? header : "");
  if (!sbx_conformance_send_all (fd, request, strlen (request)))
    {
      close (fd);
      return 0;
    }
  status = read_status (fd);
  if (status == 200)
    *out = fd;
  else
    close (fd);
  return status;
}

static gpointer
echo_thread (gpointer data)
{
  Echo *e = data;

  for (;;)
    {
      int c = accept4 (e->fd, NULL, NULL, SOCK_CLOEXEC);
      char buf[4096];
      ssize_t n;

      if (c < 0 && errno == EINTR)
        continue;
      if (c < 0)
        return NULL;
      g_atomic_int_inc (&e->accepted);
      while ((n = recv (c, buf, sizeof buf, 0)) > 0)
        if (!sbx_conformance_send_all (c, buf, (gsize) n))
          break;
      close (c);
    }
}

gboolean
sbx_conformance_echo_start (Echo *e)
{
  e->fd = listen_loopback (&e->port);
  if (e->fd < 0)
    return FALSE;
  e->thread = g_thread_new ("conformance-echo", echo_thread, e);
  return TRUE;
}

void
sbx_conformance_echo_stop (Echo *e)
{
  if (e->fd < 0)
    return;
  shutdown (e->fd, SHUT_RDWR);
  g_thread_join (e->thread);
  close (e->fd);
  e->fd = -1;
}

/* ------------------------------------------------------------------------- */
/* Cases                                                                      */
/* ------------------------------------------------------------------------- */

#define RECORD EGRESS_RECORD

void *
sbx_conformance_egress_start_route (Egress      *g,
                                    const char  *config,
                                    char       **fingerprint,
                                    guint32     *address_guarantee,
                                    char       **message)
{
  SbxHostCall call = { 0 };
  SbxEgressInfoV1 info = { .struct_size = sizeof info };
  void *route = NULL;
  int32_t status = g->vt->start (g->ctx, &call, config, &route, &info);

  *fingerprint = info.fingerprint;
  if (address_guarantee != NULL)
    *address_guarantee = info.address_guarantee;
  *message = g_strdup (call.message);
  if (status != SBX_STATUS_OK)
    return NULL;
  return route;
}

static void
case_fingerprints (Egress *g)
{
  struct
  {
    const char *config;
    const char *route_url;   /* NULL: direct */
  } rows[] = {
    { "direct", NULL },
    { "http://conformance-user:conformance-pw0@proxy.invalid:8080", "http://proxy.invalid:8080" },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autofree char *fingerprint = NULL, *message = NULL;
      g_autoptr(SbxEgressRoute) expected = rows[i].route_url == NULL
                                           ? sbx_egress_route_new_direct ()
                                           : sbx_egress_route_new_upstream (rows[i].route_url, FALSE, NULL);
      void *route = sbx_conformance_egress_start_route (g, rows[i].config, &fingerprint, NULL, &message);
      const char *name = i == 0 ? "start-direct" : "start-upstream";

      if (route == NULL)
        RECORD (g, name, SBX_CONFORMANCE_FAIL, "start refused the route: %s", message);
      else if (g_strcmp0 (fingerprint, sbx_egress_route_get_fingerprint (expected)) != 0)
        RECORD (g, name, SBX_CONFORMANCE_FAIL, "fingerprint %s, expected %s (the host refuses such a route)",
                fingerprint != NULL ? fingerprint : "(none)", sbx_egress_route_get_fingerprint (expected));
      else if (strstr (fingerprint, "conformance-pw0") != NULL || strstr (fingerprint, "conformance-user") != NULL)
        RECORD (g, name, SBX_CONFORMANCE_FAIL, "the fingerprint carries the route's credentials");
      else
        RECORD (g, name, SBX_CONFORMANCE_PASS, "%s", fingerprint);
      if (route != NULL)
        g->vt->stop (g->ctx, route);
    }
  {
    g_autofree char *fingerprint = NULL, *message = NULL;
    void *route = sbx_conformance_egress_start_route (g, "socks5://conformance-user:conformance-pw0@proxy.invalid:1080", &fingerprint, NULL, &message);

    if (route != NULL)
      {
        RECORD (g, "start-refuses-socks5", SBX_CONFORMANCE_FAIL, "a socks5 route was started");
        g->vt->stop (g->ctx, route);
      }
    else if (message != NULL && strstr (message, "conformance-pw0") != NULL)
      RECORD (g, "start-refuses-socks5", SBX_CONFORMANCE_FAIL, "the error repeats the password: %s", message);
    else
      RECORD (g, "start-refuses-socks5", SBX_CONFORMANCE_PASS, "refused: %s", message);
  }
}

char *
sbx_conformance_egress_authorize (Egress            *g,
                                  void              *route,
                                  const char        *id,
                                  const char *const *targets)
{
  SbxHostCall call = { 0 };
  char *credential = NULL;

  if (g->vt->authorize (g->ctx, &call, route, id, targets, &credential) != SBX_STATUS_OK)
    {
      g_free (credential);
      return NULL;
    }
  return credential;
}

void
sbx_conformance_egress_revoke_denial (Egress     *g,
                                      const char *name,
                                      void       *route,
                                      const char *id,
                                      const char *denied_target)
{
  g_autofree char *denial = NULL;
  gsize len = strlen (denied_target);

  if (g->vt->revoke (g->ctx, route, id, &denial) != SBX_STATUS_OK)
    RECORD (g, name, SBX_CONFORMANCE_FAIL, "revoke of an authorized execution failed");
  else if (denial == NULL || !g_str_has_prefix (denial, denied_target) || (denial[len] != '\0' && denial[len] != ' '))
    RECORD (g, name, SBX_CONFORMANCE_FAIL, "the first denial is \"%s\", not %s [REASON]",
            denial != NULL ? denial : "(none)", denied_target);
  else
    RECORD (g, name, SBX_CONFORMANCE_PASS, "%s", denial);
}

/* watch_denials: what the plugin reported, from any of its threads. */
typedef struct
{
  GMutex     lock;
  GPtrArray *seen;   /* "OPERATION FLAGS TARGET MECHANISM" */
} Watched;

static void
watched_denied (void                    *data,
                const SbxEgressDenialV1 *denial)
{
  Watched *w = data;

  g_mutex_lock (&w->lock);
  if (denial != NULL && denial->struct_size >= SBX_EGRESS_DENIAL_V1_MIN_SIZE && w->seen->len < 1024)
    g_ptr_array_add (w->seen, g_strdup_printf ("%u %u %s %s", denial->operation, denial->flags,
                                               denial->target != NULL ? denial->target : "(null)",
                                               denial->mechanism != NULL ? denial->mechanism : "(null)"));
  g_mutex_unlock (&w->lock);
}

/* The optional watch_denials slot: the refusal of @denied_target (a port
 * the execution was not approved for) was reported once, as an approvable
 * CONNECT naming the canonical target and a mechanism.  Called after
 * revoke: nothing may arrive later, so the list is final. */
static void
check_watched (Egress     *g,
               Watched    *w,
               const char *denied_target)
{
  g_autofree char *expected = g_strdup_printf ("%u %u %s ", SBX_ABI_DENIAL_CONNECT, SBX_ABI_DENIAL_APPROVABLE,
                                               denied_target);
  guint matches = 0;

  g_mutex_lock (&w->lock);
  for (guint i = 0; i < w->seen->len; i++)
    if (g_str_has_prefix (w->seen->pdata[i], expected) && strlen (w->seen->pdata[i]) > strlen (expected))
      matches++;
  RECORD (g, "watch-denials", matches == 1 ? SBX_CONFORMANCE_PASS : SBX_CONFORMANCE_FAIL,
          "%u report(s) of the refused CONNECT to %s as approvable with a mechanism, of %u", matches,
          denied_target, w->seen->len);
  g_mutex_unlock (&w->lock);
}

static void
case_listener (Egress *g)
{
  Watched watched = { 0 };
  gboolean watching = FALSE;
  g_autofree char *fingerprint = NULL, *message = NULL;
  g_autofree char *approved = NULL, *approved_authority = NULL, *other_authority = NULL, *other_target = NULL;
  g_autofree char *cred_a = NULL, *cred_b = NULL, *cred_all = NULL;
  g_autofree char *auth_a = NULL, *auth_b = NULL, *auth_all = NULL, *denial = NULL;
  const char *targets[2] = { NULL, NULL };
  Echo echo = { .fd = -1 }, other = { .fd = -1 };
  SbxHostCall call = { 0 };
  guint16 port_a = 0, port_all = 0;
  void *route;
  int fd, tunnel;
  guint status;

  route = sbx_conformance_egress_start_route (g, "direct", &fingerprint, NULL, &message);
  if (route == NULL)
    {
      RECORD (g, "listener", SBX_CONFORMANCE_SKIP, "no direct route to try: %s", message);
      return;
    }
  if (!sbx_conformance_echo_start (&echo) || !sbx_conformance_echo_start (&other))
    {
      RECORD (g, "listener", SBX_CONFORMANCE_FAIL, "cannot listen on 127.0.0.1: %s", g_strerror (errno));
      goto out;
    }
  approved = g_strdup_printf ("tcp:127.0.0.1:%u", echo.port);
  approved_authority = g_strdup_printf ("127.0.0.1:%u", echo.port);
  other_target = g_strdup_printf ("tcp:127.0.0.1:%u", other.port);
  other_authority = g_strdup_printf ("127.0.0.1:%u", other.port);
  targets[0] = approved;
  cred_a = sbx_conformance_egress_authorize (g, route, "conformance:a", targets);
  cred_b = sbx_conformance_egress_authorize (g, route, "conformance-b", targets);
  cred_all = sbx_conformance_egress_authorize (g, route, "conformance-all", NULL);
  if (cred_a == NULL || cred_b == NULL || cred_all == NULL)
    {
      RECORD (g, "authorize", SBX_CONFORMANCE_FAIL, "authorize failed (an execution id with ':', a target "
                                                    "list, every target)");
      goto out;
    }
  if (strlen (cred_a) == 0 || strlen (cred_a) > 256 || strspn (cred_a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != strlen (cred_a)
      || g_strcmp0 (cred_a, cred_b) == 0)
    RECORD (g, "authorize", SBX_CONFORMANCE_FAIL, "credentials must be distinct, 1-256 bytes of [A-Za-z0-9_-]");
  else
    RECORD (g, "authorize", SBX_CONFORMANCE_PASS, "credentials of %zu bytes", strlen (cred_a));
  auth_a = g_strconcat ("conformance:a:", cred_a, NULL);
  auth_b = g_strconcat ("conformance-b:", cred_b, NULL);
  auth_all = g_strconcat ("conformance-all:", cred_all, NULL);

  fd = listen_loopback (&port_a);
  if (fd < 0 || g->vt->serve (g->ctx, &call, route, "conformance:a", fd) != SBX_STATUS_OK)
    {
      RECORD (g, "serve", SBX_CONFORMANCE_FAIL, "serve refused a loopback listener: %s", call.message);
      goto out;
    }
  memset (&call, 0, sizeof call);
  fd = listen_loopback (&port_all);
  if (fd < 0 || g->vt->serve (g->ctx, &call, route, "conformance-all", fd) != SBX_STATUS_OK)
    {
      RECORD (g, "serve", SBX_CONFORMANCE_FAIL, "serve refused a loopback listener: %s", call.message);
      goto out;
    }
  RECORD (g, "serve", SBX_CONFORMANCE_PASS, "two listeners served, one per execution");

  g_mutex_init (&watched.lock);
  watched.seen = g_ptr_array_new_with_free_func (g_free);
  if (SBX_ABI_HAS (g->vt, SbxEgressVTableV1, watch_denials) && g->vt->watch_denials != NULL)
    {
      SbxEgressDenialSinkV1 sink = { .struct_size = sizeof sink, .denied = watched_denied, .data = &watched };

      watching = g->vt->watch_denials (g->ctx, route, "conformance:a", &sink) == SBX_STATUS_OK;
      if (!watching)
        RECORD (g, "watch-denials", SBX_CONFORMANCE_FAIL, "watch_denials refused an authorized execution");
    }
  else
    RECORD (g, "watch-denials", SBX_CONFORMANCE_SKIP, "no watch_denials slot: only the first denial is known");

  status = connect_request (port_a, approved_authority, NULL, &tunnel);
  RECORD (g, "no-credential-407", status == 407 ? SBX_CONFORMANCE_PASS : SBX_CONFORMANCE_FAIL, "status %u", status);

  status = connect_request (port_a, approved_authority, auth_a, &tunnel);
  if (status != 200)
    RECORD (g, "approved-tunnel", SBX_CONFORMANCE_FAIL, "CONNECT to the approved target: status %u", status);
  else
    {
      char buf[8] = { 0 };
      ssize_t n = 0;

      if (sbx_conformance_send_all (tunnel, "conform", 7))
        for (gsize got = 0; got < 7 && (n = recv (tunnel, buf + got, 7 - got, 0)) > 0; got += (gsize) n)
          ;
      RECORD (g, "approved-tunnel", strcmp (buf, "conform") == 0 ? SBX_CONFORMANCE_PASS : SBX_CONFORMANCE_FAIL,
              "the tunnel %s", strcmp (buf, "conform") == 0 ? "is byte-exact" : "did not echo");
      close (tunnel);
    }

  status = connect_request (port_a, other_authority, auth_a, &tunnel);
  if (tunnel >= 0)
    close (tunnel);
  RECORD (g, "unapproved-port-403", status == 403 && g_atomic_int_get (&other.accepted) == 0
          ? SBX_CONFORMANCE_PASS : SBX_CONFORMANCE_FAIL, "status %u, the other server saw %d connections",
          status, g_atomic_int_get (&other.accepted));

  status = connect_request (port_a, approved_authority, auth_b, &tunnel);
  if (tunnel >= 0)
    close (tunnel);
  RECORD (g, "other-execution-407", status == 407 ? SBX_CONFORMANCE_PASS : SBX_CONFORMANCE_FAIL,
          "another execution's valid credential at this execution's listener: status %u", status);

  status = connect_request (port_all, other_authority, auth_all, &tunnel);
  if (tunnel >= 0)
    close (tunnel);
  RECORD (g, "unnamed-private-literal-refused", status != 200 && g_atomic_int_get (&other.accepted) == 0
          ? SBX_CONFORMANCE_PASS : SBX_CONFORMANCE_FAIL,
          "every target authorized, 127.0.0.1 not named by it: status %u", status);

  sbx_conformance_egress_revoke_denial (g, "revoke-denial", route, "conformance:a", other_target);
  if (watching)
    check_watched (g, &watched, other_target);

  status = connect_request (port_a, approved_authority, auth_a, &tunnel);
  if (tunnel >= 0)
    close (tunnel);
  RECORD (g, "revoked-credential-dead", status != 200 ? SBX_CONFORMANCE_PASS : SBX_CONFORMANCE_FAIL,
          "after revoke: %s", status == 0 ? "the listener is closed" : status == 407 ? "407" : "still served");
  g_clear_pointer (&denial, g_free);
  g->vt->revoke (g->ctx, route, "conformance-b", &denial);
  g_clear_pointer (&denial, g_free);
  g->vt->revoke (g->ctx, route, "conformance-all", &denial);

out:
  g->vt->stop (g->ctx, route);
  sbx_conformance_echo_stop (&echo);
  sbx_conformance_echo_stop (&other);
  if (watched.seen != NULL)
    {
      g_ptr_array_unref (watched.seen);
      g_mutex_clear (&watched.lock);
    }
}

void
sbx_conformance_judge_egress (Run        *run,
                              const char *plugin_file,
                              const char *plugin_name,
                              const char *extension)
{
  g_autofree char *symbol = NULL;
  const SbxPluginDescriptor *desc;
  SbxPluginEntryFunc *entry;
  Egress g = { .run = run, .plugin = plugin_name, .name = extension };
  void *handle;

  g.area = g_strconcat ("egress-", extension, NULL);
  /* The loader accepted the file; this is the same mapping, opened again. */
  handle = dlopen (plugin_file, RTLD_NOW | RTLD_LOCAL);
  symbol = g_strdelimit (g_strdup_printf ("sbx_plugin_%s_entry", plugin_name), "-", '_');
  entry = handle != NULL ? (SbxPluginEntryFunc *) dlsym (handle, symbol) : NULL;
  desc = entry != NULL ? entry () : NULL;
  for (const SbxPluginExtension *ext = desc != NULL ? desc->extensions : NULL;
       ext != NULL && ext->kind != SBX_EXT_END && g.vt == NULL;
       ext = (const SbxPluginExtension *) (const void *) ((const char *) ext + desc->extensions[0].struct_size))
    if (ext->kind == SBX_EXT_EGRESS && g_strcmp0 (ext->name, extension) == 0)
      g.vt = ext->vtable;
  if (g.vt == NULL || desc->init (&conformance_host, &g.ctx) != SBX_STATUS_OK)
    {
      RECORD (&g, "open", SBX_CONFORMANCE_FAIL, "cannot drive the extension through its vtable (%s)",
              handle == NULL ? dlerror () : "no such egress extension, or init failed");
      g_free (g.area);
      return;
    }
  case_fingerprints (&g);
  case_listener (&g);
  sbx_conformance_case_listeners (&g);
  if (desc->fini != NULL)
    desc->fini (g.ctx);
  g_free (g.area);
  /* never dlclose()d: the registry's mapping stays anyway */
}
