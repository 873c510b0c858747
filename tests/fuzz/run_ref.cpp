// The runtime fuzzer's oracle (run_ref.h).
#include "tests/fuzz/run_ref.h"

#include <cmath>
#include <exception>

#include "interp/eval/interpreter.h"
#include "interp/eval/op_site.h"
#include "interp/eval/runtime_error.h"
#include "interp/eval/runtime_lib.h"
#include "interp/parse/ast.h"
#include "ops/registry/op_def.h"
#include "ref/ref_collectives.h"
#include "ref/ref_ops.h"
#include "ref/ref_patterns.h"
#include "tests/fuzz/ref_adapters.h"

namespace ss::fuzz {

// Note [A runtime fuzzer's oracle]
// Issue 32: every outcome of the `run` target is a value checked against
// ref/ where ref has the op, or a located runtime error. The fuzzed run
// installs RefOracle as its device hooks (run_outcome.cpp): every op of
// the walk passes through DeviceHooks::run_op (Note [Op sites]), so the
// oracle runs it as the one-device context does and then, for a builtin
// call, asks the adapter of ref_adapters.h for ref's value of the same
// arguments, read through the evaluator's ForwardCtx as the forward read
// them (the prelude's own calls are checked too), and for a pattern
// (rearrange, split, einsum) ref_patterns.h's loops over the labels. No
// branch in the interpreter knows: the hooks are the seam every device
// mode uses, and with no device mode the oracle is DeviceHooks'
// one-device defaults plus the comparison.
//
// What is compared (ref_compare.cpp): the shapes exactly; the dtypes
// exactly, but where ref leaves the dtype to the op (the losses compute in
// f64 and the op returns the checker's dtype; a host number's result is
// the checker's kind, compared in ref's dtype, the one the op computed
// in); integers and bools exactly; floats by
//   |got - want| <= rtol * max(|want|, 1, scale),
// as ref/tests' table (ref_ops_test.cpp): relative above 1, absolute
// below, rtol by the result's dtype: f64 1e-12; f32 1e-5 (Tol::Elem: one
// rounding per value, moves and selections) or 1e-4 (Tol::Long:
// reductions, products, norms, losses, transcendental composites); bf16
// 2^-6 and f16 2^-9, two units in the last place of 8 and 11 significant
// bits (the halves compute in f32, whose error is far below an ulp, and
// round once, as ref rounds its double once: an ulp apart at most, the
// other ulp for ref's own double rounding through f32).
// The hostile values make some differences legitimate, each handled by a
// rule that says why rather than by a looser tolerance:
//   * NaN: ref's NaN must be the op's NaN, and the op's NaN ref's.
//   * Infinities must be equal, but that ref's double rounded past a
//     narrow dtype's largest value while the op's, off by its bound,
//     stayed at it.
//   * Accumulation (sum, mean, cumsum, matmul, linear, conv, pools,
//     attention, var, std, prod) rounds in the op's order: the error of a
//     sum is bounded by rtol times Σ|x| (the standard bound, n ε Σ|x|),
//     not by |Σx|, which cancellation (1e308 - 1e308) makes 0. The
//     adapter computes that scale with the same ref loop on absolute
//     values (ref::sum(|x|), ref::matmul(|a|, |b|)), in f64, per element.
//     Where the scale passes the result dtype's largest value a partial
//     sum may overflow in the op's order and not in ref's (f32 [3e38,
//     3e38, -3e38]): a non-finite value there is not a difference. Where
//     the scale passes even a double's range, ref's own double sum may
//     have overflowed in its order: that element says nothing and is not
//     compared. A product's scale is Π max(|x|, 1) (its partial products
//     stay below it); var's Σx² (both of its terms are below it). A mean
//     loss sums its terms before it divides: Σ|terms| is the magnitude
//     its partial sums reach (Want::partials), which alone allows an
//     overflow (mse of five 8.5e37s in f32, as torch's).
//   * Scalar options are the op's: a loss's beta= and delta= and a
//     norm's eps= in the dtype the op computes in (the weak-scalar rule:
//     delta=5e-324 is 0 in f32); an operand of a binary op or of einsum
//     in the operands' promotion, as torch casts it (ref/ref_ops.cpp).
//   * Integers past 2^53 are not doubles: where an argument holds one (the
//     pools' 2^53 + 1, 2^62), ref's loops in double cannot give the exact
//     integer, and integer results are not compared (Want::inexact_ints);
//     a result at or past 2^53, or i32's saturated ends, neither (ref
//     saturates where the op wraps, as torch does).
// A difference is an outcome of its own (RunOutcome::Kind::Differs), a
// finding: the builtin, the output, the element, both values and the
// bound. An adapter that declines (Declined: a Train mode's draws, an
// initialiser call) is counted, and a call of a builtin with a forward
// and no adapter is named in the report; ref_not_adapted() lists those
// and why, and a test fails when one is neither (interp/tests/
// run_ref_fuzz_test.cpp). ref
// refusing arguments the op computed a value from (a throw from ref) is a
// difference too. A value over kMaxElements is not compared: ref's naive
// loops on it would spend the run's time bound (Note [A runtime fuzzer's
// bounds]); the evaluator's allocation bound keeps such values rare.

namespace {

using eval::Value;
using VK = eval::Value::Kind;

constexpr int64_t kMaxElements = int64_t{1} << 18;

// The op's value as tensors; false when it is not one ref computes.
bool as_tensors(const Value& v, std::vector<ops::Tensor>& out, bool& host) {
  host = false;
  switch (v.kind) {
    case VK::Tensor:
      out.push_back(v.t);
      return true;
    case VK::Tuple:
      for (const Value& x : *v.items) {
        if (x.kind != VK::Tensor) return false;
        out.push_back(x.t);
      }
      return true;
    case VK::Int:
      host = true;
      out.push_back(ops::Tensor::scalar(double(v.i), types::DType::I64));
      return true;
    case VK::Float:
      host = true;
      out.push_back(ops::Tensor::scalar(v.f, types::DType::F64));
      return true;
    case VK::Bool:
      host = true;
      out.push_back(ops::Tensor::scalar(v.b ? 1 : 0, types::DType::Bool));
      return true;
    default:
      return false;
  }
}

// Whether an integer argument holds a value a double does not.
bool past_doubles(const std::vector<ops::Tensor>& read) {
  // Read as integers: 2^53 + 1 read as a double is 2^53, which a double
  // holds (the arguments are exact since issue 32 item 2's fix, and the
  // oracle's doubles then were not).
  constexpr int64_t kExact = int64_t{1} << 53;
  for (const ops::Tensor& t : read) {
    if (t.dtype() != types::DType::I64 || !t.defined()) continue;
    const ops::Tensor h = t.to(ops::Device{});
    const int64_t* p = h.data<int64_t>();
    for (int64_t i = 0; i < h.numel(); ++i)
      if (p[i] > kExact || p[i] < -kExact) return true;
  }
  return false;
}

// A pattern as ref_patterns.h reads it, from the call's; false when it
// holds what ref has no reading of (`..`).
bool item_text(const ast::PatternItem& it, std::string& out) {
  switch (it.kind) {
    case ast::PatternItem::Kind::Name:
      out += it.name;
      return it.name.find('.') == std::string::npos;
    case ast::PatternItem::Kind::Literal:
      out += std::to_string(it.value);
      return true;
    case ast::PatternItem::Kind::Group:
      out += "(";
      for (size_t i = 0; i < it.items.size(); ++i) {
        if (i) out += " ";
        if (!item_text(it.items[i], out)) return false;
      }
      out += ")";
      return true;
  }
  return false;
}

bool side_text(const ast::PatternSide& side, std::string& out) {
  for (size_t i = 0; i < side.items.size(); ++i) {
    if (i) out += " ";
    if (!item_text(side.items[i], out)) return false;
  }
  return true;
}

bool pattern_text(const ast::Pattern& p, std::string& out) {
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    if (i) out += ", ";
    if (!side_text(p.inputs[i], out)) return false;
  }
  out += " -> ";
  return side_text(p.output, out);
}

void names_of(const ast::PatternItem& it, std::vector<std::string>& out) {
  if (it.kind == ast::PatternItem::Kind::Name) out.push_back(it.name);
  for (const ast::PatternItem& x : it.items) names_of(x, out);
}

}  // namespace

