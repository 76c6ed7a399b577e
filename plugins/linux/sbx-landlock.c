/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Landlock plan of the Linux backend: policy -> flat rule list (parent, once
 * per executor) -> ruleset (child, every spawn).
 *
 * Three units on the parent side, along the plan's seams: the model
 * (sbx-landlock-model.c: access sets, entries, precedence), the builder
 * (sbx-landlock-builder.c: rules, carving, symlinked paths) and this file
 * (the plan: validation, network rules, what it enforces, the report).
 * The child side, which replays the plan, is sbx-linux-child-lsm.c.
 *
 * How the policy becomes Landlock rules
 * -------------------------------------
 * Landlock can only add allows, and a rule on a directory covers its whole
 * subtree.  For every allow rule and every axis (read, exec, write) it grants:
 *
 *  - if no literal deny of that axis lies strictly beneath it (or, for a tree
 *    allow, exactly at it), the allow becomes one rule on its inode;
 *  - otherwise the allow is *carved*: the directory is listed once, now, and
 *    each child that holds no deny becomes its own rule, children that hold a
 *    deny deeper down are descended into, denied children are left out.  This
 *    is sibling enumeration with
 *    snapshot semantics: entries created later directly in a carved directory
 *    get nothing on that axis.
 *
 * ResolveFS precedence (most specific wins per axis, exact over tree, deny
 * wins ties, glob denies override, uncontrolled axis denied) is preserved or
 * narrowed: every emitted rule covers a subtree in which no literal deny of
 * its axis exists, and a more specific allow beneath a deny is emitted from
 * its own entry.
 *
 * Write topology barrier: a writable tree must not be able to rename, replace
 * or link around a node whose read or exec is denied (an allowed inode moved
 * under a protected name, or a protected inode moved to an allowed name that a
 * later snapshot would grant).  So for the write axis every read/exec deny
 * nested in the tree also carves it: the barrier's parent loses directory
 * write, a tree-denied node gets no write from the covering allow.  Departure
 * from upstream (deliberate): upstream also withdraws write from any allow that
 * sits under *any* recursive read deny, which includes the host root "/" of
 * every read-denied profile and would leave no workspace writable.  A more
 * specific writable allow inside a read-denied subtree keeps its write here:
 * it covers no denied node, its parent gets no write (so it cannot be moved),
 * and Landlock's REFER check refuses any link or rename that would give an
 * inode more access than it had at its source.
 *
 * Identity: rules name inodes, not paths.  Top-level targets are pinned with
 * O_PATH fds opened with openat2(RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS)
 * (or dup()ed from the core's identity-checked grant fd).  Carved children
 * are not each held open (a large directory would exhaust RLIMIT_NOFILE);
 * they are recorded as (pinned parent fd, name, device, inode, type) and the
 * child re-opens them with O_NOFOLLOW and skips any whose identity changed.
 * Regular files must have exactly one link (an inode rule would also grant
 * every other name of it), checked at snapshot and before and after the rule
 * is added in the child.  Symlinks are never followed by the enumeration; a
 * policy path that is itself (or runs through) a symlink, such as /bin ->
 * usr/bin, is resolved once here and the rule goes on the resolved target
 * only for the axes the policy also grants there (otherwise the gap is
 * reported).  Devices of the policy get real rules after an S_ISCHR check;
 * block devices, FIFOs and sockets never do.
 *
 * Access sets per axis (no axis implies another):
 *   read  -> READ_FILE (+ READ_DIR on directories)
 *   exec  -> EXECUTE
 *   write -> WRITE_FILE | TRUNCATE; on directories also REMOVE_DIR,
 *            REMOVE_FILE, MAKE_DIR, MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_SYM,
 *            REFER (renames and links between writable directories) and
 *            IOCTL_DEV.  MAKE_CHAR and MAKE_BLOCK are never granted: a
 *            device node created in a writable tree would be a rule-free
 *            path to raw hardware for a caller that still holds CAP_MKNOD.
 *   char devices of the policy: READ_FILE / WRITE_FILE|TRUNCATE per axis,
 *            plus IOCTL_DEV (terminals need it).
 *
 * Errors are G_IO_ERROR: INVALID_ARGUMENT for a malformed policy (defense in
 * depth: the backend re-validates what the core compiled), NOT_SUPPORTED for
 * a request Landlock cannot honour without widening, and the errno mapping
 * for system-call failures.
 */
#include "sbx-landlock.h"
#include "sbx-landlock-compat.h"
#include "sbx-landlock-private.h"
#include "sbx-landlock-build-private.h"
#include <sbx/sbx-fs-resolve.h>
#include "sbx-raw-syscall.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <linux/openat2.h>

#include <gio/gio.h>

/* ------------------------------------------------------------------------- */
/* The plan                                                                   */
/* ------------------------------------------------------------------------- */

int
sbx_landlock_probe_abi (void)
{
  long abi = syscall (__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

  return abi > 0 ? (int) abi : 0;
}

void
sbx_landlock_plan_free (SbxLandlockPlan *plan)
{
  if (plan == NULL)
    return;
  for (size_t i = 0; i < plan->n_fds; i++)
    close (plan->fds[i]);
  g_free (plan->fds);
  g_free (plan->rules);
  g_free (plan->ports);
  if (plan->names != NULL)
    g_string_chunk_free (plan->names);
  g_free (plan);
}

uint32_t
sbx_landlock_plan_enforces (const SbxLandlockPlan *plan)
{
  g_return_val_if_fail (plan != NULL, 0);
  return plan->enforces;
}

int
sbx_landlock_plan_abi (const SbxLandlockPlan *plan)
{
  g_return_val_if_fail (plan != NULL, 0);
  return plan->abi;
}

uint64_t
sbx_landlock_plan_handled_access_fs (const SbxLandlockPlan *plan)
{
  g_return_val_if_fail (plan != NULL, 0);
  return plan->handled_fs;
}

uint64_t
sbx_landlock_plan_handled_access_net (const SbxLandlockPlan *plan)
{
  g_return_val_if_fail (plan != NULL, 0);
  return plan->handled_net;
}

const uint64_t *
sbx_landlock_plan_tcp_ports (const SbxLandlockPlan *plan,
                             size_t                *n_ports)
{
  g_return_val_if_fail (plan != NULL, NULL);
  *n_ports = plan->n_ports;
  return plan->ports;
}

uint64_t
sbx_landlock_plan_scoped (const SbxLandlockPlan *plan)
{
  g_return_val_if_fail (plan != NULL, 0);
  return plan->scoped;
}

size_t
sbx_landlock_plan_n_rules (const SbxLandlockPlan *plan)
{
  g_return_val_if_fail (plan != NULL, 0);
  return plan->n_rules + plan->n_ports;
}

uint64_t
sbx_landlock_plan_access_read_dir (const SbxLandlockPlan *plan)
{
  g_return_val_if_fail (plan != NULL, 0);
  return LL_READ_DIR & plan->handled_fs;
}

uint64_t
sbx_landlock_plan_access_rw_dir (const SbxLandlockPlan *plan)
{
  g_return_val_if_fail (plan != NULL, 0);
  return (LL_READ_DIR | LL_WRITE_DIR) & plan->handled_fs;
}

uint64_t
sbx_landlock_plan_access_rw_file (const SbxLandlockPlan *plan)
{
  g_return_val_if_fail (plan != NULL, 0);
  return (LL_READ_FILE | LL_WRITE_FILE | LL_DEVICE_EXTRA) & plan->handled_fs;
}

/* ------------------------------------------------------------------------- */
/* Validation                                                                 */
/* ------------------------------------------------------------------------- */

#define KNOWN_RULE_FLAGS (SBX_FS_RULE_EXACT | SBX_FS_RULE_GLOB | SBX_FS_RULE_CANONICAL | SBX_FS_RULE_OPTIONAL)

static gboolean
load_entries (Builder *b, const SbxPolicyV1 *policy, GError **error)
{
  if (policy->n_fs_rules > 0 && policy->fs_rules == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "policy.fs_rules: NULL with n_fs_rules = %u", policy->n_fs_rules);
      return FALSE;
    }
  for (uint32_t i = 0; i < policy->n_fs_rules; i++)
    {
      const SbxFsRuleV1 *r = &policy->fs_rules[i];
      LlEntry *e;

      /* Defense in depth: the backend must not trust the compiler's output. */
      if (r->struct_size < SBX_FS_RULE_V1_MIN_SIZE)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "policy.fs_rules[%u]: struct_size %u < %zu", i, r->struct_size, sizeof (SbxFsRuleV1));
          return FALSE;
        }
      if ((r->flags & ~KNOWN_RULE_FLAGS) || (r->allow & ~SBX_FS_ALL) || (r->deny & ~SBX_FS_ALL))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "policy.fs_rules[%u] (%s): unknown flag or access bits (flags 0x%x, allow 0x%x, deny 0x%x)",
                       i, r->path != NULL ? r->path : "(null)", r->flags, r->allow, r->deny);
          return FALSE;
        }
      if (r->path == NULL || r->path[0] != '/' ||
          (!(r->flags & SBX_FS_RULE_GLOB) && !ll_path_is_clean (r->path)))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "policy.fs_rules[%u].path: \"%s\" is not an absolute clean path",
                       i, r->path != NULL ? r->path : "(null)");
          return FALSE;
        }
      if ((r->flags & SBX_FS_RULE_GLOB) && r->allow != 0)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "policy.fs_rules[%u] (%s): a glob rule may only deny", i, r->path);
          return FALSE;
        }
      if (r->fd >= 0 && (r->flags & SBX_FS_RULE_GLOB))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "policy.fs_rules[%u] (%s): a glob rule cannot carry an fd", i, r->path);
          return FALSE;
        }

      e = g_new0 (LlEntry, 1);
      e->path = g_strdup (r->path);
      e->allow = r->allow;
      e->deny = (r->allow == 0 && r->deny == 0) ? SBX_FS_ALL : r->deny;
      e->origin = r->origin;
      e->fd = r->fd >= 0 ? r->fd : -1;
      e->exact = (r->flags & SBX_FS_RULE_EXACT) != 0;
      e->glob = (r->flags & SBX_FS_RULE_GLOB) != 0;
      e->optional = (r->flags & SBX_FS_RULE_OPTIONAL) != 0;
      e->canonical = (r->flags & SBX_FS_RULE_CANONICAL) != 0;
      if (e->glob)
        g_ptr_array_add (b->globs, e);
      else
        g_ptr_array_add (b->entries, e);
    }
  return TRUE;
}

