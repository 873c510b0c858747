#pragma once
// Index arithmetic of the CUDA kernels (SS_HD: also compiled by g++ for the
// unit tests): a flat index over a shape mapped to an element offset through
// strides, with the shape's axes coalesced first as the CPU's broadcast walk
// does (Note [Broadcast without materialising] in ops/cpu/cpu_common.h).

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "ops/backend/strides.h"
#include "ops/core/host_device.h"

namespace ss::ops::cuda {

/// The most axes a kernel walks after coalescing (more: an error naming
/// the op; coalescing merges runs, so only tensors of more than 8 truly
/// strided axes reach it).
constexpr int kMaxDims = 8;

/// A walk of [rank] axes of [sizes], each operand k reading element
/// offset sum(i_d * strides[k][d]). Passed to kernels by value.
template <int K>
struct StridedWalk {
  int rank = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[K][kMaxDims] = {};

  /// Offsets of each operand for the [flat]-th element (row-major).
  SS_HD void offsets(int64_t flat, int64_t (&off)[K]) const {
    for (int k = 0; k < K; ++k) off[k] = 0;
    for (int d = rank - 1; d >= 0; --d) {
      int64_t i = flat % sizes[d];
      flat /= sizes[d];
      for (int k = 0; k < K; ++k) off[k] += i * strides[k][d];
    }
  }
};

// Contiguous and broadcast strides are the CPU backend's too.
using backend::broadcast_strides;
using backend::contiguous_strides;

/// The coalesced walk of [shape] with each operand's [strides] over it:
/// size-1 axes dropped, and axis d merged into d+1 wherever every operand
/// reads them as one run. [op] names the kernel in the error for a walk of
/// more than kMaxDims axes.
template <int K>
StridedWalk<K> make_walk(const std::vector<int64_t>& shape,
                         const std::vector<std::vector<int64_t>>& strides,
                         const char* op) {
  StridedWalk<K> w;
  std::vector<int64_t> sz;
  std::vector<std::vector<int64_t>> st(K);
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool merge = !sz.empty();
    for (int k = 0; merge && k < K; ++k)
      merge = st[k].back() == strides[k][d] * shape[d];
    if (merge) {
      sz.back() *= shape[d];
      for (int k = 0; k < K; ++k) st[k].back() = strides[k][d];
      continue;
    }
    sz.push_back(shape[d]);
    for (int k = 0; k < K; ++k) st[k].push_back(strides[k][d]);
  }
  if (static_cast<int>(sz.size()) > kMaxDims)
    throw std::invalid_argument(std::string("[cuda ") + op + "] a walk of " +
                                std::to_string(sz.size()) +
                                " strided axes (at most " +
                                std::to_string(kMaxDims) + ")");
  w.rank = static_cast<int>(sz.size());
  for (int d = 0; d < w.rank; ++d) {
    w.sizes[d] = sz[d];
    for (int k = 0; k < K; ++k) w.strides[k][d] = st[k][d];
  }
  return w;
}

}  // namespace ss::ops::cuda
