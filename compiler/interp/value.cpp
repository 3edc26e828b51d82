// value — numpy-semantics operations on interpreter values (see value.h).  Every operation
// computes in its result dtype: f32 in float (exp, log, tanh, sigmoid: runtime/trl_math.h's, which
// every backend calls too; the other functions: libm's float ones), f64 in double, i32 exactly with overflow reported as an error,
// bool as bool.
#include "interp/value.h"

#include "ir/ops.h"

#include "trl_linalg.h"
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

namespace {

[[noreturn]] void fail(const std::string &msg) { throw OpError{msg}; }

bool is_float(DType d) { return d == DType::F32 || d == DType::F64; }

std::vector<int64_t> strides_of(const Shape &s) {
    std::vector<int64_t> st(s.size(), 1);
    for (int64_t d = static_cast<int64_t>(s.size()) - 2; d >= 0; --d) st[d] = st[d + 1] * s[d + 1];
    return st;
}

/** Strides of operand shape "s" viewed inside the broadcast shape "out" (0 = broadcast). */
std::vector<int64_t> bstrides(const Shape &s, const Shape &out) {
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

std::string fmt_num(double v) {
    std::ostringstream ss;
    ss.precision(17);
    ss << v;
    return ss.str();
}

int32_t check_i32(long double v, const char *what) {
    if (v < -2147483648.0L || v > 2147483647.0L)
        fail(std::string("i32 overflow in ") + what + " (result " + fmt_num(static_cast<double>(v)) +
             " is outside [-2147483648, 2147483647])");
    return static_cast<int32_t>(v);
}

}  // namespace

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
    if (dt == DType::Key) r.keys.assign(static_cast<size_t>(interp::numel(shape)), trl::RngKey{0, 0, 0});
    else r.data.assign(static_cast<size_t>(interp::numel(shape)), 0.0);
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
            fail("shapes " + shape_string(da, a) + " and " + shape_string(db, b) +
                 " cannot be broadcast");
        out[i] = x == 1 ? y : x;
    }
    return out;
}

// ---- elementwise ------------------------------------------------------------------------------

// One element of a unary operation: the kernels that ir/ops.def names (runtime/trl_ops.h,
// trl_math.h, libm), the functions generated code calls.
static double unary_f32(UnaryOp op, float x) {
    switch (op) {
#define TRL_UNARY(E, name, typing, f32, f64, ...) \
    case UnaryOp::E: return f32(x);
#include "ir/ops.def"
    }
    return x;
}

static double unary_f64(UnaryOp op, double x) {
    switch (op) {
#define TRL_UNARY(E, name, typing, f32, f64, ...) \
    case UnaryOp::E: return f64(x);
#include "ir/ops.def"
    }
    return x;
}

