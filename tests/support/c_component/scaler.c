/* scaler: a moonpool component written in C from docs/protocol.md and
 * proto/moonpool/v1/ (the .proto files) alone: no protobuf library, no moonpool code.
 *
 * Ports (all moonpool.v1.Signals):
 *   in     input; every signal value v ...
 *   out    ... becomes gain * v + offset + noise_std * z, z a keyed standard normal
 *          (protocol.md §11; channel = the signal's name, sample index = the step
 *          index since Initialize). Header.sim_time_ns = t, Header.frame_id =
 *          the frame_id parameter. Published on steps whose index is a multiple
 *          of `every`, once an input has arrived.
 *   stats  published at Initialize and at every step: signals "steps" (steps done)
 *          and "fresh" (steps that received a new input, told by header.seq).
 *          Header.sim_time_ns = the end of the step (start_time_ns at Initialize).
 *
 * Terminate reports {"fresh": N, "steps": M}.
 *
 * Usage: scaler ENDPOINT [--once]   bind a ROUTER at ENDPOINT and serve sessions
 *                                   (--once: exit 0 after the first one ends)
 *        scaler --noise SEED INSTANCE CHANNEL INDEX
 *                                   print the keyed uniform and normal (§11)
 *
 * Build: cc -std=c11 -O2 -ffp-contract=off scaler.c -o scaler LIBZMQ -lm
 * (no floating-point contraction, so gain * v + offset rounds like Python does).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "zmq_abi.h"

#define KIND "c:Scaler"
#define PEER_TIMEOUT_LIMIT_NS (300LL * 1000000000LL)
#define SIGNALS "moonpool.v1.Signals"
#define PI 3.14159265358979323846 /* rounds to Python's math.pi */

enum { ST_CREATED = 1, ST_CONFIGURED = 2, ST_INITIALIZED = 3, ST_TERMINATED = 4, ST_FAILED = 5 };
enum {
    E_MALFORMED = 1, E_PROTOCOL_VERSION = 2, E_INVALID_STATE = 3, E_INVALID_PARAMETER = 4,
    E_INVALID_INPUT = 5, E_STEP_FAILED = 6, E_BUSY = 7, E_INTERNAL = 8
};
enum { PT_DOUBLE = 1, PT_INT = 2, PT_BOOL = 3, PT_STRING = 4, PT_DOUBLE_ARRAY = 5,
       PT_STRING_ARRAY = 6, PT_JSON = 7 };
/* Request.body / Reply.body field numbers. */
enum { RQ_DESCRIBE = 10, RQ_CONFIGURE = 11, RQ_INITIALIZE = 12, RQ_STEP = 13,
       RQ_TERMINATE = 14, RQ_HEARTBEAT = 15, RQ_STEP_BATCH = 16 };
enum { RP_DESCRIPTION = 10, RP_ACK = 11, RP_INITIALIZED = 12, RP_STEP_RESULT = 13,
       RP_TERMINATED = 14, RP_HEARTBEAT = 15, RP_ERROR = 16 };

static void die(const char *what)
{
    fprintf(stderr, "scaler: %s: %s\n", what, zmq_strerror(zmq_errno()));
    exit(1);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "scaler: out of memory\n");
        exit(1);
    }
    return p;
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) {
        fprintf(stderr, "scaler: out of memory\n");
        exit(1);
    }
    return p;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---------------------------------------------------------------- protobuf out */

typedef struct { uint8_t *p; size_t n, cap; } buf_t;

static void buf_put(buf_t *b, const void *d, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = xrealloc(b->p, b->cap);
    }
    if (n)
        memcpy(b->p + b->n, d, n);
    b->n += n;
}

static void buf_free(buf_t *b) { free(b->p); b->p = NULL; b->n = b->cap = 0; }

static void put_varint(buf_t *b, uint64_t v)
{
    uint8_t t[10];
    size_t n = 0;
    do {
        t[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            t[n] |= 0x80;
        n++;
    } while (v);
    buf_put(b, t, n);
}

static void put_tag(buf_t *b, unsigned field, unsigned wt) { put_varint(b, ((uint64_t)field << 3) | wt); }

/* Singular proto3 scalars: omitted when they equal the default. */
static void put_uint(buf_t *b, unsigned field, uint64_t v)
{
    if (v) {
        put_tag(b, field, 0);
        put_varint(b, v);
    }
}

static void put_int(buf_t *b, unsigned field, int64_t v) { put_uint(b, field, (uint64_t)v); }

static void put_fixed64(buf_t *b, unsigned field, uint64_t bits)
{
    uint8_t t[8];
    for (int i = 0; i < 8; i++)
        t[i] = (uint8_t)(bits >> (8 * i));
    put_tag(b, field, 1);
    buf_put(b, t, 8);
}

/* A double is written unless its bits are all zero (so -0.0 is written). */
static void put_double(buf_t *b, unsigned field, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, 8);
    if (bits)
        put_fixed64(b, field, bits);
}

/* Length-delimited, always written (repeated elements, set sub-messages, oneof members). */
static void put_len(buf_t *b, unsigned field, const void *d, size_t n)
{
    put_tag(b, field, 2);
    put_varint(b, n);
    buf_put(b, d, n);
}

/* Singular string / bytes: omitted when empty. */
static void put_str(buf_t *b, unsigned field, const char *s)
{
    size_t n = strlen(s);
    if (n)
        put_len(b, field, s, n);
}

static void put_msg(buf_t *b, unsigned field, const buf_t *sub) { put_len(b, field, sub->p, sub->n); }

/* ----------------------------------------------------------------- protobuf in */

typedef struct { const uint8_t *p; size_t n; } span_t;
typedef struct { const uint8_t *p, *end; } rd_t;
typedef struct { uint32_t field; int wt; uint64_t v; span_t s; } fld_t;

static rd_t rd_of(span_t s) { rd_t r = { s.p, s.p + s.n }; return r; }

static int rd_varint(rd_t *r, uint64_t *out)
{
    uint64_t v = 0;
    for (int i = 0; i < 10; i++) {
        if (r->p >= r->end)
            return 0;
        uint8_t c = *r->p++;
        v |= (uint64_t)(c & 0x7f) << (7 * i);
        if (!(c & 0x80)) {
            *out = v;
            return 1;
        }
    }
    return 0; /* longer than 10 bytes */
}

