/*
 * armci-info: what this libarmci is and how the environment configures it.
 *
 *   armci-info             the loaded library (path, version, MPI, build
 *                          options), the MPI library, the verbs providers
 *                          and their devices, the configuration table
 *   armci-info -c          every variable with its effective value here
 *   armci-info --markdown  the table as docs/ENVIRONMENT.md shows it
 *   armci-info --version   armci-info's and the loaded library's versions
 *
 * Reads only the environment: no MPI job, no verbs device is opened. The
 * library reported is the libarmci.so.0 a program would load (dlopen through
 * this program's RUNPATH), not the one armci-info was compiled from.
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <libgen.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "armci.h"
#include "core/config.h"

struct ibv_device; /* only pointers to it pass through */

static const char usage_text[] =
    "usage: armci-info [-c | --markdown | --version | --help]\n"
    "  (none)      the loaded libarmci (path, version, MPI, build options), the MPI\n"
    "              library, verbs providers and devices, then -c\n"
    "  -c          every ARMCI_* variable with its effective value in this environment\n"
    "  --markdown  the variables as docs/ENVIRONMENT.md's table\n"
    "  --version   the versions of armci-info and of the libarmci it loads\n"
    "  --help      this text\n";

struct loaded_lib {
    char path[4096]; /* empty: not found */
    int major, minor, patch;
    const char *build; /* ARMCI_ODCM_Build_info() */
};

/* The libarmci.so.0 the dynamic loader finds for a program installed beside armci-info. */
static void find_library(struct loaded_lib *lib)
{
    *lib = (struct loaded_lib){.build = "unknown"};
    void *dl = dlopen("libarmci.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        snprintf(lib->path, sizeof(lib->path), "not found: %s", dlerror());
        return;
    }
    void (*version)(int *, int *, int *) =
        (void (*)(int *, int *, int *))dlsym(dl, "ARMCI_ODCM_Version");
    const char *(*build)(void) = (const char *(*)(void))dlsym(dl, "ARMCI_ODCM_Build_info");
    Dl_info info;
    if (version && dladdr((void *)version, &info) && info.dli_fname)
        snprintf(lib->path, sizeof(lib->path), "%s", info.dli_fname);
    else
        snprintf(lib->path, sizeof(lib->path), "libarmci.so.0 (older than 0.1.0: no version call)");
    if (version)
        version(&lib->major, &lib->minor, &lib->patch);
    if (build)
        lib->build = build();
}

static int print_version(const struct loaded_lib *lib)
{
    printf("armci-info (ARMCI-ODCM) %d.%d.%d\n", ARMCI_ODCM_VERSION_MAJOR, ARMCI_ODCM_VERSION_MINOR,
           ARMCI_ODCM_VERSION_PATCH);
    printf("libarmci %d.%d.%d: %s\n", lib->major, lib->minor, lib->patch, lib->path);
    return 0;
}

/* The verbs devices one provider library lists (names only: nothing is opened). */
static void print_provider(const char *name, const char *file)
{
    void *dl = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        printf("  %-9s %s: not loadable (%s)\n", name, file, dlerror());
        return;
    }
    struct ibv_device **(*get_list)(int *) =
        (struct ibv_device * *(*)(int *)) dlsym(dl, "ibv_get_device_list");
    const char *(*get_name)(struct ibv_device *) =
        (const char *(*)(struct ibv_device *))dlsym(dl, "ibv_get_device_name");
    void (*free_list)(struct ibv_device **) =
        (void (*)(struct ibv_device **))dlsym(dl, "ibv_free_device_list");
    Dl_info info;
    const char *path =
        get_list && dladdr((void *)get_list, &info) && info.dli_fname ? info.dli_fname : file;
    if (!get_list || !get_name || !free_list) {
        printf("  %-9s %s: not a verbs library\n", name, path);
        dlclose(dl);
        return;
    }
    int n = 0;
    struct ibv_device **list = get_list(&n);
    printf("  %-9s %s: %d device%s", name, path, n, n == 1 ? "" : "s");
    for (int i = 0; list && i < n; i++)
        printf("%s%s", i ? ", " : " (", get_name(list[i]));
    printf("%s\n", list && n ? ")" : "");
    if (list)
        free_list(list);
    dlclose(dl);
}

static void print_report(const struct loaded_lib *lib)
{
    printf("ARMCI-ODCM %d.%d.%d: ARMCI over InfiniBand verbs with on-demand connections\n",
           lib->major, lib->minor, lib->patch);
    printf("library:  %s\n", lib->path);
    printf("build:    %s\n", lib->build);
    char mpi[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(mpi, &len); /* allowed before MPI_Init */
    mpi[strcspn(mpi, "\n")] = '\0';
    printf("MPI:      %s\n", mpi);
    printf(
        "verbs providers (ARMCI_VERBS=auto takes rdma-core when a port is active, else softib):\n");
    print_provider("rdma-core", "libibverbs.so.1");
    /* The order libarmci searches (armci/verbs/provider.c): the variable, beside
     * libarmci, the build tree, the loader's path. */
    char softib[4200] = "libsoftib.so.0";
    if (cfg.softib_library) {
        snprintf(softib, sizeof(softib), "%s", cfg.softib_library);
    } else if (lib->path[0] == '/') {
        char dir[4096];
        snprintf(dir, sizeof(dir), "%s", lib->path);
        const char *candidates[] = {"%s/libsoftib.so.0", "%s/../softib/libsoftib.so.0"};
        for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++) {
            char path[4200];
            snprintf(path, sizeof(path), candidates[i], dirname(dir));
            snprintf(dir, sizeof(dir), "%s", lib->path); /* dirname may modify it */
            if (access(path, R_OK) == 0) {
                snprintf(softib, sizeof(softib), "%s", path);
                break;
            }
        }
    }
    print_provider("softib", softib);
    printf("effective configuration (environment, else default):\n");
    config_dump(stdout, false);
}

int main(int argc, char **argv)
{
    if (argc > 2) {
        fputs(usage_text, stderr);
        return 2;
    }
    const char *mode = argc == 2 ? argv[1] : "";
    if (!strcmp(mode, "--help") || !strcmp(mode, "-h")) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (!strcmp(mode, "--markdown")) {
        config_dump(stdout, true);
        return 0;
    }
    struct loaded_lib lib;
    find_library(&lib);
    if (!strcmp(mode, "--version"))
        return print_version(&lib);
    if (*mode && strcmp(mode, "-c")) {
        fprintf(stderr, "armci-info: unknown option %s\n", mode);
        fputs(usage_text, stderr);
        return 2;
    }
    cfg_load();
    if (!*mode) {
        print_report(&lib);
        return 0;
    }
    printf("ARMCI-ODCM %d.%d.%d\neffective configuration (environment, else default):\n", lib.major,
           lib.minor, lib.patch);
    config_dump(stdout, false);
    return 0;
}
