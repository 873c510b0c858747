#pragma once
// The options every command that takes a program shares: `--devices SPEC`
// and `-D NAME=SIZE`, into check::Options. The subcommands read them from
// their command line and every `ss worker` from the one the controller
// gives it (worker_run_args).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "interp/check/checker.h"

namespace ss::check {

/// The largest size `-D` takes (2^40: any real axis, and far from
/// overflowing a product of a few).
constexpr int64_t kMaxDimOverride = int64_t(1) << 40;
/// Parses `-D NAME=SIZE` into [name], [size]; false when malformed. When
/// [why] is given it says what is wrong.
bool parse_dim_override(const std::string& text,
                        std::string& name,
                        int64_t& size,
                        std::string* why = nullptr);
/// Whether [spec] is a device list: `cpu`, `cpu[0 1 2]`, `cuda[0 1]`.
bool valid_device_spec(const std::string& spec);

/// Parses "cpu", "cuda[0 1 2]", "cpu[0 1]" (the --devices override) into
/// [out]; false when malformed.
bool parse_device_spec(const std::string& s, DeviceList& out);
/// `cpu`, `cpu[0 1 2]`: a device list as the user writes it.
std::string device_list_text(const DeviceList& dl);
/// The first device id that [spec] (`cpu[0 0]`) lists twice, if any.
std::optional<int64_t> repeated_device(const std::string& spec);

/// The options every command that takes a program shares: `--devices
/// SPEC` and `-D NAME=SIZE` (also `-DNAME=SIZE`), read at args[i] (which
/// moves past a value). A bad value prints why, prefixed by [cmd].
enum class ProgramOption { Taken, NotMine, Bad };
ProgramOption program_option(const char* cmd,
                             const std::vector<std::string>& args,
                             size_t& i,
                             check::Options& opts);
}  // namespace ss::check
