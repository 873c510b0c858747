// The data pipeline: streamed (memory-mapped) datasets.
#include <catch2/catch.hpp>

#include "interp/tests/data_test_util.h"

namespace fs = std::filesystem;
using namespace ss;
using namespace ss::eval;
using namespace data_test;

// ------------------------------------------------------------ streamed

namespace {

std::shared_ptr<TensorStore> stream(
    const std::string& record,
    const std::string& path,
    std::map<std::string, std::string> renames = {}) {
  return stream_dataset(rec(record), dims(), path, renames);
}

// Every batch's fields as doubles, by field name, in batch order.
std::vector<std::map<std::string, std::vector<double>>> batch_values(
    std::shared_ptr<const TensorStore> s,
    int64_t n,
    int threads,
    bool shuffle,
    std::function<std::shared_ptr<DatasetValue>(std::shared_ptr<DatasetValue>)>
        view = nullptr) {
  auto b = std::make_shared<BatchesValue>();
  b->ds = view ? view(DatasetValue::of(s)) : DatasetValue::of(s);
  b->n = n;
  b->threads = threads;
  b->shuffle = shuffle;
  b->seed = 11;
  std::vector<std::map<std::string, std::vector<double>>> out;
  for (auto& r : all_batches(*b)) {
    auto& m = out.emplace_back();
    for (const auto& [name, t] : r->fields) {
      m[name] = t.to_doubles();
      m[name + ".shape"] =
          std::vector<double>(t.shape().begin(), t.shape().end());
      m[name + ".dtype"] = {static_cast<double>(t.dtype())};
    }
  }
  return out;
}

long rss_pages() {
  std::ifstream in("/proc/self/statm");
  long size = 0, resident = 0;
  in >> size >> resident;
  return resident;
}

}  // namespace

