#pragma once
// Errors are values: a code, a message, a location and notes. One printer
// (render.cpp / render_json.cpp) formats them for the terminal, JSON, LSP.

#include <optional>
#include <string>
#include <vector>

#include "diag/source.h"

namespace ss::diag {

enum class Code {
#define X(code, summary) code,
#include "diag/errors.def"
#undef X
};

/// "E0302" for Code::E0302.
const char* code_name(Code c);
/// The one-line meaning from errors.def.
const char* code_summary(Code c);
/// Parses "E0302"; nullopt when unknown.
std::optional<Code> code_from_name(const std::string& name);

struct Note {
  enum class Kind { Note, Help };
  Kind kind = Kind::Note;
  std::string message;
  std::optional<Span> span;  // a second location (e.g. the earlier call)
};

/// A frame of a runtime error's `.ss` stack: the fn that ran and where it
/// was called from (a span in no file: the entry, called by `ss run`).
struct Frame {
  std::string fn;
  Span site;
};

/// A change of the source that its help line names and an editor can apply
/// (`ss lsp`'s quick fixes, Note [Help an editor applies] in
/// interp/lsp/code_actions.cpp): [span]'s text becomes [text] (an empty
/// span inserts).
struct Fix {
  std::string title;  // "Change to `img`"
  Span span;
  std::string text;
};

/// A static error (a code from errors.def), a runtime error (a kind of
/// errors.md, such as ShapeError, and its `.ss` stack) or a WorkerError:
/// all printed by the same printers.
struct Diagnostic {
  Code code{};
  Span span;
  std::string message;
  std::string label;  // printed after the carets
  std::vector<Note> notes;
  /// A runtime error's kind ("ShapeError"), printed instead of
  /// `error[CODE]`; empty for a static error.
  std::string kind;
  /// A runtime error's `.ss` call stack, most recent call last.
  std::vector<Frame> stack;
  /// False for an error with no `.ss` location (workers that failed to
  /// start): printed `error: KIND: message`.
  bool located = true;
  /// The fixes its help lines name, for an editor to offer.
  std::vector<Fix> fixes;

  Diagnostic& note(std::string m, std::optional<Span> s = std::nullopt) {
    notes.push_back({Note::Kind::Note, std::move(m), s});
    return *this;
  }
  Diagnostic& help(std::string m) {
    notes.push_back({Note::Kind::Help, std::move(m), std::nullopt});
    return *this;
  }
  /// A help line and the fix it names.
  Diagnostic& help(std::string m, Fix f) {
    fixes.push_back(std::move(f));
    return help(std::move(m));
  }
};

/// A runtime error's [kind] (`IOError`, `WorkerError`) with no `.ss`
/// location (a file that cannot be read, workers that failed to start):
/// printed `error: KIND: message`.
Diagnostic unlocated(std::string kind, std::string message);

/// Collects every diagnostic of a phase; the front end reports all at once.
class Diagnostics {
 public:
  /// How many a phase keeps: past it, errors are counted, not kept, and
  /// the last one kept says how many more there were (Note [The first
  /// errors] in diagnostic.cpp).
  static constexpr size_t kKept = 100;

  Diagnostic& error(Code code,
                    Span span,
                    std::string message,
                    std::string label = {});
  bool empty() const { return list_.empty(); }
  size_t size() const { return list_.size(); }
  const std::vector<Diagnostic>& list() const { return list_; }
  /// The most recent diagnostic, to add notes to; null when none.
  Diagnostic* last() {
    if (last_dropped_) return &dropped_one_;
    return list_.empty() ? nullptr : &list_.back();
  }
  /// The [i]th diagnostic, in the order reported, to add notes to.
  Diagnostic& at(size_t i) { return list_.at(i); }
  /// Whether [d] (error()'s result) is kept: a checker computes its "did
  /// you mean" only for one that is.
  bool kept(const Diagnostic& d) const { return &d != &dropped_one_; }
  /// How many errors were counted past kKept.
  size_t dropped() const { return dropped_; }
  /// Sorts by (file, offset) and drops exact duplicates.
  void sort();
  void append(const Diagnostics& other);

 private:
  void say_how_many_more();
  std::vector<Diagnostic> list_;
  size_t dropped_ = 0;
  bool last_dropped_ = false;
  Diagnostic dropped_one_;  // what error() returns past kKept
};

/// `file:line:col: error[E0302]: message` (a runtime error: `file:line:col:
/// ShapeError: message`), the caret snippet, the notes and a runtime
/// error's `.ss` stack.
std::string render_terminal(const Diagnostic& d, const SourceMap& sm);
std::string render_terminal(const Diagnostics& ds, const SourceMap& sm);
/// `path: error: message`: a command's refusal of a whole checked file (no
/// entry fn to run, devices this build lacks), with no line to show and no
/// code of errors.def or kind of a runtime error.
std::string render_file_error(const std::string& path,
                              const std::string& message);
/// A JSON array of {code, message, file, line, column, end, notes}, and a
/// runtime error's kind and stack.
std::string render_json(const Diagnostics& ds, const SourceMap& sm);
std::string render_json(const Diagnostic& d, const SourceMap& sm);

}  // namespace ss::diag
