// autodiff_saved — step 6 of passes/autodiff: saved forward values.  The adjoints are written in
// terms of forward values, so a back tensor's expression contains its consumer's forward
// expression again; a forward node that the back tensors read directly and whose recomputation
// costs at least kSaveWork transcendental element operations becomes a hidden tensor computed
// once and read by both (save_forward_values).  note_back records the back tensors of each
// consumer equation while the driver makes them.
#include "ir/ops.h"
#include "passes/autodiff_impl.h"

namespace trlc::autodiff_detail {

void Differentiator::note_back(int C, int eq, const NodePtr &seed_y, int back) {
    BackSite &b = backs_[{C, eq, seed_y ? 1 : 0}];
    b.consumer = C;
    b.eq = eq;
    b.seed_y = seed_y;
    b.backs.push_back(back);
}

/** Transcendental element operations of "n" (exp, log, sqrt, tanh, sigmoid, sin, cos, pow,
 *  softmax, log_softmax, logsumexp), weighted by element count. */
int64_t Differentiator::transcendental_work(const Node &n) {
    int64_t w = 0;
    if (n.kind == NodeKind::Unary) {
        w = ir::unary_info(n.uop).transcendental ? 1 : 0;
    } else if (n.kind == NodeKind::Binary && n.bop == BinaryOp::Pow) {
        w = 1;
    } else if (n.kind == NodeKind::Builtin &&
               (n.builtin == BuiltinOp::Softmax || n.builtin == BuiltinOp::LogSoftmax ||
                n.builtin == BuiltinOp::Logsumexp) &&
               !n.args.empty()) {
        w = 2;
        const Type &t = n.args[0]->type;
        for (const Extent &e : t.shape) w *= e.max_value;
        return w;
    }
    if (w == 0 || n.type.is_tuple) return 0;
    for (const Extent &e : n.type.shape) w *= e.max_value;
    return w;
}

/** Step 6 (saved forward values).  The sweep writes a derivative in terms of forward values
 *  (tanh' = 1 - y², with y the forward tanh node; matmul's adjoints read its operands), so
 *  the back tensor's expression contains the forward expression again and code generation
 *  recomputes it — once per kernel that needs it.  Every forward node that the back
 *  expressions read directly (the topmost forward nodes under backward ones) and whose
 *  recomputation costs at least kSaveWork transcendental element operations (counted up to
 *  the values already saved) becomes a hidden tensor `<C>.<k>.saved.<n>` over C's domain,
 *  whose equations mirror C's (Ec's computes the node, the others zeros), and both C's
 *  equation and the back tensors read it at their own point (Ec's whole body: the back
 *  tensors read C itself).  Same operations in the same
 *  order: the values, hence every float of the program, are unchanged. */
void Differentiator::save_forward_values(const BackSite &site) {
    static constexpr int64_t kSaveWork = 1024;
    const int C = site.consumer, ei = site.eq;
    const NodePtr froot = site.seed_y ? site.seed_y : prog_.tensors[C].equations[ei].body;
    if (!froot) return;
    // Forward nodes in post-order (operands first).
    std::vector<NodePtr> post;
    std::set<const Node *> fwd;
    std::function<void(const NodePtr &)> walk = [&](const NodePtr &n) {
        if (!n || !fwd.insert(n.get()).second) return;
        for (const NodePtr &a : n->args) walk(a);
        for (const SpatialIndex &s : n->sindex) walk(s.value);
        post.push_back(n);
    };
    walk(froot);
    // The forward nodes the back expressions reach without passing another forward node.
    std::set<const Node *> frontier, seen;
    std::function<void(const NodePtr &)> reach = [&](const NodePtr &n) {
        if (!n || !seen.insert(n.get()).second) return;
        if (fwd.count(n.get())) {
            frontier.insert(n.get());
            return;
        }
        for (const NodePtr &a : n->args) reach(a);
        for (const SpatialIndex &s : n->sindex) reach(s.value);
    };
    for (int b : site.backs) reach(prog_.tensors[b].equations[ei].body);
    // Which can be a tensor: a static float array, no random numbers, externs or grads.
    std::unordered_map<const Node *, bool> pure;
    std::function<bool(const NodePtr &)> is_pure = [&](const NodePtr &n) -> bool {
        if (!n) return true;
        auto it = pure.find(n.get());
        if (it != pure.end()) return it->second;
        bool ok = n->kind != NodeKind::Rng && n->kind != NodeKind::Extern && n->kind != NodeKind::Grad;
        for (const NodePtr &a : n->args) ok = is_pure(a) && ok;
        for (const SpatialIndex &s : n->sindex) ok = is_pure(s.value) && ok;
        return pure[n.get()] = ok;
    };
    auto storable = [&](const NodePtr &n) {
        if (n->type.is_tuple || !is_float_dtype(n->type.dtype)) return false;
        if (n->kind == NodeKind::Read || n->kind == NodeKind::Const) return false;
        for (const Extent &e : n->type.shape)
            if (!e.is_static()) return false;
        return is_pure(n);
    };
    std::set<const Node *> saved;
    auto work = [&](const NodePtr &n) {
        int64_t w = 0;
        std::set<const Node *> vis;
        std::function<void(const NodePtr &)> go = [&](const NodePtr &m) {
            if (!m || !vis.insert(m.get()).second) return;
            if (m != n && saved.count(m.get())) return;
            w += transcendental_work(*m);
            for (const NodePtr &a : m->args) go(a);
            for (const SpatialIndex &s : m->sindex) go(s.value);
        };
        go(n);
        return w;
    };
    std::vector<NodePtr> chosen;
    for (const NodePtr &n : post)
        if (frontier.count(n.get()) && storable(n) && work(n) >= kSaveWork) {
            saved.insert(n.get());
            chosen.push_back(n);
        }
    if (chosen.empty()) return;
    // The tensors, operands first; then every body reads them.
    const Tensor ct = prog_.tensors[C];  // copied: new tensors move prog_.tensors
    const Equation &ce = ct.equations[ei];
    NodeRewriter rw;
    std::unordered_map<const Node *, NodePtr> &repl = rw.repl;
    int k = 0;
    NodePtr new_root;
    for (const NodePtr &n : chosen) {
        if (n == froot && !site.seed_y && !ct.type.is_tuple) {
            // The whole value: C itself holds it.
            new_root = rw(n);
            repl[n.get()] = read_point(C, pattern_point(ce), n->loc);
            continue;
        }
        int S =
            new_tensor(ct.name + "." + std::to_string(ei) + ".saved." + std::to_string(k++), ct.dims, n->type, n->loc);
        NodePtr body = rw(n);  // n is not in repl yet: its operands read earlier saves
        for (size_t q = 0; q < ct.equations.size(); ++q)
            prog_.tensors[S].equations.push_back(
                mirror(ct.equations[q], static_cast<int>(q) == ei ? body : zeros_of(n->type, ct.equations[q].loc)));
        repl[n.get()] = read_point(S, pattern_point(ce), n->loc);
    }
    if (!site.seed_y) prog_.tensors[C].equations[ei].body = new_root ? new_root : rw(froot);
    for (int b : site.backs) {
        NodePtr &body = prog_.tensors[b].equations[ei].body;
        body = rw(body);
    }
}

}  // namespace trlc::autodiff_detail
