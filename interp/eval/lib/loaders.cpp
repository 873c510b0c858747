// File loaders for datasets: .npy, .npz (zip, stored or deflated), a
// folder of .npy, .safetensors, .csv and MNIST's IDX files. Every size a
// header declares is checked against the bytes present before anything is
// allocated; a bad file is an IOError (or a ShapeError for a shape or dtype
// the record cannot take) naming the path, never a crash. stream_dataset
// checks a .npy folder's or a .safetensors file's headers the same way
// (reading the headers only; the safetensors JSON with a small reader of
// its own) and then maps the files (see dataset.h).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <functional>
#include <limits>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "interp/eval/lib/dataset.h"
#include "interp/eval/safetensors.h"

namespace ss::eval {

namespace fs = std::filesystem;
using types::DType;

namespace {

[[noreturn]] void io_error(const std::string& name, const std::string& what) {
  throw DataError("IOError", name + ": " + what);
}

uint16_t le16(const uint8_t* p) { return p[0] | (p[1] << 8); }
uint32_t le32(const uint8_t* p) {
  return p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
uint64_t le64(const uint8_t* p) {
  return le32(p) | (static_cast<uint64_t>(le32(p + 4)) << 32);
}
uint32_t be32(const uint8_t* p) {
  return (static_cast<uint32_t>(p[0]) << 24) | (p[1] << 16) | (p[2] << 8) | p[3];
}

// n * size, or false on overflow.
bool mul_ok(uint64_t a, uint64_t b, uint64_t& out) {
  return !__builtin_mul_overflow(a, b, &out);
}

// --------------------------------------------------------------- npy header

struct HeaderParser {
  const std::string& s;
  size_t i = 0;
  const std::string& name;
  [[noreturn]] void bad(const std::string& what) {
    io_error(name, "malformed .npy header (" + what + ")");
  }
  void ws() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t')) ++i;
  }
  bool eat(char c) {
    ws();
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  std::string quoted() {
    ws();
    if (i >= s.size() || (s[i] != '\'' && s[i] != '"')) bad("expected a string");
    char q = s[i++];
    size_t j = s.find(q, i);
    if (j == std::string::npos) bad("unterminated string");
    std::string out = s.substr(i, j - i);
    i = j + 1;
    return out;
  }
  std::string word() {
    ws();
    size_t j = i;
    while (j < s.size() && std::isalpha(static_cast<unsigned char>(s[j]))) ++j;
    std::string out = s.substr(i, j - i);
    i = j;
    return out;
  }
  ops::Shape shape() {
    if (!eat('(')) bad("expected a shape tuple");
    ops::Shape out;
    while (!eat(')')) {
      ws();
      if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i])))
        bad("expected a size in the shape");
      uint64_t v = 0;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
        if (!mul_ok(v, 10, v) || v + (s[i] - '0') < v) bad("size overflows");
        v += s[i++] - '0';
        if (v > (1ull << 62)) bad("size overflows");
      }
      ws();
      if (i < s.size() && s[i] == 'L') ++i;  // Python 2 longs
      out.push_back(static_cast<int64_t>(v));
      if (out.size() > 32) bad("more than 32 axes");
      if (!eat(',')) {
        if (!eat(')')) bad("expected , or ) in the shape");
        break;
      }
    }
    return out;
  }
};

RawType npy_type(const std::string& descr, const std::string& name) {
  if (descr.size() < 3)
    throw DataError("ShapeError", name + ": unsupported dtype '" + descr + "'");
  char order = descr[0];
  std::string t = descr.substr(1);
  static const std::pair<const char*, RawType> kTypes[] = {
      {"b1", RawType::Bool}, {"u1", RawType::U8},   {"i1", RawType::I8},
      {"i2", RawType::I16},  {"u2", RawType::U16},  {"i4", RawType::I32},
      {"u4", RawType::U32},  {"i8", RawType::I64},  {"u8", RawType::U64},
      {"f2", RawType::F16},  {"f4", RawType::F32},  {"f8", RawType::F64}};
  for (const auto& [n, r] : kTypes) {
    if (t != n) continue;
    if (order == '>' && raw_size(r) > 1)
      throw DataError("ShapeError", name + ": big-endian dtype '" + descr +
                                        "' is not supported; save "
                                        "little-endian arrays");
    if (order != '<' && order != '|' && order != '=' && order != '>')
      break;
    return r;
  }
  throw DataError("ShapeError",
                  name + ": unsupported dtype '" + descr +
                      "' (supported: bool, u1 i1 i2 u2 i4 u4 i8 u8, f2 f4 f8)");
}

// ------------------------------------------------------------------ inflate

