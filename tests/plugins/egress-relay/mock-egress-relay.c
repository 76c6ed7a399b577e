/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mock-egress-relay: a vendor's egress plugin, built against the ABI header
 * only (no GLib), proving the seam: the host starts its route, authorizes
 * each run, hands it the listener the backend made in the run's sandbox and
 * revokes the run at its end.
 *
 * It reaches nothing: every connection on a served listener is answered
 * with one HTTP response whose body names what the plugin knows about the
 * connection's execution ("mock-egress-relay EXEC targets=... served=N"),
 * so a test inside the sandbox sees which listener it reached.  Revoke
 * returns the denial "tcp:mock.invalid:1 (mock denial of EXEC)".  The
 * route "direct" has upstream's direct fingerprint; any other config gets a
 * wrong one, which the host must refuse.
 */
#include "../mock-common.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/socket.h>

#define MAX_EXECS 64

typedef struct
{
  char *id;
  char  targets[512];
  int   listener;          /* -1 when none */
  int   served;
  pthread_t thread;
  int   has_thread;
} Exec;

typedef struct
{
  const SbxHostV1 *host;
  pthread_mutex_t  lock;
  Exec             execs[MAX_EXECS];
} Route;

static SbxEgressStartFunc relay_start;
static SbxEgressAuthorizeFunc relay_authorize;
static SbxEgressServeFunc relay_serve;
static SbxEgressRevokeFunc relay_revoke;
static SbxEgressStopFunc relay_stop;
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
  pthread_mutex_unlock (&r->lock);
  if (e == NULL)
    return SBX_STATUS_INVALID;
  exec_end (e);
  snprintf (denial, sizeof denial, "tcp:mock.invalid:1 (mock denial of %s)", execution_id);
  *denial_out = host_strdup (r->host, denial);
  pthread_mutex_lock (&r->lock);
  free (e->id);
  e->id = NULL;
  pthread_mutex_unlock (&r->lock);
  return SBX_STATUS_OK;
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
        free (r->execs[i].id);
      }
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
};

static const SbxPluginExtension extensions[] = {
  { .struct_size = sizeof (SbxPluginExtension), .kind = SBX_EXT_EGRESS, .name = "mock-egress-relay",
    .priority = 0, .vtable = &relay },
  { 0 },
};

SBX_PLUGIN_DEFINE (mock_egress_relay, "0.1.0", "LGPL-2.1-or-later", SBX_HOST_FEATURE_EGRESS_V1,
                   relay_init, relay_fini, extensions)
