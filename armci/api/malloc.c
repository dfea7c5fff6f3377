/* Front doors of the memory API; the work is in segment.c. */
#include "armci.h"
#include "core/error.h"
#include "api/groups.h"
#include "api/profiling.h"
#include "core/runtime.h"
#include "api/segment.h"

/*
 * ARMCI_Malloc and ARMCI_Free are collective over the world, whatever the
 * default group (it only parents ARMCI_Group_create), as in both
 * references: GA calls them for world arrays while a pgroup is its default.
 */
int PARMCI_Malloc(void **ptr_arr, armci_size_t bytes)
{
    rt_require_init("ARMCI_Malloc");
    return seg_malloc("ARMCI_Malloc", ptr_arr, bytes, &rt.world_group);
}
PROFILED(Malloc)

int PARMCI_Free(void *ptr)
{
    rt_require_init("ARMCI_Free");
    return seg_free("ARMCI_Free", ptr, &rt.world_group);
}
PROFILED(Free)

int ARMCI_Malloc_group(void **ptr_arr, armci_size_t bytes, ARMCI_Group *group)
{
    group_require_member("ARMCI_Malloc_group", group);
    return seg_malloc("ARMCI_Malloc_group", ptr_arr, bytes, group);
}

int ARMCI_Free_group(void *ptr, ARMCI_Group *group)
{
    group_require_member("ARMCI_Free_group", group);
    return seg_free("ARMCI_Free_group", ptr, group);
}

void *PARMCI_Malloc_local(armci_size_t bytes)
{
    return seg_malloc_local("ARMCI_Malloc_local", bytes);
}
PROFILED(Malloc_local)

/* free(NULL) semantics, as in both references. */
int PARMCI_Free_local(void *ptr)
{
    if (!ptr)
        return 0;
    return seg_free_local("ARMCI_Free_local", ptr);
}
PROFILED(Free_local)

/* Memory devices (SICM): only host memory exists, so every device name means host memory. */
int PARMCI_Malloc_memdev(void **ptr_arr, armci_size_t bytes, const char *device)
{
    return PARMCI_Malloc(ptr_arr, bytes);
}
PROFILED(Malloc_memdev)

int PARMCI_Malloc_group_memdev(void **ptr_arr, armci_size_t bytes, ARMCI_Group *group,
                               const char *device)
{
    return ARMCI_Malloc_group(ptr_arr, bytes, group);
}
PROFILED(Malloc_group_memdev)

int PARMCI_Free_memdev(void *ptr)
{
    return PARMCI_Free(ptr);
}
PROFILED(Free_memdev)
