// Diagnostics print Clang-style: file:line:col, the source line, a caret range.
#include <gtest/gtest.h>

#include <sstream>

#include "support/diagnostics.h"

namespace trlc {
namespace {

TEST(Diagnostics, ErrorWithCaretRange) {
    SourceManager sm;
    int f = sm.add("prog.trl", "dim t < T = 8\ny[t] = x[t+1]\n");
    std::ostringstream out;
    Diagnostics diag(sm, out);
    diag.error(Loc{f, 2, 8, 6}, "x[t+1] reads x at t = 8");
    diag.note(Loc{f, 1, 5, 1}, "t is declared here");
    EXPECT_EQ(out.str(), "prog.trl:2:8: error: x[t+1] reads x at t = 8\n"
                         "y[t] = x[t+1]\n"
                         "       ^~~~~~\n"
                         "prog.trl:1:5: note: t is declared here\n"
                         "dim t < T = 8\n"
                         "    ^\n");
    EXPECT_EQ(diag.error_count(), 1);
}

TEST(Diagnostics, ErrorLimitDropsLaterErrorsAndTheirNotes) {
    SourceManager sm;
    int f = sm.add("a.trl", "x\n");
    std::ostringstream out;
    Diagnostics diag(sm, out);
    diag.set_error_limit(1);
    diag.error(Loc{f, 1, 1, 1}, "first");
    diag.error(Loc{f, 1, 1, 1}, "second");
    diag.note(Loc{f, 1, 1, 1}, "note of second");
    EXPECT_NE(out.str().find("first"), std::string::npos);
    EXPECT_EQ(out.str().find("second"), std::string::npos);
    EXPECT_NE(out.str().find("too many errors"), std::string::npos);
    EXPECT_EQ(diag.error_count(), 2);
}

TEST(Diagnostics, RangeIsClippedAtEndOfLine) {
    SourceManager sm;
    int f = sm.add("a.trl", "abc\n");
    std::ostringstream out;
    Diagnostics diag(sm, out);
    diag.error(Loc{f, 1, 2, 50}, "long");
    EXPECT_EQ(out.str(), "a.trl:1:2: error: long\nabc\n ^~\n");
}

}  // namespace
}  // namespace trlc
