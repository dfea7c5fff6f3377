/*
 * The client progress engine: drives completions of this process's
 * in-flight operations (verbs completions, server replies, connection
 * setup). Single-node jobs have nothing in flight.
 */
#ifndef ARMCI_TRANSPORT_PROGRESS_H
#define ARMCI_TRANSPORT_PROGRESS_H

/* Handles whatever has completed, without blocking. */
void progress_poll(void);

/* Like progress_poll, but when nothing is ready it may block briefly (no busy spin). */
void progress_wait(void);

#endif
