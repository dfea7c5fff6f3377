/*
 * Behavioural compatibility with GA's ARMCI and ARMCI-MPI (see
 * docs/COMPATIBILITY.md): what real callers pass must work.
 *  - every reduction op word, for every type it is defined on, through every
 *    gop entry point and scope; Fortran-style op strings without a NUL (the
 *    word at the very end of a page followed by an inaccessible page, and
 *    longer strings such as "maxmin" compared as prefixes);
 *  - armci_msg_sel with prefix ops; SCOPE_MASTERS called by masters only;
 *    bintree, grp_clus_brdcst and exchange_address as in GA's ARMCI;
 *  - armci_domain_* with negative ("my node") ids and out-of-range ranks;
 *  - group handles on processes that are not members;
 *  - armci_write_strided packs and armci_read_strided unpacks, byte for byte;
 *  - zero-size and zero-count operations with NULL buffers, trailing
 *    count-1 levels with unused strides, overlapping and zero strides.
 * Runs on one node and across virtual nodes.
 */
#include <math.h>
#include <mpi.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "testutil.h"

static int me, nproc, my_node, nnodes;

/* ---- op strings ---- */

enum { OP_SUM, OP_PROD, OP_MAX, OP_MIN, OP_ABSMAX, OP_ABSMIN, OP_BOR, OP_LAND, OP_LOR, OP_BAND };

/* An op as callers spell it; len bytes, used without the NUL too. */
struct spelling {
    const char *text;
    int op;
};

static const struct spelling words[] = {
    {"+", OP_SUM},         {"*", OP_PROD},        {"max", OP_MAX}, {"min", OP_MIN},
    {"absmax", OP_ABSMAX}, {"absmin", OP_ABSMIN}, {"or", OP_BOR},  {"&&", OP_LAND},
    {"land", OP_LAND},     {"||", OP_LOR},        {"lor", OP_LOR}, {"&", OP_BAND},
    {"band", OP_BAND},     {"|", OP_BOR},         {"bor", OP_BOR},
};

/* Fortran character constants and padded strings: the leading word decides. */
static const struct spelling fortran_words[] = {
    {"maxmin", OP_MAX},  {"minmax", OP_MIN}, {"absmaxval", OP_ABSMAX}, {"absmin  ", OP_ABSMIN},
    {"+   ", OP_SUM},    {"**", OP_PROD},    {"orx", OP_BOR},          {"&&&", OP_LAND},
    {"land.", OP_LAND},  {"||=", OP_LOR},    {"lorry", OP_LOR},        {"&=", OP_BAND},
    {"bandit", OP_BAND}, {"|=", OP_BOR},     {"borg", OP_BOR},
};

static char *guard_page; /* one writable page followed by an inaccessible one */
static long page;

static void guard_init(void)
{
    page = sysconf(_SC_PAGESIZE);
    guard_page =
        mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(guard_page != MAP_FAILED, "mmap");
    CHECK(mprotect(guard_page + page, (size_t)page, PROT_NONE) == 0, "mprotect");
}

/* text without its NUL, ending exactly where the inaccessible page begins. */
static char *at_page_end(const char *text)
{
    size_t len = strlen(text);
    char *p = guard_page + page - len;
    memcpy(p, text, len);
    return p;
}

/* The references read "&" and "|" one byte further (to tell "&&" and "||" apart). */
static bool guard_safe(const char *text)
{
    return strlen(text) > 1 || (text[0] != '&' && text[0] != '|');
}

static bool bitwise_or_logical(int op)
{
    return op >= OP_BOR;
}

/* Rank r's i-th input; products use -1, 0 and 1 so every type stays exact. */
static long long input(int op, int r, int i)
{
    if (op == OP_PROD)
        return ((r + i) % 3) - 1;
    return ((r * 7 + i * 3) % 11) - 5;
}

static long long apply(int op, long long a, long long b)
{
    switch (op) {
    case OP_SUM:
        return a + b;
    case OP_PROD:
        return a * b;
    case OP_MAX:
        return a > b ? a : b;
    case OP_MIN:
        return a < b ? a : b;
    case OP_ABSMAX:
        return llabs(a) > llabs(b) ? llabs(a) : llabs(b);
    case OP_ABSMIN:
        return llabs(a) < llabs(b) ? llabs(a) : llabs(b);
    case OP_BOR:
        return a | b;
    case OP_LAND:
        return a && b;
    case OP_LOR:
        return a || b;
    default:
        return a & b;
    }
}

/* The reduction over ranks[k]: a single process keeps its input (absmax/absmin: magnitude). */
static long long expected(int op, const int *ranks, int k, int i)
{
    long long acc = input(op, ranks[0], i);
    if (k == 1)
        return op == OP_ABSMAX || op == OP_ABSMIN ? llabs(acc) : acc;
    for (int j = 1; j < k; j++)
        acc = apply(op, acc, input(op, ranks[j], i));
    return acc;
}