// Inflates [n] bytes at [src] into exactly [out_size] bytes; [gzip] for a
// gzip stream, else a raw deflate stream (zip members).
std::string inflate_bytes(const uint8_t* src, size_t n, size_t out_size,
                          bool gzip, const std::string& name) {
  std::string out(out_size, '\0');
  z_stream z{};
  if (inflateInit2(&z, gzip ? 16 + MAX_WBITS : -MAX_WBITS) != Z_OK)
    io_error(name, "cannot start zlib");
  z.next_in = const_cast<Bytef*>(src);
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  size_t in_left = n, out_left = out_size;
  constexpr size_t kChunk = size_t{1} << 30;
  std::string error;
  for (;;) {
    if (z.avail_in == 0 && in_left) {
      z.avail_in = static_cast<uInt>(std::min(in_left, kChunk));
      in_left -= z.avail_in;
    }
    if (z.avail_out == 0 && out_left) {
      z.avail_out = static_cast<uInt>(std::min(out_left, kChunk));
      out_left -= z.avail_out;
    }
    if (z.avail_out == 0) {
      // All declared bytes are out: the stream must end here.
      uint8_t probe;
      z.next_out = &probe;
      z.avail_out = 1;
      int rc = inflate(&z, Z_NO_FLUSH);
      if (rc != Z_STREAM_END || z.avail_out == 0)
        error = rc == Z_DATA_ERROR ? "corrupt compressed data"
                                   : "compressed data is longer than the "
                                     "declared size";
      break;
    }
    int rc = inflate(&z, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      size_t produced = out_size - out_left - z.avail_out;
      if (produced != out_size)
        error = "compressed data holds " + std::to_string(produced) +
                " bytes, the header declares " + std::to_string(out_size);
      break;
    }
    if (rc == Z_BUF_ERROR && z.avail_in == 0 && in_left == 0) {
      error = "truncated compressed data";
      break;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      error = "corrupt compressed data";
      break;
    }
  }
  inflateEnd(&z);
  if (!error.empty()) io_error(name, error);
  return out;
}

uLong crc_of(const uint8_t* p, size_t n) {
  uLong c = crc32(0, nullptr, 0);
  for (size_t off = 0; off < n; off += size_t{1} << 30)
    c = crc32(c, p + off, static_cast<uInt>(std::min(n - off, size_t{1} << 30)));
  return c;
}

std::string gunzip(const std::string& gz, const std::string& name) {
  if (gz.size() < 18) io_error(name, "truncated gzip file");
  // ISIZE: the size mod 2^32; deflate expands at most ~1032:1.
  uint64_t isize = le32(reinterpret_cast<const uint8_t*>(gz.data()) + gz.size() - 4);
  if (isize > gz.size() * 1032ull + 1024)
    io_error(name, "gzip trailer declares an impossible size");
  return inflate_bytes(reinterpret_cast<const uint8_t*>(gz.data()), gz.size(),
                       isize, true, name);
}

bool ends_with(const std::string& s, const std::string& suf) {
  return s.size() >= suf.size() &&
         s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

// ------------------------------------------------------------------ csv

std::string trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && (s[a] == ' ' || s[a] == '\t' || s[a] == '\r')) ++a;
  while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t' || s[b - 1] == '\r')) --b;
  std::string t = s.substr(a, b - a);
  if (t.size() >= 2 && t.front() == '"' && t.back() == '"')
    t = t.substr(1, t.size() - 2);
  return t;
}

std::vector<std::string> split_cells(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t c = line.find(',', start);
    out.push_back(trim(line.substr(start, c == std::string::npos ? c : c - start)));
    if (c == std::string::npos) break;
    start = c + 1;
  }
  return out;
}

const std::string& file_name_of(const types::FieldInfo& f,
                                const std::map<std::string, std::string>& renames) {
  auto it = renames.find(f.name);
  return it == renames.end() ? f.name : it->second;
}

}  // namespace

// --------------------------------------------------------------- readers

std::shared_ptr<const std::string> read_whole_file(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) io_error(path, "no such file");
  if (fs::is_directory(path, ec)) io_error(path, "is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) io_error(path, std::string("cannot open: ") + std::strerror(errno));
  auto s = std::make_shared<std::string>();
  in.seekg(0, std::ios::end);
  std::streamoff n = in.tellg();
  if (n < 0) io_error(path, "cannot read");
  in.seekg(0);
  s->resize(static_cast<size_t>(n));
  if (n && !in.read(s->data(), n)) io_error(path, "read failed");
  return s;
}

