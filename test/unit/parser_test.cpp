// parser_test — tree shapes for each declaration kind, precedence and
// associativity, index forms, and error recovery.
#include "frontend/parser.h"

#include <gtest/gtest.h>

#include <sstream>

#include "frontend/ast_printer.h"

namespace trlc {
namespace {

using ast::DeclKind;
using ast::ExprKind;
using ast::OpKind;

struct Parsed {
    ast::Module m;
    std::string diags;
    int errors = 0;
};

Parsed run(const std::string &text) {
    SourceManager sm;
    int f = sm.add("p.trl", text);
    std::ostringstream out;
    Diagnostics diag(sm, out);
    Parsed r;
    r.m = parse(sm, f, diag);
    r.diags = out.str();
    r.errors = diag.error_count();
    return r;
}

/** Fully parenthesized text of an expression: checks the tree's shape. */
std::string sexpr(const ast::Expr &e) {
    static const char *ops[] = {"neg", "!", "pos", "+", "-",  "*",  "/",  "%",  "@",
                                "**",  "<", "<=",  ">", ">=", "==", "!=", "&&", "||"};
    switch (e.kind) {
    case ExprKind::IntLit:
    case ExprKind::FloatLit:
    case ExprKind::BoolLit: return e.text;
    case ExprKind::StrLit: return "\"" + e.text + "\"";
    case ExprKind::Name: return e.name;
    case ExprKind::Member: return "(. " + sexpr(*e.args[0]) + " " + e.name + ")";
    case ExprKind::Unary:
    case ExprKind::Binary: {
        std::string s = std::string("(") + ops[static_cast<int>(e.op)];
        for (const auto &a : e.args) s += " " + sexpr(*a);
        return s + ")";
    }
    case ExprKind::ArrayLit:
    case ExprKind::Tuple:
    case ExprKind::Call: {
        std::string s = e.kind == ExprKind::ArrayLit ? "(array" : e.kind == ExprKind::Tuple ? "(tuple" : "(call";
        for (const auto &a : e.args) s += " " + sexpr(*a);
        for (const auto &kw : e.kwargs) s += " " + kw.name + "=" + sexpr(*kw.value);
        return s + ")";
    }
    case ExprKind::Index: {
        std::string s = "(index " + sexpr(*e.args[0]);
        for (const auto &it : e.indices) {
            if (!it.is_slice)
                s += " " + sexpr(*it.value);
            else
                s += " " + (it.lo ? sexpr(*it.lo) : "") + ":" + (it.hi ? sexpr(*it.hi) : "");
        }
        return s + ")";
    }
    }
    return "?";
}

std::string expr_of(const std::string &src) {
    Parsed r = run("x = " + src);
    EXPECT_EQ(r.errors, 0) << src << "\n" << r.diags;
    if (r.m.decls.size() != 1 || !r.m.decls[0].value) return "<no value>";
    return sexpr(*r.m.decls[0].value);
}

TEST(Parser, EmptyAndCommentOnlyFilesAreEmptyModules) {
    EXPECT_EQ(run("").m.decls.size(), 0u);
    Parsed r = run("// nothing\n/* here */\n\n");
    EXPECT_EQ(r.errors, 0);
    EXPECT_EQ(r.m.decls.size(), 0u);
}

TEST(Parser, Precedence) {
    EXPECT_EQ(expr_of("a || b && c"), "(|| a (&& b c))");
    EXPECT_EQ(expr_of("a && b == c"), "(&& a (== b c))");
    EXPECT_EQ(expr_of("a < b + c"), "(< a (+ b c))");
    EXPECT_EQ(expr_of("a + b * c - d"), "(- (+ a (* b c)) d)");
    EXPECT_EQ(expr_of("a - b - c"), "(- (- a b) c)");
    EXPECT_EQ(expr_of("a / b % c @ d"), "(@ (% (/ a b) c) d)");
    EXPECT_EQ(expr_of("-a * b"), "(* (neg a) b)");
    EXPECT_EQ(expr_of("-x**2"), "(neg (** x 2))");
    EXPECT_EQ(expr_of("a ** b ** c"), "(** a (** b c))");
    EXPECT_EQ(expr_of("2 ** -1"), "(** 2 (neg 1))");
    EXPECT_EQ(expr_of("!a && +b"), "(&& (! a) (pos b))");
    EXPECT_EQ(expr_of("(a + b) * c"), "(* (+ a b) c)");
}

TEST(Parser, ComparisonsDoNotChain) {
    Parsed r = run("x = a < b < c");
    EXPECT_EQ(r.errors, 1);
    EXPECT_NE(r.diags.find("p.trl:1:11: error: comparisons cannot be chained"), std::string::npos) << r.diags;
}

TEST(Parser, Postfix) {
    EXPECT_EQ(expr_of("nn.mlp(w, x)[a]"), "(index (call (. nn mlp) w x) a)");
    EXPECT_EQ(expr_of("sum(x, axis=0)"), "(call sum x axis=0)");
    EXPECT_EQ(expr_of("x[b, t][2]"), "(index (index x b t) 2)");
    EXPECT_EQ(expr_of("std.envs.cartpole.step(s)"), "(call (. (. (. std envs) cartpole) step) s)");
}

TEST(Parser, IndexForms) {
    EXPECT_EQ(expr_of("r[t+1, 0:T, :, 1:, :n, max(t-1, 0):t+1]"),
              "(index r (+ t 1) 0:T : 1: :n (call max (- t 1) 0):(+ t 1))");
}

TEST(Parser, Literals) {
    EXPECT_EQ(expr_of("[0.1, 2, true]"), "(array 0.1 2 true)");
    EXPECT_EQ(expr_of("[]"), "(array)");
    EXPECT_EQ(expr_of("(a, b)"), "(tuple a b)");
    EXPECT_EQ(expr_of("(a,)"), "(tuple a)");
    EXPECT_EQ(expr_of("(a, b,)"), "(tuple a b)");
    EXPECT_EQ(expr_of("\"s\""), "\"s\"");
}

TEST(Parser, Import) {
    Parsed r = run("import std.envs.cartpole\nimport \"lib/x.trl\"\nimport std.nn as net");
    ASSERT_EQ(r.m.decls.size(), 3u) << r.diags;
    EXPECT_EQ(r.m.decls[0].kind, DeclKind::Import);
    EXPECT_EQ(r.m.decls[0].module, "std.envs.cartpole");
    EXPECT_EQ(r.m.decls[0].alias, "cartpole");
    EXPECT_FALSE(r.m.decls[0].is_path);
    EXPECT_TRUE(r.m.decls[1].is_path);
    EXPECT_EQ(r.m.decls[1].module, "lib/x.trl");
    EXPECT_EQ(r.m.decls[1].alias, "x");
    EXPECT_EQ(r.m.decls[2].alias, "net");
}

TEST(Parser, Dim) {
    Parsed r = run("dim t < T = 500\ndim b < B\ndim k < 2*T");
    ASSERT_EQ(r.m.decls.size(), 3u) << r.diags;
    const ast::Decl &t = r.m.decls[0];
    EXPECT_EQ(t.kind, DeclKind::Dim);
    EXPECT_EQ(t.name, "t");
    EXPECT_EQ(t.bound, "T");
    EXPECT_EQ(t.bound_expr, nullptr);
    ASSERT_NE(t.value, nullptr);
    EXPECT_EQ(t.value->int_value, 500);
    EXPECT_EQ(r.m.decls[1].bound, "B");
    EXPECT_EQ(r.m.decls[1].value, nullptr);
    EXPECT_TRUE(r.m.decls[2].bound.empty());
    ASSERT_NE(r.m.decls[2].bound_expr, nullptr);
    EXPECT_EQ(sexpr(*r.m.decls[2].bound_expr), "(* 2 T)");
}

TEST(Parser, Const) {
    Parsed r = run("const gamma = 0.99");
    ASSERT_EQ(r.m.decls.size(), 1u);
    EXPECT_EQ(r.m.decls[0].kind, DeclKind::Const);
    EXPECT_EQ(r.m.decls[0].name, "gamma");
    EXPECT_DOUBLE_EQ(r.m.decls[0].value->float_value, 0.99);
}

TEST(Parser, Equations) {
    Parsed r = run("ret[T-1] = rew[T-1]\n"
                   "w = 1\n"
                   "(o, r, d)[b, t] = step(s[b, t])\n"
                   "x[t] : f32[4] = y[t] when t < 10\n"
                   "x[t] = z[t] otherwise\n"
                   "obs[b, t] : (f32[4], i32)\n");
    ASSERT_EQ(r.m.decls.size(), 6u) << r.diags;
    const auto &d = r.m.decls;
    EXPECT_EQ(d[0].kind, DeclKind::Equation);
    EXPECT_EQ(d[0].targets, std::vector<std::string>{"ret"});
    ASSERT_TRUE(d[0].has_pattern);
    ASSERT_EQ(d[0].pattern.size(), 1u);
    EXPECT_EQ(sexpr(*d[0].pattern[0].expr), "(- T 1)");
    EXPECT_FALSE(d[1].has_pattern);
    EXPECT_EQ(d[2].targets, (std::vector<std::string>{"o", "r", "d"}));
    EXPECT_EQ(d[2].pattern.size(), 2u);
    EXPECT_TRUE(d[3].has_type);
    EXPECT_EQ(d[3].type.dtype, "f32");
    ASSERT_EQ(d[3].type.shape.size(), 1u);
    ASSERT_NE(d[3].guard, nullptr);
    EXPECT_EQ(sexpr(*d[3].guard), "(< t 10)");
    EXPECT_TRUE(d[4].otherwise);
    EXPECT_EQ(d[5].kind, DeclKind::TypeDecl);
    EXPECT_TRUE(d[5].type.is_tuple);
    EXPECT_EQ(d[5].type.elems.size(), 2u);
    EXPECT_EQ(d[5].value, nullptr);
}

TEST(Parser, Fn) {
    Parsed r = run("fn f(a, b) = a + b\n"
                   "fn g(x) {\n  let y = x * 2\n  let (p, q) = h(y); return p\n}\n");
    ASSERT_EQ(r.m.decls.size(), 2u) << r.diags;
    const auto &f = r.m.decls[0];
    EXPECT_EQ(f.kind, DeclKind::Fn);
    ASSERT_EQ(f.params.size(), 2u);
    EXPECT_EQ(f.params[1].name, "b");
    ASSERT_EQ(f.body.size(), 1u);
    EXPECT_EQ(f.body[0].kind, ast::FnStmt::Return);
    const auto &g = r.m.decls[1];
    ASSERT_EQ(g.body.size(), 3u);
    EXPECT_EQ(g.body[0].names, std::vector<std::string>{"y"});
    EXPECT_EQ(g.body[1].names, (std::vector<std::string>{"p", "q"}));
    EXPECT_EQ(g.body[2].kind, ast::FnStmt::Return);
}

TEST(Parser, EmitSaveLoadExtern) {
    Parsed r = run("emit \"train\"[i] {\n  iteration: i,\n  loss: l[i],\n}\n"
                   "emit \"once\" { a: 1 }\n"
                   "save net[I] to \"p.npy\"\n"
                   "load w : f32[4, 64] from \"w.npy\"\n"
                   "extern \"e.cuh\" fn step(s: f32[8], a: i32) -> (f32[8], f32, bool)\n");
    ASSERT_EQ(r.m.decls.size(), 5u) << r.diags;
    const auto &d = r.m.decls;
    EXPECT_EQ(d[0].kind, DeclKind::Emit);
    EXPECT_EQ(d[0].name, "train");
    EXPECT_EQ(d[0].pattern.size(), 1u);
    ASSERT_EQ(d[0].fields.size(), 2u);
    EXPECT_EQ(d[0].fields[1].first, "loss");
    EXPECT_FALSE(d[1].has_pattern);
    EXPECT_EQ(d[2].kind, DeclKind::Save);
    EXPECT_EQ(d[2].module, "p.npy");
    EXPECT_EQ(d[3].kind, DeclKind::Load);
    EXPECT_EQ(d[3].type.shape.size(), 2u);
    EXPECT_EQ(d[3].module, "w.npy");
    EXPECT_EQ(d[4].kind, DeclKind::Extern);
    EXPECT_EQ(d[4].module, "e.cuh");
    ASSERT_EQ(d[4].params.size(), 2u);
    EXPECT_EQ(d[4].params[1].type.dtype, "i32");
    EXPECT_EQ(d[4].type.elems.size(), 3u);
}

TEST(Parser, LoadNeedsAType) {
    Parsed r = run("load w from \"w.npy\"");
    EXPECT_EQ(r.errors, 1);
    EXPECT_NE(r.diags.find("1:8: error: expected ':' and the type of the loaded tensor"), std::string::npos) << r.diags;
}

TEST(Parser, ExpressionLocationCoversTheRange) {
    Parsed r = run("x = a + f(b)");
    ASSERT_EQ(r.m.decls.size(), 1u);
    EXPECT_EQ(r.m.decls[0].value->loc.col, 5);
    EXPECT_EQ(r.m.decls[0].value->loc.length, 8);
}

TEST(Parser, RecoversAtTheNextDeclaration) {
    Parsed r = run("x = (1 + )\ny = 2\nz = ]\nw = 3\n");
    EXPECT_EQ(r.errors, 2) << r.diags;
    ASSERT_EQ(r.m.decls.size(), 2u);
    EXPECT_EQ(r.m.decls[0].targets[0], "y");
    EXPECT_EQ(r.m.decls[1].targets[0], "w");
}

TEST(Parser, DeepNestingIsAnErrorNotACrash) {
    for (const char *open : {"(", "[", "-", "f("}) {
        std::string src = "x = ";
        for (int i = 0; i < 100000; ++i) src += open;
        Parsed r = run(src);
        EXPECT_GE(r.errors, 1);
        EXPECT_NE(r.diags.find("expression nested too deeply"), std::string::npos) << open;
    }
    std::string chain = "x = a";
    for (int i = 0; i < 100000; ++i) chain += "+a";
    EXPECT_NE(run(chain).diags.find("expression nested too deeply"), std::string::npos);
}

TEST(Parser, ModerateNestingIsFine) {
    std::string src = "x = ";
    for (int i = 0; i < 50; ++i) src += "(";
    src += "1";
    for (int i = 0; i < 50; ++i) src += ")";
    EXPECT_EQ(run(src).errors, 0);
}

TEST(Parser, PrinterIsStable) {
    Parsed r = run("dim t < T = 8\nret[t] = rew[t] + 0.9 * ret[t+1]");
    SourceManager sm;
    std::ostringstream out;
    print_ast(r.m, sm, out);
    EXPECT_EQ(out.str(), "Module (2 declarations)\n"
                         "  Dim t < T @1:1\n"
                         "    default: IntLit 8 @1:13\n"
                         "  Equation ret [t] @2:1\n"
                         "    Binary + @2:10\n"
                         "      Index @2:10\n"
                         "        Name rew @2:10\n"
                         "        Name t @2:14\n"
                         "      Binary * @2:19\n"
                         "        FloatLit 0.9 @2:19\n"
                         "        Index @2:25\n"
                         "          Name ret @2:25\n"
                         "          Binary + @2:29\n"
                         "            Name t @2:29\n"
                         "            IntLit 1 @2:31\n");
}

}  // namespace
}  // namespace trlc
