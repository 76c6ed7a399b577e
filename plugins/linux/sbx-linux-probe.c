/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What this host offers, measured once per process, never assumed.
 *
 * Each mechanism is proven in a child created like the sandbox's own
 * (CLONE_VM|CLONE_VFORK on a private stack, raw system calls only), because
 * the library may run in a multithreaded program and unshare(CLONE_NEWUSER)
 * is refused to threaded callers anyway:
 *  - user+mount+pid+net+ipc+uts namespaces that really work: the child
 *    writes its own id maps, makes "/" a slave, creates a tmpfs, clones the
 *    host root read-only, mounts a fresh procfs and a private devpts, brings
 *    lo up, sets the hostname, forks as PID 1 and pivots into its tmpfs.  A
 *    namespace whose capabilities were stripped (Ubuntu's
 *    apparmor_restrict_unprivileged_userns) fails one of these and counts as
 *    absent;
 *  - Landlock: a ruleset is created and the child restricts itself;
 *  - seccomp: the child loads an allow-all filter;
 *  - the init program: it is exec'd from its sealed memfd (vm.memfd_noexec
 *    may forbid that, then an unlinked file is tried).
 * A probe child reports success only by exiting with SBX_INIT_PROBE_EXIT (66),
 * so a child that never ran its checks cannot look like a working one.
 *
 * A probe belongs to one plugin instance (the context of one init), made
 * on its first use and freed by fini, never cached for the whole process:
 *  - what it measures depends on the caller, not only the kernel: the ids
 *    it maps, whether this euid may write a cgroup, whether a user manager
 *    answers; a process that changes credentials, or a test harness that
 *    builds a registry after changing a sysctl, must not be answered with
 *    facts measured for another state;
 *  - it holds an fd (the sealed init program every spawn execs), which the
 *    instance that made it closes at fini, so a registry that is dropped
 *    leaves nothing open behind it;
 *  - a failed measurement is not frozen for the life of the process: a
 *    later registry measures again.
 * The cost is one measurement per registry (a few forked children), paid
 * on the first probe or compile, not at init.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>

#include "sbx-linux-private.h"
#include "sbx-linux-child.h"
#include "sbx-linux-child-private.h"
#include "sbx-linux-clone.h"
#include "sbx-linux-init-blob.h"
#include "sbx-linux-view-start.h"
#include "init/sbx-init-proto.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

static const char *const probe_step_names[] = {
  [SBX_LINUX_PROBE_OK] = "none",
  [SBX_LINUX_PROBE_CLONE] = "clone",
  [SBX_LINUX_PROBE_ID_MAPS] = "id-maps",
  [SBX_LINUX_PROBE_MOUNT_SLAVE] = "mount-slave",
  [SBX_LINUX_PROBE_TMPFS] = "tmpfs",
  [SBX_LINUX_PROBE_BIND] = "bind",
  [SBX_LINUX_PROBE_PROC] = "proc",
  [SBX_LINUX_PROBE_DEVPTS] = "devpts",
  [SBX_LINUX_PROBE_LOOPBACK] = "loopback",
  [SBX_LINUX_PROBE_HOSTNAME] = "hostname",
  [SBX_LINUX_PROBE_PIDNS] = "pid-namespace",
  [SBX_LINUX_PROBE_PIVOT] = "pivot-root",
  [SBX_LINUX_PROBE_LSM] = "landlock-seccomp",
  [SBX_LINUX_PROBE_INIT_EXEC] = "init-exec",
  [SBX_LINUX_PROBE_EXIT] = "exit",
};

const char *
sbx_linux_probe_step_name (int step)
{
  if (step < 0 || (gsize) step >= G_N_ELEMENTS (probe_step_names))
    return "unknown";
  return probe_step_names[step];
}


/* ProbeShared and the probe children (probe_*_child) are child code:
 * sbx-linux-child-probe.c. */

/* ------------------------------------------------------------------------- */
/* Parent side                                                                */
/* ------------------------------------------------------------------------- */

