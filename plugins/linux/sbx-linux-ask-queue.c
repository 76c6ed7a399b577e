/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The answers to a backend's asks, queued for its supervisor (see
 * sbx-linux-ask-queue.h): the connect supervisor's held connects
 * (sbx-linux-unotify-ask.c) and the view supervisor's held reads
 * (sbx-linux-view-files.c).
 *
 * LOCKING: @lock protects @stopped and @answered; the eventfd is written
 * under it, so a supervisor that took the queue after reading the eventfd
 * misses no answer (a later one writes it again).
 */
#include "sbx-linux-ask-queue.h"

#include <unistd.h>
#include <sys/eventfd.h>

struct _SbxAskQueue
{
  gatomicrefcount ref;
  GMutex          lock;
  gboolean        stopped;    /* (lock) */
  GQueue          answered;   /* (lock) tickets */
  int             fd;         /* eventfd: written for each answer */
};

SbxAskQueue *
sbx_ask_queue_new (void)
{
  SbxAskQueue *queue;
  int fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);

  if (fd < 0)
    return NULL;
  queue = g_new0 (SbxAskQueue, 1);
  g_atomic_ref_count_init (&queue->ref);
  g_mutex_init (&queue->lock);
  g_queue_init (&queue->answered);
  queue->fd = fd;
  return queue;
}

SbxAskQueue *
sbx_ask_queue_ref (SbxAskQueue *queue)
{
  g_atomic_ref_count_inc (&queue->ref);
  return queue;
}

void
sbx_ask_queue_unref (SbxAskQueue *queue)
{
  if (!g_atomic_ref_count_dec (&queue->ref))
    return;
  g_assert (g_queue_is_empty (&queue->answered));
  close (queue->fd);
  g_mutex_clear (&queue->lock);
  g_free (queue);
}

int
sbx_ask_queue_fd (SbxAskQueue *queue)
{
  return queue->fd;
}

gboolean
sbx_ask_queue_push (SbxAskQueue *queue,
                    gpointer     ticket)
{
  uint64_t one = 1;
  gboolean queued = FALSE;

  g_mutex_lock (&queue->lock);
  if (!queue->stopped)
    {
      g_queue_push_tail (&queue->answered, ticket);
      (void) write (queue->fd, &one, sizeof one);
      queued = TRUE;
    }
  g_mutex_unlock (&queue->lock);
  return queued;
}

static void
move_all (SbxAskQueue *queue, GQueue *out)
{
  gpointer ticket;

  while ((ticket = g_queue_pop_head (&queue->answered)) != NULL)
    g_queue_push_tail (out, ticket);
}

void
sbx_ask_queue_take (SbxAskQueue *queue,
                    GQueue      *out)
{
  uint64_t count;

  (void) read (queue->fd, &count, sizeof count);
  g_mutex_lock (&queue->lock);
  move_all (queue, out);
  g_mutex_unlock (&queue->lock);
}

void
sbx_ask_queue_stop (SbxAskQueue    *queue,
                    GDestroyNotify  free_ticket)
{
  GQueue answered = G_QUEUE_INIT;
  gpointer ticket;

  g_mutex_lock (&queue->lock);
  queue->stopped = TRUE;
  move_all (queue, &answered);
  g_mutex_unlock (&queue->lock);
  while ((ticket = g_queue_pop_head (&answered)) != NULL)
    free_ticket (ticket);
}
