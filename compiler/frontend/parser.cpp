// parser — recursive descent from tokens (frontend/lexer.h) to ast::Module.
//
// One function per grammar rule; the rule is written above it (the whole EBNF
// is in dsl/README.md §1).  A syntax error is reported once, then a
// ParseFailure unwinds to the declaration loop, which skips to the next
// declaration (a Newline or `;` outside braces, or a declaration keyword) and
// goes on, so one run reports several errors.  Error tokens from the lexer fail
// the declaration silently: the lexer already said what was wrong.
//
// Nesting: every unary/postfix/binary step that makes the tree one level
// deeper counts against kMaxNesting ("expression nested too deeply"), so
// neither the parser nor any later recursive walk can overflow the stack.
#include "frontend/parser.h"

#include <algorithm>
#include <deque>

#include "frontend/lexer.h"

namespace trlc {

namespace {

constexpr int kMaxParseErrors = 100;

/** Thrown after a syntax error has been reported (or an Error token met). */
struct ParseFailure {};

using ast::Expr;
using ast::ExprKind;
using ast::ExprPtr;
using ast::OpKind;

class Parser {
public:
    Parser(const SourceManager &sm, int file, Diagnostics &diag)
        : lexer_(sm, file, diag), file_(file), diag_(diag) {
        toks_.push_back(lexer_.next());
    }

    // module := { separator } { decl separator { separator } } EOF
    ast::Module run() {
        ast::Module m;
        m.file = file_;
        int errors_at_start = diag_.error_count();
        while (true) {
            skip_separators();
            if (at(Tok::Eof)) break;
            if (diag_.error_count() - errors_at_start > kMaxParseErrors) break;
            try {
                ast::Decl d = declaration();
                end_of_declaration();
                m.decls.push_back(std::move(d));
            } catch (const ParseFailure &) {
                synchronize(open_braces_);
            }
        }
        return m;
    }

private:
    // ---- token helpers ----------------------------------------------------

    const Token &cur() const { return toks_[pos_]; }
    const Token &peek(int n = 1) {
        while (toks_.size() <= pos_ + n && toks_.back().kind != Tok::Eof)
            toks_.push_back(lexer_.next());
        return toks_[std::min(pos_ + n, toks_.size() - 1)];
    }
    bool at(Tok k) const { return cur().kind == k; }
    static bool is_keyword(Tok k) { return k >= Tok::KwImport && k <= Tok::KwFalse; }
    /** Move to the next token; returns the one moved past (valid until the next advance). */
    const Token &advance() {
        peek(1);
        size_t old = pos_;
        if (pos_ + 1 < toks_.size()) ++pos_;
        return toks_[old];
    }
    bool accept(Tok k) {
        if (!at(k)) return false;
        advance();
        return true;
    }
    const Token &prev() const { return toks_[pos_ == 0 ? 0 : pos_ - 1]; }

    void skip_separators() {
        while (at(Tok::Newline) || at(Tok::Semi)) advance();
    }
    void skip_newlines() {
        while (at(Tok::Newline)) advance();
    }

    /** Where an "expected …" error points: the current token, or just after
     *  the previous one when the current token is a line end or the file end. */
    Loc error_loc() const {
        const Token &t = cur();
        if ((t.kind == Tok::Newline || t.kind == Tok::Eof) && pos_ > 0) {
            Loc l = prev().loc;
            if (prev().kind == Tok::Newline) return t.loc;
            // A token may span lines only when it is an expression range; tokens don't.
            l.col += l.length;
            l.length = 1;
            return l;
        }
        return t.loc;
    }

    /** ", found the keyword 'as' (…)" when the current token is a keyword used where a name
     *  could be meant (`as = acrobot.reset(k)`); empty otherwise. */
    std::string keyword_hint() const {
        Tok k = cur().kind;
        if (k < Tok::KwImport || k > Tok::KwFalse || k == Tok::KwTrue || k == Tok::KwFalse) return "";
        if (k == Tok::KwLet || k == Tok::KwReturn)
            return ", found '" + std::string(cur().text) + "' (let and return belong in a fn block: "
                   "fn f(x) { let y = …; return y })";
        return ", found the keyword '" + std::string(cur().text) +
               "' (keywords are reserved and cannot be used as names)";
    }

