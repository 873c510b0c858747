// The safetensors reader and writer. The header is read by
// safetensors_header.cpp; nlohmann::json, only for writing one, stays in
// this one TU (deps.md §9: it is slow to compile).
#include "interp/data/safetensors.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "interp/data/fatal_signal_unlink.h"

namespace ss::data {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; this build assumes a "
              "little-endian host");

namespace {

using json = nlohmann::ordered_json;  // keeps the header's order
using types::DType;

std::string quote(const std::string& s) {
  return "'" + s + "'";
}

// Closes a descriptor on every path out.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  int release() {
    int f = fd;
    fd = -1;
    return f;
  }
};

// ---- reading ----

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {}

  [[noreturn]] void bad(const std::string& problem) const {
    throw SafetensorsError(quote(path_) +
                           " is not a valid safetensors file: " + problem);
  }

  SafetensorsFile read() {
    Fd f;
    // O_NONBLOCK: a FIFO named like a checkpoint must not block the open
    // (it is refused below as not a regular file).
    f.fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (f.fd < 0)
      throw SafetensorsError("cannot open " + quote(path_) + ": " +
                             std::strerror(errno));
    struct stat st {};
    if (::fstat(f.fd, &st) != 0)
      throw SafetensorsError("cannot read " + quote(path_) + ": " +
                             std::strerror(errno));
    if (!S_ISREG(st.st_mode))
      throw SafetensorsError("cannot read " + quote(path_) +
                             ": not a regular file");
    fd_ = f.fd;
    uint64_t size = static_cast<uint64_t>(st.st_size);
    SafetensorsHeader h = read_safetensors_header(
        path_, size, [this](uint64_t at, void* dst, uint64_t n) {
          read_at(at, dst, n);
        });
    SafetensorsFile out;
    out.metadata = std::move(h.metadata);
    // Every entry was checked against the file's size: allocate and read.
    out.tensors.reserve(h.entries.size());
    for (const SafetensorsEntry& e : h.entries) {
      ops::Tensor t = ops::Tensor::empty(e.shape, e.dtype);
      if (e.end > e.begin)
        read_at(h.data_start + e.begin, t.raw(), e.end - e.begin);
      out.tensors.emplace_back(e.name, std::move(t));
    }
    return out;
  }

 private:
  void read_at(uint64_t off, void* dst, uint64_t n) const {
    auto* p = static_cast<char*>(dst);
    while (n > 0) {
      size_t chunk = static_cast<size_t>(std::min<uint64_t>(n, 1u << 30));
      ssize_t r = ::pread(fd_, p, chunk, static_cast<off_t>(off));
      if (r < 0) {
        if (errno == EINTR) continue;
        throw SafetensorsError("cannot read " + quote(path_) + ": " +
                               std::strerror(errno));
      }
      if (r == 0) bad("it ended early (changed while being read?)");
      p += r;
      off += static_cast<uint64_t>(r);
      n -= static_cast<uint64_t>(r);
    }
  }

  std::string path_;
  int fd_ = -1;
};

// ---- writing ----

