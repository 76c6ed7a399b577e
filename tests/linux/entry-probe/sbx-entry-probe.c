/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx-entry-probe: tries operations the sandbox's system-call filter must
 * refuse, through one entry path into the kernel, and prints one line per
 * operation.  tests/linux/test-linux-entry-paths.c runs it inside the
 * sandbox (both rungs) and outside (the positive control).
 *
 *   sbx-entry-probe PATH OP...
 *     PATH  native  the x86_64 `syscall` instruction
 *           i386    `int $0x80` with i386 numbers from this 64-bit process;
 *                   every pointer points below 4 GiB (MAP_32BIT)
 *           x32     `syscall` with __X32_SYSCALL_BIT and x32 numbers
 *     OP    a name from the ops[] table below, or "list"
 *   Output: "OP RESULT" per operation, RESULT one of
 *     ok        the kernel performed it
 *     eN        it failed with errno N
 *     sigN      the process making it died of signal N (a filter kill)
 *     absent    the call has no number on this entry path
 *   Environment: SBX_PROBE_DIR a writable directory holding a file "f" the
 *   caller owns (mode operations; created files are removed again),
 *   SBX_PROBE_PORT a UDP port on 127.0.0.1 (udp_send), SBX_PROBE_SHMID a
 *   SysV segment id (shm_attach_host).
 *
 * Each operation runs in a forked child, so a namespace it enters, a
 * personality it sets or a kill by the filter stays there.  Built statically
 * and without sanitizers (the sanitizer runtimes need /proc and make calls
 * of their own), with the compiler directly (tests/meson.build).
 */
#define _GNU_SOURCE
#include "sbx-entry-probe-nr.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/personality.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <linux/netlink.h>

#if !defined(__x86_64__)
#error "sbx-entry-probe is written for x86_64 (its i386 and x32 entry paths)"
#endif

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef NETLINK_SOCK_DIAG
#define NETLINK_SOCK_DIAG 4
#endif
#ifndef TIOCSTI
#define TIOCSTI 0x5412
#endif
#define TIOCLINUX_REQ 0x541C
#ifndef O_TMPFILE
#define O_TMPFILE (020000000 | O_DIRECTORY)
#endif

typedef enum { PATH_NATIVE, PATH_I386, PATH_X32 } EntryPath;

static EntryPath path;
static const SbxProbeNr *nrs;
static char *low;          /* arena below 4 GiB */
static size_t low_used;
static const char *dir;    /* SBX_PROBE_DIR */

#define ABSENT_CODE 254

/* ---- the three entries ---- */

static long
raw_syscall6 (long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
  long ret;
  register long r10 __asm__ ("r10") = a4;
  register long r8 __asm__ ("r8") = a5;
  register long r9 __asm__ ("r9") = a6;

  __asm__ volatile ("syscall"
                    : "=a" (ret)
                    : "a" (nr), "D" (a1), "S" (a2), "d" (a3), "r" (r10), "r" (r8), "r" (r9)
                    : "rcx", "r11", "memory");
  return ret;
}

/* int $0x80: arguments in ebx, ecx, edx, esi, edi, ebp (truncated to 32
 * bits by the kernel).  rbp is saved around the call; the sixth argument
 * comes in a register the compiler picks among those left. */
static long
i386_syscall6 (long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
  long ret;

  __asm__ volatile ("pushq %%rbp\n\t"
                    "movl %k[a6], %%ebp\n\t"
                    "int $0x80\n\t"
                    "popq %%rbp"
                    : "=a" (ret)
                    : "a" (nr), "b" (a1), "c" (a2), "d" (a3), "S" (a4), "D" (a5), [a6] "r" (a6)
                    : "r8", "r9", "r10", "r11", "memory", "cc");
  return ret;
}

static long
number_of (const char *name)
{
  for (const SbxProbeNr *n = nrs; n->name != NULL; n++)
    if (strcmp (n->name, name) == 0)
      return n->nr;
  fprintf (stderr, "sbx-entry-probe: %s is not in the call table\n", name);
  _exit (100);
}

/* Makes @name through the chosen entry; -errno on failure.  A call without
 * a number on this path ends the child with ABSENT_CODE. */
static long
sc (const char *name, long a1, long a2, long a3, long a4, long a5, long a6)
{
  long nr = number_of (name);

  if (nr < 0)
    _exit (ABSENT_CODE);
  if (path == PATH_I386)
    return i386_syscall6 (nr, a1, a2, a3, a4, a5, a6);
  return raw_syscall6 (nr, a1, a2, a3, a4, a5, a6);
}

#define SC0(n)                   sc ((n), 0, 0, 0, 0, 0, 0)
#define SC1(n, a)                sc ((n), (long) (a), 0, 0, 0, 0, 0)
#define SC2(n, a, b)             sc ((n), (long) (a), (long) (b), 0, 0, 0, 0)
#define SC3(n, a, b, c)          sc ((n), (long) (a), (long) (b), (long) (c), 0, 0, 0)
#define SC4(n, a, b, c, d)       sc ((n), (long) (a), (long) (b), (long) (c), (long) (d), 0, 0)
#define SC5(n, a, b, c, d, e)    sc ((n), (long) (a), (long) (b), (long) (c), (long) (d), (long) (e), 0)
#define SC6(n, a, b, c, d, e, f) sc ((n), (long) (a), (long) (b), (long) (c), (long) (d), (long) (e), (long) (f))

