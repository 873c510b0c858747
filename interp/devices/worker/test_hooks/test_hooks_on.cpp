// `ss_test_hooks`: the failure hooks on (Note [Test hooks] in test_hooks.h).
#include "interp/devices/worker/test_hooks.h"

bool ss::devices::worker::test_hooks_enabled() {
  return true;
}
