#pragma once
// Internal to ops/cuda's .cu files: error checks, the stream every kernel
// runs on, device tensors, dtype dispatch and the grid-stride launcher.
//
// Conventions, as ops/cpu's (cpu_common.h): inputs are contiguous; half
// types (bf16, f16) are widened to f32, computed, and rounded back once
// (to_f32 / from_f32); a broken backend precondition is fail()'s
// std::invalid_argument("[cuda <op>] ..."); a CUDA error is check()'s
// std::runtime_error naming the call. Every kernel runs on stream(): the
// host never waits inside a step (Note [One stream] in cuda_memory.cu).

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "ops/backend/device_errors.h"
#include "ops/backend/dtype_dispatch.h"
#include "ops/core/host_device.h"
#include "ops/cuda/cuda_index.h"
#include "ops/cuda/cuda_kernels.h"

namespace ss::ops::cuda {

[[noreturn]] void fail(const char* op, const std::string& msg);
/// Throws std::runtime_error("[cuda] <what>: <cuda's text>") unless ok.
void check(cudaError_t e, const char* what);
#define SS_CUDA_CHECK(expr) ::ss::ops::cuda::check((expr), #expr)
/// After a launch: the launch's own error, if any, as check() reports it.
void after_launch(const char* op);

/// The compute stream of the current device (one per device).
cudaStream_t stream();
/// The device this thread computes on (cudaGetDevice).
int current_device();
/// Recording a step (cuda_recording.cu, Note [A recorded step's pool] in
/// cuda_memory.cu): begin_capture starts capturing GPU [index]'s stream
/// and routes this thread's allocations to the returned pool until
/// end_capture; adopt_block gives the pool a block made before;
/// drop_pool hands its blocks back as the step ends.
struct GraphPool;
std::shared_ptr<GraphPool> begin_capture(int index);
void adopt_block(GraphPool& pool, void* p, size_t nbytes);
/// Pinned host bytes [pool]'s step keeps while it lives (a host call's
/// copies: cuda_recording.cu).
char* recorded_host_bytes(GraphPool& pool, size_t nbytes);
cudaError_t end_capture(int index, cudaGraph_t* graph);
void drop_pool(GraphPool& pool);

/// An uninitialised tensor on the current device (the caching allocator's
/// bytes: no cudaMalloc in a steady step).
Tensor empty(const Shape& shape, DType dtype);
/// Zeros on the current device (cudaMemsetAsync on stream()).
Tensor zeros(const Shape& shape, DType dtype);

/// Errors a kernel finds in its data (an integer division by zero, an
/// index out of range) cannot throw: the kernel ORs its bit
/// (ops/backend/device_errors.h) into one device word, which the host
/// reads when it next waits for the stream anyway (a copy to the host, the
/// step's end) and turns into the error (Note [Errors found on the
/// device] in cuda_memory.cu).
using backend::kIndexOutOfRange;
using backend::kIntegerDivisionByZero;
using backend::kLabelOutOfRange;
using backend::kNegativeIntegerPower;
using backend::kProbabilityOutOfRange;
/// The device word of the current device (pass it to the kernel).
unsigned* device_error_word();

/// The name in this backend's errors ("[cuda <op>] ...").
constexpr const char* kBackend = "cuda";

// Dtype dispatch and axis splits are shared with the CPU backend
// (ops/backend/dtype_dispatch.h, ops/backend/strides.h).
using backend::AxisSplit;
using backend::is_half;
using backend::split_at;
using backend::visit_bytes;

/// A half tensor widened to f32 (any other tensor is returned as is).
Tensor to_f32(const Tensor& x);
/// An f32 tensor rounded to [to] (bf16/f16); other dtypes: cast.
Tensor from_f32(const Tensor& x, DType to);

/// backend::visit with this backend's errors: f(T{}) for f32, f64, i32,
/// i64 and bool (halves are widened first).
template <class F>
decltype(auto) visit(DType d, const char* op, F&& f) {
  return backend::visit(d, kBackend, op, std::forward<F>(f));
}

constexpr int kThreads = 256;

template <class F>
__global__ void for_each_kernel(int64_t n, F f) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
       i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    f(i);
}

/// Runs f(i) for i in [0, n) on stream(), grid-stride (f: a __device__
/// lambda or functor taking int64_t). [op] names the kernel in errors.
template <class F>
void for_each(int64_t n, const char* op, F f) {
  if (n <= 0) return;
  int64_t blocks = (n + kThreads - 1) / kThreads;
  if (blocks > 65536) blocks = 65536;
  for_each_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream()>>>(n,
                                                                            f);
  after_launch(op);
}

/// Patchable kernels (Note [Recorded steps on a GPU] in
/// cuda_recording.cu): whether this thread runs a replay's refresh;
/// note_patchable (after a launch) marks the node a recording just took;
/// patch_next has [edit] change a copy of the next patchable node's
/// functor ([size] bytes; [kernel] its for_each_kernel) and sets it.
bool patching();
void note_patchable();
void patch_next(const void* kernel,
                size_t size,
                const std::function<void(void*)>& edit);

/// for_each, with a functor (trivially copyable) whose fields a replay's
/// refresh may change through patch_for_each<F>.
template <class F>
void for_each_patchable(int64_t n, const char* op, F f) {
  if (n <= 0) return;
  for_each(n, op, f);
  note_patchable();
}
/// In a refresh: [edit](F&) on the next patchable node's recorded functor
/// (of [n] elements, as it was launched) instead of a launch.
template <class F, class Edit>
void patch_for_each(int64_t n, Edit edit) {
  if (n <= 0) return;
  patch_next(reinterpret_cast<const void*>(&for_each_kernel<F>),
             sizeof(F),
             [&](void* bytes) { edit(*static_cast<F*>(bytes)); });
}

/// Row-major strided-batched products on stream() through cuBLAS (f32 in
/// true f32, TF32 off; f64): for each of [batch] matrices,
/// C = alpha * op(A) @ op(B) + beta * C with op(A) [M K], op(B) [K N];
/// [lda] etc. are row-major leading dimensions and [stride_*] the elements
/// between consecutive matrices (0: one matrix shared by the batch). K = 0
/// (an empty sum) gives beta * C.
/// cuda_matmul.cu.
template <class T>
void gemm(bool trans_a,
          bool trans_b,
          int64_t M,
          int64_t N,
          int64_t K,
          T alpha,
          const T* A,
          int64_t lda,
          int64_t stride_a,
          const T* B,
          int64_t ldb,
          int64_t stride_b,
          T beta,
          T* C,
          int64_t ldc,
          int64_t stride_c,
          int64_t batch);

/// Typed device pointers of a tensor's bytes.
template <class T>
T* ptr(Tensor& t) {
  return static_cast<T*>(t.raw());
}
template <class T>
const T* ptr(const Tensor& t) {
  return static_cast<const T*>(t.raw());
}

}  // namespace ss::ops::cuda
