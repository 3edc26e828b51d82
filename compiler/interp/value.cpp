// value — numpy-semantics operations on interpreter values (see value.h).  Every operation
// computes in its result dtype: f32 in float (exp, log, tanh, sigmoid: runtime/trl_math.h's, which
// every backend calls too; the other functions: libm's float ones), f64 in double, i32 exactly with overflow reported as an error,
// bool as bool.
// The shared helpers are in value_impl.h; reductions, shapes and random draws in value_reduce.cpp,
// value_shapes.cpp and value_random.cpp.
#include "interp/value.h"

#include "interp/value_impl.h"

#include "ir/ops.h"

#include "trl_math.h"
#include "trl_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace trlc::interp {

using ir::BinaryOp;
using ir::BuiltinOp;
using ir::UnaryOp;
using namespace value_detail;

int64_t numel(const Shape &s) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return n;
}

int64_t Value::numel() const { return interp::numel(shape); }

Value Value::scalar(DType dt, double v) {
    Value r;
    r.dtype = dt;
    r.data = {round_to(dt, v)};
    return r;
}

Value Value::zeros(DType dt, const Shape &shape) {
    Value r;
    r.dtype = dt;
    r.shape = shape;
    if (dt == DType::Key)
        r.keys.assign(static_cast<size_t>(interp::numel(shape)), trl::RngKey{0, 0, 0});
    else
        r.data.assign(static_cast<size_t>(interp::numel(shape)), 0.0);
    return r;
}

std::string shape_string(DType dt, const Shape &s) {
    std::string r = ir::dtype_name(dt);
    if (s.empty()) return r;
    r += "[";
    for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
    return r + "]";
}

std::string value_type_string(const Value &v) {
    if (!v.is_tuple) return shape_string(v.dtype, v.shape);
    std::string r = "(";
    for (size_t i = 0; i < v.elems.size(); ++i) r += (i ? ", " : "") + value_type_string(v.elems[i]);
    return r + ")";
}

double round_to(DType dt, double x) {
    switch (dt) {
    case DType::F32: return static_cast<double>(static_cast<float>(x));
    case DType::Bool: return x != 0 ? 1.0 : 0.0;
    default: return x;
    }
}

static double cast_elem(double x, DType from, DType to) {
    switch (to) {
    case DType::Bool: return x != 0 ? 1.0 : 0.0;  // NaN != 0: true, as in C++
    case DType::I32:
        if (is_float(from)) {
            if (std::isnan(x)) fail("cannot convert NaN to i32");
            double t = std::trunc(x);
            if (t < -2147483648.0 || t > 2147483647.0)
                fail("value " + fmt_num(x) + " is out of the i32 range in a conversion to i32");
            return t;
        }
        return x;
    case DType::F32: return static_cast<double>(static_cast<float>(x));
    case DType::F64: return x;
    case DType::Key: fail("cannot convert a number to a random key");
    }
    return x;
}

Value cast(const Value &v, DType dt) {
    if (v.is_tuple) {
        Value r = v;
        for (auto &e : r.elems) e = cast(e, dt);
        return r;
    }
    if (v.dtype == dt) return v;
    if (v.dtype == DType::Key) fail("cannot convert a random key to " + std::string(ir::dtype_name(dt)));
    Value r;
    r.dtype = dt;
    r.shape = v.shape;
    r.data.resize(v.data.size());
    for (size_t i = 0; i < v.data.size(); ++i) r.data[i] = cast_elem(v.data[i], v.dtype, dt);
    return r;
}

Shape broadcast_shapes(const Shape &a, const Shape &b, DType da, DType db) {
    size_t r = std::max(a.size(), b.size());
    Shape out(r);
    for (size_t i = 0; i < r; ++i) {
        int64_t x = i < r - a.size() ? 1 : a[i - (r - a.size())];
        int64_t y = i < r - b.size() ? 1 : b[i - (r - b.size())];
        if (x != y && x != 1 && y != 1)
            fail("shapes " + shape_string(da, a) + " and " + shape_string(db, b) + " cannot be broadcast");
        out[i] = x == 1 ? y : x;
    }
    return out;
}

// ---- elementwise ------------------------------------------------------------------------------

// One element of a unary operation: the kernels that ir/ops.def names (runtime/trl_ops.h,
// trl_math.h, libm), the functions generated code calls.
static double unary_f32(UnaryOp op, float x) {
    switch (op) {
// clang-format off
#define TRL_UNARY(E, name, typing, f32, f64, ...) \
    case UnaryOp::E: return f32(x);
#include "ir/ops.def"
        // clang-format on
    }
    return x;
}