/* One field; wire type 4 (end group) is returned to the caller. 1 ok, 0 end, -1 error. */
static int rd_field_raw(rd_t *r, fld_t *f, int depth)
{
    uint64_t key;
    if (r->p == r->end)
        return 0;
    if (!rd_varint(r, &key) || key >> 32)
        return -1;
    f->field = (uint32_t)(key >> 3);
    f->wt = (int)(key & 7);
    if (f->field == 0)
        return -1;
    switch (f->wt) {
    case 0:
        return rd_varint(r, &f->v) ? 1 : -1;
    case 1:
    case 5: {
        size_t n = f->wt == 1 ? 8 : 4;
        if ((size_t)(r->end - r->p) < n)
            return -1;
        f->v = 0;
        for (size_t i = 0; i < n; i++)
            f->v |= (uint64_t)r->p[i] << (8 * i);
        r->p += n;
        return 1;
    }
    case 2: {
        uint64_t n;
        if (!rd_varint(r, &n) || n > (uint64_t)(r->end - r->p))
            return -1;
        f->s.p = r->p;
        f->s.n = (size_t)n;
        r->p += n;
        return 1;
    }
    case 3: { /* a group (proto2): skip it, as an unknown field */
        fld_t g;
        if (depth > 64)
            return -1;
        for (;;) {
            int rc = rd_field_raw(r, &g, depth + 1);
            if (rc <= 0)
                return -1;
            if (g.wt == 4)
                return g.field == f->field ? 1 : -1;
        }
    }
    case 4:
        return 1;
    default:
        return -1;
    }
}

static int rd_field(rd_t *r, fld_t *f)
{
    int rc = rd_field_raw(r, f, 0);
    if (rc == 1 && f->wt == 4)
        return -1; /* end group without a start */
    return rc;
}

