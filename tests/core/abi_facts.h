/* Sizes and values of the ARMCI ABI that Global Arrays depends on. */
#ifndef ARMCI_TEST_ABI_FACTS_H
#define ARMCI_TEST_ABI_FACTS_H

#include <stddef.h>

struct abi_facts {
    size_t hdl_size, group_size, giov_size, size_t_size;
    size_t giov_src, giov_dst, giov_bytes, giov_len;
    int acc[6];   /* ARMCI_ACC_INT .. ARMCI_ACC_DCP */
    int rmw[4];   /* ARMCI_FETCH_AND_ADD .. ARMCI_SWAP_LONG */
    int scope[3]; /* SCOPE_ALL, SCOPE_NODE, SCOPE_MASTERS */
    int type[5];  /* ARMCI_INT .. ARMCI_DOUBLE */
    int domain_smp;
};

#define ABI_FACTS_INIT                                                                            \
    {                                                                                             \
        sizeof(armci_hdl_t), sizeof(ARMCI_Group), sizeof(armci_giov_t), sizeof(armci_size_t),     \
            offsetof(armci_giov_t, src_ptr_array), offsetof(armci_giov_t, dst_ptr_array),         \
            offsetof(armci_giov_t, bytes), offsetof(armci_giov_t, ptr_array_len),                 \
            {ARMCI_ACC_INT, ARMCI_ACC_LNG, ARMCI_ACC_FLT,                                         \
             ARMCI_ACC_DBL, ARMCI_ACC_CPL, ARMCI_ACC_DCP},                                        \
            {ARMCI_FETCH_AND_ADD, ARMCI_FETCH_AND_ADD_LONG, ARMCI_SWAP, ARMCI_SWAP_LONG},         \
            {SCOPE_ALL, SCOPE_NODE, SCOPE_MASTERS},                                               \
            {ARMCI_INT, ARMCI_LONG, ARMCI_LONG_LONG, ARMCI_FLOAT, ARMCI_DOUBLE}, ARMCI_DOMAIN_SMP \
    }

#endif
