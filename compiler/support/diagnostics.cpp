#include "support/diagnostics.h"

#include <ostream>

namespace trlc {

namespace {
const char *kBold = "\033[1m";
const char *kRed = "\033[1;31m";
const char *kMagenta = "\033[1;35m";
const char *kCyan = "\033[1;36m";
const char *kGreen = "\033[1;32m";
const char *kReset = "\033[0m";
}  // namespace

Diagnostics::Diagnostics(const SourceManager &sm, std::ostream &out) : sm_(sm), out_(out) {}

void Diagnostics::report(Severity sev, Loc loc, const std::string &msg) {
    if (sev == Severity::Error) {
        ++errors_;
        if (errors_ > limit_) {
            if (errors_ == limit_ + 1) out_ << "fatal: too many errors emitted, stopping now\n";
            suppressed_ = true;
            return;
        }
        suppressed_ = false;
    } else if (sev == Severity::Note && suppressed_) {
        return;
    } else if (sev == Severity::Warning) {
        suppressed_ = false;
    }
    auto c = [&](const char *code) { return color_ ? code : ""; };
    const SourceFile *f = loc.valid() && loc.file < sm_.size() ? &sm_.file(loc.file) : nullptr;
    out_ << c(kBold);
    if (f)
        out_ << f->path << ":" << loc.line << ":" << loc.col << ": ";
    else
        out_ << "trlc: ";
    switch (sev) {
    case Severity::Error: out_ << c(kRed) << "error: "; break;
    case Severity::Warning: out_ << c(kMagenta) << "warning: "; break;
    case Severity::Note: out_ << c(kCyan) << "note: "; break;
    }
    out_ << c(kReset) << c(kBold) << msg << c(kReset) << "\n";
    if (!f) return;
    std::string_view line = f->line(loc.line);
    if (line.empty()) return;
    // Keep very long lines readable: show at most 160 bytes around the column.
    out_ << line << "\n";
    std::string marker;
    int col = loc.col < 1 ? 1 : loc.col;
    for (int i = 1; i < col && i <= static_cast<int>(line.size()); ++i) marker += line[i - 1] == '\t' ? '\t' : ' ';
    marker += '^';
    int len = loc.length;
    int room = static_cast<int>(line.size()) - col;
    if (len - 1 > room) len = room + 1;
    for (int i = 1; i < len; ++i) marker += '~';
    out_ << c(kGreen) << marker << c(kReset) << "\n";
    // An error or warning inside an imported module: the chain of imports that led to it, as
    // Clang's "In file included from" (each at most once: a module is loaded once).
    if (sev != Severity::Note && import_notes_) {
        int hops = 0;
        for (Loc at = f->imported_at; at.valid() && at.file < sm_.size() && hops < 64; ++hops) {
            const SourceFile &by = sm_.file(at.file);
            out_ << c(kBold) << by.path << ":" << at.line << ":" << at.col << ": " << c(kCyan) << "note: " << c(kReset)
                 << c(kBold) << "in module imported from here" << c(kReset) << "\n";
            std::string_view l = by.line(at.line);
            if (!l.empty()) {
                std::string m;
                for (int i = 1; i < at.col && i <= static_cast<int>(l.size()); ++i) m += l[i - 1] == '\t' ? '\t' : ' ';
                out_ << l << "\n" << c(kGreen) << m << "^" << c(kReset) << "\n";
            }
            at = by.imported_at;
        }
    }
}

void internal_error(const std::string &msg, const char *file, int line) {
    std::ostringstream ss;
    ss << msg << " (" << file << ":" << line << ")";
    throw InternalError{ss.str()};
}

}  // namespace trlc
