// swap — a device arena under a memory budget (--mem-budget BYTES; issue 16 point 4, the third
// scheduling decision of the TimeRL paper §5: swapping tensors to host memory).
//
// When it applies: plan_memory_from was given a budget and the packed arena exceeds it.
//
// What it does: a buffer x that no statement of a run of consecutive children of a Block of the
// loop nest reads or writes, and that is alive at every instance time of that run, can leave
// the arena for the run: its bytes are copied to a host arena before the run's first child and
// back after its last (every time the block runs, so inside a loop body every iteration).  Its
// live-time set loses the run's times, so buffers alive only inside the run may take its
// bytes.  Candidates are maximal runs, largest buffers first; each is kept when packing again
// does not raise the peak, until the peak is within the budget; then kept swaps that the
// budget does not need are dropped again (fewer copies).  No plan fitting is an error.
//
// Why it is safe (instance times are lexicographic, a point p lives from W(p) to L(p)): x
// alive at a run time τ and untouched by the run means some p has W(p) before the run and L(p)
// after it, so x is alive at the instance just before the run and the one just after — the
// copies read and write bytes no other buffer alive there holds.  A run's statements must be
// called nowhere else in the nest (their times are all in the run), and a buffer a checkpoint
// holds swaps only inside the checkpointed loop's body (it is back in the arena at the end of
// every iteration).  A buffer of a donation chain may swap: the others of its chain are not
// alive during the run (their lives meet x's only at hand-overs, which touch x).
//
// Example (PPO, one minibatch: forward, backward, Adam): before, the Adam moments `o` hold
// 146,592 arena bytes through the forward and backward statements; after, with a budget,
//   swap o: out before mbloss_0 .. in after grad_mbloss_p_0 (in a block of 19), host offset 0
// and the activations of the forward pass reuse those bytes.
#include <algorithm>
#include <functional>
#include <map>

#include "memory/memplan_impl.h"

