// The exact transitive closure used when isl's own closure is only an over-approximation
// (no_zero_cycle): checked against closures worked out by hand on small finite relations.
#include <gtest/gtest.h>

#include <isl/union_map.h>

#include "checks/checks.h"
#include "pdg/pdg_impl.h"

namespace trlc {
namespace {

isl::union_map closure(const isl::ctx &ctx, const char *text, bool *isl_exact) {
    isl::union_map r(ctx, text);
    isl_bool exact = isl_bool_false;
    isl::union_map approx = isl::manage(isl_union_map_transitive_closure(r.copy(), &exact));
    *isl_exact = exact == isl_bool_true;
    isl::union_map out;
    EXPECT_TRUE(exact_transitive_closure(r, &out, kCycleCheckOperations));
    EXPECT_TRUE(out.is_subset(approx));  // isl's closure over-approximates, never misses
    return out;
}

TEST(PdgClosure, DoublingChainIsExactAndAcyclic) {
    IslContext isl;
    bool isl_exact = true;
    // 0 -> 1 -> 3 -> 7 and 1 -> 3 ... : x[t] reads x[2t+1] for t <= 3.
    isl::union_map c = closure(isl.ctx(), "{ x[t] -> x[u] : u = 2t + 1 and 0 <= t <= 3 }", &isl_exact);
    EXPECT_FALSE(isl_exact);  // the case the fallback exists for
    isl::union_map expected(isl.ctx(), "{ x[0] -> x[1]; x[0] -> x[3]; x[0] -> x[7]; x[1] -> x[3]; x[1] -> x[7];"
                                       "  x[2] -> x[5]; x[3] -> x[7] }");
    EXPECT_TRUE(c.is_equal(expected)) << c;
    EXPECT_TRUE(c.intersect(c.domain().unite(c.range()).identity()).is_empty());
}

TEST(PdgClosure, ReflectionHasTwoCycles) {
    IslContext isl;
    bool isl_exact = true;
    isl::union_map c = closure(isl.ctx(), "{ x[t] -> x[u] : u = 7 - t and 0 <= t <= 7 }", &isl_exact);
    // t -> 7-t -> t: every point is on a cycle of length 2.
    isl::union_map expected(isl.ctx(), "{ x[t] -> x[u] : 0 <= t <= 7 and (u = t or u = 7 - t) }");
    EXPECT_TRUE(c.is_equal(expected)) << c;
}

TEST(PdgClosure, LongChainConverges) {
    IslContext isl;
    bool isl_exact = false;
    isl::union_map c = closure(isl.ctx(), "{ x[t] -> x[u] : u = t - 1 and 1 <= t <= 100000 }", &isl_exact);
    isl::union_map expected(isl.ctx(), "{ x[t] -> x[u] : 0 <= u < t <= 100000 }");
    EXPECT_TRUE(c.is_equal(expected)) << c;
}

// The cycle check's early stop: squaring ends at the first round whose C meets the identity, so
// of a ring of 8 (cycles of length 8) and a self-loop (length 1) only the self-loop is in C: C
// after round 0 is R itself.  The ring's points first meet the identity after round 3 (paths
// of up to 8 steps).
TEST(PdgClosure, StopsAtTheFirstRoundThatClosesACycle) {
    IslContext isl;
    isl::union_map r(isl.ctx(), "{ x[t] -> x[u] : u = t + 1 and 0 <= t <= 6; x[7] -> x[0]; y[0] -> y[0] }");
    isl::union_map id = r.domain().unite(r.range()).identity();
    auto cycle = [&](const isl::union_map &m) { return !m.intersect(id).is_empty(); };
    isl::union_map c;
    ASSERT_TRUE(exact_transitive_closure(r, &c, kCycleCheckOperations, cycle));
    EXPECT_TRUE(c.is_equal(r)) << c;
    EXPECT_TRUE(c.intersect(id).is_equal(isl::union_map(isl.ctx(), "{ y[0] -> y[0] }")));

    isl::union_map ring(isl.ctx(), "{ x[t] -> x[u] : u = t + 1 and 0 <= t <= 6; x[7] -> x[0] }");
    ASSERT_TRUE(exact_transitive_closure(ring, &c, kCycleCheckOperations, cycle));
    isl::union_map all(isl.ctx(), "{ x[t] -> x[u] : 0 <= t <= 7 and 0 <= u <= 7 }");
    EXPECT_TRUE(c.is_equal(all)) << c;  // every point reaches every point in at most 8 steps
}

// Past its operation budget the closure reports failure (the check then warns) and leaves the
// context usable.
TEST(PdgClosure, OverBudgetFailsAndRecovers) {
    IslContext isl;
    isl::union_map r(isl.ctx(), "{ x[t] -> x[u] : u = t - 1 and 1 <= t <= 100000 }");
    isl::union_map c;
    EXPECT_FALSE(exact_transitive_closure(r, &c, 1));
    ASSERT_TRUE(exact_transitive_closure(r, &c, kCycleCheckOperations));
    EXPECT_TRUE(c.is_equal(isl::union_map(isl.ctx(), "{ x[t] -> x[u] : 0 <= u < t <= 100000 }")));
}

}  // namespace
}  // namespace trlc
