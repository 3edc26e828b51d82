// fault_test — a rank that dies: each rank of `mpiexec -n N fault_test DIR [SECONDS [ABORT_RANK]]`
// writes its pid to DIR/rank-R.pid and then allgathers 4 KiB through the MPI layer
// (runtime/rt/trl_dist_mpi.cpp) in a loop, for SECONDS (default 60) at most, as the ranks of a
// training run average their gradients every step.  test/dist/fault_test.py kills one rank with
// SIGKILL and checks what the others and mpiexec do.  A failed allgather is answered as
// rt/trl_dist.cpp answers it: a message naming the rank and the layer's error, then abort(1).
// With ABORT_RANK, that rank calls the layer's abort(3) after 100 steps instead (a rank that
// failed on its own).  Exit 0 when the time is up with no failure (nobody was killed).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>
#include <vector>

#include "trl_rt.h"

int main(int argc, char **argv) {
    const trl_dist_layer &L = trl_dist_mpi;
    int rank = 0, size = 1, local_rank = 0;
    char err[256] = "";
    if (L.init(&argc, &argv, &rank, &size, &local_rank, err, sizeof err) != 0) {
        fprintf(stderr, "fault_test: init failed: %s\n", err);
        return 1;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: fault_test DIR [SECONDS]\n");
        L.abort(2);
    }
    double seconds = argc > 2 ? atof(argv[2]) : 60;
    int abort_rank = argc > 3 ? atoi(argv[3]) : -1;
    std::string pid_file = std::string(argv[1]) + "/rank-" + std::to_string(rank) + ".pid";
    std::string tmp = pid_file + ".tmp";
    if (FILE *f = fopen(tmp.c_str(), "w")) {
        fprintf(f, "%d\n", static_cast<int>(getpid()));
        fclose(f);
        rename(tmp.c_str(), pid_file.c_str());
    }
    std::vector<unsigned char> send(4096, static_cast<unsigned char>(rank)), recv(4096 * size);
    auto start = std::chrono::steady_clock::now();
    long long steps = 0;
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds) {
        if (L.allgather(send.data(), send.size(), recv.data()) != 0) {
            fprintf(stderr, "fault_test: rank %d of %d: allgather failed after %lld steps: %s\n", rank, size, steps,
                    L.error());
            L.abort(1);
        }
        ++steps;
        if (rank == abort_rank && steps == 100) {
            fprintf(stderr, "fault_test: rank %d of %d: abort(3) after %lld steps\n", rank, size, steps);
            L.abort(3);
        }
        usleep(1000);
    }
    if (rank == 0) printf("fault_test: %d ranks, %lld allgathers, no failure\n", size, steps);
    L.finalize();
    return 0;
}
