// Linux interfaces Glibc's Swift module leaves out: epoll, eventfd, thread names.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

/// Names the calling thread (at most 15 bytes are kept).
static inline int bobao_name_current_thread(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}