static gboolean
plan_network (Builder *b, const SbxPolicyV1 *policy, const SbxLandlockOptions *options,
              const SbxLinuxReporter *reporter, GError **error)
{
  SbxLandlockPlan *plan = b->plan;
  const SbxNetPolicyV1 *net = policy->net;
  g_autoptr(GArray) ports = NULL;
  g_autoptr(GString) list = NULL;

  if (net == NULL || net->struct_size < SBX_NET_POLICY_V1_MIN_SIZE)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "policy.net: missing or struct_size too small for a network plan");
      return FALSE;
    }
  switch (net->mode)
    {
    case SBX_NET_MODE_OPEN:
      return TRUE;
    case SBX_NET_MODE_PROXY:
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   "policy.net.mode = proxy: Landlock TCP rules cannot restrict the destination address, "
                   "so the proxy port would be reachable on every host; not supported by the Landlock plan "
                   "(never widened)");
      return FALSE;
    case SBX_NET_MODE_DENY:
    case SBX_NET_MODE_PORTS:
      break;
    default:
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "policy.net.mode: unknown value %u", net->mode);
      return FALSE;
    }

  ports = g_array_new (FALSE, FALSE, sizeof (uint64_t));
  if (net->mode == SBX_NET_MODE_PORTS)
    {
      if (net->n_tcp_ports > 0 && net->tcp_ports == NULL)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "policy.net.tcp_ports: NULL with n_tcp_ports = %u", net->n_tcp_ports);
          return FALSE;
        }
      for (uint32_t i = 0; i <= net->n_tcp_ports; i++)
        {
          uint64_t port;
          gboolean seen = FALSE;

          if (i == net->n_tcp_ports)
            {
              if (!(net->flags & SBX_NET_FLAG_DNS))
                break;
              port = 53;   /* DNS over TCP (the glue forces RES_OPTIONS=use-vc) */
            }
          else
            port = net->tcp_ports[i];
          if (port == 0)
            {
              g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           "policy.net.tcp_ports[%u]: port 0", i);
              return FALSE;
            }
          for (guint j = 0; j < ports->len; j++)
            seen = seen || g_array_index (ports, uint64_t, j) == port;
          if (!seen)
            g_array_append_val (ports, port);
        }
    }

  if (options->abi < 4)
    {
      g_autofree char *detail =
        g_strdup_printf ("Landlock ABI %d has no TCP rules (needs ABI 4, Linux 6.7); the TCP boundary "
                         "must come from elsewhere (seccomp can deny socket creation). "
                         "Hint: a newer kernel adds Landlock network rules", options->abi);

      sbx_linux_report (reporter, SBX_ABI_FEATURE_NETWORK_BOUNDARY, SBX_ABI_REPORT_UNENFORCED, detail);
      return TRUE;
    }

  plan->handled_net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
  plan->n_ports = ports->len;
  plan->ports = (uint64_t *) (void *) g_array_free (g_steal_pointer (&ports), FALSE);
  plan->enforces |= SBX_LANDLOCK_ENFORCES_NET;

  list = g_string_new (NULL);
  for (size_t i = 0; i < plan->n_ports; i++)
    g_string_append_printf (list, "%s%" G_GUINT64_FORMAT, i ? "," : "", plan->ports[i]);
  if (plan->n_ports == 0)
    sbx_linux_report (reporter, SBX_ABI_FEATURE_NETWORK_BOUNDARY, SBX_ABI_REPORT_ENFORCED,
                      "Landlock: every TCP connect and bind denied (UDP and other protocols are "
                      "outside Landlock: the seccomp filter handles them)");
  else
    {
      g_autofree char *detail =
        g_strdup_printf ("Landlock: TCP connect only to port(s) %s on any address, every TCP bind denied "
                         "(UDP and other protocols are outside Landlock: the seccomp filter handles them)",
                         list->str);

      sbx_linux_report (reporter, SBX_ABI_FEATURE_NETWORK_BOUNDARY, SBX_ABI_REPORT_ENFORCED, detail);
    }
  return TRUE;
}

