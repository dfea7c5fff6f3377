/*
 * Writes the seed corpora of the fuzz targets, DIR/corpus/ds/<name>,
 * DIR/corpus/ud/<name> and DIR/corpus/dgram/<name>, one file per case in
 * each harness's input format (see fuzz_ds.c, fuzz_ud.c and fuzz_dgram.c): a
 * valid request of every operation and the edge cases the checks are about;
 * and DIR/ds.dict and DIR/dgram.dict, the segment boundaries (for dgram also
 * the mutexes and the bytes of a request that was a lock or an unlock) as
 * libFuzzer dictionary entries. Inputs that made a target crash are kept
 * beside the seeds (regress-*) and are not touched here.
 * Usage: fuzz-make-corpus DIR   (tests/fuzz)
 */
#include <armci.h>
#include <errno.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/config.h"
#include "core/ticket_lock.h"
#include "wire/dgram_protocol.h"
#include "wire/protocol.h"
#include "fuzz.h"
#include "odcm/ud.h"

static const char *root;

/* ---- writing inputs ---- */

static uint8_t input[1 << 17];
static size_t input_len;

static void put(const void *p, size_t n)
{
    if (input_len + n > sizeof(input)) {
        fprintf(stderr, "input too long\n");
        exit(1);
    }
    memcpy(input + input_len, p, n);
    input_len += n;
}

static void put8(uint8_t v)
{
    put(&v, 1);
}

static void save(const char *target, const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/corpus", root);
    if (mkdir(path, 0755) && errno != EEXIST) {
        perror(path);
        exit(1);
    }
    snprintf(path, sizeof(path), "%s/corpus/%s", root, target);
    if (mkdir(path, 0755) && errno != EEXIST) {
        perror(path);
        exit(1);
    }
    snprintf(path, sizeof(path), "%s/corpus/%s/%s", root, target, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(input, 1, input_len, f) != input_len || fclose(f)) {
        perror(path);
        exit(1);
    }
    input_len = 0;
}

/* ---- ds: requests to the data server ---- */

#define A     (FUZZ_DS_ARENA + FUZZ_DS_A_OFFSET)
#define B     (FUZZ_DS_ARENA + FUZZ_DS_B_OFFSET)
#define C     (FUZZ_DS_ARENA + FUZZ_DS_C_OFFSET)
#define LOCKS (FUZZ_DS_ARENA + FUZZ_DS_LOCK_OFFSET)
#define MUTEX sizeof(struct ticket_lock)

static uint64_t next_token = 1;

static struct ds_message rq(enum ds_op op, uint64_t addr, uint64_t len)
{
    return (struct ds_message){.op = (uint8_t)op,
                               .origin = 5,
                               .token = next_token++,
                               .addr = addr,
                               .len = len,
                               .target_local = 1};
}

/* One request from client connection `conn` (0 or 1): header, then payload. */
static void request(int conn, const struct ds_message *m, const void *payload, size_t n)
{
    size_t len = sizeof(*m) + n;
    put8((uint8_t)conn);
    put8((uint8_t)len);
    put8((uint8_t)(len >> 8));
    put(m, sizeof(*m));
    put(payload, n);
}

/* The same, sized by the harness from the header (bit 1 of ctl): as a client sends it. */
static void natural(int conn, const struct ds_message *m, const void *payload, size_t n)
{
    put8((uint8_t)(conn | 2));
    put(m, sizeof(*m));
    put(payload, n);
}

static uint8_t data[8192];

static void ds_acc(const char *name, int type, size_t elem)
{
    struct ds_message m = rq(DS_ACC, A + 64, 8 * elem);
    m.datatype = (uint8_t)type;
    double two[2] = {2, 0};
    float twof[2] = {2, 0};
    long twol = 2;
    int twoi = 2;
    if (type == ARMCI_ACC_INT)
        memcpy(m.scale, &twoi, sizeof(twoi));
    else if (type == ARMCI_ACC_LNG)
        memcpy(m.scale, &twol, sizeof(twol));
    else if (type == ARMCI_ACC_FLT || type == ARMCI_ACC_CPL)
        memcpy(m.scale, twof, sizeof(twof));
    else
        memcpy(m.scale, two, sizeof(two));
    natural(0, &m, data, 8 * elem);
    save("ds", name);
}

static void ds_rmw(const char *name, int op, size_t size)
{
    struct ds_message m = rq(DS_RMW, B + 8, size);
    m.rmw_op = (uint8_t)op;
    m.value = 3;
    natural(0, &m, NULL, 0);
    save("ds", name);
}

/* A strided request: levels, counts and strides at the server. */
static struct ds_message strided(enum ds_op op, uint64_t addr, int levels, const int *count,
                                 const int *stride)
{
    struct ds_message m = rq(op, addr, 0);
    m.stride.levels = levels;
    size_t packed = 1;
    for (int i = 0; i <= levels; i++) {
        m.stride.count[i] = count[i];
        packed *= (size_t)count[i];
    }
    for (int i = 0; i < levels; i++)
        m.stride.stride[i] = stride[i];
    m.len = packed;
    m.reply_addr = 0x7f0000001000;
    m.reply_rkey = 0x1234;
    return m;
}

/* k segments of len bytes at addrs: the addresses lead the payload, then the data
 * (conn | 2: framed by the harness, as a client would size it). */
static void iov(int conn, enum ds_op op, const uint64_t *addrs, int k, uint64_t len, int type)
{
    struct ds_message m = rq(op, 0, len);
    m.value = k;
    m.datatype = (uint8_t)type;
    m.reply_addr = 0x7f0000002000;
    m.reply_rkey = 0x1234;
    if (type == ARMCI_ACC_INT) {
        int one = 1;
        memcpy(m.scale, &one, sizeof(one));
    }
    uint8_t payload[1024];
    size_t n = (size_t)k * sizeof(uint64_t);
    memcpy(payload, addrs, n);
    if (op != DS_GET_IOV) {
        memcpy(payload + n, data, (size_t)k * len);
        n += (size_t)k * len;
    }
    if (conn & 2)
        natural(conn & 1, &m, payload, n);
    else
        request(conn, &m, payload, n);
}

/* A SEND of several requests (protocol.h): each but the last with `more`, 8-byte aligned. */
static uint8_t send_buf[8192];
static size_t send_len;

static void send_add(const struct ds_message *m, const void *payload, size_t n, bool more)
{
    struct ds_message h = *m;
    h.flags = (uint8_t)((m->flags & ~DS_MORE) | (more ? DS_MORE : 0));
    send_len = (send_len + 7) & ~(size_t)7;
    memcpy(send_buf + send_len, &h, sizeof(h));
    memcpy(send_buf + send_len + sizeof(h), payload, n);
    send_len += sizeof(h) + n;
}

static void send_end(int conn)
{
    put8((uint8_t)conn);
    put8((uint8_t)send_len);
    put8((uint8_t)(send_len >> 8));
    put(send_buf, send_len);
    send_len = 0;
}

