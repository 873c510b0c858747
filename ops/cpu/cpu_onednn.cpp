// Note [f32 products on oneDNN]
// A train step's f32 matrix products run on oneDNN's sgemm (dnnl_sgemm,
// libdnnl 2.6 from Debian), not on OpenBLAS, because on these machines it
// is twice as fast at every shape a model step has. Measured on the Zen 5
// the benches run on (one thread, best of 7, GFLOP/s; OpenBLAS with the
// OPENBLAS_CORETYPE=Haswell the machines set, deps.md §4):
//
//   shape (M x N x K)        OpenBLAS   oneDNN   libxsmm 1.17
//   64 x 256 x 784             105       217       228
//   64 x 10 x 256               60       102       127
//   784 x 256 x 64 (A^T)       108       209       222
//   64 x 256 x 10 (B^T)         76       145       (no kernel)
//   512 x 1024 x 256           110       195       172
//   6144 x 256 x 784           104       197       215
//
// oneDNN picks its kernels by the CPU it finds (AVX-512 here, where the
// preset core type keeps OpenBLAS on AVX2; OpenBLAS's own AVX-512 kernels
// reach 162-173 on the first shape, deps.md §4). libxsmm is as fast on
// small products but has no kernel for some transposes and falls behind on
// large ones; BLIS was no faster than OpenBLAS (deps.md §12). oneDNN's
// matmul primitive also takes epilogues (bias, eltwise, sum), which is why
// it and not libxsmm is the library chosen for the products.
//
// Threads: oneDNN's OpenMP runtime is held to one thread per call
// (omp_set_num_threads(1) on every thread that calls it), and a product's
// rows are split over our own pool (Note [Intra-op threads]), so there is
// one pool and no OpenMP threads spinning beside it: on two threads the
// split ran at 390-400 GFLOP/s where OpenMP's own two threads ran at 40-
// 415 (the mid transformer's shape at 40: its threads and ours fought).
//
// Bits: dnnl_sgemm gives a row different bits for different row counts
// (a block of 1 or 3 rows takes another kernel), so where bits must not
// depend on how rows are split (deterministic mode, Note [One BLAS
// thread] in cpu_backend.cpp), products stay on OpenBLAS on one thread,
// whose rows do not depend on the rows beside them; f64 products are
// always on OpenBLAS (oneDNN has no f64 matmul).

// Note [oneDNN's start-up off the first step]
// oneDNN's first product in a process of a step's sizes takes 32-39 ms
// (it generates its sgemm kernels once; later first products of new
// shapes take 0.01-0.2 ms; a 1 x 1 x 1 product takes another path and
// generates none): 30 ms of the README MLP's 200 steps at batch 64, whose
// steps take 0.42 ms each. warm_up_cpu_backend starts that on a
// thread of its own when a run is about to start, so it overlaps the
// program's loading (a model, a dataset) on an idle core, and the first
// product waits only for what is left of it. The thread is joined there,
// or by ss's main before it returns (settle_cpu_backend): exit's
// destructors of oneDNN's statics, registered while the thread makes
// them and so run before any of ours, crashed a run that ended within
// the 36 ms (a segfault in 1 of 5 runs of `print(1)`). Only a process
// whose main allows it (allow_cpu_warm_up: ss's, not a test binary's or a
// host language's) starts the thread. It starts 20 ms late, and main's
// join or the first product in those 20 ms cancels it: a program that
// ends sooner (most of the conformance suite) paid the 36 ms of wall time
// at exit, and its CPU, for kernels it never used (ctest on 2 cores took
// 610 s instead of 510); the README MLP's main loads for over 100 ms
// before its first product, so the 20 ms cost it none of the overlap.

#include <cblas.h>
#include <dnnl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ops/cpu/cpu_common.h"
#include "ops/cpu/cpu_threads.h"

// libgomp's entry point (oneDNN's OpenMP runtime); declared here rather
// than through <omp.h>, which clang's include path lacks without libomp.
extern "C" void omp_set_num_threads(int);

