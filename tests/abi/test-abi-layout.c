/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Freezes the plugin ABI: every offset and size of every table
 * in sbx-plugin-abi.h.  Includes nothing but that header and the C library's
 * stdio, so it builds with no dependency at all (and with mingw-w64 for win64).
 *
 * The numbers hold for every 64-bit data model sbx supports: x86_64 and
 * aarch64 (LP64) and win64 (LLP64).  The ABI uses no `long`, so the two models
 * lay it out identically.  A change here is an ABI break: bump
 * SBX_PLUGIN_ABI_VERSION, or grow a table at its end and let struct_size carry it.
 */
#include "sbx-plugin-abi.h"

#include <stdio.h>

#if UINTPTR_MAX == UINT64_MAX
_Static_assert (sizeof (SbxHostV1) == 64, "size SbxHostV1");
_Static_assert (offsetof (SbxHostV1, struct_size) == 0, "SbxHostV1.struct_size");
_Static_assert (offsetof (SbxHostV1, abi_version) == 4, "SbxHostV1.abi_version");
_Static_assert (offsetof (SbxHostV1, features) == 8, "SbxHostV1.features");
_Static_assert (offsetof (SbxHostV1, core_version) == 16, "SbxHostV1.core_version");
_Static_assert (offsetof (SbxHostV1, set_error) == 24, "SbxHostV1.set_error");
_Static_assert (offsetof (SbxHostV1, report) == 32, "SbxHostV1.report");
_Static_assert (offsetof (SbxHostV1, log) == 40, "SbxHostV1.log");
_Static_assert (offsetof (SbxHostV1, alloc) == 48, "SbxHostV1.alloc");
_Static_assert (offsetof (SbxHostV1, release) == 56, "SbxHostV1.release");
_Static_assert (sizeof (SbxFsRuleV1) == 32, "size SbxFsRuleV1");
_Static_assert (offsetof (SbxFsRuleV1, struct_size) == 0, "SbxFsRuleV1.struct_size");
_Static_assert (offsetof (SbxFsRuleV1, flags) == 4, "SbxFsRuleV1.flags");
_Static_assert (offsetof (SbxFsRuleV1, allow) == 8, "SbxFsRuleV1.allow");
_Static_assert (offsetof (SbxFsRuleV1, deny) == 12, "SbxFsRuleV1.deny");
_Static_assert (offsetof (SbxFsRuleV1, origin) == 16, "SbxFsRuleV1.origin");
_Static_assert (offsetof (SbxFsRuleV1, fd) == 20, "SbxFsRuleV1.fd");
_Static_assert (offsetof (SbxFsRuleV1, path) == 24, "SbxFsRuleV1.path");
_Static_assert (sizeof (SbxNetPolicyV1) == 32, "size SbxNetPolicyV1");
_Static_assert (offsetof (SbxNetPolicyV1, struct_size) == 0, "SbxNetPolicyV1.struct_size");
_Static_assert (offsetof (SbxNetPolicyV1, mode) == 4, "SbxNetPolicyV1.mode");
_Static_assert (offsetof (SbxNetPolicyV1, flags) == 8, "SbxNetPolicyV1.flags");
_Static_assert (offsetof (SbxNetPolicyV1, n_tcp_ports) == 12, "SbxNetPolicyV1.n_tcp_ports");
_Static_assert (offsetof (SbxNetPolicyV1, tcp_ports) == 16, "SbxNetPolicyV1.tcp_ports");
_Static_assert (offsetof (SbxNetPolicyV1, proxy_port) == 24, "SbxNetPolicyV1.proxy_port");
_Static_assert (offsetof (SbxNetPolicyV1, reserved0) == 26, "SbxNetPolicyV1.reserved0");
_Static_assert (offsetof (SbxNetPolicyV1, reserved1) == 28, "SbxNetPolicyV1.reserved1");
_Static_assert (sizeof (SbxLimitsV1) == 32, "size SbxLimitsV1");
_Static_assert (offsetof (SbxLimitsV1, struct_size) == 0, "SbxLimitsV1.struct_size");
_Static_assert (offsetof (SbxLimitsV1, flags) == 4, "SbxLimitsV1.flags");
_Static_assert (offsetof (SbxLimitsV1, max_processes) == 8, "SbxLimitsV1.max_processes");
_Static_assert (offsetof (SbxLimitsV1, max_memory_bytes) == 16, "SbxLimitsV1.max_memory_bytes");
_Static_assert (offsetof (SbxLimitsV1, max_open_files) == 24, "SbxLimitsV1.max_open_files");
_Static_assert (sizeof (SbxPolicyV1) == 88, "size SbxPolicyV1");
_Static_assert (offsetof (SbxPolicyV1, struct_size) == 0, "SbxPolicyV1.struct_size");
_Static_assert (offsetof (SbxPolicyV1, flags) == 4, "SbxPolicyV1.flags");
_Static_assert (offsetof (SbxPolicyV1, required_guarantees) == 8, "SbxPolicyV1.required_guarantees");
_Static_assert (offsetof (SbxPolicyV1, fs_rules) == 16, "SbxPolicyV1.fs_rules");
_Static_assert (offsetof (SbxPolicyV1, n_fs_rules) == 24, "SbxPolicyV1.n_fs_rules");
_Static_assert (offsetof (SbxPolicyV1, reserved0) == 28, "SbxPolicyV1.reserved0");
_Static_assert (offsetof (SbxPolicyV1, net) == 32, "SbxPolicyV1.net");
_Static_assert (offsetof (SbxPolicyV1, limits) == 40, "SbxPolicyV1.limits");
_Static_assert (offsetof (SbxPolicyV1, workspace) == 48, "SbxPolicyV1.workspace");
_Static_assert (offsetof (SbxPolicyV1, home) == 56, "SbxPolicyV1.home");
_Static_assert (offsetof (SbxPolicyV1, tmpdir) == 64, "SbxPolicyV1.tmpdir");
_Static_assert (offsetof (SbxPolicyV1, state_dir) == 72, "SbxPolicyV1.state_dir");
_Static_assert (offsetof (SbxPolicyV1, host_sockets) == 80, "SbxPolicyV1.host_sockets");
_Static_assert (SBX_POLICY_V1_HOST_SOCKETS_SIZE == 88, "SBX_POLICY_V1_HOST_SOCKETS_SIZE");
_Static_assert (sizeof (SbxProbeResultV1) == 24, "size SbxProbeResultV1");
_Static_assert (offsetof (SbxProbeResultV1, struct_size) == 0, "SbxProbeResultV1.struct_size");
_Static_assert (offsetof (SbxProbeResultV1, level) == 4, "SbxProbeResultV1.level");
_Static_assert (offsetof (SbxProbeResultV1, guarantees) == 8, "SbxProbeResultV1.guarantees");
_Static_assert (offsetof (SbxProbeResultV1, flags) == 16, "SbxProbeResultV1.flags");
_Static_assert (offsetof (SbxProbeResultV1, reserved0) == 20, "SbxProbeResultV1.reserved0");
_Static_assert (sizeof (SbxCompileResultV1) == 24, "size SbxCompileResultV1");
_Static_assert (offsetof (SbxCompileResultV1, struct_size) == 0, "SbxCompileResultV1.struct_size");
_Static_assert (offsetof (SbxCompileResultV1, level) == 4, "SbxCompileResultV1.level");
_Static_assert (offsetof (SbxCompileResultV1, guarantees) == 8, "SbxCompileResultV1.guarantees");
/* spawn_flags was appended (additive): a result of the first layout is 16
 * bytes and SBX_ABI_HAS (spawn_flags) is false for it. */
