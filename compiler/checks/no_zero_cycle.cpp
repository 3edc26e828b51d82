// no_zero_cycle — prove with isl that no point depends on itself.
//
// Per strongly connected component of the tensor-level graph (a tensor reading
// itself counts), take the component's access relations under the context,
// concrete (all bounds are known, so every relation is finite).
// First a cheap proof (residual): pick a dim that every tensor of the component
// has and along which the reads go only one way (consumer coordinate ≥ producer
// coordinate on every edge, or ≤ on every edge: `ret[t]` reading `ret[t+1]`); on
// a point-level cycle the distances along it sum to zero, so every edge of the
// cycle has distance 0 there: drop the edges' nonzero-distance parts, split the
// rest into tensor-level components again and recurse.  What is left ("leaves",
// usually nothing) holds every cycle of the component; each leaf's union R of
// relations is decided exactly:
//   R = { a[t] -> b[t]; b[t] -> a[t] }
// A point depends on itself iff R+ (transitive closure) meets the identity.
// isl's closure may be an over-approximation (or give up after an operation
// budget); when it is empty, there is no cycle.  Otherwise R+ is built again
// by repeated squaring (C := C ∪ C∘C; ≤ 64 rounds cover any path length), every
// C exact and within R+, stopping at the first round where C meets the
// identity: those points are on the shortest cycles, and the error names one
// of them (an exact isl closure stands when squaring runs out of budget).  A
// fixpoint without such a round proves the leaf acyclic.  Each step runs under
// an isl operation budget (kCycleCheckOperations); when neither decides, a
// warning says the check could not.  Found by tools/fuzz.sh: a REINFORCE whose
// update read net[I] in every iteration squared for 14 s to the full closure and
// then reported a 400-step cycle from net[1]; it now stops after 2 rounds at
// `net[i] -> (net, opt)[i] -> net[i] (at i = 200)`.
// For the first of those points (first tensor in definition order, smallest
// point), a shortest cycle is found breadth-first and reported:
//   zero-distance dependence cycle: a[t] -> b[t] -> a[t]
// at the first tensor's equation, with a note at each read along the cycle.
// Points are written relative to the first one (`x[t] -> x[t+1] -> x[t]` is a
// "dependence cycle" whose distance is not zero but which is still a cycle);
// when only some points of the first tensor are on cycles, " (at t = 7)" names
// the first point.
// Requires: build_pdg, check_reads_defined (relations restricted to defined points).
#include <isl/ctx.h>
#include <isl/map.h>
#include <isl/set.h>
#include <isl/space.h>
#include <isl/union_map.h>
#include <isl/union_set.h>
#include <isl/val.h>

#include <algorithm>
#include <functional>
#include <map>
#include <tuple>

#include "checks/checks.h"
#include "pdg/pdg_impl.h"
#include "support/time_passes.h"

