/*
 * Intrusive FIFOs: a head and a tail pointer, and a link field of the
 * items' own (`next`, named by the caller, so an item may sit in several
 * FIFOs at once). Header only, nothing to link: armci/ and softib/ may
 * both use it.
 */
#ifndef COMMON_FIFO_H
#define COMMON_FIFO_H

/* Appends item to the FIFO (head, tail) linked through item->next. */
#define FIFO_PUSH(head, tail, item, next) \
    do {                                  \
        (item)->next = NULL;              \
        if (tail)                         \
            (tail)->next = (item);        \
        else                              \
            (head) = (item);              \
        (tail) = (item);                  \
    } while (0)

/* Unlinks the FIFO's first item (the FIFO is not empty; the caller holds it already). */
#define FIFO_DROP_HEAD(head, tail, next) \
    do {                                 \
        (head) = (head)->next;           \
        if (!(head))                     \
            (tail) = NULL;               \
    } while (0)

#endif
