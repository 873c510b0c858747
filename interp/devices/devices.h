#pragma once
// What the CLI uses of several devices: the one header of interp/devices/
// that the commands include (issue 11 item 1: a call goes eval -> devices ->
// worker -> eval -> collectives without passing through the CLI, and the
// CLI enters the devices layer here).
//   * `ss run` and `ss conformance` on several devices: the controller and
//     its `ss worker` processes (controller/device_run.h), and `ss repl`'s
//     session as a controller with workers of its own
//     (controller/repl_devices.h), checking the session's text as they do
//     (protocol/session_text.h);
//   * `ss worker`, the process the controller starts on each device
//     (worker/program_server.h);
//   * `ss conformance --engine threads`: the ranks as threads of this
//     process (threads/data_parallel.h);
//   * `ss explain`: where each fn runs and what each line sends
//     (plan/explain.h);
//   * one device's context, which keeps the final params `ss conformance`
//     compares across device counts (context.h), and in deterministic mode
//     runs the batch's chunks as a rank does (one_device.h).

#include "interp/check/plan/explain.h"
#include "interp/devices/context.h"
#include "interp/devices/controller/device_run.h"
#include "interp/devices/controller/repl_devices.h"
#include "interp/devices/one_device.h"
#include "interp/devices/protocol/session_text.h"
#include "interp/devices/threads/data_parallel.h"
#include "interp/devices/worker/program_server.h"