/* Ranks taking part in a scope of the world (SCOPE_MASTERS: the node masters). */
static int scope_ranks(int scope, int *ranks)
{
    int k = 0;
    for (int r = 0; r < nproc; r++) {
        int node = armci_domain_id(ARMCI_DOMAIN_SMP, r);
        bool in =
            scope == SCOPE_ALL || (scope == SCOPE_NODE && node == my_node) ||
            (scope == SCOPE_MASTERS && armci_domain_glob_proc_id(ARMCI_DOMAIN_SMP, node, 0) == r);
        if (in)
            ranks[k++] = r;
    }
    return k;
}

static bool i_am_master(void)
{
    return armci_domain_glob_proc_id(ARMCI_DOMAIN_SMP, my_node, 0) == me;
}

#define N 5

/* One type: every entry point of the gop family, checked against expected(). */
#define GOP_CHECKS(T, sfx, ARMCI_T)                                                             \
    static void fill_##sfx(T *x, int op)                                                        \
    {                                                                                           \
        for (int i = 0; i < N; i++)                                                             \
            x[i] = (T)input(op, me, i);                                                         \
    }                                                                                           \
    static void expect_##sfx(const T *x, int op, int scope, const char *what, const char *text) \
    {                                                                                           \
        int ranks[1024];                                                                        \
        int k = scope_ranks(scope, ranks);                                                      \
        for (int i = 0; i < N; i++)                                                             \
            CHECK(x[i] == (T)expected(op, ranks, k, i),                                         \
                  "%s " #T " op \"%s\" [%d]: got %g want %lld", what, text, i, (double)x[i],    \
                  expected(op, ranks, k, i));                                                   \
    }                                                                                           \
    static void gops_##sfx(char *op_str, const char *text, int op, bool all_entry_points)       \
    {                                                                                           \
        T x[N];                                                                                 \
        fill_##sfx(x, op);                                                                      \
        armci_msg_##sfx(x, N, op_str);                                                          \
        expect_##sfx(x, op, SCOPE_ALL, "armci_msg_" #sfx, text);                                \
        ARMCI_Group world;                                                                      \
        ARMCI_Group_get_world(&world);                                                          \
        fill_##sfx(x, op);                                                                      \
        armci_msg_group_##sfx(x, N, op_str, &world);                                            \
        expect_##sfx(x, op, SCOPE_ALL, "armci_msg_group_" #sfx, text);                          \
        if (!all_entry_points)                                                                  \
            return;                                                                             \
        fill_##sfx(x, op);                                                                      \
        armci_msg_gop_scope(SCOPE_ALL, x, N, op_str, ARMCI_T);                                  \
        expect_##sfx(x, op, SCOPE_ALL, "gop_scope(SCOPE_ALL)", text);                           \
        fill_##sfx(x, op);                                                                      \
        armci_msg_group_gop_scope(SCOPE_ALL, x, N, op_str, ARMCI_T, &world);                    \
        expect_##sfx(x, op, SCOPE_ALL, "group_gop_scope(SCOPE_ALL)", text);                     \
        fill_##sfx(x, op);                                                                      \
        armci_msg_clus_##sfx(x, N, op_str);                                                     \
        expect_##sfx(x, op, SCOPE_NODE, "armci_msg_clus_" #sfx, text);                          \
        fill_##sfx(x, op);                                                                      \
        armci_msg_gop_scope(SCOPE_NODE, x, N, op_str, ARMCI_T);                                 \
        expect_##sfx(x, op, SCOPE_NODE, "gop_scope(SCOPE_NODE)", text);                         \
        fill_##sfx(x, op);                                                                      \
        armci_msg_group_gop_scope(SCOPE_NODE, x, N, op_str, ARMCI_T, &world);                   \
        expect_##sfx(x, op, SCOPE_NODE, "group_gop_scope(SCOPE_NODE)", text);                   \
        /* Only masters call SCOPE_MASTERS (as GA does); a non-master's call is a no-op. */     \
        fill_##sfx(x, op);                                                                      \
        if (i_am_master()) {                                                                    \
            armci_msg_gop_scope(SCOPE_MASTERS, x, N, op_str, ARMCI_T);                          \
            expect_##sfx(x, op, SCOPE_MASTERS, "gop_scope(SCOPE_MASTERS)", text);               \
        } else {                                                                                \
            T y[N];                                                                             \
            memcpy(y, x, sizeof(y));                                                            \
            armci_msg_gop_scope(SCOPE_MASTERS, x, N, op_str, ARMCI_T);                          \
            CHECK(!memcmp(x, y, sizeof(y)), "non-master SCOPE_MASTERS changed x");              \
        }                                                                                       \
        fill_##sfx(x, op);                                                                      \
        armci_msg_reduce(x, N, op_str, ARMCI_T);                                                \
        if (me == 0)                                                                            \
            expect_##sfx(x, op, SCOPE_ALL, "armci_msg_reduce", text);                           \
        fill_##sfx(x, op);                                                                      \
        armci_msg_reduce_scope(SCOPE_NODE, x, N, op_str, ARMCI_T);                              \
        if (i_am_master())                                                                      \
            expect_##sfx(x, op, SCOPE_NODE, "armci_msg_reduce_scope(SCOPE_NODE)", text);        \
    }

