// .npz: a zip (stored or deflated, zip64) of .npy members; zlib inflate,
// CRC checks and gunzip.
#include <zlib.h>

#include <algorithm>

#include "interp/eval/lib/dataset.h"
#include "interp/eval/lib/loaders_impl.h"

namespace ss::eval {

using namespace detail;

namespace {

// ------------------------------------------------------------------ inflate

// Inflates [n] bytes at [src] into exactly [out_size] bytes; [gzip] for a
// gzip stream, else a raw deflate stream (zip members).
std::string inflate_bytes(const uint8_t* src,
                          size_t n,
                          size_t out_size,
                          bool gzip,
                          const std::string& name) {
  std::string out(out_size, '\0');
  z_stream z{};
  if (inflateInit2(&z, gzip ? 16 + MAX_WBITS : -MAX_WBITS) != Z_OK)
    io_error(name, "cannot start zlib");
  z.next_in = const_cast<Bytef*>(src);
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  size_t in_left = n, out_left = out_size;
  constexpr size_t kChunk = size_t{1} << 30;
  std::string error;
  for (;;) {
    if (z.avail_in == 0 && in_left) {
      z.avail_in = static_cast<uInt>(std::min(in_left, kChunk));
      in_left -= z.avail_in;
    }
    if (z.avail_out == 0 && out_left) {
      z.avail_out = static_cast<uInt>(std::min(out_left, kChunk));
      out_left -= z.avail_out;
    }
    if (z.avail_out == 0) {
      // All declared bytes are out: the stream must end here.
      uint8_t probe;
      z.next_out = &probe;
      z.avail_out = 1;
      int rc = inflate(&z, Z_NO_FLUSH);
      if (rc != Z_STREAM_END || z.avail_out == 0)
        error = rc == Z_DATA_ERROR ? "corrupt compressed data"
                                   : "compressed data is longer than the "
                                     "declared size";
      break;
    }
    int rc = inflate(&z, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      size_t produced = out_size - out_left - z.avail_out;
      if (produced != out_size)
        error = "compressed data holds " + std::to_string(produced) +
                " bytes, the header declares " + std::to_string(out_size);
      break;
    }
    if (rc == Z_BUF_ERROR && z.avail_in == 0 && in_left == 0) {
      error = "truncated compressed data";
      break;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      error = "corrupt compressed data";
      break;
    }
  }
  inflateEnd(&z);
  if (!error.empty()) io_error(name, error);
  return out;
}

uLong crc_of(const uint8_t* p, size_t n) {
  uLong c = crc32(0, nullptr, 0);
  for (size_t off = 0; off < n; off += size_t{1} << 30)
    c = crc32(
        c, p + off, static_cast<uInt>(std::min(n - off, size_t{1} << 30)));
  return c;
}

}  // namespace

namespace detail {

std::string gunzip(const std::string& gz, const std::string& name) {
  if (gz.size() < 18) io_error(name, "truncated gzip file");
  // ISIZE: the size mod 2^32; deflate expands at most ~1032:1.
  uint64_t isize =
      le32(reinterpret_cast<const uint8_t*>(gz.data()) + gz.size() - 4);
  if (isize > gz.size() * 1032ull + 1024)
    io_error(name, "gzip trailer declares an impossible size");
  return inflate_bytes(reinterpret_cast<const uint8_t*>(gz.data()),
                       gz.size(),
                       isize,
                       true,
                       name);
}

}  // namespace detail

std::map<std::string, RawArray> parse_npz(
    std::shared_ptr<const std::string> bytes, const std::string& name) {
  const std::string& s = *bytes;
  const uint8_t* p = reinterpret_cast<const uint8_t*>(s.data());
  size_t n = s.size();
  if (n < 22) io_error(name, "not a zip file (too short)");
  // End of central directory: the last "PK\5\6" with a comment that fits.
  size_t eocd = std::string::npos;
  size_t lo = n >= 22 + 65535 ? n - 22 - 65535 : 0;
  for (size_t i = n - 22 + 1; i-- > lo;)
    if (le32(p + i) == 0x06054b50 && i + 22 + le16(p + i + 20) == n) {
      eocd = i;
      break;
    }
  if (eocd == std::string::npos)
    io_error(name, "not a zip file (no end of central directory)");
  uint64_t entries = le16(p + eocd + 10);
  uint64_t cd_size = le32(p + eocd + 12);
  uint64_t cd_off = le32(p + eocd + 16);
  // Zip64: the locator sits just before the EOCD.
  if ((entries == 0xFFFF || cd_off == 0xFFFFFFFF || cd_size == 0xFFFFFFFF) &&
      eocd >= 20 && le32(p + eocd - 20) == 0x07064b50) {
    uint64_t z64 = le64(p + eocd - 20 + 8);
    if (z64 > n - 56 || le32(p + z64) != 0x06064b50)
      io_error(name, "corrupt zip64 end of central directory");
    entries = le64(p + z64 + 32);
    cd_size = le64(p + z64 + 40);
    cd_off = le64(p + z64 + 48);
  }
  if (cd_off > n || cd_size > n - cd_off)
    io_error(name, "central directory lies outside the file");
  if (entries > cd_size / 46 + 1)
    io_error(name, "central directory is too small for its entries");
  std::map<std::string, RawArray> out;
  size_t at = cd_off, end = cd_off + cd_size;
  for (uint64_t e = 0; e < entries; ++e) {
    if (end - at < 46 || le32(p + at) != 0x02014b50)
      io_error(name, "corrupt central directory entry " + std::to_string(e));
    uint16_t flags = le16(p + at + 8);
    uint16_t method = le16(p + at + 10);
    uint32_t crc = le32(p + at + 16);
    uint64_t csize = le32(p + at + 20), usize = le32(p + at + 24);
    size_t nlen = le16(p + at + 28), xlen = le16(p + at + 30),
           clen = le16(p + at + 32);
    uint64_t lho = le32(p + at + 42);
    if (46 + nlen + xlen + clen > end - at)
      io_error(name, "corrupt central directory entry " + std::to_string(e));
    std::string member(reinterpret_cast<const char*>(p + at + 46), nlen);
    // Zip64 extra field: the sizes and offset that were 0xFFFFFFFF.
    for (size_t x = at + 46 + nlen, xend = x + xlen; x + 4 <= xend;) {
      uint16_t tag = le16(p + x), sz = le16(p + x + 2);
      if (x + 4 + sz > xend) break;
      if (tag == 0x0001) {
        size_t q = x + 4, qend = q + sz;
        auto next = [&](uint64_t& v) {
          if (v == 0xFFFFFFFF && q + 8 <= qend) {
            v = le64(p + q);
            q += 8;
          }
        };
        next(usize);
        next(csize);
        next(lho);
      }
      x += 4 + sz;
    }
    at += 46 + nlen + xlen + clen;
    std::string mname = name + "[" + member + "]";
    if (flags & 1) io_error(mname, "encrypted zip members are not supported");
    if (lho > n - 30 || le32(p + lho) != 0x04034b50)
      io_error(mname, "corrupt local header");
    uint64_t data = lho + 30 + le16(p + lho + 26) + le16(p + lho + 28);
    if (data > n || csize > n - data)
      io_error(mname, "member data lies outside the file");
    std::string key = ends_with(member, ".npy")
                          ? member.substr(0, member.size() - 4)
                          : member;
    if (method == 0) {
      if (usize != csize) io_error(mname, "stored member sizes disagree");
      if (crc_of(p + data, csize) != crc)
        io_error(mname, "CRC mismatch (corrupt data)");
      out[key] = parse_npy(bytes, data, csize, mname);
    } else if (method == 8) {
      if (usize > csize * 1032 + 1024)
        io_error(mname,
                 "declares " + std::to_string(usize) + " bytes inflated from " +
                     std::to_string(csize) + ", more than deflate can produce");
      auto raw = std::make_shared<std::string>(
          inflate_bytes(p + data, csize, usize, false, mname));
      if (crc_of(reinterpret_cast<const uint8_t*>(raw->data()), raw->size()) !=
          crc)
        io_error(mname, "CRC mismatch (corrupt data)");
      size_t rs = raw->size();
      out[key] = parse_npy(std::move(raw), 0, rs, mname);
    } else {
      io_error(mname,
               "unsupported compression method " + std::to_string(method) +
                   " (stored and deflated are supported)");
    }
  }
  return out;
}

}  // namespace ss::eval