static char *
join_limited (GPtrArray *items, guint limit)
{
  GString *s = g_string_new (NULL);

  for (guint i = 0; i < items->len && i < limit; i++)
    g_string_append_printf (s, "%s%s", i ? "; " : "", (const char *) g_ptr_array_index (items, i));
  if (items->len > limit)
    g_string_append_printf (s, "; and %u more", items->len - limit);
  return g_string_free (s, FALSE);
}

/* The policy and options, checked before anything is built (the kernel's
 * ABI into *kernel_abi). */
static gboolean
plan_check (const SbxPolicyV1         *policy,
            const SbxLandlockOptions  *options,
            int                       *kernel_abi,
            GError                   **error)
{
  if (policy->struct_size < SBX_POLICY_V1_MIN_SIZE)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "policy: struct_size %u < %zu", policy->struct_size, sizeof (SbxPolicyV1));
      return FALSE;
    }
  if (policy->flags & SBX_POLICY_UNCONFINED)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           "policy: an Unconfined policy has no Landlock plan");
      return FALSE;
    }
  if (options->rung != SBX_LANDLOCK_RUNG_USERNS && options->rung != SBX_LANDLOCK_RUNG_LANDLOCK)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "options.rung: unknown rung %d", options->rung);
      return FALSE;
    }
  *kernel_abi = sbx_landlock_probe_abi ();
  if (options->abi < 1 || options->abi > *kernel_abi)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   "Landlock ABI %d requested but the kernel offers %d. Hint: Landlock needs Linux 5.13 "
                   "with CONFIG_SECURITY_LANDLOCK and \"landlock\" in the lsm= boot parameter",
                   options->abi, *kernel_abi);
      return FALSE;
    }
  return TRUE;
}