RawArray parse_npy(std::shared_ptr<const std::string> bytes, size_t offset,
                   size_t size, const std::string& name) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(bytes->data()) + offset;
  if (size < 10 || std::memcmp(p, "\x93NUMPY", 6) != 0)
    io_error(name, "not a .npy file (bad magic)");
  int major = p[6];
  size_t hlen, hstart;
  if (major == 1) {
    hlen = le16(p + 8);
    hstart = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) io_error(name, "truncated .npy header");
    hlen = le32(p + 8);
    hstart = 12;
  } else {
    io_error(name, "unsupported .npy version " + std::to_string(major));
  }
  if (hlen > size - hstart) io_error(name, "truncated .npy header");
  // A streamed .npy is parsed from its first bytes only (stream_dataset).
  if (hlen > bytes->size() - offset - hstart)
    io_error(name, "the .npy header is over " +
                       std::to_string(bytes->size() - offset) + " bytes");
  std::string header(reinterpret_cast<const char*>(p + hstart), hlen);
  HeaderParser hp{header, 0, name};
  std::string descr;
  bool fortran = false, have_descr = false, have_shape = false,
       have_order = false;
  ops::Shape shape;
  if (!hp.eat('{')) hp.bad("expected {");
  while (!hp.eat('}')) {
    std::string key = hp.quoted();
    if (!hp.eat(':')) hp.bad("expected :");
    if (key == "descr") {
      hp.ws();
      if (hp.i < header.size() && header[hp.i] == '[')
        throw DataError("ShapeError",
                        name + ": structured dtypes are not supported");
      descr = hp.quoted();
      have_descr = true;
    } else if (key == "fortran_order") {
      std::string w = hp.word();
      if (w != "True" && w != "False") hp.bad("fortran_order is not a bool");
      fortran = w == "True";
      have_order = true;
    } else if (key == "shape") {
      shape = hp.shape();
      have_shape = true;
    } else {
      hp.bad("unknown key '" + key + "'");
    }
    if (!hp.eat(',')) {
      if (!hp.eat('}')) hp.bad("expected , or }");
      break;
    }
  }
  if (!have_descr || !have_shape || !have_order)
    hp.bad("descr, fortran_order and shape are required");
  if (fortran)
    throw DataError("ShapeError",
                    name + ": fortran_order arrays are not supported; save a "
                           "C-ordered array (np.ascontiguousarray)");
  RawArray a;
  a.type = npy_type(descr, name);
  a.shape = shape;
  uint64_t count = 1, nbytes = 0;
  for (int64_t d : shape)
    if (!mul_ok(count, static_cast<uint64_t>(d), count))
      io_error(name, "the shape's size overflows");
  if (!mul_ok(count, raw_size(a.type), nbytes))
    io_error(name, "the shape's size overflows");
  size_t data_at = hstart + hlen;
  if (nbytes > size - data_at)
    io_error(name, "the header declares " + std::to_string(nbytes) +
                       " bytes of data, but the file holds " +
                       std::to_string(size - data_at));
  a.bytes = std::move(bytes);
  a.offset = offset + data_at;
  return a;
}

std::map<std::string, RawArray> parse_npz(std::shared_ptr<const std::string> bytes,
                                          const std::string& name) {
  const std::string& s = *bytes;
  const uint8_t* p = reinterpret_cast<const uint8_t*>(s.data());
  size_t n = s.size();
  if (n < 22) io_error(name, "not a zip file (too short)");
  // End of central directory: the last "PK\5\6" with a comment that fits.
  size_t eocd = std::string::npos;
  size_t lo = n >= 22 + 65535 ? n - 22 - 65535 : 0;
  for (size_t i = n - 22 + 1; i-- > lo;)
    if (le32(p + i) == 0x06054b50 && i + 22 + le16(p + i + 20) == n) {
      eocd = i;
      break;
    }
  if (eocd == std::string::npos) io_error(name, "not a zip file (no end of central directory)");
  uint64_t entries = le16(p + eocd + 10);
  uint64_t cd_size = le32(p + eocd + 12);
  uint64_t cd_off = le32(p + eocd + 16);
  // Zip64: the locator sits just before the EOCD.
  if ((entries == 0xFFFF || cd_off == 0xFFFFFFFF || cd_size == 0xFFFFFFFF) &&
      eocd >= 20 && le32(p + eocd - 20) == 0x07064b50) {
    uint64_t z64 = le64(p + eocd - 20 + 8);
    if (z64 > n - 56 || le32(p + z64) != 0x06064b50)
      io_error(name, "corrupt zip64 end of central directory");
    entries = le64(p + z64 + 32);
    cd_size = le64(p + z64 + 40);
    cd_off = le64(p + z64 + 48);
  }
  if (cd_off > n || cd_size > n - cd_off)
    io_error(name, "central directory lies outside the file");
  if (entries > cd_size / 46 + 1) io_error(name, "central directory is too small for its entries");
  std::map<std::string, RawArray> out;
  size_t at = cd_off, end = cd_off + cd_size;
  for (uint64_t e = 0; e < entries; ++e) {
    if (end - at < 46 || le32(p + at) != 0x02014b50)
      io_error(name, "corrupt central directory entry " + std::to_string(e));
    uint16_t flags = le16(p + at + 8);
    uint16_t method = le16(p + at + 10);
    uint32_t crc = le32(p + at + 16);
    uint64_t csize = le32(p + at + 20), usize = le32(p + at + 24);
    size_t nlen = le16(p + at + 28), xlen = le16(p + at + 30),
           clen = le16(p + at + 32);
    uint64_t lho = le32(p + at + 42);
    if (46 + nlen + xlen + clen > end - at)
      io_error(name, "corrupt central directory entry " + std::to_string(e));
    std::string member(reinterpret_cast<const char*>(p + at + 46), nlen);
    // Zip64 extra field: the sizes and offset that were 0xFFFFFFFF.
    for (size_t x = at + 46 + nlen, xend = x + xlen; x + 4 <= xend;) {
      uint16_t tag = le16(p + x), sz = le16(p + x + 2);
      if (x + 4 + sz > xend) break;
      if (tag == 0x0001) {
        size_t q = x + 4, qend = q + sz;
        auto next = [&](uint64_t& v) {
          if (v == 0xFFFFFFFF && q + 8 <= qend) {
            v = le64(p + q);
            q += 8;
          }
        };
        next(usize);
        next(csize);
        next(lho);
      }
      x += 4 + sz;
    }
    at += 46 + nlen + xlen + clen;
    std::string mname = name + "[" + member + "]";
    if (flags & 1) io_error(mname, "encrypted zip members are not supported");
    if (lho > n - 30 || le32(p + lho) != 0x04034b50)
      io_error(mname, "corrupt local header");
    uint64_t data = lho + 30 + le16(p + lho + 26) + le16(p + lho + 28);
    if (data > n || csize > n - data)
      io_error(mname, "member data lies outside the file");
    std::string key = ends_with(member, ".npy")
                          ? member.substr(0, member.size() - 4)
                          : member;
    if (method == 0) {
      if (usize != csize) io_error(mname, "stored member sizes disagree");
      if (crc_of(p + data, csize) != crc)
        io_error(mname, "CRC mismatch (corrupt data)");
      out[key] = parse_npy(bytes, data, csize, mname);
    } else if (method == 8) {
      if (usize > csize * 1032 + 1024)
        io_error(mname, "declares " + std::to_string(usize) +
                            " bytes inflated from " + std::to_string(csize) +
                            ", more than deflate can produce");
      auto raw = std::make_shared<std::string>(
          inflate_bytes(p + data, csize, usize, false, mname));
      if (crc_of(reinterpret_cast<const uint8_t*>(raw->data()), raw->size()) != crc) io_error(mname, "CRC mismatch (corrupt data)");
      size_t rs = raw->size();
      out[key] = parse_npy(std::move(raw), 0, rs, mname);
    } else {
      io_error(mname, "unsupported compression method " + std::to_string(method) +
                          " (stored and deflated are supported)");
    }
  }
  return out;
}

