#pragma once
// The order in which a reduction folds its elements, and the order sort
// ranks them in: shared by the CPU backend (ops/cpu/cpu_reduce.cpp) and the
// CUDA kernels (ops/cuda/cuda_reduce.cu, cuda_index_ops.cu), so that both
// give the same bits (Note [One fold order for every backend]).
//
// Note [One fold order for every backend]
// A float sum depends on the order of its additions, so the order is part
// of the result: it is fixed here, once, and every backend folds in it.
// A reduction is planned as [outer, r, inner] (plan()). Rows (inner == 1)
// fold with four accumulators: lane k takes elements k, k+4, ... below the
// last multiple of 4, lane 0 also the tail, and the lanes combine as
// (a0 op a1) op (a2 op a3) (row_fold, or row_lane + combine_lanes where
// the lanes run on four threads). Columns (inner > 1) fold each output
// straight down its r rows (col_fold). Long reductions are chunked (Note
// [Reductions on threads] in ops/cpu/cpu_reduce.cpp): one long row
// (outer == 1, r >= 2 kFoldChunk) folds each kFoldChunk elements into a
// partial, and columns of one block of outputs (outer == 1, inner <=
// kColBlock) fold each col_row_chunk rows; the partials then combine in
// chunk order (combine_chunks). A chunk is the unit of parallel work, so
// neither the CPU's thread count nor the GPU's grid changes a bit; the
// test ops/tests/cuda_logic_reduce_test.cpp runs these functions as the
// kernels call them against cpu_backend().reduce.

#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "ops/core/host_device.h"

