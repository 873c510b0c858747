#include "dist/comm/transport.h"

#include "dist/comm/gloo_comm.h"
#include "dist/comm/group_store.h"
#include "dist/comm/host_staged_comm.h"
#include "ops/backend/backend.h"

namespace ss::dist {

Transport Transport::of(ops::Device device, bool shared_gpu) {
  Transport t;
  t.device = device;
  if (device.kind == ops::Device::Kind::Cpu)
    t.kind = Kind::Gloo;
  else
    t.kind = shared_gpu ? Kind::GlooThroughHost : Kind::Nccl;
  return t;
}

std::unique_ptr<Communicator> Transport::join(
    int rank,
    int size,
    const std::string& store,
    const std::string& prefix,
    std::chrono::milliseconds timeout) const {
  switch (kind) {
    case Kind::Gloo:
      return std::make_unique<GlooComm>(rank, size, store, prefix, timeout);
    case Kind::GlooThroughHost:
      return std::make_unique<HostStagedComm>(
          std::make_unique<GlooComm>(rank, size, store, prefix, timeout),
          device);
    case Kind::Nccl:
      break;
  }
  // NCCL lives in the CUDA module (dist/comm/nccl/nccl_comm.cpp).
  using Join =
      Communicator* (*)(int, int, const char*, const char*, int, long long);
  Join entry = nullptr;
  try {
    entry = reinterpret_cast<Join>(ops::cuda_module_symbol("ss_nccl_join"));
  } catch (const std::exception& e) {
    detail::fail(CollectiveError::Kind::Other,
                 CollectiveOp::Connect,
                 rank,
                 -1,
                 std::string("NCCL is not available: ") + e.what());
  }
  return std::unique_ptr<Communicator>(
      entry(rank,
            size,
            store.c_str(),
            prefix.c_str(),
            device.index,
            static_cast<long long>(timeout.count())));
}

void Transport::leave_unjoined(const std::string& store,
                               const std::string& prefix) {
  detail::leave_unjoined(store, prefix);
}

}  // namespace ss::dist
