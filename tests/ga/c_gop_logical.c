/*
 * GA suite, C: the integer-only reduction ops, and op strings that are not
 * NUL-terminated.
 *
 * GA hands the op string of GA_Igop/GA_Lgop/GA_Llgop to ARMCI unchanged, and
 * the ARMCIs GA ships with accept the logical ops "&&"/"land" and "||"/"lor"
 * (result 0 or 1) and the bitwise "band", "bor" and "or" on integers. Each
 * is checked for int, long and long long against a locally computed result,
 * with inputs chosen so that every outcome occurs at 1, 2 and 4 processes.
 * Second part: GA's Fortran wrappers pass the caller's CHARACTER argument
 * as is, so the op arrives without a terminating NUL and followed by
 * whatever comes next in memory ("maxmin+*..."); ARMCI must look only at
 * the op's own characters. The C program builds such strings by pointing
 * into one packed array without NULs and reduces with every op
 * (GA_Igop/GA_Dgop/GA_Lgop).
 */
#include "gacheck.h"

#include <string.h>

#define NV 12

/* 0/1 inputs: k % 4 == 0 all ones, 1 all zeros, 2 only rank 0, 3 all but rank 0 */
static long truth(int r, int k)
{
    switch (k % 4) {
    case 0:
        return 1;
    case 1:
        return 0;
    case 2:
        return r == 0;
    default:
        return r != 0;
    }
}

/* bit patterns: one rank-dependent bit, bits shared by all, a high bit for long */
static long bits(int r, int k, int wide)
{
    long v = (1L << ((r + k) % 6)) | ((long)k & 0x30) | 0x40;
    if (wide)
        v |= 1L << (40 + (r + k) % 3);
    return v;
}

enum { LAND, LOR, BAND, BOR };

static long expected(int kind, int k, int wide)
{
    long acc = 0;
    for (int r = 0; r < gat_nproc; r++) {
        long t = truth(r, k), b = bits(r, k, wide);
        switch (kind) {
        case LAND:
            acc = r == 0 ? t : (acc && t);
            break;
        case LOR:
            acc = r == 0 ? t : (acc || t);
            break;
        case BAND:
            acc = r == 0 ? b : (acc & b);
            break;
        default:
            acc = r == 0 ? b : (acc | b);
        }
    }
    return acc;
}

static const struct {
    const char *op;
    int kind;
} logical_ops[] = {{"&&", LAND},   {"land", LAND}, {"||", LOR}, {"lor", LOR},
                   {"band", BAND}, {"bor", BOR},   {"or", BOR}};

static void test_logical(void)
{
    for (size_t o = 0; o < sizeof(logical_ops) / sizeof(logical_ops[0]); o++) {
        const char *op = logical_ops[o].op;
        int kind = logical_ops[o].kind, bitwise = kind == BAND || kind == BOR;
        int xi[NV];
        long xl[NV];
        long long xll[NV];
        for (int k = 0; k < NV; k++) {
            xi[k] = (int)(bitwise ? bits(gat_me, k, 0) : truth(gat_me, k));
            xl[k] = bitwise ? bits(gat_me, k, 1) : truth(gat_me, k);
            xll[k] = xl[k];
        }
        GA_Igop(xi, NV, (char *)op);
        GA_Lgop(xl, NV, (char *)op);
        GA_Llgop(xll, NV, (char *)op);
        for (int k = 0; k < NV; k++) {
            long ei = expected(kind, k, 0), el = expected(kind, k, 1);
            EXPECT(xi[k] == ei, "GA_Igop \"%s\" [%d] = %d, expected %ld", op, k, xi[k], ei);
            EXPECT(xl[k] == el, "GA_Lgop \"%s\" [%d] = %ld, expected %ld", op, k, xl[k], el);
            EXPECT(xll[k] == el, "GA_Llgop \"%s\" [%d] = %lld, expected %ld", op, k, xll[k], el);
        }
    }
}

