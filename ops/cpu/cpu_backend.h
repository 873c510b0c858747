#pragma once
// CPU-specific controls that are not part of the Backend interface.

#include <string>

namespace ss::ops {

/// Sets the number of OpenBLAS threads (e.g. 1 for several ranks per
/// machine). Without a call, OPENBLAS_NUM_THREADS is respected when set, and
/// otherwise every hardware thread is used.
/// The kernels' intra-op threads follow it (Note [Intra-op threads]).
void set_cpu_threads(int n);
/// The number set_cpu_threads or OPENBLAS_NUM_THREADS chose.
int cpu_threads();
/// Deterministic mode (Note [One BLAS thread] in cpu_backend.cpp): every
/// product on one OpenBLAS thread from now on, whatever the process's
/// thread count; the kernels' intra-op threads keep that count.
void pin_blas_to_one_thread();
/// Starts the backend's one-time set-up on a thread of its own (oneDNN's
/// kernels, Note [oneDNN's start-up off the first step] in
/// cpu/cpu_onednn.cpp), so that it overlaps a run's loading; the first
/// product waits for what is left of it. Call once a program is about to
/// run, never before a fork without exec. Does nothing in a process whose
/// main has not allowed it (allow_cpu_warm_up).
void warm_up_cpu_backend();
/// What `ss`'s main sets for its whole process: warm_up_cpu_backend may
/// start its thread; main then calls settle_cpu_backend before it returns.
void allow_cpu_warm_up();
/// Waits for the warm-up's thread, so that exit's destructors never run
/// under it (they would free oneDNN's kernels while it writes them).
void settle_cpu_backend();
/// The kernels this process computes with: OpenBLAS's core and build,
/// oneDNN's version, and ss's vector path ("OpenBLAS Haswell (...),
/// oneDNN 2.6.3, AVX2 + FMA"). Deterministic
/// mode's devices must agree on it (Note [Same kernels everywhere] in
/// interp/devices/lower/rank_context.cpp).
std::string kernel_signature();

}  // namespace ss::ops
