// `ss_test_hooks`: the failure hooks on (Note [Test hooks] in test_hooks.h).
#include "interp/cli/test_hooks.h"

bool ss::cli::test_hooks_enabled() {
  return true;
}
