/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The view supervisor's life and thread (sbx-linux-view-server.h): split
 * from sbx-linux-view-server.c, which answers one request at a time, along
 * its seam (how a server is made, started, served, stopped and freed; the
 * hub calls the answers, never the other way round).
 *
 * One thread for the whole process serves every sandbox's server (the
 * hub, as the connect supervisor's): a thousand live sandboxes cost one
 * thread, not a thousand (tests/test-process.c, /process/many-waits, counts
 * them).  The hub blocks in epoll_wait() on every registered descriptor
 * (a server's socket until its /dev/fuse descriptor arrives, then that
 * descriptor) and handles one event at a time: no busy loop.  A request
 * is answered under the hub's lock, so a server's lookups wait while
 * another sandbox's request is answered (each is a few system calls; a
 * host filesystem that hangs in lstat() stalls every view's lookups
 * outside the view, never those inside).  The hub never looks anything up
 * in a view it serves (a task's procfs is taken from the dentry cache
 * only), so it cannot wait on itself.
 *
 * It never makes a system call on a file of a view it serves either (a
 * stat or statfs of a FUSE mount is a request to this very thread): the
 * mount a server holds is only closed here, never asked anything.
 *
 * LOCKING: sbx-linux-view-server.c's top comment.
 */
#include "sbx-linux-view-server.h"
#include "sbx-linux-view-private.h"
#include "sbx-linux-clone.h"

#include <sbx/sbx-cleanup.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <gio/gio.h>

#define FUSE_MISC_MAJOR 10
#define FUSE_MINOR 229

/* ------------------------------------------------------------------------- */
/* The thread                                                                */
/* ------------------------------------------------------------------------- */

/* The /dev/fuse descriptor from self->sock, and who sent it (SO_PASSCRED:
 * the kernel adds the sender's pid, in our numbering): the process that
 * made the mount, whose pid namespace numbers the requests.  The socket is
 * closed once a message (or its end) came; only a /dev/fuse descriptor is
 * kept. */
static void
receive_fuse (SbxViewServer *self)
{
  struct stat st;
  pid_t sender = 0;
  int fd = -1;
  char byte;
  int n = sbx_linux_receive_fds_from (self->sock, &byte, &fd, 1, &sender);

  if (n < 0 && errno == EAGAIN)
    return;
  sbx_clear_fd (&self->sock);
  if (n != 1)
    return;   /* the sandbox sent nothing (gone), no descriptor or more than one: nothing to serve */
  if (fstat (fd, &st) != 0 || !S_ISCHR (st.st_mode) || major (st.st_rdev) != FUSE_MISC_MAJOR
      || minor (st.st_rdev) != FUSE_MINOR)
    {
      close (fd);
      return;
    }
  /* Nonblocking: a request interrupted between epoll_wait() and read()
   * must not leave the hub in read(), holding its lock for every view. */
  if (fcntl (fd, F_SETFL, fcntl (fd, F_GETFL) | O_NONBLOCK) != 0)
    {
      close (fd);
      return;
    }
  sbx_view_task_set_mounter (&self->task, sender);
  self->fuse_fd = fd;
}

/* The hub's event tag of a server's files part (its eventfd), beside the
 * server's id. */
#define HUB_FILES_BIT (G_GUINT64_CONSTANT (1) << 63)
/* ... and of the socket a server that serves already watches for a device
 * to serve instead (sbx_view_server_watch_replacement()). */
#define HUB_SOCK_BIT (G_GUINT64_CONSTANT (1) << 62)

/* The hub: one thread, one epoll set, the live servers by id. */
static struct
{
  GMutex      lock;
  int         epfd;
  GHashTable *servers;   /* guint64 id -> SbxViewServer* (not owned) */
  guint64     next_id;
  int         close_efd; /* tag 0 in the set: mounts in @to_close */
  GArray     *to_close;  /* int: mounts of stopped servers, closed by the hub */
  guint64     n_queued;  /* mounts ever queued, and closed: sbx_view_hub_flush() */
  guint64     n_closed;
  GCond       closed_cond;
} hub;

