// horizontal_fusion — see horizontal_fusion.h for what the pass does and when it applies.
#include "codegen/horizontal_fusion.h"

#include <functional>
#include <map>
#include <memory>
#include <set>

#include "codegen/expr_emitter.h"

namespace trlc {

namespace {

using namespace codegen;
using ir::Node;
using ir::NodePtr;

bool float_dtype(DType d) { return d == DType::F32 || d == DType::F64; }

bool static_shape(const ir::Type &t) {
    for (const auto &e : t.shape)
        if (!e.is_static()) return false;
    return true;
}

bool same_shape(const ir::Type &a, const ir::Type &b) {
    if (a.shape.size() != b.shape.size()) return false;
    for (size_t k = 0; k < a.shape.size(); ++k)
        if (!a.shape[k].is_static() || !b.shape[k].is_static() || a.shape[k].max_value != b.shape[k].max_value)
            return false;
    return true;
}

/** "n" is a chain of tuple elements over a read of one point of a tuple-valued tensor with an
 *  arena buffer: sets that read and the byte offset of the part "n" selects (as
 *  ExprEmitter::point_read_part computes it, from the tensor's type). */
bool leaf_read(const ir::Program &prog, const MemPlan &plan, const NodePtr &n, NodePtr &read, int64_t &off) {
    std::vector<int64_t> path;
    NodePtr b = n;
    while (b->kind == NodeKind::TupleGet) {
        path.push_back(b->int_attr);
        b = b->args.at(0);
    }
    if (b->kind != NodeKind::Read || path.empty()) return false;
    const ir::Tensor &x = prog.tensors.at(b->tensor);
    if (x.is_load || plan.buffer_of(b->tensor) < 0) return false;
    for (const auto &ri : b->index)
        if (ri.is_slice) return false;
    const ir::Type *t = &x.type;
    off = 0;
    for (size_t k = path.size(); k-- > 0;) {
        if (!t->is_tuple || path[k] < 0 || path[k] >= static_cast<int64_t>(t->elems.size())) return false;
        for (int64_t q = 0; q < path[k]; ++q) off += value_bytes(t->elems[q]);
        t = &t->elems[path[k]];
    }
    if (t->is_tuple || !float_dtype(t->dtype) || off % leaf_size(t->dtype) != 0) return false;
    read = b;
    return true;
}

/** Two reads of the same point of the same tensor. */
bool same_read(const Node &a, const Node &b) {
    if (&a == &b) return true;
    if (a.tensor != b.tensor || a.index.size() != b.index.size()) return false;
    for (size_t k = 0; k < a.index.size(); ++k)
        if (ir::index_expr_to_string(*a.index[k].point) != ir::index_expr_to_string(*b.index[k].point)) return false;
    return true;
}

/** Scalars every leaf of a group shares: the same node, an equal literal, or the same elementwise
 *  operation of such scalars. */
bool same_scalar(const Node &a, const Node &b) {
    if (&a == &b) return true;
    if (a.kind != b.kind || a.type.is_tuple || b.type.is_tuple || !a.type.shape.empty() || !b.type.shape.empty() ||
        a.type.dtype != b.type.dtype || a.args.size() != b.args.size())
        return false;
    switch (a.kind) {
    case NodeKind::Const: return a.data == b.data && a.bound == b.bound;
    case NodeKind::Unary:
        if (a.uop != b.uop) return false;
        break;
    case NodeKind::Binary:
        if (a.bop != b.bop) return false;
        break;
    case NodeKind::Where:
    case NodeKind::Cast: break;
    default: return false;
    }
    for (size_t k = 0; k < a.args.size(); ++k)
        if (!a.args[k] || !b.args[k] || !same_scalar(*a.args[k], *b.args[k])) return false;
    return true;
}

/** The leaves of a statement's value "n" (declared type "t") at byte "off" on: a Tuple's
 *  arguments, another tuple-typed value's elements through TupleGet nodes made here. */
void flatten(const NodePtr &n, const ir::Type &t, int64_t &off, std::vector<LeafStore> &out) {
    if (!t.is_tuple) {
        out.push_back({n, t, off});
        off += value_bytes(t);
        return;
    }
    for (size_t k = 0; k < t.elems.size(); ++k) {
        NodePtr e;
        if (n->kind == NodeKind::Tuple && k < n->args.size()) {
            e = n->args[k];
        } else {
            auto g = std::make_shared<Node>();
            g->kind = NodeKind::TupleGet;
            g->type = n->type.is_tuple && k < n->type.elems.size() ? n->type.elems[k] : t.elems[k];
            g->loc = n->loc;
            g->args = {n};
            g->int_attr = static_cast<int64_t>(k);
            e = g;
        }
        flatten(e, t.elems[k], off, out);
    }
}

/** A group of consecutive leaves being matched against its first ("rep"). */
class Group {
public:
    Group(const ir::Program &prog, const MemPlan &plan, const LeafStore &rep) : prog_(prog), plan_(plan), rep_(rep) {}

