// `ss check FILE [--devices SPEC] [--json] [--types] [-D NAME=SIZE]...`
#include <fstream>
#include <iostream>

#include "interp/check/checker.h"
#include "interp/cli/commands.h"

namespace ss::cli {

int cmd_check(const std::vector<std::string>& args) {
  std::string file;
  bool json = false, types = false;
  check::Options opts;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--json") {
      json = true;
    } else if (a == "--types") {
      types = true;
    } else if (a == "--devices" && i + 1 < args.size()) {
      opts.devices_override = args[++i];
      if (!valid_device_spec(opts.devices_override)) {
        std::cerr << "ss check: --devices wants cpu, cpu[0 1 2] or "
                     "cuda[0 1 2], found '"
                  << opts.devices_override << "'\n";
        return kExitUsage;
      }
    } else if ((a == "-D" && i + 1 < args.size()) || a.rfind("-D", 0) == 0) {
      std::string def = a == "-D" ? args[++i] : a.substr(2);
      std::string name;
      int64_t size;
      if (!parse_dim_override(def, name, size)) {
        std::cerr << "ss check: -D wants NAME=SIZE with a positive size, "
                     "found '"
                  << def << "'\n";
        return kExitUsage;
      }
      opts.dim_overrides[name] = size;
    } else if (a == "--help" || a == "-h") {
      std::cout << "usage: ss check FILE [--devices SPEC] [--json] [--types] "
                   "[-D NAME=SIZE]...\n"
                   "Checks FILE: every static error at once, or nothing and "
                   "exit 0.\n";
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
    std::cerr << "usage: ss check FILE [--devices SPEC] [--json] [--types]\n";
    return kExitUsage;
  }
  if (!std::ifstream(file)) {
    std::cerr << "error: IOError: cannot read '" << file << "'\n";
    return kExitRuntime;
  }
  diag::SourceMap sm;
  diag::Diagnostics diags;
  auto prog = check::check_file(file, sm, diags, opts);
  if (json) {
    std::cout << diag::render_json(diags, sm);
  } else if (!diags.empty()) {
    std::cerr << diag::render_terminal(diags, sm);
    std::cerr << diags.size() << (diags.size() == 1 ? " error\n" : " errors\n");
  }
  if (!prog) return kExitStatic;
  if (types) std::cout << check::describe_types(*prog);
  return kExitOk;
}

}  // namespace ss::cli
