/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Rung 1: the sandbox's own /etc/hosts.  The sandbox has a UTS namespace
 * and the hostname "sbx" (sbx-linux-spec.c), which the host's /etc/hosts
 * does not know: getent hosts "$(hostname)" and Python's
 * socket.gethostbyname(socket.gethostname()) fail.  The view therefore
 * shows a file of ours at /etc/hosts (sbx-linux-mount.c binds it): the
 * host's lines, so that every name the host's file gives still resolves as
 * it does outside, and one line naming the sandbox's hostname.
 *
 * What it reveals: nothing the view did not show before.  The host's
 * /etc/hosts is part of the runtime closure (core/plugin/sbx-policy.c), readable
 * in every profile; its lines are copied only when the policy lets the
 * sandbox read it.  The added line names the sandbox, not the host.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "sbx-linux-private.h"

static const char localhost_text[] =
  "127.0.0.1\tlocalhost\n"
  "::1\tlocalhost ip6-localhost ip6-loopback\n";

gboolean
sbx_linux_hosts_file_new (SbxLinuxSpec      *spec,
                          const SbxPolicyV1 *policy,
                          GError           **error)
{
  g_autofree char *base = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *file = NULL;
  g_autofree char *host_text = NULL;
  g_autoptr(GString) text = g_string_new (NULL);
  gsize host_len = 0;
  int saved_errno;

  g_return_val_if_fail (spec->hostname != NULL, FALSE);

  /* The host's lines, only where the policy lets the sandbox read them. */
  if ((sbx_linux_resolve (policy->fs_rules, policy->n_fs_rules, "/etc/hosts", FALSE) & SBX_FS_READ)
      && g_file_get_contents ("/etc/hosts", &host_text, &host_len, NULL) && host_len > 0)
    {
      g_string_append_len (text, host_text, (gssize) host_len);
      if (host_text[host_len - 1] != '\n')
        g_string_append_c (text, '\n');
    }
  else
    g_string_append (text, localhost_text);
  g_string_append_printf (text, "# sbx: the sandbox's own hostname\n%s\t%s\n",
                          SBX_LINUX_HOSTNAME_ADDRESS, spec->hostname);

  /* Canonical: the child opens the file with RESOLVE_NO_SYMLINKS. */
  base = realpath (policy->state_dir != NULL ? policy->state_dir : g_get_tmp_dir (), NULL);
  if (base == NULL)
    {
      saved_errno = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "the sandbox's hosts file: resolving %s: %s",
                   policy->state_dir != NULL ? policy->state_dir : g_get_tmp_dir (), g_strerror (saved_errno));
      return FALSE;
    }
  dir = g_build_filename (base, policy->state_dir != NULL ? "linux-view-XXXXXX" : "sbx-linux-view-XXXXXX", NULL);
  if (g_mkdtemp_full (dir, 0700) == NULL)
    {
      saved_errno = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "creating the directory of the sandbox's hosts file under %s: %s",
                   base, g_strerror (saved_errno));
      return FALSE;
    }
  file = g_build_filename (dir, "hosts", NULL);
  if (!g_file_set_contents_full (file, text->str, (gssize) text->len, G_FILE_SET_CONTENTS_NONE, 0444, error))
    {
      rmdir (dir);
      g_prefix_error (error, "the sandbox's hosts file: ");
      return FALSE;
    }
  spec->hosts_dir = g_steal_pointer (&dir);
  spec->hosts_file = g_steal_pointer (&file);
  return TRUE;
}

void
sbx_linux_hosts_file_free (SbxLinuxSpec *spec)
{
  if (spec->hosts_file != NULL)
    unlink (spec->hosts_file);
  if (spec->hosts_dir != NULL)
    rmdir (spec->hosts_dir);
  g_clear_pointer (&spec->hosts_file, g_free);
  g_clear_pointer (&spec->hosts_dir, g_free);
}
