#ifndef BOBAO_CPLATFORMSUPPORT_H
#define BOBAO_CPLATFORMSUPPORT_H

/// Names the calling thread as `top -H` and debuggers show it (the kernel keeps 15 bytes).
/// Returns 0 or an errno value.
int bobao_name_current_thread(const char *name);

#endif
