// tensor_types — the types of tensors (sema's fourth step on equations).
//
// 4. type_tensors: a tensor is typed when first read (or in order), its
//    equations most specific first, so that `h[0] = 0.0; h[t+1] = tanh(h[t])`
//    types h[t+1] with the type of h[0].  Weak bodies adapt (a Cast or a
//    re-typed literal); two different strong dtypes are an error.
// Then check_read_consistency: every read agrees with the type finally inferred.
#include <algorithm>
#include <functional>

#include "sema/sema_impl.h"

namespace trlc::sema {

std::optional<ir::Type> Sema::tensor_type_for_read(int t, Loc use) {
    TensorInfo &info = tinfo_[t];
    if (info.declared) return info.declared;
    if (info.state == TensorInfo::Untyped) {
        try {
            ensure_typed(t);
        } catch (Deferred &d) {
            // t's remaining equations wait for a tensor that is being typed, typically the
            // hidden tensor of a tuple equation `(p, s)[i+1] = f(p[i], s[i])` whose body reads
            // t: the equations of t typed so far (`s[0] = …`) give the type to use here;
            // check_read_consistency() compares it with t's final type.
            if (info.state == TensorInfo::Untyped && info.partial) return info.partial;
            d.read = use;  // for the catcher: the read in its own equation that led here
            throw;
        }
    }
    if (info.state == TensorInfo::Done) return prog_.tensors[t].type;
    if (info.state == TensorInfo::Failed) return std::nullopt;
    if (info.assumed) {
        info.partial_uses.push_back(*info.assumed);
        return info.assumed;
    }
    if (info.partial) {
        info.partial_uses.push_back(*info.partial);
        return info.partial;
    }
    throw Deferred{t, {}, use};
}

std::optional<ir::Type> Sema::finalize(int t) {
    TensorInfo &info = tinfo_[t];
    const std::string &name = prog_.tensors[t].name;
    std::vector<EqSrc *> typed;
    for (EqSrc &s : info.eqs)
        if (s.typed) typed.push_back(&s);
    if (typed.empty()) return std::nullopt;
    std::vector<std::string> names = tensor_dim_names(prog_.tensors[t]);
    auto str = [&](const ir::Type &ty) { return ir::type_to_string(ty, names); };
    auto shape_eq = [](const ir::Type &a, const ir::Type &b) {
        return type_equal(with_dtype(a, ir::DType::F32), with_dtype(b, ir::DType::F32));
    };
    bool ok = true;
    ir::Type final_type;
    if (info.declared) {
        final_type = *info.declared;
        for (EqSrc *s : typed) {
            const ir::Type &ty = s->tensor_type();
            if (!shape_eq(ty, final_type)) {
                error(s->eq.loc, "shape mismatch: " + name + " is declared " + str(final_type) +
                                     " but this equation gives " + str(ty));
                note(info.declared_loc, name + " is declared here");
                ok = false;
            } else if (!type_equal(ty, final_type) &&
                       !(s->weak && dtype_kind(ty.dtype) <= dtype_kind(final_type.dtype))) {
                error(s->eq.loc, std::string("dtype mismatch: ") + name + " is declared " +
                                     ir::dtype_name(final_type.dtype) + " but this equation gives " +
                                     ir::dtype_name(ty.dtype));
                note(info.declared_loc, name + " is declared here");
                ok = false;
            }
        }
    } else {
        const EqSrc *ref = nullptr;
        for (EqSrc *s : typed)
            if (!s->weak) {
                ref = s;
                break;
            }
        bool strong = ref != nullptr;
        if (!ref) ref = typed[0];
        final_type = ref->tensor_type();
        if (!strong)
            for (EqSrc *s : typed)
                if (!s->tensor_type().is_tuple && !final_type.is_tuple)
                    final_type.dtype = promote(final_type.dtype, s->tensor_type().dtype);
        // Report in source order against the reference equation.
        for (EqSrc &s : info.eqs) {
            if (!s.typed || &s == ref) continue;
            const ir::Type &ty = s.tensor_type();
            if (!shape_eq(ty, final_type)) {
                error(s.eq.loc, "shape mismatch: " + name + " is " + str(ty) + " here but " + str(ref->tensor_type()) +
                                    " in another equation");
                note(ref->eq.loc, name + " is " + str(ref->tensor_type()) + " here");
                // `net[i+1] = optim.adam(…)`: the value is (new params, state).
                if (ty.is_tuple && ty.elems.size() >= 2 && shape_eq(ty.elems[0], final_type))
                    note(s.eq.loc, "element 0 of the value here has " + name +
                                       "'s type; a fn "
                                       "that returns (params, state), such as optim.adam, needs a tuple "
                                       "equation: `(" +
                                       name +
                                       ", opt)[i+1] = …` with `opt[0] = "
                                       "optim.adam_init(" +
                                       name + "[0])`");
                ok = false;
            } else if (!type_equal(ty, final_type) &&
                       !(s.weak && dtype_kind(ty.dtype) <= dtype_kind(final_type.dtype))) {
                error(s.eq.loc, std::string("dtype mismatch: ") + name + " is " + ir::dtype_name(ty.dtype) +
                                    " here but " + ir::dtype_name(final_type.dtype) + " in another equation");
                note(ref->eq.loc, name + " is " + ir::dtype_name(final_type.dtype) + " here");
                ok = false;
            }
        }
    }
    if (!ok) return std::nullopt;
    for (EqSrc *s : typed)
        if (!final_type.is_tuple) s->eq.body = convert(Val{s->eq.body, s->weak, nullptr}, final_type.dtype).node;
    return final_type;
}

void Sema::ensure_typed(int t) {
    TensorInfo &info = tinfo_[t];
    if (info.state != TensorInfo::Untyped) return;
    ir::Tensor &tensor = prog_.tensors[t];
    if (tensor.is_load) {
        info.state = info.declared ? TensorInfo::Done : TensorInfo::Failed;
        if (info.declared) tensor.type = *info.declared;
        return;
    }
    if (!info.dims_ok) {
        info.state = TensorInfo::Failed;
        return;
    }
    info.state = TensorInfo::Busy;
    std::vector<int> order;
    for (size_t k = 0; k < info.eqs.size(); ++k)
        if (info.eqs[k].ok) order.push_back(static_cast<int>(k));
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return info.eqs[a].eq.specificity() > info.eqs[b].eq.specificity(); });
    std::optional<ir::Type> final_type;
    for (int round = 0; round < 3; ++round) {
        info.partial.reset();
        info.partial_strong = false;
        info.partial_uses.clear();
        for (EqSrc &s : info.eqs) s.typed = false;
        std::vector<int> pending = order;
        int blocked_outer = -1;
        std::vector<int> blocked_via, self_via;  // see Deferred::via
        std::map<int, Loc> self_reads;           // equation -> its direct read of t (no type yet)
        while (!pending.empty()) {
            std::vector<int> next;
            bool progress = false;
            for (int k : pending) {
                try {
                    progress = true;
                    if (!lower_equation(t, k)) continue;
                    const EqSrc &s = info.eqs[k];
                    const ir::Type &ty = s.eq.body->type;
                    if (!info.partial || (!info.partial_strong && !s.weak)) {
                        info.partial = ty;
                        info.partial_strong = !s.weak;
                    } else if (!info.partial_strong && !ty.is_tuple && !info.partial->is_tuple) {
                        info.partial->dtype = promote(info.partial->dtype, ty.dtype);
                    }
                } catch (const Deferred &d) {
                    next.push_back(k);
                    if (d.tensor != t) {
                        blocked_outer = d.tensor;
                        blocked_via = d.via;
                    } else {
                        if (self_via.empty()) self_via = d.via;
                        // Direct, or through an element of this tuple equation's hidden
                        // tensor (`(a, b)[t+1] = (a[t] * 2, …)` reads t through a).
                        bool elem = d.via.size() == 1 && !tinfo_[d.via[0]].eqs.empty();
                        for (const EqSrc &e : elem ? tinfo_[d.via[0]].eqs : info.eqs) elem = elem && e.hidden == t;
                        if ((d.via.empty() || elem) && d.read.valid()) self_reads.emplace(k, d.read);
                    }
                }
            }
            if (next.size() == pending.size()) progress = false;
            pending = next;
            if (!progress) break;
        }
        if (!pending.empty()) {
            if (blocked_outer >= 0 && tinfo_[blocked_outer].state == TensorInfo::Busy) {
                info.state = TensorInfo::Untyped;
                for (EqSrc &s : info.eqs) s.typed = false;
                blocked_via.insert(blocked_via.begin(), t);
                throw Deferred{blocked_outer, blocked_via};
            }
            std::string example = tensor.name;
            if (!tensor.dims.empty()) {
                example += "[";
                for (size_t j = 0; j < tensor.dims.size(); ++j)
                    example += (j ? ", " : "") + prog_.dims[tensor.dims[j]].name;
                example += "]";
            }
            // Through other tensors (v reads q, whose equations read v) a cycle of reads is
            // the likelier mistake: name the chain.
            std::string chain;
            for (int w : self_via) chain += prog_.tensors[w].name + ", which reads ";
            if (!chain.empty()) chain = " (" + tensor.name + " reads " + chain + tensor.name + ")";
            error(info.eqs[pending[0]].eq.loc, "cannot infer the type of " + tensor.name +
                                                   ": its equations need the type of " + tensor.name + " itself" +
                                                   chain + "; add a type annotation, e.g. `" + example + " : f32`");
            note_missing_base_case(t, pending, self_reads);
            info.state = TensorInfo::Failed;
            return;
        }
        int errors = diag_.error_count();
        final_type = finalize(t);
        if (!final_type || diag_.error_count() > errors) break;
        bool consistent = true;
        for (const ir::Type &u : info.partial_uses) consistent = consistent && type_equal(u, *final_type);
        if (consistent) break;
        info.assumed = final_type;
        if (round == 2) {
            error(tensor.loc, "cannot infer a consistent type for " + tensor.name + "; add a type annotation");
            final_type.reset();
        }
    }
    if (!final_type) {
        info.state = TensorInfo::Failed;
        return;
    }
    tensor.type = *final_type;
    tensor.equations.clear();
    for (const EqSrc &s : info.eqs)
        if (s.typed) tensor.equations.push_back(s.eq);
    info.state = TensorInfo::Done;
}

