#include "interp/eval/runtime_table.h"

#include <array>
#include <stdexcept>

#include "ops/registry/registry.h"

namespace ss::eval {

namespace {

// Note [The runtime table]: slots by OpDef index, then by overload.
struct Table {
  std::vector<std::array<RuntimeFn, kOverloads>> slots;
  bool sealed = false;
};

Table& table() {
  static Table t = [] {
    Table fresh;
    fresh.slots.resize(ops::all_ops().size());
    return fresh;
  }();
  return t;
}

// Whether [op] runs with no forward and no runtime implementation: a
// pattern op (rearrange, split, einsum: the evaluator's call_pattern), or
// an initialiser, which init(...) draws from a field's declaration.
bool run_by_evaluator(const ops::OpDef& op) {
  return op.intrinsic != ops::Intrinsic::None || op.initialiser;
}

}  // namespace

void register_runtime(const std::vector<RuntimeEntry>& entries) {
  Table& t = table();
  if (t.sealed)
    throw std::logic_error("runtime builtins registered after start-up");
  for (const RuntimeEntry& e : entries) {
    const ops::OpDef* op = ops::find_op(e.name);
    if (!op)
      throw std::logic_error(std::string("runtime implementation of `") +
                             e.name + "`, which is not a builtin");
    RuntimeFn& slot = t.slots.at(op->index)[static_cast<size_t>(e.on)];
    if (slot)
      throw std::logic_error(std::string("runtime builtin twice: ") + e.name);
    slot = e.fn;
  }
}

void seal_runtime() {
  Table& t = table();
  if (t.sealed) return;
  std::string missing;
  for (const ops::OpDef* op : ops::all_ops())
    if (!op->forward && !t.slots[op->index][0] && !run_by_evaluator(*op))
      missing += std::string(missing.empty() ? "" : ", ") + op->name;
  if (!missing.empty())
    throw std::logic_error("builtins with no way to run: " + missing +
                           " (Note [The runtime table])");
  t.sealed = true;
}

bool runtime_sealed() {
  return table().sealed;
}

RuntimeFn runtime_of(const ops::OpDef& op, Overload on) {
  return table().slots[op.index][static_cast<size_t>(on)];
}

}  // namespace ss::eval
