#pragma once
// The front end's gate: source files in, a checked program or every
// diagnostic out. `ss check`, `ss run` and the repl all go through here.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "diag/diagnostic.h"
#include "interp/check/checked.h"

namespace ss::check {

struct Options {
  /// `-D NAME=SIZE` overrides of dims.
  std::map<std::string, int64_t> dim_overrides;
  /// `--devices SPEC`, replacing the file's device list (options kept).
  std::string devices_override;
  /// Include the standard library (Linear, LayerNorm, ...). Off only in
  /// tests of the checker itself.
  bool stdlib = true;
};

/// Reads [path] (and what it imports), parses and checks it. Returns the
/// program when there is no error; every error is in [diags], sorted.
std::unique_ptr<Program> check_file(const std::string& path,
                                    diag::SourceMap& sm,
                                    diag::Diagnostics& diags,
                                    const Options& opts = {});

/// The same for source text given directly ([path] names it in messages;
/// imports resolve relative to it). The library entry the fuzzer drives.
std::unique_ptr<Program> check_source(const std::string& path,
                                      std::string text,
                                      diag::SourceMap& sm,
                                      diag::Diagnostics& diags,
                                      const Options& opts = {});

/// `ss check --types`: every fn's signature with inferred types, and its
/// locals' types.
std::string describe_types(const Program& p);

}  // namespace ss::check
