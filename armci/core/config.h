/*
 * Every environment variable the runtime reads, parsed once in ARMCI_Init
 * from one table (config_table in config.c): name, type, default, range,
 * whether ranks must agree, help. docs/ENVIRONMENT.md is checked against
 * the table (test env-doc); armci-info -c prints the effective values.
 */
#ifndef ARMCI_CORE_CONFIG_H
#define ARMCI_CORE_CONFIG_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum cfg_verbs { CFG_VERBS_AUTO, CFG_VERBS_RDMA_CORE, CFG_VERBS_SOFTIB };
enum cfg_connect { CFG_CONNECT_ONDEMAND, CFG_CONNECT_STATIC };
enum cfg_protocol { CFG_PROTOCOL_OVERLAP, CFG_PROTOCOL_SERIAL };
enum cfg_barrier { CFG_BARRIER_RDMA, CFG_BARRIER_MPI };
enum cfg_rmw { CFG_RMW_AUTO, CFG_RMW_DEVICE, CFG_RMW_SERVER };
enum cfg_vector { CFG_VECTOR_AUTO, CFG_VECTOR_RDMA, CFG_VECTOR_SERVER };
enum cfg_hybrid { CFG_HYBRID_AUTO, CFG_HYBRID_OFF, CFG_HYBRID_UD };
enum cfg_wait { CFG_WAIT_AUTO, CFG_WAIT_SPIN, CFG_WAIT_YIELD };
enum cfg_report { CFG_REPORT_OFF, CFG_REPORT_STDOUT, CFG_REPORT_STDERR, CFG_REPORT_FILE };

struct config {
    int node_size;              /* ARMCI_NODE_SIZE: ranks per virtual node, 0 = by host */
    bool verbose;               /* ARMCI_VERBOSE */
    enum cfg_verbs verbs;       /* ARMCI_VERBS */
    const char *softib_library; /* ARMCI_SOFTIB_LIBRARY: NULL = search */
    const char *device;         /* ARMCI_IB_DEVICE: verbs device name, NULL = first active */
    int port;                   /* ARMCI_IB_PORT */
    int gid_index;              /* ARMCI_IB_GID_INDEX: -1 = choose automatically */
    int ib_timeout;             /* ARMCI_IB_TIMEOUT: RC ACK timeout exponent */
    int ib_retry;               /* ARMCI_IB_RETRY: RC retransmissions */
    bool server_poll;           /* ARMCI_SERVER_POLL: data server spins instead of blocking */
    double server_spin_us;      /* ARMCI_SERVER_SPIN_US: longest poll after work (linger.h) */
    enum cfg_wait wait;         /* ARMCI_WAIT: how waiting threads poll (core/wait_policy.h) */
    int send_wqes;              /* ARMCI_SEND_WQES: send-queue depth of each client QP */
    int server_credits;         /* ARMCI_SERVER_CREDITS: outstanding requests per client */
    int server_bufs;            /* ARMCI_SERVER_BUFS: receive buffers in the server SRQ */
    size_t server_buf_size;     /* ARMCI_SERVER_BUF_SIZE: bytes per server request buffer */
    size_t bounce_size;         /* ARMCI_BOUNCE_SIZE: bytes per client bounce buffer */
    int bounce_count;           /* ARMCI_BOUNCE_COUNT: client bounce buffers */
    int reg_cache;              /* ARMCI_REG_CACHE: cached registrations of user memory */
    enum cfg_connect connect;   /* ARMCI_CONNECT */
    enum cfg_protocol protocol; /* ARMCI_CONNECT_PROTOCOL */
    double connect_timeout;     /* ARMCI_CONNECT_TIMEOUT, seconds */
    double recovery_timeout;    /* ARMCI_RECOVERY_TIMEOUT, seconds (0: no recovery) */
    double connect_retry_us;    /* ARMCI_CONNECT_RETRY_US */
    double connect_rto;         /* the same in seconds: first retransmission timeout */
    const char *report_spec;    /* ARMCI_CONN_REPORT as given (NULL: default) */
    enum cfg_report report_to;  /* where the connection report goes */
    const char *report_file;    /* CFG_REPORT_FILE: the path after "file:" */
    const char *conn_map_spec;  /* ARMCI_CONN_MAP as given (NULL: no map) */
    const char *conn_map_file;  /* its path after "file:" (NULL: no map) */
    enum cfg_barrier barrier;   /* ARMCI_BARRIER */
    enum cfg_rmw rmw;           /* ARMCI_RMW: how ARMCI_Rmw reaches other nodes */
    enum cfg_vector vector;     /* ARMCI_VECTOR: short vector segments by RDMA or the server */
    int qp_pool;                /* ARMCI_QP_POOL: QPs made ahead for first contacts */
    int max_connections;        /* ARMCI_MAX_CONNECTIONS: 0 = no cap */
    int directory_bytes;        /* ARMCI_DIRECTORY_BYTES: holders' addresses a node keeps */
    int max_server_connections; /* ARMCI_MAX_SERVER_CONNECTIONS: a data server's soft cap */
    enum cfg_hybrid hybrid;     /* ARMCI_HYBRID: small operations over UD without a connection */
    bool hybrid_on;             /* the UD data path is in use (ARMCI_HYBRID's auto rule applied) */
    int hybrid_promote;         /* ARMCI_HYBRID_PROMOTE: operations before a node gets RC */
    size_t hybrid_size;         /* ARMCI_HYBRID_SIZE: bytes per data datagram (at most the MTU) */
    int hybrid_window;          /* ARMCI_HYBRID_WINDOW: requests in flight per node */
    size_t hybrid_segmented;    /* ARMCI_HYBRID_SEGMENTED: bytes over UD when cut into requests */
    double hybrid_rto;          /* ARMCI_HYBRID_RTO_US, in seconds: first retransmission timeout */
    double hybrid_rto_us;
    double hybrid_timeout;  /* ARMCI_HYBRID_TIMEOUT: seconds of silence before a node is lost */
    long strided_threshold; /* ARMCI_STRIDED_THRESHOLD: -1 cost model, else RDMA for chunks >= N */
    int test_hooks;         /* ARMCI_TEST_HOOKS: fault injection (fault.h) */
    int test_expect_np;     /* ARMCI_TEST_EXPECT_NP: processes the launcher was asked for */
    int test_expect_nodes;  /* ARMCI_TEST_EXPECT_NODES: nodes the test was meant to span */
};

