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
// kCacheBytes, and handed out again to a request of exactly their size:
// a training step asks for the same sizes every step. A request that no
// cached block fits unmaps the oldest cached blocks, as many bytes as it
// maps, and a full cache unmaps its oldest: the cache never holds more
// than the tensors freed and nothing asked for again.
#include "ops/core/big_blocks.h"

#include <sys/mman.h>

#include <mutex>
#include <vector>

namespace ss::ops {

namespace {

constexpr size_t kCacheBytes = size_t{256} << 20;

struct Cache {
  std::mutex mu;
  std::vector<std::pair<void*, size_t>> blocks;  // oldest first
  size_t bytes = 0;
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
    for (size_t i = c.blocks.size(); i-- > 0;)
      if (c.blocks[i].second == bytes) {
        void* p = c.blocks[i].first;
        c.blocks.erase(c.blocks.begin() + static_cast<ptrdiff_t>(i));
        c.bytes -= bytes;
        return p;
      }
    // None of this size: the oldest blocks of other sizes go first, as
    // many bytes as this one maps, so a miss never adds to what the cache
    // and the tensors hold together (`shard params` frees 12 MiB pieces
    // and asks for 36 MiB params).
    size_t freed = 0;
    while (freed < bytes && !c.blocks.empty()) {
      out.push_back(c.blocks.front());
      freed += c.blocks.front().second;
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
  return p == MAP_FAILED ? nullptr : p;
}

void big_free(void* p, size_t bytes) {
  std::vector<std::pair<void*, size_t>> out;
  {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mu);
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
