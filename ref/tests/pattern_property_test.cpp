// The pattern property test (issue 10, part A): random rearrange, split and
// einsum calls (pattern_gen.h) run through the checker and the evaluator
// as a program runs them, their results and their gradients compared with
// the reference loops (ref/ref_patterns.h).
//
// Each case is a small fn `f<c>` returning the pattern call, typed as the
// checker should type it (so the checker's pattern typing is checked too),
// and one loss `g<c>_<i>` per operand i, with operand i first:
// sum(reshape(call, [N]) * ct) for a random cotangent ct, differentiated by
// value_and_grad as a program does; its gradient is operand i's VJP, which
// the reference computes with its own loops (einsum's as the einsum of ct
// and the other operands, rearrange's and split's as the inverse moves).
//
// Tolerances (f64): rearrange and split only move values, and their VJPs
// add each cotangent element once to a zero, so both compare exactly.
// einsum sums products in another order than the reference (matmuls of
// reshaped, permuted operands); the difference of two orders of summing n
// terms is at most about n * 2^-53 * sum|term| (n <= 4^5 here), so an
// element may differ by 1e-12 of the sum of its terms' magnitudes (the
// reference einsum of the operands' absolute values), nine times that bound
// at the largest n. A wrong contraction is off by O(1).
//
// Reproduce a failure with SS_PATTERN_SEED=<seed> SS_PATTERN_CASE=<case>:
// the failure message prints both, the pattern and the program.

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "interp/check/checker.h"
#include "interp/eval/interpreter.h"
#include "ref/tests/pattern_gen.h"

namespace {

using ss::eval::Value;
using ss::ops::Shape;
using ss::ops::Tensor;
using ss::testing::PatternCase;
using ss::testing::PatternOp;
using ss::types::DType;
namespace ref = ss::ref;

constexpr uint64_t kDefaultSeed = 20261201;
constexpr int kCases = 4000;
constexpr int kCasesPerProgram = 25;  // one check_source per 25 cases

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v ? std::strtoull(v, nullptr, 10) : fallback;
}

uint64_t case_seed(uint64_t seed, int c) {
  return seed * 1000003u + static_cast<uint64_t>(c);
}

std::string call_text(const PatternCase& pc) {
  const char* op = pc.op == PatternOp::Einsum  ? "einsum"
                   : pc.op == PatternOp::Split ? "split"
                                               : "rearrange";
  if (pc.method) return "x0." + std::string(op) + "(" + pc.text() + ")";
  std::string s = std::string(op) + "(";
  for (size_t i = 0; i < pc.shapes.size(); ++i)
    s += "x" + std::to_string(i) + ", ";
  return s + pc.text() + ")";
}

// The params of a fn over the operands, operand [first] first.
std::string params(const PatternCase& pc, int first) {
  std::vector<int> order;
  if (first >= 0) order.push_back(first);
  for (int i = 0; i < static_cast<int>(pc.shapes.size()); ++i)
    if (i != first) order.push_back(i);
  std::string s;
  for (int i : order)
    s += (s.empty() ? "" : ", ") + ("x" + std::to_string(i)) + ": " +
         pc.operand_types[i];
  return s;
}

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Case [c]'s fns: f<c> and g<c>_<i>.
std::string fns_text(const PatternCase& pc, int c) {
  std::ostringstream o;
  std::string id = std::to_string(c);
  std::string call = call_text(pc);
  o << "fn f" << id << "(" << params(pc, -1) << ") -> " << pc.result_type
    << ":\n    return " << call << "\n";
  std::string n = std::to_string(numel(pc.out_shape));
  for (size_t i = 0; i < pc.shapes.size(); ++i) {
    o << "fn g" << id << "_" << i << "(" << params(pc, static_cast<int>(i));
    for (int64_t k = 0; k < pc.parts; ++k)
      o << ", ct" << k << ": [" << n << "] f64";
    o << ") -> f64:\n";
    if (pc.op == PatternOp::Split) {
      o << "    let ";
      for (int64_t k = 0; k < pc.parts; ++k) o << (k ? ", " : "") << "p" << k;
      o << " = " << call << "\n    return ";
      for (int64_t k = 0; k < pc.parts; ++k)
        o << (k ? " + " : "") << "sum(reshape(p" << k << ", [" << n << "]) * ct"
          << k << ")";
      o << "\n";
    } else {
      o << "    return sum(reshape(" << call << ", [" << n << "]) * ct0)\n";
    }
  }
  return o.str();
}

Tensor random_tensor(const Shape& s, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(numel(s));
  for (double& x : v) x = u(rng);
  return Tensor::from_doubles(s, v, DType::F64);
}