TEST_CASE(
    "streamed: a .npy folder and a .safetensors give the in-memory batches",
    "[data]") {
  int64_t n = 301;
  std::vector<float> x;
  std::vector<double> x64;
  std::vector<int64_t> y;
  std::vector<int32_t> y32;
  for (int64_t i = 0; i < n; ++i) {
    for (int k = 0; k < 4; ++k) {
      x.push_back(static_cast<float>(i) + 0.25f * k);
      x64.push_back(i * 0.5 + k);
    }
    y.push_back(i % 10);
    y32.push_back(static_cast<int32_t>((i * 7) % 10));
  }
  // f32 -> f32 (a view over the mapping), i64 -> i64.
  write_file(tmp("st_npy/x.npy"), npy("<f4", {n, 4}, bytes_of(x)));
  write_file(tmp("st_npy/y.npy"), npy("<i8", {n}, bytes_of(y)));
  // f64 for f32 and i32 for i64: a ShapeError (Note [No silent dtype
  // conversion]), streamed or not.
  write_file(tmp("st_conv/x.npy"), npy("<f8", {n, 4}, bytes_of(x64)));
  write_file(tmp("st_conv/y.npy"), npy("<i4", {n}, bytes_of(y32)));
  // safetensors: a 3-byte bool first leaves x misaligned (no view; copied).
  SafetensorsFile f;
  f.tensors.push_back({"pad", ops::Tensor::zeros({3}, types::DType::Bool)});
  f.tensors.push_back(
      {"img",
       ops::Tensor::from_doubles({n, 4},
                                 std::vector<double>(x.begin(), x.end()),
                                 types::DType::F32)});
  f.tensors.push_back(
      {"y",
       ops::Tensor::from_doubles(
           {n}, std::vector<double>(y.begin(), y.end()), types::DType::I64)});
  write_safetensors(tmp("st.safetensors"), f);
  SafetensorsFile g;  // aligned, f64 for f32: a ShapeError
  g.tensors.push_back(
      {"x", ops::Tensor::from_doubles({n, 4}, x64, types::DType::F64)});
  g.tensors.push_back(
      {"y",
       ops::Tensor::from_doubles(
           {n}, std::vector<double>(y.begin(), y.end()), types::DType::I64)});
  write_safetensors(tmp("st64.safetensors"), g);

  struct Case {
    std::string path;
    std::map<std::string, std::string> renames;
    bool x_view;
  };
  for (const std::string& wrong : {tmp("st_conv"), tmp("st64.safetensors")}) {
    INFO(wrong);
    std::string mem = error_of([&] { load("Small", wrong); });
    CHECK_THAT(mem,
               Catch::Contains("ShapeError") &&
                   Catch::Contains("expected dtype f32, found f64"));
    // Streamed, the item is checked as its batch loads: the loop's error.
    auto str = stream("Small", wrong);
    std::string streamed;
    try {
      batch_values(str, 32, 0, false);
    } catch (const RuntimeError& e) {
      streamed = e.kind() + ": " + e.message();
      for (const std::string& n : e.notes()) streamed += "\n" + n;
    }
    CHECK_THAT(streamed,
               Catch::Contains("ShapeError: item 0") &&
                   Catch::Contains("expected dtype f32, found f64") &&
                   Catch::Contains("help: convert the array to f32"));
  }
  for (const Case& c : {Case{tmp("st_npy"), {}, true},
                        Case{tmp("st.safetensors"), {{"x", "img"}}, false}}) {
    INFO(c.path);
    auto mem = load("Small", c.path, c.renames);
    auto str = stream("Small", c.path, c.renames);
    REQUIRE(str->stream);
    CHECK(str->fields.empty());
    CHECK(str->n == n);
    CHECK(str->stream->arrays.at("x").view.defined() == c.x_view);
    CHECK(DatasetValue::of(str)->length() == n);
    for (int threads : {0, 2})
      for (bool shuffle : {false, true}) {
        CHECK(batch_values(str, 32, threads, shuffle) ==
              batch_values(mem, 32, threads, shuffle));
      }
    // split, take (cycling) and item() are the same views.
    auto views = [](std::shared_ptr<DatasetValue> d) {
      auto [a, b] = d->split(0.8);
      return b->take(150);
    };
    CHECK(batch_values(str, 16, 2, false, views) ==
          batch_values(mem, 16, 2, false, views));
    auto ds = DatasetValue::of(str), dm = DatasetValue::of(mem);
    CHECK(ds->item(123)->fields.at("x").to_doubles() ==
          dm->item(123)->fields.at("x").to_doubles());
    CHECK(ds->item(123)->fields.at("x").shape() == ops::Shape{4});
    CHECK(ds->item(7)->fields.at("y").item() ==
          dm->item(7)->fields.at("y").item());
  }

  // stream=true on other formats reads in memory.
  write_file(tmp("st.csv"), "y,x_0,x_1,x_2,x_3\n1,0.5,1,2,3\n");
  auto c = stream("Small", tmp("st.csv"));
  CHECK(!c->stream);
  CHECK(c->n == 1);
}

TEST_CASE("streamed: size-variable fields with lengths, checked as loaded",
          "[data]") {
  int64_t n = 6, L = 4;
  std::vector<int64_t> tok(n * L, -1), lens, y;
  for (int64_t i = 0; i < n; ++i) {
    lens.push_back(i % 4 + 1);
    for (int64_t k = 0; k <= i % 4; ++k) tok[i * L + k] = 10 * i + k;
    y.push_back(i);
  }
  std::string dir = tmp("st_seq");
  write_file(dir + "/tokens.npy", npy("<i8", {n, L}, bytes_of(tok)));
  write_file(dir + "/tokens_lengths.npy", npy("<i8", {n}, bytes_of(lens)));
  write_file(dir + "/y.npy", npy("<i8", {n}, bytes_of(y)));
  auto mem = load("Seq", dir);
  auto str = stream("Seq", dir);
  for (int threads : {0, 3})
    CHECK(batch_values(str, 4, threads, true) ==
          batch_values(mem, 4, threads, true));
  // A length past the array: a ShapeError naming the item only when loaded.
  lens[4] = 9;
  write_file(dir + "/tokens_lengths.npy", npy("<i8", {n}, bytes_of(lens)));
  auto bad = stream("Seq", dir);
  CHECK(load_rows(*bad, {0, 1, 2, 3}).items.at("tokens").size() == 4);
  std::string e = error_of([&] { load_rows(*bad, {3, 4}); });
  CHECK(e.rfind("ShapeError", 0) == 0);
  CHECK(e.find("item 4 ") != std::string::npos);
  CHECK(e.find("`tokens`") != std::string::npos);
}

