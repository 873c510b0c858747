// Safetensors files (interp/eval/safetensors.h) and checkpoints (save, load,
// load_into: interp/eval/lib/checkpoint.cpp): round trips, the exact byte
// layout other writers produce, atomic writes, every corrupt input as a
// clear error, mutation fuzzing, and save/load through the interpreter.

#include "interp/eval/safetensors.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "interp/eval/interpreter.h"
#include "interp/tests/check_test_util.h"

using namespace ss;
using Catch::Matchers::Contains;
using eval::read_safetensors;
using eval::SafetensorsError;
using eval::SafetensorsFile;
using eval::write_safetensors;
using ops::Tensor;
using types::DType;

namespace fs = std::filesystem;

namespace {

// A fresh directory per test case, removed afterwards.
struct TempDir {
  fs::path dir;
  TempDir() {
    static int n = 0;
    dir = fs::temp_directory_path() /
          ("ss_ckpt_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string operator/(const std::string& name) const {
    return (dir / name).string();
  }
};

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string u64le(uint64_t n) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return s;
}

// A file as safetensors.torch.save_file lays it out: u64 length, compact
// JSON padded with spaces to a multiple of 8, then the data.
std::string st_file(std::string header, const std::string& data) {
  header.append((8 - header.size() % 8) % 8, ' ');
  return u64le(header.size()) + header + data;
}

template <class T>
std::string raw(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()),
                     v.size() * sizeof(T));
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         (a.nbytes() == 0 || std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0);
}

const Tensor* find(const SafetensorsFile& f, const std::string& name) {
  for (const auto& [n, t] : f.tensors)
    if (n == name) return &t;
  return nullptr;
}

std::vector<std::string> leftovers(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".tmp.") != std::string::npos)
      out.push_back(e.path().filename().string());
  return out;
}

SafetensorsFile sample() {
  SafetensorsFile f;
  f.tensors.emplace_back(
      "w", Tensor::from_doubles({2, 3}, {1, -2, 3.5, 4, 5, 6}, DType::F32));
  f.tensors.emplace_back("b",
                         Tensor::from_doubles({3}, {0.5, 0, -1}, DType::F32));
  f.metadata["format"] = "shapescript";
  return f;
}