extern struct config cfg;

enum config_kind { CFG_INT, CFG_LONG, CFG_SIZE, CFG_DOUBLE, CFG_BOOL, CFG_CHOICE, CFG_STRING };

struct config_entry {
    const char *name; /* the environment variable */
    enum config_kind kind;
    size_t offset;              /* of the field in struct config */
    const char *dflt;           /* default, written as the environment would be */
    double min, max;            /* numbers: the accepted range */
    const char *const *choices; /* CFG_CHOICE: NULL-terminated; the field is the index */
    bool must_match;            /* wire- or layout-relevant: every rank must agree */
    const char *help;           /* one line */
};

extern const struct config_entry config_table[];
extern const int config_table_size;

/* Parses the environment; errors name the variable and abort. */
void cfg_load(void);

/* Warns about each ARMCI_* or SOFTIB_* entry of env (environ) that no table
 * names, with the nearest known name: a misspelling is otherwise ignored. */
void config_warn_unknown(char **env);

/* Collective: ends the job, naming the variable, if ranks disagree on a must_match one. */
void config_check_agreement(MPI_Comm comm);

/* Collective, once the layout is known: whether the hybrid UD path is on (ARMCI_HYBRID's
 * auto rule, cfg.hybrid_on). */
void config_resolve_hybrid(MPI_Comm comm, int nodes);

/* The text a variable is parsed from: its environment value, else the default. */
const char *config_source(const struct config_entry *e);
/* The effective value as a number (choices: their index; strings: 0). */
double config_numeric(const struct config_entry *e);
/* The effective value as text. */
void config_format(const struct config_entry *e, char *buf, size_t len);
/* Every variable with its effective value, or (markdown) the table's documentation rows. */
void config_dump(FILE *out, bool markdown);

#endif
