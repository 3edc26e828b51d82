// lexer — `.trl` bytes to tokens (see lexer.h for the newline rule and errors).
#include "frontend/lexer.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <unordered_map>

namespace trlc {

const char *tok_name(Tok k) {
    switch (k) {
    case Tok::Eof: return "end of file";
    case Tok::Newline: return "end of line";
    case Tok::Error: return "invalid token";
    case Tok::Ident: return "identifier";
    case Tok::Int: return "integer literal";
    case Tok::Float: return "floating-point literal";
    case Tok::String: return "string literal";
    case Tok::KwImport: return "'import'";
    case Tok::KwAs: return "'as'";
    case Tok::KwDim: return "'dim'";
    case Tok::KwConst: return "'const'";
    case Tok::KwFn: return "'fn'";
    case Tok::KwLet: return "'let'";
    case Tok::KwReturn: return "'return'";
    case Tok::KwEmit: return "'emit'";
    case Tok::KwSave: return "'save'";
    case Tok::KwTo: return "'to'";
    case Tok::KwLoad: return "'load'";
    case Tok::KwFrom: return "'from'";
    case Tok::KwExtern: return "'extern'";
    case Tok::KwWhen: return "'when'";
    case Tok::KwOtherwise: return "'otherwise'";
    case Tok::KwTrue: return "'true'";
    case Tok::KwFalse: return "'false'";
    case Tok::Plus: return "'+'";
    case Tok::Minus: return "'-'";
    case Tok::Star: return "'*'";
    case Tok::Slash: return "'/'";
    case Tok::Percent: return "'%'";
    case Tok::At: return "'@'";
    case Tok::StarStar: return "'**'";
    case Tok::Lt: return "'<'";
    case Tok::Le: return "'<='";
    case Tok::Gt: return "'>'";
    case Tok::Ge: return "'>='";
    case Tok::EqEq: return "'=='";
    case Tok::Ne: return "'!='";
    case Tok::AndAnd: return "'&&'";
    case Tok::OrOr: return "'||'";
    case Tok::Bang: return "'!'";
    case Tok::Assign: return "'='";
    case Tok::Colon: return "':'";
    case Tok::Comma: return "','";
    case Tok::Semi: return "';'";
    case Tok::Dot: return "'.'";
    case Tok::Arrow: return "'->'";
    case Tok::LParen: return "'('";
    case Tok::RParen: return "')'";
    case Tok::LBracket: return "'['";
    case Tok::RBracket: return "']'";
    case Tok::LBrace: return "'{'";
    case Tok::RBrace: return "'}'";
    }
    return "token";
}

namespace {

const std::unordered_map<std::string_view, Tok> &keywords() {
    static const std::unordered_map<std::string_view, Tok> kw = {
        {"import", Tok::KwImport}, {"as", Tok::KwAs},       {"dim", Tok::KwDim},
        {"const", Tok::KwConst},   {"fn", Tok::KwFn},       {"let", Tok::KwLet},
        {"return", Tok::KwReturn}, {"emit", Tok::KwEmit},   {"save", Tok::KwSave},
        {"to", Tok::KwTo},         {"load", Tok::KwLoad},   {"from", Tok::KwFrom},
        {"extern", Tok::KwExtern}, {"when", Tok::KwWhen},   {"otherwise", Tok::KwOtherwise},
        {"true", Tok::KwTrue},     {"false", Tok::KwFalse},
    };
    return kw;
}

/** Tokens after which a line break does not end the declaration. */
bool continues_line(Tok k) {
    switch (k) {
    case Tok::Plus:
    case Tok::Minus:
    case Tok::Star:
    case Tok::Slash:
    case Tok::Percent:
    case Tok::At:
    case Tok::StarStar:
    case Tok::Lt:
    case Tok::Le:
    case Tok::Gt:
    case Tok::Ge:
    case Tok::EqEq:
    case Tok::Ne:
    case Tok::AndAnd:
    case Tok::OrOr:
    case Tok::Bang:
    case Tok::Assign:
    case Tok::Colon:
    case Tok::Comma:
    case Tok::Dot:
    case Tok::Arrow:
    case Tok::LParen:
    case Tok::LBracket:
    case Tok::LBrace:
    case Tok::Semi:
    case Tok::Newline: return true;
    default: return false;
    }
}

bool starts_declaration(Tok k) {
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

bool is_ident_start(unsigned char c) { return std::isalpha(c) || c == '_'; }
bool is_ident_char(unsigned char c) { return std::isalnum(c) || c == '_'; }
bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/** "\xNN" for a byte that is not printable ASCII, else the character itself. */
std::string show_byte(unsigned char c) {
    if (c >= 0x20 && c < 0x7f) return std::string(1, static_cast<char>(c));
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02X", c);
    return buf;
}

}  // namespace

Lexer::Lexer(const SourceManager &sm, int file, Diagnostics &diag)
    : text_(sm.file(file).text), file_(file), diag_(diag) {}

Token Lexer::next() {
    if (has_pending_) {
        has_pending_ = false;
        last_ = pending_.kind;
        return std::move(pending_);
    }
    while (errors_ < kMaxLexErrors) {
        skip_blanks_and_comments();
        if (pos_ >= text_.size()) break;
        if (text_[pos_] == '\n') {
            bool ends = depth_ == 0 && last_ != Tok::Eof && !continues_line(last_);
            Token nl;
            nl.kind = Tok::Newline;
            nl.offset = pos_;
            nl.loc = loc_at(pos_, 1);
            ++pos_;
            ++line_;
            line_start_ = pos_;
            line_has_token_ = false;
            if (ends) {
                last_ = Tok::Newline;
                return nl;
            }
            continue;
        }
        Token t = scan();
        bool first_on_line = !line_has_token_;
        line_has_token_ = true;
        if (t.kind == Tok::LParen || t.kind == Tok::LBracket) ++depth_;
        if ((t.kind == Tok::RParen || t.kind == Tok::RBracket) && depth_ > 0) --depth_;
        if (first_on_line && starts_declaration(t.kind) && depth_ > 0) {
            // Recovery: a declaration keyword first on a line closes open brackets.
            depth_ = 0;
            if (last_ != Tok::Newline && last_ != Tok::Eof) {
                Token nl;
                nl.kind = Tok::Newline;
                nl.offset = t.offset;
                nl.loc = t.loc;
                pending_ = std::move(t);
                has_pending_ = true;
                last_ = Tok::Newline;
                return nl;
            }
        }
        last_ = t.kind;
        return t;
    }
    Token eof;
    eof.kind = Tok::Eof;
    eof.offset = text_.size();
    eof.loc = loc_at(text_.size(), 1);
    pos_ = text_.size();
    return eof;
}

Loc Lexer::loc_at(size_t offset, size_t length) const {
    // Columns are counted from the last line start seen by the lexer.
    return Loc{file_, line_, static_cast<int>(offset - line_start_) + 1, static_cast<int>(length < 1 ? 1 : length)};
}

void Lexer::error(Loc loc, const std::string &msg) {
    ++errors_;
    diag_.error(loc, msg);
}

void Lexer::skip_blanks_and_comments() {
    while (pos_ < text_.size()) {
        char c = text_[pos_];
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            ++pos_;
        } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
            while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
        } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '*') {
            block_comment();
        } else {
            return;
        }
    }
}