// The error [path] gives when read (empty when it reads).
std::string read_error(const std::string& path) {
  try {
    read_safetensors(path);
  } catch (const SafetensorsError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// ---- round trips ----

TEST_CASE("safetensors round-trips every dtype, 0-d and empty tensors",
          "[checkpoint]") {
  TempDir tmp;
  SafetensorsFile f;
  std::vector<double> v = {1.5, -2, 0, 3.25, 100, -0.125};
  f.tensors.emplace_back("f32", Tensor::from_doubles({2, 3}, v, DType::F32));
  f.tensors.emplace_back("f64", Tensor::from_doubles({3, 2}, v, DType::F64));
  f.tensors.emplace_back("bf16", Tensor::from_doubles({6}, v, DType::BF16));
  f.tensors.emplace_back("f16", Tensor::from_doubles({1, 6}, v, DType::F16));
  f.tensors.emplace_back("i32", Tensor::from_doubles({2, 3}, v, DType::I32));
  f.tensors.emplace_back("i64", Tensor::from_doubles({6, 1}, v, DType::I64));
  f.tensors.emplace_back(
      "bool", Tensor::from_doubles({2, 3}, {1, 0, 1, 1, 0, 0}, DType::Bool));
  f.tensors.emplace_back("scalar", Tensor::scalar(7.5, DType::F64));
  f.tensors.emplace_back("empty", Tensor::zeros({0, 3}, DType::F32));
  f.tensors.emplace_back("empty2", Tensor::zeros({4, 0, 2}, DType::I64));
  f.tensors.emplace_back("blocks.w_q",
                         Tensor::full({2, 2, 2}, 0.25, DType::F32));
  std::string path = tmp / "all.safetensors";
  write_safetensors(path, f);
  SafetensorsFile g = read_safetensors(path);
  REQUIRE(g.tensors.size() == f.tensors.size());
  for (size_t i = 0; i < f.tensors.size(); ++i) {
    INFO(f.tensors[i].first);
    CHECK(g.tensors[i].first == f.tensors[i].first);  // header order kept
    CHECK(same_bytes(g.tensors[i].second, f.tensors[i].second));
  }
  CHECK(find(g, "scalar")->rank() == 0);
  CHECK(find(g, "scalar")->item() == 7.5);
  CHECK(find(g, "bf16")->to_doubles() == find(f, "bf16")->to_doubles());
  CHECK(find(g, "empty")->shape() == ops::Shape{0, 3});
  CHECK(g.metadata.empty());
  CHECK(leftovers(tmp.dir).empty());
}

TEST_CASE("safetensors keeps metadata and pads the header to 8 bytes",
          "[checkpoint]") {
  TempDir tmp;
  std::string path = tmp / "m.safetensors";
  for (int extra = 0; extra < 9; ++extra) {
    SafetensorsFile f = sample();
    f.metadata["step"] = "12";
    f.metadata["note"] = std::string(extra, 'x');  // every padding amount
    write_safetensors(path, f);
    std::string bytes = read_bytes(path);
    REQUIRE(bytes.size() >= 8);
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | uint8_t(bytes[i]);
    CHECK(n % 8 == 0);
    CHECK(bytes.size() == 8 + n + (6 + 3) * 4);
    std::string header = bytes.substr(8, n);
    CHECK(header.front() == '{');
    size_t close = header.rfind('}');
    CHECK(header.find_first_not_of(' ', close + 1) == std::string::npos);
    CHECK(n - (close + 1) < 8);
    SafetensorsFile g = read_safetensors(path);
    CHECK(g.metadata == f.metadata);
    CHECK(same_bytes(*find(g, "w"), *find(f, "w")));
  }
}

TEST_CASE("safetensors writes through a temporary file and rename",
          "[checkpoint]") {
  TempDir tmp;
  std::string path = tmp / "ck.safetensors";
  write_safetensors(path, sample());
  std::string before = read_bytes(path);
  CHECK(leftovers(tmp.dir).empty());

  SECTION("a directory that does not exist") {
    std::string bad = tmp / "no/such/dir/ck.safetensors";
    CHECK_THROWS_WITH(write_safetensors(bad, sample()),
                      Contains("cannot write") && Contains("no/such/dir"));
    CHECK(!fs::exists(tmp.dir / "no"));
  }
  SECTION("an undefined tensor leaves the old file") {
    SafetensorsFile f = sample();
    f.tensors.emplace_back("broken", Tensor());
    CHECK_THROWS_WITH(write_safetensors(path, f), Contains("'broken'"));
    CHECK(read_bytes(path) == before);
  }
  SECTION("duplicate names and __metadata__ as a name") {
    SafetensorsFile f = sample();
    f.tensors.push_back(f.tensors[0]);
    CHECK_THROWS_WITH(write_safetensors(path, f), Contains("two tensors"));
    SafetensorsFile g = sample();
    g.tensors.emplace_back("__metadata__", Tensor::scalar(1));
    CHECK_THROWS_AS(write_safetensors(path, g), SafetensorsError);
    CHECK(read_bytes(path) == before);
  }
  SECTION("the rename fails: the target is a directory") {
    std::string dirpath = tmp / "adir";
    fs::create_directory(dirpath);
    write_bytes(tmp / "adir/keep", "keep");
    CHECK_THROWS_WITH(write_safetensors(dirpath, sample()), Contains("rename"));
    CHECK(fs::is_directory(dirpath));
    CHECK(read_bytes(tmp / "adir/keep") == "keep");
  }
  SECTION("a new file replaces the old one whole") {
    SafetensorsFile f;
    f.tensors.emplace_back("z", Tensor::full({5}, 2.0, DType::F64));
    write_safetensors(path, f);
    SafetensorsFile g = read_safetensors(path);
    REQUIRE(g.tensors.size() == 1);
    CHECK(g.tensors[0].first == "z");
  }
  CHECK(leftovers(tmp.dir).empty());
}

// ---- files from other writers ----

TEST_CASE("safetensors reads the byte layout torch and numpy write",
          "[checkpoint]") {
  TempDir tmp;
  std::string path = tmp / "torch.safetensors";

  SECTION("save_file's compact header") {
    std::string header =
        R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})";
    REQUIRE(header.size() == 57);  // padded with 7 spaces
    std::string file = st_file(header, raw(std::vector<float>{1, 2, 3, 4}));
    REQUIRE(file.size() == 8 + 64 + 16);
    write_bytes(path, file);
    SafetensorsFile f = read_safetensors(path);
    REQUIRE(f.tensors.size() == 1);
    CHECK(f.tensors[0].first == "w");
    CHECK(f.tensors[0].second.shape() == ops::Shape{2, 2});
    CHECK(f.tensors[0].second.to_doubles() == std::vector<double>{1, 2, 3, 4});
  }
  SECTION("metadata first, several dtypes, offsets out of header order") {
    // safetensors sorts data by dtype alignment then name; the header's key
    // order need not follow the data.
    std::string header =
        R"({"__metadata__":{"format":"pt"},)"
        R"("b":{"dtype":"I64","shape":[2],"data_offsets":[8,24]},)"
        R"("a":{"dtype":"BF16","shape":[],"data_offsets":[24,26]},)"
        R"("c":{"dtype":"F64","shape":[1],"data_offsets":[0,8]},)"
        R"("e":{"dtype":"F16","shape":[0],"data_offsets":[26,26]}})";
    std::string data = raw(std::vector<double>{0.5}) +
                       raw(std::vector<int64_t>{-3, 1LL << 40}) +
                       raw(std::vector<uint16_t>{0x3fc0});  // bf16 1.5
    write_bytes(path, st_file(header, data));
    SafetensorsFile f = read_safetensors(path);
    CHECK(f.metadata == std::map<std::string, std::string>{{"format", "pt"}});
    REQUIRE(f.tensors.size() == 4);
    CHECK(find(f, "b")->to_doubles() ==
          std::vector<double>{-3, double(1LL << 40)});
    CHECK(find(f, "a")->dtype() == DType::BF16);
    CHECK(find(f, "a")->item() == 1.5);
    CHECK(find(f, "c")->item() == 0.5);
    CHECK(find(f, "e")->numel() == 0);
  }
  SECTION("an unpadded header and trailing bytes after the data") {
    std::string header =
        R"({"x":{"dtype":"I32","shape":[3],"data_offsets":[0,12]}})";
    write_bytes(path,
                u64le(header.size()) + header +
                    raw(std::vector<int32_t>{7, 8, 9}) + "xyz");
    CHECK(read_safetensors(path).tensors[0].second.to_doubles() ==
          std::vector<double>{7, 8, 9});
  }
  SECTION("bool, and an empty header") {
    std::string header =
        R"({"m":{"dtype":"BOOL","shape":[2,2],"data_offsets":[0,4]}})";
    write_bytes(path, st_file(header, std::string("\1\0\0\1", 4)));
    CHECK(read_safetensors(path).tensors[0].second.to_doubles() ==
          std::vector<double>{1, 0, 0, 1});
    write_bytes(path, st_file("{}", ""));
    CHECK(read_safetensors(path).tensors.empty());
  }
}

