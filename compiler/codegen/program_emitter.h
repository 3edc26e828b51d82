#pragma once
// program_emitter — the class behind emit_cuda (codegen/emit_program.h): one generated source
// per call.  Its kernels are written by emit_program.cpp (one kernel per statement or fused
// chain, the operand kernels of BLAS products, row splits), the host side by emit_host.cpp
// (the file header, run_program with the schedule's loop nest, the emits' and saves' host
// functions, run-time bounds, main).  Expressions inside them are codegen/expr_emitter.h's.
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "codegen/compile_parts.h"
#include "codegen/emit_program.h"
#include "codegen/expr_emitter.h"
#include "codegen/kernel_plan.h"
#include "codegen/row_split.h"

namespace trlc::codegen {

class ProgramEmitter {
public:
    ProgramEmitter(const ir::Program &prog, const Schedule &sched, const MemPlan &plan, const SourceManager *sm,
                   const Pdg *pdg = nullptr, const CodegenOptions &opts = CodegenOptions(),
                   const KernelPlan *kernels = nullptr)
        : prog_(prog), sched_(sched), plan_(plan), sm_(sm), pdg_(pdg), opts_(opts) {
        if (kernels) {
            kp_ = *kernels;
        } else {  // the blas and fusion passes, as the pipeline runs them
            plan_blas(prog_, sched_, plan_, opts_, &kp_);
            plan_fusion(prog_, pdg_, sched_, plan_, opts_, &kp_);
        }
        size_t k = 0;
        for (const auto &b : prog_.bounds) {
            if (runtime_bound(k)) bound_values_.index[b.first] = static_cast<int>(k);
            ++k;
        }
    }

    std::string where(const Loc &loc) const;
    /** where() without the file's folders ("nn.trl:26"), for a comment at the end of a line. */
    std::string short_where(const Loc &loc) const;

    std::string run();

    /** Full point coordinates (C names) of statement "st" inside its function: non-batch dims are
     *  the parameters a0.., batch dims are unravelled from the element index "e". */
    void point_setup(const Statement &st, const std::vector<int> &dims, std::string &body, int indent,
                     const char *elem);

    int64_t batch_count(const Statement &st, const std::vector<int> &dims);
    /** kernel_plan.h's copies_onto_itself for this program and memory plan. */
    bool copies_onto_itself(const Statement &st) const;

    std::string params(const Statement &st);

    /** The work of tensor statement "st" at one point (inside TRL_KERNEL_INDEX(e, n)), lines at
     *  "indent": coordinates from e and a0.., random stream "stream", the value stored in place. */
    std::string tensor_point_body(const Statement &st, int indent, std::optional<RowSplit> *rows = nullptr,
                                  std::set<int> *reads = nullptr);

    /** The row split of a one-point kernel (codegen/row_split.h), or nothing: "emit(rows)" writes
     *  the kernel's body given a RowSplit to fill (throwing RowSplitUnsupported where it cannot
     *  keep a value by rows), "emit(nullptr)" the one-thread body. */
    std::string with_row_split(int64_t points, const std::string &kernel,
                               const std::function<std::string(std::optional<RowSplit> *)> &emit);
    /** ", long long trl_r0, long long trl_r1" for a row-split kernel. */
    std::string row_params(const std::string &kernel) const;
    /** The launch of kernel "name" at "npts" points: TRL_LAUNCH, or TRL_LAUNCH_ROWS with the
     *  rows and the work of its split values. */
    std::string launch(const std::string &name, const std::string &npts, const std::string &work) const;

    /** Point coordinates p0.. and equation variables v0.. of tensor statement "st". */
    void point_vars(const Statement &st, std::string &body, int indent);

    /** Element operations of tensor statement "st" at one batch point (codegen/work_estimate.h),
     *  not counting the nodes already in "seen". */
    int64_t statement_work(const Statement &st, std::set<const ir::Node *> &seen) const;
    /** Element operations of the operand kernel of product "p" over "points" batch points: A's
     *  DAG at every point, B's once (at point 0), not the product. */
    static int64_t operand_work(const BlasProduct &p, int64_t points);

    int statement_index(const Statement &st) const { return static_cast<int>(&st - sched_.statements.data()); }

    // ---- matrix products through BLAS (plan in codegen/plan_blas.cpp) -----------

    /** The host lines before the gemm calls of BLAS statement "st" launched with arguments
     *  "args" (C expressions): the arena addresses of its operands read in place, as
     *  const typed pointers (names in "a_src" / "b_src", per product; empty: the workspace). */
    void in_place_operands(const Statement &st, const BlasPlan &bp, const std::vector<std::string> &args,
                           const std::string &pad, std::vector<std::string> &a_src, std::vector<std::string> &b_src);

