/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The view supervisor's pure part: what a blocked system call was about to
 * do to which paths, from its number and arguments alone, and lexical path
 * cleaning.  Nothing here reads a task or the filesystem.
 *
 * The table names every call that takes a path the view could refuse;
 * numbers come from libseccomp's names, resolved once per entry path
 * (native, and on x86_64 also i386 and x32), so no number is written here
 * and no name is looked up per request.  A call missing from the table is
 * reported as a read of the looked-up path (the server's fallback): the
 * table decides only how precise a report is, never an answer.
 */
#include "sbx-linux-view-private.h"

#include <fcntl.h>
#include <string.h>

#include <seccomp.h>

#include <sbx/sbx-plugin-abi.h>

/* Argument layouts. */
typedef enum
{
  L_P0,        /* path arg 0, relative to the cwd */
  L_P1,        /* path arg 1 (symlink's link path, inotify_add_watch) */
  L_P0_P1,     /* two paths: rename, link */
  L_D0_P1,     /* dirfd 0, path 1 */
  L_D0_P1_D2_P3, /* renameat, linkat */
  L_D1_P2,     /* symlinkat: dirfd 1, path 2 */
} Layout;

typedef struct
{
  const char *name;
  uint32_t    op;
  Layout      layout;
  int8_t      flags_arg;
  gboolean    flags_in_how;
} CallName;

#define R SBX_ABI_DENIAL_READ
#define W SBX_ABI_DENIAL_WRITE
#define X SBX_ABI_DENIAL_EXEC
#define F SBX_VIEW_OP_FROM_FLAGS

static const CallName call_names[] = {
  { "open", F, L_P0, 1, FALSE },
  { "openat", F, L_D0_P1, 2, FALSE },
  { "openat2", F, L_D0_P1, 2, TRUE },
  { "creat", W, L_P0, -1, FALSE },
  { "execve", X, L_P0, -1, FALSE },
  { "execveat", X, L_D0_P1, -1, FALSE },
  /* reads: metadata, links, access checks, attributes */
  { "stat", R, L_P0, -1, FALSE },
  { "lstat", R, L_P0, -1, FALSE },
  { "stat64", R, L_P0, -1, FALSE },
  { "lstat64", R, L_P0, -1, FALSE },
  { "oldstat", R, L_P0, -1, FALSE },
  { "oldlstat", R, L_P0, -1, FALSE },
  { "statfs", R, L_P0, -1, FALSE },
  { "statfs64", R, L_P0, -1, FALSE },
  { "access", R, L_P0, -1, FALSE },
  { "readlink", R, L_P0, -1, FALSE },
  { "getxattr", R, L_P0, -1, FALSE },
  { "lgetxattr", R, L_P0, -1, FALSE },
  { "listxattr", R, L_P0, -1, FALSE },
  { "llistxattr", R, L_P0, -1, FALSE },
  { "chdir", R, L_P0, -1, FALSE },
  { "chroot", R, L_P0, -1, FALSE },
  { "uselib", R, L_P0, -1, FALSE },
  { "inotify_add_watch", R, L_P1, -1, FALSE },
  { "newfstatat", R, L_D0_P1, -1, FALSE },
  { "fstatat64", R, L_D0_P1, -1, FALSE },
  { "statx", R, L_D0_P1, -1, FALSE },
  { "faccessat", R, L_D0_P1, -1, FALSE },
  { "faccessat2", R, L_D0_P1, -1, FALSE },
  { "readlinkat", R, L_D0_P1, -1, FALSE },
  { "name_to_handle_at", R, L_D0_P1, -1, FALSE },
  { "open_tree", R, L_D0_P1, -1, FALSE },
  { "getxattrat", R, L_D0_P1, -1, FALSE },
  { "listxattrat", R, L_D0_P1, -1, FALSE },
  /* writes: create, remove, rename, link, change metadata */
  { "mkdir", W, L_P0, -1, FALSE },
  { "rmdir", W, L_P0, -1, FALSE },
  { "unlink", W, L_P0, -1, FALSE },
  { "mknod", W, L_P0, -1, FALSE },
  { "truncate", W, L_P0, -1, FALSE },
  { "truncate64", W, L_P0, -1, FALSE },
  { "chmod", W, L_P0, -1, FALSE },
  { "chown", W, L_P0, -1, FALSE },
  { "lchown", W, L_P0, -1, FALSE },
  { "chown32", W, L_P0, -1, FALSE },
  { "lchown32", W, L_P0, -1, FALSE },
  { "utime", W, L_P0, -1, FALSE },
  { "utimes", W, L_P0, -1, FALSE },
  { "setxattr", W, L_P0, -1, FALSE },
  { "lsetxattr", W, L_P0, -1, FALSE },
  { "removexattr", W, L_P0, -1, FALSE },
  { "lremovexattr", W, L_P0, -1, FALSE },
  { "symlink", W, L_P1, -1, FALSE },
  { "rename", W, L_P0_P1, -1, FALSE },
  { "link", W, L_P0_P1, -1, FALSE },
  { "mkdirat", W, L_D0_P1, -1, FALSE },
  { "mknodat", W, L_D0_P1, -1, FALSE },
  { "unlinkat", W, L_D0_P1, -1, FALSE },
  { "fchmodat", W, L_D0_P1, -1, FALSE },
  { "fchmodat2", W, L_D0_P1, -1, FALSE },
  { "fchownat", W, L_D0_P1, -1, FALSE },
  { "utimensat", W, L_D0_P1, -1, FALSE },
  { "futimesat", W, L_D0_P1, -1, FALSE },
  { "setxattrat", W, L_D0_P1, -1, FALSE },
  { "removexattrat", W, L_D0_P1, -1, FALSE },
  { "renameat", W, L_D0_P1_D2_P3, -1, FALSE },
  { "renameat2", W, L_D0_P1_D2_P3, -1, FALSE },
  { "linkat", W, L_D0_P1_D2_P3, -1, FALSE },
  { "symlinkat", W, L_D1_P2, -1, FALSE },
};

#undef R
#undef W
#undef X
#undef F

#define N_CALLS G_N_ELEMENTS (call_names)

/* The number of each call per entry path (negative: absent there). */
static long call_numbers[SBX_VIEW_N_ABIS][N_CALLS];

static gpointer
build_numbers (gpointer data)
{
  static const uint32_t arches[SBX_VIEW_N_ABIS] = {
    SCMP_ARCH_NATIVE,
#if defined(__x86_64__)
    SCMP_ARCH_X86, SCMP_ARCH_X32,
#else
    0, 0,
#endif
  };

  (void) data;
  for (int a = 0; a < SBX_VIEW_N_ABIS; a++)
    for (size_t i = 0; i < N_CALLS; i++)
      {
        int nr = -1;

        if (a == SBX_VIEW_ABI_NATIVE)
          nr = seccomp_syscall_resolve_name (call_names[i].name);
        else if (arches[a] != 0)
          nr = seccomp_syscall_resolve_name_arch (arches[a], call_names[i].name);
        call_numbers[a][i] = nr;
      }
  return NULL;
}

gboolean
sbx_view_classify_call (SbxViewAbi   abi,
                        long         nr,
                        SbxViewCall *out)
{
  static GOnce once = G_ONCE_INIT;
  const CallName *c = NULL;

  g_once (&once, build_numbers, NULL);
  if ((int) abi < 0 || abi >= SBX_VIEW_N_ABIS || nr < 0)
    return FALSE;
  for (size_t i = 0; i < N_CALLS && c == NULL; i++)
    if (call_numbers[abi][i] == nr)
      c = &call_names[i];
  if (c == NULL)
    return FALSE;
  memset (out, 0, sizeof *out);
  out->op = c->op;
  out->flags_arg = c->flags_arg;
  out->flags_in_how = c->flags_in_how;
  out->n_paths = 1;
  out->dirfd_arg[0] = out->dirfd_arg[1] = -1;
  switch (c->layout)
    {
    case L_P0:
      out->path_arg[0] = 0;
      break;
    case L_P1:
      out->path_arg[0] = 1;
      break;
    case L_P0_P1:
      out->n_paths = 2;
      out->path_arg[0] = 0;
      out->path_arg[1] = 1;
      break;
    case L_D0_P1:
      out->dirfd_arg[0] = 0;
      out->path_arg[0] = 1;
      break;
    case L_D0_P1_D2_P3:
      out->n_paths = 2;
      out->dirfd_arg[0] = 0;
      out->path_arg[0] = 1;
      out->dirfd_arg[1] = 2;
      out->path_arg[1] = 3;
      break;
    case L_D1_P2:
      out->dirfd_arg[0] = 1;
      out->path_arg[0] = 2;
      break;
    default:
      return FALSE;
    }
  return TRUE;
}

uint32_t
sbx_view_open_operation (uint64_t flags)
{
  if ((flags & O_ACCMODE) == O_WRONLY || (flags & O_ACCMODE) == O_RDWR
      || (flags & (O_CREAT | O_TRUNC)) != 0 || (flags & O_TMPFILE) == O_TMPFILE)
    return SBX_ABI_DENIAL_WRITE;
  if (flags & O_DIRECTORY)
    return SBX_ABI_DENIAL_LIST;
  return SBX_ABI_DENIAL_READ;
}

/* One number of /proc/PID/syscall: decimal (the first) or 0x-hex. */
static const char *
parse_number (const char *p, gboolean hex, uint64_t *out, gboolean *negative)
{
  uint64_t v = 0;
  int digits = 0;

  *negative = FALSE;
  if (!hex && *p == '-')
    {
      *negative = TRUE;
      p++;
    }
  if (hex)
    {
      if (p[0] != '0' || p[1] != 'x')
        return NULL;
      p += 2;
    }
  for (;; p++, digits++)
    {
      int d = g_ascii_xdigit_value (*p);

      if (d < 0 || (!hex && d > 9) || digits >= 16)
        break;
      v = v * (hex ? 16 : 10) + (uint64_t) d;
    }
  if (digits == 0)
    return NULL;
  *out = v;
  return p;
}

gboolean
sbx_view_parse_syscall (const char     *text,
                        SbxViewSyscall *out)
{
  uint64_t v[9];
  gboolean negative = FALSE;
  const char *p = text;

  for (int i = 0; i < 9; i++)
    {
      gboolean neg;

      if (i > 0)
        {
          if (*p != ' ')
            return FALSE;
          p++;
        }
      p = parse_number (p, i > 0, &v[i], &neg);
      if (p == NULL)
        return FALSE;
      if (i == 0)
        negative = neg;
    }
  if (*p != '\n' && *p != '\0')
    return FALSE;
  if (negative || v[0] > G_MAXINT32)
    return FALSE;   /* "-1 sp pc": blocked, but not in a system call */
  out->nr = (long) v[0];
  memcpy (out->args, &v[1], sizeof out->args);
  out->sp = v[7];
  out->pc = v[8];
  return TRUE;
}

gboolean
sbx_view_abi_from_insn (const uint8_t insn[2],
                        long          nr,
                        SbxViewAbi   *out)
{
#if defined(__x86_64__)
  if (insn[0] == 0x0f && insn[1] == 0x05)   /* syscall */
    *out = (nr & 0x40000000L) ? SBX_VIEW_ABI_X32 : SBX_VIEW_ABI_NATIVE;
  else if ((insn[0] == 0xcd && insn[1] == 0x80)   /* int $0x80 (also the vDSO's sysenter landing) */
           || (insn[0] == 0x0f && insn[1] == 0x34))   /* sysenter */
    *out = SBX_VIEW_ABI_I386;
  else
    return FALSE;
  return TRUE;
#else
  (void) insn;
  (void) nr;
  *out = SBX_VIEW_ABI_NATIVE;
  return TRUE;
#endif
}

gboolean
sbx_view_clean_path (char *path)
{
  char *out = path;
  const char *in = path;

  if (path[0] != '/')
    return FALSE;
  while (*in != '\0')
    {
      const char *end;
      size_t len;

      while (*in == '/')
        in++;
      if (*in == '\0')
        break;
      end = strchr (in, '/');
      len = end != NULL ? (size_t) (end - in) : strlen (in);
      if (len == 1 && in[0] == '.')
        ;
      else if (len == 2 && in[0] == '.' && in[1] == '.')
        {
          while (out > path && *--out != '/')
            ;
        }
      else
        {
          *out++ = '/';
          memmove (out, in, len);
          out += len;
        }
      in += len;
    }
  if (out == path)
    *out++ = '/';
  *out = '\0';
  return TRUE;
}

gboolean
sbx_view_path_at_or_below (const char *path,
                           const char *prefix)
{
  size_t n = strlen (prefix);

  if (strcmp (prefix, "/") == 0)
    return path[0] == '/';
  return strncmp (path, prefix, n) == 0 && (path[n] == '\0' || path[n] == '/');
}
