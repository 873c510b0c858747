// TensorDataset: conversion of loaded arrays to the record's dtypes and the
// one check of every item when a dataset is made (streamed stores:
// dataset_stream.cpp; split/take views: dataset_views.cpp).
#include "interp/data/dataset.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "interp/data/dataset_impl.h"
#include "interp/data/dtype_spelling.h"
#include "interp/eval/interpreter.h"

namespace ss::data {

using types::DType;
using types::FieldInfo;

// ------------------------------------------------------------ raw types

int raw_size(RawType t) {
  switch (t) {
    case RawType::Bool:
    case RawType::U8:
    case RawType::I8:
      return 1;
    case RawType::I16:
    case RawType::U16:
    case RawType::F16:
    case RawType::BF16:
      return 2;
    case RawType::I32:
    case RawType::U32:
    case RawType::F32:
      return 4;
    case RawType::I64:
    case RawType::U64:
    case RawType::F64:
      return 8;
  }
  return 1;
}

const char* raw_name(RawType t) {
  switch (t) {
    case RawType::Bool:
      return "b1";
    case RawType::U8:
      return "u1";
    case RawType::I8:
      return "i1";
    case RawType::I16:
      return "i2";
    case RawType::U16:
      return "u2";
    case RawType::I32:
      return "i4";
    case RawType::U32:
      return "u4";
    case RawType::I64:
      return "i8";
    case RawType::U64:
      return "u8";
    case RawType::F16:
      return "f2";
    case RawType::BF16:
      return "bf16";
    case RawType::F32:
      return "f4";
    case RawType::F64:
      return "f8";
  }
  return "?";
}

bool raw_is_float(RawType t) {
  return t == RawType::F16 || t == RawType::BF16 || t == RawType::F32 ||
         t == RawType::F64;
}
bool raw_is_int(RawType t) {
  return !raw_is_float(t) && t != RawType::Bool;
}

namespace {
template <class T>
T ld(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
}  // namespace

bool raw_int(RawType t, const uint8_t* p, int64_t& out) {
  switch (t) {
    case RawType::U8:
      out = *p;
      return true;
    case RawType::I8:
      out = static_cast<int8_t>(*p);
      return true;
    case RawType::I16:
      out = ld<int16_t>(p);
      return true;
    case RawType::U16:
      out = ld<uint16_t>(p);
      return true;
    case RawType::I32:
      out = ld<int32_t>(p);
      return true;
    case RawType::U32:
      out = ld<uint32_t>(p);
      return true;
    case RawType::I64:
      out = ld<int64_t>(p);
      return true;
    case RawType::U64: {
      uint64_t u = ld<uint64_t>(p);
      out = static_cast<int64_t>(u);
      return u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    }
    default:
      return false;
  }
}

namespace dataset_detail {

RawType raw_of(DType d) {
  switch (d) {
    case DType::F32:
      return RawType::F32;
    case DType::F64:
      return RawType::F64;
    case DType::BF16:
      return RawType::BF16;
    case DType::F16:
      return RawType::F16;
    case DType::I32:
      return RawType::I32;
    case DType::I64:
      return RawType::I64;
    case DType::Bool:
      return RawType::Bool;
  }
  return RawType::F32;
}

// The file's type name as the user knows it: "f32" for f4, "u8" for u1.
std::string found_dtype(RawType t) {
  switch (t) {
    case RawType::Bool:
      return "bool";
    case RawType::U8:
      return "u8";
    case RawType::I8:
      return "i8";
    case RawType::I16:
      return "i16";
    case RawType::U16:
      return "u16";
    case RawType::I32:
      return "i32";
    case RawType::U32:
      return "u32";
    case RawType::I64:
      return "i64";
    case RawType::U64:
      return "u64";
    case RawType::F16:
      return "f16";
    case RawType::BF16:
      return "bf16";
    case RawType::F32:
      return "f32";
    case RawType::F64:
      return "f64";
  }
  return "?";
}

template <class T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

double raw_float(RawType t, const uint8_t* p) {
  switch (t) {
    case RawType::F16:
      return ops::f16_to_float(load<uint16_t>(p));
    case RawType::BF16:
      return ops::bf16_to_float(load<uint16_t>(p));
    case RawType::F32:
      return load<float>(p);
    case RawType::F64:
      return load<double>(p);
    default:
      return 0;
  }
}

std::string dims_str(const ops::Shape& s) {
  return ops::shape_string(s);
}

std::string expected_str(const ops::Shape& fs, const FieldInfo& f) {
  std::string s = "[";
  for (size_t i = 0; i < fs.size(); ++i) {
    if (i) s += " ";
    s += fs[i] < 0 ? f.type.shape[i].str() : std::to_string(fs[i]);
  }
  return s + "] " + types::dtype_name(f.type.dtype);
}

std::string where(int64_t item,
                  const std::string& source,
                  const std::string& field) {
  return "item " + std::to_string(item) + " of " + source + ", field `" +
         field + "`: ";
}

std::string num_str(double v) {
  std::ostringstream o;
  o.precision(6);
  o << v;
  return o.str();
}

std::string domain_str(const FieldInfo& f) {
  return (f.domain_lo ? num_str(*f.domain_lo) : std::string()) +
         (f.domain_inclusive ? "..=" : "..") +
         (f.domain_hi ? num_str(*f.domain_hi) : std::string());
}

bool in_domain(const FieldInfo& f, double v) {
  if (std::isnan(v)) return false;
  if (f.domain_lo && v < *f.domain_lo) return false;
  if (f.domain_hi &&
      (f.domain_inclusive ? v > *f.domain_hi : v >= *f.domain_hi))
    return false;
  return true;
}

// Note [A domain check at memory speed]
// Every value of a field with a domain (`img: [D] in 0.0..=1.0`) is
// checked when a dataset is made, and a streamed store's every batch. A
// compare in double with an exit per value ran 1.8 ns a value, and did
// not vectorise: 105 ms for the README MLP's 58M pixels at start-up. f32
// values are first compared as f32, 64 at a time with GCC's vector
// extensions and no exit inside a block (25 ms), against the bounds rounded
// inward: a value that passes them is inside the domain, so a block that
// passes whole needs no more. The first block that does not is searched
// again from its start by the exact check in double, which finds the value
// and reports it; bounds with no f32 inside (NaN) send every block there.

namespace {

constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();
constexpr double kMaxf = std::numeric_limits<float>::max();

/// The least float >= [lo] (NaN where none is in float's range).
float float_at_least(double lo) {
  if (lo == -HUGE_VAL) return -HUGE_VALF;
  if (!(lo >= -kMaxf && lo <= kMaxf)) return kNaNf;
  float f = static_cast<float>(lo);
  return static_cast<double>(f) < lo ? std::nextafter(f, HUGE_VALF) : f;
}

/// The greatest float <= [hi] ([incl]) or < [hi] (NaN where none is in
/// float's range).
float float_at_most(double hi, bool incl) {
  if (hi == HUGE_VAL) return incl ? HUGE_VALF : static_cast<float>(kMaxf);
  if (!(hi >= -kMaxf && hi <= kMaxf)) return kNaNf;
  float f = static_cast<float>(hi);
  double d = static_cast<double>(f);
  return (incl ? d > hi : d >= hi) ? std::nextafter(f, -HUGE_VALF) : f;
}

/// Where the exact check of [p] must start: the first block of 64 with a
/// value outside [lo, hi] (or NaN), [n] rounded down to a block when none.
int64_t first_block_outside(const float* p, int64_t n, float lo, float hi) {
  using F4 = float __attribute__((vector_size(16)));
  using I4 = int32_t __attribute__((vector_size(16)));
  constexpr int64_t kBlock = 64;
  const F4 l = {lo, lo, lo, lo}, h = {hi, hi, hi, hi};
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    I4 in = {-1, -1, -1, -1};
    for (int64_t j = 0; j < kBlock; j += 4) {
      F4 v;
      std::memcpy(&v, p + i + j, sizeof v);
      in &= (v >= l) & (v <= h);  // false for NaN
    }
    if ((in[0] & in[1] & in[2] & in[3]) != -1) break;
  }
  return i;
}

}  // namespace

// The first element of [t] outside f's domain, or -1.
int64_t first_outside(const ops::Tensor& t, const FieldInfo& f, double& bad) {
  if (!f.has_domain || (!f.domain_lo && !f.domain_hi)) return -1;
  const double lo = f.domain_lo ? *f.domain_lo : -HUGE_VAL;
  const double hi = f.domain_hi ? *f.domain_hi : HUGE_VAL;
  const bool incl = f.domain_inclusive || !f.domain_hi;
  int64_t n = t.numel();
  auto scan = [&](auto* p, int64_t from = 0) -> int64_t {
    // Written so that NaN fails too.
    for (int64_t i = from; i < n; ++i) {
      double v = static_cast<double>(p[i]);
      if (!(v >= lo && (incl ? v <= hi : v < hi))) {
        bad = v;
        return i;
      }
    }
    return -1;
  };
  switch (t.dtype()) {
    case DType::F32: {
      const float* p = t.data<float>();
      return scan(p,
                  first_block_outside(
                      p, n, float_at_least(lo), float_at_most(hi, incl)));
    }
    case DType::F64:
      return scan(t.data<double>());
    case DType::I32:
      return scan(t.data<int32_t>());
    case DType::I64:
      return scan(t.data<int64_t>());
    case DType::Bool:
      return scan(t.data<uint8_t>());
    default:
      for (int64_t i = 0; i < n; ++i)
        if (!in_domain(f, t.at(i))) {
          bad = t.at(i);
          return i;
        }
      return -1;
  }
}

// Whether a file's [t] may be read into a field's [d]: only when they are
// the same. Note [No silent dtype conversion]: library.md makes a field of
// the wrong dtype a ShapeError, as torch refuses an f64 batch into f32
// weights; converting silently hid f64 data read as f32 (precision lost)
// and i32 labels read as i64. The error's help says how to convert.
bool convertible(RawType t, DType d) {
  return raw_of(d) == t;
}

// [n] elements of [t] at [src] converted to [d] at [dst] (convertible(t,
// d) holds); the index of the first int that does not fit [d], or -1.
int64_t convert_elems(
    RawType t, const uint8_t* src, DType d, void* dst, int64_t n) {
  int rs = raw_size(t);
  if (raw_of(d) == t) {  // the same type: a copy
    std::memcpy(dst, src, static_cast<size_t>(n) * rs);
    return -1;
  }
  if (types::is_float(d)) {
    for (int64_t i = 0; i < n; ++i) {
      double v = raw_float(t, src + i * rs);
      switch (d) {
        case DType::F32:
          static_cast<float*>(dst)[i] = static_cast<float>(v);
          break;
        case DType::F64:
          static_cast<double*>(dst)[i] = v;
          break;
        case DType::BF16:
          static_cast<uint16_t*>(dst)[i] =
              ops::float_to_bf16(static_cast<float>(v));
          break;
        default:
          static_cast<uint16_t*>(dst)[i] =
              ops::float_to_f16(static_cast<float>(v));
          break;
      }
    }
    return -1;
  }
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = 0;
    bool ok = raw_int(t, src + i * rs, v);
    if (d == DType::I32) {
      ok = ok && v >= std::numeric_limits<int32_t>::min() &&
           v <= std::numeric_limits<int32_t>::max();
      if (ok) static_cast<int32_t*>(dst)[i] = static_cast<int32_t>(v);
    } else if (ok) {
      static_cast<int64_t*>(dst)[i] = v;
    }
    if (!ok) return i;
  }
  return -1;
}

std::string wrong_dtype(int64_t item,
                        const std::string& source,
                        const FieldInfo& f,
                        RawType t) {
  return where(item, source, f.name) + "expected dtype " +
         types::dtype_name(f.type.dtype) + ", found " + found_dtype(t);
}

namespace {

// The file's type as a ShapeScript dtype, when it is one.
std::optional<DType> as_dtype(RawType t) {
  for (const DTypeSpelling& s : kDTypeSpellings)
    if (raw_of(s.d) == t) return s.d;
  return std::nullopt;
}

}  // namespace

std::vector<std::string> dtype_help(const FieldInfo& f, RawType t) {
  std::string want = types::dtype_name(f.type.dtype);
  const DTypeSpelling& s = spelling_of(f.type.dtype);
  std::string how =
      std::string(*s.numpy_cast ? "numpy: `" + std::string(s.numpy_cast) + "`; "
                                : "") +
      "torch: `" + s.torch_cast + "`";
  std::string help =
      "help: convert the array to " + want + " before saving it (" + how + ")";
  if (std::optional<DType> d = as_dtype(t)) {
    types::Type as_file = f.type;
    as_file.dtype = *d;
    help += ", or declare the field as " + std::string(types::dtype_name(*d)) +
            " (`" + f.name + ": " + as_file.str() + "`)";
  }
  return {help};
}

[[noreturn]] void throw_wrong_dtype(int64_t item,
                                    const std::string& source,
                                    const FieldInfo& f,
                                    RawType t) {
  throw DataError(
      "ShapeError", wrong_dtype(item, source, f, t), dtype_help(f, t));
}

std::string does_not_fit(int64_t item,
                         const std::string& source,
                         const FieldInfo& f,
                         RawType t) {
  return where(item, source, f.name) + "a " + found_dtype(t) +
         " value does not fit " + types::dtype_name(f.type.dtype);
}

RawArray as_field_dtype(RawArray a,
                        const FieldInfo& f,
                        const std::string& source) {
  RawType want = raw_of(f.type.dtype);
  if (a.type == want) return a;
  auto buf = std::make_shared<std::string>(
      static_cast<size_t>(a.numel()) * types::dtype_size(f.type.dtype), '\0');
  int64_t bad =
      convert_elems(a.type, a.data(), f.type.dtype, buf->data(), a.numel());
  if (bad >= 0)
    throw DataError("ShapeError", does_not_fit(bad, source, f, a.type));
  RawArray out;
  out.type = want;
  out.shape = a.shape;
  out.bytes = std::move(buf);
  return out;
}

// Note [Converting a piece at a time]
// An array that lies in a mapping (a folder's .npy, an npz's member: Note
// [Reading an npz in place]) is converted into its tensor 16 MiB of the
// source at a time, and when no later field reads the same bytes
// ([last_read]) each piece is given back once converted: a file's pages
// leave the page tables as the tensor's pages come, and an inflated
// member's memory is freed as it goes, so the data is resident once
// (issue 32 item 11), not as the file's bytes and the tensor's both.
// A piece is a whole number of elements; the tensor's memory is touched
// only as it is written.
constexpr size_t kConvertPiece = size_t{16} << 20;

// [a] converted to dtype [d]; on a wrong dtype or a value that does not
// fit, a ShapeError naming [field] (the item is the element's). [last_read]:
// nothing reads [a]'s bytes after this (Note [Converting a piece at a
// time]).
ops::Tensor convert(const RawArray& a,
                    DType d,
                    const ops::Shape& shape,
                    const std::string& source,
                    const FieldInfo& f,
                    int64_t per_item,
                    bool last_read) {
  if (!convertible(a.type, d)) throw_wrong_dtype(0, source, f, a.type);
  ops::Tensor t = ops::Tensor::empty(shape, d);
  const size_t in_size = raw_size(a.type), out_size = types::dtype_size(d);
  const int64_t piece = static_cast<int64_t>(kConvertPiece / in_size);
  const uint8_t* src = a.data();
  auto* dst = static_cast<uint8_t*>(t.raw());
  for (int64_t at = 0, n = a.numel(); at < n; at += piece) {
    int64_t k = std::min(piece, n - at);
    int64_t bad =
        convert_elems(a.type, src + at * in_size, d, dst + at * out_size, k);
    if (bad >= 0)
      throw DataError(
          "ShapeError",
          does_not_fit(
              per_item ? (at + bad) / per_item : 0, source, f, a.type));
    if (a.file && last_read)
      a.file->give_back(src + at * in_size, static_cast<size_t>(k) * in_size);
  }
  return t;
}

void check_domain(const ops::Tensor& t,
                  const FieldInfo& f,
                  int64_t per_item,
                  int64_t item0,
                  const std::string& source,
                  const std::vector<int64_t>* ids) {
  double bad = 0;
  int64_t at = first_outside(t, f, bad);
  if (at < 0) return;
  int64_t item = item0 + (per_item ? at / per_item : 0);
  if (ids) item = (*ids)[item];
  throw DataError("DomainError",
                  where(item, source, f.name) + "expected a value in " +
                      domain_str(f) + ", found " + num_str(bad));
}

void check_item_count(const ops::Shape& array_shape,
                      const FieldInfo& f,
                      const std::string& source,
                      std::string& first,
                      int64_t& n) {
  if (array_shape.empty())
    throw DataError("ShapeError",
                    source + ": field `" + f.name +
                        "` is a 0-d array; a "
                        "dataset's arrays have a leading item axis");
  if (first.empty()) {
    n = array_shape[0];
    first = f.name;
  } else if (array_shape[0] != n) {
    throw DataError("ShapeError",
                    source + ": field `" + f.name + "` has " +
                        std::to_string(array_shape[0]) + " items but `" +
                        first + "` has " + std::to_string(n));
  }
}

// A field's size-variable axis: -1 when it has none.
int var_axis_of(const ops::Shape& fs,
                const FieldInfo& f,
                const std::string& source) {
  int at = -1;
  for (size_t i = 0; i < fs.size(); ++i)
    if (fs[i] < 0) {
      if (at >= 0)
        throw DataError("ShapeError",
                        source + ": field `" + f.name +
                            "` has two size variables; a dataset field may "
                            "have one");
      at = static_cast<int>(i);
    }
  return at;
}

}  // namespace dataset_detail

