// Note [Split heads]
// With `split H` (devices.md item 9) a value's layout follows from its
// checked type alone: a value whose type has the dim H once, as an axis or
// as the first item of a group (`(H Dh)`: blocks of whole heads), holds
// H / N heads on each device, device r the r-th block; every other value
// is whole on every device, and batches are not split. So the plan of an
// op is a function of its operands' and result's types and its table
// entry's DeviceRule::heads:
//   * nothing split, a split result (`split(x @ m.w_qkv, b n (3 H Dh) ->
//     b H n Dh)`: w_qkv's group has H after 3, so x @ m.w_qkv is whole):
//     Cut, computed whole and each device keeps its heads; no message. Its
//     backward is an all-reduce (Megatron's f): each device's cotangent
//     covers its heads only, and their sum is the whole value's;
//   * split operands and a split result, an op that works per head
//     (elementwise, softmax over t, einsum keeping H, rearrange keeping H
//     leading): Local, run on the device's heads with H taken as H / N;
//   * H summed away by a contraction or sum (`@ m.w_o` over (H Dh)):
//     Partial, each device's sum over its heads, all-reduced (Megatron's
//     g); the backward passes the (whole, equal) cotangent on, unchanged;
//   * anything else with a split operand (an op along H, a result whole
//     with H, an op the table does not know to be per head, such as
//     dropout, whose draws follow the whole value's indices): Gather, the
//     split operands all-gathered, the op run whole, a split result cut.
//     Its backward takes each device's block of the whole cotangent.
// A whole operand of a Local or Partial op (`h @ m.wq`, h whole and wq
// split by columns: a column-parallel product) meets only the device's
// heads, so its cotangent there covers them alone: it is tied (Megatron's
// f), its cotangent all-reduced in the backward pass. Before, h's
// cotangent stayed partial and every param before it got 1/N of its
// gradient or less, with no error.
// Every whole value is then the same on every device and so is its
// cotangent, so a whole param's gradient is one device's, with no
// gradient all-reduce, and a residual around the heads counts once.
#include "interp/check/plan/heads_plan.h"

#include <algorithm>
#include <functional>

