// See include/powerloss.h. Every watched file has an undo log: before a
// write or a truncate changes bytes that exist, the old bytes (and the old
// size) are saved; xSync empties the log, since what it covered is durable.
// A snapshot copies the file and replays its log backwards over the copy.
// One mutex covers the logs and the writes themselves, so a snapshot never
// sees half a write. Files not watched pass straight through, except that
// files under a "full" folder refuse every write and every growth with
// SQLITE_FULL, as the default VFS answers ENOSPC, while it is set.

#include "powerloss.h"
#include <sqlite3.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/types.h>

typedef struct Undo {
    sqlite3_int64 offset;
    int length;          // bytes saved (those that existed before the write)
    sqlite3_int64 size;  // the file's size before the change
    unsigned char *old;
    struct Undo *next;   // the previous change (a stack)
} Undo;

typedef struct Tracked {
    char *path;
    Undo *log;
    struct Tracked *next;
} Tracked;

typedef struct File {
    sqlite3_file base;      // this VFS's methods
    Tracked *tracked;       // NULL when not watched
    const char *name;       // SQLite keeps it valid until xClose
    sqlite3_file *real;     // the default VFS's file, allocated right after
} File;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static sqlite3_vfs *parent;
static sqlite3_vfs vfs;
static sqlite3_io_methods methods;
static Tracked *files;
static char *watched;
// Folders whose files refuse writes (tests in one process fill their own at once).
#define FULL_MAX 16
static char *full[FULL_MAX];

/// Whether the file lies under the full folder now.
static int refused(File *f) {
    if (!f->name) return 0;
    pthread_mutex_lock(&lock);
    int r = 0;
    for (int i = 0; i < FULL_MAX && !r; i++) r = full[i] && strncmp(f->name, full[i], strlen(full[i])) == 0;
    pthread_mutex_unlock(&lock);
    return r;
}

static void clear(Undo *u) {
    while (u) { Undo *n = u->next; free(u->old); free(u); u = n; }
}

static Tracked *track(const char *path) {
    for (Tracked *t = files; t; t = t->next) if (strcmp(t->path, path) == 0) return t;
    Tracked *t = calloc(1, sizeof(Tracked));
    t->path = strdup(path);
    t->next = files;
    files = t;
    return t;
}

/// Saves what [offset, offset + length) holds now, and the size, before it changes.
static int remember(File *f, sqlite3_int64 offset, int length) {
    sqlite3_int64 size = 0;
    int rc = f->real->pMethods->xFileSize(f->real, &size);
    if (rc != SQLITE_OK) return rc;
    Undo *u = calloc(1, sizeof(Undo));
    u->offset = offset;
    u->size = size;
    u->length = offset < size ? (int)((offset + length <= size ? length : size - offset)) : 0;
    if (u->length > 0) {
        u->old = malloc((size_t)u->length);
        rc = f->real->pMethods->xRead(f->real, u->old, u->length, offset);
        if (rc != SQLITE_OK && rc != SQLITE_IOERR_SHORT_READ) { free(u->old); free(u); return rc; }
    }
    u->next = f->tracked->log;
    f->tracked->log = u;
    return SQLITE_OK;
}

static int xClose(sqlite3_file *p) { File *f = (File *)p; return f->real->pMethods->xClose(f->real); }
static int xRead(sqlite3_file *p, void *b, int n, sqlite3_int64 o) { File *f = (File *)p; return f->real->pMethods->xRead(f->real, b, n, o); }

static int xWrite(sqlite3_file *p, const void *b, int n, sqlite3_int64 o) {
    File *f = (File *)p;
    if (refused(f)) return SQLITE_FULL;
    if (!f->tracked) return f->real->pMethods->xWrite(f->real, b, n, o);
    pthread_mutex_lock(&lock);
    int rc = remember(f, o, n);
    if (rc == SQLITE_OK) rc = f->real->pMethods->xWrite(f->real, b, n, o);
    pthread_mutex_unlock(&lock);
    return rc;
}

