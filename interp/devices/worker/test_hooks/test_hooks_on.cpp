// `ss_test_hooks`: the failure hooks on (Note [Test hooks] in test_hooks.h).
#include "interp/devices/worker/test_hooks.h"

bool ss::devices::worker::test_hooks_enabled() {
  return true;
}

#include "interp/devices/gpu_ranks.h"

namespace {

// SHAPESCRIPT_TEST_ONE_GPU is read in this binary only (Note [Several
// GPUs] in interp/devices/gpu_ranks.cpp).
const bool one_gpu_hook = (ss::devices::enable_one_gpu_hook(), true);

}  // namespace
