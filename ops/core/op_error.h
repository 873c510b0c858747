#pragma once
// The error of an op or a tensor reaching bad arguments at run time.

#include <stdexcept>
#include <string>

namespace ss::ops {

/// A bad argument reaching an op at run time (shapes that disagree, an
/// index out of range, a tensor too large to allocate). The evaluator turns
/// it into a ShapeError or a ValueError at the `.ss` line that called the
/// op.
///
/// [op] names the API op that found the fault, when one did (`matmul`,
/// `reshape`): what() reads "op: detail", and a builtin that called the op
/// on the user's behalf reports detail() under its own name instead, with
/// no parsing of the text.
class OpError : public std::runtime_error {
 public:
  enum class Kind { Shape, Value };
  OpError(Kind kind, const std::string& detail, std::string op = {})
      : std::runtime_error(op.empty() ? detail : op + ": " + detail),
        kind_(kind),
        op_(std::move(op)),
        detail_(detail) {}
  Kind kind() const { return kind_; }
  /// The API op that raised it; empty when none did (a tensor's own check).
  const std::string& op() const { return op_; }
  /// The message without the op's name.
  const std::string& detail() const { return detail_; }

 private:
  Kind kind_;
  std::string op_;
  std::string detail_;
};

}  // namespace ss::ops
