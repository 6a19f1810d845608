#include <sqlite3.h>

/* SQLite keeps memory statistics by default, which takes a global mutex on
   every allocation of every connection: Guildhall never reads them. Only
   takes effect before SQLite is first initialized (the first open). */
static inline int guildhall_sqlite_skip_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
