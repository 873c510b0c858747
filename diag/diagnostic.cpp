#include "diag/diagnostic.h"

#include <algorithm>
#include <tuple>

namespace ss::diag {

namespace {
struct CodeInfo {
  const char* name;
  const char* summary;
};
constexpr CodeInfo kCodes[] = {
#define X(code, summary) {#code, summary},
#include "diag/errors.def"
#undef X
};
}  // namespace

const char* code_name(Code c) {
  return kCodes[static_cast<int>(c)].name;
}
const char* code_summary(Code c) {
  return kCodes[static_cast<int>(c)].summary;
}

std::optional<Code> code_from_name(const std::string& name) {
  for (size_t i = 0; i < std::size(kCodes); ++i)
    if (name == kCodes[i].name) return static_cast<Code>(i);
  return std::nullopt;
}

Diagnostic unlocated(std::string kind, std::string message) {
  Diagnostic d;
  d.kind = std::move(kind);
  d.message = std::move(message);
  d.located = false;
  return d;
}

Diagnostic& Diagnostics::error(Code code,
                               Span span,
                               std::string message,
                               std::string label) {
  Diagnostic d;
  d.code = code;
  d.span = span;
  d.message = std::move(message);
  d.label = std::move(label);
  list_.push_back(std::move(d));
  return list_.back();
}

void Diagnostics::sort() {
  auto key = [](const Diagnostic& d) {
    return std::make_tuple(d.span.file,
                           d.span.begin,
                           d.span.end,
                           static_cast<int>(d.code),
                           d.message);
  };
  std::stable_sort(list_.begin(),
                   list_.end(),
                   [&](const Diagnostic& a, const Diagnostic& b) {
                     return key(a) < key(b);
                   });
  list_.erase(std::unique(list_.begin(),
                          list_.end(),
                          [&](const Diagnostic& a, const Diagnostic& b) {
                            return key(a) == key(b);
                          }),
              list_.end());
}

void Diagnostics::append(const Diagnostics& other) {
  list_.insert(list_.end(), other.list_.begin(), other.list_.end());
}

}  // namespace ss::diag
