// Hosts, ranks and the launch command (hosts.h).
#include "dist/control/hosts.h"

#include <stdexcept>

namespace ss::dist {

namespace {

// Characters that mean nothing to a POSIX shell in a bare word.
bool safe_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.' ||
         c == '/' || c == ':' || c == '=' || c == '@' || c == '%' || c == '+' ||
         c == ',';
}

bool safe_word(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!safe_char(c)) return false;
  return true;
}

// A host's name: what ssh or a namespace tool takes.
void check_host_name(const std::string& name, const std::string& where) {
  if (name.empty()) throw std::invalid_argument(where + ": a host has no name");
  for (char c : name)
    if (!safe_char(c) || c == '=' || c == ',')
      throw std::invalid_argument(where + ": '" + name +
                                  "' is not a host name (letters, digits and "
                                  "_ - . : @ only)");
}

int parse_slots(std::string_view v, const std::string& where) {
  if (v.empty() || v.size() > 6 ||
      v.find_first_not_of("0123456789") != std::string_view::npos)
    throw std::invalid_argument(where + ": slots is a number, not '" +
                                std::string(v) + "'");
  int n = std::stoi(std::string(v));
  if (n < 1)
    throw std::invalid_argument(where + ": a host has at least one slot");
  return n;
}

std::string trim(std::string_view s) {
  size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string_view::npos) return "";
  size_t b = s.find_last_not_of(" \t\r");
  return std::string(s.substr(a, b - a + 1));
}

}  // namespace

std::string shell_quote(std::string_view s) {
  if (safe_word(s)) return std::string(s);
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out.push_back(c);
  }
  return out + "'";
}

std::vector<Host> parse_hosts(std::string_view text) {
  std::vector<Host> out;
  const std::string all(text);
  size_t at = 0;
  while (at <= all.size()) {
    size_t comma = all.find(',', at);
    if (comma == std::string::npos) comma = all.size();
    const std::string item = trim(all.substr(at, comma - at));
    const std::string where = "--hosts '" + all + "'";
    Host h;
    // The slot count follows the last ':' (an IPv6 address has others).
    size_t colon = item.rfind(':');
    if (colon != std::string::npos &&
        item.find_first_not_of("0123456789", colon + 1) == std::string::npos &&
        colon + 1 < item.size()) {
      h.name = item.substr(0, colon);
      h.slots = parse_slots(std::string_view(item).substr(colon + 1), where);
    } else {
      h.name = item;
    }
    check_host_name(h.name, where);
    out.push_back(std::move(h));
    at = comma + 1;
  }
  return out;
}

std::vector<Host> parse_hostfile(std::string_view text,
                                 const std::string& path) {
  std::vector<Host> out;
  size_t at = 0;
  int line_no = 0;
  const std::string all(text);
  while (at < all.size()) {
    size_t end = all.find('\n', at);
    if (end == std::string::npos) end = all.size();
    std::string line = all.substr(at, end - at);
    at = end + 1;
    ++line_no;
    line = trim(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    const std::string where = path + ":" + std::to_string(line_no);
    Host h;
    bool first = true;
    size_t p = 0;
    while (p < line.size()) {
      size_t q = line.find_first_of(" \t", p);
      if (q == std::string::npos) q = line.size();
      const std::string word = line.substr(p, q - p);
      p = line.find_first_not_of(" \t", q);
      if (p == std::string::npos) p = line.size();
      if (first) {
        h.name = word;
        check_host_name(h.name, where);
        first = false;
      } else if (word.rfind("slots=", 0) == 0) {
        h.slots = parse_slots(word.substr(6), where);
      } else if (word.rfind("addr=", 0) == 0) {
        h.addr = word.substr(5);
        check_host_name(h.addr, where);
      } else {
        throw std::invalid_argument(where + ": '" + word +
                                    "' is not slots=N or addr=ADDR");
      }
    }
    out.push_back(std::move(h));
  }
  if (out.empty()) throw std::invalid_argument(path + " names no host");
  return out;
}

std::vector<int> place_ranks(const std::vector<Host>& hosts, int world) {
  int slots = 0;
  for (const Host& h : hosts) slots += h.slots;
  if (slots != world)
    throw std::invalid_argument(
        "the hosts have " + std::to_string(slots) + " slot" +
        (slots == 1 ? "" : "s") + ", but the program runs on " +
        std::to_string(world) + " device" + (world == 1 ? "" : "s") +
        ": give each host as many slots as ranks it runs");
  std::vector<int> out;
  for (size_t i = 0; i < hosts.size(); ++i)
    for (int s = 0; s < hosts[i].slots; ++s) out.push_back(static_cast<int>(i));
  return out;
}

std::string expand_launch(std::string_view tmpl,
                          const std::string& host,
                          const std::vector<std::string>& argv) {
  std::string cmd;
  for (const std::string& w : argv) {
    if (!safe_word(w))
      throw std::invalid_argument(
          "the worker's command word '" + w +
          "' would not survive a remote shell: start ss from a path of "
          "letters, digits and _ - . / only");
    cmd += (cmd.empty() ? "" : " ") + w;
  }
  std::string out;
  bool has_cmd = false;
  for (size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl[i] != '{') {
      out.push_back(tmpl[i]);
      continue;
    }
    size_t close = tmpl.find('}', i);
    const std::string name(tmpl.substr(
        i + 1, close == std::string_view::npos ? 0 : close - i - 1));
    if (close != std::string_view::npos && name == "cmd") {
      out += cmd;
      has_cmd = true;
    } else if (close != std::string_view::npos && name == "host") {
      out += shell_quote(host);
    } else {
      throw std::invalid_argument(
          "--launch '" + std::string(tmpl) +
          "': only {host} and {cmd} are filled in, not '" +
          std::string(tmpl.substr(i,
                                  close == std::string_view::npos
                                      ? std::string_view::npos
                                      : close - i + 1)) +
          "'");
    }
    i = close;
  }
  if (!has_cmd)
    throw std::invalid_argument("--launch '" + std::string(tmpl) +
                                "' has no {cmd}, where the worker's command "
                                "goes");
  return out;
}

}  // namespace ss::dist
