// ranks — the simulated ranks of `--interpret --ranks N` (interp/ranks.h).
#include "interp/ranks.h"

#include <cstdio>
#include <cstring>

#include "interp/outputs.h"
#include "support/diagnostics.h"
#include "trl_ops.h"
#include "trl_random.h"

namespace trlc::interp {

RankGroup::RankGroup(const ir::Program &prog, uint64_t seed, int ranks) {
    for (int r = 0; r < ranks; ++r) {
        ranks_.push_back(std::make_unique<Evaluator>(prog, seed, r));
        ranks_.back()->set_collective(this);
    }
}

Value RankGroup::complete(int rank, int t, const std::vector<int64_t> &point, Value local) {
    auto key = std::make_pair(t, point);
    if (reducing_.count(key)) return local;  // asked by the reduction below: the rank's own value
    reducing_.insert(key);
    std::vector<Value> vs;
    for (int r = 0; r < size(); ++r) {
        if (r == rank) {
            vs.push_back(local);
            continue;
        }
        TRLC_ASSERT(!ranks_[r]->busy()) << "rank " << r << " is computing another point";
        vs.push_back(*ranks_[r]->tensor_point(t, point, Loc{}));
    }
    reducing_.erase(key);
    auto mean = std::make_shared<const Value>(rank_mean(vs));
    for (int r = 0; r < size(); ++r)
        if (r != rank) ranks_[r]->replace_point(t, point, mean);
    return *mean;
}

Value rank_mean(const std::vector<Value> &vs) {
    const Value &v0 = vs.at(0);
    if (v0.is_tuple) {
        Value out = v0;
        for (size_t k = 0; k < v0.elems.size(); ++k) {
            std::vector<Value> parts;
            for (const Value &v : vs) parts.push_back(v.elems.at(k));
            out.elems[k] = rank_mean(parts);
        }
        return out;
    }
    Value out = v0;
    if (v0.dtype != ir::DType::F32 && v0.dtype != ir::DType::F64) return out;  // no gradient
    // The values in their dtype, rank after rank, through the runtime's own sum (trl_ops.h).
    const long long n = static_cast<long long>(out.data.size());
    const int ranks = static_cast<int>(vs.size());
    auto mean = [&](auto zero) {
        using T = decltype(zero);
        std::vector<T> v(static_cast<size_t>(n) * ranks), m(static_cast<size_t>(n));
        for (int r = 0; r < ranks; ++r)
            for (long long j = 0; j < n; ++j) v[r * n + j] = static_cast<T>(vs[r].data.at(j));
        trl::rank_mean(v.data(), n, ranks, m.data());
        for (long long j = 0; j < n; ++j) out.data[j] = m[j];
    };
    if (v0.dtype == ir::DType::F32)
        mean(0.0f);
    else
        mean(0.0);
    return out;
}

uint64_t digest_value(uint64_t h, const Value &v) {
    if (v.is_tuple) {
        for (const Value &e : v.elems) h = digest_value(h, e);
        return h;
    }
    trl::NpyArray a = to_npy(v);
    return trl::fnv1a64(h, a.data.data(), a.data.size());
}

std::string identical_parameters_line(int ranks, uint64_t digest) {
    char hex[20];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(digest));
    return "parameters identical across " + std::to_string(ranks) + " ranks (digest " + hex + ")";
}

}  // namespace trlc::interp
