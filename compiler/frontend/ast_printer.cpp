// ast_printer — `--emit=ast`: one node per line, children indented by two
// spaces, each line ending in `@line:col` of the node.  Example:
//
//   Module (2 declarations)
//     Dim t < T @1:1
//       default: IntLit 8 @1:13
//     Equation ret [t] @2:1
//       Binary + @2:10
//         Index @2:10
//           Name rew @2:10
//           Name t @2:14
//         ...
//
// Patterns and type annotations are printed inline as source text (`[t+1]`,
// `: f32[4, 64]`), rendered from the tree with the minimal parentheses that
// keep the precedence, so `(a+b)*c` shows its parentheses and `a+b*c` none.
// A labelled child is `label: Node …` (default:, bound:, when:, lo:, hi:,
// axis=, field key:).  Named profiler regions follow the declarations, one line each:
// `Region "update" lines 4..9 @4:1`.  The format is stable: lit tests check it.
#include "frontend/ast_printer.h"

#include <cstdio>

#include "support/diagnostics.h"

namespace trlc {

namespace {

using ast::Expr;
using ast::ExprKind;
using ast::OpKind;

const char *op_text(OpKind op) {
    switch (op) {
    case OpKind::Neg: return "-";
    case OpKind::Not: return "!";
    case OpKind::Plus: return "+";
    case OpKind::Add: return "+";
    case OpKind::Sub: return "-";
    case OpKind::Mul: return "*";
    case OpKind::Div: return "/";
    case OpKind::Mod: return "%";
    case OpKind::MatMul: return "@";
    case OpKind::Pow: return "**";
    case OpKind::Lt: return "<";
    case OpKind::Le: return "<=";
    case OpKind::Gt: return ">";
    case OpKind::Ge: return ">=";
    case OpKind::Eq: return "==";
    case OpKind::Ne: return "!=";
    case OpKind::And: return "&&";
    case OpKind::Or: return "||";
    }
    return "?";
}

/** Binding strength, as in the parser: || 1, && 2, comparisons 3, + - 4,
 *  * / % @ 5, unary 6, ** 7, postfix and atoms 8. */
int precedence(const Expr &e) {
    if (e.kind == ExprKind::Unary) return 6;
    if (e.kind != ExprKind::Binary) return 8;
    switch (e.op) {
    case OpKind::Or: return 1;
    case OpKind::And: return 2;
    case OpKind::Lt:
    case OpKind::Le:
    case OpKind::Gt:
    case OpKind::Ge:
    case OpKind::Eq:
    case OpKind::Ne: return 3;
    case OpKind::Add:
    case OpKind::Sub: return 4;
    case OpKind::Pow: return 7;
    default: return 5;
    }
}

std::string quote(const std::string &s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"')
            out += "\\\"";
        else if (c == '\\')
            out += "\\\\";
        else if (c == '\n')
            out += "\\n";
        else if (c == '\t')
            out += "\\t";
        else if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02X", c);
            out += buf;
        } else
            out += static_cast<char>(c);
    }
    return out + "\"";
}

std::string render(const Expr &e);

std::string render_child(const Expr &child, int min_prec) {
    std::string s = render(child);
    return precedence(child) < min_prec ? "(" + s + ")" : s;
}

std::string render_list(const std::vector<ast::ExprPtr> &xs, size_t from = 0) {
    std::string s;
    for (size_t i = from; i < xs.size(); ++i) s += (i > from ? ", " : "") + render(*xs[i]);
    return s;
}

