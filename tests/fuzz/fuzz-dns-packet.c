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
 *
 * The same input is also a TCP byte stream (sbx_dns_stream_next): fed at
 * once and fed one byte at a time it gives the same answers and ends the
 * same way; every answer is framed with its own length, is the answer
 * sbx_dns_answer gives that query alone, and the buffer never holds more
 * than it can.  Anything else aborts.
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

/* Runs @data as a TCP stream fed @chunk bytes at a time; the framed
 * answers go to @answers.  TRUE when the stream ended the connection. */
static gboolean
run_stream (const uint8_t *data,
            size_t         size,
            size_t         chunk,
            GByteArray    *answers)
{
  static SbxDnsStream s;
  size_t at = 0;

  memset (&s, 0, sizeof s);
  for (;;)
    {
      size_t room, n;

      switch (sbx_dns_stream_next (&s, names ()))
        {
        case SBX_DNS_STREAM_CLOSE:
          return TRUE;
        case SBX_DNS_STREAM_ANSWER:
          {
            gsize len = (gsize) ((s.out[0] << 8) | s.out[1]);

            if (s.out_len != len + 2 || len < 12 || len > 512 || !(s.out[4] & 0x80))
              fail ("stream answer framing");
            g_byte_array_append (answers, s.out, (guint) s.out_len);
            s.out_len = 0;
            continue;
          }
        case SBX_DNS_STREAM_MORE:
        default:
          break;
        }
      if (s.in_len > sizeof s.in)
        fail ("stream buffer overrun");
      if (at == size)
        return FALSE;
      room = sizeof s.in - s.in_len;
      n = size - at;
      if (room == 0)
        fail ("a full buffer without a whole query");
      n = MIN (n, MIN (room, chunk));
      memcpy (s.in + s.in_len, data + at, n);
      s.in_len += n;
      at += n;
    }
}

/* The stream's answers, one query at a time through sbx_dns_answer. */
static gboolean
split_stream (const uint8_t *data,
              size_t         size,
              GByteArray    *answers)
{
  size_t at = 0;

  while (size - at >= 2)
    {
      size_t len = (size_t) ((data[at] << 8) | data[at + 1]);
      guint8 out[2 + 512];
      gsize n;

      if (len == 0 || len > SBX_DNS_MAX_PACKET)
        return TRUE;
      if (size - at - 2 < len)
        return FALSE;
      n = sbx_dns_answer (data + at + 2, len, names (), out + 2, sizeof out - 2);
      if (n > 0)
        {
          out[0] = (guint8) (n >> 8);
          out[1] = (guint8) n;
          g_byte_array_append (answers, out, (guint) n + 2);
        }
      at += 2 + len;
    }
  return FALSE;
}

static void
check_stream (const uint8_t *data,
              size_t         size)
{
  GByteArray *whole = g_byte_array_new ();
  GByteArray *bytes = g_byte_array_new ();
  GByteArray *split = g_byte_array_new ();
  gboolean closed_whole = run_stream (data, size, SIZE_MAX, whole);
  gboolean closed_bytes = run_stream (data, size, 1, bytes);
  gboolean closed_split = split_stream (data, size, split);

  if (closed_whole != closed_bytes || closed_whole != closed_split)
    fail ("the stream ends differently by how it was fed");
  if (whole->len != bytes->len || whole->len != split->len ||
      (whole->len > 0 && (memcmp (whole->data, bytes->data, whole->len) != 0 ||
                          memcmp (whole->data, split->data, whole->len) != 0)))
    fail ("the stream's answers differ by how it was fed");
  g_byte_array_unref (whole);
  g_byte_array_unref (bytes);
  g_byte_array_unref (split);
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
  check_stream (data, size);
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
  /* What an approval while running makes of that answer: its own length
   * bounds, the question kept, at most the one record. */
  {
    guint8 approved[512];
    gsize m = sbx_dns_approved_answer (out, n, approved, sizeof approved);

    if (m < 12 || m > 512 || approved[0] != out[0] || approved[1] != out[1])
      fail ("approved answer header");
    if (approved[7] > 1 || (approved[7] == 1 && (r != SBX_DNS_PARSE_OK || q.qtype != SBX_DNS_TYPE_A)))
      fail ("an approved answer for a packet or type that gets none");
  }
  return 0;
}
