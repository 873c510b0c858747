// stream_npz: `dataset(R, "x.npz", stream=true)`, an npz's members streamed
// as a folder of .npy files is (Note [Streaming an npz]).
#include <algorithm>
#include <memory>

#include "interp/data/dataset.h"
#include "interp/data/loaders_impl.h"

namespace ss::data::detail {

// Note [Streaming an npz]
// A streamed npz holds each array's bytes once, as a streamed folder of
// .npy files does (issue 32 item 11: read whole and then converted, a
// 512 MiB npz peaked at 1,036 MB). The file is mapped, not read, and its
// directories are checked whole first (zip_members: every check the
// in-memory parse_npz makes before it reads a member's data). Then each
// member that a field (or its `_lengths`) names:
//   - stored: the .npy lies in the file as it is. Its CRC is checked once,
//     16 MiB at a time, the pages read given back after each piece
//     (FileMapping::give_back), and it is then streamed like a mapped
//     .npy: rows are read from the mapping as batches load.
//   - deflated: a deflate stream cannot be read from at an offset, so the
//     member is inflated once, into memory of its own (an anonymous
//     FileMapping of exactly the size the .npy header and the zip entry
//     both declare, made only once they agree: Note [Inflate no more than
//     declared]), and streamed from there. The compressed pages are given
//     back as they are inflated, so the compressed and the inflated bytes
//     are never both resident.
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

// Member [m] of the npz that [file] maps, checked and ready to stream.
StreamArray stream_member(const std::shared_ptr<const FileMapping>& file,
                          const ZipMember& m) {
  const uint8_t* src = file->data + m.data;
  StreamArray a;
  if (m.method == 0) {
    if (crc_of(src, m.csize, file.get()) != m.crc)
      io_error(m.mname, "CRC mismatch (corrupt data)");
    RawArray h = npy_header(src, m.csize, m.mname);
    a.type = h.type;
    a.shape = h.shape;
    a.file = file;
    a.data = src + h.offset;
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
  a.data = mem->data + h.offset;
  a.file = std::move(mem);
  return a;
}

}  // namespace

std::shared_ptr<TensorStore> stream_npz(
    const types::RecordInfo& r,
    const std::map<std::string, int64_t>& dims,
    const std::string& path,
    const std::map<std::string, std::string>& renames) {
  uint64_t size = regular_file_size(path);
  auto file = FileMapping::map(path, static_cast<size_t>(size));
  const std::vector<ZipMember> members =
      zip_members(file->data, static_cast<size_t>(size), path);
  std::map<std::string, const ZipMember*> by_key;
  for (const ZipMember& m : members) by_key[m.key] = &m;
  // By key: two fields renamed to one array read (and inflate) it once.
  std::map<std::string, StreamArray> streamed;
  auto array = [&](const std::string& key) -> const StreamArray* {
    if (auto it = streamed.find(key); it != streamed.end()) return &it->second;
    auto it = by_key.find(key);
    if (it == by_key.end()) return nullptr;
    return &(streamed[key] = stream_member(file, *it->second));
  };
  std::map<std::string, StreamArray> cols;
  for (const types::FieldInfo& f : r.fields) {
    if (!f.type.is_tensor()) continue;
    const std::string& key = file_name_of(f, renames);
    const StreamArray* a = array(key);
    if (!a) {
      std::vector<std::string> have;
      for (const auto& [k, m] : by_key) have.push_back(k);
      no_array(path, key, f, r, have);
    }
    StreamArray col = *a;
    if (const StreamArray* l = array(key + "_lengths")) {
      RawArray la;
      la.type = l->type;
      la.shape = l->shape;
      la.bytes = std::make_shared<const std::string>(
          reinterpret_cast<const char*>(l->data),
          static_cast<size_t>(ops::numel_of(l->shape)) * raw_size(l->type));
      col.lengths = lengths_of(la, path, key + "_lengths");
    }
    cols[f.name] = std::move(col);
  }
  return make_stream_store(r, dims, std::move(cols), path, renames);
}

}  // namespace ss::data::detail
