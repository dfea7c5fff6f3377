#define _GNU_SOURCE
#include "verbs/provider.h"

#include <dlfcn.h>
#include <infiniband/verbs.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/error.h"
#include "verbs/ibv_functions.h"

/* The provider's entry points, filled by dlsym. */
static struct {
#define X(ret, name, params, args) ret(*name) params;
#define XV(name, params, args)     void(*name) params;
    IBV_FUNCTIONS(X, XV)
#undef X
#undef XV
} fn;

static void *provider_dl;

/*
 * Forwarding definitions: the runtime's ibv_* calls land here. Hidden, and
 * kept out of libarmci's exports by its version script. The parentheses
 * around the name keep verbs.h's function-like macros (ibv_reg_mr,
 * ibv_query_port) from expanding.
 */
#define X(ret, name, params, args)                         \
    __attribute__((visibility("hidden"))) ret(name) params \
    {                                                      \
        return (fn.name)args;                              \
    }
#define XV(name, params, args)                              \
    __attribute__((visibility("hidden"))) void(name) params \
    {                                                       \
        (fn.name) args;                                     \
    }
IBV_FUNCTIONS(X, XV)
#undef X
#undef XV

/* Resolves every entry point; returns the first missing name, or NULL. */
static const char *bind_all(void *dl)
{
#define X(ret, name, params, args)                \
    if (!(*(void **)&fn.name = dlsym(dl, #name))) \
        return #name;
#define XV(name, params, args) X(void, name, params, args)
    IBV_FUNCTIONS(X, XV)
#undef X
#undef XV
    return NULL;
}

static void *open_bound(const char *path)
{
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl)
        return NULL;
    const char *missing = bind_all(dl);
    if (missing) {
        armci_warn("verbs provider %s lacks %s; not using it", path, missing);
        dlclose(dl);
        return NULL;
    }
    return dl;
}

/* True if the bound provider has a device with an active port. */
static bool has_active_port(void)
{
    int n = 0;
    struct ibv_device **list = fn.ibv_get_device_list(&n);
    bool active = false;
    for (int i = 0; list && i < n && !active; i++) {
        struct ibv_context *ctx = fn.ibv_open_device(list[i]);
        if (!ctx)
            continue;
        struct ibv_device_attr dattr;
        if (!fn.ibv_query_device(ctx, &dattr)) {
            for (int p = 1; p <= dattr.phys_port_cnt && !active; p++) {
                struct ibv_port_attr pattr;
                if (!ibv_query_port(ctx, p, &pattr) && pattr.state == IBV_PORT_ACTIVE)
                    active = true;
            }
        }
        fn.ibv_close_device(ctx);
    }
    if (list)
        fn.ibv_free_device_list(list);
    return active;
}

/* softib: $ARMCI_SOFTIB_LIBRARY, beside libarmci (installed), the build tree, the loader path. */
static void *open_softib(void)
{
    const char *env = cfg.softib_library;
    if (env) {
        void *dl = open_bound(env);
        if (!dl)
            armci_die("ARMCI_Init", "ARMCI_SOFTIB_LIBRARY=%s cannot be loaded: %s", env, dlerror());
        return dl;
    }
    Dl_info info;
    if (dladdr((void *)&verbs_provider_load, &info) && info.dli_fname) {
        char self[4096];
        snprintf(self, sizeof(self), "%s", info.dli_fname);
        const char *dir = dirname(self);
        const char *candidates[] = {"%s/libsoftib.so.0", "%s/../softib/libsoftib.so.0"};
        for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++) {
            char path[4200];
            snprintf(path, sizeof(path), candidates[i], dir);
            void *dl = open_bound(path);
            if (dl)
                return dl;
        }
    }
    return open_bound("libsoftib.so.0");
}

const char *verbs_provider_load(enum cfg_verbs choice)
{
    if (choice != CFG_VERBS_SOFTIB) {
        provider_dl = open_bound("libibverbs.so.1");
        if (provider_dl && (choice == CFG_VERBS_RDMA_CORE || has_active_port()))
            return "rdma-core";
        if (choice == CFG_VERBS_RDMA_CORE)
            armci_die("ARMCI_Init", "ARMCI_VERBS=rdma-core but libibverbs.so.1 cannot be used");
        if (provider_dl)
            dlclose(provider_dl);
    }
    provider_dl = open_softib();
    if (!provider_dl)
        armci_die("ARMCI_Init", "no verbs provider: no active HCA and softib (libsoftib.so.0) "
                                "not found; set ARMCI_SOFTIB_LIBRARY");
    return "softib";
}

void verbs_provider_unload(void)
{
    /* Left loaded: a provider may keep threads or atexit handlers of its own. */
}