/* Rung 1: bind-mount roots cut the path walk; re-grant there. */
static gboolean
plan_add_mount_roots (Builder                   *b,
                      const SbxLandlockOptions  *options,
                      GError                   **error)
{
  guint n = b->entries->len;
  g_autoptr(GPtrArray) view = NULL;

  if (options->mount_roots == NULL || options->rung != SBX_LANDLOCK_RUNG_USERNS)
    return TRUE;
  view = g_ptr_array_new ();
  for (guint j = 0; j < n; j++)
    g_ptr_array_add (view, g_ptr_array_index (b->entries, j));
  for (const char *const *m = options->mount_roots; *m != NULL; m++)
    {
      uint32_t granted = 0;
      LlEntry *c;

      if (!ll_path_is_clean (*m))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "options.mount_roots: \"%s\" is not an absolute clean path", *m);
          return FALSE;
        }
      granted = ll_resolve_path (view, b->globs, *m);
      if (granted == 0)
        continue;
      c = g_new0 (LlEntry, 1);
      c->path = g_strdup (*m);
      c->allow = granted;
      c->fd = -1;
      c->optional = TRUE;
      g_ptr_array_add (b->entries, c);
    }
  return TRUE;
}

/* The rules of every entry's allowed axes (sbx-landlock-builder.c). */
static gboolean
plan_emit_rules (Builder  *b,
                 GError  **error)
{
  for (guint i = 0; i < b->entries->len; i++)
    {
      const LlEntry *e = g_ptr_array_index (b->entries, i);

      for (guint k = 0; k < LL_N_AXES; k++)
        if ((e->allow & ll_axes[k]) && !ll_emit_allow_axis (b, e, ll_axes[k], error))
          return FALSE;
    }
  return TRUE;
}