_Static_assert (offsetof (SbxCompileResultV1, spawn_flags) == 16, "SbxCompileResultV1.spawn_flags");
_Static_assert (offsetof (SbxCompileResultV1, reserved0) == 20, "SbxCompileResultV1.reserved0");
_Static_assert (SBX_COMPILE_RESULT_V1_SPAWN_FLAGS_SIZE == 20, "SBX_COMPILE_RESULT_V1_SPAWN_FLAGS_SIZE");
_Static_assert (SBX_COMPILE_RESULT_V1_MIN_SIZE == 16, "SBX_COMPILE_RESULT_V1_MIN_SIZE");
_Static_assert (sizeof (SbxSpawnRequestV1) == 112, "size SbxSpawnRequestV1");
_Static_assert (offsetof (SbxSpawnRequestV1, struct_size) == 0, "SbxSpawnRequestV1.struct_size");
_Static_assert (offsetof (SbxSpawnRequestV1, flags) == 4, "SbxSpawnRequestV1.flags");
_Static_assert (offsetof (SbxSpawnRequestV1, cwd) == 8, "SbxSpawnRequestV1.cwd");
_Static_assert (offsetof (SbxSpawnRequestV1, argv) == 16, "SbxSpawnRequestV1.argv");
_Static_assert (offsetof (SbxSpawnRequestV1, envp) == 24, "SbxSpawnRequestV1.envp");
_Static_assert (offsetof (SbxSpawnRequestV1, stdin_fd) == 32, "SbxSpawnRequestV1.stdin_fd");
_Static_assert (offsetof (SbxSpawnRequestV1, stdout_fd) == 36, "SbxSpawnRequestV1.stdout_fd");
_Static_assert (offsetof (SbxSpawnRequestV1, stderr_fd) == 40, "SbxSpawnRequestV1.stderr_fd");
_Static_assert (offsetof (SbxSpawnRequestV1, reserved0) == 44, "SbxSpawnRequestV1.reserved0");
_Static_assert (offsetof (SbxSpawnRequestV1, pty_rows) == 48, "SbxSpawnRequestV1.pty_rows");
_Static_assert (offsetof (SbxSpawnRequestV1, pty_cols) == 52, "SbxSpawnRequestV1.pty_cols");
/* listens .. reserved1 were appended (additive): a request of the PTY
 * layout is 56 bytes and SBX_ABI_HAS (n_listens) is false for it. */
