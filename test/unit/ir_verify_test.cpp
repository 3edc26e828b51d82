// ir::verify on programs broken by hand: a well-formed program from sema has no violation; each
// test breaks one invariant of ir/verify.h and expects the message that names it.  The last
// test runs the pipeline on a program made malformed between passes and expects the internal
// error to name the pass after which the verifier ran.
#include <gtest/gtest.h>

#include <sstream>

#include "driver/pipeline.h"
#include "frontend/parser.h"
#include "ir/printer.h"
#include "ir/verify.h"
#include "sema/sema.h"
#include "support/diagnostics.h"

namespace trlc {
namespace {

const char *kProgram = "dim b < B = 2\n"
                       "dim t < T = 4\n"
                       "x[b, 0] = f32(b)\n"
                       "x[b, t+1] = x[b, t] * 2.0 when t < 2\n"
                       "x[b, t+1] = x[b, t] otherwise\n"
                       "y[t] = (x[0, t], t)\n"
                       "emit \"x\"[b, t] { x: x[b, t], y: y[t][1] }\n";

ir::Program program(const std::string &text = kProgram) {
    SourceManager sm;
    std::ostringstream err;
    Diagnostics diag(sm, err);
    int file = sm.add("test.trl", text);
    ast::Module m = parse(sm, file, diag);
    std::optional<ir::Program> p = analyze(m, sm, diag, SemaOptions());
    EXPECT_TRUE(p && !diag.has_errors()) << err.str();
    return p ? std::move(*p) : ir::Program();
}

/** A copy of "n" that "edit" may change (nodes are immutable and shared). */
ir::NodePtr edited(const ir::NodePtr &n, const std::function<void(ir::Node &)> &edit) {
    auto c = std::make_shared<ir::Node>(*n);
    edit(*c);
    return c;
}

std::string only_violation(const ir::Program &p, const ir::VerifyOptions &o = {}) {
    std::vector<std::string> v = ir::verify(p, o);
    EXPECT_EQ(v.size(), 1u) << (v.empty() ? "" : v[0] + (v.size() > 1 ? " | " + v[1] : ""));
    return v.empty() ? "" : v[0];
}

ir::Equation &eq(ir::Program &p, const std::string &tensor, size_t k) {
    return p.tensors.at(p.tensor_index(tensor)).equations.at(k);
}

TEST(IrVerify, WellFormedProgramHasNoViolation) {
    ir::Program p = program();
    EXPECT_EQ(ir::verify(p), std::vector<std::string>());
    ir::VerifyOptions after_autodiff;
    after_autodiff.allow_grad = false;
    EXPECT_EQ(ir::verify(p, after_autodiff), std::vector<std::string>());
}

TEST(IrVerify, PatternArityIsTensorRank) {
    ir::Program p = program();
    eq(p, "x", 0).pattern.pop_back();
    EXPECT_EQ(only_violation(p), "tensor x, equation 1 (x[b]): the pattern has 1 positions for 2 dims");
}

TEST(IrVerify, PatternVariableIsTheTensorsDim) {
    ir::Program p = program();
    std::swap(eq(p, "x", 1).pattern[0], eq(p, "x", 1).pattern[1]);
    std::string v = ir::verify(p).at(0);
    EXPECT_NE(v.find("pattern position 1 binds t, not the tensor's dim there"), std::string::npos) << v;
}

TEST(IrVerify, ReadIndexCountIsRank) {
    ir::Program p = program();
    ir::Equation &e = eq(p, "x", 1);  // x[b, t] * 2.0
    ir::NodePtr read = e.body->args[0];
    ASSERT_EQ(read->kind, ir::NodeKind::Read);
    ir::NodePtr bad = edited(read, [](ir::Node &n) { n.index.pop_back(); });
    e.body = edited(e.body, [&](ir::Node &n) { n.args[0] = bad; });
    EXPECT_EQ(only_violation(p), "tensor x, equation 2 (x[b, t+1]): a read of x with 1 indices for its 2 dims: x[b]");
}

TEST(IrVerify, ReadTensorInRange) {
    ir::Program p = program();
    ir::Equation &e = eq(p, "x", 2);  // x[b, t]
    e.body = edited(e.body, [](ir::Node &n) { n.tensor = 7; });
    EXPECT_EQ(only_violation(p), "tensor x, equation 3 (x[b, t+1]): a read of tensor index 7 of 2: <tensor 7>[b, t]");
}

TEST(IrVerify, CoordinateVariableInRange) {
    ir::Program p = program();
    ir::Equation &e = eq(p, "x", 0);  // f32(b)
    ir::NodePtr coord = e.body->args[0];
    ASSERT_EQ(coord->kind, ir::NodeKind::Coord);
    e.body = edited(e.body, [&](ir::Node &n) { n.args[0] = edited(coord, [](ir::Node &c) { c.var = 5; }); });
    std::string v = ir::verify(p).at(0);
    EXPECT_EQ(v, "tensor x, equation 1 (x[b, 0]): variable 5 of 1: <var 5>");
}

TEST(IrVerify, AffineUsesOnlyBoundVariables) {
    ir::Program p = program();
    ir::Equation &e = eq(p, "x", 2);
    e.body = edited(e.body, [](ir::Node &n) {
        auto idx = std::make_shared<ir::IndexExpr>(*n.index[1].point);
        idx->aff.coef.resize(4, 0);
        idx->aff.coef[3] = 1;
        n.index[1].point = idx;
    });
    std::string v = only_violation(p);
    EXPECT_NE(v.find("an index uses variable 3 of 2"), std::string::npos) << v;
}

TEST(IrVerify, ComparisonGivesBool) {
    ir::Program p = program("dim t < T = 3\n"
                            "z[t] = where(t < 2, 1.0, 0.0)\n");
    ir::Equation &e = eq(p, "z", 0);
    ir::NodePtr cmp = e.body->args[0];
    ASSERT_EQ(cmp->kind, ir::NodeKind::Binary);
    e.body = edited(e.body,
                    [&](ir::Node &n) { n.args[0] = edited(cmp, [](ir::Node &c) { c.type.dtype = ir::DType::I32; }); });
    std::vector<std::string> v = ir::verify(p);
    ASSERT_EQ(v.size(), 2u);  // the comparison, and where's condition
    EXPECT_EQ(v[0], "tensor z, equation 1 (z[t]): < gives i32: t < 2");
    EXPECT_EQ(v[1], "tensor z, equation 1 (z[t]): the condition is i32: where(t < 2, 1.0, 0.0)");
}

TEST(IrVerify, BodyHasTheTensorsType) {
    ir::Program p = program();
    p.tensors.at(p.tensor_index("x")).type.dtype = ir::DType::F64;
    std::vector<std::string> v = ir::verify(p);
    ASSERT_GE(v.size(), 3u);  // each of x's three equations, then its readers
    EXPECT_EQ(v[0], "tensor x, equation 1 (x[b, 0]): the body's type f32 is not the tensor's f64 (f32 vs f64)");
}

TEST(IrVerify, LiteralHasOneValuePerElement) {
    ir::Program p = program();
    ir::Equation &e = eq(p, "x", 1);  // x[b, t] * 2.0
    ir::NodePtr lit = e.body->args[1];
    ASSERT_EQ(lit->kind, ir::NodeKind::Const);
    e.body = edited(e.body, [&](ir::Node &n) { n.args[1] = edited(lit, [](ir::Node &c) { c.data.push_back(3.0); }); });
    std::string v = only_violation(p);
    EXPECT_NE(v.find("a literal of type f32 with 2 values"), std::string::npos) << v;
}

TEST(IrVerify, TupleGetInRange) {
    ir::Program p = program();
    ir::Emit &em = p.emits.at(0);
    em.fields[1].second = edited(em.fields[1].second, [](ir::Node &n) { n.int_attr = 2; });
    EXPECT_EQ(only_violation(p), "emit \"x\": element 2 of (f32, i32): y[t].2");
}

TEST(IrVerify, NoGradAfterAutodiff) {
    ir::Program p = program("dim i < I = 2\n"
                            "w[0] = 1.5\n"
                            "loss[i] = w[i] * w[i]\n"
                            "w[i+1] = w[i] - 0.1 * grad(loss[i], w[i])\n");
    EXPECT_EQ(ir::verify(p), std::vector<std::string>());  // before autodiff: allowed
    ir::VerifyOptions after;
    after.allow_grad = false;
    EXPECT_EQ(only_violation(p, after),
              "tensor w, equation 2 (w[i+1]): grad() is still there after autodiff: grad(loss[i], w[i])");
}

TEST(IrVerify, OperandCountPerKind) {
    ir::Program p = program();
    ir::Equation &e = eq(p, "x", 1);
    e.body = edited(e.body, [](ir::Node &n) { n.args.pop_back(); });
    std::string v = ir::verify(p).at(0);
    EXPECT_EQ(v, "tensor x, equation 2 (x[b, t+1]): 1 operands where 2 are needed: *(x[b, t])");
}

/* The pipeline names the pass after which the IR was found malformed: sema's program is broken
 * between sema and autodiff (which leaves a program without grad unchanged), so the verifier
 * after autodiff reports it. */
TEST(IrVerify, PipelineNamesThePass) {
    DriverOptions opts;
    opts.input = "verify-test.trl";
    SourceManager sm;
    std::ostringstream err;
    Diagnostics diag(sm, err);
    sm.add("verify-test.trl", kProgram);
    PipelineState s(opts, sm, diag);
    s.file = 0;
    // Run parse by hand (the file is in memory), then sema through the runner.
    s.module = parse(sm, 0, diag);
    s.next = stage_index("sema");
    ASSERT_EQ(run_pipeline(s, "sema"), 0) << err.str();
    eq(s.prog, "x", 0).pattern.pop_back();
    try {
        run_pipeline(s, "autodiff");
        FAIL() << "no internal error";
    } catch (const InternalError &e) {
        EXPECT_EQ(e.message, "the IR verifier failed after pass 'autodiff': tensor x, equation 1 (x[b]): the "
                             "pattern has 1 positions for 2 dims");
    }
}

}  // namespace
}  // namespace trlc