/* Runs @fn in a probe child; TRUE when it exited with the probe code. */
static gboolean
probe_run_child (int (*fn) (void *),
                 ProbeShared *shared,
                 int          flags,
                 int         *clone_errno)
{
  pid_t pid;
  int status = 0;

  pid = sbx_linux_clone_vfork (fn, shared, flags, NULL);
  if (pid < 0)
    {
      *clone_errno = -pid;
      return FALSE;
    }
  *clone_errno = 0;
  while (waitpid (pid, &status, __WALL) < 0 && errno == EINTR)
    ;
  return WIFEXITED (status) && WEXITSTATUS (status) == SBX_INIT_PROBE_EXIT;
}

static int
read_int_file (const char *path,
               int         fallback)
{
  g_autofree char *contents = NULL;

  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return fallback;
  return atoi (contents);
}

/* The init program in a sealed memfd (not yet proven exec-able). */
static int
create_init_memfd (unsigned int flags,
                   int         *err)
{
  int fd = memfd_create ("sbx-init", flags);
  gsize done = 0;

  if (fd < 0)
    {
      *err = errno;
      return -1;
    }
  while (done < sbx_linux_init_elf_size)
    {
      ssize_t n = write (fd, sbx_linux_init_elf + done, sbx_linux_init_elf_size - done);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      done += (gsize) n;
    }
  if (done != sbx_linux_init_elf_size
      || fchmod (fd, 0500) != 0
      || fcntl (fd, F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) != 0)
    {
      *err = errno != 0 ? errno : EIO;
      close (fd);
      return -1;
    }
  return fd;
}

/* TRUE when @fd can be exec'd (a child runs "sbx-init p"). */
static gboolean
init_fd_works (int  fd,
               int *err)
{
  ProbeShared shared = { 0 };
  int clone_errno;

  shared.init_fd = fd;
  if (probe_run_child (sbx_linux_probe_init_child, &shared, 0, &clone_errno))
    return TRUE;
  *err = shared.err != 0 ? shared.err : clone_errno;
  return FALSE;
}

/* The fallback chain when the first memfd did not exec: each candidate is
 * proven in a child.  vm.memfd_noexec=2 leaves an unlinked private file in
 * the temporary directory (which fails where that is mounted noexec; then
 * spawns are unavailable). */
static int
make_init_fd_fallback (int *mode,
                       int *err)
{
  static const unsigned int flag_sets[] = { MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC,
                                            MFD_CLOEXEC | MFD_ALLOW_SEALING };
  g_autofree char *path = NULL;
  g_autoptr(GError) error = NULL;
  int wfd, fd;
  gsize i;

  for (i = 0; i < G_N_ELEMENTS (flag_sets); i++)
    {
      fd = create_init_memfd (flag_sets[i], err);
      if (fd < 0)
        continue;
      if (init_fd_works (fd, err))
        {
          *mode = i == 0 ? SBX_LINUX_INIT_MEMFD_EXEC : SBX_LINUX_INIT_MEMFD;
          return fd;
        }
      close (fd);
    }

  wfd = g_file_open_tmp ("sbx-init-XXXXXX", &path, &error);
  if (wfd < 0)
    {
      *err = EACCES;
      return -1;
    }
  if (write (wfd, sbx_linux_init_elf, sbx_linux_init_elf_size) != (ssize_t) sbx_linux_init_elf_size
      || fchmod (wfd, 0500) != 0)
    {
      *err = errno;
      close (wfd);
      unlink (path);
      return -1;
    }
  close (wfd);
  fd = open (path, O_PATH | O_CLOEXEC);
  unlink (path);
  if (fd < 0)
    {
      *err = errno;
      return -1;
    }
  if (init_fd_works (fd, err))
    {
      *mode = SBX_LINUX_INIT_TMPFILE;
      return fd;
    }
  close (fd);
  return -1;
}

/* What the host offers for sandbox-wide limits, read without changing
 * anything (the base is made at the first compile that needs it). */