Tensor abs_of(const Tensor& t) {
  std::vector<double> v = t.to_doubles();
  for (double& x : v) x = std::fabs(x);
  return Tensor::from_doubles(t.shape(), v, t.dtype());
}

// "" when [got] equals [want] within [scale] * rel elementwise (exactly
// when [scale] is absent); else what differs.
std::string compare(const std::string& what,
                    const Tensor& got,
                    const Tensor& want,
                    const Tensor* scale,
                    double rel) {
  std::ostringstream o;
  if (got.dtype() != DType::F64) o << what << ": dtype is not f64\n";
  if (got.shape() != want.shape()) {
    o << what << ": shape " << ss::ops::shape_string(got.shape()) << ", want "
      << ss::ops::shape_string(want.shape()) << "\n";
    return o.str();
  }
  std::vector<double> g = got.to_doubles(), w = want.to_doubles();
  std::vector<double> s = scale ? scale->to_doubles() : std::vector<double>();
  for (size_t i = 0; i < g.size(); ++i) {
    double tol = scale ? rel * s[i] : 0.0;
    if (!(std::fabs(g[i] - w[i]) <= tol)) {
      o << what << ": element " << i << " is " << g[i] << ", want " << w[i]
        << " (tolerance " << tol << ")\n";
      break;
    }
  }
  return o.str();
}

struct Counts {
  std::map<std::string, int> n;
  void add(const PatternCase& pc) {
    n[pc.op == PatternOp::Einsum  ? "einsum"
      : pc.op == PatternOp::Split ? "split"
                                  : "rearrange"]++;
    for (const std::string& f : pc.features) n[f]++;
  }
};

class Runner {
 public:
  explicit Runner(uint64_t seed) : seed_(seed) {}

  // Runs cases [from, to) in one program; failures go to [fails].
  void run(int from, int to, std::vector<std::string>& fails, Counts& counts) {
    std::vector<PatternCase> cases;
    std::ostringstream text;
    std::set<std::string> dims;
    std::string fns;
    for (int c = from; c < to; ++c) {
      cases.push_back(ss::testing::PatternGen(case_seed(seed_, c), c).draw());
      counts.add(cases.back());
      for (const std::string& d : cases.back().dims) dims.insert(d);
      fns += fns_text(cases.back(), c);
    }
    for (const std::string& d : dims) text << d << "\n";
    text << fns << "fn main():\n    print(0)\n";
    // One case alone (a reproduction) prints its program first, so that
    // even a crash shows what crashed.
    if (to == from + 1 && std::getenv("SS_PATTERN_CASE"))
      std::cout << text.str() << std::flush;
    ss::diag::SourceMap sm;
    ss::diag::Diagnostics diags;
    auto prog = ss::check::check_source("pattern.ss", text.str(), sm, diags);
    if (!prog && to > from + 1) {
      // Find the cases the checker rejects.
      for (int c = from; c < to; ++c) run(c, c + 1, fails, counts);
      return;
    }
    if (!prog) {
      fails.push_back(header(from, to) + "the checker rejected:\n" +
                      ss::diag::render_terminal(diags, sm) + "\n" + text.str());
      return;
    }
    std::ostringstream out;
    ss::eval::Interpreter in(*prog, sm, out);
    for (int c = from; c < to; ++c) {
      const PatternCase& pc = cases[c - from];
      std::string why;
      try {
        why = run_case(in, *prog, pc, c);
      } catch (const ss::eval::RuntimeError& e) {
        why = ss::eval::render_runtime_error(e, sm);
      } catch (const std::exception& e) {
        why = std::string("exception: ") + e.what();
      }
      if (!why.empty())
        fails.push_back(header(c, c + 1) + "pattern " + pc.text() + "\n" + why +
                        "\n" + fns_text(pc, c));
    }
  }

 private:
  std::string header(int from, int to) const {
    return "SS_PATTERN_SEED=" + std::to_string(seed_) +
           " SS_PATTERN_CASE=" + std::to_string(from) +
           (to > from + 1 ? ".." + std::to_string(to) : "") + ": ";
  }

