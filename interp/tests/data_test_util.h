#pragma once
// Shared helpers for the data pipeline tests (interp/tests/data_*_test.cpp):
// temp files, npy/npz/idx/zip writers, the test records, stores and runs.

#include <unistd.h>
#include <zlib.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "interp/builtins/output.h"
#include "interp/check/checker.h"
#include "interp/data/batches.h"
#include "interp/data/dataset.h"
#include "interp/data/safetensors.h"
#include "interp/eval/interpreter.h"

namespace data_test {

namespace fs = std::filesystem;
using namespace ss;
using namespace ss::eval;
using namespace ss::data;
using namespace ss::builtins;

inline const std::string& tmpdir() {
  static const std::string d = [] {
    auto p = fs::temp_directory_path() /
             ("ss_data_test_" + std::to_string(::getpid()));
    fs::create_directories(p);
    return p.string();
  }();
  return d;
}

inline std::string tmp(const std::string& name) {
  return tmpdir() + "/" + name;
}

inline void write_file(const std::string& path, const std::string& bytes) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream o(path, std::ios::binary | std::ios::trunc);
  o.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

template <class T>
std::string bytes_of(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()),
                     v.size() * sizeof(T));
}

inline std::string shape_tuple(const std::vector<int64_t>& s) {
  std::string out = "(";
  for (int64_t d : s) out += std::to_string(d) + ", ";
  if (s.size() > 1) out.resize(out.size() - 1);  // "(3, 4)"; "(3,)" stays
  if (s.size() > 1)
    out.back() = ')';
  else
    out += ")";
  return out;
}

inline std::string npy(const std::string& descr,
                       const std::vector<int64_t>& shape,
                       const std::string& data,
                       int version = 1,
                       const std::string& fortran = "False") {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': " + fortran +
                     ", 'shape': " + shape_tuple(shape) + ", }";
  size_t pre = version == 1 ? 10 : 12;
  size_t total = (pre + dict.size() + 1 + 63) / 64 * 64;
  dict += std::string(total - pre - dict.size() - 1, ' ') + "\n";
  std::string out = "\x93NUMPY";
  out += static_cast<char>(version);
  out += '\0';
  uint32_t n = static_cast<uint32_t>(dict.size());
  out += static_cast<char>(n & 0xFF);
  out += static_cast<char>((n >> 8) & 0xFF);
  if (version != 1) {
    out += static_cast<char>((n >> 16) & 0xFF);
    out += static_cast<char>((n >> 24) & 0xFF);
  }
  return out + dict + data;
}

inline void put16(std::string& s, uint16_t v) {
  s += static_cast<char>(v & 0xFF);
  s += static_cast<char>(v >> 8);
}
inline void put32(std::string& s, uint32_t v) {
  put16(s, v & 0xFFFF);
  put16(s, v >> 16);
}

inline std::string deflate_raw(const std::string& in) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, in.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

struct Member {
  std::string name, data;
  bool deflated;
};

// A zip archive as numpy's savez writes one (stored) or savez_compressed.
inline std::string zip(const std::vector<Member>& members) {
  std::string out, cd;
  for (const Member& m : members) {
    std::string body = m.deflated ? deflate_raw(m.data) : m.data;
    uint32_t crc = crc32(0,
                         reinterpret_cast<const Bytef*>(m.data.data()),
                         static_cast<uInt>(m.data.size()));
    uint32_t at = static_cast<uint32_t>(out.size());
    put32(out, 0x04034b50);
    put16(out, 20);
    put16(out, 0);
    put16(out, m.deflated ? 8 : 0);
    put16(out, 0);
    put16(out, 0);
    put32(out, crc);
    put32(out, static_cast<uint32_t>(body.size()));
    put32(out, static_cast<uint32_t>(m.data.size()));
    put16(out, static_cast<uint16_t>(m.name.size()));
    put16(out, 0);
    out += m.name + body;
    put32(cd, 0x02014b50);
    put16(cd, 20);
    put16(cd, 20);
    put16(cd, 0);
    put16(cd, m.deflated ? 8 : 0);
    put16(cd, 0);
    put16(cd, 0);
    put32(cd, crc);
    put32(cd, static_cast<uint32_t>(body.size()));
    put32(cd, static_cast<uint32_t>(m.data.size()));
    put16(cd, static_cast<uint16_t>(m.name.size()));
    put16(cd, 0);
    put16(cd, 0);
    put16(cd, 0);
    put16(cd, 0);
    put32(cd, 0);
    put32(cd, at);
    cd += m.name;
  }
  uint32_t cd_at = static_cast<uint32_t>(out.size());
  out += cd;
  put32(out, 0x06054b50);
  put16(out, 0);
  put16(out, 0);
  put16(out, static_cast<uint16_t>(members.size()));
  put16(out, static_cast<uint16_t>(members.size()));
  put32(out, static_cast<uint32_t>(cd.size()));
  put32(out, cd_at);
  put16(out, 0);
  return out;
}

inline std::string idx(uint8_t type,
                       const std::vector<uint32_t>& dims,
                       const std::string& data) {
  std::string out = {
      0, 0, static_cast<char>(type), static_cast<char>(dims.size())};
  for (uint32_t d : dims) {
    out += static_cast<char>(d >> 24);
    out += static_cast<char>(d >> 16);
    out += static_cast<char>(d >> 8);
    out += static_cast<char>(d);
  }
  return out + data;
}

