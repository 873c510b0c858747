#pragma once
// Datasets (library.md, Data). Every source is read into a TensorDataset:
// each field held as one tensor with a leading item axis, or, for a field
// with a size variable (`tokens: [n] i64`), one tensor per item. The items
// are checked against the record type once, when the dataset is made.
//
// `dataset(R, path, stream=true)` on a directory of .npy files or a
// .safetensors file makes a streamed dataset instead: the headers are read
// and checked (the same checks as the in-memory loaders: a truncated file
// is an IOError at creation), the file(s) are memory-mapped read-only, and
// nothing else is read. Items are read, converted and checked (shape,
// dtype, domain, size variables) only as batches are loaded (load_rows),
// on the loader threads; a bad item is a DataError there, raised by the
// cursor in the main thread at the `for` loop's line. A field whose file
// dtype is the field's dtype, at an aligned offset, is kept as a tensor
// view over the mapping (rows are copied out of it as they are); other
// fields are converted per batch. The mapping lives as long as any value
// (a split, a take, a Batches, a running cursor) holds the store; the
// file must not be rewritten or truncated meanwhile (its name may go:
// the mapping keeps the data). An .npz streams the same way (Note
// [Streaming an npz] in loaders_npz.cpp): a stored member is
// mapped, a deflated one inflated once into memory of its own. Other
// formats (.csv; mnist(...)) accept stream=true and read the whole file
// now.
//
// Loaders (loaders.cpp) produce RawArrays: the bytes of a file's array with
// the file's element type. make_store converts them to the field's dtype:
//   - any float (f16 bf16 f32 f64) -> any float field (f64 -> f32 rounds);
//   - any int (u8 i8 i16 u16 i32 u32 i64 u64) -> any int field, when every
//     value fits the field's dtype (else a ShapeError);
//   - bool -> bool fields only.
// Anything else (ints for a float field, floats for an int field) is a
// ShapeError: a wrong dtype.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "interp/eval/objects.h"
#include "ops/core/tensor.h"
#include "ops/core/type.h"