TEST_CASE("streamed: a wrong shape or dtype is found as the item loads",
          "[data]") {
  std::vector<float> x(10 * 3, 0.5f);
  std::vector<int64_t> y(10, 1);
  std::vector<float> yf(10, 1.0f);
  write_file(tmp("st_shape/x.npy"), npy("<f4", {10, 3}, bytes_of(x)));
  write_file(tmp("st_shape/y.npy"), npy("<i8", {10}, bytes_of(y)));
  auto s =
      stream("Small", tmp("st_shape"));  // made: nothing per item is checked
  CHECK(s->n == 10);
  std::string e = error_of([&] { load_rows(*s, {6, 2}); });
  CHECK(e.rfind("ShapeError", 0) == 0);
  CHECK(e.find("item 6 ") != std::string::npos);
  CHECK(e.find("`x`") != std::string::npos);
  CHECK(e.find("expected [4] f32, found [3] f32") != std::string::npos);
  std::vector<float> x4(10 * 4, 0.5f);
  write_file(tmp("st_dtype/x.npy"), npy("<f4", {10, 4}, bytes_of(x4)));
  write_file(tmp("st_dtype/y.npy"), npy("<f4", {10}, bytes_of(yf)));
  auto d = stream("Small", tmp("st_dtype"));
  e = error_of([&] { load_rows(*d, {5}); });
  CHECK(e.rfind("ShapeError", 0) == 0);
  CHECK(e.find("item 5 ") != std::string::npos);
  CHECK(e.find("expected dtype i64, found f32") != std::string::npos);
  // Dataset-wide problems are still errors when made.
  write_file(tmp("st_count/x.npy"), npy("<f4", {10, 4}, bytes_of(x4)));
  write_file(tmp("st_count/y.npy"), npy("<i8", {9}, std::string(72, '\0')));
  CHECK(error_of([&] {
          stream("Small", tmp("st_count"));
        }).rfind("ShapeError", 0) == 0);
  CHECK(error_of([&] {
          stream("Small", tmp("st_nothing"));
        }).rfind("IOError", 0) == 0);
}

TEST_CASE(
    "a field without an item axis, or with another item count, is a "
    "ShapeError in memory and streamed",
    "[data]") {
  std::vector<float> x(100 * 4, 0.5f);
  std::vector<int64_t> y(99, 1);
  write_file(tmp("count_npy/x.npy"), npy("<f4", {100, 4}, bytes_of(x)));
  write_file(tmp("count_npy/y.npy"), npy("<i8", {99}, bytes_of(y)));
  for (bool streamed : {false, true}) {
    INFO("streamed " << streamed);
    std::string e = error_of([&] {
      streamed ? stream("Small", tmp("count_npy"))
               : load("Small", tmp("count_npy"));
    });
    CHECK(e.rfind("ShapeError", 0) == 0);
    CHECK(e.find("field `y` has 99 items but `x` has 100") !=
          std::string::npos);
  }
  std::vector<int64_t> one{7};
  write_file(tmp("count_npy/y.npy"), npy("<i8", {}, bytes_of(one)));
  for (bool streamed : {false, true}) {
    INFO("streamed " << streamed);
    std::string e = error_of([&] {
      streamed ? stream("Small", tmp("count_npy"))
               : load("Small", tmp("count_npy"));
    });
    CHECK(e.rfind("ShapeError", 0) == 0);
    CHECK(e.find("field `y` is a 0-d array") != std::string::npos);
  }
}

