#pragma once
// Helpers for evaluator tests: check and run programs given as text.

#include <fstream>
#include <sstream>
#include <string>

#include "interp/check/checker.h"
#include "interp/eval/interpreter.h"

namespace ss::testing {

struct Run {
  diag::SourceMap sm;
  diag::Diagnostics diags;
  std::unique_ptr<check::Program> prog;
  std::ostringstream out;
  std::unique_ptr<eval::Interpreter> in;
  std::string error;       // rendered runtime error, if main raised one
  std::string error_kind;  // its kind
};

/// Checks [text]; when clean, makes an interpreter and (if [run_main]) runs
/// main, capturing its output.
inline std::unique_ptr<Run> run_program(const std::string& text,
                                        bool run_main = true) {
  auto r = std::make_unique<Run>();
  r->prog = check::check_source("test.ss", text, r->sm, r->diags);
  if (!r->prog) {
    r->error = diag::render_terminal(r->diags, r->sm);
    r->error_kind = "static";
    return r;
  }
  r->in = std::make_unique<eval::Interpreter>(*r->prog, r->sm, r->out);
  if (run_main) {
    try {
      r->in->run_main({});
    } catch (const eval::RuntimeError& e) {
      r->error = eval::render_runtime_error(e, r->sm);
      r->error_kind = e.kind();
    }
  }
  return r;
}

}  // namespace ss::testing
