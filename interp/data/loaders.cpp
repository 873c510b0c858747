// File loaders for datasets: .npy, .npz (zip, stored or deflated), a
// folder of .npy, .safetensors, .csv and MNIST's IDX files. Every size a
// header declares is checked against the bytes present before anything is
// allocated; a bad file is an IOError (or a ShapeError for a shape or dtype
// the record cannot take) naming the path, never a crash. stream_dataset
// checks a .npy folder's, a .safetensors file's or an .npz's headers the
// same way (reading the headers only; the safetensors JSON with a small
// reader of its own) and then maps the files (see dataset.h).
//
// This file: the shared IOError helper, read_whole_file and load_dataset,
// which picks a format's parser (loaders_npy.cpp, loaders_zip.cpp,
// loaders_csv.cpp); MNIST's IDX files are in loaders_idx.cpp, streaming
// (stream_dataset) in loaders_stream.cpp and an .npz's, in memory or
// streamed, in loaders_npz.cpp. An .npz's members and a folder's .npy
// files are read in place from a mapping (Note [Reading an npz in place]).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "interp/data/dataset.h"
#include "interp/data/loaders_impl.h"
#include "interp/data/safetensors.h"

namespace ss::data {

namespace detail {

[[noreturn]] void io_error(const std::string& name, const std::string& what) {
  throw DataError("IOError", name + ": " + what);
}

}  // namespace detail

namespace fs = std::filesystem;
using namespace detail;

// --------------------------------------------------------------- readers

namespace detail {

// The stat comes first, and opening uses O_NONBLOCK: a FIFO named like a
// data file must not wait for a writer, and anything but a regular file is
// refused (issue 16: a FIFO named x.npy blocked dataset() forever).
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
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
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

}  // namespace detail

std::shared_ptr<const std::string> read_whole_file(const std::string& path) {
  uint64_t size = regular_file_size(path);
  return std::make_shared<const std::string>(
      read_range(path, 0, static_cast<size_t>(size)));
}

// ---------------------------------------------------------------- sources

namespace {

// Lengths of size-variable fields: an int array `<name>_lengths`, if any.
std::map<std::string, std::vector<int64_t>> lengths_from(
    const types::RecordInfo& r,
    const std::map<std::string, std::string>& renames,
    const std::function<const RawArray*(const std::string&)>& find,
    const std::string& source) {
  std::map<std::string, std::vector<int64_t>> out;
  for (const types::FieldInfo& f : r.fields) {
    const std::string key = file_name_of(f, renames) + "_lengths";
    if (const RawArray* a = find(key))
      out[f.name] = lengths_of(*a, source, key);
  }
  return out;
}

}  // namespace

namespace detail {

std::shared_ptr<TensorStore> from_arrays(
    const types::RecordInfo& r,
    const std::map<std::string, int64_t>& dims,
    const std::map<std::string, RawArray>& arrays,
    const std::map<std::string, std::string>& renames,
    const std::string& path) {
  std::map<std::string, RawArray> cols;
  for (const types::FieldInfo& f : r.fields) {
    auto it = arrays.find(file_name_of(f, renames));
    if (it == arrays.end()) {
      std::vector<std::string> have;
      for (const auto& [k, v] : arrays) have.push_back(k);
      no_array(path, file_name_of(f, renames), f, r, have);
    }
    cols[f.name] = it->second;
  }
  auto find = [&](const std::string& k) -> const RawArray* {
    auto it = arrays.find(k);
    return it == arrays.end() ? nullptr : &it->second;
  };
  return make_store(
      r, dims, std::move(cols), lengths_from(r, renames, find, path), path);
}

}  // namespace detail

std::shared_ptr<TensorStore> load_dataset(
    const types::RecordInfo& r,
    const std::map<std::string, int64_t>& dims,
    const std::string& path,
    const std::map<std::string, std::string>& renames) {
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
  if (ends_with(path, ".npz")) return load_npz(r, dims, path, renames);
  if (ends_with(path, ".csv")) {
    std::map<std::string, RawArray> cols = load_csv(path, r, dims, renames);
    return make_store(r, dims, std::move(cols), {}, path);
  }
  if (fs::is_directory(path, ec)) {
    std::map<std::string, RawArray> arrays;
    auto load = [&](const std::string& key, bool required) {
      fs::path file = fs::path(path) / (key + ".npy");
      if (!required && !fs::exists(file, ec)) return;
      if (!fs::exists(file, ec))
        throw DataError("IOError",
                        file.string() +
                            ": no such file (the .npy "
                            "for field of that name)");
      arrays[key] = npy_in_place(file.string());
    };
    for (const types::FieldInfo& f : r.fields) {
      load(file_name_of(f, renames), true);
      load(file_name_of(f, renames) + "_lengths", false);
    }
    return from_arrays(r, dims, arrays, renames, path);
  }
  if (!fs::exists(path, ec)) io_error(path, "no such file or directory");
  io_error(path,
           "unknown dataset format (expected .safetensors, .npz, .csv "
           "or a directory of .npy files)");
}

}  // namespace ss::data