// ---- corrupt inputs ----

TEST_CASE("safetensors rejects corrupt files with a clear error",
          "[checkpoint]") {
  TempDir tmp;
  std::string path = tmp / "bad.safetensors";
  auto with_header = [&](const std::string& header, const std::string& data) {
    write_bytes(path, st_file(header, data));
    return read_error(path);
  };
  auto entry = [](const std::string& dtype,
                  const std::string& shape,
                  const std::string& offsets) {
    return R"({"t":{"dtype":")" + dtype + R"(","shape":)" + shape +
           R"(,"data_offsets":)" + offsets + "}}";
  };
  std::string d16(16, '\0');

  CHECK_THAT(read_error(tmp / "missing.safetensors"),
             Contains("cannot open") && Contains("missing.safetensors"));
  CHECK_THAT(read_error(tmp.dir.string()), Contains("not a regular file"));

  write_bytes(path, "");
  CHECK_THAT(read_error(path), Contains("0 bytes") && Contains(path));
  write_bytes(path, "abc");
  CHECK_THAT(read_error(path), Contains("truncated"));

  // A good file cut short.
  std::string good = st_file(entry("F32", "[2,2]", "[0,16]"), d16);
  write_bytes(path, good.substr(0, good.size() - 1));
  CHECK_THAT(read_error(path), Contains("run past the data"));
  write_bytes(path, good.substr(0, 20));
  CHECK_THAT(read_error(path), Contains("only 12 follow"));

  write_bytes(path, u64le(1000) + "{}");
  CHECK_THAT(read_error(path), Contains("header length is 1000"));
  write_bytes(path, u64le(uint64_t(1) << 63) + "{}      ");
  CHECK_THAT(read_error(path), Contains("9223372036854775808"));
  write_bytes(path, u64le(~uint64_t(0)) + "{}      ");
  CHECK_THAT(read_error(path), Contains("18446744073709551615"));
  {
    // A header over 100 MB, in a sparse file that really is that large.
    uint64_t big = 100ull * 1000 * 1000 + 8;
    write_bytes(path, u64le(big) + "{");
    fs::resize_file(path, 8 + big);
    CHECK_THAT(read_error(path), Contains("over the limit"));
  }
  write_bytes(path, u64le(1) + "{");
  CHECK_THAT(read_error(path), Contains("not JSON"));

  CHECK_THAT(with_header("{\"t\": [1, 2", ""), Contains("not JSON"));
  CHECK_THAT(with_header("[1, 2, 3]", ""), Contains("not a JSON object"));
  CHECK_THAT(with_header(R"({"t":5})", ""), Contains("tensor 't'"));
  CHECK_THAT(with_header(R"({"t":{"shape":[1],"data_offsets":[0,4]}})", d16),
             Contains("dtype"));
  CHECK_THAT(with_header(R"({"t":{"dtype":"F32","data_offsets":[0,4]}})", d16),
             Contains("shape"));
  CHECK_THAT(with_header(R"({"t":{"dtype":"F32","shape":[1]}})", d16),
             Contains("data_offsets"));
  CHECK_THAT(with_header(entry("F32", "[-1,4]", "[0,16]"), d16),
             Contains("negative") && Contains("'t'"));
  CHECK_THAT(with_header(entry("F32", "[2.5]", "[0,16]"), d16),
             Contains("integer"));
  CHECK_THAT(with_header(entry("F32", "[\"2\"]", "[0,16]"), d16),
             Contains("integer"));
  CHECK_THAT(with_header(entry("F32", "[2,2]", "[0,32]"), d16),
             Contains("run past the data"));
  CHECK_THAT(
      with_header(entry("F32", "[2,2]", "[0,18446744073709551615]"), d16),
      Contains("run past the data"));
  CHECK_THAT(with_header(entry("F32", "[2,2]", "[16,0]"), d16),
             Contains("reversed"));
  CHECK_THAT(with_header(entry("F32", "[2,2]", "[-8,8]"), d16),
             Contains("negative"));
  CHECK_THAT(with_header(entry("F32", "[2,2]", "[0]"), d16),
             Contains("data_offsets"));
  CHECK_THAT(with_header(entry("F32", "[3]", "[0,16]"), d16),
             Contains("12 bytes") && Contains("span 16"));
  CHECK_THAT(with_header(entry("F64", "[2,2]", "[0,16]"), d16),
             Contains("32 bytes"));
  for (const char* dt : {"U8",
                         "I8",
                         "I16",
                         "U16",
                         "U32",
                         "U64",
                         "F8_E4M3",
                         "F8_E5M2",
                         "f32",
                         ""}) {
    INFO(dt);
    CHECK_THAT(with_header(entry(dt, "[16]", "[0,16]"), d16),
               Contains("tensor 't'") && Contains("dtype"));
  }
  CHECK_THAT(
      with_header(entry("F32", "[4294967296,4294967296,4]", "[0,16]"), d16),
      Contains("overflows"));
  CHECK_THAT(
      with_header(entry("F32", "[9223372036854775807,2]", "[0,16]"), d16),
      Contains("overflows"));
  CHECK_THAT(with_header(entry("F32", "[18446744073709551615]", "[0,16]"), d16),
             Contains("overflows"));
  CHECK_THAT(with_header(entry("I64", "[2305843009213693952]", "[0,16]"), d16),
             Contains("overflows"));  // 2^61 * 8 bytes wraps to 0 in u64
  CHECK_THAT(
      with_header(entry("F32", "[0,4611686018427387904,4]", "[0,0]"), d16),
      Contains("overflows"));  // 0 elements, but an absurd axis
  CHECK_THAT(with_header(R"({"__metadata__":{"step":3}})", ""),
             Contains("__metadata__") && Contains("'step'"));
  CHECK_THAT(with_header(R"({"__metadata__":[]})", ""),
             Contains("__metadata__"));
}