namespace ss::ops::fold_order {

/// Elements of one chunk of a long row, and about that many per chunk of
/// rows of a column fold.
constexpr int64_t kFoldChunk = 16384;
/// Outputs of a column fold the CPU folds as one block; a column fold is
/// chunked only when all outputs fit one block.
constexpr int64_t kColBlock = 1024;

/// A reduction as [outer, r, inner] over the (possibly permuted) input.
struct Plan {
  int64_t outer = 1, r = 1, inner = 1;
  /// The reduced axes interleave with kept ones: the input is permuted to
  /// [kept.., reduced..] first (then inner == 1).
  bool permute = false;
};

/// Merges adjacent axes that are all reduced or all kept (size-1 axes are
/// layout-neutral and dropped): the last axis of [64 10] is (64, 10, 1),
/// the batch axis of [64 256] is (1, 64, 256).
inline Plan plan(const std::vector<int64_t>& s, const std::vector<int>& axes) {
  std::vector<bool> red(s.size(), false);
  for (int a : axes) red[a] = true;
  std::vector<std::pair<int64_t, bool>> groups;  // (size, reduced)
  for (size_t d = 0; d < s.size(); ++d) {
    if (s[d] == 1) continue;
    if (!groups.empty() && groups.back().second == red[d])
      groups.back().first *= s[d];
    else
      groups.push_back({s[d], red[d]});
  }
  Plan p;
  if (groups.size() > 3 || (groups.size() == 3 && groups[0].second)) {
    p.permute = true;
    for (size_t d = 0; d < s.size(); ++d) (red[d] ? p.r : p.outer) *= s[d];
    return p;
  }
  size_t g = 0;
  if (g < groups.size() && !groups[g].second) p.outer = groups[g++].first;
  if (g < groups.size()) p.r = groups[g++].first;  // a reduced group
  if (g < groups.size()) p.inner = groups[g++].first;
  return p;
}

/// The permutation plan().permute asks for: kept axes, then reduced ones.
inline std::vector<int> kept_then_reduced(size_t rank,
                                          const std::vector<int>& axes) {
  std::vector<bool> red(rank, false);
  for (int a : axes) red[a] = true;
  std::vector<int> perm;
  for (size_t d = 0; d < rank; ++d)
    if (!red[d]) perm.push_back(static_cast<int>(d));
  for (size_t d = 0; d < rank; ++d)
    if (red[d]) perm.push_back(static_cast<int>(d));
  return perm;
}

// ------------------------------------------------------------ the ops

/// The fold operators. Sum and Prod of floats accumulate rows in double
/// and columns in the float type, of ints in i64 (ops/cpu/cpu_reduce.cpp
/// picks the accumulator); Max and Min let NaN win (the later NaN of two).
struct AddOp {
  template <class A>
  SS_HD A operator()(A a, A b) const {
    return static_cast<A>(a + b);
  }
};
struct MulOp {
  template <class A>
  SS_HD A operator()(A a, A b) const {
    return static_cast<A>(a * b);
  }
};
struct MaxOp {
  template <class A>
  SS_HD A operator()(A a, A b) const {
    return (b > a || b != b) ? b : a;
  }
};
struct MinOp {
  template <class A>
  SS_HD A operator()(A a, A b) const {
    return (b < a || b != b) ? b : a;
  }
};
struct OrOp {
  SS_HD bool operator()(bool a, bool b) const { return a || b; }
};
struct AndOp {
  SS_HD bool operator()(bool a, bool b) const { return a && b; }
};

/// A fold's start value [v] (0, 1, or a dtype's lowest or highest, given
/// as a double) in the accumulator type A: an integer's highest, 2^63 as a
/// double, is out of i64's range, and casting it is undefined (it gave
/// INT64_MIN on x86 once the cast was no longer constant-folded).
template <class A>
SS_HD A start_value(double v) {
  if constexpr (std::is_integral_v<A> && !std::is_same_v<A, bool>) {
    if (v >= static_cast<double>(std::numeric_limits<A>::max()))
      return std::numeric_limits<A>::max();
    if (v <= static_cast<double>(std::numeric_limits<A>::lowest()))
      return std::numeric_limits<A>::lowest();
  }
  return static_cast<A>(v);
}

/// The accumulators of Sum and Prod: rows of floats fold in double (cheap,
/// much more accurate), columns in the float type itself (they vectorise
/// on the CPU); ints fold in i64 either way.
template <class T>
using RowAcc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
template <class T>
using ColAcc = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;

/// Max's and Min's start values, as doubles for start_value: a float's
/// -inf / inf, an int's lowest / highest.
template <class T>
constexpr double lowest_of() {
  if constexpr (std::is_floating_point_v<T>)
    return -std::numeric_limits<double>::infinity();
  else
    return static_cast<double>(std::numeric_limits<T>::lowest());
}
template <class T>
constexpr double highest_of() {
  if constexpr (std::is_floating_point_v<T>)
    return std::numeric_limits<double>::infinity();
  else
    return static_cast<double>(std::numeric_limits<T>::max());
}

// ------------------------------------------------------------ rows

/// Chunks of a row fold: the chunk count of one long row, or 0 where each
/// row folds whole.
SS_HD int64_t row_chunks(const Plan& p) {
  if (p.inner != 1 || p.outer != 1 || p.r < 2 * kFoldChunk) return 0;
  return (p.r + kFoldChunk - 1) / kFoldChunk;
}

/// Chunk [c] of a chunked row: its first element and length.
SS_HD int64_t row_chunk_begin(int64_t c) {
  return c * kFoldChunk;
}
SS_HD int64_t row_chunk_len(int64_t r, int64_t c) {
  int64_t left = r - c * kFoldChunk;
  return left < kFoldChunk ? left : kFoldChunk;
}

/// The four-accumulator fold of [n] elements of [row].
template <class A, class T, class Op>
SS_HD A row_fold(const T* row, int64_t n, A init, Op op) {
  A a0 = init, a1 = init, a2 = init, a3 = init;
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) {
    a0 = op(a0, static_cast<A>(row[j]));
    a1 = op(a1, static_cast<A>(row[j + 1]));
    a2 = op(a2, static_cast<A>(row[j + 2]));
    a3 = op(a3, static_cast<A>(row[j + 3]));
  }
  for (; j < n; ++j) a0 = op(a0, static_cast<A>(row[j]));
  return op(op(a0, a1), op(a2, a3));
}

/// Accumulator [lane] (0..3) of row_fold on its own: what one of four
/// threads folds; combine_lanes then gives row_fold's value.
template <class A, class T, class Op>
SS_HD A row_lane(const T* row, int64_t n, int lane, A init, Op op) {
  A a = init;
  const int64_t n4 = n - n % 4;
  for (int64_t j = lane; j < n4; j += 4) a = op(a, static_cast<A>(row[j]));
  if (lane == 0)
    for (int64_t j = n4; j < n; ++j) a = op(a, static_cast<A>(row[j]));
  return a;
}
template <class A, class Op>
SS_HD A combine_lanes(A a0, A a1, A a2, A a3, Op op) {
  return op(op(a0, a1), op(a2, a3));
}

// ------------------------------------------------------------ columns

