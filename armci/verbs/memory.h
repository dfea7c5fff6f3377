/*
 * The process's verbs resources: device context, protection domain and
 * memory registration. Active only when the job spans more than one node;
 * a single-node job opens no verbs device at all.
 */
#ifndef ARMCI_VERBS_MEMORY_H
#define ARMCI_VERBS_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ibv_mr;

struct net_mr {
    struct ibv_mr *mr;
    void *addr;
    size_t len;
    uint32_t lkey;
    uint32_t rkey;
    bool user; /* user-visible memory: found by net_user_keys */
};

bool net_active(void);
void net_init(void);
void net_fini(void);

/* Registers [addr, addr+len); remote = also writable/readable/atomic by peers. */
struct net_mr *net_reg(const char *call, void *addr, size_t len, bool remote);
/* As net_reg, but NULL (errno set) where net_reg dies: for memory the caller can do without. */
struct net_mr *net_try_reg(void *addr, size_t len, bool remote);
void net_dereg(struct net_mr *mr);

/*
 * Registers memory the user passes to ARMCI calls (segments,
 * ARMCI_Malloc_local) and remembers it, so that transfers from or to it
 * move zero-copy: net_user_keys finds the registration covering a range.
 */
struct net_mr *net_reg_user(const char *call, void *addr, size_t len);
/* The keys of the registration covering a range: such memory is also readable and writable by
 * the job's data servers (strided gets land there, strided puts are read from there directly). */
bool net_user_keys(const void *addr, size_t len, uint32_t *lkey, uint32_t *rkey);

/*
 * Keys for a transfer's local memory: that of an ARMCI registration (segments,
 * ARMCI_Malloc_local), else, if the caller's route says the transfer is worth
 * it (may_cache: route_register_local), a cached registration of the user's
 * own memory (reg_cache.h). *hold, when set, goes back to net_local_release
 * once every request naming the keys is posted.
 */
struct reg_entry;
bool net_local_keys(const void *addr, size_t len, bool may_cache, uint32_t *lkey, uint32_t *rkey,
                    struct reg_entry **hold);
void net_local_release(struct reg_entry *hold);

#endif
