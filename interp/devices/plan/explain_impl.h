#pragma once
// Walking the checked program for `ss explain`, shared by explain.cpp and
// explain_walk.cpp (which defines these). Not included outside
// interp/check/.

#include <functional>
#include <map>
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

}  // namespace ss::check::comms::detail