static void ds_shared_sends(void)
{
    double two = 2;
    struct ds_message acc = rq(DS_ACC, A + 64, 12); /* 12: the next request starts padded */
    acc.datatype = ARMCI_ACC_INT;
    memcpy(acc.scale, &(int){3}, sizeof(int));
    int c1[2] = {8, 3}, s1[1] = {32};
    struct ds_message put = strided(DS_PUT_PACKED, A + 128, 1, c1, s1);
    struct ds_message accd = rq(DS_ACC_PACKED, B + 64, 16);
    accd.datatype = ARMCI_ACC_DBL;
    memcpy(accd.scale, &two, sizeof(two));
    accd.stride.count[0] = 16;
    struct ds_message viov = rq(DS_ACC_IOV, 0, 8);
    viov.value = 2;
    viov.datatype = ARMCI_ACC_LNG;
    memcpy(viov.scale, &(long){1}, sizeof(long));
    uint64_t at[2] = {A + 8, B + 24};
    uint8_t payload[2 * 8 + 2 * 8];
    memcpy(payload, at, sizeof(at));
    memcpy(payload + 16, data, 16);

    send_add(&acc, data, 12, true);
    send_add(&put, data, 24, true);
    send_add(&accd, data, 16, true);
    send_add(&viov, payload, sizeof(payload), false);
    send_end(0);
    save("ds", "shared-send");

    /* Refused: a lock may not share a SEND; a request that claims more than is there; a
     * `more` with no room for another header; a refusal in the middle, the rest served. */
    struct ds_message lock = rq(DS_LOCK, LOCKS + MUTEX, MUTEX);
    send_add(&lock, NULL, 0, true);
    send_add(&acc, data, 12, false);
    send_end(1);
    struct ds_message big = rq(DS_ACC, A + 64, 4096);
    big.datatype = ARMCI_ACC_INT;
    send_add(&big, data, 64, true);
    send_end(0);
    send_add(&acc, data, 12, true);
    send_end(0);
    struct ds_message outside = rq(DS_ACC, 0x1000, 12);
    outside.datatype = ARMCI_ACC_INT;
    send_add(&acc, data, 12, true);
    send_add(&outside, data, 12, true);
    send_add(&acc, data, 12, false);
    send_end(1);
    save("ds", "edge-shared-send");
}

/* Pulled requests (DS_PULLED): the header alone, the payload read from the client; and the
 * ways one is malformed (a payload sent too, a lock, more than an out buffer, in a shared
 * SEND, none at all). */
static void ds_pulled(void)
{
    struct ds_message acc = rq(DS_ACC, A + 64, 64);
    acc.flags = DS_PULLED;
    acc.datatype = ARMCI_ACC_INT;
    memcpy(acc.scale, &(int){3}, sizeof(int));
    acc.reply_addr = 0x7f0000003000;
    acc.reply_rkey = 0x1234;
    request(0, &acc, NULL, 0);
    int c1[] = {16, 4}, s1[] = {64};
    struct ds_message put = strided(DS_PUT_PACKED, A + 128, 1, c1, s1);
    put.flags = DS_PULLED;
    request(1, &put, NULL, 0);
    struct ds_message accd = strided(DS_ACC_PACKED, B, 1, c1, s1);
    accd.flags = DS_PULLED;
    accd.datatype = ARMCI_ACC_DBL;
    memcpy(accd.scale, &(double){2}, sizeof(double));
    request(0, &accd, NULL, 0);
    save("ds", "pulled");

    request(0, &acc, data, 64); /* the payload sent as well */
    struct ds_message lock = rq(DS_LOCK, LOCKS + MUTEX, MUTEX);
    lock.flags = DS_PULLED;
    request(1, &lock, NULL, 0);
    struct ds_message huge = acc;
    huge.len = FUZZ_DS_OUT_SIZE + 4;
    request(0, &huge, NULL, 0);
    struct ds_message none = acc;
    none.len = 0;
    request(0, &none, NULL, 0);
    send_add(&acc, NULL, 0, true);
    send_add(&acc, NULL, 0, false);
    send_end(1);
    save("ds", "edge-pulled");
}

