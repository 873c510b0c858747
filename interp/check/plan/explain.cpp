// The DeviceTable of `ss explain` (explain.h; devices.md, "The `ss
// explain` report" and item 10). Everything here is read off the checked
// program: placement (FnInfo::placement), the batch split (param_split,
// batch_vars), the lowered operations (ExprInfo::allreduce) and the types,
// which give every count. Nothing is run.
// Size is in explain_size.cpp, the rendering in explain_render.cpp.
// Walking the program is in explain_walk.cpp.
#include "interp/check/plan/explain.h"

#include <algorithm>
#include <functional>
#include <set>
#include <sstream>
#include <tuple>

#include "interp/check/plan/explain_impl.h"
#include "interp/check/plan/heads_plan.h"
#include "interp/check/plan/placement_impl.h"
#include "ops/core/batch_split.h"

namespace ss::check::comms {

using types::Axis;
using types::Type;
using TK = types::Type::Kind;
using EK = ast::Expr::Kind;
using SK = ast::Stmt::Kind;
using Placement = FnInfo::Placement;
using namespace detail;
using placement_detail::find_batch;  // the checker's own rule

namespace {

// ------------------------------------------------------------ the analysis

// Bytes a fn sends per call: its float collectives (which count twice when
// value_and_grad differentiates it) and the rest.
// A collective that runs only in the backward pass (`shard params`'
// reduce-scatter of a gradient) counts only when it is differentiated.
// `shard params`' reduce-scatters are kept by bucket (their keys from the
// fn's own names), so that a bucket read in a caller and its callee counts
// once, as the backward pass sends it once (explain_shard.cpp).
struct FnBytes {
  Size flt, other, backward;
  std::map<std::string, Size> scatters;
  Size total() const { return flt + other; }
  Size differentiated() const {
    Size s = flt * 2 + other + backward;
    for (const auto& [key, bytes] : scatters) s += bytes;
    return s;
  }
};

// One thing a line sends.
struct Item {
  diag::Span at;
  bool is_call = false;
  Collective coll;
  bool coll_float = false;  // counts twice under value_and_grad
  std::string scatter_key;  // a reduce-scatter's bucket (FnBytes)
  CallSend call;
  FnBytes call_bytes;  // the callee's, for the caller's own sum
};

// [cs] as items at [at]; [float_forward]: forward ones set coll_float.
void add_items(std::vector<Collective> cs,
               diag::Span at,
               std::vector<Item>& out,
               bool float_forward = false) {
  for (Collective& c : cs) {
    Item it;
    it.at = at;
    it.coll_float = float_forward && !c.backward;
    it.coll = std::move(c);
    out.push_back(std::move(it));
  }
}

class Analysis {
 public:
  Analysis(const Program& p, const diag::SourceMap& sm)
      : P(p), sm_(sm), n_(p.devices().count()) {
    mesh_ = !p.mesh().empty();
    active_ = n_ > 1 || mesh_;
    shard_ = active_ && !mesh_ && p.devices().shard_params;
    if (n_ > 1 && !mesh_) dim_ = p.devices().split_dim;  // E2005: not both
    heads_ = !dim_.empty();
  }

  bool active() const { return active_; }

  // What [fn]'s body sends, item by item, in source order; under `split H`
  // with the size variables [vars] of one of its calls carrying the split
  // (Note [Size variables carry the split] in
  // interp/devices/lower/heads_sites.cpp).
  std::vector<Item> items(const FnInfo& fn, const HeadsVars& vars = {}) {
    std::vector<Item> out;
    if (!active_ || !fn.decl || fn.decl->is_extern) return out;
    ShardReads reads, *outer = reads_;  // a callee's walk has its own
    reads_ = &reads;
    HeadsVars caller = std::exchange(vars_, vars);
    each_body_expr(*fn.decl, [&](const ast::Expr& e) { on_expr(fn, e, out); });
    vars_ = std::move(caller);
    reads_ = outer;
    return out;
  }