RawArray parse_idx(std::shared_ptr<const std::string> bytes,
                   const std::string& name) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(bytes->data());
  size_t n = bytes->size();
  if (n < 4 || p[0] != 0 || p[1] != 0) io_error(name, "not an IDX file (bad magic)");
  RawType t;
  switch (p[2]) {
    case 0x08: t = RawType::U8; break;
    case 0x09: t = RawType::I8; break;
    case 0x0B: t = RawType::I16; break;
    case 0x0C: t = RawType::I32; break;
    case 0x0D: t = RawType::F32; break;
    case 0x0E: t = RawType::F64; break;
    default: io_error(name, "unknown IDX element type " + std::to_string(p[2]));
  }
  int nd = p[3];
  if (nd == 0 || nd > 8) io_error(name, "IDX rank " + std::to_string(nd) + " is not supported");
  if (n < 4 + 4ull * nd) io_error(name, "truncated IDX header");
  RawArray a;
  a.type = t;
  uint64_t count = 1, nbytes = 0;
  for (int i = 0; i < nd; ++i) {
    uint32_t d = be32(p + 4 + 4 * i);
    a.shape.push_back(d);
    if (!mul_ok(count, d, count)) io_error(name, "the shape's size overflows");
  }
  if (!mul_ok(count, raw_size(t), nbytes)) io_error(name, "the shape's size overflows");
  size_t data = 4 + 4 * nd;
  if (nbytes > n - data)
    io_error(name, "the header declares " + std::to_string(nbytes) +
                       " bytes of data, but the file holds " +
                       std::to_string(n - data));
  int rs = raw_size(t);
  if (rs == 1) {
    a.bytes = std::move(bytes);
    a.offset = data;
    return a;
  }
  // IDX is big-endian: swap into a buffer of our own.
  auto buf = std::make_shared<std::string>(bytes->data() + data, nbytes);
  for (size_t i = 0; i < nbytes; i += rs)
    std::reverse(buf->begin() + i, buf->begin() + i + rs);
  a.bytes = std::move(buf);
  return a;
}

