// Note [Intra-op threads]
// Large elementwise kernels and row kernels (unary, binary on same-shaped
// operands, where, the fused softmax, layer_norm and gelu) split their
// elements or rows over threads, as PyTorch's at::parallel_for does with
// OpenMP. The thread count is OpenBLAS's (openblas_get_num_threads): the
// user's OPENBLAS_NUM_THREADS, or set_cpu_threads (`ss run --threads N`,
// Note [Thread count] in interp/cli/cmd_run.cpp; 1 on each `ss worker`
// of a run on several devices, whose ranks already fill the cores), so a
// count of 1 means no intra-op threads at all. Reductions stay
// on one thread: splitting them would change the order of their sums, and
// with it the results, by the thread count.
//
// One pool of helper threads, made on first use and never destroyed (no
// join at exit while a kernel runs). One call uses it at a time: a second
// caller (ranks as threads, interp/devices/threads) runs its kernel on its
// own thread instead of waiting. A process forked after the pool exists
// has none of its threads, so the pool is used only by the process that
// made it.

#include "ops/cpu/cpu_threads.h"

#include <cblas.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace ss::ops::cpu {

namespace {

class Pool {
 public:
  explicit Pool(int helpers) : pid_(getpid()) {
    for (int i = 0; i < helpers; ++i) threads_.emplace_back([this] { work(); });
    for (auto& t : threads_) t.detach();
  }

  int helpers() const { return static_cast<int>(threads_.size()); }
  bool ours() const { return getpid() == pid_; }
  std::mutex& busy() { return busy_; }

  /// Runs f over [chunks] chunks on the caller and [use] helpers.
  void run(int64_t n,
           int chunks,
           int use,
           const std::function<void(int64_t, int64_t)>& f) {
    {
      std::lock_guard<std::mutex> lk(m_);
      f_ = &f, n_ = n, chunks_ = chunks, use_ = use;
      next_ = 0, running_ = use;
      ++generation_;
    }
    cv_.notify_all();
    take_chunks();
    std::unique_lock<std::mutex> lk(m_);
    done_.wait(lk, [&] { return running_ == 0; });
    f_ = nullptr;
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  // A kernel's error (an integer division by zero) stops the chunks not
  // yet taken and is rethrown on the caller once every thread is out.
  void take_chunks() {
    for (int c; (c = next_.fetch_add(1)) < chunks_;) {
      int64_t b = n_ * c / chunks_, e = n_ * (c + 1) / chunks_;
      try {
        (*f_)(b, e);
      } catch (...) {
        next_ = chunks_;
        std::lock_guard<std::mutex> lk(error_m_);
        if (!error_) error_ = std::current_exception();
      }
    }
  }

  void work() {
    uint64_t seen = 0;
    int me = index_.fetch_add(1);
    for (;;) {
      {
        std::unique_lock<std::mutex> lk(m_);
        cv_.wait(lk, [&] { return generation_ != seen; });
        seen = generation_;
        if (me >= use_) continue;
      }
      take_chunks();
      std::lock_guard<std::mutex> lk(m_);
      if (--running_ == 0) done_.notify_one();
    }
  }

  const pid_t pid_;
  std::vector<std::thread> threads_;
  std::mutex busy_, m_, error_m_;
  std::exception_ptr error_;
  std::condition_variable cv_, done_;
  const std::function<void(int64_t, int64_t)>* f_ = nullptr;
  int64_t n_ = 0;
  int chunks_ = 0, use_ = 0, running_ = 0;
  std::atomic<int> next_{0}, index_{0};
  uint64_t generation_ = 0;
};

Pool& pool() {
  unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  static Pool* p = new Pool(static_cast<int>(hw) - 1);  // never destroyed
  return *p;
}

}  // namespace

namespace {
std::atomic<int> g_intra_op_threads{0};  // 0: OpenBLAS's count
}  // namespace

int intra_op_threads() {
  const int n = g_intra_op_threads.load();
  return n > 0 ? n : std::max(1, openblas_get_num_threads());
}

void set_intra_op_threads(int n) {
  g_intra_op_threads.store(std::max(0, n));
}

void parallel_for(int64_t n,
                  int64_t grain,
                  const std::function<void(int64_t, int64_t)>& f) {
  int want = intra_op_threads();
  int64_t by_size = grain > 0 ? n / grain : n;
  int threads = static_cast<int>(std::min<int64_t>(want, by_size));
  if (threads <= 1) {
    if (n > 0) f(0, n);
    return;
  }
  Pool& p = pool();
  std::unique_lock<std::mutex> lk(p.busy(), std::try_to_lock);
  int use = std::min(threads - 1, p.helpers());
  if (!lk.owns_lock() || !p.ours() || use == 0) {
    f(0, n);
    return;
  }
  p.run(n, use + 1, use, f);
}

}  // namespace ss::ops::cpu
