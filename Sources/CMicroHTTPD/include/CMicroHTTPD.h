#ifndef BOBAO_CMICROHTTPD_H
#define BOBAO_CMICROHTTPD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <microhttpd.h>

/// Opens libmicrohttpd (once; later calls return the first answer): NULL when it is ready, else what went
/// wrong. Everything below needs it; `bobao_http_start` calls it.
const char *bobao_http_load(void);

/// libmicrohttpd's calls Bobao makes, through the library opened by `bobao_http_load`.
void bobao_mhd_stop_daemon(struct MHD_Daemon *daemon);
enum MHD_Result bobao_mhd_add_response_header(struct MHD_Response *response, const char *header, const char *content);
struct MHD_Response *bobao_mhd_create_response_from_buffer(size_t size, void *buffer, enum MHD_ResponseMemoryMode mode);
struct MHD_Response *bobao_mhd_create_response_from_callback(
    uint64_t size, size_t block_size, MHD_ContentReaderCallback reader, void *context, MHD_ContentReaderFreeCallback release);
void bobao_mhd_destroy_response(struct MHD_Response *response);
enum MHD_Result bobao_mhd_queue_response(struct MHD_Connection *connection, unsigned int status, struct MHD_Response *response);
void bobao_mhd_resume_connection(struct MHD_Connection *connection);
void bobao_mhd_suspend_connection(struct MHD_Connection *connection);

/// Where the library's own error messages go, one formatted line at a time (its logger takes a va_list).
/// The caller owns it and keeps it until the daemon has stopped.
struct bobao_http_logger {
    void (*line)(void *context, const char *text);
    void *context;
};

/// libmicrohttpd's daemon set-up, whose options are variadic (which Swift cannot call), as one plain call.
///
/// Starts a daemon on `listen_fd` (bound and listening; the daemon owns and closes it) with its own polling
/// thread on poll(), suspend/resume, and the given limits. Returns NULL on failure (errno set where the
/// library sets it).
struct MHD_Daemon *bobao_http_start(
    int listen_fd, unsigned int connection_limit, unsigned int timeout_seconds,
    size_t memory_limit, MHD_AcceptPolicyCallback accept_policy, void *accept_context,
    MHD_AccessHandlerCallback handler, void *handler_context,
    MHD_RequestCompletedCallback completed, void *completed_context,
    MHD_NotifyConnectionCallback connection_notice, void *connection_context,
    struct bobao_http_logger *logger);

/// The first value of `kind` named `key` (case-insensitive for headers), or NULL.
const char *bobao_http_value(struct MHD_Connection *connection, enum MHD_ValueKind kind, const char *key);

/// The peer's address (an IPv4 or IPv6 socket address), or NULL.
const struct sockaddr *bobao_http_client_address(struct MHD_Connection *connection);

/// Calls `visit` for every query argument (already percent-decoded by libmicrohttpd), with its length in
/// bytes (a decoded `%00` is inside it).
typedef void (*bobao_http_visitor)(void *context, const char *key, size_t key_size, const char *value, size_t value_size);
void bobao_http_arguments(struct MHD_Connection *connection, bobao_http_visitor visit, void *context);

/// How many connections the daemon has now.
unsigned int bobao_http_connection_count(struct MHD_Daemon *daemon);

#endif
