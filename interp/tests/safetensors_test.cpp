// Safetensors files (interp/data/safetensors.h) and checkpoints (save, load,
// load_into: interp/builtins/checkpoint.cpp): round trips, the exact byte
// layout other writers produce, atomic writes, every corrupt input as a
// clear error, and mutation fuzzing.

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <fstream>
#include <iterator>
#include <string>

#include "interp/tests/safetensors_test_util.h"

using namespace ss;
using Catch::Matchers::Contains;
using data::read_safetensors;
using data::SafetensorsError;
using data::SafetensorsFile;
using data::write_safetensors;
using ops::Tensor;
using types::DType;

namespace fs = std::filesystem;

using namespace safetensors_test;

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
  SECTION("only a regular file is replaced (Note [Safe replace])") {
    std::string dirpath = tmp / "adir";
    fs::create_directory(dirpath);
    write_bytes(tmp / "adir/keep", "keep");
    CHECK_THROWS_WITH(write_safetensors(dirpath, sample()),
                      Contains("not a regular file"));
    CHECK(fs::is_directory(dirpath));
    CHECK(read_bytes(tmp / "adir/keep") == "keep");
    // A FIFO stands in for a device node (as root, /dev/full was replaced).
    std::string fifo = tmp / "pipe.safetensors";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK_THROWS_WITH(write_safetensors(fifo, sample()),
                      Contains("not a regular file"));
    CHECK(fs::is_fifo(fifo));
    fs::remove(fifo);
    // A symlink is refused, not replaced and not written through.
    std::string link = tmp / "link.safetensors";
    fs::create_symlink(path, link);
    CHECK_THROWS_WITH(write_safetensors(link, sample()),
                      Contains("symbolic link"));
    CHECK(fs::is_symlink(link));
    CHECK(read_bytes(path) == before);
    fs::remove(link);
  }
  SECTION("the temporary is new: a planted `path.tmp.<pid>` is untouched") {
    // Issue 16 item 11: the old fixed name followed a symlink planted there.
    std::string victim = tmp / "victim";
    write_bytes(victim, "victim");
    std::string planted = path + ".tmp." + std::to_string(::getpid());
    fs::create_symlink(victim, planted);
    write_safetensors(path, sample());
    CHECK(read_bytes(victim) == "victim");
    CHECK(read_safetensors(path).tensors.size() == sample().tensors.size());
    fs::remove(planted);
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
  // Two tensors over the same bytes (issue 32 item 14).
  CHECK_THAT(
      with_header(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                  R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                  d16),
      Contains("tensors 'a' and 'b' overlap") &&
          Contains("[0, 8] and [4, 12]"));
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

TEST_CASE("safetensors: hostile headers cost linear time, no recursion",
          "[checkpoint]") {
  // Issue 16 items 1-2 (Note [Hostile headers]): metadata nested 100,000
  // deep crashed the recursive JSON parser (SIGSEGV), and 80,000 metadata
  // keys took 17 s in ordered_json's linear key search.
  TempDir tmp;
  std::string path = tmp / "hostile.safetensors";
  std::string deep = R"({"__metadata__":)" + std::string(100000, '[') +
                     std::string(100000, ']') + "}";
  write_bytes(path, st_file(deep, ""));
  CHECK_THAT(read_error(path),
             Contains("not a valid safetensors file") &&
                 Contains("nesting over 64 deep"));
  // Deep inside a value the reader skips (an unknown key of an entry).
  std::string skipped =
      R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":)" +
      std::string(1000, '[') + std::string(1000, ']') + "}}";
  write_bytes(path, st_file(skipped, std::string(4, '\0')));
  CHECK_THAT(read_error(path), Contains("nesting over 64 deep"));
  // Nesting up to the bound is fine.
  std::string ok = R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[0,4],)"
                   R"("x":)" +
                   std::string(60, '[') + std::string(60, ']') + "}}";
  write_bytes(path, st_file(ok, std::string(4, '\0')));
  CHECK(read_safetensors(path).tensors.size() == 1);

  std::string many = R"({"__metadata__":{)";
  for (int i = 0; i < 80000; ++i)
    many += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":\"v\"";
  many += "}}";
  write_bytes(path, st_file(many, ""));
  SafetensorsFile f = read_safetensors(path);
  CHECK(f.metadata.size() == 80000);
  CHECK(f.metadata.at("k79999") == "v");

  // A name twice is an error, not the last one silently.
  write_bytes(path, st_file(R"({"__metadata__":{"a":"1","a":"2"}})", ""));
  CHECK_THAT(read_error(path), Contains("entry 'a' appears twice"));
  std::string t = R"("t":{"dtype":"F32","shape":[1],"data_offsets":[0,4]})";
  write_bytes(path, st_file("{" + t + "," + t + "}", std::string(4, '\0')));
  CHECK_THAT(read_error(path), Contains("tensor 't' appears twice"));
  // The header's length is bounded well below the format's 100 MB.
  uint64_t big = ss::data::kMaxHeaderBytes + 8;
  write_bytes(path, u64le(big) + "{");
  fs::resize_file(path, 8 + big);
  CHECK_THAT(read_error(path), Contains("over the limit of 16777216"));
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

TEST_CASE("safetensors: a save removes the temporaries of dead writers",
          "[checkpoint]") {
  // Issue 16 item 10 (Note [Dead writers' temporaries]): a save killed
  // before its rename left `<path>.tmp.<pid>...` behind for good.
  TempDir tmp;
  std::string path = tmp / "ck.safetensors";
  pid_t child = fork();
  if (child == 0) _exit(0);
  REQUIRE(child > 0);
  waitpid(child, nullptr, 0);  // a pid that is gone
  std::string dead = path + ".tmp." + std::to_string(child) + ".Ab12Cd";
  std::string live = path + ".tmp." + std::to_string(getppid()) + ".Ab12Cd";
  std::string other = tmp / "other.safetensors.tmp.1.Ab12Cd";
  for (const std::string& p : {dead, live, other}) write_bytes(p, "half");
  write_safetensors(path, sample());
  CHECK(!fs::exists(dead));
  CHECK(fs::exists(live));   // its writer may still rename it
  CHECK(fs::exists(other));  // another checkpoint's
  CHECK(read_safetensors(path).tensors.size() == sample().tensors.size());
}

TEST_CASE("safetensors: a save keeps the file's mode and takes long names",
          "[checkpoint]") {
  // Issue 32, items 12 and 13.
  TempDir tmp;
  SECTION("a checkpoint made private stays private") {
    std::string path = tmp / "ck.safetensors";
    write_safetensors(path, sample());
    REQUIRE(::chmod(path.c_str(), 0600) == 0);
    write_safetensors(path, sample());
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);  // the umask's 0644 before
    CHECK(read_safetensors(path).tensors.size() == sample().tensors.size());
  }
  SECTION("a legal 252-byte name is saved and replaced, nothing left") {
    // 252 + `.tmp.<pid>.XXXXXX` passed the system's 255.
    std::string path = tmp / (std::string(240, 'c') + ".safetensors");
    REQUIRE(fs::path(path).filename().string().size() == 252);
    write_safetensors(path, sample());
    write_safetensors(path, sample());
    CHECK(read_safetensors(path).tensors.size() == sample().tensors.size());
    CHECK(leftovers(tmp.dir).empty());
  }
  SECTION("a write the disk refuses names the checkpoint, not its temporary") {
    // RLIMIT_FSIZE stands in for a full disk: the write fails (EFBIG) at
    // the limit, in a child whose limit ends with it.
    // The checkpoint an earlier save made survives, byte for byte (item
    // 1: "a checkpoint's old file survives").
    std::string path = tmp / "big.safetensors";
    write_safetensors(path, sample());
    auto bytes_of = [](const std::string& p) {
      std::ifstream f(p, std::ios::binary);
      return std::string(std::istreambuf_iterator<char>(f), {});
    };
    const std::string old = bytes_of(path);
    REQUIRE(!old.empty());
    pid_t child = fork();
    if (child == 0) {
      struct rlimit lim {
        1024, 1024
      };
      ::signal(SIGXFSZ, SIG_IGN);
      if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) _exit(3);
      SafetensorsFile f;
      f.tensors.emplace_back("w", Tensor::full({4096}, 1.0, DType::F64));
      try {
        write_safetensors(path, f);
      } catch (const SafetensorsError& e) {
        const std::string what = e.what();
        const bool names_it = what.find("'" + path + "'") != std::string::npos;
        const bool names_tmp = what.find(".tmp.") != std::string::npos;
        _exit(names_it && !names_tmp ? 0 : 2);
      }
      _exit(1);  // no error at all
    }
    REQUIRE(child > 0);
    int status = 0;
    waitpid(child, &status, 0);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(bytes_of(path) == old);
    CHECK(leftovers(tmp.dir).empty());
  }
}