  FnBytes bytes(const FnInfo& fn, const HeadsVars& vars = {}) {
    const std::string key = fn.name + heads_vars_key(vars);
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    if (!busy_.insert(key).second) return {};  // recursion: once
    FnBytes b;
    for (const Item& i : items(fn, vars)) {
      if (i.is_call) {
        b.flt += i.call_bytes.flt;
        b.other += i.call_bytes.other;
        b.backward += i.call_bytes.backward;
        for (const auto& [key, bytes] : i.call_bytes.scatters)
          b.scatters.try_emplace(key, bytes);
      } else if (!i.scatter_key.empty()) {
        b.scatters.try_emplace(i.scatter_key, i.coll.bytes);
      } else if (i.coll.backward) {
        b.backward += i.coll.bytes;
      } else if (i.coll_float) {
        b.flt += i.coll.bytes;
      } else {
        b.other += i.coll.bytes;
      }
    }
    busy_.erase(key);
    memo_[key] = b;
    return b;
  }

  /// Under `split H`: the size variables that carry the split in [fn], as
  /// the first call found binds them (null: none do). Complete once every
  /// fn's bytes have been counted.
  const HeadsVars* heads_vars(const std::string& fn) const {
    auto it = first_vars_.find(fn);
    return it == first_vars_.end() ? nullptr : &it->second;
  }

 private:
  Collective collective(
      const std::string& source,
      const std::string& what,
      const Size& count,
      types::DType dt,
      ops::Collective kind = ops::Collective::AllReduceSum) const {
    Collective c =
        collective_of(ops::collective_name(kind), source, what, count, dt);
    c.text = c.op + " of " + what +
             ", which adds up every device's part of "
             "the batch: " +
             figure(count, dt);
    return c;
  }

  // [args]: the argument of each of [callee]'s params (null: none), whose
  // types bind its size variables in a mesh program's figures.
  void add_call(const FnInfo& callee,
                const ast::Expr& e,
                bool diff,
                bool per_batch,
                std::vector<Item>& out,
                const std::vector<const ast::Expr*>& args = {},
                bool remat = false) {
    if (callee.placement != Placement::Workers) return;
    HeadsVars vars;
    if (heads_) vars = call_heads_vars(P, callee, args, vars_, dim_);
    if (!vars.empty()) first_vars_.try_emplace(callee.name, vars);
    FnBytes fb = bytes(callee, vars);
    if (shard_) fb.scatters = scatters_at_call(callee, args, fb.scatters);
    if (mesh_ || heads_) {
      std::map<std::string, Size> vars = call_sizes(P, callee, args);
      for (Size* s : {&fb.flt, &fb.other, &fb.backward}) *s = at_call(*s, vars);
    }
    Size total = diff ? fb.differentiated() : fb.total();
    if (total.zero()) return;
    Item it;
    it.at = e.span;
    it.is_call = true;
    it.call.fn = callee.name;
    it.call.bytes = total;
    it.call.differentiated = diff;
    it.call.per_batch = per_batch;
    // Through remat(f): the backward pass runs f's forward again, and its
    // collectives with it (the FSDP example's gathers).
    it.call.text = "inside `" + callee.name + "`" +
                   (per_batch ? ", for each batch" : "") +
                   (remat ? ", and as much again in the backward pass (remat "
                            "recomputes it)"
                          : "") +
                   ": " + bytes_text(total) + " per call";
    // Inside a fn that is itself differentiated, what a differentiated
    // call's backward sends is already counted: its all of it is "other".
    if (diff)
      it.call_bytes.other = total;
    else
      it.call_bytes = fb;
    if (remat) it.call_bytes.backward += fb.total();
    out.push_back(std::move(it));
    // The callee's gathers let this line's copies go.
    if (reads_ && !fb.total().zero()) {
      reads_->held = {};
      ++reads_->gathers;
    }
  }

