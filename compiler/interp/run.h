#pragma once
// run — pieces shared by the point-wise (interpreter.cpp) and scheduled (scheduled.cpp)
// interpreters: reading a `load` tensor, an `emit` line, writing a `save` file, running a job on
// a big stack.
#include <exception>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "interp/eval.h"
#include "ir/ir.h"

namespace trlc::interp {

/** Read the file of `load` tensor "t" (index "ti"), check it against the declared type and give
 *  it to "ev".  RuntimeError at the load when the file is missing, malformed or mismatched. */
void load_tensor(Evaluator &ev, int ti, const ir::Tensor &t);

/** Every `load` tensor of "prog", and every `input` from its file in "inputs" (name -> .npy,
 *  `--input NAME=FILE`).  RuntimeError at an input without a file, or as load_tensor. */
void load_all(Evaluator &ev, const ir::Program &prog, const std::map<std::string, std::string> &inputs);

/** The JSON line {"NAME":value} of `output NAME` "s" (Save::output) with the value "v". */
std::string output_line(const ir::Save &s, const Value &v);

/** The JSON line ("{…}\n") of emit "e" at "point": its guard first (`emit … when g`), then,
 *  only where the guard holds, the fields in written order; "" where it is false.  "rank" >= 0
 *  (a data-parallel run): the record starts with "rank":R.
 *  RuntimeError at a field that cannot be written (a random key). */
std::string emit_line(Evaluator &ev, const ir::Emit &e, const std::vector<int64_t> &point, int rank = -1);

/** Write the value "v" of `save` "s" to its .npy / .npz file (relative paths under "dir").
 *  RuntimeError at the save when the value cannot be saved or the file cannot be written. */
void write_save(const ir::Save &s, const Value &v, const std::string &dir);

/** Run "fn" on a thread with a 2 GiB stack (smaller ones, then this thread, as fallbacks), for
 *  deep expression trees; an exception thrown by "fn" is rethrown here. */
void run_on_big_stack(const std::function<void()> &fn);

}  // namespace trlc::interp