    [[noreturn]] void fail(const std::string &msg) {
        if (!at(Tok::Error)) {
            diag_.error(error_loc(), msg);
            conditional_note();
        }
        throw ParseFailure{};
    }

    /** After a syntax error at the name `if` following an expression (Python's `a if c else
     *  b`): a note saying how the language writes it. */
    void conditional_note() {
        if (at(Tok::Ident) && cur().text == "if" && pos_ > 0)
            diag_.note(cur().loc, "a conditional expression is written where(c, a, b), not "
                                  "'a if c else b' (elementwise; both a and b are computed)");
    }
    [[noreturn]] void fail_at(Loc loc, const std::string &msg) {
        diag_.error(loc, msg);
        throw ParseFailure{};
    }

    const Token &expect(Tok k, const std::string &msg) {
        if (!at(k)) fail(msg);
        return advance();
    }

    /** Expect the closing bracket "k"; on failure add a note at the opener. */
    void expect_close(Tok k, const std::string &msg, Loc open, const char *open_text) {
        if (at(k)) {
            advance();
            return;
        }
        if (at(Tok::Error)) throw ParseFailure{};
        diag_.error(error_loc(), msg);
        diag_.note(open, std::string("to match this '") + open_text + "'");
        conditional_note();
        throw ParseFailure{};
    }

    /** Skip to the start of the next declaration after a syntax error. */
    void synchronize(int braces) {
        open_braces_ = 0;
        while (!at(Tok::Eof)) {
            Tok k = cur().kind;
            if (braces == 0 && (k == Tok::Newline || k == Tok::Semi)) return;
            if (k == Tok::LBrace) ++braces;
            if (k == Tok::RBrace && braces > 0) --braces;
            advance();
            if (is_decl_keyword(cur().kind) && prev().kind == Tok::Newline) return;
        }
    }

    static bool is_decl_keyword(Tok k) {
        switch (k) {
        case Tok::KwDim: case Tok::KwConst: case Tok::KwFn: case Tok::KwImport:
        case Tok::KwEmit: case Tok::KwSave: case Tok::KwLoad: case Tok::KwExtern:
            return true;
        default:
            return false;
        }
    }

    void end_of_declaration() {
        if (at(Tok::Newline) || at(Tok::Semi) || at(Tok::Eof)) return;
        fail(std::string("expected end of line after the declaration, found ") +
             tok_name(cur().kind));
    }

    Loc span(size_t begin_offset, Loc begin) const {
        const Token &last = prev();
        size_t end = last.offset + static_cast<size_t>(last.loc.length);
        Loc l = begin;
        l.length = end > begin_offset ? static_cast<int>(end - begin_offset) : 1;
        return l;
    }

    // ---- nesting guard ----------------------------------------------------

    void enter() {
        if (++depth_ > kMaxNesting) {
            fail_at(cur().loc, "expression nested too deeply (more than " +
                                   std::to_string(kMaxNesting) + " levels)");
        }
    }
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

    // decl := import | dim | const | fn | emit | save | load | extern | equation
    ast::Decl declaration() {
        depth_ = 0;
        open_braces_ = 0;
        switch (cur().kind) {
        case Tok::KwImport: return import_decl();
        case Tok::KwDim: return dim_decl();
        case Tok::KwConst: return const_decl();
        case Tok::KwFn: return fn_decl();
        case Tok::KwEmit: return emit_decl();
        case Tok::KwSave: return save_decl();
        case Tok::KwLoad: return load_decl();
        case Tok::KwExtern: return extern_decl();
        case Tok::Ident:
        case Tok::LParen: return equation();
        default:
            fail("expected declaration (dim, const, fn, import, emit, save, load, extern, "
                 "or an equation)" + keyword_hint());
        }
    }

    ast::Decl start(ast::DeclKind kind) {
        ast::Decl d;
        d.kind = kind;
        d.loc = cur().loc;
        return d;
    }