    /** Adds "leaf" when it matches the group (see the file comment); false leaves the group as it
     *  was. */
    bool add(const LeafStore &leaf) {
        if (leaf.type.is_tuple || leaf.type.shape.empty() || !static_shape(leaf.type) ||
            leaf.type.dtype != rep_.type.dtype || !float_dtype(leaf.type.dtype) || leaf.expr->type.is_tuple ||
            !same_shape(leaf.expr->type, leaf.type))
            return false;
        auto saved = cp_;
        leaf_ = &leaf;
        shift_ = numel_;  // elements of the group before this leaf
        if (!match(rep_.expr, leaf.expr)) {
            cp_ = saved;
            return false;
        }
        ++members_;
        numel_ += static_numel(leaf.type);
        return true;
    }

    int members() const { return members_; }
    int64_t numel() const { return numel_; }

    /** The group's expression over the concatenation ([numel] elements); "memo" shares the nodes
     *  of equal concatenations between groups (Adam's m' is stored and read by p'). */
    NodePtr build(std::map<std::vector<const Node *>, NodePtr> &memo, std::vector<FlatRead> &reads) {
        return build(rep_.expr, memo, reads);
    }

private:
    bool varying(const Node &r) const { return same_shape(r.type, rep_.type) && !r.type.shape.empty(); }

    /** Candidate node "a" of the leaf being added plays the part of "r" in the first leaf. */
    bool match(const NodePtr &r, const NodePtr &a) {
        auto &seen = cp_[r.get()];
        if (static_cast<int>(seen.size()) > members_) return seen[members_] == a.get();  // a shared node
        if (!match_new(r, a)) return false;
        seen.push_back(a.get());
        return true;
    }

    bool match_new(const NodePtr &r, const NodePtr &a) {
        if (r->type.is_tuple || a->type.is_tuple) return false;
        if (r->type.shape.empty()) return same_scalar(*r, *a);
        if (!varying(*r) || !same_shape(a->type, leaf_->type) || r->type.dtype != a->type.dtype) return false;
        NodePtr rr, ar;
        int64_t roff = 0, aoff = 0;
        if (leaf_read(prog_, plan_, r, rr, roff)) {
            return leaf_read(prog_, plan_, a, ar, aoff) && same_read(*rr, *ar) &&
                   aoff - roff == shift_ * leaf_size(r->type.dtype);
        }
        if (r->kind != a->kind || r->args.size() != a->args.size()) return false;
        bool fp = float_dtype(r->type.dtype);
        switch (r->kind) {
        case NodeKind::Unary:
            if (!fp || r->uop != a->uop) return false;
            break;
        case NodeKind::Binary:
            if ((!fp && r->type.dtype != DType::Bool) || r->bop != a->bop) return false;
            break;
        case NodeKind::Where:
            if (!fp) return false;
            break;
        case NodeKind::Cast:
            if (!fp || !float_dtype(r->args.at(0)->type.dtype)) return false;
            break;
        case NodeKind::Builtin:
            return fp && r->builtin == a->builtin &&
                   (r->builtin == BuiltinOp::Zeros || r->builtin == BuiltinOp::Ones) && r->args.empty() &&
                   a->args.empty();
        default: return false;
        }
        for (size_t k = 0; k < r->args.size(); ++k) {
            const NodePtr &x = r->args[k];
            if (!x || !a->args[k] || x->type.is_tuple) return false;
            if (!x->type.shape.empty() && !varying(*x)) return false;  // broadcast of a non-scalar
            if (x->type.dtype != DType::Bool && !float_dtype(x->type.dtype)) return false;
            if (!match(x, a->args[k])) return false;
        }
        return true;
    }