static double unary_f64(UnaryOp op, double x) {
    switch (op) {
// clang-format off
#define TRL_UNARY(E, name, typing, f32, f64, ...) \
    case UnaryOp::E: return f64(x);
#include "ir/ops.def"
        // clang-format on
    }
    return x;
}

static double unary_i32(UnaryOp op, double x) {
    const long long v = static_cast<long long>(x);
    switch (op) {
#define TRL_UNARY(E, name, typing, f32, f64, i32, check, ...)                                                          \
    case UnaryOp::E:                                                                                                   \
        if (ir::UnaryTyping::typing == ir::UnaryTyping::Float) break;                                                  \
        return *check ? check_i32(static_cast<long double>(i32(v)), check) : static_cast<double>(i32(v));
#include "ir/ops.def"
    }
    fail("this operation needs a float operand, not i32");
}

Value unary(UnaryOp op, const Value &x0, DType result) {
    if (x0.is_tuple || x0.dtype == DType::Key) fail("operand of an elementwise operation is " + value_type_string(x0));
    if (op == UnaryOp::StopGrad) return x0;
    DType dt = op == UnaryOp::Not ? DType::Bool : result;
    Value x = cast(x0, dt == DType::Bool && op != UnaryOp::Not ? DType::I32 : dt);
    Value r;
    r.dtype = result;
    r.shape = x.shape;
    r.data.resize(x.data.size());
    for (size_t i = 0; i < x.data.size(); ++i) {
        double v = x.data[i];
        switch (x.dtype) {
        case DType::F32: r.data[i] = unary_f32(op, static_cast<float>(v)); break;
        case DType::F64: r.data[i] = unary_f64(op, v); break;
        case DType::Bool:
            if (op != UnaryOp::Not) fail("this operation needs a numeric operand, not bool");
            r.data[i] = v == 0;
            break;
        default: r.data[i] = unary_i32(op, v); break;
        }
    }
    if (r.dtype != x.dtype && op != UnaryOp::Not) return cast(r, result);
    return r;
}

static double binary_elem(BinaryOp op, DType dt, double a, double b) {
    switch (op) {
    case BinaryOp::Lt: return a < b;
    case BinaryOp::Le: return a <= b;
    case BinaryOp::Gt: return a > b;
    case BinaryOp::Ge: return a >= b;
    case BinaryOp::Eq: return a == b;
    case BinaryOp::Ne: return a != b;
    case BinaryOp::And: return (a != 0) && (b != 0);
    case BinaryOp::Or: return (a != 0) || (b != 0);
    default: break;
    }
    if (dt == DType::F32) {
        float x = static_cast<float>(a), y = static_cast<float>(b);
        switch (op) {
        case BinaryOp::Add: return x + y;
        case BinaryOp::Sub: return x - y;
        case BinaryOp::Mul: return x * y;
        case BinaryOp::Div: return x / y;
        case BinaryOp::Mod: return trl::pymod_f32(x, y);
        case BinaryOp::Pow: return trl::pow_f32(x, y);
        case BinaryOp::Min: return trl::min_f32(x, y);
        case BinaryOp::Max: return trl::max_f32(x, y);
        default: break;
        }
    } else if (dt == DType::F64) {
        switch (op) {
        case BinaryOp::Add: return a + b;
        case BinaryOp::Sub: return a - b;
        case BinaryOp::Mul: return a * b;
        case BinaryOp::Div: return a / b;
        case BinaryOp::Mod: return trl::pymod_f64(a, b);
        case BinaryOp::Pow: return trl::pow_f64(a, b);
        case BinaryOp::Min: return trl::min_f64(a, b);
        case BinaryOp::Max: return trl::max_f64(a, b);
        default: break;
        }
    } else {  // i32 (bool operands were promoted)
        long double x = a, y = b;
        switch (op) {
        case BinaryOp::Add: return check_i32(x + y, "addition");
        case BinaryOp::Sub: return check_i32(x - y, "subtraction");
        case BinaryOp::Mul: return check_i32(x * y, "multiplication");
        case BinaryOp::Div:
        case BinaryOp::Mod: {
            if (b == 0) fail(op == BinaryOp::Mod ? "integer modulo by zero" : "integer division by zero");
            long long p = static_cast<long long>(a), q = static_cast<long long>(b);
            if (op == BinaryOp::Mod) return static_cast<double>(trl::pmod_i64(p, q));
            return check_i32(trl::floordiv_i64(p, q), "division");
        }
        case BinaryOp::Pow: {
            if (b < 0) fail("negative integer power " + fmt_num(a) + " ** " + fmt_num(b) + " (use a float base)");
            long double r = 1;
            for (int64_t k = 0; k < static_cast<int64_t>(b); ++k) {
                r *= x;
                check_i32(r, "power");
                if (r == 0 || r == 1) break;
            }
            if (r == -1 || (r == 1 && x == -1)) r = (static_cast<int64_t>(b) % 2 && x == -1) ? -1 : 1;
            return r;
        }
        case BinaryOp::Min: return std::min(a, b);
        case BinaryOp::Max: return std::max(a, b);
        default: break;
        }
    }
    fail("unsupported binary operation");
}

