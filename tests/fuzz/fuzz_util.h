#pragma once
// What the fuzz targets of tests/fuzz/ share: the outcome rule (Note [What
// a fuzz target calls a finding]), a private scratch directory for loaders
// that take a path, and the records the loaders read into.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>

#include "interp/data/dataset.h"
#include "ops/core/type.h"

namespace ss::fuzz {

// Note [What a fuzz target calls a finding]
// Each target calls what `ss` calls on its input and treats every user
// error the way `ss` reports one as a normal outcome: a diagnostic from the
// checker, a DataError from a loader, a SafetensorsError from the
// checkpoint reader (the evaluator turns those into IOError/ShapeError/...
// at the `.ss` line). Anything else is a finding and aborts, so that
// libFuzzer saves the input and the replay fails: a crash or sanitizer
// report (by itself), any other exception escaping (std::bad_alloc
// included: the inputs are small, and a loader never allocates more than
// its file's declared shapes need, Note [Inflate no more than declared]),
// a leak (LeakSanitizer, at exit), and an allocation over the bound that
// scripts/fuzz.sh (-malloc_limit_mb) and the sanitizer replay
// (max_allocation_size_mb) state.

/// Runs [f]; user errors (DataError, SafetensorsError) are normal outcomes,
/// any other exception is a finding: reported on stderr with [what], then
/// abort().
void expect_user_errors(const char* what, const std::function<void()>& f);

/// Runs [f] on a thread with a stack as large as `ss` gives every command
/// (Note [A deep stack] in interp/cli/main.cpp), one thread for every
/// call, and waits for it. [f] must not throw (expect_user_errors).
void on_deep_stack(const std::function<void()>& f);

/// Writes [data] to [name] in this process's scratch directory (made on
/// first use, removed at exit) and returns its path. [name] may hold one
/// level of folder ("npy/x.npy"): the folder is made.
std::string write_scratch(const std::string& name,
                          const uint8_t* data,
                          size_t size);
inline std::string write_scratch(const std::string& name,
                                 const std::string& bytes) {
  return write_scratch(
      name, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}
/// [data] as the shared bytes the in-memory parsers take.
std::shared_ptr<const std::string> bytes_of(const uint8_t* data, size_t size);

/// The scratch directory's path joined with [name] (nothing written).
std::string scratch_path(const std::string& name);

/// A record of fuzz_records.ss (checked once, through check_source) and the
/// program's dims: Vec (x: [F] f32, y: i64 in 0..10), Seq (tokens: [n] i64
/// pad=-1, y: i64), Col (x: [F] f32), Toks (tokens: [n] i64), Img (img:
/// [P], label: i64 in 0..10, P = 4: 2x2 images), Digit (img: [784], label),
/// Mixed (CSV's dtypes: f16, bool, i32 in -5..5, [2] f64).
const types::RecordInfo& record(const std::string& name);
const std::map<std::string, int64_t>& record_dims();

/// Loads every item of [s], 64 a batch as a loader thread would: where a
/// streamed store's items are read from the mapping and checked.
void load_every_item(const data::TensorStore& s);

/// `dataset(R, path)` for each record R of [records] (load_dataset) and,
/// with [stream], `dataset(R, path, stream=true)` with every item loaded;
/// user errors are normal outcomes. [what] names the loader in findings.
void load_dataset_as(const char* what,
                     std::initializer_list<const char*> records,
                     const std::string& path,
                     bool stream);

}  // namespace ss::fuzz
