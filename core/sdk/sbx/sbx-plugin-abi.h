/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sbx-plugin-abi.h — the plain-C ABI between libsbx-1 (the "host") and its
 * plugins (backends, egress routes, reporters): every header of it.
 *
 * One header per part, each standing alone (it includes what it needs):
 *  - sbx-plugin-envelope.h: what every plugin shares: the rules (loading,
 *    lifecycle and threads, ownership), versions and host features, status
 *    codes, the shared vocabularies, the host table, the descriptor and
 *    SBX_PLUGIN_DEFINE;
 *  - sbx-plugin-backend.h: the policy IR, the backend vtable, the spawn
 *    contract;
 *  - sbx-plugin-egress.h: the egress vtable and its denials;
 *  - sbx-plugin-reporter.h: the reporter vtable;
 *  - sbx-plugin-listen.h: the listener record backends and egress share.
 * A plugin may include only the parts it implements; this header stays so
 * that every plugin written against it builds unchanged.  Together they
 * include only <stddef.h> and <stdint.h>.  The layout of every struct is
 * frozen by tests/abi/test-abi-layout.c.
 */
#ifndef SBX_PLUGIN_ABI_H
#define SBX_PLUGIN_ABI_H

#include "sbx-plugin-envelope.h"
#include "sbx-plugin-backend.h"
#include "sbx-plugin-egress.h"
#include "sbx-plugin-reporter.h"

#endif /* SBX_PLUGIN_ABI_H */
