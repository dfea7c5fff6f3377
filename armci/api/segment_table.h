/*
 * Inside api/: the table of this process's ARMCI segments, whose block
 * indexes seg_resolve and seg_block search (segment_table.c).
 * segment.c's collective allocation fills it and empties it.
 */
#ifndef ARMCI_API_SEGMENT_TABLE_H
#define ARMCI_API_SEGMENT_TABLE_H

#include <stdint.h>

#include "api/segment.h"
#include "core/util.h"

/* Puts s (its block index published) in a free slot of the table (runtime lock held). */
void segment_table_insert(struct segment *s);
/* Takes s out (runtime lock held); the caller releases its index and frees it. */
void segment_table_remove(struct segment *s);
/* The segment with this id, or NULL (runtime lock held). */
struct segment *segment_table_by_id(uint64_t id);
/* The segment of comm whose block ptr is mine (ptr as ARMCI_Malloc returned it), or NULL
 * (runtime lock held). */
struct segment *segment_table_by_my_block(MPI_Comm comm, const void *ptr);
/* A segment still in the table, or NULL (finalize). */
struct segment *segment_table_any(void);
/* Frees the (emptied) table. */
void segment_table_fini(void);
/* Memory held for segments grew or shrank by delta bytes (ARMCI_Malloc_local regions too). */
void segment_table_account(long delta);

#endif
