/*
 * Where a benchmark writes its CSV: the file BENCH_CSV names, or stdout.
 * Only rank 0 writes rows. Through a file of its own the CSV shares its
 * stream with nothing else: stdout under mpirun carries every rank's output
 * (and the launcher's warnings) in whatever order they reach it.
 */
#ifndef BENCH_CSV_H
#define BENCH_CSV_H

#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline FILE *bench_csv(void)
{
    static FILE *out;
    if (!out) {
        int me;
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
        if (me != 0) { /* a second writer would truncate rank 0's file */
            fprintf(stderr, "bench_csv: rank %d writes CSV; only rank 0 may\n", me);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        const char *path = getenv("BENCH_CSV");
        out = path && *path ? fopen(path, "w") : stdout;
        if (!out) {
            fprintf(stderr, "BENCH_CSV: cannot write %s: %s\n", path, strerror(errno));
            exit(1);
        }
    }
    return out;
}

#endif
