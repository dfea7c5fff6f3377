#include "api/user_handles.h"

#include <stdlib.h>

#include "core/error.h"
#include "transport/progress.h"
#include "core/runtime.h"
#include "core/threads.h"
#include "core/util.h"

/* Layout of armci_hdl_t: target = slot + 1 (0: none); aggregate = generation << 1 | flag. */
#define HDL_AGGREGATE 1

static struct handle **slots;
static int nslots;
static int *free_slots;
static int nfree;

void handles_init(void)
{
}

void handles_fini(void)
{
    handles_implicit_fini();
    for (int i = 0; i < nslots; i++)
        free(slots[i]);
    free(slots);
    free(free_slots);
    slots = NULL;
    free_slots = NULL;
    nslots = nfree = 0;
}

static int alloc_slot(void)
{
    if (nfree)
        return free_slots[--nfree];
    int grow = nslots ? nslots : 64;
    slots = xrealloc(slots, sizeof(*slots) * (nslots + grow));
    free_slots = xrealloc(free_slots, sizeof(*free_slots) * (nslots + grow));
    for (int i = nslots + grow - 1; i >= nslots; i--) {
        slots[i] = xcalloc(1, sizeof(struct handle));
        free_slots[nfree++] = i;
    }
    nslots += grow;
    return free_slots[--nfree];
}

static void release_slot(int slot)
{
    slots[slot]->in_use = false;
    slots[slot]->generation++;
    free_slots[nfree++] = slot;
}

/* The live request a handle refers to, or NULL if it refers to none (or a finished one). */
static struct handle *lookup(const char *call, const armci_hdl_t *hdl, int *slot_out)
{
    if (hdl->target == 0)
        return NULL;
    int slot = hdl->target - 1;
    if (slot < 0 || slot >= nslots)
        armci_die(call, "argument handle was not initialised with ARMCI_INIT_HANDLE");
    struct handle *r = slots[slot];
    if (!r->in_use || r->generation != (uint32_t)hdl->aggregate >> 1)
        return NULL;
    *slot_out = slot;
    return r;
}

static void attach(armci_hdl_t *hdl, int slot)
{
    struct handle *r = slots[slot];
    r->in_use = true;
    r->pending = 0;
    hdl->target = slot + 1;
    hdl->aggregate = (int)((r->generation << 1) | ((uint32_t)hdl->aggregate & HDL_AGGREGATE));
}

/*
 * The table is shared by the threads of a process (runtime lock); a handle
 * itself belongs to the thread that uses it. The handle state a slot points
 * to never moves, so the transport may count in it after the lock is gone.
 */
struct handle *handle_of_user(const char *call, armci_hdl_t *hdl)
{
    rt_lock();
    int slot;
    struct handle *r = lookup(call, hdl, &slot);
    if (!r || !(hdl->aggregate & HDL_AGGREGATE)) {
        if (r) {
            /* Reusing a handle that was never waited on: finish its operation first. */
            handle_wait(r);
            release_slot(slot);
        }
        attach(hdl, alloc_slot());
        r = slots[hdl->target - 1];
    }
    rt_unlock();
    return r;
}

int hdl_wait(const char *call, armci_hdl_t *hdl)
{
    check_ptr(call, "handle", hdl);
    rt_lock();
    int slot;
    struct handle *r = lookup(call, hdl, &slot);
    if (r) {
        handle_wait(r);
        release_slot(slot);
    }
    hdl->target = 0;
    hdl->aggregate &= HDL_AGGREGATE;
    rt_unlock();
    return 0;
}

int hdl_test(const char *call, armci_hdl_t *hdl)
{
    check_ptr(call, "handle", hdl);
    rt_lock();
    int slot;
    struct handle *r = lookup(call, hdl, &slot);
    if (r && r->pending > 0)
        progress_poll();
    int busy = r && r->pending > 0; /* ARMCI_Test: 0 means complete */
    if (r && !busy) {
        release_slot(slot);
        hdl->target = 0;
        hdl->aggregate &= HDL_AGGREGATE;
    }
    rt_unlock();
    return busy;
}

void hdl_init(armci_hdl_t *hdl)
{
    hdl->target = 0;
    hdl->aggregate = 0;
}

void hdl_set_aggregate(armci_hdl_t *hdl, bool aggregate)
{
    if (!aggregate)
        hdl_wait("ARMCI_UNSET_AGGREGATE_HANDLE", hdl);
    hdl->aggregate = aggregate ? (hdl->aggregate | HDL_AGGREGATE) : 0;
}