/* The rules frozen into the plan, and what the ruleset enforces.  At rung 2
 * glob denies are not expressible: the axes they deny are not claimed
 * (*glob_read, *glob_write say which). */
static void
plan_freeze (Builder  *b,
             gboolean  rung2,
             gboolean *glob_read,
             gboolean *glob_write)
{
  SbxLandlockPlan *plan = b->plan;

  plan->n_rules = b->rules->len;
  plan->rules = (LlRule *) (void *) g_array_free (g_steal_pointer (&b->rules), FALSE);
  plan->n_fds = b->fds->len;
  plan->fds = (int *) (void *) g_array_free (g_steal_pointer (&b->fds), FALSE);
  plan->attr_size = plan->abi >= 6 ? 24 : plan->abi >= 4 ? 16 : 8;

  *glob_read = *glob_write = FALSE;
  for (guint i = 0; i < b->globs->len; i++)
    {
      const LlEntry *g = g_ptr_array_index (b->globs, i);

      *glob_read = *glob_read || (g->deny & (SBX_FS_READ | SBX_FS_EXEC));
      *glob_write = *glob_write || (g->deny & SBX_FS_WRITE);
    }
  if (!(rung2 && *glob_read))
    plan->enforces |= SBX_LANDLOCK_ENFORCES_READ;
  if (!(rung2 && *glob_write))
    plan->enforces |= plan->abi >= 3 ? SBX_LANDLOCK_ENFORCES_WRITE : SBX_LANDLOCK_ENFORCES_WRITE_EXCEPT_TRUNCATE;
  if (plan->scoped != 0)
    plan->enforces |= SBX_LANDLOCK_ENFORCES_SCOPE;
}

