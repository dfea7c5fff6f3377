/*
 * lj: Lennard-Jones molecular dynamics with force decomposition and dynamic
 * load balancing, after the Global Arrays LJ benchmark of the ODCM paper.
 *
 * N = 4 c^3 atoms start on an fcc lattice (slightly displaced) in a periodic
 * cube at liquid density; reduced units, cutoff 2.5 with the potential
 * shifted to 0 there. Atoms are grouped into blocks of B; positions and forces
 * are global arrays in ARMCI memory with block b on process b mod P. The force
 * matrix is cut into block pairs (bi <= bj), handed out by a shared task
 * counter (ARMCI_Rmw fetch-and-add on rank 0): a task gets both position
 * blocks with ARMCI_Get, computes the pair forces once (Newton's third law)
 * and adds them to both force blocks with ARMCI_Acc. Velocity Verlet moves
 * each process's own atoms, with an ARMCI_Barrier between phases.
 *
 * Verification: total energy must be conserved to a relative 1e-3 over the
 * run, and (unless -r 0) rank 0 repeats the run serially with the same
 * kernel and compares the first forces and the final positions.
 */
#include "app_common.h"

#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] = "usage: lj [-c CELLS] [-s STEPS] [-b BLOCK] [-t DT] [-r 0|1]\n"
                            "  -c CELLS  fcc unit cells per box side, 4 c^3 atoms (default 6)\n"
                            "  -s STEPS  time steps (default 100)\n"
                            "  -b BLOCK  atoms per block of the force decomposition (default 32)\n"
                            "  -t DT     time step in reduced units, at most 0.01 (default 0.004)\n"
                            "  -r 0|1    compare with a serial run on rank 0 (default 1)\n";

#define LJ_DENSITY     0.8442 /* reduced density and temperature: the classic LJ liquid */
#define LJ_TEMPERATURE 0.72
#define LJ_CUTOFF      2.5
#define LJ_JITTER      0.05 /* lattice displacement, so that the first forces are not ~0 */
#define LJ_SEED        12345

/* Tolerances: energy drift of Verlet at these steps, and summation-order noise vs serial. */
#define ENERGY_TOL   1e-3
#define FORCE_TOL    1e-10
#define POSITION_TOL 1e-6

struct lj_options {
    int cells, steps, block, reference;
    double dt;
};

struct lj_params {
    int cells, natoms;
    double box, rc2, ecut, dt;
};

/* Block decomposition: block b holds atoms [b*bs, ...) and lives on process b % nproc. */
struct lj_layout {
    int bs, nblocks, nproc, me;
    int nslots; /* blocks this process holds */
};

struct lj_system {
    struct lj_params p;
    struct lj_layout lay;
    void **pos, **force, **counter; /* global arrays; the counter is one int on rank 0 */
    double *x, *v, *f;              /* own atoms, slot order, padded to whole blocks */
    double *zeros;                  /* a zero force slice, to clear the global one */
    double *xa, *xb, *fa, *fb;      /* one task's position and force blocks */
    int (*tasks)[2];                /* the block pairs of the force matrix */
    int ntasks;
};

/* Energies of one run, for the conservation check. */
struct lj_energy {
    double e0, last, max_drift;
};

static struct lj_options parse_options(int argc, char **argv)
{
    struct lj_options opt = {.cells = 6, .steps = 100, .block = 32, .reference = 1, .dt = 0.004};
    int c;
    opterr = 0; /* every rank would print getopt's message; rank 0 reports below */
    while ((c = getopt(argc, argv, "c:s:b:t:r:h")) != -1) {
        switch (c) {
        case 'c':
            /* 3 cells is the smallest box wider than twice the cutoff (minimum image) */
            opt.cells = (int)app_parse_long("lj", "-c", optarg, 3, 64);
            break;
        case 's':
            opt.steps = (int)app_parse_long("lj", "-s", optarg, 0, 1000000);
            break;
        case 'b':
            opt.block = (int)app_parse_long("lj", "-b", optarg, 1, 1 << 20);
            break;
        case 't':
            opt.dt = app_parse_double("lj", "-t", optarg, 1e-6, 0.01);
            break;
        case 'r':
            opt.reference = (int)app_parse_long("lj", "-r", optarg, 0, 1);
            break;
        default:
            app_usage_error("lj", usage, "unknown option or missing value: -%c", optopt);
        }
    }
    if (optind < argc)
        app_usage_error("lj", usage, "unexpected argument '%s'", argv[optind]);
    long blocks = (4L * opt.cells * opt.cells * opt.cells + opt.block - 1) / opt.block;
    if (blocks * (blocks + 1) / 2 > INT_MAX)
        app_usage_error("lj", usage, "%ld blocks make too many tasks: use a larger -b", blocks);
    return opt;
}

