// sequence_order — the order of a sequence node's children that lets a tensor's next point
// take the slot of its last one: readers of an earlier point before the writer of a later one.
//
// What: isl's scheduler decides the bands; the order of the children of a sequence node below
// them is only constrained by the dependences between instances at the same band time (the
// node's prefix schedule), and isl picks one topological order.  Among those orders, one that
// runs every reader of x before the child that writes another point of x at the same time
// ends x's live ranges before the next point starts, so the memory plan (successive modulo,
// memory/storage_kinds.cpp) needs fewer slots, and a copy x[t+1] = x[t] becomes a copy onto
// its own slot, which codegen skips.
//
// When: every sequence node of a schedule isl computed (or read from the schedule cache),
// before the loop nest is built; never on a --load-schedule tree (the user's order is kept).
//
// How: children i -> j are *hard* edges when a flow dependence runs from an instance in i to
// one in j at the same prefix time, and between consecutive emits and saves (their records
// keep their order); *soft* edges i -> j when i reads a tensor a point of which j writes
// and both have instances at the same prefix time.  Soft edges are added in order (writer,
// then reader, by position) when they close no cycle; the new order is the topological order
// of the edges (Kahn) that takes next a child running at the same prefix times as the last one
// placed (so in the same branch of the loop nest, under the same guards, where the fusion pass
// may join them), else the smallest original position.
// Measured with the outer band (outer_band.h; launch sites in the generated source, arena
// bytes), grouping by times: PPO CartPole 54 -> 47 launch sites and 350,736 -> 317,968 bytes,
// n-step 48 -> 42, DQN 29 -> 24, REINFORCE 38 -> 33 and 1,271,312 -> 1,252,880 bytes.  Soft
// edges for tensors of every size (they were for points of at least 4 KB, since moving a small
// value's reader split a fused kernel of cartpole_rollout): the samples' arenas unchanged, one
// launch site more in cartpole_rollout, n-step and REINFORCE, and windows one point shorter
// where isl's order below the band put a small value's writer first (runtime-bound.trl: x
// keeps 2 points, not 3; replay-in-place.trl 3,344 -> 2,832 bytes).
//
// Example (samples/dqn_cartpole.trl, the one loop over t; in the iteration c = t + 2):
//   before: ..., net_1(t+1) [net[t+1] = the update's], act_0(t+1), ..., loss_0(t) [the loss
//           the "train" emit reads, every 1,000 steps: reads net[t]]
//           -> net[t] is alive when net[t+1] is written: a window of 2 slots, so the copy
//              net_2(t+1) [net[t+1] = net[t], the steps without an update] moves 43,744 bytes
//   after:  ..., loss_0(t), net_1(t+1), act_0(t+1), ...
//           -> net: point, 1 slot; net_2 a copy onto its own slot (nothing runs)
#include <algorithm>
#include <map>
#include <set>

#include "schedule/schedule_impl.h"