static void ds_corpus(void)
{
    for (size_t i = 0; i < sizeof(data); i++)
        data[i] = (uint8_t)(i * 7 + 1);

    ds_acc("acc-int", ARMCI_ACC_INT, 4);
    ds_acc("acc-long", ARMCI_ACC_LNG, 8);
    ds_acc("acc-float", ARMCI_ACC_FLT, 4);
    ds_acc("acc-double", ARMCI_ACC_DBL, 8);
    ds_acc("acc-complex", ARMCI_ACC_CPL, 8);
    ds_acc("acc-double-complex", ARMCI_ACC_DCP, 16);
    ds_rmw("rmw-fetch-and-add", ARMCI_FETCH_AND_ADD, sizeof(int));
    ds_rmw("rmw-fetch-and-add-long", ARMCI_FETCH_AND_ADD_LONG, sizeof(long));
    ds_rmw("rmw-swap", ARMCI_SWAP, sizeof(int));
    ds_rmw("rmw-swap-long", ARMCI_SWAP_LONG, sizeof(long));

    struct ds_message m = rq(DS_LOCK, LOCKS + MUTEX, MUTEX);
    request(0, &m, NULL, 0);
    m = rq(DS_UNLOCK, LOCKS + MUTEX, MUTEX);
    request(0, &m, NULL, 0);
    save("ds", "lock-unlock");

    /* Two clients on one mutex: the second waits, the unlock grants it. */
    m = rq(DS_LOCK, LOCKS, MUTEX);
    request(0, &m, NULL, 0);
    m = rq(DS_LOCK, LOCKS, MUTEX);
    request(1, &m, NULL, 0);
    m = rq(DS_UNLOCK, LOCKS, MUTEX);
    request(0, &m, NULL, 0);
    m = rq(DS_UNLOCK, LOCKS, MUTEX);
    request(1, &m, NULL, 0);
    save("ds", "lock-contended");

    m = rq(DS_LOCK, LOCKS + 3 * MUTEX, MUTEX);
    request(0, &m, NULL, 0);
    m = rq(DS_UNLOCK, LOCKS + 3 * MUTEX, MUTEX);
    request(1, &m, NULL, 0);
    save("ds", "unlock-not-held");

    m = rq(DS_LOCK, A, MUTEX);
    request(0, &m, NULL, 0);
    m = rq(DS_LOCK, LOCKS + 8, MUTEX);
    request(0, &m, NULL, 0);
    m = rq(DS_LOCK, LOCKS + FUZZ_DS_LOCKS * MUTEX, MUTEX);
    request(0, &m, NULL, 0);
    save("ds", "lock-not-a-mutex");

    int c1[] = {16, 4}, s1[] = {64};
    m = strided(DS_PUT_PACKED, A + 128, 1, c1, s1);
    natural(0, &m, data, m.len);
    save("ds", "put-packed");

    int c2[] = {8, 3, 5}, s2[] = {32, 200};
    m = strided(DS_PUT_PACKED, B, 2, c2, s2);
    request(0, &m, data, m.len);
    save("ds", "put-packed-2-levels");

    int c8[] = {2, 2, 2, 2, 2, 2, 2, 2, 2}, s8[] = {4, 8, 16, 32, 64, 128, 256, 512};
    m = strided(DS_PUT_PACKED, A, 8, c8, s8);
    request(1, &m, data, m.len);
    save("ds", "put-packed-8-levels");

    int ca[] = {16, 4}, sa[] = {48};
    m = strided(DS_ACC_PACKED, A + 8, 1, ca, sa);
    m.datatype = ARMCI_ACC_DBL;
    double one = 1;
    memcpy(m.scale, &one, sizeof(one));
    natural(0, &m, data, m.len);
    save("ds", "acc-packed");

    int cg[] = {24, 2, 3}, sg[] = {100, 400};
    m = strided(DS_GET_PACKED, B + 16, 2, cg, sg);
    natural(0, &m, NULL, 0);
    save("ds", "get-packed");
    /* The second connection's QP gathers: gets written back in place, puts pulled. */
    m = strided(DS_GET_PACKED, B + 16, 2, cg, sg);
    natural(1, &m, NULL, 0);
    save("ds", "get-packed-gathered");
    m = strided(DS_PUT_PULL, B + 16, 2, cg, sg);
    m.reply_addr = 0x7000;
    m.reply_rkey = 5;
    natural(1, &m, NULL, 0);
    save("ds", "put-pull");

    uint64_t addrs[] = {A, A + 100, B + 8, LOCKS + 16};
    iov(2, DS_PUT_IOV, addrs, 3, 16, 0);
    save("ds", "put-iov");
    iov(2, DS_GET_IOV, addrs, 4, 16, 0);
    save("ds", "get-iov");
    iov(1, DS_ACC_IOV, addrs, 3, 16, ARMCI_ACC_INT);
    save("ds", "acc-iov");

    /* Edges: the last bytes of a segment, one past, a range into the next canary. */
    m = rq(DS_RMW, B + FUZZ_DS_B_SIZE - 8, 8);
    m.rmw_op = ARMCI_SWAP_LONG;
    request(0, &m, NULL, 0);
    m = rq(DS_ACC, B + FUZZ_DS_B_SIZE - 4, 8);
    m.datatype = ARMCI_ACC_INT;
    request(0, &m, data, 8);
    m = rq(DS_ACC, A + FUZZ_DS_A_SIZE, 4);
    m.datatype = ARMCI_ACC_INT;
    request(0, &m, data, 4);
    m = rq(DS_ACC, A - 4, 8);
    m.datatype = ARMCI_ACC_INT;
    request(0, &m, data, 8);
    m = rq(DS_ACC, C, 4);
    m.datatype = ARMCI_ACC_INT;
    request(0, &m, data, 4);
    m = rq(DS_ACC, C, 8);
    request(0, &m, data, 8);
    int c7[] = {7}, s7[] = {0};
    m = strided(DS_GET_PACKED, C, 0, c7, s7);
    request(0, &m, NULL, 0);
    c7[0] = 8;
    m = strided(DS_PUT_PACKED, C, 0, c7, s7);
    request(0, &m, data, 8);
    save("ds", "edge-segment-ends");

    int cx[] = {8, 2}, sx[] = {FUZZ_DS_B_SIZE - 8};
    m = strided(DS_PUT_PACKED, B, 1, cx, sx);
    request(0, &m, data, m.len);
    sx[0]++;
    m = strided(DS_PUT_PACKED, B, 1, cx, sx);
    request(0, &m, data, m.len);
    save("ds", "edge-stride-to-the-end");

    /* k * len wraps around: 2 segments of 2^63 bytes "are" 0 bytes of data. */
    m = rq(DS_PUT_IOV, 0, 1ull << 63);
    m.value = 2;
    request(0, &m, addrs, 2 * sizeof(uint64_t));
    m = rq(DS_GET_IOV, 0, 1ull << 63);
    m.value = 2;
    request(0, &m, addrs, 2 * sizeof(uint64_t));
    save("ds", "edge-iov-size-wraps");

    m = rq(DS_GET_IOV, 0, FUZZ_DS_OUT_SIZE / 2 + 8);
    m.value = 2;
    request(0, &m, addrs, 2 * sizeof(uint64_t));
    int cb[] = {FUZZ_DS_OUT_SIZE + 1}, sb[] = {0};
    m = strided(DS_GET_PACKED, A, 0, cb, sb);
    request(0, &m, NULL, 0);
    save("ds", "edge-get-too-big");

    int c9[] = {1, 1, 1, 1, 1, 1, 1, 1, 1}, s9[] = {0, 0, 0, 0, 0, 0, 0, 0};
    m = strided(DS_PUT_PACKED, A, 8, c9, s9);
    m.stride.levels = 9;
    request(0, &m, data, 1);
    m.stride.levels = -1;
    request(0, &m, data, 1);
    int cn[] = {8, -2}, sn[] = {16};
    m = strided(DS_PUT_PACKED, A, 1, cn, sn);
    m.len = 16;
    request(0, &m, data, 16);
    int cs[] = {8, 2}, ss[] = {-16};
    m = strided(DS_PUT_PACKED, A + 64, 1, cs, ss);
    request(0, &m, data, m.len);
    int cz[] = {8, 4}, sz[] = {0};
    m = strided(DS_ACC_PACKED, A, 1, cz, sz);
    m.datatype = ARMCI_ACC_LNG;
    request(0, &m, data, m.len);
    int co[] = {0x10000, 0x10000, 0x10000}, so[] = {0x10000, 0x7fffffff};
    m = strided(DS_PUT_PACKED, A, 2, co, so);
    request(0, &m, data, 64);
    save("ds", "edge-bad-layouts");

    m = rq(DS_ACC, A, 8);
    m.datatype = 6;
    request(0, &m, data, 8);
    m = rq(DS_ACC, A, 6);
    m.datatype = ARMCI_ACC_INT;
    request(0, &m, data, 6);
    m = rq(DS_ACC, A, 8);
    m.target_local = 4;
    request(0, &m, data, 8);
    m.target_local = -1;
    request(0, &m, data, 8);
    m = rq(DS_ACC, A, 16);
    request(0, &m, data, 8); /* payload shorter than len */
    save("ds", "edge-bad-accumulates");

    m = rq(DS_RMW, A + 2, 4);
    m.rmw_op = ARMCI_FETCH_AND_ADD;
    request(0, &m, NULL, 0);
    m.rmw_op = 9;
    request(0, &m, NULL, 0);
    m = rq(DS_RMW, A, 8);
    m.rmw_op = ARMCI_SWAP;
    request(0, &m, NULL, 0);
    save("ds", "edge-bad-rmw");

    m = rq(DS_PUT_IOV, 0, 16);
    m.value = 0;
    request(0, &m, NULL, 0);
    m.value = -1;
    request(0, &m, addrs, 8);
    m.value = 3;
    request(0, &m, addrs, 3 * 8 + 16); /* data for one segment of three */
    m = rq(DS_PUT_IOV, 0, 0);
    m.value = 1;
    request(0, &m, addrs, 8);
    save("ds", "edge-bad-iov");

    m = rq(DS_OP_MAX, A, 0);
    request(0, &m, NULL, 0);
    m.op = 0;
    request(0, &m, NULL, 0);
    m.op = 255;
    request(0, &m, NULL, 0);
    put8(0); /* a request shorter than a header */
    put8(10);
    put8(0);
    put(data, 10);
    save("ds", "edge-unknown-and-short");

    ds_shared_sends();
    ds_pulled();
}