    // import := 'import' ( IDENT { '.' IDENT } | STRING ) [ 'as' IDENT ]
    ast::Decl import_decl() {
        ast::Decl d = start(ast::DeclKind::Import);
        advance();
        if (at(Tok::String)) {
            d.is_path = true;
            d.module = advance().text;
            std::string stem = d.module;
            size_t slash = stem.find_last_of("/\\");
            if (slash != std::string::npos) stem = stem.substr(slash + 1);
            size_t dot = stem.rfind('.');
            if (dot != std::string::npos && dot > 0) stem = stem.substr(0, dot);
            d.alias = stem;
        } else {
            d.module = expect(Tok::Ident, "expected a module name (std.nn) or a quoted file "
                                          "path after 'import'").text;
            d.alias = d.module;
            while (accept(Tok::Dot)) {
                d.alias = expect(Tok::Ident, "expected a module name after '.'").text;
                d.module += "." + d.alias;
            }
        }
        d.name_loc = prev().loc;
        if (accept(Tok::KwAs)) {
            d.alias = expect(Tok::Ident, "expected a name after 'as'").text;
            d.name_loc = prev().loc;
        }
        return d;
    }

    // dim := 'dim' IDENT '<' ( IDENT [ '=' expr ] | expr )
    ast::Decl dim_decl() {
        ast::Decl d = start(ast::DeclKind::Dim);
        advance();
        d.name = expect(Tok::Ident, "expected a dim name after 'dim'").text;
        d.name_loc = prev().loc;
        expect(Tok::Lt, "expected '<' and a bound after the dim name (e.g. dim t < T = 100)");
        Tok after = peek().kind;
        if (at(Tok::Ident) && (after == Tok::Assign || after == Tok::Newline ||
                               after == Tok::Semi || after == Tok::Eof)) {
            d.bound = cur().text;
            d.bound_loc = advance().loc;
            if (accept(Tok::Assign)) d.value = expression();
        } else {
            if (at(Tok::Newline) || at(Tok::Eof) || at(Tok::Semi))
                fail("expected a bound after '<' (a name such as T, or an integer expression)");
            d.bound_loc = cur().loc;
            d.bound_expr = expression();
            d.bound_loc = d.bound_expr->loc;
            if (at(Tok::Assign))
                fail("only a named bound can have a default value (dim t < T = 100)");
        }
        return d;
    }

    // const := 'const' IDENT '=' expr
    ast::Decl const_decl() {
        ast::Decl d = start(ast::DeclKind::Const);
        advance();
        d.name = expect(Tok::Ident, "expected a name after 'const'").text;
        d.name_loc = prev().loc;
        expect(Tok::Assign, "expected '=' and a value after the const name");
        d.value = expression();
        return d;
    }

    // equation := lhs [ ':' type ] ( '=' expr [ 'when' expr | 'otherwise' ] )?
    //   (no '=' makes a type declaration, which needs the ':' type)
    // lhs      := ( IDENT | '(' IDENT { ',' IDENT } [','] ')' ) [ '[' pattern ']' ]
    ast::Decl equation() {
        ast::Decl d = start(ast::DeclKind::Equation);
        if (at(Tok::LParen)) {
            Loc open = advance().loc;
            do {
                if (at(Tok::RParen)) break;
                d.targets.push_back(
                    expect(Tok::Ident, "expected a tensor name in the tuple left-hand side")
                        .text);
                d.target_locs.push_back(prev().loc);
            } while (accept(Tok::Comma));
            expect_close(Tok::RParen, "expected ')' to close the tuple left-hand side", open,
                         "(");
            if (d.targets.empty()) fail_at(open, "a tuple left-hand side needs at least one name");
        } else {
            d.targets.push_back(advance().text);
            d.target_locs.push_back(prev().loc);
        }
        d.name_loc = d.target_locs.front();
        if (at(Tok::LBracket)) {
            Loc open = advance().loc;
            d.has_pattern = true;
            if (!at(Tok::RBracket)) {
                do {
                    ast::PatternItem p;
                    p.expr = expression();
                    p.loc = p.expr->loc;
                    d.pattern.push_back(std::move(p));
                } while (accept(Tok::Comma) && !at(Tok::RBracket));
            }
            expect_close(Tok::RBracket, "expected ']' to close the left-hand side pattern",
                         open, "[");
        }
        if (accept(Tok::Colon)) {
            d.has_type = true;
            d.type = type_annot();
        }
        if (!accept(Tok::Assign)) {
            if (d.has_type && (at(Tok::Newline) || at(Tok::Semi) || at(Tok::Eof))) {
                d.kind = ast::DeclKind::TypeDecl;
                return d;
            }
            if (d.has_type) fail("expected '=' or end of line after the type");
            fail("expected '=' or ':' after the left-hand side");
        }
        d.value = expression();
        if (accept(Tok::KwWhen)) {
            d.guard = expression();
        } else if (accept(Tok::KwOtherwise)) {
            d.otherwise = true;
        }
        return d;
    }