namespace ss::data {

/// A data error before it reaches the `.ss` line: kind is "IOError",
/// "ShapeError", "DomainError" or "ValueError"; the message names the path,
/// the item, the field, the expected and the found.
struct DataError : std::runtime_error {
  DataError(std::string k,
            const std::string& message,
            std::vector<std::string> notes = {})
      : std::runtime_error(message),
        kind(std::move(k)),
        notes(std::move(notes)) {}
  std::string kind;
  /// The RuntimeError's notes; "help: ..." ones render as help lines.
  std::vector<std::string> notes;
};

/// Element types found in files (numpy's, safetensors', IDX's).
enum class RawType {
  Bool,
  U8,
  I8,
  I16,
  U16,
  I32,
  U32,
  I64,
  U64,
  F16,
  BF16,
  F32,
  F64
};
int raw_size(RawType t);
const char* raw_name(RawType t);  // numpy style: "u1", "f4", "b1"
bool raw_is_float(RawType t);
bool raw_is_int(RawType t);
/// The int element at [p]; false when it does not fit an int64 (a u64
/// above 2^63) or [t] is not an int type.
bool raw_int(RawType t, const uint8_t* p, int64_t& out);

struct FileMapping;

/// An array read from a file: little-endian, C order, [count] elements of
/// [type] at bytes->data() + offset, or, when [file] is set, at [at]
/// inside that mapping (an npz's member read in place or inflated into
/// memory of its own: Note [Reading an npz in place]).
struct RawArray {
  RawType type = RawType::F32;
  ops::Shape shape;
  std::shared_ptr<const std::string> bytes;
  size_t offset = 0;
  std::shared_ptr<const FileMapping> file;
  const uint8_t* at = nullptr;
  const uint8_t* data() const {
    return file ? at : reinterpret_cast<const uint8_t*>(bytes->data()) + offset;
  }
  int64_t numel() const { return ops::numel_of(shape); }
};

/// A RawArray with its own copy of a tensor's bytes.
RawArray raw_from_tensor(const ops::Tensor& t);

/// A file mapped read-only into memory; unmapped when the last holder (a
/// StreamSource, a tensor view over it) lets go.
struct FileMapping {
  std::string path;
  const uint8_t* data = nullptr;
  size_t size = 0;
  FileMapping() = default;
  FileMapping(const FileMapping&) = delete;
  FileMapping& operator=(const FileMapping&) = delete;
  ~FileMapping();
  /// Maps [path], which must still hold [size] bytes (its headers were
  /// checked against that size before); an IOError when it cannot.
  static std::shared_ptr<const FileMapping> map(const std::string& path,
                                                size_t size);
  /// [size] bytes of zeroed memory of no file, which its maker fills
  /// before sharing it (an npz's inflated member, Note [Streaming an
  /// npz]); [name] names it in messages. An IOError when it cannot.
  static std::shared_ptr<FileMapping> anonymous(const std::string& name,
                                                size_t size);
  /// Writable bytes of an anonymous mapping, for its maker.
  uint8_t* bytes() { return const_cast<uint8_t*>(data); }
  /// Gives back the resident pages wholly inside [p, p + n), so bytes
  /// read once (a CRC, a deflate stream, a member converted into a
  /// tensor) are not kept. A file's pages are read again from the file if
  /// touched; an anonymous mapping's read as zeros, so its bytes are given
  /// back only when nothing reads them again.
  void give_back(const uint8_t* p, size_t n) const;
};

/// A streamed field's array: [shape] (the file's, with the leading item
/// axis) elements of [type] at [data], inside [file]. Not checked against
/// the field beyond the item count: that happens as items load.
struct StreamArray {
  RawType type = RawType::F32;
  ops::Shape shape;
  const uint8_t* data = nullptr;
  std::shared_ptr<const FileMapping> file;
  /// A tensor over the same mapped bytes, when [type] is the field's dtype
  /// and [data] is aligned to it: rows are copied out of it unconverted.
  /// Read-only memory: never written.
  ops::Tensor view;
  /// A size-variable field's item lengths (`<field>_lengths`), if given.
  std::optional<std::vector<int64_t>> lengths;
};

/// What a streamed dataset reads from. [path] and [renames] are kept so
/// that a worker can map the same file(s) and load its own part of each
/// batch (devices.md 8) with load_rows.
struct StreamSource {
  std::string path;
  std::map<std::string, std::string> renames;
  std::map<std::string, int64_t> dims;
  /// By field name: every tensor field of the record.
  std::map<std::string, StreamArray> arrays;
};

struct Rows;

/// Note [Datasets written in a host language]
/// A dataset whose items come from the host language's object (the Python
/// module's `shapescript.Dataset(R, obj)`: `__getitems__(indices)`, or
/// `__getitem__(i)` one at a time): as a streamed dataset's, its items are
/// read as batches load (on the loader threads) and checked then, by
/// load_rows, the batch's as a whole. On several devices it goes to each
/// worker as the host's payload (a pickle of the object), from which the
/// worker's host makes the source again (host_source_maker), and each
/// worker loads its own rows; a source with no payload (an object of a
/// class in the main script, which workers never import) cannot be sent,
/// and the host reads it whole into memory instead, with the seed's
/// warning.
struct HostSource {
  virtual ~HostSource() = default;
  /// Items [rows] (store indices): each fixed-shape field stacked, each
  /// size-variable field one tensor per item; unchecked. Throws DataError,
  /// or eval::HostRaised for what the host's object raised.
  virtual Rows load(const std::vector<int64_t>& rows) const = 0;
  /// What makes it again in another process of the host; "" when nothing
  /// can.
  virtual std::string payload() const = 0;
  /// Names the dataset in messages ("Dataset(Digit)").
  virtual std::string name() const = 0;
};
/// Makes a source from its payload, in a worker; set by the host's module
/// (null: no host, so no such dataset reaches this process).
using HostSourceMaker =
    std::shared_ptr<const HostSource> (*)(const std::string& payload);
void set_host_source_maker(HostSourceMaker m);
HostSourceMaker host_source_maker();

/// A TensorDataset's fixed fields kept on a GPU (Note [Datasets kept on a
/// GPU] in dataset_resident.cpp), by (field, GPU index).
struct ResidentFields {
  std::mutex mu;
  std::map<std::pair<std::string, int>, ops::Tensor> on;
};

/// The checked tensors of a TensorDataset, shared by its splits and takes,
/// or (when [stream] is set) a streamed dataset's mapped arrays, or (when
/// [host] is set) a host language's object.
struct TensorStore {
  const types::RecordInfo* info = nullptr;
  int64_t n = 0;
  /// Fixed-shape fields: [n ...field shape]. Empty when streamed.
  std::map<std::string, ops::Tensor> fields;
  /// Fields with a size variable: one tensor per item. Empty when streamed.
  std::map<std::string, std::vector<ops::Tensor>> items;
  /// Set for a streamed dataset: items are read from here as loaded.
  std::shared_ptr<const StreamSource> stream;
  /// Set for a dataset of the host language's: items are read from here as
  /// loaded (Note [Datasets written in a host language]), dims with it.
  std::shared_ptr<const HostSource> host;
  std::map<std::string, int64_t> host_dims;

