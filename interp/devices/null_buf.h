#pragma once
// The output of a rank whose prints nobody reads: host effects happen once
// (rank 0's, or the controller's), so the other ranks' evaluators write to
// a stream over this buffer. One definition for the worker's program
// server, the workers' spmd instances and the threads engine.

#include <streambuf>

namespace ss::devices {

/// A stream buffer that accepts every character and keeps none.
struct NullBuf : std::streambuf {
  int overflow(int c) override { return c; }
};

}  // namespace ss::devices
