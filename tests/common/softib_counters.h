/* The calling process's softib counters, read through the library the runtime loaded (MPI
 * programs must not link libsoftib: armci/verbs/provider.h). */
#ifndef ARMCI_TESTS_SOFTIB_COUNTERS_H
#define ARMCI_TESTS_SOFTIB_COUNTERS_H

#include <dlfcn.h>
#include <softib/softib.h>
#include <stdbool.h>

/* False when the runtime is not on softib (a real HCA) or the counters cannot be read. */
static inline bool softib_counters_now(struct softib_counters *out)
{
    void *softib = dlopen("libsoftib.so.0", RTLD_NOW | RTLD_NOLOAD);
    if (!softib)
        return false;
    int (*get)(struct softib_counters *) =
        (int (*)(struct softib_counters *))dlsym(softib, "softib_get_counters");
    *out = (struct softib_counters){.size = sizeof(*out)};
    bool ok = get && get(out) == 0;
    dlclose(softib);
    return ok;
}

#endif
