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
  size_t index = 0;
  for (auto& [name, def] : t) def.index = index++;
  return t;
}

const Table& table() {
  static const Table t = build();
  return t;
}

using Spellings = std::map<std::string, const OpDef*, std::less<>>;

// An operator's spelling -> its entry; two entries claiming one spelling
// is a programming error in the table.
Spellings spellings(const char* OpDef::*field) {
  Spellings out;
  for (auto& [name, def] : table()) {
    const char* s = def.*field;
    if (s && !out.emplace(s, &def).second)
      throw std::logic_error(std::string("operator `") + s +
                             "` spells two builtins");
  }
  return out;
}

const OpDef* find_in(const Spellings& m, std::string_view spelling) {
  auto it = m.find(spelling);
  return it == m.end() ? nullptr : it->second;
}

}  // namespace

const OpDef* find_infix(std::string_view spelling) {
  static const Spellings m = spellings(&OpDef::infix);
  return find_in(m, spelling);
}

const OpDef* find_prefix(std::string_view spelling) {
  static const Spellings m = spellings(&OpDef::prefix);
  return find_in(m, spelling);
}

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