/* proto3 `string` fields must hold valid UTF-8, or the message does not parse. */
static int utf8_ok(span_t s)
{
    const uint8_t *p = s.p, *e = s.p + s.n;
    while (p < e) {
        uint8_t c = *p++;
        uint32_t cp;
        int more;
        if (c < 0x80)
            continue;
        if (c >= 0xc2 && c <= 0xdf) { more = 1; cp = c & 0x1f; }
        else if (c >= 0xe0 && c <= 0xef) { more = 2; cp = c & 0x0f; }
        else if (c >= 0xf0 && c <= 0xf4) { more = 3; cp = c & 0x07; }
        else return 0;
        if (e - p < more)
            return 0;
        for (int i = 0; i < more; i++) {
            if ((p[i] & 0xc0) != 0x80)
                return 0;
            cp = (cp << 6) | (p[i] & 0x3f);
        }
        p += more;
        if ((more == 2 && cp < 0x800) || (more == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
            return 0;
    }
    return 1;
}

static int span_eq(span_t s, const char *z) { return s.n == strlen(z) && memcmp(s.p, z, s.n) == 0; }

static char *span_dup(span_t s)
{
    char *z = xmalloc(s.n + 1);
    memcpy(z, s.p, s.n);
    z[s.n] = 0;
    return z;
}

static double bits_double(uint64_t v) { double d; memcpy(&d, &v, 8); return d; }

/* Messages are decoded "merge" style: every occurrence of a field overwrites a
 * scalar, appends to a repeated field and merges into a sub-message, so that
 * repeated occurrences of an embedded message behave as protobuf says. */

typedef struct {
    int kind; /* ParameterValue.kind field number, 0 = unset */
    double d;
    int64_t i;
    int b;
    span_t s;
    double *da; size_t nda;
    span_t *sa; size_t nsa;
} pvalue_t;

typedef struct { span_t name; int has_value; pvalue_t value; } nparam_t;

typedef struct {
    span_t instance_name;
    uint64_t seed;
    nparam_t *params; size_t nparams;
    int64_t period_ns, peer_timeout_ns;
} configure_t;

typedef struct { span_t port, type, payload; uint32_t attachment; } portvalue_t;
typedef struct { int64_t time_ns, step_ns; portvalue_t *inputs; size_t ninputs; } step_t;
typedef struct { int32_t state; uint64_t counter; } heartbeat_t;
typedef struct { int64_t start_time_ns; } initialize_t;

typedef struct {
    uint32_t protocol_version;
    uint64_t request_id;
    span_t instance;
    int body; /* RQ_*, 0 = none */
    configure_t configure;
    initialize_t initialize;
    step_t step;
    heartbeat_t heartbeat;
    size_t batch_steps;
} request_t;

/* Every dynamic array of a request is tracked here and freed after the reply. */
static void **allocs;
static size_t nallocs, capallocs;

static void *grow(void *old, size_t n, size_t size)
{
    void *p = xmalloc(n * size);
    if (old && n > 1)
        memcpy(p, old, (n - 1) * size);
    if (nallocs == capallocs) {
        capallocs = capallocs * 2 + 16;
        allocs = xrealloc(allocs, capallocs * sizeof *allocs);
    }
    allocs[nallocs++] = p;
    return p;
}

static void free_allocs(void)
{
    for (size_t i = 0; i < nallocs; i++)
        free(allocs[i]);
    nallocs = 0;
}

#define APPEND(arr, n) ((arr) = grow((arr), (n) + 1, sizeof *(arr)), memset(&(arr)[(n)], 0, sizeof *(arr)), &(arr)[(n)++])

/* A message with no known field: still has to be well formed. */
static int dec_empty(span_t in)
{
    rd_t r = rd_of(in);
    fld_t f;
    int rc;
    while ((rc = rd_field(&r, &f)) == 1)
        ;
    return rc == 0;
}

static int dec_double_array(span_t in, pvalue_t *v)
{
    rd_t r = rd_of(in);
    fld_t f;
    int rc;
    while ((rc = rd_field(&r, &f)) == 1) {
        if (f.field != 1)
            continue;
        if (f.wt == 1) {
            *APPEND(v->da, v->nda) = bits_double(f.v);
        } else if (f.wt == 2) { /* packed */
            if (f.s.n % 8)
                return 0;
            for (size_t k = 0; k < f.s.n; k += 8) {
                uint64_t bits = 0;
                for (int i = 0; i < 8; i++)
                    bits |= (uint64_t)f.s.p[k + i] << (8 * i);
                *APPEND(v->da, v->nda) = bits_double(bits);
            }
        }
    }
    return rc == 0;
}

static int dec_string_array(span_t in, pvalue_t *v)
{
    rd_t r = rd_of(in);
    fld_t f;
    int rc;
    while ((rc = rd_field(&r, &f)) == 1) {
        if (f.field == 1 && f.wt == 2) {
            if (!utf8_ok(f.s))
                return 0;
            *APPEND(v->sa, v->nsa) = f.s;
        }
    }
    return rc == 0;
}

static void set_kind(pvalue_t *v, int kind)
{
    if (v->kind != kind) { /* a oneof: setting one member clears the others */
        memset(v, 0, sizeof *v);
        v->kind = kind;
    }
}

static int dec_pvalue(span_t in, pvalue_t *v)
{
    rd_t r = rd_of(in);
    fld_t f;
    int rc;
    while ((rc = rd_field(&r, &f)) == 1) {
        if (f.field == 1 && f.wt == 1) { set_kind(v, 1); v->d = bits_double(f.v); }
        else if (f.field == 2 && f.wt == 0) { set_kind(v, 2); v->i = (int64_t)f.v; }
        else if (f.field == 3 && f.wt == 0) { set_kind(v, 3); v->b = f.v != 0; }
        else if ((f.field == 4 || f.field == 7) && f.wt == 2) {
            if (!utf8_ok(f.s))
                return 0;
            set_kind(v, (int)f.field);
            v->s = f.s;
        } else if (f.field == 5 && f.wt == 2) {
            set_kind(v, 5);
            if (!dec_double_array(f.s, v))
                return 0;
        } else if (f.field == 6 && f.wt == 2) {
            set_kind(v, 6);
            if (!dec_string_array(f.s, v))
                return 0;
        }
    }
    return rc == 0;
}

static int dec_nparam(span_t in, nparam_t *p)
{
    rd_t r = rd_of(in);
    fld_t f;
    int rc;
    while ((rc = rd_field(&r, &f)) == 1) {
        if (f.field == 1 && f.wt == 2) {
            if (!utf8_ok(f.s))
                return 0;
            p->name = f.s;
        } else if (f.field == 2 && f.wt == 2) {
            p->has_value = 1;
            if (!dec_pvalue(f.s, &p->value))
                return 0;
        }
    }
    return rc == 0;
}

static int dec_configure(span_t in, configure_t *c)
{
    rd_t r = rd_of(in);
    fld_t f;
    int rc;
    while ((rc = rd_field(&r, &f)) == 1) {
        if (f.field == 1 && f.wt == 2) {
            if (!utf8_ok(f.s))
                return 0;
            c->instance_name = f.s;
        } else if (f.field == 2 && f.wt == 0) c->seed = f.v;
        else if (f.field == 3 && f.wt == 2) {
            if (!dec_nparam(f.s, APPEND(c->params, c->nparams)))
                return 0;
        } else if (f.field == 4 && f.wt == 0) c->period_ns = (int64_t)f.v;
        else if (f.field == 5 && f.wt == 0) c->peer_timeout_ns = (int64_t)f.v;
    }
    return rc == 0;
}

static int dec_initialize(span_t in, initialize_t *m)
{
    rd_t r = rd_of(in);
    fld_t f;
    int rc;
    while ((rc = rd_field(&r, &f)) == 1)
        if (f.field == 1 && f.wt == 0)
            m->start_time_ns = (int64_t)f.v;
    return rc == 0;
}

static int dec_portvalue(span_t in, portvalue_t *pv)
{
    rd_t r = rd_of(in);
    fld_t f;
    int rc;
    while ((rc = rd_field(&r, &f)) == 1) {
        if ((f.field == 1 || f.field == 2) && f.wt == 2) {
            if (!utf8_ok(f.s))
                return 0;
            if (f.field == 1) pv->port = f.s; else pv->type = f.s;
        } else if (f.field == 3 && f.wt == 2) pv->payload = f.s;
        else if (f.field == 4 && f.wt == 0) pv->attachment = (uint32_t)f.v;
    }
    return rc == 0;
}

static int dec_step(span_t in, step_t *s)
{
    rd_t r = rd_of(in);
    fld_t f;
    int rc;
    while ((rc = rd_field(&r, &f)) == 1) {
        if (f.field == 1 && f.wt == 0) s->time_ns = (int64_t)f.v;
        else if (f.field == 2 && f.wt == 0) s->step_ns = (int64_t)f.v;
        else if (f.field == 3 && f.wt == 2) {
            if (!dec_portvalue(f.s, APPEND(s->inputs, s->ninputs)))
                return 0;
        }
    }
    return rc == 0;
}

static int dec_instance_step(span_t in)
{
    rd_t r = rd_of(in);
    fld_t f;
    int rc;
    step_t st = { 0 };
    while ((rc = rd_field(&r, &f)) == 1) {
        if (f.field == 1 && f.wt == 2 && !utf8_ok(f.s))
            return 0;
        if (f.field == 2 && f.wt == 2 && !dec_step(f.s, &st))
            return 0;
    }
    return rc == 0;
}

static int dec_step_batch(span_t in, size_t *n)
{
    rd_t r = rd_of(in);
    fld_t f;
    int rc;
    while ((rc = rd_field(&r, &f)) == 1) {
        if (f.field == 1 && f.wt == 2) {
            if (!dec_instance_step(f.s))
                return 0;
            ++*n;
        }
    }
    return rc == 0;
}

static int dec_heartbeat(span_t in, heartbeat_t *h)
{
    rd_t r = rd_of(in);
    fld_t f;
    int rc;
    while ((rc = rd_field(&r, &f)) == 1) {
        if (f.field == 1 && f.wt == 0) h->state = (int32_t)f.v;
        else if (f.field == 2 && f.wt == 0) h->counter = f.v;
    }
    return rc == 0;
}

/* 1 if `in` parses as a moonpool.v1.Request (nested messages included). */
static int dec_request(span_t in, request_t *rq)
{
    rd_t r = rd_of(in);
    fld_t f;
    int rc;
    memset(rq, 0, sizeof *rq);
    while ((rc = rd_field(&r, &f)) == 1) {
        if (f.field == 1 && f.wt == 0) { rq->protocol_version = (uint32_t)f.v; continue; }
        if (f.field == 2 && f.wt == 0) { rq->request_id = f.v; continue; }
        if (f.field == 3 && f.wt == 2) {
            if (!utf8_ok(f.s))
                return 0;
            rq->instance = f.s;
            continue;
        }
        if (f.field < RQ_DESCRIBE || f.field > RQ_STEP_BATCH || f.wt != 2)
            continue; /* unknown field */
        if (rq->body != (int)f.field) { /* oneof: the last member seen wins */
            memset(&rq->configure, 0, sizeof rq->configure);
            memset(&rq->initialize, 0, sizeof rq->initialize);
            memset(&rq->step, 0, sizeof rq->step);
            memset(&rq->heartbeat, 0, sizeof rq->heartbeat);
            rq->batch_steps = 0;
            rq->body = (int)f.field;
        }
        int ok;
        switch (f.field) {
        case RQ_CONFIGURE: ok = dec_configure(f.s, &rq->configure); break;
        case RQ_INITIALIZE: ok = dec_initialize(f.s, &rq->initialize); break;
        case RQ_STEP: ok = dec_step(f.s, &rq->step); break;
        case RQ_HEARTBEAT: ok = dec_heartbeat(f.s, &rq->heartbeat); break;
        case RQ_STEP_BATCH: ok = dec_step_batch(f.s, &rq->batch_steps); break;
        default: ok = dec_empty(f.s); break; /* Describe, Terminate */
        }
        if (!ok)
            return 0;
    }
    return rc == 0;
}

/* moonpool.v1.Signals, as far as this component needs it. */
typedef struct { span_t name; double value; } signal_t;
typedef struct { int has_header; uint64_t seq; signal_t *sig; size_t nsig; } signals_t;

static int dec_header(span_t in, signals_t *m)
{
    rd_t r = rd_of(in);
    fld_t f;
    int rc;
    while ((rc = rd_field(&r, &f)) == 1) {
        if (f.field == 2 && f.wt == 0) m->seq = f.v;
        else if ((f.field == 3 || f.field == 4) && f.wt == 2 && !utf8_ok(f.s)) return 0;
    }
    return rc == 0;
}

static int dec_signal(span_t in, signal_t *s)
{
    rd_t r = rd_of(in);
    fld_t f;
    int rc;
    while ((rc = rd_field(&r, &f)) == 1) {
        if (f.field == 1 && f.wt == 2) {
            if (!utf8_ok(f.s))
                return 0;
            s->name = f.s;
        } else if (f.field == 2 && f.wt == 1) s->value = bits_double(f.v);
    }
    return rc == 0;
}

static int dec_signals(span_t in, signals_t *m)
{
    rd_t r = rd_of(in);
    fld_t f;
    int rc;
    memset(m, 0, sizeof *m);
    while ((rc = rd_field(&r, &f)) == 1) {
        if (f.field == 1 && f.wt == 2) {
            m->has_header = 1;
            if (!dec_header(f.s, m))
                return 0;
        } else if (f.field == 2 && f.wt == 2) {
            if (!dec_signal(f.s, APPEND(m->sig, m->nsig)))
                return 0;
        }
    }
    return rc == 0;
}

/* ------------------------------------------------------------ keyed noise §11 */

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(uint32_t h[8], const uint8_t *p)
{
    uint32_t w[64], a, b, c, d, e, f, g, k;
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    a = h[0]; b = h[1]; c = h[2]; d = h[3]; e = h[4]; f = h[5]; g = h[6]; k = h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = k + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K256[i] + w[i];
        uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        k = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += k;
}

static void sha256(const uint8_t *msg, size_t n, uint8_t out[32])
{
    uint32_t h[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                      0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
    uint8_t tail[128] = { 0 };
    size_t full = n / 64 * 64, rest = n - full, tn = rest + 9 <= 64 ? 64 : 128;
    for (size_t i = 0; i < full; i += 64)
        sha256_block(h, msg + i);
    memcpy(tail, msg + full, rest);
    tail[rest] = 0x80;
    for (int i = 0; i < 8; i++)
        tail[tn - 1 - i] = (uint8_t)(((uint64_t)n * 8) >> (8 * i));
    for (size_t i = 0; i < tn; i += 64)
        sha256_block(h, tail + i);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++)
            out[4 * i + j] = (uint8_t)(h[i] >> (24 - 8 * j));
}

/* The 128-bit product a * b as (hi, lo), in portable C11. */
static uint64_t mulhilo(uint64_t a, uint64_t b, uint64_t *lo)
{
    uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
    *lo = (mid << 32) | (p00 & 0xffffffffu);
    return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

static void philox4x64_10(uint64_t c[4], uint64_t k0, uint64_t k1)
{
    for (int r = 0; r < 10; r++) {
        if (r) {
            k0 += 0x9E3779B97F4A7C15ULL;
            k1 += 0xBB67AE8584CAA73BULL;
        }
        uint64_t lo0, lo1;
        uint64_t hi0 = mulhilo(0xD2E7470EE14C6C93ULL, c[0], &lo0);
        uint64_t hi1 = mulhilo(0xCA5A826395121157ULL, c[2], &lo1);
        uint64_t n0 = hi1 ^ c[1] ^ k0, n2 = hi0 ^ c[3] ^ k1;
        c[0] = n0; c[1] = lo1; c[2] = n2; c[3] = lo0;
    }
}

/* The first uniform and the first standard normal of sample `index` (a draw of n = 1). */
static void keyed_draw(uint64_t seed, const char *instance, span_t channel, uint64_t index,
                       double *uniform, double *normal)
{
    char dec[24];
    int nd = snprintf(dec, sizeof dec, "%" PRIu64, seed);
    size_t ni = strlen(instance), n = (size_t)nd + 1 + ni + 1 + channel.n;
    uint8_t *key = xmalloc(n), h[32];
    memcpy(key, dec, (size_t)nd);
    key[nd] = 0;
    memcpy(key + nd + 1, instance, ni);
    key[nd + 1 + ni] = 0;
    memcpy(key + nd + 2 + ni, channel.p, channel.n);
    sha256(key, n, h);
    free(key);
    uint64_t k[2] = { 0, 0 };
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < 8; i++)
            k[w] |= (uint64_t)h[8 * w + i] << (8 * i);
    uint64_t c[4] = { index, 0, 0, 0 };
    philox4x64_10(c, k[0], k[1]);
    double u0 = (double)((c[0] >> 11) + 1) * 0x1p-53;
    double u1 = (double)((c[1] >> 11) + 1) * 0x1p-53;
    *uniform = u0;
    *normal = sqrt(-2.0 * log(u0)) * cos(2.0 * PI * u1);
}

/* ------------------------------------------------------------------ component */

typedef struct {
    const char *name;
    int type;
    const char *description;
    const char *unit;
    int required;
    double dflt_double;
    int64_t dflt_int;
    const char *dflt_string;
} param_spec_t;

static const param_spec_t PARAMS[] = {
    { "gain", PT_DOUBLE, "factor applied to every input signal", "", 1, 0, 0, NULL },
    { "offset", PT_DOUBLE, "added after the gain", "", 0, 0.0, 0, NULL },
    { "noise_std", PT_DOUBLE, "standard deviation of the keyed Gaussian noise added (0: none)", "", 0, 0.0, 0, NULL },
    { "every", PT_INT, "publish `out` on every N-th step only", "", 0, 0, 1, NULL },
    { "frame_id", PT_STRING, "Header.frame_id of `out`", "", 0, 0, 0, "" },
};
#define NPARAMS (sizeof PARAMS / sizeof PARAMS[0])

static const char *TYPE_NAMES[] = { "?", "DOUBLE", "INT", "BOOL", "STRING", "DOUBLE_ARRAY",
                                    "STRING_ARRAY", "JSON" };
static const char *KIND_NAMES[] = { "no value", "a double", "an integer", "a bool", "a string",
                                    "a number array", "a string array", "a JSON value" };

static struct {
    int state;
    int bound;
    uint8_t peer[256];
    size_t peer_n;
    int64_t peer_timeout_ns, last_heard;
    uint64_t heartbeats;
    char *instance; /* Configure.instance_name, NULL before Configure */
    uint64_t seed;
    double gain, offset, noise_std;
    int64_t every;
    char *frame_id;
    uint64_t seq_out, seq_stats;
    int64_t last_end;
    uint64_t steps, fresh;
    int have_seq;
    uint64_t last_seq;
} S;

static int once;
static volatile sig_atomic_t stopping;

static void new_session(void)
{
    free(S.instance);
    free(S.frame_id);
    memset(&S, 0, sizeof S);
    S.state = ST_CREATED;
}

static const char *who(void) { return S.instance && *S.instance ? S.instance : KIND; }

/* printf into a growing string. */
static void cat(char **s, const char *fmt, ...)
{
    va_list ap;
    size_t old = *s ? strlen(*s) : 0;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    *s = xrealloc(*s, old + (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(*s + old, (size_t)n + 1, fmt, ap);
    va_end(ap);
}

static size_t edit_distance(const char *a, size_t na, const char *b)
{
    size_t nb = strlen(b), d[64], prev;
    if (na >= 63 || nb >= 63)
        return 99;
    for (size_t j = 0; j <= nb; j++)
        d[j] = j;
    for (size_t i = 1; i <= na; i++) {
        prev = d[0];
        d[0] = i;
        for (size_t j = 1; j <= nb; j++) {
            size_t cur = d[j], best = prev + (a[i - 1] != b[j - 1]);
            if (d[j] + 1 < best) best = d[j] + 1;
            if (d[j - 1] + 1 < best) best = d[j - 1] + 1;
            d[j] = best;
            prev = cur;
        }
    }
    return d[nb];
}

/* Validates the parameters of a Configure (protocol.md §7) into the session. Returns
 * NULL when they are all good, else every problem, "; "-separated (malloc'd). */
static char *apply_parameters(const configure_t *c)
{
    char *problems = NULL;
    int given[NPARAMS] = { 0 };
    S.gain = 0;
    S.offset = 0.0;
    S.noise_std = 0.0;
    S.every = 1;
    free(S.frame_id);
    S.frame_id = strdup("");
    for (size_t i = 0; i < c->nparams; i++) {
        const nparam_t *p = &c->params[i];
        const pvalue_t *v = &p->value;
        size_t k;
        for (k = 0; k < NPARAMS; k++)
            if (span_eq(p->name, PARAMS[k].name))
                break;
        if (k == NPARAMS) {
            const char *best = NULL;
            size_t bd = 3;
            for (size_t j = 0; j < NPARAMS; j++) {
                size_t dj = edit_distance((const char *)p->name.p, p->name.n, PARAMS[j].name);
                if (dj < bd) { bd = dj; best = PARAMS[j].name; }
            }
            cat(&problems, "%sunknown parameter '%.*s'", problems ? "; " : "", (int)p->name.n, p->name.p);
            if (best)
                cat(&problems, " (did you mean '%s'?)", best);
            continue;
        }
        int kind = p->has_value ? v->kind : 0, ok = 0;
        switch (PARAMS[k].type) {
        case PT_DOUBLE:
            if (kind == 1 && !isnan(v->d)) { ok = 1; if (k == 0) S.gain = v->d; else if (k == 1) S.offset = v->d; else S.noise_std = v->d; }
            else if (kind == 2) { ok = 1; double d = (double)v->i; if (k == 0) S.gain = d; else if (k == 1) S.offset = d; else S.noise_std = d; }
            break;
        case PT_INT:
            if (kind == 2) { ok = 1; S.every = v->i; }
            else if (kind == 1 && isfinite(v->d) && v->d == floor(v->d) &&
                     v->d >= -9223372036854775808.0 && v->d < 9223372036854775808.0) { ok = 1; S.every = (int64_t)v->d; }
            break;
        case PT_STRING:
            if (kind == 4) { ok = 1; free(S.frame_id); S.frame_id = span_dup(v->s); }
            break;
        }
        if (!ok)
            cat(&problems, "%sparameter '%s' must be %s (%s), got %s%s", problems ? "; " : "",
                PARAMS[k].name, PARAMS[k].type == PT_DOUBLE ? "a number" :
                PARAMS[k].type == PT_INT ? "an integer" : "a string",
                TYPE_NAMES[PARAMS[k].type],
                kind == 1 && isnan(v->d) ? "NaN" : KIND_NAMES[kind],
                kind == 1 && !isnan(v->d) && PARAMS[k].type == PT_INT ? " that is not integral" : "");
        given[k] = 1;
    }
    for (size_t k = 0; k < NPARAMS; k++)
        if (PARAMS[k].required && !given[k])
            cat(&problems, "%smissing required parameter '%s' (%s)", problems ? "; " : "",
                PARAMS[k].name, TYPE_NAMES[PARAMS[k].type]);
    return problems;
}

/* ------------------------------------------------------------------- replies */

static void *sock;

typedef struct { zmq_msg_t *m; size_t n, cap; } frames_t;

static void send_frame(const void *d, size_t n, int more)
{
    if (zmq_send(sock, d, n, more ? ZMQ_SNDMORE : 0) < 0 && zmq_errno() != EHOSTUNREACH)
        fprintf(stderr, "scaler: send: %s\n", zmq_strerror(zmq_errno()));
}

static span_t g_id;      /* routing id of the request being answered */
static int g_delim;      /* it had an empty delimiter frame */
static uint64_t g_rid;   /* its request_id (0 if it did not decode) */
static span_t g_inst;    /* its instance */

static void reply(int body_field, const buf_t *body)
{
    buf_t env = { 0 };
    put_uint(&env, 1, 1);
    put_uint(&env, 2, g_rid);
    if (g_inst.n)
        put_len(&env, 3, g_inst.p, g_inst.n);
    put_msg(&env, (unsigned)body_field, body);
    send_frame(g_id.p, g_id.n, 1);
    if (g_delim)
        send_frame("", 0, 1);
    send_frame(env.p, env.n, 0);
    buf_free(&env);
}

static void reply_error_as(int code, const char *component, const char *message,
                           const char *fix)
{
    buf_t b = { 0 };
    put_uint(&b, 1, (uint64_t)code);
    put_str(&b, 2, component);
    put_str(&b, 3, message);
    put_str(&b, 4, fix);
    fprintf(stderr, "scaler: -> error %d (request %" PRIu64 "): %s\n", code, g_rid, message);
    reply(RP_ERROR, &b);
    buf_free(&b);
}

static void reply_error(int code, const char *message, const char *fix)
{
    reply_error_as(code, who(), message, fix);
}

static void reply_empty(int body_field)
{
    buf_t b = { 0 };
    reply(body_field, &b);
}

static void port_spec(buf_t *d, unsigned field, const char *name, int direction, const char *desc)
{
    buf_t p = { 0 };
    put_str(&p, 1, name);
    put_uint(&p, 2, (uint64_t)direction);
    put_str(&p, 3, SIGNALS);
    put_str(&p, 5, desc);
    put_msg(d, field, &p);
    buf_free(&p);
}

static void answer_describe(void)
{
    buf_t d = { 0 };
    put_str(&d, 1, KIND);
    put_str(&d, 2, "out = gain * in + offset (+ keyed noise), written in C");
    port_spec(&d, 3, "in", 1, "signals to scale");
    port_spec(&d, 4, "out", 2, "the scaled signals, same names and order");
    port_spec(&d, 4, "stats", 2, "steps done and steps with a fresh input");
    for (size_t k = 0; k < NPARAMS; k++) {
        const param_spec_t *s = &PARAMS[k];
        buf_t p = { 0 }, v = { 0 };
        put_str(&p, 1, s->name);
        put_uint(&p, 2, (uint64_t)s->type);
        put_str(&p, 3, s->description);
        put_str(&p, 4, s->unit);
        if (!s->required) {
            /* ParameterValue.kind is a oneof: its member is written even when it
             * holds the default value (0.0, 0, ""). */
            if (s->type == PT_DOUBLE) {
                uint64_t bits;
                memcpy(&bits, &s->dflt_double, 8);
                put_fixed64(&v, 1, bits);
            } else if (s->type == PT_INT) {
                put_tag(&v, 2, 0);
                put_varint(&v, (uint64_t)s->dflt_int);
            } else {
                put_len(&v, 4, s->dflt_string, strlen(s->dflt_string));
            }
            put_msg(&p, 5, &v);
        }
        put_uint(&p, 6, (uint64_t)s->required);
        put_msg(&d, 5, &p);
        buf_free(&p);
        buf_free(&v);
    }
    put_uint(&d, 6, 1);
    reply(RP_DESCRIPTION, &d);
    buf_free(&d);
}

/* A Signals message with a full Header (source and seq stamped here, §8). */
static void signals_begin(buf_t *m, int64_t sim_time_ns, uint64_t seq, const char *frame_id)
{
    buf_t h = { 0 };
    put_int(&h, 1, sim_time_ns);
    put_uint(&h, 2, seq);
    put_str(&h, 3, S.instance);
    put_str(&h, 4, frame_id);
    put_msg(m, 1, &h);
    buf_free(&h);
}

static void signal_add(buf_t *m, const char *name, size_t nn, double value)
{
    buf_t s = { 0 };
    if (nn)
        put_len(&s, 1, name, nn);
    put_double(&s, 2, value);
    put_msg(m, 2, &s);
    buf_free(&s);
}

static void port_value(buf_t *list, unsigned field, const char *port, const buf_t *payload)
{
    buf_t pv = { 0 };
    put_str(&pv, 1, port);
    put_str(&pv, 2, SIGNALS);
    if (payload->n)
        put_len(&pv, 3, payload->p, payload->n);
    put_msg(list, field, &pv);
    buf_free(&pv);
}

static void stats_output(buf_t *list, unsigned field, int64_t sim_time_ns)
{
    buf_t m = { 0 };
    signals_begin(&m, sim_time_ns, S.seq_stats++, "");
    signal_add(&m, "steps", 5, (double)S.steps);
    signal_add(&m, "fresh", 5, (double)S.fresh);
    port_value(list, field, "stats", &m);
    buf_free(&m);
}

static void end_session(const char *why)
{
    fprintf(stderr, "scaler: session ends (%s)\n", why);
    if (once) {
        stopping = 1;
        return;
    }
    new_session();
}

static void handle_configure(const configure_t *c)
{
    if (S.state != ST_CREATED) {
        reply_error(E_INVALID_STATE, "configure: the component is already configured",
                    "configure once per session; terminate first to start over");
        return;
    }
    if (c->peer_timeout_ns < 0 || c->peer_timeout_ns > PEER_TIMEOUT_LIMIT_NS) {
        reply_error(E_INVALID_PARAMETER, "Configure.peer_timeout_ns must be more than 0 and at "
                    "most 300 s (0: the limit)", "give run.peer_timeout a duration up to 300 s");
        return;
    }
    S.peer_timeout_ns = c->peer_timeout_ns ? c->peer_timeout_ns : PEER_TIMEOUT_LIMIT_NS;
    free(S.instance);
    S.instance = span_dup(c->instance_name);
    S.seed = c->seed;
    char *problems = apply_parameters(c);
    if (problems) { /* refused before our own configure ran: state stays CREATED */
        char *fix = NULL;
        cat(&fix, "set only the parameters %s declares:", KIND);
        for (size_t k = 0; k < NPARAMS; k++)
            cat(&fix, "%s %s (%s%s)", k ? "," : "", PARAMS[k].name, TYPE_NAMES[PARAMS[k].type],
                PARAMS[k].required ? ", required" : "");
        reply_error(E_INVALID_PARAMETER, problems, fix);
        free(problems);
        free(fix);
        return;
    }
    /* Our own configure: values we refuse. */
    char *refused = NULL;
    if (!(S.noise_std >= 0) || isinf(S.noise_std))
        cat(&refused, "parameter 'noise_std' is %g; it must be finite and >= 0", S.noise_std);
    if (S.every < 1)
        cat(&refused, "%sparameter 'every' is %" PRId64 "; it must be >= 1", refused ? "; " : "", S.every);
    if (refused) {
        S.state = ST_FAILED;
        reply_error(E_INVALID_PARAMETER, refused, "change the value in the rig's parameters");
        free(refused);
        return;
    }
    S.state = ST_CONFIGURED;
    reply_empty(RP_ACK);
}

static void handle_initialize(const initialize_t *m)
{
    if (S.state != ST_CONFIGURED) {
        reply_error(E_INVALID_STATE, "initialize: the component is not in state CONFIGURED",
                    "send configure first, and initialize once");
        return;
    }
    buf_t b = { 0 };
    S.steps = S.fresh = 0;
    S.have_seq = 0;
    S.last_end = m->start_time_ns;
    stats_output(&b, 1, m->start_time_ns);
    S.state = ST_INITIALIZED;
    reply(RP_INITIALIZED, &b);
    buf_free(&b);
}

static void handle_step(const step_t *st, size_t natt)
{
    int64_t t0 = now_ns();
    char *msg = NULL;
    if (S.state != ST_INITIALIZED) {
        reply_error(E_INVALID_STATE, "step: the component is not initialized",
                    "send configure and initialize before step");
        return;
    }
    signals_t in = { 0 }, cur;
    int have_in = 0;
    for (size_t i = 0; i < st->ninputs; i++) {
        const portvalue_t *pv = &st->inputs[i];
        if (!span_eq(pv->port, "in"))
            cat(&msg, "unknown input port '%.*s'; the inputs are: in", (int)pv->port.n, pv->port.p);
        else if (!span_eq(pv->type, SIGNALS))
            cat(&msg, "input 'in' carries '%.*s'; it is declared " SIGNALS, (int)pv->type.n, pv->type.p);
        else if (pv->attachment > natt)
            cat(&msg, "input 'in' refers to attachment %" PRIu32 " but the request has %zu", pv->attachment, natt);
        else if (pv->attachment) /* §8: 'in' is not declared to carry attachments */
            cat(&msg, "input 'in' does not take attachments, but one came with it");
        else if (!dec_signals(pv->payload, &cur))
            cat(&msg, "the payload of input 'in' does not parse as " SIGNALS);
        else {
            in = cur;
            have_in = 1;
            continue;
        }
        reply_error(E_INVALID_INPUT, msg, "connect an output of type " SIGNALS " to 'in'");
        free(msg);
        return;
    }
    if (st->step_ns <= 0 || st->time_ns < S.last_end || st->time_ns > INT64_MAX - st->step_ns) {
        cat(&msg, "step: t = %" PRId64 " ns, dt = %" PRId64 " ns after a step that ended at %" PRId64
            " ns; dt must be > 0 and t may not go back", st->time_ns, st->step_ns, S.last_end);
        reply_error(E_INVALID_STATE, msg, "step forward in time");
        free(msg);
        return;
    }
    int64_t t = st->time_ns, dt = st->step_ns;
    uint64_t index = S.steps;
    if (have_in && (!S.have_seq || in.seq != S.last_seq)) {
        S.fresh++;
        S.have_seq = 1;
        S.last_seq = in.seq;
    }
    buf_t res = { 0 }, outs = { 0 };
    if (have_in && index % (uint64_t)S.every == 0) {
        buf_t m = { 0 };
        signals_begin(&m, t, S.seq_out++, S.frame_id);
        for (size_t i = 0; i < in.nsig; i++) {
            double y = S.gain * in.sig[i].value + S.offset;
            if (S.noise_std != 0.0) {
                double u, z;
                keyed_draw(S.seed, S.instance, in.sig[i].name, index, &u, &z);
                y = y + S.noise_std * z;
            }
            signal_add(&m, (const char *)in.sig[i].name.p, in.sig[i].name.n, y);
        }
        port_value(&outs, 2, "out", &m);
        buf_free(&m);
    }
    S.steps++;
    stats_output(&outs, 2, t + dt);
    S.last_end = t + dt;
    put_int(&res, 1, t);
    buf_put(&res, outs.p, outs.n);
    put_int(&res, 3, now_ns() - t0);
    reply(RP_STEP_RESULT, &res);
    buf_free(&res);
    buf_free(&outs);
}

static void handle_terminate(void)
{
    buf_t b = { 0 };
    if (S.state == ST_CONFIGURED || S.state == ST_INITIALIZED) {
        char metrics[96];
        snprintf(metrics, sizeof metrics, "{\"fresh\": %" PRIu64 ", \"steps\": %" PRIu64 "}", S.fresh, S.steps);
        put_str(&b, 1, metrics);
    }
    reply(RP_TERMINATED, &b);
    buf_free(&b);
    end_session("terminated");
}

static const char *BODY_NAMES[] = { "describe", "configure", "initialize", "step", "terminate",
                                    "heartbeat", "step_batch" };

static void handle(zmq_msg_t *fr, size_t nfr)
{
    request_t rq;
    size_t first = 1; /* index of the envelope frame */
    g_id.p = zmq_msg_data(&fr[0]);
    g_id.n = zmq_msg_size(&fr[0]);
    g_delim = nfr > 2 && zmq_msg_size(&fr[1]) == 0;
    if (g_delim)
        first = 2;
    g_rid = 0;
    g_inst.p = NULL;
    g_inst.n = 0;
    if (nfr <= first) {
        reply_error(E_MALFORMED, "the message has no envelope frame after the routing id",
                    "send a serialized moonpool.v1.Request as the first frame");
        return;
    }
    span_t env = { zmq_msg_data(&fr[first]), zmq_msg_size(&fr[first]) };
    if (!dec_request(env, &rq)) {
        char m[96];
        snprintf(m, sizeof m, "frame 0 (%zu bytes) does not parse as moonpool.v1.Request", env.n);
        reply_error(E_MALFORMED, m, "send a serialized moonpool.v1.Request as the first frame");
        return;
    }
    g_rid = rq.request_id;
    g_inst = rq.instance;
    size_t natt = nfr - first - 1;
    if (rq.protocol_version != 1) {
        char m[96];
        snprintf(m, sizeof m, "protocol version %" PRIu32 " is not supported; this component speaks 1",
                 rq.protocol_version);
        reply_error(E_PROTOCOL_VERSION, m, "use an orchestrator that speaks protocol version 1");
        return;
    }
    if (!rq.body) {
        reply_error(E_MALFORMED, "the request has no body", "set one of the Request.body fields");
        return;
    }
    int is_peer = S.bound && S.peer_n == g_id.n && memcmp(S.peer, g_id.p, g_id.n) == 0;
    if (rq.body != RQ_DESCRIBE && rq.body != RQ_HEARTBEAT) {
        if (!S.bound && rq.body == RQ_CONFIGURE) {
            S.bound = 1;
            S.peer_timeout_ns = PEER_TIMEOUT_LIMIT_NS; /* §6: every session expires */
            S.peer_n = g_id.n < sizeof S.peer ? g_id.n : sizeof S.peer;
            memcpy(S.peer, g_id.p, S.peer_n);
            is_peer = 1;
        } else if (!is_peer) {
            if (S.bound) /* §6: named by its kind, never by the bound peer's instance name */
                reply_error_as(E_BUSY, KIND, "the component is serving another orchestrator",
                               "wait for its run to end, or serve a second endpoint");
            else
                reply_error(E_INVALID_STATE, "no session: send configure first",
                            "send configure first");
            return;
        }
    }
    if (is_peer)
        S.last_heard = now_ns();
    if (rq.body != RQ_STEP)
        fprintf(stderr, "scaler: %s request %" PRIu64 "\n", BODY_NAMES[rq.body - RQ_DESCRIBE], rq.request_id);
    switch (rq.body) {
    case RQ_DESCRIBE:
        answer_describe();
        break;
    case RQ_HEARTBEAT: {
        buf_t b = { 0 };
        S.heartbeats++;
        put_uint(&b, 1, (uint64_t)S.state);
        put_uint(&b, 2, S.heartbeats);
        reply(RP_HEARTBEAT, &b);
        buf_free(&b);
        break;
    }
    case RQ_CONFIGURE:
        handle_configure(&rq.configure);
        break;
    case RQ_INITIALIZE:
        handle_initialize(&rq.initialize);
        break;
    case RQ_STEP:
        handle_step(&rq.step, natt);
        break;
    case RQ_TERMINATE:
        handle_terminate();
        break;
    case RQ_STEP_BATCH:
        reply_error(E_INVALID_INPUT, "step_batch: this endpoint hosts one component, not a process group",
                    "send step");
        break;
    }
}

static void on_signal(int sig) { (void)sig; stopping = 1; }

/* scaler --noise SEED INSTANCE CHANNEL INDEX */
static int noise_main(char **argv)
{
    double u, z;
    span_t ch = { (const uint8_t *)argv[4], strlen(argv[4]) };
    keyed_draw(strtoull(argv[2], NULL, 10), argv[3], ch, strtoull(argv[5], NULL, 10), &u, &z);
    printf("%.17g %.17g\n", u, z);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 6 && strcmp(argv[1], "--noise") == 0)
        return noise_main(argv);
    if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "--once") != 0)) {
        fprintf(stderr, "usage: scaler ENDPOINT [--once]\n"
                        "       scaler --noise SEED INSTANCE CHANNEL INDEX\n");
        return 2;
    }
    once = argc == 3;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    void *ctx = zmq_ctx_new();
    if (!ctx)
        die("zmq_ctx_new");
    sock = zmq_socket(ctx, ZMQ_ROUTER);
    if (!sock)
        die("zmq_socket");
    int zero = 0;
    if (zmq_setsockopt(sock, ZMQ_LINGER, &zero, sizeof zero) < 0 ||
        zmq_setsockopt(sock, ZMQ_ROUTER_MANDATORY, &zero, sizeof zero) < 0)
        die("zmq_setsockopt");
    if (zmq_bind(sock, argv[1]) < 0)
        die(argv[1]);
    int maj, min, pat;
    zmq_version(&maj, &min, &pat);
    printf("scaler: serving %s on %s (libzmq %d.%d.%d)\n", KIND, argv[1], maj, min, pat);
    fflush(stdout);

    new_session();
    frames_t fr = { 0 };
    while (!stopping) {
        if (S.bound && now_ns() - S.last_heard > S.peer_timeout_ns) {
            end_session("peer timeout");
            continue;
        }
        zmq_pollitem_t item = { sock, 0, ZMQ_POLLIN, 0 };
        int rc = zmq_poll(&item, 1, 100);
        if (rc < 0) {
            if (zmq_errno() == EINTR)
                continue;
            die("zmq_poll");
        }
        if (rc == 0)
            continue;
        size_t n = 0;
        for (;;) {
            if (n == fr.cap) {
                fr.cap = fr.cap * 2 + 8;
                fr.m = xrealloc(fr.m, fr.cap * sizeof *fr.m);
            }
            zmq_msg_init(&fr.m[n]);
            if (zmq_msg_recv(&fr.m[n], sock, ZMQ_DONTWAIT) < 0) {
                zmq_msg_close(&fr.m[n]);
                if (zmq_errno() == EINTR && n > 0)
                    continue;
                break;
            }
            n++;
            if (!zmq_msg_more(&fr.m[n - 1]))
                break;
        }
        if (n > 0)
            handle(fr.m, n);
        for (size_t i = 0; i < n; i++)
            zmq_msg_close(&fr.m[i]);
        free_allocs();
    }
    fprintf(stderr, "scaler: exiting\n");
    free(fr.m);
    zmq_close(sock);
    zmq_ctx_term(ctx);
    new_session();
    return 0;
}