    /** The first "count" products of "bp" read from the workspace at this thread's point e. */
    void bind_products(ExprEmitter &ee, const BlasPlan &bp, size_t count);
    /** Store the values operand kernel "j" computes for the later kernels (BlasSpill). */
    void store_spills(ExprEmitter &ee, const BlasPlan &bp, size_t j);
    /** Make operand node "op" of product "p" read from the workspace at byte "off" (+ "at"
     *  elements) when it was stored there ("stored") in its own dtype. */
    void bind_operand(ExprEmitter &ee, const ir::Node &op, const BlasProduct &p, bool stored, int64_t off,
                      const std::string &at);
    /** A value of the static shape of "t" in "dt", read from the workspace at byte "off" (+ "at"
     *  elements): a pointer to its row-major elements, or element 0 of it for a scalar. */
    static Val workspace_value(const ir::Type &t, DType dt, int64_t off, const std::string &at);

    /** The operand kernel of product "j" of statement "si": A rows per point, B at point 0. */
    void operand_function(int si, size_t j);

    /** The body of the operand kernel of product "j" of BLAS statement "st" (row split: "rows"
     *  set; A's rows are split, B and the spills are whole). */
    std::string operand_body(const Statement &st, const BlasPlan &bp, size_t j, std::optional<RowSplit> *rows);

    /** The kernel of group "g": named after its first statement and its size; a statement the
     *  loop nest runs in several places (peeled or split loops) can start several groups of
     *  the same size, so the second and later of those get "_2", "_3", …. */
    std::string fused_name(int g) const;

    /** One kernel running the statements of group "g" in order at each batch point. */
    void fused_function(int g);

    /** The member bodies of fused group "g" as a row-split kernel (codegen/row_split.h), or all
     *  empty (one thread).  A member that cannot be split runs on thread 0 alone; the members
     *  split must share their row count.  A member that reads what an earlier one writes (or
     *  writes what it reads or writes) starts with a barrier of the launch's threads, which
     *  otherwise run the members at their own pace. */
    std::vector<std::string> fused_row_split(int g);

    void statement_function(int si);

    static std::string join(const std::vector<std::string> &xs);

    /** A trl_field initializer for value "v" (declares its shape array). */
    std::string field_of(ExprEmitter &ee, const std::string &key, const Val &v, const Loc &loc);

    /** --mem-budget: the copies of the swaps (MemPlan::swaps) of "block" out of the arena before
     *  (out) or back after (!out) its children from..to. */
    void swaps(const LoopNode &block, size_t from, size_t to, bool out, const std::string &pad);
    /** --mem-budget: the copies of the stagings (MemPlan::stagings) of "loop" in at the start of
     *  its body (in) or out at its end. */
    void stagings(const LoopNode &loop, bool in, const std::string &pad);
    void loop(const LoopNode &n, int indent);
    /** --distributed (emit_distributed.cpp): after the kernel of an allreduce_mean statement
     *  (loop node "n"), trl_allreduce_mean over its point's leaves (each point of a batch). */
    void allreduce(const Statement &st, const LoopNode &n, const std::string &pad);
    /** The stream key of statement "st" in run_program: keyed by trl_rank(ctx) when its draws
     *  differ between ranks (ir::Tensor::rank_keyed; emits and saves of a distributed program). */
    std::string stream_key(const Statement &st) const;

    /** Before the kernels, when a kernel or host function reads a run-time bound as a value
     *  (ExprEmitter::BoundValues): TRLG_BOUND(k), a host variable, and on the device a
     *  __constant__ copy, both set by run_program before the first launch.  No value is
     *  written here: this text is the same at every value (driver/runtime_bounds.cpp). */
    std::string bound_value_globals() const;

    /** The loop nest to print: the one reading run-time bounds when there is one. */
    const LoopNode *root() const { return opts_.loop_nest ? opts_.loop_nest.get() : sched_.root.get(); }
    /** The loop whose iterations --checkpoint ends at (runtime/rt/trl_checkpoint.cpp): the
     *  root when it is a loop, else the top-level loop of the root block holding the most
     *  statements (a training program's iteration loop); null when there is none. */
    const LoopNode *checkpoint_loop() const;
    /** kCheckpointRangeCount and kCheckpointRanges (MemPlan::checkpoint_ranges; the whole arena
     *  when the printed nest's loop differs from the planned one); "" without a loop. */
    std::string checkpoint_table() const;
    /** kRegions: the profiler's region of each statement (--profile, runtime/rt/trl_profile.cpp):
     *  its tensor, emit stream or saved file, its group (region_group) and its source position. */
    std::string region_table() const;
    /** A mark for the profiler's region of statement "stmt" in run_program's text, made a
     *  TRL_REGION(k) prefix of the next timed call by place_regions (emit_host.cpp). */
    static std::string region_mark(int stmt);
    void place_regions();

