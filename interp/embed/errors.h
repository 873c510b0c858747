#pragma once
// The interpreter's errors as the embedding API hands them to a host
// (embed.h's CheckFailed and Error), rendered as `ss check` and `ss run`
// print them.

#include "diag/diagnostic.h"
#include "interp/embed/embed.h"
#include "interp/eval/runtime_error.h"

namespace ss::embed {

CheckFailed check_failed(const diag::Diagnostics& diags,
                         const diag::SourceMap& sm);
Error to_error(const eval::RuntimeError& e, const diag::SourceMap& sm);

}  // namespace ss::embed
