// MNIST's IDX files (parse_idx) and load_mnist, which reads them (gzipped
// or not) into a record of an image and a label.
#include <algorithm>
#include <cstdint>
#include <filesystem>

#include "interp/data/dataset.h"
#include "interp/data/dataset_impl.h"
#include "interp/data/loaders_impl.h"

namespace ss::data {

namespace fs = std::filesystem;
using namespace detail;

namespace {

RawType idx_type(const uint8_t* p, const std::string& name) {
  switch (p[2]) {
    case 0x08:
      return RawType::U8;
    case 0x09:
      return RawType::I8;
    case 0x0B:
      return RawType::I16;
    case 0x0C:
      return RawType::I32;
    case 0x0D:
      return RawType::F32;
    case 0x0E:
      return RawType::F64;
    default:
      io_error(name, "unknown IDX element type " + std::to_string(p[2]));
  }
}

// An IDX .gz inflated to exactly what its header declares: the header's
// bytes first, then its data, then the stream must end (Note [Inflate no
// more than declared]; issue 16: one declaring 10 images inflated to 1 GB).
// The compressed file is mapped, not read: inflate touches only the pages
// it consumes, so a .gz holding far more than its header declares costs no
// more than what the declaration needs.
std::string gunzip_idx(const std::string& name) {
  uint64_t size = regular_file_size(name);
  if (size < 18) io_error(name, "truncated gzip file");
  auto gz = FileMapping::map(name, static_cast<size_t>(size));
  Inflater inf(gz->data, gz->size, true, name);
  std::string out;
  uint64_t header = 4, data = 0;
  auto short_of = [&](uint64_t want) {
    io_error(name,
             "the header declares " + std::to_string(want) +
                 " bytes, the compressed data holds " +
                 std::to_string(out.size()));
  };
  // The magic and rank, then the dims: idx_sizes says when it knows both.
  while (!idx_sizes(reinterpret_cast<const uint8_t*>(out.data()),
                    out.size(),
                    name,
                    header,
                    data))
    if (!inf.fill(out, header)) short_of(header);
  // Deflate expands at most ~1032:1: a larger declaration cannot be true.
  if (data > gz->size * 1032ull + 1024)
    io_error(name,
             "the header declares " + std::to_string(data) +
                 " bytes of data, more than " + std::to_string(gz->size) +
                 " compressed bytes can hold");
  if (!inf.fill(out, header + data)) short_of(header + data);
  inf.expect_end("the " + std::to_string(header + data) +
                 " bytes its IDX header declares");
  return out;
}

// The element type and dims an IDX file declares, from its header alone:
// at most 36 bytes read, or inflated from a .gz (Note [MNIST's headers
// first]).
struct IdxHead {
  RawType type;
  ops::Shape dims;
};
IdxHead idx_head(const std::string& name, bool gz) {
  std::string out;
  uint64_t header = 4, data = 0;
  auto known = [&] {
    return idx_sizes(reinterpret_cast<const uint8_t*>(out.data()),
                     out.size(),
                     name,
                     header,
                     data);
  };
  if (gz) {
    uint64_t size = regular_file_size(name);
    if (size < 18) io_error(name, "truncated gzip file");
    auto file = FileMapping::map(name, static_cast<size_t>(size));
    Inflater inf(file->data, file->size, true, name);
    while (!known())
      if (!inf.fill(out, header)) io_error(name, "truncated IDX header");
  } else {
    uint64_t size = regular_file_size(name);
    out =
        read_range(name, 0, static_cast<size_t>(std::min<uint64_t>(size, 36)));
    if (!known())
      io_error(name,
               out.size() < 4 ? "not an IDX file (bad magic)"
                              : "truncated IDX header");
  }
  const uint8_t* p = reinterpret_cast<const uint8_t*>(out.data());
  IdxHead h{idx_type(p, name), {}};
  for (int i = 0; i < p[3]; ++i) h.dims.push_back(be32(p + 4 + 4 * i));
  return h;
}

// Note [Read no more than declared]
// A plain IDX file is read in two steps: its header (at most 36 bytes: the
// magic, the rank, 8 dims), and then exactly the bytes that header
// declares, once the file is known to hold them and no more. A file that
// declares 10 images but holds 1 GB was read whole before (issue 16); now
// it is an IOError at the size check, as a .gz that inflates past its
// declaration is (Note [Inflate no more than declared]).
std::shared_ptr<const std::string> read_idx(const std::string& name) {
  uint64_t size = regular_file_size(name);
  auto head = std::make_shared<const std::string>(
      read_range(name, 0, static_cast<size_t>(std::min<uint64_t>(size, 36))));
  uint64_t header = 0, data = 0;
  if (!idx_sizes(reinterpret_cast<const uint8_t*>(head->data()),
                 head->size(),
                 name,
                 header,
                 data))
    return head;             // too short: parse_idx says how
  if (data > size - header)  // the file holds the header: idx_sizes saw it
    io_error(name,
             "the header declares " + std::to_string(data) +
                 " bytes of data, but the file holds " +
                 std::to_string(size - header));
  if (header + data < size)
    io_error(name,
             "the file holds " + std::to_string(size) +
                 " bytes, more than the " + std::to_string(header + data) +
                 " its IDX header declares");
  return std::make_shared<const std::string>(
      read_range(name, 0, static_cast<size_t>(size)));
}

}  // namespace

namespace detail {

bool idx_sizes(const uint8_t* p,
               size_t n,
               const std::string& name,
               uint64_t& header,
               uint64_t& data) {
  header = 4;
  if (n < 4) return false;
  if (p[0] != 0 || p[1] != 0) io_error(name, "not an IDX file (bad magic)");
  RawType t = idx_type(p, name);
  int nd = p[3];
  if (nd == 0 || nd > 8)
    io_error(name, "IDX rank " + std::to_string(nd) + " is not supported");
  header = 4 + 4ull * nd;
  if (n < header) return false;
  // Every partial product must fit an int64, as ops::numel_of counts: a
  // shape such as [2 247 17367040 1560281088 0] holds no element, but its
  // first four dims overflow there (found by fuzz_idx: an OpError that
  // named no file, instead of this IOError).
  uint64_t count = 1;
  for (int i = 0; i < nd; ++i)
    if (!mul_ok(count, be32(p + 4 + 4 * i), count) ||
        count > static_cast<uint64_t>(INT64_MAX))
      io_error(name, "the shape's size overflows");
  if (!mul_ok(count, raw_size(t), data))
    io_error(name, "the shape's size overflows");
  return true;
}

}  // namespace detail

RawArray parse_idx(std::shared_ptr<const std::string> bytes,
                   const std::string& name) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(bytes->data());
  size_t n = bytes->size();
  uint64_t data = 0, nbytes = 0;
  if (!idx_sizes(p, n, name, data, nbytes)) {
    if (n < 4) io_error(name, "not an IDX file (bad magic)");
    io_error(name, "truncated IDX header");
  }
  RawType t = idx_type(p, name);
  RawArray a;
  a.type = t;
  for (int i = 0; i < p[3]; ++i) a.shape.push_back(be32(p + 4 + 4 * i));
  if (nbytes > n - data)
    io_error(name,
             "the header declares " + std::to_string(nbytes) +
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

std::shared_ptr<TensorStore> load_mnist(
    const types::RecordInfo& r,
    const std::map<std::string, int64_t>& dims,
    const std::string& dir) {
  const types::FieldInfo* img = nullptr;
  const types::FieldInfo* label = nullptr;
  for (const types::FieldInfo& f : r.fields) {
    if (!f.type.is_tensor()) continue;
    if (types::is_float(f.type.dtype) && !img)
      img = &f;
    else if (types::is_int(f.type.dtype) && !label)
      label = &f;
    else
      throw DataError("ShapeError",
                      "mnist needs " + r.name +
                          " to have one float field and one "
                          "int field, but it also has `" +
                          f.name + "`");
  }
  if (!img || !label)
    throw DataError("ShapeError",
                    "mnist needs " + r.name +
                        " to have one float field (the image) "
                        "and one int field (the label)");
  std::error_code ec;
  std::string prefix = fs::is_directory(dir, ec)
                           ? (fs::path(dir) / "train").string()
                           : dir;  // "<dir>/t10k" or "<dir>/train"
  // Note [MNIST's headers first]
  // Both files' headers are read and checked (types, ranks, the image's
  // shape against the field, one label per image) before either body is:
  // a labels file given where the images go was found only after the
  // images were read and converted (issue 32 item 11: 5-9 s and 965 MB
  // before the error).
  auto locate = [&](const std::string& kind, int rank) {
    std::vector<std::string> names = {
        prefix + "-" + kind + "-idx" + std::to_string(rank) + "-ubyte",
        prefix + "-" + kind + ".idx" + std::to_string(rank) + "-ubyte"};
    for (const std::string& n : names) {
      if (fs::exists(n, ec)) return std::make_pair(n, false);
      if (fs::exists(n + ".gz", ec)) return std::make_pair(n + ".gz", true);
    }
    io_error(names[0],
             "no such file (mnist(R, dir) reads dir/train-images-"
             "idx3-ubyte and dir/train-labels-idx1-ubyte, or "
             "mnist(R, \"dir/t10k\") the test files)");
  };
  auto [iname, igz] = locate("images", 3);
  auto [lname, lgz] = locate("labels", 1);
  const IdxHead ih = idx_head(iname, igz), lh = idx_head(lname, lgz);
  if (ih.type != RawType::U8 || ih.dims.size() < 2)
    throw DataError("ShapeError",
                    iname + ": expected u8 images [N rows cols], found " +
                        std::string(raw_name(ih.type)) + " " +
                        ops::shape_string(ih.dims));
  if (lh.dims.size() != 1)
    throw DataError(
        "ShapeError",
        lname + ": expected labels [N], found " + ops::shape_string(lh.dims));
  if (lh.dims[0] != ih.dims[0])
    throw DataError("ShapeError",
                    iname + " holds " + std::to_string(ih.dims[0]) +
                        " images, but " + lname + " " +
                        std::to_string(lh.dims[0]) + " labels");
  {
    ops::Shape want = field_shape(*img, dims);
    ops::Shape item(ih.dims.begin() + 1, ih.dims.end());
    if (ops::numel_of(want) != ops::numel_of(item))
      throw DataError("ShapeError",
                      "item 0 of " + iname + ", field `" + img->name +
                          "`: expected " + ops::shape_string(want) + " (" +
                          std::to_string(ops::numel_of(want)) +
                          " values), found " + ops::shape_string(item));
  }
  auto body = [](const std::string& n, bool gz) {
    return gz ? std::shared_ptr<const std::string>(
                    std::make_shared<std::string>(gunzip_idx(n)))
              : read_idx(n);
  };
  RawArray images = parse_idx(body(iname, igz), iname);
  RawArray labels = parse_idx(body(lname, lgz), lname);
  // The bodies are the headers' (checked above).
  ops::Shape fs_ = field_shape(*img, dims);
  int64_t n = images.shape[0];
  // u8 pixels scaled to [0, 1] as f32, shaped as the field.
  auto buf =
      std::make_shared<std::string>(images.numel() * sizeof(float), '\0');
  float* dst = reinterpret_cast<float*>(buf->data());
  const uint8_t* src = images.data();
  for (int64_t i = 0; i < images.numel(); ++i)
    dst[i] = src[i] * (1.0f / 255.0f);
  RawArray x;
  x.type = RawType::F32;
  x.shape = fs_;
  x.shape.insert(x.shape.begin(), n);
  x.bytes = std::move(buf);
  // IDX has its own element types (u8): the loader decodes them into the
  // fields' dtypes itself, since the file's arrays are not the user's to
  // convert (Note [No silent dtype conversion] is about files of arrays).
  std::map<std::string, RawArray> cols;
  cols[img->name] = dataset_detail::as_field_dtype(std::move(x), *img, iname);
  cols[label->name] =
      dataset_detail::as_field_dtype(std::move(labels), *label, lname);
  return make_store(r, dims, std::move(cols), {}, prefix + "-*");
}

}  // namespace ss::data
