#include "interp/eval/runtime_lib.h"

#include <map>
#include <stdexcept>

namespace ss::eval {

namespace {
std::map<std::string, RuntimeFn, std::less<>> build() {
  std::map<std::string, RuntimeFn, std::less<>> t;
  auto add = [&](std::vector<RuntimeEntry> v) {
    for (const RuntimeEntry& e : v)
      if (!t.emplace(e.name, e.fn).second)
        throw std::logic_error(std::string("runtime builtin twice: ") + e.name);
  };
#define SS_RUNTIME_LIB(family) add(lib_##family());
#include "interp/eval/libs.def"
#undef SS_RUNTIME_LIB
  return t;
}
}  // namespace

RuntimeFn find_runtime(std::string_view name) {
  static const auto table = build();
  auto it = table.find(name);
  return it == table.end() ? nullptr : it->second;
}

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
  return has(i) ? static_cast<int64_t>(number(i, 0)) : dflt;
}

bool BuiltinCall::flag(size_t i, bool dflt) const {
  return has(i) ? args[i].truthy() : dflt;
}

}  // namespace ss::eval