static struct lj_params make_params(const struct lj_options *opt)
{
    struct lj_params p;
    p.cells = opt->cells;
    p.natoms = 4 * opt->cells * opt->cells * opt->cells;
    p.box = opt->cells * cbrt(4.0 / LJ_DENSITY);
    p.rc2 = LJ_CUTOFF * LJ_CUTOFF;
    double ir6 = 1.0 / (p.rc2 * p.rc2 * p.rc2);
    p.ecut = 4.0 * ir6 * (ir6 - 1.0);
    p.dt = opt->dt;
    return p;
}

/* ---- physics, shared by the parallel and the serial run -------------------------------- */

/* Nearest periodic image of a coordinate difference. */
static double min_image(double d, double box)
{
    return d - box * nearbyint(d / box);
}

/*
 * Pair forces between atoms a[0..na) and b[0..nb) (xyz triples), added to fa
 * and fb; returns their potential energy. With same != 0, a and b are one
 * block (fa == fb allowed) and each pair is counted once.
 */
static double pair_forces(const struct lj_params *p, const double *a, int na, const double *b,
                          int nb, int same, double *fa, double *fb)
{
    double energy = 0.0;
    for (int i = 0; i < na; i++) {
        for (int j = same ? i + 1 : 0; j < nb; j++) {
            double d[3], r2 = 0.0;
            for (int k = 0; k < 3; k++) {
                d[k] = min_image(a[3 * i + k] - b[3 * j + k], p->box);
                r2 += d[k] * d[k];
            }
            if (r2 >= p->rc2)
                continue;
            double ir2 = 1.0 / r2, ir6 = ir2 * ir2 * ir2;
            double fr = 24.0 * ir6 * (2.0 * ir6 - 1.0) * ir2; /* |F| / r */
            energy += 4.0 * ir6 * (ir6 - 1.0) - p->ecut;
            for (int k = 0; k < 3; k++) {
                fa[3 * i + k] += fr * d[k];
                fb[3 * j + k] -= fr * d[k];
            }
        }
    }
    return energy;
}

/* v += h f over n values (unit mass). */
static void kick(double *v, const double *f, size_t n, double h)
{
    for (size_t i = 0; i < n; i++)
        v[i] += h * f[i];
}

/* x += dt v, wrapped back into the box. */
static void drift(double *x, const double *v, size_t n, double dt, double box)
{
    for (size_t i = 0; i < n; i++) {
        x[i] += dt * v[i];
        x[i] -= box * floor(x[i] / box);
    }
}

static double kinetic_energy(const double *v, size_t n)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += v[i] * v[i];
    return 0.5 * sum;
}

/* Noise in [-0.5, 0.5) for one (atom, component, purpose): 0 lattice jitter, 1 velocity. */
static double atom_noise(int atom, int component, int purpose)
{
    return app_noise(LJ_SEED, (uint64_t)atom << 8 | (uint64_t)(component << 2 | purpose));
}

/* Atom `atom` of the fcc lattice, displaced by up to LJ_JITTER per component. */
static void lattice_site(const struct lj_params *p, int atom, double x[3])
{
    static const double basis[4][3] = {{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}};
    int c = p->cells, cell = atom / 4;
    double a = p->box / c;
    int cx = cell % c, cy = cell / c % c, cz = cell / c / c;
    int cell_pos[3] = {cx, cy, cz};
    for (int k = 0; k < 3; k++)
        x[k] = (cell_pos[k] + basis[atom % 4][k]) * a + 2.0 * LJ_JITTER * atom_noise(atom, k, 0);
}

/*
 * Initial velocities: noise with the centre-of-mass motion removed, scaled to
 * LJ_TEMPERATURE. Both corrections need every atom, so every process computes
 * them over all N (cheap) and then keeps only its own atoms.
 */
