#include "CMosquitto.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

/* libmosquitto is opened when --mqtt asks for it, not linked: with it come OpenSSL's libssl and libcrypto,
 about 2 MB of resident memory that a server without MQTT has no use for. */
#define BOBAO_MOSQUITTO_FUNCTIONS(X) \
    X(mosquitto_connack_string) X(mosquitto_connect_async) X(mosquitto_connect_with_flags_callback_set) \
    X(mosquitto_destroy) X(mosquitto_disconnect) X(mosquitto_disconnect_callback_set) \
    X(mosquitto_int_option) X(mosquitto_lib_init) X(mosquitto_loop_misc) \
    X(mosquitto_loop_read) X(mosquitto_loop_write) X(mosquitto_message_callback_set) \
    X(mosquitto_new) X(mosquitto_publish) X(mosquitto_publish_callback_set) \
    X(mosquitto_socket) X(mosquitto_strerror) X(mosquitto_subscribe_callback_set) \
    X(mosquitto_subscribe_multiple) X(mosquitto_user_data_set) X(mosquitto_username_pw_set) \
    X(mosquitto_want_write) X(mosquitto_will_set)
#define BOBAO_DECLARE(name) static __typeof__(&name) p_##name;
BOBAO_MOSQUITTO_FUNCTIONS(BOBAO_DECLARE)

static const char *load_problem = "not loaded";
static char load_message[512];

static void load_once(void)
{
    void *library = dlopen("libmosquitto.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(load_message, sizeof load_message, "%s", dlerror());
        load_problem = load_message;
        return;
    }
#define BOBAO_LOAD(name) \
    if ((p_##name = (__typeof__(&name))dlsym(library, #name)) == NULL) { \
        snprintf(load_message, sizeof load_message, "libmosquitto.so.1 has no %s", #name); \
        load_problem = load_message; \
        return; \
    }
    BOBAO_MOSQUITTO_FUNCTIONS(BOBAO_LOAD)
    load_problem = NULL;
}

const char *bobao_mosquitto_load(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, load_once);
    return load_problem;
}

const char * bobao_mosquitto_connack_string(int connack_code) { return p_mosquitto_connack_string(connack_code); }
int bobao_mosquitto_connect_async(struct mosquitto *mosq, const char *host, int port, int keepalive)
{
    return p_mosquitto_connect_async(mosq, host, port, keepalive);
}
void bobao_mosquitto_connect_with_flags_callback_set(struct mosquitto *mosq, void (*on_connect)(struct mosquitto *, void *, int, int))
{
    p_mosquitto_connect_with_flags_callback_set(mosq, on_connect);
}
void bobao_mosquitto_destroy(struct mosquitto *mosq) { p_mosquitto_destroy(mosq); }
int bobao_mosquitto_disconnect(struct mosquitto *mosq) { return p_mosquitto_disconnect(mosq); }
void bobao_mosquitto_disconnect_callback_set(struct mosquitto *mosq, void (*on_disconnect)(struct mosquitto *, void *, int))
{
    p_mosquitto_disconnect_callback_set(mosq, on_disconnect);
}
int bobao_mosquitto_int_option(struct mosquitto *mosq, enum mosq_opt_t option, int value)
{
    return p_mosquitto_int_option(mosq, option, value);
}
int bobao_mosquitto_lib_init(void) { return p_mosquitto_lib_init(); }
int bobao_mosquitto_loop_misc(struct mosquitto *mosq) { return p_mosquitto_loop_misc(mosq); }
int bobao_mosquitto_loop_read(struct mosquitto *mosq, int max_packets)
{
    return p_mosquitto_loop_read(mosq, max_packets);
}
int bobao_mosquitto_loop_write(struct mosquitto *mosq, int max_packets)
{
    return p_mosquitto_loop_write(mosq, max_packets);
}
void bobao_mosquitto_message_callback_set(struct mosquitto *mosq, void (*on_message)(struct mosquitto *, void *, const struct mosquitto_message *))
{
    p_mosquitto_message_callback_set(mosq, on_message);
}
struct mosquitto * bobao_mosquitto_new(const char *id, bool clean_session, void *obj)
{
    return p_mosquitto_new(id, clean_session, obj);
}
int bobao_mosquitto_publish(struct mosquitto *mosq, int *mid, const char *topic, int payloadlen, const void *payload, int qos, bool retain)
{
    return p_mosquitto_publish(mosq, mid, topic, payloadlen, payload, qos, retain);
}
void bobao_mosquitto_publish_callback_set(struct mosquitto *mosq, void (*on_publish)(struct mosquitto *, void *, int))
{
    p_mosquitto_publish_callback_set(mosq, on_publish);
}
int bobao_mosquitto_socket(struct mosquitto *mosq) { return p_mosquitto_socket(mosq); }
const char * bobao_mosquitto_strerror(int mosq_errno) { return p_mosquitto_strerror(mosq_errno); }
void bobao_mosquitto_subscribe_callback_set(struct mosquitto *mosq, void (*on_subscribe)(struct mosquitto *, void *, int, int, const int *))
{
    p_mosquitto_subscribe_callback_set(mosq, on_subscribe);
}
int bobao_mosquitto_subscribe_multiple(struct mosquitto *mosq, int *mid, int sub_count, char *const *const sub, int qos, int options, const mosquitto_property *properties)
{
    return p_mosquitto_subscribe_multiple(mosq, mid, sub_count, sub, qos, options, properties);
}
void bobao_mosquitto_user_data_set(struct mosquitto *mosq, void *obj) { p_mosquitto_user_data_set(mosq, obj); }
int bobao_mosquitto_username_pw_set(struct mosquitto *mosq, const char *username, const char *password)
{
    return p_mosquitto_username_pw_set(mosq, username, password);
}
bool bobao_mosquitto_want_write(struct mosquitto *mosq) { return p_mosquitto_want_write(mosq); }
int bobao_mosquitto_will_set(struct mosquitto *mosq, const char *topic, int payloadlen, const void *payload, int qos, bool retain)
{
    return p_mosquitto_will_set(mosq, topic, payloadlen, payload, qos, retain);
}
