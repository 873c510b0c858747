// stream_dataset: a .npy folder or a .safetensors file checked from its
// headers (a small JSON reader of its own) and then mapped (FileMapping).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include "interp/eval/lib/dataset.h"
#include "interp/eval/lib/loaders_impl.h"

namespace ss::eval {

namespace fs = std::filesystem;
using namespace detail;

FileMapping::~FileMapping() {
  if (data) ::munmap(const_cast<uint8_t*>(data), size);
}

std::shared_ptr<const FileMapping> FileMapping::map(const std::string& path,
                                                    size_t size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    io_error(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) != size) {
    ::close(fd);
    io_error(path, "the file changed while it was being opened");
  }
  auto m = std::make_shared<FileMapping>();
  m->path = path;
  if (size) {
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    int err = errno;
    ::close(fd);
    if (p == MAP_FAILED)
      io_error(path, std::string("cannot map: ") + std::strerror(err));
    m->data = static_cast<const uint8_t*>(p);
    m->size = size;
  } else {
    ::close(fd);
  }
  return m;
}

namespace {

// An open regular file's size, or an IOError.
uint64_t regular_file_size(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) io_error(path, "no such file");
    io_error(path, std::string("cannot read: ") + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) io_error(path, "is a directory, not a file");
  if (!S_ISREG(st.st_mode)) io_error(path, "not a regular file");
  return static_cast<uint64_t>(st.st_size);
}

// [n] bytes of [path] from [at] (the file holds them), or an IOError.
std::string read_range(const std::string& path, uint64_t at, size_t n) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    io_error(path, std::string("cannot open: ") + std::strerror(errno));
  std::string out(n, '\0');
  size_t got = 0;
  while (got < n) {
    ssize_t r =
        ::pread(fd, out.data() + got, n - got, static_cast<off_t>(at + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      ::close(fd);
      io_error(path,
               r == 0 ? "it ended early (changed while being read?)"
                      : std::string("read failed: ") + std::strerror(errno));
    }
    got += static_cast<size_t>(r);
  }
  ::close(fd);
  return out;
}

// ---- a small JSON reader for safetensors headers (nlohmann::json stays in
// safetensors.cpp, deps.md §9).

struct JVal {
  enum Kind { Null, Bool, Num, Str, Arr, Obj } kind = Null;
  std::string s;  // Str: the text; Num: the literal
  std::vector<JVal> arr;
  std::vector<std::pair<std::string, JVal>> obj;
};

