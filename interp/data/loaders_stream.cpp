// stream_dataset: a .npy folder or a .safetensors file checked from its
// headers (a small JSON reader of its own) and then mapped (FileMapping);
// an .npz is loaders_npz.cpp's. npy_in_place maps a .npy for both ways of
// reading a folder.
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

#include "interp/data/dataset.h"
#include "interp/data/dataset_impl.h"
#include "interp/data/loaders_impl.h"
#include "interp/data/safetensors.h"

namespace ss::data {

namespace fs = std::filesystem;
using namespace detail;

FileMapping::~FileMapping() {
  if (data) ::munmap(const_cast<uint8_t*>(data), size);
}

std::shared_ptr<const FileMapping> FileMapping::map(const std::string& path,
                                                    size_t size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
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

std::shared_ptr<FileMapping> FileMapping::anonymous(const std::string& name,
                                                    size_t size) {
  auto m = std::make_shared<FileMapping>();
  m->path = name;
  if (size) {
    void* p = ::mmap(nullptr,
                     size,
                     PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS,
                     -1,
                     0);
    if (p == MAP_FAILED)
      io_error(name,
               "cannot allocate " + std::to_string(size) +
                   " bytes: " + std::strerror(errno));
    m->data = static_cast<const uint8_t*>(p);
    m->size = size;
  }
  return m;
}

void FileMapping::give_back(const uint8_t* p, size_t n) const {
  static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  uintptr_t from = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  uintptr_t to = (reinterpret_cast<uintptr_t>(p) + n) / page * page;
  // Advice only: a failure leaves the pages resident, nothing else.
  if (to > from)
    ::madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
}

namespace detail {

RawArray npy_in_place(const std::string& file) {
  uint64_t size = regular_file_size(file);
  // The header (only), checked against the file's size, before mapping:
  // the first 4 KiB, or as much as a longer header declares (to 16 MiB).
  std::string head =
      read_range(file, 0, static_cast<size_t>(std::min<uint64_t>(size, 4096)));
  if (head.size() >= 12 && std::memcmp(head.data(), "\x93NUMPY", 6) == 0) {
    const uint8_t* p = reinterpret_cast<const uint8_t*>(head.data());
    uint64_t need = p[6] == 1 ? 10 + le16(p + 8) : 12 + uint64_t{le32(p + 8)};
    need = std::min<uint64_t>({need, size, uint64_t{16} << 20});
    if (need > head.size())
      head = read_range(file, 0, static_cast<size_t>(need));
  }
  RawArray a = parse_npy(
      std::make_shared<const std::string>(std::move(head)), 0, size, file);
  a.bytes = nullptr;
  a.file = FileMapping::map(file, size);
  a.at = a.file->data + a.offset;
  a.offset = 0;
  return a;
}

StreamArray streamed(const RawArray& a) {
  StreamArray s;
  s.type = a.type;
  s.shape = a.shape;
  s.data = a.data();
  s.file = a.file;
  return s;
}

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

void no_array(const std::string& source,
              const std::string& key,
              const types::FieldInfo& f,
              const types::RecordInfo& r,
              const std::vector<std::string>& have) {
  std::string list;
  for (const std::string& k : have) list += (list.empty() ? "" : ", ") + k;
  throw DataError("ShapeError",
                  source + " has no array `" + key + "` for field `" + f.name +
                      "` of " + r.name +
                      " (it has: " + (list.empty() ? "nothing" : list) + ")");
}

}  // namespace detail

namespace {

// The arrays of a safetensors file, its header checked whole by the one
// header reader (interp/data/safetensors_header.h) without reading the
// data.
std::map<std::string, SafetensorsEntry> safetensors_entries(
    const std::string& path, uint64_t size, uint64_t& data_at) {
  SafetensorsHeader h;
  try {
    h = read_safetensors_header(
        path, size, [&](uint64_t at, void* dst, uint64_t n) {
          std::string b = read_range(path, at, static_cast<size_t>(n));
          std::memcpy(dst, b.data(), b.size());
        });
  } catch (const SafetensorsError& e) {
    throw DataError("IOError", e.what());
  }
  data_at = h.data_start;
  std::map<std::string, SafetensorsEntry> out;
  for (SafetensorsEntry& e : h.entries) out[e.name] = std::move(e);
  return out;
}

std::shared_ptr<TensorStore> stream_safetensors(
    const types::RecordInfo& r,
    const std::map<std::string, int64_t>& dims,
    const std::string& path,
    const std::map<std::string, std::string>& renames) {
  uint64_t size = regular_file_size(path);
  uint64_t data_at = 0;
  std::map<std::string, SafetensorsEntry> entries =
      safetensors_entries(path, size, data_at);
  // Every checked: map the file; nothing of the data is read.
  auto file = FileMapping::map(path, size);
  std::map<std::string, StreamArray> cols;
  for (const types::FieldInfo& f : r.fields) {
    if (!f.type.is_tensor()) continue;
    const std::string& key = file_name_of(f, renames);
    auto it = entries.find(key);
    if (it == entries.end()) {
      std::vector<std::string> have;
      for (const auto& [k, v] : entries) have.push_back(k);
      no_array(path, key, f, r, have);
    }
    StreamArray a;
    a.type = dataset_detail::raw_of(it->second.dtype);
    a.shape = it->second.shape;
    a.data = file->data + data_at + it->second.begin;
    a.file = file;
    if (auto lit = entries.find(key + "_lengths"); lit != entries.end()) {
      RawArray la;
      la.type = dataset_detail::raw_of(lit->second.dtype);
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
    StreamArray a = streamed(npy_in_place(file));
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
  if (ends_with(path, ".npz")) return stream_npz(r, dims, path, renames);
  if (!ends_with(path, ".csv") && fs::is_directory(path, ec))
    return stream_npy_dir(r, dims, path, renames);
  // .csv (text): read now.
  return load_dataset(r, dims, path, renames);
}

}  // namespace ss::data
