#pragma once
// The error of an op or a tensor reaching bad arguments at run time.

#include <stdexcept>
#include <string>

namespace ss::ops {

/// A bad argument reaching an op at run time (shapes that disagree, an
/// index out of range, a tensor too large to allocate). The evaluator turns
/// it into a ShapeError or a ValueError at the `.ss` line that called the
/// op.
class OpError : public std::runtime_error {
 public:
  enum class Kind { Shape, Value };
  OpError(Kind kind, const std::string& message)
      : std::runtime_error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

}  // namespace ss::ops
