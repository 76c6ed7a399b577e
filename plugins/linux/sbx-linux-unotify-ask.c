/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The connect supervisor's live approvals: a unix connect to a host socket
 * that would be refused (outside the rung-1 view, or not the sandbox's
 * own) is held, not answered, when the spawn's denial sink has ask
 * (SbxBackendAskFunc, sbx-plugin-backend.h).  The host decides whether it
 * is a question at all (only a host socket the profile gates is asked;
 * anything else is answered DENY at once) and answers from any thread.
 *
 * Rules:
 *  - the notification stays unanswered while held: the target's thread
 *    sleeps in connect(2); the hub neither polls nor wakes for it (the
 *    answer writes an eventfd the hub polls);
 *  - the answer function takes only the asks' own lock (the hub calls ask
 *    with its lock held, and the host may answer at once);
 *  - an approval connects the caller's socket to the host socket by
 *    exactly the path it named, resolved in the host's view, as a granted
 *    socket is (sbx_unotify_connect_host_socket); a refusal is reported
 *    and answered exactly as without asking;
 *  - at most SBX_UNOTIFY_MAX_HELD connects of a sandbox are held; past it
 *    the refusal is immediate.  A ticket answered after stop() is freed.
 */
#include "sbx-linux-unotify-private.h"
#include "sbx-linux-ask-queue.h"

#include <errno.h>
#include <unistd.h>

struct _SbxUnotifyAsks
{
  SbxBackendAskFunc  *ask;
  void               *data;
  SbxAskQueue        *queue;   /* answered Held; stopped by stop(): answers then free their ticket */
};

typedef struct
{
  SbxAskQueue    *queue;      /* (owned) */
  uint64_t        id;
  pid_t           pid;
  int             sock;       /* the caller's socket (our copy) */
  int             err;        /* the refusal's errno */
  uint32_t        decision;   /* SBX_ABI_DECISION_*, once answered */
  char           *path;
  char           *reason;
} Held;

static void
held_free (gpointer data)
{
  Held *h = data;

  if (h->sock >= 0)
    close (h->sock);
  g_free (h->path);
  g_free (h->reason);
  sbx_ask_queue_unref (h->queue);
  g_free (h);
}

SbxUnotifyAsks *
sbx_unotify_asks_new (const SbxBackendDenialSinkV1 *sink)
{
  SbxUnotifyAsks *asks;
  SbxAskQueue *queue;

  if (sink == NULL || sink->struct_size < SBX_BACKEND_DENIAL_SINK_V1_ASK_SIZE || sink->ask == NULL
      || sink->denied == NULL)
    return NULL;
  queue = sbx_ask_queue_new ();
  if (queue == NULL)
    return NULL;   /* no way to hear answers: refuse as without asking */
  asks = g_new0 (SbxUnotifyAsks, 1);
  asks->ask = sink->ask;
  asks->data = sink->data;
  asks->queue = queue;
  return asks;
}

int
sbx_unotify_asks_fd (SbxUnotifyAsks *asks)
{
  return sbx_ask_queue_fd (asks->queue);
}

/* SbxBackendAnswerFunc: from any thread, maybe inside ask (hub lock held). */
static void
held_answered (void    *ticket,
               uint32_t decision)
{
  Held *h = ticket;

  h->decision = decision;
  if (!sbx_ask_queue_push (h->queue, h))
    held_free (h);   /* stop() ran */
}

gboolean
sbx_unotify_hold (SbxUnotify *u,
                  uint64_t    id,
                  pid_t       pid,
                  int         sock,
                  const char *path,
                  const char *reason,
                  int         err)
{
  SbxBackendDenialV1 request;
  Held *h;

  if (u->asks == NULL || u->n_held >= SBX_UNOTIFY_MAX_HELD || path == NULL || path[0] != '/')
    return FALSE;
  h = g_new0 (Held, 1);
  h->queue = sbx_ask_queue_ref (u->asks->queue);
  h->id = id;
  h->pid = pid;
  h->sock = sock;
  h->err = err;
  h->path = g_strdup (path);
  h->reason = g_strdup (reason);
  u->n_held++;
  {
    char argv0[SBX_UNOTIFY_ARGV0_MAX];

    sbx_unotify_denial_init (&request, argv0, pid, path, reason);
    u->asks->ask (u->asks->data, &request, held_answered, h);
  }
  return TRUE;
}

void
sbx_unotify_asks_drain (SbxUnotify *u,
                        GPtrArray  *pending)
{
  GQueue answered = G_QUEUE_INIT;
  Held *h;

  if (u->asks == NULL)
    return;
  sbx_ask_queue_take (u->asks->queue, &answered);
  while ((h = g_queue_pop_head (&answered)) != NULL)
    {
      u->n_held--;
      if (!sbx_unotify_id_valid (u, h->id))
        ;   /* the caller is gone or was interrupted: nothing to answer */
      else if (h->decision == SBX_ABI_DECISION_ONCE || h->decision == SBX_ABI_DECISION_FOR_RUN)
        {
          sbx_unotify_connect_host_socket (u, h->id, h->sock, h->path, pending);
          h->sock = -1;   /* taken */
        }
      else
        {
          sbx_unotify_report_denial (u, h->pid, h->path, h->reason);
          sbx_unotify_respond (u, h->id, h->err);
        }
      held_free (h);
    }
}

void
sbx_unotify_asks_stop (SbxUnotifyAsks *asks)
{
  if (asks == NULL)
    return;
  sbx_ask_queue_stop (asks->queue, held_free);
  sbx_ask_queue_unref (asks->queue);
  g_free (asks);
}