  // [callee]'s reduce-scatter keys in the caller's names: a param's name
  // becomes its argument as written (`blk.up#0` of `block(m.blk, x)` is
  // `m.blk.up#0`); a key of the callee's locals is its own.
  std::map<std::string, Size> scatters_at_call(
      const FnInfo& callee,
      const std::vector<const ast::Expr*>& args,
      const std::map<std::string, Size>& scatters) const {
    std::map<std::string, Size> out;
    for (const auto& [key, bytes] : scatters) {
      std::string k = callee.name + ":" + key;
      for (size_t p = 0; p < callee.params.size() && p < args.size(); ++p) {
        const std::string& name = callee.params[p].name;
        const ast::Expr* a = args[p];
        if (!a || key.compare(0, name.size(), name) != 0 ||
            (key[name.size()] != '.' && key[name.size()] != '#'))
          continue;
        if (a->kind == EK::Name || a->kind == EK::Field)
          k = sm_.one_line(a->span) + key.substr(name.size());
        break;
      }
      out.try_emplace(k, bytes);
    }
    return out;
  }

  void on_expr(const FnInfo& fn, const ast::Expr& e, std::vector<Item>& out) {
    if (shard_ && fn.placement == Placement::Workers && reads_) {
      auto add = [&](std::vector<ShardSend> sends) {
        for (ShardSend& s : sends) {
          Item it;
          it.at = e.span;
          it.coll = std::move(s.coll);
          it.scatter_key = std::move(s.scatter_key);
          out.push_back(std::move(it));
        }
      };
      add(shard_used_again(e, *reads_));
      add(shard_param_reads(ShardWalk{P, sm_, n_, heads_, dim_}, e, *reads_));
    }
    // A float forward collective counts twice under value_and_grad (the
    // convention of devices.md item 10), though split H's send nothing
    // back in the backward pass.
    if (heads_ && fn.placement == Placement::Workers)
      add_items(heads_sends(P, e, dim_, vars_, n_), e.span, out, true);
    if (e.kind != EK::Call) return;
    const ExprInfo* info = P.info(&e);
    if (!info) return;
    const Resolution& r = info->resolution;
    if (r.kind == Resolution::Kind::Fn && r.fn) {
      if (!r.fn->decl || r.fn->decl->is_extern) return;
      std::vector<const ast::Expr*> args;
      for (size_t k = 0; k < r.fn->params.size(); ++k)
        args.push_back(param_arg(e, *info, int(k)));
      // A call through remat(f): directly, or a local bound to it.
      bool remat = false;
      if (e.callee && e.callee->kind == EK::Name)
        for (const auto& [name, t] : fn.locals)
          if (name == e.callee->name) remat = t.kind == TK::Fn && t.remat;
      if (e.callee && e.callee->kind == EK::Call)
        remat = P.type_of(e.callee.get()).remat;
      add_call(*r.fn, e, false, false, out, args, remat);
      return;
    }
    if (r.kind != Resolution::Kind::Builtin || !r.op) return;
    const ops::OpDef& op = *r.op;
    const std::string n = op.name;
    std::vector<const ast::Expr*> given = given_args(e);
    const ops::DeviceRule& rule = op.device;
    if (mesh_ && rule.mesh_payload)
      add_items(mesh_collectives(P, sm_, e, *info), e.span, out);
    if (info->allreduce && rule.lowering) {
      if (!heads_) lowering(n, *rule.lowering, e, *info, out);  // whole batch
      return;
    }
    if (rule.fn_arg == ops::FnArg::Differentiates && !given.empty()) {
      // A mesh sums no batch's gradient, only replicated leaves' in spmd fns.
      if (!mesh_) gradients(e, *info, out);
      // scaler=: whether any device's pieces hold an inf (Note [Loss
      // scaling] in interp/builtins/grad_scaler.cpp).
      if ((shard_ || heads_) && rule.sums_grad_pieces && param_arg(e, *info, 3))
        out.push_back(one_number(
            e, "whether any device's pieces of the gradients are inf or nan"));
      if (mesh_) add_items(mesh_leaf_sums(P, sm_, e, *info), e.span, out);
      const Type& ft = P.type_of(given[0]);
      if (ft.kind == TK::Fn)
        if (const FnInfo* f = P.fn(ft.fn_name))
          add_call(*f,
                   e,
                   true,
                   false,
                   out,
                   {given.begin() + 1, given.end()});  // f's, in order
      return;
    }
    if ((shard_ || heads_) && rule.sums_grad_pieces && !given.empty() &&
        P.type_of(given[0]).kind == TK::Grads)
      out.push_back(one_number(
          e, "the squares of every device's pieces of the gradients"));
    if (rule.fn_arg == ops::FnArg::PerBatch && !given.empty()) {
      const Type& ft = P.type_of(given[0]);
      if (ft.kind == TK::Fn)
        if (const FnInfo* f = P.fn(ft.fn_name))
          add_call(*f, e, false, true, out);
    }
    (void)fn;
  }

