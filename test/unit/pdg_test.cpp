// PDG and checks on hand-built ir::Programs: domains, access relations (shifts,
// clamps, slices), effective domains by specificity, ambiguity, undefined
// reads, dependence cycles, printers.  Expected isl texts were derived by hand
// from the equations (e.g. h[t+1] for t < 8 defines t in [1, 8]).
#include <gtest/gtest.h>

#include <sstream>

#include "checks/checks.h"
#include "pdg/pdg.h"

namespace trlc {
namespace {

using ir::Affine;
using ir::IndexExpr;
using ir::IndexExprPtr;
using ir::NodePtr;
using ir::PatternItem;
using ir::ReadIndex;

// ---- a tiny builder of ir::Program values --------------------------------------------

Affine aff(int64_t c, std::vector<int64_t> coef = {}) {
    Affine a;
    a.constant = c;
    a.coef = std::move(coef);
    return a;
}
IndexExprPtr ix(Affine a) {
    auto e = std::make_shared<IndexExpr>();
    e->aff = std::move(a);
    return e;
}
IndexExprPtr var(int v, int64_t c = 0) {
    std::vector<int64_t> coef(v + 1, 0);
    coef[v] = 1;
    return ix(aff(c, coef));
}
IndexExprPtr cst(int64_t c) { return ix(aff(c)); }
IndexExprPtr mn(IndexExprPtr a, IndexExprPtr b) {
    auto e = std::make_shared<IndexExpr>();
    e->kind = IndexExpr::Min;
    e->a = a;
    e->b = b;
    return e;
}
ReadIndex pt(IndexExprPtr e) {
    ReadIndex r;
    r.point = e;
    return r;
}
ReadIndex sl(IndexExprPtr lo, IndexExprPtr hi) {
    ReadIndex r;
    r.is_slice = true;
    r.lo = lo;
    r.hi = hi;
    return r;
}
PatternItem V(int v) {
    PatternItem p;
    p.var = v;
    return p;
}
PatternItem S(int v, int64_t c) {
    PatternItem p;
    p.kind = PatternItem::Shift;
    p.var = v;
    p.offset = c;
    return p;
}
PatternItem C(int64_t c) {
    PatternItem p;
    p.kind = PatternItem::Constant;
    p.offset = c;
    return p;
}
ir::GuardPtr cmp(ir::BinaryOp op, Affine l, Affine r) {
    auto g = std::make_shared<ir::Guard>();
    g->kind = ir::Guard::Cmp;
    g->cmp = op;
    g->lhs = l;
    g->rhs = r;
    return g;
}
ir::GuardPtr not_(ir::GuardPtr a) {
    auto g = std::make_shared<ir::Guard>();
    g->kind = ir::Guard::Not;
    g->a = a;
    return g;
}

struct ProgBuilder {
    ir::Program p;
    int file = 0;

    int dim(const std::string &name, const std::string &bound_name, int64_t bound) {
        ir::Dim d;
        d.name = name;
        d.bound_name = bound_name;
        d.bound = bound;
        p.dims.push_back(d);
        p.bounds[bound_name] = bound;
        return static_cast<int>(p.dims.size()) - 1;
    }
    int tensor(const std::string &name, std::vector<int> dims, int line) {
        ir::Tensor t;
        t.name = name;
        t.dims = std::move(dims);
        t.loc = Loc{file, line, 1, 1};
        p.tensors.push_back(t);
        return static_cast<int>(p.tensors.size()) - 1;
    }
    NodePtr constant(double v = 1.0) {
        auto n = std::make_shared<ir::Node>();
        n->kind = ir::NodeKind::Const;
        n->data = {v};
        return n;
    }
    NodePtr read(int tensor, std::vector<ReadIndex> index, int line, int col) {
        auto n = std::make_shared<ir::Node>();
        n->kind = ir::NodeKind::Read;
        n->tensor = tensor;
        n->index = std::move(index);
        n->loc = Loc{file, line, col, 1};
        return n;
    }
    NodePtr add(NodePtr a, NodePtr b) {
        auto n = std::make_shared<ir::Node>();
        n->kind = ir::NodeKind::Binary;
        n->args = {a, b};
        return n;
    }
    void eq(int tensor, std::vector<int> vars, std::vector<PatternItem> pattern, NodePtr body, int line,
            ir::GuardPtr guard = nullptr) {
        ir::Equation e;
        e.vars = std::move(vars);
        e.pattern = std::move(pattern);
        e.body = body;
        e.guard = guard;
        e.loc = Loc{file, line, 1, 1};
        ir::Tensor &t = p.tensors[tensor];
        if (t.equations.empty()) t.loc = e.loc;
        t.equations.push_back(e);
    }
    void emit(const std::string &stream, std::vector<int> vars, NodePtr value, int line) {
        ir::Emit e;
        e.stream = stream;
        e.vars = std::move(vars);
        e.fields.push_back({"v", value});
        e.loc = Loc{file, line, 1, 1};
        p.emits.push_back(e);
    }
};

/* Runs build_pdg and both checks; collects the diagnostics text. */
struct PdgRun {
    SourceManager sm;
    std::ostringstream out;
    Diagnostics diag{sm, out};
    Pdg pdg;
    std::string dump;