/* Memory below 4 GiB for every pointer argument (all paths alike). */
static void *
low_alloc (size_t size)
{
  void *p;

  size = (size + 15) & ~(size_t) 15;
  if (low_used + size > 65536)
    _exit (101);
  p = low + low_used;
  low_used += size;
  memset (p, 0, size);
  return p;
}

static char *
low_str (const char *s)
{
  char *p = low_alloc (strlen (s) + 1);

  strcpy (p, s);
  return p;
}

static char *
low_path (const char *leaf)
{
  char buf[4096];

  snprintf (buf, sizeof buf, "%s/%s", dir != NULL ? dir : ".", leaf);
  return low_str (buf);
}

/* ---- operations: each returns 0 or -errno ---- */

static long
sock (int family, int type, int proto)
{
  long fd = SC3 ("socket", family, type, proto);

  if (fd >= 0)
    SC1 ("close", fd);
  return fd < 0 ? fd : 0;
}

static long op_sock_inet_dgram (void) { return sock (AF_INET, SOCK_DGRAM, 0); }
static long op_sock_inet_stream (void) { return sock (AF_INET, SOCK_STREAM, 0); }
static long op_sock_inet6_dgram (void) { return sock (AF_INET6, SOCK_DGRAM, 0); }
static long op_sock_inet6_stream (void) { return sock (AF_INET6, SOCK_STREAM, 0); }
static long op_sock_inet_raw (void) { return sock (AF_INET, SOCK_RAW, IPPROTO_ICMP); }
static long op_sock_unix_stream (void) { return sock (AF_UNIX, SOCK_STREAM, 0); }
static long op_sock_unix_dgram (void) { return sock (AF_UNIX, SOCK_DGRAM, 0); }
static long op_sock_vsock (void) { return sock (AF_VSOCK, SOCK_STREAM, 0); }
static long op_sock_packet (void) { return sock (AF_PACKET, SOCK_DGRAM, 0); }
static long op_sock_netlink_diag (void) { return sock (AF_NETLINK, SOCK_RAW, NETLINK_SOCK_DIAG); }
static long op_sock_netlink_route (void) { return sock (AF_NETLINK, SOCK_RAW, NETLINK_ROUTE); }

static long
op_socketpair_unix (void)
{
  int *sv = low_alloc (2 * sizeof (int));
  long r = SC4 ("socketpair", AF_UNIX, SOCK_STREAM, 0, sv);

  if (r == 0)
    {
      SC1 ("close", sv[0]);
      SC1 ("close", sv[1]);
    }
  return r;
}

/* The reported escape: a datagram to a listener on the host's loopback. */
static long
op_udp_send (void)
{
  const char *port = getenv ("SBX_PROBE_PORT");
  struct sockaddr_in *sin = low_alloc (sizeof *sin);
  char *msg = low_str ("sbx-entry-probe");
  long fd, r;

  if (port == NULL)
    _exit (102);
  fd = SC3 ("socket", AF_INET, SOCK_DGRAM, 0);
  if (fd < 0)
    return fd;
  sin->sin_family = AF_INET;
  sin->sin_port = htons ((uint16_t) atoi (port));
  sin->sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  r = SC6 ("sendto", fd, msg, strlen (msg), 0, sin, sizeof *sin);
  SC1 ("close", fd);
  return r < 0 ? r : 0;
}

/* TCP to the loopback port in @var (a ports network's granted port, or
 * another one): the connect's result. */
