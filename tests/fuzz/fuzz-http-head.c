/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sbx-http-head.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * libFuzzer target for the egress proxy's message-head parser
 * (plugins/egress-http/sbx-http-head.c).  The first byte picks request or
 * response.  Every input is either refused (INVALID with a reason,
 * INCOMPLETE, TOO_LARGE) or gives a head whose fields obey the grammar the
 * proxy relies on (no CR, LF or NUL anywhere, tchar names, no repeated
 * framing fields), whose length ends at CRLF CRLF, and that serializes to
 * text which parses again to the same head.  Anything else aborts.
 */

int LLVMFuzzerTestOneInput (const uint8_t *data,
                            size_t         size);

static void
fail (const char *what)
{
  fprintf (stderr, "fuzz-http-head: %s\n", what);
  abort ();
}

static void
check_text (const char *s)
{
  for (const char *p = s; *p != '\0'; p++)
    if (*p == '\r' || *p == '\n')
      fail ("CR or LF inside a parsed element");
}

static char *
serialize (SbxHttpHead *h,
           gboolean     response)
{
  GString *s = g_string_new (NULL);

  if (response)
    g_string_append_printf (s, "HTTP/1.%u %03u %s\r\n", h->minor_version, h->status, h->reason);
  else
    g_string_append_printf (s, "%s %s HTTP/1.%u\r\n", h->method, h->target, h->minor_version);
  for (guint i = 0; i < h->names->len; i++)
    g_string_append_printf (s, "%s: %s\r\n", (char *) h->names->pdata[i], (char *) h->values->pdata[i]);
  g_string_append (s, "\r\n");
  return g_string_free (s, FALSE);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autoptr(SbxHttpHead) head = NULL;
  g_autoptr(SbxHttpHead) again = NULL;
  g_autofree char *text = NULL;
  const char *why = NULL;
  gboolean response;
  SbxHttpParse r;

  if (size == 0)
    return 0;
  response = (data[0] & 1) != 0;
  r = sbx_http_head_parse ((const char *) data + 1, size - 1, 4096, response, &head, &why);
  if (r == SBX_HTTP_PARSE_INVALID && why == NULL)
    fail ("INVALID without a reason");
  if (r != SBX_HTTP_PARSE_OK)
    {
      if (head != NULL)
        fail ("a head on failure");
      return 0;
    }
  if (head->head_length < 4 || head->head_length > size - 1 || head->head_length > 4096 ||
      memcmp (data + 1 + head->head_length - 4, "\r\n\r\n", 4) != 0)
    fail ("head length does not end at CRLF CRLF");
  if (head->minor_version > 1)
    fail ("version");
  if (response)
    {
      if (head->status < 100 || head->status > 999)
        fail ("status");
      check_text (head->reason);
    }
  else
    {
      if (*head->method == '\0' || *head->target == '\0' || strchr (head->target, ' ') != NULL)
        fail ("request line");
      check_text (head->method);
      check_text (head->target);
    }
  for (guint i = 0; i < head->names->len; i++)
    {
      const char *n = head->names->pdata[i];
      const char *v = head->values->pdata[i];

      if (*n == '\0' || strpbrk (n, " \t:") != NULL)
        fail ("field name");
      check_text (n);
      check_text (v);
    }
  {
    static const char *const single[] = { "host", "content-length", "transfer-encoding", "proxy-authorization" };

    for (gsize i = 0; i < G_N_ELEMENTS (single); i++)
      {
        guint count = 0;

        sbx_http_head_get (head, single[i], &count);
        if (count > 1)
          fail ("repeated framing field accepted");
      }
  }

  /* round trip */
  text = serialize (head, response);
  if (sbx_http_head_parse (text, strlen (text), 1 << 20, response, &again, &why) != SBX_HTTP_PARSE_OK)
    fail ("serialized head does not parse");
  if (again->names->len != head->names->len || again->minor_version != head->minor_version ||
      g_strcmp0 (again->method, head->method) != 0 || g_strcmp0 (again->target, head->target) != 0 ||
      again->status != head->status || g_strcmp0 (again->reason, head->reason) != 0)
    fail ("round trip changed the head");
  for (guint i = 0; i < head->names->len; i++)
    if (strcmp (again->names->pdata[i], head->names->pdata[i]) != 0 ||
        strcmp (again->values->pdata[i], head->values->pdata[i]) != 0)
      fail ("round trip changed a field");
  return 0;
}