namespace trlc {

namespace {

constexpr int64_t kHostAlign = 256;

/** One Block of the nest and what its children call. */
struct BlockInfo {
    const LoopNode *block = nullptr;
    bool in_checkpoint_loop = false;
    std::vector<std::vector<int>> calls;  // per child: statements called (with repeats)
};

void collect(const LoopNode &n, const LoopNode *ckpt, bool inside, std::vector<BlockInfo> *blocks,
             std::map<int, int> *count) {
    if (n.kind == LoopNode::User) {
        ++(*count)[n.stmt];
        return;
    }
    if (&n == ckpt) inside = true;
    for (const auto &ch : n.children) collect(*ch, ckpt, inside, blocks, count);
    if (n.kind != LoopNode::Block) return;
    BlockInfo b;
    b.block = &n;
    b.in_checkpoint_loop = inside && &n != ckpt;
    for (const auto &ch : n.children) {
        std::vector<int> calls;
        std::function<void(const LoopNode &)> walk = [&](const LoopNode &m) {
            if (m.kind == LoopNode::User) calls.push_back(m.stmt);
            for (const auto &c : m.children) walk(*c);
        };
        walk(*ch);
        b.calls.push_back(calls);
    }
    blocks->push_back(b);
}

struct Candidate {
    int buffer = -1;
    const BlockInfo *block = nullptr;
    size_t first = 0, last = 0;
    std::set<int> pieces;  // LifeContext::stmt_times indices of the run's statements
};

}  // namespace

void plan_swaps(const ir::Program &prog, const MemInput &in, const LifeContext &lc, ArenaState &st, MemPlan *plan,
                Diagnostics &diag) {
    plan->budget = in.budget;
    plan->unconstrained_peak = plan->peak_bytes;
    if (plan->peak_bytes <= in.budget || !in.root) return;
    std::map<std::string, int> piece_of_name;
    for (size_t k = 0; k < lc.stmt_names.size(); ++k) piece_of_name[lc.stmt_names[k]] = static_cast<int>(k);
    std::vector<int> piece_of(in.statements.size(), -1);
    for (size_t s = 0; s < in.statements.size(); ++s) {
        auto it = piece_of_name.find(in.statements[s].name);
        if (it != piece_of_name.end()) piece_of[s] = it->second;
    }
    plan_stagings(in, st, plan);
    std::set<int> staged;
    for (const Staging &sg : plan->stagings) staged.insert(sg.buffer);
    std::vector<BlockInfo> blocks;
    std::map<int, int> count;
    collect(*in.root, checkpoint_loop(in.root), false, &blocks, &count);

    const size_t n = plan->buffers.size();
    std::vector<Candidate> cands;
    for (size_t x = 0; x < n; ++x) {
        const Buffer &buf = plan->buffers[x];
        if (buf.bytes == 0 || staged.count(static_cast<int>(x))) continue;
        std::map<int, const isl::set *> piece;
        for (const auto &[k, set] : st.lives[x].live_pieces) piece[k] = &set;
        for (const BlockInfo &b : blocks) {
            if (buf.checkpointed && !b.in_checkpoint_loop) continue;
            // A child qualifies when it calls statements, none touches x, each is called only
            // here, and x is alive at every instance time of each.
            auto qualifies = [&](size_t c, std::set<int> *pieces) {
                std::map<int, int> here;
                for (int s : b.calls[c]) ++here[s];
                if (here.empty()) return false;
                for (const auto &[s, k] : here) {
                    if (st.touched[x].count(s) || count[s] != k || piece_of[s] < 0) return false;
                    auto p = piece.find(piece_of[s]);
                    if (p == piece.end() || !p->second->is_equal(lc.stmt_times[piece_of[s]])) return false;
                    pieces->insert(piece_of[s]);
                }
                return true;
            };
            for (size_t c = 0; c < b.calls.size();) {
                Candidate cand;
                cand.buffer = static_cast<int>(x);
                cand.block = &b;
                cand.first = c;
                while (c < b.calls.size() && qualifies(c, &cand.pieces)) ++c;
                if (c > cand.first) {
                    cand.last = c - 1;
                    cands.push_back(cand);
                } else {
                    ++c;
                }
            }
        }
    }
    std::stable_sort(cands.begin(), cands.end(), [&](const Candidate &a, const Candidate &b) {
        if (plan->buffers[a.buffer].bytes != plan->buffers[b.buffer].bytes)
            return plan->buffers[a.buffer].bytes > plan->buffers[b.buffer].bytes;
        return a.pieces.size() > b.pieces.size();
    });

    // x's life without the pieces of its kept runs, and its conflicts again (only pairs that
    // conflicted before can, since lives only shrink).
    const std::vector<TensorLife> original = st.lives;
    const std::vector<std::vector<bool>> original_conflict = st.live_conflict;
    std::vector<std::vector<const Candidate *>> kept(n);
    auto relive = [&](int x) {
        std::set<int> gone;
        for (const Candidate *c : kept[x]) gone.insert(c->pieces.begin(), c->pieces.end());
        st.lives[x].live_pieces.clear();
        for (const auto &pc : original[x].live_pieces)
            if (!gone.count(pc.first)) st.lives[x].live_pieces.push_back(pc);
        for (size_t y = 0; y < n; ++y)
            if (y != static_cast<size_t>(x) && original_conflict[x][y])
                st.live_conflict[x][y] = st.live_conflict[y][x] = lives_meet(st.lives[x], st.lives[y], lc);
    };
    auto overlaps = [&](const Candidate &c) {  // a kept run of the same buffer calls the same statements
        for (const Candidate *k : kept[c.buffer])
            for (int p : c.pieces)
                if (k->pieces.count(p)) return true;
        return false;
    };
    std::vector<const Candidate *> order;  // kept, in the order taken
    for (const Candidate &c : cands) {
        if (plan->peak_bytes <= in.budget) break;
        if (overlaps(c)) continue;
        MemPlan trial = *plan;
        kept[c.buffer].push_back(&c);
        relive(c.buffer);
        place_buffers(st, &trial);
        if (trial.peak_bytes <= plan->peak_bytes) {
            *plan = trial;
            order.push_back(&c);
        } else {
            kept[c.buffer].pop_back();
            relive(c.buffer);
        }
    }
    if (plan->peak_bytes > in.budget) {
        std::vector<size_t> big(n);
        for (size_t i = 0; i < n; ++i) big[i] = i;
        std::stable_sort(big.begin(), big.end(),
                         [&](size_t a, size_t b) { return plan->buffers[a].bytes > plan->buffers[b].bytes; });
        std::string names;
        for (size_t k = 0; k < big.size() && k < 4; ++k)
            names += (k ? ", " : "") + prog.tensors[plan->buffers[big[k]].tensor].name + " (" +
                     std::to_string(plan->buffers[big[k]].bytes) + " B)";
        diag.error("--mem-budget " + std::to_string(in.budget) + ": no memory plan fits; the smallest arena found is " +
                   std::to_string(plan->peak_bytes) + " bytes with " + std::to_string(order.size()) +
                   " swaps (without a budget: " + std::to_string(plan->unconstrained_peak) +
                   "); a buffer swaps only across statements that do not touch it, and the largest here are " + names);
        return;
    }
    // Drop the swaps the budget does not need, last taken first.
    for (size_t k = order.size(); k-- > 0;) {
        const Candidate &c = *order[k];
        auto &v = kept[c.buffer];
        v.erase(std::find(v.begin(), v.end(), &c));
        relive(c.buffer);
        MemPlan trial = *plan;
        place_buffers(st, &trial);
        if (trial.peak_bytes <= in.budget) {
            *plan = trial;
            order.erase(order.begin() + static_cast<long>(k));
        } else {
            v.push_back(&c);
            relive(c.buffer);
        }
    }
    for (size_t k = plan->stagings.size(); k-- > 0;) {  // and the stagings, last taken first
        MemPlan trial = *plan;
        unstage(&trial, k);
        place_buffers(st, &trial);
        if (trial.peak_bytes <= in.budget) *plan = trial;
    }
    place_buffers(st, plan);
    plan->host_bytes = 0;  // the host arena: every slice of the staged buffers, then the swapped ones
    for (Staging &sg : plan->stagings) {
        sg.host_offset = plan->host_bytes;
        int64_t slices = 1;
        for (int64_t m : sg.modulus) slices *= m;
        plan->host_bytes += (sg.slice_bytes * slices + kHostAlign - 1) / kHostAlign * kHostAlign;
    }
    std::map<int, int64_t> host_at;
    for (const Candidate *c : order) {
        if (!host_at.count(c->buffer)) {
            host_at[c->buffer] = plan->host_bytes;
            plan->host_bytes += (plan->buffers[c->buffer].bytes + kHostAlign - 1) / kHostAlign * kHostAlign;
        }
        Swap s;
        s.buffer = c->buffer;
        s.block = c->block->block;
        s.first = c->first;
        s.last = c->last;
        s.host_offset = host_at[c->buffer];
        s.run_first = in.statements.at(c->block->calls[c->first].front()).name;
        s.run_last = in.statements.at(c->block->calls[c->last].back()).name;
        plan->swaps.push_back(s);
    }
    std::stable_sort(plan->swaps.begin(), plan->swaps.end(), [](const Swap &a, const Swap &b) {
        return a.buffer != b.buffer ? a.buffer < b.buffer : a.first < b.first;
    });
}

}  // namespace trlc
