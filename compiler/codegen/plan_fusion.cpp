// plan_fusion — the fusion pass (codegen/kernel_plan.h): which tensor statements share a kernel.
//
// Fusion.  Consecutive tensor statements of one loop body (children of one Block of the loop
// nest) become one kernel when one thread per batch point can run them in order:
//   1. they have the same batch: the same batch dims in the same order (so the kernel's
//      element e is the same batch point for each of them);
//   2. every read, by a member, of a tensor that a member writes is at the reader's own batch
//      point: the PDG access { c[p] -> x[q] } (isl) lies in { q_batch = p_batch };
//   3. no thread touches bytes that another thread writes: two different buffers that the
//      chain touches (one of them written by it) share arena bytes only when both are reached
//      only at the thread's own batch point, the batch dims lead their storage order, and
//      they start at the same offset with the same bytes per batch point (a donation chain
//      a -> b -> c of point buffers), so each thread reuses only its own bytes.
// A copy onto its own bytes (copies_onto_itself: `net[t+1] = net[t]` on one slot) joins no
// kernel: alone it launches nothing, inside a kernel it would copy 43 KB a step (DQN).
// One batch point's work then happens in the order of the unfused kernels, and different
// points never share bytes, so the fused kernel computes what the separate launches did (and
// the memory plan stays as is).  With one batch point (no batch dims) the chain is sequential
// and always fuses.
// A kernel never spans two named profiler regions (`region "name" { … }`, statement_region):
// the profiler times a kernel under its first statement's region, and a user who names a
// region asks for its statements' time apart from the rest.
// Example: ob_0, logits_0, act_0 over the same batch b, each reading the others only at its own
// b, run as one kernel k_fused_ob_0_x3 (one thread per b runs the three in order).
#include <set>

#include "codegen/kernel_plan.h"
#include "pdg/pdg_impl.h"

namespace trlc {

namespace {

class FusionPlanner {
public:
    FusionPlanner(const ir::Program &prog, const Pdg *pdg, const Schedule &sched, const MemPlan &plan,
                  const CodegenOptions &opts, KernelPlan *out)
        : prog_(prog), pdg_(pdg), sched_(sched), plan_(plan), opts_(opts), blas_(out->blas), single_(out->single),
          groups_(out->groups), fused_at_(out->fused_at) {}

    void run() {
        if (const LoopNode *root = codegen_root(sched_, opts_)) plan_fusion(*root);
    }

private:
    // ---- fusion (rules in the file comment) ----------------------------------------------

    /** Program dims of tensor "t" that are batch axes, in the tensor's dim order. */
    std::vector<int> batch_dims_of(int t) const {
        std::vector<int> b;
        for (int d : prog_.tensors.at(t).dims)
            if (d < static_cast<int>(sched_.batch_dims.size()) && sched_.batch_dims[d]) b.push_back(d);
        return b;
    }

    /** Positions of the batch dims in tensor "t"'s domain. */
    std::vector<int> batch_positions_of(int t) const {
        std::vector<int> b;
        const auto &dims = prog_.tensors.at(t).dims;
        for (size_t k = 0; k < dims.size(); ++k)
            if (dims[k] < static_cast<int>(sched_.batch_dims.size()) && sched_.batch_dims[dims[k]])
                b.push_back(static_cast<int>(k));
        return b;
    }

    const PdgNode *tensor_node(int t) const {
        for (const PdgNode &n : pdg_->impl().nodes)
            if (n.kind == PdgNode::Tensor && n.ir_index == t) return &n;
        return nullptr;
    }

    /** Whether every point read through PDG edge "e" (consumer tensor "c", producer "u") has
     *  the consumer point's batch coordinates: access ⊆ { c[p] -> u[q] : q_batch = p_batch }. */
    bool same_batch_point(const PdgEdge &e, int c, int u) const {
        if (batch_dims_of(c) != batch_dims_of(u)) return false;
        std::vector<int> cp = batch_positions_of(c), up = batch_positions_of(u);
        isl::map access = concrete(pdg_->impl(), e.access);
        isl_map *eq = isl_map_universe(access.get_space().release());
        for (size_t i = 0; i < cp.size(); ++i) eq = isl_map_equate(eq, isl_dim_in, cp[i], isl_dim_out, up[i]);
        return access.is_subset(isl::manage(eq));
    }

