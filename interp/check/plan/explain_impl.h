#pragma once
// Walking the checked program for `ss explain`, shared by explain.cpp and
// explain_walk.cpp (which defines these). Not included outside
// interp/check/.

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "interp/check/call_args.h"
#include "interp/check/plan/explain.h"
#include "interp/check/plan/heads_plan.h"
#include "interp/parse/ast_walk.h"

namespace ss::check::comms::detail {

using ast::each_body_expr;
using ast::each_expr;
using check::given_args;
using check::param_arg;
// The first span at which each local is bound (let and for targets).
std::map<std::string, diag::Span> local_spans(const ast::FnDecl& d);
int param_index(const ops::OpDef& op, const char* name);

// Counts (explain_size.cpp).
Size operator+(Size a, const Size& b);
Size times(const Size& a, const Size& b);
Size variable(const std::string& name);
/// An axis's name as the report writes it (its label, a dim's name).
std::string axis_name(const types::Axis& a);
/// An axis's size: a number, or its name (a group: the product); of the
/// whole axis A for `A/x`.
Size axis_size(const types::Axis& a);
/// The values of a tensor type, whole (splits are not divided out).
Size numel(const types::Type& t);
/// `203,264 × f32 = 813,056 bytes (794 KiB)`.
std::string figure(const Size& count, types::DType dt);
/// A collective [op] ("all-reduce") from [source] of [count] values of
/// [dt], combining [what]: every field but its text.
Collective collective_of(std::string op,
                         std::string source,
                         std::string what,
                         const Size& count,
                         types::DType dt);
/// "a half", "a third", "a quarter", "1/8": one of [n] equal parts.
std::string part_of(int64_t n);
/// `a`, `a and b`, `a, b and c`.
std::string join(const std::vector<std::string>& xs);

struct Leaf {
  std::string path;
  types::Type type;
  bool buffer = false;
};
/// `shard params`: the bucket number of each of [leaves] (a model's
/// sharded params, its sub-models' by their dotted paths): ops::
/// shard_buckets over the params of each path prefix, the runtime's rule
/// (Note [Param buckets] in interp/devices/lower/param_buckets.cpp).
std::vector<int> shard_bucket_numbers(const std::vector<Leaf>& leaves);
/// Every tensor of a model type, sub-models' by their dotted paths.
void model_leaves(const types::Type& m,
                  const std::string& prefix,
                  std::vector<Leaf>& out,
                  int depth = 0);

/// `shard params`' layout of a model: "each device holds a third of every
/// param of Mlp, 271,024 bytes (265 KiB) of its params"; [bytes_out]: its
/// pieces' bytes, when known.
std::string shards_text(const types::Type& type,
                        size_t n,
                        std::optional<int64_t>& bytes_out);
/// The file's first `batches(n)` with n a number or a dim.
std::optional<int64_t> example_batch(const Program& P);

// `shard params` (explain_shard.cpp): what reading params sends.
struct ShardWalk {
  const Program& P;
  const diag::SourceMap& sm;
  size_t n;  // devices
  bool heads = false;
  std::string dim;  // `split H`'s
};
/// The runtime's state along one fn's walk: the bucket the last gather
/// fetched, the gathers so far, the params read straight as an operand,
/// and the buckets whose gradients are reduce-scattered.
struct ShardReads {
  struct Held {
    uint32_t file = 0, line = 0;
    std::string key;
    bool operator!=(const Held& o) const {
      return file != o.file || line != o.line || key != o.key;
    }
  };
  struct Direct {
    int after = 0;  // gathers when it was read
    Size piece;     // its own piece
    types::DType dtype = types::DType::F32;
    std::string whose;
  };
  Held held;
  int gathers = 0;
  std::map<const ast::Expr*, Direct> direct;
  std::set<std::string> scattered;
};
/// One collective of `shard params`; a reduce-scatter has the key of its
/// bucket (the model as written, `#`, the bucket's number).
struct ShardSend {
  Collective coll;
  std::string scatter_key;
};
/// The gathers and reduce-scatters of the params [e] reads: a field
/// (`m.w1`) or a builtin's model argument (linear(m.l1, x)).
std::vector<ShardSend> shard_param_reads(const ShardWalk& w,
                                         const ast::Expr& e,
                                         ShardReads& reads);
/// The gathers again of [e]'s operands read straight from a param whose
/// copy a later gather let go (`m.a @ m.b`, a and b in two buckets).
std::vector<ShardSend> shard_used_again(const ast::Expr& e, ShardReads& reads);

// Mesh programs (explain_mesh.cpp; docs/explain.md, "Mesh programs").
/// "mesh x=4 y=2: ..." for the report's first line.
std::string mesh_words(const Program& P);
/// The layout of a value of [type] in an spmd fn.
std::string mesh_layout(const Program& P, const types::Type& type);
/// What a collective call [e] sends: its forward item (none for pvary)
/// and, for a float operand, its transpose's in the backward pass.
/// The sizes a call binds [callee]'s size variables to: each param's axes
/// against its argument's [args] (by param; null: none), whole sizes (an
/// spmd fn's `A/x` binds A to the global size, spmd.md).
std::map<std::string, Size> call_sizes(
    const Program& P,
    const FnInfo& callee,
    const std::vector<const ast::Expr*>& args);
/// [s] with [vars] put in, blocks' `(m/4)` included.
Size at_call(const Size& s, const std::map<std::string, Size>& vars);
std::vector<Collective> mesh_collectives(const Program& P,
                                         const diag::SourceMap& sm,
                                         const ast::Expr& e,
                                         const ExprInfo& info);
/// value_and_grad or grad [e] inside an spmd fn: the all-reduce, in its
/// backward pass, of each leaf's gradient over the mesh axes the leaf is
/// the same along (Note [A gradient inside an instance] in
/// ops/registry/mesh_comm.h). None outside an spmd fn's body.
std::vector<Collective> mesh_leaf_sums(const Program& P,
                                       const diag::SourceMap& sm,
                                       const ast::Expr& e,
                                       const ExprInfo& info);
// `split H` (explain_heads.cpp): the collectives the op [e] runs by its
// plan (Note [Split heads]), its types read with [vars] put in (Note [Size
// variables carry the split]), on [n] devices, and a value's layout ("split
// along H: each device holds 4 of H = 12"; "" when [t] is whole).
std::vector<Collective> heads_sends(const Program& P,
                                    const ast::Expr& e,
                                    const std::string& dim,
                                    const HeadsVars& vars,
                                    size_t n);
/// The size variables of [callee] that carry the split at a call with
/// [args] (each param's argument, or null), from a fn walked with [caller].
HeadsVars call_heads_vars(const Program& P,
                          const FnInfo& callee,
                          const std::vector<const ast::Expr*>& args,
                          const HeadsVars& caller,
                          const std::string& dim);
/// [vars] as text, to key a fn's counts by the call's binding.
std::string heads_vars_key(const HeadsVars& vars);
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
