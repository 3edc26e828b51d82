// trl_dist_mpi — the MPI process-group layer of data-parallel programs (trl_dist_layer,
// runtime/trl_rt.h; trlc --distributed=mpi, dsl/README.md §7.12, issue 21).  Compiled and linked
// only into programs built with --distributed=mpi (with the flags CMake's FindMPI found when trlc
// was configured: compiler/driver/build_program.cpp), so no other program depends on MPI.
//
// What each entry does, with the sections of the MPI-3.1 standard (mpi-forum.org, June 2015):
//   init       MPI_Init_thread(MPI_THREAD_FUNNELED) unless MPI is initialized already (§12.4.3;
//              MPI_Initialized §8.7): the program's OpenMP threads never call MPI, only the thread
//              that called init, which is what FUNNELED promises (plain MPI_Init means
//              MPI_THREAD_SINGLE, one thread in the process).  Then MPI_Comm_set_errhandler(
//              MPI_COMM_WORLD, MPI_ERRORS_RETURN) (§8.3.1, §8.4): a failed call returns its error
//              code, which becomes the message of error() (MPI_Error_string, §8.4), instead of
//              MPI's default of aborting every rank with a message of its own.  Rank and size of
//              MPI_COMM_WORLD (§6.4.1); the local rank is the rank in the communicator of the
//              processes that share this node's memory, MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)
//              (§6.4.2), freed again.
//   allgather  MPI_Allgather of MPI_BYTE (§5.7).  Counts are C ints (§2.5.8): a block of more
//              than 2^31 - 1 bytes goes in pieces of 2^30 bytes, each received through
//              MPI_Type_contiguous resized to the block's extent (MPI_Type_create_resized,
//              §4.1.7), so piece k of rank r lands at recv + r·bytes + k·2^30.
//   gather     the sizes first: MPI_Allgather of one MPI_UNSIGNED_LONG_LONG per rank (not
//              MPI_Gather, §5.5: every rank must know whether the blocks fit MPI_Gatherv's int
//              counts and displacements, to take the same path), then MPI_Gatherv of MPI_BYTE
//              into a malloc'ed buffer on rank 0 (§5.5).  When the total exceeds 2^31 - 1 bytes
//              the blocks go point to point instead (MPI_Send / MPI_Recv in 2^30-byte pieces,
//              §3.2), in rank order, which every rank knows from the sizes.
//   error      the message of the last failure on this rank ("MPI_Allgather: <MPI's text>").
//   finalize   MPI_Finalize (§8.7), when init initialized MPI (who initialized it finalizes).
//   abort      MPI_Abort(MPI_COMM_WORLD, code) (§8.7): mpirun ends every rank.
//
// A call that fails on one rank returns non-zero there while the other ranks may wait inside the
// collective: the caller (rt/trl_dist.cpp) answers a failure with abort, which ends them all.
#include <mpi.h>

#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <vector>

#include "trl_rt.h"

// A named namespace around the unnamed one: --standalone puts every runtime source into one
// translation unit, where all unnamed namespaces are one.
namespace trl_dist_mpi_impl {
namespace {

char g_error[512];                // error()'s text
bool g_initialized_here = false;  // init called MPI_Init_thread: finalize calls MPI_Finalize

// Pieces of a block larger than a C int can count (file comment).  Both are macros so that
// test/dist/layer_test.cpp can also build the layer with small ones, to run those paths on
// kilobytes instead of gigabytes.
#ifndef TRL_DIST_MPI_MAX_COUNT
#define TRL_DIST_MPI_MAX_COUNT INT_MAX
#endif
#ifndef TRL_DIST_MPI_PIECE
#define TRL_DIST_MPI_PIECE (1ull << 30)
#endif
constexpr unsigned long long kMaxCount = TRL_DIST_MPI_MAX_COUNT;
constexpr unsigned long long kPiece = TRL_DIST_MPI_PIECE;
static_assert(kPiece > 0 && kPiece <= kMaxCount && kMaxCount <= INT_MAX, "pieces must fit a C int count");

/** Sets error()'s text to "WHAT: <MPI's text of rc>"; returns 1. */
int fail_mpi(const char *what, int rc) {
    char text[MPI_MAX_ERROR_STRING] = {0};
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "MPI error code %d", rc);
    int rank = -1, initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank >= 0)
        snprintf(g_error, sizeof g_error, "rank %d: %s: %s", rank, what, text);
    else
        snprintf(g_error, sizeof g_error, "%s: %s", what, text);
    return 1;
}

/** Sets error()'s text from a format (no MPI code); returns 1. */
int fail_text(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_error, sizeof g_error, fmt, ap);
    va_end(ap);
    return 1;
}

int mpi_init(int *argc, char ***argv, int *rank, int *size, int *local_rank, char *err, size_t errlen) {
    int rc = 0;
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
        int provided = 0;
        rc = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
        if (rc != MPI_SUCCESS) fail_mpi("MPI_Init_thread", rc);
        g_initialized_here = rc == MPI_SUCCESS;
    }
    if (rc == MPI_SUCCESS) {
        rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        if (rc != MPI_SUCCESS) fail_mpi("MPI_Comm_set_errhandler", rc);
    }
    if (rc == MPI_SUCCESS && (rc = MPI_Comm_rank(MPI_COMM_WORLD, rank)) != MPI_SUCCESS) fail_mpi("MPI_Comm_rank", rc);
    if (rc == MPI_SUCCESS && (rc = MPI_Comm_size(MPI_COMM_WORLD, size)) != MPI_SUCCESS) fail_mpi("MPI_Comm_size", rc);
    if (rc == MPI_SUCCESS) {
        MPI_Comm node = MPI_COMM_NULL;
        rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, *rank, MPI_INFO_NULL, &node);
        if (rc != MPI_SUCCESS) {
            fail_mpi("MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)", rc);
        } else {
            rc = MPI_Comm_rank(node, local_rank);
            if (rc != MPI_SUCCESS) fail_mpi("MPI_Comm_rank of this node's processes", rc);
            MPI_Comm_free(&node);
        }
    }
    if (rc == MPI_SUCCESS) return 0;
    if (err && errlen) snprintf(err, errlen, "%s", g_error);
    return 1;
}

