/*
 * The armci_msg_* reductions over MPI: gop (every process gets the result),
 * reduce (the scope's first process gets it) and sel (the record with the
 * smallest or largest key). Scopes are message.c's. Op strings may come from
 * Fortran without a NUL: they are compared as prefixes, byte by byte, never
 * read past what GA's ARMCI would read.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "armci.h"
#include "api/messaging.h"
#include "core/error.h"
#include "core/mutant.h"
#include "core/util.h"
#include "message.h"

static MPI_Datatype mpi_type(const char *call, int type)
{
    switch (type) {
    case ARMCI_INT:
        return MPI_INT;
    case ARMCI_LONG:
        return MPI_LONG;
    case ARMCI_LONG_LONG:
        return MPI_LONG_LONG;
    case ARMCI_FLOAT:
        return MPI_FLOAT;
    case ARMCI_DOUBLE:
        return MPI_DOUBLE;
    }
    armci_die(call, "argument type=%d is not ARMCI_INT, _LONG, _LONG_LONG, _FLOAT or _DOUBLE",
              type);
}

static size_t type_size(int type)
{
    switch (type) {
    case ARMCI_INT:
        return sizeof(int);
    case ARMCI_LONG:
        return sizeof(long);
    case ARMCI_LONG_LONG:
        return sizeof(long long);
    case ARMCI_FLOAT:
        return sizeof(float);
    default:
        return sizeof(double);
    }
}

static const char *type_name(int type)
{
    return type == ARMCI_FLOAT ? "ARMCI_FLOAT" : "ARMCI_DOUBLE";
}

/*
 * True if op begins with word. Like strncmp(op, word, strlen(word)), it
 * stops at the first byte that differs; *seen grows to the number of bytes
 * of op read so far (known readable, for the error message).
 */
static bool op_is(const char *op, const char *word, size_t *seen)
{
    for (size_t i = 0; word[i]; i++) {
        if (i + 1 > *seen)
            *seen = i + 1;
        if (op[i] != word[i])
            return false;
    }
    return true;
}

enum gop {
    GOP_SUM,
    GOP_PROD,
    GOP_MAX,
    GOP_MIN,
    GOP_ABSMAX,
    GOP_ABSMIN,
    GOP_BOR,
    GOP_LAND,
    GOP_LOR,
    GOP_BAND
};

/*
 * GA's ARMCI's words in its order ("&&" before "&", "||" before "|"), so a
 * string is read exactly as far as GA's ARMCI and ARMCI-MPI read it, and
 * "maxmin..." or "absmax " select what they select there.
 */
static const struct {
    const char *word;
    enum gop op;
} gop_words[] = {
    {"+", GOP_SUM},         {"*", GOP_PROD},        {"max", GOP_MAX}, {"min", GOP_MIN},
    {"absmax", GOP_ABSMAX}, {"absmin", GOP_ABSMIN}, {"or", GOP_BOR},  {"&&", GOP_LAND},
    {"land", GOP_LAND},     {"||", GOP_LOR},        {"lor", GOP_LOR}, {"&", GOP_BAND},
    {"band", GOP_BAND},     {"|", GOP_BOR},         {"bor", GOP_BOR},
};

/* The MPI operation for op on type; *absolute: reduce magnitudes (absmax, absmin). */
static MPI_Op mpi_op(const char *call, const char *op, int type, bool *absolute)
{
    static const MPI_Op ops[] = {
        [GOP_SUM] = MPI_SUM,    [GOP_PROD] = MPI_PROD,  [GOP_MAX] = MPI_MAX, [GOP_MIN] = MPI_MIN,
        [GOP_ABSMAX] = MPI_MAX, [GOP_ABSMIN] = MPI_MIN, [GOP_BOR] = MPI_BOR, [GOP_LAND] = MPI_LAND,
        [GOP_LOR] = MPI_LOR,    [GOP_BAND] = MPI_BAND,
    };
    check_ptr(call, "op", op);
    size_t seen = 0;
    size_t i = 0;
    while (i < ARRAY_SIZE(gop_words) && !op_is(op, gop_words[i].word, &seen))
        i++;
    if (i == ARRAY_SIZE(gop_words)) {
        char shown[24];
        safe_prefix(op, seen, shown, sizeof(shown));
        armci_die(call,
                  "argument op=\"%s\" is not +, *, max, min, absmax, absmin, or, &&, land, ||, "
                  "lor, &, band, | or bor",
                  shown);
    }
    enum gop g = gop_words[i].op;
    bool integral = type == ARMCI_INT || type == ARMCI_LONG || type == ARMCI_LONG_LONG;
    /* Neither reference defines the bitwise and logical operators on floating types. */
    if (g >= GOP_BOR && !integral)
        armci_die(call, "argument op=\"%s\" is bitwise or logical: not defined for %s",
                  gop_words[i].word, type_name(type));
    *absolute = g == GOP_ABSMAX || g == GOP_ABSMIN;
#if ARMCI_MUTANT_IS(msg_op_ignored)
    return MPI_SUM;
#endif
    return ops[g];
}

