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

#include "frontend/parser_impl.h"

namespace trlc {

namespace parser_detail {

// module := { separator } { decl separator { separator } } EOF
ast::Module Parser::run() {
    ast::Module m;
    m.file = file_;
    int errors_at_start = diag_.error_count();
    while (true) {
        skip_separators();
        if (at(Tok::Eof)) break;
        if (diag_.error_count() - errors_at_start > kMaxParseErrors) break;
        if (at_region()) {
            region(m);
            continue;
        }
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

// `region` is not a keyword (a tensor may be called region): a declaration starting with the
// name region followed by a string is a region.
bool Parser::at_region() { return at(Tok::Ident) && cur().text == "region" && peek(1).kind == Tok::String; }

// region := "region" STRING "{" { sep } { ( decl | region ) sep { sep } } "}"
void Parser::region(ast::Module &m) {
    ast::Region r;
    r.loc = advance().loc;
    r.first_line = r.loc.line;
    r.name = advance().text;
    if (r.name.empty()) diag_.error(prev().loc, "a region needs a name: region \"update\" { … }");
    if (!at(Tok::LBrace)) {
        try {
            fail("expected '{' after the region's name (region \"update\" { equations, emits, saves })");
        } catch (const ParseFailure &) {
            synchronize(0);
            return;
        }
    }
    Loc open = advance().loc;
    const size_t index = m.regions.size();
    m.regions.push_back(r);
    while (true) {
        skip_separators();
        if (at(Tok::RBrace)) {
            m.regions[index].last_line = cur().loc.line;
            advance();
            break;
        }
        if (at(Tok::Eof)) {
            diag_.error(error_loc(), "expected '}' to close the region");
            diag_.note(open, "to match this '{'");
            m.regions[index].last_line = cur().loc.line;
            break;
        }
        if (at_region()) {
            region(m);
            continue;
        }
        try {
            ast::Decl d = declaration();
            if (!at(Tok::RBrace)) end_of_declaration();
            m.decls.push_back(std::move(d));
        } catch (const ParseFailure &) {
            synchronize(open_braces_);
        }
    }
}

const Token &Parser::peek(int n) {
    while (toks_.size() <= pos_ + n && toks_.back().kind != Tok::Eof) toks_.push_back(lexer_.next());
    return toks_[std::min(pos_ + n, toks_.size() - 1)];
}

/** Move to the next token; returns the one moved past (valid until the next advance). */
const Token &Parser::advance() {
    peek(1);
    size_t old = pos_;
    if (pos_ + 1 < toks_.size()) ++pos_;
    return toks_[old];
}

bool Parser::accept(Tok k) {
    if (!at(k)) return false;
    advance();
    return true;
}

void Parser::skip_separators() {
    while (at(Tok::Newline) || at(Tok::Semi)) advance();
}

void Parser::skip_newlines() {
    while (at(Tok::Newline)) advance();
}

/** Where an "expected …" error points: the current token, or just after
 *  the previous one when the current token is a line end or the file end. */
Loc Parser::error_loc() const {
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
std::string Parser::keyword_hint() const {
    Tok k = cur().kind;
    if (k < Tok::KwImport || k > Tok::KwFalse || k == Tok::KwTrue || k == Tok::KwFalse) return "";
    if (k == Tok::KwLet || k == Tok::KwReturn)
        return ", found '" + std::string(cur().text) +
               "' (let and return belong in a fn block: "
               "fn f(x) { let y = …; return y })";
    return ", found the keyword '" + std::string(cur().text) + "' (keywords are reserved and cannot be used as names)";
}

[[noreturn]] void Parser::fail(const std::string &msg) {
    if (!at(Tok::Error)) {
        diag_.error(error_loc(), msg);
        conditional_note();
    }
    throw ParseFailure{};
}

/** After a syntax error at the name `if` following an expression (Python's `a if c else
 *  b`): a note saying how the language writes it. */
void Parser::conditional_note() {
    if (at(Tok::Ident) && cur().text == "if" && pos_ > 0)
        diag_.note(cur().loc, "a conditional expression is written where(c, a, b), not "
                              "'a if c else b' (elementwise; both a and b are computed)");
}

[[noreturn]] void Parser::fail_at(Loc loc, const std::string &msg) {
    diag_.error(loc, msg);
    throw ParseFailure{};
}

const Token &Parser::expect(Tok k, const std::string &msg) {
    if (!at(k)) fail(msg);
    return advance();
}

/** Expect the closing bracket "k"; on failure add a note at the opener. */
void Parser::expect_close(Tok k, const std::string &msg, Loc open, const char *open_text) {
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
void Parser::synchronize(int braces) {
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

bool Parser::is_decl_keyword(Tok k) {
    switch (k) {
    case Tok::KwDim:
    case Tok::KwConst:
    case Tok::KwFn:
    case Tok::KwImport:
    case Tok::KwEmit:
    case Tok::KwSave:
    case Tok::KwLoad:
    case Tok::KwExtern: return true;
    default: return false;
    }
}

void Parser::end_of_declaration() {
    if (at(Tok::Newline) || at(Tok::Semi) || at(Tok::Eof)) return;
    fail(std::string("expected end of line after the declaration, found ") + tok_name(cur().kind));
}

Loc Parser::span(size_t begin_offset, Loc begin) const {
    const Token &last = prev();
    size_t end = last.offset + static_cast<size_t>(last.loc.length);
    Loc l = begin;
    l.length = end > begin_offset ? static_cast<int>(end - begin_offset) : 1;
    return l;
}

// ---- nesting guard ----------------------------------------------------

void Parser::enter() {
    if (++depth_ > kMaxNesting) {
        fail_at(cur().loc, "expression nested too deeply (more than " + std::to_string(kMaxNesting) + " levels)");
    }
}

}  // namespace parser_detail

ast::Module parse(const SourceManager &sm, int file, Diagnostics &diag) {
    return parser_detail::Parser(sm, file, diag).run();
}

}  // namespace trlc
