// staging — one slice of a buffer in the arena at a time (--mem-budget; issue 16 point 4).
//
// When it applies: the arena exceeds the budget (plan_swaps calls this first), and a buffer x
// is touched only by statements that all run inside a loop F whose iterator fixes one of x's
// coordinates in every access: each call of such a statement passes F's iterator itself as
// statement dim j, and every access relation of the statement to x has p_d = i_j (isl:
// A ⊆ A ∩ {p_d = i_j}).  Several nested loops may each fix a coordinate.
//
// What it does: x's storage keeps modulus 1 at the fixed positions, so its arena bytes hold one
// slice; the host arena holds all of them (row-major over the fixed positions, each slice laid
// out as the arena's).  The innermost fixing loop's body starts by copying slice (c_1, .., c_k)
// in and ends by copying it back.  x's live times are unchanged (its bytes are smaller).
// Candidates are taken largest saving first while the packed arena exceeds the budget.
//
// Why it is safe: inside one iteration of the body every access of x is to the slice the
// iterators name, so the arena's slice is the only one read or written there, and every other
// slice rests in the host arena, unchanged, until an iteration naming it copies it back in.
//
// Example (samples/transformer_decode.trl, k[r, h, t], block 4 x 4 x 64 = 65,536 B): k_0 and
// att_0 are called as (c1, c2, c0) inside `for c1` (layers) and `for c2` (heads), and both touch
// only k[c1, c2, ·], so
//   before: k: block 4 along r, block 4 along h, block 64 along t, 1024 slots x 64 B = 65536 B
//   after:  k: block 64 along t, 64 slots x 64 B = 4096 B, staged along r, h (host offset 0)
// with a 4,096-byte copy in and out around every (layer, head) of every step.
#include <algorithm>
#include <functional>

#include "memory/memplan_impl.h"

namespace trlc {

namespace {

struct Call {
    const LoopNode *user = nullptr;
    std::vector<const LoopNode *> loops;  // enclosing For nodes, outermost first
};

void calls_of(const LoopNode &n, std::vector<const LoopNode *> &loops, std::vector<Call> *out) {
    if (n.kind == LoopNode::User) {
        out->push_back({&n, loops});
        return;
    }
    if (n.kind == LoopNode::For) loops.push_back(&n);
    for (const auto &ch : n.children) calls_of(*ch, loops, out);
    if (n.kind == LoopNode::For) loops.pop_back();
}

/** The storage of "b" with modulus 1 at "positions" (row-major strides again). */
void restride(Buffer *b) {
    int64_t slots = 1;
    for (size_t d = b->modulus.size(); d-- > 0;) {
        b->stride[d] = slots;
        slots *= b->modulus[d];
    }
    b->slots = slots;
    b->bytes = slots * b->slot_bytes;
}

}  // namespace

void plan_stagings(const MemInput &in, ArenaState &st, MemPlan *plan) {
    std::vector<Call> calls;
    std::vector<const LoopNode *> loops;
    if (in.root) calls_of(*in.root, loops, &calls);
    const size_t n = plan->buffers.size();
    std::vector<int> group_size(n, 0);
    for (size_t i = 0; i < n; ++i) ++group_size[st.group[i]];

    std::vector<Staging> cands;
    for (size_t x = 0; x < n; ++x) {
        const Buffer &buf = plan->buffers[x];
        if (buf.bytes == 0 || group_size[st.group[x]] != 1 || st.touched[x].empty()) continue;
        std::vector<const Call *> mine;
        for (const Call &c : calls)
            if (st.touched[x].count(c.user->stmt)) mine.push_back(&c);
        if (mine.empty()) continue;
        // The loops enclosing every call: a common prefix of the chains.
        std::vector<const LoopNode *> common = mine[0]->loops;
        for (const Call *c : mine) {
            size_t k = 0;
            while (k < common.size() && k < c->loops.size() && common[k] == c->loops[k]) ++k;
            common.resize(k);
        }
        Staging sg;
        sg.buffer = static_cast<int>(x);
        for (const LoopNode *f : common) {
            for (size_t d = 0; d < buf.modulus.size(); ++d) {
                if (buf.modulus[d] <= 1 || (d < buf.batch.size() && buf.batch[d])) continue;
                if (std::find(sg.positions.begin(), sg.positions.end(), static_cast<int>(d)) != sg.positions.end())
                    continue;
                bool all = true;
                for (const Call *c : mine) {
                    bool some = false;  // a statement dim j passed as f's iterator with p_d = i_j
                    for (size_t j = 0; j < c->user->args.size() && !some; ++j) {
                        const AstExpr &a = *c->user->args[j];
                        if (a.op != AstExpr::Var || a.var != f->var) continue;
                        some = true;
                        for (const isl::map &m : st.accesses[{c->user->stmt, static_cast<int>(x)}]) {
                            if (static_cast<int>(j) >= isl_map_dim(m.get(), isl_dim_in) ||
                                static_cast<int>(d) >= isl_map_dim(m.get(), isl_dim_out)) {
                                some = false;
                                break;
                            }
                            isl::map eq = isl::manage(isl_map_equate(m.copy(), isl_dim_in, static_cast<int>(j),
                                                                     isl_dim_out, static_cast<int>(d)));
                            if (!m.is_subset(eq)) {
                                some = false;
                                break;
                            }
                        }
                    }
                    all = all && some;
                    if (!all) break;
                }
                if (!all) continue;
                sg.positions.push_back(static_cast<int>(d));
                sg.vars.push_back(f->var);
                sg.loop = f;
                break;
            }
        }
        if (sg.positions.empty()) continue;
        int64_t slices = 1;
        for (size_t k = sg.positions.size(); k-- > 0;) {
            int d = sg.positions[k];
            sg.lower.insert(sg.lower.begin(), buf.lower[d]);
            sg.modulus.insert(sg.modulus.begin(), buf.modulus[d]);
            sg.host_stride.insert(sg.host_stride.begin(), slices);
            slices *= buf.modulus[d];
        }
        sg.slice_bytes = buf.bytes / slices;
        cands.push_back(sg);
    }
    std::stable_sort(cands.begin(), cands.end(), [&](const Staging &a, const Staging &b) {
        return plan->buffers[a.buffer].bytes - a.slice_bytes > plan->buffers[b.buffer].bytes - b.slice_bytes;
    });
    for (Staging &sg : cands) {
        if (plan->peak_bytes <= in.budget) break;
        MemPlan trial = *plan;
        Buffer &b = trial.buffers[sg.buffer];
        for (int d : sg.positions) b.modulus[d] = 1;
        restride(&b);
        place_buffers(st, &trial);
        if (trial.peak_bytes > plan->peak_bytes) continue;
        trial.stagings.push_back(sg);
        *plan = trial;
    }
}

void unstage(MemPlan *plan, size_t k) {
    const Staging &sg = plan->stagings.at(k);
    Buffer &b = plan->buffers.at(sg.buffer);
    for (size_t i = 0; i < sg.positions.size(); ++i) b.modulus[sg.positions[i]] = sg.modulus[i];
    restride(&b);
    plan->stagings.erase(plan->stagings.begin() + static_cast<long>(k));
}

}  // namespace trlc
