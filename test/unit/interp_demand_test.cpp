// On-demand evaluation on a heap work stack (interp/demand.cpp): chains deeper than any stack,
// run on a 256 KiB thread; the first error, cycle and undefined point of a deep chain are those
// of the depth-first recursion; the read lists follow eval()'s order; the suspend-and-rerun
// fallback alone gives the same values and errors.
#include <gtest/gtest.h>
#include <pthread.h>

#include <cmath>
#include <functional>

#include "interp/eval.h"
#include "interp_builder.h"

namespace trlc::interp_test {
namespace {

// ret[T-1] = 1 (unless no_base); ret[t] = 1 + 0.5 * ret[t+1] (read at line 2, col 8).
Builder chain(int64_t T, bool no_base = false) {
    Builder b;
    int t = b.dim("t", T);
    Type f64 = ty(DType::F64);
    int ret = b.tensor("ret", {t}, f64);
    if (!no_base) b.eq(ret, {}, {pc(T - 1)}, cst(1.0, DType::F64));
    b.eq(
        ret, {t}, {pv(0)},
        bin(BinaryOp::Add, cst(1.0, DType::F64),
            bin(BinaryOp::Mul, cst(0.5, DType::F64), read(ret, f64, {pt(var(0, 1))}, Loc{b.file, 2, 8, 6}), DType::F64),
            DType::F64));
    b.emit("first", {}, {{"ret0", read(ret, f64, {pt(aff(0))})}});
    return b;
}

/** Run "fn" on a thread with a "kib" KiB stack (pthread; the test fails if it cannot start). */
void on_small_stack(size_t kib, const std::function<void()> &fn) {
    pthread_attr_t attr;
    ASSERT_EQ(pthread_attr_init(&attr), 0);
    ASSERT_EQ(pthread_attr_setstacksize(&attr, kib << 10), 0);
    pthread_t th;
    auto body = [](void *p) -> void * {
        (*static_cast<const std::function<void()> *>(p))();
        return nullptr;
    };
    ASSERT_EQ(pthread_create(&th, &attr, body, const_cast<std::function<void()> *>(&fn)), 0);
    pthread_attr_destroy(&attr);
    pthread_join(th, nullptr);
}

TEST(InterpDemand, ChainOf100000OnA256KiBStack) {
    // The recursion needed ~4 KiB of stack per point (2 GiB overflowed between T = 400000 and
    // 600000): 100000 points on 256 KiB can only work without it.  2 - 2^(1-T) rounds to 2.
    const int64_t T = 100000;
    Builder b = chain(T);
    std::shared_ptr<const interp::Value> v;
    int64_t points = 0, pending = 0, mismatches = -1;
    on_small_stack(256, [&] {
        interp::Evaluator ev(b.p, 0);
        v = ev.tensor_point(0, {0}, Loc{});
        points = ev.points_evaluated();
        pending = ev.max_pending();
        mismatches = ev.read_order_mismatches();
    });
    ASSERT_TRUE(v);
    EXPECT_EQ(v->data.at(0), 2.0);
    EXPECT_EQ(points, T);   // each point computed once
    EXPECT_EQ(pending, T);  // ret[0] … ret[T-1] were pending at once, on the heap
    EXPECT_EQ(mismatches, 0);
}

TEST(InterpDemand, SuspendFallbackAloneGivesTheSameValue) {
    const int64_t T = 20000;
    Builder b = chain(T);
    on_small_stack(256, [&] {
        interp::Evaluator ev(b.p, 0);
        ev.set_prefetch(false);
        EXPECT_EQ(ev.tensor_point(0, {0}, Loc{})->data.at(0), 2.0);
        EXPECT_EQ(ev.points_evaluated(), T);
        EXPECT_EQ(ev.max_pending(), T);
    });
}

TEST(InterpDemand, UndefinedPointAtTheEndOfADeepChain) {
    // No base case: ret[T-1] reads ret[T], which no equation defines; the error is at that
    // Read, as the recursion reported it, and the run stops there.
    // (An error climbs back one frame per point, each a C++ exception: T is kept small.)
    Builder b = chain(20000, /*no_base=*/true);
    on_small_stack(256, [&] { EXPECT_EQ(b.run(), 1); });
    EXPECT_EQ(b.out, "");
    EXPECT_EQ(b.diags.rfind("prog.trl:2:8: error: ret is not defined at t = 20000 (no equation "
                            "of ret matches this point)\n",
                            0),
              0u)
        << b.diags;
}

TEST(InterpDemand, CycleAtTheEndOfADeepChain) {
    // ret[T-1] = ret[0] (read at 1:8) closes the chain into a cycle: the recursion reached
    // ret[0] while it was pending, 20000 calls deep.
    const int64_t T = 20000;
    Builder b;
    int t = b.dim("t", T);
    Type f64 = ty(DType::F64);
    int ret = b.tensor("ret", {t}, f64);
    b.eq(ret, {}, {pc(T - 1)}, read(ret, f64, {pt(aff(0))}, Loc{b.file, 1, 8, 4}));
    b.eq(ret, {t}, {pv(0)}, bin(BinaryOp::Add, cst(1.0, DType::F64), read(ret, f64, {pt(var(0, 1))}), DType::F64));
    b.emit("first", {}, {{"ret0", read(ret, f64, {pt(aff(0))})}});
    for (bool prefetch : {true, false})
        on_small_stack(256, [&] {
            interp::Evaluator ev(b.p, 0);
            ev.set_prefetch(prefetch);
            try {
                ev.tensor_point(ret, {0}, Loc{});
                ADD_FAILURE() << "no error";
            } catch (const interp::RuntimeError &e) {
                EXPECT_EQ(e.loc.line, 1);
                EXPECT_EQ(e.loc.col, 8);
                EXPECT_EQ(e.message, "ret at t = 0 depends on itself (a dependence cycle)");
            }
            // Nothing stays pending after the error: asking again gives the same error.
            EXPECT_THROW(ev.tensor_point(ret, {5}, Loc{}), interp::RuntimeError);
        });
}

// y[t] = first + second; "bad" is an i32 cast of NaN (an error at 3:1), z[t] an i32 cast of
// infinity (an error at 4:1).  The recursion evaluates the operands left to right, so the first
// error is that of the left operand even though z's point is computed ahead of y's body.
std::string first_error(bool bad_first, bool prefetch) {
    Builder b;
    int t = b.dim("t", 3);
    Type i32 = ty(DType::I32);
    int z = b.tensor("z", {t}, i32);
    int y = b.tensor("y", {t}, i32);
    auto nan_cast = node(NodeKind::Cast, i32, {cst(std::nan(""), DType::F64)});
    nan_cast->loc = Loc{b.file, 3, 1, 1};
    auto inf_cast = node(NodeKind::Cast, i32, {cst(INFINITY, DType::F64)});
    inf_cast->loc = Loc{b.file, 4, 1, 1};
    b.eq(z, {t}, {pv(0)}, inf_cast);
    NodePtr zr = read(z, i32, {pt(var(0))});
    b.eq(y, {t}, {pv(0)},
         bad_first ? bin(BinaryOp::Add, nan_cast, zr, DType::I32) : bin(BinaryOp::Add, zr, nan_cast, DType::I32));
    interp::Evaluator ev(b.p, 0);
    ev.set_prefetch(prefetch);
    try {
        ev.tensor_point(y, {1}, Loc{});
    } catch (const interp::RuntimeError &e) {
        return std::to_string(e.loc.line) + ":" + std::to_string(e.loc.col);
    }
    return "no error";
}

TEST(InterpDemand, FirstErrorIsTheRecursionsFirstError) {
    for (bool prefetch : {true, false}) {
        EXPECT_EQ(first_error(/*bad_first=*/true, prefetch), "3:1") << prefetch;
        EXPECT_EQ(first_error(/*bad_first=*/false, prefetch), "4:1") << prefetch;
    }
}

TEST(InterpDemand, ReadListsFollowTheEvaluationOrder) {
    // a..e[t] = t + k; s[t] = clamp(where(a > b, c, d), a, e) - sum(c[0:t+1]) + sum(stack(d, b)):
    // Reads under binary, where, builtins of 1, 2 and 3 arguments and a slice, checked by eval.
    const int64_t T = 6;
    Builder b;
    int t = b.dim("t", T);
    Type f32 = ty(DType::F32);
    std::vector<int> src;
    for (int k = 0; k < 5; ++k) {
        src.push_back(b.tensor(std::string(1, static_cast<char>('a' + k)), {t}, f32));
        b.eq(src.back(), {t}, {pv(0)}, bin(BinaryOp::Add, castn(coord(0), DType::F32), cst(k), DType::F32));
    }
    auto rd = [&](int k) { return read(src[k], f32, {pt(var(0))}); };
    Type win = f32;
    win.shape.push_back(Extent{T, aff(1, {1})});
    int s = b.tensor("s", {t}, f32);
    NodePtr cond = bin(BinaryOp::Gt, rd(0), rd(1), DType::Bool);
    auto where = node(NodeKind::Where, f32, {cond, rd(2), rd(3)});
    NodePtr clamp = builtin(BuiltinOp::Clamp, f32, {where, rd(0), rd(4)});
    NodePtr window = builtin(BuiltinOp::Sum, f32, {read(src[2], win, {sl(aff(0), var(0, 1))})});
    Type pair = f32;
    pair.shape.push_back(Extent{2, nullptr});
    NodePtr cat = builtin(BuiltinOp::Stack, pair, {rd(3), rd(1)}, {0}, true);
    NodePtr csum = builtin(BuiltinOp::Sum, f32, {cat});
    b.eq(s, {t}, {pv(0)}, bin(BinaryOp::Add, bin(BinaryOp::Sub, clamp, window, DType::F32), csum, DType::F32));
    interp::Evaluator ev(b.p, 0);
    for (int64_t i = 0; i < T; ++i) {
        // where(a > b, c, d) = d = t+3 (a < b); clamp(t+3, t, t+4) = t+3;
        // window = sum_{k<=t} (k+2); stack(d, b) sums to 2t+4.
        double window_sum = 0;
        for (int64_t k = 0; k <= i; ++k) window_sum += static_cast<double>(k + 2);
        const double want = static_cast<double>(i + 3) - window_sum + static_cast<double>(2 * i + 4);
        EXPECT_EQ(ev.tensor_point(s, {i}, Loc{})->data.at(0), want) << "t = " << i;
    }
    EXPECT_EQ(ev.read_order_mismatches(), 0);
    EXPECT_EQ(ev.points_evaluated(), 5 * T + T);
}

}  // namespace
}  // namespace trlc::interp_test
