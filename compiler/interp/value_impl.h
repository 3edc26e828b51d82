#pragma once
// value_impl — helpers shared by the files of interp/value.h's operations, private to interp/:
// the OpError thrower, row-major strides and broadcast iteration, 1-D fibers along an axis,
// i32 overflow checks and the dtype-exact add and multiply of reductions and products.  The
// operations are split by family: value.cpp (values, casts, broadcasting, elementwise),
// value_reduce.cpp (reductions, softmax), value_shapes.cpp (linear algebra, shapes, indexing,
// scans), value_random.cpp (random draws, initializers).
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "interp/value.h"

namespace trlc::interp::value_detail {

[[noreturn]] inline void fail(const std::string &msg) { throw OpError{msg}; }

inline bool is_float(DType d) { return d == DType::F32 || d == DType::F64; }

inline std::vector<int64_t> strides_of(const Shape &s) {
    std::vector<int64_t> st(s.size(), 1);
    for (int64_t d = static_cast<int64_t>(s.size()) - 2; d >= 0; --d) st[d] = st[d + 1] * s[d + 1];
    return st;
}

/** Strides of operand shape "s" viewed inside the broadcast shape "out" (0 = broadcast). */
inline std::vector<int64_t> bstrides(const Shape &s, const Shape &out) {
    std::vector<int64_t> st(out.size(), 0), own = strides_of(s);
    size_t off = out.size() - s.size();
    for (size_t d = 0; d < s.size(); ++d) st[off + d] = s[d] == 1 ? 0 : own[d];
    return st;
}

/** Calls f(out_index, offsets...) for every element of "out" with broadcast operands. */
template <class F>
void for_each_broadcast(const Shape &out, const std::vector<std::vector<int64_t>> &st, F f) {
    int64_t n = numel(out);
    size_t r = out.size(), k = st.size();
    std::vector<int64_t> idx(r, 0), off(k, 0);
    for (int64_t i = 0; i < n; ++i) {
        f(i, off);
        for (size_t d = r; d-- > 0;) {
            ++idx[d];
            for (size_t o = 0; o < k; ++o) off[o] += st[o][d];
            if (idx[d] < out[d]) break;
            for (size_t o = 0; o < k; ++o) off[o] -= st[o][d] * out[d];
            idx[d] = 0;
        }
    }
}

inline std::string fmt_num(double v) {
    std::ostringstream ss;
    ss.precision(17);
    ss << v;
    return ss.str();
}

inline int32_t check_i32(long double v, const char *what) {
    if (v < -2147483648.0L || v > 2147483647.0L)
        fail(std::string("i32 overflow in ") + what + " (result " + fmt_num(static_cast<double>(v)) +
             " is outside [-2147483648, 2147483647])");
    return static_cast<int32_t>(v);
}

inline double add_in(DType dt, double acc, double x) {
    if (dt == DType::F32) return static_cast<float>(acc) + static_cast<float>(x);
    if (dt == DType::F64) return acc + x;
    return check_i32(static_cast<long double>(acc) + x, "sum");
}

inline double mul_in(DType dt, double a, double b) {
    if (dt == DType::F32) return static_cast<float>(a) * static_cast<float>(b);
    if (dt == DType::F64) return a * b;
    return check_i32(static_cast<long double>(a) * b, "product");
}

/** Calls f(base, stride, n) for every 1-D fiber of "shape" along "axis". */
template <class F>
void for_each_fiber(const Shape &shape, int64_t axis, F f) {
    auto st = strides_of(shape);
    int64_t n = shape[axis], stride = st[axis];
    int64_t outer = 1, inner = stride;
    for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t in = 0; in < inner; ++in) f(o * n * stride + in, stride, n);
}

}  // namespace trlc::interp::value_detail