  /// Items are read and checked as batches load (a streamed or a host's
  /// dataset), not once when it was made.
  bool checked_as_loaded() const { return stream || host; }
  /// Its fixed fields' copies on the GPUs its batches go to.
  std::shared_ptr<ResidentFields> resident = std::make_shared<ResidentFields>();
};

/// Store items [rows] (store indices, each in 0..n), in that order: each
/// fixed-shape field as one [rows.size() ...] tensor of its own, each
/// size-variable field one tensor per row. For a streamed store this is
/// where items are read from the mapping and checked: a DataError
/// ("ShapeError" or "DomainError") names the item's store index, the
/// field, the expected and the found. Safe to call from several threads.
struct Rows {
  std::map<std::string, ops::Tensor> fields;
  std::map<std::string, std::vector<ops::Tensor>> items;
};
/// [device]: where the batch goes. A TensorDataset's fixed fields are then
/// gathered there from its copy on that GPU (Note [Datasets kept on a
/// GPU]); the rest is built on the host.
Rows load_rows(const TensorStore& s,
               const std::vector<int64_t>& rows,
               ops::Device device = {});

/// The rows [rows] of the in-memory store [s]'s fixed field [name],
/// gathered on [device] (a GPU) from the field's copy there, made by the
/// first call (dataset_resident.cpp).
ops::Tensor gather_on_device(const TensorStore& s,
                             const std::string& name,
                             const std::vector<int64_t>& rows,
                             ops::Device device);

/// A streamed store over [cols] (by field name; a missing field is a
/// ShapeError). Checks only what is not per item: every array has a
/// leading item axis, the same item count, and a field at most one size
/// variable. [path] names the source in messages.
std::shared_ptr<TensorStore> make_stream_store(
    const types::RecordInfo& r,
    const std::map<std::string, int64_t>& dims,
    std::map<std::string, StreamArray> cols,
    const std::string& path,
    const std::map<std::string, std::string>& renames);

/// The position of [f]'s size-variable axis in its type (-1: none).
int var_axis(const types::FieldInfo& f);

/// Store item [row]'s length along [f]'s size-variable axis, from what is
/// known without loading the item: the item itself in memory; for a
/// streamed field its `<field>_lengths`, else the array's dense size (a
/// wrong streamed length is found when the item loads). -1 for a field
/// without a size variable.
int64_t item_length(const TensorStore& s,
                    const types::FieldInfo& f,
                    int64_t row);

/// A field's shape with static sizes; -1 where the axis is a size variable.
ops::Shape field_shape(const types::FieldInfo& f,
                       const std::map<std::string, int64_t>& dims);

/// Converts and checks [cols] (by field name, each [n ...]; a missing
/// field is a ShapeError) into a store. [lengths] optionally gives, for a
/// size-variable field, each item's length along its variable axis (items
/// are cut from the dense [n ... L ...] array). [source] names the origin
/// in messages ("data/train.npz").
std::shared_ptr<TensorStore> make_store(
    const types::RecordInfo& r,
    const std::map<std::string, int64_t>& dims,
    std::map<std::string, RawArray> cols,
    std::map<std::string, std::vector<int64_t>> lengths,
    const std::string& source);

/// Checks a store made in memory (synthetic data, per-item fields, a host
/// language's batch): shapes, dtypes, domains, and that size variables
/// agree within an item. [ids]: the items' indices in their dataset, for
/// messages (a batch's rows); none: 0, 1, ...
void check_store(const TensorStore& s,
                 const std::map<std::string, int64_t>& dims,
                 const std::string& source,
                 const std::vector<int64_t>* ids = nullptr);

/// A Dataset[R] value: a view of a store. Item k of the view is store item
/// base + (offset + k) % base_count (through idx when set), so split and
/// take never copy the tensors.
struct DatasetValue : eval::IterableObject {
  std::shared_ptr<const TensorStore> store;
  int64_t base = 0, base_count = 0, offset = 0, count = 0;
  /// When set, source index s is store item (*idx)[s] (a take that cycled,
  /// then was split or taken again).
  std::shared_ptr<const std::vector<int64_t>> idx;

