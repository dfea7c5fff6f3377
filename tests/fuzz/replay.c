/*
 * Replays corpora through a fuzz harness without libFuzzer: every file named
 * on the command line, and every file of every directory named, is given to
 * LLVMFuzzerTestOneInput once. A broken invariant aborts (the test fails);
 * an empty corpus is an error too, so that a lost corpus is noticed.
 * Usage: fuzz-replay-TARGET FILE|DIR...
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int replayed;

static void replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    uint8_t *data = NULL;
    size_t size = 0, cap = 0;
    for (;;) {
        if (size == cap) {
            cap = cap ? 2 * cap : 4096;
            data = realloc(data, cap);
            if (!data)
                abort();
        }
        size_t n = fread(data + size, 1, cap - size, f);
        if (n == 0)
            break;
        size += n;
    }
    fclose(f);
    /* An exact-size copy: reads past the input's end are caught under ASan. */
    uint8_t *exact = malloc(size ? size : 1);
    if (!exact)
        abort();
    memcpy(exact, data, size);
    free(data);
    LLVMFuzzerTestOneInput(exact, size);
    free(exact);
    replayed++;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void replay_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        perror(dir);
        exit(1);
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        names = realloc(names, (n + 1) * sizeof(*names));
        if (!names || !(names[n] = malloc(strlen(dir) + strlen(e->d_name) + 2)))
            abort();
        sprintf(names[n++], "%s/%s", dir, e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof(*names), by_name);
    for (size_t i = 0; i < n; i++) {
        replay_file(names[i]);
        free(names[i]);
    }
    free(names);
}

int main(int argc, char **argv)
{
    LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st)) {
            perror(argv[i]);
            return 1;
        }
        if (S_ISDIR(st.st_mode))
            replay_dir(argv[i]);
        else
            replay_file(argv[i]);
    }
    if (!replayed) {
        fprintf(stderr, "no inputs to replay\n");
        return 1;
    }
    printf("PASS %d inputs replayed\n", replayed);
    return 0;
}
