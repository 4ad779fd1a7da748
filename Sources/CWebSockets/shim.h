// libwebsockets (Debian 12: 4.1.6) for the web mixer's HTTP and WebSocket server, on its own
// thread (StemdeckConsole/Remote/WebServer.swift; docs/architecture.md, *The web mixer*).
#include <libwebsockets.h>

// The headroom lws_write needs before a payload; a macro Swift cannot import.
static inline int stemdeck_lws_pre(void) { return LWS_PRE; }

#include <sys/socket.h>

// The web mixer's own socket calls, in C: a Swift file importing this module did not always see
// Glibc's SOCK_* and MSG_* constants (which Clang module owns the socket headers depends on the
// build order), so the constants are used here.

// A connected pair of non-blocking, close-on-exec Unix stream sockets; 0, or -1 with errno.
static inline int stemdeck_socket_pair(int fds[2]) {
  return socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds);
}

// send(2) without SIGPIPE: a peer that hung up is an error, not a signal.
static inline long stemdeck_send_nosignal(int fd, const void *bytes, unsigned long count) {
  return (long)send(fd, bytes, count, MSG_NOSIGNAL);
}