std::map<std::string, RawArray> parse_csv(
    const std::string& text, const types::RecordInfo& r,
    const std::map<std::string, int64_t>& dims,
    const std::map<std::string, std::string>& renames, const std::string& name) {
  std::vector<std::string> lines;
  {
    size_t start = 0;
    while (start < text.size()) {
      size_t nl = text.find('\n', start);
      if (nl == std::string::npos) nl = text.size();
      std::string line = text.substr(start, nl - start);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      lines.push_back(std::move(line));
      start = nl + 1;
    }
  }
  while (!lines.empty() && trim(lines.back()).empty()) lines.pop_back();
  if (lines.empty()) io_error(name, "empty CSV file (no header row)");
  std::vector<std::string> header = split_cells(lines[0]);
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i].empty()) io_error(name, "header cell " + std::to_string(i + 1) + " is empty");
    if (!col.emplace(header[i], i).second)
      io_error(name, "header names column `" + header[i] + "` twice");
  }
  int64_t rows = static_cast<int64_t>(lines.size()) - 1;
  struct Plan {
    const types::FieldInfo* f;
    std::vector<size_t> cols;
    ops::Shape shape;
    std::vector<double> fvals;
    std::vector<int64_t> ivals;
  };
  std::vector<Plan> plans;
  for (const types::FieldInfo& f : r.fields) {
    if (!f.type.is_tensor()) continue;
    ops::Shape fshape = field_shape(f, dims);
    const std::string& fname = file_name_of(f, renames);
    for (int64_t d : fshape)
      if (d < 0)
        throw DataError("ShapeError",
                        name + ": field `" + f.name +
                            "` has a size variable; CSV files hold fields of "
                            "static shape only");
    Plan pl{&f, {}, fshape, {}, {}};
    int64_t k = ops::numel_of(fshape);
    if (fshape.empty()) {
      auto it = col.find(fname);
      if (it == col.end())
        throw DataError("ShapeError", name + " has no column `" + fname +
                                          "` for field `" + f.name + "`");
      pl.cols.push_back(it->second);
    } else {
      for (int64_t j = 0; j < k; ++j) {
        std::string cn = fname + "_" + std::to_string(j);
        auto it = col.find(cn);
        if (it == col.end())
          throw DataError("ShapeError",
                          name + " has no column `" + cn + "` for field `" +
                              f.name + "` (a field of " + std::to_string(k) +
                              " values is the columns " + fname + "_0.." +
                              fname + "_" + std::to_string(k - 1) + ")");
        pl.cols.push_back(it->second);
      }
    }
    if (types::is_float(f.type.dtype)) pl.fvals.reserve(rows * k);
    else pl.ivals.reserve(rows * k);
    plans.push_back(std::move(pl));
  }
  std::vector<std::string> cells;
  for (int64_t row = 0; row < rows; ++row) {
    const std::string& line = lines[row + 1];
    cells = split_cells(line);
    if (cells.size() != header.size())
      io_error(name, "line " + std::to_string(row + 2) + " has " +
                         std::to_string(cells.size()) + " cells, the header has " +
                         std::to_string(header.size()));
    for (Plan& pl : plans) {
      for (size_t c : pl.cols) {
        const std::string& cell = cells[c];
        const char* b = cell.c_str();
        char* e = nullptr;
        auto bad = [&](const std::string& want) {
          throw DataError("ShapeError",
                          "item " + std::to_string(row) + " of " + name +
                              " (line " + std::to_string(row + 2) +
                              "), field `" + pl.f->name + "`: expected " +
                              want + ", found '" + cell + "' in column `" +
                              header[c] + "`");
        };
        if (cell.empty()) bad("a value");
        DType d = pl.f->type.dtype;
        if (types::is_float(d)) {
          errno = 0;
          double v = std::strtod(b, &e);
          if (*e) bad("a number");
          pl.fvals.push_back(v);
        } else if (d == DType::Bool) {
          if (cell == "true" || cell == "True" || cell == "1") pl.ivals.push_back(1);
          else if (cell == "false" || cell == "False" || cell == "0") pl.ivals.push_back(0);
          else bad("a bool (true, false, 1, 0)");
        } else {
          errno = 0;
          long long v = std::strtoll(b, &e, 10);
          if (*e || errno == ERANGE) bad(std::string("an ") + types::dtype_name(d));
          pl.ivals.push_back(v);
        }
      }
    }
  }
  std::map<std::string, RawArray> out;
  for (Plan& pl : plans) {
    RawArray a;
    a.shape = pl.shape;
    a.shape.insert(a.shape.begin(), rows);
    DType d = pl.f->type.dtype;
    if (types::is_float(d)) {
      a.type = RawType::F64;
      a.bytes = std::make_shared<const std::string>(
          reinterpret_cast<const char*>(pl.fvals.data()), pl.fvals.size() * 8);
    } else if (d == DType::Bool) {
      a.type = RawType::Bool;
      std::string b(pl.ivals.size(), '\0');
      for (size_t i = 0; i < pl.ivals.size(); ++i) b[i] = static_cast<char>(pl.ivals[i]);
      a.bytes = std::make_shared<const std::string>(std::move(b));
    } else {
      a.type = RawType::I64;
      a.bytes = std::make_shared<const std::string>(
          reinterpret_cast<const char*>(pl.ivals.data()), pl.ivals.size() * 8);
    }
    out[pl.f->name] = std::move(a);
  }
  return out;
}

// ---------------------------------------------------------------- sources

