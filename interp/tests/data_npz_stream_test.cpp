// An npz in memory and streamed (Note [Reading an npz in place]): the
// values numpy wrote, stored (np.savez) and deflated (np.savez_compressed),
// across batch boundaries; and the peak memory of an `ss run` that
// iterates one, which holds the data once.
#include <catch2/catch.hpp>
#include <cstdlib>

#include "interp/tests/data_test_util.h"
#include "interp/tests/peak_rss_util.h"

using namespace data_test;

namespace {

// Runs numpy (Debian's, under /usr/bin/python3) on [script] in [dir].
void numpy_writes(const std::string& dir, const std::string& script) {
  fs::create_directories(dir);
  write_file(dir + "/gen.py", script);
  std::string cmd = "cd '" + dir + "' && /usr/bin/python3 gen.py";
  REQUIRE(std::system(cmd.c_str()) == 0);
}

template <class T>
std::vector<double> read_bin(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string b((std::istreambuf_iterator<char>(in)), {});
  std::vector<double> out(b.size() / sizeof(T));
  for (size_t i = 0; i < out.size(); ++i) {
    T v;
    std::memcpy(&v, b.data() + i * sizeof(T), sizeof(T));
    out[i] = static_cast<double>(v);
  }
  return out;
}

// [n] items of every array a Small (x, or x2 renamed, and y) and a Seq
// (tokens and tokens_lengths, y) read, in stored.npz and deflated.npz,
// and the values numpy has for them in <array>.bin.
std::string oracle_script(int64_t n) {
  return R"(
import numpy as np
n = )" + std::to_string(n) +
         R"(
rng = np.random.default_rng(7)
a = dict(
    x=rng.standard_normal((n, 4)).astype(np.float32),
    x2=rng.standard_normal((n, 4)).astype(np.float32),
    y=rng.integers(0, 10, n).astype(np.int64),
    tokens=rng.integers(-50, 50, (n, 5)).astype(np.int64),
    tokens_lengths=rng.integers(0, 6, n).astype(np.int64),
)
np.savez("stored.npz", **a)
np.savez_compressed("deflated.npz", **a)
for k, v in a.items():
    v.tofile(k + ".bin")
)";
}

// Field [name] of every batch of [b], concatenated.
std::vector<double> concat(const std::vector<std::shared_ptr<RecordValue>>& b,
                           const std::string& name) {
  std::vector<double> out;
  for (const auto& r : b) {
    std::vector<double> v = r->fields.at(name).to_doubles();
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

// The bytes of data in a Big item: x [256] f32 and y i64.
constexpr int64_t kBigItem = 256 * 4 + 8;

std::string big_program(const std::string& file, bool stream = true) {
  return R"(
data Big:
    x: [256] f32
    y: i64
fn main():
    let ds = dataset(Big, ")" +
         file + (stream ? "\", stream=true)" : "\")") + R"(
    let seen = 0
    for b in ds.batches(1024):
        seen += len(b.y)
    print(seen)
)";
}

// Big's [n] items, stored (big.npz) and deflated (big_z.npz). x holds
// bytes of 0..255 over 255, which deflate shrinks a little, as real data.
std::string big_script(int64_t n) {
  return R"(
import numpy as np
n = )" + std::to_string(n) +
         R"(
rng = np.random.default_rng(3)
x = (rng.integers(0, 256, (n, 256)) / 255).astype(np.float32)
y = np.arange(n, dtype=np.int64)
np.savez("big.npz", x=x, y=y)
np.savez_compressed("big_z.npz", x=x, y=y)
)";
}

}  // namespace

// An npz in memory (load_dataset) or streamed, by [stream].
std::shared_ptr<TensorStore> npz_store(bool stream,
                                       const types::RecordInfo& r,
                                       const std::string& path,
                                       std::map<std::string, std::string> rn) {
  return stream ? stream_dataset(r, dims(), path, rn)
                : load_dataset(r, dims(), path, rn);
}