static long
tcp_connect_env (const char *var)
{
  const char *port = getenv (var);
  struct sockaddr_in *sin = low_alloc (sizeof *sin);
  long fd, r;

  if (port == NULL)
    _exit (102);
  fd = SC3 ("socket", AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return fd;
  sin->sin_family = AF_INET;
  sin->sin_port = htons ((uint16_t) atoi (port));
  sin->sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  r = SC3 ("connect", fd, sin, sizeof *sin);
  SC1 ("close", fd);
  return r < 0 ? r : 0;
}

/* A unix stream connect to @path (NULL: the path in $SBX_PROBE_UNIX_HOST,
 * a host daemon's socket).  With @own the probe binds and listens there
 * first, through the same entry: the sandbox's own socket. */
static long
unix_connect (const char *path, int own)
{
  struct sockaddr_un *sun = low_alloc (sizeof *sun);
  long fd, srv = -1, r;

  if (path == NULL)
    path = getenv ("SBX_PROBE_UNIX_HOST");
  if (path == NULL || strlen (path) >= sizeof sun->sun_path)
    _exit (102);
  sun->sun_family = AF_UNIX;
  strcpy (sun->sun_path, path);
  if (own)
    {
      SC1 ("unlink", low_str (path));
      srv = SC3 ("socket", AF_UNIX, SOCK_STREAM, 0);
      if (srv < 0)
        return srv;
      r = SC3 ("bind", srv, sun, sizeof *sun);
      if (r == 0)
        r = SC2 ("listen", srv, 4);
      if (r < 0)
        {
          SC1 ("close", srv);
          return r;
        }
    }
  fd = SC3 ("socket", AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0)
    r = fd;
  else
    {
      r = SC3 ("connect", fd, sun, sizeof *sun);
      SC1 ("close", fd);
    }
  if (srv >= 0)
    {
      SC1 ("close", srv);
      SC1 ("unlink", low_str (path));
    }
  return r < 0 ? r : 0;
}

static long op_unix_connect_host (void) { return unix_connect (NULL, 0); }
static long op_unix_connect_own (void) { return unix_connect (low_path ("own.sock"), 1); }

static long op_tcp_connect (void) { return tcp_connect_env ("SBX_PROBE_TCP_PORT"); }
static long op_tcp_connect_other (void) { return tcp_connect_env ("SBX_PROBE_TCP_OTHER"); }
static long op_sock_inet_mptcp (void) { return sock (AF_INET, SOCK_STREAM, 262 /* IPPROTO_MPTCP */); }

/* listen() on an unbound TCP socket: the kernel binds an ephemeral port
 * itself (no bind() call). */
static long
op_listen_inet (void)
{
  long fd = SC3 ("socket", AF_INET, SOCK_STREAM, 0), r;

  if (fd < 0)
    return fd;
  r = SC2 ("listen", fd, 1);
  SC1 ("close", fd);
  return r < 0 ? r : 0;
}

static long
op_bind_inet (void)
{
  struct sockaddr_in *sin = low_alloc (sizeof *sin);
  long fd = SC3 ("socket", AF_INET, SOCK_STREAM, 0), r;

  if (fd < 0)
    return fd;
  sin->sin_family = AF_INET;
  sin->sin_port = 0;
  sin->sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  r = SC3 ("bind", fd, sin, sizeof *sin);
  SC1 ("close", fd);
  return r < 0 ? r : 0;
}

/* socketcall(2): the i386 multiplexer, arguments in memory. */
static long
op_socketcall_socket (void)
{
  uint32_t *args = low_alloc (3 * sizeof (uint32_t));
  long fd;

  args[0] = AF_INET;
  args[1] = SOCK_DGRAM;
  args[2] = 0;
  fd = SC2 ("socketcall", 1 /* SYS_SOCKET */, args);
  if (fd >= 0)
    SC1 ("close", fd);
  return fd < 0 ? fd : 0;
}

static long
op_socketcall_socketpair (void)
{
  uint32_t *args = low_alloc (4 * sizeof (uint32_t));
  int *sv = low_alloc (2 * sizeof (int));

  args[0] = AF_UNIX;
  args[1] = SOCK_STREAM;
  args[2] = 0;
  args[3] = (uint32_t) (uintptr_t) sv;
  return SC2 ("socketcall", 8 /* SYS_SOCKETPAIR */, args);
}

/* namespaces */
static long op_setns (void) { return SC2 ("setns", -1, 0); }
static long op_unshare_user (void) { return SC1 ("unshare", CLONE_NEWUSER); }
static long op_unshare_net (void) { return SC1 ("unshare", CLONE_NEWNET); }
static long op_unshare_mount (void) { return SC1 ("unshare", CLONE_NEWNS); }
static long op_unshare_ipc (void) { return SC1 ("unshare", CLONE_NEWIPC); }

static long
op_clone_newuser (void)
{
  /* i386 and x86_64 differ in the order of the last two arguments; both
   * are 0 here.  The child exits at once through the native entry. */
  long r = SC5 ("clone", CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);

  if (r == 0)
    raw_syscall6 (60 /* x86_64 exit */, 0, 0, 0, 0, 0, 0);
  if (r > 0)
    {
      waitpid ((pid_t) r, NULL, 0);
      return 0;
    }
  return r;
}

static long op_clone3 (void) { return SC2 ("clone3", 0, 0); }

/* mount family: bad pointers, so the kernel fails early when it runs */
static long op_mount (void) { return SC5 ("mount", 0, 0, 0, 0, 0); }
static long op_umount2 (void) { return SC2 ("umount2", 0, 0); }
static long op_pivot_root (void) { return SC2 ("pivot_root", 0, 0); }
static long op_move_mount (void) { return SC5 ("move_mount", -1, 0, -1, 0, 0); }
static long op_open_tree (void) { return SC3 ("open_tree", -1, 0, 0); }
static long op_fsopen (void) { return SC2 ("fsopen", 0, 0); }
static long op_fsmount (void) { return SC3 ("fsmount", -1, 0, 0); }
static long op_fsconfig (void) { return SC5 ("fsconfig", -1, 0, 0, 0, 0); }
static long op_fspick (void) { return SC3 ("fspick", -1, 0, 0); }
static long op_mount_setattr (void) { return SC5 ("mount_setattr", -1, 0, 0, 0, 0); }
static long op_chroot (void) { return SC1 ("chroot", 0); }

/* keyrings, bpf, perf, userfaultfd, io_uring */
static long op_keyctl (void) { long r = SC3 ("keyctl", 0 /* GET_KEYRING_ID */, -3 /* SESSION */, 0); return r < 0 ? r : 0; }
static long op_add_key (void) { return SC5 ("add_key", 0, 0, 0, 0, 0); }
static long op_request_key (void) { return SC4 ("request_key", 0, 0, 0, 0); }
static long op_bpf (void) { return SC3 ("bpf", -1, 0, 0); }
static long op_perf_event_open (void) { return SC5 ("perf_event_open", 0, 0, -1, -1, 0); }
static long op_userfaultfd (void) { return SC1 ("userfaultfd", ~0); }
static long op_io_uring_setup (void) { return SC2 ("io_uring_setup", 1, 0); }
static long op_io_uring_enter (void) { return SC6 ("io_uring_enter", -1, 0, 0, 0, 0, 0); }
static long op_io_uring_register (void) { return SC4 ("io_uring_register", -1, 0, 0, 0); }

/* other processes */
static long op_ptrace (void) { return SC4 ("ptrace", 2 /* PEEKDATA */, -1, 0, 0); }
static long op_process_vm_readv (void) { return SC6 ("process_vm_readv", getpid (), 0, 0, 0, 0, 0); }
static long op_process_vm_writev (void) { return SC6 ("process_vm_writev", getpid (), 0, 0, 0, 0, 0); }
static long op_pidfd_getfd (void) { return SC3 ("pidfd_getfd", -1, 0, 0); }
static long op_kcmp (void) { return SC5 ("kcmp", getpid (), getpid (), 0, 0, 0); }

/* file handles */
static long op_open_by_handle_at (void) { return SC3 ("open_by_handle_at", -1, 0, 0); }
static long op_name_to_handle_at (void) { return SC5 ("name_to_handle_at", AT_FDCWD, low_str ("/"), 0, 0, 0); }

/* host administration: arguments the kernel rejects even for root */
static long op_init_module (void) { return SC3 ("init_module", 0, 0, 0); }
static long op_finit_module (void) { return SC3 ("finit_module", -1, 0, 0); }
static long op_delete_module (void) { return SC2 ("delete_module", 0, 0); }
static long op_kexec_load (void) { return SC4 ("kexec_load", 0, 0, 0, 0xffff0000L /* no such arch */); }
static long op_kexec_file_load (void) { return SC5 ("kexec_file_load", -1, -1, 0, 0, 0); }
static long op_reboot (void) { return SC4 ("reboot", 0, 0, 0, 0); }
static long op_swapon (void) { return SC2 ("swapon", 0, 0); }
static long op_swapoff (void) { return SC1 ("swapoff", 0); }
static long op_acct (void) { return SC1 ("acct", low_str ("/nonexistent/sbx-acct")); }
static long op_quotactl (void) { return SC4 ("quotactl", 0, 0, 0, 0); }
static long op_quotactl_fd (void) { return SC4 ("quotactl_fd", -1, 0, 0, 0); }
static long op_syslog (void) { return SC3 ("syslog", 99, 0, 0); }
static long op_iopl (void) { return SC1 ("iopl", 4); }
static long op_ioperm (void) { return SC3 ("ioperm", 0x10000, 1, 1); }
static long op_modify_ldt (void) { return SC3 ("modify_ldt", 0, low_alloc (16), 16); }

/* terminals: fd -1, so the kernel answers EBADF when it runs */
static long op_tiocsti (void) { return SC3 ("ioctl", -1, TIOCSTI, low_str ("x")); }
static long op_tioclinux (void) { return SC3 ("ioctl", -1, TIOCLINUX_REQ, low_alloc (8)); }

static long op_personality_rie (void) { long r = SC1 ("personality", READ_IMPLIES_EXEC); return r < 0 ? r : 0; }
static long op_mknod_chr (void) { return SC4 ("mknodat", AT_FDCWD, low_str ("/nonexistent/sbx"), S_IFCHR | 0600, 0); }

/* set-id bits: the file "f" in SBX_PROBE_DIR, and new files there */
static long
restore_f (long r)
{
  chmod (low_path ("f"), 0644);
  return r;
}

static long
created (long r, const char *leaf)
{
  if (r >= 0)
    {
      struct stat st;

      if (r > 0 && path != PATH_X32)
        SC1 ("close", r);
      if (leaf != NULL && stat (low_path (leaf), &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID)) == 0)
        r = -ENOTSUP;   /* created, but the kernel dropped the bits itself: not a set-id file */
      if (leaf != NULL)
        unlink (low_path (leaf));
      return r < 0 ? r : 0;
    }
  return r;
}

