/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ABI's per-kind headers stand alone: compiled once per part with
 * ABI_PART naming the one header this translation unit includes (see
 * tests/meson.build), each part builds with that header alone, pulls in
 * no other kind's header, and reports the size of its own tables for
 * test-abi-parts.c to compare with the umbrella's.
 */
#include <stddef.h>

#if ABI_PART == 1
#include "sbx-plugin-envelope.h"
#define ABI_PART_SIZE (sizeof (SbxHostV1) + sizeof (SbxPluginDescriptor) + sizeof (SbxPluginExtension))
#define ABI_PART_FUNC abi_part_envelope_size
#elif ABI_PART == 2
#include "sbx-plugin-backend.h"
#define ABI_PART_SIZE (sizeof (SbxPolicyV1) + sizeof (SbxBackendVTableV1) + sizeof (SbxSpawnRequestV1))
#define ABI_PART_FUNC abi_part_backend_size
#elif ABI_PART == 3
#include "sbx-plugin-egress.h"
#define ABI_PART_SIZE (sizeof (SbxEgressVTableV1) + sizeof (SbxEgressDenialV1) + sizeof (SbxListenV1))
#define ABI_PART_FUNC abi_part_egress_size
#elif ABI_PART == 4
#include "sbx-plugin-reporter.h"
#define ABI_PART_SIZE (sizeof (SbxReporterVTableV1))
#define ABI_PART_FUNC abi_part_reporter_size
#else
#error "ABI_PART must name a part (1 to 4)"
#endif

/* A reporter or egress author's translation unit holds no policy IR, and
 * the envelope holds no kind at all. */
#if ABI_PART != 2 && defined (SBX_PLUGIN_BACKEND_H)
#error "this part pulls in sbx-plugin-backend.h"
#endif
#if ABI_PART != 3 && defined (SBX_PLUGIN_EGRESS_H)
#error "this part pulls in sbx-plugin-egress.h"
#endif
#if ABI_PART != 4 && defined (SBX_PLUGIN_REPORTER_H)
#error "this part pulls in sbx-plugin-reporter.h"
#endif
#if ABI_PART == 1 && defined (SBX_PLUGIN_LISTEN_H)
#error "the envelope pulls in sbx-plugin-listen.h"
#endif

size_t ABI_PART_FUNC (void);

size_t
ABI_PART_FUNC (void)
{
  return ABI_PART_SIZE;
}
