// Note [A copy stream] (ops/cuda/cuda_memory.cu): a loader thread's
// uploads run on a stream of their own. Each lands before the kernels
// queued after it read it, and its block is written again only once the
// kernels that read it have run: a copy that overtook either would change
// a sum below. The pool's blocks go round: after the first batches, no
// cudaMalloc.

#include <thread>
#include <vector>

#include "tests/cuda/cuda_test_util.h"

using namespace cuda_test;

TEST_CASE("cuda: a loader thread's uploads on the copy stream stay ordered",
          "[cuda]") {
  // 4 MiB a batch: copies that take a while. Sums of at most 10 · 2^20
  // are exact in f32, whatever the fold order.
  const int64_t n = 1 << 20;
  const int batches = 40;
  std::vector<Tensor> sums;
  unsigned long long mallocs_after_warm_up = 0;
  for (int k = 0; k < batches; ++k) {
    Tensor batch;
    std::thread loader([&] {
      const LoaderThread mark;
      batch = Tensor::full({n}, double(k % 3), DType::F32).to(gpu0());
    });
    loader.join();
    // Queued behind the upload; several products make the kernels slow
    // enough that a later upload into this block would overtake them.
    Tensor x = batch;
    for (int r = 0; r < 4; ++r) x = GPU().binary(BinaryOp::Add, x, batch);
    sums.push_back(GPU().reduce(ReduceOp::Sum, x, {0}, false));
    batch = Tensor();
    x = Tensor();
    if (k == 4) mallocs_after_warm_up = memory_stats().first;
  }
  for (int k = 0; k < batches; ++k)
    CHECK(to_cpu(sums[k]).item() == double(5 * (k % 3)) * double(n));
  // The loader's blocks and its pinned sources went round: without
  // that, each batch would be a new block and a new pinned source (70).
  CHECK(memory_stats().first <= mallocs_after_warm_up + 8);
}