static long op_chmod_setuid (void) { return restore_f (SC2 ("chmod", low_path ("f"), 04755)); }
static long op_chmod_setgid (void) { return restore_f (SC2 ("chmod", low_path ("f"), 02755)); }
static long
op_fchmod_setuid (void)
{
  int fd = open (low_path ("f"), O_RDONLY | O_CLOEXEC);
  long r;

  if (fd < 0)
    return -errno;
  r = SC2 ("fchmod", fd, 06755);
  close (fd);
  return restore_f (r);
}
static long op_fchmodat_setgid (void) { return restore_f (SC4 ("fchmodat", AT_FDCWD, low_path ("f"), 02755, 0)); }
static long op_fchmodat2_setuid (void) { return restore_f (SC4 ("fchmodat2", AT_FDCWD, low_path ("f"), 04755, 0)); }
static long op_open_creat_setuid (void) { return created (SC3 ("open", low_path ("n1"), O_CREAT | O_EXCL | O_WRONLY, 04755), "n1"); }
static long op_openat_creat_setgid (void) { return created (SC4 ("openat", AT_FDCWD, low_path ("n2"), O_CREAT | O_EXCL | O_WRONLY, 02755), "n2"); }
static long op_creat_setuid (void) { return created (SC2 ("creat", low_path ("n3"), 04755), "n3"); }
static long op_open_tmpfile_setuid (void) { return created (SC3 ("open", low_path ("."), O_TMPFILE | O_WRONLY, 04700), NULL); }
static long op_mknod_reg_setuid (void) { return created (SC3 ("mknod", low_path ("n4"), S_IFREG | 04755, 0), "n4"); }
static long op_mknodat_reg_setgid (void) { return created (SC4 ("mknodat", AT_FDCWD, low_path ("n5"), S_IFREG | 02755, 0), "n5"); }
static long
op_openat2 (void)
{
  uint64_t *how = low_alloc (24);   /* struct open_how: flags, mode, resolve */

  how[0] = O_RDONLY;
  return created (SC4 ("openat2", AT_FDCWD, low_path ("f"), how, 24), NULL);
}
/* plain mode changes stay allowed */
/* set-gid on a directory of the probe's own (mkdir, chmod, rmdir through
 * the same entry): the supervisor performs it */