Value RefOracle::run_op(eval::OpSite& site) {
  Value v = inner_->run_op(site);
  if (site.kind == eval::OpSite::Kind::Builtin && site.op && site.call &&
      site.op->forward)
    check(site, v);
  else if (site.kind == eval::OpSite::Kind::Pattern && site.op && site.expr &&
           site.expr->pattern)
    check_pattern(site, v);
  return v;
}

// Note [A runtime fuzzer's oracle]: a pattern (rearrange, split, einsum)
// against ref_patterns.h's loops over every assignment of its labels. The
// labels that are dims take their sizes; a label the checker sized from a
// type the oracle cannot see (a group of two unknowns) leaves ref without
// a size, and the call is declined.
void RefOracle::check_pattern(eval::OpSite& site, const Value& v) {
  const ast::Pattern& p = *site.expr->pattern;
  std::string text;
  std::vector<ops::Tensor> got;
  bool host = false;
  if (!pattern_text(p, text) || !as_tensors(v, got, host)) {
    ++report_.declined;
    return;
  }
  std::vector<ops::Tensor> xs;
  int64_t n = 0;
  for (const ops::Tensor* t : site.operands) xs.push_back(*t), n += t->numel();
  for (const ops::Tensor& t : got) n += t.numel();
  if (n > kMaxElements) {
    ++report_.declined;
    return;
  }
  ref::LabelSizes known;
  std::vector<std::string> names;
  for (const ast::PatternSide* side : {&p.output})
    for (const ast::PatternItem& it : side->items) names_of(it, names);
  for (const ast::PatternSide& side : p.inputs)
    for (const ast::PatternItem& it : side.items) names_of(it, names);
  for (const std::string& l : names)
    if (std::optional<int64_t> d = site.in.dim_size(l)) known[l] = *d;
  std::string diff;
  try {
    Want want;
    switch (site.op->intrinsic) {
      case ops::Intrinsic::Rearrange:
        want.values = {ref::rearrange(xs.at(0), text, known)};
        break;
      case ops::Intrinsic::Split:
        want.values = ref::split(xs.at(0), text, known);
        break;
      case ops::Intrinsic::Einsum: {
        // Each operand in the operands' promotion first, as ref's binary
        // ops take theirs (torch.result_type).
        types::DType d = xs.at(0).dtype();
        for (const ops::Tensor& x : xs) d = types::promote(d, x.dtype());
        std::vector<ops::Tensor> a64;
        for (ops::Tensor& x : xs) {
          if (x.dtype() != d) x = ref::to(x, d);
          a64.push_back(abs64(x));
        }
        want.values = {ref::einsum(xs, text, known)};
        want.scales = {ref::einsum(a64, text, known)};
        want.tol = Tol::Long;
        break;
      }
      case ops::Intrinsic::None:
        return;
    }
    want.inexact_ints = past_doubles(xs);
    diff = compare_with_ref(got, want);
    ++report_.compared;
  } catch (const std::invalid_argument& e) {
    std::string why = e.what();
    if (why.find("has no size") != std::string::npos ||
        why.find("two unknown sizes") != std::string::npos)
      ++report_.declined;
    else
      diff = "ref refused what the op computed a value from: " + why;
  } catch (const std::exception& e) {
    diff = std::string("ref refused what the op computed a value from: ") +
           e.what();
  }
  if (!diff.empty() && report_.mismatch.empty())
    report_.mismatch = std::string(site.op->name) + "(" + text + "): " + diff;
}