/** Source-like text of an expression, fully determined by the tree. */
std::string render(const Expr &e) {
    switch (e.kind) {
    case ExprKind::IntLit:
    case ExprKind::FloatLit:
    case ExprKind::BoolLit: return e.text;
    case ExprKind::StrLit: return quote(e.text);
    case ExprKind::Name: return e.name;
    case ExprKind::ArrayLit: return "[" + render_list(e.args) + "]";
    case ExprKind::Tuple: return "(" + render_list(e.args) + (e.args.size() == 1 ? ",)" : ")");
    case ExprKind::Member: return render_child(*e.args[0], 8) + "." + e.name;
    case ExprKind::Call: {
        std::string s = render_child(*e.args[0], 8) + "(" + render_list(e.args, 1);
        for (size_t i = 0; i < e.kwargs.size(); ++i)
            s += (i + e.args.size() > 1 ? ", " : "") + e.kwargs[i].name + "=" + render(*e.kwargs[i].value);
        return s + ")";
    }
    case ExprKind::Index: {
        std::string s = render_child(*e.args[0], 8) + "[";
        for (size_t i = 0; i < e.indices.size(); ++i) {
            const ast::IndexItem &it = e.indices[i];
            if (i) s += ", ";
            if (!it.is_slice) {
                s += render(*it.value);
            } else {
                if (it.lo) s += render(*it.lo);
                s += ":";
                if (it.hi) s += render(*it.hi);
            }
        }
        return s + "]";
    }
    case ExprKind::Unary: return op_text(e.op) + render_child(*e.args[0], 6);
    case ExprKind::Binary: {
        int p = precedence(e);
        bool right_assoc = e.op == OpKind::Pow;
        // Left-associative: the right child needs parentheses at equal precedence;
        // ** is right-associative (and its right side is a unary, so 6 is enough).
        bool non_assoc = p == 3;  // comparisons do not chain
        std::string lhs = render_child(*e.args[0], right_assoc || non_assoc ? p + 1 : p);
        std::string rhs = render_child(*e.args[1], right_assoc ? 6 : p + 1);
        return lhs + " " + op_text(e.op) + " " + rhs;
    }
    }
    return "?";
}

std::string render_type(const ast::TypeAnnot &t) {
    if (t.is_tuple) {
        std::string s = "(";
        for (size_t i = 0; i < t.elems.size(); ++i) s += (i ? ", " : "") + render_type(t.elems[i]);
        return s + (t.elems.size() == 1 ? ",)" : ")");
    }
    if (t.shape.empty()) return t.dtype;
    return t.dtype + "[" + render_list(t.shape) + "]";
}

std::string render_pattern(const std::vector<ast::PatternItem> &p) {
    std::string s = "[";
    for (size_t i = 0; i < p.size(); ++i) s += (i ? ", " : "") + render(*p[i].expr);
    return s + "]";
}

class Printer {
public:
    explicit Printer(std::ostream &out) : out_(out) {}

    void module(const ast::Module &m) {
        out_ << "Module (" << m.decls.size() << (m.decls.size() == 1 ? " declaration)\n" : " declarations)\n");
        for (const ast::Decl &d : m.decls) decl(d, 1);
        for (const ast::Region &r : m.regions)
            line(1, "",
                 "Region " + quote(r.name) + " lines " + std::to_string(r.first_line) + ".." +
                     std::to_string(r.last_line),
                 r.loc);
    }

private:
    void line(int depth, const std::string &label, const std::string &text, Loc loc) {
        out_ << std::string(static_cast<size_t>(depth) * 2, ' ') << label << text << " @" << loc.line << ":" << loc.col
             << "\n";
    }

    void expr(const Expr &e, int depth, const std::string &label = "") {
        switch (e.kind) {
        case ExprKind::IntLit: line(depth, label, "IntLit " + e.text, e.loc); return;
        case ExprKind::FloatLit: line(depth, label, "FloatLit " + e.text, e.loc); return;
        case ExprKind::BoolLit: line(depth, label, "BoolLit " + e.text, e.loc); return;
        case ExprKind::StrLit: line(depth, label, "StrLit " + quote(e.text), e.loc); return;
        case ExprKind::Name: line(depth, label, "Name " + e.name, e.loc); return;
        case ExprKind::ArrayLit:
            line(depth, label, "ArrayLit (" + std::to_string(e.args.size()) + ")", e.loc);
            for (const auto &a : e.args) expr(*a, depth + 1);
            return;
        case ExprKind::Tuple:
            line(depth, label, "Tuple (" + std::to_string(e.args.size()) + ")", e.loc);
            for (const auto &a : e.args) expr(*a, depth + 1);
            return;
        case ExprKind::Member:
            line(depth, label, "Member " + e.name, e.loc);
            expr(*e.args[0], depth + 1);
            return;
        case ExprKind::Call:
            line(depth, label, "Call " + render(*e.args[0]), e.loc);
            for (size_t i = 1; i < e.args.size(); ++i) expr(*e.args[i], depth + 1);
            for (const ast::KeywordArg &kw : e.kwargs) expr(*kw.value, depth + 1, kw.name + "= ");
            return;
        case ExprKind::Index:
            line(depth, label, "Index", e.loc);
            expr(*e.args[0], depth + 1);
            for (const ast::IndexItem &it : e.indices) {
                if (!it.is_slice) {
                    expr(*it.value, depth + 1);
                    continue;
                }
                line(depth + 1, "", "Slice", it.loc);
                if (it.lo) expr(*it.lo, depth + 2, "lo: ");
                if (it.hi) expr(*it.hi, depth + 2, "hi: ");
            }
            return;
        case ExprKind::Unary:
            line(depth, label, std::string("Unary ") + op_text(e.op), e.loc);
            expr(*e.args[0], depth + 1);
            return;
        case ExprKind::Binary:
            line(depth, label, std::string("Binary ") + op_text(e.op), e.loc);
            expr(*e.args[0], depth + 1);
            expr(*e.args[1], depth + 1);
            return;
        }
    }

