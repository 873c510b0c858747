// Datasets and batches (library.md, Data). This build has len() of host
// collections; datasets, batches and progress arrive with the data issue.
#include "interp/eval/lib/runtime_lib.h"

namespace ss::eval {

using VK = Value::Kind;

namespace {

Value len(BuiltinCall& c) {
  const Value& v = c.arg(0);
  if (v.kind == VK::List || v.kind == VK::Tuple)
    return Value::integer(static_cast<int64_t>(v.items->size()));
  if (auto* it = dynamic_cast<IterableObject*>(v.obj.get()))
    return Value::integer(it->length());
  c.fail("ValueError", "len() of a value without a length");
}

}  // namespace

std::vector<RuntimeEntry> lib_data() { return {{"len", len}}; }

}  // namespace ss::eval
