#include "ops/registry/registry.h"

#include <map>
#include <stdexcept>
#include <string>

#include "diag/diagnostic.h"

namespace ss::ops {

namespace {
using Table = std::map<std::string, OpDef, std::less<>>;

Table build() {
  Table t;
  auto add = [&](std::vector<OpDef> defs) {
    for (OpDef& d : defs) {
      std::string name = d.name;
      // Two families defining one name is a programming error in the table.
      if (!t.emplace(name, std::move(d)).second)
        throw std::logic_error("builtin defined twice: " + name);
    }
  };
#define SS_OP_FAMILY(family) add(ops_##family());
#include "ops/registry/families.def"
#undef SS_OP_FAMILY
  return t;
}

const Table& table() {
  static const Table t = build();
  return t;
}
}  // namespace

const OpDef* find_op(std::string_view name) {
  auto it = table().find(name);
  return it == table().end() ? nullptr : &it->second;
}

std::vector<const OpDef*> all_ops() {
  std::vector<const OpDef*> v;
  for (auto& [name, def] : table()) v.push_back(&def);
  return v;
}

}  // namespace ss::ops
