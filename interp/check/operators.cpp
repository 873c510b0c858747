#include "interp/check/operators.h"

#include <array>
#include <stdexcept>
#include <string>

#include "ops/registry/registry.h"

namespace ss::check {

namespace {

constexpr ast::BinaryOp kLastBinary = ast::BinaryOp::Or;

// Each operator's entry, found once by its spelling.
std::array<const ops::OpDef*, size_t(kLastBinary) + 1> binary_defs() {
  std::array<const ops::OpDef*, size_t(kLastBinary) + 1> out{};
  for (size_t i = 0; i < out.size(); ++i) {
    const char* s = ast::binary_op_spelling(ast::BinaryOp(i));
    out[i] = ops::find_infix(s);
    if (!out[i])
      throw std::logic_error(std::string("no builtin for the operator `") + s +
                             "`");
  }
  return out;
}

}  // namespace

const ops::OpDef& operator_def(ast::BinaryOp op) {
  static const auto defs = binary_defs();
  return *defs.at(size_t(op));
}

const ops::OpDef* operator_def(ast::UnaryOp op) {
  // `+x` spells no op: find_prefix("+") is null.
  static const std::array<const ops::OpDef*, 3> defs = {
      ops::find_prefix(ast::unary_op_spelling(ast::UnaryOp(0))),
      ops::find_prefix(ast::unary_op_spelling(ast::UnaryOp(1))),
      ops::find_prefix(ast::unary_op_spelling(ast::UnaryOp(2)))};
  return defs.at(size_t(op));
}

}  // namespace ss::check