/*
 * The ops packed without separators or terminator, like consecutive Fortran
 * CHARACTER constants: each op is a pointer into this array.
 */
static const char packed[] = {'m', 'a', 'x', 'm', 'i', 'n', '+', '*', 'a', 'b',
                              's', 'm', 'a', 'x', 'a', 'b', 's', 'm', 'i', 'n',
                              '&', '&', '|', '|', 'o', 'r', 'm', 'a', 'x', 'x'};
/* offset in packed[], op name (for messages), 0: arithmetic, 1: logical */
static const struct {
    int off;
    const char *name;
} unterminated[] = {{0, "max"}, {3, "min"}, {6, "+"}, {7, "*"}, {8, "absmax"}, {14, "absmin"}};
static const struct {
    int off;
    const char *name;
} unterminated_int[] = {{20, "&&"}, {22, "||"}, {24, "or"}};

static long arith(const char *name, long acc, long v, int first)
{
    if (!strcmp(name, "absmax") || !strcmp(name, "absmin")) {
        v = v < 0 ? -v : v;
        if (first)
            return v;
        return name[3] == 'm' && name[4] == 'a' ? (v > acc ? v : acc) : (v < acc ? v : acc);
    }
    if (first)
        return v;
    if (!strcmp(name, "+"))
        return acc + v;
    if (!strcmp(name, "*"))
        return acc * v;
    if (!strcmp(name, "max"))
        return v > acc ? v : acc;
    return v < acc ? v : acc;
}

static long small_value(int r, int k)
{
    static const long f[] = {-2, 1, -1, 2, 1};
    return f[(r * 2 + k) % 5];
}

static void test_unterminated(void)
{
    for (size_t o = 0; o < sizeof(unterminated) / sizeof(unterminated[0]); o++) {
        char *op = (char *)packed + unterminated[o].off;
        const char *name = unterminated[o].name;
        int xi[NV];
        double xd[NV];
        long xl[NV];
        for (int k = 0; k < NV; k++) {
            xi[k] = (int)small_value(gat_me, k);
            xd[k] = (double)small_value(gat_me, k);
            xl[k] = small_value(gat_me, k);
        }
        GA_Igop(xi, NV, op);
        GA_Dgop(xd, NV, op);
        GA_Lgop(xl, NV, op);
        for (int k = 0; k < NV; k++) {
            long e = 0;
            for (int r = 0; r < gat_nproc; r++)
                e = arith(name, e, small_value(r, k), r == 0);
            EXPECT(xi[k] == e, "GA_Igop unterminated \"%s\" [%d] = %d, expected %ld", name, k,
                   xi[k], e);
            EXPECT(xd[k] == (double)e, "GA_Dgop unterminated \"%s\" [%d] = %g, expected %ld", name,
                   k, xd[k], e);
            EXPECT(xl[k] == e, "GA_Lgop unterminated \"%s\" [%d] = %ld, expected %ld", name, k,
                   xl[k], e);
        }
    }
    for (size_t o = 0; o < sizeof(unterminated_int) / sizeof(unterminated_int[0]); o++) {
        char *op = (char *)packed + unterminated_int[o].off;
        const char *name = unterminated_int[o].name;
        int kind = !strcmp(name, "&&") ? LAND : !strcmp(name, "||") ? LOR : BOR;
        long xl[NV];
        for (int k = 0; k < NV; k++)
            xl[k] = kind == BOR ? bits(gat_me, k, 1) : truth(gat_me, k);
        GA_Lgop(xl, NV, op);
        for (int k = 0; k < NV; k++) {
            long e = expected(kind, k, 1);
            EXPECT(xl[k] == e, "GA_Lgop unterminated \"%s\" [%d] = %ld, expected %ld", name, k,
                   xl[k], e);
        }
    }
}

int main(int argc, char **argv)
{
    gat_init(&argc, &argv);
    test_logical();
    test_unterminated();
    return gat_finish("c_gop_logical");
}
