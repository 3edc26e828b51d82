// the vectorize pass on hand-written .trl programs: each part of the rule
// (patterns, guards, reads mapping the dim to itself, other uses of the dim in
// read indices, -fno-vectorize) decides one dim, and the reason names the fact.
#include <gtest/gtest.h>

#include <sstream>

#include "checks/checks.h"
#include "frontend/parser.h"
#include "passes/vectorize.h"
#include "pdg/pdg.h"
#include "sema/sema.h"
#include "support/diagnostics.h"

namespace trlc {
namespace {

/** Parse, analyze, build the PDG and run the checks on "text"; then decide. */
struct Decided {
    VectorizeDecision d;
    std::vector<std::string> dims;
    std::string errors;
    bool ok = false;
    bool batch(const std::string &dim) const {
        for (size_t k = 0; k < dims.size(); ++k)
            if (dims[k] == dim) return d.batch[k];
        ADD_FAILURE() << "no dim " << dim;
        return false;
    }
    std::string reason(const std::string &dim) const {
        for (size_t k = 0; k < dims.size(); ++k)
            if (dims[k] == dim) return d.reasons[k];
        return "?";
    }
};

Decided decide(const std::string &text, bool enabled = true) {
    Decided out;
    SourceManager sm;
    std::ostringstream err;
    Diagnostics diag(sm, err);
    int file = sm.add("test.trl", text);
    ast::Module m = parse(sm, file, diag);
    SemaOptions opts;
    std::optional<ir::Program> prog;
    if (!diag.has_errors()) prog = analyze(m, sm, diag, opts);
    if (prog && !diag.has_errors()) {
        Pdg pdg = build_pdg(*prog, diag);
        if (!diag.has_errors()) check_reads_defined(pdg, diag);
        if (!diag.has_errors()) check_no_zero_cycle(pdg, diag);
        if (!diag.has_errors()) {
            out.d = vectorize(*prog, pdg, enabled);
            for (const ir::Dim &d : prog->dims) out.dims.push_back(d.name);
            out.ok = true;
        }
    }
    out.errors = err.str();
    return out;
}

TEST(Vectorize, EnvDimOfARolloutIsBatched) {
    Decided r = decide("dim b < B = 4\ndim t < T = 8\n"
                       "x[b, 0] = f32(b)\n"
                       "x[b, t+1] = x[b, t] * 0.5\n");
    ASSERT_TRUE(r.ok) << r.errors;
    EXPECT_TRUE(r.batch("b"));
    EXPECT_FALSE(r.batch("t"));
    EXPECT_EQ(r.reason("t"), "the equation x[b, 0] at 3:1 fixes t to a constant");
}

TEST(Vectorize, ShiftedPatternIsCarried) {
    Decided r = decide("dim t < T = 4\nx[t] = 1.0 when t == 0\nx[t+1] = x[t] + 1.0\n");
    // The guard `t == 0` is found first (equation 0), then the shift.
    ASSERT_TRUE(r.ok) << r.errors;
    EXPECT_FALSE(r.batch("t"));
    EXPECT_EQ(r.reason("t"), "the guard of x[t] at 2:1 mentions t");
}

TEST(Vectorize, ReadAtAnotherPointIsCarried) {
    Decided r = decide("dim t < T = 4\nx[t] = f32(t)\ny[t] = x[min(t+1, 3)]\n");
    ASSERT_TRUE(r.ok) << r.errors;
    EXPECT_FALSE(r.batch("t"));
    EXPECT_EQ(r.reason("t"), "y[t] reads x[min(t+1, 3)] at 3:8 (t is not mapped to itself: carried dependence)");
}

TEST(Vectorize, WholeSliceByConsumerWithoutTheDimKeepsItBatched) {
    Decided r = decide("dim b < B = 4\nx[b] = f32(b)\ns = sum(x[0:B])\nfirst = x[0]\n");
    ASSERT_TRUE(r.ok) << r.errors;
    EXPECT_TRUE(r.batch("b"));  // s and first read the finished batch
}

TEST(Vectorize, SliceByConsumerWithTheDimIsNotBatched) {
    Decided r = decide("dim b < B = 4\nx[b] = f32(b)\ny[b] = x[b] - mean(x[0:B])\n");
    ASSERT_TRUE(r.ok) << r.errors;
    EXPECT_FALSE(r.batch("b"));
    EXPECT_EQ(r.reason("b"), "y[b] reads x[0:4] at 3:20 (a slice over b)");
}

TEST(Vectorize, DimUsedAsAnotherDimsIndexIsNotBatched) {
    Decided r = decide("dim b < B = 3\ndim k < K = 3\nw[k] = f32(k)\ny[b] = w[b]\n");
    ASSERT_TRUE(r.ok) << r.errors;
    EXPECT_FALSE(r.batch("b"));
    EXPECT_TRUE(r.batch("k"));
    EXPECT_EQ(r.reason("b"), "y[b] reads w[b] at 4:8 (b indexes w's dim k)");
}

TEST(Vectorize, CoordinateAsValueIsFine) {
    Decided r = decide("dim b < B = 4\nx[b] = uniform(rng(b), [2]) * f32(b)\n"
                       "emit \"x\"[b] { env: b, x: x[b] }\n");
    ASSERT_TRUE(r.ok) << r.errors;
    EXPECT_TRUE(r.batch("b"));
}

TEST(Vectorize, EmitReadsCount) {
    // The emit over t reads x at t+1: a consumer with t that does not map t to itself.
    Decided r = decide("dim t < T = 4\nx[t] = f32(t)\nemit \"e\"[t] { v: x[min(t+1, 3)] }\n");
    ASSERT_TRUE(r.ok) << r.errors;
    EXPECT_FALSE(r.batch("t"));
    EXPECT_EQ(r.reason("t").rfind("emit \"e\"[t] reads x[min(t+1, 3)]", 0), 0u) << r.reason("t");
}

TEST(Vectorize, LossAfterActingBatchesTime) {
    Decided r = decide("dim b < B = 2\ndim t < T = 8\n"
                       "obs[b, t] = normal(rng(b, t), [3])\n"
                       "logp[b, t] = -log(1.0 + exp(-sum(obs[b, t])))\n"
                       "loss = -mean(logp[0:B, 0:T])\n");
    ASSERT_TRUE(r.ok) << r.errors;
    EXPECT_TRUE(r.batch("b"));
    EXPECT_TRUE(r.batch("t"));
}

TEST(Vectorize, DisabledIsAllFalse) {
    Decided r = decide("dim b < B = 4\nx[b] = f32(b)\n", /*enabled=*/false);
    ASSERT_TRUE(r.ok) << r.errors;
    EXPECT_FALSE(r.batch("b"));
    EXPECT_EQ(r.reason("b"), "vectorization disabled (-fno-vectorize)");
}

TEST(Vectorize, DecisionText) {
    Decided r = decide("dim b < B = 2\ndim t < T = 3\nx[b, t] = 1.0\nx[b, 0] = 2.0\n");
    ASSERT_TRUE(r.ok) << r.errors;
    ir::Program p;
    p.dims.resize(2);
    p.dims[0].name = "b";
    p.dims[1].name = "t";
    EXPECT_EQ(vectorize_decision_to_string(p, r.d),
              "b: batch axis\nt: not a batch axis: the equation x[b, 0] at 4:1 fixes t to a "
              "constant\n");
}

}  // namespace
}  // namespace trlc
