// Host values: range, float, int, str, typeof, collective_timeout.
#include <cmath>

#include "interp/eval/format.h"
#include "interp/eval/lib/runtime_lib.h"

namespace ss::eval {

using VK = Value::Kind;

namespace {

Value range(BuiltinCall& c) {
  // range(n) or range(a, b): params (a, b?) as the table declares.
  int64_t a = c.integer(0, 0), b;
  if (c.has(1)) {
    b = c.integer(1, 0);
  } else {
    b = a;
    a = 0;
  }
  std::vector<Value> items;
  if (b > a) items.reserve(static_cast<size_t>(b - a));
  for (int64_t i = a; i < b; ++i) items.push_back(Value::integer(i));
  return Value::list(std::move(items));
}

Value to_float(BuiltinCall& c) { return Value::floating(c.number(0, 0)); }

Value to_int(BuiltinCall& c) {
  double v = c.number(0, 0);
  if (!std::isfinite(v)) c.fail("ValueError", "int() of a non-finite number");
  return Value::integer(static_cast<int64_t>(std::trunc(v)));
}

Value to_str(BuiltinCall& c) {
  return Value::string(format_with_spec(c.arg(0), ""));
}

Value type_of(BuiltinCall& c) { return Value::string(c.arg_type(0).str()); }

Value collective_timeout(BuiltinCall& c) {
  double s = c.number(0, 600);
  if (!(s > 0)) c.fail("ValueError", "collective_timeout needs seconds > 0");
  // One device runs no collectives; the several-devices runtime reads it.
  return Value::unit();
}

}  // namespace

std::vector<RuntimeEntry> lib_host() {
  return {{"range", range},       {"float", to_float},
          {"int", to_int},        {"str", to_str},
          {"typeof", type_of},    {"collective_timeout", collective_timeout}};
}

}  // namespace ss::eval
