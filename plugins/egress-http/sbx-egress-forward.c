/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The listeners of one execution besides the proxy: see
 * sbx-egress-forward.h.
 */
#include "sbx-egress-forward.h"
#include "sbx-egress-tunnel.h"
#include "sbx-netrules-private.h"

#include <string.h>
#include <unistd.h>

/* The host of a FORWARD entry's target when it is a name; NULL for a
 * literal or an entry that is not a valid FORWARD. */
static char *
entry_name (const SbxListenV1 *entry)
{
  g_autofree char *host = NULL;
  guint16 port = 0;
  gboolean literal = FALSE;

  if (entry->struct_size < SBX_LISTEN_V1_MIN_SIZE || entry->kind != SBX_LISTEN_FORWARD ||
      entry->target == NULL || entry->family != SBX_LISTEN_IPV4)
    return NULL;
  if (!sbx_netrules_parse_target (entry->target, &host, &port, &literal, NULL) || literal)
    return NULL;
  return g_ascii_strdown (host, -1);
}

GHashTable *
sbx_egress_forward_names (const SbxListenV1 *listens,
                          const int32_t     *fds,
                          guint32            n_listens)
{
  GHashTable *names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (guint32 i = 0; i < n_listens; i++)
    {
      char *name;
      guint32 address;

      if (fds[i] < 0)
        continue;
      name = entry_name (&listens[i]);
      if (name == NULL)
        continue;
      memcpy (&address, listens[i].address, 4);
      /* one address per name: the first forwarder of the name wins (the
       * host gives every port of one name the same address) */
      if (g_hash_table_contains (names, name))
        g_free (name);
      else
        g_hash_table_insert (names, name, GUINT_TO_POINTER (address));
    }
  return names;
}

static void
close_from (const int32_t *fds,
            guint32        from,
            guint32        n)
{
  for (guint32 i = from; i < n; i++)
    if (fds[i] >= 0)
      close (fds[i]);
}

gboolean
sbx_egress_forward_serve (SbxEgressProxy    *proxy,
                          SbxEgressDns      *dns,
                          const char        *execution_id,
                          const SbxListenV1 *listens,
                          const int32_t     *fds,
                          guint32            n_listens,
                          GError           **error)
{
  /* the stub's names, one table for its UDP and TCP sockets (read only,
   * on the stub's thread) */
  g_autoptr(GHashTable) names = sbx_egress_forward_names (listens, fds, n_listens);

  for (guint32 i = 0; i < n_listens; i++)
    {
      const SbxListenV1 *entry = &listens[i];
      gboolean ok;

      if (fds[i] < 0)
        continue;
      if (entry->struct_size < SBX_LISTEN_V1_MIN_SIZE)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "listener %u: struct_size %u below SBX_LISTEN_V1_MIN_SIZE", i, entry->struct_size);
          close_from (fds, i, n_listens);
          return FALSE;
        }
      if (entry->kind == SBX_LISTEN_DNS_UDP || entry->kind == SBX_LISTEN_DNS_TCP)
        ok = sbx_egress_dns_serve_fd (dns, execution_id, fds[i], entry->kind == SBX_LISTEN_DNS_TCP,
                                      g_hash_table_ref (names), error);
      else if (entry->kind == SBX_LISTEN_FORWARD && entry->target != NULL)
        {
          g_autofree char *canonical = sbx_netrules_canonical_target (entry->target, NULL);

          if (canonical == NULL || strcmp (canonical, entry->target) != 0)
            {
              g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           "listener %u: target “%s” is not a canonical tcp:HOST:PORT", i, entry->target);
              close_from (fds, i, n_listens);
              return FALSE;
            }
          ok = sbx_egress_tunnel_serve_fd (proxy, execution_id, entry->target, fds[i], error);
        }
      else if (entry->kind == SBX_LISTEN_FORWARD)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       "listener %u: a forwarder without a target", i);
          close_from (fds, i, n_listens);
          return FALSE;
        }
      else
        {
          /* a kind newer than this plugin: kinds are additive, so nothing
           * is served on it and the others still are (see SbxListenV1) */
          close (fds[i]);
          continue;
        }
      if (!ok)
        {
          close_from (fds, i + 1, n_listens);
          return FALSE;
        }
    }
  return TRUE;
}
