// .npy / .npz round trips and rejection of malformed files with a clear message.
#include <gtest/gtest.h>

#include <cstring>

#include "trl_npy.h"

namespace {

trl::NpyArray f32_array(std::vector<int64_t> shape, std::vector<float> v) {
    trl::NpyArray a;
    a.dtype = trl::NpyDType::F32;
    a.shape = shape;
    a.data.resize(v.size() * 4);
    std::memcpy(a.data.data(), v.data(), a.data.size());
    return a;
}

TEST(Npy, HeaderIsPaddedTo64AndEndsWithNewline) {
    std::string b = trl::npy_encode(f32_array({2, 3}, {1, 2, 3, 4, 5, 6}));
    ASSERT_GE(b.size(), 64u);
    size_t hl = static_cast<uint8_t>(b[8]) | (static_cast<uint8_t>(b[9]) << 8);
    EXPECT_EQ((10 + hl) % 64, 0u);
    EXPECT_EQ(b[10 + hl - 1], '\n');
    EXPECT_EQ(b.substr(10, 60).find("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"), 0u);
    EXPECT_EQ(b.size(), 10 + hl + 24);
}

TEST(Npy, OneDimShapeHasTrailingComma) {
    std::string b = trl::npy_encode(f32_array({3}, {1, 2, 3}));
    EXPECT_NE(b.find("'shape': (3,)"), std::string::npos);
    std::string s = trl::npy_encode(f32_array({}, {7}));
    EXPECT_NE(s.find("'shape': ()"), std::string::npos);
}

TEST(Npy, RoundTripAllDtypes) {
    for (auto dt : {trl::NpyDType::Bool, trl::NpyDType::I32, trl::NpyDType::F32, trl::NpyDType::F64}) {
        trl::NpyArray a;
        a.dtype = dt;
        a.shape = {2, 2};
        a.data.assign(4 * trl::npy_dtype_size(dt), 0);
        for (size_t i = 0; i < a.data.size(); i += trl::npy_dtype_size(dt)) a.data[i] = 1;
        trl::NpyArray b;
        std::string err;
        ASSERT_TRUE(trl::npy_decode(trl::npy_encode(a), "x.npy", &b, &err)) << err;
        EXPECT_EQ(b.dtype, dt);
        EXPECT_EQ(b.shape, a.shape);
        EXPECT_EQ(b.data, a.data);
    }
}

std::string decode_error(const std::string &bytes) {
    trl::NpyArray b;
    std::string err;
    EXPECT_FALSE(trl::npy_decode(bytes, "w.npy", &b, &err));
    return err;
}

TEST(Npy, RejectsTruncatedFile) {
    std::string b = trl::npy_encode(f32_array({4}, {1, 2, 3, 4}));
    EXPECT_EQ(decode_error(b.substr(0, 5)), "w.npy: truncated .npy file (5 bytes, shorter than the 10-byte preamble)");
    EXPECT_EQ(decode_error(b.substr(0, 30)),
              "w.npy: truncated .npy file (header of 118 bytes does not fit in the file)");
    EXPECT_EQ(decode_error(b.substr(0, b.size() - 4)),
              "w.npy: data size mismatch: shape and dtype need 16 bytes, the file holds 12");
}

TEST(Npy, RejectsBadMagic) {
    std::string b = trl::npy_encode(f32_array({1}, {1}));
    b[1] = 'X';
    EXPECT_EQ(decode_error(b), "w.npy: not a .npy file (bad magic string)");
}

TEST(Npy, RejectsFortranOrder) {
    std::string b = trl::npy_encode(f32_array({1}, {1}));
    size_t p = b.find("False");
    b.replace(p, 5, "True ");
    EXPECT_EQ(decode_error(b), "w.npy: fortran_order is True; trlc reads C-order arrays only "
                               "(save with numpy.ascontiguousarray)");
}

TEST(Npy, RejectsUnknownDtype) {
    std::string b = trl::npy_encode(f32_array({2}, {1, 2}));
    size_t p = b.find("<f4");
    b.replace(p, 3, "<i8");
    EXPECT_EQ(decode_error(b), "w.npy: unsupported dtype '<i8' (trlc reads '<f4', '<f8', '<i4' and '|b1')");
}

TEST(Npy, RejectsSizeMismatch) {
    std::string b = trl::npy_encode(f32_array({2}, {1, 2}));
    b += "xxxx";
    EXPECT_EQ(decode_error(b), "w.npy: data size mismatch: shape and dtype need 8 bytes, the file holds 12");
}

TEST(Npy, RejectsBadVersionAndMalformedDict) {
    std::string b = trl::npy_encode(f32_array({2}, {1, 2}));
    std::string v = b;
    v[6] = 9;
    EXPECT_EQ(decode_error(v), "w.npy: unsupported .npy format version 9.0");
    std::string m = b;
    m[10] = '[';
    EXPECT_EQ(decode_error(m).rfind("w.npy: malformed .npy header (expected a '{' dict)", 0), 0u);
}

TEST(Npz, RoundTripWithCrc) {
    std::vector<trl::NpzMember> ms = {{"arr_0", f32_array({2}, {1, 2})}, {"arr_1", f32_array({}, {3})}};
    std::string bytes = trl::npz_encode(ms);
    std::vector<trl::NpzMember> back;
    std::string err;
    ASSERT_TRUE(trl::npz_decode(bytes, "p.npz", &back, &err)) << err;
    ASSERT_EQ(back.size(), 2u);
    EXPECT_EQ(back[0].first, "arr_0");
    EXPECT_EQ(back[1].first, "arr_1");
    EXPECT_EQ(back[1].second.data, ms[1].second.data);
    // Flip one data byte: the CRC check catches it.
    size_t p = bytes.find("\x93NUMPY") + 130;
    bytes[p] ^= 1;
    EXPECT_FALSE(trl::npz_decode(bytes, "p.npz", &back, &err));
    EXPECT_EQ(err, "p.npz: CRC-32 mismatch in member 'arr_0.npy' (corrupt archive)");
}

TEST(Npz, Crc32KnownValue) {
    EXPECT_EQ(trl::crc32("123456789", 9), 0xCBF43926u);  // the standard check value
}

TEST(Npz, RejectsNonZip) {
    std::vector<trl::NpzMember> back;
    std::string err;
    EXPECT_FALSE(trl::npz_decode(std::string(100, 'x'), "p.npz", &back, &err));
    EXPECT_EQ(err, "p.npz: not an .npz file (no zip end-of-directory record)");
}

}  // namespace
