// OpenBLAS's packing buffers on huge pages.
//
// Note [OpenBLAS's packing buffers on huge pages]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// OpenBLAS copies each block of a product's operands into a buffer of its
// own before its kernel reads them: one buffer per calling thread, taken
// from a table of 128 MiB anonymous mappings that it makes on first use
// (blas_memory_alloc). Linux backs them with 4 KiB pages unless asked for
// huge ones (transparent_hugepage set to "madvise", as on the machines this
// was measured on, hands a 2 MiB page only to ranges that madvise asked),
// and the packed block, a few MiB read over and over, then spreads over
// hundreds of TLB entries. On one thread, products whose output has few
// columns pay for it most: a 6144x784 by 784x256 sgemm (the README MLP's
// first layer at batch 6144) took 215-225 ms on 4 KiB pages and 69-76 ms
// on huge pages (AMD EPYC, Zen 1, OpenBLAS 0.3.21, 1 thread), the 36
// GFLOP/s a 2048^3 product reaches either way; the threaded driver
// partitions differently and was fast both ways. The same process could
// be fast or slow by chance, depending on which slot a product drew and
// whether an earlier threaded call had shifted them: the cause of the
// README MLP's 2.8x PyTorch's step at 1 thread in one run and 1.0x in
// another.
//
// So ss asks for huge pages for the first few slots itself: it borrows
// them with blas_memory_alloc, advises each one's whole mapping (found in
// /proc/self/maps) with MADV_HUGEPAGE, and hands them back; the pages
// come as a product first touches them. Only what a product touches
// becomes resident (about 2 MiB a slot), as before. The entry points are
// looked up with dlsym, as they are OpenBLAS's internals: with another
// BLAS, or where madvise refuses, nothing changes.

#include "ops/cpu/cpu_blas_pages.h"

#include <dlfcn.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ss::ops::cpu {

namespace {

/// The [start, end) of the mapping of /proc/self/maps that holds [p], or
/// {0, 0} when none does.
std::pair<uintptr_t, uintptr_t> mapping_of(const void* p) {
  auto at = reinterpret_cast<uintptr_t>(p);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    uintptr_t start = 0, end = 0;
    char dash = 0;
    in >> std::hex >> start >> dash >> end;
    if (in && dash == '-' && start <= at && at < end) return {start, end};
  }
  return {0, 0};
}

}  // namespace

BlasBuffers blas_buffers() {
  BlasBuffers b;
  b.alloc = reinterpret_cast<void* (*)(int)>(
      dlsym(RTLD_DEFAULT, "blas_memory_alloc"));
  b.release = reinterpret_cast<void (*)(void*)>(
      dlsym(RTLD_DEFAULT, "blas_memory_free"));
  if (!b.alloc || !b.release) return {};
  return b;
}

int advise_blas_huge_pages(int threads) {
  BlasBuffers buffers = blas_buffers();
  if (!buffers.alloc) return 0;
  // The slots a product can draw: the calling thread's and one per worker
  // thread, and a few more for the shifts of Note [OpenBLAS's packing
  // buffers on huge pages]. Each is address space only until touched.
  int slots = std::clamp(threads, 1, 64) + 3;
  std::vector<void*> borrowed;
  int advised = 0;
  for (int i = 0; i < slots; ++i) {
    void* p = buffers.alloc(0);
    if (!p) break;
    borrowed.push_back(p);
    auto [start, end] = mapping_of(p);
    if (end > start &&
        madvise(reinterpret_cast<void*>(start), end - start, MADV_HUGEPAGE) ==
            0)
      ++advised;
  }
  for (auto it = borrowed.rbegin(); it != borrowed.rend(); ++it)
    buffers.release(*it);
  return advised;
}

}  // namespace ss::ops::cpu