static double unary_i32(UnaryOp op, double x) {
    const long long v = static_cast<long long>(x);
    switch (op) {
#define TRL_UNARY(E, name, typing, f32, f64, i32, check, ...)                    \
    case UnaryOp::E:                                                             \
        if (ir::UnaryTyping::typing == ir::UnaryTyping::Float) break;            \
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
        case BinaryOp::Pow: return powf(x, y);
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
        case BinaryOp::Pow: return std::pow(a, b);
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
            if (b < 0) fail("negative integer power " + fmt_num(a) + " ** " + fmt_num(b) +
                            " (use a float base)");
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
    return op == BinaryOp::Lt || op == BinaryOp::Le || op == BinaryOp::Gt || op == BinaryOp::Ge ||
           op == BinaryOp::Eq || op == BinaryOp::Ne;
}

Value binary(BinaryOp op, const Value &a0, const Value &b0, DType result) {
    if (a0.is_tuple || b0.is_tuple || a0.dtype == DType::Key || b0.dtype == DType::Key)
        fail("operands " + value_type_string(a0) + " and " + value_type_string(b0) +
             " of an elementwise operation");
    DType dt;
    if (is_cmp(op)) dt = std::max(a0.dtype, b0.dtype);
    else if (op == BinaryOp::And || op == BinaryOp::Or) dt = DType::Bool;
    else dt = result == DType::Bool ? DType::I32 : result;
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
    Shape s = broadcast_shapes(broadcast_shapes(c.shape, a0.shape, DType::Bool, a0.dtype), b0.shape,
                               a0.dtype, b0.dtype);
    std::vector<std::vector<int64_t>> st = {bstrides(c.shape, s), bstrides(a0.shape, s),
                                            bstrides(b0.shape, s)};
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

// ---- reductions ---------------------------------------------------------------------------------

int64_t norm_axis(int64_t axis, int64_t rank) {
    if (axis < -rank || axis >= rank)
        fail("axis " + std::to_string(axis) + " is out of range for an array of rank " +
             std::to_string(rank));
    return axis < 0 ? axis + rank : axis;
}

namespace {

/** For a reduction over "axes" of "shape": the output shape and, per output element, the input
 *  flat indices it reduces, in row-major (increasing) order. */
struct Groups {
    Shape out;
    std::vector<std::vector<int64_t>> members;
};

Groups group(const Shape &shape, const std::vector<int64_t> &axes0, bool all) {
    int64_t rank = static_cast<int64_t>(shape.size());
    std::vector<bool> red(rank, all);
    if (!all)
        for (int64_t a : axes0) {
            int64_t ax = norm_axis(a, rank);
            if (red[ax]) fail("axis " + std::to_string(a) + " is repeated");
            red[ax] = true;
        }
    Groups g;
    std::vector<int64_t> ost;
    for (int64_t d = 0; d < rank; ++d)
        if (!red[d]) g.out.push_back(shape[d]);
    auto os = strides_of(g.out);
    g.members.resize(static_cast<size_t>(numel(g.out)));
    int64_t n = numel(shape);
    std::vector<int64_t> idx(rank, 0);
    for (int64_t i = 0; i < n; ++i) {
        int64_t o = 0, k = 0;
        for (int64_t d = 0; d < rank; ++d)
            if (!red[d]) o += idx[d] * os[k++];
        g.members[o].push_back(i);
        for (int64_t d = rank; d-- > 0;) {
            if (++idx[d] < shape[d]) break;
            idx[d] = 0;
        }
    }
    return g;
}

double add_in(DType dt, double acc, double x) {
    if (dt == DType::F32) return static_cast<float>(acc) + static_cast<float>(x);
    if (dt == DType::F64) return acc + x;
    return check_i32(static_cast<long double>(acc) + x, "sum");
}

double mul_in(DType dt, double a, double b) {
    if (dt == DType::F32) return static_cast<float>(a) * static_cast<float>(b);
    if (dt == DType::F64) return a * b;
    return check_i32(static_cast<long double>(a) * b, "product");
}

}  // namespace

static const char *reduce_name(BuiltinOp op) {
    switch (op) {
    case BuiltinOp::ReduceMax: return "max";
    case BuiltinOp::ReduceMin: return "min";
    case BuiltinOp::Argmax: return "argmax";
    case BuiltinOp::Logsumexp: return "logsumexp";
    default: return "reduction";
    }
}

Value reduce(BuiltinOp op, const Value &x0, const std::vector<int64_t> &axes, bool has_axes,
             DType result) {
    if (x0.is_tuple || x0.dtype == DType::Key) fail("cannot reduce " + value_type_string(x0));
    bool all = !has_axes || axes.empty();
    if (op == BuiltinOp::Argmax && !all && axes.size() != 1) fail("argmax takes a single axis");
    Groups g = group(x0.shape, axes, all);
    // Compute dtype: the result dtype for sums/means/logsumexp; the input's for max/min/argmax.
    DType dt = result;
    if (op == BuiltinOp::ReduceMax || op == BuiltinOp::ReduceMin || op == BuiltinOp::Argmax)
        dt = x0.dtype == DType::Bool ? DType::I32 : x0.dtype;
    if (dt == DType::Bool) dt = DType::I32;
    Value x = cast(x0, dt);
    Value r;
    r.dtype = result;
    r.shape = g.out;
    r.data.resize(g.members.size());
    for (size_t o = 0; o < g.members.size(); ++o) {
        const auto &m = g.members[o];
        double v = 0;
        switch (op) {
        case BuiltinOp::Sum:
            for (int64_t i : m) v = add_in(dt, v, x.data[i]);
            break;
        case BuiltinOp::Mean:
            for (int64_t i : m) v = add_in(dt, v, x.data[i]);
            if (dt == DType::F32) v = static_cast<float>(v) / static_cast<float>(m.size());
            else v = v / static_cast<double>(m.size());  // empty: 0/0 = NaN, as numpy
            break;
        case BuiltinOp::ReduceMax:
        case BuiltinOp::ReduceMin:
        case BuiltinOp::Argmax: {
            if (m.empty())
                fail(std::string(reduce_name(op)) + " of an empty array (zero-size reduction)");
            int64_t best = 0;
            v = x.data[m[0]];
            for (size_t k = 1; k < m.size() && v == v; ++k) {
                double y = x.data[m[k]];
                bool better = y != y || (op == BuiltinOp::ReduceMin ? y < v : y > v);
                if (better) {
                    v = y;
                    best = static_cast<int64_t>(k);
                }
            }
            if (op == BuiltinOp::Argmax) v = static_cast<double>(best);
            break;
        }
        case BuiltinOp::Logsumexp: {
            if (m.empty()) {
                v = -INFINITY;
                break;
            }
            double mx = x.data[m[0]];
            for (int64_t i : m) {
                double y = x.data[i];
                if (y != y || y > mx) mx = y;
                if (mx != mx) break;
            }
            if (mx != mx || std::isinf(mx)) {
                v = mx;
                break;
            }
            if (dt == DType::F32) {
                float s = 0.0f, fm = static_cast<float>(mx);
                for (int64_t i : m) s += trl::exp_f32(static_cast<float>(x.data[i]) - fm);
                v = fm + trl::log_f32(s);
            } else {
                double s = 0.0;
                for (int64_t i : m) s += std::exp(x.data[i] - mx);
                v = mx + std::log(s);
            }
            break;
        }
        default: fail("not a reduction");
        }
        r.data[o] = v;
    }
    if (op == BuiltinOp::Argmax) return r;
    return r.dtype == dt ? r : cast(Value{false, dt, r.shape, r.data, {}, {}}, result);
}

namespace {
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
}  // namespace

Value softmax(const Value &x0, int64_t axis0, bool log, DType result) {
    if (x0.shape.empty()) fail("softmax needs an array of rank >= 1, not a scalar");
    int64_t axis = norm_axis(axis0, static_cast<int64_t>(x0.shape.size()));
    DType dt = is_float(result) ? result : DType::F32;
    Value x = cast(x0, dt);
    Value r = x;
    r.dtype = dt;
    for_each_fiber(x.shape, axis, [&](int64_t base, int64_t st, int64_t n) {
        if (n == 0) return;
        if (dt == DType::F32) {
            float m = static_cast<float>(x.data[base]);
            for (int64_t k = 1; k < n; ++k) m = std::max(m, static_cast<float>(x.data[base + k * st]));
            float s = 0.0f;
            for (int64_t k = 0; k < n; ++k) s += trl::exp_f32(static_cast<float>(x.data[base + k * st]) - m);
            float ls = trl::log_f32(s);
            for (int64_t k = 0; k < n; ++k) {
                float v = static_cast<float>(x.data[base + k * st]);
                r.data[base + k * st] = log ? (v - m) - ls : trl::exp_f32(v - m) / s;
            }
        } else {
            double m = x.data[base];
            for (int64_t k = 1; k < n; ++k) m = std::max(m, x.data[base + k * st]);
            double s = 0.0;
            for (int64_t k = 0; k < n; ++k) s += std::exp(x.data[base + k * st] - m);
            double ls = std::log(s);
            for (int64_t k = 0; k < n; ++k) {
                double v = x.data[base + k * st];
                r.data[base + k * st] = log ? (v - m) - ls : std::exp(v - m) / s;
            }
        }
    });
    return cast(r, result);
}

// ---- linear algebra and shapes ----------------------------------------------------------------

Value matmul(const Value &a0, const Value &b0, DType result) {
    if (a0.shape.empty() || b0.shape.empty()) fail("matmul operands must have rank >= 1, not scalars");
    DType dt = result == DType::Bool ? DType::I32 : result;
    Value a = cast(a0, dt), b = cast(b0, dt);
    bool a1 = a.shape.size() == 1, b1 = b.shape.size() == 1;
    Shape as = a.shape, bs = b.shape;
    if (a1) as.insert(as.begin(), 1);
    if (b1) bs.push_back(1);
    int64_t m = as[as.size() - 2], k = as.back(), k2 = bs[bs.size() - 2], n = bs.back();
    if (k != k2)
        fail("matmul of " + shape_string(a0.dtype, a0.shape) + " and " + shape_string(b0.dtype, b0.shape) +
             ": inner dimensions differ (" + std::to_string(k) + " and " + std::to_string(k2) + ")");
    Shape abatch(as.begin(), as.end() - 2), bbatch(bs.begin(), bs.end() - 2);
    Shape batch = broadcast_shapes(abatch, bbatch, a0.dtype, b0.dtype);
    Shape out = batch;
    if (!a1) out.push_back(m);
    if (!b1) out.push_back(n);
    Value r = Value::zeros(dt, out);
    auto ast = bstrides(abatch, batch), bst = bstrides(bbatch, batch);
    int64_t amat = m * k, bmat = k * n;
    int64_t o = 0;
    for_each_broadcast(batch, {ast, bst}, [&](int64_t, const std::vector<int64_t> &off) {
        const double *pa = a.data.data() + off[0] * amat;
        const double *pb = b.data.data() + off[1] * bmat;
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
                double acc = 0;
                for (int64_t q = 0; q < k; ++q) acc = add_in(dt, acc, mul_in(dt, pa[i * k + q], pb[q * n + j]));
                r.data[o++] = acc;
            }
    });
    return cast(r, result);
}

Value transpose(const Value &x, const std::vector<int64_t> &axes0) {
    int64_t rank = static_cast<int64_t>(x.shape.size());
    std::vector<int64_t> axes;
    if (axes0.empty())
        for (int64_t d = rank - 1; d >= 0; --d) axes.push_back(d);
    else {
        if (static_cast<int64_t>(axes0.size()) != rank)
            fail("transpose axes do not match an array of rank " + std::to_string(rank));
        std::vector<bool> seen(rank, false);
        for (int64_t a : axes0) {
            int64_t ax = norm_axis(a, rank);
            if (seen[ax]) fail("transpose axes repeat axis " + std::to_string(a));
            seen[ax] = true;
            axes.push_back(ax);
        }
    }
    Shape out(rank);
    auto st = strides_of(x.shape);
    std::vector<int64_t> pst(rank);
    for (int64_t d = 0; d < rank; ++d) {
        out[d] = x.shape[axes[d]];
        pst[d] = st[axes[d]];
    }
    Value r = Value::zeros(x.dtype, out);
    for_each_broadcast(out, {pst}, [&](int64_t i, const std::vector<int64_t> &off) {
        if (x.dtype == DType::Key) r.keys[i] = x.keys[off[0]];
        else r.data[i] = x.data[off[0]];
    });
    return r;
}

Value reshape(const Value &x, const Shape &shape) {
    if (numel(shape) != x.numel())
        fail("cannot reshape " + shape_string(x.dtype, x.shape) + " to shape " +
             shape_string(x.dtype, shape) + " (different number of elements)");
    Value r = x;
    r.shape = shape;
    return r;
}

Value concat(const std::vector<Value> &xs, int64_t axis0, bool stack, DType result) {
    if (xs.empty()) fail(stack ? "stack of no arrays" : "concat of no arrays");
    std::vector<Value> vs;
    for (const auto &x : xs) {
        if (x.is_tuple) fail("cannot concatenate a tuple");
        Value v = x.dtype == result ? x : cast(x, result);
        if (stack) v.shape.insert(v.shape.begin(), 1);
        vs.push_back(std::move(v));
    }
    int64_t rank = static_cast<int64_t>(vs[0].shape.size());
    if (rank == 0) fail("cannot concatenate scalars (use stack)");
    int64_t axis = norm_axis(axis0, rank);
    if (stack) {  // move the new leading axis to "axis"
        for (auto &v : vs) {
            v.shape.erase(v.shape.begin());
            v.shape.insert(v.shape.begin() + axis, 1);
        }
    }
    Shape out = vs[0].shape;
    out[axis] = 0;
    for (const auto &v : vs) {
        if (static_cast<int64_t>(v.shape.size()) != rank) fail("concatenated arrays differ in rank");
        for (int64_t d = 0; d < rank; ++d)
            if (d != axis && v.shape[d] != vs[0].shape[d])
                fail("cannot " + std::string(stack ? "stack " : "concatenate ") +
                     shape_string(result, stack ? xs[0].shape : vs[0].shape) + " and " +
                     shape_string(result, stack ? Shape(v.shape.begin(), v.shape.end()) : v.shape));
        out[axis] += v.shape[axis];
    }
    Value r = Value::zeros(result, out);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= out[d];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= out[d];
    int64_t pos = 0;
    for (int64_t o = 0; o < outer; ++o)
        for (const auto &v : vs) {
            int64_t chunk = v.shape[axis] * inner;
            for (int64_t c = 0; c < chunk; ++c) {
                if (result == DType::Key) r.keys[pos++] = v.keys[o * chunk + c];
                else r.data[pos++] = v.data[o * chunk + c];
            }
        }
    return r;
}

Value one_hot(const Value &idx0, int64_t depth, DType result) {
    if (idx0.dtype != DType::I32) fail("one_hot needs i32 indices, not " + value_type_string(idx0));
    Shape out = idx0.shape;
    out.push_back(depth);
    Value r = Value::zeros(result, out);
    for (size_t i = 0; i < idx0.data.size(); ++i) {
        double k = idx0.data[i];
        if (k < 0 || k >= depth)
            fail("one_hot index " + fmt_num(k) + " is out of range [0, " + std::to_string(depth) + ")");
        r.data[i * depth + static_cast<int64_t>(k)] = 1.0;
    }
    return r;
}

Value scatter_add(const Value &idx0, const Value &values, int64_t n, DType result) {
    if (idx0.dtype != DType::I32) fail("scatter_add needs i32 indices, not " + value_type_string(idx0));
    if (values.is_tuple || idx0.data.size() != values.data.size())
        fail("scatter_add needs one value per index, not " + value_type_string(values) + " for " +
             value_type_string(idx0));
    Value v = cast(values, result);
    Value r = Value::zeros(result, Shape{n});
    for (size_t i = 0; i < idx0.data.size(); ++i) {
        double k = idx0.data[i];
        if (k < 0 || k >= n)
            fail("scatter_add index " + fmt_num(k) + " is out of range [0, " + std::to_string(n) + ")");
        double &o = r.data[static_cast<size_t>(k)];
        o = add_in(result, o, v.data[i]);
    }
    return r;
}

Value take(const Value &x, const Value &idx, int64_t axis0) {
    if (idx.dtype != DType::I32) fail("gather indices must be i32, not " + value_type_string(idx));
    if (x.shape.empty()) fail("cannot gather from a scalar");
    int64_t rank = static_cast<int64_t>(x.shape.size());
    int64_t axis = norm_axis(axis0, rank);
    int64_t n = x.shape[axis];
    Shape out(x.shape.begin(), x.shape.begin() + axis);
    out.insert(out.end(), idx.shape.begin(), idx.shape.end());
    out.insert(out.end(), x.shape.begin() + axis + 1, x.shape.end());
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x.shape[d];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= x.shape[d];
    Value r = Value::zeros(x.dtype, out);
    int64_t pos = 0;
    for (int64_t o = 0; o < outer; ++o)
        for (double kd : idx.data) {
            int64_t k = static_cast<int64_t>(kd);
            if (k < -n || k >= n)
                fail("index " + std::to_string(k) + " is out of bounds for axis " +
                     std::to_string(axis) + " with size " + std::to_string(n));
            if (k < 0) k += n;
            for (int64_t in = 0; in < inner; ++in) {
                int64_t src = (o * n + k) * inner + in;
                if (x.dtype == DType::Key) r.keys[pos++] = x.keys[src];
                else r.data[pos++] = x.data[src];
            }
        }
    return r;
}

Value cumsum(const Value &x0, int64_t axis0, bool has_axis, DType result) {
    DType dt = result == DType::Bool ? DType::I32 : result;
    Value x = cast(x0, dt);
    if (!has_axis) x.shape = {x.numel()};  // numpy: no axis = the flattened array
    if (x.shape.empty()) return cast(x, result);
    int64_t axis = norm_axis(has_axis ? axis0 : 0, static_cast<int64_t>(x.shape.size()));
    Value r = x;
    for_each_fiber(x.shape, axis, [&](int64_t base, int64_t st, int64_t n) {
        double acc = 0;
        for (int64_t k = 0; k < n; ++k) {
            acc = add_in(dt, acc, x.data[base + k * st]);
            r.data[base + k * st] = acc;
        }
    });
    return cast(r, result);
}

Value discounted_cumsum(const Value &x0, const Value &g0, int64_t axis0, DType result) {
    // gamma is a scalar or broadcasts to x's shape: y[k] = x[k] + gamma[k] * y[k+1].
    if (g0.is_tuple || g0.dtype == DType::Key) fail("discounted_cumsum needs a numeric gamma");
    DType dt = is_float(result) ? result : DType::F32;
    Value x = cast(x0, dt);
    if (x.shape.empty()) fail("discounted_cumsum needs an array of rank >= 1, not a scalar");
    Value g = cast(g0, dt);
    if (g.numel() != 1) {
        if (broadcast_shapes(x.shape, g.shape, dt, dt) != x.shape)
            fail("discounted_cumsum: gamma " + value_type_string(g0) + " does not broadcast to " +
                 value_type_string(x0));
        Value gb = Value::zeros(dt, x.shape);
        std::vector<std::vector<int64_t>> st = {bstrides(g.shape, x.shape)};
        for_each_broadcast(x.shape, st, [&](int64_t o, const std::vector<int64_t> &off) {
            gb.data[o] = g.data[off[0]];
        });
        g = gb;
    }
    bool scalar_g = g.numel() == 1;
    int64_t axis = norm_axis(axis0, static_cast<int64_t>(x.shape.size()));
    Value r = x;
    for_each_fiber(x.shape, axis, [&](int64_t base, int64_t st, int64_t n) {
        double next = 0;
        for (int64_t k = n - 1; k >= 0; --k) {
            double gk = round_to(dt, scalar_g ? g.data[0] : g.data[base + k * st]);
            double y = k == n - 1 ? x.data[base + k * st]
                                  : add_in(dt, x.data[base + k * st], mul_in(dt, gk, next));
            r.data[base + k * st] = y;
            next = y;
        }
    });
    return cast(r, result);
}

Value clamp(const Value &x, const Value &lo, const Value &hi, DType result) {
    return binary(BinaryOp::Min, binary(BinaryOp::Max, x, lo, result), hi, result);
}

Value slice0(const Value &x, int64_t i) {
    Value r;
    r.dtype = x.dtype;
    r.shape.assign(x.shape.begin() + 1, x.shape.end());
    int64_t n = numel(r.shape);
    if (x.dtype == DType::Key) r.keys.assign(x.keys.begin() + i * n, x.keys.begin() + (i + 1) * n);
    else r.data.assign(x.data.begin() + i * n, x.data.begin() + (i + 1) * n);
    return r;
}

Value stack0(const std::vector<Value> &xs, DType dt, const Shape &elem_shape) {
    Value r;
    r.dtype = dt;
    r.shape = elem_shape;
    if (!xs.empty()) r.shape = xs[0].shape;
    r.shape.insert(r.shape.begin(), static_cast<int64_t>(xs.size()));
    for (const auto &x : xs) {
        if (x.is_tuple) fail("a slice of a tuple-valued tensor cannot be stacked");
        if (x.shape != xs[0].shape) fail("slice elements differ in shape");
        if (dt == DType::Key) r.keys.insert(r.keys.end(), x.keys.begin(), x.keys.end());
        else {
            Value c = x.dtype == dt ? x : cast(x, dt);
            r.data.insert(r.data.end(), c.data.begin(), c.data.end());
        }
    }
    return r;
}

// ---- random ---------------------------------------------------------------------------------------

static const trl::RngKey &key_of(const Value &key) {
    if (key.is_tuple || key.dtype != DType::Key || key.keys.size() != 1)
        fail("expected a random key made by rng(...), got " + value_type_string(key));
    return key.keys[0];
}

Value uniform(const Value &key, const Shape &shape, DType dt) {
    const trl::RngKey &k = key_of(key);
    Value r = Value::zeros(dt, shape);
    for (size_t j = 0; j < r.data.size(); ++j) {
        if (dt == DType::F32) r.data[j] = trl::uniform_f32(k, j);
        else if (dt == DType::F64) r.data[j] = trl::uniform_f64(k, j);
        else fail("uniform() draws f32 or f64 values");
    }
    return r;
}

Value normal(const Value &key, const Shape &shape, DType dt) {
    const trl::RngKey &k = key_of(key);
    Value r = Value::zeros(dt, shape);
    for (size_t j = 0; j < r.data.size(); ++j) {
        if (dt == DType::F32) r.data[j] = trl::normal_f32(k, j);
        else if (dt == DType::F64) r.data[j] = trl::normal_f64(k, j);
        else fail("normal() draws f32 or f64 values");
    }
    return r;
}

Value orthogonal(const Value &key, const Shape &shape, const Value &gain, DType dt) {
    const trl::RngKey &k = key_of(key);
    if (shape.size() != 2 || shape[0] < 1 || shape[1] < 1)
        fail("orthogonal() needs a [rows, cols] shape");
    if (gain.is_tuple || gain.numel() != 1) fail("orthogonal() needs a scalar gain");
    std::vector<double> out(static_cast<size_t>(shape[0] * shape[1]));
    std::vector<double> work(2 * out.size());
    trl::orthogonal_f64(k, shape[0], shape[1], cast(gain, DType::F64).data[0], out.data(),
                        work.data());
    Value r = Value::zeros(DType::F64, shape);
    r.data = out;
    return cast(r, dt);
}

Value permutation(const Value &key, int64_t n) {
    const trl::RngKey &k = key_of(key);
    std::vector<int32_t> p(static_cast<size_t>(n));
    trl::permutation_i32(k, n, p.data());
    Value r = Value::zeros(DType::I32, {n});
    for (int64_t i = 0; i < n; ++i) r.data[i] = p[i];
    return r;
}

Value categorical(const Value &key, const Value &logits) {
    const trl::RngKey &k = key_of(key);
    if (logits.is_tuple || logits.dtype == DType::Key || logits.shape.empty())
        fail("categorical() needs logits of rank >= 1, got " + value_type_string(logits));
    int64_t n = logits.shape.back();
    if (n == 0) fail("categorical() over zero classes");
    Shape out(logits.shape.begin(), logits.shape.end() - 1);
    Value r = Value::zeros(DType::I32, out);
    for (size_t row = 0; row < r.data.size(); ++row)
        r.data[row] = trl::categorical(k, row, logits.data.data() + row * n, n);
    return r;
}

}  // namespace trlc::interp
