#include "interp/devices/gpu_ranks.h"

#include <cstdlib>
#include <cstring>

#include "interp/check/checked.h"
#include "ops/backend/backend.h"
#include "ops/cpu/cpu_backend.h"

namespace ss::devices {

// Note [Several GPUs]
// `cuda[0 1 2]` runs as `cpu[0 1 2]` does, one `ss worker` a device, with
// what the devices layer does unchanged: each worker's values live on its
// own GPU (its RankContext's placement, Note [Values on a GPU] in
// one_device.cpp: params as they are drawn, batches as they load, tensors
// arriving from the controller as they are read), and its collectives are
// NCCL's, one communicator per group, its id passed through the job's
// rendezvous store (dist/comm/nccl/nccl_comm.cpp). The controller stays on
// the host. NCCL refuses two ranks on one GPU, and the device check has
// one GPU: there `ss_test_hooks` with SHAPESCRIPT_TEST_ONE_GPU=1 runs every
// rank on GPU 0 with its collectives through the host (Note [Collectives
// through the host] in dist/comm/host_staged_comm.cpp), so the conformance
// suite proves the workers' GPU path on `cuda[0 1 2]` against `cpu`, and
// ss_cuda_tests proves NCCL's calls with one rank. Only the test binary
// reads the variable (Note [Test hooks]): its test_hooks_on.cpp calls
// enable_one_gpu_hook as it starts.
namespace {

bool one_gpu_hook = false;  // enable_one_gpu_hook

bool ranks_share_gpu0() {
  if (!one_gpu_hook) return false;
  const char* v = std::getenv("SHAPESCRIPT_TEST_ONE_GPU");
  return v && std::strcmp(v, "1") == 0;
}

}  // namespace

void enable_one_gpu_hook() {
  one_gpu_hook = true;
}

dist::Transport rank_transport(const check::DeviceList& dl, int rank) {
  if (dl.kind != "cuda") return dist::Transport::of(ops::Device{});
  if (ranks_share_gpu0())
    return dist::Transport::of(ops::Device{ops::Device::Kind::Cuda, 0},
                               /*shared_gpu=*/true);
  const int64_t id =
      dl.ids.empty() || rank < 0 || rank >= static_cast<int>(dl.ids.size())
          ? 0
          : dl.ids[static_cast<size_t>(rank)];
  return dist::Transport::of(
      ops::Device{ops::Device::Kind::Cuda, static_cast<int>(id)});
}

std::string kernels_of(ops::Device device) {
  return device.kind == ops::Device::Kind::Cuda
             ? ops::cuda_kernel_signature(device.index)
             : ops::kernel_signature();
}

std::string missing_gpus(const check::DeviceList& dl) {
  if (dl.kind != "cuda") return {};
  try {
    ops::cuda_backend();
  } catch (const std::exception& e) {
    return e.what();
  }
  if (ranks_share_gpu0()) return {};
  const int have = ops::cuda_device_count();
  for (int64_t id : dl.ids)
    if (id >= have)
      return "cuda[" + std::to_string(id) +
             "] is not on this machine: it has " + std::to_string(have) +
             (have == 1 ? " GPU" : " GPUs") + " (cuda[0] to cuda[" +
             std::to_string(have - 1) + "])";
  return {};
}

}  // namespace ss::devices