GOP_CHECKS(int, igop, ARMCI_INT)
GOP_CHECKS(long, lgop, ARMCI_LONG)
GOP_CHECKS(long long, llgop, ARMCI_LONG_LONG)
GOP_CHECKS(float, fgop, ARMCI_FLOAT)
GOP_CHECKS(double, dgop, ARMCI_DOUBLE)

static void gops_all_types(char *op_str, const char *text, int op, bool all)
{
    gops_igop(op_str, text, op, all);
    gops_lgop(op_str, text, op, all);
    gops_llgop(op_str, text, op, all);
    if (bitwise_or_logical(op))
        return; /* not defined on floating types in either reference */
    gops_fgop(op_str, text, op, all);
    gops_dgop(op_str, text, op, all);
}

static void test_gop_ops(void)
{
    for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++) {
        char nul_terminated[16];
        strcpy(nul_terminated, words[w].text);
        gops_all_types(nul_terminated, words[w].text, words[w].op, true);
        if (guard_safe(words[w].text))
            gops_all_types(at_page_end(words[w].text), words[w].text, words[w].op, true);
    }
    for (size_t w = 0; w < sizeof(fortran_words) / sizeof(fortran_words[0]); w++)
        gops_all_types(at_page_end(fortran_words[w].text), fortran_words[w].text,
                       fortran_words[w].op, false);
}

/* ---- armci_msg_sel ---- */

struct rec {
    double key;
    int who;
};

static int sel_key(int r)
{
    return (r * 37) % 101; /* distinct for fewer than 101 processes, not ordered by rank */
}

static void check_sel(char *op_str, const char *text, bool max, int scope)
{
    int ranks[1024];
    int k = scope_ranks(scope, ranks);
    bool contribute = k == 1 || me % 3 != 2;
    struct rec x = {sel_key(me), me};
    armci_msg_sel_scope(scope, &x, sizeof(x), op_str, ARMCI_DOUBLE, contribute);
    int want = -1;
    for (int j = 0; j < k; j++) {
        int r = ranks[j];
        if (k > 1 && r % 3 == 2)
            continue;
        if (want < 0 || (max ? sel_key(r) > sel_key(want) : sel_key(r) < sel_key(want)))
            want = r;
    }
    CHECK(x.who == want && x.key == sel_key(want), "sel op \"%s\" scope %d chose %d, want %d", text,
          scope, x.who, want);
}

static void test_sel(void)
{
    const struct {
        const char *text;
        bool max;
    } ops[] = {{"max", true}, {"min", false}, {"maxminibincnt", true}, {"minmax", false}};
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        char nul_terminated[32];
        strcpy(nul_terminated, ops[i].text);
        check_sel(nul_terminated, ops[i].text, ops[i].max, SCOPE_ALL);
        check_sel(at_page_end(ops[i].text), ops[i].text, ops[i].max, SCOPE_ALL);
        check_sel(at_page_end(ops[i].text), ops[i].text, ops[i].max, SCOPE_NODE);
    }
    /* Nobody contributes: x stays as it was. */
    struct rec x = {42.5, -7};
    armci_msg_sel(&x, sizeof(x), at_page_end("max"), ARMCI_DOUBLE, 0);
    CHECK(x.key == 42.5 && x.who == -7, "sel without contributors changed x");
    /* SCOPE_MASTERS by masters only. */
    if (i_am_master())
        check_sel(at_page_end("max"), "max", true, SCOPE_MASTERS);
}

/* ---- scopes, bintree, broadcasts, address exchange ---- */

