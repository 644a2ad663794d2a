// malloc_trim(3): glibc's <malloc.h> is not part of Swift's Glibc module.
#ifndef INBOX_MEMORY_H
#define INBOX_MEMORY_H

#include <malloc.h>

static inline int inbox_malloc_trim(void) {
    return malloc_trim(0);
}

#endif
