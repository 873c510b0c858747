// Note [Recorded steps on the stand-in]
// A CUDA graph holds its kernels with the addresses and arguments they
// were launched with, runs nothing while it is recorded, and reads its
// operands' bytes as they are when it is replayed; the bytes its work made
// while it was recorded stay its own (a private pool) for as long as it
// lives. The stand-in keeps the same contract with closures, so the rules
// a recorded step lives by (Note [Recorded steps] in
// interp/devices/recorded_calls.cpp) are proven here: a replay that read a
// value moved since, reused bytes given to another tensor, or missed a
// host effect would give other numbers than the eager run, which the
// tests compare bit for bit.
//   * Each primitive recorded keeps a closure that computes it again from
//     its operands (Tensor handles: the same bytes) into the output it
//     returned, and the replays run them in order.
//   * A primitive whose output is new runs as it is recorded too, so the
//     walk gets real shapes and the indices later primitives check are
//     real; nothing can tell, as the host may not read a value while it
//     records. One that writes older bytes (an update in place, a copy
//     into a tensor made before) only records: running it then and again
//     at the first replay would apply it twice.
//   * The first replay runs the whole step, as a graph's first launch does.
//   * A copy to the host while recording throws: a real capture would be
//     broken by it, and the probe before a recording should have found it.

#include "tests/stand_in_gpu/stand_in_steps.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <vector>

#include "tests/stand_in_gpu/guarded_arena.h"

namespace stand_in {

namespace {

// A step's private pool: the blocks allocated while it recorded. A block
// the host gives back stays with the step until the step ends.
struct Pool {
  std::map<void*, size_t> blocks;  // made while recording
  std::set<void*> adopted;         // made before (StepRecorder::adopt)
  std::map<void*, size_t> released;
};

std::mutex g_mu;
std::map<void*, std::shared_ptr<Pool>> g_owner;  // block -> its step's pool

std::atomic<uint64_t> g_recorded{0}, g_replays{0};

class Step final : public ss::ops::RecordedStep {
 public:
  Step() : pool(std::make_shared<Pool>()) {}
  ~Step() override {
    std::lock_guard<std::mutex> lock(g_mu);
    for (auto& [p, n] : pool->blocks) g_owner.erase(p);
    for (void* p : pool->adopted) g_owner.erase(p);
    for (auto& [p, n] : pool->released) arena_release(p, n);
  }
  void replay(const std::function<void()>& refresh) override;
  size_t nodes() const override { return work.size(); }
  size_t patchable() const override { return patches.size(); }

  std::vector<std::function<void()>> work;
  std::vector<std::shared_ptr<Patchable>> patches;
  std::shared_ptr<Pool> pool;
};

thread_local std::unique_ptr<Step> recording_step;
thread_local ss::ops::RecordedStep* patching_step = nullptr;
thread_local size_t patch_cursor = 0;

void Step::replay(const std::function<void()>& refresh) {
  if (recording_step)
    throw std::logic_error("stand-in gpu: a replay inside a recording");
  run_refresh(
      patching_step, patch_cursor, patches.size(), refresh, "stand-in gpu");
  const Access open;
  for (auto& w : work) w();
  ++g_replays;
}

class Recorder final : public ss::ops::StepRecorder {
 public:
  void begin(int) override {
    if (recording_step)
      throw std::logic_error("stand-in gpu: a recording inside a recording");
    recording_step = std::make_unique<Step>();
  }
  void adopt(const ss::ops::Tensor& t) override {
    if (!t.defined()) return;
    void* p = t.storage()->data();
    recording_step->pool->adopted.insert(p);
    std::lock_guard<std::mutex> lock(g_mu);
    g_owner[p] = recording_step->pool;
  }
  bool recording() const override { return recording_step != nullptr; }
  // A graph's host node with its copies: at each replay, in its place.
  void host_call(std::vector<ss::ops::Tensor> reads,
                 std::vector<ss::ops::Tensor> writes,
                 HostFn fn) override {
    // What fn throws ends the replay here, on the host: the host calls
    // after it are skipped, and settle() has nothing left to raise.
    record([reads, writes, fn] {
      std::vector<ss::ops::Tensor> in, out;
      for (const ss::ops::Tensor& t : reads) in.push_back(t.to({}));
      for (const ss::ops::Tensor& t : writes)
        out.push_back(ss::ops::Tensor::empty(t.shape(), t.dtype(), {}));
      fn(in, out);
      for (size_t i = 0; i < writes.size(); ++i) {
        ss::ops::Tensor w = writes[i];
        w.copy_from(out[i]);
      }
    });
  }
  std::unique_ptr<ss::ops::RecordedStep> end(std::string&) override {
    if (!recording_step)
      throw std::logic_error("stand-in gpu: a recording ended twice");
    ++g_recorded;
    return std::move(recording_step);
  }
};

}  // namespace

Mode mode() {
  if (recording_step) return Mode::Recording;
  if (patching_step) return Mode::Patching;
  return Mode::Eager;
}

void record(std::function<void()> work) {
  recording_step->work.push_back(std::move(work));
}

bool made_while_recording(const void* p) {
  if (!recording_step) return false;
  const auto& blocks = recording_step->pool->blocks;
  auto it = blocks.upper_bound(const_cast<void*>(p));
  if (it == blocks.begin()) return false;
  --it;
  return static_cast<const char*>(p) <
         static_cast<const char*>(it->first) + it->second;
}

void record_patchable(std::shared_ptr<Patchable> args) {
  recording_step->patches.push_back(std::move(args));
}

std::shared_ptr<Patchable> next_patchable() {
  Step* s = static_cast<Step*>(patching_step);
  if (patch_cursor >= s->patches.size())
    throw std::logic_error(
        "stand-in gpu: a replay's refresh made more patchable calls than "
        "were recorded");
  return s->patches[patch_cursor++];
}

void note_allocated(void* p, size_t nbytes) {
  if (!recording_step) return;
  recording_step->pool->blocks[p] = nbytes;
  std::lock_guard<std::mutex> lock(g_mu);
  g_owner[p] = recording_step->pool;
}

bool may_release(void* p, size_t nbytes) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_owner.find(p);
  if (it == g_owner.end()) return true;
  it->second->released[p] = nbytes;
  return false;
}

void note_host_read() {
  if (recording_step)
    throw std::logic_error(
        "stand-in gpu: a GPU's bytes were read on the host while a step was "
        "recorded (a CUDA capture would be broken): its probe should have "
        "kept it from being recorded");
  if (patching_step)
    throw std::logic_error(
        "stand-in gpu: a replay's refresh read a GPU's bytes on the host");
}

ss::ops::StepRecorder& recorder() {
  static Recorder r;
  if (const char* e = std::getenv("SS_STAND_IN_REPORT"); e && *e == '1') {
    static std::once_flag once;
    std::call_once(once, [] {
      std::atexit([] {
        std::fprintf(stderr,
                     "stand-in gpu steps: %llu recorded, %llu replays\n",
                     static_cast<unsigned long long>(g_recorded.load()),
                     static_cast<unsigned long long>(g_replays.load()));
      });
    });
  }
  return r;
}

}  // namespace stand_in
