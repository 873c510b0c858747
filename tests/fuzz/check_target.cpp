// Fuzz target: source text through `ss check`'s pipeline (lexer, parser,
// checker, with the standard library, as cmd_check.cpp runs it), and the
// diagnostics rendered for the terminal and as --json; a checked program's
// --types too. No evaluation. Every outcome is diagnostics or a program;
// any exception is a finding (Note [What a fuzz target calls a finding]).
#include <cstddef>
#include <cstdint>
#include <string>

#include "interp/check/checker.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

void check(const uint8_t* data, size_t size) {
  using namespace ss;
  // In the scratch directory, so that a relative `import` looks there
  // (and finds nothing) rather than in the fuzzer's working directory.
  static const std::string path = fuzz::scratch_path("fuzz.ss");
  fuzz::expect_user_errors("ss check", [&] {
    diag::SourceMap sm;
    diag::Diagnostics diags;
    std::string text(reinterpret_cast<const char*>(data), size);
    auto prog = check::check_source(path, std::move(text), sm, diags);
    (void)diag::render_terminal(diags, sm);
    (void)diag::render_json(diags, sm);
    if (prog) (void)check::describe_types(*prog);
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ss::fuzz::on_deep_stack([&] { check(data, size); });
  return 0;
}
