// `ss check FILE [--devices SPEC] [--json] [--types] [-D NAME=SIZE]...`
#include <fstream>
#include <iostream>

#include "diag/diagnostic.h"
#include "interp/cli/commands.h"
#include "interp/cli/help.h"
#include "interp/embed/embed.h"
#include "ops/registry/registry.h"

namespace ss::cli {

namespace {
// Note [Listing the builtins]
// `ss check --list-builtins` (hidden: not in the usage line, as `ss worker`)
// prints the op table, one builtin a line: its name, `tensor` when it has a
// forward (else `host`: models, data, sinks, optimizers, files, host
// functions, computed by the evaluator), and `grad` when differentiable
// (else `nograd`). tests/torch/op_table.py reads it so that its coverage
// check fails when a builtin has neither a torch row nor a written reason.
int list_builtins() {
  for (const ops::OpDef* op : ops::all_ops())
    std::cout << op->name << '\t' << (op->forward ? "tensor" : "host") << '\t'
              << (op->differentiable ? "grad" : "nograd") << '\n';
  return kExitOk;
}
}  // namespace

int cmd_check(const std::vector<std::string>& args) {
  std::string file;
  bool json = false, types = false;
  check::Options opts;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--list-builtins") {
      return list_builtins();
    } else if (a == "--builtins-reference") {
      return print_builtin_reference();  // hidden too: builtin_reference.cpp
    } else if (a == "--json") {
      json = true;
    } else if (a == "--types") {
      types = true;
    } else if (ProgramOption o = program_option("check", args, i, opts);
               o != ProgramOption::NotMine) {
      if (o == ProgramOption::Bad) return kExitUsage;
    } else if (a == "--help" || a == "-h") {
      std::cout << command_help("check");
      return kExitOk;
    } else if (!a.empty() && a[0] == '-') {
      std::cerr << "ss check: unknown option '" << a << "'\n";
      return kExitUsage;
    } else if (file.empty()) {
      file = a;
    } else {
      std::cerr << "ss check: one FILE only (got '" << file << "' and '" << a
                << "')\n";
      return kExitUsage;
    }
  }
  if (file.empty()) {
    std::cerr << usage_line("check");
    return kExitUsage;
  }
  if (!readable(file)) return kExitRuntime;
  embed::LoadOptions load;
  load.devices = opts.devices_override;
  load.dims = opts.dim_overrides;
  embed::CheckReport r;
  try {
    r = embed::check(file, load, {.json = json, .types = types});
  } catch (const embed::Error& e) {  // unreadable after all
    std::cerr << diag::render_file_error(file, e.message);
    return kExitRuntime;
  }
  if (json) {
    std::cout << r.json;
  } else if (!r.problems.empty()) {
    std::cerr << r.text;
    const size_t n = r.problems.size() + r.more;
    std::cerr << n << (n == 1 ? " error\n" : " errors\n");
  }
  if (!r.ok) return kExitStatic;
  if (types) std::cout << r.types;
  return kExitOk;
}

}  // namespace ss::cli
