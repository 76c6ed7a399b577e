/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The view supervisor's FUSE server (plugins/linux/sbx-linux-view-server.c)
 * against a real FUSE mount: a forked child unshares user and mount
 * namespaces (and a pid namespace for the /pidns case), mounts the fs from
 * a /dev/fuse descriptor it opened, sends that descriptor to the server,
 * binds a host directory on a skeleton entry, makes the mount its root and
 * runs its probes there.  The parent serves and records the denials; the
 * child reports each probe's errno and meets the parent at sync points, where
 * the parent snapshots the counters.  Every denial probe has its positive
 * control on the host.  Skipped, with the reason, where /dev/fuse cannot be
 * opened by the test's uid or user namespaces are refused.  The file holds
 * the cases of one module (the view server), hence its length.
 */
#include "sbx-linux-view-server.h"
#include "sbx-linux-view-private.h"
#include "sbx-linux-child-private.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/fuse.h>
#include <linux/openat2.h>

#include <gio/gio.h>
#include <gio/gunixfdmessage.h>
#include <glib/gstdio.h>
#include <seccomp.h>

#include <sbx/sbx-plugin-abi.h>

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature (address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

#define CHILD_SKIP_USERNS 90
#define CHILD_SKIP_FUSE   91
#define CHILD_SKIP_MOUNT  92
#define CHILD_SETUP_FAILED 93

enum { MSG_RESULT = 1, MSG_SYNC = 2, MSG_PID = 3, MSG_LOOPING = 4 };

typedef struct
{
  int32_t kind;
  int32_t value;
} Msg;

typedef struct
{
  uint32_t op;
  int64_t  pid;
  char    *target;
  char    *process;
} Rec;

#define MAX_KEPT 64

typedef struct
{
  GMutex     lock;
  GCond      cond;
  GPtrArray *recs;        /* Rec *, the first MAX_KEPT */
  guint64    n;           /* every call */
  gboolean   stopped;     /* stop() returned */
  guint64    after_stop;  /* calls after that: must stay 0 */
} Sink;

typedef struct
{
  guint64 requests, denials, sink;
  gsize   rss_kib;
} Snap;

typedef struct _Fixture Fixture;
typedef void (*ChildProbe) (const Fixture *f);

struct _Fixture
{
  char      *dir;       /* D: a host directory outside the view */
  char      *parent;    /* its parent, a skeleton directory */
  char      *base;      /* its name */
  char      *mnt;       /* where the child mounts the view */
  char      *bound;     /* a host directory bound at /bound */
  gboolean   pidns;
  gboolean   explicit_pid; /* /pidns: also set_sandbox_pid() while serving */
  gboolean   replacing;    /* /replaced: the server serves a mount of ours first, the child's replaces it */
  guint      n_loop;    /* /million */
  /* parent side */
  Sink       sink;
  GArray    *snaps;     /* Snap per sync */
  GArray    *results;   /* int32 per result */
  pid_t      child_pid; /* the probing process as its pid namespace numbers it */
  char      *skip;      /* why the run was skipped */
};

static int child_msg_fd = -1, child_ack_fd = -1;

static void
sink_denied (void *data, const SbxBackendDenialV1 *d)
{
  Sink *s = data;

  g_mutex_lock (&s->lock);
  if (s->stopped)
    s->after_stop++;
  if (s->recs->len < MAX_KEPT)
    {
      Rec *r = g_new0 (Rec, 1);

      r->op = d->operation;
      r->pid = d->pid;
      r->target = g_strdup (d->target);
      r->process = g_strdup (d->process);
      g_ptr_array_add (s->recs, r);
    }
  g_assert_cmpstr (d->mechanism, ==, "view-supervisor");
  g_assert_null (d->reason);
  s->n++;
  g_cond_broadcast (&s->cond);
  g_mutex_unlock (&s->lock);
}

static void
rec_free (gpointer p)
{
  Rec *r = p;

  g_free (r->target);
  g_free (r->process);
  g_free (r);
}

static gsize
rss_kib (void)
{
  g_autofree char *status = NULL;
  const char *line;

  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL))
    return 0;
  line = strstr (status, "VmRSS:");
  return line != NULL ? (gsize) g_ascii_strtoull (line + 6, NULL, 10) : 0;
}

static guint
count_fds (void)
{
  g_autoptr(GDir) d = g_dir_open ("/proc/self/fd", 0, NULL);
  guint n = 0;

  while (d != NULL && g_dir_read_name (d) != NULL)
    n++;
  return n;
}

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  g_autofree char *prog = NULL;
  g_autofree char *sub = NULL;
  g_autofree char *secret = NULL;
  g_autofree char *inside = NULL;

  (void) data;
  f->dir = g_dir_make_tmp ("sbx-view-XXXXXX", NULL);
  f->mnt = g_dir_make_tmp ("sbx-view-mnt-XXXXXX", NULL);
  f->bound = g_dir_make_tmp ("sbx-view-bound-XXXXXX", NULL);
  g_assert_nonnull (f->dir);
  g_assert_nonnull (f->mnt);
  g_assert_nonnull (f->bound);
  g_assert_true (g_path_is_absolute (f->dir));
  f->parent = g_path_get_dirname (f->dir);
  f->base = g_path_get_basename (f->dir);
  secret = g_build_filename (f->dir, "secret", NULL);
  prog = g_build_filename (f->dir, "prog", NULL);
  sub = g_build_filename (f->dir, "sub", NULL);
  inside = g_build_filename (f->bound, "inside", NULL);
  g_assert_true (g_file_set_contents (secret, "secret\n", -1, NULL));
  g_assert_true (g_file_set_contents (prog, "#!/bin/sh\nexit 7\n", -1, NULL));
  g_assert_no_errno (chmod (prog, 0755));
  g_assert_no_errno (chmod (f->dir, 0755));
  g_assert_no_errno (chmod (f->bound, 0755));
  g_assert_no_errno (chmod (f->mnt, 0755));
  g_assert_no_errno (g_mkdir (sub, 0755));
  g_assert_true (g_file_set_contents (inside, "in view\n", -1, NULL));
  g_mutex_init (&f->sink.lock);
  g_cond_init (&f->sink.cond);
  f->sink.recs = g_ptr_array_new_with_free_func (rec_free);
  f->snaps = g_array_new (FALSE, TRUE, sizeof (Snap));
  f->results = g_array_new (FALSE, TRUE, sizeof (int32_t));
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  (void) data;
  /* nothing of the view is mounted here: the child's namespace is gone */
  for (const char *const *d = (const char *const[]) { f->dir, f->bound, f->mnt, NULL }; *d != NULL; d++)
    {
      const char *argv[] = { "rm", "-rf", *d, NULL };

      g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL,
                                   NULL));
    }
  g_free (f->dir);
  g_free (f->parent);
  g_free (f->base);
  g_free (f->mnt);
  g_free (f->bound);
  g_free (f->skip);
  g_ptr_array_unref (f->sink.recs);
  g_mutex_clear (&f->sink.lock);
  g_cond_clear (&f->sink.cond);
  g_array_unref (f->snaps);
  g_array_unref (f->results);
}

/* ------------------------------------------------------------------------- */
/* The child                                                                 */
/* ------------------------------------------------------------------------- */

static void
child_send (int kind, int value)
{
  Msg m = { kind, value };

  if (write (child_msg_fd, &m, sizeof m) != (ssize_t) sizeof m)
    _exit (CHILD_SETUP_FAILED);
}

static void
child_result (int value)
{
  child_send (MSG_RESULT, value);
}

/* Waits for the parent to snapshot the counters. */
static void
child_sync (void)
{
  char byte;

  child_send (MSG_SYNC, 0);
  if (read (child_ack_fd, &byte, 1) != 1)
    _exit (CHILD_SETUP_FAILED);
}

static gboolean
write_file (const char *path, const char *text)
{
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  gboolean ok;

  if (fd < 0)
    return FALSE;
  ok = write (fd, text, strlen (text)) == (ssize_t) strlen (text);
  close (fd);
  return ok;
}

/* @fd over @sock, one byte with SCM_RIGHTS (GIO's message, not ours: the
 * test sends what the server receives through another implementation). */
static gboolean
send_descriptor (int sock, int fd)
{
  g_autoptr(GSocket) socket = g_socket_new_from_fd (dup (sock), NULL);
  g_autoptr(GSocketControlMessage) message = g_unix_fd_message_new ();
  GOutputVector vec = { "F", 1 };

  if (socket == NULL || !g_unix_fd_message_append_fd (G_UNIX_FD_MESSAGE (message), fd, NULL))
    return FALSE;
  return g_socket_send_message (socket, NULL, &vec, 1, &message, 1, 0, NULL, NULL) == 1;
}

