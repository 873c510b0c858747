#pragma once
// The `run` fuzz target's runner: a program text through `ss run`'s
// pipeline in this process, on one device (`cpu`), and what came of it
// (Note [What a fuzz target calls a finding] in fuzz_util.h).

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ss::fuzz {

struct RunOutcome {
  enum class Kind {
    Static,   // diagnostics: it did not check
    Runtime,  // a located runtime error; [detail] is its kind
    Value,    // it ran to the end
    Finding,  // anything else; [detail] says what
    Differs,  // a value differs from ref's (Note [A runtime fuzzer's
              // oracle] in run_ref.cpp): a finding; [detail] says where
  };
  RunOutcome() = default;
  RunOutcome(Kind k, std::string d) : kind(k), detail(std::move(d)) {}

  Kind kind = Kind::Value;
  std::string detail;
  /// The oracle's counts (run_program only): values compared with ref,
  /// calls its adapters declined, and the builtins with a forward that
  /// ran without an adapter, once per call.
  uint64_t ref_compared = 0;
  uint64_t ref_declined = 0;
  std::vector<std::string> ref_unadapted;
};

/// Checks [text] as `ss run` does (the standard library included) and, if
/// it checks, runs its `main` with the one-device interpreter, under the
/// bounds of Note [A runtime fuzzer's bounds] (run_outcome.cpp): a hang
/// past them aborts the process. Each builtin's value is compared with
/// ref/'s (Note [A runtime fuzzer's oracle] in run_ref.cpp). Any thread; the
/// run is on the deep stack.
RunOutcome run_program(const std::string& text);

/// Checks and runs [text] as `ss run --devices [devices]` does (worker
/// processes, [worker] each: the `ss` binary), in the scratch directory
/// and under the same bounds, for the comparison of Note [A runtime
/// fuzzer on several devices] (run_outcome.cpp). A WorkerError, a worker
/// that stopped, is a finding.
RunOutcome run_program_on_devices(const std::string& text,
                                  const std::string& devices,
                                  const std::string& worker);

/// run_program_on_devices' detail for a static error of the checks of
/// several devices alone (E18xx, E19xx), which one device does not make.
inline const char* const kDevicesOnly = "the checks of several devices";

/// The bound on one run's time, in seconds.
inline constexpr unsigned kRunSeconds = 10;

}  // namespace ss::fuzz
