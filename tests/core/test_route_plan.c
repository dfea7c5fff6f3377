/*
 * The route choice as a plain function (transport/route.h plan_box), over
 * the shapes bench/strided.c measures: N x N patches of doubles, N = 4 ...
 * 1024 (rows of 8N bytes), the local side packed and registered, the remote
 * side strided. No job: the facts a connection would give are made up
 * (a QP of 32 gather entries each side, the default buffer sizes).
 *
 * Checked: what must hold for every shape (accumulates always go to the
 * server; contiguous transfers and rows of a request or more by RDMA;
 * pieces fit a request or the piece cap; ARMCI_STRIDED_THRESHOLD=0 means
 * all RDMA), and a few choices of the cost model worked out by hand in the
 * comments below, on softib's constants and on an HCA's. Also the hybrid UD
 * path's choice (route_via_datagram): what goes as datagrams, cut or not.
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/config.h"
#include "wire/protocol.h"
#include "transport/pieces.h"
#include "transport/route.h"
#include "transport/transfer_desc.h"

#include <armci.h>

#define LD     (2 * 1024 * (int)sizeof(double)) /* the benchmark's remote leading dimension */
#define GATHER 32                               /* RC_QP_MAX_SGE, what softib grants */

static int failures;

#define CHECK(cond, ...)                                \
    do {                                                \
        if (!(cond)) {                                  \
            printf("FAIL %s:%d: ", __FILE__, __LINE__); \
            printf(__VA_ARGS__);                        \
            printf("\n");                               \
            failures++;                                 \
        }                                               \
    } while (0)

static const char *const path_names[] = {[BOX_RDMA] = "rdma",
                                         [BOX_SERVER_PUT] = "server-put",
                                         [BOX_SERVER_PULL] = "server-pull",
                                         [BOX_SERVER_GET] = "server-get"};
static const char *const op_names[] = {
    [TRANSFER_PUT] = "puts", [TRANSFER_GET] = "gets", [TRANSFER_ACC] = "accs"};

/* The facts of the benchmark's local buffer (ARMCI_Malloc_local: registered, one run). */
static struct box_facts bench_facts(void)
{
    return (struct box_facts){.request_room = 65536 - sizeof(struct ds_message),
                              .send_room = 8192 - sizeof(struct ds_message),
                              .bounce_size = 65536,
                              .max_sge = GATHER,
                              .server_gather = GATHER,
                              .registered = true,
                              .direct = true};
}

/* An N x N patch of doubles as the benchmark moves it (levels 1; put-contig: levels 0). */
struct patch {
    int count[2];
    int local_stride[1];
    int remote_stride[1];
    struct transfer x;
};

static void patch_init(struct patch *p, enum transfer_op op, int n, bool contiguous)
{
    static const double one = 1.0;
    p->count[0] = n * (int)sizeof(double);
    p->count[1] = n;
    p->local_stride[0] = n * (int)sizeof(double);
    p->remote_stride[0] = LD;
    bool get = op == TRANSFER_GET;
    p->x = (struct transfer){.op = op,
                             .datatype = ARMCI_ACC_DBL,
                             .scale = &one,
                             .d = {1, p->count, get ? p->remote_stride : p->local_stride,
                                   get ? p->local_stride : p->remote_stride}};
    if (contiguous) {
        p->count[0] = n * n * (int)sizeof(double);
        p->x.d = (struct stride_desc){0, p->count, NULL, NULL};
    }
}

static size_t total_bytes(const struct transfer *x)
{
    return (size_t)x->d.count[0] * (x->d.levels ? (size_t)x->d.count[1] : 1);
}

