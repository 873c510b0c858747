#pragma once
// The one table of builtins. Each ops/defs/<family>.cpp defines
// `std::vector<OpDef> ops_<family>()`, listed once in families.def; the
// table is built on first use (explicit, so no static-initialisation order
// or linker dropping of unreferenced objects can lose an op).

#include <string>
#include <string_view>
#include <vector>

#include "ops/registry/op_def.h"

namespace ss::ops {

/// The builtin named [name], or nullptr.
const OpDef* find_op(std::string_view name);
/// The op an infix operator spells (`+` is add, `@` matmul), or nullptr.
const OpDef* find_infix(std::string_view spelling);
/// The op a prefix operator spells (`-` is neg, `not` logical_not), or
/// nullptr (`+x` is x itself).
const OpDef* find_prefix(std::string_view spelling);
/// Every builtin, sorted by name: all_ops()[d.index] is &d.
std::vector<const OpDef*> all_ops();
/// [op]'s signature as the builtins' reference writes it: `[name=]` for an
/// optional parameter, `name=` for a keyword-only one, `mut` for one it
/// changes, `...` for more arguments (signature.cpp). Hovers, completions
/// and signature help show the same.
std::string signature_text(const OpDef& op);

#define SS_OP_FAMILY(family) std::vector<OpDef> ops_##family();
#include "ops/registry/families.def"
#undef SS_OP_FAMILY

}  // namespace ss::ops
