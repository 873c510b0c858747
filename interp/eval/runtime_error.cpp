#include "interp/eval/runtime_error.h"

namespace ss::eval {

diag::Diagnostic RuntimeError::diagnostic() const {
  diag::Diagnostic d;
  d.kind = kind_;
  d.span = span_;
  d.message = message_;
  // Notes come from the builtins as text; "help: ..." is a help line.
  for (const std::string& n : notes_) {
    if (n.rfind("help: ", 0) == 0)
      d.help(n.substr(6));
    else
      d.note(n);
  }
  for (const StackEntry& s : stack_) d.stack.push_back({s.fn, s.site});
  return d;
}

std::string render_runtime_error(const RuntimeError& e,
                                 const diag::SourceMap& sm) {
  return diag::render_terminal(e.diagnostic(), sm);
}

}  // namespace ss::eval
