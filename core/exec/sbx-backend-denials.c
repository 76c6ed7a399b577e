/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Backend denials: what a backend's own mechanism refused while the target
 * ran (the Linux connect supervisor's unix connects; the filesystem
 * refusals of the view supervisor and of Landlock's audit, whose grants
 * sbx-fs-denial.c names), reported through
 * the sink of the spawn request (sbx-plugin-backend.h, "Backend denials") and
 * kept in the run's denial log beside the egress plugin's (one bounded,
 * merged list per run: sbx-denial.c).
 *
 * The backend says what happened; the grant that would open it is the
 * core's to say, from the profile: a host socket the profile gates is
 * opened by unix.connect.v1 for exactly that path; one it does not name,
 * an abstract name, or anything under "unix-sockets": "allow" has no grant
 * (the reason says why).
 */
#include "sbx-backend-denials-private.h"

#include <string.h>

#include "sbx-decision-private.h"
#include "sbx-grant.h"
#include "sbx-profile-private.h"
#include "sbx-fs-denial-private.h"

G_STATIC_ASSERT (SBX_ABI_DENIAL_UNIX_CONNECT == (guint) SBX_DENIAL_OPERATION_UNIX_CONNECT);

struct _SbxBackendDenials
{
  SbxBackendDenialSinkV1 sink;
  SbxDenialLog          *log;       /* (owned) */
  SbxProfile            *profile;   /* (owned) */
  SbxDecisionBroker     *broker;    /* (nullable) (owned) an asking run's questions */
};

/* @text as valid UTF-8 of at most @max bytes without control characters
 * (a process name and a path come from the sandbox). */
static char *
clean_text (const char *text,
            gsize       max)
{
  char *out = g_utf8_make_valid (text, MIN (strlen (text), max));

  for (char *p = out; *p != '\0'; p++)
    if ((guchar) *p < 0x20 || *p == 0x7f)
      *p = '?';
  return out;
}

/* A filesystem refusal: a host path may be as long as PATH_MAX; one that
 * had to be altered to be printable names no grant (sbx-fs-denial.c). */
static SbxDenial *
backend_fs_denial (const SbxBackendDenialV1 *denial,
                   SbxProfile               *profile)
{
  g_autofree char *target = clean_text (denial->target, 4096);
  g_autofree char *reason = denial->reason != NULL ? clean_text (denial->reason, 512) : NULL;
  g_autofree char *process = denial->process != NULL ? clean_text (denial->process, 256) : NULL;
  SbxDenial *d = sbx_fs_denial_new ((SbxDenialOperation) denial->operation, target,
                                    strcmp (target, denial->target) == 0, denial->mechanism, reason, profile);

  if (d != NULL)
    sbx_denial_set_process (d, denial->pid > 0 ? denial->pid : 0, process, NULL);
  return d;
}

