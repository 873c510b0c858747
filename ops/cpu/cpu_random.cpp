// Counter-based random draws (Philox4x32-10, ops/core/philox.h): element i
// is a pure function of (key, counter = (offset + i, stream)), so a tensor
// drawn at [offset] continues the sequence of one drawn at 0.

#include "ops/backend/primitive_checks.h"
#include "ops/core/philox.h"
#include "ops/cpu/cpu_common.h"

namespace ss::ops::cpu {

namespace {

template <class T>
void draw_into(T* out,
               int64_t n,
               uint64_t key,
               uint64_t stream,
               uint64_t offset,
               bool normal) {
  for (int64_t i = 0; i < n; ++i) {
    philox::Block b =
        philox::draw(key, offset + static_cast<uint64_t>(i), stream);
    out[i] = normal ? static_cast<T>(philox::to_normal(b))
                    : static_cast<T>(philox::to_uniform(b[0]));
  }
}

}  // namespace

Tensor random(const Shape& shape,
              DType dtype,
              uint64_t key,
              uint64_t stream,
              uint64_t offset,
              bool normal) {
  backend::check_random_dtype(dtype, kBackend);
  if (is_half(dtype)) {
    Tensor f = random(shape, DType::F32, key, stream, offset, normal);
    Tensor out = from_f32(f, dtype);
    if (!normal) {  // keep uniforms in [0, 1) (HalfUniformCap)
      const backend::HalfUniformCap cap = backend::half_uniform_cap(dtype);
      uint16_t* p = out.data<uint16_t>();
      for (int64_t i = 0, n = out.numel(); i < n; ++i) p[i] = cap(p[i]);
    }
    return out;
  }
  Tensor out = Tensor::empty(shape, dtype);
  if (dtype == DType::F32)
    draw_into(out.data<float>(), out.numel(), key, stream, offset, normal);
  else
    draw_into(out.data<double>(), out.numel(), key, stream, offset, normal);
  return out;
}

}  // namespace ss::ops::cpu