TEST_CASE("safetensors survives random mutations of a valid file",
          "[checkpoint][fuzz]") {
  TempDir tmp;
  std::string path = tmp / "fuzz.safetensors";
  SafetensorsFile f = sample();
  f.tensors.emplace_back("i", Tensor::from_doubles({2}, {1, 2}, DType::I64));
  f.tensors.emplace_back("s", Tensor::scalar(3, DType::BF16));
  f.metadata["step"] = "5";
  write_safetensors(path, f);
  const std::string valid = read_bytes(path);
  uint64_t hlen = 0;
  for (int i = 7; i >= 0; --i) hlen = (hlen << 8) | uint8_t(valid[i]);

  std::mt19937_64 rng(20240607);
  const std::string interesting = "{}[]\",:-0123456789eE. \\ntfu";
  int ok = 0, rejected = 0;
  for (int iter = 0; iter < 2000; ++iter) {
    std::string b = valid;
    int edits = 1 + int(rng() % 4);
    for (int k = 0; k < edits && !b.empty(); ++k) {
      // A position in what is left of the header (or anywhere, when the
      // header is gone).
      auto in_header = [&]() -> size_t {
        if (b.size() <= 8) return rng() % b.size();
        return 8 + rng() % std::min<uint64_t>(hlen, b.size() - 8);
      };
      switch (rng() % 6) {
        case 0:  // any byte anywhere
          b[rng() % b.size()] = char(rng() & 0xff);
          break;
        case 1:  // a JSON-ish character in the header
          b[in_header()] = interesting[rng() % interesting.size()];
          break;
        case 2:  // a byte of the header length
          b[rng() % std::min<size_t>(8, b.size())] = char(rng() & 0xff);
          break;
        case 3:  // truncate
          b.resize(rng() % (b.size() + 1));
          break;
        case 4:  // delete a byte of the header
          b.erase(in_header(), 1);
          break;
        case 5:  // insert a digit into the header (bigger numbers)
          b.insert(b.begin() + static_cast<std::ptrdiff_t>(in_header()),
                   char('0' + rng() % 10));
          break;
      }
    }
    write_bytes(path, b);
    try {
      SafetensorsFile g = read_safetensors(path);
      for (const auto& [n, t] : g.tensors) CHECK(t.nbytes() <= b.size());
      ++ok;
    } catch (const SafetensorsError&) {
      ++rejected;
    } catch (const std::exception& e) {
      FAIL("iteration " << iter << ": not a SafetensorsError: " << e.what());
    }
  }
  CHECK(ok + rejected == 2000);
  CHECK(rejected > 500);
  CHECK(ok > 10);
}

