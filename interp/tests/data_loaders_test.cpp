// The data pipeline: the file loaders (npy, npz, safetensors, csv, mnist),
// their errors and fuzzing.
#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "interp/tests/data_test_util.h"

namespace fs = std::filesystem;
using namespace ss;
using namespace ss::eval;
using namespace data_test;

// ------------------------------------------------------------ formats

TEST_CASE("npy: v1 and v2 headers, little-endian dtypes", "[data]") {
  std::vector<float> f4 = {0, 0.25f, 0.5f, 1, 0, 0, 0, 0};
  std::vector<double> f8(f4.begin(), f4.end());
  std::vector<int32_t> i4 = {3, 9};
  std::vector<uint8_t> u1 = {3, 9};
  for (int version : {1, 2}) {
    for (const char* ydescr : {"<i8", "<i4", "|u1"}) {
      std::string dir =
          tmp(std::string("npy_v") + std::to_string(version) + ydescr + "/");
      write_file(dir + "x.npy",
                 npy(std::string(version == 1 ? "<f4" : "<f8"),
                     {2, 4},
                     version == 1 ? bytes_of(f4) : bytes_of(f8),
                     version));
      std::string ydata = ydescr[1] == 'i' && ydescr[2] == '8'
                              ? bytes_of(std::vector<int64_t>{3, 9})
                          : ydescr[1] == 'i' ? bytes_of(i4)
                                             : bytes_of(u1);
      write_file(dir + "y.npy", npy(ydescr, {2}, ydata, version));
      // Only the fields' own dtypes load (x: f32, y: i64); any other is a
      // ShapeError with a help line (Note [No silent dtype conversion]).
      std::string err = error_of([&] { load("Small", dir); });
      INFO(err);
      if (version == 2) {
        CHECK_THAT(err,
                   Catch::Contains("ShapeError") &&
                       Catch::Contains("field `x`: expected dtype f32, "
                                       "found f64"));
      } else if (std::string(ydescr) != "<i8") {
        CHECK_THAT(
            err,
            Catch::Contains("ShapeError") &&
                Catch::Contains("field `y`: expected dtype i64, found " +
                                std::string(ydescr[1] == 'i' ? "i32" : "u8")));
      } else {
        CHECK(err.empty());
        auto s = load("Small", dir);
        CHECK(s->n == 2);
        CHECK(s->fields.at("x").dtype() == types::DType::F32);
        CHECK(s->fields.at("x").to_doubles() ==
              std::vector<double>{0, 0.25, 0.5, 1, 0, 0, 0, 0});
        CHECK(s->fields.at("y").to_doubles() == std::vector<double>{3, 9});
      }
    }
  }
  // |b1 for a bool field: read through parse_npy.
  auto bytes = std::make_shared<const std::string>(
      npy("|b1", {3}, std::string("\1\0\1", 3)));
  RawArray a = parse_npy(bytes, 0, bytes->size(), "b.npy");
  CHECK(a.type == RawType::Bool);
  CHECK(a.shape == ops::Shape{3});
}

TEST_CASE("npz: stored and deflated members", "[data]") {
  std::vector<float> x(3 * 4);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  std::vector<int64_t> y = {1, 2, 3};
  for (bool deflated : {false, true}) {
    std::string path = tmp(deflated ? "z_deflated.npz" : "z_stored.npz");
    write_file(path,
               zip({{"x.npy", npy("<f4", {3, 4}, bytes_of(x)), deflated},
                    {"y.npy", npy("<i8", {3}, bytes_of(y)), deflated}}));
    auto s = load("Small", path);
    CHECK(s->fields.at("x").at(11) == 11);
    CHECK(s->fields.at("y").to_doubles() == std::vector<double>{1, 2, 3});
  }
  // Renames: x="pixels".
  std::string path = tmp("renamed.npz");
  write_file(path,
             zip({{"pixels.npy", npy("<f4", {3, 4}, bytes_of(x)), true},
                  {"y.npy", npy("<i8", {3}, bytes_of(y)), false}}));
  CHECK(load("Small", path, {{"x", "pixels"}})->n == 3);
}

