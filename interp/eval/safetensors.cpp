// The safetensors reader and writer. nlohmann::json stays in this one TU
// (deps.md §9: it is slow to compile).
#include "interp/eval/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

namespace ss::eval {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; this build assumes a "
              "little-endian host");

namespace {

using json = nlohmann::ordered_json;  // keeps the header's order
using types::DType;

constexpr uint64_t kMaxHeader = 100ull * 1000 * 1000;  // as safetensors

struct DtypeName {
  DType dtype;
  const char* name;
};
constexpr DtypeName kDtypes[] = {
    {DType::F32, "F32"},
    {DType::F64, "F64"},
    {DType::BF16, "BF16"},
    {DType::F16, "F16"},
    {DType::I32, "I32"},
    {DType::I64, "I64"},
    {DType::Bool, "BOOL"},
};

std::optional<DType> dtype_of(const std::string& s) {
  for (const DtypeName& d : kDtypes)
    if (s == d.name) return d.dtype;
  return std::nullopt;
}

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

struct Entry {
  std::string name;
  DType dtype;
  ops::Shape shape;
  uint64_t begin, end;
};

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {}

  [[noreturn]] void bad(const std::string& problem) const {
    throw SafetensorsError(quote(path_) +
                           " is not a valid safetensors file: " + problem);
  }

  SafetensorsFile read() {
    Fd f;
    f.fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
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
    if (size < 8)
      bad("it has " + std::to_string(size) +
          " bytes, fewer than the 8 of the header length (truncated?)");
    unsigned char lenbuf[8];
    read_at(0, lenbuf, 8);
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | lenbuf[i];
    if (n > size - 8)
      bad("the header length is " + std::to_string(n) + " bytes, but only " +
          std::to_string(size - 8) + " follow it (truncated?)");
    if (n > kMaxHeader)
      bad("the header length is " + std::to_string(n) +
          " bytes, over the limit of " + std::to_string(kMaxHeader));
    if (n < 2) bad("the header is " + std::to_string(n) + " bytes, not JSON");
    std::string header(n, '\0');
    read_at(8, header.data(), n);
    data_start_ = 8 + n;
    data_size_ = size - 8 - n;

    json h;
    try {
      h = json::parse(header);
    } catch (const json::exception& e) {
      bad(std::string("the header is not JSON (") + e.what() + ")");
    }
    if (!h.is_object()) bad("the header is not a JSON object");

    std::vector<Entry> entries;
    SafetensorsFile out;
    // First validate every entry against the file's size...
    for (auto it = h.begin(); it != h.end(); ++it) {
      const std::string& name = it.key();
      const json& v = it.value();
      if (name == "__metadata__") {
        if (!v.is_object()) bad("__metadata__ is not a JSON object");
        for (auto m = v.begin(); m != v.end(); ++m) {
          if (!m.value().is_string())
            bad("__metadata__ entry " + quote(m.key()) + " is not a string");
          out.metadata[m.key()] = m.value().get<std::string>();
        }
        continue;
      }
      entries.push_back(check_entry(name, v));
    }
    // ...then allocate and read.
    out.tensors.reserve(entries.size());
    for (const Entry& e : entries) {
      ops::Tensor t = ops::Tensor::empty(e.shape, e.dtype);
      if (e.end > e.begin)
        read_at(data_start_ + e.begin, t.raw(), e.end - e.begin);
      out.tensors.emplace_back(e.name, std::move(t));
    }
    return out;
  }

 private:
  uint64_t integer(const json& j, const std::string& what) const {
    if (j.is_number_unsigned()) return j.get<uint64_t>();
    if (j.is_number_integer()) {
      int64_t v = j.get<int64_t>();
      if (v < 0) bad(what + " is negative (" + std::to_string(v) + ")");
      return static_cast<uint64_t>(v);
    }
    bad(what + " is not a non-negative integer (" + j.dump() + ")");
  }