// ---- checkpoints through the interpreter ----

namespace {

const char* kModels = R"(devices cpu

dim D = 4
dim H = 3

model Lin:
    w: [D H] = normal(std=1.0)
    b: [H] = zeros()
    buffer count: [H] = ones()

model Wide:
    w: [D 5] = normal(std=1.0)
    b: [H] = zeros()
    buffer count: [H] = ones()

model More:
    w: [D H] = normal(std=1.0)
    b: [H] = zeros()
    buffer count: [H] = ones()
    c: [H] = zeros()

model Less:
    w: [D H] = normal(std=1.0)

model Ints:
    w: [D H] = normal(std=1.0)
    b: [H] = zeros()
    buffer count: [H] i32 = ones()

model Half:
    w: [D H] bf16 = normal(std=1.0)
    b: [H] f64 = zeros()
    buffer count: [H] = ones()

model Net:
    inner: Lin
    g: [H] = ones()

fn main():
    let m = Lin.init(seed=0)
)";

struct Env {
  std::unique_ptr<testing::Checked> checked = testing::check_text(kModels);
  std::ostringstream out;
  std::unique_ptr<eval::Interpreter> in;
  Env() {
    INFO(checked->rendered());
    REQUIRE(checked->prog);
    REQUIRE(checked->diags.list().empty());
    in = std::make_unique<eval::Interpreter>(*checked->prog, checked->sm, out);
  }
  types::Type type(const std::string& name) const {
    types::Type t = types::Type::of(types::Type::Kind::Model);
    t.model = checked->prog->model(name);
    REQUIRE(t.model);
    return t;
  }
  eval::Value model(const std::string& name, uint64_t seed) {
    return in->init_model(type(name), seed, {});
  }
  eval::Value call(const std::string& name, std::vector<eval::Value> args) {
    return in->call_builtin_values(name, std::move(args), {});
  }
  // The RuntimeError a call raises, as "Kind: message" (empty when none).
  std::string error(const std::string& name, std::vector<eval::Value> args) {
    try {
      call(name, std::move(args));
    } catch (const eval::RuntimeError& e) {
      return e.kind() + ": " + e.message();
    }
    return "";
  }
};

eval::Value str(const std::string& s) {
  return eval::Value::string(s);
}

std::shared_ptr<eval::OptimState> adamw_state(const eval::Value& m) {
  auto* ref = m.as<eval::ModelRef>();
  auto o = std::make_shared<eval::OptimState>();
  o->kind = types::OptimKind::AdamW;
  o->model = ref->store;
  o->lr = 3e-4;
  o->beta1 = 0.8;
  o->beta2 = 0.95;
  o->eps = 1e-6;
  o->weight_decay = 0.05;
  o->step = 7;
  double k = 1;
  for (const std::string& p : ref->paths(true)) {
    Tensor t = ref->get(p);
    o->state[p]["exp_avg"] = Tensor::full(t.shape(), 0.1 * k, t.dtype());
    o->state[p]["exp_avg_sq"] = Tensor::full(t.shape(), 0.01 * k, t.dtype());
    k += 1;
  }
  return o;
}

bool same_model(const eval::Value& a, const eval::Value& b) {
  auto* x = a.as<eval::ModelRef>();
  auto* y = b.as<eval::ModelRef>();
  if (x->paths(false) != y->paths(false)) return false;
  for (const std::string& p : x->paths(false))
    if (!same_bytes(x->get(p), y->get(p))) return false;
  return true;
}

}  // namespace