  static std::shared_ptr<DatasetValue> of(std::shared_ptr<const TensorStore> s);
  /// The store item of view item k.
  int64_t index(int64_t k) const {
    int64_t s = base + (offset + k) % base_count;
    return idx ? (*idx)[s] : s;
  }
  /// The same items as a view that does not cycle (offset 0).
  std::shared_ptr<DatasetValue> plain() const;
  /// (the first round(frac * count) items, the rest); frac in (0, 1).
  std::pair<std::shared_ptr<DatasetValue>, std::shared_ptr<DatasetValue>> split(
      double frac) const;
  /// The first n items, cycling from the start past the end.
  std::shared_ptr<DatasetValue> take(int64_t n) const;
  /// Item k as a record (not a batch).
  std::shared_ptr<eval::RecordValue> item(int64_t k) const;

  std::unique_ptr<eval::Cursor> cursor(eval::Interpreter& in,
                                       diag::Span loop = {}) override;
  int64_t length() const override { return count; }
};

// ---- sources (loaders.cpp, synthetic_digits.cpp). Each throws DataError.

/// `dataset(R, path)`: by extension (.safetensors, .npz, .csv) or a
/// directory of <field>.npy. [renames]: field -> the name in the file.
std::shared_ptr<TensorStore> load_dataset(
    const types::RecordInfo& r,
    const std::map<std::string, int64_t>& dims,
    const std::string& path,
    const std::map<std::string, std::string>& renames);

/// `dataset(R, path, stream=true)`: a streamed store for a directory of
/// <field>.npy, a .safetensors file or an .npz; any other source is
/// load_dataset's (read now, in memory).
std::shared_ptr<TensorStore> stream_dataset(
    const types::RecordInfo& r,
    const std::map<std::string, int64_t>& dims,
    const std::string& path,
    const std::map<std::string, std::string>& renames);

/// `mnist(R, dir)`: train-images-idx3-ubyte + train-labels-idx1-ubyte in dir
/// (or `<dir>/t10k`: t10k-images-idx3-ubyte + t10k-labels-idx1-ubyte);
/// `.gz` copies are read when the plain file is absent.
std::shared_ptr<TensorStore> load_mnist(
    const types::RecordInfo& r,
    const std::map<std::string, int64_t>& dims,
    const std::string& dir);

/// `synthetic_digits(R, n, seed=)`.
std::shared_ptr<TensorStore> make_synthetic_digits(
    const types::RecordInfo& r,
    const std::map<std::string, int64_t>& dims,
    int64_t n,
    uint64_t seed);

// Parsers, exposed for tests and fuzzing: [name] is used in messages.
RawArray parse_npy(std::shared_ptr<const std::string> bytes,
                   size_t offset,
                   size_t size,
                   const std::string& name);
RawArray parse_idx(std::shared_ptr<const std::string> bytes,
                   const std::string& name);
/// A CSV with a header row: a scalar field is a column named after it; a
/// field with a static shape is the columns `<field>_0 .. <field>_<k-1>`
/// (its values flattened in C order). Size-variable fields are not
/// supported in CSV.
std::map<std::string, RawArray> parse_csv(
    const std::string& text,
    const types::RecordInfo& r,
    const std::map<std::string, int64_t>& dims,
    const std::map<std::string, std::string>& renames,
    const std::string& name);
/// parse_csv of the file at [path], read a chunk at a time (Note [A CSV is
/// read a cell at a time] in loaders_csv.cpp).
std::map<std::string, RawArray> load_csv(
    const std::string& path,
    const types::RecordInfo& r,
    const std::map<std::string, int64_t>& dims,
    const std::map<std::string, std::string>& renames);
/// A whole file, or an IOError naming it.
std::shared_ptr<const std::string> read_whole_file(const std::string& path);

}  // namespace ss::data
