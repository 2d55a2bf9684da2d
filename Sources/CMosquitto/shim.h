// libmosquitto, the MQTT client library (Debian's libmosquitto-dev).
#include <mosquitto.h>
