#pragma once
// distribute — data-parallel programs (pipeline stage "distribute", before autodiff; runs for
// `--distributed=mpi` builds and `--interpret --ranks N`; issue 21, dsl/README.md §7.12).
//
// A data-parallel run is N copies of the program (ranks), each stepping its own environments,
// whose parameters stay identical because every gradient is averaged over the ranks before the
// optimizer reads it (what PyTorch DDP and Horovod do: one all-reduce per update).  The pass
// decides, for a program written for one process:
//
// 1. Where the all-reduce goes: each `grad(y, x)` moves into a hidden tensor of its own over the
//    variables of the equation it was in, flagged `allreduce_mean` (each point's value is the
//    mean over the ranks), and the equation reads that tensor at its own point instead.
// 2. Which values must be the same on every rank (the replicated set): the tensors that the
//    grads' x (the parameters) read, and, transitively, everything those read, except through
//    an all-reduced gradient (which is the same everywhere by construction).  Their rng(...)
//    streams are the one-process streams, so every rank initializes the same parameters.
//    Every other tensor (the rollout, the environments, the minibatch permutation, the
//    gradient's own loss) is `rank_keyed`: its streams include the rank, so ranks explore
//    differently; rank 0 draws what a one-process run draws.
//
//   before:  (p, o)[i, k+1] = optim.adam(p[i, k], clip(grad(mbloss[i, k], p[i, k]), 0.5), o[i, k], lr[i])
//   after:   allreduce.p[i, k] = grad(mbloss[i, k], p[i, k])        // mean over the ranks
//            (p, o)[i, k+1] = optim.adam(p[i, k], clip(allreduce.p[i, k], 0.5), o[i, k], lr[i])
//            p, o, net, opt, lr: replicated; st, ob, act, idx, mbloss, …: draws keyed by the rank
//
// With one rank every value is what the program computes without the pass (a mean over one
// rank is the value, the streams of rank 0 are the one-process streams).
#include "ir/ir.h"
#include "support/diagnostics.h"

namespace trlc {

/** Rewrite "prog" for data-parallel ranks as above.  Returns false after an error in "diag"
 *  (a grad outside a tensor's equation is left to autodiff's message). */
bool distribute(ir::Program &prog, Diagnostics &diag);

/** Whether save "s" of "prog" (after distribute) reads only replicated tensors, so that every
 *  rank saves the same bytes (what the ranks' parameter digest compares, trl_digest). */
bool save_is_replicated(const ir::Program &prog, const ir::Save &s);

}  // namespace trlc