static long
setgid_dir (int at)
{
  char *d = low_path ("sgid-dir");
  long r;

  SC1 ("rmdir", d);
  r = SC2 ("mkdir", d, 0755);
  if (r < 0)
    return r;
  r = at ? SC4 ("fchmodat", AT_FDCWD, d, 02775, 0) : SC2 ("chmod", d, 02775);
  SC1 ("rmdir", d);
  return r;
}

static long op_chmod_setgid_dir (void) { return setgid_dir (0); }
static long op_fchmodat_setgid_dir (void) { return setgid_dir (1); }

static long op_chmod_plain (void) { return restore_f (SC2 ("chmod", low_path ("f"), 0600)); }

/* inotify and fanotify */
static long op_inotify_init1 (void) { long fd = SC1 ("inotify_init1", 0); if (fd >= 0) SC1 ("close", fd); return fd < 0 ? fd : 0; }
static long op_inotify_add_watch (void) { return SC3 ("inotify_add_watch", -1, low_path ("."), IN_CREATE); }
static long
op_fanotify_init (void)
{
  long fd = SC2 ("fanotify_init", FAN_CLASS_NOTIF | FAN_REPORT_FID, O_RDONLY);

  if (fd >= 0)
    SC1 ("close", fd);
  return fd < 0 ? fd : 0;
}
static long
op_fanotify_mark (void)
{
  /* i386 passes the 64-bit mask as two 32-bit halves */
  if (path == PATH_I386)
    return SC6 ("fanotify_mark", -1, FAN_MARK_ADD, FAN_CREATE, 0, AT_FDCWD, low_path ("."));
  return SC5 ("fanotify_mark", -1, FAN_MARK_ADD, FAN_CREATE, AT_FDCWD, low_path ("."));
}

/* SysV IPC: private objects, removed again through the native libc */
static long op_shmget (void) { long id = SC3 ("shmget", IPC_PRIVATE, 4096, 0600); if (id >= 0) shmctl ((int) id, IPC_RMID, NULL); return id < 0 ? id : 0; }
static long op_msgget (void) { long id = SC2 ("msgget", IPC_PRIVATE, 0600); if (id >= 0) msgctl ((int) id, IPC_RMID, NULL); return id < 0 ? id : 0; }
static long op_semget (void) { long id = SC3 ("semget", IPC_PRIVATE, 1, 0600); if (id >= 0) semctl ((int) id, 0, IPC_RMID); return id < 0 ? id : 0; }
static long op_shmat_bad (void) { return SC3 ("shmat", -1, 0, 0); }
/* ipc(2): the i386 multiplexer (SHMGET = 23) */
static long op_ipc_shmget (void) { long id = SC6 ("ipc", 23, IPC_PRIVATE, 4096, 0600, 0, 0); if (id >= 0) shmctl ((int) id, IPC_RMID, NULL); return id < 0 ? id : 0; }
/* attach the host's segment SBX_PROBE_SHMID and read it */
static long
op_shm_attach_host (void)
{
  const char *id = getenv ("SBX_PROBE_SHMID");
  long addr;

  if (id == NULL)
    _exit (102);
  addr = SC3 ("shmat", atoi (id), 0, SHM_RDONLY);
  if (addr < 0 && addr > -4096)
    return addr;
  /* the direct i386 shmat (Linux 5.1+) returns the address like the
   * native one, mapped below 4 GiB */
  if (memcmp ((const void *) (uintptr_t) (path == PATH_I386 ? (uint32_t) addr : (uint64_t) addr),
              "sbx-host-segment", 16) != 0)
    return -EBADMSG;
  return 0;
}

