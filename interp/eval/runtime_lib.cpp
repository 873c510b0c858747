#include "interp/eval/runtime_lib.h"

namespace ss::eval {

const types::Type& BuiltinCall::arg_type(size_t i) const {
  static const types::Type kError;
  if (i < exprs.size() && exprs[i]) return in.program().type_of(exprs[i]);
  return kError;
}

const types::Type& BuiltinCall::result_type() const {
  static const types::Type kError;
  return info ? info->type : kError;
}

double BuiltinCall::number(size_t i, double dflt) const {
  if (!has(i)) return dflt;
  const Value& v = args[i];
  if (!v.is_number() && v.kind != Value::Kind::Tensor)
    fail("ValueError",
         std::string(op.name) + ": `" + op.params[i].name +
             "` must be a number");
  return v.number();
}

int64_t BuiltinCall::integer(size_t i, int64_t dflt) const {
  if (!has(i)) return dflt;
  if (auto n = args[i].integer()) return *n;
  fail("ValueError",
       std::string(op.name) + ": `" + op.params[i].name +
           "` must be an integer within int64's range");
}

bool BuiltinCall::flag(size_t i, bool dflt) const {
  return has(i) ? args[i].truthy() : dflt;
}

}  // namespace ss::eval
