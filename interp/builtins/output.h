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

/// The logs most recently written to any sink and the count of writes so
/// far (progress bars show the latest; write() updates it).
struct LastWritten {
  std::shared_ptr<LogsValue> logs;
  uint64_t writes = 0;
};
inline LastWritten& last_written() {
  // Per thread: when ranks run as threads (conformance, tests) each
  // interpreter has its own.
  thread_local LastWritten w;
  return w;
}

/// A logged value as a JSON value: numbers, nested lists for tensors.
std::string json_value(const Value& v);

}  // namespace ss::eval
