/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The view supervisor's reader of the blocked task behind a denied lookup:
 * its system call (/proc/PID/syscall: number and arguments, stable while it
 * waits for our answer), the paths those arguments point at (its memory,
 * through /proc/PID/mem), its cwd and descriptors for relative paths, its
 * process's pid inside the sandbox (NStgid) and argv[0].
 *
 * What it reads is for the report only, never for an answer: the task's
 * memory and descriptor table can change under another thread of it while
 * we read.  Any failure (the task gone, no ptrace access, an unknown call,
 * unreadable memory, a path that does not lead to the looked-up name)
 * gives the fallback: a read of the looked-up path.
 *
 * The files of the last task are kept open between requests (a tool that
 * loops on one denied path costs one pread per file): a cached descriptor
 * of a task that is gone reads ESRCH, even when its pid was reused, and is
 * reopened then.
 */
#include "sbx-linux-view-private.h"
#include "sbx-linux-proc-status.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <linux/magic.h>
#include <linux/openat2.h>

#include <sbx/sbx-cleanup.h>
#include <sbx/sbx-plugin-abi.h>

void
sbx_view_task_init (SbxViewTask *task)
{
  task->proc_root = -1;
  task->proc_root_for = 0;
  atomic_store (&task->sandbox_pid, 0);
  task->pid = 0;
  task->dir = task->syscall_fd = task->mem_fd = task->cmdline_fd = -1;
  task->nspid = 0;
  task->nspid_read = FALSE;
}

static void
forget (SbxViewTask *task)
{
  sbx_clear_fd (&task->dir);
  sbx_clear_fd (&task->syscall_fd);
  sbx_clear_fd (&task->mem_fd);
  sbx_clear_fd (&task->cmdline_fd);
  task->pid = 0;
  task->nspid = 0;
  task->nspid_read = FALSE;
}

void
sbx_view_task_forget (SbxViewTask *task)
{
  forget (task);
}

void
sbx_view_task_clear (SbxViewTask *task)
{
  forget (task);
  sbx_clear_fd (&task->proc_root);
}

