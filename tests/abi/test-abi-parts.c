/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ABI split into per-kind headers (sbx-plugin-envelope.h, -backend.h,
 * -egress.h, -reporter.h, -listen.h) with sbx-plugin-abi.h as the umbrella:
 * each part, built alone (abi-parts.c), sees the same tables as a plugin
 * that includes the umbrella (TAP).
 */
#include "sbx-plugin-abi.h"

#include <stdio.h>

size_t abi_part_envelope_size (void);
size_t abi_part_backend_size (void);
size_t abi_part_egress_size (void);
size_t abi_part_reporter_size (void);

int
main (void)
{
  struct { const char *name; size_t part; size_t whole; } parts[] = {
    { "envelope", abi_part_envelope_size (),
      sizeof (SbxHostV1) + sizeof (SbxPluginDescriptor) + sizeof (SbxPluginExtension) },
    { "backend", abi_part_backend_size (),
      sizeof (SbxPolicyV1) + sizeof (SbxBackendVTableV1) + sizeof (SbxSpawnRequestV1) },
    { "egress", abi_part_egress_size (),
      sizeof (SbxEgressVTableV1) + sizeof (SbxEgressDenialV1) + sizeof (SbxListenV1) },
    { "reporter", abi_part_reporter_size (), sizeof (SbxReporterVTableV1) },
  };
  int failed = 0;

  printf ("1..%u\n", (unsigned) (sizeof parts / sizeof parts[0]));
  for (unsigned i = 0; i < sizeof parts / sizeof parts[0]; i++)
    {
      int ok = parts[i].part == parts[i].whole && parts[i].part > 0;

      printf ("%s %u - /abi/parts/%s: built alone, its tables as the umbrella's (%zu bytes)\n",
              ok ? "ok" : "not ok", i + 1, parts[i].name, parts[i].part);
      failed |= !ok;
    }
  return failed;
}
