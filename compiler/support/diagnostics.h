#pragma once
// diagnostics — Clang-style error reporting for user mistakes.
//
//   prog.trl:7:8: error: x[t+1] reads x at t = 8, but x is defined for t in [0, 7]
//   y[t] = x[t+1]
//          ^~~~~~
//   prog.trl:6:1: note: x is defined here
//
// Colour only when the stream is a terminal.  User errors never use asserts;
// compiler bugs use TRLC_ASSERT / internal_error(), which print
// "internal compiler error" and exit with code 2.
#include <iosfwd>
#include <sstream>
#include <string>

#include "support/source.h"

namespace trlc {

enum class Severity { Error, Warning, Note };

class Diagnostics {
public:
    explicit Diagnostics(const SourceManager &sm, std::ostream &out);

    void error(Loc loc, const std::string &msg) { report(Severity::Error, loc, msg); }
    void warning(Loc loc, const std::string &msg) { report(Severity::Warning, loc, msg); }
    /** A note attaches to the previous error or warning. */
    void note(Loc loc, const std::string &msg) { report(Severity::Note, loc, msg); }
    /** An error with no source position (bad command line, unreadable file). */
    void error(const std::string &msg) { report(Severity::Error, Loc{}, msg); }

    int error_count() const { return errors_; }
    bool has_errors() const { return errors_ > 0; }
    /** Stop printing after this many errors (a final "too many errors" line is printed). */
    void set_error_limit(int n) { limit_ = n; }
    void set_color(bool on) { color_ = on; }
    /** Whether an error or warning located in an imported module is followed by notes at the
     *  imports that loaded it (default on; sema turns it off for an error inside an inlined
     *  fn body, whose notes lead to the user's call instead). */
    void set_import_notes(bool on) { import_notes_ = on; }

private:
    void report(Severity sev, Loc loc, const std::string &msg);
    const SourceManager &sm_;
    std::ostream &out_;
    int errors_ = 0;
    int limit_ = 20;
    bool color_ = false;
    bool suppressed_ = false;  // the last error was over the limit: drop its notes
    bool import_notes_ = true;
};

/** Thrown by internal_error(); the driver prints it and exits with code 2. */
struct InternalError {
    std::string message;
};

[[noreturn]] void internal_error(const std::string &msg, const char *file, int line);

/** Internal invariant: `TRLC_ASSERT(x > 0) << "x was " << x;` */
class AssertStream {
public:
    AssertStream(const char *cond, const char *file, int line) : file_(file), line_(line) {
        ss_ << "assertion failed: " << cond << " ";
    }
    [[noreturn]] ~AssertStream() noexcept(false) { internal_error(ss_.str(), file_, line_); }
    template <class T>
    AssertStream &operator<<(const T &v) {
        ss_ << v;
        return *this;
    }

private:
    std::ostringstream ss_;
    const char *file_;
    int line_;
};

#define TRLC_ASSERT(cond)                                                                                              \
    if (cond) {                                                                                                        \
    } else                                                                                                             \
        ::trlc::AssertStream(#cond, __FILE__, __LINE__)

}  // namespace trlc