static int xTruncate(sqlite3_file *p, sqlite3_int64 size) {
    File *f = (File *)p;
    if (refused(f)) return SQLITE_FULL;
    if (!f->tracked) return f->real->pMethods->xTruncate(f->real, size);
    pthread_mutex_lock(&lock);
    sqlite3_int64 now = 0;
    int rc = f->real->pMethods->xFileSize(f->real, &now);
    if (rc == SQLITE_OK && now > size) rc = remember(f, size, (int)(now - size));
    if (rc == SQLITE_OK) rc = f->real->pMethods->xTruncate(f->real, size);
    pthread_mutex_unlock(&lock);
    return rc;
}

static int xSync(sqlite3_file *p, int flags) {
    File *f = (File *)p;
    if (!f->tracked) return f->real->pMethods->xSync(f->real, flags);
    pthread_mutex_lock(&lock);
    int rc = f->real->pMethods->xSync(f->real, flags);
    if (rc == SQLITE_OK) { clear(f->tracked->log); f->tracked->log = NULL; }
    pthread_mutex_unlock(&lock);
    return rc;
}

static int xFileSize(sqlite3_file *p, sqlite3_int64 *s) { File *f = (File *)p; return f->real->pMethods->xFileSize(f->real, s); }
static int xLock(sqlite3_file *p, int l) { File *f = (File *)p; return f->real->pMethods->xLock(f->real, l); }
static int xUnlock(sqlite3_file *p, int l) { File *f = (File *)p; return f->real->pMethods->xUnlock(f->real, l); }
static int xCheckReservedLock(sqlite3_file *p, int *r) { File *f = (File *)p; return f->real->pMethods->xCheckReservedLock(f->real, r); }
static int xFileControl(sqlite3_file *p, int op, void *a) { File *f = (File *)p; return f->real->pMethods->xFileControl(f->real, op, a); }
static int xSectorSize(sqlite3_file *p) { File *f = (File *)p; return f->real->pMethods->xSectorSize(f->real); }
static int xDeviceCharacteristics(sqlite3_file *p) { File *f = (File *)p; return f->real->pMethods->xDeviceCharacteristics(f->real); }
static int xShmMap(sqlite3_file *p, int i, int s, int e, void volatile **m) { File *f = (File *)p; return f->real->pMethods->xShmMap(f->real, i, s, e, m); }
static int xShmLock(sqlite3_file *p, int o, int n, int fl) { File *f = (File *)p; return f->real->pMethods->xShmLock(f->real, o, n, fl); }
static void xShmBarrier(sqlite3_file *p) { File *f = (File *)p; f->real->pMethods->xShmBarrier(f->real); }
static int xShmUnmap(sqlite3_file *p, int d) { File *f = (File *)p; return f->real->pMethods->xShmUnmap(f->real, d); }
static int xFetch(sqlite3_file *p, sqlite3_int64 o, int n, void **m) { *m = 0; return SQLITE_OK; }  // no memory-mapped reads: every read goes through xRead
static int xUnfetch(sqlite3_file *p, sqlite3_int64 o, void *m) { return SQLITE_OK; }

static int xOpen(sqlite3_vfs *v, const char *name, sqlite3_file *p, int flags, int *out) {
    File *f = (File *)p;
    f->real = (sqlite3_file *)(f + 1);
    f->name = name;
    int rc = parent->xOpen(parent, name, f->real, flags, out);
    if (rc != SQLITE_OK) { f->base.pMethods = 0; return rc; }
    pthread_mutex_lock(&lock);
    int watch = name && watched && strncmp(name, watched, strlen(watched)) == 0 &&
                (flags & (SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_WAL | SQLITE_OPEN_MAIN_JOURNAL));
    f->tracked = watch ? track(name) : NULL;
    pthread_mutex_unlock(&lock);
    f->base.pMethods = &methods;
    return SQLITE_OK;
}