static gboolean
same_inode (const struct stat *a, const struct stat *b)
{
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

void
sbx_view_task_set_mounter (SbxViewTask *task,
                           pid_t        mounter)
{
  struct stat theirs, ours;
  char path[64];
  int none = 0;

  g_snprintf (path, sizeof path, "/proc/%d/ns/pid", (int) mounter);
  if (mounter <= 0 || stat (path, &theirs) != 0 || stat ("/proc/self/ns/pid", &ours) != 0
      || same_inode (&theirs, &ours))
    return;
  atomic_compare_exchange_strong (&task->sandbox_pid, &none, (int) mounter);
}

/* The sandbox's own procfs, when its pid namespace numbers the requests:
 * "proc" below the root of its process @sp, resolved from the dentry cache
 * only (RESOLVE_CACHED): a lookup that missed would come to this server's
 * own thread and never be answered.  "proc" is a mountpoint, so it is
 * cached from the moment the sandbox's procfs is mounted.  Taken only when
 * it is the procfs of @sp's pid namespace (its PID 1 is in it): before the
 * sandbox's root is the view, "proc" there is another's. */
static int
open_sandbox_proc (pid_t sp)
{
  struct open_how how = { 0 };
  struct statfs sfs;
  struct stat want, got;
  char path[64];
  int root, fd;

  g_snprintf (path, sizeof path, "/proc/%d/ns/pid", (int) sp);
  if (stat (path, &want) != 0)
    return -1;
  g_snprintf (path, sizeof path, "/proc/%d/root", (int) sp);
  root = open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    return -1;
  how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_CACHED | RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS;
  fd = (int) syscall (SYS_openat2, root, "proc", &how, sizeof how);
  close (root);
  if (fd < 0)
    return -1;
  if (fstatfs (fd, &sfs) != 0 || sfs.f_type != PROC_SUPER_MAGIC || fstatat (fd, "1/ns/pid", &got, 0) != 0
      || !same_inode (&want, &got))
    {
      close (fd);
      return -1;
    }
  return fd;
}

/* The procfs the request pids are numbered in, (re)taken when the
 * numbering changed; FALSE when it cannot be had (yet). */
static gboolean
have_proc_root (SbxViewTask *task)
{
  pid_t sp = (pid_t) atomic_load (&task->sandbox_pid);

  if (task->proc_root >= 0 && task->proc_root_for == sp)
    return TRUE;
  forget (task);
  sbx_clear_fd (&task->proc_root);
  task->proc_root = sp == 0 ? open ("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC) : open_sandbox_proc (sp);
  task->proc_root_for = sp;
  return task->proc_root >= 0;
}

/* Opens @pid's /proc directory (the cache; each file in it is opened at
 * its first read, read_cached(): a lookup nobody reports reads the
 * syscall and mem files, never cmdline or status); FALSE when it cannot
 * be opened (gone, or in no procfs we can see). */
static gboolean
open_task (SbxViewTask *task, pid_t pid)
{
  char name[32];

  if (!have_proc_root (task))
    return FALSE;
  if (task->pid == pid && task->dir >= 0)
    return TRUE;
  forget (task);
  if (pid <= 0)
    return FALSE;
  g_snprintf (name, sizeof name, "%d", (int) pid);
  task->dir = openat (task->proc_root, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (task->dir < 0)
    return FALSE;
  task->pid = pid;
  return TRUE;
}

/* pread of a cached file of the task (@name in its /proc directory, opened
 * at its first read into @fd_field); a task that went away (ESRCH) is
 * reopened once, as its pid may now name another task. */
static ssize_t
read_cached (SbxViewTask *task, pid_t pid, const char *name, int *fd_field, void *buf, size_t len, off_t off)
{
  for (int attempt = 0; attempt < 2; attempt++)
    {
      ssize_t n;

      if (!open_task (task, pid))
        return -1;
      if (*fd_field < 0 && name != NULL)
        *fd_field = openat (task->dir, name, O_RDONLY | O_CLOEXEC);
      if (*fd_field < 0)
        return -1;
      do
        n = pread (*fd_field, buf, len, off);
      while (n < 0 && errno == EINTR);
      if (n >= 0 || errno != ESRCH)
        return n;
      forget (task);
    }
  return -1;
}

static void
read_process_name (SbxViewTask *task, pid_t pid, SbxViewAttempt *out)
{
  ssize_t n = read_cached (task, pid, "cmdline", &task->cmdline_fd, out->process, sizeof out->process - 1, 0);

  out->process[n > 0 ? n : 0] = '\0';
  if (out->process[0] == '\0' && task->dir >= 0)
    {
      /* no argv (a kernel thread, or argv[0] ""): its comm */
      int fd = openat (task->dir, "comm", O_RDONLY | O_CLOEXEC);

      if (fd >= 0)
        {
          n = read (fd, out->process, sizeof out->process - 1);
          close (fd);
          out->process[n > 0 ? n : 0] = '\0';
          g_strchomp (out->process);
        }
    }
  if (!g_utf8_validate (out->process, -1, NULL))
    out->process[0] = '\0';
}

void
sbx_view_task_identify (SbxViewTask    *task,
                        pid_t           pid,
                        SbxViewAttempt *out)
{
  out->nspid = 0;
  out->process[0] = '\0';
  if (!open_task (task, pid))
    return;
  if (!task->nspid_read)
    {
      /* the process, not the thread a request names */
      task->nspid = sbx_linux_status_ns_last (task->dir, "status", "NStgid");
      task->nspid_read = TRUE;
    }
  out->nspid = task->nspid;
  read_process_name (task, pid, out);
}

/* The NUL-terminated string at @addr of the task, into @buf; FALSE when
 * unreadable or longer than PATH_MAX.  Read page by page, so a string near
 * the end of a mapping is still read. */
static gboolean
read_string (SbxViewTask *task, pid_t pid, uint64_t addr, char *buf, size_t size)
{
  size_t have = 0;

  if (addr == 0)
    return FALSE;
  if (size > PATH_MAX + 1)
    size = PATH_MAX + 1;
  while (have < size)
    {
      uint64_t at = addr + have;
      size_t chunk = 4096 - (size_t) (at % 4096);
      ssize_t n;

      if (chunk > size - have)
        chunk = size - have;
      if ((off_t) at < 0)
        return FALSE;
      n = read_cached (task, pid, "mem", &task->mem_fd, buf + have, chunk, (off_t) at);
      if (n <= 0)
        return FALSE;
      if (memchr (buf + have, '\0', (size_t) n) != NULL)
        return TRUE;
      have += (size_t) n;
    }
  return FALSE;
}

/* A link of the task's /proc directory ("cwd", "fd/N") as an absolute
 * path; FALSE for anything else ("pipe:[…]", a deleted directory). */
static gboolean
read_dir_link (SbxViewTask *task, const char *name, char *buf, size_t size)
{
  ssize_t n = readlinkat (task->dir, name, buf, size - 1);

  if (n <= 0)
    return FALSE;
  buf[n] = '\0';
  return buf[0] == '/' && !g_str_has_suffix (buf, " (deleted)");
}

/* Path argument @k of @call, made absolute and clean into @out. */
static gboolean
call_path (SbxViewTask *task, pid_t pid, const SbxViewSyscall *sc, const SbxViewCall *call, int k, char *out)
{
  char path[PATH_MAX + 1];
  char base[PATH_MAX + 1];
  size_t base_len;

  if (!read_string (task, pid, sc->args[call->path_arg[k]], path, sizeof path) || path[0] == '\0')
    return FALSE;
  if (path[0] != '/')
    {
      int dirfd = call->dirfd_arg[k] >= 0 ? (int) (int32_t) sc->args[call->dirfd_arg[k]] : AT_FDCWD;
      char link[32];

      if (dirfd == AT_FDCWD)
        g_strlcpy (link, "cwd", sizeof link);
      else if (dirfd >= 0)
        g_snprintf (link, sizeof link, "fd/%d", dirfd);
      else
        return FALSE;
      if (!read_dir_link (task, link, base, sizeof base))
        return FALSE;
      base_len = strlen (base);
      memcpy (out, base, base_len);
      out[base_len] = '/';
      memcpy (out + base_len + 1, path, strlen (path) + 1);
    }
  else
    memcpy (out, path, strlen (path) + 1);
  return sbx_view_clean_path (out);
}

/* The open flags of an open-type call (openat2: from its struct
 * open_how, whose first member they are). */
static gboolean
call_flags (SbxViewTask *task, pid_t pid, const SbxViewSyscall *sc, const SbxViewCall *call, uint64_t *flags)
{
  uint64_t arg = sc->args[call->flags_arg];

  if (!call->flags_in_how)
    {
      *flags = arg;
      return TRUE;
    }
  return (off_t) arg >= 0
         && read_cached (task, pid, "mem", &task->mem_fd, flags, sizeof *flags, (off_t) arg) == (ssize_t) sizeof *flags;
}

/* The call the task is blocked in: FALSE when it cannot be read or is none
 * the table knows. */
static gboolean
read_call (SbxViewTask *task, pid_t pid, SbxViewSyscall *sc, SbxViewCall *call)
{
  char text[256];
  uint8_t insn[2];
  SbxViewAbi abi;
  ssize_t n = read_cached (task, pid, "syscall", &task->syscall_fd, text, sizeof text - 1, 0);

  if (n <= 0)
    return FALSE;
  text[n] = '\0';
  if (!sbx_view_parse_syscall (text, sc) || sc->pc < 2 || (off_t) (sc->pc - 2) < 0)
    return FALSE;
#if defined(__x86_64__)
  if (read_cached (task, pid, "mem", &task->mem_fd, insn, sizeof insn, (off_t) (sc->pc - 2)) != (ssize_t) sizeof insn)
    return FALSE;
#else
  memset (insn, 0, sizeof insn);
#endif
  if (!sbx_view_abi_from_insn (insn, sc->nr, &abi))
    return FALSE;
  if (abi == SBX_VIEW_ABI_I386)
    for (int i = 0; i < 6; i++)
      sc->args[i] &= 0xffffffffu;
  /* 32-bit registers: no sign extension */
  return sbx_view_classify_call (abi, sc->nr, call);
}

gboolean
sbx_view_task_is_ours (SbxViewTask *task,
                       pid_t        pid)
{
  if (pid == 0)
    return TRUE;
  if (atomic_load (&task->sandbox_pid) != 0)
    return FALSE;   /* numbered in the sandbox's namespace: ours read 0 */
  /* Signal 0 to (our pid, @pid) answers whether @pid is a thread of our
   * thread group, in one system call: a lookup of /proc/self/task/PID
   * costs 5 to 120 µs here, on the way of the lookup it answers. */
  return syscall (SYS_tgkill, (long) getpid (), (long) pid, 0L) == 0;
}

gboolean
sbx_view_task_may_write (SbxViewTask *task,
                         pid_t        pid)
{
  SbxViewSyscall sc;
  SbxViewCall call;
  uint64_t flags = 0;

  if (!open_task (task, pid) || !read_call (task, pid, &sc, &call))
    return FALSE;
  if (call.op != SBX_VIEW_OP_FROM_FLAGS)
    return call.op == SBX_ABI_DENIAL_WRITE;
  return call_flags (task, pid, &sc, &call, &flags) && sbx_view_open_operation (flags) == SBX_ABI_DENIAL_WRITE;
}

void
sbx_view_task_classify (SbxViewTask    *task,
                        pid_t           pid,
                        const char     *looked_up,
                        SbxViewAttempt *out)
{
  SbxViewSyscall sc;
  SbxViewCall call;
  uint64_t flags = 0;

  out->op = SBX_ABI_DENIAL_READ;
  out->open_call = FALSE;
  g_strlcpy (out->target, looked_up, sizeof out->target);
  sbx_view_task_identify (task, pid, out);
  if (task->dir < 0 || !read_call (task, pid, &sc, &call))
    return;
  if (call.op == SBX_VIEW_OP_FROM_FLAGS && !call_flags (task, pid, &sc, &call, &flags))
    return;
  for (int k = 0; k < call.n_paths; k++)
    {
      char full[SBX_VIEW_PATH_BUF];

      if (call_path (task, pid, &sc, &call, k, full) && sbx_view_path_at_or_below (full, looked_up))
        {
          out->op = call.op == SBX_VIEW_OP_FROM_FLAGS ? sbx_view_open_operation (flags) : call.op;
          out->open_call = call.op == SBX_VIEW_OP_FROM_FLAGS;
          memcpy (out->target, full, strlen (full) + 1);
          return;
        }
    }
}
