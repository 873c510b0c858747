#pragma once
// `ss repl`: declarations and statements typed one at a time, checked and
// run against a session that keeps its locals; an error prints and the
// session goes on. See Note [Repl inputs] in repl.cpp.

#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "interp/check/checker.h"
#include "interp/cli/repl_text.h"
#include "interp/eval/interpreter.h"

namespace ss::cli {

class Repl {
 public:
  /// [deterministic]: `--deterministic` (Note [Deterministic mode] in
  /// interp/devices/lower/chunks.h).
  Repl(std::ostream& out,
       std::ostream& err,
       std::string devices = "",
       bool deterministic = false);
  ~Repl();

  /// Handles one complete input (possibly several lines), as typed: its
  /// lines join the session's transcript. False on :quit.
  bool handle(const std::string& input);
  /// `:load FILE`: adds a file's declarations, replacing those of the
  /// same names (what `ss repl FILE` does before the first prompt).
  void load(const std::string& path);
  /// Whether [partial] needs more lines: a line ending in ':' opens a
  /// block (ended by a blank line), or brackets are still open.
  static bool needs_more(const std::string& partial);
  /// Where the workers go (`--hosts`; see ReplDevices::set_remote).
  void set_remote(devices::controller::ReplDevices::RemoteFor f);
  /// Set by the SIGINT handler while a statement runs.
  static volatile int interrupted;

 private:
  struct Local {
    std::string name;
    types::Type type;
    eval::Value value;
  };

  /// Where typed text starts: its transcript line and column.
  struct Typed {
    uint32_t line = 1;
    uint32_t column = 1;
  };

  bool command(const std::string& line, Typed at);
  void declare(const std::string& text, size_t origin, uint32_t line);
  void statements(const std::string& text, Typed at);
  /// Drops the locals holding a store whose devices' state is gone
  /// (ReplDevices::lost; where: the failure).
  void drop_lost(const std::string& where);
  /// `:explain NAME`: the fn's signature and its part of the devices
  /// report.
  void explain(const std::string& name);
  /// The indices of the locals [text] names, in order (Note [What a
  /// session keeps] in repl.cpp).
  std::vector<size_t> named_locals(const std::string& text) const;
  /// The locals at [passed] as the parameters of a synthetic fn.
  std::string signature(const std::vector<size_t>& passed) const;
  /// Replaces the locals, and indexes them.
  void set_locals(std::vector<Local> locals);
  /// Whether [l]'s type or value may point into a checked program.
  static bool points_into(const Local& l);
  /// Keeps [prog] and [sm] while something may point into them (Note
  /// [What a session keeps]); [statement]: an input's statements' program
  /// (else its declarations').
  void keep(std::unique_ptr<check::Program> prog,
            std::unique_ptr<diag::SourceMap> sm,
            bool statement);
  /// A synthetic fn [header] with [body] (typed [at]) as its lines, then
  /// the session's declarations.
  ReplText program(const std::string& header,
                   const std::string& body,
                   Typed at,
                   const std::string& pad = "    ") const;
  /// The session's text checked; [prompt_fn]: the fn of the input typed
  /// at the prompt, which runs in the controller (check::Options).
  std::unique_ptr<check::Program> check(const ReplText& text,
                                        diag::SourceMap& sm,
                                        diag::Diagnostics& diags,
                                        const std::string& prompt_fn = "");
  void print_errors(const diag::Diagnostics& d, const diag::SourceMap& sm);
  /// After [replacing] redefined names of [before]: drops the locals
  /// whose layout [now] changed (Note [Repl redefinition]).
  void drop_stale_locals(const check::Program& before,
                         const check::Program& now,
                         const std::vector<ReplDecl>& replacing);

  std::ostream& out_;
  std::ostream& err_;
  std::string devices_;
  bool deterministic_ = false;
  /// [0]: the transcript of what was typed; then each file `:load` read.
  std::vector<ReplOrigin> origins_;
  std::vector<ReplDecl> decls_;  // every declaration accepted so far
  std::vector<Local> locals_;    // set_locals, or updated with the index
  std::unordered_map<std::string, size_t> local_index_;  // name -> locals_
  size_t pointing_ = 0;  // locals that points_into a program
  /// Locals the session dropped (a redefinition, the devices' state
  /// gone), and why: said when one is named.
  struct Dropped {
    std::string label, why, help;
  };
  std::map<std::string, Dropped> dropped_;
  int counter_ = 0;
  // Values refer to the programs and sources that made them.
  struct Kept {
    std::unique_ptr<check::Program> program;
    std::unique_ptr<diag::SourceMap> source;
    bool statement;  // an input's statements' (else its declarations')
  };
  std::vector<Kept> kept_;
  /// The session's workers on several devices (Note [Repl sessions on
  /// devices]); destroyed first, so leaving the repl ends them.
  std::unique_ptr<devices::controller::ReplDevices> workers_;
};

/// `ss repl [FILE] [--devices SPEC]`.
int run_repl(const std::vector<std::string>& args);

}  // namespace ss::cli
