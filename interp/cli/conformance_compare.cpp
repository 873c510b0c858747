#include "interp/cli/conformance_compare.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <regex>

namespace ss::cli {

std::vector<double> numbers_in(const std::string& s) {
  std::vector<double> v;
  static const std::regex num(R"(-?\d+(\.\d+)?([eE][-+]?\d+)?)");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), num);
       it != std::sregex_iterator();
       ++it)
    v.push_back(std::stod(it->str()));
  return v;
}

std::string compare_outputs(const std::string& want,
                            const std::string& got,
                            double tol) {
  std::vector<double> a = numbers_in(want), b = numbers_in(got);
  if (a.size() != b.size())
    return "printed " + std::to_string(b.size()) + " numbers, one device " +
           std::to_string(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    double err = std::fabs(a[i] - b[i]);
    if (err > tol * std::max(std::fabs(a[i]), 1.0))
      return "number " + std::to_string(i + 1) + " is " + std::to_string(b[i]) +
             ", on one device " + std::to_string(a[i]);
  }
  return "";
}

std::string compare_params(const eval::Interpreter::FinalParams& want,
                           const eval::Interpreter::FinalParams& got,
                           double tol) {
  const double bound = tol * double(std::max<int64_t>(1, want.steps));
  // A param that stays near 0 while its gradient's terms cancel (a
  // batch_norm bias under a centred loss) holds rounding noise: its error
  // is measured against the largest param, as the terms summed are.
  double floor = 1e-30;
  for (const auto& [name, w] : want.params)
    for (double x : w.to_doubles()) floor = std::max(floor, std::fabs(x));
  for (const auto& [name, w] : want.params) {
    auto it = got.params.find(name);
    if (it == got.params.end()) return "no param " + name;
    if (it->second.shape() != w.shape())
      return "param " + name + " has another shape";
    std::vector<double> a = w.to_doubles(), b = it->second.to_doubles();
    double scale = floor;
    for (size_t i = 0; i < a.size(); ++i)
      if (!(std::fabs(a[i] - b[i]) <= bound * scale))
        return "param " + name + "[" + std::to_string(i) + "] is " +
               std::to_string(b[i]) + ", on one device " +
               std::to_string(a[i]) + " (tolerance " + std::to_string(bound) +
               " of " + std::to_string(scale) + ")";
  }
  if (got.params.size() != want.params.size())
    return "params differ in number from one device's";
  return "";
}

std::string compare_ranks(
    const std::vector<eval::Interpreter::FinalParams>& ranks) {
  for (size_t r = 1; r < ranks.size(); ++r) {
    if (ranks[r].params.size() != ranks[0].params.size())
      return "rank " + std::to_string(r) + " holds other params";
    for (const auto& [name, t0] : ranks[0].params) {
      auto it = ranks[r].params.find(name);
      if (it == ranks[r].params.end() || it->second.shape() != t0.shape() ||
          it->second.dtype() != t0.dtype() ||
          std::memcmp(it->second.raw(), t0.raw(), t0.nbytes()) != 0)
        return "rank " + std::to_string(r) + "'s copy of " + name +
               " is not rank 0's";
    }
  }
  return "";
}

}  // namespace ss::cli
