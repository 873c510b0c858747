#pragma once
// The loaders' internals, shared by loaders*.cpp (one format each): byte
// readers, the IOError helper, gunzip and a field's name in the file. Not
// included outside interp/eval/lib/.

#include <cstdint>
#include <map>
#include <string>

#include "interp/eval/lib/dataset.h"

namespace ss::eval::detail {

[[noreturn]] void io_error(const std::string& name, const std::string& what);

inline uint16_t le16(const uint8_t* p) {
  return p[0] | (p[1] << 8);
}
inline uint32_t le32(const uint8_t* p) {
  return p[0] | (p[1] << 8) | (p[2] << 16) |
         (static_cast<uint32_t>(p[3]) << 24);
}
inline uint64_t le64(const uint8_t* p) {
  return le32(p) | (static_cast<uint64_t>(le32(p + 4)) << 32);
}
inline uint32_t be32(const uint8_t* p) {
  return (static_cast<uint32_t>(p[0]) << 24) | (p[1] << 16) | (p[2] << 8) |
         p[3];
}

// n * size, or false on overflow.
inline bool mul_ok(uint64_t a, uint64_t b, uint64_t& out) {
  return !__builtin_mul_overflow(a, b, &out);
}

// A gzip file's bytes inflated (loaders_zip.cpp); MNIST's .gz files.
std::string gunzip(const std::string& gz, const std::string& name);

inline bool ends_with(const std::string& s, const std::string& suf) {
  return s.size() >= suf.size() &&
         s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

inline const std::string& file_name_of(
    const types::FieldInfo& f,
    const std::map<std::string, std::string>& renames) {
  auto it = renames.find(f.name);
  return it == renames.end() ? f.name : it->second;
}

}  // namespace ss::eval::detail