_Static_assert (offsetof (SbxSpawnRequestV1, listens) == 56, "SbxSpawnRequestV1.listens");
_Static_assert (offsetof (SbxSpawnRequestV1, listen_fds) == 64, "SbxSpawnRequestV1.listen_fds");
_Static_assert (offsetof (SbxSpawnRequestV1, n_listens) == 72, "SbxSpawnRequestV1.n_listens");
_Static_assert (offsetof (SbxSpawnRequestV1, reserved1) == 76, "SbxSpawnRequestV1.reserved1");
_Static_assert (SBX_SPAWN_REQUEST_V1_LISTEN_SIZE == 76, "SBX_SPAWN_REQUEST_V1_LISTEN_SIZE");
/* ignored_signals was appended after them (additive): SBX_ABI_HAS
 * (ignored_signals) is false for a request of the listeners' layout. */
_Static_assert (offsetof (SbxSpawnRequestV1, ignored_signals) == 80, "SbxSpawnRequestV1.ignored_signals");
_Static_assert (SBX_SPAWN_REQUEST_V1_SIGNALS_SIZE == 88, "SBX_SPAWN_REQUEST_V1_SIGNALS_SIZE");
/* stage_roots .. reserved2 were appended after it (additive, SBX_SPAWN_STAGED). */
_Static_assert (offsetof (SbxSpawnRequestV1, stage_roots) == 88, "SbxSpawnRequestV1.stage_roots");
_Static_assert (offsetof (SbxSpawnRequestV1, n_stage_roots) == 96, "SbxSpawnRequestV1.n_stage_roots");
_Static_assert (offsetof (SbxSpawnRequestV1, reserved2) == 100, "SbxSpawnRequestV1.reserved2");
_Static_assert (SBX_SPAWN_REQUEST_V1_STAGE_SIZE == 100, "SBX_SPAWN_REQUEST_V1_STAGE_SIZE");
_Static_assert (SBX_SPAWN_STAGED == 8u, "SBX_SPAWN_STAGED");
_Static_assert (sizeof (SbxStageRootV1) == 32, "size SbxStageRootV1");
_Static_assert (offsetof (SbxStageRootV1, struct_size) == 0, "SbxStageRootV1.struct_size");
_Static_assert (offsetof (SbxStageRootV1, flags) == 4, "SbxStageRootV1.flags");
_Static_assert (offsetof (SbxStageRootV1, path) == 8, "SbxStageRootV1.path");
_Static_assert (offsetof (SbxStageRootV1, upper) == 16, "SbxStageRootV1.upper");
_Static_assert (offsetof (SbxStageRootV1, work) == 24, "SbxStageRootV1.work");
_Static_assert (SBX_STAGE_ROOT_V1_MIN_SIZE == 32, "SBX_STAGE_ROOT_V1_MIN_SIZE");
/* denial_sink was appended after them (additive, backend denials). */
_Static_assert (offsetof (SbxSpawnRequestV1, denial_sink) == 104, "SbxSpawnRequestV1.denial_sink");
_Static_assert (SBX_SPAWN_REQUEST_V1_DENIALS_SIZE == 112, "SBX_SPAWN_REQUEST_V1_DENIALS_SIZE");
_Static_assert (sizeof (SbxListenV1) == 48, "size SbxListenV1");
_Static_assert (offsetof (SbxListenV1, struct_size) == 0, "SbxListenV1.struct_size");
_Static_assert (offsetof (SbxListenV1, kind) == 4, "SbxListenV1.kind");
_Static_assert (offsetof (SbxListenV1, family) == 8, "SbxListenV1.family");
_Static_assert (offsetof (SbxListenV1, flags) == 12, "SbxListenV1.flags");
_Static_assert (offsetof (SbxListenV1, address) == 16, "SbxListenV1.address");
_Static_assert (offsetof (SbxListenV1, port) == 32, "SbxListenV1.port");
_Static_assert (offsetof (SbxListenV1, reserved0) == 34, "SbxListenV1.reserved0");
_Static_assert (offsetof (SbxListenV1, reserved1) == 36, "SbxListenV1.reserved1");
_Static_assert (offsetof (SbxListenV1, target) == 40, "SbxListenV1.target");
_Static_assert (SBX_LISTEN_V1_MIN_SIZE == 48, "SBX_LISTEN_V1_MIN_SIZE");
_Static_assert (sizeof (SbxSpawnResultV1) == 40, "size SbxSpawnResultV1");
_Static_assert (offsetof (SbxSpawnResultV1, struct_size) == 0, "SbxSpawnResultV1.struct_size");
_Static_assert (offsetof (SbxSpawnResultV1, containment) == 4, "SbxSpawnResultV1.containment");
_Static_assert (offsetof (SbxSpawnResultV1, pid) == 8, "SbxSpawnResultV1.pid");
_Static_assert (offsetof (SbxSpawnResultV1, pidfd) == 16, "SbxSpawnResultV1.pidfd");
_Static_assert (offsetof (SbxSpawnResultV1, proxy_listen_fd) == 20, "SbxSpawnResultV1.proxy_listen_fd");
_Static_assert (offsetof (SbxSpawnResultV1, child) == 24, "SbxSpawnResultV1.child");
_Static_assert (offsetof (SbxSpawnResultV1, pty_master_fd) == 32, "SbxSpawnResultV1.pty_master_fd");
/* honoured_flags took the place of reserved1, which every host set to 0. */
_Static_assert (offsetof (SbxSpawnResultV1, honoured_flags) == 36, "SbxSpawnResultV1.honoured_flags");
_Static_assert (SBX_SPAWN_RESULT_V1_FLAGS_SIZE == 40, "SBX_SPAWN_RESULT_V1_FLAGS_SIZE");
_Static_assert (sizeof (SbxExitV1) == 16, "size SbxExitV1");
_Static_assert (offsetof (SbxExitV1, struct_size) == 0, "SbxExitV1.struct_size");
_Static_assert (offsetof (SbxExitV1, kind) == 4, "SbxExitV1.kind");
_Static_assert (offsetof (SbxExitV1, code) == 8, "SbxExitV1.code");
_Static_assert (offsetof (SbxExitV1, signo) == 12, "SbxExitV1.signo");
_Static_assert (sizeof (SbxBackendVTableV1) == 72, "size SbxBackendVTableV1");
_Static_assert (offsetof (SbxBackendVTableV1, struct_size) == 0, "SbxBackendVTableV1.struct_size");
_Static_assert (offsetof (SbxBackendVTableV1, reserved0) == 4, "SbxBackendVTableV1.reserved0");
_Static_assert (offsetof (SbxBackendVTableV1, probe) == 8, "SbxBackendVTableV1.probe");
_Static_assert (offsetof (SbxBackendVTableV1, compile) == 16, "SbxBackendVTableV1.compile");
_Static_assert (offsetof (SbxBackendVTableV1, spawn) == 24, "SbxBackendVTableV1.spawn");
_Static_assert (offsetof (SbxBackendVTableV1, signal) == 32, "SbxBackendVTableV1.signal");
_Static_assert (offsetof (SbxBackendVTableV1, finish) == 40, "SbxBackendVTableV1.finish");
_Static_assert (offsetof (SbxBackendVTableV1, release) == 48, "SbxBackendVTableV1.release");
_Static_assert (offsetof (SbxBackendVTableV1, supports_grant_class) == 56, "SbxBackendVTableV1.supports_grant_class");
/* explain was appended (additive): a table of the first release is 64 bytes
 * and SBX_ABI_HAS (explain) is false for it. */
