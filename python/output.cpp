#include "python/output.h"

#include <pybind11/pybind11.h>

namespace ss::python {

namespace py = pybind11;

PythonStream::int_type PythonStream::overflow(int_type c) {
  if (c == traits_type::eof()) return traits_type::not_eof(c);
  pending_ += static_cast<char>(c);
  if (c == '\n') write_out();
  return c;
}

std::streamsize PythonStream::xsputn(const char* s, std::streamsize n) {
  pending_.append(s, static_cast<size_t>(n));
  if (pending_.find('\n') != std::string::npos) write_out();
  return n;
}

int PythonStream::sync() {
  write_out();
  return 0;
}

void PythonStream::write_out() {
  if (pending_.empty() || !Py_IsInitialized()) return;
  std::string text;
  text.swap(pending_);
  py::gil_scoped_acquire gil;
  try {
    py::object out = py::module_::import("sys").attr(name_);
    if (out.is_none()) return;
    out.attr("write")(text);
    out.attr("flush")();
  } catch (py::error_already_set& e) {
    e.discard_as_unraisable("shapescript: writing to sys.stdout or stderr");
  }
}

}  // namespace ss::python
