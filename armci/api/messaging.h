/* Set-up of the armci_msg_* layer (message.c). */
#ifndef ARMCI_API_MESSAGING_H
#define ARMCI_API_MESSAGING_H

void message_init(void);
void message_fini(void);

#endif
