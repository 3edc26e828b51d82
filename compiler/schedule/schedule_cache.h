#pragma once
// schedule_cache — isl's schedule of a program whose schedule constraints were scheduled before
// is read back instead of computed again (issue 14: from a .trl edit to a running program).
//
// isl's scheduler is most of trlc's front end (PPO CartPole: 4.3 of its 6.9 s of CPU), and it is
// a function of its inputs alone: the schedule constraints (statement instances, validity,
// coincidence and proximity relations, as isl prints them), isl's options and version, and the
// attempts compute() makes (schedule_pdg.cpp: budgets and fallbacks, fixed by the trlc
// executable).  Most edits a user makes to an algorithm leave the constraints as they were: a
// constant (a learning rate, a clip coefficient), the formula of a loss over the same reads, a
// layer's width.  Those edits hit; one that changes which points a value reads or how many
// steps a loop has misses.
//
// The key is the SHA-256 (support/cache_key.h's BuildKey) of: the trlc executable (path, size,
// modification time), isl_version(), and the text of the constraints of every attempt
// compute() may make.  The value is the accepted schedule tree (isl's YAML, as --emit=schedule
// prints), deallocation statements included.  A hit is checked as a computed schedule is
// (schedule_pdg.cpp's finish: every flow dependence ordered in the schedule and in isl's AST);
// an entry that does not parse or fails that check is ignored and the schedule computed.
//
// Where: DIR/schedules/KEY.yaml, DIR the build cache's directory (build_cache_dir(): off with
// --no-cache or TRLC_CACHE_DIR=off); the newest kMaxSchedules entries are kept.  Failures to read
// or write are silent: the cache never changes a result, only how long it takes.
#include <string>

#include <isl/cpp.h>

namespace trlc {

/** The cache key (64 hex digits) of scheduling "constraints" (each attempt's constraints as isl
 *  text, in the order compute() tries them) with this trlc and this isl. */
std::string schedule_cache_key(const std::string &constraints);

/** The schedule stored under "key" in cache directory "dir", read in "ctx"; null on a miss or an
 *  unreadable entry.  A hit marks the entry recently used. */
isl::schedule fetch_cached_schedule(const std::string &dir, const std::string &key, isl::ctx ctx);

/** Stores "sched" under "key" in "dir" (written whole, then renamed into place), then removes
 *  all but the newest entries.  Failures are silent. */
void store_cached_schedule(const std::string &dir, const std::string &key, const isl::schedule &sched);

}  // namespace trlc