static void test_scopes(void)
{
    int root, up, left, right;
    int master0 = armci_domain_glob_proc_id(ARMCI_DOMAIN_SMP, 0, 0);
    armci_msg_bintree(SCOPE_MASTERS, &root, &up, &left, &right);
    CHECK(root == master0, "bintree(SCOPE_MASTERS) root %d want %d", root, master0);
    if (!i_am_master()) {
        CHECK(up == -1 && left == -1 && right == -1, "non-master is in the masters' tree");
    } else {
        int idx = my_node;
        int want_left =
            2 * idx + 1 < nnodes ? armci_domain_glob_proc_id(ARMCI_DOMAIN_SMP, 2 * idx + 1, 0) : -1;
        CHECK(left == want_left, "bintree(SCOPE_MASTERS) left %d want %d", left, want_left);
        CHECK((idx == 0) == (up == -1), "bintree(SCOPE_MASTERS) up %d", up);
    }
    armci_msg_bintree(SCOPE_NODE, &root, &up, &left, &right);
    CHECK(root == armci_domain_glob_proc_id(ARMCI_DOMAIN_SMP, my_node, 0), "bintree node root");
    /* Any other scope value is SCOPE_ALL there (a local query in both references). */
    armci_msg_bintree(7, &root, &up, &left, &right);
    CHECK(root == 0 && up == (me ? (me - 1) / 2 : -1), "bintree(7) is not SCOPE_ALL");

    /* Masters broadcast among themselves; the others do not call. */
    if (i_am_master()) {
        int v = me == master0 ? 4711 : 0;
        armci_msg_bcast_scope(SCOPE_MASTERS, &v, sizeof(v), master0);
        CHECK(v == 4711, "SCOPE_MASTERS bcast gave %d", v);
    }
    /* Zero-length broadcasts need no buffer. */
    armci_msg_bcast(NULL, 0, 0);
    armci_msg_brdcst(NULL, 0, nproc - 1);

    /* GA's grp_clus_brdcst: group ranks [master, master + n) get the master's buffer. */
    ARMCI_Group world;
    ARMCI_Group_get_world(&world);
    int first = armci_domain_glob_proc_id(ARMCI_DOMAIN_SMP, my_node, 0);
    int on_node = armci_domain_nprocs(ARMCI_DOMAIN_SMP, my_node);
    int b = me == first ? 1000 + first : -1;
    armci_grp_clus_brdcst(&b, sizeof(b), first, on_node, &world);
    CHECK(b == 1000 + first, "grp_clus_brdcst gave %d want %d", b, 1000 + first);

    /* exchange_address, n == nprocs: everyone's own entry, other entries need not be zero. */
    void **p = malloc(sizeof(void *) * (size_t)(nproc + 2));
    for (int r = 0; r < nproc; r++)
        p[r] = (void *)(uintptr_t)0xdead;
    p[me] = (void *)(uintptr_t)(0x1000 + me);
    armci_exchange_address(p, nproc);
    for (int r = 0; r < nproc; r++)
        CHECK(p[r] == (void *)(uintptr_t)(0x1000 + r), "exchange_address[%d]", r);
    /* Other n: GA's sum of the (zeroed) entries. */
    memset(p, 0, sizeof(void *) * (size_t)(nproc + 2));
    p[me] = (void *)(uintptr_t)(0x100 * (me + 1));
    p[nproc] = (void *)(uintptr_t)1;
    armci_exchange_address_grp(p, nproc + 2, &world);
    for (int r = 0; r < nproc; r++)
        CHECK(p[r] == (void *)(uintptr_t)(0x100 * (r + 1)), "exchange_address_grp sum [%d]", r);
    CHECK(p[nproc] == (void *)(uintptr_t)nproc && p[nproc + 1] == NULL, "exchange sum tail");
    free(p);
}

/* ---- domains ---- */

static void test_domains(void)
{
    CHECK(armci_domain_nprocs(ARMCI_DOMAIN_SMP, -1) ==
              armci_domain_nprocs(ARMCI_DOMAIN_SMP, my_node),
          "nprocs(-1) is not my node's");
    CHECK(armci_domain_nprocs(ARMCI_DOMAIN_SMP, -5) ==
              armci_domain_nprocs(ARMCI_DOMAIN_SMP, my_node),
          "nprocs(-5) is not my node's");
    CHECK(armci_domain_glob_proc_id(ARMCI_DOMAIN_SMP, -1, 0) ==
              armci_domain_glob_proc_id(ARMCI_DOMAIN_SMP, my_node, 0),
          "glob_proc_id(-1, 0) is not my node's");
    CHECK(!ARMCI_Same_node(-1) && !ARMCI_Same_node(nproc) && !ARMCI_Same_node(1 << 30),
          "ARMCI_Same_node of an out-of-range rank");
    CHECK(!armci_domain_same_id(ARMCI_DOMAIN_SMP, -1) &&
              !armci_domain_same_id(ARMCI_DOMAIN_SMP, nproc),
          "armci_domain_same_id of an out-of-range rank");
    CHECK(ARMCI_Same_node(me) && armci_domain_same_id(ARMCI_DOMAIN_SMP, me), "not on my own node");
    /* The domain argument is not looked at (SMP is the only domain). */
    armci_domain_t other = (armci_domain_t)3;
    CHECK(armci_domain_count(other) == nnodes && armci_domain_my_id(other) == my_node &&
              armci_domain_id(other, me) == my_node,
          "a domain value other than ARMCI_DOMAIN_SMP");
    int total = 0;
    for (int n = 0; n < nnodes; n++)
        total += armci_domain_nprocs(ARMCI_DOMAIN_SMP, n);
    CHECK(total == nproc, "node sizes add up to %d, not %d", total, nproc);
}

