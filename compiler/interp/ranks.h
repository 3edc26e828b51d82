#pragma once
// ranks — `trlc --interpret --ranks N`: N data-parallel ranks (passes/distribute.h) simulated
// in one process, the oracle of `--distributed` builds (dsl/README.md §7.12).  Each rank is an
// Evaluator with its rank's streams; a point of an allreduce_mean tensor, when the first rank
// computes it, is computed by every rank and replaced everywhere by the mean: the ranks' values
// summed in rank order in the dtype (f32 or f64), then divided by N — trl_allreduce_mean's
// order, so a host build run by mpirun prints the same bytes.  A tensor's dependences do not
// depend on data (reads are affine), so every rank computes the same points.
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "interp/eval.h"

namespace trlc::interp {

class RankGroup : public Collective {
public:
    RankGroup(const ir::Program &prog, uint64_t seed, int ranks);
    int size() const { return static_cast<int>(ranks_.size()); }
    Evaluator &rank(int r) { return *ranks_[r]; }
    Value complete(int rank, int t, const std::vector<int64_t> &point, Value local) override;

private:
    std::vector<std::unique_ptr<Evaluator>> ranks_;
    std::set<std::pair<int, std::vector<int64_t>>> reducing_;  // points whose mean is being made
};

/** The mean over ranks of "vs" (one value per rank, same type), as RankGroup computes it. */
Value rank_mean(const std::vector<Value> &vs);

/** FNV-1a 64 over the element bytes (little-endian, dtype size) of every array leaf of "v",
 *  in order, continuing "h" (trl_digest's digest of a saved value). */
uint64_t digest_value(uint64_t h, const Value &v);

/** "parameters identical across N ranks (digest 0x…)", the line a --distributed build prints at
 *  exit, for "ranks" ranks whose replicated saves have the digest "digest". */
std::string identical_parameters_line(int ranks, uint64_t digest);

}  // namespace trlc::interp
