// Note [Mid blocks]
// `ss` keeps a step's buffers in glibc's heap (keep_step_buffers_in_heap in
// tensor.cpp: one arena, a high mmap threshold), but those are settings of
// the whole process, which a host language's process keeps as its own
// (issue 27). There glibc serves a buffer above its mmap threshold (128
// KiB at first, raised only once such a buffer is freed) by a mapping of
// its own, and a thread's arena, where the session's thread allocates, is
// unmapped as soon as it empties: every training step faulted its buffers
// in afresh. The README MLP's step from Python took 1.44x `ss run`'s at
// batch 6144 and, once the big blocks' threshold moved, 1.9x at batch 64
// (bench/python_bench.py). So in such a process a buffer from
// kMidBlockBytes up to kBigBlockBytes is kept when freed, by its exact
// size, and handed out again, as PyTorch's caching allocators keep a step's
// blocks for the next: a step asks for the same sizes every step. The
// cache holds at most kMidCacheBytes; a block freed beyond that goes back
// to glibc.
#include "ops/core/mid_blocks.h"

#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace ss::ops {

namespace {

constexpr size_t kMidCacheBytes = size_t{512} << 20;

struct Cache {
  std::mutex mu;
  std::unordered_map<size_t, std::vector<void*>> free;  // by size
  size_t bytes = 0;
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: frees at exit still work
  return *c;
}

}  // namespace

void* mid_alloc(size_t bytes) {
  {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.free.find(bytes);
    if (it != c.free.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      c.bytes -= bytes;
      return p;
    }
  }
  return std::aligned_alloc(64, bytes);
}

void mid_free(void* p, size_t bytes) {
  {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mu);
    if (c.bytes + bytes <= kMidCacheBytes) {
      c.free[bytes].push_back(p);
      c.bytes += bytes;
      return;
    }
  }
  std::free(p);
}

size_t mid_blocks_cached() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.bytes;
}

}  // namespace ss::ops
