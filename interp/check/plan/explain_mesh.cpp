// `ss explain` for a program with a `mesh` (docs/explain.md, "Mesh
// programs"; issue 13 item 6): the mesh line of the report, each value's
// layout in an spmd fn (its blocks), and what each collective call sends.
//
// Note [Mesh figures]
// A collective's figure is the payload each instance hands to it, values ×
// dtype size, as devices.md item 10 counts every other collective: its
// operand's block, whose split axes are divided by their mesh axes' sizes
// (`[m/x n]` on x = 4: m/4 · n values). pvary hands nothing. Its transpose
// (spmd.md's table) runs in the backward pass on the cotangent of its
// result, a block of the result's type, and is listed as "in the backward
// pass: ..." (not in the line's forward total), as `shard params`' reduce-
// scatters are; psum's and pmean's transposes move nothing. The words are
// each collective's row's (ops::MeshPayload), never matched by name here.
// A size variable's block is written `(m/4)` (a name of its own in Size).
#include <algorithm>
#include <set>

#include "interp/check/call_args.h"
#include "interp/check/plan/explain_impl.h"

namespace ss::check::comms::detail {

using types::Axis;
using types::Type;
using TK = types::Type::Kind;

namespace {

// How many instances [axes] span: the product of their sizes.
int64_t ways(const Program& P, const std::vector<std::string>& axes) {
  return check::mesh_ways(P.mesh(), axes);
}

Axis unsplit(Axis a) {
  a.split.clear();
  return a;
}

// The block's size along [a]: its size over its mesh axes'.
Size block_size(const Program& P, const Axis& a) {
  Size whole = axis_size(a);
  if (a.split.empty()) return whole;
  const int64_t k = ways(P, a.split.axes);
  if (whole.known()) return Size::constant(whole.value() / k);
  return variable("(" + unsplit(a).str() + "/" + std::to_string(k) + ")");
}

Size block_numel(const Program& P, const Type& t) {
  Size s = Size::constant(1);
  for (const Axis& a : t.shape) s = times(s, block_size(P, a));
  return s;
}

// "4 of D = 16", "2 of 8", "m/4 of m".
std::string holds(const Program& P, const Axis& a) {
  Size b = block_size(P, a);
  const std::string name = unsplit(a).str();
  if (!b.known())
    return name + "/" + std::to_string(ways(P, a.split.axes)) + " of " + name;
  if (a.kind == Axis::Kind::Lit) return b.str() + " of " + name;
  return b.str() + " of " + name + " = " + axis_size(a).str();
}

// Every tensor of [t] by dtype, its block's values (tuples, lists and a
// model's gradients hold several).
void payload(const Program& P,
             const Type& t,
             std::map<types::DType, Size>& out,
             int depth = 0) {
  if (depth > 32) return;
  if (t.kind == TK::Tensor) {
    out[t.dtype] += block_numel(P, t);
  } else if (t.kind == TK::Tuple || t.kind == TK::List) {
    for (const Type& e : t.elems) payload(P, e, out, depth + 1);
  } else if (t.kind == TK::Grads || t.kind == TK::Model) {
    Type m = t;
    m.kind = TK::Model;
    std::vector<Leaf> leaves;
    model_leaves(m, "", leaves);
    for (const Leaf& l : leaves)
      if (!l.buffer) out[l.type.dtype] += block_numel(P, l.type);
  }
}

std::vector<std::string> mesh_names(const Program& P) {
  std::vector<std::string> out;
  for (const MeshAxis& m : P.mesh()) out.push_back(m.name);
  return out;
}

// The mesh axes of [all] not in [some], in mesh order.
std::vector<std::string> minus(const std::vector<std::string>& all,
                               const std::set<std::string>& some) {
  std::vector<std::string> out;
  for (const std::string& a : all)
    if (!some.count(a)) out.push_back(a);
  return out;
}

std::string model_layout(const Program& P, const Type& t) {
  std::vector<Leaf> leaves;
  model_leaves(t, "", leaves);
  Size bytes;
  for (const Leaf& l : leaves)
    bytes += block_numel(P, l.type) * types::dtype_size(l.type.dtype);
  const std::string name = t.model ? t.model->name : "the model";
  std::set<std::string> used;
  std::string s;
  if (!t.model_split.empty()) {
    used.insert(t.model_split.begin(), t.model_split.end());
    s = "each instance holds " + part_of(ways(P, t.model_split.axes)) +
        " of every param of " + name + " (the first axis split over " +
        join(t.model_split.axes) + "): " + bytes_text(bytes) +
        " of params and buffers";
  } else if (!t.field_splits.empty()) {
    // Fields split alike are named together: "`w` and `b` (the first
    // axis split over stages)".
    std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>>
        by_split;
    for (const auto& [f, split] : t.field_splits) {
      used.insert(split.begin(), split.end());
      auto it =
          std::find_if(by_split.begin(), by_split.end(), [&](const auto& g) {
            return g.first == split.axes;
          });
      if (it == by_split.end())
        by_split.push_back({split.axes, {"`" + f + "`"}});
      else
        it->second.push_back("`" + f + "`");
    }
    std::vector<std::string> fields;
    for (const auto& [split, names] : by_split)
      fields.push_back(join(names) + " (the first axis split over " +
                       join(split) + ")");
    s = "each instance holds blocks of " + join(fields) +
        " and the rest whole: " + bytes_text(bytes) + " of params and buffers";
  } else {
    return "a copy on every instance: " + bytes_text(bytes) +
           " of params and buffers each";
  }
  std::vector<std::string> same = minus(mesh_names(P), used);
  if (!same.empty()) s += "; the same on every instance along " + join(same);
  return s;
}

}  // namespace

std::string mesh_words(const Program& P) {
  std::string decl, index, device;
  int64_t count = 1;
  const std::vector<MeshAxis>& mesh = P.mesh();
  static const char kLetters[] = "ijklmn";
  for (size_t k = 0; k < mesh.size(); ++k) {
    count *= mesh[k].size;
    decl += (k ? " " : "") + mesh[k].name + "=" + std::to_string(mesh[k].size);
    const std::string letter(1, kLetters[k % 6]);
    index += (k ? " " : "") + mesh[k].name + "=" + letter;
    int64_t stride = 1;
    for (size_t j = k + 1; j < mesh.size(); ++j) stride *= mesh[j].size;
    device += (k ? " + " : "") + letter +
              (stride > 1 ? "·" + std::to_string(stride) : "");
  }
  std::string s = "mesh " + decl + ": each spmd fn runs as " +
                  std::to_string(count) + " instances";
  if (P.devices().count() > 1)
    return s + ", the one at " + index + " on device " + device;
  return s + ", simulated in this process";
}

std::string mesh_layout(const Program& P, const Type& t) {
  if (t.kind == TK::Model) return model_layout(P, t);
  if (t.kind == TK::Grads)
    return "each instance holds the gradients of its blocks of the params";
  if (t.kind != TK::Tensor) return "whole, the same on every instance";
  std::vector<std::string> over, parts;
  std::set<std::string> split;
  for (const Axis& a : t.shape) {
    if (a.split.empty()) continue;
    for (const std::string& m : a.split)
      if (split.insert(m).second) over.push_back(m);
    parts.push_back(holds(P, a));
  }
  // A parameter varies over the axes its type splits (spmd.md).
  std::set<std::string> varying(t.varying.begin(), t.varying.end());
  varying.insert(split.begin(), split.end());
  std::vector<std::string> differs;
  for (const std::string& v : t.varying)
    if (!split.count(v)) differs.push_back(v);
  std::vector<std::string> same = minus(mesh_names(P), varying);
  if (over.empty() && differs.empty())
    return "whole, the same on every instance";
  std::string s = over.empty() ? "no axis split"
                               : "blocks split over " + join(over) +
                                     ": each instance holds " + join(parts);
  if (!differs.empty()) s += "; it differs along " + join(differs);
  if (!same.empty()) s += "; the same on every instance along " + join(same);
  return s;
}

std::map<std::string, Size> call_sizes(
    const Program& P,
    const FnInfo& callee,
    const std::vector<const ast::Expr*>& args) {
  std::map<std::string, Size> vars;
  for (size_t k = 0; k < callee.params.size() && k < args.size(); ++k) {
    if (!args[k]) continue;
    const Type& pt = callee.params[k].type;
    const Type& at = P.type_of(args[k]);
    // A tensor's axes, or a model's dim arguments (`l: Linear[i j]`).
    const bool model = pt.model && pt.kind == at.kind && pt.model == at.model;
    const std::vector<Axis>& ps = model ? pt.model_args : pt.shape;
    const std::vector<Axis>& as = model ? at.model_args : at.shape;
    if ((!model && (pt.kind != TK::Tensor || at.kind != TK::Tensor)) ||
        ps.size() != as.size())
      continue;
    for (size_t j = 0; j < ps.size(); ++j)
      if (ps[j].kind == Axis::Kind::Var)
        vars.emplace(axis_name(unsplit(ps[j])), axis_size(as[j]));
  }
  return vars;
}

Size at_call(const Size& s, const std::map<std::string, Size>& vars) {
  if (vars.empty()) return s;
  Size out;
  for (const auto& [mono, c] : s.terms) {
    Size term = Size::constant(c);
    for (const std::string& v : mono) {
      Size f = variable(v);
      auto it = vars.find(v);
      const size_t slash = v.rfind('/');
      if (it != vars.end()) {
        f = it->second;
      } else if (v.size() > 3 && v.front() == '(' && v.back() == ')' &&
                 slash != std::string::npos) {
        // A block `(m/4)` of a bound m: m's size over 4.
        const int64_t k = std::stoll(v.substr(slash + 1));
        auto w = vars.find(v.substr(1, slash - 1));
        if (w != vars.end() && w->second.known() && k > 0)
          f = Size::constant(w->second.value() / k);
        else if (w != vars.end() && w->second.terms.size() == 1 &&
                 w->second.terms.begin()->first.size() == 1 &&
                 w->second.terms.begin()->second == 1)
          f = variable("(" + w->second.terms.begin()->first[0] +
                       v.substr(slash));
      }
      term = times(term, f);
    }
    out += term;
  }
  return out;
}

std::vector<Collective> mesh_collectives(const Program& P,
                                         const diag::SourceMap& sm,
                                         const ast::Expr& e,
                                         const ExprInfo& info) {
  std::vector<Collective> out;
  const ops::MeshPayload* p = info.resolution.op->device.mesh_payload;
  std::vector<const ast::Expr*> given = given_args(e);
  if (!p || given.empty() || info.mesh_args.empty()) return out;
  const std::vector<std::string>& axes = info.mesh_args.begin()->second;
  const std::string builtin = info.resolution.op->name;
  std::string blocks = "the " + std::to_string(ways(P, axes)) +
                       " instances' blocks along " + join(axes);
  auto item = [&](const char* op,
                  const std::string& text,
                  types::DType dt,
                  const Size& count,
                  bool backward) {
    Collective c;
    c.op = op;
    c.source = builtin;
    c.what = "`" + sm.one_line(given[0]->span) + "`";
    c.count = count;
    c.dtype = types::dtype_name(dt);
    c.bytes = count * types::dtype_size(dt);
    c.text = text + ": " + figure(count, dt);
    c.backward = backward;
    out.push_back(std::move(c));
  };
  if (p->op) {
    std::map<types::DType, Size> in;
    payload(P, P.type_of(given[0]), in);
    std::string effect = p->effect;
    effect.replace(effect.find("{}"), 2, blocks);
    for (const auto& [dt, count] : in)
      item(p->op,
           std::string(p->op) + " over " + join(axes) + " of `" +
               sm.one_line(given[0]->span) + "` (" + builtin + "), which " +
               effect,
           dt,
           count,
           false);
  }
  if (p->backward_op) {
    std::map<types::DType, Size> res;
    payload(P, info.type, res);
    for (const auto& [dt, count] : res)
      if (types::is_float(dt))
        item(p->backward_op,
             "in the backward pass: " + std::string(p->backward_op) + " over " +
                 join(axes) + " of the gradient of its result (" +
                 p->transpose + ")",
             dt,
             count,
             true);
  }
  return out;
}

std::vector<Collective> mesh_leaf_sums(const Program& P,
                                       const diag::SourceMap& sm,
                                       const ast::Expr& e,
                                       const ExprInfo& info) {
  std::vector<Collective> out;
  std::vector<const ast::Expr*> given = given_args(e);
  if (!info.loss_varying || given.size() < 2 || !given[1]) return out;
  const Type& t = P.type_of(given[1]);
  const std::string what = sm.one_line(given[1]->span);
  // A leaf's tied axes: the mesh's, less those it varies over (its type's
  // varying set and the axes its shape splits).
  auto add = [&](const Type& leaf, const std::string& name) {
    std::set<std::string> varying(leaf.varying.begin(), leaf.varying.end());
    for (const Axis& a : leaf.shape)
      varying.insert(a.split.begin(), a.split.end());
    const std::vector<std::string> tied = minus(mesh_names(P), varying);
    if (tied.empty() || !types::is_float(leaf.dtype)) return;
    Collective c;
    c.source = info.resolution.op ? info.resolution.op->name : "value_and_grad";
    c.what = "the gradient of " + name;
    c.count = block_numel(P, leaf);
    c.dtype = types::dtype_name(leaf.dtype);
    c.bytes = c.count * types::dtype_size(leaf.dtype);
    c.text = "in the backward pass: all-reduce over " + join(tied) +
             " of the gradient of " + name + " (" + c.source + ": " + name +
             " is the same on every instance along " + join(tied) +
             ", so its copies' gradients are summed, JAX's psum of the " +
             "implicit pvary): " + figure(c.count, leaf.dtype);
    c.backward = true;
    out.push_back(std::move(c));
  };
  if (t.kind == TK::Tensor) {
    add(t, "`" + what + "`");
  } else if (t.kind == TK::Model) {
    std::vector<Leaf> leaves;
    model_leaves(t, "", leaves);
    for (const Leaf& l : leaves)
      if (!l.buffer) add(l.type, "`" + what + "." + l.path + "`");
  }
  return out;
}

}  // namespace ss::check::comms::detail