TEST_CASE("npz: members named two ways, or two alike, are refused", "[data]") {
  // Issue 32 item 11: both were loaded (under the central directory's
  // name; the last of two alike won).
  std::vector<float> x(3 * 4, 1.0f);
  std::vector<int64_t> y = {1, 2, 3};
  std::string xs = npy("<f4", {3, 4}, bytes_of(x)),
              ys = npy("<i8", {3}, bytes_of(y));
  std::string z = zip({{"x.npy", xs, false}, {"y.npy", ys, false}});
  REQUIRE(z.substr(30, 5) == "x.npy");  // the first local header's name
  z[30] = 'q';
  write_file(tmp("two_names.npz"), z);
  CHECK_THAT(error_of([&] { load("Small", tmp("two_names.npz")); }),
             Catch::Contains("[x.npy]") &&
                 Catch::Contains("the local header names it 'q.npy', the "
                                 "central directory 'x.npy'"));
  write_file(
      tmp("twice.npz"),
      zip({{"x.npy", xs, false}, {"y.npy", ys, false}, {"x.npy", xs, true}}));
  CHECK_THAT(error_of([&] { load("Small", tmp("twice.npz")); }),
             Catch::Contains("two members are named 'x'"));
  write_file(
      tmp("twice_ext.npz"),
      zip({{"x.npy", xs, false}, {"y.npy", ys, false}, {"x", xs, true}}));
  CHECK_THAT(error_of([&] { load("Small", tmp("twice_ext.npz")); }),
             Catch::Contains("two members are named 'x'"));
}

TEST_CASE("safetensors and csv sources", "[data]") {
  SafetensorsFile f;
  f.tensors.push_back(
      {"x",
       ops::Tensor::from_doubles(
           {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}, types::DType::F64)});
  f.tensors.push_back(
      {"y", ops::Tensor::from_doubles({2}, {4, 5}, types::DType::I64)});
  write_safetensors(tmp("d.safetensors"), f);
  CHECK_THAT(error_of([&] { load("Small", tmp("d.safetensors")); }),
             Catch::Contains("ShapeError") &&
                 Catch::Contains("field `x`: expected dtype f32, found f64"));
  f.tensors[0].second = ops::Tensor::from_doubles(
      {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}, types::DType::F32);
  write_safetensors(tmp("d.safetensors"), f);
  auto s = load("Small", tmp("d.safetensors"));
  CHECK(s->fields.at("x").dtype() == types::DType::F32);
  CHECK(s->fields.at("x").at(7) == 8);

  write_file(tmp("d.csv"),
             "y,x_0,x_1,x_2,x_3\r\n1,0.5,1,2,3\r\n2, 4 ,5,6,7e0\n\n");
  auto c = load("Small", tmp("d.csv"));
  CHECK(c->n == 2);
  CHECK(c->fields.at("x").to_doubles() ==
        std::vector<double>{0.5, 1, 2, 3, 4, 5, 6, 7});
  CHECK(c->fields.at("y").to_doubles() == std::vector<double>{1, 2});
}

TEST_CASE("csv: a BOM, CR line ends, quotes and cells read as Python reads",
          "[data]") {
  // Issue 32 item 14. A BOM and lone CRs (each said "has no column x_0"
  // before), \r\n mixed in, a quoted cell.
  write_file(tmp("bom.csv"),
             "\xEF\xBB\xBFy,x_0,x_1,x_2,x_3\r1,0.5,\"1\",2,3\r\n"
             "2,4,5,6,7\r");
  auto c = load("Small", tmp("bom.csv"));
  CHECK(c->n == 2);
  CHECK(c->fields.at("x").to_doubles() ==
        std::vector<double>{0.5, 1, 2, 3, 4, 5, 6, 7});
  // A comma inside quotes is the cell's: "1,5" is one cell, and no number
  // (it split into two cells, the line then a cell too long).
  write_file(tmp("comma.csv"), "y,x_0,x_1,x_2,x_3\n1,\"1,5\",1,2,3\n");
  CHECK_THAT(error_of([&] { load("Small", tmp("comma.csv")); }),
             Catch::Contains("expected a number, found '1,5'"));
  // A NUL inside a cell is not its end; a hex float is no decimal number.
  const char nul[] = "y,x_0,x_1,x_2,x_3\n1,0.1\0,1,2,3\n";
  write_file(tmp("nul.csv"), std::string(nul, sizeof nul - 1));
  CHECK_THAT(error_of([&] { load("Small", tmp("nul.csv")); }),
             Catch::Contains("expected a number, found '0.1\\x00' in column "
                             "`x_0`"));
  write_file(tmp("hex.csv"), "y,x_0,x_1,x_2,x_3\n1,0x1p-2,1,2,3\n");
  CHECK_THAT(error_of([&] { load("Small", tmp("hex.csv")); }),
             Catch::Contains("expected a number, found '0x1p-2'"));
  const char inty[] = "y,x_0,x_1,x_2,x_3\n1\0,0,1,2,3\n";
  write_file(tmp("inty.csv"), std::string(inty, sizeof inty - 1));
  CHECK_THAT(error_of([&] { load("Small", tmp("inty.csv")); }),
             Catch::Contains("expected an i64"));
}