/// Rows per chunk of a chunked column fold.
SS_HD int64_t col_row_chunk(int64_t inner) {
  int64_t c = kFoldChunk / inner;
  return c > 1 ? c : 1;
}

/// Chunks of a column fold: their count where all outputs are one block
/// (outer == 1, inner <= kColBlock) and the rows make two chunks or more,
/// else 0 (each output folds all r rows).
SS_HD int64_t col_chunks(const Plan& p) {
  if (p.inner == 1) return 0;
  int64_t blocks = (p.inner + kColBlock - 1) / kColBlock;
  int64_t rc = col_row_chunk(p.inner);
  int64_t chunks = (p.r + rc - 1) / rc;
  return p.outer * blocks == 1 && chunks >= 2 ? chunks : 0;
}

/// One output's fold down rows [j0, j1) of a column: [x] is the column's
/// first element (row 0), rows [inner] elements apart.
template <class A, class T, class Op>
SS_HD A
col_fold(const T* x, int64_t inner, int64_t j0, int64_t j1, A init, Op op) {
  A a = init;
  for (int64_t j = j0; j < j1; ++j) a = op(a, static_cast<A>(x[j * inner]));
  return a;
}

/// Partials [chunks] of one output, [stride] apart, combined in chunk
/// order.
template <class A, class P, class Op>
SS_HD A combine_chunks(const P* part, int64_t chunks, int64_t stride, Op op) {
  A a = static_cast<A>(part[0]);
  for (int64_t c = 1; c < chunks; ++c)
    a = op(a, static_cast<A>(part[c * stride]));
  return a;
}

// ------------------------------------------------------------ argmax

/// Whether [v] beats [best] for argmax/argmin: NaN is the extreme and the
/// first one wins; ties keep the earlier index.
template <bool kMax, class T>
SS_HD bool arg_beats(T v, T best) {
  if constexpr (std::is_floating_point_v<T>) {
    if (best != best) return false;
    if (v != v) return true;
  }
  return kMax ? v > best : v < best;
}

/// The index of the extreme of [n] elements [stride] apart.
template <bool kMax, class T>
SS_HD int64_t arg_fold(const T* x, int64_t stride, int64_t n) {
  T best = x[0];
  int64_t bi = 0;
  for (int64_t j = 1; j < n; ++j)
    if (arg_beats<kMax>(x[j * stride], best)) best = x[j * stride], bi = j;
  return bi;
}

// ------------------------------------------------------------ sort

/// Whether key [a] sorts before [b]: NaN sorts as the largest value
/// (torch), so last ascending and first descending. A strict weak order;
/// a stable sort keeps equal keys (NaNs among them) in index order.
template <class T>
SS_HD bool sorts_before(T a, T b, bool descending) {
  if (descending) return b == b && (a != a || a > b);
  return a == a && (b != b || a < b);
}

/// The stable order as a strict total one: (key, index) pairs, equal keys
/// by index. Any correct sort by it is the stable sort.
template <class T>
SS_HD bool sorts_before_stable(
    T a, int64_t ia, T b, int64_t ib, bool descending) {
  if (sorts_before(a, b, descending)) return true;
  if (sorts_before(b, a, descending)) return false;
  return ia < ib;
}

/// One pass of a bottom-up merge sort of a row of [n] (key, index) pairs
/// sorted in runs of [w]: where pair [j] goes as runs [b, b+w) and
/// [b+w, b+2w) merge into [b, b+2w). Its offset in its run plus the pairs
/// of the other run that sort before it (a binary search): each pair finds
/// its place alone, so a pass is one thread per pair, and the order being
/// strict and total no two pairs land together.
template <class T>
SS_HD int64_t merge_target(const T* key,
                           const int64_t* idx,
                           int64_t n,
                           int64_t w,
                           int64_t j,
                           bool descending) {
  const int64_t b = j / (2 * w) * (2 * w);
  const int64_t mid = b + w < n ? b + w : n;
  const int64_t end = b + 2 * w < n ? b + 2 * w : n;
  const bool in_a = j < mid;
  const int64_t other = in_a ? mid : b;
  int64_t lo = other, hi = in_a ? end : mid;
  const T k = key[j];
  const int64_t ix = idx[j];
  while (lo < hi) {
    int64_t m = lo + (hi - lo) / 2;
    if (sorts_before_stable(key[m], idx[m], k, ix, descending))
      lo = m + 1;
    else
      hi = m;
  }
  return b + (j - (in_a ? b : mid)) + (lo - other);
}

}  // namespace ss::ops::fold_order
