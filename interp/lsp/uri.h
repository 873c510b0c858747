#pragma once
// `file://` URIs (RFC 8089, as editors send them) to paths and back, so
// that the checker reads imports relative to the document's own path.

#include <string>

namespace ss::lsp {

/// The path of a `file://` URI, percent-decoded ("" for another scheme).
std::string uri_to_path(const std::string& uri);
/// The `file://` URI of an absolute path, percent-encoding what a URI
/// may not hold.
std::string path_to_uri(const std::string& path);

}  // namespace ss::lsp
