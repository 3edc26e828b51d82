// codegen/prune_locals: which declarations of generated code go and which stay.
#include <gtest/gtest.h>

#include <string>

#include "codegen/prune_locals.h"

namespace {

std::string pruned(std::string s) {
    trlc::prune_unused_locals(s);
    return s;
}

TEST(PruneLocals, TheHeaderExample) {
    std::string in = "void k(long long a0, long long a1) {\n"
                     "    const long long p0 = a0;\n"
                     "    const long long p1 = a1;\n"
                     "    (void)p0;\n"
                     "    (void)p1;\n"
                     "    const long long v0 = p1;\n"
                     "    const long long v1 = p0 - 1;\n"
                     "    (void)v0;\n"
                     "    (void)v1;\n"
                     "    x = arena + (v1 % 2) * 512;\n"
                     "}\n";
    EXPECT_EQ(pruned(in), "void k(long long a0, long long a1) {\n"
                          "    const long long p0 = a0;\n"
                          "    const long long v1 = p0 - 1;\n"
                          "    x = arena + (v1 % 2) * 512;\n"
                          "}\n");
}

// A preprocessor line in column 0 inside a function ends no scope: the use after it keeps the
// declaration (else an outer variable of the same name would silently take its place).
TEST(PruneLocals, PreprocessorLinesEndNoScope) {
    std::string in = "void k() {\n"
                     "    const long long a0 = c0;\n"
                     "#if defined(__CUDACC__)\n"
                     "    f(a0);\n"
                     "#endif\n"
                     "}\n";
    EXPECT_EQ(pruned(in), in);
}

// Scopes follow the indentation: an unread inner declaration goes even when an outer one of
// the same name is read; the outer one stays.
TEST(PruneLocals, InnerDeclarationsHaveTheirOwnScope) {
    std::string in = "void k() {\n"
                     "    const long long a0 = c0;\n"
                     "    {\n"
                     "        const long long a0 = c1;\n"
                     "        g();\n"
                     "    }\n"
                     "    f(a0);\n"
                     "}\n";
    EXPECT_EQ(pruned(in), "void k() {\n"
                          "    const long long a0 = c0;\n"
                          "    {\n"
                          "        g();\n"
                          "    }\n"
                          "    f(a0);\n"
                          "}\n");
}

// Only side-effect-free initializers go: a call stays even when its result is never read, and
// so do lines that are not one of the declaration forms.
TEST(PruneLocals, CallsAndOtherLinesStay) {
    std::string in = "void k() {\n"
                     "    const long long n = trl_bound(ctx, 0);\n"
                     "    long long m = 3;\n"
                     "    const float *const w = (const float *)(src0 + 4);  // a view\n"
                     "}\n";
    EXPECT_EQ(pruned(in), "void k() {\n"
                          "    const long long n = trl_bound(ctx, 0);\n"
                          "    long long m = 3;\n"
                          "}\n");
}

}  // namespace
