#pragma once
// Runtime errors are values with a kind (ShapeError, ValueError, ...), a
// message, the `.ss` location and the call stack (most recent call last),
// printed like static errors by the same printer (errors.md).

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "diag/diagnostic.h"

namespace ss::eval {

struct StackEntry {
  std::string fn;   // the fn running
  diag::Span site;  // where it was called from
};

class RuntimeError : public std::exception {
 public:
  RuntimeError(std::string kind, std::string message, diag::Span span)
      : kind_(std::move(kind)), message_(std::move(message)), span_(span) {}
  const char* what() const noexcept override { return message_.c_str(); }
  const std::string& kind() const { return kind_; }
  const std::string& message() const { return message_; }
  diag::Span span() const { return span_; }
  std::vector<StackEntry>& stack() { return stack_; }
  const std::vector<StackEntry>& stack() const { return stack_; }
  std::vector<std::string>& notes() { return notes_; }
  const std::vector<std::string>& notes() const { return notes_; }
  /// This error as the one printer prints it (diag/diagnostic.h).
  diag::Diagnostic diagnostic() const;

  /// A WorkerError's worker: which one stopped, how, and the call it was
  /// running (a host language's WorkerError has them as attributes).
  struct Worker {
    int rank = -1;
    std::string how;      // "killed by signal 9 (SIGKILL)"
    std::string running;  // the worker fn called
    diag::Span site;      // where it was called
  };
  std::optional<Worker>& worker() { return worker_; }
  const std::optional<Worker>& worker() const { return worker_; }

 private:
  std::string kind_;
  std::string message_;
  diag::Span span_;
  std::vector<StackEntry> stack_;
  std::vector<std::string> notes_;
  std::optional<Worker> worker_;
};

/// `file:line:col: ShapeError: message`, the caret snippet, then the
/// `.ss` call stack, most recent call last: diag::render_terminal of
/// diagnostic().
std::string render_runtime_error(const RuntimeError& e,
                                 const diag::SourceMap& sm);

}  // namespace ss::eval