_Static_assert (offsetof (SbxBackendVTableV1, explain) == 64, "SbxBackendVTableV1.explain");
_Static_assert (sizeof (SbxEgressInfoV1) == 24, "size SbxEgressInfoV1");
_Static_assert (offsetof (SbxEgressInfoV1, struct_size) == 0, "SbxEgressInfoV1.struct_size");
_Static_assert (offsetof (SbxEgressInfoV1, target_guarantee) == 4, "SbxEgressInfoV1.target_guarantee");
_Static_assert (offsetof (SbxEgressInfoV1, address_guarantee) == 8, "SbxEgressInfoV1.address_guarantee");
_Static_assert (offsetof (SbxEgressInfoV1, reserved0) == 12, "SbxEgressInfoV1.reserved0");
_Static_assert (offsetof (SbxEgressInfoV1, fingerprint) == 16, "SbxEgressInfoV1.fingerprint");
_Static_assert (sizeof (SbxEgressVTableV1) == 64, "size SbxEgressVTableV1");
_Static_assert (offsetof (SbxEgressVTableV1, struct_size) == 0, "SbxEgressVTableV1.struct_size");
_Static_assert (offsetof (SbxEgressVTableV1, reserved0) == 4, "SbxEgressVTableV1.reserved0");
_Static_assert (offsetof (SbxEgressVTableV1, start) == 8, "SbxEgressVTableV1.start");
_Static_assert (offsetof (SbxEgressVTableV1, authorize) == 16, "SbxEgressVTableV1.authorize");
_Static_assert (offsetof (SbxEgressVTableV1, serve) == 24, "SbxEgressVTableV1.serve");
_Static_assert (offsetof (SbxEgressVTableV1, revoke) == 32, "SbxEgressVTableV1.revoke");
_Static_assert (offsetof (SbxEgressVTableV1, stop) == 40, "SbxEgressVTableV1.stop");
/* serve_listeners was appended (optional): SBX_EGRESS_VTABLE_V1_MIN_SIZE stays 48. */
_Static_assert (offsetof (SbxEgressVTableV1, serve_listeners) == 48, "SbxEgressVTableV1.serve_listeners");
_Static_assert (SBX_EGRESS_VTABLE_V1_MIN_SIZE == 48, "SBX_EGRESS_VTABLE_V1_MIN_SIZE");

/* Egress denials: watch_denials appended to the egress vtable
 * (optional), and the denial and sink tables it uses. */
