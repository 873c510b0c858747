// Argument helpers shared by the subcommands.
#include <cctype>

#include "interp/cli/commands.h"

namespace ss::cli {

bool parse_dim_override(const std::string& text,
                        std::string& name,
                        int64_t& size) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    return false;
  name = text.substr(0, eq);
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  int64_t v = 0;
  for (size_t i = eq + 1; i < text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return false;
    v = v * 10 + (text[i] - '0');
    if (v > (int64_t(1) << 40)) return false;
  }
  if (v < 1) return false;
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
    if (std::isdigit(static_cast<unsigned char>(c))) any = true;
    else if (c != ' ' && c != ',') return false;
  }
  return any;
}

}  // namespace ss::cli