TEST_CASE("streamed: a truncated file is an IOError when made", "[data]") {
  std::vector<float> x(100 * 4, 0.5f);
  std::vector<int64_t> y(100, 1);
  std::string nx = npy("<f4", {100, 4}, bytes_of(x));
  write_file(tmp("st_trunc/x.npy"), nx.substr(0, nx.size() - 5));
  write_file(tmp("st_trunc/y.npy"), npy("<i8", {100}, bytes_of(y)));
  std::string e = error_of([&] { stream("Small", tmp("st_trunc")); });
  CHECK(e.rfind("IOError", 0) == 0);
  CHECK(e.find("x.npy") != std::string::npos);
  CHECK(e.find("bytes of data") != std::string::npos);
  write_file(tmp("st_trunc/x.npy"), nx.substr(0, 7));  // inside the magic
  CHECK(error_of([&] {
          stream("Small", tmp("st_trunc"));
        }).rfind("IOError", 0) == 0);

  SafetensorsFile f;
  f.tensors.push_back({"x", ops::Tensor::zeros({100, 4}, types::DType::F32)});
  f.tensors.push_back({"y", ops::Tensor::zeros({100}, types::DType::I64)});
  write_safetensors(tmp("st_trunc.safetensors"), f);
  std::string whole;
  {
    std::ifstream in(tmp("st_trunc.safetensors"), std::ios::binary);
    whole.assign(std::istreambuf_iterator<char>(in), {});
  }
  for (size_t cut : {whole.size() - 1, size_t{40}, size_t{5}}) {
    write_file(tmp("st_trunc.safetensors"), whole.substr(0, cut));
    e = error_of([&] { stream("Small", tmp("st_trunc.safetensors")); });
    INFO(cut << ": " << e);
    CHECK(e.rfind("IOError", 0) == 0);
    CHECK(e.find("st_trunc.safetensors") != std::string::npos);
    // The in-memory reader agrees that it is an IOError.
    CHECK(error_of([&] {
            load("Small", tmp("st_trunc.safetensors"));
          }).rfind("IOError", 0) == 0);
  }
  // A malformed header (not JSON) too.
  std::string bad = whole;
  bad[9] = '!';
  write_file(tmp("st_trunc.safetensors"), bad);
  CHECK(error_of([&] {
          stream("Small", tmp("st_trunc.safetensors"));
        }).rfind("IOError", 0) == 0);
}

TEST_CASE("streamed: a 200 MB file is mapped, not read, when made", "[data]") {
  // Digit: img [784] f32 (3136 bytes an item): 64000 items are 200 MB.
  int64_t n = 64000;
  std::string dir = tmp("st_big");
  fs::create_directories(dir);
  {
    std::string head = npy("<f4", {n, 784}, "");
    std::ofstream o(dir + "/img.npy", std::ios::binary | std::ios::trunc);
    o.write(head.data(), static_cast<std::streamsize>(head.size()));
    std::vector<float> chunk(784 * 1000);
    for (int64_t c = 0; c < n / 1000; ++c) {
      for (size_t i = 0; i < chunk.size(); ++i)
        chunk[i] = static_cast<float>((c * 1000 + i / 784) % 100) / 100.0f;
      o.write(reinterpret_cast<const char*>(chunk.data()),
              static_cast<std::streamsize>(chunk.size() * sizeof(float)));
    }
    std::vector<int64_t> labels(n);
    for (int64_t i = 0; i < n; ++i) labels[i] = i % 10;
    write_file(dir + "/label.npy", npy("<i8", {n}, bytes_of(labels)));
  }
  long page = ::sysconf(_SC_PAGESIZE);
  long before = rss_pages();
  auto s = stream("Digit", dir);
  long after = rss_pages();
  INFO("RSS grew by " << (after - before) * page / (1 << 20) << " MiB");
  CHECK((after - before) * page < 50l * (1 << 20));
  CHECK(s->n == n);
  CHECK(s->stream->arrays.at("img").view.defined());
  // One batch from the far end reads only what it needs.
  Rows r = load_rows(*s, {63999, 5});
  CHECK(r.fields.at("img").shape() == ops::Shape{2, 784});
  CHECK(r.fields.at("img").at(0) == Approx(0.99f));
  CHECK(r.fields.at("img").at(784) == Approx(0.05f));
  CHECK(r.fields.at("label").to_doubles() == std::vector<double>{9, 5});
  long loaded = rss_pages();
  CHECK((loaded - before) * page < 50l * (1 << 20));
  s.reset();
  fs::remove_all(dir);
}

