// Fuzz target: a program drawn from the builtins' table with hostile
// arguments (Note [A runtime fuzzer's programs] in run_program.cpp), run as
// `ss run` runs it on `cpu`, in this process. Diagnostics, a located
// runtime error and a value are normal outcomes; anything else is a
// finding (Note [What a fuzz target calls a finding]), and so is a run
// past the bounds of Note [A runtime fuzzer's bounds] (run_outcome.cpp),
// and so is a value that differs from ref/'s (Note [A runtime fuzzer's
// oracle] in run_ref.cpp).
// With SS_FUZZ_RUN_DEVICES, again on that device list, which must agree
// (Note [A runtime fuzzer on several devices] in run_outcome.cpp).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/fuzz/run_outcome.h"
#include "tests/fuzz/run_program.h"

namespace {

[[noreturn]] void finding(const std::string& what, const std::string& text) {
  std::fprintf(stderr,
               "fuzz finding in ss run: %s\nthe program:\n%s",
               what.c_str(),
               text.c_str());
  std::abort();
}

const char* kinds[] = {"a static error", "a runtime error", "a value", "", ""};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ss::fuzz;
  std::string text = run_program_text(data, size);
  RunOutcome r = run_program(text);
  // A value that differs from ref's is a finding (Note [A runtime
  // fuzzer's oracle] in run_ref.cpp).
  if (r.kind == RunOutcome::Kind::Finding ||
      r.kind == RunOutcome::Kind::Differs)
    finding(r.detail, text);
  // Note [A runtime fuzzer on several devices] (run_outcome.cpp).
  const char* devices = std::getenv("SS_FUZZ_RUN_DEVICES");
  const char* worker = std::getenv("SS_FUZZ_WORKER");
  if (!devices || !*devices || !worker) return 0;
  RunOutcome d = run_program_on_devices(text, devices, worker);
  if (d.kind == RunOutcome::Kind::Finding) finding(d.detail, text);
  // Refused by the checks of several devices alone (device work in the
  // controller's `main`): not comparable (Note [A runtime fuzzer on
  // several devices]).
  if (d.kind == RunOutcome::Kind::Static && d.detail == kDevicesOnly) return 0;
  if (d.kind != r.kind || d.detail != r.detail)
    finding(std::string("on cpu ") + kinds[int(r.kind)] + " " + r.detail +
                ", on " + devices + " " + kinds[int(d.kind)] + " " + d.detail,
            text);
  return 0;
}
