// Linux interfaces Glibc's Swift module leaves out: epoll and eventfd.
#include <sys/epoll.h>
#include <sys/eventfd.h>