TEST_CASE(
    "streamed: the mapping outlives the dataset value while batches use it",
    "[data]") {
  int64_t n = 100;
  std::vector<float> x;
  std::vector<int64_t> y;
  for (int64_t i = 0; i < n; ++i) {
    for (int k = 0; k < 4; ++k) x.push_back(static_cast<float>(i));
    y.push_back(i % 10);
  }
  std::string dir = tmp("st_keep");
  write_file(dir + "/x.npy", npy("<f4", {n, 4}, bytes_of(x)));
  write_file(dir + "/y.npy", npy("<i8", {n}, bytes_of(y)));
  auto store = stream("Small", dir);
  std::weak_ptr<const FileMapping> file = store->stream->arrays.at("x").file;
  auto b = std::make_shared<BatchesValue>();
  {
    auto ds = DatasetValue::of(store);
    b->ds = ds->split(0.5).second;  // a view of the second half
  }
  store.reset();        // the dataset value is gone...
  fs::remove_all(dir);  // ...and so are the files' names
  REQUIRE(!file.expired());
  b->n = 8;
  NullInterp ni;
  auto cur = b->cursor(ni.in);
  b.reset();  // the Batches value too: the running cursor holds the mapping
  std::vector<double> ys;
  Value v;
  while (cur->next(v))
    for (double d : std::static_pointer_cast<RecordValue>(v.obj)
                        ->fields.at("x")
                        .to_doubles())
      ys.push_back(d);
  REQUIRE(ys.size() == 50 * 4);
  CHECK(ys.front() == 50);
  CHECK(ys.back() == 99);
  CHECK(!file.expired());
  cur.reset();
  CHECK(file.expired());  // unmapped with the last holder
}

TEST_CASE(
    ".ss: a streamed item outside its domain is raised at the loop as its "
    "batch loads",
    "[data]") {
  int64_t n = 2000;
  std::vector<float> x(n * 4, 0.5f);
  std::vector<int64_t> y(n);
  for (int64_t i = 0; i < n; ++i) y[i] = i % 10;
  y[1234] = 12;
  std::string dir = tmp("st_domain");
  write_file(dir + "/x.npy", npy("<f4", {n, 4}, bytes_of(x)));
  write_file(dir + "/label.npy", npy("<i8", {n}, bytes_of(y)));
  for (int threads : {0, 2}) {
    INFO("loader_threads=" << threads);
    RunResult r = run_ss("data_stream_domain.ss",
                         std::string(R"(
data Row:
    x: [4] f32
    label: i64 in 0..10

fn main():
    let ds = dataset(Row, ")") +
                             dir + R"(", stream=true)
    print(len(ds))
    let seen = 0
    for b in ds.batches(100, loader_threads=)" +
                             std::to_string(threads) + R"():
        seen += len(b.label)
        print(seen)
)");
    INFO(r.message << r.rendered);
    CHECK(r.kind == "DomainError");
    CHECK(r.message.find("item 1234 ") != std::string::npos);
    CHECK(r.message.find("`label`") != std::string::npos);
    CHECK(r.message.find("0..10") != std::string::npos);
    CHECK(r.message.find("found 12") != std::string::npos);
    CHECK(r.rendered.find(":10:") != std::string::npos);  // the `for` line
    // Made without a look at item 1234; batches 0..11 ran, batch 12 did not.
    std::string want = "2000\n";
    for (int k = 1; k <= 12; ++k) want += std::to_string(100 * k) + "\n";
    CHECK(r.out == want);
  }
  // split, take, len and progress work on a streamed dataset in `.ss`.
  y[1234] = 4;
  write_file(dir + "/label.npy", npy("<i8", {n}, bytes_of(y)));
  RunResult r = run_ss("data_stream_ok.ss", std::string(R"(
data Row:
    x: [4] f32
    label: i64 in 0..10

fn main():
    let train, test = dataset(Row, ")") + dir + R"(", stream=true).split(0.9)
    let total = 0
    for b in progress(train.take(2500).batches(64, shuffle=3)):
        total += len(b.label)
    print(total, len(train), len(test), len(test.batches(64)))
)");
  INFO(r.message << r.rendered);
  CHECK(r.kind == "");
  CHECK(r.out == "2500 1800 200 4\n");
}

