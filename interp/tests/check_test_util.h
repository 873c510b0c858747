#pragma once
// Helpers for checker tests: check a program given as text and look at the
// diagnostics it produced.

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "interp/check/checker.h"

namespace ss::testing {

struct Checked {
  diag::SourceMap sm;
  diag::Diagnostics diags;
  std::unique_ptr<check::Program> prog;

  /// "E0302@10:17" per diagnostic, in order.
  std::vector<std::string> codes() const {
    std::vector<std::string> v;
    for (const auto& d : diags.list()) {
      diag::LineCol lc = sm.line_col(d.span.file, d.span.begin);
      v.push_back(std::string(diag::code_name(d.code)) + "@" +
                  std::to_string(lc.line) + ":" + std::to_string(lc.column));
    }
    return v;
  }
  std::string rendered() const { return diag::render_terminal(diags, sm); }
};

inline std::unique_ptr<Checked> check_text(const std::string& text,
                                           check::Options opts = {}) {
  auto c = std::make_unique<Checked>();
  c->prog = check::check_source("test.ss", text, c->sm, c->diags, opts);
  return c;
}

inline std::string read_source_file(const std::string& rel) {
  std::ifstream in(std::string(SS_SOURCE_DIR) + "/" + rel);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace ss::testing
