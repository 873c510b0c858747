// .npy: the header parser and parse_npy (a dtype, a C-ordered shape, the data
// checked against the bytes present).
#include <cstring>

#include "interp/data/dataset.h"
#include "interp/data/loaders_impl.h"

namespace ss::data {

using namespace detail;

namespace {

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
    if (i >= s.size() || (s[i] != '\'' && s[i] != '"'))
      bad("expected a string");
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
      {"b1", RawType::Bool},
      {"u1", RawType::U8},
      {"i1", RawType::I8},
      {"i2", RawType::I16},
      {"u2", RawType::U16},
      {"i4", RawType::I32},
      {"u4", RawType::U32},
      {"i8", RawType::I64},
      {"u8", RawType::U64},
      {"f2", RawType::F16},
      {"f4", RawType::F32},
      {"f8", RawType::F64}};
  for (const auto& [n, r] : kTypes) {
    if (t != n) continue;
    if (order == '>' && raw_size(r) > 1)
      throw DataError("ShapeError",
                      name + ": big-endian dtype '" + descr +
                          "' is not supported; save "
                          "little-endian arrays");
    if (order != '<' && order != '|' && order != '=' && order != '>') break;
    return r;
  }
  throw DataError("ShapeError",
                  name + ": unsupported dtype '" + descr +
                      "' (supported: bool, u1 i1 i2 u2 i4 u4 i8 u8, f2 f4 f8)");
}

}  // namespace

RawArray parse_npy(std::shared_ptr<const std::string> bytes,
                   size_t offset,
                   size_t size,
                   const std::string& name) {
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
    io_error(name,
             "the .npy header is over " +
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
                    name +
                        ": fortran_order arrays are not supported; save a "
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
    io_error(name,
             "the header declares " + std::to_string(nbytes) +
                 " bytes of data, but the file holds " +
                 std::to_string(size - data_at));
  a.bytes = std::move(bytes);
  a.offset = offset + data_at;
  return a;
}

}  // namespace ss::data
