#pragma once
// Which build of `ss` this process is (issue 26): the workers of a job
// across hosts must run the controller's build, since a different version
// or a build for another instruction set computes other bits, or other
// messages.

#include <string>

namespace ss::dist {

/// The first 16 hex digits of the SHA-256 of this process's executable
/// (/proc/self/exe), computed once; "unknown" when it cannot be read.
const std::string& build_id();
/// The same of the executable at [path] (the `ss` a controller starts
/// its workers from, which may not be itself: a test's).
std::string build_id_of(const std::string& path);

}  // namespace ss::dist
