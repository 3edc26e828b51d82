// The reference interpreter on hand-built IR programs: recurrences (forward, reverse, deep),
// windows and dynamic slices, f32 vs f64 exactness, numpy builtins, and run-time errors.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "interp_builder.h"
#include "trl_random.h"

namespace trlc::interp_test {
namespace {

using json = nlohmann::json;

std::vector<json> parse(const Builder &b) {
    std::vector<json> r;
    for (const auto &l : b.lines()) r.push_back(json::parse(l));
    return r;
}

// ret[T-1] = rew[T-1]; ret[t] = rew[t] + gamma * ret[t+1], rewards uniform f64.
Builder returns_program(int64_t T, double gamma) {
    Builder b;
    int t = b.dim("t", T);
    Type f64 = ty(DType::F64);
    int rew = b.tensor("rew", {t}, f64);
    int ret = b.tensor("ret", {t}, f64);
    b.eq(rew, {t}, {pv(0)}, builtin(BuiltinOp::Uniform, f64, {rng({coord(0)})}));
    b.eq(ret, {}, {pc(T - 1)}, read(rew, f64, {pt(aff(T - 1))}));
    b.eq(ret, {t}, {pv(0)},
         bin(BinaryOp::Add, read(rew, f64, {pt(var(0))}),
             bin(BinaryOp::Mul, cst(gamma, DType::F64), read(ret, f64, {pt(var(0, 1))}), DType::F64), DType::F64));
    b.emit("returns", {t},
           {{"t", coord(0)}, {"reward", read(rew, f64, {pt(var(0))})}, {"ret", read(ret, f64, {pt(var(0))})}});
    return b;
}

TEST(InterpEval, ReverseRecurrenceEqualsClosedForm) {
    const int64_t T = 16;
    const double gamma = 0.9;
    Builder b = returns_program(T, gamma);
    ASSERT_EQ(b.run(), 0) << b.diags;
    auto rows = parse(b);
    ASSERT_EQ(rows.size(), static_cast<size_t>(T));
    std::vector<double> r;
    for (auto &row : rows) r.push_back(row["reward"].get<double>());
    for (int64_t t = 0; t < T; ++t) {
        EXPECT_EQ(rows[t]["t"].get<int>(), t);
        double closed = 0;
        for (int64_t k = 0; t + k < T; ++k) closed += std::pow(gamma, k) * r[t + k];
        EXPECT_NEAR(rows[t]["ret"].get<double>(), closed, 1e-12) << "t = " << t;
    }
    // The rewards are the documented stream: seed 0, tensor "rew", rng(t), f64 element 0.
    trl::RngKey k = trl::rng_root(trl::stream_key(0, trl::fnv1a32("rew", 3)));
    EXPECT_EQ(r[3], trl::uniform_f64(trl::fold_in(k, 3), 0));
}

TEST(InterpEval, SeedChangesTheStream) {
    Builder a = returns_program(4, 0.5), c = returns_program(4, 0.5);
    ASSERT_EQ(a.run(0), 0);
    ASSERT_EQ(c.run(1), 0);
    EXPECT_NE(a.out, c.out);
}

TEST(InterpEval, DeepReverseRecurrenceDoesNotOverflowTheStack) {
    // ret[T-1] = 1; ret[t] = 1 + 0.5 * ret[t+1] over T = 100000; emit ret[0] only.
    const int64_t T = 100000;
    Builder b;
    int t = b.dim("t", T);
    Type f64 = ty(DType::F64);
    int ret = b.tensor("ret", {t}, f64);
    b.eq(ret, {}, {pc(T - 1)}, cst(1.0, DType::F64));
    b.eq(ret, {t}, {pv(0)},
         bin(BinaryOp::Add, cst(1.0, DType::F64),
             bin(BinaryOp::Mul, cst(0.5, DType::F64), read(ret, f64, {pt(var(0, 1))}), DType::F64), DType::F64));
    b.emit("first", {}, {{"ret0", read(ret, f64, {pt(aff(0))})}});
    ASSERT_EQ(b.run(), 0) << b.diags;
    EXPECT_EQ(b.out, "{\"ret0\":2.0}\n");  // 2 - 2^(1-T) rounds to 2
}

TEST(InterpEval, WindowSumOverDynamicSlice) {
    // r[t] = f32(t % 4) + 0.5; s[t] = sum(r[t:min(t+3, T)]); w[t] = r[t:T] (length T - t).
    const int64_t T = 7;
    Builder b;
    int t = b.dim("t", T);
    Type f32 = ty(DType::F32);
    int r = b.tensor("r", {t}, f32);
    int s = b.tensor("s", {t}, f32);
    b.eq(r, {t}, {pv(0)},
         bin(BinaryOp::Add, castn(bin(BinaryOp::Mod, coord(0), cst(4, DType::I32), DType::I32), DType::F32), cst(0.5),
             DType::F32));
    Type win = f32;
    win.shape.push_back(Extent{3, imin(var(0, 3), aff(T))});
    b.eq(s, {t}, {pv(0)}, builtin(BuiltinOp::Sum, f32, {read(r, win, {sl(var(0), imin(var(0, 3), aff(T)))})}));
    Type tail = f32;
    tail.shape.push_back(Extent{T, aff(T, {-1})});
    b.emit("w", {t}, {{"s", read(s, f32, {pt(var(0))})}, {"tail", read(r, tail, {sl(var(0), aff(T))})}});
    ASSERT_EQ(b.run(), 0) << b.diags;
    auto L = b.lines();
    ASSERT_EQ(L.size(), 7u);
    // r = 0.5 1.5 2.5 3.5 0.5 1.5 2.5
    EXPECT_EQ(L[0], "{\"s\":4.5,\"tail\":[0.5,1.5,2.5,3.5,0.5,1.5,2.5]}");
    EXPECT_EQ(L[4], "{\"s\":4.5,\"tail\":[0.5,1.5,2.5]}");
    EXPECT_EQ(L[5], "{\"s\":4.0,\"tail\":[1.5,2.5]}");
    EXPECT_EQ(L[6], "{\"s\":2.5,\"tail\":[2.5]}");
}

TEST(InterpEval, F32ArithmeticIsFloatArithmetic) {
    Builder b;
    auto f32sum = bin(BinaryOp::Add, cst(0.1), cst(0.2), DType::F32);
    auto f64sum = bin(BinaryOp::Add, cst(0.1, DType::F64), cst(0.2, DType::F64), DType::F64);
    auto third = bin(BinaryOp::Div, cst(1.0), cst(3.0), DType::F32);
    auto e = un(UnaryOp::Exp, cst(1.0), DType::F32);
    auto tanh64 = un(UnaryOp::Tanh, cst(0.5, DType::F64), DType::F64);
    b.emit("x", {}, {{"a", f32sum}, {"b", f64sum}, {"c", third}, {"e", e}, {"th", tanh64}});
    ASSERT_EQ(b.run(), 0) << b.diags;
    auto rows = parse(b);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(static_cast<float>(rows[0]["a"].get<double>()), 0.1f + 0.2f);
    EXPECT_EQ(rows[0]["b"].get<double>(), 0.1 + 0.2);
    EXPECT_EQ(static_cast<float>(rows[0]["c"].get<double>()), 1.0f / 3.0f);
    EXPECT_EQ(static_cast<float>(rows[0]["e"].get<double>()), expf(1.0f));
    EXPECT_EQ(rows[0]["th"].get<double>(), std::tanh(0.5));
    EXPECT_NE(b.out.find("\"b\":0.30000000000000004"), std::string::npos) << b.out;
    EXPECT_NE(b.out.find("\"c\":0.33333334"), std::string::npos) << b.out;
}

TEST(InterpEval, IntegerOpsFlooredModAndOverflowError) {
    Builder b;
    b.emit("x", {},
           {{"m", bin(BinaryOp::Mod, cst(-7, DType::I32), cst(3, DType::I32), DType::I32)},
            {"fm", bin(BinaryOp::Mod, cst(-7.5, DType::F64), cst(2, DType::F64), DType::F64)},
            {"p", bin(BinaryOp::Pow, cst(3, DType::I32), cst(4, DType::I32), DType::I32)}});
    ASSERT_EQ(b.run(), 0) << b.diags;
    EXPECT_EQ(b.out, "{\"m\":2,\"fm\":0.5,\"p\":81}\n");
    Builder o;
    auto big = bin(BinaryOp::Mul, cst(65536, DType::I32), cst(65536, DType::I32), DType::I32);
    std::const_pointer_cast<Node>(big)->loc = Loc{o.file, 1, 8, 7};
    o.emit("x", {}, {{"big", big}});
    EXPECT_EQ(o.run(), 1);
    EXPECT_EQ(o.diags.rfind("prog.trl:1:8: error: i32 overflow in multiplication (result "
                            "4294967296 is outside [-2147483648, 2147483647])\n",
                            0),
              0u)
        << o.diags;
}

TEST(InterpEval, SoftmaxIsStableAndNormalised) {
    Builder b;
    Type v3 = ty(DType::F32, {3});
    b.emit("x", {},
           {{"sm", builtin(BuiltinOp::Softmax, v3, {arr({1, 2, 3})})},
            {"big", builtin(BuiltinOp::Softmax, ty(DType::F32, {2}), {arr({1000, 1000})})},
            {"lsm", builtin(BuiltinOp::LogSoftmax, v3, {arr({1, 2, 3})})},
            {"lse", builtin(BuiltinOp::Logsumexp, ty(DType::F32), {arr({1000, 1000})})},
            {"am", builtin(BuiltinOp::Argmax, ty(DType::I32), {arr({1, 3, 3, 2})})}});
    ASSERT_EQ(b.run(), 0) << b.diags;
    auto rows = parse(b);
    double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
    for (int i = 0; i < 3; ++i) {
        EXPECT_NEAR(rows[0]["sm"][i].get<double>(), std::exp(i + 1.0) / z, 1e-6);
        EXPECT_NEAR(rows[0]["lsm"][i].get<double>(), (i + 1.0) - std::log(z), 1e-6);
    }
    EXPECT_EQ(rows[0]["big"][0].get<double>(), 0.5);
    EXPECT_NEAR(rows[0]["lse"].get<double>(), 1000 + std::log(2.0), 1e-3);
    EXPECT_EQ(rows[0]["am"].get<int>(), 1);  // the first of the maxima
}

TEST(InterpEval, MatmulShapes) {
    Builder b;
    auto m = node(NodeKind::Const, ty(DType::F32, {2, 3}));
    std::const_pointer_cast<Node>(std::static_pointer_cast<const Node>(m));
    m->data = {1, 2, 3, 4, 5, 6};
    NodePtr M = m;
    b.emit("x", {},
           {{"mv", builtin(BuiltinOp::MatMul, ty(DType::F32, {2}), {M, arr({1, 0, -1})})},
            {"vm", builtin(BuiltinOp::MatMul, ty(DType::F32, {3}), {arr({1, 1}), M})},
            {"mt", builtin(BuiltinOp::MatMul, ty(DType::F32, {2, 2}),
                           {M, builtin(BuiltinOp::Transpose, ty(DType::F32, {3, 2}), {M})})}});
    ASSERT_EQ(b.run(), 0) << b.diags;
    EXPECT_EQ(b.out, "{\"mv\":[-2.0,-2.0],\"vm\":[5.0,7.0,9.0],\"mt\":[[14.0,32.0],[32.0,77.0]]}\n");
}

TEST(InterpEval, GatherAndSpatialIndexing) {
    Builder b;
    NodePtr x = arr({10, 11, 12, 13});
    auto idx = arr({3, -1, 0}, DType::I32);
    auto g = node(NodeKind::Index, ty(DType::F32, {3}), {x, idx});
    SpatialIndex si;
    si.value = idx;
    g->sindex = {si};
    auto neg = node(NodeKind::Index, ty(DType::F32), {x, cst(-2, DType::I32)});
    SpatialIndex s2;
    s2.value = cst(-2, DType::I32);
    neg->sindex = {s2};
    auto sl = node(NodeKind::Index, ty(DType::F32, {2}), {x});
    SpatialIndex s3;
    s3.kind = SpatialIndex::Slice;
    s3.lo = aff(1);
    s3.hi = aff(-1);
    sl->sindex = {s3};
    auto take = builtin(BuiltinOp::Gather, ty(DType::F32, {2}), {x, arr({2, 1}, DType::I32)});
    auto oh = builtin(BuiltinOp::OneHot, ty(DType::F32, {2, 3}), {arr({2, 0}, DType::I32)});
    std::const_pointer_cast<Node>(oh)->int_attr = 3;
    b.emit("x", {}, {{"g", g}, {"neg", neg}, {"sl", sl}, {"take", take}, {"oh", oh}});
    ASSERT_EQ(b.run(), 0) << b.diags;
    EXPECT_EQ(b.out, "{\"g\":[13.0,13.0,10.0],\"neg\":12.0,\"sl\":[11.0,12.0],\"take\":[12.0,11.0],"
                     "\"oh\":[[0.0,0.0,1.0],[1.0,0.0,0.0]]}\n");

    Builder e;
    auto bad = node(NodeKind::Index, ty(DType::F32), {x, cst(4, DType::I32)});
    SpatialIndex s4;
    s4.value = cst(4, DType::I32);
    bad->sindex = {s4};
    bad->loc = Loc{e.file, 2, 8, 6};
    e.emit("x", {}, {{"bad", bad}});
    EXPECT_EQ(e.run(), 1);
    EXPECT_EQ(e.diags.rfind("prog.trl:2:8: error: index 4 is out of bounds for axis 0 with size 4\n", 0), 0u)
        << e.diags;
}

TEST(InterpEval, CumsumAndDiscountedCumsum) {
    Builder b;
    Type v = ty(DType::F64, {3});
    b.emit("x", {},
           {{"c", builtin(BuiltinOp::Cumsum, v, {arr({1, 2, 3}, DType::F64)}, {0}, true)},
            {"d",
             builtin(BuiltinOp::DiscountedCumsum, v, {arr({1, 2, 3}, DType::F64), cst(0.5, DType::F64)}, {0}, true)}});
    ASSERT_EQ(b.run(), 0) << b.diags;
    // d[2] = 3, d[1] = 2 + 1.5 = 3.5, d[0] = 1 + 1.75 = 2.75
    EXPECT_EQ(b.out, "{\"c\":[1.0,3.0,6.0],\"d\":[2.75,3.5,3.0]}\n");
}

TEST(InterpEval, CycleIsARuntimeError) {
    Builder b;
    int t = b.dim("t", 4);
    int x = b.tensor("x", {t}, ty(DType::F32));
    b.eq(x, {t}, {pv(0)},
         bin(BinaryOp::Add, read(x, ty(DType::F32), {pt(var(0))}, Loc{b.file, 1, 8, 4}), cst(1), DType::F32));
    b.emit("e", {t}, {{"x", read(x, ty(DType::F32), {pt(var(0))})}});
    EXPECT_EQ(b.run(), 1);
    EXPECT_EQ(b.diags.rfind("prog.trl:1:8: error: x at t = 0 depends on itself (a dependence cycle)\n"
                            "x[t] = x[t] + 1\n"
                            "       ^~~~\n"
                            "prog.trl:1:1: note: x is defined here\n",
                            0),
              0u)
        << b.diags;
}

TEST(InterpEval, ReadPastTheDefinedPointsIsARuntimeError) {
    Builder b;
    int t = b.dim("t", 4);
    int x = b.tensor("x", {t}, ty(DType::F32));
    int y = b.tensor("y", {t}, ty(DType::F32));
    b.eq(x, {t}, {pv(0)}, castn(coord(0), DType::F32));
    b.eq(y, {t}, {pv(0)}, read(x, ty(DType::F32), {pt(var(0, 1))}, Loc{b.file, 2, 8, 6}));
    b.emit("e", {t}, {{"y", read(y, ty(DType::F32), {pt(var(0))})}});
    EXPECT_EQ(b.run(), 1);
    EXPECT_EQ(b.lines().size(), 3u);  // t = 0, 1, 2 were emitted before the failure
    EXPECT_EQ(b.diags.rfind("prog.trl:2:8: error: x is not defined at t = 4 (no equation of x "
                            "matches this point)\n",
                            0),
              0u)
        << b.diags;
}

TEST(InterpEval, ShiftPatternDefinesPointsPastTheBound) {
    // x[0] = 0; x[t+1] = x[t] + 1 with t < 3 defines x[0..3]; emit reads x[3] = x[T].
    Builder b;
    int t = b.dim("t", 3);
    Type i32 = ty(DType::I32);
    int x = b.tensor("x", {t}, i32);
    b.eq(x, {}, {pc(0)}, cst(0, DType::I32));
    b.eq(x, {t}, {ps(0, 1)}, bin(BinaryOp::Add, read(x, i32, {pt(var(0))}), cst(1, DType::I32), DType::I32));
    Type all = i32;
    all.shape.push_back(Extent{4, nullptr});
    b.emit("e", {}, {{"last", read(x, i32, {pt(aff(3))})}, {"all", read(x, all, {sl(aff(0), aff(4))})}});
    ASSERT_EQ(b.run(), 0) << b.diags;
    EXPECT_EQ(b.out, "{\"last\":3,\"all\":[0,1,2,3]}\n");
}

TEST(InterpEval, UndefinedPointIsARuntimeError) {
    Builder b;
    int t = b.dim("t", 4);
    int x = b.tensor("x", {t}, ty(DType::F32));
    b.eq(x, {}, {pc(0)}, cst(1));  // only x[0] is defined
    b.emit("e", {t}, {{"x", read(x, ty(DType::F32), {pt(var(0))}, Loc{b.file, 2, 8, 6})}});
    EXPECT_EQ(b.run(), 1);
    EXPECT_EQ(b.out, "{\"x\":1.0}\n");
    EXPECT_EQ(b.diags.rfind("prog.trl:2:8: error: x is not defined at t = 1 (no equation of x "
                            "matches this point)\n",
                            0),
              0u)
        << b.diags;
}

TEST(InterpEval, GuardsAndSpecificity) {
    // x[t] = 100 when t < 2; x[t] = t otherwise; x[3] = -1 (most specific wins).
    Builder b;
    int t = b.dim("t", 5);
    int x = b.tensor("x", {t}, ty(DType::I32));
    auto lt = std::make_shared<Guard>();
    lt->kind = Guard::Cmp;
    lt->cmp = BinaryOp::Lt;
    lt->lhs.coef = {1};
    lt->rhs.constant = 2;
    auto other = std::make_shared<Guard>();
    other->kind = Guard::Not;
    other->a = lt;
    b.eq(x, {t}, {pv(0)}, cst(100, DType::I32), lt);
    b.eq(x, {t}, {pv(0)}, coord(0), other);
    b.eq(x, {}, {pc(3)}, cst(-1, DType::I32));
    b.emit("e", {t}, {{"x", read(x, ty(DType::I32), {pt(var(0))})}});
    ASSERT_EQ(b.run(), 0) << b.diags;
    EXPECT_EQ(b.out, "{\"x\":100}\n{\"x\":100}\n{\"x\":2}\n{\"x\":-1}\n{\"x\":4}\n");
}

TEST(InterpEval, EmitsRunInOrderWithLexicographicPoints) {
    Builder b;
    int i = b.dim("i", 2), j = b.dim("j", 3);
    b.emit("a", {i, j}, {{"i", coord(0)}, {"j", coord(1)}});
    b.emit("b", {}, {{"done", cst(1, DType::Bool)}});
    ASSERT_EQ(b.run(), 0) << b.diags;
    EXPECT_EQ(b.out, "{\"i\":0,\"j\":0}\n{\"i\":0,\"j\":1}\n{\"i\":0,\"j\":2}\n"
                     "{\"i\":1,\"j\":0}\n{\"i\":1,\"j\":1}\n{\"i\":1,\"j\":2}\n{\"done\":true}\n");
}

TEST(InterpEval, SpecialFloatsPrintAsPythonJson) {
    Builder b;
    b.emit("x", {},
           {{"n", un(UnaryOp::Log, cst(-1), DType::F32)},
            {"inf", bin(BinaryOp::Div, cst(1), cst(0), DType::F32)},
            {"ninf", un(UnaryOp::Log, cst(0, DType::F64), DType::F64)},
            {"tiny", cst(1e-30)}});
    ASSERT_EQ(b.run(), 0) << b.diags;
    EXPECT_EQ(b.out, "{\"n\":NaN,\"inf\":Infinity,\"ninf\":-Infinity,\"tiny\":1e-30}\n");
}

}  // namespace
}  // namespace trlc::interp_test
