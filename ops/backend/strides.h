#pragma once
// Stride arithmetic shared by the backends (the CPU's row walks and the
// CUDA kernels' StridedWalk read operands through these): contiguous and
// broadcast strides, and a shape split around one axis.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ss::ops::backend {

/// Row-major (contiguous) strides in elements.
inline std::vector<int64_t> contiguous_strides(
    const std::vector<int64_t>& shape) {
  std::vector<int64_t> st(shape.size());
  int64_t s = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    st[d] = s;
    s *= shape[d];
  }
  return st;
}

/// Strides that read [in] (right-aligned) as if broadcast to [out]: 0 on
/// broadcast axes and on axes [in] lacks.
inline std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& in,
                                              const std::vector<int64_t>& out) {
  std::vector<int64_t> st(out.size(), 0);
  std::vector<int64_t> own = contiguous_strides(in);
  size_t lead = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) st[lead + d] = in[d] == 1 ? 0 : own[d];
  return st;
}

/// [shape] seen as [outer, shape[axis], inner].
struct AxisSplit {
  int64_t outer = 1, n = 1, inner = 1;
};
inline AxisSplit split_at(const std::vector<int64_t>& shape, int axis) {
  AxisSplit s;
  for (int i = 0; i < axis; ++i) s.outer *= shape[i];
  s.n = shape[axis];
  for (size_t i = axis + 1; i < shape.size(); ++i) s.inner *= shape[i];
  return s;
}

}  // namespace ss::ops::backend