/* ---- groups ---- */

static void test_groups(void)
{
    /* Even ranks; odd ranks get a handle to a group they are not in. */
    int n_even = (nproc + 1) / 2;
    int *pids = malloc(sizeof(int) * (size_t)n_even);
    for (int i = 0; i < n_even; i++)
        pids[i] = 2 * i;
    ARMCI_Group g;
    ARMCI_Group_create(n_even, pids, &g);
    int size = -5, rank = -5;
    int rc = ARMCI_Group_rank(&g, &rank);
    ARMCI_Group_size(&g, &size);
    if (me % 2) {
        CHECK(size == 0 && rank == -1 && rc != 0,
              "non-member: size %d rank %d rc %d (want 0, -1, non-zero as ARMCI-MPI)", size, rank,
              rc);
    } else {
        CHECK(size == n_even && rank == me / 2 && rc == 0, "member: size %d rank %d rc %d", size,
              rank, rc);
    }
    for (int i = 0; i < n_even; i++)
        CHECK(ARMCI_Absolute_id(&g, i) == pids[i], "Absolute_id(%d) = %d, want %d", i,
              ARMCI_Absolute_id(&g, i), pids[i]);

    /* Group scopes: node members, and node masters (only they call). */
    if (me % 2 == 0) {
        int one = 1, members_here = 0, first_here = -1;
        for (int i = 0; i < n_even; i++) {
            if (armci_domain_id(ARMCI_DOMAIN_SMP, pids[i]) != my_node)
                continue;
            members_here++;
            if (first_here < 0)
                first_here = pids[i];
        }
        armci_msg_group_gop_scope(SCOPE_NODE, &one, 1, "+", ARMCI_INT, &g);
        CHECK(one == members_here, "group SCOPE_NODE sum %d want %d", one, members_here);
        if (me == first_here) {
            int nodes_with_members = 0;
            for (int n = 0; n < nnodes; n++)
                for (int i = 0; i < n_even; i++)
                    if (armci_domain_id(ARMCI_DOMAIN_SMP, pids[i]) == n) {
                        nodes_with_members++;
                        break;
                    }
            int m = 1;
            armci_msg_group_gop_scope(SCOPE_MASTERS, &m, 1, at_page_end("+"), ARMCI_INT, &g);
            CHECK(m == nodes_with_members, "group SCOPE_MASTERS sum %d want %d", m,
                  nodes_with_members);
        }
        armci_msg_group_barrier(&g);
    }

    /*
     * A non-member handle may become the default and come back; meanwhile
     * ARMCI_Malloc and ARMCI_Free still span the world, as in both references.
     */
    ARMCI_Group world, dflt;
    ARMCI_Group_get_world(&world);
    ARMCI_Group_set_default(&g);
    ARMCI_Group_get_default(&dflt);
    CHECK(dflt.size == g.size && dflt.rank == g.rank, "get_default after set_default");
    void **all = malloc(sizeof(void *) * (size_t)nproc);
    ARMCI_Malloc(all, 64);
    for (int r = 0; r < nproc; r++)
        CHECK(all[r] != NULL, "ARMCI_Malloc under a group default left process %d out", r);
    ARMCI_PutValueInt(me, (int *)all[(me + 1) % nproc] + 1, (me + 1) % nproc);
    ARMCI_Barrier();
    CHECK(((int *)all[me])[1] == (me + nproc - 1) % nproc, "put into a world block");
    ARMCI_Free(all[me]);
    free(all);
    ARMCI_Group_set_default(&world);
    ARMCI_Group_free(&g);

    /* An empty group: everyone is outside. */
    ARMCI_Group e;
    ARMCI_Group_create(0, NULL, &e);
    rc = ARMCI_Group_rank(&e, &rank);
    ARMCI_Group_size(&e, &size);
    CHECK(size == 0 && rank == -1 && rc != 0, "empty group: size %d rank %d rc %d", size, rank, rc);
    ARMCI_Group_free(&e);
    free(pids);
    armci_msg_barrier();
}

/* ---- armci_write_strided / armci_read_strided ---- */