TEST_CASE(
    "streamed loaders never crash on mutated files, and agree with the "
    "in-memory ones",
    "[fuzz]") {
  std::vector<float> x(8, 0.5f);
  std::vector<int64_t> y = {1, 2};
  SafetensorsFile f;
  f.metadata["format"] = "pt";
  f.tensors.push_back(
      {"x",
       ops::Tensor::from_doubles(
           {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}, types::DType::F32)});
  f.tensors.push_back(
      {"y", ops::Tensor::from_doubles({2}, {1, 2}, types::DType::I64)});
  write_safetensors(tmp("fz.safetensors"), f);
  std::string st;
  {
    std::ifstream in(tmp("fz.safetensors"), std::ios::binary);
    st.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto same = [](const std::shared_ptr<TensorStore>& mem,
                 const std::shared_ptr<TensorStore>& str) {
    std::vector<int64_t> all(mem->n);
    for (int64_t i = 0; i < mem->n; ++i) all[i] = i;
    Rows r = load_rows(*str, all);  // the in-memory store's checks passed
    for (const auto& [name, t] : mem->fields) {
      const ops::Tensor& u = r.fields.at(name);
      REQUIRE(u.shape() == t.shape());
      CHECK(std::memcmp(u.raw(), t.raw(), t.nbytes()) == 0);
    }
  };
  int agreed = 0;
  auto check = [&](const std::string& path, const std::string& bytes) {
    write_file(path, bytes);
    std::shared_ptr<TensorStore> mem, str;
    try {
      mem = load("Small", path);
    } catch (const DataError&) {
    }
    try {
      str = stream("Small", path);
      std::vector<int64_t> all(str->n);
      for (int64_t i = 0; i < str->n; ++i) all[i] = i;
      load_rows(*str, all);
    } catch (const DataError&) {
      if (mem) FAIL("the in-memory load succeeded, the streamed one failed");
    }
    if (mem && str) {
      same(mem, str);
      ++agreed;
    }
  };
  fuzz(st, 7, [&](const std::string& b) { check(tmp("fz.safetensors"), b); });
  std::string ny = npy("<i8", {2}, bytes_of(y));
  write_file(tmp("fz_npy/y.npy"), ny);
  fuzz(npy("<f4", {2, 4}, bytes_of(x)), 9, [&](const std::string& b) {
    write_file(tmp("fz_npy/x.npy"), b);
    std::shared_ptr<TensorStore> mem, str;
    try {
      mem = load("Small", tmp("fz_npy"));
    } catch (const DataError&) {
    }
    try {
      str = stream("Small", tmp("fz_npy"));
      load_rows(*str, {0, 1});
    } catch (const DataError&) {
      if (mem && mem->n == 2)
        FAIL("the in-memory load succeeded, the streamed one failed");
    }
    if (mem && str && mem->n == 2) same(mem, str);
  });
  CHECK(agreed > 0);
}