namespace ss::check {

namespace {

using TK = types::Type::Kind;
using AK = types::Axis::Kind;

int count_dim(const types::Axis& a, const std::string& dim) {
  if (a.kind == AK::Dim) return a.name == dim ? 1 : 0;
  int n = 0;
  for (const types::Axis& i : a.items) n += count_dim(i, dim);
  return n;
}

// Whether [a] is [dim] or a group whose first item leads with it.
bool leads_with(const types::Axis& a, const std::string& dim) {
  if (a.kind == AK::Dim) return a.name == dim;
  if (a.kind == AK::Group && !a.items.empty())
    return leads_with(a.items.front(), dim);
  return false;
}

bool any_split(const std::vector<int>& axes) {
  return std::any_of(axes.begin(), axes.end(), [](int a) { return a >= 0; });
}

}  // namespace

int heads_axis(const types::Type& t, const std::string& dim) {
  if (dim.empty() || t.kind != TK::Tensor) return -1;
  int n = 0, at = -1;
  for (size_t k = 0; k < t.shape.size(); ++k) {
    n += count_dim(t.shape[k], dim);
    if (leads_with(t.shape[k], dim)) at = static_cast<int>(k);
  }
  return n == 1 ? at : -1;
}

bool has_dim(const types::Type& t, const std::string& dim) {
  for (const types::Axis& a : t.shape)
    if (count_dim(a, dim)) return true;
  for (const types::Type& e : t.elems)
    if (has_dim(e, dim)) return true;
  return false;
}

std::vector<int> result_heads_axes(const types::Type& result,
                                   const std::string& dim) {
  std::vector<int> out;
  if (result.kind == TK::Tuple)
    for (const types::Type& e : result.elems) out.push_back(heads_axis(e, dim));
  else
    out.push_back(heads_axis(result, dim));
  return out;
}

void bind_heads_vars(const types::Type& param,
                     const types::Type& arg,
                     const std::string& dim,
                     HeadsVars& out) {
  std::function<void(const types::Axis&, const types::Axis&)> match =
      [&](const types::Axis& p, const types::Axis& a) {
        if (p.kind == AK::Var) {
          if (count_dim(a, dim)) out.emplace(p.var, a);
        } else if (p.kind == AK::Group && a.kind == AK::Group &&
                   p.items.size() == a.items.size()) {
          for (size_t i = 0; i < p.items.size(); ++i)
            match(p.items[i], a.items[i]);
        }
      };
  if (param.kind == TK::Tuple && arg.kind == TK::Tuple) {
    for (size_t i = 0; i < param.elems.size() && i < arg.elems.size(); ++i)
      bind_heads_vars(param.elems[i], arg.elems[i], dim, out);
    return;
  }
  // A model's dim arguments (`l: Linear[i j]` given a Linear[D (H Dh)]),
  // which type its fields, and its stack axes.
  if (param.model && param.kind == arg.kind && param.model == arg.model) {
    for (size_t i = 0; i < param.model_args.size() && i < arg.model_args.size();
         ++i)
      match(param.model_args[i], arg.model_args[i]);
    for (size_t i = 0; i < param.stack.size() && i < arg.stack.size(); ++i)
      match(param.stack[i], arg.stack[i]);
    return;
  }
  // A `*s` parameter lines up its axes from both ends; not matched here.
  if (param.kind != TK::Tensor || arg.kind != TK::Tensor ||
      param.shape.size() != arg.shape.size())
    return;
  for (size_t i = 0; i < param.shape.size(); ++i)
    match(param.shape[i], arg.shape[i]);
}

types::Type put_heads_vars(const types::Type& t,
                           const HeadsVars& vars,
                           const std::map<uint32_t, int64_t>* pin) {
  if (vars.empty() && !pin) return t;
  std::function<types::Axis(const types::Axis&)> put =
      [&](const types::Axis& a) -> types::Axis {
    if (a.kind == AK::Var) {
      if (auto h = vars.find(a.var); h != vars.end()) return h->second;
      if (pin)
        if (auto s = pin->find(a.var); s != pin->end())
          return types::Axis::lit(s->second);
      return a;
    }
    types::Axis out = a;
    for (types::Axis& i : out.items) i = put(i);
    return out;
  };
  types::Type out = t;
  for (types::Axis& a : out.shape) a = put(a);
  for (types::Axis& a : out.model_args) a = put(a);
  for (types::Axis& a : out.stack) a = put(a);
  for (types::Type& e : out.elems) e = put_heads_vars(e, vars, pin);
  return out;
}

HeadsStep plan_heads(const HeadsSite& s, const std::string& dim) {
  using R = ops::DeviceRule::Heads;
  std::vector<int> in;
  bool whole_with_h = false;
  for (const types::Type& t : s.operands) {
    in.push_back(heads_axis(t, dim));
    if (in.back() < 0 && has_dim(t, dim)) whole_with_h = true;
  }
  const std::vector<int> out = result_heads_axes(s.result, dim);
  if (!any_split(in)) return any_split(out) ? HeadsStep::Cut : HeadsStep::None;
  if (s.rule == R::Gathers || whole_with_h) return HeadsStep::Gather;
  const int h0 = in.empty() ? -1 : in[0];
  const bool along =
      s.reduces_all ||
      (h0 >= 0 && std::find(s.over.begin(), s.over.end(), h0) != s.over.end());
  const bool result_has_h = has_dim(s.result, dim);
  // H summed away: a contraction over it, or a sum along it.
  if (!result_has_h && s.rule == R::Sums &&
      (along || (s.over.empty() && !s.reduces_all)))
    return HeadsStep::Partial;
  if (along) return HeadsStep::Gather;
  // Per head: every split operand's heads are the result's, and the result
  // has H only where it is split.
  const bool all_split_out =
      std::all_of(out.begin(), out.end(), [](int a) { return a >= 0; });
  if (result_has_h && all_split_out) return HeadsStep::Local;
  return HeadsStep::Gather;
}

}  // namespace ss::check