static void
child_main (const Fixture *f, int sock, ChildProbe probe)
{
  char text[256], path[PATH_MAX];
  uid_t uid = getuid ();
  gid_t gid = getgid ();
  int fd;

  if (unshare (CLONE_NEWUSER | CLONE_NEWNS | (f->pidns ? CLONE_NEWPID : 0)) != 0)
    _exit (CHILD_SKIP_USERNS);
  g_snprintf (text, sizeof text, "%u %u 1", (unsigned) uid, (unsigned) uid);
  if (!write_file ("/proc/self/setgroups", "deny") || !write_file ("/proc/self/uid_map", text))
    _exit (CHILD_SKIP_USERNS);
  g_snprintf (text, sizeof text, "%u %u 1", (unsigned) gid, (unsigned) gid);
  if (!write_file ("/proc/self/gid_map", text))
    _exit (CHILD_SKIP_USERNS);
  if (f->pidns)
    {
      /* the mount is made by PID 1 of the new namespace, as rung 1's A */
      pid_t inner = fork ();
      int status;

      if (inner < 0)
        _exit (CHILD_SETUP_FAILED);
      if (inner > 0)
        {
          child_send (MSG_PID, (int) inner);
          close (sock);
          if (waitpid (inner, &status, 0) != inner)
            _exit (CHILD_SETUP_FAILED);
          _exit (WIFEXITED (status) ? WEXITSTATUS (status) : CHILD_SETUP_FAILED);
        }
    }
  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
    _exit (CHILD_SETUP_FAILED);
  fd = open ("/dev/fuse", O_RDWR | O_CLOEXEC);
  if (fd < 0)
    _exit (CHILD_SKIP_FUSE);
  /* the /pidns case also mounts as rung 1 does: default_permissions (the
   * kernel checks modes from the cached attributes: no ACCESS requests) */
  g_snprintf (text, sizeof text, "fd=%d,rootmode=40000,user_id=%u,group_id=%u%s", fd, (unsigned) uid, (unsigned) gid,
              f->pidns ? ",default_permissions" : "");
  if (mount ("sbx-view", f->mnt, "fuse", MS_NOSUID | MS_NODEV, text) != 0)
    _exit (CHILD_SKIP_MOUNT);
  if (!send_descriptor (sock, fd))
    _exit (CHILD_SETUP_FAILED);
  close (fd);   /* the server holds the only descriptor of the connection */
  close (sock);
  g_snprintf (path, sizeof path, "%s/bound", f->mnt);
  if (mount (f->bound, path, NULL, MS_BIND, NULL) != 0)
    _exit (CHILD_SETUP_FAILED);
  if (f->pidns)
    {
      g_snprintf (path, sizeof path, "%s/proc", f->mnt);
      if (mount ("proc", path, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
        _exit (CHILD_SETUP_FAILED);
    }
  /* the view becomes the namespace's root, as in a sandbox (a chroot would
   * leave the kernel naming the task's cwd from the old root) */
  if (chdir (f->mnt) != 0 || syscall (SYS_pivot_root, ".", ".") != 0 || umount2 (".", MNT_DETACH) != 0
      || chdir ("/") != 0)
    _exit (CHILD_SETUP_FAILED);
  child_result ((int) getpid ());
  probe (f);
  _exit (0);
}

/* ------------------------------------------------------------------------- */
/* The parent                                                                */
/* ------------------------------------------------------------------------- */

static SbxViewServer *
new_server (const Fixture *f, uint32_t policy_flags)
{
  g_autoptr(GError) error = NULL;
  const SbxViewEntry skeleton[] = {
    { f->parent, S_IFDIR, NULL },
    { "/bound", S_IFDIR, NULL },
    { "/emptydir", S_IFDIR, NULL },
    { "/file", S_IFREG, NULL },
    { "/lnk", S_IFLNK, "target/x" },
    { "/proc", S_IFDIR, NULL },
  };
  SbxViewServer *server = sbx_view_server_new (skeleton, G_N_ELEMENTS (skeleton), policy_flags, &error);

  g_assert_no_error (error);
  g_assert_nonnull (server);
  return server;
}

static void
snapshot (Fixture *f, SbxViewServer *server)
{
  Snap s = { 0 };

  s.requests = sbx_view_server_n_requests (server);
  s.denials = sbx_view_server_n_denials (server);
  g_mutex_lock (&f->sink.lock);
  s.sink = f->sink.n;
  g_mutex_unlock (&f->sink.lock);
  s.rss_kib = rss_kib ();
  g_array_append_val (f->snaps, s);
}

/* Stops @server when the sink has seen @n calls (MSG_LOOPING). */
static void
stop_after (Fixture *f, SbxViewServer *server, guint64 n)
{
  g_mutex_lock (&f->sink.lock);
  while (f->sink.n < n)
    g_cond_wait (&f->sink.cond, &f->sink.lock);
  g_mutex_unlock (&f->sink.lock);
  sbx_view_server_stop (server);
  g_mutex_lock (&f->sink.lock);
  f->sink.stopped = TRUE;
  g_mutex_unlock (&f->sink.lock);
}

/* Runs @probe in a child inside a view served by @server; FALSE (and
 * f->skip set) when this host cannot mount one. */
static gboolean
run_view (Fixture *f, SbxViewServer *server, ChildProbe probe, guint64 stop_at)
{
  g_autoptr(GError) error = NULL;
  SbxBackendDenialSinkV1 sink = { sizeof sink, 0, sink_denied, &f->sink };
  int sv[2], msg[2], ack[2], status;
  pid_t pid;
  Msg m;

  sbx_view_server_set_sink (server, &sink);
  g_assert_no_errno (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
  g_assert_no_errno (pipe2 (msg, O_CLOEXEC));
  g_assert_no_errno (pipe2 (ack, O_CLOEXEC));
  pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      close (sv[0]);
      close (msg[0]);
      close (ack[1]);
      child_msg_fd = msg[1];
      child_ack_fd = ack[0];
      child_main (f, sv[1], probe);
    }
  close (sv[1]);
  close (msg[1]);
  close (ack[0]);
  if (f->replacing)
    {
      /* An early root's server: serving a mount of ours, the child's
       * device replacing it when it comes (as when A cannot attach ours). */
      long dev = -1, mfd = sbx_linux_child_fuse_mount (geteuid (), getegid (), 1, &dev);

      g_assert_cmpint (mfd, >=, 0);
      g_assert_true (sbx_view_server_start_device (server, (int) dev, (int) mfd, &error));
      g_assert_no_error (error);
      g_assert_true (sbx_view_server_watch_replacement (server, sv[0]));
    }
  else
    {
      /* before the child sends: the server learns the mounter from the message */
      g_assert_true (sbx_view_server_start_receive (server, sv[0], &error));
      g_assert_no_error (error);
    }
  while (read (msg[0], &m, sizeof m) == (ssize_t) sizeof m)
    switch (m.kind)
      {
      case MSG_PID:
        /* as a spawn that knows its sbx-init once the clone returned */
        if (f->explicit_pid)
          sbx_view_server_set_sandbox_pid (server, m.value);
        break;
      case MSG_SYNC:
        snapshot (f, server);
        g_assert_cmpint (write (ack[1], "k", 1), ==, 1);
        break;
      case MSG_LOOPING:
        stop_after (f, server, stop_at);
        break;
      case MSG_RESULT:
        if (f->results->len == 0)
          f->child_pid = m.value;
        g_array_append_val (f->results, m.value);
        break;
      default:
        g_assert_not_reached ();
      }
  close (msg[0]);
  close (ack[1]);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFEXITED (status));
  switch (WEXITSTATUS (status))
    {
    case CHILD_SKIP_USERNS:
      f->skip = g_strdup ("user namespaces are refused to this uid");
      return FALSE;
    case CHILD_SKIP_FUSE:
      f->skip = g_strdup_printf ("/dev/fuse cannot be opened by uid %u (Debian's udev rule makes it 0666)",
                                 (unsigned) getuid ());
      return FALSE;
    case CHILD_SKIP_MOUNT:
      f->skip = g_strdup ("this kernel refuses a FUSE mount in a user namespace");
      return FALSE;
    case 0:
      break;
    default:
      g_error ("the view's child failed its setup (exit %d)", WEXITSTATUS (status));
    }
  g_array_remove_index (f->results, 0);   /* the pid */
  return TRUE;
}

static gboolean
fuse_usable (void)
{
  int fd = open ("/dev/fuse", O_RDWR | O_CLOEXEC);

  if (fd < 0)
    {
      g_autofree char *why = g_strdup_printf ("/dev/fuse cannot be opened by uid %u: %s (Debian's udev rule "
                                              "makes it 0666)", (unsigned) getuid (), g_strerror (errno));

      g_test_skip (why);
      return FALSE;
    }
  close (fd);
  return TRUE;
}

/* ------------------------------------------------------------------------- */
/* Probes (in the child, the view its root)                             */
/* ------------------------------------------------------------------------- */

static int
errno_of (int r)
{
  return r < 0 ? errno : 0;
}

static int
open_errno (const char *path, int flags)
{
  int fd = open (path, flags | O_CLOEXEC, 0644);

  if (fd < 0)
    return errno;
  close (fd);
  return 0;
}

static char *
in_dir (const Fixture *f, const char *name)
{
  return g_build_filename (f->dir, name, NULL);
}

/* Each case: what it does, its errno in the view, how many denials, and
 * the one denial's operation and target (relative to D; NULL: D). */
typedef struct
{
  const char *label;
  int       (*run) (const Fixture *f);
  int         expect_errno;
  guint       n_denials;
  uint32_t    op;
  const char *target;
} Case;

static int
c_read (const Fixture *f)
{
  g_autofree char *p = in_dir (f, "secret");

  return open_errno (p, O_RDONLY);
}

static int
c_stat (const Fixture *f)
{
  g_autofree char *p = in_dir (f, "secret");
  struct stat st;

  return errno_of (stat (p, &st));
}

static int
c_create (const Fixture *f)
{
  g_autofree char *p = in_dir (f, "new");

  return open_errno (p, O_WRONLY | O_CREAT);
}

static int
c_write (const Fixture *f)
{
  g_autofree char *p = in_dir (f, "secret");

  return open_errno (p, O_WRONLY);
}

static int
c_exec (const Fixture *f)
{
  g_autofree char *p = in_dir (f, "prog");
  char *argv[] = { p, NULL };

  execve (p, argv, environ);
  return errno;
}

static int
c_list (const Fixture *f)
{
  g_autofree char *p = in_dir (f, "sub");
  DIR *d = opendir (p);

  if (d == NULL)
    return errno;
  closedir (d);
  return 0;
}

static int
c_relative_cwd (const Fixture *f)
{
  g_autofree char *rel = g_build_filename (f->base, "secret", NULL);
  int err;

  if (chdir (f->parent) != 0)
    return -1;
  err = open_errno (rel, O_RDONLY);
  if (chdir ("/") != 0)
    return -1;
  return err;
}

static int
c_relative_dirfd (const Fixture *f)
{
  g_autofree char *rel = g_build_filename (f->base, "sub", NULL);
  int dfd = open (f->parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
  int fd, err;

  if (dfd < 0)
    return -1;
  fd = openat (dfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  err = fd < 0 ? errno : 0;
  if (fd >= 0)
    close (fd);
  close (dfd);
  return err;
}

static int
c_dotdot (const Fixture *f)
{
  g_autofree char *p = g_strdup_printf ("%s/../%s/./secret", f->dir, f->base);

  return open_errno (p, O_RDONLY);
}

static int
c_mkdir (const Fixture *f)
{
  g_autofree char *p = in_dir (f, "newdir");

  return errno_of (mkdir (p, 0755));
}

static int
c_missing (const Fixture *f)
{
  g_autofree char *p = in_dir (f, "missing");

  return open_errno (p, O_RDONLY);
}

/* Names the host lacks too, looked up by calls that do not write: ENOENT
 * and no denial, decided from the call's number and flags alone
 * (sbx_view_task_may_write()); the calls that do write (c_create,
 * c_mkdir, c_create_openat2, c_symlink, c_i386_create) are reported. */
static int
c_missing_access (const Fixture *f)
{
  g_autofree char *p = in_dir (f, "missing");

  return errno_of (access (p, R_OK));
}

static int
c_missing_exec (const Fixture *f)
{
  g_autofree char *p = in_dir (f, "missing");
  char *argv[] = { p, NULL };

  execve (p, argv, environ);
  return errno;
}

/* openat2(2): its flags are in the struct open_how it points at */
static int
openat2_errno (const char *path, uint64_t flags)
{
  struct open_how how = { .flags = flags | O_CLOEXEC, .mode = flags & O_CREAT ? 0644 : 0 };
  long fd = syscall (SYS_openat2, AT_FDCWD, path, &how, sizeof how);

  if (fd >= 0)
    {
      close ((int) fd);
      return 0;
    }
  return errno;
}

static int
c_missing_openat2 (const Fixture *f)
{
  g_autofree char *p = in_dir (f, "missing");

  return openat2_errno (p, O_RDONLY);
}

static int
c_create_openat2 (const Fixture *f)
{
  g_autofree char *p = in_dir (f, "new2");

  return openat2_errno (p, O_WRONLY | O_CREAT);
}

static int
c_symlink (const Fixture *f)
{
  g_autofree char *p = in_dir (f, "newlink");

  return errno_of (symlink ("secret", p));
}

static int
c_missing_root (const Fixture *f)
{
  struct stat st;

  (void) f;
  return errno_of (stat ("/sbx-view-no-such-name", &st));
}

static int
c_in_view (const Fixture *f)
{
  struct stat st;

  (void) f;
  return errno_of (stat ("/emptydir", &st));
}

#if defined(__x86_64__)
/* open(2) through the i386 gate: the path must sit below 4 GiB. */
static int
c_i386_open (const Fixture *f)
{
  g_autofree char *p = in_dir (f, "secret");
  char *low = mmap (NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
  long ret;

  if (low == MAP_FAILED)
    return -1;
  g_strlcpy (low, p, 4096);
  __asm__ volatile ("int $0x80" : "=a" (ret) : "a" (5L), "b" ((long) (uintptr_t) low), "c" (0L) : "memory");
  munmap (low, 4096);
  if (ret >= 0)
    {
      close ((int) ret);
      return 0;
    }
  return (int) -ret;
}

/* open(2) with O_CREAT of a missing name through the i386 gate: its
 * number and flags are the i386 ABI's (5; O_WRONLY | O_CREAT as on
 * x86-64). */
static int
c_i386_create (const Fixture *f)
{
  g_autofree char *p = in_dir (f, "new3");
  char *low = mmap (NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
  long ret;

  if (low == MAP_FAILED)
    return -1;
  g_strlcpy (low, p, 4096);
  __asm__ volatile ("int $0x80" : "=a" (ret) : "a" (5L), "b" ((long) (uintptr_t) low), "c" ((long) (O_WRONLY | O_CREAT)),
                    "d" (0644L) : "memory");
  munmap (low, 4096);
  if (ret >= 0)
    {
      close ((int) ret);
      return 0;
    }
  return (int) -ret;
}

/* open(2) through the x32 entry (2 | __X32_SYSCALL_BIT), where the kernel
 * has it. */
static int
c_x32_open (const Fixture *f)
{
  g_autofree char *p = in_dir (f, "secret");
  long ret = syscall (0x40000000L | 2, p, O_RDONLY | O_CLOEXEC);

  if (ret >= 0)
    {
      close ((int) ret);
      return 0;
    }
  return errno;
}
#endif

static const Case cases[] = {
  { "read", c_read, EACCES, 1, SBX_ABI_DENIAL_READ, "secret" },
  { "stat", c_stat, EACCES, 1, SBX_ABI_DENIAL_READ, "secret" },
  { "create", c_create, EACCES, 1, SBX_ABI_DENIAL_WRITE, "new" },
  { "write", c_write, EACCES, 1, SBX_ABI_DENIAL_WRITE, "secret" },
  { "exec", c_exec, EACCES, 1, SBX_ABI_DENIAL_EXEC, "prog" },
  { "list", c_list, EACCES, 1, SBX_ABI_DENIAL_LIST, "sub" },
  { "relative-cwd", c_relative_cwd, EACCES, 1, SBX_ABI_DENIAL_READ, "secret" },
  { "relative-dirfd", c_relative_dirfd, EACCES, 1, SBX_ABI_DENIAL_LIST, "sub" },
  { "dotdot", c_dotdot, EACCES, 1, SBX_ABI_DENIAL_READ, "secret" },
  { "mkdir", c_mkdir, EACCES, 1, SBX_ABI_DENIAL_WRITE, "newdir" },
  { "missing", c_missing, ENOENT, 0, 0, NULL },
  { "missing-access", c_missing_access, ENOENT, 0, 0, NULL },
  { "missing-exec", c_missing_exec, ENOENT, 0, 0, NULL },
  { "missing-openat2", c_missing_openat2, ENOENT, 0, 0, NULL },
  { "create-openat2", c_create_openat2, EACCES, 1, SBX_ABI_DENIAL_WRITE, "new2" },
  { "symlink", c_symlink, EACCES, 1, SBX_ABI_DENIAL_WRITE, "newlink" },
  { "missing-root", c_missing_root, ENOENT, 0, 0, NULL },
  { "in-view", c_in_view, 0, 0, 0, NULL },
#if defined(__x86_64__)
  { "i386-open", c_i386_open, EACCES, 1, SBX_ABI_DENIAL_READ, "secret" },
  { "x32-open", c_x32_open, EACCES, 1, SBX_ABI_DENIAL_READ, "secret" },
  { "i386-create", c_i386_create, EACCES, 1, SBX_ABI_DENIAL_WRITE, "new3" },
#endif
};

static void
probe_cases (const Fixture *f)
{
  for (size_t i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      child_sync ();
      child_result (cases[i].run (f));
    }
  child_sync ();
}

/* The same probes on the host (positive controls): each works there. */
static void
host_controls (const Fixture *f)
{
  g_autofree char *created = in_dir (f, "new");
  g_autofree char *newdir = in_dir (f, "newdir");
  g_autofree char *prog = in_dir (f, "prog");
  int status;
  pid_t pid;

  g_assert_cmpint (c_read (f), ==, 0);
  g_assert_cmpint (c_stat (f), ==, 0);
  g_assert_cmpint (c_create (f), ==, 0);
  g_assert_no_errno (unlink (created));
  g_assert_cmpint (c_write (f), ==, 0);
  g_assert_cmpint (c_list (f), ==, 0);
  g_assert_cmpint (c_dotdot (f), ==, 0);
  g_assert_cmpint (c_mkdir (f), ==, 0);
  g_assert_no_errno (rmdir (newdir));
  g_assert_cmpint (c_missing (f), ==, ENOENT);
#if defined(__x86_64__)
  {
    int r = c_i386_open (f);

    g_assert_true (r == 0 || r == ENOSYS);
  }
#endif
  pid = fork ();
  if (pid == 0)
    {
      char *argv[] = { prog, NULL };

      execve (prog, argv, environ);
      _exit (99);
    }
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 7);
}

static gboolean
x32_gate_open (void)
{
#if defined(__x86_64__)
  return syscall (0x40000000L | 39) > 0;   /* getpid */
#else
  return FALSE;
#endif
}

static gboolean
i386_gate_open (void)
{
#if defined(__x86_64__)
  long ret;

  __asm__ volatile ("int $0x80" : "=a" (ret) : "a" (20L) : "memory");   /* getpid */
  return ret > 0;
#else
  return FALSE;
#endif
}

static void
check_cases (Fixture *f, gboolean pidns)
{
  gboolean i386 = i386_gate_open ();
  gboolean x32 = x32_gate_open ();

  g_assert_cmpuint (f->results->len, ==, G_N_ELEMENTS (cases));
  g_assert_cmpuint (f->snaps->len, ==, G_N_ELEMENTS (cases) + 1);
  for (size_t i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const Case *c = &cases[i];
      Snap *before = &g_array_index (f->snaps, Snap, i), *after = &g_array_index (f->snaps, Snap, i + 1);
      int got = g_array_index (f->results, int32_t, i);
      g_autofree char *target = c->target != NULL ? in_dir (f, c->target) : NULL;

      g_test_message ("case %s: errno %d (%s), denials %" G_GUINT64_FORMAT, c->label, got,
                      g_strerror (got), after->denials - before->denials);
      if ((g_str_equal (c->label, "i386-open") && !i386) || (g_str_equal (c->label, "x32-open") && !x32))
        {
          g_test_message ("case %s: this kernel has no such entry", c->label);
          g_assert_cmpint (got, ==, ENOSYS);
          g_assert_cmpuint (after->denials - before->denials, ==, 0);
          continue;
        }
      g_assert_cmpint (got, ==, c->expect_errno);
      g_assert_cmpuint (after->denials - before->denials, ==, c->n_denials);
      g_assert_cmpuint (after->sink - before->sink, ==, c->n_denials);
      if (c->n_denials == 1)
        {
          Rec *r = g_ptr_array_index (f->sink.recs, before->sink);

          g_assert_cmpstr (r->target, ==, target);
          g_assert_cmpuint (r->op, ==, c->op);
          g_assert_cmpint (r->pid, ==, pidns ? 1 : f->child_pid);
          g_assert_nonnull (r->process);
        }
    }
}

/* @data: CLASSIFY_*.  In a pid namespace of its own, the mounter numbers
 * the requests: the server learns it from the descriptor's sender (or
 * set_sandbox_pid(), while serving) and reads the tasks through the
 * sandbox's procfs.  REPLACED (root): the server serves a mount of ours
 * first (an early root's, sbx_view_server_start_device()) and the child's
 * device replaces it (sbx_view_server_watch_replacement(), as when A
 * cannot attach the early root): every case holds on the replacement. */
enum { CLASSIFY_HOST_PIDS, CLASSIFY_PIDNS, CLASSIFY_PIDNS_EXPLICIT, CLASSIFY_REPLACED };

static void
test_classify (Fixture *f, gconstpointer data)
{
  g_autoptr(SbxViewServer) server = NULL;

  if (!fuse_usable ())
    return;
  f->pidns = GPOINTER_TO_INT (data) != CLASSIFY_HOST_PIDS;
  f->explicit_pid = GPOINTER_TO_INT (data) == CLASSIFY_PIDNS_EXPLICIT;
  f->replacing = GPOINTER_TO_INT (data) == CLASSIFY_REPLACED;
  if (f->replacing && geteuid () != 0)
    {
      g_test_skip ("a FUSE mount in our own user namespace (the early root's) needs root");
      return;
    }
  host_controls (f);
  server = new_server (f, 0);
  if (!run_view (f, server, probe_cases, 0))
    {
      g_test_skip (f->skip);
      return;
    }
  check_cases (f, f->pidns);
}

/* ------------------------------------------------------------------------- */

static void
probe_skeleton (const Fixture *f)
{
  struct stat st;
  char buf[64];
  ssize_t n;
  DIR *d;
  struct dirent *e;
  g_autoptr(GString) names = g_string_new (NULL);
  g_autofree char *inside = NULL;

  (void) f;
  child_result (errno_of (stat ("/emptydir", &st)));
  child_result (S_ISDIR (st.st_mode) && (st.st_mode & 07777) == 0755 && st.st_uid == getuid ()
                && st.st_gid == getgid ());
  child_result (errno_of (lstat ("/file", &st)));
  child_result (S_ISREG (st.st_mode) && st.st_size == 0);
  n = readlink ("/lnk", buf, sizeof buf);
  child_result (n == 8 && memcmp (buf, "target/x", 8) == 0);
  d = opendir ("/");
  if (d == NULL)
    _exit (CHILD_SETUP_FAILED);
  while ((e = readdir (d)) != NULL)
    g_string_append_printf (names, "%s%c,", e->d_name,
                            e->d_type == DT_DIR ? 'd' : e->d_type == DT_LNK ? 'l' : e->d_type == DT_REG ? 'f' : '?');
  closedir (d);
  child_result (g_str_has_prefix (names->str, ".d,..d,") && strstr (names->str, ",boundd,") != NULL
                && strstr (names->str, ",lnkl,") != NULL && strstr (names->str, ",filef,") != NULL);
  /* a bind on a skeleton directory: reached, and not through the server */
  child_sync ();
  for (int i = 0; i < 100; i++)
    {
      if (stat ("/bound/inside", &st) != 0 || stat ("/bound/missing", &st) == 0 || errno != ENOENT)
        _exit (CHILD_SETUP_FAILED);
      if (stat ("/emptydir", &st) != 0)
        _exit (CHILD_SETUP_FAILED);
    }
  child_sync ();
  inside = g_file_read_link ("/lnk", NULL);
  child_result (inside != NULL);
  /* writes on the skeleton itself */
  child_sync ();
  child_result (errno_of (rmdir ("/emptydir")));
  child_result (errno_of (chmod ("/emptydir", 0700)));
  child_result (open_errno ("/file", O_WRONLY));
  child_sync ();
  /* a skeleton file reads as the empty file the tmpfs had */
  {
    int fd = open ("/file", O_RDONLY | O_CLOEXEC);

    child_result (fd >= 0 && read (fd, buf, sizeof buf) == 0);
    if (fd >= 0)
      close (fd);
  }
}

static void
test_skeleton (Fixture *f, gconstpointer data)
{
  g_autoptr(SbxViewServer) server = NULL;
  Snap *s;

  (void) data;
  if (!fuse_usable ())
    return;
  {
    /* positive controls of the skeleton writes: the same calls on the host */
    g_autofree char *d = g_build_filename (f->dir, "emptydir", NULL);
    g_autofree char *file = g_build_filename (f->dir, "secret", NULL);

    g_assert_no_errno (g_mkdir (d, 0755));
    g_assert_no_errno (chmod (d, 0700));
    g_assert_no_errno (rmdir (d));
    g_assert_cmpint (open_errno (file, O_WRONLY), ==, 0);
  }
  server = new_server (f, 0);
  if (!run_view (f, server, probe_skeleton, 0))
    {
      g_test_skip (f->skip);
      return;
    }
  g_assert_cmpuint (f->results->len, ==, 11);
  g_assert_cmpint (g_array_index (f->results, int32_t, 0), ==, 0);
  g_assert_cmpint (g_array_index (f->results, int32_t, 1), ==, 1);
  g_assert_cmpint (g_array_index (f->results, int32_t, 2), ==, 0);
  g_assert_cmpint (g_array_index (f->results, int32_t, 3), ==, 1);
  g_assert_cmpint (g_array_index (f->results, int32_t, 4), ==, 1);
  g_assert_cmpint (g_array_index (f->results, int32_t, 5), ==, 1);
  g_assert_cmpint (g_array_index (f->results, int32_t, 6), ==, 1);
  g_assert_cmpuint (f->snaps->len, ==, 4);
  s = (Snap *) (void *) f->snaps->data;
  /* 300 lookups inside the view: not one request */
  g_assert_cmpuint (s[1].requests, ==, s[0].requests);
  g_assert_cmpuint (s[1].denials, ==, s[0].denials);
  /* rmdir and chmod of a skeleton entry: EACCES, one write denial each */
  g_assert_cmpint (g_array_index (f->results, int32_t, 7), ==, EACCES);
  g_assert_cmpint (g_array_index (f->results, int32_t, 8), ==, EACCES);
  g_assert_cmpint (g_array_index (f->results, int32_t, 9), ==, EACCES);
  g_assert_cmpuint (s[3].denials - s[2].denials, ==, 3);
  for (guint i = 0; i < 3; i++)
    {
      Rec *r = g_ptr_array_index (f->sink.recs, s[2].sink + i);

      g_assert_cmpuint (r->op, ==, SBX_ABI_DENIAL_WRITE);
      g_assert_cmpstr (r->target, ==, i < 2 ? "/emptydir" : "/file");
    }
  g_assert_cmpint (g_array_index (f->results, int32_t, 10), ==, 1);
}

/* One listing of a skeleton directory teaches the kernel every entry
 * (READDIRPLUS): the lookups after it make no request.  This is what A's
 * listing of each skeleton directory before its binds relies on
 * (sbx-linux-child-mount.c); without READDIRPLUS each stat would be a
 * LOOKUP. */
static void
probe_listed (const Fixture *f)
{
  struct stat st;
  DIR *d;
  int n = 0;

  (void) f;
  child_sync ();
  d = opendir ("/");
  if (d == NULL)
    _exit (CHILD_SETUP_FAILED);
  while (readdir (d) != NULL)
    n++;
  closedir (d);
  child_sync ();
  child_result (n);
  child_result (errno_of (stat ("/emptydir", &st)));
  child_result (errno_of (lstat ("/file", &st)));
  child_result (errno_of (lstat ("/lnk", &st)));
  child_result (errno_of (stat ("/proc", &st)));
  child_sync ();
  /* a second listing: its own request(s), still no lookup after it */
  d = opendir ("/");
  if (d == NULL)
    _exit (CHILD_SETUP_FAILED);
  while (readdir (d) != NULL)
    ;
  closedir (d);
  child_sync ();
}

static void
test_listed (Fixture *f, gconstpointer data)
{
  g_autoptr(SbxViewServer) server = NULL;
  Snap *s;

  (void) data;
  if (!fuse_usable ())
    return;
  server = new_server (f, 0);
  if (!run_view (f, server, probe_listed, 0))
    {
      g_test_skip (f->skip);
      return;
    }
  g_assert_cmpuint (f->results->len, ==, 5);
  /* ".", "..", the fixture's top directory, bound, emptydir, file, lnk, proc */
  g_assert_cmpint (g_array_index (f->results, int32_t, 0), ==, 8);
  for (guint i = 1; i < 5; i++)
    g_assert_cmpint (g_array_index (f->results, int32_t, i), ==, 0);
  g_assert_cmpuint (f->snaps->len, ==, 4);
  s = (Snap *) (void *) f->snaps->data;
  /* the listing: OPENDIR, the root's attributes, READDIRPLUS and the
   * final empty page; never one per entry */
  g_assert_cmpuint (s[1].requests - s[0].requests, >=, 1);
  g_assert_cmpuint (s[1].requests - s[0].requests, <=, 4);
  /* four lookups of listed names: no request */
  g_assert_cmpuint (s[2].requests, ==, s[1].requests);
  g_assert_cmpuint (s[3].denials, ==, s[0].denials);
}

/* READDIRPLUS and OPENDIR at the protocol: each entry carries the answer
 * its lookup gets ("." and ".." none), a short buffer continues at the
 * next entry's offset, and OPENDIR is ENOSYS only where the kernel said
 * it copes (FUSE_NO_OPENDIR_SUPPORT). */
static void
feed_init (SbxViewServer *server, int sv[2], uint32_t flags, uint32_t *out_flags)
{
  uint8_t req[256], out[512];
  struct fuse_in_header *h = (void *) req;
  struct fuse_init_in *in = (void *) (req + sizeof *h);
  const struct fuse_init_out *o = (const void *) (out + sizeof (struct fuse_out_header));

  memset (req, 0, sizeof req);
  h->len = sizeof *h + sizeof *in;
  h->opcode = FUSE_INIT;
  h->unique = 1;
  in->major = FUSE_KERNEL_VERSION;
  in->minor = FUSE_KERNEL_MINOR_VERSION;
  in->flags = flags;
  sbx_view_server_feed (server, sv[0], req, h->len);
  g_assert_cmpint (read (sv[1], out, sizeof out), ==, sizeof (struct fuse_out_header) + sizeof *o);
  *out_flags = o->flags;
}

static ssize_t
feed_read (SbxViewServer *server, int sv[2], uint32_t opcode, uint64_t nodeid, uint64_t offset,
           uint32_t size, uint8_t *out, size_t out_size)
{
  uint8_t req[256];
  struct fuse_in_header *h = (void *) req;
  struct fuse_read_in *in = (void *) (req + sizeof *h);

  memset (req, 0, sizeof req);
  h->len = sizeof *h + sizeof *in;
  h->opcode = opcode;
  h->unique = 2;
  h->nodeid = nodeid;
  in->offset = offset;
  in->size = size;
  sbx_view_server_feed (server, sv[0], req, h->len);
  return read (sv[1], out, out_size);
}

static void
test_readdirplus_protocol (void)
{
  const SbxViewEntry skeleton[] = {
    { "/usr", S_IFDIR, NULL }, { "/lnk", S_IFLNK, "usr" }, { "/etc/passwd", S_IFREG, NULL },
  };
  uint8_t out[16384];
  const struct fuse_out_header *oh = (const void *) out;
  int sv[2];
  uint32_t flags;
  ssize_t n;
  size_t at;
  guint count = 0;
  uint64_t last_off = 0, lnk = 0;
  g_autoptr(GString) names = g_string_new (NULL);

  g_assert_no_errno (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv));
  {
    g_autoptr(SbxViewServer) server = sbx_view_server_new (skeleton, G_N_ELEMENTS (skeleton), 0, NULL);

    feed_init (server, sv, FUSE_DO_READDIRPLUS | FUSE_NO_OPENDIR_SUPPORT | FUSE_CACHE_SYMLINKS, &flags);
    g_assert_true (flags & FUSE_DO_READDIRPLUS);
    g_assert_false (flags & FUSE_READDIRPLUS_AUTO);
    /* OPENDIR: ENOSYS, the kernel stops sending it */
    n = feed_read (server, sv, FUSE_OPENDIR, 1, 0, 0, out, sizeof out);
    g_assert_cmpint (n, ==, sizeof *oh);
    g_assert_cmpint (oh->error, ==, -ENOSYS);
    /* the whole root in one answer */
    n = feed_read (server, sv, FUSE_READDIRPLUS, 1, 0, 4096, out, sizeof out);
    g_assert_cmpint (n, >, (ssize_t) sizeof *oh);
    g_assert_cmpint (oh->error, ==, 0);
    for (at = sizeof *oh; at < (size_t) n; count++)
      {
        const struct fuse_direntplus *e = (const void *) (out + at);
        g_autofree char *name = g_strndup (e->dirent.name, e->dirent.namelen);

        g_string_append_printf (names, "%s:%" G_GUINT64_FORMAT ",", name, e->entry_out.nodeid);
        if (strcmp (name, "lnk") == 0)
          lnk = e->entry_out.nodeid;
        if (strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
          g_assert_cmpuint (e->entry_out.nodeid, ==, 0);
        else
          {
            /* the answer a lookup gives: the entry's id, kept forever, its type */
            g_assert_cmpuint (e->entry_out.nodeid, ==, e->dirent.ino);
            g_assert_cmpuint (e->entry_out.entry_valid, ==, UINT32_MAX);
            g_assert_cmpuint (e->entry_out.attr.ino, ==, e->dirent.ino);
            g_assert_cmpuint (e->entry_out.attr.mode >> 12, ==, e->dirent.type);
          }
        g_assert_cmpuint (e->dirent.off, >, last_off);
        last_off = e->dirent.off;
        at += FUSE_DIRENTPLUS_SIZE (e);
      }
    g_assert_cmpuint (at, ==, (size_t) n);
    g_assert_cmpuint (count, ==, 5);   /* ".", "..", usr, lnk, etc */
    g_assert_nonnull (strstr (names->str, "usr:"));
    g_assert_nonnull (strstr (names->str, "lnk:"));
    g_assert_nonnull (strstr (names->str, "etc:"));
    /* a buffer for one entry: one entry, and the next call continues after it */
    n = feed_read (server, sv, FUSE_READDIRPLUS, 1, 2, 200, out, sizeof out);
    g_assert_cmpint (n, ==, sizeof *oh + FUSE_DIRENTPLUS_SIZE ((const struct fuse_direntplus *) (out + sizeof *oh)));
    g_assert_cmpuint (((const struct fuse_direntplus *) (out + sizeof *oh))->dirent.off, ==, 3);
    /* past the end: empty */
    n = feed_read (server, sv, FUSE_READDIRPLUS, 1, 5, 4096, out, sizeof out);
    g_assert_cmpint (n, ==, sizeof *oh);
    /* not a directory */
    g_assert_cmpuint (lnk, >, 1);
    n = feed_read (server, sv, FUSE_READDIRPLUS, lnk, 0, 4096, out, sizeof out);
    g_assert_cmpint (oh->error, ==, -ENOTDIR);
  }
  {
    /* a kernel without FUSE_NO_OPENDIR_SUPPORT: OPENDIR succeeds */
    g_autoptr(SbxViewServer) server = sbx_view_server_new (skeleton, G_N_ELEMENTS (skeleton), 0, NULL);

    feed_init (server, sv, FUSE_DO_READDIRPLUS, &flags);
    n = feed_read (server, sv, FUSE_OPENDIR, 1, 0, 0, out, sizeof out);
    g_assert_cmpint (n, ==, sizeof *oh + sizeof (struct fuse_open_out));
    g_assert_cmpint (oh->error, ==, 0);
    /* and a kernel without READDIRPLUS is not told to use it */
    feed_init (server, sv, 0, &flags);
    g_assert_false (flags & FUSE_DO_READDIRPLUS);
  }
  close (sv[0]);
  close (sv[1]);
}

/* ------------------------------------------------------------------------- */

static void
probe_not_found (const Fixture *f)
{
  g_autofree char *secret = in_dir (f, "secret");
  g_autofree char *missing = in_dir (f, "missing");
  g_autofree char *other = g_build_filename (f->parent, "sbx-view-no-such-name", NULL);

  child_sync ();
  child_result (open_errno (secret, O_RDONLY));
  child_result (open_errno (secret, O_RDONLY));
  child_result (open_errno (secret, O_RDONLY));
  child_sync ();
  /* creating a name that exists on the host, in a skeleton directory */
  child_result (open_errno (f->dir, O_WRONLY | O_CREAT));
  child_sync ();
  child_result (open_errno (missing, O_RDONLY));
  child_sync ();
  /* removing and creating names in a skeleton directory: the same errno
   * whether the host has the name or not (existence never shows) */
  child_result (errno_of (rmdir (f->dir)));
  child_result (errno_of (rmdir (other)));
  child_result (errno_of (mkdir (f->dir, 0755)));
  child_result (errno_of (mkdir (other, 0755)));
  child_sync ();
}

static void
test_not_found (Fixture *f, gconstpointer data)
{
  g_autoptr(SbxViewServer) server = NULL;
  g_autofree char *other = g_build_filename (f->parent, "sbx-view-no-such-name", NULL);
  Snap *s;
  Rec *r;

  (void) data;
  if (!fuse_usable ())
    return;
  /* positive controls: the read, and mkdir and rmdir of a name beside D */
  g_assert_cmpint (c_read (f), ==, 0);
  g_assert_no_errno (g_mkdir (other, 0755));
  g_assert_no_errno (rmdir (other));
  server = new_server (f, SBX_POLICY_DENIED_NOT_FOUND);
  if (!run_view (f, server, probe_not_found, 0))
    {
      g_test_skip (f->skip);
      return;
    }
  s = (Snap *) (void *) f->snaps->data;
  g_assert_cmpuint (f->results->len, ==, 9);
  /* a denied existing path reads as missing, still reported, once per
   * attempt (the kernel drops the uncached negative entry each time) */
  for (guint i = 0; i < 3; i++)
    g_assert_cmpint (g_array_index (f->results, int32_t, i), ==, ENOENT);
  g_assert_cmpuint (s[1].denials - s[0].denials, ==, 3);
  r = g_ptr_array_index (f->sink.recs, s[0].sink);
  g_assert_cmpuint (r->op, ==, SBX_ABI_DENIAL_READ);
  /* a create after the hiding ENOENT: EACCES (as for a missing name), one
   * denial for the attempt, not one per request */
  g_assert_cmpint (g_array_index (f->results, int32_t, 3), ==, EACCES);
  g_assert_cmpuint (s[2].denials - s[1].denials, ==, 1);
  r = g_ptr_array_index (f->sink.recs, s[1].sink);
  g_assert_cmpuint (r->op, ==, SBX_ABI_DENIAL_WRITE);
  g_assert_cmpstr (r->target, ==, f->dir);
  /* missing on the host: ENOENT, nothing to report */
  g_assert_cmpint (g_array_index (f->results, int32_t, 4), ==, ENOENT);
  g_assert_cmpuint (s[3].denials - s[2].denials, ==, 0);
  /* rmdir: ENOENT, mkdir: EACCES, for an existing and a missing name alike;
   * one write denial each */
  g_assert_cmpint (g_array_index (f->results, int32_t, 5), ==, ENOENT);
  g_assert_cmpint (g_array_index (f->results, int32_t, 6), ==, ENOENT);
  g_assert_cmpint (g_array_index (f->results, int32_t, 7), ==, EACCES);
  g_assert_cmpint (g_array_index (f->results, int32_t, 8), ==, EACCES);
  g_assert_cmpuint (s[4].denials - s[3].denials, ==, 4);
  for (guint i = 0; i < 4; i++)
    {
      r = g_ptr_array_index (f->sink.recs, s[3].sink + i);
      g_assert_cmpuint (r->op, ==, SBX_ABI_DENIAL_WRITE);
      g_assert_cmpstr (r->target, ==, i % 2 == 0 ? f->dir : other);
    }
}

/* ------------------------------------------------------------------------- */

static void
probe_loop_until_gone (const Fixture *f)
{
  g_autofree char *secret = in_dir (f, "secret");
  struct stat st;
  int n = 0;

  child_send (MSG_LOOPING, 0);
  while (stat (secret, &st) != 0 && errno == EACCES)
    n++;
  child_result (errno);
  child_result (n);
}

static void
test_stop_pending (Fixture *f, gconstpointer data)
{
  SbxViewServer *server;
  guint fds_before;
  int err;

  (void) data;
  if (!fuse_usable ())
    return;
  fds_before = count_fds ();
  server = new_server (f, 0);
  if (!run_view (f, server, probe_loop_until_gone, 200))
    {
      g_test_skip (f->skip);
      sbx_view_server_free (server);
      return;
    }
  g_assert_cmpuint (f->results->len, ==, 2);
  err = g_array_index (f->results, int32_t, 0);
  g_test_message ("after stop(): %s, %d denied lookups before", g_strerror (err),
                  g_array_index (f->results, int32_t, 1));
  g_assert_true (err == ENOTCONN || err == ECONNABORTED);
  g_assert_cmpint (g_array_index (f->results, int32_t, 1), >=, 200);
  g_assert_cmpuint (f->sink.after_stop, ==, 0);
  sbx_view_server_stop (server);   /* idempotent */
  sbx_view_server_free (server);
  g_assert_cmpuint (count_fds (), ==, fds_before);
}

/* ------------------------------------------------------------------------- */

static void
probe_million (const Fixture *f)
{
  g_autofree char *secret = in_dir (f, "secret");
  struct stat st;
  int wrong = 0;

  child_sync ();
  for (guint i = 0; i < f->n_loop; i++)
    if (stat (secret, &st) == 0 || errno != EACCES)
      wrong++;
  child_sync ();
  child_result (wrong);
}

static void
test_million (Fixture *f, gconstpointer data)
{
  g_autoptr(SbxViewServer) server = NULL;
  gint64 t0, t1;
  Snap *s;

  (void) data;
  if (!fuse_usable ())
    return;
#ifdef UNDER_ASAN
  f->n_loop = 100000;
#else
  f->n_loop = 1000000;
#endif
  if (g_test_thorough ())
    f->n_loop = 1000000;
  server = new_server (f, 0);
  t0 = g_get_monotonic_time ();
  if (!run_view (f, server, probe_million, 0))
    {
      g_test_skip (f->skip);
      return;
    }
  t1 = g_get_monotonic_time ();
  s = (Snap *) (void *) f->snaps->data;
  g_assert_cmpint (g_array_index (f->results, int32_t, 0), ==, 0);
  /* one request per attempt (and perhaps a FORGET the kernel queues) */
  g_assert_cmpuint (s[1].requests - s[0].requests, >=, f->n_loop);
  g_assert_cmpuint (s[1].requests - s[0].requests, <=, f->n_loop + 8);
  g_assert_cmpuint (s[1].denials - s[0].denials, ==, f->n_loop);
  g_assert_cmpuint (s[1].sink - s[0].sink, ==, f->n_loop);
  g_test_message ("%u denied lookups in %.2f s (%.0f/s, the whole run); RSS %" G_GSIZE_FORMAT " KiB -> %"
                  G_GSIZE_FORMAT " KiB", f->n_loop, (double) (t1 - t0) / 1e6,
                  f->n_loop / ((double) (t1 - t0) / 1e6), s[0].rss_kib, s[1].rss_kib);
  /* bounded: nothing is kept per request.  Not asserted under ASan: its
   * quarantine keeps every freed block resident (up to 256 MiB), so RSS
   * grows with any temporary allocation of a request; LeakSanitizer checks
   * that nothing is kept there, and the count above is asserted in every
   * build. */
#ifndef UNDER_ASAN
  g_assert_cmpuint (s[1].rss_kib, <, s[0].rss_kib + 4096);
#endif
}

/* ------------------------------------------------------------------------- */
/* Without a kernel                                                          */
/* ------------------------------------------------------------------------- */

static void
test_malformed_skeleton (void)
{
  const struct
  {
    SbxViewEntry entries[2];
    size_t       n;
    const char  *what;
    const char  *names;
  } rows[] = {
    { { { "usr", S_IFDIR, NULL } }, 1, "not a clean absolute path", "\"usr\"" },
    { { { "/usr/../etc", S_IFDIR, NULL } }, 1, "not a clean absolute path", "\"/usr/../etc\"" },
    { { { "/usr//lib", S_IFDIR, NULL } }, 1, "not a clean absolute path", "\"/usr//lib\"" },
    { { { "/usr/", S_IFDIR, NULL } }, 1, "not a clean absolute path", "\"/usr/\"" },
    { { { "/", S_IFDIR, NULL } }, 1, "not a clean absolute path", "\"/\"" },
    { { { "/f", S_IFREG, NULL }, { "/f/x", S_IFDIR, NULL } }, 2, "not a directory", "\"/f\"" },
    { { { "/l", S_IFLNK, "usr" }, { "/l/x", S_IFREG, NULL } }, 2, "not a directory", "\"/l\"" },
    { { { "/a/b", S_IFDIR, NULL }, { "/a/b", S_IFDIR, NULL } }, 2, "given twice", "\"/a/b\"" },
    { { { "/a/b", S_IFDIR, NULL }, { "/a", S_IFREG, NULL } }, 2, "not a directory", "\"/a\"" },
    { { { "/l", S_IFLNK, NULL } }, 1, "link target", "\"/l\"" },
    { { { "/d", S_IFDIR, "x" } }, 1, "link target", "\"/d\"" },
    { { { "/c", S_IFCHR, NULL } }, 1, "link target", "\"/c\"" },
  };

  for (size_t i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(SbxViewServer) server = sbx_view_server_new (rows[i].entries, rows[i].n, 0, &error);

      g_assert_null (server);
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
      g_assert_nonnull (strstr (error->message, rows[i].what));
      g_test_message ("row %zu: %s", i, error->message);
      g_assert_nonnull (strstr (error->message, rows[i].names));
    }
  {
    /* an explicit directory that an earlier entry implied is fine */
    const SbxViewEntry ok[] = { { "/a/b", S_IFDIR, NULL }, { "/a", S_IFDIR, NULL } };
    g_autoptr(SbxViewServer) server = sbx_view_server_new (ok, 2, 0, NULL);

    g_assert_nonnull (server);
  }
}

/* Garbage through the request path: never a crash, only error replies or
 * silence, and the skeleton is never answered negatively. */
static void
test_garbage (void)
{
  const SbxViewEntry skeleton[] = { { "/usr", S_IFDIR, NULL }, { "/lnk", S_IFLNK, "usr" } };
  g_autoptr(SbxViewServer) server = sbx_view_server_new (skeleton, 2, 0, NULL);
  GRand *rand = g_rand_new_with_seed (29);
  uint8_t req[512], out[16384];
  struct fuse_in_header *h = (void *) req;
  int sv[2];

  g_assert_no_errno (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv));
  /* before INIT: EIO */
  memset (req, 0, sizeof req);
  h->len = sizeof *h + 4;
  h->opcode = FUSE_LOOKUP;
  h->unique = 7;
  h->nodeid = 1;
  memcpy (req + sizeof *h, "usr", 4);
  sbx_view_server_feed (server, sv[0], req, h->len);
  g_assert_cmpint (read (sv[1], out, sizeof out), ==, sizeof (struct fuse_out_header));
  g_assert_cmpint (((struct fuse_out_header *) (void *) out)->error, ==, -EIO);
  /* INIT */
  {
    struct fuse_init_in *in = (void *) (req + sizeof *h);

    memset (req, 0, sizeof req);
    h->len = sizeof *h + sizeof *in;
    h->opcode = FUSE_INIT;
    in->major = FUSE_KERNEL_VERSION;
    in->minor = FUSE_KERNEL_MINOR_VERSION;
    sbx_view_server_feed (server, sv[0], req, h->len);
    g_assert_cmpint (read (sv[1], out, sizeof out), >, (ssize_t) sizeof (struct fuse_out_header));
  }
  /* a good lookup answers the skeleton entry */
  memset (req, 0, sizeof req);
  h->len = sizeof *h + 4;
  h->opcode = FUSE_LOOKUP;
  h->nodeid = 1;
  memcpy (req + sizeof *h, "usr", 4);
  sbx_view_server_feed (server, sv[0], req, h->len);
  g_assert_cmpint (read (sv[1], out, sizeof out), ==,
                   sizeof (struct fuse_out_header) + sizeof (struct fuse_entry_out));
  /* a name without its NUL, a bad node, a short body, every opcode with
   * random bytes and lengths */
  for (int i = 0; i < 200000; i++)
    {
      size_t len = (size_t) g_rand_int_range (rand, 0, sizeof req);

      for (size_t k = 0; k < sizeof req; k++)
        req[k] = (uint8_t) g_rand_int (rand);
      if (len >= sizeof *h)
        {
          h->len = g_rand_boolean (rand) ? (uint32_t) len : h->len;
          h->opcode = (uint32_t) g_rand_int_range (rand, 0, 60);
          /* the skeleton's nodes, the file slots and past them */
          h->nodeid = (uint64_t) g_rand_int_range (rand, 0, 6 + SBX_VIEW_N_SLOTS + 4);
          if (h->opcode == FUSE_INIT)
            h->opcode = FUSE_LOOKUP;
          if (g_rand_boolean (rand))
            h->pid = 0;
        }
      sbx_view_server_feed (server, sv[0], req, len);
      while (read (sv[1], out, sizeof out) > 0)
        {
          struct fuse_out_header *o = (void *) out;

          g_assert_cmpint (o->error, <=, 0);
        }
    }
  /* the skeleton is still answered */
  memset (req, 0, sizeof req);
  h->len = sizeof *h + 4;
  h->opcode = FUSE_LOOKUP;
  h->nodeid = 1;
  memcpy (req + sizeof *h, "lnk", 4);
  sbx_view_server_feed (server, sv[0], req, h->len);
  g_assert_cmpint (read (sv[1], out, sizeof out), ==,
                   sizeof (struct fuse_out_header) + sizeof (struct fuse_entry_out));
  g_assert_cmpint (((struct fuse_out_header *) (void *) out)->error, ==, 0);
  close (sv[0]);
  close (sv[1]);
  g_rand_free (rand);
}

typedef struct
{
  int asked;
  int denied;
} SinkCounts;

static void
counts_denied (void *data, const SbxBackendDenialV1 *denial)
{
  (void) denial;
  ((SinkCounts *) data)->denied++;
}

static void
counts_ask (void *data, const SbxBackendDenialV1 *request, SbxBackendAnswerFunc *answer, void *ticket)
{
  (void) request;
  ((SinkCounts *) data)->asked++;
  answer (ticket, SBX_ABI_DECISION_FOR_RUN);
}

/* One request on the fed server (@body of @blen bytes); the reply's error,
 * its payload in @out. */
static int
feed_one (SbxViewServer *server, int sv[2], uint32_t opcode, uint64_t nodeid, const void *body, size_t blen,
          uint8_t *out, size_t size)
{
  uint8_t req[512] = { 0 };
  struct fuse_in_header *h = (void *) req;
  ssize_t n;

  g_assert_cmpuint (blen, <=, sizeof req - sizeof *h);
  h->len = (uint32_t) (sizeof *h + blen);
  h->opcode = opcode;
  h->unique = 42;
  h->nodeid = nodeid;
  h->pid = 1;
  if (blen > 0)
    memcpy (req + sizeof *h, body, blen);   /* a request without a body passes NULL */
  sbx_view_server_feed (server, sv[0], req, h->len);
  n = read (sv[1], out, size);
  g_assert_cmpint (n, >=, (ssize_t) sizeof (struct fuse_out_header));
  return ((struct fuse_out_header *) (void *) out)->error;
}

/* The file slots (sbx-linux-view-files.c): a slot's name answers one
 * lookup, and only when the sink can ask; a slot is a regular file, opens
 * nothing unbound, and refuses every garbage request with an error; with
 * no attempt, nothing is asked. */
static void
test_slots (void)
{
  const SbxViewEntry skeleton[] = { { "/usr", S_IFDIR, NULL } };
  g_autoptr(SbxViewServer) server = sbx_view_server_new (skeleton, 1, 0, NULL);
  const uint64_t slot0 = 3;   /* after the root and /usr */
  SinkCounts counts = { 0 };
  SbxBackendDenialSinkV1 sink = { 0 };
  struct fuse_init_in init = { 0 };
  struct fuse_open_in open_in = { 0 };
  struct fuse_read_in read_in = { 0 };
  struct fuse_release_in release_in = { 0 };
  struct fuse_setattr_in setattr_in = { 0 };
  uint8_t out[8192];
  const struct fuse_entry_out *e = (const void *) (out + sizeof (struct fuse_out_header));
  const struct fuse_attr_out *attr = (const void *) (out + sizeof (struct fuse_out_header));
  int sv[2];

  g_assert_no_errno (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv));
  init.major = FUSE_KERNEL_VERSION;
  init.minor = FUSE_KERNEL_MINOR_VERSION;
  g_assert_cmpint (feed_one (server, sv, FUSE_INIT, 0, &init, sizeof init, out, sizeof out), ==, 0);
  /* no sink that asks: the name is missing, and stays unshown */
  g_assert_cmpint (feed_one (server, sv, FUSE_LOOKUP, 1, ".sbx-view-slot-0", 17, out, sizeof out), ==, -ENOENT);
  sink.struct_size = sizeof sink;
  sink.denied = counts_denied;
  sink.ask = counts_ask;
  sink.data = &counts;
  sbx_view_server_set_sink (server, &sink);
  /* shown once, as a regular file with timeouts 0; then missing */
  g_assert_cmpint (feed_one (server, sv, FUSE_LOOKUP, 1, ".sbx-view-slot-0", 17, out, sizeof out), ==, 0);
  g_assert_cmpuint (e->nodeid, ==, slot0);
  g_assert_cmpuint (e->attr.mode & S_IFMT, ==, S_IFREG);
  g_assert_cmpuint (e->entry_valid, ==, 0);
  g_assert_cmpuint (e->attr_valid, ==, 0);
  g_assert_cmpint (feed_one (server, sv, FUSE_LOOKUP, 1, ".sbx-view-slot-0", 17, out, sizeof out), ==, -ENOENT);
  g_assert_cmpint (feed_one (server, sv, FUSE_LOOKUP, 1, ".sbx-view-slot-15", 18, out, sizeof out), ==, 0);
  g_assert_cmpuint (e->nodeid, ==, slot0 + SBX_VIEW_N_SLOTS - 1);
  /* not slot names: the view's answer for a name outside it */
  g_assert_cmpint (feed_one (server, sv, FUSE_LOOKUP, 1, ".sbx-view-slot-16", 18, out, sizeof out), <, 0);
  g_assert_cmpint (feed_one (server, sv, FUSE_LOOKUP, 1, ".sbx-view-slot-01", 18, out, sizeof out), <, 0);
  g_assert_cmpint (feed_one (server, sv, FUSE_LOOKUP, 2, ".sbx-view-slot-1", 17, out, sizeof out), <, 0);
  /* an unbound slot: a regular file of nothing, opening nothing */
  g_assert_cmpint (feed_one (server, sv, FUSE_GETATTR, slot0, NULL, 0, out, sizeof out), ==, 0);
  g_assert_cmpuint (attr->attr.mode, ==, S_IFREG);
  g_assert_cmpuint (attr->attr.size, ==, 0);
  open_in.flags = O_RDONLY;
  g_assert_cmpint (feed_one (server, sv, FUSE_OPEN, slot0, &open_in, sizeof open_in, out, sizeof out), ==, -EACCES);
  g_assert_cmpint (feed_one (server, sv, FUSE_OPEN, slot0, &open_in, 2, out, sizeof out), ==, -EINVAL);
  read_in.fh = 99;
  read_in.size = 4096;
  g_assert_cmpint (feed_one (server, sv, FUSE_READ, slot0, &read_in, sizeof read_in, out, sizeof out), ==, -EBADF);
  g_assert_cmpint (feed_one (server, sv, FUSE_READ, slot0, &read_in, 3, out, sizeof out), ==, -EINVAL);
  release_in.fh = 99;
  g_assert_cmpint (feed_one (server, sv, FUSE_RELEASE, slot0, &release_in, sizeof release_in, out, sizeof out), ==, 0);
  g_assert_cmpint (feed_one (server, sv, FUSE_LOOKUP, slot0, "x", 2, out, sizeof out), ==, -ENOTDIR);
  g_assert_cmpint (feed_one (server, sv, FUSE_OPENDIR, slot0, &open_in, sizeof open_in, out, sizeof out), ==,
                   -ENOTDIR);
  g_assert_cmpint (feed_one (server, sv, FUSE_SETATTR, slot0, &setattr_in, sizeof setattr_in, out, sizeof out), ==,
                   -EACCES);
  g_assert_cmpint (feed_one (server, sv, FUSE_READLINK, slot0, NULL, 0, out, sizeof out), <, 0);
  /* no directory node was made: past the slots, nothing */
  g_assert_cmpint (feed_one (server, sv, FUSE_GETATTR, slot0 + SBX_VIEW_N_SLOTS, NULL, 0, out, sizeof out), ==,
                   -ESTALE);
  g_assert_cmpint (counts.asked, ==, 0);
  close (sv[0]);
  close (sv[1]);
}

static void
test_classify_pure (void)
{
  char p[SBX_VIEW_PATH_BUF];
  SbxViewSyscall sc;
  SbxViewCall call;
  uint8_t syscall_insn[2] = { 0x0f, 0x05 }, int80[2] = { 0xcd, 0x80 }, nop[2] = { 0x90, 0x90 };
  SbxViewAbi abi;

  const struct
  {
    const char *in, *out;
  } clean[] = {
    { "/", "/" }, { "//", "/" }, { "/a//b/", "/a/b" }, { "/a/./b/.", "/a/b" }, { "/a/../b", "/b" },
    { "/../..", "/" }, { "/a/b/../../..", "/" }, { "/a/.b/..c", "/a/.b/..c" },
  };

  for (size_t i = 0; i < G_N_ELEMENTS (clean); i++)
    {
      g_strlcpy (p, clean[i].in, sizeof p);
      g_assert_true (sbx_view_clean_path (p));
      g_assert_cmpstr (p, ==, clean[i].out);
    }
  g_strlcpy (p, "rel", sizeof p);
  g_assert_false (sbx_view_clean_path (p));
  g_assert_true (sbx_view_path_at_or_below ("/a/b", "/a"));
  g_assert_true (sbx_view_path_at_or_below ("/a", "/a"));
  g_assert_false (sbx_view_path_at_or_below ("/ab", "/a"));
  g_assert_true (sbx_view_path_at_or_below ("/x", "/"));

  g_assert_cmpuint (sbx_view_open_operation (O_RDONLY), ==, SBX_ABI_DENIAL_READ);
  g_assert_cmpuint (sbx_view_open_operation (O_RDONLY | O_DIRECTORY), ==, SBX_ABI_DENIAL_LIST);
  g_assert_cmpuint (sbx_view_open_operation (O_RDWR), ==, SBX_ABI_DENIAL_WRITE);
  g_assert_cmpuint (sbx_view_open_operation (O_RDONLY | O_CREAT), ==, SBX_ABI_DENIAL_WRITE);
  g_assert_cmpuint (sbx_view_open_operation (O_RDONLY | O_TRUNC), ==, SBX_ABI_DENIAL_WRITE);
  g_assert_cmpuint (sbx_view_open_operation (O_WRONLY | O_DIRECTORY), ==, SBX_ABI_DENIAL_WRITE);

  g_assert_true (sbx_view_parse_syscall ("257 0xffffff9c 0x7ffd1000 0x0 0x0 0x0 0x0 0x7ffd0000 0x401000\n", &sc));
  g_assert_cmpint (sc.nr, ==, 257);
  g_assert_cmpuint (sc.args[0], ==, 0xffffff9c);
  g_assert_cmpuint (sc.pc, ==, 0x401000);
  g_assert_false (sbx_view_parse_syscall ("running\n", &sc));
  g_assert_false (sbx_view_parse_syscall ("-1 0x7ffd0000 0x401000\n", &sc));
  g_assert_false (sbx_view_parse_syscall ("257 0x1 0x2\n", &sc));
  g_assert_false (sbx_view_parse_syscall ("", &sc));
  g_assert_false (sbx_view_parse_syscall ("257 0x1 0x2 0x3 0x4 0x5 0x6 0x7 0x8 junk", &sc));

  g_assert_true (sbx_view_classify_call (SBX_VIEW_ABI_NATIVE, SCMP_SYS (openat), &call));
  g_assert_cmpuint (call.op, ==, SBX_VIEW_OP_FROM_FLAGS);
  g_assert_cmpint (call.dirfd_arg[0], ==, 0);
  g_assert_cmpint (call.path_arg[0], ==, 1);
  g_assert_cmpint (call.flags_arg, ==, 2);
  g_assert_true (sbx_view_classify_call (SBX_VIEW_ABI_NATIVE, SCMP_SYS (renameat2), &call));
  g_assert_cmpint (call.n_paths, ==, 2);
  g_assert_cmpint (call.path_arg[1], ==, 3);
  g_assert_true (sbx_view_classify_call (SBX_VIEW_ABI_NATIVE, SCMP_SYS (execve), &call));
  g_assert_cmpuint (call.op, ==, SBX_ABI_DENIAL_EXEC);
  g_assert_false (sbx_view_classify_call (SBX_VIEW_ABI_NATIVE, SCMP_SYS (getpid), &call));
  g_assert_false (sbx_view_classify_call (SBX_VIEW_ABI_NATIVE, -1, &call));
  g_assert_false (sbx_view_classify_call ((SbxViewAbi) 99, 2, &call));
#if defined(__x86_64__)
  g_assert_true (sbx_view_abi_from_insn (syscall_insn, 2, &abi));
  g_assert_cmpint (abi, ==, SBX_VIEW_ABI_NATIVE);
  g_assert_true (sbx_view_abi_from_insn (syscall_insn, 0x40000002L, &abi));
  g_assert_cmpint (abi, ==, SBX_VIEW_ABI_X32);
  g_assert_true (sbx_view_abi_from_insn (int80, 5, &abi));
  g_assert_cmpint (abi, ==, SBX_VIEW_ABI_I386);
  g_assert_false (sbx_view_abi_from_insn (nop, 5, &abi));
  /* i386 open is 5, x32 open is 2 | the x32 bit */
  g_assert_true (sbx_view_classify_call (SBX_VIEW_ABI_I386, 5, &call));
  g_assert_cmpuint (call.op, ==, SBX_VIEW_OP_FROM_FLAGS);
  g_assert_true (sbx_view_classify_call (SBX_VIEW_ABI_X32, 0x40000002L, &call));
  g_assert_cmpuint (call.op, ==, SBX_VIEW_OP_FROM_FLAGS);
#else
  (void) syscall_insn;
  (void) int80;
  (void) nop;
  (void) abi;
#endif
}

static gpointer
thread_nothing (gpointer data)
{
  return data;
}

/* The per-spawn cost of the thread-per-server choice: create, start (a
 * thread), stop (wake and join), free. */
static void
test_cost (void)
{
  const SbxViewEntry skeleton[] = { { "/usr", S_IFDIR, NULL }, { "/etc/hosts", S_IFREG, NULL } };
  const int n = 500;
  gint64 t0 = g_get_monotonic_time ();
  double per;

  for (int i = 0; i < n; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(SbxViewServer) server = sbx_view_server_new (skeleton, G_N_ELEMENTS (skeleton), 0, &error);
      int sv[2];

      g_assert_no_errno (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
      g_assert_true (sbx_view_server_start_receive (server, sv[0], &error));
      g_assert_no_error (error);
      close (sv[1]);
      sbx_view_server_stop (server);
    }
  per = (double) (g_get_monotonic_time () - t0) / n;
  t0 = g_get_monotonic_time ();
  for (int i = 0; i < n; i++)
    g_thread_join (g_thread_new ("cost", thread_nothing, NULL));
  g_test_message ("new + start + stop + free of a view server: %.1f us each; of that, a bare thread create + "
                  "join: %.1f us (%d runs)", per, (double) (g_get_monotonic_time () - t0) / n, n);
  g_assert_cmpfloat (per, <, 5000.0);
}

/* A connection this process made itself (sbx_view_server_start_device(),
 * the early root): requests are numbered in our pid namespace.  A lookup
 * of a host path outside the view by a thread of ours is answered as the
 * view answers (EACCES: the path exists) and is no attempt of the
 * sandbox's (nothing reported); the same lookup by another process (a
 * child of ours) is refused the same way and reported once, with that
 * process's pid.  Root only (FUSE mounted in our own user namespace). */
static void
test_own_device (Fixture *f, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  SbxBackendDenialSinkV1 sink = { sizeof sink, 0, sink_denied, &f->sink };
  SbxViewServer *server;
  struct stat st;
  long dev = -1, mfd;
  int status;
  pid_t pid;
  Rec *rec;

  (void) data;
  if (geteuid () != 0)
    {
      g_test_skip ("a FUSE mount in our own user namespace needs root");
      return;
    }
  mfd = sbx_linux_child_fuse_mount (geteuid (), getegid (), 1, &dev);
  if (mfd < 0)
    {
      g_test_skip_printf ("FUSE cannot be mounted here: %s", g_strerror ((int) -mfd));
      return;
    }
  server = new_server (f, 0);
  sbx_view_server_set_sink (server, &sink);
  g_assert_true (sbx_view_server_start_device (server, (int) dev, (int) mfd, &error));
  g_assert_no_error (error);
  /* the control: the host itself has the path */
  g_assert_no_errno (stat (f->dir, &st));

  errno = 0;
  g_assert_cmpint (fstatat ((int) mfd, f->dir + 1, &st, 0), ==, -1);
  g_assert_cmpint (errno, ==, EACCES);
  g_mutex_lock (&f->sink.lock);
  g_assert_cmpuint (f->sink.n, ==, 0);
  g_mutex_unlock (&f->sink.lock);

  pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    _exit (fstatat ((int) mfd, f->dir + 1, &st, 0) == 0 ? 0 : errno);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, EACCES);
  g_mutex_lock (&f->sink.lock);
  g_assert_cmpuint (f->sink.n, ==, 1);
  rec = g_ptr_array_index (f->sink.recs, 0);
  g_assert_cmpuint (rec->op, ==, SBX_ABI_DENIAL_READ);
  g_assert_cmpstr (rec->target, ==, f->dir);
  g_assert_cmpint (rec->pid, ==, pid);
  g_mutex_unlock (&f->sink.lock);
  sbx_view_server_free (server);   /* closes the device and the mount */
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/view-server/skeleton/malformed", test_malformed_skeleton);
  g_test_add_func ("/view-server/classify/pure", test_classify_pure);
  g_test_add_func ("/view-server/readdirplus/protocol", test_readdirplus_protocol);
  g_test_add_func ("/view-server/garbage", test_garbage);
  g_test_add_func ("/view-server/slots", test_slots);
  g_test_add_func ("/view-server/cost", test_cost);
  g_test_add ("/view-server/skeleton", Fixture, NULL, fixture_setup, test_skeleton, fixture_teardown);
  g_test_add ("/view-server/listed", Fixture, NULL, fixture_setup, test_listed, fixture_teardown);
  g_test_add ("/view-server/classify", Fixture, GINT_TO_POINTER (CLASSIFY_HOST_PIDS), fixture_setup, test_classify,
              fixture_teardown);
  g_test_add ("/view-server/classify/pidns", Fixture, GINT_TO_POINTER (CLASSIFY_PIDNS), fixture_setup, test_classify,
              fixture_teardown);
  g_test_add ("/view-server/classify/replaced", Fixture, GINT_TO_POINTER (CLASSIFY_REPLACED), fixture_setup,
              test_classify, fixture_teardown);
  g_test_add ("/view-server/classify/pidns-explicit", Fixture, GINT_TO_POINTER (CLASSIFY_PIDNS_EXPLICIT),
              fixture_setup, test_classify, fixture_teardown);
  g_test_add ("/view-server/not-found", Fixture, NULL, fixture_setup, test_not_found, fixture_teardown);
  g_test_add ("/view-server/stop-pending", Fixture, NULL, fixture_setup, test_stop_pending, fixture_teardown);
  g_test_add ("/view-server/million", Fixture, NULL, fixture_setup, test_million, fixture_teardown);
  g_test_add ("/view-server/own-device", Fixture, NULL, fixture_setup, test_own_device, fixture_teardown);
  return g_test_run ();
}
