#ifndef BOBAO_CTESTSUPPORT_H
#define BOBAO_CTESTSUPPORT_H
#include <sys/types.h>

/// pidfd_open(2): a descriptor that becomes readable when process `pid` exits (any process, not only
/// our children). Returns -1 with errno set on failure.
int bobao_pidfd_open(pid_t pid);

#endif
