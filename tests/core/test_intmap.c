/*
 * The integer map under random puts and removes, against a plain array:
 * every key is found with its value, removed keys are gone, and the count
 * agrees (removal shifts entries back instead of leaving tombstones).
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/intmap.h"

#define KEYS 4096

int main(void)
{
    static void *reference[KEYS];
    static char values[KEYS];
    struct intmap m = {0};
    unsigned seed = 12345;
    size_t live = 0;
    for (int step = 0; step < 400000; step++) {
        uint32_t key = (uint32_t)(rand_r(&seed) % KEYS);
        if (rand_r(&seed) % 3) {
            live += reference[key] == NULL;
            reference[key] = &values[key];
            intmap_put(&m, key, &values[key]);
        } else {
            live -= reference[key] != NULL;
            reference[key] = NULL;
            intmap_remove(&m, key);
        }
        if (step % 997 == 0 || step > 399000) {
            for (uint32_t k = 0; k < KEYS; k++) {
                if (intmap_get(&m, k) != reference[k]) {
                    fprintf(stderr, "FAIL: key %u maps to %p, expected %p (step %d)\n", k,
                            intmap_get(&m, k), reference[k], step);
                    return 1;
                }
            }
            if (m.count != live) {
                fprintf(stderr, "FAIL: count %zu, expected %zu\n", m.count, live);
                return 1;
            }
        }
    }
    intmap_free(&m);
    printf("PASS intmap: 400000 random puts and removes\n");
    return 0;
}
