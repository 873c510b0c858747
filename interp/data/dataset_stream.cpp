// Streamed stores: a dataset over a mapped file whose items are converted and
// checked as each batch is loaded (load_rows).
#include <cstring>

#include "interp/data/dataset.h"
#include "interp/data/dataset_impl.h"

namespace ss::data {

using types::DType;
using types::FieldInfo;
using namespace dataset_detail;

std::shared_ptr<TensorStore> make_stream_store(
    const types::RecordInfo& r,
    const std::map<std::string, int64_t>& dims,
    std::map<std::string, StreamArray> cols,
    const std::string& path,
    const std::map<std::string, std::string>& renames) {
  auto src = std::make_shared<StreamSource>();
  src->path = path;
  src->renames = renames;
  src->dims = dims;
  auto s = std::make_shared<TensorStore>();
  s->info = &r;
  std::string first;
  for (const FieldInfo& f : r.fields) {
    if (!f.type.is_tensor()) continue;
    auto it = cols.find(f.name);
    if (it == cols.end())
      throw DataError(
          "ShapeError",
          path + " has no array for field `" + f.name + "` of " + r.name);
    StreamArray& a = it->second;
    ops::Shape fs = field_shape(f, dims);
    int va = var_axis_of(fs, f, path);
    check_item_count(a.shape, f, path, first, s->n);
    int64_t n = s->n;
    if (a.lengths && static_cast<int64_t>(a.lengths->size()) != n)
      throw DataError("ShapeError",
                      path + ": field `" + f.name + "` has " +
                          std::to_string(n) + " items but " +
                          std::to_string(a.lengths->size()) + " lengths");
    if (va < 0) a.lengths.reset();
    // A view over the mapping where no conversion is needed.
    size_t es = types::dtype_size(f.type.dtype);
    if (raw_of(f.type.dtype) == a.type &&
        reinterpret_cast<uintptr_t>(a.data) % es == 0)
      a.view = ops::Tensor::external(
          const_cast<uint8_t*>(a.data),
          a.shape,
          f.type.dtype,
          std::const_pointer_cast<void>(
              std::static_pointer_cast<const void>(a.file)));
    src->arrays[f.name] = std::move(a);
  }
  s->stream = std::move(src);
  return s;
}

namespace {

// Field [f]'s rows [rows] of a streamed store as one [b ...] tensor,
// converted and checked.
ops::Tensor stream_fixed(const StreamSource& src,
                         const FieldInfo& f,
                         const StreamArray& a,
                         const std::vector<int64_t>& rows) {
  const std::string& source = src.path;
  ops::Shape fs = field_shape(f, src.dims);
  ops::Shape item(a.shape.begin() + 1, a.shape.end());
  int64_t at = rows.empty() ? 0 : rows[0];
  if (item != fs)
    throw DataError("ShapeError",
                    where(at, source, f.name) + "expected " +
                        expected_str(fs, f) + ", found " + dims_str(item) +
                        " " + found_dtype(a.type));
  DType d = f.type.dtype;
  if (!convertible(a.type, d)) throw_wrong_dtype(at, source, f, a.type);
  int64_t per = ops::numel_of(fs);
  int64_t b = static_cast<int64_t>(rows.size());
  ops::Shape shape = fs;
  shape.insert(shape.begin(), b);
  ops::Tensor x = ops::Tensor::empty(shape, d);
  size_t in_row = static_cast<size_t>(per) * raw_size(a.type);
  size_t out_row = static_cast<size_t>(per) * types::dtype_size(d);
  const uint8_t* base =
      a.view.defined() ? static_cast<const uint8_t*>(a.view.raw()) : a.data;
  char* dst = static_cast<char*>(x.raw());
  for (int64_t i = 0; i < b; ++i) {
    const uint8_t* p = base + rows[i] * in_row;
    if (a.view.defined()) {
      std::memcpy(dst + i * out_row, p, in_row);
      continue;
    }
    if (convert_elems(a.type, p, d, dst + i * out_row, per) >= 0)
      throw DataError("ShapeError", does_not_fit(rows[i], source, f, a.type));
  }
  double bad = 0;
  int64_t k = first_outside(x, f, bad);
  if (k >= 0)
    throw DataError("DomainError",
                    where(rows[per ? k / per : 0], source, f.name) +
                        "expected a value in " + domain_str(f) + ", found " +
                        num_str(bad));
  return x;
}

// Item [j] of a size-variable field of a streamed store, cut to its
// length, converted and checked.
// Item [j]'s length along a streamed field's variable axis [va]: its
// `<field>_lengths` entry, else the array's dense size.
int64_t streamed_length(const StreamArray& a, int va, int64_t j) {
  return a.lengths ? (*a.lengths)[j] : a.shape[va + 1];
}

ops::Tensor stream_var(const StreamSource& src,
                       const FieldInfo& f,
                       const StreamArray& a,
                       int64_t j) {
  const std::string& source = src.path;
  ops::Shape fs = field_shape(f, src.dims);
  ops::Shape item(a.shape.begin() + 1, a.shape.end());
  int va = var_axis_of(fs, f, source);
  bool fits = item.size() == fs.size();
  for (size_t i = 0; fits && i < fs.size(); ++i)
    if (fs[i] >= 0 && fs[i] != item[i]) fits = false;
  if (!fits)
    throw DataError("ShapeError",
                    where(j, source, f.name) + "expected " +
                        expected_str(fs, f) + ", found " + dims_str(item) +
                        " " + found_dtype(a.type));
  DType d = f.type.dtype;
  if (!convertible(a.type, d)) throw_wrong_dtype(j, source, f, a.type);
  int64_t L = item[va];
  int64_t len = streamed_length(a, va, j);
  if (len < 0 || len > L)
    throw DataError("ShapeError",
                    where(j, source, f.name) + "length " + std::to_string(len) +
                        " is outside 0.." + std::to_string(L));
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < va; ++i) outer *= item[i];
  for (size_t i = va + 1; i < item.size(); ++i) inner *= item[i];
  ops::Shape is = item;
  is[va] = len;
  ops::Tensor x = ops::Tensor::empty(is, d);
  size_t rs = raw_size(a.type), es = types::dtype_size(d);
  const uint8_t* p = a.data + j * ops::numel_of(item) * rs;
  char* dst = static_cast<char*>(x.raw());
  for (int64_t o = 0; o < outer; ++o)
    if (convert_elems(a.type,
                      p + o * L * inner * rs,
                      d,
                      dst + o * len * inner * es,
                      len * inner) >= 0)
      throw DataError("ShapeError", does_not_fit(j, source, f, a.type));
  check_domain(x, f, 0, j, source);
  return x;
}

}  // namespace

