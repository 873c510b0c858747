// `--hosts` and the other placement options (host_options.h).
#include "interp/cli/host_options.h"

#include <iostream>

#include "interp/embed/placement.h"

namespace ss::cli {

using check::ProgramOption;

ProgramOption host_option(const char* cmd,
                          const std::vector<std::string>& args,
                          size_t& i,
                          HostOptions& h) {
  const std::string& a = args[i];
  std::string* slot = a == "--hosts"        ? &h.hosts
                      : a == "--hostfile"   ? &h.hostfile
                      : a == "--launch"     ? &h.launch
                      : a == "--listen"     ? &h.listen
                      : a == "--token-file" ? &h.token_file
                                            : nullptr;
  const bool beat = a == "--heartbeat-timeout";
  if (!slot && !beat) return ProgramOption::NotMine;
  if (i + 1 == args.size() || args[i + 1].empty()) {
    std::cerr << "ss " << cmd << ": " << a << " needs a value\n";
    return ProgramOption::Bad;
  }
  const std::string& v = args[++i];
  if (slot) {
    *slot = v;
    return ProgramOption::Taken;
  }
  try {
    size_t used = 0;
    const double s = std::stod(v, &used);
    if (used != v.size() || !(s > 0) || s > 86400) throw std::out_of_range(v);
    h.heartbeat_timeout_s = s;
  } catch (const std::exception&) {
    std::cerr << "ss " << cmd << ": --heartbeat-timeout '" << v
              << "' is not a number of seconds above 0 (e.g. 10)\n";
    return ProgramOption::Bad;
  }
  return ProgramOption::Taken;
}

bool remote_options(const char* cmd,
                    const HostOptions& h,
                    int world,
                    std::optional<dist::RemoteOptions>& out,
                    bool fit_slots) {
  out.reset();
  try {
    out = embed::remote_options(h, world, fit_slots);
  } catch (const std::invalid_argument& e) {
    std::cerr << "ss " << cmd << ": " << e.what() << "\n";
    return false;
  }
  return true;
}

}  // namespace ss::cli