/* absmax/absmin reduce |x|: replace the input by its magnitude first. */
static void make_abs(int type, void *x, int n)
{
    for (int i = 0; i < n; i++) {
        switch (type) {
        case ARMCI_INT:
            ((int *)x)[i] = abs(((int *)x)[i]);
            break;
        case ARMCI_LONG:
            ((long *)x)[i] = labs(((long *)x)[i]);
            break;
        case ARMCI_LONG_LONG:
            ((long long *)x)[i] = llabs(((long long *)x)[i]);
            break;
        case ARMCI_FLOAT:
            ((float *)x)[i] = fabsf(((float *)x)[i]);
            break;
        case ARMCI_DOUBLE:
            ((double *)x)[i] = fabs(((double *)x)[i]);
            break;
        }
    }
}

/* What an MPI reduction needs, derived from the armci_msg arguments (checked). */
struct reduction {
    MPI_Datatype type;
    MPI_Op op;
    MPI_Comm comm;
};

/* False when there is nothing to do here (n == 0, or not part of the scope). */
static bool reduction_begin(const char *call, int scope, void *x, int n, const char *op, int type,
                            const ARMCI_Group *group, struct reduction *r)
{
    check_nonneg(call, "n", n);
    r->type = mpi_type(call, type);
    bool absolute;
    r->op = mpi_op(call, op, type, &absolute);
    r->comm = message_scope_comm(call, scope, group);
    if (r->comm == MPI_COMM_NULL || n == 0)
        return false;
    check_local(call, "x", x);
    if (absolute)
        make_abs(type, x, n);
    return true;
}

static void gop_in(const char *call, int scope, void *x, int n, const char *op, int type,
                   const ARMCI_Group *group)
{
    struct reduction r;
    if (reduction_begin(call, scope, x, n, op, type, group, &r))
        MPI_Allreduce(MPI_IN_PLACE, x, n, r.type, r.op, r.comm);
}

void armci_msg_gop_scope(int scope, void *x, int n, char *op, int type)
{
    gop_in("armci_msg_gop_scope", scope, x, n, op, type, NULL);
}

void armci_msg_group_gop_scope(int scope, void *x, int n, char *op, int type, ARMCI_Group *group)
{
    check_ptr("armci_msg_group_gop_scope", "group", group);
    gop_in("armci_msg_group_gop_scope", scope, x, n, op, type, group);
}

