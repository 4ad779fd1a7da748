// libwebsockets (Debian 12: 4.1.6) for the web mixer's HTTP and WebSocket server, on its own
// thread (StemdeckConsole/Remote/WebServer.swift; docs/architecture.md, *The web mixer*).
#include <libwebsockets.h>

// The headroom lws_write needs before a payload; a macro Swift cannot import.
static inline int stemdeck_lws_pre(void) { return LWS_PRE; }
