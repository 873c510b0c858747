// Fuzz target: a program drawn from the builtins' table with hostile
// arguments (Note [A runtime fuzzer's programs] in run_program.cpp), run as
// `ss run` runs it on `cpu`, in this process. Diagnostics, a located
// runtime error and a value are normal outcomes; anything else is a
// finding (Note [What a fuzz target calls a finding]), and so is a run
// past the bounds of Note [A runtime fuzzer's bounds] (run_outcome.cpp).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/fuzz/run_outcome.h"
#include "tests/fuzz/run_program.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ss::fuzz;
  std::string text = run_program_text(data, size);
  RunOutcome r = run_program(text);
  if (r.kind == RunOutcome::Kind::Finding) {
    std::fprintf(stderr,
                 "fuzz finding in ss run: %s\nthe program:\n%s",
                 r.detail.c_str(),
                 text.c_str());
    std::abort();
  }
  return 0;
}