static void test_local_strided(void)
{
    unsigned char region[4 * 8], buf[64], orig[sizeof(region)];
    for (size_t i = 0; i < sizeof(region); i++)
        region[i] = orig[i] = (unsigned char)(i * 7 + 1);
    memset(buf, 0xee, sizeof(buf));
    int stride[2] = {8, 16}, count[3] = {5, 3, 0};

    /* write_strided packs ptr's region into buf: 3 rows of 5 bytes, 8 apart. */
    armci_write_strided(region, 1, stride, count, (char *)buf);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 5; c++)
            CHECK(buf[r * 5 + c] == region[r * 8 + c], "write_strided buf[%d]", r * 5 + c);
    CHECK(buf[15] == 0xee, "write_strided wrote past the packed image");
    CHECK(!memcmp(region, orig, sizeof(region)), "write_strided changed the strided region");

    /* read_strided unpacks buf into ptr's region and touches nothing else. */
    for (int i = 0; i < 15; i++)
        buf[i] = (unsigned char)(200 + i);
    armci_read_strided(region, 1, stride, count, (char *)buf);
    for (int i = 0; i < (int)sizeof(region); i++) {
        int r = i / 8, c = i % 8;
        unsigned char want = r < 3 && c < 5 ? (unsigned char)(200 + r * 5 + c) : orig[i];
        CHECK(region[i] == want, "read_strided region[%d] = %d want %d", i, region[i], want);
    }

    /* Two levels: 2 blocks (16 apart) of 2 rows (8 apart) of 3 bytes. */
    int count2[3] = {3, 2, 2};
    unsigned char packed[12];
    memcpy(region, orig, sizeof(region));
    armci_write_strided(region, 2, stride, count2, (char *)packed);
    for (int b = 0, k = 0; b < 2; b++)
        for (int r = 0; r < 2; r++)
            for (int c = 0; c < 3; c++, k++)
                CHECK(packed[k] == orig[b * 16 + r * 8 + c], "2-level write_strided [%d]", k);

    /* A zero count moves nothing: the buffers are not even looked at. */
    armci_write_strided(NULL, 2, stride, count, NULL);
    armci_read_strided(NULL, 2, stride, count, NULL);
    /* A trailing level of count 1 is not stepped: its stride does not matter. */
    int one_row[2] = {6, 1}, unused[1] = {-1};
    memset(buf, 0, sizeof(buf));
    armci_write_strided(orig, 1, unused, one_row, (char *)buf);
    CHECK(!memcmp(buf, orig, 6) && buf[6] == 0, "count-1 level with an unused stride");
}

/* ---- one-sided operations: zero sizes, NULL buffers, odd strides ---- */

#define SLICE 256

static void test_rma(void)
{
    void **seg = malloc(sizeof(void *) * (size_t)nproc);
    ARMCI_Malloc(seg, (armci_size_t)SLICE * nproc);
    unsigned char *mine = seg[me];
    for (int i = 0; i < SLICE * nproc; i++)
        mine[i] = (unsigned char)(i ^ me);
    ARMCI_Barrier();

    /* A target on my node and one on another node when there is one. */
    int far = (me + (nproc + 1) / 2) % nproc;
    int targets[2] = {me, far};
    for (int k = 0; k < 2; k++) {
        int t = targets[k];
        unsigned char *dst = (unsigned char *)seg[t] + SLICE * me; /* my slice at t */
        armci_hdl_t h;
        ARMCI_INIT_HANDLE(&h);
        CHECK(ARMCI_Put(NULL, dst, 0, t) == 0, "zero-size Put");
        CHECK(ARMCI_Get(dst, NULL, 0, t) == 0, "zero-size Get");
        CHECK(ARMCI_Acc(ARMCI_ACC_INT, NULL, NULL, dst, 0, t) == 0, "zero-size Acc");
        CHECK(ARMCI_NbPut(NULL, dst, 0, t, &h) == 0, "zero-size NbPut");
        CHECK(ARMCI_NbGet(dst, NULL, 0, t, &h) == 0, "zero-size NbGet");
        CHECK(ARMCI_NbAcc(ARMCI_ACC_DBL, NULL, NULL, dst, 0, t, &h) == 0, "zero-size NbAcc");
        ARMCI_Wait(&h);
        int zero[2] = {8, 0}, stride[1] = {8};
        CHECK(ARMCI_PutS(NULL, stride, dst, stride, zero, 1, t) == 0, "zero-count PutS");
        CHECK(ARMCI_GetS(dst, stride, NULL, stride, zero, 1, t) == 0, "zero-count GetS");
        CHECK(ARMCI_AccS(ARMCI_ACC_INT, NULL, NULL, NULL, dst, NULL, (int[]){0}, 0, t) == 0,
              "zero-count AccS");
        CHECK(ARMCI_NbGetS(dst, stride, NULL, stride, zero, 1, t, NULL) == 0, "zero-count NbGetS");
        armci_giov_t empty[3] = {
            {NULL, NULL, 8, 0},
            {NULL, NULL, 0, 3},
            {NULL, NULL, 0, 0},
        };
        CHECK(ARMCI_PutV(NULL, 0, t) == 0 && ARMCI_GetV(empty, 3, t) == 0 &&
                  ARMCI_AccV(ARMCI_ACC_INT, NULL, empty, 3, t) == 0 &&
                  ARMCI_NbPutV(empty, 3, t, NULL) == 0,
              "empty vectors");

        /* Fortran ld=1 on a one-column patch: count {16, 1}, stride 8 < 16, never stepped. */
        int col[2] = {16, 1}, ld1[1] = {8};
        unsigned char out[16], back[16];
        for (int i = 0; i < 16; i++)
            out[i] = (unsigned char)(100 + i + k);
        CHECK(ARMCI_PutS(out, ld1, dst, ld1, col, 1, t) == 0, "PutS count-1 level");
        ARMCI_Fence(t);
        CHECK(ARMCI_GetS(dst, ld1, back, ld1, col, 1, t) == 0, "GetS count-1 level");
        CHECK(!memcmp(out, back, 16), "count-1 level round trip (target %d)", t);
        int ints[4] = {1, 2, 3, 4}, two = 2, icol[2] = {16, 1};
        ARMCI_AccS(ARMCI_ACC_INT, &two, ints, ld1, dst, ld1, icol, 1, t);
        ARMCI_Fence(t);
        int got[4];
        ARMCI_Get(dst, got, 16, t);
        for (int i = 0; i < 4; i++) {
            int before;
            memcpy(&before, out + 4 * i, sizeof(int));
            CHECK(got[i] == before + 2 * ints[i], "AccS count-1 level [%d]", i);
        }

        /* Overlapping source chunks (stride 4 < 8 bytes) and a zero stride: as GA's ARMCI. */
        unsigned char pattern[32];
        for (int i = 0; i < 32; i++)
            pattern[i] = (unsigned char)(7 * i + k);
        ARMCI_Put(pattern, dst, 32, t);
        ARMCI_Fence(t);
        unsigned char windows[24], repeated[24];
        int win_count[2] = {8, 3};
        ARMCI_GetS(dst, (int[]){4}, windows, (int[]){8}, win_count, 1, t);
        ARMCI_GetS(dst, (int[]){0}, repeated, (int[]){8}, win_count, 1, t);
        for (int j = 0; j < 3; j++)
            for (int c = 0; c < 8; c++) {
                CHECK(windows[j * 8 + c] == pattern[j * 4 + c], "overlapping GetS [%d]", j * 8 + c);
                CHECK(repeated[j * 8 + c] == pattern[c], "zero-stride GetS [%d]", j * 8 + c);
            }
    }
    CHECK(ARMCI_Free_local(NULL) == 0, "ARMCI_Free_local(NULL)");
    ARMCI_Copy(NULL, NULL, 0);
    ARMCI_Barrier();
    ARMCI_Free(seg[me]);
    free(seg);
}