static void
probe_cgroup (SbxLinuxProbe *probe)
{
  SbxCgroupHost *host = sbx_cgroup_host_new (NULL);

  probe->cgroup = host;
  probe->cgroup_root_detail = sbx_cgroup_host_describe (host, TRUE);
  probe->cgroup_user_detail = sbx_cgroup_host_describe (host, FALSE);
  if (host->root)
    probe->cgroup_direct = sbx_cgroup_host_v2_usable_by_root (host) || sbx_cgroup_host_v1_usable (host);
  else
    probe->cgroup_direct = host->v2_dir != NULL && host->v2_pids && host->v2_memory
                           && host->v2_writable;
}

static char *
userns_hint (const SbxLinuxProbe *probe)
{
  int clone_sysctl = read_int_file ("/proc/sys/kernel/unprivileged_userns_clone", -1);
  int max_userns = read_int_file ("/proc/sys/user/max_user_namespaces", -1);
  int apparmor = read_int_file ("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", -1);

  if (probe->userns)
    return g_strdup ("Hint: select the linux-userns backend (unset SBX_BACKEND) for namespaces.");
  if (probe->userns_step == SBX_LINUX_PROBE_CLONE)
    {
      if (clone_sysctl == 0)
        return g_strdup ("Hint: sysctl kernel.unprivileged_userns_clone=1");
      if (max_userns == 0 || probe->userns_errno == ENOSPC)
        return g_strdup ("Hint: sysctl user.max_user_namespaces=15000 (and user.max_pid_namespaces, "
                         "user.max_net_namespaces, user.max_mnt_namespaces)");
      return g_strdup ("Hint: unprivileged user namespaces are refused (a container's seccomp "
                       "profile, or a kernel without CONFIG_USER_NS)");
    }
  if (apparmor == 1)
    return g_strdup ("Hint: the user namespace is created but stripped of its capabilities by "
                     "AppArmor: sysctl kernel.apparmor_restrict_unprivileged_userns=0, or an "
                     "AppArmor profile that allows userns for this program");
  if (probe->userns_step == SBX_LINUX_PROBE_PROC)
    return g_strdup ("Hint: mounting a fresh /proc needs a fully visible host /proc (containers "
                     "mask parts of it); run on the host or with an unmasked /proc");
  if (probe->userns_step == SBX_LINUX_PROBE_TMPFS || probe->userns_step == SBX_LINUX_PROBE_BIND
      || probe->userns_step == SBX_LINUX_PROBE_PIVOT)
    return g_strdup ("Hint: the new mount API (open_tree, move_mount, mount_setattr) needs Linux "
                     ">= 5.12, and the namespace must hold its capabilities");
  return g_strdup ("Hint: the user namespace does not hold its capabilities here (a container "
                   "or LSM restriction)");
}