using namespace dataset_detail;

RawArray raw_from_tensor(const ops::Tensor& t) {
  RawArray a;
  a.type = raw_of(t.dtype());
  a.shape = t.shape();
  a.bytes = std::make_shared<const std::string>(
      static_cast<const char*>(t.raw()), t.nbytes());
  return a;
}

ops::Shape field_shape(const FieldInfo& f,
                       const std::map<std::string, int64_t>& dims) {
  ops::Shape s;
  for (const types::Axis& a : f.type.shape) {
    if (a.kind == types::Axis::Kind::Var) {
      s.push_back(-1);
      continue;
    }
    if (a.kind == types::Axis::Kind::Dim) {
      auto it = dims.find(a.name);
      if (it != dims.end()) {
        s.push_back(it->second);
        continue;
      }
    }
    auto st = a.static_size();
    s.push_back(st ? *st : -1);
  }
  return s;
}

std::shared_ptr<TensorStore> make_store(
    const types::RecordInfo& r,
    const std::map<std::string, int64_t>& dims,
    std::map<std::string, RawArray> cols,
    std::map<std::string, std::vector<int64_t>> lengths,
    const std::string& source) {
  auto s = std::make_shared<TensorStore>();
  s->info = &r;
  // How many fields read each array's bytes (two renamed to one array).
  std::map<const uint8_t*, int> reads;
  for (const auto& [name, a] : cols) ++reads[a.data()];
  std::string first;
  for (const FieldInfo& f : r.fields) {
    if (!f.type.is_tensor()) continue;
    auto it = cols.find(f.name);
    if (it == cols.end())
      throw DataError(
          "ShapeError",
          source + " has no array for field `" + f.name + "` of " + r.name);
    const RawArray& a = it->second;
    ops::Shape fs = field_shape(f, dims);
    check_item_count(a.shape, f, source, first, s->n);
    int64_t n = s->n;
    ops::Shape item(a.shape.begin() + 1, a.shape.end());
    int va = var_axis_of(fs, f, source);
    bool fits = item.size() == fs.size();
    for (size_t i = 0; fits && i < fs.size(); ++i)
      if (fs[i] >= 0 && fs[i] != item[i]) fits = false;
    if (!fits)
      throw DataError("ShapeError",
                      where(0, source, f.name) + "expected " +
                          expected_str(fs, f) + ", found " + dims_str(item) +
                          " " + found_dtype(a.type));
    int64_t per_item = ops::numel_of(item);
    ops::Tensor t = convert(
        a, f.type.dtype, a.shape, source, f, per_item, --reads[a.data()] == 0);
    if (va < 0) {
      s->fields[f.name] = t;
      continue;
    }
    // A size-variable field: cut each item to its length.
    int64_t L = item[va];
    auto lit = lengths.find(f.name);
    if (lit != lengths.end() && static_cast<int64_t>(lit->second.size()) != n)
      throw DataError("ShapeError",
                      source + ": field `" + f.name + "` has " +
                          std::to_string(n) + " items but " +
                          std::to_string(lit->second.size()) + " lengths");
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < va; ++i) outer *= item[i];
    for (size_t i = va + 1; i < item.size(); ++i) inner *= item[i];
    size_t es = types::dtype_size(f.type.dtype);
    const char* base = static_cast<const char*>(t.raw());
    auto& vec = s->items[f.name];
    vec.reserve(n);
    for (int64_t k = 0; k < n; ++k) {
      int64_t len = lit == lengths.end() ? L : lit->second[k];
      if (len < 0 || len > L)
        throw DataError("ShapeError",
                        where(k, source, f.name) + "length " +
                            std::to_string(len) + " is outside 0.." +
                            std::to_string(L));
      ops::Shape is = item;
      is[va] = len;
      ops::Tensor x = ops::Tensor::empty(is, f.type.dtype);
      char* dst = static_cast<char*>(x.raw());
      const char* src = base + k * per_item * es;
      for (int64_t o = 0; o < outer; ++o)
        std::memcpy(dst + o * len * inner * es,
                    src + o * L * inner * es,
                    len * inner * es);
      vec.push_back(std::move(x));
    }
  }
  check_store(*s, dims, source);
  return s;
}