_Static_assert (offsetof (SbxEgressVTableV1, watch_denials) == 56, "SbxEgressVTableV1.watch_denials");
_Static_assert (sizeof (SbxEgressDenialV1) == 40, "size SbxEgressDenialV1");
_Static_assert (offsetof (SbxEgressDenialV1, struct_size) == 0, "SbxEgressDenialV1.struct_size");
_Static_assert (offsetof (SbxEgressDenialV1, operation) == 4, "SbxEgressDenialV1.operation");
_Static_assert (offsetof (SbxEgressDenialV1, flags) == 8, "SbxEgressDenialV1.flags");
_Static_assert (offsetof (SbxEgressDenialV1, reserved0) == 12, "SbxEgressDenialV1.reserved0");
_Static_assert (offsetof (SbxEgressDenialV1, target) == 16, "SbxEgressDenialV1.target");
_Static_assert (offsetof (SbxEgressDenialV1, mechanism) == 24, "SbxEgressDenialV1.mechanism");
_Static_assert (offsetof (SbxEgressDenialV1, reason) == 32, "SbxEgressDenialV1.reason");
_Static_assert (SBX_EGRESS_DENIAL_V1_MIN_SIZE == 40, "SbxEgressDenialV1 minimum size");
_Static_assert (sizeof (SbxEgressDenialSinkV1) == 32, "size SbxEgressDenialSinkV1");
_Static_assert (offsetof (SbxEgressDenialSinkV1, struct_size) == 0, "SbxEgressDenialSinkV1.struct_size");
_Static_assert (offsetof (SbxEgressDenialSinkV1, reserved0) == 4, "SbxEgressDenialSinkV1.reserved0");
_Static_assert (offsetof (SbxEgressDenialSinkV1, denied) == 8, "SbxEgressDenialSinkV1.denied");
_Static_assert (offsetof (SbxEgressDenialSinkV1, data) == 16, "SbxEgressDenialSinkV1.data");
_Static_assert (SBX_EGRESS_DENIAL_SINK_V1_MIN_SIZE == 24, "SbxEgressDenialSinkV1 minimum size");
_Static_assert (offsetof (SbxEgressDenialSinkV1, ask) == 24, "SbxEgressDenialSinkV1.ask");
_Static_assert (SBX_ABI_DECISION_DENY == 0u && SBX_ABI_DECISION_ONCE == 1u && SBX_ABI_DECISION_FOR_RUN == 2u,
                "ask decisions");
_Static_assert (SBX_ABI_DENIAL_CONNECT == 4u && SBX_ABI_DENIAL_RESOLVE == 5u, "denial operations");
_Static_assert (SBX_ABI_DENIAL_APPROVABLE == 1u, "denial flags");

