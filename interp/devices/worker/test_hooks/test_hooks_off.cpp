// `ss`: no failure hooks (Note [Test hooks] in test_hooks.h).
#include "interp/devices/worker/test_hooks.h"

bool ss::devices::worker::test_hooks_enabled() {
  return false;
}
