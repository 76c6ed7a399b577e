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
#include "sbx-linux-private.h"
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

/* A blocking caller's unix connect that met a full backlog is retried this
 * often (the kernel would sleep until the listener accepts). */
#define RETRY_MS 5

struct _SbxUnotify
{
  int              listener;
  int              diag;
  pid_t            init_pid;
  SbxUnotifyPolicy policy;
  uint64_t        *tcp_ports;
  char           **host_sockets;
  uint64_t         netns_ino;   /* of the diag socket: the sandbox's network namespace */
  GPtrArray       *pending;     /* Pending: connects that wait (the hub's, under its lock) */
  gboolean         ended;       /* the listener reported POLLHUP: the sandbox is gone */
};

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

typedef struct
{
  uint64_t           id;
  int                sock;       /* the caller's socket (our copy) */
  int                opath;      /* the pinned target of a retried unix connect, or -1 */
  gboolean           retry;      /* TRUE: retry the connect; FALSE: in progress, poll for POLLOUT */
  struct sockaddr_un addr;       /* what a retry connects to */
  socklen_t          addr_len;
} Pending;

/* ------------------------------------------------------------------------- */
/* Answers                                                                    */
/* ------------------------------------------------------------------------- */

static void
respond (SbxUnotify *u, uint64_t id, int err)
{
  struct seccomp_notif_resp resp;

  memset (&resp, 0, sizeof resp);
  resp.id = id;
  resp.error = err > 0 ? -err : err;
  resp.val = 0;
  /* ENOENT: the caller is gone or was interrupted; nothing to answer. */
  (void) ioctl (u->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

static gboolean
id_valid (SbxUnotify *u, uint64_t id)
{
  return ioctl (u->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

static void
pending_free (gpointer data)
{
  Pending *p = data;

  if (p->sock >= 0)
    close (p->sock);
  if (p->opath >= 0)
    close (p->opath);
  g_free (p);
}

/* ------------------------------------------------------------------------- */
/* Provenance: is a bound socket the sandbox's own?                           */
/* ------------------------------------------------------------------------- */

/* The sock_diag dump of the sandbox's network namespace: the sockfs inode
 * of the unix socket bound at the filesystem inode (@dev, @ino) (@name
 * NULL), or at the abstract @name (@name_len bytes, leading NUL included).
 * 0 when none is bound there. */
static uint64_t
diag_find (SbxUnotify *u, dev_t dev, ino_t ino, const char *name, size_t name_len)
{
  struct
  {
    struct nlmsghdr      nlh;
    struct unix_diag_req req;
  } request;
  struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
  g_autofree char *buf = g_malloc (32768);
  uint64_t found = 0;
  gboolean done = FALSE;

  memset (&request, 0, sizeof request);
  request.nlh.nlmsg_len = sizeof request;
  request.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  request.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  request.nlh.nlmsg_seq = 1;
  request.req.sdiag_family = AF_UNIX;
  request.req.udiag_states = (uint32_t) -1;
  request.req.udiag_show = name != NULL ? UDIAG_SHOW_NAME : UDIAG_SHOW_VFS;
  if (sendto (u->diag, &request, sizeof request, 0, (struct sockaddr *) &kernel, sizeof kernel) < 0)
    return 0;
  while (!done)
    {
      ssize_t n = recv (u->diag, buf, 32768, 0);
      struct nlmsghdr *h;

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      for (h = (struct nlmsghdr *) (void *) buf; NLMSG_OK (h, (size_t) n); h = NLMSG_NEXT (h, n))
        {
          struct unix_diag_msg *msg;
          struct rtattr *attr;
          int len;

          if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR)
            {
              done = TRUE;
              break;
            }
          if (found != 0)
            continue;   /* read the dump to its end */
          msg = NLMSG_DATA (h);
          len = (int) h->nlmsg_len - (int) NLMSG_LENGTH (sizeof *msg);
          for (attr = (struct rtattr *) (msg + 1); RTA_OK (attr, len); attr = RTA_NEXT (attr, len))
            {
              if (name == NULL && attr->rta_type == UNIX_DIAG_VFS
                  && RTA_PAYLOAD (attr) >= (int) sizeof (struct unix_diag_vfs))
                {
                  struct unix_diag_vfs vfs;

                  memcpy (&vfs, RTA_DATA (attr), sizeof vfs);
                  /* the kernel's dev_t: major in the high 12 bits, minor in the low 20 */
                  if (vfs.udiag_vfs_ino == ino
                      && makedev (vfs.udiag_vfs_dev >> 20, vfs.udiag_vfs_dev & 0xfffff) == dev)
                    found = msg->udiag_ino;
                }
              else if (name != NULL && attr->rta_type == UNIX_DIAG_NAME && (size_t) RTA_PAYLOAD (attr) == name_len
                       && memcmp (RTA_DATA (attr), name, name_len) == 0)
                found = msg->udiag_ino;
            }
        }
    }
  return found;
}

/* Every process descended from the sandbox's sbx-init (itself included):
 * at rung 2 it is the subreaper of the tree, at rung 1 the namespace's
 * PID 1, so no process of the sandbox escapes this set by reparenting. */
static GHashTable *
sandbox_pids (SbxUnotify *u)
{
  g_autoptr(GHashTable) parent = g_hash_table_new (NULL, NULL);
  GHashTable *set = g_hash_table_new (NULL, NULL);
  DIR *proc = opendir ("/proc");
  struct dirent *de;
  gboolean grew = TRUE;

  g_hash_table_add (set, GINT_TO_POINTER (u->init_pid));
  if (proc == NULL)
    return set;
  while ((de = readdir (proc)) != NULL)
    {
      char path[64], stat_buf[512];
      const char *close_paren;
      int fd, ppid = 0;
      ssize_t n;
      char state;

      if (de->d_name[0] < '1' || de->d_name[0] > '9')
        continue;
      g_snprintf (path, sizeof path, "/proc/%s/stat", de->d_name);
      fd = open (path, O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        continue;
      n = read (fd, stat_buf, sizeof stat_buf - 1);
      close (fd);
      if (n <= 0)
        continue;
      stat_buf[n] = '\0';
      close_paren = strrchr (stat_buf, ')');
      if (close_paren == NULL || sscanf (close_paren + 1, " %c %d", &state, &ppid) != 2)
        continue;
      g_hash_table_insert (parent, GINT_TO_POINTER (atoi (de->d_name)), GINT_TO_POINTER (ppid));
    }
  closedir (proc);
  while (grew)
    {
      GHashTableIter iter;
      gpointer pid, ppid;

      grew = FALSE;
      g_hash_table_iter_init (&iter, parent);
      while (g_hash_table_iter_next (&iter, &pid, &ppid))
        if (g_hash_table_contains (set, ppid) && !g_hash_table_contains (set, pid))
          {
            g_hash_table_add (set, pid);
            grew = TRUE;
          }
    }
  return set;
}

/* TRUE when a process of the sandbox holds the socket whose sockfs inode
 * is @sock_ino. */
static gboolean
held_by_sandbox (SbxUnotify *u, uint64_t sock_ino)
{
  g_autoptr(GHashTable) pids = sandbox_pids (u);
  g_autofree char *want = g_strdup_printf ("socket:[%" G_GUINT64_FORMAT "]", sock_ino);
  GHashTableIter iter;
  gpointer pid;

  g_hash_table_iter_init (&iter, pids);
  while (g_hash_table_iter_next (&iter, &pid, NULL))
    {
      char path[64];
      DIR *fds;
      struct dirent *de;
      gboolean hit = FALSE;

      g_snprintf (path, sizeof path, "/proc/%d/fd", GPOINTER_TO_INT (pid));
      fds = opendir (path);
      if (fds == NULL)
        continue;
      while (!hit && (de = readdir (fds)) != NULL)
        {
          char target[64];
          ssize_t n;

          if (de->d_name[0] == '.')
            continue;
          n = readlinkat (dirfd (fds), de->d_name, target, sizeof target - 1);
          if (n <= 0)
            continue;
          target[n] = '\0';
          hit = strcmp (target, want) == 0;
        }
      closedir (fds);
      if (hit)
        return TRUE;
    }
  return FALSE;
}

/* ------------------------------------------------------------------------- */
/* Decisions                                                                  */
/* ------------------------------------------------------------------------- */

static uint64_t
socket_netns (int sock)
{
  struct stat st;
  int ns = ioctl (sock, SIOCGSKNS);
  uint64_t ino = 0;

  if (ns < 0)
    return 0;
  if (fstat (ns, &st) == 0)
    ino = st.st_ino;
  close (ns);
  return ino;
}

/* @path as the target passed it, made absolute with the target's cwd (as
 * its own view names it); NULL when the cwd is gone. */
static char *
absolute_in_target (pid_t pid, const char *path)
{
  char proc[64], cwd[PATH_MAX];
  ssize_t n;

  if (path[0] == '/')
    return g_strdup (path);
  g_snprintf (proc, sizeof proc, "/proc/%d/cwd", (int) pid);
  n = readlink (proc, cwd, sizeof cwd - 1);
  if (n <= 0)
    return NULL;
  cwd[n] = '\0';
  if (cwd[0] != '/' || g_str_has_suffix (cwd, " (deleted)"))
    return NULL;
  return g_build_filename (cwd, path, NULL);
}

/* The absolute @path resolved in the target's view (its root, with ".."
 * and absolute symlinks kept inside it): an O_PATH descriptor or -errno. */
static int
resolve_in_target (pid_t pid, const char *path)
{
  char proc[64];
  struct open_how how = { 0 };
  int root, fd, saved;

  g_snprintf (proc, sizeof proc, "/proc/%d/root", (int) pid);
  root = open (proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    return -errno;
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  fd = (int) syscall (SYS_openat2, root, path, &how, sizeof how);
  saved = errno;
  close (root);
  return fd < 0 ? -saved : fd;
}

/* Like resolve_in_target(), without following a final symlink. */
static int
resolve_in_target_nofollow (pid_t pid, const char *path)
{
  char proc[64];
  struct open_how how = { 0 };
  int root, fd, saved;

  g_snprintf (proc, sizeof proc, "/proc/%d/root", (int) pid);
  root = open (proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    return -errno;
  how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  fd = (int) syscall (SYS_openat2, root, path, &how, sizeof how);
  saved = errno;
  close (root);
  return fd < 0 ? -saved : fd;
}

/* A unix connect: fills @out with what our connect uses (a copy of the
 * address, or /proc/self/fd/N of the pinned inode, *opath set) and returns
 * 0, or a negative errno to answer. */
static int
decide_unix (SbxUnotify         *u,
             pid_t               pid,
             int                 sock,
             const char         *addr,
             socklen_t           len,
             struct sockaddr_un *out,
             socklen_t          *out_len,
             int                *opath)
{
  const struct sockaddr_un *sun = (const struct sockaddr_un *) (const void *) addr;
  size_t path_len;
  struct stat st;
  uint64_t sock_ino;
  int fd;

  memset (out, 0, sizeof *out);
  memcpy (out, addr, MIN ((size_t) len, sizeof *out));
  *out_len = len;
  /* Nothing the kernel can look up: it answers (EINVAL) from these bytes. */
  if (len <= offsetof (struct sockaddr_un, sun_path) || sun->sun_family != AF_UNIX)
    return 0;
  path_len = len - offsetof (struct sockaddr_un, sun_path);
  if (sun->sun_path[0] == '\0')
    {
      uint64_t ns = socket_netns (sock);

      /* The kernel looks an abstract name up in the socket's namespace. */
      if (ns == 0 || ns != u->netns_ino)
        return -EACCES;
      if (u->policy.private_netns)
        return 0;
      sock_ino = diag_find (u, 0, 0, sun->sun_path, path_len);
      if (sock_ino == 0)
        return -ECONNREFUSED;
      return held_by_sandbox (u, sock_ino) ? 0 : -EACCES;
    }
  {
    g_autofree char *given = g_strndup (sun->sun_path, path_len);
    g_autofree char *path = absolute_in_target (pid, given);

    if (path == NULL)
      return -ENOENT;
    if (u->policy.host_sockets != NULL && g_strv_contains (u->policy.host_sockets, path))
      {
        /* A host socket the profile names: ours to resolve, in the host's
         * view, as the caller named it. */
        fd = open (path, O_PATH | O_CLOEXEC);
        if (fd < 0)
          return -errno;
      }
    else
      {
        fd = resolve_in_target (pid, path);
        if (fd < 0)
          return fd == -ELOOP || fd == -EXDEV ? -EACCES : fd;
        if (fstat (fd, &st) == 0 && S_ISSOCK (st.st_mode))
          {
            /* Not named: only the sandbox's own socket. */
            sock_ino = diag_find (u, st.st_dev, st.st_ino, NULL, 0);
            if (sock_ino == 0 || (!u->policy.private_netns && !held_by_sandbox (u, sock_ino)))
              {
                close (fd);
                return -EACCES;
              }
          }
      }
  }
  if (fstat (fd, &st) != 0 || !S_ISSOCK (st.st_mode))
    {
      close (fd);
      return -ECONNREFUSED;
    }
  memset (out, 0, sizeof *out);
  out->sun_family = AF_UNIX;
  g_snprintf (out->sun_path, sizeof out->sun_path, "/proc/self/fd/%d", fd);
  *out_len = (socklen_t) (offsetof (struct sockaddr_un, sun_path) + strlen (out->sun_path) + 1);
  *opath = fd;
  return 0;
}

/* Landlock's TCP connect rule, for our connect of an inet socket: AF_UNSPEC
 * (a disconnect) passes, an inet address must name an allowed port.  0 or a
 * negative errno. */
static int
decide_tcp (SbxUnotify *u, int sock, const char *addr, socklen_t len)
{
  sa_family_t family;
  int type = 0, proto = 0;
  socklen_t optlen = sizeof type;
  uint16_t port;

  if (!u->policy.tcp_ruled)
    return 0;
  if (getsockopt (sock, SOL_SOCKET, SO_TYPE, &type, &optlen) != 0)
    return -errno;
  optlen = sizeof proto;
  if (getsockopt (sock, SOL_SOCKET, SO_PROTOCOL, &proto, &optlen) != 0)
    return -errno;
  if (type != SOCK_STREAM || proto != IPPROTO_TCP)
    return 0;   /* Landlock rules TCP only; the filter allows no other inet stream */
  if (len < sizeof family)
    return -EINVAL;
  memcpy (&family, addr, sizeof family);
  if (family == AF_UNSPEC)
    return 0;
  if (family == AF_INET)
    {
      struct sockaddr_in sin;

      if (len < sizeof sin)
        return -EINVAL;
      memcpy (&sin, addr, sizeof sin);
      port = ntohs (sin.sin_port);
    }
  else if (family == AF_INET6)
    {
      struct sockaddr_in6 sin6;

      if (len < offsetof (struct sockaddr_in6, sin6_scope_id))
        return -EINVAL;
      memset (&sin6, 0, sizeof sin6);
      memcpy (&sin6, addr, MIN ((size_t) len, sizeof sin6));
      port = ntohs (sin6.sin6_port);
    }
  else
    return -EAFNOSUPPORT;
  for (size_t i = 0; i < u->policy.n_tcp_ports; i++)
    if (u->tcp_ports[i] == port)
      return 0;
  return -EACCES;
}

/* Our connect of the caller's socket, never blocking this thread.  Answers
 * now, or adds a Pending to @pending. */
static void
connect_for (SbxUnotify *u, uint64_t id, int sock, const struct sockaddr *addr, socklen_t len, int opath,
             GPtrArray *pending)
{
  int flags = fcntl (sock, F_GETFL);
  gboolean blocking = flags >= 0 && !(flags & O_NONBLOCK);
  int r, err;
  Pending *p;

  /* The open file is the caller's: O_NONBLOCK for the one call only. */
  if (blocking)
    fcntl (sock, F_SETFL, flags | O_NONBLOCK);
  r = connect (sock, addr, len);
  err = r == 0 ? 0 : errno;
  if (blocking)
    fcntl (sock, F_SETFL, flags);
  if (err == 0 || !blocking || (err != EINPROGRESS && err != EAGAIN))
    {
      respond (u, id, err);
      close (sock);
      if (opath >= 0)
        close (opath);
      return;
    }
  p = g_new0 (Pending, 1);
  p->id = id;
  p->sock = sock;
  p->opath = opath;
  p->retry = err == EAGAIN;
  memcpy (&p->addr, addr, MIN ((size_t) len, sizeof p->addr));
  p->addr_len = len;
  g_ptr_array_add (pending, p);
}

static int
caller_pidfd (pid_t pid)
{
  int fd = (int) syscall (SYS_pidfd_open, pid, PIDFD_THREAD);

  if (fd < 0 && errno == EINVAL)
    fd = (int) syscall (SYS_pidfd_open, pid, 0);   /* before Linux 6.9: a thread-group leader only */
  return fd;
}

static void
handle_connect (SbxUnotify *u, const struct seccomp_notif *req, GPtrArray *pending)
{
  char addr[sizeof (struct sockaddr_storage)];
  struct sockaddr_un target;
  socklen_t target_len = 0;
  const struct sockaddr *use;
  socklen_t use_len;
  int fd_nr = (int) (uint32_t) req->data.args[0];
  uint64_t remote = req->data.args[1];
  int len = (int) (uint32_t) req->data.args[2];
  int pidfd, sock, domain = 0, opath = -1, verdict;
  socklen_t optlen = sizeof domain;

  if (len < 0 || (size_t) len > sizeof addr)
    {
      respond (u, req->id, EINVAL);
      return;
    }
  pidfd = caller_pidfd ((pid_t) req->pid);
  if (pidfd < 0 || !id_valid (u, req->id))
    {
      if (pidfd >= 0)
        close (pidfd);
      respond (u, req->id, ESRCH);
      return;
    }
  sock = (int) syscall (SYS_pidfd_getfd, pidfd, fd_nr, 0);
  close (pidfd);
  if (sock < 0)
    {
      respond (u, req->id, errno == EBADF ? EBADF : EPERM);
      return;
    }
  if (len > 0)
    {
      struct iovec local = { addr, (size_t) len };
      struct iovec far = { (void *) (uintptr_t) remote, (size_t) len };

      if (process_vm_readv ((pid_t) req->pid, &local, 1, &far, 1, 0) != len)
        {
          close (sock);
          respond (u, req->id, EFAULT);
          return;
        }
    }
  /* The memory read and the descriptor taken belong to the caller. */
  if (!id_valid (u, req->id))
    {
      close (sock);
      return;
    }
  if (getsockopt (sock, SOL_SOCKET, SO_DOMAIN, &domain, &optlen) != 0)
    {
      int err = errno;

      close (sock);
      respond (u, req->id, err);
      return;
    }
  use = (const struct sockaddr *) (const void *) addr;
  use_len = (socklen_t) len;
  if (domain == AF_UNIX)
    {
      verdict = decide_unix (u, (pid_t) req->pid, sock, addr, (socklen_t) len, &target, &target_len, &opath);
      use = (const struct sockaddr *) &target;
      use_len = target_len;
    }
  else if (domain == AF_INET || domain == AF_INET6)
    verdict = decide_tcp (u, sock, addr, (socklen_t) len);
  else
    verdict = 0;
  if (verdict < 0)
    {
      close (sock);
      respond (u, req->id, -verdict);
      return;
    }
  connect_for (u, req->id, sock, use, use_len, opath, pending);
}

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

/* The target's fsuid and whether it is in group @gid (its fsgid or a
 * supplementary group), from /proc/PID/status.  FALSE when unreadable. */
static gboolean
target_ids (pid_t pid, gid_t gid, uid_t *fsuid, gboolean *in_group)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/status", (int) pid);
  g_autofree char *text = NULL;
  g_auto(GStrv) lines = NULL;
  gboolean have_uid = FALSE;

  *in_group = FALSE;
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return FALSE;
  lines = g_strsplit (text, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      unsigned long r, e, s, f;

      if (sscanf (lines[i], "Uid: %lu %lu %lu %lu", &r, &e, &s, &f) == 4)
        {
          *fsuid = (uid_t) f;
          have_uid = TRUE;
        }
      else if (sscanf (lines[i], "Gid: %lu %lu %lu %lu", &r, &e, &s, &f) == 4 && (gid_t) f == gid)
        *in_group = TRUE;
      else if (g_str_has_prefix (lines[i], "Groups:"))
        {
          g_auto(GStrv) groups = g_strsplit_set (lines[i] + 7, " \t", -1);

          for (guint k = 0; groups[k] != NULL; k++)
            if (groups[k][0] != '\0' && (gid_t) g_ascii_strtoull (groups[k], NULL, 10) == gid)
              *in_group = TRUE;
        }
    }
  return have_uid;
}

/* chmod, fchmod, fchmodat, fchmodat2 with S_ISGID and without S_ISUID (the
 * filter sends nothing else): performed here on a directory, refused
 * (EPERM) on anything else.  The target is opened without following a
 * final symlink (O_PATH | O_NOFOLLOW; a descriptor's own file for fchmod)
 * and pinned, then checked: a directory, owned by the target's fsuid (the
 * kernel's rule for an unprivileged chmod, which our credentials might
 * bypass), and the set-gid bit dropped as the kernel would when the
 * target is not in the directory's group.  The chmod goes through
 * /proc/self/fd/N of the pinned inode, on the target's own mount, so a
 * read-only mount still refuses (EROFS).  Landlock does not mediate chmod,
 * so this grants nothing a plain chmod of the same directory would not. */
static void
handle_chmod (SbxUnotify *u, const struct seccomp_notif *req, const char *name)
{
  gboolean by_fd = strcmp (name, "fchmod") == 0;
  gboolean at = strcmp (name, "fchmodat") == 0 || strcmp (name, "fchmodat2") == 0;
  int mode_arg = by_fd || !at ? 1 : 2;
  mode_t mode = (mode_t) (req->data.args[mode_arg] & 07777);
  int fd = -1, err = 0;
  char proc[64];
  struct stat st;
  uid_t fsuid = (uid_t) -1;
  gboolean in_group = FALSE;

  if (by_fd || (at && (int) (uint32_t) req->data.args[0] != AT_FDCWD))
    {
      int pidfd = caller_pidfd ((pid_t) req->pid);
      int nr = (int) (uint32_t) req->data.args[0];

      if (pidfd < 0)
        {
          respond (u, req->id, ESRCH);
          return;
        }
      fd = (int) syscall (SYS_pidfd_getfd, pidfd, nr, 0);
      close (pidfd);
      if (fd < 0)
        {
          respond (u, req->id, EBADF);
          return;
        }
    }
  if (!by_fd)
    {
      char path[PATH_MAX];
      struct iovec local = { path, sizeof path - 1 };
      struct iovec far = { (void *) (uintptr_t) req->data.args[at ? 1 : 0], sizeof path - 1 };
      ssize_t n = process_vm_readv ((pid_t) req->pid, &local, 1, &far, 1, 0);
      int dirfd = fd, target;

      /* a short read ends at the page boundary: the string must end before it */
      if (n <= 0 || memchr (path, '\0', (size_t) n) == NULL)
        {
          if (dirfd >= 0)
            close (dirfd);
          respond (u, req->id, n <= 0 ? EFAULT : ENAMETOOLONG);
          return;
        }
      if (dirfd >= 0 && path[0] != '/')
        {
          struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                                  .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };

          /* relative to the caller's directory: no symlink on the way (its
           * absolute target would be resolved in our view) */
          target = (int) syscall (SYS_openat2, dirfd, path, &how, sizeof how);
          target = target < 0 ? -errno : target;
        }
      else
        {
          g_autofree char *abs = absolute_in_target ((pid_t) req->pid, path);

          target = abs == NULL ? -ENOENT : resolve_in_target_nofollow ((pid_t) req->pid, abs);
        }
      if (dirfd >= 0)
        close (dirfd);
      if (target < 0)
        {
          respond (u, req->id, target == -ELOOP ? EPERM : -target);
          return;
        }
      fd = target;
    }
  if (!id_valid (u, req->id))
    {
      close (fd);
      return;
    }
  if (fstat (fd, &st) != 0 || !S_ISDIR (st.st_mode))
    err = EPERM;   /* set-gid on a file, a link or anything else: the set-id rule */
  else if (!target_ids ((pid_t) req->pid, st.st_gid, &fsuid, &in_group) || fsuid != st.st_uid)
    err = EPERM;   /* not the owner: what the kernel answers the target */
  else
    {
      if (!in_group)
        mode &= ~(mode_t) S_ISGID;
      g_snprintf (proc, sizeof proc, "/proc/self/fd/%d", fd);
      err = chmod (proc, mode) == 0 ? 0 : errno;
    }
  close (fd);
  respond (u, req->id, err);
}

static void
handle_one (SbxUnotify *u, GPtrArray *pending)
{
  struct seccomp_notif req;

  memset (&req, 0, sizeof req);
  if (ioctl (u->listener, SECCOMP_IOCTL_NOTIF_RECV, &req) != 0)
    return;   /* ENOENT: the caller went away before we read it */
  if (is_call (&req, "connect"))
    handle_connect (u, &req, pending);
  else if (is_call (&req, "chmod") || is_call (&req, "fchmod") || is_call (&req, "fchmodat")
           || is_call (&req, "fchmodat2"))
    {
      char *name = NULL;

      for (const char *const *c = (const char *const[]) { "chmod", "fchmod", "fchmodat", "fchmodat2", NULL };
           *c != NULL && name == NULL; c++)
        if (is_call (&req, *c))
          name = (char *) *c;
      handle_chmod (u, &req, name);
    }
  else
    respond (u, req.id, EPERM);   /* the filter supervises nothing else: fail closed */
}

/* A pending connect is ready (POLLOUT) or due for a retry. */
static gboolean
pending_step (SbxUnotify *u, Pending *p, short revents)
{
  int err = 0;

  if (!id_valid (u, p->id))
    return TRUE;   /* interrupted: the caller restarts or gives up */
  if (p->retry)
    {
      int flags = fcntl (p->sock, F_GETFL);

      fcntl (p->sock, F_SETFL, flags | O_NONBLOCK);
      err = connect (p->sock, (struct sockaddr *) &p->addr, p->addr_len) == 0 ? 0 : errno;
      fcntl (p->sock, F_SETFL, flags);
      if (err == EAGAIN)
        return FALSE;
    }
  else
    {
      socklen_t len = sizeof err;

      if (!(revents & (POLLOUT | POLLERR | POLLHUP)))
        return FALSE;
      if (getsockopt (p->sock, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
        err = errno;
    }
  respond (u, p->id, err);
  return TRUE;
}

typedef struct
{
  SbxUnotify *u;
  Pending    *p;   /* NULL: the listener */
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
          Polled item = { u, NULL };

          if (!u->ended)
            {
              g_array_append_val (pfds, pfd);
              g_array_append_val (polled, item);
            }
          for (guint k = 0; k < u->pending->len; k++)
            {
              Pending *p = g_ptr_array_index (u->pending, k);
              struct pollfd ppfd = { p->sock, p->retry ? 0 : POLLOUT, 0 };
              Polled pitem = { u, p };

              any_retry |= p->retry;
              g_array_append_val (pfds, ppfd);
              g_array_append_val (polled, pitem);
            }
        }
      g_mutex_unlock (&hub.lock);

      if (poll ((struct pollfd *) (void *) pfds->data, pfds->len, any_retry ? RETRY_MS : -1) < 0
          && errno != EINTR)
        g_usleep (RETRY_MS * 1000);   /* ENOMEM: try again rather than abandon every sandbox */
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

          if (item->p != NULL && pending_step (item->u, item->p, revents))
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
  u->pending = g_ptr_array_new_with_free_func (pending_free);
  u->netns_ino = socket_netns (diag);
  if (u->netns_ino == 0)
    {
      int saved = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "connect supervisor: the sandbox's network namespace (SIOCGSKNS): %s", g_strerror (saved));
      sbx_unotify_stop (u);
      return NULL;
    }

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
  int saved;

  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
    {
      saved = errno;
      *error_message = g_strdup_printf ("linux: socketpair for the connect supervisor: %s", g_strerror (saved));
      pair[0] = pair[1] = -1;
      return FALSE;
    }
  for (int i = 0; i < 2; i++)
    pair[i] = sbx_linux_fd_above_stdio (pair[i]);
  if (pair[0] < 0 || pair[1] < 0)
    {
      saved = errno;
      for (int i = 0; i < 2; i++)
        if (pair[i] >= 0)
          close (pair[i]);
      pair[0] = pair[1] = -1;
      *error_message = g_strdup_printf ("linux: fcntl(F_DUPFD_CLOEXEC): %s", g_strerror (saved));
      return FALSE;
    }
  return TRUE;
}

/* The listener and the diag socket B sent (SCM_RIGHTS, exactly two,
 * checked: a seccomp listener is an anonymous inode, the diag socket a
 * socket). */
static gboolean
receive_pair (int sock, int *listener, int *diag)
{
  union
  {
    struct cmsghdr hdr;
    char           buf[CMSG_SPACE (3 * sizeof (int))];
  } control;
  struct msghdr msg = { 0 };
  struct iovec iov;
  struct cmsghdr *cmsg;
  struct stat st;
  int fds[3] = { -1, -1, -1 };
  int n_fds = 0;
  char byte;
  ssize_t n;

  memset (&control, 0, sizeof control);
  iov.iov_base = &byte;
  iov.iov_len = 1;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.buf;
  msg.msg_controllen = sizeof control.buf;
  do
    n = recvmsg (sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return FALSE;
  for (cmsg = CMSG_FIRSTHDR (&msg); cmsg != NULL; cmsg = CMSG_NXTHDR (&msg, cmsg))
    if (cmsg->cmsg_level == SOL_SOCKET && cmsg->cmsg_type == SCM_RIGHTS)
      {
        size_t len = (cmsg->cmsg_len - CMSG_LEN (0)) / sizeof (int);

        for (size_t k = 0; k < len && n_fds < 3; k++)
          memcpy (&fds[n_fds++], CMSG_DATA (cmsg) + k * sizeof (int), sizeof (int));
      }
  if (n != 1 || n_fds != 2 || (msg.msg_flags & (MSG_CTRUNC | MSG_TRUNC))
      || fstat (fds[1], &st) != 0 || !S_ISSOCK (st.st_mode)
      || fstat (fds[0], &st) != 0 || S_ISSOCK (st.st_mode) || S_ISREG (st.st_mode))
    {
      for (int k = 0; k < n_fds; k++)
        close (fds[k]);
      errno = EPROTO;
      return FALSE;
    }
  *listener = sbx_linux_fd_above_stdio (fds[0]);
  *diag = sbx_linux_fd_above_stdio (fds[1]);
  return TRUE;
}

SbxUnotify *
sbx_linux_unotify_begin (const SbxLinuxSpec *spec,
                         int                 sock,
                         pid_t               init_pid,
                         char              **error_message)
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
  policy.rung = spec->rung;
  policy.private_netns = spec->rung == SBX_LINUX_RUNG_USERNS && spec->netns;
  if (spec->landlock != NULL
      && (sbx_landlock_plan_handled_access_net (spec->landlock) & LANDLOCK_ACCESS_NET_CONNECT_TCP))
    {
      policy.tcp_ruled = TRUE;
      policy.tcp_ports = sbx_landlock_plan_tcp_ports (spec->landlock, &policy.n_tcp_ports);
    }
  policy.host_sockets = (const char * const *) spec->host_sockets;
  u = sbx_unotify_start (listener, diag, init_pid, &policy, &error);
  if (u == NULL)
    *error_message = g_strdup_printf ("%s: %s",
                                      spec->rung == SBX_LINUX_RUNG_USERNS ? SBX_LINUX_BACKEND_USERNS
                                                                          : SBX_LINUX_BACKEND_LANDLOCK,
                                      error->message);
  return u;
}
