/*
 * A small open-addressing hash map from non-negative int keys to pointers.
 * Grows with its contents, so tables keyed by rank or QP number cost
 * memory in proportion to what is really in them, not to the job size.
 */
#ifndef ARMCI_CORE_INTMAP_H
#define ARMCI_CORE_INTMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct intmap {
    uint32_t *keys; /* key + 1; 0 marks an empty slot */
    void **values;
    size_t cap; /* power of two */
    size_t count;
};

void *intmap_get(const struct intmap *m, uint32_t key);
void intmap_put(struct intmap *m, uint32_t key, void *value);
void intmap_remove(struct intmap *m, uint32_t key);
void intmap_free(struct intmap *m);
/* The bytes of m's table. Every map is keyed by a peer (node, rank, QP), so the map counts
 * its table as connection memory (MEM_CONNECTIONS); a user counting it elsewhere moves it. */
long intmap_table_bytes(const struct intmap *m);

/* Visits every value (order unspecified). */
#define INTMAP_FOR_EACH(m, v)                                     \
    for (size_t intmap_i_ = 0; intmap_i_ < (m)->cap; intmap_i_++) \
        if ((m)->keys[intmap_i_] && ((v) = (m)->values[intmap_i_], 1))

#endif
