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

#include <errno.h>
#include <unistd.h>
#include <sys/eventfd.h>

struct _SbxUnotifyAsks
{
  gatomicrefcount     ref;
  SbxBackendAskFunc  *ask;
  void               *data;
  GMutex              lock;
  gboolean            dead;       /* (lock) stop() ran: answers free their ticket */
  GQueue              answered;   /* (lock) Held */
  int                 fd;         /* eventfd: written for each answer */
};

typedef struct
{
  SbxUnotifyAsks *asks;       /* (owned) */
  uint64_t        id;
  pid_t           pid;
  int             sock;       /* the caller's socket (our copy) */
  int             err;        /* the refusal's errno */
  uint32_t        decision;   /* SBX_ABI_DECISION_*, once answered */
  char           *path;
  char           *reason;
} Held;

static void
asks_unref (SbxUnotifyAsks *asks)
{
  if (!g_atomic_ref_count_dec (&asks->ref))
    return;
  g_assert (g_queue_is_empty (&asks->answered));
  close (asks->fd);
  g_mutex_clear (&asks->lock);
  g_free (asks);
}

static void
held_free (Held *h)
{
  if (h->sock >= 0)
    close (h->sock);
  g_free (h->path);
  g_free (h->reason);
  asks_unref (h->asks);
  g_free (h);
}

SbxUnotifyAsks *
sbx_unotify_asks_new (const SbxBackendDenialSinkV1 *sink)
{
  SbxUnotifyAsks *asks;
  int fd;

  if (sink == NULL || sink->struct_size < SBX_BACKEND_DENIAL_SINK_V1_ASK_SIZE || sink->ask == NULL
      || sink->denied == NULL)
    return NULL;
  fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0)
    return NULL;   /* no way to hear answers: refuse as without asking */
  asks = g_new0 (SbxUnotifyAsks, 1);
  g_atomic_ref_count_init (&asks->ref);
  g_mutex_init (&asks->lock);
  g_queue_init (&asks->answered);
  asks->ask = sink->ask;
  asks->data = sink->data;
  asks->fd = fd;
  return asks;
}

int
sbx_unotify_asks_fd (SbxUnotifyAsks *asks)
{
  return asks->fd;
}

/* SbxBackendAnswerFunc: from any thread, maybe inside ask (hub lock held). */
static void
held_answered (void    *ticket,
               uint32_t decision)
{
  Held *h = ticket;
  SbxUnotifyAsks *asks = h->asks;
  uint64_t one = 1;

  g_mutex_lock (&asks->lock);
  if (!asks->dead)
    {
      h->decision = decision;
      g_queue_push_tail (&asks->answered, h);
      (void) write (asks->fd, &one, sizeof one);
      h = NULL;
    }
  g_mutex_unlock (&asks->lock);
  if (h != NULL)
    held_free (h);
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
  g_atomic_ref_count_inc (&u->asks->ref);
  h->asks = u->asks;
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
  uint64_t count;
  Held *h;

  if (u->asks == NULL)
    return;
  (void) read (u->asks->fd, &count, sizeof count);
  g_mutex_lock (&u->asks->lock);
  answered = u->asks->answered;
  g_queue_init (&u->asks->answered);
  g_mutex_unlock (&u->asks->lock);
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
  GQueue answered;
  Held *h;

  if (asks == NULL)
    return;
  g_mutex_lock (&asks->lock);
  asks->dead = TRUE;
  answered = asks->answered;
  g_queue_init (&asks->answered);
  g_mutex_unlock (&asks->lock);
  while ((h = g_queue_pop_head (&answered)) != NULL)
    held_free (h);
  asks_unref (asks);
}
