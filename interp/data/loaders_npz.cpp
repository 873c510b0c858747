// An .npz read in place: `dataset(R, "x.npz")` (load_npz) and
// `dataset(R, "x.npz", stream=true)` (stream_npz) read the members a
// record names from the mapped file (Note [Reading an npz in place]).
#include <algorithm>
#include <memory>

#include "interp/data/dataset.h"
#include "interp/data/loaders_impl.h"

namespace ss::data::detail {

// Note [Reading an npz in place]
// An npz's arrays are held once, in memory or streamed, as a folder of
// .npy files is (issue 32 item 11: read whole and then converted, a
// 512 MiB npz peaked at 1,036 MB). The file is mapped, not read, and its
// directories are checked whole first (zip_members: the central
// directory against each local header, names, sizes, methods and the
// file's bounds). Then each member that a field (or its `_lengths`) names:
//   - stored: the .npy lies in the file as it is. Its CRC is checked once,
//     16 MiB at a time, the pages read given back after each piece
//     (FileMapping::give_back), and the array is read where it lies.
//   - deflated: a deflate stream cannot be read from at an offset, so the
//     member is inflated once, into memory of its own (an anonymous
//     FileMapping of exactly the size the .npy header and the zip entry
//     both declare, made only once they agree: Note [Inflate no more than
//     declared]). The compressed pages are given back as they are
//     inflated, so the compressed and the inflated bytes are never both
//     resident.
// Streamed (stream_npz), the members are read as batches load. In memory
// (load_npz), make_store converts each member into its field's tensor a
// piece at a time and gives back each piece it has read when no other
// field reads that member (Note [Converting a piece at a time] in
// dataset.cpp): the file's pages, or the inflated bytes, go as the
// tensor's come, so the data is resident once, not twice.
// A member that no field names is checked in the directories but never
// read, so its CRC is not computed (a deflated one would have to be
// inflated for it). On several devices each worker maps (and inflates)
// the file itself, as it does a safetensors file.

namespace {

// The .npy header of [size] bytes at [p]: from its first 1 MiB, which
// holds any header numpy writes (inflate_member reads as much).
RawArray npy_header(const uint8_t* p, uint64_t size, const std::string& mname) {
  size_t head = static_cast<size_t>(std::min<uint64_t>(size, size_t{1} << 20));
  return parse_npy(std::make_shared<const std::string>(
                       reinterpret_cast<const char*>(p), head),
                   0,
                   size,
                   mname);
}

// Member [m] of the npz that [file] maps, checked, its data in place.
RawArray member_in_place(const std::shared_ptr<const FileMapping>& file,
                         const ZipMember& m) {
  const uint8_t* src = file->data + m.data;
  RawArray a;
  if (m.method == 0) {
    if (crc_of(src, m.csize, file.get()) != m.crc)
      io_error(m.mname, "CRC mismatch (corrupt data)");
    RawArray h = npy_header(src, m.csize, m.mname);
    a.type = h.type;
    a.shape = h.shape;
    a.file = file;
    a.at = src + h.offset;
    return a;
  }
  std::shared_ptr<FileMapping> mem;
  RawArray h = inflate_member(
      src,
      m,
      [&](size_t size) {
        mem = FileMapping::anonymous(m.mname, size);
        return mem->bytes();
      },
      file.get());
  a.type = h.type;
  a.shape = h.shape;
  a.at = mem->data + h.offset;
  a.file = std::move(mem);
  return a;
}

// The members [r]'s fields name in the npz at [path] (and their
// `_lengths`), by key, each read once (two fields renamed to one array
// share it); a field with no member is a ShapeError naming those there.
std::map<std::string, RawArray> named_members(
    const types::RecordInfo& r,
    const std::string& path,
    const std::map<std::string, std::string>& renames) {
  uint64_t size = regular_file_size(path);
  auto file = FileMapping::map(path, static_cast<size_t>(size));
  const std::vector<ZipMember> members =
      zip_members(file->data, static_cast<size_t>(size), path);
  std::map<std::string, const ZipMember*> by_key;
  for (const ZipMember& m : members) by_key[m.key] = &m;
  std::map<std::string, RawArray> out;
  auto read = [&](const std::string& key) {
    auto it = by_key.find(key);
    if (it == by_key.end() || out.count(key)) return it != by_key.end();
    out[key] = member_in_place(file, *it->second);
    return true;
  };
  for (const types::FieldInfo& f : r.fields) {
    if (!f.type.is_tensor()) continue;
    const std::string& key = file_name_of(f, renames);
    if (!read(key)) {
      std::vector<std::string> have;
      for (const auto& [k, m] : by_key) have.push_back(k);
      no_array(path, key, f, r, have);
    }
    read(key + "_lengths");
  }
  return out;
}

}  // namespace

std::shared_ptr<TensorStore> load_npz(
    const types::RecordInfo& r,
    const std::map<std::string, int64_t>& dims,
    const std::string& path,
    const std::map<std::string, std::string>& renames) {
  return from_arrays(r, dims, named_members(r, path, renames), renames, path);
}

std::shared_ptr<TensorStore> stream_npz(
    const types::RecordInfo& r,
    const std::map<std::string, int64_t>& dims,
    const std::string& path,
    const std::map<std::string, std::string>& renames) {
  const std::map<std::string, RawArray> arrays =
      named_members(r, path, renames);
  std::map<std::string, StreamArray> cols;
  for (const types::FieldInfo& f : r.fields) {
    if (!f.type.is_tensor()) continue;
    const std::string& key = file_name_of(f, renames);
    const RawArray& a = arrays.at(key);
    StreamArray col;
    col.type = a.type;
    col.shape = a.shape;
    col.data = a.data();
    col.file = a.file;
    if (auto l = arrays.find(key + "_lengths"); l != arrays.end())
      col.lengths = lengths_of(l->second, path, key + "_lengths");
    cols[f.name] = std::move(col);
  }
  return make_stream_store(r, dims, std::move(cols), path, renames);
}

}  // namespace ss::data::detail