struct velocity_norm {
    double mean[3], scale;
};

static struct velocity_norm velocity_norm(const struct lj_params *p)
{
    struct velocity_norm vn = {{0, 0, 0}, 1.0};
    double sum2 = 0.0;
    for (int i = 0; i < p->natoms; i++)
        for (int k = 0; k < 3; k++)
            vn.mean[k] += atom_noise(i, k, 1) / p->natoms;
    for (int i = 0; i < p->natoms; i++)
        for (int k = 0; k < 3; k++) {
            double v = atom_noise(i, k, 1) - vn.mean[k];
            sum2 += v * v;
        }
    vn.scale = sqrt(3.0 * p->natoms * LJ_TEMPERATURE / sum2);
    return vn;
}

/* Position and velocity of atoms [first, first + n) into x and v. */
static void initial_atoms(const struct lj_params *p, const struct velocity_norm *vn, int first,
                          int n, double *x, double *v)
{
    for (int i = 0; i < n; i++) {
        lattice_site(p, first + i, &x[3 * i]);
        for (int k = 0; k < 3; k++)
            v[3 * i + k] = (atom_noise(first + i, k, 1) - vn->mean[k]) * vn->scale;
    }
    drift(x, v, 3 * (size_t)n, 0.0, p->box); /* wrap jittered sites into the box */
}

static void energy_start(struct lj_energy *e, double total)
{
    e->e0 = e->last = total;
    e->max_drift = 0.0;
}

static void energy_record(struct lj_energy *e, double total)
{
    e->last = total;
    e->max_drift = fmax(e->max_drift, fabs(total - e->e0) / fabs(e->e0));
}

/* ---- the distributed system ------------------------------------------------------------ */

static int block_atoms(const struct lj_system *s, int b)
{
    int rest = s->p.natoms - b * s->lay.bs;
    return rest < s->lay.bs ? rest : s->lay.bs;
}

static int block_owner(const struct lj_system *s, int b)
{
    return b % s->lay.nproc;
}

/* Address of block b in global array `arr`: slot b / nproc of its owner. */
static void *block_addr(const struct lj_system *s, void **arr, int b)
{
    size_t slot_bytes = (size_t)s->lay.bs * 3 * sizeof(double);
    return app_remote_addr(arr, block_owner(s, b), (size_t)(b / s->lay.nproc) * slot_bytes);
}

static size_t own_values(const struct lj_system *s)
{
    return (size_t)s->lay.nslots * s->lay.bs * 3;
}

static struct lj_layout make_layout(const struct lj_params *p, int bs)
{
    struct lj_layout lay = {.bs = bs};
    lay.nblocks = (p->natoms + bs - 1) / bs;
    lay.nproc = armci_msg_nproc();
    lay.me = armci_msg_me();
    lay.nslots = lay.nblocks > lay.me ? (lay.nblocks - lay.me + lay.nproc - 1) / lay.nproc : 0;
    return lay;
}

/* Every block pair (bi <= bj), row by row: the task list the counter indexes. */
static void make_tasks(struct lj_system *s)
{
    int nb = s->lay.nblocks;
    s->ntasks = nb * (nb + 1) / 2;
    s->tasks = app_xmalloc(sizeof(*s->tasks) * (size_t)s->ntasks);
    int t = 0;
    for (int bi = 0; bi < nb; bi++)
        for (int bj = bi; bj < nb; bj++) {
            s->tasks[t][0] = bi;
            s->tasks[t][1] = bj;
            t++;
        }
}

static double *zeroed_doubles(size_t n)
{
    double *p = app_xmalloc(n * sizeof(double));
    memset(p, 0, n * sizeof(double));
    return p;
}

static struct lj_system system_create(const struct lj_options *opt)
{
    struct lj_system s = {.p = make_params(opt)};
    s.lay = make_layout(&s.p, opt->block);
    size_t n = own_values(&s), nblock = (size_t)s.lay.bs * 3;
    s.pos = app_malloc_global(n * sizeof(double));
    s.force = app_malloc_global(n * sizeof(double));
    s.counter = app_malloc_global(s.lay.me == 0 ? sizeof(int) : 0);
    s.x = zeroed_doubles(n);
    s.v = zeroed_doubles(n);
    s.f = zeroed_doubles(n);
    s.zeros = zeroed_doubles(n);
    s.xa = zeroed_doubles(nblock);
    s.xb = zeroed_doubles(nblock);
    s.fa = zeroed_doubles(nblock);
    s.fb = zeroed_doubles(nblock);
    make_tasks(&s);
    return s;
}