  // A lowered call's collective, counted from its entry's PayloadSize
  // (Note [An op's rule on several devices]).
  void lowering(const std::string& n,
                const ops::Lowering& low,
                const ast::Expr& e,
                const ExprInfo& info,
                std::vector<Item>& out) {
    // In Eval mode (batch_norm's running statistics) it runs per example:
    // nothing is sent. A mode that isn't written `Eval` is counted (Train
    // sends).
    if (low.eval_mode_param >= 0)
      if (const ast::Expr* md = param_arg(e, info, low.eval_mode_param))
        if (md->kind == EK::Name && md->name == "Eval") return;
    // A loss with reduction="none" runs per example too.
    if (low.per_example_with)
      if (const ast::Expr* r = param_arg(e, info, low.per_example_param))
        if (r->kind == EK::String && r->name == low.per_example_with) return;
    const Type& rt = info.type;
    const ops::PayloadSize& ps = low.size;
    types::DType dt = rt.kind == TK::Tensor ? rt.dtype : types::DType::F32;
    if (ps.dtype == ops::PayloadSize::DType::ComputeFloat &&
        dt != types::DType::F64)
      dt = types::DType::F32;
    if (ps.dtype == ops::PayloadSize::DType::F64) dt = types::DType::F64;
    Size factor = Size::constant(1);
    if (ps.of == ops::PayloadSize::Of::ResultNumel) {
      factor = numel(rt);
    } else if (ps.of == ops::PayloadSize::Of::ArgAxis) {
      if (const ast::Expr* x = param_arg(e, info, ps.arg)) {
        const Type& xt = P.type_of(x);
        if (xt.kind == TK::Tensor &&
            xt.shape.size() > static_cast<size_t>(ps.axis))
          factor = axis_size(xt.shape[ps.axis]);
      }
    }
    Size count = factor * ps.times + Size::constant(ps.plus);
    const bool one = factor.known() && factor.value() == 1;
    const char* words =
        !one && low.explain_many ? low.explain_many : low.explain_one;
    add_items({collective(n, "`" + n + "`" + words, count, dt, low.collective)},
              e.span,
              out,
              types::is_float(dt));
  }

  // value_and_grad's all-reduce of the params' gradients, one per dtype.
  // An all-reduce of one f64 at [e]: [what] summed over the devices.
  Item one_number(const ast::Expr& e, const std::string& what) {
    Item it;
    it.at = e.span;
    it.coll = collective(P.info(&e)->resolution.op->name,
                         "",
                         Size::constant(1),
                         types::DType::F64);
    it.coll.what = what;
    it.coll.text = "all-reduce of " + it.coll.what +
                   ", one number: " + figure(it.coll.count, types::DType::F64);
    return it;
  }

