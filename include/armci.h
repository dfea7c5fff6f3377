/*
 * ARMCI-ODCM public API.
 *
 * Source- and binary-compatible with the armci.h of ARMCI-MPI 0.3.1, the
 * header Debian's Global Arrays 5.8 was compiled against: the enum values,
 * armci_giov_t, armci_size_t, and the sizes of armci_hdl_t and ARMCI_Group
 * must not change (tests/core/test_abi.c checks them), so that libga links
 * against this library unchanged.
 */
#ifndef ARMCI_H
#define ARMCI_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ARMCI_ODCM               1
#define ARMCI_ODCM_VERSION_MAJOR 0
#define ARMCI_ODCM_VERSION_MINOR 1
#define ARMCI_ODCM_VERSION_PATCH 0

/* Accumulate datatypes. */
enum ARMCI_Acc_e {
    ARMCI_ACC_INT, /* int */
    ARMCI_ACC_LNG, /* long */
    ARMCI_ACC_FLT, /* float */
    ARMCI_ACC_DBL, /* double */
    ARMCI_ACC_CPL, /* single-precision complex: two floats */
    ARMCI_ACC_DCP  /* double-precision complex: two doubles */
};

typedef long armci_size_t;

/* Initialisation and termination. */
int ARMCI_Init(void);
int ARMCI_Init_args(int *argc, char ***argv);
int ARMCI_Init_thread(int armci_requested);
int ARMCI_Init_thread_comm(int armci_requested, MPI_Comm comm);
int ARMCI_Initialized(void);
int ARMCI_Finalize(void);
void ARMCI_Cleanup(void);

/* The library loaded at run time (the macros above are the header compiled
 * against), in the manner of GA_Version; callable before ARMCI_Init. */
void ARMCI_ODCM_Version(int *major, int *minor, int *patch);
/* How it was built: "mpi=openmpi fault_injection=1" (MPI built for, fault-injection points). */
const char *ARMCI_ODCM_Build_info(void);
void ARMCI_Error(const char *msg, int code);

/* Memory. ARMCI_Malloc is collective; base_ptrs[i] is process i's block. */
int ARMCI_Malloc(void **base_ptrs, armci_size_t size);
int ARMCI_Free(void *ptr);
void *ARMCI_Malloc_local(armci_size_t size);
int ARMCI_Free_local(void *ptr);

/* Synchronisation and completion. */
void ARMCI_Barrier(void);
void ARMCI_Fence(int proc);
void ARMCI_AllFence(void);
void ARMCI_Access_begin(void *ptr);
void ARMCI_Access_end(void *ptr);

void ARMCI_Copy(void *src, void *dst, int size);

/* Contiguous one-sided operations. */
int ARMCI_Get(void *src, void *dst, int size, int target);
int ARMCI_Put(void *src, void *dst, int size, int target);
int ARMCI_Acc(int datatype, void *scale, void *src, void *dst, int bytes, int proc);

/* Strided operations: count[0] is in bytes, stride_levels strides per side. */
int ARMCI_PutS(void *src_ptr, int src_stride_ar[], void *dst_ptr, int dst_stride_ar[], int count[],
               int stride_levels, int proc);
int ARMCI_GetS(void *src_ptr, int src_stride_ar[], void *dst_ptr, int dst_stride_ar[], int count[],
               int stride_levels, int proc);
int ARMCI_AccS(int datatype, void *scale, void *src_ptr, int src_stride_ar[], void *dst_ptr,
               int dst_stride_ar[], int count[], int stride_levels, int proc);

int ARMCI_Put_flag(void *src, void *dst, int size, int *flag, int value, int proc);
int ARMCI_PutS_flag(void *src_ptr, int src_stride_ar[], void *dst_ptr, int dst_stride_ar[],
                    int count[], int stride_levels, int *flag, int value, int proc);

/*
 * Non-blocking handle. The layout is ARMCI-MPI's (Global Arrays allocates
 * handles itself); ARMCI-ODCM stores an opaque request reference in it.
 * Initialise with ARMCI_INIT_HANDLE before first use.
 */