struct JsonReader {
  const std::string& t;
  size_t i = 0;
  const std::string& name;
  [[noreturn]] void bad(const std::string& what) {
    io_error(name,
             "not a valid safetensors file: the header is not JSON (" + what +
                 " at byte " + std::to_string(i) + ")");
  }
  void ws() {
    while (i < t.size() &&
           (t[i] == ' ' || t[i] == '\n' || t[i] == '\t' || t[i] == '\r'))
      ++i;
  }
  void put_utf8(std::string& o, uint32_t c) {
    if (c < 0x80) {
      o += static_cast<char>(c);
    } else if (c < 0x800) {
      o += static_cast<char>(0xC0 | (c >> 6));
      o += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      o += static_cast<char>(0xE0 | (c >> 12));
      o += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      o += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      o += static_cast<char>(0xF0 | (c >> 18));
      o += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      o += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      o += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  uint32_t hex4() {
    if (t.size() - i < 4) bad("a short \\u escape");
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      char c = t[i++];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= c - '0';
      else if (c >= 'a' && c <= 'f')
        v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        v |= c - 'A' + 10;
      else
        bad("a bad \\u escape");
    }
    return v;
  }
  std::string str() {
    if (i >= t.size() || t[i] != '"') bad("expected a string");
    ++i;
    std::string o;
    for (;;) {
      if (i >= t.size()) bad("an unterminated string");
      char c = t[i++];
      if (c == '"') return o;
      if (static_cast<unsigned char>(c) < 0x20)
        bad("a control character in a string");
      if (c != '\\') {
        o += c;
        continue;
      }
      if (i >= t.size()) bad("an unterminated string");
      char e = t[i++];
      switch (e) {
        case '"':
          o += '"';
          break;
        case '\\':
          o += '\\';
          break;
        case '/':
          o += '/';
          break;
        case 'b':
          o += '\b';
          break;
        case 'f':
          o += '\f';
          break;
        case 'n':
          o += '\n';
          break;
        case 'r':
          o += '\r';
          break;
        case 't':
          o += '\t';
          break;
        case 'u': {
          uint32_t c1 = hex4();
          if (c1 >= 0xD800 && c1 < 0xDC00) {
            if (t.size() - i < 6 || t[i] != '\\' || t[i + 1] != 'u')
              bad("an unpaired surrogate");
            i += 2;
            uint32_t c2 = hex4();
            if (c2 < 0xDC00 || c2 >= 0xE000) bad("an unpaired surrogate");
            c1 = 0x10000 + ((c1 - 0xD800) << 10) + (c2 - 0xDC00);
          } else if (c1 >= 0xDC00 && c1 < 0xE000) {
            bad("an unpaired surrogate");
          }
          put_utf8(o, c1);
          break;
        }
        default:
          bad("a bad escape");
      }
    }
  }
  bool lit(const char* w) {
    size_t n = std::strlen(w);
    if (t.compare(i, n, w) != 0) return false;
    i += n;
    return true;
  }
  JVal value(int depth) {
    if (depth > 64) bad("nesting over 64 deep");
    ws();
    if (i >= t.size()) bad("unexpected end");
    JVal v;
    char c = t[i];
    if (c == '{') {
      v.kind = JVal::Obj;
      ++i;
      ws();
      if (i < t.size() && t[i] == '}') {
        ++i;
        return v;
      }
      for (;;) {
        ws();
        std::string k = str();
        ws();
        if (i >= t.size() || t[i] != ':') bad("expected :");
        ++i;
        v.obj.emplace_back(std::move(k), value(depth + 1));
        ws();
        if (i < t.size() && t[i] == ',') {
          ++i;
          continue;
        }
        if (i < t.size() && t[i] == '}') {
          ++i;
          return v;
        }
        bad("expected , or }");
      }
    }
    if (c == '[') {
      v.kind = JVal::Arr;
      ++i;
      ws();
      if (i < t.size() && t[i] == ']') {
        ++i;
        return v;
      }
      for (;;) {
        v.arr.push_back(value(depth + 1));
        ws();
        if (i < t.size() && t[i] == ',') {
          ++i;
          continue;
        }
        if (i < t.size() && t[i] == ']') {
          ++i;
          return v;
        }
        bad("expected , or ]");
      }
    }
    if (c == '"') {
      v.kind = JVal::Str;
      v.s = str();
      return v;
    }
    if (lit("true") || lit("false")) {
      v.kind = JVal::Bool;
      return v;
    }
    if (lit("null")) return v;
    if (c == '-' || (c >= '0' && c <= '9')) {
      size_t j = i;
      if (t[j] == '-') ++j;
      size_t d0 = j;
      while (j < t.size() && std::isdigit(static_cast<unsigned char>(t[j])))
        ++j;
      if (j == d0) bad("a bad number");
      if (j < t.size() && t[j] == '.') {
        ++j;
        size_t f0 = j;
        while (j < t.size() && std::isdigit(static_cast<unsigned char>(t[j])))
          ++j;
        if (j == f0) bad("a bad number");
      }
      if (j < t.size() && (t[j] == 'e' || t[j] == 'E')) {
        ++j;
        if (j < t.size() && (t[j] == '+' || t[j] == '-')) ++j;
        size_t e0 = j;
        while (j < t.size() && std::isdigit(static_cast<unsigned char>(t[j])))
          ++j;
        if (j == e0) bad("a bad number");
      }
      v.kind = JVal::Num;
      v.s = t.substr(i, j - i);
      i = j;
      return v;
    }
    bad("unexpected character");
  }
  JVal document() {
    JVal v = value(0);
    ws();
    if (i != t.size()) bad("text after the value");
    return v;
  }
};

// A JSON number that is a non-negative integer up to 2^63 - 1.
bool json_uint(const JVal& v, uint64_t& out) {
  if (v.kind != JVal::Num || v.s.empty() || v.s[0] == '-') return false;
  uint64_t x = 0;
  for (char c : v.s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    if (__builtin_mul_overflow(x, 10, &x) ||
        __builtin_add_overflow(x, uint64_t(c - '0'), &x))
      return false;
  }
  if (x > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return false;
  out = x;
  return true;
}

std::string json_text(const JVal& v) {
  switch (v.kind) {
    case JVal::Null:
      return "null";
    case JVal::Bool:
      return "a bool";
    case JVal::Num:
      return v.s;
    case JVal::Str:
      return "\"" + v.s + "\"";
    case JVal::Arr: {
      std::string o = "[";
      for (size_t k = 0; k < v.arr.size(); ++k)
        o += (k ? "," : "") + json_text(v.arr[k]);
      return o + "]";
    }
    case JVal::Obj:
      return "{...}";
  }
  return "?";
}

struct StEntry {
  RawType type;
  ops::Shape shape;
  uint64_t begin, end;
};

// The arrays of a safetensors file, its header checked as
// read_safetensors checks it (interp/eval/safetensors.cpp), without
// reading the data; [data_at] is where the data section starts.
std::map<std::string, StEntry> safetensors_header(const std::string& path,
                                                  uint64_t size,
                                                  uint64_t& data_at) {
  std::string q = "'" + path + "'";
  auto bad = [&](const std::string& problem) {
    throw DataError("IOError",
                    q + " is not a valid safetensors file: " + problem);
  };
  if (size < 8)
    bad("it has " + std::to_string(size) +
        " bytes, fewer than the 8 of the header length (truncated?)");
  std::string lenb = read_range(path, 0, 8);
  uint64_t n = le64(reinterpret_cast<const uint8_t*>(lenb.data()));
  if (n > size - 8)
    bad("the header length is " + std::to_string(n) + " bytes, but only " +
        std::to_string(size - 8) + " follow it (truncated?)");
  constexpr uint64_t kMaxHeader = 100ull * 1000 * 1000;
  if (n > kMaxHeader)
    bad("the header length is " + std::to_string(n) +
        " bytes, over the limit of " + std::to_string(kMaxHeader));
  if (n < 2) bad("the header is " + std::to_string(n) + " bytes, not JSON");
  std::string header = read_range(path, 8, n);
  data_at = 8 + n;
  uint64_t data_size = size - 8 - n;
  JsonReader jr{header, 0, q};
  JVal h = jr.document();
  if (h.kind != JVal::Obj) bad("the header is not a JSON object");
  static const std::pair<const char*, RawType> kTypes[] = {
      {"F32", RawType::F32},
      {"F64", RawType::F64},
      {"BF16", RawType::BF16},
      {"F16", RawType::F16},
      {"I32", RawType::I32},
      {"I64", RawType::I64},
      {"BOOL", RawType::Bool}};
  std::map<std::string, StEntry> out;
  for (const auto& [name, v] : h.obj) {
    if (name == "__metadata__") {
      if (v.kind != JVal::Obj) bad("__metadata__ is not a JSON object");
      for (const auto& [mk, mv] : v.obj)
        if (mv.kind != JVal::Str)
          bad("__metadata__ entry '" + mk + "' is not a string");
      continue;
    }
    std::string t = "tensor '" + name + "'";
    if (v.kind != JVal::Obj) bad(t + " is not a JSON object");
    const JVal *dt = nullptr, *sh = nullptr, *of = nullptr;
    for (const auto& [k, x] : v.obj) {
      if (k == "dtype")
        dt = &x;
      else if (k == "shape")
        sh = &x;
      else if (k == "data_offsets")
        of = &x;
    }
    if (!dt || dt->kind != JVal::Str) bad(t + " has no \"dtype\" string");
    if (!sh || sh->kind != JVal::Arr) bad(t + " has no \"shape\" array");
    if (!of || of->kind != JVal::Arr || of->arr.size() != 2)
      bad(t + " has no \"data_offsets\" pair");
    StEntry e{RawType::F32, {}, 0, 0};
    bool known = false;
    for (const auto& [nm, rt] : kTypes)
      if (dt->s == nm) {
        e.type = rt;
        known = true;
      }
    if (!known)
      bad(t + " has dtype " + dt->s +
          ", which ShapeScript does not read (F32 F64 BF16 F16 I32 I64 BOOL)");
    uint64_t count = 1, nonzero = 1;
    for (const JVal& d : sh->arr) {
      uint64_t x = 0;
      if (!json_uint(d, x))
        bad(t + "'s shape entry is not a non-negative integer (" +
            json_text(d) + ")");
      if (__builtin_mul_overflow(nonzero, x == 0 ? 1 : x, &nonzero) ||
          nonzero > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        bad(t + "'s shape " + json_text(*sh) + " overflows");
      count *= x;
      e.shape.push_back(static_cast<int64_t>(x));
    }
    uint64_t bytes = 0;
    if (__builtin_mul_overflow(count, uint64_t(raw_size(e.type)), &bytes))
      bad(t + "'s shape " + json_text(*sh) + " overflows");
    if (!json_uint(of->arr[0], e.begin) || !json_uint(of->arr[1], e.end))
      bad(t + "'s data_offsets " + json_text(*of) +
          " are not non-negative integers");
    if (e.begin > e.end)
      bad(t + "'s data_offsets " + json_text(*of) + " are reversed");
    if (e.end > data_size)
      bad(t + "'s data_offsets " + json_text(*of) + " run past the data (" +
          std::to_string(data_size) + " bytes; truncated?)");
    if (e.end - e.begin != bytes)
      bad(t + " is " + dt->s + " " + json_text(*sh) + ", " +
          std::to_string(bytes) + " bytes, but its data_offsets " +
          json_text(*of) + " span " + std::to_string(e.end - e.begin));
    out[name] = std::move(e);
  }
  return out;
}

// A `<field>_lengths` array read into a vector (small: one int an item).
std::vector<int64_t> lengths_of(const RawArray& a,
                                const std::string& source,
                                const std::string& array) {
  if (a.shape.size() != 1 || !raw_is_int(a.type))
    throw DataError("ShapeError",
                    source + ": `" + array + "` must be a 1-d int array");
  std::vector<int64_t> v(a.numel());
  for (int64_t i = 0; i < a.numel(); ++i)
    if (!raw_int(a.type, a.data() + i * raw_size(a.type), v[i]))
      throw DataError("ShapeError", source + ": a length does not fit i64");
  return v;
}

std::shared_ptr<TensorStore> stream_safetensors(
    const types::RecordInfo& r,
    const std::map<std::string, int64_t>& dims,
    const std::string& path,
    const std::map<std::string, std::string>& renames) {
  uint64_t size = regular_file_size(path);
  uint64_t data_at = 0;
  std::map<std::string, StEntry> entries =
      safetensors_header(path, size, data_at);
  // Every checked: map the file; nothing of the data is read.
  auto file = FileMapping::map(path, size);
  std::map<std::string, StreamArray> cols;
  for (const types::FieldInfo& f : r.fields) {
    if (!f.type.is_tensor()) continue;
    const std::string& key = file_name_of(f, renames);
    auto it = entries.find(key);
    if (it == entries.end()) {
      std::string have;
      for (const auto& [k, v] : entries) have += (have.empty() ? "" : ", ") + k;
      throw DataError(
          "ShapeError",
          path + " has no array `" + key + "` for field `" + f.name + "` of " +
              r.name + " (it has: " + (have.empty() ? "nothing" : have) + ")");
    }
    StreamArray a;
    a.type = it->second.type;
    a.shape = it->second.shape;
    a.data = file->data + data_at + it->second.begin;
    a.file = file;
    if (auto lit = entries.find(key + "_lengths"); lit != entries.end()) {
      RawArray la;
      la.type = lit->second.type;
      la.shape = lit->second.shape;
      la.bytes = std::make_shared<const std::string>(
          reinterpret_cast<const char*>(file->data + data_at +
                                        lit->second.begin),
          lit->second.end - lit->second.begin);
      a.lengths = lengths_of(la, path, key + "_lengths");
    }
    cols[f.name] = std::move(a);
  }
  return make_stream_store(r, dims, std::move(cols), path, renames);
}

std::shared_ptr<TensorStore> stream_npy_dir(
    const types::RecordInfo& r,
    const std::map<std::string, int64_t>& dims,
    const std::string& path,
    const std::map<std::string, std::string>& renames) {
  std::error_code ec;
  std::map<std::string, StreamArray> cols;
  for (const types::FieldInfo& f : r.fields) {
    if (!f.type.is_tensor()) continue;
    const std::string& key = file_name_of(f, renames);
    std::string file = (fs::path(path) / (key + ".npy")).string();
    if (!fs::exists(file, ec))
      throw DataError("IOError",
                      file +
                          ": no such file (the .npy for field "
                          "of that name)");
    uint64_t size = regular_file_size(file);
    // The header (only), checked against the file's size, before mapping:
    // the first 4 KiB, or as much as a longer header declares (to 16 MiB).
    std::string head = read_range(
        file, 0, static_cast<size_t>(std::min<uint64_t>(size, 4096)));
    if (head.size() >= 12 && std::memcmp(head.data(), "\x93NUMPY", 6) == 0) {
      const uint8_t* p = reinterpret_cast<const uint8_t*>(head.data());
      uint64_t need = p[6] == 1 ? 10 + le16(p + 8) : 12 + uint64_t{le32(p + 8)};
      need = std::min<uint64_t>({need, size, uint64_t{16} << 20});
      if (need > head.size())
        head = read_range(file, 0, static_cast<size_t>(need));
    }
    RawArray h = parse_npy(
        std::make_shared<const std::string>(std::move(head)), 0, size, file);
    StreamArray a;
    a.type = h.type;
    a.shape = h.shape;
    a.file = FileMapping::map(file, size);
    a.data = a.file->data + h.offset;
    std::string lfile = (fs::path(path) / (key + "_lengths.npy")).string();
    if (fs::exists(lfile, ec)) {
      auto bytes = read_whole_file(lfile);
      size_t n = bytes->size();
      a.lengths = lengths_of(
          parse_npy(std::move(bytes), 0, n, lfile), path, key + "_lengths");
    }
    cols[f.name] = std::move(a);
  }
  return make_stream_store(r, dims, std::move(cols), path, renames);
}

}  // namespace

std::shared_ptr<TensorStore> stream_dataset(
    const types::RecordInfo& r,
    const std::map<std::string, int64_t>& dims,
    const std::string& path,
    const std::map<std::string, std::string>& renames) {
  std::error_code ec;
  if (ends_with(path, ".safetensors"))
    return stream_safetensors(r, dims, path, renames);
  if (!ends_with(path, ".npz") && !ends_with(path, ".csv") &&
      fs::is_directory(path, ec))
    return stream_npy_dir(r, dims, path, renames);
  // .npz (compressed members cannot be mapped), .csv (text): read now.
  return load_dataset(r, dims, path, renames);
}

}  // namespace ss::eval