// The temporaries' names for [path] start `<path>.tmp.` and go on with
// `<pid>.XXXXXX`. A file name near the system's limit (255 bytes) leaves
// no room for that (a legal 252-byte name failed with "File name too
// long": issue 32, item 12), so a long one is cut to 200 bytes and told
// apart by a hash of it whole (FNV-1a, the same in every build, so that
// the sweep below finds a dead writer's temporaries by the same stem).
std::string temporary_stem(const std::string& path) {
  namespace fs = std::filesystem;
  const std::string name = fs::path(path).filename().string();
  constexpr size_t kRoom = 255 - (sizeof(".tmp.") - 1) - 10 - 7;
  std::string head = name;
  if (name.size() > kRoom) {
    uint64_t h = 14695981039346656037ull;
    for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
    char hex[17];
    std::snprintf(
        hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    head = name.substr(0, 200) + "." + hex;
  }
  fs::path target(path);
  return (target.has_parent_path() ? target.parent_path() / head
                                   : fs::path(head))
             .string() +
         ".tmp.";
}

// Note [Dead writers' temporaries]: a save killed between writing its
// temporary and renaming it leaves `<stem><pid>.XXXXXX` (up to the
// model's size; temporary_stem). The next save to [path] removes those
// whose pid is gone (regular files of ours only).
void sweep_dead_temporaries(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path target(path);
  fs::path dir = target.has_parent_path() ? target.parent_path() : ".";
  std::string stem = fs::path(temporary_stem(path)).filename().string();
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec);
       !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.rfind(stem, 0) != 0) continue;
    char* end = nullptr;
    long pid = std::strtol(name.c_str() + stem.size(), &end, 10);
    if (pid <= 0 || *end != '.' || pid == ::getpid()) continue;
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_uid != ::getuid())
      continue;
    if (::kill(static_cast<pid_t>(pid), 0) == -1 && errno == ESRCH)
      ::unlink(it->path().c_str());
  }
}