TEST_CASE("mnist: IDX files, u8 scaled to [0, 1]", "[data]") {
  std::string dir = tmp("mnist/");
  std::string pix(2 * 784, '\0');
  pix[0] = static_cast<char>(255);
  pix[784 + 1] = static_cast<char>(51);
  write_file(dir + "train-images-idx3-ubyte", idx(0x08, {2, 28, 28}, pix));
  write_file(dir + "train-labels-idx1-ubyte",
             idx(0x08, {2}, std::string("\7\2", 2)));
  write_file(dir + "t10k-images-idx3-ubyte",
             idx(0x08, {1, 28, 28}, pix.substr(0, 784)));
  write_file(dir + "t10k-labels-idx1-ubyte",
             idx(0x08, {1}, std::string("\3", 1)));
  auto s = load_mnist(rec("Digit"), dims(), dir);
  CHECK(s->n == 2);
  CHECK(s->fields.at("img").at(0) == 1.0);
  CHECK(s->fields.at("img").at(785) == Approx(0.2));
  CHECK(s->fields.at("label").to_doubles() == std::vector<double>{7, 2});
  auto t = load_mnist(rec("Digit"), dims(), dir + "t10k");
  CHECK(t->n == 1);
  // A label of 12 is outside 0..10.
  write_file(dir + "t10k-labels-idx1-ubyte",
             idx(0x08, {1}, std::string("\14", 1)));
  CHECK(error_of([&] {
          load_mnist(rec("Digit"), dims(), dir + "t10k");
        }).rfind("DomainError", 0) == 0);
}

// ------------------------------------------------------------ error paths

