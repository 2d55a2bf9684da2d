#ifndef BOBAO_CTESTSUPPORT_H
#define BOBAO_CTESTSUPPORT_H
#include <sys/types.h>

/// pidfd_open(2): a descriptor that becomes readable when process `pid` exits (any process, not only
/// our children). Returns -1 with errno set on failure.
int bobao_pidfd_open(pid_t pid);

/// Starts `path` with `argv` and `envp`, its standard streams on the given descriptors (-1 for
/// /dev/null), with an empty signal mask and default signal dispositions. Test threads run with signals
/// blocked (dispatch's workers block them), and a child started by Foundation's Process inherits that
/// mask: netcat's -q timer or a SIGTERM would then never arrive. Returns 0 or an errno value.
int bobao_spawn(const char *path, char *const argv[], char *const envp[],
                int stdin_fd, int stdout_fd, int stderr_fd, pid_t *pid);

#endif
