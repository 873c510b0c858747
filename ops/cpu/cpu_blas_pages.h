#pragma once
// OpenBLAS's packing buffers on huge pages: Note [OpenBLAS's packing
// buffers on huge pages] (cpu_blas_pages.cpp).

namespace ss::ops::cpu {

/// OpenBLAS's own allocator of packing buffers (its internals, looked up
/// with dlsym): both null with another BLAS.
struct BlasBuffers {
  void* (*alloc)(int) = nullptr;
  void (*release)(void*) = nullptr;
};
BlasBuffers blas_buffers();

/// Asks the kernel for huge pages under the packing buffers OpenBLAS's
/// products on [threads] threads can draw; returns how many buffers it
/// advised (0 with another BLAS, or where madvise refuses).
int advise_blas_huge_pages(int threads);

}  // namespace ss::ops::cpu
