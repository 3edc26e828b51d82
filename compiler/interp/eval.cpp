// eval — on-demand memoized evaluation of tensor points and expression nodes (see eval.h).
#include "interp/eval.h"

#include <algorithm>

#include "externs/extern_host.h"
#include "support/diagnostics.h"

namespace trlc::interp {

using ir::BuiltinOp;
using ir::NodeKind;

int64_t eval_index_expr(const ir::IndexExpr &e, const std::vector<int64_t> &env) {
    switch (e.kind) {
    case ir::IndexExpr::Aff: {
        int64_t v = e.aff.constant;
        for (size_t k = 0; k < e.aff.coef.size(); ++k) {
            if (e.aff.coef[k] == 0) continue;
            TRLC_ASSERT(k < env.size()) << "affine form uses variable " << k << " of " << env.size();
            v += e.aff.coef[k] * env[k];
        }
        return v;
    }
    case ir::IndexExpr::Min: return std::min(eval_index_expr(*e.a, env), eval_index_expr(*e.b, env));
    case ir::IndexExpr::Max: return std::max(eval_index_expr(*e.a, env), eval_index_expr(*e.b, env));
    }
    return 0;
}

static int64_t eval_affine(const ir::Affine &a, const std::vector<int64_t> &env) {
    ir::IndexExpr e;
    e.aff = a;
    return eval_index_expr(e, env);
}

bool eval_guard(const ir::Guard *g, const std::vector<int64_t> &env) {
    if (!g) return true;
    switch (g->kind) {
    case ir::Guard::True: return true;
    case ir::Guard::Cmp: {
        // Sides as fractions (a `/` side is exact): l.n / l.d cmp r.n / r.d, both d > 0.
        auto lq = ir::quasi_value(g->lhs_quasi, eval_affine(g->lhs, env), g->lhs_divisor);
        auto rq = ir::quasi_value(g->rhs_quasi, eval_affine(g->rhs, env), g->rhs_divisor);
        __int128 l = static_cast<__int128>(lq.first) * rq.second, r = static_cast<__int128>(rq.first) * lq.second;
        switch (g->cmp) {
        case ir::BinaryOp::Lt: return l < r;
        case ir::BinaryOp::Le: return l <= r;
        case ir::BinaryOp::Gt: return l > r;
        case ir::BinaryOp::Ge: return l >= r;
        case ir::BinaryOp::Eq: return l == r;
        case ir::BinaryOp::Ne: return l != r;
        default: internal_error("bad guard comparison", __FILE__, __LINE__);
        }
    }
    case ir::Guard::And: return eval_guard(g->a.get(), env) && eval_guard(g->b.get(), env);
    case ir::Guard::Or: return eval_guard(g->a.get(), env) || eval_guard(g->b.get(), env);
    case ir::Guard::Not: return !eval_guard(g->a.get(), env);
    }
    return true;
}

static int specificity(const ir::Equation &e) {
    int s = 0;
    for (const auto &p : e.pattern)
        s += p.kind == ir::PatternItem::Constant ? 2 : p.kind == ir::PatternItem::Shift ? 1 : 0;
    return s;
}

static trl::Philox2x32Key stream_of(uint64_t seed, const std::string &name, int rank = 0) {
    return trl::stream_key(seed, trl::fnv1a32(name.data(), name.size()), static_cast<uint32_t>(rank));
}

Evaluator::Evaluator(const ir::Program &prog, uint64_t seed, int rank) : prog_(prog), seed_(seed), rank_(rank) {
    for (const auto &t : prog.tensors) {
        std::vector<int> ord(t.equations.size());
        for (size_t i = 0; i < ord.size(); ++i) ord[i] = static_cast<int>(i);
        std::stable_sort(ord.begin(), ord.end(),
                         [&](int a, int b) { return specificity(t.equations[a]) > specificity(t.equations[b]); });
        order_.push_back(ord);
        std::vector<std::vector<const ir::Node *>> reads;
        for (const auto &eq : t.equations)
            reads.push_back(eq.body ? reads_in_eval_order(*eq.body) : std::vector<const ir::Node *>{});
        reads_.push_back(std::move(reads));
        streams_.push_back(stream_of(seed, t.stream(), t.rank_keyed ? rank : 0));
    }
    memo_.resize(prog.tensors.size());
}

void Evaluator::set_loaded(int t, Value v) {
    Entry &e = memo_[t][std::vector<int64_t>{}];
    e.state = State::Done;
    e.value = std::make_shared<const Value>(std::move(v));
}

bool Evaluator::match_equation(int t, int ei, const std::vector<int64_t> &point, std::vector<int64_t> &env) const {
    const ir::Equation &eq = prog_.tensors[t].equations[ei];
    env.assign(eq.vars.size(), 0);
    std::vector<bool> bound(eq.vars.size(), false);
    if (eq.pattern.size() != point.size()) return false;
    for (size_t k = 0; k < eq.pattern.size(); ++k) {
        const ir::PatternItem &p = eq.pattern[k];
        if (p.kind == ir::PatternItem::Constant) {
            if (point[k] != p.offset) return false;
            continue;
        }
        int64_t v = point[k] - (p.kind == ir::PatternItem::Shift ? p.offset : 0);
        if (bound[p.var] && env[p.var] != v) return false;
        env[p.var] = v;
        bound[p.var] = true;
        int64_t b = prog_.dims[eq.vars[p.var]].bound;
        if (v < 0 || v >= b) return false;
    }
    return eval_guard(eq.guard.get(), env);
}

Value Evaluator::eval_equation(int t, int ei, const std::vector<int64_t> &env) {
    return eval_body(t, ei, env, nullptr);
}

Value Evaluator::eval_body(int t, int ei, const std::vector<int64_t> &env,
                           const std::vector<const ir::Node *> *expect) {
    const ir::Tensor &x = prog_.tensors[t];
    const ir::Equation &eq = x.equations[ei];
    Ctx c{&env, streams_[t], {}, expect, 0};
    Value v = eval(*eq.body, c);
    if (c.expect && c.next_read != c.expect->size()) ++order_mismatches_;
    c.cache.clear();
    if (!x.type.is_tuple && !v.is_tuple && v.dtype != x.type.dtype) {
        try {
            v = cast(v, x.type.dtype);
        } catch (const OpError &e) {
            throw RuntimeError{eq.loc, e.message, {}};
        }
    }
    ++points_;
    return v;
}

void Evaluator::replace_point(int t, const std::vector<int64_t> &point, std::shared_ptr<const Value> v) {
    Entry &e = memo_[t].at(point);
    e.state = State::Done;
    e.value = std::move(v);
}

std::shared_ptr<const Value> Evaluator::loaded(int t) const {
    auto it = memo_[t].find(std::vector<int64_t>{});
    return it != memo_[t].end() && it->second.state == State::Done ? it->second.value : nullptr;
}

Value Evaluator::eval_root(const ir::NodePtr &node, const std::vector<int64_t> &env, const std::string &stream_name) {
    Ctx c{&env, stream_of(seed_, stream_name, rank_), {}};
    return eval(*node, c);
}

Shape Evaluator::shape_of(const ir::Type &t, const std::vector<int64_t> &env) const {
    Shape s;
    for (const auto &e : t.shape)
        s.push_back(e.is_static() ? e.max_value : std::max<int64_t>(0, eval_index_expr(*e.dynamic, env)));
    return s;
}

const Value &Evaluator::eval(const ir::Node &n, Ctx &c) {
    auto it = c.cache.find(&n);
    if (it != c.cache.end()) return it->second;
    Value v;
    try {
        v = eval_uncached(n, c);
    } catch (const OpError &e) {
        throw RuntimeError{n.loc, e.message, {}};
    }
    return c.cache.emplace(&n, std::move(v)).first->second;
}

Value Evaluator::eval_read(const ir::Node &n, Ctx &c) {
    const ir::Tensor &x = prog_.tensors.at(n.tensor);
    if (c.expect) {  // the read list of demand.cpp must follow this evaluation order
        if (c.next_read < c.expect->size() && (*c.expect)[c.next_read] == &n) {
            ++c.next_read;
        } else {
            ++order_mismatches_;
            c.expect = nullptr;
        }
    }
    std::vector<int64_t> point(n.index.size(), 0), lo, len;
    std::vector<size_t> slice_pos;
    for (size_t k = 0; k < n.index.size(); ++k) {
        const ir::ReadIndex &ri = n.index[k];
        if (!ri.is_slice) {
            point[k] = eval_index_expr(*ri.point, *c.env);
            continue;
        }
        int64_t l = eval_index_expr(*ri.lo, *c.env), h = eval_index_expr(*ri.hi, *c.env);
        slice_pos.push_back(k);
        lo.push_back(l);
        len.push_back(std::max<int64_t>(0, h - l));
    }
    if (slice_pos.empty()) return *read_point(n.tensor, point, n.loc);
    // A block: iterate the slice coordinates in row-major order and stack the points.
    std::vector<Value> elems;
    int64_t total = numel(len);
    std::vector<int64_t> idx(len.size(), 0);
    for (int64_t i = 0; i < total; ++i) {
        for (size_t s = 0; s < slice_pos.size(); ++s) point[slice_pos[s]] = lo[s] + idx[s];
        auto v = read_point(n.tensor, point, n.loc);
        if (v->is_tuple) throw OpError{"a slice of the tuple-valued tensor " + x.name};
        elems.push_back(*v);
        for (size_t d = len.size(); d-- > 0;) {
            if (++idx[d] < len[d]) break;
            idx[d] = 0;
        }
    }
    Shape elem_shape = shape_of(x.type, *c.env);
    Value r = stack0(elems, x.type.dtype, elem_shape);
    r.shape.erase(r.shape.begin());
    r.shape.insert(r.shape.begin(), len.begin(), len.end());
    return r;
}

Value Evaluator::eval_uncached(const ir::Node &n, Ctx &c) {
    switch (n.kind) {
    case NodeKind::Const: {
        Value v;
        v.dtype = n.type.dtype;
        v.shape = shape_of(n.type, *c.env);
        v.data.resize(n.data.size());
        for (size_t i = 0; i < n.data.size(); ++i) v.data[i] = round_to(v.dtype, n.data[i]);
        if (static_cast<int64_t>(v.data.size()) != v.numel()) {
            if (n.data.size() == 1)
                v.data.assign(static_cast<size_t>(v.numel()), v.data[0]);
            else
                throw OpError{"constant with " + std::to_string(n.data.size()) + " values for type " +
                              shape_string(v.dtype, v.shape)};
        }
        return v;
    }
    case NodeKind::Coord: {
        TRLC_ASSERT(n.var >= 0 && n.var < static_cast<int>(c.env->size())) << "Coord var " << n.var;
        return Value::scalar(ir::DType::I32, static_cast<double>((*c.env)[n.var]));
    }
    case NodeKind::Read: return eval_read(n, c);
    case NodeKind::Unary: return unary(n.uop, eval(*n.args.at(0), c), n.type.dtype);
    // Arguments are evaluated left to right (named first: C++ leaves the order of a call's
    // arguments open), the order reads_in_eval_order lists the Reads in.
    case NodeKind::Binary: {
        const Value &a = eval(*n.args.at(0), c);
        const Value &b = eval(*n.args.at(1), c);
        return binary(n.bop, a, b, n.type.dtype);
    }
    case NodeKind::Where: {
        const Value &cond = eval(*n.args.at(0), c);
        const Value &a = eval(*n.args.at(1), c);
        const Value &b = eval(*n.args.at(2), c);
        return where(cond, a, b, n.type.is_tuple ? ir::DType::F32 : n.type.dtype);
    }
    case NodeKind::Cast: return cast(eval(*n.args.at(0), c), n.type.dtype);
    case NodeKind::Builtin: return eval_builtin(n, c);
    case NodeKind::Index: return eval_index(n, c);
    case NodeKind::Tuple: {
        Value v;
        v.is_tuple = true;
        for (const auto &a : n.args) v.elems.push_back(eval(*a, c));
        return v;
    }
    case NodeKind::TupleGet: {
        const Value &t = eval(*n.args.at(0), c);
        if (!t.is_tuple || n.int_attr < 0 || n.int_attr >= static_cast<int64_t>(t.elems.size()))
            throw OpError{"element " + std::to_string(n.int_attr) + " of a value of type " + value_type_string(t)};
        return t.elems[n.int_attr];
    }
    case NodeKind::Rng: {
        trl::RngKey k = trl::rng_root(c.stream);
        for (const auto &a : n.args) {
            const Value &v = eval(*a, c);
            if (v.is_tuple || v.numel() != 1 || v.dtype == ir::DType::Key)
                throw OpError{"rng() takes i32 scalars, not " + value_type_string(v)};
            k = trl::fold_in(k, static_cast<int32_t>(cast(v, ir::DType::I32).data[0]));
        }
        Value r;
        r.dtype = ir::DType::Key;
        r.keys = {k};
        return r;
    }
    case NodeKind::Extern: {
        // The header compiled for the host (externs/extern_host.h): arguments in, results out,
        // each as its row-major elements in double storage.
        HostExternFn fn = host_extern(n.name);
        if (!fn)
            throw OpError{"extern function '" + n.name +
                          "' cannot run in the interpreter (its header was not compiled)"};
        std::vector<Value> args;
        std::vector<const double *> in;
        for (const auto &a : n.args) args.push_back(eval(*a, c));
        for (const Value &a : args) {
            if (a.is_tuple || a.dtype == ir::DType::Key)
                throw OpError{"extern function '" + n.name + "' takes no " + value_type_string(a)};
            in.push_back(a.data.data());
        }
        Value r;
        r.is_tuple = n.type.is_tuple;
        std::vector<ir::Type> types = r.is_tuple ? n.type.elems : std::vector<ir::Type>{n.type};
        for (const ir::Type &t : types) r.elems.push_back(Value::zeros(t.dtype, shape_of(t, *c.env)));
        std::vector<double *> out;
        for (Value &e : r.elems) out.push_back(e.data.data());
        fn(in.data(), out.data());
        return r.is_tuple ? r : r.elems[0];
    }
    case NodeKind::Grad: break;  // replaced by the autodiff pass before anything is evaluated
    }
    internal_error("unknown node kind", __FILE__, __LINE__);
}

Value Evaluator::eval_builtin(const ir::Node &n, Ctx &c) {
    auto arg = [&](size_t i) -> const Value & {
        if (i >= n.args.size()) throw OpError{"builtin is missing an argument"};
        return eval(*n.args[i], c);
    };
    ir::DType dt = n.type.is_tuple ? ir::DType::F32 : n.type.dtype;
    int64_t axis = n.has_axes && !n.axes.empty() ? n.axes[0] : 0;
    switch (n.builtin) {
    case BuiltinOp::Sum:
    case BuiltinOp::Mean:
    case BuiltinOp::ReduceMax:
    case BuiltinOp::ReduceMin:
    case BuiltinOp::Argmax:
    case BuiltinOp::Logsumexp: return reduce(n.builtin, arg(0), n.axes, n.has_axes, dt);
    case BuiltinOp::Softmax:
    case BuiltinOp::LogSoftmax:
        return softmax(arg(0), n.has_axes && !n.axes.empty() ? n.axes[0] : -1, n.builtin == BuiltinOp::LogSoftmax, dt);
    case BuiltinOp::MatMul: {
        const Value &a = arg(0);
        return matmul(a, arg(1), dt);
    }
    case BuiltinOp::Transpose: return transpose(arg(0), n.has_axes ? n.axes : std::vector<int64_t>{});
    case BuiltinOp::Reshape: return reshape(arg(0), shape_of(n.type, *c.env));
    case BuiltinOp::Concat:
    case BuiltinOp::Stack: {
        std::vector<Value> xs;
        for (size_t i = 0; i < n.args.size(); ++i) xs.push_back(arg(i));
        return concat(xs, axis, n.builtin == BuiltinOp::Stack, dt);
    }
    case BuiltinOp::OneHot: return one_hot(cast(arg(0), ir::DType::I32), n.int_attr, dt);
    case BuiltinOp::ScatterAdd: return scatter_add(cast(arg(0), ir::DType::I32), arg(1), n.int_attr, dt);
    case BuiltinOp::Gather: {
        const Value &a = arg(0);
        return take(a, cast(arg(1), ir::DType::I32), axis);
    }
    case BuiltinOp::Cumsum: return cumsum(arg(0), axis, n.has_axes && !n.axes.empty(), dt);
    case BuiltinOp::DiscountedCumsum: {
        const Value &a = arg(0);
        return discounted_cumsum(a, arg(1), axis, dt);
    }
    case BuiltinOp::Arange: {
        Shape s = shape_of(n.type, *c.env);
        if (s.size() != 1) throw OpError{"arange() result must have rank 1"};
        if (!n.args.empty()) {
            const Value &a = arg(0);
            if (!a.is_tuple && a.numel() == 1 && a.dtype != ir::DType::Key) {
                if (a.data[0] < 0) throw OpError{"arange() of a negative length"};
                s[0] = static_cast<int64_t>(a.data[0]);
            }
        }
        Value r = Value::zeros(dt, s);
        for (int64_t i = 0; i < s[0]; ++i) r.data[i] = round_to(dt, static_cast<double>(i));
        return r;
    }
    case BuiltinOp::Zeros:
    case BuiltinOp::Ones:
    case BuiltinOp::Full: {
        Value r = Value::zeros(dt, shape_of(n.type, *c.env));
        double fill = n.builtin == BuiltinOp::Ones ? 1.0 : 0.0;
        if (n.builtin == BuiltinOp::Full) {
            const Value &v = arg(n.args.size() - 1);
            if (v.is_tuple || v.numel() != 1 || v.dtype == ir::DType::Key)
                throw OpError{"full() needs a scalar fill value, not " + value_type_string(v)};
            fill = cast(v, dt).data[0];
        }
        std::fill(r.data.begin(), r.data.end(), fill);
        return r;
    }
    case BuiltinOp::Uniform: return uniform(arg(0), shape_of(n.type, *c.env), dt);
    case BuiltinOp::Normal: return normal(arg(0), shape_of(n.type, *c.env), dt);
    case BuiltinOp::Categorical: {
        const Value &k = arg(0);
        return categorical(k, arg(1));
    }
    case BuiltinOp::Clamp: {
        const Value &a = arg(0);
        const Value &lo = arg(1);
        return clamp(a, lo, arg(2), dt);
    }
    case BuiltinOp::FoldIn: {
        const Value &k = arg(0);
        const Value &v = arg(1);
        if (k.dtype != ir::DType::Key || k.keys.size() != 1) throw OpError{"fold_in() needs a key made by rng(...)"};
        if (v.is_tuple || v.numel() != 1 || v.dtype == ir::DType::Key)
            throw OpError{"fold_in() folds in an i32 scalar, not " + value_type_string(v)};
        Value r = k;
        r.keys[0] = trl::fold_in(k.keys[0], static_cast<int32_t>(cast(v, ir::DType::I32).data[0]));
        return r;
    }
    case BuiltinOp::Orthogonal: {
        const Value &k = arg(0);
        return orthogonal(k, shape_of(n.type, *c.env), arg(1), dt);
    }
    case BuiltinOp::Permutation: return permutation(arg(0), shape_of(n.type, *c.env).at(0));
    }
    internal_error("unknown builtin", __FILE__, __LINE__);
}

// numpy indexing: basic (ints, slices) and advanced (i32 arrays = gathers; with any array
// index, integer scalars are advanced too, and the broadcast advanced dims go where the
// advanced indices stand if they are adjacent, else first).
Value Evaluator::eval_index(const ir::Node &n, Ctx &c) {
    const Value &x = eval(*n.args.at(0), c);
    if (x.is_tuple) throw OpError{"cannot index a tuple with []; destructure it first"};
    int64_t rank = static_cast<int64_t>(x.shape.size());
    if (static_cast<int64_t>(n.sindex.size()) > rank)
        throw OpError{"too many indices (" + std::to_string(n.sindex.size()) + ") for " +
                      shape_string(x.dtype, x.shape)};
    struct Ax {
        int kind;  // 0 basic range, 1 scalar, 2 array
        int64_t lo = 0, len = 0, fixed = 0;
        Value arr;
    };
    std::vector<Ax> ax(rank);
    bool any_array = false;
    for (int64_t d = 0; d < rank; ++d) {
        int64_t size = x.shape[d];
        if (d >= static_cast<int64_t>(n.sindex.size()) || n.sindex[d].kind == ir::SpatialIndex::Full) {
            ax[d].kind = 0;
            ax[d].len = size;
            continue;
        }
        const ir::SpatialIndex &si = n.sindex[d];
        if (si.kind == ir::SpatialIndex::Slice) {
            auto norm = [&](const ir::IndexExprPtr &e, int64_t dflt) {
                if (!e) return dflt;
                int64_t v = eval_index_expr(*e, *c.env);
                if (v < 0) v += size;
                return std::clamp<int64_t>(v, 0, size);
            };
            int64_t lo = norm(si.lo, 0), hi = norm(si.hi, size);
            ax[d].kind = 0;
            ax[d].lo = lo;
            ax[d].len = std::max<int64_t>(0, hi - lo);
            continue;
        }
        Value v = cast(eval(*si.value, c), ir::DType::I32);
        for (double &k : v.data) {
            if (k < -size || k >= size)
                throw OpError{"index " + std::to_string(static_cast<int64_t>(k)) + " is out of bounds for axis " +
                              std::to_string(d) + " with size " + std::to_string(size)};
            if (k < 0) k += size;
        }
        if (v.shape.empty()) {
            ax[d].kind = 1;
            ax[d].fixed = static_cast<int64_t>(v.data[0]);
        } else {
            any_array = true;
        }
        ax[d].arr = std::move(v);
        if (!ax[d].arr.shape.empty()) ax[d].kind = 2;
    }
    // Advanced block: broadcast shape and placement.
    Shape bshape;
    std::vector<int64_t> adv;
    if (any_array) {
        for (int64_t d = 0; d < rank; ++d)
            if (ax[d].kind != 0) {
                adv.push_back(d);
                bshape = broadcast_shapes(bshape, ax[d].arr.shape, ir::DType::I32, ir::DType::I32);
            }
    }
    bool adjacent = true;
    for (size_t k = 1; k < adv.size(); ++k) adjacent = adjacent && adv[k] == adv[k - 1] + 1;
    // Output dims: (0, d) = basic dim d; (1, j) = dim j of the broadcast advanced shape.
    std::vector<std::pair<int, int64_t>> odims;
    Shape out;
    auto push_adv = [&] {
        for (size_t j = 0; j < bshape.size(); ++j) {
            odims.push_back({1, static_cast<int64_t>(j)});
            out.push_back(bshape[j]);
        }
    };
    if (!adv.empty() && !adjacent) push_adv();
    for (int64_t d = 0; d < rank; ++d) {
        if (!adv.empty() && adjacent && d == adv[0]) push_adv();
        if (ax[d].kind == 0) {
            odims.push_back({0, d});
            out.push_back(ax[d].len);
        }
    }
    auto xst = std::vector<int64_t>(rank, 1);
    for (int64_t d = rank - 2; d >= 0; --d) xst[d] = xst[d + 1] * x.shape[d + 1];
    std::vector<std::vector<int64_t>> arr_st(rank);
    for (int64_t d : adv) {
        const Shape &s = ax[d].arr.shape;
        std::vector<int64_t> own(s.size(), 1), st(bshape.size(), 0);
        for (int64_t q = static_cast<int64_t>(s.size()) - 2; q >= 0; --q) own[q] = own[q + 1] * s[q + 1];
        size_t off = bshape.size() - s.size();
        for (size_t q = 0; q < s.size(); ++q) st[off + q] = s[q] == 1 ? 0 : own[q];
        arr_st[d] = st;
    }
    Value r = Value::zeros(x.dtype, out);
    int64_t total = numel(out);
    std::vector<int64_t> oidx(out.size(), 0), bidx(bshape.size(), 0);
    for (int64_t i = 0; i < total; ++i) {
        for (size_t k = 0; k < odims.size(); ++k)
            if (odims[k].first == 1) bidx[odims[k].second] = oidx[k];
        int64_t src = 0;
        size_t k = 0;
        for (int64_t d = 0; d < rank; ++d) {
            int64_t coord;
            if (ax[d].kind == 0) {
                while (odims[k].first != 0 || odims[k].second != d) ++k;
                coord = ax[d].lo + oidx[k];
            } else if (!any_array) {
                coord = ax[d].fixed;
            } else {
                int64_t o = 0;
                for (size_t q = 0; q < bshape.size(); ++q) o += bidx[q] * arr_st[d][q];
                coord = static_cast<int64_t>(ax[d].arr.data[o]);
            }
            src += coord * xst[d];
        }
        if (x.dtype == ir::DType::Key)
            r.keys[i] = x.keys[src];
        else
            r.data[i] = x.data[src];
        for (size_t q = out.size(); q-- > 0;) {
            if (++oidx[q] < out[q]) break;
            oidx[q] = 0;
        }
    }
    return r;
}

}  // namespace trlc::interp
