// value_shapes — linear algebra, shapes and indexing on interpreter values (interp/value.h):
// matmul, transpose, reshape, concat/stack, one_hot, scatter_add, take, the scans cumsum and
// discounted_cumsum, clamp, and the slicing/stacking along axis 0 that the interpreter uses for
// blocks of a tensor.
#include <algorithm>
#include <cmath>

#include "interp/value_impl.h"

#include "ir/ops.h"

namespace trlc::interp {

using ir::BinaryOp;
using ir::BuiltinOp;
using ir::UnaryOp;
using namespace value_detail;

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
        if (x.dtype == DType::Key)
            r.keys[i] = x.keys[off[0]];
        else
            r.data[i] = x.data[off[0]];
    });
    return r;
}

Value reshape(const Value &x, const Shape &shape) {
    if (numel(shape) != x.numel())
        fail("cannot reshape " + shape_string(x.dtype, x.shape) + " to shape " + shape_string(x.dtype, shape) +
             " (different number of elements)");
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
                if (result == DType::Key)
                    r.keys[pos++] = v.keys[o * chunk + c];
                else
                    r.data[pos++] = v.data[o * chunk + c];
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
                fail("index " + std::to_string(k) + " is out of bounds for axis " + std::to_string(axis) +
                     " with size " + std::to_string(n));
            if (k < 0) k += n;
            for (int64_t in = 0; in < inner; ++in) {
                int64_t src = (o * n + k) * inner + in;
                if (x.dtype == DType::Key)
                    r.keys[pos++] = x.keys[src];
                else
                    r.data[pos++] = x.data[src];
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
        for_each_broadcast(x.shape, st,
                           [&](int64_t o, const std::vector<int64_t> &off) { gb.data[o] = g.data[off[0]]; });
        g = gb;
    }
    bool scalar_g = g.numel() == 1;
    int64_t axis = norm_axis(axis0, static_cast<int64_t>(x.shape.size()));
    Value r = x;
    for_each_fiber(x.shape, axis, [&](int64_t base, int64_t st, int64_t n) {
        double next = 0;
        for (int64_t k = n - 1; k >= 0; --k) {
            double gk = round_to(dt, scalar_g ? g.data[0] : g.data[base + k * st]);
            double y = k == n - 1 ? x.data[base + k * st] : add_in(dt, x.data[base + k * st], mul_in(dt, gk, next));
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
    if (x.dtype == DType::Key)
        r.keys.assign(x.keys.begin() + i * n, x.keys.begin() + (i + 1) * n);
    else
        r.data.assign(x.data.begin() + i * n, x.data.begin() + (i + 1) * n);
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
        if (dt == DType::Key)
            r.keys.insert(r.keys.end(), x.keys.begin(), x.keys.end());
        else {
            Value c = x.dtype == dt ? x : cast(x, dt);
            r.data.insert(r.data.end(), c.data.begin(), c.data.end());
        }
    }
    return r;
}

}  // namespace trlc::interp
