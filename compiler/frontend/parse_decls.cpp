// parse_decls — the Parser's declaration rules (frontend/parser_impl.h): import, dim, const,
// equations and their type annotations, fn (with its statements), emit, save, load, extern.
// One method per grammar rule, the rule written above it (the whole EBNF is in
// dsl/README.md §1); kept apart from the expression rules (parse_exprs.cpp), which they call.
#include "frontend/parser_impl.h"

namespace trlc::parser_detail {

// ---- declarations -----------------------------------------------------

// decl := import | dim | const | fn | emit | save | load | extern | equation
ast::Decl Parser::declaration() {
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
        // `input` and `output` are contextual: a declaration when a name follows them.
        if (cur().text == "input" && peek().kind == Tok::Ident) return input_decl();
        if (cur().text == "output" && peek().kind == Tok::Ident) return output_decl();
        return equation();
    case Tok::LParen: return equation();
    default:
        fail("expected declaration (dim, const, fn, import, emit, save, load, extern, "
             "or an equation)" +
             keyword_hint());
    }
}

ast::Decl Parser::start(ast::DeclKind kind) {
    ast::Decl d;
    d.kind = kind;
    d.loc = cur().loc;
    return d;
}

// import := 'import' ( IDENT { '.' IDENT } | STRING ) [ 'as' IDENT ]
ast::Decl Parser::import_decl() {
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
                                      "path after 'import'")
                       .text;
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
ast::Decl Parser::dim_decl() {
    ast::Decl d = start(ast::DeclKind::Dim);
    advance();
    d.name = expect(Tok::Ident, "expected a dim name after 'dim'").text;
    d.name_loc = prev().loc;
    expect(Tok::Lt, "expected '<' and a bound after the dim name (e.g. dim t < T = 100)");
    Tok after = peek().kind;
    if (at(Tok::Ident) && (after == Tok::Assign || after == Tok::Newline || after == Tok::Semi || after == Tok::Eof)) {
        d.bound = cur().text;
        d.bound_loc = advance().loc;
        if (accept(Tok::Assign)) d.value = expression();
    } else {
        if (at(Tok::Newline) || at(Tok::Eof) || at(Tok::Semi))
            fail("expected a bound after '<' (a name such as T, or an integer expression)");
        d.bound_loc = cur().loc;
        d.bound_expr = expression();
        d.bound_loc = d.bound_expr->loc;
        if (at(Tok::Assign)) fail("only a named bound can have a default value (dim t < T = 100)");
    }
    return d;
}

// const := 'const' IDENT '=' expr
ast::Decl Parser::const_decl() {
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
ast::Decl Parser::equation() {
    ast::Decl d = start(ast::DeclKind::Equation);
    if (at(Tok::LParen)) {
        Loc open = advance().loc;
        do {
            if (at(Tok::RParen)) break;
            d.targets.push_back(expect(Tok::Ident, "expected a tensor name in the tuple left-hand side").text);
            d.target_locs.push_back(prev().loc);
        } while (accept(Tok::Comma));
        expect_close(Tok::RParen, "expected ')' to close the tuple left-hand side", open, "(");
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
        expect_close(Tok::RBracket, "expected ']' to close the left-hand side pattern", open, "[");
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
ast::TypeAnnot Parser::type_annot() {
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
                                     "as f32[4, 64], or a tuple of types)")
                      .text;
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
void Parser::fn_signature(ast::Decl &d, bool typed) {
    d.name = expect(Tok::Ident, "expected a function name after 'fn'").text;
    d.name_loc = prev().loc;
    Loc open = expect(Tok::LParen, "expected '(' and the parameter list after the "
                                   "function name")
                   .loc;
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
ast::Decl Parser::fn_decl() {
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
            fail(std::string("expected end of line or ';' after the statement, found ") + tok_name(cur().kind));
        skip_separators();
    }
    advance();
    --open_braces_;
    return d;
}

ast::FnStmt Parser::fn_statement() {
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
ast::Decl Parser::emit_decl() {
    ast::Decl d = start(ast::DeclKind::Emit);
    advance();
    d.name = expect(Tok::String, "expected the stream name as a string after 'emit' "
                                 "(emit \"train\"[i] { … })")
                 .text;
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
ast::Decl Parser::save_decl() {
    ast::Decl d = start(ast::DeclKind::Save);
    advance();
    d.value = expression();
    expect(Tok::KwTo, "expected 'to' and a file name after the saved value");
    d.module = expect(Tok::String, "expected a quoted file name after 'to'").text;
    d.name_loc = prev().loc;
    return d;
}

// load := 'load' IDENT ':' type 'from' STRING
ast::Decl Parser::load_decl() {
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

// input := 'input' IDENT ':' type          (library mode: the caller supplies the value)
ast::Decl Parser::input_decl() {
    ast::Decl d = start(ast::DeclKind::Input);
    advance();
    d.name = advance().text;
    d.name_loc = prev().loc;
    expect(Tok::Colon, "expected ':' and the type of the input (input obs : f32[4])");
    d.has_type = true;
    d.type = type_annot();
    return d;
}

// output := 'output' IDENT [ '=' expr ]      (library mode: returned to the caller)
ast::Decl Parser::output_decl() {
    ast::Decl d = start(ast::DeclKind::Output);
    advance();
    d.name = advance().text;
    d.name_loc = prev().loc;
    if (accept(Tok::Assign)) {
        d.value = expression();
        return d;
    }
    auto e = std::make_shared<ast::Expr>();  // `output act`: the tensor act
    e->kind = ast::ExprKind::Name;
    e->name = d.name;
    e->loc = d.name_loc;
    d.value = e;
    return d;
}

// extern := 'extern' STRING 'fn' IDENT '(' [ param { ',' param } ] ')' '->' type
// param  := IDENT ':' type
ast::Decl Parser::extern_decl() {
    ast::Decl d = start(ast::DeclKind::Extern);
    advance();
    d.module = expect(Tok::String, "expected the header path as a string after 'extern'").text;
    expect(Tok::KwFn, "expected 'fn' after the header path");
    fn_signature(d, /*typed=*/true);
    expect(Tok::Arrow, "expected '->' and the result type after the parameter list");
    d.has_type = true;
    d.type = type_annot();
    return d;
}

}  // namespace trlc::parser_detail
