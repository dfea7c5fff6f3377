/*
 * Send completions of the client's RC QPs: what each retires, by the
 * accounting of send_queue.h, and the works it completes (work.h).
 */
#ifndef ARMCI_TRANSPORT_RETIRE_H
#define ARMCI_TRANSPORT_RETIRE_H

struct ibv_wc;

/*
 * The handler of send completions on the client CQ: a signaled completion
 * retires the run of requests before it on its connection (the lazy works
 * among them, then its own work); a failed one ends the job, naming the
 * node (a lost node's adapter stops acknowledging).
 */
void retire_on_send_completion(void *ctx, const struct ibv_wc *wc);

#endif