#define GOP_FAMILY(suffix, T, ARMCI_T)                                           \
    void armci_msg_##suffix(T *x, int n, char *op)                               \
    {                                                                            \
        gop_in("armci_msg_" #suffix, SCOPE_ALL, x, n, op, ARMCI_T, NULL);        \
    }                                                                            \
    void armci_msg_group_##suffix(T *x, int n, char *op, ARMCI_Group *group)     \
    {                                                                            \
        check_ptr("armci_msg_group_" #suffix, "group", group);                   \
        gop_in("armci_msg_group_" #suffix, SCOPE_ALL, x, n, op, ARMCI_T, group); \
    }                                                                            \
    void armci_msg_clus_##suffix(T *x, int n, char *op)                          \
    {                                                                            \
        gop_in("armci_msg_clus_" #suffix, SCOPE_NODE, x, n, op, ARMCI_T, NULL);  \
    }

GOP_FAMILY(igop, int, ARMCI_INT)
GOP_FAMILY(lgop, long, ARMCI_LONG)
GOP_FAMILY(llgop, long long, ARMCI_LONG_LONG)
GOP_FAMILY(fgop, float, ARMCI_FLOAT)
GOP_FAMILY(dgop, double, ARMCI_DOUBLE)

/* armci_msg_reduce: like gop, but only the scope's first process gets the result. */
void armci_msg_reduce_scope(int scope, void *x, int n, char *op, int type)
{
    struct reduction r;
    if (!reduction_begin("armci_msg_reduce_scope", scope, x, n, op, type, NULL, &r))
        return;
    int me;
    MPI_Comm_rank(r.comm, &me);
    MPI_Reduce(me == 0 ? MPI_IN_PLACE : x, x, n, r.type, r.op, 0, r.comm);
}

void armci_msg_reduce(void *x, int n, char *op, int type)
{
    armci_msg_reduce_scope(SCOPE_ALL, x, n, op, type);
}

/*
 * armci_msg_sel: x is an n-byte record whose first field (of `type`) is the
 * key; the record with the smallest ("min") or largest ("max") key among the
 * processes that contribute is returned to everyone.
 */
struct sel_record {
    int contribute;
    int type;
    int max; /* 1: select the largest key */
    int pad;
    double data[]; /* the caller's n bytes */
};

static int sel_cmp(int type, const void *a, const void *b)
{
    switch (type) {
    case ARMCI_INT:
        return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
    case ARMCI_LONG:
        return (*(const long *)a > *(const long *)b) - (*(const long *)a < *(const long *)b);
    case ARMCI_LONG_LONG:
        return (*(const long long *)a > *(const long long *)b) -
               (*(const long long *)a < *(const long long *)b);
    case ARMCI_FLOAT:
        return (*(const float *)a > *(const float *)b) - (*(const float *)a < *(const float *)b);
    default:
        return (*(const double *)a > *(const double *)b) -
               (*(const double *)a < *(const double *)b);
    }
}

/* One record against another: b becomes a if a wins. */
static void sel_pick(const struct sel_record *a, struct sel_record *b, size_t size)
{
    if (!a->contribute)
        return;
    int c = b->contribute ? sel_cmp(a->type, a->data, b->data) : 0;
    if (!b->contribute || (a->max ? c > 0 : c < 0))
        memcpy(b, a, size);
}

/*
 * The MPI op: *len elements of *dt, each one whole record (armci_msg_sel reduces one element
 * of a contiguous type the size of a record). With MPI_BYTE elements MPI may hand the op
 * slices of a large buffer, and a slice's "header" would be data bytes.
 */
static void sel_combine(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int size;
    MPI_Type_size(*dt, &size);
    for (int i = 0; i < *len; i++)
        sel_pick((const struct sel_record *)((char *)in + (size_t)i * (size_t)size),
                 (struct sel_record *)((char *)inout + (size_t)i * (size_t)size), (size_t)size);
}

static MPI_Op sel_op = MPI_OP_NULL;

void message_init(void)
{
    MPI_Op_create(sel_combine, 1, &sel_op);
}

void message_fini(void)
{
    if (sel_op != MPI_OP_NULL)
        MPI_Op_free(&sel_op);
}

/* "min..." selects the smallest key, "max..." the largest: prefixes, as in both references. */
static bool sel_is_max(const char *call, const char *op)
{
    check_ptr(call, "op", op);
    size_t seen = 0;
    if (op_is(op, "min", &seen))
        return false;
    if (op_is(op, "max", &seen))
        return true;
    char shown[24];
    safe_prefix(op, seen, shown, sizeof(shown));
    armci_die(call, "argument op=\"%s\" is not \"min\" or \"max\"", shown);
}

void armci_msg_sel_scope(int scope, void *x, int n, char *op, int type, int contribute)
{
    static const char call[] = "armci_msg_sel_scope";
    check_nonneg(call, "n", n);
    mpi_type(call, type);
    bool max = sel_is_max(call, op);
    /* The key is read from the record: a shorter record would be read past its end. */
    if ((size_t)n < type_size(type))
        armci_die(call, "argument n=%d is smaller than the key type (%zu bytes)", n,
                  type_size(type));
    /* Record and header travel as one MPI element of an int-sized length. */
    if ((size_t)n > INT_MAX - sizeof(struct sel_record))
        armci_die(call, "argument n=%d is too large for one record", n);
    MPI_Comm comm = message_scope_comm(call, scope, NULL);
    if (comm == MPI_COMM_NULL)
        return;
    check_local(call, "x", x);

    size_t rec_size = sizeof(struct sel_record) + (size_t)n;
    struct sel_record *in = xcalloc(1, rec_size), *out = xcalloc(1, rec_size);
    *in = (struct sel_record){.contribute = contribute != 0, .type = type, .max = max};
    memcpy(in->data, x, (size_t)n);
    MPI_Datatype record;
    MPI_Type_contiguous((int)rec_size, MPI_BYTE, &record);
    MPI_Type_commit(&record);
    MPI_Allreduce(in, out, 1, record, sel_op, comm);
    MPI_Type_free(&record);
    if (out->contribute)
        memcpy(x, out->data, (size_t)n);
    free(in);
    free(out);
}

void armci_msg_sel(void *x, int n, char *op, int type, int contribute)
{
    armci_msg_sel_scope(SCOPE_ALL, x, n, op, type, contribute);
}