TEST_CASE("checkpoint: save and load a model with adamw state",
          "[checkpoint]") {
  TempDir tmp;
  Env env;
  std::string path = tmp / "lin.safetensors";
  eval::Value m = env.model("Lin", 3);
  auto o = adamw_state(m);
  env.call("save",
           {str(path), m, eval::Value::object(eval::Value::Kind::Optim, o)});
  CHECK(leftovers(tmp.dir).empty());

  SafetensorsFile f = read_safetensors(path);
  CHECK(f.metadata.at("format") == "shapescript");
  CHECK(f.metadata.at("model") == "Lin");
  CHECK(f.metadata.at("optimizer") == "adamw");
  CHECK(f.metadata.at("step") == "7");
  CHECK(f.metadata.at("lr") == "0.0003");
  CHECK(f.metadata.at("betas") == "[0.8, 0.95]");
  CHECK(f.metadata.at("eps") == "1e-06");
  CHECK(f.metadata.at("weight_decay") == "0.05");
  std::vector<std::string> names;
  for (const auto& [n, t] : f.tensors) names.push_back(n);
  CHECK(names == std::vector<std::string>{"w",
                                          "b",
                                          "count",
                                          "opt.exp_avg.w",
                                          "opt.exp_avg.b",
                                          "opt.exp_avg_sq.w",
                                          "opt.exp_avg_sq.b"});

  SECTION("load(path, Lin, adamw)") {
    eval::Value r = env.call("load",
                             {str(path),
                              eval::Value::type_value(env.type("Lin")),
                              eval::Value::fn("adamw")});
    REQUIRE(r.kind == eval::Value::Kind::Tuple);
    const eval::Value& m2 = (*r.items)[0];
    const eval::Value& o2v = (*r.items)[1];
    REQUIRE(m2.kind == eval::Value::Kind::Model);
    REQUIRE(o2v.kind == eval::Value::Kind::Optim);
    CHECK(same_model(m, m2));
    CHECK(m2.as<eval::ModelRef>()->store->is_buffer.at("count"));
    auto* o2 = o2v.as<eval::OptimState>();
    CHECK(o2->model == m2.as<eval::ModelRef>()->store);
    CHECK(o2->kind == types::OptimKind::AdamW);
    CHECK(o2->step == 7);
    CHECK(o2->lr == o->lr);
    CHECK(o2->beta1 == o->beta1);
    CHECK(o2->beta2 == o->beta2);
    CHECK(o2->eps == o->eps);
    CHECK(o2->weight_decay == o->weight_decay);
    REQUIRE(o2->state.size() == 2);
    for (const char* p : {"w", "b"})
      for (const char* s : {"exp_avg", "exp_avg_sq"})
        CHECK(same_bytes(o2->state.at(p).at(s), o->state.at(p).at(s)));
    CHECK(!o2->state.count("count"));  // buffers have no optimizer state
  }
  SECTION("load(path, Lin) ignores the optimizer state") {
    eval::Value m2 =
        env.call("load", {str(path), eval::Value::type_value(env.type("Lin"))});
    REQUIRE(m2.kind == eval::Value::Kind::Model);
    CHECK(same_model(m, m2));
  }
  SECTION("load_into replaces the tensors in place") {
    eval::Value m2 = env.model("Lin", 99);
    CHECK(!same_model(m, m2));
    env.call("load_into", {m2, str(path)});
    CHECK(same_model(m, m2));
  }
  SECTION("the wrong optimizer") {
    CHECK_THAT(
        env.error("load",
                  {str(path),
                   eval::Value::type_value(env.type("Lin")),
                   eval::Value::fn("sgd")}),
        Contains("ValueError") && Contains("holds adamw state, not sgd"));
  }
}

TEST_CASE("checkpoint: sgd state, sub-models and files without optimizer",
          "[checkpoint]") {
  TempDir tmp;
  Env env;
  std::string path = tmp / "net.safetensors";
  eval::Value m = env.model("Net", 1);
  auto* ref = m.as<eval::ModelRef>();
  auto o = std::make_shared<eval::OptimState>();
  o->kind = types::OptimKind::SGD;
  o->model = ref->store;
  o->lr = 0.1;
  o->momentum = 0.9;
  o->nesterov = true;
  o->weight_decay = 1e-4;
  o->step = 2;
  o->state["inner.w"]["momentum_buffer"] =
      Tensor::full({4, 3}, 0.5, DType::F32);
  env.call("save",
           {str(path), m, eval::Value::object(eval::Value::Kind::Optim, o)});
  SafetensorsFile f = read_safetensors(path);
  CHECK(find(f, "inner.w"));
  CHECK(find(f, "inner.count"));
  CHECK(find(f, "opt.momentum_buffer.inner.w"));
  CHECK(f.metadata.at("nesterov") == "true");
  CHECK(f.metadata.at("momentum") == "0.9");

  eval::Value r = env.call("load",
                           {str(path),
                            eval::Value::type_value(env.type("Net")),
                            eval::Value::fn("sgd")});
  auto* o2 = (*r.items)[1].as<eval::OptimState>();
  CHECK(same_model(m, (*r.items)[0]));
  CHECK(o2->kind == types::OptimKind::SGD);
  CHECK(o2->momentum == 0.9);
  CHECK(o2->nesterov);
  CHECK(o2->weight_decay == 1e-4);
  CHECK(o2->lr == 0.1);
  CHECK(o2->step == 2);
  REQUIRE(o2->state.size() == 1);
  CHECK(same_bytes(o2->state.at("inner.w").at("momentum_buffer"),
                   o->state.at("inner.w").at("momentum_buffer")));

  // A sub-model handle saves paths relative to it, and loads as its type.
  auto inner = std::make_shared<eval::ModelRef>(*ref);
  inner->prefix = "inner.";
  inner->type = env.type("Lin");
  eval::Value iv = eval::Value::object(eval::Value::Kind::Model, inner);
  std::string ipath = tmp / "inner.safetensors";
  env.call("save", {str(ipath), iv});
  SafetensorsFile g = read_safetensors(ipath);
  REQUIRE(g.tensors.size() == 3);
  CHECK(g.tensors[0].first == "w");
  CHECK(g.metadata.at("model") == "Lin");
  CHECK(!g.metadata.count("optimizer"));
  eval::Value lin =
      env.call("load", {str(ipath), eval::Value::type_value(env.type("Lin"))});
  CHECK(same_model(iv, lin));
  CHECK_THAT(env.error("load",
                       {str(ipath),
                        eval::Value::type_value(env.type("Lin")),
                        eval::Value::fn("adamw")}),
             Contains("ValueError") && Contains("has no optimizer state"));
  // load_into a sub-model handle writes through to the parent's store.
  eval::Value other = env.model("Lin", 42);
  env.call("save", {str(ipath), other});
  env.call("load_into", {iv, str(ipath)});
  CHECK(same_model(iv, other));
  CHECK(same_bytes(ref->get("inner.w"), other.as<eval::ModelRef>()->get("w")));
}

