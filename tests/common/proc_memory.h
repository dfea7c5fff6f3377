/* A process's memory as the memory-bound tests and the soak read it. */
#ifndef ARMCI_TESTS_PROC_MEMORY_H
#define ARMCI_TESTS_PROC_MEMORY_H

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A "Field: N kB" line of /proc/self/status (VmRSS, RssAnon, RssShmem), or -1. */
static inline long status_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    size_t len = strlen(field);
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, field, len) && line[len] == ':') {
            kb = atol(line + len + 1);
            break;
        }
    if (f)
        fclose(f);
    return kb;
}

/* Bytes malloc has handed out and not had back (arena and mmapped blocks). */
static inline long heap_in_use(void)
{
    struct mallinfo2 m = mallinfo2();
    return (long)(m.uordblks + m.hblkhd);
}

/* The mapping of /proc/self/maps holding addr: its inode, and its permissions ("rw-s") and
 * path in perms[5] and path[256]; -1 if none holds it. */
static inline long mapping_of(const void *addr, char *perms, char *path)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    long inode = -1;
    while (f && inode < 0 && fgets(line, sizeof(line), f)) {
        unsigned long lo, hi, off, ino;
        char dev[16];
        path[0] = 0;
        if (sscanf(line, "%lx-%lx %4s %lx %15s %lu %255s", &lo, &hi, perms, &off, dev, &ino, path) <
            6)
            continue;
        if ((unsigned long)addr >= lo && (unsigned long)addr < hi)
            inode = (long)ino;
    }
    if (f)
        fclose(f);
    return inode;
}

#endif
