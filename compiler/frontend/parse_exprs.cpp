// parse_exprs — the Parser's expression rules (frontend/parser_impl.h), one method per
// precedence level from `or` down to primary expressions, calls, indexing, tuples and array
// literals.  Every step that makes the tree one level deeper goes through the nesting guard
// (parser.cpp), so no expression can overflow the stack.
#include "frontend/parser_impl.h"

namespace trlc::parser_detail {

// ---- expressions ------------------------------------------------------

ExprPtr Parser::node(ExprKind kind, Loc loc) {
    auto e = std::make_shared<Expr>();
    e->kind = kind;
    e->loc = loc;
    return e;
}

/** A binary node whose range starts at byte "begin" (the left operand as
 *  written, including its parentheses) and ends at the last token read. */
ExprPtr Parser::binary(OpKind op, ExprPtr a, ExprPtr b, size_t begin, Loc begin_loc) {
    ExprPtr e = node(ExprKind::Binary, begin_loc);
    e->loc = span(begin, begin_loc);
    e->op = op;
    e->args = {std::move(a), std::move(b)};
    return e;
}

// expr := or
ExprPtr Parser::expression() {
    if (at(Tok::Newline) || at(Tok::Eof) || at(Tok::Semi)) fail("expected expression");
    return or_expr();
}

// or := and { '||' and }
ExprPtr Parser::or_expr() {
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
ExprPtr Parser::and_expr() {
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

bool Parser::comparison_op(Tok k, OpKind *op) {
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
ExprPtr Parser::comparison() {
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
ExprPtr Parser::additive() {
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
ExprPtr Parser::multiplicative() {
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
ExprPtr Parser::unary() {
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
ExprPtr Parser::power() {
    size_t begin = cur().offset;
    Loc begin_loc = cur().loc;
    ExprPtr base = postfix();
    if (!at(Tok::StarStar)) return base;
    advance();
    return binary(OpKind::Pow, base, unary(), begin, begin_loc);
}

// postfix := primary { '(' args ')' | '[' index { ',' index } ']' | '.' IDENT }
ExprPtr Parser::postfix() {
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
ExprPtr Parser::call(ExprPtr callee, size_t begin, Loc begin_loc) {
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
            if (!e->kwargs.empty()) fail("positional argument after a keyword argument");
            e->args.push_back(expression());
        }
        if (!accept(Tok::Comma)) break;
    }
    expect_close(Tok::RParen, "expected ')' to close the argument list", open, "(");
    e->loc = span(begin, begin_loc);
    return e;
}

// index := expr | [ expr ] ':' [ expr ]
ExprPtr Parser::index(ExprPtr base, size_t begin, Loc begin_loc) {
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
ExprPtr Parser::primary() {
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

ExprPtr Parser::paren_or_tuple() {
    size_t begin = cur().offset;
    Loc open = advance().loc;
    if (at(Tok::RParen)) fail("expected expression inside '( )'");
    ExprPtr first = expression();
    if (!at(Tok::Comma)) {
        expect_close(Tok::RParen, "expected ')' to close the parenthesized expression", open, "(");
        return first;
    }
    ExprPtr e = node(ExprKind::Tuple, open);
    e->args.push_back(first);
    while (accept(Tok::Comma) && !at(Tok::RParen)) e->args.push_back(expression());
    expect_close(Tok::RParen, "expected ')' to close the tuple", open, "(");
    e->loc = span(begin, open);
    return e;
}

ExprPtr Parser::array_literal() {
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

}  // namespace trlc::parser_detail
