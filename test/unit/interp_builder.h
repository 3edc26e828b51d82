#pragma once
// interp_builder — a small builder of ir::Program values by hand, for the interpreter's unit
// tests (test/unit/interp_*_test.cpp), independent of the parser and sema.
#include <gtest/gtest.h>

#include <sstream>

#include "interp/interpreter.h"
#include "ir/ir.h"
#include "support/diagnostics.h"

namespace trlc::interp_test {

using namespace trlc::ir;

inline Type ty(DType dt, std::vector<int64_t> shape = {}) {
    Type t;
    t.dtype = dt;
    for (int64_t s : shape) t.shape.push_back(Extent{s, nullptr});
    return t;
}

inline IndexExprPtr aff(int64_t c, std::vector<int64_t> coef = {}) {
    auto e = std::make_shared<IndexExpr>();
    e->aff.constant = c;
    e->aff.coef = coef;
    return e;
}
inline IndexExprPtr var(int v, int64_t c = 0) {
    std::vector<int64_t> coef(v + 1, 0);
    coef[v] = 1;
    return aff(c, coef);
}
inline IndexExprPtr imin(IndexExprPtr a, IndexExprPtr b) {
    auto e = std::make_shared<IndexExpr>();
    e->kind = IndexExpr::Min;
    e->a = a;
    e->b = b;
    return e;
}

inline std::shared_ptr<Node> node(NodeKind k, Type t, std::vector<NodePtr> args = {}) {
    auto n = std::make_shared<Node>();
    n->kind = k;
    n->type = t;
    n->args = std::move(args);
    return n;
}
inline NodePtr cst(double v, DType dt = DType::F32) {
    auto n = node(NodeKind::Const, ty(dt));
    n->data = {v};
    return n;
}
inline NodePtr arr(std::vector<double> v, DType dt = DType::F32) {
    auto n = node(NodeKind::Const, ty(dt, {static_cast<int64_t>(v.size())}));
    n->data = v;
    return n;
}
inline NodePtr coord(int v) {
    auto n = node(NodeKind::Coord, ty(DType::I32));
    n->var = v;
    return n;
}
inline ReadIndex pt(IndexExprPtr e) {
    ReadIndex r;
    r.point = e;
    return r;
}
inline ReadIndex sl(IndexExprPtr lo, IndexExprPtr hi) {
    ReadIndex r;
    r.is_slice = true;
    r.lo = lo;
    r.hi = hi;
    return r;
}
inline NodePtr read(int tensor, Type t, std::vector<ReadIndex> idx, Loc loc = {}) {
    auto n = node(NodeKind::Read, t);
    n->tensor = tensor;
    n->index = std::move(idx);
    n->loc = loc;
    return n;
}
inline NodePtr bin(BinaryOp op, NodePtr a, NodePtr b, DType dt) {
    auto n = node(NodeKind::Binary, ty(dt, {}), {a, b});
    n->bop = op;
    n->type = a->type.shape.size() >= b->type.shape.size() ? a->type : b->type;
    n->type.dtype = dt;
    return n;
}
inline NodePtr un(UnaryOp op, NodePtr a, DType dt) {
    auto n = node(NodeKind::Unary, a->type, {a});
    n->type.dtype = dt;
    n->uop = op;
    return n;
}
inline NodePtr castn(NodePtr a, DType dt) {
    auto n = node(NodeKind::Cast, a->type, {a});
    n->type.dtype = dt;
    return n;
}
inline NodePtr builtin(BuiltinOp op, Type t, std::vector<NodePtr> args, std::vector<int64_t> axes = {},
                       bool has_axes = false) {
    auto n = node(NodeKind::Builtin, t, std::move(args));
    n->builtin = op;
    n->axes = axes;
    n->has_axes = has_axes;
    return n;
}
inline NodePtr rng(std::vector<NodePtr> args) { return node(NodeKind::Rng, ty(DType::Key), args); }

inline PatternItem pv(int v) { return PatternItem{PatternItem::Var, v, 0}; }
inline PatternItem ps(int v, int64_t c) { return PatternItem{PatternItem::Shift, v, c}; }
inline PatternItem pc(int64_t c) { return PatternItem{PatternItem::Constant, -1, c}; }

/** A program under construction plus a runner that captures output and diagnostics. */
struct Builder {
    Program p;
    SourceManager sm;
    int file = sm.add("prog.trl", "x[t] = x[t] + 1\ny[t] = x[t+1]\n");

    int dim(const std::string &name, int64_t bound) {
        p.dims.push_back(Dim{name, "B" + name, bound, {}});
        return static_cast<int>(p.dims.size()) - 1;
    }
    int tensor(const std::string &name, std::vector<int> dims, Type t) {
        Tensor x;
        x.name = name;
        x.dims = dims;
        x.type = t;
        x.loc = Loc{file, 1, 1, 1};
        p.tensors.push_back(x);
        return static_cast<int>(p.tensors.size()) - 1;
    }
    void eq(int tensor, std::vector<int> vars, std::vector<PatternItem> pat, NodePtr body, GuardPtr guard = nullptr) {
        Equation e;
        e.vars = vars;
        e.pattern = pat;
        e.body = body;
        e.guard = guard;
        p.tensors[tensor].equations.push_back(e);
    }
    void emit(const std::string &stream, std::vector<int> vars, std::vector<std::pair<std::string, NodePtr>> fields) {
        p.emits.push_back(Emit{stream, vars, fields, {}, nullptr, nullptr});
    }

    std::string out, diags;
    int run(uint64_t seed = 0, const std::string &dir = ".") {
        std::ostringstream o, d;
        Diagnostics diag(sm, d);
        InterpOptions opts;
        opts.seed = seed;
        opts.log = &o;
        opts.output_dir = dir;
        int rc = interpret(p, opts, diag);
        out = o.str();
        diags = d.str();
        return rc;
    }
    std::vector<std::string> lines() const {
        std::vector<std::string> r;
        std::istringstream s(out);
        for (std::string l; std::getline(s, l);) r.push_back(l);
        return r;
    }
};

}  // namespace trlc::interp_test