    /** Bytes of one batch point of tensor "t"'s buffer when the batch dims lead its storage
     *  order (a thread's bytes are then one block), else -1. */
    int64_t bytes_per_point(int t) const {
        int bi = plan_.buffer_of(t);
        if (bi < 0) return -1;
        const Buffer &b = plan_.buffers[bi];
        bool seen_window = false;
        int64_t points = 1;
        for (size_t d = 0; d < b.modulus.size(); ++d) {
            bool batch = d < b.batch.size() && b.batch[d];
            if (batch && seen_window) return -1;
            if (batch)
                points *= b.modulus[d];
            else if (b.modulus[d] > 1)
                seen_window = true;
        }
        return points > 0 ? b.slots / points * b.slot_bytes : -1;
    }

    /** Whether statements "g" (consecutive in one loop body) may run as one kernel. */
    bool can_fuse(const std::vector<int> &g) {
        const Statement &first = sched_.statements.at(g[0]);
        std::vector<int> sig = batch_dims_of(first.index);
        int64_t points = 1;
        for (int d : sig) points *= prog_.dims[d].bound;
        for (int s : g) {
            const Statement &st = sched_.statements.at(s);
            if (blas_.count(s)) return false;  // operand kernels and gemm calls come first
            if (st.kind != Statement::Tensor || batch_dims_of(st.index) != sig) return false;
            if (plan_.buffer_of(st.index) < 0) return false;
        }
        if (points <= 1) return true;  // one thread runs the chain in order
        // Tensors touched: written by a member, or read (own batch point only, or not).
        std::set<int> written;
        std::map<int, bool> own_point;  // tensor -> every access at the thread's batch point
        for (int s : g) {
            written.insert(sched_.statements[s].index);
            own_point.emplace(sched_.statements[s].index, true);
        }
        for (int s : g) {
            const Statement &st = sched_.statements[s];
            const PdgNode *node = tensor_node(st.index);
            if (!node || st.equation < 0 || st.equation >= static_cast<int>(node->equations.size())) return false;
            for (int ei : node->equations[st.equation].edges) {
                const PdgEdge &e = pdg_->impl().edges.at(ei);
                const PdgNode &prod = pdg_->impl().nodes.at(e.producer);
                if (prod.kind != PdgNode::Tensor) return false;
                int u = prod.ir_index;
                if (plan_.buffer_of(u) < 0) continue;  // a load: read-only, outside the plan
                bool own = same_batch_point(e, st.index, u);
                if (!own && written.count(u)) return false;  // rule 2
                auto it = own_point.emplace(u, own).first;
                it->second = it->second && own;
            }
        }
        // Rule 3: shared bytes between different buffers.
        for (auto a = own_point.begin(); a != own_point.end(); ++a) {
            for (auto b = std::next(a); b != own_point.end(); ++b) {
                if (!written.count(a->first) && !written.count(b->first)) continue;
                const Buffer &ba = plan_.buffers[plan_.buffer_of(a->first)];
                const Buffer &bb = plan_.buffers[plan_.buffer_of(b->first)];
                if (ba.bytes == 0 || bb.bytes == 0) continue;
                if (ba.offset + ba.bytes <= bb.offset || bb.offset + bb.bytes <= ba.offset) continue;
                int64_t fa = bytes_per_point(a->first), fb = bytes_per_point(b->first);
                bool aligned = a->second && b->second && fa > 0 && fa == fb && ba.offset == bb.offset;
                if (!aligned) return false;
            }
        }
        return true;
    }

    /** A --mem-budget swap copies a buffer out before child i or back after child i - 1. */
    bool swap_boundary(const LoopNode &block, size_t i) const {
        for (const Swap &w : plan_.swaps)
            if (w.block == &block && (w.first == i || w.last + 1 == i)) return true;
        return false;
    }