static long op_shmdt (void) { return SC1 ("shmdt", 0); }
static long op_shmctl (void) { return SC3 ("shmctl", -1, IPC_STAT, 0); }
static long op_msgsnd (void) { return SC4 ("msgsnd", -1, 0, 0, 0); }
static long op_msgrcv (void) { return SC5 ("msgrcv", -1, 0, 0, 0, 0); }
static long op_msgctl (void) { return SC3 ("msgctl", -1, IPC_STAT, 0); }
static long op_semop (void) { return SC3 ("semop", -1, 0, 0); }
static long op_semtimedop (void) { return SC4 ("semtimedop", -1, 0, 0, 0); }
static long op_semtimedop_time64 (void) { return SC4 ("semtimedop_time64", -1, 0, 0, 0); }
static long op_semctl (void) { return SC4 ("semctl", -1, 0, IPC_STAT, 0); }
static long op_inotify_init (void) { long fd = SC0 ("inotify_init"); if (fd >= 0) SC1 ("close", fd); return fd < 0 ? fd : 0; }

/* obsolete interfaces */
static long op_lookup_dcookie (void) { return SC3 ("lookup_dcookie", 0, 0, 0); }
static long op_nfsservctl (void) { return SC3 ("nfsservctl", 0, 0, 0); }
static long op_uselib (void) { return SC1 ("uselib", 0); }
static long op_vm86 (void) { return SC2 ("vm86", 0, 0); }
static long op_vm86old (void) { return SC1 ("vm86old", 0); }
static long op_umount (void) { return SC1 ("umount", 0); }

/* ---- the caller's terminal: requests on fd 0 (a terminal the caller
 * passed as stdin), each with an argument that changes it; the kernel's
 * layouts, as the 32-bit compat entry takes them too: struct termios (36
 * bytes, c_lflag at 12, c_cc at 17), struct termio (18 bytes, c_lflag at 6),
 * struct termios2 (44 bytes) ---- */

#define TTY_TCGETS     0x5401
#define TTY_TCSETS     0x5402
#define TTY_TCSETSW    0x5403
#define TTY_TCSETSF    0x5404
#define TTY_TCGETA     0x5405
#define TTY_TCSETA     0x5406
#define TTY_TCSBRK     0x5409
#define TTY_TCXONC     0x540A
#define TTY_TCFLSH     0x540B
#define TTY_TIOCEXCL   0x540C
#define TTY_TIOCNXCL   0x540D
#define TTY_TIOCSCTTY  0x540E
#define TTY_TIOCSPGRP  0x5410
#define TTY_TIOCGWINSZ 0x5413
#define TTY_TIOCSWINSZ 0x5414
#define TTY_FIONREAD   0x541B
#define TTY_TIOCCONS   0x541D
#define TTY_TIOCSETD   0x5423
#define TTY_TIOCSBRK   0x5427
#define TTY_TIOCCBRK   0x5428
#define TTY_TCGETS2    0x802c542aL
#define TTY_TCSETS2    0x402c542bL
#define TTY_KDSETMODE  0x4B3A

/* Echo off and 'x' as the interrupt character in the modes @fd has. */
static long
tty_set_modes (long fd, unsigned long request)
{
  unsigned char *t = low_alloc (64);
  long r = SC3 ("ioctl", fd, TTY_TCGETS, t);
  uint32_t lflag;

  if (r < 0)
    return r;
  memcpy (&lflag, t + 12, 4);
  lflag &= ~(uint32_t) 010;   /* ECHO */
  memcpy (t + 12, &lflag, 4);
  t[17] = 'x';                /* c_cc[VINTR] */
  return SC3 ("ioctl", fd, request, t);
}

static long op_tty_tcgets (void) { return SC3 ("ioctl", 0, TTY_TCGETS, low_alloc (64)); }
static long op_tty_tiocgwinsz (void) { return SC3 ("ioctl", 0, TTY_TIOCGWINSZ, low_alloc (8)); }
static long op_tty_fionread (void) { return SC3 ("ioctl", 0, TTY_FIONREAD, low_alloc (4)); }
static long op_tty_tcdrain (void) { return SC3 ("ioctl", 0, TTY_TCSBRK, 1); }
static long op_tty_tcsets (void) { return tty_set_modes (0, TTY_TCSETS); }
static long op_tty_tcsetsw (void) { return tty_set_modes (0, TTY_TCSETSW); }
static long op_tty_tcsetsf (void) { return tty_set_modes (0, TTY_TCSETSF); }
/* the request with its upper half set: the kernel takes an unsigned int */
static long op_tty_tcsets_high (void) { return tty_set_modes (0, TTY_TCSETS | (path == PATH_I386 ? 0 : 1UL << 32)); }

