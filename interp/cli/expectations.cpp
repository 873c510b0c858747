#include "interp/cli/expectations.h"

#include <sstream>

#include "diag/diagnostic.h"

namespace ss::cli {

namespace {

std::string trim(std::string s) {
  size_t b = s.find_first_not_of(" \t\r");
  size_t e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

bool parse_uint(const std::string& s, uint32_t& out) {
  if (s.empty() || s.size() > 9) return false;
  out = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + static_cast<uint32_t>(c - '0');
  }
  return true;
}

}  // namespace

std::optional<Expectation> parse_expectations(const std::string& text,
                                              std::string& why,
                                              bool missing_is_ok) {
  Expectation ex;
  bool have_kind = false;
  std::istringstream in(text);
  std::string line;
  uint32_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    std::string t = trim(line);
    if (t.empty() || t[0] != '#') continue;
    std::string body = trim(t.substr(1));
    auto value_of = [&](const char* key) -> std::optional<std::string> {
      std::string k = key;
      if (body.rfind(k, 0) == 0) return trim(body.substr(k.size()));
      return std::nullopt;
    };
    if (auto v = value_of("expect:")) {
      std::istringstream w(*v);
      std::string word;
      w >> word;
      Expectation::Kind kind;
      if (word == "ok") {
        kind = Expectation::Kind::Ok;
      } else if (word == "error") {
        kind = Expectation::Kind::Error;
        ExpectedError e;
        std::string at, pos;
        w >> e.code >> at >> pos;
        if (!diag::code_from_name(e.code) || at != "at") {
          why = "line " + std::to_string(lineno) +
                ": expected `# expect: error EXXXX at LINE[:COL]`";
          return std::nullopt;
        }
        size_t colon = pos.find(':');
        if (!parse_uint(pos.substr(0, colon), e.line) ||
            (colon != std::string::npos &&
             !parse_uint(pos.substr(colon + 1), e.column))) {
          why =
              "line " + std::to_string(lineno) + ": bad position '" + pos + "'";
          return std::nullopt;
        }
        ex.errors.push_back(e);
      } else if (word == "runtime") {
        kind = Expectation::Kind::Runtime;
        w >> ex.runtime_kind;
        if (ex.runtime_kind.empty()) {
          why = "line " + std::to_string(lineno) +
                ": expected `# expect: runtime KIND`";
          return std::nullopt;
        }
      } else {
        why = "line " + std::to_string(lineno) + ": unknown expectation '" +
              word + "'";
        return std::nullopt;
      }
      if (have_kind && kind != ex.kind) {
        why = "line " + std::to_string(lineno) +
              ": mixes different kinds of expectation";
        return std::nullopt;
      }
      ex.kind = kind;
      have_kind = true;
    } else if (auto v2 = value_of("tolerance:")) {
      try {
        ex.tolerance = std::stod(*v2);
      } catch (...) {
        why = "line " + std::to_string(lineno) + ": bad tolerance";
        return std::nullopt;
      }
    } else if (auto v3 = value_of("devices:")) {
      ex.devices.push_back(*v3);
    } else if (auto v4 = value_of("output:")) {
      ex.output.push_back(*v4);
    }
  }
  if (!have_kind && !missing_is_ok) {
    why = "no `# expect:` line";
    return std::nullopt;
  }
  return ex;
}

}  // namespace ss::cli
