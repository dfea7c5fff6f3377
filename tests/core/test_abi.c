/*
 * Our armci.h against the ABI Global Arrays was built with: the enum values
 * and armci_giov_t must be identical, armci_size_t must be long, and
 * armci_hdl_t / ARMCI_Group no larger (GA allocates them). Compared with
 * ARMCI-MPI's header when it is installed, and with the values it is known
 * to have in any case.
 */
#include <armci.h>
#include <stdio.h>
#include <string.h>

#include "abi_facts.h"

#ifdef HAVE_ARMCI_MPI_REFERENCE
extern const struct abi_facts armci_mpi_facts;
#endif

static int failures;

#define EXPECT(cond, ...)        \
    do {                         \
        if (!(cond)) {           \
            failures++;          \
            printf("FAIL: ");    \
            printf(__VA_ARGS__); \
            printf("\n");        \
        }                        \
    } while (0)

static void compare(const struct abi_facts *ours, const struct abi_facts *ref, const char *what)
{
    EXPECT(ours->hdl_size <= ref->hdl_size, "armci_hdl_t is %zu bytes, %s has %zu", ours->hdl_size,
           what, ref->hdl_size);
    EXPECT(ours->group_size <= ref->group_size, "ARMCI_Group is %zu bytes, %s has %zu",
           ours->group_size, what, ref->group_size);
    EXPECT(ours->giov_size == ref->giov_size && ours->giov_src == ref->giov_src &&
               ours->giov_dst == ref->giov_dst && ours->giov_bytes == ref->giov_bytes &&
               ours->giov_len == ref->giov_len,
           "armci_giov_t layout differs from %s", what);
    EXPECT(ours->size_t_size == ref->size_t_size, "armci_size_t size differs from %s", what);
    EXPECT(!memcmp(ours->acc, ref->acc, sizeof(ours->acc)), "ARMCI_ACC_* differ from %s", what);
    EXPECT(!memcmp(ours->rmw, ref->rmw, sizeof(ours->rmw)), "Rmw ops differ from %s", what);
    EXPECT(!memcmp(ours->scope, ref->scope, sizeof(ours->scope)), "SCOPE_* differ from %s", what);
    EXPECT(!memcmp(ours->type, ref->type, sizeof(ours->type)), "ARMCI_INT.. differ from %s", what);
    EXPECT(ours->domain_smp == ref->domain_smp, "ARMCI_DOMAIN_SMP differs from %s", what);
}

int main(void)
{
    const struct abi_facts ours = ABI_FACTS_INIT;
    /* What ARMCI-MPI 0.3.1 has on x86_64 with Open MPI (MPI_Comm is a pointer). */
    const struct abi_facts known = {
        8, 40, 24, 8, 0, 8, 16, 20, {0, 1, 2, 3, 4, 5}, {0, 1, 2, 3}, {0, 1, 2}, {0, 1, 2, 3, 4},
        0};
    EXPECT(sizeof(armci_size_t) == sizeof(long), "armci_size_t is not long");
    compare(&ours, &known, "ARMCI-MPI 0.3.1 (known values)");
#ifdef HAVE_ARMCI_MPI_REFERENCE
    compare(&ours, &armci_mpi_facts, "the installed ARMCI-MPI armci.h");
    printf("compared with the installed ARMCI-MPI header\n");
#else
    printf("ARMCI-MPI's header is not installed: compared with known values only\n");
#endif
    if (failures)
        return 1;
    printf("PASS ABI (armci_hdl_t %zu bytes, ARMCI_Group %zu bytes)\n", ours.hdl_size,
           ours.group_size);
    return 0;
}
