#pragma once
// trl_npy — numpy .npy / .npz files: writing and strictly validated reading.
//
// .npy: format version 1.0 (magic "\x93NUMPY", 1, 0, little-endian u16 header length, a Python
// dict literal {'descr': …, 'fortran_order': False, 'shape': (…), } padded with spaces so that
// magic + header end on a multiple of 64 bytes, the last byte '\n'), then the raw little-endian
// data in C order.  Reading also accepts versions 2.0 and 3.0 (u32 header length).
// .npz: an uncompressed ("stored") zip archive of .npy members, each with its CRC-32, as
// numpy.savez writes (reading follows the central directory, zip64 extra fields included).
// Dtypes: '|b1' (bool), '<i4' (i32), '<f4' (f32), '<f8' (f64).  Every reading problem is
// returned as a clear message, never an abort.  Shared by the interpreter and generated programs.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace trl {

enum class NpyDType { Bool, I32, F32, F64 };

/** "bool", "i32", "f32", "f64". */
const char *npy_dtype_name(NpyDType d);
/** Bytes per element: 1, 4, 4, 8. */
int npy_dtype_size(NpyDType d);

/** An array: dtype, shape (empty = scalar) and the raw little-endian bytes in C order
 *  (size = product(shape) * npy_dtype_size(dtype)). */
struct NpyArray {
    NpyDType dtype = NpyDType::F32;
    std::vector<int64_t> shape;
    std::vector<uint8_t> data;
    int64_t numel() const;
};

/** The bytes of a .npy file holding "a". */
std::string npy_encode(const NpyArray &a);
/** Parse .npy bytes; false and a message in "err" on any problem.  "what" names the source
 *  in messages (e.g. the file name). */
bool npy_decode(const std::string &bytes, const std::string &what, NpyArray *out, std::string *err);

/** Write / read one .npy file; false and a message in "err" on failure. */
bool npy_save(const std::string &path, const NpyArray &a, std::string *err);
bool npy_load(const std::string &path, NpyArray *out, std::string *err);

/** A named member of an .npz archive ("arr_0", …; the ".npy" suffix is added in the file). */
using NpzMember = std::pair<std::string, NpyArray>;

/** The bytes of an uncompressed .npz archive of "members" (in order). */
std::string npz_encode(const std::vector<NpzMember> &members);
/** Parse .npz bytes (member names without ".npy"), in archive order. */
bool npz_decode(const std::string &bytes, const std::string &what, std::vector<NpzMember> *out, std::string *err);
bool npz_save(const std::string &path, const std::vector<NpzMember> &members, std::string *err);
bool npz_load(const std::string &path, std::vector<NpzMember> *out, std::string *err);

/** CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), as zip uses. */
uint32_t crc32(const void *data, size_t n);

}  // namespace trl
