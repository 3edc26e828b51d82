#pragma once
// lexer — `.trl` bytes to tokens, with the newline rule applied.
//
// Tokens carry a Loc (file, line, column, length in bytes).  Comments (`// …`,
// `/* … */`) and blanks vanish.  A Newline token is produced only where a line
// break ends a declaration or a fn statement:
//   * never inside ( ) or [ ] (braces do not count: fn blocks are line based);
//   * never after a token that cannot end an expression: a binary operator,
//     `=`, `,`, `:`, `(`, `[`, `{`, `->`, `!`, `.`;
//   * never twice in a row, never after `;`, never before the first token.
// Recovery rule: a declaration keyword (dim const fn import emit save load
// extern) first on its line closes brackets left open, so an unclosed `(`
// costs one error instead of swallowing the rest of the file.
//
// Lexical errors are diagnostics ("invalid character '\x01'", "unterminated
// string literal", "unterminated block comment", "integer literal is too
// large", "floating-point literal is out of range", "invalid escape sequence
// '\q' in string literal").  Invalid characters and unterminated strings leave
// an Error token so the parser can skip the declaration without a second,
// cascading message.  After kMaxLexErrors errors lexing stops (binary input).
#include <cstdint>
#include <string>
#include <vector>

#include "support/diagnostics.h"
#include "support/source.h"

namespace trlc {

enum class Tok {
    Eof,
    Newline,
    Error,
    Ident,
    Int,
    Float,
    String,
    // keywords
    KwImport,
    KwAs,
    KwDim,
    KwConst,
    KwFn,
    KwLet,
    KwReturn,
    KwEmit,
    KwSave,
    KwTo,
    KwLoad,
    KwFrom,
    KwExtern,
    KwWhen,
    KwOtherwise,
    KwTrue,
    KwFalse,
    // operators and punctuation
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    At,
    StarStar,
    Lt,
    Le,
    Gt,
    Ge,
    EqEq,
    Ne,
    AndAnd,
    OrOr,
    Bang,
    Assign,
    Colon,
    Comma,
    Semi,
    Dot,
    Arrow,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
};

/** One token.  "text" is the spelling for Ident/Int/Float, the decoded
 *  contents for String; "offset" is the byte offset of its first character. */
struct Token {
    Tok kind = Tok::Eof;
    Loc loc;
    size_t offset = 0;
    std::string text;
    int64_t int_value = 0;
    double float_value = 0.0;
};

constexpr int kMaxLexErrors = 100;

/** Human-readable spelling of a token kind for messages: "']'", "identifier". */
const char *tok_name(Tok k);

/** Produces the tokens of one file on demand, so lexical and syntax errors
 *  are reported in source order. */
class Lexer {
public:
    Lexer(const SourceManager &sm, int file, Diagnostics &diag);
    /** The next token; Eof (again and again) at the end of the file. */
    Token next();

private:
    Token scan();
    Loc loc_at(size_t offset, size_t length) const;
    void error(Loc loc, const std::string &msg);
    void skip_blanks_and_comments();
    void block_comment();
    Token make(Tok kind, size_t begin);
    Token invalid_character();
    Token identifier();
    Token number();
    Token string_literal();

    const std::string &text_;
    int file_;
    Diagnostics &diag_;
    size_t pos_ = 0;
    int line_ = 1;
    size_t line_start_ = 0;
    int depth_ = 0;                // open ( and [
    int errors_ = 0;               // lexical errors so far
    Tok last_ = Tok::Eof;          // last token returned (Eof: none yet)
    bool line_has_token_ = false;  // a token was returned on the current line
    bool has_pending_ = false;     // "pending_" follows a synthetic Newline
    Token pending_;
};

/** Lex the whole file "file" of "sm".  The result always ends with one Eof token. */
std::vector<Token> lex(const SourceManager &sm, int file, Diagnostics &diag);

}  // namespace trlc