int var_axis(const FieldInfo& f) {
  for (size_t i = 0; i < f.type.shape.size(); ++i)
    if (f.type.shape[i].kind == types::Axis::Kind::Var)
      return static_cast<int>(i);
  return -1;
}

int64_t item_length(const TensorStore& s, const FieldInfo& f, int64_t row) {
  const int va = var_axis(f);
  if (va < 0) return -1;
  if (s.stream) {
    auto it = s.stream->arrays.find(f.name);
    if (it == s.stream->arrays.end()) return 0;
    const StreamArray& a = it->second;
    if (static_cast<size_t>(va + 1) >= a.shape.size() ||
        (a.lengths && row >= static_cast<int64_t>(a.lengths->size())))
      return 0;  // found wrong when the item loads
    return streamed_length(a, va, row);
  }
  auto it = s.items.find(f.name);
  if (it == s.items.end() || row >= static_cast<int64_t>(it->second.size()))
    return 0;
  const ops::Tensor& t = it->second[row];
  return static_cast<size_t>(va) < t.rank() ? t.shape()[va] : 0;
}

Rows load_rows(const TensorStore& s,
               const std::vector<int64_t>& rows,
               ops::Device device) {
  if (s.host) return dataset_detail::load_host_rows(s, rows);
  Rows out;
  int64_t b = static_cast<int64_t>(rows.size());
  if (!s.stream && device.kind != ops::Device::Kind::Cpu) {
    for (const auto& [name, t] : s.fields)
      out.fields[name] = gather_on_device(s, name, rows, device);
    for (const auto& [name, v] : s.items) {
      auto& vec = out.items[name];
      vec.reserve(b);
      for (int64_t j : rows) vec.push_back(v[j]);
    }
    return out;
  }
  if (!s.stream) {
    // Consecutive items (batches in the dataset's order) are a view of the
    // store's rows, as torch slices a tensor: nothing is copied. Nothing
    // writes into a batch's tensors; the view keeps the store's alive.
    bool consecutive = b > 0;
    for (int64_t i = 1; i < b && consecutive; ++i)
      consecutive = rows[i] == rows[0] + i;
    for (const auto& [name, t] : s.fields) {
      ops::Shape shape = t.shape();
      shape[0] = b;
      if (consecutive) {
        size_t row = t.nbytes() / std::max<int64_t>(1, t.shape()[0]);
        auto keeper = std::make_shared<ops::Tensor>(t);
        out.fields[name] = ops::Tensor::external(
            const_cast<char*>(static_cast<const char*>(t.raw())) +
                rows[0] * row,
            shape,
            t.dtype(),
            keeper);
        continue;
      }
      ops::Tensor x = ops::Tensor::empty(shape, t.dtype());
      size_t row = b ? x.nbytes() / b : 0;
      const char* src = static_cast<const char*>(t.raw());
      char* dst = static_cast<char*>(x.raw());
      for (int64_t i = 0; i < b; ++i)
        std::memcpy(dst + i * row, src + rows[i] * row, row);
      out.fields[name] = x;
    }
    for (const auto& [name, v] : s.items) {
      auto& vec = out.items[name];
      vec.reserve(b);
      for (int64_t j : rows) vec.push_back(v[j]);
    }
    return out;
  }
  const StreamSource& src = *s.stream;
  std::map<uint32_t, std::pair<std::string, int>>
      var_seen;  // var -> (field, axis)
  for (const FieldInfo& f : s.info->fields) {
    if (!f.type.is_tensor()) continue;
    auto it = src.arrays.find(f.name);
    if (it == src.arrays.end())
      throw DataError("ShapeError",
                      src.path + " has no field `" + f.name + "`");
    const StreamArray& a = it->second;
    ops::Shape fs = field_shape(f, src.dims);
    int va = var_axis_of(fs, f, src.path);
    if (va < 0) {
      out.fields[f.name] = stream_fixed(src, f, a, rows);
      continue;
    }
    auto& vec = out.items[f.name];
    vec.reserve(b);
    for (int64_t j : rows) vec.push_back(stream_var(src, f, a, j));
    // One size variable has one size within an item.
    uint32_t var = f.type.shape[va].var;
    auto prev = var_seen.find(var);
    if (prev == var_seen.end()) {
      var_seen[var] = {f.name, va};
      continue;
    }
    const auto& other = out.items[prev->second.first];
    for (int64_t i = 0; i < b; ++i) {
      int64_t x = other[i].shape()[prev->second.second];
      int64_t y = vec[i].shape()[va];
      if (x != y)
        throw DataError("ShapeError",
                        where(rows[i], src.path, f.name) + "size variable " +
                            f.type.shape[va].name + " is " + std::to_string(y) +
                            " here but " + std::to_string(x) + " in `" +
                            prev->second.first + "`");
    }
  }
  return out;
}

}  // namespace ss::data