    /** Whether bound number k (Program::bounds order) is read at run time. */
    bool runtime_bound(size_t k) const { return k < opts_.bounds.size() && opts_.bounds[k].runtime; }

    /** In run_program: the run-time bounds as locals `bound<k>` (read by the loop nest), and
     *  the record count of every emit stream over a dim they bound. */
    void runtime_bounds();

    /** The record count of emit "e": the product of its dims' bounds, a literal, or a C++
     *  product naming the locals in "var" (bound name -> `bound<k>`) of run-time bounds. */
    std::string stream_points(const ir::Emit &e, const std::map<std::string, std::string> &var) const;

    void run_program();

    void main_function(const std::string &path);

    // ---- library mode (--emit=library, emit_library.cpp) -------------------------------

    /** Instead of run_program and main: trlg_lib_run (the loop nest) and the C API of NAME.h
     *  (create, run, error, destroy), NAME = opts_.library. */
    void library_functions(const std::string &path);
    /** The line of output "sv"'s host function that writes value "v" to the caller's buffer. */
    std::string output_store(ExprEmitter &ee, const ir::Save &sv, Val v);

private:
    const ir::Program &prog_;
    const Schedule &sched_;
    const MemPlan &plan_;
    const SourceManager *sm_;
    const Pdg *pdg_;
    CodegenOptions opts_;
    std::string out_;
    KernelPlan kp_;  // the blas and fusion passes' decisions
    std::map<int, std::set<int>> emit_reads_;
    /** The stage slot bytes of each emit statement's points (runtime/trl_emit_stage.h). */
    std::map<int, int64_t> emit_slot_;
    /** sizeof(trlg_emit_head) of runtime/trl_emit_stage.h: a staged record's head. */
    static constexpr int64_t kStagedHeadBytes = 56;
    /** The bytes field `key` of value v takes in a stage slot, at its static maximum shape
     *  (trlg_put_fields' layout, runtime/trl_emit_stage.h). */
    static int64_t staged_bytes(const std::string &key, const Val &v);
    ExprEmitter::BoundValues bound_values_;      // run-time bounds read by kernels as values
    std::map<std::string, RowSplit> row_split_;  // kernel name -> its row split (codegen/row_split.h)
    /** Kernel name -> its weight over a run (codegen/compile_parts.h), set before kernel_text
     *  when the source is split into compile parts (CodegenOptions::compile_parts). */
    std::map<std::string, KernelWeight> kernel_work_;
    /** Tensor statement "st" (index "si")'s weighted element operations over a run, for
     *  kernel_work_ (codegen/compile_parts.h). */
    int64_t run_work(const Statement &st, int si);
    KernelFrame frame_;         // the frame of the kernel being emitted (device code)
    int64_t frames_bytes_ = 0;  // the frames of the largest launch: max of frame x grid threads
    /** Row splits that publish (codegen/row_split.h) use the workspace past the products', at
     *  publish_offset(): publish_ok_ while a kernel with the workspace is emitted, its bytes in
     *  kernel_publish_, the largest kernel's in publish_bytes_ (kWorkspaceBytes includes them). */
    bool publish_ok_ = false;
    int64_t kernel_publish_ = 0, publish_bytes_ = 0;
    int64_t publish_offset() const { return (kp_.workspace_bytes + 255) / 256 * 256; }
    /** Lets "ee" publish when the kernel being emitted has the workspace (publish_ok_). */
    bool enable_publish(ExprEmitter &ee) {
        if (!publish_ok_) return false;
        ee.publish_base = "ws + " + std::to_string(publish_offset());
        ee.publish_bytes = &kernel_publish_;
        return true;
    }
    /** The definition of kernel "name": "header" ("TRL_KERNEL k(...) {\n") and its body, whose
     *  first line `TRL_KERNEL_INDEX(e, n) {` becomes TRL_ROWS_INDEX for a row-split kernel (every
     *  thread of the device's block at the point, on its rows: runtime/trl_rt.h) and gets
     *  TRLG_FRAME first when the kernel has a frame (KernelFrame), counted for its grid of
     *  "points" points.  Resets frame_ for the next kernel. */
    std::string kernel_text(const std::string &name, const std::string &header, const std::string &body,
                            int64_t points);
};

}  // namespace trlc::codegen
