// The README MLP's train step (value_and_grad + AdamW update) through the
// interpreter, against the same math written directly on OpenBLAS, in one
// process, at batch 64 and 6144. Reports the ratio (target: <= 1.10 at 64,
// <= 1.03 at 6144) and the interpreter's overhead per op. A benchmark
// reports; it asserts nothing.
//
//   build/bench/mlp_step_bench [steps]
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <random>
#include <sstream>
#include <vector>

#include "interp/builtins/install.h"
#include "interp/builtins/models.h"
#include "interp/check/checker.h"
#include "interp/eval/interpreter.h"
#include "ops/api.h"

namespace {

using Clock = std::chrono::steady_clock;

const char* kProgram = R"(dim D = 784
dim Hd = 256
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Mlp:
    w1: [D Hd] = normal(std=1/sqrt(D))
    w2: [Hd C] = normal(std=1/sqrt(Hd))

fn forward(m: Mlp, x: [b D]) -> [b C]:
    return relu(x @ m.w1) @ m.w2

fn loss(m: Mlp, batch: [b] Digit) -> f32:
    return cross_entropy(forward(m, batch.img), batch.label)

fn train_step(mut m: Mlp, mut opt: AdamW[Mlp], batch: [b] Digit) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l)

fn tiny(x: [4]) -> [4]:
    let y = x
    for i in range(1000):
        y = y + 1.0
    return y

fn main():
    print(0)
)";

