// JSON-RPC framing (framing.h).
#include "interp/lsp/framing.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <string_view>

namespace ss::lsp {

namespace {

constexpr std::string_view kHeaderEnd = "\r\n\r\n";
constexpr std::string_view kLengthField = "content-length:";

bool iequal_prefix(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i])
      return false;
  return true;
}

// The Content-Length of a header block (without its final empty line), or
// -1 when it has none, or one that is not a plain decimal within
// kMaxFrameBytes, or two.
long long content_length(std::string_view header) {
  long long length = -1;
  while (!header.empty()) {
    size_t eol = header.find("\r\n");
    std::string_view line = header.substr(0, eol);
    header = eol == std::string_view::npos ? std::string_view()
                                           : header.substr(eol + 2);
    if (!iequal_prefix(line, kLengthField)) continue;  // Content-Type, ...
    if (length >= 0) return -1;
    std::string_view v = line.substr(kLengthField.size());
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t'))
      v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t'))
      v.remove_suffix(1);
    if (v.empty() || v.size() > 10) return -1;
    long long n = 0;
    for (char ch : v) {
      if (ch < '0' || ch > '9') return -1;
      n = n * 10 + (ch - '0');
    }
    if (n > static_cast<long long>(kMaxFrameBytes)) return -1;
    length = n;
  }
  return length;
}

}  // namespace

bool FrameReader::input_waiting(int wait_ms) {
  if (!buf_.empty() || ended_) return true;
  pollfd p{fd_, POLLIN, 0};
  int n;
  while ((n = ::poll(&p, 1, wait_ms)) < 0 && errno == EINTR) {
  }
  // An error of poll(2) itself: next() will meet it in read(2).
  return n != 0;
}

bool FrameReader::fill() {
  if (ended_) return false;
  char chunk[65536];
  for (;;) {
    ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n > 0) {
      buf_.append(chunk, static_cast<size_t>(n));
      return true;
    }
    if (n < 0 && errno == EINTR) continue;
    ended_ = true;
    return false;
  }
}

// Note [Reading frames]: a frame is read once its header's empty line and
// all Content-Length bytes after it are in the buffer; what is left stays
// for the next call, so a header split over reads waits and two frames in
// one read are two messages. A header block without a usable
// Content-Length (missing, not a number, over kMaxFrameBytes, given twice)
// leaves no way to know where its body ends: the reader drops the block and
// skips to the next line that starts with `Content-Length:`, the likeliest
// next header, and says so (the server logs it; there is no id to answer).
// A buffer that grows past kMaxFrameBytes without a header's end is dropped
// the same way, so garbage cannot grow memory without bound.
FrameReader::Status FrameReader::next(std::string& body) {
  for (;;) {
    size_t end = buf_.find(kHeaderEnd);
    if (end != std::string::npos) {
      long long n = content_length(std::string_view(buf_).substr(0, end));
      size_t start = end + kHeaderEnd.size();
      if (n < 0) {
        body = "a header without a valid Content-Length: \"" +
               buf_.substr(0, std::min<size_t>(end, 80)) + "\"";
        // Skip to the next line that starts a header.
        size_t k = start;
        for (;;) {
          k = buf_.find('\n', k);
          if (k == std::string::npos) break;
          ++k;
          if (iequal_prefix(std::string_view(buf_).substr(k), kLengthField))
            break;
        }
        buf_.erase(0, k == std::string::npos ? buf_.size() : k);
        return Status::BadHeader;
      }
      if (buf_.size() - start >= static_cast<size_t>(n)) {
        body = buf_.substr(start, static_cast<size_t>(n));
        buf_.erase(0, start + static_cast<size_t>(n));
        return Status::Message;
      }
    } else if (buf_.size() > kMaxFrameBytes) {
      buf_.clear();
      body = "more than 64 MiB without the end of a header";
      return Status::BadHeader;
    }
    if (!fill()) return Status::End;
  }
}

bool write_frame(int fd, const std::string& body) {
  std::string out =
      "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::write(fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace ss::lsp