typedef struct armci_hdl_s {
    int target;
    int aggregate;
} armci_hdl_t;

void ARMCI_INIT_HANDLE(armci_hdl_t *hdl);
void ARMCI_SET_AGGREGATE_HANDLE(armci_hdl_t *handle);
void ARMCI_UNSET_AGGREGATE_HANDLE(armci_hdl_t *handle);

int ARMCI_NbPut(void *src, void *dst, int bytes, int proc, armci_hdl_t *hdl);
int ARMCI_NbGet(void *src, void *dst, int bytes, int proc, armci_hdl_t *hdl);
int ARMCI_NbAcc(int datatype, void *scale, void *src, void *dst, int bytes, int proc,
                armci_hdl_t *hdl);

int ARMCI_Wait(armci_hdl_t *hdl);
int ARMCI_Test(armci_hdl_t *hdl);
int ARMCI_WaitProc(int proc);
int ARMCI_WaitAll(void);

int ARMCI_NbPutS(void *src_ptr, int src_stride_ar[], void *dst_ptr, int dst_stride_ar[],
                 int count[], int stride_levels, int proc, armci_hdl_t *hdl);
int ARMCI_NbGetS(void *src_ptr, int src_stride_ar[], void *dst_ptr, int dst_stride_ar[],
                 int count[], int stride_levels, int proc, armci_hdl_t *hdl);
int ARMCI_NbAccS(int datatype, void *scale, void *src_ptr, int src_stride_ar[], void *dst_ptr,
                 int dst_stride_ar[], int count[], int stride_levels, int proc, armci_hdl_t *hdl);

void armci_write_strided(void *ptr, int stride_levels, int stride_arr[], int count[], char *buf);
void armci_read_strided(void *ptr, int stride_levels, int stride_arr[], int count[], char *buf);

/* Generalised I/O vectors: ptr_array_len segments of `bytes` each. */
typedef struct {
    void **src_ptr_array;
    void **dst_ptr_array;
    int bytes;
    int ptr_array_len;
} armci_giov_t;

int ARMCI_PutV(armci_giov_t *iov, int iov_len, int proc);
int ARMCI_GetV(armci_giov_t *iov, int iov_len, int proc);
int ARMCI_AccV(int datatype, void *scale, armci_giov_t *iov, int iov_len, int proc);

int ARMCI_NbPutV(armci_giov_t *iov, int iov_len, int proc, armci_hdl_t *handle);
int ARMCI_NbGetV(armci_giov_t *iov, int iov_len, int proc, armci_hdl_t *handle);
int ARMCI_NbAccV(int datatype, void *scale, armci_giov_t *iov, int iov_len, int proc,
                 armci_hdl_t *handle);

/* Scalar operations. */
int ARMCI_PutValueInt(int src, void *dst, int proc);
int ARMCI_PutValueLong(long src, void *dst, int proc);
int ARMCI_PutValueFloat(float src, void *dst, int proc);
int ARMCI_PutValueDouble(double src, void *dst, int proc);

int ARMCI_NbPutValueInt(int src, void *dst, int proc, armci_hdl_t *hdl);
int ARMCI_NbPutValueLong(long src, void *dst, int proc, armci_hdl_t *hdl);
int ARMCI_NbPutValueFloat(float src, void *dst, int proc, armci_hdl_t *hdl);
int ARMCI_NbPutValueDouble(double src, void *dst, int proc, armci_hdl_t *hdl);

int ARMCI_GetValueInt(void *src, int proc);
long ARMCI_GetValueLong(void *src, int proc);
float ARMCI_GetValueFloat(void *src, int proc);
double ARMCI_GetValueDouble(void *src, int proc);

/* Mutexes: every process hosts `count` mutexes; Lock(m, p) takes mutex m at p. */
int ARMCI_Create_mutexes(int count);
int ARMCI_Destroy_mutexes(void);
void ARMCI_Lock(int mutex, int proc);
void ARMCI_Unlock(int mutex, int proc);

/* Read-modify-write. */
enum ARMCI_Rmw_e { ARMCI_FETCH_AND_ADD, ARMCI_FETCH_AND_ADD_LONG, ARMCI_SWAP, ARMCI_SWAP_LONG };