TEST_CASE("checkpoint: every tensor is checked against the model type",
          "[checkpoint]") {
  TempDir tmp;
  Env env;
  std::string path = tmp / "lin.safetensors";
  eval::Value m = env.model("Lin", 3);
  env.call("save", {str(path), m});
  auto load_as = [&](const std::string& type) {
    return env.error("load",
                     {str(path), eval::Value::type_value(env.type(type))});
  };
  CHECK_THAT(load_as("Wide"),
             Contains("ShapeError") && Contains("`w` is [4 3] f32") &&
                 Contains("Wide.w is [4 5] f32"));
  CHECK_THAT(load_as("More"),
             Contains("ShapeError") &&
                 Contains("has no tensor `c` (More.c: [3] f32)"));
  CHECK_THAT(load_as("Less"),
             Contains("ValueError") && Contains("`b`, `count`") &&
                 Contains("Less has no field for"));
  CHECK_THAT(load_as("Ints"),
             Contains("ShapeError") && Contains("`count` is [3] f32") &&
                 Contains("i32") && Contains("only float dtypes"));
  // Float dtypes convert to the model's.
  eval::Value h =
      env.call("load", {str(path), eval::Value::type_value(env.type("Half"))});
  auto* hr = h.as<eval::ModelRef>();
  CHECK(hr->get("w").dtype() == DType::BF16);
  CHECK(hr->get("b").dtype() == DType::F64);
  CHECK(hr->get("b").to_doubles() ==
        m.as<eval::ModelRef>()->get("b").to_doubles());

  SECTION("a failed load_into leaves the model as it was") {
    eval::Value w = env.model("Wide", 5);
    eval::Value before = env.call("copy", {w});
    // b and count fit Wide, w does not: nothing may be replaced.
    CHECK_THAT(env.error("load_into", {w, str(path)}), Contains("ShapeError"));
    CHECK(same_model(w, before));
  }
  SECTION("optimizer state of the wrong shape") {
    SafetensorsFile f = read_safetensors(path);
    f.metadata["optimizer"] = "adamw";
    f.metadata["step"] = "1";
    f.tensors.emplace_back("opt.exp_avg.w", Tensor::zeros({4, 2}, DType::F32));
    f.tensors.emplace_back("opt.exp_avg_sq.w",
                           Tensor::zeros({4, 2}, DType::F32));
    write_safetensors(path, f);
    CHECK_THAT(env.error("load",
                         {str(path),
                          eval::Value::type_value(env.type("Lin")),
                          eval::Value::fn("adamw")}),
               Contains("ShapeError") && Contains("opt.exp_avg.w") &&
                   Contains("[4 2]") && Contains("[4 3]"));
  }
  SECTION("unknown optimizer state and half of adamw's pair") {
    SafetensorsFile f = read_safetensors(path);
    f.metadata["optimizer"] = "adamw";
    f.tensors.emplace_back("opt.exp_avg.w", Tensor::zeros({4, 3}, DType::F32));
    write_safetensors(path, f);
    CHECK_THAT(
        env.error("load",
                  {str(path),
                   eval::Value::type_value(env.type("Lin")),
                   eval::Value::fn("adamw")}),
        Contains("ValueError") && Contains("exp_avg but not exp_avg_sq"));
    f.tensors.emplace_back("opt.exp_avg_sq.w",
                           Tensor::zeros({4, 3}, DType::F32));
    f.tensors.emplace_back("opt.exp_avg.nope",
                           Tensor::zeros({4, 3}, DType::F32));
    write_safetensors(path, f);
    CHECK_THAT(env.error("load",
                         {str(path),
                          eval::Value::type_value(env.type("Lin")),
                          eval::Value::fn("adamw")}),
               Contains("ValueError") && Contains("`opt.exp_avg.nope`"));
  }
  SECTION("bad metadata") {
    SafetensorsFile f = read_safetensors(path);
    f.metadata["optimizer"] = "adamw";
    f.metadata["lr"] = "fast";
    write_safetensors(path, f);
    CHECK_THAT(
        env.error("load",
                  {str(path),
                   eval::Value::type_value(env.type("Lin")),
                   eval::Value::fn("adamw")}),
        Contains("ValueError") && Contains("lr is not a number: 'fast'"));
  }
  SECTION("a torch-style file with matching names loads") {
    SafetensorsFile f;
    f.tensors.emplace_back("count", Tensor::full({3}, 2.0, DType::F32));
    f.tensors.emplace_back("b", Tensor::full({3}, 0.5, DType::F64));
    f.tensors.emplace_back("w", Tensor::full({4, 3}, 1.0, DType::F16));
    f.metadata["format"] = "pt";
    write_safetensors(path, f);
    eval::Value l =
        env.call("load", {str(path), eval::Value::type_value(env.type("Lin"))});
    auto* lr = l.as<eval::ModelRef>();
    CHECK(lr->get("w").dtype() == DType::F32);
    CHECK(lr->get("w").to_doubles() == std::vector<double>(12, 1.0));
    CHECK(lr->get("b").to_doubles() == std::vector<double>(3, 0.5));
  }
}

