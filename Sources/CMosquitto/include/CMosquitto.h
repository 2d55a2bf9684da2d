#ifndef BOBAO_CMOSQUITTO_H
#define BOBAO_CMOSQUITTO_H

// libmosquitto, the MQTT client library (Debian's libmosquitto-dev): its header, and its calls through the
// library opened only when --mqtt asks for it (see mosquitto_loader.c).
#include <stdbool.h>
#include <mosquitto.h>

/// Opens libmosquitto (once; later calls return the first answer): NULL when it is ready, else what went wrong.
const char *bobao_mosquitto_load(void);

const char * bobao_mosquitto_connack_string(int connack_code);
int bobao_mosquitto_connect_async(struct mosquitto *mosq, const char *host, int port, int keepalive);
void bobao_mosquitto_connect_with_flags_callback_set(struct mosquitto *mosq,
    void (*on_connect)(struct mosquitto *, void *, int, int));
void bobao_mosquitto_destroy(struct mosquitto *mosq);
int bobao_mosquitto_disconnect(struct mosquitto *mosq);
void bobao_mosquitto_disconnect_callback_set(struct mosquitto *mosq, void (*on_disconnect)(struct mosquitto *,
    void *, int));
int bobao_mosquitto_int_option(struct mosquitto *mosq, enum mosq_opt_t option, int value);
int bobao_mosquitto_lib_init(void);
int bobao_mosquitto_loop_misc(struct mosquitto *mosq);
int bobao_mosquitto_loop_read(struct mosquitto *mosq, int max_packets);
int bobao_mosquitto_loop_write(struct mosquitto *mosq, int max_packets);
void bobao_mosquitto_message_callback_set(struct mosquitto *mosq, void (*on_message)(struct mosquitto *,
    void *, const struct mosquitto_message *));
struct mosquitto * bobao_mosquitto_new(const char *id, bool clean_session, void *obj);
int bobao_mosquitto_publish(struct mosquitto *mosq, int *mid, const char *topic,
    int payloadlen, const void *payload, int qos, bool retain);
void bobao_mosquitto_publish_callback_set(struct mosquitto *mosq, void (*on_publish)(struct mosquitto *,
    void *, int));
int bobao_mosquitto_socket(struct mosquitto *mosq);
const char * bobao_mosquitto_strerror(int mosq_errno);
void bobao_mosquitto_subscribe_callback_set(struct mosquitto *mosq, void (*on_subscribe)(struct mosquitto *,
    void *, int, int, const int *));
int bobao_mosquitto_subscribe_multiple(struct mosquitto *mosq, int *mid,
    int sub_count, char *const *const sub, int qos, int options, const mosquitto_property *properties);
void bobao_mosquitto_user_data_set(struct mosquitto *mosq, void *obj);
int bobao_mosquitto_username_pw_set(struct mosquitto *mosq, const char *username, const char *password);
bool bobao_mosquitto_want_write(struct mosquitto *mosq);
int bobao_mosquitto_will_set(struct mosquitto *mosq, const char *topic,
    int payloadlen, const void *payload, int qos, bool retain);

#endif
