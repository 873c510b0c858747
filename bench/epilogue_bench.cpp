// A product with its epilogue (Note [Products with epilogues] in
// ops/cpu/cpu_epilogue.cpp), three ways, at the shapes of the README MLP
// and the transformer block, on one thread:
//
//   unfused    the backend's default composition (Backend::matmul_epilogue:
//              the product, then a pass each for bias, activation, residual)
//   blocks     the CPU's kernel: blocks of rows, each finished in cache
//   primitive  oneDNN's matmul primitive with post-ops (bias, eltwise,
//              binary_add), created once, as a library would cache it
//
// Each variant runs in turn, 7 rounds, the order rotating each round; the
// median of each is printed with its ratio to unfused, and the load
// average before and after (these machines are noisy). A benchmark
// reports; it asserts nothing.
//
//   build/bench/epilogue_bench [ms per measurement, default 200]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <dnnl.hpp>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ops/backend/backend.h"
#include "ops/cpu/cpu_backend.h"

extern "C" void omp_set_num_threads(int);

namespace {

using Clock = std::chrono::steady_clock;
using namespace ss::ops;

struct Shape3 {
  int64_t M, N, K;
  const char* what;
};

const Shape3 kShapes[] = {
    {64, 256, 784, "README MLP hidden, batch 64"},
    {6144, 256, 784, "README MLP hidden, batch 6144"},
    {512, 512, 128, "transformer small up (b n = 512, D 128, F 512)"},
    {512, 128, 512, "transformer small down (+ residual)"},
    {4096, 1024, 256, "transformer mid up"},
};

void load(const char* when) {
  double l[3] = {0, 0, 0};
  if (getloadavg(l, 3) > 0)
    std::printf("load average %s: %.2f %.2f %.2f\n", when, l[0], l[1], l[2]);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Microseconds per call of [f], run for about [ms].
double time_us(const std::function<void()>& f, double ms) {
  f();
  int reps = 1;
  for (;;) {
    auto t0 = Clock::now();
    for (int r = 0; r < reps; ++r) f();
    double us =
        std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    if (us >= ms * 1000 || reps > (1 << 20)) return us / reps;
    reps *= 2;
  }
}

Tensor filled(const Shape& s, float scale) {
  Tensor t = Tensor::empty(s, DType::F32);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i)
    p[i] = scale * float((i * 7919) % 113 - 56) / 56.0f;
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const double ms = argc > 1 ? std::atof(argv[1]) : 200;
  set_cpu_threads(1);
  omp_set_num_threads(1);
  load("before");
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream st(eng);
  for (Activation act : {Activation::Relu, Activation::Gelu})
    for (const Shape3& s : kShapes) {
      const bool residual = s.N == 128;  // the down projection's add
      Tensor x = filled({s.M, s.K}, 1), w = filled({s.K, s.N}, 0.05f);
      Epilogue e;
      e.act = act;
      e.bias = filled({s.N}, 0.1f);
      if (residual) e.residual = filled({s.M, s.N}, 1);
      Backend& be = cpu_backend();
      // oneDNN's primitive: bias, the eltwise, and the residual as a
      // binary_add post-op reading it in place.
      using md = dnnl::memory::desc;
      using dt = dnnl::memory::data_type;
      using tag = dnnl::memory::format_tag;
      md ad({s.M, s.K}, dt::f32, tag::ab), bd({s.K, s.N}, dt::f32, tag::ab),
          biasd({1, s.N}, dt::f32, tag::ab), cd({s.M, s.N}, dt::f32, tag::ab);
      dnnl::post_ops po;
      po.append_eltwise(1.f,
                        act == Activation::Relu
                            ? dnnl::algorithm::eltwise_relu
                            : dnnl::algorithm::eltwise_gelu_erf,
                        0.f,
                        0.f);
      if (residual) po.append_binary(dnnl::algorithm::binary_add, cd);
      dnnl::primitive_attr attr;
      attr.set_post_ops(po);
      dnnl::matmul mm(dnnl::matmul::primitive_desc(
          dnnl::matmul::desc(ad, bd, biasd, cd), attr, eng));
      Tensor y = Tensor::empty({s.M, s.N}, DType::F32);
      dnnl::memory am(ad, eng, x.data<float>()), bm(bd, eng, w.data<float>()),
          biasm(biasd, eng, e.bias.data<float>()), cm(cd, eng, y.data<float>());
      dnnl::memory rm(cd, eng, residual ? e.residual.data<float>() : nullptr);
      std::vector<std::pair<const char*, std::function<void()>>> ways = {
          {"unfused", [&] { be.Backend::matmul_epilogue(x, w, e); }},
          {"blocks", [&] { be.matmul_epilogue(x, w, e); }},
          {"primitive",
           [&] {
             std::unordered_map<int, dnnl::memory> args = {
                 {DNNL_ARG_SRC, am},
                 {DNNL_ARG_WEIGHTS, bm},
                 {DNNL_ARG_BIAS, biasm},
                 {DNNL_ARG_DST, cm}};
             if (residual)
               args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(1) | DNNL_ARG_SRC_1] = rm;
             mm.execute(st, args);
             st.wait();
           }},
      };
      std::vector<std::vector<double>> us(ways.size());
      for (int round = 0; round < 7; ++round)
        for (size_t i = 0; i < ways.size(); ++i) {
          size_t k = (i + round) % ways.size();
          us[k].push_back(time_us(ways[k].second, ms));
        }
      const double base = median(us[0]);
      std::printf(
          "%-5s %-48s", act == Activation::Relu ? "relu" : "gelu", s.what);
      for (size_t i = 0; i < ways.size(); ++i)
        std::printf("  %s %8.1f us (%.2f)",
                    ways[i].first,
                    median(us[i]),
                    median(us[i]) / base);
      std::printf("\n");
      std::fflush(stdout);
    }
  load("after");
}
