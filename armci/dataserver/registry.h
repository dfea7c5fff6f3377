/*
 * The segments this data server has mapped and registered for remote
 * access: every request's address range is checked here before memory is
 * touched.
 */
#ifndef ARMCI_DATASERVER_REGISTRY_H
#define ARMCI_DATASERVER_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum registry_kind {
    REGISTRY_DATA,  /* ARMCI_Malloc memory */
    REGISTRY_LOCKS, /* ARMCI_Create_mutexes: an array of struct ticket_lock */
    REGISTRY_KIND_MAX
};

/* Called with a lock block's range just before it is unmapped (the locks' waiters must go). */
typedef void (*registry_lock_block_gone_fn)(uint64_t base, uint64_t size);
void registry_init(registry_lock_block_gone_fn gone);

bool registry_contains(uint64_t addr, uint64_t len);
/* The same, and the local key of the registration holding the range. */
bool registry_lkey(uint64_t addr, uint64_t len, uint32_t *lkey);
/* Whether addr is the start of a mutex in a lock block. */
bool registry_is_lock(uint64_t addr);
/* Map (at `wanted` if that range is free, 0: anywhere; *base says where) and unmap for
 * node-local process `local`; 0 or an errno value. Only the process that mapped a segment
 * may unmap it. */
int registry_map(uint64_t seg_id, const char *name, size_t size, enum registry_kind kind, int local,
                 uint64_t wanted, uint64_t *base, uint32_t *rkey);
int registry_unmap(uint64_t seg_id, int local);
void registry_fini(void);

#endif
