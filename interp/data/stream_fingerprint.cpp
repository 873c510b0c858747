// A streamed dataset's fingerprint (stream_fingerprint.h).
#include "interp/data/stream_fingerprint.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <vector>

namespace ss::data {

namespace {

namespace fs = std::filesystem;

constexpr size_t kHead = 64 * 1024;

// "SIZE:DIGEST" of one file: FNV-1a over its first kHead bytes.
std::string file_print(const fs::path& p) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(p, ec);
  if (ec) return "";
  std::ifstream in(p, std::ios::binary);
  if (!in) return "";
  std::vector<char> head(std::min<uintmax_t>(size, kHead));
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  uint64_t h = 1469598103934665603ull;
  for (char c : head) {
    h ^= static_cast<uint8_t>(c);
    h *= 1099511628211ull;
  }
  char digest[17];
  std::snprintf(
      digest, sizeof digest, "%016llx", static_cast<unsigned long long>(h));
  return std::to_string(size) + ":" + digest;
}

}  // namespace

std::string stream_fingerprint(const std::string& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return file_print(path);
  if (!fs::is_directory(path, ec)) return "";
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(path, ec))
    if (e.path().extension() == ".npy")
      names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  std::string out = "dir";
  for (const std::string& n : names)
    out += ";" + n + "=" + file_print(fs::path(path) / n);
  return out;
}

std::string fingerprint_difference(const std::string& here,
                                   const std::string& theirs) {
  if (here == theirs) return "";
  if (here.empty()) return "it is not there";
  auto size = [](const std::string& f) { return f.substr(0, f.find(':')); };
  if (here.rfind("dir", 0) != 0 && theirs.rfind("dir", 0) != 0 &&
      size(here) != size(theirs))
    return "it is " + size(here) + " bytes there and " + size(theirs) +
           " on the controller's host";
  return "its contents differ from the controller's (sizes and first "
         "64 KiB of each file)";
}

}  // namespace ss::data
