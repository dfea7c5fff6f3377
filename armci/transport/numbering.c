/* One request counter per node for both carriers (numbering.h). */
#include "transport/numbering.h"

#include <stdlib.h>

#include "core/intmap.h"
#include "core/memstat.h"
#include "core/util.h"

struct node_counter {
    uint64_t next; /* the number the next request takes */
};

static struct intmap counters; /* node -> struct node_counter: the nodes talked to */
static bool (*ud_query)(int node);

uint64_t numbering_next(int node)
{
    struct node_counter *n = intmap_get(&counters, (uint32_t)node);
    if (!n) {
        n = xcalloc(1, sizeof(*n));
        memstat_add(MEM_CONNECTIONS, (long)sizeof(*n));
        intmap_put(&counters, (uint32_t)node, n);
    }
    return n->next++;
}

bool numbering_ud_busy(int node)
{
    return ud_query && ud_query(node);
}

void numbering_set_ud_query(bool (*busy)(int node))
{
    ud_query = busy;
}

void numbering_fini(void)
{
    struct node_counter *n;
    INTMAP_FOR_EACH(&counters, n)
    {
        memstat_add(MEM_CONNECTIONS, -(long)sizeof(*n));
        free(n);
    }
    intmap_free(&counters);
    ud_query = NULL;
}