static void
probe_run (SbxLinuxProbe *probe)
{
  ProbeShared shared = { 0 };
  g_autofree char *uid_map = g_strdup_printf ("%u %u 1\n", (unsigned) geteuid (), (unsigned) geteuid ());
  g_autofree char *gid_map = g_strdup_printf ("%u %u 1\n", (unsigned) getegid (), (unsigned) getegid ());
  g_autofree char *children = g_strdup_printf ("/proc/self/task/%d/children", (int) gettid ());
  gboolean lsm_known = FALSE, init_known = FALSE;
  char *grandchild_stack;
  int clone_errno = 0;
  int init_mode = SBX_LINUX_INIT_MEMFD_EXEC;
  int init_fd;

  probe->cap_last_cap = read_int_file ("/proc/sys/kernel/cap_last_cap", CAP_LAST_CAP);
  probe->memfd_noexec = read_int_file ("/proc/sys/vm/memfd_noexec", -1);
  probe->proc_children = g_file_test (children, G_FILE_TEST_EXISTS);
  probe->init_fd = -1;
  probe_cgroup (probe);

  probe->landlock_abi = sbx_landlock_probe_abi ();
  if (probe->landlock_abi <= 0)
    {
      long r = syscall (__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

      probe->landlock_abi = 0;
      probe->landlock_errno = r < 0 ? errno : EOPNOTSUPP;
    }

  /* The init program, proven below by the namespace child's final exec. */
  init_fd = create_init_memfd (MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC, &probe->init_errno);
  if (init_fd < 0)
    {
      init_mode = SBX_LINUX_INIT_MEMFD;
      init_fd = create_init_memfd (MFD_CLOEXEC | MFD_ALLOW_SEALING, &probe->init_errno);
    }

  /* The rung-1 namespaces, then Landlock, seccomp and the init exec, in one
   * child on the common path. */
  shared.landlock_err = shared.seccomp_err = ENOEXEC;
  shared.fuse_err = ENOEXEC;   /* the child did not get that far */
  shared.fuse_uid = (long) geteuid ();
  shared.fuse_gid = (long) getegid ();
  shared.init_fd = init_fd;
  grandchild_stack = sbx_linux_stacks_new (1);
  if (grandchild_stack == NULL)
    {
      probe->userns_step = SBX_LINUX_PROBE_CLONE;
      probe->userns_errno = errno;
    }
  else
    {
      shared.uid_map = uid_map;
      shared.uid_map_len = strlen (uid_map);
      shared.gid_map = gid_map;
      shared.gid_map_len = strlen (gid_map);
      shared.grandchild_stack_top = sbx_linux_stack_top (grandchild_stack, 0);
      shared.step = SBX_LINUX_PROBE_CLONE;
      if (probe_run_child (sbx_linux_probe_ns_child, &shared,
                           CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC
                           | CLONE_NEWUTS, &clone_errno))
        {
          probe->userns = TRUE;
          lsm_known = init_known = TRUE;
        }
      else if (clone_errno != 0)
        {
          probe->userns_step = SBX_LINUX_PROBE_CLONE;
          probe->userns_errno = clone_errno;
        }
      else if (shared.step == SBX_LINUX_PROBE_LSM || shared.step == SBX_LINUX_PROBE_INIT_EXEC)
        {
          /* Every namespace step passed; only the init exec failed. */
          probe->userns = TRUE;
          lsm_known = shared.step == SBX_LINUX_PROBE_INIT_EXEC;
          probe->init_errno = shared.err;
        }
      else
        {
          probe->userns_step = shared.step != SBX_LINUX_PROBE_OK ? shared.step : SBX_LINUX_PROBE_EXIT;
          probe->userns_errno = shared.err != 0 ? shared.err : ECHILD;
        }
      sbx_linux_stacks_free (grandchild_stack, 1);
    }

  /* Landlock and seccomp in their own child when the namespace child did
   * not get that far (no user namespaces: rung 2 still needs them). */
  if (!lsm_known)
    {
      shared.landlock_err = shared.seccomp_err = ENOEXEC;
      if (!probe_run_child (sbx_linux_probe_lsm_child, &shared, 0, &clone_errno))
        shared.landlock_err = shared.seccomp_err = clone_errno != 0 ? clone_errno : ECHILD;
    }
  if (shared.landlock_err != 0 && probe->landlock_abi > 0)
    {
      probe->landlock_abi = 0;
      probe->landlock_errno = shared.landlock_err;
    }
  /* Both the kernel and the seccomp module must be there. */
  probe->seccomp = shared.seccomp_err == 0 && sbx_seccomp_available ();
  probe->seccomp_errno = shared.seccomp_err == 0 && !probe->seccomp ? ENOSYS : shared.seccomp_err;

  if (init_known)
    {
      probe->init_fd = init_fd;
      probe->init_mode = init_mode;
    }
  else
    {
      if (init_fd >= 0)
        close (init_fd);
      probe->init_fd = make_init_fd_fallback (&probe->init_mode, &probe->init_errno);
      if (probe->init_fd < 0)
        probe->init_mode = SBX_LINUX_INIT_NONE;
    }
  probe->fuse_errno = probe->userns ? shared.fuse_err : ENOSYS;
  probe->hint_userns = userns_hint (probe);
}

SbxLinuxProbe *
sbx_linux_probe_new (void)
{
  SbxLinuxProbe *probe = g_new0 (SbxLinuxProbe, 1);

  /* As root, the first spec's early root is made beside the probe's
   * children, which this thread waits for (sbx-linux-view-start.c). */
  sbx_linux_view_early_prepare ();
  probe_run (probe);
  return probe;
}

void
sbx_linux_probe_free (SbxLinuxProbe *probe)
{
  if (probe == NULL)
    return;
  sbx_linux_view_early_drop_spare ();
  if (probe->init_fd >= 0)
    close (probe->init_fd);
  sbx_cgroup_host_free (probe->cgroup);
  g_free (probe->cgroup_root_detail);
  g_free (probe->cgroup_user_detail);
  g_free (probe->hint_userns);
  g_free (probe);
}

void
sbx_linux_probe_report (const SbxLinuxProbe    *probe,
                        int                     rung,
                        const SbxLinuxReporter *reporter)
{
  g_autofree char *detail = NULL;

  if (probe->userns)
    sbx_linux_report (reporter, "user-namespaces", SBX_ABI_REPORT_ENFORCED,
                      "unprivileged user, mount, pid, network, ipc and uts namespaces work "
                      "(id maps, tmpfs, read-only bind, procfs, devpts, loopback, pivot_root)");
  else
    {
      detail = g_strdup_printf ("unavailable: step %s failed: %s. %s",
                                sbx_linux_probe_step_name (probe->userns_step),
                                g_strerror (probe->userns_errno), probe->hint_userns);
      sbx_linux_report (reporter, "user-namespaces", SBX_ABI_REPORT_UNENFORCED, detail);
      g_clear_pointer (&detail, g_free);
    }

  if (probe->landlock_abi >= 1)
    {
      detail = g_strdup_printf ("ABI %d (a ruleset was applied in a probe child)", probe->landlock_abi);
      sbx_linux_report (reporter, "landlock", SBX_ABI_REPORT_ENFORCED, detail);
      g_clear_pointer (&detail, g_free);
    }
  else
    {
      detail = g_strdup_printf ("unavailable: %s. Hint: boot with lsm=landlock,... "
                                "(CONFIG_SECURITY_LANDLOCK=y)", g_strerror (probe->landlock_errno));
      sbx_linux_report (reporter, "landlock", SBX_ABI_REPORT_UNENFORCED, detail);
      g_clear_pointer (&detail, g_free);
    }
  sbx_linux_report (reporter, "landlock-network",
                    probe->landlock_abi >= 4 ? SBX_ABI_REPORT_ENFORCED : SBX_ABI_REPORT_UNENFORCED,
                    probe->landlock_abi >= 4 ? "TCP bind/connect rules (ABI >= 4)"
                                             : "needs Landlock ABI >= 4 (Linux 6.7). Hint: a newer kernel");
  sbx_linux_report (reporter, "landlock-scoping",
                    probe->landlock_abi >= 6 ? SBX_ABI_REPORT_ENFORCED : SBX_ABI_REPORT_UNENFORCED,
                    probe->landlock_abi >= 6 ? "signals and abstract unix sockets scoped (ABI >= 6)"
                                             : "needs Landlock ABI >= 6 (Linux 6.12). Hint: a newer kernel");
  /* Pathname unix sockets: Landlock controls connect()/sendmsg() to them
   * only with LANDLOCK_ACCESS_FS_RESOLVE_UNIX (ABI 9).  Without it (this
   * reference kernel: ABI 7) the connect supervisor decides every connect
   * (sbx-linux-unotify.c); with it sbx does not use it yet, so the
   * supervisor decides there as well. */
  if (probe->landlock_abi >= 9)
    detail = g_strdup_printf ("Landlock ABI %d has LANDLOCK_ACCESS_FS_RESOLVE_UNIX, but sbx does not use it "
                              "yet: the connect supervisor (seccomp user notification) decides every connect",
                              probe->landlock_abi);
  else
    detail = g_strdup_printf ("Landlock ABI %d cannot mediate connect() to pathname unix sockets "
                              "(LANDLOCK_ACCESS_FS_RESOLVE_UNIX needs ABI 9): the connect supervisor (seccomp "
                              "user notification) decides every connect instead. Hint: a newer kernel",
                              MAX (probe->landlock_abi, 0));
  sbx_linux_report (reporter, "landlock-unix-sockets", SBX_ABI_REPORT_UNENFORCED, detail);
  g_clear_pointer (&detail, g_free);
  if (probe->seccomp)
    sbx_linux_report (reporter, "seccomp", SBX_ABI_REPORT_ENFORCED, "a filter was loaded in a probe child");
  else
    {
      detail = g_strdup_printf ("unavailable: %s. Hint: a kernel with CONFIG_SECCOMP_FILTER",
                                g_strerror (probe->seccomp_errno));
      sbx_linux_report (reporter, "seccomp", SBX_ABI_REPORT_UNENFORCED, detail);
      g_clear_pointer (&detail, g_free);
    }
  sbx_linux_report (reporter, "cgroup",
                    probe->cgroup_direct ? SBX_ABI_REPORT_ENFORCED : SBX_ABI_REPORT_UNENFORCED,
                    probe->cgroup->root ? probe->cgroup_root_detail : probe->cgroup_user_detail);
  sbx_linux_report (reporter, "cgroup-for-root",
                    strncmp (probe->cgroup_root_detail, "none", 4) != 0 ? SBX_ABI_REPORT_ENFORCED
                                                                       : SBX_ABI_REPORT_UNENFORCED,
                    probe->cgroup_root_detail);
  /* A scope from the systemd user manager is asked for only when a
   * sandbox needs it, so here it is a possibility, not a measurement. */
  sbx_linux_report (reporter, "cgroup-for-user",
                    strncmp (probe->cgroup_user_detail, "none", 4) == 0 ? SBX_ABI_REPORT_UNENFORCED
                    : g_str_has_prefix (probe->cgroup_user_detail, "a transient") ? SBX_ABI_REPORT_NARROWED
                    : SBX_ABI_REPORT_ENFORCED,
                    probe->cgroup_user_detail);

  switch (probe->init_mode)
    {
    case SBX_LINUX_INIT_MEMFD_EXEC:
    case SBX_LINUX_INIT_MEMFD:
      detail = g_strdup_printf ("sbx-init is exec'd from a sealed memfd (vm.memfd_noexec=%d)",
                                probe->memfd_noexec);
      sbx_linux_report (reporter, "init", SBX_ABI_REPORT_ENFORCED, detail);
      break;
    case SBX_LINUX_INIT_TMPFILE:
      detail = g_strdup_printf ("memfd exec is refused (vm.memfd_noexec=%d): sbx-init is exec'd from "
                                "an unlinked private file", probe->memfd_noexec);
      sbx_linux_report (reporter, "init", SBX_ABI_REPORT_NARROWED, detail);
      break;
    case SBX_LINUX_INIT_NONE:
    default:
      detail = g_strdup_printf ("sbx-init cannot be executed: %s. Hint: sysctl vm.memfd_noexec=0 or "
                                "a temporary directory that is not mounted noexec",
                                g_strerror (probe->init_errno));
      sbx_linux_report (reporter, "init", SBX_ABI_REPORT_UNENFORCED, detail);
      break;
    }
  g_clear_pointer (&detail, g_free);

  if (rung == SBX_LINUX_RUNG_LANDLOCK)
    sbx_linux_report (reporter, "proc-children",
                      probe->proc_children ? SBX_ABI_REPORT_ENFORCED : SBX_ABI_REPORT_UNENFORCED,
                      probe->proc_children ? "/proc/PID/task/TID/children lists a subreaper's children"
                                           : "CONFIG_PROC_CHILDREN is off: orphans are found by "
                                             "process group only");
}
