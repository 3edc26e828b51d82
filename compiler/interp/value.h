#pragma once
// value — the run-time values of the reference interpreter, and the numpy-semantics operations
// on them (elementwise math with broadcasting, reductions, linear algebra, shape ops, random
// draws).  Pure functions of values: no IR evaluation here (see eval.cpp).
//
// Storage: every non-key element is held in a double.  This is exact for bool, i32 and f32, and
// every operation computes in the dtype of its result: an f32 addition is `float + float`, an
// f32 exp is trl::exp_f32 (runtime/trl_math.h), so the bits equal what generated C++ computes
// with floats.
// Errors (bad index, integer overflow, empty max, …) throw OpError; the evaluator attaches the
// source position of the node.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "trl_random.h"

namespace trlc::interp {

using ir::DType;
using Shape = std::vector<int64_t>;

/** A run-time failure inside an operation; the evaluator reports it at the node's Loc. */
struct OpError {
    std::string message;
};

/** A tensor value (dtype, shape, row-major data) or a tuple of values. */
struct Value {
    bool is_tuple = false;
    DType dtype = DType::F32;
    Shape shape;                    // empty = scalar
    std::vector<double> data;       // all dtypes but Key (f32 values are exact floats)
    std::vector<trl::RngKey> keys;  // Key
    std::vector<Value> elems;       // tuple elements

    int64_t numel() const;
    /** A scalar of "dt" holding "v" (rounded to the dtype). */
    static Value scalar(DType dt, double v);
    /** Zero-filled array of "dt" with "shape". */
    static Value zeros(DType dt, const Shape &shape);
};

int64_t numel(const Shape &s);
std::string shape_string(DType dt, const Shape &s);  // "f32[4, 3]"
std::string value_type_string(const Value &v);

/** Round "x" to the dtype's value set (f32: to float; i32/bool: must already be exact). */
double round_to(DType dt, double x);
/** Convert a value's elements to "dt" with C++ cast semantics (float → int truncates toward
 *  zero; NaN or out of i32 range is an OpError; → bool is x != 0). */
Value cast(const Value &v, DType dt);

/** numpy broadcasting of two shapes; OpError naming both if incompatible. */
Shape broadcast_shapes(const Shape &a, const Shape &b, DType da, DType db);

Value unary(ir::UnaryOp op, const Value &x, DType result);
Value binary(ir::BinaryOp op, const Value &a, const Value &b, DType result);
Value where(const Value &c, const Value &a, const Value &b, DType result);

/** Normalise a possibly negative axis against "rank"; OpError when out of range. */
int64_t norm_axis(int64_t axis, int64_t rank);

// Reductions over "axes" (empty + !has_axes = all axes).  Sequential accumulation in the
// result dtype, in increasing index order.
Value reduce(ir::BuiltinOp op, const Value &x, const std::vector<int64_t> &axes, bool has_axes, DType result);
Value softmax(const Value &x, int64_t axis, bool log, DType result);
Value matmul(const Value &a, const Value &b, DType result);
Value transpose(const Value &x, const std::vector<int64_t> &axes);
Value reshape(const Value &x, const Shape &shape);
Value concat(const std::vector<Value> &xs, int64_t axis, bool stack, DType result);
Value one_hot(const Value &idx, int64_t depth, DType result);
/** zeros[n], then out[idx[k]] += values[k] in row-major order of k (the adjoint of an indexing,
 *  ir.h BuiltinOp::ScatterAdd); idx i32 with one value per index; an index outside [0, n)
 *  fails. */
Value scatter_add(const Value &idx, const Value &values, int64_t n, DType result);
Value take(const Value &x, const Value &idx, int64_t axis);
Value cumsum(const Value &x, int64_t axis, bool has_axis, DType result);
Value discounted_cumsum(const Value &x, const Value &gamma, int64_t axis, DType result);
Value clamp(const Value &x, const Value &lo, const Value &hi, DType result);

/** A sub-array: x[i] along axis 0 (i already checked). */
Value slice0(const Value &x, int64_t i);
/** Stack equally shaped values along a new leading axis (n may be 0: "elem" gives the type). */
Value stack0(const std::vector<Value> &xs, DType dt, const Shape &elem_shape);

// Random draws (trl_random.h): "key" is a scalar key.
Value uniform(const Value &key, const Shape &shape, DType dt);
Value normal(const Value &key, const Shape &shape, DType dt);
Value categorical(const Value &key, const Value &logits);
/** orthogonal(key, [rows, cols], gain) in "dt" (runtime/trl_linalg.h, computed in double). */
Value orthogonal(const Value &key, const Shape &shape, const Value &gain, DType dt);
/** permutation(key, n): i32[n] (runtime/trl_linalg.h). */
Value permutation(const Value &key, int64_t n);

}  // namespace trlc::interp