TEST_CASE("loader errors: each is a clear error naming the file", "[data]") {
  std::vector<float> x(8, 0.5f);
  std::vector<int64_t> y = {1, 2};
  std::string good_x = npy("<f4", {2, 4}, bytes_of(x));
  std::string good_y = npy("<i8", {2}, bytes_of(y));
  auto dir_with = [&](const std::string& name,
                      const std::string& xbytes,
                      const std::string& ybytes) {
    std::string d = tmp("err_" + name + "/");
    write_file(d + "x.npy", xbytes);
    write_file(d + "y.npy", ybytes);
    return d;
  };
  struct Case {
    std::string name, kind, needle;
    std::function<void()> f;
  };
  std::vector<Case> cases = {
      {"missing file",
       "IOError",
       "no such file",
       [&] { load("Small", tmp("nope.npz")); }},
      {"missing npy in a dir",
       "IOError",
       "y.npy",
       [&] {
         std::string d = tmp("err_missing/");
         write_file(d + "x.npy", good_x);
         load("Small", d);
       }},
      {"unknown format",
       "IOError",
       "unknown dataset format",
       [&] {
         write_file(tmp("f.txt"), "hello");
         load("Small", tmp("f.txt"));
       }},
      {"bad npy magic",
       "IOError",
       "bad magic",
       [&] { load("Small", dir_with("magic", "NOTNUMPY" + good_x, good_y)); }},
      {"truncated npy data",
       "IOError",
       "declares 32 bytes",
       [&] {
         load("Small",
              dir_with("trunc", good_x.substr(0, good_x.size() - 3), good_y));
       }},
      {"truncated npy header",
       "IOError",
       "truncated",
       [&] {
         load("Small", dir_with("trunch", good_x.substr(0, 30), good_y));
       }},
      {"absurd npy shape",
       "IOError",
       "bytes of data",
       [&] {
         load("Small",
              dir_with("absurd",
                       npy("<f4", {1000000000000LL, 4}, bytes_of(x)),
                       good_y));
       }},
      {"overflowing npy shape",
       "IOError",
       "overflow",
       [&] {
         load(
             "Small",
             dir_with(
                 "overflow",
                 npy("<f4", {4611686018427387904LL, 4611686018427387904LL}, ""),
                 good_y));
       }},
      {"malformed npy header",
       "IOError",
       "malformed",
       [&] {
         std::string h = good_x;
         h[20] = '#';
         load("Small", dir_with("malformed", h, good_y));
       }},
      {"fortran order",
       "ShapeError",
       "fortran_order",
       [&] {
         load("Small",
              dir_with("fortran",
                       npy("<f4", {2, 4}, bytes_of(x), 1, "True"),
                       good_y));
       }},
      {"big-endian",
       "ShapeError",
       "big-endian",
       [&] {
         load("Small", dir_with("be", npy(">f4", {2, 4}, bytes_of(x)), good_y));
       }},
      {"unsupported dtype",
       "ShapeError",
       "unsupported dtype",
       [&] {
         load("Small",
              dir_with(
                  "c8", npy("<c8", {2, 4}, bytes_of(x) + bytes_of(x)), good_y));
       }},
      {"wrong dtype",
       "ShapeError",
       "expected dtype f32, found i32",
       [&] {
         load("Small",
              dir_with("dtype",
                       npy("<i4", {2, 4}, bytes_of(std::vector<int32_t>(8))),
                       good_y));
       }},
      {"float for an int field",
       "ShapeError",
       "expected dtype i64, found f64",
       [&] {
         load("Small",
              dir_with("dtype2",
                       good_x,
                       npy("<f8", {2}, bytes_of(std::vector<double>{1, 2}))));
       }},
      {"wrong shape",
       "ShapeError",
       "expected [4] f32, found [2 2]",
       [&] {
         load("Small",
              dir_with("shape", npy("<f4", {2, 2, 2}, bytes_of(x)), good_y));
       }},
      {"item counts disagree",
       "ShapeError",
       "has 3 items",
       [&] {
         load("Small",
              dir_with(
                  "count",
                  good_x,
                  npy("<i8", {3}, bytes_of(std::vector<int64_t>{1, 2, 3}))));
       }},
      {"domain",
       "DomainError",
       "item 1 of",
       [&] {
         load("Small",
              dir_with("domain",
                       good_x,
                       npy("<i8", {2}, bytes_of(std::vector<int64_t>{1, 12}))));
       }},
      {"npz not a zip",
       "IOError",
       "not a zip",
       [&] {
         write_file(tmp("bad.npz"), std::string(100, 'x'));
         load("Small", tmp("bad.npz"));
       }},
      {"npz crc",
       "IOError",
       "CRC",
       [&] {
         std::string z =
             zip({{"x.npy", good_x, false}, {"y.npy", good_y, false}});
         z[40 + 130] ^= 1;  // a data byte of x.npy
         write_file(tmp("crc.npz"), z);
         load("Small", tmp("crc.npz"));
       }},
      {"npz corrupt deflate",
       "IOError",
       "x.npy",
       [&] {
         std::string z =
             zip({{"x.npy", good_x, true}, {"y.npy", good_y, false}});
         for (size_t i = 36; i < 60; ++i) z[i] = static_cast<char>(0xFF);
         write_file(tmp("deflate.npz"), z);
         load("Small", tmp("deflate.npz"));
       }},
      {"npz absurd inflated size",
       "IOError",
       "more than deflate can produce",
       [&] {
         std::string z =
             zip({{"x.npy", good_x, true}, {"y.npy", good_y, false}});
         size_t cd = z.find(std::string("PK\1\2", 4));
         z[cd + 27] = static_cast<char>(0x7F);  // uncompressed size ~2 GB
         write_file(tmp("absurd.npz"), z);
         load("Small", tmp("absurd.npz"));
       }},
      {"npz truncated",
       "IOError",
       "",
       [&] {
         std::string z =
             zip({{"x.npy", good_x, false}, {"y.npy", good_y, false}});
         write_file(tmp("trunc.npz"), z.substr(0, z.size() - 30));
         load("Small", tmp("trunc.npz"));
       }},
      {"npz missing field",
       "ShapeError",
       "no array `y`",
       [&] {
         write_file(tmp("missing.npz"), zip({{"x.npy", good_x, false}}));
         load("Small", tmp("missing.npz"));
       }},
      {"csv missing column",
       "ShapeError",
       "no column `x_3`",
       [&] {
         write_file(tmp("e1.csv"), "y,x_0,x_1,x_2\n1,0,0,0\n");
         load("Small", tmp("e1.csv"));
       }},
      {"csv ragged row",
       "IOError",
       "line 3 has 4 cells",
       [&] {
         write_file(tmp("e2.csv"), "y,x_0,x_1,x_2,x_3\n1,0,0,0,0\n1,0,0,0\n");
         load("Small", tmp("e2.csv"));
       }},
      {"csv not a number",
       "ShapeError",
       "expected a number, found 'abc'",
       [&] {
         write_file(tmp("e3.csv"), "y,x_0,x_1,x_2,x_3\n1,0,abc,0,0\n");
         load("Small", tmp("e3.csv"));
       }},
      {"csv float for an int",
       "ShapeError",
       "expected an i64, found '1.5'",
       [&] {
         write_file(tmp("e4.csv"), "y,x_0,x_1,x_2,x_3\n1.5,0,0,0,0\n");
         load("Small", tmp("e4.csv"));
       }},
      {"csv empty",
       "IOError",
       "empty CSV",
       [&] {
         write_file(tmp("e5.csv"), "\n\n");
         load("Small", tmp("e5.csv"));
       }},
      {"safetensors corrupt",
       "IOError",
       "",
       [&] {
         write_file(tmp("bad.safetensors"),
                    std::string("\xff\xff\xff\xff\xff\xff\xff\x7f{}", 10));
         load("Small", tmp("bad.safetensors"));
       }},
      {"idx truncated",
       "IOError",
       "declares",
       [&] {
         std::string d = tmp("mnist_bad/");
         write_file(d + "train-images-idx3-ubyte",
                    idx(0x08, {60000, 28, 28}, "abc"));
         write_file(d + "train-labels-idx1-ubyte", idx(0x08, {60000}, "\1"));
         load_mnist(rec("Digit"), dims(), d);
       }},
      // Both headers are checked before either body is read (Note
      // [MNIST's headers first]): images whose body is cut short, with
      // an images file where the labels go, say the labels' shape.
      {"idx headers before bodies",
       "ShapeError",
       "expected labels [N], found [60000 28 28]",
       [&] {
         std::string d = tmp("mnist_heads/");
         write_file(d + "train-images-idx3-ubyte",
                    idx(0x08, {60000, 28, 28}, "abc"));
         write_file(d + "train-labels-idx1-ubyte",
                    idx(0x08, {60000, 28, 28}, "abc"));
         load_mnist(rec("Digit"), dims(), d);
       }},
      {"idx one label per image",
       "ShapeError",
       "holds 2 images, but",
       [&] {
         std::string d = tmp("mnist_count/");
         write_file(d + "train-images-idx3-ubyte",
                    idx(0x08, {2, 28, 28}, std::string(2 * 784, '\0')));
         write_file(d + "train-labels-idx1-ubyte", idx(0x08, {3}, "\1\2\3"));
         load_mnist(rec("Digit"), dims(), d);
       }},
      {"idx bad magic",
       "IOError",
       "bad magic",
       [&] {
         std::string d = tmp("mnist_magic/");
         write_file(d + "train-images-idx3-ubyte", "\1\1\1\1");
         write_file(d + "train-labels-idx1-ubyte", idx(0x08, {1}, "\1"));
         load_mnist(rec("Digit"), dims(), d);
       }},
      {"mnist missing",
       "IOError",
       "no such file",
       [&] { load_mnist(rec("Digit"), dims(), tmp("no_mnist_here/")); }},
      {"mnist wrong image size",
       "ShapeError",
       "expected [784]",
       [&] {
         std::string d = tmp("mnist_size/");
         write_file(d + "train-images-idx3-ubyte",
                    idx(0x08, {1, 10, 10}, std::string(100, '\0')));
         write_file(d + "train-labels-idx1-ubyte", idx(0x08, {1}, "\1"));
         load_mnist(rec("Digit"), dims(), d);
       }},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    std::string e = error_of(c.f);
    INFO(e);
    CHECK(e.rfind(c.kind + ": ", 0) == 0);
    CHECK(e.find(c.needle) != std::string::npos);
  }
}

