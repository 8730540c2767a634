/* The few libzmq declarations scaler.c needs.
 *
 * There is no zmq.h on the test machine: the component links against the libzmq
 * that pyzmq's wheel bundles (pyzmq.libs/libzmq-*.so*). These prototypes, the
 * zmq_msg_t / zmq_pollitem_t layouts and the constants are libzmq's stable 4.x
 * ABI (include/zmq.h of libzmq 4.0 through 4.3, Linux).
 */
#ifndef MOONPOOL_TEST_ZMQ_ABI_H
#define MOONPOOL_TEST_ZMQ_ABI_H

#include <stddef.h>

/* Socket types. */
#define ZMQ_ROUTER 6

/* Socket options. */
#define ZMQ_RCVMORE 13
#define ZMQ_LINGER 17
#define ZMQ_ROUTER_MANDATORY 33

/* Send / receive flags. */
#define ZMQ_DONTWAIT 1
#define ZMQ_SNDMORE 2

/* Poll events. */
#define ZMQ_POLLIN 1

/* An opaque message: 64 bytes, pointer-aligned (zmq.h 4.x). */
typedef struct zmq_msg_t {
    unsigned char _[64];
} __attribute__((aligned(sizeof(void *)))) zmq_msg_t;

/* Non-Windows layout. */
typedef struct zmq_pollitem_t {
    void *socket;
    int fd;
    short events;
    short revents;
} zmq_pollitem_t;

void zmq_version(int *major, int *minor, int *patch);
int zmq_errno(void);
const char *zmq_strerror(int errnum);

void *zmq_ctx_new(void);
int zmq_ctx_term(void *context);

void *zmq_socket(void *context, int type);
int zmq_close(void *socket);
int zmq_setsockopt(void *socket, int option, const void *optval, size_t optvallen);
int zmq_getsockopt(void *socket, int option, void *optval, size_t *optvallen);
int zmq_bind(void *socket, const char *endpoint);
int zmq_send(void *socket, const void *buf, size_t len, int flags);

int zmq_msg_init(zmq_msg_t *msg);
int zmq_msg_recv(zmq_msg_t *msg, void *socket, int flags);
int zmq_msg_close(zmq_msg_t *msg);
void *zmq_msg_data(zmq_msg_t *msg);
size_t zmq_msg_size(const zmq_msg_t *msg);
int zmq_msg_more(const zmq_msg_t *msg);

int zmq_poll(zmq_pollitem_t *items, int nitems, long timeout);

#endif
