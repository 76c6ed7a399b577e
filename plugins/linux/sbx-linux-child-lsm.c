/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Child side of the Landlock plan and the seccomp program: replays what the
 * parent built once per executor (sbx-landlock.c, sbx-seccomp.c) in a child
 * between clone() and execve().
 *
 * Like every sbx-linux-child*.c file this translation unit is a child-code
 * unit: it is compiled without stack protector, sanitizers, fortify or
 * builtins (plugins/linux/meson.build, sbx_linux_child_args) and the test
 * tests/linux/check-child-objects.py proves from the objects that it reads
 * no thread-local storage (no %fs:/%gs: access) and calls nothing outside
 * the child units.  Why: a child made with CLONE_VM inherits the TLS pointer
 * of whichever thread cloned it (for the zygote: a thread that may since
 * have exited and had its TLS unmapped), so a single canary check or errno
 * write would fault or scribble on freed memory.  Raw system calls only
 * (sbx-raw-syscall.h); plain data in, errno codes out.
 *
 * Error paths here use goto to the end of the function: child code cannot
 * use the cleanup attributes (<sbx/sbx-cleanup.h> calls libc, and a
 * CLONE_VM child must not), so the code at the label, which closes what
 * the function opened and reports the step, is the one way out.
 */
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "sbx-landlock.h"
#include "sbx-landlock-private.h"
#include "sbx-seccomp.h"
#include "sbx-seccomp-private.h"
#include "sbx-raw-syscall.h"


SBX_CHILD_FUNC static inline int
child_statx (int fd, const char *name, int flags, struct statx *stx)
{
  return (int) sbx_raw_syscall5 (__NR_statx, fd, name, flags | AT_NO_AUTOMOUNT,
                                 STATX_TYPE | STATX_INO | STATX_NLINK, stx);
}

/* Is @stx still the inode @rule was made for? */
SBX_CHILD_FUNC static inline int
child_same_inode (const LlRule *rule, const struct statx *stx)
{
  return stx->stx_ino == rule->ino && stx->stx_dev_major == rule->dev_major &&
         stx->stx_dev_minor == rule->dev_minor && (uint32_t) (stx->stx_mode & S_IFMT) == rule->type;
}

SBX_CHILD_FUNC static inline int
child_add_path_rule (int ruleset, int fd, uint64_t access)
{
  struct sbx_landlock_path_beneath_attr attr;

  attr.allowed_access = access;
  attr.parent_fd = fd;
  return (int) sbx_raw_syscall4 (__NR_landlock_add_rule, ruleset, SBX_LANDLOCK_RULE_PATH_BENEATH, &attr, 0);
}

/* Adds one planned rule.  0 when added or skipped (identity changed:
 * narrower), negative errno on failure with *step set. */
SBX_CHILD_FUNC static int
child_add_planned (int ruleset, const LlRule *rule, const char **step)
{
  struct statx stx;
  int fd = rule->fd;
  int r;

  if (rule->kind == RULE_NAME)
    {
      fd = (int) sbx_raw_syscall4 (__NR_openat, rule->fd, rule->name,
                                   O_PATH | O_NOFOLLOW | O_CLOEXEC, 0);
      if (fd < 0)
        {
          if (fd == -EMFILE || fd == -ENFILE || fd == -ENOMEM)
            {
              *step = "openat (carved child)";
              return fd;
            }
          return 0;   /* gone: nothing to grant */
        }
    }

  /* A pinned directory or device cannot change type or gain links: only
   * re-opened names and regular files need the identity check. */
  if (rule->kind == RULE_NAME || rule->type == S_IFREG)
    {
      r = child_statx (fd, "", AT_EMPTY_PATH, &stx);
      if (r < 0)
        {
          *step = "statx (rule inode)";
          goto out;
        }
      if (!child_same_inode (rule, &stx) || (rule->type == S_IFREG && stx.stx_nlink != 1))
        {
          r = 0;   /* replaced, or a file that gained a link: skip (narrower) */
          goto out;
        }
    }
  r = child_add_path_rule (ruleset, fd, rule->access);
  if (r < 0)
    {
      *step = "landlock_add_rule";
      goto out;
    }
  if (rule->type == S_IFREG)
    {
      r = child_statx (fd, "", AT_EMPTY_PATH, &stx);
      if (r < 0)
        *step = "statx (rule inode)";
      else if (stx.stx_nlink > 1)
        {
          /* a link appeared while the rule was added: the rule may now
           * cover a second name; fail closed.  A count of 0 is the file
           * deleted meanwhile: the rule covers an inode no name reaches
           * (one that had a name can never be linked again), narrower. */
          *step = "landlock_add_rule (file gained a hard link)";
          r = -EMLINK;
        }
    }
out:
  if (rule->kind == RULE_NAME)
    sbx_raw_syscall1 (__NR_close, fd);
  return r;
}

