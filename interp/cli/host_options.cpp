// `--hosts` and the other placement options (host_options.h).
#include "interp/cli/host_options.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

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

namespace {

// The hosts for [world] ranks, each up to its slots, in rounds.
std::vector<dist::Host> fit(const std::vector<dist::Host>& hosts, int world) {
  std::vector<dist::Host> out;
  for (size_t i = 0; world > 0; i = (i + 1) % hosts.size()) {
    dist::Host h = hosts[i];
    h.slots = std::min(h.slots, world);
    world -= h.slots;
    out.push_back(h);
  }
  return out;
}

}  // namespace

bool remote_options(const char* cmd,
                    const HostOptions& h,
                    int world,
                    std::optional<dist::RemoteOptions>& out,
                    bool fit_slots) {
  out.reset();
  if (!h.any()) return true;
  auto bad = [&](const std::string& why) {
    std::cerr << "ss " << cmd << ": " << why << "\n";
    return false;
  };
  if (!h.hosts.empty() && !h.hostfile.empty())
    return bad("give --hosts or --hostfile, not both");
  const bool placed = !h.hosts.empty() || !h.hostfile.empty();
  if (!placed && h.listen.empty())
    return bad(
        "--launch, --token-file and --heartbeat-timeout go with --hosts or "
        "--hostfile (workers started for you) or --listen (workers started "
        "by hand with `ss worker --connect`)");
  if (!placed && !h.launch.empty())
    return bad("--launch starts workers on --hosts or --hostfile's hosts");
  if (!placed && h.token_file.empty())
    return bad(
        "--listen needs --token-file FILE: the job's key, which each "
        "`ss worker --connect ADDR:PORT --token-file FILE` proves it holds");
  if (world < 2)
    return bad(
        "the program runs on one device: hosts place the workers of "
        "several (`devices cpu[0 1]`, or --devices 'cpu[0 1]')");
  dist::RemoteOptions r;
  try {
    if (!h.hosts.empty()) {
      r.hosts = dist::parse_hosts(h.hosts);
    } else if (!h.hostfile.empty()) {
      std::ifstream in(h.hostfile);
      if (!in) return bad("cannot read the hostfile " + h.hostfile);
      std::stringstream text;
      text << in.rdbuf();
      r.hosts = dist::parse_hostfile(text.str(), h.hostfile);
    }
    if (placed && fit_slots) r.hosts = fit(r.hosts, world);
    if (placed) dist::place_ranks(r.hosts, world);
    if (!h.launch.empty()) r.launch = h.launch;
    // A bad template is said now, not when the workers start.
    if (placed) (void)dist::expand_launch(r.launch, "host", {"ss"});
  } catch (const std::invalid_argument& e) {
    return bad(e.what());
  }
  r.listen = h.listen;
  r.token_file = h.token_file;
  if (h.heartbeat_timeout_s)
    r.heartbeat_timeout = std::chrono::milliseconds(
        static_cast<int64_t>(*h.heartbeat_timeout_s * 1000.0));
  out = std::move(r);
  return true;
}

}  // namespace ss::cli
