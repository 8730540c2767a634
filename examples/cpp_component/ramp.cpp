// A minimal moonpool component in C++ (docs/protocol.md), started by a rig with
// run = "command" (ramp.toml). It publishes Signals{ramp = gain * t} on its output
// `signals` every step; `ramp_twin.py` is the same component in Python, so
// `moonpool run ramp.toml` and `moonpool run ramp.toml --mode inproc` give one digest.
//
// Build (README.md beside this file): a C++17 compiler and libzmq; no protobuf
// library (the few messages are encoded and decoded by hand, §8 "Without a protobuf
// library"). Usage: ramp ENDPOINT [--serve]  (default: exit after one session).
//
// Minimal on purpose: one output, one double parameter, no inputs (any input is
// INVALID_INPUT), no StepBatch (INVALID_INPUT), no CURVE. It ends its session on
// Terminate or after peer_timeout_ns of silence, and exits when its parent (the
// orchestrator, MOONPOOL_PARENT_PID) is gone.

#include <cstddef>

#if __has_include(<zmq.h>)
#include <zmq.h>
#else  // the libzmq ABI this file uses (libzmq 4.x), for machines without zmq.h
extern "C" {
typedef struct zmq_msg_t { alignas(8) unsigned char _[64]; } zmq_msg_t;
typedef struct { void *socket; int fd; short events; short revents; } zmq_pollitem_t;
void *zmq_ctx_new(void);
int zmq_ctx_term(void *);
void *zmq_socket(void *, int);
int zmq_close(void *);
int zmq_bind(void *, const char *);
int zmq_setsockopt(void *, int, const void *, size_t);
int zmq_msg_init(zmq_msg_t *);
int zmq_msg_recv(zmq_msg_t *, void *, int);
int zmq_msg_close(zmq_msg_t *);
void *zmq_msg_data(zmq_msg_t *);
size_t zmq_msg_size(const zmq_msg_t *);
int zmq_msg_more(const zmq_msg_t *);
int zmq_send(void *, const void *, size_t, int);
int zmq_poll(zmq_pollitem_t *, int, long);
int zmq_errno(void);
}
#define ZMQ_ROUTER 6
#define ZMQ_LINGER 17
#define ZMQ_SNDMORE 2
#define ZMQ_POLLIN 1
#endif

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using Bytes = std::string;

// -- protobuf wire format, by hand ------------------------------------------------------

void put_varint(Bytes &out, uint64_t v) {
    while (v >= 0x80) { out.push_back(char((v & 0x7f) | 0x80)); v >>= 7; }
    out.push_back(char(v));
}
void put_tag(Bytes &out, int field, int wire) { put_varint(out, uint64_t(field) << 3 | wire); }
void put_uint(Bytes &out, int field, uint64_t v) { if (v) { put_tag(out, field, 0); put_varint(out, v); } }
void put_len(Bytes &out, int field, const Bytes &data) {
    put_tag(out, field, 2); put_varint(out, data.size()); out += data;
}
void put_string(Bytes &out, int field, const Bytes &s) { if (!s.empty()) put_len(out, field, s); }
void put_double(Bytes &out, int field, double d, bool always = false) {
    uint64_t bits; std::memcpy(&bits, &d, 8);
    if (!bits && !always) return;  // a double is written unless its bits are all zero
    put_tag(out, field, 1);
    for (int i = 0; i < 8; i++) out.push_back(char(bits >> (8 * i)));
}

struct Field { int number = 0; int wire = 0; uint64_t varint = 0; Bytes data; };

