// libsystemd's service-manager interface only: sd_notify and sd_watchdog_enabled.
#include <systemd/sd-daemon.h>