    explicit PdgRun(const ir::Program &p, bool checks = true) {
        sm.add("p.trl", "");
        pdg = build_pdg(p, diag);
        if (checks && !diag.has_errors()) check_reads_defined(pdg, diag);
        if (checks && !diag.has_errors()) check_no_zero_cycle(pdg, diag);
        std::ostringstream d;
        print_pdg(pdg, d);
        dump = d.str();
    }
    std::string errors() const { return out.str(); }
};

bool contains(const std::string &hay, const std::string &needle) { return hay.find(needle) != std::string::npos; }

#define EXPECT_CONTAINS(hay, needle) EXPECT_TRUE(contains(hay, needle)) << "missing: " << (needle) << "\nin:\n" << (hay)

// ---- domains and access relations ----------------------------------------------------

TEST(Pdg, ForwardRecurrenceDomainAndShiftAccess) {
    ProgBuilder b;
    int t = b.dim("t", "T", 8);
    int h = b.tensor("h", {t}, 3);
    b.eq(h, {}, {C(0)}, b.constant(), 3);
    b.eq(h, {t}, {S(0, 1)}, b.read(h, {pt(var(0))}, 4, 10), 4);
    PdgRun r(b.p);
    EXPECT_EQ(r.errors(), "");
    EXPECT_EQ(r.dump, "context: [T] -> {  : T = 8 }\n"
                      "tensor h : f32\n"
                      "  domain: { h[t] : 0 <= t <= 8 }\n"
                      "  equation @3:1: { h[t] : t = 0 }\n"
                      "  equation @4:1: { h[t] : 0 < t <= 8 }\n"
                      "    read h[t]: { h[t] -> h[t'] : t' = -1 + t and 0 < t <= 8 }\n");
}

TEST(Pdg, ClampIsPiecewise) {
    ProgBuilder b;
    int t = b.dim("t", "T", 8);
    int r = b.tensor("r", {t}, 1);
    b.eq(r, {t}, {V(0)}, b.constant(), 1);
    int s = b.tensor("s", {t}, 2);
    b.eq(s, {t}, {V(0)}, b.read(r, {pt(mn(var(0, 3), cst(7)))}, 2, 8), 2);
    PdgRun run(b.p);
    EXPECT_EQ(run.errors(), "");
    EXPECT_CONTAINS(run.dump, "    read r[min(t+3, 7)]: { s[t] -> r[t'] : t' = 3 + t and 0 <= t <= 4; "
                              "s[t] -> r[t'] : t' = 7 and 5 <= t <= 7 }\n");
}

TEST(Pdg, SliceIsOneToMany) {
    ProgBuilder b;
    int t = b.dim("t", "T", 12);
    int r = b.tensor("r", {t}, 1);
    b.eq(r, {t}, {V(0)}, b.constant(), 1);
    int s = b.tensor("s", {t}, 2);
    b.eq(s, {t}, {V(0)}, b.read(r, {sl(var(0), mn(var(0, 3), cst(12)))}, 2, 8), 2);
    PdgRun run(b.p);
    EXPECT_EQ(run.errors(), "");
    EXPECT_CONTAINS(run.dump, "read r[t:min(t+3, 12)]:");
    EXPECT_CONTAINS(run.dump, "{ s[t] -> r[t'] : 0 <= t <= 11 and t <= t' <= 11 and t' <= 2 + t }");
}

TEST(Pdg, EmitIsAConsumer) {
    ProgBuilder b;
    int t = b.dim("t", "T", 4);
    int x = b.tensor("x", {t}, 1);
    b.eq(x, {t}, {V(0)}, b.constant(), 1);
    b.emit("loss", {t}, b.read(x, {pt(var(0, 1))}, 2, 20), 2);
    PdgRun run(b.p);
    EXPECT_EQ(run.errors(), "p.trl:2:20: error: x[t+1] reads x at t = 4, but x is defined for t in [0, 3]\n"
                            "p.trl:1:1: note: x is defined here\n");
    EXPECT_CONTAINS(run.dump, "emit \"loss\"\n  domain: { emit_loss[t] : 0 <= t <= 3 }\n");
}

// ---- specificity and ambiguity ---------------------------------------------------------

TEST(Pdg, ConstantBeatsVarInReverseRecurrence) {
    ProgBuilder b;
    int t = b.dim("t", "T", 8);
    int rew = b.tensor("rew", {t}, 1);
    b.eq(rew, {t}, {V(0)}, b.constant(), 1);
    int ret = b.tensor("ret", {t}, 2);
    b.eq(ret, {}, {C(7)}, b.read(rew, {pt(cst(7))}, 2, 10), 2);
    b.eq(ret, {t}, {V(0)}, b.add(b.read(rew, {pt(var(0))}, 3, 10), b.read(ret, {pt(var(0, 1))}, 3, 20)), 3);
    PdgRun run(b.p);
    EXPECT_EQ(run.errors(), "");
    EXPECT_CONTAINS(run.dump, "tensor ret : f32\n"
                              "  domain: { ret[t] : 0 <= t <= 7 }\n"
                              "  equation @2:1: { ret[t] : t = 7 }\n"
                              "    read rew[7]: { ret[t] -> rew[t'] : t = 7 and t' = 7 }\n"
                              "  equation @3:1: { ret[t] : 0 <= t <= 6 }\n"
                              "    overridden: { ret[t] : t = 7 }\n"
                              "    read ret[t+1]: { ret[t] -> ret[t'] : t' = 1 + t and 0 <= t <= 6 }\n"
                              "    read rew[t]: { ret[t] -> rew[t'] : t' = t and 0 <= t <= 6 }\n");
}

TEST(Pdg, SamePatternTwiceIsAmbiguous) {
    ProgBuilder b;
    int t = b.dim("t", "T", 8);
    int x = b.tensor("x", {t}, 1);
    b.eq(x, {t}, {V(0)}, b.constant(), 1);
    b.eq(x, {t}, {V(0)}, b.constant(2), 2);
    PdgRun run(b.p);
    EXPECT_EQ(run.errors(), "p.trl:2:1: error: ambiguous definitions of x: the equations at 1:1 and 2:1 both "
                            "define x at t in [0, 7]\n"
                            "p.trl:1:1: note: the other definition of x is here\n");
}

TEST(Pdg, CrossingConstantsAreAmbiguousUnlessACornerIsDefined) {
    for (bool corner : {false, true}) {
        ProgBuilder b;
        int i = b.dim("i", "N", 3);
        int j = b.dim("j", "M", 4);
        int x = b.tensor("x", {i, j}, 1);
        b.eq(x, {j}, {C(0), V(0)}, b.constant(), 1);  // x[0, j]
        b.eq(x, {i}, {V(0), C(0)}, b.constant(), 2);  // x[i, 0]
        if (corner) b.eq(x, {}, {C(0), C(0)}, b.constant(), 3);
        PdgRun run(b.p);
        if (corner) {
            EXPECT_EQ(run.errors(), "");
        } else {
            EXPECT_EQ(run.errors(), "p.trl:2:1: error: ambiguous definitions of x: the equations at 1:1 and 2:1 "
                                    "both define x at (i, j) = (0, 0)\n"
                                    "p.trl:1:1: note: the other definition of x is here\n");
        }
    }
}

TEST(Pdg, GuardAndOtherwiseSplitTheDomain) {
    ProgBuilder b;
    int t = b.dim("t", "T", 8);
    int x = b.tensor("x", {t}, 1);
    auto lt4 = cmp(ir::BinaryOp::Lt, aff(0, {1}), aff(4));
    b.eq(x, {t}, {V(0)}, b.constant(), 1, lt4);
    b.eq(x, {t}, {V(0)}, b.constant(2), 2, not_(lt4));
    PdgRun run(b.p);
    EXPECT_EQ(run.errors(), "");
    EXPECT_CONTAINS(run.dump, "  domain: { x[t] : 0 <= t <= 7 }\n"
                              "  equation @1:1: { x[t] : 0 <= t <= 3 }\n"
                              "  equation @2:1: { x[t] : 4 <= t <= 7 }\n");
}

// ---- reads of undefined points ---------------------------------------------------------

TEST(Checks, ReadPastTheEnd) {
    ProgBuilder b;
    int t = b.dim("t", "T", 8);
    int x = b.tensor("x", {t}, 4);
    b.eq(x, {t}, {V(0)}, b.constant(), 4);
    int y = b.tensor("y", {t}, 5);
    b.eq(y, {t}, {V(0)}, b.read(x, {pt(var(0, 1))}, 5, 8), 5);
    PdgRun run(b.p);
    EXPECT_EQ(run.errors(), "p.trl:5:8: error: x[t+1] reads x at t = 8, but x is defined for t in [0, 7]\n"
                            "p.trl:4:1: note: x is defined here\n");
}

TEST(Checks, ReadBeforeTheStartWithoutBaseCase) {
    ProgBuilder b;
    int t = b.dim("t", "T", 8);
    int x = b.tensor("x", {t}, 1);
    b.eq(x, {t}, {V(0)}, b.add(b.read(x, {pt(var(0, -1))}, 1, 8), b.read(x, {pt(var(0, -2))}, 1, 17)), 1);
    PdgRun run(b.p);
    EXPECT_EQ(run.errors(), "p.trl:1:8: error: x[t-1] reads x at t = -1, but x is defined for t in [0, 7]\n"
                            "p.trl:1:1: note: x is defined here\n"
                            "p.trl:1:17: error: x[t-2] reads x at t in [-2, -1], but x is defined for t in [0, 7]\n"
                            "p.trl:1:1: note: x is defined here\n");
}

TEST(Checks, MultiDimUndefinedBox) {
    ProgBuilder b;
    int bb = b.dim("b", "B", 4);
    int t = b.dim("t", "T", 8);
    int obs = b.tensor("obs", {bb, t}, 1);
    b.eq(obs, {bb, t}, {V(0), V(1)}, b.constant(), 1);
    int y = b.tensor("y", {bb, t}, 2);
    b.eq(y, {bb, t}, {V(0), V(1)}, b.read(obs, {pt(var(0)), pt(var(1, 1))}, 2, 10), 2);
    int z = b.tensor("z", {}, 3);
    b.eq(z, {}, {}, b.read(obs, {pt(cst(0)), pt(cst(8))}, 3, 5), 3);
    PdgRun run(b.p);
    EXPECT_EQ(run.errors(), "p.trl:2:10: error: obs[b, t+1] reads obs at b in [0, 3], t in [8, 8], but obs is "
                            "defined for b in [0, 3], t in [0, 7]\n"
                            "p.trl:1:1: note: obs is defined here\n"
                            "p.trl:3:5: error: obs[0, 8] reads obs at (b, t) = (0, 8), but obs is defined for "
                            "b in [0, 3], t in [0, 7]\n"
                            "p.trl:1:1: note: obs is defined here\n");
}

TEST(Checks, NonBoxDefinedSetIsAUnionOfBoxes) {
    ProgBuilder b;
    int t = b.dim("t", "T", 8);
    int x = b.tensor("x", {t}, 1);
    b.eq(x, {t}, {V(0)}, b.constant(), 1, cmp(ir::BinaryOp::Ne, aff(0, {1}), aff(3)));
    int y = b.tensor("y", {t}, 2);
    b.eq(y, {t}, {V(0)}, b.read(x, {pt(var(0))}, 2, 8), 2);
    PdgRun run(b.p);
    EXPECT_EQ(run.errors(), "p.trl:2:8: error: x[t] reads x at t = 3, but x is defined for t in [0, 2] or "
                            "t in [4, 7]\n"
                            "p.trl:1:1: note: x is defined here\n");
}

TEST(Checks, SliceReadsOnlyDefinedPointsWithClampedEnd) {
    ProgBuilder b;
    int t = b.dim("t", "T", 12);
    int r = b.tensor("r", {t}, 1);
    b.eq(r, {t}, {V(0)}, b.constant(), 1);
    int s = b.tensor("s", {t}, 2);
    b.eq(s, {t}, {V(0)}, b.read(r, {sl(var(0), var(0, 3))}, 2, 8), 2);
    PdgRun run(b.p);
    EXPECT_EQ(run.errors(), "p.trl:2:8: error: r[t:t+3] reads r at t in [12, 13], but r is defined for "
                            "t in [0, 11]\n"
                            "p.trl:1:1: note: r is defined here\n");
}

// ---- cycles -------------------------------------------------------------------------------

TEST(Checks, MutualZeroDistanceCycle) {
    ProgBuilder b;
    int t = b.dim("t", "T", 8);
    int a = b.tensor("a", {t}, 1);
    int bt = b.tensor("b", {t}, 2);
    b.eq(a, {t}, {V(0)}, b.read(bt, {pt(var(0))}, 1, 8), 1);
    b.eq(bt, {t}, {V(0)}, b.read(a, {pt(var(0))}, 2, 8), 2);
    PdgRun run(b.p);
    EXPECT_EQ(run.errors(), "p.trl:1:1: error: zero-distance dependence cycle: a[t] -> b[t] -> a[t]\n"
                            "p.trl:1:8: note: a[t] reads b[t] here\n"
                            "p.trl:2:8: note: b[t] reads a[t] here\n");
}

TEST(Checks, SelfReadIsACycle) {
    ProgBuilder b;
    int t = b.dim("t", "T", 8);
    int x = b.tensor("x", {t}, 1);
    b.eq(x, {t}, {V(0)}, b.add(b.read(x, {pt(var(0))}, 1, 8), b.constant()), 1);
    PdgRun run(b.p);
    EXPECT_EQ(run.errors(), "p.trl:1:1: error: zero-distance dependence cycle: x[t] -> x[t]\n"
                            "p.trl:1:8: note: x[t] reads x[t] here\n");
}

TEST(Checks, ForwardRecurrenceIsNotACycle) {
    ProgBuilder b;
    int bb = b.dim("b", "B", 3);
    int t = b.dim("t", "T", 50);
    int x = b.tensor("x", {bb, t}, 1);
    b.eq(x, {bb}, {V(0), C(0)}, b.constant(), 1);
    b.eq(x, {bb, t}, {V(0), S(1, 1)}, b.read(x, {pt(var(0)), pt(var(1))}, 2, 8), 2);
    int y = b.tensor("y", {t}, 3);  // a backward window over x: still acyclic
    b.eq(y, {t}, {V(0)}, b.read(x, {pt(cst(0)), sl(var(0), cst(51))}, 3, 8), 3);
    PdgRun run(b.p);
    EXPECT_EQ(run.errors(), "");
}

TEST(Checks, ForwardAndBackwardReadsMakeACycle) {
    ProgBuilder b;
    int t = b.dim("t", "T", 8);
    int x = b.tensor("x", {t}, 1);
    b.eq(x, {}, {C(0)}, b.constant(), 1);
    b.eq(x, {}, {C(7)}, b.constant(), 2);
    b.eq(x, {t}, {V(0)}, b.add(b.read(x, {pt(var(0, 1))}, 3, 8), b.read(x, {pt(var(0, -1))}, 3, 17)), 3);
    PdgRun run(b.p);
    EXPECT_EQ(run.errors(), "p.trl:3:1: error: dependence cycle: x[t] -> x[t+1] -> x[t] (at t = 1)\n"
                            "p.trl:3:8: note: x[t] reads x[t+1] here\n"
                            "p.trl:3:17: note: x[t+1] reads x[t] here\n");
}

// Only a[2] is on the cycle (w reads c[2]); points are written relative to it.
TEST(Checks, ThreeTensorCycleThroughAnEmptyDomainTensor) {
    ProgBuilder b;
    int t = b.dim("t", "T", 4);
    int a = b.tensor("a", {t}, 1);
    int w = b.tensor("w", {}, 2);
    int c = b.tensor("c", {t}, 3);
    b.eq(a, {t}, {V(0)}, b.read(w, {}, 1, 8), 1);
    b.eq(w, {}, {}, b.read(c, {pt(cst(2))}, 2, 5), 2);
    b.eq(c, {t}, {V(0)}, b.read(a, {pt(var(0))}, 3, 8), 3);
    PdgRun run(b.p);
    EXPECT_EQ(run.errors(), "p.trl:1:1: error: zero-distance dependence cycle: a[t] -> w -> c[t] -> a[t] (at t = 2)\n"
                            "p.trl:1:8: note: a[t] reads w here\n"
                            "p.trl:2:5: note: w reads c[t] here\n"
                            "p.trl:3:8: note: c[t] reads a[t] here\n");
}

TEST(Checks, ClampAtTheEndIsASelfCycleThere) {
    ProgBuilder b;
    int t = b.dim("t", "T", 8);
    int x = b.tensor("x", {t}, 1);
    b.eq(x, {t}, {V(0)}, b.read(x, {pt(mn(var(0, 1), cst(7)))}, 1, 8), 1);
    PdgRun run(b.p);
    EXPECT_EQ(run.errors(), "p.trl:1:1: error: zero-distance dependence cycle: x[t] -> x[t] (at t = 7)\n"
                            "p.trl:1:8: note: x[t] reads x[t] here\n");
}

TEST(Checks, NonUniformReadsAreAcyclic) {
    // x[t] = x[2t+1] for t < 4, constants above: chains 0 -> 1 -> 3 -> 7 end.
    ProgBuilder b;
    int t = b.dim("t", "T", 8);
    int x = b.tensor("x", {t}, 1);
    auto lt4 = cmp(ir::BinaryOp::Lt, aff(0, {1}), aff(4));
    b.eq(x, {t}, {V(0)}, b.read(x, {pt(ix(aff(1, {2})))}, 1, 8), 1, lt4);
    b.eq(x, {t}, {V(0)}, b.constant(), 2, not_(lt4));
    PdgRun run(b.p);
    EXPECT_EQ(run.errors(), "");
    EXPECT_CONTAINS(run.dump, "read x[2*t+1]: { x[t] -> x[t'] : t' = 1 + 2t and 0 <= t <= 3 }");
}

TEST(Checks, PrefixSumOverTheFutureIsACycleOnlyWithoutTheBase) {
    // x[t] = sum(x[t+1:T]) reads strictly later points: acyclic.  x[t] = sum(x[t:T]) reads itself.
    for (int lo : {1, 0}) {
        ProgBuilder b;
        int t = b.dim("t", "T", 6);
        int x = b.tensor("x", {t}, 1);
        b.eq(x, {t}, {V(0)}, b.read(x, {sl(var(0, lo), cst(6))}, 1, 8), 1);
        PdgRun run(b.p);
        if (lo == 1)
            EXPECT_EQ(run.errors(), "");
        else
            EXPECT_EQ(run.errors(), "p.trl:1:1: error: zero-distance dependence cycle: x[t] -> x[t]\n"
                                    "p.trl:1:8: note: x[t] reads x[t] here\n");
    }
}

TEST(Checks, LongDependenceChainsStayFast) {
    // B*T = 8 * 100000 points: isl works on the relations, never on the points.
    ProgBuilder b;
    int bb = b.dim("b", "B", 8);
    int t = b.dim("t", "T", 100000);
    int x = b.tensor("x", {bb, t}, 1);
    int y = b.tensor("y", {bb, t}, 2);
    b.eq(x, {bb}, {V(0), C(0)}, b.constant(), 1);
    b.eq(x, {bb, t}, {V(0), S(1, 1)}, b.read(y, {pt(var(0)), pt(var(1))}, 2, 8), 2);
    b.eq(y, {bb, t}, {V(0), V(1)}, b.read(x, {pt(var(0)), sl(cst(0), var(1, 1))}, 3, 8), 3);
    PdgRun run(b.p);
    EXPECT_EQ(run.errors(), "");
}

// ---- printers -------------------------------------------------------------------------------

TEST(Pdg, DumpsAreStableAndJsonHasTheContract) {
    ProgBuilder b;
    int t = b.dim("t", "T", 8);
    int z = b.tensor("z", {t}, 1);
    b.eq(z, {t}, {V(0)}, b.constant(), 1);
    int a = b.tensor("a", {t}, 2);
    b.eq(a, {t}, {V(0)}, b.read(z, {pt(mn(var(0, 2), cst(7)))}, 2, 8), 2);
    PdgRun r1(b.p), r2(b.p);
    EXPECT_EQ(r1.dump, r2.dump);
    EXPECT_LT(r1.dump.find("tensor a"), r1.dump.find("tensor z"));
    std::string j = pdg_to_json(r1.pdg);
    EXPECT_EQ(j, pdg_to_json(r2.pdg));
    for (const char *key : {"\"tensors\"", "\"edges\"", "\"name\": \"a\"", "\"dtype\": \"f32\"", "\"shape\": []",
                            "\"from\": \"a\"", "\"to\": \"z\"", "\"access\""})
        EXPECT_CONTAINS(j, key);
    std::ostringstream dot;
    print_pdg_dot(r1.pdg, dot);
    EXPECT_CONTAINS(dot.str(), "\"a\" -> \"z\" [label=\"z[min(t+2, 7)]\"];");
}

}  // namespace
}  // namespace trlc