// Reads the next field; false at the end. `ok` turns false on anything protobuf would
// refuse (a cut varint or length, field number 0, wire types 3, 4, 6, 7 — this
// minimal decoder does not skip groups, which moonpool never sends).
bool next_field(const Bytes &in, size_t &pos, Field &f, bool &ok) {
    if (pos >= in.size()) return false;
    auto varint = [&](uint64_t &v) {
        v = 0;
        for (int shift = 0; shift < 70; shift += 7) {
            if (pos >= in.size()) return false;
            uint8_t b = uint8_t(in[pos++]);
            if (shift == 63 && b > 1) return false;
            v |= uint64_t(b & 0x7f) << shift;
            if (!(b & 0x80)) return true;
        }
        return false;
    };
    uint64_t key;
    if (!varint(key) || (key >> 3) == 0 || (key >> 3) > 0x1fffffff) { ok = false; return false; }
    f.number = int(key >> 3);
    f.wire = int(key & 7);
    f.data.clear();
    switch (f.wire) {
    case 0: if (!varint(f.varint)) { ok = false; return false; } return true;
    case 1: if (in.size() - pos < 8) { ok = false; return false; } f.data = in.substr(pos, 8); pos += 8; return true;
    case 5: if (in.size() - pos < 4) { ok = false; return false; } f.data = in.substr(pos, 4); pos += 4; return true;
    case 2: {
        uint64_t n;
        if (!varint(n) || n > in.size() - pos) { ok = false; return false; }
        f.data = in.substr(pos, size_t(n)); pos += size_t(n); return true;
    }
    default: ok = false; return false;
    }
}

bool valid_utf8(const Bytes &s) {
    size_t i = 0, n = s.size();
    while (i < n) {
        uint8_t c = uint8_t(s[i]);
        int extra;
        uint32_t cp;
        if (c < 0x80) { i++; continue; }
        if ((c >> 5) == 6) { extra = 1; cp = c & 0x1f; }
        else if ((c >> 4) == 14) { extra = 2; cp = c & 0x0f; }
        else if ((c >> 3) == 30) { extra = 3; cp = c & 0x07; }
        else return false;
        if (i + extra >= n) return false;
        for (int k = 1; k <= extra; k++) {
            uint8_t d = uint8_t(s[i + k]);
            if ((d >> 6) != 2) return false;
            cp = cp << 6 | (d & 0x3f);
        }
        static const uint32_t least[] = {0, 0x80, 0x800, 0x10000};
        if (cp < least[extra] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
        i += size_t(extra) + 1;
    }
    return true;
}

// -- the component ----------------------------------------------------------------------

const char *KIND = "cpp:Ramp";
const char *PORT_TYPE = "moonpool.v1.Signals";
enum { CREATED = 1, CONFIGURED = 2, INITIALIZED = 3, FAILED = 5 };
enum { MALFORMED = 1, PROTOCOL_VERSION = 2, INVALID_STATE = 3, INVALID_PARAMETER = 4,
       INVALID_INPUT = 5, BUSY = 7 };

struct Session {
    Bytes peer;            // empty: not bound
    int state = CREATED;
    Bytes instance = KIND;
    double gain = 1.0;
    int64_t peer_timeout_ns = 0;
    int64_t last_heard_ns = 0;
    int64_t last_end_ns = INT64_MIN;
    uint64_t seq = 0, heartbeats = 0;
};

int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Reply { Bytes body; int field = 0; };

Reply error(int code, const Session &s, const Bytes &message, const Bytes &fix) {
    Bytes e;
    put_uint(e, 1, uint64_t(code));
    put_string(e, 2, s.instance);
    put_string(e, 3, message);
    put_string(e, 4, fix);
    return {e, 16};
}

Reply describe() {
    Bytes d, port, spec, dflt;
    put_string(d, 1, KIND);
    put_string(d, 2, "ramp = gain * t (C++ example)");
    put_string(port, 1, "signals");
    put_uint(port, 2, 2);  // OUTPUT
    put_string(port, 3, PORT_TYPE);
    put_string(port, 5, "one signal, ramp");
    put_len(d, 4, port);
    put_string(spec, 1, "gain");
    put_uint(spec, 2, 1);  // DOUBLE
    put_string(spec, 3, "slope of the ramp");
    put_string(spec, 4, "1/s");
    put_double(dflt, 1, 1.0, true);  // a oneof member: written even when 0
    put_len(spec, 5, dflt);
    put_len(d, 5, spec);
    put_uint(d, 6, 1);
    return {d, 10};
}

Reply configure(Session &s, const Bytes &body) {
    size_t pos = 0; Field f; bool ok = true;
    Bytes problems;
    double gain = 1.0;
    Bytes name;
    while (next_field(body, pos, f, ok)) {
        if (f.number == 1 && f.wire == 2) name = f.data;
        else if (f.number == 5 && f.wire == 0) s.peer_timeout_ns = int64_t(f.varint);
        else if (f.number == 3 && f.wire == 2) {
            size_t p2 = 0; Field g; Bytes pname, value;
            while (next_field(f.data, p2, g, ok)) {
                if (g.number == 1 && g.wire == 2) pname = g.data;
                else if (g.number == 2 && g.wire == 2) value = g.data;
            }
            size_t p3 = 0; Field v; bool have = false;
            while (next_field(value, p3, v, ok)) {
                if (v.number == 1 && v.wire == 1) { std::memcpy(&gain, v.data.data(), 8); have = !std::isnan(gain); }
                else if (v.number == 2 && v.wire == 0) { gain = double(int64_t(v.varint)); have = true; }
                else have = false;
            }
            if (pname != "gain")
                problems += (problems.empty() ? "" : "; ") + ("unknown parameter '" + pname + "'");
            else if (!have)
                problems += (problems.empty() ? "" : "; ") + Bytes("parameter 'gain' must be a number");
        }
    }
    if (!name.empty()) s.instance = name;
    if (!problems.empty())
        return error(INVALID_PARAMETER, s, problems, "fix [parameters] in the rig (known parameters: gain)");
    s.gain = gain;
    s.state = CONFIGURED;
    return {"", 11};
}

Reply step(Session &s, const Bytes &body) {
    size_t pos = 0; Field f; bool ok = true;
    int64_t t = 0, dt = 0;
    while (next_field(body, pos, f, ok)) {
        if (f.number == 1 && f.wire == 0) t = int64_t(f.varint);
        else if (f.number == 2 && f.wire == 0) dt = int64_t(f.varint);
        else if (f.number == 3) return error(INVALID_INPUT, s, "input for an unknown port (this component has no inputs)",
                                             "connect nothing to it");
    }
    if (dt <= 0 || t < s.last_end_ns)
        return error(INVALID_STATE, s, "step size must be > 0 and time must not go back",
                     "steps must be given in increasing time");
    s.last_end_ns = t + dt;
    Bytes header, signal, msg, pv, result;
    put_uint(header, 1, uint64_t(t));
    put_uint(header, 2, s.seq++);
    put_string(header, 3, s.instance);
    put_len(msg, 1, header);
    put_string(signal, 1, "ramp");
    put_double(signal, 2, s.gain * (double(t) * 1e-9));
    put_len(msg, 2, signal);
    put_string(pv, 1, "signals");
    put_string(pv, 2, PORT_TYPE);
    put_len(pv, 3, msg);
    put_uint(result, 1, uint64_t(t));
    put_len(result, 2, pv);
    return {result, 13};
}

void send_reply(void *sock, const std::vector<Bytes> &prefix, uint64_t request_id,
                const Bytes &instance, const Reply &r) {
    Bytes env;
    put_uint(env, 1, 1);
    put_uint(env, 2, request_id);
    put_string(env, 3, instance);
    put_len(env, r.field, r.body);
    for (const Bytes &p : prefix) zmq_send(sock, p.data(), p.size(), ZMQ_SNDMORE);
    zmq_send(sock, env.data(), env.size(), 0);
}

}  // namespace