static void system_destroy(struct lj_system *s)
{
    app_free_global(s->pos);
    app_free_global(s->force);
    app_free_global(s->counter);
    double *bufs[] = {s->x, s->v, s->f, s->zeros, s->xa, s->xb, s->fa, s->fb};
    for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
        free(bufs[i]);
    free(s->tasks);
}

static void put_own(const struct lj_system *s, void **arr, double *src)
{
    int bytes = (int)(own_values(s) * sizeof(double));
    if (bytes > 0 && ARMCI_Put(src, arr[s->lay.me], bytes, s->lay.me) != 0)
        app_die("ARMCI_Put of the own slice failed");
}

static void get_own(const struct lj_system *s, void **arr, double *dst)
{
    int bytes = (int)(own_values(s) * sizeof(double));
    if (bytes > 0 && ARMCI_Get(arr[s->lay.me], dst, bytes, s->lay.me) != 0)
        app_die("ARMCI_Get of the own slice failed");
}

/* Publishes positions, clears the global forces and (rank 0) rewinds the task counter. */
static void prepare_force_phase(const struct lj_system *s)
{
    put_own(s, s->pos, s->x);
    put_own(s, s->force, s->zeros);
    if (s->lay.me == 0 && ARMCI_PutValueInt(0, s->counter[0], 0) != 0)
        app_die("ARMCI_PutValueInt of the task counter failed");
    ARMCI_Barrier();
}

/* Collective: own atoms' initial state, published. */
static void system_init(struct lj_system *s)
{
    struct velocity_norm vn = velocity_norm(&s->p);
    size_t stride = (size_t)s->lay.bs * 3;
    for (int slot = 0; slot < s->lay.nslots; slot++) {
        int b = slot * s->lay.nproc + s->lay.me;
        initial_atoms(&s->p, &vn, b * s->lay.bs, block_atoms(s, b), s->x + slot * stride,
                      s->v + slot * stride);
    }
    prepare_force_phase(s);
}

static void get_block(const struct lj_system *s, void **arr, int b, double *dst)
{
    int bytes = block_atoms(s, b) * 3 * (int)sizeof(double);
    if (ARMCI_Get(block_addr(s, arr, b), dst, bytes, block_owner(s, b)) != 0)
        app_die("ARMCI_Get of block %d failed", b);
}

static void acc_block(const struct lj_system *s, int b, double *src)
{
    double one = 1.0;
    int bytes = block_atoms(s, b) * 3 * (int)sizeof(double);
    if (ARMCI_Acc(ARMCI_ACC_DBL, &one, src, block_addr(s, s->force, b), bytes, block_owner(s, b)) !=
        0)
        app_die("ARMCI_Acc to force block %d failed", b);
}

/* One task: the forces between blocks bi and bj, accumulated into the global force array. */
static double do_task(struct lj_system *s, int bi, int bj)
{
    size_t nblock = (size_t)s->lay.bs * 3;
    int ni = block_atoms(s, bi), nj = block_atoms(s, bj);
    memset(s->fa, 0, nblock * sizeof(double));
    get_block(s, s->pos, bi, s->xa);
    if (bi == bj) {
        double e = pair_forces(&s->p, s->xa, ni, s->xa, ni, 1, s->fa, s->fa);
        acc_block(s, bi, s->fa);
        return e;
    }
    memset(s->fb, 0, nblock * sizeof(double));
    get_block(s, s->pos, bj, s->xb);
    double e = pair_forces(&s->p, s->xa, ni, s->xb, nj, 0, s->fa, s->fb);
    acc_block(s, bi, s->fa);
    acc_block(s, bj, s->fb);
    return e;
}

static int next_task(const struct lj_system *s)
{
    int t;
    if (ARMCI_Rmw(ARMCI_FETCH_AND_ADD, &t, s->counter[0], 1, 0) != 0)
        app_die("ARMCI_Rmw on the task counter failed");
    return t;
}

