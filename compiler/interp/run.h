#pragma once
// run — pieces shared by the point-wise (interpreter.cpp) and scheduled (scheduled.cpp)
// interpreters: reading a `load` tensor, writing a `save` file, running a job on a big stack.
#include <exception>
#include <functional>
#include <string>

#include "interp/eval.h"
#include "ir/ir.h"

namespace trlc::interp {

/** Read the file of `load` tensor "t" (index "ti"), check it against the declared type and give
 *  it to "ev".  RuntimeError at the load when the file is missing, malformed or mismatched. */
void load_tensor(Evaluator &ev, int ti, const ir::Tensor &t);

/** Write the value "v" of `save` "s" to its .npy / .npz file (relative paths under "dir").
 *  RuntimeError at the save when the value cannot be saved or the file cannot be written. */
void write_save(const ir::Save &s, const Value &v, const std::string &dir);

/** Run "fn" on a thread with a 2 GiB stack (smaller ones, then this thread, as fallbacks);
 *  an exception thrown by "fn" is rethrown here. */
void run_on_big_stack(const std::function<void()> &fn);

}  // namespace trlc::interp