int main(int argc, char **argv) {
    if (argc < 2 || (argc == 3 && std::strcmp(argv[2], "--serve") != 0) || argc > 3) {
        std::fprintf(stderr, "usage: ramp ENDPOINT [--serve]\n");
        return 2;
    }
    bool serve = argc == 3;
    const char *parent = std::getenv("MOONPOOL_PARENT_PID");
    void *ctx = zmq_ctx_new();
    void *sock = zmq_socket(ctx, ZMQ_ROUTER);
    int zero = 0;
    zmq_setsockopt(sock, ZMQ_LINGER, &zero, sizeof zero);
    if (zmq_bind(sock, argv[1]) != 0) {
        std::fprintf(stderr, "ramp: cannot bind %s (errno %d)\n", argv[1], zmq_errno());
        return 1;
    }
    std::printf("ramp: serving %s on %s\n", KIND, argv[1]);
    std::fflush(stdout);
    Session s;
    for (;;) {
        zmq_pollitem_t item = {sock, 0, ZMQ_POLLIN, 0};
        if (zmq_poll(&item, 1, 100) <= 0) {
            if (parent && std::atoll(parent) != getppid()) break;  // the orchestrator is gone
            if (!s.peer.empty() && s.peer_timeout_ns > 0 && now_ns() - s.last_heard_ns > s.peer_timeout_ns) {
                std::fprintf(stderr, "ramp: peer silent, session ends\n");
                if (!serve) break;
                s = Session();
            }
            continue;
        }
        std::vector<Bytes> frames;
        for (bool more = true; more;) {
            zmq_msg_t m;
            zmq_msg_init(&m);
            if (zmq_msg_recv(&m, sock, 0) < 0) { zmq_msg_close(&m); break; }
            frames.emplace_back(static_cast<char *>(zmq_msg_data(&m)), zmq_msg_size(&m));
            more = zmq_msg_more(&m);
            zmq_msg_close(&m);
        }
        if (frames.empty()) continue;
        std::vector<Bytes> prefix{frames[0]};
        size_t at = 1;
        if (frames.size() > 2 && frames[1].empty()) { prefix.push_back(""); at = 2; }
        if (at >= frames.size()) { send_reply(sock, prefix, 0, "", error(MALFORMED, s, "no envelope frame", "send the Request after the identity")); continue; }
        const Bytes &env = frames[at];
        size_t pos = 0; Field f; bool ok = true;
        uint64_t version = 0, rid = 0; Bytes instance, body; int which = 0;
        while (next_field(env, pos, f, ok)) {
            if (f.number == 1 && f.wire == 0) version = uint32_t(f.varint);
            else if (f.number == 2 && f.wire == 0) rid = f.varint;
            else if (f.number == 3 && f.wire == 2) { instance = f.data; ok = ok && valid_utf8(f.data); }
            else if (f.number >= 10 && f.number <= 16 && f.wire == 2) { which = f.number; body = f.data; }
        }
        if (!ok) { send_reply(sock, prefix, 0, "", error(MALFORMED, s, "frame 0 is not a valid moonpool.v1.Request", "send a serialized Request")); continue; }
        if (version != 1) { send_reply(sock, prefix, rid, instance, error(PROTOCOL_VERSION, s, "protocol version not supported", "use protocol version 1")); continue; }
        if (!which) { send_reply(sock, prefix, rid, instance, error(MALFORMED, s, "request has no body", "set one body")); continue; }
        const Bytes &who = frames[0];
        if (which != 10 && which != 15) {  // not Describe, Heartbeat
            if (s.peer.empty() && which == 11) s.peer = who;
            else if (s.peer != who) {
                send_reply(sock, prefix, rid, instance, s.peer.empty()
                           ? error(INVALID_STATE, s, "send configure first", "send configure first")
                           : error(BUSY, s, "serving another orchestrator", "wait until that run ends"));
                continue;
            }
        }
        if (who == s.peer) s.last_heard_ns = now_ns();
        Reply r;
        bool end = false;
        switch (which) {
        case 10: r = describe(); break;
        case 15: {
            Bytes hb; put_uint(hb, 1, uint64_t(s.state)); put_uint(hb, 2, ++s.heartbeats); r = {hb, 15}; break;
        }
        case 11: r = s.state == CREATED ? configure(s, body) : error(INVALID_STATE, s, "already configured", "configure once"); break;
        case 12:
            if (s.state != CONFIGURED) r = error(INVALID_STATE, s, "initialize needs state CONFIGURED", "configure first");
            else { s.state = INITIALIZED; r = {"", 12}; }
            break;
        case 13: r = s.state == INITIALIZED ? step(s, body) : error(INVALID_STATE, s, "step needs state INITIALIZED", "initialize first"); break;
        case 14: r = {"", 14}; end = true; break;
        default: r = error(INVALID_INPUT, s, "StepBatch: this endpoint hosts one component", "send Step"); break;
        }
        send_reply(sock, prefix, rid, instance, r);
        if (end) {
            if (!serve) break;
            s = Session();
        }
    }
    zmq_close(sock);
    zmq_ctx_term(ctx);
    return 0;
}