    void decl(const ast::Decl &d, int depth) {
        switch (d.kind) {
        case ast::DeclKind::Import:
            line(depth, "", "Import " + (d.is_path ? quote(d.module) : d.module) + " as " + d.alias, d.loc);
            return;
        case ast::DeclKind::Dim:
            if (d.bound_expr) {
                line(depth, "", "Dim " + d.name + " < (anonymous bound)", d.loc);
                expr(*d.bound_expr, depth + 1, "bound: ");
            } else {
                line(depth, "", "Dim " + d.name + " < " + d.bound, d.loc);
            }
            if (d.value) expr(*d.value, depth + 1, "default: ");
            return;
        case ast::DeclKind::Const:
            line(depth, "", "Const " + d.name, d.loc);
            expr(*d.value, depth + 1);
            return;
        case ast::DeclKind::Equation:
        case ast::DeclKind::TypeDecl: {
            std::string head = d.kind == ast::DeclKind::Equation ? "Equation " : "TypeDecl ";
            if (d.targets.size() == 1) {
                head += d.targets[0];
            } else {
                head += "(";
                for (size_t i = 0; i < d.targets.size(); ++i) head += (i ? ", " : "") + d.targets[i];
                head += ")";
            }
            if (d.has_pattern) head += " " + render_pattern(d.pattern);
            if (d.has_type) head += " : " + render_type(d.type);
            if (d.otherwise) head += " otherwise";
            line(depth, "", head, d.loc);
            if (d.value) expr(*d.value, depth + 1);
            if (d.guard) expr(*d.guard, depth + 1, "when: ");
            return;
        }
        case ast::DeclKind::Fn: {
            std::string head = "Fn " + d.name + "(";
            for (size_t i = 0; i < d.params.size(); ++i) head += (i ? ", " : "") + d.params[i].name;
            line(depth, "", head + ")", d.loc);
            for (const ast::FnStmt &s : d.body) {
                if (s.kind == ast::FnStmt::Return) {
                    line(depth + 1, "", "Return", s.loc);
                } else if (s.names.size() == 1) {
                    line(depth + 1, "", "Let " + s.names[0], s.loc);
                } else {
                    std::string names;
                    for (size_t i = 0; i < s.names.size(); ++i) names += (i ? ", " : "") + s.names[i];
                    line(depth + 1, "", "Let (" + names + ")", s.loc);
                }
                expr(*s.value, depth + 2);
            }
            return;
        }
        case ast::DeclKind::Emit:
            line(depth, "", "Emit " + quote(d.name) + (d.has_pattern ? " " + render_pattern(d.pattern) : ""), d.loc);
            for (size_t i = 0; i < d.fields.size(); ++i) expr(*d.fields[i].second, depth + 1, d.fields[i].first + ": ");
            if (d.guard) expr(*d.guard, depth + 1, "when: ");
            return;
        case ast::DeclKind::Save:
            line(depth, "", "Save to " + quote(d.module), d.loc);
            expr(*d.value, depth + 1);
            return;
        case ast::DeclKind::Load:
            line(depth, "",
                 "Load " + d.name + (d.has_type ? " : " + render_type(d.type) : "") + " from " + quote(d.module),
                 d.loc);
            return;
        case ast::DeclKind::Input: line(depth, "", "Input " + d.name + " : " + render_type(d.type), d.loc); return;
        case ast::DeclKind::Output:
            line(depth, "", "Output " + d.name, d.loc);
            expr(*d.value, depth + 1);
            return;
        case ast::DeclKind::Extern: {
            std::string head = "Extern " + quote(d.module) + " fn " + d.name + "(";
            for (size_t i = 0; i < d.params.size(); ++i) {
                head += (i ? ", " : "") + d.params[i].name;
                if (d.params[i].has_type) head += ": " + render_type(d.params[i].type);
            }
            head += ")";
            if (d.has_type) head += " -> " + render_type(d.type);
            line(depth, "", head, d.loc);
            return;
        }
        }
    }

    std::ostream &out_;
};

}  // namespace

void print_ast(const ast::Module &m, const SourceManager &, std::ostream &out) { Printer(out).module(m); }

}  // namespace trlc
