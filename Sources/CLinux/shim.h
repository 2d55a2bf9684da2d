// Linux interfaces Glibc's Swift module leaves out: epoll and eventfd. (No _GNU_SOURCE here: it would
// change glibc's structures and clash with the Glibc module's view of them.)
#include <sys/epoll.h>
#include <sys/eventfd.h>
