// interpreter — `trlc --interpret`: loads, then every emit (all points of the first emit in
// lexicographic order, then the next emit, …), then every save, in program order.  Evaluation
// does not recurse along dependences (pending points wait on a heap work stack, demand.cpp),
// but it does recurse over the depth of one expression tree, so it runs on a thread with a
// 2 GiB stack (reserved address space; only touched pages are used).
#include "interp/interpreter.h"

#include <pthread.h>

#include <exception>
#include <functional>
#include <iostream>

#include "interp/eval.h"
#include "interp/outputs.h"
#include "interp/ranks.h"
#include "interp/run.h"
#include "passes/distribute.h"
#include "trl_npy.h"
#include "trl_random.h"

namespace trlc::interp {

namespace {
using interp::RuntimeError;
using interp::Value;

bool ends_with(const std::string &s, const std::string &suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string join_path(const std::string &dir, const std::string &path) {
    if (path.empty() || path[0] == '/' || dir.empty() || dir == ".") return path;
    return dir + (dir.back() == '/' ? "" : "/") + path;
}

/** Check a loaded array against the declared type (static shape). */
void check_loaded(const ir::Tensor &t, const ir::Type &ty, const Value &v, const std::string &what) {
    interp::Shape want;
    for (const auto &e : ty.shape) want.push_back(e.max_value);
    if (ty.is_tuple || v.dtype != ty.dtype || v.shape != want)
        throw RuntimeError{t.loc,
                           what + " holds " + interp::value_type_string(v) + ", but " + t.name + " is declared " +
                               (ty.is_tuple ? std::string("a tuple") : interp::shape_string(ty.dtype, want)),
                           {}};
}

}  // namespace

/** load_tensor from "path" (an input's --input file, or the load's own). */
void load_tensor_from(interp::Evaluator &ev, int ti, const ir::Tensor &t, const std::string &path);

void load_tensor(interp::Evaluator &ev, int ti, const ir::Tensor &t) { load_tensor_from(ev, ti, t, t.load_path); }

void load_all(Evaluator &ev, const ir::Program &prog, const std::map<std::string, std::string> &inputs) {
    for (size_t t = 0; t < prog.tensors.size(); ++t) {
        const ir::Tensor &x = prog.tensors[t];
        if (!x.is_load) continue;
        if (!x.is_input) {
            load_tensor(ev, static_cast<int>(t), x);
            continue;
        }
        auto it = inputs.find(x.name);
        if (it == inputs.end())
            throw RuntimeError{x.loc,
                               "input " + x.name + " has no value: run with --input " + x.name +
                                   "=FILE.npy (an .npy file holding " + ir::type_to_string(x.type) + ")",
                               {}};
        load_tensor_from(ev, static_cast<int>(t), x, it->second);
    }
}

std::string output_line(const ir::Save &s, const Value &v) {
    std::string line = "{\"" + s.output + "\":";
    try {
        interp::append_json(line, v);
    } catch (const OpError &err) {
        throw RuntimeError{s.loc, err.message, {}};
    }
    return line + "}\n";
}

void load_tensor_from(interp::Evaluator &ev, int ti, const ir::Tensor &t, const std::string &path) {
    if (!t.dims.empty()) throw RuntimeError{t.loc, "load of " + t.name + ": a loaded tensor has an empty domain", {}};
    std::string err;
    if (ends_with(path, ".npz")) {
        std::vector<trl::NpzMember> ms;
        if (!trl::npz_load(path, &ms, &err)) throw RuntimeError{t.loc, "cannot load " + err, {}};
        Value v;
        if (t.type.is_tuple) {
            if (ms.size() != t.type.elems.size())
                throw RuntimeError{t.loc,
                                   path + " holds " + std::to_string(ms.size()) + " arrays, but " + t.name +
                                       " is declared a tuple of " + std::to_string(t.type.elems.size()),
                                   {}};
            v.is_tuple = true;
            for (size_t i = 0; i < ms.size(); ++i) {
                Value e = interp::from_npy(ms[i].second);
                check_loaded(t, t.type.elems[i], e, path + "[" + ms[i].first + "]");
                v.elems.push_back(std::move(e));
            }
        } else {
            if (ms.size() != 1)
                throw RuntimeError{t.loc,
                                   path + " holds " + std::to_string(ms.size()) + " arrays, but " + t.name +
                                       " is one array",
                                   {}};
            v = interp::from_npy(ms[0].second);
            check_loaded(t, t.type, v, path + "[" + ms[0].first + "]");
        }
        ev.set_loaded(ti, std::move(v));
        return;
    }
    trl::NpyArray a;
    if (!trl::npy_load(path, &a, &err)) throw RuntimeError{t.loc, "cannot load " + err, {}};
    Value v = interp::from_npy(a);
    check_loaded(t, t.type, v, path);
    ev.set_loaded(ti, std::move(v));
}

std::string emit_line(Evaluator &ev, const ir::Emit &e, const std::vector<int64_t> &point, int rank) {
    if (e.guard && ev.eval_root(e.guard, point, e.stream).data.at(0) == 0) return "";
    std::string line = "{";
    if (rank >= 0) line += "\"rank\":" + std::to_string(rank) + (e.fields.empty() ? "" : ",");
    for (size_t f = 0; f < e.fields.size(); ++f) {
        if (f) line += ',';
        line += '"' + e.fields[f].first + "\":";
        Value v = ev.eval_root(e.fields[f].second, point, e.stream);
        try {
            interp::append_json(line, v);
        } catch (const OpError &err) {
            throw RuntimeError{e.fields[f].second->loc, err.message, {}};
        }
    }
    return line + "}\n";
}

namespace {

/** Every point of "e" in lexicographic order; with ranks, each point's records of rank 0, 1, … */
void run_emit(RankGroup &g, bool ranked, const ir::Program &prog, const ir::Emit &e, std::ostream &out) {
    std::vector<int64_t> bounds, point(e.vars.size(), 0);
    int64_t total = 1;
    for (int d : e.vars) {
        bounds.push_back(prog.dims[d].bound);
        total *= prog.dims[d].bound;
    }
    for (int64_t i = 0; i < total; ++i) {
        for (int r = 0; r < g.size(); ++r) out << interp::emit_line(g.rank(r), e, point, ranked ? r : -1);
        for (size_t d = point.size(); d-- > 0;) {
            if (++point[d] < bounds[d]) break;
            point[d] = 0;
        }
    }
    out.flush();
}

}  // namespace

void write_save(const ir::Save &s, const Value &v, const std::string &dir) {
    std::string path = join_path(dir, s.path), err;
    try {
        if (ends_with(s.path, ".npz")) {
            std::vector<trl::NpzMember> ms;
            if (v.is_tuple) {
                for (size_t i = 0; i < v.elems.size(); ++i) {
                    if (v.elems[i].is_tuple) throw OpError{"a nested tuple cannot be saved (flatten it first)"};
                    ms.push_back({"arr_" + std::to_string(i), interp::to_npy(v.elems[i])});
                }
            } else {
                ms.push_back({"arr_0", interp::to_npy(v)});
            }
            if (!trl::npz_save(path, ms, &err)) throw OpError{err};
        } else {
            if (!trl::npy_save(path, interp::to_npy(v), &err)) throw OpError{err};
        }
    } catch (const OpError &e) {
        throw RuntimeError{s.loc, e.message, {}};
    }
}

namespace {

struct Job {
    const ir::Program *prog;
    const InterpOptions *opts;
    std::ostream *out;
    bool failed = false;
    std::string digest_line;  // --ranks: the ranks' parameter digest, for stderr
    RuntimeError error;
    std::exception_ptr other;
};

/** --ranks: "parameters identical across N ranks (digest 0x…)" over the saves whose values
 *  are the same on every rank (passes/distribute.h), as a --distributed build prints at exit;
 *  "" when there are none.  A difference is an internal error (the ranks share their means). */
std::string digest_line(RankGroup &g, const ir::Program &prog) {
    std::vector<uint64_t> h(g.size(), trl::kFnv64Offset);
    bool any = false;
    for (const ir::Save &s : prog.saves) {
        if (!s.output.empty() || !save_is_replicated(prog, s)) continue;
        any = true;
        for (int r = 0; r < g.size(); ++r) h[r] = digest_value(h[r], g.rank(r).eval_root(s.value, {}, s.path));
    }
    if (!any) return "";
    for (int r = 1; r < g.size(); ++r)
        TRLC_ASSERT(h[r] == h[0]) << "rank " << r << "'s saved parameters differ from rank 0's";
    return identical_parameters_line(g.size(), h[0]);
}

void run_all(Job &job) {
    try {
        const ir::Program &prog = *job.prog;
        const int ranks = job.opts->ranks;
        RankGroup g(prog, job.opts->seed, std::max(1, ranks));
        for (int r = 0; r < g.size(); ++r) load_all(g.rank(r), prog, job.opts->inputs);
        Evaluator &ev = g.rank(0);
        for (const ir::Emit &e : prog.emits) run_emit(g, ranks > 0, prog, e, *job.out);
        if (ranks > 0) job.digest_line = digest_line(g, prog);
        for (const ir::Save &s : prog.saves) {
            if (!s.output.empty()) {  // `output act = …`: a JSON line after the emits
                *job.out << output_line(s, ev.eval_root(s.value, {}, s.output)) << std::flush;
                continue;
            }
            write_save(s, ev.eval_root(s.value, {}, s.path), job.opts->output_dir);
        }
    } catch (const RuntimeError &e) {
        job.failed = true;
        job.error = e;
    } catch (...) {
        job.other = std::current_exception();
    }
}

void *thread_main(void *arg) {
    auto *fn = static_cast<std::pair<const std::function<void()> *, std::exception_ptr> *>(arg);
    try {
        (*fn->first)();
    } catch (...) {
        fn->second = std::current_exception();
    }
    return nullptr;
}

}  // namespace

void run_on_big_stack(const std::function<void()> &fn) {
    std::pair<const std::function<void()> *, std::exception_ptr> arg{&fn, nullptr};
    bool ran = false;
    for (size_t mib : {2048, 512, 64}) {
        pthread_attr_t attr;
        if (pthread_attr_init(&attr) != 0) break;
        pthread_t th;
        bool ok =
            pthread_attr_setstacksize(&attr, mib << 20) == 0 && pthread_create(&th, &attr, thread_main, &arg) == 0;
        pthread_attr_destroy(&attr);
        if (ok) {
            pthread_join(th, nullptr);
            ran = true;
            break;
        }
    }
    if (!ran) thread_main(&arg);
    if (arg.second) std::rethrow_exception(arg.second);
}

}  // namespace trlc::interp

namespace trlc {

int interpret(const ir::Program &prog, const InterpOptions &opts, Diagnostics &diag) {
    interp::Job job;
    job.prog = &prog;
    job.opts = &opts;
    job.out = opts.log ? opts.log : &std::cout;
    interp::run_on_big_stack([&] { interp::run_all(job); });
    if (job.other) std::rethrow_exception(job.other);
    if (!job.digest_line.empty()) std::cerr << job.digest_line << "\n";
    if (!job.failed) return 0;
    diag.error(job.error.loc, job.error.message);
    for (const auto &n : job.error.notes) diag.note(n.first, n.second);
    return 1;
}

}  // namespace trlc
