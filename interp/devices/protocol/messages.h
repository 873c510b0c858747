// The messages between the controller (controller.h) and the workers'
// program handler (worker/program_server.cpp) of `ss run` and `ss repl` on
// several devices.
#pragma once

#include <cstdint>
#include <string>

#include "diag/source.h"
#include "interp/devices/protocol/wire.h"

namespace ss::devices::protocol {

constexpr uint32_t kInit = 101;   // check the program, join the group
constexpr uint32_t kCall = 102;   // call a worker fn
constexpr uint32_t kFetch = 103;  // rank 0: a store's tensors / state
// A call posted while the one before it may still be running (Note [Async
// dispatch]): run only if that one succeeded, else answered kSkipped.
constexpr uint32_t kCallAfter = 104;
// What a worker holds after the run, for `ss conformance` (every rank's,
// to check that their copies stayed equal: devices.md item 5): every model
// store, u32 count, then each one's u64 id and tensors (Codec::
// write_tensors); then u8 whether the entry fn ran on the workers (a main
// without host effects; workers started with --final-params keep it), and
// if so its final params: i64 steps, u32 count, each name and tensor.
constexpr uint32_t kStores = 105;
// An spmd fn called from the controller (Note [Spmd fns on workers] in
// interp/devices/lower/worker_mesh.h): one message per worker, the fn's
// name, the site and, for each argument, u8 1 and a model's handle (the
// worker cuts its block) or u8 0 and this worker's block. The reply
// (kOk): u32 count and each print entry of the instance, then its result.
constexpr uint32_t kSpmdCall = 106;
// `ss repl`'s session (Note [Repl sessions on devices]): its declarations
// as they now are, a SessionText (session_text.h), which the workers check
// again and run the next calls in; the answer is "" or the errors. A
// worker started without a program file waits for this before any call.
constexpr uint32_t kDeclare = 107;
// After Ctrl-C stopped a call: u32 count, then each store's u8 'm' (a
// model) or 'o' (an optimizer) and u64 id; each worker answers kOk and a
// u64 digest of its whole copy of each (0: unknown), so that the
// controller keeps only the stores whose copies still agree.
constexpr uint32_t kDigest = 108;

// A reply's first byte.
// kData: a batch's rows could not be loaded, no step started.
// kSkipped: a kCallAfter whose call before failed; it did nothing.
constexpr uint8_t kOk = 0, kRuntime = 1, kFailed = 2, kData = 3, kSkipped = 4;

// Whether a worker whose call failed with [status] (a runtime error of
// [kind]) leaves the group (Note [A call that failed alone] in
// program_server.cpp): the workers can then run no more collectives, and
// the controller starts new ones at the next need. Ctrl-C leaves the
// group as it is: every worker is stopped by it, at its next statement.
inline bool leaves_group(uint8_t status, const std::string& kind) {
  return status == kFailed ||
         (status == kRuntime && kind != "KeyboardInterrupt");
}

// "file.ss:LINE:COL" of a call site.
inline std::string where(const diag::SourceMap& sm, diag::Span site) {
  return sm.location(site, "?");
}

inline void write_span(devices::protocol::Writer& w, diag::Span s) {
  w.u32(s.file);
  w.u32(s.begin);
  w.u32(s.end);
}

inline diag::Span read_span(devices::protocol::Reader& r) {
  diag::Span s;
  s.file = r.u32();
  s.begin = r.u32();
  s.end = r.u32();
  return s;
}

}  // namespace ss::devices::protocol
