#pragma once
// The data pipeline's builtins (data.cpp): dataset, mnist,
// synthetic_digits, batches, progress, mean_logs, and len/take/split of a
// dataset, as entries of the evaluator's runtime table (Note [The runtime
// table] in interp/eval/runtime_table.h; builtins::install() registers
// them).

#include <vector>

#include "interp/eval/runtime_table.h"

namespace ss::data {

std::vector<eval::RuntimeEntry> lib_data();

}  // namespace ss::data
