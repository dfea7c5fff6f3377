/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The heap inside the fabric file (rings of CQs and receive queues):
 * power-of-two size classes from 64 bytes, one free list each, under the
 * global lock. Calls nothing else of softib.
 */
#define _GNU_SOURCE
#include <string.h>

#include "heap.h"

static unsigned heap_class(uint64_t bytes)
{
    unsigned c = 0;

    while ((64ull << c) < bytes)
        c++;
    return c;
}

sib_off sib_heap_alloc(struct sib_fabric *f, uint64_t bytes)
{
    struct sib_hdr *h = f->hdr;
    unsigned c = heap_class(bytes);
    uint64_t size = 64ull << c;
    sib_off off;

    if (c >= SIB_HEAP_CLASSES)
        return 0;
    off = h->free_list[c];
    if (off) {
        h->free_list[c] = *(sib_off *)sib_ptr(f, off);
        memset(sib_ptr(f, off), 0, sizeof(sib_off));
    } else {
        if (h->heap_brk + size > h->heap_end)
            return 0;
        off = h->heap_brk;
        h->heap_brk += size;
    }
    h->heap_used += size;
    return off;
}

void sib_heap_free(struct sib_fabric *f, sib_off off, uint64_t bytes)
{
    struct sib_hdr *h = f->hdr;
    unsigned c = heap_class(bytes);

    if (!off)
        return;
    *(sib_off *)sib_ptr(f, off) = h->free_list[c];
    h->free_list[c] = off;
    h->heap_used -= 64ull << c;
}
