// Unit tests of sema's IR: pattern classification, guards, tuple equations, weak literal
// re-typing, dynamic extents, let sharing, and the ir.cpp helpers.  Programs are parsed
// from strings (one test builds its AST by hand, to pin the AST → IR contract).
#include <gtest/gtest.h>

#include <sstream>

#include "frontend/parser.h"
#include "ir/ir.h"
#include "sema/sema.h"

namespace trlc {
namespace {

struct Compiled {
    SourceManager sm;
    std::ostringstream errors;
    std::optional<ir::Program> prog;
};

std::unique_ptr<Compiled> compile(const std::string &text, SemaOptions opts = {}) {
    auto c = std::make_unique<Compiled>();
    Diagnostics diag(c->sm, c->errors);
    int file = c->sm.add("test.trl", text);
    ast::Module m = parse(c->sm, file, diag);
    if (diag.has_errors()) return c;
    c->prog = analyze(m, c->sm, diag, opts);
    return c;
}

const ir::Tensor &tensor(const ir::Program &p, const std::string &name) {
    int k = p.tensor_index(name);
    EXPECT_GE(k, 0) << name;
    return p.tensors.at(k);
}

TEST(SemaPatterns, ConstantShiftAndVarPositions) {
    auto c = compile("dim t < T = 8\nrew[t] = 1.0\nret[T-1] = rew[T-1]\n"
                     "ret[t] = rew[t] + 0.9 * ret[t+1]\nh[0] = 0.0\nh[t+1] = h[t]\n");
    ASSERT_TRUE(c->prog) << c->errors.str();
    const ir::Tensor &ret = tensor(*c->prog, "ret");
    ASSERT_EQ(ret.equations.size(), 2u);
    const ir::Equation &last = ret.equations[0];
    ASSERT_EQ(last.pattern.size(), 1u);
    EXPECT_EQ(last.pattern[0].kind, ir::PatternItem::Constant);
    EXPECT_EQ(last.pattern[0].offset, 7);  // T - 1 with T = 8
    EXPECT_TRUE(last.vars.empty());
    EXPECT_EQ(last.specificity(), 2);
    const ir::Equation &step = ret.equations[1];
    EXPECT_EQ(step.pattern[0].kind, ir::PatternItem::Var);
    ASSERT_EQ(step.vars.size(), 1u);
    EXPECT_EQ(c->prog->dims[step.vars[0]].name, "t");
    const ir::Equation &shift = tensor(*c->prog, "h").equations[1];
    EXPECT_EQ(shift.pattern[0].kind, ir::PatternItem::Shift);
    EXPECT_EQ(shift.pattern[0].offset, 1);
    EXPECT_EQ(shift.specificity(), 1);
}

TEST(SemaPatterns, DefineOverridesBound) {
    SemaOptions opts;
    opts.defines["T"] = 3;
    auto c = compile("dim t < T = 8\ndim k < 2*T\nx[t] = 1.0\n", opts);
    ASSERT_TRUE(c->prog) << c->errors.str();
    EXPECT_EQ(c->prog->bounds.at("T"), 3);
    EXPECT_EQ(c->prog->dims[1].bound, 6);
    EXPECT_EQ(c->prog->dims[1].bound_name, "");
}

TEST(SemaGuards, OtherwiseIsNotOfTheOtherGuards) {
    auto c = compile("dim t < T = 8\nx[t] = 1.0 when t < 3\nx[t] = 2.0 otherwise\n");
    ASSERT_TRUE(c->prog) << c->errors.str();
    const ir::Tensor &x = tensor(*c->prog, "x");
    ASSERT_EQ(x.equations.size(), 2u);
    const ir::GuardPtr &g = x.equations[0].guard;
    ASSERT_TRUE(g);
    EXPECT_EQ(g->kind, ir::Guard::Cmp);
    EXPECT_EQ(g->cmp, ir::BinaryOp::Lt);
    EXPECT_EQ(g->lhs.coef_of(0), 1);
    EXPECT_EQ(g->rhs.constant, 3);
    const ir::GuardPtr &o = x.equations[1].guard;
    ASSERT_TRUE(o);
    EXPECT_TRUE(x.equations[1].otherwise);
    EXPECT_EQ(o->kind, ir::Guard::Not);
    EXPECT_EQ(o->a.get(), g.get());
}

TEST(SemaTuples, HiddenTensorAndTupleGet) {
    auto c = compile("dim t < T = 4\nfn pair(x, y) = (x, y)\n(a, b)[t] = pair(1.0, t)\n");
    ASSERT_TRUE(c->prog) << c->errors.str();
    int h = c->prog->tensor_index("(a, b)");
    ASSERT_GE(h, 0);
    EXPECT_TRUE(c->prog->tensors[h].is_hidden);
    const ir::Tensor &b = tensor(*c->prog, "b");
    EXPECT_EQ(b.type.dtype, ir::DType::I32);
    const ir::NodePtr &body = b.equations.at(0).body;
    ASSERT_EQ(body->kind, ir::NodeKind::TupleGet);
    EXPECT_EQ(body->int_attr, 1);
    const ir::NodePtr &read = body->args.at(0);
    ASSERT_EQ(read->kind, ir::NodeKind::Read);
    EXPECT_EQ(read->tensor, h);
    ASSERT_EQ(read->index.size(), 1u);
    EXPECT_EQ(read->index[0].point->aff.coef_of(0), 1);
}

// A tuple literal on the right is one equation per target (sema/domains.cpp): no hidden
// tensor, and each target's body is its own component.
TEST(SemaTuples, TupleLiteralIsOneEquationPerTarget) {
    auto c = compile("dim t < T = 4\n(a, b)[t] = (1.0, t)\n");
    ASSERT_TRUE(c->prog) << c->errors.str();
    EXPECT_LT(c->prog->tensor_index("(a, b)"), 0);
    const ir::Tensor &a = tensor(*c->prog, "a");
    EXPECT_EQ(a.type.dtype, ir::DType::F32);
    EXPECT_EQ(a.equations.at(0).body->kind, ir::NodeKind::Const);
    const ir::Tensor &b = tensor(*c->prog, "b");
    EXPECT_EQ(b.type.dtype, ir::DType::I32);
    EXPECT_NE(b.equations.at(0).body->kind, ir::NodeKind::TupleGet);
}

TEST(SemaTypes, WeakLiteralKeepsItsValueAtF64) {
    auto c = compile("dim t < T = 4\nh[0] = 0.1\nh[t+1] = h[t] + f64(t)\n");
    ASSERT_TRUE(c->prog) << c->errors.str();
    const ir::Tensor &h = tensor(*c->prog, "h");
    EXPECT_EQ(h.type.dtype, ir::DType::F64);
    const ir::NodePtr &base = h.equations.at(0).body;
    ASSERT_EQ(base->kind, ir::NodeKind::Const);
    EXPECT_EQ(base->type.dtype, ir::DType::F64);
    EXPECT_EQ(base->data.at(0), 0.1);  // the double 0.1, not the float 0.1f widened
}

TEST(SemaTypes, StrongBodiesGetCastOperands) {
    auto c = compile("dim t < T = 4\nx[t] = f64(t) + i32(t)\n");
    ASSERT_TRUE(c->prog) << c->errors.str();
    const ir::NodePtr &body = tensor(*c->prog, "x").equations.at(0).body;
    ASSERT_EQ(body->kind, ir::NodeKind::Binary);
    EXPECT_EQ(body->args[1]->kind, ir::NodeKind::Cast);
    EXPECT_EQ(body->args[1]->type.dtype, ir::DType::F64);
}

TEST(SemaReads, DynamicSliceExtent) {
    auto c = compile("dim t < T = 8\nr[t] = 1.0\ns[t] = sum(r[t:T])\n");
    ASSERT_TRUE(c->prog) << c->errors.str();
    const ir::NodePtr &sum = tensor(*c->prog, "s").equations.at(0).body;
    const ir::NodePtr &read = sum->args.at(0);
    ASSERT_EQ(read->kind, ir::NodeKind::Read);
    ASSERT_EQ(read->type.shape.size(), 1u);
    const ir::Extent &x = read->type.shape[0];
    ASSERT_FALSE(x.is_static());
    EXPECT_EQ(x.max_value, 8);
    EXPECT_EQ(ir::index_expr_to_string(*x.dynamic, {"t"}), "8 - t");
    EXPECT_TRUE(read->index[0].is_slice);
}

TEST(SemaFns, LetIsSharedAsOneNode) {
    auto c = compile("dim t < T = 4\nfn f(x) { let y = exp(x); return y * y }\nz[t] = f(1.5)\n");
    ASSERT_TRUE(c->prog) << c->errors.str();
    const ir::NodePtr &body = tensor(*c->prog, "z").equations.at(0).body;
    ASSERT_EQ(body->kind, ir::NodeKind::Binary);
    EXPECT_EQ(body->args[0].get(), body->args[1].get());
}

TEST(SemaAst, HandBuiltModule) {
    // dim t < T = 4 ; x[t] = t  — built without the parser.
    SourceManager sm;
    int file = sm.add("hand.trl", "dim t < T = 4\nx[t] = t\n");
    auto name = [&](const std::string &n, int line, int col) {
        auto e = std::make_shared<ast::Expr>();
        e->kind = ast::ExprKind::Name;
        e->name = n;
        e->loc = Loc{file, line, col, static_cast<int>(n.size())};
        return e;
    };
    ast::Module m;
    m.file = file;
    ast::Decl dim;
    dim.kind = ast::DeclKind::Dim;
    dim.loc = Loc{file, 1, 1, 3};
    dim.name = "t";
    dim.name_loc = Loc{file, 1, 5, 1};
    dim.bound = "T";
    dim.bound_loc = Loc{file, 1, 9, 1};
    dim.value = std::make_shared<ast::Expr>();
    dim.value->kind = ast::ExprKind::IntLit;
    dim.value->int_value = 4;
    dim.value->loc = Loc{file, 1, 13, 1};
    m.decls.push_back(dim);
    ast::Decl eq;
    eq.kind = ast::DeclKind::Equation;
    eq.loc = Loc{file, 2, 1, 1};
    eq.targets = {"x"};
    eq.target_locs = {Loc{file, 2, 1, 1}};
    eq.has_pattern = true;
    eq.pattern.push_back(ast::PatternItem{name("t", 2, 3), Loc{file, 2, 3, 1}});
    eq.value = name("t", 2, 8);
    m.decls.push_back(eq);
    std::ostringstream errors;
    Diagnostics diag(sm, errors);
    auto prog = analyze(m, sm, diag, SemaOptions{});
    ASSERT_TRUE(prog) << errors.str();
    const ir::Tensor &x = tensor(*prog, "x");
    EXPECT_EQ(x.type.dtype, ir::DType::I32);
    EXPECT_EQ(x.equations.at(0).body->kind, ir::NodeKind::Coord);
    std::ostringstream types;
    print_types(*prog, types);
    EXPECT_EQ(types.str(), "dim t < T = 4\nx[t] : i32\n");
}

TEST(IrHelpers, TypeToStringAndAffine) {
    ir::Type t;
    t.is_tuple = true;
    ir::Type a;
    a.dtype = ir::DType::F32;
    a.shape = {ir::Extent{4, nullptr}, ir::Extent{64, nullptr}};
    ir::Type b;
    b.dtype = ir::DType::Bool;
    t.elems = {a, b};
    EXPECT_EQ(ir::type_to_string(t), "(f32[4, 64], bool)");
    ir::Affine x{3, {1, 0}}, y{3, {1}};
    EXPECT_TRUE(x == y);
    EXPECT_FALSE(x.is_constant());
    EXPECT_TRUE((ir::Affine{5, {0, 0}}).is_constant());
    ir::IndexExpr e;
    e.aff = ir::Affine{-2, {2, -1}};
    EXPECT_EQ(ir::index_expr_to_string(e, {"t", "b"}), "2*t - b - 2");
    EXPECT_STREQ(ir::dtype_name(ir::DType::Key), "key");
}

}  // namespace
}  // namespace trlc
