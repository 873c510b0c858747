#pragma once
// The front end's gate: source files in, a checked program or every
// diagnostic out. `ss check`, `ss run` and the repl all go through here.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "diag/diagnostic.h"
#include "interp/check/checked.h"

namespace ss::check {

class ImportSets;

struct Options {
  /// `-D NAME=SIZE` overrides of dims.
  std::map<std::string, int64_t> dim_overrides;
  /// `--devices SPEC`, replacing the file's device list (options kept).
  std::string devices_override;
  /// `--deterministic`: the device list's `deterministic` option.
  bool deterministic = false;
  /// Include the standard library (Linear, LayerNorm, ...). Off only in
  /// tests of the checker itself.
  bool stdlib = true;
  /// Return the program even when the checker reported errors (not when
  /// parsing failed): `ss lsp` hovers the rest of a file being edited.
  /// Such a program is for lookups only: nothing may run it, and the
  /// several-devices table is not built from it.
  bool keep_on_error = false;
  /// An import's text before the disk's, by its canonical path (`ss lsp`:
  /// the editor's unsaved text of an open file); nullopt: read the disk.
  std::function<std::optional<std::string>(const std::string& path)>
      import_text;
  /// By line of the checked text: the folder an import on that line
  /// resolves against, where it is not the checked file's (`ss repl`: a
  /// :load'ed file's imports resolve relative to that file, what `ss run`
  /// of the file does); "", or a line past its end: the file's folder.
  std::vector<std::string> import_dirs;
  /// A host language provides extern modules (Note [Extern fns of a host
  /// language] in interp/eval/extern_host.h): a target whose module is
  /// not `nn` is the host's to import, when the program loads, not a
  /// plugin to find now.
  bool host_externs = false;
  /// `ss repl`: the fn that holds what was typed at the prompt. The repl
  /// runs it itself, so it runs in the controller whatever it does
  /// (devices.md: the controller is the process running main or the
  /// repl), and a call of a worker fn from it goes to the workers.
  std::string prompt_fn;
  /// `ss lsp`: where a check takes its imports from an earlier check's,
  /// and leaves its own (Note [Shared import sets] in import_set.h); null:
  /// each check reads and parses them.
  std::shared_ptr<ImportSets> import_sets;
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
/// One fn's line of it: `fn loss(m: Mlp, batch: [b] Digit) -> f32` (also
/// `ss lsp`'s hover on a fn).
std::string fn_signature(const FnInfo& f);

}  // namespace ss::check
