#pragma once
// The CUDA module's memory (cuda_memory.cu): started once by the module's
// entry (cuda_backend.cu), then every device Storage comes from it.

#include <cstdint>

namespace ss::ops {
class StepRecorder;
}

namespace ss::ops::cuda {

struct MemoryStats {
  uint64_t device_mallocs = 0;  // cudaMalloc calls so far
  uint64_t device_bytes = 0;    // bytes held from the device, cached too
  uint64_t pinned_mallocs = 0;  // cudaMallocHost calls for uploads so far
};

/// Sets up the allocator for [device_count] devices and registers it as
/// CUDA's DeviceMemory (ops/core/tensor.h).
void start_memory(int device_count);
MemoryStats memory_stats();
/// Waits for the current device's stream (benchmarks, the step's end).
void synchronize();
/// The current device's compute stream, a cudaStream_t (NCCL's streams
/// wait on it: dist/comm/nccl/nccl_comm.cpp, Note [NCCL beside the
/// compute stream]).
void* current_stream();

/// The module's StepRecorder (cuda_recording.cu), which the entry
/// registers.
ss::ops::StepRecorder& recorder();

}  // namespace ss::ops::cuda
