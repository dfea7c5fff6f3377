/* Unit test of the topology maps: equal blocks of consecutive ranks need no table, ranges a
 * table per node, any other placement per-rank arrays; every accessor agrees with the map. */
#include <stdio.h>
#include <string.h>

#include "core/topology.h"

static int failures;

#define EXPECT(cond, ...)                 \
    do {                                  \
        if (!(cond)) {                    \
            failures++;                   \
            fprintf(stderr, __VA_ARGS__); \
            fputc('\n', stderr);          \
        }                                 \
    } while (0)

enum layout { BLOCK, RANGES, ARRAYS };

static void check(const char *name, const int *node_of, int n, enum layout want)
{
    topo_build(&topo, node_of, n);
    enum layout got = topo.block > 0 ? BLOCK : topo.node_of ? ARRAYS : RANGES;
    EXPECT(got == want, "%s: layout %d, expected %d", name, got, want);
    long bytes = topo_map_bytes(&topo);
    EXPECT(want != BLOCK || bytes == 0, "%s: %ld bytes without a table", name, bytes);
    EXPECT(want != RANGES || bytes == (long)sizeof(int) * (topo.num_nodes + 1), "%s: %ld bytes",
           name, bytes);

    int count[64] = {0}, nodes = 0;
    for (int r = 0; r < n; r++) {
        int node = node_of[r];
        nodes = node + 1 > nodes ? node + 1 : nodes;
        EXPECT(topo_node_of(r) == node, "%s: rank %d on node %d, not %d", name, r, topo_node_of(r),
               node);
        EXPECT(topo_local_index(r) == count[node], "%s: rank %d local %d, not %d", name, r,
               topo_local_index(r), count[node]);
        EXPECT(topo_node_rank(node, count[node]) == r, "%s: node %d local %d is %d, not %d", name,
               node, count[node], topo_node_rank(node, count[node]), r);
        if (count[node] == 0)
            EXPECT(topo_node_master(node) == r, "%s: master of node %d", name, node);
        count[node]++;
    }
    EXPECT(topo.num_nodes == nodes, "%s: %d nodes, not %d", name, topo.num_nodes, nodes);
    for (int node = 0; node < nodes; node++)
        EXPECT(topo_node_nprocs(node) == count[node], "%s: node %d has %d, not %d", name, node,
               topo_node_nprocs(node), count[node]);
    topo_free_maps(&topo);
}

int main(void)
{
    int blocks[10], one[1] = {0}, single[5] = {0}, ranges[7] = {0, 0, 0, 1, 1, 2, 2},
                    last_bigger[5] = {0, 0, 1, 1, 1}, round_robin[8], mixed[6] = {0, 0, 1, 0, 2, 2};
    for (int r = 0; r < 10; r++)
        blocks[r] = r / 4;
    for (int r = 0; r < 8; r++)
        round_robin[r] = r % 3;
    check("blocks of 4, last smaller", blocks, 10, BLOCK);
    check("one process", one, 1, BLOCK);
    check("one node", single, 5, BLOCK);
    check("ranges 3,2,2", ranges, 7, RANGES);
    check("ranges 2,3", last_bigger, 5, RANGES);
    check("round robin", round_robin, 8, ARRAYS);
    check("mixed", mixed, 6, ARRAYS);
    if (failures)
        return 1;
    printf("PASS\n");
    return 0;
}