  void gradients(const ast::Expr& e,
                 const ExprInfo& info,
                 std::vector<Item>& out) {
    const ast::Expr* m = param_arg(e, info, 1);
    // `split H`: a whole param's gradient is one device's, its heads' are
    // each device's own: nothing is summed.
    if (!m || heads_) return;
    const Type& mt = P.type_of(m);
    // `shard params`: the gathers' VJPs reduce-scatter the gradients
    // (counted where the params are read); nothing is all-reduced.
    if (shard_ && mt.kind == TK::Model) return;
    std::map<types::DType, std::pair<std::vector<std::string>, Size>> by_dt;
    std::string owner;
    if (mt.kind == TK::Model) {
      std::vector<Leaf> leaves;
      model_leaves(mt, "", leaves);
      for (const Leaf& l : leaves) {
        if (l.buffer) continue;
        auto& [names, count] = by_dt[l.type.dtype];
        names.push_back("`" + l.path + "`");
        count += numel(l.type);
      }
      owner = mt.model ? mt.model->name : "the model";
    } else if (mt.kind == TK::Tensor) {
      auto& [names, count] = by_dt[mt.dtype];
      names.push_back("`" + sm_.one_line(m->span) + "`");
      count += numel(mt);
    } else {
      return;
    }
    for (auto& [dt, nc] : by_dt) {
      auto& [names, count] = nc;
      std::string what;
      if (mt.kind == TK::Tensor) {
        what = "the gradient of " + names[0];
      } else if (names.size() == 1) {
        what = "the gradient of `" + owner + "`'s param " + names[0];
      } else if (names.size() <= 6) {
        what = "the gradients of `" + owner + "`'s params " + join(names);
      } else {
        what = "the gradients of `" + owner + "`'s " +
               std::to_string(names.size()) + " " + types::dtype_name(dt) +
               " params";
      }
      Item it;
      it.at = e.span;
      it.coll = collective("value_and_grad", what, count, dt);
      it.coll.source = P.info(&e)->resolution.op->name;
      // Not on the tape: an enclosing value_and_grad's backward doesn't
      // run it again.
      it.coll_float = false;
      out.push_back(std::move(it));
    }
  }

  ShardReads* reads_ = nullptr;  // shard params: explain_shard.cpp

