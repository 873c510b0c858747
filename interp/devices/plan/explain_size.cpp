// Size of `ss explain`: a count as a sum of products of axis names (known
// or symbolic), and its text in the report (thousands, bytes_text).
#include <algorithm>
#include <sstream>

#include "interp/devices/plan/explain.h"

namespace ss::check::comms {

// ------------------------------------------------------------ Size

Size Size::constant(int64_t n) {
  Size s;
  if (n != 0) s.terms[{}] = n;
  return s;
}

bool Size::known() const {
  for (const auto& [m, c] : terms)
    if (!m.empty() && c != 0) return false;
  return true;
}

int64_t Size::value() const {
  auto it = terms.find({});
  return it == terms.end() ? 0 : it->second;
}

bool Size::zero() const {
  for (const auto& [m, c] : terms)
    if (c != 0) return false;
  return true;
}

Size& Size::operator+=(const Size& o) {
  for (const auto& [m, c] : o.terms) {
    int64_t& v = terms[m];
    v += c;
    if (v == 0) terms.erase(m);
  }
  return *this;
}

Size Size::operator*(int64_t k) const {
  Size s;
  if (k == 0) return s;
  for (const auto& [m, c] : terms) s.terms[m] = c * k;
  return s;
}

std::string thousands(int64_t n) {
  std::string d = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i > 0 && (d.size() - i) % 3 == 0) out += ',';
    out += d[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string Size::str() const {
  if (known()) return thousands(value());
  // Higher degree first, then by name; the constant last.
  std::vector<std::pair<std::vector<std::string>, int64_t>> ts(terms.begin(),
                                                               terms.end());
  std::stable_sort(ts.begin(), ts.end(), [](const auto& a, const auto& b) {
    if (a.first.size() != b.first.size())
      return a.first.size() > b.first.size();
    return a.first < b.first;
  });
  std::string s;
  for (const auto& [m, c] : ts) {
    if (c == 0) continue;
    std::string t;
    if (m.empty() || c != 1) t = thousands(c < 0 ? -c : c);
    for (const std::string& v : m) t += (t.empty() ? "" : "·") + v;
    if (s.empty())
      s = (c < 0 ? "-" : "") + t;
    else
      s += (c < 0 ? " - " : " + ") + t;
  }
  return s.empty() ? "0" : s;
}

std::string bytes_text(const Size& bytes) {
  std::string s = bytes.str() + " bytes";
  if (bytes.known() && bytes.value() >= 1024)
    s += " (" + thousands((bytes.value() + 512) / 1024) + " KiB)";
  return s;
}

}  // namespace ss::check::comms