SBX_CHILD_FUNC int
sbx_landlock_plan_apply (const SbxLandlockPlan       *plan,
                         const SbxLandlockExtraRule  *extra,
                         size_t                       n_extra,
                         const char                 **failed_step)
{
  struct sbx_landlock_ruleset_attr attr;
  const char *step = NULL;
  long r;
  int ruleset;

  if (failed_step != NULL)
    *failed_step = NULL;

  r = sbx_raw_syscall5 (__NR_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (r < 0)
    {
      step = "prctl(PR_SET_NO_NEW_PRIVS)";
      goto fail;
    }

  attr.handled_access_fs = plan->handled_fs;
  attr.handled_access_net = plan->handled_net;
  attr.scoped = plan->scoped;
  r = sbx_raw_syscall3 (__NR_landlock_create_ruleset, &attr, plan->attr_size, 0);
  if (r < 0)
    {
      step = "landlock_create_ruleset";
      goto fail;
    }
  ruleset = (int) r;

  for (size_t i = 0; i < plan->n_rules; i++)
    {
      r = child_add_planned (ruleset, &plan->rules[i], &step);
      if (r < 0)
        goto fail_close;
    }

  for (size_t i = 0; i < n_extra; i++)
    {
      struct statx stx;
      uint64_t access = extra[i].access & plan->handled_fs;

      r = child_statx (extra[i].fd, "", AT_EMPTY_PATH, &stx);
      if (r < 0)
        {
          step = "statx (extra rule)";
          goto fail_close;
        }
      if ((stx.stx_mode & S_IFMT) != S_IFDIR)
        access &= LL_FILE_RIGHTS;
      if (access == 0)
        continue;
      r = child_add_path_rule (ruleset, extra[i].fd, access);
      if (r < 0)
        {
          step = "landlock_add_rule (extra rule)";
          goto fail_close;
        }
    }

  for (size_t i = 0; i < plan->n_ports; i++)
    {
      struct sbx_landlock_net_port_attr port;

      port.allowed_access = LANDLOCK_ACCESS_NET_CONNECT_TCP;
      port.port = plan->ports[i];
      r = sbx_raw_syscall4 (__NR_landlock_add_rule, ruleset, SBX_LANDLOCK_RULE_NET_PORT, &port, 0);
      if (r < 0)
        {
          step = "landlock_add_rule (TCP port)";
          goto fail_close;
        }
    }

  r = sbx_raw_syscall2 (__NR_landlock_restrict_self, ruleset, 0);
  if (r < 0)
    {
      step = "landlock_restrict_self";
      goto fail_close;
    }
  sbx_raw_syscall1 (__NR_close, ruleset);
  return 0;

fail_close:
  sbx_raw_syscall1 (__NR_close, ruleset);
fail:
  if (failed_step != NULL)
    *failed_step = step;
  return (int) r;
}

SBX_CHILD_FUNC int
sbx_seccomp_program_apply (const SbxSeccompProgram *program)
{
  struct sock_fprog fprog;
  long r;

  r = sbx_raw_syscall5 (__NR_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (r < 0)
    return (int) r;
  fprog.len = program->len;
  fprog.filter = program->filter;
  r = sbx_raw_syscall3 (__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog);
  return r < 0 ? (int) r : 0;
}

SBX_CHILD_FUNC int
sbx_seccomp_program_apply_listener (const SbxSeccompProgram *program)
{
  struct sock_fprog fprog;
  unsigned long flags = 0;
  long r;

  if (program->enforces & SBX_SECCOMP_ENFORCES_UNIX_SUPERVISED)
    flags = SECCOMP_FILTER_FLAG_NEW_LISTENER;
  r = sbx_raw_syscall5 (__NR_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (r < 0)
    return (int) r;
  fprog.len = program->len;
  fprog.filter = program->filter;
  r = sbx_raw_syscall3 (__NR_seccomp, SECCOMP_SET_MODE_FILTER, flags, &fprog);
  if (r < 0)
    return (int) r;
  return flags != 0 ? (int) r : 0;
}
