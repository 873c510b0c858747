#pragma once
// What the tensors' own storages (ops/core/tensor.h) hold, the bytes live
// now and the most live at once, beside what the system and the heap count
// for the process (Note [Counting storage bytes] in storage_bytes.cpp).

#include <cstdint>
#include <string>

namespace ss::ops {

struct StorageBytes {
  int64_t live = 0;
  int64_t peak = 0;  // since the process began or the last reset
};
StorageBytes storage_bytes();
/// Starts a new peak at what is live now.
void reset_storage_peak();
/// [bytes] more (or fewer) live: Storage's allocations and frees.
void count_storage_bytes(int64_t bytes);

/// A "Vm...:" field of /proc/self/status ("VmRSS", "VmHWM"), MiB; 0 where
/// there is none.
double process_mib(const char* field);
/// Starts the process's VmHWM again at its VmRSS (/proc/self/clear_refs),
/// so a peak can be read for one part of a run; false where it can't.
bool reset_process_peak();

/// One line: the storages' live and peak bytes, the process's VmRSS and
/// VmHWM, and the heap's bytes in use and free (MiB).
std::string memory_report();

}  // namespace ss::ops