TEST_CASE("checkpoint: IO failures are IOErrors", "[checkpoint]") {
  TempDir tmp;
  Env env;
  eval::Value lin = eval::Value::type_value(env.type("Lin"));
  CHECK_THAT(env.error("load", {str(tmp / "nope.safetensors"), lin}),
             Contains("IOError") && Contains("cannot open") &&
                 Contains("nope.safetensors"));
  std::string path = tmp / "trunc.safetensors";
  env.call("save", {str(path), env.model("Lin", 0)});
  std::string bytes = read_bytes(path);
  write_bytes(path, bytes.substr(0, bytes.size() - 4));
  CHECK_THAT(env.error("load", {str(path), lin}),
             Contains("IOError") && Contains("truncated"));
  eval::Value m = env.model("Lin", 0);
  CHECK_THAT(env.error("load_into", {m, str(path)}), Contains("IOError"));
  CHECK_THAT(env.error("save", {str(tmp / "no/dir/x.safetensors"), m}),
             Contains("IOError") && Contains("cannot write"));
}

// ---- whole programs through `ss run` ----

TEST_CASE("checkpoint: ss run saves and loads models and optimizers",
          "[checkpoint]") {
  TempDir tmp;
  std::string prog = tmp / "ck.ss";
  std::string a = tmp / "a.safetensors", b = tmp / "b.safetensors";
  std::string c = tmp / "c.safetensors";
  std::ofstream(prog) << R"(devices cpu

dim D = 4
dim H = 3

model Lin:
    w: [D H] = normal(std=1.0)
    b: [H] = uniform(lo=-1.0, hi=1.0)

fn main():
    let m = Lin.init(seed=1)
    let opt = sgd(m, lr=0.05, momentum=0.9, nesterov=true)
    save(")" << a << R"(", m, opt)
    let m2, opt2 = load(")"
                      << a << R"(", Lin, sgd)
    save(")" << b << R"(", m2, opt2)
    let m3 = Lin.init(seed=7)
    load_into(m3, ")" << b
                      << R"(")
    save(")" << c << R"(", m3)
    print(m3.w == m.w)
)";
  std::string cmd = std::string(SS_BINARY) + " run " + prog + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int rc = ::pclose(p);
  INFO(out);
  REQUIRE(rc == 0);
  CHECK(out.find("false") == std::string::npos);
  SafetensorsFile fa = read_safetensors(a), fb = read_safetensors(b),
                  fc = read_safetensors(c);
  CHECK(fa.metadata == fb.metadata);
  CHECK(fa.metadata.at("optimizer") == "sgd");
  CHECK(fa.metadata.at("lr") == "0.05");
  CHECK(fa.metadata.at("nesterov") == "true");
  REQUIRE(fa.tensors.size() == 2);
  REQUIRE(fb.tensors.size() == 2);
  REQUIRE(fc.tensors.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(fa.tensors[i].first == fb.tensors[i].first);
    CHECK(same_bytes(fa.tensors[i].second, fb.tensors[i].second));
    CHECK(same_bytes(fa.tensors[i].second, fc.tensors[i].second));
  }
  CHECK(!fc.metadata.count("optimizer"));

  // A load that does not fit is a ShapeError naming the field and shapes.
  std::ofstream(prog) << R"(devices cpu

dim D = 4

model Lin:
    w: [D 5] = normal(std=1.0)
    b: [3] = zeros()

fn main():
    let m = load(")" << a
                      << R"(", Lin)
    print(m.w)
)";
  p = ::popen(cmd.c_str(), "r");
  REQUIRE(p);
  out.clear();
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  rc = ::pclose(p);
  INFO(out);
  CHECK(rc != 0);
  CHECK_THAT(out,
             Contains("ShapeError") && Contains("`w` is [4 3] f32") &&
                 Contains("Lin.w is [4 5] f32"));
}
