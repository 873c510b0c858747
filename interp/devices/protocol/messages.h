// The messages between the controller (controller.h) and the workers'
// program handler (cmd_run_devices.cpp) of `ss run` on several devices.
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

// A reply's first byte.
// kData: a batch's rows could not be loaded, no step started.
// kSkipped: a kCallAfter whose call before failed; it did nothing.
constexpr uint8_t kOk = 0, kRuntime = 1, kFailed = 2, kData = 3, kSkipped = 4;

// "file.ss:LINE:COL" of a call site.
inline std::string where(const diag::SourceMap& sm, diag::Span site) {
  return sm.location(site, "?");
}

inline void write_span(eval::wire::Writer& w, diag::Span s) {
  w.u32(s.file);
  w.u32(s.begin);
  w.u32(s.end);
}

inline diag::Span read_span(eval::wire::Reader& r) {
  diag::Span s;
  s.file = r.u32();
  s.begin = r.u32();
  s.end = r.u32();
  return s;
}

}  // namespace ss::devices::protocol
