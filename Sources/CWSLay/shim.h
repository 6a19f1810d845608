// Debian's libwslay-dev: WebSocket frames read from a byte stream (issue 16).
#include <wslay/wslay.h>
