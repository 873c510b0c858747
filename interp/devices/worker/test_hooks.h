#pragma once
// Note [Test hooks]: failure injection (SHAPESCRIPT_TEST_FAIL_CALL makes a
// worker fail or stop after its Nth call) exists for the tests of failure
// handling only. Whether it is read is decided by the executable: `ss`
// links test_hooks/test_hooks_off.cpp, so a production worker never fails
// on request (issue 16 item 14); `ss_test_hooks`, the same program built
// for the tests, links test_hooks/test_hooks_on.cpp.

namespace ss::devices::worker {

/// Whether this executable honours the test-only failure hooks.
bool test_hooks_enabled();

}  // namespace ss::devices::worker
