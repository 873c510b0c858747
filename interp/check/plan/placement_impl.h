#pragma once
// Internals of the several-devices checks, shared by placement.cpp,
// batch_axis.cpp and batch_checks.cpp: call sites, expression walking and
// the batch axis's helpers. Not included outside interp/check/.

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "interp/check/call_args.h"
#include "interp/check/checker_impl.h"
#include "interp/parse/ast_walk.h"

namespace ss::check::placement_detail {

using EK = ast::Expr::Kind;
using Vars = std::set<uint32_t>;

struct CallSite {
  FnInfo* caller = nullptr;
  FnInfo* callee = nullptr;
  const ast::Expr* call = nullptr;
  /// callee param -> the argument given for it (null: a batch that a
  /// builtin makes, as mean_logs's, always split).
  std::vector<std::pair<size_t, const ast::Expr*>> args;
  std::pair<size_t, uint32_t> order;  // (module, offset)
};

// ---- walking (interp/parse/ast_walk.h, interp/check/call_args.h).
using ast::children;
using ast::each_expr;
using check::given_args;
using check::param_arg;

// ------------------------------------------------------------ the batch axis

inline bool axis_is(const Axis& a, const Vars& v) {
  return a.kind == Axis::Kind::Var && v.count(a.var);
}

// How many times batch axes occur in [a], groups included.
inline int axis_count(const Axis& a, const Vars& v) {
  int n = axis_is(a, v) ? 1 : 0;
  for (const Axis& i : a.items) n += axis_count(i, v);
  return n;
}

// The first batch axis in [a], groups included.
inline const Axis* axis_find(const Axis& a, const Vars& v) {
  if (axis_is(a, v)) return &a;
  for (const Axis& i : a.items)
    if (const Axis* f = axis_find(i, v)) return f;
  return nullptr;
}

inline const Axis* find_batch(const Type& t, const Vars& v) {
  if (v.empty()) return nullptr;
  switch (t.kind) {
    case TK::Tensor:
    case TK::Batch:
      for (const Axis& a : t.shape)
        if (const Axis* f = axis_find(a, v)) return f;
      return nullptr;
    case TK::Tuple:
    case TK::List:
      for (const Type& e : t.elems)
        if (const Axis* f = find_batch(e, v)) return f;
      return nullptr;
    case TK::Logs:
      for (const auto& [_, ft] : t.fields)
        if (const Axis* f = find_batch(ft, v)) return f;
      return nullptr;
    default:
      return nullptr;
  }
}

inline bool has_batch(const Type& t, const Vars& v) {
  return find_batch(t, v) != nullptr;
}

// The batch axis inside a group of a tensor's shape: `(b n)`.
inline const Axis* grouped_batch(const Type& t, const Vars& v) {
  if (t.kind != TK::Tensor && t.kind != TK::Batch) return nullptr;
  for (const Axis& a : t.shape)
    if (a.kind == Axis::Kind::Group)
      if (const Axis* f = axis_find(a, v)) return f;
  return nullptr;
}

inline int batch_count(const Type& t, const Vars& v) {
  if (t.kind != TK::Tensor && t.kind != TK::Batch) return 0;
  int n = 0;
  for (const Axis& a : t.shape) n += axis_count(a, v);
  return n;
}

inline std::string axis_name(const Axis& a) {
  if (!a.label.empty()) return a.label;
  return a.name.empty() ? a.str() : a.name;
}

// ---- batch_axis.cpp: step 3 of check_devices (the batch axis through
// calls, each value's layout) and E1804, E1802 at the types.
void check_batch_axis(Checker& ck,
                      const std::vector<FnInfo*>& fns,
                      const std::vector<CallSite>& sites,
                      bool several,
                      bool mesh,
                      const std::string& N);

// ---- batch_checks.cpp: E1801, E1802, E1901 in the bodies; [is_split]
// says whether a value of a fn is split.
void check_batch_bodies(
    Checker& ck,
    const std::vector<FnInfo*>& fns,
    const std::string& N,
    const std::function<bool(const FnInfo*, const ast::Expr&)>& is_split);

}  // namespace ss::check::placement_detail