namespace trlc {

namespace {

struct Point {
    int node = -1;
    std::vector<int64_t> coords;
    bool operator==(const Point &o) const { return node == o.node && coords == o.coords; }
};

/* The strongly connected components of the tensor graph, each sorted, in sorted order. */
std::vector<std::vector<int>> components(int n, const std::vector<std::vector<int>> &succ) {
    std::vector<std::vector<int>> out = strongly_connected_components(n, succ);
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

bool with_operation_budget(isl_ctx *ctx, unsigned long operations, const std::function<void()> &f) {
    isl_ctx_set_max_operations(ctx, operations);
    isl_ctx_reset_operations(ctx);
    bool ok = true;
    try {
        f();
    } catch (const isl::exception &) {
        isl_ctx_reset_error(ctx);
        ok = false;
    }
    isl_ctx_set_max_operations(ctx, 0);
    return ok;
}

bool exact_transitive_closure(const isl::union_map &r, isl::union_map *out, unsigned long operations,
                              const std::function<bool(const isl::union_map &)> &enough) {
    return with_operation_budget(r.ctx().get(), operations, [&] {
        isl::union_map c = r;
        for (int round = 0; round < 64 && !(enough && enough(c)); ++round) {
            isl::union_map next = c.unite(c.apply_range(c)).coalesce();
            if (next.is_subset(c)) break;
            c = next;
        }
        *out = c;
    });
}

namespace {

class CycleChecker {
public:
    CycleChecker(const PdgImpl &g, Diagnostics &diag, unsigned long operations)
        : g_(g), diag_(diag), operations_(operations) {
        for (size_t i = 0; i < g.nodes.size(); ++i) by_tuple_[g.nodes[i].tuple] = static_cast<int>(i);
    }

    void run() {
        int n = static_cast<int>(g_.nodes.size());
        std::vector<std::vector<int>> succ(n);
        std::vector<bool> self(n, false);
        for (const PdgEdge &e : g_.edges) {
            if (g_.nodes[e.consumer].kind != PdgNode::Tensor) continue;
            succ[e.consumer].push_back(e.producer);
            if (e.consumer == e.producer) self[e.consumer] = true;
        }
        for (const std::vector<int> &comp : components(n, succ))
            if (comp.size() > 1 || self[comp[0]]) check_component(comp);
    }

private:
    /* The access of "e" under the context, concrete, with canonical dim names
     * (the producer's own, unprimed) so that relations of one tensor unite. */
    isl::map concrete_access(const PdgEdge &e) const {
        const PdgNode &x = g_.nodes[e.producer];
        isl::map m = concrete(g_, e.access.intersect_range(x.domain));
        isl_map *raw = m.release();
        for (size_t k = 0; k < x.dim_names.size(); ++k)
            raw = isl_map_set_dim_name(raw, isl_dim_out, static_cast<unsigned>(k), x.dim_names[k].c_str());
        return isl::manage(raw);
    }

    isl::union_set point_set(const Point &p) const {
        const PdgNode &n = g_.nodes[p.node];
        isl_space *sp = isl_space_set_alloc(g_.isl.raw(), 0, static_cast<unsigned>(p.coords.size()));
        sp = isl_space_set_tuple_name(sp, isl_dim_set, n.tuple.c_str());
        for (size_t k = 0; k < n.dim_names.size(); ++k)
            sp = isl_space_set_dim_name(sp, isl_dim_set, static_cast<unsigned>(k), n.dim_names[k].c_str());
        isl_set *s = isl_set_universe(sp);
        for (size_t k = 0; k < p.coords.size(); ++k)
            s = isl_set_fix_val(s, isl_dim_set, static_cast<unsigned>(k),
                                isl_val_int_from_si(g_.isl.raw(), static_cast<long>(p.coords[k])));
        return isl::union_set(isl::manage(s));
    }

    /* The first point of "u": first node in definition order, smallest point. */
    bool first_point_of(const isl::union_set &u, Point *p) const {
        bool found = false;
        u.foreach_set([&](isl::set s) {
            if (s.is_empty()) return;
            const char *name = isl_set_get_tuple_name(s.get());
            auto it = by_tuple_.find(name ? name : "");
            if (it == by_tuple_.end()) return;
            if (found && it->second > p->node) return;
            Point q{it->second, first_point(s)};
            if (!found || q.node < p->node || q.coords < p->coords) *p = q;
            found = true;
        });
        return found;
    }

    /* An edge of the component: PDG edge index, consumer, producer, concrete
     * access (possibly restricted to the pairs that can still lie on a cycle). */
    struct Edge {
        int index = -1, consumer = -1, producer = -1;
        isl::map rel;
    };

    /* "m" (consumer → producer) restricted to the pairs whose consumer "cpos"
     * coordinate is below (lt), above (gt) or equal to (eq) the producer's "ppos". */
    enum class Order { lt, gt, eq };
    static isl::map order(const isl::map &m, unsigned cpos, unsigned ppos, Order o) {
        isl_map *raw = m.copy();
        if (o == Order::lt) raw = isl_map_order_lt(raw, isl_dim_in, cpos, isl_dim_out, ppos);
        if (o == Order::gt) raw = isl_map_order_gt(raw, isl_dim_in, cpos, isl_dim_out, ppos);
        if (o == Order::eq) raw = isl_map_equate(raw, isl_dim_in, cpos, isl_dim_out, ppos);
        return isl::manage(raw);
    }

    /* Splits the edges "es" into the parts that can still lie on a point-level
     * cycle ("leaves": every point-level cycle of "es" lies in one leaf, every cycle
     * of a leaf is one of "es"); no leaves proves "es" acyclic.  Step: a dim d that
     * every tensor here has and along which the reads go only one way (consumer
     * coordinate ≥ producer coordinate on every edge, or ≤ on every edge).  Around
     * a cycle the distances along d sum to zero, so each is zero: only the
     * zero-distance parts of the edges can be on a cycle; their tensor-level
     * components are split again along another dim.  Of the dims that allow a
     * step, the one leaving the fewest edges wins (none: stop at once). */
    std::vector<std::vector<Edge>> residual(const std::vector<Edge> &es, std::vector<std::string> used,
                                            int depth) const {
        if (es.empty()) return {};
        if (depth > 16) return {es};
        std::vector<int> nodes;
        for (const Edge &e : es) {
            nodes.push_back(e.consumer);
            nodes.push_back(e.producer);
        }
        std::sort(nodes.begin(), nodes.end());
        nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
        auto pos = [&](int node, const std::string &d) {
            const auto &names = g_.nodes[node].dim_names;
            auto it = std::find(names.begin(), names.end(), d);
            return it == names.end() ? -1 : static_cast<int>(it - names.begin());
        };
        std::vector<std::vector<Edge>> best{es};
        size_t best_edges = es.size();
        // Dims every tensor here has, in the first tensor's order.
        for (const std::string &d : g_.nodes[nodes[0]].dim_names) {
            if (std::find(used.begin(), used.end(), d) != used.end()) continue;
            bool common = true;
            for (int n : nodes) common = common && pos(n, d) >= 0;
            if (!common) continue;
            bool below = false, above = false;  // some consumer coordinate < / > producer's
            std::vector<Edge> zero;
            for (const Edge &e : es) {
                unsigned cp = static_cast<unsigned>(pos(e.consumer, d));
                unsigned pp = static_cast<unsigned>(pos(e.producer, d));
                below = below || !order(e.rel, cp, pp, Order::lt).is_empty();
                above = above || !order(e.rel, cp, pp, Order::gt).is_empty();
                if (below && above) break;
                isl::map z = order(e.rel, cp, pp, Order::eq);
                if (!z.is_empty()) zero.push_back({e.index, e.consumer, e.producer, z});
            }
            if (below && above) continue;
            // The zero-distance edges' tensor-level components, each on its own.
            int n = static_cast<int>(g_.nodes.size());
            std::vector<std::vector<int>> succ(n);
            std::vector<bool> self(n, false);
            for (const Edge &e : zero) {
                succ[e.consumer].push_back(e.producer);
                if (e.consumer == e.producer) self[e.consumer] = true;
            }
            std::vector<std::string> used2 = used;
            used2.push_back(d);
            std::vector<std::vector<Edge>> leaves;
            size_t left = 0;
            for (const std::vector<int> &c : components(n, succ)) {
                if (!(c.size() > 1 || self[c[0]])) continue;
                std::vector<Edge> sub;
                for (const Edge &e : zero)
                    if (std::binary_search(c.begin(), c.end(), e.consumer) &&
                        std::binary_search(c.begin(), c.end(), e.producer))
                        sub.push_back(e);
                for (std::vector<Edge> &leaf : residual(sub, used2, depth + 1)) {
                    left += leaf.size();
                    leaves.push_back(std::move(leaf));
                }
            }
            if (leaves.empty()) return {};
            if (left < best_edges) {
                best = std::move(leaves);
                best_edges = left;
            }
        }
        return best;
    }

    /* The points of "leaf" that depend on themselves (the closure of its relation meets the
     * identity): none when isl's closure proves it; else those on the shortest cycles, which
     * squaring finds first (C ⊆ R+ after every round), or all of them by isl's exact closure
     * when squaring runs out of budget; false when no step decided ("r": the relation). */
    bool points_on_cycles(const std::vector<Edge> &leaf, isl::union_map *r, isl::union_map *on_cycle) const {
        *r = isl::union_map::empty(g_.isl.ctx());
        for (const Edge &e : leaf) *r = r->unite(isl::union_map(e.rel));
        PassTimer t("transitive closure (" + std::to_string(leaf.size()) + " edges)");
        isl_ctx *ctx = g_.isl.raw();
        isl::union_set points = r->domain().unite(r->range());
        isl_bool exact = isl_bool_false;
        isl::union_map approx;
        bool closed = with_operation_budget(
            ctx, operations_, [&] { approx = isl::manage(isl_union_map_transitive_closure(r->copy(), &exact)); });
        isl::union_map identity = points.identity();
        if (closed) {  // else over budget: decide by squaring below
            *on_cycle = approx.intersect(identity);
            if (on_cycle->is_empty()) return true;
        }
        // Squaring stops at the first round whose paths close a cycle: the points on the
        // shortest cycles (length at most 2^round), maybe not all points on cycles, which is
        // enough for the error and names a short cycle.  Past its budget, isl's set stands
        // when it is exact.
        isl::union_map c;
        auto cycle = [&](const isl::union_map &m) { return !m.intersect(identity).is_empty(); };
        if (!exact_transitive_closure(*r, &c, operations_, cycle)) return closed && exact == isl_bool_true;
        *on_cycle = c.intersect(identity);
        return true;
    }

    void check_component(const std::vector<int> &comp) {
        PassTimer timer("component of " + g_.nodes[comp[0]].name + " (" + std::to_string(comp.size()) + " tensors)");
        std::vector<Edge> es;
        for (size_t i = 0; i < g_.edges.size(); ++i) {
            const PdgEdge &e = g_.edges[i];
            if (std::binary_search(comp.begin(), comp.end(), e.consumer) &&
                std::binary_search(comp.begin(), comp.end(), e.producer))
                es.push_back({static_cast<int>(i), e.consumer, e.producer, concrete_access(e)});
        }
        std::vector<std::vector<Edge>> leaves;
        {
            PassTimer t("acyclicity proof");
            leaves = residual(es, {}, 0);
        }
        // Every cycle lies in one leaf: report the one holding the first point on a cycle.
        bool found = false;
        Point start;
        isl::union_map start_r, start_on_cycle;
        std::vector<std::pair<int, isl::map>> start_edges;  // edge index, relation
        for (const std::vector<Edge> &leaf : leaves) {
            isl::union_map r, on_cycle;
            if (!points_on_cycles(leaf, &r, &on_cycle)) {
                const PdgNode &first = g_.nodes[comp[0]];
                diag_.warning(first.loc, "could not prove that " + first.name +
                                             " has no dependence cycle (the analysis is too large)");
                return;
            }
            Point p;
            if (on_cycle.is_empty() || !first_point_of(on_cycle.domain(), &p)) continue;
            if (found && !(p.node < start.node || (p.node == start.node && p.coords < start.coords))) continue;
            found = true;
            start = p;
            start_r = r;
            start_on_cycle = on_cycle;
            start_edges.clear();
            for (const Edge &e : leaf) start_edges.push_back({e.index, e.rel});
            std::sort(start_edges.begin(), start_edges.end(),
                      [](const auto &a, const auto &b) { return a.first < b.first; });
        }
        if (!found) return;
        // Say where, unless every point of the first tensor is on a cycle.
        bool everywhere = false;
        const PdgNode &first = g_.nodes[start.node];
        start_on_cycle.domain().foreach_set([&](isl::set s) {
            const char *name = isl_set_get_tuple_name(s.get());
            if (name && first.tuple == name) everywhere = concrete(g_, first.domain).is_subset(s.coalesce());
        });
        report(start, start_r, start_edges, everywhere);
    }

    /* A shortest cycle from "start" back to itself, breadth first over R. */
    std::vector<Point> find_cycle(const Point &start, const isl::union_map &r) const {
        isl::union_set target = point_set(start);
        std::vector<isl::union_set> levels{target};
        for (int k = 1; k <= 4096; ++k) {
            isl::union_set next = levels.back().apply(r).coalesce();
            if (next.is_empty()) return {};
            levels.push_back(next);
            if (!target.is_subset(next)) continue;
            std::vector<Point> path{start};
            Point cur = start;
            for (int j = k - 1; j >= 1; --j) {
                isl::union_set pred = point_set(cur).apply(r.reverse()).intersect(levels[j]);
                Point p;
                if (!first_point_of(pred, &p)) return {};
                path.push_back(p);
                cur = p;
            }
            path.push_back(start);
            std::reverse(path.begin() + 1, path.end() - 1);
            return path;
        }
        return {};
    }

    std::string point_text(const Point &p, const Point &start, bool *zero) const {
        const PdgNode &n = g_.nodes[p.node];
        const PdgNode &s = g_.nodes[start.node];
        std::string out = n.name;
        if (n.dim_names.empty()) return out;
        out += "[";
        for (size_t k = 0; k < n.dim_names.size(); ++k) {
            out += k ? ", " : "";
            auto it = std::find(s.dim_names.begin(), s.dim_names.end(), n.dim_names[k]);
            if (it == s.dim_names.end()) {
                out += std::to_string(p.coords[k]);
                continue;
            }
            int64_t d = p.coords[k] - start.coords[it - s.dim_names.begin()];
            out += n.dim_names[k];
            if (d > 0) out += "+" + std::to_string(d);
            if (d < 0) out += std::to_string(d);
            if (d != 0) *zero = false;
        }
        return out + "]";
    }

    /* The first edge (in PDG order) that maps "a" to "b". */
    int edge_between(const Point &a, const Point &b, const std::vector<std::pair<int, isl::map>> &edges) const {
        for (const auto &e : edges) {
            const PdgEdge &edge = g_.edges[e.first];
            if (edge.consumer != a.node || edge.producer != b.node) continue;
            isl::union_set img = point_set(a).apply(isl::union_map(e.second));
            if (point_set(b).is_subset(img)) return e.first;
        }
        return -1;
    }

    void report(const Point &start, const isl::union_map &r, const std::vector<std::pair<int, isl::map>> &edges,
                bool everywhere) {
        std::vector<Point> path = find_cycle(start, r);
        const PdgNode &first = g_.nodes[start.node];
        if (path.size() < 2) {
            diag_.error(first.loc,
                        "dependence cycle through " + first.name + ": a point of " + first.name + " depends on itself");
            return;
        }
        bool zero = true;
        std::vector<std::string> texts;
        for (const Point &p : path) texts.push_back(point_text(p, start, &zero));
        // A long cycle shows its first kHead and last kTail steps (and their notes only):
        //   x[t] -> x[t+1] -> x[t+2] -> x[t+3] -> x[t+4] -> ... (293 more steps) -> x[t+297] ->
        //   x[t+298] -> x[t+299] -> x[t]
        constexpr size_t kHead = 4, kTail = 3;
        size_t n_steps = path.size() - 1;
        auto shown = [&](size_t step) {
            return n_steps <= kHead + kTail + 2 || step < kHead || step + kTail >= n_steps;
        };
        std::string chain = texts[0];
        for (size_t i = 0; i < n_steps; ++i) {
            if (shown(i) && i > 0 && !shown(i - 1)) chain += " -> " + texts[i];  // where the gap ends
            if (shown(i))
                chain += " -> " + texts[i + 1];
            else if (i == kHead)
                chain += " -> ... (" + std::to_string(n_steps - kHead - kTail) + " more steps)";
        }
        std::vector<int> steps;
        for (size_t i = 0; i + 1 < path.size(); ++i)
            steps.push_back(shown(i) ? edge_between(path[i], path[i + 1], edges) : -1);
        Loc at = first.loc;
        if (steps[0] >= 0) {
            const PdgEdge &e = g_.edges[steps[0]];
            at = g_.nodes[e.consumer].equations[e.equation].loc;
        }
        if (!everywhere && !first.dim_names.empty()) {
            chain += " (at ";
            if (first.dim_names.size() == 1) {
                chain += first.dim_names[0] + " = " + std::to_string(start.coords[0]);
            } else {
                std::string lhs, rhs;
                for (size_t k = 0; k < first.dim_names.size(); ++k) {
                    lhs += (k ? ", " : "") + first.dim_names[k];
                    rhs += (k ? ", " : "") + std::to_string(start.coords[k]);
                }
                chain += "(" + lhs + ") = (" + rhs + ")";
            }
            chain += ")";
        }
        diag_.error(at, std::string(zero ? "zero-distance dependence cycle: " : "dependence cycle: ") + chain);
        for (size_t i = 0; i < steps.size(); ++i)
            if (steps[i] >= 0) diag_.note(g_.edges[steps[i]].loc, texts[i] + " reads " + texts[i + 1] + " here");
    }

    const PdgImpl &g_;
    Diagnostics &diag_;
    unsigned long operations_;
    std::map<std::string, int> by_tuple_;
};

}  // namespace

void check_no_zero_cycle(const Pdg &pdg, Diagnostics &diag, unsigned long operations) {
    CycleChecker(pdg.impl(), diag, operations).run();
}

}  // namespace trlc