/* Rung 2, where Landlock is the filesystem boundary: the boundaries and the
 * denies it expresses. */
static void
plan_report_boundaries (const Builder          *b,
                        gboolean                glob_read,
                        gboolean                glob_write,
                        const SbxLinuxReporter *reporter)
{
  if (b->plan->abi >= 3)
    sbx_linux_report (reporter, SBX_ABI_FEATURE_WRITE_BOUNDARY, glob_write ? SBX_ABI_REPORT_UNENFORCED : SBX_ABI_REPORT_ENFORCED,
                      glob_write ? "Landlock: glob write denies cannot be expressed" : "Landlock filesystem rules");
  else
    sbx_linux_report (reporter, SBX_ABI_FEATURE_WRITE_BOUNDARY, SBX_ABI_REPORT_UNENFORCED,
                      "Landlock ABI < 3 cannot mediate truncate(2) or open(O_RDONLY|O_TRUNC); "
                      "the write boundary holds only with the seccomp truncate deny. "
                      "Hint: Linux 6.2 adds LANDLOCK_ACCESS_FS_TRUNCATE");
  sbx_linux_report (reporter, SBX_ABI_FEATURE_READ_BOUNDARY, glob_read ? SBX_ABI_REPORT_UNENFORCED : SBX_ABI_REPORT_ENFORCED,
                    glob_read ? "Landlock: glob read denies cannot be expressed" : "Landlock filesystem rules");
  if (b->literal_deny)
    sbx_linux_report (reporter, "fixed-path-deny", SBX_ABI_REPORT_ENFORCED,
                      "literal denies inside allowed trees enforced by sibling enumeration");
  if (b->globs->len > 0)
    sbx_linux_report (reporter, "glob-deny", SBX_ABI_REPORT_UNENFORCED,
                      "Landlock cannot express glob denies; matching paths keep the access of "
                      "their covering allow");
}

/* Where the rules narrow the policy: carved directories (snapshots),
 * paths without a rule, symlinks resolved outside the policy. */
static void
plan_report_rules (const Builder          *b,
                   const char             *layer,
                   const SbxLinuxReporter *reporter)
{
  if (b->carved_write_deny)
    {
      g_autofree char *detail = g_strdup_printf ("a writable tree holds a nested write deny: its entries that "
                                                 "existed at executor creation stay writable, new entries "
                                                 "directly in a carved directory do not%s", layer);

      sbx_linux_report (reporter, "carveout", SBX_ABI_REPORT_NARROWED, detail);
    }
  if (b->carved_axes != 0)
    {
      g_autoptr(GString) list = g_string_new (NULL);
      g_autofree char *detail = NULL;

      for (guint k = 0; k < LL_N_AXES; k++)
        if (b->carved_axes & ll_axes[k])
          g_string_append_printf (list, "%s%s", list->len ? ", " : "", ll_axis_name (ll_axes[k]));
      detail = g_strdup_printf ("%s: authority of carved directories is the snapshot taken at executor "
                                "creation%s", list->str, layer);
      sbx_linux_report (reporter, "filesystem-axis-snapshot", SBX_ABI_REPORT_NARROWED, detail);
    }
  if (b->dropped->len > 0 || b->gaps->len > 0)
    {
      g_autofree char *dropped = join_limited (b->dropped, 8);
      g_autofree char *gaps = join_limited (b->gaps, 8);
      g_autofree char *detail =
        g_strdup_printf ("%s%s%s%s%s%s", b->dropped->len ? "not granted: " : "", dropped,
                         b->dropped->len && b->gaps->len ? "; " : "",
                         b->gaps->len ? "symbolic links resolved outside the policy: " : "", gaps, layer);

      sbx_linux_report (reporter, "allow-paths", SBX_ABI_REPORT_NARROWED, detail);
    }
  else
    sbx_linux_report (reporter, "allow-paths", SBX_ABI_REPORT_ENFORCED, "every allowed path has a rule");
}

