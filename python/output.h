#pragma once
// ShapeScript's `print` into Python's sys.stdout and its progress bars into
// sys.stderr (so a notebook shows them), from whichever thread runs them.

#include <ostream>
#include <streambuf>
#include <string>

namespace ss::python {

/// A streambuf that writes each completed line (and whatever is left at
/// a flush) to Python's sys.stdout or sys.stderr, taking the GIL for it.
class PythonStream : public std::streambuf {
 public:
  explicit PythonStream(const char* name) : name_(name) {}

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  void write_out();
  const char* name_;  // "stdout", "stderr"
  std::string pending_;
};

}  // namespace ss::python
