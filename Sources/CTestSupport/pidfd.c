#define _GNU_SOURCE
#include "CTestSupport.h"
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434 /* the same number on every Linux architecture */
#endif

int bobao_pidfd_open(pid_t pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}
