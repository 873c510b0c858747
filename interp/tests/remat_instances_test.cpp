// remat(f) inside an spmd fn (Note [Remat in instances]): f's collectives
// run again in the backward pass, with every instance, where a plain call
// runs them once; the gradients are the same (against numpy's in
// conformance/spmd/remat_in_instance.ss; here against the plain call's
// and hand values).
#include <catch2/catch.hpp>
#include <map>
#include <sstream>

#include "interp/check/checker.h"
#include "interp/eval/interpreter.h"
#include "interp/eval/spmd/sim_mesh.h"

namespace {

// On x = 2, gathered all-gathers w's and v's blocks and sums tanh(w v);
// psum adds the two instances' halves.
const char* const kProgram = R"(devices cpu
mesh x=2

spmd fn gathered(w: [n/x], v: [n/x]) -> f32:
    let whole_w = all_gather(w, x, over=n)
    let whole_v = all_gather(v, x, over=n)
    return sum(tanh(whole_w * whole_v)) / 2.0

spmd fn loss_plain(w: [n/x], v: [n/x]) -> f32:
    return psum(gathered(w, v), x)

spmd fn loss(w: [n/x], v: [n/x]) -> f32:
    let f = remat(gathered)
    return psum(f(w, v), x)

fn grad_plain(w: [n], v: [n]) -> [n]:
    let l, g = value_and_grad(loss_plain, w, v)
    return g

fn grad_remat(w: [n], v: [n]) -> [n]:
    let l, g = value_and_grad(loss, w, v)
    return g
)";

using K = ss::ops::MeshOpKind;

struct Run {
  std::vector<double> grad;
  std::map<int64_t, std::vector<K>> collectives;  // by instance, in order
};

Run run(const std::string& fn) {
  ss::diag::SourceMap sm;
  ss::diag::Diagnostics diags;
  auto prog = ss::check::check_source("remat.ss", kProgram, sm, diags, {});
  INFO(ss::diag::render_terminal(diags, sm));
  REQUIRE(prog);
  Run r;
  ss::eval::spmd::set_payload_log(
      [&](int64_t n, const ss::ops::MeshOp& op, const ss::ops::Tensor&) {
        r.collectives[n].push_back(op.kind);
      });
  std::ostringstream printed;
  ss::eval::Interpreter in(*prog, sm, printed);
  auto t = [](std::vector<double> v) {
    return ss::eval::Value::tensor(ss::ops::Tensor::from_doubles(
        {int64_t(v.size())}, v, ss::types::DType::F32));
  };
  ss::eval::Value g =
      in.call(*prog->fn(fn), {t({0, 0.5, 1, 1.5}), t({1, 2, 3, 4})}, {});
  ss::eval::spmd::set_payload_log(nullptr);
  r.grad = g.t.to_doubles();
  return r;
}

}  // namespace

TEST_CASE(
    "remat in an instance: f's collectives run again in the backward "
    "pass",
    "[spmd][remat]") {
  Run plain = run("grad_plain");
  Run remat = run("grad_remat");
  // Forward: both gathers, then psum; remat's backward pass gathers again
  // (the recompute), where the plain call's keeps the gathered values.
  const std::vector<K> once = {K::AllGather, K::AllGather, K::Sum};
  const std::vector<K> again = {
      K::AllGather, K::AllGather, K::Sum, K::AllGather, K::AllGather};
  REQUIRE(plain.collectives.size() == 2);
  REQUIRE(remat.collectives.size() == 2);
  for (int64_t n = 0; n < 2; ++n) {
    INFO("instance " << n);
    CHECK(plain.collectives[n] == once);
    CHECK(remat.collectives[n] == again);
  }
  // d/dw sum(tanh(w v)) = v (1 - tanh(w v)²), w v = [0 1 3 6] (numpy, in
  // f64). Computed in f32: relative 1e-4, and where 1 - tanh² cancels
  // (tanh(6) = 0.99998771, its f32 ulp 6e-8, so 1 - tanh² is off by about
  // 1.2e-7, times v = 4) absolute 1e-6. The same ops in the same order
  // either way, so remat's equals the plain call's to f32 rounding.
  const std::vector<double> numpy = {
      1.0, 8.39948683e-01, 2.95981115e-02, 9.83061896e-05};
  REQUIRE(remat.grad.size() == 4);
  for (size_t k = 0; k < 4; ++k) {
    CHECK(remat.grad[k] == Approx(numpy[k]).epsilon(1e-4).margin(1e-6));
    CHECK(remat.grad[k] == Approx(plain.grad[k]).epsilon(1e-6));
  }
}
