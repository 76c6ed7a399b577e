/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The connect supervisor: decides every connect(2) of a sandbox whose filter
 * hands them over (SBX_SECCOMP_ENFORCES_UNIX_SUPERVISED, sbx-seccomp.c).
 *
 * Why: connecting to a pathname unix socket needs only write permission on
 * its inode, which read-only mounts do not remove, and Landlock below ABI 9
 * does not mediate it; a host daemon listening inside any root (tmux,
 * gpg-agent, an editor) would run code for the sandbox.  Refusing unix
 * sockets outright breaks every program that talks to itself through one
 * (multiprocessing, asyncio, git's credential cache).
 *
 * How, for one notification (never SECCOMP_USER_NOTIF_FLAG_CONTINUE, which
 * would let the kernel re-read memory and a descriptor table another
 * thread of the target can change after the decision):
 *  1. take the caller's socket itself (pidfd_getfd: the same open file, so
 *     its options, bind and flags stay the caller's) and read the address
 *     once (process_vm_readv), then check that the notification is still
 *     alive (SECCOMP_IOCTL_NOTIF_ID_VALID: the pid was not reused);
 *  2. a unix socket with a pathname: resolve it ourselves in the target's
 *     view (openat2 under /proc/PID/root with RESOLVE_IN_ROOT, relative to
 *     its cwd) to an O_PATH descriptor, which pins the inode: a symlink
 *     swapped after this changes nothing.  Allowed only when the inode is a
 *     socket bound by the sandbox itself: the sock_diag dump of the
 *     sandbox's network namespace (UDIAG_SHOW_VFS) lists it, and without a
 *     namespace of its own a process of the sandbox (a descendant of its
 *     sbx-init) holds the bound socket.  Then connect the caller's socket
 *     to exactly that inode through /proc/self/fd/N;
 *     an abstract name: in the sandbox's own network namespace the kernel
 *     looks it up there (the socket's namespace), so it is the sandbox's;
 *     in the host's, the bound socket must be held by a sandbox process;
 *  3. any other socket (TCP, netlink): connect it with the bytes read, after
 *     the policy's TCP port rule (Landlock's, which this thread does not
 *     carry);
 *  4. answer with the connect's result.  A blocking caller's connect that
 *     must wait (TCP in progress, a full unix backlog) waits here without
 *     blocking the thread: nonblocking connect, then poll.
 *
 * One thread (the hub, below) serves every sandbox of the process: a
 * sandbox is registered when its spawn succeeds and unregistered (its
 * descriptors closed) when it is finished; a listener that reports POLLHUP
 * (every process of the sandbox gone) is no longer polled.  Named host
 * sockets (the profile's "host-sockets") are matched by the absolute path
 * the target connects to and resolved in the host's view.
 */
#include "sbx-linux-unotify.h"
#include "sbx-linux-unotify-private.h"
#include "sbx-linux-private.h"
#include "sbx-linux-clone.h"
#include "sbx-landlock-compat.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <linux/audit.h>
#include <linux/netlink.h>
#include <linux/openat2.h>
#include <linux/rtnetlink.h>
#include <linux/seccomp.h>
#include <linux/sock_diag.h>
#include <linux/sockios.h>
#include <linux/unix_diag.h>
#include <seccomp.h>

#include <gio/gio.h>

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

/* The hub: one thread serves every sandbox's listener in the process (a
 * thread per sandbox would put a thousand threads behind a thousand
 * running sandboxes).  It starts with the first registered sandbox and is
 * joined when the last one is unregistered, so an idle process holds no
 * thread or descriptor of it.  LOCKING: @lock protects @entries,
 * @generation, @current and every registered SbxUnotify; the thread decides
 * and answers with it held (no decision blocks: nonblocking connects, /proc
 * and sock_diag reads), and drops it only to poll.  stop() takes it to
 * unregister, so after stop() the thread never touches that sandbox again.
 * The lock is never held across the join. */
typedef struct
{
  GThread *thread;
  int      wake_fd;
  gboolean quit;      /* under the lock: leave the loop */
} HubThread;

static struct
{
  GMutex     lock;
  HubThread *current;      /* the running thread, or NULL */
  GPtrArray *entries;      /* SbxUnotify * */
  guint64    generation;   /* bumped on every change of @entries */
} hub;


/* The system call of @req by name (connect is the only one supervised). */
static gboolean
is_call (const struct seccomp_notif *req, const char *name)
{
  uint32_t arch;
  char *got;
  gboolean same;

  switch (req->data.arch)
    {
    case AUDIT_ARCH_X86_64:
      arch = SCMP_ARCH_X86_64;
      break;
    case AUDIT_ARCH_I386:
      arch = SCMP_ARCH_X86;
      break;
    case AUDIT_ARCH_AARCH64:
      arch = SCMP_ARCH_AARCH64;
      break;
    case AUDIT_ARCH_ARM:
      arch = SCMP_ARCH_ARM;
      break;
    default:
      return FALSE;
    }
  got = seccomp_syscall_resolve_num_arch (arch, req->data.nr);
  same = got != NULL && strcmp (got, name) == 0;
  free (got);
  return same;
}

static void
handle_one (SbxUnotify *u, GPtrArray *pending)
{
  struct seccomp_notif req;

  memset (&req, 0, sizeof req);
  if (ioctl (u->listener, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0)
    return;   /* ENOENT: the caller went away before we read it */
  if (is_call (&req, "connect"))
    {
      SbxUnotifyHeld held = { NULL, NULL, 0, -1 };

      sbx_unotify_handle_connect (u, &req, pending, &held);
      if (held.path != NULL && !sbx_unotify_hold (u, req.id, (pid_t) req.pid, held.sock, held.path, held.reason,
                                                  held.err))
        {
          sbx_unotify_report_denial (u, (pid_t) req.pid, held.path, held.reason);
          close (held.sock);
          sbx_unotify_respond (u, req.id, held.err);
        }
      g_free (held.path);
    }
  else if (is_call (&req, "chmod") || is_call (&req, "fchmod") || is_call (&req, "fchmodat")
           || is_call (&req, "fchmodat2"))
    {
      char *name = NULL;

      for (const char *const *c = (const char *const[]) { "chmod", "fchmod", "fchmodat", "fchmodat2", NULL };
           *c != NULL && name == NULL; c++)
        if (is_call (&req, *c))
          name = (char *) *c;
      sbx_unotify_handle_chmod (u, &req, name);
    }
  else
    sbx_unotify_respond (u, req.id, EPERM);   /* the filter supervises nothing else: fail closed */
}

typedef struct
{
  SbxUnotify *u;
  SbxUnotifyPending    *p;   /* NULL: the listener, or the asks' eventfd */
  gboolean              asks; /* the asks' eventfd: answers to held connects */
} Polled;

static void
hub_wake (HubThread *t)
{
  uint64_t one = 1;

  (void) write (t->wake_fd, &one, sizeof one);
}

static gpointer
serve (gpointer data)
{
  HubThread *me = data;
  g_autoptr(GArray) pfds = g_array_new (FALSE, TRUE, sizeof (struct pollfd));
  g_autoptr(GArray) polled = g_array_new (FALSE, TRUE, sizeof (Polled));

  for (;;)
    {
      struct pollfd wake = { me->wake_fd, POLLIN, 0 };
      gboolean any_retry = FALSE;
      guint64 generation;
      uint64_t count;

      g_mutex_lock (&hub.lock);
      if (me->quit)
        {
          g_mutex_unlock (&hub.lock);
          return NULL;
        }
      generation = hub.generation;
      g_array_set_size (pfds, 0);
      g_array_set_size (polled, 0);
      g_array_append_val (pfds, wake);
      g_array_set_size (polled, 1);
      for (guint i = 0; i < hub.entries->len; i++)
        {
          SbxUnotify *u = g_ptr_array_index (hub.entries, i);
          struct pollfd pfd = { u->listener, POLLIN, 0 };
          Polled item = { u, NULL, FALSE };

          if (!u->ended)
            {
              g_array_append_val (pfds, pfd);
              g_array_append_val (polled, item);
            }
          if (u->asks != NULL)
            {
              /* polled after POLLHUP too: a late answer frees its ticket */
              struct pollfd apfd = { sbx_unotify_asks_fd (u->asks), POLLIN, 0 };
              Polled aitem = { u, NULL, TRUE };

              g_array_append_val (pfds, apfd);
              g_array_append_val (polled, aitem);
            }
          for (guint k = 0; k < u->pending->len; k++)
            {
              SbxUnotifyPending *p = g_ptr_array_index (u->pending, k);
              struct pollfd ppfd = { p->sock, p->retry ? 0 : POLLOUT, 0 };
              Polled pitem = { u, p, FALSE };

              any_retry |= p->retry;
              g_array_append_val (pfds, ppfd);
              g_array_append_val (polled, pitem);
            }
        }
      g_mutex_unlock (&hub.lock);

      if (poll ((struct pollfd *) (void *) pfds->data, pfds->len, any_retry ? SBX_UNOTIFY_RETRY_MS : -1) < 0
          && errno != EINTR)
        g_usleep (SBX_UNOTIFY_RETRY_MS * 1000);   /* ENOMEM: try again rather than abandon every sandbox */
      if (g_array_index (pfds, struct pollfd, 0).revents & POLLIN)
        (void) read (me->wake_fd, &count, sizeof count);

      g_mutex_lock (&hub.lock);
      if (hub.generation != generation)
        {
          /* a sandbox came or went: what was polled may be stale */
          g_mutex_unlock (&hub.lock);
          continue;
        }
      for (guint i = 1; i < pfds->len; i++)
        {
          Polled *item = &g_array_index (polled, Polled, i);
          short revents = g_array_index (pfds, struct pollfd, i).revents;

          if (item->asks)
            {
              if (revents & POLLIN)
                sbx_unotify_asks_drain (item->u, item->u->pending);
              continue;
            }
          if (item->p != NULL && sbx_unotify_pending_step (item->u, item->p, revents))
            {
              g_ptr_array_remove (item->u->pending, item->p);
              item->p = NULL;
              continue;
            }
          if (item->p != NULL)
            continue;
          if (revents & POLLIN)
            handle_one (item->u, item->u->pending);
          else if (revents & (POLLHUP | POLLERR | POLLNVAL))
            item->u->ended = TRUE;   /* every process of the sandbox is gone */
        }
      g_mutex_unlock (&hub.lock);
    }
  return NULL;
}

SbxUnotify *
sbx_unotify_start (int                     listener,
                   int                     diag,
                   pid_t                   init_pid,
                   const SbxUnotifyPolicy *policy,
                   GError                **error)
{
  SbxUnotify *u = g_new0 (SbxUnotify, 1);

  u->listener = listener;
  u->diag = diag;
  u->init_pid = init_pid;
  u->policy = *policy;
  u->tcp_ports = policy->n_tcp_ports > 0 ? g_memdup2 (policy->tcp_ports, policy->n_tcp_ports * sizeof (uint64_t))
                                         : NULL;
  u->policy.tcp_ports = u->tcp_ports;
  u->host_sockets = g_strdupv ((char **) policy->host_sockets);
  u->policy.host_sockets = (const char * const *) u->host_sockets;
  /* The sink as far as the host's struct_size goes (an older host's is
   * shorter: no ask). */
  if (policy->denials != NULL && policy->denials->struct_size >= SBX_BACKEND_DENIAL_SINK_V1_MIN_SIZE)
    memcpy (&u->denials, policy->denials, MIN ((size_t) policy->denials->struct_size, sizeof u->denials));
  u->asks = sbx_unotify_asks_new (&u->denials);
  u->policy.denials = NULL;
  u->pending = g_ptr_array_new_with_free_func (sbx_unotify_pending_free);

  g_mutex_lock (&hub.lock);
  if (hub.entries == NULL)
    hub.entries = g_ptr_array_new ();
  if (hub.current == NULL)
    {
      HubThread *t = g_new0 (HubThread, 1);
      GError *local = NULL;

      t->wake_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
      if (t->wake_fd >= 0)
        t->thread = g_thread_try_new ("sbx-unotify", serve, t, &local);
      if (t->thread == NULL)
        {
          int saved = errno;

          g_mutex_unlock (&hub.lock);
          if (t->wake_fd >= 0)
            close (t->wake_fd);
          g_free (t);
          if (local != NULL)
            g_propagate_prefixed_error (error, local, "connect supervisor: ");
          else
            g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), "connect supervisor: eventfd: %s",
                         g_strerror (saved));
          sbx_unotify_stop (u);
          return NULL;
        }
      hub.current = t;
    }
  g_ptr_array_add (hub.entries, u);
  hub.generation++;
  hub_wake (hub.current);
  g_mutex_unlock (&hub.lock);
  return u;
}

void
sbx_unotify_stop (SbxUnotify *self)
{
  HubThread *ending = NULL;

  if (self == NULL)
    return;
  g_mutex_lock (&hub.lock);
  if (hub.entries != NULL && g_ptr_array_remove (hub.entries, self))
    {
      hub.generation++;
      if (hub.entries->len == 0)
        {
          /* the last sandbox: the thread ends (joined below, unlocked) */
          ending = g_steal_pointer (&hub.current);
          ending->quit = TRUE;
          hub_wake (ending);
        }
      else
        hub_wake (hub.current);
    }
  g_mutex_unlock (&hub.lock);
  if (ending != NULL)
    {
      g_thread_join (ending->thread);
      close (ending->wake_fd);
      g_free (ending);
    }
  /* Unregistered: the thread drops what it polled before it looks again. */
  sbx_unotify_asks_stop (self->asks);
  g_ptr_array_unref (self->pending);
  if (self->listener >= 0)
    close (self->listener);
  if (self->diag >= 0)
    close (self->diag);
  g_free (self->tcp_ports);
  g_strfreev (self->host_sockets);
  g_free (self);
}

gboolean
sbx_unotify_channel_open (int    pair[2],
                          char **error_message)
{
  const char *failed_call = NULL;

  if (sbx_linux_seqpacket (pair, &failed_call) != 0)
    {
      int saved = errno;

      *error_message = g_strdup_printf ("linux: %s for the connect supervisor: %s", failed_call,
                                        g_strerror (saved));
      return FALSE;
    }
  return TRUE;
}

/* The listener and the diag socket B sent (exactly two, checked: a seccomp
 * listener is an anonymous inode, the diag socket a socket). */
static gboolean
receive_pair (int sock, int *listener, int *diag)
{
  struct stat st;
  int fds[2] = { -1, -1 };
  char byte;
  int n_fds = sbx_linux_receive_fds (sock, &byte, fds, 2);

  if (n_fds < 0)
    return FALSE;
  /* No descriptor: the filter got no listener (an outer sandbox holds the
   * one a task may have; sbx_linux_child): every supervised call fails
   * with ENOSYS in the kernel, and there is nothing to supervise. */
  if (n_fds == 0)
    {
      *listener = -1;
      *diag = -1;
      return TRUE;
    }
  /* The listener, and the sock_diag socket unless an outer sandbox refused
   * it to the child (then *diag is -1: no sandbox socket can be proven its
   * own, and every connect that needs that is refused). */
  if ((n_fds == 2 && (fstat (fds[1], &st) != 0 || !S_ISSOCK (st.st_mode)))
      || fstat (fds[0], &st) != 0 || S_ISSOCK (st.st_mode) || S_ISREG (st.st_mode))
    {
      for (int k = 0; k < n_fds; k++)
        close (fds[k]);
      errno = EPROTO;
      return FALSE;
    }
  *listener = fds[0];
  *diag = fds[1];
  return TRUE;
}

SbxUnotify *
sbx_linux_unotify_begin (const SbxLinuxSpec           *spec,
                         int                           sock,
                         pid_t                         init_pid,
                         const SbxBackendDenialSinkV1 *denials,
                         char                        **error_message)
{
  g_autoptr(GError) error = NULL;
  SbxUnotifyPolicy policy = { 0 };
  SbxUnotify *u;
  int listener = -1, diag = -1;

  if (!receive_pair (sock, &listener, &diag))
    {
      int saved = errno;

      *error_message = g_strdup_printf ("%s: the seccomp listener did not arrive (%s)",
                                        spec->rung == SBX_LINUX_RUNG_USERNS ? SBX_LINUX_BACKEND_USERNS
                                                                            : SBX_LINUX_BACKEND_LANDLOCK,
                                        g_strerror (saved));
      return NULL;
    }
  if (listener < 0)
    return NULL;   /* nothing to supervise (receive_pair()); *error_message stays NULL */
  policy.rung = spec->rung;
  policy.private_netns = spec->rung == SBX_LINUX_RUNG_USERNS && spec->netns;
  if (spec->landlock != NULL
      && (sbx_landlock_plan_handled_access_net (spec->landlock) & LANDLOCK_ACCESS_NET_CONNECT_TCP))
    {
      policy.tcp_ruled = TRUE;
      policy.tcp_ports = sbx_landlock_plan_tcp_ports (spec->landlock, &policy.n_tcp_ports);
    }
  policy.host_sockets = (const char * const *) spec->host_sockets;
  policy.denials = denials;
  u = sbx_unotify_start (listener, diag, init_pid, &policy, &error);
  if (u == NULL)
    *error_message = g_strdup_printf ("%s: %s",
                                      spec->rung == SBX_LINUX_RUNG_USERNS ? SBX_LINUX_BACKEND_USERNS
                                                                          : SBX_LINUX_BACKEND_LANDLOCK,
                                      error->message);
  return u;
}
