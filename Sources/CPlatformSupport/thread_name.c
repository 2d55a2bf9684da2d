// pthread_setname_np is a GNU extension; _GNU_SOURCE stays inside this file.
#define _GNU_SOURCE
#include "CPlatformSupport.h"
#include <pthread.h>

int bobao_name_current_thread(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}