static bool is_cmp(BinaryOp op) {
    return op == BinaryOp::Lt || op == BinaryOp::Le || op == BinaryOp::Gt || op == BinaryOp::Ge || op == BinaryOp::Eq ||
           op == BinaryOp::Ne;
}

Value binary(BinaryOp op, const Value &a0, const Value &b0, DType result) {
    if (a0.is_tuple || b0.is_tuple || a0.dtype == DType::Key || b0.dtype == DType::Key)
        fail("operands " + value_type_string(a0) + " and " + value_type_string(b0) + " of an elementwise operation");
    DType dt;
    if (is_cmp(op))
        dt = std::max(a0.dtype, b0.dtype);
    else if (op == BinaryOp::And || op == BinaryOp::Or)
        dt = DType::Bool;
    else
        dt = result == DType::Bool ? DType::I32 : result;
    if (is_cmp(op) && dt == DType::Bool) dt = DType::I32;  // compare bools as 0/1
    Value a = cast(a0, dt), b = cast(b0, dt);
    Value r;
    r.dtype = result;
    r.shape = broadcast_shapes(a.shape, b.shape, a0.dtype, b0.dtype);
    r.data.resize(static_cast<size_t>(numel(r.shape)));
    for_each_broadcast(r.shape, {bstrides(a.shape, r.shape), bstrides(b.shape, r.shape)},
                       [&](int64_t i, const std::vector<int64_t> &off) {
                           r.data[i] = binary_elem(op, dt, a.data[off[0]], b.data[off[1]]);
                       });
    if (!is_cmp(op) && op != BinaryOp::And && op != BinaryOp::Or && result == DType::Bool)
        return cast(Value{false, DType::I32, r.shape, r.data, {}, {}}, DType::Bool);
    return r;
}

Value where(const Value &c0, const Value &a0, const Value &b0, DType result) {
    if (c0.is_tuple || a0.is_tuple || b0.is_tuple) {
        // where over tuples: elementwise per tuple element (a scalar condition picks whole values).
        if (a0.is_tuple && b0.is_tuple && a0.elems.size() == b0.elems.size() && !c0.is_tuple) {
            Value r;
            r.is_tuple = true;
            for (size_t i = 0; i < a0.elems.size(); ++i)
                r.elems.push_back(where(c0, a0.elems[i], b0.elems[i], a0.elems[i].dtype));
            return r;
        }
        fail("where() of tuple values needs two tuples of the same arity and a tensor condition");
    }
    Value c = cast(c0, DType::Bool);
    Shape s =
        broadcast_shapes(broadcast_shapes(c.shape, a0.shape, DType::Bool, a0.dtype), b0.shape, a0.dtype, b0.dtype);
    std::vector<std::vector<int64_t>> st = {bstrides(c.shape, s), bstrides(a0.shape, s), bstrides(b0.shape, s)};
    Value r;
    r.dtype = result;
    r.shape = s;
    if (result == DType::Key) {
        if (a0.dtype != DType::Key || b0.dtype != DType::Key) fail("where() mixes keys and numbers");
        r.keys.resize(static_cast<size_t>(numel(s)));
        for_each_broadcast(s, st, [&](int64_t i, const std::vector<int64_t> &off) {
            r.keys[i] = c.data[off[0]] != 0 ? a0.keys[off[1]] : b0.keys[off[2]];
        });
        return r;
    }
    Value a = cast(a0, result), b = cast(b0, result);
    r.data.resize(static_cast<size_t>(numel(s)));
    for_each_broadcast(s, st, [&](int64_t i, const std::vector<int64_t> &off) {
        r.data[i] = c.data[off[0]] != 0 ? a.data[off[1]] : b.data[off[2]];
    });
    return r;
}

}  // namespace trlc::interp
