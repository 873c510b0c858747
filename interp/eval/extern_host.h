#pragma once
// Note [Extern fns of a host language]
// `extern fn random_crop(img: [b D]) -> [b D] = "augment.random_crop"`: a
// target whose module is not `nn` (ShapeScript's own ops) belongs to the
// host language the interpreter runs in. The process's ExternHost (the
// Python module sets one in a Python controller and in each of its
// workers: interp/embed) imports the module and calls the function with
// the fn's arguments: in the controller on one device, and on several on
// each worker, with its own rows, as the seed says (devices.md, "Python
// calls on several devices"). Its result is checked against the fn's
// declared type, a ShapeError at the call. An exception it raises is a
// RuntimeError of kind "HostError" carrying the host's own encoding of it
// as a note (kHostNote + payload), which crosses from a worker like any
// note, so the host raises the same exception again, with the `.ss`
// location and stack added. With no ExternHost (`ss run`), such a target
// is an ImportError, as before.

#include <stdexcept>
#include <string>
#include <vector>

#include "diag/source.h"
#include "interp/check/checked.h"
#include "interp/eval/value.h"

namespace ss::eval {

/// A host function raised: [payload] is the host's encoding of what it
/// raised (raised again by the host that reads it).
struct HostRaised : std::runtime_error {
  HostRaised(const std::string& message, std::string payload)
      : std::runtime_error(message), payload(std::move(payload)) {}
  std::string payload;
};

/// The note of a HostError that holds the host's payload.
inline constexpr const char* kHostNote = "host exception: ";

class ExternHost {
 public:
  virtual ~ExternHost() = default;
  /// Calls [target] ("augment.random_crop") with [args] (tensors, host
  /// numbers, strings); its result. Throws HostRaised, or a
  /// std::runtime_error that is an ImportError (the target cannot be
  /// imported).
  virtual Value call(const std::string& target,
                     const std::vector<Value>& args) = 0;
};

/// The process's host, set once by the host's module; null in `ss`.
void set_extern_host(ExternHost* h);
ExternHost* extern_host();

class Interpreter;

/// Calls the extern fn [fn] through [h] at [site] (its stack entry
/// pushed): the result checked against [fn]'s declared type.
Value call_host_extern(Interpreter& in,
                       ExternHost& h,
                       const check::FnInfo& fn,
                       const std::vector<Value>& args,
                       diag::Span site);

}  // namespace ss::eval