    NodePtr build(const NodePtr &r, std::map<std::vector<const Node *>, NodePtr> &memo, std::vector<FlatRead> &reads) {
        if (r->type.shape.empty()) return r;  // a shared scalar
        const std::vector<const Node *> &key = cp_.at(r.get());
        auto it = memo.find(key);
        if (it != memo.end()) return it->second;
        ir::Type flat;
        flat.dtype = r->type.dtype;
        flat.shape = {ir::Extent{numel_, nullptr}};
        NodePtr rr;
        int64_t roff = 0;
        std::shared_ptr<Node> n;
        if (leaf_read(prog_, plan_, r, rr, roff)) {
            n = std::make_shared<Node>();
            n->kind = NodeKind::Read;  // bound to a view by emit_horizontal; never emitted itself
            n->tensor = rr->tensor;
            n->loc = r->loc;
            n->type = flat;
            reads.push_back({n, rr, roff});
        } else {
            n = std::make_shared<Node>(*r);
            n->type = flat;
            for (auto &x : n->args) x = build(x, memo, reads);
        }
        memo[key] = n;
        return n;
    }

    const ir::Program &prog_;
    const MemPlan &plan_;
    const LeafStore &rep_;
    const LeafStore *leaf_ = nullptr;
    int64_t shift_ = 0, numel_ = 0;
    int members_ = 0;
    std::map<const Node *, std::vector<const Node *>> cp_;  // first leaf's node -> each member's
};

/** A float scalar sum(f) over all of f's axes, f of rank >= 1 with the sum's dtype. */
bool whole_sum(const Node &n) {
    return n.kind == NodeKind::Builtin && n.builtin == BuiltinOp::Sum && (!n.has_axes || n.axes.empty()) &&
           !n.type.is_tuple && n.type.shape.empty() && float_dtype(n.type.dtype) && n.args.size() == 1 && n.args[0] &&
           !n.args[0]->type.is_tuple && !n.args[0]->type.shape.empty() && n.args[0]->type.dtype == n.type.dtype;
}

/** The SumChains among the scalars below "root", outermost first; "memo" as Group::build. */
void find_chains(const ir::Program &prog, const MemPlan &plan, const NodePtr &root,
                 std::map<std::vector<const Node *>, NodePtr> &memo, HorizontalPlan &hp) {
    std::set<const Node *> seen;
    std::function<void(const NodePtr &)> walk = [&](const NodePtr &n) {
        if (!n || !seen.insert(n.get()).second) return;
        bool add = n->kind == NodeKind::Binary && n->bop == BinaryOp::Add && !n->type.is_tuple &&
                   n->type.shape.empty() && float_dtype(n->type.dtype);
        if (add) {
            std::vector<NodePtr> terms, spine;
            NodePtr c = n;
            while (c->kind == NodeKind::Binary && c->bop == BinaryOp::Add && c->type.dtype == n->type.dtype &&
                   c->type.shape.empty() && whole_sum(*c->args.at(1)) && c->args[1]->type.dtype == n->type.dtype) {
                spine.push_back(c);
                terms.push_back(c->args[1]);
                c = c->args.at(0);
            }
            if (whole_sum(*c) && c->type.dtype == n->type.dtype && !terms.empty()) {
                terms.push_back(c);
                std::vector<LeafStore> leaves;
                for (size_t k = terms.size(); k-- > 0;)
                    leaves.push_back({terms[k]->args[0], terms[k]->args[0]->type, 0});
                Group g(prog, plan, leaves[0]);
                size_t m = 0;
                while (m < leaves.size() && g.add(leaves[m])) ++m;
                if (m == leaves.size()) {
                    SumChain sc;
                    sc.root = n;
                    sc.flat = g.build(memo, hp.flat_reads);
                    sc.bounds.push_back(0);
                    for (const auto &l : leaves) sc.bounds.push_back(sc.bounds.back() + static_numel(l.type));
                    hp.chains.push_back(sc);
                    for (const auto &s : spine) seen.insert(s.get());
                    for (const auto &l : leaves) walk(l.expr);
                    return;
                }
            }
        }
        for (const auto &a : n->args) walk(a);
    };
    walk(root);
}

}  // namespace

std::optional<HorizontalPlan> plan_horizontal_fusion(const ir::Program &prog, const MemPlan &plan,
                                                     const ir::NodePtr &root, const ir::Type &type) {
    if (!type.is_tuple) return std::nullopt;
    std::vector<LeafStore> leaves;
    int64_t off = 0;
    flatten(root, type, off, leaves);
    HorizontalPlan hp;
    std::map<std::vector<const Node *>, NodePtr> memo;
    for (size_t i = 0; i < leaves.size();) {
        Group g(prog, plan, leaves[i]);
        size_t j = i;
        while (j < leaves.size() && g.add(leaves[j])) ++j;
        if (g.members() < 2) {
            hp.stores.push_back(leaves[i++]);
            continue;
        }
        LeafStore s;
        s.expr = g.build(memo, hp.flat_reads);
        s.type.dtype = leaves[i].type.dtype;
        s.type.shape = {ir::Extent{g.numel(), nullptr}};
        s.off = leaves[i].off;
        hp.stores.push_back(s);
        ++hp.groups;
        hp.fused_leaves += g.members();
        i = j;
    }
    auto all = std::make_shared<Node>();
    all->kind = NodeKind::Tuple;
    all->type.is_tuple = true;
    all->loc = root->loc;
    for (const auto &s : hp.stores) {
        all->args.push_back(s.expr);
        all->type.elems.push_back(s.expr->type);
    }
    find_chains(prog, plan, all, memo, hp);
    hp.groups += static_cast<int>(hp.chains.size());
    if (hp.groups == 0) return std::nullopt;
    for (const auto &c : hp.chains) {  // counted as the chain's loop uses them (once)
        all->args.push_back(c.flat);
        all->type.elems.push_back(c.flat->type);
    }
    hp.all = all;
    return hp;
}

void emit_horizontal(ExprEmitter &ee, const MemPlan &plan, const HorizontalPlan &hp, int dst_buffer,
                     const std::string &dst_address, const Loc &loc, std::optional<codegen::RowSplit> *rows) {
    for (const auto &f : hp.flat_reads)
        ee.bind(*f.node, ee.flat_view(*f.read, f.off, f.node->type.dtype, f.node->type.shape.at(0).max_value));
    ee.count_uses(*hp.all);
    if (rows) {  // the stores by rows; the chains' sums read every element
        std::vector<const ir::Node *> split_roots, whole_roots;
        for (const auto &s : hp.stores) split_roots.push_back(s.expr.get());
        for (const auto &c : hp.chains) whole_roots.push_back(c.flat.get());
        *rows = codegen::plan_row_split(split_roots, whole_roots, ee.memoized());
        if (!*rows) throw codegen::RowSplitUnsupported{"nothing to split"};
        ee.set_row_split(&**rows);
    }
    for (const auto &c : hp.chains) {
        Val x = ee.emit_ew(*c.flat);
        DType dt = c.root->type.dtype;
        Val r = ee.declare(dt, {}, {});
        std::string seg = ee.fresh("seg"), s = ee.fresh("s"), k = ee.fresh("k"), list;
        for (int64_t b : c.bounds) list += (list.empty() ? "" : ", ") + lit_int(b);
        ee.open("");
        ee.line("const long long " + seg + "[] = {" + list + "};");
        ee.open("for (long long " + s + " = 0; " + s + " < " + std::to_string(c.bounds.size() - 1) + "; ++" + s + ")");
        ee.line(std::string(ctype(dt)) + " acc = " + literal(dt, 0) + ";");
        ee.open("for (long long " + k + " = " + seg + "[" + s + "]; " + k + " < " + seg + "[" + s + " + 1]; ++" + k +
                ")");
        std::string e = x.lazy ? x.lazy(Ix{k, {}}) : x.at(k);
        ee.line("acc = acc + " + ExprEmitter::operand_c(conv(e, x.dt, dt)) + ";");
        ee.close();
        ee.line(r.name + " = " + s + " == 0 ? acc : " + r.name + " + acc;");
        ee.close();
        ee.close();
        ee.bind(*c.root, r);
    }
    std::vector<Val> vals;
    for (const auto &s : hp.stores) vals.push_back(ee.emit_ew(*s.expr));
    bool clash = false;
    for (int t : ee.reads) clash = clash || ee.overlap(plan.buffer_of(t), dst_buffer);
    for (auto &v : vals) {
        bool fixed = true;
        for (const auto &d : v.dims) fixed = fixed && ExprEmitter::static_dim(d);
        if (v.lazy && (clash || !fixed)) v = ee.materialize(v);
        v = ee.unalias(v, dst_buffer);  // a value read in place from bytes the statement overwrites
    }
    ee.row_barrier_before_store(dst_buffer);
    ee.line("char *dst = " + dst_address + ";");
    for (size_t k = 0; k < vals.size(); ++k) ee.store_value(hp.stores[k].type, vals[k], "dst", hp.stores[k].off, loc);
}

}  // namespace trlc
