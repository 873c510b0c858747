// Counter-based random draws on the GPU, the twin of ops/cpu/cpu_random.cpp.
//
// Note [Philox on the GPU]
// Element i is a pure function of (key, counter = (offset + i, stream)), so
// each thread draws its own elements with no state and no order: the
// kernel runs ops/core/philox.h's very functions (SS_HD). A uniform draw is
// integer arithmetic and one exact scaling, the CPU's bits on any grid. A
// normal draw goes through double log and cos, which CUDA computes within
// 1 and 2 ulp and glibc (nearly always) correctly rounded: its last bits
// may differ from the CPU's. Matching them would take an own log and cos
// on both sides, changing every CPU init of the project, so the normal
// draws are held to a tolerance instead (tests/cuda/random_optim_test.cpp;
// f32 rounds most of the difference away).

#include <cstdint>
#include <string>

#include "ops/backend/primitive_checks.h"
#include "ops/core/philox.h"
#include "ops/cuda/cuda_common.cuh"

namespace ss::ops::cuda {

namespace {

template <class T>
void draw_into(T* out,
               int64_t n,
               uint64_t key,
               uint64_t stream_id,
               uint64_t offset,
               bool normal) {
  for_each(n, "random", [=] __device__(int64_t i) {
    philox::Block b =
        philox::draw(key, offset + static_cast<uint64_t>(i), stream_id);
    out[i] = normal ? static_cast<T>(philox::to_normal(b))
                    : static_cast<T>(philox::to_uniform(b[0]));
  });
}

}  // namespace

Tensor random(const Shape& shape,
              DType dtype,
              uint64_t key,
              uint64_t stream_id,
              uint64_t offset,
              bool normal) {
  backend::check_random_dtype(dtype, kBackend);
  if (is_half(dtype)) {
    // As the CPU: drawn in f32 and rounded once (from_f32).
    Tensor f = random(shape, DType::F32, key, stream_id, offset, normal);
    Tensor out = from_f32(f, dtype);
    if (!normal) {  // keep uniforms in [0, 1) (HalfUniformCap)
      const backend::HalfUniformCap cap = backend::half_uniform_cap(dtype);
      uint16_t* p = ptr<uint16_t>(out);
      for_each(out.numel(), "random", [=] __device__(int64_t i) {
        p[i] = cap(p[i]);
      });
    }
    return out;
  }
  Tensor out = empty(shape, dtype);
  if (dtype == DType::F32)
    draw_into(ptr<float>(out), out.numel(), key, stream_id, offset, normal);
  else
    draw_into(ptr<double>(out), out.numel(), key, stream_id, offset, normal);
  return out;
}

}  // namespace ss::ops::cuda
