// .npz: a zip (stored or deflated, zip64) of .npy members; zlib inflate,
// CRC checks and gunzip.
#include <zlib.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "interp/data/dataset.h"
#include "interp/data/loaders_impl.h"

namespace ss::data {

using namespace detail;

namespace {

uLong crc_of(const uint8_t* p, size_t n) {
  uLong c = crc32(0, nullptr, 0);
  for (size_t off = 0; off < n; off += size_t{1} << 30)
    c = crc32(
        c, p + off, static_cast<uInt>(std::min(n - off, size_t{1} << 30)));
  return c;
}

// One central directory entry, checked against its local header.
struct Entry {
  std::string member, mname;
  uint16_t method;
  uint32_t crc;
  uint64_t csize, usize, lho, data;
};

// Note [Zip members are disjoint]
// Every byte of a zip belongs to at most one member. Entries of the central
// directory that share compressed data (issue 16: a 1 MB npz whose entries
// all point at one deflated blob inflated to 3.1 GB), or whose local header
// disagrees with the central directory (tools then read different data),
// are refused before anything is inflated.
void check_local_header(const uint8_t* p,
                        uint64_t lho,
                        uint64_t data,
                        uint16_t flags,
                        uint16_t method,
                        uint32_t crc,
                        uint64_t csize,
                        uint64_t usize,
                        const std::string& mname) {
  if (le16(p + lho + 8) != method)
    io_error(mname,
             "the local header's compression method disagrees with the "
             "central directory's");
  if (flags & 8) return;  // sizes and CRC follow the data (a descriptor)
  uint64_t lcsize = le32(p + lho + 18), lusize = le32(p + lho + 22);
  // Zip64: a local header's extra field holds both sizes, usize first.
  size_t nlen = le16(p + lho + 26);
  for (size_t x = lho + 30 + nlen; x + 4 <= data;) {
    uint16_t tag = le16(p + x), sz = le16(p + x + 2);
    if (x + 4 + sz > data) break;
    if (tag == 0x0001 && sz >= 16) {
      if (lusize == 0xFFFFFFFF) lusize = le64(p + x + 4);
      if (lcsize == 0xFFFFFFFF) lcsize = le64(p + x + 12);
    }
    x += 4 + sz;
  }
  if (le32(p + lho + 14) != crc || lcsize != csize || lusize != usize)
    io_error(mname,
             "the local header declares " + std::to_string(lcsize) +
                 " bytes (" + std::to_string(lusize) +
                 " inflated), the central directory " + std::to_string(csize) +
                 " (" + std::to_string(usize) + "), or a different CRC");
}

void refuse_overlaps(std::vector<Entry> m) {
  std::sort(m.begin(), m.end(), [](const Entry& a, const Entry& b) {
    return a.lho < b.lho;
  });
  for (size_t i = 1; i < m.size(); ++i)
    if (m[i].lho < m[i - 1].data + m[i - 1].csize)
      io_error(m[i].mname,
               "its local header overlaps member " + m[i - 1].member +
                   " (a zip whose members share data is refused)");
}

// A deflated npz member: its .npy header first, then exactly the bytes that
// header declares, which must be what the zip entry declares too (Note
// [Inflate no more than declared]).
RawArray inflate_member(const uint8_t* src,
                        uint64_t csize,
                        uint64_t usize,
                        uint32_t crc,
                        const std::string& mname) {
  Inflater inf(src, csize, false, mname);
  // The preamble and the header: 1 MiB holds any header numpy writes; a
  // longer one is refused by parse_npy ("the .npy header is over ...").
  auto head = std::make_shared<std::string>();
  if (!inf.fill(*head, std::min<uint64_t>(usize, size_t{1} << 20)))
    io_error(mname,
             "the compressed data holds " + std::to_string(head->size()) +
                 " bytes, the zip entry declares " + std::to_string(usize));
  RawArray h = parse_npy(head, 0, usize, mname);
  uint64_t declared = h.offset + h.numel() * raw_size(h.type);
  if (declared != usize)
    io_error(mname,
             "the zip entry declares " + std::to_string(usize) +
                 " bytes, its .npy header " + std::to_string(declared));
  auto raw = std::make_shared<std::string>(std::move(*head));
  if (!inf.fill(*raw, usize))
    io_error(mname,
             "the compressed data holds " + std::to_string(raw->size()) +
                 " bytes, the zip entry declares " + std::to_string(usize));
  inf.expect_end("the " + std::to_string(usize) +
                 " bytes its .npy header declares");
  if (crc_of(reinterpret_cast<const uint8_t*>(raw->data()), raw->size()) != crc)
    io_error(mname, "CRC mismatch (corrupt data)");
  return parse_npy(std::move(raw), 0, usize, mname);
}

}  // namespace

namespace detail {

// ------------------------------------------------------------------ inflate

Inflater::Inflater(const uint8_t* src, size_t n, bool gzip, std::string name)
    : in_left_(n), name_(std::move(name)) {
  if (inflateInit2(&z_, gzip ? 16 + MAX_WBITS : -MAX_WBITS) != Z_OK)
    io_error(name_, "cannot start zlib");
  z_.next_in = const_cast<Bytef*>(src);
}

Inflater::~Inflater() {
  inflateEnd(&z_);
}

bool Inflater::step() {
  constexpr size_t kChunk = size_t{1} << 30;  // avail_in is 32-bit
  if (z_.avail_in == 0 && in_left_) {
    z_.avail_in = static_cast<uInt>(std::min(in_left_, kChunk));
    in_left_ -= z_.avail_in;
  }
  int rc = inflate(&z_, Z_NO_FLUSH);
  if (rc == Z_STREAM_END) return ended_ = true;
  if (rc == Z_BUF_ERROR && z_.avail_in == 0 && in_left_ == 0)
    io_error(name_, "truncated compressed data");
  if (rc != Z_OK && rc != Z_BUF_ERROR)
    io_error(name_, "corrupt compressed data");
  return false;
}

bool Inflater::fill(std::string& out, size_t size) {
  size_t at = out.size();
  out.resize(size);
  while (at < size && !ended_) {
    z_.next_out = reinterpret_cast<Bytef*>(out.data() + at);
    z_.avail_out = static_cast<uInt>(std::min(size - at, size_t{1} << 30));
    uInt before = z_.avail_out;
    step();
    at += before - z_.avail_out;
  }
  out.resize(at);
  return at == size;
}

void Inflater::expect_end(const std::string& declared) {
  uint8_t probe;
  while (!ended_) {
    z_.next_out = &probe;
    z_.avail_out = 1;
    step();
    if (z_.avail_out == 0)
      io_error(name_,
               "the compressed data inflates to more than " + declared +
                   "; refused before inflating the rest");
  }
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
  std::vector<Entry> members;
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
    if (method == 8 && usize > csize * 1032 + 1024)
      io_error(mname,
               "declares " + std::to_string(usize) + " bytes inflated from " +
                   std::to_string(csize) + ", more than deflate can produce");
    check_local_header(p, lho, data, flags, method, crc, csize, usize, mname);
    members.push_back(
        {std::move(member), mname, method, crc, csize, usize, lho, data});
  }
  refuse_overlaps(members);
  // The local header names the member too; a zip whose two directories
  // name it differently reads as different files to different tools
  // (issue 32 item 11: it was loaded under the central directory's name).
  // Checked after the overlaps, which say more of entries sharing a header.
  for (const Entry& m : members) {
    const std::string_view local(reinterpret_cast<const char*>(p + m.lho + 30),
                                 le16(p + m.lho + 26));
    if (local != m.member)
      io_error(m.mname,
               "the local header names it '" + std::string(local) +
                   "', the central directory '" + m.member + "'");
  }
  std::map<std::string, RawArray> out;
  for (const Entry& m : members) {
    std::string key = ends_with(m.member, ".npy")
                          ? m.member.substr(0, m.member.size() - 4)
                          : m.member;
    // Two members of one name (or `x` and `x.npy`): which one is the
    // array depends on the tool (issue 32 item 11: the last one won).
    if (out.count(key))
      io_error(name,
               "two members are named '" + key + "' (or '" + key + ".npy')");
    if (m.method == 0) {
      if (m.usize != m.csize) io_error(m.mname, "stored member sizes disagree");
      if (crc_of(p + m.data, m.csize) != m.crc)
        io_error(m.mname, "CRC mismatch (corrupt data)");
      out[key] = parse_npy(bytes, m.data, m.csize, m.mname);
    } else if (m.method == 8) {
      out[key] = inflate_member(p + m.data, m.csize, m.usize, m.crc, m.mname);
    } else {
      io_error(m.mname,
               "unsupported compression method " + std::to_string(m.method) +
                   " (stored and deflated are supported)");
    }
  }
  return out;
}

}  // namespace ss::data
