// lexer_test — token kinds, locations, the newline rule, and every lexical error.
#include "frontend/lexer.h"

#include <gtest/gtest.h>

#include <sstream>

namespace trlc {
namespace {

struct Lexed {
    std::vector<Token> toks;
    std::string diags;
    int errors = 0;
};

Lexed run(const std::string &text) {
    SourceManager sm;
    int f = sm.add("t.trl", text);
    std::ostringstream out;
    Diagnostics diag(sm, out);
    Lexed r;
    r.toks = lex(sm, f, diag);
    r.diags = out.str();
    r.errors = diag.error_count();
    return r;
}

std::vector<Tok> kinds(const std::string &text) {
    std::vector<Tok> ks;
    for (const Token &t : run(text).toks) ks.push_back(t.kind);
    return ks;
}

TEST(Lexer, EmptyFileIsJustEof) {
    EXPECT_EQ(kinds(""), std::vector<Tok>{Tok::Eof});
    EXPECT_EQ(kinds("\n\n  // only a comment\n/* and a block */\n"), std::vector<Tok>{Tok::Eof});
}

TEST(Lexer, KeywordsAndIdentifiers) {
    std::vector<Tok> want = {Tok::KwImport, Tok::KwAs,     Tok::KwDim,    Tok::KwConst, Tok::KwFn,
                             Tok::KwLet,    Tok::KwReturn, Tok::KwEmit,   Tok::KwSave,  Tok::KwTo,
                             Tok::KwLoad,   Tok::KwFrom,   Tok::KwExtern, Tok::KwWhen,  Tok::KwOtherwise,
                             Tok::KwTrue,   Tok::KwFalse,  Tok::Ident,    Tok::Ident,   Tok::Eof};
    EXPECT_EQ(kinds("import as dim const fn let return emit save to load from extern when "
                    "otherwise true false dims _x9"),
              want);
}

TEST(Lexer, Operators) {
    std::vector<Tok> want = {Tok::Plus,     Tok::Minus,    Tok::Star,   Tok::Slash,  Tok::Percent, Tok::At,
                             Tok::StarStar, Tok::Lt,       Tok::Le,     Tok::Gt,     Tok::Ge,      Tok::EqEq,
                             Tok::Ne,       Tok::AndAnd,   Tok::OrOr,   Tok::Bang,   Tok::Assign,  Tok::Colon,
                             Tok::Comma,    Tok::Semi,     Tok::Dot,    Tok::Arrow,  Tok::LParen,  Tok::RParen,
                             Tok::LBracket, Tok::RBracket, Tok::LBrace, Tok::RBrace, Tok::Eof};
    EXPECT_EQ(kinds("+ - * / % @ ** < <= > >= == != && || ! = : , ; . -> ( ) [ ] { }"), want);
}

TEST(Lexer, NumbersAndStrings) {
    Lexed r = run("42 0.99 1e-3 2.5E+4 .5 \"a\\\"b\\\\c\\n\\t\"");
    ASSERT_EQ(r.errors, 0) << r.diags;
    ASSERT_EQ(r.toks.size(), 7u);
    EXPECT_EQ(r.toks[0].kind, Tok::Int);
    EXPECT_EQ(r.toks[0].int_value, 42);
    EXPECT_EQ(r.toks[1].kind, Tok::Float);
    EXPECT_DOUBLE_EQ(r.toks[1].float_value, 0.99);
    EXPECT_EQ(r.toks[1].text, "0.99");
    EXPECT_DOUBLE_EQ(r.toks[2].float_value, 1e-3);
    EXPECT_DOUBLE_EQ(r.toks[3].float_value, 2.5e4);
    EXPECT_DOUBLE_EQ(r.toks[4].float_value, 0.5);
    EXPECT_EQ(r.toks[5].kind, Tok::String);
    EXPECT_EQ(r.toks[5].text, "a\"b\\c\n\t");
}

TEST(Lexer, LargestIntegerIsAccepted) {
    Lexed r = run("9223372036854775807");
    EXPECT_EQ(r.errors, 0);
    EXPECT_EQ(r.toks[0].int_value, INT64_MAX);
}

TEST(Lexer, Locations) {
    Lexed r = run("x = ab\n  /* c */ y[t+1]");
    // x = ab NL y [ t + 1 ]
    ASSERT_GE(r.toks.size(), 10u);
    EXPECT_EQ(r.toks[2].loc.line, 1);
    EXPECT_EQ(r.toks[2].loc.col, 5);
    EXPECT_EQ(r.toks[2].loc.length, 2);
    EXPECT_EQ(r.toks[3].kind, Tok::Newline);
    EXPECT_EQ(r.toks[3].loc.col, 7);
    EXPECT_EQ(r.toks[4].text, "y");
    EXPECT_EQ(r.toks[4].loc.line, 2);
    EXPECT_EQ(r.toks[4].loc.col, 11);
    EXPECT_EQ(r.toks[8].kind, Tok::Int);
    EXPECT_EQ(r.toks[8].loc.col, 15);
}

TEST(Lexer, NewlineEndsADeclaration) {
    EXPECT_EQ(kinds("a\nb"), (std::vector<Tok>{Tok::Ident, Tok::Newline, Tok::Ident, Tok::Eof}));
    // Several blank lines and comment lines give one Newline.
    EXPECT_EQ(kinds("a\n\n// c\n\nb\n"),
              (std::vector<Tok>{Tok::Ident, Tok::Newline, Tok::Ident, Tok::Newline, Tok::Eof}));
}

TEST(Lexer, NoNewlineInsideBrackets) {
    EXPECT_EQ(kinds("f(a,\nb\n)"),
              (std::vector<Tok>{Tok::Ident, Tok::LParen, Tok::Ident, Tok::Comma, Tok::Ident, Tok::RParen, Tok::Eof}));
    EXPECT_EQ(kinds("[a\n]"), (std::vector<Tok>{Tok::LBracket, Tok::Ident, Tok::RBracket, Tok::Eof}));
}

TEST(Lexer, NoNewlineAfterAnOperator) {
    for (const char *op :
         {"+", "-", "*", "/", "%", "@", "**", "<", "<=", ">", ">=", "==", "!=", "&&", "||", "=", ",", ":", "->"}) {
        std::vector<Tok> ks = kinds(std::string("a ") + op + "\nb");
        EXPECT_EQ(ks.size(), 4u) << op;
        EXPECT_NE(ks[2], Tok::Newline) << op;
    }
    // '{' continues; '}' ends.
    EXPECT_EQ(kinds("{\na\n}\nb"), (std::vector<Tok>{Tok::LBrace, Tok::Ident, Tok::Newline, Tok::RBrace, Tok::Newline,
                                                     Tok::Ident, Tok::Eof}));
}

TEST(Lexer, NoNewlineAfterSemicolonOrAtStart) {
    EXPECT_EQ(kinds("\n\na;\nb"), (std::vector<Tok>{Tok::Ident, Tok::Semi, Tok::Ident, Tok::Eof}));
}

TEST(Lexer, DeclarationKeywordClosesOpenBrackets) {
    std::vector<Tok> ks = kinds("x = f(a,\ndim t < T");
    std::vector<Tok> want = {Tok::Ident,   Tok::Assign, Tok::Ident, Tok::LParen, Tok::Ident, Tok::Comma,
                             Tok::Newline, Tok::KwDim,  Tok::Ident, Tok::Lt,     Tok::Ident, Tok::Eof};
    EXPECT_EQ(ks, want);
}

TEST(Lexer, InvalidCharacter) {
    Lexed r = run("x = 1 $ 2");
    EXPECT_EQ(r.errors, 1);
    EXPECT_NE(r.diags.find("t.trl:1:7: error: invalid character '$'"), std::string::npos) << r.diags;
    EXPECT_EQ(r.toks[3].kind, Tok::Error);
}

TEST(Lexer, InvalidNonPrintableByteIsShownAsHex) {
    Lexed r = run(std::string("a \x01"));
    EXPECT_NE(r.diags.find("error: invalid character '\\x01'"), std::string::npos) << r.diags;
}

TEST(Lexer, Utf8SequenceIsOneError) {
    Lexed r = run("caf\xC3\xA9 = 1");
    EXPECT_EQ(r.errors, 1);
    EXPECT_NE(r.diags.find("invalid character '\\xC3\\xA9'"), std::string::npos) << r.diags;
}

TEST(Lexer, UnterminatedString) {
    Lexed r = run("emit \"train\n");
    EXPECT_EQ(r.errors, 1);
    EXPECT_NE(r.diags.find("t.trl:1:6: error: unterminated string literal"), std::string::npos) << r.diags;
}

TEST(Lexer, InvalidEscape) {
    Lexed r = run("\"a\\qb\"");
    EXPECT_NE(r.diags.find("1:3: error: invalid escape sequence '\\q' in string literal"), std::string::npos)
        << r.diags;
}

TEST(Lexer, UnterminatedBlockComment) {
    Lexed r = run("x = 1\n  /* never\nclosed");
    EXPECT_EQ(r.errors, 1);
    EXPECT_NE(r.diags.find("t.trl:2:3: error: unterminated block comment"), std::string::npos) << r.diags;
}

TEST(Lexer, IntegerTooLarge) {
    Lexed r = run("9223372036854775808");
    EXPECT_EQ(r.errors, 1);
    EXPECT_NE(r.diags.find("1:1: error: integer literal is too large"), std::string::npos);
}

TEST(Lexer, FloatOutOfRange) {
    Lexed r = run("x = 1e400");
    EXPECT_EQ(r.errors, 1);
    EXPECT_NE(r.diags.find("1:5: error: floating-point literal is out of range"), std::string::npos);
    // Tiny values round to zero or a subnormal, as in Python: no error.
    EXPECT_EQ(run("x = 1e-400").errors, 0);
}

TEST(Lexer, BinaryGarbageStopsAfterTheErrorCap) {
    std::string junk(100000, '\x01');
    Lexed r = run(junk);
    EXPECT_EQ(r.errors, kMaxLexErrors);
    EXPECT_EQ(r.toks.back().kind, Tok::Eof);
    EXPECT_NE(r.diags.find("too many errors"), std::string::npos);
}

}  // namespace
}  // namespace trlc
