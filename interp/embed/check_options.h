#pragma once
// A host's LoadOptions as the checker takes them: shared by embed::check,
// embed::run (program.cpp) and Session::load. Private to interp/embed.

#include "interp/check/checker.h"
#include "interp/embed/embed.h"

namespace ss::embed {

/// [opts]'s devices and dims, and extern modules the host's when it has
/// any (Python: always).
check::Options check_options(const LoadOptions& opts);

}  // namespace ss::embed
