#include "interp/cli/conformance_compare.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "interp/data/safetensors.h"

namespace ss::cli {

namespace {

struct Printed {
  double value;
  double unit;     // the last printed digit's place; 0 for an integer
  int digits = 0;  // significant digits shown
};

// Every number in [s] with the place of its last digit: "0.03359" has
// unit 1e-5 and 4 digits, "1.5e-3" unit 1e-4, "42" is exact.
std::vector<Printed> printed_numbers(const std::string& s) {
  std::vector<Printed> v;
  static const std::regex num(R"(-?(\d+)(\.(\d+))?([eE]([-+]?\d+))?)");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), num);
       it != std::sregex_iterator();
       ++it) {
    const std::smatch& m = *it;
    Printed p{std::stod(m.str()), 0, 0};
    if (m[2].matched || m[4].matched) {
      int decimals = m[3].matched ? static_cast<int>(m[3].length()) : 0;
      int exp = m[5].matched ? std::stoi(m[5].str()) : 0;
      p.unit = std::pow(10.0, exp - decimals);
      std::string all = m[1].str() + (m[3].matched ? m[3].str() : "");
      size_t lead = all.find_first_not_of('0');
      p.digits = lead == std::string::npos ? 0 : int(all.size() - lead);
    }
    v.push_back(p);
  }
  return v;
}

}  // namespace

std::vector<double> numbers_in(const std::string& s) {
  std::vector<double> v;
  for (const Printed& p : printed_numbers(s)) v.push_back(p.value);
  return v;
}

// Note [Printed precision]: a tensor's elements print to 4 significant
// digits, off their values by up to half the last digit, so two prints of
// values equal within [tol] may differ by one unit of that digit (0.033585
// printed as 0.03359 on one device and 0.03358 on two, where the sgemm
// blocking of another batch size rounded the last bit differently). When
// both sides show that precision (4 or more significant digits, the same
// last place), one unit of it is added to the tolerance. Shorter texts
// (2.5: exact, or its zeros dropped) and integers compare as they are.
std::string compare_outputs(const std::string& want,
                            const std::string& got,
                            double tol,
                            const std::string& whose) {
  std::vector<Printed> a = printed_numbers(want), b = printed_numbers(got);
  if (a.size() != b.size())
    return "gave " + std::to_string(b.size()) + " numbers, " + whose + " " +
           std::to_string(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    double err = std::fabs(a[i].value - b[i].value);
    const bool rounded =
        a[i].digits >= 4 && b[i].digits >= 4 && a[i].unit == b[i].unit;
    double unit = rounded ? a[i].unit * 1.000001 : 0.0;
    if (err > tol * std::max(std::fabs(a[i].value), 1.0) + unit)
      return "number " + std::to_string(i + 1) + " is " +
             std::to_string(b[i].value) + ", " + whose + " " +
             std::to_string(a[i].value);
  }
  return "";
}

std::string compare_params(const eval::FinalParams& want,
                           const eval::FinalParams& got,
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

CaseFiles read_case_files(const std::string& dir) {
  namespace fs = std::filesystem;
  CaseFiles files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    std::string rel = fs::relative(it->path(), dir, ec).string();
    if (it->path().extension() == ".safetensors") {
      eval::FinalParams& p = files.tensors[rel];
      try {
        for (auto& [name, t] :
             data::read_safetensors(it->path().string()).tensors)
          p.params[name] = std::move(t);
      } catch (const data::SafetensorsError& e) {
        files.text[rel] = e.what();  // unreadable: compared as its error
      }
      continue;
    }
    std::ifstream in(it->path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    files.text[rel] = ss.str();
  }
  return files;
}

namespace {

template <typename T>
std::string same_names(const std::map<std::string, T>& want,
                       const std::map<std::string, T>& got) {
  for (const auto& [name, _] : want)
    if (!got.count(name)) return "did not write " + name;
  for (const auto& [name, _] : got)
    if (!want.count(name)) return "wrote " + name + ", one device did not";
  return "";
}

}  // namespace

std::string compare_files(const CaseFiles& want,
                          const CaseFiles& got,
                          double tol,
                          int64_t steps) {
  std::string diff = same_names(want.text, got.text);
  if (diff.empty()) diff = same_names(want.tensors, got.tensors);
  if (!diff.empty()) return diff;
  for (const auto& [name, text] : want.text)
    if (std::string d = compare_outputs(text, got.text.at(name), tol);
        !d.empty())
      return name + ": " + d;
  for (const auto& [name, params] : want.tensors) {
    eval::FinalParams w = params;
    w.steps = steps;
    if (std::string d = compare_params(w, got.tensors.at(name), tol);
        !d.empty())
      return name + ": " + d;
  }
  return "";
}

std::string compare_ranks(const std::vector<eval::FinalParams>& ranks) {
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