static int xDelete(sqlite3_vfs *v, const char *n, int s) { return parent->xDelete(parent, n, s); }
static int xAccess(sqlite3_vfs *v, const char *n, int f, int *o) { return parent->xAccess(parent, n, f, o); }
static int xFullPathname(sqlite3_vfs *v, const char *n, int l, char *o) { return parent->xFullPathname(parent, n, l, o); }
static void *xDlOpen(sqlite3_vfs *v, const char *n) { return parent->xDlOpen(parent, n); }
static void xDlError(sqlite3_vfs *v, int n, char *m) { parent->xDlError(parent, n, m); }
static void (*xDlSym(sqlite3_vfs *v, void *h, const char *s))(void) { return parent->xDlSym(parent, h, s); }
static void xDlClose(sqlite3_vfs *v, void *h) { parent->xDlClose(parent, h); }
static int xRandomness(sqlite3_vfs *v, int n, char *o) { return parent->xRandomness(parent, n, o); }
static int xSleep(sqlite3_vfs *v, int m) { return parent->xSleep(parent, m); }
static int xCurrentTime(sqlite3_vfs *v, double *t) { return parent->xCurrentTime(parent, t); }
static int xGetLastError(sqlite3_vfs *v, int n, char *m) { return parent->xGetLastError(parent, n, m); }
static int xCurrentTimeInt64(sqlite3_vfs *v, sqlite3_int64 *t) { return parent->xCurrentTimeInt64(parent, t); }

int powerloss_install(void) {
    pthread_mutex_lock(&lock);
    int rc = SQLITE_OK;
    if (!parent) {
        parent = sqlite3_vfs_find(0);
        methods = (sqlite3_io_methods){3, xClose, xRead, xWrite, xTruncate, xSync, xFileSize, xLock, xUnlock, xCheckReservedLock,
                                       xFileControl, xSectorSize, xDeviceCharacteristics, xShmMap, xShmLock, xShmBarrier, xShmUnmap,
                                       xFetch, xUnfetch};
        vfs = (sqlite3_vfs){2, (int)sizeof(File) + parent->szOsFile, parent->mxPathname, 0, "powerloss", 0,
                            xOpen, xDelete, xAccess, xFullPathname, xDlOpen, xDlError, xDlSym, xDlClose, xRandomness, xSleep,
                            xCurrentTime, xGetLastError, xCurrentTimeInt64};
        rc = sqlite3_vfs_register(&vfs, 1);
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

void powerloss_watch(const char *folder) {
    pthread_mutex_lock(&lock);
    free(watched);
    watched = folder ? strdup(folder) : NULL;
    while (files) { Tracked *n = files->next; clear(files->log); free(files->path); free(files); files = n; }
    pthread_mutex_unlock(&lock);
}

long powerloss_snapshot(const char *destination) {
    pthread_mutex_lock(&lock);
    long undone = 0;
    for (Tracked *t = files; t; t = t->next) {
        const char *slash = strrchr(t->path, '/');
        char target[4096];
        snprintf(target, sizeof target, "%s/%s", destination, slash ? slash + 1 : t->path);
        FILE *in = fopen(t->path, "rb");
        if (!in) continue;  // deleted since (a WAL at a clean close): nothing of it to keep
        FILE *out = fopen(target, "w+b");
        if (!out) { fclose(in); undone = -1; break; }
        char buffer[65536];
        size_t n;
        while ((n = fread(buffer, 1, sizeof buffer, in)) > 0) fwrite(buffer, 1, n, out);
        fclose(in);
        // Newest change first: each restores what was there before it.
        for (Undo *u = t->log; u; u = u->next, undone++) {
            if (u->length > 0) { fseek(out, (long)u->offset, SEEK_SET); fwrite(u->old, 1, (size_t)u->length, out); }
            fflush(out);
            if (ftruncate(fileno(out), (off_t)u->size) != 0) undone = -1;
        }
        fclose(out);
        if (undone < 0) break;
    }
    pthread_mutex_unlock(&lock);
    return undone;
}

void powerloss_full(const char *folder) {
    pthread_mutex_lock(&lock);
    for (int i = 0; i < FULL_MAX; i++) if (!full[i]) { full[i] = strdup(folder); break; }
    pthread_mutex_unlock(&lock);
}

void powerloss_room(const char *folder) {
    pthread_mutex_lock(&lock);
    for (int i = 0; i < FULL_MAX; i++) if (full[i] && strcmp(full[i], folder) == 0) { free(full[i]); full[i] = NULL; }
    pthread_mutex_unlock(&lock);
}
