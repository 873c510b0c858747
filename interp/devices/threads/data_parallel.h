#pragma once
// Runs a program's main on N ranks in this process, one thread each, over
// real Gloo collectives on loopback (or in-process ones): every rank runs
// the program with its RankContext, host effects happen on rank 0. It is
// the engine's test bed (N devices compute what one does); `ss run
// --devices cpu[...]` runs main in the controller and worker fns in worker
// processes (interp/devices/controller/run.cpp).

#include <iosfwd>
#include <optional>

#include "diag/source.h"
#include "interp/check/checked.h"
#include "interp/eval/final_params.h"
#include "interp/eval/runtime_error.h"

namespace ss::devices::threads {

struct ParallelOptions {
  int world = 2;
  bool gloo = true;  // false: in-process collectives (faster to set up)
  /// When set: each rank's final params (devices::Context::final_params),
  /// by rank, to check the copies stayed equal.
  std::vector<eval::FinalParams>* final_params = nullptr;
  /// DeviceContext::grad_bucket_bytes when not 0.
  size_t grad_bucket_bytes = 0;
};

/// Rank 0's runtime error, if any rank failed (a rank's failure stops the
/// others through their collectives).
std::optional<eval::RuntimeError> run_data_parallel(
    const check::Program& prog,
    const diag::SourceMap& sm,
    std::ostream& out,
    const ParallelOptions& opts);

}  // namespace ss::devices::threads
