#pragma once
// The error every backend gives for a broken precondition, in one place so
// that each backend's messages keep one form: "[<backend> <op>] <msg>"
// (tests match the CPU's "[cpu ...]" texts; callers in ops/api.cpp check
// user errors first, so these are bugs of a caller, not of a program).

#include <stdexcept>
#include <string>

namespace ss::ops::backend {

/// Throws std::invalid_argument("[<backend> <op>] <msg>").
[[noreturn]] inline void fail(const char* backend,
                              const char* op,
                              const std::string& msg) {
  throw std::invalid_argument(std::string("[") + backend + " " + op + "] " +
                              msg);
}

}  // namespace ss::ops::backend
