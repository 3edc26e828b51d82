#pragma once
// trl_prelude — the headers every generated program includes first (codegen/emit_host.cpp
// writes the same #include lines at the top of the source), gathered in one header so that
// `trlc -o` can compile them once into a GCC precompiled header per compile part and toolchain
// (compiler/driver/runtime_objects.h: prelude_pch_dir) and hand each part
// `-include trl_prelude.h`: GCC then loads the .gch instead of parsing some 30,000 lines of
// headers again (about 0.35 s of CPU per compile part of PPO CartPole).  The source's own
// #include lines that follow find these headers already included.  Without the .gch (another
// compiler, a mismatched flag: GCC checks), the same text is parsed as before.
#include "trl_libm.h"
#include <stdint.h>
#include <string.h>

#include <vector>

#include "trl_rt.h"
#include "trl_random.h"
#include "trl_linalg.h"
#include "trl_ops.h"
