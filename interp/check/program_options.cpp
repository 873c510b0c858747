// The options every command that takes a program shares (`--devices`,
// `-D NAME=SIZE`), read by the subcommands and by `ss worker` alike.
#include "interp/check/program_options.h"

#include <algorithm>
#include <cctype>
#include <iostream>
#include <set>

namespace ss::check {

bool parse_dim_override(const std::string& text,
                        std::string& name,
                        int64_t& size,
                        std::string* why) {
  auto refuse = [&](std::string w) {
    if (why) *why = std::move(w);
    return false;
  };
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    return refuse("-D wants NAME=SIZE");
  name = text.substr(0, eq);
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return refuse("-D wants NAME=SIZE, and a NAME is letters, digits and _");
  int64_t v = 0;
  for (size_t i = eq + 1; i < text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i])))
      return refuse("-D wants NAME=SIZE with a positive size");
    v = v * 10 + (text[i] - '0');
    if (v > kMaxDimOverride)
      return refuse("-D takes a size of at most 2^40 (" +
                    std::to_string(kMaxDimOverride) + ")");
  }
  if (v < 1) return refuse("-D wants NAME=SIZE with a positive size");
  size = v;
  return true;
}

bool valid_device_spec(const std::string& spec) {
  size_t br = spec.find('[');
  std::string kind = spec.substr(0, br);
  if (kind != "cpu" && kind != "cuda") return false;
  if (br == std::string::npos) return true;
  if (spec.back() != ']') return false;
  bool any = false;
  for (size_t i = br + 1; i + 1 < spec.size(); ++i) {
    char c = spec[i];
    if (std::isdigit(static_cast<unsigned char>(c)))
      any = true;
    else if (c != ' ' && c != ',')
      return false;
  }
  return any;
}

// Parses "cpu", "cuda[0 1 2]", "cpu[0 1]" (the --devices override).
bool parse_device_spec(const std::string& s, DeviceList& out) {
  size_t br = s.find('[');
  std::string kind = s.substr(0, br);
  while (!kind.empty() && kind.back() == ' ') kind.pop_back();
  if (kind != "cpu" && kind != "cuda") return false;
  out.kind = kind;
  out.ids.clear();
  if (br == std::string::npos) return true;
  size_t close = s.find(']', br);
  if (close == std::string::npos || close + 1 != s.size()) return false;
  std::string inner = s.substr(br + 1, close - br - 1);
  size_t i = 0;
  while (i < inner.size()) {
    if (inner[i] == ' ' || inner[i] == ',') {
      ++i;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(inner[i]))) return false;
    int64_t v = 0;
    while (i < inner.size() &&
           std::isdigit(static_cast<unsigned char>(inner[i]))) {
      v = v * 10 + (inner[i] - '0');
      if (v > 1'000'000) return false;
      ++i;
    }
    out.ids.push_back(v);
  }
  return !out.ids.empty();
}

std::optional<int64_t> repeated_device(const std::string& spec) {
  DeviceList dl;
  if (!parse_device_spec(spec, dl)) return std::nullopt;
  std::set<int64_t> seen;
  for (int64_t id : dl.ids)
    if (!seen.insert(id).second) return id;
  return std::nullopt;
}

std::string device_list_text(const DeviceList& dl) {
  std::string s = dl.kind;
  if (dl.ids.empty()) return s;
  s += "[";
  for (size_t i = 0; i < dl.ids.size(); ++i)
    s += (i ? " " : "") + std::to_string(dl.ids[i]);
  return s + "]";
}

ProgramOption program_option(const char* cmd,
                             const std::vector<std::string>& args,
                             size_t& i,
                             check::Options& opts) {
  const std::string& a = args[i];
  if (a == "--deterministic") {
    opts.deterministic = true;
    return ProgramOption::Taken;
  }
  if (a == "--devices" && i + 1 < args.size()) {
    opts.devices_override = args[++i];
    if (std::optional<int64_t> twice = repeated_device(opts.devices_override)) {
      std::cerr << "ss " << cmd << ": --devices lists device " << *twice
                << " twice in '" << opts.devices_override
                << "': each device runs one worker\n";
      return ProgramOption::Bad;
    }
    if (valid_device_spec(opts.devices_override)) return ProgramOption::Taken;
    std::cerr << "ss " << cmd
              << ": --devices wants cpu, cpu[0 1 2] or cuda[0 1 2], found '"
              << opts.devices_override << "'\n";
    return ProgramOption::Bad;
  }
  if ((a == "-D" && i + 1 < args.size()) ||
      (a.size() > 2 && a.rfind("-D", 0) == 0)) {
    std::string def = a == "-D" ? args[++i] : a.substr(2);
    std::string name;
    int64_t size;
    std::string why;
    if (parse_dim_override(def, name, size, &why)) {
      opts.dim_overrides[name] = size;
      return ProgramOption::Taken;
    }
    std::cerr << "ss " << cmd << ": " << why << ", found '" << def << "'\n";
    return ProgramOption::Bad;
  }
  return ProgramOption::NotMine;
}

}  // namespace ss::check
