/*
 * Registrations of user memory ARMCI did not allocate (GA's local arrays:
 * malloc'd, static, on the stack), kept for reuse, so that a large transfer
 * from or to such memory moves zero-copy like ARMCI_Malloc_local memory
 * instead of through bounce buffers (a copy per piece on this side): puts
 * and accumulates from it, and gets into it (the data server writes a
 * packed run in place, or RDMA reads land there), from the size
 * route_register_local names.
 *
 * Why it is safe to keep a registration of memory the user may free and
 * map again without telling us: only where the device follows the
 * process's page tables rather than pinning the pages it found at
 * registration. softib does (it records an address range and moves data
 * with process_vm_readv/writev on the current mapping), so a registration
 * of a range that was unmapped and mapped again reads and writes the new
 * pages. A pinning device (an HCA, or rdma_rxe, whose kernel here has no
 * on-demand paging) would keep the old pages: a get through a stale
 * registration would land where nobody reads it. There the cache is off and
 * the transfers copy through bounce buffers, several in flight. Catching
 * free/munmap instead would need hooks on every way memory leaves a process
 * (glibc's free unmaps, trims and madvises through internal calls no
 * library can interpose; mremap, brk, MADV_DONTNEED), which a library loaded
 * under GA cannot own reliably; on-demand-paging memory regions, which the
 * kernel keeps in step with the page tables, are the way to enable it on
 * an HCA.
 *
 * Entries are page-rounded ranges, at most ARMCI_REG_CACHE of them, the
 * least recently used dropped for a new one. A registration is only
 * dropped when nothing can be using its keys: no caller between
 * reg_cache_keys and reg_cache_release (posting), and no work in flight.
 */
#ifndef ARMCI_VERBS_REG_CACHE_H
#define ARMCI_VERBS_REG_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct reg_entry;

/* in_flight: the number of operations that may still use registered memory (the client's
 * outstanding works): an entry is dropped only while it is zero. */
void reg_cache_init(const char *provider, int (*in_flight)(void));
/* Deregisters everything (nothing may be in flight). */
void reg_cache_fini(void);

/*
 * Keys of a registration covering [addr, addr+len), registering it if
 * needed: the entry to hand back to reg_cache_release once every work
 * request naming the keys is posted, or NULL (the cache is off, full of
 * entries in use, or the range cannot be registered: copy instead).
 */
struct reg_entry *reg_cache_keys(const void *addr, size_t len, uint32_t *lkey, uint32_t *rkey);
void reg_cache_release(struct reg_entry *e);

#endif