/* What holds whichever device: the rules around the cost model, and pieces that cover x. */
static void check_invariants(const struct transfer *x, const struct box_facts *f, int n)
{
    struct box_plan p = plan_box(x, f);
    const char *op = op_names[x->op];
    size_t row = (size_t)x->d.count[0];
    if (x->op == TRANSFER_ACC) {
        CHECK(p.path == BOX_SERVER_PUT, "%s n=%d: an accumulate took %s", op, n,
              path_names[p.path]);
        CHECK(p.server.max_bytes % sizeof(double) == 0, "%s n=%d: a piece splits a double", op, n);
    }
    if (x->op != TRANSFER_ACC && (x->d.levels == 0 || row > f->request_room))
        CHECK(p.path == BOX_RDMA, "%s n=%d levels=%d: took %s, not rdma", op, n, x->d.levels,
              path_names[p.path]);
    if (p.path == BOX_SERVER_PUT) {
        CHECK(p.server.max_bytes > 0 && p.server.max_bytes <= f->request_room,
              "%s n=%d: %zu bytes a request, room %zu", op, n, p.server.max_bytes, f->request_room);
        if (p.server.in_place && x->d.levels > 0 && row < p.server.max_bytes) {
            CHECK(p.server.max_bytes / row <= (size_t)f->max_sge - 1,
                  "%s n=%d: %zu rows a request, %d gather entries", op, n, p.server.max_bytes / row,
                  f->max_sge);
            CHECK(p.server.max_bytes <= f->send_room,
                  "%s n=%d: %zu bytes of rows gathered into one SEND, the server takes %zu", op, n,
                  p.server.max_bytes, f->send_room);
        }
    }
    if (p.path == BOX_SERVER_PULL || p.path == BOX_SERVER_GET) {
        CHECK(p.piece_bytes >= row || row > PIECE_MAX_BYTES, "%s n=%d: piece %zu < row %zu", op, n,
              p.piece_bytes, row);
        CHECK(p.piece_bytes <= PIECE_MAX_BYTES || p.piece_bytes <= f->request_room,
              "%s n=%d: piece %zu over the cap", op, n, p.piece_bytes);
        size_t pieces = pieces_of(x, p.piece_bytes);
        CHECK(pieces * p.piece_bytes >= total_bytes(x), "%s n=%d: %zu pieces of %zu < %zu bytes",
              op, n, pieces, p.piece_bytes, total_bytes(x));
    }
}

struct expect {
    enum transfer_op op;
    int n;
    enum box_path path;
};

static const char *const kind_names[] = {
    [DEVICE_HCA] = "HCA", [DEVICE_SOFTIB] = "softib", [DEVICE_KERNEL] = "rxe"};

static void check_choices(enum device_kind kind, const struct expect *e, int count)
{
    const char *provider = kind_names[kind];
    route_init(kind);
    struct box_facts f = bench_facts();
    for (int i = 0; i < count; i++) {
        struct patch p;
        patch_init(&p, e[i].op, e[i].n, false);
        struct box_plan plan = plan_box(&p.x, &f);
        CHECK(plan.path == e[i].path, "%s %s n=%d: %s, expected %s", provider, op_names[e[i].op],
              e[i].n, path_names[plan.path], path_names[e[i].path]);
    }
}

/*
 * The hybrid UD path (route_via_datagram) with softib's rooms (a 4096-byte datagram: 4032 bytes
 * of a put or accumulate, 4056 of a get): pieces that fit a request go at any count up to 64
 * chunks; longer pieces are cut into requests while the whole stays within 64 KiB; a node with
 * a ready connection, or one busy on RC, keeps its RC path.
 */
