#pragma once
// Intra-op threads for the CPU kernels (Note [Intra-op threads] in
// cpu_threads.cpp).

#include <cstdint>
#include <functional>

namespace ss::ops::cpu {

/// Calls f(begin, end) over disjoint ranges that cover [0, n), on up to
/// as many threads as OpenBLAS may use (OPENBLAS_NUM_THREADS,
/// set_cpu_threads), when n is at least [grain] per thread; otherwise, or
/// when another call holds the threads, f(0, n) on the calling thread.
/// Every element's result must not depend on the split (no reductions
/// across ranges), so results are the same for any thread count.
void parallel_for(int64_t n,
                  int64_t grain,
                  const std::function<void(int64_t, int64_t)>& f);

/// The intra-op thread count: OpenBLAS's, unless set here (n > 0:
/// pin_blas_to_one_thread keeps the process's count for the kernels while
/// OpenBLAS runs one; 0 follows OpenBLAS again).
int intra_op_threads();
void set_intra_op_threads(int n);

/// The grain of elementwise kernels: below 2 x this many elements a
/// second thread costs more than it saves.
constexpr int64_t kElementGrain = 32768;

}  // namespace ss::ops::cpu
