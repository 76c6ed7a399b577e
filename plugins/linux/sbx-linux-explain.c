/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a compiled Linux spec will do, as text (the backends' explain()):
 * namespaces and id maps, the mount view's operations in order, every
 * Landlock rule with the path its pinned fd names and its access rights,
 * the TCP port rules, the seccomp program's architectures and what it
 * denies, and the rlimits.  Read-only over the spec; nothing is applied.
 */
#include "sbx-linux-private.h"
#include "sbx-landlock-private.h"
#include "sbx-landlock-compat.h"
#include "sbx-seccomp.h"

#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

/* A path as explain prints it: as is when every byte is printable ASCII
 * other than '\\' and '"', otherwise C-escaped in double quotes, so a name
 * with a newline or invalid UTF-8 cannot forge a line or break the text. */
static void
append_path (GString    *out,
             const char *path)
{
  g_autofree char *escaped = NULL;

  for (const unsigned char *p = (const unsigned char *) path; *p != '\0'; p++)
    if (*p < 0x20 || *p > 0x7e || *p == '\\' || *p == '"')
      {
        escaped = g_strescape (path, NULL);
        g_string_append_printf (out, "\"%s\"", escaped);
        return;
      }
  g_string_append (out, path);
}

static const char *
mount_op_name (uint32_t kind)
{
  switch (kind)
    {
    case SBX_MOUNT_OP_MKDIR:     return "mkdir";
    case SBX_MOUNT_OP_MKFILE:    return "mkfile";
    case SBX_MOUNT_OP_SYMLINK:   return "symlink";
    case SBX_MOUNT_OP_BIND:      return "bind";
    case SBX_MOUNT_OP_TMPFS:     return "tmpfs";
    case SBX_MOUNT_OP_MASK_FILE: return "mask-file";
    default:                     return "unknown";
    }
}

static void
append_mount_flags (GString  *out,
                    uint32_t  flags)
{
  if (flags & SBX_MOUNT_F_DIR)
    g_string_append (out, " dir");
  if (flags & SBX_MOUNT_F_RDONLY)
    g_string_append (out, " ro");
  if (flags & SBX_MOUNT_F_NOEXEC)
    g_string_append (out, " noexec");
  if (flags & SBX_MOUNT_F_OPTIONAL)
    g_string_append (out, " optional");
}

static void
append_fs_access (GString  *out,
                  uint64_t  access)
{
  static const struct { uint64_t bit; const char *name; } names[] = {
    { LANDLOCK_ACCESS_FS_EXECUTE, "execute" },
    { LANDLOCK_ACCESS_FS_WRITE_FILE, "write_file" },
    { LANDLOCK_ACCESS_FS_READ_FILE, "read_file" },
    { LANDLOCK_ACCESS_FS_READ_DIR, "read_dir" },
    { LANDLOCK_ACCESS_FS_REMOVE_DIR, "remove_dir" },
    { LANDLOCK_ACCESS_FS_REMOVE_FILE, "remove_file" },
    { LANDLOCK_ACCESS_FS_MAKE_CHAR, "make_char" },
    { LANDLOCK_ACCESS_FS_MAKE_DIR, "make_dir" },
    { LANDLOCK_ACCESS_FS_MAKE_REG, "make_reg" },
    { LANDLOCK_ACCESS_FS_MAKE_SOCK, "make_sock" },
    { LANDLOCK_ACCESS_FS_MAKE_FIFO, "make_fifo" },
    { LANDLOCK_ACCESS_FS_MAKE_BLOCK, "make_block" },
    { LANDLOCK_ACCESS_FS_MAKE_SYM, "make_sym" },
    { LANDLOCK_ACCESS_FS_REFER, "refer" },
    { LANDLOCK_ACCESS_FS_TRUNCATE, "truncate" },
    { LANDLOCK_ACCESS_FS_IOCTL_DEV, "ioctl_dev" },
  };
  gboolean any = FALSE;

  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    if (access & names[i].bit)
      {
        g_string_append_printf (out, "%s%s", any ? "," : "", names[i].name);
        any = TRUE;
      }
  if (!any)
    g_string_append (out, "(none)");
}

/* The path an O_PATH fd of the plan names (as the kernel spells it now). */
static char *
fd_path (int fd)
{
  g_autofree char *link = g_strdup_printf ("/proc/self/fd/%d", fd);
  char buf[4096];
  ssize_t n = fd >= 0 ? readlink (link, buf, sizeof buf - 1) : -1;

  if (n < 0)
    return g_strdup_printf ("(fd %d)", fd);
  buf[n] = '\0';
  return g_strdup (buf);
}

static void
append_landlock (GString               *out,
                 const SbxLandlockPlan *plan)
{
  g_string_append_printf (out, "# landlock: ABI %d, handled fs 0x%" G_GINT64_MODIFIER "x, "
                               "handled net 0x%" G_GINT64_MODIFIER "x, scoped 0x%" G_GINT64_MODIFIER "x, "
                               "%" G_GSIZE_FORMAT " rule(s)\n",
                          plan->abi, (guint64) plan->handled_fs, (guint64) plan->handled_net,
                          (guint64) plan->scoped, plan->n_rules);
  for (gsize i = 0; i < plan->n_rules; i++)
    {
      const LlRule *rule = &plan->rules[i];
      g_autofree char *path = fd_path (rule->fd);

      g_string_append (out, "landlock-rule ");
      if (rule->kind == RULE_NAME)
        {
          g_autofree char *joined = g_build_filename (path, rule->name, NULL);

          append_path (out, joined);
        }
      else
        append_path (out, path);
      g_string_append (out, ": ");
      append_fs_access (out, rule->access);
      g_string_append_c (out, '\n');
    }
  if (plan->handled_net != 0)
    {
      g_string_append (out, "landlock-tcp-connect:");
      if (plan->n_ports == 0)
        g_string_append (out, " (no port: every TCP connect and bind is denied)");
      for (gsize i = 0; i < plan->n_ports; i++)
        g_string_append_printf (out, " %" G_GUINT64_FORMAT, (guint64) plan->ports[i]);
      g_string_append_c (out, '\n');
    }
}

static void
append_seccomp (GString                 *out,
                const SbxSeccompProgram *program)
{
  uint32_t enforces = sbx_seccomp_program_enforces (program);

  g_string_append_printf (out, "# seccomp: one filter per architecture: %s\n",
                          sbx_seccomp_program_arches (program));
  g_string_append (out, "seccomp-denies:");
  if (enforces & SBX_SECCOMP_ENFORCES_INET_DENIED)
    g_string_append (out, " socket(AF_INET/AF_INET6)");
  if (enforces & SBX_SECCOMP_ENFORCES_INET_TCP_ONLY)
    g_string_append (out, " non-TCP-inet-sockets");
  if (enforces & SBX_SECCOMP_ENFORCES_UNIX_DENIED)
    g_string_append (out, " socket(AF_UNIX)");
  if (enforces & SBX_SECCOMP_ENFORCES_UNIX_SUPERVISED)
    g_string_append (out, " unix-datagram-sockets (connect: supervised)");
  if (enforces & SBX_SECCOMP_ENFORCES_TRUNCATE_DENIED)
    g_string_append (out, " truncate-without-write");
  g_string_append (out, " (plus the fixed deny list of sbx-seccomp.c: ptrace, io_uring, "
                        "namespace and mount calls, keyring, bpf, ...)\n");
}

static const char *
rlimit_name (int resource)
{
  switch (resource)
    {
    case RLIMIT_NOFILE: return "RLIMIT_NOFILE";
    case RLIMIT_NPROC:  return "RLIMIT_NPROC";
    case RLIMIT_AS:     return "RLIMIT_AS";
    case RLIMIT_CORE:   return "RLIMIT_CORE";
    case RLIMIT_DATA:   return "RLIMIT_DATA";
    case RLIMIT_FSIZE:  return "RLIMIT_FSIZE";
    default:            return "RLIMIT_?";
    }
}

char *
sbx_linux_explain (const SbxLinuxSpec *spec)
{
  GString *out = g_string_new (NULL);

  g_return_val_if_fail (spec != NULL, NULL);

  g_string_append_printf (out, "# linux rung %d (%s)\n", spec->rung,
                          spec->rung == SBX_LINUX_RUNG_USERNS ? "namespaces + mount view + Landlock + seccomp"
                                                              : "Landlock + seccomp, no namespaces");
  if (spec->rung == SBX_LINUX_RUNG_USERNS)
    {
      g_string_append_printf (out, "namespaces: user mount pid ipc uts%s\n",
                              spec->netns ? " net (private: loopback only)" : " (host network)");
      if (spec->uid_map != NULL)
        g_string_append_printf (out, "uid_map: %.*s", (int) spec->uid_map_len, spec->uid_map);
      if (spec->gid_map != NULL)
        g_string_append_printf (out, "gid_map: %.*s", (int) spec->gid_map_len, spec->gid_map);
    }
  if (spec->mounts != NULL)
    {
      const SbxLinuxMountPlan *plan = spec->mounts;

      g_string_append_printf (out, "# mount view: %" G_GSIZE_FORMAT " operation(s), then /dev, /proc, pivot_root\n",
                              plan->n_ops);
      if (plan->root_is_host)
        {
          g_string_append (out, "root: bind / (host)");
          append_mount_flags (out, plan->root_flags);
          g_string_append_c (out, '\n');
        }
      else
        g_string_append (out, "root: tmpfs (empty, read-only at the end)\n");
      for (gsize i = 0; i < plan->n_ops; i++)
        {
          const SbxMountOp *op = &plan->ops[i];

          g_string_append_printf (out, "mount-op %s ", mount_op_name (op->kind));
          append_path (out, op->path);
          if (op->kind == SBX_MOUNT_OP_SYMLINK && op->link != NULL)
            {
              g_string_append (out, " -> ");
              append_path (out, op->link);
            }
          if (op->kind == SBX_MOUNT_OP_BIND && op->source != NULL)
            {
              /* A file of the sandbox's own (its /etc/hosts), not the host's. */
              g_string_append (out, " from ");
              append_path (out, op->source);
            }
          append_mount_flags (out, op->flags);
          g_string_append_c (out, '\n');
        }
    }
  if (spec->landlock != NULL)
    append_landlock (out, spec->landlock);
  else
    g_string_append (out, "# landlock: none (not available here)\n");
  if (spec->seccomp != NULL)
    append_seccomp (out, spec->seccomp);
  if (spec->seccomp_terminal != NULL)
    g_string_append (out, "# seccomp, a spawn whose stdin/stdout/stderr is the caller's terminal: the same "
                          "filter plus terminal-setting-ioctls (TCSETS*, TIOCSWINSZ, TIOCSETD, TCFLSH, TCXONC, "
                          "breaks, TIOCSCTTY, TIOCCONS, ...: EPERM on every descriptor)\n");
  if (spec->seccomp == NULL)
    g_string_append (out, "# seccomp: none (not available here)\n");
  for (int i = 0; i < spec->n_rlimits; i++)
    {
      if (spec->rlimits[i].limit.rlim_cur == RLIM_INFINITY)
        g_string_append_printf (out, "rlimit %s: unlimited\n", rlimit_name (spec->rlimits[i].resource));
      else
        g_string_append_printf (out, "rlimit %s: %" G_GUINT64_FORMAT "\n", rlimit_name (spec->rlimits[i].resource),
                                (guint64) spec->rlimits[i].limit.rlim_cur);
    }
  return g_string_free (out, FALSE);
}