static void check_datagram_route(void)
{
    static const double one = 1.0;
    struct dgram_facts cold = {.segmented_max = 65536};
    static const struct {
        enum transfer_op op;
        int row, rows; /* rows 0: contiguous */
        bool ud;
    } cases[] = {
        {TRANSFER_PUT, 8, 0, true},        {TRANSFER_PUT, 4032, 0, true},
        {TRANSFER_PUT, 16384, 0, true},    {TRANSFER_GET, 65536, 0, true},
        {TRANSFER_ACC, 65536, 0, true},    {TRANSFER_PUT, 65537, 0, false},
        {TRANSFER_GET, 1 << 20, 0, false}, {TRANSFER_PUT, 2048, 64, true},
        {TRANSFER_PUT, 2048, 65, false},   {TRANSFER_GET, 8192, 8, true},
        {TRANSFER_GET, 8192, 9, false},    {TRANSFER_ACC, 16384, 4, true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int count[2] = {cases[i].row, cases[i].rows};
        int stride[1] = {cases[i].row};
        struct transfer x = {.op = cases[i].op,
                             .datatype = ARMCI_ACC_DCP,
                             .scale = &one,
                             .d = {cases[i].rows ? 1 : 0, count, stride, stride}};
        cold.room = cases[i].op == TRANSFER_GET ? 4056 : 4032;
        struct dgram_facts warm = cold, busy = cold;
        warm.rc_ready = true;
        busy.rc_busy = true;
        bool ud = route_via_datagram(&x, &cold);
        CHECK(ud == cases[i].ud, "%s of %d x %d B to a cold node: %s", op_names[cases[i].op],
              cases[i].rows, cases[i].row, ud ? "UD" : "RC");
        CHECK(!route_via_datagram(&x, &warm), "%s of %d x %d B took UD past a ready connection",
              op_names[cases[i].op], cases[i].rows, cases[i].row);
        CHECK(!route_via_datagram(&x, &busy), "%s of %d x %d B overtook RC work by UD",
              op_names[cases[i].op], cases[i].rows, cases[i].row);
    }
    /* A vector: 8 segments of 8 KiB (64 KiB) cut into requests, 9 do not go. */
    char *locals[9] = {0};
    cold.room = 4032;
    struct transfer v = {.op = TRANSFER_PUT, .n = 8, .bytes = 8192, .locals = (void **)locals};
    CHECK(route_via_datagram(&v, &cold), "a vector of 8 x 8 KiB did not take UD");
    v.n = 9;
    CHECK(!route_via_datagram(&v, &cold), "a vector of 9 x 8 KiB took UD");
}

int main(void)
{
    cfg.strided_threshold = -1; /* the cost model (ARMCI_STRIDED_THRESHOLD's default) */
    struct box_facts f = bench_facts();
    for (int kind = DEVICE_HCA; kind <= DEVICE_KERNEL; kind++) {
        route_init((enum device_kind)kind);
        for (int op = TRANSFER_PUT; op <= TRANSFER_ACC; op++)
            for (int n = 4; n <= 1024; n *= 2)
                for (int contiguous = 0; contiguous <= 1; contiguous++) {
                    struct patch p;
                    patch_init(&p, (enum transfer_op)op, n, contiguous);
                    check_invariants(&p.x, &f, n);
                    struct box_facts unregistered = f;
                    unregistered.registered = unregistered.direct = false;
                    check_invariants(&p.x, &unregistered, n);
                }
    }

    /*
     * softib (0.45 us a chunk, 1.5 us a put request, 9 us a get request):
     * - puts n=4: 4 rows of 32 B, too short to gather: one copied request,
     *   1.5 + 128/9000 + 128/20000 = 1.52 us against 4 x 0.45 = 1.81 us by RDMA;
     * - puts n=64: rows of 512 B, 31 a request in place: 3 requests,
     *   4.5 + 3.6 = 8.1 us against 28.8 + 3.3 = 32.1 us;
     * - puts n=128: 128 KiB from one registered run, pulled in 32-row pieces:
     *   4 x 1.5 + 14.6 = 20.6 us against 57.6 + 13.1 = 70.7 us;
     * - gets n=4: 9 us a request against 1.8 us: RDMA;
     * - gets n=64: one request, 9 + 3.6 = 12.6 us against 32.1 us;
     * - gets n=1024: 32 requests of 32 rows, 288 + 932 = 1220 us against
     *   460.8 + 838.9 = 1300 us.
     */
    static const struct expect softib[] = {
        {TRANSFER_PUT, 4, BOX_SERVER_PUT},    {TRANSFER_PUT, 64, BOX_SERVER_PUT},
        {TRANSFER_PUT, 128, BOX_SERVER_PULL}, {TRANSFER_GET, 4, BOX_RDMA},
        {TRANSFER_GET, 64, BOX_SERVER_GET},   {TRANSFER_GET, 1024, BOX_SERVER_GET},
        {TRANSFER_ACC, 4, BOX_SERVER_PUT},    {TRANSFER_ACC, 1024, BOX_SERVER_PUT},
    };
    check_choices(DEVICE_SOFTIB, softib, (int)(sizeof(softib) / sizeof(softib[0])));
    /* An HCA (0.05 us a chunk, 3 us a put request): RDMA wins for every strided put and get
     * of the benchmark, e.g. puts n=4: 0.2 us against 3.0 us; gets n=1024: 750 us against
     * 32 x 9 + 1398 = 1686 us. */
    static const struct expect hca[] = {
        {TRANSFER_PUT, 4, BOX_RDMA},    {TRANSFER_PUT, 64, BOX_RDMA},
        {TRANSFER_PUT, 128, BOX_RDMA},  {TRANSFER_GET, 64, BOX_RDMA},
        {TRANSFER_GET, 1024, BOX_RDMA}, {TRANSFER_ACC, 64, BOX_SERVER_PUT},
    };
    check_choices(DEVICE_HCA, hca, (int)(sizeof(hca) / sizeof(hca[0])));
    /* rxe and siw: strided chunks priced as on an HCA. */
    check_choices(DEVICE_KERNEL, hca, (int)(sizeof(hca) / sizeof(hca[0])));

    /*
     * Vectors of GA's scatter and gather shape: 10 segments of 8 B to one process, all of
     * them fitting one request. softib: a chain of puts costs 10 x 0.45 = 4.5 us against one
     * request's 1.5 us (the server), a chain of gets 4.5 us against 9 us (RDMA). rxe: the
     * same chains against 3 us and 9 us (between two hosts: 3.4 ms against 1.45 ms for the
     * puts). An HCA: 0.5 us against 3 us and 9 us, RDMA both ways. Accumulates always go to
     * the server.
     */
    static const struct {
        enum device_kind kind;
        enum transfer_op op;
        bool rdma;
    } vectors[] = {
        {DEVICE_SOFTIB, TRANSFER_PUT, false}, {DEVICE_SOFTIB, TRANSFER_GET, true},
        {DEVICE_SOFTIB, TRANSFER_ACC, false}, {DEVICE_KERNEL, TRANSFER_PUT, false},
        {DEVICE_KERNEL, TRANSFER_GET, true},  {DEVICE_KERNEL, TRANSFER_ACC, false},
        {DEVICE_HCA, TRANSFER_PUT, true},     {DEVICE_HCA, TRANSFER_GET, true},
        {DEVICE_HCA, TRANSFER_ACC, false},
    };
    for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
        route_init(vectors[i].kind);
        struct transfer v = {.op = vectors[i].op, .n = 10, .bytes = 8};
        bool rdma = route_vector_via_rdma(&v, 100);
        CHECK(rdma == vectors[i].rdma, "%s vector %s of 10 x 8 B: %s, expected %s",
              kind_names[vectors[i].kind], op_names[vectors[i].op], rdma ? "rdma" : "server",
              vectors[i].rdma ? "rdma" : "server");
    }

    check_datagram_route();

    /* ARMCI_STRIDED_THRESHOLD=0: every put and get by RDMA, accumulates still to the server. */
    cfg.strided_threshold = 0;
    route_init(DEVICE_SOFTIB);
    for (int op = TRANSFER_PUT; op <= TRANSFER_ACC; op++)
        for (int n = 4; n <= 1024; n *= 2) {
            struct patch p;
            patch_init(&p, (enum transfer_op)op, n, false);
            struct box_plan plan = plan_box(&p.x, &f);
            enum box_path want = op == TRANSFER_ACC ? BOX_SERVER_PUT : BOX_RDMA;
            CHECK(plan.path == want, "threshold 0, %s n=%d: %s", op_names[op], n,
                  path_names[plan.path]);
        }

    if (failures) {
        printf("FAIL: %d check(s)\n", failures);
        return 1;
    }
    printf("PASS: route plan over the benchmark's shapes (softib, HCA, threshold 0)\n");
    return 0;
}
