#pragma once
// outputs — how interpreter values leave and enter the program: JSON text for `emit` lines,
// and conversion to / from .npy arrays for `save` and `load`.
#include <string>

#include "interp/value.h"
#include "trl_npy.h"

namespace trlc::interp {

/** Append the JSON text of "v" to "out": bool true/false, i32 as an integer, f32 / f64 as the
 *  shortest decimal that reads back to the same float / double (std::to_chars), with ".0"
 *  appended when that decimal looks like an integer; NaN, Infinity, -Infinity as bare words;
 *  arrays as nested lists; tuples as lists of their elements; no spaces.  OpError for keys. */
void append_json(std::string &out, const Value &v);

/** The shortest round-trip decimal of one element of dtype "dt" (as append_json writes it). */
std::string format_scalar(ir::DType dt, double x);

/** A non-tuple, non-key value as an .npy array; OpError otherwise. */
trl::NpyArray to_npy(const Value &v);
/** An .npy array as a value. */
Value from_npy(const trl::NpyArray &a);

}  // namespace trlc::interp
