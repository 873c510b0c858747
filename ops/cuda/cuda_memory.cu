// Device memory of the CUDA module: the caching allocator behind Storage
// (ops/core/tensor.h's DeviceMemory), host<->device copies through pinned
// buffers, the one compute stream of each device, and the device error word.

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "ops/core/op_error.h"
#include "ops/cuda/cuda_common.cuh"
#include "ops/cuda/cuda_memory.h"

namespace ss::ops::cuda {

void fail(const char* op, const std::string& msg) {
  backend::fail(kBackend, op, msg);
}

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  cudaGetLastError();  // clears a sticky launch error, where it is not fatal
  throw std::runtime_error(std::string("[cuda] ") + what + ": " +
                           cudaGetErrorString(e));
}

void after_launch(const char* op) {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("[cuda ") + op +
                             "] launch failed: " + cudaGetErrorString(e));
}

int current_device() {
  int d = 0;
  SS_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

namespace {

// Note [One stream]
// Every kernel, product and copy of a device runs on that device's one
// compute stream, in the order the evaluator issues them. So a block the
// allocator takes back can be handed out again at once: whatever reads it
// later is queued after whatever wrote it before (PyTorch's caching
// allocator reasons the same way per stream, and records events only for
// blocks used on a second stream). The host waits for the stream only
// where it needs a value: a copy to the host. The one exception is a
// loader thread's uploads (Note [A copy stream]).
//
// Note [A copy stream]
// A batch built on a loader thread (ops::LoaderThread: interp/data's
// Prefetcher) is copied to the GPU on a stream of its own, so the copy of
// the next batch runs while the step's kernels run. Two rules keep it
// right. The compute stream waits for each such copy (an event recorded
// after it, waited on before anything queued later), so no kernel reads a
// batch before it lands. And the copy must not write a block that queued
// kernels may still read: a loader thread's blocks come from a pool of
// their own, each given back with an event recorded on the compute stream
// as it is let go, and handed out again only once that event has passed
// (torch's record_stream); a fresh block when none has. In a steady loop
// the blocks of the batches in flight go round, and cudaMalloc is not
// called. A loader thread's fresh blocks are not poisoned (SS_CUDA_POISON):
// the poison would be a third stream's write.
//
// Note [Size classes]
// A training step asks for the same sizes every step, so exact reuse of
// rounded sizes is enough for a steady step to call cudaMalloc never: up
// to 1 MiB a request is rounded to 512 bytes, above it to 2 MiB, and a
// freed block waits in its class's list for the next request of that
// class. (PyTorch also splits large blocks and merges them back; a later
// step can add that when memory, not calls, is what runs short.) When a
// cudaMalloc fails, every cached block is freed and it is tried once more.

constexpr size_t kSmall = 1 << 20;

size_t size_class(size_t nbytes) {
  if (nbytes == 0) nbytes = 1;
  size_t q = nbytes <= kSmall ? 512 : (size_t(2) << 20);
  return (nbytes + q - 1) / q * q;
}

}  // namespace

// Note [A recorded step's pool]
// A CUDA graph keeps the addresses its work was recorded with, so the
// blocks that work used are its own for as long as it lives (PyTorch's
// private memory pool of a graph): what the recording thread allocates
// while it records comes from its step's pool, a block given back goes
// back there (reused only by that recording, in stream order), and the
// blocks the step reads that were made before (a model's params:
// StepRecorder::adopt) stay the pool's once their tensors let them go, so
// no other tensor is handed their address. When the step ends, its blocks
// go back to the device's lists. While a recording runs, other threads'
// work on that device waits (the stream is being captured: anything queued
// on it would land in the graph), as do their uploads.
struct GraphPool {
  int index = 0;
  std::map<size_t, std::vector<void*>> free_blocks;  // by size class
  std::unordered_map<void*, size_t> blocks;          // every one it owns
  // The recorded uploads' sources: small ones (a number met by a tensor)
  // from one pinned block taken before the capture began, larger ones
  // each their own.
  char* arena = nullptr;
  size_t arena_used = 0;
  std::vector<char*> pinned;
};

constexpr size_t kArenaBytes = size_t(256) << 10;

namespace {

struct DeviceState {
  int index = 0;
  // Note [A copy stream]: the loader threads' stream, their blocks (those
  // given back: each with the compute stream's event at that moment).
  cudaStream_t copy = nullptr;
  std::unordered_map<void*, size_t> loader_blocks;
  std::map<size_t, std::vector<std::pair<void*, cudaEvent_t>>> loader_free;
  // A recording on this device (Note [A recorded step's pool]).
  std::thread::id capturing;
  std::shared_ptr<GraphPool> capture_pool;
  cudaStream_t stream = nullptr;
  unsigned* error_word = nullptr;
  std::map<size_t, std::vector<void*>> free_blocks;  // by size class
  // Copies to the host: one pinned buffer (the host waits for each).
  char* staging = nullptr;
  // Copies from the host (Note [Uploads off the step]): pinned blocks by
  // size class, and those whose copy may still be running, each with the
  // event recorded after it; spare events.
  std::map<size_t, std::vector<char*>> pinned_free;
  struct Pending {
    cudaEvent_t done;
    size_t cls;
    char* block;
  };
  std::vector<Pending> pinned_pending;
  std::vector<cudaEvent_t> spare_events;
};

constexpr size_t kPinnedBytes = size_t(8) << 20;

class Memory final : public DeviceMemory {
 public:
  void* allocate(size_t nbytes, int index) override {
    std::unique_lock<std::mutex> lock(mu_);
    DeviceState& d = device(index);
    wait_unless_recording(lock, d);
    check(cudaSetDevice(index), "cudaSetDevice");  // a loader thread's too
    size_t cls = size_class(nbytes);
    if (LoaderThread::current() && d.capturing == std::thread::id())
      return loader_block(d, cls);
    GraphPool* pool = d.capture_pool.get();
    auto& list = pool ? pool->free_blocks[cls] : d.free_blocks[cls];
    void* p = nullptr;
    if (!list.empty()) {
      p = list.back();
      list.pop_back();
    } else {
      p = new_block(d, cls);
      if (pool) {
        pool->blocks[p] = cls;
        owner_[p] = d.capture_pool;
      }
    }
    if (poison_)  // all-ones bytes: NaN in every float dtype
      check(cudaMemsetAsync(p, 0xFF, cls, d.stream), "cudaMemsetAsync");
    return p;
  }

  void release(void* p, size_t nbytes, int index) override {
    std::unique_lock<std::mutex> lock(mu_);
    auto it = owner_.find(p);
    if (it != owner_.end()) {
      it->second->free_blocks[size_class(nbytes)].push_back(p);
      return;
    }
    DeviceState& d = device(index);
    auto lb = d.loader_blocks.find(p);
    if (lb != d.loader_blocks.end()) {
      if (d.capturing == std::this_thread::get_id()) {
        // No event can be recorded inside a recording: the block joins
        // the compute stream's lists (its copy has landed: the compute
        // stream waited for it).
        d.loader_blocks.erase(lb);
      } else {
        wait_unless_recording(lock, d);
        cudaEvent_t read = spare_event(d);
        check(cudaEventRecord(read, d.stream), "cudaEventRecord");
        d.loader_free[lb->second].push_back({p, read});
        return;
      }
    }
    d.free_blocks[size_class(nbytes)].push_back(p);
  }

  void to_host(void* dst, const void* src, size_t nbytes, int index) override {
    std::unique_lock<std::mutex> lock(mu_);
    DeviceState& d = device(index);
    if (d.capturing == std::this_thread::get_id())
      throw std::logic_error(
          "[cuda] a copy to the host while a step is recorded (its probe "
          "should have kept it from being recorded)");
    wait_unless_recording(lock, d);
    check(cudaSetDevice(index), "cudaSetDevice");
    // The host waits for the stream at each piece anyway: one buffer.
    for (size_t done = 0; done < nbytes; done += kPinnedBytes) {
      size_t n = std::min(kPinnedBytes, nbytes - done);
      char* buf = d.staging;
      check(cudaMemcpyAsync(buf,
                            static_cast<const char*>(src) + done,
                            n,
                            cudaMemcpyDeviceToHost,
                            d.stream),
            "cudaMemcpyAsync (device to host)");
      check(cudaStreamSynchronize(d.stream), "cudaStreamSynchronize");
      std::memcpy(static_cast<char*>(dst) + done, buf, n);
    }
    raise_device_errors(d);
  }

  // Note [Uploads off the step]
  // A batch is built on a loader thread and uploaded there too
  // (interp/data/batches.cpp), so its copy into pinned memory, the slow
  // part (a [6144 784] f32 batch is 19 MB: milliseconds of memcpy), runs
  // beside the step and not in it. That copy holds no lock: the step's
  // allocations go on meanwhile. The transfer itself is queued on the copy
  // stream (Note [A copy stream]), and the compute stream waits for it, so
  // it lands before any kernel queued after it reads the batch; its
  // pinned block goes back to its size
  // class once the event recorded after the transfer has passed (no host
  // wait, and no cudaMallocHost once the blocks of the batches in flight
  // exist: what torch's pin_memory=True with non_blocking copies gives).
  void from_host(void* dst,
                 const void* src,
                 size_t nbytes,
                 int index) override {
    if (nbytes == 0) return;
    const size_t cls = size_class(nbytes);
    char* block = nullptr;
    {
      std::unique_lock<std::mutex> lock(mu_);
      DeviceState& d = device(index);
      if (d.capturing == std::this_thread::get_id()) {
        // A recorded copy reads its source at every replay: bytes the
        // step keeps, never handed to another upload.
        block = host_bytes_locked(*d.capture_pool, nbytes);
        std::memcpy(block, src, nbytes);
        check(cudaMemcpyAsync(
                  dst, block, nbytes, cudaMemcpyHostToDevice, d.stream),
              "cudaMemcpyAsync (host to device)");
        return;
      }
      reap_pinned(d);
      auto& list = d.pinned_free[cls];
      if (!list.empty()) {
        block = list.back();
        list.pop_back();
      } else {
        check(cudaMallocHost(&block, cls), "cudaMallocHost");
        stats_.pinned_mallocs++;
      }
    }
    std::memcpy(block, src, nbytes);
    std::unique_lock<std::mutex> lock(mu_);
    DeviceState& d = device(index);
    wait_unless_recording(lock, d);
    check(cudaSetDevice(index), "cudaSetDevice");
    // Note [A copy stream]: a loader thread's batch on the copy stream,
    // which the compute stream then waits for.
    const bool beside = LoaderThread::current() && d.loader_blocks.count(dst);
    cudaStream_t on = beside ? d.copy : d.stream;
    check(cudaMemcpyAsync(dst, block, nbytes, cudaMemcpyHostToDevice, on),
          "cudaMemcpyAsync (host to device)");
    cudaEvent_t done = spare_event(d);
    check(cudaEventRecord(done, on), "cudaEventRecord");
    if (beside)
      check(cudaStreamWaitEvent(d.stream, done, 0), "cudaStreamWaitEvent");
    d.pinned_pending.push_back({done, cls, block});
  }

  void on_device(void* dst,
                 const void* src,
                 size_t nbytes,
                 int index) override {
    std::unique_lock<std::mutex> lock(mu_);
    DeviceState& d = device(index);
    wait_unless_recording(lock, d);
    check(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToDevice, d.stream),
          "cudaMemcpyAsync (device to device)");
  }

  cudaEvent_t spare_event(DeviceState& d) {
    cudaEvent_t e = nullptr;
    if (!d.spare_events.empty()) {
      e = d.spare_events.back();
      d.spare_events.pop_back();
    } else {
      check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming),
            "cudaEventCreate");
    }
    return e;
  }

  // A block from cudaMalloc; when the device is full, every cached block
  // is freed and it is tried once more.
  void* new_block(DeviceState& d, size_t cls) {
    void* p = nullptr;
    cudaError_t e = cudaMalloc(&p, cls);
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      free_cached(d);
      e = cudaMalloc(&p, cls);
    }
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      throw std::bad_alloc();  // Tensor::empty says which tensor
    }
    check(e, "cudaMalloc");
    stats_.device_mallocs++;
    stats_.device_bytes += cls;
    return p;
  }

  // Note [A copy stream]: a block no queued kernel reads any more, or a
  // fresh one.
  void* loader_block(DeviceState& d, size_t cls) {
    auto& list = d.loader_free[cls];
    for (size_t i = 0; i < list.size(); ++i) {
      cudaError_t e = cudaEventQuery(list[i].second);
      if (e == cudaErrorNotReady) continue;
      check(e, "cudaEventQuery");
      void* p = list[i].first;
      d.spare_events.push_back(list[i].second);
      list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
      d.loader_blocks[p] = cls;
      return p;
    }
    void* p = new_block(d, cls);
    d.loader_blocks[p] = cls;
    return p;
  }

  // Note [A recorded step's pool]: another thread's work waits for the
  // recording to end.
  void wait_unless_recording(std::unique_lock<std::mutex>& lock,
                             DeviceState& d) {
    const std::thread::id me = std::this_thread::get_id();
    recorded_.wait(lock, [&] {
      return d.capturing == std::thread::id() || d.capturing == me;
    });
  }

  std::shared_ptr<GraphPool> begin_capture(int index) {
    std::unique_lock<std::mutex> lock(mu_);
    DeviceState& d = device(index);
    wait_unless_recording(lock, d);
    check(cudaSetDevice(index), "cudaSetDevice");
    auto pool = std::make_shared<GraphPool>();
    pool->index = index;
    check(cudaMallocHost(&pool->arena, kArenaBytes), "cudaMallocHost");
    pool->pinned.push_back(pool->arena);
    // Relaxed: the pool's cudaMalloc calls are legal while it records.
    check(cudaStreamBeginCapture(d.stream, cudaStreamCaptureModeRelaxed),
          "cudaStreamBeginCapture");
    d.capturing = std::this_thread::get_id();
    d.capture_pool = pool;
    return pool;
  }

  // Pinned bytes a recorded step keeps while it lives: from the arena
  // taken before the capture, or a block of their own.
  char* host_bytes(GraphPool& pool, size_t nbytes) {
    std::lock_guard<std::mutex> lock(mu_);
    return host_bytes_locked(pool, nbytes);
  }
  char* host_bytes_locked(GraphPool& pool, size_t nbytes) {
    const size_t at = (pool.arena_used + 63) / 64 * 64;
    if (at + nbytes <= kArenaBytes) {
      pool.arena_used = at + nbytes;
      return pool.arena + at;
    }
    char* block = nullptr;
    check(cudaMallocHost(&block, std::max<size_t>(nbytes, 1)),
          "cudaMallocHost");
    pool.pinned.push_back(block);
    return block;
  }

  void adopt(GraphPool& pool, void* p, size_t nbytes) {
    std::lock_guard<std::mutex> lock(mu_);
    if (owner_.count(p)) return;  // another step's already
    pool.blocks[p] = size_class(nbytes);
    owner_[p] = device(pool.index).capture_pool;
  }

  cudaError_t end_capture(int index, cudaGraph_t* graph) {
    std::lock_guard<std::mutex> lock(mu_);
    DeviceState& d = device(index);
    cudaError_t e = cudaStreamEndCapture(d.stream, graph);
    d.capturing = std::thread::id();
    d.capture_pool.reset();
    recorded_.notify_all();
    return e;
  }

  // A step ended: its pool's blocks go back to the device, those a
  // tensor still holds when that tensor lets them go.
  void drop_pool(GraphPool& pool) {
    std::lock_guard<std::mutex> lock(mu_);
    // A replay may still run: the pinned sources are freed after it.
    check(cudaStreamSynchronize(device(pool.index).stream),
          "cudaStreamSynchronize");
    for (auto& [cls, list] : pool.free_blocks)
      for (void* p : list) device(pool.index).free_blocks[cls].push_back(p);
    for (auto& [p, cls] : pool.blocks) {
      auto it = owner_.find(p);
      if (it != owner_.end() && it->second.get() == &pool) owner_.erase(it);
    }
    for (char* b : pool.pinned) cudaFreeHost(b);
  }

  DeviceState& device(int index) {
    if (index < 0 || index >= static_cast<int>(devices_.size()))
      throw std::runtime_error(
          "[cuda] no device cuda:" + std::to_string(index) +
          " (this machine has " + std::to_string(devices_.size()) + ")");
    DeviceState& d = devices_[index];
    if (!d.stream) set_up(d, index);
    return d;
  }

  void start(int count) {
    devices_.resize(count);
    const char* p = std::getenv("SS_CUDA_POISON");
    poison_ = p && *p && std::string(p) != "0";
  }

  MemoryStats stats() {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }

  std::mutex mu_;

 private:
  void set_up(DeviceState& d, int index) {
    d.index = index;
    check(cudaSetDevice(index), "cudaSetDevice");
    check(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking),
          "cudaStreamCreateWithFlags");
    check(cudaStreamCreateWithFlags(&d.copy, cudaStreamNonBlocking),
          "cudaStreamCreateWithFlags");
    check(cudaMalloc(&d.error_word, sizeof(unsigned)), "cudaMalloc");
    check(cudaMemsetAsync(d.error_word, 0, sizeof(unsigned), d.stream),
          "cudaMemsetAsync");
    check(cudaMallocHost(&d.staging, kPinnedBytes), "cudaMallocHost");
  }

  // Uploads whose transfer has passed give their pinned blocks back.
  void reap_pinned(DeviceState& d) {
    auto& pending = d.pinned_pending;
    size_t kept = 0;
    for (size_t i = 0; i < pending.size(); ++i) {
      cudaError_t e = cudaEventQuery(pending[i].done);
      if (e == cudaErrorNotReady) {
        pending[kept++] = pending[i];
        continue;
      }
      check(e, "cudaEventQuery");
      d.pinned_free[pending[i].cls].push_back(pending[i].block);
      d.spare_events.push_back(pending[i].done);
    }
    pending.resize(kept);
  }

  // Note [Errors found on the device]
  // A kernel that meets an integer division by zero or an index out of
  // range cannot throw; it ORs a bit into its device's error word and
  // writes a harmless value. The word is read wherever the host waits for
  // the stream anyway (every copy to the host: a printed value, a loss
  // read at a step's end), so a step never stops to ask; the error then
  // names what happened, not where: the evaluator's own checks (ops/api)
  // name the `.ss` line before a kernel ever sees such a value.
  void raise_device_errors(DeviceState& d) {
    unsigned word = 0;
    check(cudaMemcpy(&word, d.error_word, sizeof word, cudaMemcpyDeviceToHost),
          "cudaMemcpy (error word)");
    if (!word) return;
    check(cudaMemset(d.error_word, 0, sizeof word), "cudaMemset");
    backend::raise_device_errors(word);
  }

  void free_cached(DeviceState& d) {
    check(cudaStreamSynchronize(d.stream), "cudaStreamSynchronize");
    check(cudaStreamSynchronize(d.copy), "cudaStreamSynchronize");
    for (auto& [cls, list] : d.free_blocks) {
      for (void* p : list) {
        cudaFree(p);
        stats_.device_bytes -= cls;
      }
      list.clear();
    }
    for (auto& [cls, list] : d.loader_free) {
      for (auto& [p, read] : list) {
        cudaFree(p);
        d.loader_blocks.erase(p);
        d.spare_events.push_back(read);
        stats_.device_bytes -= cls;
      }
      list.clear();
    }
  }

  std::vector<DeviceState> devices_;
  std::unordered_map<void*, std::shared_ptr<GraphPool>> owner_;
  std::condition_variable recorded_;
  bool poison_ = false;
  MemoryStats stats_;
};