/* Collective: tasks until the counter runs out; own forces into s->f. Returns the total PE. */
static double compute_forces(struct lj_system *s)
{
    double pe = 0.0;
    for (int t = next_task(s); t < s->ntasks; t = next_task(s))
        pe += do_task(s, s->tasks[t][0], s->tasks[t][1]);
    ARMCI_Barrier();
    get_own(s, s->force, s->f);
    return app_sum_over_procs(pe);
}

static double total_energy(const struct lj_system *s, double pe)
{
    return pe + app_sum_over_procs(kinetic_energy(s->v, own_values(s)));
}

/* Collective: one velocity-Verlet step (forces in s->f on entry and on exit). */
static double step(struct lj_system *s)
{
    size_t n = own_values(s);
    kick(s->v, s->f, n, 0.5 * s->p.dt);
    drift(s->x, s->v, n, s->p.dt, s->p.box);
    prepare_force_phase(s);
    double pe = compute_forces(s);
    kick(s->v, s->f, n, 0.5 * s->p.dt);
    return total_energy(s, pe);
}

/* Rank 0: every atom's values of global array arr, in atom order. */
static void gather(const struct lj_system *s, void **arr, double *out)
{
    for (int b = 0; b < s->lay.nblocks; b++)
        get_block(s, arr, b, out + (size_t)b * s->lay.bs * 3);
}

/* ---- serial reference (rank 0) --------------------------------------------------------- */

struct lj_serial {
    double *x, *v, *f, *first_forces;
};

static double serial_forces(const struct lj_params *p, const double *x, double *f)
{
    memset(f, 0, 3 * (size_t)p->natoms * sizeof(double));
    return pair_forces(p, x, p->natoms, x, p->natoms, 1, f, f);
}

/* The whole run on one process, same kernel and integrator: final state in r. */
static void serial_run(const struct lj_params *p, int steps, struct lj_serial *r)
{
    size_t n = 3 * (size_t)p->natoms;
    struct velocity_norm vn = velocity_norm(p);
    initial_atoms(p, &vn, 0, p->natoms, r->x, r->v);
    serial_forces(p, r->x, r->f);
    memcpy(r->first_forces, r->f, n * sizeof(double));
    for (int s = 0; s < steps; s++) {
        kick(r->v, r->f, n, 0.5 * p->dt);
        drift(r->x, r->v, n, p->dt, p->box);
        serial_forces(p, r->x, r->f);
        kick(r->v, r->f, n, 0.5 * p->dt);
    }
}

/* max |a - b| / max |b| */
static double rel_max_diff(const double *a, const double *b, size_t n)
{
    double diff = 0.0, scale = 0.0;
    for (size_t i = 0; i < n; i++) {
        diff = fmax(diff, fabs(a[i] - b[i]));
        scale = fmax(scale, fabs(b[i]));
    }
    return scale > 0.0 ? diff / scale : diff;
}

/* Largest periodic distance between corresponding coordinates. */
static double max_position_diff(const double *a, const double *b, size_t n, double box)
{
    double diff = 0.0;
    for (size_t i = 0; i < n; i++)
        diff = fmax(diff, fabs(min_image(a[i] - b[i], box)));
    return diff;
}

/* Results of the comparison with the serial run; negative when it was not made. */
struct lj_check {
    double force_err, pos_err;
};

/* ---- driver ---------------------------------------------------------------------------- */

struct lj_run {
    struct lj_energy energy;
    struct lj_check check;
    double seconds;
    double *first_forces, *final_pos; /* rank 0 with the reference check only */
};

/* Collective: the whole simulation, with what the checks need. */
static void simulate(struct lj_system *s, int steps, int reference, struct lj_run *run)
{
    int keep = reference && s->lay.me == 0;
    size_t all = 3 * (size_t)s->p.natoms;
    run->first_forces = keep ? zeroed_doubles(all) : NULL;
    run->final_pos = keep ? zeroed_doubles(all) : NULL;

    system_init(s);
    energy_start(&run->energy, total_energy(s, compute_forces(s)));
    if (keep)
        gather(s, s->force, run->first_forces);
    ARMCI_Barrier(); /* the gather reads forces the first step clears */

    double t0 = app_now();
    for (int i = 0; i < steps; i++)
        energy_record(&run->energy, step(s));
    run->seconds = app_max_over_procs(app_now() - t0);

    if (keep)
        gather(s, s->pos, run->final_pos);
    ARMCI_Barrier();
}