/* Has the hub's thread close @fd (a stopped server's mount) after this
 * returns: the last reference to a FUSE superblock, whose teardown (the
 * kernel unregisters its backing device and waits for an RCU grace period
 * to do it) then costs the stopping caller nothing.  Under hub.lock;
 * closed at once where the hub cannot take it. */
static void
hub_close_later (int fd)
{
  if (hub.close_efd >= 0 && hub.to_close != NULL)
    {
      g_array_append_val (hub.to_close, fd);
      if (eventfd_write (hub.close_efd, 1) == 0)
        {
          hub.n_queued++;
          return;
        }
      g_array_set_size (hub.to_close, hub.to_close->len - 1);
    }
  close (fd);
}

/* On the hub's thread: closes what hub_close_later() queued, outside the
 * lock (a teardown takes a while; the other servers go on). */
static void
hub_close_queued (void)
{
  g_autoptr(GArray) fds = NULL;
  eventfd_t count;

  g_mutex_lock (&hub.lock);
  (void) eventfd_read (hub.close_efd, &count);
  fds = g_steal_pointer (&hub.to_close);
  hub.to_close = g_array_new (FALSE, FALSE, sizeof (int));
  g_mutex_unlock (&hub.lock);
  for (guint i = 0; i < fds->len; i++)
    close (g_array_index (fds, int, i));
  g_mutex_lock (&hub.lock);
  hub.n_closed += fds->len;
  g_cond_broadcast (&hub.closed_cond);
  g_mutex_unlock (&hub.lock);
}

/* An event on the replacement socket of @self (under hub.lock): the
 * sandbox made a root of its own after all (the early root could not be
 * attached), and its device replaces the one we made, or the socket's end
 * (A and B have exec'd: the early root is the sandbox's).  The skeleton is
 * the same; the new connection starts with its own INIT. */
static void
hub_replace (SbxViewServer *self)
{
  int old = self->fuse_fd;
  int sock = self->sock;

  self->fuse_fd = -1;
  receive_fuse (self);
  if (self->sock >= 0)
    {
      self->fuse_fd = old;   /* spurious: still waiting */
      return;
    }
  (void) epoll_ctl (hub.epfd, EPOLL_CTL_DEL, sock, NULL);
  if (self->fuse_fd < 0)
    {
      self->fuse_fd = old;   /* nothing came: the sandbox has the early root */
      return;
    }
  (void) epoll_ctl (hub.epfd, EPOLL_CTL_DEL, old, NULL);
  close (old);
  if (self->mount_fd >= 0)
    hub_close_later (sbx_steal_fd (&self->mount_fd));
  self->initialized = FALSE;
  self->no_opendir = FALSE;
  {
    struct epoll_event ev = { .events = EPOLLIN, .data.u64 = self->hub_id };

    if (epoll_ctl (hub.epfd, EPOLL_CTL_ADD, self->fuse_fd, &ev) != 0)
      sbx_clear_fd (&self->fuse_fd);   /* ENOMEM: the connection aborts; lookups outside fail */
  }
}

/* One event of @self, under hub.lock: the descriptor arriving on its
 * socket, or one request. */
static void
hub_handle (SbxViewServer *self)
{
  ssize_t n;

  if (self->fuse_fd < 0)
    {
      int sock = self->sock;

      receive_fuse (self);
      if (self->sock >= 0)
        return;   /* spurious wake-up: still waiting */
      (void) epoll_ctl (hub.epfd, EPOLL_CTL_DEL, sock, NULL);
      if (self->fuse_fd >= 0)
        {
          struct epoll_event ev = { .events = EPOLLIN, .data.u64 = self->hub_id };

          if (epoll_ctl (hub.epfd, EPOLL_CTL_ADD, self->fuse_fd, &ev) != 0)
            sbx_clear_fd (&self->fuse_fd);   /* ENOMEM: the connection aborts; lookups outside fail */
        }
      return;
    }
  n = read (self->fuse_fd, self->buf, SBX_VIEW_REQUEST_BUF);
  if (n < 0)
    {
      if (errno == EINTR || errno == EAGAIN || errno == ENOENT || errno == EIO)
        return;   /* interrupted, gone, or larger than we take (the kernel failed it) */
      /* ENODEV: unmounted, the connection is over */
    }
  else if (sbx_view_server_handle_request (self, (size_t) n))
    return;
  (void) epoll_ctl (hub.epfd, EPOLL_CTL_DEL, self->fuse_fd, NULL);
  sbx_clear_fd (&self->fuse_fd);
}

