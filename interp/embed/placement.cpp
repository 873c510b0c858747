// A Placement made the workers' remote options (placement.h).
#include "interp/embed/placement.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ss::embed {

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

std::optional<dist::RemoteOptions> remote_options(const Placement& h,
                                                  int world,
                                                  bool fit_slots) {
  if (!h.any()) return std::nullopt;
  auto bad = [](const std::string& why) { throw std::invalid_argument(why); };
  if (!h.hosts.empty() && !h.hostfile.empty())
    bad("give --hosts or --hostfile, not both");
  const bool placed = !h.hosts.empty() || !h.hostfile.empty();
  if (!placed && h.listen.empty())
    bad("--launch, --token-file and --heartbeat-timeout go with --hosts or "
        "--hostfile (workers started for you) or --listen (workers started "
        "by hand with `ss worker --connect`)");
  if (!placed && !h.launch.empty())
    bad("--launch starts workers on --hosts or --hostfile's hosts");
  if (!placed && h.token_file.empty())
    bad("--listen needs --token-file FILE: the job's key, which each "
        "`ss worker --connect ADDR:PORT --token-file FILE` proves it holds");
  if (world < 2)
    bad("the program runs on one device: hosts place the workers of "
        "several (`devices cpu[0 1]`, or --devices 'cpu[0 1]')");
  dist::RemoteOptions r;
  if (!h.hosts.empty()) {
    r.hosts = dist::parse_hosts(h.hosts);
  } else if (!h.hostfile.empty()) {
    std::ifstream in(h.hostfile);
    if (!in) bad("cannot read the hostfile " + h.hostfile);
    std::stringstream text;
    text << in.rdbuf();
    r.hosts = dist::parse_hostfile(text.str(), h.hostfile);
  }
  if (placed && fit_slots) r.hosts = fit(r.hosts, world);
  if (placed) dist::place_ranks(r.hosts, world);
  if (!h.launch.empty()) r.launch = h.launch;
  // A bad template is said now, not when the workers start.
  if (placed) (void)dist::expand_launch(r.launch, "host", {"ss"});
  r.listen = h.listen;
  r.token_file = h.token_file;
  if (h.heartbeat_timeout_s)
    r.heartbeat_timeout = std::chrono::milliseconds(
        static_cast<int64_t>(*h.heartbeat_timeout_s * 1000.0));
  return r;
}

}  // namespace ss::embed
