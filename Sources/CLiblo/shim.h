// liblo's low-level API only: stemdeck owns its UDP sockets and uses liblo to encode and
// decode OSC messages (docs/architecture.md, *Remote control*).
#include <lo/lo_lowlevel.h>