    /** Group consecutive tensor statements of every Block (greedy, in order). */
    void plan_fusion(const LoopNode &n) {
        if (n.kind == LoopNode::User) {
            single_.insert(n.stmt);
            return;
        }
        if (n.kind != LoopNode::Block) {
            for (const auto &ch : n.children) plan_fusion(*ch);
            return;
        }
        std::vector<int> run;
        size_t run_start = 0;
        auto flush = [&](size_t end) {
            if (run.size() == 1) single_.insert(run[0]);
            if (run.size() > 1) {
                int id = -1;
                for (size_t g = 0; g < groups_.size(); ++g)
                    if (groups_[g] == run) id = static_cast<int>(g);
                if (id < 0) {
                    id = static_cast<int>(groups_.size());
                    groups_.push_back(run);
                }
                fused_at_[{&n, run_start}] = {id, end - run_start};
            }
            run.clear();
        };
        for (size_t i = 0; i < n.children.size(); ++i) {
            const LoopNode &ch = *n.children[i];
            bool tensor = ch.kind == LoopNode::User && sched_.statements.at(ch.stmt).kind == Statement::Tensor;
            // The mean over the ranks (trl_allreduce_mean) runs on the host after the statement's
            // kernel: no kernel holds it and what reads it (passes/distribute.h).
            if (tensor && prog_.tensors.at(sched_.statements.at(ch.stmt).index).allreduce_mean) tensor = false;
            // A copy onto its own bytes runs nothing (copies_onto_itself): in a kernel with
            // others it would run.
            if (tensor && copies_onto_itself(prog_, plan_, sched_.statements.at(ch.stmt))) tensor = false;
            if (!tensor) {
                flush(i);
                plan_fusion(ch);
                continue;
            }
            if (!run.empty() && swap_boundary(n, i)) flush(i);  // copies run between the two
            if (!run.empty()) {
                std::vector<int> longer = run;
                longer.push_back(ch.stmt);
                bool same_region = statement_region(prog_, sched_.statements.at(run[0])) ==
                                   statement_region(prog_, sched_.statements.at(ch.stmt));
                if (!(opts_.fuse && pdg_ && same_region && can_fuse(longer))) flush(i);
            }
            if (run.empty()) run_start = i;
            run.push_back(ch.stmt);
        }
        flush(n.children.size());
    }

    const ir::Program &prog_;
    const Pdg *pdg_;
    const Schedule &sched_;
    const MemPlan &plan_;
    const CodegenOptions &opts_;
    const std::map<int, BlasPlan> &blas_;
    std::set<int> &single_;
    std::vector<std::vector<int>> &groups_;
    std::map<std::pair<const LoopNode *, size_t>, std::pair<int, size_t>> &fused_at_;
};

}  // namespace

bool copies_onto_itself(const ir::Program &prog, const MemPlan &plan, const Statement &st) {
    if (st.kind != Statement::Tensor) return false;
    const ir::Tensor &x = prog.tensors.at(st.index);
    if (st.equation < 0 || st.equation >= static_cast<int>(x.equations.size())) return false;
    const ir::Node &body = *x.equations[st.equation].body;
    if (body.kind != ir::NodeKind::Read || x.is_load || prog.tensors.at(body.tensor).is_load) return false;
    for (const ir::ReadIndex &ri : body.index)
        if (ri.is_slice) return false;
    const int bx = plan.buffer_of(st.index), by = plan.buffer_of(body.tensor);
    if (bx < 0 || by < 0) return false;
    auto one_address = [&](int b) {  // every point of the buffer at its offset
        const Buffer &buf = plan.buffers.at(b);
        for (size_t d = 0; d < buf.modulus.size(); ++d)
            if (buf.modulus[d] != 1 && buf.stride[d] != 0) return false;  // address() varies with d
        return true;
    };
    if (!one_address(bx) || !one_address(by)) return false;
    if (bx == by) return true;
    // Another tensor's buffer at the same bytes (donated, as the mean over the ranks takes its
    // gradient's), holding a value of the same type, so of the same layout; neither moved to
    // the host arena under --mem-budget, where the two could be apart.
    for (const Swap &sw : plan.swaps)
        if (sw.buffer == bx || sw.buffer == by) return false;
    for (const Staging &sg : plan.stagings)
        if (sg.buffer == bx || sg.buffer == by) return false;
    const ir::Tensor &y = prog.tensors.at(body.tensor);
    return plan.buffers.at(bx).offset == plan.buffers.at(by).offset && type_to_string(x.type) == type_to_string(y.type);
}

void plan_fusion(const ir::Program &prog, const Pdg *pdg, const Schedule &sched, const MemPlan &plan,
                 const CodegenOptions &opts, KernelPlan *out) {
    FusionPlanner(prog, pdg, sched, plan, opts, out).run();
}

void print_fusion(const Schedule &sched, const KernelPlan &k, std::ostream &out) {
    if (k.groups.empty()) out << "no fusion\n";
    for (const auto &g : k.groups) {
        for (size_t m = 0; m < g.size(); ++m) out << (m ? " + " : "") << sched.statements.at(g[m]).name;
        out << "\n";
    }
}

}  // namespace trlc