static gpointer
hub_main (gpointer data)
{
  for (;;)
    {
      struct epoll_event ev;
      SbxViewServer *self;
      guint64 id;

      if (epoll_wait (hub.epfd, &ev, 1, -1) != 1)
        continue;   /* EINTR (the hub lives as long as the process) */
      if (ev.data.u64 == 0)
        {
          hub_close_queued ();
          continue;
        }
      id = ev.data.u64 & ~(HUB_FILES_BIT | HUB_SOCK_BIT);
      g_mutex_lock (&hub.lock);
      self = g_hash_table_lookup (hub.servers, &id);
      if (self != NULL && (ev.data.u64 & HUB_FILES_BIT))
        sbx_view_files_drain (self);
      else if (self != NULL && (ev.data.u64 & HUB_SOCK_BIT))
        hub_replace (self);
      else if (self != NULL)
        hub_handle (self);
      g_mutex_unlock (&hub.lock);
    }
  return NULL;
}

/* The process the hub runs in (0: none yet in this process), and why it
 * could not start there (0: it did). */
static GMutex hub_start_lock;
static pid_t  hub_pid;
static int    hub_start_errno;

/* In the child of a fork(): the hub's thread is not there (only the
 * forking thread is), and its epoll set is the parent's.  The child's
 * first server starts a hub of its own; the parent's servers are not the
 * child's (their table is left behind, not freed: another thread of the
 * parent may have been using it at the fork). */
static void
hub_atfork_child (void)
{
  g_mutex_init (&hub.lock);
  g_mutex_init (&hub_start_lock);
  if (hub.epfd >= 0)
    close (hub.epfd);
  if (hub.close_efd >= 0)
    close (hub.close_efd);
  hub.epfd = hub.close_efd = -1;
  hub.servers = NULL;
  hub.to_close = NULL;   /* the parent's (their descriptors stay open in this child, as any) */
  hub.n_queued = hub.n_closed = 0;
  g_cond_init (&hub.closed_cond);
  hub_pid = 0;
  hub_start_errno = 0;
}

/* The hub of this process, started at its first server (or ahead of it,
 * sbx_view_hub_prestart()); FALSE with @error when it cannot be. */
static gboolean
hub_ensure (GError **error)
{
  static gboolean atfork_registered;
  int err;

  g_mutex_lock (&hub_start_lock);
  if (!atfork_registered)
    {
      atfork_registered = pthread_atfork (NULL, NULL, hub_atfork_child) == 0;
      hub.epfd = hub.close_efd = -1;
    }
  if (hub_pid == 0 && hub_start_errno == 0)
    {
      struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0 };

      hub.epfd = epoll_create1 (EPOLL_CLOEXEC);
      hub.close_efd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
      if (hub.epfd < 0 || hub.close_efd < 0 || epoll_ctl (hub.epfd, EPOLL_CTL_ADD, hub.close_efd, &ev) != 0)
        {
          hub_start_errno = errno;
          sbx_clear_fd (&hub.epfd);
          sbx_clear_fd (&hub.close_efd);
        }
      else
        {
          hub.to_close = g_array_new (FALSE, FALSE, sizeof (int));
          hub.servers = g_hash_table_new (g_int64_hash, g_int64_equal);
          hub.next_id = 1;
          /* the hub's thread is never joined: it lives as long as the
           * process, so its reference is dropped at once */
          GThread *thread = g_thread_try_new ("sbx-view", hub_main, NULL, NULL);

          if (thread == NULL)
            hub_start_errno = EAGAIN;
          else
            {
              g_thread_unref (thread);
              hub_pid = getpid ();
            }
        }
    }
  err = hub_start_errno;
  g_mutex_unlock (&hub_start_lock);
  if (err != 0)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (err),
                   "view supervisor: cannot start its thread: %s", g_strerror (err));
      return FALSE;
    }
  return TRUE;
}

gboolean
sbx_view_hub_prestart (void)
{
  return hub_ensure (NULL);
}

