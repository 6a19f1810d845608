// cnats, Debian's libnats-dev. Only the plain API: the libuv adapter's header
// defines static functions and belongs in a C target of its own (docs/cluster.md).
#include <nats/nats.h>
