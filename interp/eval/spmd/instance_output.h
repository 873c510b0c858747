#pragma once
// Note [Prints of instances]
// `print` inside an spmd fn prints each instance's value, prefixed with its
// mesh index, in instance order (spmd.md, Reference semantics), as the
// tutorial's eager prints show every device's block under one print: each
// instance writes to its own buffer, one entry per flushed write (print
// flushes once per call), and after the call the entries are merged by
// ordinal: every instance's first print, in instance order, then every
// instance's second, and so on. With lockstep control flow this is the
// order of the prints in the body; every line of an entry starts with the
// instance's mesh index in brackets:
//   [x=0 y=1] [22 20 12 17]

#include <streambuf>
#include <string>
#include <vector>

namespace ss::eval::spmd {

/// A stream buffer that cuts what is written into entries at each flush.
class EntryBuffer final : public std::streambuf {
 public:
  std::vector<std::string>& entries() {
    sync();
    return entries_;
  }

 protected:
  int_type overflow(int_type c) override {
    if (c != traits_type::eof()) pending_.push_back(static_cast<char>(c));
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    pending_.append(s, static_cast<size_t>(n));
    return n;
  }
  int sync() override {
    if (!pending_.empty()) entries_.push_back(std::move(pending_));
    pending_.clear();
    return 0;
  }

 private:
  std::string pending_;
  std::vector<std::string> entries_;
};

/// [entry] with [prefix] at the start of each of its lines.
inline std::string prefixed(const std::string& entry,
                            const std::string& prefix) {
  std::string out;
  bool at_start = true;
  for (char c : entry) {
    if (at_start) out += prefix;
    out += c;
    at_start = c == '\n';
  }
  return out;
}

}  // namespace ss::eval::spmd