namespace ss::ops::cpu {

namespace {

std::atomic<bool> g_products_on_openblas{false};

/// Each thread that calls oneDNN runs its OpenMP regions alone.
void one_openmp_thread() {
  static thread_local bool set = (omp_set_num_threads(1), true);
  (void)set;
}

/// Rows per thread below which a second thread costs more than it saves:
/// about 2^18 multiply-adds, a product of some 20 us on one core.
int64_t row_grain(int64_t N, int64_t K) {
  return std::max<int64_t>(8, (int64_t{1} << 18) / std::max<int64_t>(1, N * K));
}

/// The warm-up thread, joined by the first product or main's settle.
/// It waits kWarmUpDelay first, and a product or main's settle in that
/// wait cancels it: most short runs end within it and pay nothing.
constexpr std::chrono::milliseconds kWarmUpDelay{20};

struct WarmUp {
  std::mutex m;  // guards cancel and the start
  std::condition_variable cv;
  bool cancel = false;
  std::mutex join_m;  // one joiner at a time
  std::thread thread;
  std::atomic<bool> allowed{false};
  std::atomic<bool> done{false};  // joined, or a product ran without it
};

WarmUp& warm_up() {
  static WarmUp* w = new WarmUp;  // never destroyed: exit may race a start
  return *w;
}

/// How long the warm-up waits before it starts: SHAPESCRIPT_WARM_UP_MS
/// (0 to 10000; 0 starts it at once, which the tests use to end the
/// shortest program during it), else kWarmUpDelay.
std::chrono::milliseconds warm_up_delay() {
  const char* v = std::getenv("SHAPESCRIPT_WARM_UP_MS");
  if (v && *v && std::strlen(v) <= 5 &&
      std::strspn(v, "0123456789") == std::strlen(v) && std::atoi(v) <= 10000)
    return std::chrono::milliseconds(std::atoi(v));
  return kWarmUpDelay;
}

}  // namespace

void allow_onednn_warm_up() {
  warm_up().allowed.store(true);
}

void wait_for_onednn_warm_up() {
  WarmUp& w = warm_up();
  if (w.done.load(std::memory_order_acquire)) return;
  {
    std::lock_guard<std::mutex> lk(w.m);
    w.cancel = true;  // not started yet: it never will
  }
  w.cv.notify_all();
  std::lock_guard<std::mutex> lk(w.join_m);
  if (w.thread.joinable()) w.thread.join();
  w.done.store(true, std::memory_order_release);
}

void start_onednn_warm_up() {
  WarmUp& w = warm_up();
  std::lock_guard<std::mutex> join(w.join_m);
  if (!w.allowed.load() || w.done.load() || w.thread.joinable()) return;
  w.thread = std::thread([&w, delay = warm_up_delay()] {
    {
      std::unique_lock<std::mutex> lk(w.m);
      if (w.cv.wait_for(lk, delay, [&] { return w.cancel; })) return;
    }
    one_openmp_thread();
    // A product of 1 x 1 x 1 takes another path and generates nothing;
    // 64^3 with each transpose generates what a step's products use.
    std::vector<float> a(64 * 64), b(64 * 64), c(64 * 64);
    for (char ta : {'N', 'T'})
      for (char tb : {'N', 'T'})
        (void)dnnl_sgemm(ta,
                         tb,
                         64,
                         64,
                         64,
                         1.f,
                         a.data(),
                         64,
                         b.data(),
                         64,
                         0.f,
                         c.data(),
                         64);
  });
}

void set_products_on_openblas(bool on) {
  g_products_on_openblas.store(on);
}

bool products_on_openblas() {
  return g_products_on_openblas.load();
}

void onednn_sgemm(bool ta,
                  bool tb,
                  int64_t M,
                  int64_t N,
                  int64_t K,
                  float alpha,
                  const float* A,
                  int64_t lda,
                  const float* B,
                  int64_t ldb,
                  float beta,
                  float* C,
                  int64_t ldc) {
  if (M == 0 || N == 0) return;
  // As blas_gemm: a leading dimension of 0 (an empty operand) reads as 1.
  lda = std::max<int64_t>(lda, 1), ldb = std::max<int64_t>(ldb, 1);
  ldc = std::max<int64_t>(ldc, 1);
  wait_for_onednn_warm_up();
  parallel_for(M, row_grain(N, K), [&](int64_t r0, int64_t r1) {
    one_openmp_thread();
    const float* a = ta ? A + r0 : A + r0 * lda;
    dnnl_status_t st = dnnl_sgemm(ta ? 'T' : 'N',
                                  tb ? 'T' : 'N',
                                  r1 - r0,
                                  N,
                                  K,
                                  alpha,
                                  a,
                                  lda,
                                  B,
                                  ldb,
                                  beta,
                                  C + r0 * ldc,
                                  ldc);
    if (st != dnnl_success)
      fail("matmul",
           "oneDNN's sgemm refused a product of " + std::to_string(r1 - r0) +
               "x" + std::to_string(N) + "x" + std::to_string(K) + " (status " +
               std::to_string(static_cast<int>(st)) + ")");
  });
}

std::string onednn_version() {
  const dnnl_version_t* v = dnnl_version();
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) +
         "." + std::to_string(v->patch);
}

}  // namespace ss::ops::cpu