  const Program& P;
  const diag::SourceMap& sm_;
  size_t n_;
  bool active_ = false;
  bool mesh_ = false;
  bool shard_ = false;
  bool heads_ = false;  // `split H`: explain_heads.cpp
  std::string dim_;
  std::map<std::string, FnBytes> memo_;  // by fn and HeadsVars
  std::set<std::string> busy_;
  HeadsVars vars_;                               // the fn walked
  std::map<std::string, HeadsVars> first_vars_;  // heads_vars()
};

// In the text a line came from: the repl's input or loaded file (Note
// [Source origins]).
std::string file_of(const diag::SourceMap& sm, diag::Span s) {
  return s.file < sm.size() ? sm.file(sm.origin(s).file).path
                            : std::string("?");
}

uint32_t line_of(const diag::SourceMap& sm, diag::Span s) {
  if (s.file >= sm.size()) return 0;
  s = sm.origin(s);
  return sm.line_col(s.file, s.begin).line;
}

std::string trim(std::string_view v) {
  size_t a = v.find_first_not_of(" \t\r");
  if (a == std::string_view::npos) return "";
  size_t b = v.find_last_not_of(" \t\r");
  return std::string(v.substr(a, b - a + 1));
}

}  // namespace

// ------------------------------------------------------------ the table

DeviceTable build_table(const Program& P, const diag::SourceMap& sm) {
  DeviceTable t;
  const DeviceList& dl = P.devices();
  t.count = dl.count();
  t.devices = dl.kind;
  if (!dl.ids.empty()) {
    t.devices += "[";
    for (size_t i = 0; i < dl.ids.size(); ++i)
      t.devices += (i ? " " : "") + std::to_string(dl.ids[i]);
    t.devices += "]";
  }
  const bool several = t.count > 1;
  const std::string N = std::to_string(t.count);
  for (const auto& o : dl.options) {
    std::string s;
    for (const std::string& w : o) s += (s.empty() ? "" : " ") + w;
    t.options.push_back(s);
    if (several && s != "shard params" && s != "deterministic" &&
        !(o.size() == 2 && o[0] == "split"))
      t.notes.push_back(s +
                        ": not in this build; the program runs data "
                        "parallel, and the table is what that sends");
  }
  const bool mesh = !P.mesh().empty();
  int64_t mesh_size = 1;
  for (const MeshAxis& a : P.mesh()) mesh_size *= a.size;
  const std::string instances = std::to_string(mesh_size);
  if (mesh) t.mesh = mesh_words(P);
  t.example_batch = example_batch(P);
  const bool heads = several && !dl.split_dim.empty() && P.mesh().empty();
  if (heads) t.split_dim = dl.split_dim;
  t.deterministic = dl.deterministic;
  if (t.deterministic && P.mesh().empty()) t.deterministic_heads = dl.split_dim;
  if (t.deterministic && t.example_batch && t.deterministic_heads.empty())
    t.chunk = ops::chunk_size(*t.example_batch);
  if (several && t.example_batch && !heads)
    t.example_split =
        t.deterministic
            ? ops::chunk_split(*t.example_batch, static_cast<int>(t.count))
            : ops::batch_split(*t.example_batch, static_cast<int>(t.count));

  Analysis an(P, sm);
  // Which fns typed by size variables are given values split by heads.
  if (heads)
    for (const ast::Module& m : P.modules())
      for (const ast::FnDecl& d : m.fns)
        if (const FnInfo* f = P.fn(d.name);
            f && f->decl == &d && f->placement == Placement::Workers)
          an.bytes(*f);

  // User fns in source order (the stdlib's are counted inside calls).
  std::vector<const FnInfo*> fns;
  for (const ast::Module& m : P.modules())
    for (const ast::FnDecl& d : m.fns) {
      const FnInfo* f = P.fn(d.name);
      if (f && f->decl == &d && !f->is_stdlib) fns.push_back(f);
    }

  std::string split_words = "split across the " + N + " devices along ";
  std::string share = ", each holding its share of the batch";
  if (!t.example_split.empty()) {
    std::string parts;
    for (size_t i = 0; i < t.example_split.size(); ++i)
      parts += (i ? "/" : "") + std::to_string(t.example_split[i]);
    share += " (" + parts + " for a batch of " +
             std::to_string(*t.example_batch) + ")";
  }

  // Note [The attention written out] (interp/check/fusion.cpp): the
  // scores and probabilities of a fused attention are never computed.
  std::map<std::pair<uint32_t, uint32_t>, std::string> fused_at;
  for (const auto& [call, f] : P.fused()) {
    const uint32_t from = line_of(sm, f.scores->span);
    const uint32_t to = line_of(sm, call->span);
    std::string text = "not computed: lines " + std::to_string(from) + "–" +
                       std::to_string(to) + " run as one " + f.op->name + "(" +
                       f.q->name + ", " + f.k->name + ", " + f.v->name +
                       (f.causal ? ", causal=true" : "") + ")";
    for (const ast::Stmt* let : {f.scores, f.probs}) {
      const diag::Span& at = let->targets[0].span;
      fused_at[{at.file, at.begin}] = text;
    }
  }

  for (const FnInfo* fn : fns) {
    static const HeadsVars kNone;
    const HeadsVars* hv = an.heads_vars(fn->name);
    const HeadsVars& vars = hv ? *hv : kNone;
    FnEntry fe;
    fe.name = fn->name;
    fe.placement = fn->placement;
    fe.placement_words = placement_words(fn->placement);
    fe.reason = fn->placement_reason;
    fe.file = file_of(sm, fn->decl->name_span);
    fe.line = line_of(sm, fn->decl->name_span);
    if (fn->placement_at)
      fe.reason_at = file_of(sm, *fn->placement_at) + ":" +
                     std::to_string(line_of(sm, *fn->placement_at));
    switch (fn->placement) {
      case Placement::Controller:
        fe.text = "runs in the controller: " + fe.reason;
        if (!fe.reason_at.empty()) fe.text += " (" + fe.reason_at + ")";
        break;
      case Placement::Anywhere:
        fe.text = "runs anywhere: where it's called";
        break;
      case Placement::Workers:
        if (mesh && !fn->decl->is_extern) {
          Size b = an.bytes(*fn).total();
          fe.bytes_per_call = b;
          const std::string each = b.zero() ? "" : bytes_text(b) + " per call";
          if (fn->decl->is_spmd)
            fe.text = "runs on each of the " + instances +
                      " instances of the mesh, on its blocks, and " +
                      (b.zero() ? "sends nothing" : "each sends " + each);
          else if (several)
            fe.text = "runs on the workers and " +
                      (b.zero() ? "sends nothing" : "sends " + each);
          else
            fe.text = "runs on the one device" +
                      (b.zero() ? std::string()
                                : "; the instances of the spmd fns it calls "
                                  "each send " +
                                      each);
        } else if (!several) {
          fe.text = "runs on the workers; on one device nothing is sent";
        } else if (fn->decl->is_extern) {
          fe.text =
              "runs on the workers, on each device's examples; it "
              "sends nothing";
          fe.bytes_per_call = Size{};
        } else {
          Size b = an.bytes(*fn, vars).total();
          fe.bytes_per_call = b;
          fe.text = b.zero() ? "runs on the workers and sends nothing"
                             : "runs on the workers and sends " +
                                   bytes_text(b) + " per call";
        }
        break;
    }
    t.fns.push_back(fe);

    // Values: params, then locals.
    std::map<std::string, diag::Span> spans = local_spans(*fn->decl);
    auto layout = [&](const std::string& name,
                      const Type& type,
                      bool param,
                      bool split_param,
                      std::optional<diag::Span> at) {
      ValueLayout v;
      v.fn = fn->name;
      v.name = name;
      v.param = param;
      v.type = type.str();
      if (at) {
        v.file = file_of(sm, *at);
        v.line = line_of(sm, *at);
      }
      if (mesh && fn->decl->is_spmd) {
        v.kind = ValueLayout::Kind::Blocks;
        v.text = mesh_layout(P, type);
      } else if (!several) {
        v.kind = ValueLayout::Kind::OneDevice;
        v.text = "whole on the one device";
      } else if (fn->placement == Placement::Controller) {
        v.kind = ValueLayout::Kind::Controller;
        v.text = "in the controller";
      } else if (fn->placement == Placement::Anywhere) {
        v.kind = ValueLayout::Kind::Anywhere;
        v.text = "where `" + fn->name + "` is called (it runs anywhere)";
      } else if (std::string h = heads
                                     ? heads_layout(put_heads_vars(type, vars),
                                                    dl.split_dim,
                                                    P.dims().at(dl.split_dim),
                                                    t.count)
                                     : "";
                 !h.empty()) {
        v.kind = ValueLayout::Kind::Split;
        v.axis = dl.split_dim;
        v.text = h;
      } else if (std::string h =
                     heads && type.kind == TK::Model
                         ? heads_model_layout(put_heads_vars(type, vars),
                                              dl.split_dim,
                                              P.dims().at(dl.split_dim),
                                              t.count,
                                              dl.shard_params,
                                              v.model_bytes)
                         : "";
                 !h.empty()) {
        v.kind = dl.shard_params ? ValueLayout::Kind::ModelShards
                                 : ValueLayout::Kind::ModelCopy;
        v.text = h;
      } else if (type.kind == TK::Model && dl.shard_params) {
        v.kind = ValueLayout::Kind::ModelShards;
        v.text = shards_text(type, t.count, v.model_bytes);
      } else if (type.kind == TK::Grads && dl.shard_params) {
        v.kind = ValueLayout::Kind::ModelShards;
        v.text = "each device holds its pieces of the gradients";
      } else if (type.kind == TK::Optim && dl.shard_params) {
        v.kind = ValueLayout::Kind::OptimShards;
        v.text =
            "each device holds the state of its pieces of its model's "
            "params";
      } else if (type.kind == TK::Model) {
        v.kind = ValueLayout::Kind::ModelCopy;
        std::vector<Leaf> leaves;
        model_leaves(type, "", leaves);
        Size bytes;
        for (const Leaf& l : leaves)
          bytes += numel(l.type) * types::dtype_size(l.type.dtype);
        if (bytes.known()) v.model_bytes = bytes.value();
        v.text = "a copy on every device: " + bytes_text(bytes) +
                 " of params and buffers each";
      } else if (type.kind == TK::Optim) {
        v.kind = ValueLayout::Kind::OptimCopy;
        v.text = "a copy on every device, as its model";
      } else if (const Axis* ax = find_batch(type, fn->batch_vars);
                 !heads && ax && (split_param || !param)) {
        v.kind = ValueLayout::Kind::Split;
        v.axis = axis_name(*ax);
        v.text = split_words + v.axis + share;
      } else if (!heads && param && split_param && type.kind == TK::Batch &&
                 !type.shape.empty()) {
        v.kind = ValueLayout::Kind::Split;
        v.axis = axis_name(type.shape[0]);
        v.text = split_words + v.axis + share;
      } else {
        v.kind = ValueLayout::Kind::Whole;
        v.text = "whole on every device";
      }
      t.values.push_back(std::move(v));
    };
    for (size_t k = 0; k < fn->params.size(); ++k) {
      const ParamInfo& p = fn->params[k];
      diag::Span at = p.decl ? p.decl->name_span : fn->decl->name_span;
      bool split = k < fn->param_split.size() && fn->param_split[k];
      layout(p.name, p.type, true, split, at);
    }
    std::set<std::string> seen;
    for (const auto& [name, type] : fn->locals) {
      if (!seen.insert(name).second) continue;
      auto it = spans.find(name);
      layout(name,
             type,
             false,
             false,
             it == spans.end() ? std::nullopt
                               : std::optional<diag::Span>(it->second));
      if (it != spans.end())
        if (auto f = fused_at.find({it->second.file, it->second.begin});
            f != fused_at.end()) {
          t.values.back().fused = f->second;
        }
    }

    // Lines.
    if (!an.active() || fn->decl->is_extern) continue;
    std::map<std::pair<uint32_t, uint32_t>, LineSends> by_line;
    std::vector<std::pair<uint32_t, uint32_t>> order;
    for (Item& i : an.items(*fn, vars)) {
      auto key = std::make_pair(sm.origin(i.at).file, line_of(sm, i.at));
      auto [it, fresh] = by_line.try_emplace(key);
      LineSends& l = it->second;
      if (fresh) {
        order.push_back(key);
        if (mesh) l.among = "the " + instances + " instances";
        l.file = file_of(sm, i.at);
        l.line = key.second;
        l.fn = fn->name;
        l.source = trim(sm.line_text(key.first, key.second));
      }
      if (i.is_call) {
        l.total += i.call.bytes;
        l.calls.push_back(std::move(i.call));
      } else {
        if (!i.coll.backward) l.total += i.coll.bytes;
        l.collectives.push_back(std::move(i.coll));
      }
    }
    std::sort(order.begin(), order.end());
    for (const auto& key : order) {
      LineSends& l = by_line[key];
      l.text = render_line(l, t.count);
      t.lines.push_back(std::move(l));
    }
  }
  return t;
}

}  // namespace ss::check::comms
