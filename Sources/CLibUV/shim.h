#include <uv.h>

// uv_loop_configure is variadic, which Swift cannot call: this asks the loop
// to count the time it spends idle in poll (for the busy-time metric).
static inline int gh_uv_measure_idle_time(uv_loop_t *loop) { return uv_loop_configure(loop, UV_METRICS_IDLE_TIME); }