/* Backend denials: the denial and sink tables a spawn request points at. */
_Static_assert (sizeof (SbxBackendDenialV1) == 48, "size SbxBackendDenialV1");
_Static_assert (offsetof (SbxBackendDenialV1, struct_size) == 0, "SbxBackendDenialV1.struct_size");
_Static_assert (offsetof (SbxBackendDenialV1, operation) == 4, "SbxBackendDenialV1.operation");
_Static_assert (offsetof (SbxBackendDenialV1, pid) == 8, "SbxBackendDenialV1.pid");
_Static_assert (offsetof (SbxBackendDenialV1, target) == 16, "SbxBackendDenialV1.target");
_Static_assert (offsetof (SbxBackendDenialV1, mechanism) == 24, "SbxBackendDenialV1.mechanism");
_Static_assert (offsetof (SbxBackendDenialV1, process) == 32, "SbxBackendDenialV1.process");
_Static_assert (offsetof (SbxBackendDenialV1, reason) == 40, "SbxBackendDenialV1.reason");
_Static_assert (SBX_BACKEND_DENIAL_V1_MIN_SIZE == 48, "SbxBackendDenialV1 minimum size");
_Static_assert (sizeof (SbxBackendDenialSinkV1) == 32, "size SbxBackendDenialSinkV1");
_Static_assert (offsetof (SbxBackendDenialSinkV1, reserved0) == 4, "SbxBackendDenialSinkV1.reserved0");
_Static_assert (offsetof (SbxBackendDenialSinkV1, denied) == 8, "SbxBackendDenialSinkV1.denied");
_Static_assert (offsetof (SbxBackendDenialSinkV1, data) == 16, "SbxBackendDenialSinkV1.data");
_Static_assert (SBX_BACKEND_DENIAL_SINK_V1_MIN_SIZE == 24, "SbxBackendDenialSinkV1 minimum size");
_Static_assert (offsetof (SbxBackendDenialSinkV1, ask) == 24, "SbxBackendDenialSinkV1.ask");
_Static_assert (SBX_BACKEND_DENIAL_SINK_V1_ASK_SIZE == 32, "SbxBackendDenialSinkV1 ask size");
_Static_assert (SBX_ABI_DENIAL_UNIX_CONNECT == 6u, "backend denial operations");
_Static_assert (sizeof (SbxReporterVTableV1) == 32, "size SbxReporterVTableV1");
_Static_assert (offsetof (SbxReporterVTableV1, struct_size) == 0, "SbxReporterVTableV1.struct_size");
_Static_assert (offsetof (SbxReporterVTableV1, reserved0) == 4, "SbxReporterVTableV1.reserved0");
_Static_assert (offsetof (SbxReporterVTableV1, open) == 8, "SbxReporterVTableV1.open");
_Static_assert (offsetof (SbxReporterVTableV1, emit) == 16, "SbxReporterVTableV1.emit");
_Static_assert (offsetof (SbxReporterVTableV1, close) == 24, "SbxReporterVTableV1.close");
_Static_assert (sizeof (SbxPluginExtension) == 32, "size SbxPluginExtension");
_Static_assert (offsetof (SbxPluginExtension, struct_size) == 0, "SbxPluginExtension.struct_size");
_Static_assert (offsetof (SbxPluginExtension, kind) == 4, "SbxPluginExtension.kind");
_Static_assert (offsetof (SbxPluginExtension, name) == 8, "SbxPluginExtension.name");
_Static_assert (offsetof (SbxPluginExtension, priority) == 16, "SbxPluginExtension.priority");
_Static_assert (offsetof (SbxPluginExtension, reserved0) == 20, "SbxPluginExtension.reserved0");
_Static_assert (offsetof (SbxPluginExtension, vtable) == 24, "SbxPluginExtension.vtable");
_Static_assert (sizeof (SbxPluginDescriptor) == 64, "size SbxPluginDescriptor");
_Static_assert (offsetof (SbxPluginDescriptor, struct_size) == 0, "SbxPluginDescriptor.struct_size");
_Static_assert (offsetof (SbxPluginDescriptor, abi_version) == 4, "SbxPluginDescriptor.abi_version");
_Static_assert (offsetof (SbxPluginDescriptor, required_host_features) == 8, "SbxPluginDescriptor.required_host_features");
_Static_assert (offsetof (SbxPluginDescriptor, name) == 16, "SbxPluginDescriptor.name");
_Static_assert (offsetof (SbxPluginDescriptor, version) == 24, "SbxPluginDescriptor.version");
_Static_assert (offsetof (SbxPluginDescriptor, license) == 32, "SbxPluginDescriptor.license");
_Static_assert (offsetof (SbxPluginDescriptor, init) == 40, "SbxPluginDescriptor.init");
_Static_assert (offsetof (SbxPluginDescriptor, fini) == 48, "SbxPluginDescriptor.fini");
_Static_assert (offsetof (SbxPluginDescriptor, extensions) == 56, "SbxPluginDescriptor.extensions");
_Static_assert (SBX_PLUGIN_DESCRIPTOR_MIN_SIZE == 64, "descriptor minimum size");
/* The minimum sizes are the first published layouts: they never change. */
_Static_assert (SBX_HOST_V1_MIN_SIZE == 64, "SbxHostV1 minimum size");
_Static_assert (SBX_FS_RULE_V1_MIN_SIZE == 32, "SbxFsRuleV1 minimum size");
_Static_assert (SBX_NET_POLICY_V1_MIN_SIZE == 32, "SbxNetPolicyV1 minimum size");
_Static_assert (SBX_LIMITS_V1_MIN_SIZE == 32, "SbxLimitsV1 minimum size");
_Static_assert (SBX_POLICY_V1_MIN_SIZE == 80, "SbxPolicyV1 minimum size");
_Static_assert (SBX_PROBE_RESULT_V1_MIN_SIZE == 24, "SbxProbeResultV1 minimum size");
_Static_assert (SBX_COMPILE_RESULT_V1_MIN_SIZE == 16, "SbxCompileResultV1 minimum size");
_Static_assert (SBX_SPAWN_REQUEST_V1_MIN_SIZE == 48, "SbxSpawnRequestV1 minimum size");
_Static_assert (SBX_SPAWN_RESULT_V1_MIN_SIZE == 32, "SbxSpawnResultV1 minimum size");
_Static_assert (SBX_SPAWN_RESULT_V1_PTY_SIZE == 36, "SbxSpawnResultV1 size with the sandbox terminal");
_Static_assert (SBX_SPAWN_REQUEST_V1_PTY_SIZE == 56, "SbxSpawnRequestV1 size with the sandbox terminal");
_Static_assert (SBX_EXIT_V1_MIN_SIZE == 16, "SbxExitV1 minimum size");
_Static_assert (SBX_EGRESS_INFO_V1_MIN_SIZE == 24, "SbxEgressInfoV1 minimum size");
_Static_assert (SBX_PLUGIN_EXTENSION_MIN_SIZE == 32, "SbxPluginExtension minimum size");
_Static_assert (SBX_BACKEND_VTABLE_V1_MIN_SIZE == 56, "backend vtable: mandatory slots");
_Static_assert (SBX_EGRESS_VTABLE_V1_MIN_SIZE == 48, "egress vtable: mandatory slots");
_Static_assert (SBX_REPORTER_VTABLE_V1_MIN_SIZE == 32, "reporter vtable: mandatory slots");
#else
#error "the sbx plugin ABI is only defined for 64-bit targets"
#endif

