/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The connect supervisor's connect decisions (the rules and the reasons are
 * at the top of sbx-linux-unotify.c): whether a bound socket is the
 * sandbox's own (sock_diag and the processes of the sandbox), a unix
 * connect's target (own, named, or refused), the TCP port rule, and our
 * connect of the caller's socket that never blocks the hub.
 */
#include "sbx-linux-unotify-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <linux/netlink.h>
#include <linux/openat2.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/sockios.h>
#include <linux/unix_diag.h>
#include <poll.h>

#include <gio/gio.h>

void
sbx_unotify_pending_free (gpointer data)
{
  SbxUnotifyPending *p = data;

  if (p->sock >= 0)
    close (p->sock);
  if (p->opath >= 0)
    close (p->opath);
  g_free (p);
}

/* The sock_diag dump of the sandbox's network namespace: the sockfs inode
 * of the unix socket whose sockfs inode is @sock_ino (non-zero: is that
 * socket in this namespace?), else bound at the filesystem inode (@dev,
 * @ino) (@name NULL), or at the abstract @name (@name_len bytes, leading
 * NUL included).  0 when there is none.  (SIOCGSKNS would name a socket's
 * namespace directly, but needs CAP_NET_ADMIN over it.) */
static uint64_t
diag_dump_find (SbxUnotify *u, uint64_t sock_ino, dev_t dev, ino_t ino, const char *name, size_t name_len)
{
  struct
  {
    struct nlmsghdr      nlh;
    struct unix_diag_req req;
  } request;
  struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
  g_autofree char *buf = g_malloc (65536);
  uint64_t found = 0;
  gboolean done = FALSE;

  if (u->diag < 0)
    return 0;   /* no view of the sandbox's sockets (receive_pair()): none is its own */
  memset (&request, 0, sizeof request);
  request.nlh.nlmsg_len = sizeof request;
  request.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  request.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  request.nlh.nlmsg_seq = 1;
  request.req.sdiag_family = AF_UNIX;
  /* a connect reaches only a listening socket: the rest need not be sent
   * (the caller's own socket, looked up by its inode, is in any state) */
  request.req.udiag_states = sock_ino != 0 ? (uint32_t) -1 : (1u << 10 /* TCP_LISTEN */);
  request.req.udiag_show = name != NULL ? UDIAG_SHOW_NAME : UDIAG_SHOW_VFS;
  if (sendto (u->diag, &request, sizeof request, 0, (struct sockaddr *) &kernel, sizeof kernel) < 0)
    return 0;
  while (!done)
    {
      ssize_t n = recv (u->diag, buf, 65536, 0);
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
          if (sock_ino != 0)
            {
              if (msg->udiag_ino == sock_ino)
                found = sock_ino;
              continue;
            }
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

/* diag_dump_find(), dumped again when it found nothing: a dump that runs
 * while other sockets come and go can skip an entry (netlink dumps resume
 * by position), and a socket missed here would be refused. */
static uint64_t
diag_find (SbxUnotify *u, uint64_t sock_ino, dev_t dev, ino_t ino, const char *name, size_t name_len)
{
  uint64_t found = 0;

  for (int attempt = 0; attempt < 3 && found == 0; attempt++)
    found = diag_dump_find (u, sock_ino, dev, ino, name, name_len);
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

/* TRUE when no socket at all is bound at the socket file @fd (an O_PATH
 * descriptor of it): every connect there gets ECONNREFUSED, in any network
 * namespace.  The sandbox's dump cannot say so (a host daemon, another
 * sandbox, bind in namespaces of their own), the kernel can: a connect of a
 * datagram socket of ours through /proc/self/fd/N finds the bound socket by
 * its inode wherever it was bound, and answers ECONNREFUSED only when there
 * is none.  When there is one, the connect fails with EPROTOTYPE (a stream
 * or seqpacket socket) or records a datagram peer: no connection is queued
 * and nothing is sent, so its owner observes nothing.  Any other answer
 * (EACCES: the file is not ours to write) is FALSE: the socket stays
 * refused as a host socket. */
static gboolean
nobody_bound (int fd)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  int probe = socket (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  gboolean none;

  if (probe < 0)
    return FALSE;
  g_snprintf (addr.sun_path, sizeof addr.sun_path, "/proc/self/fd/%d", fd);
  none = connect (probe, (struct sockaddr *) &addr, sizeof addr) != 0 && errno == ECONNREFUSED;
  close (probe);
  return none;
}

/* An abstract name refused: reported as "@NAME" (its bytes, a NUL or
 * control byte as '?'); -EACCES. */
static int
refuse_abstract (SbxUnotify *u, pid_t pid, const char *name, size_t len, const char *reason)
{
  g_autofree char *shown = g_malloc (len + 1);

  for (size_t i = 0; i < len; i++)
    shown[i] = i == 0 ? '@' : (guchar) name[i] < 0x20 || name[i] == 0x7f ? '?' : name[i];
  shown[len] = '\0';
  sbx_unotify_report_denial (u, pid, shown, reason);
  return -EACCES;
}

/* The refusal of a connect to the host socket @path: held for an answer
 * when the sandbox asks (@held set, nothing reported), else reported.
 * Returns -@err either way. */
static int
refuse_host (SbxUnotify  *u,
             pid_t        pid,
             const char  *path,
             const char  *reason,
             int          err,
             SbxUnotifyHeld *held)
{
  if (u->asks != NULL && u->n_held < SBX_UNOTIFY_MAX_HELD)
    {
      held->path = g_strdup (path);
      held->reason = reason;
    }
  else
    sbx_unotify_report_denial (u, pid, path, reason);
  return -err;
}

/* The pinned socket @fd (taken) as the address our connect uses:
 * /proc/self/fd/N, *opath set; 0, or a negative errno (@fd closed). */
static int
pin_target (int                 fd,
            struct sockaddr_un *out,
            socklen_t          *out_len,
            int                *opath)
{
  struct stat st;

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

/* A unix connect: fills @out with what our connect uses (a copy of the
 * address, or /proc/self/fd/N of the pinned inode, *opath set) and returns
 * 0, or a negative errno to answer (with @held set: hold it instead). */
static int
decide_unix (SbxUnotify         *u,
             pid_t               pid,
             int                 sock,
             const char         *addr,
             socklen_t           len,
             struct sockaddr_un *out,
             socklen_t          *out_len,
             int                *opath,
             SbxUnotifyHeld     *held)
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
      /* The kernel looks an abstract name up in the socket's namespace:
       * it must be the sandbox's (its dump lists the socket). */
      if (fstat (sock, &st) != 0 || diag_find (u, (uint64_t) st.st_ino, 0, 0, NULL, 0) == 0)
        return refuse_abstract (u, pid, sun->sun_path, path_len, "the connecting socket is not the sandbox's");
      if (u->policy.private_netns)
        return 0;
      sock_ino = diag_find (u, 0, 0, 0, sun->sun_path, path_len);
      if (sock_ino == 0)
        return -ECONNREFUSED;
      return held_by_sandbox (u, sock_ino)
             ? 0 : refuse_abstract (u, pid, sun->sun_path, path_len, "a host process holds this abstract name");
    }
  {
    g_autofree char *given = g_strndup (sun->sun_path, path_len);
    g_autofree char *path = sbx_unotify_absolute_in_target (pid, given);

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
        fd = sbx_unotify_resolve_in_target (pid, path);
        if (fd == -ELOOP || fd == -EXDEV)
          {
            sbx_unotify_report_denial (u, pid, path, "its path leads out of the sandbox's view through a link");
            return -EACCES;
          }
        if ((fd == -ENOENT || fd == -EACCES) && stat (path, &st) == 0 && S_ISSOCK (st.st_mode))
          {
            /* Not in the sandbox's view, but a host socket by that name:
             * reported (to the caller of sbx, never to the sandbox), and
             * answered as the view has it (ENOENT from a tmpfs root; the
             * view supervisor's FUSE root answers a host path that exists
             * EACCES, or ENOENT where the profile hides denied paths). */
            return refuse_host (u, pid, path, "a host socket outside the sandbox's view", -fd, held);
          }
        /* The view supervisor answers the first component outside the
         * view (an existing host directory such as /var) EACCES; a socket
         * path that does not exist on the host is answered as the stat of
         * that path in the sandbox is, and as outside: ENOENT (glibc's nscd
         * client, /var/run/nscd/socket). */
        if (fd == -EACCES && stat (path, &st) != 0 && errno == ENOENT)
          return -ENOENT;
        if (fd < 0)
          return fd;
        if (fstat (fd, &st) == 0 && S_ISSOCK (st.st_mode))
          {
            /* Not named: only the sandbox's own socket. */
            sock_ino = diag_find (u, 0, st.st_dev, st.st_ino, NULL, 0);
            if (sock_ino == 0 && nobody_bound (fd))
              {
                /* A stale socket file (a server of the sandbox that
                 * stopped, in its own /tmp or the workspace): nothing is
                 * reached and no grant would open anything, so it answers
                 * as outside, ECONNREFUSED, and is no denial. */
                close (fd);
                return -ECONNREFUSED;
              }
            if (sock_ino == 0 || (!u->policy.private_netns && !held_by_sandbox (u, sock_ino)))
              {
                close (fd);
                return refuse_host (u, pid, path, "a socket the sandbox did not bind", EACCES, held);
              }
          }
      }
  }
  return pin_target (fd, out, out_len, opath);
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
 * now, or adds a SbxUnotifyPending to @pending. */
static void
connect_for (SbxUnotify *u, uint64_t id, int sock, const struct sockaddr *addr, socklen_t len, int opath,
             GPtrArray *pending)
{
  int flags = fcntl (sock, F_GETFL);
  gboolean blocking = flags >= 0 && !(flags & O_NONBLOCK);
  int r, err;
  SbxUnotifyPending *p;

  /* The open file is the caller's: O_NONBLOCK for the one call only. */
  if (blocking)
    fcntl (sock, F_SETFL, flags | O_NONBLOCK);
  r = connect (sock, addr, len);
  err = r == 0 ? 0 : errno;
  if (blocking)
    fcntl (sock, F_SETFL, flags);
  if (err == 0 || !blocking || (err != EINPROGRESS && err != EAGAIN))
    {
      sbx_unotify_respond (u, id, err);
      close (sock);
      if (opath >= 0)
        close (opath);
      return;
    }
  p = g_new0 (SbxUnotifyPending, 1);
  p->id = id;
  p->sock = sock;
  p->opath = opath;
  p->retry = err == EAGAIN;
  memcpy (&p->addr, addr, MIN ((size_t) len, sizeof p->addr));
  p->addr_len = len;
  g_ptr_array_add (pending, p);
}

void
sbx_unotify_handle_connect (SbxUnotify *u, const struct seccomp_notif *req, GPtrArray *pending, SbxUnotifyHeld *held)
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
      sbx_unotify_respond (u, req->id, EINVAL);
      return;
    }
  pidfd = sbx_unotify_caller_pidfd ((pid_t) req->pid);
  if (pidfd < 0 || !sbx_unotify_id_valid (u, req->id))
    {
      if (pidfd >= 0)
        close (pidfd);
      sbx_unotify_respond (u, req->id, ESRCH);
      return;
    }
  sock = (int) syscall (SYS_pidfd_getfd, pidfd, fd_nr, 0);
  close (pidfd);
  if (sock < 0)
    {
      sbx_unotify_respond (u, req->id, errno == EBADF ? EBADF : EPERM);
      return;
    }
  if (len > 0)
    {
      struct iovec local = { addr, (size_t) len };
      struct iovec far = { (void *) (uintptr_t) remote, (size_t) len };

      if (process_vm_readv ((pid_t) req->pid, &local, 1, &far, 1, 0) != len)
        {
          close (sock);
          sbx_unotify_respond (u, req->id, EFAULT);
          return;
        }
    }
  /* The memory read and the descriptor taken belong to the caller. */
  if (!sbx_unotify_id_valid (u, req->id))
    {
      close (sock);
      return;
    }
  if (getsockopt (sock, SOL_SOCKET, SO_DOMAIN, &domain, &optlen) != 0)
    {
      int err = errno;

      close (sock);
      sbx_unotify_respond (u, req->id, err);
      return;
    }
  use = (const struct sockaddr *) (const void *) addr;
  use_len = (socklen_t) len;
  if (domain == AF_UNIX)
    {
      verdict = decide_unix (u, (pid_t) req->pid, sock, addr, (socklen_t) len, &target, &target_len, &opath,
                             held);
      use = (const struct sockaddr *) &target;
      use_len = target_len;
    }
  else if (domain == AF_INET || domain == AF_INET6)
    verdict = decide_tcp (u, sock, addr, (socklen_t) len);
  else
    verdict = 0;
  if (held->path != NULL)
    {
      /* An asking run: the caller holds it (the socket is the held
       * connect's now). */
      held->sock = sock;
      held->err = -verdict;
      return;
    }
  if (verdict < 0)
    {
      close (sock);
      sbx_unotify_respond (u, req->id, -verdict);
      return;
    }
  connect_for (u, req->id, sock, use, use_len, opath, pending);
}

void
sbx_unotify_connect_host_socket (SbxUnotify *u,
                                 uint64_t    id,
                                 int         sock,
                                 const char *path,
                                 GPtrArray  *pending)
{
  struct sockaddr_un target;
  socklen_t target_len = 0;
  int opath = -1, verdict;
  int fd = open (path, O_PATH | O_CLOEXEC);

  verdict = fd < 0 ? -errno : pin_target (fd, &target, &target_len, &opath);
  if (verdict < 0)
    {
      close (sock);
      sbx_unotify_respond (u, id, -verdict);
      return;
    }
  connect_for (u, id, sock, (const struct sockaddr *) &target, target_len, opath, pending);
}

/* A pending connect is ready (POLLOUT) or due for a retry. */
gboolean
sbx_unotify_pending_step (SbxUnotify *u, SbxUnotifyPending *p, short revents)
{
  int err = 0;

  if (!sbx_unotify_id_valid (u, p->id))
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
  sbx_unotify_respond (u, p->id, err);
  return TRUE;
}
