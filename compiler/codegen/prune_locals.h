#pragma once
// prune_locals — drops the point variables a generated function declares and never reads.
//
// What it does: every kernel body starts with the same declarations whether or not its
// expression reads them: the point coordinates (p0 = a0, p1 = e % 4), the equation variables
// (v0 = p0 - 1), the unravelled rest of the element index (r0 = e / 4) and the statement's
// random stream, each followed by "(void)name;" to silence unused-variable warnings.  In PPO
// CartPole's source that was 888 of 7,605 lines.  This pass removes a declaration line
//     const long long NAME = EXPR;      const trl::Philox2x32Key NAME = EXPR;
// and its "(void)NAME;" lines when no other line of the same top-level function names NAME,
// repeating until nothing changes (v0 = p0 gone, p0 = a0 may go next).
//
// When it applies: to the whole generated source, after emission, one top-level function at a
// time (a function ends at a "}" in column 0).  Only indented lines are removed, and only
// declarations whose initializer is an index expression or a stream key: they have no side
// effects, so removing an unread one changes nothing the program computes.  A name declared in
// two blocks of one function (the members of a fused kernel) is kept in both while any line
// names it: conservative, never wrong.
//
// Before:                                   After:
//     const long long p0 = a0;                  const long long p0 = a0;
//     const long long p1 = a1;                  const long long v1 = p0 - 1;
//     (void)p0;                                 ... arena + (v1 % 2) * 512 ...
//     (void)p1;
//     const long long v0 = p1;
//     const long long v1 = p0 - 1;
//     (void)v0;
//     (void)v1;
//     ... arena + (v1 % 2) * 512 ...
#include <string>

namespace trlc {

/** Removes the unread point-variable declarations of "source" (see the file comment); returns
 *  the number of lines removed. */
size_t prune_unused_locals(std::string &source);

}  // namespace trlc
