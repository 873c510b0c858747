#pragma once
// Sinks: where `out.write(logs)` goes. Every line is flushed as written, so
// an interrupted run leaves complete lines only, and a line the disk would
// not take (ENOSPC, EIO) is an IOError at the write's `.ss` line, never a
// silent loss (issue 32).

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "interp/eval/objects.h"

namespace ss::builtins {

struct SinkValue : eval::Object {
  /// Writes one record of logs at [step]: "" when it was written, else
  /// why not (the file and the system's reason).
  virtual std::string write(const eval::LogsValue& logs, int64_t step) = 0;
  int64_t next_step = 0;  // the default step counter
  /// The last logs written (progress bars show them).
  std::shared_ptr<eval::LogsValue> last;
};

/// `stdout()`: a sink that writes to [in]'s output (a rank other than 0
/// writes its csv and jsonl lines there: HostEffect::MakesFileSink).
eval::Value stdout_sink(eval::Interpreter& in);

/// A logged value as a JSON value: numbers, nested lists for tensors.
std::string json_value(const eval::Value& v);

}  // namespace ss::builtins
