// arena — offsets of all buffers in one arena: "greedy by size" packing.
//
// Algorithm: Pisarchyk & Lee, "Efficient Memory Management for Deep Neural Net
// Inference" (2020), the greedy-by-size strategy that TensorFlow Lite's arena
// planner uses (tensorflow/lite/simple_memory_arena.cc): sort the buffers by size,
// largest first (ties: lower index first, so the result is stable); place each at
// the lowest offset (a multiple of `align`, 256 here) where it overlaps no
// already-placed buffer it conflicts with.  Two buffers conflict when their
// live-time sets intersect (memplan.cpp); buffers that are never alive together
// may share bytes.  The peak is max(offset + bytes): exactly the arena the
// generated program allocates.
#include <algorithm>
#include <numeric>

#include "memory/memplan_impl.h"

namespace trlc {

namespace {
int64_t align_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }
}  // namespace

int64_t pack_arena(const std::vector<int64_t> &bytes, const std::vector<std::vector<bool>> &conflict, int64_t align,
                   std::vector<int64_t> *offsets) {
    const size_t n = bytes.size();
    offsets->assign(n, 0);
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return bytes[a] > bytes[b]; });
    std::vector<bool> placed(n, false);
    int64_t peak = 0;
    for (size_t i : order) {
        if (bytes[i] == 0) {  // takes no space: offset 0, conflicts with nothing
            placed[i] = true;
            continue;
        }
        // Intervals of placed conflicting buffers, by offset.
        std::vector<std::pair<int64_t, int64_t>> busy;
        for (size_t j = 0; j < n; ++j)
            if (placed[j] && j != i && bytes[j] > 0 && conflict[i][j])
                busy.emplace_back((*offsets)[j], (*offsets)[j] + bytes[j]);
        std::sort(busy.begin(), busy.end());
        int64_t at = 0;
        for (const auto &[lo, hi] : busy) {
            if (at + bytes[i] <= lo) break;  // fits in the gap before this interval
            at = std::max(at, align_up(hi, align));
        }
        (*offsets)[i] = at;
        placed[i] = true;
        peak = std::max(peak, at + bytes[i]);
    }
    return peak;
}

}  // namespace trlc
