// value_reduce — reductions (sum, mean, max, min, argmax, logsumexp over axes) and softmax /
// log_softmax on interpreter values (interp/value.h), each computing in its result dtype as the
// generated code does: f32 sums in float, in order, i32 with overflow reported.
#include <algorithm>
#include <cmath>
#include <limits>

#include "interp/value_impl.h"

#include "ir/ops.h"

#include "trl_math.h"

namespace trlc::interp {

using ir::BinaryOp;
using ir::BuiltinOp;
using ir::UnaryOp;
using namespace value_detail;

// ---- reductions ---------------------------------------------------------------------------------

int64_t norm_axis(int64_t axis, int64_t rank) {
    if (axis < -rank || axis >= rank)
        fail("axis " + std::to_string(axis) + " is out of range for an array of rank " + std::to_string(rank));
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

Value reduce(BuiltinOp op, const Value &x0, const std::vector<int64_t> &axes, bool has_axes, DType result) {
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
            if (dt == DType::F32)
                v = static_cast<float>(v) / static_cast<float>(m.size());
            else
                v = v / static_cast<double>(m.size());  // empty: 0/0 = NaN, as numpy
            break;
        case BuiltinOp::ReduceMax:
        case BuiltinOp::ReduceMin:
        case BuiltinOp::Argmax: {
            if (m.empty()) fail(std::string(reduce_name(op)) + " of an empty array (zero-size reduction)");
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
                for (int64_t i : m) s += trl::exp_f64(x.data[i] - mx);
                v = mx + trl::log_f64(s);
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
            for (int64_t k = 0; k < n; ++k) s += trl::exp_f64(x.data[base + k * st] - m);
            double ls = trl::log_f64(s);
            for (int64_t k = 0; k < n; ++k) {
                double v = x.data[base + k * st];
                r.data[base + k * st] = log ? (v - m) - ls : trl::exp_f64(v - m) / s;
            }
        }
    });
    return cast(r, result);
}

}  // namespace trlc::interp
