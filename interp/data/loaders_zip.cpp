// .npz: a zip (stored or deflated, zip64) of .npy members, its directories
// checked (zip_members) and its deflated members inflated
// (inflate_member); zlib inflate, CRC checks and gunzip. Reading an npz's
// members is loaders_npz.cpp's (Note [Reading an npz in place]).
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "interp/data/dataset.h"
#include "interp/data/loaders_impl.h"

namespace ss::data {

using namespace detail;

namespace {

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

void refuse_overlaps(std::vector<ZipMember> m) {
  std::sort(m.begin(), m.end(), [](const ZipMember& a, const ZipMember& b) {
    return a.lho < b.lho;
  });
  for (size_t i = 1; i < m.size(); ++i)
    if (m[i].lho < m[i - 1].data + m[i - 1].csize)
      io_error(m[i].mname,
               "its local header overlaps member " + m[i - 1].member +
                   " (a zip whose members share data is refused)");
}

}  // namespace

namespace detail {

uint32_t crc_of(const uint8_t* p, size_t n, const FileMapping* mapped) {
  // 1 GiB at a time (crc32 takes a 32-bit length), 16 MiB when the pages
  // read are given back after each.
  const size_t chunk = mapped ? size_t{16} << 20 : size_t{1} << 30;
  uLong c = crc32(0, nullptr, 0);
  for (size_t off = 0; off < n; off += chunk) {
    size_t k = std::min(n - off, chunk);
    c = crc32(c, p + off, static_cast<uInt>(k));
    if (mapped) mapped->give_back(p + off, k);
  }
  return static_cast<uint32_t>(c);
}

RawArray inflate_member(const uint8_t* src,
                        const ZipMember& m,
                        const std::function<uint8_t*(size_t)>& buffer,
                        const FileMapping* mapped) {
  const std::string& mname = m.mname;
  Inflater inf(src, m.csize, false, mname, mapped);
  auto short_of = [&](size_t got) {
    io_error(mname,
             "the compressed data holds " + std::to_string(got) +
                 " bytes, the zip entry declares " + std::to_string(m.usize));
  };
  // The preamble and the header: 1 MiB holds any header numpy writes; a
  // longer one is refused by parse_npy ("the .npy header is over ...").
  auto head = std::make_shared<std::string>();
  if (!inf.fill(*head, std::min<uint64_t>(m.usize, size_t{1} << 20)))
    short_of(head->size());
  RawArray h = parse_npy(head, 0, m.usize, mname);
  uint64_t declared = h.offset + h.numel() * raw_size(h.type);
  if (declared != m.usize)
    io_error(mname,
             "the zip entry declares " + std::to_string(m.usize) +
                 " bytes, its .npy header " + std::to_string(declared));
  // Only now, the size agreed by both, is the buffer made.
  uint8_t* out = buffer(m.usize);
  std::memcpy(out, head->data(), head->size());
  size_t at = head->size();
  h.bytes.reset();
  head.reset();
  if (!inf.fill(out, at, m.usize)) short_of(at);
  inf.expect_end("the " + std::to_string(m.usize) +
                 " bytes its .npy header declares");
  if (crc_of(out, m.usize) != m.crc)
    io_error(mname, "CRC mismatch (corrupt data)");
  return h;
}

// ------------------------------------------------------------------ inflate

Inflater::Inflater(const uint8_t* src,
                   size_t n,
                   bool gzip,
                   std::string name,
                   const FileMapping* mapped)
    : in_left_(n), mapped_(mapped), given_back_(src), name_(std::move(name)) {
  if (inflateInit2(&z_, gzip ? 16 + MAX_WBITS : -MAX_WBITS) != Z_OK)
    io_error(name_, "cannot start zlib");
  z_.next_in = const_cast<Bytef*>(src);
}

Inflater::~Inflater() {
  inflateEnd(&z_);
}

bool Inflater::step() {
  // avail_in is 32-bit: 1 GiB at a time, or 16 MiB when the input read is
  // given back after each.
  const size_t chunk = mapped_ ? size_t{16} << 20 : size_t{1} << 30;
  if (z_.avail_in == 0 && in_left_) {
    z_.avail_in = static_cast<uInt>(std::min(in_left_, chunk));
    in_left_ -= z_.avail_in;
  }
  int rc = inflate(&z_, Z_NO_FLUSH);
  if (mapped_ && z_.next_in > given_back_) {
    mapped_->give_back(given_back_, z_.next_in - given_back_);
    given_back_ = z_.next_in;
  }
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
  bool full = fill(reinterpret_cast<uint8_t*>(out.data()), at, size);
  out.resize(at);
  return full;
}

bool Inflater::fill(uint8_t* out, size_t& at, size_t size) {
  while (at < size && !ended_) {
    z_.next_out = out + at;
    z_.avail_out = static_cast<uInt>(std::min(size - at, size_t{1} << 30));
    uInt before = z_.avail_out;
    step();
    at += before - z_.avail_out;
  }
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

std::vector<ZipMember> zip_members(const uint8_t* p,
                                   size_t n,
                                   const std::string& name) {
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
  std::vector<ZipMember> members;
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
    std::string key = ends_with(member, ".npy")
                          ? member.substr(0, member.size() - 4)
                          : member;
    members.push_back({std::move(member),
                       mname,
                       std::move(key),
                       method,
                       crc,
                       csize,
                       usize,
                       lho,
                       data});
  }
  refuse_overlaps(members);
  // The local header names the member too; a zip whose two directories
  // name it differently reads as different files to different tools
  // (issue 32 item 11: it was loaded under the central directory's name).
  // Checked after the overlaps, which say more of entries sharing a header.
  for (const ZipMember& m : members) {
    const std::string_view local(reinterpret_cast<const char*>(p + m.lho + 30),
                                 le16(p + m.lho + 26));
    if (local != m.member)
      io_error(m.mname,
               "the local header names it '" + std::string(local) +
                   "', the central directory '" + m.member + "'");
  }
  std::set<std::string> keys;
  for (const ZipMember& m : members) {
    // Two members of one name (or `x` and `x.npy`): which one is the
    // array depends on the tool (issue 32 item 11: the last one won).
    if (!keys.insert(m.key).second)
      io_error(
          name,
          "two members are named '" + m.key + "' (or '" + m.key + ".npy')");
    if (m.method == 0 && m.usize != m.csize)
      io_error(m.mname, "stored member sizes disagree");
    if (m.method != 0 && m.method != 8)
      io_error(m.mname,
               "unsupported compression method " + std::to_string(m.method) +
                   " (stored and deflated are supported)");
  }
  return members;
}

}  // namespace detail

}  // namespace ss::data