inline const char* kRecords = R"(
dim D = 784
data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..10
data Small:
    x: [4] f32
    y: i64 in 0..10
data Seq:
    tokens: [n] i64
    y: i64
data SeqPad:
    tokens: [n] i64 pad=-1
    y: i64
fn main():
    print(1)
)";

struct Checked {
  diag::SourceMap sm;
  diag::Diagnostics diags;
  std::unique_ptr<check::Program> prog;
};

inline const Checked& records() {
  static const std::unique_ptr<Checked> c = [] {
    auto c = std::make_unique<Checked>();
    c->prog = check::check_source("records.ss", kRecords, c->sm, c->diags, {});
    if (!c->prog) FAIL(diag::render_terminal(c->diags, c->sm));
    return c;
  }();
  return *c;
}

inline const types::RecordInfo& rec(const std::string& name) {
  const types::RecordInfo* r = records().prog->record(name);
  REQUIRE(r);
  return *r;
}
inline const std::map<std::string, int64_t>& dims() {
  return records().prog->dims();
}

// "Kind: message" of the DataError [f] throws, or "" when it succeeds.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const DataError& e) {
    return e.kind + ": " + e.what();
  }
  return "";
}

inline std::shared_ptr<TensorStore> load(
    const std::string& record,
    const std::string& path,
    std::map<std::string, std::string> renames = {}) {
  return load_dataset(rec(record), dims(), path, renames);
}

// Runs a `.ss` program written to a file, as `ss run` does.
struct RunResult {
  std::string out, kind, message, rendered;
};

inline RunResult run_ss(const std::string& name, const std::string& text) {
  std::string path = tmp(name);
  write_file(path, text);
  RunResult r;
  diag::SourceMap sm;
  diag::Diagnostics diags;
  auto prog = check::check_file(path, sm, diags, {});
  if (!prog) {
    r.kind = "static";
    r.message = diag::render_terminal(diags, sm);
    return r;
  }
  std::ostringstream out;
  try {
    Interpreter in(*prog, sm, out);
    in.run_main({});
  } catch (const RuntimeError& e) {
    r.kind = e.kind();
    r.message = e.message();
    r.rendered = render_runtime_error(e, sm);
  }
  r.out = out.str();
  return r;
}

struct NullInterp {
  // Cursors ignore their interpreter; give them one for a trivial program.
  std::ostringstream out;
  Interpreter in{*records().prog, records().sm, out};
};

inline std::vector<std::shared_ptr<RecordValue>> all_batches(
    const BatchesValue& b) {
  NullInterp ni;
  std::vector<std::shared_ptr<RecordValue>> out;
  auto cur = const_cast<BatchesValue&>(b).cursor(ni.in);
  Value v;
  while (cur->next(v))
    out.push_back(std::static_pointer_cast<RecordValue>(v.obj));
  return out;
}

inline std::shared_ptr<BatchesValue> batches_of(
    std::shared_ptr<const TensorStore> s, int64_t n, int threads = 2) {
  auto b = std::make_shared<BatchesValue>();
  b->ds = DatasetValue::of(std::move(s));
  b->n = n;
  b->threads = threads;
  return b;
}

// A Small store whose item i has x = [i, i, i, i] and y = i % 10.
inline std::shared_ptr<TensorStore> small_store(int64_t n) {
  std::vector<float> x;
  std::vector<int64_t> y;
  for (int64_t i = 0; i < n; ++i) {
    for (int k = 0; k < 4; ++k) x.push_back(static_cast<float>(i));
    y.push_back(i % 10);
  }
  std::string path = tmp("small_" + std::to_string(n));
  write_file(path + "/x.npy", npy("<f4", {n, 4}, bytes_of(x)));
  write_file(path + "/y.npy", npy("<i8", {n}, bytes_of(y)));
  return load("Small", path);
}

// Mutations of [seed_bytes] given to [parse] (the loaders and streamed stores
// fuzz tests).
template <class F>
void fuzz(const std::string& seed_bytes, uint32_t seed, F&& parse) {
  std::mt19937 rng(seed);
  for (int iter = 0; iter < 1000; ++iter) {
    std::string b = seed_bytes;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !b.empty(); ++e) {
      switch (rng() % 5) {
        case 0:
          b[rng() % b.size()] ^= static_cast<char>(1 << (rng() % 8));
          break;
        case 1:
          b[rng() % b.size()] = static_cast<char>(rng());
          break;
        case 2:
          b.resize(rng() % b.size());
          break;
        case 3:
          b.insert(rng() % (b.size() + 1),
                   std::string(1 + rng() % 8, static_cast<char>(rng())));
          break;
        default: {  // a 32-bit field set to a large value
          if (b.size() < 4) break;
          size_t at = rng() % (b.size() - 3);
          uint32_t v = rng() % 2 ? 0xFFFFFFFFu : rng();
          std::memcpy(&b[at], &v, 4);
        }
      }
    }
    try {
      parse(b);
    } catch (const DataError&) {
    }
  }
}

}  // namespace data_test