// ------------------------------------------------------------ fuzz

TEST_CASE("loaders never crash on mutated files", "[fuzz]") {
  std::vector<float> x(8, 0.5f);
  std::vector<int64_t> y = {1, 2};
  std::string nx = npy("<f4", {2, 4}, bytes_of(x)),
              ny = npy("<i8", {2}, bytes_of(y));
  const auto& small = rec("Small");
  auto to_store = [&](std::map<std::string, RawArray> m) {
    std::map<std::string, RawArray> cols;
    for (const char* k : {"x", "y"})
      if (m.count(k)) cols[k] = m[k];
    make_store(small, dims(), cols, {}, "fuzz");
  };
  fuzz(nx, 1, [&](const std::string& b) {
    auto p = std::make_shared<const std::string>(b);
    RawArray a = parse_npy(p, 0, p->size(), "fuzz.npy");
    to_store(
        {{"x", a},
         {"y",
          parse_npy(
              std::make_shared<const std::string>(ny), 0, ny.size(), "y")}});
  });
  for (bool deflated : {false, true})
    fuzz(zip({{"x.npy", nx, deflated}, {"y.npy", ny, deflated}}),
         2 + deflated,
         [&](const std::string& b) {
           std::string path = tmp("fuzz.npz");
           write_file(path, b);
           load_dataset(small, dims(), path, {});
         });
  fuzz(idx(0x08, {3, 28, 28}, std::string(3 * 784, '\7')),
       4,
       [&](const std::string& b) {
         RawArray a =
             parse_idx(std::make_shared<const std::string>(b), "fuzz-idx");
         (void)a.numel();
       });
  fuzz(idx(0x0D, {2, 4}, std::string(32, '\0')), 5, [&](const std::string& b) {
    parse_idx(std::make_shared<const std::string>(b), "fuzz-idx");
  });
  fuzz("y,x_0,x_1,x_2,x_3\n1,0.5,1,2,3\n2,4,5,6,7\n",
       6,
       [&](const std::string& b) {
         to_store(parse_csv(b, small, dims(), {}, "fuzz.csv"));
       });
  SUCCEED();
}