/* Scoping and the ABI the ruleset uses. */
static void
plan_report_abi (const SbxLandlockPlan  *plan,
                 int                     kernel_abi,
                 const char             *layer,
                 const SbxLinuxReporter *reporter)
{
  g_autofree char *abi_detail = NULL;

  if (plan->scoped != 0)
    sbx_linux_report (reporter, "landlock-scoping", SBX_ABI_REPORT_ENFORCED,
                      "abstract unix sockets and signals are scoped to the sandbox");
  else
    sbx_linux_report (reporter, "landlock-scoping", SBX_ABI_REPORT_UNENFORCED,
                      "Landlock ABI < 6: abstract unix sockets and signals outside the sandbox are "
                      "reachable. Hint: Linux 6.12 adds Landlock scoping");

  abi_detail = g_strdup_printf ("%d%s: handled fs 0x%" G_GINT64_MODIFIER "x, net 0x%" G_GINT64_MODIFIER
                                "x, scoped 0x%" G_GINT64_MODIFIER "x, %zu rules%s%s%s",
                                plan->abi, kernel_abi > plan->abi ? " (kernel offers more)" : "",
                                plan->handled_fs, plan->handled_net, plan->scoped,
                                plan->n_rules + plan->n_ports,
                                plan->abi < 2 ? "; no REFER: renames and links across directories fail (EXDEV)" : "",
                                plan->abi < 5 ? "; device ioctls not mediated" : "",
                                layer);
  sbx_linux_report (reporter, "landlock-abi", SBX_ABI_REPORT_ENFORCED, abi_detail);
}

SbxLandlockPlan *
sbx_landlock_plan_new (const SbxPolicyV1        *policy,
                       const SbxLandlockOptions *options,
                       const SbxLinuxReporter   *reporter,
                       GError                  **error)
{
  g_autoptr(SbxLandlockPlan) plan = NULL;
  g_auto(Builder) b = { 0 };
  int kernel_abi = 0;
  gboolean rung2;
  gboolean glob_read, glob_write;
  const char *layer;

  g_return_val_if_fail (policy != NULL, NULL);
  g_return_val_if_fail (options != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!plan_check (policy, options, &kernel_abi, error))
    return NULL;
  rung2 = options->rung == SBX_LANDLOCK_RUNG_LANDLOCK;
  layer = rung2 ? "" : " (Landlock layer under the mount view)";

  plan = g_new0 (SbxLandlockPlan, 1);
  plan->abi = MIN (options->abi, SBX_LANDLOCK_ABI_MAX);
  plan->rung = options->rung;
  plan->handled_fs = ll_handled_fs_for_abi (plan->abi);
  plan->scoped = plan->abi >= 6 ? (LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL) : 0;
  plan->names = g_string_chunk_new (1024);
  ll_builder_init (&b, plan);

  if (!load_entries (&b, policy, error))
    return NULL;
  ll_resolve_symlinked_entries (&b);
  if (!plan_add_mount_roots (&b, options, error) || !plan_emit_rules (&b, error))
    return NULL;
  if (options->net && !plan_network (&b, policy, options, reporter, error))
    return NULL;
  plan_freeze (&b, rung2, &glob_read, &glob_write);

  if (rung2)
    plan_report_boundaries (&b, glob_read, glob_write, reporter);
  plan_report_rules (&b, layer, reporter);
  plan_report_abi (plan, kernel_abi, layer, reporter);
  return g_steal_pointer (&plan);
}