namespace trlc {

namespace {

/** Tuple names of the sets of "u". */
std::set<std::string> names_of(const isl::union_set &u) {
    std::set<std::string> out;
    u.foreach_set([&](isl::set s) { out.insert(isl_set_get_tuple_name(s.get())); });
    return out;
}

/** The tuple name of the range of "m". */
std::string out_name(const isl::map &m) { return isl_map_get_tuple_name(m.get(), isl_dim_out); }

/** Whether a path of "edges" leads from "from" to "to". */
bool reaches(const std::vector<std::vector<bool>> &edges, int from, int to) {
    std::vector<bool> seen(edges.size(), false);
    std::vector<int> stack = {from};
    while (!stack.empty()) {
        int v = stack.back();
        stack.pop_back();
        if (v == to) return true;
        if (seen[v]) continue;
        seen[v] = true;
        for (size_t w = 0; w < edges.size(); ++w)
            if (edges[v][w] && !seen[w]) stack.push_back(static_cast<int>(w));
    }
    return false;
}

}  // namespace

std::vector<int> storage_order(isl_schedule_node *seq, const Schedule &s) {
    const ScheduleImpl &im = s.impl();
    const int n = static_cast<int>(isl_schedule_node_n_children(seq));
    std::vector<int> order(n);
    for (int i = 0; i < n; ++i) order[i] = i;
    if (n < 2) return order;
    std::vector<isl::union_set> filter(n);
    std::vector<std::set<std::string>> stmts(n);
    for (int i = 0; i < n; ++i) {
        isl_schedule_node *c = isl_schedule_node_get_child(seq, i);
        filter[i] = isl::manage(isl_schedule_node_filter_get_filter(c)).intersect(im.domain);
        isl_schedule_node_free(c);
        stmts[i] = names_of(filter[i]);
    }
    std::map<std::string, Statement::Kind> kind;
    for (const Statement &st : s.statements) kind[st.name] = st.kind;
    // The flow dependences between instances at the same time of the bands above the node,
    // dependence by dependence over its two statements' prefix times: the union-wide pairs at
    // one time (prefix ∘ prefix⁻¹) have a piece per statement pair, which made this function
    // 0.18 s of n-step CartPole's front end.
    isl::union_map prefix = isl::manage(isl_schedule_node_get_prefix_schedule_union_map(seq));
    std::map<std::string, isl::map> prefix_of;  // statement -> its instances' prefix times
    prefix.foreach_map([&](isl::map m) { prefix_of.emplace(isl_map_get_tuple_name(m.get(), isl_dim_in), m); });
    isl::union_map flow_now = isl::union_map::empty(prefix.ctx());
    im.flow.foreach_map([&](isl::map m) {
        auto src = prefix_of.find(isl_map_get_tuple_name(m.get(), isl_dim_in));
        auto dst = prefix_of.find(out_name(m));
        if (src == prefix_of.end() || dst == prefix_of.end()) return;  // not below this node
        isl::map now = m.intersect(src->second.apply_range(dst->second.reverse()));
        if (!now.is_empty()) flow_now = flow_now.unite(isl::union_map(now));
    });
    std::vector<std::vector<bool>> edges(n, std::vector<bool>(n, false));
    int last_record = -1;  // emits and saves keep their order
    for (int i = 0; i < n; ++i) {
        isl::union_map out = flow_now.intersect_domain(filter[i]);
        std::set<std::string> succ;
        out.foreach_map([&](isl::map m) { succ.insert(out_name(m)); });
        for (int j = 0; j < n; ++j) {
            if (j == i) continue;
            bool candidate = std::any_of(stmts[j].begin(), stmts[j].end(),
                                         [&](const std::string &nm) { return succ.count(nm) > 0; });
            if (candidate && !out.intersect_range(filter[j]).is_empty()) edges[i][j] = true;
        }
        bool record = std::any_of(stmts[i].begin(), stmts[i].end(), [&](const std::string &nm) {
            auto it = kind.find(nm);
            return it != kind.end() && it->second != Statement::Tensor;
        });
        if (record) {
            if (last_record >= 0) edges[last_record][i] = true;
            last_record = i;
        }
    }
    // The times of the bands above at which each child runs: children with equal ones sit in
    // the same branch of the loop nest (the same guards), where the fusion pass can join them;
    // two children have instances at one time when their times meet.
    std::vector<isl::union_set> times(n);
    for (int i = 0; i < n; ++i) times[i] = filter[i].apply(prefix);
    // Soft edges: the readers of a tensor before a writer of it at the same time.
    std::vector<std::set<std::string>> reads(n), writes(n);
    for (int i = 0; i < n; ++i) {
        im.reads.intersect_domain(filter[i]).foreach_map([&](isl::map m) { reads[i].insert(out_name(m)); });
        im.writes.intersect_domain(filter[i]).foreach_map([&](isl::map m) { writes[i].insert(out_name(m)); });
    }
    for (int j = 0; j < n; ++j) {
        if (writes[j].empty()) continue;
        for (int i = 0; i < n; ++i) {
            if (i == j || edges[i][j]) continue;
            bool shares = std::any_of(reads[i].begin(), reads[i].end(),
                                      [&](const std::string &x) { return writes[j].count(x) > 0; });
            if (!shares || reaches(edges, j, i) || times[i].intersect(times[j]).is_empty()) continue;
            edges[i][j] = true;
        }
    }
    // Kahn's algorithm: a child with the times of the last one placed first, then the smallest
    // original position.  (Measured and not taken: the child that starts first next, so that
    // initializers lead and isl's loop nest runs them before the loop: PPO CartPole 47 -> 63
    // launch sites.)
    std::vector<int> indegree(n, 0);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
            if (edges[i][j]) ++indegree[j];
    std::vector<bool> placed(n, false);
    order.clear();
    for (int k = 0; k < n; ++k) {
        int pick = -1;
        if (!order.empty())
            for (int i = 0; i < n && pick < 0; ++i)
                if (!placed[i] && indegree[i] == 0 && times[i].is_equal(times[order.back()])) pick = i;
        for (int i = 0; i < n && pick < 0; ++i)
            if (!placed[i] && indegree[i] == 0) pick = i;
        TRLC_ASSERT(pick >= 0) << "sequence_order: the edges form a cycle";
        placed[pick] = true;
        order.push_back(pick);
        for (int j = 0; j < n; ++j)
            if (edges[pick][j]) --indegree[j];
    }
    return order;
}

}  // namespace trlc
