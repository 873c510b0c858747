#pragma once
// The context one device runs a program with (Note [Device hooks] in
// interp/eval/device_hooks.h): none, or in deterministic mode a rank of
// one, whose ops run by the batch's canonical chunks as every rank's do
// (Note [Deterministic mode] in interp/devices/lower/chunks.h): one
// device's bits in that mode are the reference N devices match.

#include <memory>
#include <string>

#include "interp/devices/context.h"

namespace ss::check {
class Program;
}

namespace ss::devices {

/// Null unless [prog] asks for deterministic mode or a GPU (Note [Values
/// on a GPU] in one_device.cpp).
std::unique_ptr<Context> one_device_context(const check::Program& prog);
/// Why [prog]'s devices cannot run here ("" when they can): a GPU where
/// the CUDA backend does not load or no device answers, and what is not
/// built for GPUs yet. Loads the CUDA module when the program asks for it.
std::string unavailable_devices(const check::Program& prog);

}  // namespace ss::devices