void
sbx_view_hub_flush (void)
{
  g_mutex_lock (&hub_start_lock);
  if (hub_pid != getpid ())
    {
      g_mutex_unlock (&hub_start_lock);
      return;   /* no hub in this process (none yet, or a fork's child) */
    }
  g_mutex_unlock (&hub_start_lock);
  g_mutex_lock (&hub.lock);
  {
    guint64 target = hub.n_queued;

    while (hub.n_closed < target)
      g_cond_wait (&hub.closed_cond, &hub.lock);
  }
  g_mutex_unlock (&hub.lock);
}

/* SbxViewWatchFunc: under hub.lock (the files part asks from the hub). */
gboolean
sbx_view_hub_watch (SbxViewServer *self,
                    int            fd)
{
  struct epoll_event ev = { .events = EPOLLIN, .data.u64 = self->hub_id | HUB_FILES_BIT };

  return self->hub_id != 0 && epoll_ctl (hub.epfd, EPOLL_CTL_ADD, fd, &ev) == 0;
}

void
sbx_view_server_set_sandbox_pid (SbxViewServer *self,
                                 pid_t          pid)
{
  g_return_if_fail (self != NULL && pid >= 0);
  atomic_store (&self->task.sandbox_pid, (int) pid);
}

/* Registers @self with the hub (started), waiting on @fd (its socket or
 * its device): its id, its request buffer, @fd in the hub's set.  FALSE
 * with @error set when @fd cannot be added (the caller closes what it
 * gave). */
static gboolean
hub_register (SbxViewServer *self,
              int            fd,
              GError       **error)
{
  struct epoll_event ev = { .events = EPOLLIN };
  int saved;

  self->buf = g_malloc (SBX_VIEW_REQUEST_BUF);
  g_mutex_lock (&hub.lock);
  self->hub_id = hub.next_id++;
  self->hub_pid = getpid ();
  ev.data.u64 = self->hub_id;
  if (epoll_ctl (hub.epfd, EPOLL_CTL_ADD, fd, &ev) != 0)
    {
      saved = errno;
      self->hub_id = 0;
      g_mutex_unlock (&hub.lock);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "view supervisor: epoll: %s",
                   g_strerror (saved));
      return FALSE;
    }
  g_hash_table_insert (hub.servers, &self->hub_id, self);
  g_mutex_unlock (&hub.lock);
  return TRUE;
}

gboolean
sbx_view_server_start_receive (SbxViewServer *self,
                               int            sock,
                               GError       **error)
{
  g_return_val_if_fail (self != NULL && !self->started, FALSE);
  self->started = TRUE;   /* once: a stopped server stays stopped */
  self->sock = sock;
  /* before the sandbox sends: the kernel adds the sender's credentials */
  (void) setsockopt (sock, SOL_SOCKET, SO_PASSCRED, &(int) { 1 }, sizeof (int));
  if (!hub_ensure (error))
    {
      sbx_clear_fd (&self->sock);
      return FALSE;
    }
  if (!hub_register (self, sock, error))
    {
      sbx_clear_fd (&self->sock);
      return FALSE;
    }
  return TRUE;
}

gboolean
sbx_view_server_start_device (SbxViewServer *self,
                              int            fuse_fd,
                              int            mount_fd,
                              GError       **error)
{
  int saved;

  g_return_val_if_fail (self != NULL && !self->started && fuse_fd >= 0, FALSE);
  self->started = TRUE;   /* once: a stopped server stays stopped */
  self->mount_fd = mount_fd;
  /* Nonblocking, as a received one (receive_fuse()). */
  if (fcntl (fuse_fd, F_SETFL, fcntl (fuse_fd, F_GETFL) | O_NONBLOCK) != 0 || !hub_ensure (error))
    {
      saved = errno;
      close (fuse_fd);
      sbx_clear_fd (&self->mount_fd);
      if (error != NULL && *error == NULL)
        g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "view supervisor: fcntl: %s",
                     g_strerror (saved));
      return FALSE;
    }
  self->fuse_fd = fuse_fd;
  if (!hub_register (self, fuse_fd, error))
    {
      sbx_clear_fd (&self->fuse_fd);
      sbx_clear_fd (&self->mount_fd);
      return FALSE;
    }
  return TRUE;
}

