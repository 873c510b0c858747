// Linked instead of the CUDA backend when ss is built without CUDA (see
// style.md §9: absent backends are linked stubs, not #ifdefs).

#include <stdexcept>

#include "ops/backend/backend.h"

namespace ss::ops {

Backend& cuda_backend() {
  throw std::runtime_error(
      "the CUDA backend is not available: ss was built without CUDA");
}

void use_cuda_device(int) {
  cuda_backend();  // throws
}

std::string cuda_kernel_signature(int) {
  cuda_backend();  // throws
  return {};
}

int cuda_device_count() {
  return 0;
}

void* cuda_module_symbol(const char*) {
  cuda_backend();  // throws
  return nullptr;
}

}  // namespace ss::ops