namespace {

// Lengths of size-variable fields: an int array `<name>_lengths`, if any.
std::map<std::string, std::vector<int64_t>> lengths_from(
    const types::RecordInfo& r, const std::map<std::string, std::string>& renames,
    const std::function<const RawArray*(const std::string&)>& find,
    const std::string& source) {
  std::map<std::string, std::vector<int64_t>> out;
  for (const types::FieldInfo& f : r.fields) {
    const RawArray* a = find(file_name_of(f, renames) + "_lengths");
    if (!a) continue;
    if (a->shape.size() != 1 || !raw_is_int(a->type))
      throw DataError("ShapeError", source + ": `" + file_name_of(f, renames) +
                                        "_lengths` must be a 1-d int array");
    std::vector<int64_t> v(a->numel());
    for (int64_t i = 0; i < a->numel(); ++i)
      if (!raw_int(a->type, a->data() + i * raw_size(a->type), v[i]))
        throw DataError("ShapeError", source + ": a length does not fit i64");
    out[f.name] = std::move(v);
  }
  return out;
}

std::shared_ptr<TensorStore> from_arrays(
    const types::RecordInfo& r, const std::map<std::string, int64_t>& dims,
    const std::map<std::string, RawArray>& arrays,
    const std::map<std::string, std::string>& renames, const std::string& path) {
  std::map<std::string, RawArray> cols;
  for (const types::FieldInfo& f : r.fields) {
    auto it = arrays.find(file_name_of(f, renames));
    if (it == arrays.end()) {
      std::string have;
      for (const auto& [k, v] : arrays) have += (have.empty() ? "" : ", ") + k;
      throw DataError("ShapeError",
                      path + " has no array `" + file_name_of(f, renames) +
                          "` for field `" + f.name + "` of " + r.name +
                          " (it has: " + (have.empty() ? "nothing" : have) + ")");
    }
    cols[f.name] = it->second;
  }
  auto find = [&](const std::string& k) -> const RawArray* {
    auto it = arrays.find(k);
    return it == arrays.end() ? nullptr : &it->second;
  };
  return make_store(r, dims, std::move(cols), lengths_from(r, renames, find, path),
                    path);
}

}  // namespace

std::shared_ptr<TensorStore> load_dataset(
    const types::RecordInfo& r, const std::map<std::string, int64_t>& dims,
    const std::string& path, const std::map<std::string, std::string>& renames) {
  std::error_code ec;
  if (ends_with(path, ".safetensors")) {
    if (!fs::exists(path, ec)) io_error(path, "no such file");
    SafetensorsFile f;
    try {
      f = read_safetensors(path);
    } catch (const SafetensorsError& e) {
      throw DataError("IOError", e.what());
    }
    std::map<std::string, RawArray> arrays;
    for (const auto& [k, t] : f.tensors) arrays[k] = raw_from_tensor(t);
    return from_arrays(r, dims, arrays, renames, path);
  }
  if (ends_with(path, ".npz"))
    return from_arrays(r, dims, parse_npz(read_whole_file(path), path), renames,
                       path);
  if (ends_with(path, ".csv")) {
    auto text = read_whole_file(path);
    std::map<std::string, RawArray> cols = parse_csv(*text, r, dims, renames, path);
    return make_store(r, dims, std::move(cols), {}, path);
  }
  if (fs::is_directory(path, ec)) {
    std::map<std::string, RawArray> arrays;
    auto load = [&](const std::string& key, bool required) {
      fs::path file = fs::path(path) / (key + ".npy");
      if (!required && !fs::exists(file, ec)) return;
      if (!fs::exists(file, ec))
        throw DataError("IOError", file.string() + ": no such file (the .npy "
                                                   "for field of that name)");
      auto bytes = read_whole_file(file.string());
      size_t n = bytes->size();
      arrays[key] = parse_npy(std::move(bytes), 0, n, file.string());
    };
    for (const types::FieldInfo& f : r.fields) {
      load(file_name_of(f, renames), true);
      load(file_name_of(f, renames) + "_lengths", false);
    }
    return from_arrays(r, dims, arrays, renames, path);
  }
  if (!fs::exists(path, ec)) io_error(path, "no such file or directory");
  io_error(path, "unknown dataset format (expected .safetensors, .npz, .csv "
                 "or a directory of .npy files)");
}

// ---------------------------------------------------------------- streamed

FileMapping::~FileMapping() {
  if (data) ::munmap(const_cast<uint8_t*>(data), size);
}