/** A block comment may span lines: its newlines are not line breaks of the
 *  program (a declaration can continue after a comment). */
void Lexer::block_comment() {
    Loc open = loc_at(pos_, 2);
    pos_ += 2;
    while (pos_ < text_.size()) {
        if (text_[pos_] == '*' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
            pos_ += 2;
            return;
        }
        if (text_[pos_] == '\n') {
            ++line_;
            line_start_ = pos_ + 1;
        }
        ++pos_;
    }
    error(open, "unterminated block comment");
}

Token Lexer::make(Tok kind, size_t begin) {
    Token t;
    t.kind = kind;
    t.offset = begin;
    t.loc = loc_at(begin, pos_ - begin);
    return t;
}

Token Lexer::scan() {
    size_t begin = pos_;
    unsigned char c = static_cast<unsigned char>(text_[pos_]);
    if (is_ident_start(c)) return identifier();
    if (is_digit(c) || (c == '.' && pos_ + 1 < text_.size() && is_digit(text_[pos_ + 1]))) return number();
    if (c == '"') return string_literal();
    auto two = [&](char d) { return pos_ + 1 < text_.size() && text_[pos_ + 1] == d; };
    auto op = [&](Tok k, size_t n) {
        pos_ += n;
        return make(k, begin);
    };
    switch (c) {
    case '+': return op(Tok::Plus, 1);
    case '-': return two('>') ? op(Tok::Arrow, 2) : op(Tok::Minus, 1);
    case '*': return two('*') ? op(Tok::StarStar, 2) : op(Tok::Star, 1);
    case '/': return op(Tok::Slash, 1);
    case '%': return op(Tok::Percent, 1);
    case '@': return op(Tok::At, 1);
    case '<': return two('=') ? op(Tok::Le, 2) : op(Tok::Lt, 1);
    case '>': return two('=') ? op(Tok::Ge, 2) : op(Tok::Gt, 1);
    case '=': return two('=') ? op(Tok::EqEq, 2) : op(Tok::Assign, 1);
    case '!': return two('=') ? op(Tok::Ne, 2) : op(Tok::Bang, 1);
    case '&':
        if (two('&')) return op(Tok::AndAnd, 2);
        break;
    case '|':
        if (two('|')) return op(Tok::OrOr, 2);
        break;
    case ':': return op(Tok::Colon, 1);
    case ',': return op(Tok::Comma, 1);
    case ';': return op(Tok::Semi, 1);
    case '.': return op(Tok::Dot, 1);
    case '(': return op(Tok::LParen, 1);
    case ')': return op(Tok::RParen, 1);
    case '[': return op(Tok::LBracket, 1);
    case ']': return op(Tok::RBracket, 1);
    case '{': return op(Tok::LBrace, 1);
    case '}': return op(Tok::RBrace, 1);
    default: break;
    }
    return invalid_character();
}