/* ---- the rest of the API, for its effect ---- */

static void test_misc(void)
{
    int next = (me + 1) % nproc, prev = (me + nproc - 1) % nproc;
    CHECK(ARMCI_Initialized(), "ARMCI_Initialized after init");
    CHECK(ARMCI_Uses_shm() == 0, "ARMCI_Uses_shm answers 0, as ARMCI-MPI");
    ARMCI_Group world;
    ARMCI_Group_get_world(&world);
    CHECK(ARMCI_Uses_shm_grp(&world) == 0, "ARMCI_Uses_shm_grp answers 0");
    ARMCI_Set_shm_limit(1UL << 20); /* ignored */

    /* Memory devices are host memory; the device name is not looked at. */
    void **a = malloc(sizeof(void *) * (size_t)nproc), **b = malloc(sizeof(void *) * (size_t)nproc);
    ARMCI_Malloc_memdev(a, 64, "DDR");
    ARMCI_Malloc_group_memdev(b, 64, &world, NULL);
    ARMCI_Access_begin(a[me]);
    ((double *)a[me])[0] = 0;
    ARMCI_Access_end(a[me]);
    ARMCI_Barrier();

    /* Scalar puts and gets of every type, blocking and not. */
    armci_hdl_t h;
    ARMCI_INIT_HANDLE(&h);
    CHECK(ARMCI_Test(&h) == 0, "ARMCI_Test of an unused handle: complete");
    ARMCI_PutValueFloat(1.5f + (float)me, (float *)b[next] + 1, next);
    ARMCI_PutValueDouble(2.5 + me, (double *)b[next] + 1, next);
    ARMCI_NbPutValueInt(10 + me, (int *)a[next] + 4, next, &h);
    ARMCI_NbPutValueLong(20L + me, (long *)a[next] + 3, next, &h);
    ARMCI_NbPutValueFloat(30.5f + (float)me, (float *)a[next] + 5, next, NULL);
    ARMCI_NbPutValueDouble(40.5 + me, (double *)a[next] + 4, next, &h);
    while (ARMCI_Test(&h))
        ;
    ARMCI_WaitProc(next);
    ARMCI_Fence(next);
    ARMCI_Barrier();
    CHECK(ARMCI_GetValueFloat((float *)b[me] + 1, me) == 1.5f + (float)prev, "PutValueFloat");
    CHECK(ARMCI_GetValueDouble((double *)b[me] + 1, me) == 2.5 + prev, "PutValueDouble");
    CHECK(ARMCI_GetValueInt((int *)a[me] + 4, me) == 10 + prev, "NbPutValueInt");
    CHECK(ARMCI_GetValueLong((long *)a[me] + 3, me) == 20L + prev, "NbPutValueLong");
    CHECK(ARMCI_GetValueFloat((float *)a[me] + 5, me) == 30.5f + (float)prev, "NbPutValueFloat");
    CHECK(ARMCI_GetValueDouble((double *)a[me] + 4, me) == 40.5 + prev, "NbPutValueDouble");

    /* Non-blocking vectors, and the profiling names. */
    double one = 1, v[2] = {7, 8}, w[2] = {0, 0};
    void *src[2] = {&v[0], &v[1]}, *dst[2] = {(double *)b[next] + 2, (double *)b[next] + 3};
    armci_giov_t iov = {src, dst, sizeof(double), 2};
    ARMCI_NbPutV(&iov, 1, next, &h);
    ARMCI_Wait(&h);
    ARMCI_NbAccV(ARMCI_ACC_DBL, &one, &iov, 1, next, &h);
    ARMCI_Wait(&h);
    ARMCI_Barrier();
    void *from[2] = {(double *)b[me] + 2, (double *)b[me] + 3}, *to[2] = {&w[0], &w[1]};
    armci_giov_t back = {from, to, sizeof(double), 2};
    ARMCI_NbGetV(&back, 1, me, &h);
    ARMCI_Wait(&h);
    CHECK(w[0] == 14 && w[1] == 16, "NbPutV + NbAccV + NbGetV gave %g %g", w[0], w[1]);
    double p = 0;
    PARMCI_Put(&v[1], (double *)a[next] + 6, sizeof(double), next);
    PARMCI_AllFence();
    parmci_msg_barrier();
    PARMCI_Get((double *)a[me] + 6, &p, sizeof(double), me);
    CHECK(p == 8, "PARMCI_Put/Get gave %g", p);

    /* Group made from an explicit parent (the world). */
    ARMCI_Group child;
    int last = nproc - 1;
    ARMCI_Group_create_child(1, &last, &child, &world);
    CHECK(ARMCI_Absolute_id(&child, 0) == last, "Group_create_child under the world");
    ARMCI_Group_free(&child);

    /* Receive from anyone: a ring. */
    int token = me, got = -1, len = 0;
    if (nproc > 1) {
        if (me % 2 == 0) {
            armci_msg_snd(5, &token, sizeof(token), next);
            CHECK(armci_msg_rcvany(5, &got, sizeof(got), &len) == prev, "rcvany source");
        } else {
            CHECK(armci_msg_rcvany(5, &got, sizeof(got), NULL) == prev, "rcvany source");
            armci_msg_snd(5, &token, sizeof(token), next);
        }
        CHECK(got == prev, "rcvany got %d", got);
    }
    int bval = me == last ? 99 : 0;
    armci_msg_group_bcast_scope(SCOPE_ALL, &bval, sizeof(bval), last, &world);
    CHECK(bval == 99, "group bcast from the last rank");

    ARMCI_Barrier();
    ARMCI_Free_memdev(a[me]);
    ARMCI_Free_group(b[me], &world);
    free(a);
    free(b);
}

