// The CUDA backend's random draws and fused optimizer steps against the
// CPU backend. Uniform draws, AdamW and SGD are the CPU's bits (Note
// [Philox on the GPU] in ops/cuda/cuda_random.cu, Note [Optimizer steps
// without contraction] in ops/core/optim_step.h), over several steps so a
// last-bit drift would compound; normal draws go through the GPU's double
// log and cos and are held to a few ulp instead. The per-element logic
// itself is proven on the host (ops/tests/cuda_logic_optim_test.cpp):
// these prove the launches (every element written, the right buffers).

#include <cstdint>
#include <string>
#include <vector>

#include "tests/cuda/cuda_test_util.h"

namespace {

using namespace cuda_test;

const std::vector<Shape> kShapes = {{}, {1}, {7}, {3, 1000}, {2, 5, 513}};

std::string name_of(const Shape& s, DType d) {
  return shape_string(s) + " " + types::dtype_name(d);
}

/// A CPU tensor of positive values (AdamW's second moments).
Tensor positive(const Shape& s, DType d, uint64_t seed) {
  return rand(s, d, seed, 0.0, 0.01);
}

}  // namespace

TEST_CASE("cuda random: uniform draws are the CPU's bits", "[cuda]") {
  const uint64_t offsets[] = {0, 17, (uint64_t{1} << 32) - 100};
  for (DType d : {DType::F32, DType::F64, DType::BF16, DType::F16})
    for (const Shape& s : kShapes)
      for (uint64_t offset : offsets) {
        Tensor want = CPU().random(s, d, 42, 3, offset, false);
        Tensor got = GPU().random(s, d, 42, 3, offset, false);
        require_same_bits(
            want, got, name_of(s, d) + " offset " + std::to_string(offset));
      }
  // Another key and stream draw other values (not a constant kernel).
  Tensor a = to_cpu(GPU().random({64}, DType::F32, 1, 0, 0, false));
  Tensor b = to_cpu(GPU().random({64}, DType::F32, 1, 1, 0, false));
  CHECK(a.to_doubles() != b.to_doubles());
}

TEST_CASE("cuda random: normal draws within a few ulp of the CPU's", "[cuda]") {
  // CUDA's double log and cos are within 1 and 2 ulp (glibc's: correctly
  // rounded, nearly always): a few f64 ulp, which an f32 draw's rounding
  // hides but for one f32 ulp now and then.
  for (DType d : {DType::F32, DType::F64, DType::BF16, DType::F16}) {
    const double rtol = d == DType::F64   ? 1e-14
                        : d == DType::F32 ? 2.5e-7
                                          : rtol_of(d);
    for (const Shape& s : kShapes) {
      Tensor want = CPU().random(s, d, 7, 2, 5, true);
      Tensor got = GPU().random(s, d, 7, 2, 5, true);
      require_close(want, got, rtol, 0.0, name_of(s, d) + " normal");
    }
  }
}

TEST_CASE("cuda random: non-float dtypes are refused", "[cuda]") {
  CHECK_THROWS_AS(GPU().random({3}, DType::I32, 1, 0, 0, false),
                  std::invalid_argument);
}

TEST_CASE("cuda adamw: the CPU's bits over several steps, in place", "[cuda]") {
  for (DType d : {DType::F32, DType::F64, DType::BF16, DType::F16})
    for (const Shape& s : kShapes)
      for (double wd : {0.0, 0.01}) {
        const std::string what = name_of(s, d) + " wd " + std::to_string(wd);
        Tensor cp = rand(s, d, 1), cm = rand(s, d, 2, -0.1, 0.1),
               cv = positive(s, d, 3);
        Tensor gp = to_gpu(cp), gm = to_gpu(cm), gv = to_gpu(cv);
        const void* own[] = {gp.raw(), gm.raw(), gv.raw()};
        for (int64_t step = 1; step <= 5; ++step) {
          Tensor g = rand(s, d, 100 + step);
          CPU().adamw_update(cp, g, cm, cv, 1e-3, 0.9, 0.999, 1e-8, wd, step);
          GPU().adamw_update(
              gp, to_gpu(g), gm, gv, 1e-3, 0.9, 0.999, 1e-8, wd, step);
          const std::string at = what + " step " + std::to_string(step);
          require_same_bits(cp, gp, at + " p");
          require_same_bits(cm, gm, at + " m");
          require_same_bits(cv, gv, at + " v");
        }
        // The optimizer's own buffers were updated, not replaced.
        CHECK(gp.raw() == own[0]);
        CHECK(gm.raw() == own[1]);
        CHECK(gv.raw() == own[2]);
      }
}

TEST_CASE("cuda adamw: a gradient of another dtype is cast first", "[cuda]") {
  Tensor cp = rand({33}, DType::F64, 1), cm = rand({33}, DType::F64, 2),
         cv = positive({33}, DType::F64, 3), g = rand({33}, DType::F32, 4);
  Tensor gp = to_gpu(cp), gm = to_gpu(cm), gv = to_gpu(cv);
  CPU().adamw_update(cp, g, cm, cv, 1e-2, 0.9, 0.99, 1e-8, 0.1, 3);
  GPU().adamw_update(gp, to_gpu(g), gm, gv, 1e-2, 0.9, 0.99, 1e-8, 0.1, 3);
  require_same_bits(cp, gp, "p");
  require_same_bits(cm, gm, "m");
  require_same_bits(cv, gv, "v");
  Tensor wrong = to_gpu(rand({34}, DType::F64, 5));
  CHECK_THROWS_AS(
      GPU().adamw_update(gp, wrong, gm, gv, 1e-2, 0.9, 0.99, 1e-8, 0.1, 3),
      std::invalid_argument);
}

TEST_CASE("cuda sgd: the CPU's bits over several steps, in place", "[cuda]") {
  struct Case {
    double momentum, wd;
    bool nesterov;
  };
  const Case cases[] = {{0.0, 0.0, false},
                        {0.0, 1e-2, false},
                        {0.9, 0.0, false},
                        {0.9, 1e-2, false},
                        {0.9, 1e-2, true}};
  for (DType d : {DType::F32, DType::F64, DType::BF16, DType::F16})
    for (const Shape& s : kShapes)
      for (const Case& c : cases) {
        const std::string what =
            name_of(s, d) + " momentum " + std::to_string(c.momentum) + " wd " +
            std::to_string(c.wd) + (c.nesterov ? " nesterov" : "");
        const bool mom = c.momentum != 0;
        Tensor cp = rand(s, d, 1), cb = Tensor::zeros(s, d);
        Tensor gp = to_gpu(cp), gb = to_gpu(cb);
        const void* own[] = {gp.raw(), gb.raw()};
        for (int step = 0; step < 4; ++step) {
          const bool first = step == 0;  // the buffer starts as g
          Tensor g = rand(s, d, 200 + step);
          CPU().sgd_update(cp,
                           g,
                           mom ? &cb : nullptr,
                           0.05,
                           c.momentum,
                           c.wd,
                           c.nesterov,
                           first);
          GPU().sgd_update(gp,
                           to_gpu(g),
                           mom ? &gb : nullptr,
                           0.05,
                           c.momentum,
                           c.wd,
                           c.nesterov,
                           first);
          const std::string at = what + " step " + std::to_string(step);
          require_same_bits(cp, gp, at + " p");
          if (mom) require_same_bits(cb, gb, at + " buf");
        }
        CHECK(gp.raw() == own[0]);
        CHECK(gb.raw() == own[1]);
      }
}