    // type := IDENT [ '[' [ expr { ',' expr } ] ']' ] | '(' type { ',' type } [','] ')'
    ast::TypeAnnot type_annot() {
        Guard g(*this);
        g.step();
        ast::TypeAnnot t;
        t.loc = cur().loc;
        size_t begin = cur().offset;
        if (at(Tok::LParen)) {
            Loc open = advance().loc;
            t.is_tuple = true;
            do {
                if (at(Tok::RParen)) break;
                t.elems.push_back(type_annot());
            } while (accept(Tok::Comma));
            expect_close(Tok::RParen, "expected ')' to close the tuple type", open, "(");
        } else {
            t.dtype = expect(Tok::Ident, "expected a type (f32, f64, i32, bool, a shape such "
                                         "as f32[4, 64], or a tuple of types)").text;
            if (at(Tok::LBracket)) {
                Loc open = advance().loc;
                if (!at(Tok::RBracket)) {
                    do {
                        t.shape.push_back(expression());
                    } while (accept(Tok::Comma) && !at(Tok::RBracket));
                }
                expect_close(Tok::RBracket, "expected ']' to close the shape", open, "[");
            }
        }
        t.loc = span(begin, t.loc);
        return t;
    }

    /** After 'fn': IDENT '(' [ param { ',' param } [','] ')' into d.name and d.params; a param
     *  is IDENT, or IDENT ':' type when "typed" (extern fns). */
    void fn_signature(ast::Decl &d, bool typed) {
        d.name = expect(Tok::Ident, "expected a function name after 'fn'").text;
        d.name_loc = prev().loc;
        Loc open = expect(Tok::LParen, "expected '(' and the parameter list after the "
                                       "function name").loc;
        if (!at(Tok::RParen)) {
            do {
                if (at(Tok::RParen)) break;
                ast::Param p;
                p.name = expect(Tok::Ident, "expected a parameter name").text;
                p.loc = prev().loc;
                if (typed) {
                    expect(Tok::Colon, "expected ':' and a type after the parameter name "
                                       "(extern parameters are typed)");
                    p.has_type = true;
                    p.type = type_annot();
                }
                d.params.push_back(std::move(p));
            } while (accept(Tok::Comma));
        }
        expect_close(Tok::RParen, "expected ')' to close the parameter list", open, "(");
    }

    // fn    := 'fn' IDENT '(' [ IDENT { ',' IDENT } ] ')' ( '=' expr | block )
    // block := '{' { stmt sep } '}'
    // stmt  := 'let' ( IDENT | '(' IDENT { ',' IDENT } ')' ) '=' expr | 'return' expr
    ast::Decl fn_decl() {
        ast::Decl d = start(ast::DeclKind::Fn);
        advance();
        fn_signature(d, /*typed=*/false);
        if (accept(Tok::Assign)) {
            ast::FnStmt s;
            s.kind = ast::FnStmt::Return;
            s.loc = cur().loc;
            s.value = expression();
            s.loc = s.value->loc;
            d.body.push_back(std::move(s));
            return d;
        }
        if (!at(Tok::LBrace)) fail("expected '=' or '{' after the parameter list");
        Loc brace = advance().loc;
        ++open_braces_;
        skip_separators();
        while (!at(Tok::RBrace)) {
            if (at(Tok::Eof)) {
                diag_.error(error_loc(), "expected '}' to close the function body");
                diag_.note(brace, "to match this '{'");
                throw ParseFailure{};
            }
            d.body.push_back(fn_statement());
            if (!at(Tok::RBrace) && !at(Tok::Newline) && !at(Tok::Semi))
                fail(std::string("expected end of line or ';' after the statement, found ") +
                     tok_name(cur().kind));
            skip_separators();
        }
        advance();
        --open_braces_;
        return d;
    }