/* Rank 0: repeats the run serially and compares. */
static struct lj_check compare_with_serial(const struct lj_params *p, int steps,
                                           const struct lj_run *run)
{
    size_t n = 3 * (size_t)p->natoms;
    struct lj_serial r = {zeroed_doubles(n), zeroed_doubles(n), zeroed_doubles(n),
                          zeroed_doubles(n)};
    serial_run(p, steps, &r);
    struct lj_check c;
    c.force_err = rel_max_diff(run->first_forces, r.first_forces, n);
    c.pos_err = max_position_diff(run->final_pos, r.x, n, p->box);
    free(r.x);
    free(r.v);
    free(r.f);
    free(r.first_forces);
    return c;
}

static int passed(const struct lj_run *run)
{
    int ok = run->energy.max_drift <= ENERGY_TOL;
    if (run->check.force_err >= 0.0)
        ok = ok && run->check.force_err <= FORCE_TOL && run->check.pos_err <= POSITION_TOL;
    return ok;
}

/* A check value for the RESULT line: "na" when the check was not made. */
static const char *check_value(double v, char *buf, size_t len)
{
    if (v < 0.0)
        return "na";
    snprintf(buf, len, "%.3e", v);
    return buf;
}

static void report(const struct lj_system *s, int steps, const struct lj_run *run, int pass,
                   uint64_t digest)
{
    if (s->lay.me != 0)
        return;
    double per_step = steps > 0 ? run->seconds / steps : 0.0;
    char fbuf[32], pbuf[32];
    printf("Lennard-Jones MD, %d atoms in a %.3f box, %d steps of %g, blocks of %d (%d tasks), "
           "%d processes\n",
           s->p.natoms, s->p.box, steps, s->p.dt, s->lay.bs, s->ntasks, s->lay.nproc);
    printf("  time %.4f s, %.6f s per step; energy %.6f -> %.6f, max drift %.2e (tol %.0e)\n",
           run->seconds, per_step, run->energy.e0, run->energy.last, run->energy.max_drift,
           ENERGY_TOL);
    if (run->check.force_err >= 0.0)
        printf("  vs serial: first forces %.2e (tol %.0e), final positions %.2e (tol %.0e)\n",
               run->check.force_err, FORCE_TOL, run->check.pos_err, POSITION_TOL);
    printf("  %s\n", pass ? "PASS" : "FAIL");
    printf("RESULT app=lj procs=%d atoms=%d steps=%d block=%d tasks=%d time_s=%.6f "
           "time_per_step_s=%.6f energy_drift=%.3e force_err=%s pos_err=%s digest=%016" PRIx64
           " check=%s\n",
           s->lay.nproc, s->p.natoms, steps, s->lay.bs, s->ntasks, run->seconds, per_step,
           run->energy.max_drift, check_value(run->check.force_err, fbuf, sizeof(fbuf)),
           check_value(run->check.pos_err, pbuf, sizeof(pbuf)), digest, pass ? "PASS" : "FAIL");
}

int main(int argc, char **argv)
{
    ARMCI_Init_args(&argc, &argv);
    struct lj_options opt = parse_options(argc, argv);
    struct lj_system s = system_create(&opt);
    struct lj_run run = {.check = {-1.0, -1.0}};

    simulate(&s, opt.steps, opt.reference, &run);
    if (opt.reference && s.lay.me == 0)
        run.check = compare_with_serial(&s.p, opt.steps, &run);
    /* only rank 0 saw the serial comparison; everyone agrees through the vote */
    int pass = app_all_passed(s.lay.me == 0 ? passed(&run) : 1);
    /* Final positions. Forces are sums accumulated in whatever order tasks finish, so the
     * last bits may differ from run to run (the checks above have tolerances). */
    uint64_t digest = app_digest(s.pos[s.lay.me], own_values(&s) * sizeof(double));
    report(&s, opt.steps, &run, pass, digest);

    free(run.first_forces);
    free(run.final_pos);
    system_destroy(&s);
    ARMCI_Finalize();
    return pass ? 0 : 1;
}