int mpi_allgather(const void *send, unsigned long long bytes, void *recv) {
    if (bytes <= kMaxCount) {
        int n = static_cast<int>(bytes);
        int rc = MPI_Allgather(send, n, MPI_BYTE, recv, n, MPI_BYTE, MPI_COMM_WORLD);
        return rc == MPI_SUCCESS ? 0 : fail_mpi("MPI_Allgather", rc);
    }
    if (bytes > static_cast<unsigned long long>(LLONG_MAX))  // MPI_Aint extents are signed
        return fail_text("MPI_Allgather of %llu bytes per rank: more than an MPI_Aint extent holds", bytes);
    for (unsigned long long off = 0; off < bytes; off += kPiece) {
        int n = static_cast<int>(bytes - off < kPiece ? bytes - off : kPiece);
        MPI_Datatype piece = MPI_DATATYPE_NULL, strided = MPI_DATATYPE_NULL;
        int rc = MPI_Type_contiguous(n, MPI_BYTE, &piece);
        if (rc == MPI_SUCCESS) rc = MPI_Type_create_resized(piece, 0, static_cast<MPI_Aint>(bytes), &strided);
        if (rc == MPI_SUCCESS) rc = MPI_Type_commit(&strided);
        if (rc == MPI_SUCCESS)
            rc = MPI_Allgather(static_cast<const char *>(send) + off, n, MPI_BYTE, static_cast<char *>(recv) + off, 1,
                               strided, MPI_COMM_WORLD);
        if (strided != MPI_DATATYPE_NULL) MPI_Type_free(&strided);
        if (piece != MPI_DATATYPE_NULL) MPI_Type_free(&piece);
        if (rc != MPI_SUCCESS) return fail_mpi("MPI_Allgather (a piece of a block over 2^31 bytes)", rc);
    }
    return 0;
}

int mpi_gather(const void *send, unsigned long long bytes, unsigned long long *sizes, void **recv) {
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<unsigned long long> all(size);
    int rc = MPI_Allgather(&bytes, 1, MPI_UNSIGNED_LONG_LONG, all.data(), 1, MPI_UNSIGNED_LONG_LONG, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) return fail_mpi("MPI_Allgather of the block sizes", rc);
    unsigned long long total = 0;
    for (unsigned long long s : all) total += s;
    char *buf = nullptr;
    if (rank == 0) {
        buf = static_cast<char *>(malloc(total ? total : 1));
        if (!buf) return fail_text("rank 0: gather: out of memory for %llu bytes of %d ranks' blocks", total, size);
        for (int r = 0; r < size; ++r) sizes[r] = all[r];
    }
    if (total <= kMaxCount) {
        std::vector<int> counts(rank == 0 ? size : 0), displs(rank == 0 ? size : 0);
        for (int r = 0, at = 0; rank == 0 && r < size; at += counts[r], ++r) {
            counts[r] = static_cast<int>(all[r]);
            displs[r] = at;
        }
        rc = MPI_Gatherv(send, static_cast<int>(bytes), MPI_BYTE, buf, counts.data(), displs.data(), MPI_BYTE, 0,
                         MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) {
            free(buf);
            return fail_mpi("MPI_Gatherv", rc);
        }
    } else if (rank == 0) {  // point to point, rank order, pieces of kPiece bytes
        if (bytes) memcpy(buf, send, bytes);
        char *at = buf + bytes;
        for (int r = 1; r < size; at += all[r], ++r)
            for (unsigned long long off = 0; off < all[r]; off += kPiece) {
                int n = static_cast<int>(all[r] - off < kPiece ? all[r] - off : kPiece);
                rc = MPI_Recv(at + off, n, MPI_BYTE, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (rc != MPI_SUCCESS) {
                    free(buf);
                    return fail_mpi("MPI_Recv (gather of blocks over 2^31 bytes in all)", rc);
                }
            }
    } else {
        for (unsigned long long off = 0; off < bytes; off += kPiece) {
            int n = static_cast<int>(bytes - off < kPiece ? bytes - off : kPiece);
            rc = MPI_Send(static_cast<const char *>(send) + off, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            if (rc != MPI_SUCCESS) return fail_mpi("MPI_Send (gather of blocks over 2^31 bytes in all)", rc);
        }
    }
    if (rank == 0) *recv = buf;
    return 0;
}

const char *mpi_error() { return g_error; }

void mpi_finalize() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (g_initialized_here && !finalized) MPI_Finalize();
}

void mpi_abort(int code) {
    MPI_Abort(MPI_COMM_WORLD, code);
    _exit(code);  // MPI_Abort does not return; should a library's return anyway, still stop
}

}  // namespace
}  // namespace trl_dist_mpi_impl

extern "C" const trl_dist_layer trl_dist_mpi = {
    "mpi",
    trl_dist_mpi_impl::mpi_init,
    trl_dist_mpi_impl::mpi_allgather,
    trl_dist_mpi_impl::mpi_gather,
    trl_dist_mpi_impl::mpi_error,
    trl_dist_mpi_impl::mpi_finalize,
    trl_dist_mpi_impl::mpi_abort,
    nullptr,  // allreduce_mean_device: host memory only (trl_allreduce_mean's ordered mean)
};