    ast::FnStmt fn_statement() {
        ast::FnStmt s;
        s.loc = cur().loc;
        depth_ = 0;
        if (accept(Tok::KwReturn)) {
            s.kind = ast::FnStmt::Return;
            s.value = expression();
            return s;
        }
        if (!accept(Tok::KwLet)) fail("expected 'let' or 'return' in the function body");
        s.kind = ast::FnStmt::Let;
        if (at(Tok::LParen)) {
            Loc open = advance().loc;
            do {
                if (at(Tok::RParen)) break;
                s.names.push_back(expect(Tok::Ident, "expected a name in the let tuple").text);
                s.name_locs.push_back(prev().loc);
            } while (accept(Tok::Comma));
            expect_close(Tok::RParen, "expected ')' to close the let tuple", open, "(");
            if (s.names.empty()) fail_at(open, "a let tuple needs at least one name");
        } else {
            s.names.push_back(expect(Tok::Ident, "expected a name after 'let'").text);
            s.name_locs.push_back(prev().loc);
        }
        expect(Tok::Assign, "expected '=' after the let name");
        s.value = expression();
        return s;
    }

    // emit := 'emit' STRING [ '[' expr { ',' expr } ']' ] '{' [ field { ',' field } [','] ] '}'
    //         [ 'when' expr ]
    // field := ( IDENT | keyword ) ':' expr
    // Line breaks are allowed after '{' and ',', before '}', and between '}' and 'when' (a guard
    // may start the next line).
    ast::Decl emit_decl() {
        ast::Decl d = start(ast::DeclKind::Emit);
        advance();
        d.name = expect(Tok::String, "expected the stream name as a string after 'emit' "
                                     "(emit \"train\"[i] { … })").text;
        d.name_loc = prev().loc;
        if (at(Tok::LBracket)) {
            Loc open = advance().loc;
            d.has_pattern = true;
            if (!at(Tok::RBracket)) {
                do {
                    ast::PatternItem p;
                    p.expr = expression();
                    p.loc = p.expr->loc;
                    d.pattern.push_back(std::move(p));
                } while (accept(Tok::Comma) && !at(Tok::RBracket));
            }
            expect_close(Tok::RBracket, "expected ']' to close the emit's dims", open, "[");
        }
        Loc brace = expect(Tok::LBrace, "expected '{' and the record fields after the stream").loc;
        ++open_braces_;
        skip_newlines();
        while (!at(Tok::RBrace)) {
            // A field name is a JSON key, so a keyword followed by ':' is one too (`return:`).
            std::string key;
            if (is_keyword(cur().kind) && peek().kind == Tok::Colon) {
                key = tok_name(cur().kind);
                key = key.substr(1, key.size() - 2);  // tok_name quotes it: 'return'
                advance();
            } else {
                key = expect(Tok::Ident, "expected a field name in the emit record").text;
            }
            Loc key_loc = prev().loc;
            expect(Tok::Colon, "expected ':' after the field name");
            depth_ = 0;
            ExprPtr v = expression();
            d.fields.emplace_back(std::move(key), std::move(v));
            d.field_locs.push_back(key_loc);
            skip_newlines();
            if (!accept(Tok::Comma)) break;
            skip_newlines();
        }
        expect_close(Tok::RBrace, "expected ',' or '}' after the record field", brace, "{");
        --open_braces_;
        // `when` cannot start a declaration, so a line starting with it continues the emit.
        int ahead = 0;
        while (peek(ahead).kind == Tok::Newline) ++ahead;
        if (peek(ahead).kind == Tok::KwWhen) {
            skip_newlines();
            advance();
            depth_ = 0;
            d.guard = expression();
        }
        return d;
    }

    // save := 'save' expr 'to' STRING
    ast::Decl save_decl() {
        ast::Decl d = start(ast::DeclKind::Save);
        advance();
        d.value = expression();
        expect(Tok::KwTo, "expected 'to' and a file name after the saved value");
        d.module = expect(Tok::String, "expected a quoted file name after 'to'").text;
        d.name_loc = prev().loc;
        return d;
    }