/* ---- ud: connection messages ---- */

enum { TO_SERVER = 0, TO_CLIENT = 1, CONNECT = 2, TICK = 3 };
enum { GRH = 1, GRH_IPV4 = 2, NO_GRH_SPACE = 4 };

static int roce, protocol;

static struct verbs_addr port(int node)
{
    struct verbs_addr a = {0};
    fuzz_ud_port(node, roce, &a.lid, a.gid);
    return a;
}

static int node_of(int rank)
{
    return rank / 2;
}

static void world(int is_roce, int serial)
{
    roce = is_roce;
    protocol = serial ? CFG_PROTOCOL_SERIAL : CFG_PROTOCOL_OVERLAP;
    put8((uint8_t)(is_roce | serial << 1));
}

/* A datagram from `sender` (a rank < 8, a node's server 8..11, or another QP on the port of
 * one of those: +12). */
static void dgram(int to, int sender, int flags, const void *p, size_t n)
{
    put8((uint8_t)to);
    put8((uint8_t)sender);
    put8((uint8_t)flags);
    put8((uint8_t)n);
    put(p, n);
}

/* A message as the device delivers it: with a GRH on RoCE. */
static void msg(int to, int sender, const struct cm_msg *m)
{
    dgram(to, sender, roce ? GRH : 0, m, sizeof(*m));
}

/* From a QP the input names: [u32 qpn][u16 lid][16 gid]. */
static void msg_raw(int to, uint32_t qpn, const struct verbs_addr *port_addr,
                    const struct cm_msg *m)
{
    put8((uint8_t)to);
    put8(255);
    put8(roce ? GRH : 0);
    put8((uint8_t)sizeof(*m));
    put(&qpn, 4);
    put(&port_addr->lid, 2);
    put(port_addr->gid, 16);
    put(m, sizeof(*m));
}

/* What a client rank sends to our server (node 1). */
static struct cm_msg client_msg(enum cm_msg_type type, int rank, uint32_t epoch, bool with_qp)
{
    struct cm_msg m = {.type = (uint8_t)type,
                       .protocol = (uint8_t)protocol,
                       .rank = rank,
                       .node = node_of(FUZZ_UD_ME),
                       .epoch = epoch};
    if (with_qp) {
        m.qp = port(node_of(rank));
        m.qp.qpn = 0x5000 + (uint32_t)rank;
        m.qp.psn = 0x1234;
    }
    return m;
}

/* What node `node`'s server answers our client. */
static struct cm_msg server_msg(enum cm_msg_type type, int node, uint32_t epoch)
{
    struct cm_msg m = {.type = (uint8_t)type,
                       .protocol = (uint8_t)protocol,
                       .rank = FUZZ_UD_ME,
                       .node = node,
                       .epoch = epoch,
                       .credits = 8,
                       .gather = 16};
    m.qp = port(node);
    m.qp.qpn = 0x6000 + (uint32_t)node;
    m.qp.psn = 0x4321;
    return m;
}

static void connect_to(int node)
{
    put8(CONNECT);
    put8((uint8_t)node);
}

/* A whole connection from rank 4 to our server, and ours to node `node`. */
static void both_sides(int node)
{
    struct cm_msg m = client_msg(CM_REQ, 4, 1, protocol == CFG_PROTOCOL_SERIAL);
    msg(TO_SERVER, 4, &m);
    if (protocol == CFG_PROTOCOL_OVERLAP) {
        m = client_msg(CM_RTU, 4, 1, true);
        msg(TO_SERVER, 4, &m);
    }
    msg(TO_SERVER, 4, &m); /* a duplicate: answered again, nothing new */
    connect_to(node);
    m = server_msg(CM_REP, node, 1);
    msg(TO_CLIENT, 8 + node, &m);
    m = server_msg(CM_ACK, node, 1);
    msg(TO_CLIENT, 8 + node, &m);
}