_Static_assert (SBX_PLUGIN_ABI_VERSION == 1u, "ABI version");
_Static_assert (SBX_HOST_FEATURE_EGRESS_V1 == 4u, "egress host feature");
_Static_assert (SBX_HOST_FEATURE_EGRESS_LISTENERS == 8u, "egress listeners host feature");
_Static_assert (SBX_HOST_FEATURES_KNOWN == 15u, "known host features");
_Static_assert (SBX_ABI_GUARANTEE_TARGET_NETWORK == 128u, "guarantee bit order");
_Static_assert (SBX_FS_ALL == (SBX_FS_READ | SBX_FS_EXEC | SBX_FS_WRITE), "fs axes");
/* policy flags are ABI values: a backend built against an older header must
 * see the same bits */
_Static_assert (SBX_POLICY_UNCONFINED == 1u, "SBX_POLICY_UNCONFINED");
_Static_assert (SBX_POLICY_UNIX_SOCKETS == 2u, "SBX_POLICY_UNIX_SOCKETS");
_Static_assert (SBX_POLICY_DENIED_NOT_FOUND == 4u, "SBX_POLICY_DENIED_NOT_FOUND");
_Static_assert (SBX_ABI_DENIAL_READ == 0u && SBX_ABI_DENIAL_WRITE == 1u && SBX_ABI_DENIAL_EXEC == 2u
                && SBX_ABI_DENIAL_LIST == 3u, "SBX_ABI_DENIAL_ filesystem operations");
/* listener kinds and flags likewise: a kind is never renumbered, only added */
_Static_assert (SBX_LISTEN_DNS_UDP == 1u, "SBX_LISTEN_DNS_UDP");
_Static_assert (SBX_LISTEN_FORWARD == 2u, "SBX_LISTEN_FORWARD");
_Static_assert (SBX_LISTEN_DNS_TCP == 3u, "SBX_LISTEN_DNS_TCP");
_Static_assert (SBX_LISTEN_F_ADD_ADDRESS == 1u, "SBX_LISTEN_F_ADD_ADDRESS");
_Static_assert (SBX_LISTEN_IPV4 == 4u && SBX_LISTEN_IPV6 == 6u, "SBX_LISTEN_IPV4/IPV6");

/* Every slot has a function typedef, and each typedef's signature is frozen:
 * the slot's type is exactly a pointer to its typedef, and the typedef is
 * exactly the signature written out. */
#define SLOT_IS(T, field, F) _Static_assert (_Generic (((T *) 0)->field, F *: 1, default: 0), #T "." #field)
#define SIG_IS(F, ...) _Static_assert (_Generic ((F *) 0, __VA_ARGS__: 1, default: 0), #F " signature")
SLOT_IS (SbxHostV1, set_error, SbxHostSetErrorFunc);
SLOT_IS (SbxHostV1, report, SbxHostReportFunc);
SLOT_IS (SbxHostV1, log, SbxHostLogFunc);
SLOT_IS (SbxHostV1, alloc, SbxHostAllocFunc);
SLOT_IS (SbxHostV1, release, SbxHostReleaseFunc);
SLOT_IS (SbxBackendVTableV1, probe, SbxBackendProbeFunc);
SLOT_IS (SbxBackendVTableV1, compile, SbxBackendCompileFunc);
SLOT_IS (SbxBackendVTableV1, spawn, SbxBackendSpawnFunc);
SLOT_IS (SbxBackendVTableV1, signal, SbxBackendSignalFunc);
SLOT_IS (SbxBackendVTableV1, finish, SbxBackendFinishFunc);
SLOT_IS (SbxBackendVTableV1, release, SbxBackendReleaseFunc);
SLOT_IS (SbxBackendVTableV1, supports_grant_class, SbxBackendSupportsGrantClassFunc);
SLOT_IS (SbxBackendVTableV1, explain, SbxBackendExplainFunc);
SLOT_IS (SbxEgressVTableV1, start, SbxEgressStartFunc);
SLOT_IS (SbxEgressVTableV1, authorize, SbxEgressAuthorizeFunc);
SLOT_IS (SbxEgressVTableV1, serve, SbxEgressServeFunc);
SLOT_IS (SbxEgressVTableV1, revoke, SbxEgressRevokeFunc);
SLOT_IS (SbxEgressVTableV1, stop, SbxEgressStopFunc);
SLOT_IS (SbxEgressVTableV1, watch_denials, SbxEgressWatchDenialsFunc);
SLOT_IS (SbxEgressDenialSinkV1, denied, SbxEgressDeniedFunc);
SLOT_IS (SbxEgressDenialSinkV1, ask, SbxEgressAskFunc);
SLOT_IS (SbxBackendDenialSinkV1, denied, SbxBackendDeniedFunc);
SLOT_IS (SbxBackendDenialSinkV1, ask, SbxBackendAskFunc);
SLOT_IS (SbxReporterVTableV1, open, SbxReporterOpenFunc);
SLOT_IS (SbxReporterVTableV1, emit, SbxReporterEmitFunc);
SLOT_IS (SbxReporterVTableV1, close, SbxReporterCloseFunc);
SLOT_IS (SbxPluginDescriptor, init, SbxPluginInitFunc);
SLOT_IS (SbxPluginDescriptor, fini, SbxPluginFiniFunc);
SIG_IS (SbxHostSetErrorFunc, void (*) (SbxHostCall *, int32_t, const char *));
SIG_IS (SbxHostReportFunc, void (*) (SbxHostCall *, const char *, uint32_t, const char *));
SIG_IS (SbxHostLogFunc, void (*) (uint32_t, const char *, const char *));
SIG_IS (SbxHostAllocFunc, void *(*) (size_t));
SIG_IS (SbxHostReleaseFunc, void (*) (void *));
SIG_IS (SbxBackendProbeFunc, int32_t (*) (void *, SbxHostCall *, SbxProbeResultV1 *));
SIG_IS (SbxBackendCompileFunc, int32_t (*) (void *, SbxHostCall *, const SbxPolicyV1 *, void **,
                                            SbxCompileResultV1 *));
