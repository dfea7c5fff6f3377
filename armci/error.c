#include "error.h"

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "config.h"
#include "runtime.h"

static int my_rank_or_minus_one(void)
{
    int up = 0;
    MPI_Initialized(&up);
    if (!up)
        return -1;
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

static void vreport(const char *prefix, const char *call, const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    if (call)
        fprintf(stderr, "%s (rank %d) in %s: %s\n", prefix, my_rank_or_minus_one(), call, msg);
    else
        fprintf(stderr, "%s (rank %d): %s\n", prefix, my_rank_or_minus_one(), msg);
    fflush(stderr);
}

void armci_die(const char *call, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("ARMCI error", call, fmt, ap);
    va_end(ap);

    int up = 0, down = 0;
    MPI_Initialized(&up);
    MPI_Finalized(&down);
    if (up && !down)
        MPI_Abort(MPI_COMM_WORLD, 1);
    abort();
}

void armci_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("ARMCI warning", NULL, fmt, ap);
    va_end(ap);
}

void armci_log(const char *fmt, ...)
{
    if (!cfg.verbose)
        return;
    va_list ap;
    va_start(ap, fmt);
    vreport("ARMCI", NULL, fmt, ap);
    va_end(ap);
}

void check_proc(const char *call, const char *arg, int proc)
{
    if (proc < 0 || proc >= rt.nprocs)
        armci_die(call, "argument %s=%d is not a valid process rank (job has %d processes)", arg,
                  proc, rt.nprocs);
}

void check_ptr(const char *call, const char *arg, const void *ptr)
{
    if (!ptr)
        armci_die(call, "argument %s is a null pointer", arg);
}

void check_nonneg(const char *call, const char *arg, long value)
{
    if (value < 0)
        armci_die(call, "argument %s=%ld is negative", arg, value);
}