void Sema::type_tensors() {
    for (size_t t = 0; t < prog_.tensors.size(); ++t) {
        try {
            ensure_typed(static_cast<int>(t));
        } catch (const Deferred &d) {
            internal_error("type inference of " + prog_.tensors[t].name + " deferred at the top level (on " +
                               prog_.tensors[d.tensor].name + ")",
                           __FILE__, __LINE__);
        }
    }
}

void Sema::check_read_consistency() {
    std::set<const ir::Node *> seen;
    std::function<void(const ir::NodePtr &)> walk = [&](const ir::NodePtr &n) {
        if (!n || !seen.insert(n.get()).second) return;
        for (const ir::NodePtr &a : n->args) walk(a);
        if (n->kind != ir::NodeKind::Read) return;
        const ir::Tensor &t = prog_.tensors[n->tensor];
        if (tinfo_[n->tensor].state != TensorInfo::Done) return;
        ir::Type tail = n->type;
        size_t slices = 0;
        for (const ir::ReadIndex &ri : n->index) slices += ri.is_slice ? 1 : 0;
        if (!tail.is_tuple && tail.shape.size() >= slices)
            tail.shape.erase(tail.shape.begin(), tail.shape.begin() + slices);
        // A point-dependent extent (in t's coordinates) is the read's with its index
        // substituted (read_type): compare the others.
        ir::Type want = t.type;
        if (!want.is_tuple && tail.shape.size() == want.shape.size())
            for (size_t k = 0; k < want.shape.size(); ++k)
                if (!want.shape[k].is_static()) want.shape[k] = tail.shape[k];
        if (!type_equal(tail, want)) {
            error(n->loc, "cannot infer a consistent type for " + t.name + ": it is read as " +
                              ir::type_to_string(tail) + " here while its type was inferred, but " + "it is " +
                              ir::type_to_string(t.type) + "; add a type annotation");
        }
    };
    for (const ir::Tensor &t : prog_.tensors)
        for (const ir::Equation &e : t.equations) walk(e.body);
}

}  // namespace trlc::sema