gboolean
sbx_view_server_watch_replacement (SbxViewServer *self,
                                   int            sock)
{
  struct epoll_event ev = { .events = EPOLLIN };
  gboolean ok;

  g_return_val_if_fail (self != NULL && self->started && self->sock < 0, FALSE);
  (void) setsockopt (sock, SOL_SOCKET, SO_PASSCRED, &(int) { 1 }, sizeof (int));
  g_mutex_lock (&hub.lock);
  ok = self->hub_id != 0 && self->hub_pid == getpid ();
  if (ok)
    {
      ev.data.u64 = self->hub_id | HUB_SOCK_BIT;
      self->sock = sock;
      ok = epoll_ctl (hub.epfd, EPOLL_CTL_ADD, sock, &ev) == 0;
      if (!ok)
        self->sock = -1;
    }
  g_mutex_unlock (&hub.lock);
  if (!ok)
    close (sock);
  return ok;
}

void
sbx_view_server_stop (SbxViewServer *self)
{
  if (self == NULL)
    return;
  if (self->hub_id != 0 && self->hub_pid != getpid ())
    self->hub_id = 0;   /* another process's hub: we are its fork's child (hub_atfork_child()) */
  if (self->hub_id != 0)
    {
      /* Under the hub's lock: no event of ours is being handled, and once
       * we are out of the table none will be. */
      g_mutex_lock (&hub.lock);
      g_hash_table_remove (hub.servers, &self->hub_id);
      if (self->sock >= 0)
        (void) epoll_ctl (hub.epfd, EPOLL_CTL_DEL, self->sock, NULL);
      if (self->fuse_fd >= 0)
        (void) epoll_ctl (hub.epfd, EPOLL_CTL_DEL, self->fuse_fd, NULL);
      /* held lookups end with the connection; answers that come later
       * free their tickets (their eventfd leaves the set now: it stays
       * open while a ticket is out) */
      if (self->files != NULL && sbx_view_files_fd (self->files) >= 0)
        (void) epoll_ctl (hub.epfd, EPOLL_CTL_DEL, sbx_view_files_fd (self->files), NULL);
      g_clear_pointer (&self->files, sbx_view_files_free);
      /* The mount we hold: closed by the hub (hub_close_later()). */
      if (self->mount_fd >= 0)
        hub_close_later (sbx_steal_fd (&self->mount_fd));
      g_mutex_unlock (&hub.lock);
      self->hub_id = 0;
    }
  g_clear_pointer (&self->files, sbx_view_files_free);
  /* Closing the last descriptor of the connection aborts it: requests
   * still queued fail with ECONNABORTED, later ones with ENOTCONN. */
  sbx_clear_fd (&self->fuse_fd);
  sbx_clear_fd (&self->mount_fd);   /* never registered with the hub */
  sbx_clear_fd (&self->sock);
  sbx_view_task_clear (&self->task);
  g_clear_pointer (&self->buf, g_free);
}

SbxViewServer *
sbx_view_server_new (const SbxViewEntry *entries,
                     size_t              n_entries,
                     uint32_t            policy_flags,
                     GError            **error)
{
  g_autoptr(SbxViewServer) self = g_new0 (SbxViewServer, 1);

  g_return_val_if_fail (entries != NULL || n_entries == 0, NULL);
  self->policy_flags = policy_flags;
  /* FUSE reads our uids in the mounter's user namespace, where the sandbox
   * maps its caller to itself: ours are what the tmpfs root showed. */
  self->uid = geteuid ();
  self->gid = getegid ();
  clock_gettime (CLOCK_REALTIME, &self->born);
  g_mutex_init (&self->sink_lock);
  self->sock = self->fuse_fd = self->mount_fd = -1;
  sbx_view_task_init (&self->task);
  if (!sbx_view_skeleton_build (&self->skel, entries, n_entries, error))
    return NULL;
  self->files = sbx_view_files_new (self->skel.nodes->len + 1, sbx_view_hub_watch);
  return g_steal_pointer (&self);
}

void
sbx_view_server_free (SbxViewServer *self)
{
  if (self == NULL)
    return;
  sbx_view_server_stop (self);
  g_mutex_clear (&self->sink_lock);
  sbx_view_skeleton_clear (&self->skel);
  g_free (self);
}
