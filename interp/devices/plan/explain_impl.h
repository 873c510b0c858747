#pragma once
// Walking the checked program for `ss explain`, shared by explain.cpp and
// explain_walk.cpp (which defines these). Not included outside
// interp/check/.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "interp/check/call_args.h"
#include "interp/devices/plan/explain.h"
#include "interp/parse/ast_walk.h"

namespace ss::check::comms::detail {

using ast::each_body_expr;
using ast::each_expr;
using check::given_args;
using check::param_arg;
// The first span at which each local is bound (let and for targets).
std::map<std::string, diag::Span> local_spans(const ast::FnDecl& d);
int param_index(const ops::OpDef& op, const char* name);

// `split H` (explain_heads.cpp): the collectives the op [e] runs by its
// plan (Note [Split heads]), and a value's layout ("split along H: each
// device holds 4 of H = 12"; "" when [t] is whole).
std::vector<Collective> heads_sends(const Program& P,
                                    const ast::Expr& e,
                                    const std::string& dim);
std::string heads_layout(const types::Type& t,
                         const std::string& dim,
                         int64_t size,
                         size_t n);
// A model's: its heads of the params split along [dim], and a copy (or,
// with [shard], a piece) of the others, in bytes per device; "" when no
// param is split.
std::string heads_model_layout(const types::Type& m,
                               const std::string& dim,
                               int64_t size,
                               size_t n,
                               bool shard,
                               std::optional<int64_t>& bytes_out);

}  // namespace ss::check::comms::detail
