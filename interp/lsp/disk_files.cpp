// The disk's files as checks read them (disk_files.h).
#include "interp/lsp/disk_files.h"

#include <sys/stat.h>

#include <chrono>

#include "diag/read_source.h"

namespace ss::lsp {

namespace {

// Note [Disk files read again when changed]: a text read this soon after
// the file's modification may be followed by another modification within
// the same tick of the file system's clock.
constexpr int64_t kRacyNs = 100'000'000;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::optional<std::string> DiskFiles::read(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    files_.erase(path);
    return diag::read_source(path);  // the one reader decides
  }
  Seen now;
  now.dev = st.st_dev;
  now.ino = st.st_ino;
  now.size = static_cast<uint64_t>(st.st_size);
  now.mtime_ns =
      int64_t(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  auto it = files_.find(path);
  if (it != files_.end() && it->second.dev == now.dev &&
      it->second.ino == now.ino && it->second.size == now.size &&
      it->second.mtime_ns == now.mtime_ns &&
      it->second.read_ns - now.mtime_ns >= kRacyNs)
    return it->second.text;
  now.read_ns = now_ns();  // before reading: a later change is after it
  std::optional<std::string> text = diag::read_source(path);
  if (!text) {
    files_.erase(path);
    return text;
  }
  now.text = *text;
  files_[path] = std::move(now);
  return text;
}

}  // namespace ss::lsp
