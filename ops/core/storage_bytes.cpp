// Note [Counting storage bytes]
// Every own storage's bytes are counted as they are allocated and freed
// (one relaxed atomic add each, and a compare-exchange only when a new
// peak is reached), so a process can say what its tensors held at their
// peak beside what the system counts (VmHWM): the difference is the
// heap's free blocks, the communicators' buffers, the code and the
// interpreter's own objects. External bytes (a mapped file, a message's
// block) are not counted. `ss worker` prints memory_report() after each
// call under SS_MEMORY_REPORT (interp/devices/worker/program_server.cpp),
// which bench/shard_params_bench.py reads.
#include "ops/core/storage_bytes.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ops/core/big_blocks.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace ss::ops {

namespace {
std::atomic<int64_t> g_live{0}, g_peak{0};

constexpr double kMiB = 1024.0 * 1024.0;

}  // namespace

double process_mib(const char* field) {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  double out = 0;
  const size_t n = std::strlen(field);
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, field, n) == 0 && line[n] == ':') {
      out = std::strtod(line + n + 1, nullptr) / 1024.0;
      break;
    }
  std::fclose(f);
  return out;
}

bool reset_process_peak() {
  FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (!f) return false;
  const bool ok = std::fputs("5", f) >= 0;
  return std::fclose(f) == 0 && ok;
}

void count_storage_bytes(int64_t bytes) {
  const int64_t now =
      g_live.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  int64_t peak = g_peak.load(std::memory_order_relaxed);
  while (now > peak &&
         !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

StorageBytes storage_bytes() {
  return {g_live.load(std::memory_order_relaxed),
          g_peak.load(std::memory_order_relaxed)};
}

void reset_storage_peak() {
  g_peak.store(g_live.load(std::memory_order_relaxed),
               std::memory_order_relaxed);
}

std::string memory_report() {
  const StorageBytes b = storage_bytes();
  double in_use = 0, free = 0, mapped = 0;
#if defined(__GLIBC__)
  const struct mallinfo2 m = mallinfo2();
  in_use = m.uordblks / kMiB;
  free = m.fordblks / kMiB;
  mapped = m.hblkhd / kMiB;
#endif
  char buf[320];
  std::snprintf(buf,
                sizeof buf,
                "storage live %.1f MiB peak %.1f MiB; VmRSS %.1f MiB VmHWM "
                "%.1f MiB; heap in use %.1f MiB free %.1f MiB, mmapped %.1f "
                "MiB; big blocks cached %.1f MiB",
                b.live / kMiB,
                b.peak / kMiB,
                process_mib("VmRSS"),
                process_mib("VmHWM"),
                in_use,
                free,
                mapped,
                big_blocks_cached() / kMiB);
  return buf;
}

}  // namespace ss::ops