  Entry check_entry(const std::string& name, const json& v) const {
    std::string t = "tensor " + quote(name);
    if (!v.is_object()) bad(t + " is not a JSON object");
    auto dt = v.find("dtype");
    auto sh = v.find("shape");
    auto of = v.find("data_offsets");
    if (dt == v.end() || !dt->is_string()) bad(t + " has no \"dtype\" string");
    if (sh == v.end() || !sh->is_array()) bad(t + " has no \"shape\" array");
    if (of == v.end() || !of->is_array() || of->size() != 2)
      bad(t + " has no \"data_offsets\" pair");
    std::string dname = dt->get<std::string>();
    std::optional<DType> dtype = dtype_of(dname);
    if (!dtype)
      bad(t + " has dtype " + dname +
          ", which ShapeScript does not read (F32 F64 BF16 F16 I32 I64 "
          "BOOL)");
    ops::Shape shape;
    // The element count, and the product of the nonzero dims (so that no
    // axis anywhere is absurdly large even when another is 0).
    uint64_t count = 1, nonzero = 1;
    for (const json& d : *sh) {
      uint64_t x = integer(d, t + "'s shape entry");
      if (x > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
          __builtin_mul_overflow(nonzero, x == 0 ? 1 : x, &nonzero) ||
          nonzero > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        bad(t + "'s shape " + sh->dump() + " overflows");
      count *= x;
      shape.push_back(static_cast<int64_t>(x));
    }
    uint64_t bytes = 0;
    if (__builtin_mul_overflow(
            count, uint64_t(types::dtype_size(*dtype)), &bytes))
      bad(t + "'s shape " + sh->dump() + " overflows");
    uint64_t b = integer((*of)[0], t + "'s data_offsets[0]");
    uint64_t e = integer((*of)[1], t + "'s data_offsets[1]");
    if (b > e) bad(t + "'s data_offsets " + of->dump() + " are reversed");
    if (e > data_size_)
      bad(t + "'s data_offsets " + of->dump() + " run past the data (" +
          std::to_string(data_size_) + " bytes; truncated?)");
    if (e - b != bytes)
      bad(t + " is " + dname + " " + sh->dump() + ", " + std::to_string(bytes) +
          " bytes, but its data_offsets " + of->dump() + " span " +
          std::to_string(e - b));
    return Entry{name, *dtype, std::move(shape), b, e};
  }

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
  uint64_t data_start_ = 0, data_size_ = 0;
};

// ---- writing ----

void write_all(int fd, const void* src, size_t n, const std::string& tmp) {
  const char* p = static_cast<const char*>(src);
  while (n > 0) {
    ssize_t w = ::write(fd, p, std::min<size_t>(n, 1u << 30));
    if (w < 0) {
      if (errno == EINTR) continue;
      throw SafetensorsError("cannot write " + quote(tmp) + ": " +
                             std::strerror(errno));
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
}

}  // namespace

const char* safetensors_dtype_name(DType d) {
  for (const DtypeName& x : kDtypes)
    if (x.dtype == d) return x.name;
  return "?";
}

SafetensorsFile read_safetensors(const std::string& path) {
  return Reader(path).read();
}

void write_safetensors(const std::string& path, const SafetensorsFile& file) {
  auto fail = [&](const std::string& problem) {
    throw SafetensorsError("cannot write " + quote(path) + ": " + problem);
  };
  // The header (everything is checked before the temporary exists).
  json h = json::object();
  if (!file.metadata.empty()) {
    json m = json::object();
    for (const auto& [k, v] : file.metadata) m[k] = v;
    h["__metadata__"] = std::move(m);
  }
  std::set<std::string> seen;
  uint64_t offset = 0;
  for (const auto& [name, t] : file.tensors) {
    if (name == "__metadata__") fail("a tensor cannot be named __metadata__");
    if (!seen.insert(name).second) fail("two tensors named " + quote(name));
    if (!t.defined()) fail("tensor " + quote(name) + " has no data");
    if (t.device().kind != ops::Device::Kind::Cpu)
      fail("tensor " + quote(name) + " is on " + t.device().str() +
           " (copy it to the CPU first)");
    uint64_t n = t.nbytes();
    json e = json::object();
    e["dtype"] = safetensors_dtype_name(t.dtype());
    e["shape"] = t.shape();
    e["data_offsets"] = {offset, offset + n};
    h[name] = std::move(e);
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

  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  Fd f;
  f.fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (f.fd < 0) fail(std::strerror(errno));
  try {
    write_all(f.fd, len, 8, tmp);
    write_all(f.fd, header.data(), header.size(), tmp);
    for (const auto& [name, t] : file.tensors)
      write_all(f.fd, t.raw(), t.nbytes(), tmp);
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

}  // namespace ss::eval