// Writes [n] bytes of the temporary of [path]; a failure names [path],
// the file the user asked for (issue 32, item 13), not the temporary.
void write_all(int fd, const void* src, size_t n, const std::string& path) {
  const char* p = static_cast<const char*>(src);
  while (n > 0) {
    ssize_t w = ::write(fd, p, std::min<size_t>(n, 1u << 30));
    if (w < 0) {
      if (errno == EINTR) continue;
      throw SafetensorsError("cannot write " + quote(path) + ": " +
                             std::strerror(errno));
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
}

}  // namespace

SafetensorsFile read_safetensors(const std::string& path) {
  return Reader(path).read();
}

namespace {

// Throws unless tensor [name] of a file at [path] has bytes on the CPU.
void check_writable(const std::string& path,
                    const std::string& name,
                    const ops::Tensor& t) {
  auto fail = [&](const std::string& problem) {
    throw SafetensorsError("cannot write " + quote(path) + ": tensor " +
                           quote(name) + problem);
  };
  if (!t.defined()) fail(" has no data");
}

}  // namespace

void write_safetensors(const std::string& path, const SafetensorsFile& file) {
  std::vector<SafetensorsPiece> pieces;
  pieces.reserve(file.tensors.size());
  for (const auto& [name, t] : file.tensors) {
    // Checked here, before the temporary exists, as pieces are not.
    check_writable(path, name, t);
    pieces.push_back({name, t.dtype(), t.shape(), [&t] { return t; }});
  }
  write_safetensors_streamed(path, file.metadata, pieces);
}

// Note [A streamed file's pieces]: the header is written from the pieces'
// entries before any data is asked for, so each piece's tensor is checked
// against its entry as it comes (a fetch that answered another shape
// would leave the header lying), and dropped once its bytes are written.
void write_safetensors_streamed(
    const std::string& path,
    const std::map<std::string, std::string>& metadata,
    const std::vector<SafetensorsPiece>& pieces) {
  auto fail = [&](const std::string& problem) {
    throw SafetensorsError("cannot write " + quote(path) + ": " + problem);
  };
  // The header (every entry is checked before the temporary exists).
  json h = json::object();
  if (!metadata.empty()) {
    json m = json::object();
    for (const auto& [k, v] : metadata) m[k] = v;
    h["__metadata__"] = std::move(m);
  }
  std::set<std::string> seen;
  uint64_t offset = 0;
  for (const SafetensorsPiece& p : pieces) {
    if (p.name == "__metadata__") fail("a tensor cannot be named __metadata__");
    if (!seen.insert(p.name).second) fail("two tensors named " + quote(p.name));
    uint64_t n = static_cast<uint64_t>(ops::numel_of(p.shape)) *
                 types::dtype_size(p.dtype);
    json e = json::object();
    e["dtype"] = safetensors_dtype_name(p.dtype);
    e["shape"] = p.shape;
    e["data_offsets"] = {offset, offset + n};
    h[p.name] = std::move(e);
    offset += n;
  }
  std::string header;
  try {
    header = h.dump();
  } catch (const json::exception& e) {
    fail(std::string("the header cannot be written as JSON (") + e.what() +
         ")");
  }
  // Padded with spaces so that the data starts 8-byte aligned.
  header.append((8 - header.size() % 8) % 8, ' ');
  unsigned char len[8];
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));

  // Note [Safe replace]: only a regular file (or nothing) is replaced: a
  // device node, FIFO or directory at [path] is refused (as root,
  // `save("/dev/full", m)` replaced the device with a file), and so is a
  // symlink, which rename would replace rather than write through. The
  // temporary is made by mkstemp beside [path] (a name nobody can plant a
  // symlink at in advance; O_EXCL, never followed), then given the mode
  // a new file would get.
  struct stat target {};
  if (::lstat(path.c_str(), &target) == 0) {
    if (S_ISLNK(target.st_mode))
      fail(
          "it is a symbolic link (save writes a regular file: save to the "
          "link's target, or remove the link)");
    if (!S_ISREG(target.st_mode)) fail("it exists and is not a regular file");
  } else if (errno != ENOENT) {
    fail(std::strerror(errno));
  }
  sweep_dead_temporaries(path);
  // Note [Temporaries on a fatal signal]: made and registered as one step.
  TemporaryFile made(temporary_stem(path) + std::to_string(::getpid()) +
                     ".XXXXXX");
  const std::string& tmp = made.path();
  Fd f;
  f.fd = made.fd();
  if (f.fd < 0) fail(std::strerror(errno));
  mode_t mask = ::umask(0);
  ::umask(mask);
  try {
    // A file that exists keeps its mode (a checkpoint made private stays
    // 0600: issue 32, item 12) and, where this process may give it, its
    // owner, as editors keep them; a new one gets what a new file gets.
    const bool replacing = target.st_ino != 0;
    const mode_t mode = replacing ? target.st_mode & 0777 : 0666 & ~mask;
    if (replacing &&
        (target.st_uid != ::geteuid() || target.st_gid != ::getegid()))
      (void)::fchown(f.fd, target.st_uid, target.st_gid);  // best effort
    if (::fchmod(f.fd, mode) != 0)
      fail(std::string("chmod: ") + std::strerror(errno));
    write_all(f.fd, len, 8, path);
    write_all(f.fd, header.data(), header.size(), path);
    for (const SafetensorsPiece& p : pieces) {
      // A GPU's tensor is written from a host copy, one at a time.
      const ops::Tensor t = p.bytes().to(ops::Device{});
      check_writable(path, p.name, t);
      if (t.dtype() != p.dtype || t.shape() != p.shape)
        fail("tensor " + quote(p.name) + " came as " +
             ops::shape_string(t.shape()) + " " + types::dtype_name(t.dtype()) +
             ", not the header's " + ops::shape_string(p.shape) + " " +
             types::dtype_name(p.dtype));
      write_all(f.fd, t.raw(), t.nbytes(), path);
    }
    if (::fsync(f.fd) != 0) fail(std::string("fsync: ") + std::strerror(errno));
    if (::close(f.release()) != 0)
      fail(std::string("close: ") + std::strerror(errno));
    if (::rename(tmp.c_str(), path.c_str()) != 0)
      fail(std::string("rename: ") + std::strerror(errno));
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  // Best effort: make the rename itself durable.
  std::string dir = ".";
  if (size_t slash = path.rfind('/'); slash != std::string::npos)
    dir = slash == 0 ? "/" : path.substr(0, slash);
  int d = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (d >= 0) {
    ::fsync(d);
    ::close(d);
  }
}

}  // namespace ss::data
