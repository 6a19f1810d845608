// Debian's libwslay-dev: WebSocket frames read from a byte stream (README "Web client").
#include <wslay/wslay.h>