SIG_IS (SbxBackendSpawnFunc, int32_t (*) (void *, SbxHostCall *, void *, const SbxSpawnRequestV1 *,
                                          SbxSpawnResultV1 *));
SIG_IS (SbxBackendSignalFunc, int32_t (*) (void *, void *, int32_t));
SIG_IS (SbxBackendFinishFunc, int32_t (*) (void *, SbxHostCall *, void *, int32_t, SbxExitV1 *));
SIG_IS (SbxBackendReleaseFunc, void (*) (void *, void *));
SIG_IS (SbxBackendSupportsGrantClassFunc, uint32_t (*) (void *, const char *));
SIG_IS (SbxBackendExplainFunc, int32_t (*) (void *, SbxHostCall *, const SbxPolicyV1 *, char **));
SIG_IS (SbxEgressStartFunc, int32_t (*) (void *, SbxHostCall *, const char *, void **, SbxEgressInfoV1 *));
SIG_IS (SbxEgressAuthorizeFunc, int32_t (*) (void *, SbxHostCall *, void *, const char *, const char *const *,
                                             char **));
SIG_IS (SbxEgressServeFunc, int32_t (*) (void *, SbxHostCall *, void *, const char *, int32_t));
SIG_IS (SbxEgressRevokeFunc, int32_t (*) (void *, void *, const char *, char **));
SIG_IS (SbxEgressStopFunc, void (*) (void *, void *));
SIG_IS (SbxEgressWatchDenialsFunc, int32_t (*) (void *, void *, const char *, const SbxEgressDenialSinkV1 *));
SIG_IS (SbxEgressDeniedFunc, void (*) (void *, const SbxEgressDenialV1 *));
SIG_IS (SbxEgressAnswerFunc, void (*) (void *, uint32_t));
SIG_IS (SbxEgressAskFunc, void (*) (void *, const SbxEgressDenialV1 *, SbxEgressAnswerFunc *, void *));
SIG_IS (SbxBackendAnswerFunc, void (*) (void *, uint32_t));
SIG_IS (SbxBackendAskFunc, void (*) (void *, const SbxBackendDenialV1 *, SbxBackendAnswerFunc *, void *));
SIG_IS (SbxBackendDeniedFunc, void (*) (void *, const SbxBackendDenialV1 *));
SIG_IS (SbxReporterOpenFunc, int32_t (*) (void *, SbxHostCall *, const char *, void **));
SIG_IS (SbxReporterEmitFunc, int32_t (*) (void *, SbxHostCall *, void *, const char *, size_t));
SIG_IS (SbxReporterCloseFunc, void (*) (void *, void *));
SIG_IS (SbxPluginInitFunc, int32_t (*) (const SbxHostV1 *, void **));
SIG_IS (SbxPluginFiniFunc, void (*) (void *));
SIG_IS (SbxPluginEntryFunc, const SbxPluginDescriptor *(*) (void));


/* A table grown at its end: SBX_ABI_HAS must see old sizes as lacking the field. */
static int
check_abi_has (void)
{
  SbxBackendVTableV1 old_table = { 0 };

  old_table.struct_size = (uint32_t) offsetof (SbxBackendVTableV1, supports_grant_class);
  if (SBX_ABI_HAS (&old_table, SbxBackendVTableV1, supports_grant_class))
    return 0;
  old_table.struct_size = (uint32_t) sizeof (SbxBackendVTableV1);
  if (!SBX_ABI_HAS (&old_table, SbxBackendVTableV1, supports_grant_class))
    return 0;
  /* A first-release table (64 bytes, before explain was appended). */
  old_table.struct_size = 64;
  if (!SBX_ABI_HAS (&old_table, SbxBackendVTableV1, supports_grant_class)
      || SBX_ABI_HAS (&old_table, SbxBackendVTableV1, explain))
    return 0;
  old_table.struct_size = (uint32_t) sizeof (SbxBackendVTableV1);
  if (!SBX_ABI_HAS (&old_table, SbxBackendVTableV1, explain))
    return 0;
  return 1;
}

int
main (void)
{
  /* TAP, so meson counts each case. */
  int ok = check_abi_has ();

  printf ("1..2\n");
  printf ("ok 1 /abi/layout/static-asserts-compiled\n");
  printf ("%s 2 /abi/layout/abi-has-respects-struct-size\n", ok ? "ok" : "not ok");
  return ok ? 0 : 1;
}
