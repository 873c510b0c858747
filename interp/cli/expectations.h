#pragma once
// A conformance case's expectations, read from its `#` comments:
//   # expect: ok
//   # expect: error E0302 at 14        (or at 14:12; one line per error)
//   # expect: runtime DomainError
//   # tolerance: 1e-5
//   # devices: cpu[0 1 2]
//   # output: [x=0] [22 20 12 17]   (one line of what main prints, in order)

#include <optional>
#include <string>
#include <vector>

namespace ss::cli {

struct ExpectedError {
  std::string code;  // "E0302"
  uint32_t line = 0;
  uint32_t column = 0;  // 0: any column
};

struct Expectation {
  enum class Kind { Ok, Error, Runtime };
  Kind kind = Kind::Ok;
  std::vector<ExpectedError> errors;
  std::string runtime_kind;
  std::optional<double> tolerance;
  std::vector<std::string> devices;
  /// `# output:` lines: what main prints, line by line, its numbers within
  /// the tolerance (an oracle's values written into the case).
  std::vector<std::string> output;
};

/// Reads every expectation comment of [text]. On a malformed or missing
/// header returns nullopt and says why in [why]; with [missing_is_ok], a
/// file without an `# expect:` line expects ok (the programs of
/// examples/, which have no header).
std::optional<Expectation> parse_expectations(const std::string& text,
                                              std::string& why,
                                              bool missing_is_ok = false);

}  // namespace ss::cli