static long
op_tty_tcseta (void)
{
  unsigned char *t = low_alloc (32);
  long r = SC3 ("ioctl", 0, TTY_TCGETA, t);
  uint16_t lflag;

  if (r < 0)
    return r;
  memcpy (&lflag, t + 6, 2);
  lflag &= (uint16_t) ~010;
  memcpy (t + 6, &lflag, 2);
  return SC3 ("ioctl", 0, TTY_TCSETA, t);
}

static long
op_tty_tcsets2 (void)
{
  unsigned char *t = low_alloc (64);
  long r = SC3 ("ioctl", 0, TTY_TCGETS2, t);

  if (r < 0)
    return r;
  t[17] = 'x';
  return SC3 ("ioctl", 0, TTY_TCSETS2, t);
}

static long
op_tty_tiocswinsz (void)
{
  unsigned short *ws = low_alloc (8);

  ws[0] = 1;
  ws[1] = 1;
  return SC3 ("ioctl", 0, TTY_TIOCSWINSZ, ws);
}

static long op_tty_tiocsetd (void) { return SC3 ("ioctl", 0, TTY_TIOCSETD, low_alloc (4)); }   /* N_TTY */
static long op_tty_tcflsh (void) { return SC3 ("ioctl", 0, TTY_TCFLSH, 0); }   /* TCIFLUSH */
static long op_tty_tcxonc (void) { return SC3 ("ioctl", 0, TTY_TCXONC, 1); }   /* TCOON */
static long op_tty_tcsbrk (void) { return SC3 ("ioctl", 0, TTY_TCSBRK, 0); }   /* a break */
static long op_tty_tiocsbrk (void) { return SC3 ("ioctl", 0, TTY_TIOCSBRK, 0); }
static long op_tty_tioccbrk (void) { return SC3 ("ioctl", 0, TTY_TIOCCBRK, 0); }
static long op_tty_tiocexcl (void) { return SC3 ("ioctl", 0, TTY_TIOCEXCL, 0); }
static long op_tty_tiocnxcl (void) { return SC3 ("ioctl", 0, TTY_TIOCNXCL, 0); }
static long op_tty_tioccons (void) { return SC3 ("ioctl", 0, TTY_TIOCCONS, 0); }
static long op_tty_kdsetmode (void) { return SC3 ("ioctl", 0, TTY_KDSETMODE, 0); }   /* KD_TEXT */

/* A new session first, so that only the terminal decides */
static long
op_tty_tiocsctty (void)
{
  long r = SC0 ("setsid");

  if (r < 0)
    return r;
  return SC3 ("ioctl", 0, TTY_TIOCSCTTY, 0);
}

static long
op_tty_tiocspgrp (void)
{
  int *pgrp = low_alloc (4);
  long r = SC1 ("getpgid", 0);

  if (r < 0)
    return r;
  *pgrp = (int) r;
  return SC3 ("ioctl", 0, TTY_TIOCSPGRP, pgrp);
}

/* The terminal under another descriptor number */
static long
op_tty_dup_tcsets (void)
{
  long fd = SC1 ("dup", 0);

  if (fd < 0)
    return fd;
  return tty_set_modes (fd, TTY_TCSETS);
}

/* The terminal reopened through /proc/self/fd/0 (a file description of
 * its own) */
static long
op_tty_reopen_tcsets (void)
{
  long fd = SC4 ("openat", AT_FDCWD, low_str ("/proc/self/fd/0"), O_RDWR | O_NOCTTY, 0);

  if (fd < 0)
    return fd;
  return tty_set_modes (fd, TTY_TCSETS);
}

static long op_getpid (void) { long r = SC0 ("getpid"); return r < 0 ? r : 0; }

typedef struct
{
  const char *name;
  long      (*op) (void);
} Op;

