// Note [A domain check at memory speed]: the f32 check by blocks finds the
// same first value outside a domain as the definition, a compare in double
// of each value in turn, for bounds f32 cannot hold exactly, bounds it can,
// values on and beside them, NaN and infinities, in any block.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "interp/data/dataset_impl.h"

namespace {

using ss::types::FieldInfo;

FieldInfo domain(std::optional<double> lo,
                 std::optional<double> hi,
                 bool inclusive) {
  FieldInfo f;
  f.has_domain = true;
  f.domain_lo = lo;
  f.domain_hi = hi;
  f.domain_inclusive = inclusive;
  return f;
}

/// The definition: the first value v with not (lo <= v and v <= hi), or
/// v < hi for an exclusive bound, compared in double; -1 when none.
int64_t first_outside_by_definition(const std::vector<float>& xs,
                                    const FieldInfo& f) {
  for (size_t i = 0; i < xs.size(); ++i) {
    double v = xs[i];
    bool in = true;
    if (f.domain_lo && !(v >= *f.domain_lo)) in = false;
    if (f.domain_hi &&
        !(f.domain_inclusive ? v <= *f.domain_hi : v < *f.domain_hi))
      in = false;
    if (std::isnan(v)) in = false;
    if (!in) return static_cast<int64_t>(i);
  }
  return -1;
}

int64_t first_outside_of(const std::vector<float>& xs, const FieldInfo& f) {
  ss::ops::Tensor t = ss::ops::Tensor::empty({static_cast<int64_t>(xs.size())},
                                             ss::types::DType::F32);
  std::copy(xs.begin(), xs.end(), t.data<float>());
  double bad = 0;
  int64_t at = ss::data::dataset_detail::first_outside(t, f, bad);
  if (at >= 0) {
    INFO("reported value " << bad << " at " << at);
    CHECK((bad == static_cast<double>(xs[at]) ||
           (std::isnan(bad) && std::isnan(xs[at]))));
  }
  return at;
}

}  // namespace

TEST_CASE("data domain: the f32 check by blocks agrees with the definition",
          "[data]") {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const double max_f = std::numeric_limits<float>::max();
  // Bounds f32 holds (0, 1, 0.5), cannot hold (0.1, 0.3), one side only,
  // beyond f32's range, and infinite.
  const std::vector<FieldInfo> domains = {domain(0.0, 1.0, true),
                                          domain(0.0, 1.0, false),
                                          domain(0.1, 0.3, true),
                                          domain(0.1, 0.3, false),
                                          domain(-0.3, std::nullopt, false),
                                          domain(std::nullopt, 0.5, false),
                                          domain(-1e300, 1e300, true),
                                          domain(-2 * max_f, max_f, false),
                                          domain(-HUGE_VAL, HUGE_VAL, false),
                                          domain(0.5, 0.5, true)};
  std::mt19937 rng(7);
  for (const FieldInfo& f : domains) {
    double lo = f.domain_lo.value_or(-1.0), hi = f.domain_hi.value_or(1.0);
    lo = std::max(lo, -4.0);
    hi = std::min(hi, 4.0);
    // Values inside (or near) the domain; then one odd value per case.
    std::uniform_real_distribution<double> u(lo, hi);
    std::vector<float> base(1000);
    for (float& v : base) v = static_cast<float>(u(rng));
    // Candidates for the odd value: each bound as f32 and its neighbours
    // (some inside, some outside, by the definition), infinities, NaN.
    std::vector<float> odd = {inf, -inf, nan, 0.0f, -0.0f};
    for (std::optional<double> b : {f.domain_lo, f.domain_hi}) {
      if (!b || std::abs(*b) > max_f) continue;
      float fb = static_cast<float>(*b);
      odd.insert(odd.end(),
                 {fb, std::nextafter(fb, inf), std::nextafter(fb, -inf)});
    }
    for (float o : odd)
      for (size_t at :
           {size_t{0}, size_t{63}, size_t{64}, size_t{700}, size_t{999}}) {
        std::vector<float> xs = base;
        xs[at] = o;
        INFO("domain " << f.domain_lo.value_or(-HUGE_VAL) << ".."
                       << (f.domain_inclusive ? "=" : "")
                       << f.domain_hi.value_or(HUGE_VAL) << ", value " << o
                       << " at " << at);
        CHECK(first_outside_of(xs, f) == first_outside_by_definition(xs, f));
      }
  }
}
