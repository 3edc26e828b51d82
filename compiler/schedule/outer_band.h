#pragma once
// outer_band — the outermost schedule band fixed by the program's outer dim, isl's scheduler
// below it (outer_band.cpp's file comment).  Private to compiler/schedule.
#include <set>
#include <string>
#include <vector>

#include "schedule/schedule_impl.h"

namespace trlc {

/** The dims worth trying as the outer band of the statements in "domain" (isl's domain of the
 *  scheduling problem, deallocation statements included), best first: the dim names that are
 *  the first dim of the most statements, then of the most statements at all, then by name
 *  (deterministic); at most kOuterBandCandidates of them. */
std::vector<std::string> outer_band_candidates(const isl::union_set &domain);

/** A schedule of "domain" whose outermost band is "dim" (+ a constant per statement: the least
 *  that orders every validity pair, and for the statements named in "records", the emits and
 *  saves, the greatest that their successors allow) and whose inner part isl's scheduler
 *  computes under "attempt" (schedule_pdg.cpp: its options and its per-ILP budget) from the
 *  pairs of "validity" and "proximity" at the same outer time.
 *  Null, with the reason in "why_not", when "dim" cannot be the outer band: some validity pair
 *  runs backwards in it whatever the constants (a loop that runs backwards, a recurrence through
 *  an outer dim), a distance is unbounded, or isl finds no inner schedule (none exists, or an
 *  ILP ran over its budget).  The caller still checks the result (every flow dependence
 *  ordered, the loop nest in order). */
isl::schedule schedule_under_outer_band(const isl::union_set &domain, const isl::union_map &validity,
                                        const isl::union_map &proximity, const std::string &dim,
                                        isl::schedule (*attempt)(const isl::schedule_constraints &sc,
                                                                 const std::string &label, bool *over_budget),
                                        const std::set<std::string> &records, std::string *why_not);

/** The most candidate dims schedule_pdg.cpp tries before scheduling the whole program at once. */
constexpr size_t kOuterBandCandidates = 3;

}  // namespace trlc
