// Note [Big blocks]
// glibc's heap keeps blocks up to 256 MiB (tensor.cpp keeps step buffers
// there, M_MMAP_THRESHOLD), and a freed block in the middle of the heap
// stays the process's: with three [3072 3072] f32 params and AdamW, data
// parallel's tensors never held more than 472 MiB at once, but each
// step's 36 MiB buffers landed in new places and the heap's free space
// grew 172 -> 460 MiB over four steps, VmHWM 634 MiB (SS_MEMORY_REPORT).
// So a buffer of kBigBlockBytes or more is its own mapping, unmapped when
// freed: the process holds what its tensors hold. Mapping afresh costs a
// page fault per 4 KiB each time, the 20% of a step that keeping buffers
// in the heap saved (tensor.cpp), so freed blocks are kept, up to
// kCacheBytes, and handed out again: a training step asks for the same
// sizes every step. A request takes the smallest cached block that fits
// it, up to half again its size (the block goes back whole when freed). A
// request that none fits maps a new block, and unmaps the oldest cached
// ones until the blocks held, the tensors' and the cache's, are no more
// than the most the tensors have held at once: the cache never raises the
// process's peak. (It used to unmap as many bytes as it mapped, and to
// take exact sizes only: on the mid transformer of
// bench/compare_transformer.py, whose step asks for 12 and 16 MiB blocks,
// each miss of one size unmapped the other, and a step page-faulted 70 MiB
// in afresh, 10% of its time.)
//
// Note [Big blocks on huge pages]
// A step's first touch of a new block is a page fault per 4 KiB, each one
// an exit to a hypervisor on the VMs these benchmarks run on: the mid
// transformer's first step took 0.88 s against 0.25 s for every later
// one, 0.49 s of it in the kernel over 60,000 faults (issue 29, "the
// wait": ss's wall time per step over its CPU time, in a run of a few
// steps). A big block is asked for on transparent huge pages
// (MADV_HUGEPAGE, which this kernel's THP setting "madvise" honours):
// a fault maps 2 MiB. Measured: the faults halve (60,000 -> 33,000, the
// rest are the heap's and smaller blocks'), as glibc's own
// glibc.malloc.hugetlb=1 tunable does for its heap. The bytes are zeroed
// all the same; where THP is off, madvise does nothing.
#include "ops/core/big_blocks.h"

#include <sys/mman.h>

#include <algorithm>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace ss::ops {

namespace {

constexpr size_t kCacheBytes = size_t{1} << 30;

struct Cache {
  std::mutex mu;
  std::vector<std::pair<void*, size_t>> blocks;  // oldest first
  size_t bytes = 0;
  size_t live = 0;       // handed out and not yet freed
  size_t live_peak = 0;  // the most [live] has been
  // Blocks handed out for a smaller request, by address: their size.
  std::unordered_map<void*, size_t> larger;
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: frees at exit still work
  return *c;
}

}  // namespace

void* big_alloc(size_t bytes) {
  std::vector<std::pair<void*, size_t>> out;
  {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mu);
    // The smallest cached block that fits, up to half again the request:
    // a step asks for a few sizes (12 and 16 MiB on the mid transformer),
    // and a cache that held only the other one missed every step.
    size_t best = c.blocks.size();
    for (size_t i = c.blocks.size(); i-- > 0;) {
      const size_t n = c.blocks[i].second;
      if (n >= bytes && n <= bytes + bytes / 2 &&
          (best == c.blocks.size() || n < c.blocks[best].second))
        best = i;
    }
    if (best < c.blocks.size()) {
      auto [p, n] = c.blocks[best];
      c.blocks.erase(c.blocks.begin() + static_cast<ptrdiff_t>(best));
      c.bytes -= n;
      c.live += n;
      if (n != bytes) c.larger[p] = n;
      return p;
    }
    c.live += bytes;
    // None of this size: the oldest blocks of other sizes go, as many as
    // it takes for the blocks held (the tensors' and the cache's) to stay
    // within the most the tensors have held at once, so a miss never
    // raises the process's peak (`shard params` frees 12 MiB pieces and
    // asks for 36 MiB params). Below that the cache is kept: the next
    // step asks for its sizes again.
    c.live_peak = std::max(c.live_peak, c.live);
    while (c.live + c.bytes > c.live_peak && !c.blocks.empty()) {
      out.push_back(c.blocks.front());
      c.bytes -= c.blocks.front().second;
      c.blocks.erase(c.blocks.begin());
    }
  }
  for (auto [q, n] : out) ::munmap(q, n);
  void* p = ::mmap(nullptr,
                   bytes,
                   PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS,
                   -1,
                   0);
  if (p == MAP_FAILED) return nullptr;
  // Note [Big blocks on huge pages].
  ::madvise(p, bytes, MADV_HUGEPAGE);
  return p;
}

void big_free(void* p, size_t bytes) {
  std::vector<std::pair<void*, size_t>> out;
  {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mu);
    if (auto it = c.larger.find(p); it != c.larger.end()) {
      bytes = it->second;  // a larger block than its request
      c.larger.erase(it);
    }
    c.live -= std::min(c.live, bytes);
    c.blocks.emplace_back(p, bytes);
    c.bytes += bytes;
    while (c.bytes > kCacheBytes) {
      out.push_back(c.blocks.front());
      c.bytes -= c.blocks.front().second;
      c.blocks.erase(c.blocks.begin());
    }
  }
  for (auto [q, n] : out) ::munmap(q, n);
}

size_t big_blocks_release() {
  std::vector<std::pair<void*, size_t>> out;
  size_t n = 0;
  {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mu);
    out.swap(c.blocks);
    n = c.bytes;
    c.bytes = 0;
    c.live_peak = c.live;  // the bound starts again from what is held
  }
  for (auto [q, k] : out) ::munmap(q, k);
  return n;
}

size_t big_blocks_cached() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.bytes;
}

}  // namespace ss::ops