static void ud_corpus(void)
{
    world(0, 0);
    both_sides(0);
    save("ud", "overlap");
    world(0, 1);
    both_sides(3);
    save("ud", "serial");
    world(1, 0);
    both_sides(2);
    save("ud", "roce-overlap");
    world(1, 1);
    both_sides(0);
    save("ud", "roce-serial");

    /* RoCEv2 over IPv4: the source GID comes from an IPv4 header. */
    world(1, 0);
    struct cm_msg m = client_msg(CM_REQ, 6, 1, false);
    dgram(TO_SERVER, 6, GRH | GRH_IPV4, &m, sizeof(m));
    connect_to(0);
    m = server_msg(CM_ACK, 0, 1);
    dgram(TO_CLIENT, 8, GRH | GRH_IPV4, &m, sizeof(m));
    save("ud", "roce-ipv4-grh");

    /* The answer arrives after retransmissions; an RTU before its REQ. */
    world(0, 0);
    connect_to(3);
    put8(TICK);
    put8(TICK);
    m = server_msg(CM_ACK, 3, 1);
    msg(TO_CLIENT, 11, &m);
    m = client_msg(CM_RTU, 7, 1, true);
    msg(TO_SERVER, 7, &m);
    m = client_msg(CM_REQ, 7, 1, false);
    msg(TO_SERVER, 7, &m);
    save("ud", "retransmissions-and-reordering");

    /* A newer attempt before the RTU takes the server end over; once connected it does not. */
    world(0, 0);
    m = client_msg(CM_REQ, 5, 1, false);
    msg(TO_SERVER, 5, &m);
    m = client_msg(CM_REQ, 5, 2, false);
    msg(TO_SERVER, 5, &m);
    m = client_msg(CM_RTU, 5, 1, true);
    msg(TO_SERVER, 5, &m);
    m = client_msg(CM_RTU, 5, 2, true);
    msg(TO_SERVER, 5, &m);
    m = client_msg(CM_REQ, 5, 3, false);
    msg(TO_SERVER, 5, &m);
    save("ud", "epochs");

    /* Forgeries: rank 4's request from rank 5, from another QP of rank 4's port, from a
     * named QP; a high epoch first; answers about node 0 from node 3 and from a client. */
    world(0, 0);
    m = client_msg(CM_REQ, 4, 0x7ffffff0, false);
    msg(TO_SERVER, 5, &m);
    msg(TO_SERVER, 12 + 4, &m);
    struct verbs_addr p4 = port(node_of(4));
    msg_raw(TO_SERVER, 0x777, &p4, &m);
    m = client_msg(CM_RTU, 4, 1, true);
    msg(TO_SERVER, 12 + 4, &m);
    connect_to(0);
    m = server_msg(CM_ACK, 0, 1);
    msg(TO_CLIENT, 11, &m);
    msg(TO_CLIENT, 0, &m);
    msg(TO_CLIENT, 12 + 8, &m);
    both_sides(0);
    save("ud", "forged-senders");

    world(1, 0);
    m = client_msg(CM_REQ, 4, 1, false);
    dgram(TO_SERVER, 4, 0, &m, sizeof(m)); /* RoCE, but no GRH: no source GID */
    m = client_msg(CM_RTU, 4, 1, true);
    m.qp = port(node_of(6)); /* a QP on another host */
    m.qp.qpn = 0x99;
    msg(TO_SERVER, 4, &m);
    save("ud", "roce-no-grh-and-foreign-qp");

    /* Closing: the client closes a ready connection (DISC) and its server's DISC_ACK ends it;
     * a forged DISC_ACK and one of an older attempt do nothing; the node is opened again with
     * a newer attempt. The server closes rank 4's end on its DISC, answers a repeated one,
     * refuses one from another rank, and asks a client to close (DISC_ASK). */
    world(0, 0);
    both_sides(0);
    put8(TICK);
    connect_to(0); /* ready: this closes it */
    m = server_msg(CM_DISC_ACK, 0, 1);
    m.credits = 0;
    m.gather = 0;
    memset(&m.qp, 0, sizeof(m.qp));
    msg(TO_CLIENT, 9, &m); /* from node 1's server */
    m.epoch = 7;
    msg(TO_CLIENT, 8, &m); /* another attempt's */
    m.epoch = 1;
    msg(TO_CLIENT, 8, &m); /* the one */
    connect_to(0);         /* opened again */
    m = client_msg(CM_DISC, 4, 1, false);
    msg(TO_SERVER, 5, &m); /* rank 5 posing as rank 4 */
    msg(TO_SERVER, 4, &m);
    msg(TO_SERVER, 4, &m); /* repeated */
    m = server_msg(CM_DISC_ASK, 0, 2);
    m.credits = 0;
    m.gather = 0;
    memset(&m.qp, 0, sizeof(m.qp));
    msg(TO_CLIENT, 8, &m);
    put8(TICK);
    save("ud", "close-and-reopen");

    /* Malformed: wrong lengths, fields out of range. */
    world(0, 0);
    connect_to(2);
    m = client_msg(CM_REQ, 4, 1, false);
    dgram(TO_SERVER, 4, 0, &m, sizeof(m) - 1);
    dgram(TO_SERVER, 4, 0, &m, 0);
    dgram(TO_SERVER, 4, NO_GRH_SPACE, &m, sizeof(m));
    dgram(TO_SERVER, 4, GRH, &m, sizeof(m) + 8);
    struct cm_msg bad[] = {
        client_msg(CM_ACK, 4, 1, false),  client_msg(7, 4, 1, false),
        client_msg(CM_REQ, 3, 1, false),  client_msg(CM_REQ, 8, 1, false),
        client_msg(CM_REQ, -1, 1, false), client_msg(CM_REQ, 4, 0, false),
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        msg(TO_SERVER, 4, &bad[i]);
    m = client_msg(CM_REQ, 4, 1, false);
    m.node = 0;
    msg(TO_SERVER, 4, &m);
    m = client_msg(CM_REQ, 4, 1, false);
    m.protocol = 9;
    msg(TO_SERVER, 4, &m);
    m = client_msg(CM_RTU, 4, 1, true);
    m.qp.qpn = 0x1000000;
    msg(TO_SERVER, 4, &m);
    struct cm_msg bad_answers[] = {
        server_msg(CM_REQ, 2, 1), server_msg(CM_REP, 1, 1), server_msg(CM_REP, 4, 1),
        server_msg(CM_REP, 2, 0), server_msg(CM_REP, 2, 9),
    };
    for (size_t i = 0; i < sizeof(bad_answers) / sizeof(bad_answers[0]); i++)
        msg(TO_CLIENT, 10, &bad_answers[i]);
    m = server_msg(CM_REP, 2, 1);
    m.credits = 0;
    msg(TO_CLIENT, 10, &m);
    m.credits = CM_CREDITS_MAX + 1;
    msg(TO_CLIENT, 10, &m);
    m = server_msg(CM_REP, 2, 1);
    m.rank = 3;
    msg(TO_CLIENT, 10, &m);
    m = server_msg(CM_REP, 2, 1);
    m.qp.psn = 0x1000000;
    msg(TO_CLIENT, 10, &m);
    save("ud", "malformed");
}

/* ---- dgram: datagrams to the data server's UD data QP ---- */

enum {
    FORGED = FUZZ_DGRAM_FORGED,
    TWICE = FUZZ_DGRAM_TWICE,
    NATURAL = FUZZ_DGRAM_NATURAL,
    BUSY = FUZZ_DGRAM_BUSY,
    LOST = FUZZ_DGRAM_LOST,
};

/* World bytes (fuzz.h): the MTU 4096 >> (b & 7) % 5, the window 8 >> (b >> 3 & 3). */
#define WORLD_4096_W8 0
#define WORLD_256_W2  (4 | 2 << 3)

static uint8_t dg[FUZZ_DGRAM_SIZE];
static size_t dg_len;
static int dg_count;

static struct dgram_request dreq(uint32_t seq, enum dgram_op op, uint64_t addr, uint32_t len)
{
    return (struct dgram_request){.seq = seq, .op = (uint8_t)op, .len = len, .addr = addr};
}

static struct dgram_request dacc(uint32_t seq, uint64_t addr, int type, uint32_t len)
{
    struct dgram_request r = dreq(seq, DGRAM_ACC, addr, len);
    r.datatype = (uint8_t)type;
    r.target_local = 1;
    if (type == ARMCI_ACC_INT)
        memcpy(r.scale, &(int){2}, sizeof(int));
    else
        memcpy(r.scale, &(double){2}, sizeof(double));
    return r;
}

static struct dgram_request drmw(uint32_t seq, uint64_t addr, int op, int64_t value)
{
    size_t size = op == ARMCI_FETCH_AND_ADD || op == ARMCI_SWAP ? sizeof(int) : sizeof(long);
    struct dgram_request r = dreq(seq, DGRAM_RMW, addr, (uint32_t)size);
    r.rmw_op = (uint8_t)op;
    r.value = value;
    return r;
}

/* A request and its data (puts and accumulates: len bytes of `data`), 8-byte aligned. */
static void dg_add(const struct dgram_request *r)
{
    size_t payload = dgram_op_carries(r->op) ? r->len : 0;
    if (!dg_len)
        dg_len = sizeof(struct dgram_header);
    memset(dg + dg_len, 0, dgram_step(sizeof(*r), payload));
    memcpy(dg + dg_len, r, sizeof(*r));
    memcpy(dg + dg_len + sizeof(*r), data, payload);
    dg_len += dgram_step(sizeof(*r), payload);
    dg_count++;
}

static struct dgram_header dg_header(int rank)
{
    return (struct dgram_header){
        .magic = DGRAM_MAGIC, .kind = DGRAM_REQUESTS, .count = (uint8_t)dg_count, .rank = rank};
}

/* The requests added under header h: framed by the harness as a client sizes them (NATURAL
 * in ctl), or `len` bytes of them (0: all). */
static void dg_emit(int ctl, const struct dgram_header *h, size_t len)
{
    if (!dg_len)
        dg_len = sizeof(*h);
    memcpy(dg, h, sizeof(*h));
    len = len ? len : dg_len;
    put8((uint8_t)ctl);
    if (!(ctl & NATURAL)) {
        put8((uint8_t)len);
        put8((uint8_t)(len >> 8));
    }
    put(dg, len);
    dg_len = 0;
    dg_count = 0;
}

/* The datagram of the requests added, from `rank`. */
static void dg_send(int ctl, int rank, size_t len)
{
    struct dgram_header h = dg_header(rank);
    dg_emit(ctl, &h, len);
}

/* The same, the header saying the client has every answer below `ack`. */
static void dg_send_acked(int ctl, int rank, uint32_t ack)
{
    struct dgram_header h = dg_header(rank);
    h.ack = ack;
    dg_emit(ctl, &h, 0);
}

/* One request in a datagram of its own. */
static void dg_one(int ctl, int rank, const struct dgram_request *r)
{
    dg_add(r);
    dg_send(ctl, rank, 0);
}

/*
 * Ops 5 and 6, once a lock and an unlock, as a client sent them (a mutex of the lock block, its
 * size): refused like any op the server does not serve (DS_EINVAL), taking their numbers and
 * leaving the mutexes' words alone. Alone, beside other requests, delivered twice, lost and
 * sent again (answered from the cache), on what is no mutex; a get of the mutex words after.
 */
static void dgram_locks_refused(void)
{
    struct dgram_request r;
    put8(WORLD_4096_W8);
    r = dreq(0, DGRAM_RESERVED_5, LOCKS, MUTEX);
    dg_one(NATURAL, 5, &r);
    r = dreq(1, DGRAM_RESERVED_6, LOCKS, MUTEX);
    dg_add(&r);
    r = dreq(2, DGRAM_RESERVED_5, LOCKS + MUTEX, MUTEX);
    dg_add(&r);
    r = dreq(3, DGRAM_PUT, A + 64, 8);
    dg_add(&r);
    dg_send(NATURAL | TWICE, 5, 0);
    r = dreq(4, DGRAM_RESERVED_6, LOCKS + MUTEX, MUTEX);
    dg_one(NATURAL | LOST, 5, &r);
    dg_one(NATURAL, 5, &r);
    r = dreq(0, DGRAM_RESERVED_5, LOCKS + 3 * MUTEX, MUTEX);
    dg_add(&r);
    r = dreq(1, DGRAM_RESERVED_5, A, MUTEX);
    dg_add(&r);
    r = dreq(2, DGRAM_RESERVED_6, LOCKS, 8);
    dg_add(&r);
    r = dreq(3, DGRAM_GET, LOCKS, 2 * MUTEX);
    dg_add(&r);
    dg_send(NATURAL, 6, 0);
    save("dgram", "lock-refused");
}

/*
 * The RC carrier (FUZZ_DGRAM_RC): the same requests as SENDs on the rank's
 * connection, numbered in the one sequence space with its datagrams.
 */
static void dgram_rc_corpus(void)
{
    enum { RC = FUZZ_DGRAM_RC, BROKEN = FUZZ_DGRAM_BROKEN };
    struct dgram_request r;

    /* Served on a broken connection (no answer can leave), replayed on a new one: applied
     * once, answered again (the get read again, the Rmw and the refusal from their kept
     * answers). Then datagrams in the next numbers, one repeating an RC number; then RC
     * again, replaying numbers that came as datagrams. */
    put8(WORLD_4096_W8);
    r = dreq(0, DGRAM_PUT, A + 64, 24);
    dg_add(&r);
    r = dacc(1, A + 128, ARMCI_ACC_INT, 16);
    dg_add(&r);
    r = drmw(2, B + 8, ARMCI_FETCH_AND_ADD_LONG, 3);
    dg_add(&r);
    r = dreq(3, DGRAM_GET, A + 64, 80);
    dg_add(&r);
    r = dreq(4, DGRAM_PUT, A - 8, 16);
    dg_add(&r);
    dg_send(NATURAL | RC | BROKEN | TWICE, 5, 0);
    r = dreq(5, DGRAM_PUT, A + 64, 8);
    dg_add(&r);
    r = dreq(6, DGRAM_GET, A + 64, 80);
    dg_add(&r);
    dg_send(NATURAL, 5, 0);
    r = drmw(2, B + 8, ARMCI_FETCH_AND_ADD_LONG, 3);
    dg_one(NATURAL, 5, &r);
    r = dreq(7, DGRAM_PUT, A + 200, 8);
    dg_one(NATURAL | RC, 5, &r);
    r = dreq(6, DGRAM_GET, A + 64, 80);
    dg_one(NATURAL | RC, 5, &r);
    r = dreq(5, DGRAM_PUT, A + 64, 8);
    dg_one(NATURAL | RC, 5, &r);
    save("dgram", "rc-replay");

    /* Eight Rmws over RC on a connection that breaks before any answer leaves (more kept
     * answers than the engine's first ring holds: it grows), replayed on a new one: every
     * one answered with its first value, applied once. */
    put8(WORLD_4096_W8);
    for (uint32_t seq = 0; seq < 8; seq++) {
        r = drmw(seq, A + 8 * (seq % 3), ARMCI_FETCH_AND_ADD_LONG, (int)seq + 1);
        dg_add(&r);
    }
    dg_send(NATURAL | RC | BROKEN | TWICE, 4, 0);
    save("dgram", "rc-kept");

    /* A put left in place: the pull the broken connection cuts short (half its data landed)
     * leaves it unexecuted, its number unused, and the get behind it early; the replay
     * applies both once. A pull refused for its range is answered, broken or not. */
    put8(WORLD_4096_W8);
    r = dreq(0, DGRAM_PUT, A + 300, 64);
    r.pad = 1;
    dg_add(&r);
    r = dreq(1, DGRAM_GET, A + 296, 72);
    dg_add(&r);
    dg_send(NATURAL | RC | BROKEN | TWICE, 6, 0);
    r = dreq(2, DGRAM_PUT, B + FUZZ_DS_B_SIZE - 8, 16);
    r.pad = 1;
    dg_one(NATURAL | RC | BROKEN | TWICE, 6, &r);
    r = dreq(3, DGRAM_PUT, B + 16, 40);
    r.pad = 1;
    dg_one(NATURAL | RC | BROKEN, 6, &r);
    dg_one(NATURAL | RC, 6, &r);
    save("dgram", "rc-pull");

    /* Numbers out of order over RC: early on a working connection (refused) and on a broken
     * one (ignored); an Rmw replayed (its kept value), then again after 256 later numbers
     * pushed its answer out of the ring (refused, never applied again). */
    put8(WORLD_4096_W8);
    r = dreq(3, DGRAM_PUT, A, 8);
    dg_one(NATURAL | RC, 4, &r);
    dg_one(NATURAL | RC | BROKEN, 4, &r);
    r = drmw(0, A + 16, ARMCI_SWAP, 9);
    dg_one(NATURAL | RC, 4, &r);
    dg_one(NATURAL | RC, 4, &r);
    uint32_t seq = 1;
    for (int d = 0; d < 4; d++) {
        for (int i = 0; i < 70; i++) {
            r = dreq(seq++, DGRAM_GET, A + 8 * (uint64_t)i, 8);
            dg_add(&r);
        }
        dg_send(NATURAL, 4, 0);
    }
    r = drmw(0, A + 16, ARMCI_SWAP, 9);
    dg_one(NATURAL | RC, 4, &r);
    save("dgram", "rc-order");
}

static void dgram_corpus(void)
{
    struct dgram_request r;
    put8(WORLD_4096_W8);
    r = dreq(0, DGRAM_PUT, A + 64, 24);
    dg_one(NATURAL, 5, &r);
    save("dgram", "put");

    put8(WORLD_4096_W8);
    r = dreq(0, DGRAM_GET, B + 8, 100);
    dg_one(NATURAL, 5, &r);
    save("dgram", "get");

    put8(WORLD_4096_W8);
    r = dacc(0, A + 128, ARMCI_ACC_INT, 16);
    dg_one(NATURAL, 5, &r);
    r = dacc(1, B + 64, ARMCI_ACC_DBL, 32);
    dg_one(NATURAL, 5, &r);
    save("dgram", "acc");

    put8(WORLD_4096_W8);
    r = drmw(0, B + 8, ARMCI_FETCH_AND_ADD_LONG, 3);
    dg_one(NATURAL, 5, &r);
    r = drmw(1, B + 20, ARMCI_SWAP, 7);
    dg_one(NATURAL, 5, &r);
    r = drmw(2, B + 20, ARMCI_FETCH_AND_ADD, -1);
    dg_one(NATURAL, 5, &r);
    r = drmw(3, A + 8, ARMCI_SWAP_LONG, -5);
    dg_one(NATURAL, 5, &r);
    save("dgram", "rmw");

    /* Several requests in one datagram, numbered 0..4; another client numbers its own. */
    put8(WORLD_4096_W8);
    r = dreq(0, DGRAM_PUT, A + 256, 40);
    dg_add(&r);
    r = dacc(1, A + 264, ARMCI_ACC_INT, 8);
    dg_add(&r);
    r = dreq(2, DGRAM_GET, A + 256, 40);
    dg_add(&r);
    r = drmw(3, A + 256, ARMCI_FETCH_AND_ADD, 1);
    dg_add(&r);
    r = dreq(4, DGRAM_PUT, C, 7);
    dg_add(&r);
    dg_send(NATURAL, 6, 0);
    r = dreq(0, DGRAM_GET, A + 256, 48);
    dg_one(NATURAL, 5, &r);
    save("dgram", "several");

    /* Retransmissions: a datagram delivered twice; the window sent again after a gap (seq 4
     * early, dropped), old numbers answered from the cache, the get read again; then the gap.
     * The put and the accumulate have ranges of their own: running either again shows. */
    put8(WORLD_4096_W8);
    r = dreq(0, DGRAM_PUT, A + 512, 16);
    dg_add(&r);
    r = dacc(1, A + 528, ARMCI_ACC_INT, 16);
    dg_add(&r);
    dg_send(NATURAL | TWICE, 5, 0);
    r = dreq(2, DGRAM_GET, A + 512, 32);
    dg_one(NATURAL, 5, &r);
    r = dreq(4, DGRAM_PUT, A + 600, 8);
    dg_one(NATURAL, 5, &r);
    r = dreq(0, DGRAM_PUT, A + 512, 16);
    dg_add(&r);
    r = dacc(1, A + 528, ARMCI_ACC_INT, 16);
    dg_add(&r);
    r = dreq(2, DGRAM_GET, A + 512, 32);
    dg_add(&r);
    r = drmw(3, A + 520, ARMCI_FETCH_AND_ADD, 5);
    dg_add(&r);
    r = dreq(4, DGRAM_PUT, A + 600, 8);
    dg_add(&r);
    dg_send(NATURAL | TWICE, 5, 0);
    save("dgram", "retransmission");

    /* A full window of Rmws (more answers than the engine keeps at first: its ring grows and
     * keeps them all), sent again: every one answered with its first value, applied once.
     * Then sent again acking 6: numbers 0-5 get no answer (the client has them), 6 and 7 do. */
    put8(WORLD_4096_W8);
    for (int round = 0; round < 3; round++) {
        for (uint32_t seq = 0; seq < 8; seq++) {
            r = drmw(seq, A + 8 * (seq % 3), ARMCI_FETCH_AND_ADD, (int)seq + 1);
            dg_add(&r);
        }
        dg_send_acked(NATURAL, 5, round == 2 ? 6 : 0);
    }
    save("dgram", "acked");

    /* 256-byte datagrams, a window of 2: a get of the most an answer holds (216 bytes) and one
     * more; answers split over datagrams; a number two windows old gets no answer. */
    put8(WORLD_256_W2);
    r = dreq(0, DGRAM_GET, B, 216);
    dg_add(&r);
    dg_send(NATURAL, 4, 0);
    r = dreq(1, DGRAM_GET, B, 217);
    dg_one(NATURAL, 4, &r);
    for (uint32_t seq = 2; seq < 5; seq++) {
        r = dreq(seq, DGRAM_GET, A + 8 * seq, 64);
        dg_add(&r);
    }
    dg_send(NATURAL, 4, 0);
    r = dreq(5, DGRAM_PUT, A, 8);
    dg_add(&r);
    r = dreq(2, DGRAM_GET, A + 16, 64);
    dg_add(&r);
    r = dreq(4, DGRAM_GET, A + 32, 64);
    dg_add(&r);
    dg_send(NATURAL, 4, 0);
    save("dgram", "small-datagrams");

    /* No free send buffer at first (the server drains and sends again), none at all (the
     * answers are lost: the client retransmits, answered from the cache). */
    put8(WORLD_4096_W8);
    r = dreq(0, DGRAM_PUT, B + 100, 8);
    dg_one(NATURAL | BUSY, 7, &r);
    r = dacc(1, B + 100, ARMCI_ACC_INT, 8);
    dg_one(NATURAL | LOST, 7, &r);
    dg_one(NATURAL, 7, &r);
    save("dgram", "send-buffers");

    /* Forged: a rank's datagrams from another rank's UD data QP, once and twice; the same
     * from the rank named. */
    put8(WORLD_4096_W8);
    r = dreq(0, DGRAM_PUT, A + 64, 24);
    dg_one(NATURAL | FORGED, 5, &r);
    dg_one(NATURAL | FORGED | TWICE | 0x20, 5, &r);
    r = drmw(0, B + 8, ARMCI_SWAP_LONG, 1);
    dg_one(NATURAL | FORGED | 0xc0, 0, &r);
    dg_one(NATURAL, 5, &r);
    save("dgram", "forged");

    /* Malformed headers and framing. */
    put8(WORLD_4096_W8);
    r = dreq(0, DGRAM_PUT, A, 8);
    dg_add(&r);
    dg_send(0, 5, 10); /* shorter than a header */
    struct dgram_header h = dg_header(5);
    h.magic ^= 1;
    dg_add(&r);
    dg_emit(0, &h, 0);
    h = dg_header(5);
    h.kind = DGRAM_ANSWERS;
    dg_add(&r);
    dg_emit(0, &h, 0);
    dg_send(0, 5, 0); /* no requests */
    dg_add(&r);
    dg_send(0, 8, 0); /* a rank past the job's */
    dg_add(&r);
    dg_send(0, -1, 0);
    dg_add(&r);
    h = dg_header(5);
    h.count = 2; /* carries one */
    dg_emit(0, &h, 0);
    r = dreq(1, DGRAM_PUT, A, 100);
    dg_add(&r);
    dg_send(0, 5, sizeof(struct dgram_header) + sizeof(r) + 50); /* its data cut short */
    r = dreq(1, DGRAM_GET, A, 8);
    dg_add(&r);
    dg_send(0, 5, sizeof(struct dgram_header) + sizeof(r) - 1); /* the request cut short */
    dg_add(&r);
    dg_send(0, 5, 0);
    save("dgram", "edge-malformed");

    /* Ranges at the segments' ends and past them; bad operands. */
    put8(WORLD_4096_W8);
    uint32_t seq = 0;
    struct dgram_request edges[] = {
        dreq(seq++, DGRAM_PUT, B + FUZZ_DS_B_SIZE - 8, 8),
        dreq(seq++, DGRAM_PUT, B + FUZZ_DS_B_SIZE - 8, 9),
        dreq(seq++, DGRAM_PUT, A - 8, 16),
        dreq(seq++, DGRAM_PUT, A + FUZZ_DS_A_SIZE, 0),
        dreq(seq++, DGRAM_GET, C, FUZZ_DS_C_SIZE),
        dreq(seq++, DGRAM_GET, C, FUZZ_DS_C_SIZE + 1),
        dreq(seq++, DGRAM_GET, A, 0),
        dreq(seq++, DGRAM_GET, LOCKS, 16),
        dreq(seq++, DGRAM_PUT, LOCKS, 16),
        dacc(seq++, C, ARMCI_ACC_INT, 8),
        dacc(seq++, A, ARMCI_ACC_INT, 6),
        dacc(seq++, A, 6, 8),
        dacc(seq++, A, ARMCI_ACC_INT, 8),
        drmw(seq++, A + 2, ARMCI_FETCH_AND_ADD, 1),
        drmw(seq++, A, ARMCI_FETCH_AND_ADD, 1),
        drmw(seq++, B + FUZZ_DS_B_SIZE, ARMCI_SWAP_LONG, 1),
        dreq(seq++, 0, A, 8),
        dreq(seq++, DGRAM_OP_MAX, A, 8),
        drmw(seq++, A, ARMCI_SWAP, 1),
    };
    edges[12].target_local = 4;
    edges[14].len = 8; /* an int Rmw of 8 bytes */
    edges[18].rmw_op = 9;
    for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
        dg_add(&edges[i]);
    dg_send(NATURAL, 3, 0);
    r = dacc(seq++, A, ARMCI_ACC_INT, 8);
    r.target_local = -1;
    dg_one(NATURAL, 3, &r);
    save("dgram", "edge-ranges");

    dgram_locks_refused();
    dgram_rc_corpus();
}

static void dict_bytes(FILE *f, const char *name, const void *p, size_t n)
{
    fprintf(f, "%s=\"", name);
    for (size_t b = 0; b < n; b++)
        fprintf(f, "\\x%02x", ((const uint8_t *)p)[b]);
    fprintf(f, "\"\n");
}

/* Every segment's first and last byte, one before and one past: 8-byte entries for libFuzzer.
 * For dgram, also the other mutexes' addresses and the op-to-len bytes of what was a lock and
 * an unlock request, now refused (struct dgram_request: op, datatype, rmw_op, pad, len). */
static void dictionary(const char *target)
{
    const uint64_t seg[][2] = {{FUZZ_DS_A_OFFSET, FUZZ_DS_A_SIZE},
                               {FUZZ_DS_B_OFFSET, FUZZ_DS_B_SIZE},
                               {FUZZ_DS_LOCK_OFFSET, FUZZ_DS_LOCKS * MUTEX},
                               {FUZZ_DS_C_OFFSET, FUZZ_DS_C_SIZE}};
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s.dict", root, target);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    fprintf(f, "# Segment boundaries%s of the %s target (written by make_corpus.c).\n",
            strcmp(target, "dgram") ? "" : ", mutexes and lock requests", target);
    for (size_t i = 0; i < sizeof(seg) / sizeof(seg[0]); i++) {
        uint64_t start = FUZZ_DS_ARENA + seg[i][0], end = start + seg[i][1];
        const uint64_t at[] = {start - 1, start, end - 1, end};
        for (size_t k = 0; k < 4; k++) {
            char name[32];
            snprintf(name, sizeof(name), "seg%zu_%zu", i, k);
            dict_bytes(f, name, &at[k], sizeof(at[k]));
        }
    }
    if (!strcmp(target, "dgram")) {
        for (int k = 1; k < FUZZ_DS_LOCKS; k++) {
            char name[32];
            uint64_t at = LOCKS + (uint64_t)k * MUTEX;
            snprintf(name, sizeof(name), "mutex%d", k);
            dict_bytes(f, name, &at, sizeof(at));
        }
        const uint8_t lock[8] = {DGRAM_RESERVED_5, 0, 0, 0, (uint8_t)MUTEX, 0, 0, 0};
        const uint8_t unlock[8] = {DGRAM_RESERVED_6, 0, 0, 0, (uint8_t)MUTEX, 0, 0, 0};
        dict_bytes(f, "lock_op_len", lock, sizeof(lock));
        dict_bytes(f, "unlock_op_len", unlock, sizeof(unlock));
    }
    if (fclose(f)) {
        perror(path);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR (tests/fuzz)\n", argv[0]);
        return 1;
    }
    root = argv[1];
    ds_corpus();
    dictionary("ds");
    ud_corpus();
    dgram_corpus();
    dictionary("dgram");
    return 0;
}
