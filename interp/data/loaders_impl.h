#pragma once
// The loaders' internals, shared by loaders*.cpp (one format each): byte
// readers, the IOError helper, gunzip, zip members and a field's name in
// the file. Not included outside interp/data/.

#include <zlib.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "interp/data/dataset.h"

namespace ss::data::detail {

[[noreturn]] void io_error(const std::string& name, const std::string& what);

inline uint16_t le16(const uint8_t* p) {
  return p[0] | (p[1] << 8);
}
inline uint32_t le32(const uint8_t* p) {
  return p[0] | (p[1] << 8) | (p[2] << 16) |
         (static_cast<uint32_t>(p[3]) << 24);
}
inline uint64_t le64(const uint8_t* p) {
  return le32(p) | (static_cast<uint64_t>(le32(p + 4)) << 32);
}
inline uint32_t be32(const uint8_t* p) {
  return (static_cast<uint32_t>(p[0]) << 24) | (p[1] << 16) | (p[2] << 8) |
         p[3];
}

// A regular file's size, or an IOError ("no such file", "not a regular
// file": a FIFO or device is never opened for reading; loaders.cpp).
uint64_t regular_file_size(const std::string& path);
// [n] bytes of [path] from [at] (the file holds them), or an IOError.
std::string read_range(const std::string& path, uint64_t at, size_t n);

// n * size, or false on overflow.
inline bool mul_ok(uint64_t a, uint64_t b, uint64_t& out) {
  return !__builtin_mul_overflow(a, b, &out);
}

// Note [Inflate no more than declared]
// A deflate stream says nothing trustworthy about how much it inflates to
// (gzip's ISIZE and a zip entry's sizes are the writer's word; issue 16: a
// .gz IDX declaring 10 images inflated to 1 GB before it was refused, an npz
// of overlapping members to 3.1 GB). So a loader inflates incrementally:
// first the format's own header, which declares the shape, then exactly the
// bytes that shape needs, and then asks the stream to end there. Output past
// the declared size is an IOError after one more byte, never an allocation.
class Inflater {
 public:
  // [gzip] for a gzip stream, else a raw deflate stream (zip members).
  // [mapped]: [src] lies in that read-only file mapping, and the input
  // already inflated is given back as it goes (Note [Reading an npz in place]).
  Inflater(const uint8_t* src,
           size_t n,
           bool gzip,
           std::string name,
           const FileMapping* mapped = nullptr);
  ~Inflater();
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
  // Inflates until [out] holds [size] bytes or the stream ends; false when
  // it ended first (out then holds what there was). IOError on corrupt or
  // truncated data.
  bool fill(std::string& out, size_t size);
  // The same into [out], which holds [at] bytes already and room for
  // [size]; [at] is advanced.
  bool fill(uint8_t* out, size_t& at, size_t size);
  // IOError unless the stream ends exactly here; [declared] says what
  // declared the size ("the IDX header declares 7856 bytes").
  void expect_end(const std::string& declared);

 private:
  // One inflate() call with input fed; true at the stream's end.
  bool step();
  z_stream z_{};
  size_t in_left_;
  const FileMapping* mapped_;
  const uint8_t* given_back_;  // the input before this is given back
  bool ended_ = false;
  std::string name_;
};

// The bytes an IDX header at [p] (of [n] present) occupies and the data it
// declares (loaders_idx.cpp); false while [n] is too short to tell.
bool idx_sizes(const uint8_t* p,
               size_t n,
               const std::string& name,
               uint64_t& header,
               uint64_t& data);

// One member of a zip, its central directory entry checked against its
// local header, the other entries and the file (loaders_zip.cpp).
struct ZipMember {
  std::string member, mname;  // its name; "file.npz[name]" for messages
  std::string key;            // the array's name: the member's less ".npy"
  uint16_t method;
  uint32_t crc;
  uint64_t csize, usize, lho, data;
};

// The members of the zip [p] ([n] bytes, named [name] in messages), every
// check made that needs no member's data: the directories agree, members
// are disjoint (Note [Zip members are disjoint]), no two share a key, no
// member declares more than deflate can produce, and each is stored or
// deflated, unencrypted. IOError otherwise.
std::vector<ZipMember> zip_members(const uint8_t* p,
                                   size_t n,
                                   const std::string& name);

// The CRC-32 of [n] bytes at [p]; when [mapped] holds them, the pages
// read are given back as it goes.
uint32_t crc_of(const uint8_t* p,
                size_t n,
                const FileMapping* mapped = nullptr);

// A deflated npz member [m] whose data is at [src]: its .npy header first,
// then exactly the bytes that header declares (which must be the entry's
// usize; Note [Inflate no more than declared]) into the buffer that
// [buffer] returns for usize bytes, the CRC checked. Returns the parsed
// header (its offset the data's within the buffer). [mapped]: see
// Inflater.
RawArray inflate_member(const uint8_t* src,
                        const ZipMember& m,
                        const std::function<uint8_t*(size_t)>& buffer,
                        const FileMapping* mapped = nullptr);

// A `<field>_lengths` array read into a vector (small: one int an item);
// ShapeError unless a 1-d int array (loaders_stream.cpp).
std::vector<int64_t> lengths_of(const RawArray& a,
                                const std::string& source,
                                const std::string& array);

// The ShapeError of a source without the array [key] for field [f] of
// [r]; [have] lists the arrays it has.
[[noreturn]] void no_array(const std::string& source,
                           const std::string& key,
                           const types::FieldInfo& f,
                           const types::RecordInfo& r,
                           const std::vector<std::string>& have);

// `dataset(R, path)` of an .npz: the members [r] names, read in place and
// converted a piece at a time (Note [Reading an npz in place],
// loaders_npz.cpp).
std::shared_ptr<TensorStore> load_npz(
    const types::RecordInfo& r,
    const std::map<std::string, int64_t>& dims,
    const std::string& path,
    const std::map<std::string, std::string>& renames);

// `dataset(R, path, stream=true)` of an .npz (loaders_npz.cpp).
std::shared_ptr<TensorStore> stream_npz(
    const types::RecordInfo& r,
    const std::map<std::string, int64_t>& dims,
    const std::string& path,
    const std::map<std::string, std::string>& renames);

// The .npy file at [path], its header checked against the file's size
// and the file then mapped: the array read in place (loaders_stream.cpp).
RawArray npy_in_place(const std::string& path);

// A streamed column over [a]'s bytes, which lie in a mapping.
StreamArray streamed(const RawArray& a);

// A store of [r] from [arrays] (by the file's names; [renames] maps a
// field to its array), their `_lengths` arrays cutting size-variable
// fields (loaders.cpp).
std::shared_ptr<TensorStore> from_arrays(
    const types::RecordInfo& r,
    const std::map<std::string, int64_t>& dims,
    const std::map<std::string, RawArray>& arrays,
    const std::map<std::string, std::string>& renames,
    const std::string& path);

inline bool ends_with(const std::string& s, const std::string& suf) {
  return s.size() >= suf.size() &&
         s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

inline const std::string& file_name_of(
    const types::FieldInfo& f,
    const std::map<std::string, std::string>& renames) {
  auto it = renames.find(f.name);
  return it == renames.end() ? f.name : it->second;
}

}  // namespace ss::data::detail