int ARMCI_Rmw(int op, void *ploc, void *prem, int value, int proc);

/* Process groups. The layout is ARMCI-MPI's; callers treat it as opaque. */
typedef struct {
    MPI_Comm comm;
    MPI_Comm noncoll_pgroup_comm;
    int *grp_to_abs;
    int *abs_to_grp;
    int rank;
    int size;
} ARMCI_Group;

void ARMCI_Group_create(int grp_size, int *pid_list, ARMCI_Group *group_out);
void ARMCI_Group_create_child(int grp_size, int *pid_list, ARMCI_Group *group_out,
                              ARMCI_Group *group_parent);
void ARMCI_Group_free(ARMCI_Group *group);
int ARMCI_Group_rank(ARMCI_Group *group, int *rank);
void ARMCI_Group_size(ARMCI_Group *group, int *size);
void ARMCI_Group_set_default(ARMCI_Group *group);
void ARMCI_Group_get_default(ARMCI_Group *group_out);
void ARMCI_Group_get_world(ARMCI_Group *group_out);
int ARMCI_Absolute_id(ARMCI_Group *group, int group_rank);
int ARMCI_Malloc_group(void **ptr_arr, armci_size_t bytes, ARMCI_Group *group);
int ARMCI_Free_group(void *ptr, ARMCI_Group *group);

#include <message.h>

/* Topology: the only domain is the SMP node (a host, or a virtual node). */
enum armci_domain_e { ARMCI_DOMAIN_SMP };
typedef int armci_domain_t;

int armci_domain_nprocs(armci_domain_t domain, int id);
int armci_domain_id(armci_domain_t domain, int glob_proc_id);
int armci_domain_glob_proc_id(armci_domain_t domain, int id, int loc_proc_id);
int armci_domain_my_id(armci_domain_t domain);
int armci_domain_count(armci_domain_t domain);
int armci_domain_same_id(armci_domain_t domain, int proc);
int ARMCI_Same_node(int proc);

/* Odds and ends kept for compatibility. */
int ARMCI_Uses_shm(void);
void ARMCI_Set_shm_limit(unsigned long shmemlimit);
int ARMCI_Uses_shm_grp(ARMCI_Group *group);

/* Memory on a named device (SICM); ARMCI-ODCM has only host memory. */
int ARMCI_Malloc_memdev(void **ptr_arr, armci_size_t bytes, const char *device);
int ARMCI_Malloc_group_memdev(void **ptr_arr, armci_size_t bytes, ARMCI_Group *group,
                              const char *device);
int ARMCI_Free_memdev(void *ptr);

/*
 * PARMCI: profiling interface. Every ARMCI_X above is a weak alias of
 * PARMCI_X, so a tool may define ARMCI_X itself and call PARMCI_X.
 */
int PARMCI_Init(void);
int PARMCI_Init_args(int *argc, char ***argv);
int PARMCI_Init_thread(int armci_requested);
int PARMCI_Init_thread_comm(int armci_requested, MPI_Comm comm);
int PARMCI_Initialized(void);
int PARMCI_Finalize(void);

int PARMCI_Malloc(void **base_ptrs, armci_size_t size);
int PARMCI_Free(void *ptr);
void *PARMCI_Malloc_local(armci_size_t size);
int PARMCI_Free_local(void *ptr);

void PARMCI_Barrier(void);
void PARMCI_Fence(int proc);
void PARMCI_AllFence(void);
void PARMCI_Access_begin(void *ptr);
void PARMCI_Access_end(void *ptr);

int PARMCI_Get(void *src, void *dst, int size, int target);
int PARMCI_Put(void *src, void *dst, int size, int target);
int PARMCI_Acc(int datatype, void *scale, void *src, void *dst, int bytes, int proc);

int PARMCI_PutS(void *src_ptr, int src_stride_ar[], void *dst_ptr, int dst_stride_ar[], int count[],
                int stride_levels, int proc);
int PARMCI_GetS(void *src_ptr, int src_stride_ar[], void *dst_ptr, int dst_stride_ar[], int count[],
                int stride_levels, int proc);
