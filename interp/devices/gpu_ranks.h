#pragma once
// Where each rank of a device list computes, and how its collectives
// travel (Note [Several GPUs] in gpu_ranks.cpp).

#include <string>

#include "dist/comm/transport.h"

namespace ss::check {
struct DeviceList;
}

namespace ss::devices {

/// Rank [rank]'s device and transport: Gloo on `cpu[...]`; on
/// `cuda[i j k]`, GPU i for rank 0 (j for rank 1, ...) and NCCL.
dist::Transport rank_transport(const check::DeviceList& dl, int rank);

/// The kernels a rank on [device] computes with, which deterministic mode
/// checks are every rank's (Note [Same kernels everywhere] in
/// lower/rank_context.cpp): the CPU's libraries and instructions, or the
/// GPU's model and its libraries.
std::string kernels_of(ops::Device device);

/// Why [dl]'s GPUs are not all on this machine ("" when they are, or for
/// a CPU list). Loads the CUDA module.
std::string missing_gpus(const check::DeviceList& dl);

/// `ss_test_hooks` only (Note [Test hooks]): SHAPESCRIPT_TEST_ONE_GPU=1
/// then runs every rank of a cuda list on GPU 0 (Note [Several GPUs]).
void enable_one_gpu_hook();

}  // namespace ss::devices