  std::string run_case(ss::eval::Interpreter& in,
                       const ss::check::Program& prog,
                       const PatternCase& pc,
                       int c) {
    std::mt19937_64 rng(case_seed(seed_, c) ^ 0x9e3779b97f4a7c15u);
    std::vector<Tensor> xs;
    for (const Shape& s : pc.shapes) xs.push_back(random_tensor(s, rng));
    std::vector<Value> args;
    for (const Tensor& x : xs) args.push_back(Value::tensor(x));
    std::string id = std::to_string(c);
    Value y = in.call(*prog.fn("f" + id), args, {});
    std::string why;
    // The forward.
    std::vector<Tensor> cts;
    Shape flat{numel(pc.out_shape)};
    for (int64_t k = 0; k < pc.parts; ++k)
      cts.push_back(random_tensor(pc.out_shape, rng));
    std::vector<Tensor> want_grads;
    if (pc.op == PatternOp::Einsum) {
      Tensor want = ref::einsum(xs, pc.text(), pc.known);
      std::vector<Tensor> ax;
      for (const Tensor& x : xs) ax.push_back(abs_of(x));
      Tensor scale = ref::einsum(ax, pc.text(), pc.known);
      why += compare("einsum", y.t, want, &scale, 1e-12);
      want_grads = ref::einsum_vjp(xs, pc.text(), cts[0], pc.known);
      std::vector<Tensor> scales =
          ref::einsum_vjp(ax, pc.text(), abs_of(cts[0]), pc.known);
      for (size_t i = 0; i < xs.size(); ++i)
        why += grad_of(in, pc, c, i, xs, cts, want_grads[i], &scales[i]);
    } else if (pc.op == PatternOp::Rearrange) {
      why += compare("rearrange",
                     y.t,
                     ref::rearrange(xs[0], pc.text(), pc.known),
                     nullptr,
                     0);
      why += grad_of(in,
                     pc,
                     c,
                     0,
                     xs,
                     cts,
                     ref::rearrange_vjp(xs[0], pc.text(), cts[0], pc.known),
                     nullptr);
    } else {
      std::vector<Tensor> want = ref::split(xs[0], pc.text(), pc.known);
      if (!y.items || y.items->size() != want.size())
        return "split did not give " + std::to_string(want.size()) + " parts";
      for (size_t k = 0; k < want.size(); ++k)
        why += compare(
            "part " + std::to_string(k), (*y.items)[k].t, want[k], nullptr, 0);
      why += grad_of(in,
                     pc,
                     c,
                     0,
                     xs,
                     cts,
                     ref::split_vjp(xs[0], pc.text(), cts, pc.known),
                     nullptr);
    }
    return why;
  }

  // value_and_grad(g<c>_<i>, x_i, the others..., cts...)'s gradient
  // against [want].
  std::string grad_of(ss::eval::Interpreter& in,
                      const PatternCase& pc,
                      int c,
                      size_t i,
                      const std::vector<Tensor>& xs,
                      const std::vector<Tensor>& cts,
                      const Tensor& want,
                      const Tensor* scale) {
    std::vector<Value> args{
        Value::fn("g" + std::to_string(c) + "_" + std::to_string(i)),
        Value::tensor(xs[i])};
    for (size_t j = 0; j < xs.size(); ++j)
      if (j != i) args.push_back(Value::tensor(xs[j]));
    for (const Tensor& ct : cts)
      args.push_back(Value::tensor(Tensor::from_doubles(
          {numel(pc.out_shape)}, ct.to_doubles(), DType::F64)));
    Value vg = in.call_builtin_values("value_and_grad", std::move(args), {});
    return compare(
        "d x" + std::to_string(i), (*vg.items)[1].t, want, scale, 1e-12);
  }

  uint64_t seed_;
};

}  // namespace

TEST_CASE("patterns: random rearrange, split and einsum match the reference",
          "[patterns][property]") {
  uint64_t seed = env_u64("SS_PATTERN_SEED", kDefaultSeed);
  int only = static_cast<int>(env_u64("SS_PATTERN_CASE", ~0ull));
  Runner runner(seed);
  std::vector<std::string> fails;
  Counts counts;
  if (only >= 0) {
    runner.run(only, only + 1, fails, counts);
  } else {
    for (int c = 0; c < kCases; c += kCasesPerProgram)
      runner.run(c, std::min(kCases, c + kCasesPerProgram), fails, counts);
  }
  std::ostringstream report;
  for (size_t i = 0; i < fails.size() && i < 5; ++i) report << fails[i] << "\n";
  INFO(fails.size() << " failing cases; the first:\n" << report.str());
  CHECK(fails.empty());
  if (only >= 0) return;
  // The generator must keep drawing every kind of case, so that a change
  // to it cannot quietly stop testing one.
  std::ostringstream drawn;
  for (const auto& [k, v] : counts.n) drawn << k << "=" << v << " ";
  INFO("drawn: " << drawn.str());
  const char* kinds[] = {
      "einsum",        "rearrange",      "split",        "contracted",
      "kept-shared",   "kept-alone",     "summed-alone", "0-d",
      "size-1",        "three-operands", "group-in",     "group-out",
      "literal-1-in",  "literal-1-out",  "two-ones",     "cut-static",
      "cut-runtime",   "cut-symbolic",   "group-type",   "alias",
      "literal-alias", "method"};
  for (const char* k : kinds) {
    INFO(k);
    CHECK(counts.n[k] >= 20);
  }
}