/** One diagnostic per invalid character; a UTF-8 sequence counts as one. */
Token Lexer::invalid_character() {
    size_t begin = pos_;
    unsigned char c = static_cast<unsigned char>(text_[pos_]);
    std::string shown = show_byte(c);
    ++pos_;
    if (c >= 0xC0) {
        while (pos_ < text_.size() && pos_ - begin < 4 && (static_cast<unsigned char>(text_[pos_]) & 0xC0) == 0x80)
            shown += show_byte(static_cast<unsigned char>(text_[pos_++]));
    }
    Token t = make(Tok::Error, begin);
    error(t.loc, "invalid character '" + shown + "'");
    return t;
}

Token Lexer::identifier() {
    size_t begin = pos_;
    while (pos_ < text_.size() && is_ident_char(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    std::string_view word(text_.data() + begin, pos_ - begin);
    auto it = keywords().find(word);
    Token t = make(it == keywords().end() ? Tok::Ident : it->second, begin);
    t.text = std::string(word);
    return t;
}

Token Lexer::number() {
    size_t begin = pos_;
    bool is_float = false;
    while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
    if (pos_ < text_.size() && text_[pos_] == '.' &&
        !(pos_ + 1 < text_.size() && is_ident_start(text_[pos_ + 1]) && text_[pos_ + 1] != 'e' &&
          text_[pos_ + 1] != 'E')) {
        is_float = true;
        ++pos_;
        while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
        size_t p = pos_ + 1;
        if (p < text_.size() && (text_[p] == '+' || text_[p] == '-')) ++p;
        if (p < text_.size() && is_digit(text_[p])) {
            is_float = true;
            pos_ = p;
            while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
        }
    }
    Token t = make(is_float ? Tok::Float : Tok::Int, begin);
    t.text = text_.substr(begin, pos_ - begin);
    if (is_float) {
        errno = 0;
        t.float_value = std::strtod(t.text.c_str(), nullptr);
        if (std::isinf(t.float_value)) error(t.loc, "floating-point literal is out of range");
    } else {
        uint64_t v = 0;
        bool overflow = false;
        for (char d : t.text) {
            uint64_t digit = static_cast<uint64_t>(d - '0');
            if (v > (static_cast<uint64_t>(INT64_MAX) - digit) / 10) overflow = true;
            if (!overflow) v = v * 10 + digit;
        }
        if (overflow) error(t.loc, "integer literal is too large");
        t.int_value = overflow ? 0 : static_cast<int64_t>(v);
    }
    return t;
}

Token Lexer::string_literal() {
    size_t begin = pos_;
    ++pos_;
    std::string value;
    while (pos_ < text_.size() && text_[pos_] != '"' && text_[pos_] != '\n') {
        char c = text_[pos_];
        if (c == '\\' && pos_ + 1 < text_.size() && text_[pos_ + 1] != '\n') {
            char e = text_[pos_ + 1];
            switch (e) {
            case '"': value += '"'; break;
            case '\\': value += '\\'; break;
            case 'n': value += '\n'; break;
            case 't': value += '\t'; break;
            default:
                error(loc_at(pos_, 2),
                      "invalid escape sequence '\\" + show_byte(static_cast<unsigned char>(e)) + "' in string literal");
            }
            pos_ += 2;
            continue;
        }
        value += c;
        ++pos_;
    }
    if (pos_ >= text_.size() || text_[pos_] != '"') {
        Token t = make(Tok::Error, begin);
        t.loc.length = 1;
        error(t.loc, "unterminated string literal");
        return t;
    }
    ++pos_;
    Token t = make(Tok::String, begin);
    t.text = std::move(value);
    return t;
}

std::vector<Token> lex(const SourceManager &sm, int file, Diagnostics &diag) {
    Lexer lexer(sm, file, diag);
    std::vector<Token> toks;
    do {
        toks.push_back(lexer.next());
    } while (toks.back().kind != Tok::Eof);
    return toks;
}

}  // namespace trlc