// The same step, by hand: sgemm forward and backward, softmax cross
// entropy, AdamW (torch's rule) with plain loops.
struct Direct {
  int D = 784, H = 256, C = 10;
  std::vector<float> w1, w2, m1, v1, m2, v2, h, logits, dlogits, dh, g1, g2;
  int step = 0;
  void init(const std::vector<float>& a, const std::vector<float>& b) {
    w1 = a;
    w2 = b;
    m1.assign(w1.size(), 0);
    v1.assign(w1.size(), 0);
    m2.assign(w2.size(), 0);
    v2.assign(w2.size(), 0);
  }
  float run(const float* x, const int64_t* y, int B) {
    h.resize(size_t(B) * H);
    logits.resize(size_t(B) * C);
    dlogits.resize(size_t(B) * C);
    dh.resize(size_t(B) * H);
    g1.resize(w1.size());
    g2.resize(w2.size());
    cblas_sgemm(CblasRowMajor,
                CblasNoTrans,
                CblasNoTrans,
                B,
                H,
                D,
                1,
                x,
                D,
                w1.data(),
                H,
                0,
                h.data(),
                H);
    for (float& v : h) v = v > 0 ? v : 0;
    cblas_sgemm(CblasRowMajor,
                CblasNoTrans,
                CblasNoTrans,
                B,
                C,
                H,
                1,
                h.data(),
                H,
                w2.data(),
                C,
                0,
                logits.data(),
                C);
    double loss = 0;
    for (int i = 0; i < B; ++i) {
      float* l = &logits[size_t(i) * C];
      float mx = *std::max_element(l, l + C);
      double s = 0;
      for (int k = 0; k < C; ++k) s += std::exp(l[k] - mx);
      double lse = mx + std::log(s);
      loss += lse - l[y[i]];
      for (int k = 0; k < C; ++k)
        dlogits[size_t(i) * C + k] =
            float((std::exp(l[k] - lse) - (k == y[i] ? 1 : 0)) / B);
    }
    cblas_sgemm(CblasRowMajor,
                CblasTrans,
                CblasNoTrans,
                H,
                C,
                B,
                1,
                h.data(),
                H,
                dlogits.data(),
                C,
                0,
                g2.data(),
                C);
    cblas_sgemm(CblasRowMajor,
                CblasNoTrans,
                CblasTrans,
                B,
                H,
                C,
                1,
                dlogits.data(),
                C,
                w2.data(),
                C,
                0,
                dh.data(),
                H);
    for (size_t i = 0; i < dh.size(); ++i)
      if (h[i] <= 0) dh[i] = 0;
    cblas_sgemm(CblasRowMajor,
                CblasTrans,
                CblasNoTrans,
                D,
                H,
                B,
                1,
                x,
                D,
                dh.data(),
                H,
                0,
                g1.data(),
                H);
    ++step;
    adamw(w1, g1, m1, v1);
    adamw(w2, g2, m2, v2);
    return float(loss / B);
  }
  void adamw(std::vector<float>& p,
             const std::vector<float>& g,
             std::vector<float>& m,
             std::vector<float>& v) {
    const float lr = 1e-3f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f, wd = 0.01f;
    float bc1 = 1 - std::pow(b1, float(step)),
          bc2 = std::sqrt(1 - std::pow(b2, float(step)));
    for (size_t i = 0; i < p.size(); ++i) {
      p[i] *= 1 - lr * wd;
      m[i] = b1 * m[i] + (1 - b1) * g[i];
      v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
      p[i] -= lr / bc1 * m[i] / (std::sqrt(v[i]) / bc2 + eps);
    }
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  ss::ops::keep_step_buffers_in_heap();  // as `ss`'s main
  ss::builtins::install();               // Note [The runtime table]
  int steps = argc > 1 ? std::atoi(argv[1]) : 30;
  ss::diag::SourceMap sm;
  ss::diag::Diagnostics diags;
  auto prog = ss::check::check_source("bench.ss", kProgram, sm, diags);
  if (!prog) {
    std::cerr << ss::diag::render_terminal(diags, sm);
    return 1;
  }
  std::ostringstream sink;
  ss::eval::Interpreter in(*prog, sm, sink);
  const ss::check::FnInfo* step_fn = prog->fn("train_step");
  std::printf("README MLP train step (value_and_grad + AdamW), median of %d\n",
              steps);
  std::printf(
      "%8s %14s %14s %8s\n", "batch", "ss (ms)", "OpenBLAS (ms)", "ratio");
  std::vector<int> sizes = {64, 6144};
  if (const char* only = std::getenv("SS_BENCH_BATCH"))
    sizes = {std::atoi(only)};
  for (int B : sizes) {
    std::mt19937 rng(0);
    std::uniform_real_distribution<float> u(0, 1);
    std::vector<double> x(size_t(B) * 784), y(B);
    for (double& v : x) v = u(rng);
    for (double& v : y) v = double(rng() % 10);
    auto batch = std::make_shared<ss::eval::RecordValue>();
    batch->info = prog->record("Digit");
    batch->batch = true;
    batch->fields["img"] =
        ss::ops::Tensor::from_doubles({B, 784}, x, ss::types::DType::F32);
    batch->fields["label"] =
        ss::ops::Tensor::from_doubles({B}, y, ss::types::DType::I64);
    ss::eval::Value bv =
        ss::eval::Value::object(ss::eval::Value::Kind::Record, batch);
    ss::types::Type mt = ss::types::Type::of(ss::types::Type::Kind::Model);
    mt.model = prog->model("Mlp");
    ss::eval::Value m = ss::builtins::init_model(in, mt, 0, {});
    auto* mref = m.as<ss::eval::ModelRef>();
    Direct d;
    auto w1 = mref->get("w1"), w2 = mref->get("w2");
    d.init(std::vector<float>(w1.data<float>(), w1.data<float>() + w1.numel()),
           std::vector<float>(w2.data<float>(), w2.data<float>() + w2.numel()));
    auto opt = std::make_shared<ss::eval::OptimState>();
    opt->kind = ss::types::OptimKind::AdamW;
    opt->model = mref->store;
    opt->weight_decay = 0.01;
    ss::eval::Value ov =
        ss::eval::Value::object(ss::eval::Value::Kind::Optim, opt);
    std::vector<double> ts, td;
    const float* xp = batch->fields["img"].data<float>();
    const int64_t* yp = batch->fields["label"].data<int64_t>();
    for (int s = 0; s < steps + 3; ++s) {
      auto t0 = Clock::now();
      in.call(*step_fn, {m, ov, bv}, {});
      auto t1 = Clock::now();
      d.run(xp, yp, B);
      auto t2 = Clock::now();
      if (s >= 3) {  // warm-up steps excluded
        ts.push_back(
            std::chrono::duration<double, std::milli>(t1 - t0).count());
        td.push_back(
            std::chrono::duration<double, std::milli>(t2 - t1).count());
      }
    }
    // Same math: the parameters must agree after the same steps.
    auto nw2 = mref->get("w2");
    double maxdiff = 0;
    for (int64_t i = 0; i < nw2.numel(); ++i)
      maxdiff = std::max(
          maxdiff, std::fabs(double(nw2.data<float>()[i]) - d.w2[size_t(i)]));
    double ms = median(ts), md = median(td);
    std::printf("%8d %14.3f %14.3f %8.3f   (max |w2 diff| %.2e)\n",
                B,
                ms,
                md,
                ms / md,
                maxdiff);
  }
  // Interpreter overhead per op: 1000 adds on a 4-element tensor.
  const ss::check::FnInfo* tiny = prog->fn("tiny");
  ss::eval::Value x4 = ss::eval::Value::tensor(
      ss::ops::Tensor::zeros({4}, ss::types::DType::F32));
  std::vector<double> tt;
  for (int r = 0; r < 20; ++r) {
    auto t0 = Clock::now();
    in.call(*tiny, {x4}, {});
    tt.push_back(
        std::chrono::duration<double, std::micro>(Clock::now() - t0).count() /
        1000.0);
  }
  std::printf(
      "interpreter overhead: %.2f us per op (a loop iteration with "
      "one tensor add of 4 elements)\n",
      median(tt));
  return 0;
}