std::shared_ptr<const FileMapping> FileMapping::map(const std::string& path,
                                                    size_t size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) io_error(path, std::string("cannot open: ") + std::strerror(errno));
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
  if (fd < 0) io_error(path, std::string("cannot open: ") + std::strerror(errno));
  std::string out(n, '\0');
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::pread(fd, out.data() + got, n - got, static_cast<off_t>(at + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      ::close(fd);
      io_error(path, r == 0 ? "it ended early (changed while being read?)"
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
    io_error(name, "not a valid safetensors file: the header is not JSON (" +
                       what + " at byte " + std::to_string(i) + ")");
  }
  void ws() {
    while (i < t.size() && (t[i] == ' ' || t[i] == '\n' || t[i] == '\t' || t[i] == '\r'))
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
      if (c >= '0' && c <= '9') v |= c - '0';
      else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
      else bad("a bad \\u escape");
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
      if (static_cast<unsigned char>(c) < 0x20) bad("a control character in a string");
      if (c != '\\') {
        o += c;
        continue;
      }
      if (i >= t.size()) bad("an unterminated string");
      char e = t[i++];
      switch (e) {
        case '"': o += '"'; break;
        case '\\': o += '\\'; break;
        case '/': o += '/'; break;
        case 'b': o += '\b'; break;
        case 'f': o += '\f'; break;
        case 'n': o += '\n'; break;
        case 'r': o += '\r'; break;
        case 't': o += '\t'; break;
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
        default: bad("a bad escape");
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
      while (j < t.size() && std::isdigit(static_cast<unsigned char>(t[j]))) ++j;
      if (j == d0) bad("a bad number");
      if (j < t.size() && t[j] == '.') {
        ++j;
        size_t f0 = j;
        while (j < t.size() && std::isdigit(static_cast<unsigned char>(t[j]))) ++j;
        if (j == f0) bad("a bad number");
      }
      if (j < t.size() && (t[j] == 'e' || t[j] == 'E')) {
        ++j;
        if (j < t.size() && (t[j] == '+' || t[j] == '-')) ++j;
        size_t e0 = j;
        while (j < t.size() && std::isdigit(static_cast<unsigned char>(t[j]))) ++j;
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
    if (__builtin_mul_overflow(x, 10, &x) || __builtin_add_overflow(x, uint64_t(c - '0'), &x))
      return false;
  }
  if (x > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
  out = x;
  return true;
}

std::string json_text(const JVal& v) {
  switch (v.kind) {
    case JVal::Null: return "null";
    case JVal::Bool: return "a bool";
    case JVal::Num: return v.s;
    case JVal::Str: return "\"" + v.s + "\"";
    case JVal::Arr: {
      std::string o = "[";
      for (size_t k = 0; k < v.arr.size(); ++k) o += (k ? "," : "") + json_text(v.arr[k]);
      return o + "]";
    }
    case JVal::Obj: return "{...}";
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
                                                  uint64_t size, uint64_t& data_at) {
  std::string q = "'" + path + "'";
  auto bad = [&](const std::string& problem) {
    throw DataError("IOError", q + " is not a valid safetensors file: " + problem);
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
      {"F32", RawType::F32}, {"F64", RawType::F64}, {"BF16", RawType::BF16},
      {"F16", RawType::F16}, {"I32", RawType::I32}, {"I64", RawType::I64},
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
      if (k == "dtype") dt = &x;
      else if (k == "shape") sh = &x;
      else if (k == "data_offsets") of = &x;
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
        bad(t + "'s shape entry is not a non-negative integer (" + json_text(d) + ")");
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
    if (e.begin > e.end) bad(t + "'s data_offsets " + json_text(*of) + " are reversed");
    if (e.end > data_size)
      bad(t + "'s data_offsets " + json_text(*of) + " run past the data (" +
          std::to_string(data_size) + " bytes; truncated?)");
    if (e.end - e.begin != bytes)
      bad(t + " is " + dt->s + " " + json_text(*sh) + ", " + std::to_string(bytes) +
          " bytes, but its data_offsets " + json_text(*of) + " span " +
          std::to_string(e.end - e.begin));
    out[name] = std::move(e);
  }
  return out;
}

// A `<field>_lengths` array read into a vector (small: one int an item).
std::vector<int64_t> lengths_of(const RawArray& a, const std::string& source,
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
    const types::RecordInfo& r, const std::map<std::string, int64_t>& dims,
    const std::string& path, const std::map<std::string, std::string>& renames) {
  uint64_t size = regular_file_size(path);
  uint64_t data_at = 0;
  std::map<std::string, StEntry> entries = safetensors_header(path, size, data_at);
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
      throw DataError("ShapeError",
                      path + " has no array `" + key + "` for field `" + f.name +
                          "` of " + r.name + " (it has: " +
                          (have.empty() ? "nothing" : have) + ")");
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
          reinterpret_cast<const char*>(file->data + data_at + lit->second.begin),
          lit->second.end - lit->second.begin);
      a.lengths = lengths_of(la, path, key + "_lengths");
    }
    cols[f.name] = std::move(a);
  }
  return make_stream_store(r, dims, std::move(cols), path, renames);
}

std::shared_ptr<TensorStore> stream_npy_dir(
    const types::RecordInfo& r, const std::map<std::string, int64_t>& dims,
    const std::string& path, const std::map<std::string, std::string>& renames) {
  std::error_code ec;
  std::map<std::string, StreamArray> cols;
  for (const types::FieldInfo& f : r.fields) {
    if (!f.type.is_tensor()) continue;
    const std::string& key = file_name_of(f, renames);
    std::string file = (fs::path(path) / (key + ".npy")).string();
    if (!fs::exists(file, ec))
      throw DataError("IOError", file + ": no such file (the .npy for field "
                                        "of that name)");
    uint64_t size = regular_file_size(file);
    // The header (only), checked against the file's size, before mapping:
    // the first 4 KiB, or as much as a longer header declares (to 16 MiB).
    std::string head = read_range(file, 0, static_cast<size_t>(std::min<uint64_t>(size, 4096)));
    if (head.size() >= 12 && std::memcmp(head.data(), "\x93NUMPY", 6) == 0) {
      const uint8_t* p = reinterpret_cast<const uint8_t*>(head.data());
      uint64_t need = p[6] == 1 ? 10 + le16(p + 8) : 12 + uint64_t{le32(p + 8)};
      need = std::min<uint64_t>({need, size, uint64_t{16} << 20});
      if (need > head.size()) head = read_range(file, 0, static_cast<size_t>(need));
    }
    RawArray h = parse_npy(std::make_shared<const std::string>(std::move(head)), 0,
                           size, file);
    StreamArray a;
    a.type = h.type;
    a.shape = h.shape;
    a.file = FileMapping::map(file, size);
    a.data = a.file->data + h.offset;
    std::string lfile = (fs::path(path) / (key + "_lengths.npy")).string();
    if (fs::exists(lfile, ec)) {
      auto bytes = read_whole_file(lfile);
      size_t n = bytes->size();
      a.lengths = lengths_of(parse_npy(std::move(bytes), 0, n, lfile), path,
                             key + "_lengths");
    }
    cols[f.name] = std::move(a);
  }
  return make_stream_store(r, dims, std::move(cols), path, renames);
}

}  // namespace

std::shared_ptr<TensorStore> stream_dataset(
    const types::RecordInfo& r, const std::map<std::string, int64_t>& dims,
    const std::string& path, const std::map<std::string, std::string>& renames) {
  std::error_code ec;
  if (ends_with(path, ".safetensors")) return stream_safetensors(r, dims, path, renames);
  if (!ends_with(path, ".npz") && !ends_with(path, ".csv") &&
      fs::is_directory(path, ec))
    return stream_npy_dir(r, dims, path, renames);
  // .npz (compressed members cannot be mapped), .csv (text): read now.
  return load_dataset(r, dims, path, renames);
}

std::shared_ptr<TensorStore> load_mnist(
    const types::RecordInfo& r, const std::map<std::string, int64_t>& dims,
    const std::string& dir) {
  const types::FieldInfo* img = nullptr;
  const types::FieldInfo* label = nullptr;
  for (const types::FieldInfo& f : r.fields) {
    if (!f.type.is_tensor()) continue;
    if (types::is_float(f.type.dtype) && !img) img = &f;
    else if (types::is_int(f.type.dtype) && !label) label = &f;
    else
      throw DataError("ShapeError", "mnist needs " + r.name +
                                        " to have one float field and one "
                                        "int field, but it also has `" +
                                        f.name + "`");
  }
  if (!img || !label)
    throw DataError("ShapeError", "mnist needs " + r.name +
                                      " to have one float field (the image) "
                                      "and one int field (the label)");
  std::error_code ec;
  std::string prefix = fs::is_directory(dir, ec)
                           ? (fs::path(dir) / "train").string()
                           : dir;  // "<dir>/t10k" or "<dir>/train"
  auto open = [&](const std::string& kind, int rank) {
    std::vector<std::string> names = {
        prefix + "-" + kind + "-idx" + std::to_string(rank) + "-ubyte",
        prefix + "-" + kind + ".idx" + std::to_string(rank) + "-ubyte"};
    for (const std::string& n : names) {
      if (fs::exists(n, ec)) return std::make_pair(n, read_whole_file(n));
      if (fs::exists(n + ".gz", ec))
        return std::make_pair(
            n + ".gz", std::shared_ptr<const std::string>(std::make_shared<std::string>(
                           gunzip(*read_whole_file(n + ".gz"), n + ".gz"))));
    }
    io_error(names[0], "no such file (mnist(R, dir) reads dir/train-images-"
                       "idx3-ubyte and dir/train-labels-idx1-ubyte, or "
                       "mnist(R, \"dir/t10k\") the test files)");
  };
  auto [iname, ibytes] = open("images", 3);
  auto [lname, lbytes] = open("labels", 1);
  RawArray images = parse_idx(ibytes, iname);
  RawArray labels = parse_idx(lbytes, lname);
  if (images.type != RawType::U8 || images.shape.size() < 2)
    throw DataError("ShapeError", iname + ": expected u8 images [N rows cols], found " +
                                      std::string(raw_name(images.type)) + " " +
                                      ops::shape_string(images.shape));
  ops::Shape fs_ = field_shape(*img, dims);
  int64_t n = images.shape[0];
  int64_t per = images.numel() / std::max<int64_t>(n, 1);
  if (ops::numel_of(fs_) != per)
    throw DataError("ShapeError",
                    "item 0 of " + iname + ", field `" + img->name +
                        "`: expected " + ops::shape_string(fs_) +
                        " (" + std::to_string(ops::numel_of(fs_)) +
                        " values), found " +
                        ops::shape_string(ops::Shape(images.shape.begin() + 1,
                                                     images.shape.end())));
  // u8 pixels scaled to [0, 1] as f32, shaped as the field.
  auto buf = std::make_shared<std::string>(images.numel() * sizeof(float), '\0');
  float* dst = reinterpret_cast<float*>(buf->data());
  const uint8_t* src = images.data();
  for (int64_t i = 0; i < images.numel(); ++i) dst[i] = src[i] * (1.0f / 255.0f);
  RawArray x;
  x.type = RawType::F32;
  x.shape = fs_;
  x.shape.insert(x.shape.begin(), n);
  x.bytes = std::move(buf);
  if (labels.shape.size() != 1)
    throw DataError("ShapeError", lname + ": expected labels [N], found " +
                                      ops::shape_string(labels.shape));
  std::map<std::string, RawArray> cols;
  cols[img->name] = std::move(x);
  cols[label->name] = std::move(labels);
  return make_store(r, dims, std::move(cols), {}, prefix + "-*");
}

}  // namespace ss::eval
