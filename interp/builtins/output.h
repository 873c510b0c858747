#pragma once
// Sinks: where `out.write(logs)` goes. Every line is flushed as written, so
// an interrupted run leaves complete lines only.

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "interp/eval/objects.h"

namespace ss::eval {

struct SinkValue : Object {
  /// Writes one record of logs at [step].
  virtual void write(const LogsValue& logs, int64_t step) = 0;
  int64_t next_step = 0;  // the default step counter
  /// The last logs written (progress bars show them).
  std::shared_ptr<LogsValue> last;
};

/// A logged value as a JSON value: numbers, nested lists for tensors.
std::string json_value(const Value& v);

}  // namespace ss::eval