    // load := 'load' IDENT ':' type 'from' STRING
    ast::Decl load_decl() {
        ast::Decl d = start(ast::DeclKind::Load);
        advance();
        d.name = expect(Tok::Ident, "expected a tensor name after 'load'").text;
        d.name_loc = prev().loc;
        if (at(Tok::KwFrom))
            fail("expected ':' and the type of the loaded tensor (load w : f32[4, 64] from "
                 "\"w.npy\")");
        expect(Tok::Colon, "expected ':' and the type of the loaded tensor");
        d.has_type = true;
        d.type = type_annot();
        expect(Tok::KwFrom, "expected 'from' and a file name after the type");
        d.module = expect(Tok::String, "expected a quoted file name after 'from'").text;
        return d;
    }

    // extern := 'extern' STRING 'fn' IDENT '(' [ param { ',' param } ] ')' '->' type
    // param  := IDENT ':' type
    ast::Decl extern_decl() {
        ast::Decl d = start(ast::DeclKind::Extern);
        advance();
        d.module = expect(Tok::String, "expected the header path as a string after 'extern'")
                       .text;
        expect(Tok::KwFn, "expected 'fn' after the header path");
        fn_signature(d, /*typed=*/true);
        expect(Tok::Arrow, "expected '->' and the result type after the parameter list");
        d.has_type = true;
        d.type = type_annot();
        return d;
    }

    // ---- expressions ------------------------------------------------------

    ExprPtr node(ExprKind kind, Loc loc) {
        auto e = std::make_shared<Expr>();
        e->kind = kind;
        e->loc = loc;
        return e;
    }

    /** A binary node whose range starts at byte "begin" (the left operand as
     *  written, including its parentheses) and ends at the last token read. */
    ExprPtr binary(OpKind op, ExprPtr a, ExprPtr b, size_t begin, Loc begin_loc) {
        ExprPtr e = node(ExprKind::Binary, begin_loc);
        e->loc = span(begin, begin_loc);
        e->op = op;
        e->args = {std::move(a), std::move(b)};
        return e;
    }

    // expr := or
    ExprPtr expression() {
        if (at(Tok::Newline) || at(Tok::Eof) || at(Tok::Semi)) fail("expected expression");
        return or_expr();
    }

    // or := and { '||' and }
    ExprPtr or_expr() {
        Guard g(*this);
        size_t begin = cur().offset;
        Loc begin_loc = cur().loc;
        ExprPtr e = and_expr();
        while (at(Tok::OrOr)) {
            advance();
            g.step();
            e = binary(OpKind::Or, e, and_expr(), begin, begin_loc);
        }
        return e;
    }

    // and := cmp { '&&' cmp }
    ExprPtr and_expr() {
        Guard g(*this);
        size_t begin = cur().offset;
        Loc begin_loc = cur().loc;
        ExprPtr e = comparison();
        while (at(Tok::AndAnd)) {
            advance();
            g.step();
            e = binary(OpKind::And, e, comparison(), begin, begin_loc);
        }
        return e;
    }

    static bool comparison_op(Tok k, OpKind *op) {
        switch (k) {
        case Tok::Lt: *op = OpKind::Lt; return true;
        case Tok::Le: *op = OpKind::Le; return true;
        case Tok::Gt: *op = OpKind::Gt; return true;
        case Tok::Ge: *op = OpKind::Ge; return true;
        case Tok::EqEq: *op = OpKind::Eq; return true;
        case Tok::Ne: *op = OpKind::Ne; return true;
        default: return false;
        }
    }

    // cmp := add [ ( '<' | '<=' | '>' | '>=' | '==' | '!=' ) add ]   (non-associative)
    ExprPtr comparison() {
        Guard g(*this);
        size_t begin = cur().offset;
        Loc begin_loc = cur().loc;
        ExprPtr e = additive();
        OpKind op;
        if (comparison_op(cur().kind, &op)) {
            advance();
            g.step();
            e = binary(op, e, additive(), begin, begin_loc);
            if (comparison_op(cur().kind, &op))
                fail("comparisons cannot be chained; combine them with '&&' (a < b && b < c)");
        }
        return e;
    }