SbxDenial *
sbx_backend_denial_new (const SbxBackendDenialV1 *denial,
                        SbxProfile               *profile)
{
  g_autofree char *target = NULL;
  g_autofree char *process = NULL;
  g_autofree char *reason = NULL;
  const char *mechanism;
  SbxDenial *d;

  if (denial == NULL || denial->struct_size < SBX_BACKEND_DENIAL_V1_MIN_SIZE
      || (denial->operation != SBX_ABI_DENIAL_UNIX_CONNECT && denial->operation > SBX_ABI_DENIAL_LIST)
      || denial->target == NULL || denial->target[0] == '\0')
    return NULL;
  if (denial->operation <= SBX_ABI_DENIAL_LIST)
    return backend_fs_denial (denial, profile);
  target = clean_text (denial->target, 256);
  mechanism = denial->mechanism != NULL && strcmp (denial->mechanism, "connect-supervisor") == 0
              ? "connect-supervisor" : "backend";
  if (denial->reason != NULL)
    reason = clean_text (denial->reason, 512);
  if (target[0] != '/')
    d = sbx_denial_new (SBX_DENIAL_OPERATION_UNIX_CONNECT, target, mechanism, NULL, NULL,
                        "an abstract socket outside the sandbox; no grant opens it");
  else
    switch (sbx_profile_host_socket_access (profile, target))
      {
      case SBX_ACCESS_GATED:
        d = sbx_denial_new (SBX_DENIAL_OPERATION_UNIX_CONNECT, target, mechanism, SBX_GRANT_CLASS_UNIX_CONNECT,
                            target, "the host socket is gated");
        break;
      case SBX_ACCESS_DENY:
        d = sbx_denial_new (SBX_DENIAL_OPERATION_UNIX_CONNECT, target, mechanism, NULL, NULL,
                            "the profile does not name this host socket");
        break;
      case SBX_ACCESS_ALLOW:
      default:
        d = sbx_denial_new (SBX_DENIAL_OPERATION_UNIX_CONNECT, target, mechanism, NULL, NULL,
                            reason != NULL ? reason : "refused by the backend");
        break;
      }
  if (denial->process != NULL)
    process = clean_text (denial->process, 256);
  sbx_denial_set_process (d, denial->pid > 0 ? denial->pid : 0, process, NULL);
  return d;
}

/* SbxBackendDenialSinkV1.denied: from any thread of the backend. */
static void
backend_denied (void                     *data,
                const SbxBackendDenialV1 *denial)
{
  SbxBackendDenials *self = data;
  g_autoptr(SbxDenial) d = sbx_backend_denial_new (denial, self->profile);

  if (d != NULL)
    sbx_denial_log_add (self->log, d);
}

/* SbxBackendDenialSinkV1.ask: from any thread of the backend, with its
 * lock held (answers only queue there).  Only a refusal that names a grant
 * (a host socket the profile gates) is asked; anything else, a Deny
 * dimension included, is denied at once. */
static void
backend_ask (void                     *data,
             const SbxBackendDenialV1 *request,
             SbxBackendAnswerFunc     *answer,
             void                     *ticket)
{
  SbxBackendDenials *self = data;
  g_autoptr(SbxDenial) d = sbx_backend_denial_new (request, self->profile);

  /* The approval opens what the backend names: only when that is exactly
   * the gated path (the denial's target is cleaned for display, so a path
   * with a control byte could otherwise pass as another). */
  if (d != NULL && g_strcmp0 (sbx_denial_get_grant_target (d), request->target) != 0)
    g_clear_pointer (&d, sbx_denial_unref);
  sbx_decision_broker_ask_or_deny (self->broker, d, answer, ticket);
}

void
sbx_backend_denials_set_broker (SbxBackendDenials *self,
                                SbxDecisionBroker *broker)
{
  if (self == NULL || broker == NULL)
    return;
  g_clear_pointer (&self->broker, sbx_decision_broker_unref);
  self->broker = sbx_decision_broker_ref (broker);
  self->sink.ask = backend_ask;
}

SbxBackendDenials *
sbx_backend_denials_new (SbxDenialLog *log,
                         SbxProfile   *profile)
{
  SbxBackendDenials *self = g_new0 (SbxBackendDenials, 1);

  self->sink.struct_size = sizeof self->sink;
  self->sink.denied = backend_denied;
  self->sink.data = self;
  self->log = sbx_denial_log_ref (log);
  self->profile = sbx_profile_ref (profile);
  return self;
}

const SbxBackendDenialSinkV1 *
sbx_backend_denials_sink (SbxBackendDenials *self)
{
  return self != NULL ? &self->sink : NULL;
}

void
sbx_backend_denials_free (SbxBackendDenials *self)
{
  if (self == NULL)
    return;
  sbx_denial_log_unref (self->log);
  sbx_profile_unref (self->profile);
  g_clear_pointer (&self->broker, sbx_decision_broker_unref);
  g_free (self);
}
