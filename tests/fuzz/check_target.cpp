// Fuzz target: source text through `ss check`'s pipeline (lexer, parser,
// checker, with the standard library, as cmd_check.cpp runs it), and the
// diagnostics rendered for the terminal and as --json; a checked program's
// --types too. No evaluation. Every outcome is diagnostics or a program;
// any exception is a finding (Note [What a fuzz target calls a finding]).
#include <pthread.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "interp/check/checker.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

// On a stack as large as `ss` gives every command (Note [A deep stack] in
// interp/cli/main.cpp: 1 GiB, reserved, not touched): the checker's depth
// limits are set for that stack, so the main thread's 8 MiB would report
// nesting that `ss` accepts as a stack overflow.
constexpr size_t kStackBytes = size_t{1} << 30;

struct Input {
  const uint8_t* data;
  size_t size;
};

void* check(void* p) {
  using namespace ss;
  const auto* in = static_cast<const Input*>(p);
  // In the scratch directory, so that a relative `import` looks there
  // (and finds nothing) rather than in the fuzzer's working directory.
  static const std::string path = fuzz::scratch_path("fuzz.ss");
  fuzz::expect_user_errors("ss check", [&] {
    diag::SourceMap sm;
    diag::Diagnostics diags;
    std::string text(reinterpret_cast<const char*>(in->data), in->size);
    auto prog = check::check_source(path, std::move(text), sm, diags);
    (void)diag::render_terminal(diags, sm);
    (void)diag::render_json(diags, sm);
    if (prog) (void)check::describe_types(*prog);
  });
  return nullptr;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in{data, size};
  pthread_attr_t attr;
  pthread_t t;
  if (pthread_attr_init(&attr) != 0 ||
      pthread_attr_setstacksize(&attr, kStackBytes) != 0 ||
      pthread_create(&t, &attr, check, &in) != 0) {
    std::fprintf(stderr, "fuzz_check: no thread with a 1 GiB stack\n");
    std::abort();
  }
  pthread_attr_destroy(&attr);
  pthread_join(t, nullptr);
  return 0;
}