static const Op ops[] = {
#define OP(n) { #n, op_##n }
  OP (getpid),
  OP (sock_inet_dgram), OP (sock_inet_stream), OP (sock_inet6_dgram), OP (sock_inet6_stream),
  OP (sock_inet_raw), OP (sock_unix_stream), OP (sock_unix_dgram), OP (sock_vsock), OP (sock_packet),
  OP (sock_netlink_diag), OP (sock_netlink_route), OP (socketpair_unix), OP (udp_send),
  OP (unix_connect_host), OP (unix_connect_own),
  OP (tcp_connect), OP (tcp_connect_other), OP (sock_inet_mptcp), OP (listen_inet), OP (bind_inet),
  OP (socketcall_socket), OP (socketcall_socketpair),
  OP (setns), OP (unshare_user), OP (unshare_net), OP (unshare_mount), OP (unshare_ipc), OP (clone_newuser),
  OP (clone3),
  OP (mount), OP (umount2), OP (pivot_root), OP (move_mount), OP (open_tree), OP (fsopen), OP (fsmount),
  OP (fsconfig), OP (fspick), OP (mount_setattr), OP (chroot),
  OP (keyctl), OP (add_key), OP (request_key), OP (bpf), OP (perf_event_open), OP (userfaultfd),
  OP (io_uring_setup), OP (io_uring_enter), OP (io_uring_register),
  OP (ptrace), OP (process_vm_readv), OP (process_vm_writev), OP (pidfd_getfd), OP (kcmp),
  OP (open_by_handle_at), OP (name_to_handle_at),
  OP (init_module), OP (finit_module), OP (delete_module), OP (kexec_load), OP (kexec_file_load), OP (reboot),
  OP (swapon), OP (swapoff), OP (acct), OP (quotactl), OP (quotactl_fd), OP (syslog), OP (iopl), OP (ioperm),
  OP (modify_ldt),
  OP (tiocsti), OP (tioclinux), OP (personality_rie), OP (mknod_chr),
  OP (chmod_setuid), OP (chmod_setgid), OP (fchmod_setuid), OP (fchmodat_setgid), OP (fchmodat2_setuid),
  OP (open_creat_setuid), OP (openat_creat_setgid), OP (creat_setuid), OP (open_tmpfile_setuid),
  OP (mknod_reg_setuid), OP (mknodat_reg_setgid), OP (openat2), OP (chmod_plain),
  OP (chmod_setgid_dir), OP (fchmodat_setgid_dir),
  OP (inotify_init1), OP (inotify_add_watch), OP (fanotify_init), OP (fanotify_mark),
  OP (shmget), OP (msgget), OP (semget), OP (shmat_bad), OP (ipc_shmget), OP (shm_attach_host),
  OP (shmdt), OP (shmctl), OP (msgsnd), OP (msgrcv), OP (msgctl), OP (semop), OP (semtimedop),
  OP (semtimedop_time64), OP (semctl), OP (inotify_init),
  OP (lookup_dcookie), OP (nfsservctl), OP (uselib), OP (vm86), OP (vm86old), OP (umount),
  /* the caller's terminal as stdin (tests/linux/test-linux-caller-terminal.c) */
  OP (tty_tcgets), OP (tty_tiocgwinsz), OP (tty_fionread), OP (tty_tcdrain), OP (tty_tcsets), OP (tty_tcsetsw),
  OP (tty_tcsetsf), OP (tty_tcsets_high), OP (tty_tcseta), OP (tty_tcsets2), OP (tty_tiocswinsz), OP (tty_tiocsetd),
  OP (tty_tcflsh), OP (tty_tcxonc), OP (tty_tcsbrk), OP (tty_tiocsbrk), OP (tty_tioccbrk), OP (tty_tiocexcl),
  OP (tty_tiocnxcl), OP (tty_tioccons), OP (tty_kdsetmode), OP (tty_tiocsctty), OP (tty_tiocspgrp),
  OP (tty_dup_tcsets), OP (tty_reopen_tcsets),
#undef OP
};

static void
run_op (const Op *op)
{
  pid_t pid;
  int status;

  fflush (stdout);
  pid = fork ();
  if (pid < 0)
    {
      printf ("%s fork-failed\n", op->name);
      return;
    }
  if (pid == 0)
    {
      long r = op->op ();

      _exit (r < 0 ? (int) (-r > 253 ? 253 : -r) : 0);
    }
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      {
        printf ("%s wait-failed\n", op->name);
        return;
      }
  if (WIFSIGNALED (status))
    printf ("%s sig%d\n", op->name, WTERMSIG (status));
  else if (WEXITSTATUS (status) == 0)
    printf ("%s ok\n", op->name);
  else if (WEXITSTATUS (status) == ABSENT_CODE)
    printf ("%s absent\n", op->name);
  else
    printf ("%s e%d\n", op->name, WEXITSTATUS (status));
}

int
main (int argc, char **argv)
{
  if (argc < 3)
    {
      fprintf (stderr, "usage: sbx-entry-probe native|i386|x32 OP...|list\n");
      return 2;
    }
  if (strcmp (argv[1], "native") == 0)
    path = PATH_NATIVE, nrs = sbx_probe_nr_native;
  else if (strcmp (argv[1], "i386") == 0)
    path = PATH_I386, nrs = sbx_probe_nr_i386;
  else if (strcmp (argv[1], "x32") == 0)
    path = PATH_X32, nrs = sbx_probe_nr_x32;
  else
    {
      fprintf (stderr, "sbx-entry-probe: unknown entry path %s\n", argv[1]);
      return 2;
    }
  low = mmap (NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
  if (low == MAP_FAILED || (uintptr_t) low + 65536 > 0xffffffffu)
    {
      perror ("sbx-entry-probe: mmap(MAP_32BIT)");
      return 3;
    }
  dir = getenv ("SBX_PROBE_DIR");
  for (int i = 2; i < argc; i++)
    {
      int found = 0;

      if (strcmp (argv[i], "list") == 0)
        {
          for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
            printf ("%s\n", ops[k].name);
          continue;
        }
      for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
        if (strcmp (ops[k].name, argv[i]) == 0)
          {
            run_op (&ops[k]);
            found = 1;
          }
      if (!found)
        printf ("%s unknown\n", argv[i]);
    }
  fflush (stdout);
  return 0;
}