Memory& memory() {
  static Memory* m = new Memory();  // lives past exit's destructors
  return *m;
}

}  // namespace

void start_memory(int device_count) {
  memory().start(device_count);
  set_device_memory(ss::ops::Device::Kind::Cuda, &memory());
}

MemoryStats memory_stats() {
  return memory().stats();
}

cudaStream_t stream() {
  Memory& m = memory();
  std::unique_lock<std::mutex> lock(m.mu_);
  DeviceState& d = m.device(current_device());
  m.wait_unless_recording(lock, d);
  return d.stream;
}

std::shared_ptr<GraphPool> begin_capture(int index) {
  return memory().begin_capture(index);
}

char* recorded_host_bytes(GraphPool& pool, size_t nbytes) {
  return memory().host_bytes(pool, nbytes);
}

void adopt_block(GraphPool& pool, void* p, size_t nbytes) {
  memory().adopt(pool, p, nbytes);
}

cudaError_t end_capture(int index, cudaGraph_t* graph) {
  return memory().end_capture(index, graph);
}

void drop_pool(GraphPool& pool) {
  memory().drop_pool(pool);
}

unsigned* device_error_word() {
  Memory& m = memory();
  std::lock_guard<std::mutex> lock(m.mu_);
  return m.device(current_device()).error_word;
}

void* current_stream() {
  return stream();
}

void synchronize() {
  check(cudaStreamSynchronize(stream()), "cudaStreamSynchronize");
}

Tensor empty(const Shape& shape, DType dtype) {
  return Tensor::empty(
      shape,
      dtype,
      ss::ops::Device{ss::ops::Device::Kind::Cuda, current_device()});
}

Tensor zeros(const Shape& shape, DType dtype) {
  Tensor t = empty(shape, dtype);
  if (t.nbytes())
    check(cudaMemsetAsync(t.raw(), 0, t.nbytes(), stream()), "cudaMemsetAsync");
  return t;
}

}  // namespace ss::ops::cuda

extern "C" {
/// The allocator's counters (ss_cuda_tests reads them through dlsym: a
/// steady step must call cudaMalloc and cudaMallocHost never).
void ss_cuda_memory_stats(unsigned long long* mallocs,
                          unsigned long long* bytes) {
  auto s = ss::ops::cuda::memory_stats();
  *mallocs = s.device_mallocs + s.pinned_mallocs;
  *bytes = s.device_bytes;
}
}
