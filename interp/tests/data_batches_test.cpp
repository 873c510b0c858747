// The data pipeline: batches (sizes, shuffles, padding and masks).
#include <catch2/catch.hpp>

#include "interp/tests/data_test_util.h"

namespace fs = std::filesystem;
using namespace ss;
using namespace ss::eval;
using namespace data_test;

// ------------------------------------------------------------ batches

TEST_CASE("batches: sizes, drop_last, len", "[data]") {
  auto s = small_store(1000);
  auto b = batches_of(s, 64);
  CHECK(b->length() == 16);
  auto all = all_batches(*b);
  REQUIRE(all.size() == 16);
  for (size_t k = 0; k < 15; ++k)
    CHECK(all[k]->fields.at("x").shape()[0] == 64);
  CHECK(all[15]->fields.at("x").shape() == ops::Shape{40, 4});
  CHECK(all[15]->fields.at("y").shape() == ops::Shape{40});
  CHECK(all[15]->batch);
  CHECK(all[0]->fields.at("x").at(4 * 63) == 63);  // unshuffled order
  b->drop_last = true;
  CHECK(b->length() == 15);
  CHECK(all_batches(*b).size() == 15);
}

TEST_CASE("batches: the shuffle is a deterministic permutation per seed",
          "[data]") {
  auto p1 = shuffle_order(1000, 1), p1b = shuffle_order(1000, 1),
       p2 = shuffle_order(1000, 2);
  CHECK(p1 == p1b);
  CHECK(p1 != p2);
  std::set<int64_t> seen(p1.begin(), p1.end());
  CHECK(seen.size() == 1000);
  CHECK(*seen.begin() == 0);
  CHECK(*seen.rbegin() == 999);
  auto s = small_store(100);
  auto b = batches_of(s, 32, 3);
  b->shuffle = true;
  b->seed = 5;
  auto x = all_batches(*b);
  auto y = all_batches(*b);
  std::vector<double> order;
  for (auto& r : x)
    for (double v : r->fields.at("y").to_doubles()) order.push_back(v);
  std::vector<double> order2;
  for (auto& r : y)
    for (double v : r->fields.at("y").to_doubles()) order2.push_back(v);
  CHECK(order == order2);
  auto p5 = shuffle_order(100, 5);
  for (size_t i = 0; i < 100; ++i) CHECK(order[i] == p5[i] % 10);
}

TEST_CASE(
    "batches: loader threads give the same batches, and a break does not hang",
    "[data]") {
  auto s = small_store(500);
  auto ref = all_batches(*batches_of(s, 7, 0));
  for (int t : {1, 2, 4, 8}) {
    auto got = all_batches(*batches_of(s, 7, t));
    REQUIRE(got.size() == ref.size());
    for (size_t k = 0; k < ref.size(); ++k)
      CHECK(got[k]->fields.at("x").to_doubles() ==
            ref[k]->fields.at("x").to_doubles());
  }
  NullInterp ni;
  for (int rep = 0; rep < 100; ++rep) {
    auto b = batches_of(s, 3, 1 + rep % 4);
    auto cur = b->cursor(ni.in);
    Value v;
    for (int k = 0; k < rep % 5; ++k) REQUIRE(cur->next(v));
    cur.reset();  // break mid-epoch: joins the threads
  }
  SUCCEED();
}

TEST_CASE("batches: a size-variable field is padded, with a mask", "[data]") {
  // tokens: item i has i % 4 + 1 tokens, valued 10 * i + k.
  int64_t n = 6, L = 4;
  std::vector<int64_t> tok(n * L, -1), lens, y;
  for (int64_t i = 0; i < n; ++i) {
    lens.push_back(i % 4 + 1);
    for (int64_t k = 0; k < lens.back(); ++k) tok[i * L + k] = 10 * i + k;
    y.push_back(i);
  }
  std::string path = tmp("seq.npz");
  write_file(path,
             zip({{"tokens.npy", npy("<i8", {n, L}, bytes_of(tok)), false},
                  {"tokens_lengths.npy", npy("<i8", {n}, bytes_of(lens)), true},
                  {"y.npy", npy("<i8", {n}, bytes_of(y)), false}}));
  auto s = load("Seq", path);
  REQUIRE(s->items.at("tokens").size() == 6);
  CHECK(s->items.at("tokens")[2].shape() == ops::Shape{3});
  auto all = all_batches(*batches_of(s, 3));
  REQUIRE(all.size() == 2);
  const ops::Tensor& t0 = all[0]->fields.at("tokens");
  CHECK(t0.shape() == ops::Shape{3, 3});
  CHECK(t0.to_doubles() == std::vector<double>{0, 0, 0, 10, 11, 0, 20, 21, 22});
  const ops::Tensor& m0 = all[0]->fields.at("mask_n");
  CHECK(m0.dtype() == types::DType::Bool);
  CHECK(m0.to_doubles() == std::vector<double>{1, 0, 0, 1, 1, 0, 1, 1, 1});
  CHECK(all[1]->fields.at("tokens").shape() == ops::Shape{3, 4});
  CHECK(all[1]->fields.at("mask_n").to_doubles() ==
        std::vector<double>{1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0, 0});
  // The field's pad value, not 0 (issue 10 item 8: `pad=` was ignored).
  auto padded = all_batches(*batches_of(load("SeqPad", path), 3));
  CHECK(padded[0]->fields.at("tokens").to_doubles() ==
        std::vector<double>{0, -1, -1, 10, 11, -1, 20, 21, 22});
  CHECK(padded[0]->fields.at("mask_n").to_doubles() == m0.to_doubles());
  // A length past the array's axis is a ShapeError.
  lens[1] = 9;
  write_file(
      path,
      zip({{"tokens.npy", npy("<i8", {n, L}, bytes_of(tok)), false},
           {"tokens_lengths.npy", npy("<i8", {n}, bytes_of(lens)), false},
           {"y.npy", npy("<i8", {n}, bytes_of(y)), false}}));
  std::string e = error_of([&] { load("Seq", path); });
  CHECK(e.rfind("ShapeError", 0) == 0);
  CHECK(e.find("item 1") != std::string::npos);
}

TEST_CASE("batches: in the dataset's order they are views of its rows",
          "[data]") {
  // As torch slices a tensor: no copy for consecutive items; a shuffled
  // batch is gathered into its own storage.
  auto store = small_store(100);
  const auto* x0 = static_cast<const char*>(store->fields.at("x").raw());
  auto plain = all_batches(*batches_of(store, 30, 0));
  REQUIRE(plain.size() == 4);
  for (size_t k = 0; k < plain.size(); ++k) {
    const ops::Tensor& x = plain[k]->fields.at("x");
    CHECK(static_cast<const char*>(x.raw()) == x0 + k * 30 * 4 * sizeof(float));
    CHECK(x.to_doubles()[0] == double(30 * k));
  }
  CHECK(plain[3]->fields.at("x").shape() == ops::Shape{10, 4});
  auto b = batches_of(store, 30, 0);
  b->shuffle = true;
  b->seed = 3;
  for (const auto& r : all_batches(*b)) {
    const char* p = static_cast<const char*>(r->fields.at("x").raw());
    CHECK((p < x0 || p >= x0 + 100 * 4 * sizeof(float)));
  }
}
