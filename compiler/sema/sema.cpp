// sema — the pipeline of semantic analysis (see sema/sema_impl.h for the
// files that implement each step).
#include "sema/sema.h"

#include "sema/sema_impl.h"

namespace trlc {

namespace sema {

std::optional<ir::Program> Sema::run(const ast::Module &main) {
    load_modules(main);
    // A missing module would make every use of its names an error: stop here.
    if (diag_.has_errors()) return std::nullopt;
    collect_names();
    eval_dims();
    check_dim_sizes();
    for (size_t c = 0; c < consts_.size(); ++c)
        const_value(static_cast<int>(c),
                    consts_[c].decl->name_loc.valid() ? consts_[c].decl->name_loc : consts_[c].decl->loc);
    collect_tensors();
    infer_domains();
    lower_externs();
    build_equations();
    type_tensors();
    check_read_consistency();
    lower_outputs();
    for (const ast::Region &r : main.regions) prog_.regions.push_back({r.name, main.file, r.first_line, r.last_line});
    if (diag_.has_errors()) return std::nullopt;
    return std::move(prog_);
}

void Sema::check_dim_sizes() {
    // A dim's coordinate is an i32 value (`f32(t)`, `rng(b, t)`, indices), so its range must fit.
    constexpr int64_t kMax = 2147483647;
    for (const ir::Dim &d : prog_.dims)
        if (d.bound > kMax)
            error(d.loc, "dim " + d.name + " has " + std::to_string(d.bound) +
                             " points, more than an i32 coordinate holds: a bound may be at most " +
                             std::to_string(kMax));
}

}  // namespace sema

std::optional<ir::Program> analyze(const ast::Module &main, SourceManager &sm, Diagnostics &diag,
                                   const SemaOptions &opts) {
    sema::Sema s(sm, diag, opts);
    return s.run(main);
}

}  // namespace trlc
