// statements — the statements of the schedule, from the PDG (issue 3 conventions).
//
// One statement per (tensor, equation) with a non-empty effective domain, named
// `<tuple>_<k>`; one per emit (its PDG tuple, `emit_<stream>`) and per save
// (`save_<n>`).  Loads have none: their values exist from the start.  An
// instance's coordinates are the tensor point without the batch dims chosen by
// vectorization (a batch dim ranges over [0, bound): one instance computes all
// of them), so
//   act[b, t] (b batch)   →   act_0[t]  with  writes { act_0[t] -> act[b, t] : 0 <= b < B }
// All isl objects are made concrete (parameters substituted, pdg/pdg_impl.h).
#include <algorithm>
#include <set>

#include "pdg/pdg_impl.h"
#include "schedule/schedule_impl.h"

namespace trlc {

isl::map projection(const isl::set &points, const std::vector<int> &batch_positions, const std::string &stmt) {
    isl::map m = isl::manage(isl_set_identity(points.copy()));
    std::vector<int> pos = batch_positions;
    std::sort(pos.rbegin(), pos.rend());
    for (int p : pos) m = isl::manage(isl_map_project_out(m.release(), isl_dim_out, p, 1));
    return isl::manage(isl_map_set_tuple_name(m.release(), isl_dim_out, stmt.c_str()));
}

void build_statements(const ir::Program &prog, const Pdg &pdg, Schedule &s) {
    const PdgImpl &g = pdg.impl();
    ScheduleImpl &im = s.impl();
    isl::ctx ctx = g.isl.ctx();
    std::set<std::string> taken;
    for (const PdgNode &n : g.nodes) taken.insert(n.tuple);  // keep tensor names for tensors
    auto unique = [&](std::string name) {
        while (taken.count(name)) name += "_";
        taken.insert(name);
        return name;
    };

    im.domain = isl::union_set::empty(ctx);
    im.writes = isl::union_map::empty(ctx);
    im.reads = isl::union_map::empty(ctx);
    for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
        const PdgNode &n = g.nodes[ni];
        if (n.is_load) continue;
        std::vector<int> dims;  // Program::dims index of each position
        if (n.kind == PdgNode::Tensor) {
            dims = prog.tensors.at(n.ir_index).dims;
        } else if (n.kind == PdgNode::Emit)
            dims = prog.emits.at(n.ir_index).vars;
        std::vector<int> batch, kept;
        for (size_t p = 0; p < dims.size(); ++p) {
            int d = dims[p];
            bool is_batch = d >= 0 && d < static_cast<int>(s.batch_dims.size()) && s.batch_dims[d];
            if (is_batch)
                batch.push_back(static_cast<int>(p));
            else
                kept.push_back(d);
        }
        for (size_t k = 0; k < n.equations.size(); ++k) {
            const PdgEquation &eq = n.equations[k];
            isl::set points = concrete(g, eq.effective).coalesce();
            if (points.is_empty()) continue;
            Statement st;
            st.kind = n.kind == PdgNode::Tensor ? Statement::Tensor
                      : n.kind == PdgNode::Emit ? Statement::Emit
                                                : Statement::Save;
            st.name = n.kind == PdgNode::Tensor ? unique(n.tuple + "_" + std::to_string(k))
                                                : n.tuple;  // emit/save tuples are unique nodes
            st.index = n.ir_index;
            st.equation = n.kind == PdgNode::Tensor ? static_cast<int>(k) : -1;
            st.dims = kept;
            st.batch_positions = batch;
            st.loc = eq.loc;
            isl::map proj = projection(points, batch, st.name);
            isl::map inst_to_points = proj.reverse().coalesce();
            isl::set dom = proj.range().coalesce();
            im.stmt_domain.push_back(dom);
            im.stmt_points.push_back(inst_to_points);
            im.domain = im.domain.unite(isl::union_set(dom));
            if (st.kind == Statement::Tensor) im.writes = im.writes.unite(isl::union_map(inst_to_points));
            for (int e : eq.edges) {
                isl::map access = concrete(g, g.edges.at(e).access);
                im.reads = im.reads.unite(isl::union_map(inst_to_points.apply_range(access)));
            }
            s.statements.push_back(std::move(st));
        }
    }
    im.domain = im.domain.coalesce();
    im.writes = im.writes.coalesce();
    im.reads = im.reads.coalesce();
}

isl_schedule *insert_band_like(isl_schedule *sub, isl_multi_union_pw_aff *mupa, isl_schedule_node *like) {
    isl_size n = isl_schedule_node_band_n_member(like);
    sub = isl_schedule_insert_partial_schedule(sub, mupa);
    isl_schedule_node *root = isl_schedule_get_root(sub);
    isl_schedule_free(sub);
    isl_schedule_node *band = isl_schedule_node_child(root, 0);
    band = isl_schedule_node_band_set_permutable(band, isl_schedule_node_band_get_permutable(like) == isl_bool_true);
    for (isl_size i = 0; i < n; ++i)
        band = isl_schedule_node_band_member_set_coincident(
            band, i, isl_schedule_node_band_member_get_coincident(like, i) == isl_bool_true);
    sub = isl_schedule_node_get_schedule(band);
    isl_schedule_node_free(band);
    return sub;
}

isl_schedule *sequence_children(isl_schedule_node *node, isl_union_set *domain,
                                const std::function<isl_schedule *(int, isl_union_set *)> &child,
                                const std::vector<int> *order) {
    isl_size n = isl_schedule_node_n_children(node);
    isl_schedule *out = nullptr;
    for (isl_size k = 0; k < n; ++k) {
        int i = order ? order->at(k) : static_cast<int>(k);
        isl_schedule *part = child(i, isl_union_set_copy(domain));
        if (!part) {
            isl_schedule_free(out);
            out = nullptr;
            break;
        }
        out = out ? isl_schedule_sequence(out, part) : part;
    }
    isl_union_set_free(domain);
    return out;
}

}  // namespace trlc