TEST_CASE("IDX: a shape whose partial product overflows is an IOError",
          "[data]") {
  // Found by fuzz_idx: dims 2 247 17367040 1560281088 0 hold no element,
  // but 2 * 247 * 17367040 * 1560281088 (about 1.3e19) is past INT64_MAX
  // (about 9.2e18), where the tensor library counts elements: it threw an
  // OpError naming no file. Expected by hand: the loader's own IOError.
  std::string b = idx(0x08, {2, 247, 17367040, 1560281088, 0}, "");
  CHECK(error_of([&] {
          parse_idx(std::make_shared<const std::string>(b), "big-idx");
        }) == "IOError: big-idx: the shape's size overflows");
  // Dims whose product fits stay accepted: 2 * 247 * 0 * ... = 0 items.
  std::string ok = idx(0x08, {2, 247, 0}, "");
  RawArray a = parse_idx(std::make_shared<const std::string>(ok), "ok-idx");
  CHECK(a.numel() == 0);
  CHECK(a.shape == ops::Shape{2, 247, 0});
}

TEST_CASE("loaders refuse a FIFO named like a data file, without blocking",
          "[data]") {
  // Issue 16 item 6: opening a FIFO waits for a writer; dataset() hung.
  std::string dir = tmp("fifo_dir/");
  fs::create_directories(dir);
  for (const std::string& name : {dir + "x.npy",
                                  tmp("fifo.safetensors"),
                                  tmp("fifo.csv"),
                                  tmp("fifo.npz")}) {
    INFO(name);
    fs::remove(name);
    REQUIRE(::mkfifo(name.c_str(), 0600) == 0);
    std::string from = name == dir + "x.npy" ? dir : name;
    std::string e = error_of([&] { load("Small", from); });
    CHECK_THAT(
        e, Catch::Contains("IOError") && Catch::Contains("not a regular file"));
    CHECK_THAT(
        error_of([&] { stream_dataset(rec("Small"), dims(), from, {}); }),
        Catch::Contains("not a regular file"));
  }
}
