// Note [GPU bytes the host cannot read]
// On a GPU, host code that reads a device pointer (raw() of a GPU tensor
// handed to a memcpy, ref/'s loops, a wire write) crashes; on the stand-in
// its bytes are host memory and the read would pass unseen. So they live
// in one mapping, PROT_NONE but while a primitive of the stand-in backend,
// an allocation or a copy runs (an Access, counted across threads: the
// mapping is closed when the last one ends). A host read outside them
// faults, and the handler says so with the stack before the process
// aborts. While two threads hold Access, a third's read passes: the
// check can miss, never blame wrongly. Each Access is two mprotect calls,
// so the guard is on only with SS_STAND_IN_GUARD=1 (ctest's
// conformance_stand_in_gpu_ids, the op table and the Python module's GPU
// test); otherwise the mapping is always open.

#include "tests/stand_in_gpu/guarded_arena.h"

#include <execinfo.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <vector>

namespace stand_in {

namespace {

constexpr size_t kReserved = size_t{64} << 30;  // address space, not memory

struct Arena {
  // SS_STAND_IN_GUARD=1: closed outside an Access (each toggle is an
  // mprotect: 2-10x slower); otherwise always open.
  bool guard = false;
  char* base = nullptr;
  size_t used = 0;  // bytes handed out so far, from base (page-rounded)
  int open = 0;     // Access objects alive
  std::map<size_t, std::vector<char*>> free;  // by size class
  std::mutex mu;
};

Arena& arena();

void on_fault(int sig, siginfo_t* info, void*) {
  Arena& a = arena();
  char* at = static_cast<char*>(info->si_addr);
  if (at >= a.base && at < a.base + kReserved) {
    char line[160];
    int n = std::snprintf(line,
                          sizeof line,
                          "stand-in gpu: the host read a GPU's bytes at "
                          "offset %zu, outside the backend (Note [GPU bytes "
                          "the host cannot read])\n",
                          static_cast<size_t>(at - a.base));
    if (write(2, line, size_t(n)) < 0) {
    }
    void* frames[48];
    backtrace_symbols_fd(frames, backtrace(frames, 48), 2);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

Arena& arena() {
  static Arena* a = [] {
    auto* x = new Arena;
    const char* g = std::getenv("SS_STAND_IN_GUARD");
    x->guard = g && g[0] == '1';
    void* p = mmap(nullptr,
                   kReserved,
                   x->guard ? PROT_NONE : PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1,
                   0);
    if (p == MAP_FAILED) std::abort();
    x->base = static_cast<char*>(p);
    struct sigaction sa {};
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, nullptr);
    return x;
  }();
  return *a;
}

size_t size_class(size_t n) {
  const size_t page = 4096;
  return (std::max<size_t>(n, 1) + page - 1) / page * page;
}

}  // namespace

Access::Access() {
  Arena& a = arena();
  if (!a.guard) return;
  std::lock_guard<std::mutex> lock(a.mu);
  if (a.open++ == 0 && a.used) mprotect(a.base, a.used, PROT_READ | PROT_WRITE);
}

Access::~Access() {
  Arena& a = arena();
  if (!a.guard) return;
  std::lock_guard<std::mutex> lock(a.mu);
  if (--a.open == 0 && a.used) mprotect(a.base, a.used, PROT_NONE);
}

void* arena_allocate(size_t nbytes) {
  Arena& a = arena();
  const size_t cls = size_class(nbytes);
  std::lock_guard<std::mutex> lock(a.mu);
  auto& list = a.free[cls];
  if (!list.empty()) {
    char* p = list.back();
    list.pop_back();
    return p;
  }
  if (a.used + cls > kReserved) throw std::bad_alloc();
  char* p = a.base + a.used;
  a.used += cls;
  // Fresh pages take the arena's state now.
  if (a.guard && a.open) mprotect(p, cls, PROT_READ | PROT_WRITE);
  return p;
}

void arena_release(void* p, size_t nbytes) {
  Arena& a = arena();
  std::lock_guard<std::mutex> lock(a.mu);
  a.free[size_class(nbytes)].push_back(static_cast<char*>(p));
}

}  // namespace stand_in
