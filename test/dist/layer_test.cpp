// layer_test — the MPI process-group layer (runtime/rt/trl_dist_mpi.cpp, the trl_dist_layer of
// runtime/trl_rt.h) through its table, run as several ranks by ctest:
//   mpiexec -n 2 --oversubscribe ./trl_dist_layer_test 2
// (test/CMakeLists.txt; also built with small TRL_DIST_MPI_MAX_COUNT / TRL_DIST_MPI_PIECE, so the
// paths of blocks over 2^31 bytes run on kilobytes).  Checks init (rank, size, local rank),
// allgather (0 bytes, odd sizes, 1 MiB), gather (a rank with 0 bytes, rank 0 with 0 bytes, every
// rank with 0 bytes, varying sizes) and finalize.  Every rank checks what it can; the ranks'
// failure counts are allgathered, so every rank exits 1 when any check failed anywhere.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "trl_rt.h"

namespace {

int g_rank = -1, g_failures = 0;

void check(bool ok, const std::string &what) {
    if (ok) return;
    ++g_failures;
    fprintf(stderr, "layer_test: rank %d: FAILED: %s\n", g_rank, what.c_str());
}

unsigned char byte_of(int rank, unsigned long long i, int salt) {
    return static_cast<unsigned char>((rank * 131 + i * 7 + salt * 17 + (i >> 8)) & 0xff);
}

std::vector<unsigned char> block(int rank, unsigned long long bytes, int salt) {
    std::vector<unsigned char> b(bytes);
    for (unsigned long long i = 0; i < bytes; ++i) b[i] = byte_of(rank, i, salt);
    return b;
}

void test_allgather(const trl_dist_layer &L, int rank, int size, unsigned long long bytes, int salt) {
    std::vector<unsigned char> send = block(rank, bytes, salt);
    std::vector<unsigned char> recv(size * bytes + 1, 0xa5);  // one guard byte past the end
    int rc = L.allgather(send.data(), bytes, recv.data());
    check(rc == 0, "allgather of " + std::to_string(bytes) + " bytes returned " + std::to_string(rc) + ": " +
                       (rc ? L.error() : ""));
    if (rc) return;
    int bad = 0;
    for (int r = 0; r < size; ++r)
        for (unsigned long long i = 0; i < bytes; ++i) bad += recv[r * bytes + i] != byte_of(r, i, salt);
    check(bad == 0, "allgather of " + std::to_string(bytes) + " bytes: " + std::to_string(bad) + " bytes differ");
    check(recv[size * bytes] == 0xa5, "allgather of " + std::to_string(bytes) + " bytes wrote past its end");
}

/** gather with rank r sending bytes_of[r] bytes. */
void test_gather(const trl_dist_layer &L, int rank, int size, const std::vector<unsigned long long> &bytes_of,
                 int salt) {
    std::string what = "gather of sizes";
    for (unsigned long long b : bytes_of) what += " " + std::to_string(b);
    std::vector<unsigned char> send = block(rank, bytes_of[rank], salt);
    std::vector<unsigned long long> sizes(size, 12345);
    void *recv = reinterpret_cast<void *>(0x1);  // other ranks: must stay untouched
    int rc = L.gather(send.empty() ? nullptr : send.data(), bytes_of[rank], sizes.data(), &recv);
    check(rc == 0, what + " returned " + std::to_string(rc) + ": " + (rc ? L.error() : ""));
    if (rc) return;
    if (rank != 0) {
        check(recv == reinterpret_cast<void *>(0x1), what + ": recv was written on rank " + std::to_string(rank));
        bool untouched = true;
        for (unsigned long long s : sizes) untouched = untouched && s == 12345;
        check(untouched, what + ": sizes were written on rank " + std::to_string(rank));
        return;
    }
    check(recv != nullptr && recv != reinterpret_cast<void *>(0x1), what + ": rank 0 got no buffer");
    if (recv == nullptr || recv == reinterpret_cast<void *>(0x1)) return;
    const unsigned char *at = static_cast<const unsigned char *>(recv);
    for (int r = 0; r < size; ++r) {
        check(sizes[r] == bytes_of[r], what + ": sizes[" + std::to_string(r) + "] = " + std::to_string(sizes[r]));
        int bad = 0;
        for (unsigned long long i = 0; i < bytes_of[r]; ++i) bad += at[i] != byte_of(r, i, salt);
        check(bad == 0, what + ": " + std::to_string(bad) + " bytes of rank " + std::to_string(r) + "'s block differ");
        at += bytes_of[r];
    }
    free(recv);
}

}  // namespace

int main(int argc, char **argv) {
    const trl_dist_layer &L = trl_dist_mpi;
    int rank = -1, size = 0, local_rank = -1;
    char err[256] = "";
    if (L.init(&argc, &argv, &rank, &size, &local_rank, err, sizeof err) != 0) {
        fprintf(stderr, "layer_test: init failed: %s\n", err);
        return 1;
    }
    g_rank = rank;
    check(std::string(L.name) == "mpi", std::string("name is '") + L.name + "'");
    check(size >= 1 && rank >= 0 && rank < size, "rank " + std::to_string(rank) + " of " + std::to_string(size));
    check(local_rank >= 0 && local_rank < size, "local rank " + std::to_string(local_rank));
    if (argc > 1) check(size == atoi(argv[1]), "size " + std::to_string(size) + ", expected " + argv[1]);

    // allgather: the same count on every rank (trl_rt.h), 0 bytes included.
    int salt = 0;
    for (unsigned long long bytes : {0ull, 1ull, 37ull, 4096ull, 1000003ull, 1ull << 20})
        test_allgather(L, rank, size, bytes, ++salt);

    // gather: every rank its own size; one rank (1, then 0) with none, then all with none.
    std::vector<unsigned long long> sizes(size);
    for (int r = 0; r < size; ++r) sizes[r] = r == 1 ? 0 : 1000ull * (r + 1) + 3;
    test_gather(L, rank, size, sizes, ++salt);
    for (int r = 0; r < size; ++r) sizes[r] = r == 0 ? 0 : 517ull * r;
    test_gather(L, rank, size, sizes, ++salt);
    test_gather(L, rank, size, std::vector<unsigned long long>(size, 0), ++salt);
    for (int r = 0; r < size; ++r) sizes[r] = (r % 3) * 300000ull + 1;
    test_gather(L, rank, size, sizes, ++salt);
    for (int round = 0; round < 20; ++round) {  // back-to-back collectives, sizes changing each round
        for (int r = 0; r < size; ++r) sizes[r] = ((r + 1) * 7919ull * (round + 1)) % 5000;
        test_gather(L, rank, size, sizes, ++salt);
        test_allgather(L, rank, size, 13ull * round, ++salt);
    }

    // Every rank learns every rank's failures: any failure fails every rank's exit status.
    std::vector<int> failures(size, 0);
    int mine = g_failures;
    if (L.allgather(&mine, sizeof mine, failures.data()) != 0) {
        fprintf(stderr, "layer_test: rank %d: allgather of the failure counts: %s\n", rank, L.error());
        L.abort(1);
    }
    int total = 0;
    for (int f : failures) total += f;
    if (rank == 0)
        printf("layer_test: %d ranks (local rank of rank 0: %d): %s (%d failed checks)\n", size, local_rank,
               total ? "FAILED" : "ok", total);
    L.finalize();
    return total ? 1 : 0;
}