TEST_CASE("npz in memory and streamed: numpy's values, stored and deflated",
          "[data][npz]") {
  for (auto [n, stream] : {std::pair{int64_t{1000}, true},
                           std::pair{int64_t{1}, true},
                           std::pair{int64_t{1000}, false},
                           std::pair{int64_t{1}, false}}) {
    INFO((stream ? "streamed" : "in memory"));
    std::string d = tmp("npz_oracle_" + std::to_string(n));
    numpy_writes(d, oracle_script(n));
    std::vector<double> x = read_bin<float>(d + "/x.bin"),
                        x2 = read_bin<float>(d + "/x2.bin"),
                        y = read_bin<int64_t>(d + "/y.bin"),
                        tokens = read_bin<int64_t>(d + "/tokens.bin"),
                        lens = read_bin<int64_t>(d + "/tokens_lengths.bin");
    for (const char* file : {"stored.npz", "deflated.npz"}) {
      std::string path = d + "/" + file;
      INFO(path);
      for (auto [field, want] : {std::pair{"x", &x}, std::pair{"x2", &x2}}) {
        INFO(field);
        std::map<std::string, std::string> renames;
        if (std::string(field) != "x") renames["x"] = field;
        auto s = npz_store(stream, rec("Small"), path, renames);
        REQUIRE((s->stream != nullptr) == stream);
        CHECK(s->n == n);
        // Batches of 64 and of 7: 1000 is a multiple of neither.
        for (int64_t b : {64, 7}) {
          auto batches = all_batches(*batches_of(s, b));
          CHECK(batches.size() == static_cast<size_t>((n + b - 1) / b));
          CHECK(concat(batches, "x") == *want);
          CHECK(concat(batches, "y") == y);
        }
        // Rows read out of order, as a shuffle reads them.
        std::vector<int64_t> rows;
        for (int64_t i = n - 1; i >= 0; i -= 3) rows.push_back(i);
        Rows r = load_rows(*s, rows);
        std::vector<double> xs = r.fields.at("x").to_doubles();
        for (size_t k = 0; k < rows.size(); ++k)
          for (int j = 0; j < 4; ++j)
            CHECK(xs[k * 4 + j] == (*want)[rows[k] * 4 + j]);
      }
      // A size-variable field cut to its `_lengths`.
      auto seq = npz_store(stream, rec("Seq"), path, {});
      std::vector<int64_t> all(n);
      for (int64_t i = 0; i < n; ++i) all[i] = i;
      Rows r = load_rows(*seq, all);
      for (int64_t i = 0; i < n; ++i) {
        auto len = static_cast<int64_t>(lens[i]);
        std::vector<double> want(tokens.begin() + i * 5,
                                 tokens.begin() + i * 5 + len);
        CHECK(r.items.at("tokens").at(i).to_doubles() == want);
      }
      CHECK(r.fields.at("y").to_doubles() == y);
    }
    fs::remove_all(d);
  }
}

TEST_CASE("streamed npz: a corrupt member is an IOError when made",
          "[data][npz]") {
  std::vector<int64_t> y = {1, 2, 3};
  std::vector<float> x(12, 0.5f);
  for (bool deflated : {false, true}) {
    std::string z = zip({{"x.npy", npy("<f4", {3, 4}, bytes_of(x)), deflated},
                         {"y.npy", npy("<i8", {3}, bytes_of(y)), deflated}});
    // The last byte of y's data (stored), or of its deflate stream: the
    // member's data ends where the central directory begins.
    size_t cd = z.find(std::string("PK\1\2", 4));
    z[cd - 1] = static_cast<char>(z[cd - 1] ^ 0x55);
    std::string path = tmp(deflated ? "st_crc_z.npz" : "st_crc.npz");
    write_file(path, z);
    std::string e =
        error_of([&] { stream_dataset(rec("Small"), dims(), path, {}); });
    INFO(e);
    CHECK(e.rfind("IOError: " + path + "[y.npy]: ", 0) == 0);
  }
  // The directory's checks are the in-memory loader's: two alike.
  std::string path = tmp("st_twice.npz");
  write_file(path,
             zip({{"y.npy", npy("<i8", {3}, bytes_of(y)), false},
                  {"y.npy", npy("<i8", {3}, bytes_of(y)), true}}));
  CHECK(error_of([&] { stream_dataset(rec("Small"), dims(), path, {}); }) ==
        "IOError: " + path + ": two members are named 'y' (or 'y.npy')");
}

// The bound: a tiny npz of the same record gives the base (the binary,
// the interpreter, the loader threads); over it, the store holds the data
// once: streamed, the mapped pages a stored member's batches touch, or a
// deflated member's inflated bytes; in memory, the tensors the members
// were converted into, each piece of the file's (or the inflated) bytes
// given back as it is converted (Note [Converting a piece at a time]).
// Plus the batches in flight, the loader threads' malloc arenas and the
// allocator's rounding, which vary from run to run (measured 1.14x to
// 1.36x of the data over the base on 96 MiB, streamed, on a loaded 2-core
// machine). The old loaders read the file whole and then converted it
// into tensors: 2x the data over the base (and a deflated npz its
// compressed bytes too). The bound is the midpoint, 1.5x: the design
// passes it, the old loaders do not.
TEST_CASE("npz in memory and streamed: the peak holds the data once",
          "[data][npz]") {
  std::string d = tmp("npz_peak");
  const int64_t n = (int64_t{96} << 20) / 1024;  // 96 MiB of x
  numpy_writes(d, big_script(n));
  {
    std::vector<float> x(10 * 256, 0.5f);
    std::vector<int64_t> y(10, 1);
    write_file(d + "/tiny.npz",
               zip({{"x.npy", npy("<f4", {10, 256}, bytes_of(x)), false},
                    {"y.npy", npy("<i8", {10}, bytes_of(y)), false}}));
  }
  const double data_mb = static_cast<double>(n * kBigItem) / (1 << 20);
  for (bool stream : {true, false}) {
    Peak base = baseline(d, big_program("tiny.npz", stream), "10\n");
    for (const char* file : {"big.npz", "big_z.npz"}) {
      Peak p = run_peak(d, big_program(file, stream));
      INFO((stream ? "streamed " : "in memory ") << file << ": " << p.err);
      INFO("base " << base.hwm_mb << " MB, peak " << p.hwm_mb << " MB, data "
                   << data_mb << " MB");
      REQUIRE(p.rc == 0);
      CHECK(p.out == std::to_string(n) + "\n");
      CHECK(p.hwm_mb > 0);
      CHECK(p.hwm_mb < base.hwm_mb + 1.5 * data_mb);
    }
  }
  fs::remove_all(d);
}