void check_store(const TensorStore& s,
                 const std::map<std::string, int64_t>& dims,
                 const std::string& source,
                 const std::vector<int64_t>* ids) {
  auto id = [&](int64_t k) { return ids ? (*ids)[k] : k; };
  for (const FieldInfo& f : s.info->fields) {
    if (!f.type.is_tensor()) continue;
    ops::Shape fs = field_shape(f, dims);
    int va = var_axis_of(fs, f, source);
    if (va < 0) {
      auto it = s.fields.find(f.name);
      if (it == s.fields.end())
        throw DataError("ShapeError",
                        source + " has no field `" + f.name + "`");
      const ops::Tensor& t = it->second;
      ops::Shape want = fs;
      want.insert(want.begin(), s.n);
      if (t.shape() != want || t.dtype() != f.type.dtype)
        throw DataError(
            "ShapeError",
            where(id(0), source, f.name) + "expected " + expected_str(fs, f) +
                ", found " +
                dims_str(t.rank() ? ops::Shape(t.shape().begin() + 1,
                                               t.shape().end())
                                  : ops::Shape{}) +
                " " + types::dtype_name(t.dtype()));
      check_domain(t, f, ops::numel_of(fs), 0, source, ids);
      continue;
    }
    auto it = s.items.find(f.name);
    if (it == s.items.end() || static_cast<int64_t>(it->second.size()) != s.n)
      throw DataError("ShapeError",
                      source + " has no items for field `" + f.name + "`");
    for (int64_t k = 0; k < s.n; ++k) {
      const ops::Tensor& t = it->second[k];
      bool fits = t.rank() == fs.size() && t.dtype() == f.type.dtype;
      for (size_t i = 0; fits && i < fs.size(); ++i)
        if (fs[i] >= 0 && fs[i] != t.shape()[i]) fits = false;
      if (!fits)
        throw DataError("ShapeError",
                        where(id(k), source, f.name) + "expected " +
                            expected_str(fs, f) + ", found " +
                            dims_str(t.shape()) + " " +
                            types::dtype_name(t.dtype()));
      check_domain(t, f, 0, id(k), source);
    }
  }
  // One size variable has one size within an item.
  std::map<uint32_t, std::pair<std::string, const std::vector<ops::Tensor>*>>
      seen;
  std::map<uint32_t, int> seen_axis;
  for (const FieldInfo& f : s.info->fields) {
    if (!f.type.is_tensor()) continue;
    for (size_t i = 0; i < f.type.shape.size(); ++i) {
      const types::Axis& a = f.type.shape[i];
      if (a.kind != types::Axis::Kind::Var) continue;
      auto it = s.items.find(f.name);
      if (it == s.items.end()) continue;
      auto prev = seen.find(a.var);
      if (prev == seen.end()) {
        seen[a.var] = {f.name, &it->second};
        seen_axis[a.var] = static_cast<int>(i);
        continue;
      }
      for (int64_t k = 0; k < s.n; ++k) {
        int64_t x = (*prev->second.second)[k].shape()[seen_axis[a.var]];
        int64_t y = it->second[k].shape()[i];
        if (x != y)
          throw DataError("ShapeError",
                          where(id(k), source, f.name) + "size variable " +
                              a.name + " is " + std::to_string(y) +
                              " here but " + std::to_string(x) + " in `" +
                              prev->second.first + "`");
      }
    }
  }
}

}  // namespace ss::data
