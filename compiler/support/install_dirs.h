// install_dirs — where trlc finds the runtime (the sources compiled into every generated
// program) and the .trl standard library, in a build tree and in an installed prefix.
//
// Each is, in order: the environment variable (TRLC_RUNTIME_DIR, TRLC_STDLIB_DIR) when set and
// not empty; the installed layout next to the running executable, PREFIX/bin/trlc ->
// PREFIX/share/trlc/runtime and PREFIX/share/trlc/dsl (`cmake --install`, CMakeLists.txt), when
// that directory exists; else the source tree trlc was built from (compiled in).  So a build
// tree works in place, and an installed prefix works wherever it is copied.
#pragma once

#include <string>

namespace trlc {

/** The runtime directory (runtime/: trl_rt.h, the rt/ sources, ...); see the file comment. */
std::string runtime_dir();

/** The standard library's root (the directory holding std/nn.trl, ...); see the file comment. */
std::string stdlib_dir();

/** The prebuilt runtime objects (driver/runtime_objects.h): TRLC_RUNTIME_OBJECTS_DIR, else
 *  PREFIX/share/trlc/runtime-objects, else BUILD/runtime-objects of the build tree trlc was
 *  built in (it may not exist: then every object set comes from the build cache). */
std::string prebuilt_runtime_dir();

}  // namespace trlc
