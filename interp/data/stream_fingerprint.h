#pragma once
// What a streamed dataset's file is, in a few bytes (issue 26): a worker
// on another host maps the file at the controller's path on its own host,
// which must hold the same data. Compared at the dataset's first batch.

#include <string>

namespace ss::data {

/// [path]'s size and a digest of its first 64 KiB (its header and first
/// rows), or for a directory each `.npy` file's, in name order: "" when
/// [path] is neither. Not a cryptographic hash: it tells a missing, a
/// different or an unequally long copy from the same file.
std::string stream_fingerprint(const std::string& path);

/// Why [here] (this host's fingerprint) is not [theirs] (the
/// controller's), as the end of a sentence; "" when they are the same.
std::string fingerprint_difference(const std::string& here,
                                   const std::string& theirs);

}  // namespace ss::data
