#include <http_parser.h>

// The parser's results live in bitfields; these read them as plain values.
static inline unsigned gh_http_method(const http_parser *p) { return p->method; }
static inline unsigned gh_http_errno(const http_parser *p) { return p->http_errno; }
static inline unsigned gh_http_upgrade(const http_parser *p) { return p->upgrade; }
