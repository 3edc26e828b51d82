#pragma once
// parser_impl — the recursive-descent Parser class, private to frontend/.
//
// The parser is one class whose methods are spread over three files by grammar layer:
// parser.cpp (the module loop, token helpers, error recovery, the nesting guard),
// parse_decls.cpp (declarations: import, dim, const, fn, emit, save, load, extern,
// equations, type annotations) and parse_exprs.cpp (expressions, by precedence).  This header
// declares the class once for the three; nothing outside frontend/ includes it.
#include <deque>
#include <string>

#include "frontend/ast.h"
#include "frontend/lexer.h"
#include "frontend/parser.h"
#include "support/diagnostics.h"

namespace trlc::parser_detail {

constexpr int kMaxParseErrors = 100;

/** Thrown after a syntax error has been reported (or an Error token met). */
struct ParseFailure {};

using ast::Expr;
using ast::ExprKind;
using ast::ExprPtr;
using ast::OpKind;

class Parser {

public:
    Parser(const SourceManager &sm, int file, Diagnostics &diag) : lexer_(sm, file, diag), file_(file), diag_(diag) {
        toks_.push_back(lexer_.next());
    }
    ast::Module run();

private:
    // ---- token helpers ----------------------------------------------------

    const Token &cur() const { return toks_[pos_]; }
    const Token &peek(int n = 1);
    bool at(Tok k) const { return cur().kind == k; }
    static bool is_keyword(Tok k) { return k >= Tok::KwImport && k <= Tok::KwFalse; }
    const Token &advance();
    bool accept(Tok k);
    const Token &prev() const { return toks_[pos_ == 0 ? 0 : pos_ - 1]; }
    void skip_separators();
    void skip_newlines();
    Loc error_loc() const;
    std::string keyword_hint() const;
    [[noreturn]] void fail(const std::string &msg);
    void conditional_note();
    [[noreturn]] void fail_at(Loc loc, const std::string &msg);
    const Token &expect(Tok k, const std::string &msg);
    void expect_close(Tok k, const std::string &msg, Loc open, const char *open_text);
    void synchronize(int braces);
    static bool is_decl_keyword(Tok k);
    void end_of_declaration();
    Loc span(size_t begin_offset, Loc begin) const;

    // ---- nesting guard ----------------------------------------------------

    void enter();
    struct Guard {
        Parser &p;
        int n = 0;
        explicit Guard(Parser &p) : p(p) {}
        void step() {
            p.enter();
            ++n;
        }
        ~Guard() { p.depth_ -= n; }
    };

    // ---- declarations -----------------------------------------------------

    ast::Decl declaration();
    bool at_region();
    /** A region block: its declarations go to m.decls, its span to m.regions. */
    void region(ast::Module &m);
    ast::Decl start(ast::DeclKind kind);
    ast::Decl import_decl();
    ast::Decl dim_decl();
    ast::Decl const_decl();
    ast::Decl equation();
    ast::TypeAnnot type_annot();
    void fn_signature(ast::Decl &d, bool typed);
    ast::Decl fn_decl();
    ast::FnStmt fn_statement();
    ast::Decl emit_decl();
    ast::Decl save_decl();
    ast::Decl load_decl();
    ast::Decl input_decl();
    ast::Decl output_decl();
    ast::Decl extern_decl();

    // ---- expressions ------------------------------------------------------

    ExprPtr node(ExprKind kind, Loc loc);
    ExprPtr binary(OpKind op, ExprPtr a, ExprPtr b, size_t begin, Loc begin_loc);
    ExprPtr expression();
    ExprPtr or_expr();
    ExprPtr and_expr();
    static bool comparison_op(Tok k, OpKind *op);
    ExprPtr comparison();
    ExprPtr additive();
    ExprPtr multiplicative();
    ExprPtr unary();
    ExprPtr power();
    ExprPtr postfix();
    ExprPtr call(ExprPtr callee, size_t begin, Loc begin_loc);
    ExprPtr index(ExprPtr base, size_t begin, Loc begin_loc);
    ExprPtr primary();
    ExprPtr paren_or_tuple();
    ExprPtr array_literal();

    Lexer lexer_;
    std::deque<Token> toks_;  // every token lexed so far (a deque: references stay valid)
    size_t pos_ = 0;
    int file_;
    Diagnostics &diag_;
    int depth_ = 0;        // expression nesting (kMaxNesting)
    int open_braces_ = 0;  // '{' of the current declaration not yet closed
};

}  // namespace trlc::parser_detail