    // add := mul { ( '+' | '-' ) mul }
    ExprPtr additive() {
        Guard g(*this);
        size_t begin = cur().offset;
        Loc begin_loc = cur().loc;
        ExprPtr e = multiplicative();
        while (at(Tok::Plus) || at(Tok::Minus)) {
            OpKind op = advance().kind == Tok::Plus ? OpKind::Add : OpKind::Sub;
            g.step();
            e = binary(op, e, multiplicative(), begin, begin_loc);
        }
        return e;
    }

    // mul := unary { ( '*' | '/' | '%' | '@' ) unary }
    ExprPtr multiplicative() {
        Guard g(*this);
        size_t begin = cur().offset;
        Loc begin_loc = cur().loc;
        ExprPtr e = unary();
        while (true) {
            OpKind op;
            switch (cur().kind) {
            case Tok::Star: op = OpKind::Mul; break;
            case Tok::Slash: op = OpKind::Div; break;
            case Tok::Percent: op = OpKind::Mod; break;
            case Tok::At: op = OpKind::MatMul; break;
            default: return e;
            }
            advance();
            g.step();
            e = binary(op, e, unary(), begin, begin_loc);
        }
    }

    // unary := ( '-' | '!' | '+' ) unary | power
    ExprPtr unary() {
        Guard g(*this);
        g.step();
        OpKind op;
        switch (cur().kind) {
        case Tok::Minus: op = OpKind::Neg; break;
        case Tok::Bang: op = OpKind::Not; break;
        case Tok::Plus: op = OpKind::Plus; break;
        default: return power();
        }
        Loc loc = advance().loc;
        size_t begin = prev().offset;
        ExprPtr operand = unary();
        ExprPtr e = node(ExprKind::Unary, loc);
        e->op = op;
        e->args = {std::move(operand)};
        e->loc = span(begin, loc);
        return e;
    }

    // power := postfix [ '**' unary ]      (right-associative; -x**2 = -(x**2))
    ExprPtr power() {
        size_t begin = cur().offset;
        Loc begin_loc = cur().loc;
        ExprPtr base = postfix();
        if (!at(Tok::StarStar)) return base;
        advance();
        return binary(OpKind::Pow, base, unary(), begin, begin_loc);
    }

    // postfix := primary { '(' args ')' | '[' index { ',' index } ']' | '.' IDENT }
    ExprPtr postfix() {
        Guard g(*this);
        size_t begin = cur().offset;
        Loc begin_loc = cur().loc;
        ExprPtr e = primary();
        while (true) {
            if (at(Tok::LParen)) {
                if (e->kind != ExprKind::Name && e->kind != ExprKind::Member)
                    fail("only a function name (f or module.f) can be called");
                g.step();
                e = call(e, begin, begin_loc);
            } else if (at(Tok::LBracket)) {
                g.step();
                e = index(e, begin, begin_loc);
            } else if (at(Tok::Dot)) {
                if (e->kind != ExprKind::Name && e->kind != ExprKind::Member)
                    fail("'.' can only follow a module name (nn.linear)");
                advance();
                g.step();
                ExprPtr m = node(ExprKind::Member, e->loc);
                m->name = expect(Tok::Ident, "expected a name after '.'").text;
                m->args = {e};
                m->loc = span(begin, begin_loc);
                e = m;
            } else {
                return e;
            }
        }
    }

    // args := [ arg { ',' arg } [','] ];  arg := expr | IDENT '=' expr
    ExprPtr call(ExprPtr callee, size_t begin, Loc begin_loc) {
        Loc open = advance().loc;
        ExprPtr e = node(ExprKind::Call, callee->loc);
        e->args.push_back(callee);
        while (!at(Tok::RParen)) {
            if (at(Tok::Ident) && peek().kind == Tok::Assign) {
                ast::KeywordArg kw;
                kw.name = cur().text;
                kw.loc = advance().loc;
                advance();
                kw.value = expression();
                e->kwargs.push_back(std::move(kw));
            } else {
                if (!e->kwargs.empty())
                    fail("positional argument after a keyword argument");
                e->args.push_back(expression());
            }
            if (!accept(Tok::Comma)) break;
        }
        expect_close(Tok::RParen, "expected ')' to close the argument list", open, "(");
        e->loc = span(begin, begin_loc);
        return e;
    }

