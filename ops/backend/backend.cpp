#include "ops/backend/backend.h"

namespace ss::ops {

Backend& backend_for(const Device& device) {
  if (device.kind == Device::Kind::Cuda) return cuda_backend();
  return cpu_backend();
}

}  // namespace ss::ops
