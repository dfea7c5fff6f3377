#include "core/intmap.h"

#include <stdlib.h>

#include "core/memstat.h"
#include "core/util.h"

static size_t slot_of(const struct intmap *m, uint32_t key)
{
    size_t h = (size_t)(key * 2654435761u);
    size_t i = h & (m->cap - 1);
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

/* Every map is keyed by a peer (node, rank, QP): its table counts as connection memory. */
static long table_bytes(size_t cap)
{
    return (long)(cap * (sizeof(uint32_t) + sizeof(void *)));
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

void intmap_free(struct intmap *m)
{
    memstat_add(MEM_CONNECTIONS, -table_bytes(m->cap));
    free(m->keys);
    free(m->values);
    *m = (struct intmap){0};
}
