#pragma once
// Shared helpers for the safetensors and checkpoint tests: temp dirs, raw
// bytes, hand-built safetensors files and a sample file.

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

#include "interp/data/safetensors.h"
#include "interp/eval/interpreter.h"
#include "interp/tests/check_test_util.h"

namespace safetensors_test {

using namespace ss;
using Catch::Matchers::Contains;
using data::read_safetensors;
using data::SafetensorsError;
using data::SafetensorsFile;
using data::write_safetensors;
using ops::Tensor;
using types::DType;

namespace fs = std::filesystem;

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

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string u64le(uint64_t n) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return s;
}

// A file as safetensors.torch.save_file lays it out: u64 length, compact
// JSON padded with spaces to a multiple of 8, then the data.
inline std::string st_file(std::string header, const std::string& data) {
  header.append((8 - header.size() % 8) % 8, ' ');
  return u64le(header.size()) + header + data;
}

template <class T>
std::string raw(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()),
                     v.size() * sizeof(T));
}

inline bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         (a.nbytes() == 0 || std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0);
}

inline const Tensor* find(const SafetensorsFile& f, const std::string& name) {
  for (const auto& [n, t] : f.tensors)
    if (n == name) return &t;
  return nullptr;
}

inline std::vector<std::string> leftovers(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".tmp.") != std::string::npos)
      out.push_back(e.path().filename().string());
  return out;
}

inline SafetensorsFile sample() {
  SafetensorsFile f;
  f.tensors.emplace_back(
      "w", Tensor::from_doubles({2, 3}, {1, -2, 3.5, 4, 5, 6}, DType::F32));
  f.tensors.emplace_back("b",
                         Tensor::from_doubles({3}, {0.5, 0, -1}, DType::F32));
  f.metadata["format"] = "shapescript";
  return f;
}

// The error [path] gives when read (empty when it reads).
inline std::string read_error(const std::string& path) {
  try {
    read_safetensors(path);
  } catch (const SafetensorsError& e) {
    return e.what();
  }
  return "";
}

}  // namespace safetensors_test
