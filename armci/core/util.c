#include "core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/error.h"

void *xmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p)
        armci_die(NULL, "out of memory allocating %zu bytes", size);
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        armci_die(NULL, "out of memory allocating %zu x %zu bytes", n, size);
    return p;
}

void *xrealloc(void *ptr, size_t size)
{
    void *p = realloc(ptr, size ? size : 1);
    if (!p)
        armci_die(NULL, "out of memory reallocating to %zu bytes", size);
    return p;
}

void *xmalloc_registrable(size_t size)
{
    /* Huge pages where the kernel allows: fewer pages to pin for every transfer; but not where
     * the last one would be mostly empty (2 MiB + 4 KiB would take 4 MiB of memory). */
    size_t huge = (size_t)2 << 20;
    bool use_huge = size >= huge && align_up(size, huge) - size <= size / 8;
    void *p = xmemalign(use_huge ? huge : 4096, size);
    if (use_huge)
        madvise(p, align_up(size, huge), MADV_HUGEPAGE);
    return p;
}

void *xmemalign(size_t align, size_t size)
{
    void *p = NULL;
    if (posix_memalign(&p, align, size ? size : 1))
        armci_die(NULL, "out of memory allocating %zu bytes aligned to %zu", size, align);
    return p;
}

void set_nonblocking(int fd, const char *what)
{
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
        armci_die(NULL, "cannot make the %s non-blocking: %s", what, strerror(errno));
}
