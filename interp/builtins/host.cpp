// Host values: range, float, int, str, typeof, collective_timeout.
#include <cmath>
#include <new>

#include "interp/eval/device_hooks.h"
#include "interp/eval/format.h"
#include "interp/eval/runtime_table.h"
#include "ops/registry/device_rule.h"

namespace ss::builtins {

using namespace ss::eval;

using VK = Value::Kind;

namespace {

// range(n) or range(a, b): params (a, b?) as the table declares.
std::pair<int64_t, int64_t> range_bounds(const BuiltinCall& c) {
  int64_t a = c.integer(0, 0);
  if (c.has(1)) return {a, c.integer(1, 0)};
  return {0, a};
}

// A `for` header's range, counted as the loop asks (Note [A loop walks a
// range] in interp/eval/interpreter.cpp).
struct RangeWalk final : IterableObject {
  int64_t a = 0, b = 0;
  struct Count final : Cursor {
    int64_t at, end;
    bool next(Value& out) override {
      if (at >= end) return false;
      out = Value::integer(at++);
      return true;
    }
  };
  std::unique_ptr<Cursor> cursor(Interpreter&, diag::Span) override {
    auto c = std::make_unique<Count>();
    c->at = a;
    c->end = b;
    return c;
  }
  int64_t length() const override { return b > a ? b - a : 0; }
};

Value range_walked(BuiltinCall& c) {
  auto w = std::make_shared<RangeWalk>();
  std::tie(w->a, w->b) = range_bounds(c);
  return Value::object(Value::Kind::List, std::move(w));
}

Value range(BuiltinCall& c) {
  auto [a, b] = range_bounds(c);
  // A range is a list today, made whole: one too long for this machine
  // (range(2^62) aborted in vector::reserve, issue 32 item 4) is a
  // ValueError at its line, before anything is allocated.
  std::vector<Value> items;
  if (b > a) {
    // b - a in uint64 is exact: it is below 2^64 whatever the signs.
    const uint64_t n = static_cast<uint64_t>(b) - static_cast<uint64_t>(a);
    ops::check_host_allocatable(
        n,
        sizeof(Value),
        "range(" + (c.has(1) ? std::to_string(a) + ", " : "") +
            std::to_string(b) + ")'s " + std::to_string(n) + " items");
    try {
      items.reserve(static_cast<size_t>(n));
    } catch (const std::bad_alloc&) {
      // Within the machine's memory, and so within max_size(), but more
      // than it has free.
      c.fail("ValueError",
             "range of " + std::to_string(n) + " items: out of memory");
    }
  }
  for (int64_t i = a; i < b; ++i) items.push_back(Value::integer(i));
  return Value::list(std::move(items));
}

Value to_float(BuiltinCall& c) {
  return Value::floating(c.number(0, 0));
}

Value to_int(BuiltinCall& c) {
  double v = c.number(0, 0);
  if (!std::isfinite(v)) c.fail("ValueError", "int() of a non-finite number");
  return Value::integer(static_cast<int64_t>(std::trunc(v)));
}

Value to_str(BuiltinCall& c) {
  return Value::string(format_with_spec(c.arg(0), ""));
}

Value type_of(BuiltinCall& c) {
  return Value::string(c.arg_type(0).str());
}

Value collective_timeout(BuiltinCall& c) {
  double s = c.arg(0).number();  // required (ops/defs/host.cpp)
  // At most 366 days, as $SHAPESCRIPT_COLLECTIVE_TIMEOUT: the devices'
  // context makes it a count of milliseconds, which 1e308 s overflowed to
  // a negative timeout, and the next run in the process failed to start
  // its workers (issue 32's runtime fuzzer).
  if (!(s > 0) || !(s <= ops::kMaxCollectiveTimeoutS))
    c.fail(
        "ValueError",
        "collective_timeout needs seconds > 0 and at most " +
            std::to_string(static_cast<int64_t>(ops::kMaxCollectiveTimeoutS)) +
            " (366 days)");
  // Collectives started afterwards wait this long (devices.md item 12):
  // the devices' context sets it after this check (devices::Context::
  // run_op). One device has none.
  return Value::unit();
}

// size(x, A): the run-time size of x's axis A, found by the checker's
// resolution of A in x's type.
Value size(BuiltinCall& c) {
  const Value& x = c.arg(0);
  if (x.kind != VK::Tensor) c.fail("ValueError", "size needs a tensor");
  const types::Type& t = c.arg_type(0);
  auto it =
      c.info ? c.info->axis_args.find(1) : decltype(c.info->axis_args.end()){};
  if (!c.info || it == c.info->axis_args.end() || t.shape.size() != x.t.rank())
    c.fail("ValueError", "size: the axis was not resolved");
  auto bare = [](types::Axis a) {
    a.label.clear();
    a.split.clear();
    return a;
  };
  for (size_t k = 0; k < t.shape.size(); ++k)
    if (bare(t.shape[k]) == bare(it->second))
      return Value::integer(x.t.shape()[k]);
  c.fail("ValueError",
         "size: " + it->second.str() + " is not an axis of " + t.str());
}

}  // namespace

std::vector<RuntimeEntry> lib_host() {
  return {{"range", range},
          {"range", range_walked, Overload::Walked},
          {"float", to_float},
          {"int", to_int},
          {"str", to_str},
          {"typeof", type_of},
          {"collective_timeout", collective_timeout},
          {"size", size}};
}

}  // namespace ss::builtins
