// MNIST's IDX files (parse_idx) and load_mnist, which reads them (gzipped
// or not) into a record of an image and a label.
#include <algorithm>
#include <filesystem>

#include "interp/eval/lib/dataset.h"
#include "interp/eval/lib/dataset_impl.h"
#include "interp/eval/lib/loaders_impl.h"

namespace ss::eval {

namespace fs = std::filesystem;
using namespace detail;

RawArray parse_idx(std::shared_ptr<const std::string> bytes,
                   const std::string& name) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(bytes->data());
  size_t n = bytes->size();
  if (n < 4 || p[0] != 0 || p[1] != 0)
    io_error(name, "not an IDX file (bad magic)");
  RawType t;
  switch (p[2]) {
    case 0x08:
      t = RawType::U8;
      break;
    case 0x09:
      t = RawType::I8;
      break;
    case 0x0B:
      t = RawType::I16;
      break;
    case 0x0C:
      t = RawType::I32;
      break;
    case 0x0D:
      t = RawType::F32;
      break;
    case 0x0E:
      t = RawType::F64;
      break;
    default:
      io_error(name, "unknown IDX element type " + std::to_string(p[2]));
  }
  int nd = p[3];
  if (nd == 0 || nd > 8)
    io_error(name, "IDX rank " + std::to_string(nd) + " is not supported");
  if (n < 4 + 4ull * nd) io_error(name, "truncated IDX header");
  RawArray a;
  a.type = t;
  uint64_t count = 1, nbytes = 0;
  for (int i = 0; i < nd; ++i) {
    uint32_t d = be32(p + 4 + 4 * i);
    a.shape.push_back(d);
    if (!mul_ok(count, d, count)) io_error(name, "the shape's size overflows");
  }
  if (!mul_ok(count, raw_size(t), nbytes))
    io_error(name, "the shape's size overflows");
  size_t data = 4 + 4 * nd;
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
  auto open = [&](const std::string& kind, int rank) {
    std::vector<std::string> names = {
        prefix + "-" + kind + "-idx" + std::to_string(rank) + "-ubyte",
        prefix + "-" + kind + ".idx" + std::to_string(rank) + "-ubyte"};
    for (const std::string& n : names) {
      if (fs::exists(n, ec)) return std::make_pair(n, read_whole_file(n));
      if (fs::exists(n + ".gz", ec))
        return std::make_pair(
            n + ".gz",
            std::shared_ptr<const std::string>(std::make_shared<std::string>(
                gunzip(*read_whole_file(n + ".gz"), n + ".gz"))));
    }
    io_error(names[0],
             "no such file (mnist(R, dir) reads dir/train-images-"
             "idx3-ubyte and dir/train-labels-idx1-ubyte, or "
             "mnist(R, \"dir/t10k\") the test files)");
  };
  auto [iname, ibytes] = open("images", 3);
  auto [lname, lbytes] = open("labels", 1);
  RawArray images = parse_idx(ibytes, iname);
  RawArray labels = parse_idx(lbytes, lname);
  if (images.type != RawType::U8 || images.shape.size() < 2)
    throw DataError("ShapeError",
                    iname + ": expected u8 images [N rows cols], found " +
                        std::string(raw_name(images.type)) + " " +
                        ops::shape_string(images.shape));
  ops::Shape fs_ = field_shape(*img, dims);
  int64_t n = images.shape[0];
  int64_t per = images.numel() / std::max<int64_t>(n, 1);
  if (ops::numel_of(fs_) != per)
    throw DataError("ShapeError",
                    "item 0 of " + iname + ", field `" + img->name +
                        "`: expected " + ops::shape_string(fs_) + " (" +
                        std::to_string(ops::numel_of(fs_)) +
                        " values), found " +
                        ops::shape_string(ops::Shape(images.shape.begin() + 1,
                                                     images.shape.end())));
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
  if (labels.shape.size() != 1)
    throw DataError("ShapeError",
                    lname + ": expected labels [N], found " +
                        ops::shape_string(labels.shape));
  // IDX has its own element types (u8): the loader decodes them into the
  // fields' dtypes itself, since the file's arrays are not the user's to
  // convert (Note [No silent dtype conversion] is about files of arrays).
  std::map<std::string, RawArray> cols;
  cols[img->name] = dataset_detail::as_field_dtype(std::move(x), *img, iname);
  cols[label->name] =
      dataset_detail::as_field_dtype(std::move(labels), *label, lname);
  return make_store(r, dims, std::move(cols), {}, prefix + "-*");
}

}  // namespace ss::eval
