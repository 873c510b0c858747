#pragma once
// `ss repl`: declarations and statements typed one at a time, checked and
// run against a session that keeps its locals; an error prints and the
// session goes on. See Note [Repl inputs] in repl.cpp.

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "interp/check/checker.h"
#include "interp/eval/interpreter.h"

namespace ss::cli {

class Repl {
 public:
  Repl(std::ostream& out, std::ostream& err, std::string devices = "");
  ~Repl();

  /// Handles one complete input (possibly several lines). False on :quit.
  bool handle(const std::string& input);
  /// Whether [partial] needs more lines: a line ending in ':' opens a
  /// block (ended by a blank line), or brackets are still open.
  static bool needs_more(const std::string& partial);
  /// Set by the SIGINT handler while a statement runs.
  static volatile int interrupted;

 private:
  struct Local {
    std::string name;
    types::Type type;
    eval::Value value;
  };

  bool command(const std::string& line);
  void declare(const std::string& text);
  void statements(const std::string& text);
  /// The session's locals as the parameters of a synthetic fn.
  std::string signature() const;
  std::unique_ptr<check::Program> check(const std::string& body_fn,
                                        diag::SourceMap& sm,
                                        diag::Diagnostics& diags,
                                        size_t& body_offset);
  void print_errors(const diag::Diagnostics& d,
                    const diag::SourceMap& sm,
                    size_t body_offset,
                    size_t body_len);

  std::ostream& out_;
  std::ostream& err_;
  std::string devices_;
  std::string decls_;  // every declaration accepted so far
  std::vector<Local> locals_;
  int counter_ = 0;
  // Values refer to the programs and sources that made them.
  std::vector<std::unique_ptr<check::Program>> programs_;
  std::vector<std::unique_ptr<diag::SourceMap>> sources_;
};

/// `ss repl [FILE] [--devices SPEC]`.
int run_repl(const std::vector<std::string>& args);

}  // namespace ss::cli
