#pragma once
// trl_json — the JSON text of emit values, shared by the reference interpreter
// (compiler/interp/outputs.cpp) and generated programs (runtime/rt) so that both print the
// same bytes.  bool → true/false; i32 → integer; f32 / f64 → the shortest decimal that reads
// back to the same float / double (std::to_chars), with ".0" appended when that decimal looks
// like an integer; NaN, Infinity, -Infinity as bare words; arrays as nested lists; no spaces.
#include <cstdint>
#include <string>

#include "trl_npy.h"

namespace trl {

/** The JSON text of one element of dtype "dt" whose value is "x" (exact for every bool, i32,
 *  f32 and f64 value: a double holds them all). */
std::string json_scalar(NpyDType dt, double x);
/** Append json_scalar(dt, x) to "out". */
void json_append_scalar(std::string &out, NpyDType dt, double x);

/** Append the nested-list JSON text of a row-major array: "rank" dims of extents "shape"
 *  (rank 0 = one scalar), elements of dtype "dt" at "data" (bool as one byte, i32, f32, f64
 *  in host byte order). */
void json_append_array(std::string &out, NpyDType dt, int rank, const int64_t *shape, const void *data);

}  // namespace trl