/* Usage: test_compat [thread | comm]: how ARMCI is initialised. */
int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "args";
    CHECK(!ARMCI_Initialized(), "ARMCI_Initialized before init");
    if (!strcmp(how, "thread")) {
        ARMCI_Init_thread(MPI_THREAD_FUNNELED);
    } else if (!strcmp(how, "comm")) {
        MPI_Init(&argc, &argv);
        ARMCI_Init_thread_comm(MPI_THREAD_SINGLE, MPI_COMM_WORLD);
    } else {
        ARMCI_Init_args(&argc, &argv);
    }
    CHECK(ARMCI_Init() == 0, "a second ARMCI_Init returns 0");
    me = armci_msg_me();
    nproc = armci_msg_nproc();
    my_node = armci_domain_my_id(ARMCI_DOMAIN_SMP);
    nnodes = armci_domain_count(ARMCI_DOMAIN_SMP);
    guard_init();
    test_domains();
    test_gop_ops();
    test_sel();
    test_scopes();
    test_groups();
    test_local_strided();
    test_rma();
    test_misc();
    TEST_DONE();
    ARMCI_Cleanup(); /* nothing to clean: shared memory is unlinked once mapped */
    ARMCI_Finalize();
    CHECK(!ARMCI_Initialized() && ARMCI_Finalize() == 0, "after ARMCI_Finalize");
    if (!strcmp(how, "comm"))
        MPI_Finalize();
    return 0;
}
