/*
 * Inside api/: the table of this process's ARMCI segments and the index of
 * their blocks, which seg_resolve and seg_block search (segment_table.c).
 * segment.c's collective allocation fills it and empties it.
 */
#ifndef ARMCI_API_SEGMENT_TABLE_H
#define ARMCI_API_SEGMENT_TABLE_H

#include <stdint.h>

#include "api/segment.h"
#include "core/util.h"

/* Blocks start on cache lines: fine for every ARMCI type and avoids false sharing. */
#define BLOCK_ALIGN CACHE_LINE

/*
 * The block index: one record per block of every segment (members that
 * asked for 0 bytes have none), grouped by process and sorted by start
 * within a process: blocks[first[p] .. first[p + 1]) are p's, and a lookup
 * is a binary search among them. Everything per node (server base, rkey)
 * is in the segment the record names. ARMCI_Malloc and ARMCI_Free rebuild
 * the arrays (they are collective and O(processes) anyway), so they hold
 * exactly what is in use.
 */
struct block {
    uintptr_t start; /* as ptr_arr gives it here */
    uint64_t bytes;
    uint32_t seg;   /* slot in seg_table */
    uint32_t place; /* offset in its node's object, in BLOCK_ALIGN units */
};

/* A block to add, and whose it is. */
struct new_block {
    int proc;
    struct block b;
};

/* Puts s in a free slot of the table and its blocks (at most one per process, sorted by
 * process) in the index (runtime lock held). */
void segment_table_insert(struct segment *s, struct new_block *add, int nadd);
/* Takes s and its blocks out (runtime lock held); the caller frees s. */
void segment_table_remove(struct segment *s);
/* The segment with this id, or NULL (runtime lock held). */
struct segment *segment_table_by_id(uint64_t id);
/* The segment of comm whose block ptr is mine (ptr as ARMCI_Malloc returned it), or NULL
 * (runtime lock held). */
struct segment *segment_table_by_my_block(MPI_Comm comm, const void *ptr);
/* A segment still in the table, or NULL (finalize). */
struct segment *segment_table_any(void);
/* Frees the (emptied) table and index. */
void segment_table_fini(void);
/* Memory held for segments grew or shrank by delta bytes (ARMCI_Malloc_local regions too). */
void segment_table_account(long delta);

#endif
