// jemalloc (Debian's libjemalloc-dev), the process's malloc: linked into every
// binary that uses GuildhallServer, it replaces glibc's malloc for the whole
// process (docs/performance.md, "The allocator"). Only its control call is
// declared here: its own header re-declares malloc and free, which would
// clash with the C library's in Swift's module maps.
#include <stddef.h>

int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);
