#include "diag/diagnostic.h"

#include <algorithm>
#include <string>
#include <string_view>
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

// Note [The first errors]
// A program can have any number of errors (100,000 lines of `let a = nope`
// is 100,000 of them), and each costs memory, rendering and, where the
// checker looks for a name it could mean, a walk over every name in scope:
// together quadratic, 506 MB and minutes for 100,000 (issue 32, item 9).
// As compilers do (clang's -ferror-limit, gcc's -fmax-errors), a phase
// keeps the first kKept and counts the rest; error() then hands out a
// diagnostic that is thrown away, and Checker's suggestions ask kept()
// first. The last one kept carries a note saying how many more there
// were, so every rendering (terminal, JSON, the editor's, Python's
// problems) says it without a field of its own; sort() moves the note to
// whichever is last after sorting.
namespace {
constexpr std::string_view kMore =
    " more errors are not shown: ss reports the first ";
}

Diagnostic& Diagnostics::error(Code code,
                               Span span,
                               std::string message,
                               std::string label) {
  if (list_.size() >= kKept) {
    ++dropped_;
    last_dropped_ = true;
    dropped_one_ = Diagnostic{};
    say_how_many_more();
    return dropped_one_;
  }
  last_dropped_ = false;
  Diagnostic d;
  d.code = code;
  d.span = span;
  d.message = std::move(message);
  d.label = std::move(label);
  list_.push_back(std::move(d));
  return list_.back();
}

void Diagnostics::say_how_many_more() {
  if (dropped_ == 0 || list_.empty()) return;
  const std::string text =
      std::to_string(dropped_) + std::string(kMore) + std::to_string(kKept);
  auto is_more = [](const Note& n) {
    return n.message.find(kMore) != std::string::npos;
  };
  // Usually already on the last one: the count is rewritten in place.
  std::vector<Note>& last = list_.back().notes;
  if (!last.empty() && is_more(last.back())) {
    last.back().message = text;
    return;
  }
  for (Diagnostic& d : list_) std::erase_if(d.notes, is_more);
  list_.back().note(text);
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
  say_how_many_more();
}

void Diagnostics::append(const Diagnostics& other) {
  for (const Diagnostic& d : other.list_) {
    if (list_.size() >= kKept) {
      ++dropped_;
      continue;
    }
    list_.push_back(d);
  }
  dropped_ += other.dropped_;
  say_how_many_more();
}

}  // namespace ss::diag
