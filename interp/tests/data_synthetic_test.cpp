// The data pipeline: synthetic digits and split/take views.
#include <catch2/catch.hpp>

#include "interp/tests/data_test_util.h"

namespace fs = std::filesystem;
using namespace ss;
using namespace ss::eval;
using namespace data_test;

// ------------------------------------------------------------ synthetic

TEST_CASE("synthetic_digits is deterministic and order-independent", "[data]") {
  auto a = make_synthetic_digits(rec("Digit"), dims(), 1000, 7);
  auto b = make_synthetic_digits(rec("Digit"), dims(), 1000, 7);
  auto c = make_synthetic_digits(rec("Digit"), dims(), 100, 7);
  auto d = make_synthetic_digits(rec("Digit"), dims(), 1000, 8);
  const ops::Tensor& xa = a->fields.at("img");
  REQUIRE(xa.shape() == ops::Shape{1000, 784});
  REQUIRE(xa.dtype() == types::DType::F32);
  CHECK(std::memcmp(xa.raw(), b->fields.at("img").raw(), xa.nbytes()) == 0);
  CHECK(std::memcmp(a->fields.at("label").raw(),
                    b->fields.at("label").raw(),
                    1000 * 8) == 0);
  // Item i does not depend on n.
  CHECK(std::memcmp(xa.raw(), c->fields.at("img").raw(), 100 * 784 * 4) == 0);
  CHECK(std::memcmp(xa.raw(), d->fields.at("img").raw(), xa.nbytes()) != 0);
}

TEST_CASE("synthetic_digits: labels balanced, values in [0, 1]", "[data]") {
  auto s = make_synthetic_digits(rec("Digit"), dims(), 10000, 0);
  const int64_t* y = s->fields.at("label").data<int64_t>();
  int counts[10] = {};
  for (int i = 0; i < 10000; ++i) {
    REQUIRE(y[i] >= 0);
    REQUIRE(y[i] < 10);
    ++counts[y[i]];
  }
  for (int k = 0; k < 10; ++k) {
    INFO("digit " << k);
    CHECK(counts[k] >= 700);
    CHECK(counts[k] <= 1300);
  }
  const float* x = s->fields.at("img").data<float>();
  double sum = 0;
  int ones = 0;
  int64_t outside = 0;
  for (int64_t i = 0; i < 10000 * 784; ++i) {
    outside += !(x[i] >= 0.0f && x[i] <= 1.0f);
    sum += x[i];
    ones += x[i] > 0.7f;
  }
  CHECK(outside == 0);
  double mean = sum / (10000.0 * 784);
  CHECK(mean > 0.08);  // strokes and noise, not a blank canvas
  CHECK(mean < 0.5);
  CHECK(ones > 10000 * 20);
}

TEST_CASE("synthetic_digits: time for 60000 items", "[data]") {
  auto t0 = std::chrono::steady_clock::now();
  auto s = make_synthetic_digits(rec("Digit"), dims(), 60000, 0);
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - t0)
                  .count();
  WARN("synthetic_digits(60000): " << ms << " ms");
  CHECK(s->n == 60000);
}

// ------------------------------------------------------------ views

TEST_CASE("split and take are views, and take cycles", "[data]") {
  auto s = small_store(10);
  auto d = DatasetValue::of(s);
  auto [a, b] = d->split(0.9);
  CHECK(a->length() == 9);
  CHECK(b->length() == 1);
  CHECK(b->item(0)->fields.at("y").item() == 9);
  CHECK(a->item(8)->fields.at("x").at(0) == 8);
  auto t = d->take(25);
  CHECK(t->length() == 25);
  CHECK(t->item(10)->fields.at("y").item() == 0);
  CHECK(t->item(24)->fields.at("x").at(3) == 4);
  // A take of the rest cycles within the rest.
  auto [p, q] = d->split(0.7);
  auto qt = q->take(7);
  std::vector<double> ys;
  for (int k = 0; k < 7; ++k) ys.push_back(qt->item(k)->fields.at("y").item());
  CHECK(ys == std::vector<double>{7, 8, 9, 7, 8, 9, 7});
  // Split of a cycled take.
  auto [u, w] = qt->split(0.5);
  CHECK(u->length() == 4);
  CHECK(w->length() == 3);  // round(3.5) = 4 in the first part
  CHECK(w->item(0)->fields.at("y").item() == 8);
  CHECK(w->item(2)->fields.at("y").item() == 7);
  CHECK(error_of([&] { d->split(1.0); }).rfind("ValueError", 0) == 0);
  CHECK(error_of([&] { d->split(0.0); }).rfind("ValueError", 0) == 0);
  CHECK(error_of([&] { d->split(-0.5); }).rfind("ValueError", 0) == 0);
  CHECK(error_of([&] { d->take(-1); }).rfind("ValueError", 0) == 0);
}