    // index := expr | [ expr ] ':' [ expr ]
    ExprPtr index(ExprPtr base, size_t begin, Loc begin_loc) {
        Loc open = advance().loc;
        ExprPtr e = node(ExprKind::Index, base->loc);
        e->args.push_back(base);
        if (at(Tok::RBracket)) fail("expected an index inside '[ ]'");
        while (true) {
            ast::IndexItem item;
            item.loc = cur().loc;
            size_t item_begin = cur().offset;
            if (!at(Tok::Colon)) item.value = expression();
            if (accept(Tok::Colon)) {
                item.is_slice = true;
                item.lo = std::move(item.value);
                item.value = nullptr;
                if (!at(Tok::Comma) && !at(Tok::RBracket)) item.hi = expression();
            }
            item.loc = span(item_begin, item.loc);
            e->indices.push_back(std::move(item));
            if (!accept(Tok::Comma) || at(Tok::RBracket)) break;
        }
        expect_close(Tok::RBracket, "expected ']' to close index list", open, "[");
        e->loc = span(begin, begin_loc);
        return e;
    }

    // primary := INT | FLOAT | 'true' | 'false' | STRING | IDENT
    //          | '(' expr ')' | '(' expr ',' [ expr { ',' expr } [','] ] ')'
    //          | '[' [ expr { ',' expr } [','] ] ']'
    ExprPtr primary() {
        const Token &t = cur();
        switch (t.kind) {
        case Tok::Int: {
            ExprPtr e = node(ExprKind::IntLit, t.loc);
            e->int_value = t.int_value;
            e->text = t.text;
            advance();
            return e;
        }
        case Tok::Float: {
            ExprPtr e = node(ExprKind::FloatLit, t.loc);
            e->float_value = t.float_value;
            e->text = t.text;
            advance();
            return e;
        }
        case Tok::KwTrue:
        case Tok::KwFalse: {
            ExprPtr e = node(ExprKind::BoolLit, t.loc);
            e->bool_value = t.kind == Tok::KwTrue;
            e->text = t.kind == Tok::KwTrue ? "true" : "false";
            advance();
            return e;
        }
        case Tok::String: {
            ExprPtr e = node(ExprKind::StrLit, t.loc);
            e->text = t.text;
            advance();
            return e;
        }
        case Tok::Ident: {
            ExprPtr e = node(ExprKind::Name, t.loc);
            e->name = t.text;
            advance();
            return e;
        }
        case Tok::LParen: return paren_or_tuple();
        case Tok::LBracket: return array_literal();
        case Tok::Error: throw ParseFailure{};
        default: fail("expected expression" + keyword_hint());
        }
    }

    ExprPtr paren_or_tuple() {
        size_t begin = cur().offset;
        Loc open = advance().loc;
        if (at(Tok::RParen)) fail("expected expression inside '( )'");
        ExprPtr first = expression();
        if (!at(Tok::Comma)) {
            expect_close(Tok::RParen, "expected ')' to close the parenthesized expression",
                         open, "(");
            return first;
        }
        ExprPtr e = node(ExprKind::Tuple, open);
        e->args.push_back(first);
        while (accept(Tok::Comma) && !at(Tok::RParen)) e->args.push_back(expression());
        expect_close(Tok::RParen, "expected ')' to close the tuple", open, "(");
        e->loc = span(begin, open);
        return e;
    }

    ExprPtr array_literal() {
        size_t begin = cur().offset;
        Loc open = advance().loc;
        ExprPtr e = node(ExprKind::ArrayLit, open);
        while (!at(Tok::RBracket)) {
            e->args.push_back(expression());
            if (!accept(Tok::Comma)) break;
        }
        expect_close(Tok::RBracket, "expected ']' to close the array literal", open, "[");
        e->loc = span(begin, open);
        return e;
    }

    Lexer lexer_;
    std::deque<Token> toks_;  // every token lexed so far (a deque: references stay valid)
    size_t pos_ = 0;
    int file_;
    Diagnostics &diag_;
    int depth_ = 0;        // expression nesting (kMaxNesting)
    int open_braces_ = 0;  // '{' of the current declaration not yet closed
};

}  // namespace

ast::Module parse(const SourceManager &sm, int file, Diagnostics &diag) {
    return Parser(sm, file, diag).run();
}

}  // namespace trlc
