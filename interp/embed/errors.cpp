#include "interp/embed/errors.h"

#include "diag/exit_codes.h"

namespace ss::embed {

CheckFailed check_failed(const diag::Diagnostics& diags,
                         const diag::SourceMap& sm) {
  CheckFailed f;
  for (const diag::Diagnostic& d : diags.list()) {
    Problem& p = f.problems.emplace_back();
    p.code = diag::code_name(d.code);
    p.message = d.message;
    diag::Span s = sm.origin(d.span);
    if (d.located && s.file < sm.size()) {
      p.file = sm.file(s.file).path;
      diag::LineCol lc = sm.line_col(s.file, s.begin);
      p.line = lc.line;
      p.column = lc.column;
    }
    p.text = diag::render_terminal(d, sm);
  }
  f.text = diag::render_terminal(diags, sm);
  return f;
}

Error to_error(const eval::RuntimeError& e, const diag::SourceMap& sm) {
  Error out(e.kind(), e.message());
  out.exit_code =
      e.kind() == "WorkerError" ? diag::kExitWorker : diag::kExitRuntime;
  out.location = sm.location(e.span(), "");
  out.text = eval::render_runtime_error(e, sm);
  for (const std::string& n : e.notes()) out.notes.push_back(n);
  for (const eval::StackEntry& s : e.stack())
    out.stack.push_back("in `" + s.fn + "`, called at " +
                        sm.location(s.site, "the host"));
  if (const auto& w = e.worker()) {
    out.worker = w->rank;
    out.how = w->how;
    out.running = w->running;
    out.where = sm.location(w->site, "");
  }
  return out;
}

}  // namespace ss::embed