void RefOracle::check(eval::OpSite& site, const Value& v) {
  const ops::OpDef& op = *site.op;
  const auto& table = ref_adapters();
  auto it = table.find(op.name);
  if (it == table.end()) {
    report_.unadapted.push_back(op.name);
    return;
  }
  std::vector<ops::Tensor> got;
  bool host = false;
  int64_t n = 0;
  if (!as_tensors(v, got, host)) {
    ++report_.declined;  // gradients, a model: the runtime's overloads
    return;
  }
  for (const ops::Tensor& t : got) n += t.numel();
  if (n > kMaxElements) {
    ++report_.declined;
    return;
  }
  std::string diff;
  try {
    std::unique_ptr<ops::ForwardCtx> ctx = eval::forward_ctx(*site.call);
    RefArgs args(*ctx, op);
    Want want = it->second(args);
    want.inexact_ints = want.inexact_ints || past_doubles(args.read());
    // A host number is the checker's kind (a double, an int64), of a
    // value the op computed in ref's dtype (`gelu(true)` in f32): it is
    // compared in that dtype, its bound that dtype's.
    if (host && got.size() == 1 && want.values.size() == 1 &&
        want.values[0].defined())
      got[0] = ref::to(got[0], want.values[0].dtype());
    diff = compare_with_ref(got, want);
    ++report_.compared;
  } catch (const Declined&) {
    ++report_.declined;
  } catch (const eval::RuntimeError&) {
    // The adapter read an argument in a form the forward did not (a
    // number where it read a tensor): nothing to compare.
    ++report_.declined;
  } catch (const StaleAdapter& e) {
    diff = e.what();
  } catch (const std::exception& e) {
    diff = std::string("ref refused what the op computed a value from: ") +
           e.what();
  }
  if (!diff.empty() && report_.mismatch.empty())
    report_.mismatch = std::string(op.name) + ": " + diff;
}

const std::vector<std::pair<std::string, std::string>>& ref_not_adapted() {
  // The collectives run only inside an instance of an spmd fn, through its
  // mesh, which one run of the fuzzer has not: their forwards are ref's
  // own collectives, run by the simulated mesh.
  static const std::vector<std::pair<std::string, std::string>> kList = [] {
    std::vector<std::pair<std::string, std::string>> v;
    for (const char* c : ref::kCollectiveBuiltins)
      v.push_back({c, "a collective: ref/ref_collectives.h is its forward"});
    return v;
  }();
  return kList;
}

}  // namespace ss::fuzz
