#include "core/intmap.h"

#include <stdlib.h>

#include "core/memstat.h"
#include "core/util.h"

static size_t home_of(const struct intmap *m, uint32_t key)
{
    return (size_t)(key * 2654435761u) & (m->cap - 1);
}

static size_t slot_of(const struct intmap *m, uint32_t key)
{
    size_t i = home_of(m, key);
    while (m->keys[i] && m->keys[i] != key + 1)
        i = (i + 1) & (m->cap - 1);
    return i;
}

void *intmap_get(const struct intmap *m, uint32_t key)
{
    if (!m->cap)
        return NULL;
    size_t i = slot_of(m, key);
    return m->keys[i] ? m->values[i] : NULL;
}

static long table_bytes(size_t cap)
{
    return (long)(cap * (sizeof(uint32_t) + sizeof(void *)));
}

long intmap_table_bytes(const struct intmap *m)
{
    return table_bytes(m->cap);
}

static void grow(struct intmap *m)
{
    struct intmap bigger = {
        .cap = m->cap ? 2 * m->cap : 16,
    };
    bigger.keys = xcalloc(bigger.cap, sizeof(uint32_t));
    bigger.values = xcalloc(bigger.cap, sizeof(void *));
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i])
            intmap_put(&bigger, m->keys[i] - 1, m->values[i]);
    memstat_add(MEM_CONNECTIONS, table_bytes(bigger.cap) - table_bytes(m->cap));
    free(m->keys);
    free(m->values);
    *m = bigger;
}

void intmap_put(struct intmap *m, uint32_t key, void *value)
{
    if ((m->count + 1) * 2 > m->cap)
        grow(m);
    size_t i = slot_of(m, key);
    if (!m->keys[i]) {
        m->keys[i] = key + 1;
        m->count++;
    }
    m->values[i] = value;
}

void intmap_remove(struct intmap *m, uint32_t key)
{
    if (!m->cap)
        return;
    size_t hole = slot_of(m, key);
    if (!m->keys[hole])
        return;
    m->count--;
    /* Linear probing: entries after the hole whose home is not between it and themselves
     * would no longer be found, so they move back into it (no tombstones). */
    size_t mask = m->cap - 1;
    for (size_t j = (hole + 1) & mask; m->keys[j]; j = (j + 1) & mask) {
        size_t home = home_of(m, m->keys[j] - 1);
        bool stays = hole < j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (stays)
            continue;
        m->keys[hole] = m->keys[j];
        m->values[hole] = m->values[j];
        hole = j;
    }
    m->keys[hole] = 0;
    m->values[hole] = NULL;
}

void intmap_free(struct intmap *m)
{
    memstat_add(MEM_CONNECTIONS, -table_bytes(m->cap));
    free(m->keys);
    free(m->values);
    *m = (struct intmap){0};
}