int PARMCI_AccS(int datatype, void *scale, void *src_ptr, int src_stride_ar[], void *dst_ptr,
                int dst_stride_ar[], int count[], int stride_levels, int proc);
int PARMCI_Put_flag(void *src, void *dst, int size, int *flag, int value, int proc);
int PARMCI_PutS_flag(void *src_ptr, int src_stride_ar[], void *dst_ptr, int dst_stride_ar[],
                     int count[], int stride_levels, int *flag, int value, int proc);

int PARMCI_PutV(armci_giov_t *iov, int iov_len, int proc);
int PARMCI_GetV(armci_giov_t *iov, int iov_len, int proc);
int PARMCI_AccV(int datatype, void *scale, armci_giov_t *iov, int iov_len, int proc);

int PARMCI_Wait(armci_hdl_t *hdl);
int PARMCI_Test(armci_hdl_t *hdl);
int PARMCI_WaitProc(int proc);
int PARMCI_WaitAll(void);

int PARMCI_NbPut(void *src, void *dst, int bytes, int proc, armci_hdl_t *hdl);
int PARMCI_NbGet(void *src, void *dst, int bytes, int proc, armci_hdl_t *hdl);
int PARMCI_NbAcc(int datatype, void *scale, void *src, void *dst, int bytes, int proc,
                 armci_hdl_t *hdl);
int PARMCI_NbPutS(void *src_ptr, int src_stride_ar[], void *dst_ptr, int dst_stride_ar[],
                  int count[], int stride_levels, int proc, armci_hdl_t *hdl);
int PARMCI_NbGetS(void *src_ptr, int src_stride_ar[], void *dst_ptr, int dst_stride_ar[],
                  int count[], int stride_levels, int proc, armci_hdl_t *hdl);
int PARMCI_NbAccS(int datatype, void *scale, void *src_ptr, int src_stride_ar[], void *dst_ptr,
                  int dst_stride_ar[], int count[], int stride_levels, int proc, armci_hdl_t *hdl);
int PARMCI_NbPutV(armci_giov_t *iov, int iov_len, int proc, armci_hdl_t *handle);
int PARMCI_NbGetV(armci_giov_t *iov, int iov_len, int proc, armci_hdl_t *handle);
int PARMCI_NbAccV(int datatype, void *scale, armci_giov_t *iov, int iov_len, int proc,
                  armci_hdl_t *handle);

int PARMCI_PutValueInt(int src, void *dst, int proc);
int PARMCI_PutValueLong(long src, void *dst, int proc);
int PARMCI_PutValueFloat(float src, void *dst, int proc);
int PARMCI_PutValueDouble(double src, void *dst, int proc);
int PARMCI_NbPutValueInt(int src, void *dst, int proc, armci_hdl_t *hdl);
int PARMCI_NbPutValueLong(long src, void *dst, int proc, armci_hdl_t *hdl);
int PARMCI_NbPutValueFloat(float src, void *dst, int proc, armci_hdl_t *hdl);
int PARMCI_NbPutValueDouble(double src, void *dst, int proc, armci_hdl_t *hdl);

int PARMCI_GetValueInt(void *src, int proc);
long PARMCI_GetValueLong(void *src, int proc);
float PARMCI_GetValueFloat(void *src, int proc);
double PARMCI_GetValueDouble(void *src, int proc);

int PARMCI_Create_mutexes(int count);
int PARMCI_Destroy_mutexes(void);
void PARMCI_Lock(int mutex, int proc);
void PARMCI_Unlock(int mutex, int proc);
int PARMCI_Rmw(int op, void *ploc, void *prem, int value, int proc);

void parmci_msg_barrier(void);
void parmci_msg_group_barrier(ARMCI_Group *group);

int PARMCI_Malloc_memdev(void **ptr_arr, armci_size_t bytes, const char *device);
int PARMCI_Malloc_group_memdev(void **ptr_arr, armci_size_t bytes, ARMCI_Group *group,
                               const char *device);
int PARMCI_Free_memdev(void *ptr);

#ifdef __cplusplus
}
#endif

#endif /* ARMCI_H */
