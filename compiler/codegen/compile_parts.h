#pragma once
// compile_parts — which kernels of a generated host program `trlc -o` compiles at -O3 and which
// at -O1 (with -O3's loop vectorizer), as two parts of the one source compiled side by side (issue 14: the host compile).
//
// What it does: every kernel is weighed by the element operations of a whole run (its
// statements' weighted_work at one batch point × batch points × instances, the instances
// counted as the box around the statement's domain).  The lightest kernels, together at most
// kColdShare of the program's total, form part 0 with run_program, main and the host
// functions, except those launched nearly as often as the most launched one (an environment's
// step: scalar code whose estimate says little of its time, 70 % slower at -O2 in PPO
// CartPole) and the operand kernels of products (gathers and transposes that -O3's peeling
// speeds up: PPO's gradient region was 11 % slower with them at -O2); the others form part 1.
// The source stays one file that compiles whole: each kernel sits between `#if TRL_IN_UNIT(p, u)`
// guards, true for every p and u unless TRL_PART is defined, with its declaration in the
// `#else` branch for the other units.  Each part is compiled in compile units (issue 14: edits
// and several cores): unit 0 (part 0) holds run_program, main and the host code, unit 1 (part 0)
// part 0's kernels, units 2.. (part 1) part 1's kernels, about kUnitLines lines each.  The
// driver (driver/build_program.cpp) compiles unit u with -DTRL_PART=p -DTRL_UNIT=u (part 1 at
// -O3, part 0 at -O1 with the -O3 loop vectorizer kept; Clang: -O2), all at once, keeps each
// object in the build cache under unit_view's key (driver/unit_cache.h), and links them with the
// program hash compiled alone (TRLG_PROGRAM_HASH, runtime/trl_gen.h).  PPO CartPole (one core,
// 2026-11-29): 6 units instead of 2 parts cost about 0.08 s of CPU each (the precompiled
// prelude, the declarations), 0.4 s more for a build from nothing; an edit of `gamma` or
// `lr0` then recompiles unit 1 alone, and the build takes 3.5 s instead of 7.7 s
// (tools/bench/compile_time.py's "const", which edits `gamma`).
//
// When it applies: a host program (not a library, --standalone or CUDA source: those compile
// whole) with at least one kernel in each part and no `extern fn` (an extern's header, which
// the source includes, may define non-inline functions: both parts would define them, and the
// link fails; driver/pipeline.cpp).  Same arithmetic: both levels keep
// -ffp-contract=off and no reassociation, so the bits do not change; GCC's -O3 passes only
// make the hot loops faster.  Measured on PPO CartPole (one core, least of 3): the whole source
// at -O3 6.8 s, part 1 at -O3 3.3 s and part 0 at -O2 2.2 s (on two cores 3.3–3.9 s of wall
// time); the same log bytes, every region of --profile as fast (least of 7 interleaved runs).
// Part 0 at plain -O1 compiled in 1.1 s but trained 15 % slower (the metrics kernel
// unvectorized); at -O1 with the loop vectorizer (-ftree-loop-vectorize
// -fvect-cost-model=dynamic) it compiles in 1.24 s instead of 1.72 s at -O2 (with the
// precompiled prelude, least of 3) and PPO CartPole, Pendulum, REINFORCE, n-step and DQN train
// as fast (least of 4-12 interleaved runs within 1 %), the same log bytes (2026-11-29).
//
// Before (kernel_text's markers):              After (assign_compile_parts, a part 1 kernel):
//     \x03part k_h_0\x03                          // h_0: h at prog.trl:7
//     TRL_KERNEL k_h_0(...) {                       #if TRL_IN_UNIT(1, 2) // 96.65 % of the estimated work, 40 launches
//     ...                                           TRL_KERNEL k_h_0(...) {
//     }                                             ...
//     \x03end k_h_0\x03                           }
//                                                   #else
//                                                   TRL_KERNEL k_h_0(...);
//                                                   #endif
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace trlc {

class Schedule;

namespace codegen {

/** Share of a program's estimated work the kernels of part 0 may do together (of all kernels'
 *  weighted element operations).  It bounds what a misjudged kernel can cost: the whole PPO
 *  CartPole source at -O2 (with -O3's vectorizer) trains ~5 % slower than at -O3. */
constexpr double kColdShare = 0.05;

/** A part 1 kernel doing less than this share of the estimated work, and launched less often
 *  than part 0's launch limit (an eighth of the most launched kernel's launches), keeps -O3 but
 *  its loops are not unrolled: its TRLG_SEQ markers become TRLG_SEQ_COLD (runtime/trl_gen.h:
 *  `#pragma GCC unroll 1`), so that GCC does not peel its static loops completely.  Those are the
 *  gradient's operand kernels: large fused gathers that recompute a softmax or a tanh layer for
 *  every row.  PPO CartPole (one core, least of 4 interleaved): part 1 3.58 -> 2.79 s, 126 -> 97
 *  KB of code; the same log bytes, the gradient region as fast (least of 12 interleaved ABBA
 *  --profile runs: 0.989 s against 1.008 s).  Not for the most launched kernels (an
 *  environment step, the policy's layers: their regions were 14-20 % slower unpeeled) nor the
 *  heavy ones (their loops over 64 columns are register-blocked once peeled: 8 % slower).
 *  Their loops stay vectorized: without (-fno-tree-loop-vectorize on PPO CartPole's seven such
 *  kernels, 2026-11-29) part 1 compiled ~0.3 s faster but the program trained 25 % slower
 *  (3.71 -> 4.58 s, 4 interleaved; the gradient region 1.41 -> 2.07 s): the estimate calls
 *  them 4 % of the work, far less than they take. */
constexpr double kNoPeelShare = 0.02;

/** Element operations of one evaluation of "root" (work_estimate.h) with each operation weighed
 *  by what it costs beyond an add: transcendentals, random draws and softmaxes 16, f64 sin and
 *  cos (correctly rounded: the environments' dynamics) and extern calls 64, a permutation of n
 *  16·log2(n) per element.  Without the weights the environment step of PPO CartPole and its
 *  minibatch permutation counted as cheap and went to -O2, where they ran 70 % and 27 % slower
 *  (4 % of the run). */
int64_t weighted_work(const ir::Node &root);

/** Instances of statement "si" of "sched": the product of its domain's extents (the box around
 *  it: exact for the rectangular domains of training programs, an upper bound otherwise). */
int64_t statement_instances(const Schedule &sched, int si);

/** The marker line before kernel "name"'s definition and the one after it (kernel_text's). */
std::string part_begin_marker(const std::string &name);
std::string part_end_marker(const std::string &name);

/** The marker lines around run_program and main (part 0 only). */
extern const char *const kHostBegin;
extern const char *const kHostEnd;

/** A kernel's weight: weighted element operations over a run, and launches (instances). */
struct KernelWeight {
    int64_t work = 0;
    int64_t launches = 0;
    bool operands = false;  // the operand kernel of a product: always part 1
};

/** Replaces the markers of "src" by compile unit guards (file comment), given each kernel's weight (a
 *  kernel missing from "weights" weighs nothing); when either part would be empty, the markers
 *  are removed and the source is one whole as before.  Returns whether it split; a split
 *  source starts its guards with a comment saying so and kUnitsLine (compile_units reads it). */
bool assign_compile_parts(std::string &src, const std::map<std::string, KernelWeight> &weights);

/** Lines of part 1's kernels per compile unit: PPO CartPole's 2,054 lines of part 1 compile in
 *  about 2.4 s at -O3 (one core), a unit of 500 lines in about 0.6 s, against about 0.08 s that
 *  every unit pays (the precompiled prelude, the declarations).  At most kMaxHotUnits units. */
constexpr int kUnitLines = 500;
constexpr int kMaxHotUnits = 8;

/** The line that lists a split source's compile units, then " P" (its part) for each unit. */
extern const char *const kUnitsLine;

/** The part of each compile unit of "src" (a source assign_compile_parts split), by unit
 *  number: unit 0 (part 0) run_program, main and the host code, unit 1 (part 0) part 0's
 *  kernels, units 2.. (part 1) part 1's kernels, about kUnitLines lines each (the largest
 *  kernels first, each onto the unit with the fewest lines; the order depends only on the
 *  kernels' line counts and names, which an edit of a constant keeps).  Empty for a source
 *  that is not split.  The driver compiles unit u with -DTRL_PART=P -DTRL_UNIT=u and caches
 *  its object by unit_view(src, u), so an edit recompiles only the units whose kernels changed:
 *  in PPO CartPole, `lr0` is one kernel of unit 1, `clip` four kernels in three units (1, 2, 4). */
std::vector<int> compile_units(const std::string &src);

/** What unit "u" of "src" compiles, for its cache key: "src" without the bodies of the other
 *  units' kernels (their `#if TRL_IN_UNIT(p, v)` branch; the `#else` declaration kept),
 *  without comment lines, which change no object code (a kernel's comment names the .trl line it
 *  came from: an edit above it moves it), and without the program hash's line
 *  (kProgramHashComment). */
std::string unit_view(const std::string &src, int u);

/** The comment after kProgramInfo's hash, TRLG_PROGRAM_HASH(0x...ULL) (runtime/trl_gen.h): the
 *  line unit_view leaves out, since the hash covers every kernel and a compile unit reads it
 *  from the variable trlg_program_hash that the driver compiles alone. */
extern const char *const kProgramHashComment;

/** The literal in "src"'s TRLG_PROGRAM_HASH(...) ("0x...ULL"), or "" when there is none. */
std::string program_hash_literal(const std::string &src);

}  // namespace codegen
}  // namespace trlc
