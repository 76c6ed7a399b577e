/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sbx-egress-dns.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * libFuzzer target for the sandbox DNS stub's packet parser and answer
 * builder (plugins/egress-http/sbx-egress-dns.c).  Every input is either
 * dropped, refused with a header-only FORMERR/NOTIMP, or parses into a
 * question whose name obeys the grammar the stub relies on (at most 253
 * characters of printable ASCII without '.' inside labels, labels of 1-63,
 * the lower-case form equal to the name lower-cased) and whose wire form
 * parses again to the same name; every answer is at most 512 bytes, a
 * response (QR set) with the query's id, and echoes the question.
 * Anything else aborts.
 */

int LLVMFuzzerTestOneInput (const uint8_t *data,
                            size_t         size);

static void
fail (const char *what)
{
  fprintf (stderr, "fuzz-dns-packet: %s\n", what);
  abort ();
}

static GHashTable *
names (void)
{
  static GHashTable *table;

  if (table == NULL)
    {
      guint32 a = GUINT32_TO_BE (0x7f530001);

      table = g_hash_table_new (g_str_hash, g_str_equal);
      g_hash_table_insert (table, (gpointer) "pkg.example.test", GUINT_TO_POINTER (a));
      g_hash_table_insert (table, (gpointer) "a", GUINT_TO_POINTER (a));
    }
  return table;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  SbxDnsQuery q, again;
  SbxDnsParse r = sbx_dns_parse_query (data, size, &q);
  guint8 out[512];
  gsize n;

  if (r == SBX_DNS_PARSE_OK)
    {
      gsize len = strlen (q.name);
      guint8 rebuilt[12 + SBX_DNS_MAX_NAME + 4];

      if (len > 253 || strlen (q.lower) != len)
        fail ("name too long");
      for (gsize i = 0; i < len; i++)
        {
          if ((guchar) q.name[i] <= 0x20 || (guchar) q.name[i] >= 0x7f)
            fail ("unprintable byte in a name");
          if (q.lower[i] != g_ascii_tolower (q.name[i]))
            fail ("lower-case form differs");
        }
      if (q.wire_len == 0 || q.wire_len > SBX_DNS_MAX_NAME || q.wire[q.wire_len - 1] != 0)
        fail ("wire form not ended by the root");
      /* the echoed wire form is a valid, uncompressed question again */
      memcpy (rebuilt, data, 12);
      rebuilt[6] = rebuilt[7] = rebuilt[8] = rebuilt[9] = rebuilt[10] = rebuilt[11] = 0;
      rebuilt[4] = 0;
      rebuilt[5] = 1;
      memcpy (rebuilt + 12, q.wire, q.wire_len);
      memset (rebuilt + 12 + q.wire_len, 0, 4);
      if (sbx_dns_parse_query (rebuilt, 12 + q.wire_len + 4, &again) != SBX_DNS_PARSE_OK ||
          strcmp (again.name, q.name) != 0)
        fail ("the wire form does not parse back to the same name");
    }
  n = sbx_dns_answer (data, size, names (), out, sizeof out);
  if (r == SBX_DNS_PARSE_DROP)
    {
      if (n != 0)
        fail ("a dropped packet was answered");
      return 0;
    }
  if (n < 12 || n > 512)
    fail ("answer length");
  if (out[0] != data[0] || out[1] != data[1] || !(out[2] & 0x80))
    fail ("answer header");
  if (r == SBX_DNS_PARSE_OK)
    {
      if (out[5] != 1 || memcmp (out + 12, q.wire, q.wire_len) != 0)
        fail ("question not echoed");
      if (out[7] > 1 || (out[7] == 1 && (q.qtype != SBX_DNS_TYPE_A || !g_hash_table_contains (names (), q.lower))))
        fail ("an answer for a name or type that gets none");
    }
  else if (out[5] != 0 || out[7] != 0)
    fail ("a refused packet got a question or an answer");
  return 0;
}
