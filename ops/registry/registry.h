#pragma once
// The one table of builtins. Each ops/defs/<family>.cpp defines
// `std::vector<OpDef> ops_<family>()`, listed once in families.def; the
// table is built on first use (explicit, so no static-initialisation order
// or linker dropping of unreferenced objects can lose an op).

#include <string_view>
#include <vector>

#include "ops/registry/op_def.h"

namespace ss::ops {

/// The builtin named [name], or nullptr.
const OpDef* find_op(std::string_view name);
/// Every builtin, sorted by name.
std::vector<const OpDef*> all_ops();

#define SS_OP_FAMILY(family) std::vector<OpDef> ops_##family();
#include "ops/registry/families.def"
#undef SS_OP_FAMILY

}  // namespace ss::ops
