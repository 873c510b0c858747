// This process's build (build_id.h).
#include "dist/control/build_id.h"

#include <openssl/evp.h>

#include <fstream>
#include <memory>
#include <vector>

namespace ss::dist {

namespace {

// The executable's bytes decide it: the version, the compiler and its
// flags (an -march build's kernels), every library linked in statically.
// A copy of the same file at another path is the same build. About 20 ms
// for a 9 MB binary, once per process that asks (a remote worker's hello,
// the controller of a job across hosts).
std::string hash_of_executable(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "unknown";
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(),
                                                              EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1)
    return "unknown";
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (in.gcount() > 0)
      EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<size_t>(in.gcount()));
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_DigestFinal_ex(ctx.get(), md, &n) != 1) return "unknown";
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < 8 && i < n; ++i) {
    out.push_back(hex[md[i] >> 4]);
    out.push_back(hex[md[i] & 15]);
  }
  return out;
}

}  // namespace

const std::string& build_id() {
  static const std::string id = hash_of_executable("/proc/self/exe");
  return id;
}

std::string build_id_of(const std::string& path) {
  return hash_of_executable(path);
}

}  // namespace ss::dist
