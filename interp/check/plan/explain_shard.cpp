// `ss explain` with `shard params`: the all-gathers where params are read
// and the reduce-scatters of their gradients, counted as the ranks run them
// (Note [Param buckets] in interp/devices/lower/param_buckets.cpp; Note
// [Gathered copies] in gathered_copies.h):
//  - a read gathers its param's bucket unless it is the bucket the last
//    gather on this line fetched: `m.a`, `m.b`, `m.a` on one line with a
//    and b in buckets of their own is three all-gathers, not two;
//  - under value_and_grad each gather lets the earlier copies go, so an
//    operand read straight from a param (`m.a @ m.b`) whose copy a later
//    gather let go is gathered again, alone, where its op uses it;
//  - a bucket's gradients are reduce-scattered once per backward pass,
//    however many lines and fns read it: each reduce-scatter has a key
//    (the model as written from the fn's own names, and the bucket), by
//    which a caller counts a callee's once (explain.cpp's FnBytes).
#include <algorithm>

#include "interp/check/plan/explain_impl.h"
#include "ops/core/batch_split.h"

namespace ss::check::comms::detail {

namespace {

using EK = ast::Expr::Kind;
using TK = types::Type::Kind;

}  // namespace

std::vector<ShardSend> shard_param_reads(const ShardWalk& w,
                                         const ast::Expr& e,
                                         ShardReads& reads) {
  const Program& P = w.P;
  types::Type mt;
  std::string owner;  // `Mlp`, or the argument as written: `m.l1`
  std::string base;   // the model value read, as written
  std::string only;   // the field read; "" for all of them
  bool model = false;
  if (e.kind == EK::Field && e.lhs) {
    const types::Type& bt = P.type_of(e.lhs.get());
    if ((bt.kind != TK::Model && bt.kind != TK::Grads) || !bt.model) return {};
    const types::FieldInfo* fi = bt.model->field(e.name);
    if (!fi || fi->buffer) return {};
    if (types::model_field_type(bt, *fi).kind != TK::Tensor) return {};
    mt = bt;
    only = e.name;
    owner = bt.model->name;
    base = w.sm.one_line(e.lhs->span);
    model = bt.kind == TK::Model;
  } else if (e.kind == EK::Call) {
    const ExprInfo* info = P.info(&e);
    if (!info || info->resolution.kind != Resolution::Kind::Builtin ||
        !info->resolution.op)
      return {};
    const ops::DeviceRule& rule = info->resolution.op->device;
    // value_and_grad, update, mean_logs pass the model on; they don't
    // read it.
    if (rule.device_work || rule.fn_arg != ops::FnArg::None ||
        rule.kind == ops::DeviceRule::Kind::Host)
      return {};
    for (const ast::Expr* a : given_args(e)) {
      const types::Type& at = P.type_of(a);
      if (at.kind != TK::Model || !at.model) continue;
      mt = at;
      owner = base = w.sm.one_line(a->span);
      model = true;
      break;
    }
    if (!model) return {};
  } else {
    return {};
  }
  // The model's sharded params, in the runtime's buckets.
  std::vector<Leaf> leaves, sharded;
  model_leaves(mt, "", leaves);
  for (const Leaf& l : leaves)
    if (!l.buffer && numel(l.type).known() &&
        !(w.heads && heads_axis(l.type, w.dim) >= 0))  // split by H
      sharded.push_back(l);
  const std::vector<int> bucket = shard_bucket_numbers(sharded);
  std::vector<int> read;  // buckets in the order the op reads them
  for (size_t i = 0; i < sharded.size(); ++i)
    if ((only.empty() || sharded[i].path == only) &&
        std::find(read.begin(), read.end(), bucket[i]) == read.end())
      read.push_back(bucket[i]);
  const uint32_t line = w.sm.line_col(e.span.file, e.span.begin).line;
  std::vector<ShardSend> out;
  for (int b : read) {
    std::vector<std::string> names;
    Size piece, padded;
    types::DType dt = types::DType::F32;
    for (size_t i = 0; i < sharded.size(); ++i) {
      if (bucket[i] != b) continue;
      const int64_t k =
          ops::shard_piece_numel(numel(sharded[i].type).value(), int(w.n));
      names.push_back("`" + sharded[i].path + "`");
      piece += Size::constant(k);
      padded += Size::constant(k * int64_t(w.n));
      dt = sharded[i].type.dtype;
    }
    const std::string key = base + "#" + std::to_string(b);
    const std::string whose = "`" + owner + "`'s param" +
                              (names.size() == 1 ? " " : "s ") + join(names);
    const ShardReads::Held here{e.span.file, line, key};
    if (reads.held != here) {
      reads.held = here;
      ++reads.gathers;
      ShardSend g;
      g.coll = collective_of("all-gather", "shard params", whose, piece, dt);
      g.coll.text = "all-gather of " + whose +
                    ", from every device's piece: " + figure(piece, dt);
      out.push_back(std::move(g));
    }
    for (size_t i = 0; i < sharded.size() && !only.empty(); ++i)
      if (sharded[i].path == only)
        reads.direct[&e] = {reads.gathers,
                            Size::constant(ops::shard_piece_numel(
                                numel(sharded[i].type).value(), int(w.n))),
                            dt,
                            "`" + owner + "`'s param `" + only + "`"};
    // `split H`: every device has the whole batch, so each holds the
    // whole gradient and keeps its piece: nothing to reduce-scatter.
    if (!model || !types::is_float(dt) || w.heads) continue;
    if (!reads.scattered.insert(key).second) continue;
    ShardSend rs;
    rs.coll =
        collective_of("reduce-scatter", "shard params", whose, padded, dt);
    rs.coll.backward = true;
    rs.coll.text = "in the backward pass: reduce-scatter of the gradient" +
                   std::string(names.size() == 1 ? "" : "s") + " of " + whose +
                   ", which adds up every device's part of the batch into "
                   "the pieces: " +
                   figure(padded, dt);
    rs.scatter_key = key;
    out.push_back(std::move(rs));
  }
  return out;
}

std::vector<ShardSend> shard_used_again(const ast::Expr& e, ShardReads& reads) {
  std::vector<const ast::Expr*> operands;
  if (e.kind == EK::Binary) {
    operands = {e.lhs.get(), e.rhs.get()};
  } else if (e.kind == EK::Call) {
    for (const ast::Arg& a : e.args) operands.push_back(a.value.get());
  }
  std::vector<ShardSend> out;
  for (const ast::Expr* x : operands) {
    auto it = x ? reads.direct.find(x) : reads.direct.end();
    if (it == reads.direct.end() || it->second.after >= reads.gathers) continue;
    // A later gather let its copy go: its op gathers it again, alone.
    // Copies are let go only on value_and_grad's tape, so this runs only
    // where the fn is differentiated, and counts there alone (as a
    // collective of the backward pass does).
    const ShardReads::Direct& d = it->second;
    ShardSend g;
    g.coll =
        collective_of("all-gather", "shard params", d.whose, d.piece, d.dtype);
    g.coll.backward = true;
    g.coll.text = "under value_and_grad: all-gather of " + d.whose +
                  " again, alone, for this op (a later read let its copy "
                  "go): " +
                  figure(d.piece, d.dtype);
    out.push_back(std::move(g));
    reads.direct.erase(it);
  }
  return out;
}

}  // namespace ss::check::comms::detail
