// eventfd(2): glibc's <sys/eventfd.h> is not part of Swift's Glibc module.
#ifndef INBOX_EVENTFD_H
#define INBOX_EVENTFD_H

#include <sys/eventfd.h>

/// A close-on-exec eventfd with a zero counter; non-blocking when `nonblocking` is not 0.
static inline int inbox_eventfd(int nonblocking) {
    return eventfd(0, EFD_CLOEXEC | (nonblocking ? EFD_NONBLOCK : 0));
}

#endif
